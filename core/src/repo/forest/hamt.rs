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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::codec;
use super::Hash;
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

pub(crate) enum Tree {
    Leaf(Leaf),
    Branch(Branch),
}

pub(crate) struct Leaf {
    pub(crate) node: Node,
    pub(crate) hash: Hash,
    /// Whether this blob is known to be in the caller's store.
    pub(crate) saved: AtomicBool,
}

pub(crate) struct Branch {
    /// Bit `i` set: slot `i` is occupied; `children` lists occupied slots in
    /// order.
    pub(crate) bitmap: u32,
    pub(crate) children: Vec<Arc<Tree>>,
    /// Number of keys below.
    pub(crate) len: u64,
    /// `None` while the branch is being edited.
    pub(crate) hash: Option<Hash>,
    pub(crate) saved: AtomicBool,
}

impl Clone for Tree {
    /// Used by `Arc::make_mut` to copy a shared branch before editing it: the
    /// copy is a new blob, not hashed and not saved yet.
    fn clone(&self) -> Self {
        match self {
            Tree::Leaf(l) => Tree::Leaf(Leaf {
                node: l.node.clone(),
                hash: l.hash,
                saved: AtomicBool::new(false),
            }),
            Tree::Branch(b) => Tree::Branch(Branch {
                bitmap: b.bitmap,
                children: b.children.clone(),
                len: b.len,
                hash: None,
                saved: AtomicBool::new(false),
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
            saved: AtomicBool::new(false),
        }))
    }

    /// A shared empty tree, for readers that need one to point at.
    pub(crate) const EMPTY: Tree = Tree::Branch(Branch {
        bitmap: 0,
        children: Vec::new(),
        len: 0,
        hash: None,
        saved: AtomicBool::new(false),
    });

