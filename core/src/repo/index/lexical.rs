//! The lexical index: BM25 over what a node says and what it is called.
//!
//! A node's *terms* come from four fields (see `text`): its description,
//! its symbol names split into words, the identifiers and string
//! literals of its code, and the words its type and code imply it is
//! (`text::implied_words`: procedure, predicate, algorithm, constant). Words are stemmed; CJK runs give every character
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
//! most likely two words meeting, as 序算 in 排序算法). With coverage `c`
//! (`QueryWords::coverage`), a word's weight is `1 − c` of its idf share
//! plus `c` divided by the number of the query's words; a word's implied
//! form (`is:algorithm`, `QueryWords::implied`) is one more alternative
//! of the word, not counted in its idf.
//!
//! # Layout
//!
//! The index is a persistent sorted map (`cas::sorted`) named `lexical`
//! among a version's persisted indexes, so it is stored in the host's
//! blobs like the symbol index, shared between versions where they agree,
//! and read lazily: a search reads the header, the document frequency and
//! the posting list of each query term, and the records of the nodes it
//! scores; nothing else. Keys (a tag byte, then big-endian numbers):
//!
//! - `[0]`: the header: format, indexed nodes, the sum of their lengths;
//! - `[1] id`: an indexed node: its length, its type and its terms (what
//!   removing it must take out; the old node's content is never trusted);
//! - `[2] n term`, `n` the term's length in two bytes: how many nodes hold
//!   the term (its document frequency);
//! - `[2] n term id`: a block of the term's postings (`posting_blocks`),
//!   about 64 nodes, each with the term's weighted count in the node and
//!   the node's length, so a posting list is scored without reading nodes.
//!
//! A term's frequency sorts just before its postings, in the same blob as
//! the first of them. Counts and lengths are kept in 1/64 units of a field
//! weight (integers), so the header's sums are exact and equal content
//! gives an equal map whatever the order of the changes. Document
//! frequencies and the header change by many commits' worth of inserts:
//! they wait in memory as differences (`df_delta`, `pending`) and are
//! written when a version takes the map (`map`). Every value read is
//! checked; one that does not decode is a `StoreError`, and the caller
//! builds the index again from the nodes.

use std::cell::OnceCell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use super::partial_sums::{NodeSums, Pool};
pub use super::read_lists::ReadLists;
use super::read_lists::{window_base, ListPool, Parts, Run};
use super::text::{code_words, implied_words, pieces, stem, Piece, Scratch, IMPLIED_VOCABULARY};
use super::window_sums::{WindowPool, WindowSums};
use super::{packed_postings, posting_blocks};
use crate::repo::cas::sorted::SortedMap;
use crate::repo::cas::{Blobs, StoreError};
use crate::repo::forest::codec::{Reader, Writer};
use crate::repo::node::{Node, NodeId};

/// The most what nodes are (their implied terms) can add to a node's sum
/// of `q`'s groups.
fn implied_most(q: &LexicalQuery) -> f32 {
    q.groups
        .iter()
        .map(|g| {
            let most = g
                .alternatives
                .iter()
                .filter(|a| a.implied)
                .map(|a| a.factor)
                .fold(0.0f32, f32::max);
            g.weight * most
        })
        .sum()
}

/// The lookups of a query's terms in the nodes a search scores, by term
/// (see `LexicalIndex::score_read`): the blocks of the lists looked up,
/// kept for the next node.
pub struct Probes(Vec<Option<posting_blocks::Lookups>>);

impl Probes {
    pub fn new(q: &LexicalQuery) -> Probes {
        Probes((0..q.terms.len()).map(|_| None).collect())
    }

    /// Node `id`'s posting of term number `t`, `term`.
    fn get(
        &mut self,
        map: &SortedMap,
        t: usize,
        term: &str,
        id: NodeId,
    ) -> Result<Option<posting_blocks::Posting>, StoreError> {
        match self.0.get_mut(t) {
            Some(lookups) => lookups
                .get_or_insert_with(|| posting_blocks::Lookups::new(term_key(term)))
                .get(map, id),
            None => posting_blocks::get(map, &term_key(term), id),
        }
    }
}

/// Weights of the fields in a term's count.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldWeights {
    pub description: f32,
    pub names: f32,
    pub code: f32,
    /// What the node's type and code say it is (`text::implied_words`).
    pub implied: f32,
}

impl Default for FieldWeights {
    fn default() -> Self {
        FieldWeights {
            description: 1.0,
            names: 2.0,
            code: 0.5,
            implied: 1.0,
        }
    }
}

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// The layout this module writes; a map of another is built again.
const FORMAT: u64 = 4;
/// Counts and lengths are stored in units of 1/UNITS.
const UNITS: f32 = 64.0;
const HEADER_KEY: &[u8] = &[0];
const DOC_TAG: u8 = 1;
const TERM_TAG: u8 = 2;
/// The longest term indexed (a longer "word" is not a word).
const MAX_TERM: usize = 255;
/// Before a word a node's type and code imply (`text::implied_words`):
/// such a term is apart from the words a node says (no word has a colon).
const IMPLIED: &str = "is:";

fn doc_key(id: NodeId) -> [u8; 9] {
    let mut k = [DOC_TAG; 9];
    k[1..].copy_from_slice(&id.to_be_bytes());
    k
}

fn term_key(term: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(3 + term.len() + 8);
    k.push(TERM_TAG);
    k.extend_from_slice(&(term.len() as u16).to_be_bytes());
    k.extend_from_slice(term.as_bytes());
    k
}

fn damaged(what: &str, e: crate::repo::cas::DecodeError) -> StoreError {
    StoreError::Inconsistent(format!(
        "the lexical index: {what}: {} at byte {}",
        e.what, e.offset
    ))
}

fn encode_uints(values: &[u64]) -> Vec<u8> {
    let mut w = Writer { buf: Vec::new() };
    for &v in values {
        w.uint(v);
    }
    w.buf
}

fn decode_uints<const N: usize>(bytes: &[u8], what: &str) -> Result<[u64; N], StoreError> {
    let mut r = Reader::new(bytes);
    let mut out = [0u64; N];
    for v in out.iter_mut() {
        *v = r.uint(what).map_err(|e| damaged(what, e))?;
    }
    r.end().map_err(|e| damaged(what, e))?;
    Ok(out)
}

/// An indexed node as its record stores it.
struct DocRecord {
    /// Weighted number of terms, in units.
    len: u64,
    kind: Option<String>,
    terms: Vec<String>,
}

fn encode_doc(d: &DocRecord) -> Vec<u8> {
    let mut w = Writer { buf: Vec::new() };
    w.uint(d.len);
    w.opt_str(&d.kind);
    w.strs(&d.terms);
    w.buf
}

fn decode_doc(bytes: &[u8]) -> Result<DocRecord, StoreError> {
    let what = "a node's record";
    let d = |e| damaged(what, e);
    let mut r = Reader::new(bytes);
    let len = r.uint("length").map_err(d)?;
    let kind = r.opt_str("type").map_err(d)?;
    let terms = r.strs("terms").map_err(d)?;
    r.end().map_err(d)?;
    if len == 0 || terms.is_empty() {
        return Err(StoreError::Inconsistent(format!(
            "the lexical index: {what} has length {len} and {} terms",
            terms.len()
        )));
    }
    Ok(DocRecord { len, kind, terms })
}

/// How a query's words may also be found: a CJK run cut into words, and
/// each word's other spellings (its translations).
pub trait QueryWords {
    /// The lengths, in characters, of the words of a CJK run (summing to
    /// its length), or `None` to look for the run's character pairs as
    /// documents hold them, each on its own.
    fn cut(&self, run: &[char]) -> Option<Vec<usize>>;
    /// Other ways to say `word` (a word, or a CJK run or word): phrases,
    /// each with how much it counts, from 0 to 1.
    fn alternatives(&self, word: &str) -> Vec<(String, f32)>;
    /// How much each of the query's words counts the same, whatever its
    /// idf, from 0 to 1 (`LexicalQuery`'s coverage): 0, the default, is
    /// plain idf weighting.
    fn coverage(&self) -> f32 {
        0.0
    }
    /// How much of a word a node gets that does not say it but *is* it
    /// (`text::implied_words`: a procedure that loops is an algorithm),
    /// from 0 (the default: only what nodes say counts) to 1. It does not
    /// make the word more common: its weight is that of the nodes saying
    /// it.
    fn implied(&self) -> f32 {
        0.0
    }
}

/// Only the query's own words.
pub struct PlainWords;

impl QueryWords for PlainWords {
    fn cut(&self, _: &[char]) -> Option<Vec<usize>> {
        None
    }
    fn alternatives(&self, _: &str) -> Vec<(String, f32)> {
        Vec::new()
    }
}

/// One way to say one word of a query: terms that all count, each by its
/// share of their idf.
#[derive(Clone, Debug)]
struct Alternative {
    /// How much a node holding every term gets of the word, 0 to 1.
    factor: f32,
    /// (term number in `LexicalQuery::terms`, idf share).
    terms: Vec<(usize, f32)>,
    /// Whether it is what a node is (`IMPLIED` terms) rather than says.
    implied: bool,
}

/// One word of a query (a concept): the node gets the best of its
/// alternatives, so a word said in two languages counts once.
#[derive(Clone, Debug)]
struct Group {
    /// The word's weight: its idf (times its factor for a translation of
    /// a word no dictionary cut).
    weight: f32,
    /// Whether one of its terms is held by more than half the nodes
    /// (`top` reads such lists only for candidates it still lacks).
    common: bool,
    alternatives: Vec<Alternative>,
}

/// A query analysed against the index's dictionary.
#[derive(Clone, Debug, Default)]
pub struct LexicalQuery {
    /// Every term looked for, each once, by term.
    terms: Vec<Box<str>>,
    groups: Vec<Group>,
    /// How many nodes hold each term (its posting list's length), by term.
    dfs: Vec<u64>,
    /// The sum of every counted word's weight: the score of a node that
    /// has them all.
    total: f32,
    /// BM25's length normalisation in units of counts (`part`), from the
    /// average node length: its part that is the same in every node, and
    /// its factor of a node's length.
    norm: (f32, f32),
}

impl LexicalQuery {
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// How many postings the lists of group `g` hold (what nodes are,
    /// never read, left out).
    fn postings(&self, g: &Group) -> u64 {
        g.alternatives
            .iter()
            .filter(|a| !a.implied)
            .flat_map(|a| a.terms.iter().map(|&(t, _)| self.dfs[t]))
            .sum()
    }

    /// A term's saturated part in a node, from the posting's count and
    /// the node's length (in units): tf·(k1+1) / (tf + k1·(1 − b +
    /// b·len/avglen)), at most 1, as one division.
    #[inline]
    fn part(&self, count: u64, len: u64) -> f32 {
        // Counts and lengths fit in 32 bits (more is a damaged index, and
        // still gives a part from 0 to 1), which convert in one step.
        let units = |v: u64| packed_postings::saturated(v) as f32;
        self.part_of_units(units(count), units(len))
    }

    /// `part` of a count and a length already in units (the same
    /// operations in the same order, so the same bits, one posting at a
    /// time or many).
    #[inline(always)]
    fn part_of_units(&self, count: f32, len: f32) -> f32 {
        (count * (K1 + 1.0) / (count + self.norm.0 + self.norm.1 * len)).min(1.0)
    }

    /// A node's part of group `g`, given each term's saturated part.
    fn matched(&self, g: &Group, part: &dyn Fn(usize) -> f32) -> f32 {
        g.alternatives
            .iter()
            .map(|a| a.factor * a.terms.iter().map(|&(t, s)| s * part(t)).sum::<f32>())
            .fold(0.0, f32::max)
    }
}

