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
//! - `[2] n term id`: a posting: the term's weighted count in the node and
//!   the node's length, so a posting list is scored without reading nodes.
//!
//! A term's frequency sorts just before its postings, in the same blob as
//! most of them. Counts and lengths are kept in 1/64 units of a field
//! weight (integers), so the header's sums are exact and equal content
//! gives an equal map whatever the order of the changes. Document
//! frequencies and the header change by many commits' worth of inserts:
//! they wait in memory as differences (`df_delta`, `pending`) and are
//! written when a version takes the map (`map`). Every value read is
//! checked; one that does not decode is a `StoreError`, and the caller
//! builds the index again from the nodes.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use super::text::{code_words, pieces, stem, Piece, Scratch};
use crate::repo::cas::sorted::SortedMap;
use crate::repo::cas::{Blobs, StoreError};
use crate::repo::forest::codec::{Reader, Writer};
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

/// The layout this module writes; a map of another is built again.
const FORMAT: u64 = 1;
/// Counts and lengths are stored in units of 1/UNITS.
const UNITS: f32 = 64.0;
const HEADER_KEY: &[u8] = &[0];
const DOC_TAG: u8 = 1;
const TERM_TAG: u8 = 2;
/// The longest term indexed (a longer "word" is not a word).
const MAX_TERM: usize = 255;

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

