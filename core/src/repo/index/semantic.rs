//! The semantic index: each node's description → an embedding; a query's
//! embedding → the nodes with the most similar descriptions.
//!
//! Similarity is the cosine of L2-normalised embeddings, clamped to [0, 1]:
//! it depends only on the two texts (and the embedder), never on what else
//! is indexed, so scores are comparable across calls and a threshold means
//! the same thing every time. Only hits with a positive score are returned.
//!
//! # How it is organised
//!
//! Every indexed node has an entry (its vector and type). An entry is either
//! *pending* — searched exactly, by brute force — or a member of one HNSW
//! *segment* (an `instant_distance::HnswMap`, immutable once built).
//!
//! - Below `exact_threshold` nodes there are no segments: every search is
//!   exact. Once the index reaches the threshold, all entries are built
//!   into one segment. If it later shrinks below half the threshold, the
//!   segments are dropped again (half, so that a size hovering around the
//!   threshold does not rebuild on every change).
//! - New and changed entries go to the pending set. When it reaches
//!   `side_set_max`, it is built into a new segment, and while the newest
//!   segment has at least half as many live members as the one before it,
//!   the two are merged into one (rebuilt). Like a binary counter, every
//!   entry is rebuilt O(log n) times over its life and there are O(log n)
//!   segments; a large initial load is one build.
//! - A removed or changed entry leaves a dead member in its segment; a
//!   search skips it (the entry no longer names that segment). A segment
//!   more than half dead is dissolved into the pending set.
//!
//! A search scans the pending set exactly and asks each segment for its
//! `ef_search` nearest candidates; every score is then computed exactly
//! from the stored vectors, so a node's score is the same whichever way it
//! was found. HNSW is approximate: a true neighbour may be missed. When a
//! type filter leaves fewer than `top_k` candidates, or `top_k` exceeds what
//! the graphs return, the search falls back to an exact scan.
//!
//! Graphs are built with a fixed seed (`SemanticConfig::seed` plus the
//! segment number), so the layer assignment is reproducible. Natively the
//! build inserts in parallel (rayon), so neighbour lists may differ from run
//! to run; on wasm32 it runs on the calling thread.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use instant_distance::{Builder, HnswMap, Search};

use super::embed::{normalize, Embedder};
use super::IndexError;
use crate::repo::node::{Node, NodeId};

#[derive(Clone, Debug)]
pub struct SemanticConfig {
    /// Below this many nodes, search is exact (no graphs).
    pub exact_threshold: usize,
    /// The pending (exactly searched) set is built into a graph segment
    /// when it reaches this size.
    pub side_set_max: usize,
    /// Seed of the graphs' layer assignment.
    pub seed: u64,
    /// Candidates each graph returns per search (HNSW `ef`).
    pub ef_search: usize,
    /// HNSW `efConstruction`: higher builds slower, finds more.
    pub ef_construction: usize,
    /// Choose graph neighbours by the HNSW paper's heuristic (diverse
    /// directions) rather than simply the nearest: better recall on
    /// clustered data, several times slower to build.
    pub heuristic: bool,
}

impl Default for SemanticConfig {
    fn default() -> Self {
        SemanticConfig {
            // An exact scan of 10k 256-dimensional vectors takes well under
            // a millisecond; a graph only pays above that.
            exact_threshold: 10_000,
            side_set_max: 2_048,
            seed: 0x4172_626f_7265_7321,
            ef_search: 64,
            // instant-distance links 64 neighbours per node on the base
            // layer; with efConstruction 40 and simple selection, a graph
            // builds several times faster than with 100 and the heuristic,
            // at a recall the tests check (hashed features are not
            // clustered enough for the heuristic to pay).
            ef_construction: 40,
            heuristic: false,
        }
    }
}

/// Options of a semantic search.
#[derive(Clone, Debug)]
pub struct SemanticQuery<'a> {
    /// At most this many hits.
    pub top_k: usize,
    /// Only hits scoring at least this (in [0, 1]).
    pub threshold: f32,
    /// Only nodes of this type.
    pub kind: Option<&'a str>,
}

