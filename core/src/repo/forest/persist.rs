//! Persistence in the core's terms: the forest as `hash → bytes` blobs plus
//! one small refs record, going out as values and coming in through the
//! host's blob source.
//!
//! Blobs (refs version 3): every trie leaf (a node) and branch; one blob
//! per reflog entry, which links to the entry before it and to an earlier
//! one, and for a commit carries the new version's header (parent, trie
//! root, node count, the names of its delta parts and of its persisted
//! indexes); the delta parts; the nodes of the persisted indexes. The refs
//! record holds the newest entry's name, the current version and the id
//! counters, with a checksum.
//!
//! A store is therefore a table of blobs named by their hash plus one refs
//! record. Blobs never change, so writing them is idempotent; a host writes
//! the blobs of an export and the refs record together (one transaction)
//! or the blobs first. `export_new` yields only the blobs made since the
//! previous export: one commit costs its changed nodes, the trie branches
//! and index nodes on their paths, its delta and one entry.
//!
//! Opening (`open`) reads the refs record and the newest entry; the rest is
//! read when used. A store of refs version 1 or 2 is read whole (`legacy`)
//! and becomes a forest whose next export writes it in the current layout.

use std::sync::Arc;

use super::codec::{self, NameSet};
use super::hamt::{self, Tree};
use super::legacy;
use super::{Hash, ReflogKind, Version, VersionForest};
use crate::repo::cas::{Blobs, Link, MemoryBlobs, StoreError};
use crate::repo::node::{is_reserved, VersionId};

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
pub type ImportError = StoreError;

/// The blob of a trie leaf or branch (whose children are all named).
fn tree_blob(t: &Tree) -> Option<Vec<u8>> {
    match t {
        Tree::Leaf(l) => Some(codec::encode_leaf(&l.node)),
        Tree::Branch(b) => {
            let hashes = b
                .children
                .iter()
                .map(hamt::link_hash)
                .collect::<Option<Vec<_>>>()?;
            Some(codec::encode_branch(b.bitmap, b.len, &hashes))
        }
    }
}

/// Adds the blobs of a trie to `out`, each once, stopping at parts already
/// stored. Marks what it adds as stored.
fn collect_new(root: &Arc<Tree>, seen: &mut NameSet, out: &mut Vec<(Hash, Vec<u8>)>) {
    let mut stack = vec![root];
    while let Some(t) = stack.pop() {
        if t.is_saved() {
            continue;
        }
        let Some(h) = t.hash() else { continue };
        if seen.insert(h) {
            if let Some(bytes) = tree_blob(t) {
                out.push((h, bytes));
            }
            if let Tree::Branch(b) = &**t {
                stack.extend(b.children.iter().filter_map(|c| match c {
                    Link::Mem(t) => Some(t),
                    Link::Stored(..) => None,
                }));
            }
        }
        t.mark_saved();
    }
}

/// The names a blob refers to, by its kind (none for leaves, delta parts
/// and map leaves). Used to walk everything a refs record reaches.
pub(crate) fn links(bytes: &[u8]) -> Result<Vec<Hash>, crate::repo::cas::DecodeError> {
    match bytes.get(1).copied() {
        Some(codec::TAG_LEAF) | Some(codec::TAG_DELTA) | Some(codec::TAG_MAP_LEAF) => {
            Ok(Vec::new())
        }
        Some(codec::TAG_BRANCH) | Some(codec::TAG_BRANCH3) => match codec::decode_tree(bytes)? {
            codec::TreeBlob::Branch(_, children, _) => Ok(children),
            codec::TreeBlob::Leaf(_) => Ok(Vec::new()),
        },
        Some(codec::TAG_ENTRY) => {
            let e = codec::decode_entry(bytes)?;
            Ok(e.prev.into_iter().chain(e.record.map(|r| r.root)).collect())
        }
        Some(codec::TAG_ENTRY3) => {
            let e = codec::decode_entry3(bytes)?;
            let mut out: Vec<Hash> = e.prev.into_iter().chain(e.back).collect();
            if let Some(h) = e.header {
                out.push(h.root);
                out.extend(h.forward.0);
                out.extend(h.reverse.0);
                out.extend(
                    h.indexes
                        .iter()
                        .filter_map(|(_, r)| r.as_ref().map(|r| r.hash)),
                );
            }
            Ok(out)
        }
        Some(codec::TAG_MAP_INNER) => crate::repo::cas::sorted::child_names(bytes),
        _ => Err(crate::repo::cas::DecodeError {
            offset: 1,
            what: "not a blob of a kind this build knows".into(),
        }),
    }
}

