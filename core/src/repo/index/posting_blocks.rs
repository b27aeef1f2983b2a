//! A term's posting list kept in blocks: many postings per entry of a
//! sorted map, so that reading a list decodes a few packed values in a row
//! instead of walking one map entry per posting.
//!
//! A list lives under its term's key (`prefix`, given by the caller) in
//! entries keyed `prefix id`, `id` eight big-endian bytes. Where a list is
//! cut into blocks depends only on what it holds, never on the order of
//! the changes that made it: a node id is a *boundary* when a hash of it is
//! 0 modulo `SPAN`, and a block ends at each boundary the list holds. An
//! entry's key is its block's last id when that id is a boundary, and
//! `u64::MAX` for the block after the last boundary (so every id finds its
//! block as the first key at or after `prefix id`). Blocks hold `SPAN`
//! postings on average; equal lists make equal entries.
//!
//! A block's value: its postings in fixed-width fields
//! (`packed_postings`), or, as blocks were first kept (and still are
//! where a value is too wide to pack), the number of postings, then for
//! each the id (the first whole, the others as the difference from the
//! one before), the term's count in the node and the node's length (both
//! in the caller's units), each in LEB128. Blocks of both kinds are read;
//! a block changed is written packed. Every block read is checked: ids
//! ascending and within its key, counts positive and at most the length;
//! one that does not decode is a `StoreError` naming what is wrong.

use std::collections::BTreeMap;

use crate::repo::cas::sorted::SortedMap;
use crate::repo::cas::StoreError;
use crate::repo::forest::codec::{Reader, Writer};
use crate::repo::node::NodeId;
use crate::repo::prefetch::prefetch;

use super::packed_postings::{self, Columns};

/// The mean number of postings in a block.
const SPAN: u64 = 64;
/// The key of the block after a list's last boundary.
const OPEN: NodeId = NodeId::MAX;

/// One posting: (node, count, length), count and length in the caller's
/// units.
pub use super::packed_postings::Posting;

/// Whether a block ends at `id` (a hash of it is 0 modulo `SPAN`).
fn boundary(id: NodeId) -> bool {
    // splitmix64's finaliser: consecutive ids scatter.
    let mut z = id.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    z.is_multiple_of(SPAN)
}

