//! The `Engine` class seen from JavaScript.

use crate::convert::{to_js, EvaluationJs};
use arbores_core::Limits;
use wasm_bindgen::prelude::*;

/// One Scheme session with its own global environment: definitions made by
/// one `eval` are visible to the next.
#[wasm_bindgen]
pub struct Engine {
    inner: arbores_core::Engine,
}

#[wasm_bindgen]
impl Engine {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Engine {
        crate::panic::install_hook();
        Engine {
            inner: arbores_core::Engine::new(),
        }
    }

    /// Evaluates every form of `source` and returns
    /// `{value, output, error: {kind, message, line, column, backtrace} | null}`.
    /// Scheme errors are part of the result, never thrown.
    pub fn eval(&mut self, source: &str) -> Result<JsValue, JsError> {
        // The core has no clock: `(current-second)` reads the browser's.
        self.inner.set_clock(js_sys::Date::now() / 1000.0);
        let result = EvaluationJs::from(self.inner.eval(source));
        to_js(&result).map_err(|e| JsError::new(&format!("cannot convert the result: {e}")))
    }

    /// Sets the per-evaluation budget: `steps` procedure calls and
    /// `memoryBytes` bytes of Scheme heap and stacks. Both must be positive
    /// whole numbers (JavaScript numbers, exact up to 2^53).
    #[wasm_bindgen(js_name = setLimits)]
    pub fn set_limits(&mut self, steps: f64, memory_bytes: f64) -> Result<(), JsError> {
        let max_steps = whole_number("steps", steps)?;
        let max_memory = whole_number("memoryBytes", memory_bytes)?;
        let max_memory = usize::try_from(max_memory)
            .map_err(|_| JsError::new(&format!("memoryBytes: {memory_bytes} is too large")))?;
        self.inner.set_limits(Limits {
            max_steps,
            max_memory,
        });
        Ok(())
    }

    /// The current step budget per evaluation.
    #[wasm_bindgen(getter, js_name = maxSteps)]
    pub fn max_steps(&self) -> f64 {
        self.inner.limits().max_steps as f64
    }

    /// The current memory cap per evaluation, in bytes.
    #[wasm_bindgen(getter, js_name = maxMemory)]
    pub fn max_memory(&self) -> f64 {
        self.inner.limits().max_memory as f64
    }
}

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

/// Largest integer a JavaScript number holds exactly.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

fn whole_number(name: &str, n: f64) -> Result<u64, JsError> {
    check_whole_number(name, n).map_err(|m| JsError::new(&m))
}

/// Separate from `whole_number` so it can be tested natively, where
/// `JsError` cannot be built.
fn check_whole_number(name: &str, n: f64) -> Result<u64, String> {
    if n.fract() != 0.0 || !(1.0..=MAX_SAFE_INTEGER).contains(&n) {
        return Err(format!("{name}: expected a positive whole number, got {n}"));
    }
    Ok(n as u64)
}

#[cfg(test)]
mod tests {
    use super::check_whole_number;

    #[test]
    fn accepts_positive_whole_numbers() {
        assert_eq!(check_whole_number("steps", 1.0), Ok(1));
        assert_eq!(check_whole_number("steps", 1e12), Ok(1_000_000_000_000));
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [0.0, -1.0, 1.5, f64::NAN, f64::INFINITY, 1e300] {
            let err = check_whole_number("steps", bad).unwrap_err();
            assert!(
                err.starts_with("steps: expected a positive whole number"),
                "{err}"
            );
        }
    }
}
