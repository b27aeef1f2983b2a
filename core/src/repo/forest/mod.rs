//! The persistent version forest: every version of the knowledge base, as
//! immutable maps `NodeId → Node` that share unchanged subtrees, with the
//! deltas between them, the reflog of moves of the current version, and
//! their persistence as content-addressed blobs.
//!
//! - A version is the root of a hash array mapped trie (`hamt`). A commit
//!   copies only the branches on the paths to the nodes it changes.
//! - Versions form a tree: any version can get children. Each records its
//!   parent, the operations that made it from the parent (forward) and the
//!   operations that undo them (reverse), a timestamp and a description.
//! - Changes are made through a [`Pending`] transaction, which sees its own
//!   changes and becomes exactly one version when committed, or nothing when
//!   dropped.
//! - [`VersionForest::switch`] and commits return the node-level difference
//!   between the old and the new current version, which is what the indexes
//!   of the current version need to follow.
//! - Persistence (`persist`): the state is a set of `hash → bytes` blobs plus
//!   a small refs record; exports after the first carry only what is new.
//!   A forest opened from a store reads nothing but its refs record and
//!   newest reflog entry: versions, their tries, deltas and persisted
//!   indexes are read from the host's blob source when first used.

pub(crate) mod codec;
mod hamt;
mod legacy;
mod persist;
pub mod recover;
mod summary;
#[cfg(test)]
mod tests;

use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::repo::cas::sorted::SortedMap;
use crate::repo::cas::{Blobs, Link, StoreError};
use crate::repo::node::{is_reserved, Node, NodeId, VersionId};
use hamt::Tree;

pub use codec::{hex, DecodeError};
pub use hamt::{NodeChange, Nodes};
pub use persist::{ImportError, Snapshot};
pub use summary::{op_summary, transaction_summary};

pub use crate::repo::cas::Hash;

/// A moment given by the caller, in milliseconds since the Unix epoch (UTC).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// Seconds since the epoch (a host's clock) to the millisecond; a clock
    /// that is not a finite number gives the epoch.
    pub fn from_seconds(seconds: f64) -> Timestamp {
        if seconds.is_finite() {
            Timestamp((seconds * 1000.0).round() as i64)
        } else {
            Timestamp(0)
        }
    }

    /// ISO 8601 in UTC, e.g. `2025-07-29T10:30:00Z` (milliseconds shown
    /// only when not zero).
    pub fn to_iso8601(self) -> String {
        let ms = self.0.rem_euclid(1000);
        let secs = self.0.div_euclid(1000);
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400);
        // Days to civil date (Howard Hinnant's algorithm).
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        let y = yoe + era * 400 + i64::from(m <= 2);
        let (h, mi, s) = (sod / 3600, sod / 60 % 60, sod % 60);
        if ms == 0 {
            format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
        } else {
            format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
        }
    }
}

/// New values for some of a node's fields; `None` leaves a field as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeChanges {
    pub code: Option<Option<String>>,
    pub description: Option<Option<String>>,
    pub symbol_names: Option<Vec<String>>,
    pub kind: Option<Option<String>>,
    pub dependencies: Option<Vec<(NodeId, String)>>,
}

impl NodeChanges {
    pub fn is_empty(&self) -> bool {
        *self == NodeChanges::default()
    }

    /// Applies the changes to `node` and returns the changes that undo them:
    /// the old values of exactly the fields changed.
    pub fn apply(&self, node: &mut Node) -> NodeChanges {
        fn swap<T: Clone>(new: &Option<T>, field: &mut T) -> Option<T> {
            new.as_ref().map(|v| std::mem::replace(field, v.clone()))
        }
        NodeChanges {
            code: swap(&self.code, &mut node.code),
            description: swap(&self.description, &mut node.description),
            symbol_names: swap(&self.symbol_names, &mut node.symbol_names),
            kind: swap(&self.kind, &mut node.kind),
            dependencies: swap(&self.dependencies, &mut node.dependencies),
        }
    }
}

/// One change to the map of nodes.
///
/// Given to [`Pending::apply`] or [`VersionForest::commit`], a `Create`'s
/// node id is ignored: the forest allocates one. Recorded in a version's
/// forward and reverse deltas, a `Create` carries the id the node has (the
/// reverse of a delete re-creates the node under its old id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Create(Node),
    Update { id: NodeId, changes: NodeChanges },
    Delete(NodeId),
}

/// What a version records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionRecord {
    pub id: VersionId,
    /// `None` for the root version.
    pub parent: Option<VersionId>,
    /// The operations that make this version from its parent, in order.
    pub forward: Vec<Op>,
    /// The operations that make the parent from this version, in order.
    pub reverse: Vec<Op>,
    pub timestamp: Timestamp,
    pub description: String,
    /// How many nodes the version holds.
    pub node_count: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReflogKind {
    /// The forest was created with its root version.
    Init,
    /// A commit made a new version, child of the previous current one.
    Commit,
    /// The current version was switched.
    Switch,
}

