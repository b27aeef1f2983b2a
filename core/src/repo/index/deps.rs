//! The dependents index: what depends on each node, by ascending id. A
//! node's own dependencies are in the node (the version's trie); this index
//! answers the reverse question without reading every node.
//!
//! It is a persistent sorted map (`cas::sorted`) keyed by (dependency id,
//! dependent id), both big-endian, persisted with each version and read
//! lazily. A dependency on an id that no node has (yet, or any more) is
//! kept: the index then answers "who would break if this node went away".

use crate::repo::cas::sorted::{MapRoot, SortedMap};
use crate::repo::cas::{Blobs, StoreError};
use crate::repo::node::{Node, NodeId};

#[derive(Clone, Debug)]
pub struct DependencyIndex {
    map: SortedMap,
}

impl Default for DependencyIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for DependencyIndex {
    fn eq(&self, other: &Self) -> bool {
        self.map.len() == other.map.len()
            && self
                .map
                .iter()
                .zip(other.map.iter())
                .all(|(a, b)| matches!((a, b), (Ok(a), Ok(b)) if a == b))
    }
}

fn key(dep: NodeId, user: NodeId) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&dep.to_be_bytes());
    k[8..].copy_from_slice(&user.to_be_bytes());
    k
}

/// A node's distinct dependencies, in the order given.
fn deps(node: &Node) -> Vec<NodeId> {
    let mut out: Vec<NodeId> = Vec::with_capacity(node.dependencies.len());
    for (dep, _) in &node.dependencies {
        // The same id under two local names is one dependency.
        if !out.contains(dep) {
            out.push(*dep);
        }
    }
    out
}

impl DependencyIndex {
    /// An empty index in memory.
    pub fn new() -> Self {
        DependencyIndex {
            map: SortedMap::new(Blobs::none()),
        }
    }

    /// The index stored under `root`, read from `blobs` as needed.
    pub fn open(root: Option<&MapRoot>, blobs: Blobs) -> Self {
        DependencyIndex {
            map: SortedMap::open(root, blobs),
        }
    }

    /// An empty index whose later versions are stored through `blobs`.
    pub fn with_blobs(blobs: Blobs) -> Self {
        DependencyIndex {
            map: SortedMap::new(blobs),
        }
    }

    /// The index persisted as `map`.
    pub fn from_map(map: SortedMap) -> Self {
        DependencyIndex { map }
    }

    /// The map, as a version persists it.
    pub fn map(&self) -> &SortedMap {
        &self.map
    }

    pub fn clear(&mut self) {
        self.map = SortedMap::new(self.map.blobs().clone());
    }

    /// Number of dependency edges.
    pub fn len(&self) -> u64 {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Index `node`'s dependencies.
    pub fn insert(&mut self, node: &Node) -> Result<(), StoreError> {
        for d in deps(node) {
            self.map.insert(&key(d, node.id), &[])?;
        }
        Ok(())
    }

    /// Forget `node`'s own dependencies (as it was indexed). Nodes that
    /// depend on it keep their edges: they are their records.
    pub fn remove(&mut self, node: &Node) -> Result<(), StoreError> {
        for d in deps(node) {
            self.map.remove(&key(d, node.id))?;
        }
        Ok(())
    }

    /// One change of the current version (see the module `index`): `old`
    /// is the node as it was indexed.
    pub fn apply(&mut self, old: Option<&Node>, new: Option<&Node>) -> Result<(), StoreError> {
        match (old, new) {
            (Some(o), Some(n)) if o.id == n.id => {
                let (before, after) = (deps(o), deps(n));
                for d in before.iter().filter(|d| !after.contains(d)) {
                    self.map.remove(&key(*d, o.id))?;
                }
                for d in after.iter().filter(|d| !before.contains(d)) {
                    self.map.insert(&key(*d, n.id), &[])?;
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

    /// The nodes that depend on `id`, by ascending id.
    pub fn dependents(&self, id: NodeId) -> Result<Vec<NodeId>, StoreError> {
        let mut out = Vec::new();
        for e in self.map.range_from(&id.to_be_bytes()) {
            let (k, _) = e?;
            let (dep, user) = k.split_at(8.min(k.len()));
            if dep != id.to_be_bytes() {
                break;
            }
            let user: [u8; 8] = user.try_into().map_err(|_| {
                StoreError::Inconsistent(
                    "the dependents index holds a key that is not an edge".into(),
                )
            })?;
            out.push(u64::from_be_bytes(user));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: NodeId, deps: &[NodeId]) -> Node {
        Node {
            id,
            code: Some("x".into()),
            description: None,
            symbol_names: Vec::new(),
            kind: None,
            dependencies: deps.iter().map(|&d| (d, format!("d{d}"))).collect(),
        }
    }

    #[test]
    fn dependents_sorted_and_follow_changes() -> Result<(), StoreError> {
        let mut ix = DependencyIndex::new();
        ix.insert(&node(123, &[456, 789, 101, 456]))?;
        ix.insert(&node(5, &[789]))?;
        ix.insert(&node(900, &[789]))?;
        assert_eq!(ix.len(), 5);
        assert_eq!(ix.dependents(789)?, vec![5, 123, 900]);
        assert_eq!(ix.dependents(456)?, vec![123]);
        assert_eq!(ix.dependents(1)?, Vec::<NodeId>::new());

        // Replacing drops edges the new version no longer has.
        ix.apply(Some(&node(123, &[456, 789, 101])), Some(&node(123, &[101])))?;
        assert_eq!(ix.dependents(789)?, vec![5, 900]);
        assert_eq!(ix.dependents(456)?, Vec::<NodeId>::new());
        assert_eq!(ix.dependents(101)?, vec![123]);

        ix.apply(Some(&node(5, &[789])), None)?;
        assert_eq!(ix.dependents(789)?, vec![900]);
        // Removing a dependency target keeps its dependents' edges.
        ix.remove(&node(789, &[]))?;
        assert_eq!(ix.dependents(789)?, vec![900]);
        Ok(())
    }
}
