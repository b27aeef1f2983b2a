//! Primitive procedures, implemented in Rust.
//!
//! A primitive receives its arguments as a slice and returns a value or a
//! [`Fault`]; the VM checks arity before the call, so a primitive may index
//! its arguments up to its declared minimum. Primitives never run the
//! collector and never call back into Scheme: the few that need the VM
//! (`apply`, `call/cc`, ...) are [`Control`] operations the VM performs itself.
//!
//! The three kinds of primitive ([`PrimKind`]) and what each sees are
//! defined here: simple ones see the heap, symbols, output and the host
//! ([`Ctx`]); control ones are performed by the VM; knowledge ones (the
//! `arb:` procedures, implemented in `arb`) see the knowledge base and the
//! running tier ([`KCtx`]).

mod bitwise;
mod chars;
mod charsets;
mod complex;
pub(crate) mod control;
mod files;
mod hashtables;
mod io;
mod lists;
mod numbers;
pub mod output;
mod process;
mod sort;
mod strings;
#[cfg(test)]
mod test_support;
mod vectors;

use std::collections::BTreeMap;

use crate::heap::{Heap, MemoryMeter, OutOfMemory};
use crate::host::Host;
use crate::number::{self, Num};
use crate::printer;
use crate::repo::forest::Timestamp;
use crate::repo::knowledge::Knowledge;
use crate::repo::Tier;
use crate::symbol::SymbolTable;
use crate::value::{Object, Value};

/// Why a primitive did not return a value.
#[derive(Debug)]
pub enum Fault {
    /// An error: message and irritants (raised as an error object).
    Error(String, Vec<Value>),
    /// `raise` of an arbitrary object.
    Raise(Value),
    /// `read` met malformed text (raised as a read error).
    ReadError(String),
    /// A file could not be opened, read, written or deleted, or the host
    /// did not permit it (raised as a file error).
    FileError(String),
    /// `(exit STATUS)`: the evaluation ends here, its effects kept, and
    /// the host is asked to end with this status.
    Exit(i32),
    /// A primitive would exceed the memory cap.
    OutOfMemory,
    /// A primitive's work used up the step budget.
    StepLimit,
    /// The host asked to stop while a primitive worked.
    Interrupted,
}

impl From<OutOfMemory> for Fault {
    fn from(_: OutOfMemory) -> Fault {
        Fault::OutOfMemory
    }
}

/// What a simple primitive sees.
pub struct Ctx<'a> {
    pub heap: &'a mut Heap,
    pub syms: &'a mut SymbolTable,
    /// The current output port's text on its way to the host.
    pub out: &'a mut output::Output,
    /// The evaluation's limits, which the primitive's own work is charged
    /// to, and the embedder (the clock, files, the standard streams).
    pub budget: Budget<'a>,
    pub io: Io<'a>,
}

/// Which standard port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standard {
    Output = 0,
    Error = 1,
    Input = 2,
}

/// What the port primitives see beyond the heap: the parameters that hold
/// the current ports, and the file output ports not yet closed (whose
/// pending text the VM writes out when an evaluation ends).
pub struct Io<'a> {
    pub globals: &'a [Value],
    /// The globals `current-output-port`, `current-error-port` and
    /// `current-input-port`, in `Standard` order (set when the prelude
    /// defines them).
    pub params: [Option<u32>; 3],
    pub files: &'a mut Vec<Value>,
}

impl Io<'_> {
    /// The current port of that kind: the value its parameter holds, or
    /// `None` before the prelude made the parameter (or when a program
    /// replaced it by something else).
    pub fn current(&self, heap: &Heap, which: Standard) -> Option<Value> {
        let g = self.params[which as usize]?;
        match heap.obj(*self.globals.get(g as usize)?) {
            Some(Object::Parameter { value, .. }) => Some(*value),
            _ => None,
        }
    }
}

/// Units of a primitive's work (about a nanosecond each, see
/// `number::work`) per step of the budget: a step, one procedure call,
/// takes about as long.
pub const UNITS_PER_STEP: u64 = 32;

/// Units between two questions to the host whether to stop (about a
/// millisecond of work).
const POLL_UNITS: u64 = 1 << 20;

