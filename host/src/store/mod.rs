//! The knowledge store: one SQLite file holding the knowledge base's blobs
//! and its refs record, shared safely by every `arbores` process that opens
//! it.
//!
//! ```text
//! blobs(hash BLOB PRIMARY KEY, data BLOB)   content-addressed, never changed
//! refs(name TEXT PRIMARY KEY, data BLOB)    one row, "head": the refs record
//! ```
//!
//! A commit writes its new blobs and replaces the refs record in one SQLite
//! transaction, taken with `BEGIN IMMEDIATE` (the write lock first), and
//! only if the refs record is still the one the writer started from
//! (compare-and-swap): a writer whose base moved is told so, with the new
//! record, and nothing is written. The file is in WAL mode with
//! `synchronous=FULL`, so a commit is durable when `commit` returns, and
//! readers never block the writer. Several processes wait for each other's
//! write lock up to `BUSY_TIMEOUT`; the few moments where SQLite answers
//! "busy" without waiting (`retry_busy`) are waited out the same way.
//!
//! Blob reads share one read transaction (`READ_SPAN`): a search reads a
//! hundred or more blobs, and reading each in a transaction of its own took
//! two file locks and a check of the write-ahead log per blob. Blobs never
//! change, so an older snapshot only lacks blobs committed after it began,
//! which nothing this process holds names (the refs record is read, and
//! commits are made, outside that transaction); a blob missing from it is
//! looked up again in a fresh one. The transaction ends at every other use
//! of the file, after `READ_SPAN`, and when the session says an evaluation
//! ended (`end_reads`), so it never keeps other writers' log from being
//! folded back for long.
//!
//! The file is an SQLite database whose `application_id` says it is an
//! arbores store and whose `user_version` is the layout above; any other
//! file is refused, never written into. A store directory of the first
//! format (one file per blob) is converted into a store file once, the
//! first time a writer opens it (`convert`); a read-only session reads it
//! as it is.

mod convert;
mod legacy;
pub mod repair;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use arbores_core::{hex, Hash, ImportError, Snapshot};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior};

pub use legacy::DirStore;

/// `PRAGMA application_id` of a store file: "ARBS".
const APPLICATION_ID: i32 = 0x4152_4253;
/// `PRAGMA user_version`: the layout of the tables.
const LAYOUT: i32 = 1;
/// How long a writer waits for another's write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
const HEAD: &str = "head";
/// The page size of a new store file, in bytes.
const PAGE_SIZE: i64 = 16384;
/// The longest a read transaction is kept open (see the module's doc).
const READ_SPAN: Duration = Duration::from_millis(100);

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS blobs (hash BLOB PRIMARY KEY NOT NULL, data BLOB NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS refs (name TEXT PRIMARY KEY NOT NULL, data BLOB NOT NULL) WITHOUT ROWID;
";

/// What went wrong with a store, and how a caller should take it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreError {
    pub kind: StoreErrorKind,
    /// Says what and where: the file, the blob, the SQLite message.
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreErrorKind {
    /// Reading or writing the file failed (permissions, disk full, ...).
    Io,
    /// Not an arbores store, or one of a format this build does not know.
    Foreign,
    /// The store is damaged: SQLite found a malformed page, a blob does not
    /// match its name, or the refs record is missing or fails its check.
    Damaged,
    /// Another writer held the write lock for longer than the busy timeout.
    Busy,
}

impl StoreError {
    pub fn io(path: &Path, e: std::io::Error) -> StoreError {
        StoreError {
            kind: StoreErrorKind::Io,
            message: format!("{}: {e}", path.display()),
        }
    }

    pub fn foreign(message: String) -> StoreError {
        StoreError {
            kind: StoreErrorKind::Foreign,
            message,
        }
    }

    pub fn damaged(message: String) -> StoreError {
        StoreError {
            kind: StoreErrorKind::Damaged,
            message,
        }
    }

    fn sqlite(path: &Path, e: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode;
        let kind = match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseCorrupt) => StoreErrorKind::Damaged,
            Some(ErrorCode::NotADatabase) => StoreErrorKind::Foreign,
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreErrorKind::Busy,
            _ => StoreErrorKind::Io,
        };
        let what = match kind {
            StoreErrorKind::Damaged => " (the store file is damaged; `arbores fsck` tells more)",
            StoreErrorKind::Foreign => " (not an arbores store)",
            StoreErrorKind::Busy => " (another process kept the store locked)",
            StoreErrorKind::Io => "",
        };
        StoreError {
            kind,
            message: format!("{}: {e}{what}", path.display()),
        }
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Whether a store is opened to be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Never writes: no file is created, a directory store is not
    /// converted, nothing is changed.
    ReadOnly,
    ReadWrite,
}

