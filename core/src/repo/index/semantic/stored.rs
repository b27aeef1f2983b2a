//! The semantic index as a version stores it: one sorted map (`cas::sorted`)
//! named `semantic` among the version's persisted indexes, so it is kept in
//! the host's store (SQLite on disk, IndexedDB in the browser) like every
//! other blob, shared between versions where they agree, and read lazily.
//!
//! Keys (a tag byte, then big-endian numbers, so entries sort by id and
//! members by slot):
//!
//! - `[0]`: the header ([`Header`]): format, the embedder that made the
//!   vectors, their dimension, the graph's shape, and counts that loading
//!   checks against what it reads;
//! - `[1] id`: an indexed node ([`StoredEntry`]): the hash of the text it
//!   was embedded from, its graph member (or none while pending), its type
//!   and its exact vector;
//! - `[2] slot`: a graph member ([`MemberRecord`]): its node, whether it is
//!   dead, its neighbour lists and (from format 3) its 8-bit code, so that
//!   a walk of the stored graph reads one record per member it visits;
//! - `[3] id`: an empty marker for each entry not in the graph (the
//!   pending set), so that a search can scan them without loading the
//!   index (`lazy`).
//!
//! The blobs of the map are checked by their hashes as they load; what the
//! hashes cannot see (a header that disagrees with the entries, a member
//! whose node does not point back at it, another embedder) is checked here,
//! and the index is then built again from the nodes, never trusted.

use std::sync::Arc;

use super::code::{Code, CodeRef};
use super::graph::MemberRecord;
use super::StoredVector;
use crate::repo::cas::DecodeError;
use crate::repo::forest::codec::{Reader, Writer};
use crate::repo::node::NodeId;

/// The layout this module writes. Format 2 (member records without their
/// codes) is still read: a walk then takes a member's code from its node's
/// entry. Format 1 had no pending markers; it is built again, not read.
pub(super) const FORMAT: u64 = 3;
const OLDEST_READ: u64 = 2;

pub(super) const HEADER_KEY: &[u8] = &[0];
const ENTRY_TAG: u8 = 1;
const MEMBER_TAG: u8 = 2;
pub(super) const PENDING_TAG: u8 = 3;

pub(super) fn entry_key(id: NodeId) -> [u8; 9] {
    let mut k = [ENTRY_TAG; 9];
    k[1..].copy_from_slice(&id.to_be_bytes());
    k
}

pub(super) fn member_key(slot: u32) -> [u8; 5] {
    let mut k = [MEMBER_TAG; 5];
    k[1..].copy_from_slice(&slot.to_be_bytes());
    k
}

pub(super) fn pending_key(id: NodeId) -> [u8; 9] {
    let mut k = [PENDING_TAG; 9];
    k[1..].copy_from_slice(&id.to_be_bytes());
    k
}

/// What a key names.
pub(super) enum Key {
    Header,
    Entry(NodeId),
    Member(u32),
    Pending(NodeId),
}

pub(super) fn parse_key(k: &[u8]) -> Result<Key, String> {
    match k {
        [0] => Ok(Key::Header),
        [ENTRY_TAG, rest @ ..] if rest.len() == 8 => Ok(Key::Entry(NodeId::from_be_bytes(
            rest.try_into().unwrap_or_default(),
        ))),
        [MEMBER_TAG, rest @ ..] if rest.len() == 4 => Ok(Key::Member(u32::from_be_bytes(
            rest.try_into().unwrap_or_default(),
        ))),
        [PENDING_TAG, rest @ ..] if rest.len() == 8 => Ok(Key::Pending(NodeId::from_be_bytes(
            rest.try_into().unwrap_or_default(),
        ))),
        _ => Err(format!("an unknown key {k:02x?}")),
    }
}

/// The first entry of the map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Header {
    /// `Embedder::id` of the embedder that made every vector.
    pub(super) embedder: String,
    pub(super) dim: u32,
    /// The graph's `links` (the capacity of its lists).
    pub(super) links: u32,
    /// Indexed nodes, and how many of them are not graph members.
    pub(super) entries: u64,
    pub(super) pending: u64,
    pub(super) graph: Option<GraphHeader>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct GraphHeader {
    pub(super) members: u32,
    pub(super) dead: u32,
    /// Entry point and top layer.
    pub(super) entry: Option<(u32, u8)>,
    pub(super) rng: u64,
}

fn decode_error(e: DecodeError, what: &str) -> String {
    format!("{what}: {} at byte {}", e.what, e.offset)
}

