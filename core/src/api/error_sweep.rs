//! The sweep of the ground rule over every procedure a library exports:
//! each is called with arguments of the wrong type, out-of-range indices
//! and the wrong number of arguments, and every error it raises must
//! name the procedure the program called (the message starts with
//! `NAME:`), never a procedure of the engine's own that it used. Nothing
//! may panic or run past its step limit.

use crate::compiler::front::library_names;
use crate::{Engine, ErrorKind, Limits};

/// Arguments of the wrong type (for most procedures): each call passes
/// one of these in every position.
const BAD: &[&str] = &[
    "'bad", "-1", "2.5", "#\\x", "\"s\"", "'()", "'(1 . 2)", "#(1)", "#u8(1)", "#t",
];

/// First arguments of the right type for many procedures, with the rest
/// of the wrong type or out of range.
const FIRST: &[&str] = &["\"abc\"", "#(1 2)", "'(1 2)", "#u8(1 2)", "(list 1 2)"];
const REST: &[&str] = &["-1", "10", "'bad", "'(1 . 2)"];

/// Procedures the sweep leaves out, each for its reason.
const SKIPPED: &[(&str, &str)] = &[
    ("exit", "ends the evaluation by design"),
    ("emergency-exit", "ends the evaluation by design"),
    ("raise", "raises its argument by design"),
    ("raise-continuable", "raises its argument by design"),
    (
        "error",
        "raises an error of the program's own message by design",
    ),
    (
        "eval",
        "its errors are those of the expression it evaluates",
    ),
];

/// Procedures of the bundled libraries whose errors still name a
/// procedure of the library's that they use (a helper, or the procedure
/// they are written over: `take-right` over `drop`), not yet the one
/// called. An error of one of these is no failure; the list only shrinks.
const NOT_YET: &[(&str, &str)] = &[
    ("scheme charset", "char-set->string"),
    ("scheme hash-table", "hash-table-merge!"),
    ("scheme ilist", "ialist-delete"),
    ("scheme ilist", "idelete"),
    ("scheme ilist", "isplit-at"),
    ("scheme ilist", "izip"),
    ("scheme list", "alist-copy"),
    ("scheme list", "drop-right!"),
    ("scheme list", "drop-right"),
    ("scheme list", "take-right"),
    ("scheme list", "unzip1"),
    ("scheme list", "unzip2"),
    ("scheme list", "unzip3"),
    ("scheme list", "unzip4"),
    ("scheme list", "unzip5"),
    ("scheme list", "zip"),
    ("scheme list-queue", "list-queue-concatenate"),
    ("scheme list-queue", "list-queue-unfold"),
    ("scheme list-queue", "list-queue-unfold-right"),
    ("scheme lseq", "lseq-find"),
    ("scheme lseq", "lseq-member"),
    ("scheme lseq", "lseq-rest"),
    ("scheme vector", "vector-reverse-copy!"),
    ("srfi 13", "check-substring-spec"),
    ("srfi 13", "kmp-step"),
    ("srfi 13", "string-concatenate-reverse/shared"),
    ("srfi 13", "string-concatenate/shared"),
    ("srfi 13", "string-kmp-partial-search"),
    ("srfi 13", "string-parse-final-start+end"),
    ("srfi 13", "string-parse-start+end"),
    ("srfi 151", "bit-field-any?"),
    ("srfi 151", "bit-field-every?"),
    ("srfi 151", "bit-field-replace"),
    ("srfi 151", "bit-field-replace-same"),
    ("srfi 151", "bit-field-reverse"),
    ("srfi 151", "bits"),
    ("srfi 151", "bits->list"),
    ("srfi 151", "bits->vector"),
    ("srfi 151", "bitwise-eqv"),
    ("srfi 151", "bitwise-fold"),
    ("srfi 151", "bitwise-for-each"),
    ("srfi 151", "bitwise-unfold"),
    ("srfi 151", "vector->bits"),
];

/// The calls of procedure `name`, whose arity is `min` to `max` (None:
/// any number more).
fn calls(name: &str, min: usize, max: Option<usize>) -> Vec<String> {
    let call = |args: &[&str]| {
        if args.is_empty() {
            format!("({name})")
        } else {
            format!("({name} {})", args.join(" "))
        }
    };
    let top = max.unwrap_or(min + 2).min(min.max(1) + 2);
    let mut out = Vec::new();
    for n in min..=top {
        for bad in BAD {
            out.push(call(&vec![*bad; n]));
        }
        if n >= 1 {
            for first in FIRST {
                for rest in REST {
                    let mut args = vec![*first];
                    args.extend(std::iter::repeat_n(*rest, n - 1));
                    out.push(call(&args));
                }
            }
        }
    }
    // The wrong number of arguments.
    if min > 0 {
        out.push(call(&vec!["1"; min - 1]));
    }
    if let Some(max) = max {
        out.push(call(&vec!["1"; max + 1]));
    }
    out
}

