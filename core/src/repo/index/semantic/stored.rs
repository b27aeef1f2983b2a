//! The semantic index as a version stores it: one sorted map (`cas::sorted`)
//! named `semantic` among the version's persisted indexes, so it is kept in
//! the host's store (SQLite on disk, IndexedDB in the browser) like every
//! other blob, shared between versions where they agree, and read lazily.
//!
//! Keys (a tag byte, then big-endian numbers, so entries sort by id and
//! members by slot):
//!
//! - `[0]`: the header ([`Header`]): format, the embedder that made the
//!   vectors, their dimension, the graph's shape, the members to a code
//!   group (format 4), and counts that loading checks against what it
//!   reads;
//! - `[1] id`: an indexed node ([`StoredEntry`]): the hash of the text it
//!   was embedded from, its graph member (or none while pending), its type
//!   and its exact vector;
//! - `[2] slot`: a graph member ([`MemberRecord`]): its node, whether it is
//!   dead and its neighbour lists (with, in format 3 only, its 8-bit code);
//! - `[3] id`: an empty marker for each entry not in the graph (the
//!   pending set), so that a search can scan them without loading the
//!   index (`lazy`);
//! - `[4] group` (format 4): the members `group × size` to `group × size +
//!   size - 1` ([`CodeGroup`]): each one's node, whether it is dead, and
//!   its 8-bit code, about 120 to a 4 KiB blob with the built-in table. A
//!   walk of the stored graph measures its distances from these (a few
//!   thousand blobs at a million members, which a process keeps once
//!   read) and reads a member's record only to expand it.
//!
//! The blobs of the map are checked by their hashes as they load; what the
//! hashes cannot see (a header that disagrees with the entries, a member
//! whose node does not point back at it, a group that disagrees with its
//! members, another embedder) is checked here, and the index is then built
//! again from the nodes, never trusted.

use std::sync::Arc;

use super::code::{Code, CodeRef};
use super::graph::MemberRecord;
use super::StoredVector;
use crate::repo::cas::DecodeError;
use crate::repo::forest::codec::{Reader, Writer};
use crate::repo::node::NodeId;

/// The layout this module writes. Formats 2 (member records without
/// their codes) and 3 (codes in the member records) are still read: a walk
/// then takes a member's code from its record or its node's entry, and the
/// index is written whole in format 4 the first time it is loaded. Format
/// 1 had no pending markers; it is built again, not read.
pub(super) const FORMAT: u64 = 4;
const OLDEST_READ: u64 = 2;

pub(super) const HEADER_KEY: &[u8] = &[0];
const ENTRY_TAG: u8 = 1;
const MEMBER_TAG: u8 = 2;
pub(super) const PENDING_TAG: u8 = 3;
const GROUP_TAG: u8 = 4;

/// The bytes a code group aims at, under the sorted map's 4 KiB nodes so
/// that a group is one blob.
const GROUP_BYTES: usize = 3_800;
/// The most members a group holds, whatever the dimension.
pub(super) const GROUP_MAX: u32 = 1024;

/// Members to a code group for vectors of `dim` components: a member takes
/// its code, its scale, a node id of about three bytes and a dead bit.
pub(super) fn group_size(dim: usize) -> u32 {
    (GROUP_BYTES / (dim + 4 + 3)).clamp(1, GROUP_MAX as usize) as u32
}

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

pub(super) fn group_key(group: u32) -> [u8; 5] {
    let mut k = [GROUP_TAG; 5];
    k[1..].copy_from_slice(&group.to_be_bytes());
    k
}

/// What a key names.
pub(super) enum Key {
    Header,
    Entry(NodeId),
    Member(u32),
    Pending(NodeId),
    Group(u32),
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
        [GROUP_TAG, rest @ ..] if rest.len() == 4 => Ok(Key::Group(u32::from_be_bytes(
            rest.try_into().unwrap_or_default(),
        ))),
        _ => Err(format!("an unknown key {k:02x?}")),
    }
}