/// The header's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    docs: u64,
    /// Sum of the indexed nodes' lengths, in units.
    len: u64,
}

#[derive(Clone)]
pub struct LexicalIndex {
    weights: FieldWeights,
    map: SortedMap,
    /// The header as stored, read on first use.
    stored: OnceCell<Counts>,
    /// Changes of the counts not yet written to the header.
    pending: (i64, i64),
    /// Changes of document frequencies not yet written to the map.
    df_delta: BTreeMap<Box<str>, i64>,
    /// The partial sums' arrays, kept between searches.
    sums: Pool,
    /// The buffers of the lists searches read, kept between searches.
    lists: ListPool,
    /// The arrays `gather_whole` adds a window up in.
    windows: WindowPool,
}

impl Default for LexicalIndex {
    fn default() -> Self {
        Self::new(FieldWeights::default())
    }
}

impl std::fmt::Debug for LexicalIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LexicalIndex")
            .field("map", &self.map)
            .finish_non_exhaustive()
    }
}

impl LexicalIndex {
    /// An empty index in memory.
    pub fn new(weights: FieldWeights) -> Self {
        LexicalIndex {
            weights,
            map: SortedMap::new(Blobs::none()),
            // A new index has no header until `map` writes one.
            stored: OnceCell::from(Counts::default()),
            pending: (0, 0),
            df_delta: BTreeMap::new(),
            sums: Pool::default(),
            lists: ListPool::default(),
            windows: WindowPool::default(),
        }
    }

    /// The index a version stored as `map`, read lazily: nothing is read
    /// until a search or a change needs it, and what is read is checked
    /// then (a header of another format is an error like any damage).
    pub fn from_map(map: SortedMap) -> Self {
        LexicalIndex {
            map,
            stored: OnceCell::new(),
            ..Self::new(FieldWeights::default())
        }
    }

    /// Empties the index, keeping where its blobs are read from.
    pub fn clear(&mut self) {
        let blobs = self.map.blobs().clone();
        *self = LexicalIndex::new(self.weights.clone());
        self.map = SortedMap::new(blobs);
    }

    /// The map as a version persists it, with every waiting change
    /// written first.
    pub fn map(&mut self) -> Result<SortedMap, StoreError> {
        self.flush()?;
        Ok(self.map.clone())
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        if self.pending == (0, 0) && self.df_delta.is_empty() {
            if self.map.is_empty() {
                self.write_header(Counts::default())?;
            }
            return Ok(());
        }
        let counts = self.counts()?;
        for (term, delta) in std::mem::take(&mut self.df_delta) {
            let key = term_key(&term);
            let df = self.stored_df(&key)? as i64 + delta;
            if df > 0 {
                self.map.insert(&key, &encode_uints(&[df as u64]))?;
            } else {
                self.map.remove(&key)?;
            }
        }
        self.pending = (0, 0);
        self.write_header(counts)
    }

    fn write_header(&mut self, c: Counts) -> Result<(), StoreError> {
        self.map
            .insert(HEADER_KEY, &encode_uints(&[FORMAT, c.docs, c.len]))?;
        self.stored = OnceCell::from(c);
        Ok(())
    }

    /// The header's counts with the waiting changes.
    fn counts(&self) -> Result<Counts, StoreError> {
        let stored = match self.stored.get() {
            Some(c) => *c,
            None => {
                let c = match self.map.get(HEADER_KEY)? {
                    None => {
                        return Err(StoreError::Inconsistent(
                            "the lexical index has no header".into(),
                        ))
                    }
                    Some(bytes) => {
                        let [format, docs, len] = decode_uints::<3>(bytes, "the header")?;
                        if format != FORMAT {
                            return Err(StoreError::Inconsistent(format!(
                                "the lexical index is of format {format}, this build reads {FORMAT}"
                            )));
                        }
                        Counts { docs, len }
                    }
                };
                let _ = self.stored.set(c);
                c
            }
        };
        let docs = stored.docs as i64 + self.pending.0;
        let len = stored.len as i64 + self.pending.1;
        if docs < 0 || len < 0 {
            return Err(StoreError::Inconsistent(format!(
                "the lexical index counts {docs} nodes of total length {len}"
            )));
        }
        Ok(Counts {
            docs: docs as u64,
            len: len as u64,
        })
    }

    fn stored_df(&self, key: &[u8]) -> Result<u64, StoreError> {
        match self.map.get(key)? {
            None => Ok(0),
            Some(bytes) => Ok(decode_uints::<1>(bytes, "a document frequency")?[0]),
        }
    }

    /// How many indexed nodes hold `term`.
    fn df(&self, term: &str) -> Result<u64, StoreError> {
        let stored = self.stored_df(&term_key(term))? as i64;
        let df = stored + self.df_delta.get(term).copied().unwrap_or(0);
        u64::try_from(df).map_err(|_| {
            StoreError::Inconsistent(format!(
                "the lexical index counts {df} nodes holding {term:?}"
            ))
        })
    }

    /// Number of indexed nodes.
    pub fn len(&self) -> Result<u64, StoreError> {
        Ok(self.counts()?.docs)
    }

    pub fn is_empty(&self) -> Result<bool, StoreError> {
        Ok(self.len()? == 0)
    }

    /// One change of the current version (see the module `index`).
    pub fn apply(&mut self, old: Option<&Node>, new: Option<&Node>) -> Result<(), StoreError> {
        if let Some(o) = old {
            if new.map(|n| n.id) != Some(o.id) {
                self.remove(o.id)?;
            }
        }
        if let Some(n) = new {
            self.insert(n)?;
        }
        Ok(())
    }

    fn doc(&self, id: NodeId) -> Result<Option<DocRecord>, StoreError> {
        match self.map.get(&doc_key(id))? {
            None => Ok(None),
            Some(bytes) => decode_doc(bytes).map(Some),
        }
    }

    pub fn remove(&mut self, id: NodeId) -> Result<(), StoreError> {
        let Some(doc) = self.doc(id)? else {
            return Ok(());
        };
        for term in &doc.terms {
            if !posting_blocks::remove(&mut self.map, &term_key(term), id)? {
                return Err(StoreError::Inconsistent(format!(
                    "the lexical index: node {id} holds {term:?}, which has no posting for it"
                )));
            }
            *self.df_delta.entry(term.as_str().into()).or_insert(0) -= 1;
        }
        self.map.remove(&doc_key(id))?;
        self.pending.0 -= 1;
        self.pending.1 -= doc.len as i64;
        Ok(())
    }

    /// The weighted counts of a node's terms, in units, by term.
    fn terms_of(&self, node: &Node) -> BTreeMap<String, u64> {
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        let mut scratch = Scratch::default();
        let w = &self.weights;
        let mut add = |text: &str, weight: f32| {
            let units = (weight * UNITS).round().max(0.0) as u64;
            if units == 0 {
                return;
            }
            pieces(text, &mut scratch, &mut |p| {
                for_each_term(p, true, &mut |term| {
                    if term.len() <= MAX_TERM {
                        match counts.get_mut(term) {
                            Some(c) => *c += units,
                            None => {
                                counts.insert(term.to_string(), units);
                            }
                        }
                    }
                })
            });
        };
        if let Some(d) = &node.description {
            add(d, w.description);
        }
        for name in &node.symbol_names {
            add(name, w.names);
        }
        if let Some(code) = &node.code {
            let mut words = String::new();
            code_words(code, &mut words);
            add(&words, w.code);
        }
        let units = (w.implied * UNITS).round().max(0.0) as u64;
        if units > 0 {
            let mut implied = String::new();
            implied_words(node.kind.as_deref(), node.code.as_deref(), &mut implied);
            for word in implied.split_whitespace() {
                *counts.entry(format!("{IMPLIED}{word}")).or_insert(0) += units;
            }
        }
        counts
    }

    /// Index `node` (replacing what was indexed under its id).
    pub fn insert(&mut self, node: &Node) -> Result<(), StoreError> {
        self.remove(node.id)?;
        let counts = self.terms_of(node);
        if counts.is_empty() {
            return Ok(());
        }
        let len: u64 = counts.values().sum();
        for (term, &c) in &counts {
            posting_blocks::insert(&mut self.map, &term_key(term), node.id, c, len)?;
            *self.df_delta.entry(term.as_str().into()).or_insert(0) += 1;
        }
        let doc = DocRecord {
            len,
            kind: node.kind.clone(),
            terms: counts.into_keys().collect(),
        };
        self.map.insert(&doc_key(node.id), &encode_doc(&doc))?;
        self.pending.0 += 1;
        self.pending.1 += len as i64;
        Ok(())
    }

    /// The type of indexed node `id`.
    pub fn kind(&self, id: NodeId) -> Result<Option<String>, StoreError> {
        Ok(self.doc(id)?.and_then(|d| d.kind))
    }

    fn idf(docs: u64, df: u64) -> f32 {
        let n = docs as f32;
        let df = df as f32;
        crate::float_math::ln_f32(1.0 + (n - df + 0.5) / (df + 0.5))
    }

