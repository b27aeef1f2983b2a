//! Pairs, lists, symbols, booleans and equivalence (R7RS 6.1, 6.3, 6.4, 6.5).

use std::collections::BTreeSet;

use super::{boolean, index, list_items, type_error, Budget, Ctx, Fault, PrimTable};
use crate::heap::Heap;
use crate::number::{Num, Work};
use crate::value::{Object, Ref, Value};

/// The `mem...` and `ass...` of one sameness: each primitive's name, and
/// the name its errors give.
macro_rules! searches {
    ($t:ident, $mem:literal $mem_who:literal, $ass:literal $ass_who:literal, $same:expr) => {
        $t.add($mem, 2, Some(2), |c, a| {
            search::<false>(c, a, $mem_who, $same)
        });
        $t.add($ass, 2, Some(2), |c, a| {
            search::<true>(c, a, $ass_who, $same)
        });
    };
}

// Long by design: a table, one entry per primitive.
pub fn register(t: &mut PrimTable) {
    t.add("eq?", 2, Some(2), |_, a| Ok(boolean(a[0].eq(a[1]))));
    t.add("eqv?", 2, Some(2), |c, a| {
        Ok(boolean(eqv(c.heap, a[0], a[1])))
    });
    t.add("equal?", 2, Some(2), |c, a| {
        Ok(boolean(equal(c.heap, a[0], a[1], &mut c.budget)?))
    });
    t.add("not", 1, Some(1), |_, a| {
        Ok(boolean(matches!(a[0], Value::Bool(false))))
    });
    t.add("boolean?", 1, Some(1), |_, a| {
        Ok(boolean(matches!(a[0], Value::Bool(_))))
    });
    t.add("boolean=?", 2, None, |c, a| {
        all_eq(c, a, "boolean=?", "a boolean", |v| {
            matches!(v, Value::Bool(_))
        })
    });
    t.add("cons", 2, Some(2), |c, a| Ok(c.heap.cons(a[0], a[1])));
    t.add("car", 1, Some(1), |c, a| pair(c, "car", a[0]).map(|p| p.0));
    t.add("cdr", 1, Some(1), |c, a| pair(c, "cdr", a[0]).map(|p| p.1));
    t.add("set-car!", 2, Some(2), |c, a| {
        set_pair(c, "set-car!", a[0], a[1], true)
    });
    t.add("set-cdr!", 2, Some(2), |c, a| {
        set_pair(c, "set-cdr!", a[0], a[1], false)
    });
    t.add("pair?", 1, Some(1), |c, a| {
        Ok(boolean(c.heap.pair(a[0]).is_some()))
    });
    t.add("null?", 1, Some(1), |_, a| {
        Ok(boolean(matches!(a[0], Value::Null)))
    });
    t.add("list?", 1, Some(1), |c, a| {
        Ok(boolean(is_list_within(c.heap, a[0], &mut c.budget)?))
    });
    t.add("list", 0, None, |c, a| c.list(a));
    t.add("cons*", 1, None, |c, a| {
        c.list_with_tail(&a[..a.len() - 1], a[a.len() - 1])
    });
    t.add("make-list", 1, Some(2), |c, a| {
        let n = index(c, "make-list", a[0])?;
        c.heap.check_slots_room(n)?;
        let fill = a.get(1).copied().unwrap_or(Value::Unspecified);
        let mut l = Value::Null;
        let mut left = n;
        while left > 0 {
            let chunk = left.min(super::ELEMENT_CHUNK);
            c.charge_elements(chunk)?;
            for _ in 0..chunk {
                l = c.heap.cons(fill, l);
            }
            left -= chunk;
        }
        Ok(l)
    });
    t.add("length", 1, Some(1), |c, a| {
        // Counted, not collected: the length of a list that fills most of
        // the memory cap needs no copy of it.
        let mut n = 0usize;
        let mut l = a[0];
        while let Some((_, d)) = c.heap.pair(l) {
            n += 1;
            if n % super::ELEMENT_CHUNK == 0 {
                c.charge_elements(super::ELEMENT_CHUNK)?;
            }
            if n > c.heap.slots() {
                break;
            }
            l = d;
        }
        match l {
            Value::Null => Ok(Value::Int(n as i64)),
            _ => Err(type_error(c, "length", "a proper list", a[0])),
        }
    });
    t.add("append", 0, None, append);
    t.add("reverse", 1, Some(1), |c, a| {
        let mut items = list_items(c, "reverse", a[0])?;
        items.reverse();
        c.list(&items)
    });
    t.add("list-tail", 2, Some(2), |c, a| {
        let k = index(c, "list-tail", a[1])?;
        let mut l = a[0];
        for _ in 0..k {
            c.charge_elements(1)?;
            l = match c.heap.pair(l) {
                Some((_, d)) => d,
                None => {
                    return Err(Fault::Error(
                        format!("list-tail: index {k} is past the end of the list"),
                        vec![],
                    ))
                }
            };
        }
        Ok(l)
    });
    t.add("list-ref", 2, Some(2), |c, a| {
        let (x, _) = nth_pair(c, "list-ref", a)?;
        Ok(x)
    });
    t.add("list-set!", 3, Some(3), |c, a| {
        let (_, l) = nth_pair(c, "list-set!", a)?;
        set_pair(c, "list-set!", l, a[2], true)
    });
    t.add("list-copy", 1, Some(1), |c, a| {
        // Copies the spine; an improper tail is kept.
        let mut items = Vec::new();
        let mut l = a[0];
        while let Some((x, d)) = c.heap.pair(l) {
            c.charge_elements(1)?;
            items.push(x);
            l = d;
            if items.len() > c.heap.slots() {
                return Err(type_error(c, "list-copy", "a list", a[0]));
            }
        }
        c.list_with_tail(&items, l)
    });
    // `member` and `assoc` with their optional third argument are the
    // prelude's, over `%member` and `%assoc`.
    searches!(t, "memq" "memq", "assq" "assq", |_, x, y, _| Ok(x.eq(y)));
    searches!(t, "memv" "memv", "assv" "assv", |h, x, y, _| Ok(eqv(h, x, y)));
    searches!(t, "%member" "member", "%assoc" "assoc", |h, x, y, b| equal(h, x, y, b));
    t.add("symbol?", 1, Some(1), |_, a| {
        Ok(boolean(matches!(a[0], Value::Sym(_))))
    });
    t.add("symbol=?", 2, None, |c, a| {
        all_eq(c, a, "symbol=?", "a symbol", |v| matches!(v, Value::Sym(_)))
    });
    t.add("symbol->string", 1, Some(1), |c, a| {
        let name = super::symbol_name(c, "symbol->string", a[0])?;
        Ok(c.heap.string(&name))
    });
    t.add("string->symbol", 1, Some(1), |c, a| {
        let s: String = super::string(c, "string->symbol", a[0])?.iter().collect();
        Ok(Value::Sym(c.syms.intern(&s)))
    });
}

