//! Compiled code: instructions, the templates that hold them, and the
//! frames of suspended callers.
//!
//! This is the contract between the compiler, which writes templates, and
//! the VM, which runs them. The VM is a stack machine with an accumulator.
//! Variable references are resolved at compile time to a frame slot, a
//! closure slot or a global index; nothing is looked up by name while
//! running. Templates and frames hold values and values hold templates
//! (closures, continuations), so this module and `value` are one layer.

use std::cell::Cell;
use std::rc::Rc;

use crate::pos::Pos;
use crate::symbol::Sym;
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

    /// The name of the primitive each inline operation stands for, in
    /// discriminant order (the VM keeps a guard bit per operation).
    pub const ALL: [(Inline, &'static str); 17] = [
        (Inline::Add, "+"),
        (Inline::Sub, "-"),
        (Inline::Mul, "*"),
        (Inline::NumEq, "="),
        (Inline::Lt, "<"),
        (Inline::Gt, ">"),
        (Inline::Le, "<="),
        (Inline::Ge, ">="),
        (Inline::Car, "car"),
        (Inline::Cdr, "cdr"),
        (Inline::Cons, "cons"),
        (Inline::NullP, "null?"),
        (Inline::PairP, "pair?"),
        (Inline::Not, "not"),
        (Inline::EqP, "eq?"),
        (Inline::ZeroP, "zero?"),
        (Inline::VectorRef, "vector-ref"),
    ];

    /// The primitive's name, as in error messages.
    pub fn name(self) -> &'static str {
        Inline::ALL[self as usize].1
    }

    pub fn from_name(name: &str) -> Option<Inline> {
        Inline::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(op, _)| *op)
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
    /// `InlineLI` whose value the `JumpIfFalse` right after it tests, both
    /// in one dispatch (see [`fuse`]; the `JumpIfFalse` stays where it was).
    TestLI {
        op: Inline,
        slot: u16,
        imm: i32,
    },
    /// `InlineLL` followed by a `JumpIfFalse`, both in one dispatch.
    TestLL {
        op: Inline,
        a: u16,
        b: u16,
    },
    /// `Inline1L` followed by a `JumpIfFalse`, both in one dispatch.
    Test1L {
        op: Inline,
        slot: u16,
    },
    /// `Inline` followed by a `JumpIfFalse`, both in one dispatch.
    Test(Inline),
    /// `InlineLI` followed by a `Push`, both in one dispatch.
    PushLI {
        op: Inline,
        slot: u16,
        imm: i32,
    },
    /// `Local` followed by a `Return`, both in one dispatch.
    ReturnLocal(u16),
    /// End of the evaluation: the accumulator is its value.
    Halt,
    /// Sets the running tier to the one this frame's closure slot holds (the
    /// frame `%arb:eval-at-tier` leaves below the code it runs); the
    /// accumulator is untouched.
    RestoreTier,
}

impl Op {
    /// The instruction a fused one stands for, followed by the one after
    /// it in the code (see [`fuse`]); any other instruction as it is.
    pub fn unfused(self) -> Op {
        match self {
            Op::TestLI { op, slot, imm } | Op::PushLI { op, slot, imm } => {
                Op::InlineLI { op, slot, imm }
            }
            Op::TestLL { op, a, b } => Op::InlineLL { op, a, b },
            Op::Test1L { op, slot } => Op::Inline1L { op, slot },
            Op::Test(op) => Op::Inline(op),
            Op::ReturnLocal(s) => Op::Local(s),
            op => op,
        }
    }
}

/// Whether `fuse` fuses: natively, not in the wasm guest.
pub const FUSED: bool = !cfg!(target_arch = "wasm32");

/// Marks the commonest pairs of instructions in `code` to run in one
/// dispatch: an inline primitive whose value a `JumpIfFalse` tests (the
/// test of an `if`), a primitive on a slot and a small integer whose value
/// is pushed (an argument such as `(- n 1)`), and a frame slot returned.
/// The first of the pair becomes the fused instruction; the second stays
/// in its place, so no instruction moves, a jump to the second still runs
/// it alone, and the fused one, when its fast path does not apply, runs as
/// the first alone (`Op::unfused`), then the second. Dumps hold the pairs
/// unfused, and loading fuses them again.
///
/// Natively only (`FUSED`): in the wasm guest, whose instruction loop
/// Cranelift compiles, the fused instructions' arms made the whole loop
/// slower (`tak` 1.66x; docs/PERFORMANCE.md, "Calls within the loop and
/// fused pairs"), so there the code stays as the compiler wrote it.
pub fn fuse(code: &mut [Op]) {
    if !FUSED {
        return;
    }
    for i in 1..code.len() {
        let fused = match (code[i - 1], code[i]) {
            (Op::InlineLI { op, slot, imm }, Op::JumpIfFalse(_)) => Op::TestLI { op, slot, imm },
            (Op::InlineLL { op, a, b }, Op::JumpIfFalse(_)) => Op::TestLL { op, a, b },
            (Op::Inline1L { op, slot }, Op::JumpIfFalse(_)) => Op::Test1L { op, slot },
            (Op::Inline(op), Op::JumpIfFalse(_)) => Op::Test(op),
            (Op::InlineLI { op, slot, imm }, Op::Push) => Op::PushLI { op, slot, imm },
            (Op::Local(s), Op::Return) => Op::ReturnLocal(s),
            _ => continue,
        };
        code[i - 1] = fused;
    }
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
    pub gc_stamp: Cell<u64>,
}