/// A primitive's share of the evaluation's limits. Work that grows with the
/// size of the arguments (bignum arithmetic, building strings and vectors,
/// comparing and writing structures) is charged here, so the step budget
/// counts it and the host's interrupt check is asked as it goes: a limit
/// stops a long primitive within about a millisecond of its work.
pub struct Budget<'a> {
    pub steps_left: &'a mut u64,
    /// Units charged since the host was last asked.
    pub unpolled: &'a mut u64,
    pub host: &'a mut dyn Host,
    /// The embedder's meter and the bytes it may show (the memory cap less
    /// what the output buffer reserves): checked at each poll, so the
    /// scratch memory of a long primitive (the text `write` builds, the
    /// pairs `equal?` has compared) stops at the cap too.
    pub memory: Option<(MemoryMeter, usize)>,
}

impl Budget<'_> {
    /// Charges `units` of work: `Err` when the budget is used up or the
    /// host says stop.
    pub fn charge(&mut self, units: u64) -> Result<(), Fault> {
        *self.unpolled += units;
        if *self.unpolled < POLL_UNITS {
            return Ok(());
        }
        let steps = *self.unpolled / UNITS_PER_STEP;
        *self.unpolled %= UNITS_PER_STEP;
        if steps > *self.steps_left {
            *self.steps_left = 0;
            return Err(Fault::StepLimit);
        }
        *self.steps_left -= steps;
        if self.host.should_stop() {
            return Err(Fault::Interrupted);
        }
        // Over the cap: the VM collects and tries the primitive once more
        // (its garbage may be what the meter counts).
        if let Some((meter, room)) = self.memory {
            if meter() > room {
                return Err(Fault::OutOfMemory);
            }
        }
        Ok(())
    }
}

impl number::Work for Budget<'_> {
    type Stop = Fault;
    fn charge(&mut self, cost: u64) -> Result<(), Fault> {
        Budget::charge(self, cost)
    }
}

impl Ctx<'_> {
    /// Charges `units` of the primitive's work to the evaluation's limits.
    pub fn charge(&mut self, units: u64) -> Result<(), Fault> {
        self.budget.charge(units)
    }

    /// Charges `n` elements walked, built or copied.
    pub fn charge_elements(&mut self, n: usize) -> Result<(), Fault> {
        self.budget.charge((n as u64).saturating_mul(ELEMENT_UNITS))
    }

    /// A list of `items` ending in `tail`, built a chunk at a time with
    /// each chunk's pairs charged, so a limit stops a long one as it goes.
    ///
    /// The list is held between chunks by its first pair's slot, not as a
    /// `Value`: a `Value` was held in memory and read back whole just after
    /// being written in two words (docs/PERFORMANCE.md, "Pairs by slot").
    /// Inline always in the guest: there its five arguments (the result's
    /// address among them) put one on the stack, written as four bytes and
    /// read back as eight (docs/PERFORMANCE.md, "A Value's payload as a
    /// word").
    #[cfg_attr(not(target_arch = "wasm32"), inline)]
    #[cfg_attr(target_arch = "wasm32", inline(always))]
    pub fn list_with_tail(&mut self, items: &[Value], tail: Value) -> Result<Value, Fault> {
        let mut chunks = items.rchunks(ELEMENT_CHUNK);
        let Some(chunk) = chunks.next() else {
            return Ok(tail);
        };
        self.charge_elements(chunk.len())?;
        let Some(mut first) = self.heap.list_ref(chunk, tail) else {
            return Ok(tail);
        };
        for chunk in chunks {
            self.charge_elements(chunk.len())?;
            if let Some(r) = self.heap.list_ref(chunk, Value::Obj(first)) {
                first = r;
            }
        }
        Ok(Value::Obj(first))
    }

    /// A proper list of `items`, charged as it is built.
    #[inline]
    pub fn list(&mut self, items: &[Value]) -> Result<Value, Fault> {
        self.list_with_tail(items, Value::Null)
    }
}

/// Units of work (about a nanosecond each) charged per element a list,
/// vector or string primitive walks, builds or copies: a pair allocated, a
/// slot read and written.
pub const ELEMENT_UNITS: u64 = 16;

/// Elements a primitive handles between two charges of its work when it
/// works in chunks.
pub const ELEMENT_CHUNK: usize = 4096;

