//! The `Engine` class seen from JavaScript.

use crate::browse;
use crate::convert::{to_js, EvaluationJs};
use crate::files::PageFiles;
use arbores_core::repo::browse::{self as browse_core, NodeFilter, SortBy};
use arbores_core::{Host, Limits, Tier};
use wasm_bindgen::prelude::*;

/// One Scheme session with its own global environment: definitions made by
/// one `eval` are visible to the next. Its knowledge base (the `arb:`
/// procedures) is kept by a `BrowserStore` (store.rs), and read for the
/// knowledge browser by the methods below (over the core's `repo::browse`).
#[wasm_bindgen]
pub struct Engine {
    inner: arbores_core::Engine,
    /// The page's files, shared with the engine's host (files.rs).
    files: PageFiles,
}

#[wasm_bindgen]
impl Engine {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Engine {
        crate::panic::install_hook();
        crate::install_prepared_image();
        let mut inner = arbores_core::Engine::new();
        inner.set_memory_meter(Some(|| crate::ALLOCATOR.allocated()));
        // The module's linear memory only grows: what it has grown to.
        #[cfg(target_arch = "wasm32")]
        inner.set_memory_footprint(Some(|| core::arch::wasm32::memory_size(0) << 16));
        let files = PageFiles::default();
        files.tier.set(Some(inner.tier()));
        inner.set_host(Box::new(BrowserHost {
            files: files.clone(),
        }));
        Engine { inner, files }
    }

    /// Evaluates every form of `source` and returns
    /// `{value, output, error: {kind, message, line, column, backtrace, hint} | null}`.
    /// Scheme errors are part of the result, never thrown.
    pub fn eval(&mut self, source: &str) -> Result<JsValue, JsError> {
        let evaluation = self.inner.eval(source);
        let hint = evaluation
            .error
            .as_ref()
            .and_then(|e| self.inner.unbound_hint(e));
        let mut result = EvaluationJs::from(evaluation);
        if let Some(error) = &mut result.error {
            error.hint = hint;
        }
        to_js(&result).map_err(|e| JsError::new(&format!("cannot convert the result: {e}")))
    }

    /// The session's definitions as bytes (every binding it defined or
    /// changed, closures and their state included; docs/ARCHITECTURE.md,
    /// "Session snapshots"), for `restoreSession` in any engine of the same
    /// build. Throws when the session cannot be saved.
    #[wasm_bindgen(js_name = saveSession)]
    pub fn save_session(&self) -> Result<Vec<u8>, JsError> {
        self.inner.save_session().map_err(|e| JsError::new(&e))
    }

    /// Replaces the session's definitions with those of bytes made by
    /// `saveSession`; returns `{bindings, skipped}` (how many bindings it
    /// holds; the names of macros the session had defined that could not
    /// be saved).
    /// Bytes that are not a saved session, of another build, or damaged
    /// are refused with an error, and nothing changes.
    #[wasm_bindgen(js_name = restoreSession)]
    pub fn restore_session(&mut self, bytes: &[u8]) -> Result<JsValue, JsError> {
        let listing = self
            .inner
            .restore_session(bytes)
            .map_err(|e| JsError::new(&e))?;
        let restored = crate::convert::RestoredJs {
            bindings: listing.bindings.len(),
            skipped: listing.skipped,
        };
        to_js(&restored).map_err(|e| JsError::new(&format!("cannot convert the answer: {e}")))
    }

    /// Hands the engine the static embedder's table (the bytes of
    /// `embedder.table`, served beside the page): semantic search then
    /// finds by meaning, across Chinese and English, exactly as the native
    /// and sandboxed engines do. Until it is given, search uses words and
    /// the model-free hashing embedder. Call it before loading the stored
    /// knowledge, or the knowledge base is indexed twice. Throws if the
    /// bytes are not a table.
    #[wasm_bindgen(js_name = setEmbedderTable)]
    pub fn set_embedder_table(&mut self, table: &[u8]) -> Result<(), JsError> {
        let embedder = arbores_core::repo::index::StaticEmbedder::from_bytes(table.to_vec())
            .map_err(|e| JsError::new(&e.to_string()))?;
        self.inner.set_embedder(
            Box::new(embedder),
            arbores_core::repo::index::SemanticConfig::default(),
        );
        Ok(())
    }

