//! A persistent sorted map of byte strings, stored as content-addressed
//! blobs and read lazily: a copy-on-write B+tree.
//!
//! Leaves hold entries `key → value` in key order; an inner node holds, per
//! child, the child's greatest key, the number of entries below it and a
//! [`Link`] to it. A node splits in two when its encoding passes
//! `MAX_NODE_BYTES` and merges with a neighbour when it falls under a
//! quarter of that, so a blob stays a few kilobytes and a map of a million
//! entries is four levels deep.
//!
//! Persistence works like the version forest's trie: a change copies the
//! nodes on its path (`Arc::make_mut`) and shares the rest with the map it
//! started from, so a clone is O(1) and keeps its own state; `seal` names
//! every new node by the hash of its encoding; `export` yields the nodes
//! not yet stored; a map opened from a stored root loads a node the first
//! time a search passes through it, and checks it: its hash, its keys in
//! order and within the bounds its parent gives, its height and its
//! entry count. A damaged map is therefore an error, never a wrong answer.
//!
//! Keys are compared as bytes; callers encode what they index so that byte
//! order is the order they need (big-endian integers, for instance).

use std::cell::{Cell, OnceCell};
use std::sync::Arc;

use super::{Blobs, DecodeError, Hash, Link, StoreError};
use crate::repo::forest::codec::{self, Reader, Writer};
use crate::repo::prefetch::prefetch;

/// A node is split when its encoding grows past this many bytes.
pub const MAX_NODE_BYTES: usize = 4096;
/// A node this small merges with a neighbour when both fit in one.
const MIN_NODE_BYTES: usize = MAX_NODE_BYTES / 4;

type Bytes = Box<[u8]>;

struct Child {
    /// The greatest key below.
    max: Bytes,
    /// Entries below.
    len: u64,
    link: Link<MapNode>,
}

impl Clone for Child {
    fn clone(&self) -> Self {
        Child {
            max: self.max.clone(),
            len: self.len,
            link: self.link.clone(),
        }
    }
}

enum Body {
    Leaf(Vec<(Bytes, Bytes)>),
    /// Height ≥ 1: children are of height - 1.
    Inner(u8, Vec<Child>),
}

pub(crate) struct MapNode {
    body: Body,
    /// The size of the encoding, give or take the prefix compression.
    bytes: usize,
    hash: OnceCell<Hash>,
    saved: Cell<bool>,
}

impl Clone for MapNode {
    /// A copy about to be changed: a new blob, not hashed, not stored.
    fn clone(&self) -> Self {
        MapNode {
            body: match &self.body {
                Body::Leaf(e) => Body::Leaf(e.clone()),
                Body::Inner(h, c) => Body::Inner(*h, c.clone()),
            },
            bytes: self.bytes,
            hash: OnceCell::new(),
            saved: Cell::new(false),
        }
    }
}

/// The byte order of two keys, compared eight bytes at a time: keys
/// mostly differ in their first bytes, and `<[u8]>::cmp` calls `memcmp`
/// for each comparison of a search down the map.
#[inline]
fn key_cmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let mut i = 0;
    while let (Some(x), Some(y)) = (
        a.get(i..).and_then(<[u8]>::first_chunk::<8>),
        b.get(i..).and_then(<[u8]>::first_chunk::<8>),
    ) {
        if x != y {
            return u64::from_be_bytes(*x).cmp(&u64::from_be_bytes(*y));
        }
        i += 8;
    }
    a.get(i..).cmp(&b.get(i..))
}

/// How many of `items` (in key order) have a key below `key`: a binary
/// search like `partition_point`, which also asks memory for the two keys
/// its next step may compare while this step compares its own. Each key is
/// an allocation of its own, and a walk down a part of the map that is not
/// in the processor's cache otherwise waits on each in turn (searches read
/// a few walks' worth of the map for every query term).
fn keys_below<T>(items: &[T], key_of: impl Fn(&T) -> &[u8], key: &[u8]) -> usize {
    let (mut low, mut high) = (0, items.len());
    while low < high {
        let mid = low + (high - low) / 2;
        for next in [low + (mid - low) / 2, mid + 1 + (high - mid - 1) / 2] {
            if let Some(item) = items.get(next) {
                prefetch(key_of(item));
            }
        }
        match items.get(mid) {
            Some(item) if key_cmp(key_of(item), key).is_lt() => low = mid + 1,
            _ => high = mid,
        }
    }
    low
}

/// Where `key` is among a leaf's entries: `Ok` with its place, or `Err`
/// with the place it would take (as `binary_search_by` says it).
fn find_key(entries: &[(Bytes, Bytes)], key: &[u8]) -> Result<usize, usize> {
    let i = keys_below(entries, |(k, _)| k, key);
    match entries.get(i) {
        Some((k, _)) if **k == *key => Ok(i),
        _ => Err(i),
    }
}

