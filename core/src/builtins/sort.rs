//! The native side of `(scheme sort)` (SRFI 132): `(%sort! V START END
//! ORDER)` sorts `V[START, END)` in place, stably, when ORDER is one of
//! the engine's own orders and every element is of its type, and returns
//! `#t`; otherwise it changes nothing and returns `#f`, and the library
//! sorts by calling the order from Scheme (a primitive never calls back
//! into Scheme).

use std::cmp::Ordering;

use super::chars::foldcase;
use super::strings::fold_string;
use super::{Ctx, Fault, PrimTable};
use crate::value::{Object, Value};

/// Units of work per comparison (`number::Work`).
const COMPARE_UNITS: u64 = 4;

/// What the elements are compared as.
enum Keys {
    Ints(Vec<i64>),
    Floats(Vec<f64>),
    Strings(Vec<Vec<char>>),
    Chars(Vec<char>),
}

/// The orders by code, as the library numbers them: `<`, `>`,
/// `string<?`, `string>?`, `string-ci<?`, `string-ci>?`, `char<?`,
/// `char>?`, `char-ci<?`, `char-ci>?`. Odd codes sort descending.
fn keys(c: &Ctx, items: &[Value], code: i64) -> Option<Keys> {
    match code / 2 {
        0 => {
            if items.iter().all(|v| matches!(v, Value::Int(_))) {
                Some(Keys::Ints(
                    items
                        .iter()
                        .map(|v| if let Value::Int(i) = v { *i } else { 0 })
                        .collect(),
                ))
            } else if items
                .iter()
                .all(|v| matches!(v, Value::Float(f) if !f.is_nan()))
            {
                Some(Keys::Floats(
                    items
                        .iter()
                        .map(|v| if let Value::Float(f) = v { *f } else { 0.0 })
                        .collect(),
                ))
            } else {
                None
            }
        }
        1 | 2 => {
            let mut out = Vec::with_capacity(items.len());
            for v in items {
                match c.heap.obj(*v) {
                    Some(Object::Str(s)) if code / 2 == 1 => out.push(s.clone()),
                    Some(Object::Str(s)) => {
                        out.push(fold_string(&s.iter().collect::<String>()).chars().collect())
                    }
                    _ => return None,
                }
            }
            Some(Keys::Strings(out))
        }
        3 | 4 => {
            let mut out = Vec::with_capacity(items.len());
            for v in items {
                match v {
                    Value::Char(ch) if code / 2 == 3 => out.push(*ch),
                    Value::Char(ch) => out.push(foldcase(*ch)),
                    _ => return None,
                }
            }
            Some(Keys::Chars(out))
        }
        _ => None,
    }
}

/// The positions 0..n in sorted order of `keys` (stable).
fn order(keys: &Keys, descending: bool) -> Vec<usize> {
    let n = match keys {
        Keys::Ints(k) => k.len(),
        Keys::Floats(k) => k.len(),
        Keys::Strings(k) => k.len(),
        Keys::Chars(k) => k.len(),
    };
    let mut idx: Vec<usize> = (0..n).collect();
    let cmp = |a: &usize, b: &usize| -> Ordering {
        let o = match keys {
            Keys::Ints(k) => k[*a].cmp(&k[*b]),
            Keys::Floats(k) => k[*a].partial_cmp(&k[*b]).unwrap_or(Ordering::Equal),
            Keys::Strings(k) => k[*a].cmp(&k[*b]),
            Keys::Chars(k) => k[*a].cmp(&k[*b]),
        };
        if descending {
            o.reverse()
        } else {
            o
        }
    };
    idx.sort_by(cmp);
    idx
}

pub fn register(t: &mut PrimTable) {
    t.add("%sort!", 4, Some(4), |c, a| {
        let (Value::Int(start), Value::Int(end), Value::Int(code)) = (a[1], a[2], a[3]) else {
            return Ok(Value::Bool(false));
        };
        let items: Vec<Value> = match c.heap.obj(a[0]) {
            Some(Object::Vector(v)) if 0 <= start && start <= end && (end as usize) <= v.len() => {
                v[start as usize..end as usize].to_vec()
            }
            _ => return Ok(Value::Bool(false)),
        };
        let n = items.len() as u64;
        c.charge(COMPARE_UNITS * n * (64 - n.leading_zeros() as u64).max(1))?;
        let Some(keys) = keys(c, &items, code) else {
            return Ok(Value::Bool(false));
        };
        let idx = order(&keys, code % 2 == 1);
        let sorted: Vec<Value> = idx.into_iter().map(|i| items[i]).collect();
        match c.heap.obj_mut(a[0]) {
            Some(Object::Vector(v)) => {
                v[start as usize..end as usize].copy_from_slice(&sorted);
                Ok(Value::Bool(true))
            }
            _ => Err(Fault::Error("%sort!: expected a vector".into(), vec![])),
        }
    });
}