/// One move of the current version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReflogEntry {
    pub kind: ReflogKind,
    /// The version that became current.
    pub version: VersionId,
    /// The version that was current before (`None` for `Init`).
    pub previous: Option<VersionId>,
    pub timestamp: Timestamp,
    pub description: String,
}

/// The result of a commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Committed {
    pub version: VersionId,
    /// The ids given to the created nodes, in the order of their creation.
    pub created: Vec<NodeId>,
    /// The nodes that differ from the parent version, sorted by id.
    pub changes: Vec<NodeChange>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ForestError {
    VersionNotFound(VersionId),
    /// No node with this id in the version.
    NodeNotFound(NodeId),
    /// Reserved ids belong to builtins, which user operations cannot change.
    ReservedId(NodeId),
    /// A builtin given to [`VersionForest::new`] has an id outside the
    /// reserved range.
    NotReserved(NodeId),
    /// Two builtins given to [`VersionForest::new`] share an id.
    DuplicateId(NodeId),
    /// Another writer stored changes to the same nodes (or changes that
    /// make these impossible) since this change was made: it was not
    /// stored.
    Conflict {
        nodes: Vec<NodeId>,
        reason: String,
    },
    /// A node would depend on an id that is not in the version.
    DependencyNotFound {
        node: Option<NodeId>,
        dependency: NodeId,
    },
    /// The transaction started at `base`, but the current version has moved
    /// to `current` since.
    StaleTransaction {
        base: VersionId,
        current: VersionId,
    },
    /// No node or version id is left (the 64-bit counters ran out).
    IdsExhausted,
    /// Switching versions (or committing outside it) while a transaction
    /// is open.
    TransactionOpen,
    /// Committing when no transaction is open.
    NoTransaction,
    /// Stored data the operation needs could not be read.
    Store(StoreError),
}

impl From<StoreError> for ForestError {
    fn from(e: StoreError) -> Self {
        ForestError::Store(e)
    }
}

impl ForestError {
    /// The error kind as the `arb:` API names it.
    pub fn kind(&self) -> &'static str {
        match self {
            ForestError::VersionNotFound(_) => "version-not-found",
            ForestError::NodeNotFound(_) => "s-expression-not-found",
            ForestError::ReservedId(_) => "reserved-id",
            ForestError::NotReserved(_) => "not-reserved",
            ForestError::DuplicateId(_) => "duplicate-id",
            ForestError::DependencyNotFound { .. } => "dependency-not-found",
            ForestError::StaleTransaction { .. } => "stale-transaction",
            ForestError::IdsExhausted => "ids-exhausted",
            ForestError::TransactionOpen => "transaction-open",
            ForestError::NoTransaction => "no-transaction",
            ForestError::Store(_) => "store-error",
            ForestError::Conflict { .. } => "conflict",
        }
    }
}

impl fmt::Display for ForestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ForestError::VersionNotFound(v) => write!(f, "version {v} does not exist"),
            ForestError::NodeNotFound(id) => write!(f, "no s-expression with id {id}"),
            ForestError::ReservedId(id) => {
                write!(f, "id {id} is reserved for builtins and cannot be changed")
            }
            ForestError::NotReserved(id) => {
                write!(f, "builtin id {id} is outside the reserved range (id % 65536 < 256)")
            }
            ForestError::DuplicateId(id) => write!(f, "id {id} is given twice"),
            ForestError::DependencyNotFound {
                node: Some(n),
                dependency,
            } => write!(f, "s-expression {n} would depend on {dependency}, which does not exist"),
            ForestError::DependencyNotFound {
                node: None,
                dependency,
            } => write!(f, "dependency {dependency} does not exist"),
            ForestError::StaleTransaction { base, current } => write!(
                f,
                "the transaction started at version {base}, but the current version is now {current}"
            ),
            ForestError::IdsExhausted => write!(f, "no ids are left"),
            ForestError::TransactionOpen => write!(
                f,
                "a transaction is open: it must end before the current version can move"
            ),
            ForestError::NoTransaction => write!(f, "no transaction is open"),
            ForestError::Store(e) => write!(f, "the knowledge store: {e}"),
            ForestError::Conflict { reason, .. } => write!(f, "conflict: {reason}"),
        }
    }
}

impl std::error::Error for ForestError {}

/// The first id at or after `n` outside the reserved range.
fn first_free_id(n: NodeId) -> Option<NodeId> {
    if is_reserved(n) {
        (n - n % 65536).checked_add(256)
    } else {
        Some(n)
    }
}

/// The first id ever given to a user node.
const FIRST_NODE_ID: NodeId = 256;

/// A transaction: changes to the current version that become one version
/// when committed with [`VersionForest::commit_pending`], and nothing when
/// dropped. It sees its own changes. A failed operation changes nothing in
/// it, so the caller may go on or drop it. A clone is a savepoint: the two
/// share every subtree until one of them changes it.
#[derive(Clone)]
pub struct Pending {
    base: VersionId,
    root: Arc<Tree>,
    next_node_id: NodeId,
    forward: Vec<Op>,
    /// In the order of application; reversed when committed.
    reverse: Vec<Op>,
    created: Vec<NodeId>,
    blobs: Blobs,
}