    /// Hands the engine the Chinese-English lexicon (the bytes of
    /// `zh-en.lexicon`, served beside the page): Chinese queries then find
    /// English descriptions by their words too, exactly as the native and
    /// sandboxed engines do. Until it is given, search works without it.
    /// Nothing stored depends on it. Throws if the bytes are not a lexicon.
    #[wasm_bindgen(js_name = setLexicon)]
    pub fn set_lexicon(&mut self, lexicon: &[u8]) -> Result<(), JsError> {
        let lexicon = arbores_core::repo::index::Lexicon::from_bytes(lexicon.to_vec())
            .map_err(|e| JsError::new(&e.to_string()))?;
        self.inner.set_lexicon(Some(std::sync::Arc::new(lexicon)));
        Ok(())
    }

    /// Sets the per-evaluation budget: `steps` procedure calls and
    /// `memoryBytes` bytes of memory: what the module's allocator holds
    /// (heap, stacks, strings and output being built, everything), and the
    /// module's linear memory, which never shrinks, grown by any large
    /// buffer (`Engine::set_memory_footprint`). Both must be positive
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

    /// The bytes the module's linear memory has grown to (it never
    /// shrinks): what the memory cap bounds, beside the module's own
    /// start (its data, the prelude, the embedder's table).
    #[wasm_bindgen(getter, js_name = memoryBytes)]
    pub fn memory_bytes(&self) -> f64 {
        #[cfg(target_arch = "wasm32")]
        return (core::arch::wasm32::memory_size(0) << 16) as f64;
        #[cfg(not(target_arch = "wasm32"))]
        0.0
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
        self.files.tier.set(Some(tier));
        Ok(())
    }

    /// Whether the knowledge base changed (a commit or a version switch)
    /// since the last export or import.
    #[wasm_bindgen(js_name = hasUnsavedChanges)]
    pub fn has_unsaved_changes(&self) -> bool {
        self.inner.has_unsaved_changes()
    }

    /// The current version, how many nodes it holds and the newest
    /// `reflogLimit` reflog entries: `{version, nodes, reflog: [{version,
    /// timestamp, description}]}`.
    pub fn knowledge(&mut self, reflog_limit: usize) -> Result<JsValue, JsError> {
        let k = self.inner.knowledge();
        let reflog = k
            .forest
            .reflog(0, reflog_limit)
            .map_err(|e| JsError::new(&e.to_string()))?;
        let summary = browse::SummaryOfKnowledgeJs {
            version: k.current(),
            nodes: k.node_count(),
            reflog: reflog
                .into_iter()
                .map(|e| browse::ReflogJs {
                    version: e.version,
                    timestamp: e.timestamp.to_iso8601(),
                    description: e.description.clone(),
                })
                .collect(),
        };
        js(&summary)
    }

    /// A page of the nodes of `version` (the current one if null):
    /// `{version, total, offset, nodes: [{id, symbolNames, type,
    /// description, changedIn}], types: [{type, count}]}`. `sort` is "name",
    /// "recency" or "id"; `type` keeps only nodes of that type; `builtins`
    /// includes the `arb:` procedures.
    pub fn nodes(
        &mut self,
        version: Option<f64>,
        kind: Option<String>,
        sort: &str,
        offset: usize,
        limit: usize,
        builtins: bool,
    ) -> Result<JsValue, JsError> {
        let sort = SortBy::from_name(sort).ok_or_else(|| {
            JsError::new(&format!(
                "sort: expected \"name\", \"recency\" or \"id\", got {sort:?}"
            ))
        })?;
        let filter = NodeFilter { kind, builtins };
        let version = id_arg("version", version)?;
        let page = browse_core::node_page(
            self.inner.knowledge(),
            version,
            &filter,
            sort,
            offset,
            limit,
        )
        .map_err(|e| JsError::new(&e.to_string()))?;
        js(&browse::PageJs::from(page))
    }

