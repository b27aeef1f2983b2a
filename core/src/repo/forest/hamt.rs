//! The persistent map `NodeId → Node` behind every version: a hash array
//! mapped trie whose trees are content-addressed.
//!
//! Shape. A key's position is given by `route(id)`, a bijection on `u64`
//! read five bits per level from its least significant end (level 0 to 12;
//! the last level has four bits). The route holds the id's low 25 bits
//! first, most significant first, then the rest: ids made one after another
//! (the forest hands them out in sequence) share their path down to level
//! 4, so a bulk insert keeps editing the same few branches, which stay in
//! the cache, and below 2^25 (33 million) ids every node sits within five
//! levels. Because `route` is a bijection, two distinct ids differ in some
//! level's slot, so no collision buckets are needed. A subtree holding
//! exactly one key is always that key's leaf, and a branch other than the
//! root always holds at least two keys. The shape is therefore a function
//! of the key set alone, and the root hash a function of the content alone:
//! equal maps have equal roots, however they were built.
//!
//! Stores whose refs record has version 1 placed keys by `route_v1`, a hash
//! of the id; they are read with it and laid out again (see `persist`).
//!
//! Sharing. Trees are `Arc`s. A change copies the branches on the path from
//! the root to the key (`Arc::make_mut`), sharing every other subtree with the
//! version it started from. Branches made during one change are owned by it
//! alone, so further changes in the same transaction edit them in place.
//!
//! Hashes. A leaf's hash is computed when it is made; a branch's is left
//! unset while it is being edited and computed once by `seal` when the change
//! becomes a version, so a commit of many operations hashes each new branch
//! once.
//!
//! Loading. A branch's children are [`Link`]s: a trie read from a store
//! starts as its root's name, and a branch or leaf is read (and checked:
//! its hash, that its keys belong where it is found, its shape) the first
//! time a lookup, a change or a walk passes through it. Stored branches
//! carry the number of keys below them, so a trie's size is known without
//! reading it.

use std::cell::{Cell, OnceCell};
use std::sync::Arc;

use super::codec::{self, TreeBlob};
use super::Hash;
use crate::repo::cas::{Blobs, Link, StoreError};
use crate::repo::node::{Node, NodeId};

/// The deepest level: `5 * 12 = 60`, so level 12 reads the top four bits.
pub(crate) const MAX_LEVEL: u32 = 12;

/// Ids below this many bits are told apart within the first five levels.
const LOW_BITS: u32 = 25;

/// The route of an id: levels 0 to 4 read its bits 24..0 in five-bit
/// groups, most significant first; levels 5 to 11 bits 63..29, level 12
/// bits 28..25. Each group is moved to where level `l` reads it (bits
/// `5l..5l+5` of the route).
pub(crate) fn route(id: NodeId) -> u64 {
    let low_levels = LOW_BITS / 5;
    let mut r = 0u64;
    for level in 0..low_levels {
        r |= ((id >> (LOW_BITS - 5 - 5 * level)) & 31) << (5 * level);
    }
    for level in low_levels..MAX_LEVEL {
        r |= ((id >> (59 - 5 * (level - low_levels))) & 31) << (5 * level);
    }
    r | (((id >> LOW_BITS) & 15) << (5 * MAX_LEVEL))
}