impl Pending {
    /// The version the transaction started from.
    pub fn base(&self) -> VersionId {
        self.base
    }

    /// No operation has succeeded yet.
    pub fn is_empty(&self) -> bool {
        self.forward.is_empty()
    }

    /// The operations so far, as they will be recorded.
    pub fn ops(&self) -> &[Op] {
        &self.forward
    }

    /// The ids given to the nodes created so far, in order.
    pub fn created(&self) -> &[NodeId] {
        &self.created
    }

    pub fn get(&self, id: NodeId) -> Result<Option<&Node>, ForestError> {
        Ok(hamt::get(&self.blobs, &self.root, id)?)
    }

    pub fn nodes(&self) -> Nodes<'_> {
        Nodes::new(&self.blobs, &self.root)
    }

    pub fn node_count(&self) -> u64 {
        self.root.len()
    }

    fn check_deps(
        &self,
        node: Option<NodeId>,
        deps: &[(NodeId, String)],
    ) -> Result<(), ForestError> {
        for (d, _) in deps {
            if self.get(*d)?.is_none() {
                return Err(ForestError::DependencyNotFound {
                    node,
                    dependency: *d,
                });
            }
        }
        Ok(())
    }

    /// Creates a node (its `id` is ignored) and returns the id it was given.
    pub fn create(&mut self, mut node: Node) -> Result<NodeId, ForestError> {
        self.check_deps(None, &node.dependencies)?;
        let id = first_free_id(self.next_node_id).ok_or(ForestError::IdsExhausted)?;
        let next = id.checked_add(1).ok_or(ForestError::IdsExhausted)?;
        node.id = id;
        hamt::insert(&self.blobs, &mut self.root, Tree::leaf(node.clone()))?;
        self.next_node_id = next;
        self.forward.push(Op::Create(node));
        self.reverse.push(Op::Delete(id));
        self.created.push(id);
        Ok(id)
    }

    /// Changes some fields of a node.
    pub fn update(&mut self, id: NodeId, changes: NodeChanges) -> Result<(), ForestError> {
        if is_reserved(id) {
            return Err(ForestError::ReservedId(id));
        }
        let mut node = self.get(id)?.ok_or(ForestError::NodeNotFound(id))?.clone();
        if let Some(deps) = &changes.dependencies {
            self.check_deps(Some(id), deps)?;
        }
        let undo = changes.apply(&mut node);
        hamt::insert(&self.blobs, &mut self.root, Tree::leaf(node))?;
        self.forward.push(Op::Update { id, changes });
        self.reverse.push(Op::Update { id, changes: undo });
        Ok(())
    }

    /// Deletes a node and returns it. Nodes that depend on it keep their
    /// dependency entry; whether that is allowed is the caller's policy.
    pub fn delete(&mut self, id: NodeId) -> Result<Node, ForestError> {
        if is_reserved(id) {
            return Err(ForestError::ReservedId(id));
        }
        if self.get(id)?.is_none() {
            return Err(ForestError::NodeNotFound(id));
        }
        let old =
            hamt::remove(&self.blobs, &mut self.root, id)?.ok_or(ForestError::NodeNotFound(id))?;
        self.forward.push(Op::Delete(id));
        self.reverse.push(Op::Create(old.clone()));
        Ok(old)
    }

    /// Applies one operation; returns the new id for a `Create`.
    pub fn apply(&mut self, op: Op) -> Result<Option<NodeId>, ForestError> {
        match op {
            Op::Create(n) => self.create(n).map(Some),
            Op::Update { id, changes } => self.update(id, changes).map(|_| None),
            Op::Delete(id) => self.delete(id).map(|_| None),
        }
    }
}

impl fmt::Debug for Pending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending")
            .field("base", &self.base)
            .field("ops", &self.forward.len())
            .field("nodes", &self.root.len())
            .finish()
    }
}

/// A persisted index of a version, by name, as the indexes store it.
pub type IndexMaps = Vec<(String, SortedMap)>;

/// One version: its record and its trie, read from the store when first
/// used, or made by a commit of this session.
struct Version {
    id: VersionId,
    parent: Option<VersionId>,
    timestamp: Timestamp,
    description: String,
    node_count: u64,
    root: Link<Tree>,
    /// The delta's stored parts and operation counts (forward, reverse).
    parts: (Vec<Hash>, Vec<Hash>),
    /// The record with its deltas, read when asked for.
    record: OnceCell<VersionRecord>,
    indexes: IndexMaps,
    /// Delta parts made by a commit and not exported yet.
    unsaved_parts: RefCell<Vec<(Hash, Vec<u8>)>>,
}

/// A reflog entry as read or made, with its blob's name.
struct StoredEntry {
    hash: Hash,
    blob: codec::Entry3,
    entry: ReflogEntry,
}

