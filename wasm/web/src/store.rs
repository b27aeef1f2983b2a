//! The knowledge store of the browser: the engine's exports kept in
//! IndexedDB, with the same blobs and refs record as the `arbores` command's
//! store directory and the same save rule.
//!
//! One database, `arbores` (version 1), with two object stores:
//!
//! | store   | key                                  | value                          |
//! |---------|--------------------------------------|--------------------------------|
//! | `blobs` | a blob's BLAKE3 name, 64 hex digits  | its bytes (`Uint8Array`)       |
//! | `refs`  | `"current"`                          | the refs record (`Uint8Array`) |
//!
//! The save rule (as on disk): write what is new since the last save, the
//! blobs first and the refs record last, so a store always names a state
//! whose blobs are all there; here both go in one transaction with
//! durability "strict". After a failed save the next one writes a full
//! export. Before writing, the stored refs record must still be the one this
//! store loaded or last wrote: if another tab saved in between, nothing is
//! written (a conflict) and the page asks for a reload.
//!
//! Errors reach JavaScript as `Error`s whose `name` is a [`StoreErrorKind`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::{TransactionDurability, TransactionMode, TransactionOptions};
use js_sys::{Object, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::bundle::Bundle;
use crate::engine::Engine;
use crate::snapshot::{self, hex};
use arbores_core::Snapshot;

pub const DB_NAME: &str = "arbores";
const DB_VERSION: u8 = 1;
const BLOBS: &str = "blobs";
const REFS: &str = "refs";
const REFS_KEY: &str = "current";
const DAMAGED_PREFIX: &str = "arbores-damaged-";
const BEFORE_IMPORT_PREFIX: &str = "arbores-before-import-";

/// What went wrong, as the page needs to know it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreErrorKind {
    /// The database cannot be opened: nothing is read or written.
    Unavailable,
    /// It opens, but what it holds cannot be read or loaded.
    Damaged,
    /// Another tab saved since this one loaded.
    Conflict,
    /// A write failed.
    Write,
}

impl StoreErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StoreErrorKind::Unavailable => "unavailable",
            StoreErrorKind::Damaged => "damaged",
            StoreErrorKind::Conflict => "conflict",
            StoreErrorKind::Write => "write",
        }
    }
}

fn store_error(kind: StoreErrorKind, message: impl AsRef<str>) -> JsValue {
    let e = js_sys::Error::new(message.as_ref());
    e.set_name(kind.as_str());
    e.into()
}

