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

/// Largest output `write-simple` of unlabelled data produces before giving
/// up on a cyclic structure.
const SIMPLE_LIMIT: usize = 10_000_000;

/// Most bytes of a value a message shows ([`shown`]); past it, `...`.
pub const SHOWN_LIMIT: usize = 1000;

/// Units of work the search for labels may take in [`shown`] (about a
/// hundred thousand objects) before a message gives up on labels and shows
/// a prefix of the value without them.
const SHOWN_LABEL_UNITS: u64 = 100_000 * PRINT_UNITS;

/// The whole text of `v` in `write` form, unmetered: for tests only (the
/// engine prints what a program made within its limits).
#[cfg(test)]
pub fn write_string(heap: &Heap, syms: &SymbolTable, v: Value) -> String {
    to_string(heap, syms, v, Mode::Write)
}

/// The whole text of `v`, with no limit on its work: for tests only. What
/// a program made is printed with [`to_string_within`] (its work charged)
/// or [`shown`] (for a message).
#[cfg(test)]
pub fn to_string(heap: &Heap, syms: &SymbolTable, v: Value, mode: Mode) -> String {
    let mut out = String::new();
    print(heap, syms, v, mode, &mut out);
    out
}

/// `v` as `write` shows it, for a message: at most [`SHOWN_LIMIT`] bytes
/// (then `...`) and a bounded amount of work whatever `v` is (a structure
/// sharing its parts a hundred levels deep prints as a prefix, not as the
/// exponential text it stands for).
pub fn shown(heap: &Heap, syms: &SymbolTable, v: Value) -> String {
    shown_as(heap, syms, v, Mode::Write)
}

/// [`shown`] as `display` (`Mode::Display`) or `write` shows it.
pub fn shown_as(heap: &Heap, syms: &SymbolTable, v: Value, mode: Mode) -> String {
    let mut allowance = Allowance(SHOWN_LABEL_UNITS);
    // Without labels a cyclic value prints as a prefix of its unfolding:
    // the limit on bytes still ends it.
    let labels = find_labels(heap, v, false, &mut allowance).unwrap_or_default();
    let mut out = String::new();
    let mut work = number::Unmetered;
    let Ok(()) = Printer::new(heap, syms, labels, &mut out, SHOWN_LIMIT, &mut work).run(v, mode);
    out
}

/// Work allowed before giving up (for [`shown`]).
struct Allowance(u64);

impl Work for Allowance {
    type Stop = ();
    fn charge(&mut self, cost: u64) -> Result<(), ()> {
        self.0 = self.0.checked_sub(cost).ok_or(())?;
        Ok(())
    }
}

/// Units of work (`number::Work`) printing charges per value it visits
/// (in the search for cycles and in the writing), plus one per 8 bytes it
/// writes.
const PRINT_UNITS: u64 = 32;

/// Characters of a string or bytes of a bytevector written between two
/// charges of the work.
const ATOM_CHUNK: usize = 1 << 16;

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

/// [`to_string_within`], or `None` when the text would be longer than
/// `max` bytes (it is not built past that).
pub fn to_string_capped<W: Work>(
    heap: &Heap,
    syms: &SymbolTable,
    v: Value,
    mode: Mode,
    max: usize,
    work: &mut W,
) -> Result<Option<String>, W::Stop> {
    let labels = labels_for(heap, v, mode, work)?;
    let mut out = String::new();
    let mut printer = Printer::new(heap, syms, labels, &mut out, max, work);
    printer.run(v, mode)?;
    Ok(if out.len() > max { None } else { Some(out) })
}

/// What is left to print, innermost last.
enum Task {
    Value(Value, Mode),
    Str(&'static str),
    /// Continue printing a list whose remaining part is this value.
    ListRest(Value, Mode),
    /// The elements of a vector, the fields of a record or several values,
    /// from this index on.
    Items(Ref, usize, Mode),
    /// The irritants of an error object from this pair on.
    IrritantsRest(Value),
}

#[cfg(test)]
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
    let labels = labels_for(heap, v, mode, work)?;
    let max = if mode == Mode::Simple {
        SIMPLE_LIMIT
    } else {
        usize::MAX
    };
    Printer::new(heap, syms, labels, out, max, work).run(v, mode)
}