fn entry_bytes(k: &[u8], v: &[u8]) -> usize {
    k.len() + v.len() + 4
}

fn child_bytes(c: &Child) -> usize {
    c.max.len() + 32 + 8
}

impl MapNode {
    fn leaf(entries: Vec<(Bytes, Bytes)>) -> MapNode {
        let bytes = 8 + entries
            .iter()
            .map(|(k, v)| entry_bytes(k, v))
            .sum::<usize>();
        MapNode {
            body: Body::Leaf(entries),
            bytes,
            hash: OnceCell::new(),
            saved: Cell::new(false),
        }
    }

    fn inner(height: u8, children: Vec<Child>) -> MapNode {
        let bytes = 8 + children.iter().map(child_bytes).sum::<usize>();
        MapNode {
            body: Body::Inner(height, children),
            bytes,
            hash: OnceCell::new(),
            saved: Cell::new(false),
        }
    }

    fn height(&self) -> u8 {
        match &self.body {
            Body::Leaf(_) => 0,
            Body::Inner(h, _) => *h,
        }
    }

    fn len(&self) -> u64 {
        match &self.body {
            Body::Leaf(e) => e.len() as u64,
            Body::Inner(_, c) => c.iter().map(|c| c.len).sum(),
        }
    }

    fn count(&self) -> usize {
        match &self.body {
            Body::Leaf(e) => e.len(),
            Body::Inner(_, c) => c.len(),
        }
    }

    fn max_key(&self) -> Option<&[u8]> {
        match &self.body {
            Body::Leaf(e) => e.last().map(|(k, _)| &**k),
            Body::Inner(_, c) => c.last().map(|c| &*c.max),
        }
    }

    fn as_child(node: MapNode) -> Option<Child> {
        let max: Bytes = node.max_key()?.into();
        let len = node.len();
        Some(Child {
            max,
            len,
            link: Link::Mem(Arc::new(node)),
        })
    }

    /// Splits a node that is too large in two halves by size; returns the
    /// right half.
    fn split(&mut self) -> Option<MapNode> {
        if self.bytes <= MAX_NODE_BYTES || self.count() < 2 {
            return None;
        }
        let half = self.bytes / 2;
        match &mut self.body {
            Body::Leaf(e) => {
                let mut acc = 8;
                let mut at = e.len() - 1;
                for (i, (k, v)) in e.iter().enumerate() {
                    acc += entry_bytes(k, v);
                    if acc >= half {
                        at = (i + 1).min(e.len() - 1);
                        break;
                    }
                }
                let right = e.split_off(at.max(1));
                let node = MapNode::leaf(right);
                self.bytes -= node.bytes - 8;
                Some(node)
            }
            Body::Inner(h, c) => {
                let mut acc = 8;
                let mut at = c.len() - 1;
                for (i, ch) in c.iter().enumerate() {
                    acc += child_bytes(ch);
                    if acc >= half {
                        at = (i + 1).min(c.len() - 1);
                        break;
                    }
                }
                let right = c.split_off(at.max(1));
                let node = MapNode::inner(*h, right);
                self.bytes -= node.bytes - 8;
                Some(node)
            }
        }
    }

    /// Appends `other` (whose keys all follow this node's).
    fn absorb(&mut self, other: &MapNode) {
        match (&mut self.body, &other.body) {
            (Body::Leaf(a), Body::Leaf(b)) => a.extend(b.iter().cloned()),
            (Body::Inner(_, a), Body::Inner(_, b)) => a.extend(b.iter().cloned()),
            _ => return,
        }
        self.bytes += other.bytes - 8;
    }

    fn encode(&self) -> Option<Vec<u8>> {
        let mut w = Writer::blob(match self.body {
            Body::Leaf(_) => codec::TAG_MAP_LEAF,
            Body::Inner(..) => codec::TAG_MAP_INNER,
        });
        fn key(w: &mut Writer, prev: &[u8], k: &[u8]) {
            let shared = prev.iter().zip(k).take_while(|(a, b)| a == b).count();
            w.uint(shared as u64);
            w.uint((k.len() - shared) as u64);
            w.buf.extend_from_slice(&k[shared..]);
        }
        let mut prev: &[u8] = &[];
        match &self.body {
            Body::Leaf(e) => {
                w.uint(e.len() as u64);
                for (k, v) in e {
                    key(&mut w, prev, k);
                    prev = k;
                    w.uint(v.len() as u64);
                    w.buf.extend_from_slice(v);
                }
            }
            Body::Inner(h, c) => {
                w.byte(*h);
                w.uint(c.len() as u64);
                for ch in c {
                    key(&mut w, prev, &ch.max);
                    prev = &ch.max;
                    w.uint(ch.len);
                    w.hash(&ch.link_hash()?);
                }
            }
        }
        Some(w.buf)
    }

