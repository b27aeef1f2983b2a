//! The page's files: what `(scheme file)`, `load` and `include` read and
//! write in the browser, held in memory by the engine (the core's
//! `MemoryFiles`, one flat space of names rooted at `/`, capped at
//! `DEFAULT_FILES_CAP` bytes) and kept in IndexedDB with the session by
//! the worker (`saveFiles` / `restoreFiles`), so they survive Stop and
//! reload like the definitions do, and "New session" empties them.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use arbores_core::{MemoryFiles, Tier, DEFAULT_FILES_CAP};
use wasm_bindgen::prelude::*;

use crate::convert::to_js;
use crate::engine::Engine;

/// What the engine's host shares with the `Engine` methods below.
#[derive(Clone, Default)]
pub(crate) struct PageFiles {
    pub files: Rc<RefCell<MemoryFiles>>,
    /// The tier evaluations start in: the read-only tier writes no file.
    pub tier: Rc<Cell<Option<Tier>>>,
}

impl PageFiles {
    pub fn read(&self, path: &str, max: usize) -> Result<Vec<u8>, String> {
        self.files.borrow().read(path, max)
    }

    pub fn write(&self, path: &str, bytes: &[u8], append: bool) -> Result<(), String> {
        if self.tier.get() == Some(Tier::ReadOnly) {
            return Err("not permitted: the read-only tier writes no files".into());
        }
        self.files.borrow_mut().write(path, bytes, append)
    }

    pub fn exists(&self, path: &str) -> Result<bool, String> {
        self.files.borrow().exists(path)
    }

    pub fn delete(&self, path: &str) -> Result<(), String> {
        if self.tier.get() == Some(Tier::ReadOnly) {
            return Err("not permitted: the read-only tier writes no files".into());
        }
        self.files.borrow_mut().delete(path)
    }
}

#[derive(serde::Serialize)]
struct FileJs {
    path: String,
    size: usize,
}

#[wasm_bindgen]
impl Engine {
    /// The page's files, by name: `[{path, size}]`.
    pub fn files(&self) -> Result<JsValue, JsError> {
        let list: Vec<FileJs> = self
            .page_files()
            .files
            .borrow()
            .list()
            .into_iter()
            .map(|(path, size)| FileJs { path, size })
            .collect();
        to_js(&list).map_err(|e| JsError::new(&format!("cannot convert the answer: {e}")))
    }

    /// The bytes of the file at `path`; throws when there is none.
    #[wasm_bindgen(js_name = readFile)]
    pub fn read_file(&self, path: &str) -> Result<Vec<u8>, JsError> {
        self.page_files()
            .files
            .borrow()
            .read(path, DEFAULT_FILES_CAP)
            .map_err(|e| JsError::new(&e))
    }

    /// Creates or replaces the file at `path` (an upload); throws past
    /// the cap, changing nothing.
    #[wasm_bindgen(js_name = writeFile)]
    pub fn write_file(&mut self, path: &str, bytes: &[u8]) -> Result<(), JsError> {
        self.page_files()
            .files
            .borrow_mut()
            .write(path, bytes, false)
            .map_err(|e| JsError::new(&e))
    }

    /// Changes to the files so far: the worker saves them when it moved.
    #[wasm_bindgen(getter, js_name = filesGeneration)]
    pub fn files_generation(&self) -> f64 {
        self.page_files().files.borrow().generation() as f64
    }

    /// Every file as one checked byte string, for `restoreFiles`.
    #[wasm_bindgen(js_name = saveFiles)]
    pub fn save_files(&self) -> Vec<u8> {
        self.page_files().files.borrow().to_bytes()
    }

    /// Replaces the files with those `saveFiles` gave; returns how many.
    /// Damaged or foreign bytes are refused with what is wrong, and the
    /// files stay as they were.
    #[wasm_bindgen(js_name = restoreFiles)]
    pub fn restore_files(&mut self, bytes: &[u8]) -> Result<u32, JsError> {
        let files =
            MemoryFiles::from_bytes(bytes, DEFAULT_FILES_CAP).map_err(|e| JsError::new(&e))?;
        let count = files.list().len() as u32;
        *self.page_files().files.borrow_mut() = files;
        Ok(count)
    }

    /// Removes every file.
    #[wasm_bindgen(js_name = clearFiles)]
    pub fn clear_files(&mut self) {
        self.page_files().files.borrow_mut().clear();
    }
}
