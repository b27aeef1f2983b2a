//! `write`, `display`, `write-shared` and `write-simple`.
//!
//! Printing is iterative (deeply nested data cannot overflow the Rust stack)
//! and cycle-safe: `write` labels exactly the pairs and vectors that lie on a
//! cycle, `write-shared` every one that is reached twice, `write-simple`
//! none (and so must not be given cyclic data; it stops at a size bound).

use std::collections::BTreeMap;

use crate::complex::{self, Number};
use crate::heap::Heap;
use crate::number::{self, Num, Work};
use crate::symbol::SymbolTable;
use crate::syntax::{Atom, Syn};
use crate::value::{ErrorObjectKind, Object, Ref, Value};

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Display,
    Write,
    Shared,
    Simple,
}

/// Largest output `write-simple`/`display` of unlabelled data produces before
/// giving up on a cyclic structure.
const SIMPLE_LIMIT: usize = 10_000_000;

pub fn write_string(heap: &Heap, syms: &SymbolTable, v: Value) -> String {
    to_string(heap, syms, v, Mode::Write)
}

pub fn display_string(heap: &Heap, syms: &SymbolTable, v: Value) -> String {
    to_string(heap, syms, v, Mode::Display)
}

pub fn to_string(heap: &Heap, syms: &SymbolTable, v: Value, mode: Mode) -> String {
    let mut out = String::new();
    print(heap, syms, v, mode, &mut out);
    out
}

/// Units of work (`number::Work`) printing charges per value it visits
/// (in the search for cycles and in the writing), plus one per 8 bytes it
/// writes.
const PRINT_UNITS: u64 = 32;

/// `to_string`, its work charged to `work` as it goes, so writing a large
/// structure stops at the evaluation's limits.
pub fn to_string_within<W: Work>(
    heap: &Heap,
    syms: &SymbolTable,
    v: Value,
    mode: Mode,
    work: &mut W,
) -> Result<String, W::Stop> {
    let mut out = String::new();
    print_within(heap, syms, v, mode, &mut out, work)?;
    Ok(out)
}