pub(super) fn encode_header(h: &Header) -> Vec<u8> {
    let mut w = Writer { buf: Vec::new() };
    w.uint(FORMAT);
    w.str(&h.embedder);
    w.uint(u64::from(h.dim));
    w.uint(u64::from(h.links));
    w.uint(h.entries);
    w.uint(h.pending);
    match &h.graph {
        None => w.byte(0),
        Some(g) => {
            w.byte(1);
            w.uint(u64::from(g.members));
            w.uint(u64::from(g.dead));
            match g.entry {
                None => w.byte(0),
                Some((slot, top)) => {
                    w.byte(1);
                    w.uint(u64::from(slot));
                    w.byte(top);
                }
            }
            w.uint(g.rng);
        }
    }
    w.buf
}

pub(super) fn decode_header(bytes: &[u8]) -> Result<Header, String> {
    let d = |e| decode_error(e, "the header");
    let mut r = Reader::new(bytes);
    let format = r.uint("format").map_err(d)?;
    if !(OLDEST_READ..=FORMAT).contains(&format) {
        return Err(format!(
            "the header is of format {format}, this build reads {OLDEST_READ} to {FORMAT}"
        ));
    }
    let u32_of = |r: &mut Reader, what: &str| -> Result<u32, String> {
        let v = r.uint(what).map_err(d)?;
        u32::try_from(v).map_err(|_| format!("the header's {what} {v} is out of range"))
    };
    let embedder = r.str("embedder").map_err(d)?;
    let dim = u32_of(&mut r, "dimension")?;
    let links = u32_of(&mut r, "links")?;
    let entries = r.uint("entries").map_err(d)?;
    let pending = r.uint("pending").map_err(d)?;
    let graph = match r.byte("graph").map_err(d)? {
        0 => None,
        1 => {
            let members = u32_of(&mut r, "members")?;
            let dead = u32_of(&mut r, "dead members")?;
            let entry = match r.byte("entry point").map_err(d)? {
                0 => None,
                1 => Some((
                    u32_of(&mut r, "entry point")?,
                    r.byte("top layer").map_err(d)?,
                )),
                b => return Err(format!("the header's entry point flag is {b}")),
            };
            let rng = r.uint("generator").map_err(d)?;
            Some(GraphHeader {
                members,
                dead,
                entry,
                rng,
            })
        }
        b => return Err(format!("the header's graph flag is {b}")),
    };
    r.end().map_err(d)?;
    Ok(Header {
        embedder,
        dim,
        links,
        entries,
        pending,
        graph,
    })
}

/// One indexed node as stored.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct StoredEntry {
    pub(super) text: u64,
    pub(super) slot: Option<u32>,
    pub(super) kind: Option<String>,
    pub(super) vec: Arc<StoredVector>,
}

pub(super) fn encode_entry(
    text: u64,
    slot: Option<u32>,
    kind: Option<&str>,
    v: &StoredVector,
) -> Vec<u8> {
    let mut w = Writer { buf: Vec::new() };
    w.buf.extend_from_slice(&text.to_le_bytes());
    w.opt_uint(slot.map(u64::from));
    w.opt_str(&kind.map(str::to_string));
    write_vector(&mut w, v);
    w.buf
}

/// A vector's exact components: dense, or (index, value) pairs.
fn write_vector(w: &mut Writer, v: &StoredVector) {
    let dense = v.to_dense();
    if v.is_sparse() {
        w.byte(1);
        let nz: Vec<(usize, f32)> = dense
            .iter()
            .enumerate()
            .filter(|(_, x)| **x != 0.0)
            .map(|(i, x)| (i, *x))
            .collect();
        w.uint(nz.len() as u64);
        for (i, x) in nz {
            w.uint(i as u64);
            w.buf.extend_from_slice(&x.to_le_bytes());
        }
    } else {
        w.byte(0);
        for x in dense {
            w.buf.extend_from_slice(&x.to_le_bytes());
        }
    }
}

