//! Scheme values in and out of the `arb:` procedures.
//!
//! Results are association lists with string keys, `#f` for absent, ids as
//! exact integers (bignums above 2^63). Failures are error alists:
//! `(("error" . KIND) ("message" . TEXT) ...)`.

use crate::heap::Heap;
use crate::number::Num;
use crate::printer;
use crate::symbol::SymbolTable;
use crate::value::{Object, Value};

/// A value of an error alist's extra entries, built once the heap is at hand.
#[derive(Clone, Debug, PartialEq)]
pub enum Extra {
    Id(u64),
    Ids(Vec<u64>),
    Int(i64),
    Str(String),
}

/// A failure of an `arb:` procedure, returned to Scheme as an error alist.
#[derive(Clone, Debug, PartialEq)]
pub struct ArbError {
    pub kind: String,
    pub message: String,
    pub extra: Vec<(&'static str, Extra)>,
}

impl ArbError {
    pub fn new(kind: &str, message: impl Into<String>) -> ArbError {
        ArbError {
            kind: kind.to_string(),
            message: message.into(),
            extra: Vec::new(),
        }
    }

    pub fn with(mut self, key: &'static str, value: Extra) -> ArbError {
        self.extra.push((key, value));
        self
    }

    /// A bad argument: `who: message`.
    pub fn argument(who: &str, message: impl std::fmt::Display) -> ArbError {
        ArbError::new("invalid-argument", format!("{who}: {message}"))
    }

    pub fn to_value(&self, heap: &mut Heap) -> Value {
        let mut entries = vec![
            ("error", string(heap, &self.kind)),
            ("message", string(heap, &self.message)),
        ];
        for (k, x) in &self.extra {
            let v = match x {
                Extra::Id(n) => id(heap, *n),
                Extra::Ids(ns) => ids(heap, ns.iter().copied()),
                Extra::Int(i) => Value::Int(*i),
                Extra::Str(s) => string(heap, s),
            };
            entries.push((k, v));
        }
        alist(heap, &entries)
    }
}

// ---- out --------------------------------------------------------------------

pub fn string(heap: &mut Heap, s: &str) -> Value {
    heap.string(s)
}

/// A string, or `#f` for none.
pub fn opt_string(heap: &mut Heap, s: Option<&str>) -> Value {
    match s {
        Some(s) => heap.string(s),
        None => Value::Bool(false),
    }
}

pub fn strings(heap: &mut Heap, items: &[String]) -> Value {
    let vs: Vec<Value> = items.iter().map(|s| heap.string(s)).collect();
    heap.list(&vs)
}

/// An id as an exact integer.
pub fn id(heap: &mut Heap, n: u64) -> Value {
    Num::from_u64(n).into_value(heap)
}

pub fn ids(heap: &mut Heap, items: impl IntoIterator<Item = u64>) -> Value {
    let vs: Vec<Value> = items.into_iter().map(|n| id(heap, n)).collect();
    heap.list(&vs)
}

/// `(("key" . value) ...)`, in the order given.
pub fn alist(heap: &mut Heap, entries: &[(&str, Value)]) -> Value {
    let pairs: Vec<Value> = entries
        .iter()
        .map(|(k, v)| {
            let key = heap.string(k);
            heap.cons(key, *v)
        })
        .collect();
    heap.list(&pairs)
}

// ---- in ---------------------------------------------------------------------

/// The arguments of one call, with the procedure's name for messages.
pub struct Args<'a> {
    pub who: &'static str,
    pub values: &'a [Value],
}

