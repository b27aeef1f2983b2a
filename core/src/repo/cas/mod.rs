//! Content-addressed storage: immutable blobs named by the BLAKE3 hash of
//! their bytes, kept by the host and read by the core when it needs them.
//!
//! - [`BlobSource`]: what a host offers: a blob's bytes by name. It may be
//!   asked at any time (not only while a store is opened), since the
//!   structures below load their parts lazily.
//! - [`Blobs`]: the core's handle on a source (or on none, for a
//!   knowledge base that lives in memory only): fetches a blob, checks it
//!   against its name, and counts what it read.
//! - [`Link`]: a child pointer of a persistent structure, either to a part
//!   in memory or to a stored blob not read yet, loaded once on first use.
//! - `sorted`: a persistent sorted map of byte strings on such links, the
//!   structure every persisted index is built on.
//!
//! A structure made of links shares unchanged parts between versions
//! (copy-on-write), names each part by its hash when sealed, and yields
//! only the parts not yet stored when exported.

pub mod sorted;

use std::cell::{Cell, OnceCell};
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

/// The name of a blob: the BLAKE3 hash of its bytes.
pub type Hash = [u8; 32];

pub fn hash_bytes(bytes: &[u8]) -> Hash {
    *blake3::hash(bytes).as_bytes()
}

/// A blob's name as every store shows it: lowercase hex digits, two per
/// byte (64 for a hash).
pub fn hex(h: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * h.len());
    for b in h {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// The host's store of blobs, as the core reads it.
pub trait BlobSource {
    /// The bytes of the blob named `name`; `Ok(None)` when the store has no
    /// such blob; `Err` with what went wrong when the store cannot be read.
    /// The core checks the bytes against the name, so a host may answer
    /// straight from its storage.
    fn blob(&self, name: &Hash) -> Result<Option<Vec<u8>>, String>;

    /// Told that the bytes `blob` gave for `name` do not hash to it (the
    /// read then fails with `StoreError::HashMismatch`), so that a host
    /// which did not check them itself can say its storage is at fault.
    fn damaged(&self, _name: &Hash) {}
}

/// Where and what: the offset in the bytes being decoded and the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub offset: usize,
    pub what: String,
}

/// Why stored data could not be read. Reading never changes anything, so
/// a failed read leaves the reader as it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// The refs record is truncated, corrupt or of another format.
    Refs(DecodeError),
    /// A blob that is needed is not in the store.
    MissingBlob { hash: Hash, needed_by: String },
    /// A blob's bytes do not hash to its name.
    HashMismatch { hash: Hash },
    /// A blob's bytes are not a valid encoding.
    CorruptBlob { hash: Hash, error: DecodeError },
    /// Every blob is well formed, but together they do not make a valid
    /// state.
    Inconsistent(String),
    /// The host could not read its store.
    Unavailable(String),
    /// `import_snapshots` was given no snapshot.
    NoSnapshot,
}

impl StoreError {
    /// Every kind's stable name, as hosts and the WIT interface report it.
    pub const KINDS: [&'static str; 6] = [
        "refs",
        "missing-blob",
        "hash-mismatch",
        "corrupt-blob",
        "inconsistent",
        "unavailable",
    ];

    /// This error's kind, one of [`StoreError::KINDS`].
    pub fn kind(&self) -> &'static str {
        match self {
            StoreError::Refs(_) => "refs",
            StoreError::MissingBlob { .. } => "missing-blob",
            StoreError::HashMismatch { .. } => "hash-mismatch",
            StoreError::CorruptBlob { .. } => "corrupt-blob",
            StoreError::Inconsistent(_) | StoreError::NoSnapshot => "inconsistent",
            StoreError::Unavailable(_) => "unavailable",
        }
    }

    /// The blob concerned, if one is.
    pub fn blob(&self) -> Option<Hash> {
        match self {
            StoreError::MissingBlob { hash, .. }
            | StoreError::HashMismatch { hash }
            | StoreError::CorruptBlob { hash, .. } => Some(*hash),
            _ => None,
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Refs(e) => write!(f, "refs record, byte {}: {}", e.offset, e.what),
            StoreError::MissingBlob { hash, needed_by } => {
                write!(f, "blob {} ({needed_by}) is missing", hex(hash))
            }
            StoreError::HashMismatch { hash } => write!(
                f,
                "blob {}: its bytes do not hash to its name (corrupt)",
                hex(hash)
            ),
            StoreError::CorruptBlob { hash, error } => write!(
                f,
                "blob {}, byte {}: {}",
                hex(hash),
                error.offset,
                error.what
            ),
            StoreError::Inconsistent(m) => write!(f, "inconsistent store: {m}"),
            StoreError::Unavailable(m) => write!(f, "the store cannot be read: {m}"),
            StoreError::NoSnapshot => write!(f, "no snapshot to import"),
        }
    }
}

impl std::error::Error for StoreError {}

struct BlobsInner {
    source: Option<Rc<dyn BlobSource>>,
    reads: Cell<u64>,
    bytes: Cell<u64>,
}

/// The core's handle on the host's blobs: cheap to clone, shared by every
/// structure that loads from the same store.
#[derive(Clone)]
pub struct Blobs(Rc<BlobsInner>);

impl fmt::Debug for Blobs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Blobs")
            .field("source", &self.0.source.is_some())
            .field("reads", &self.0.reads.get())
            .finish()
    }
}

impl Default for Blobs {
    fn default() -> Self {
        Blobs::none()
    }
}

impl Blobs {
    /// No store: everything lives in memory (a stored link cannot occur).
    pub fn none() -> Blobs {
        Blobs(Rc::new(BlobsInner {
            source: None,
            reads: Cell::new(0),
            bytes: Cell::new(0),
        }))
    }