pub type PrimFn = fn(&mut Ctx, &[Value]) -> Result<Value, Fault>;

/// What a knowledge primitive sees.
pub struct KCtx<'a> {
    pub heap: &'a mut Heap,
    pub syms: &'a mut SymbolTable,
    pub k: &'a mut Knowledge,
    /// The tier of the running code.
    pub tier: Tier,
    /// The embedder (the clock for version timestamps).
    pub host: &'a mut dyn Host,
}

impl KCtx<'_> {
    /// The host's clock as a version timestamp.
    pub fn timestamp(&mut self) -> Timestamp {
        Timestamp::from_seconds(self.host.now())
    }
}

/// A knowledge primitive. It never faults: every failure, arity included,
/// is returned as a value (an error alist), so that `arb:transaction` and
/// callers can test it with `arb:error?`.
pub type KnowledgeFn = fn(&mut KCtx, &[Value]) -> Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Apply,
    CallCC,
    /// `(%call/ec F)`: calls F with an escape-only continuation of the
    /// call (`value::Escape`).
    CallEC,
    ApplyValues,
    Throw,
    Abort,
    Winders,
    SetWinders,
    Handlers,
    SetHandlers,
    ContinuationWinders,
    Eval,
    /// `(%environment SETS)`: the environment of the import sets SETS (a
    /// list of data), or, when a bundled library they draw on has not run
    /// yet, the list of thunks that run its body (then ask again).
    Environment,
    /// `(%arb:eval-at-tier LEVEL EXPR)`: evaluates EXPR (a datum or source
    /// text) with the tier lowered to LEVEL for its dynamic extent.
    EvalAtTier,
    /// `(%arb:load-ended DONE ID ...)`: the load of these stored nodes
    /// finished (DONE true) or was left by an error.
    LoadEnded,
    /// `(%suspend CALLS)`: ends the run slice and hands the host CALLS (a
    /// list of `(tool-name arg ...)`); the call's value is the list of the
    /// host's answers, each `(#t . value)` or `(#f . condition)`.
    Suspend,
    /// `(%bound-names [PREFIX])`: the names bound at top level in this
    /// session (variables with a value, syntax, names an import brought
    /// in) and the symbol names of stored knowledge, sorted, as strings;
    /// those starting with PREFIX when given.
    /// The engine's hidden names (`%...`, `NAME@...`) are left out. What
    /// the REPL completes with.
    BoundNames,
}

#[derive(Clone, Copy)]
pub enum PrimKind {
    Simple(PrimFn),
    Control(Control),
    /// An `arb:` procedure: sees the knowledge base and the running tier.
    Knowledge(KnowledgeFn),
}

#[derive(Clone)]
pub struct Prim {
    pub name: &'static str,
    pub min: u16,
    pub max: Option<u16>,
    pub kind: PrimKind,
}

#[derive(Clone, Default)]
pub struct PrimTable {
    pub prims: Vec<Prim>,
    by_name: BTreeMap<&'static str, u32>,
}

impl PrimTable {
    pub fn add(&mut self, name: &'static str, min: u16, max: Option<u16>, f: PrimFn) {
        self.push(Prim {
            name,
            min,
            max,
            kind: PrimKind::Simple(f),
        });
    }

    pub fn control(&mut self, name: &'static str, min: u16, max: Option<u16>, c: Control) {
        self.push(Prim {
            name,
            min,
            max,
            kind: PrimKind::Control(c),
        });
    }

    /// An `arb:` procedure. It checks its own arity, so that a wrong call
    /// is an error alist like every other failure of the knowledge API.
    pub fn knowledge(&mut self, name: &'static str, f: KnowledgeFn) {
        self.push(Prim {
            name,
            min: 0,
            max: None,
            kind: PrimKind::Knowledge(f),
        });
    }

    fn push(&mut self, p: Prim) {
        let id = self.prims.len() as u32;
        self.by_name.insert(p.name, id);
        self.prims.push(p);
    }