    /// Names this node and every new node below it.
    fn seal(&self) -> Hash {
        if let Some(h) = self.hash.get() {
            return *h;
        }
        if let Body::Inner(_, c) = &self.body {
            for ch in c {
                if let Some(t) = ch.link.loaded() {
                    t.seal();
                }
            }
        }
        let h = codec::hash_bytes(&self.encode().unwrap_or_default());
        let _ = self.hash.set(h);
        h
    }
}

impl Child {
    fn link_hash(&self) -> Option<Hash> {
        self.link
            .stored_hash()
            .or_else(|| self.link.loaded().and_then(|t| t.hash.get().copied()))
    }
}

/// The node behind a link, to be changed: copied if shared, and no longer
/// named or stored (it is about to differ from its blob).
fn edit(node: &mut Arc<MapNode>) -> &mut MapNode {
    let node = Arc::make_mut(node);
    node.hash = OnceCell::new();
    node.saved.set(false);
    node
}

/// What a child must be, as its parent says: checked when it is loaded.
struct Expect<'a> {
    height: u8,
    /// Every key is greater than this.
    after: Option<&'a [u8]>,
    max: &'a [u8],
    len: u64,
}

impl<'a> Expect<'a> {
    /// What the node below a child with greatest key `max` and `len`
    /// entries, at `height`, must be.
    fn of(max: &'a [u8], len: u64, height: u8, after: Option<&'a [u8]>) -> Self {
        Expect {
            height,
            after,
            max,
            len,
        }
    }
}

fn decode(bytes: &[u8], hash: &Hash, want: Option<&Expect>) -> Result<MapNode, StoreError> {
    let corrupt = |error: DecodeError| StoreError::CorruptBlob { hash: *hash, error };
    let mut r = Reader::new(bytes);
    let leaf = bytes.get(1) == Some(&codec::TAG_MAP_LEAF);
    r.header(
        if leaf {
            codec::TAG_MAP_LEAF
        } else {
            codec::TAG_MAP_INNER
        },
        "a sorted map node",
    )
    .map_err(corrupt)?;
    let height = if leaf {
        0
    } else {
        r.byte("height").map_err(corrupt)?
    };
    let mut prev: Vec<u8> = Vec::new();
    let mut next_key = |r: &mut Reader, first: bool| -> Result<Bytes, DecodeError> {
        let shared = r.uint("shared key prefix")? as usize;
        if shared > prev.len() || (first && shared != 0) {
            return r.err("shared key prefix longer than the previous key");
        }
        let n = r.count("key suffix", 1)?;
        let suffix = r.take(n, "key suffix")?;
        let mut k = prev[..shared].to_vec();
        k.extend_from_slice(suffix);
        if !first && k.as_slice() <= prev.as_slice() {
            return r.err("keys out of order");
        }
        prev = k.clone();
        Ok(k.into_boxed_slice())
    };
    let node = if leaf {
        let n = r.count("entries", 3).map_err(corrupt)?;
        let mut e = Vec::with_capacity(n);
        for i in 0..n {
            let k = next_key(&mut r, i == 0).map_err(corrupt)?;
            let vn = r.count("value", 1).map_err(corrupt)?;
            let v: Bytes = r.take(vn, "value").map_err(corrupt)?.into();
            e.push((k, v));
        }
        MapNode::leaf(e)
    } else {
        let n = r.count("children", 35).map_err(corrupt)?;
        let mut c = Vec::with_capacity(n);
        for i in 0..n {
            let max = next_key(&mut r, i == 0).map_err(corrupt)?;
            let len = r.uint("entry count").map_err(corrupt)?;
            let h = r.hash("child").map_err(corrupt)?;
            c.push(Child {
                max,
                len,
                link: Link::stored(h),
            });
        }
        MapNode::inner(height, c)
    };
    r.end().map_err(corrupt)?;
    let Some(want) = want else { return Ok(node) };
    let bad = |what: &str| {
        StoreError::Inconsistent(format!(
            "sorted map node {}: {what}",
            crate::repo::cas::hex(hash)
        ))
    };
    if node.height() != want.height {
        return Err(bad("not at the height its parent says"));
    }
    if node.count() == 0 {
        return Err(bad("empty"));
    }
    if node.len() != want.len {
        return Err(bad("holds another number of entries than its parent says"));
    }
    if node.max_key() != Some(want.max) {
        return Err(bad("its greatest key is not the one its parent says"));
    }
    let first = match &node.body {
        Body::Leaf(e) => e.first().map(|(k, _)| &**k),
        Body::Inner(_, c) => c.first().map(|c| &*c.max),
    };
    if let (Some(after), Some(first)) = (want.after, first) {
        if first <= after {
            return Err(bad("holds a key that belongs to a node before it"));
        }
    }
    if let Body::Inner(_, c) = &node.body {
        if c.iter().any(|c| c.len == 0) {
            return Err(bad("has an empty child"));
        }
    }
    let _ = node.hash.set(*hash);
    node.saved.set(true);
    Ok(node)
}