/// `boolean=?` and `symbol=?`: every argument of the kind, all `eq?`.
fn all_eq(
    c: &Ctx,
    a: &[Value],
    who: &str,
    expected: &str,
    kind: fn(Value) -> bool,
) -> Result<Value, Fault> {
    if let Some(&bad) = a.iter().find(|v| !kind(**v)) {
        return Err(type_error(c, who, expected, bad));
    }
    Ok(boolean(a.windows(2).all(|w| w[0].eq(w[1]))))
}

fn pair(c: &Ctx, who: &str, v: Value) -> Result<(Value, Value), Fault> {
    c.heap
        .pair(v)
        .ok_or_else(|| type_error(c, who, "a pair", v))
}

fn set_pair(c: &mut Ctx, who: &str, p: Value, v: Value, car: bool) -> Result<Value, Fault> {
    match c.heap.obj_mut(p) {
        Some(Object::Pair(a, d)) => {
            if car {
                *a = v;
            } else {
                *d = v;
            }
            Ok(Value::Unspecified)
        }
        _ => Err(type_error(c, who, "a pair", p)),
    }
}

/// Whether `v` is a proper list (a cyclic list is not), the walk charged
/// to `work`.
pub fn is_list_within<W: Work>(heap: &Heap, v: Value, work: &mut W) -> Result<bool, W::Stop> {
    // Floyd's cycle detection: a cyclic list is not a list.
    let mut slow = v;
    let mut fast = v;
    loop {
        match fast {
            Value::Null => return Ok(true),
            _ => match heap.pair(fast) {
                None => return Ok(false),
                Some((_, d)) => match d {
                    Value::Null => return Ok(true),
                    _ => match heap.pair(d) {
                        None => return Ok(false),
                        Some((_, d2)) => {
                            work.charge(3 * super::ELEMENT_UNITS)?;
                            fast = d2;
                            slow = heap.pair(slow).map(|p| p.1).unwrap_or(Value::Null);
                            if fast.eq(slow) && !matches!(fast, Value::Null) {
                                return Ok(false);
                            }
                        }
                    },
                },
            },
        }
    }
}

fn append(c: &mut Ctx, a: &[Value]) -> Result<Value, Fault> {
    let Some((&last, init)) = a.split_last() else {
        return Ok(Value::Null);
    };
    let mut items = Vec::new();
    for &l in init {
        items.extend(list_items(c, "append", l)?);
    }
    c.list_with_tail(&items, last)
}

