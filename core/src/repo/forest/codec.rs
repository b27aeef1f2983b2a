//! The canonical byte encodings of the forest's blobs and refs record.
//!
//! Every blob starts with the format version and a tag, so a blob can be
//! told apart from any other kind and a later format can be recognised.
//! Integers are LEB128 varints (signed ones zigzag-encoded), strings are a
//! length and UTF-8 bytes, hashes are 32 raw bytes. An encoding is canonical:
//! a value has exactly one, and decoding refuses anything else (overlong
//! varints, trailing bytes), so a blob's name really names its content.

use super::{Hash, Op, ReflogKind, Timestamp};
use crate::repo::forest::NodeChanges;
use crate::repo::node::{Node, NodeId, VersionId};

/// Bumped whenever a blob's encoding changes.
pub(crate) const FORMAT_VERSION: u8 = 1;

/// The refs record's version, which also names the layout of the blobs:
/// 1, tries placing keys by a hash of the id (`hamt::route_v1`); 2, by the
/// id's bits (`hamt::route`); both with reflog entries carrying their
/// version's deltas. 3: branches that count their keys, reflog entries
/// with a link back to an earlier entry, deltas in blobs of their own,
/// persisted indexes; read lazily. Stores of versions 1 and 2 are read
/// whole and written again as version 3.
pub(crate) const REFS_VERSION: u8 = 3;

pub(crate) const TAG_LEAF: u8 = 1;
pub(crate) const TAG_BRANCH: u8 = 2;
pub(crate) const TAG_ENTRY: u8 = 3;
/// Sorted map nodes (`cas::sorted`).
pub(crate) const TAG_MAP_LEAF: u8 = 4;
pub(crate) const TAG_MAP_INNER: u8 = 5;
/// A trie branch that counts the keys below it (refs version 3).
pub(crate) const TAG_BRANCH3: u8 = 6;
/// A reflog entry of refs version 3.
pub(crate) const TAG_ENTRY3: u8 = 7;
/// A part of a version's forward or reverse delta.
pub(crate) const TAG_DELTA: u8 = 8;

pub(crate) const REFS_MAGIC: &[u8; 8] = b"ARBREFS\0";

pub(crate) use crate::repo::cas::hash_bytes;