fn describe(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// What a host remembers between saves: the refs record the store holds
/// (as far as this session knows) and whether the next save must be full.
#[derive(Default)]
struct SaveState {
    expected: Option<Vec<u8>>,
    needs_full: bool,
}

/// An open knowledge store.
#[wasm_bindgen]
pub struct BrowserStore {
    db: Database,
    state: Rc<RefCell<SaveState>>,
}

/// Everything a store held when it was read, kept in the module until the
/// engine loads it (`Engine.loadStored`).
#[wasm_bindgen]
pub struct Stored {
    refs: Option<Vec<u8>>,
    blobs: HashMap<String, Vec<u8>>,
    bytes: usize,
}

#[wasm_bindgen]
impl Stored {
    /// How many blobs were read.
    #[wasm_bindgen(getter)]
    pub fn count(&self) -> usize {
        self.blobs.len()
    }

    /// Their bytes in all.
    #[wasm_bindgen(getter)]
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Whether a refs record was stored (false: nothing was ever saved).
    #[wasm_bindgen(getter, js_name = hasRefs)]
    pub fn has_refs(&self) -> bool {
        self.refs.is_some()
    }
}

async fn open_database(name: &str) -> Result<Database, JsValue> {
    let db = Database::open(name)
        .with_version(DB_VERSION)
        .with_on_upgrade_needed(|_event, db| {
            let names: Vec<String> = db.object_store_names().collect();
            for store in [BLOBS, REFS] {
                if !names.iter().any(|n| n == store) {
                    db.create_object_store(store).build()?;
                }
            }
            Ok(())
        })
        .await
        .map_err(|e| {
            let text = describe(&e);
            let why = if text.contains("VersionError") {
                format!("the database \"{name}\" was written by a newer version of the playground ({text})")
            } else {
                format!("IndexedDB cannot be opened: {text}")
            };
            store_error(StoreErrorKind::Unavailable, why)
        })?;
    let names: Vec<String> = db.object_store_names().collect();
    if ![BLOBS, REFS].iter().all(|s| names.iter().any(|n| n == s)) {
        return Err(store_error(
            StoreErrorKind::Unavailable,
            format!("the database \"{name}\" of this site is not the playground's: it lacks the object stores \"{BLOBS}\" and \"{REFS}\""),
        ));
    }
    Ok(db)
}

fn strict() -> TransactionOptions {
    let mut options = TransactionOptions::new();
    options.set_durability(TransactionDurability::Strict);
    options
}

/// Every record of both stores: (refs keys and values, blob keys and values).
type Records = (Vec<(String, JsValue)>, Vec<(String, JsValue)>);

async fn read_records(db: &Database) -> Result<Records, indexed_db_futures::error::Error> {
    let tx = db.transaction([BLOBS, REFS]).build()?;
    let mut out: Records = (Vec::new(), Vec::new());
    for (name, list) in [(REFS, &mut out.0), (BLOBS, &mut out.1)] {
        let store = tx.object_store(name)?;
        let keys: Vec<String> = store
            .get_all_keys::<String>()
            .await?
            .collect::<Result<_, _>>()?;
        let values: Vec<JsValue> = store
            .get_all::<JsValue>()
            .await?
            .collect::<Result<_, _>>()?;
        list.extend(keys.into_iter().zip(values));
    }
    Ok(out)
}

async fn clear_records(db: &Database) -> Result<(), indexed_db_futures::error::Error> {
    let tx = db
        .transaction([BLOBS, REFS])
        .with_mode(TransactionMode::Readwrite)
        .with_options(strict())
        .build()?;
    tx.object_store(REFS)?.clear()?.await?;
    tx.object_store(BLOBS)?.clear()?.await?;
    tx.commit().await
}

/// Copies every record of `db` into a new database named `prefix` and the
/// time; returns its name. `what` names the records in errors.
async fn copy_records(db: &Database, prefix: &str, what: &str) -> Result<String, JsValue> {
    let (refs, blobs) = read_records(db).await.map_err(|e| {
        store_error(
            StoreErrorKind::Write,
            format!("the {what} cannot be read to keep a copy: {e}"),
        )
    })?;
    let time = js_sys::Date::new_0()
        .to_iso_string()
        .as_string()
        .unwrap_or_default();
    let name = format!("{prefix}{}", time.replace([':', '.'], "-"));
    let copy_failed = |e: String| {
        store_error(
            StoreErrorKind::Write,
            format!("a copy of the {what} cannot be written to \"{name}\": {e}"),
        )
    };
    let copy = open_database(&name)
        .await
        .map_err(|e| copy_failed(format!("{e:?}")))?;
    let result: Result<(), indexed_db_futures::error::Error> = async {
        let tx = copy
            .transaction([BLOBS, REFS])
            .with_mode(TransactionMode::Readwrite)
            .with_options(strict())
            .build()?;
        for (store, records) in [(REFS, &refs), (BLOBS, &blobs)] {
            let store = tx.object_store(store)?;
            for (k, v) in records {
                store.put(v.clone()).with_key(k.clone()).await?;
            }
        }
        tx.commit().await
    }
    .await;
    copy.close();
    result.map_err(|e| copy_failed(e.to_string()))?;
    Ok(name)
}

/// How a snapshot is written: beside what is stored (a save), or instead
/// of it (an import).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Write {
    Add,
    Replace,
}