fn block_key(prefix: &[u8], id: NodeId) -> Vec<u8> {
    let mut k = Vec::with_capacity(prefix.len() + 8);
    k.extend_from_slice(prefix);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

fn damaged(prefix: &[u8], what: String) -> StoreError {
    let term = String::from_utf8_lossy(prefix.get(3..).unwrap_or_default());
    StoreError::Inconsistent(format!(
        "the lexical index: the postings of {term:?}: {what}"
    ))
}

fn encode(block: &[Posting]) -> Vec<u8> {
    packed_postings::encode(block).unwrap_or_else(|| encode_leb128(block))
}

/// A block of LEB128 numbers (how blocks were first kept).
fn encode_leb128(block: &[Posting]) -> Vec<u8> {
    let mut w = Writer {
        buf: Vec::with_capacity(4 + block.len() * 5),
    };
    w.uint(block.len() as u64);
    let mut last = 0;
    for (i, &(id, count, len)) in block.iter().enumerate() {
        w.uint(if i == 0 { id } else { id - last });
        w.uint(count);
        w.uint(len);
        last = id;
    }
    w.buf
}

/// The postings of the block keyed `key` into `out` (emptied first).
fn decode_into(
    prefix: &[u8],
    key: NodeId,
    bytes: &[u8],
    out: &mut Vec<Posting>,
) -> Result<(), StoreError> {
    if bytes.first() != Some(&packed_postings::FORMAT) {
        out.clear();
        return decode_leb128(prefix, key, bytes, |p| {
            out.push(p);
            true
        })
        .map(drop);
    }
    packed_postings::decode(bytes, out)
        .map_err(|what| damaged(prefix, format!("{}: {what}", key_name(key))))?;
    past_end(prefix, key, out.last().map(|p| p.0))
}

/// An error if `last`, the last id of the block keyed `key` (ids ascend:
/// the largest), is past the block's end.
fn past_end(prefix: &[u8], key: NodeId, last: Option<NodeId>) -> Result<(), StoreError> {
    match last {
        Some(id) if id > key => Err(damaged(
            prefix,
            format!("{} holds node {id}, past its end", key_name(key)),
        )),
        _ => Ok(()),
    }
}

/// Calls `f` with each posting of the block keyed `key` (in id order)
/// until it returns false; false if it did.
fn decode(
    prefix: &[u8],
    key: NodeId,
    bytes: &[u8],
    f: impl FnMut(Posting) -> bool,
) -> Result<bool, StoreError> {
    if bytes.first() != Some(&packed_postings::FORMAT) {
        return decode_leb128(prefix, key, bytes, f);
    }
    let mut block = Vec::new();
    decode_into(prefix, key, bytes, &mut block)?;
    Ok(block.into_iter().all(f))
}

/// `decode` of a block of LEB128 numbers.
fn decode_leb128(
    prefix: &[u8],
    key: NodeId,
    bytes: &[u8],
    mut f: impl FnMut(Posting) -> bool,
) -> Result<bool, StoreError> {
    let mut r = Reader::new(bytes);
    let bad = |e: crate::repo::cas::DecodeError| {
        damaged(
            prefix,
            format!("{}: {} at byte {}", key_name(key), e.what, e.offset),
        )
    };
    let n = r.uint("a block's size").map_err(bad)?;
    if n == 0 {
        return Err(damaged(prefix, format!("{} is empty", key_name(key))));
    }
    let mut last: NodeId = 0;
    for i in 0..n {
        let step = r.uint("a node id").map_err(bad)?;
        let id = if i == 0 {
            step
        } else if step == 0 {
            return Err(damaged(
                prefix,
                format!("{} repeats node {last}", key_name(key)),
            ));
        } else {
            last.checked_add(step)
                .ok_or_else(|| damaged(prefix, format!("{} overflows", key_name(key))))?
        };
        let count = r.uint("a count").map_err(bad)?;
        let len = r.uint("a length").map_err(bad)?;
        if id > key {
            return Err(damaged(
                prefix,
                format!("{} holds node {id}, past its end", key_name(key)),
            ));
        }
        if count == 0 || count > len {
            return Err(damaged(
                prefix,
                format!(
                    "{}: node {id} counts {count} of a length {len}",
                    key_name(key)
                ),
            ));
        }
        last = id;
        if !f((id, count, len)) {
            return Ok(false);
        }
    }
    r.end().map_err(bad)?;
    Ok(true)
}

fn key_name(key: NodeId) -> String {
    if key == OPEN {
        "the last block".into()
    } else {
        format!("the block ending at node {key}")
    }
}

/// The id a block's key names, if `k` is a block key under `prefix`.
fn key_id(prefix: &[u8], k: &[u8]) -> Option<NodeId> {
    let n = prefix.len();
    if k.len() == n + 8 && k[..n] == *prefix {
        Some(NodeId::from_be_bytes(k[n..].try_into().ok()?))
    } else {
        None
    }
}

/// The block `id` belongs in: its key and postings, or `None` if the list
/// has no block at or after `id`.
fn block_of(
    map: &SortedMap,
    prefix: &[u8],
    id: NodeId,
) -> Result<Option<(NodeId, Vec<Posting>)>, StoreError> {
    let Some((key, v)) = first_block(map, prefix, id)? else {
        return Ok(None);
    };
    Ok(Some((key, decoded(prefix, key, v)?)))
}

/// The postings of the block keyed `key`.
fn decoded(prefix: &[u8], key: NodeId, bytes: &[u8]) -> Result<Vec<Posting>, StoreError> {
    let mut block = Vec::with_capacity(2 * SPAN as usize);
    decode_into(prefix, key, bytes, &mut block)?;
    Ok(block)
}

fn put(
    map: &mut SortedMap,
    prefix: &[u8],
    key: NodeId,
    block: &[Posting],
) -> Result<(), StoreError> {
    if block.is_empty() {
        map.remove(&block_key(prefix, key))?;
    } else {
        map.insert(&block_key(prefix, key), &encode(block))?;
    }
    Ok(())
}

/// Adds (or replaces) node `id`'s posting in the list under `prefix`.
pub fn insert(
    map: &mut SortedMap,
    prefix: &[u8],
    id: NodeId,
    count: u64,
    len: u64,
) -> Result<(), StoreError> {
    let (key, mut block) = block_of(map, prefix, id)?.unwrap_or((OPEN, Vec::new()));
    match block.binary_search_by_key(&id, |p| p.0) {
        Ok(i) => block[i] = (id, count, len),
        Err(i) => block.insert(i, (id, count, len)),
    }
    if boundary(id) && id != key {
        // The block now ends at `id`; what follows it keeps the old key.
        let at = block.partition_point(|p| p.0 <= id);
        put(map, prefix, key, &block[at..])?;
        put(map, prefix, id, &block[..at])
    } else {
        put(map, prefix, key, &block)
    }
}

/// Removes node `id`'s posting from the list under `prefix`; whether there
/// was one.
pub fn remove(map: &mut SortedMap, prefix: &[u8], id: NodeId) -> Result<bool, StoreError> {
    let Some((key, mut block)) = block_of(map, prefix, id)? else {
        return Ok(false);
    };
    let Ok(i) = block.binary_search_by_key(&id, |p| p.0) else {
        return Ok(false);
    };
    block.remove(i);
    if id == key && key != OPEN {
        // The boundary goes: the block joins the next one.
        map.remove(&block_key(prefix, key))?;
        let (next, mut rest) = block_of(map, prefix, id)?.unwrap_or((OPEN, Vec::new()));
        block.append(&mut rest);
        put(map, prefix, next, &block)?;
    } else {
        put(map, prefix, key, &block)?;
    }
    Ok(true)
}

/// The key and bytes of the block `id` belongs in under `prefix`, or
/// `None` if the list has no block at or after `id`.
fn first_block<'a>(
    map: &'a SortedMap,
    prefix: &[u8],
    id: NodeId,
) -> Result<Option<(NodeId, &'a [u8])>, StoreError> {
    let Some(first) = map.range_from(&block_key(prefix, id)).next() else {
        return Ok(None);
    };
    let (k, v) = first?;
    Ok(key_id(prefix, k).map(|key| (key, v)))
}