/// A `Hasher` for maps keyed by blob names: the names are already uniformly
/// random, so their first eight bytes serve as the hash.
#[derive(Default)]
pub(crate) struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        // A name arrives as one write of 32 bytes (after its constant length
        // prefix); its first eight bytes are enough.
        if let Some(b) = bytes.first_chunk::<8>() {
            self.0 ^= u64::from_le_bytes(*b);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type NameMap<V> =
    std::collections::HashMap<Hash, V, std::hash::BuildHasherDefault<NameHasher>>;
pub(crate) type NameSet =
    std::collections::HashSet<Hash, std::hash::BuildHasherDefault<NameHasher>>;

/// A blob's name as every store shows it (defined with the blob store).
pub use crate::repo::cas::hex;

// ---------------------------------------------------------------- writing

pub(crate) struct Writer {
    pub(crate) buf: Vec<u8>,
}

impl Writer {
    pub(crate) fn blob(tag: u8) -> Self {
        Writer {
            buf: vec![FORMAT_VERSION, tag],
        }
    }

    pub(crate) fn byte(&mut self, b: u8) {
        self.buf.push(b);
    }

    pub(crate) fn uint(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.buf.push(b);
                return;
            }
            self.buf.push(b | 0x80);
        }
    }

    pub(crate) fn int(&mut self, v: i64) {
        self.uint(((v << 1) ^ (v >> 63)) as u64);
    }

    pub(crate) fn hash(&mut self, h: &Hash) {
        self.buf.extend_from_slice(h);
    }

    pub(crate) fn str(&mut self, s: &str) {
        self.uint(s.len() as u64);
        self.buf.extend_from_slice(s.as_bytes());
    }

    pub(crate) fn opt_str(&mut self, s: &Option<String>) {
        match s {
            None => self.byte(0),
            Some(s) => {
                self.byte(1);
                self.str(s);
            }
        }
    }

    pub(crate) fn opt_uint(&mut self, v: Option<u64>) {
        match v {
            None => self.byte(0),
            Some(v) => {
                self.byte(1);
                self.uint(v);
            }
        }
    }

    pub(crate) fn strs(&mut self, v: &[String]) {
        self.uint(v.len() as u64);
        for s in v {
            self.str(s);
        }
    }

    pub(crate) fn deps(&mut self, v: &[(NodeId, String)]) {
        self.uint(v.len() as u64);
        for (id, name) in v {
            self.uint(*id);
            self.str(name);
        }
    }

    pub(crate) fn node(&mut self, n: &Node) {
        self.uint(n.id);
        self.opt_str(&n.code);
        self.opt_str(&n.description);
        self.strs(&n.symbol_names);
        self.opt_str(&n.kind);
        self.deps(&n.dependencies);
    }

    pub(crate) fn changes(&mut self, c: &NodeChanges) {
        let flags = c.code.is_some() as u8
            | (c.description.is_some() as u8) << 1
            | (c.symbol_names.is_some() as u8) << 2
            | (c.kind.is_some() as u8) << 3
            | (c.dependencies.is_some() as u8) << 4;
        self.byte(flags);
        if let Some(v) = &c.code {
            self.opt_str(v);
        }
        if let Some(v) = &c.description {
            self.opt_str(v);
        }
        if let Some(v) = &c.symbol_names {
            self.strs(v);
        }
        if let Some(v) = &c.kind {
            self.opt_str(v);
        }
        if let Some(v) = &c.dependencies {
            self.deps(v);
        }
    }

    pub(crate) fn op(&mut self, op: &Op) {
        match op {
            Op::Create(n) => {
                self.byte(1);
                self.node(n);
            }
            Op::Update { id, changes } => {
                self.byte(2);
                self.uint(*id);
                self.changes(changes);
            }
            Op::Delete(id) => {
                self.byte(3);
                self.uint(*id);
            }
        }
    }

    pub(crate) fn ops(&mut self, ops: &[Op]) {
        self.uint(ops.len() as u64);
        for op in ops {
            self.op(op);
        }
    }
}

pub(crate) fn encode_leaf(n: &Node) -> Vec<u8> {
    // Sized up front: leaves are made by the million, and growing the
    // buffer from empty would cost several copies each.
    let strs = |v: &Option<String>| v.as_ref().map_or(1, |s| s.len() + 6);
    let cap = 24
        + strs(&n.code)
        + strs(&n.description)
        + strs(&n.kind)
        + n.symbol_names.iter().map(|s| s.len() + 5).sum::<usize>()
        + n.dependencies
            .iter()
            .map(|(_, s)| s.len() + 15)
            .sum::<usize>();
    let mut w = Writer {
        buf: Vec::with_capacity(cap),
    };
    w.buf.extend_from_slice(&[FORMAT_VERSION, TAG_LEAF]);
    w.node(n);
    w.buf
}

/// A branch of the current layout: bitmap, number of keys below, children.
pub(crate) fn encode_branch(bitmap: u32, len: u64, children: &[Hash]) -> Vec<u8> {
    let mut w = Writer {
        buf: Vec::with_capacity(16 + 32 * children.len()),
    };
    w.buf.extend_from_slice(&[FORMAT_VERSION, TAG_BRANCH3]);
    w.buf.extend_from_slice(&bitmap.to_le_bytes());
    w.uint(len);
    for h in children {
        w.hash(h);
    }
    w.buf
}

/// A branch of refs versions 1 and 2 (no key count), as they were written.
#[cfg(test)]
pub(crate) fn encode_branch_v2(bitmap: u32, children: &[Hash]) -> Vec<u8> {
    let mut w = Writer::blob(TAG_BRANCH);
    w.buf.extend_from_slice(&bitmap.to_le_bytes());
    for h in children {
        w.hash(h);
    }
    w.buf
}

/// The stored form of a sorted map (a persisted index) as a version
/// names it.
pub(crate) fn map_root(w: &mut Writer, r: &crate::repo::cas::sorted::MapRoot) {
    w.hash(&r.hash);
    w.byte(r.height);
    w.uint(r.max.len() as u64);
    w.buf.extend_from_slice(&r.max);
    w.uint(r.len);
}