/// The route of refs version 1: the splitmix64 finaliser, a bijection that
/// spreads ids at random.
pub(crate) fn route_v1(id: NodeId) -> u64 {
    let mut z = id;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The slot of a route at a level, 0..32.
pub(crate) fn slot(h: u64, level: u32) -> u32 {
    ((h >> (5 * level)) & 31) as u32
}

/// The bits of a route that lead to a tree at `level`.
pub(crate) fn mask(level: u32) -> u64 {
    let bits = 5 * level;
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

pub(crate) enum Tree {
    Leaf(Leaf),
    Branch(Branch),
}

pub(crate) struct Leaf {
    pub(crate) node: Node,
    pub(crate) hash: Hash,
    /// Whether this blob is known to be in the caller's store.
    pub(crate) saved: Cell<bool>,
}

pub(crate) struct Branch {
    /// Bit `i` set: slot `i` is occupied; `children` lists occupied slots in
    /// order.
    pub(crate) bitmap: u32,
    pub(crate) children: Vec<Link<Tree>>,
    /// Number of keys below.
    pub(crate) len: u64,
    /// Unset while the branch is being edited; set by `seal`.
    pub(crate) hash: OnceCell<Hash>,
    pub(crate) saved: Cell<bool>,
}

impl Clone for Tree {
    /// Used by `Arc::make_mut` to copy a shared branch before editing it: the
    /// copy is a new blob, not hashed and not saved yet.
    fn clone(&self) -> Self {
        match self {
            Tree::Leaf(l) => Tree::Leaf(Leaf {
                node: l.node.clone(),
                hash: l.hash,
                saved: Cell::new(false),
            }),
            Tree::Branch(b) => Tree::Branch(Branch {
                bitmap: b.bitmap,
                children: b.children.clone(),
                len: b.len,
                hash: OnceCell::new(),
                saved: Cell::new(false),
            }),
        }
    }
}

impl Tree {
    pub(crate) fn leaf(node: Node) -> Arc<Tree> {
        let hash = codec::hash_bytes(&codec::encode_leaf(&node));
        Arc::new(Tree::Leaf(Leaf {
            node,
            hash,
            saved: Cell::new(false),
        }))
    }

    pub(crate) fn empty() -> Arc<Tree> {
        Arc::new(Tree::Branch(Branch {
            bitmap: 0,
            children: Vec::new(),
            len: 0,
            hash: OnceCell::new(),
            saved: Cell::new(false),
        }))
    }

    pub(crate) fn len(&self) -> u64 {
        match self {
            Tree::Leaf(_) => 1,
            Tree::Branch(b) => b.len,
        }
    }

    pub(crate) fn hash(&self) -> Option<Hash> {
        match self {
            Tree::Leaf(l) => Some(l.hash),
            Tree::Branch(b) => b.hash.get().copied(),
        }
    }

    pub(crate) fn saved(&self) -> &Cell<bool> {
        match self {
            Tree::Leaf(l) => &l.saved,
            Tree::Branch(b) => &b.saved,
        }
    }

    pub(crate) fn is_saved(&self) -> bool {
        self.saved().get()
    }

    pub(crate) fn mark_saved(&self) {
        self.saved().set(true)
    }
}

/// The name of what a link points at, if it is known (stored, or sealed).
pub(crate) fn link_hash(link: &Link<Tree>) -> Option<Hash> {
    link.stored_hash()
        .or_else(|| link.loaded().and_then(|t| t.hash()))
}

/// Reads and checks the trie blob named `h`, found at `level` under the
/// route prefix `prefix`: its keys must belong there, and below the root
/// a branch holds two keys or more (the canonical shape).
pub(crate) fn decode_at(
    bytes: &[u8],
    h: &Hash,
    level: u32,
    prefix: u64,
) -> Result<Tree, StoreError> {
    let misplaced = || {
        StoreError::Inconsistent(format!(
            "trie blob {} is not where its keys belong",
            codec::hex(h)
        ))
    };
    let blob =
        codec::decode_tree(bytes).map_err(|error| StoreError::CorruptBlob { hash: *h, error })?;
    match blob {
        TreeBlob::Leaf(node) => {
            if route(node.id) & mask(level) != prefix {
                return Err(misplaced());
            }
            Ok(Tree::Leaf(Leaf {
                node,
                hash: *h,
                saved: Cell::new(true),
            }))
        }
        TreeBlob::Branch(bitmap, hashes, len) => {
            if level > MAX_LEVEL || (level == MAX_LEVEL && bitmap >> 16 != 0) {
                return Err(misplaced());
            }
            let Some(len) = len else {
                return Err(StoreError::Inconsistent(format!(
                    "trie branch {} is of the earlier layout, which is read only whole",
                    codec::hex(h)
                )));
            };
            if len < hashes.len() as u64 || (level > 0 && len < 2) {
                return Err(StoreError::Inconsistent(format!(
                    "trie branch {} holds {len} nodes in {} slots",
                    codec::hex(h),
                    hashes.len()
                )));
            }
            Ok(Tree::Branch(Branch {
                bitmap,
                children: hashes.into_iter().map(Link::stored).collect(),
                len,
                hash: OnceCell::from(*h),
                saved: Cell::new(true),
            }))
        }
    }
}

/// The tree behind a link found at `level` under `prefix`, read on first use.
pub(crate) fn load<'a>(
    blobs: &Blobs,
    link: &'a Link<Tree>,
    level: u32,
    prefix: u64,
) -> Result<&'a Arc<Tree>, StoreError> {
    link.get(|h| {
        let bytes = blobs.fetch(h, &|| format!("a node trie blob at level {level}"))?;
        decode_at(&bytes, h, level, prefix)
    })
}