/// The first entry of the map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Header {
    /// The layout of the map (`FORMAT`, or an older one still read).
    pub(super) format: u64,
    /// `Embedder::id` of the embedder that made every vector.
    pub(super) embedder: String,
    pub(super) dim: u32,
    /// The graph's `links` (the capacity of its lists).
    pub(super) links: u32,
    /// Members to a code group (format 4; 0 in older formats, which have
    /// none).
    pub(super) group: u32,
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
    w.uint(h.format);
    w.str(&h.embedder);
    w.uint(u64::from(h.dim));
    w.uint(u64::from(h.links));
    if h.format >= 4 {
        w.uint(u64::from(h.group));
    }
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
    let group = if format >= 4 {
        let g = u32_of(&mut r, "group size")?;
        if !(1..=GROUP_MAX).contains(&g) {
            return Err(format!(
                "the header's group size {g} is not between 1 and {GROUP_MAX}"
            ));
        }
        g
    } else {
        0
    };
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
        format,
        embedder,
        dim,
        links,
        group,
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
/// and, in format 3 only, its code (what the graph navigates by: the
/// scale, then one byte per component; format 4 keeps it in the member's
/// code group, formats 2 nowhere).
pub(super) fn encode_member(
    m: &MemberRecord,
    own: Option<&StoredVector>,
    code: Option<CodeRef<'_>>,
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
    if let Some(code) = code {
        w.byte(1);
        w.buf.extend_from_slice(&code.scale.to_le_bytes());
        w.buf.extend(code.code.iter().map(|&c| c as u8));
    }
    w.buf
}

/// A member record as read: the record, its own vector (dead members),
/// and its code (format 3 only).
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
    // Formats 2 and 4 end here.
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

/// A code group (format 4): members `first` to `first + len - 1`, each
/// one's node, dead flag and 8-bit code.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct CodeGroup {
    pub(super) ids: Vec<NodeId>,
    pub(super) dead: Vec<bool>,
    pub(super) scales: Vec<f32>,
    /// `dim` bytes a member, in slot order.
    pub(super) codes: Vec<i8>,
}

impl CodeGroup {
    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The code of the group's `i`-th member.
    pub(super) fn code(&self, i: usize, dim: usize) -> CodeRef<'_> {
        CodeRef {
            code: self.codes.get(i * dim..(i + 1) * dim).unwrap_or(&[]),
            scale: self.scales.get(i).copied().unwrap_or(0.0),
        }
    }
}

/// The members of a group: how many there are, one per `(id, dead, code)`
/// in slot order. Laid out as the count, the ids, the dead flags (a bit
/// each, lowest first), the scales, then the codes.
pub(super) fn encode_group<'a>(
    members: impl ExactSizeIterator<Item = (NodeId, bool, CodeRef<'a>)> + Clone,
) -> Vec<u8> {
    let n = members.len();
    let mut w = Writer { buf: Vec::new() };
    w.uint(n as u64);
    for (id, _, _) in members.clone() {
        w.uint(id);
    }
    let mut bits = vec![0u8; n.div_ceil(8)];
    for (i, (_, dead, _)) in members.clone().enumerate() {
        if dead {
            bits[i / 8] |= 1 << (i % 8);
        }
    }
    w.buf.extend_from_slice(&bits);
    for (_, _, c) in members.clone() {
        w.buf.extend_from_slice(&c.scale.to_le_bytes());
    }
    for (_, _, c) in members {
        w.buf.extend(c.code.iter().map(|&b| b as u8));
    }
    w.buf
}

