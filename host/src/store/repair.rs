//! What `arbores fsck --repair` does to the store file: reads every blob it
//! can (`salvage`), then either rewrites the refs record and moves damaged
//! blobs aside in place, in one transaction (`repair_in_place`), or, when
//! SQLite itself finds the file damaged, writes what was read into a new
//! store file and keeps the damaged one beside it (`rebuild`).
//!
//! Nothing is deleted: a blob whose bytes do not match its name moves to
//! the table `damaged_blobs` of the same file, and a damaged file is
//! renamed, not removed.

use std::path::{Path, PathBuf};

use arbores_core::repo::cas::hash_bytes;
use arbores_core::Hash;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use super::{begin_unmoved, create_file, retry_busy, Backing, Store, StoreError, HEAD};

/// Where damaged blobs are kept. Nothing reads it but people: a blob found
/// again elsewhere (a bundle, a backup) can be put back by hand.
const DAMAGED_TABLE: &str = "CREATE TABLE IF NOT EXISTS damaged_blobs \
     (hash BLOB NOT NULL, data BLOB NOT NULL, found TEXT NOT NULL)";

/// What could be read from a store file.
#[derive(Default)]
pub struct Salvage {
    /// Blobs whose bytes hash to their name.
    pub good: Vec<(Hash, Vec<u8>)>,
    /// Blobs whose bytes do not (or whose name is not a hash).
    pub damaged: Vec<(Vec<u8>, Vec<u8>)>,
    /// What SQLite could not read, with where.
    pub unreadable: Vec<String>,
    /// The refs record as stored, if it could be read.
    pub refs: Option<Vec<u8>>,
}

impl Salvage {
    pub fn good_names(&self) -> std::collections::HashMap<Hash, &[u8]> {
        self.good.iter().map(|(h, b)| (*h, b.as_slice())).collect()
    }
}

/// Reads rows of `sql` (hash, data) until the first error, which is noted.
fn read_rows(
    conn: &Connection,
    sql: &str,
    out: &mut std::collections::BTreeMap<Vec<u8>, Vec<u8>>,
) -> Option<String> {
    let mut stmt = match conn.prepare(sql) {
        Ok(s) => s,
        Err(e) => return Some(e.to_string()),
    };
    let mut rows = match stmt.query([]) {
        Ok(r) => r,
        Err(e) => return Some(e.to_string()),
    };
    loop {
        match rows.next() {
            Ok(None) => return None,
            Ok(Some(row)) => {
                let name: rusqlite::Result<Vec<u8>> = row.get(0);
                let data: rusqlite::Result<Vec<u8>> = row.get(1);
                match (name, data) {
                    (Ok(name), Ok(data)) => {
                        out.insert(name, data);
                    }
                    (Err(e), _) | (_, Err(e)) => return Some(e.to_string()),
                }
            }
            Err(e) => return Some(e.to_string()),
        }
    }
}

impl Store {
    /// Reads every blob and the refs record it can. A damaged page stops a
    /// scan of the table, so the table is read from both ends: what lies
    /// between two damaged pages may stay unread (and is reported).
    pub fn salvage(&self) -> Result<Salvage, StoreError> {
        let backing = self.lock();
        let Backing::File(conn) = &*backing else {
            return Err(StoreError::foreign(format!(
                "{}: only a store file is repaired (open a directory store for writing to \
                 convert it first)",
                self.0.path.display()
            )));
        };
        let mut rows = std::collections::BTreeMap::new();
        let mut salvage = Salvage::default();
        if let Some(e) = read_rows(
            conn,
            "SELECT hash, data FROM blobs ORDER BY hash",
            &mut rows,
        ) {
            salvage.unreadable.push(format!(
                "{}: reading the blobs in name order stopped after {} blobs: {e}",
                self.0.path.display(),
                rows.len()
            ));
            let before = rows.len();
            if let Some(e) = read_rows(
                conn,
                "SELECT hash, data FROM blobs ORDER BY hash DESC",
                &mut rows,
            ) {
                salvage.unreadable.push(format!(
                    "{}: reading them in reverse order stopped after {} more blobs: {e}",
                    self.0.path.display(),
                    rows.len() - before
                ));
            }
        }
        for (name, data) in rows {
            match <Hash>::try_from(name.as_slice()) {
                Ok(h) if hash_bytes(&data) == h => salvage.good.push((h, data)),
                _ => salvage.damaged.push((name, data)),
            }
        }
        salvage.refs = match retry_busy(|| {
            conn.query_row("SELECT data FROM refs WHERE name = ?1", [HEAD], |r| {
                r.get(0)
            })
            .optional()
        }) {
            Ok(refs) => refs,
            Err(e) => {
                salvage.unreadable.push(format!(
                    "{}: the refs record cannot be read: {e}",
                    self.0.path.display()
                ));
                None
            }
        };
        Ok(salvage)
    }