/// What a version of refs version 3 records beside its reflog entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) parent: Option<VersionId>,
    pub(crate) root: Hash,
    pub(crate) node_count: u64,
    /// The delta's parts, in order, and the number of operations in all.
    pub(crate) forward: (Vec<Hash>, u64),
    pub(crate) reverse: (Vec<Hash>, u64),
    /// Persisted indexes of the version, by name (`None`: empty).
    pub(crate) indexes: Vec<(String, Option<crate::repo::cas::sorted::MapRoot>)>,
}

/// A reflog entry of refs version 3. Entry `seq` links to entry `seq - 1`
/// (`prev`) and, when `seq` is even, to entry `seq & (seq - 1)` (`back`),
/// so any entry is reached from a later one in O(log² n) reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry3 {
    pub(crate) seq: u64,
    pub(crate) prev: Option<Hash>,
    pub(crate) back: Option<Hash>,
    pub(crate) kind: ReflogKind,
    pub(crate) version: VersionId,
    pub(crate) previous: Option<VersionId>,
    /// The greatest version id made up to this entry: grows with `seq`,
    /// so a version's entry is found by search.
    pub(crate) made: VersionId,
    pub(crate) timestamp: Timestamp,
    pub(crate) description: String,
    /// For the initial version and commits.
    pub(crate) header: Option<Header>,
}

fn opt_hash(w: &mut Writer, h: &Option<Hash>) {
    match h {
        None => w.byte(0),
        Some(h) => {
            w.byte(1);
            w.hash(h);
        }
    }
}

fn kind_byte(k: ReflogKind) -> u8 {
    match k {
        ReflogKind::Init => 0,
        ReflogKind::Commit => 1,
        ReflogKind::Switch => 2,
    }
}

pub(crate) fn encode_entry3(e: &Entry3) -> Vec<u8> {
    let mut w = Writer::blob(TAG_ENTRY3);
    w.uint(e.seq);
    opt_hash(&mut w, &e.prev);
    opt_hash(&mut w, &e.back);
    w.byte(kind_byte(e.kind));
    w.uint(e.version);
    w.opt_uint(e.previous);
    w.uint(e.made);
    w.int(e.timestamp.0);
    w.str(&e.description);
    if let Some(h) = &e.header {
        w.opt_uint(h.parent);
        w.hash(&h.root);
        w.uint(h.node_count);
        for (parts, ops) in [&h.forward, &h.reverse] {
            w.uint(parts.len() as u64);
            for p in parts {
                w.hash(p);
            }
            w.uint(*ops);
        }
        w.uint(h.indexes.len() as u64);
        for (name, root) in &h.indexes {
            w.str(name);
            match root {
                None => w.byte(0),
                Some(root) => {
                    w.byte(1);
                    map_root(&mut w, root);
                }
            }
        }
    }
    w.buf
}

/// A part of a delta: operations in order.
pub(crate) fn encode_delta(ops: &[Op]) -> Vec<u8> {
    let mut w = Writer::blob(TAG_DELTA);
    w.ops(ops);
    w.buf
}

/// What a version adds to its reflog entry (refs versions 1 and 2).
#[cfg(test)]
pub(crate) struct VersionPart<'a> {
    pub(crate) parent: Option<VersionId>,
    pub(crate) root: Hash,
    pub(crate) node_count: u64,
    pub(crate) forward: &'a [Op],
    pub(crate) reverse: &'a [Op],
}

/// A reflog entry, the blob that records one move of the current version.
/// Commits and the initial version carry the version's record with them.
#[cfg(test)]
pub(crate) struct EntryRef<'a> {
    pub(crate) prev: Option<Hash>,
    pub(crate) kind: ReflogKind,
    pub(crate) version: VersionId,
    pub(crate) previous: Option<VersionId>,
    pub(crate) timestamp: Timestamp,
    pub(crate) description: &'a str,
    pub(crate) record: Option<VersionPart<'a>>,
}

