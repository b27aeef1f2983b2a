//! The lexical index: BM25 over what a node says and what it is called.
//!
//! A node's *terms* come from three fields (see `text`): its description,
//! its symbol names split into words, and the identifiers and string
//! literals of its code. Words are stemmed; CJK runs give every character
//! and every pair of adjacent characters (most Chinese words are one or two
//! characters, so shared pairs are mostly shared words). Each occurrence
//! counts with its field's weight: a name says more than a word deep in the
//! code.
//!
//! Scores are BM25 normalised to 0..1 so that they mean the same thing in
//! every call: the idf-weighted share of the query's terms that the node
//! contains, each term's part saturating at one occurrence in a node of
//! average length (less in a longer node):
//!
//! ```text
//! score(q, d) = Σ_t idf(t) · min(1, tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen))) / Σ_t idf(t)
//! ```
//!
//! A query's CJK pair that no node contains is left out of the sum (it is
//! most likely two words meeting, as 序算 in 排序算法).
//!
//! # Layout
//!
//! Documents are numbered by *slot* in insertion order; each term has a
//! posting list of (slot, weighted count), ascending. A removed or changed
//! node only marks its slot dead (searches skip it); once dead slots
//! outnumber live ones, the lists are rebuilt. Everything is plain arrays
//! keyed by slot and term number, the shape an immutable, stored segment
//! would take.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::text::{code_words, pieces, stem, Piece, Scratch};
use crate::repo::node::{Node, NodeId};

/// Weights of the fields in a term's count.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldWeights {
    pub description: f32,
    pub names: f32,
    pub code: f32,
}

impl Default for FieldWeights {
    fn default() -> Self {
        FieldWeights {
            description: 1.0,
            names: 2.0,
            code: 0.5,
        }
    }
}

const K1: f32 = 1.2;
const B: f32 = 0.75;

struct Doc {
    id: NodeId,
    kind: Option<Arc<str>>,
    /// Weighted number of terms.
    len: f32,
    /// (term, weighted count), by ascending term.
    terms: Box<[(u32, f32)]>,
    live: bool,
}

/// A query analysed against the index's dictionary.
#[derive(Clone, Debug, Default)]
pub struct LexicalQuery {
    /// (term, idf × the term's weight in the query), for terms some node has.
    terms: Vec<(u32, f32)>,
    /// The sum of every counted term's weight: the score of a node that
    /// has them all.
    total: f32,
}

impl LexicalQuery {
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

#[derive(Default)]
pub struct LexicalIndex {
    weights: FieldWeights,
    dictionary: BTreeMap<Box<str>, u32>,
    /// Per term: live documents that contain it.
    df: Vec<u32>,
    /// Per term: (slot, weighted count), by ascending slot.
    postings: Vec<Vec<(u32, f32)>>,
    docs: Vec<Doc>,
    slots: BTreeMap<NodeId, u32>,
    /// Interned type names: many nodes share a few types.
    kinds: BTreeSet<Arc<str>>,
    live: usize,
    live_len: f64,
    scratch: Scratch,
}

impl LexicalIndex {
    pub fn new(weights: FieldWeights) -> Self {
        LexicalIndex {
            weights,
            ..LexicalIndex::default()
        }
    }

    pub fn clear(&mut self) {
        *self = LexicalIndex::new(self.weights.clone());
    }

    /// Number of indexed nodes.
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
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

    pub fn remove(&mut self, id: NodeId) {
        let Some(slot) = self.slots.remove(&id) else {
            return;
        };
        let doc = &mut self.docs[slot as usize];
        doc.live = false;
        self.live -= 1;
        self.live_len -= f64::from(doc.len);
        for &(t, _) in doc.terms.iter() {
            self.df[t as usize] -= 1;
        }
        if self.docs.len() > 1024 && self.docs.len() > 2 * self.live {
            self.compact();
        }
    }

