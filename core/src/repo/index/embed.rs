//! Embeddings: text → a fixed-length vector whose cosine similarity with
//! another text's vector says how alike their meanings are.
//!
//! A host may plug in a real model through `Embedder`. The built-in
//! `HashingEmbedder` needs no model and no network: it hashes lexical
//! features into a fixed number of dimensions ("feature hashing"). It knows
//! no synonyms, but it does relate texts that share words or characters,
//! in any script:
//!
//! - Words of alphabetic scripts (split at anything not a letter or digit,
//!   so `bubble-sort` is two words): the lowercased word with a light
//!   English suffix stemming (`sorting`, `sorted`, `sorts` → `sort`), plus
//!   its character trigrams at a lower weight, which relate compounds and
//!   typos (`quicksort` ~ `quick sort`). A few English function words are
//!   skipped.
//! - CJK text (Han, kana, Hangul), which has no spaces between words:
//!   every character (unigram) and every pair of adjacent characters
//!   (bigram). Most Chinese words are one or two characters, so shared
//!   bigrams are mostly shared words: "排序算法" shares 排序 and 算法 with
//!   "归并排序算法" and 排序 with "快速排序实现".
//!
//! Each feature is hashed (FNV-1a, fixed so vectors are the same on every
//! platform and release) to a dimension and a sign; the sign makes
//! collisions cancel out on average instead of adding up. The vector is
//! L2-normalised.

use super::text::{is_cjk, stem};

/// Text → vector. Vectors from one embedder must all have length `dim()`.
/// They need not be normalised; the semantic index normalises them.
pub trait Embedder {
    fn dim(&self) -> usize;
    /// The vector of a text to be found: a node's description and names.
    fn embed(&self, text: &str) -> Vec<f32>;
    /// The vector of a search query. The same as `embed` unless the model
    /// tells queries from passages (multilingual-e5 reads "query: " before a
    /// query and "passage: " before a text to be found).
    fn embed_query(&self, text: &str) -> Vec<f32> {
        self.embed(text)
    }
    /// A name that changes whenever the vectors would: recorded with
    /// stored vectors, so that vectors of different embedders never mix.
    fn id(&self) -> String {
        format!("custom-{}", self.dim())
    }
    /// The fusion's vector weight and cosine floor (`Fusion::vector_weight`,
    /// `Fusion::vector_floor`) that this embedder's vectors were tuned
    /// with, if not the defaults: a model whose cosines crowd between 0.7
    /// and 0.9 wants a higher floor than a static table.
    fn fusion(&self) -> Option<(f32, f32)> {
        None
    }
    /// Words of other languages that mean what the words of `text` mean,
    /// with a similarity from 0 to 1: the lexical scorer also looks for
    /// them, so a Chinese query matches English words. None by default.
    fn translations(&self, _text: &str) -> Vec<(String, f32)> {
        Vec::new()
    }
    /// The vector of a word or a few, if this embedder makes one cheaply
    /// and it says what they mean (a static table's; not a hashing
    /// embedder's, nor a model's whose every call costs milliseconds):
    /// the search compares the senses of a query word with the query's
    /// other words by it. `None` by default.
    fn word_vector(&self, _text: &str) -> Option<Vec<f32>> {
        None
    }
}

/// The built-in model-free embedder (see the module documentation).
#[derive(Clone, Debug)]
pub struct HashingEmbedder {
    dim: usize,
}

/// 256 dimensions: a description yields tens of features, so two unrelated
/// descriptions rarely collide, and a vector stays at 1 KiB.
pub const DEFAULT_DIM: usize = 256;

const WORD_WEIGHT: f32 = 1.0;
/// Shared among a word's trigrams, so a long word does not outweigh a short
/// one: the trigram part of a word has about this norm.
const TRIGRAM_WEIGHT: f32 = 0.5;
const CJK_UNIGRAM_WEIGHT: f32 = 0.5;
const CJK_BIGRAM_WEIGHT: f32 = 1.0;

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on",
    "or", "that", "the", "this", "to", "with",
];

impl Default for HashingEmbedder {
    fn default() -> Self {
        HashingEmbedder { dim: DEFAULT_DIM }
    }
}

impl HashingEmbedder {
    /// An embedder with `dim` dimensions (at least 1).
    pub fn new(dim: usize) -> Self {
        HashingEmbedder { dim: dim.max(1) }
    }

