//! Persistence in the core's terms: the forest as `hash → bytes` blobs plus
//! one small refs record, going out and coming in as values.
//!
//! Blobs: every trie leaf (a node) and branch, and every reflog entry. An
//! entry names the entry before it, and a commit's entry carries the new
//! version's record (parent, deltas, timestamp, description, trie root), so
//! the whole state is reachable from the newest entry. The refs record holds
//! that entry's name, the current version and the id counters, with a
//! checksum.
//!
//! A store is therefore a directory (or an IndexedDB object store) of blobs
//! named by their hash plus one refs file. Blobs never change, so writing
//! them is idempotent; a host writes the blobs of an export first and the
//! refs record last (atomically, e.g. write-and-rename), and a torn write
//! leaves the previous refs valid. `export_new` yields only the blobs made
//! since the previous export: one commit costs its changed nodes, the trie
//! branches on their paths, one reflog entry and the refs record.

use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::codec::{self, DecodeError, NameMap, NameSet, TreeBlob};
use super::hamt::{self, Branch, Leaf, Tree, MAX_LEVEL};
use super::{Hash, Op, ReflogEntry, ReflogKind, Version, VersionForest, VersionRecord};
use crate::repo::node::{is_reserved, Node, NodeId, VersionId};

/// What an export yields: blobs to store under their names, and the refs
/// record that replaces the previous one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub blobs: Vec<(Hash, Vec<u8>)>,
    pub refs: Vec<u8>,
}

impl Snapshot {
    /// Bytes to store: the blobs with their 32-byte names, and the refs.
    pub fn size(&self) -> usize {
        self.blobs.iter().map(|(_, b)| 32 + b.len()).sum::<usize>() + self.refs.len()
    }
}

/// Why an import failed. An import builds a new forest, so a failed one
/// changes nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportError {
    /// The refs record is truncated, corrupt or of another format.
    Refs(DecodeError),
    /// A blob the state needs is not in the store.
    MissingBlob { hash: Hash, needed_by: String },
    /// A blob's bytes do not hash to its name.
    HashMismatch { hash: Hash },
    /// A blob's bytes are not a valid encoding.
    CorruptBlob { hash: Hash, error: DecodeError },
    /// Every blob is well formed, but together they do not make a valid
    /// forest.
    Inconsistent(String),
    /// `import_snapshots` was given no snapshot.
    NoSnapshot,
}

impl ImportError {
    /// Every kind's stable name, as hosts and the WIT interface report it.
    pub const KINDS: [&'static str; 5] = [
        "refs",
        "missing-blob",
        "hash-mismatch",
        "corrupt-blob",
        "inconsistent",
    ];

    /// This error's kind, one of [`ImportError::KINDS`].
    pub fn kind(&self) -> &'static str {
        match self {
            ImportError::Refs(_) => "refs",
            ImportError::MissingBlob { .. } => "missing-blob",
            ImportError::HashMismatch { .. } => "hash-mismatch",
            ImportError::CorruptBlob { .. } => "corrupt-blob",
            ImportError::Inconsistent(_) | ImportError::NoSnapshot => "inconsistent",
        }
    }

    /// The blob the error is about, if it is about one.
    pub fn blob(&self) -> Option<Hash> {
        match self {
            ImportError::MissingBlob { hash, .. }
            | ImportError::HashMismatch { hash }
            | ImportError::CorruptBlob { hash, .. } => Some(*hash),
            _ => None,
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Refs(e) => write!(f, "refs record, byte {}: {}", e.offset, e.what),
            ImportError::MissingBlob { hash, needed_by } => {
                write!(f, "blob {} ({needed_by}) is missing", codec::hex(hash))
            }
            ImportError::HashMismatch { hash } => write!(
                f,
                "blob {}: its bytes do not hash to its name (corrupt)",
                codec::hex(hash)
            ),
            ImportError::CorruptBlob { hash, error } => write!(
                f,
                "blob {}, byte {}: {}",
                codec::hex(hash),
                error.offset,
                error.what
            ),
            ImportError::Inconsistent(m) => write!(f, "inconsistent store: {m}"),
            ImportError::NoSnapshot => write!(f, "no snapshot to import"),
        }
    }
}

impl std::error::Error for ImportError {}

