//! The indexes of the current version.
//!
//! - `symbol`: symbol names → node ids (exact, prefix, wildcard, regex,
//!   fuzzy), on a sorted map so prefix search never scans.
//! - `deps`: dependencies (forward, in the order a node gives them) and
//!   dependents (reverse).
//! - `semantic`: descriptions → embeddings → nearest neighbours by cosine
//!   similarity; exact below a size threshold, an HNSW graph above it
//!   (built or extended by the first search that needs it).
//! - `embed`: the `Embedder` trait and the built-in model-free embedder.
//! - `vector`: an embedding as the semantic index stores it (sparse when
//!   mostly zero).
//!
//! The version forest reports every change of the current version (commit
//! or switch) as `(old, new)` pairs of nodes: `(None, Some(n))` inserts,
//! `(Some(o), None)` removes, `(Some(o), Some(n))` replaces. Each index
//! keeps its own record per id, so it removes by id and never trusts the
//! old node's content to match what it indexed; applying a change set in any
//! order that ends in the same set of nodes gives the same index as a
//! rebuild from scratch.

mod bytes;
pub mod deps;
pub mod embed;
pub mod hybrid;
pub mod lexical;
pub mod lexicon;
mod packed_postings;
pub mod pairs;
mod partial_sums;
mod posting_blocks;
mod read_lists;
pub mod semantic;
pub mod static_embed;
pub mod symbol;
mod table_layout;
mod table_lookup;
pub mod text;
pub mod vector;
mod window_sums;

use std::fmt;
use std::sync::{Arc, OnceLock};

pub use deps::DependencyIndex;
pub use embed::{Embedder, HashingEmbedder};
pub use hybrid::Fusion;
pub use lexical::{FieldWeights, LexicalIndex};
pub use lexicon::{Lexicon, LexiconError};
pub use semantic::{SemanticConfig, SemanticHit, SemanticIndex, SemanticQuery};
pub use static_embed::{StaticEmbedder, TableError};
pub use symbol::{SymbolHit, SymbolIndex, SymbolMode};
pub use vector::StoredVector;

use super::cas::sorted::SortedMap;
use super::cas::StoreError;
use super::node::Node;

/// A query the indexes refuse. Index updates never fail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexError {
    /// A search pattern that does not parse, is too long, or compiles to
    /// more than the regex engine is allowed to build.
    BadPattern(String),
    /// The embedder returned a vector of the wrong length or with a
    /// non-finite component.
    BadEmbedding(String),
    /// A persisted index could not be read.
    Store(crate::repo::cas::StoreError),
    /// The stored semantic index, searched without loading it, is
    /// damaged where the search read it (what is wrong).
    StoredSemantic(String),
    /// The semantic index must be loaded for this search (it is not, and
    /// its stored form cannot answer it: no graph, or an exact scan).
    Unloaded,
}

impl IndexError {
    /// A short kind for error alists (`("error" . KIND)`).
    pub fn kind(&self) -> &'static str {
        match self {
            IndexError::BadPattern(_) => "invalid-pattern",
            IndexError::BadEmbedding(_) => "invalid-embedding",
            IndexError::Store(_) | IndexError::StoredSemantic(_) | IndexError::Unloaded => {
                "store-error"
            }
        }
    }

    pub fn message(&self) -> String {
        match self {
            IndexError::BadPattern(m) | IndexError::BadEmbedding(m) => m.clone(),
            IndexError::Store(e) => format!("the knowledge store: {e}"),
            IndexError::StoredSemantic(why) => {
                format!("the knowledge store: the stored semantic index: {why}")
            }
            IndexError::Unloaded => "the semantic index is not loaded".to_string(),
        }
    }
}

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())
    }
}

impl std::error::Error for IndexError {}

/// The names under which a version persists its indexes.
pub const SYMBOLS: &str = "symbols";
pub const DEPENDENTS: &str = "dependents";
pub const SEMANTIC: &str = "semantic";
pub const LEXICAL: &str = "lexical";

/// How many nodes a long build (of the lexical or semantic index) reads
/// between two reports of its progress: a few seconds of work at 1M
/// (120-170 µs a node for the lexical index).
pub const PROGRESS_EVERY: usize = 25_000;