/// What `verify` read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verified {
    pub versions: u64,
    pub reflog_entries: u64,
    /// Distinct trie nodes (leaves and branches) of all versions.
    pub trie_parts: u64,
    pub index_entries: u64,
}

impl VersionForest {
    fn refs_now(&self) -> codec::Refs {
        codec::Refs {
            version: codec::REFS_VERSION,
            current: self.current,
            next_version: self.next_version,
            next_node_id: self.next_node_id,
            reflog_len: self.entries.len() as u64,
            reflog_head: self.head,
        }
    }

    /// The refs record of the current state.
    pub fn refs_bytes(&self) -> Vec<u8> {
        codec::encode_refs(&self.refs_now())
    }

    /// The refs record as of the last export or open: the state the
    /// caller's store holds, and the base of its next compare-and-swap.
    pub fn saved_refs(&self) -> Vec<u8> {
        codec::encode_refs(&self.saved_refs)
    }

    /// Whether there are commits or moves since the last export or open.
    pub fn has_unsaved(&self) -> bool {
        self.saved_entries < self.entries.len()
    }

    /// Whether there is work of this writer's own to store: commits or
    /// moves since the last export or open, not counting the initial
    /// version of a forest never stored (every writer starting on an
    /// empty store makes that one, and a store that already holds another
    /// writer's history has its own).
    pub fn has_unsaved_work(&self) -> bool {
        let fresh = self.saved_refs.reflog_len == 0 && self.entries.len() <= 1;
        self.has_unsaved() && !fresh
    }

    /// The blobs made since the previous export (or open), each once, and
    /// the refs record. If a host failed to store an export, it stores an
    /// `export_full` instead, which repeats only blobs it may already have.
    pub fn export_new(&mut self) -> Snapshot {
        let mut blobs = Vec::new();
        let mut seen = NameSet::default();
        for seq in self.saved_entries..self.entries.len() {
            let Some(e) = self.entries[seq].get() else {
                continue;
            };
            blobs.push((e.hash, codec::encode_entry3(&e.blob)));
            if e.blob.header.is_none() {
                continue;
            }
            let Some(v) = e
                .blob
                .version
                .checked_sub(1)
                .and_then(|i| self.versions.get(i as usize))
                .and_then(|c| c.get())
            else {
                continue;
            };
            if let Some(root) = v.root.loaded() {
                collect_new(root, &mut seen, &mut blobs);
            }
            blobs.append(&mut v.unsaved_parts.borrow_mut());
            for (_, map) in &v.indexes {
                map.export(&mut blobs);
            }
        }
        self.mark_saved();
        Snapshot {
            blobs,
            refs: self.refs_bytes(),
        }
    }

    fn mark_saved(&mut self) {
        self.saved_entries = self.entries.len();
        self.saved_refs = self.refs_now();
    }

    /// Every blob the state reaches (reading from the store what is not in
    /// memory), and the refs record. Afterwards `export_new` starts from
    /// here.
    pub fn export_full(&mut self) -> Result<Snapshot, StoreError> {
        let mut blobs = Vec::new();
        let mut seen = NameSet::default();
        for seq in 0..self.entries.len() as u64 {
            let e = self.entry(seq).map_err(store_error)?;
            if seen.insert(e.hash) {
                blobs.push((e.hash, codec::encode_entry3(&e.blob)));
            }
        }
        let mut map_seen = std::collections::HashSet::new();
        for v in ROOT..self.next_version {
            let version = self.version(v).map_err(store_error)?;
            let root = self.root(v).map_err(store_error)?;
            let mut stack = vec![(root.clone(), 0u32, 0u64)];
            while let Some((t, level, prefix)) = stack.pop() {
                let Some(h) = t.hash() else { continue };
                if !seen.insert(h) {
                    continue;
                }
                if let Some(bytes) = tree_blob(&t) {
                    blobs.push((h, bytes));
                }
                t.mark_saved();
                if let Tree::Branch(b) = &*t {
                    let mut bits = b.bitmap;
                    for c in &b.children {
                        let s = bits.trailing_zeros();
                        bits &= bits.wrapping_sub(1);
                        if hamt::link_hash(c).is_some_and(|h| seen.contains(&h)) {
                            continue;
                        }
                        let sub = prefix | (u64::from(s) << (5 * level));
                        let child = hamt::load(&self.blobs, c, level + 1, sub)?;
                        stack.push((child.clone(), level + 1, sub));
                    }
                }
            }
            let record = self.version_info(v).map_err(store_error)?;
            for ops in [&record.forward, &record.reverse] {
                for part in super::delta_parts(ops) {
                    if seen.insert(part.0) {
                        blobs.push(part);
                    }
                }
            }
            version.unsaved_parts.borrow_mut().clear();
            for (_, map) in &version.indexes {
                map.export_all(&mut map_seen, &mut blobs)?;
            }
        }
        self.mark_saved();
        Ok(Snapshot {
            blobs,
            refs: self.refs_bytes(),
        })
    }