/// Node `id`'s posting in the list under `prefix`, if it has one.
pub fn get(map: &SortedMap, prefix: &[u8], id: NodeId) -> Result<Option<Posting>, StoreError> {
    let Some((key, v)) = first_block(map, prefix, id)? else {
        return Ok(None);
    };
    let mut found = None;
    decode(prefix, key, v, |p| {
        if p.0 >= id {
            found = (p.0 == id).then_some(p);
            return false;
        }
        true
    })?;
    Ok(found)
}

/// Looks nodes up in one list, keeping every block it decodes, so that a
/// block is decoded once however many of its nodes are asked for (a
/// search scoring hundreds of candidates meets each block many times).
pub struct Lookups {
    prefix: Vec<u8>,
    /// By block key: the least id known to belong in the block (no block
    /// has a key from it up to this one), and the block's postings.
    blocks: BTreeMap<NodeId, (NodeId, Vec<Posting>)>,
}

impl Lookups {
    /// Lookups in the list under `prefix`.
    pub fn new(prefix: Vec<u8>) -> Lookups {
        Lookups {
            prefix,
            blocks: BTreeMap::new(),
        }
    }

    /// Node `id`'s posting, if it has one (what `get` gives).
    pub fn get(&mut self, map: &SortedMap, id: NodeId) -> Result<Option<Posting>, StoreError> {
        let find = |block: &[Posting]| {
            block
                .binary_search_by_key(&id, |p| p.0)
                .ok()
                .map(|i| block[i])
        };
        // The block `id` belongs in is the first whose key is at or after
        // it; a block kept covers every id from the least met in it.
        if let Some((_, (low, block))) = self.blocks.range(id..).next() {
            if *low <= id {
                return Ok(find(block));
            }
        }
        // Met again from further down: known, not decoded again. With no
        // block at or after `id`, no id from it on is in the list.
        let (key, block) = match first_block(map, &self.prefix, id)? {
            Some((key, bytes)) if !self.blocks.contains_key(&key) => {
                (key, decoded(&self.prefix, key, bytes)?)
            }
            Some((key, _)) => (key, Vec::new()),
            None => (OPEN, Vec::new()),
        };
        let entry = self.blocks.entry(key).or_insert((id, block));
        entry.0 = entry.0.min(id);
        Ok(find(&entry.1))
    }
}