/// All indexes of the current version, updated together. The symbol,
/// dependents, lexical and semantic indexes are persisted with each
/// version (`maps`) and read lazily (the semantic index whole, by the
/// first search that needs it; the others by the parts a query touches).
/// A version stored without a lexical index (by an earlier build), or with
/// one that turns out damaged, has it built from the version's nodes the
/// first time a search needs it (`lexical_built`).
pub struct Indexes {
    pub symbols: SymbolIndex,
    pub dependencies: DependencyIndex,
    pub semantic: SemanticIndex,
    pub lexical: LexicalIndex,
    pub fusion: Fusion,
    /// The Chinese-English dictionary the lexical scorer cuts Chinese
    /// queries with and translates their words by (`lexicon`): the
    /// built-in one unless a host sets another or none.
    pub lexicon: Option<Arc<Lexicon>>,
    /// Whether the lexical index describes the working state. Until then,
    /// changes are not applied to it (it is built from the nodes when a
    /// search needs it); the semantic index keeps its stored form in step
    /// either way.
    pub lexical_built: bool,
}

impl Default for Indexes {
    fn default() -> Self {
        Self::new()
    }
}

/// The built-in table of the static embedder (docs/SEARCH.md), when the
/// crate is built with it (feature `builtin-table`, on by default).
#[cfg(feature = "builtin-table")]
pub const BUILTIN_TABLE: Option<&[u8]> = Some(include_bytes!("../../../data/zh-en-static.table"));
#[cfg(not(feature = "builtin-table"))]
pub const BUILTIN_TABLE: Option<&[u8]> = None;

// `BUILTIN_TABLE_ID`: the built-in table's `Embedder::id`, computed by
// build.rs (hashing the 3.9 MB table took most of a one-shot evaluation's
// time in the sandbox, where BLAKE3 has no SIMD).
#[cfg(feature = "builtin-table")]
include!(concat!(env!("OUT_DIR"), "/builtin_table_id.rs"));

/// The built-in table's entry lookup, made by build.rs with
/// `table_lookup::build_slots`: `u32 max_chars`, then the slots.
#[cfg(feature = "builtin-table")]
pub const BUILTIN_TABLE_LOOKUP: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/builtin_table_lookup.bin"));

/// The built-in Chinese-English lexicon (docs/SEARCH.md), when the crate
/// is built with it (feature `builtin-lexicon`, on by default).
#[cfg(feature = "builtin-lexicon")]
pub const BUILTIN_LEXICON: Option<&[u8]> = Some(include_bytes!("../../../data/zh-en.lexicon"));
#[cfg(not(feature = "builtin-lexicon"))]
pub const BUILTIN_LEXICON: Option<&[u8]> = None;

// `BUILTIN_LEXICON_LONGEST`: what `Lexicon::check` gave for the built-in
// lexicon when the build ran it (core/build.rs), which is why no process
// checks it again.
#[cfg(feature = "builtin-lexicon")]
include!(concat!(env!("OUT_DIR"), "/builtin_lexicon.rs"));

/// The built-in lexicon's English-to-Chinese list, made by the build
/// (`Lexicon::encode_reverse`).
#[cfg(feature = "builtin-lexicon")]
pub const BUILTIN_LEXICON_REVERSE: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/builtin_lexicon_reverse.bin"));

/// The lexicon used unless a host sets another: the built-in one, parsed
/// once per process and shared by every engine.
pub fn default_lexicon() -> Option<Arc<Lexicon>> {
    static BUILTIN: OnceLock<Option<Arc<Lexicon>>> = OnceLock::new();
    BUILTIN
        .get_or_init(|| {
            // A built-in lexicon that does not parse is a build error that
            // the test `builtin_lexicon_translates` reports; search works
            // without it meanwhile.
            #[cfg(feature = "builtin-lexicon")]
            let made = BUILTIN_LEXICON.and_then(|b| {
                Lexicon::from_static_checked(b, BUILTIN_LEXICON_LONGEST, BUILTIN_LEXICON_REVERSE)
                    .ok()
                    .map(Arc::new)
            });
            #[cfg(not(feature = "builtin-lexicon"))]
            let made = None;
            made
        })
        .clone()
}

