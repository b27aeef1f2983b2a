//! `Knowledge`: the version forest and the indexes of its working state,
//! kept in step.
//!
//! The working state is the current version, or, while a transaction is
//! open, the current version plus the transaction's changes. Every change
//! (a single operation, a transaction's operation, a commit, an abort, a
//! switch, an import) goes through here, so the indexes always describe the
//! working state: a search inside a transaction finds what the transaction
//! created, and an abort puts the indexes back exactly as they were.
//!
//! A single operation outside a transaction is committed at once as a
//! version of its own. Transactions nest: an inner one is a savepoint of the
//! outer one, and only the outermost commit makes a version.

use super::builtins::builtin_nodes;
use super::forest::{
    Committed, ForestError, NodeChanges, Nodes, Op, Pending, Timestamp, VersionForest,
};
use super::index::{Embedder, Indexes, SemanticConfig};
use super::node::{Node, NodeId, VersionId};

/// What undoing one operation of a transaction needs. The indexes remove
/// by id (they never read the old node's content), so a created node is
/// remembered by its id alone; a changed or deleted one by its old self.
enum IndexChange {
    Created(NodeId),
    Changed(Node),
    Deleted(Node),
}

impl IndexChange {
    fn id(&self) -> NodeId {
        match self {
            IndexChange::Created(id) => *id,
            IndexChange::Changed(n) | IndexChange::Deleted(n) => n.id,
        }
    }
}

/// A node that stands for `id` where only the id is read.
fn stub(id: NodeId) -> Node {
    Node {
        id,
        code: None,
        description: None,
        symbol_names: Vec::new(),
        kind: None,
        dependencies: Vec::new(),
    }
}

struct OpenTransaction {
    pending: Pending,
    /// Index changes applied since the outermost transaction began, oldest
    /// first: what an abort undoes.
    applied: Vec<IndexChange>,
    /// One per open inner transaction: the state to go back to if it fails.
    savepoints: Vec<(Pending, usize)>,
}

pub struct Knowledge {
    pub forest: VersionForest,
    pub indexes: Indexes,
    tx: Option<OpenTransaction>,
    /// Counts changes of the working state; equal generations, equal state.
    generation: u64,
    /// Ids whose node changed since the last `take_changed`.
    changed: Vec<NodeId>,
}

impl std::fmt::Debug for Knowledge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Knowledge")
            .field("forest", &self.forest)
            .field("transaction_depth", &self.depth())
            .field("generation", &self.generation)
            .finish()
    }
}

/// What a single operation did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    /// The node created, changed or deleted.
    pub id: NodeId,
    /// The version the operation made; `None` inside a transaction, where
    /// the version is made when the outermost transaction commits.
    pub version: Option<VersionId>,
}

impl Knowledge {
    /// A new knowledge base whose root version holds the builtin nodes.
    pub fn new(timestamp: Timestamp) -> Knowledge {
        // The builtins are static data with distinct reserved ids (a unit
        // test checks it), so the root version cannot be refused.
        let forest = VersionForest::new(builtin_nodes(), "initial version", timestamp)
            .unwrap_or_else(|e| unreachable!("the builtin nodes are invalid: {e}"));
        Knowledge::with_forest(forest)
    }

    /// Wraps a forest (for example one just imported), indexing its current version.
    pub fn with_forest(forest: VersionForest) -> Knowledge {
        let mut indexes = Indexes::new();
        if let Ok(nodes) = forest.nodes(forest.current()) {
            indexes.rebuild(nodes);
        }
        Knowledge {
            forest,
            indexes,
            tx: None,
            generation: 0,
            changed: Vec::new(),
        }
    }

    /// Replaces the semantic index's embedder (a host's model) and
    /// re-indexes the working state with it.
    pub fn set_embedder(&mut self, embedder: Box<dyn Embedder>, config: SemanticConfig) {
        let mut indexes = Indexes::with_embedder(embedder, config);
        indexes.rebuild(self.working_nodes());
        self.indexes = indexes;
    }

    // ---- reading ------------------------------------------------------------

    /// Changes with every change of the working state.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The ids whose node changed since the last call (possibly repeated).
    pub fn take_changed(&mut self) -> Vec<NodeId> {
        std::mem::take(&mut self.changed)
    }

    /// How many transactions are open (0: none).
    pub fn depth(&self) -> usize {
        self.tx.as_ref().map_or(0, |t| t.savepoints.len() + 1)
    }

