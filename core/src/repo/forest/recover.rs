//! Recovery of a refs record from the blobs alone, for `arbores fsck
//! --repair`: when the record is lost or names a history that no longer
//! reads whole, the reflog entries among the blobs say which states the
//! store went through, newest first.
//!
//! Every reflog entry blob names its number in the reflog, the version it
//! made current and the greatest version id made so far; what it does not
//! name is the next node id, which is taken as one past the greatest node
//! id of any stored trie leaf (a gap in node ids is harmless; a reused id
//! would not be). A candidate is only a guess until the caller has
//! imported it, which reads and checks everything it reaches
//! (`VersionForest::import`): the first candidate that imports is the
//! newest consistent state.

use super::codec::{self, Refs, TreeBlob, REFS_VERSION};
use super::Hash;
use crate::repo::node::{NodeId, VersionId};

/// A refs record rebuilt from one reflog entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The refs record naming the entry as the newest.
    pub refs: Vec<u8>,
    /// The entry's number in the reflog (0 for the first).
    pub entry: u64,
    /// The version it makes current.
    pub version: VersionId,
    /// When the entry was made, in milliseconds since the Unix epoch.
    pub timestamp_ms: i64,
    /// Its description (the commit message or the switch).
    pub description: String,
}

/// What the blobs of a store offer for recovery.
#[derive(Clone, Debug, Default)]
pub struct Recovery {
    /// Newest first: by entry number, then by time, then by name (so
    /// the order is the same on every run).
    pub candidates: Vec<Candidate>,
    /// One past the greatest node id of a stored leaf.
    pub next_node_id: NodeId,
}

/// Reads every blob given (name, bytes) and lists the states a refs record
/// could name. Blobs whose bytes do not match their name are skipped (the
/// caller reports them); blobs of other kinds only count for node ids.
pub fn candidates<'a, I>(blobs: I) -> Recovery
where
    I: IntoIterator<Item = (&'a Hash, &'a [u8])>,
{
    let mut entries: Vec<(Hash, codec::Entry3)> = Vec::new();
    let mut next_node_id: NodeId = super::FIRST_NODE_ID;
    for (name, bytes) in blobs {
        if codec::hash_bytes(bytes) != *name {
            continue;
        }
        match bytes.get(1).copied() {
            Some(codec::TAG_ENTRY3) => {
                if let Ok(e) = codec::decode_entry3(bytes) {
                    entries.push((*name, e));
                }
            }
            Some(codec::TAG_LEAF) => {
                if let Ok(TreeBlob::Leaf(node)) = codec::decode_tree(bytes) {
                    next_node_id = next_node_id.max(node.id.saturating_add(1));
                }
            }
            _ => {}
        }
    }
    // The greatest id plus one may fall in a reserved range (a builtin's
    // leaf); the counter always names a free id.
    next_node_id = super::first_free_id(next_node_id).unwrap_or(NodeId::MAX);
    entries.sort_by(|(ha, a), (hb, b)| {
        b.seq
            .cmp(&a.seq)
            .then(b.timestamp.0.cmp(&a.timestamp.0))
            .then(ha.cmp(hb))
    });
    let candidates = entries
        .into_iter()
        .map(|(name, e)| Candidate {
            refs: codec::encode_refs(&Refs {
                version: REFS_VERSION,
                current: e.version,
                next_version: e.made + 1,
                next_node_id,
                reflog_len: e.seq + 1,
                reflog_head: name,
            }),
            entry: e.seq,
            version: e.version,
            timestamp_ms: e.timestamp.0,
            description: e.description,
        })
        .collect();
    Recovery {
        candidates,
        next_node_id,
    }
}

/// The number of the newest reflog entry a refs record names, if it reads
/// (its checksum holds): what a repair that ends the history earlier
/// drops is said from it.
pub fn newest_entry(refs: &[u8]) -> Option<u64> {
    codec::decode_refs(refs).ok()?.reflog_len.checked_sub(1)
}
