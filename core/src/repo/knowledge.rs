//! `Knowledge`: the version forest and the indexes of its working state,
//! kept in step, and kept in the host's store.
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
//!
//! With a store (`Knowledge::open`), each commit (and each switch) is
//! handed to the host's [`KnowledgeStore`] before the call that made it
//! returns: its new blobs and the refs record that names the new state,
//! stored only if the store's head is still the one this knowledge base
//! started from. When another writer moved the head meanwhile, the commit
//! is taken back, the other writer's state adopted (read lazily), and the
//! commit's recorded operations applied again on top of it (created nodes
//! get the next free ids), then stored; when a node it changes was changed
//! by the other writer too, or an operation no longer applies, nothing is
//! stored and the caller gets a `Conflict` naming the nodes: the knowledge
//! base is then the other writer's state, consistent and stored.

use std::rc::Rc;

use super::builtins::builtin_nodes;
use super::cas::{BlobSource, Blobs, StoreError};
use super::forest::{
    op_summary, transaction_summary, Committed, ForestError, NodeChanges, Nodes, Op, Pending,
    ReflogKind, Snapshot, Timestamp, VersionForest,
};
use super::index::{
    DependencyIndex, Embedder, IndexError, Indexes, LexicalIndex, SemanticConfig, SymbolIndex,
};
use super::node::{Node, NodeId, VersionId};

/// The host's store of a knowledge base, as the core uses it: blobs by
/// name, the current refs record, and a compare-and-swap commit.
pub trait KnowledgeStore: BlobSource {
    /// The refs record the store holds now; `None` for an empty store.
    fn head(&self) -> Result<Option<Vec<u8>>, String>;

    /// Stores `snapshot`'s blobs and makes its refs record the head, if the
    /// head is still `base` (`None`: the store is empty). Durable when it
    /// returns `Committed`; nothing is written otherwise.
    fn commit(&self, base: Option<&[u8]>, snapshot: &Snapshot) -> Result<CommitReply, String>;
}

/// A store's answer to a commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommitReply {
    Committed,
    /// Another writer moved the head: here it is now.
    Moved(Option<Vec<u8>>),
}

/// How many times a commit is applied again on a head that keeps moving
/// before it gives up with a conflict.
const MAX_REPLAYS: usize = 64;

/// What undoing one operation of a transaction needs in the in-memory
/// indexes (the persisted indexes go back by a saved copy). They remove by
/// id, so a created node is remembered by its id alone; a
/// changed or deleted one by its old self.
#[derive(Clone)]
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

/// The persisted indexes at a point of a transaction, to go back to.
#[derive(Clone)]
struct SavedIndexes {
    symbols: SymbolIndex,
    dependencies: DependencyIndex,
    lexical: LexicalIndex,
    lexical_built: bool,
}

struct OpenTransaction {
    pending: Pending,
    /// Semantic index changes applied since the outermost transaction
    /// began, oldest first: what an abort undoes.
    applied: Vec<IndexChange>,
    /// The persisted indexes when the outermost transaction began.
    start: SavedIndexes,
    /// One per open inner transaction: the state to go back to if it fails.
    savepoints: Vec<(Pending, usize, SavedIndexes)>,
}

/// Why a change could not be stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreFailure {
    /// Another writer changed the same nodes (or made the operations
    /// impossible): nothing was stored; the knowledge base is now the
    /// other writer's state.
    Conflict { nodes: Vec<NodeId>, reason: String },
    /// The store could not be read or written: nothing was stored.
    Unavailable(String),
}

pub struct Knowledge {
    pub forest: VersionForest,
    pub indexes: Indexes,
    store: Option<Rc<dyn KnowledgeStore>>,
    tx: Option<OpenTransaction>,
    /// Counts changes of the working state; equal generations, equal state.
    generation: u64,
    /// Ids whose node changed since the last `take_changed`.
    changed: Vec<NodeId>,
    /// New ids given to created nodes when their commit was applied again
    /// on another writer's state (old id, new id), since `take_renumbered`.
    renumbered: Vec<(NodeId, NodeId)>,
    /// Versions stored since `take_committed`.
    committed: Vec<VersionId>,
}

impl std::fmt::Debug for Knowledge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Knowledge")
            .field("forest", &self.forest)
            .field("transaction_depth", &self.depth())
            .field("generation", &self.generation)
            .field("stored", &self.store.is_some())
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

/// A failure of a change: of the operation itself, or of storing it.
impl From<StoreFailure> for ForestError {
    fn from(f: StoreFailure) -> Self {
        match f {
            StoreFailure::Unavailable(m) => ForestError::Store(StoreError::Unavailable(m)),
            StoreFailure::Conflict { nodes, reason } => ForestError::Conflict { nodes, reason },
        }
    }
}

impl Knowledge {
    /// A new knowledge base in memory whose root version holds the builtin
    /// nodes.
    pub fn new(timestamp: Timestamp) -> Knowledge {
        Knowledge::new_with(timestamp, Indexes::new())
    }

