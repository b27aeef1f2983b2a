//! Hybrid search: the lexical and the vector scorer fused into one score.
//!
//! Each scorer gives a node a score from 0 to 1 that depends only on the
//! query, the node and (for the lexical one) how common each word is:
//! the lexical score is the idf-weighted share of the query's words the
//! node holds (`lexical`), the vector score the cosine of the two texts'
//! embeddings (`semantic`). The fused score is their weighted sum, with the
//! cosine first rescaled so that the similarity any two texts have by
//! chance counts as nothing:
//!
//! ```text
//! score = w · clamp((cos − floor) / (1 − floor), 0, 1) + (1 − w) · lexical
//! ```
//!
//! Candidates are the best of each scorer (the vector index's graph or
//! exact scan, the lexical index's posting lists), and every candidate is
//! scored by both, so a node's score never depends on which scorer found
//! it. `w` and `floor` are tuned on the labelled set in tests/retrieval
//! (docs/PERFORMANCE.md gives the figures).

use super::lexical::{FieldWeights, LexicalIndex, LexicalQuery, Probes, QueryWords};
use super::lexicon::Lexicon;
use super::semantic::{vector_text, SemanticHit, SemanticIndex, SemanticQuery};
use super::vector::dot;
use super::IndexError;
use crate::repo::node::{Node, NodeId};

/// The weights of the fusion.
#[derive(Clone, Debug, PartialEq)]
pub struct Fusion {
    /// Weight of the vector score (the lexical one has 1 − this).
    pub vector_weight: f32,
    /// Cosine that counts as no similarity at all.
    pub vector_floor: f32,
    /// Candidates taken from each scorer: at least this many, and at least
    /// three times the hits asked for.
    pub candidates: usize,
    /// How much a node holding a dictionary gloss of a query word (排序 →
    /// sort) gets of that word, times the gloss's own weight.
    pub gloss_weight: f32,
    /// How much a node holding one of the embedder's translations of a
    /// query word gets of that word, times its similarity.
    pub translation_weight: f32,
    /// How much a node holding a headword that an English query word
    /// glosses on its own (sort → 排序) gets of that word, times the
    /// gloss's weight.
    pub reverse_weight: f32,
    /// The weight of the query's glosses in its vector, beside the query's
    /// own embedding (0: the query's own only).
    pub rendition_weight: f32,
    /// Glosses per word in that rendition.
    pub rendition_glosses: usize,
    /// How much each of the query's words counts the same in the lexical
    /// score, whatever its idf (`QueryWords::coverage`): a node holding
    /// both words of "sort algorithm" (the second implied by its code)
    /// before one holding only the rarer one.
    pub coverage: f32,
    /// How much a Chinese word's glosses are weighted by how well they fit
    /// the query's other words (0: the lexicon's order alone): 算法 beside
    /// 排序 is "algorithm" rather than its first gloss "arithmetic".
    pub sense_weight: f32,
    /// How much of a query word a node gets that is what the word names
    /// without saying it (a looping procedure for "algorithm",
    /// `text::implied_words`).
    pub implied_weight: f32,
}

impl Default for Fusion {
    fn default() -> Self {
        Fusion {
            // Tuned on the dev split of tests/retrieval (docs/PERFORMANCE.md):
            // the lexical scorer, with translations, carries most of it.
            vector_weight: 0.3,
            vector_floor: 0.1,
            candidates: 40,
            gloss_weight: 0.9,
            translation_weight: 1.0,
            reverse_weight: 0.9,
            rendition_weight: 1.0,
            rendition_glosses: 1,
            coverage: 0.5,
            sense_weight: 0.0,
            implied_weight: 0.9,
        }
    }
}

impl Fusion {
    /// The default weights, with the vector weight and cosine floor that
    /// `embedder` was tuned with (`Embedder::fusion`).
    pub fn for_embedder(embedder: &dyn super::Embedder) -> Fusion {
        let mut f = Fusion::default();
        f.tune_for(embedder);
        f
    }

    /// Takes `embedder`'s vector weight and cosine floor, or the defaults
    /// if it names none; the other weights are left as they are.
    pub fn tune_for(&mut self, embedder: &dyn super::Embedder) {
        let d = Fusion::default();
        let (w, floor) = embedder
            .fusion()
            .unwrap_or((d.vector_weight, d.vector_floor));
        self.vector_weight = w;
        self.vector_floor = floor;
    }