    /// The committed current version (a transaction's changes are not in it
    /// until it commits).
    pub fn current(&self) -> VersionId {
        self.forest.current()
    }

    /// A node of the working state.
    pub fn get(&self, id: NodeId) -> Option<&Node> {
        match &self.tx {
            Some(t) => t.pending.get(id),
            None => self.forest.get(self.forest.current(), id).ok().flatten(),
        }
    }

    /// A node as it is in `version`, or in the working state for `None`.
    pub fn get_at(
        &self,
        version: Option<VersionId>,
        id: NodeId,
    ) -> Result<Option<&Node>, ForestError> {
        match version {
            None => Ok(self.get(id)),
            Some(v) => self.forest.get(v, id),
        }
    }

    /// Every node of the working state.
    pub fn working_nodes(&self) -> Nodes<'_> {
        match &self.tx {
            Some(t) => t.pending.nodes(),
            None => self.forest.current_nodes(),
        }
    }

    /// Every node of `version`, or of the working state for `None`.
    pub fn nodes_at(&self, version: Option<VersionId>) -> Result<Nodes<'_>, ForestError> {
        match version {
            None => Ok(self.working_nodes()),
            Some(v) => self.forest.nodes(v),
        }
    }

    pub fn node_count(&self) -> u64 {
        match &self.tx {
            Some(t) => t.pending.node_count(),
            None => self.forest.node_count(self.forest.current()).unwrap_or(0),
        }
    }

    // ---- changing -------------------------------------------------------------

    fn bump(&mut self, ids: impl IntoIterator<Item = NodeId>) {
        self.generation += 1;
        self.changed.extend(ids);
    }

    /// Runs one operation: inside the open transaction, or as a version of
    /// its own described by `description`.
    fn operate(
        &mut self,
        op: Op,
        description: &dyn Fn(NodeId) -> String,
        timestamp: Timestamp,
    ) -> Result<Done, ForestError> {
        if let Some(t) = &mut self.tx {
            let change = apply_op(&mut t.pending, op)?;
            let id = change.id();
            let old = match &change {
                IndexChange::Created(_) => None,
                IndexChange::Changed(n) | IndexChange::Deleted(n) => Some(n),
            };
            self.indexes.apply_deferred(old, t.pending.get(id));
            t.applied.push(change);
            self.bump([id]);
            return Ok(Done { id, version: None });
        }
        let mut pending = self.forest.begin();
        let id = apply_op(&mut pending, op)?.id();
        let committed = self
            .forest
            .commit_pending(pending, &description(id), timestamp)?;
        self.apply_committed(&committed);
        Ok(Done {
            id,
            version: Some(committed.version),
        })
    }

    fn apply_committed(&mut self, committed: &Committed) {
        self.indexes.apply_all(
            committed
                .changes
                .iter()
                .map(|c| (c.old.as_ref(), c.new.as_ref())),
        );
        self.bump(committed.changes.iter().map(|c| c.id));
    }

    /// Creates a node (its `id` is ignored).
    pub fn create(
        &mut self,
        node: Node,
        description: &dyn Fn(NodeId) -> String,
        timestamp: Timestamp,
    ) -> Result<Done, ForestError> {
        self.operate(Op::Create(node), description, timestamp)
    }

    pub fn update(
        &mut self,
        id: NodeId,
        changes: NodeChanges,
        description: &dyn Fn(NodeId) -> String,
        timestamp: Timestamp,
    ) -> Result<Done, ForestError> {
        self.operate(Op::Update { id, changes }, description, timestamp)
    }

    pub fn delete(
        &mut self,
        id: NodeId,
        description: &dyn Fn(NodeId) -> String,
        timestamp: Timestamp,
    ) -> Result<Done, ForestError> {
        self.operate(Op::Delete(id), description, timestamp)
    }

    /// Commits `ops` as one version (for hosts and tests; Scheme goes through
    /// transactions). If one fails, nothing changes.
    pub fn commit(
        &mut self,
        ops: Vec<Op>,
        description: &str,
        timestamp: Timestamp,
    ) -> Result<Committed, ForestError> {
        if self.tx.is_some() {
            return Err(ForestError::TransactionOpen);
        }
        let committed = self.forest.commit(ops, description, timestamp)?;
        self.apply_committed(&committed);
        Ok(committed)
    }

    /// Opens a transaction (nested in the open one, if any) and returns the
    /// new depth.
    pub fn begin(&mut self) -> usize {
        match &mut self.tx {
            Some(t) => {
                t.savepoints.push((t.pending.clone(), t.applied.len()));
            }
            None => {
                self.tx = Some(OpenTransaction {
                    pending: self.forest.begin(),
                    applied: Vec::new(),
                    savepoints: Vec::new(),
                });
            }
        }
        self.depth()
    }

    /// The operations of the open transactions so far.
    pub fn pending_ops(&self) -> &[Op] {
        self.tx.as_ref().map_or(&[], |t| t.pending.ops())
    }

    /// Commits the innermost open transaction. The outermost one becomes
    /// exactly one version (also when it changed nothing) and returns it;
    /// an inner one merges into its parent and returns `None`.
    pub fn commit_transaction(
        &mut self,
        description: &str,
        timestamp: Timestamp,
    ) -> Result<Option<VersionId>, ForestError> {
        let Some(t) = &mut self.tx else {
            return Err(ForestError::NoTransaction);
        };
        if t.savepoints.pop().is_some() {
            return Ok(None);
        }
        let Some(t) = self.tx.take() else {
            return Err(ForestError::NoTransaction);
        };
        let applied = t.applied;
        match self
            .forest
            .commit_pending_quiet(t.pending, description, timestamp)
        {
            Ok(committed) => {
                // The indexes followed every operation already.
                let _ = self.indexes.semantic.settle();
                self.generation += 1;
                Ok(Some(committed.version))
            }
            Err(e) => {
                // Only a stale base or exhausted ids can get here; the
                // changes are lost, so the indexes go back with them.
                self.undo_index_changes(applied);
                Err(e)
            }
        }
    }

    /// Abandons the innermost open transaction: the working state and the
    /// indexes are what they were when it began. Returns whether one was open.
    pub fn abort_transaction(&mut self) -> bool {
        let Some(t) = &mut self.tx else {
            return false;
        };
        let undo = match t.savepoints.pop() {
            Some((pending, mark)) => {
                t.pending = pending;
                t.applied.split_off(mark)
            }
            None => self.tx.take().map(|t| t.applied).unwrap_or_default(),
        };
        self.undo_index_changes(undo);
        true
    }

    /// Abandons every open transaction.
    pub fn abort_all(&mut self) {
        while self.abort_transaction() {}
    }

    fn undo_index_changes(&mut self, changes: Vec<IndexChange>) {
        let ids: Vec<NodeId> = changes.iter().map(IndexChange::id).collect();
        for change in changes.iter().rev() {
            match change {
                IndexChange::Created(id) => self.indexes.apply_deferred(Some(&stub(*id)), None),
                IndexChange::Changed(old) => {
                    self.indexes.apply_deferred(Some(&stub(old.id)), Some(old))
                }
                IndexChange::Deleted(old) => self.indexes.apply_deferred(None, Some(old)),
            }
        }
        let _ = self.indexes.semantic.settle();
        self.bump(ids);
    }

    /// Makes `target` current, applying the difference to the indexes.
    /// Refused while a transaction is open.
    pub fn switch(
        &mut self,
        target: VersionId,
        description: &str,
        timestamp: Timestamp,
    ) -> Result<(), ForestError> {
        if self.tx.is_some() {
            return Err(ForestError::TransactionOpen);
        }
        let changes = self.forest.switch(target, description, timestamp)?;
        self.indexes
            .apply_all(changes.iter().map(|c| (c.old.as_ref(), c.new.as_ref())));
        self.bump(changes.iter().map(|c| c.id));
        Ok(())
    }
}

/// Applies one operation to a transaction; returns what undoing it in the
/// indexes needs.
fn apply_op(p: &mut Pending, op: Op) -> Result<IndexChange, ForestError> {
    match op {
        Op::Create(node) => Ok(IndexChange::Created(p.create(node)?)),
        Op::Update { id, changes } => {
            let old = p.get(id).cloned().ok_or(ForestError::NodeNotFound(id))?;
            p.update(id, changes)?;
            Ok(IndexChange::Changed(old))
        }
        Op::Delete(id) => Ok(IndexChange::Deleted(p.delete(id)?)),
    }
}

#[cfg(test)]
mod tests;