impl<'a> Args<'a> {
    pub fn new(who: &'static str, values: &'a [Value]) -> Args<'a> {
        Args { who, values }
    }

    /// Checks the number of arguments.
    pub fn arity(&self, min: usize, max: usize) -> Result<(), ArbError> {
        let n = self.values.len();
        if n >= min && n <= max {
            return Ok(());
        }
        let expected = match (min, max) {
            (a, b) if a == b => format!("{a} argument{}", if a == 1 { "" } else { "s" }),
            (a, b) => format!("{a} to {b} arguments"),
        };
        Err(ArbError::new(
            "wrong-arity",
            format!("{}: expected {expected}, got {n}", self.who),
        ))
    }

    /// The argument at `i`, unless absent or `#f` (both mean "default").
    pub fn opt(&self, i: usize) -> Option<Value> {
        match self.values.get(i) {
            None | Some(Value::Bool(false)) => None,
            Some(v) => Some(*v),
        }
    }

    pub fn get(&self, i: usize) -> Value {
        self.values.get(i).copied().unwrap_or(Value::Bool(false))
    }

    fn bad(&self, heap: &Heap, syms: &SymbolTable, what: &str, v: Value) -> ArbError {
        ArbError::argument(
            self.who,
            format!("expected {what}, got {}", shown(heap, syms, v)),
        )
    }

    pub fn id(&self, heap: &Heap, syms: &SymbolTable, i: usize) -> Result<u64, ArbError> {
        let v = self.get(i);
        as_id(heap, v)
            .ok_or_else(|| self.bad(heap, syms, "an id (a non-negative exact integer)", v))
    }

    pub fn opt_id(
        &self,
        heap: &Heap,
        syms: &SymbolTable,
        i: usize,
    ) -> Result<Option<u64>, ArbError> {
        match self.opt(i) {
            None => Ok(None),
            Some(_) => self.id(heap, syms, i).map(Some),
        }
    }

    /// A count (skip, limit, top-k) with a default.
    pub fn count(
        &self,
        heap: &Heap,
        syms: &SymbolTable,
        i: usize,
        default: usize,
    ) -> Result<usize, ArbError> {
        match self.opt(i) {
            None => Ok(default),
            Some(v) => match as_id(heap, v) {
                Some(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
                None => Err(self.bad(heap, syms, "a non-negative exact integer", v)),
            },
        }
    }

    pub fn string(&self, heap: &Heap, syms: &SymbolTable, i: usize) -> Result<String, ArbError> {
        let v = self.get(i);
        as_string(heap, v).ok_or_else(|| self.bad(heap, syms, "a string", v))
    }

    /// A string, or `#f`/absent for none.
    pub fn opt_string(
        &self,
        heap: &Heap,
        syms: &SymbolTable,
        i: usize,
    ) -> Result<Option<String>, ArbError> {
        match self.opt(i) {
            None => Ok(None),
            Some(_) => self.string(heap, syms, i).map(Some),
        }
    }
}

/// A value as `write` shows it, shortened for messages.
pub fn shown(heap: &Heap, syms: &SymbolTable, v: Value) -> String {
    let s = printer::shown(heap, syms, v);
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s
    }
}

pub fn as_id(heap: &Heap, v: Value) -> Option<u64> {
    Num::from_value(heap, v)?.to_u64()
}

pub fn as_string(heap: &Heap, v: Value) -> Option<String> {
    match heap.obj(v) {
        Some(Object::Str(s)) => Some(s.iter().collect()),
        _ => None,
    }
}

/// A string or a symbol, as text (names given either way).
pub fn as_name(heap: &Heap, syms: &SymbolTable, v: Value) -> Option<String> {
    match v {
        Value::Sym(s) => Some(syms.name(s).to_string()),
        _ => as_string(heap, v),
    }
}

/// The elements of a proper list (at most the heap's size, so a cyclic
/// list ends).
pub fn list_items(heap: &Heap, v: Value) -> Option<Vec<Value>> {
    let mut out = Vec::new();
    let mut l = v;
    loop {
        match l {
            Value::Null => return Some(out),
            _ => {
                let (a, d) = heap.pair(l)?;
                out.push(a);
                l = d;
                if out.len() > heap.slots() {
                    return None;
                }
            }
        }
    }
}

/// Whether `v` is an error alist: a list whose first entry is
/// `("error" . KIND)`.
pub fn is_error_alist(heap: &Heap, v: Value) -> bool {
    heap.pair(v)
        .and_then(|(first, _)| heap.pair(first))
        .is_some_and(|(key, _)| as_string(heap, key).as_deref() == Some("error"))
}

/// The value of `key` in an alist with string keys.
pub fn alist_get(heap: &Heap, alist: Value, key: &str) -> Option<Value> {
    for entry in list_items(heap, alist)? {
        if let Some((k, v)) = heap.pair(entry) {
            if as_string(heap, k).as_deref() == Some(key) {
                return Some(v);
            }
        }
    }
    None
}