fn load_mut<'a>(
    blobs: &Blobs,
    link: &'a mut Link<Tree>,
    level: u32,
    prefix: u64,
) -> Result<&'a mut Arc<Tree>, StoreError> {
    link.get_mut(|h| {
        let bytes = blobs.fetch(h, &|| format!("a node trie blob at level {level}"))?;
        decode_at(&bytes, h, level, prefix)
    })
}

/// The tree to be changed: copied if shared, no longer named or stored.
fn edit(t: &mut Arc<Tree>) -> &mut Tree {
    let t = Arc::make_mut(t);
    if let Tree::Branch(b) = t {
        b.hash = OnceCell::new();
    }
    t.saved().set(false);
    t
}

pub(crate) fn get<'a>(
    blobs: &Blobs,
    root: &'a Arc<Tree>,
    id: NodeId,
) -> Result<Option<&'a Node>, StoreError> {
    let h = route(id);
    let mut tree: &Tree = root;
    let mut level = 0;
    loop {
        match tree {
            Tree::Leaf(l) => return Ok((l.node.id == id).then_some(&l.node)),
            Tree::Branch(b) => {
                let s = slot(h, level);
                let bit = 1u32 << s;
                if b.bitmap & bit == 0 {
                    return Ok(None);
                }
                let idx = (b.bitmap & (bit - 1)).count_ones() as usize;
                let Some(child) = b.children.get(idx) else {
                    return Ok(None);
                };
                level += 1;
                tree = load(blobs, child, level, h & mask(level))?;
            }
        }
    }
}

/// Inserts or replaces the node with the leaf's id. Returns the node it
/// replaced. `root` must be a branch (every version's root is).
pub(crate) fn insert(
    blobs: &Blobs,
    root: &mut Arc<Tree>,
    leaf: Arc<Tree>,
) -> Result<Option<Node>, StoreError> {
    let id = match &*leaf {
        Tree::Leaf(l) => l.node.id,
        Tree::Branch(_) => return Ok(None),
    };
    match edit(root) {
        Tree::Branch(b) => insert_in(blobs, b, 0, route(id), id, leaf),
        Tree::Leaf(_) => Ok(None),
    }
}

fn insert_in(
    blobs: &Blobs,
    b: &mut Branch,
    level: u32,
    h: u64,
    id: NodeId,
    leaf: Arc<Tree>,
) -> Result<Option<Node>, StoreError> {
    b.hash = OnceCell::new();
    b.saved.set(false);
    let bit = 1u32 << slot(h, level);
    let idx = (b.bitmap & (bit - 1)).count_ones() as usize;
    if b.bitmap & bit == 0 {
        b.children.insert(idx, Link::Mem(leaf));
        b.bitmap |= bit;
        b.len += 1;
        return Ok(None);
    }
    let prefix = h & mask(level + 1);
    let child = &mut b.children[idx];
    let existing = load(blobs, child, level + 1, prefix)?.clone();
    let replaced = match &*existing {
        Tree::Leaf(l) if l.node.id == id => Some(l.node.clone()),
        Tree::Leaf(l) => {
            // Two keys now share this slot: push both one level down.
            let other = route(l.node.id);
            let other_id = l.node.id;
            let mut sub = Tree::empty();
            if let Tree::Branch(sb) = edit(&mut sub) {
                insert_in(blobs, sb, level + 1, other, other_id, existing.clone())?;
                insert_in(blobs, sb, level + 1, h, id, leaf)?;
            }
            *child = Link::Mem(sub);
            b.len += 1;
            return Ok(None);
        }
        Tree::Branch(_) => {
            drop(existing);
            let t = load_mut(blobs, child, level + 1, prefix)?;
            let r = match edit(t) {
                Tree::Branch(sub) => insert_in(blobs, sub, level + 1, h, id, leaf)?,
                Tree::Leaf(_) => None,
            };
            if r.is_none() {
                b.len += 1;
            }
            return Ok(r);
        }
    };
    *child = Link::Mem(leaf);
    Ok(replaced)
}

