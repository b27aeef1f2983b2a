//! Stores of refs versions 1 and 2, read whole: their reflog entries carry
//! their versions' deltas, and their branches do not count their keys, so
//! they cannot be read lazily. `persist` makes a forest of the current
//! layout from what is read here; its next export writes that layout.
//!
//! Everything is checked as it is read: each blob against its name and its
//! encoding, each trie blob against where it is found, the history against
//! itself. Leaves keep their blobs (and names); branches are read without
//! their names, to be sealed again in the current encoding.

use std::cell::{Cell, OnceCell};
use std::sync::Arc;

use super::codec::{self, NameMap, Refs, TreeBlob};
use super::hamt::{self, mask, Branch, Leaf, Tree, MAX_LEVEL};
use super::{Hash, Op, ReflogKind, VersionRecord};
use crate::repo::cas::{Blobs, Link, StoreError};
use crate::repo::node::{is_reserved, Node, NodeId, VersionId};

/// One entry of an old store, oldest first; commits and the initial entry
/// with their version.
pub(super) struct OldEntry {
    pub(super) version: VersionId,
    pub(super) previous: Option<VersionId>,
    pub(super) timestamp: super::Timestamp,
    pub(super) description: String,
    pub(super) made: Option<(VersionRecord, Arc<Tree>)>,
}

fn inconsistent(m: String) -> StoreError {
    StoreError::Inconsistent(m)
}

struct Loader<'a> {
    blobs: &'a Blobs,
    /// Trees read so far; a branch with where it was found (level and key
    /// prefix), since a branch belongs at exactly one place.
    memo: NameMap<(Arc<Tree>, u32, u64)>,
    max_user_id: Option<NodeId>,
    /// What is being read, for error messages.
    context: String,
    /// Where the store's tries place a key (by refs version).
    route: fn(NodeId) -> u64,
}

impl Loader<'_> {
    fn fetch(&self, h: &Hash) -> Result<Vec<u8>, StoreError> {
        self.blobs.fetch(h, &|| self.context.clone())
    }

    fn misplaced(&self, h: &Hash) -> StoreError {
        inconsistent(format!(
            "{}: trie blob {} is not where its keys belong",
            self.context,
            codec::hex(h)
        ))
    }

    /// Reads the trie tree named `h` found at `level` under key `prefix`,
    /// checking that its keys belong there and that it is in canonical
    /// shape.
    fn tree(&mut self, h: Hash, level: u32, prefix: u64) -> Result<Arc<Tree>, StoreError> {
        if let Some((t, lv, px)) = self.memo.get(&h) {
            let ok = match &**t {
                Tree::Leaf(l) => (self.route)(l.node.id) & mask(level) == prefix,
                Tree::Branch(_) => *lv == level && *px == prefix,
            };
            let t = t.clone();
            return if ok { Ok(t) } else { Err(self.misplaced(&h)) };
        }
        let bytes = self.fetch(&h)?;
        let blob = codec::decode_tree(&bytes)
            .map_err(|error| StoreError::CorruptBlob { hash: h, error })?;
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
                    saved: Cell::new(true),
                }))
            }
            TreeBlob::Branch(bitmap, hashes, _) => {
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
                    children.push(Link::Mem(child));
                }
                if level > 0 && len < 2 {
                    return Err(inconsistent(format!(
                        "{}: trie branch {} holds fewer than two nodes",
                        self.context,
                        codec::hex(&h)
                    )));
                }
                Arc::new(Tree::Branch(Branch {
                    bitmap,
                    children,
                    len,
                    hash: OnceCell::new(),
                    saved: Cell::new(false),
                }))
            }
        };
        self.memo.insert(h, (tree.clone(), level, prefix));
        Ok(tree)
    }
}