    /// Moves `damaged` blobs into `damaged_blobs` and makes `refs` the
    /// refs record, in one transaction, if the record is still `expected`
    /// (else nothing changes: another writer committed meanwhile).
    pub fn repair_in_place(
        &self,
        expected: Option<&[u8]>,
        refs: Option<&[u8]>,
        damaged: &[(Vec<u8>, Vec<u8>)],
        found: &str,
    ) -> Result<(), StoreError> {
        let mut backing = self.lock();
        let path = self.0.path.clone();
        let Backing::File(conn) = &mut *backing else {
            return Err(StoreError::foreign(format!(
                "{}: only a store file is repaired",
                path.display()
            )));
        };
        let err = |e| StoreError::sqlite(&path, e);
        let tx = begin_unmoved(
            conn,
            &path,
            expected,
            "the store was checked",
            "nothing was changed (run fsck --repair again)",
        )?;
        if !damaged.is_empty() {
            tx.execute_batch(DAMAGED_TABLE).map_err(err)?;
            let mut keep = tx
                .prepare("INSERT INTO damaged_blobs (hash, data, found) VALUES (?1, ?2, ?3)")
                .map_err(err)?;
            let mut delete = tx
                .prepare("DELETE FROM blobs WHERE hash = ?1")
                .map_err(err)?;
            for (name, data) in damaged {
                keep.execute((name, data, found)).map_err(err)?;
                delete.execute([name]).map_err(err)?;
            }
        }
        if let Some(refs) = refs {
            tx.execute(
                "INSERT OR REPLACE INTO refs (name, data) VALUES (?1, ?2)",
                (HEAD, refs),
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }
}

/// Writes `salvage`'s good blobs, its damaged ones (in `damaged_blobs`) and
/// `refs` into a new store file, then puts it in the place of the store at
/// `path`, whose files are renamed to `kept` (the main file) and `kept`
/// with `-wal` / `-shm`. Returns `kept`. The caller makes sure no other
/// process has the store open.
pub fn rebuild(
    path: &Path,
    salvage: &Salvage,
    refs: Option<&[u8]>,
    found: &str,
    stamp: &str,
) -> Result<PathBuf, StoreError> {
    let fresh = sibling(path, ".repairing");
    for p in [
        fresh.clone(),
        sibling(&fresh, "-wal"),
        sibling(&fresh, "-shm"),
    ] {
        match std::fs::remove_file(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(StoreError::io(&p, e))
            }
            _ => {}
        }
    }
    {
        let mut conn = create_file(&fresh)?;
        let err = |e| StoreError::sqlite(&fresh, e);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        {
            let mut insert = tx
                .prepare("INSERT OR IGNORE INTO blobs (hash, data) VALUES (?1, ?2)")
                .map_err(err)?;
            for (name, data) in &salvage.good {
                insert.execute((&name[..], data)).map_err(err)?;
            }
            if !salvage.damaged.is_empty() {
                tx.execute_batch(DAMAGED_TABLE).map_err(err)?;
                let mut keep = tx
                    .prepare("INSERT INTO damaged_blobs (hash, data, found) VALUES (?1, ?2, ?3)")
                    .map_err(err)?;
                for (name, data) in &salvage.damaged {
                    keep.execute((name, data, found)).map_err(err)?;
                }
            }
            if let Some(refs) = refs {
                tx.execute(
                    "INSERT OR REPLACE INTO refs (name, data) VALUES (?1, ?2)",
                    (HEAD, refs),
                )
                .map_err(err)?;
            }
        }
        tx.commit().map_err(err)?;
        // Everything into the main file, so that it stands alone.
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(err)?;
    }
    let kept = sibling(path, &format!(".damaged-{stamp}"));
    for suffix in ["-wal", "-shm"] {
        let from = sibling(path, suffix);
        if from.exists() {
            let to = sibling(&kept, suffix);
            std::fs::rename(&from, &to).map_err(|e| StoreError::io(&from, e))?;
        }
    }
    std::fs::rename(path, &kept).map_err(|e| StoreError::io(path, e))?;
    for suffix in ["-wal", "-shm"] {
        let from = sibling(&fresh, suffix);
        if from.exists() {
            let _ = std::fs::remove_file(&from);
        }
    }
    std::fs::rename(&fresh, path).map_err(|e| StoreError::io(&fresh, e))?;
    Ok(kept)
}

/// `path` with `suffix` appended to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}