impl Default for SemanticQuery<'_> {
    fn default() -> Self {
        SemanticQuery {
            top_k: 10,
            threshold: 0.0,
            kind: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SemanticHit {
    pub id: NodeId,
    /// Cosine similarity clamped to [0, 1].
    pub score: f32,
}

/// Sizes, for tests, benchmarks and diagnostics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SemanticStats {
    pub nodes: usize,
    pub pending: usize,
    /// (members when built, members since removed or changed), oldest first.
    pub segments: Vec<(usize, usize)>,
    /// Descriptions whose embedding was refused (wrong length, not finite).
    pub rejected: usize,
}

/// An embedding as a graph point. Shared with the entry, so a graph holds
/// no second copy of the vectors.
#[derive(Clone)]
struct Point(Arc<[f32]>);

impl instant_distance::Point for Point {
    fn distance(&self, other: &Self) -> f32 {
        1.0 - dot(&self.0, &other.0)
    }
}

struct Entry {
    vec: Arc<[f32]>,
    kind: Option<Arc<str>>,
    /// Hash of the description, so a change that keeps it re-embeds nothing.
    text: u64,
    /// The segment this entry is a member of; `None` while pending.
    seg: Option<u32>,
}

struct Segment {
    id: u32,
    map: HnswMap<Point, NodeId>,
    size: usize,
    dead: usize,
}

impl Segment {
    fn live(&self) -> usize {
        self.size - self.dead
    }
}

pub struct SemanticIndex {
    embedder: Box<dyn Embedder>,
    config: SemanticConfig,
    entries: BTreeMap<NodeId, Entry>,
    pending: BTreeSet<NodeId>,
    segments: Vec<Segment>,
    next_segment: u32,
    /// Interned type names: many nodes share a few types.
    kinds: BTreeSet<Arc<str>>,
    rejected: usize,
}

impl SemanticIndex {
    pub fn new(embedder: Box<dyn Embedder>, config: SemanticConfig) -> Self {
        let mut config = config;
        config.side_set_max = config.side_set_max.max(1);
        config.exact_threshold = config.exact_threshold.max(config.side_set_max);
        config.ef_search = config.ef_search.max(1);
        config.ef_construction = config.ef_construction.max(1);
        SemanticIndex {
            embedder,
            config,
            entries: BTreeMap::new(),
            pending: BTreeSet::new(),
            segments: Vec::new(),
            next_segment: 0,
            kinds: BTreeSet::new(),
            rejected: 0,
        }
    }

    pub fn config(&self) -> &SemanticConfig {
        &self.config
    }

    pub fn dim(&self) -> usize {
        self.embedder.dim()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.pending.clear();
        self.segments.clear();
        self.kinds.clear();
        self.rejected = 0;
    }

    /// Number of indexed nodes (those with a description that has features).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn stats(&self) -> SemanticStats {
        SemanticStats {
            nodes: self.entries.len(),
            pending: self.pending.len(),
            segments: self.segments.iter().map(|s| (s.size, s.dead)).collect(),
            rejected: self.rejected,
        }
    }

    /// Every indexed node: id, normalised vector, type; by ascending id.
    pub fn entries(&self) -> impl Iterator<Item = (NodeId, &[f32], Option<&str>)> + '_ {
        self.entries
            .iter()
            .map(|(id, e)| (*id, &e.vec[..], e.kind.as_deref()))
    }

    /// Index `node` (or drop it, if it has no usable description).
    pub fn insert(&mut self, node: &Node) {
        self.insert_deferred(node);
        self.maintain();
    }

    pub fn remove(&mut self, id: NodeId) {
        self.remove_deferred(id);
        self.maintain();
    }

    /// One change of the current version (see the module `index`).
    pub fn apply(&mut self, old: Option<&Node>, new: Option<&Node>) {
        self.apply_deferred(old, new);
        self.maintain();
    }

    /// `apply` without reorganising; call `maintain` after a batch.
    pub fn apply_deferred(&mut self, old: Option<&Node>, new: Option<&Node>) {
        if let Some(o) = old {
            if new.map(|n| n.id) != Some(o.id) {
                self.remove_deferred(o.id);
            }
        }
        if let Some(n) = new {
            self.insert_deferred(n);
        }
    }

    fn insert_deferred(&mut self, node: &Node) {
        let Some(text) = node.description.as_deref() else {
            self.remove_deferred(node.id);
            return;
        };
        let hash = super::embed::hash(0, text);
        let kind = node.kind.as_deref().map(|k| self.intern(k));
        if let Some(e) = self.entries.get_mut(&node.id) {
            if e.text == hash {
                // Same description: keep the vector and its place.
                e.kind = kind;
                return;
            }
        }
        let vec = match self.prepare(self.embedder.embed(text)) {
            Ok(Some(v)) => v,
            Ok(None) => {
                // No features (e.g. only punctuation): nothing to find it by.
                self.remove_deferred(node.id);
                return;
            }
            Err(_) => {
                self.rejected += 1;
                self.remove_deferred(node.id);
                return;
            }
        };
        self.remove_deferred(node.id);
        self.entries.insert(
            node.id,
            Entry {
                vec,
                kind,
                text: hash,
                seg: None,
            },
        );
        self.pending.insert(node.id);
    }

    fn remove_deferred(&mut self, id: NodeId) {
        let Some(e) = self.entries.remove(&id) else {
            return;
        };
        match e.seg {
            None => {
                self.pending.remove(&id);
            }
            Some(sid) => {
                if let Some(s) = self.segments.iter_mut().find(|s| s.id == sid) {
                    s.dead += 1;
                }
            }
        }
    }

    fn intern(&mut self, kind: &str) -> Arc<str> {
        if let Some(k) = self.kinds.get(kind) {
            return k.clone();
        }
        let k: Arc<str> = Arc::from(kind);
        self.kinds.insert(k.clone());
        k
    }

    /// Checks and normalises an embedding; `None` for the zero vector.
    fn prepare(&self, mut v: Vec<f32>) -> Result<Option<Arc<[f32]>>, IndexError> {
        let dim = self.embedder.dim();
        if v.len() != dim {
            return Err(IndexError::BadEmbedding(format!(
                "the embedder returned {} components, expected {dim}",
                v.len()
            )));
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(IndexError::BadEmbedding(
                "the embedder returned a non-finite component".into(),
            ));
        }
        normalize(&mut v);
        if v.iter().all(|&x| x == 0.0) {
            return Ok(None);
        }
        Ok(Some(v.into()))
    }

    /// Reorganise after changes (see the module documentation).
    pub fn maintain(&mut self) {
        let n = self.entries.len();
        if !self.segments.is_empty() && n < self.config.exact_threshold / 2 {
            self.segments.clear();
            for (id, e) in self.entries.iter_mut() {
                if e.seg.take().is_some() {
                    self.pending.insert(*id);
                }
            }
            return;
        }
        if self.segments.is_empty() && n < self.config.exact_threshold {
            return;
        }
        let mut i = 0;
        while i < self.segments.len() {
            if self.segments[i].dead * 2 > self.segments[i].size {
                let s = self.segments.remove(i);
                for id in self.members(&s) {
                    if let Some(e) = self.entries.get_mut(&id) {
                        e.seg = None;
                    }
                    self.pending.insert(id);
                }
            } else {
                i += 1;
            }
        }
        if self.pending.is_empty()
            || (self.pending.len() < self.config.side_set_max && !self.segments.is_empty())
        {
            return;
        }
        let ids: Vec<NodeId> = std::mem::take(&mut self.pending).into_iter().collect();
        let seg = self.build(ids);
        self.segments.push(seg);
        while self.segments.len() >= 2 {
            let last = self.segments.len() - 1;
            if self.segments[last].live() * 2 < self.segments[last - 1].live() {
                break;
            }
            let a = self.segments.remove(last);
            let b = self.segments.remove(last - 1);
            let mut ids = self.members(&b);
            ids.extend(self.members(&a));
            let seg = self.build(ids);
            self.segments.push(seg);
        }
    }

    /// The live members of a segment.
    fn members(&self, s: &Segment) -> Vec<NodeId> {
        s.map
            .values
            .iter()
            .copied()
            .filter(|id| self.entries.get(id).is_some_and(|e| e.seg == Some(s.id)))
            .collect()
    }

    fn build(&mut self, ids: Vec<NodeId>) -> Segment {
        let sid = self.next_segment;
        self.next_segment = self.next_segment.wrapping_add(1);
        let mut points = Vec::with_capacity(ids.len());
        let mut values = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(e) = self.entries.get_mut(&id) {
                e.seg = Some(sid);
                points.push(Point(e.vec.clone()));
                values.push(id);
            }
        }
        let size = values.len();
        let builder = {
            // `Builder::default()` draws a seed from the thread RNG before
            // `.seed` replaces it; see `entropy`.
            let _allow = entropy::allow();
            Builder::default()
        };
        let map = builder
            .seed(self.config.seed ^ u64::from(sid))
            .ef_construction(self.config.ef_construction)
            .ef_search(self.config.ef_search)
            .select_heuristic(self.config.heuristic.then(Default::default))
            .build(points, values);
        Segment {
            id: sid,
            map,
            size,
            dead: 0,
        }
    }

    /// The embedding of a query text, normalised; `None` if it has no
    /// features (it then matches nothing).
    pub fn embed_query(&self, text: &str) -> Result<Option<Arc<[f32]>>, IndexError> {
        self.prepare(self.embedder.embed(text))
    }

    /// The nodes whose descriptions are most similar to `text`: by score,
    /// highest first, then by ascending id.
    pub fn search(
        &self,
        text: &str,
        query: &SemanticQuery<'_>,
    ) -> Result<Vec<SemanticHit>, IndexError> {
        match self.embed_query(text)? {
            Some(q) => Ok(self.search_prepared(&q, query)),
            None => Ok(Vec::new()),
        }
    }

    /// As `search`, from a vector of the embedder's dimension.
    pub fn search_vector(
        &self,
        vector: &[f32],
        query: &SemanticQuery<'_>,
    ) -> Result<Vec<SemanticHit>, IndexError> {
        match self.prepare(vector.to_vec())? {
            Some(q) => Ok(self.search_prepared(&q, query)),
            None => Ok(Vec::new()),
        }
    }

    fn search_prepared(&self, q: &Arc<[f32]>, query: &SemanticQuery<'_>) -> Vec<SemanticHit> {
        if query.top_k == 0 || self.entries.is_empty() {
            return Vec::new();
        }
        let threshold = if query.threshold.is_nan() {
            0.0
        } else {
            query.threshold.clamp(0.0, 1.0)
        };
        let wanted = |e: &Entry| match query.kind {
            None => true,
            Some(k) => e.kind.as_deref() == Some(k),
        };
        let score = |e: &Entry| dot(q, &e.vec).clamp(0.0, 1.0);
        let keep = |s: f32| s > 0.0 && s >= threshold;
        let mut hits: Vec<(f32, NodeId)> = Vec::new();
        let mut exact = self.segments.is_empty() || query.top_k > self.config.ef_search / 2;
        if !exact {
            for id in &self.pending {
                if let Some(e) = self.entries.get(id) {
                    let s = score(e);
                    if wanted(e) && keep(s) {
                        hits.push((s, *id));
                    }
                }
            }
            let point = Point(q.clone());
            let mut search = Search::default();
            for seg in &self.segments {
                for item in seg.map.search(&point, &mut search) {
                    let id = *item.value;
                    if let Some(e) = self.entries.get(&id) {
                        if e.seg == Some(seg.id) && wanted(e) {
                            let s = score(e);
                            if keep(s) {
                                hits.push((s, id));
                            }
                        }
                    }
                }
            }
            // A type filter can discard most of what the graphs return;
            // answer exactly rather than short.
            if query.kind.is_some() && hits.len() < query.top_k {
                exact = true;
                hits.clear();
            }
        }
        if exact {
            for (id, e) in &self.entries {
                if wanted(e) {
                    let s = score(e);
                    if keep(s) {
                        hits.push((s, *id));
                    }
                }
            }
        }
        let order = |a: &(f32, NodeId), b: &(f32, NodeId)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if hits.len() > query.top_k {
            hits.select_nth_unstable_by(query.top_k - 1, order);
            hits.truncate(query.top_k);
        }
        hits.sort_unstable_by(order);
        hits.into_iter()
            .map(|(score, id)| SemanticHit { id, score })
            .collect()
    }
}