#[cfg(test)]
pub(crate) fn encode_entry(e: &EntryRef) -> Vec<u8> {
    let mut w = Writer::blob(TAG_ENTRY);
    match &e.prev {
        None => w.byte(0),
        Some(h) => {
            w.byte(1);
            w.hash(h);
        }
    }
    w.byte(match e.kind {
        ReflogKind::Init => 0,
        ReflogKind::Commit => 1,
        ReflogKind::Switch => 2,
    });
    w.uint(e.version);
    w.opt_uint(e.previous);
    w.int(e.timestamp.0);
    w.str(e.description);
    if let Some(r) = &e.record {
        w.opt_uint(r.parent);
        w.hash(&r.root);
        w.uint(r.node_count);
        w.ops(r.forward);
        w.ops(r.reverse);
    }
    w.buf
}

// ---------------------------------------------------------------- reading

pub use crate::repo::cas::DecodeError;

type R<T> = Result<T, DecodeError>;

pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn err<T>(&self, what: impl Into<String>) -> R<T> {
        Err(DecodeError {
            offset: self.pos,
            what: what.into(),
        })
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    pub(crate) fn take(&mut self, n: usize, what: &str) -> R<&'a [u8]> {
        if self.remaining() < n {
            return self.err(format!(
                "truncated: {what} needs {n} bytes, {} left",
                self.remaining()
            ));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub(crate) fn byte(&mut self, what: &str) -> R<u8> {
        Ok(self.take(1, what)?[0])
    }

    /// A LEB128 integer. Most are one or two bytes (counts, lengths,
    /// differences of ids): those are read here, the rest by `uint_long`.
    #[inline]
    pub(crate) fn uint(&mut self, what: &str) -> R<u64> {
        match self.bytes.get(self.pos..) {
            Some(&[b0, ..]) if b0 < 0x80 => {
                self.pos += 1;
                Ok(u64::from(b0))
            }
            Some(&[b0, b1, ..]) if b1 < 0x80 && b1 != 0 => {
                self.pos += 2;
                Ok(u64::from(b0 & 0x7f) | u64::from(b1) << 7)
            }
            _ => self.uint_long(what),
        }
    }

    #[inline(never)]
    fn uint_long(&mut self, what: &str) -> R<u64> {
        let start = self.pos;
        let mut v: u64 = 0;
        let mut shift = 0u32;
        loop {
            let b = self.byte(what)?;
            if shift == 63 && b > 1 {
                self.pos = start;
                return self.err(format!("{what}: integer too large"));
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                if b == 0 && shift > 0 {
                    self.pos = start;
                    return self.err(format!("{what}: non-canonical integer"));
                }
                return Ok(v);
            }
            shift += 7;
        }
    }

    pub(crate) fn int(&mut self, what: &str) -> R<i64> {
        let u = self.uint(what)?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    pub(crate) fn hash(&mut self, what: &str) -> R<Hash> {
        let s = self.take(32, what)?;
        let mut h = [0u8; 32];
        h.copy_from_slice(s);
        Ok(h)
    }

    pub(crate) fn flag(&mut self, what: &str) -> R<bool> {
        match self.byte(what)? {
            0 => Ok(false),
            1 => Ok(true),
            b => {
                self.pos -= 1;
                self.err(format!("{what}: expected 0 or 1, found {b}"))
            }
        }
    }

    /// A count of items each at least `min_size` bytes long: bounded by the
    /// bytes left, so a corrupt count cannot make us allocate without limit.
    pub(crate) fn count(&mut self, what: &str, min_size: usize) -> R<usize> {
        let start = self.pos;
        let n = self.uint(what)?;
        let limit = self.remaining() / min_size.max(1);
        if n > limit as u64 {
            self.pos = start;
            return self.err(format!("{what}: count {n} exceeds the bytes left"));
        }
        Ok(n as usize)
    }

    pub(crate) fn str(&mut self, what: &str) -> R<String> {
        let n = self.count(what, 1)?;
        let start = self.pos;
        let s = self.take(n, what)?;
        match std::str::from_utf8(s) {
            Ok(s) => Ok(s.to_owned()),
            Err(_) => {
                self.pos = start;
                self.err(format!("{what}: not UTF-8"))
            }
        }
    }

    pub(crate) fn opt_str(&mut self, what: &str) -> R<Option<String>> {
        Ok(if self.flag(what)? {
            Some(self.str(what)?)
        } else {
            None
        })
    }

    pub(crate) fn opt_uint(&mut self, what: &str) -> R<Option<u64>> {
        Ok(if self.flag(what)? {
            Some(self.uint(what)?)
        } else {
            None
        })
    }

    pub(crate) fn opt_hash(&mut self, what: &str) -> R<Option<Hash>> {
        Ok(if self.flag(what)? {
            Some(self.hash(what)?)
        } else {
            None
        })
    }

    /// What a reflog entry records (`ReflogKind`), one byte.
    pub(crate) fn reflog_kind(&mut self) -> R<ReflogKind> {
        match self.byte("entry kind")? {
            0 => Ok(ReflogKind::Init),
            1 => Ok(ReflogKind::Commit),
            2 => Ok(ReflogKind::Switch),
            b => Err(DecodeError {
                offset: self.pos() - 1,
                what: format!("unknown entry kind {b}"),
            }),
        }
    }

    pub(crate) fn strs(&mut self, what: &str) -> R<Vec<String>> {
        let n = self.count(what, 1)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.str(what)?);
        }
        Ok(v)
    }

    pub(crate) fn deps(&mut self) -> R<Vec<(NodeId, String)>> {
        let n = self.count("dependencies", 2)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            let id = self.uint("dependency id")?;
            v.push((id, self.str("dependency name")?));
        }
        Ok(v)
    }

    pub(crate) fn node(&mut self) -> R<Node> {
        Ok(Node {
            id: self.uint("node id")?,
            code: self.opt_str("code")?,
            description: self.opt_str("description")?,
            symbol_names: self.strs("symbol names")?,
            kind: self.opt_str("type")?,
            dependencies: self.deps()?,
        })
    }

    pub(crate) fn changes(&mut self) -> R<NodeChanges> {
        let flags = self.byte("update fields")?;
        if flags & !0x1f != 0 {
            self.pos -= 1;
            return self.err(format!("update fields: unknown flags {flags:#x}"));
        }
        let mut c = NodeChanges::default();
        if flags & 1 != 0 {
            c.code = Some(self.opt_str("code")?);
        }
        if flags & 2 != 0 {
            c.description = Some(self.opt_str("description")?);
        }
        if flags & 4 != 0 {
            c.symbol_names = Some(self.strs("symbol names")?);
        }
        if flags & 8 != 0 {
            c.kind = Some(self.opt_str("type")?);
        }
        if flags & 16 != 0 {
            c.dependencies = Some(self.deps()?);
        }
        Ok(c)
    }

    pub(crate) fn op(&mut self) -> R<Op> {
        match self.byte("operation")? {
            1 => Ok(Op::Create(self.node()?)),
            2 => Ok(Op::Update {
                id: self.uint("node id")?,
                changes: self.changes()?,
            }),
            3 => Ok(Op::Delete(self.uint("node id")?)),
            b => {
                self.pos -= 1;
                self.err(format!("unknown operation {b}"))
            }
        }
    }

    pub(crate) fn ops(&mut self) -> R<Vec<Op>> {
        let n = self.count("operations", 2)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.op()?);
        }
        Ok(v)
    }

    pub(crate) fn end(&self) -> R<()> {
        if self.remaining() != 0 {
            return self.err(format!("{} unexpected trailing bytes", self.remaining()));
        }
        Ok(())
    }

    /// Reads and checks a blob's format version and tag.
    pub(crate) fn header(&mut self, tag: u8, what: &str) -> R<()> {
        let v = self.byte("format version")?;
        if v != FORMAT_VERSION {
            self.pos -= 1;
            return self.err(format!("unsupported format version {v}"));
        }
        let t = self.byte("blob tag")?;
        if t != tag {
            self.pos -= 1;
            return self.err(format!("expected {what} (tag {tag}), found tag {t}"));
        }
        Ok(())
    }
}

