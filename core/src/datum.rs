//! Data between syntax and values: `quote` and `read` turn syntax into
//! values, `eval` turns values back into syntax. Both directions walk with
//! explicit stacks on the heap, not Rust recursion, so data nested a
//! million levels deep converts (the wasm guest's stack is far smaller).

use std::collections::HashSet;
use std::rc::Rc;

use crate::heap::Heap;
use crate::number::Num;
use crate::pos::Pos;
use crate::printer;
use crate::symbol::SymbolTable;
use crate::syntax::{Atom, Ident, Syn};
use crate::value::{Object, Ref, Value};

/// Most elements of one list `eval` takes as code (a longer one is a
/// cyclic list or not code anyone wrote).
const MAX_LIST_LENGTH: usize = 1_000_000;

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
    let mut out = Value::Unspecified;
    let mut work = vec![Build {
        syn: s,
        dest: Dest::Out,
        label: None,
    }];
    while let Some(Build { syn, dest, label }) = work.pop() {
        let v = match syn {
            Syn::Sym(id, _) => Value::Sym(id.base()),
            Syn::Atom(a, _) => atom_value(heap, a),
            Syn::LabelRef(n, pos) => match labels.iter().rev().find(|(k, _)| k == n) {
                Some((_, v)) => *v,
                None => return err(format!("datum label #{n}# is not defined"), *pos),
            },
            Syn::LabelDef(n, inner, _) => {
                // A list or vector is labelled as soon as it is allocated,
                // so references inside it can point at it; anything else
                // once it is built.
                let (dest, label) = match &**inner {
                    Syn::List(items, _, _) if !items.is_empty() => (dest, Some(*n)),
                    Syn::Vector(..) => (dest, Some(*n)),
                    _ => (Dest::Label(*n, Box::new(dest)), None),
                };
                work.push(Build {
                    syn: inner,
                    dest,
                    label,
                });
                continue;
            }
            Syn::List(items, tail, _) if items.is_empty() => {
                match tail {
                    Some(t) => work.push(Build {
                        syn: t,
                        dest,
                        label,
                    }),
                    None => store(heap, &mut labels, &mut out, Value::Null, dest),
                }
                continue;
            }
            Syn::List(items, tail, _) => {
                // The spine first, then its elements, left to right.
                let mut cells = Vec::with_capacity(items.len());
                let mut next = Value::Null;
                for _ in 0..items.len() {
                    next = heap.cons(Value::Unspecified, next);
                    cells.push(next);
                }
                cells.reverse();
                let head = cells[0];
                if let Some(t) = tail {
                    work.push(Build {
                        syn: t,
                        dest: Dest::Cdr(cells[cells.len() - 1]),
                        label: None,
                    });
                }
                for (item, cell) in items.iter().zip(cells).rev() {
                    work.push(Build {
                        syn: item,
                        dest: Dest::Car(cell),
                        label: None,
                    });
                }
                head
            }
            Syn::Vector(items, _) => {
                let v = heap.alloc(Object::Vector(vec![Value::Unspecified; items.len()]));
                for (i, item) in items.iter().enumerate().rev() {
                    work.push(Build {
                        syn: item,
                        dest: Dest::Slot(v, i),
                        label: None,
                    });
                }
                v
            }
        };
        if let Some(n) = label {
            labels.push((n, v));
        }
        store(heap, &mut labels, &mut out, v, dest);
    }
    Ok(out)
}

/// A piece of syntax waiting to be converted, where its value goes, and
/// the label to give it as soon as it is allocated.
struct Build<'s> {
    syn: &'s Syn,
    dest: Dest,
    label: Option<u32>,
}

/// Where a converted value goes.
enum Dest {
    /// It is the whole datum.
    Out,
    Car(Value),
    Cdr(Value),
    Slot(Value, usize),
    /// It defines label `n`, then goes on.
    Label(u32, Box<Dest>),
}