    /// Index `node` (replacing what was indexed under its id).
    pub fn insert(&mut self, node: &Node) {
        self.remove(node.id);
        let mut counts: BTreeMap<u32, f32> = BTreeMap::new();
        let mut scratch = std::mem::take(&mut self.scratch);
        let w = self.weights.clone();
        let mut add = |ix: &mut LexicalIndex, text: &str, weight: f32| {
            pieces(text, &mut scratch, &mut |p| {
                for_each_term(p, true, &mut |term| {
                    let t = ix.term_id(term);
                    *counts.entry(t).or_insert(0.0) += weight;
                })
            });
        };
        if let Some(d) = &node.description {
            add(self, d, w.description);
        }
        for name in &node.symbol_names {
            add(self, name, w.names);
        }
        if let Some(code) = &node.code {
            let mut words = String::new();
            code_words(code, &mut words);
            add(self, &words, w.code);
        }
        self.scratch = scratch;
        if counts.is_empty() {
            return;
        }
        let Ok(slot) = u32::try_from(self.docs.len()) else {
            return;
        };
        let len: f32 = counts.values().sum();
        for (&t, &c) in &counts {
            self.df[t as usize] += 1;
            self.postings[t as usize].push((slot, c));
        }
        let kind = node.kind.as_deref().map(|k| match self.kinds.get(k) {
            Some(k) => k.clone(),
            None => {
                let k: Arc<str> = Arc::from(k);
                self.kinds.insert(k.clone());
                k
            }
        });
        self.docs.push(Doc {
            id: node.id,
            kind,
            len,
            terms: counts.into_iter().collect(),
            live: true,
        });
        self.slots.insert(node.id, slot);
        self.live += 1;
        self.live_len += f64::from(len);
    }

    /// The type of indexed node `id`.
    pub fn kind(&self, id: NodeId) -> Option<&str> {
        let slot = *self.slots.get(&id)?;
        self.docs[slot as usize].kind.as_deref()
    }

    fn term_id(&mut self, term: &str) -> u32 {
        if let Some(&t) = self.dictionary.get(term) {
            return t;
        }
        let t = self.df.len() as u32;
        self.dictionary.insert(term.into(), t);
        self.df.push(0);
        self.postings.push(Vec::new());
        t
    }

    /// Renumbers the live documents and rebuilds the posting lists without
    /// the dead ones.
    fn compact(&mut self) {
        let docs = std::mem::take(&mut self.docs);
        for p in &mut self.postings {
            p.clear();
        }
        self.slots.clear();
        for doc in docs.into_iter().filter(|d| d.live) {
            let slot = self.docs.len() as u32;
            for &(t, c) in doc.terms.iter() {
                self.postings[t as usize].push((slot, c));
            }
            self.slots.insert(doc.id, slot);
            self.docs.push(doc);
        }
    }

