//! `Knowledge`: the version forest and the indexes of its current version,
//! kept in step. Every change of the current version (a commit or a switch)
//! goes through here, so the indexes always describe the current version.

use super::builtins::builtin_nodes;
use super::forest::{Committed, ForestError, Op, Timestamp, VersionForest};
use super::index::Indexes;
use super::node::VersionId;

pub struct Knowledge {
    pub forest: VersionForest,
    pub indexes: Indexes,
}

impl Knowledge {
    /// A new knowledge base whose root version holds the builtin nodes.
    pub fn new(timestamp: Timestamp) -> Result<Knowledge, ForestError> {
        let forest = VersionForest::new(builtin_nodes(), "initial version", timestamp)?;
        Ok(Knowledge::with_forest(forest))
    }

    /// Wraps a forest (for example one just imported), indexing its current version.
    pub fn with_forest(forest: VersionForest) -> Knowledge {
        let mut indexes = Indexes::new();
        if let Ok(nodes) = forest.nodes(forest.current()) {
            indexes.rebuild(nodes);
        }
        Knowledge { forest, indexes }
    }

    /// Commits `ops` as one new version and updates the indexes.
    pub fn commit(
        &mut self,
        ops: Vec<Op>,
        description: &str,
        timestamp: Timestamp,
    ) -> Result<Committed, ForestError> {
        let committed = self.forest.commit(ops, description, timestamp)?;
        self.indexes.apply_all(
            committed
                .changes
                .iter()
                .map(|c| (c.old.as_ref(), c.new.as_ref())),
        );
        Ok(committed)
    }

    /// Makes `target` current, applying the difference to the indexes.
    pub fn switch(
        &mut self,
        target: VersionId,
        description: &str,
        timestamp: Timestamp,
    ) -> Result<(), ForestError> {
        let changes = self.forest.switch(target, description, timestamp)?;
        self.indexes
            .apply_all(changes.iter().map(|c| (c.old.as_ref(), c.new.as_ref())));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::index::SymbolMode;
    use crate::repo::node::Node;

    fn node(name: &str, description: &str) -> Node {
        Node {
            id: 0,
            code: Some(format!("(define ({name} x) x)")),
            description: Some(description.to_string()),
            symbol_names: vec![name.to_string()],
            kind: Some("function".to_string()),
            dependencies: vec![],
        }
    }

    #[test]
    fn builtins_are_searchable_and_switch_keeps_indexes_in_step() {
        let mut k = Knowledge::new(Timestamp(0)).expect("knowledge");
        let hits = k
            .indexes
            .symbols
            .search("arb:", SymbolMode::Prefix, 100)
            .expect("search");
        assert_eq!(hits.len(), super::super::builtins::ARB_PROCEDURES.len());
        let root = k.forest.current();
        let c = k
            .commit(
                vec![Op::Create(node("quicksort", "快速排序实现"))],
                "add quicksort",
                Timestamp(1),
            )
            .expect("commit");
        let id = c.created[0];
        let found = k
            .indexes
            .symbols
            .search("quick*", SymbolMode::Wildcard, 10)
            .expect("search");
        assert_eq!(found.iter().map(|h| h.id).collect::<Vec<_>>(), vec![id]);
        k.switch(root, "back to the root", Timestamp(2))
            .expect("switch");
        assert!(k
            .indexes
            .symbols
            .search("quicksort", SymbolMode::Exact, 10)
            .expect("search")
            .is_empty());
        k.switch(c.version, "forward again", Timestamp(3))
            .expect("switch");
        assert_eq!(
            k.indexes
                .symbols
                .search("quicksort", SymbolMode::Exact, 10)
                .expect("search")
                .len(),
            1
        );
    }
}