/// Every version of the knowledge base and the history of the current one.
pub struct VersionForest {
    blobs: Blobs,
    /// Versions `1..next_version` (index: id - 1), read on first use.
    versions: Vec<OnceCell<Box<Version>>>,
    /// The reflog, oldest first, read on first use.
    entries: Vec<OnceCell<Box<StoredEntry>>>,
    /// The name of the newest entry.
    head: Hash,
    current: VersionId,
    next_version: VersionId,
    next_node_id: NodeId,
    /// Entries before this index, and everything they reach, are in the
    /// caller's store; so is the refs record below.
    saved_entries: usize,
    saved_refs: codec::Refs,
    /// Each version's children, gathered from the whole history the first
    /// time they are asked for.
    children: RefCell<Option<BTreeMap<VersionId, Vec<VersionId>>>>,
}

impl fmt::Debug for VersionForest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VersionForest")
            .field("current", &self.current)
            .field("versions", &self.versions.len())
            .field("reflog", &self.entries.len())
            .field("next_node_id", &self.next_node_id)
            .finish()
    }
}

/// The id of the root version.
pub const ROOT_VERSION: VersionId = 1;

/// A delta part is cut after the operation that takes it past this size.
const DELTA_PART_BYTES: usize = 64 << 10;

/// The parts of a delta, each with its name.
fn delta_parts(ops: &[Op]) -> Vec<(Hash, Vec<u8>)> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut size = 0;
    for (i, op) in ops.iter().enumerate() {
        let mut w = codec::Writer { buf: Vec::new() };
        w.op(op);
        size += w.buf.len();
        if size >= DELTA_PART_BYTES {
            parts.push(codec::encode_delta(&ops[start..=i]));
            start = i + 1;
            size = 0;
        }
    }
    if start < ops.len() {
        parts.push(codec::encode_delta(&ops[start..]));
    }
    parts
        .into_iter()
        .map(|b| (codec::hash_bytes(&b), b))
        .collect()
}

/// The entry an entry at `seq` links back to, besides the one before it.
fn back_of(seq: u64) -> Option<u64> {
    let b = seq & seq.wrapping_sub(1);
    (seq > 0 && b + 1 != seq).then_some(b)
}

impl VersionForest {
    /// A forest with one version, the root, holding `builtins` (each with a
    /// reserved id), current from `timestamp` on. It lives in memory until
    /// exported.
    pub fn new(
        builtins: Vec<Node>,
        description: &str,
        timestamp: Timestamp,
    ) -> Result<VersionForest, ForestError> {
        Self::new_in(Blobs::none(), builtins, description, timestamp)
    }

    /// As `new`, for a forest whose later parts may come from `blobs`.
    pub fn new_in(
        blobs: Blobs,
        builtins: Vec<Node>,
        description: &str,
        timestamp: Timestamp,
    ) -> Result<VersionForest, ForestError> {
        let mut root = Tree::empty();
        for node in builtins {
            if !is_reserved(node.id) {
                return Err(ForestError::NotReserved(node.id));
            }
            let id = node.id;
            if hamt::insert(&blobs, &mut root, Tree::leaf(node))?.is_some() {
                return Err(ForestError::DuplicateId(id));
            }
        }
        hamt::seal(&root);
        let empty_refs = codec::Refs {
            version: codec::REFS_VERSION,
            current: 0,
            next_version: ROOT_VERSION,
            next_node_id: FIRST_NODE_ID,
            reflog_len: 0,
            reflog_head: [0; 32],
        };
        let mut forest = VersionForest {
            blobs,
            versions: Vec::new(),
            entries: Vec::new(),
            head: [0; 32],
            current: ROOT_VERSION,
            next_version: ROOT_VERSION,
            next_node_id: FIRST_NODE_ID,
            saved_entries: 0,
            saved_refs: empty_refs,
            children: RefCell::new(None),
        };
        let record = VersionRecord {
            id: ROOT_VERSION,
            parent: None,
            forward: Vec::new(),
            reverse: Vec::new(),
            timestamp,
            description: description.to_owned(),
            node_count: root.len(),
        };
        forest.add_version(record, root, Vec::new(), ReflogKind::Init, None);
        Ok(forest)
    }

    /// The blob source this forest reads from.
    pub fn blobs(&self) -> &Blobs {
        &self.blobs
    }

    /// Makes version `record.id` (the next id) from `root`, with its
    /// entry, and makes it current.
    fn add_version(
        &mut self,
        record: VersionRecord,
        root: Arc<Tree>,
        indexes: IndexMaps,
        kind: ReflogKind,
        previous: Option<VersionId>,
    ) {
        let id = record.id;
        let forward = delta_parts(&record.forward);
        let reverse = delta_parts(&record.reverse);
        let header = codec::Header {
            parent: record.parent,
            root: root.hash().unwrap_or([0; 32]),
            node_count: record.node_count,
            forward: (
                forward.iter().map(|(h, _)| *h).collect(),
                record.forward.len() as u64,
            ),
            reverse: (
                reverse.iter().map(|(h, _)| *h).collect(),
                record.reverse.len() as u64,
            ),
            indexes: indexes
                .iter()
                .map(|(name, map)| (name.clone(), map.seal()))
                .collect(),
        };
        let version = Version {
            id,
            parent: record.parent,
            timestamp: record.timestamp,
            description: record.description.clone(),
            node_count: record.node_count,
            root: Link::Mem(root),
            parts: (header.forward.0.clone(), header.reverse.0.clone()),
            record: OnceCell::from(record),
            indexes,
            unsaved_parts: RefCell::new(forward.into_iter().chain(reverse).collect()),
        };
        let description = version.description.clone();
        let timestamp = version.timestamp;
        self.versions.push(OnceCell::from(Box::new(version)));
        self.next_version = id + 1;
        self.push_entry(kind, id, previous, timestamp, description, Some(header));
        if let Some(children) = self.children.get_mut().as_mut() {
            if let Some(p) = previous.filter(|_| kind == ReflogKind::Commit) {
                children.entry(p).or_default().push(id);
            }
        }
    }