    /// Analyses a query. Each word is a group of alternatives: the word
    /// itself and what `words` says it may also be (translations); a node
    /// gets the best alternative's part of the word, so a word found in
    /// two languages counts once. A word's weight is its idf. A word no
    /// node contains, in none of its forms, counts against every node (a
    /// word the knowledge base does not know), except CJK text.
    pub fn query(&self, text: &str, words: &dyn QueryWords) -> Result<LexicalQuery, StoreError> {
        let counts = self.counts()?;
        let average = if counts.docs == 0 {
            1.0
        } else {
            ((counts.len as f64 / UNITS as f64) / counts.docs as f64).max(1e-3) as f32
        };
        let mut b = QueryBuilder {
            index: self,
            docs: counts.docs,
            dfs: BTreeMap::new(),
            groups: Vec::new(),
            unknown: 0.0,
            unknown_words: 0,
            implied: words.implied(),
            scratch: Scratch::default(),
        };
        let unknown_idf = Self::idf(counts.docs, 0);
        let mut scratch = Scratch::default();
        let mut failed: Option<StoreError> = None;
        pieces(text, &mut scratch, &mut |p| {
            let r = match p {
                Piece::Word(w) => {
                    let own = vec![stem(w).to_string()];
                    b.word(&own, words.alternatives(w)).map(|known| {
                        if !known {
                            b.unknown += unknown_idf;
                            b.unknown_words += 1;
                        }
                    })
                }
                Piece::Cjk(run) => b.cjk(run, words),
            };
            if let Err(e) = r {
                failed.get_or_insert(e);
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(b.finish(average, words.coverage()))
    }

    /// The score of node `id` (0 if it is not indexed or shares nothing).
    pub fn score(&self, q: &LexicalQuery, id: NodeId) -> Result<f32, StoreError> {
        self.score_read(q, id, &ReadLists::new(0, &self.lists), &mut Probes::new(q))
    }

    /// `score` of node `id` for `q`, for one of many nodes: a term's part
    /// is taken from `read` where a search read the term's whole posting
    /// list (what `top_reading` read for the same `q`; a node not in it has
    /// none of it), the other terms looked up, their blocks kept in
    /// `probes` (made by `Probes::new(q)`) for the next node.
    pub fn score_read(
        &self,
        q: &LexicalQuery,
        id: NodeId,
        read: &ReadLists,
        probes: &mut Probes,
    ) -> Result<f32, StoreError> {
        self.score_looked_up(q, id, read, &Probed::none(), probes)
    }

    /// `score_read`, with the parts `looked_up` holds for `id` too.
    fn score_looked_up(
        &self,
        q: &LexicalQuery,
        id: NodeId,
        read: &ReadLists,
        looked_up: &Probed,
        probes: &mut Probes,
    ) -> Result<f32, StoreError> {
        if q.total <= 0.0 {
            return Ok(0.0);
        }
        let mut parts = Vec::with_capacity(q.terms.len());
        for (t, term) in q.terms.iter().enumerate() {
            if let Some(known) = read.get(t) {
                parts.push(known.find(id).unwrap_or(0.0));
                continue;
            }
            if let Some(part) = looked_up.get(t, id) {
                parts.push(part);
                continue;
            }
            parts.push(match probes.get(&self.map, t, term, id)? {
                Some((_, count, len)) => q.part(count, len),
                None => 0.0,
            });
        }
        // What a node is counts only beside a word it says: a procedure
        // that says nothing of the query is no hit for "sort algorithm".
        let says = q.groups.iter().any(|g| {
            g.alternatives
                .iter()
                .filter(|a| !a.implied)
                .any(|a| a.terms.iter().any(|&(t, _)| parts[t] > 0.0))
        });
        if !says {
            return Ok(0.0);
        }
        let sum: f32 = q
            .groups
            .iter()
            .map(|g| g.weight * q.matched(g, &|t| parts[t]))
            .sum();
        Ok((sum / q.total).clamp(0.0, 1.0))
    }

    /// Adds each node's part of group `g` (its weight times its best
    /// alternative) to `sums`; the largest sum it leaves. What nodes are
    /// (implied terms) is left out: it makes no node a candidate, `score`
    /// adds it. The parts of `g`'s terms are kept in `read` (see
    /// `score_read`).
    fn add_group(
        &self,
        q: &LexicalQuery,
        g: &Group,
        read: &mut ReadLists,
        sums: &mut NodeSums,
        scratch: &mut [NodeSums; 2],
    ) -> Result<f32, StoreError> {
        self.read_group(q, g, read)?;
        let list = |t: usize| read.list(t);
        let [best, alternative] = scratch;
        let mut s = NodeGroupSums {
            sums,
            best,
            alternative,
            most: 0.0,
        };
        sum_group(g, list, &mut s);
        Ok(s.most)
    }

    /// Reads the lists of group `g`'s terms (`read_term`).
    fn read_group(
        &self,
        q: &LexicalQuery,
        g: &Group,
        read: &mut ReadLists,
    ) -> Result<(), StoreError> {
        for a in g.alternatives.iter().filter(|a| !a.implied) {
            for &(t, _) in &a.terms {
                self.read_term(q, t, read)?;
            }
        }
        Ok(())
    }

    /// Term `t`'s parts (`read_parts`), read once: a term may be in
    /// several alternatives (a gloss that is also a translation).
    fn read_term(
        &self,
        q: &LexicalQuery,
        t: usize,
        read: &mut ReadLists,
    ) -> Result<(), StoreError> {
        if !read.is_read(t) {
            read.set(t, self.read_parts(q, t)?);
        }
        Ok(())
    }

    /// Term `t`'s part in each node of its posting list, by ascending node.
    fn read_parts(&self, q: &LexicalQuery, t: usize) -> Result<Parts, StoreError> {
        // As long as the list says it is (more only for a damaged one).
        let df = q
            .dfs
            .get(t)
            .map_or(0, |&df| df.min(u32::MAX.into()) as usize);
        let mut known = self.lists.take(df);
        let mut parts = Vec::new();
        posting_blocks::scan_columns(&self.map, &term_key(&q.terms[t]), &mut |block| {
            // The parts from the columns, in a loop of its own: their
            // divisions are made several at a time (made as they are
            // appended, they took 5% longer).
            parts.clear();
            parts.extend(
                block
                    .counts
                    .iter()
                    .zip(&block.lens)
                    .map(|(&count, &len)| q.part_of_units(count as f32, len as f32)),
            );
            known.extend(&block.ids, &parts);
        })?;
        Ok(known)
    }

    /// Nodes holding a term of common group `group` that `acc` lacks, in
    /// node order, until `acc` and they make `k`.
    fn common_candidates(
        &self,
        q: &LexicalQuery,
        group: &Group,
        acc: &[(NodeId, f32)],
        k: usize,
    ) -> Result<Vec<NodeId>, StoreError> {
        let mut ids: Vec<NodeId> = Vec::new();
        let known: std::collections::BTreeSet<NodeId> = acc.iter().map(|a| a.0).collect();
        let terms: std::collections::BTreeSet<usize> = group
            .alternatives
            .iter()
            .filter(|a| !a.implied)
            .flat_map(|a| a.terms.iter().map(|t| t.0))
            .collect();
        for t in terms {
            if acc.len() + ids.len() >= k {
                break;
            }
            posting_blocks::scan(&self.map, &term_key(&q.terms[t]), &mut |(id, _, _)| {
                if !known.contains(&id) && !ids.contains(&id) {
                    ids.push(id);
                }
                acc.len() + ids.len() < k
            })?;
        }
        Ok(ids)
    }

    /// The (score, id) of up to `k` nodes with the highest positive scores
    /// that `keep` accepts, best first, ties by ascending id.
    ///
    /// Every posting list is read and the lists are added up a window of
    /// node ids at a time (`gather_whole`). A query with a common word
    /// reads the lists rarest term first instead (`gather`); once the best
    /// `k` partial scores beat what every term still unread could add, a
    /// node not yet met cannot enter the top, and the rest of the lists
    /// need not be read (max-score pruning): the candidates met so far can
    /// be scored exactly instead, where that costs less than reading on.
    pub fn top(
        &self,
        q: &LexicalQuery,
        k: usize,
        keep: &dyn Fn(NodeId) -> Result<bool, StoreError>,
    ) -> Result<Vec<(f32, NodeId)>, StoreError> {
        Ok(self.top_reading(q, k, keep)?.0)
    }

    /// `top`, and the lists it read whole, with which other nodes are
    /// scored (`score_read`) without looking those terms up again.
    pub fn top_reading(
        &self,
        q: &LexicalQuery,
        k: usize,
        keep: &dyn Fn(NodeId) -> Result<bool, StoreError>,
    ) -> Result<(Vec<(f32, NodeId)>, ReadLists), StoreError> {
        self.top_with(q, k, keep, Costs::MEASURED)
    }

    /// `top_reading`, choosing between its ways by `costs` (which change
    /// how much is read, never the answer).
    fn top_with(
        &self,
        q: &LexicalQuery,
        k: usize,
        keep: &dyn Fn(NodeId) -> Result<bool, StoreError>,
        costs: Costs,
    ) -> Result<(Vec<(f32, NodeId)>, ReadLists), StoreError> {
        if k == 0 || q.total <= 0.0 || q.groups.is_empty() {
            return Ok((Vec::new(), ReadLists::new(0, &self.lists)));
        }
        // A word most nodes hold is read only for the candidates the
        // others leave short (`gather`).
        let whole = costs.whole && !q.groups.iter().any(|g| g.common);
        let unread = if whole {
            heavy_groups(q, costs.unread_share)
        } else {
            Vec::new()
        };
        let mut g = if whole {
            self.gather_whole(q, Some(k), &unread)?
        } else {
            self.gather(q, k, keep, costs)?
        };
        let mut bar = kth_kept(g.acc.iter().copied(), g.acc.len(), k, &mut g.kept, keep)?;
        if !unread.is_empty() && bar.is_none_or(|b| g.rest * (1.0 + 1e-4) + 1e-6 >= b) {
            // A node the lists read never met could still enter the top
            // by the groups left unread: they are read after all, and the
            // lists added up again.
            for &i in &unread {
                self.read_group(q, &q.groups[i], &mut g.read)?;
            }
            g.rest = implied_most(q);
            g.unread = false;
            self.sum_windows(q, Some(k), &mut g);
            bar = kth_kept(g.acc.iter().copied(), g.acc.len(), k, &mut g.kept, keep)?;
        }
        if g.floor > 0.0 && bar.is_none_or(|b| b < g.floor) {
            // Fewer than k of the best nodes met are kept: the nodes
            // left out below them may be needed after all (the lists
            // read are added up again, not read again).
            self.sum_windows(q, None, &mut g);
            bar = kth_kept(g.acc.iter().copied(), g.acc.len(), k, &mut g.kept, keep)?;
        }
        let mut hits = if g.rest == 0.0 {
            self.best_read(q, k, keep, &mut g, bar)?
        } else {
            self.best_candidates(q, k, keep, &mut g, bar, costs)?
        };
        hits.retain(|h| h.0 > 0.0);
        if hits.len() > k {
            hits.select_nth_unstable_by(k - 1, by_score);
            hits.truncate(k);
        }
        hits.sort_unstable_by(by_score);
        Ok((hits, g.read))
    }

    /// Reads the query's posting lists, most weighty group first, into
    /// partial sums, until no node not met yet can enter the top and
    /// scoring the candidates costs less than reading on.
    fn gather(
        &self,
        q: &LexicalQuery,
        k: usize,
        keep: &dyn Fn(NodeId) -> Result<bool, StoreError>,
        costs: Costs,
    ) -> Result<Gathered, StoreError> {
        let weight = |i: usize| q.groups[i].weight;
        // The groups that cost least to read for what they weigh come
        // first: the top's bar rises for little reading, and the lists
        // left unread once no new node can enter (then looked up only for
        // the candidates) are the longest, of words many nodes share.
        let cost = |i: usize| q.postings(&q.groups[i]) as f32 / weight(i).max(f32::MIN_POSITIVE);
        let mut order: Vec<usize> = (0..q.groups.len()).collect();
        order.sort_by(|&a, &b| cost(a).total_cmp(&cost(b)).then(a.cmp(&b)));
        let mut g = Gathered::new(q, &self.lists);
        // Ids are given out in order, so a few times the nodes indexed
        // (and a margin for a small index) holds every id of a store that
        // has not deleted most of what it made.
        let limit = self
            .counts()?
            .docs
            .saturating_mul(4)
            .saturating_add(1 << 16);
        let (mut sums, mut scratch) = self.sums.take_search(limit);
        let read = self.read_groups(q, k, keep, costs, &order, &mut g, &mut sums, &mut scratch);
        g.acc = sums.pairs();
        self.sums.give([sums]);
        self.sums.give(scratch);
        read.map(|()| g)
    }

    /// Every list of the query read whole, and the partial sums (every
    /// group's part, what nodes are left out) added a window of ids at a
    /// time: the sums of a window stay in the processor's cache while
    /// each group adds to them, where sums for every node met are a
    /// reach far apart in memory for each posting.
    ///
    /// With `few` (`Some(k)`), only the nodes that can be among the best
    /// `2k` partial sums (or within what the lists not read can add of
    /// them) are kept in `acc`: `floor` says below what nodes were left
    /// out, and the caller gathers again without `few` if the top needs
    /// them (when `keep` turns down more than `k` of the best `2k`).
    ///
    /// The groups `unread` names are not read (their terms' lists are,
    /// where another group has them): what they could add is in `rest`.
    fn gather_whole(
        &self,
        q: &LexicalQuery,
        few: Option<usize>,
        unread: &[usize],
    ) -> Result<Gathered, StoreError> {
        let mut g = Gathered::new(q, &self.lists);
        g.rest = implied_most(q) + unread.iter().map(|&i| q.groups[i].weight).sum::<f32>();
        g.unread = !unread.is_empty();
        for (i, group) in q.groups.iter().enumerate() {
            if !unread.contains(&i) {
                self.read_group(q, group, &mut g.read)?;
            }
        }
        self.sum_windows(q, few, &mut g);
        Ok(g)
    }

    /// `gather_whole`'s adding up of the lists in `g.read`, into `g.acc`.
    fn sum_windows(&self, q: &LexicalQuery, few: Option<usize>, g: &mut Gathered) {
        let mut best = BestSums::new(few.map_or(0, |k| k.saturating_mul(2)));
        // `best_candidates` looks at sums down to the k-th kept less this.
        let margin = if g.rest > 0.0 {
            g.rest * (1.0 + 1e-4) + 1e-4 * q.total
        } else {
            0.0
        };
        let lists: Vec<&Parts> = (0..q.terms.len()).map(|t| g.read.list(t)).collect();
        let mut window = self.windows.take();
        // The window each list is at (an index into its windows).
        let mut at = vec![0usize; lists.len()];
        let mut runs = vec![Run::default(); lists.len()];
        let mut acc = Vec::new();
        // The next window is the least that a list has not added yet.
        while let Some(next) = lists
            .iter()
            .zip(&at)
            .filter_map(|(l, &i)| l.window(i))
            .min()
        {
            let base = window_base(next);
            let mut end = 0;
            for (t, list) in lists.iter().enumerate() {
                runs[t] = if list.window(at[t]) == Some(next) {
                    at[t] += 1;
                    list.run(at[t] - 1)
                } else {
                    Run::default()
                };
                end = end.max(runs[t].end());
            }
            for group in &q.groups {
                sum_group(group, |t| runs[t], &mut window);
            }
            // A node whose sum is below the few-th best less the margin
            // is neither kept nor counted (`admit` would refuse it).
            window.drain(runs.iter().copied(), end, best.wanted(margin), |i, sum| {
                if best.admit(sum) >= -margin {
                    acc.push((base + i as NodeId, sum));
                }
                best.wanted(margin)
            });
        }
        self.windows.give(window);
        g.acc = acc;
        g.floor = best.floor();
    }

    /// `gather`'s reading, in `order`, into `sums` (`scratch` for the
    /// groups of several terms).
    #[allow(clippy::too_many_arguments)]
    fn read_groups(
        &self,
        q: &LexicalQuery,
        k: usize,
        keep: &dyn Fn(NodeId) -> Result<bool, StoreError>,
        costs: Costs,
        order: &[usize],
        g: &mut Gathered,
        sums: &mut NodeSums,
        scratch: &mut [NodeSums; 2],
    ) -> Result<(), StoreError> {
        let weight = |i: usize| q.groups[i].weight;
        // The lists read leave out what nodes are (implied terms, never
        // read): as much as that can add to a node is always still to come.
        let implied = implied_most(q);
        g.rest = implied;
        // The best partial sum so far, and the k-th (among nodes `keep`
        // accepts) when last sought.
        let mut best = 0.0f32;
        let mut bar: Option<f32> = None;
        for (n, &i) in order.iter().enumerate() {
            let left: f32 = order[n..].iter().map(|&j| weight(j)).sum::<f32>() + implied;
            // The k-th partial sum is at most the best: what can be
            // left out is not sought (a selection over every node met)
            // before the best alone beats what is left.
            if n > 0 && sums.count_met() >= k && left * (1.0 + 1e-4) + 1e-6 < best {
                // Sums only grow: a k-th sum found before is still at
                // most the k-th, and is sought again only while it does
                // not beat what is left.
                if bar.is_none_or(|b| left * (1.0 + 1e-4) + 1e-6 >= b) {
                    bar = kth_kept(sums.values(), sums.count_met(), k, &mut g.kept, keep)?;
                }
                // A margin for the rounding of sums in another order.
                if let Some(b) = bar.filter(|&b| left * (1.0 + 1e-4) + 1e-6 < b) {
                    // No node not met yet can enter the top. Both ways on
                    // give the same answer: scoring the candidates met so
                    // far (each term not read looked up for each) or
                    // reading the lists left first, which leaves fewer
                    // candidates; the cheaper is taken.
                    let unread: Vec<usize> =
                        (0..q.terms.len()).filter(|&t| !g.read.is_read(t)).collect();
                    let postings: u64 = unread.iter().map(|&t| q.dfs[t]).sum();
                    let candidates = sums.values().filter(|a| a.1 >= b - left).count() as u64;
                    let scoring = candidates
                        .saturating_mul(unread.len() as u64)
                        .saturating_mul(costs.lookup);
                    if postings > scoring {
                        g.rest = left;
                        return Ok(());
                    }
                }
            }
            let group = &q.groups[i];
            if group.common {
                // A word most nodes hold (a word of every description)
                // adds little to any score, and its lists are most of the
                // index: it only makes up the candidates the rarer words
                // left short, in node order, and every candidate is then
                // scored exactly.
                let ids = self.common_candidates(q, group, &sums.pairs(), k)?;
                for id in ids {
                    sums.add(id, 0.0);
                }
                g.rest = left.max(f32::MIN_POSITIVE);
                return Ok(());
            }
            best = best.max(self.add_group(q, group, &mut g.read, sums, scratch)?);
        }
        Ok(())
    }

    /// The top when every list was read: the partial sums are the scores
    /// (up to the rounding of another order); the best `k` are scored in
    /// the order `score` uses.
    fn best_read(
        &self,
        q: &LexicalQuery,
        k: usize,
        keep: &dyn Fn(NodeId) -> Result<bool, StoreError>,
        g: &mut Gathered,
        bar: Option<f32>,
    ) -> Result<Vec<(f32, NodeId)>, StoreError> {
        let mut best: Vec<(f32, NodeId)> = std::mem::take(&mut g.acc)
            .into_iter()
            .filter(|&(_, s)| s > 0.0 && bar.is_none_or(|b| s >= b))
            .map(|(id, s)| (s, id))
            .collect();
        best.sort_unstable_by(by_score);
        let mut hits = Vec::new();
        let mut probes = Probes::new(q);
        for (_, id) in best {
            if hits.len() == k {
                break;
            }
            let ok = accepts(&mut g.kept, keep, id)?;
            if ok {
                hits.push((self.score_read(q, id, &g.read, &mut probes)?, id));
            }
        }
        Ok(hits)
    }

    /// The top when some lists were not read: every node that could still
    /// be in it, scored exactly, best partial sum first, until no partial
    /// sum left can reach the k-th exact score found (a node's score is at
    /// most its partial sum plus what the lists not read could add).
    fn best_candidates(
        &self,
        q: &LexicalQuery,
        k: usize,
        keep: &dyn Fn(NodeId) -> Result<bool, StoreError>,
        g: &mut Gathered,
        bar: Option<f32>,
        costs: Costs,
    ) -> Result<Vec<(f32, NodeId)>, StoreError> {
        let rest = g.rest;
        let slack = |partial: f32| partial + rest * (1.0 + 1e-4) + 1e-4 * q.total;
        let bar = bar.map_or(f32::MIN, |b| b - rest * (1.0 + 1e-4) - 1e-4 * q.total);
        let mut candidates: Vec<(f32, NodeId)> = g
            .acc
            .iter()
            .filter(|&&(_, partial)| partial >= bar)
            .map(|&(id, partial)| (partial, id))
            .collect();
        candidates.sort_unstable_by(by_score);
        // Where groups were left unread (`heavy_groups`), their lists are
        // looked up for every candidate at once, in node order: a block
        // decoded for all of its candidates, none for the blocks between.
        let mut looked_up = Probed::none();
        if g.unread && candidates.len() > 1 {
            let mut ids: Vec<NodeId> = candidates.iter().map(|c| c.1).collect();
            ids.sort_unstable();
            looked_up = Probed::of(ids, q.terms.len());
            let ids = &looked_up.ids;
            let mut found = Vec::new();
            for t in 0..q.terms.len() {
                if g.read.is_read(t) || q.terms[t].starts_with(IMPLIED) {
                    continue;
                }
                let mut parts = vec![0.0f32; ids.len()];
                posting_blocks::lookup_sorted(
                    &self.map,
                    &term_key(&q.terms[t]),
                    ids,
                    &mut |at, count, len| {
                        parts[at] = q.part(u64::from(count), u64::from(len));
                    },
                )?;
                found.push((t, parts));
            }
            for (t, parts) in found {
                looked_up.parts[t] = Some(parts);
            }
        }
        // The best k exact scores so far (as sums), least on top.
        let mut best: BinaryHeap<Reverse<u32>> = BinaryHeap::with_capacity(k + 1);
        // Once a term not read has been looked up for as many candidates
        // as reading its list would cost, the list is read: at most twice
        // the cheaper of the two, however many candidates it turns out to
        // take.
        let mut probed = vec![0u64; q.terms.len()];
        let mut probes = Probes::new(q);
        let mut hits = Vec::new();
        for (partial, id) in candidates {
            if best.len() == k
                && best
                    .peek()
                    .is_some_and(|w| slack(partial) < f32::from_bits(w.0))
            {
                break;
            }
            let ok = accepts(&mut g.kept, keep, id)?;
            if !ok {
                continue;
            }
            for (t, probed) in probed.iter_mut().enumerate() {
                if !g.read.is_read(t) && !looked_up.has(t) {
                    *probed += 1;
                    if probed.saturating_mul(costs.probe) >= q.dfs[t] {
                        g.read.set(t, self.read_parts(q, t)?);
                    }
                }
            }
            let s = self.score_looked_up(q, id, &g.read, &looked_up, &mut probes)?;
            hits.push((s, id));
            // Scores are in 0..1, so their bits order as they do.
            best.push(Reverse((s * q.total).to_bits()));
            if best.len() > k {
                best.pop();
            }
        }
        Ok(hits)
    }
}

/// Terms' parts looked up for a set of nodes at once
/// (`posting_blocks::lookup_sorted`): the nodes, ascending, and by term
/// each one's part (0 where the list does not hold it).
struct Probed {
    ids: Vec<NodeId>,
    parts: Vec<Option<Vec<f32>>>,
}

impl Probed {
    /// Nothing looked up.
    fn none() -> Probed {
        Probed {
            ids: Vec::new(),
            parts: Vec::new(),
        }
    }

    /// Nodes `ids` (ascending), no term looked up yet.
    fn of(ids: Vec<NodeId>, terms: usize) -> Probed {
        Probed {
            ids,
            parts: vec![None; terms],
        }
    }

    fn has(&self, t: usize) -> bool {
        matches!(self.parts.get(t), Some(Some(_)))
    }

    /// Term `t`'s part in node `id`, if `id` was among the nodes looked up.
    fn get(&self, t: usize, id: NodeId) -> Option<f32> {
        let parts = self.parts.get(t)?.as_ref()?;
        self.ids.binary_search(&id).ok().map(|i| parts[i])
    }
}

/// What `LexicalIndex::top` has gathered from the posting lists.
struct Gathered {
    /// Partial sums by node, in no order.
    acc: Vec<(NodeId, f32)>,
    /// The parts of the terms whose lists were read, for scoring the
    /// candidates exactly without looking those terms up again.
    read: ReadLists,
    /// Whether `keep` accepts a node, for the nodes asked.
    kept: BTreeMap<NodeId, bool>,
    /// What the lists not read (and what nodes are) could still add to a
    /// node's sum; 0 when nothing is left.
    rest: f32,
    /// Nodes whose sum was below this (less the margin the top needs) may
    /// be left out of `acc` (`gather_whole`); 0 where none were.
    floor: f32,
    /// Whether groups were left unread (`heavy_groups`): their lists are
    /// looked up for the candidates at once.
    unread: bool,
}

impl Gathered {
    /// Nothing gathered yet for `q`.
    fn new(q: &LexicalQuery, lists: &ListPool) -> Gathered {
        Gathered {
            acc: Vec::new(),
            read: ReadLists::new(q.terms.len(), lists),
            kept: BTreeMap::new(),
            rest: 0.0,
            floor: 0.0,
            unread: false,
        }
    }
}

/// What `LexicalIndex::top`'s ways of scoring cost, in postings read in a
/// row.
#[derive(Clone, Copy, Debug)]
struct Costs {
    /// Looking a term up in one node (a walk down the map).
    probe: u64,
    /// Scoring one candidate, for each term not read (a look-up, or a
    /// binary search once the list is read).
    lookup: u64,
    /// Whether every list is read whole and added a window of nodes at a
    /// time (`gather_whole`) where no word is common, rather than read
    /// list by list until no node not met can enter the top (`gather`).
    whole: bool,
    /// The share of the query's weight whose lists `gather_whole` leaves
    /// unread (`heavy_groups`), the candidates then scored exactly.
    unread_share: f32,
}

impl Costs {
    /// Measured with `arbores-ann-bench lexical_only=2` (docs/PERFORMANCE.md;
    /// `lookup` was 4 before the lookups kept their blocks: the candidates
    /// counted are fewer than those then scored, and reading on is the
    /// steadier way).
    const MEASURED: Costs = Costs {
        probe: 16,
        lookup: 16,
        whole: true,
        unread_share: 0.1,
    };
}

/// The groups of `q` that cost the most to read for what they weigh, as
/// many as weigh at most `share` of its weight (with what nodes are,
/// which no list read gives). A top's k-th partial sum is most often well
/// above what they could add, and they are the long lists of the words
/// many nodes hold: a node they alone could lift is no candidate, and the
/// candidates are scored exactly from them.
fn heavy_groups(q: &LexicalQuery, share: f32) -> Vec<usize> {
    let budget = share * q.total - implied_most(q);
    let cost =
        |i: usize| q.postings(&q.groups[i]) as f32 / q.groups[i].weight.max(f32::MIN_POSITIVE);
    let mut order: Vec<usize> = (0..q.groups.len()).collect();
    order.sort_by(|&a, &b| cost(b).total_cmp(&cost(a)).then(a.cmp(&b)));
    let mut out = Vec::new();
    let mut weight = 0.0;
    for i in order {
        weight += q.groups[i].weight;
        if weight > budget {
            break;
        }
        out.push(i);
    }
    out
}

/// Builds a `LexicalQuery`: its groups, and the document frequency of
/// every term met (each read once).
struct QueryBuilder<'a> {
    index: &'a LexicalIndex,
    docs: u64,
    dfs: BTreeMap<Box<str>, u64>,
    /// (weight, common, alternatives as (factor, [(term, idf)]), whether
    /// it is a word of the query rather than the pair across two words).
    groups: Vec<(f32, bool, Vec<(f32, Vec<(Box<str>, f32)>)>, bool)>,
    /// The weight of the words no node holds, and how many they are.
    unknown: f32,
    unknown_words: usize,
    /// `QueryWords::implied`.
    implied: f32,
    scratch: Scratch,
}

impl QueryBuilder<'_> {
    fn df(&mut self, term: &str) -> Result<u64, StoreError> {
        if term.len() > MAX_TERM {
            return Ok(0);
        }
        if let Some(&df) = self.dfs.get(term) {
            return Ok(df);
        }
        let df = self.index.df(term)?;
        self.dfs.insert(term.into(), df);
        Ok(df)
    }

    /// The terms of `text` some node holds, with their idf.
    fn known_terms(&mut self, text: &str) -> Result<Vec<(Box<str>, f32)>, StoreError> {
        let mut terms: Vec<String> = Vec::new();
        let mut scratch = std::mem::take(&mut self.scratch);
        pieces(text, &mut scratch, &mut |p| {
            for_each_term(p, false, &mut |t| {
                if !terms.iter().any(|x| x == t) {
                    terms.push(t.to_string());
                }
            })
        });
        self.scratch = scratch;
        self.known(&terms)
    }

    fn known(&mut self, terms: &[String]) -> Result<Vec<(Box<str>, f32)>, StoreError> {
        let mut out = Vec::new();
        for t in terms {
            let df = self.df(t)?;
            if df > 0 {
                out.push((Box::from(t.as_str()), LexicalIndex::idf(self.docs, df)));
            }
        }
        Ok(out)
    }

    /// Adds one word: its own terms (all counting) and its alternatives.
    /// Whether some node holds one of its forms.
    fn word(
        &mut self,
        own: &[String],
        alternatives: Vec<(String, f32)>,
    ) -> Result<bool, StoreError> {
        self.group(own, alternatives, true)
    }

    /// `word`, for a word of the query (`concept`) or the pair across two
    /// words.
    fn group(
        &mut self,
        own: &[String],
        alternatives: Vec<(String, f32)>,
        concept: bool,
    ) -> Result<bool, StoreError> {
        let mut alts: Vec<(f32, Vec<(Box<str>, f32)>)> = Vec::new();
        // What a node may be rather than say: the implied form of each
        // one-word form (own or alternative), best factor kept.
        let mut implied: Vec<(f32, String)> = Vec::new();
        let mut imply = |phrase: &str, factor: f32| {
            if self.implied <= 0.0 || phrase.contains(' ') || !phrase.is_ascii() {
                return;
            }
            let word = stem(phrase);
            if !IMPLIED_VOCABULARY.contains(&word) {
                return;
            }
            let term = format!("{IMPLIED}{word}");
            let factor = factor * self.implied.min(1.0);
            match implied.iter_mut().find(|i| i.1 == term) {
                Some(i) => i.0 = i.0.max(factor),
                None => implied.push((factor, term)),
            }
        };
        for t in own {
            imply(t, 1.0);
        }
        for (phrase, factor) in &alternatives {
            imply(phrase, factor.clamp(0.0, 1.0));
        }
        let own = self.known(own)?;
        if !own.is_empty() {
            alts.push((1.0, own));
        }
        for (phrase, factor) in alternatives {
            let factor = factor.clamp(0.0, 1.0);
            if factor <= 0.0 {
                continue;
            }
            let terms = self.known_terms(&phrase)?;
            if !terms.is_empty() {
                alts.push((factor, terms));
            }
        }
        let mut implied_alts: Vec<(f32, Vec<(Box<str>, f32)>)> = Vec::new();
        for (factor, term) in implied {
            if factor > 0.0 {
                let terms = self.known(&[term])?;
                if !terms.is_empty() {
                    implied_alts.push((factor, terms));
                }
            }
        }
        if alts.is_empty() && implied_alts.is_empty() {
            return Ok(false);
        }
        // The word's weight is the idf of how many nodes hold one of its
        // forms: the sum of each form's document frequency (a phrase's is
        // at most its rarest word's), as if no node held two forms: a word
        // is as rare as the nodes that say it in either language.
        let mut df: u64 = 0;
        for (_, terms) in &alts {
            let least = terms
                .iter()
                .map(|t| self.dfs.get(&t.0).copied().unwrap_or(0))
                .min()
                .unwrap_or(0);
            df = df.saturating_add(least);
        }
        let weight = LexicalIndex::idf(self.docs, df.min(self.docs));
        let mut common = false;
        for a in &alts {
            for (t, _) in &a.1 {
                let df = self.dfs.get(t).copied().unwrap_or(0);
                common |= df.saturating_mul(2) > self.docs;
            }
        }
        // What nodes are counts towards neither: it is not what the word
        // is rare or common by.
        alts.extend(implied_alts);
        self.groups.push((weight, common, alts, concept));
        Ok(true)
    }

    /// Adds a CJK run: cut into words by `words` (each word a group, and
    /// the pairs across two words each a group of its own), or, without a
    /// cut, each pair a group and the run's translations each one more,
    /// weighted by their factor.
    fn cjk(&mut self, run: &[char], words: &dyn QueryWords) -> Result<(), StoreError> {
        let text: String = run.iter().collect();
        let terms_of = |chars: &[char]| {
            let mut out: Vec<String> = Vec::new();
            for_each_term(Piece::Cjk(chars), false, &mut |t| out.push(t.to_string()));
            out
        };
        match words.cut(run) {
            Some(lengths) if lengths.iter().sum::<usize>() == run.len() => {
                let mut at = 0;
                for (i, &len) in lengths.iter().enumerate() {
                    let word = &run[at..at + len];
                    let w: String = word.iter().collect();
                    self.word(&terms_of(word), words.alternatives(&w))?;
                    if i + 1 < lengths.len() {
                        // The pair across two words: found where the
                        // words stand together as in the query.
                        let pair = terms_of(&run[at + len - 1..at + len + 1]);
                        self.group(&pair, Vec::new(), false)?;
                    }
                    at += len;
                }
            }
            _ => {
                for pair in terms_of(run) {
                    self.word(&[pair], Vec::new())?;
                }
                for (phrase, factor) in words.alternatives(&text) {
                    let terms = self.known_terms(&phrase)?;
                    let factor = factor.clamp(0.0, 1.0);
                    for (t, idf) in terms {
                        if factor > 0.0 {
                            let df = self.dfs.get(&t).copied().unwrap_or(0);
                            let common = df.saturating_mul(2) > self.docs;
                            self.groups.push((
                                idf * factor,
                                common,
                                vec![(1.0, vec![(t, 1.0)])],
                                true,
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The query, each word weighing `1 − coverage` of its idf share
    /// and `coverage` of an equal share (`coverage` 0: idf alone).
    fn finish(self, average: f32, coverage: f32) -> LexicalQuery {
        // A word asked twice (the same forms) counts once, with its
        // largest weight.
        let mut groups: Vec<(f32, bool, Vec<(f32, Vec<(Box<str>, f32)>)>, bool)> = Vec::new();
        for g in self.groups {
            match groups.iter_mut().find(|h| h.2 == g.2) {
                Some(h) => {
                    h.0 = h.0.max(g.0);
                    h.3 |= g.3;
                }
                None => groups.push(g),
            }
        }
        // Coverage: a node that holds more of the query's words (each in
        // any of its forms) comes first, however common the words it
        // holds; idf still orders nodes holding as many. The pairs across
        // two words take part only in the idf share.
        let mut unknown = self.unknown;
        let words = groups.iter().filter(|g| g.3).count() + self.unknown_words;
        let idf_total = groups.iter().map(|g| g.0).sum::<f32>() + unknown;
        let coverage = if coverage.is_finite() {
            coverage.clamp(0.0, 1.0)
        } else {
            0.0
        };
        if coverage > 0.0 && words > 0 && idf_total > 0.0 {
            let even = coverage / words as f32;
            for g in &mut groups {
                g.0 = (1.0 - coverage) * g.0 / idf_total + if g.3 { even } else { 0.0 };
            }
            unknown = (1.0 - coverage) * unknown / idf_total + even * self.unknown_words as f32;
        }
        let mut terms: Vec<Box<str>> = groups
            .iter()
            .flat_map(|g| g.2.iter().flat_map(|a| a.1.iter().map(|t| t.0.clone())))
            .collect();
        terms.sort_unstable();
        terms.dedup();
        let number = |t: &str| terms.binary_search_by(|x| (**x).cmp(t)).unwrap_or(0);
        let groups: Vec<Group> = groups
            .iter()
            .map(|(weight, common, alts, _)| {
                let mut alternatives: Vec<Alternative> = Vec::with_capacity(alts.len());
                for (factor, ts) in alts {
                    let sum: f32 = ts.iter().map(|t| t.1).sum::<f32>().max(f32::MIN_POSITIVE);
                    let a = Alternative {
                        implied: ts.iter().all(|t| t.0.starts_with(IMPLIED)),
                        factor: *factor,
                        terms: ts.iter().map(|(t, idf)| (number(t), idf / sum)).collect(),
                    };
                    // The same terms twice (a word and a gloss of it that
                    // says the same, two glosses alike): a node gets the
                    // best alternative, so the one of larger factor alone
                    // gives every node its part, and its lists are added
                    // up once. (The word's weight above counted both.)
                    match alternatives.iter_mut().find(|b| b.terms == a.terms) {
                        Some(b) => b.factor = b.factor.max(a.factor),
                        None => alternatives.push(a),
                    }
                }
                Group {
                    weight: *weight,
                    common: *common,
                    alternatives,
                }
            })
            .collect();
        let total = groups.iter().map(|g| g.weight).sum::<f32>() + unknown;
        let dfs = terms
            .iter()
            .map(|t| self.dfs.get(t).copied().unwrap_or(0))
            .collect();
        LexicalQuery {
            terms,
            dfs,
            groups,
            total,
            norm: (UNITS * K1 * (1.0 - B), K1 * B / average),
        }
    }
}

/// Adds each node's part of group `g` (its weight times its best
/// alternative) into `s`. `list(t)` gives term `t`'s parts by ascending
/// node (its whole list, or its run in the window being added up).
/// Implied terms are left out (see `LexicalIndex::add_group`).
fn sum_group<'l, S: GroupSums>(g: &Group, list: impl Fn(usize) -> S::List<'l>, s: &mut S) {
    let read = || g.alternatives.iter().filter(|a| !a.implied);
    if let [a] = &g.alternatives[..] {
        if a.implied {
            return;
        }
        if let [(t, share)] = a.terms[..] {
            return s.add(list(t), g.weight * a.factor * share);
        }
    }
    for a in read() {
        let w = g.weight * a.factor;
        if let [(t, share)] = a.terms[..] {
            s.raise(list(t), w * share);
            continue;
        }
        for &(t, share) in &a.terms {
            s.add_to_alternative(list(t), share);
        }
        s.raise_to_alternative(a.terms.iter().map(|&(t, _)| list(t)), w);
    }
    s.add_best(read().flat_map(|a| a.terms.iter().map(|&(t, _)| list(t))));
}

/// Where `sum_group` adds a group's parts up: the sums of every node met
/// (`NodeGroupSums`, from whole lists) or of a window's (`WindowSums`,
/// from each list's run in the window).
trait GroupSums {
    /// What a term's postings are given as.
    type List<'l>: Copy;
    /// `w` times each part of `list` added to its node's sum.
    fn add(&mut self, list: Self::List<'_>, w: f32);
    /// Each node's best alternative raised to `w` times its part.
    fn raise(&mut self, list: Self::List<'_>, w: f32);
    /// `share` times each part added to the node's sum of an alternative.
    fn add_to_alternative(&mut self, list: Self::List<'_>, share: f32);
    /// Each node's best alternative raised to `w` times its sum of the
    /// alternative, which is reset; `lists` are the alternative's.
    fn raise_to_alternative<'l>(&mut self, lists: impl Iterator<Item = Self::List<'l>>, w: f32);
    /// Each node's best alternative added to its sum and reset; `lists`
    /// are the group's.
    fn add_best<'l>(&mut self, lists: impl Iterator<Item = Self::List<'l>>);
}

/// The sums of every node met, two more for a group's best alternative
/// and an alternative's sum, and the largest sum a group left.
struct NodeGroupSums<'a> {
    sums: &'a mut NodeSums,
    best: &'a mut NodeSums,
    alternative: &'a mut NodeSums,
    most: f32,
}

impl GroupSums for NodeGroupSums<'_> {
    type List<'l> = &'l Parts;

    fn add(&mut self, list: &Parts, w: f32) {
        self.most = self.sums.add_list(list.iter(), w);
    }

    fn raise(&mut self, list: &Parts, w: f32) {
        self.best.raise_list(list.iter(), w);
    }

    fn add_to_alternative(&mut self, list: &Parts, share: f32) {
        self.alternative.add_list(list.iter(), share);
    }

    fn raise_to_alternative<'l>(&mut self, _: impl Iterator<Item = &'l Parts>, w: f32) {
        self.best.raise_drained(self.alternative, w);
    }

    fn add_best<'l>(&mut self, _: impl Iterator<Item = &'l Parts>) {
        self.most = self.sums.add_drained(self.best, 1.0);
    }
}

impl GroupSums for WindowSums {
    type List<'l> = Run<'l>;

    fn add(&mut self, list: Run<'_>, w: f32) {
        WindowSums::add(self, list, w);
    }

    fn raise(&mut self, list: Run<'_>, w: f32) {
        WindowSums::raise(self, list, w);
    }

    fn add_to_alternative(&mut self, list: Run<'_>, share: f32) {
        WindowSums::add_to_alternative(self, list, share);
    }

    fn raise_to_alternative<'l>(&mut self, lists: impl Iterator<Item = Run<'l>>, w: f32) {
        for list in lists {
            WindowSums::raise_to_alternative(self, list, w);
        }
    }

    fn add_best<'l>(&mut self, lists: impl Iterator<Item = Run<'l>>) {
        for list in lists {
            WindowSums::add_best(self, list);
        }
    }
}

/// The best `few` partial sums met so far (none with `few` 0), the least
/// on top (sums are not negative, so their bits order as they do).
struct BestSums {
    few: usize,
    heap: BinaryHeap<Reverse<u32>>,
}

impl BestSums {
    fn new(few: usize) -> BestSums {
        BestSums {
            few,
            heap: BinaryHeap::with_capacity(few.saturating_add(1).min(1 << 16)),
        }
    }

    /// The few-th best sum so far, 0 until there are `few`.
    fn floor(&self) -> f32 {
        match self.heap.peek() {
            Some(least) if self.heap.len() == self.few => f32::from_bits(least.0),
            _ => 0.0,
        }
    }

    /// The least sum `admit` does not refuse with this margin: any while
    /// there are fewer than `few`.
    fn wanted(&self, margin: f32) -> f32 {
        if self.few > 0 && self.heap.len() == self.few {
            // Rounded down a little: a sum this tells `drain` to leave out
            // must be one `admit` refuses, whatever the rounding.
            let bar = self.floor() - margin;
            bar - 4.0 * f32::EPSILON * (self.floor() + margin)
        } else {
            f32::NEG_INFINITY
        }
    }

    /// Counts `sum` in; how far it is above the few-th best so far
    /// (itself counted), or `f32::INFINITY` while there are fewer.
    #[inline]
    fn admit(&mut self, sum: f32) -> f32 {
        if self.few == 0 {
            return f32::INFINITY;
        }
        let bits = sum.max(0.0).to_bits();
        if self.heap.len() < self.few {
            self.heap.push(Reverse(bits));
            return f32::INFINITY;
        }
        let least = self.heap.peek().map_or(0, |l| l.0);
        if bits > least {
            if let Some(mut top) = self.heap.peek_mut() {
                *top = Reverse(bits);
            }
        }
        sum - self.floor()
    }
}

/// Best score first, then ascending id.
fn by_score(a: &(f32, NodeId), b: &(f32, NodeId)) -> std::cmp::Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
}

/// The `k`-th best partial score among nodes `keep` accepts (asked at
/// most once per node), or `None` if fewer than `k` are accepted.
/// `acc` gives the (node, partial sum) of the `len` nodes met.
fn kth_kept(
    acc: impl Iterator<Item = (NodeId, f32)> + Clone,
    len: usize,
    k: usize,
    kept: &mut BTreeMap<NodeId, bool>,
    keep: &dyn Fn(NodeId) -> Result<bool, StoreError>,
) -> Result<Option<f32>, StoreError> {
    if k == 0 || len < k {
        return Ok(None);
    }
    // The best few first; all of them only if too few of those are kept.
    let few = (2 * k).min(len);
    // The few-th best partial sum, by a heap of the best few (sums are
    // not negative, so their bits order as they do): no copy of every
    // node met is sorted or selected.
    let mut heap: BinaryHeap<Reverse<u32>> = BinaryHeap::with_capacity(few + 1);
    for (_, s) in acc.clone() {
        let bits = s.max(0.0).to_bits();
        if heap.len() < few {
            heap.push(Reverse(bits));
        } else if heap.peek().is_some_and(|least| bits > least.0) {
            heap.pop();
            heap.push(Reverse(bits));
        }
    }
    let floor = heap.peek().map_or(0.0, |least| f32::from_bits(least.0));
    let mut best: Vec<(f32, NodeId)> = acc
        .clone()
        .filter(|a| a.1.max(0.0) >= floor)
        .map(|(id, s)| (s, id))
        .collect();
    best.sort_unstable_by(by_score);
    best.truncate(few);
    if let Some(s) = nth_kept(&best, k, kept, keep)? {
        return Ok(Some(s));
    }
    if few == len {
        return Ok(None);
    }
    let mut all: Vec<(f32, NodeId)> = acc.map(|(id, s)| (s, id)).collect();
    all.sort_unstable_by(by_score);
    nth_kept(&all, k, kept, keep)
}

/// Whether `keep` accepts node `id`, asked once per node (`kept`).
fn accepts(
    kept: &mut BTreeMap<NodeId, bool>,
    keep: &dyn Fn(NodeId) -> Result<bool, StoreError>,
    id: NodeId,
) -> Result<bool, StoreError> {
    if let Some(&ok) = kept.get(&id) {
        return Ok(ok);
    }
    let ok = keep(id)?;
    kept.insert(id, ok);
    Ok(ok)
}

/// The score of the `k`-th node of `best` (best first) that `keep`
/// accepts, if there are `k`.
fn nth_kept(
    best: &[(f32, NodeId)],
    k: usize,
    kept: &mut BTreeMap<NodeId, bool>,
    keep: &dyn Fn(NodeId) -> Result<bool, StoreError>,
) -> Result<Option<f32>, StoreError> {
    let mut found = 0;
    for &(s, id) in best {
        if accepts(kept, keep, id)? {
            found += 1;
            if found == k {
                return Ok(Some(s));
            }
        }
    }
    Ok(None)
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
            self.query(text, &PlainWords).unwrap()
        }
        fn query_t(&self, text: &str, t: &[(String, f32)]) -> LexicalQuery {
            self.query(text, &Same(t.to_vec())).unwrap()
        }
        fn put(&mut self, n: &Node) {
            self.insert(n).unwrap()
        }
        fn del(&mut self, id: NodeId) {
            self.remove(id).unwrap()
        }
        fn top_t(
            &self,
            q: &LexicalQuery,
            k: usize,
            keep: &dyn Fn(NodeId) -> bool,
        ) -> Vec<(f32, NodeId)> {
            self.top(q, k, &|id| Ok(keep(id))).unwrap()
        }
        fn score_t(&self, q: &LexicalQuery, id: NodeId) -> f32 {
            self.score(q, id).unwrap()
        }
        fn entries(&mut self) -> Vec<(Vec<u8>, Vec<u8>)> {
            let map = self.map().unwrap();
            map.iter()
                .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
                .collect()
        }
    }

