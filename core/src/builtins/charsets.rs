//! The native side of `(scheme charset)` (SRFI 14). A character set is a
//! record of the library's that holds its *ranges*: a vector of fixnums
//! `#(lo0 hi0 lo1 hi1 ...)`, each `[lo, hi)` a run of code points, sorted,
//! not touching one another and never covering a surrogate (which is no
//! character). These primitives compute on ranges; the library does the
//! rest in Scheme.
//!
//! The standard sets come from Unicode's general categories (the
//! `unicode-general-category` crate, Unicode 16), computed once per
//! process on first use.

use std::sync::OnceLock;

use unicode_general_category::{get_general_category, GeneralCategory as G};

use super::{boolean, character, index, type_error, Ctx, Fault, PrimTable};
use crate::value::{Object, Value};

/// One past the last code point.
const END: u32 = 0x11_0000;
const SURROGATES: (u32, u32) = (0xD800, 0xE000);

type Ranges = Vec<(u32, u32)>;

fn ranges(c: &Ctx, who: &str, v: Value) -> Result<Ranges, Fault> {
    let bad = || type_error(c, who, "the ranges of a char-set", v);
    let Some(Object::Vector(items)) = c.heap.obj(v) else {
        return Err(bad());
    };
    if items.len() % 2 != 0 {
        return Err(bad());
    }
    let mut out = Vec::with_capacity(items.len() / 2);
    let mut last = 0u32;
    for pair in items.chunks(2) {
        match (pair[0], pair[1]) {
            (Value::Int(lo), Value::Int(hi))
                if lo >= last as i64 && lo < hi && hi <= END as i64 =>
            {
                out.push((lo as u32, hi as u32));
                last = hi as u32;
            }
            _ => return Err(bad()),
        }
    }
    Ok(out)
}

fn to_value(c: &mut Ctx, r: &[(u32, u32)]) -> Result<Value, Fault> {
    c.heap.check_room(r.len().saturating_mul(32))?;
    c.charge(r.len() as u64 / 8)?;
    let mut items = Vec::with_capacity(r.len() * 2);
    for &(lo, hi) in r {
        items.push(Value::Int(lo as i64));
        items.push(Value::Int(hi as i64));
    }
    Ok(c.heap.alloc(Object::Vector(items)))
}