    fn push_entry(
        &mut self,
        kind: ReflogKind,
        version: VersionId,
        previous: Option<VersionId>,
        timestamp: Timestamp,
        description: String,
        header: Option<codec::Header>,
    ) {
        let seq = self.entries.len() as u64;
        let back = back_of(seq).and_then(|b| self.entry(b).ok().map(|e| e.hash));
        let blob = codec::Entry3 {
            seq,
            prev: (seq > 0).then_some(self.head),
            back,
            kind,
            version,
            previous,
            made: self.next_version - 1,
            timestamp,
            description: description.clone(),
            header,
        };
        let hash = codec::hash_bytes(&codec::encode_entry3(&blob));
        self.head = hash;
        self.current = version;
        self.entries.push(OnceCell::from(Box::new(StoredEntry {
            hash,
            blob,
            entry: ReflogEntry {
                kind,
                version,
                previous,
                timestamp,
                description,
            },
        })));
    }

    /// The reflog entry `seq` (0: the oldest), read from the store if need
    /// be, following the links from the nearest later entry in memory.
    fn entry(&self, seq: u64) -> Result<&StoredEntry, ForestError> {
        let n = self.entries.len() as u64;
        let cell = self.entries.get(seq as usize).ok_or_else(|| {
            StoreError::Inconsistent(format!("reflog entry {seq} of {n} asked for"))
        })?;
        if let Some(e) = cell.get() {
            return Ok(e);
        }
        // The nearest later entry already read (the newest always is).
        let mut at = seq + 1;
        while at < n && self.entries[at as usize].get().is_none() {
            at += 1;
        }
        let Some(mut cur) = self
            .entries
            .get(at as usize)
            .and_then(|c| c.get())
            .map(|b| &**b)
        else {
            return Err(
                StoreError::Inconsistent("the newest reflog entry is not read".into()).into(),
            );
        };
        while at > seq {
            let (target, hash) = match back_of(at) {
                Some(b) if b >= seq => (b, cur.blob.back),
                _ => (at - 1, cur.blob.prev),
            };
            let hash = hash.ok_or_else(|| {
                StoreError::Inconsistent(format!("reflog entry {at} has no link to entry {target}"))
            })?;
            let newer = &cur.blob;
            let loaded = self.load_entry(target, hash, newer)?;
            cur = loaded;
            at = target;
        }
        Ok(cur)
    }

    /// Reads entry `seq` named `hash` (found from `newer`), checks it, and
    /// keeps it.
    fn load_entry(
        &self,
        seq: u64,
        hash: Hash,
        newer: &codec::Entry3,
    ) -> Result<&StoredEntry, ForestError> {
        let cell = &self.entries[seq as usize];
        if let Some(e) = cell.get() {
            if e.hash != hash {
                return Err(StoreError::Inconsistent(format!(
                    "reflog entry {seq} is linked under two names"
                ))
                .into());
            }
            return Ok(e);
        }
        let bytes = self.blobs.fetch(&hash, &|| format!("reflog entry {seq}"))?;
        let blob = codec::decode_entry3(&bytes)
            .map_err(|error| StoreError::CorruptBlob { hash, error })?;
        let bad = |m: &str| -> ForestError {
            StoreError::Inconsistent(format!(
                "reflog entry {seq} (version {}): {m}",
                blob.version
            ))
            .into()
        };
        if blob.seq != seq {
            return Err(bad("is not at its place in the reflog"));
        }
        if blob.made > newer.made || blob.made >= self.next_version {
            return Err(bad("names a version made later"));
        }
        if newer.seq == seq + 1 && newer.previous != Some(blob.version) {
            return Err(bad("is not the version the next entry moved from"));
        }
        if (seq == 0) != (blob.kind == ReflogKind::Init) || (seq > 0) != blob.prev.is_some() {
            return Err(bad("only the first entry is the initial version"));
        }
        if back_of(seq).is_some() != blob.back.is_some() {
            return Err(bad("has the wrong links"));
        }
        if newer.seq == seq + 1 {
            let step = u64::from(newer.kind != ReflogKind::Switch);
            if newer.made != blob.made + step {
                return Err(bad("the versions made do not add up"));
            }
        }
        if matches!(blob.kind, ReflogKind::Commit | ReflogKind::Init) && blob.version != blob.made {
            return Err(bad("a commit's version is not the newest made"));
        }
        let entry = ReflogEntry {
            kind: blob.kind,
            version: blob.version,
            previous: blob.previous,
            timestamp: blob.timestamp,
            description: blob.description.clone(),
        };
        let _ = cell.set(Box::new(StoredEntry { hash, blob, entry }));
        cell.get()
            .map(|b| &**b)
            .ok_or_else(|| StoreError::Inconsistent("an entry failed to load".into()).into())
    }