enum Task {
    Value(Value),
    Str(&'static str),
    /// Continue printing a list whose remaining part is this value.
    ListRest(Value),
    VectorFrom(Ref, usize),
}

pub fn print(heap: &Heap, syms: &SymbolTable, v: Value, mode: Mode, out: &mut String) {
    let Ok(()) = print_within(heap, syms, v, mode, out, &mut number::Unmetered);
}

pub fn print_within<W: Work>(
    heap: &Heap,
    syms: &SymbolTable,
    v: Value,
    mode: Mode,
    out: &mut String,
    work: &mut W,
) -> Result<(), W::Stop> {
    // Display uses labels for cycles too: an endless loop is worse than labels.
    let labels = match mode {
        Mode::Write | Mode::Display => find_labels(heap, v, false, work)?,
        Mode::Shared => find_labels(heap, v, true, work)?,
        Mode::Simple => BTreeMap::new(),
    };
    let mut numbering: BTreeMap<Ref, usize> = BTreeMap::new();
    let mut next_label = 0usize;
    let mut tasks = vec![Task::Value(v)];
    let start = out.len();
    let mut charged = out.len();
    while let Some(t) = tasks.pop() {
        work.charge(PRINT_UNITS + (out.len() - charged) as u64 / 8)?;
        charged = out.len();
        if out.len() - start > SIMPLE_LIMIT && mode == Mode::Simple {
            out.push_str("...");
            return Ok(());
        }
        match t {
            Task::Str(s) => out.push_str(s),
            Task::Value(v) => {
                if let Value::Obj(r) = v {
                    if labels.contains_key(&r) {
                        if let Some(n) = numbering.get(&r) {
                            out.push_str(&format!("#{n}#"));
                            continue;
                        }
                        numbering.insert(r, next_label);
                        out.push_str(&format!("#{next_label}="));
                        next_label += 1;
                    }
                    match heap.get(r) {
                        Object::Pair(a, d) => {
                            out.push('(');
                            tasks.push(Task::ListRest(*d));
                            tasks.push(Task::Value(*a));
                            continue;
                        }
                        Object::Vector(items) => {
                            out.push_str("#(");
                            if items.is_empty() {
                                out.push(')');
                            } else {
                                tasks.push(Task::VectorFrom(r, 1));
                                tasks.push(Task::Value(items[0]));
                            }
                            continue;
                        }
                        _ => {}
                    }
                }
                atom(heap, syms, v, mode, out);
            }
            Task::ListRest(d) => match d {
                Value::Null => out.push(')'),
                Value::Obj(r)
                    if matches!(heap.get(r), Object::Pair(..)) && !labels.contains_key(&r) =>
                {
                    if let Object::Pair(a, d2) = heap.get(r) {
                        out.push(' ');
                        tasks.push(Task::ListRest(*d2));
                        tasks.push(Task::Value(*a));
                    }
                }
                other => {
                    out.push_str(" . ");
                    tasks.push(Task::Str(")"));
                    tasks.push(Task::Value(other));
                }
            },
            Task::VectorFrom(r, i) => {
                if let Object::Vector(items) = heap.get(r) {
                    if i >= items.len() {
                        out.push(')');
                    } else {
                        out.push(' ');
                        tasks.push(Task::VectorFrom(r, i + 1));
                        tasks.push(Task::Value(items[i]));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Where the search for labels has been: 0 not yet, 1 on the current
/// path, 2 finished. A map while few objects were visited; past a
/// sixty-fourth of the heap's slots, one byte per slot (a walk of ten
/// million pairs takes ten megabytes, not the map's hundreds).
struct Visits {
    sparse: BTreeMap<Ref, u8>,
    dense: Vec<u8>,
    slots: usize,
}

impl Visits {
    fn new(heap: &Heap) -> Visits {
        Visits {
            sparse: BTreeMap::new(),
            dense: Vec::new(),
            slots: heap.slots(),
        }
    }

    fn get(&self, r: Ref) -> u8 {
        if self.dense.is_empty() {
            self.sparse.get(&r).copied().unwrap_or(0)
        } else {
            self.dense[r as usize]
        }
    }

    fn set(&mut self, r: Ref, state: u8) {
        if !self.dense.is_empty() {
            self.dense[r as usize] = state;
            return;
        }
        self.sparse.insert(r, state);
        if self.sparse.len() > (self.slots / 64).max(4096) {
            self.dense = vec![0; self.slots];
            for (r, s) in std::mem::take(&mut self.sparse) {
                self.dense[r as usize] = s;
            }
        }
    }
}

/// One container of the path being searched, with the run of pairs reached
/// from it through their cdrs (`first` to `cur`, all on the path): a list
/// takes one entry, however long, so the path's memory grows with the
/// depth of nesting, not the length of lists.
struct Walk {
    first: Ref,
    cur: Ref,
    /// The next child of `cur` to visit.
    next: usize,
}

/// Pairs and vectors that need a label: those on a cycle (or, when
/// `shared`, every one reached more than once). Iterative, with no copy of
/// any container's contents.
fn find_labels<W: Work>(
    heap: &Heap,
    root: Value,
    shared: bool,
    work: &mut W,
) -> Result<BTreeMap<Ref, ()>, W::Stop> {
    let mut labels = BTreeMap::new();
    let is_container = |v: Value| -> Option<Ref> {
        match v {
            Value::Obj(r) if matches!(heap.get(r), Object::Pair(..) | Object::Vector(_)) => Some(r),
            _ => None,
        }
    };
    let Some(r0) = is_container(root) else {
        return Ok(labels);
    };
    let mut visits = Visits::new(heap);
    visits.set(r0, 1);
    let mut path = vec![Walk {
        first: r0,
        cur: r0,
        next: 0,
    }];
    while let Some(top) = path.last_mut() {
        work.charge(PRINT_UNITS)?;
        let (r, i) = (top.cur, top.next);
        let child = match heap.get(r) {
            Object::Pair(a, _) if i == 0 => Some(*a),
            Object::Pair(_, d) if i == 1 => Some(*d),
            Object::Vector(items) => items.get(i).copied(),
            _ => None,
        };
        let Some(child) = child else {
            // `cur` is done, and with it the pairs before it in the run.
            let first = top.first;
            path.pop();
            let mut x = first;
            loop {
                visits.set(x, 2);
                if x == r {
                    break;
                }
                work.charge(PRINT_UNITS)?;
                match heap.get(x) {
                    Object::Pair(_, Value::Obj(d)) => x = *d,
                    _ => break,
                }
            }
            continue;
        };
        top.next += 1;
        let Some(c) = is_container(child) else {
            continue;
        };
        match visits.get(c) {
            1 => {
                labels.insert(c, ());
            }
            2 => {
                if shared {
                    labels.insert(c, ());
                }
            }
            _ => {
                visits.set(c, 1);
                let cdr_of_pair = i == 1 && matches!(heap.get(r), Object::Pair(..));
                if cdr_of_pair && matches!(heap.get(c), Object::Pair(..)) {
                    top.cur = c;
                    top.next = 0;
                } else {
                    path.push(Walk {
                        first: c,
                        cur: c,
                        next: 0,
                    });
                }
            }
        }
    }
    Ok(labels)
}

fn atom(heap: &Heap, syms: &SymbolTable, v: Value, mode: Mode, out: &mut String) {
    let write = mode != Mode::Display;
    match v {
        Value::Null => out.push_str("()"),
        Value::Bool(true) => out.push_str("#t"),
        Value::Bool(false) => out.push_str("#f"),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&number::float_to_string(f)),
        Value::Char(c) => {
            if write {
                out.push_str(&char_name(c));
            } else {
                out.push(c);
            }
        }
        Value::Sym(s) => {
            let name = syms.name(s);
            if write {
                write_symbol(name, out);
            } else {
                out.push_str(name);
            }
        }
        Value::Unspecified => out.push_str("#<unspecified>"),
        Value::Undefined => out.push_str("#<undefined>"),
        Value::Eof => out.push_str("#<eof>"),
        Value::Prim(i) => match heap.prim_name(i) {
            Some(name) => {
                out.push_str("#<procedure ");
                out.push_str(name);
                out.push('>');
            }
            None => out.push_str("#<procedure>"),
        },
        Value::Obj(r) => match heap.get(r) {
            Object::Str(s) => {
                if write {
                    write_string_literal(s.iter().copied(), out);
                } else {
                    out.extend(s.iter());
                }
            }
            Object::Big(b) => out.push_str(&b.to_string()),
            Object::Rat(q) => out.push_str(
                &number::to_string(&Num::Rat((**q).clone()), 10, &mut number::Unmetered)
                    .unwrap_or_else(|e| match e {}),
            ),
            Object::Complex(z) => out.push_str(
                &complex::to_string(&Number::Complex(z.clone()), 10, &mut number::Unmetered)
                    .unwrap_or_else(|e| match e {}),
            ),
            Object::Bytevector(b) => {
                out.push_str("#u8(");
                for (i, x) in b.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(&x.to_string());
                }
                out.push(')');
            }
            Object::Closure(c) => match c.template.name {
                Some(n) => out.push_str(&format!("#<procedure {}>", syms.name(n))),
                None => out.push_str("#<procedure>"),
            },
            Object::CaseLambda(_) => out.push_str("#<procedure>"),
            Object::Continuation(_) => out.push_str("#<continuation>"),
            Object::Box(_) => out.push_str("#<box>"),
            Object::Values(vs) => {
                // Several values at the top level print one per line.
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        out.push('\n');
                    }
                    print(heap, syms, *v, mode, out);
                }
            }
            Object::Record(t, fields) => {
                let name = match heap.obj(*t) {
                    Some(Object::RecordType(rt)) => syms.name(rt.name).to_string(),
                    _ => "record".into(),
                };
                let name = name
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_string();
                out.push_str(&format!("#<{name}"));
                for f in fields {
                    out.push(' ');
                    print(heap, syms, *f, Mode::Write, out);
                }
                out.push('>');
            }
            Object::RecordType(rt) => {
                out.push_str(&format!("#<record-type {}>", syms.name(rt.name)))
            }
            Object::Promise { .. } => out.push_str("#<promise>"),
            Object::Parameter { .. } => out.push_str("#<parameter>"),
            Object::Error(e) => {
                let kind = match e.kind {
                    ErrorObjectKind::Error => "error",
                    ErrorObjectKind::Read => "read-error",
                    ErrorObjectKind::File => "file-error",
                };
                out.push_str(&format!("#<{kind} "));
                print(heap, syms, e.message, Mode::Write, out);
                let mut irr = e.irritants;
                while let Some((a, d)) = heap.pair(irr) {
                    out.push(' ');
                    print(heap, syms, a, Mode::Write, out);
                    irr = d;
                }
                out.push('>');
            }
            Object::Port(p) => out.push_str(if p.input {
                "#<input-port>"
            } else {
                "#<output-port>"
            }),
            Object::Environment => out.push_str("#<environment>"),
            Object::HashTable(t) => out.push_str(&format!("#<hash-table {}>", t.len())),
            Object::Pair(..) | Object::Vector(_) => out.push_str("#<data>"),
            Object::Free(_) => out.push_str("#<freed>"),
        },
    }
}

pub fn char_name(c: char) -> String {
    match c {
        '\u{7}' => "#\\alarm".into(),
        '\u{8}' => "#\\backspace".into(),
        '\u{7f}' => "#\\delete".into(),
        '\u{1b}' => "#\\escape".into(),
        '\n' => "#\\newline".into(),
        '\0' => "#\\null".into(),
        '\r' => "#\\return".into(),
        ' ' => "#\\space".into(),
        '\t' => "#\\tab".into(),
        c if c.is_control() => format!("#\\x{:x}", c as u32),
        c => format!("#\\{c}"),
    }
}

pub fn write_string_literal(chars: impl Iterator<Item = char>, out: &mut String) {
    out.push('"');
    for c in chars {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            c if c.is_control() => out.push_str(&format!("\\x{:x};", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A symbol as `write` shows it: in bars when the reader would otherwise read
/// it as something else (a number such as `+i` or `+nan.0`, `.`, a `#`
/// form), or when it holds a delimiter, whitespace or a control character
/// (R7RS 2.1). Letters of any script are written as they are, as Guile
/// does (chibi puts any non-ASCII name in bars).
fn write_symbol(name: &str, out: &mut String) {
    let needs_bars = name.is_empty()
        || name.chars().any(|c| {
            c.is_whitespace()
                || c.is_control()
                || matches!(
                    c,
                    '(' | ')' | '"' | ';' | '\'' | '`' | ',' | '|' | '[' | ']' | '{' | '}' | '\\'
                )
        })
        || name.starts_with('#')
        || complex::parse(name, 10).is_some()
        || name == ".";
    if !needs_bars {
        out.push_str(name);
        return;
    }
    out.push('|');
    for c in name.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\x{:x};", c as u32)),
            c => out.push(c),
        }
    }
    out.push('|');
}

/// Syntax printed back as source (for messages).
pub fn syn_to_string(s: &Syn, syms: &SymbolTable) -> String {
    let mut out = String::new();
    syn_print(s, syms, &mut out, 0);
    out
}

fn syn_print(s: &Syn, syms: &SymbolTable, out: &mut String, depth: usize) {
    if depth > 200 || out.len() > 10_000 {
        out.push_str("...");
        return;
    }
    match s {
        Syn::Sym(id, _) => write_symbol(syms.name(id.sym), out),
        Syn::Atom(a, _) => match a {
            Atom::Bool(b) => out.push_str(if *b { "#t" } else { "#f" }),
            Atom::Num(n) => out.push_str(
                &number::to_string(n, 10, &mut number::Unmetered).unwrap_or_else(|e| match e {}),
            ),
            Atom::Complex(z) => out.push_str(
                &complex::to_string(&Number::Complex(z.clone()), 10, &mut number::Unmetered)
                    .unwrap_or_else(|e| match e {}),
            ),
            Atom::Char(c) => out.push_str(&char_name(*c)),
            Atom::Str(s) => write_string_literal(s.chars(), out),
            Atom::Bytes(b) => {
                out.push_str("#u8(");
                for (i, byte) in b.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(&byte.to_string());
                }
                out.push(')');
            }
            Atom::Unspecified => out.push_str("#<unspecified>"),
            Atom::Eof => out.push_str("#<eof>"),
        },
        Syn::List(items, tail, _) => {
            out.push('(');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                syn_print(it, syms, out, depth + 1);
            }
            if let Some(t) = tail {
                out.push_str(" . ");
                syn_print(t, syms, out, depth + 1);
            }
            out.push(')');
        }
        Syn::Vector(items, _) => {
            out.push_str("#(");
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                syn_print(it, syms, out, depth + 1);
            }
            out.push(')');
        }
        Syn::LabelDef(n, inner, _) => {
            out.push_str(&format!("#{n}="));
            syn_print(inner, syms, out, depth + 1);
        }
        Syn::LabelRef(n, _) => out.push_str(&format!("#{n}#")),
    }
}

/// The text of a raised object: an error object's message and irritants,
/// or the object itself.
pub fn condition_text(heap: &Heap, syms: &SymbolTable, obj: Value) -> String {
    if let Some(Object::Error(e)) = heap.obj(obj) {
        let mut s = display_string(heap, syms, e.message);
        let mut irr = e.irritants;
        let mut first = true;
        while let Some((a, d)) = heap.pair(irr) {
            s.push_str(if first && !s.ends_with(':') {
                ": "
            } else {
                " "
            });
            first = false;
            s.push_str(&write_string(heap, syms, a));
            irr = d;
        }
        return s;
    }
    format!("uncaught exception: {}", write_string(heap, syms, obj))
}