    /// The same alternatives for every word, and no cut.
    struct Same(Vec<(String, f32)>);

    impl QueryWords for Same {
        fn cut(&self, _: &[char]) -> Option<Vec<usize>> {
            None
        }
        fn alternatives(&self, _: &str) -> Vec<(String, f32)> {
            self.0.clone()
        }
    }

    /// The words of the test lexicon.
    struct Dictionary(crate::repo::index::lexicon::Lexicon);

    impl Dictionary {
        fn new() -> Self {
            let bytes = crate::repo::index::lexicon::tests::small_lexicon();
            Dictionary(crate::repo::index::lexicon::Lexicon::from_bytes(bytes).unwrap())
        }
    }

    impl QueryWords for Dictionary {
        fn cut(&self, run: &[char]) -> Option<Vec<usize>> {
            Some(self.0.cut(run))
        }
        fn alternatives(&self, word: &str) -> Vec<(String, f32)> {
            self.0.glosses(word)
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
        ix.put(&node(
            1,
            "归并排序算法",
            &["merge-sort"],
            "(define (merge-sort l) l)",
        ));
        ix.put(&node(
            2,
            "排序按钮的文字",
            &["sort-button-label"],
            "(define sort-button-label \"按名称排序\")",
        ));
        ix.put(&node(
            3,
            "Parse a JSON document",
            &["parse-json"],
            "(define (parse-json s) s)",
        ));
        ix.put(&node(
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
        assert_eq!(ids(&ix.top_t(&ix.query_plain("排序算法"), 10, &all))[0], 1);
        assert_eq!(
            ids(&ix.top_t(&ix.query_plain("merge-sort"), 10, &all))[0],
            1
        );
        assert_eq!(
            ids(&ix.top_t(&ix.query_plain("button label"), 10, &all)),
            vec![2]
        );
        // A string literal of the code.
        assert_eq!(ids(&ix.top_t(&ix.query_plain("名称"), 10, &all)), vec![2]);
        // One character finds the pairs' characters.
        assert_eq!(ids(&ix.top_t(&ix.query_plain("树"), 10, &all)), vec![4]);
        assert_eq!(
            ids(&ix.top_t(&ix.query_plain("parsing JSON"), 10, &all)),
            vec![3]
        );
        assert!(ix
            .top_t(&ix.query_plain("nothing here"), 10, &all)
            .is_empty());
        assert!(ix.top_t(&ix.query_plain(""), 10, &all).is_empty());
        let only_even = |id: NodeId| id % 2 == 0;
        assert_eq!(
            ids(&ix.top_t(&ix.query_plain("排序"), 10, &only_even)),
            vec![2]
        );
    }

    #[test]
    fn alternatives_of_the_same_terms_are_added_up_once_with_their_largest_factor() {
        let ix = index();
        let glosses = |g: &[(&str, f32)]| -> Vec<(String, f32)> {
            g.iter().map(|&(w, f)| (w.to_string(), f)).collect()
        };
        // "json" glossed as "parse" twice and as itself: the word's own
        // terms (factor 1) and "parse" once, at the larger factor.
        let twice = ix.query_t(
            "json",
            &glosses(&[("parse", 0.3), ("json", 0.5), ("parse", 0.6)]),
        );
        let once = ix.query_t("json", &glosses(&[("parse", 0.6)]));
        let [g] = &twice.groups[..] else {
            panic!("one group: {:?}", twice.groups)
        };
        let factors: Vec<f32> = g.alternatives.iter().map(|a| a.factor).collect();
        assert_eq!(factors, vec![1.0, 0.6]);
        // The same nodes found as by "parse" alone; the top's scores are
        // the exact scores (the weight still counts each gloss).
        for id in 1..=4 {
            assert_eq!(
                ix.score_t(&twice, id) > 0.0,
                ix.score_t(&once, id) > 0.0,
                "node {id}"
            );
        }
        let top = ix.top_t(&twice, 4, &|_| true);
        for (s, id) in &top {
            assert_eq!(*s, ix.score_t(&twice, *id));
        }
        assert_eq!(top.first().map(|h| h.1), Some(3));
    }

    #[test]
    fn scores_are_shares_of_the_query() {
        let ix = index();
        let q = ix.query_plain("parse json");
        let s = ix.score_t(&q, 3);
        assert!(s > 0.9 && s <= 1.0, "{s}");
        // Half the query's words, and one the index has never seen.
        let half = ix.score_t(&ix.query_plain("parse"), 3);
        assert!(half > 0.9, "{half}");
        let unknown = ix.score_t(&ix.query_plain("parse zebra"), 3);
        assert!(unknown < 0.7 && unknown > 0.2, "{unknown}");
        assert_eq!(ix.score_t(&q, 1), 0.0);
        assert_eq!(ix.score_t(&q, 99), 0.0);
        let top = ix.top_t(&q, 1, &|_| true);
        assert_eq!(top, vec![(s, 3)]);
    }

    #[test]
    fn translations_count_as_much_as_they_are_similar() {
        let ix = index();
        let t = vec![("json".to_string(), 0.5)];
        let plain = ix.query_t("解析", &[]);
        let translated = ix.query_t("解析", &t);
        assert_eq!(ix.score_t(&plain, 3), 0.0);
        assert!(ix.score_t(&translated, 3) > 0.0);
        // Beside a word of the query that matches, a translation counts as
        // much as it is similar.
        let both = ix.query_t("parse 解析", &t);
        let only_parse = ix.query_t("parse", &[]);
        let s = ix.score_t(&both, 3);
        assert!(s > ix.score_t(&only_parse, 3) * 0.5 && s <= 1.0, "{s}");
        // An unknown translation does not count against anything.
        let t = vec![("zebra".to_string(), 0.9)];
        assert_eq!(
            ix.query_t("parse", &t).total,
            ix.query_t("parse", &[]).total
        );
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
                    ix.del(i);
                } else {
                    ix.put(&node(i, &desc(i + round), &["x"], ""));
                }
            }
        }
        let mut fresh = LexicalIndex::new(FieldWeights::default());
        for i in 0..1500u64 {
            if (i + 3) % 3 != 0 {
                fresh.put(&node(i, &desc(i + 3), &["x"], ""));
            }
        }
        assert_eq!(ix.len().unwrap(), fresh.len().unwrap());
        // The same map as a fresh index's, whatever the order of changes.
        assert_eq!(ix.entries(), fresh.entries());
        for text in ["sorting trees", "排序", "node 3", "树"] {
            let (a, b) = (ix.query_plain(text), fresh.query_plain(text));
            assert_eq!(
                ix.top_t(&a, 20, &|_| true),
                fresh.top_t(&b, 20, &|_| true),
                "{text}"
            );
        }
    }