/// The blob of a trie leaf or branch (whose children are all hashed).
fn tree_blob(t: &Tree) -> Option<Vec<u8>> {
    match t {
        Tree::Leaf(l) => Some(codec::encode_leaf(&l.node)),
        Tree::Branch(b) => {
            let hashes = b
                .children
                .iter()
                .map(|c| c.hash())
                .collect::<Option<Vec<_>>>()?;
            Some(codec::encode_branch(b.bitmap, &hashes))
        }
    }
}

/// Adds the blobs of a trie to `out`, each once; with `only_unsaved`, stops
/// at subtrees already in the caller's store. Marks what it adds as saved.
fn collect(
    root: &Arc<Tree>,
    only_unsaved: bool,
    seen: &mut NameSet,
    out: &mut Vec<(Hash, Vec<u8>)>,
) {
    let mut stack = vec![root];
    while let Some(t) = stack.pop() {
        if only_unsaved && t.is_saved() {
            continue;
        }
        let Some(h) = t.hash() else { continue };
        if seen.insert(h) {
            if let Some(bytes) = tree_blob(t) {
                out.push((h, bytes));
            }
            if let Tree::Branch(b) = &**t {
                stack.extend(b.children.iter());
            }
        }
        t.mark_saved();
    }
}

impl VersionForest {
    fn refs_bytes(&self) -> Vec<u8> {
        codec::encode_refs(&codec::Refs {
            version: codec::REFS_VERSION,
            current: self.current,
            next_version: self.next_version,
            next_node_id: self.next_node_id,
            reflog_len: self.reflog.len() as u64,
            reflog_head: self.reflog_hashes.last().copied().unwrap_or([0; 32]),
        })
    }

    fn export_from(&mut self, start: usize, only_unsaved: bool) -> Snapshot {
        let mut blobs = Vec::new();
        let mut seen = NameSet::default();
        for i in start..self.reflog.len() {
            let prev = i
                .checked_sub(1)
                .and_then(|j| self.reflog_hashes.get(j).copied());
            let e = &self.reflog[i];
            blobs.push((self.reflog_hashes[i], self.entry_blob(e, prev)));
            if e.kind != ReflogKind::Switch {
                if let Some(v) = self.versions.get(&e.version) {
                    collect(&v.root, only_unsaved, &mut seen, &mut blobs);
                }
            }
        }
        self.saved_reflog = self.reflog.len();
        Snapshot {
            blobs,
            refs: self.refs_bytes(),
        }
    }

    /// Whether there are commits or moves since the last export or import.
    pub fn has_unsaved(&self) -> bool {
        self.saved_reflog < self.reflog.len()
    }

    /// Every blob of the state, and the refs record. Afterwards
    /// `export_new` starts from here.
    pub fn export_full(&mut self) -> Snapshot {
        self.export_from(0, false)
    }

    /// The blobs made since the previous export (or import), each once, and
    /// the refs record. If a host failed to store an export, it stores an
    /// `export_full` instead, which repeats only blobs it may already have.
    pub fn export_new(&mut self) -> Snapshot {
        self.export_from(self.saved_reflog, true)
    }

    /// Rebuilds a forest from a refs record and a store of blobs, fetched by
    /// name through `lookup`. Every blob fetched is checked against its name
    /// and decoded strictly; the versions' history is checked to hang
    /// together. Shared subtrees are loaded once and stay shared.
    pub fn import<F, B>(refs: &[u8], lookup: F) -> Result<VersionForest, ImportError>
    where
        F: FnMut(&Hash) -> Option<B>,
        B: AsRef<[u8]>,
    {
        import_with(refs, lookup, true)
    }

    /// Imports from snapshots: a full export, optionally followed by later
    /// incremental ones (the newest refs record wins). Every blob given is
    /// checked against its name, used or not.
    pub fn import_snapshots<'a, I>(snapshots: I) -> Result<VersionForest, ImportError>
    where
        I: IntoIterator<Item = &'a Snapshot>,
    {
        let mut blobs: NameMap<&[u8]> = NameMap::default();
        let mut refs = None;
        for s in snapshots {
            for (h, b) in &s.blobs {
                if codec::hash_bytes(b) != *h {
                    return Err(ImportError::HashMismatch { hash: *h });
                }
                blobs.insert(*h, b);
            }
            refs = Some(&s.refs);
        }
        let refs = refs.ok_or(ImportError::NoSnapshot)?;
        import_with(refs, |h| blobs.get(h).copied(), false)
    }
}

