//! The symbol-name index: each suggested symbol name → the nodes that
//! suggest it.
//!
//! The index is a persistent sorted map (`cas::sorted`) keyed by (length of
//! the name in characters, name, node id): persisted with each version and
//! read lazily, so a search in a store of a million nodes reads the few
//! blobs on its path. Names of one length come in byte order (code point
//! order for UTF-8), so exact lookup is a seek, and prefix search walks the
//! matches shortest first — the order of the results — with one seek per
//! length, stopping once it has enough. Wildcard and regex patterns that
//! start with a literal walk only the names with that prefix, in the same
//! way; others test every name (shortest first, until enough are found).
//! Fuzzy search walks only the lengths within its distance of the
//! pattern's, each like a trie, sharing the edit distance rows of common
//! prefixes and skipping every name below a prefix that is already too far
//! away.
//!
//! Match quality, the order of results: a name equal to the pattern first
//! (not in regex search, where a pattern is not a name),
//! then smaller edit distance (fuzzy only), then shorter names (in
//! characters), then smaller ids. A node that matches through several of
//! its names appears once, ranked by its best one.

use std::collections::BTreeSet;

use regex::RegexBuilder;

use super::pairs::{NodeKeys, PairIndex};
use super::IndexError;
use crate::repo::cas::StoreError;
use crate::repo::node::{Node, NodeId};

/// Longest pattern accepted by wildcard, regex and fuzzy search, in
/// characters: their cost per name grows with the pattern.
pub const MAX_PATTERN_CHARS: usize = 1024;
/// Fuzzy search's pattern limit is lower: it fills a row of that width for
/// each name character it visits.
pub const MAX_FUZZY_PATTERN_CHARS: usize = 128;
/// The largest edit distance fuzzy search accepts.
pub const MAX_FUZZY_DISTANCE: u32 = 8;
/// Limits of the regex engine: compiled program size and lazy DFA cache, in
/// bytes, and nesting depth. A pattern such as `a{100000}{100000}` fails to
/// compile with a clear error instead of exhausting memory; matching is
/// linear in the name's length (the engine never backtracks), so
/// `(a*)*b` on long names costs no more than any other pattern.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
const REGEX_DFA_SIZE_LIMIT: usize = 2 << 20;
const REGEX_NEST_LIMIT: u32 = 64;

/// How `search` reads its pattern.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SymbolMode {
    /// The name equals the pattern.
    Exact,
    /// The name starts with the pattern.
    #[default]
    Prefix,
    /// The whole name matches the pattern, where `*` is any run of
    /// characters, `?` exactly one, and `\` makes the next character literal.
    Wildcard,
    /// The regular expression matches somewhere in the name (anchor it with
    /// `^`/`$` for more): `sort$` finds names that end in "sort".
    Regex,
    /// The Levenshtein distance (in characters) between name and pattern is
    /// at most `max_distance`; `None` picks one from the pattern's length.
    Fuzzy { max_distance: Option<u32> },
}

impl SymbolMode {
    /// The mode named by the `arb:search-by-symbol` argument.
    pub fn parse(name: &str) -> Option<SymbolMode> {
        Some(match name {
            "exact" => SymbolMode::Exact,
            "prefix" => SymbolMode::Prefix,
            "wildcard" => SymbolMode::Wildcard,
            "regex" => SymbolMode::Regex,
            "fuzzy" => SymbolMode::Fuzzy { max_distance: None },
            _ => return None,
        })
    }
}

/// The default fuzzy distance: one typo in short names, more in longer ones.
pub fn default_fuzzy_distance(pattern_chars: usize) -> u32 {
    match pattern_chars {
        0..=4 => 1,
        5..=8 => 2,
        _ => 3,
    }
}

/// One node found by a symbol search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolHit {
    pub id: NodeId,
    /// The node's best-matching name.
    pub name: String,
    /// The name equals the pattern (exact, prefix and fuzzy search, and a
    /// wildcard pattern without `*` or `?`).
    pub exact: bool,
    /// Edit distance between name and pattern for fuzzy search; 0 otherwise.
    pub distance: u32,
}

/// Sort key of a hit: (not exact, distance, length in characters, id).
type Rank = (bool, u32, usize, NodeId);