/// The names of an inner node's children (for walks that follow every
/// link of a store, such as its garbage collection).
pub(crate) fn child_names(bytes: &[u8]) -> Result<Vec<Hash>, DecodeError> {
    let node = decode(bytes, &[0; 32], None).map_err(|e| match e {
        StoreError::CorruptBlob { error, .. } => error,
        other => DecodeError {
            offset: 0,
            what: other.to_string(),
        },
    })?;
    Ok(match node.body {
        Body::Inner(_, c) => c.iter().filter_map(|c| c.link.stored_hash()).collect(),
        Body::Leaf(_) => Vec::new(),
    })
}

/// A persistent sorted map `bytes → bytes`. Clones share everything until
/// one of them changes.
#[derive(Clone)]
pub struct SortedMap {
    /// The root's height and the root as its parent would see it.
    root: Option<(u8, Child)>,
    blobs: Blobs,
}

impl std::fmt::Debug for SortedMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SortedMap")
            .field("len", &self.len())
            .finish()
    }
}

/// The stored form of a non-empty map: its root's name, height, greatest
/// key and entry count (what a parent would say of it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapRoot {
    pub hash: Hash,
    pub height: u8,
    pub max: Vec<u8>,
    pub len: u64,
}

/// What changing a child did to it.
enum Outcome {
    /// Still there (possibly with a new greatest key and count).
    Kept,
    /// Split: the right half follows it.
    Split(MapNode),
    /// Emptied.
    Emptied,
}

impl SortedMap {
    /// An empty map whose stored parts, if any, come from `blobs`.
    pub fn new(blobs: Blobs) -> SortedMap {
        SortedMap { root: None, blobs }
    }

    /// The map stored under `root` (`None`: an empty map); nothing is read
    /// until it is searched.
    pub fn open(root: Option<&MapRoot>, blobs: Blobs) -> SortedMap {
        SortedMap {
            root: root.map(|r| {
                (
                    r.height,
                    Child {
                        max: r.max.clone().into_boxed_slice(),
                        len: r.len,
                        link: Link::stored(r.hash),
                    },
                )
            }),
            blobs,
        }
    }

    pub fn blobs(&self) -> &Blobs {
        &self.blobs
    }