/// The outcome of a commit.
#[derive(Debug)]
pub enum Commit {
    /// The blobs and the new refs record are durable.
    Done(SaveStats),
    /// The refs record is no longer the writer's base: another writer
    /// committed meanwhile. Nothing was written. Holds the current record.
    Moved(Option<Vec<u8>>),
}

/// What a commit wrote (the last one is shown by the REPL's `,settings`).
#[derive(Default, Debug, Clone)]
pub struct SaveStats {
    pub written: usize,
    pub skipped: usize,
    pub bytes: u64,
    pub took: Duration,
}

enum Backing {
    /// Nothing stored yet: the first commit creates the file.
    Empty,
    File(Connection),
    /// A directory of the first format, opened read-only.
    Dir(DirStore),
    /// Closed by `Store::close` at the end of the process.
    Closed,
}

struct Inner {
    path: PathBuf,
    access: Access,
    backing: Mutex<Backing>,
    /// The first failed read since `take_trouble`: the engine turns a
    /// failed read into an error of the evaluation, and this says that the
    /// store was at fault, and where.
    trouble: Mutex<Option<StoreError>>,
    /// What the last commit through this store wrote.
    last_commit: Mutex<Option<SaveStats>>,
    /// When the read transaction blob reads share began, if one is open.
    /// Changed only under `backing`'s lock.
    reading: Mutex<Option<Instant>>,
}

/// A knowledge store. Cheap to clone: clones share one connection, so the
/// engine's blob requests and the session's commits go through the same.
#[derive(Clone)]
pub struct Store(Arc<Inner>);

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.0.path).finish()
    }
}

fn configure(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let err = |e| StoreError::sqlite(path, e);
    conn.busy_timeout(BUSY_TIMEOUT).map_err(err)?;
    // Catches more damaged pages when they are read, not only in fsck.
    conn.pragma_update(None, "cell_size_check", true)
        .map_err(err)?;
    conn.set_prepared_statement_cache_capacity(16);
    Ok(())
}

fn is_busy(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode;
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Runs `attempt` again while SQLite answers "busy", up to `BUSY_TIMEOUT`
/// from the first attempt. The busy handler covers waiting for another
/// writer's lock, but SQLite returns `SQLITE_BUSY` at once in a few short
/// moments (its "WAL mode" page, "Sometimes queries return SQLITE_BUSY"):
/// while the last connection to close cleans up the WAL, while one recovers
/// the WAL after a crash, and around a journal mode change. `attempt` must
/// be a whole read or a whole transaction, so that running it again is
/// harmless.
fn retry_busy<T>(mut attempt: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match attempt() {
            Err(e) if is_busy(&e) && start.elapsed() < BUSY_TIMEOUT => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            result => return result,
        }
    }
}

/// What identifies a store file, read in one statement so that the answers
/// come from one snapshot (read one by one, a file another process is
/// creating in place could show its tables but not yet its id).
struct Header {
    application_id: i32,
    layout: i32,
    tables: i64,
}

fn read_header(conn: &Connection) -> rusqlite::Result<Header> {
    retry_busy(|| {
        conn.query_row(
            "SELECT (SELECT application_id FROM pragma_application_id), \
                    (SELECT user_version FROM pragma_user_version), \
                    (SELECT count(*) FROM sqlite_master)",
            [],
            |r| {
                Ok(Header {
                    application_id: r.get(0)?,
                    layout: r.get(1)?,
                    tables: r.get(2)?,
                })
            },
        )
    })
}