/// The embedder used unless a host sets another: the static embedder over
/// the built-in table; without one, the model-free hashing embedder.
pub fn default_embedder() -> Box<dyn Embedder> {
    // One embedder for every engine of the process, so that its lookup
    // map (84k entries) is built once, not per engine.
    static BUILTIN: OnceLock<Option<Arc<StaticEmbedder>>> = OnceLock::new();
    let builtin = BUILTIN.get_or_init(|| {
        // A built-in table that does not parse is a build error that the
        // test `builtin_table_relates_chinese_and_english` reports; the
        // engine keeps working meanwhile.
        #[cfg(feature = "builtin-table")]
        let made = BUILTIN_TABLE.and_then(|t| {
            StaticEmbedder::from_static_built(t, BUILTIN_TABLE_ID, BUILTIN_TABLE_LOOKUP)
                .ok()
                .map(Arc::new)
        });
        #[cfg(not(feature = "builtin-table"))]
        let made = None;
        made
    });
    match builtin {
        Some(e) => Box::new(SharedEmbedder(Arc::clone(e))),
        None => Box::new(HashingEmbedder::default()),
    }
}

/// An embedder several holders share, through an `Rc` or an `Arc`: the one
/// a host handed to its engine (`Engine::set_embedder`), shared by every
/// knowledge base the engine opens or imports, and the built-in table,
/// shared by every index of the thread.
pub struct SharedEmbedder<P>(pub P);

impl<P> Embedder for SharedEmbedder<P>
where
    P: std::ops::Deref,
    P::Target: Embedder,
{
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn embed(&self, text: &str) -> Vec<f32> {
        self.0.embed(text)
    }
    fn embed_query(&self, text: &str) -> Vec<f32> {
        self.0.embed_query(text)
    }
    fn id(&self) -> String {
        self.0.id()
    }
    fn fusion(&self) -> Option<(f32, f32)> {
        self.0.fusion()
    }
    fn translations(&self, text: &str) -> Vec<(String, f32)> {
        self.0.translations(text)
    }
    fn word_vector(&self, text: &str) -> Option<Vec<f32>> {
        self.0.word_vector(text)
    }
}

impl Indexes {
    /// Empty indexes with the default embedder and settings.
    pub fn new() -> Self {
        Self::with_embedder(default_embedder(), SemanticConfig::default())
    }

    /// Empty indexes whose semantic index uses `embedder` (a host's model).
    pub fn with_embedder(embedder: Box<dyn Embedder>, config: SemanticConfig) -> Self {
        let fusion = Fusion::for_embedder(embedder.as_ref());
        Indexes {
            symbols: SymbolIndex::new(),
            dependencies: DependencyIndex::new(),
            semantic: SemanticIndex::new(embedder, config),
            lexical: LexicalIndex::new(FieldWeights::default()),
            fusion,
            lexicon: default_lexicon(),
            lexical_built: true,
        }
    }

    /// The persisted indexes, to be stored with a version.
    pub fn maps(&mut self) -> Vec<(String, SortedMap)> {
        let mut maps = vec![
            (SYMBOLS.to_string(), self.symbols.map().clone()),
            (DEPENDENTS.to_string(), self.dependencies.map().clone()),
        ];
        if let Some(semantic) = self.semantic.persist() {
            maps.push((SEMANTIC.to_string(), semantic));
        }
        if self.lexical_built {
            match self.lexical.map() {
                Ok(map) => maps.push((LEXICAL.to_string(), map)),
                Err(e) => self.forget_lexical(&e.to_string()),
            }
        }
        maps
    }

    /// Drops a lexical index that could not be read or written, with a
    /// note: it is built again from the nodes when a search needs it.
    pub fn forget_lexical(&mut self, why: &str) {
        self.semantic.note(format!(
            "the stored lexical index cannot be used ({why}); it is built again from the nodes"
        ));
        self.lexical.clear();
        self.lexical_built = false;
    }

    /// One change for the lexical index, if it is built; one it cannot
    /// take (damage met on the way) drops it (`forget_lexical`).
    fn apply_lexical(&mut self, old: Option<&Node>, new: Option<&Node>) {
        if self.lexical_built {
            if let Err(e) = self.lexical.apply(old, new) {
                self.forget_lexical(&e.to_string());
            }
        }
    }

    /// Takes a version's persisted indexes, if it has the symbol and
    /// dependents indexes; the lexical index is then to be built again
    /// when the version has none, and the semantic index loaded (or built,
    /// if the version has none that this engine can use).
    pub fn adopt(&mut self, maps: &[(String, SortedMap)]) -> bool {
        if !self.adopt_persisted(maps) {
            return false;
        }
        if !self.adopt_semantic(maps) {
            self.semantic.forget();
        }
        true
    }