/// Group `group` as `encode_group` wrote it, checked: `expect` members (a
/// group is full but for the graph's last), codes of `dim` bytes, scales
/// finite and not negative, no dead flag past the last member.
pub(super) fn decode_group(
    bytes: &[u8],
    group: u32,
    expect: usize,
    dim: usize,
) -> Result<CodeGroup, String> {
    let what = format!("code group {group}");
    let d = |e: DecodeError| decode_error(e, &what);
    let mut r = Reader::new(bytes);
    let n = r.count("members", 1 + 4 + dim).map_err(d)?;
    if n != expect {
        return Err(format!("{what} holds {n} members, expected {expect}"));
    }
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        ids.push(r.uint("node").map_err(d)?);
    }
    let bits = r.take(n.div_ceil(8), "dead flags").map_err(d)?;
    if n % 8 != 0 && bits[n / 8] >> (n % 8) != 0 {
        return Err(format!("{what} marks dead members past its last"));
    }
    let dead = (0..n).map(|i| bits[i / 8] >> (i % 8) & 1 == 1).collect();
    let mut scales = Vec::with_capacity(n);
    for _ in 0..n {
        let b = r.take(4, "scale").map_err(d)?;
        let scale = f32::from_le_bytes(b.try_into().unwrap_or_default());
        // `quantise` never makes -0.
        if !(scale.is_finite() && scale.is_sign_positive()) {
            return Err(format!("{what} has a code of scale {scale}"));
        }
        scales.push(scale);
    }
    let codes = r.take(n * dim, "codes").map_err(d)?;
    let codes = codes.iter().map(|&b| b as i8).collect();
    r.end().map_err(d)?;
    Ok(CodeGroup {
        ids,
        dead,
        scales,
        codes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damage_is_refused() {
        let h = Header {
            format: FORMAT,
            embedder: "hashing-256".into(),
            dim: 4,
            links: 16,
            group: 100,
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
            decode_member(&encode_member(&m, Some(&v), Some(code.view())), 4).unwrap();
        assert_eq!(
            (back, own.map(|v| v.to_dense())),
            (m.clone(), Some(v.to_dense()))
        );
        let back_code = back_code.unwrap();
        assert_eq!(
            (back_code.code, back_code.scale),
            (code.code.clone(), code.scale)
        );
        let bytes = encode_member(&m, None, Some(code.view()));
        let (back, own, back_code) = decode_member(&bytes, 4).unwrap();
        assert_eq!((back, own.is_none()), (m.clone(), true));
        assert_eq!(back_code.unwrap().code, code.code);
        // Formats 2 and 4: no code after the vector flag.
        let old = &bytes[..bytes.len() - 4 - 4 - 1];
        assert_eq!(&encode_member(&m, None, None)[..], old);
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
        let mut bad = encode_member(&m, None, None);
        bad[1] = 7;
        assert!(decode_member(&bad, 4).is_err());
        // Headers of formats 2 and 3 are read (they have no group size),
        // of 1 or 5 refused; so is a group size of 0.
        for format in [2, 3] {
            let old = Header {
                format,
                group: 0,
                ..h.clone()
            };
            let bytes = encode_header(&old);
            assert_eq!(bytes.len(), encode_header(&h).len() - 1);
            assert_eq!(decode_header(&bytes).unwrap(), old);
        }
        for format in [1, 5] {
            let mut other = encode_header(&h);
            other[0] = format;
            assert!(decode_header(&other).is_err());
        }
        let none = Header {
            group: 0,
            ..h.clone()
        };
        assert!(decode_header(&encode_header(&none))
            .unwrap_err()
            .contains("group size 0"));
        assert!(matches!(parse_key(&entry_key(5)), Ok(Key::Entry(5))));
        assert!(matches!(parse_key(&member_key(5)), Ok(Key::Member(5))));
        assert!(matches!(parse_key(HEADER_KEY), Ok(Key::Header)));
        assert!(matches!(parse_key(&pending_key(7)), Ok(Key::Pending(7))));
        assert!(matches!(parse_key(&group_key(9)), Ok(Key::Group(9))));
        assert!(parse_key(&[3, 1]).is_err());
        assert!(parse_key(&[4, 1]).is_err());
        assert!(parse_key(&[5, 0, 0, 0, 1]).is_err());
    }

    /// A code group round-trips; any damage to it is an error naming the
    /// group, never a panic or a wrong member.
    #[test]
    fn code_groups_round_trip_and_damage_is_refused() {
        let dim = 5;
        let vecs = [
            [0.6f32, 0.0, 0.0, 0.8, 0.0],
            [0.0, -1.0, 0.0, 0.0, 0.0],
            [0.5, 0.5, 0.5, -0.5, 0.0],
            [0.0; 5],
            [0.1, 0.2, 0.3, 0.4, 0.5],
            [0.9, 0.1, 0.0, 0.0, 0.1],
            [0.2, 0.2, 0.2, 0.2, 0.2],
            [0.0, 0.0, 0.0, 0.0, 1.0],
            [0.3, 0.0, 0.3, 0.0, 0.3],
        ];
        let codes: Vec<Code> = vecs.iter().map(|v| Code::new(v)).collect();
        let ids: Vec<NodeId> = (0..vecs.len() as u64).map(|i| i * 1000 + 7).collect();
        let dead: Vec<bool> = (0..vecs.len()).map(|i| i % 3 == 1).collect();
        let bytes = encode_group((0..vecs.len()).map(|i| (ids[i], dead[i], codes[i].view())));
        let g = decode_group(&bytes, 3, vecs.len(), dim).unwrap();
        assert_eq!(g.len(), vecs.len());
        assert_eq!((&g.ids, &g.dead), (&ids, &dead));
        for (i, c) in codes.iter().enumerate() {
            assert_eq!(g.code(i, dim).code, &c.code[..]);
            assert_eq!(g.code(i, dim).scale.to_bits(), c.scale.to_bits());
        }
        // An empty group is one byte.
        let empty = encode_group(std::iter::empty::<(NodeId, bool, CodeRef<'_>)>());
        assert_eq!(empty, vec![0]);
        assert_eq!(decode_group(&empty, 0, 0, dim).unwrap().len(), 0);

        // Another count than the header makes, or another dimension.
        let why = decode_group(&bytes, 3, 8, dim).unwrap_err();
        assert!(
            why.contains("code group 3 holds 9 members, expected 8"),
            "{why}"
        );
        assert!(decode_group(&bytes, 3, 9, 4)
            .unwrap_err()
            .contains("code group 3"));
        assert!(decode_group(&bytes, 3, 9, 6)
            .unwrap_err()
            .contains("code group 3"));
        // Truncated anywhere, or with a byte more.
        for cut in 0..bytes.len() {
            let why = decode_group(&bytes[..cut], 3, 9, dim).unwrap_err();
            assert!(why.contains("code group 3"), "{cut}: {why}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(decode_group(&long, 3, 9, dim)
            .unwrap_err()
            .contains("code group 3"));
        // Every byte flipped: an error or a group that differs, never a
        // panic.
        for at in 0..bytes.len() {
            for bit in [0x01, 0x80] {
                let mut b = bytes.clone();
                b[at] ^= bit;
                if let Ok(other) = decode_group(&b, 3, 9, dim) {
                    assert_ne!(other, g, "byte {at}");
                }
            }
        }
        // A dead flag past the last member, a negative or infinite scale.
        let ids_end = 1 + ids
            .iter()
            .map(|&i| {
                let mut w = Writer { buf: Vec::new() };
                w.uint(i);
                w.buf.len()
            })
            .sum::<usize>();
        let mut b = bytes.clone();
        b[ids_end + 1] |= 0x80;
        assert!(decode_group(&b, 3, 9, dim)
            .unwrap_err()
            .contains("past its last"));
        for scale in [-1.0f32, f32::INFINITY, f32::NAN] {
            let mut b = bytes.clone();
            let at = ids_end + 2;
            b[at..at + 4].copy_from_slice(&scale.to_le_bytes());
            assert!(decode_group(&b, 3, 9, dim).unwrap_err().contains("scale"));
        }
        // A count too large for the bytes is refused before allocating.
        let mut huge = Writer { buf: Vec::new() };
        huge.uint(u64::MAX >> 1);
        assert!(decode_group(&huge.buf, 0, 5, dim)
            .unwrap_err()
            .contains("count"));
        // Group sizes stay under a blob and within bounds.
        assert_eq!(group_size(24), 122);
        assert_eq!(group_size(256), 14);
        assert_eq!(group_size(1 << 20), 1);
        assert_eq!(group_size(0), GROUP_MAX.min(3_800 / 7));
    }
}