/// Dot product in eight independent lanes, which the compiler vectorises.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let ca = a.chunks_exact(8);
    let cb = b.chunks_exact(8);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        sum += x * y;
    }
    sum
}

/// instant-distance's `Builder::default()` draws a seed with
/// `rand::random()` even when `.seed(..)` replaces it, and rand 0.8 asks
/// getrandom 0.2 for the thread RNG's key. On wasm32-unknown-unknown
/// getrandom has no source unless a crate enables its "js" feature (the
/// browser build does, and then this function is never called). Here it is
/// the "custom" source: it serves that one draw with fixed bytes — the
/// result is discarded — and refuses every other request, so nothing can
/// mistake it for entropy.
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod entropy {
    use std::sync::atomic::{AtomicBool, Ordering};

    static ALLOW: AtomicBool = AtomicBool::new(false);

    fn fill(buf: &mut [u8]) -> Result<(), getrandom::Error> {
        if ALLOW.load(Ordering::Relaxed) {
            buf.fill(0xA5);
            Ok(())
        } else {
            Err(getrandom::Error::UNSUPPORTED)
        }
    }

    getrandom::register_custom_getrandom!(fill);

    pub struct Allow;

    impl Drop for Allow {
        fn drop(&mut self) {
            ALLOW.store(false, Ordering::Relaxed);
        }
    }

    pub fn allow() -> Allow {
        ALLOW.store(true, Ordering::Relaxed);
        Allow
    }
}

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
mod entropy {
    pub struct Allow;