    pub fn id(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    pub fn get(&self, id: u32) -> Option<&Prim> {
        self.prims.get(id as usize)
    }
}

pub use complex::{binary as complex_binary, Binary as ComplexBinary};
pub use hashtables::rehash_tables;
pub use io::flush_file;
#[cfg(test)]
pub(crate) use lists::equal;

/// Registers the R7RS primitives (and the `%` helpers the prelude builds on).
pub fn register(t: &mut PrimTable) {
    numbers::register(t);
    complex::register(t);
    lists::register(t);
    chars::register(t);
    strings::register(t);
    vectors::register(t);
    hashtables::register(t);
    bitwise::register(t);
    sort::register(t);
    io::register(t);
    files::register(t);
    process::register(t);
    control::register(t);
    charsets::register(t);
    sort::register_merge(t);
}

// ---- argument helpers ------------------------------------------------------

pub fn type_error(ctx: &Ctx, who: &str, expected: &str, got: Value) -> Fault {
    type_fault(who, expected, got, ctx.heap, ctx.syms)
}

/// `WHO: expected EXPECTED, got VALUE`: the message of every wrong-type error.
pub fn type_fault(who: &str, expected: &str, got: Value, heap: &Heap, syms: &SymbolTable) -> Fault {
    Fault::Error(
        format!(
            "{who}: expected {expected}, got {}",
            printer::shown(heap, syms, got)
        ),
        vec![],
    )
}

/// A real number (every number but the complex ones), its reading (a
/// copy, for a bignum) charged.
pub fn num(ctx: &mut Ctx, who: &str, v: Value) -> Result<Num, Fault> {
    let n = Num::from_value(ctx.heap, v).ok_or_else(|| {
        let complex = matches!(ctx.heap.obj(v), Some(Object::Complex(_)));
        type_error(
            ctx,
            who,
            if complex { "a real number" } else { "a number" },
            v,
        )
    })?;
    ctx.charge(n.limbs())?;
    Ok(n)
}

pub fn integer(ctx: &mut Ctx, who: &str, v: Value) -> Result<Num, Fault> {
    let n = num(ctx, who, v)?;
    if n.is_integer() {
        Ok(n)
    } else {
        Err(type_error(ctx, who, "an integer", v))
    }
}

/// A non-negative exact integer that fits in `usize` (an index or a length).
pub fn index(ctx: &Ctx, who: &str, v: Value) -> Result<usize, Fault> {
    match v {
        Value::Int(i) if i >= 0 => Ok(i as usize),
        _ => Err(type_error(ctx, who, "a non-negative exact integer", v)),
    }
}

pub fn character(ctx: &Ctx, who: &str, v: Value) -> Result<char, Fault> {
    match v {
        Value::Char(c) => Ok(c),
        _ => Err(type_error(ctx, who, "a character", v)),
    }
}

pub fn string<'h>(ctx: &'h Ctx, who: &str, v: Value) -> Result<&'h Vec<char>, Fault> {
    match ctx.heap.obj(v) {
        Some(Object::Str(s)) => Ok(s),
        _ => Err(type_error(ctx, who, "a string", v)),
    }
}

pub fn symbol_name(ctx: &Ctx, who: &str, v: Value) -> Result<String, Fault> {
    match v {
        Value::Sym(s) => Ok(ctx.syms.name(s).to_string()),
        _ => Err(type_error(ctx, who, "a symbol", v)),
    }
}

/// The elements of a proper list; an error names `who` for anything else.
pub fn list_items(ctx: &mut Ctx, who: &str, v: Value) -> Result<Vec<Value>, Fault> {
    let mut out = Vec::new();
    let mut l = v;
    loop {
        match l {
            Value::Null => return Ok(out),
            _ => match ctx.heap.pair(l) {
                Some((a, d)) => {
                    ctx.budget.charge(ELEMENT_UNITS)?;
                    out.push(a);
                    l = d;
                    // A cyclic list would never end; its length is bounded by the heap.
                    if out.len() > ctx.heap.slots() {
                        return Err(type_error(ctx, who, "a proper list", v));
                    }
                }
                None => return Err(type_error(ctx, who, "a proper list", v)),
            },
        }
    }
}

/// `(start end)` bounds for the optional range arguments of string/vector procedures.
pub fn range(
    ctx: &Ctx,
    who: &str,
    args: &[Value],
    from: usize,
    len: usize,
) -> Result<(usize, usize), Fault> {
    let start = match args.get(from) {
        Some(v) => index(ctx, who, *v)?,
        None => 0,
    };
    let end = match args.get(from + 1) {
        Some(v) => index(ctx, who, *v)?,
        None => len,
    };
    if start > end || end > len {
        return Err(Fault::Error(
            format!("{who}: range {start} to {end} is out of bounds for length {len}"),
            vec![],
        ));
    }
    Ok((start, end))
}

