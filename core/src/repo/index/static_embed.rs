//! `StaticEmbedder`: meaning from a table of token vectors, with no model
//! at run time.
//!
//! The table maps each token of a vocabulary (pieces of a multilingual
//! sentence model's tokenizer, and whole Chinese words) to a vector that
//! the model gave that token on its own, reduced by PCA and weighted so
//! that frequent tokens count less (the model2vec approach; the script
//! `scripts/distill-embedder` builds it, docs/SEARCH.md says from what).
//! A text's vector is the sum of its tokens' vectors. Because the model
//! put "排序" and "sort" near each other, so does the table: a Chinese
//! query finds an English description and back, and words that never
//! appear together still relate.
//!
//! Tokens: each word (see `text::pieces`) is looked up whole, with the
//! word-start mark `▁`; a word the table lacks, and every CJK run, is cut
//! into the vocabulary's pieces by the unigram model's most probable
//! segmentation (Viterbi over the pieces' log-probabilities, as
//! SentencePiece does). Characters no piece covers are skipped.
//!
//! The table's format is `table_layout`'s.
//!
//! The translations let the lexical scorer match across languages: a
//! Chinese query word also looks for its nearest English words (see
//! `Embedder::translations`).
//!
//! Parsing checks every length and offset: a damaged table is an error,
//! never a panic. The built-in table's contents are checked, its entry
//! lookup made and its id computed by the build (core/build.rs, with
//! `table_layout` and `table_lookup`), so no process pays for them; a table
//! handed over at run time is checked when given and its lookup made on
//! first use. Segmentations are
//! remembered by their text, so a word the table lacks costs its tens of
//! lookups once.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::FxHashMap;

use super::bytes::Bytes;
use super::embed::Embedder;
use super::table_layout::{le_f32, le_u32, Layout, MAGIC};
use super::table_lookup;
use super::text::{pieces, Piece, Scratch};

/// The word-start mark of SentencePiece vocabularies.
const WORD_START: char = '\u{2581}';
/// Log-probability charged for a character no piece covers.
const UNKNOWN_SCORE: f32 = -30.0;
/// Segmentations remembered (about 100 bytes each); all are forgotten when
/// there are more.
const SEGMENTATIONS_KEPT: usize = 1 << 16;
/// Characters of a word segmented at once. Segmenting costs memory and
/// time in proportion to the word's length, so a longer run (no real
/// word: a pasted blob, a hostile query of 100 MB) is segmented in pieces
/// of this length, and its segmentation is not remembered.
const SEGMENTED_AT_ONCE: usize = 64;
/// Bytes of a text that are embedded: its start, as models truncate their
/// input. A description or query is far shorter; a 100 MB one must not
/// cost minutes.
const EMBEDDED_AT_MOST: usize = 64 * 1024;

/// Why a table was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableError(pub String);

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid embedder table: {}", self.0)
    }
}

impl std::error::Error for TableError {}

/// A parsed table: its bytes and where each part lies in them.
struct Table {
    bytes: Bytes,
    layout: Layout,
}

impl std::ops::Deref for Table {
    type Target = Layout;
    fn deref(&self) -> &Layout {
        &self.layout
    }
}

/// Entry lookup by string, made on first use (`table_lookup`): entry
/// numbers in slots keyed by the entries' own bytes in the table, so
/// building it allocates one array (not a string per entry) and a lookup
/// hashes the key once and compares bytes in place. The built-in table's
/// slots come made from the build.
struct Lookup {
    slots: Slots,
    /// Longest entry, in characters.
    max_chars: usize,
}

/// Entry number + 1 per slot, 0 for an empty slot; a power of two long.
enum Slots {
    Built(Vec<u32>),
    /// Made by the build: little-endian u32s.
    Static(&'static [u8]),
}

impl Slots {
    fn len(&self) -> usize {
        match self {
            Slots::Built(v) => v.len(),
            Slots::Static(b) => b.len() / 4,
        }
    }