pub(crate) fn decode_entry3(bytes: &[u8]) -> R<Entry3> {
    let mut r = Reader::new(bytes);
    r.header(TAG_ENTRY3, "a reflog entry")?;
    let seq = r.uint("entry number")?;
    let prev = r.opt_hash("previous entry")?;
    let back = r.opt_hash("earlier entry")?;
    let kind = r.reflog_kind()?;
    let version = r.uint("version id")?;
    let previous = r.opt_uint("previous version")?;
    let made = r.uint("greatest version made")?;
    let timestamp = Timestamp(r.int("timestamp")?);
    let description = r.str("description")?;
    let header = match kind {
        ReflogKind::Switch => None,
        ReflogKind::Init | ReflogKind::Commit => {
            let parent = r.opt_uint("parent version")?;
            let root = r.hash("root")?;
            let node_count = r.uint("node count")?;
            let parts = |r: &mut Reader| -> R<(Vec<Hash>, u64)> {
                let n = r.count("delta parts", 32)?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(r.hash("delta part")?);
                }
                Ok((v, r.uint("operation count")?))
            };
            let forward = parts(&mut r)?;
            let reverse = parts(&mut r)?;
            let n = r.count("indexes", 2)?;
            let mut indexes = Vec::with_capacity(n);
            for _ in 0..n {
                let name = r.str("index name")?;
                if !r.flag("index present")? {
                    indexes.push((name, None));
                    continue;
                }
                let hash = r.hash("index root")?;
                let height = r.byte("index height")?;
                let kn = r.count("index key", 1)?;
                let max = r.take(kn, "index key")?.to_vec();
                let len = r.uint("index size")?;
                indexes.push((
                    name,
                    Some(crate::repo::cas::sorted::MapRoot {
                        hash,
                        height,
                        max,
                        len,
                    }),
                ));
            }
            Some(Header {
                parent,
                root,
                node_count,
                forward,
                reverse,
                indexes,
            })
        }
    };
    r.end()?;
    Ok(Entry3 {
        seq,
        prev,
        back,
        kind,
        version,
        previous,
        made,
        timestamp,
        description,
        header,
    })
}

