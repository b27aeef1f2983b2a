//! An index of (term, node) pairs: each node contributes the keys of its
//! terms (its names, its dependencies), each key ending in the node's id,
//! kept in a persistent sorted map (`cas::sorted`) persisted with the
//! version it indexes and read lazily. The symbol and dependents indexes
//! are this structure with their own keys and their own queries.

use std::marker::PhantomData;

use crate::repo::cas::sorted::{MapRoot, SortedMap};
use crate::repo::cas::{Blobs, StoreError};
use crate::repo::node::Node;

/// What a pair index holds of a node: the keys of its distinct terms,
/// each ending in the node's id (so two nodes never share a key).
pub trait NodeKeys {
    fn keys(node: &Node) -> Vec<Vec<u8>>;
}

pub struct PairIndex<K> {
    map: SortedMap,
    keys: PhantomData<K>,
}

// Written out rather than derived: a derive would ask `K` (a marker that
// is never stored) for the trait too.
impl<K> Clone for PairIndex<K> {
    fn clone(&self) -> Self {
        PairIndex::from_map(self.map.clone())
    }
}

impl<K> std::fmt::Debug for PairIndex<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PairIndex").field("map", &self.map).finish()
    }
}

impl<K: NodeKeys> Default for PairIndex<K> {
    fn default() -> Self {
        Self::new()
    }
}

/// Two indexes are equal when they hold the same keys and values (a map
/// that cannot be read equals nothing).
impl<K> PartialEq for PairIndex<K> {
    fn eq(&self, other: &Self) -> bool {
        self.map.len() == other.map.len()
            && self
                .map
                .iter()
                .zip(other.map.iter())
                .all(|(a, b)| matches!((a, b), (Ok(a), Ok(b)) if a == b))
    }
}

impl<K> PairIndex<K> {
    /// The index persisted as `map`.
    pub fn from_map(map: SortedMap) -> Self {
        PairIndex {
            map,
            keys: PhantomData,
        }
    }

    /// An empty index in memory.
    pub fn new() -> Self {
        Self::from_map(SortedMap::new(Blobs::none()))
    }

    /// The index stored under `root`, read from `blobs` as queries need.
    pub fn open(root: Option<&MapRoot>, blobs: Blobs) -> Self {
        Self::from_map(SortedMap::open(root, blobs))
    }

    /// An empty index whose later versions are stored through `blobs`.
    pub fn with_blobs(blobs: Blobs) -> Self {
        Self::from_map(SortedMap::new(blobs))
    }

    /// The map, as a version persists it.
    pub fn map(&self) -> &SortedMap {
        &self.map
    }

    pub fn clear(&mut self) {
        self.map = SortedMap::new(self.map.blobs().clone());
    }

    /// Number of (term, node) pairs.
    pub fn len(&self) -> u64 {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

impl<K: NodeKeys> PairIndex<K> {
    /// Index `node`'s terms.
    pub fn insert(&mut self, node: &Node) -> Result<(), StoreError> {
        for k in K::keys(node) {
            self.map.insert(&k, &[])?;
        }
        Ok(())
    }

    /// Forget `node`'s own terms (as it was indexed). Other nodes' pairs
    /// stay, even those that name it.
    pub fn remove(&mut self, node: &Node) -> Result<(), StoreError> {
        for k in K::keys(node) {
            self.map.remove(&k)?;
        }
        Ok(())
    }

    /// One change of the current version (see the module `index`): `old`
    /// is the node as it was indexed. A node replaced by itself changes
    /// only the pairs that differ.
    pub fn apply(&mut self, old: Option<&Node>, new: Option<&Node>) -> Result<(), StoreError> {
        match (old, new) {
            (Some(o), Some(n)) if o.id == n.id => {
                let (before, after) = (K::keys(o), K::keys(n));
                for k in before.iter().filter(|k| !after.contains(k)) {
                    self.map.remove(k)?;
                }
                for k in after.iter().filter(|k| !before.contains(k)) {
                    self.map.insert(k, &[])?;
                }
                Ok(())
            }
            _ => {
                if let Some(o) = old {
                    self.remove(o)?;
                }
                if let Some(n) = new {
                    self.insert(n)?;
                }
                Ok(())
            }
        }
    }
}