fn store(heap: &mut Heap, labels: &mut Vec<(u32, Value)>, out: &mut Value, v: Value, dest: Dest) {
    let mut dest = dest;
    loop {
        match dest {
            Dest::Out => *out = v,
            Dest::Car(p) => {
                if let Some(Object::Pair(a, _)) = heap.obj_mut(p) {
                    *a = v;
                }
            }
            Dest::Cdr(p) => {
                if let Some(Object::Pair(_, d)) = heap.obj_mut(p) {
                    *d = v;
                }
            }
            Dest::Slot(vector, i) => {
                if let Some(Object::Vector(items)) = heap.obj_mut(vector) {
                    items[i] = v;
                }
            }
            Dest::Label(n, then) => {
                labels.push((n, v));
                dest = *then;
                continue;
            }
        }
        return;
    }
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

/// A datum to syntax, for `eval`. Cycles and non-data objects are refused.
pub fn to_syntax(heap: &Heap, syms: &mut SymbolTable, v: Value) -> Result<Syn, String> {
    // Lists and vectors being converted, innermost last; `open` holds the
    // pairs and vectors on the path from the root (a datum met again on
    // its own path is a cycle).
    let mut stack: Vec<Open> = Vec::new();
    let mut open: HashSet<Ref> = HashSet::new();
    let mut next = v;
    loop {
        let mut done = match leaf_syntax(heap, syms, next)? {
            Some(s) => Some(s),
            None => {
                let Value::Obj(r) = next else {
                    unreachable!("only objects hold others")
                };
                if !open.insert(r) {
                    return Err("cannot evaluate a cyclic expression".into());
                }
                stack.push(match heap.get(r) {
                    Object::Vector(_) => Open::Vector {
                        items: Vec::new(),
                        vector: next,
                        next: 0,
                    },
                    _ => Open::List {
                        items: Vec::new(),
                        tail: None,
                        in_tail: false,
                        start: next,
                        rest: next,
                    },
                });
                None
            }
        };
        // Deliver the finished node to the innermost open one and find its
        // next element; close each open node that has none left.
        loop {
            let Some(top) = stack.last_mut() else {
                return Ok(done.expect("the root is finished last"));
            };
            if let Some(s) = done.take() {
                match top {
                    Open::List {
                        items,
                        tail,
                        in_tail,
                        ..
                    } => {
                        if *in_tail {
                            *tail = Some(Rc::new(s));
                        } else {
                            items.push(s);
                        }
                    }
                    Open::Vector { items, .. } => items.push(s),
                }
            }
            if let Some(element) = top.next_element(heap, &mut open)? {
                next = element;
                break;
            }
            done = Some(match stack.pop().expect("`last_mut` above found a top") {
                Open::List {
                    items, tail, start, ..
                } => {
                    let mut l = start;
                    while let Some((_, d)) = heap.pair(l) {
                        if let Value::Obj(r) = l {
                            if !open.remove(&r) {
                                break;
                            }
                        }
                        l = d;
                    }
                    Syn::List(items.into(), tail, Pos::NONE)
                }
                Open::Vector { items, vector, .. } => {
                    if let Value::Obj(r) = vector {
                        open.remove(&r);
                    }
                    Syn::Vector(items.into(), Pos::NONE)
                }
            });
        }
    }
}

/// A list or vector `to_syntax` is converting.
enum Open {
    List {
        items: Vec<Syn>,
        tail: Option<Rc<Syn>>,
        /// The element being converted is the tail of an improper list.
        in_tail: bool,
        /// The first pair, and what is left of the list after the
        /// element being converted.
        start: Value,
        rest: Value,
    },
    Vector {
        items: Vec<Syn>,
        vector: Value,
        next: usize,
    },
}

impl Open {
    /// The next element to convert (for an improper list, its tail last).
    fn next_element(
        &mut self,
        heap: &Heap,
        open: &mut HashSet<Ref>,
    ) -> Result<Option<Value>, String> {
        match self {
            Open::List {
                items,
                in_tail,
                start,
                rest,
                ..
            } => {
                if let Some((a, d)) = heap.pair(*rest) {
                    // The spine's pairs after the first are on the path too.
                    if let (Value::Obj(r), false) = (*rest, rest.eq(*start)) {
                        if !open.insert(r) {
                            return Err("cannot evaluate a cyclic expression".into());
                        }
                    }
                    if items.len() >= MAX_LIST_LENGTH {
                        return Err("expression is an enormous list".into());
                    }
                    *rest = d;
                    return Ok(Some(a));
                }
                if *in_tail || matches!(*rest, Value::Null) {
                    return Ok(None);
                }
                *in_tail = true;
                Ok(Some(*rest))
            }
            Open::Vector { vector, next, .. } => {
                let Value::Obj(r) = *vector else {
                    return Ok(None);
                };
                match heap.get(r) {
                    Object::Vector(v) if *next < v.len() => {
                        *next += 1;
                        Ok(Some(v[*next - 1]))
                    }
                    _ => Ok(None),
                }
            }
        }
    }
}

/// A datum that holds no others, as syntax; `None` for a pair or vector.
fn leaf_syntax(heap: &Heap, syms: &mut SymbolTable, v: Value) -> Result<Option<Syn>, String> {
    let p = Pos::NONE;
    Ok(Some(match v {
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
            Object::Pair(..) | Object::Vector(_) => return Ok(None),
            _ => return Err(format!("cannot evaluate {}", printer::shown(heap, syms, v))),
        },
        Value::Prim(_) | Value::Undefined => {
            return Err(format!("cannot evaluate {}", printer::shown(heap, syms, v)))
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::read_all;

    fn read_one(text: &str, syms: &mut SymbolTable) -> Syn {
        read_all(text, syms)
            .expect("reads")
            .pop()
            .expect("one datum")
    }

    #[test]
    fn data_a_million_levels_deep_become_values_and_syntax_again() {
        let n = 1_000_000;
        let mut syms = SymbolTable::default();
        let mut heap = Heap::new();
        let syn = read_one(&format!("{}x{}", "(".repeat(n), ")".repeat(n)), &mut syms);
        let v = to_value(&mut heap, &syn).expect("converts");
        let (mut depth, mut d) = (0, v);
        while let Some((a, _)) = heap.pair(d) {
            depth += 1;
            d = a;
        }
        assert_eq!(depth, n);
        assert!(matches!(d, Value::Sym(_)));
        let back = to_syntax(&heap, &mut syms, v).expect("converts back");
        let (mut depth, mut s) = (0, &back);
        while let Syn::List(items, None, _) = s {
            depth += 1;
            s = &items[0];
        }
        assert_eq!(depth, n);
    }

    #[test]
    fn data_100000_levels_deep_print_and_compare_without_recursion() {
        let n = 100_000;
        let mut syms = SymbolTable::default();
        let mut heap = Heap::new();
        let text = format!("({}x{} . #(1))", "#((".repeat(n), "))".repeat(n));
        let syn = read_one(&text, &mut syms);
        let a = to_value(&mut heap, &syn).expect("converts");
        let b = to_value(&mut heap, &syn).expect("converts");
        assert_eq!(printer::write_string(&heap, &syms, a), text);
        let mut work = crate::number::Unmetered;
        assert_eq!(crate::builtins::equal(&heap, a, b, &mut work), Ok(true));
        let other = read_one(&text.replacen('x', "y", 1), &mut syms);
        let c = to_value(&mut heap, &other).expect("converts");
        assert_eq!(crate::builtins::equal(&heap, a, c, &mut work), Ok(false));
    }

    #[test]
    fn labels_improper_lists_and_vectors_convert_in_order() {
        let mut syms = SymbolTable::default();
        let mut heap = Heap::new();
        let syn = read_one("(#0=(a . b) #(1 #0# \"s\") #1=#(#1#) . #0#)", &mut syms);
        let v = to_value(&mut heap, &syn).expect("converts");
        let text = printer::write_string(&heap, &syms, v);
        assert_eq!(text, "((a . b) #(1 (a . b) \"s\") #0=#(#0#) a . b)");
        let labelled_pair = heap.pair(v).map(|(a, _)| a).expect("a pair");
        let (_, rest) = heap.pair(v).expect("a pair");
        let (vector, _) = heap.pair(rest).expect("a pair");
        match heap.obj_mut(vector) {
            Some(Object::Vector(items)) => assert!(items[1].eq(labelled_pair)),
            _ => panic!("not a vector"),
        }
        let undefined = read_one("(#5#)", &mut syms);
        let e = to_value(&mut heap, &undefined).expect_err("undefined label");
        assert!(e.message.contains("#5#"), "{}", e.message);
    }

    #[test]
    fn cyclic_data_is_refused_as_code_and_shared_data_is_not() {
        let mut syms = SymbolTable::default();
        let mut heap = Heap::new();
        let cyclic = read_one("#0=(a (b #0#))", &mut syms);
        let v = to_value(&mut heap, &cyclic).expect("converts");
        let Err(e) = to_syntax(&heap, &mut syms, v) else {
            panic!("a cycle became syntax")
        };
        assert!(e.contains("cyclic"), "{e}");
        let spine = read_one("#0=(a b . #0#)", &mut syms);
        let v = to_value(&mut heap, &spine).expect("converts");
        assert!(to_syntax(&heap, &mut syms, v).is_err());
        let shared = read_one("(#0=(x y) #0# . #0#)", &mut syms);
        let v = to_value(&mut heap, &shared).expect("converts");
        let s = to_syntax(&heap, &mut syms, v).expect("shared is not cyclic");
        let mut heap2 = Heap::new();
        let again = to_value(&mut heap2, &s).expect("converts");
        assert_eq!(
            printer::write_string(&heap2, &syms, again),
            "((x y) (x y) x y)"
        );
    }
}