/// Removes the node with this id; returns it if it was there. Call only
/// after `get` found it, so that no branch is copied for nothing.
pub(crate) fn remove(
    blobs: &Blobs,
    root: &mut Arc<Tree>,
    id: NodeId,
) -> Result<Option<Node>, StoreError> {
    match edit(root) {
        Tree::Branch(b) => remove_in(blobs, b, 0, route(id), id),
        Tree::Leaf(_) => Ok(None),
    }
}

fn remove_in(
    blobs: &Blobs,
    b: &mut Branch,
    level: u32,
    h: u64,
    id: NodeId,
) -> Result<Option<Node>, StoreError> {
    let bit = 1u32 << slot(h, level);
    if b.bitmap & bit == 0 {
        return Ok(None);
    }
    let idx = (b.bitmap & (bit - 1)).count_ones() as usize;
    let prefix = h & mask(level + 1);
    let is_leaf = match &**load(blobs, &b.children[idx], level + 1, prefix)? {
        Tree::Leaf(l) if l.node.id == id => Some(true),
        Tree::Leaf(_) => None,
        Tree::Branch(_) => Some(false),
    };
    let removed = match is_leaf {
        None => None,
        Some(true) => {
            let removed = b.children.remove(idx);
            b.bitmap &= !bit;
            match removed.loaded().map(|t| &**t) {
                Some(Tree::Leaf(l)) => Some(l.node.clone()),
                _ => None,
            }
        }
        Some(false) => {
            let child = load_mut(blobs, &mut b.children[idx], level + 1, prefix)?;
            let (r, collapse) = match edit(child) {
                Tree::Branch(sub) => {
                    let r = remove_in(blobs, sub, level + 1, h, id)?;
                    // A branch left with one key gives way to that key's
                    // leaf, which is then its only child (a branch child
                    // would hold two keys or more).
                    let collapse = if sub.len == 1 {
                        sub.children.first().cloned()
                    } else {
                        None
                    };
                    (r, collapse)
                }
                Tree::Leaf(_) => (None, None),
            };
            if let Some(only) = collapse {
                b.children[idx] = only;
            }
            r
        }
    };
    if removed.is_some() {
        b.len -= 1;
        b.hash = OnceCell::new();
        b.saved.set(false);
    }
    Ok(removed)
}

/// Computes the hash of every branch made since the last seal. Works
/// through shared trees: a hash is set once, in place.
pub(crate) fn seal(tree: &Tree) -> Hash {
    let b = match tree {
        Tree::Leaf(l) => return l.hash,
        Tree::Branch(b) => b,
    };
    if let Some(h) = b.hash.get() {
        return *h;
    }
    let mut hashes = Vec::with_capacity(b.children.len());
    for c in &b.children {
        let h = match c {
            Link::Mem(t) => seal(t),
            Link::Stored(h, _) => *h,
        };
        hashes.push(h);
    }
    let h = codec::hash_bytes(&codec::encode_branch(b.bitmap, b.len, &hashes));
    let _ = b.hash.set(h);
    h
}

/// Every node of a tree, in trie order, loading what it reaches. A part
/// that fails to load ends the walk with its error.
pub struct Nodes<'a> {
    blobs: Blobs,
    stack: Vec<(&'a Link<Tree>, u32, u64)>,
    top: Option<&'a Tree>,
    failed: bool,
}

