//! What the unit tests beside the primitives share: an engine that gives
//! the written value of an expression, or the error it raised, its kind and
//! where.

use crate::{Engine, ErrorKind, EvalError, Position};

/// One engine for a test's cases (what one case defines, the next sees).
pub(super) struct Probe(Engine);

impl Probe {
    pub fn new() -> Probe {
        Probe(Engine::new())
    }

    /// The value `source` gives, as `write` writes it (several values one
    /// to a line); the test fails if it raises an error instead.
    pub fn value(&mut self, source: &str) -> String {
        let ev = self.0.eval(source);
        if let Some(e) = ev.error {
            panic!("{source:?} should give a value, but: {e}");
        }
        ev.value.unwrap_or_default()
    }

    /// What `source` writes to the current output port.
    pub fn output(&mut self, source: &str) -> String {
        let ev = self.0.eval(source);
        if let Some(e) = ev.error {
            panic!("{source:?} should write, but: {e}");
        }
        ev.output
    }

    /// The error `source` raises; the test fails if it gives a value.
    pub fn error(&mut self, source: &str) -> EvalError {
        let ev = self.0.eval(source);
        match ev.error {
            Some(e) => e,
            None => panic!("{source:?} should fail, but gave {:?}", ev.value),
        }
    }

    /// Each source gives its value.
    pub fn values(&mut self, cases: &[(&str, &str)]) {
        for &(source, expected) in cases {
            assert_eq!(self.value(source), expected, "{source}");
        }
    }

    /// Each source, a single form, raises a runtime error with that
    /// message, placed at the form (1:1).
    pub fn errors(&mut self, cases: &[(&str, &str)]) {
        for &(source, message) in cases {
            let e = self.error(source);
            assert_eq!(e.kind, ErrorKind::Runtime, "{source}: {e}");
            assert_eq!(e.message, message, "{source}");
            assert_eq!(
                e.position,
                Some(Position { line: 1, column: 1 }),
                "{source}: {e}"
            );
        }
    }
}