/// Dropping a template takes no Rust stack on the nesting of its lambdas
/// (code nested 100,000 lambdas deep makes templates as deep): children
/// this template is the last holder of are dropped one by one from a heap
/// stack.
impl Drop for Template {
    fn drop(&mut self) {
        let mut pending = std::mem::take(&mut self.children);
        while let Some(t) = pending.pop() {
            if let Ok(mut t) = Rc::try_unwrap(t) {
                pending.append(&mut t.children);
            }
        }
    }
}

impl Template {
    /// Code of the VM's own (the bottom frame, the frame that restores a
    /// tier): no constants, no parameters, hidden from backtraces.
    pub fn internal(code: Vec<Op>) -> Rc<Template> {
        Rc::new(Template {
            code,
            consts: vec![],
            children: vec![],
            nparams: 0,
            rest: false,
            nfree: 0,
            name: None,
            pos: Pos::NONE,
            positions: vec![],
            internal: true,
            gc_stamp: Cell::new(0),
        })
    }

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

/// A suspended caller: where to continue when the callee returns. The VM
/// keeps these on a vector, and a continuation is a copy of it.
#[derive(Clone)]
pub struct Frame {
    pub template: Rc<Template>,
    pub pc: u32,
    pub fp: u32,
    pub closure: Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_names_are_in_discriminant_order() {
        for (i, (op, name)) in Inline::ALL.iter().enumerate() {
            assert_eq!(*op as usize, i, "{name}");
            assert_eq!(Inline::from_name(name), Some(*op));
            assert_eq!(op.name(), *name);
        }
        assert_eq!(Inline::from_name("vector-set!"), None);
    }

    #[test]
    fn fuse_marks_pairs_in_place_and_unfused_gives_them_back() {
        let lt = Op::InlineLI {
            op: Inline::Lt,
            slot: 0,
            imm: 2,
        };
        let sub = Op::InlineLI {
            op: Inline::Sub,
            slot: 0,
            imm: 1,
        };
        let code = vec![
            lt,
            Op::JumpIfFalse(4),
            Op::Local(0),
            Op::Return,
            sub,
            Op::Push,
            Op::Inline(Inline::Not),
            Op::JumpIfFalse(9),
            sub,
            Op::Local(1),
            Op::Push,
            Op::Return,
        ];
        let mut fused = code.clone();
        fuse(&mut fused);
        let names: Vec<String> = fused.iter().map(|op| format!("{op:?}")).collect();
        let expected = [
            "TestLI { op: Lt, slot: 0, imm: 2 }",
            "JumpIfFalse(4)",
            "ReturnLocal(0)",
            "Return",
            "PushLI { op: Sub, slot: 0, imm: 1 }",
            "Push",
            "Test(Not)",
            "JumpIfFalse(9)",
            // Not followed by its partner: left alone.
            "InlineLI { op: Sub, slot: 0, imm: 1 }",
            "Local(1)",
            "Push",
            "Return",
        ];
        assert_eq!(names, expected);
        let back: Vec<String> = fused
            .iter()
            .map(|op| format!("{:?}", op.unfused()))
            .collect();
        let original: Vec<String> = code.iter().map(|op| format!("{op:?}")).collect();
        assert_eq!(back, original);
    }

    #[test]
    fn frames_stay_small() {
        // A continuation copies every frame: keep them at four words.
        assert!(std::mem::size_of::<Frame>() <= 32);
    }

    #[test]
    fn a_position_is_that_of_the_instruction_before_pc() {
        let mut t = Template::internal(vec![Op::Nil, Op::Call(0), Op::Return]);
        let p = Pos { line: 3, col: 7 };
        Rc::get_mut(&mut t).map(|t| t.positions = vec![(1, p)]);
        assert_eq!(t.position_at(1), None);
        assert_eq!(t.position_at(2), Some(p));
        assert_eq!(t.position_at(3), Some(p));
    }
}
