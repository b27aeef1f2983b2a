//! Bundle files in the browser: the knowledge base, every version, as the
//! one file `arbores export` writes and `arbores import` reads
//! (`arbores_core::repo::bundle`), so a knowledge base moves between the
//! playground and the command line both ways.

use arbores_core::repo::bundle;
use arbores_core::Snapshot;
use wasm_bindgen::prelude::*;

use crate::engine::Engine;

/// A bundle file read and checked entirely: every blob against its name
/// and the history for consistency, by loading it into an engine of its
/// own. Nothing is stored or replaced until it is given to
/// `BrowserStore.replace` and `Engine.installBundle`.
#[wasm_bindgen]
pub struct Bundle {
    snapshot: Snapshot,
    version: u64,
}

#[wasm_bindgen]
impl Bundle {
    /// Reads the bytes of a bundle file; throws an error that says what is
    /// wrong when they are not a bundle this build reads, or do not load.
    pub fn read(bytes: &[u8]) -> Result<Bundle, JsError> {
        let snapshot = bundle::decode(bytes).map_err(|e| JsError::new(&e.to_string()))?;
        crate::install_prepared_image();
        let mut check = arbores_core::Engine::new();
        check
            .import_snapshots([&snapshot])
            .map_err(|e| JsError::new(&format!("the bundle does not load: {e}")))?;
        let version = check.current_version();
        Ok(Bundle { snapshot, version })
    }

    /// The version that is current in the bundle.
    #[wasm_bindgen(getter)]
    pub fn version(&self) -> f64 {
        self.version as f64
    }

    /// How many blobs it holds.
    #[wasm_bindgen(getter)]
    pub fn blobs(&self) -> usize {
        self.snapshot.blobs.len()
    }
}

impl Bundle {
    pub(crate) fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }
}

#[wasm_bindgen]
impl Engine {
    /// The whole knowledge base, every version, as a bundle file's bytes.
    #[wasm_bindgen(js_name = exportBundle)]
    pub fn export_bundle(&mut self) -> Result<Vec<u8>, JsError> {
        let all = self
            .core()
            .export_full()
            .map_err(|e| JsError::new(&format!("cannot export the knowledge base: {e}")))?;
        Ok(bundle::encode(&all))
    }

    /// Makes a checked bundle this engine's knowledge base (the session's
    /// definitions stay). Store it first (`BrowserStore.replace`), so what
    /// the page shows is what is stored.
    #[wasm_bindgen(js_name = installBundle)]
    pub fn install_bundle(&mut self, bundle: &Bundle) -> Result<(), JsError> {
        self.core()
            .import_snapshots([bundle.snapshot()])
            .map_err(|e| JsError::new(&format!("the bundle does not load: {e}")))
    }
}