/// Calls `f` with the key and bytes of each block of the list under
/// `prefix`, in id order, until it returns false.
fn each_block(
    map: &SortedMap,
    prefix: &[u8],
    mut f: impl FnMut(NodeId, &[u8]) -> Result<bool, StoreError>,
) -> Result<(), StoreError> {
    let mut range = map.range_from(&block_key(prefix, 0));
    // The next entries' keys and bytes are asked of memory `AHEAD` blocks
    // before they are decoded (`prefetch`), and a key is looked at only
    // when its block's turn comes: so the entries a few past the list's
    // end are reached too (one more leaf of the map loaded at most, and
    // any error there not reported: the list ends before it).
    let mut ahead = std::collections::VecDeque::with_capacity(AHEAD + 1);
    let mut more = true;
    loop {
        while more && ahead.len() <= AHEAD {
            match range.next() {
                Some(Ok((k, v))) => {
                    prefetch(k);
                    prefetch(v);
                    ahead.push_back(Ok((k, v)));
                }
                Some(Err(e)) => {
                    ahead.push_back(Err(e));
                    more = false;
                }
                None => more = false,
            }
        }
        let Some(next) = ahead.pop_front() else {
            return Ok(());
        };
        let (k, v) = next?;
        let Some(key) = key_id(prefix, k) else {
            return Ok(());
        };
        if !f(key, v)? {
            return Ok(());
        }
    }
}

/// How many blocks ahead of the one decoded `each_block` asks for (8
/// measured a little faster than 4 at a million nodes; with the keys
/// asked ahead too, a query takes about 0.93x of the time it took without;
/// docs/PERFORMANCE.md).
const AHEAD: usize = 8;

/// Calls `f` with each posting of the list under `prefix`, in id order,
/// until it returns false.
pub fn scan(
    map: &SortedMap,
    prefix: &[u8],
    f: &mut dyn FnMut(Posting) -> bool,
) -> Result<(), StoreError> {
    each_block(map, prefix, |key, v| decode(prefix, key, v, &mut *f))
}

/// Calls `f` with the postings of each block of the list under `prefix`,
/// in id order, as columns: what `scan` gives, a block at a time, for a
/// caller that reads whole lists (a call per block, not per posting: 2-5%
/// of a Chinese query's time at 1M, docs/PERFORMANCE.md).
pub fn scan_columns(
    map: &SortedMap,
    prefix: &[u8],
    f: &mut dyn FnMut(&Columns),
) -> Result<(), StoreError> {
    let mut block = Columns::default();
    let mut rows = Vec::new();
    each_block(map, prefix, |key, v| {
        if v.first() == Some(&packed_postings::FORMAT) {
            block
                .decode(v)
                .map_err(|what| damaged(prefix, format!("{}: {what}", key_name(key))))?;
            past_end(prefix, key, block.ids.last().copied())?;
        } else {
            decode_into(prefix, key, v, &mut rows)?;
            block.set_rows(&rows);
        }
        f(&block);
        Ok(true)
    })
}