    /// The blobs a store lacks that holds this history up to the reflog
    /// entry that made version `since`, and the current refs record: an
    /// incremental export. The store's reflog must be that prefix of this
    /// one (see `extends`); the blobs are those the state as of the entry
    /// does not reach, each once.
    pub fn export_since(&mut self, since: VersionId) -> Result<Snapshot, StoreError> {
        let base = self.entry_of(since).map_err(store_error)?;
        let base_refs = codec::encode_refs(&codec::Refs {
            version: codec::REFS_VERSION,
            current: base.blob.version,
            next_version: base.blob.made + 1,
            // Not known for that moment and not needed to walk its blobs.
            next_node_id: self.next_node_id,
            reflog_len: base.blob.seq + 1,
            reflog_head: base.hash,
        });
        let mut before = VersionForest::open(&base_refs, self.blobs.clone())?;
        let known: std::collections::HashSet<Hash> = before
            .export_full()?
            .blobs
            .into_iter()
            .map(|(h, _)| h)
            .collect();
        let mut all = self.export_full()?;
        all.blobs.retain(|(h, _)| !known.contains(h));
        Ok(all)
    }

    /// Whether this history continues the one `refs` names: its reflog
    /// holds the entry `refs` names as newest, at the same place. What an
    /// incremental import into a store of that record requires.
    pub fn extends(&self, refs: &[u8]) -> Result<bool, StoreError> {
        let r = codec::decode_refs(refs).map_err(StoreError::Refs)?;
        let Some(seq) = r.reflog_len.checked_sub(1) else {
            return Ok(false);
        };
        if seq >= self.entries.len() as u64 {
            return Ok(false);
        }
        Ok(self.entry(seq).map_err(store_error)?.hash == r.reflog_head)
    }

    /// Opens the state named by `refs`, reading its blobs from `blobs` when
    /// they are needed. Only the refs record and the newest reflog entry are
    /// read now (a store of refs version 1 or 2 is read whole and converted:
    /// see `legacy`). Whatever is read later is checked when it is read.
    pub fn open(refs: &[u8], blobs: Blobs) -> Result<VersionForest, StoreError> {
        let r = codec::decode_refs(refs).map_err(StoreError::Refs)?;
        if r.version < 3 {
            let old = legacy::read(&r, &blobs)?;
            return convert(old, &r, blobs);
        }
        let n = r.reflog_len;
        if n == 0 || r.next_version <= ROOT || r.current == 0 || r.current >= r.next_version {
            return Err(StoreError::Inconsistent(format!(
                "the refs record is impossible ({n} reflog entries, current version {}, next {})",
                r.current, r.next_version
            )));
        }
        let bytes = blobs.fetch(&r.reflog_head, &|| "the newest reflog entry".to_string())?;
        let blob = codec::decode_entry3(&bytes).map_err(|error| StoreError::CorruptBlob {
            hash: r.reflog_head,
            error,
        })?;
        if blob.seq + 1 != n || blob.version != r.current || blob.made + 1 != r.next_version {
            return Err(StoreError::Inconsistent(format!(
                "the newest reflog entry (number {}, version {}) is not the one the refs record \
                 names (number {}, current version {})",
                blob.seq,
                blob.version,
                n - 1,
                r.current
            )));
        }
        let entry = super::ReflogEntry {
            kind: blob.kind,
            version: blob.version,
            previous: blob.previous,
            timestamp: blob.timestamp,
            description: blob.description.clone(),
        };
        let mut entries: Vec<std::cell::OnceCell<Box<super::StoredEntry>>> = Vec::new();
        entries.resize_with(n as usize, Default::default);
        let _ = entries[n as usize - 1].set(Box::new(super::StoredEntry {
            hash: r.reflog_head,
            blob,
            entry,
        }));
        let mut versions: Vec<std::cell::OnceCell<Box<Version>>> = Vec::new();
        versions.resize_with((r.next_version - 1) as usize, Default::default);
        Ok(VersionForest {
            blobs,
            versions,
            entries,
            head: r.reflog_head,
            current: r.current,
            next_version: r.next_version,
            next_node_id: r.next_node_id,
            saved_entries: n as usize,
            saved_refs: r,
            children: std::cell::RefCell::new(None),
        })
    }