/// The bits of a mixed key that lead to a tree at `level`.
fn mask(level: u32) -> u64 {
    let bits = 5 * level;
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

struct Loader<F> {
    lookup: F,
    verify: bool,
    /// Trees loaded so far; a branch with where it was found (level and key
    /// prefix), since a branch belongs at exactly one place.
    memo: NameMap<(Arc<Tree>, u32, u64)>,
    max_user_id: Option<NodeId>,
    /// What is being loaded, for error messages.
    context: String,
    /// Where the store's tries place a key (by refs version).
    route: fn(NodeId) -> u64,
}

impl<F, B> Loader<F>
where
    F: FnMut(&Hash) -> Option<B>,
    B: AsRef<[u8]>,
{
    fn fetch(&mut self, h: &Hash) -> Result<B, ImportError> {
        let bytes = (self.lookup)(h).ok_or_else(|| ImportError::MissingBlob {
            hash: *h,
            needed_by: self.context.clone(),
        })?;
        if self.verify && codec::hash_bytes(bytes.as_ref()) != *h {
            return Err(ImportError::HashMismatch { hash: *h });
        }
        Ok(bytes)
    }

    fn misplaced(&self, h: &Hash) -> ImportError {
        ImportError::Inconsistent(format!(
            "{}: trie blob {} is not where its keys belong",
            self.context,
            codec::hex(h)
        ))
    }

    /// Loads the trie tree named `h` found at `level` under key `prefix`,
    /// checking that its keys belong there and that it is in canonical
    /// shape (so that lookups find every key and equal maps hash equally).
    fn tree(&mut self, h: Hash, level: u32, prefix: u64) -> Result<Arc<Tree>, ImportError> {
        if let Some((t, lv, px)) = self.memo.get(&h) {
            let ok = match &**t {
                Tree::Leaf(l) => (self.route)(l.node.id) & mask(level) == prefix,
                Tree::Branch(_) => *lv == level && *px == prefix,
            };
            let t = t.clone();
            return if ok { Ok(t) } else { Err(self.misplaced(&h)) };
        }
        let bytes = self.fetch(&h)?;
        let blob = codec::decode_tree(bytes.as_ref())
            .map_err(|error| ImportError::CorruptBlob { hash: h, error })?;
        drop(bytes);
        let tree = match blob {
            TreeBlob::Leaf(node) => {
                if (self.route)(node.id) & mask(level) != prefix {
                    return Err(self.misplaced(&h));
                }
                if !is_reserved(node.id) {
                    self.max_user_id = Some(self.max_user_id.map_or(node.id, |m| m.max(node.id)));
                }
                Arc::new(Tree::Leaf(Leaf {
                    node,
                    hash: h,
                    saved: AtomicBool::new(true),
                }))
            }
            TreeBlob::Branch(bitmap, hashes) => {
                if level > MAX_LEVEL || (level == MAX_LEVEL && bitmap >> 16 != 0) {
                    return Err(self.misplaced(&h));
                }
                let mut children = Vec::with_capacity(hashes.len());
                let mut len = 0u64;
                let mut bits = bitmap;
                for ch in hashes {
                    let s = bits.trailing_zeros();
                    bits &= bits - 1;
                    let child = self.tree(ch, level + 1, prefix | (u64::from(s) << (5 * level)))?;
                    len += child.len();
                    children.push(child);
                }
                // Canonical shape: below the root, a branch holds two keys
                // or more (one key is its leaf).
                if level > 0 && len < 2 {
                    return Err(ImportError::Inconsistent(format!(
                        "{}: trie branch {} holds fewer than two nodes",
                        self.context,
                        codec::hex(&h)
                    )));
                }
                Arc::new(Tree::Branch(Branch {
                    bitmap,
                    children,
                    len,
                    hash: Some(h),
                    saved: AtomicBool::new(true),
                }))
            }
        };
        self.memo.insert(h, (tree.clone(), level, prefix));
        Ok(tree)
    }
}

fn inconsistent(m: String) -> ImportError {
    ImportError::Inconsistent(m)
}

fn import_with<F, B>(
    refs_bytes: &[u8],
    lookup: F,
    verify: bool,
) -> Result<VersionForest, ImportError>
where
    F: FnMut(&Hash) -> Option<B>,
    B: AsRef<[u8]>,
{
    let refs = codec::decode_refs(refs_bytes).map_err(ImportError::Refs)?;
    let mut ld = Loader {
        lookup,
        verify,
        memo: NameMap::default(),
        max_user_id: None,
        context: String::new(),
        route: if refs.version == 1 {
            hamt::route_v1
        } else {
            hamt::route
        },
    };

    // The reflog, newest first, following each entry's link to the one
    // before it.
    let mut entries = Vec::new();
    let mut next = Some(refs.reflog_head);
    while let Some(h) = next {
        if entries.len() as u64 >= refs.reflog_len {
            return Err(inconsistent(format!(
                "the reflog is longer than the {} entries the refs record says",
                refs.reflog_len
            )));
        }
        ld.context = format!("reflog entry {} from the newest", entries.len());
        let bytes = ld.fetch(&h)?;
        let e = codec::decode_entry(bytes.as_ref())
            .map_err(|error| ImportError::CorruptBlob { hash: h, error })?;
        next = e.prev;
        entries.push((h, e));
    }
    if entries.len() as u64 != refs.reflog_len {
        return Err(inconsistent(format!(
            "the reflog has {} entries, the refs record says {}",
            entries.len(),
            refs.reflog_len
        )));
    }
    entries.reverse();

    let mut versions: std::collections::BTreeMap<VersionId, Version> = Default::default();
    let mut reflog = Vec::with_capacity(entries.len());
    let mut reflog_hashes = Vec::with_capacity(entries.len());
    let mut current: Option<VersionId> = None;
    // Versions in the order they were made: parents first.
    let mut made = Vec::new();
    for (i, (h, e)) in entries.into_iter().enumerate() {
        let what = |m: &str| inconsistent(format!("reflog entry {i} (version {}): {m}", e.version));
        if (i == 0) != (e.kind == ReflogKind::Init) {
            return Err(what("only the first entry is the initial version"));
        }
        if e.previous != current {
            return Err(what("does not follow the entry before it"));
        }
        match e.record {
            Some(r) => {
                if versions.contains_key(&e.version) {
                    return Err(what("the version is made twice"));
                }
                if r.parent != current {
                    return Err(what(
                        "a commit's parent must be the version current before it",
                    ));
                }
                if e.version >= refs.next_version {
                    return Err(what("the version id is not below the next version id"));
                }
                ld.context = format!("the nodes of version {}", e.version);
                let root = ld.tree(r.root, 0, 0)?;
                if !matches!(&*root, Tree::Branch(_)) {
                    return Err(what("the root of a version's nodes is not a trie branch"));
                }
                if root.len() != r.node_count {
                    return Err(what("the node count does not match the nodes"));
                }
                if let Some(p) = r.parent.and_then(|p| versions.get_mut(&p)) {
                    p.children.push(e.version);
                }
                made.push(e.version);
                let record = VersionRecord {
                    id: e.version,
                    parent: r.parent,
                    forward: r.forward,
                    reverse: r.reverse,
                    timestamp: e.timestamp,
                    description: e.description.clone(),
                    node_count: r.node_count,
                };
                versions.insert(
                    e.version,
                    Version {
                        record,
                        root,
                        children: Vec::new(),
                    },
                );
            }
            None => {
                if !versions.contains_key(&e.version) {
                    return Err(what("switches to a version that does not exist"));
                }
            }
        }
        current = Some(e.version);
        reflog_hashes.push(h);
        reflog.push(ReflogEntry {
            kind: e.kind,
            version: e.version,
            previous: e.previous,
            timestamp: e.timestamp,
            description: e.description,
        });
    }
    let current = current.ok_or_else(|| inconsistent("the reflog is empty".into()))?;
    if current != refs.current {
        return Err(inconsistent(format!(
            "the refs record says version {} is current, the reflog says {current}",
            refs.current
        )));
    }
    if ld.max_user_id.is_some_and(|m| m >= refs.next_node_id) {
        return Err(inconsistent(
            "a node id is not below the next node id of the refs record".into(),
        ));
    }
    let saved_reflog = reflog.len();
    let mut forest = VersionForest {
        versions,
        current,
        next_version: refs.next_version,
        next_node_id: refs.next_node_id,
        reflog,
        reflog_hashes,
        saved_reflog,
    };
    if refs.version == 1 {
        relayout(&mut forest, &made, &ld.memo)?;
    }
    Ok(forest)
}

/// Lays the tries of a refs version 1 store out again by `hamt::route`.
/// The root version is rebuilt from its nodes, every later version from
/// its parent's new trie and its forward delta, so versions share subtrees
/// as before; the deltas must agree with the stored tries (node counts
/// every version, every node of the current one). Leaves are the loaded
/// ones (their blobs do not change); the branches and reflog entries are
/// new and unsaved, so the next export writes them with a version 2 refs
/// record, and until then the version 1 store stays as it was.
fn relayout(
    forest: &mut VersionForest,
    made: &[VersionId],
    loaded: &NameMap<(Arc<Tree>, u32, u64)>,
) -> Result<(), ImportError> {
    let leaf = |node: Node| -> Arc<Tree> {
        let fresh = Tree::leaf(node);
        match fresh.hash().and_then(|h| loaded.get(&h)) {
            Some((t, _, _)) if matches!(&**t, Tree::Leaf(_)) => t.clone(),
            _ => fresh,
        }
    };
    let mut new_roots: std::collections::BTreeMap<VersionId, Arc<Tree>> = Default::default();
    for &v in made {
        let what = |m: String| inconsistent(format!("laying out version {v} again: {m}"));
        let version = forest
            .versions
            .get(&v)
            .ok_or_else(|| what("it is missing".into()))?;
        let mut root = match version.record.parent {
            None => {
                let mut root = Tree::empty();
                let mut stack = vec![&version.root];
                while let Some(t) = stack.pop() {
                    match &**t {
                        Tree::Leaf(_) => {
                            hamt::insert(&mut root, t.clone());
                        }
                        Tree::Branch(b) => stack.extend(b.children.iter()),
                    }
                }
                root
            }
            Some(p) => {
                let mut root = new_roots
                    .get(&p)
                    .cloned()
                    .ok_or_else(|| what(format!("its parent {p} comes later")))?;
                for op in &version.record.forward {
                    match op {
                        Op::Create(n) => {
                            hamt::insert(&mut root, leaf(n.clone()));
                        }
                        Op::Update { id, changes } => {
                            let mut n = hamt::get(&root, *id).cloned().ok_or_else(|| {
                                what(format!("the delta updates {id}, which is not there"))
                            })?;
                            changes.apply(&mut n);
                            hamt::insert(&mut root, leaf(n));
                        }
                        Op::Delete(id) => {
                            hamt::remove(&mut root, *id).ok_or_else(|| {
                                what(format!("the delta deletes {id}, which is not there"))
                            })?;
                        }
                    }
                }
                root
            }
        };
        hamt::seal(&mut root);
        if root.len() != version.record.node_count {
            return Err(what(format!(
                "its delta gives {} nodes, its trie holds {}",
                root.len(),
                version.record.node_count
            )));
        }
        if v == forest.current {
            for n in hamt::Nodes::new(&version.root) {
                if hamt::get(&root, n.id) != Some(n) {
                    return Err(what(format!("node {} differs from its delta", n.id)));
                }
            }
        }
        new_roots.insert(v, root);
    }
    for (v, root) in new_roots {
        if let Some(version) = forest.versions.get_mut(&v) {
            version.root = root;
        }
    }
    // The entries name the new roots, and each names the one before it.
    let mut prev = None;
    for i in 0..forest.reflog.len() {
        let h = codec::hash_bytes(&forest.entry_blob(&forest.reflog[i], prev));
        forest.reflog_hashes[i] = h;
        prev = Some(h);
    }
    forest.saved_reflog = 0;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{DecodeError, ImportError};

    #[test]
    fn every_kind_is_listed_and_documented_in_the_wit_interface() {
        let bad = || DecodeError {
            offset: 0,
            what: String::new(),
        };
        let all = [
            ImportError::Refs(bad()),
            ImportError::MissingBlob {
                hash: [1; 32],
                needed_by: String::new(),
            },
            ImportError::HashMismatch { hash: [2; 32] },
            ImportError::CorruptBlob {
                hash: [3; 32],
                error: bad(),
            },
            ImportError::Inconsistent(String::new()),
            ImportError::NoSnapshot,
        ];
        for e in &all {
            assert!(ImportError::KINDS.contains(&e.kind()), "{e:?}");
        }
        assert_eq!(all[2].blob(), Some([2; 32]));
        assert_eq!(all[4].blob(), None);
        let wit = include_str!("../../../../wasm/wit/arbores.wit");
        for kind in ImportError::KINDS {
            assert!(
                wit.contains(&format!("\"{kind}\"")),
                "{kind} is not in arbores.wit"
            );
        }
    }
}