    /// As `new`, with `indexes` (see `with_forest_and`).
    pub fn new_with(timestamp: Timestamp, indexes: Indexes) -> Knowledge {
        // The builtins are static data with distinct reserved ids (a unit
        // test checks it), so the root version cannot be refused.
        let forest = VersionForest::new(builtin_nodes(), "initial version", timestamp)
            .unwrap_or_else(|e| unreachable!("the builtin nodes are invalid: {e}"));
        Knowledge::with_forest_and(forest, indexes)
            .unwrap_or_else(|e| unreachable!("in memory: {e}"))
    }

    /// Wraps a forest (for example one just imported), indexing its
    /// current version: its persisted indexes if it has them, else built
    /// from its nodes.
    pub fn with_forest(forest: VersionForest) -> Result<Knowledge, ForestError> {
        Knowledge::with_forest_and(forest, Indexes::new())
    }

    /// As `with_forest`, with `indexes` (empty; a host's embedder or
    /// lexicon) instead of the default ones: a stored index made by that
    /// embedder is used as it is.
    pub fn with_forest_and(
        forest: VersionForest,
        mut indexes: Indexes,
    ) -> Result<Knowledge, ForestError> {
        let current = forest.current();
        if !indexes.adopt(forest.indexes_of(current)?) {
            indexes.rebuild(forest.nodes(current)?)?;
        }
        Ok(Knowledge {
            forest,
            indexes,
            store: None,
            tx: None,
            generation: 0,
            changed: Vec::new(),
            renumbered: Vec::new(),
            committed: Vec::new(),
        })
    }

    /// The knowledge base kept in `store`: what it holds (read lazily), or
    /// a new one (stored by its first commit) when it is empty.
    pub fn open(
        store: Rc<dyn KnowledgeStore>,
        timestamp: Timestamp,
    ) -> Result<Knowledge, ForestError> {
        Knowledge::open_with(store, timestamp, Indexes::new())
    }

    /// As `open`, with `indexes` (see `with_forest_and`).
    pub fn open_with(
        store: Rc<dyn KnowledgeStore>,
        timestamp: Timestamp,
        indexes: Indexes,
    ) -> Result<Knowledge, ForestError> {
        let blobs = Blobs::new(store.clone());
        let head = store
            .head()
            .map_err(|m| ForestError::Store(StoreError::Unavailable(m)))?;
        let forest = match head {
            Some(refs) => VersionForest::open(&refs, blobs)?,
            None => VersionForest::new_in(blobs, builtin_nodes(), "initial version", timestamp)?,
        };
        let mut k = Knowledge::with_forest_and(forest, indexes)?;
        k.store = Some(store);
        // A store of an earlier layout is written in the current one by
        // the first change; nothing is written by reading it.
        Ok(k)
    }

    /// Whether a store keeps this knowledge base.
    pub fn is_stored(&self) -> bool {
        self.store.is_some()
    }

    /// Replaces the semantic index's embedder (a host's model). The
    /// current version's stored semantic index is used if that embedder
    /// made it; else the index is built again with the new one when a
    /// semantic search needs it (with a note saying so), and stored with
    /// the next version.
    pub fn set_embedder(&mut self, embedder: Box<dyn Embedder>, config: SemanticConfig) {
        let was_loaded = self.indexes.semantic.is_loaded();
        self.indexes.fusion.tune_for(embedder.as_ref());
        self.indexes.semantic = super::index::SemanticIndex::new(embedder, config);
        self.indexes.semantic.forget();
        let maps = match &self.tx {
            None => self.forest.indexes_of(self.forest.current()).ok().cloned(),
            Some(_) => None,
        };
        if maps.is_some_and(|maps| self.indexes.adopt_semantic(&maps)) {
            return;
        }
        if was_loaded {
            // The index was in memory (a new knowledge base, or one whose
            // version stored none): it stays so, made with this embedder.
            let nodes = match &self.tx {
                Some(t) => t.pending.nodes(),
                None => match self.forest.nodes(self.forest.current()) {
                    Ok(n) => n,
                    Err(_) => return,
                },
            };
            if let Err(e) = self.indexes.build_semantic(nodes) {
                self.indexes.semantic.forget();
                self.indexes.semantic.note(format!(
                    "the semantic index could not be built ({e}); it is built when a search needs it"
                ));
            }
        }
    }

    /// Notes for the host's user (a stored index refused or built again)
    /// since the last call.
    pub fn take_notes(&mut self) -> Vec<String> {
        self.indexes.semantic.take_notes()
    }

    /// The semantic index of the working state, loaded (or built) first if
    /// need be.
    /// What it would report waits with the notes (`take_notes`).
    pub fn semantic(&mut self) -> Result<&mut super::index::SemanticIndex, ForestError> {
        let mut said = Vec::new();
        self.load_semantic(&mut |t| said.push(t.to_string()));
        self.semantic_with(&mut |t| said.push(t.to_string()))?;
        for text in said {
            self.indexes.semantic.note(text);
        }
        Ok(&mut self.indexes.semantic)
    }