    /// The fused score of a cosine and a lexical score.
    pub fn fuse(&self, cosine: f32, lexical: f32) -> f32 {
        let floor = self.vector_floor.clamp(0.0, 0.99);
        let v = ((cosine - floor) / (1.0 - floor)).clamp(0.0, 1.0);
        let w = self.vector_weight.clamp(0.0, 1.0);
        (w * v + (1.0 - w) * lexical.clamp(0.0, 1.0)).clamp(0.0, 1.0)
    }
}

/// A query's words as the lexical scorer looks for them: CJK runs cut by
/// the lexicon, and each word's glosses (the lexicon's, weighted by how
/// they fit the query's other words) and translations (the embedder's).
pub struct Words<'a> {
    pub lexicon: Option<&'a Lexicon>,
    pub semantic: &'a SemanticIndex,
    pub fusion: &'a Fusion,
    /// The query's words, each with what it says in English (itself, or a
    /// Chinese word's first gloss): the context that picks a gloss.
    context: Vec<(String, String)>,
}

impl<'a> Words<'a> {
    /// The words of query `text`.
    pub fn new(
        lexicon: Option<&'a Lexicon>,
        semantic: &'a SemanticIndex,
        fusion: &'a Fusion,
        text: &str,
    ) -> Words<'a> {
        let mut context = Vec::new();
        if fusion.sense_weight > 0.0 {
            if let Some(l) = lexicon {
                each_word(l, text, &mut |w, cjk| {
                    let english = if cjk {
                        l.glosses(w).into_iter().next().map(|g| g.0)
                    } else {
                        Some(w.to_string())
                    };
                    if let Some(e) = english {
                        context.push((w.to_string(), e));
                    }
                });
            }
        }
        Words {
            lexicon,
            semantic,
            fusion,
            context,
        }
    }

    /// The lexicon's glosses of `word`, best first: each weighted by its
    /// place in the lexicon and, by `Fusion::sense_weight`, by how close
    /// it is to the query's other words (the embedder's word vectors;
    /// relative to the closest gloss). With no other word, or no word
    /// vectors, the lexicon's weights.
    pub fn glosses(&self, word: &str) -> Vec<(String, f32)> {
        let Some(l) = self.lexicon else {
            return Vec::new();
        };
        let mut glosses = l.glosses(word);
        let s = self.fusion.sense_weight.clamp(0.0, 1.0);
        if s <= 0.0 || glosses.len() < 2 {
            return glosses;
        }
        let others: Vec<&str> = self
            .context
            .iter()
            .filter(|(w, _)| w != word)
            .map(|(_, e)| e.as_str())
            .collect();
        if others.is_empty() {
            return glosses;
        }
        let Some(c) = self.semantic.word_vector(&others.join(" ")) else {
            return glosses;
        };
        let fits: Vec<f32> = glosses
            .iter()
            .map(|(g, _)| {
                self.semantic
                    .word_vector(g)
                    .map_or(0.0, |v| dot(&v, &c).max(0.0))
            })
            .collect();
        let best = fits.iter().copied().fold(0.0f32, f32::max);
        if best <= 0.0 || !best.is_finite() {
            return glosses;
        }
        for ((_, w), f) in glosses.iter_mut().zip(&fits) {
            *w = (*w * (1.0 - s) + s * f / best).clamp(0.0, 1.0);
        }
        glosses.sort_by(|a, b| b.1.total_cmp(&a.1));
        glosses
    }
}

/// Calls `f` with each word of `text`: a word of an alphabetic script as
/// it is (false), a CJK run cut by the lexicon into its words (true).
fn each_word(lexicon: &Lexicon, text: &str, f: &mut dyn FnMut(&str, bool)) {
    let mut scratch = super::text::Scratch::default();
    super::text::pieces(text, &mut scratch, &mut |p| match p {
        super::text::Piece::Word(w) => f(w, false),
        super::text::Piece::Cjk(run) => {
            let mut at = 0;
            for len in lexicon.cut(run) {
                let word: String = run[at..at + len].iter().collect();
                at += len;
                f(&word, true);
            }
        }
    });
}

