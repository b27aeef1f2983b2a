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

// ---- a merge sort whose order is the program's own -----------------------
//
// A primitive never calls back into Scheme, so the merge sort is a state
// machine the library drives: `(%merge-sort-start V START END)` makes the
// state, a vector; each `(%merge-sort-step! S ANSWER)` takes the order's
// answer for the last pair, moves elements until the next comparison is
// needed, leaves that pair in S[0] (an element of the right run) and S[1]
// (one of the left run), and returns #f; or returns #t when the sort is
// done, its result in S[2]. The library's loop calls the order between
// steps, so the order runs as any Scheme call does: under the step, memory
// and time limits, free to raise or to escape by a continuation (which
// abandons the state). Bottom-up and stable: on a tie (the order says the
// right element is not less) the left element goes first.

/// The state's slots.
const X: usize = 0;
const Y: usize = 1;
const SRC: usize = 2;
const DST: usize = 3;
const WIDTH: usize = 4;
const I: usize = 5;
const MID: usize = 6;
const J: usize = 7;
const HI: usize = 8;
const K: usize = 9;
const WAITING: usize = 10;
const SLOTS: usize = 11;

struct Merge {
    width: usize,
    i: usize,
    mid: usize,
    j: usize,
    hi: usize,
    k: usize,
    waiting: bool,
}

impl Merge {
    /// Writes the state: the runs' vectors and where the merge is.
    fn store(&self, slots: &mut [Value], src: Value, dst: Value) {
        let int = |x: usize| Value::Int(x as i64);
        slots[SRC] = src;
        slots[DST] = dst;
        slots[WIDTH] = int(self.width);
        slots[I] = int(self.i);
        slots[MID] = int(self.mid);
        slots[J] = int(self.j);
        slots[HI] = int(self.hi);
        slots[K] = int(self.k);
        slots[WAITING] = Value::Bool(self.waiting);
    }
}

fn bad_state() -> Fault {
    Fault::Error("%merge-sort-step!: not a merge sort state".into(), vec![])
}

fn state_fields(c: &Ctx, s: Value) -> Result<(Value, Value, Merge), Fault> {
    let Some(Object::Vector(v)) = c.heap.obj(s) else {
        return Err(bad_state());
    };
    if v.len() != SLOTS {
        return Err(bad_state());
    }
    let n = |i: usize| match v[i] {
        Value::Int(x) if x >= 0 => Ok(x as usize),
        _ => Err(bad_state()),
    };
    let m = Merge {
        width: n(WIDTH)?,
        i: n(I)?,
        mid: n(MID)?,
        j: n(J)?,
        hi: n(HI)?,
        k: n(K)?,
        waiting: matches!(v[WAITING], Value::Bool(true)),
    };
    Ok((v[SRC], v[DST], m))
}

pub fn register_merge(t: &mut PrimTable) {
    t.add("%merge-sort-start", 3, Some(3), |c, a| {
        let who = "vector-sort";
        let len = match c.heap.obj(a[0]) {
            Some(Object::Vector(v)) => v.len(),
            _ => return Err(super::type_error(c, who, "a vector", a[0])),
        };
        let (start, end) = super::range(c, who, a, 1, len)?;
        let n = end - start;
        c.heap
            .check_room(n.saturating_mul(32).saturating_add(256))?;
        c.charge(n as u64 / 4)?;
        let items = match c.heap.obj(a[0]) {
            Some(Object::Vector(v)) => v[start..end].to_vec(),
            _ => return Err(bad_state()),
        };
        let src = c.heap.alloc(Object::Vector(items));
        let dst = c.heap.alloc(Object::Vector(vec![Value::Bool(false); n]));
        let mut slots = vec![Value::Bool(false); SLOTS];
        // The first pair of runs: [0, 1) and [1, 2), clipped to n.
        let first = Merge {
            width: 1,
            i: 0,
            mid: 1.min(n),
            j: 1.min(n),
            hi: 2.min(n),
            k: 0,
            waiting: false,
        };
        first.store(&mut slots, src, dst);
        Ok(c.heap.alloc(Object::Vector(slots)))
    });
    t.add("%merge-sort-step!", 2, Some(2), |c, a| {
        let (src, dst, mut m) = state_fields(c, a[0])?;
        let (mut src, mut dst) = (src, dst);
        let n = match (c.heap.obj(src), c.heap.obj(dst)) {
            (Some(Object::Vector(x)), Some(Object::Vector(y))) if x.len() == y.len() => x.len(),
            _ => return Err(bad_state()),
        };
        if m.mid > m.hi || m.hi > n || m.i > m.mid || m.j > m.hi || m.k > n || m.width == 0 {
            return Err(bad_state());
        }
        let get = |c: &Ctx, v: Value, i: usize| match c.heap.obj(v) {
            Some(Object::Vector(x)) => x.get(i).copied(),
            _ => None,
        };
        let put = |c: &mut Ctx, v: Value, i: usize, x: Value| match c.heap.obj_mut(v) {
            Some(Object::Vector(y)) if i < y.len() => {
                y[i] = x;
                Ok(())
            }
            _ => Err(bad_state()),
        };
        if m.waiting {
            let right_first = !matches!(a[1], Value::Bool(false));
            let from = if right_first { m.j } else { m.i };
            if (right_first && m.j >= m.hi) || (!right_first && m.i >= m.mid) {
                return Err(bad_state());
            }
            let x = get(c, src, from).ok_or_else(bad_state)?;
            put(c, dst, m.k, x)?;
            if right_first {
                m.j += 1;
            } else {
                m.i += 1;
            }
            m.k += 1;
            m.waiting = false;
        }
        let mut moved = 0u64;
        let done = loop {
            if m.i < m.mid && m.j < m.hi {
                break false;
            }
            // One run is used up: the rest of the other follows as it is.
            let rest: Vec<Value> = match c.heap.obj(src) {
                Some(Object::Vector(x)) => {
                    x[m.i..m.mid].iter().chain(&x[m.j..m.hi]).copied().collect()
                }
                _ => return Err(bad_state()),
            };
            moved += rest.len() as u64;
            match c.heap.obj_mut(dst) {
                Some(Object::Vector(y)) if m.k + rest.len() <= y.len() => {
                    y[m.k..m.k + rest.len()].copy_from_slice(&rest);
                }
                _ => return Err(bad_state()),
            }
            // The next pair of runs, or the next pass.
            let mut lo = m.hi;
            if lo >= n {
                std::mem::swap(&mut src, &mut dst);
                m.width = m.width.saturating_mul(2);
                if m.width >= n {
                    break true;
                }
                lo = 0;
            }
            m.i = lo;
            m.mid = (lo + m.width).min(n);
            m.j = m.mid;
            m.hi = (lo + 2 * m.width).min(n);
            m.k = lo;
        };
        c.charge(2 + moved / 4)?;
        let pair = if done {
            None
        } else {
            Some((
                get(c, src, m.j).ok_or_else(bad_state)?,
                get(c, src, m.i).ok_or_else(bad_state)?,
            ))
        };
        let Some(Object::Vector(s)) = c.heap.obj_mut(a[0]) else {
            return Err(bad_state());
        };
        m.waiting = !done;
        m.store(s, src, dst);
        if let Some((x, y)) = pair {
            s[X] = x;
            s[Y] = y;
        }
        Ok(Value::Bool(done))
    });
}