    fn add_hash(&self, v: &mut [f32], h: u64, weight: f32) {
        let slot = (h % self.dim as u64) as usize;
        let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
        if let Some(x) = v.get_mut(slot) {
            *x += sign * weight;
        }
    }

    /// A word's features. `chars` is scratch space. Features are hashed
    /// from their bytes as they are read, never built as strings: this runs
    /// for every description stored.
    fn add_word(&self, v: &mut [f32], word: &str, chars: &mut Vec<char>) {
        if STOP_WORDS.contains(&word) {
            return;
        }
        let stem = stem(word);
        self.add_hash(v, hash(b'w', stem), WORD_WEIGHT);
        if stem.is_ascii() {
            // `<stem>` as bytes: one byte per character.
            let n = stem.len() + 2;
            if n > 4 {
                let w = TRIGRAM_WEIGHT / ((n - 2) as f32).sqrt();
                let b = stem.as_bytes();
                let at = |i: usize| match i {
                    0 => b'<',
                    i if i == n - 1 => b'>',
                    i => b[i - 1],
                };
                for i in 0..n - 2 {
                    let h = Fnv::new(b't').bytes(&[at(i), at(i + 1), at(i + 2)]);
                    self.add_hash(v, h.finish(), w);
                }
            }
            return;
        }
        chars.clear();
        chars.push('<');
        chars.extend(stem.chars());
        chars.push('>');
        if chars.len() > 4 {
            let w = TRIGRAM_WEIGHT / ((chars.len() - 2) as f32).sqrt();
            for t in chars.windows(3) {
                self.add_hash(v, Fnv::new(b't').chars(t).finish(), w);
            }
        }
    }

    fn add_cjk_run(&self, v: &mut [f32], run: &[char]) {
        for &c in run {
            let h = Fnv::new(b'u').chars(&[c]).finish();
            self.add_hash(v, h, CJK_UNIGRAM_WEIGHT);
        }
        for pair in run.windows(2) {
            let h = Fnv::new(b'b').chars(pair).finish();
            self.add_hash(v, h, CJK_BIGRAM_WEIGHT);
        }
    }
}

impl Embedder for HashingEmbedder {
    fn dim(&self) -> usize {
        self.dim
    }

    fn id(&self) -> String {
        format!("hashing-{}", self.dim)
    }

    fn embed(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.dim];
        let mut word = String::new();
        let mut cjk: Vec<char> = Vec::new();
        let mut scratch: Vec<char> = Vec::new();
        let mut lower = |c: char, v: &mut Vec<f32>| {
            if is_cjk(c) {
                if !word.is_empty() {
                    self.add_word(v, &word, &mut scratch);
                    word.clear();
                }
                cjk.push(c);
                return;
            }
            if !cjk.is_empty() {
                self.add_cjk_run(v, &cjk);
                cjk.clear();
            }
            if c.is_alphanumeric() {
                word.push(c);
            } else if !word.is_empty() {
                self.add_word(v, &word, &mut scratch);
                word.clear();
            }
        };
        for c in text.chars() {
            if c.is_ascii() {
                // The common case, without the Unicode tables.
                lower(c.to_ascii_lowercase(), &mut v);
            } else {
                for l in c.to_lowercase() {
                    lower(l, &mut v);
                }
            }
        }
        if !word.is_empty() {
            self.add_word(&mut v, &word, &mut scratch);
        }
        if !cjk.is_empty() {
            self.add_cjk_run(&mut v, &cjk);
        }
        normalize(&mut v);
        v
    }
}

/// Scales `v` to unit length; leaves a zero vector as it is.
pub fn normalize(v: &mut [f32]) {
    // In lanes: a serial sum would wait on every addition.
    let norm = super::vector::dot(v, v).sqrt();
    if norm > 0.0 && norm.is_finite() {
        for x in v.iter_mut() {
            *x /= norm;
        }
    }
}

/// FNV-1a 64 of a tag byte and the feature, finished with a mixing step so
/// that the low bits (the slot) and the top bit (the sign) are both well
/// spread. Fixed here rather than std's hasher, whose output may change.
pub(crate) fn hash(tag: u8, s: &str) -> u64 {
    Fnv::new(tag).bytes(s.as_bytes()).finish()
}

/// The hash of `hash`, fed piece by piece.
struct Fnv(u64);

