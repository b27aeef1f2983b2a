//! The dependency index: what each node depends on (forward, in the order
//! the node gives its dependencies) and what depends on each node (reverse,
//! by ascending id).
//!
//! A dependency on an id that no node has (yet, or any more) is kept: the
//! reverse side then answers "who would break if this node went away".

use std::collections::{BTreeMap, BTreeSet};

use crate::repo::node::{Node, NodeId};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DependencyIndex {
    /// id → its dependencies, in the given order, each once.
    forward: BTreeMap<NodeId, Vec<NodeId>>,
    /// id → the nodes that depend on it.
    reverse: BTreeMap<NodeId, BTreeSet<NodeId>>,
}

impl DependencyIndex {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn clear(&mut self) {
        self.forward.clear();
        self.reverse.clear();
    }

    /// Number of nodes with at least one dependency.
    pub fn len(&self) -> usize {
        self.forward.len()
    }

    pub fn is_empty(&self) -> bool {
        self.forward.is_empty()
    }

    /// Index `node`, replacing whatever was indexed under its id.
    pub fn insert(&mut self, node: &Node) {
        let mut deps: Vec<NodeId> = Vec::with_capacity(node.dependencies.len());
        for (dep, _) in &node.dependencies {
            // The same id under two local names is one dependency.
            if !deps.contains(dep) {
                deps.push(*dep);
            }
        }
        if self.forward.get(&node.id).map(Vec::as_slice).unwrap_or(&[]) == deps.as_slice() {
            return;
        }
        self.remove(node.id);
        if deps.is_empty() {
            return;
        }
        for &dep in &deps {
            self.reverse.entry(dep).or_default().insert(node.id);
        }
        self.forward.insert(node.id, deps);
    }

    /// Forget `id`'s own dependencies. Nodes that depend on `id` keep
    /// their edges: they are their records, not `id`'s.
    pub fn remove(&mut self, id: NodeId) {
        let Some(deps) = self.forward.remove(&id) else {
            return;
        };
        for dep in deps {
            if let Some(users) = self.reverse.get_mut(&dep) {
                users.remove(&id);
                if users.is_empty() {
                    self.reverse.remove(&dep);
                }
            }
        }
    }

    /// One change of the current version (see the module `index`).
    pub fn apply(&mut self, old: Option<&Node>, new: Option<&Node>) {
        if let Some(o) = old {
            if new.map(|n| n.id) != Some(o.id) {
                self.remove(o.id);
            }
        }
        if let Some(n) = new {
            self.insert(n);
        }
    }

    /// `id`'s dependencies in the order its node gives them.
    pub fn dependencies(&self, id: NodeId) -> &[NodeId] {
        self.forward.get(&id).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The nodes that depend on `id`, by ascending id.
    pub fn dependents(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.reverse.get(&id).into_iter().flatten().copied()
    }

    /// Number of nodes that depend on `id`.
    pub fn dependent_count(&self, id: NodeId) -> usize {
        self.reverse.get(&id).map_or(0, BTreeSet::len)
    }

    /// `roots` and everything they depend on, directly or not, each once,
    /// every node after all of its dependencies (cycles are broken where the
    /// walk meets them). Deterministic: roots in the order given,
    /// dependencies in their nodes' order. Iterative, so long chains cannot
    /// overflow the stack.
    pub fn closure(&self, roots: &[NodeId]) -> Vec<NodeId> {
        let mut out = Vec::new();
        let mut done: BTreeSet<NodeId> = BTreeSet::new();
        let mut on_path: BTreeSet<NodeId> = BTreeSet::new();
        // (node, index of the next dependency to visit)
        let mut stack: Vec<(NodeId, usize)> = Vec::new();
        for &root in roots {
            if done.contains(&root) {
                continue;
            }
            stack.push((root, 0));
            on_path.insert(root);
            while let Some(&mut (id, ref mut next)) = stack.last_mut() {
                let deps = self.dependencies(id);
                if let Some(&dep) = deps.get(*next) {
                    *next += 1;
                    if !done.contains(&dep) && on_path.insert(dep) {
                        stack.push((dep, 0));
                    }
                } else {
                    stack.pop();
                    on_path.remove(&id);
                    done.insert(id);
                    out.push(id);
                }
            }
        }
        out
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
    fn forward_keeps_order_reverse_sorted() {
        let mut ix = DependencyIndex::new();
        ix.insert(&node(123, &[456, 789, 101, 456]));
        ix.insert(&node(5, &[789]));
        ix.insert(&node(900, &[789]));
        assert_eq!(ix.dependencies(123), &[456, 789, 101]);
        assert_eq!(ix.dependents(789).collect::<Vec<_>>(), vec![5, 123, 900]);
        assert_eq!(ix.dependents(456).collect::<Vec<_>>(), vec![123]);
        assert_eq!(ix.dependents(1).count(), 0);
        assert_eq!(ix.dependent_count(789), 3);

        // Replacing drops edges the new version no longer has.
        ix.apply(Some(&node(123, &[456, 789, 101])), Some(&node(123, &[101])));
        assert_eq!(ix.dependencies(123), &[101]);
        assert_eq!(ix.dependents(789).collect::<Vec<_>>(), vec![5, 900]);
        assert_eq!(ix.dependents(456).count(), 0);

        ix.apply(Some(&node(5, &[])), None);
        assert_eq!(ix.dependents(789).collect::<Vec<_>>(), vec![900]);
        // Removing a dependency target keeps its dependents' edges.
        ix.remove(789);
        assert_eq!(ix.dependents(789).collect::<Vec<_>>(), vec![900]);
    }

    #[test]
    fn closure_orders_dependencies_first() {
        let mut ix = DependencyIndex::new();
        ix.insert(&node(1, &[2, 3]));
        ix.insert(&node(2, &[4]));
        ix.insert(&node(3, &[4, 5]));
        ix.insert(&node(5, &[1])); // a cycle back to the root
        assert_eq!(ix.closure(&[1]), vec![4, 2, 5, 3, 1]);
        assert_eq!(ix.closure(&[3, 2]), vec![4, 2, 1, 5, 3]);
        assert_eq!(ix.closure(&[]), Vec::<NodeId>::new());
        // A long chain: no recursion.
        let mut ix = DependencyIndex::new();
        for i in 0..100_000u64 {
            ix.insert(&node(i, &[i + 1]));
        }
        let c = ix.closure(&[0]);
        assert_eq!(c.len(), 100_001);
        assert_eq!(c[0], 100_000);
    }
}
