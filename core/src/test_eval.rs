//! How the core's unit tests evaluate a program and look at its answer.

use crate::Engine;

/// The written value of evaluating `src` in `e`, or the error's message.
pub(crate) fn value_or_message(e: &mut Engine, src: &str) -> Result<String, String> {
    let r = e.eval(src);
    match r.error {
        Some(err) => Err(err.message),
        None => Ok(r.value.unwrap_or_default()),
    }
}