    /// The entry that made version `v`: the first whose `made` reaches it.
    fn entry_of(&self, v: VersionId) -> Result<&StoredEntry, ForestError> {
        let n = self.entries.len() as u64;
        if n == 0 {
            return Err(ForestError::VersionNotFound(v));
        }
        // Start from the newest entry, or from a version read already.
        let mut at = n - 1;
        let mut cur = self.entry(at)?;
        if cur.blob.made < v {
            return Err(ForestError::VersionNotFound(v));
        }
        loop {
            // A version is made by exactly one entry: found.
            if at == 0 || (cur.blob.version == v && cur.blob.header.is_some()) {
                break;
            }
            if let Some(b) = back_of(at) {
                let e = self.entry(b)?;
                if e.blob.made >= v {
                    at = b;
                    cur = e;
                    continue;
                }
            }
            let e = self.entry(at - 1)?;
            if e.blob.made >= v {
                at -= 1;
                cur = e;
                continue;
            }
            break;
        }
        if cur.blob.version != v || cur.blob.header.is_none() {
            return Err(
                StoreError::Inconsistent(format!("version {v} has no entry that made it")).into(),
            );
        }
        Ok(cur)
    }

    fn version(&self, v: VersionId) -> Result<&Version, ForestError> {
        let cell = v
            .checked_sub(1)
            .and_then(|i| self.versions.get(i as usize))
            .ok_or(ForestError::VersionNotFound(v))?;
        if let Some(version) = cell.get() {
            return Ok(version);
        }
        let e = self.entry_of(v)?;
        let Some(h) = &e.blob.header else {
            return Err(ForestError::VersionNotFound(v));
        };
        let version = Version {
            id: v,
            parent: h.parent,
            timestamp: e.blob.timestamp,
            description: e.blob.description.clone(),
            node_count: h.node_count,
            root: Link::stored(h.root),
            parts: (h.forward.0.clone(), h.reverse.0.clone()),
            record: OnceCell::new(),
            indexes: h
                .indexes
                .iter()
                .map(|(name, root)| {
                    (
                        name.clone(),
                        SortedMap::open(root.as_ref(), self.blobs.clone()),
                    )
                })
                .collect(),
            unsaved_parts: RefCell::new(Vec::new()),
        };
        if version.parent.is_some_and(|p| p >= v) || (v == ROOT_VERSION) != version.parent.is_none()
        {
            return Err(StoreError::Inconsistent(format!(
                "version {v}: its parent is not an earlier version"
            ))
            .into());
        }
        let _ = cell.set(Box::new(version));
        cell.get()
            .map(|b| &**b)
            .ok_or_else(|| StoreError::Inconsistent("a version failed to load".into()).into())
    }

    /// The trie of a version, its root read if need be.
    fn root(&self, v: VersionId) -> Result<&Arc<Tree>, ForestError> {
        let version = self.version(v)?;
        let root = hamt::load(&self.blobs, &version.root, 0, 0)?;
        if !matches!(&**root, Tree::Branch(_)) || root.len() != version.node_count {
            return Err(StoreError::Inconsistent(format!(
                "version {v}: its trie root does not hold its {} nodes",
                version.node_count
            ))
            .into());
        }
        Ok(root)
    }

    /// The current version.
    pub fn current(&self) -> VersionId {
        self.current
    }

    pub fn contains_version(&self, v: VersionId) -> bool {
        v >= ROOT_VERSION && v < self.next_version
    }