    /// Rebuilds a forest from a refs record and blobs fetched by name
    /// through `lookup`, reading and checking all of it now (see `verify`).
    pub fn import<F, B>(refs: &[u8], mut lookup: F) -> Result<VersionForest, ImportError>
    where
        F: FnMut(&Hash) -> Option<B>,
        B: AsRef<[u8]>,
    {
        let store = MemoryBlobs::new();
        let r = codec::decode_refs(refs).map_err(StoreError::Refs)?;
        let mut todo = vec![r.reflog_head];
        let mut seen = NameSet::default();
        while let Some(h) = todo.pop() {
            if !seen.insert(h) {
                continue;
            }
            // What is missing or damaged is reported by the open below,
            // which says what needed it.
            let Some(bytes) = lookup(&h) else { continue };
            let bytes = bytes.as_ref().to_vec();
            if codec::hash_bytes(&bytes) == h {
                if let Ok(names) = links(&bytes) {
                    todo.extend(names);
                }
            }
            store.put(h, bytes);
        }
        let forest = VersionForest::open(refs, Blobs::new(store))?;
        forest.verify()?;
        Ok(forest)
    }

    /// Imports from snapshots: a full export, optionally followed by later
    /// incremental ones (the newest refs record wins). Every blob given is
    /// checked against its name, used or not, and the state is read whole.
    pub fn import_snapshots<'a, I>(snapshots: I) -> Result<VersionForest, ImportError>
    where
        I: IntoIterator<Item = &'a Snapshot>,
    {
        let store = MemoryBlobs::new();
        let mut refs = None;
        for s in snapshots {
            for (h, b) in &s.blobs {
                if codec::hash_bytes(b) != *h {
                    return Err(StoreError::HashMismatch { hash: *h });
                }
                store.put(*h, b.clone());
            }
            refs = Some(&s.refs);
        }
        let refs = refs.ok_or(StoreError::NoSnapshot)?;
        let forest = VersionForest::open(refs, Blobs::new(store))?;
        forest.verify()?;
        Ok(forest)
    }

    /// Reads everything the state reaches and checks it: every reflog
    /// entry and its links, every version's header, trie (each part where
    /// it belongs, the node counts, the node ids below the next id), deltas
    /// and persisted indexes. What `fsck` runs; an import runs it too.
    pub fn verify(&self) -> Result<Verified, StoreError> {
        let mut report = Verified::default();
        let mut made = 0;
        for seq in 0..self.entries.len() as u64 {
            let e = self.entry(seq).map_err(store_error)?;
            report.reflog_entries += 1;
            if e.blob.header.is_some() {
                made += 1;
                if e.blob.version != made {
                    return Err(StoreError::Inconsistent(format!(
                        "reflog entry {seq} makes version {}, expected {made}",
                        e.blob.version
                    )));
                }
            } else if !self.contains_version(e.blob.version) || e.blob.version > made {
                return Err(StoreError::Inconsistent(format!(
                    "reflog entry {seq} switches to version {}, which it does not know",
                    e.blob.version
                )));
            }
            if seq > 0 {
                let before = self.entry(seq - 1).map_err(store_error)?;
                if e.entry.previous != Some(before.entry.version) {
                    return Err(StoreError::Inconsistent(format!(
                        "reflog entry {seq} does not follow the entry before it"
                    )));
                }
            }
        }
        if made + 1 != self.next_version {
            return Err(StoreError::Inconsistent(format!(
                "the reflog makes {made} versions, the refs record counts {}",
                self.next_version - 1
            )));
        }
        let mut seen = NameSet::default();
        for v in ROOT..self.next_version {
            let version = self.version(v).map_err(store_error)?;
            report.versions += 1;
            if let Some(p) = version.parent {
                let parent_entry = self.entry_of(v).map_err(store_error)?;
                if parent_entry.entry.previous != Some(p) {
                    return Err(StoreError::Inconsistent(format!(
                        "version {v}: its parent {p} was not current when it was made"
                    )));
                }
            }
            let root = self.root(v).map_err(store_error)?;
            let mut count = 0u64;
            let mut stack = vec![(root, 0u32, 0u64)];
            while let Some((t, level, prefix)) = stack.pop() {
                if let Some(h) = t.hash() {
                    if !seen.insert(h) {
                        // Read and checked where it was found first; a
                        // shared part is at the same place in every trie.
                        count += t.len();
                        continue;
                    }
                }
                report.trie_parts += 1;
                match &**t {
                    Tree::Leaf(l) => {
                        count += 1;
                        if !is_reserved(l.node.id) && l.node.id >= self.next_node_id {
                            return Err(StoreError::Inconsistent(format!(
                                "version {v}: node {} is not below the next node id {}",
                                l.node.id, self.next_node_id
                            )));
                        }
                    }
                    Tree::Branch(b) => {
                        let mut bits = b.bitmap;
                        let mut below = 0;
                        for c in &b.children {
                            let s = bits.trailing_zeros();
                            bits &= bits.wrapping_sub(1);
                            let sub = prefix | (u64::from(s) << (5 * level));
                            let child = hamt::load(&self.blobs, c, level + 1, sub)?;
                            below += child.len();
                            stack.push((child, level + 1, sub));
                        }
                        if below != b.len {
                            return Err(StoreError::Inconsistent(format!(
                                "version {v}: a trie branch says it holds {} nodes, it holds {below}",
                                b.len
                            )));
                        }
                    }
                }
            }
            if count != version.node_count {
                return Err(StoreError::Inconsistent(format!(
                    "version {v}: its trie holds {count} nodes, its header says {}",
                    version.node_count
                )));
            }
            self.version_info(v).map_err(store_error)?;
            for (_, map) in &version.indexes {
                for entry in map.iter() {
                    entry?;
                    report.index_entries += 1;
                }
            }
        }
        Ok(report)
    }
}

