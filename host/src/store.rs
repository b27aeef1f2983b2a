//! The knowledge store: the engine's knowledge base kept in a directory, so
//! that the next `arbores` sees what the last one committed.
//!
//! Layout of the directory:
//!
//! ```text
//! DIR/format            "arbores-store 1": what this directory is
//! DIR/refs              the refs record: names the current state (small, checksummed)
//! DIR/blobs/ab/cdef...  one file per blob, named by the hex of its BLAKE3 hash
//! ```
//!
//! Blobs never change once written (their name is the hash of their bytes).
//! A save writes the format marker (once), then the new blobs, then the refs
//! record, each to a temporary file in the same directory that is synced
//! and renamed into place, and syncs the directories after the renames. A
//! crash at any point leaves either the previous refs record with every
//! blob it names, or the new one with every blob it names: a store that
//! opens. Concurrent writers are not coordinated yet (the last refs record
//! wins).

use std::fs::File;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use arbores_core::{hex, Hash, ImportError, Snapshot};

const FORMAT_FILE: &str = "format";
const FORMAT: &str = "arbores-store 1\n";
const REFS_FILE: &str = "refs";
const BLOBS_DIR: &str = "blobs";

/// A knowledge store directory (which need not exist yet).
pub struct Store {
    dir: PathBuf,
    /// A save failed: what the engine counted as exported may be missing
    /// here, so the next save stores a full export.
    needs_full: bool,
}

/// Why a stored state could not be loaded, from either engine.
pub struct LoadError {
    /// One of `ImportError::KINDS`, or a kind a newer guest added.
    pub kind: String,
    pub message: String,
    pub blob: Option<Hash>,
}

impl From<ImportError> for LoadError {
    fn from(e: ImportError) -> LoadError {
        LoadError {
            kind: e.kind().to_string(),
            message: e.to_string(),
            blob: e.blob(),
        }
    }
}

/// What a save wrote (shown by the REPL's `,settings`).
#[derive(Default, Debug)]
pub struct SaveStats {
    pub written: usize,
    pub skipped: usize,
    pub bytes: u64,
    pub took: Duration,
}

/// Answers the engine's requests for blobs during a load, straight from the
/// files. An I/O error other than a missing file is kept, so that the host
/// reports it rather than the engine's "missing".
#[derive(Default)]
pub struct BlobReader {
    dir: PathBuf,
    pub error: Option<String>,
    pub read: usize,
    pub bytes: u64,
}

impl BlobReader {
    pub fn get(&mut self, name: &[u8]) -> Option<Vec<u8>> {
        let name: &Hash = name.try_into().ok()?;
        let path = blob_path(&self.dir, name);
        match std::fs::read(&path) {
            Ok(bytes) => {
                self.read += 1;
                self.bytes += bytes.len() as u64;
                Some(bytes)
            }
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => {
                if self.error.is_none() {
                    self.error = Some(format!("{}: {e}", path.display()));
                }
                None
            }
        }
    }
}

fn blob_path(dir: &Path, name: &Hash) -> PathBuf {
    let h = hex(name);
    dir.join(BLOBS_DIR).join(&h[..2]).join(&h[2..])
}

/// Temporary files are unique per process and write, so that concurrent
/// writers never write into the same temporary file.
fn temp_name(final_name: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        ".{final_name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Blob files written (and open) at once before they are synced.
const BATCH: usize = 256;

/// Removes the temporary files of a batch that failed.
fn discard(batch: &[(File, PathBuf, PathBuf)]) {
    for (_, tmp, _) in batch {
        let _ = std::fs::remove_file(tmp);
    }
}

fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp")
}

/// Writes `bytes` to `dir/name` through a synced temporary file and a
/// rename; the caller syncs `dir`.
fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    let tmp = dir.join(temp_name(name));
    let target = dir.join(name);
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, &target)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("{}: {e}", target.display())
    })
}

fn sync_dir(dir: &Path) -> Result<(), String> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| format!("{}: cannot sync the directory: {e}", dir.display()))
}

impl Store {
    pub fn new(dir: PathBuf) -> Store {
        Store {
            dir,
            needs_full: false,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn refs_path(&self) -> PathBuf {
        self.dir.join(REFS_FILE)
    }

    /// Whether the next save must store everything.
    pub fn needs_full(&self) -> bool {
        self.needs_full
    }

    pub fn blob_reader(&self) -> BlobReader {
        BlobReader {
            dir: self.dir.clone(),
            error: None,
            read: 0,
            bytes: 0,
        }
    }

    /// Checks the directory and reads its refs record: `None` when nothing
    /// is stored yet (no directory, an empty one, or a store whose first
    /// save never finished). Refuses a directory that is not a store, so
    /// that saving never writes into someone else's files.
    pub fn open(&self) -> Result<Option<Vec<u8>>, String> {
        let dir = &self.dir;
        match std::fs::metadata(dir) {
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", dir.display())),
            Ok(m) if !m.is_dir() => {
                return Err(format!("{}: not a directory", dir.display()));
            }
            Ok(_) => {}
        }
        let format_path = dir.join(FORMAT_FILE);
        match std::fs::read(&format_path) {
            Ok(bytes) => {
                if bytes != FORMAT.as_bytes() {
                    let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(40)])
                        .trim_end()
                        .to_string();
                    return Err(format!(
                        "{}: expected `{}`, found `{shown}`: a store of another format \
                         (written by a newer arbores?) or a damaged file",
                        format_path.display(),
                        FORMAT.trim_end()
                    ));
                }
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                // Empty but for the temporary file of a first save that
                // was cut short: nothing stored yet.
                let mut entries = std::fs::read_dir(dir)
                    .map_err(|e| format!("{}: {e}", dir.display()))?
                    .filter_map(|e| e.ok())
                    .filter(|e| !is_temp_name(&e.file_name().to_string_lossy()));
                if entries.next().is_none() {
                    return Ok(None);
                }
                return Err(format!(
                    "{}: not an arbores store (there is no {FORMAT_FILE} file, and the \
                     directory is not empty)",
                    dir.display()
                ));
            }
            Err(e) => return Err(format!("{}: {e}", format_path.display())),
        }
        let refs = self.refs_path();
        match std::fs::read(&refs) {
            Ok(bytes) => Ok(Some(bytes)),
            // The first save was cut short before its refs record: nothing
            // was stored yet (its blobs are harmless).
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", refs.display())),
        }
    }