    fn idf(&self, df: u32) -> f32 {
        let n = self.live as f32;
        let df = df as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// Analyses a query. Terms no node contains count against every node
    /// (a word the knowledge base does not know), except CJK pairs.
    /// `translations` are words of other languages meaning what the
    /// query's words mean, with their similarity: each is looked for too,
    /// counting that much.
    pub fn query(&self, text: &str, translations: &[(String, f32)]) -> LexicalQuery {
        let mut q = LexicalQuery::default();
        let mut scratch = Scratch::default();
        let mut wanted: BTreeMap<u32, f32> = BTreeMap::new();
        let mut add = |q: &mut LexicalQuery, text: &str, weight: f32, scratch: &mut Scratch| {
            let unknown_idf = self.idf(0);
            pieces(text, scratch, &mut |p| {
                let cjk = matches!(p, Piece::Cjk(_));
                for_each_term(p, false, &mut |term| match self.dictionary.get(term) {
                    Some(&t) if self.df[t as usize] > 0 => {
                        let w = self.idf(self.df[t as usize]) * weight;
                        // A term repeated counts once, with its largest weight.
                        let old = wanted.entry(t).or_insert(0.0);
                        if w > *old {
                            q.total += w - *old;
                            *old = w;
                        }
                    }
                    _ if cjk || weight < 1.0 => {}
                    _ => q.total += unknown_idf,
                })
            });
        };
        add(&mut q, text, 1.0, &mut scratch);
        for (word, similarity) in translations {
            add(&mut q, word, similarity.clamp(0.0, 1.0), &mut scratch);
        }
        q.terms = wanted.into_iter().collect();
        q
    }

    fn average_len(&self) -> f32 {
        if self.live == 0 {
            1.0
        } else {
            (self.live_len / self.live as f64).max(1e-3) as f32
        }
    }

    /// A term's saturated part in a document of length `len`.
    fn part(count: f32, len: f32, average: f32) -> f32 {
        let norm = K1 * (1.0 - B + B * len / average);
        (count * (K1 + 1.0) / (count + norm)).min(1.0)
    }

    /// The score of node `id` (0 if it is not indexed or shares nothing).
    pub fn score(&self, q: &LexicalQuery, id: NodeId) -> f32 {
        if q.total <= 0.0 {
            return 0.0;
        }
        let Some(&slot) = self.slots.get(&id) else {
            return 0.0;
        };
        let doc = &self.docs[slot as usize];
        let average = self.average_len();
        let mut sum = 0.0;
        for &(t, idf) in &q.terms {
            if let Ok(i) = doc.terms.binary_search_by_key(&t, |&(t, _)| t) {
                sum += idf * Self::part(doc.terms[i].1, doc.len, average);
            }
        }
        (sum / q.total).clamp(0.0, 1.0)
    }

    /// The (score, id) of up to `k` live nodes with the highest positive
    /// scores that `keep` accepts, best first, ties by ascending id.
    pub fn top(
        &self,
        q: &LexicalQuery,
        k: usize,
        keep: &dyn Fn(NodeId) -> bool,
    ) -> Vec<(f32, NodeId)> {
        if k == 0 || q.total <= 0.0 || q.terms.is_empty() {
            return Vec::new();
        }
        let average = self.average_len();
        let mut acc = vec![0f32; self.docs.len()];
        let mut touched: Vec<u32> = Vec::new();
        for &(t, idf) in &q.terms {
            for &(slot, count) in &self.postings[t as usize] {
                let doc = &self.docs[slot as usize];
                if !doc.live {
                    continue;
                }
                let a = &mut acc[slot as usize];
                if *a == 0.0 {
                    touched.push(slot);
                }
                *a += idf * Self::part(count, doc.len, average);
            }
        }
        let mut hits: Vec<(f32, NodeId)> = touched
            .into_iter()
            .filter_map(|slot| {
                let id = self.docs[slot as usize].id;
                let s = (acc[slot as usize] / q.total).clamp(0.0, 1.0);
                (s > 0.0 && keep(id)).then_some((s, id))
            })
            .collect();
        let order = |a: &(f32, NodeId), b: &(f32, NodeId)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if hits.len() > k {
            hits.select_nth_unstable_by(k - 1, order);
            hits.truncate(k);
        }
        hits.sort_unstable_by(order);
        hits
    }
}

/// The terms of one piece: a word's stem; for a CJK run, its character
/// pairs, and (in documents, or for a one-character query) its characters.
fn for_each_term(p: Piece<'_>, document: bool, f: &mut dyn FnMut(&str)) {
    match p {
        Piece::Word(w) => f(stem(w)),
        Piece::Cjk(run) => {
            let mut buf = [0u8; 8];
            for pair in run.windows(2) {
                let a = pair[0].encode_utf8(&mut buf[..4]).len();
                let b = pair[1].encode_utf8(&mut buf[a..]).len();
                if let Ok(s) = std::str::from_utf8(&buf[..a + b]) {
                    f(s);
                }
            }
            if document || run.len() == 1 {
                for c in run {
                    f(c.encode_utf8(&mut buf));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl LexicalIndex {
        fn query_plain(&self, text: &str) -> LexicalQuery {
            self.query(text, &[])
        }
    }

    fn node(id: NodeId, desc: &str, names: &[&str], code: &str) -> Node {
        Node {
            id,
            code: Some(code.into()),
            description: Some(desc.into()),
            symbol_names: names.iter().map(|s| s.to_string()).collect(),
            kind: None,
            dependencies: Vec::new(),
        }
    }

    fn index() -> LexicalIndex {
        let mut ix = LexicalIndex::new(FieldWeights::default());
        ix.insert(&node(
            1,
            "归并排序算法",
            &["merge-sort"],
            "(define (merge-sort l) l)",
        ));
        ix.insert(&node(
            2,
            "排序按钮的文字",
            &["sort-button-label"],
            "(define sort-button-label \"按名称排序\")",
        ));
        ix.insert(&node(
            3,
            "Parse a JSON document",
            &["parse-json"],
            "(define (parse-json s) s)",
        ));
        ix.insert(&node(
            4,
            "二叉树的遍历",
            &["tree-walk"],
            "(define (tree-walk t) t)",
        ));
        ix
    }

    fn ids(hits: &[(f32, NodeId)]) -> Vec<NodeId> {
        hits.iter().map(|h| h.1).collect()
    }

    #[test]
    fn finds_by_description_names_and_code() {
        let ix = index();
        let all = |_: NodeId| true;
        assert_eq!(ids(&ix.top(&ix.query_plain("排序算法"), 10, &all))[0], 1);
        assert_eq!(ids(&ix.top(&ix.query_plain("merge-sort"), 10, &all))[0], 1);
        assert_eq!(
            ids(&ix.top(&ix.query_plain("button label"), 10, &all)),
            vec![2]
        );
        // A string literal of the code.
        assert_eq!(ids(&ix.top(&ix.query_plain("名称"), 10, &all)), vec![2]);
        // One character finds the pairs' characters.
        assert_eq!(ids(&ix.top(&ix.query_plain("树"), 10, &all)), vec![4]);
        assert_eq!(
            ids(&ix.top(&ix.query_plain("parsing JSON"), 10, &all)),
            vec![3]
        );
        assert!(ix.top(&ix.query_plain("nothing here"), 10, &all).is_empty());
        assert!(ix.top(&ix.query_plain(""), 10, &all).is_empty());
        let only_even = |id: NodeId| id % 2 == 0;
        assert_eq!(
            ids(&ix.top(&ix.query_plain("排序"), 10, &only_even)),
            vec![2]
        );
    }

    #[test]
    fn scores_are_shares_of_the_query() {
        let ix = index();
        let q = ix.query_plain("parse json");
        let s = ix.score(&q, 3);
        assert!(s > 0.9 && s <= 1.0, "{s}");
        // Half the query's words, and one the index has never seen.
        let half = ix.score(&ix.query_plain("parse"), 3);
        assert!(half > 0.9, "{half}");
        let unknown = ix.score(&ix.query_plain("parse zebra"), 3);
        assert!(unknown < 0.7 && unknown > 0.2, "{unknown}");
        assert_eq!(ix.score(&q, 1), 0.0);
        assert_eq!(ix.score(&q, 99), 0.0);
        let top = ix.top(&q, 1, &|_| true);
        assert_eq!(top, vec![(s, 3)]);
    }

    #[test]
    fn translations_count_as_much_as_they_are_similar() {
        let ix = index();
        let t = vec![("json".to_string(), 0.5)];
        let plain = ix.query("解析", &[]);
        let translated = ix.query("解析", &t);
        assert_eq!(ix.score(&plain, 3), 0.0);
        assert!(ix.score(&translated, 3) > 0.0);
        // Beside a word of the query that matches, a translation counts as
        // much as it is similar.
        let both = ix.query("parse 解析", &t);
        let only_parse = ix.query("parse", &[]);
        let s = ix.score(&both, 3);
        assert!(s > ix.score(&only_parse, 3) * 0.5 && s <= 1.0, "{s}");
        // An unknown translation does not count against anything.
        let t = vec![("zebra".to_string(), 0.9)];
        assert_eq!(ix.query("parse", &t).total, ix.query("parse", &[]).total);
    }

    #[test]
    fn removal_and_compaction_agree_with_a_fresh_index() {
        let mut ix = LexicalIndex::new(FieldWeights::default());
        let desc = |i: u64| {
            format!(
                "node {} about {}",
                i % 7,
                ["sorting", "trees", "排序", "树"][(i % 4) as usize]
            )
        };
        for round in 0..4u64 {
            for i in 0..1500u64 {
                if (i + round) % 3 == 0 {
                    ix.remove(i);
                } else {
                    ix.insert(&node(i, &desc(i + round), &["x"], ""));
                }
            }
        }
        let mut fresh = LexicalIndex::new(FieldWeights::default());
        for i in 0..1500u64 {
            if (i + 3) % 3 != 0 {
                fresh.insert(&node(i, &desc(i + 3), &["x"], ""));
            }
        }
        assert_eq!(ix.len(), fresh.len());
        assert!(ix.docs.len() < 3 * ix.len());
        for text in ["sorting trees", "排序", "node 3", "树"] {
            let (a, b) = (ix.query_plain(text), fresh.query_plain(text));
            assert_eq!(
                ix.top(&a, 20, &|_| true),
                fresh.top(&b, 20, &|_| true),
                "{text}"
            );
        }
    }
}