fn posting_key(term: &str, id: NodeId) -> Vec<u8> {
    let mut k = term_key(term);
    k.extend_from_slice(&id.to_be_bytes());
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

/// A query analysed against the index's dictionary.
#[derive(Clone, Debug, Default)]
pub struct LexicalQuery {
    /// (term, idf × the term's weight in the query), for terms some node
    /// has, by term.
    terms: Vec<(Box<str>, f32)>,
    /// Per term: whether more than half the nodes hold it (`top` reads
    /// such a list only for candidates it still lacks).
    common: Vec<bool>,
    /// The sum of every counted term's weight: the score of a node that
    /// has them all.
    total: f32,
    /// The average node length the scores are computed with.
    average: f32,
}

impl LexicalQuery {
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
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
            if self.map.remove(&posting_key(term, id))?.is_none() {
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
            self.map
                .insert(&posting_key(term, node.id), &encode_uints(&[c, len]))?;
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
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// Analyses a query. Terms no node contains count against every node
    /// (a word the knowledge base does not know), except CJK pairs.
    /// `translations` are words of other languages meaning what the
    /// query's words mean, with their similarity: each is looked for too,
    /// counting that much.
    pub fn query(
        &self,
        text: &str,
        translations: &[(String, f32)],
    ) -> Result<LexicalQuery, StoreError> {
        let counts = self.counts()?;
        let mut q = LexicalQuery {
            average: if counts.docs == 0 {
                1.0
            } else {
                ((counts.len as f64 / UNITS as f64) / counts.docs as f64).max(1e-3) as f32
            },
            ..LexicalQuery::default()
        };
        let unknown_idf = Self::idf(counts.docs, 0);
        let mut scratch = Scratch::default();
        let mut wanted: BTreeMap<Box<str>, (f32, bool)> = BTreeMap::new();
        let mut failed = None;
        let mut add = |q: &mut LexicalQuery, text: &str, weight: f32, scratch: &mut Scratch| {
            pieces(text, scratch, &mut |p| {
                let cjk = matches!(p, Piece::Cjk(_));
                for_each_term(p, false, &mut |term| {
                    let df = if term.len() > MAX_TERM {
                        0
                    } else {
                        match self.df(term) {
                            Ok(df) => df,
                            Err(e) => {
                                failed.get_or_insert(e);
                                0
                            }
                        }
                    };
                    if df > 0 {
                        let w = Self::idf(counts.docs, df) * weight;
                        // A term repeated counts once, with its largest weight.
                        let common = df.saturating_mul(2) > counts.docs;
                        let (old, _) = wanted.entry(term.into()).or_insert((0.0, common));
                        if w > *old {
                            q.total += w - *old;
                            *old = w;
                        }
                    } else if !(cjk || weight < 1.0) {
                        q.total += unknown_idf;
                    }
                })
            });
        };
        add(&mut q, text, 1.0, &mut scratch);
        for (word, similarity) in translations {
            add(&mut q, word, similarity.clamp(0.0, 1.0), &mut scratch);
        }
        if let Some(e) = failed {
            return Err(e);
        }
        q.common = wanted.values().map(|w| w.1).collect();
        q.terms = wanted.into_iter().map(|(t, (w, _))| (t, w)).collect();
        Ok(q)
    }

    /// A term's saturated part in a document of length `len`.
    fn part(count: f32, len: f32, average: f32) -> f32 {
        let norm = K1 * (1.0 - B + B * len / average);
        (count * (K1 + 1.0) / (count + norm)).min(1.0)
    }

    /// A posting's value: (count, length) in units.
    fn posting(bytes: &[u8]) -> Result<(f32, f32), StoreError> {
        let [c, len] = decode_uints::<2>(bytes, "a posting")?;
        if c == 0 || c > len {
            return Err(StoreError::Inconsistent(format!(
                "the lexical index: a posting counts {c} of a length {len}"
            )));
        }
        Ok((c as f32 / UNITS, len as f32 / UNITS))
    }

    /// The score of node `id` (0 if it is not indexed or shares nothing).
    pub fn score(&self, q: &LexicalQuery, id: NodeId) -> Result<f32, StoreError> {
        if q.total <= 0.0 {
            return Ok(0.0);
        }
        let mut sum = 0.0;
        for (term, idf) in &q.terms {
            if let Some(bytes) = self.map.get(&posting_key(term, id))? {
                let (count, len) = Self::posting(bytes)?;
                sum += idf * Self::part(count, len, q.average);
            }
        }
        Ok((sum / q.total).clamp(0.0, 1.0))
    }

    /// The postings of `term`: (node, count, length), by ascending node.
    fn postings<'a>(
        &'a self,
        term: &str,
    ) -> impl Iterator<Item = Result<(NodeId, f32, f32), StoreError>> + 'a {
        let prefix = term_key(term);
        let n = prefix.len();
        self.map
            .range_from(&prefix)
            .map_while(move |item| match item {
                Err(e) => Some(Err(e)),
                Ok((k, v)) if k.len() == n + 8 && k[..n] == prefix[..] => {
                    let id = NodeId::from_be_bytes(k[n..].try_into().unwrap_or_default());
                    Some(Self::posting(v).map(|(c, len)| (id, c, len)))
                }
                // The term's frequency comes first.
                Ok((k, _)) if k == &prefix[..] => Some(Ok((NodeId::MAX, 0.0, 0.0))),
                Ok(_) => None,
            })
            .filter(|p| !matches!(p, Ok((NodeId::MAX, _, _))))
    }

    /// The (score, id) of up to `k` nodes with the highest positive scores
    /// that `keep` accepts, best first, ties by ascending id.
    ///
    /// The posting lists are read rarest term first; once the best `k`
    /// partial scores beat what every term still unread could add, a node
    /// not yet met cannot enter the top, and the rest of the lists are not
    /// read (max-score pruning): the candidates met so far are scored
    /// exactly instead.
    pub fn top(
        &self,
        q: &LexicalQuery,
        k: usize,
        keep: &dyn Fn(NodeId) -> Result<bool, StoreError>,
    ) -> Result<Vec<(f32, NodeId)>, StoreError> {
        if k == 0 || q.total <= 0.0 || q.terms.is_empty() {
            return Ok(Vec::new());
        }
        let mut order: Vec<usize> = (0..q.terms.len()).collect();
        order.sort_by(|&a, &b| q.terms[b].1.total_cmp(&q.terms[a].1).then(a.cmp(&b)));
        // Partial sums by node, ascending node.
        let mut acc: Vec<(NodeId, f32)> = Vec::new();
        let mut kept: BTreeMap<NodeId, bool> = BTreeMap::new();
        // What the lists not read could still add to a node's sum.
        let mut rest = 0.0f32;
        for (n, &i) in order.iter().enumerate() {
            if n > 0 && acc.len() >= k {
                let left: f32 = order[n..].iter().map(|&j| q.terms[j].1).sum();
                let bar = kth_kept(&acc, k, &mut kept, keep)?;
                // A margin for the rounding of sums in another order.
                if bar.is_some_and(|b| left * (1.0 + 1e-4) + 1e-6 < b) {
                    rest = left;
                    break;
                }
            }
            let (term, idf) = &q.terms[i];
            if q.common[i] {
                // A term most nodes hold (a word of every description)
                // adds little to any score, and its list is most of the
                // index: it only makes up the candidates the rarer terms
                // left short, in node order, and every candidate is then
                // scored exactly.
                let mut ids: Vec<NodeId> = Vec::new();
                let known: std::collections::BTreeSet<NodeId> = acc.iter().map(|a| a.0).collect();
                if acc.len() < k {
                    for p in self.postings(term) {
                        let (id, _, _) = p?;
                        if !known.contains(&id) {
                            ids.push(id);
                            if acc.len() + ids.len() >= k {
                                break;
                            }
                        }
                    }
                }
                acc.extend(ids.into_iter().map(|id| (id, 0.0)));
                acc.sort_unstable_by_key(|a| a.0);
                rest = order[n..]
                    .iter()
                    .map(|&j| q.terms[j].1)
                    .sum::<f32>()
                    .max(f32::MIN_POSITIVE);
                break;
            }
            let mut merged = Vec::with_capacity(acc.len());
            let mut old = acc.into_iter().peekable();
            for p in self.postings(term) {
                let (id, count, len) = p?;
                while let Some(&(o, s)) = old.peek() {
                    if o >= id {
                        break;
                    }
                    merged.push((o, s));
                    old.next();
                }
                let add = idf * Self::part(count, len, q.average);
                match old.peek() {
                    Some(&(o, s)) if o == id => {
                        merged.push((o, s + add));
                        old.next();
                    }
                    _ => merged.push((id, add)),
                }
            }
            merged.extend(old);
            acc = merged;
        }
        let bar = kth_kept(&acc, k, &mut kept, keep)?;
        let mut hits = Vec::new();
        if rest == 0.0 {
            // Every list was read: the partial sums are the scores (up to
            // the rounding of another order); the best `k` are scored in
            // the order `score` uses.
            let mut best: Vec<(f32, NodeId)> = acc
                .into_iter()
                .filter(|&(_, s)| s > 0.0 && bar.is_none_or(|b| s >= b))
                .map(|(id, s)| (s, id))
                .collect();
            best.sort_unstable_by(by_score);
            for (_, id) in best {
                if hits.len() == k {
                    break;
                }
                let ok = match kept.get(&id) {
                    Some(&ok) => ok,
                    None => keep(id)?,
                };
                if ok {
                    hits.push((self.score(q, id)?, id));
                }
            }
        } else {
            // Every node that could still be in the top, scored exactly.
            let bar = bar.map_or(f32::MIN, |b| b - rest * (1.0 + 1e-4) - 1e-4 * q.total);
            for (id, partial) in acc {
                if partial < bar {
                    continue;
                }
                let ok = match kept.get(&id) {
                    Some(&ok) => ok,
                    None => keep(id)?,
                };
                if ok {
                    hits.push((self.score(q, id)?, id));
                }
            }
        }
        hits.retain(|h| h.0 > 0.0);
        if hits.len() > k {
            hits.select_nth_unstable_by(k - 1, by_score);
            hits.truncate(k);
        }
        hits.sort_unstable_by(by_score);
        Ok(hits)
    }
}