impl QueryWords for Words<'_> {
    fn cut(&self, run: &[char]) -> Option<Vec<usize>> {
        self.lexicon.map(|l| l.cut(run))
    }

    fn coverage(&self) -> f32 {
        self.fusion.coverage
    }

    fn implied(&self) -> f32 {
        self.fusion.implied_weight
    }

    fn alternatives(&self, word: &str) -> Vec<(String, f32)> {
        let mut out = Vec::new();
        if let Some(l) = self.lexicon {
            let w = self.fusion.gloss_weight;
            out.extend(self.glosses(word).into_iter().map(|(g, x)| (g, x * w)));
            let w = self.fusion.reverse_weight;
            if w > 0.0 {
                out.extend(l.headwords_for(word).into_iter().map(|(g, x)| (g, x * w)));
            }
        }
        let w = self.fusion.translation_weight;
        out.extend(
            self.semantic
                .translations(word)
                .into_iter()
                .map(|(t, x)| (t, x * w)),
        );
        out
    }
}

/// The query's words in the other language: each Chinese word as the
/// lexicon cut it replaced by its first glosses, other words kept.
/// Empty if nothing was translated.
pub fn rendition(lexicon: &Lexicon, text: &str, glosses: usize) -> String {
    rendition_by(lexicon, text, glosses, &|w| lexicon.glosses(w))
}

/// `rendition` with a word's glosses, best first, from `glosses_of`.
fn rendition_by(
    lexicon: &Lexicon,
    text: &str,
    glosses: usize,
    glosses_of: &dyn Fn(&str) -> Vec<(String, f32)>,
) -> String {
    let mut out = String::new();
    let mut translated = false;
    each_word(lexicon, text, &mut |w, cjk| {
        if !cjk {
            out.push_str(w);
            out.push(' ');
            return;
        }
        for (g, _) in glosses_of(w).into_iter().take(glosses) {
            out.push_str(&g);
            out.push(' ');
            translated = true;
        }
    });
    if translated {
        out
    } else {
        String::new()
    }
}

/// What a search takes besides the lexical scorer: the semantic index
/// (the embedder and the nodes' vectors), the lexicon that translates a
/// query's words, and how the two scores are fused.
#[derive(Clone, Copy)]
pub struct Scoring<'a> {
    pub semantic: &'a SemanticIndex,
    pub lexicon: Option<&'a Lexicon>,
    pub fusion: &'a Fusion,
}

/// The query's vector: its own embedding and, when the lexicon translates
/// some of its words, the embedding of its rendition (`rendition`) beside
/// it, so that the query is said in both languages.
pub fn query_vector(scoring: Scoring<'_>, text: &str) -> Result<Option<Vec<f32>>, IndexError> {
    let Scoring {
        semantic,
        lexicon,
        fusion,
    } = scoring;
    let own = semantic.embed_query(text)?;
    let w = fusion.rendition_weight;
    let Some(l) = lexicon.filter(|_| w > 0.0) else {
        return Ok(own);
    };
    let words = Words::new(Some(l), semantic, fusion, text);
    let r = rendition_by(l, text, fusion.rendition_glosses, &|w| words.glosses(w));
    if r.is_empty() {
        return Ok(own);
    }
    Ok(match (own, semantic.embed_query(&r)?) {
        (Some(mut a), Some(b)) => {
            for (x, y) in a.iter_mut().zip(&b) {
                *x += w * y;
            }
            let n = a.iter().map(|x| x * x).sum::<f32>().sqrt();
            if n > 0.0 && n.is_finite() {
                a.iter_mut().for_each(|x| *x /= n);
                Some(a)
            } else {
                None
            }
        }
        (a, b) => a.or(b),
    })
}

/// What both scorers ask of `text`: its lexical query and its vector.
fn queries(
    lexical: &LexicalIndex,
    scoring: Scoring<'_>,
    text: &str,
) -> Result<(LexicalQuery, Option<Vec<f32>>), IndexError> {
    let words = Words::new(scoring.lexicon, scoring.semantic, scoring.fusion, text);
    let lq = lexical.query(text, &words).map_err(IndexError::Store)?;
    Ok((lq, query_vector(scoring, text)?))
}