    fn get(&self, at: usize) -> u32 {
        match self {
            Slots::Built(v) => v[at],
            Slots::Static(b) => le_u32(b, 4 * at),
        }
    }
}

impl Lookup {
    /// The lookup of a table whose contents failed their check: it finds
    /// nothing.
    fn empty() -> Lookup {
        Lookup {
            slots: Slots::Built(vec![0; 16]),
            max_chars: 1,
        }
    }

    fn build(table: &Table) -> Lookup {
        let (slots, max_chars) =
            table_lookup::build_slots(table.entries, |i| table.string_bytes(i));
        Lookup {
            slots: Slots::Built(slots),
            max_chars,
        }
    }

    /// The lookup the build made (`u32 max_chars`, then the slots), if it
    /// has the shape `table` needs; `None` makes the caller build one.
    fn made(table: &Table, bytes: &'static [u8]) -> Option<Lookup> {
        if bytes.len() != 4 + 4 * table_lookup::slot_count(table.entries) {
            return None;
        }
        let max_chars = le_u32(bytes, 0) as usize;
        (1..=table_lookup::MAX_CHARS)
            .contains(&max_chars)
            .then(|| Lookup {
                slots: Slots::Static(&bytes[4..]),
                max_chars,
            })
    }

    /// The vector and log-probability of the entry spelled `key`.
    fn get(&self, table: &Table, key: &str) -> Option<(u32, f32)> {
        let key = key.as_bytes();
        let mask = self.slots.len() - 1;
        let mut at = table_lookup::hash(key) as usize & mask;
        loop {
            let slot = self.slots.get(at);
            if slot == 0 {
                return None;
            }
            let i = slot as usize - 1;
            // A slot past the entries (a made lookup that does not fit
            // its table) finds nothing rather than reading out of bounds.
            if i >= table.entries {
                return None;
            }
            if table.string_bytes(i) == key {
                let b = &table.bytes[..];
                return Some((
                    le_u32(b, table.vector_of + 4 * i),
                    le_f32(b, table.scores + 4 * i),
                ));
            }
            at = (at + 1) & mask;
        }
    }
}

pub struct StaticEmbedder {
    table: Table,
    /// Whether the table's contents passed `Table::check`: a table handed
    /// over at run time is checked when made, the built-in one by the
    /// build (`from_static_built`), a static one on first use
    /// (`from_static`).
    checked: OnceLock<Result<(), TableError>>,
    lookup: OnceLock<Lookup>,
    /// The lookup the build made for the built-in table (`table_lookup`).
    made_lookup: Option<&'static [u8]>,
    /// The segmentations of words the table lacks and of CJK runs, by
    /// their text: texts repeat the same words, and a segmentation costs
    /// a lookup per candidate piece (tens per word) where this costs one.
    segmentations: Mutex<FxHashMap<Box<str>, Box<[u32]>>>,
    /// A stable name of the table: its size and BLAKE3 hash prefix
    /// (computed when first asked for, or known from the build for the
    /// built-in table).
    id: OnceLock<String>,
}

impl fmt::Debug for StaticEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StaticEmbedder({} entries)", self.table.entries)
    }
}

impl Table {
    fn parse(bytes: Bytes) -> Result<Table, TableError> {
        let layout = Layout::parse(&bytes).map_err(TableError)?;
        Ok(Table { bytes, layout })
    }

    /// Checks the contents (`Layout::check`).
    fn check(&self) -> Result<(), TableError> {
        self.layout.check(&self.bytes).map_err(TableError)
    }

    /// The bytes of entry `i`'s string (of a checked table).
    fn string_bytes(&self, i: usize) -> &[u8] {
        self.layout.string_bytes(&self.bytes, i)
    }

