//! Data between syntax and values: `quote` and `read` turn syntax into
//! values, `eval` turns values back into syntax. Both directions are
//! iterative over list spines and bounded in depth, so hostile data cannot
//! overflow the Rust stack.

use std::rc::Rc;

use crate::heap::Heap;
use crate::number::Num;
use crate::pos::Pos;
use crate::printer;
use crate::reader::MAX_DEPTH as READ_DEPTH;
use crate::symbol::SymbolTable;
use crate::syntax::{Atom, Ident, Syn};
use crate::value::{Object, Value};

/// Nesting beyond what the reader accepts: generated syntax may be a few
/// levels deeper than what was read.
const MAX_DEPTH: usize = READ_DEPTH + 10;

/// Syntax that is not a datum (a label used before it is defined, data
/// nested too deeply), and where.
#[derive(Debug, Clone)]
pub struct DatumError {
    pub message: String,
    pub pos: Pos,
}

fn err<T>(message: impl Into<String>, pos: Pos) -> Result<T, DatumError> {
    Err(DatumError {
        message: message.into(),
        pos,
    })
}

/// Quoted or read syntax to a value: aliases stripped, datum labels resolved.
pub fn to_value(heap: &mut Heap, s: &Syn) -> Result<Value, DatumError> {
    let mut labels: Vec<(u32, Value)> = Vec::new();
    let v = syn_to_value(heap, s, &mut labels, 0)?;
    if labels.iter().any(|(_, v)| matches!(v, Value::Undefined)) {
        return err("datum label used before it is defined", s.pos());
    }
    Ok(v)
}

pub fn atom_value(heap: &mut Heap, a: &Atom) -> Value {
    match a {
        Atom::Bool(b) => Value::Bool(*b),
        Atom::Num(n) => n.clone().into_value(heap),
        Atom::Complex(z) => heap.alloc(Object::Complex(z.clone())),
        Atom::Char(c) => Value::Char(*c),
        Atom::Str(s) => heap.string(s),
        Atom::Bytes(b) => heap.alloc(Object::Bytevector(b.to_vec())),
        Atom::Unspecified => Value::Unspecified,
        Atom::Eof => Value::Eof,
    }
}

/// Converts syntax to a datum. Labels (`#0=`) are resolved by allocating the
/// container first and patching references to it.
fn syn_to_value(
    heap: &mut Heap,
    s: &Syn,
    labels: &mut Vec<(u32, Value)>,
    depth: usize,
) -> Result<Value, DatumError> {
    if depth > MAX_DEPTH {
        return err("datum nested too deeply", s.pos());
    }
    Ok(match s {
        Syn::Sym(id, _) => Value::Sym(id.base()),
        Syn::Atom(a, _) => atom_value(heap, a),
        Syn::LabelRef(n, pos) => match labels.iter().rev().find(|(k, _)| k == n) {
            Some((_, v)) => *v,
            None => return err(format!("datum label #{n}# is not defined"), *pos),
        },
        Syn::LabelDef(n, inner, _) => match &**inner {
            Syn::List(items, tail, _) if !items.is_empty() => {
                // Allocate the first pair now so references inside can point at it.
                let head = heap.cons(Value::Unspecified, Value::Null);
                labels.push((*n, head));
                fill_list(heap, head, items, tail.as_deref(), labels, depth)?;
                head
            }
            Syn::Vector(items, _) => {
                let v = heap.alloc(Object::Vector(Vec::new()));
                labels.push((*n, v));
                let mut out = Vec::with_capacity(items.len());
                for i in items.iter() {
                    out.push(syn_to_value(heap, i, labels, depth + 1)?);
                }
                if let Some(Object::Vector(slot)) = heap.obj_mut(v) {
                    *slot = out;
                }
                v
            }
            other => {
                let v = syn_to_value(heap, other, labels, depth + 1)?;
                labels.push((*n, v));
                v
            }
        },
        Syn::List(items, tail, _) => {
            if items.is_empty() {
                match tail {
                    Some(t) => syn_to_value(heap, t, labels, depth + 1)?,
                    None => Value::Null,
                }
            } else {
                let head = heap.cons(Value::Unspecified, Value::Null);
                fill_list(heap, head, items, tail.as_deref(), labels, depth)?;
                head
            }
        }
        Syn::Vector(items, _) => {
            let mut out = Vec::with_capacity(items.len());
            for i in items.iter() {
                out.push(syn_to_value(heap, i, labels, depth + 1)?);
            }
            heap.alloc(Object::Vector(out))
        }
    })
}