/// The error of index `k` past the end of a `kind` of length `len`.
pub fn out_of_range(who: &str, k: impl std::fmt::Display, kind: &str, len: usize) -> Fault {
    Fault::Error(
        format!("{who}: index {k} out of range for a {kind} of length {len}"),
        vec![],
    )
}

/// A kind of sequence that `-length`, `-ref`, `-set!` and `-copy!`
/// procedures work on alike: vectors (of values), bytevectors (of bytes),
/// strings (of characters).
pub trait Elements: Copy + Sized {
    /// The kind's name in errors.
    const KIND: &'static str;
    /// Its `-length`, `-ref` and `-set!` procedures.
    const LENGTH: &'static str;
    const REF: &'static str;
    const SET: &'static str;
    /// The elements of `v`, or the error that it is not of the kind.
    fn of<'h>(c: &'h Ctx, who: &str, v: Value) -> Result<&'h Vec<Self>, Fault>;
    /// The elements `s..e` of `v` (of the kind), their work charged as the
    /// kind's copies charge it.
    fn piece(c: &mut Ctx, who: &str, v: Value, s: usize, e: usize) -> Result<Vec<Self>, Fault> {
        Ok(Self::of(c, who, v)?[s..e].to_vec())
    }
    /// The elements of an object of the kind, to write to.
    fn of_mut(o: &mut Object) -> Option<&mut Vec<Self>>;
    /// `v` as an element, or the error that it cannot be one.
    fn element(c: &Ctx, who: &str, v: Value) -> Result<Self, Fault>;
    /// The element as a value.
    fn value(self) -> Value;
}

/// The kind's `(-length seq)`, `(-ref seq k)` and `(-set! seq k x)`.
pub fn register_elements<T: Elements>(t: &mut PrimTable) {
    t.add(T::LENGTH, 1, Some(1), |c, a| {
        Ok(Value::Int(T::of(c, T::LENGTH, a[0])?.len() as i64))
    });
    t.add(T::REF, 2, Some(2), element_ref::<T>);
    t.add(T::SET, 3, Some(3), element_set::<T>);
}

fn element_ref<T: Elements>(c: &mut Ctx, a: &[Value]) -> Result<Value, Fault> {
    let who = T::REF;
    let v = T::of(c, who, a[0])?;
    let k = index(c, who, a[1])?;
    v.get(k)
        .map(|x| x.value())
        .ok_or_else(|| out_of_range(who, k, T::KIND, v.len()))
}

fn element_set<T: Elements>(c: &mut Ctx, a: &[Value]) -> Result<Value, Fault> {
    let who = T::SET;
    let k = index(c, who, a[1])?;
    let x = T::element(c, who, a[2])?;
    let len = T::of(c, who, a[0])?.len();
    match c.heap.obj_mut(a[0]).and_then(T::of_mut) {
        Some(d) if k < len => {
            d[k] = x;
            Ok(Value::Unspecified)
        }
        _ => Err(out_of_range(who, k, T::KIND, len)),
    }
}

/// `(WHO to at from [start [end]])`: `vector-copy!`, `bytevector-copy!`,
/// `string-copy!`.
pub fn copy_into<T: Elements>(c: &mut Ctx, who: &str, a: &[Value]) -> Result<Value, Fault> {
    let at = index(c, who, a[1])?;
    let len = T::of(c, who, a[2])?.len();
    let (s, e) = range(c, who, a, 3, len)?;
    let piece = T::piece(c, who, a[2], s, e)?;
    let dlen = T::of(c, who, a[0])?.len();
    if at > dlen || dlen - at < piece.len() {
        return Err(Fault::Error(
            format!("{who}: the destination is too short"),
            vec![],
        ));
    }
    if let Some(d) = c.heap.obj_mut(a[0]).and_then(T::of_mut) {
        d[at..at + piece.len()].copy_from_slice(&piece);
    }
    Ok(Value::Unspecified)
}

pub fn boolean(b: bool) -> Value {
    Value::Bool(b)
}