/// Opens an existing store file and checks that it is one; `None` for an
/// empty database (a store file another writer is creating this instant,
/// or an empty file): nothing is stored there yet.
fn open_file(path: &Path, access: Access) -> Result<Option<Connection>, StoreError> {
    // A read-only session still opens the file for writing when it may (it
    // never writes to it): SQLite reads a WAL file through the `-wal` and
    // `-shm` files beside it, and only a connection that may write removes
    // them when it closes, so the directory is left as it was found. A file
    // this user cannot write is opened read-only.
    let open = |flags: OpenFlags| {
        Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .map_err(|e| StoreError::sqlite(path, e))
    };
    let conn = match access {
        Access::ReadWrite => open(OpenFlags::SQLITE_OPEN_READ_WRITE)?,
        Access::ReadOnly => match open(OpenFlags::SQLITE_OPEN_READ_WRITE) {
            Ok(conn) if !conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(true) => conn,
            _ => open(OpenFlags::SQLITE_OPEN_READ_ONLY)?,
        },
    };
    configure(&conn, path)?;
    let Header {
        application_id,
        layout,
        tables,
    } = read_header(&conn).map_err(|e| StoreError::sqlite(path, e))?;
    if application_id == 0 && tables == 0 {
        return Ok(None);
    }
    if application_id != APPLICATION_ID {
        return Err(StoreError::foreign(format!(
            "{}: not an arbores store (an SQLite database of another application)",
            path.display()
        )));
    }
    if layout != LAYOUT {
        return Err(StoreError::foreign(format!(
            "{}: a store of layout {layout}, but this arbores reads layout {LAYOUT} \
             (written by a newer arbores?)",
            path.display()
        )));
    }
    if access == Access::ReadWrite {
        set_durability(&conn, path)?;
    }
    Ok(Some(conn))
}

fn set_durability(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let err = |e| StoreError::sqlite(path, e);
    // Switching to WAL takes an exclusive lock and may answer "busy"
    // without waiting; a store file made by `create_file` is in WAL mode
    // already, so this only reads the mode.
    let mode: String =
        retry_busy(|| conn.pragma_update_and_check(None, "journal_mode", "wal", |r| r.get(0)))
            .map_err(err)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError {
            kind: StoreErrorKind::Io,
            message: format!(
                "{}: cannot use SQLite's WAL mode here (journal mode stays {mode})",
                path.display()
            ),
        });
    }
    conn.pragma_update(None, "synchronous", "FULL").map_err(err)
}

/// Begins an immediate transaction on `conn`, or refuses, as busy, when
/// the refs record it reads is no longer `expected`: another writer
/// committed while the caller was reading (`while_`); `undone` says what
/// the caller did not do.
fn begin_unmoved<'c>(
    conn: &'c mut Connection,
    path: &Path,
    expected: Option<&[u8]>,
    while_: &str,
    undone: &str,
) -> Result<rusqlite::Transaction<'c>, StoreError> {
    let err = |e| StoreError::sqlite(path, e);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(err)?;
    let current: Option<Vec<u8>> = tx
        .query_row("SELECT data FROM refs WHERE name = ?1", [HEAD], |r| {
            r.get(0)
        })
        .optional()
        .map_err(err)?;
    if current.as_deref() == expected {
        return Ok(tx);
    }
    Err(StoreError {
        kind: StoreErrorKind::Busy,
        message: format!(
            "{}: another writer committed while {while_}; {undone}",
            path.display()
        ),
    })
}

/// Makes `conn`'s empty database a store: WAL mode, the tables and the
/// ids, in one transaction (a database that already has them is left as it
/// is: another process made it a store first).
fn initialize(conn: &mut Connection) -> rusqlite::Result<()> {
    // Set before anything is written (a database that has pages keeps its
    // size). Blobs are keys of a WITHOUT ROWID table, whose rows spill to
    // overflow pages above about a quarter of a page: with 4 KiB pages the
    // many blobs of 1-4 KiB (index nodes) left a 100,000-node store at 2.0x
    // its blob bytes; 8 KiB pages made it 1.34x, until the persisted
    // semantic and lexical indexes filled most of their 4 KiB blobs (then
    // 2.4x); 16 KiB pages keep every blob on its page: 1.29x
    // (docs/PERFORMANCE.md).
    conn.pragma_update(None, "page_size", PAGE_SIZE)?;
    retry_busy(|| conn.pragma_update_and_check(None, "journal_mode", "wal", |_| Ok(())))?;
    retry_busy(|| {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let header = read_header(&tx)?;
        if header.application_id == 0 && header.tables == 0 {
            tx.execute_batch(SCHEMA)?;
            tx.pragma_update(None, "application_id", APPLICATION_ID)?;
            tx.pragma_update(None, "user_version", LAYOUT)?;
        }
        tx.commit()
    })
}