    fn string(&self, i: usize) -> &str {
        // Checked: in range, on the concatenation of valid UTF-8 strings;
        // an offset inside a character makes the entry empty.
        std::str::from_utf8(self.string_bytes(i)).unwrap_or("")
    }

    /// Adds vector `v` to `out`.
    fn add_vector(&self, v: u32, out: &mut [f32]) {
        let v = v as usize;
        let scale = le_f32(&self.bytes, self.scales + 4 * v);
        let at = self.vectors + v * self.dim;
        for (o, &x) in out.iter_mut().zip(&self.bytes[at..at + self.dim]) {
            *o += f32::from(x as i8) * scale;
        }
    }
}

impl StaticEmbedder {
    /// A table's embedder; checks the whole table first.
    pub fn from_bytes(bytes: impl Into<Arc<[u8]>>) -> Result<StaticEmbedder, TableError> {
        let e = Self::new(Bytes::Shared(bytes.into()))?;
        let checked = e.table.check();
        let _ = e.checked.set(checked.clone());
        checked.map(|()| e)
    }

    /// A table compiled into the program (not copied). Its layout is
    /// checked now, its contents on first use: a process that never
    /// embeds does not pay for reading the whole table. Contents that turn
    /// out damaged make an embedder that knows no token (every vector
    /// zero), and `check` says why.
    pub fn from_static(bytes: &'static [u8]) -> Result<StaticEmbedder, TableError> {
        Self::new(Bytes::Static(bytes))
    }

    /// The built-in table, whose contents the build checked
    /// (`Layout::check`, in core/build.rs: a damaged table fails the
    /// build), with the id and the entry lookup the build made, so that
    /// no process hashes, checks or indexes the table (the lookup is built
    /// as usual if it does not fit the table). The tests
    /// `builtin_table_id_is_the_tables_hash` and
    /// `builtin_table_relates_chinese_and_english` check what the build
    /// made against the table.
    pub fn from_static_built(
        bytes: &'static [u8],
        id: &str,
        lookup: &'static [u8],
    ) -> Result<StaticEmbedder, TableError> {
        let mut e = Self::from_static(bytes)?;
        let _ = e.id.set(id.to_string());
        let _ = e.checked.set(Ok(()));
        e.made_lookup = Some(lookup);
        Ok(e)
    }

    fn new(bytes: Bytes) -> Result<StaticEmbedder, TableError> {
        Ok(StaticEmbedder {
            table: Table::parse(bytes)?,
            checked: OnceLock::new(),
            lookup: OnceLock::new(),
            made_lookup: None,
            segmentations: Mutex::default(),
            id: OnceLock::new(),
        })
    }

    /// The table's contents checked (once; see `from_static`).
    pub fn check(&self) -> Result<(), TableError> {
        self.checked.get_or_init(|| self.table.check()).clone()
    }

    /// The id a table's bytes give: their length and BLAKE3 prefix.
    fn id_of(bytes: &[u8]) -> String {
        format!(
            "static-{}-{}",
            bytes.len(),
            &blake3::hash(bytes).to_hex()[..16]
        )
    }

    /// The table's own description (where it comes from, its licence).
    pub fn info(&self) -> &str {
        let (at, n) = self.table.info;
        std::str::from_utf8(&self.table.bytes[at..at + n]).unwrap_or("")
    }

    /// Number of entries and of distinct vectors.
    pub fn size(&self) -> (usize, usize) {
        (self.table.entries, self.table.n_vectors)
    }

    fn lookup(&self) -> &Lookup {
        self.lookup.get_or_init(|| match self.check() {
            Ok(()) => self
                .made_lookup
                .and_then(|made| Lookup::made(&self.table, made))
                .unwrap_or_else(|| Lookup::build(&self.table)),
            Err(_) => Lookup::empty(),
        })
    }