pub(crate) fn decode_delta(bytes: &[u8]) -> R<Vec<Op>> {
    let mut r = Reader::new(bytes);
    r.header(TAG_DELTA, "a delta part")?;
    let ops = r.ops()?;
    r.end()?;
    Ok(ops)
}

/// A decoded reflog entry blob.
pub(crate) struct Entry {
    pub(crate) prev: Option<Hash>,
    pub(crate) kind: ReflogKind,
    pub(crate) version: VersionId,
    pub(crate) previous: Option<VersionId>,
    pub(crate) timestamp: Timestamp,
    pub(crate) description: String,
    pub(crate) record: Option<DecodedVersion>,
}

pub(crate) struct DecodedVersion {
    pub(crate) parent: Option<VersionId>,
    pub(crate) root: Hash,
    pub(crate) node_count: u64,
    pub(crate) forward: Vec<Op>,
    pub(crate) reverse: Vec<Op>,
}

pub(crate) fn decode_entry(bytes: &[u8]) -> R<Entry> {
    let mut r = Reader::new(bytes);
    r.header(TAG_ENTRY, "a reflog entry")?;
    let prev = r.opt_hash("previous entry")?;
    let kind = r.reflog_kind()?;
    let version = r.uint("version id")?;
    let previous = r.opt_uint("previous version")?;
    let timestamp = Timestamp(r.int("timestamp")?);
    let description = r.str("description")?;
    let record = match kind {
        ReflogKind::Switch => None,
        ReflogKind::Init | ReflogKind::Commit => Some(DecodedVersion {
            parent: r.opt_uint("parent version")?,
            root: r.hash("root")?,
            node_count: r.uint("node count")?,
            forward: r.ops()?,
            reverse: r.ops()?,
        }),
    };
    r.end()?;
    Ok(Entry {
        prev,
        kind,
        version,
        previous,
        timestamp,
        description,
        record,
    })
}

pub(crate) fn decode_leaf(bytes: &[u8]) -> R<Node> {
    let mut r = Reader::new(bytes);
    r.header(TAG_LEAF, "a node")?;
    let n = r.node()?;
    r.end()?;
    Ok(n)
}

/// A trie blob: a node's leaf or a branch with its children's names and,
/// in the current layout, the number of keys below it.
pub(crate) enum TreeBlob {
    Leaf(Node),
    Branch(u32, Vec<Hash>, Option<u64>),
}