const ROOT: VersionId = super::ROOT_VERSION;

fn store_error(e: super::ForestError) -> StoreError {
    match e {
        super::ForestError::Store(e) => e,
        other => StoreError::Inconsistent(other.to_string()),
    }
}

/// A forest of the current layout holding what an old store holds: the
/// same versions, reflog, counters and leaves; new branches, entries and
/// delta parts, all unsaved (the next export writes them), and the old
/// refs record as the saved one (the base of the compare-and-swap that
/// replaces it).
fn convert(
    old: Vec<legacy::OldEntry>,
    refs: &codec::Refs,
    blobs: Blobs,
) -> Result<VersionForest, StoreError> {
    let mut forest: Option<VersionForest> = None;
    for e in old {
        match (forest.as_mut(), e.made) {
            (None, Some((record, root))) => {
                hamt::seal(&root);
                let mut f = VersionForest {
                    blobs: blobs.clone(),
                    versions: Vec::new(),
                    entries: Vec::new(),
                    head: [0; 32],
                    current: record.id,
                    next_version: record.id,
                    next_node_id: refs.next_node_id,
                    saved_entries: 0,
                    saved_refs: refs.clone(),
                    children: std::cell::RefCell::new(None),
                };
                f.add_version(record, root, Vec::new(), ReflogKind::Init, None);
                forest = Some(f);
            }
            (Some(f), Some((record, root))) => {
                hamt::seal(&root);
                let previous = e.previous;
                f.add_version(record, root, Vec::new(), ReflogKind::Commit, previous);
            }
            (Some(f), None) => {
                f.push_entry(
                    ReflogKind::Switch,
                    e.version,
                    e.previous,
                    e.timestamp,
                    e.description,
                    None,
                );
            }
            (None, None) => {
                return Err(StoreError::Inconsistent(
                    "the reflog does not start with the initial version".into(),
                ))
            }
        }
    }
    let mut f = forest.ok_or_else(|| StoreError::Inconsistent("the reflog is empty".into()))?;
    f.next_node_id = refs.next_node_id;
    f.saved_refs = refs.clone();
    // The sources of the history were checked by `legacy`; a version's
    // timestamp and description come from its entry there.
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::ImportError;
    use crate::repo::cas::DecodeError;

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
            ImportError::Unavailable(String::new()),
            ImportError::NoSnapshot,
        ];
        for e in &all {
            assert!(ImportError::KINDS.contains(&e.kind()), "{e:?}");
        }
        assert_eq!(all[2].blob(), Some([2; 32]));
        assert_eq!(all[4].blob(), None);
        assert_eq!(all[5].kind(), "unavailable");
        let wit = include_str!("../../../../wasm/wit/arbores.wit");
        for kind in ImportError::KINDS {
            assert!(
                wit.contains(&format!("\"{kind}\"")),
                "{kind} is not in arbores.wit"
            );
        }
    }
}