    /// Every version id, ascending (which is the order of creation).
    pub fn versions(&self) -> impl Iterator<Item = VersionId> + '_ {
        ROOT_VERSION..self.next_version
    }

    /// The node `id` as it is in `version`, if it is there.
    pub fn get(&self, version: VersionId, id: NodeId) -> Result<Option<&Node>, ForestError> {
        Ok(hamt::get(&self.blobs, self.root(version)?, id)?)
    }

    /// Every node of `version`, in an order fixed by their ids (not sorted).
    pub fn nodes(&self, version: VersionId) -> Result<Nodes<'_>, ForestError> {
        Ok(Nodes::new(&self.blobs, self.root(version)?))
    }

    pub fn node_count(&self, version: VersionId) -> Result<u64, ForestError> {
        Ok(self.version(version)?.node_count)
    }

    /// A name for the content of a version: equal for versions holding the
    /// same nodes, whatever their history.
    pub fn content_hash(&self, version: VersionId) -> Result<Hash, ForestError> {
        let v = self.version(version)?;
        Ok(hamt::link_hash(&v.root).unwrap_or([0; 32]))
    }

    /// The persisted indexes of a version (empty when it has none).
    pub fn indexes_of(&self, version: VersionId) -> Result<&IndexMaps, ForestError> {
        Ok(&self.version(version)?.indexes)
    }

    /// Parent, deltas, timestamp and description of a version.
    pub fn version_info(&self, version: VersionId) -> Result<&VersionRecord, ForestError> {
        let v = self.version(version)?;
        if let Some(r) = v.record.get() {
            return Ok(r);
        }
        let ops = |parts: &[Hash], what: &str| -> Result<Vec<Op>, ForestError> {
            let mut out = Vec::new();
            for h in parts {
                let bytes = self
                    .blobs
                    .fetch(h, &|| format!("the {what} delta of version {version}"))?;
                out.extend(
                    codec::decode_delta(&bytes)
                        .map_err(|error| StoreError::CorruptBlob { hash: *h, error })?,
                );
            }
            Ok(out)
        };
        let record = VersionRecord {
            id: v.id,
            parent: v.parent,
            forward: ops(&v.parts.0, "forward")?,
            reverse: ops(&v.parts.1, "reverse")?,
            timestamp: v.timestamp,
            description: v.description.clone(),
            node_count: v.node_count,
        };
        let _ = v.record.set(record);
        v.record
            .get()
            .ok_or_else(|| StoreError::Inconsistent("a record failed to load".into()).into())
    }

    /// Parent, timestamp and description of a version, without its deltas.
    pub fn version_summary(&self, version: VersionId) -> Result<VersionSummary, ForestError> {
        let v = self.version(version)?;
        Ok(VersionSummary {
            id: v.id,
            parent: v.parent,
            timestamp: v.timestamp,
            description: v.description.clone(),
            node_count: v.node_count,
        })
    }

    /// The path from the root version to `version`, inclusive, keeping only
    /// its last `limit` entries.
    pub fn chain(&self, version: VersionId, limit: usize) -> Result<Vec<VersionId>, ForestError> {
        let mut v = self.version(version)?;
        let mut out = Vec::new();
        while out.len() < limit {
            out.push(v.id);
            match v.parent {
                Some(p) => v = self.version(p)?,
                None => break,
            }
        }
        out.reverse();
        Ok(out)
    }

    /// The direct children of a version, in order of creation. The first
    /// call reads the whole history.
    pub fn successors(&self, version: VersionId) -> Result<Vec<VersionId>, ForestError> {
        self.version(version)?;
        if self.children.borrow().is_none() {
            let mut map: BTreeMap<VersionId, Vec<VersionId>> = BTreeMap::new();
            for seq in 0..self.entries.len() as u64 {
                let e = self.entry(seq)?;
                if let (ReflogKind::Commit, Some(h)) = (e.blob.kind, &e.blob.header) {
                    if let Some(p) = h.parent {
                        map.entry(p).or_default().push(e.blob.version);
                    }
                }
            }
            *self.children.borrow_mut() = Some(map);
        }
        Ok(self
            .children
            .borrow()
            .as_ref()
            .and_then(|m| m.get(&version).cloned())
            .unwrap_or_default())
    }

    /// Reflog entries, newest first, skipping the newest `skip`.
    pub fn reflog(&self, skip: usize, limit: usize) -> Result<Vec<&ReflogEntry>, ForestError> {
        let n = self.entries.len();
        let mut out = Vec::new();
        for seq in (0..n.saturating_sub(skip)).rev().take(limit) {
            out.push(&self.entry(seq as u64)?.entry);
        }
        Ok(out)
    }

    pub fn reflog_len(&self) -> usize {
        self.entries.len()
    }

    /// The nodes that differ between two versions, sorted by id.
    pub fn diff(&self, from: VersionId, to: VersionId) -> Result<Vec<NodeChange>, ForestError> {
        Ok(hamt::diff(&self.blobs, self.root(from)?, self.root(to)?)?)
    }

    /// Starts a transaction on the current version.
    pub fn begin(&self) -> Result<Pending, ForestError> {
        let root = self.root(self.current)?.clone();
        Ok(Pending {
            base: self.current,
            root,
            next_node_id: self.next_node_id,
            forward: Vec::new(),
            reverse: Vec::new(),
            created: Vec::new(),
            blobs: self.blobs.clone(),
        })
    }

    /// Makes a transaction one new version, child of the current version,
    /// and makes that current. An empty transaction makes a version too:
    /// whether to commit one is the caller's choice.
    pub fn commit_pending(
        &mut self,
        pending: Pending,
        description: &str,
        timestamp: Timestamp,
    ) -> Result<Committed, ForestError> {
        self.commit_pending_with(pending, description, timestamp, true, Vec::new())
    }

    /// As `commit_pending`, for a caller that followed every operation
    /// already (a transaction whose indexes kept up): the difference to
    /// the parent is not computed, and `changes` is empty. `indexes` are
    /// stored with the version.
    pub fn commit_pending_quiet(
        &mut self,
        pending: Pending,
        description: &str,
        timestamp: Timestamp,
        indexes: IndexMaps,
    ) -> Result<Committed, ForestError> {
        self.commit_pending_with(pending, description, timestamp, false, indexes)
    }

    fn commit_pending_with(
        &mut self,
        pending: Pending,
        description: &str,
        timestamp: Timestamp,
        want_changes: bool,
        indexes: IndexMaps,
    ) -> Result<Committed, ForestError> {
        if pending.base != self.current {
            return Err(ForestError::StaleTransaction {
                base: pending.base,
                current: self.current,
            });
        }
        let id = self.next_version;
        id.checked_add(1).ok_or(ForestError::IdsExhausted)?;
        let parent = self.current;
        let Pending {
            root,
            next_node_id,
            forward,
            mut reverse,
            created,
            ..
        } = pending;
        hamt::seal(&root);
        reverse.reverse();
        let changes = if want_changes {
            hamt::diff(&self.blobs, self.root(parent)?, &root)?
        } else {
            Vec::new()
        };
        let record = VersionRecord {
            id,
            parent: Some(parent),
            forward,
            reverse,
            timestamp,
            description: description.to_owned(),
            node_count: root.len(),
        };
        self.next_node_id = self.next_node_id.max(next_node_id);
        self.add_version(record, root, indexes, ReflogKind::Commit, Some(parent));
        Ok(Committed {
            version: id,
            created,
            changes,
        })
    }

    /// Applies `ops` in order and commits them as one version. If one fails,
    /// nothing is committed. (To know which operation failed, or to read
    /// between operations, use [`VersionForest::begin`].)
    pub fn commit(
        &mut self,
        ops: Vec<Op>,
        description: &str,
        timestamp: Timestamp,
    ) -> Result<Committed, ForestError> {
        let mut p = self.begin()?;
        // Known sizes: spare the vectors their regrowth copies.
        p.forward.reserve(ops.len());
        p.reverse.reserve(ops.len());
        for op in ops {
            p.apply(op)?;
        }
        self.commit_pending(p, description, timestamp)
    }

    /// Makes `target` the current version and returns the nodes that differ
    /// between the old current version and it (old → new), sorted by id.
    /// Switching to the current version is not a move: nothing is recorded.
    pub fn switch(
        &mut self,
        target: VersionId,
        description: &str,
        timestamp: Timestamp,
    ) -> Result<Vec<NodeChange>, ForestError> {
        self.version(target)?;
        if target == self.current {
            return Ok(Vec::new());
        }
        let changes = self.diff(self.current, target)?;
        let previous = self.current;
        self.push_entry(
            ReflogKind::Switch,
            target,
            Some(previous),
            timestamp,
            description.to_owned(),
            None,
        );
        Ok(changes)
    }
}

