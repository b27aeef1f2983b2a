//! `include` and `include-ci` (R7RS 4.1.7, and in `define-library`): the
//! forms of the named files, in order, as if they stood in a `begin` where
//! the `include` is. The files come through the engine's host, under the
//! same grants as `(scheme file)` (`--allow-read`), so an `include` the
//! operator did not grant is refused with the host's own message. A
//! relative path is the host's to resolve, as for `open-input-file`.

use super::{err, Front, R};
use crate::pos::Pos;
use crate::reader;
use crate::syntax::{Atom, Syn};

impl Front<'_> {
    /// The forms of the files `args` names, read (with `ci`, folding case
    /// as `#!fold-case` does).
    pub(super) fn include_forms(&mut self, args: &[Syn], ci: bool, pos: Pos) -> R<Vec<Syn>> {
        let who = if ci { "include-ci" } else { "include" };
        if args.is_empty() {
            return err(format!("{who} needs at least one file name"), pos);
        }
        let mut forms = Vec::new();
        for a in args {
            let Syn::Atom(Atom::Str(path), apos) = a else {
                return err(format!("{who}: expected a file name string"), a.pos());
            };
            let max = self.heap.cap;
            let Some(host) = self.host.as_deref_mut() else {
                return err(format!("{who}: no files can be read here"), *apos);
            };
            let bytes = host.read_file(path, max).map_err(|e| super::CompileError {
                message: format!("{who}: {path:?}: {e}"),
                pos: *apos,
                out_of_memory: false,
            })?;
            let text = String::from_utf8(bytes).map_err(|e| super::CompileError {
                message: format!(
                    "{who}: {path:?}: not UTF-8 text (at byte {})",
                    e.utf8_error().valid_up_to()
                ),
                pos: *apos,
                out_of_memory: false,
            })?;
            let read = if ci {
                reader::read_all_fold_case(&text, self.syms)
            } else {
                reader::read_all(&text, self.syms)
            };
            let read = read.map_err(|e| super::CompileError {
                message: format!(
                    "{who}: {path:?}, line {}, column {}: {}",
                    e.pos.line, e.pos.col, e.message
                ),
                pos: *apos,
                out_of_memory: false,
            })?;
            forms.extend(read);
        }
        Ok(forms)
    }
}

#[cfg(test)]
mod tests {
    use crate::host::Host;
    use crate::test_eval::value_or_message as run;
    use crate::Engine;
    use std::collections::HashMap;

    /// A host with a few files in memory.
    struct Files(HashMap<&'static str, &'static str>);

    impl Host for Files {
        fn read_file(&mut self, path: &str, max: usize) -> Result<Vec<u8>, String> {
            match self.0.get(path) {
                Some(text) if text.len() <= max => Ok(text.as_bytes().to_vec()),
                Some(_) => Err("too large".into()),
                None => Err(format!("not permitted: {path:?}: not granted")),
            }
        }
    }

    fn engine() -> Engine {
        let mut e = Engine::new();
        e.set_host(Box::new(Files(HashMap::from([
            ("defs.scm", "(define x 40) (define (add2 n) (+ n 2))"),
            ("upper.scm", "(DEFINE Y 'Hello)"),
            ("y.scm", "(define y 'Hello)"),
            ("decls.scm", "(export twice) (import (scheme base))"),
            ("body.scm", "(define (twice n) (* 2 n))"),
            ("broken.scm", "(define z"),
        ]))));
        e
    }

    #[test]
    fn include_splices_the_files_forms_at_top_level_in_a_body_and_in_a_library() {
        let mut e = engine();
        assert_eq!(
            run(&mut e, "(include \"defs.scm\") (add2 x)").as_deref(),
            Ok("42")
        );
        assert_eq!(
            run(&mut e, "(define (f) (include \"defs.scm\") (add2 x)) (f)").as_deref(),
            Ok("42")
        );
        assert_eq!(
            run(
                &mut e,
                "(let () (include \"defs.scm\" \"y.scm\") (list x y))"
            )
            .as_deref(),
            Ok("(40 Hello)")
        );
        assert_eq!(
            run(&mut e, "(include-ci \"upper.scm\") y").as_deref(),
            Ok("hello")
        );
        let lib = "(define-library (inc test) (include-library-declarations \"decls.scm\")
                     (include \"body.scm\"))
                   (import (inc test)) (twice 21)";
        assert_eq!(run(&mut e, lib).as_deref(), Ok("42"));
    }

    #[test]
    fn include_refused_or_broken_says_which_file() {
        let mut e = engine();
        let r = run(&mut e, "(include \"secret.scm\")").unwrap_err();
        assert!(r.contains("include: \"secret.scm\": not permitted"), "{r}");
        let r = run(&mut e, "(include \"broken.scm\")").unwrap_err();
        assert!(r.starts_with("include: \"broken.scm\", line 1"), "{r}");
        let r = run(&mut e, "(include x)").unwrap_err();
        assert!(r.contains("expected a file name string"), "{r}");
        let mut plain = Engine::new();
        let r = run(&mut plain, "(include \"defs.scm\")").unwrap_err();
        assert!(r.contains("this engine has no files"), "{r}");
    }
}