    /// Reads the whole stored semantic index into memory, if it is
    /// stored and not loaded; one that cannot be used is noted (and built
    /// again from the nodes by `semantic_with`).
    fn load_semantic(&mut self, report: &mut dyn FnMut(&str)) {
        let semantic = &mut self.indexes.semantic;
        if !semantic.is_loaded() && semantic.is_stored() {
            if let Err(why) = semantic.load() {
                semantic.note(format!(
                    "the stored semantic index cannot be used ({why}); it is built again from the nodes"
                ));
            }
        }
        for note in self.indexes.semantic.take_notes() {
            report(&note);
        }
    }

    /// What a search needs, telling `report` what long work it does: the
    /// stored semantic index is left unloaded when a search can read it
    /// where it needs to (`SemanticIndex::searchable_stored`), else loaded,
    /// or built from the nodes when there is none this engine can use; the
    /// lexical index is built from the nodes when the version stored none.
    pub fn semantic_with(
        &mut self,
        report: &mut dyn FnMut(&str),
    ) -> Result<&mut super::index::SemanticIndex, ForestError> {
        if !self.indexes.semantic.searchable_stored() {
            self.load_semantic(report);
        }
        for note in self.indexes.semantic.take_notes() {
            report(&note);
        }
        let semantic = &self.indexes.semantic;
        let unusable = !semantic.is_loaded() && !semantic.is_stored();
        if !self.indexes.lexical_built || unusable {
            let rebuild = unusable;
            let count = match &self.tx {
                Some(t) => t.pending.node_count(),
                None => self.forest.node_count(self.forest.current())?,
            };
            if rebuild {
                report(&format!(
                    "building the semantic index of {count} nodes with the embedder {}",
                    self.indexes.semantic.embedder_id()
                ));
            }
            let nodes = match &self.tx {
                Some(t) => t.pending.nodes(),
                None => self.forest.nodes(self.forest.current())?,
            };
            self.indexes.build_search(nodes, &mut |done| {
                report(&format!("read {done} of {count} nodes"))
            })?;
        }
        Ok(&mut self.indexes.semantic)
    }

    /// `arb:semantic-search` over the working state: the indexes loaded
    /// (or built) as a search needs them, graph work left by switches
    /// done, long work told to `report`. The stored indexes are read
    /// lazily, so damage can first show in the search itself: a damaged
    /// lexical index is dropped with a note and built again from the
    /// nodes, a damaged semantic one loaded whole (which notes the damage
    /// and builds it again), and the query asked again.
    pub fn search_with(
        &mut self,
        text: &str,
        query: &super::index::SemanticQuery<'_>,
        report: &mut dyn FnMut(&str),
    ) -> Result<Result<Vec<super::index::SemanticHit>, IndexError>, ForestError> {
        let mut tried = false;
        loop {
            let semantic = self.semantic_with(report)?;
            semantic.maintain_with(&mut |done, total| {
                report(&format!("semantic graph: {done} of {total} nodes inserted"))
            });
            match self.indexes.search(text, query) {
                // A search that needs the whole semantic index, or met
                // damage in its stored form: loaded whole (and checked;
                // built again if damaged), then asked again.
                Err(IndexError::Unloaded | IndexError::StoredSemantic(_))
                    if !self.indexes.semantic.is_loaded() =>
                {
                    self.load_semantic(report);
                }
                Err(IndexError::Store(e)) if !tried && self.indexes.lexical_built => {
                    tried = true;
                    self.indexes.forget_lexical(&e.to_string());
                }
                result => {
                    // Searches that have read a good share of the stored
                    // index load it whole: the next ones of this process
                    // run in memory.
                    if result.is_ok() && self.indexes.semantic.wants_loading() {
                        self.load_semantic(report);
                    }
                    return Ok(result);
                }
            }
        }
    }

    /// Builds the lexical index from the working state where it is not
    /// built or cannot be used (a store of an older layout, damage),
    /// telling `report` as it goes, before a change whose version stores
    /// it: the commit would otherwise build it without a word (minutes at
    /// a million nodes). Trouble on the way leaves it to the commit, which
    /// tries again.
    pub fn prepare_lexical(&mut self, report: &mut dyn FnMut(&str)) -> Result<(), ForestError> {
        if self.indexes.lexical_built {
            // Its header says whether this build can use it (one read).
            match self.indexes.lexical.len() {
                Ok(_) => return Ok(()),
                Err(e) => self.indexes.forget_lexical(&e.to_string()),
            }
        }
        for note in self.indexes.semantic.take_notes() {
            report(&note);
        }
        let (count, nodes) = match &self.tx {
            Some(t) => (t.pending.node_count(), t.pending.nodes()),
            None => {
                let current = self.forest.current();
                (
                    self.forest.node_count(current)?,
                    self.forest.nodes(current)?,
                )
            }
        };
        report(&format!(
            "building the lexical index of {count} nodes, to be stored with the next version"
        ));
        let built = self.indexes.fresh_lexical(nodes, &mut |done| {
            report(&format!("read {done} of {count} nodes"))
        });
        if let Ok((fresh, _)) = built {
            self.indexes.lexical = fresh;
            self.indexes.lexical_built = true;
        }
        Ok(())
    }

