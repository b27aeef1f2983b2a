//! Scheme values: a small `Copy` word for immediates and a handle for heap objects.
//!
//! Values are 16 bytes and copied freely; nothing is reference counted, so the
//! VM never touches a counter on the hot path. Heap objects live in
//! the heap (`heap.rs`) and are reclaimed by its tracing collector, which is
//! what frees cyclic garbage (closures that refer to themselves, cyclic lists).

pub(crate) mod code;
pub(crate) mod table;

use std::rc::Rc;

use num_bigint::BigInt;
use num_rational::BigRational;

use crate::complex::Complex;
use crate::repo::Tier;
use crate::symbol::Sym;
use code::{Frame, Template};

/// Index of an object in the heap.
pub type Ref = u64;

/// Laid out as an 8-byte tag and every payload at offset 8 (`repr(C,
/// u64)`), with no padding between them: a `Value` kept in locals is then
/// two 8-byte scalars. With Rust's own layout (a 1-byte tag, a payload at
/// offset 1, 4 or 8 by its size) the wasm32 build kept the instruction
/// loop's accumulator as one piece per payload offset, in memory or
/// spilled (docs/PERFORMANCE.md, "The instruction loop's accumulator").
#[derive(Clone, Copy, Debug)]
#[repr(C, u64)]
pub enum Value {
    Null,
    Bool(bool),
    /// A fixnum: exact integers that fit in 64 bits never allocate.
    Int(i64),
    Float(f64),
    Char(char),
    Sym(Sym),
    /// The value of forms whose value R7RS leaves unspecified.
    Unspecified,
    /// Marks a variable that has no value yet (unbound global, letrec before init).
    Undefined,
    Eof,
    /// A primitive procedure, by index into the primitive table.
    Prim(u32),
    Obj(Ref),
}

impl Value {
    /// A copy of `*v` read a word at a time, its tag and its payload, as
    /// two 8-byte loads. A plain copy of a `Value` is one 16-byte load,
    /// and where the value was just written as two words (a push of the
    /// accumulator, which lives in two registers) that load waits for both
    /// stores to reach the cache instead of taking their data (a stalled
    /// store forwarding; docs/PERFORMANCE.md, "Pairs by slot"). The `Null`
    /// arm is what makes LLVM copy through registers; it has no payload to
    /// read.
    #[inline(always)]
    pub fn by_words(v: &Value) -> Value {
        match *v {
            Value::Null => Value::Null,
            other => other,
        }
    }

    /// `eq?`: identity for heap objects, value for immediates.
    #[inline]
    pub fn eq(self, other: Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
            (Value::Char(a), Value::Char(b)) => a == b,
            (Value::Sym(a), Value::Sym(b)) => a == b,
            (Value::Unspecified, Value::Unspecified) => true,
            (Value::Undefined, Value::Undefined) => true,
            (Value::Eof, Value::Eof) => true,
            (Value::Prim(a), Value::Prim(b)) => a == b,
            (Value::Obj(a), Value::Obj(b)) => a == b,
            _ => false,
        }
    }
}

/// A closure: code plus the values of its free variables (flat closure).
/// A captured variable that is assigned somewhere is shared through a `Box`.
#[derive(Clone)]
pub struct Closure {
    pub template: Rc<Template>,
    pub free: Box<[Value]>,
}

/// A captured continuation: a copy of the VM's stacks and dynamic state.
#[derive(Clone)]
pub struct Continuation {
    pub stack: Vec<Value>,
    pub frames: Vec<Frame>,
    /// The `dynamic-wind` list at capture time (a Scheme list).
    pub winders: Value,
    /// The exception handler stack at capture time (a Scheme list).
    pub handlers: Value,
    /// The tier of the code that captured it.
    pub tier: Tier,
}