    pub fn len(&self) -> u64 {
        self.root.as_ref().map_or(0, |(_, r)| r.len)
    }

    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    fn load<'a>(
        blobs: &'a Blobs,
        want: Expect<'a>,
    ) -> impl FnOnce(&Hash) -> Result<MapNode, StoreError> + 'a {
        move |h: &Hash| {
            let bytes = blobs.fetch(h, &|| "a sorted map node".to_string())?;
            decode(&bytes, h, Some(&want))
        }
    }

    fn child<'a>(
        blobs: &'a Blobs,
        c: &'a Child,
        height: u8,
        after: Option<&'a [u8]>,
    ) -> Result<&'a MapNode, StoreError> {
        let want = Expect::of(&c.max, c.len, height, after);
        c.link.get(Self::load(blobs, want)).map(|t| &**t)
    }

    /// The value stored under `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<&[u8]>, StoreError> {
        let Some((height, root)) = &self.root else {
            return Ok(None);
        };
        if key > &*root.max {
            return Ok(None);
        }
        let mut node = Self::child(&self.blobs, root, *height, None)?;
        loop {
            match &node.body {
                Body::Leaf(e) => {
                    return Ok(find_key(e, key)
                        .ok()
                        .and_then(|i| e.get(i))
                        .map(|(_, v)| &**v));
                }
                Body::Inner(h, c) => {
                    let i = keys_below(c, |c| &c.max, key);
                    let Some(ch) = c.get(i) else { return Ok(None) };
                    let after = i.checked_sub(1).map(|j| &*c[j].max);
                    node = Self::child(&self.blobs, ch, h - 1, after)?;
                }
            }
        }
    }

    /// Entries from the first key at or after `start`, in key order.
    pub fn range_from<'a>(&'a self, start: &[u8]) -> Range<'a> {
        let mut range = Range {
            blobs: &self.blobs,
            stack: Vec::new(),
            failed: None,
        };
        if let Some((height, root)) = &self.root {
            match Self::child(&self.blobs, root, *height, None) {
                Ok(node) => range.descend(node, Some(start)),
                Err(e) => range.failed = Some(e),
            }
        }
        range
    }

    /// Every entry, in key order.
    pub fn iter(&self) -> Range<'_> {
        self.range_from(&[])
    }

    /// Sets `key` to `value`; returns the value it replaces.
    pub fn insert(&mut self, key: &[u8], value: &[u8]) -> Result<Option<Bytes>, StoreError> {
        let blobs = self.blobs.clone();
        let Some((height, root)) = &mut self.root else {
            let node = MapNode::leaf(vec![(key.into(), value.into())]);
            self.root = MapNode::as_child(node).map(|c| (0, c));
            return Ok(None);
        };
        let (old, outcome) = Self::insert_in(&blobs, root, *height, None, key, value)?;
        if let Outcome::Split(right) = outcome {
            let right = MapNode::as_child(right);
            let left = root.clone();
            let node = MapNode::inner(
                *height + 1,
                [Some(left), right].into_iter().flatten().collect(),
            );
            *height += 1;
            if let Some(c) = MapNode::as_child(node) {
                *root = c;
            }
        }
        Ok(old)
    }

    /// Changes `c` (a node of `height`): its entry `key` set to `value`.
    fn insert_in(
        blobs: &Blobs,
        c: &mut Child,
        height: u8,
        after: Option<&[u8]>,
        key: &[u8],
        value: &[u8],
    ) -> Result<(Option<Bytes>, Outcome), StoreError> {
        let want = Expect::of(&c.max, c.len, height, after);
        let node = edit(c.link.get_mut(Self::load(blobs, want))?);
        let old = match &mut node.body {
            Body::Leaf(e) => match find_key(e, key) {
                Ok(i) => {
                    node.bytes = node.bytes + value.len() - e[i].1.len();
                    Some(std::mem::replace(&mut e[i].1, value.into()))
                }
                Err(i) => {
                    e.insert(i, (key.into(), value.into()));
                    node.bytes += entry_bytes(key, value);
                    None
                }
            },
            Body::Inner(h, children) => {
                let h = *h;
                let last = children.len() - 1;
                let i = keys_below(children, |c| &c.max, key).min(last);
                let (before, rest) = children.split_at_mut(i);
                let after = before.last().map(|c| &*c.max);
                let ch = &mut rest[0];
                let before_bytes = child_bytes(ch);
                let (old, outcome) = Self::insert_in(blobs, ch, h - 1, after, key, value)?;
                Self::refresh(ch);
                node.bytes = node.bytes + child_bytes(ch) - before_bytes;
                if let Outcome::Split(right) = outcome {
                    if let Some(r) = MapNode::as_child(right) {
                        node.bytes += child_bytes(&r);
                        children.insert(i + 1, r);
                    }
                }
                old
            }
        };
        let outcome = match node.split() {
            Some(right) => Outcome::Split(right),
            None => Outcome::Kept,
        };
        Self::refresh(c);
        Ok((old, outcome))
    }

    /// Updates what a parent says of a child that was changed in memory.
    fn refresh(c: &mut Child) {
        if let Some(node) = c.link.loaded() {
            c.len = node.len();
            if let Some(m) = node.max_key() {
                if *m != *c.max {
                    c.max = m.into();
                }
            }
        }
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &[u8]) -> Result<Option<Bytes>, StoreError> {
        let blobs = self.blobs.clone();
        let Some((height, root)) = &mut self.root else {
            return Ok(None);
        };
        if key > &*root.max {
            return Ok(None);
        }
        let (old, outcome) = Self::remove_in(&blobs, root, *height, None, key)?;
        if matches!(outcome, Outcome::Emptied) {
            self.root = None;
            return Ok(old);
        }
        // A root with one child gives way to it.
        loop {
            let Some((height, root)) = &mut self.root else {
                break;
            };
            let only = match root.link.loaded().map(|n| &n.body) {
                Some(Body::Inner(_, c)) if c.len() == 1 => c[0].clone(),
                _ => break,
            };
            *height -= 1;
            *root = only;
        }
        Ok(old)
    }

    fn remove_in(
        blobs: &Blobs,
        c: &mut Child,
        height: u8,
        after: Option<&[u8]>,
        key: &[u8],
    ) -> Result<(Option<Bytes>, Outcome), StoreError> {
        // Find first, so that a missing key copies nothing.
        let present = {
            let want = Expect::of(&c.max, c.len, height, after);
            let node = c.link.get(Self::load(blobs, want))?;
            match &node.body {
                Body::Leaf(e) => find_key(e, key).is_ok(),
                Body::Inner(..) => true,
            }
        };
        if !present {
            return Ok((None, Outcome::Kept));
        }
        let want = Expect::of(&c.max, c.len, height, after);
        let node = edit(c.link.get_mut(Self::load(blobs, want))?);
        let old = match &mut node.body {
            Body::Leaf(e) => match find_key(e, key) {
                Ok(i) => {
                    let (k, v) = e.remove(i);
                    node.bytes -= entry_bytes(&k, &v);
                    Some(v)
                }
                Err(_) => None,
            },
            Body::Inner(h, children) => {
                let h = *h;
                let i = keys_below(children, |c| &c.max, key);
                if i == children.len() {
                    return Ok((None, Outcome::Kept));
                }
                let (before, rest) = children.split_at_mut(i);
                let after = before.last().map(|c| &*c.max);
                let ch = &mut rest[0];
                let before_bytes = child_bytes(ch);
                let (old, outcome) = Self::remove_in(blobs, ch, h - 1, after, key)?;
                if matches!(outcome, Outcome::Emptied) {
                    children.remove(i);
                    node.bytes -= before_bytes;
                } else {
                    Self::refresh(ch);
                    node.bytes = node.bytes + child_bytes(ch) - before_bytes;
                    Self::merge_small(blobs, children, i, h - 1, &mut node.bytes)?;
                }
                old
            }
        };
        let outcome = if node.count() == 0 {
            Outcome::Emptied
        } else {
            Outcome::Kept
        };
        Self::refresh(c);
        Ok((old, outcome))
    }

    /// Merges child `i` with a neighbour when it has become small and both
    /// fit in one node.
    fn merge_small(
        blobs: &Blobs,
        children: &mut Vec<Child>,
        i: usize,
        height: u8,
        parent_bytes: &mut usize,
    ) -> Result<(), StoreError> {
        let small = children[i]
            .link
            .loaded()
            .is_some_and(|n| n.bytes < MIN_NODE_BYTES);
        if !small || children.len() < 2 {
            return Ok(());
        }
        let (l, r) = if i + 1 < children.len() {
            (i, i + 1)
        } else {
            (i - 1, i)
        };
        let after_r = Some(&*children[l].max).map(|m| m.to_vec());
        let right = {
            let c = &children[r];
            let want = Expect::of(&c.max, c.len, height, after_r.as_deref());
            c.link.get(Self::load(blobs, want))?.clone()
        };
        let after_l = l.checked_sub(1).map(|j| children[j].max.to_vec());
        let left_bytes = {
            let c = &children[l];
            let want = Expect::of(&c.max, c.len, height, after_l.as_deref());
            c.link.get(Self::load(blobs, want))?.bytes
        };
        if left_bytes + right.bytes > MAX_NODE_BYTES {
            return Ok(());
        }
        let removed_bytes = child_bytes(&children[l]) + child_bytes(&children[r]);
        let left = {
            let c = &mut children[l];
            let want = Expect::of(&c.max, c.len, height, after_l.as_deref());
            edit(c.link.get_mut(Self::load(blobs, want))?)
        };
        left.absorb(&right);
        children.remove(r);
        Self::refresh(&mut children[l]);
        *parent_bytes = *parent_bytes + child_bytes(&children[l]) - removed_bytes;
        Ok(())
    }

    /// Names every node made since the last seal; returns the stored form
    /// of the map (`None` when it is empty).
    pub fn seal(&self) -> Option<MapRoot> {
        let (height, root) = self.root.as_ref()?;
        let hash = match root.link.loaded() {
            Some(n) => n.seal(),
            None => root.link.stored_hash()?,
        };
        Some(MapRoot {
            hash,
            height: *height,
            max: root.max.to_vec(),
            len: root.len,
        })
    }

    /// The blobs of the nodes not stored yet (after `seal`), each once;
    /// they count as stored from now on.
    pub fn export(&self, out: &mut Vec<(Hash, Vec<u8>)>) {
        let Some((_, root)) = &self.root else { return };
        let mut stack: Vec<&MapNode> = root.link.loaded().map(|n| &**n).into_iter().collect();
        while let Some(node) = stack.pop() {
            if node.saved.get() {
                continue;
            }
            let (Some(hash), Some(bytes)) = (node.hash.get(), node.encode()) else {
                continue;
            };
            out.push((*hash, bytes));
            node.saved.set(true);
            if let Body::Inner(_, c) = &node.body {
                stack.extend(c.iter().filter_map(|c| c.link.loaded().map(|n| &**n)));
            }
        }
    }

    /// Every blob of the map not in `seen` (a set of names the caller
    /// has already), loading what is not loaded (for a full export or a
    /// check of the whole map). Maps of successive versions share most
    /// nodes: each is visited once.
    pub fn export_all(
        &self,
        seen: &mut std::collections::HashSet<Hash>,
        out: &mut Vec<(Hash, Vec<u8>)>,
    ) -> Result<(), StoreError> {
        let Some((height, root)) = &self.root else {
            return Ok(());
        };
        self.seal();
        if root.link_hash().is_some_and(|h| seen.contains(&h)) {
            return Ok(());
        }
        let mut stack = vec![Self::child(&self.blobs, root, *height, None)?];
        while let Some(node) = stack.pop() {
            if let (Some(hash), Some(bytes)) = (node.hash.get(), node.encode()) {
                if !seen.insert(*hash) {
                    continue;
                }
                out.push((*hash, bytes));
            }
            node.saved.set(true);
            if let Body::Inner(h, c) = &node.body {
                for (i, ch) in c.iter().enumerate() {
                    if ch.link_hash().is_some_and(|h| seen.contains(&h)) {
                        continue;
                    }
                    let after = i.checked_sub(1).map(|j| &*c[j].max);
                    stack.push(Self::child(&self.blobs, ch, h - 1, after)?);
                }
            }
        }
        Ok(())
    }
}