    pub fn new(source: Rc<dyn BlobSource>) -> Blobs {
        Blobs(Rc::new(BlobsInner {
            source: Some(source),
            reads: Cell::new(0),
            bytes: Cell::new(0),
        }))
    }

    pub fn has_source(&self) -> bool {
        self.0.source.is_some()
    }

    /// Blobs read so far, and their bytes.
    pub fn reads(&self) -> (u64, u64) {
        (self.0.reads.get(), self.0.bytes.get())
    }

    /// The blob named `hash`, checked against its name. `needed_by` says
    /// what it is, for the error when it is missing.
    pub fn fetch(
        &self,
        hash: &Hash,
        needed_by: &dyn Fn() -> String,
    ) -> Result<Vec<u8>, StoreError> {
        let missing = || StoreError::MissingBlob {
            hash: *hash,
            needed_by: needed_by(),
        };
        let source = self.0.source.as_ref().ok_or_else(missing)?;
        let bytes = source
            .blob(hash)
            .map_err(StoreError::Unavailable)?
            .ok_or_else(missing)?;
        if hash_bytes(&bytes) != *hash {
            source.damaged(hash);
            return Err(StoreError::HashMismatch { hash: *hash });
        }
        self.0.reads.set(self.0.reads.get() + 1);
        self.0.bytes.set(self.0.bytes.get() + bytes.len() as u64);
        Ok(bytes)
    }
}

/// Blobs kept in memory: a source for tests and benchmarks, and for hosts
/// that hold the whole store (the browser, after reading its database).
#[derive(Default)]
pub struct MemoryBlobs {
    blobs: std::cell::RefCell<std::collections::HashMap<Hash, Vec<u8>>>,
}

impl MemoryBlobs {
    pub fn new() -> Rc<MemoryBlobs> {
        Rc::new(MemoryBlobs::default())
    }

    pub fn put(&self, name: Hash, bytes: Vec<u8>) {
        self.blobs.borrow_mut().insert(name, bytes);
    }

    pub fn extend(&self, blobs: impl IntoIterator<Item = (Hash, Vec<u8>)>) {
        self.blobs.borrow_mut().extend(blobs);
    }

    pub fn len(&self) -> usize {
        self.blobs.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.blobs.borrow().is_empty()
    }

    /// Changes a stored blob in place (for tests of damaged stores).
    pub fn with_blob(&self, name: &Hash, f: impl FnOnce(&mut Vec<u8>)) -> bool {
        match self.blobs.borrow_mut().get_mut(name) {
            Some(b) => {
                f(b);
                true
            }
            None => false,
        }
    }

    pub fn remove(&self, name: &Hash) -> Option<Vec<u8>> {
        self.blobs.borrow_mut().remove(name)
    }

    pub fn names(&self) -> Vec<Hash> {
        let mut v: Vec<Hash> = self.blobs.borrow().keys().copied().collect();
        v.sort_unstable();
        v
    }
}

impl BlobSource for MemoryBlobs {
    fn blob(&self, name: &Hash) -> Result<Option<Vec<u8>>, String> {
        Ok(self.blobs.borrow().get(name).cloned())
    }
}

/// A child pointer of a persistent structure: a part in memory, or a
/// stored blob that is loaded (and kept) the first time it is read.
pub(crate) enum Link<T> {
    Mem(Arc<T>),
    Stored(Hash, OnceCell<Arc<T>>),
}

impl<T> Clone for Link<T> {
    fn clone(&self) -> Self {
        match self {
            Link::Mem(t) => Link::Mem(t.clone()),
            Link::Stored(h, cell) => Link::Stored(*h, cell.clone()),
        }
    }
}

impl<T> Link<T> {
    pub(crate) fn stored(hash: Hash) -> Self {
        Link::Stored(hash, OnceCell::new())
    }

    /// The part, if it is in memory (made here, or loaded already).
    pub(crate) fn loaded(&self) -> Option<&Arc<T>> {
        match self {
            Link::Mem(t) => Some(t),
            Link::Stored(_, cell) => cell.get(),
        }
    }

    /// The name of a stored part (`None` for one made in memory, whose
    /// hash, once sealed, the part itself keeps).
    pub(crate) fn stored_hash(&self) -> Option<Hash> {
        match self {
            Link::Mem(_) => None,
            Link::Stored(h, _) => Some(*h),
        }
    }

    /// The part, loading it with `load` the first time.
    pub(crate) fn get(
        &self,
        load: impl FnOnce(&Hash) -> Result<T, StoreError>,
    ) -> Result<&Arc<T>, StoreError> {
        match self {
            Link::Mem(t) => Ok(t),
            Link::Stored(h, cell) => {
                if cell.get().is_none() {
                    let t = Arc::new(load(h)?);
                    // Cannot be set meanwhile: loading does not reenter
                    // this link.
                    let _ = cell.set(t);
                }
                cell.get()
                    .ok_or_else(|| StoreError::Inconsistent("a part failed to load".into()))
            }
        }
    }

    /// The part, to be changed: loaded first if needed; the link then
    /// points at it in memory (the caller changes it with `Arc::make_mut`).
    pub(crate) fn get_mut(
        &mut self,
        load: impl FnOnce(&Hash) -> Result<T, StoreError>,
    ) -> Result<&mut Arc<T>, StoreError> {
        if let Link::Stored(h, cell) = self {
            let t = match cell.take() {
                Some(t) => t,
                None => Arc::new(load(h)?),
            };
            *self = Link::Mem(t);
        }
        match self {
            Link::Mem(t) => Ok(t),
            Link::Stored(..) => Err(StoreError::Inconsistent("a part failed to load".into())),
        }
    }
}
