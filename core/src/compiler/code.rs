//! Compiled code: instructions and the templates that hold them.
//!
//! The VM is a stack machine with an accumulator. Variable references are
//! resolved at compile time to a frame slot, a closure slot or a global index;
//! nothing is looked up by name while running.

use std::cell::Cell;
use std::rc::Rc;

use crate::symbol::Sym;
use crate::syntax::Pos;
use crate::value::Value;

/// Operations the compiler inlines when the global they name still holds the
/// original primitive (checked at run time, so redefining `+` still works).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inline {
    Add,
    Sub,
    Mul,
    NumEq,
    Lt,
    Gt,
    Le,
    Ge,
    Car,
    Cdr,
    Cons,
    NullP,
    PairP,
    Not,
    EqP,
    ZeroP,
    VectorRef,
}

impl Inline {
    pub fn arity(self) -> usize {
        match self {
            Inline::Car
            | Inline::Cdr
            | Inline::NullP
            | Inline::PairP
            | Inline::Not
            | Inline::ZeroP => 1,
            _ => 2,
        }
    }

    pub fn from_name(name: &str) -> Option<Inline> {
        Some(match name {
            "+" => Inline::Add,
            "-" => Inline::Sub,
            "*" => Inline::Mul,
            "=" => Inline::NumEq,
            "<" => Inline::Lt,
            ">" => Inline::Gt,
            "<=" => Inline::Le,
            ">=" => Inline::Ge,
            "car" => Inline::Car,
            "cdr" => Inline::Cdr,
            "cons" => Inline::Cons,
            "null?" => Inline::NullP,
            "pair?" => Inline::PairP,
            "not" => Inline::Not,
            "eq?" => Inline::EqP,
            "zero?" => Inline::ZeroP,
            "vector-ref" => Inline::VectorRef,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Op {
    /// acc = constant
    Const(u32),
    /// acc = small integer
    Fixnum(i32),
    Nil,
    True,
    False,
    Unspecified,
    /// acc = frame slot
    Local(u16),
    /// acc = frame slot; error if it holds no value yet (letrec)
    LocalChecked(u16, u32),
    SetLocal(u16),
    /// acc = contents of the box in a frame slot
    LocalBox(u16),
    LocalBoxChecked(u16, u32),
    SetLocalBox(u16),
    /// Replace a frame slot's value by a fresh box holding it.
    BoxLocal(u16),
    /// acc = closure slot
    Free(u16),
    FreeChecked(u16, u32),
    FreeBox(u16),
    FreeBoxChecked(u16, u32),
    SetFreeBox(u16),
    /// acc = global; the u32 is a constant index of the name for errors
    Global(u32),
    SetGlobal(u32),
    DefineGlobal(u32),
    /// push acc
    Push,
    /// push frame slot (fused Local + Push)
    PushLocal(u16),
    PushConst(u32),
    /// Drop n values under the top of the stack (leaving a let's scope).
    Drop(u16),
    Jump(u32),
    JumpIfFalse(u32),
    /// acc = closure of child template; its free values are popped from the stack.
    MakeClosure(u32),
    /// Set free slot `free` of the closure in frame slot `closure` to frame slot `value`.
    PatchFree {
        closure: u16,
        free: u16,
        value: u16,
    },
    /// acc = case-lambda of the n closures on the stack
    MakeCaseLambda(u16),
    Call(u16),
    TailCall(u16),
    Return,
    /// Inline primitive: the first argument (of 2) on the stack, the last in
    /// acc; guarded by the global still holding the primitive.
    Inline(Inline),
    /// Inline primitive on a frame slot and a small integer.
    InlineLI {
        op: Inline,
        slot: u16,
        imm: i32,
    },
    /// Inline primitive on two frame slots.
    InlineLL {
        op: Inline,
        a: u16,
        b: u16,
    },
    /// Unary inline primitive on a frame slot.
    Inline1L {
        op: Inline,
        slot: u16,
    },
    /// push a global (fused Global + Push)
    PushGlobal(u32),
    /// End of the evaluation: the accumulator is its value.
    Halt,
    /// Sets the running tier to the one this frame's closure slot holds (the
    /// frame `%arb:eval-at-tier` leaves below the code it runs); the
    /// accumulator is untouched.
    RestoreTier,
}

/// One compiled lambda (or top-level form).
pub struct Template {
    pub code: Vec<Op>,
    pub consts: Vec<Value>,
    pub children: Vec<Rc<Template>>,
    /// Required parameters.
    pub nparams: u16,
    /// Whether extra arguments are collected into a list (a rest parameter).
    pub rest: bool,
    pub nfree: u16,
    pub name: Option<Sym>,
    /// Position of the lambda in the source.
    pub pos: Pos,
    /// pc of a call or primitive instruction and the source position it came from.
    pub positions: Vec<(u32, Pos)>,
    /// Part of the engine's own prelude: hidden from backtraces.
    pub internal: bool,
    /// Collector stamp (see `Heap::collect`).
    pub gc_stamp: Cell<u32>,
}

impl Template {
    pub fn position_at(&self, pc: usize) -> Option<Pos> {
        // The instruction that is executing is the one before `pc`.
        let target = pc.saturating_sub(1) as u32;
        let i = self.positions.partition_point(|(p, _)| *p <= target);
        if i == 0 {
            None
        } else {
            Some(self.positions[i - 1].1)
        }
    }
}