impl Fnv {
    fn new(tag: u8) -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325).bytes(&[tag])
    }

    fn bytes(mut self, bytes: &[u8]) -> Fnv {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }

    /// The UTF-8 bytes of `chars`.
    fn chars(mut self, chars: &[char]) -> Fnv {
        let mut buf = [0u8; 4];
        for c in chars {
            self = self.bytes(c.encode_utf8(&mut buf).as_bytes());
        }
        self
    }

    fn finish(self) -> u64 {
        // splitmix64's finaliser.
        let mut h = self.0;
        h ^= h >> 30;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 27;
        h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^ (h >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn unit_length_and_stable() {
        let e = HashingEmbedder::default();
        let v = e.embed("Quick sort, 快速排序");
        assert_eq!(v.len(), DEFAULT_DIM);
        assert!((cos(&v, &v) - 1.0).abs() < 1e-5);
        assert_eq!(v, e.embed("quick SORT 快速排序"));
        // No features: the zero vector.
        assert!(e.embed("").iter().all(|&x| x == 0.0));
        assert!(e.embed(" ,;- the ").iter().all(|&x| x == 0.0));
        // A fixed hash: the same slot on every platform and release.
        assert_eq!(hash(b'w', "sort"), hash(b'w', "sort"));
        assert_ne!(hash(b'w', "sort"), hash(b'b', "sort"));
    }

    #[test]
    fn related_texts_are_closer() {
        let e = HashingEmbedder::default();
        let q = e.embed("sorting algorithm");
        let a = e.embed("a sort algorithm on lists");
        let b = e.embed("parse JSON documents");
        assert!(cos(&q, &a) > 0.4, "{}", cos(&q, &a));
        assert!(cos(&q, &a) > cos(&q, &b) + 0.3);
        let q = e.embed("排序算法");
        let a = e.embed("归并排序算法");
        let b = e.embed("读取配置文件");
        assert!(cos(&q, &a) > 0.4);
        assert!(cos(&q, &a) > cos(&q, &b) + 0.3);
    }

    /// The embedding as the module documentation states it, with every
    /// feature built as a string: the fast paths must agree bit for bit.
    fn reference(dim: usize, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; dim];
        let mut add = |tag: u8, f: &str, w: f32| {
            let h = hash(tag, f);
            v[(h % dim as u64) as usize] += if h >> 63 == 0 { w } else { -w };
        };
        let lower: Vec<char> = text.chars().flat_map(char::to_lowercase).collect();
        let mut i = 0;
        while i < lower.len() {
            let start = i;
            if is_cjk(lower[i]) {
                while i < lower.len() && is_cjk(lower[i]) {
                    i += 1;
                }
                let run = &lower[start..i];
                for c in run {
                    add(b'u', &c.to_string(), CJK_UNIGRAM_WEIGHT);
                }
                for p in run.windows(2) {
                    add(b'b', &p.iter().collect::<String>(), CJK_BIGRAM_WEIGHT);
                }
            } else if lower[i].is_alphanumeric() {
                while i < lower.len() && lower[i].is_alphanumeric() && !is_cjk(lower[i]) {
                    i += 1;
                }
                let word: String = lower[start..i].iter().collect();
                if STOP_WORDS.contains(&word.as_str()) {
                    continue;
                }
                let stem = stem(&word);
                add(b'w', stem, WORD_WEIGHT);
                let padded: Vec<char> = format!("<{stem}>").chars().collect();
                if padded.len() > 4 {
                    let w = TRIGRAM_WEIGHT / ((padded.len() - 2) as f32).sqrt();
                    for t in padded.windows(3) {
                        add(b't', &t.iter().collect::<String>(), w);
                    }
                }
            } else {
                i += 1;
            }
        }
        normalize(&mut v);
        v
    }

    #[test]
    fn fast_paths_match_the_reference() {
        let e = HashingEmbedder::default();
        let texts = [
            "Quick sort, 快速排序 of lists",
            "İstanbul ΣΊΣΥΦΟΣ straße SORTING sorted",
            "归并排序算法mergesort ab abc abcd a-b-c x1 2024",
            "café naïve résumé 日本語のテキスト 한국어 e\u{301}",
            "",
            "the and is",
        ];
        for t in texts {
            let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
            assert_eq!(bits(e.embed(t)), bits(reference(DEFAULT_DIM, t)), "{t}");
        }
    }
}