/// The nodes best matching `text` by both scorers: by fused score, highest
/// first, then by ascending id; only positive scores at least the query's
/// threshold, only nodes of its type if it names one.
pub fn search(
    lexical: &LexicalIndex,
    scoring: Scoring<'_>,
    text: &str,
    query: &SemanticQuery<'_>,
) -> Result<Vec<SemanticHit>, IndexError> {
    let Some(mut hits) = Hits::of(query) else {
        return Ok(Vec::new());
    };
    let Scoring {
        semantic, fusion, ..
    } = scoring;
    let (lq, qv) = queries(lexical, scoring, text)?;
    let wanted = fusion.candidates.max(query.top_k.saturating_mul(3));
    let mut ids: Vec<NodeId> = Vec::new();
    // The vector index's candidates come with their cosines (`score_of`'s
    // own): only the lexical top's others are looked up.
    let mut cosines: Vec<SemanticHit> = Vec::new();
    if let Some(v) = &qv {
        let candidates = SemanticQuery {
            top_k: wanted,
            threshold: 0.0,
            kind: query.kind,
        };
        cosines = semantic.search_prepared(v, &candidates)?;
        ids.extend(cosines.iter().map(|h| h.id));
        cosines.sort_unstable_by_key(|h| h.id);
    }
    let keep = |id: NodeId| match query.kind {
        None => Ok(true),
        Some(k) => Ok(lexical.kind(id)?.as_deref() == Some(k)),
    };
    let (top, read) = lexical
        .top_reading(&lq, wanted, &keep)
        .map_err(IndexError::Store)?;
    ids.extend(top.iter().map(|h| h.1));
    ids.sort_unstable();
    ids.dedup();
    // The lexical scores `top` found are exact (`LexicalIndex::score`'s
    // own). Every other node's is at most the last of them, or nothing if
    // `top` found fewer than it was asked for (a margin covers the
    // rounding of its sums; what a node is counts only beside a word it
    // says, `LexicalIndex::score`); under a type filter, `top` passed over nodes
    // the vector index may not have, so nothing is known of them.
    let known: std::collections::HashMap<NodeId, f32> =
        top.iter().map(|&(s, id)| (id, s)).collect();
    let bound = match (query.kind, top.last()) {
        (Some(_), _) => None,
        (None, Some(&(last, _))) if top.len() >= wanted => Some((last + 1e-4).min(1.0)),
        (None, _) => Some(1e-4),
    };
    // Each candidate's fused score, or, where its lexical score is not
    // known, the least and the most it can be (`fuse` grows with it).
    let mut probes = Probes::new(&lq);
    let mut scored: Vec<(NodeId, f32, Result<f32, (f32, f32)>)> = Vec::with_capacity(ids.len());
    for id in ids {
        let cosine = match (&qv, cosines.binary_search_by_key(&id, |h| h.id)) {
            (Some(_), Ok(i)) => cosines[i].score,
            (Some(v), Err(_)) => semantic.score_of(id, v)?,
            (None, _) => 0.0,
        };
        let fused = match (known.get(&id), bound) {
            (Some(&l), _) => Ok(fusion.fuse(cosine, l)),
            (None, Some(b)) => Err((fusion.fuse(cosine, 0.0), fusion.fuse(cosine, b))),
            (None, None) => {
                let l = lexical.score_read(&lq, id, &read, &mut probes);
                Ok(fusion.fuse(cosine, l.map_err(IndexError::Store)?))
            }
        };
        scored.push((id, cosine, fused));
    }
    // The k-th best score some candidates surely reach: a candidate whose
    // most is below it cannot be among the hits, and its lexical score is
    // not looked up (one read per query term).
    let mut sure: Vec<f32> = scored
        .iter()
        .map(|c| match c.2 {
            Ok(s) | Err((s, _)) => s,
        })
        .filter(|&s| hits.keeps(s))
        .collect();
    let bar = if sure.len() >= query.top_k {
        let k = query.top_k - 1;
        *sure.select_nth_unstable_by(k, |a, b| b.total_cmp(a)).1
    } else {
        f32::NEG_INFINITY
    };
    for (id, cosine, fused) in scored {
        let score = match fused {
            Ok(s) => s,
            Err((_, most)) if most < bar => continue,
            Err(_) => {
                let l = lexical.score_read(&lq, id, &read, &mut probes);
                fusion.fuse(cosine, l.map_err(IndexError::Store)?)
            }
        };
        hits.offer(id, score);
    }
    Ok(hits.best())
}

/// A query's hits as its nodes are scored: only positive scores at least
/// its threshold count; the best `top_k` of them are the answer.
struct Hits {
    /// The query's threshold as a score: from 0 to 1, and 0 if it is NaN.
    threshold: f32,
    top_k: usize,
    found: Vec<SemanticHit>,
}