/// The pairs and vectors `mode` labels. Display uses labels for cycles
/// too: an endless loop is worse than labels.
fn labels_for<W: Work>(
    heap: &Heap,
    v: Value,
    mode: Mode,
    work: &mut W,
) -> Result<BTreeMap<Ref, ()>, W::Stop> {
    match mode {
        Mode::Write | Mode::Display => find_labels(heap, v, false, work),
        Mode::Shared => find_labels(heap, v, true, work),
        Mode::Simple => Ok(BTreeMap::new()),
    }
}

/// One printing of a value: iterative (no Rust recursion on the depth of
/// the data, records and error objects included), its work charged, its
/// length bounded by `max`.
struct Printer<'a, W: Work> {
    heap: &'a Heap,
    syms: &'a SymbolTable,
    labels: BTreeMap<Ref, ()>,
    /// The labels written so far and their numbers.
    numbering: BTreeMap<Ref, usize>,
    out: &'a mut String,
    /// Where this value's text begins in `out`.
    start: usize,
    /// Bytes of text after which printing stops with `...`.
    max: usize,
    work: &'a mut W,
}

impl<'a, W: Work> Printer<'a, W> {
    /// A printing that appends to `out`, stopping past `max` bytes of it.
    fn new(
        heap: &'a Heap,
        syms: &'a SymbolTable,
        labels: BTreeMap<Ref, ()>,
        out: &'a mut String,
        max: usize,
        work: &'a mut W,
    ) -> Self {
        let start = out.len();
        Printer {
            heap,
            syms,
            labels,
            numbering: BTreeMap::new(),
            out,
            start,
            max,
            work,
        }
    }

    fn run(&mut self, v: Value, mode: Mode) -> Result<(), W::Stop> {
        let heap = self.heap;
        let mut tasks = vec![Task::Value(v, mode)];
        let mut charged = self.out.len();
        while let Some(t) = tasks.pop() {
            self.work
                .charge(PRINT_UNITS + (self.out.len() - charged) as u64 / 8)?;
            charged = self.out.len();
            if self.out.len() - self.start > self.max {
                self.cut();
                return Ok(());
            }
            match t {
                Task::Str(s) => self.out.push_str(s),
                Task::Value(v, mode) => {
                    let Value::Obj(r) = v else {
                        self.atom(v, mode)?;
                        continue;
                    };
                    if self.labels.contains_key(&r) {
                        if let Some(n) = self.numbering.get(&r) {
                            self.out.push_str(&format!("#{n}#"));
                            continue;
                        }
                        let n = self.numbering.len();
                        self.numbering.insert(r, n);
                        self.out.push_str(&format!("#{n}="));
                    }
                    // Inside a record or an error object, values are written.
                    let inner = if mode == Mode::Display {
                        Mode::Write
                    } else {
                        mode
                    };
                    match heap.get(r) {
                        Object::Pair(a, d) => {
                            self.out.push('(');
                            tasks.push(Task::ListRest(*d, mode));
                            tasks.push(Task::Value(*a, mode));
                        }
                        Object::Vector(_) => {
                            self.out.push_str("#(");
                            tasks.push(Task::Items(r, 0, mode));
                        }
                        Object::Values(_) => tasks.push(Task::Items(r, 0, mode)),
                        Object::Record(t, _) => {
                            let name = match heap.obj(*t) {
                                Some(Object::RecordType(rt)) => self.syms.name(rt.name),
                                _ => "record",
                            };
                            let name = name.trim_start_matches('<').trim_end_matches('>');
                            self.out.push_str("#<");
                            self.out.push_str(name);
                            tasks.push(Task::Items(r, 0, inner));
                        }
                        Object::Error(e) => {
                            self.out.push_str(match e.kind {
                                ErrorObjectKind::Error => "#<error ",
                                ErrorObjectKind::Read => "#<read-error ",
                                ErrorObjectKind::File => "#<file-error ",
                            });
                            tasks.push(Task::IrritantsRest(e.irritants));
                            tasks.push(Task::Value(e.message, Mode::Write));
                        }
                        _ => self.atom(v, mode)?,
                    }
                }
                Task::ListRest(d, mode) => match d {
                    Value::Null => self.out.push(')'),
                    Value::Obj(r)
                        if matches!(heap.get(r), Object::Pair(..))
                            && !self.labels.contains_key(&r) =>
                    {
                        if let Object::Pair(a, d2) = heap.get(r) {
                            self.out.push(' ');
                            tasks.push(Task::ListRest(*d2, mode));
                            tasks.push(Task::Value(*a, mode));
                        }
                    }
                    other => {
                        self.out.push_str(" . ");
                        tasks.push(Task::Str(")"));
                        tasks.push(Task::Value(other, mode));
                    }
                },
                Task::Items(r, i, mode) => {
                    // (the items, what goes before each but the first,
                    // before the first, and after the last)
                    let (items, between, first, end): (&[Value], char, &str, &str) =
                        match heap.get(r) {
                            Object::Vector(items) => (items, ' ', "", ")"),
                            Object::Values(items) => (items, '\n', "", ""),
                            Object::Record(_, fields) => (fields, ' ', " ", ">"),
                            _ => (&[], ' ', "", ""),
                        };
                    match items.get(i) {
                        None => self.out.push_str(end),
                        Some(item) => {
                            if i == 0 {
                                self.out.push_str(first);
                            } else {
                                self.out.push(between);
                            }
                            tasks.push(Task::Items(r, i + 1, mode));
                            tasks.push(Task::Value(*item, mode));
                        }
                    }
                }
                Task::IrritantsRest(l) => match l {
                    Value::Obj(r)
                        if matches!(heap.get(r), Object::Pair(..))
                            && !self.labels.contains_key(&r) =>
                    {
                        if let Object::Pair(a, d) = heap.get(r) {
                            self.out.push(' ');
                            tasks.push(Task::IrritantsRest(*d));
                            tasks.push(Task::Value(*a, Mode::Write));
                        }
                    }
                    Value::Null => self.out.push('>'),
                    // A list of irritants made cyclic or improper after the
                    // fact: its rest, labelled.
                    other => {
                        self.out.push_str(" . ");
                        tasks.push(Task::Str(">"));
                        tasks.push(Task::Value(other, Mode::Write));
                    }
                },
            }
        }
        if self.out.len() - self.start > self.max {
            self.cut();
        }
        Ok(())
    }

