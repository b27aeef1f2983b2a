//! Converting a store directory of the first format into a store file at
//! the same path, once.
//!
//! 1. Every blob file and the refs record are copied into a new store file
//!    `.NAME.converting` beside the directory, in one transaction.
//! 2. The directory is renamed to `NAME.dir-store` (kept: nothing is
//!    deleted; remove it once satisfied).
//! 3. The new file is renamed to `NAME`, and the parent directory synced.
//!
//! A conversion cut short before step 2 is started again from the start
//! (the directory is untouched); one cut short between 2 and 3 is finished
//! by the next open (`finish_interrupted`). Blobs are copied as they are,
//! whether the refs record reaches them or not, and checked when the
//! engine loads them, as before.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use super::legacy::DirStore;
use super::{StoreError, APPLICATION_ID, HEAD, LAYOUT, SCHEMA};

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "store".to_string())
}

fn temp_path(path: &Path) -> PathBuf {
    path.with_file_name(format!(".{}.converting", file_name(path)))
}

/// The first free `NAME.dir-store[.N]` beside `path`.
fn backup_path(path: &Path) -> PathBuf {
    let base = format!("{}.dir-store", file_name(path));
    let mut candidate = path.with_file_name(&base);
    let mut n = 2;
    while candidate.exists() {
        candidate = path.with_file_name(format!("{base}.{n}"));
        n += 1;
    }
    candidate
}

fn sync_parent(path: &Path) -> Result<(), StoreError> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::File::open(parent)
        .and_then(|d| d.sync_all())
        .map_err(|e| StoreError::io(parent, e))
}

/// Completes a conversion that stopped after moving the directory aside.
pub fn finish_interrupted(path: &Path) -> Result<(), StoreError> {
    let temp = temp_path(path);
    if !path.exists() && temp.is_file() {
        std::fs::rename(&temp, path).map_err(|e| StoreError::io(path, e))?;
        sync_parent(path)?;
    }
    Ok(())
}

/// Converts the directory store at `path` into a store file at `path`.
pub fn convert(dir: &DirStore, path: &Path) -> Result<(), StoreError> {
    let refs = dir.refs()?;
    let names = dir.blob_names()?;
    if refs.is_none() && !names.is_empty() {
        return Err(StoreError::damaged(format!(
            "{}: the store directory holds {} blobs but no refs record, so nothing names \
             its current version; it was not converted (`arbores fsck --repair` rebuilds \
             the record from the history)",
            path.display(),
            names.len()
        )));
    }
    let temp = temp_path(path);
    let _ = std::fs::remove_file(&temp);
    let err = |e| StoreError::sqlite(&temp, e);
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    let mut conn = Connection::open_with_flags(&temp, flags).map_err(err)?;
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(err)?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(err)?;
    tx.execute_batch(SCHEMA).map_err(err)?;
    tx.pragma_update(None, "application_id", APPLICATION_ID)
        .map_err(err)?;
    tx.pragma_update(None, "user_version", LAYOUT)
        .map_err(err)?;
    {
        let mut insert = tx
            .prepare("INSERT OR IGNORE INTO blobs (hash, data) VALUES (?1, ?2)")
            .map_err(err)?;
        for name in &names {
            if let Some(bytes) = dir.blob(name)? {
                insert.execute((&name[..], bytes)).map_err(err)?;
            }
        }
        if let Some(refs) = &refs {
            tx.execute(
                "INSERT INTO refs (name, data) VALUES (?1, ?2)",
                (HEAD, refs),
            )
            .map_err(err)?;
        }
    }
    tx.commit().map_err(err)?;
    conn.close().map_err(|(_, e)| err(e))?;
    sync_parent(&temp)?;

    let backup = backup_path(path);
    std::fs::rename(path, &backup).map_err(|e| StoreError::io(path, e))?;
    std::fs::rename(&temp, path).map_err(|e| StoreError::io(path, e))?;
    sync_parent(path)?;
    eprintln!(
        "note: converted the store directory {} into a single store file ({} blobs); \
         the directory is kept as {}",
        path.display(),
        names.len(),
        backup.display()
    );
    Ok(())
}