/// Writes a snapshot if the stored refs record is still `expected`.
async fn write_snapshot(
    db: &Database,
    snapshot: &Snapshot,
    expected: Option<&[u8]>,
    how: Write,
) -> Result<(), JsValue> {
    let write =
        |e: indexed_db_futures::error::Error| store_error(StoreErrorKind::Write, describe(e));
    let tx = db
        .transaction([BLOBS, REFS])
        .with_mode(TransactionMode::Readwrite)
        .with_options(strict())
        .build()
        .map_err(write)?;
    let refs = tx.object_store(REFS).map_err(write)?;
    let stored: Option<JsValue> = refs.get(REFS_KEY).await.map_err(write)?;
    let stored = stored.and_then(|v| snapshot::bytes_of(&v));
    if stored.as_deref() != expected {
        let _ = tx.abort().await;
        return Err(store_error(
            StoreErrorKind::Conflict,
            "the stored knowledge base was changed by another tab or window of this playground since this session loaded it",
        ));
    }
    let blobs = tx.object_store(BLOBS).map_err(write)?;
    if how == Write::Replace {
        blobs.clear().map_err(write)?.await.map_err(write)?;
    }
    for (hash, bytes) in &snapshot.blobs {
        let value: JsValue = Uint8Array::from(bytes.as_slice()).into();
        blobs.put(value).with_key(hex(hash)).await.map_err(write)?;
    }
    let value: JsValue = Uint8Array::from(snapshot.refs.as_slice()).into();
    refs.put(value).with_key(REFS_KEY).await.map_err(write)?;
    tx.commit().await.map_err(write)
}