    /// Ends the text at `max` bytes (on a character boundary) with `...`.
    fn cut(&mut self) {
        let mut at = self.start + self.max;
        while !self.out.is_char_boundary(at) {
            at -= 1;
        }
        self.out.truncate(at);
        self.out.push_str("...");
    }

    /// Bytes the text may still take before it is cut (plus one, so that
    /// the cut is seen).
    fn room(&self) -> usize {
        self.max
            .saturating_sub(self.out.len() - self.start)
            .saturating_add(1)
    }

    /// A value that holds no other values; long ones (strings,
    /// bytevectors, big numbers) charge their work as they are written and
    /// stop at the room left.
    fn atom(&mut self, v: Value, mode: Mode) -> Result<(), W::Stop> {
        let write = mode != Mode::Display;
        let Value::Obj(r) = v else {
            atom(self.heap, self.syms, v, mode, self.out);
            return Ok(());
        };
        match self.heap.get(r) {
            Object::Str(s) => {
                let shown = &s[..s.len().min(self.room())];
                if write {
                    self.out.push('"');
                }
                for chunk in shown.chunks(ATOM_CHUNK) {
                    self.work.charge(chunk.len() as u64 * PRINT_UNITS / 8)?;
                    if write {
                        write_string_chars(chunk.iter().copied(), self.out);
                    } else {
                        self.out.extend(chunk.iter());
                    }
                }
                if write && shown.len() == s.len() {
                    self.out.push('"');
                }
            }
            Object::Bytevector(b) => {
                let shown = &b[..b.len().min(self.room())];
                self.out.push_str("#u8(");
                for (n, chunk) in shown.chunks(ATOM_CHUNK).enumerate() {
                    self.work.charge(chunk.len() as u64 * PRINT_UNITS / 8)?;
                    for (i, x) in chunk.iter().enumerate() {
                        if n + i > 0 {
                            self.out.push(' ');
                        }
                        self.out.push_str(&x.to_string());
                    }
                }
                if shown.len() == b.len() {
                    self.out.push(')');
                }
            }
            // A number whose digits would not fit (in a message) is not
            // converted: its conversion costs more than its length.
            Object::Big(b) if b.bits() / 4 > self.room() as u64 => {
                self.out
                    .push_str(&format!("#<exact integer of {} bits>", b.bits()));
            }
            Object::Rat(q) if (q.numer().bits() + q.denom().bits()) / 4 > self.room() as u64 => {
                self.out.push_str(&format!(
                    "#<exact fraction of {} bits>",
                    q.numer().bits() + q.denom().bits()
                ));
            }
            Object::Big(b) => {
                let text = number::to_string(&Num::Big(b.clone()), 10, self.work)?;
                self.out.push_str(&text);
            }
            Object::Rat(q) => {
                let text = number::to_string(&Num::Rat((**q).clone()), 10, self.work)?;
                self.out.push_str(&text);
            }
            Object::Complex(z) => {
                let text = complex::to_string(&Number::Complex(z.clone()), 10, self.work)?;
                self.out.push_str(&text);
            }
            _ => atom(self.heap, self.syms, v, mode, self.out),
        }
        Ok(())
    }
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
            Value::Obj(r)
                if matches!(
                    heap.get(r),
                    Object::Pair(..)
                        | Object::Vector(_)
                        | Object::Values(_)
                        | Object::Record(..)
                        | Object::Error(_)
                ) =>
            {
                Some(r)
            }
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
            Object::Vector(items) | Object::Values(items) => items.get(i).copied(),
            Object::Record(_, fields) => fields.get(i).copied(),
            Object::Error(e) if i == 0 => Some(e.message),
            Object::Error(e) if i == 1 => Some(e.irritants),
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
            Object::Closure(c) => match c.template.name {
                Some(n) => out.push_str(&format!("#<procedure {}>", syms.name(n))),
                None => out.push_str("#<procedure>"),
            },
            Object::CaseLambda(_) => out.push_str("#<procedure>"),
            Object::Continuation(_) => out.push_str("#<continuation>"),
            Object::Escape(_) => out.push_str("#<escape-continuation>"),
            Object::Box(_) => out.push_str("#<box>"),
            Object::RecordType(rt) => {
                out.push_str(&format!("#<record-type {}>", syms.name(rt.name)))
            }
            Object::Promise { .. } => out.push_str("#<promise>"),
            Object::Parameter { .. } => out.push_str("#<parameter>"),
            Object::Port(p) => out.push_str(if p.input {
                "#<input-port>"
            } else {
                "#<output-port>"
            }),
            Object::Environment(_) => out.push_str("#<environment>"),
            Object::HashTable(t) => out.push_str(&format!("#<hash-table {}>", t.len())),
            // What `Printer` writes itself.
            Object::Pair(..)
            | Object::Vector(_)
            | Object::Values(_)
            | Object::Record(..)
            | Object::Error(_)
            | Object::Str(_)
            | Object::Bytevector(_)
            | Object::Big(_)
            | Object::Rat(_)
            | Object::Complex(_) => out.push_str("#<data>"),
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
    write_string_chars(chars, out);
    out.push('"');
}