    /// What a failed load means, naming the file at fault.
    pub fn explain(&self, error: &LoadError, reader: &BlobReader) -> String {
        if let Some(io) = &reader.error {
            return io.clone();
        }
        match (&error.blob, error.kind.as_str()) {
            (_, "refs") => format!("{}: {}", self.refs_path().display(), error.message),
            (Some(blob), _) => {
                format!(
                    "{}: {}",
                    blob_path(&self.dir, blob).display(),
                    error.message
                )
            }
            (None, _) => format!("{}: {}", self.dir.display(), error.message),
        }
    }

    /// Stores `snapshot`: blobs first, then the refs record (see the
    /// module's comment). On error the previous state stays, and the next
    /// save stores everything (the caller passes an `export_full`).
    pub fn save(&mut self, snapshot: &Snapshot) -> Result<SaveStats, String> {
        let result = self.write(snapshot);
        self.needs_full = result.is_err();
        result
    }

    fn write(&self, snapshot: &Snapshot) -> Result<SaveStats, String> {
        let start = Instant::now();
        let mut stats = SaveStats::default();
        let dir = &self.dir;
        let created = !dir.exists();
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{}: cannot create the directory: {e}", dir.display()))?;
        if created {
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                sync_dir(parent)?;
            }
        }
        if !dir.join(FORMAT_FILE).is_file() {
            write_atomically(dir, FORMAT_FILE, FORMAT.as_bytes())?;
            sync_dir(dir)?;
        }

        let blobs = dir.join(BLOBS_DIR);
        let mut dirty_dirs: Vec<PathBuf> = Vec::new();
        let mut blobs_dir_dirty = false;
        if !snapshot.blobs.is_empty() && !blobs.is_dir() {
            std::fs::create_dir(&blobs)
                .or_else(|e| {
                    if e.kind() == ErrorKind::AlreadyExists {
                        Ok(())
                    } else {
                        Err(e)
                    }
                })
                .map_err(|e| format!("{}: {e}", blobs.display()))?;
            sync_dir(dir)?;
        }
        // Blobs are written in batches: every temporary file of a batch,
        // then each synced, then each renamed into place. A blob is only
        // ever visible under its name once its bytes are durable (a later
        // save skips blobs that exist), and the first sync of a batch
        // usually flushes the others' data too, so the rest cost little.
        let mut batch: Vec<(File, PathBuf, PathBuf)> = Vec::new();
        for (i, (name, bytes)) in snapshot.blobs.iter().enumerate() {
            let path = blob_path(dir, name);
            if path.is_file() {
                stats.skipped += 1;
            } else {
                let sub = path
                    .parent()
                    .expect("a blob path has a parent")
                    .to_path_buf();
                if !sub.is_dir() {
                    std::fs::create_dir(&sub)
                        .or_else(|e| {
                            if e.kind() == ErrorKind::AlreadyExists {
                                Ok(())
                            } else {
                                Err(e)
                            }
                        })
                        .map_err(|e| format!("{}: {e}", sub.display()))?;
                    blobs_dir_dirty = true;
                }
                let file = path
                    .file_name()
                    .expect("a blob path has a name")
                    .to_string_lossy();
                let tmp = sub.join(temp_name(&file));
                let written = File::create(&tmp).and_then(|mut f| f.write_all(bytes).map(|()| f));
                match written {
                    Ok(f) => batch.push((f, tmp, path)),
                    Err(e) => {
                        let _ = std::fs::remove_file(&tmp);
                        discard(&batch);
                        return Err(format!("{}: {e}", path.display()));
                    }
                }
                stats.written += 1;
                stats.bytes += bytes.len() as u64;
                if !dirty_dirs.contains(&sub) {
                    dirty_dirs.push(sub);
                }
            }
            if batch.len() >= BATCH || (i + 1 == snapshot.blobs.len() && !batch.is_empty()) {
                if let Some((_, _, path, e)) = batch
                    .iter()
                    .find_map(|(f, tmp, path)| f.sync_all().err().map(|e| (f, tmp, path, e)))
                {
                    let message = format!("{}: {e}", path.display());
                    discard(&batch);
                    return Err(message);
                }
                for (i, (_, tmp, path)) in batch.iter().enumerate() {
                    if let Err(e) = std::fs::rename(tmp, path) {
                        discard(&batch[i..]);
                        return Err(format!("{}: {e}", path.display()));
                    }
                }
                batch.clear();
            }
        }
        // The blobs' directory entries must be durable before the refs
        // record that names them.
        for sub in &dirty_dirs {
            sync_dir(sub)?;
        }
        if blobs_dir_dirty {
            sync_dir(&blobs)?;
        }

        write_atomically(dir, REFS_FILE, &snapshot.refs)?;
        sync_dir(dir)?;
        stats.bytes += snapshot.refs.len() as u64;
        stats.took = start.elapsed();
        Ok(stats)
    }
}