pub(crate) fn decode_tree(bytes: &[u8]) -> R<TreeBlob> {
    if bytes.get(1) == Some(&TAG_LEAF) {
        return decode_leaf(bytes).map(TreeBlob::Leaf);
    }
    let mut r = Reader::new(bytes);
    let counted = bytes.get(1) == Some(&TAG_BRANCH3);
    r.header(
        if counted { TAG_BRANCH3 } else { TAG_BRANCH },
        "a trie branch or node",
    )?;
    let bm = r.take(4, "bitmap")?;
    let bitmap = u32::from_le_bytes([bm[0], bm[1], bm[2], bm[3]]);
    let len = if counted {
        Some(r.uint("node count")?)
    } else {
        None
    };
    let n = bitmap.count_ones() as usize;
    let mut children = Vec::with_capacity(n);
    for _ in 0..n {
        children.push(r.hash("child")?);
    }
    r.end()?;
    Ok(TreeBlob::Branch(bitmap, children, len))
}

/// The refs record: the small mutable part of a store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refs {
    /// `REFS_VERSION` when written; 1 to 3 when read.
    pub(crate) version: u8,
    pub(crate) current: VersionId,
    pub(crate) next_version: VersionId,
    pub(crate) next_node_id: NodeId,
    pub(crate) reflog_len: u64,
    pub(crate) reflog_head: Hash,
}

/// Layout: magic (8), refs version (1), payload length (u32 LE), payload,
/// BLAKE3 of everything before (32).
pub(crate) fn encode_refs(r: &Refs) -> Vec<u8> {
    let mut w = Writer { buf: Vec::new() };
    w.uint(r.current);
    w.uint(r.next_version);
    w.uint(r.next_node_id);
    w.uint(r.reflog_len);
    w.hash(&r.reflog_head);
    let payload = w.buf;
    let mut out = Vec::with_capacity(payload.len() + 45);
    out.extend_from_slice(REFS_MAGIC);
    out.push(r.version);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&payload);
    let sum = hash_bytes(&out);
    out.extend_from_slice(&sum);
    out
}

pub(crate) fn decode_refs(bytes: &[u8]) -> R<Refs> {
    let mut r = Reader::new(bytes);
    let magic = r.take(8, "magic")?;
    if magic != REFS_MAGIC {
        return Err(DecodeError {
            offset: 0,
            what: "not an Arbores refs record (bad magic)".into(),
        });
    }
    let v = r.byte("refs version")?;
    if !(1..=REFS_VERSION).contains(&v) {
        return Err(DecodeError {
            offset: 8,
            what: format!("unsupported refs version {v} (this build reads 1 to {REFS_VERSION})"),
        });
    }
    let len = r.take(4, "payload length")?;
    let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
    let payload_start = r.pos();
    r.take(len, "payload")?;
    let body_end = r.pos();
    let sum = r.hash("checksum")?;
    r.end()?;
    if hash_bytes(&bytes[..body_end]) != sum {
        return Err(DecodeError {
            offset: body_end,
            what: "checksum mismatch: the record is corrupt".into(),
        });
    }
    let mut p = Reader::new(&bytes[payload_start..body_end]);
    let at = |e: DecodeError| DecodeError {
        offset: e.offset + payload_start,
        what: e.what,
    };
    let refs = (|| {
        let refs = Refs {
            version: v,
            current: p.uint("current version")?,
            next_version: p.uint("next version id")?,
            next_node_id: p.uint("next node id")?,
            reflog_len: p.uint("reflog length")?,
            reflog_head: p.hash("reflog head")?,
        };
        p.end()?;
        Ok(refs)
    })()
    .map_err(at)?;
    Ok(refs)
}

#[cfg(test)]
mod hex_tests {
    use super::hex;

    #[test]
    fn names_are_64_lowercase_digits() {
        let mut h = [0u8; 32];
        h[0] = 0xab;
        h[1] = 0x01;
        h[31] = 0xff;
        let s = hex(&h);
        assert_eq!(s.len(), 64);
        assert!(s.starts_with("ab01") && s.ends_with("ff"));
        assert_eq!(s, s.to_lowercase());
    }
}