/// A commit or move not stored yet, as it can be applied again on another
/// writer's state.
#[derive(Clone, Debug)]
pub struct UnsavedMove {
    pub kind: ReflogKind,
    pub version: VersionId,
    pub description: String,
    pub timestamp: Timestamp,
    /// A commit's operations (its forward delta).
    pub ops: Vec<Op>,
}

/// The nodes that differ between two tries, possibly of two forests over
/// the same store.
pub(crate) fn diff_trees(
    blobs: &Blobs,
    a: &Arc<Tree>,
    b: &Arc<Tree>,
) -> Result<Vec<NodeChange>, StoreError> {
    hamt::diff(blobs, a, b)
}

impl VersionForest {
    /// A version's trie (for `diff_trees`).
    pub(crate) fn root_tree(&self, v: VersionId) -> Result<Arc<Tree>, ForestError> {
        Ok(self.root(v)?.clone())
    }

    /// The refs record the caller's store holds, `None` if it holds
    /// nothing yet.
    pub fn saved_refs_if_any(&self) -> Option<Vec<u8>> {
        (self.saved_refs.reflog_len > 0).then(|| self.saved_refs())
    }

    /// The current version as of the last export or open.
    pub fn saved_current(&self) -> VersionId {
        if self.saved_refs.reflog_len == 0 {
            ROOT_VERSION
        } else {
            self.saved_refs.current
        }
    }

    /// The time of the newest entry (for a forest started again).
    pub fn saved_timestamp(&self) -> Timestamp {
        self.entries
            .first()
            .and_then(|e| e.get())
            .map_or(Timestamp(0), |e| e.entry.timestamp)
    }

    /// The commits and moves since the last export, oldest first.
    pub fn unsaved_moves(&self) -> Result<Vec<UnsavedMove>, ForestError> {
        let mut out = Vec::new();
        for seq in self.saved_entries..self.entries.len() {
            let e = self.entry(seq as u64)?;
            let ops = match e.entry.kind {
                ReflogKind::Switch => Vec::new(),
                _ => self.version_info(e.entry.version)?.forward.clone(),
            };
            out.push(UnsavedMove {
                kind: e.entry.kind,
                version: e.entry.version,
                description: e.entry.description.clone(),
                timestamp: e.entry.timestamp,
                ops,
            });
        }
        Ok(out)
    }
}

/// What a version is, without its deltas (which may be large to read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionSummary {
    pub id: VersionId,
    pub parent: Option<VersionId>,
    pub timestamp: Timestamp,
    pub description: String,
    pub node_count: u64,
}