    /// Makes sure a version stores a lexical index: one that cannot be
    /// written (an older layout, damage) is dropped with a note, and one
    /// not built (dropped, or missing from the version this one follows)
    /// is built from `nodes` (the working state), so that the processes
    /// after this one find it stored instead of each building it at its
    /// first search. Trouble on the way leaves it unbuilt, as before: a
    /// commit never fails for the lexical index.
    fn keep_lexical(indexes: &mut Indexes, nodes: Nodes<'_>) {
        if indexes.lexical_built {
            match indexes.lexical.map() {
                Ok(_) => return,
                Err(e) => indexes.forget_lexical(&e.to_string()),
            }
        }
        if let Ok((fresh, _)) = indexes.fresh_lexical(nodes, &mut |_| {}) {
            indexes.lexical = fresh;
            indexes.lexical_built = true;
        }
    }

    /// Does the semantic index's graph work before a version stores it
    /// (see `SemanticIndex::needs_work`): loading it, or building it from
    /// `nodes` (the working state) if its stored form cannot be used.
    fn keep_semantic(indexes: &mut Indexes, nodes: Nodes<'_>) -> Result<(), ForestError> {
        let semantic = &mut indexes.semantic;
        if !semantic.needs_work() {
            return Ok(());
        }
        if !semantic.is_loaded() {
            if let Err(why) = semantic.load() {
                semantic.note(format!(
                    "the stored semantic index cannot be used ({why}); it is built again from the nodes"
                ));
                indexes.semantic.clear();
                for node in nodes {
                    indexes.semantic.apply_deferred(None, Some(node?));
                }
            }
        }
        indexes.semantic.maintain();
        Ok(())
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

    /// Created nodes whose ids changed when their commit was applied again
    /// on another writer's state, since the last call.
    pub fn take_renumbered(&mut self) -> Vec<(NodeId, NodeId)> {
        std::mem::take(&mut self.renumbered)
    }

    /// The versions stored since the last call, in order.
    pub fn take_committed(&mut self) -> Vec<VersionId> {
        std::mem::take(&mut self.committed)
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
    pub fn get(&self, id: NodeId) -> Result<Option<&Node>, ForestError> {
        match &self.tx {
            Some(t) => t.pending.get(id),
            None => self.forest.get(self.forest.current(), id),
        }
    }

    /// A node as it is in `version`, or in the working state for `None`.
    pub fn get_at(
        &self,
        version: Option<VersionId>,
        id: NodeId,
    ) -> Result<Option<&Node>, ForestError> {
        match version {
            None => self.get(id),
            Some(v) => self.forest.get(v, id),
        }
    }

    /// Every node of the working state.
    pub fn working_nodes(&self) -> Result<Nodes<'_>, ForestError> {
        match &self.tx {
            Some(t) => Ok(t.pending.nodes()),
            None => self.forest.nodes(self.forest.current()),
        }
    }

    /// Every node of `version`, or of the working state for `None`.
    pub fn nodes_at(&self, version: Option<VersionId>) -> Result<Nodes<'_>, ForestError> {
        match version {
            None => self.working_nodes(),
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
    /// its own described by `description`, stored before this returns.
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
                IndexChange::Changed(n) | IndexChange::Deleted(n) => Some(n.clone()),
            };
            let new = t.pending.get(id)?.cloned();
            if let Err(e) = self.indexes.apply_deferred(old.as_ref(), new.as_ref()) {
                // The persisted indexes could not follow: undo the
                // operation in the transaction too.
                self.abort_last(change);
                return Err(e.into());
            }
            if let Some(t) = &mut self.tx {
                t.applied.push(change);
            }
            self.bump([id]);
            return Ok(Done { id, version: None });
        }
        let mut pending = self.forest.begin()?;
        let change = apply_op(&mut pending, op.clone())?;
        let id = change.id();
        let mark = self.renumbered.len();
        let version = self.commit_single(pending, &change, &description(id), timestamp)?;
        let id = self.stored_id(id, mark);
        Ok(Done {
            id,
            version: Some(version),
        })
    }

    /// The id a node made here has in the store: `id` followed through the
    /// renumberings since `mark`. A commit replayed more than once is
    /// renumbered more than once (281 → 282, then 282 → 283).
    fn stored_id(&self, id: NodeId, mark: usize) -> NodeId {
        let mut id = id;
        for (old, new) in &self.renumbered[mark.min(self.renumbered.len())..] {
            if *old == id {
                id = *new;
            }
        }
        id
    }

    /// Undoes the last operation of the open transaction (whose indexes
    /// failed to follow it).
    fn abort_last(&mut self, _change: IndexChange) {
        // Simplest exact undo: the whole transaction's state at its last
        // savepoint is not at hand, so the transaction fails as a whole.
        self.abort_all();
    }

    /// Commits a one-operation transaction as a version, with the indexes.
    fn commit_single(
        &mut self,
        pending: Pending,
        change: &IndexChange,
        description: &str,
        timestamp: Timestamp,
    ) -> Result<VersionId, ForestError> {
        let id = change.id();
        let old = match change {
            IndexChange::Created(_) => None,
            IndexChange::Changed(n) | IndexChange::Deleted(n) => Some(n.clone()),
        };
        let new = pending.get(id)?.cloned();
        let mut symbols = self.indexes.symbols.clone();
        let mut dependencies = self.indexes.dependencies.clone();
        symbols.apply(old.as_ref(), new.as_ref())?;
        dependencies.apply(old.as_ref(), new.as_ref())?;
        // The semantic index follows first, so that its stored form goes
        // with the version; taken back if the version is not made.
        self.indexes.apply_semantic([(old.as_ref(), new.as_ref())]);
        let kept = Self::keep_semantic(&mut self.indexes, pending.nodes());
        let mut maps = vec![
            (super::index::SYMBOLS.to_string(), symbols.map().clone()),
            (
                super::index::DEPENDENTS.to_string(),
                dependencies.map().clone(),
            ),
        ];
        if let Some(semantic) = self.indexes.semantic.persist() {
            maps.push((super::index::SEMANTIC.to_string(), semantic));
        }
        // The lexical index, if built, follows in a copy taken only if the
        // version is made; one it cannot follow is built again later.
        let mut lexical = (self.indexes.lexical.clone(), self.indexes.lexical_built);
        if lexical.1 {
            match lexical
                .0
                .apply(old.as_ref(), new.as_ref())
                .and_then(|()| lexical.0.map())
            {
                Ok(map) => maps.push((super::index::LEXICAL.to_string(), map)),
                Err(e) => {
                    self.indexes.forget_lexical(&e.to_string());
                    lexical = (self.indexes.lexical.clone(), false);
                }
            }
        }
        // One the version's parent lacked (stored by an earlier build, of
        // an older layout, or damaged) is built from the nodes now, so
        // that the processes after this one find it stored.
        if !lexical.1 {
            if let Ok((fresh, map)) = self.indexes.fresh_lexical(pending.nodes(), &mut |_| {}) {
                maps.push((super::index::LEXICAL.to_string(), map));
                lexical = (fresh, true);
            }
        }
        let committed = match kept.and_then(|()| {
            self.forest
                .commit_pending_quiet(pending, description, timestamp, maps)
        }) {
            Ok(c) => c,
            Err(e) => {
                self.undo_semantic(vec![change.clone()]);
                return Err(e);
            }
        };
        self.indexes.symbols = symbols;
        self.indexes.dependencies = dependencies;
        (self.indexes.lexical, self.indexes.lexical_built) = lexical;
        self.bump([id]);
        self.store_commits(committed.version, true)
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
        self.begin()?;
        for op in ops {
            if let Err(e) = self.operate(op, &|_| String::new(), timestamp) {
                self.abort_all();
                return Err(e);
            }
        }
        let created = self
            .tx
            .as_ref()
            .map(|t| t.pending.created().to_vec())
            .unwrap_or_default();
        let mark = self.renumbered.len();
        let version = self
            .commit_transaction(description, timestamp)?
            .ok_or(ForestError::NoTransaction)?;
        let created = created
            .into_iter()
            .map(|id| self.stored_id(id, mark))
            .collect();
        Ok(Committed {
            version,
            created,
            changes: Vec::new(),
        })
    }

    /// Opens a transaction (nested in the open one, if any) and returns the
    /// new depth.
    pub fn begin(&mut self) -> Result<usize, ForestError> {
        let saved = SavedIndexes {
            symbols: self.indexes.symbols.clone(),
            dependencies: self.indexes.dependencies.clone(),
            lexical: self.indexes.lexical.clone(),
            lexical_built: self.indexes.lexical_built,
        };
        match &mut self.tx {
            Some(t) => {
                t.savepoints
                    .push((t.pending.clone(), t.applied.len(), saved));
            }
            None => {
                self.tx = Some(OpenTransaction {
                    pending: self.forest.begin()?,
                    applied: Vec::new(),
                    start: saved,
                    savepoints: Vec::new(),
                });
            }
        }
        Ok(self.depth())
    }

    /// The operations of the open transactions so far.
    pub fn pending_ops(&self) -> &[Op] {
        self.tx.as_ref().map_or(&[], |t| t.pending.ops())
    }

    /// Commits the innermost open transaction. The outermost one becomes
    /// exactly one version (also when it changed nothing), stored before
    /// this returns, and returns it; an inner one merges into its parent
    /// and returns `None`.
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
        let kept = Self::keep_semantic(&mut self.indexes, t.pending.nodes());
        Self::keep_lexical(&mut self.indexes, t.pending.nodes());
        let Some(t) = self.tx.take() else {
            return Err(ForestError::NoTransaction);
        };
        let maps = self.indexes.maps();
        match kept.and_then(|()| {
            self.forest
                .commit_pending_quiet(t.pending, description, timestamp, maps)
        }) {
            Ok(committed) => {
                // The indexes followed every operation already.
                let _ = self.indexes.semantic.settle();
                self.generation += 1;
                self.store_commits(committed.version, true).map(Some)
            }
            Err(e) => {
                // Only a stale base or exhausted ids can get here; the
                // changes are lost, so the indexes go back with them.
                self.restore(t.start);
                self.undo_semantic(t.applied);
                Err(e)
            }
        }
    }

    fn restore(&mut self, saved: SavedIndexes) {
        self.indexes.symbols = saved.symbols;
        self.indexes.dependencies = saved.dependencies;
        self.indexes.lexical = saved.lexical;
        self.indexes.lexical_built = saved.lexical_built;
    }

    /// Abandons the innermost open transaction: the working state and the
    /// indexes are what they were when it began. Returns whether one was open.
    pub fn abort_transaction(&mut self) -> bool {
        let Some(t) = &mut self.tx else {
            return false;
        };
        let (undo, saved) = match t.savepoints.pop() {
            Some((pending, mark, saved)) => {
                t.pending = pending;
                (t.applied.split_off(mark), saved)
            }
            None => match self.tx.take() {
                Some(t) => (t.applied, t.start),
                None => return false,
            },
        };
        self.restore(saved);
        self.undo_semantic(undo);
        true
    }

    /// Abandons every open transaction.
    pub fn abort_all(&mut self) {
        while self.abort_transaction() {}
    }

    fn undo_semantic(&mut self, changes: Vec<IndexChange>) {
        let ids: Vec<NodeId> = changes.iter().map(IndexChange::id).collect();
        for change in changes.iter().rev() {
            let (old, new) = match change {
                IndexChange::Created(id) => (Some(stub(*id)), None),
                IndexChange::Changed(old) => (Some(stub(old.id)), Some(old)),
                IndexChange::Deleted(old) => (None, Some(old)),
            };
            self.indexes.semantic.apply_deferred(old.as_ref(), new);
        }
        let _ = self.indexes.semantic.settle();
        self.bump(ids);
    }

    /// Makes `target` current, applying the difference to the indexes, and
    /// stores the move. Refused while a transaction is open.
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
        self.follow(&changes)?;
        self.store_commits(target, false)?;
        Ok(())
    }

    /// Makes the indexes follow a move of the current version: the new
    /// current version's persisted indexes when it has them (nothing to
    /// compute), else the difference applied; the semantic index, if built,
    /// takes the difference.
    fn follow(&mut self, changes: &[super::forest::NodeChange]) -> Result<(), ForestError> {
        let current = self.forest.current();
        let pairs = || changes.iter().map(|c| (c.old.as_ref(), c.new.as_ref()));
        let maps = self.forest.indexes_of(current)?.clone();
        if !self.indexes.adopt_persisted(&maps) {
            return self
                .indexes
                .apply_all(pairs())
                .map_err(Into::into)
                .map(|()| {
                    self.bump(changes.iter().map(|c| c.id));
                });
        }
        // A loaded semantic index takes a small difference in memory; else
        // the new version's stored index is taken (loaded when needed).
        let small = self.indexes.semantic.is_loaded()
            && changes.len() < self.indexes.semantic.config().side_set_max;
        if small || !self.indexes.adopt_semantic(&maps) {
            self.indexes.apply_semantic(pairs());
        }
        self.bump(changes.iter().map(|c| c.id));
        Ok(())
    }

    // ---- the store ------------------------------------------------------------

    /// Sees what other writers stored: when the store's head is not the
    /// state this knowledge base last stored or read, adopts it (reading
    /// lazily what it needs). Returns whether it moved. Not while a
    /// transaction is open.
    pub fn sync(&mut self) -> Result<bool, ForestError> {
        let Some(store) = self.store.clone() else {
            return Ok(false);
        };
        // A knowledge base opened on an empty store holds an initial
        // version it never stored: not work of its own, so another
        // writer's history is adopted.
        if self.tx.is_some() || self.forest.has_unsaved_work() {
            return Ok(false);
        }
        let head = store
            .head()
            .map_err(|m| ForestError::Store(StoreError::Unavailable(m)))?;
        let Some(head) = head else { return Ok(false) };
        if head == self.forest.saved_refs() {
            return Ok(false);
        }
        self.adopt_head(&head)?;
        Ok(true)
    }

    /// Replaces the forest with the state `head` names, moving the indexes
    /// with the difference of the two current versions.
    fn adopt_head(&mut self, head: &[u8]) -> Result<(), ForestError> {
        let blobs = self.forest.blobs().clone();
        let forest = VersionForest::open(head, blobs.clone())?;
        let old_root = self.forest.root_tree(self.forest.current())?;
        let new_root = forest.root_tree(forest.current())?;
        let changes = super::forest::diff_trees(&blobs, &old_root, &new_root)?;
        self.forest = forest;
        self.follow(&changes)?;
        Ok(())
    }

    /// Stores the commits and moves made since the last store (the newest
    /// being `version`, made by a commit if `made`). On a moved head, takes
    /// them back, adopts the other writer's state and applies them again,
    /// or fails with a conflict. Returns the version the last of them
    /// became.
    fn store_commits(&mut self, version: VersionId, made: bool) -> Result<VersionId, ForestError> {
        let Some(store) = self.store.clone() else {
            if made {
                self.committed.push(version);
            }
            return Ok(version);
        };
        let mut version = version;
        for _ in 0..MAX_REPLAYS {
            let base = self.forest.saved_refs_if_any();
            let base_current = self.forest.saved_current();
            let mine = self.forest.unsaved_moves()?;
            let snapshot = self.forest.export_new();
            match store.commit(base.as_deref(), &snapshot) {
                Ok(CommitReply::Committed) => {
                    self.committed.extend(
                        mine.iter()
                            .filter_map(|m| (m.kind == ReflogKind::Commit).then_some(m.version)),
                    );
                    return Ok(version);
                }
                Ok(CommitReply::Moved(head)) => {
                    let Some(head) = head else {
                        return Err(self.fail_store(
                            base.as_deref(),
                            "the store was emptied by another writer".into(),
                        ));
                    };
                    self.adopt_head(&head)?;
                    version = self.replay(base_current, mine)?;
                }
                Err(m) => return Err(self.fail_store(base.as_deref(), m)),
            }
        }
        Err(ForestError::Conflict {
            nodes: Vec::new(),
            reason: format!(
                "other writers kept committing: the change was applied again {MAX_REPLAYS} times \
                 and not stored"
            ),
        })
    }

    /// A commit the store refused: the knowledge base goes back to what
    /// the store holds.
    fn fail_store(&mut self, base: Option<&[u8]>, message: String) -> ForestError {
        let back = match base {
            Some(refs) => self.adopt_head(refs).err(),
            None => {
                let blobs = self.forest.blobs().clone();
                match VersionForest::new_in(
                    blobs,
                    builtin_nodes(),
                    "initial version",
                    self.forest.saved_timestamp(),
                ) {
                    Ok(f) => {
                        let old = self.forest.root_tree(self.forest.current());
                        let new = f.root_tree(f.current());
                        self.forest = f;
                        match (old, new) {
                            (Ok(o), Ok(n)) => {
                                super::forest::diff_trees(self.forest.blobs(), &o, &n)
                                    .map_err(ForestError::from)
                                    .and_then(|c| self.follow(&c))
                                    .err()
                            }
                            (Err(e), _) | (_, Err(e)) => Some(e),
                        }
                    }
                    Err(e) => Some(e),
                }
            }
        };
        let message = match back {
            None => message,
            Some(e) => format!("{message}; going back to the stored state failed too: {e}"),
        };
        ForestError::Store(StoreError::Unavailable(message))
    }

    /// Applies `moves` (commits and switches taken back) again on the
    /// adopted head; `base` is the version they started from. Returns the
    /// version the last one became.
    fn replay(
        &mut self,
        base: VersionId,
        moves: Vec<super::forest::UnsavedMove>,
    ) -> Result<VersionId, ForestError> {
        // What the other writers changed since `base`.
        let theirs: std::collections::BTreeSet<NodeId> =
            match self.forest.diff(base, self.forest.current()) {
                Ok(changes) => changes.iter().map(|c| c.id).collect(),
                Err(ForestError::VersionNotFound(_)) => Default::default(),
                Err(e) => return Err(e),
            };
        let mut version = self.forest.current();
        for m in moves {
            if m.kind == ReflogKind::Init {
                // Every store starts with the same initial version.
                continue;
            }
            if m.kind == ReflogKind::Switch {
                let changes = self.forest.switch(m.version, &m.description, m.timestamp)?;
                self.follow(&changes)?;
                version = m.version;
                continue;
            }
            // The move's own nodes are renumbered, not compared.
            let own: std::collections::BTreeSet<NodeId> = m
                .ops
                .iter()
                .filter_map(|op| match op {
                    Op::Create(n) => Some(n.id),
                    _ => None,
                })
                .collect();
            let touched: Vec<NodeId> = m
                .ops
                .iter()
                .flat_map(|op| match op {
                    Op::Create(n) => n.dependencies.iter().map(|(d, _)| *d).collect::<Vec<_>>(),
                    Op::Update { id, changes } => std::iter::once(*id)
                        .chain(changes.dependencies.iter().flatten().map(|(d, _)| *d))
                        .collect(),
                    Op::Delete(id) => vec![*id],
                })
                .filter(|id| theirs.contains(id) && !own.contains(id))
                .collect();
            if !touched.is_empty() {
                let mut nodes = touched;
                nodes.sort_unstable();
                nodes.dedup();
                return Err(ForestError::Conflict {
                    reason: format!(
                        "another writer changed {} since this change was made on version {base}",
                        list(&nodes)
                    ),
                    nodes,
                });
            }
            // A description the engine made names the operations' ids:
            // made again from the operations as replayed, it names the ids
            // they have now. A description the writer gave is kept.
            let as_call = m.ops.len() == 1 && m.description == op_summary(&m.ops[0]);
            let as_transaction = m.description == transaction_summary(&m.ops);
            let generated = as_call || as_transaction;
            let mut replayed: Vec<Op> = Vec::new();
            let mut remap: Vec<(NodeId, NodeId)> = Vec::new();
            let fix = |id: NodeId, remap: &[(NodeId, NodeId)]| {
                remap.iter().find(|(o, _)| *o == id).map_or(id, |(_, n)| *n)
            };
            self.begin()?;
            for op in m.ops {
                let op = match op {
                    Op::Create(mut n) => {
                        let old = n.id;
                        for d in &mut n.dependencies {
                            d.0 = fix(d.0, &remap);
                        }
                        let kept = generated.then(|| n.clone());
                        let done = self.operate(Op::Create(n), &|_| String::new(), m.timestamp);
                        match done {
                            Ok(d) => {
                                if d.id != old {
                                    remap.push((old, d.id));
                                }
                                if let Some(mut n) = kept {
                                    n.id = d.id;
                                    replayed.push(Op::Create(n));
                                }
                                continue;
                            }
                            Err(e) => {
                                self.abort_all();
                                return Err(conflict_of(e, base));
                            }
                        }
                    }
                    Op::Update { id, mut changes } => {
                        if let Some(deps) = &mut changes.dependencies {
                            for d in deps {
                                d.0 = fix(d.0, &remap);
                            }
                        }
                        Op::Update {
                            id: fix(id, &remap),
                            changes,
                        }
                    }
                    Op::Delete(id) => Op::Delete(fix(id, &remap)),
                };
                if generated {
                    replayed.push(op.clone());
                }
                if let Err(e) = self.operate(op, &|_| String::new(), m.timestamp) {
                    self.abort_all();
                    return Err(conflict_of(e, base));
                }
            }
            // Committed locally only: the caller stores.
            if let Some(t) = &self.tx {
                Self::keep_semantic(&mut self.indexes, t.pending.nodes())?;
                Self::keep_lexical(&mut self.indexes, t.pending.nodes());
            }
            let Some(t) = self.tx.take() else {
                return Err(ForestError::NoTransaction);
            };
            let description = if as_call {
                op_summary(&replayed[0])
            } else if as_transaction {
                transaction_summary(&replayed)
            } else {
                m.description
            };
            let maps = self.indexes.maps();
            let committed =
                self.forest
                    .commit_pending_quiet(t.pending, &description, m.timestamp, maps)?;
            let _ = self.indexes.semantic.settle();
            self.generation += 1;
            self.renumbered.extend(remap);
            version = committed.version;
        }
        Ok(version)
    }
}

