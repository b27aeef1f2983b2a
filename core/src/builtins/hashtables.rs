//! The native side of `(scheme hash-table)` (SRFI 125 and 69): tables
//! are heap objects (`table::HashTable`); these `%` primitives make, read
//! and change them, and the library (`libraries/hash-table.scm`) builds
//! the SRFI's procedures on them. Every primitive takes first the name of
//! the library procedure it works for, which its errors name.
//!
//! Hashes: an `eq?` table hashes an object by its heap index (the
//! collector never moves a live object), an `eqv?` table hashes numbers by
//! value, an `equal?` table hashes strings, bytevectors, pairs and vectors
//! by their contents (at most `EQUAL_NODES` values of a structure, so
//! hashing is bounded and ends on cycles), string tables by the
//! characters (case-folded for `string-ci=?`). A custom table's hash comes
//! from the program's hash function, given to each primitive.

use super::chars::foldcase;
use super::lists::{equal, eqv};
use super::strings::fold_string;
use super::{boolean, type_error, Ctx, Fault, PrimTable};
use crate::heap::Heap;
use crate::number::Num;
#[cfg(test)]
use crate::number::Unmetered;
use crate::symbol::SymbolTable;
use crate::value::table::{HashTable, Kind};
use crate::value::{Object, Value};

/// Values of a structure an `equal?` hash looks at.
const EQUAL_NODES: usize = 64;

/// Units of work charged per entry a primitive copies or lists.
const ENTRY_UNITS: u64 = 8;

/// Hash values handed to Scheme are below 2^62: fixnums everywhere.
const HASH_MASK: u64 = (1 << 62) - 1;

#[inline]
fn mix(mut h: u64) -> u64 {
    // The finaliser of SplitMix64: every input bit reaches every output bit.
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

#[inline]
fn combine(h: u64, x: u64) -> u64 {
    mix(h.rotate_left(5) ^ x)
}

/// The `eq?` hash: identity for objects, value for immediates.
#[inline]
pub fn eq_hash(v: Value) -> u64 {
    mix(match v {
        Value::Null => 1,
        Value::Bool(b) => 2 + b as u64,
        Value::Int(i) => (i as u64) ^ 0x1000,
        Value::Float(f) => f.to_bits() ^ 0x2000,
        Value::Char(c) => (c as u64) << 8 | 0x30,
        Value::Sym(s) => (s.0 as u64) << 8 | 0x40,
        Value::Unspecified => 5,
        Value::Undefined => 6,
        Value::Eof => 7,
        Value::Prim(p) => (p as u64) << 8 | 0x50,
        Value::Obj(r) => (r as u64) << 8 | 0x60,
    })
}

fn bytes_hash(seed: u64, b: &[u8]) -> u64 {
    let mut h = seed;
    for chunk in b.chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        h = combine(h, u64::from_le_bytes(w));
    }
    combine(h, b.len() as u64)
}

fn chars_hash(seed: u64, s: impl Iterator<Item = char>) -> u64 {
    let mut h = seed;
    let mut n = 0u64;
    for ch in s {
        h = combine(h, ch as u64);
        n += 1;
    }
    combine(h, n)
}

/// A real number's hash by value (as `eqv?` compares: exactness counts).
fn num_hash(n: &Num) -> u64 {
    match n {
        Num::Int(i) => mix(*i as u64),
        Num::Float(f) => combine(0x77, f.to_bits()),
        Num::Big(b) => bytes_hash(0x70, &b.to_signed_bytes_le()),
        Num::Rat(q) => combine(
            bytes_hash(0x71, &q.numer().to_signed_bytes_le()),
            bytes_hash(0x72, &q.denom().to_signed_bytes_le()),
        ),
    }
}

