//! The indexes of the current version.
//!
//! - `symbol`: symbol names → node ids (exact, prefix, wildcard, regex,
//!   fuzzy), on a sorted map so prefix search never scans.
//! - `deps`: dependencies (forward, in the order a node gives them) and
//!   dependents (reverse).
//! - `semantic`: descriptions → embeddings → nearest neighbours by cosine
//!   similarity; exact below a size threshold, HNSW segments above it.
//! - `embed`: the `Embedder` trait and the built-in model-free embedder.
//!
//! The version forest reports every change of the current version (commit
//! or switch) as `(old, new)` pairs of nodes: `(None, Some(n))` inserts,
//! `(Some(o), None)` removes, `(Some(o), Some(n))` replaces. Each index
//! keeps its own record per id, so it removes by id and never trusts the
//! old node's content to match what it indexed; applying a change set in any
//! order that ends in the same set of nodes gives the same index as a
//! rebuild from scratch.

pub mod deps;
pub mod embed;
pub mod semantic;
pub mod symbol;

use std::fmt;

pub use deps::DependencyIndex;
pub use embed::{Embedder, HashingEmbedder};
pub use semantic::{SemanticConfig, SemanticHit, SemanticIndex, SemanticQuery};
pub use symbol::{SymbolHit, SymbolIndex, SymbolMode};

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
}

impl IndexError {
    /// A short kind for error alists (`("error" . KIND)`).
    pub fn kind(&self) -> &'static str {
        match self {
            IndexError::BadPattern(_) => "invalid-pattern",
            IndexError::BadEmbedding(_) => "invalid-embedding",
        }
    }

    pub fn message(&self) -> &str {
        match self {
            IndexError::BadPattern(m) | IndexError::BadEmbedding(m) => m,
        }
    }
}

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())
    }
}

impl std::error::Error for IndexError {}

/// All indexes of the current version, updated together.
pub struct Indexes {
    pub symbols: SymbolIndex,
    pub dependencies: DependencyIndex,
    pub semantic: SemanticIndex,
}

impl Default for Indexes {
    fn default() -> Self {
        Self::new()
    }
}

impl Indexes {
    /// Empty indexes with the built-in embedder and default settings.
    pub fn new() -> Self {
        Self::with_embedder(
            Box::new(HashingEmbedder::default()),
            SemanticConfig::default(),
        )
    }

    /// Empty indexes whose semantic index uses `embedder` (a host's model).
    pub fn with_embedder(embedder: Box<dyn Embedder>, config: SemanticConfig) -> Self {
        Indexes {
            symbols: SymbolIndex::new(),
            dependencies: DependencyIndex::new(),
            semantic: SemanticIndex::new(embedder, config),
        }
    }

    /// One change of the current version.
    pub fn apply(&mut self, old: Option<&Node>, new: Option<&Node>) {
        self.symbols.apply(old, new);
        self.dependencies.apply(old, new);
        self.semantic.apply(old, new);
    }

    /// A whole change set (one commit or one version switch). The semantic
    /// index reorganises once at the end rather than after every change.
    pub fn apply_all<'a, I>(&mut self, changes: I)
    where
        I: IntoIterator<Item = (Option<&'a Node>, Option<&'a Node>)>,
    {
        for (old, new) in changes {
            self.symbols.apply(old, new);
            self.dependencies.apply(old, new);
            self.semantic.apply_deferred(old, new);
        }
        self.semantic.maintain();
    }

    /// `apply_all` over owned pairs, the shape the forest produces.
    pub fn apply_changes(&mut self, changes: &[(Option<Node>, Option<Node>)]) {
        self.apply_all(changes.iter().map(|(o, n)| (o.as_ref(), n.as_ref())));
    }

    /// Forget everything and index exactly `nodes` (loading a version from
    /// scratch). Faster than inserting one by one: the semantic index builds
    /// a single graph.
    pub fn rebuild<'a, I>(&mut self, nodes: I)
    where
        I: IntoIterator<Item = &'a Node>,
    {
        self.symbols.clear();
        self.dependencies.clear();
        self.semantic.clear();
        for node in nodes {
            self.symbols.insert(node);
            self.dependencies.insert(node);
            self.semantic.apply_deferred(None, Some(node));
        }
        self.semantic.maintain();
    }
}