/// Entries in key order, loading nodes as it reaches them. A node that
/// fails to load ends the iteration with its error.
pub struct Range<'a> {
    blobs: &'a Blobs,
    /// The path to the current leaf: each node with the index of the next
    /// child (or entry) to visit.
    stack: Vec<(&'a MapNode, usize)>,
    failed: Option<StoreError>,
}

impl<'a> Range<'a> {
    /// Pushes the path from `node` down to the first entry at or after
    /// `start` (the leftmost entry for `None`).
    fn descend(&mut self, mut node: &'a MapNode, start: Option<&[u8]>) {
        loop {
            match &node.body {
                Body::Leaf(e) => {
                    let i = start.map_or(0, |s| keys_below(e, |(k, _)| k, s));
                    self.stack.push((node, i));
                    return;
                }
                Body::Inner(h, c) => {
                    let i = start.map_or(0, |s| keys_below(c, |c| &c.max, s));
                    self.stack.push((node, i + 1));
                    let Some(ch) = c.get(i) else { return };
                    let after = i.checked_sub(1).map(|j| &*c[j].max);
                    match SortedMap::child(self.blobs, ch, h - 1, after) {
                        Ok(n) => node = n,
                        Err(e) => {
                            self.failed = Some(e);
                            self.stack.clear();
                            return;
                        }
                    }
                }
            }
        }
    }
}