/// The `eqv?` hash: numbers by value, empty strings, vectors and
/// bytevectors alike (`eqv?` holds between any two of a kind), everything
/// else as `eq_hash`.
pub fn eqv_hash(heap: &Heap, v: Value) -> u64 {
    match heap.obj(v) {
        Some(Object::Big(_)) | Some(Object::Rat(_)) => match Num::from_value(heap, v) {
            Some(n) => num_hash(&n),
            None => eq_hash(v),
        },
        Some(Object::Complex(z)) => combine(num_hash(&z.re), num_hash(&z.im)),
        Some(Object::Str(s)) if s.is_empty() => 0x74,
        Some(Object::Vector(x)) if x.is_empty() => 0x75,
        Some(Object::Bytevector(x)) if x.is_empty() => 0x76,
        _ => eq_hash(v),
    }
}

/// The `equal?` hash, looking at no more than `EQUAL_NODES` values.
pub fn equal_hash(heap: &Heap, v: Value) -> u64 {
    let mut h = 0x80u64;
    let mut todo = vec![v];
    let mut seen = 0;
    while let Some(x) = todo.pop() {
        seen += 1;
        if seen > EQUAL_NODES {
            break;
        }
        h = combine(
            h,
            match heap.obj(x) {
                Some(Object::Str(s)) => chars_hash(0x81, s.iter().copied()),
                Some(Object::Bytevector(b)) => bytes_hash(0x82, b),
                Some(Object::Pair(a, d)) => {
                    todo.push(*d);
                    todo.push(*a);
                    0x83
                }
                Some(Object::Vector(items)) => {
                    todo.extend(items.iter().take(EQUAL_NODES).rev());
                    combine(0x84, items.len() as u64)
                }
                _ => eqv_hash(heap, x),
            },
        );
    }
    h
}

fn string_hash(s: &[char]) -> u64 {
    chars_hash(0x90, s.iter().copied())
}

fn string_ci_hash(s: &[char]) -> u64 {
    let folded = fold_string(&s.iter().collect::<String>());
    chars_hash(0x90, folded.chars())
}

/// The hash of `key` in a table of `kind` (not custom); `None` when a
/// string table is given something else than a string.
pub fn key_hash(heap: &Heap, kind: Kind, key: Value) -> Option<u64> {
    Some(match kind {
        Kind::Eq => eq_hash(key),
        Kind::Eqv => eqv_hash(heap, key),
        Kind::Equal => equal_hash(heap, key),
        Kind::String | Kind::StringCi => match heap.obj(key) {
            Some(Object::Str(s)) if kind == Kind::String => string_hash(s),
            Some(Object::Str(s)) => string_ci_hash(s),
            _ => return None,
        },
        Kind::Custom => return None,
    })
}

/// Hashes again the tables among `objs` (just read back from a dump, the
/// objects renumbered): every kind but custom, whose hashes came from the
/// program and were written with the table.
pub fn rehash_tables(heap: &mut Heap, objs: &[Value]) {
    for &v in objs {
        let Some(Object::HashTable(t)) = heap.obj(v) else {
            continue;
        };
        if t.kind == Kind::Custom {
            let mut t = t.clone();
            t.rehash(|_| None);
            if let Some(Object::HashTable(place)) = heap.obj_mut(v) {
                *place = t;
            }
            continue;
        }
        let hashes: Vec<u64> = t
            .keys()
            .iter()
            .map(|&k| key_hash(heap, t.kind, k).unwrap_or(0))
            .collect();
        if let Some(Object::HashTable(t)) = heap.obj_mut(v) {
            let mut it = hashes.into_iter();
            t.rehash(|_| it.next());
        }
    }
}

fn who_name(c: &Ctx, who: Value) -> String {
    match who {
        Value::Sym(s) => c.syms.name(s).to_string(),
        _ => "hash-table".to_string(),
    }
}

fn table<'h>(c: &'h Ctx, who: &str, v: Value) -> Result<&'h HashTable, Fault> {
    match c.heap.obj(v) {
        Some(Object::HashTable(t)) => Ok(t),
        _ => Err(type_error(c, who, "a hash table", v)),
    }
}