/// A vector as `write_vector` wrote it, checked: `dim` components, finite,
/// of unit length (what the index stores; anything else is damage).
fn read_vector(r: &mut Reader, dim: usize) -> Result<Arc<StoredVector>, String> {
    let d = |e| decode_error(e, "a vector");
    let mut v = vec![0f32; dim];
    let f32_at = |r: &mut Reader| -> Result<f32, String> {
        let b = r.take(4, "component").map_err(d)?;
        Ok(f32::from_le_bytes(b.try_into().unwrap_or_default()))
    };
    match r.byte("form").map_err(d)? {
        0 => {
            for x in v.iter_mut() {
                *x = f32_at(r)?;
            }
        }
        1 => {
            let n = r.count("components", 2).map_err(d)?;
            for _ in 0..n {
                let i = r.uint("component index").map_err(d)? as usize;
                let x = f32_at(r)?;
                let Some(slot) = v.get_mut(i) else {
                    return Err(format!("a vector has component {i} of {dim}"));
                };
                *slot = x;
            }
        }
        b => return Err(format!("a vector's form is {b}")),
    }
    let norm: f32 = v.iter().map(|x| x * x).sum();
    if !norm.is_finite() || (norm - 1.0).abs() > 1e-3 {
        return Err(format!("a vector has squared norm {norm}, not 1"));
    }
    Ok(Arc::new(StoredVector::new(&v)))
}

pub(super) fn decode_entry(bytes: &[u8], dim: usize) -> Result<StoredEntry, String> {
    let d = |e| decode_error(e, "an entry");
    let mut r = Reader::new(bytes);
    let text = u64::from_le_bytes(
        r.take(8, "text hash")
            .map_err(d)?
            .try_into()
            .unwrap_or_default(),
    );
    let slot = match r.opt_uint("member").map_err(d)? {
        None => None,
        Some(s) => {
            Some(u32::try_from(s).map_err(|_| format!("an entry's member {s} is out of range"))?)
        }
    };
    let kind = r.opt_str("type").map_err(d)?;
    let vec = read_vector(&mut r, dim)?;
    r.end().map_err(d)?;
    Ok(StoredEntry {
        text,
        slot,
        kind,
        vec,
    })
}

/// A member, with its vector when it is dead (its node's entry is gone)
/// and its code (what the graph navigates by: the scale, then one byte per
/// component).
pub(super) fn encode_member(
    m: &MemberRecord,
    own: Option<&StoredVector>,
    code: CodeRef<'_>,
) -> Vec<u8> {
    let mut w = Writer { buf: Vec::new() };
    w.uint(m.id);
    w.byte(u8::from(m.dead));
    w.uint(m.lists.len() as u64);
    for list in &m.lists {
        w.uint(list.len() as u64);
        for &s in list {
            w.uint(u64::from(s));
        }
    }
    match own {
        None => w.byte(0),
        Some(v) => {
            w.byte(1);
            write_vector(&mut w, v);
        }
    }
    w.byte(1);
    w.buf.extend_from_slice(&code.scale.to_le_bytes());
    w.buf.extend(code.code.iter().map(|&c| c as u8));
    w.buf
}

/// A member record as read: the record, its own vector (dead members),
/// and its code (absent in format 2).
pub(super) type DecodedMember = (MemberRecord, Option<Arc<StoredVector>>, Option<Code>);