    /// Calls `f` with the vectors of the most probable segmentation of
    /// `word` (a word or CJK run after its start mark), in order.
    fn segment(
        &self,
        lookup: &Lookup,
        word: &str,
        buffers: &mut Segmenting,
        f: &mut dyn FnMut(u32),
    ) {
        let Segmenting {
            bounds,
            best,
            found,
        } = buffers;
        bounds.clear();
        bounds.extend(word.char_indices().map(|(i, _)| i));
        bounds.push(word.len());
        let n = bounds.len() - 1;
        // best[i]: score of the best segmentation of the first i
        // characters, and the start of its last token (and that token's
        // vector, if any).
        best.clear();
        best.resize(n + 1, (f32::NEG_INFINITY, 0, None));
        best[0].0 = 0.0;
        for end in 1..=n {
            for start in end.saturating_sub(lookup.max_chars)..end {
                if best[start].0 == f32::NEG_INFINITY {
                    continue;
                }
                let (score, vector) =
                    match lookup.get(&self.table, &word[bounds[start]..bounds[end]]) {
                        Some((v, s)) => (s, Some(v)),
                        None if end - start == 1 => (UNKNOWN_SCORE, None),
                        None => continue,
                    };
                let total = best[start].0 + score;
                if total > best[end].0 {
                    best[end] = (total, start, vector);
                }
            }
        }
        found.clear();
        let mut end = n;
        while end > 0 {
            let (_, start, vector) = best[end];
            found.extend(vector);
            end = start;
        }
        for &v in found.iter().rev() {
            f(v);
        }
    }

    /// Calls `f` with the vector of every token of `text`, in order.
    fn tokens(&self, text: &str, f: &mut dyn FnMut(u32)) {
        let mut end = text.len().min(EMBEDDED_AT_MOST);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let text = &text[..end];
        let lookup = self.lookup();
        let mut scratch = Scratch::default();
        let mut word = String::new();
        let mut buffers = Segmenting::default();
        pieces(text, &mut scratch, &mut |p| {
            word.clear();
            word.push(WORD_START);
            match p {
                Piece::Word(w) => {
                    word.push_str(w);
                    if let Some((v, _)) = lookup.get(&self.table, &word) {
                        f(v);
                        return;
                    }
                }
                Piece::Cjk(run) => word.extend(run),
            }
            if word.chars().nth(SEGMENTED_AT_ONCE).is_some() {
                let mut rest = word.as_str();
                while !rest.is_empty() {
                    let cut = rest
                        .char_indices()
                        .nth(SEGMENTED_AT_ONCE)
                        .map_or(rest.len(), |(i, _)| i);
                    self.segment(lookup, &rest[..cut], &mut buffers, f);
                    rest = &rest[cut..];
                }
                return;
            }
            // A poisoned lock only means a panic elsewhere mid-insert; the
            // map is still whole.
            let mut known = self.segmentations.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(vectors) = known.get(word.as_str()) {
                vectors.iter().for_each(|&v| f(v));
                return;
            }
            let mut vectors = Vec::new();
            self.segment(lookup, &word, &mut buffers, &mut |v| vectors.push(v));
            vectors.iter().for_each(|&v| f(v));
            if known.len() >= SEGMENTATIONS_KEPT {
                known.clear();
            }
            known.insert(Box::from(word.as_str()), vectors.into_boxed_slice());
        });
    }
}

/// Reusable buffers of `StaticEmbedder::segment`.
#[derive(Default)]
struct Segmenting {
    /// Byte offset of each character of the word, and its length.
    bounds: Vec<usize>,
    best: Vec<(f32, usize, Option<u32>)>,
    found: Vec<u32>,
}

impl Embedder for StaticEmbedder {
    fn dim(&self) -> usize {
        self.table.dim
    }

    fn id(&self) -> String {
        self.id
            .get_or_init(|| Self::id_of(&self.table.bytes))
            .clone()
    }

    fn embed(&self, text: &str) -> Vec<f32> {
        let mut out = vec![0f32; self.table.dim];
        self.tokens(text, &mut |v| self.table.add_vector(v, &mut out));
        out
    }