/// Adds `[lo, hi)` at the end of sorted ranges, merging with the last run
/// when they touch, and leaving the surrogates out.
fn push(out: &mut Ranges, lo: u32, hi: u32) {
    let pieces = [(lo, hi.min(SURROGATES.0)), (lo.max(SURROGATES.1), hi)];
    for (lo, hi) in pieces {
        if lo >= hi {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.1 >= lo => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
}

/// Ranges from any code points, in any order, with repeats.
fn from_points(mut points: Vec<u32>) -> Ranges {
    points.sort_unstable();
    let mut out = Vec::new();
    for p in points {
        push(&mut out, p, p + 1);
    }
    out
}

/// The set of code points where `keep(in a, in b)` holds.
fn combine(a: &[(u32, u32)], b: &[(u32, u32)], keep: fn(bool, bool) -> bool) -> Ranges {
    let mut cuts: Vec<u32> = Vec::with_capacity(2 * (a.len() + b.len()) + 2);
    for &(lo, hi) in a.iter().chain(b) {
        cuts.push(lo);
        cuts.push(hi);
    }
    cuts.push(0);
    cuts.push(END);
    cuts.sort_unstable();
    cuts.dedup();
    let inside = |r: &[(u32, u32)], p: u32| {
        let i = r.partition_point(|&(_, hi)| hi <= p);
        i < r.len() && r[i].0 <= p
    };
    let mut out = Vec::new();
    for w in cuts.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        if keep(inside(a, lo), inside(b, lo)) {
            push(&mut out, lo, hi);
        }
    }
    out
}

fn contains(r: &[(u32, u32)], p: u32) -> bool {
    let i = r.partition_point(|&(_, hi)| hi <= p);
    i < r.len() && r[i].0 <= p
}

/// The standard sets by name, each computed once from the categories.
fn standard(name: &str) -> Option<&'static Ranges> {
    static SETS: OnceLock<Vec<(&'static str, Ranges)>> = OnceLock::new();
    let sets = SETS.get_or_init(|| {
        let names: [(&str, fn(u32, G) -> bool); 12] = [
            ("lower-case", |_, g| g == G::LowercaseLetter),
            ("upper-case", |_, g| g == G::UppercaseLetter),
            ("title-case", |_, g| g == G::TitlecaseLetter),
            ("letter", |_, g| letter(g)),
            ("digit", |_, g| g == G::DecimalNumber),
            ("graphic", |_, g| graphic(g)),
            ("printing", |p, g| graphic(g) || white(p)),
            ("whitespace", |p, _| white(p)),
            ("iso-control", |p, _| p < 0x20 || (0x7F..0xA0).contains(&p)),
            ("punctuation", |_, g| punctuation(g)),
            ("symbol", |_, g| {
                matches!(
                    g,
                    G::MathSymbol | G::CurrencySymbol | G::ModifierSymbol | G::OtherSymbol
                )
            }),
            ("blank", |p, g| p == 9 || g == G::SpaceSeparator),
        ];
        // One pass over the code points makes runs of one category (and
        // one White_Space value); each set then takes the runs it wants.
        let mut runs: Vec<(u32, u32, G, bool)> = Vec::new();
        for p in 0..END {
            let Some(ch) = char::from_u32(p) else {
                continue;
            };
            let (g, w) = (get_general_category(ch), white(p));
            match runs.last_mut() {
                Some(last) if last.1 == p && last.2 == g && last.3 == w => last.1 = p + 1,
                _ => runs.push((p, p + 1, g, w)),
            }
        }
        let mut out: Vec<(&'static str, Ranges)> =
            names.iter().map(|(n, _)| (*n, Vec::new())).collect();
        for (i, (_, keep)) in names.iter().enumerate() {
            for &(lo, hi, g, w) in &runs {
                // Within a run only the code point may change the answer
                // (iso-control, blank's tab): those runs are split by it.
                if w || g == G::Control {
                    for p in lo..hi {
                        if keep(p, g) {
                            push(&mut out[i].1, p, p + 1);
                        }
                    }
                } else if keep(lo, g) {
                    push(&mut out[i].1, lo, hi);
                }
            }
        }
        out
    });
    sets.iter().find(|(n, _)| *n == name).map(|(_, r)| r)
}

fn letter(g: G) -> bool {
    matches!(
        g,
        G::UppercaseLetter
            | G::LowercaseLetter
            | G::TitlecaseLetter
            | G::ModifierLetter
            | G::OtherLetter
    )
}

fn punctuation(g: G) -> bool {
    matches!(
        g,
        G::ConnectorPunctuation
            | G::DashPunctuation
            | G::OpenPunctuation
            | G::ClosePunctuation
            | G::InitialPunctuation
            | G::FinalPunctuation
            | G::OtherPunctuation
    )
}

/// SRFI 14's graphic: letters, marks, numbers, punctuation and symbols.
fn graphic(g: G) -> bool {
    letter(g)
        || punctuation(g)
        || matches!(
            g,
            G::NonspacingMark
                | G::SpacingMark
                | G::EnclosingMark
                | G::DecimalNumber
                | G::LetterNumber
                | G::OtherNumber
                | G::MathSymbol
                | G::CurrencySymbol
                | G::ModifierSymbol
                | G::OtherSymbol
        )
}

/// Unicode's White_Space property.
fn white(p: u32) -> bool {
    matches!(
        p,
        0x09..=0x0D
            | 0x20
            | 0x85
            | 0xA0
            | 0x1680
            | 0x2000..=0x200A
            | 0x2028
            | 0x2029
            | 0x202F
            | 0x205F
            | 0x3000
    )
}

fn code_point(c: &Ctx, who: &str, v: Value) -> Result<u32, Fault> {
    match v {
        Value::Int(i) if (0..END as i64).contains(&i) => Ok(i as u32),
        Value::Char(ch) => Ok(ch as u32),
        _ => Err(type_error(c, who, "a character or a code point", v)),
    }
}

pub fn register(t: &mut PrimTable) {
    t.add("%cs-contains?", 2, Some(2), |c, a| {
        let p = code_point(c, "char-set-contains?", a[1])?;
        let r = ranges(c, "char-set-contains?", a[0])?;
        Ok(boolean(contains(&r, p)))
    });
    // (%cs-from-chars LIST): the ranges of a list of characters.
    t.add("%cs-from-chars", 1, Some(1), |c, a| {
        let items = super::list_items(c, "list->char-set", a[0])?;
        c.charge(items.len() as u64)?;
        let mut points = Vec::with_capacity(items.len());
        for v in items {
            points.push(character(c, "list->char-set", v)? as u32);
        }
        let r = from_points(points);
        to_value(c, &r)
    });
    // (%cs-from-string S): the ranges of a string's characters.
    t.add("%cs-from-string", 1, Some(1), |c, a| {
        let s = super::string(c, "string->char-set", a[0])?;
        let points: Vec<u32> = s.iter().map(|ch| *ch as u32).collect();
        c.charge(points.len() as u64)?;
        let r = from_points(points);
        to_value(c, &r)
    });
    // (%cs-range LO HI): [lo, hi) less the surrogates, clipped to Unicode.
    t.add("%cs-range", 2, Some(2), |c, a| {
        let lo = index(c, "ucs-range->char-set", a[0])?.min(END as usize) as u32;
        let hi = index(c, "ucs-range->char-set", a[1])?.min(END as usize) as u32;
        let mut r = Vec::new();
        push(&mut r, lo, hi.max(lo));
        to_value(c, &r)
    });
    t.add("%cs-union", 2, Some(2), |c, a| {
        op(c, a, "char-set-union", |x, y| x || y)
    });
    t.add("%cs-intersection", 2, Some(2), |c, a| {
        op(c, a, "char-set-intersection", |x, y| x && y)
    });
    t.add("%cs-difference", 2, Some(2), |c, a| {
        op(c, a, "char-set-difference", |x, y| x && !y)
    });
    t.add("%cs-xor", 2, Some(2), |c, a| {
        op(c, a, "char-set-xor", |x, y| x != y)
    });
    t.add("%cs-complement", 1, Some(1), |c, a| {
        let r = ranges(c, "char-set-complement", a[0])?;
        let out = combine(&r, &[], |x, _| !x);
        to_value(c, &out)
    });
    t.add("%cs-size", 1, Some(1), |c, a| {
        let r = ranges(c, "char-set-size", a[0])?;
        Ok(Value::Int(r.iter().map(|&(lo, hi)| (hi - lo) as i64).sum()))
    });
    // (%cs-next R P): the first code point at or after P in the set, or #f.
    t.add("%cs-next", 2, Some(2), |c, a| {
        let r = ranges(c, "char-set-cursor-next", a[0])?;
        let p = match a[1] {
            Value::Int(i) if i >= 0 => i.min(END as i64) as u32,
            other => return Err(type_error(c, "char-set-cursor-next", "a cursor", other)),
        };
        let i = r.partition_point(|&(_, hi)| hi <= p);
        Ok(match r.get(i) {
            Some(&(lo, _)) => Value::Int(lo.max(p) as i64),
            None => Value::Bool(false),
        })
    });
    // (%cs-prev R P): the last code point before P in the set, or #f.
    t.add("%cs-prev", 2, Some(2), |c, a| {
        let r = ranges(c, "char-set-cursor", a[0])?;
        let p = match a[1] {
            Value::Int(i) if i >= 0 => i.min(END as i64) as u32,
            other => return Err(type_error(c, "char-set-cursor", "a cursor", other)),
        };
        let i = r.partition_point(|&(lo, _)| lo < p);
        Ok(match i.checked_sub(1).and_then(|i| r.get(i)) {
            Some(&(_, hi)) => Value::Int((hi.min(p) - 1) as i64),
            None => Value::Bool(false),
        })
    });
    // (%cs-standard NAME): the ranges of a standard set, by its name.
    t.add("%cs-standard", 1, Some(1), |c, a| {
        let name = super::symbol_name(c, "%cs-standard", a[0])?;
        let Some(r) = standard(&name) else {
            return Err(Fault::Error(
                format!("%cs-standard: no standard char-set named {name}"),
                vec![],
            ));
        };
        c.charge(200)?;
        to_value(c, r)
    });
    // (%cs-find S START END R WANT FROM-RIGHT): the index of the first (or
    // last) character of s[start, end) whose membership in R is WANT, or #f.
    t.add("%cs-find", 6, Some(6), |c, a| {
        let len = super::string(c, "string-index", a[0])?.len();
        let (start, end) = super::range(c, "string-index", a, 1, len)?;
        let r = ranges(c, "string-index", a[3])?;
        let want = !matches!(a[4], Value::Bool(false));
        let right = !matches!(a[5], Value::Bool(false));
        let s = super::string(c, "string-index", a[0])?;
        let hit = |i: &usize| contains(&r, s[*i] as u32) == want;
        let found = if right {
            (start..end).rev().find(hit)
        } else {
            (start..end).find(hit)
        };
        c.charge((end - start) as u64 / 4)?;
        Ok(found.map_or(Value::Bool(false), |i| Value::Int(i as i64)))
    });
}

fn op(c: &mut Ctx, a: &[Value], who: &str, keep: fn(bool, bool) -> bool) -> Result<Value, Fault> {
    let x = ranges(c, who, a[0])?;
    let y = ranges(c, who, a[1])?;
    c.charge((x.len() + y.len()) as u64)?;
    let out = combine(&x, &y, keep);
    to_value(c, &out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_skip_surrogates() {
        assert_eq!(from_points(vec![3, 1, 2, 2, 7]), vec![(1, 4), (7, 8)]);
        let mut r = Vec::new();
        push(&mut r, 0xD000, 0xF000);
        assert_eq!(r, vec![(0xD000, 0xD800), (0xE000, 0xF000)]);
        let all = combine(&[], &[], |x, _| !x);
        assert_eq!(all, vec![(0, 0xD800), (0xE000, END)]);
    }

    #[test]
    fn set_operations() {
        let a = vec![(0, 10), (20, 30)];
        let b = vec![(5, 25)];
        assert_eq!(combine(&a, &b, |x, y| x || y), vec![(0, 30)]);
        assert_eq!(combine(&a, &b, |x, y| x && y), vec![(5, 10), (20, 25)]);
        assert_eq!(combine(&a, &b, |x, y| x && !y), vec![(0, 5), (25, 30)]);
        assert_eq!(
            combine(&a, &b, |x, y| x != y),
            vec![(0, 5), (10, 20), (25, 30)]
        );
        assert!(contains(&a, 0) && contains(&a, 29) && !contains(&a, 10) && !contains(&a, 30));
    }

    #[test]
    fn standard_sets() {
        let l = standard("letter").unwrap();
        assert!(contains(l, 'a' as u32) && contains(l, 'λ' as u32) && !contains(l, '1' as u32));
        let w = standard("whitespace").unwrap();
        assert!(contains(w, ' ' as u32) && contains(w, 0x3000) && !contains(w, 'x' as u32));
        let p = standard("punctuation").unwrap();
        assert!(contains(p, '!' as u32) && !contains(p, '+' as u32));
        let s = standard("symbol").unwrap();
        assert!(contains(s, '+' as u32) && contains(s, '$' as u32));
    }
}