pub(super) fn decode_member(bytes: &[u8], dim: usize) -> Result<DecodedMember, String> {
    let d = |e| decode_error(e, "a graph member");
    let mut r = Reader::new(bytes);
    let id = r.uint("node").map_err(d)?;
    let dead = match r.byte("dead").map_err(d)? {
        0 => false,
        1 => true,
        b => return Err(format!("a graph member's dead flag is {b}")),
    };
    let layers = r.count("layers", 1).map_err(d)?;
    let mut lists = Vec::with_capacity(layers);
    for _ in 0..layers {
        let n = r.count("neighbours", 1).map_err(d)?;
        let mut list = Vec::with_capacity(n);
        for _ in 0..n {
            let s = r.uint("neighbour").map_err(d)?;
            list.push(u32::try_from(s).map_err(|_| format!("a neighbour {s} is out of range"))?);
        }
        lists.push(list);
    }
    let own = match r.byte("vector flag").map_err(d)? {
        0 => None,
        1 => Some(read_vector(&mut r, dim)?),
        b => return Err(format!("a graph member's vector flag is {b}")),
    };
    // Format 2 ends here.
    let code = if r.remaining() == 0 {
        None
    } else {
        match r.byte("code flag").map_err(d)? {
            1 => {
                let scale = f32::from_le_bytes(
                    r.take(4, "code scale")
                        .map_err(d)?
                        .try_into()
                        .unwrap_or_default(),
                );
                if !(scale.is_finite() && scale >= 0.0) {
                    return Err(format!("a graph member's code has scale {scale}"));
                }
                let code = r.take(dim, "code").map_err(d)?;
                Some(Code {
                    code: code.iter().map(|&b| b as i8).collect(),
                    scale,
                })
            }
            b => return Err(format!("a graph member's code flag is {b}")),
        }
    };
    r.end().map_err(d)?;
    Ok((MemberRecord { id, dead, lists }, own, code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damage_is_refused() {
        let h = Header {
            embedder: "hashing-256".into(),
            dim: 4,
            links: 16,
            entries: 7,
            pending: 2,
            graph: Some(GraphHeader {
                members: 5,
                dead: 1,
                entry: Some((3, 2)),
                rng: u64::MAX,
            }),
        };
        assert_eq!(decode_header(&encode_header(&h)).unwrap(), h);
        let mut bad = encode_header(&h);
        bad[0] = 9;
        assert!(decode_header(&bad).unwrap_err().contains("format 9"));
        assert!(decode_header(&encode_header(&h)[..5]).is_err());

        for v in [vec![0.6f32, 0.0, 0.0, 0.8], vec![0.5f32, 0.5, 0.5, 0.5]] {
            let sv = StoredVector::new(&v);
            let bytes = encode_entry(42, Some(3), Some("function"), &sv);
            let e = decode_entry(&bytes, 4).unwrap();
            assert_eq!(
                (e.text, e.slot, e.kind.as_deref()),
                (42, Some(3), Some("function"))
            );
            assert_eq!(e.vec.to_dense(), v);
            assert_eq!(e.vec.is_sparse(), sv.is_sparse());
            // A vector that is not of unit length, or of another dimension.
            assert!(decode_entry(&bytes, 2).is_err() || sv.is_sparse());
            let mut scaled = bytes.clone();
            let last = scaled.len() - 1;
            scaled[last] ^= 0x40;
            assert!(decode_entry(&scaled, 4).is_err());
        }

        let m = MemberRecord {
            id: 99,
            dead: true,
            lists: vec![vec![1, 2, 3], vec![4]],
        };
        let v = StoredVector::new(&[0.0, 1.0, 0.0, 0.0]);
        let code = Code::new(&v.to_dense());
        let (back, own, back_code) =
            decode_member(&encode_member(&m, Some(&v), code.view()), 4).unwrap();
        assert_eq!(
            (back, own.map(|v| v.to_dense())),
            (m.clone(), Some(v.to_dense()))
        );
        let back_code = back_code.unwrap();
        assert_eq!(
            (back_code.code, back_code.scale),
            (code.code.clone(), code.scale)
        );
        let bytes = encode_member(&m, None, code.view());
        let (back, own, back_code) = decode_member(&bytes, 4).unwrap();
        assert_eq!((back, own.is_none()), (m.clone(), true));
        assert_eq!(back_code.unwrap().code, code.code);
        // Format 2: no code after the vector flag.
        let old = &bytes[..bytes.len() - 4 - 4 - 1];
        let (back, own, back_code) = decode_member(old, 4).unwrap();
        assert_eq!(
            (back, own.is_none(), back_code.is_none()),
            (m.clone(), true, true)
        );
        // A code of another length, a bad flag, a negative scale.
        assert!(decode_member(&bytes[..bytes.len() - 1], 4).is_err());
        assert!(decode_member(&bytes, 3).is_err());
        let mut bad = bytes.clone();
        bad[old.len()] = 2;
        assert!(decode_member(&bad, 4).unwrap_err().contains("code flag"));
        let mut bad = bytes.clone();
        bad[old.len() + 4] ^= 0x80;
        assert!(decode_member(&bad, 4).unwrap_err().contains("scale"));
        let mut bad = encode_member(&m, None, code.view());
        bad[1] = 7;
        assert!(decode_member(&bad, 4).is_err());
        // A header of format 2 is read, of 1 or 4 refused.
        let mut two = encode_header(&h);
        two[0] = 2;
        assert_eq!(decode_header(&two).unwrap(), h);
        two[0] = 1;
        assert!(decode_header(&two).is_err());
        assert!(matches!(parse_key(&entry_key(5)), Ok(Key::Entry(5))));
        assert!(matches!(parse_key(&member_key(5)), Ok(Key::Member(5))));
        assert!(matches!(parse_key(HEADER_KEY), Ok(Key::Header)));
        assert!(matches!(parse_key(&pending_key(7)), Ok(Key::Pending(7))));
        assert!(parse_key(&[3, 1]).is_err());
        assert!(parse_key(&[4, 1]).is_err());
    }
}
