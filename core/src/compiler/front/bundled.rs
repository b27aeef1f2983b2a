//! The libraries Arbores brings beyond R7RS-small (the R7RS-large Red
//! edition and SRFIs), written in Scheme in `core/src/libraries/`.
//!
//! Each is one `define-library` form, compiled and run the first time a
//! program imports it (so an engine that never imports one never pays for
//! it), under any of its names. Every name it defines becomes a hidden
//! global `NAME@(CANONICAL)`: a program that does not import the library
//! does not see its names, and a program's own definitions never disturb
//! the library's. A library is loaded when its marker global
//! `%loaded@(CANONICAL)`, which its body defines last, is bound, so an
//! evaluation a limit undoes also undoes the load.

/// One bundled library.
pub struct Bundled {
    /// Its names as `import` spells them, parts joined by spaces; the
    /// first is canonical (it names the hidden globals).
    pub names: &'static [&'static str],
    /// The `cond-expand` features it adds.
    pub features: &'static [&'static str],
    /// Its source: one `define-library` form.
    pub source: &'static str,
}

pub const BUNDLED: &[Bundled] = &[
    Bundled {
        names: &["scheme list", "srfi 1"],
        features: &["srfi-1"],
        source: include_str!("../../libraries/list.scm"),
    },
    Bundled {
        names: &["scheme comparator", "srfi 128"],
        features: &["srfi-128"],
        source: include_str!("../../libraries/comparator.scm"),
    },
    Bundled {
        names: &["scheme hash-table", "srfi 125", "srfi 69"],
        features: &["srfi-69", "srfi-125"],
        source: include_str!("../../libraries/hash-table.scm"),
    },
    Bundled {
        names: &["scheme sort", "srfi 132"],
        features: &["srfi-132"],
        source: include_str!("../../libraries/sort.scm"),
    },
    Bundled {
        names: &["scheme box", "srfi 111"],
        features: &["srfi-111"],
        source: include_str!("../../libraries/box.scm"),
    },
    Bundled {
        names: &["scheme list-queue", "srfi 117"],
        features: &["srfi-117"],
        source: include_str!("../../libraries/list-queue.scm"),
    },
    Bundled {
        names: &["scheme vector", "srfi 133"],
        features: &["srfi-133"],
        source: include_str!("../../libraries/vector.scm"),
    },
    Bundled {
        names: &["scheme charset", "srfi 14"],
        features: &["srfi-14"],
        source: include_str!("../../libraries/charset.scm"),
    },
    Bundled {
        names: &["srfi 13"],
        features: &["srfi-13"],
        source: include_str!("../../libraries/strings.scm"),
    },
    Bundled {
        names: &["scheme generator", "srfi 158", "srfi 121"],
        features: &["srfi-158", "srfi-121"],
        source: include_str!("../../libraries/generator.scm"),
    },
    Bundled {
        names: &["scheme lseq", "srfi 127"],
        features: &["srfi-127"],
        source: include_str!("../../libraries/lseq.scm"),
    },
    Bundled {
        names: &["scheme ephemeron", "srfi 124"],
        features: &["srfi-124"],
        source: include_str!("../../libraries/ephemeron.scm"),
    },
    Bundled {
        names: &["scheme ideque", "srfi 134"],
        features: &["srfi-134"],
        source: include_str!("../../libraries/ideque.scm"),
    },
    Bundled {
        names: &["scheme ilist", "srfi 116"],
        features: &["srfi-116"],
        source: include_str!("../../libraries/ilist.scm"),
    },
    Bundled {
        names: &["scheme rlist"],
        features: &[],
        source: include_str!("../../libraries/rlist.scm"),
    },
    Bundled {
        names: &["srfi 101"],
        features: &["srfi-101"],
        source: include_str!("../../libraries/srfi-101.scm"),
    },
    Bundled {
        names: &["scheme stream", "srfi 41"],
        features: &["srfi-41"],
        source: include_str!("../../libraries/stream.scm"),
    },
    Bundled {
        names: &["scheme text", "srfi 135"],
        features: &["srfi-135"],
        source: include_str!("../../libraries/text.scm"),
    },
    Bundled {
        names: &["srfi 151"],
        features: &["srfi-151"],
        source: include_str!("../../libraries/bitwise.scm"),
    },
];

/// The bundled library named `name`, by any of its names.
pub fn find(name: &str) -> Option<&'static Bundled> {
    BUNDLED.iter().find(|b| b.names.contains(&name))
}

impl Bundled {
    pub fn canonical(&self) -> &'static str {
        self.names[0]
    }

    /// The global a name the library defines becomes.
    pub fn hidden(&self, name: &str) -> String {
        format!("{name}@({})", self.canonical())
    }

    /// The global that is bound once the library has run.
    pub fn marker(&self) -> String {
        self.hidden("%loaded")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_eval::value_or_message as run;
    use crate::{Engine, Limits};

    #[test]
    fn every_bundled_library_loads_under_each_name_and_defines_its_marker() {
        for b in BUNDLED {
            for name in b.names {
                let mut e = Engine::new();
                run(&mut e, &format!("(import ({name}))")).unwrap();
                let marker = format!("|{}|", b.marker());
                assert_eq!(run(&mut e, &marker).as_deref(), Ok("#t"), "{name}");
            }
        }
    }

    #[test]
    fn names_are_unknown_until_imported() {
        let mut e = Engine::new();
        assert!(run(&mut e, "(first '(1 2))").is_err());
        run(&mut e, "(import (scheme list))").unwrap();
        assert_eq!(run(&mut e, "(first '(1 2))").as_deref(), Ok("1"));
    }

    #[test]
    fn an_import_a_limit_undoes_is_loaded_again_by_the_next() {
        let mut e = Engine::new();
        e.set_limits(Limits {
            max_steps: 10_000,
            ..Limits::default()
        });
        let r = run(&mut e, "(import (srfi 1)) (let loop () (loop))");
        assert!(r.is_err());
        e.set_limits(Limits::default());
        assert_eq!(
            run(&mut e, "(import (srfi 1)) (fold + 0 '(1 2 3))").as_deref(),
            Ok("6")
        );
    }

    #[test]
    fn import_below_top_level_of_a_library_not_loaded_is_an_error() {
        let mut e = Engine::new();
        let r = run(&mut e, "(define (f) (import (srfi 1)) 1)");
        assert!(r
            .unwrap_err()
            .contains("must first be imported at top level"));
    }
}