/// The characters of a string literal, escaped, without its quotes.
fn write_string_chars(chars: impl Iterator<Item = char>, out: &mut String) {
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
}

/// A symbol as `write` shows it: in bars when the reader would otherwise read
/// it as something else (a number such as `+i` or `+nan.0`, `.`, a `#`
/// form, or a bad number such as `1+`), or when it holds a delimiter,
/// whitespace or a control character (R7RS 2.1). Letters of any script are
/// written as they are, as Guile does (chibi puts any non-ASCII name in
/// bars).
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
        // `1+` or `-1a` would be read as a bad number (the reader's rule).
        || crate::reader::promises_number(name)
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
        let mut s = shown_as(heap, syms, e.message, Mode::Display);
        let mut irr = e.irritants;
        let mut first = true;
        while let Some((a, d)) = heap.pair(irr) {
            s.push_str(if first && !s.ends_with(':') {
                ": "
            } else {
                " "
            });
            first = false;
            s.push_str(&shown(heap, syms, a));
            irr = d;
            if s.len() > 4 * SHOWN_LIMIT {
                s.push_str(" ...");
                break;
            }
        }
        return s;
    }
    format!("uncaught exception: {}", shown(heap, syms, obj))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::RecordType;

    /// Work that refuses after `units`: how a limit looks to the printer.
    struct Allowed(u64);
    impl Work for Allowed {
        type Stop = ();
        fn charge(&mut self, cost: u64) -> Result<(), ()> {
            self.0 = self.0.checked_sub(cost).ok_or(())?;
            Ok(())
        }
    }

    fn node_type(heap: &mut Heap, syms: &mut SymbolTable) -> Value {
        let name = syms.intern("node");
        let field = syms.intern("x");
        heap.alloc(Object::RecordType(Box::new(RecordType {
            name,
            fields: vec![field],
        })))
    }

    fn record(heap: &mut Heap, t: Value, field: Value) -> Value {
        heap.alloc(Object::Record(t, vec![field].into_boxed_slice()))
    }

    /// `levels` levels of a pair whose car and cdr are both the level
    /// below: 2^levels leaves unfolded, `levels` pairs in the heap.
    fn doubling(heap: &mut Heap, levels: usize) -> Value {
        let mut v = Value::Int(1);
        for _ in 0..levels {
            v = heap.cons(v, v);
        }
        v
    }

    #[test]
    fn a_record_that_holds_itself_is_written_with_a_label() {
        let (mut heap, mut syms) = (Heap::new(), SymbolTable::default());
        let t = node_type(&mut heap, &mut syms);
        let n = record(&mut heap, t, Value::Int(1));
        if let Some(Object::Record(_, fields)) = heap.obj_mut(n) {
            fields[0] = n;
        }
        assert_eq!(write_string(&heap, &syms, n), "#0=#<node #0#>");
        assert_eq!(to_string(&heap, &syms, n, Mode::Display), "#0=#<node #0#>");
    }

    #[test]
    fn records_and_errors_nested_a_million_deep_need_no_rust_stack() {
        let (mut heap, mut syms) = (Heap::new(), SymbolTable::default());
        let t = node_type(&mut heap, &mut syms);
        let mut v = Value::Int(0);
        for _ in 0..1_000_000 {
            v = record(&mut heap, t, v);
        }
        let text = write_string(&heap, &syms, v);
        assert!(text.starts_with("#<node #<node "));
        assert_eq!(text.len(), 1_000_000 * "#<node >".len() + 1);
        let message = heap.string("m");
        let irritants = heap.cons(v, Value::Null);
        let e = heap.alloc(Object::Error(Box::new(crate::value::ErrorObject {
            kind: ErrorObjectKind::Error,
            message,
            irritants,
        })));
        assert!(write_string(&heap, &syms, e).starts_with("#<error \"m\" #<node #<node "));
    }

    #[test]
    fn writing_shared_structure_is_charged_and_stops_at_the_limit() {
        let (mut heap, syms) = (Heap::new(), SymbolTable::default());
        // 2^100 leaves: no limit would let it end.
        let v = doubling(&mut heap, 100);
        let stopped = to_string_within(&heap, &syms, v, Mode::Write, &mut Allowed(1 << 30));
        assert!(stopped.is_err());
        let capped = to_string_capped(
            &heap,
            &syms,
            v,
            Mode::Write,
            1 << 16,
            &mut Allowed(u64::MAX),
        );
        assert_eq!(capped, Ok(None));
        let small = doubling(&mut heap, 2);
        let capped = to_string_capped(
            &heap,
            &syms,
            small,
            Mode::Write,
            100,
            &mut Allowed(u64::MAX),
        );
        assert_eq!(capped, Ok(Some("((1 . 1) 1 . 1)".to_string())));
    }

    #[test]
    fn a_value_in_a_message_is_short_whatever_it_is() {
        let (mut heap, syms) = (Heap::new(), SymbolTable::default());
        let shared = doubling(&mut heap, 100);
        let text = shown(&heap, &syms, shared);
        assert!(
            text.len() <= SHOWN_LIMIT + 3 && text.ends_with("..."),
            "{text}"
        );
        let long = heap.string(&"x".repeat(10 * SHOWN_LIMIT));
        let text = shown(&heap, &syms, long);
        assert!(
            text.starts_with("\"xxx") && text.ends_with("...") && text.len() <= SHOWN_LIMIT + 3
        );
        let big = heap.alloc(Object::Big(num_bigint::BigInt::from(7).pow(1_000_000)));
        assert!(shown(&heap, &syms, big).starts_with("#<exact integer of "));
        // A cycle too long for the search for labels still ends.
        let items: Vec<Value> = (0..1_000_000).map(Value::Int).collect();
        let l = heap.list(&items);
        let mut last = l;
        while let Some((_, d)) = heap.pair(last) {
            if matches!(d, Value::Null) {
                break;
            }
            last = d;
        }
        if let Some(Object::Pair(_, d)) = heap.obj_mut(last) {
            *d = l;
        }
        let text = shown(&heap, &syms, l);
        assert!(text.starts_with("(0 1 2 3") && text.ends_with("..."));
        // A small value is shown whole, labels and all.
        let small = heap.list(&[Value::Int(1), Value::Int(2)]);
        if let Some(Object::Pair(_, d)) = heap.obj_mut(small) {
            *d = small;
        }
        assert_eq!(shown(&heap, &syms, small), "#0=(1 . #0#)");
    }
}