impl<'a> Nodes<'a> {
    pub(crate) fn new(blobs: &Blobs, root: &'a Arc<Tree>) -> Self {
        Nodes {
            blobs: blobs.clone(),
            stack: Vec::new(),
            top: Some(root),
            failed: false,
        }
    }

    /// Walks a tree found at `level` under `prefix`.
    fn from_link(blobs: &Blobs, link: &'a Link<Tree>, level: u32, prefix: u64) -> Self {
        Nodes {
            blobs: blobs.clone(),
            stack: vec![(link, level, prefix)],
            top: None,
            failed: false,
        }
    }

    fn push_children(&mut self, b: &'a Branch, level: u32, prefix: u64) {
        let mut bits = b.bitmap;
        let mut slots = Vec::with_capacity(b.children.len());
        for _ in 0..b.children.len() {
            slots.push(bits.trailing_zeros());
            bits &= bits.wrapping_sub(1);
        }
        for (c, s) in b.children.iter().zip(slots).rev() {
            self.stack
                .push((c, level + 1, prefix | (u64::from(s) << (5 * level))));
        }
    }
}

impl<'a> Iterator for Nodes<'a> {
    type Item = Result<&'a Node, StoreError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if let Some(t) = self.top.take() {
            match t {
                Tree::Leaf(l) => return Some(Ok(&l.node)),
                Tree::Branch(b) => self.push_children(b, 0, 0),
            }
        }
        while let Some((link, level, prefix)) = self.stack.pop() {
            match load(&self.blobs, link, level, prefix) {
                Ok(t) => match &**t {
                    Tree::Leaf(l) => return Some(Ok(&l.node)),
                    Tree::Branch(b) => self.push_children(b, level, prefix),
                },
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

/// One node that differs between two maps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeChange {
    pub id: NodeId,
    /// The node in the old map; `None` if it was created.
    pub old: Option<Node>,
    /// The node in the new map; `None` if it was deleted.
    pub new: Option<Node>,
}

/// The nodes that differ between `a` (old) and `b` (new), sorted by id.
/// Subtrees that are the same object or have the same hash are skipped (and
/// not read), so the cost follows the size of the difference, not of the
/// maps.
pub(crate) fn diff(
    blobs: &Blobs,
    a: &Arc<Tree>,
    b: &Arc<Tree>,
) -> Result<Vec<NodeChange>, StoreError> {
    let mut out = Vec::new();
    diff_in(blobs, a, b, 0, 0, &mut out)?;
    // Sort references, not nodes: a node is large to move.
    out.sort_unstable_by_key(|c| c.0);
    Ok(out
        .into_iter()
        .map(|(id, old, new)| NodeChange {
            id,
            old: old.cloned(),
            new: new.cloned(),
        })
        .collect())
}

type Change<'a> = (NodeId, Option<&'a Node>, Option<&'a Node>);

fn same(a: &Arc<Tree>, b: &Arc<Tree>) -> bool {
    Arc::ptr_eq(a, b) || matches!((a.hash(), b.hash()), (Some(x), Some(y)) if x == y)
}

fn all<'a>(
    blobs: &Blobs,
    t: &'a Arc<Tree>,
    level: u32,
    prefix: u64,
) -> Result<Vec<&'a Node>, StoreError> {
    let mut nodes = Nodes::new(blobs, t);
    if level > 0 {
        // A subtree: its children are below `level`.
        nodes = Nodes {
            blobs: blobs.clone(),
            stack: Vec::new(),
            top: None,
            failed: false,
        };
        match &**t {
            Tree::Leaf(l) => return Ok(vec![&l.node]),
            Tree::Branch(br) => nodes.push_children(br, level, prefix),
        }
    }
    nodes.collect()
}

