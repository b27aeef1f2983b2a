//! `Lexicon`: a Chinese-English dictionary for the lexical scorer.
//!
//! A Chinese query finds English descriptions through it: the query is cut
//! into the dictionary's words (插入排序 → 插入, 排序) and each word also
//! looks for its English glosses (排序 → "sort", "arrange order"), each a
//! phrase whose words all count, weighted by how early its sense comes
//! (`lexical::LexicalIndex::query` says how they are scored). The built-in
//! lexicon is derived from CC-CEDICT by `scripts/build-lexicon`
//! (docs/SEARCH.md: source, licence, how to rebuild).
//!
//! # Format (little-endian)
//!
//! ```text
//! magic "ARBLEX01"
//! u32 n, n bytes: UTF-8 text about the lexicon (source, licence)
//! u32 W: headwords, sorted by their UTF-8 bytes, no two equal
//! u32 n, n bytes: the headwords, concatenated
//! u32 × (W + 1): offset of each headword in those bytes
//! u32 E: English words, sorted by their bytes
//! u32 n, n bytes: the English words, concatenated
//! u32 × (E + 1): offset of each English word
//! u32 n, n bytes: the glosses of every headword, in headword order: per
//!     headword a count, then per gloss its weight (u8, /255), its number
//!     of words and each word's number (LEB128 unsigned)
//! u32 × (W + 1): offset of each headword's glosses in those bytes
//! ```
//!
//! Parsing checks every length, offset, order and gloss: a damaged lexicon
//! is an error, never a panic. Lookups are binary searches in place: a
//! lexicon costs no allocation beyond its bytes.

use std::fmt;
use std::sync::{Arc, OnceLock};

use super::bytes::{le_u32, Bytes, Reader};

const MAGIC: &[u8; 8] = b"ARBLEX01";
/// The longest headword considered when cutting a query, in characters.
const LONGEST: usize = 8;
/// Words of a gloss, at most.
const MAX_GLOSS_WORDS: usize = 16;
/// Headwords an English word is translated into, at most.
const REVERSE_KEPT: usize = 4;

/// Why a lexicon was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexiconError(pub String);

impl fmt::Display for LexiconError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid lexicon: {}", self.0)
    }
}

impl std::error::Error for LexiconError {}

/// What `Reader` found wrong with the layout.
impl From<String> for LexiconError {
    fn from(why: String) -> Self {
        LexiconError(why)
    }
}

/// A list of strings in the lexicon's bytes.
#[derive(Clone, Copy)]
struct Strings {
    count: usize,
    bytes: usize,
    offsets: usize,
    len: usize,
}

pub struct Lexicon {
    bytes: Bytes,
    info: (usize, usize),
    heads: Strings,
    english: Strings,
    glosses: usize,
    gloss_offsets: usize,
    /// Once the contents are checked (`check`): the longest headword, in
    /// characters (at most `LONGEST`); `None` if they are damaged (the
    /// lexicon then knows no word).
    checked: OnceLock<Option<usize>>,
    /// The length of the glosses' bytes.
    glosses_len: usize,
    /// (English word, headword, weight) of every one-word gloss of a
    /// headword of two characters or more, by English word: built on
    /// first use.
    reverse: OnceLock<Vec<(u32, u32, u8)>>,
    /// That list as the build made it for the built-in lexicon
    /// (`encode_reverse`), used when it fits this lexicon.
    made_reverse: Option<&'static [u8]>,
}

impl fmt::Debug for Lexicon {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Lexicon({} headwords)", self.heads.count)
    }
}

/// The offset of `count + 1` offsets (u32s).
fn read_offsets(r: &mut Reader, count: usize, what: &str) -> Result<usize, String> {
    let count = count
        .checked_add(1)
        .ok_or_else(|| format!("{what} too large"))?;
    r.array(count, 4, what)
}

/// A count, a blob of `n` bytes and `count + 1` offsets into it (their
/// values are checked by `check_strings`).
fn read_strings(r: &mut Reader, what: &str) -> Result<Strings, String> {
    let count = r.u32(what)?;
    let n = r.u32(what)?;
    let bytes = r.take(n, what)?;
    let offsets = read_offsets(r, count, what)?;
    Ok(Strings {
        count,
        bytes,
        offsets,
        len: n,
    })
}