impl Hits {
    /// None for a query that asks for no hits.
    fn of(query: &SemanticQuery<'_>) -> Option<Hits> {
        if query.top_k == 0 {
            return None;
        }
        let threshold = if query.threshold.is_nan() {
            0.0
        } else {
            query.threshold.clamp(0.0, 1.0)
        };
        Some(Hits {
            threshold,
            top_k: query.top_k,
            found: Vec::new(),
        })
    }

    /// Whether a node of this score would be a hit (if among the best).
    fn keeps(&self, score: f32) -> bool {
        score > 0.0 && score >= self.threshold
    }

    fn offer(&mut self, id: NodeId, score: f32) {
        if self.keeps(score) {
            self.found.push(SemanticHit { id, score });
        }
    }

    /// The best hits, highest score first, then by ascending id.
    fn best(mut self) -> Vec<SemanticHit> {
        let hits = &mut self.found;
        hits.sort_unstable_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        hits.truncate(self.top_k);
        self.found
    }
}

/// `search` over nodes that are not indexed (an older version): a lexical
/// index of just those nodes, and each node embedded with `semantic`'s
/// embedder. Every node is scored, so the result is exact.
pub fn scan<'a>(
    nodes: impl Iterator<Item = &'a Node>,
    scoring: Scoring<'_>,
    text: &str,
    query: &SemanticQuery<'_>,
) -> Result<Vec<SemanticHit>, IndexError> {
    let Some(mut hits) = Hits::of(query) else {
        return Ok(Vec::new());
    };
    let Scoring {
        semantic, fusion, ..
    } = scoring;
    let mut lexical = LexicalIndex::new(FieldWeights::default());
    let mut vectors: Vec<(NodeId, Option<Vec<f32>>)> = Vec::new();
    for node in nodes {
        // Every node counts in how common a word is, as in the index. A
        // map in memory cannot fail.
        lexical.insert(node).map_err(IndexError::Store)?;
        if query.kind.is_some() && node.kind.as_deref() != query.kind {
            continue;
        }
        let v = match vector_text(node) {
            Some(t) => semantic.embed_passage(&t)?,
            None => None,
        };
        vectors.push((node.id, v));
    }
    let (lq, qv) = queries(&lexical, scoring, text)?;
    for (id, v) in vectors {
        let cosine = match (&qv, &v) {
            (Some(q), Some(v)) => dot(q, v).clamp(0.0, 1.0),
            _ => 0.0,
        };
        hits.offer(
            id,
            fusion.fuse(cosine, lexical.score(&lq, id).map_err(IndexError::Store)?),
        );
    }
    Ok(hits.best())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::index::semantic::SemanticConfig;
    use crate::repo::index::static_embed::{tests::small_table, StaticEmbedder};

    fn node(id: NodeId, desc: &str, names: &[&str], kind: &str) -> Node {
        Node {
            id,
            code: Some(format!("(define ({} x) x)", names.first().unwrap_or(&"f"))),
            description: Some(desc.into()),
            symbol_names: names.iter().map(|s| s.to_string()).collect(),
            kind: Some(kind.into()),
            dependencies: Vec::new(),
        }
    }

    fn nodes() -> Vec<Node> {
        vec![
            node(1, "快速排序", &["quick-sort"], "function"),
            node(2, "sort a list", &["list-sort"], "function"),
            node(3, "二叉树", &["tree-walk"], "function"),
            node(4, "default order", &["sort-order"], "constant"),
            node(5, "unrelated words", &["zebra"], "function"),
        ]
    }

    /// Both indexes over `all`, with the small table.
    fn indexes_of(all: &[Node]) -> (LexicalIndex, SemanticIndex) {
        let embedder = StaticEmbedder::from_bytes(small_table()).unwrap();
        let mut sem = SemanticIndex::new(Box::new(embedder), SemanticConfig::default());
        let mut lex = LexicalIndex::new(FieldWeights::default());
        for n in all {
            sem.insert(n);
            lex.insert(n).unwrap();
        }
        (lex, sem)
    }

    fn indexes() -> (LexicalIndex, SemanticIndex) {
        indexes_of(&nodes())
    }

    fn sc<'a>(sem: &'a SemanticIndex, lexicon: Option<&'a Lexicon>, f: &'a Fusion) -> Scoring<'a> {
        Scoring {
            semantic: sem,
            lexicon,
            fusion: f,
        }
    }

    fn q(top_k: usize, threshold: f32, kind: Option<&str>) -> SemanticQuery<'_> {
        SemanticQuery {
            top_k,
            threshold,
            kind,
        }
    }

    #[test]
    fn fuses_meaning_and_words() {
        let (lex, sem) = indexes();
        let f = Fusion::default();
        // "sort" in English finds the Chinese description by meaning, and
        // the English ones by words too.
        let hits = search(&lex, sc(&sem, None, &f), "sort", &q(10, 0.0, None)).unwrap();
        let ids: Vec<NodeId> = hits.iter().map(|h| h.id).collect();
        assert!(
            ids.contains(&1) && ids.contains(&2) && ids.contains(&4),
            "{hits:?}"
        );
        assert!(!ids.contains(&5), "{hits:?}");
        assert!(hits.iter().all(|h| h.score > 0.0 && h.score <= 1.0));
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
        // A symbol name finds its node first.
        let hits = search(&lex, sc(&sem, None, &f), "tree-walk", &q(10, 0.0, None)).unwrap();
        assert_eq!(hits[0].id, 3);
        // Options.
        let one = search(&lex, sc(&sem, None, &f), "sort", &q(1, 0.0, None)).unwrap();
        assert_eq!(one.len(), 1);
        let consts = search(
            &lex,
            sc(&sem, None, &f),
            "sort",
            &q(10, 0.0, Some("constant")),
        )
        .unwrap();
        assert_eq!(consts.iter().map(|h| h.id).collect::<Vec<_>>(), vec![4]);
        let all = search(&lex, sc(&sem, None, &f), "sort", &q(10, 0.0, None)).unwrap();
        let cut = search(&lex, sc(&sem, None, &f), "sort", &q(10, all[1].score, None)).unwrap();
        assert_eq!(cut, all[..2].to_vec());
        assert!(search(&lex, sc(&sem, None, &f), "", &q(10, 0.0, None))
            .unwrap()
            .is_empty());
        assert!(search(&lex, sc(&sem, None, &f), "sort", &q(0, 0.0, None))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn scanning_nodes_gives_the_indexed_answer() {
        let (lex, sem) = indexes();
        let f = Fusion::default();
        for text in ["sort", "排序", "tree walk", "order", "zebra words"] {
            for kind in [None, Some("function")] {
                let query = q(10, 0.0, kind);
                let a = search(&lex, sc(&sem, None, &f), text, &query).unwrap();
                let b = scan(nodes().iter(), sc(&sem, None, &f), text, &query).unwrap();
                assert_eq!(a.len(), b.len(), "{text}");
                for (x, y) in a.iter().zip(&b) {
                    assert_eq!(x.id, y.id, "{text}");
                    assert!((x.score - y.score).abs() < 1e-5, "{text}");
                }
            }
        }
    }

    #[test]
    fn the_lexicon_finds_english_for_chinese_and_scanning_agrees() {
        let lexicon =
            Lexicon::from_bytes(crate::repo::index::lexicon::tests::small_lexicon()).unwrap();
        let mut all = nodes();
        all.push(node(
            6,
            "Insert into a binary tree",
            &["tree-insert"],
            "function",
        ));
        all.push(node(7, "Compound interest", &["compound"], "function"));
        let (lex, sem) = indexes_of(&all);
        let f = Fusion::default();
        let l = Some(&lexicon);
        let top = |text: &str, l: Option<&Lexicon>| {
            search(&lex, sc(&sem, l, &f), text, &q(10, 0.0, None))
                .unwrap()
                .iter()
                .map(|h| h.id)
                .collect::<Vec<_>>()
        };
        assert_eq!(top("复利", l)[0], 7);
        assert!(!top("复利", None).contains(&7));
        assert_eq!(top("二叉树插入", l)[0], 6);
        for text in ["复利", "二叉树插入", "排序", "sort 堆", "tree"] {
            let query = q(10, 0.0, None);
            let a = search(&lex, sc(&sem, l, &f), text, &query).unwrap();
            let b = scan(all.iter(), sc(&sem, l, &f), text, &query).unwrap();
            assert_eq!(a.len(), b.len(), "{text}");
            for (x, y) in a.iter().zip(&b) {
                assert_eq!(x.id, y.id, "{text}");
                assert!((x.score - y.score).abs() < 1e-5, "{text}");
            }
        }
        // The rendition of a Chinese query: its words' first glosses.
        assert_eq!(
            rendition(&lexicon, "复利 rate", 1),
            "compound interest rate "
        );
        assert_eq!(rendition(&lexicon, "rate", 1), "");
    }

    #[test]
    fn candidates_left_unscored_could_not_be_hits() {
        // Every node says "adds", so the lexical top is full and the other
        // candidates' lexical scores are only bounded: the hits must still
        // be those of scoring every node.
        let all: Vec<Node> = (0..150)
            .map(|i| Node {
                id: i,
                code: Some(format!("(define (f{i} x) (+ x {i}))")),
                description: Some(format!("adds {i}")),
                symbol_names: vec![format!("f{i}")],
                kind: Some(if i % 3 == 0 { "constant" } else { "function" }.into()),
                dependencies: Vec::new(),
            })
            .collect();
        let (lex, sem) = indexes_of(&all);
        for candidates in [40, 5, 1] {
            let f = Fusion {
                candidates,
                ..Fusion::default()
            };
            // Words that nodes are rather than say (function, constant)
            // give scores to nodes `top` never returns.
            for text in [
                "adds 7",
                "adds",
                "f12 x",
                "sum of 99",
                "adds 3 4 5",
                "function 7",
                "constant",
                "procedure of 12",
            ] {
                for (top_k, threshold, kind) in [
                    (10, 0.0, None),
                    (1, 0.0, None),
                    (3, 0.2, None),
                    (5, 0.0, Some("constant")),
                ] {
                    let query = q(top_k, threshold, kind);
                    let a = search(&lex, sc(&sem, None, &f), text, &query).unwrap();
                    let b = scan(all.iter(), sc(&sem, None, &f), text, &query).unwrap();
                    let ids = |h: &[SemanticHit]| h.iter().map(|h| h.id).collect::<Vec<_>>();
                    assert_eq!(ids(&a), ids(&b), "{text} {candidates} {top_k}");
                    for (x, y) in a.iter().zip(&b) {
                        assert!((x.score - y.score).abs() < 1e-5, "{text}");
                    }
                }
            }
        }
    }

    #[test]
    fn glosses_can_be_chosen_by_the_other_words() {
        let lexicon = Lexicon::from_bytes(crate::repo::index::lexicon::write_lexicon(
            "senses",
            &[("算法", &[("zebra", 1.0), ("tree", 0.8)])],
        ))
        .unwrap();
        let embedder = StaticEmbedder::from_bytes(small_table()).unwrap();
        let sem = SemanticIndex::new(Box::new(embedder), SemanticConfig::default());
        let mut f = Fusion::default();
        let l = Some(&lexicon);
        // Off: the lexicon's order.
        f.sense_weight = 0.0;
        let words = Words::new(l, &sem, &f, "算法 tree");
        assert_eq!(words.glosses("算法")[0].0, "zebra");
        // On: "tree" fits the other word, "zebra" (no vector) does not.
        f.sense_weight = 1.0;
        let words = Words::new(l, &sem, &f, "算法 tree");
        let g = words.glosses("算法");
        assert_eq!(g[0], ("tree".to_string(), 1.0));
        assert_eq!(g[1], ("zebra".to_string(), 0.0));
        // Half: between the two.
        f.sense_weight = 0.5;
        let g = Words::new(l, &sem, &f, "算法 tree").glosses("算法");
        assert_eq!(g[0].0, "tree");
        assert!(
            (g[0].1 - 0.9).abs() < 1e-6 && (g[1].1 - 0.5).abs() < 1e-6,
            "{g:?}"
        );
        // No other word, or an embedder with no word vectors: unchanged.
        f.sense_weight = 1.0;
        let g = Words::new(l, &sem, &f, "算法").glosses("算法");
        assert_eq!(g[0].0, "zebra");
        let hashing = SemanticIndex::new(
            Box::new(crate::repo::index::HashingEmbedder::default()),
            SemanticConfig::default(),
        );
        let g = Words::new(l, &hashing, &f, "算法 tree").glosses("算法");
        assert_eq!(g[0].0, "zebra");
    }

    #[test]
    fn fusion_is_bounded() {
        let f = Fusion::default();
        assert_eq!(f.fuse(0.0, 0.0), 0.0);
        assert_eq!(f.fuse(f.vector_floor, 0.0), 0.0);
        assert!((f.fuse(1.0, 1.0) - 1.0).abs() < 1e-6);
        assert!(f.fuse(2.0, 5.0) <= 1.0 && f.fuse(-1.0, -1.0) >= 0.0);
        assert!(f.fuse(0.9, 0.0) > f.fuse(0.5, 0.0));
    }
}