    pub(crate) fn empty() -> Arc<Tree> {
        Arc::new(Tree::Branch(Branch {
            bitmap: 0,
            children: Vec::new(),
            len: 0,
            hash: None,
            saved: AtomicBool::new(false),
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
            Tree::Branch(b) => b.hash,
        }
    }

    pub(crate) fn saved(&self) -> &AtomicBool {
        match self {
            Tree::Leaf(l) => &l.saved,
            Tree::Branch(b) => &b.saved,
        }
    }

    pub(crate) fn is_saved(&self) -> bool {
        self.saved().load(Ordering::Relaxed)
    }

    pub(crate) fn mark_saved(&self) {
        self.saved().store(true, Ordering::Relaxed)
    }
}

pub(crate) fn get(root: &Arc<Tree>, id: NodeId) -> Option<&Node> {
    let h = route(id);
    let mut tree: &Tree = root;
    let mut level = 0;
    loop {
        match tree {
            Tree::Leaf(l) => return (l.node.id == id).then_some(&l.node),
            Tree::Branch(b) => {
                let bit = 1u32 << slot(h, level);
                if b.bitmap & bit == 0 {
                    return None;
                }
                let idx = (b.bitmap & (bit - 1)).count_ones() as usize;
                tree = b.children.get(idx)?;
                level += 1;
            }
        }
    }
}

/// The branch inside a tree that the caller knows to be a branch (a root).
fn branch_mut(tree: &mut Arc<Tree>) -> Option<&mut Branch> {
    match Arc::make_mut(tree) {
        Tree::Branch(b) => Some(b),
        Tree::Leaf(_) => None,
    }
}

/// Inserts or replaces the node with the leaf's id. Returns the node it
/// replaced. `root` must be a branch (every version's root is).
pub(crate) fn insert(root: &mut Arc<Tree>, leaf: Arc<Tree>) -> Option<Node> {
    let id = match &*leaf {
        Tree::Leaf(l) => l.node.id,
        Tree::Branch(_) => return None,
    };
    let b = branch_mut(root)?;
    insert_in(b, 0, route(id), id, leaf)
}

fn insert_in(b: &mut Branch, level: u32, h: u64, id: NodeId, leaf: Arc<Tree>) -> Option<Node> {
    b.hash = None;
    let bit = 1u32 << slot(h, level);
    let idx = (b.bitmap & (bit - 1)).count_ones() as usize;
    if b.bitmap & bit == 0 {
        b.children.insert(idx, leaf);
        b.bitmap |= bit;
        b.len += 1;
        return None;
    }
    let child = &mut b.children[idx];
    let replaced = match &**child {
        Tree::Leaf(existing) if existing.node.id == id => Some(existing.node.clone()),
        Tree::Leaf(existing) => {
            // Two keys now share this slot: push both one level down.
            let other = route(existing.node.id);
            let other_id = existing.node.id;
            let old = child.clone();
            let mut sub = Tree::empty();
            if let Some(sb) = branch_mut(&mut sub) {
                insert_in(sb, level + 1, other, other_id, old);
                insert_in(sb, level + 1, h, id, leaf);
            }
            *child = sub;
            b.len += 1;
            return None;
        }
        Tree::Branch(_) => {
            let r = match Arc::make_mut(child) {
                Tree::Branch(sub) => insert_in(sub, level + 1, h, id, leaf),
                Tree::Leaf(_) => None,
            };
            if r.is_none() {
                b.len += 1;
            }
            return r;
        }
    };
    *child = leaf;
    replaced
}

/// Removes the node with this id; returns it if it was there. Call only
/// after `get` found it, so that no branch is copied for nothing.
pub(crate) fn remove(root: &mut Arc<Tree>, id: NodeId) -> Option<Node> {
    let b = branch_mut(root)?;
    remove_in(b, 0, route(id), id)
}

fn remove_in(b: &mut Branch, level: u32, h: u64, id: NodeId) -> Option<Node> {
    let bit = 1u32 << slot(h, level);
    if b.bitmap & bit == 0 {
        return None;
    }
    let idx = (b.bitmap & (bit - 1)).count_ones() as usize;
    let removed = match &*b.children[idx] {
        Tree::Leaf(l) if l.node.id == id => {
            let node = l.node.clone();
            b.children.remove(idx);
            b.bitmap &= !bit;
            Some(node)
        }
        Tree::Leaf(_) => None,
        Tree::Branch(_) => {
            let child = &mut b.children[idx];
            let (r, collapse) = match Arc::make_mut(child) {
                Tree::Branch(sub) => {
                    let r = remove_in(sub, level + 1, h, id);
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
                *child = only;
            }
            r
        }
    };
    if removed.is_some() {
        b.len -= 1;
        b.hash = None;
    }
    removed
}

/// Computes the hash of every branch made since the last seal.
pub(crate) fn seal(tree: &mut Arc<Tree>) -> Hash {
    if let Some(h) = tree.hash() {
        return h;
    }
    let Tree::Branch(b) = Arc::make_mut(tree) else {
        // Leaves are hashed when made; unreachable in practice.
        return [0; 32];
    };
    let mut hashes = Vec::with_capacity(b.children.len());
    for c in &mut b.children {
        hashes.push(seal(c));
    }
    let h = codec::hash_bytes(&codec::encode_branch(b.bitmap, &hashes));
    b.hash = Some(h);
    h
}

/// Every node of a tree, in trie order, without recursion.
pub struct Nodes<'a> {
    stack: Vec<&'a Tree>,
}

impl<'a> Nodes<'a> {
    pub(crate) fn new(root: &'a Tree) -> Self {
        Nodes { stack: vec![root] }
    }
}

impl<'a> Iterator for Nodes<'a> {
    type Item = &'a Node;
    fn next(&mut self) -> Option<&'a Node> {
        while let Some(t) = self.stack.pop() {
            match t {
                Tree::Leaf(l) => return Some(&l.node),
                Tree::Branch(b) => self.stack.extend(b.children.iter().rev().map(|c| &**c)),
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
/// Subtrees that are the same object or have the same hash are skipped, so
/// the cost follows the size of the difference, not of the maps.
pub(crate) fn diff(a: &Arc<Tree>, b: &Arc<Tree>) -> Vec<NodeChange> {
    let mut out = Vec::new();
    diff_in(a, b, &mut out);
    // Sort references, not nodes: a node is large to move.
    out.sort_unstable_by_key(|c| c.0);
    out.into_iter()
        .map(|(id, old, new)| NodeChange {
            id,
            old: old.cloned(),
            new: new.cloned(),
        })
        .collect()
}

type Change<'a> = (NodeId, Option<&'a Node>, Option<&'a Node>);

fn same(a: &Arc<Tree>, b: &Arc<Tree>) -> bool {
    Arc::ptr_eq(a, b) || matches!((a.hash(), b.hash()), (Some(x), Some(y)) if x == y)
}

fn diff_in<'a>(a: &'a Arc<Tree>, b: &'a Arc<Tree>, out: &mut Vec<Change<'a>>) {
    if same(a, b) {
        return;
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
            for n in Nodes::new(b) {
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
            for n in Nodes::new(a) {
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
                match (ca, cb) {
                    (Some(x), Some(y)) => diff_in(x, y, out),
                    (Some(x), None) => out.extend(Nodes::new(x).map(|n| change(Some(n), None))),
                    (None, Some(y)) => out.extend(Nodes::new(y).map(|n| change(None, Some(n)))),
                    (None, None) => {}
                }
            }
        }
    }
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