fn stats(blobs: usize, bytes: usize, ms: f64) -> JsValue {
    let o = Object::new();
    for (k, v) in [("blobs", blobs as f64), ("bytes", bytes as f64), ("ms", ms)] {
        let _ = js_sys::Reflect::set(&o, &k.into(), &v.into());
    }
    o.into()
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

#[wasm_bindgen]
impl BrowserStore {
    /// Opens (creating if needed) the playground's database, `arbores`, or
    /// the one named.
    pub async fn open(name: Option<String>) -> Result<BrowserStore, JsValue> {
        let db = open_database(name.as_deref().unwrap_or(DB_NAME)).await?;
        Ok(BrowserStore {
            db,
            state: Rc::new(RefCell::new(SaveState::default())),
        })
    }

    /// Reads every record: resolves to a `Stored`, or rejects with a
    /// "damaged" error when the records cannot be read.
    pub fn read(&self) -> Promise {
        let db = self.db.clone();
        future_to_promise(async move {
            let (refs, blobs) = read_records(&db).await.map_err(|e| {
                store_error(
                    StoreErrorKind::Damaged,
                    format!("the stored knowledge cannot be read: {e}"),
                )
            })?;
            let refs = match refs.into_iter().find(|(k, _)| k == REFS_KEY) {
                None => None,
                Some((_, v)) => Some(snapshot::bytes_of(&v).ok_or_else(|| {
                    store_error(
                        StoreErrorKind::Damaged,
                        format!(
                            "the stored refs record is not bytes: found {}",
                            snapshot::describe(&v)
                        ),
                    )
                })?),
            };
            let mut bytes = 0;
            let blobs: HashMap<String, Vec<u8>> = blobs
                .into_iter()
                .map(|(k, v)| {
                    // A stored value that is not bytes is damaged: empty bytes
                    // make the core report it as a blob that does not match its name.
                    let b = snapshot::bytes_of(&v).unwrap_or_default();
                    bytes += b.len();
                    (k, b)
                })
                .collect();
            Ok(Stored { refs, blobs, bytes }.into())
        })
    }

    /// Loads what `read` returned into `engine`; from now on saves expect
    /// this refs record to be the stored one. Throws a "damaged" error (and
    /// changes nothing) when it does not load.
    #[wasm_bindgen(js_name = loadInto)]
    pub fn load_into(&self, stored: &Stored, engine: &mut Engine) -> Result<(), JsValue> {
        let Some(refs) = &stored.refs else {
            if !stored.blobs.is_empty() {
                return Err(store_error(
                    StoreErrorKind::Damaged,
                    format!("the store holds {} blobs but no refs record, so nothing says which state is current", stored.blobs.len()),
                ));
            }
            return Ok(()); // a first visit
        };
        engine
            .core()
            .import(refs, |hash| stored.blobs.get(&hex(hash)).map(Vec::as_slice))
            .map_err(|e| {
                store_error(
                    StoreErrorKind::Damaged,
                    format!("the stored knowledge base does not load: {e}"),
                )
            })?;
        self.state.borrow_mut().expected = Some(refs.clone());
        Ok(())
    }

    /// Saves what changed in `engine` since the last save. Resolves to
    /// `{blobs, bytes, ms}`, or `null` when there was nothing to save;
    /// rejects with a "conflict" or "write" error (then the next save
    /// writes everything).
    pub fn save(&self, engine: &mut Engine) -> Promise {
        let state = self.state.clone();
        let full = state.borrow().needs_full;
        if !full && !engine.core().has_unsaved_changes() {
            return Promise::resolve(&JsValue::NULL);
        }
        let snapshot = if full {
            match engine.core().export_full() {
                Ok(s) => s,
                Err(e) => {
                    return Promise::reject(
                        &JsError::new(&format!("cannot export the knowledge base: {e}")).into(),
                    )
                }
            }
        } else {
            engine.core().export_new()
        };
        let db = self.db.clone();
        future_to_promise(async move {
            let started = now_ms();
            let expected = state.borrow().expected.clone();
            match write_snapshot(&db, &snapshot, expected.as_deref(), Write::Add).await {
                Ok(()) => {
                    let mut s = state.borrow_mut();
                    s.expected = Some(snapshot.refs.clone());
                    s.needs_full = false;
                    Ok(stats(
                        snapshot.blobs.len(),
                        snapshot.size(),
                        now_ms() - started,
                    ))
                }
                Err(e) => {
                    // The engine counts this export as saved.
                    state.borrow_mut().needs_full = true;
                    Err(e)
                }
            }
        })
    }

    /// Forgets what is stored: the next save writes everything and expects
    /// an empty store (after `moveAside` or `clear`).
    #[wasm_bindgen(js_name = startOver)]
    pub fn start_over(&self) {
        let mut s = self.state.borrow_mut();
        s.expected = None;
        s.needs_full = true;
    }

    /// Copies every record into a new database "arbores-damaged-<time>",
    /// then empties this one. Resolves to the copy's name; changes nothing
    /// here if the records cannot be read or copied.
    #[wasm_bindgen(js_name = moveAside)]
    pub fn move_aside(&self) -> Promise {
        let db = self.db.clone();
        future_to_promise(async move {
            let name = copy_records(&db, DAMAGED_PREFIX, "damaged records").await?;
            clear_records(&db).await.map_err(|e| {
                store_error(
                    StoreErrorKind::Write,
                    format!("the stored records cannot be deleted: {e}"),
                )
            })?;
            Ok(JsValue::from_str(&name))
        })
    }

    /// Replaces the stored knowledge base with a bundle's (checked by
    /// `Bundle.read`), then expects the bundle's refs record. What was
    /// stored is first copied, unchanged, to a new database
    /// "arbores-before-import-<time>", so nothing is lost. The replacement
    /// is one transaction: it happens whole or not at all, and like a save
    /// it is refused (a "conflict") when another tab saved since this
    /// session loaded. Resolves to the copy's name, or `null` when nothing
    /// was stored.
    pub fn replace(&self, bundle: &Bundle) -> Promise {
        let db = self.db.clone();
        let state = self.state.clone();
        let snapshot = bundle.snapshot().clone();
        future_to_promise(async move {
            let expected = state.borrow().expected.clone();
            let kept = match expected {
                Some(_) => Some(copy_records(&db, BEFORE_IMPORT_PREFIX, "stored records").await?),
                None => None,
            };
            write_snapshot(&db, &snapshot, expected.as_deref(), Write::Replace).await?;
            let mut s = state.borrow_mut();
            s.expected = Some(snapshot.refs.clone());
            s.needs_full = false;
            Ok(kept.map_or(JsValue::NULL, |name| JsValue::from_str(&name)))
        })
    }

    /// Deletes every record of both stores.
    pub fn clear(&self) -> Promise {
        let db = self.db.clone();
        future_to_promise(async move {
            clear_records(&db).await.map_err(|e| {
                store_error(
                    StoreErrorKind::Write,
                    format!("the stored records cannot be deleted: {e}"),
                )
            })?;
            Ok(JsValue::UNDEFINED)
        })
    }
}