    #[test]
    fn a_word_counts_once_whatever_its_language() {
        let mut ix = LexicalIndex::new(FieldWeights::default());
        ix.put(&node(
            1,
            "Sort a list by inserting each item",
            &["insertion-sort"],
            "",
        ));
        ix.put(&node(2, "插入排序", &["insertion-sort"], ""));
        ix.put(&node(3, "Pile of plates", &["plates"], ""));
        ix.put(&node(4, "Compound interest over years", &["compound"], ""));
        ix.put(&node(5, "Interest rates", &["rates"], ""));
        ix.put(&node(6, "插入排序", &["zz"], ""));
        let words = Dictionary::new();
        let q = ix.query("插入排序", &words).unwrap();
        // Without the dictionary the English node shares nothing.
        assert_eq!(ix.score_t(&ix.query_plain("插入排序"), 1), 0.0);
        let (en, zh) = (ix.score_t(&q, 1), ix.score_t(&q, 2));
        assert!(en > 0.4 && zh > 0.8 && zh <= 1.0, "{en} {zh}");
        // The node that says it in both languages (its names are English)
        // does not count it twice: it scores no more than the same
        // Chinese with a name that means nothing.
        let alone = ix.score_t(&q, 6);
        assert!(zh <= alone + 1e-3, "{zh} {alone}");
        let all = |_: NodeId| true;
        assert_eq!(ids(&ix.top_t(&q, 3, &all)), vec![6, 2, 1]);
        // A gloss of several words counts by their share: both words beat
        // one of them.
        let q = ix.query("复利", &words).unwrap();
        assert_eq!(ids(&ix.top_t(&q, 10, &all)), vec![4, 5]);
        assert!(ix.score_t(&q, 5) < ix.score_t(&q, 4));
        // A later sense counts less than the first (heap 0.8 after pile).
        let q = ix.query("堆", &words).unwrap();
        assert_eq!(ids(&ix.top_t(&q, 10, &all)), vec![3]);
    }