/// Checks a list of strings: offsets in order, in range and on UTF-8
/// boundaries, no entry empty, and (if `sorted`) entries in strictly
/// ascending byte order.
fn check_strings(b: &[u8], list: Strings, what: &str, sorted: bool) -> Result<(), LexiconError> {
    let Strings {
        count,
        bytes,
        offsets,
        len: n,
    } = list;
    let text = std::str::from_utf8(&b[bytes..bytes + n])
        .map_err(|_| LexiconError(format!("{what}: not UTF-8")))?;
    let mut last = 0;
    let mut previous: &[u8] = &[];
    for i in 0..=count {
        let o = le_u32(b, offsets + 4 * i);
        if o < last || o > n || !text.is_char_boundary(o) || (i == 0 && o != 0) {
            return Err(LexiconError(format!(
                "{what}: offset {i} out of order or range"
            )));
        }
        if i > 0 {
            let s = &text.as_bytes()[last..o];
            if s.is_empty() {
                return Err(LexiconError(format!("{what}: entry {} is empty", i - 1)));
            }
            if sorted && i > 1 && previous >= s {
                return Err(LexiconError(format!(
                    "{what}: entry {} is out of order",
                    i - 1
                )));
            }
            previous = s;
        }
        last = o;
    }
    if last != n {
        return Err(LexiconError(format!("{what}: bytes after the last entry")));
    }
    Ok(())
}

/// Reads a LEB128 number at `*at`, below `limit`.
fn leb(b: &[u8], at: &mut usize, end: usize) -> Option<usize> {
    let mut n: usize = 0;
    for shift in (0..35).step_by(7) {
        if *at >= end {
            return None;
        }
        let x = b[*at];
        *at += 1;
        n |= usize::from(x & 0x7f) << shift;
        if x & 0x80 == 0 {
            return Some(n);
        }
    }
    None
}

impl Lexicon {
    /// A lexicon's bytes, checked whole first.
    pub fn from_bytes(bytes: impl Into<Arc<[u8]>>) -> Result<Lexicon, LexiconError> {
        let lexicon = Self::parse(Bytes::Shared(bytes.into()))?;
        let longest = lexicon.check()?;
        let _ = lexicon.checked.set(Some(longest));
        Ok(lexicon)
    }

    /// A lexicon compiled into the program (not copied). Its layout is
    /// checked now, its contents on first use (a check of every headword
    /// and gloss, tens of milliseconds, which a process that never searches
    /// should not pay); contents that turn out damaged make a lexicon that
    /// knows no word, and `check` says why.
    pub fn from_static(bytes: &'static [u8]) -> Result<Lexicon, LexiconError> {
        Self::parse(Bytes::Static(bytes))
    }

    /// The built-in lexicon, whose contents the build checked (core/build.rs
    /// runs `check` on these same bytes and fails on damage; it gave
    /// `longest`) and whose English-to-Chinese list it made
    /// (`encode_reverse`), so that a process's first search does neither:
    /// tens of milliseconds in the sandbox.
    pub fn from_static_checked(
        bytes: &'static [u8],
        longest: usize,
        reverse: &'static [u8],
    ) -> Result<Lexicon, LexiconError> {
        let mut lexicon = Self::parse(Bytes::Static(bytes))?;
        let _ = lexicon.checked.set(Some(longest.clamp(1, LONGEST)));
        lexicon.made_reverse = Some(reverse);
        Ok(lexicon)
    }

    /// The layout: every part's length within the bytes.
    fn parse(bytes: Bytes) -> Result<Lexicon, LexiconError> {
        let b = &bytes[..];
        if b.len() < 8 || &b[..8] != MAGIC {
            return Err(LexiconError("not an Arbores lexicon (bad magic)".into()));
        }
        let mut r = Reader { bytes: b, at: 8 };
        let n = r.u32("the description")?;
        let info = (r.take(n, "the description")?, n);
        if std::str::from_utf8(&b[info.0..info.0 + n]).is_err() {
            return Err(LexiconError("the description is not UTF-8".into()));
        }
        let heads = read_strings(&mut r, "the headwords")?;
        let english = read_strings(&mut r, "the English words")?;
        let glosses_len = r.u32("the glosses")?;
        let glosses = r.take(glosses_len, "the glosses")?;
        let gloss_offsets = read_offsets(&mut r, heads.count, "the gloss offsets")?;
        if r.at != b.len() {
            return Err(LexiconError(format!(
                "{} bytes after the gloss offsets",
                b.len() - r.at
            )));
        }
        Ok(Lexicon {
            bytes,
            info,
            heads,
            english,
            glosses,
            gloss_offsets,
            checked: OnceLock::new(),
            glosses_len,
            reverse: OnceLock::new(),
            made_reverse: None,
        })
    }

