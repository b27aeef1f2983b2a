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

mod codec;
mod hamt;
mod persist;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::repo::node::{is_reserved, Node, NodeId, VersionId};
use hamt::Tree;

pub use codec::{hex, DecodeError};
pub use hamt::{NodeChange, Nodes};
pub use persist::{ImportError, Snapshot};

/// The name of a blob: the BLAKE3 hash of its bytes.
pub type Hash = [u8; 32];

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

    pub fn get(&self, id: NodeId) -> Option<&Node> {
        hamt::get(&self.root, id)
    }

    pub fn nodes(&self) -> Nodes<'_> {
        Nodes::new(&self.root)
    }

    pub fn node_count(&self) -> u64 {
        self.root.len()
    }

    fn check_deps(
        &self,
        node: Option<NodeId>,
        deps: &[(NodeId, String)],
    ) -> Result<(), ForestError> {
        match deps
            .iter()
            .find(|(d, _)| hamt::get(&self.root, *d).is_none())
        {
            Some((d, _)) => Err(ForestError::DependencyNotFound {
                node,
                dependency: *d,
            }),
            None => Ok(()),
        }
    }

    /// Creates a node (its `id` is ignored) and returns the id it was given.
    pub fn create(&mut self, mut node: Node) -> Result<NodeId, ForestError> {
        self.check_deps(None, &node.dependencies)?;
        let id = first_free_id(self.next_node_id).ok_or(ForestError::IdsExhausted)?;
        let next = id.checked_add(1).ok_or(ForestError::IdsExhausted)?;
        node.id = id;
        hamt::insert(&mut self.root, Tree::leaf(node.clone()));
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
        let mut node = self.get(id).ok_or(ForestError::NodeNotFound(id))?.clone();
        if let Some(deps) = &changes.dependencies {
            self.check_deps(Some(id), deps)?;
        }
        let undo = changes.apply(&mut node);
        hamt::insert(&mut self.root, Tree::leaf(node));
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
        if self.get(id).is_none() {
            return Err(ForestError::NodeNotFound(id));
        }
        let old = hamt::remove(&mut self.root, id).ok_or(ForestError::NodeNotFound(id))?;
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

struct Version {
    record: VersionRecord,
    root: Arc<Tree>,
    children: Vec<VersionId>,
}

/// Every version of the knowledge base and the history of the current one.
pub struct VersionForest {
    versions: BTreeMap<VersionId, Version>,
    current: VersionId,
    next_version: VersionId,
    next_node_id: NodeId,
    /// Oldest first.
    reflog: Vec<ReflogEntry>,
    /// The blob name of each reflog entry (each names the one before it).
    reflog_hashes: Vec<Hash>,
    /// Entries before this index, and everything they reach, are in the
    /// caller's store.
    saved_reflog: usize,
}

impl fmt::Debug for VersionForest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VersionForest")
            .field("current", &self.current)
            .field("versions", &self.versions.len())
            .field("reflog", &self.reflog.len())
            .field("next_node_id", &self.next_node_id)
            .finish()
    }
}

/// The id of the root version.
pub const ROOT_VERSION: VersionId = 1;