    pub fn allow() -> Allow {
        Allow
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::index::embed::HashingEmbedder;

    fn node(id: NodeId, desc: &str, kind: Option<&str>) -> Node {
        Node {
            id,
            code: Some("x".into()),
            description: Some(desc.into()),
            symbol_names: Vec::new(),
            kind: kind.map(Into::into),
            dependencies: Vec::new(),
        }
    }

    fn index(config: SemanticConfig) -> SemanticIndex {
        SemanticIndex::new(Box::new(HashingEmbedder::default()), config)
    }

    fn ids(hits: &[SemanticHit]) -> Vec<NodeId> {
        hits.iter().map(|h| h.id).collect()
    }

    /// The seed's example: "排序算法" finds the two sorting nodes first.
    #[test]
    fn chinese_example() {
        let mut ix = index(SemanticConfig::default());
        let docs = [
            (123, "快速排序实现"),
            (456, "归并排序算法"),
            (1, "获取当前版本"),
            (2, "版本历史查询"),
            (3, "读取配置文件"),
            (4, "计算阶乘的递归函数"),
            (5, "解析JSON字符串"),
            (6, "发送网络请求"),
            (7, "Parse a JSON document into nested lists"),
            (8, "Compute the factorial of an integer recursively"),
            (9, "Read the configuration file"),
            (10, "二叉树的遍历"),
            (11, "字符串转大写"),
        ];
        for (id, d) in docs {
            ix.insert(&node(id, d, Some("function")));
        }
        let hits = ix.search("排序算法", &SemanticQuery::default()).unwrap();
        assert!(hits.len() >= 2, "{hits:?}");
        let top: BTreeSet<NodeId> = ids(&hits[..2]).into_iter().collect();
        assert_eq!(top, BTreeSet::from([123, 456]), "{hits:?}");
        for h in &hits[2..] {
            assert!(h.score < hits[1].score - 0.1, "{hits:?}");
        }
        assert!(hits.iter().all(|h| (0.0..=1.0).contains(&h.score)));
        // English works the same way.
        ix.insert(&node(20, "Quicksort: an in-place sorting algorithm", None));
        ix.insert(&node(21, "merge sort for lists", None));
        let hits = ix
            .search("sort algorithm", &SemanticQuery::default())
            .unwrap();
        assert_eq!(hits[0].id, 20, "{hits:?}");
        assert_eq!(hits[1].id, 21, "{hits:?}");
    }

    #[test]
    fn options_top_k_threshold_kind() {
        let mut ix = index(SemanticConfig::default());
        ix.insert(&node(1, "sort a list of numbers", Some("function")));
        ix.insert(&node(2, "sort a vector", Some("function")));
        ix.insert(&node(3, "sort order constant", Some("constant")));
        ix.insert(&node(4, "open a window", Some("function")));
        let q = |top_k, threshold, kind| SemanticQuery {
            top_k,
            threshold,
            kind,
        };
        let all = ix.search("sort", &q(10, 0.0, None)).unwrap();
        assert_eq!(all.len(), 3, "{all:?}");
        let one = ix.search("sort", &q(1, 0.0, None)).unwrap();
        assert_eq!(one, all[..1].to_vec());
        let consts = ix.search("sort", &q(10, 0.0, Some("constant"))).unwrap();
        assert_eq!(ids(&consts), vec![3]);
        let high = ix.search("sort", &q(10, 0.99, None)).unwrap();
        assert!(high.is_empty(), "{high:?}");
        let mid = all[1].score;
        let cut = ix.search("sort", &q(10, mid, None)).unwrap();
        assert_eq!(cut, all[..2].to_vec());
        // The same text scores 1.
        let same = ix.search("open a window", &q(1, 0.0, None)).unwrap();
        assert_eq!(same[0].id, 4);
        assert!((same[0].score - 1.0).abs() < 1e-5);
        assert!(ix.search("", &q(10, 0.0, None)).unwrap().is_empty());
        assert!(ix.search("sort", &q(0, 0.0, None)).unwrap().is_empty());
        assert_eq!(ix.search("sort", &q(10, f32::NAN, None)).unwrap(), all);
        // Scores do not depend on what else is indexed.
        ix.remove(2);
        ix.remove(4);
        let again = ix.search("sort", &q(10, 0.0, None)).unwrap();
        let without: Vec<SemanticHit> = all.iter().filter(|h| h.id != 2).cloned().collect();
        assert_eq!(again, without);
    }

    #[test]
    fn no_description_or_no_features_is_not_indexed() {
        let mut ix = index(SemanticConfig::default());
        ix.insert(&node(1, "--- ...", None));
        let mut n = node(2, "x", None);
        n.description = None;
        ix.insert(&n);
        assert_eq!(ix.len(), 0);
        ix.insert(&node(3, "real words", None));
        ix.insert(&node(3, "", None));
        assert_eq!(ix.len(), 0);
    }

    struct Broken;
    impl Embedder for Broken {
        fn dim(&self) -> usize {
            4
        }
        fn embed(&self, text: &str) -> Vec<f32> {
            match text {
                "short" => vec![1.0],
                "nan" => vec![f32::NAN, 0.0, 0.0, 0.0],
                _ => vec![1.0, 0.0, 0.0, 0.0],
            }
        }
    }

    #[test]
    fn a_broken_embedder_is_contained() {
        let mut ix = SemanticIndex::new(Box::new(Broken), SemanticConfig::default());
        ix.insert(&node(1, "short", None));
        ix.insert(&node(2, "nan", None));
        ix.insert(&node(3, "fine", None));
        assert_eq!(ix.len(), 1);
        assert_eq!(ix.stats().rejected, 2);
        let err = ix.search("short", &SemanticQuery::default()).unwrap_err();
        assert_eq!(err.kind(), "invalid-embedding");
        assert!(ix
            .search_vector(&[1.0, 2.0], &SemanticQuery::default())
            .is_err());
        let hits = ix
            .search_vector(&[2.0, 0.0, 0.0, 0.0], &SemanticQuery::default())
            .unwrap();
        assert_eq!(ids(&hits), vec![3]);
    }

    /// Deterministic xorshift for the random tests.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    const WORDS: &[&str] = &[
        "sort",
        "list",
        "tree",
        "graph",
        "parse",
        "string",
        "number",
        "vector",
        "hash",
        "table",
        "排序",
        "算法",
        "列表",
        "树",
        "图",
        "解析",
        "字符串",
        "数字",
        "向量",
        "哈希",
    ];