    /// One node as it is in `version` (the current one if null), with its
    /// dependencies and dependents as links and every version that changed
    /// it; `null` if it is not there.
    pub fn node(&mut self, id: f64, version: Option<f64>) -> Result<JsValue, JsError> {
        let id = whole_number("id", id)?;
        let version = id_arg("version", version)?;
        match browse_core::node_view(self.inner.knowledge(), id, version)
            .map_err(|e| JsError::new(&e.to_string()))?
        {
            Some(view) => js(&browse::NodeViewJs::from(view)),
            None => Ok(JsValue::NULL),
        }
    }

    /// Every version with its parent, for the version graph:
    /// `{current, versions: [{id, parent, timestamp, description, nodeCount}]}`.
    pub fn versions(&mut self) -> Result<JsValue, JsError> {
        js(&browse::GraphJs::from(browse_core::version_graph(
            self.inner.knowledge(),
        )))
    }

    /// What differs from version `from` to version `to`:
    /// `{from, to, added: [node], removed: [node], changed: [{before, after}]}`.
    pub fn diff(&mut self, from: f64, to: f64) -> Result<JsValue, JsError> {
        let from = whole_number("from", from)?;
        let to = whole_number("to", to)?;
        let d = browse_core::version_diff(self.inner.knowledge(), from, to)
            .map_err(|e| JsError::new(&e.to_string()))?;
        js(&browse::DiffJs::from(d))
    }
}

impl Engine {
    /// The core engine, for the store (store.rs).
    pub(crate) fn core(&mut self) -> &mut arbores_core::Engine {
        &mut self.inner
    }

    /// The page's files (files.rs).
    pub(crate) fn page_files(&self) -> &PageFiles {
        &self.files
    }
}

fn js<T: serde::Serialize>(value: &T) -> Result<JsValue, JsError> {
    to_js(value).map_err(|e| JsError::new(&format!("cannot convert the answer: {e}")))
}

fn id_arg(name: &str, n: Option<f64>) -> Result<Option<u64>, JsError> {
    n.map(|n| whole_number(name, n)).transpose()
}

/// The core's host in the browser: the page's clock and the page's files
/// (files.rs). A running evaluation is stopped by terminating its worker,
/// so nothing is polled.
struct BrowserHost {
    files: PageFiles,
}

impl Host for BrowserHost {
    fn now(&mut self) -> f64 {
        js_sys::Date::now() / 1000.0
    }

    fn read_file(&mut self, path: &str, max: usize) -> Result<Vec<u8>, String> {
        self.files.read(path, max)
    }

    fn write_file(&mut self, path: &str, bytes: &[u8], append: bool) -> Result<(), String> {
        self.files.write(path, bytes, append)
    }

    fn file_exists(&mut self, path: &str) -> Result<bool, String> {
        self.files.exists(path)
    }

    fn delete_file(&mut self, path: &str) -> Result<(), String> {
        self.files.delete(path)
    }
}

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

fn parse_tier(name: &str) -> Result<Tier, String> {
    Tier::from_name(name).ok_or_else(|| format!("setTier: {}", Tier::unknown_name(name)))
}

/// Largest integer a JavaScript number holds exactly.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

fn whole_number(name: &str, n: f64) -> Result<u64, JsError> {
    check_whole_number(name, n).map_err(|m| JsError::new(&m))
}

/// Separate from `whole_number` so it can be tested natively, where
/// `JsError` cannot be built.
pub(crate) fn check_whole_number(name: &str, n: f64) -> Result<u64, String> {
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
        assert!(err.starts_with("setTier: unknown tier \"root\""), "{err}");
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
