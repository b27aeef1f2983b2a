//! The playground's session kept in IndexedDB: the bytes of
//! `Engine.saveSession` (every definition of the session, closures and
//! their state included), so that definitions survive Stop and reload.
//!
//! A database of its own, `arbores-session` (version 1), beside the
//! knowledge base's `arbores`, with one object store:
//!
//! | store     | key            | value                                          |
//! |-----------|----------------|------------------------------------------------|
//! | `session` | `"current"`    | the last saved session (`Uint8Array`)          |
//! | `session` | `"unrestored"` | a saved session that could not be restored,    |
//! |           |                | kept instead of overwritten by the next save   |
//! | `session` | `"files"`      | the page's files (`Engine.saveFiles`)          |
//! | `session` | `"files-unrestored"` | saved files that could not be restored   |
//!
//! Every tab of the playground shares it: the last evaluation to finish
//! saves the session the next start restores.

use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::TransactionMode;
use js_sys::{Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::snapshot;

const DB_NAME: &str = "arbores-session";
const DB_VERSION: u8 = 1;
const STORE: &str = "session";
const CURRENT: &str = "current";
const UNRESTORED: &str = "unrestored";
const FILES: &str = "files";
const FILES_UNRESTORED: &str = "files-unrestored";

/// The saved session of this site.
#[wasm_bindgen]
pub struct SessionStore {
    db: Database,
}

fn failed(what: &str, e: impl std::fmt::Display) -> JsValue {
    js_sys::Error::new(&format!("the session {what}: {e}")).into()
}

#[wasm_bindgen]
impl SessionStore {
    /// Opens (creating if needed) the database of the saved session.
    pub async fn open() -> Result<SessionStore, JsValue> {
        let db = Database::open(DB_NAME)
            .with_version(DB_VERSION)
            .with_on_upgrade_needed(|_event, db| {
                if !db.object_store_names().any(|n| n == STORE) {
                    db.create_object_store(STORE).build()?;
                }
                Ok(())
            })
            .await
            .map_err(|e| failed("store cannot be opened", e))?;
        if !db.object_store_names().any(|n| n == STORE) {
            return Err(failed(
                "store cannot be opened",
                format!("the database \"{DB_NAME}\" lacks the object store \"{STORE}\""),
            ));
        }
        Ok(SessionStore { db })
    }

    /// The last saved session: resolves to its bytes, or null when none
    /// was saved (or it is not bytes: then nothing can be restored).
    pub fn load(&self) -> Promise {
        self.get(CURRENT)
    }

    /// The page's files last saved (`Engine.saveFiles`), or null.
    #[wasm_bindgen(js_name = loadFiles)]
    pub fn load_files(&self) -> Promise {
        self.get(FILES)
    }

    /// Stores `bytes` (`Engine.saveFiles`) as the files to restore next.
    #[wasm_bindgen(js_name = saveFiles)]
    pub fn save_files(&self, bytes: Vec<u8>) -> Promise {
        self.put(FILES, bytes)
    }

    /// Keeps saved files that could not be restored aside.
    #[wasm_bindgen(js_name = keepUnrestoredFiles)]
    pub fn keep_unrestored_files(&self, bytes: Vec<u8>) -> Promise {
        self.put(FILES_UNRESTORED, bytes)
    }

    fn get(&self, key: &'static str) -> Promise {
        let db = self.db.clone();
        future_to_promise(async move {
            let read = |e: indexed_db_futures::error::Error| failed("cannot be read", e);
            let tx = db.transaction(STORE).build().map_err(read)?;
            let stored: Option<JsValue> = tx
                .object_store(STORE)
                .map_err(read)?
                .get(key)
                .await
                .map_err(read)?;
            Ok(match stored.as_ref().and_then(snapshot::bytes_of) {
                Some(bytes) => Uint8Array::from(bytes.as_slice()).into(),
                None => JsValue::NULL,
            })
        })
    }

    /// Stores `bytes` as the session to restore next.
    pub fn save(&self, bytes: Vec<u8>) -> Promise {
        self.put(CURRENT, bytes)
    }

    /// Keeps `bytes` (a saved session that could not be restored) aside,
    /// so that the next save does not lose them.
    #[wasm_bindgen(js_name = keepUnrestored)]
    pub fn keep_unrestored(&self, bytes: Vec<u8>) -> Promise {
        self.put(UNRESTORED, bytes)
    }

    /// Forgets the saved session and files: the next start begins with no
    /// definitions and no files.
    pub fn clear(&self) -> Promise {
        let db = self.db.clone();
        future_to_promise(async move {
            let write = |e: indexed_db_futures::error::Error| failed("cannot be deleted", e);
            let tx = db
                .transaction(STORE)
                .with_mode(TransactionMode::Readwrite)
                .build()
                .map_err(write)?;
            let store = tx.object_store(STORE).map_err(write)?;
            for key in [CURRENT, FILES] {
                store
                    .delete(key)
                    .primitive()
                    .map_err(write)?
                    .await
                    .map_err(write)?;
            }
            tx.commit().await.map_err(write)?;
            Ok(JsValue::UNDEFINED)
        })
    }

    fn put(&self, key: &'static str, bytes: Vec<u8>) -> Promise {
        let db = self.db.clone();
        future_to_promise(async move {
            let write = |e: indexed_db_futures::error::Error| failed("cannot be saved", e);
            let tx = db
                .transaction(STORE)
                .with_mode(TransactionMode::Readwrite)
                .build()
                .map_err(write)?;
            let value: JsValue = Uint8Array::from(bytes.as_slice()).into();
            tx.object_store(STORE)
                .map_err(write)?
                .put(value)
                .with_key(key)
                .await
                .map_err(write)?;
            tx.commit().await.map_err(write)?;
            Ok(JsValue::UNDEFINED)
        })
    }
}