fn diff_in<'a>(
    blobs: &Blobs,
    a: &'a Arc<Tree>,
    b: &'a Arc<Tree>,
    level: u32,
    prefix: u64,
    out: &mut Vec<Change<'a>>,
) -> Result<(), StoreError> {
    if same(a, b) {
        return Ok(());
    }
    match (&**a, &**b) {
        (Tree::Leaf(la), Tree::Leaf(lb)) => {
            if la.node.id == lb.node.id {
                if la.node != lb.node {
                    out.push(change(Some(&la.node), Some(&lb.node)));
                }
            } else {
                out.push(change(Some(&la.node), None));
                out.push(change(None, Some(&lb.node)));
            }
        }
        (Tree::Leaf(la), Tree::Branch(_)) => {
            let mut found = false;
            for n in all(blobs, b, level, prefix)? {
                if n.id == la.node.id {
                    found = true;
                    if *n != la.node {
                        out.push(change(Some(&la.node), Some(n)));
                    }
                } else {
                    out.push(change(None, Some(n)));
                }
            }
            if !found {
                out.push(change(Some(&la.node), None));
            }
        }
        (Tree::Branch(_), Tree::Leaf(lb)) => {
            let mut found = false;
            for n in all(blobs, a, level, prefix)? {
                if n.id == lb.node.id {
                    found = true;
                    if *n != lb.node {
                        out.push(change(Some(n), Some(&lb.node)));
                    }
                } else {
                    out.push(change(Some(n), None));
                }
            }
            if !found {
                out.push(change(None, Some(&lb.node)));
            }
        }
        (Tree::Branch(ba), Tree::Branch(bb)) => {
            let (mut ia, mut ib) = (0usize, 0usize);
            for s in 0..32u32 {
                let bit = 1u32 << s;
                let ca = if ba.bitmap & bit != 0 {
                    ia += 1;
                    ba.children.get(ia - 1)
                } else {
                    None
                };
                let cb = if bb.bitmap & bit != 0 {
                    ib += 1;
                    bb.children.get(ib - 1)
                } else {
                    None
                };
                let sub = prefix | (u64::from(s) << (5 * level));
                match (ca, cb) {
                    (Some(x), Some(y)) => {
                        if matches!((link_hash(x), link_hash(y)), (Some(p), Some(q)) if p == q) {
                            continue;
                        }
                        let x = load(blobs, x, level + 1, sub)?;
                        let y = load(blobs, y, level + 1, sub)?;
                        diff_in(blobs, x, y, level + 1, sub, out)?;
                    }
                    (Some(x), None) => {
                        for n in Nodes::from_link(blobs, x, level + 1, sub) {
                            out.push(change(Some(n?), None));
                        }
                    }
                    (None, Some(y)) => {
                        for n in Nodes::from_link(blobs, y, level + 1, sub) {
                            out.push(change(None, Some(n?)));
                        }
                    }
                    (None, None) => {}
                }
            }
        }
    }
    Ok(())
}

fn change<'a>(old: Option<&'a Node>, new: Option<&'a Node>) -> Change<'a> {
    (old.or(new).map_or(0, |n| n.id), old, new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_read_low_bits_first() {
        // Levels 0 to 4: bits 24..0; 5 to 11: bits 63..29; 12: bits 28..25.
        assert_eq!(slot(route(1 << 24), 0), 16);
        assert_eq!(slot(route(1 << 20), 0), 1);
        assert_eq!(slot(route(0b1_0000), 4), 16);
        assert_eq!(slot(route(1 << 5), 3), 1);
        assert_eq!(slot(route(0b1_1111), 4), 31);
        assert_eq!(slot(route(1 << 63), 5), 16);
        assert_eq!(slot(route(1 << 29), 11), 1);
        assert_eq!(slot(route(0b1111 << 25), MAX_LEVEL), 15);
        // Every bit of the id lands on a distinct bit of the route.
        let mut seen = 0u64;
        for b in 0..64 {
            let r = route(1 << b);
            assert_eq!(r.count_ones(), 1, "bit {b}");
            assert_eq!(seen & r, 0, "bit {b}");
            seen |= r;
        }
        assert_eq!(seen, u64::MAX);
        // Consecutive ids share every level but the fifth.
        for id in [256u64, 1 << 20, 12_345_678] {
            let (a, b) = (route(id & !31), route(id | 31));
            assert_eq!(a & mask4(), b & mask4());
        }
    }

    fn mask4() -> u64 {
        (1 << 20) - 1
    }
}