/// The postings of `ids` (ascending) in the list under `prefix`: `f`
/// gets each id's place in `ids` and its (count, length), for the ids the
/// list holds. The list's blocks are walked in order, and only those
/// holding one of `ids` are decoded: for many nodes of a long list, one
/// pass instead of a walk down the map for each.
pub fn lookup_sorted(
    map: &SortedMap,
    prefix: &[u8],
    ids: &[NodeId],
    f: &mut dyn FnMut(usize, u32, u32),
) -> Result<(), StoreError> {
    let mut block = Columns::default();
    let mut rows = Vec::new();
    let mut at = 0;
    each_block(map, prefix, |key, v| {
        // A block holds the ids after the key before it, up to its own.
        if ids.get(at).is_none_or(|&id| id > key) {
            return Ok(at < ids.len());
        }
        if v.first() == Some(&packed_postings::FORMAT) {
            block
                .decode(v)
                .map_err(|what| damaged(prefix, format!("{}: {what}", key_name(key))))?;
            past_end(prefix, key, block.ids.last().copied())?;
        } else {
            decode_into(prefix, key, v, &mut rows)?;
            block.set_rows(&rows);
        }
        let mut from = 0;
        while let Some(&id) = ids.get(at).filter(|&&id| id <= key) {
            match block.ids[from..].binary_search(&id) {
                Ok(i) => {
                    f(at, block.counts[from + i], block.lens[from + i]);
                    from += i + 1;
                }
                Err(i) => from += i,
            }
            at += 1;
        }
        Ok(at < ids.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::cas::Blobs;

    const TERM: &[u8] = &[2, 0, 4, b's', b'o', b'r', b't'];

    fn all(map: &SortedMap, prefix: &[u8]) -> Vec<Posting> {
        let mut out = Vec::new();
        scan(map, prefix, &mut |p| {
            out.push(p);
            true
        })
        .unwrap();
        out
    }

    fn entries(map: &SortedMap) -> Vec<(Vec<u8>, Vec<u8>)> {
        map.iter()
            .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
            .collect()
    }

    #[test]
    fn nodes_looked_up_at_once_are_found_as_one_by_one() {
        let mut map = SortedMap::new(Blobs::none());
        let held: Vec<NodeId> = (0..2000u64).map(|i| i * 5 + 3).collect();
        for &id in &held {
            insert(&mut map, TERM, id, 64 + id % 7, 70 + id % 100).unwrap();
        }
        // Held and not, the first and the last, many in one block and
        // blocks passed over, past the list's end.
        let sets: Vec<Vec<NodeId>> = vec![
            vec![3],
            vec![0, 3, 4, 8, 9998, 9999, 10_000, u64::MAX - 1],
            (0..10_010).step_by(7).collect(),
            (0..10_010).collect(),
            vec![5000, 5003, 9998],
            Vec::new(),
        ];
        for ids in sets {
            let mut found = vec![None; ids.len()];
            lookup_sorted(&map, TERM, &ids, &mut |at, count, len| {
                assert!(found[at].is_none(), "{} twice", ids[at]);
                found[at] = Some((u64::from(count), u64::from(len)));
            })
            .unwrap();
            for (at, &id) in ids.iter().enumerate() {
                let one = get(&map, TERM, id).unwrap().map(|(_, c, l)| (c, l));
                assert_eq!(found[at], one, "node {id}");
            }
        }
    }

    #[test]
    fn a_list_is_what_was_put_in_it_in_any_order_with_the_same_blocks() {
        let ids: Vec<NodeId> = (0..3000u64).map(|i| i * 7 + 1).collect();
        let mut forward = SortedMap::new(Blobs::none());
        for &id in &ids {
            insert(&mut forward, TERM, id, 64, 64 + id % 100).unwrap();
        }
        let mut backward = SortedMap::new(Blobs::none());
        for &id in ids.iter().rev() {
            insert(&mut backward, TERM, id, 64, 64 + id % 100).unwrap();
        }
        let expected: Vec<Posting> = ids.iter().map(|&id| (id, 64, 64 + id % 100)).collect();
        assert_eq!(all(&forward, TERM), expected);
        // Block by block, the same postings, in blocks as stored.
        let mut by_blocks = Vec::new();
        let mut sizes = Vec::new();
        scan_columns(&forward, TERM, &mut |block| {
            let counts = block.counts.iter().map(|&c| u64::from(c));
            let lens = block.lens.iter().map(|&l| u64::from(l));
            by_blocks.extend(
                block
                    .ids
                    .iter()
                    .zip(counts.zip(lens))
                    .map(|(&id, (c, l))| (id, c, l)),
            );
            sizes.push(block.ids.len());
        })
        .unwrap();
        assert_eq!(by_blocks, expected);
        assert_eq!(sizes.len(), entries(&forward).len());
        assert_eq!(entries(&forward), entries(&backward));
        let blocks = entries(&forward).len();
        assert!(
            (3000 / SPAN as usize / 3..3000 / SPAN as usize * 3).contains(&blocks),
            "{blocks} blocks"
        );
        // Every posting is found where it is, and no other.
        for &id in &ids {
            assert_eq!(get(&forward, TERM, id).unwrap().map(|p| p.0), Some(id));
            assert_eq!(get(&forward, TERM, id + 1).unwrap(), None);
        }
    }

    /// Looked up through `Lookups`, in an order that meets blocks from
    /// their middle and comes back below, every id gets what `get` gives,
    /// in a list beside others and in an empty one.
    #[test]
    fn lookups_agree_with_get_in_any_order() {
        let mut map = SortedMap::new(Blobs::none());
        let other: &[u8] = &[2, 0, 4, b's', b'o', b'r', b'u'];
        for id in 0..4000u64 {
            if id % 3 != 1 {
                insert(&mut map, TERM, id, 1 + id % 5, 9).unwrap();
            }
            insert(&mut map, other, id, 2, 9).unwrap();
        }
        let mut order: Vec<NodeId> = (0..4100u64).map(|i| (i * 2654435761) % 4100).collect();
        order.extend([0, 4099, u64::MAX, 1]);
        let mut lookups = Lookups::new(TERM.to_vec());
        let mut empty = Lookups::new(vec![2, 0, 1, b'z']);
        for id in order {
            assert_eq!(
                lookups.get(&map, id).unwrap(),
                get(&map, TERM, id).unwrap(),
                "{id}"
            );
            assert_eq!(empty.get(&map, id).unwrap(), None);
        }
    }

    #[test]
    fn removing_leaves_the_blocks_a_list_of_the_rest_would_have() {
        let mut map = SortedMap::new(Blobs::none());
        let mut fresh = SortedMap::new(Blobs::none());
        for id in 0..2000u64 {
            insert(&mut map, TERM, id, 1, 2).unwrap();
            if id % 3 != 0 {
                insert(&mut fresh, TERM, id, 1, 2).unwrap();
            }
        }
        // Boundaries among the removed ones too: their blocks join.
        for id in (0..2000u64).step_by(3) {
            assert!(remove(&mut map, TERM, id).unwrap());
            assert!(!remove(&mut map, TERM, id).unwrap());
        }
        assert_eq!(entries(&map), entries(&fresh));
        for id in 0..2000u64 {
            if id % 3 != 0 {
                assert!(remove(&mut map, TERM, id).unwrap());
            }
        }
        assert!(map.is_empty());
    }

    #[test]
    fn lists_of_other_terms_are_apart_and_a_replaced_posting_counts_once() {
        let other: &[u8] = &[2, 0, 5, b's', b'o', b'r', b't', b's'];
        let mut map = SortedMap::new(Blobs::none());
        for id in 1..500u64 {
            insert(&mut map, TERM, id, 1, 3).unwrap();
            insert(&mut map, other, id * 2, 2, 3).unwrap();
        }
        insert(&mut map, TERM, 10, 3, 3).unwrap();
        let list = all(&map, TERM);
        assert_eq!(list.len(), 499);
        assert_eq!(list[9], (10, 3, 3));
        assert_eq!(all(&map, other).len(), 499);
        assert_eq!(get(&map, TERM, 998).unwrap(), None);
        assert_eq!(get(&map, other, 998).unwrap(), Some((998, 2, 3)));
    }

    /// A store's blocks kept as LEB128 numbers read as packed ones do, and
    /// a block changed is written packed.
    #[test]
    fn blocks_kept_the_first_way_are_read_and_packed_when_changed() {
        let mut map = SortedMap::new(Blobs::none());
        for id in 0..1000u64 {
            insert(&mut map, TERM, id * 5, 1 + id % 3, 9).unwrap();
        }
        let packed = entries(&map);
        assert!(packed.iter().all(|(_, v)| v[0] == packed_postings::FORMAT));
        let expected = all(&map, TERM);
        let mut old = SortedMap::new(Blobs::none());
        for (k, v) in &packed {
            let key = key_id(TERM, k).unwrap();
            old.insert(k, &encode_leb128(&decoded(TERM, key, v).unwrap()))
                .unwrap();
        }
        assert!(entries(&old)
            .iter()
            .all(|(_, v)| v[0] != packed_postings::FORMAT));
        assert_eq!(all(&old, TERM), expected);
        for id in [0, 5, 2500, 4995, 3] {
            assert_eq!(get(&old, TERM, id).unwrap(), get(&map, TERM, id).unwrap());
        }
        insert(&mut old, TERM, 7, 2, 9).unwrap();
        insert(&mut map, TERM, 7, 2, 9).unwrap();
        assert_eq!(all(&old, TERM), all(&map, TERM));
        let (changed, _) = first_block(&old, TERM, 7).unwrap().unwrap();
        let now = entries(&old);
        let (_, v) = now
            .iter()
            .find(|(k, _)| key_id(TERM, k) == Some(changed))
            .unwrap();
        assert_eq!(v[0], packed_postings::FORMAT);
    }

    #[test]
    fn a_damaged_block_is_an_error_naming_the_term() {
        for bytes in [
            vec![],
            vec![0],
            vec![2, 5, 1, 1, 0, 1, 1],
            vec![1, 5, 0, 1],
            vec![1, 5, 3, 2],
            vec![1, 5, 1, 1, 9],
            // Packed: lengths of no bits, a byte short, a count past its
            // length.
            vec![0, 1, 5, 0, 0, 0],
            vec![0, 2, 5, 0, 0, 1],
            vec![0, 1, 5, 0, 1, 1, 0b11],
        ] {
            let mut map = SortedMap::new(Blobs::none());
            map.insert(&block_key(TERM, OPEN), &bytes).unwrap();
            // Past the block's first posting, so that all of it is read.
            let e = get(&map, TERM, 6).unwrap_err().to_string();
            assert!(e.contains("\"sort\""), "{bytes:?}: {e}");
            let e = scan(&map, TERM, &mut |_| true).unwrap_err().to_string();
            assert!(e.contains("the last block"), "{bytes:?}: {e}");
        }
        // Past its key, either way it is kept.
        for bytes in [encode(&[(5, 1, 1)]), encode_leb128(&[(5, 1, 1)])] {
            let mut map = SortedMap::new(Blobs::none());
            map.insert(&block_key(TERM, 4), &bytes).unwrap();
            let e = scan(&map, TERM, &mut |_| true).unwrap_err().to_string();
            assert!(e.contains("past its end"), "{e}");
        }
    }
}