/// An escape-only continuation, made by `%call/ec` (what `guard` enters a
/// guard with): not a copy of the stacks but a note of where the frame of
/// its `%call/ec` call is. The call pushes an internal frame (the VM's
/// `escape_return` template) whose closure slot holds this very object,
/// at index `frame` of the frames, its callee slot at stack index
/// `height`. Invoking it while that frame is on the current stack (the
/// object in that slot of that frame: one activation, or a copy of it
/// that a full continuation brought back) drops everything above the
/// frame and returns from it, with the dynamic state of the call put
/// back; invoking it anywhere else is an error. Entering costs O(1)
/// where a full continuation copies the whole stack.
#[derive(Clone)]
pub struct Escape {
    /// The index of its internal frame in the VM's frames.
    pub frame: u32,
    /// The stack index of that frame's callee slot (its fp less one).
    pub height: u32,
    /// The `dynamic-wind` list at the call.
    pub winders: Value,
    /// The exception handler stack at the call.
    pub handlers: Value,
    /// The tier of the code that made it.
    pub tier: Tier,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorObjectKind {
    /// Raised by `error` or by a primitive.
    Error,
    /// Raised by `read` on malformed input.
    Read,
    /// Raised by file operations (which this engine does not provide).
    File,
}

#[derive(Clone)]
pub struct ErrorObject {
    pub kind: ErrorObjectKind,
    pub message: Value,
    pub irritants: Value,
}

#[derive(Clone)]
pub struct RecordType {
    pub name: Sym,
    pub fields: Vec<Sym>,
}

/// A port. Input ports read `chars` (textual) or `bytes` (binary) from
/// `pos`; output ports append to them. What is behind it is its `kind`.
#[derive(Clone)]
pub struct Port {
    pub input: bool,
    pub textual: bool,
    pub chars: Vec<char>,
    pub bytes: Vec<u8>,
    pub pos: usize,
    pub open: bool,
    pub kind: PortKind,
}

/// What a port reads from or writes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortKind {
    /// A string or bytevector port: its data is all in the port.
    Memory,
    /// The standard output: writes go to the evaluation's output text.
    Output,
    /// The standard error: writes go to the host's error stream (or the
    /// output text when it has none).
    Error,
    /// The standard input: `chars` holds what was read from the host and
    /// not yet consumed past `pos`; more is asked for when it runs out.
    Input,
    /// A file of the host's, by the path the program gave. Input file
    /// ports hold the whole file; output ones hold what is not yet written.
    File(String),
}

/// An 8-byte tag and every payload at offset 8 (`repr(C, u64)`, as
/// `Value`): a new pair's two values are then copied into its slot as
/// whole words (docs/PERFORMANCE.md, "Pairs and flonums").
#[derive(Clone)]
#[repr(C, u64)]
pub enum Object {
    /// A free slot; the number is the next free slot (or `u32::MAX`).
    Free(u32),
    Pair(Value, Value),
    Str(Vec<char>),
    Vector(Vec<Value>),
    Bytevector(Vec<u8>),
    Big(BigInt),
    Rat(Box<BigRational>),
    /// A number that is not real (both parts exact or both inexact).
    Complex(Box<Complex>),
    Closure(Closure),
    /// `case-lambda`: closures tried in order by arity.
    CaseLambda(Vec<Value>),
    /// A mutable cell shared by closures that capture an assigned variable.
    Box(Value),
    Continuation(Box<Continuation>),
    /// An escape-only continuation (`%call/ec`).
    Escape(Box<Escape>),
    /// More or fewer than one value, as returned by `values`.
    Values(Vec<Value>),
    Record(Value, Box<[Value]>),
    RecordType(Box<RecordType>),
    /// A promise: `done` with its value, or not yet with a thunk to force.
    Promise {
        done: bool,
        value: Value,
    },
    Parameter {
        value: Value,
        converter: Value,
    },
    Error(Box<ErrorObject>),
    Port(Box<Port>),
    /// An environment specifier for `eval`. `#f`: the session's top level
    /// (`interaction-environment`), mutable. Otherwise what `environment`
    /// made of its import sets: a vector of symbols `#(NAME GLOBAL ...)`,
    /// each name it binds with the global (or syntax) the name stands
    /// for; immutable (R7RS 6.12).
    Environment(Value),
    /// A hash table (`(scheme hash-table)`).
    HashTable(Box<crate::value::table::HashTable>),
}

impl Object {
    /// Approximate bytes this object holds, for the memory cap.
    #[inline]
    pub fn size(&self) -> usize {
        const BASE: usize = std::mem::size_of::<Object>();
        BASE + match self {
            Object::Str(s) => s.capacity() * 4,
            Object::Vector(v) | Object::Values(v) | Object::CaseLambda(v) => v.capacity() * 16,
            Object::Bytevector(b) => b.capacity(),
            Object::Big(b) => (b.bits() as usize) / 8,
            Object::Rat(r) => (r.numer().bits() + r.denom().bits()) as usize / 8,
            Object::Closure(c) => c.free.len() * 16,
            Object::Continuation(k) => k.stack.capacity() * 16 + k.frames.capacity() * 32,
            Object::Escape(_) => std::mem::size_of::<Escape>(),
            Object::Record(_, f) => f.len() * 16,
            Object::RecordType(t) => t.fields.capacity() * 4,
            Object::Port(p) => p.chars.capacity() * 4 + p.bytes.capacity(),
            Object::HashTable(t) => t.size(),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod size_tests {
    /// Every cons cell costs one `Object`: large variants are boxed so the
    /// common ones (pairs, closures, vectors) stay small.
    #[test]
    fn objects_stay_small() {
        assert_eq!(std::mem::size_of::<super::Value>(), 16);
        assert!(
            std::mem::size_of::<super::Object>() <= 40,
            "Object is {} bytes",
            std::mem::size_of::<super::Object>()
        );
    }
}
