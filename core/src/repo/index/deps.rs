//! The dependents index: what depends on each node, by ascending id. A
//! node's own dependencies are in the node (the version's trie); this index
//! answers the reverse question without reading every node.
//!
//! It is a persistent sorted map (`cas::sorted`) keyed by (dependency id,
//! dependent id), both big-endian, persisted with each version and read
//! lazily. A dependency on an id that no node has (yet, or any more) is
//! kept: the index then answers "who would break if this node went away".

use super::pairs::{NodeKeys, PairIndex};
use crate::repo::cas::StoreError;
use crate::repo::node::{Node, NodeId};

/// The dependents index: a pair index keyed by (dependency, dependent).
pub type DependencyIndex = PairIndex<ByDependency>;

/// The keys of a node's distinct dependencies.
pub struct ByDependency;

impl NodeKeys for ByDependency {
    fn keys(node: &Node) -> Vec<Vec<u8>> {
        deps(node)
            .into_iter()
            .map(|d| key(d, node.id).to_vec())
            .collect()
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

impl PairIndex<ByDependency> {
    /// The nodes that depend on `id`, by ascending id.
    pub fn dependents(&self, id: NodeId) -> Result<Vec<NodeId>, StoreError> {
        let mut out = Vec::new();
        for e in self.map().range_from(&id.to_be_bytes()) {
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