    /// Checks the contents: the strings, and every headword's glosses
    /// (in order, decoding to English words of the lexicon). The longest
    /// headword's length, in characters (at most `LONGEST`).
    pub fn check(&self) -> Result<usize, LexiconError> {
        let b = &self.bytes[..];
        check_strings(b, self.heads, "the headwords", true)?;
        check_strings(b, self.english, "the English words", false)?;
        let n = self.glosses_len;
        let mut last = 0;
        let mut longest = 1;
        let english = self.english.count;
        for i in 0..self.heads.count {
            let (start, end) = self.gloss_range(i);
            if start != last || end < start || end > n {
                return Err(LexiconError(format!(
                    "the glosses of headword {i} are out of order or range"
                )));
            }
            last = end;
            if !self.each_gloss(i, &mut |_, words| words.iter().all(|&w| w < english)) {
                return Err(LexiconError(format!(
                    "the glosses of headword {i} do not decode"
                )));
            }
            if longest < LONGEST {
                longest = longest.max(self.head(i).chars().count());
            }
        }
        if last != n || le_u32(b, self.gloss_offsets + 4 * self.heads.count) != n {
            return Err(LexiconError("bytes after the last gloss".into()));
        }
        Ok(longest.min(LONGEST))
    }

    /// The longest headword once the contents are checked, or `None` if
    /// they are damaged.
    fn ready(&self) -> Option<usize> {
        *self.checked.get_or_init(|| self.check().ok())
    }

    /// The lexicon's own description (where it comes from, its licence).
    pub fn info(&self) -> &str {
        let (at, n) = self.info;
        std::str::from_utf8(&self.bytes[at..at + n]).unwrap_or("")
    }

    /// Number of headwords.
    pub fn len(&self) -> usize {
        self.heads.count
    }

    pub fn is_empty(&self) -> bool {
        self.heads.count == 0
    }

    fn string(&self, list: Strings, i: usize) -> &str {
        let b = &self.bytes[..];
        let start = le_u32(b, list.offsets + 4 * i);
        let end = le_u32(b, list.offsets + 4 * (i + 1));
        // Checked in `parse`: in order, in range, on character boundaries.
        std::str::from_utf8(&b[list.bytes + start..list.bytes + end]).unwrap_or("")
    }

    fn head(&self, i: usize) -> &str {
        self.string(self.heads, i)
    }

    fn gloss_range(&self, i: usize) -> (usize, usize) {
        let b = &self.bytes[..];
        (
            le_u32(b, self.gloss_offsets + 4 * i),
            le_u32(b, self.gloss_offsets + 4 * (i + 1)),
        )
    }

    /// Calls `f` with each gloss of headword `i` (its weight and its
    /// words' numbers) while it returns true; false if a gloss does not
    /// decode or `f` said stop.
    fn each_gloss(&self, i: usize, f: &mut dyn FnMut(f32, &[usize]) -> bool) -> bool {
        let (start, end) = self.gloss_range(i);
        let b = &self.bytes[self.glosses..];
        if start > end || end > b.len() {
            return false;
        }
        let mut at = start;
        let Some(count) = leb(b, &mut at, end) else {
            return false;
        };
        let mut words = [0usize; MAX_GLOSS_WORDS];
        for _ in 0..count {
            if at >= end {
                return false;
            }
            let weight = f32::from(b[at]) / 255.0;
            at += 1;
            let Some(n) = leb(b, &mut at, end).filter(|&n| n <= MAX_GLOSS_WORDS) else {
                return false;
            };
            for w in words.iter_mut().take(n) {
                match leb(b, &mut at, end) {
                    Some(x) => *w = x,
                    None => return false,
                }
            }
            if !f(weight, &words[..n]) {
                return false;
            }
        }
        at == end
    }