/// Best score first, then ascending id.
fn by_score(a: &(f32, NodeId), b: &(f32, NodeId)) -> std::cmp::Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
}

/// The `k`-th best partial score among nodes `keep` accepts (asked at
/// most once per node), or `None` if fewer than `k` are accepted.
fn kth_kept(
    acc: &[(NodeId, f32)],
    k: usize,
    kept: &mut BTreeMap<NodeId, bool>,
    keep: &dyn Fn(NodeId) -> Result<bool, StoreError>,
) -> Result<Option<f32>, StoreError> {
    if k == 0 || acc.len() < k {
        return Ok(None);
    }
    let mut best: Vec<(f32, NodeId)> = acc.iter().map(|&(id, s)| (s, id)).collect();
    // The best few first; all of them only if too few of those are kept.
    let few = (2 * k).min(best.len());
    for whole in [false, true] {
        if whole {
            best.sort_unstable_by(by_score);
        } else {
            if few < best.len() {
                best.select_nth_unstable_by(few - 1, by_score);
            }
            best[..few].sort_unstable_by(by_score);
        }
        let mut found = 0;
        for &(s, id) in &best[..if whole { best.len() } else { few }] {
            let ok = match kept.get(&id) {
                Some(&ok) => ok,
                None => {
                    let ok = keep(id)?;
                    kept.insert(id, ok);
                    ok
                }
            };
            if ok {
                found += 1;
                if found == k {
                    return Ok(Some(s));
                }
            }
        }
        if few == best.len() {
            break;
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
            self.query(text, &[]).unwrap()
        }
        fn query_t(&self, text: &str, t: &[(String, f32)]) -> LexicalQuery {
            self.query(text, t).unwrap()
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
}