impl<'a> Iterator for Range<'a> {
    type Item = Result<(&'a [u8], &'a [u8]), StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(e) = self.failed.take() {
                return Some(Err(e));
            }
            let (node, i) = self.stack.last_mut()?;
            let node: &'a MapNode = node;
            match &node.body {
                Body::Leaf(e) => {
                    if let Some((k, v)) = e.get(*i) {
                        *i += 1;
                        return Some(Ok((k, v)));
                    }
                    self.stack.pop();
                }
                Body::Inner(h, c) => {
                    let at = *i;
                    let Some(ch) = c.get(at) else {
                        self.stack.pop();
                        continue;
                    };
                    *i += 1;
                    let after = at.checked_sub(1).map(|j| &*c[j].max);
                    match SortedMap::child(self.blobs, ch, h - 1, after) {
                        Ok(n) => self.descend(n, None),
                        Err(e) => {
                            self.stack.clear();
                            return Some(Err(e));
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::repo::cas::MemoryBlobs;

    use crate::test_rng::TestRng as Rng;

    fn key(r: &mut Rng) -> Vec<u8> {
        let n = 1 + r.below(24) as usize;
        (0..n).map(|_| b'a' + r.below(4) as u8).collect()
    }

    fn check(map: &SortedMap, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
        assert_eq!(map.len(), model.len() as u64);
        let all: Vec<(Vec<u8>, Vec<u8>)> = map
            .iter()
            .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())))
            .collect::<Result<_, _>>()
            .unwrap();
        let want: Vec<(Vec<u8>, Vec<u8>)> =
            model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_eq!(all, want);
    }

    #[test]
    fn keys_compare_as_bytes() {
        let mut r = Rng::new(11);
        let mut keys: Vec<Vec<u8>> = (0..400).map(|_| key(&mut r)).collect();
        keys.extend([vec![], vec![0], vec![0xff; 9], vec![0xff; 8], vec![1; 16]]);
        for a in &keys {
            for b in &keys {
                assert_eq!(key_cmp(a, b), a.cmp(b), "{a:?} against {b:?}");
            }
        }
    }

    #[test]
    fn keys_below_is_partition_point() {
        let mut r = Rng::new(12);
        let mut keys: Vec<Vec<u8>> = (0..300).map(|_| key(&mut r)).collect();
        keys.sort();
        keys.dedup();
        for n in [0, 1, 2, 3, 7, 64, keys.len()] {
            let items = &keys[..n];
            for probe in keys.iter().chain([&vec![], &vec![0xff; 30]]) {
                assert_eq!(
                    keys_below(items, |k| k, probe),
                    items.partition_point(|k| k < probe),
                    "{probe:?} among {n}"
                );
            }
        }
    }

    /// Random inserts and removals agree with a `BTreeMap`, in memory and
    /// after every round trip through a store (sealed, exported, opened
    /// lazily, changed further).
    #[test]
    fn random_changes_match_a_btreemap() {
        for seed in 1..=6u64 {
            let mut r = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let store = MemoryBlobs::new();
            let blobs = Blobs::new(store.clone());
            let mut map = SortedMap::new(blobs.clone());
            let mut model = BTreeMap::new();
            for round in 0..12 {
                for _ in 0..r.below(1500) {
                    let k = key(&mut r);
                    if r.below(3) == 0 {
                        assert_eq!(
                            map.remove(&k).unwrap().map(|v| v.to_vec()),
                            model.remove(&k)
                        );
                    } else {
                        let v = vec![b'v'; r.below(300) as usize];
                        assert_eq!(
                            map.insert(&k, &v).unwrap().map(|v| v.to_vec()),
                            model.insert(k.clone(), v)
                        );
                    }
                }
                for _ in 0..50 {
                    let k = key(&mut r);
                    assert_eq!(map.get(&k).unwrap(), model.get(&k).map(|v| &v[..]));
                    let from: Vec<Vec<u8>> = map
                        .range_from(&k)
                        .take(5)
                        .map(|e| e.unwrap().0.to_vec())
                        .collect();
                    let want: Vec<Vec<u8>> = model
                        .range(k.clone()..)
                        .take(5)
                        .map(|(k, _)| k.clone())
                        .collect();
                    assert_eq!(from, want);
                }
                check(&map, &model);
                let root = map.seal();
                let mut out = Vec::new();
                map.export(&mut out);
                store.extend(out);
                if round % 2 == 1 {
                    // Reopened from the store: everything is loaded lazily.
                    map = SortedMap::open(root.as_ref(), blobs.clone());
                    check(&map, &model);
                }
            }
        }
    }

    /// A clone keeps its own state while the original changes.
    #[test]
    fn clones_are_independent() {
        let mut a = SortedMap::new(Blobs::none());
        for i in 0u32..2000 {
            a.insert(&i.to_be_bytes(), b"x").unwrap();
        }
        let b = a.clone();
        for i in 0u32..1000 {
            a.remove(&i.to_be_bytes()).unwrap();
        }
        assert_eq!(a.len(), 1000);
        assert_eq!(b.len(), 2000);
        assert_eq!(b.get(&5u32.to_be_bytes()).unwrap(), Some(&b"x"[..]));
        assert_eq!(a.get(&5u32.to_be_bytes()).unwrap(), None);
    }

    /// An export after a small change carries only the nodes on its path.
    #[test]
    fn exports_are_proportional_to_the_change() {
        let store = MemoryBlobs::new();
        let mut map = SortedMap::new(Blobs::new(store.clone()));
        for i in 0u32..100_000 {
            map.insert(&i.to_be_bytes(), b"value").unwrap();
        }
        map.seal();
        let mut out = Vec::new();
        map.export(&mut out);
        assert!(out.len() > 100, "{} nodes", out.len());
        map.insert(&7u32.to_be_bytes(), b"other").unwrap();
        map.seal();
        let mut out = Vec::new();
        map.export(&mut out);
        assert!(out.len() <= 4, "{} nodes for one change", out.len());
    }

    /// Every byte of every stored node flipped, and every node missing: a
    /// full read fails with an error, never a wrong answer.
    #[test]
    fn damage_is_an_error() {
        let store = MemoryBlobs::new();
        let blobs = Blobs::new(store.clone());
        let mut map = SortedMap::new(blobs.clone());
        for i in 0u32..600 {
            map.insert(format!("key{i}").as_bytes(), &i.to_le_bytes())
                .unwrap();
        }
        let root = map.seal();
        let mut out = Vec::new();
        map.export(&mut out);
        store.extend(out.clone());
        let read_all = || -> Result<Vec<(Vec<u8>, Vec<u8>)>, StoreError> {
            let m = SortedMap::open(root.as_ref(), Blobs::new(store.clone()));
            m.iter()
                .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())))
                .collect()
        };
        let good = read_all().unwrap();
        assert_eq!(good.len(), 600);
        for (name, bytes) in &out {
            for i in (0..bytes.len()).step_by(7) {
                store.with_blob(name, |b| b[i] ^= 0x20);
                assert!(
                    read_all().is_err(),
                    "flipped byte {i} of a node went unnoticed"
                );
                store.with_blob(name, |b| b[i] ^= 0x20);
            }
            let saved = store.remove(name).unwrap();
            assert!(matches!(read_all(), Err(StoreError::MissingBlob { .. })));
            store.put(*name, saved);
        }
        assert_eq!(read_all().unwrap(), good);
    }
}
