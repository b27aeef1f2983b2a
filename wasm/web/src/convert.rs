//! The JavaScript shapes of the core's results.
//!
//! They are plain serde structs rather than hand-built `js_sys::Object`s so the
//! same shapes can later be stored in IndexedDB (which takes serde values) and
//! checked in native tests without a browser.

use arbores_core::{EvalError, Evaluation};
use serde::Serialize;
use wasm_bindgen::JsValue;

/// `{value, output, error}` as returned by `Engine.eval`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EvaluationJs {
    /// The `write` form of the last value, or `null` when there is none.
    pub value: Option<String>,
    /// Everything written to the current output port, even before an error.
    pub output: String,
    pub error: Option<ErrorJs>,
}

/// `{kind, message, line, column, backtrace, hint}`; `line`/`column` are `null`
/// when the core does not know where the error happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ErrorJs {
    /// One of the stable names of `ErrorKind::as_str` ("syntax-error", ...).
    pub kind: &'static str,
    pub message: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// Innermost first, as the core gives it.
    pub backtrace: Vec<String>,
    /// A note after the error: "did you mean `x`?" for an unbound
    /// variable (`Engine::unbound_hint`, as the `arbores` command says it);
    /// `null` otherwise.
    pub hint: Option<String>,
}

impl From<Evaluation> for EvaluationJs {
    fn from(e: Evaluation) -> Self {
        EvaluationJs {
            value: e.value,
            output: e.output,
            error: e.error.map(ErrorJs::from),
        }
    }
}

impl From<EvalError> for ErrorJs {
    fn from(e: EvalError) -> Self {
        ErrorJs {
            kind: e.kind.as_str(),
            message: e.message,
            line: e.position.map(|p| p.line),
            column: e.position.map(|p| p.column),
            backtrace: e.backtrace,
            hint: None,
        }
    }
}

/// Converts to a JavaScript value with `None` as `null` (not `undefined`), so
/// callers can test `result.error === null` and JSON round trips keep fields.
pub fn to_js<T: Serialize>(value: &T) -> Result<JsValue, serde_wasm_bindgen::Error> {
    let serializer = serde_wasm_bindgen::Serializer::new().serialize_missing_as_null(true);
    value.serialize(&serializer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbores_core::{ErrorKind, Position};

    #[test]
    fn error_position_becomes_line_and_column() {
        let e = Evaluation {
            value: None,
            output: "partial".into(),
            error: Some(EvalError {
                kind: ErrorKind::Syntax,
                message: "unexpected end of input".into(),
                position: Some(Position { line: 2, column: 7 }),
                backtrace: vec!["f (1:1)".into()],
            }),
        };
        let js = EvaluationJs::from(e);
        assert_eq!(js.output, "partial");
        let err = js.error.unwrap();
        assert_eq!(err.kind, "syntax-error");
        assert_eq!((err.line, err.column), (Some(2), Some(7)));
        assert_eq!(err.backtrace, vec!["f (1:1)".to_string()]);
    }

    #[test]
    fn unknown_position_stays_empty() {
        let e = EvalError {
            kind: ErrorKind::StepLimit,
            message: "step limit reached".into(),
            position: None,
            backtrace: vec![],
        };
        let err = ErrorJs::from(e);
        assert_eq!(err.kind, "step-limit");
        assert_eq!((err.line, err.column), (None, None));
    }
}

/// `{bindings, skipped}` as returned by `Engine.restoreSession`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RestoredJs {
    /// How many bindings the session holds now.
    pub bindings: usize,
    /// Macros the saved session had defined that could not be saved
    /// (made by another macro, or in a local scope).
    pub skipped: Vec<String>,
}