/// An error unless `v` is a mutable hash table.
fn check_mutable(c: &Ctx, who: &str, v: Value) -> Result<(), Fault> {
    match c.heap.obj(v) {
        Some(Object::HashTable(t)) if !t.mutable => Err(Fault::Error(
            format!("{who}: the hash table is immutable"),
            vec![v],
        )),
        Some(Object::HashTable(_)) => Ok(()),
        _ => Err(type_error(c, who, "a hash table", v)),
    }
}

/// The table to change (saved first for a rollback, see `Heap::obj_mut`).
fn table_mut<'h>(c: &'h mut Ctx, who: &str, v: Value) -> Result<&'h mut HashTable, Fault> {
    check_mutable(c, who, v)?;
    match c.heap.obj_mut(v) {
        Some(Object::HashTable(t)) => Ok(t),
        _ => Err(Fault::Error(
            format!("{who}: expected a hash table"),
            vec![v],
        )),
    }
}

/// A hash the program's hash function returned.
fn given_hash(c: &Ctx, who: &str, v: Value) -> Result<u64, Fault> {
    match (v, c.heap.obj(v)) {
        (Value::Int(i), _) => Ok(mix(i as u64)),
        (_, Some(Object::Big(b))) => Ok(mix(b.iter_u64_digits().next().unwrap_or(0))),
        _ => Err(Fault::Error(
            format!("{who}: the hash function returned something else than an exact integer"),
            vec![v],
        )),
    }
}

/// Where `key` is in table `t`, and its hash: `h` is the hash a custom
/// table's hash function gave (its keys are then matched by `eq?`).
fn locate(
    c: &mut Ctx,
    who: &str,
    t: Value,
    key: Value,
    h: Option<Value>,
) -> Result<(Option<usize>, u64), Fault> {
    let kind = table(c, who, t)?.kind;
    let h = match (kind, h) {
        (Kind::Custom, Some(h)) => given_hash(c, who, h)?,
        (Kind::Custom, None) => {
            return Err(Fault::Error(
                format!("{who}: a custom hash table needs the key's hash"),
                vec![],
            ))
        }
        (_, _) => match key_hash(c.heap, kind, key) {
            Some(h) => h,
            None => return Err(type_error(c, who, "a string key", key)),
        },
    };
    let heap: &Heap = c.heap;
    let Some(Object::HashTable(tab)) = heap.obj(t) else {
        return Err(type_error(c, who, "a hash table", t));
    };
    let found = match kind {
        Kind::Eq | Kind::Custom => tab.find(h, |k| k.eq(key)),
        Kind::Eqv => tab.find(h, |k| eqv(heap, k, key)),
        Kind::Equal => {
            let mut stop = None;
            let budget = &mut c.budget;
            let found = tab.find(h, |k| match equal(heap, k, key, budget) {
                Ok(b) => b,
                Err(e) => {
                    stop = Some(e);
                    false
                }
            });
            if let Some(e) = stop {
                return Err(e);
            }
            found
        }
        Kind::String => {
            let s = match heap.obj(key) {
                Some(Object::Str(s)) => s,
                _ => return Err(type_error(c, who, "a string key", key)),
            };
            tab.find(h, |k| matches!(heap.obj(k), Some(Object::Str(x)) if x == s))
        }
        Kind::StringCi => {
            let fold = |v: Value| match heap.obj(v) {
                Some(Object::Str(s)) => Some(fold_string(&s.iter().collect::<String>())),
                _ => None,
            };
            let want = fold(key);
            tab.find(h, |k| fold(k) == want)
        }
    };
    Ok((found, h))
}

/// An entry number of table `t`.
fn entry(c: &Ctx, who: &str, t: Value, i: Value) -> Result<usize, Fault> {
    let n = table(c, who, t)?.len();
    match i {
        Value::Int(i) if i >= 0 && (i as usize) < n => Ok(i as usize),
        _ => Err(type_error(c, who, "an entry number of the table", i)),
    }
}

fn kind_arg(c: &Ctx, who: &str, v: Value) -> Result<Kind, Fault> {
    match v {
        Value::Int(i) if (0..6).contains(&i) => Ok(Kind::from_code(i as u8).unwrap_or(Kind::Equal)),
        _ => Err(type_error(c, who, "a hash table kind (0 to 5)", v)),
    }
}