fn list(ids: &[NodeId]) -> String {
    let shown: Vec<String> = ids.iter().take(10).map(|i| i.to_string()).collect();
    let more = if ids.len() > 10 {
        format!(" and {} more", ids.len() - 10)
    } else {
        String::new()
    };
    if ids.len() == 1 {
        format!("node {}", shown[0])
    } else {
        format!("nodes {}{more}", shown.join(", "))
    }
}

/// An operation that no longer applies on another writer's state is a
/// conflict (the store error stays what it is).
fn conflict_of(e: ForestError, base: VersionId) -> ForestError {
    match e {
        ForestError::Store(_) | ForestError::Conflict { .. } => e,
        other => {
            let nodes = match &other {
                ForestError::NodeNotFound(id) | ForestError::ReservedId(id) => vec![*id],
                ForestError::DependencyNotFound { node, dependency } => {
                    node.iter().copied().chain([*dependency]).collect()
                }
                _ => Vec::new(),
            };
            ForestError::Conflict {
                reason: format!(
                    "the change, made on version {base}, no longer applies after another \
                     writer's commits: {other}"
                ),
                nodes,
            }
        }
    }
}

/// Applies one operation to a transaction; returns what undoing it in the
/// semantic index needs.
fn apply_op(p: &mut Pending, op: Op) -> Result<IndexChange, ForestError> {
    match op {
        Op::Create(node) => Ok(IndexChange::Created(p.create(node)?)),
        Op::Update { id, changes } => {
            let old = p.get(id)?.cloned().ok_or(ForestError::NodeNotFound(id))?;
            p.update(id, changes)?;
            Ok(IndexChange::Changed(old))
        }
        Op::Delete(id) => Ok(IndexChange::Deleted(p.delete(id)?)),
    }
}

#[cfg(test)]
mod store_tests;
#[cfg(test)]
mod tests;