fn fill_list(
    heap: &mut Heap,
    head: Value,
    items: &[Syn],
    tail: Option<&Syn>,
    labels: &mut Vec<(u32, Value)>,
    depth: usize,
) -> Result<(), DatumError> {
    let mut cell = head;
    for (i, item) in items.iter().enumerate() {
        let v = syn_to_value(heap, item, labels, depth + 1)?;
        let next = if i + 1 < items.len() {
            heap.cons(Value::Unspecified, Value::Null)
        } else {
            match tail {
                Some(t) => syn_to_value(heap, t, labels, depth + 1)?,
                None => Value::Null,
            }
        };
        if let Some(Object::Pair(a, d)) = heap.obj_mut(cell) {
            *a = v;
            *d = next;
        }
        cell = next;
    }
    Ok(())
}

/// A datum to syntax, for `eval`. Cycles and non-data objects are refused.
pub fn to_syntax(heap: &Heap, syms: &mut SymbolTable, v: Value) -> Result<Syn, String> {
    value_to_syn_at(heap, syms, v, 0)
}

fn value_to_syn_at(
    heap: &Heap,
    syms: &mut SymbolTable,
    v: Value,
    depth: usize,
) -> Result<Syn, String> {
    if depth > MAX_DEPTH {
        return Err("expression nested too deeply (or cyclic)".into());
    }
    let p = Pos::NONE;
    Ok(match v {
        Value::Sym(s) => Syn::Sym(Ident::plain(s), p),
        Value::Null => Syn::nil(p),
        Value::Bool(b) => Syn::Atom(Atom::Bool(b), p),
        Value::Int(i) => Syn::Atom(Atom::Num(Num::Int(i)), p),
        Value::Float(f) => Syn::Atom(Atom::Num(Num::Float(f)), p),
        Value::Char(c) => Syn::Atom(Atom::Char(c), p),
        Value::Unspecified => Syn::Atom(Atom::Unspecified, p),
        Value::Eof => Syn::Atom(Atom::Eof, p),
        Value::Obj(r) => match heap.get(r) {
            Object::Str(s) => Syn::Atom(Atom::Str(s.iter().collect::<String>().into()), p),
            Object::Complex(z) => Syn::Atom(Atom::Complex(z.clone()), p),
            Object::Big(_) | Object::Rat(_) => match Num::from_value(heap, v) {
                Some(n) => Syn::Atom(Atom::Num(n), p),
                None => return Err("bad number".into()),
            },
            Object::Bytevector(b) => Syn::Atom(Atom::Bytes(b.clone().into()), p),
            Object::Pair(..) => {
                let mut items = Vec::new();
                let mut l = v;
                while let Some((a, d)) = heap.pair(l) {
                    items.push(value_to_syn_at(heap, syms, a, depth + 1)?);
                    l = d;
                    if items.len() > 1_000_000 {
                        return Err("expression is a cyclic or enormous list".into());
                    }
                }
                let tail = match l {
                    Value::Null => None,
                    other => Some(Rc::new(value_to_syn_at(heap, syms, other, depth + 1)?)),
                };
                Syn::List(items.into(), tail, p)
            }
            Object::Vector(items) => {
                let mut out = Vec::with_capacity(items.len());
                for i in items.iter() {
                    out.push(value_to_syn_at(heap, syms, *i, depth + 1)?);
                }
                Syn::Vector(out.into(), p)
            }
            _ => {
                return Err(format!(
                    "cannot evaluate {}",
                    printer::write_string(heap, syms, v)
                ))
            }
        },
        Value::Prim(_) | Value::Undefined => {
            return Err(format!(
                "cannot evaluate {}",
                printer::write_string(heap, syms, v)
            ))
        }
    })
}