    /// The test lexicon's words, with what nodes are and coverage.
    struct Weighted {
        dictionary: Dictionary,
        implied: f32,
        coverage: f32,
    }

    impl QueryWords for Weighted {
        fn cut(&self, run: &[char]) -> Option<Vec<usize>> {
            self.dictionary.cut(run)
        }
        fn alternatives(&self, word: &str) -> Vec<(String, f32)> {
            self.dictionary.alternatives(word)
        }
        fn implied(&self) -> f32 {
            self.implied
        }
        fn coverage(&self) -> f32 {
            self.coverage
        }
    }

    #[test]
    fn what_a_node_is_counts_without_making_the_word_common() {
        let mut ix = LexicalIndex::new(FieldWeights::default());
        let looping = "(define (merge-sort l) (if (null? l) l (merge-sort (cdr l))))";
        ix.put(&node(1, "归并排序", &["merge-sort"], looping));
        ix.put(&node(2, "Insertion sort", &["insertion-sort"], looping));
        ix.put(&node(
            3,
            "排序按钮的文字",
            &["sort-button-label"],
            "(define label \"排序\")",
        ));
        ix.put(&node(
            4,
            "按名称排序",
            &["sort-by-name"],
            "(define (f l) (sort l <))",
        ));
        let walk = "(define (dijkstra g) (let loop ((d '())) (if (done? d) d (loop (relax g d)))))";
        ix.put(&node(5, "Dijkstra 算法：最短路径", &["dijkstra"], walk));
        ix.put(&node(
            6,
            "Arithmetic mean",
            &["mean"],
            "(define (mean l) (/ (apply + l) (length l)))",
        ));
        // Nodes about other things, so that sorting is a topic of a few.
        for id in 7..20 {
            let desc = format!("other things number {id}");
            ix.put(&node(id, &desc, &["other"], "(define (other x) x)"));
        }
        let plain = Weighted {
            dictionary: Dictionary::new(),
            implied: 0.0,
            coverage: 0.0,
        };
        let both = Weighted {
            dictionary: Dictionary::new(),
            implied: 0.7,
            coverage: 0.5,
        };
        let q0 = ix.query("排序算法", &both.dictionary).unwrap();
        let q = ix.query("排序算法", &both).unwrap();
        // The looping procedures that sort come first; the node saying
        // 算法 no longer outweighs them, nor does a sort button's label
        // or a procedure that only calls `sort`.
        let before = ids(&ix.top_t(&q0, 6, &|_| true));
        assert_eq!(before[0], 5, "{before:?}");
        let mut after = ids(&ix.top_t(&q, 6, &|_| true));
        after[..2].sort_unstable();
        assert_eq!(&after[..2], &[1, 2], "{after:?}");
        assert!(ix.score_t(&q, 2) > ix.score_t(&q, 3));
        assert!(ix.score_t(&q, 2) > ix.score_t(&q, 4));
        assert!(ix.score_t(&q, 2) > ix.score_t(&q, 5));
        // Being an algorithm counts less than saying it, and the word is as
        // rare as the nodes that say it: the same weight with or without.
        let dijkstra = ix.query("算法", &both).unwrap();
        assert!(ix.score_t(&dijkstra, 5) > 0.0);
        assert_eq!(ix.score_t(&dijkstra, 3), 0.0);
        // What a node is counts only beside a word it says.
        assert_eq!(ix.score_t(&dijkstra, 1), 0.0);
        let both_words = ix.query("排序算法", &both).unwrap();
        let sort_only = ix.query("排序", &both).unwrap();
        assert!(ix.score_t(&both_words, 1) > 0.0 && ix.score_t(&sort_only, 1) > 0.0);
        let w0 = ix.query("算法", &both.dictionary).unwrap().groups[0].weight;
        let implied_only = Weighted {
            dictionary: Dictionary::new(),
            implied: 0.7,
            coverage: 0.0,
        };
        let w = ix.query("算法", &implied_only).unwrap().groups[0].weight;
        assert_eq!(w, w0);
        // The implied part comes in when a candidate is scored: `top`
        // agrees with scoring every node that says a query word.
        for text in ["排序算法", "sort algorithm", "algorithm", "mean 算法"] {
            for words in [&both as &dyn QueryWords, &plain] {
                let q = ix.query(text, words).unwrap();
                let says = ix.query(text, &plain).unwrap();
                let mut all: Vec<(f32, NodeId)> = (1..20)
                    .filter(|&id| ix.score_t(&says, id) > 0.0)
                    .map(|id| (ix.score_t(&q, id), id))
                    .collect();
                all.sort_by(by_score);
                for k in [1, 3, 6] {
                    let top = ix.top_t(&q, k, &|_| true);
                    let n = k.min(all.len());
                    assert_eq!(top.len(), n, "{text} {k}");
                    for (x, y) in top.iter().zip(&all[..n]) {
                        assert!((x.0 - y.0).abs() < 1e-5, "{text} {k}: {top:?} {all:?}");
                    }
                }
            }
        }
    }