impl VersionForest {
    /// A forest with one version, the root, holding `builtins` (each with a
    /// reserved id), current from `timestamp` on.
    pub fn new(
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
            if hamt::insert(&mut root, Tree::leaf(node)).is_some() {
                return Err(ForestError::DuplicateId(id));
            }
        }
        hamt::seal(&mut root);
        let record = VersionRecord {
            id: ROOT_VERSION,
            parent: None,
            forward: Vec::new(),
            reverse: Vec::new(),
            timestamp,
            description: description.to_owned(),
            node_count: root.len(),
        };
        let mut forest = VersionForest {
            versions: BTreeMap::new(),
            current: ROOT_VERSION,
            next_version: ROOT_VERSION + 1,
            next_node_id: FIRST_NODE_ID,
            reflog: Vec::new(),
            reflog_hashes: Vec::new(),
            saved_reflog: 0,
        };
        forest.versions.insert(
            ROOT_VERSION,
            Version {
                record,
                root,
                children: Vec::new(),
            },
        );
        forest.push_reflog(ReflogEntry {
            kind: ReflogKind::Init,
            version: ROOT_VERSION,
            previous: None,
            timestamp,
            description: description.to_owned(),
        });
        Ok(forest)
    }

    fn version(&self, v: VersionId) -> Result<&Version, ForestError> {
        self.versions.get(&v).ok_or(ForestError::VersionNotFound(v))
    }

    /// The current version.
    pub fn current(&self) -> VersionId {
        self.current
    }

    pub fn contains_version(&self, v: VersionId) -> bool {
        self.versions.contains_key(&v)
    }

    /// Every version id, ascending (which is the order of creation).
    pub fn versions(&self) -> impl Iterator<Item = VersionId> + '_ {
        self.versions.keys().copied()
    }

    /// The node `id` as it is in `version`, if it is there.
    pub fn get(&self, version: VersionId, id: NodeId) -> Result<Option<&Node>, ForestError> {
        Ok(hamt::get(&self.version(version)?.root, id))
    }

    /// Every node of `version`, in an order fixed by their ids (not sorted).
    pub fn nodes(&self, version: VersionId) -> Result<Nodes<'_>, ForestError> {
        Ok(Nodes::new(&self.version(version)?.root))
    }

    /// Every node of the current version (which always exists).
    pub fn current_nodes(&self) -> Nodes<'_> {
        static EMPTY: Tree = Tree::EMPTY;
        Nodes::new(self.versions.get(&self.current).map_or(&EMPTY, |v| &v.root))
    }

    pub fn node_count(&self, version: VersionId) -> Result<u64, ForestError> {
        Ok(self.version(version)?.root.len())
    }

    /// A name for the content of a version: equal for versions holding the
    /// same nodes, whatever their history.
    pub fn content_hash(&self, version: VersionId) -> Result<Hash, ForestError> {
        let v = self.version(version)?;
        Ok(v.root.hash().unwrap_or([0; 32]))
    }

    /// Parent, deltas, timestamp and description of a version.
    pub fn version_info(&self, version: VersionId) -> Result<&VersionRecord, ForestError> {
        Ok(&self.version(version)?.record)
    }

    /// The path from the root version to `version`, inclusive, keeping only
    /// its last `limit` entries.
    pub fn chain(&self, version: VersionId, limit: usize) -> Result<Vec<VersionId>, ForestError> {
        let mut v = self.version(version)?;
        let mut out = Vec::new();
        while out.len() < limit {
            out.push(v.record.id);
            match v.record.parent {
                Some(p) => v = self.version(p)?,
                None => break,
            }
        }
        out.reverse();
        Ok(out)
    }

    /// The direct children of a version, in order of creation.
    pub fn successors(&self, version: VersionId) -> Result<&[VersionId], ForestError> {
        Ok(&self.version(version)?.children)
    }

    /// Reflog entries, newest first, skipping the newest `skip`.
    pub fn reflog(&self, skip: usize, limit: usize) -> impl Iterator<Item = &ReflogEntry> + '_ {
        self.reflog.iter().rev().skip(skip).take(limit)
    }

    pub fn reflog_len(&self) -> usize {
        self.reflog.len()
    }

    /// The nodes that differ between two versions, sorted by id.
    pub fn diff(&self, from: VersionId, to: VersionId) -> Result<Vec<NodeChange>, ForestError> {
        Ok(hamt::diff(
            &self.version(from)?.root,
            &self.version(to)?.root,
        ))
    }

    /// Starts a transaction on the current version.
    pub fn begin(&self) -> Pending {
        let root = self
            .versions
            .get(&self.current)
            .map_or_else(Tree::empty, |v| v.root.clone());
        Pending {
            base: self.current,
            root,
            next_node_id: self.next_node_id,
            forward: Vec::new(),
            reverse: Vec::new(),
            created: Vec::new(),
        }
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
        self.commit_pending_with(pending, description, timestamp, true)
    }

    /// As `commit_pending`, for a caller that followed every operation
    /// already (a transaction whose indexes kept up): the difference to
    /// the parent is not computed, and `changes` is empty.
    pub fn commit_pending_quiet(
        &mut self,
        pending: Pending,
        description: &str,
        timestamp: Timestamp,
    ) -> Result<Committed, ForestError> {
        self.commit_pending_with(pending, description, timestamp, false)
    }

    fn commit_pending_with(
        &mut self,
        pending: Pending,
        description: &str,
        timestamp: Timestamp,
        want_changes: bool,
    ) -> Result<Committed, ForestError> {
        if pending.base != self.current {
            return Err(ForestError::StaleTransaction {
                base: pending.base,
                current: self.current,
            });
        }
        let id = self.next_version;
        let next_version = id.checked_add(1).ok_or(ForestError::IdsExhausted)?;
        let parent = self.current;
        let Pending {
            mut root,
            next_node_id,
            forward,
            mut reverse,
            created,
            ..
        } = pending;
        hamt::seal(&mut root);
        reverse.reverse();
        let parent_root = &self.version(parent)?.root;
        let changes = if want_changes {
            hamt::diff(parent_root, &root)
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
        self.versions.insert(
            id,
            Version {
                record,
                root,
                children: Vec::new(),
            },
        );
        if let Some(p) = self.versions.get_mut(&parent) {
            p.children.push(id);
        }
        self.next_version = next_version;
        self.next_node_id = self.next_node_id.max(next_node_id);
        self.current = id;
        self.push_reflog(ReflogEntry {
            kind: ReflogKind::Commit,
            version: id,
            previous: Some(parent),
            timestamp,
            description: description.to_owned(),
        });
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
        let mut p = self.begin();
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
        let to = self.version(target)?;
        if target == self.current {
            return Ok(Vec::new());
        }
        let changes = hamt::diff(&self.version(self.current)?.root, &to.root);
        let previous = self.current;
        self.current = target;
        self.push_reflog(ReflogEntry {
            kind: ReflogKind::Switch,
            version: target,
            previous: Some(previous),
            timestamp,
            description: description.to_owned(),
        });
        Ok(changes)
    }

    fn push_reflog(&mut self, entry: ReflogEntry) {
        let bytes = self.entry_blob(&entry, self.reflog_hashes.last().copied());
        self.reflog_hashes.push(codec::hash_bytes(&bytes));
        self.reflog.push(entry);
    }

    /// The blob of a reflog entry: for commits and the root, with the
    /// version's record.
    fn entry_blob(&self, e: &ReflogEntry, prev: Option<Hash>) -> Vec<u8> {
        let record = match e.kind {
            ReflogKind::Switch => None,
            ReflogKind::Init | ReflogKind::Commit => {
                self.versions.get(&e.version).map(|v| codec::VersionPart {
                    parent: v.record.parent,
                    root: v.root.hash().unwrap_or([0; 32]),
                    node_count: v.record.node_count,
                    forward: &v.record.forward,
                    reverse: &v.record.reverse,
                })
            }
        };
        codec::encode_entry(&codec::EntryRef {
            prev,
            kind: e.kind,
            version: e.version,
            previous: e.previous,
            timestamp: e.timestamp,
            description: &e.description,
            record,
        })
    }
}