/// Creates the store file, or opens it if a concurrent writer was first.
///
/// The file is made a store in place, under SQLite's write lock
/// (`initialize`), so of several writers racing the first makes the tables
/// and the others find them. Until then the file is an empty database,
/// which every process takes for an empty store; a writer killed before
/// it made the tables leaves only that.
fn create_file(path: &Path) -> Result<Connection, StoreError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| StoreError::io(parent, e))?;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn =
        Connection::open_with_flags(path, flags).map_err(|e| StoreError::sqlite(path, e))?;
    configure(&conn, path)?;
    initialize(&mut conn).map_err(|e| StoreError::sqlite(path, e))?;
    drop(conn);
    open_file(path, Access::ReadWrite)?.ok_or_else(|| {
        StoreError::foreign(format!(
            "{}: the store file was created but holds no tables",
            path.display()
        ))
    })
}

impl Store {
    /// Opens the store at `path`, which need not exist yet. A directory
    /// store of the first format is converted into a store file at the same
    /// path when opened for writing (the directory is kept beside it).
    pub fn open(path: &Path, access: Access) -> Result<Store, StoreError> {
        convert::finish_interrupted(path)?;
        let backing = match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Backing::Empty,
            Err(e) => return Err(StoreError::io(path, e)),
            Ok(m) if m.is_dir() => match (DirStore::open(path)?, access) {
                (None, _) => {
                    return Err(StoreError::foreign(format!(
                        "{}: a directory; the knowledge store is a file (give a file's path)",
                        path.display()
                    )))
                }
                (Some(dir), Access::ReadOnly) => Backing::Dir(dir),
                (Some(dir), Access::ReadWrite) => {
                    convert::convert(&dir, path)?;
                    match open_file(path, access)? {
                        Some(conn) => Backing::File(conn),
                        None => Backing::Empty,
                    }
                }
            },
            Ok(_) => match open_file(path, access)? {
                Some(conn) => Backing::File(conn),
                None => Backing::Empty,
            },
        };
        Ok(Store(Arc::new(Inner {
            path: path.to_path_buf(),
            access,
            backing: Mutex::new(backing),
            trouble: Mutex::new(None),
            last_commit: Mutex::new(None),
            reading: Mutex::new(None),
        })))
    }

    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// Closes the file now, even while clones of this store remain (the
    /// native engine, which holds one, is left to the operating system
    /// when the process ends): every commit is already in the file, and
    /// closing lets SQLite fold its write-ahead log back and remove it.
    /// Anything asked of the store afterwards is an error.
    pub fn close(&self) {
        let old = std::mem::replace(&mut *self.lock(), Backing::Closed);
        drop(old);
    }

    fn closed(&self) -> StoreError {
        StoreError {
            kind: StoreErrorKind::Io,
            message: format!("{}: the store is closed", self.0.path.display()),
        }
    }

    /// The file, with no read transaction left open: every use but a blob
    /// read takes it so (a commit's or `fsck`'s own transaction cannot start
    /// inside another, and the refs record must be read fresh).
    fn lock(&self) -> MutexGuard<'_, Backing> {
        let backing = self.lock_for_blobs();
        self.end_read(&backing);
        backing
    }

    /// The file as it is, a blob reads' transaction perhaps open.
    fn lock_for_blobs(&self) -> MutexGuard<'_, Backing> {
        self.0.backing.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn reading(&self) -> MutexGuard<'_, Option<Instant>> {
        self.0.reading.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ends the blob reads' transaction, if one is open.
    fn end_read(&self, backing: &Backing) {
        if self.reading().take().is_none() {
            return;
        }
        if let Backing::File(conn) = backing {
            if !conn.is_autocommit() {
                // A read transaction wrote nothing: ending it cannot fail
                // in a way that loses anything, and a connection that
                // somehow stays in it fails its next write loudly.
                let _ = conn.execute_batch("COMMIT");
            }
        }
    }

    /// Ends the blob reads' transaction: called when an evaluation ends,
    /// so that an idle session holds no snapshot of the file.
    pub fn end_reads(&self) {
        drop(self.lock());
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        StoreError::sqlite(&self.0.path, e)
    }

    /// The refs record naming the stored state; `None` for an empty store.
    /// A store that holds blobs but no refs record is damaged: that is an
    /// error, never an empty store (a commit would start a new history and
    /// leave the old one unreachable).
    pub fn head(&self) -> Result<Option<Vec<u8>>, StoreError> {
        let mut backing = self.lock();
        self.find_file(&mut backing)?;
        match &*backing {
            Backing::Empty => Ok(None),
            Backing::Closed => Err(self.closed()),
            Backing::Dir(dir) => {
                let refs = dir.refs()?;
                if refs.is_none() && !dir.blob_names()?.is_empty() {
                    return Err(self.headless(dir.blob_names()?.len() as u64));
                }
                Ok(refs)
            }
            Backing::File(conn) => {
                // Both reads in one transaction, so they see one state of
                // the file: read apart, a writer's first commit (blobs and
                // refs record together) landing between them looked like
                // blobs with no record.
                let (refs, blobs) = retry_busy(|| {
                    let tx = conn.unchecked_transaction()?;
                    let refs: Option<Vec<u8>> = tx
                        .prepare_cached("SELECT data FROM refs WHERE name = ?1")
                        .and_then(|mut s| s.query_row([HEAD], |r| r.get(0)).optional())?;
                    let blobs: i64 = match refs {
                        Some(_) => 0,
                        None => tx.query_row("SELECT count(*) FROM blobs", [], |r| r.get(0))?,
                    };
                    Ok((refs, blobs))
                })
                .map_err(|e| self.err(e))?;
                if refs.is_none() && blobs > 0 {
                    return Err(self.headless(blobs as u64));
                }
                Ok(refs)
            }
        }
    }

    /// A store opened before its file existed takes the file another
    /// writer has made since: without this, a long-lived session that
    /// started on no file would never see what others store.
    fn find_file(&self, backing: &mut Backing) -> Result<(), StoreError> {
        if !matches!(backing, Backing::Empty) {
            return Ok(());
        }
        match std::fs::metadata(&self.0.path) {
            Ok(m) if m.is_file() => {
                if let Some(conn) = open_file(&self.0.path, self.0.access)? {
                    *backing = Backing::File(conn);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn headless(&self, blobs: u64) -> StoreError {
        StoreError::damaged(format!(
            "{}: the store holds {blobs} blobs but no refs record, so nothing names its \
             current version; `arbores fsck --repair` rebuilds the record from the history",
            self.0.path.display()
        ))
    }

    /// What the last commit made through this store wrote, if any.
    pub fn last_commit(&self) -> Option<SaveStats> {
        self.0
            .last_commit
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// What made a read fail since the last call (the first such failure),
    /// and forgets it.
    pub fn take_trouble(&self) -> Option<StoreError> {
        self.0
            .trouble
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    fn note_trouble(&self, e: &StoreError) {
        let mut trouble = self.0.trouble.lock().unwrap_or_else(|p| p.into_inner());
        trouble.get_or_insert_with(|| e.clone());
    }

    /// A blob the engine needs: its bytes, `None` if the store has none
    /// such. A missing blob, a blob whose bytes do not match its name and
    /// a failed read are noted (`take_trouble`) with the place at fault.
    /// For an engine that checks the bytes itself and says when they do
    /// not match (`served_blob` and `mismatch`), the check here is left out.
    pub fn needed_blob(&self, name: &Hash) -> Result<Option<Vec<u8>>, StoreError> {
        let found = self.served_blob(name);
        if let Ok(Some(bytes)) = &found {
            if arbores_core::repo::cas::hash_bytes(bytes) != *name {
                self.mismatch(name);
            }
        }
        found
    }

    /// A blob the engine needs, unchecked: a missing blob and a failed
    /// read are noted (`take_trouble`).
    pub fn served_blob(&self, name: &Hash) -> Result<Option<Vec<u8>>, StoreError> {
        let found = self.blob(name);
        let trouble = match &found {
            Err(e) => Some(e.clone()),
            Ok(None) => Some(StoreError::damaged(format!(
                "{}: blob {} is missing (the store is damaged; `arbores fsck` tells more)",
                self.blob_place(name),
                hex(name)
            ))),
            Ok(Some(_)) => None,
        };
        if let Some(e) = trouble {
            self.note_trouble(&e);
        }
        found
    }

    /// Notes that the bytes served for `name` do not match it.
    pub fn mismatch(&self, name: &Hash) {
        self.note_trouble(&StoreError::damaged(format!(
            "{}: the bytes do not match the blob's name (the store is damaged; \
             `arbores fsck` tells more)",
            self.blob_place(name)
        )));
    }

    /// A blob's bytes as stored (the caller checks them against the name);
    /// `None` if the store has no such blob.
    pub fn blob(&self, name: &Hash) -> Result<Option<Vec<u8>>, StoreError> {
        let mut backing = self.lock_for_blobs();
        if self
            .reading()
            .is_some_and(|since| since.elapsed() > READ_SPAN)
        {
            self.end_read(&backing);
        }
        self.find_file(&mut backing)?;
        match &*backing {
            Backing::Empty => Ok(None),
            Backing::Closed => Err(self.closed()),
            Backing::Dir(dir) => dir.blob(name),
            Backing::File(conn) => {
                let select = || {
                    retry_busy(|| {
                        conn.prepare_cached("SELECT data FROM blobs WHERE hash = ?1")
                            .and_then(|mut s| s.query_row([&name[..]], |r| r.get(0)).optional())
                    })
                };
                let mut began = false;
                if self.reading().is_none() && conn.is_autocommit() {
                    // Deferred: the snapshot is taken by the first read.
                    if conn.execute_batch("BEGIN").is_ok() {
                        *self.reading() = Some(Instant::now());
                        began = true;
                    }
                }
                let found = select();
                match found {
                    // Missing from a snapshot taken before this read: ask
                    // a fresh one.
                    Ok(None) if !began && self.reading().is_some() => {
                        self.end_read(&backing);
                        select().map_err(|e| self.err(e))
                    }
                    Ok(found) => Ok(found),
                    Err(e) => {
                        self.end_read(&backing);
                        Err(self.err(e))
                    }
                }
            }
        }
    }

    /// Where a blob lives, for messages.
    pub fn blob_place(&self, name: &Hash) -> String {
        match &*self.lock() {
            Backing::Dir(dir) => dir.blob_path(name).display().to_string(),
            _ => format!("{}: blob {}", self.0.path.display(), hex(name)),
        }
    }

    /// Writes `snapshot`'s blobs and makes its refs record the head, if the
    /// head is still `base` (`None`: the store is empty). Durable when it
    /// returns `Done`; on `Moved` or an error nothing was written.
    pub fn commit(&self, base: Option<&[u8]>, snapshot: &Snapshot) -> Result<Commit, StoreError> {
        if self.0.access == Access::ReadOnly {
            return Err(StoreError {
                kind: StoreErrorKind::Io,
                message: format!("{}: opened read-only", self.0.path.display()),
            });
        }
        let start = Instant::now();
        let mut backing = self.lock();
        match &*backing {
            Backing::Empty => *backing = Backing::File(create_file(&self.0.path)?),
            Backing::Closed => return Err(self.closed()),
            _ => {}
        }
        let Backing::File(conn) = &mut *backing else {
            return Err(StoreError::foreign(format!(
                "{}: a directory store is only read; open it for writing to convert it",
                self.0.path.display()
            )));
        };
        let outcome = retry_busy(|| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let head: Option<Vec<u8>> = tx
                .prepare_cached("SELECT data FROM refs WHERE name = ?1")
                .and_then(|mut s| s.query_row([HEAD], |r| r.get(0)).optional())?;
            if head.as_deref() != base {
                return Ok(Commit::Moved(head));
            }
            let mut stats = SaveStats::default();
            {
                let mut insert =
                    tx.prepare_cached("INSERT OR IGNORE INTO blobs (hash, data) VALUES (?1, ?2)")?;
                for (name, bytes) in &snapshot.blobs {
                    if insert.execute((&name[..], bytes))? == 1 {
                        stats.written += 1;
                        stats.bytes += bytes.len() as u64;
                    } else {
                        stats.skipped += 1;
                    }
                }
                tx.prepare_cached("INSERT OR REPLACE INTO refs (name, data) VALUES (?1, ?2)")
                    .and_then(|mut s| s.execute((HEAD, &snapshot.refs)))?;
            }
            tx.commit()?;
            stats.bytes += snapshot.refs.len() as u64;
            Ok(Commit::Done(stats))
        });
        match outcome.map_err(|e| StoreError::sqlite(&self.0.path, e))? {
            Commit::Done(mut stats) => {
                stats.took = start.elapsed();
                *self.0.last_commit.lock().unwrap_or_else(|p| p.into_inner()) = Some(stats.clone());
                Ok(Commit::Done(stats))
            }
            moved => Ok(moved),
        }
    }

    /// What SQLite's own check (`PRAGMA integrity_check`) finds wrong with
    /// the file; empty when nothing.
    pub fn integrity_problems(&self) -> Result<Vec<String>, StoreError> {
        let backing = self.lock();
        let Backing::File(conn) = &*backing else {
            return Ok(Vec::new());
        };
        let rows: Vec<String> = retry_busy(|| {
            conn.prepare("PRAGMA integrity_check")?
                .query_map([], |r| r.get::<_, String>(0))?
                .collect()
        })
        .map_err(|e| self.err(e))?;
        Ok(rows
            .into_iter()
            .filter(|r| r != "ok")
            .map(|r| format!("{}: {r}", self.0.path.display()))
            .collect())
    }

    /// Calls `f` with every stored blob, in name order.
    pub fn each_blob(&self, mut f: impl FnMut(&Hash, &[u8])) -> Result<(), StoreError> {
        let backing = self.lock();
        match &*backing {
            Backing::Empty => Ok(()),
            Backing::Closed => Err(self.closed()),
            Backing::Dir(dir) => {
                for name in dir.blob_names()? {
                    if let Some(bytes) = dir.blob(&name)? {
                        f(&name, &bytes);
                    }
                }
                Ok(())
            }
            Backing::File(conn) => {
                let mut stmt = conn
                    .prepare("SELECT hash, data FROM blobs ORDER BY hash")
                    .map_err(|e| self.err(e))?;
                let mut rows = stmt.query([]).map_err(|e| self.err(e))?;
                while let Some(row) = rows.next().map_err(|e| self.err(e))? {
                    let name: Vec<u8> = row.get(0).map_err(|e| self.err(e))?;
                    let data: Vec<u8> = row.get(1).map_err(|e| self.err(e))?;
                    match <Hash>::try_from(name.as_slice()) {
                        Ok(name) => f(&name, &data),
                        Err(_) => f(&[0; 32], b"a blob name that is not 32 bytes"),
                    }
                }
                Ok(())
            }
        }
    }

    /// Removes every blob not in `keep`, in one transaction, if the refs
    /// record is still `head` (else nothing is removed: another writer
    /// committed meanwhile). Returns how many blobs, and their bytes, were
    /// (with `dry_run`: would be) removed. Space is given back to the file
    /// system by a `VACUUM` afterwards, when no other process holds the
    /// file open.
    pub fn remove_blobs_except(
        &self,
        head: &[u8],
        keep: &std::collections::HashSet<Hash>,
        dry_run: bool,
    ) -> Result<(u64, u64), StoreError> {
        let mut backing = self.lock();
        let Backing::File(conn) = &mut *backing else {
            return Err(StoreError::foreign(format!(
                "{}: only a store file is collected (open it for writing to convert it)",
                self.0.path.display()
            )));
        };
        let path = self.0.path.clone();
        let err = |e| StoreError::sqlite(&path, e);
        let tx = begin_unmoved(
            conn,
            &path,
            Some(head),
            "the history was read",
            "nothing was removed (run gc again)",
        )?;
        let mut doomed: Vec<(Vec<u8>, u64)> = Vec::new();
        {
            let mut stmt = tx
                .prepare("SELECT hash, length(data) FROM blobs")
                .map_err(err)?;
            let mut rows = stmt.query([]).map_err(err)?;
            while let Some(row) = rows.next().map_err(err)? {
                let name: Vec<u8> = row.get(0).map_err(err)?;
                let len: i64 = row.get(1).map_err(err)?;
                let kept = <Hash>::try_from(name.as_slice()).is_ok_and(|h| keep.contains(&h));
                if !kept {
                    doomed.push((name, len as u64));
                }
            }
        }
        let bytes = doomed.iter().map(|(_, n)| n).sum();
        if !dry_run {
            let mut delete = tx
                .prepare("DELETE FROM blobs WHERE hash = ?1")
                .map_err(err)?;
            for (name, _) in &doomed {
                delete.execute([name]).map_err(err)?;
            }
            drop(delete);
            tx.commit().map_err(err)?;
            // Only shrinks the file; a reader elsewhere makes it wait (and
            // the space is reused by later commits anyway).
            let _ = conn.execute_batch("VACUUM");
        }
        Ok((doomed.len() as u64, bytes))
    }

    /// What a failed load means, naming the record or blob at fault.
    pub fn explain(&self, error: &LoadError) -> String {
        match (&error.blob, error.kind.as_str()) {
            (_, "refs") => format!(
                "{}: the refs record: {}",
                self.0.path.display(),
                error.message
            ),
            (Some(blob), _) => {
                let place = self.blob_place(blob);
                // The core names the blob too; say it once.
                let message = error
                    .message
                    .strip_prefix(&format!("blob {}", hex(blob)))
                    .map(|rest| rest.trim_start_matches([',', ':', ' ']).to_string())
                    .unwrap_or_else(|| error.message.clone());
                format!("{place}: {message}")
            }
            (None, _) => format!("{}: {}", self.0.path.display(), error.message),
        }
    }
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

/// The store as the engine's knowledge store: blobs by name, the head, and
/// compare-and-swap commits (see `arbores_core::KnowledgeStore`).
pub struct EngineStore(pub Store);

/// The native engine checks every blob against its name
/// (`arbores_core::BlobSource`) and says when one does not match, so the
/// bytes are served as stored: hashing them here too was a tenth of a
/// search's time.
impl arbores_core::BlobSource for EngineStore {
    fn blob(&self, name: &Hash) -> Result<Option<Vec<u8>>, String> {
        self.0.served_blob(name).map_err(|e| e.message)
    }

    fn damaged(&self, name: &Hash) {
        self.0.mismatch(name);
    }
}

impl arbores_core::KnowledgeStore for EngineStore {
    fn head(&self) -> Result<Option<Vec<u8>>, String> {
        self.0.head().map_err(|e| e.message)
    }

    fn commit(
        &self,
        base: Option<&[u8]>,
        snapshot: &Snapshot,
    ) -> Result<arbores_core::CommitReply, String> {
        match self.0.commit(base, snapshot) {
            Ok(Commit::Done(_)) => Ok(arbores_core::CommitReply::Committed),
            Ok(Commit::Moved(head)) => Ok(arbores_core::CommitReply::Moved(head)),
            Err(e) => Err(e.message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(text: &str) -> (Hash, Vec<u8>) {
        let bytes = text.as_bytes().to_vec();
        (arbores_core::repo::cas::hash_bytes(&bytes), bytes)
    }

    fn commit(store: &Store, base: Option<&[u8]>, blobs: &[(Hash, Vec<u8>)], refs: &[u8]) {
        let snapshot = Snapshot {
            blobs: blobs.to_vec(),
            refs: refs.to_vec(),
        };
        match store.commit(base, &snapshot) {
            Ok(Commit::Done(_)) => {}
            other => panic!("{other:?}"),
        }
    }

    /// Blob reads share one read transaction, which neither hides what
    /// another writer commits meanwhile (a blob, the refs record) nor keeps
    /// the reader from committing, and which `end_reads` ends.
    #[test]
    fn blob_reads_share_a_transaction_that_hides_nothing() {
        let dir = std::env::temp_dir().join(format!("arbores-store-reads-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("store.arbores");
        let writer = Store::open(&path, Access::ReadWrite).unwrap();
        let reader = Store::open(&path, Access::ReadWrite).unwrap();
        let (one, two, three) = (blob("one"), blob("two"), blob("three"));
        commit(&writer, None, std::slice::from_ref(&one), b"r1");
        assert_eq!(reader.blob(&one.0).unwrap(), Some(one.1.clone()));
        assert!(
            reader.reading().is_some(),
            "the read left its transaction open"
        );
        commit(&writer, Some(b"r1"), std::slice::from_ref(&two), b"r2");
        assert_eq!(reader.blob(&two.0).unwrap(), Some(two.1.clone()));
        assert_eq!(reader.blob(&[7; 32]).unwrap(), None);
        assert_eq!(reader.head().unwrap(), Some(b"r2".to_vec()));
        assert!(
            reader.reading().is_none(),
            "reading the refs record ends it"
        );
        assert_eq!(reader.blob(&one.0).unwrap(), Some(one.1.clone()));
        commit(&reader, Some(b"r2"), std::slice::from_ref(&three), b"r3");
        assert_eq!(writer.blob(&three.0).unwrap(), Some(three.1.clone()));
        writer.end_reads();
        assert!(writer.reading().is_none());
        match &*writer.lock_for_blobs() {
            Backing::File(conn) => assert!(conn.is_autocommit()),
            _ => panic!("no file"),
        }
        drop((writer, reader));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
