//! Strings (R7RS 6.7).

use super::chars::{foldcase, upcase};
use super::{
    boolean, character, copy_into, index, list_items, range, register_elements, string, type_error,
    Ctx, Elements, Fault, PrimTable,
};
use crate::value::{Object, Value};

// Long by design: a table, one entry per primitive.
pub fn register(t: &mut PrimTable) {
    t.add("string?", 1, Some(1), |c, a| {
        Ok(boolean(matches!(c.heap.obj(a[0]), Some(Object::Str(_)))))
    });
    t.add("make-string", 1, Some(2), |c, a| {
        let n = index(c, "make-string", a[0])?;
        let fill = match a.get(1) {
            Some(&v) => character(c, "make-string", v)?,
            None => ' ',
        };
        c.heap.check_room(n.saturating_mul(4))?;
        Ok(c.heap.alloc(Object::Str(vec![fill; n])))
    });
    t.add("string", 0, None, |c, a| {
        let mut s = Vec::with_capacity(a.len());
        for &v in a {
            s.push(character(c, "string", v)?);
        }
        Ok(c.heap.alloc(Object::Str(s)))
    });
    register_elements::<char>(t);
    t.add("string=?", 1, None, |c, a| {
        compare(c, a, "string=?", false, |o| o.is_eq())
    });
    t.add("string<?", 1, None, |c, a| {
        compare(c, a, "string<?", false, |o| o.is_lt())
    });
    t.add("string>?", 1, None, |c, a| {
        compare(c, a, "string>?", false, |o| o.is_gt())
    });
    t.add("string<=?", 1, None, |c, a| {
        compare(c, a, "string<=?", false, |o| o.is_le())
    });
    t.add("string>=?", 1, None, |c, a| {
        compare(c, a, "string>=?", false, |o| o.is_ge())
    });
    t.add("string-ci=?", 1, None, |c, a| {
        compare(c, a, "string-ci=?", true, |o| o.is_eq())
    });
    t.add("string-ci<?", 1, None, |c, a| {
        compare(c, a, "string-ci<?", true, |o| o.is_lt())
    });
    t.add("string-ci>?", 1, None, |c, a| {
        compare(c, a, "string-ci>?", true, |o| o.is_gt())
    });
    t.add("string-ci<=?", 1, None, |c, a| {
        compare(c, a, "string-ci<=?", true, |o| o.is_le())
    });
    t.add("string-ci>=?", 1, None, |c, a| {
        compare(c, a, "string-ci>=?", true, |o| o.is_ge())
    });
    t.add("string-upcase", 1, Some(1), |c, a| {
        // The text as UTF-8, its new case, then the new string's chars.
        room_for_chars(c, 3 * string(c, "string-upcase", a[0])?.len())?;
        let s: String = string(c, "string-upcase", a[0])?.iter().collect();
        Ok(c.heap.string(&s.to_uppercase()))
    });
    t.add("string-downcase", 1, Some(1), |c, a| {
        // The text as UTF-8, its new case, then the new string's chars.
        room_for_chars(c, 3 * string(c, "string-downcase", a[0])?.len())?;
        let s: String = string(c, "string-downcase", a[0])?.iter().collect();
        Ok(c.heap.string(&downcase_string(&s)))
    });
    t.add("string-foldcase", 1, Some(1), |c, a| {
        // The text as UTF-8, its new case, then the new string's chars.
        room_for_chars(c, 3 * string(c, "string-foldcase", a[0])?.len())?;
        let s: String = string(c, "string-foldcase", a[0])?.iter().collect();
        Ok(c.heap.string(&fold_string(&s)))
    });
    t.add("substring", 3, Some(3), |c, a| copy(c, a, "substring"));
    t.add("string-copy", 1, Some(3), |c, a| copy(c, a, "string-copy"));
    t.add("string-append", 0, None, |c, a| {
        let mut total = 0usize;
        for &v in a {
            total = total.saturating_add(string(c, "string-append", v)?.len());
        }
        room_for_chars(c, total)?;
        let mut out = Vec::with_capacity(total);
        for &v in a {
            out.extend_from_slice(string(c, "string-append", v)?);
        }
        Ok(c.heap.alloc(Object::Str(out)))
    });
    t.add("string->list", 1, Some(3), |c, a| {
        let s = string(c, "string->list", a[0])?;
        let (start, end) = range(c, "string->list", a, 1, s.len())?;
        let items = super::vectors::values_charged::<char>(c, "string->list", a[0], start, end)?;
        c.list(&items)
    });
    t.add("list->string", 1, Some(1), |c, a| {
        let items = list_items(c, "list->string", a[0])?;
        room_for_chars(c, items.len())?;
        let mut s = Vec::with_capacity(items.len());
        for v in items {
            c.charge_elements(1)?;
            s.push(character(c, "list->string", v)?);
        }
        Ok(c.heap.alloc(Object::Str(s)))
    });
    t.add("string-copy!", 3, Some(5), |c, a| {
        copy_into::<char>(c, "string-copy!", a)
    });
    t.add("string-fill!", 2, Some(4), |c, a| {
        let ch = character(c, "string-fill!", a[1])?;
        let len = string(c, "string-fill!", a[0])?.len();
        let (start, end) = range(c, "string-fill!", a, 2, len)?;
        if let Some(Object::Str(d)) = c.heap.obj_mut(a[0]) {
            for x in &mut d[start..end] {
                *x = ch;
            }
        }
        Ok(Value::Unspecified)
    });
    // Not R7RS-small (SRFI 13): (string-contains S1 S2 [START1 END1 START2
    // END2]), the index in s1 of the first occurrence of s2[start2, end2)
    // within s1[start1, end1), or #f. `%string-contains` is the same
    // primitive under the name `(srfi 13)` builds on.
    t.add("string-contains", 2, Some(6), |c, a| {
        contains(c, a, "string-contains")
    });
    t.add("%string-contains", 2, Some(6), |c, a| {
        contains(c, a, "string-contains")
    });
    t.add("string-join", 1, Some(2), |c, a| {
        let items = list_items(c, "string-join", a[0])?;
        let sep: Vec<char> = match a.get(1) {
            Some(&v) => string(c, "string-join", v)?.clone(),
            None => vec![' '],
        };
        let mut total = sep.len().saturating_mul(items.len());
        for v in &items {
            total = total.saturating_add(string(c, "string-join", *v)?.len());
        }
        room_for_chars(c, total)?;
        let mut out = Vec::with_capacity(total);
        for (i, v) in items.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(&sep);
            }
            out.extend_from_slice(string(c, "string-join", *v)?);
        }
        Ok(c.heap.alloc(Object::Str(out)))
    });
    let _ = type_error;
    let _ = upcase;
}