    /// An index of `ids.len()` nodes (the i-th with id `ids[i]`) of a few
    /// words in either language, and queries over them.
    fn agreeing(ids: &[NodeId]) {
        let mut ix = LexicalIndex::new(FieldWeights::default());
        let words = [
            "sort", "insert", "tree", "pile", "heap", "compound", "interest", "list",
        ];
        let han = ["排序", "插入", "二叉树", "堆", "复利", "列表"];
        for (i, &id) in ids.iter().enumerate() {
            let i = i as u64;
            let a = words[(i % 8) as usize];
            let b = words[((i / 8) % 8) as usize];
            let c = han[((i / 3) % 6) as usize];
            let desc = if i % 3 == 0 {
                format!("{a} {b} {a}")
            } else {
                format!("{c}{}", han[(i % 6) as usize])
            };
            ix.put(&node(id, &desc, &[b], ""));
        }
        let dictionary = Dictionary::new();
        for text in [
            "插入排序",
            "堆 tree",
            "复利 list",
            "二叉树排序算法",
            "sort",
            "排序",
        ] {
            for words in [&dictionary as &dyn QueryWords, &PlainWords] {
                let q = ix.query(text, words).unwrap();
                let mut all: Vec<(f32, NodeId)> = ids
                    .iter()
                    .map(|&id| (ix.score_t(&q, id), id))
                    .filter(|h| h.0 > 0.0)
                    .collect();
                all.sort_by(by_score);
                // Whatever the costs make it read: every list whole, a
                // window of nodes at a time; or list by list, then
                // candidates scored by looking every term up, or by
                // reading the lists first looked up, or no candidates
                // (every list read).
                let ways = [
                    Costs::MEASURED,
                    Costs {
                        unread_share: 0.0,
                        ..Costs::MEASURED
                    },
                    // As much left unread as could be: the bar is seldom
                    // above it, and the lists are read after all.
                    Costs {
                        unread_share: 1.0,
                        ..Costs::MEASURED
                    },
                    // Left unread and the candidates looked up, or the
                    // lists read on the first look-up.
                    Costs {
                        probe: 0,
                        unread_share: 0.5,
                        ..Costs::MEASURED
                    },
                    Costs {
                        probe: u64::MAX,
                        unread_share: 0.5,
                        ..Costs::MEASURED
                    },
                    Costs {
                        whole: false,
                        ..Costs::MEASURED
                    },
                    Costs {
                        probe: 0,
                        lookup: 0,
                        whole: false,
                        unread_share: 0.0,
                    },
                    Costs {
                        probe: u64::MAX,
                        lookup: 0,
                        whole: false,
                        unread_share: 0.0,
                    },
                    Costs {
                        probe: 0,
                        lookup: u64::MAX,
                        whole: false,
                        unread_share: 0.0,
                    },
                ];
                // Every node kept, most, or few (so that the best nodes
                // met are mostly turned down).
                let keeps: [(&str, &dyn Fn(NodeId) -> bool); 3] = [
                    ("all", &|_| true),
                    ("most", &|id| id % 3 != 1),
                    ("few", &|id| id % 17 == 5),
                ];
                for (k, costs) in [1, 5, 20].into_iter().flat_map(|k| ways.map(|c| (k, c))) {
                    for (name, keep) in keeps {
                        let (top, read) = ix.top_with(&q, k, &|id| Ok(keep(id)), costs).unwrap();
                        // Every node scored from what was read as `score` does.
                        let mut probes = Probes::new(&q);
                        for &id in ids {
                            let s = ix.score_read(&q, id, &read, &mut probes).unwrap();
                            assert_eq!(s, ix.score_t(&q, id), "{text} {id}");
                        }
                        let kept: Vec<(f32, NodeId)> =
                            all.iter().copied().filter(|h| keep(h.1)).collect();
                        let n = k.min(kept.len());
                        let at = format!("{text} {k} {costs:?} keeping {name}");
                        assert_eq!(top.len(), n, "{at}");
                        // The same scores; ids may differ only among ties.
                        for (x, y) in top.iter().zip(&kept[..n]) {
                            assert!((x.0 - y.0).abs() < 1e-5, "{at}: {top:?}");
                            assert!(keep(x.1), "{at}: {top:?}");
                        }
                    }
                }
            }
        }
    }