/// Whether `message` names procedure `name` as the one that failed.
fn names_it(message: &str, name: &str) -> bool {
    message
        .strip_prefix(name)
        .is_some_and(|rest| rest.starts_with(':'))
}

/// Whether the procedure `message` names is `name`'s very procedure
/// under another of its names (`delete!` is `delete` in (scheme list),
/// `call/cc` is `call-with-current-continuation`).
fn alias_named(e: &mut Engine, message: &str, name: &str) -> bool {
    let Some((who, _)) = message.split_once(": ") else {
        return false;
    };
    if who.contains(char::is_whitespace) || who.contains('|') {
        return false;
    }
    e.eval(&format!("(eq? {name} {who})")).value.as_deref() == Some("#t")
}

struct Sweep {
    procedures: usize,
    /// Names swept, once each whatever libraries export them.
    names: std::collections::BTreeSet<String>,
    calls: usize,
    /// (library, call, message) of each error that does not name the
    /// procedure called.
    failures: Vec<String>,
    /// Errors of the `NOT_YET` procedures that do not name them.
    not_yet: usize,
    /// Every call's error message, for comparing two builds.
    messages: Vec<String>,
}

fn sweep() -> Sweep {
    let mut s = Sweep {
        procedures: 0,
        names: std::collections::BTreeSet::new(),
        calls: 0,
        failures: Vec::new(),
        not_yet: 0,
        messages: Vec::new(),
    };
    let mut seen = std::collections::BTreeSet::new();
    for lib in library_names() {
        let mut e = Engine::new();
        // The names first: (srfi 101) makes `quote` its own.
        let exports = e.eval(&format!("(%environment-names (environment '({lib})))"));
        let Some(list) = exports.value else {
            panic!("({lib}): {:?}", exports.error);
        };
        let imported = e.eval(&format!("(import ({lib}))"));
        assert!(imported.error.is_none(), "({lib}): {:?}", imported.error);
        let names: Vec<String> = list
            .trim_matches(|c| c == '(' || c == ')')
            .split_whitespace()
            .map(|n| n.trim_matches('|').to_string())
            .collect();
        for name in names {
            if SKIPPED.iter().any(|(n, _)| *n == name) || !seen.insert((lib, name.clone())) {
                continue;
            }
            let info = e.eval(&format!(
                "(if (procedure? {name}) (let ((i (%procedure-info {name}))) (list (cadr i) (caddr i))) #f)"
            ));
            let Some(info) = info.value.filter(|v| v != "#f") else {
                continue; // syntax, or a value that is no procedure
            };
            let parts: Vec<&str> = info
                .trim_matches(|c| c == '(' || c == ')')
                .split(' ')
                .collect();
            let min: usize = parts[0].parse().expect("a minimum arity");
            let max: Option<usize> = parts.get(1).and_then(|m| m.parse().ok());
            s.procedures += 1;
            s.names.insert(name.clone());
            e.set_limits(Limits {
                max_steps: 2_000_000,
                max_memory: 64 << 20,
            });
            for call in calls(&name, min, max) {
                s.calls += 1;
                let r = e.eval(&call);
                let Some(err) = r.error else { continue };
                s.messages.push(format!("{call} => {}", err.message));
                let named =
                    names_it(&err.message, &name) || alias_named(&mut e, &err.message, &name);
                let bad = match err.kind {
                    ErrorKind::StepLimit | ErrorKind::MemoryLimit => true,
                    _ => !named,
                };
                if bad && NOT_YET.contains(&(lib, name.as_str())) {
                    s.not_yet += 1;
                } else if bad {
                    s.failures
                        .push(format!("({lib}) {call}: {:?}: {}", err.kind, err.message));
                }
            }
        }
    }
    s
}

#[test]
fn every_error_of_a_library_procedure_names_it() {
    let s = sweep();
    // What was swept, in each failure's message (the core does no I/O,
    // its tests included).
    let summary = format!(
        "{} procedures ({} names), {} calls, {} errors, {} not naming the procedure, {} more of the {} procedures not yet held",
        s.procedures,
        s.names.len(),
        s.calls,
        s.messages.len(),
        s.failures.len(),
        s.not_yet,
        NOT_YET.len()
    );
    assert!(
        s.procedures > 500,
        "only {} procedures swept: {summary}",
        s.procedures
    );
    assert!(
        s.failures.is_empty(),
        "{} errors do not name the procedure called ({summary}):\n{}",
        s.failures.len(),
        s.failures.join("\n")
    );
}