    /// Takes a version's stored semantic index (unloaded); one refused is
    /// said in a note and leaves the index as it was.
    pub fn adopt_semantic(&mut self, maps: &[(String, SortedMap)]) -> bool {
        let map = maps.iter().find(|(n, _)| n == SEMANTIC).map(|(_, m)| m);
        match self.semantic.adopt(map) {
            Ok(adopted) => adopted,
            Err(why) => {
                self.semantic.note(format!(
                    "the stored semantic index is not used ({why}); it is built again from the nodes"
                ));
                false
            }
        }
    }

    /// Takes a version's persisted symbol, dependents and lexical indexes,
    /// if it has the first two (the lexical one is then built when a search
    /// needs it if the version has none); the semantic index is left to
    /// the caller.
    pub fn adopt_persisted(&mut self, maps: &[(String, SortedMap)]) -> bool {
        let find = |name: &str| maps.iter().find(|(n, _)| n == name).map(|(_, m)| m.clone());
        let (Some(symbols), Some(deps)) = (find(SYMBOLS), find(DEPENDENTS)) else {
            return false;
        };
        self.symbols = SymbolIndex::from_map(symbols);
        self.dependencies = DependencyIndex::from_map(deps);
        match find(LEXICAL) {
            Some(map) => {
                self.lexical = LexicalIndex::from_map(map);
                self.lexical_built = true;
            }
            None => {
                self.lexical.clear();
                self.lexical_built = false;
            }
        }
        true
    }

    /// A change set for the semantic index alone.
    pub fn apply_semantic<'a, I>(&mut self, changes: I)
    where
        I: IntoIterator<Item = (Option<&'a Node>, Option<&'a Node>)>,
    {
        for (old, new) in changes {
            self.semantic.apply_deferred(old, new);
        }
        let _ = self.semantic.settle();
    }

    /// One change of the current version.
    pub fn apply(&mut self, old: Option<&Node>, new: Option<&Node>) -> Result<(), StoreError> {
        self.symbols.apply(old, new)?;
        self.dependencies.apply(old, new)?;
        self.apply_lexical(old, new);
        self.semantic.apply(old, new);
        Ok(())
    }

    /// One change whose semantic reorganisation waits for `maintain`
    /// (changes inside a transaction: many may follow).
    pub fn apply_deferred(
        &mut self,
        old: Option<&Node>,
        new: Option<&Node>,
    ) -> Result<(), StoreError> {
        self.symbols.apply(old, new)?;
        self.dependencies.apply(old, new)?;
        self.apply_lexical(old, new);
        self.semantic.apply_deferred(old, new);
        Ok(())
    }

    /// A whole change set (one commit or one version switch). The semantic
    /// index settles once at the end; its graph work waits for the next
    /// search (see `SemanticIndex::settle`).
    pub fn apply_all<'a, I>(&mut self, changes: I) -> Result<(), StoreError>
    where
        I: IntoIterator<Item = (Option<&'a Node>, Option<&'a Node>)>,
    {
        for (old, new) in changes {
            self.apply_deferred(old, new)?;
        }
        let _ = self.semantic.settle();
        Ok(())
    }

    /// `apply_all` over owned pairs, the shape the forest produces.
    pub fn apply_changes(
        &mut self,
        changes: &[(Option<Node>, Option<Node>)],
    ) -> Result<(), StoreError> {
        self.apply_all(changes.iter().map(|(o, n)| (o.as_ref(), n.as_ref())))
    }