/// Reads a store of refs version 1 or 2 whole.
pub(super) fn read(refs: &Refs, blobs: &Blobs) -> Result<Vec<OldEntry>, StoreError> {
    let mut ld = Loader {
        blobs,
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
        let e = codec::decode_entry(&bytes)
            .map_err(|error| StoreError::CorruptBlob { hash: h, error })?;
        next = e.prev;
        entries.push(e);
    }
    if entries.len() as u64 != refs.reflog_len {
        return Err(inconsistent(format!(
            "the reflog has {} entries, the refs record says {}",
            entries.len(),
            refs.reflog_len
        )));
    }
    entries.reverse();

    let mut out = Vec::with_capacity(entries.len());
    let mut made_ids: Vec<VersionId> = Vec::new();
    let mut current: Option<VersionId> = None;
    for (i, e) in entries.into_iter().enumerate() {
        let what = |m: &str| inconsistent(format!("reflog entry {i} (version {}): {m}", e.version));
        if (i == 0) != (e.kind == ReflogKind::Init) {
            return Err(what("only the first entry is the initial version"));
        }
        if e.previous != current {
            return Err(what("does not follow the entry before it"));
        }
        let made = match e.record {
            Some(r) => {
                if made_ids.contains(&e.version) {
                    return Err(what("the version is made twice"));
                }
                if r.parent != current {
                    return Err(what(
                        "a commit's parent must be the version current before it",
                    ));
                }
                if e.version >= refs.next_version
                    || made_ids.last().is_some_and(|&l| e.version <= l)
                {
                    return Err(what("the version ids are not made in order"));
                }
                ld.context = format!("the nodes of version {}", e.version);
                let root = ld.tree(r.root, 0, 0)?;
                if !matches!(&*root, Tree::Branch(_)) {
                    return Err(what("the root of a version's nodes is not a trie branch"));
                }
                if root.len() != r.node_count {
                    return Err(what("the node count does not match the nodes"));
                }
                made_ids.push(e.version);
                let record = VersionRecord {
                    id: e.version,
                    parent: r.parent,
                    forward: r.forward,
                    reverse: r.reverse,
                    timestamp: e.timestamp,
                    description: e.description.clone(),
                    node_count: r.node_count,
                };
                Some((record, root))
            }
            None => {
                if !made_ids.contains(&e.version) {
                    return Err(what("switches to a version that does not exist"));
                }
                None
            }
        };
        current = Some(e.version);
        out.push(OldEntry {
            version: e.version,
            previous: e.previous,
            timestamp: e.timestamp,
            description: e.description,
            made,
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
    // Versions must be numbered 1, 2, 3, ... as this build expects.
    if made_ids.iter().enumerate().any(|(i, &v)| v != i as u64 + 1) {
        return Err(inconsistent("the version ids are not 1, 2, 3, ...".into()));
    }
    if refs.version == 1 {
        relayout(&mut out, current, &ld.memo)?;
    }
    Ok(out)
}

/// Lays the tries of a refs version 1 store out again by `hamt::route`.
/// The root version is rebuilt from its nodes, every later version from
/// its parent's new trie and its forward delta, so versions share subtrees
/// as before; the deltas must agree with the stored tries (node counts
/// every version, every node of the current one). Leaves are the loaded
/// ones (their blobs do not change).
fn relayout(
    entries: &mut [OldEntry],
    current: VersionId,
    loaded: &NameMap<(Arc<Tree>, u32, u64)>,
) -> Result<(), StoreError> {
    let none = Blobs::none();
    let leaf = |node: Node| -> Arc<Tree> {
        let fresh = Tree::leaf(node);
        match fresh.hash().and_then(|h| loaded.get(&h)) {
            Some((t, _, _)) if matches!(&**t, Tree::Leaf(_)) => t.clone(),
            _ => fresh,
        }
    };
    let mut new_roots: std::collections::BTreeMap<VersionId, Arc<Tree>> = Default::default();
    for e in entries.iter_mut() {
        let Some((record, old_root)) = &mut e.made else {
            continue;
        };
        let v = record.id;
        let what = |m: String| inconsistent(format!("laying out version {v} again: {m}"));
        let mut root = match record.parent {
            None => {
                let mut root = Tree::empty();
                let mut stack = vec![old_root.clone()];
                while let Some(t) = stack.pop() {
                    match &*t {
                        Tree::Leaf(_) => {
                            hamt::insert(&none, &mut root, t.clone())?;
                        }
                        Tree::Branch(b) => {
                            stack.extend(b.children.iter().filter_map(|c| c.loaded().cloned()))
                        }
                    }
                }
                root
            }
            Some(p) => {
                let mut root = new_roots
                    .get(&p)
                    .cloned()
                    .ok_or_else(|| what(format!("its parent {p} comes later")))?;
                for op in &record.forward {
                    match op {
                        Op::Create(n) => {
                            hamt::insert(&none, &mut root, leaf(n.clone()))?;
                        }
                        Op::Update { id, changes } => {
                            let mut n =
                                hamt::get(&none, &root, *id)?.cloned().ok_or_else(|| {
                                    what(format!("the delta updates {id}, which is not there"))
                                })?;
                            changes.apply(&mut n);
                            hamt::insert(&none, &mut root, leaf(n))?;
                        }
                        Op::Delete(id) => {
                            hamt::remove(&none, &mut root, *id)?.ok_or_else(|| {
                                what(format!("the delta deletes {id}, which is not there"))
                            })?;
                        }
                    }
                }
                root
            }
        };
        hamt::seal(&root);
        if root.len() != record.node_count {
            return Err(what(format!(
                "its delta gives {} nodes, its trie holds {}",
                root.len(),
                record.node_count
            )));
        }
        if v == current {
            for n in hamt::Nodes::new(&none, old_root) {
                let n = n?;
                if hamt::get(&none, &root, n.id)? != Some(n) {
                    return Err(what(format!("node {} differs from its delta", n.id)));
                }
            }
        }
        new_roots.insert(v, root.clone());
        root = root.clone();
        *old_root = root;
    }
    Ok(())
}