/// `(WHO list k ...)`: the car of the k-th pair of list and that pair, or
/// the error that the list is shorter.
fn nth_pair(c: &mut Ctx, who: &str, a: &[Value]) -> Result<(Value, Value), Fault> {
    let k = index(c, who, a[1])?;
    let mut l = a[0];
    for _ in 0..k {
        c.charge_elements(1)?;
        l = c.heap.pair(l).map(|p| p.1).unwrap_or(Value::Null);
    }
    match c.heap.pair(l) {
        Some((x, _)) => Ok((x, l)),
        None => Err(Fault::Error(
            format!("{who}: index {k} out of range"),
            vec![],
        )),
    }
}

/// How `member` and `assoc` and their kin compare, charging their work.
type Same = fn(&Heap, Value, Value, &mut Budget<'_>) -> Result<bool, Fault>;

/// Units of work charged per element of a list walked.
const WALK_UNITS: u64 = 4;

/// `member`'s walk (KEYS false: the first tail of list a[1] whose car is
/// the same as a[0]) and `assoc`'s (KEYS true: the first element of a[1],
/// a list of pairs, whose car is), or #f. Inlined into each primitive, so
/// that its sameness is a direct call.
#[inline(always)]
fn search<const KEYS: bool>(
    c: &mut Ctx,
    a: &[Value],
    who: &str,
    same: Same,
) -> Result<Value, Fault> {
    let mut l = a[1];
    let mut n = 0usize;
    while let Some((x, d)) = c.heap.pair(l) {
        c.budget.charge(WALK_UNITS)?;
        let (key, found) = if !KEYS {
            (x, l)
        } else {
            match c.heap.pair(x) {
                Some((k, _)) => (k, x),
                None => return Err(type_error(c, who, "a list of pairs", a[1])),
            }
        };
        if same(c.heap, a[0], key, &mut c.budget)? {
            return Ok(found);
        }
        l = d;
        n += 1;
        if n > c.heap.slots() {
            break;
        }
    }
    if matches!(l, Value::Null) {
        Ok(Value::Bool(false))
    } else {
        Err(type_error(c, who, "a proper list", a[1]))
    }
}

pub fn eqv(heap: &Heap, a: Value, b: Value) -> bool {
    if a.eq(b) {
        return true;
    }
    match (heap.obj(a), heap.obj(b)) {
        (Some(Object::Big(x)), Some(Object::Big(y))) => x == y,
        (Some(Object::Rat(x)), Some(Object::Rat(y))) => x == y,
        (Some(Object::Complex(x)), Some(Object::Complex(y))) => {
            let same = |a: &Num, b: &Num| match (a, b) {
                (Num::Float(a), Num::Float(b)) => a.to_bits() == b.to_bits(),
                _ => a == b,
            };
            same(&x.re, &y.re) && same(&x.im, &y.im)
        }
        (Some(Object::Str(x)), Some(Object::Str(y))) => x.is_empty() && y.is_empty(),
        (Some(Object::Vector(x)), Some(Object::Vector(y))) => x.is_empty() && y.is_empty(),
        (Some(Object::Bytevector(x)), Some(Object::Bytevector(y))) => x.is_empty() && y.is_empty(),
        _ => false,
    }
}

/// Units of work (`number::Work`) `equal?` charges per pair of values it
/// compares: about what a comparison and a set insertion take.
const EQUAL_UNITS: u64 = 64;

/// `equal?`, terminating on cyclic structure: a pair of containers already
/// being compared is assumed equal (the greatest fixed point). Charged to
/// `budget` as it goes, so a long comparison stops at the evaluation's
/// limits.
pub fn equal<W: Work>(heap: &Heap, a: Value, b: Value, budget: &mut W) -> Result<bool, W::Stop> {
    let mut work = vec![(a, b)];
    let mut assumed: BTreeSet<(Ref, Ref)> = BTreeSet::new();
    while let Some((x, y)) = work.pop() {
        budget.charge(EQUAL_UNITS)?;
        if eqv(heap, x, y) {
            continue;
        }
        let (Value::Obj(rx), Value::Obj(ry)) = (x, y) else {
            // Numbers of different exactness are not equal?; everything else compared by eqv?.
            return Ok(false);
        };
        match (heap.get(rx), heap.get(ry)) {
            (Object::Pair(a1, d1), Object::Pair(a2, d2)) => {
                if !assumed.insert((rx, ry)) {
                    continue;
                }
                work.push((*d1, *d2));
                work.push((*a1, *a2));
            }
            (Object::Vector(v1), Object::Vector(v2)) => {
                if v1.len() != v2.len() {
                    return Ok(false);
                }
                if !assumed.insert((rx, ry)) {
                    continue;
                }
                for (p, q) in v1.iter().zip(v2.iter()).rev() {
                    work.push((*p, *q));
                }
            }
            (Object::Str(s1), Object::Str(s2)) => {
                if s1 != s2 {
                    return Ok(false);
                }
            }
            (Object::Bytevector(b1), Object::Bytevector(b2)) => {
                if b1 != b2 {
                    return Ok(false);
                }
            }
            _ => return Ok(false),
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests;