    /// What a node is lifts a node that says less above many that say
    /// more: the top gathers every list whole and leaves out only nodes
    /// that what they are could not lift into it.
    #[test]
    fn what_nodes_are_lifts_them_past_the_nodes_left_out() {
        let mut ix = LexicalIndex::new(FieldWeights::default());
        for id in 0..300 {
            let (desc, code) = if id % 30 == 7 {
                ("sort one list of pairs by key", "(define (f x) (g x))")
            } else if id % 3 == 0 {
                // Fewer than half: "sort" is no common word.
                ("sort sort", "")
            } else {
                ("tree", "")
            };
            ix.put(&node(id, desc, &[], code));
        }
        let words = Weighted {
            dictionary: Dictionary::new(),
            implied: 1.0,
            coverage: 0.0,
        };
        let q = ix.query("sort procedure", &words).unwrap();
        assert!(implied_most(&q) > 0.0 && !q.groups.iter().any(|g| g.common));
        let mut all: Vec<(f32, NodeId)> = (0..300)
            .map(|id| (ix.score_t(&q, id), id))
            .filter(|h| h.0 > 0.0)
            .collect();
        all.sort_by(by_score);
        // The procedures first, though many say "sort" more.
        assert!(all[0].1 % 30 == 7, "{:?}", &all[..12]);
        for k in [1, 3, 10] {
            let top = ix.top_t(&q, k, &|_| true);
            assert_eq!(ids(&top), ids(&all[..k]), "{k}");
        }
    }

    /// A store written before postings were packed in whole bytes holds
    /// blocks packed in bits: read, changed and searched beside new ones,
    /// they give what an index of new blocks gives.
    #[test]
    fn blocks_packed_in_bits_and_in_bytes_give_the_same_answers() {
        use super::packed_postings::WRITE_BITS;
        let words = ["sort", "insert", "tree", "pile", "heap", "list", "merge"];
        let han = ["排序", "插入", "二叉树", "堆", "列表", "归并"];
        let make = |i: u64| {
            let (a, b) = (words[(i % 7) as usize], words[(i / 7 % 7) as usize]);
            let desc = match i % 3 {
                0 => format!("{a} {b} {a}"),
                1 => format!("{}{} {a}", han[(i % 6) as usize], han[(i / 6 % 6) as usize]),
                _ => format!("{} {b}", han[(i / 2 % 6) as usize]),
            };
            node(i * 37 + (i % 5) * 40_000, &desc, &[b], "")
        };
        let first: Vec<Node> = (0..600).map(make).collect();
        let later: Vec<Node> = (600..800).map(make).collect();
        let mut old = LexicalIndex::new(FieldWeights::default());
        WRITE_BITS.set(true);
        for n in &first {
            old.put(n);
        }
        WRITE_BITS.set(false);
        let mut new = LexicalIndex::new(FieldWeights::default());
        for n in &first {
            new.put(n);
        }
        // As the stores have them: written to blobs and opened again.
        let reopen = |ix: &mut LexicalIndex| {
            let map = ix.map().unwrap();
            let root = map.seal();
            let mut blobs = Vec::new();
            map.export(&mut blobs);
            let bytes: usize = blobs.iter().map(|b| b.1.len()).sum();
            let stored = crate::repo::cas::MemoryBlobs::new();
            stored.extend(blobs);
            let ix = LexicalIndex::from_map(SortedMap::open(
                root.as_ref(),
                crate::repo::cas::Blobs::new(stored),
            ));
            (ix, bytes)
        };
        let ((mut old, old_bytes), (mut new, new_bytes)) = (reopen(&mut old), reopen(&mut new));
        assert!(
            old_bytes < new_bytes,
            "{old_bytes} bytes in bits, {new_bytes} in bytes"
        );
        let dictionary = Dictionary::new();
        let agree = |a: &LexicalIndex, b: &LexicalIndex, ids: &[NodeId]| {
            for text in ["插入排序", "堆 tree", "归并排序算法", "sort list", "二叉树"]
            {
                let (qa, qb) = (
                    a.query(text, &dictionary).unwrap(),
                    b.query(text, &dictionary).unwrap(),
                );
                for k in [1, 10, 40] {
                    let (ta, tb) = (a.top_t(&qa, k, &|_| true), b.top_t(&qb, k, &|_| true));
                    assert_eq!(ta, tb, "{text}, top {k}");
                    assert!(!ta.is_empty(), "{text}");
                }
                for &id in ids {
                    assert_eq!(a.score_t(&qa, id), b.score_t(&qb, id), "{text}, {id}");
                }
            }
        };
        let ids = |nodes: &[&Node]| nodes.iter().map(|n| n.id).collect::<Vec<_>>();
        agree(&old, &new, &ids(&first.iter().collect::<Vec<_>>()));
        // Changes rewrite the blocks they reach in whole bytes, beside
        // the old ones the others still are.
        for ix in [&mut old, &mut new] {
            for n in &later {
                ix.put(n);
            }
            for n in first.iter().step_by(5) {
                ix.del(n.id);
            }
        }
        let live: Vec<&Node> = first
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 5 != 0)
            .map(|(_, n)| n)
            .chain(&later)
            .collect();
        let mut fresh = LexicalIndex::new(FieldWeights::default());
        for n in &live {
            fresh.put(n);
        }
        let ((old, _), (new, _)) = (reopen(&mut old), reopen(&mut new));
        agree(&old, &new, &ids(&live));
        agree(&old, &fresh, &ids(&live));
    }

    #[test]
    fn top_agrees_with_scoring_every_node() {
        agreeing(&(0..400).collect::<Vec<_>>());
    }

    /// Ids far apart (many windows of `gather_whole`) and past what the
    /// partial sums keep in an array (the last ids a store could give).
    #[test]
    fn top_agrees_with_scoring_every_node_whatever_the_ids() {
        let mut ids: Vec<NodeId> = (0..300).map(|i| 256 + i * 7_919).collect();
        ids.extend((0..100).map(|i| u64::MAX - 1_000 * i));
        agreeing(&ids);
    }
}