    fn word_vector(&self, text: &str) -> Option<Vec<f32>> {
        Some(self.embed(text))
    }

    fn translations(&self, text: &str) -> Vec<(String, f32)> {
        let t = &self.table;
        let mut out: Vec<(String, f32)> = Vec::new();
        self.tokens(text, &mut |v| {
            for i in v as usize * t.k..(v as usize + 1) * t.k {
                let e = le_u32(&t.bytes, t.neighbours + 4 * i);
                if e == u32::MAX {
                    continue;
                }
                let sim = f32::from(t.bytes[t.similarities + i]) / 255.0;
                let word = t.string(e as usize).trim_start_matches(WORD_START);
                out.push((word.to_string(), sim));
            }
        });
        out
    }
}

/// Writes a table (the format above); used by tests and tools that make
/// small tables. `entries` are (string, log-probability, vector number).
pub fn write_table(
    info: &str,
    dim: usize,
    entries: &[(&str, f32, u32)],
    vectors: &[Vec<f32>],
    translations: &[(u32, u32, f32)],
) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    for n in [dim, vectors.len(), entries.len(), info.len()] {
        out.extend_from_slice(&(n as u32).to_le_bytes());
    }
    out.extend_from_slice(info.as_bytes());
    let strings: String = entries.iter().map(|e| e.0).collect();
    out.extend_from_slice(&(strings.len() as u32).to_le_bytes());
    out.extend_from_slice(strings.as_bytes());
    let mut at = 0u32;
    out.extend_from_slice(&at.to_le_bytes());
    for e in entries {
        at += e.0.len() as u32;
        out.extend_from_slice(&at.to_le_bytes());
    }
    for e in entries {
        out.extend_from_slice(&e.1.to_le_bytes());
    }
    for e in entries {
        out.extend_from_slice(&e.2.to_le_bytes());
    }
    let scales: Vec<f32> = vectors
        .iter()
        .map(|v| v.iter().fold(0f32, |m, x| m.max(x.abs())) / 127.0)
        .collect();
    for s in &scales {
        out.extend_from_slice(&s.to_le_bytes());
    }
    for (v, &s) in vectors.iter().zip(&scales) {
        for i in 0..dim {
            let x = v.get(i).copied().unwrap_or(0.0);
            let q = if s > 0.0 { (x / s).round() as i8 } else { 0 };
            out.push(q as u8);
        }
    }
    // One translation per vector at most: (vector, entry, similarity).
    out.extend_from_slice(&1u32.to_le_bytes());
    let of = |v: usize| translations.iter().find(|t| t.0 as usize == v);
    for v in 0..vectors.len() {
        let e = of(v).map_or(u32::MAX, |t| t.1);
        out.extend_from_slice(&e.to_le_bytes());
    }
    for v in 0..vectors.len() {
        out.push(of(v).map_or(0, |t| (t.2 * 255.0).round() as u8));
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A tiny table: "sort" and 排序 share a direction, "tree" and 树
    /// another, and pieces that segment words the table lacks.
    pub(crate) fn small_table() -> Vec<u8> {
        let vectors = vec![
            vec![1.0, 0.0, 0.0, 0.1],
            vec![0.0, 1.0, 0.0, 0.0],
            vec![0.0, 0.0, 1.0, 0.0],
            vec![0.0, 0.0, 0.0, 0.5],
        ];
        write_table(
            "test table",
            4,
            &[
                ("▁sort", -5.0, 0),
                ("▁排序", -8.0, 0),
                ("排", -9.0, 3),
                ("序", -9.0, 3),
                ("▁tree", -6.0, 1),
                ("树", -7.0, 1),
                ("▁quick", -7.0, 2),
                ("ing", -4.0, 3),
            ],
            &vectors,
            &[(0, 0, 0.6)],
        )
    }

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        let n = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>() / (n(a) * n(b))
    }

    #[test]
    fn words_and_segments() {
        let e = StaticEmbedder::from_bytes(small_table()).unwrap();
        assert_eq!(e.dim(), 4);
        assert_eq!(e.info(), "test table");
        assert!(cos(&e.embed("sort"), &e.embed("排序")) > 0.99);
        // "sorting" is not in the table: ▁sort + ing.
        let sorting = e.embed("Sorting");
        assert!(cos(&sorting, &e.embed("sort")) > 0.9);
        assert!(cos(&sorting, &e.embed("sort")) < 0.999);
        // 排序 is one entry: better than 排 + 序.
        assert!(cos(&e.embed("排序"), &e.embed("sort")) > 0.99);
        // A CJK run segments into the best pieces; unknown characters are
        // skipped.
        assert!(cos(&e.embed("二叉树"), &e.embed("tree")) > 0.99);
        assert!(e.embed("zzz 好").iter().all(|&x| x == 0.0));
        assert!(e.embed("").iter().all(|&x| x == 0.0));
        assert!(cos(&e.embed("quickSort"), &e.embed("quick sort")) > 0.999);
        // Vector 0 (sort, 排序) translates to entry 0 (▁sort).
        assert_eq!(e.translations("排序 tree"), vec![("sort".to_string(), 0.6)]);
    }

    #[test]
    fn a_run_longer_than_any_word_is_segmented_in_pieces_and_not_remembered() {
        let e = StaticEmbedder::from_bytes(small_table()).unwrap();
        // Segmented at once, a long run took gigabytes.
        let v = e.embed(&"a".repeat(EMBEDDED_AT_MOST));
        assert!(v.iter().all(|&x| x == 0.0));
        // The first piece keeps the word-start mark, so ▁sort is found.
        assert!(cos(&e.embed(&"sort".repeat(1000)), &e.embed("sort")) > 0.99);
        // Only the start of a text is embedded.
        let long = format!("sort {}", "x".repeat(10 * EMBEDDED_AT_MOST));
        assert!(cos(&e.embed(&format!("{long} tree")), &e.embed("sort")) > 0.99);
        let known = e.segmentations.lock().unwrap();
        assert!(known.keys().all(|w| w.chars().count() <= SEGMENTED_AT_ONCE));
    }

    #[test]
    fn damaged_tables_are_errors() {
        let good = small_table();
        assert!(StaticEmbedder::from_bytes(good.clone()).is_ok());
        for cut in [0, 7, 8, 20, good.len() / 2, good.len() - 1] {
            assert!(
                StaticEmbedder::from_bytes(good[..cut].to_vec()).is_err(),
                "{cut}"
            );
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(StaticEmbedder::from_bytes(longer).is_err());
        let mut bad_magic = good.clone();
        bad_magic[0] = b'X';
        assert!(StaticEmbedder::from_bytes(bad_magic).is_err());
        // Every single-byte change either parses or is refused; none panics,
        // and what parses embeds.
        for i in 0..good.len() {
            let mut b = good.clone();
            b[i] ^= 0xA5;
            if let Ok(e) = StaticEmbedder::from_bytes(b) {
                let _ = e.embed("sorting 排序 tree");
            }
        }
    }

    #[test]
    fn a_static_table_is_checked_on_first_use_and_a_damaged_one_knows_nothing() {
        let mut bytes = small_table();
        // The first entry's string offset (after the header, the
        // description and the strings) made larger than the strings.
        let good = StaticEmbedder::from_bytes(bytes.clone()).unwrap();
        let strings = good.table.strings;
        let offsets = good.table.offsets;
        assert!(strings < offsets);
        bytes[offsets..offsets + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(StaticEmbedder::from_bytes(bytes.clone()).is_err());
        let leaked: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let lazy = StaticEmbedder::from_static(leaked).expect("the layout is whole");
        assert!(
            lazy.checked.get().is_none(),
            "nothing is checked before use"
        );
        assert!(lazy.embed("sort 排序").iter().all(|&x| x == 0.0));
        assert!(lazy.translations("排序").is_empty());
        let why = lazy.check().unwrap_err();
        assert!(why.0.contains("offset"), "{why}");
        // A whole table, made lazily, embeds as the checked one does.
        let whole: &'static [u8] = Box::leak(small_table().into_boxed_slice());
        let lazy = StaticEmbedder::from_static(whole).unwrap();
        assert_eq!(lazy.embed("sort tree"), good.embed("sort tree"));
        assert_eq!(lazy.check(), Ok(()));
    }

    #[cfg(feature = "builtin-table")]
    #[test]
    fn the_builds_lookup_of_the_builtin_table_is_the_one_made_at_run_time() {
        let table = crate::repo::index::BUILTIN_TABLE.unwrap();
        let made = crate::repo::index::BUILTIN_TABLE_LOOKUP;
        let e = StaticEmbedder::from_static(table).unwrap();
        let built = Lookup::build(&e.table);
        let from_build = Lookup::made(&e.table, made).expect("the build's lookup fits");
        assert_eq!(from_build.max_chars, built.max_chars);
        assert_eq!(from_build.slots.len(), built.slots.len());
        assert!((0..built.slots.len()).all(|i| built.slots.get(i) == from_build.slots.get(i)));
        // A lookup of another shape is not used.
        assert!(Lookup::made(&e.table, &made[4..]).is_none());
        let e = crate::repo::index::default_embedder();
        assert!(cos(&e.embed("排序"), &e.embed("sort")) > 0.4);
    }

    #[test]
    fn a_made_lookup_that_does_not_fit_its_table_finds_nothing_and_never_panics() {
        let bytes: &'static [u8] = Box::leak(small_table().into_boxed_slice());
        let e = StaticEmbedder::from_static(bytes).unwrap();
        let n = table_lookup::slot_count(e.table.entries);
        // Every slot names an entry far past the table.
        let mut wrong = vec![0u8; 4 + 4 * n];
        wrong[..4].copy_from_slice(&3u32.to_le_bytes());
        for s in wrong[4..].chunks_mut(4) {
            s.copy_from_slice(&1000u32.to_le_bytes());
        }
        let wrong: &'static [u8] = Box::leak(wrong.into_boxed_slice());
        let e = StaticEmbedder::from_static_built(bytes, "test", wrong).unwrap();
        assert!(e.embed("sort 排序").iter().all(|&x| x == 0.0));
    }

    #[cfg(feature = "builtin-table")]
    #[test]
    fn builtin_table_id_is_the_tables_hash() {
        let table = crate::repo::index::BUILTIN_TABLE.unwrap();
        assert_eq!(
            crate::repo::index::BUILTIN_TABLE_ID,
            StaticEmbedder::id_of(table)
        );
        let e = StaticEmbedder::from_static(table).unwrap();
        assert_eq!(e.id(), crate::repo::index::BUILTIN_TABLE_ID);
    }

    #[cfg(feature = "builtin-table")]
    #[test]
    fn builtin_table_relates_chinese_and_english() {
        let e = StaticEmbedder::from_static(crate::repo::index::BUILTIN_TABLE.unwrap())
            .expect("the built-in table parses");
        assert_eq!(e.check(), Ok(()), "the built-in table's contents are whole");
        assert!(e.info().contains("multilingual-e5-small"), "{}", e.info());
        let sort = e.embed("sort");
        assert!(cos(&e.embed("排序"), &sort) > 0.4);
        assert!(cos(&e.embed("排序"), &e.embed("tree")) < 0.2);
        assert!(cos(&e.embed("树"), &e.embed("tree")) > 0.6);
        let t = e.translations("排序");
        assert!(t.iter().any(|(w, s)| w == "sort" && *s > 0.3), "{t:?}");
    }
}