fn hash_value(h: u64) -> Value {
    Value::Int((h & HASH_MASK) as i64)
}

fn list_of(c: &mut Ctx, items: Vec<Value>) -> Result<Value, Fault> {
    c.charge(items.len() as u64 * ENTRY_UNITS)?;
    c.heap.check_room(items.len().saturating_mul(64))?;
    Ok(c.heap.list(&items))
}

/// Name of the `who` argument for messages, given the symbol table only
/// (for `%hash`).
fn name_of(syms: &SymbolTable, v: Value) -> String {
    match v {
        Value::Sym(s) => syms.name(s).to_string(),
        _ => "hash".to_string(),
    }
}

// Long by design: a table, one entry per primitive.
pub fn register(t: &mut PrimTable) {
    // (%make-hash-table KIND EQUIV HASH CAPACITY)
    t.add("%make-hash-table", 4, Some(4), |c, a| {
        let kind = kind_arg(c, "make-hash-table", a[0])?;
        let cap = match a[3] {
            Value::Int(i) if i >= 0 => (i as usize).min(1 << 24),
            _ => 0,
        };
        c.heap.check_room(cap.saturating_mul(48))?;
        Ok(c.heap.alloc(Object::HashTable(Box::new(HashTable::new(
            kind, a[1], a[2], cap,
        )))))
    });
    t.add("%hash-table?", 1, Some(1), |c, a| {
        Ok(boolean(matches!(
            c.heap.obj(a[0]),
            Some(Object::HashTable(_))
        )))
    });
    // A table whose keys the engine hashes itself (not custom).
    t.add("%ht-native?", 1, Some(1), |c, a| {
        Ok(boolean(matches!(
            c.heap.obj(a[0]),
            Some(Object::HashTable(t)) if t.kind != Kind::Custom
        )))
    });
    t.add("%ht-kind", 2, Some(2), |c, a| {
        let who = who_name(c, a[0]);
        Ok(Value::Int(table(c, &who, a[1])?.kind.code() as i64))
    });
    t.add("%ht-equiv", 2, Some(2), |c, a| {
        let who = who_name(c, a[0]);
        Ok(table(c, &who, a[1])?.equiv)
    });
    t.add("%ht-hash-function", 2, Some(2), |c, a| {
        let who = who_name(c, a[0]);
        Ok(table(c, &who, a[1])?.hash)
    });
    t.add("%ht-mutable?", 2, Some(2), |c, a| {
        let who = who_name(c, a[0]);
        Ok(boolean(table(c, &who, a[1])?.mutable))
    });
    t.add("%ht-size", 2, Some(2), |c, a| {
        let who = who_name(c, a[0]);
        Ok(Value::Int(table(c, &who, a[1])?.len() as i64))
    });
    // (%ht-ref WHO TABLE KEY DEFAULT [HASH]): the value, or DEFAULT.
    t.add("%ht-ref", 4, Some(5), |c, a| {
        let who = who_name(c, a[0]);
        let (found, _) = locate(c, &who, a[1], a[2], a.get(4).copied())?;
        Ok(match found {
            Some(i) => table(c, &who, a[1])?.value(i),
            None => a[3],
        })
    });
    t.add("%ht-contains?", 3, Some(4), |c, a| {
        let who = who_name(c, a[0]);
        let (found, _) = locate(c, &who, a[1], a[2], a.get(3).copied())?;
        Ok(boolean(found.is_some()))
    });
    // (%ht-set! WHO TABLE KEY VALUE [HASH])
    t.add("%ht-set!", 4, Some(5), |c, a| {
        let who = who_name(c, a[0]);
        check_mutable(c, &who, a[1])?;
        let (found, h) = locate(c, &who, a[1], a[2], a.get(4).copied())?;
        let (key, value) = (a[2], a[3]);
        let n = table(c, &who, a[1])?.len();
        if found.is_none() && n.is_power_of_two() {
            c.heap.check_room(n * 48)?;
        }
        let tab = table_mut(c, &who, a[1])?;
        match found {
            Some(i) => tab.set_value(i, value),
            None => {
                tab.push(h, key, value);
                c.heap.bytes += 48;
            }
        }
        Ok(Value::Unspecified)
    });
    // (%ht-delete! WHO TABLE KEY [HASH]): 1 if it was there, else 0.
    t.add("%ht-delete!", 3, Some(4), |c, a| {
        let who = who_name(c, a[0]);
        check_mutable(c, &who, a[1])?;
        let (found, _) = locate(c, &who, a[1], a[2], a.get(3).copied())?;
        if let Some(i) = found {
            table_mut(c, &who, a[1])?.remove(i);
        }
        Ok(Value::Int(found.is_some() as i64))
    });
    // Entries by number (0 to size - 1), for `hash-table-pop!`.
    t.add("%ht-key-at", 3, Some(3), |c, a| {
        let who = who_name(c, a[0]);
        let i = entry(c, &who, a[1], a[2])?;
        Ok(table(c, &who, a[1])?.key(i))
    });
    t.add("%ht-value-at", 3, Some(3), |c, a| {
        let who = who_name(c, a[0]);
        let i = entry(c, &who, a[1], a[2])?;
        Ok(table(c, &who, a[1])?.value(i))
    });
    t.add("%ht-remove-at!", 3, Some(3), |c, a| {
        let who = who_name(c, a[0]);
        let i = entry(c, &who, a[1], a[2])?;
        table_mut(c, &who, a[1])?.remove(i);
        Ok(Value::Unspecified)
    });
    // An error unless TABLE is a mutable hash table.
    t.add("%ht-mutable-check", 2, Some(2), |c, a| {
        let who = who_name(c, a[0]);
        check_mutable(c, &who, a[1])?;
        Ok(Value::Unspecified)
    });
    // Makes the table immutable; returns it.
    t.add("%ht-freeze", 1, Some(1), |c, a| {
        if let Some(Object::HashTable(t)) = c.heap.obj_mut(a[0]) {
            t.mutable = false;
        }
        Ok(a[0])
    });
    // (%ht-candidates WHO TABLE HASH): a custom table's keys stored under HASH.
    t.add("%ht-candidates", 3, Some(3), |c, a| {
        let who = who_name(c, a[0]);
        let h = given_hash(c, &who, a[2])?;
        let keys = table(c, &who, a[1])?.keys_with_hash(h);
        list_of(c, keys)
    });
    t.add("%ht-keys", 2, Some(2), |c, a| {
        let who = who_name(c, a[0]);
        let keys = table(c, &who, a[1])?.keys().to_vec();
        list_of(c, keys)
    });
    t.add("%ht-values", 2, Some(2), |c, a| {
        let who = who_name(c, a[0]);
        let values = table(c, &who, a[1])?.values().to_vec();
        list_of(c, values)
    });
    // (%ht-alist WHO TABLE): ((KEY . VALUE) ...)
    t.add("%ht-alist", 2, Some(2), |c, a| {
        let who = who_name(c, a[0]);
        let tab = table(c, &who, a[1])?;
        let entries: Vec<(Value, Value)> = tab
            .keys()
            .iter()
            .copied()
            .zip(tab.values().iter().copied())
            .collect();
        c.charge(entries.len() as u64 * ENTRY_UNITS)?;
        c.heap.check_room(entries.len().saturating_mul(128))?;
        let mut l = Value::Null;
        for (k, v) in entries.into_iter().rev() {
            let p = c.heap.cons(k, v);
            l = c.heap.cons(p, l);
        }
        Ok(l)
    });
    t.add("%ht-clear!", 2, Some(2), |c, a| {
        let who = who_name(c, a[0]);
        table_mut(c, &who, a[1])?.clear();
        Ok(Value::Unspecified)
    });
    // (%ht-copy WHO TABLE MUTABLE?)
    t.add("%ht-copy", 3, Some(3), |c, a| {
        let who = who_name(c, a[0]);
        let mut copy = table(c, &who, a[1])?.clone();
        copy.mutable = !matches!(a[2], Value::Bool(false));
        c.charge(copy.len() as u64 * ENTRY_UNITS)?;
        c.heap.check_room(copy.size())?;
        Ok(c.heap.alloc(Object::HashTable(Box::new(copy))))
    });
    // (%ht-empty-copy WHO TABLE): a new table of the same kind.
    t.add("%ht-empty-copy", 2, Some(2), |c, a| {
        let who = who_name(c, a[0]);
        let tab = table(c, &who, a[1])?;
        let copy = HashTable::new(tab.kind, tab.equiv, tab.hash, 0);
        Ok(c.heap.alloc(Object::HashTable(Box::new(copy))))
    });
    // (%hash WHO KIND OBJ): the hash of OBJ for KIND (0 eq, 1 eqv, 2
    // equal, 3 string, 4 string-ci), a non-negative fixnum.
    t.add("%hash", 3, Some(3), |c, a| {
        let who = name_of(c.syms, a[0]);
        let kind = kind_arg(c, &who, a[1])?;
        match key_hash(c.heap, kind, a[2]) {
            Some(h) => Ok(hash_value(h)),
            None => Err(type_error(c, &who, "a string", a[2])),
        }
    });
    // (%char-ci-hash CHAR): for comparators of characters.
    t.add("%char-hash", 2, Some(2), |c, a| match a[0] {
        Value::Char(ch) => {
            let ch = if matches!(a[1], Value::Bool(false)) {
                ch
            } else {
                foldcase(ch)
            };
            Ok(hash_value(mix(ch as u64)))
        }
        _ => Err(type_error(c, "char-hash", "a character", a[0])),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_hash_agrees_with_equal_on_strings_lists_and_vectors() {
        let mut heap = Heap::new();
        let a = heap.string("abc");
        let b = heap.string("abc");
        let l1 = heap.list(&[a, Value::Int(1)]);
        let l2 = heap.list(&[b, Value::Int(1)]);
        assert_eq!(equal_hash(&heap, l1), equal_hash(&heap, l2));
        let v1 = heap.alloc(Object::Vector(vec![l1, Value::Float(1.5)]));
        let v2 = heap.alloc(Object::Vector(vec![l2, Value::Float(1.5)]));
        assert_eq!(equal_hash(&heap, v1), equal_hash(&heap, v2));
        assert!(equal(&heap, v1, v2, &mut Unmetered).unwrap_or(false));
        assert_ne!(equal_hash(&heap, l1), equal_hash(&heap, v1));
        assert_ne!(eq_hash(Value::Int(1)), eq_hash(Value::Float(1.0)));
    }

    #[test]
    fn a_cyclic_list_hashes() {
        let mut heap = Heap::new();
        let l = heap.list(&[Value::Int(1), Value::Int(2)]);
        if let Some((_, d)) = heap.pair(l) {
            if let Some(Object::Pair(_, tail)) = heap.obj_mut(d) {
                *tail = l;
            }
        }
        let _ = equal_hash(&heap, l);
    }

    #[test]
    fn table_index_survives_removals() {
        let mut t = HashTable::new(Kind::Eq, Value::Bool(false), Value::Bool(false), 0);
        for i in 0..1000 {
            t.push(eq_hash(Value::Int(i)), Value::Int(i), Value::Int(i * 2));
        }
        for i in (0..1000).step_by(3) {
            let h = eq_hash(Value::Int(i));
            let at = t.find(h, |k| k.eq(Value::Int(i))).unwrap();
            t.remove(at);
        }
        assert_eq!(t.len(), 1000 - 334);
        for i in 0..1000 {
            let h = eq_hash(Value::Int(i));
            let at = t.find(h, |k| k.eq(Value::Int(i)));
            assert_eq!(at.is_some(), i % 3 != 0, "{i}");
            if let Some(at) = at {
                assert!(t.value(at).eq(Value::Int(i * 2)));
            }
        }
    }
}