/// The symbol-name index of one version, persisted with it: a sorted map
/// whose keys are (length of the name in characters, name, node id), so
/// that exact lookup is a seek, and the names of one length are walked in
/// name order, shortest lengths first: the order of results.
pub type SymbolIndex = PairIndex<ByName>;

/// The keys of a node's distinct, non-empty names.
pub struct ByName;

impl NodeKeys for ByName {
    fn keys(node: &Node) -> Vec<Vec<u8>> {
        names(node).into_iter().map(|n| key(n, node.id)).collect()
    }
}

/// The key of `name` for `id`.
fn key(name: &str, id: NodeId) -> Vec<u8> {
    let mut k = Vec::with_capacity(12 + name.len());
    k.extend_from_slice(&(name.chars().count() as u32).to_be_bytes());
    k.extend_from_slice(name.as_bytes());
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// The start of the keys of names of `len` characters that begin with
/// `prefix`.
fn seek_key(len: usize, prefix: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(4 + prefix.len());
    k.extend_from_slice(&(len as u32).to_be_bytes());
    k.extend_from_slice(prefix.as_bytes());
    k
}

/// (length, name, id) of a key; `None` for a key that is not one (a
/// damaged index is an error, never a wrong hit).
fn parse_key(k: &[u8]) -> Option<(usize, &str, NodeId)> {
    if k.len() < 12 {
        return None;
    }
    let len = u32::from_be_bytes(k[..4].try_into().ok()?) as usize;
    let name = std::str::from_utf8(&k[4..k.len() - 8]).ok()?;
    let id = u64::from_be_bytes(k[k.len() - 8..].try_into().ok()?);
    Some((len, name, id))
}

fn damaged() -> IndexError {
    IndexError::Store(StoreError::Inconsistent(
        "the symbol index holds a key that is not a name".into(),
    ))
}

/// A node's distinct, non-empty names, in the order given.
fn names(node: &Node) -> Vec<&str> {
    let mut wanted: Vec<&str> = Vec::with_capacity(node.symbol_names.len());
    for n in &node.symbol_names {
        // An empty name cannot be looked up meaningfully.
        if !n.is_empty() && !wanted.contains(&n.as_str()) {
            wanted.push(n);
        }
    }
    wanted
}

impl PairIndex<ByName> {
    /// The nodes whose names match `pattern`, best first (see the module
    /// documentation), at most `limit` of them.
    pub fn search(
        &self,
        pattern: &str,
        mode: SymbolMode,
        limit: usize,
    ) -> Result<Vec<SymbolHit>, IndexError> {
        let mut hits: Vec<(Rank, String)> = Vec::new();
        let pattern_chars = pattern.chars().count();
        match mode {
            SymbolMode::Exact => {
                let start = seek_key(pattern_chars, pattern);
                for e in self.map().range_from(&start) {
                    let (k, _) = e.map_err(IndexError::Store)?;
                    if !k.starts_with(&start) || k.len() != start.len() + 8 {
                        break;
                    }
                    let (_, name, id) = parse_key(k).ok_or_else(damaged)?;
                    hits.push(((false, 0, pattern_chars, id), name.to_string()));
                }
            }
            SymbolMode::Prefix => {
                self.scan(pattern, limit, &mut hits, |name| Some(name == pattern))?;
            }
            SymbolMode::Wildcard => {
                check_length(pattern_chars, MAX_PATTERN_CHARS)?;
                let glob = Glob::parse(pattern);
                let prefix = glob.literal_prefix();
                // Without `*` or `?` the pattern is a name, and its match exact.
                let literal = glob.is_literal().then(|| prefix.clone());
                let mut scratch = Vec::new();
                self.scan(&prefix, limit, &mut hits, |name| {
                    glob.matches(name, &mut scratch)
                        .then(|| literal.as_deref() == Some(name))
                })?;
            }
            SymbolMode::Regex => {
                check_length(pattern_chars, MAX_PATTERN_CHARS)?;
                let re = RegexBuilder::new(pattern)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
                    .nest_limit(REGEX_NEST_LIMIT)
                    .build()
                    .map_err(|e| {
                        IndexError::BadPattern(format!("invalid regular expression: {e}"))
                    })?;
                let prefix = anchored_literal_prefix(pattern);
                self.scan(&prefix, limit, &mut hits, |name| {
                    re.is_match(name).then_some(false)
                })?;
            }
            SymbolMode::Fuzzy { max_distance } => {
                check_length(pattern_chars, MAX_FUZZY_PATTERN_CHARS)?;
                let max = max_distance
                    .unwrap_or_else(|| default_fuzzy_distance(pattern_chars))
                    .min(MAX_FUZZY_DISTANCE);
                self.fuzzy(pattern, max, &mut hits)?;
            }
        }
        Ok(finish(hits, limit))
    }

    /// The first name length at or above `len`, if any.
    fn next_length(&self, len: usize) -> Result<Option<usize>, IndexError> {
        if len > u32::MAX as usize {
            return Ok(None);
        }
        match self.map().range_from(&seek_key(len, "")).next() {
            None => Ok(None),
            Some(e) => {
                let (k, _) = e.map_err(IndexError::Store)?;
                Ok(Some(parse_key(k).ok_or_else(damaged)?.0))
            }
        }
    }

    /// The names that start with `prefix` and that `accept` takes (it
    /// says whether the match is exact), shortest first: one seek per
    /// distinct name length. Shorter names rank first, so the walk stops
    /// after the length at which `limit` nodes have been found: a broad
    /// prefix costs about as much as a narrow one.
    fn scan(
        &self,
        prefix: &str,
        limit: usize,
        hits: &mut Vec<(Rank, String)>,
        mut accept: impl FnMut(&str) -> Option<bool>,
    ) -> Result<(), IndexError> {
        let mut found: BTreeSet<NodeId> = BTreeSet::new();
        let mut len = prefix.chars().count();
        while let Some(l) = self.next_length(len)? {
            let start = seek_key(l, prefix);
            let mut last: Option<(String, Option<bool>)> = None;
            for e in self.map().range_from(&start) {
                let (k, _) = e.map_err(IndexError::Store)?;
                let (kl, name, id) = parse_key(k).ok_or_else(damaged)?;
                if kl != l || !name.starts_with(prefix) {
                    break;
                }
                // A name's ids follow one another: ask `accept` once.
                let exact = match &last {
                    Some((n, verdict)) if n == name => *verdict,
                    _ => {
                        let verdict = accept(name);
                        last = Some((name.to_string(), verdict));
                        verdict
                    }
                };
                if let Some(exact) = exact {
                    found.insert(id);
                    hits.push(((!exact, 0, l, id), name.to_string()));
                }
            }
            if found.len() >= limit {
                break;
            }
            len = l + 1;
        }
        Ok(())
    }

    /// Levenshtein search. Only names whose length is within `max` of the
    /// pattern's can match, so only those lengths are walked; within one,
    /// names come in order, as over a trie: the rows of the distance table
    /// for a common prefix are kept from one name to the next, and once
    /// every entry of a row exceeds `max`, no name below that prefix can
    /// match, so the walk seeks past all of them.
    fn fuzzy(
        &self,
        pattern: &str,
        max: u32,
        hits: &mut Vec<(Rank, String)>,
    ) -> Result<(), IndexError> {
        let pat: Vec<char> = pattern.chars().collect();
        let m = pat.len();
        let lo = m.saturating_sub(max as usize);
        let hi = m + max as usize;
        let mut len = lo;
        while let Some(l) = self.next_length(len)? {
            if l > hi {
                break;
            }
            len = l + 1;
            // rows[i] = distances between the first i characters of the
            // current name and every prefix of the pattern.
            let mut rows: Vec<Vec<u32>> = vec![(0..=m as u32).collect()];
            let mut prev: Vec<char> = Vec::new();
            let mut from = seek_key(l, "");
            'names: loop {
                let mut iter = self.map().range_from(&from);
                loop {
                    let Some(e) = iter.next() else { break 'names };
                    let (k, _) = e.map_err(IndexError::Store)?;
                    let (kl, name, id) = parse_key(k).ok_or_else(damaged)?;
                    if kl != l {
                        break 'names;
                    }
                    let chars: Vec<char> = name.chars().collect();
                    let lcp = prev
                        .iter()
                        .zip(&chars)
                        .take_while(|(a, b)| a == b)
                        .count()
                        .min(rows.len() - 1);
                    rows.truncate(lcp + 1);
                    let mut dead_end = None;
                    for (i, &c) in chars.iter().enumerate().skip(lcp) {
                        let above = &rows[i];
                        let mut row = Vec::with_capacity(m + 1);
                        row.push(above[0] + 1);
                        for j in 1..=m {
                            let cost = u32::from(pat[j - 1] != c);
                            let v = (above[j - 1] + cost).min(above[j] + 1).min(row[j - 1] + 1);
                            row.push(v);
                        }
                        let low = row.iter().copied().min().unwrap_or(0);
                        rows.push(row);
                        if low > max {
                            dead_end = Some(i + 1);
                            break;
                        }
                    }
                    prev = chars;
                    if let Some(depth) = dead_end {
                        let below: String = prev[..depth].iter().collect();
                        match successor(&below) {
                            Some(next) => {
                                from = seek_key(l, &next);
                                continue 'names;
                            }
                            None => break 'names,
                        }
                    }
                    let d = rows[prev.len()][m];
                    if d <= max {
                        hits.push(((d != 0, d, l, id), name.to_string()));
                    }
                }
            }
        }
        Ok(())
    }
}

fn check_length(chars: usize, max: usize) -> Result<(), IndexError> {
    if chars > max {
        Err(IndexError::BadPattern(format!(
            "pattern too long: {chars} characters, at most {max}"
        )))
    } else {
        Ok(())
    }
}

/// Best first, one hit per node (its best name), at most `limit`.
fn finish(mut hits: Vec<(Rank, String)>, limit: usize) -> Vec<SymbolHit> {
    hits.sort_unstable();
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for ((not_exact, distance, _, id), name) in hits {
        if out.len() >= limit {
            break;
        }
        if seen.insert(id) {
            out.push(SymbolHit {
                id,
                name,
                exact: !not_exact,
                distance,
            });
        }
    }
    out
}

/// The least string greater than every string that starts with `prefix`,
/// or `None` if there is none.
fn successor(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(c) = chars.pop() {
        let mut next = c as u32 + 1;
        if (0xD800..0xE000).contains(&next) {
            next = 0xE000;
        }
        if let Some(n) = char::from_u32(next) {
            chars.push(n);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// The literal text every match of `pattern` must start with, if the
/// pattern is anchored with `^` and has no alternation. Conservative: it
/// stops at the first character that is not plainly literal, and drops the
/// last literal if a quantifier follows it.
fn anchored_literal_prefix(pattern: &str) -> String {
    let Some(rest) = pattern.strip_prefix('^') else {
        return String::new();
    };
    if pattern.contains('|') {
        return String::new();
    }
    let mut out = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        if !(c.is_alphanumeric()
            || matches!(
                c,
                '-' | '_'
                    | ':'
                    | '/'
                    | '!'
                    | '<'
                    | '>'
                    | '='
                    | '%'
                    | '@'
                    | '~'
                    | '&'
                    | ','
                    | ';'
                    | '\''
                    | '"'
                    | '#'
            ))
        {
            break;
        }
        if let Some(&q) = chars.peek() {
            if matches!(q, '*' | '?' | '{' | '+') {
                break;
            }
        }
        out.push(c);
    }
    out
}

/// A wildcard pattern: `*` any run, `?` one character, `\x` the literal x.
enum Tok {
    Lit(char),
    One,
    Run,
}

struct Glob(Vec<Tok>);

impl Glob {
    fn parse(pattern: &str) -> Glob {
        let mut toks = Vec::new();
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            toks.push(match c {
                '*' => {
                    // Adjacent stars mean the same as one.
                    if matches!(toks.last(), Some(Tok::Run)) {
                        continue;
                    }
                    Tok::Run
                }
                '?' => Tok::One,
                // A trailing backslash stands for itself.
                '\\' => Tok::Lit(chars.next().unwrap_or('\\')),
                c => Tok::Lit(c),
            });
        }
        Glob(toks)
    }

    fn is_literal(&self) -> bool {
        self.0.iter().all(|t| matches!(t, Tok::Lit(_)))
    }

    fn literal_prefix(&self) -> String {
        self.0
            .iter()
            .map_while(|t| match t {
                Tok::Lit(c) => Some(*c),
                _ => None,
            })
            .collect()
    }

    /// Whole-name match; greedy with one backtrack point (the last `*`),
    /// so O(name × pattern) at worst, never exponential.
    fn matches(&self, name: &str, scratch: &mut Vec<char>) -> bool {
        scratch.clear();
        scratch.extend(name.chars());
        let s = &scratch[..];
        let p = &self.0;
        let (mut i, mut j) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while i < s.len() {
            match p.get(j) {
                Some(Tok::Lit(c)) if *c == s[i] => {
                    i += 1;
                    j += 1;
                }
                Some(Tok::One) => {
                    i += 1;
                    j += 1;
                }
                Some(Tok::Run) => {
                    star = Some((j, i));
                    j += 1;
                }
                _ => match star {
                    Some((sj, si)) => {
                        j = sj + 1;
                        i = si + 1;
                        star = Some((sj, si + 1));
                    }
                    None => return false,
                },
            }
        }
        p[j..].iter().all(|t| matches!(t, Tok::Run))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::TestRng as Rng;

    fn node(id: NodeId, names: &[&str]) -> Node {
        Node {
            id,
            code: None,
            description: None,
            symbol_names: names.iter().map(|s| s.to_string()).collect(),
            kind: None,
            dependencies: Vec::new(),
        }
    }

    fn sample() -> SymbolIndex {
        let mut ix = SymbolIndex::new();
        ix.insert(&node(1, &["arb:current-version"])).unwrap();
        ix.insert(&node(2, &["arb:reflog"])).unwrap();
        ix.insert(&node(17, &["arb:semantic-search"])).unwrap();
        ix.insert(&node(123, &["quicksort", "qsort"])).unwrap();
        ix.insert(&node(456, &["factorial", "fact"])).unwrap();
        ix.insert(&node(789, &["bubble-sort"])).unwrap();
        ix.insert(&node(900, &["arb:"])).unwrap();
        ix
    }

    fn ids(hits: &[SymbolHit]) -> Vec<NodeId> {
        hits.iter().map(|h| h.id).collect()
    }

    fn search(ix: &SymbolIndex, p: &str, mode: &str) -> Vec<NodeId> {
        ids(&ix
            .search(p, SymbolMode::parse(mode).unwrap(), usize::MAX)
            .unwrap())
    }

    #[test]
    fn prefix_ranks_exact_then_shorter_then_id() {
        let ix = sample();
        // "arb:" itself is exact; then by length: reflog (10), current-version
        // (19), semantic-search (19, larger id).
        assert_eq!(search(&ix, "arb:", "prefix"), vec![900, 2, 1, 17]);
        let hits = ix.search("arb:", SymbolMode::default(), 2).unwrap();
        assert_eq!(ids(&hits), vec![900, 2]);
        assert!(hits[0].exact && !hits[1].exact);
        assert_eq!(search(&ix, "zzz", "prefix"), Vec::<NodeId>::new());
        // The empty prefix lists every node.
        assert_eq!(search(&ix, "", "prefix").len(), 7);
    }

    #[test]
    fn exact_wildcard_regex() {
        let ix = sample();
        assert_eq!(search(&ix, "factorial", "exact"), vec![456]);
        assert_eq!(search(&ix, "factoria", "exact"), Vec::<NodeId>::new());
        assert_eq!(search(&ix, "quick*", "wildcard"), vec![123]);
        assert_eq!(search(&ix, "*sort", "wildcard"), vec![123, 789]);
        assert_eq!(search(&ix, "?sort", "wildcard"), vec![123]);
        assert_eq!(search(&ix, "f*t", "wildcard"), vec![456]);
        assert_eq!(search(&ix, "arb:*-*", "wildcard"), vec![1, 17]);
        // The seed's example: names ending in "sort".
        assert_eq!(search(&ix, "sort$", "regex"), vec![123, 789]);
        assert_eq!(search(&ix, "^arb:re", "regex"), vec![2]);
        assert_eq!(search(&ix, "^(fact|q)", "regex"), vec![456, 123]);
    }

    #[test]
    fn wildcard_escapes_and_stars() {
        let mut ix = SymbolIndex::new();
        ix.insert(&node(1, &["let*"])).unwrap();
        ix.insert(&node(2, &["let"])).unwrap();
        ix.insert(&node(3, &["letrec"])).unwrap();
        ix.insert(&node(4, &["*global*"])).unwrap();
        assert_eq!(search(&ix, "let\\*", "wildcard"), vec![1]);
        assert_eq!(search(&ix, "let*", "wildcard"), vec![2, 1, 3]);
        assert_eq!(search(&ix, "\\**\\*", "wildcard"), vec![4]);
        assert_eq!(search(&ix, "**", "wildcard"), vec![2, 1, 3, 4]);
        assert_eq!(search(&ix, "l?t", "wildcard"), vec![2]);
    }

    #[test]
    fn fuzzy_ranks_by_distance() {
        let ix = sample();
        // qsort is 1 edit from "qsrt"; quicksort is far.
        assert_eq!(search(&ix, "qsrt", "fuzzy"), vec![123]);
        let hits = ix
            .search("factorail", SymbolMode::Fuzzy { max_distance: None }, 10)
            .unwrap();
        assert_eq!(ids(&hits), vec![456]);
        assert_eq!(hits[0].name, "factorial");
        assert_eq!(hits[0].distance, 2);
        let hits = ix
            .search(
                "bubblesort",
                SymbolMode::Fuzzy {
                    max_distance: Some(1),
                },
                10,
            )
            .unwrap();
        assert_eq!(ids(&hits), vec![789]);
        // Exact equality ranks first, distance 0.
        let hits = ix
            .search(
                "fact",
                SymbolMode::Fuzzy {
                    max_distance: Some(3),
                },
                10,
            )
            .unwrap();
        assert_eq!(hits[0].id, 456);
        assert!(hits[0].exact);
    }

    /// Fuzzy search with pruning agrees with a plain scan.
    #[test]
    fn fuzzy_matches_brute_force() {
        let mut rng = Rng::new(0x1234_5678_9abc_def0);
        let mut next = move || rng.next();
        let alphabet: Vec<char> = "abcde-é".chars().collect();
        let mut ix = SymbolIndex::new();
        let mut all = Vec::new();
        for id in 0..2000u64 {
            let len = 1 + (next() % 8) as usize;
            let name: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            ix.insert(&node(id, &[name.as_str()])).unwrap();
            all.push((id, name));
        }
        for q in ["abc", "éa", "dddd", "a-b-c", "e", "abcdeabc"] {
            for max in 0..4 {
                let got = ix
                    .search(
                        q,
                        SymbolMode::Fuzzy {
                            max_distance: Some(max),
                        },
                        usize::MAX,
                    )
                    .unwrap();
                let mut want: Vec<(bool, u32, usize, NodeId)> = all
                    .iter()
                    .filter_map(|(id, n)| {
                        let d = levenshtein(q, n);
                        (d <= max).then(|| (n != q, d, n.chars().count(), *id))
                    })
                    .collect();
                want.sort();
                let want: Vec<NodeId> = want.into_iter().map(|w| w.3).collect();
                assert_eq!(ids(&got), want, "query {q} max {max}");
            }
        }
    }

    fn levenshtein(a: &str, b: &str) -> u32 {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<u32> = (0..=b.len() as u32).collect();
        for (i, ca) in a.iter().enumerate() {
            let mut cur = vec![i as u32 + 1];
            for (j, cb) in b.iter().enumerate() {
                let v = (prev[j] + u32::from(ca != cb))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1);
                cur.push(v);
            }
            prev = cur;
        }
        prev[b.len()]
    }

    #[test]
    fn bad_and_hostile_patterns() {
        let mut ix = SymbolIndex::new();
        let long_a = "a".repeat(5000);
        ix.insert(&node(5000, &[long_a.as_str()])).unwrap();
        ix.insert(&node(5001, &[format!("{long_a}c").as_str()]))
            .unwrap();
        let err = ix.search("(unclosed", SymbolMode::Regex, 10).unwrap_err();
        assert_eq!(err.kind(), "invalid-pattern");
        assert!(err.message().contains("regular expression"), "{err}");
        // Nested stars on long names: linear-time engine, no blow-up.
        assert_eq!(ix.search("(a*)*b", SymbolMode::Regex, 10).unwrap(), vec![]);
        assert_eq!(
            ids(&ix.search("^(a+)+c$", SymbolMode::Regex, 10).unwrap()),
            vec![5001]
        );
        assert_eq!(
            ids(&ix.search("(a|aa)*c", SymbolMode::Regex, 10).unwrap()),
            vec![5001]
        );
        // Huge repetition counts exceed the size limit: an error, not a hang.
        for p in [
            "a{1000000}",
            "(a{1000}){1000}",
            "\\w{50000}",
            "((((a{100}){100}){100}){100})",
        ] {
            let err = ix.search(p, SymbolMode::Regex, 10).unwrap_err();
            assert_eq!(err.kind(), "invalid-pattern", "{p}");
        }
        let deep = format!("{}a{}", "(".repeat(500), ")".repeat(500));
        assert!(ix.search(&deep, SymbolMode::Regex, 10).is_err());
        let huge = "a".repeat(MAX_PATTERN_CHARS + 1);
        assert!(ix.search(&huge, SymbolMode::Regex, 10).is_err());
        assert!(ix.search(&huge, SymbolMode::Wildcard, 10).is_err());
        assert!(ix
            .search(&huge, SymbolMode::Fuzzy { max_distance: None }, 10)
            .is_err());
        // Many stars against long names: quadratic at worst.
        let stars = "*a".repeat(400) + "b";
        assert_eq!(ix.search(&stars, SymbolMode::Wildcard, 10).unwrap(), vec![]);
        // Fuzzy against very long names is cut off by the distance bound.
        let hits = ix
            .search(
                &"a".repeat(100),
                SymbolMode::Fuzzy {
                    max_distance: Some(100),
                },
                10,
            )
            .unwrap();
        assert!(hits.iter().all(|h| h.distance <= MAX_FUZZY_DISTANCE));
    }

    #[test]
    fn insert_replace_remove() {
        let mut ix = sample();
        let old = node(123, &["quicksort", "qsort"]);
        let new = node(123, &["quick-sort", "quick-sort", ""]);
        ix.apply(Some(&old), Some(&new)).unwrap();
        assert_eq!(search(&ix, "qsort", "exact"), Vec::<NodeId>::new());
        assert_eq!(search(&ix, "quick-sort", "exact"), vec![123]);
        ix.insert(&node(124, &["quick-sort"])).unwrap();
        assert_eq!(search(&ix, "quick-sort", "exact"), vec![123, 124]);
        ix.apply(Some(&new), None).unwrap();
        assert_eq!(search(&ix, "quick-sort", "exact"), vec![124]);
        ix.remove(&node(124, &["quick-sort"])).unwrap();
        ix.remove(&node(124, &["quick-sort"])).unwrap();
        assert_eq!(search(&ix, "quick", "prefix"), Vec::<NodeId>::new());
        // The nine names of `sample` but quicksort's two.
        assert_eq!(ix.len(), 7);
    }

    /// A limited search returns the first results of the unlimited one.
    #[test]
    fn limits_cut_the_ranked_list() {
        let mut rng = Rng::new(0x0bad_cafe);
        let mut next = move || rng.next();
        let mut ix = SymbolIndex::new();
        for id in 0..3000u64 {
            let names: Vec<String> = (0..1 + next() % 2)
                .map(|_| {
                    (0..1 + next() % 6)
                        .map(|_| ['a', 'b', 'c'][(next() % 3) as usize])
                        .collect()
                })
                .collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            ix.insert(&node(id, &names)).unwrap();
        }
        for (p, mode) in [
            ("", SymbolMode::Prefix),
            ("a", SymbolMode::Prefix),
            ("ab", SymbolMode::Prefix),
            ("a*c", SymbolMode::Wildcard),
            ("*b?", SymbolMode::Wildcard),
            ("bc$", SymbolMode::Regex),
            ("^ca", SymbolMode::Regex),
            (
                "abc",
                SymbolMode::Fuzzy {
                    max_distance: Some(1),
                },
            ),
        ] {
            let all = ix.search(p, mode, usize::MAX).unwrap();
            for limit in [0, 1, 5, 37, 500] {
                let some = ix.search(p, mode, limit).unwrap();
                assert_eq!(
                    some,
                    all[..limit.min(all.len())].to_vec(),
                    "{p} {mode:?} {limit}"
                );
            }
        }
    }

    #[test]
    fn successor_and_prefixes() {
        assert_eq!(successor("ab").as_deref(), Some("ac"));
        assert_eq!(successor("a\u{d7ff}").as_deref(), Some("a\u{e000}"));
        assert_eq!(successor("a\u{10ffff}").as_deref(), Some("b"));
        assert_eq!(successor("\u{10ffff}"), None);
        assert_eq!(anchored_literal_prefix("^arb:se"), "arb:se");
        assert_eq!(anchored_literal_prefix("^abc*"), "ab");
        assert_eq!(anchored_literal_prefix("^ab.c"), "ab");
        assert_eq!(anchored_literal_prefix("^ab|cd"), "");
        assert_eq!(anchored_literal_prefix("ab"), "");
    }
}