    /// The headword number of `word`.
    fn find(&self, word: &str) -> Option<usize> {
        self.ready()?;
        let (mut lo, mut hi) = (0, self.heads.count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.head(mid).as_bytes().cmp(word.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// Whether `word` is a headword.
    pub fn contains(&self, word: &str) -> bool {
        self.find(word).is_some()
    }

    /// The English glosses of `word`, each a phrase (its words separated by
    /// spaces) with its weight from 0 to 1: empty if it is no headword.
    pub fn glosses(&self, word: &str) -> Vec<(String, f32)> {
        let mut out = Vec::new();
        if let Some(i) = self.find(word) {
            self.each_gloss(i, &mut |weight, words| {
                let mut phrase = String::new();
                for &w in words {
                    if !phrase.is_empty() {
                        phrase.push(' ');
                    }
                    phrase.push_str(self.string(self.english, w));
                }
                out.push((phrase, weight));
                true
            });
        }
        out
    }

    /// The English word `word`'s number.
    fn english_number(&self, word: &str) -> Option<usize> {
        self.ready()?;
        let (mut lo, mut hi) = (0, self.english.count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.string(self.english, mid).cmp(word) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The headwords (of two characters or more) that `word` glosses on
    /// its own, with that gloss's weight, best first: the other direction
    /// of `glosses` (sort → 排序).
    pub fn headwords_for(&self, word: &str) -> Vec<(String, f32)> {
        let Some(e) = self.english_number(word) else {
            return Vec::new();
        };
        let reverse = self.reverse.get_or_init(|| {
            self.made_reverse
                .and_then(|made| self.decode_reverse(made))
                .unwrap_or_else(|| self.reverse_entries())
        });
        let start = reverse.partition_point(|r| (r.0 as usize) < e);
        let mut out: Vec<(String, f32)> = reverse[start..]
            .iter()
            .take_while(|r| r.0 as usize == e)
            .map(|r| (self.head(r.1 as usize).to_string(), f32::from(r.2) / 255.0))
            .collect();
        out.truncate(REVERSE_KEPT);
        out
    }

    /// (English word, headword, weight × 255) of every one-word gloss of a
    /// headword of two characters or more, by English word, best first.
    pub fn reverse_entries(&self) -> Vec<(u32, u32, u8)> {
        let mut out = Vec::new();
        for i in 0..self.heads.count {
            if self.head(i).chars().nth(1).is_none() {
                continue;
            }
            self.each_gloss(i, &mut |weight, words| {
                if let [w] = words {
                    out.push((*w as u32, i as u32, (weight * 255.0).round() as u8));
                }
                true
            });
        }
        out.sort_unstable_by_key(|r| (r.0, std::cmp::Reverse(r.2), r.1));
        out
    }

    /// `reverse_entries` as bytes: 9 per entry (two little-endian u32s and
    /// the weight).
    pub fn encode_reverse(entries: &[(u32, u32, u8)]) -> Vec<u8> {
        let mut out = Vec::with_capacity(9 * entries.len());
        for &(e, h, w) in entries {
            out.extend_from_slice(&e.to_le_bytes());
            out.extend_from_slice(&h.to_le_bytes());
            out.push(w);
        }
        out
    }

    /// Bytes of `encode_reverse`, if they fit this lexicon (every number
    /// in range, in order); `None` makes the caller gather them.
    fn decode_reverse(&self, b: &[u8]) -> Option<Vec<(u32, u32, u8)>> {
        if b.len() % 9 != 0 {
            return None;
        }
        let entries: Vec<(u32, u32, u8)> = b
            .chunks_exact(9)
            .map(|c| (le_u32(c, 0) as u32, le_u32(c, 4) as u32, c[8]))
            .collect();
        let fits = entries
            .iter()
            .all(|&(e, h, _)| (e as usize) < self.english.count && (h as usize) < self.heads.count)
            && entries.windows(2).all(|p| p[0].0 <= p[1].0);
        fits.then_some(entries)
    }

    /// Cuts a run of CJK characters into headwords: the lengths of its
    /// words, in characters, summing to the run's length. The cut has the
    /// fewest words (a character no headword covers is a word of its own);
    /// among as few, the one whose words are the longest earliest.
    pub fn cut(&self, run: &[char]) -> Vec<usize> {
        let n = run.len();
        let Some(longest) = self.ready() else {
            return vec![1; n];
        };
        // best[i]: fewest words covering run[i..], and the first's length.
        let mut best = vec![(usize::MAX, 1usize); n + 1];
        best[n] = (0, 0);
        let mut word = String::new();
        for start in (0..n).rev() {
            word.clear();
            for len in 1..=longest.min(n - start) {
                word.push(run[start + len - 1]);
                if len > 1 && !self.contains(&word) {
                    continue;
                }
                let words = best[start + len].0.saturating_add(1);
                // A longer first word wins a tie (`>=` since lengths rise).
                if words <= best[start].0 {
                    best[start] = (words, len);
                }
            }
        }
        let mut out = Vec::new();
        let mut at = 0;
        while at < n {
            let len = best[at].1.max(1);
            out.push(len);
            at += len;
        }
        out
    }
}

/// Writes a lexicon (the format above) of `(headword, [(gloss words,
/// weight)])`; used by tests and tools that make small lexicons.
pub fn write_lexicon(info: &str, entries: &[(&str, &[(&str, f32)])]) -> Vec<u8> {
    let mut heads: Vec<&(&str, &[(&str, f32)])> = entries.iter().collect();
    heads.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    heads.dedup_by(|a, b| a.0 == b.0);
    let mut english: Vec<&str> = entries
        .iter()
        .flat_map(|e| e.1.iter().flat_map(|g| g.0.split(' ')))
        .filter(|w| !w.is_empty())
        .collect();
    english.sort_unstable();
    english.dedup();
    let number = |w: &str| english.binary_search(&w).unwrap_or(0);
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    let u32 = |out: &mut Vec<u8>, n: usize| out.extend_from_slice(&(n as u32).to_le_bytes());
    let leb = |out: &mut Vec<u8>, mut n: usize| loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            break;
        }
        out.push(b | 0x80);
    };
    u32(&mut out, info.len());
    out.extend_from_slice(info.as_bytes());
    for list in [
        heads.iter().map(|h| h.0).collect::<Vec<_>>(),
        english.clone(),
    ] {
        u32(&mut out, list.len());
        u32(&mut out, list.iter().map(|s| s.len()).sum());
        for s in &list {
            out.extend_from_slice(s.as_bytes());
        }
        let mut at = 0;
        u32(&mut out, 0);
        for s in &list {
            at += s.len();
            u32(&mut out, at);
        }
    }
    let mut stream = Vec::new();
    let mut offsets = vec![0];
    for h in &heads {
        leb(&mut stream, h.1.len());
        for (words, weight) in h.1 {
            stream.push((weight.clamp(0.0, 1.0) * 255.0).round() as u8);
            let ws: Vec<&str> = words.split(' ').filter(|w| !w.is_empty()).collect();
            leb(&mut stream, ws.len());
            for w in ws {
                leb(&mut stream, number(w));
            }
        }
        offsets.push(stream.len());
    }
    u32(&mut out, stream.len());
    out.extend_from_slice(&stream);
    for o in offsets {
        u32(&mut out, o);
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn small_lexicon() -> Vec<u8> {
        write_lexicon(
            "test lexicon",
            &[
                ("排序", &[("sort", 1.0), ("arrange order", 0.8)]),
                ("插入", &[("insert", 1.0)]),
                ("算法", &[("algorithm", 1.0)]),
                ("复利", &[("compound interest", 1.0)]),
                ("堆", &[("pile", 1.0), ("heap", 0.8)]),
                ("二叉树", &[("binary tree", 1.0)]),
                ("树", &[("tree", 1.0)]),
                ("二叉", &[]),
            ],
        )
    }

    #[test]
    fn looks_up_and_cuts() {
        let l = Lexicon::from_bytes(small_lexicon()).unwrap();
        assert_eq!(l.info(), "test lexicon");
        assert_eq!(l.len(), 8);
        assert_eq!(
            l.glosses("排序"),
            vec![
                ("sort".to_string(), 1.0),
                ("arrange order".to_string(), 0.8)
            ]
        );
        assert_eq!(
            l.glosses("复利"),
            vec![("compound interest".to_string(), 1.0)]
        );
        assert!(l.glosses("树木").is_empty());
        assert!(l.contains("二叉") && l.glosses("二叉").is_empty());
        let cut = |s: &str| l.cut(&s.chars().collect::<Vec<_>>());
        assert_eq!(cut("插入排序"), vec![2, 2]);
        assert_eq!(cut("堆排序算法"), vec![1, 2, 2]);
        // The fewest words: 二叉树 whole, not 二叉 + 树.
        assert_eq!(cut("二叉树排序"), vec![3, 2]);
        // Characters no headword covers stand alone.
        assert_eq!(cut("快速排序"), vec![1, 1, 2]);
        assert_eq!(cut(""), Vec::<usize>::new());
        // The other direction: headwords of two characters or more that a
        // word glosses on its own.
        assert_eq!(l.headwords_for("sort"), vec![("排序".to_string(), 1.0)]);
        assert_eq!(
            l.headwords_for("algorithm"),
            vec![("算法".to_string(), 1.0)]
        );
        assert!(l.headwords_for("heap").is_empty()); // 堆 is one character
        assert!(l.headwords_for("interest").is_empty()); // only in a phrase
        assert!(l.headwords_for("zebra").is_empty());
    }

    #[test]
    fn damaged_lexicons_are_errors() {
        let good = small_lexicon();
        assert!(Lexicon::from_bytes(good.clone()).is_ok());
        for cut in [0, 7, 8, 12, good.len() / 2, good.len() - 1] {
            assert!(Lexicon::from_bytes(good[..cut].to_vec()).is_err(), "{cut}");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(Lexicon::from_bytes(longer).is_err());
        // Read lazily (as the built-in one is), damaged contents make a
        // lexicon that knows no word, and `check` says why.
        let mut bad = good.clone();
        let last = bad.len() - 4; // the end of the last headword's glosses
        bad[last] ^= 1;
        let leaked: &'static [u8] = Box::leak(bad.into_boxed_slice());
        let lazy = Lexicon::from_static(leaked).unwrap();
        assert!(lazy.check().is_err());
        assert!(lazy.glosses("排序").is_empty() && !lazy.contains("排序"));
        assert_eq!(lazy.cut(&['插', '入']), vec![1, 1]);
        assert!(lazy.headwords_for("sort").is_empty());
        // Every single-byte change either parses or is refused; none panics,
        // and what parses answers.
        for i in 0..good.len() {
            for flip in [0x01, 0x80, 0xA5] {
                let mut b = good.clone();
                b[i] ^= flip;
                if let Ok(l) = Lexicon::from_bytes(b) {
                    let _ = l.glosses("排序");
                    let _ = l.cut(&"插入排序算法".chars().collect::<Vec<_>>());
                }
            }
        }
    }

    #[cfg(feature = "builtin-lexicon")]
    #[test]
    fn the_builds_reverse_list_and_check_of_the_builtin_lexicon_are_the_engines() {
        let bytes = crate::repo::index::BUILTIN_LEXICON.unwrap();
        let made = crate::repo::index::BUILTIN_LEXICON_REVERSE;
        let lexicon = Lexicon::from_static(bytes).unwrap();
        assert_eq!(
            lexicon.check(),
            Ok(crate::repo::index::BUILTIN_LEXICON_LONGEST)
        );
        let gathered = lexicon.reverse_entries();
        assert_eq!(lexicon.decode_reverse(made), Some(gathered));
        // A list that does not fit is not used: the lexicon gathers its own.
        assert_eq!(lexicon.decode_reverse(&made[1..]), None);
        let mut wrong = made.to_vec();
        wrong[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(lexicon.decode_reverse(&wrong), None);
        let leaked: &'static [u8] = Box::leak(wrong.into_boxed_slice());
        let fallback = Lexicon::from_static_checked(bytes, 4, leaked).unwrap();
        assert_eq!(
            fallback.headwords_for("sort"),
            lexicon.headwords_for("sort")
        );
        let built_in = crate::repo::index::default_lexicon().unwrap();
        assert_eq!(
            built_in.headwords_for("sort"),
            lexicon.headwords_for("sort")
        );
        assert!(!built_in.headwords_for("sort").is_empty());
    }

    #[cfg(feature = "builtin-lexicon")]
    #[test]
    fn builtin_lexicon_translates() {
        let l = Lexicon::from_static(crate::repo::index::BUILTIN_LEXICON.unwrap())
            .expect("the built-in lexicon parses");
        assert!(l.info().contains("CC-CEDICT"), "{}", l.info());
        assert!(l.glosses("排序").iter().any(|g| g.0 == "sort"));
        assert_eq!(l.cut(&"插入排序".chars().collect::<Vec<_>>()), vec![2, 2]);
    }
}