    /// What a search scores with besides the lexical index.
    pub fn scoring(&self) -> hybrid::Scoring<'_> {
        hybrid::Scoring {
            semantic: &self.semantic,
            lexicon: self.lexicon.as_deref(),
            fusion: &self.fusion,
        }
    }

    /// The nodes that best match `text`, by the fused lexical and vector
    /// score (see `hybrid`). Call `semantic.maintain()` first to have the
    /// graph work deferred by commits and loads done (else the search is
    /// exact over what waits, which is slower but finds the same).
    pub fn search(
        &self,
        text: &str,
        query: &SemanticQuery<'_>,
    ) -> Result<Vec<SemanticHit>, IndexError> {
        hybrid::search(&self.lexical, self.scoring(), text, query)
    }

    /// Forget everything and index exactly `nodes` (loading a version from
    /// scratch). Faster than inserting one by one: the semantic index builds
    /// a single graph.
    pub fn rebuild<'a, I>(&mut self, nodes: I) -> Result<(), StoreError>
    where
        I: IntoIterator<Item = Result<&'a Node, StoreError>>,
    {
        self.symbols.clear();
        self.dependencies.clear();
        self.semantic.clear();
        self.lexical.clear();
        for node in nodes {
            let node = node?;
            self.symbols.insert(node)?;
            self.dependencies.insert(node)?;
            // In memory, a fresh map cannot fail.
            let _ = self.lexical.insert(node);
            self.semantic.apply_deferred(None, Some(node));
        }
        let _ = self.semantic.settle();
        self.lexical_built = true;
        Ok(())
    }

    /// A lexical index of exactly `nodes`, built apart (the current one
    /// is left as it is), with its map as a version stores it; `progress`
    /// is told how many nodes it has read every `PROGRESS_EVERY`.
    pub fn fresh_lexical<'a, I>(
        &self,
        nodes: I,
        progress: &mut dyn FnMut(usize),
    ) -> Result<(LexicalIndex, SortedMap), StoreError>
    where
        I: IntoIterator<Item = Result<&'a Node, StoreError>>,
    {
        let mut fresh = self.lexical.clone();
        fresh.clear();
        for (i, node) in nodes.into_iter().enumerate() {
            if i % PROGRESS_EVERY == 0 && i > 0 {
                progress(i);
            }
            fresh.insert(node?)?;
        }
        let map = fresh.map()?;
        Ok((fresh, map))
    }

    /// Builds what a search needs from `nodes` (the working state): the
    /// lexical index if it is not built, and the semantic index if it is
    /// not loaded (it is then written whole into the next version).
    pub fn build_semantic<'a, I>(&mut self, nodes: I) -> Result<(), StoreError>
    where
        I: IntoIterator<Item = Result<&'a Node, StoreError>>,
    {
        self.build_search(nodes, &mut |_| {})
    }

    /// `build_semantic`, telling `progress` how many nodes it has read
    /// every `PROGRESS_EVERY`.
    pub fn build_search<'a, I>(
        &mut self,
        nodes: I,
        progress: &mut dyn FnMut(usize),
    ) -> Result<(), StoreError>
    where
        I: IntoIterator<Item = Result<&'a Node, StoreError>>,
    {
        let lexical = !self.lexical_built;
        let vectors = !self.semantic.is_loaded() && !self.semantic.is_stored();
        if !lexical && !vectors {
            return Ok(());
        }
        if lexical {
            self.lexical.clear();
        }
        if vectors {
            self.semantic.clear();
        }
        for (i, node) in nodes.into_iter().enumerate() {
            if i % PROGRESS_EVERY == 0 && i > 0 {
                progress(i);
            }
            let node = node?;
            if lexical {
                // A fresh map in memory: it cannot fail.
                let _ = self.lexical.insert(node);
            }
            if vectors {
                self.semantic.apply_deferred(None, Some(node));
            }
        }
        let _ = self.semantic.settle();
        self.lexical_built = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::repo::node::NodeId;

    use crate::test_rng::TestRng as Rng;

    /// An embedder brings the fusion weights it was tuned with; another
    /// without them puts the defaults back.
    #[test]
    fn an_embedder_brings_its_fusion_weights() {
        struct Tuned;
        impl Embedder for Tuned {
            fn dim(&self) -> usize {
                2
            }
            fn embed(&self, _: &str) -> Vec<f32> {
                vec![1.0, 0.0]
            }
            fn fusion(&self) -> Option<(f32, f32)> {
                Some((0.5, 0.8))
            }
        }
        let ix = Indexes::with_embedder(Box::new(Tuned), SemanticConfig::default());
        assert_eq!(
            (ix.fusion.vector_weight, ix.fusion.vector_floor),
            (0.5, 0.8)
        );
        let mut f = ix.fusion.clone();
        f.tune_for(&HashingEmbedder::default());
        assert_eq!(f, Fusion::default());
        assert_eq!(Indexes::new().fusion, Fusion::default());
    }

    const NAMES: &[&str] = &[
        "sort", "qsort", "quick", "fact", "arb:x", "map", "fold", "list-ref",
    ];
    const DESCS: &[&str] = &[
        "快速排序实现",
        "归并排序算法",
        "计算阶乘",
        "sort a list",
        "fold over a tree",
        "",
        "...",
    ];

    fn random_node(rng: &mut Rng, id: NodeId, ids: u64) -> Node {
        let names = (0..rng.below(3))
            .map(|_| NAMES[rng.below(NAMES.len() as u64) as usize].to_string())
            .collect();
        let dependencies = (0..rng.below(4))
            .map(|_| (rng.below(ids), "d".to_string()))
            .collect();
        let description = match rng.below(DESCS.len() as u64 + 1) {
            0 => None,
            i => Some(format!("{} {}", DESCS[i as usize - 1], rng.below(5))),
        };
        let kind = match rng.below(3) {
            0 => None,
            1 => Some("function".to_string()),
            _ => Some("constant".to_string()),
        };
        Node {
            id,
            code: Some("x".into()),
            description,
            symbol_names: names,
            kind,
            dependencies,
        }
    }

    fn small_config() -> SemanticConfig {
        SemanticConfig {
            exact_threshold: 60,
            side_set_max: 16,
            ..SemanticConfig::default()
        }
    }

    fn assert_same(a: &Indexes, b: &Indexes) {
        assert_eq!(a.symbols, b.symbols);
        assert_eq!(a.dependencies, b.dependencies);
        let ea: Vec<_> = a
            .semantic
            .entries()
            .map(|(i, v, k)| (i, v.to_dense(), k))
            .collect();
        let eb: Vec<_> = b
            .semantic
            .entries()
            .map(|(i, v, k)| (i, v.to_dense(), k))
            .collect();
        assert_eq!(ea, eb);
    }

    /// Random inserts, removals and replacements, one by one and in change
    /// sets, end in the same indexes as a rebuild from the final nodes.
    #[test]
    fn incremental_equals_rebuild() {
        for seed in 1..=4u64 {
            let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let ids = 150;
            let mut ix =
                Indexes::with_embedder(Box::new(HashingEmbedder::default()), small_config());
            let mut live: BTreeMap<NodeId, Node> = BTreeMap::new();
            for round in 0..60 {
                let mut changes: Vec<(Option<Node>, Option<Node>)> = Vec::new();
                for _ in 0..1 + rng.below(30) {
                    let id = rng.below(ids);
                    // Within one change set an id changes at most once, as
                    // in a forest's delta.
                    if changes
                        .iter()
                        .any(|(o, n)| o.as_ref().or(n.as_ref()).map(|x| x.id) == Some(id))
                    {
                        continue;
                    }
                    let old = live.get(&id).cloned();
                    let new = (rng.below(4) != 0).then(|| random_node(&mut rng, id, ids));
                    match &new {
                        Some(n) => live.insert(id, n.clone()),
                        None => live.remove(&id),
                    };
                    changes.push((old, new));
                }
                if round % 2 == 0 {
                    ix.apply_changes(&changes).unwrap();
                } else {
                    for (o, n) in &changes {
                        ix.apply(o.as_ref(), n.as_ref()).unwrap();
                    }
                }
                let mut fresh =
                    Indexes::with_embedder(Box::new(HashingEmbedder::default()), small_config());
                fresh.rebuild(live.values().map(Ok)).unwrap();
                assert_same(&ix, &fresh);
                // And the answers agree.
                for p in ["", "q", "arb:", "sort"] {
                    assert_eq!(
                        ix.symbols.search(p, SymbolMode::Prefix, 50),
                        fresh.symbols.search(p, SymbolMode::Prefix, 50)
                    );
                }
                for id in 0..ids {
                    assert_eq!(
                        ix.dependencies.dependents(id).unwrap(),
                        fresh.dependencies.dependents(id).unwrap()
                    );
                }
                let q = SemanticQuery::default();
                let a = ix.semantic.search("排序", &q).unwrap();
                let b = fresh.semantic.search("排序", &q).unwrap();
                let scores = |h: &[SemanticHit]| h.iter().map(|h| h.score).collect::<Vec<_>>();
                assert_eq!(scores(&a), scores(&b));
            }
        }
    }
}