    fn random_desc(rng: &mut Rng) -> String {
        let n = 1 + rng.below(4);
        (0..n)
            .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Graphs on: search still finds what an exact scan finds, and ignores
    /// removed and replaced nodes.
    #[test]
    fn segments_agree_with_exact_search() {
        let config = SemanticConfig {
            exact_threshold: 300,
            side_set_max: 64,
            ..SemanticConfig::default()
        };
        let mut ix = index(config.clone());
        let mut rng = Rng(7);
        let mut live: BTreeMap<NodeId, Node> = BTreeMap::new();
        for step in 0..3000 {
            let id = rng.below(1500);
            let kind = ["function", "constant"][rng.below(2) as usize];
            if rng.below(4) == 0 {
                ix.remove(id);
                live.remove(&id);
            } else {
                let n = node(id, &random_desc(&mut rng), Some(kind));
                ix.insert(&n);
                live.insert(id, n);
            }
            if step % 500 == 499 {
                let s = ix.stats();
                assert!(!s.segments.is_empty(), "{s:?}");
                assert!(s.pending < config.side_set_max, "{s:?}");
            }
        }
        let mut exact = index(SemanticConfig {
            exact_threshold: usize::MAX,
            ..config
        });
        for n in live.values() {
            exact.insert(n);
        }
        assert_eq!(exact.stats().segments, vec![]);
        assert_eq!(ix.len(), exact.len());
        // Every unique description must be found with score 1 at the top.
        let mut recall = 0;
        let mut total = 0;
        for n in live.values().take(200) {
            let text = n.description.as_deref().unwrap();
            let q = SemanticQuery {
                top_k: 5,
                ..SemanticQuery::default()
            };
            let got = ix.search(text, &q).unwrap();
            let want = exact.search(text, &q).unwrap();
            assert!((got[0].score - want[0].score).abs() < 1e-6);
            for w in &want {
                total += 1;
                if got.iter().any(|g| g.score >= w.score - 1e-6) {
                    recall += 1;
                }
            }
            for g in &got {
                assert!(live.contains_key(&g.id));
            }
            let kq = SemanticQuery {
                top_k: 5,
                kind: Some("constant"),
                ..SemanticQuery::default()
            };
            for g in ix.search(text, &kq).unwrap() {
                assert_eq!(live[&g.id].kind.as_deref(), Some("constant"));
            }
        }
        assert!(recall * 100 >= total * 95, "recall {recall}/{total}");
        // Shrinking far below the threshold drops the graphs.
        for id in 0..1500 {
            ix.remove(id);
        }
        assert_eq!(ix.stats().segments, vec![]);
        assert_eq!(ix.len(), 0);
    }

    /// Incremental updates end in the same index as a rebuild.
    #[test]
    fn incremental_equals_rebuild() {
        for (seed, threshold) in [(1u64, usize::MAX), (2, 200), (3, 50)] {
            let config = SemanticConfig {
                exact_threshold: threshold,
                side_set_max: 32,
                ..SemanticConfig::default()
            };
            let mut rng = Rng(seed * 0x9e37_79b9_7f4a_7c15);
            let mut ix = index(config.clone());
            let mut live: BTreeMap<NodeId, Node> = BTreeMap::new();
            for _ in 0..2000 {
                let id = rng.below(400);
                let old = live.get(&id).cloned();
                let new = if rng.below(3) == 0 {
                    None
                } else {
                    let kind = ["function", "constant"][rng.below(2) as usize];
                    Some(node(id, &random_desc(&mut rng), Some(kind)))
                };
                ix.apply(old.as_ref(), new.as_ref());
                match new {
                    Some(n) => live.insert(id, n),
                    None => live.remove(&id),
                };
            }
            let mut fresh = index(config);
            for n in live.values() {
                fresh.apply_deferred(None, Some(n));
            }
            fresh.maintain();
            let a: Vec<_> = ix.entries().map(|(i, v, k)| (i, v.to_vec(), k)).collect();
            let b: Vec<_> = fresh
                .entries()
                .map(|(i, v, k)| (i, v.to_vec(), k))
                .collect();
            assert_eq!(a, b);
        }
    }
}