fn contains(c: &mut Ctx, a: &[Value], who: &str) -> Result<Value, Fault> {
    let n1 = string(c, who, a[0])?.len();
    let n2 = string(c, who, a[1])?.len();
    let (s1, e1) = range(c, who, &a[..a.len().min(4)], 2, n1)?;
    let (s2, e2) = range(c, who, a, 4, n2)?;
    let hay = &string(c, who, a[0])?[s1..e1];
    let needle = &string(c, who, a[1])?[s2..e2];
    if needle.is_empty() {
        return Ok(Value::Int(s1 as i64));
    }
    let found = hay
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| Value::Int((s1 + i) as i64))
        .unwrap_or(Value::Bool(false));
    c.charge(((e1 - s1) as u64).saturating_mul(needle.len().min(64) as u64) / 8)?;
    Ok(found)
}

fn copy(c: &mut Ctx, a: &[Value], who: &str) -> Result<Value, Fault> {
    let len = string(c, who, a[0])?.len();
    let (start, end) = range(c, who, a, 1, len)?;
    room_for_chars(c, end - start)?;
    let s = string(c, who, a[0])?;
    let piece = s[start..end].to_vec();
    Ok(c.heap.alloc(Object::Str(piece)))
}

impl Elements for char {
    const KIND: &'static str = "string";
    const LENGTH: &'static str = "string-length";
    const REF: &'static str = "string-ref";
    const SET: &'static str = "string-set!";
    fn of<'h>(c: &'h Ctx, who: &str, v: Value) -> Result<&'h Vec<char>, Fault> {
        string(c, who, v)
    }
    fn of_mut(o: &mut Object) -> Option<&mut Vec<char>> {
        match o {
            Object::Str(d) => Some(d),
            _ => None,
        }
    }
    fn element(c: &Ctx, who: &str, v: Value) -> Result<char, Fault> {
        character(c, who, v)
    }
    fn value(self) -> Value {
        Value::Char(self)
    }
}

/// Makes sure a new string of `n` characters fits under the memory cap,
/// and charges copying them.
fn room_for_chars(c: &mut Ctx, n: usize) -> Result<(), Fault> {
    c.heap
        .check_room(n.saturating_mul(std::mem::size_of::<char>()))?;
    c.charge(n as u64 / 4)
}

fn compare(
    c: &mut Ctx,
    a: &[Value],
    who: &str,
    ci: bool,
    ok: fn(std::cmp::Ordering) -> bool,
) -> Result<Value, Fault> {
    let mut strs: Vec<Vec<char>> = Vec::with_capacity(a.len());
    for &v in a {
        let s = string(c, who, v)?;
        strs.push(if ci {
            fold_string(&s.iter().collect::<String>()).chars().collect()
        } else {
            s.clone()
        });
    }
    Ok(boolean(strs.windows(2).all(|w| ok(w[0].cmp(&w[1])))))
}

fn downcase_string(s: &str) -> String {
    // Greek capital sigma lowercases to final sigma at the end of a word.
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &ch) in chars.iter().enumerate() {
        if ch == 'Σ' {
            let before = i > 0 && chars[i - 1].is_alphabetic();
            let after = chars.get(i + 1).is_some_and(|n| n.is_alphabetic());
            out.push(if before && !after { 'ς' } else { 'σ' });
        } else {
            out.extend(ch.to_lowercase());
        }
    }
    out
}

pub fn fold_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            'ß' => out.push_str("ss"),
            // A character whose full lowercase is several (`İ`) folds to them.
            c if c.to_lowercase().nth(1).is_some() => out.extend(c.to_lowercase()),
            c => out.push(foldcase(c)),
        }
    }
    out
}

#[cfg(test)]
mod tests;
