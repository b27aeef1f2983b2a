//! The `Engine` class seen from JavaScript.

use crate::convert::{to_js, EvaluationJs};
use crate::snapshot;
use arbores_core::{Host, Limits, Tier};
use wasm_bindgen::prelude::*;

/// One Scheme session with its own global environment: definitions made by
/// one `eval` are visible to the next. Its knowledge base (the `arb:`
/// procedures) goes out through `exportNew`/`exportFull` and comes back
/// through `importStored`; where it is kept is the caller's business.
#[wasm_bindgen]
pub struct Engine {
    inner: arbores_core::Engine,
}

#[wasm_bindgen]
impl Engine {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Engine {
        crate::panic::install_hook();
        let mut inner = arbores_core::Engine::new();
        inner.set_host(Box::new(BrowserHost));
        Engine { inner }
    }

    /// Evaluates every form of `source` and returns
    /// `{value, output, error: {kind, message, line, column, backtrace} | null}`.
    /// Scheme errors are part of the result, never thrown.
    pub fn eval(&mut self, source: &str) -> Result<JsValue, JsError> {
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

    /// The tier evaluations start in: "system", "read-write" or "read-only".
    #[wasm_bindgen(getter)]
    pub fn tier(&self) -> String {
        self.inner.tier().as_str().to_string()
    }

    /// Sets the tier evaluations start in, by name ("system", "read-write",
    /// "read-only", or "T0"/"T1"/"T2"). A person at the playground is the
    /// operator: "system".
    #[wasm_bindgen(js_name = setTier)]
    pub fn set_tier(&mut self, name: &str) -> Result<(), JsError> {
        let tier = parse_tier(name).map_err(|m| JsError::new(&m))?;
        self.inner.set_tier(tier);
        Ok(())
    }

    /// Whether the knowledge base changed (a commit or a version switch)
    /// since the last export or import.
    #[wasm_bindgen(js_name = hasUnsavedChanges)]
    pub fn has_unsaved_changes(&self) -> bool {
        self.inner.has_unsaved_changes()
    }

    /// What is new since the last export or import, as
    /// `{blobs: [{hash, bytes}], refs, size}`: store the blobs under their
    /// hex names, then the refs record. If storing fails, store an
    /// `exportFull()` next time: this export counts as saved.
    #[wasm_bindgen(js_name = exportNew)]
    pub fn export_new(&mut self) -> Result<JsValue, JsError> {
        let s = self.inner.export_new();
        snapshot::to_js(&s)
    }

    /// The whole knowledge base, in the shape of `exportNew`.
    #[wasm_bindgen(js_name = exportFull)]
    pub fn export_full(&mut self) -> Result<JsValue, JsError> {
        let s = self.inner.export_full();
        snapshot::to_js(&s)
    }

    /// Replaces the knowledge base with a stored one: `refs` is the refs
    /// record (a `Uint8Array`), `blobs` a `Map` from hex name to bytes.
    /// Every blob used is checked against its name; on any error the
    /// knowledge base is left as it was and the error says what is wrong.
    #[wasm_bindgen(js_name = importStored)]
    pub fn import_stored(&mut self, refs: JsValue, blobs: &js_sys::Map) -> Result<(), JsError> {
        let Some(refs) = snapshot::bytes_of(&refs) else {
            return Err(JsError::new(&format!(
                "the refs record is not bytes: found {}",
                snapshot::describe(&refs)
            )));
        };
        self.inner
            .import(&refs, |hash| {
                let value = blobs.get(&JsValue::from_str(&snapshot::hex(hash)));
                if value.is_undefined() {
                    return None;
                }
                // A stored value that is not bytes is damaged: empty bytes
                // make the core report it as a blob that does not match its name.
                Some(snapshot::bytes_of(&value).unwrap_or_default())
            })
            .map_err(|e| JsError::new(&e.to_string()))
    }
}

/// The core's host in the browser: the page's clock. A running evaluation
/// is stopped by terminating its worker, so nothing is polled.
struct BrowserHost;

impl Host for BrowserHost {
    fn now(&mut self) -> f64 {
        js_sys::Date::now() / 1000.0
    }
}

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

fn parse_tier(name: &str) -> Result<Tier, String> {
    Tier::from_name(name).ok_or_else(|| {
        format!("tier: expected \"system\", \"read-write\" or \"read-only\", got {name:?}")
    })
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
    use super::{check_whole_number, parse_tier};
    use arbores_core::Tier;

    #[test]
    fn tiers_by_name() {
        assert_eq!(parse_tier("system"), Ok(Tier::System));
        assert_eq!(parse_tier("read-write"), Ok(Tier::ReadWrite));
        assert_eq!(parse_tier("T2"), Ok(Tier::ReadOnly));
        let err = parse_tier("root").unwrap_err();
        assert!(err.starts_with("tier: expected"), "{err}");
    }

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
