//! The instruction loop and the inline primitives.

use std::rc::Rc;

use super::{Vm, VmError};
use crate::builtins::{self, type_fault, Fault};
use crate::complex::Number;
use crate::number::{self, Num};
use crate::repo::Tier;
use crate::value::code::{Inline, Op, Template, FUSED};
use crate::value::{Closure, Object, Value};

/// Two-fixnum cases of the inline primitives; `None` on overflow or for
/// operations that are not arithmetic or comparison.
#[inline(always)]
fn fixnum_op(op: Inline, x: i64, y: i64) -> Option<Value> {
    match op {
        Inline::Add => x.checked_add(y).map(Value::Int),
        Inline::Sub => x.checked_sub(y).map(Value::Int),
        Inline::Mul => x.checked_mul(y).map(Value::Int),
        Inline::EqP => Some(Value::Bool(x == y)),
        _ => compared(op, x, y),
    }
}

/// The numeric comparisons among the inline primitives, of two fixnums or
/// two flonums; `None` for the other operations.
#[inline(always)]
fn compared<T: PartialOrd>(op: Inline, x: T, y: T) -> Option<Value> {
    Some(Value::Bool(match op {
        Inline::NumEq => x == y,
        Inline::Lt => x < y,
        Inline::Gt => x > y,
        Inline::Le => x <= y,
        Inline::Ge => x >= y,
        _ => return None,
    }))
}

/// Whether the instruction loop's `cons` (when it ends `run_plain`) takes
/// the heap's inline fast path (`Heap::cons`) or calls `Heap::alloc`.
/// Natively inline. In the guest the call measured faster: `deriv` took
/// 0.91x of the time before both, 0.99x with `cons` inline there, which
/// changed Cranelift's compilation of the whole loop (docs/PERFORMANCE.md,
/// "Pairs and flonums").
const CONS_INLINE: bool = !cfg!(target_arch = "wasm32");

/// Two-flonum cases of the inline primitives' fast path: arithmetic and
/// comparison (a NaN compares false, as `number::compare` has it); `None`
/// for the other operations.
#[inline(always)]
fn flonum_op(op: Inline, x: f64, y: f64) -> Option<Value> {
    match op {
        Inline::Add => Some(Value::Float(x + y)),
        Inline::Sub => Some(Value::Float(x - y)),
        Inline::Mul => Some(Value::Float(x * y)),
        _ => compared(op, x, y),
    }
}

/// Whether the instruction loop's fast path takes two flonums too (else
/// they take the general path, `Vm::inline`). Natively it does. In the
/// guest the larger fast path made Cranelift's loop slower for the
/// programs without flonums (docs/PERFORMANCE.md, "The instruction
/// loop's calls"), and the general path is what flonums take there; its
/// first step (`Vm::inline_general`) makes two flonums' arithmetic and
/// comparison, outside the loop.
const FLONUM_FAST_PATH: bool = !cfg!(target_arch = "wasm32");

/// Whether the instruction loop, after an instruction that called out and
/// left control where it was, takes the template again (`execute`'s outer
/// loop) instead of going on with `run_plain`. In the wasm guest it does,
/// and calls and returns too end `run_plain`'s loop: then none of that
/// loop's values is live across a call (wasm code keeps no register across
/// one), which made the guest 3-4% faster than with the calls made inside
/// the loop (docs/PERFORMANCE.md, "The instruction loop's calls").
/// Natively callee-saved registers keep the loop's values across calls,
/// and going on is faster.
const RELOAD_AFTER_CALLS: bool = cfg!(target_arch = "wasm32");

/// Whether the instruction loop makes the common calls itself, and
/// `Vm::call` only the others: a closure given as many arguments as it
/// takes, and a simple primitive given a number it takes. In the guest it
/// does: `call` is one large function (every kind of procedure, arity
/// errors, rest lists), and entering it costs the guest a frame on its
/// shadow stack in linear memory and the callee stored there
/// (docs/PERFORMANCE.md, "The instruction loop's calls"). Natively
/// `run_plain` enters such a closure itself, and goes on in its loop when
/// the callee runs the same template (a recursive call).
const CALL_FAST_PATHS: bool = cfg!(target_arch = "wasm32");

/// Where a fused test (`Op::TestLI` and the like, `code::fuse`) whose
/// value is `test` goes on from `pc`, the `JumpIfFalse` it was fused with:
/// its target when `test` is false, past it otherwise. (Any other
/// instruction there, only in forged code, runs next.)
#[inline(always)]
fn branch(code: &[Op], pc: usize, test: Value) -> usize {
    match code.get(pc) {
        Some(Op::JumpIfFalse(target)) => {
            if matches!(test, Value::Bool(false)) {
                *target as usize
            } else {
                pc + 1
            }
        }
        _ => pc,
    }
}

/// Pushes `v` when the stack has room for it without growing, so that no
/// call is made; `false` when it has none.
#[inline(always)]
fn push_within_capacity(stack: &mut Vec<Value>, v: Value) -> bool {
    if stack.len() < stack.capacity() {
        stack.push(v);
        true
    } else {
        false
    }
}

impl Vm {
    /// Runs instructions until the evaluation halts.
    ///
    /// Each turn runs the instructions that call nothing (`run_plain`,
    /// where the time goes), then the one that ended them, in full: a
    /// call, a return, an allocation, a raise, the general path of an
    /// inline primitive. That one works on `self.pc` and `self.acc`, and
    /// the next turn takes the template again when control moved to
    /// another one.
    ///
    /// Long by design: one `match` over the instructions that call out,
    /// in the function `run_plain`'s loop is inlined into.
    pub(super) fn execute(&mut self) -> Result<Value, VmError> {
        self.since_poll = 0;
        // The running template, taken again only when control moved to
        // another one: a recursive call or its return keeps it, with no
        // change of its reference count.
        let mut t = self.tmpl.clone();
        loop {
            if !Rc::ptr_eq(&t, &self.tmpl) {
                t = self.tmpl.clone();
            }
            let consts = &t.consts[..];
            loop {
                let Some(op) = self.run_plain(&t, consts)? else {
                    break;
                };
                let (fp, pc) = (self.fp, self.pc);
                // `pc` and `fp` are not used past a call here (in the
                // guest a value live across a call leaves its register).
                // The accumulator is read from `self.acc` where an arm uses
                // it: read here whole, just after `run_plain` wrote it as
                // two words, natively it stalled at every end of that loop
                // (docs/PERFORMANCE.md, "Pairs and flonums"). `stays`:
                // control is where it was, the accumulator in `self.acc`.
                let stays = match op {
                    Op::PushLocal(s) => {
                        let v = Value::by_words(&self.stack[fp + s as usize]);
                        self.stack.push(v);
                        true
                    }
                    Op::PushConst(i) => {
                        self.stack.push(consts[i as usize]);
                        true
                    }
                    Op::Push => {
                        self.stack.push(self.acc);
                        true
                    }
                    Op::SetLocalBox(s) => {
                        let b = self.stack[fp + s as usize];
                        self.set_box(b, self.acc);
                        self.acc = Value::Unspecified;
                        true
                    }
                    Op::BoxLocal(s) => {
                        let i = fp + s as usize;
                        let v = self.stack[i];
                        self.stack[i] = self.heap.alloc(Object::Box(v));
                        true
                    }
                    Op::SetFreeBox(i) => {
                        let b = self.free(i);
                        self.set_box(b, self.acc);
                        self.acc = Value::Unspecified;
                        true
                    }
                    Op::LocalChecked(..)
                    | Op::LocalBoxChecked(..)
                    | Op::FreeChecked(..)
                    | Op::FreeBoxChecked(..) => {
                        let (v, k) = self.checked_variable(op, fp);
                        if matches!(v, Value::Undefined) {
                            let fault = self.used_before_defined(k);
                            self.raise_fault(fault)?;
                            false
                        } else {
                            self.acc = v;
                            true
                        }
                    }
                    Op::Global(g) => {
                        let v = self.globals.values[g as usize];
                        if matches!(v, Value::Undefined) {
                            match self.unbound_global(g, pc, false)? {
                                Some(v) => {
                                    self.acc = v;
                                    true
                                }
                                None => false,
                            }
                        } else {
                            self.acc = v;
                            true
                        }
                    }
                    Op::PushGlobal(g) => {
                        let v = self.globals.values[g as usize];
                        if matches!(v, Value::Undefined) {
                            match self.unbound_global(g, pc, true)? {
                                Some(v) => {
                                    self.stack.push(v);
                                    true
                                }
                                None => false,
                            }
                        } else {
                            self.stack.push(v);
                            true
                        }
                    }
                    Op::SetGlobal(g) => {
                        if matches!(self.globals.values[g as usize], Value::Undefined) {
                            let fault = self.unbound(g, "set!: ");
                            self.raise_fault(fault)?;
                            false
                        } else {
                            self.set_global_to_acc(g);
                            self.acc = Value::Unspecified;
                            true
                        }
                    }
                    Op::DefineGlobal(g) => {
                        self.set_global_to_acc(g);
                        self.acc = Value::Unspecified;
                        true
                    }
                    Op::MakeClosure(c) => {
                        self.make_closure(&t, c);
                        true
                    }
                    Op::PatchFree {
                        closure,
                        free,
                        value,
                    } => {
                        self.patch_free(fp, closure, free, value);
                        true
                    }
                    Op::MakeCaseLambda(n) => {
                        self.make_case_lambda(n);
                        true
                    }
                    Op::Call(n) => {
                        self.count_step()?;
                        self.call_op(n as usize, false)?;
                        false
                    }
                    Op::TailCall(n) => {
                        self.count_step()?;
                        self.call_op(n as usize, true)?;
                        false
                    }
                    Op::Return => {
                        self.do_return();
                        false
                    }
                    Op::Inline(iop) => {
                        if iop.arity() == 2 {
                            let len = self.stack.len();
                            let x = self.stack[len - 1];
                            self.stack.truncate(len - 1);
                            self.inline_pair_acc(iop, x)?
                        } else {
                            self.inline_general(iop)?
                        }
                    }
                    Op::InlineLI { op: iop, slot, imm } => {
                        let x = self.stack[fp + slot as usize];
                        self.inline_pair(iop, x, Value::Int(imm as i64))?
                    }
                    Op::InlineLL { op: iop, a, b } => {
                        let x = self.stack[fp + a as usize];
                        let y = self.stack[fp + b as usize];
                        self.inline_pair(iop, x, y)?
                    }
                    Op::Inline1L { op: iop, slot } => {
                        self.acc = self.stack[fp + slot as usize];
                        self.inline_general(iop)?
                    }
                    Op::Halt => return Ok(self.acc),
                    Op::RestoreTier => {
                        self.restore_tier_from_frame();
                        true
                    }
                    // The inner loop ran these to the end.
                    Op::Const(_)
                    | Op::Fixnum(_)
                    | Op::Nil
                    | Op::True
                    | Op::False
                    | Op::Unspecified
                    | Op::Local(_)
                    | Op::SetLocal(_)
                    | Op::LocalBox(_)
                    | Op::Free(_)
                    | Op::FreeBox(_)
                    | Op::Drop(_)
                    | Op::Jump(_)
                    | Op::JumpIfFalse(_)
                    // Made natively only, where the inner loop runs them.
                    | Op::TestLI { .. }
                    | Op::TestLL { .. }
                    | Op::Test1L { .. }
                    | Op::Test(_)
                    | Op::PushLI { .. }
                    | Op::ReturnLocal(_) => true,
                };
                if !stays || RELOAD_AFTER_CALLS {
                    break;
                }
            }
        }
    }

    /// Runs the instructions that call nothing (constants, frame slots,
    /// jumps, the fast paths of the inline primitives, pushes within the
    /// stack's capacity) from `self.pc`, with the accumulator in a local;
    /// returns the first other instruction (or one whose fast path does not
    /// apply), `self.pc` past it and `self.acc` up to date. Natively it
    /// also makes calls and returns (`None`: control moved to another
    /// template), which saves a second dispatch on them
    /// (`RELOAD_AFTER_CALLS`); a call of a closure of the running template,
    /// or a return to it, goes on in the loop with the code at hand.
    ///
    /// Inlined into `execute`: as a function of its own it was slower in
    /// the guest (docs/PERFORMANCE.md, "The instruction loop's calls").
    // Long by design: one arm per instruction it runs, in one loop.
    #[inline(always)]
    fn run_plain(&mut self, t: &Rc<Template>, consts: &[Value]) -> Result<Option<Op>, VmError> {
        let code = &t.code[..];
        let mut fp = self.fp;
        let mut pc = self.pc;
        let mut acc = self.acc;
        let op = loop {
            // Matched in place, not copied: each arm reads the fields it
            // uses. A copy had all of them read before the jump and kept
            // past it, which in the guest put two more in stack slots at
            // every instruction (docs/PERFORMANCE.md, "Fewer values across
            // the guest's dispatch").
            let op = &code[pc];
            pc += 1;
            match *op {
                Op::Const(i) => acc = consts[i as usize],
                Op::Fixnum(i) => acc = Value::Int(i as i64),
                Op::Nil => acc = Value::Null,
                Op::True => acc = Value::Bool(true),
                Op::False => acc = Value::Bool(false),
                Op::Unspecified => acc = Value::Unspecified,
                Op::Local(s) => acc = self.stack[fp + s as usize],
                Op::PushLocal(s) => {
                    // By words: often the value was pushed just before (a
                    // `let`'s variable, then an argument).
                    let v = Value::by_words(&self.stack[fp + s as usize]);
                    if !push_within_capacity(&mut self.stack, v) {
                        break *op;
                    }
                }
                Op::PushConst(i) => {
                    if !push_within_capacity(&mut self.stack, consts[i as usize]) {
                        break *op;
                    }
                }
                Op::Push => {
                    if !push_within_capacity(&mut self.stack, acc) {
                        break *op;
                    }
                }
                Op::SetLocal(s) => {
                    self.stack[fp + s as usize] = acc;
                    acc = Value::Unspecified;
                }
                Op::LocalBox(s) => acc = self.unbox(self.stack[fp + s as usize]),
                Op::Free(i) => acc = self.free(i),
                Op::FreeBox(i) => {
                    let b = self.free(i);
                    acc = self.unbox(b);
                }
                Op::LocalChecked(..)
                | Op::LocalBoxChecked(..)
                | Op::FreeChecked(..)
                | Op::FreeBoxChecked(..) => {
                    let (v, _) = self.checked_variable(*op, fp);
                    if matches!(v, Value::Undefined) {
                        break *op;
                    }
                    acc = v;
                }
                Op::Global(g) => {
                    let v = self.globals.values[g as usize];
                    if matches!(v, Value::Undefined) {
                        break *op;
                    }
                    acc = v;
                }
                Op::PushGlobal(g) => {
                    let v = self.globals.values[g as usize];
                    if matches!(v, Value::Undefined) || !push_within_capacity(&mut self.stack, v) {
                        break *op;
                    }
                }
                Op::Drop(n) => {
                    let len = self.stack.len() - n as usize;
                    self.stack.truncate(len);
                }
                Op::Jump(target) => pc = target as usize,
                Op::JumpIfFalse(target) => {
                    if matches!(acc, Value::Bool(false)) {
                        pc = target as usize;
                    }
                }
                Op::Inline(iop) => {
                    if iop.arity() == 2 {
                        let len = self.stack.len();
                        match self.inline2_pure(iop, self.stack[len - 1], acc) {
                            Some(r) => {
                                self.stack.truncate(len - 1);
                                acc = r;
                            }
                            None => break *op,
                        }
                    } else {
                        match self.inline1_fast(iop, acc) {
                            Some(r) => acc = r,
                            None => break *op,
                        }
                    }
                }
                Op::InlineLI { op: iop, slot, imm } => {
                    match self.inline_li(iop, self.stack[fp + slot as usize], imm) {
                        Some(r) => acc = r,
                        None => break *op,
                    }
                }
                // The fused pairs (`code::fuse`, natively only): when the
                // fast path does not apply, the first runs alone, then the
                // second.
                Op::TestLI { op: iop, slot, imm } if FUSED => {
                    match self.inline_li(iop, self.stack[fp + slot as usize], imm) {
                        Some(r) => {
                            acc = r;
                            pc = branch(code, pc, r);
                        }
                        None => break op.unfused(),
                    }
                }
                Op::TestLL { op: iop, a, b } if FUSED => {
                    let x = self.stack[fp + a as usize];
                    let y = self.stack[fp + b as usize];
                    match self.inline2_pure(iop, x, y) {
                        Some(r) => {
                            acc = r;
                            pc = branch(code, pc, r);
                        }
                        None => break op.unfused(),
                    }
                }
                Op::Test1L { op: iop, slot } if FUSED => {
                    match self.inline1_fast(iop, self.stack[fp + slot as usize]) {
                        Some(r) => {
                            acc = r;
                            pc = branch(code, pc, r);
                        }
                        None => break op.unfused(),
                    }
                }
                Op::Test(iop) if FUSED => {
                    let r = if iop.arity() == 2 {
                        let len = self.stack.len();
                        let r = self.inline2_pure(iop, self.stack[len - 1], acc);
                        if r.is_some() {
                            self.stack.truncate(len - 1);
                        }
                        r
                    } else {
                        self.inline1_fast(iop, acc)
                    };
                    match r {
                        Some(r) => {
                            acc = r;
                            pc = branch(code, pc, r);
                        }
                        None => break op.unfused(),
                    }
                }
                Op::PushLI { op: iop, slot, imm } if FUSED => {
                    match self.inline_li(iop, self.stack[fp + slot as usize], imm) {
                        Some(r) => {
                            acc = r;
                            if matches!(code.get(pc), Some(Op::Push))
                                && push_within_capacity(&mut self.stack, r)
                            {
                                pc += 1;
                            }
                        }
                        None => break op.unfused(),
                    }
                }
                Op::ReturnLocal(s) if FUSED => {
                    acc = self.stack[fp + s as usize];
                    if !RELOAD_AFTER_CALLS && matches!(code.get(pc), Some(Op::Return)) {
                        self.acc = acc;
                        if !self.return_in_loop(t) {
                            return Ok(None);
                        }
                        pc = self.pc;
                        fp = self.fp;
                    }
                }
                Op::InlineLL { op: iop, a, b } => {
                    let x = self.stack[fp + a as usize];
                    let y = self.stack[fp + b as usize];
                    match self.inline2_pure(iop, x, y) {
                        Some(r) => acc = r,
                        None => break *op,
                    }
                }
                Op::Inline1L { op: iop, slot } => {
                    let x = self.stack[fp + slot as usize];
                    match self.inline1_fast(iop, x) {
                        Some(r) => acc = r,
                        None => break *op,
                    }
                }
                // Natively calls and returns are made here, which
                // saves a second dispatch on them; in the guest they
                // end this loop like any other call.
                Op::Call(n) | Op::TailCall(n) if !RELOAD_AFTER_CALLS => {
                    self.pc = pc;
                    self.acc = acc;
                    self.count_step()?;
                    let tail = matches!(*op, Op::TailCall(_));
                    if self.enter_closure_exact(n as usize, tail) {
                        if !Rc::ptr_eq(&self.tmpl, t) {
                            return Ok(None);
                        }
                        // A call of the running template (recursion): its
                        // code and constants are the ones at hand.
                        pc = 0;
                        fp = self.fp;
                    } else {
                        self.call_other(n as usize, tail)?;
                        return Ok(None);
                    }
                }
                Op::Return if !RELOAD_AFTER_CALLS => {
                    self.acc = acc;
                    if !self.return_in_loop(t) {
                        return Ok(None);
                    }
                    pc = self.pc;
                    fp = self.fp;
                }
                _ => break *op,
            }
        };
        self.pc = pc;
        self.acc = acc;
        Ok(Some(op))
    }

    /// A return, the accumulator in `self.acc`: `true` when control went
    /// back to template `t`, the one running (natively, in `run_plain`).
    #[inline(always)]
    fn return_in_loop(&mut self, t: &Rc<Template>) -> bool {
        self.do_return();
        Rc::ptr_eq(&self.tmpl, t)
    }

    /// The fast path of `Op::InlineLI` (fixnum arithmetic and comparison
    /// of frame slot value `x` and `imm`); `None`: take the general path.
    #[inline(always)]
    fn inline_li(&self, iop: Inline, x: Value, imm: i32) -> Option<Value> {
        match x {
            Value::Int(a) if self.inline_intact(iop) => fixnum_op(iop, a, imm as i64),
            _ => None,
        }
    }

    /// `Op::Call` and `Op::TailCall` of `n` arguments (`CALL_FAST_PATHS`).
    #[inline(always)]
    fn call_op(&mut self, n: usize, tail: bool) -> Result<(), VmError> {
        if CALL_FAST_PATHS {
            if self.enter_closure_exact(n, tail) {
                return Ok(());
            }
            return self.call_other(n, tail);
        }
        self.call(n, tail)
    }

    /// A call of `n` arguments whose callee is not a closure given as
    /// many as it takes: a simple primitive given a number it takes is
    /// called through `call_simple`, anything else through `call` (a large
    /// function, dear to enter for a primitive's call).
    #[inline(always)]
    fn call_other(&mut self, n: usize, tail: bool) -> Result<(), VmError> {
        if let Some(callee_idx) = self.stack.len().checked_sub(n + 1) {
            if let Value::Prim(id) = self.stack[callee_idx] {
                if let Some(func) = self.simple_primitive(id, n) {
                    return self.call_simple_by(func, callee_idx, tail);
                }
            }
        }
        self.call(n, tail)
    }

    /// Whether inline operation `iop` may take its fast path: its global
    /// still holds the original primitive, or the code running is the
    /// engine's own, which means the engine's primitive whatever a program
    /// defined (docs/ARCHITECTURE.md, "A program's definitions never
    /// change the engine's procedures"). The guard is read first: it
    /// holds in all but programs that redefine a primitive.
    #[inline(always)]
    fn inline_intact(&self, iop: Inline) -> bool {
        self.inline.ok & (1 << iop as u32) != 0 || self.tmpl.internal
    }

    /// The fast path of a binary inline operation whose guard holds, other
    /// than `cons`: `eq?`, and fixnum arithmetic and comparison (natively
    /// flonum ones too, `FLONUM_FAST_PATH`). `None`: take the general path.
    #[inline(always)]
    fn inline2_pure(&self, iop: Inline, x: Value, y: Value) -> Option<Value> {
        if !self.inline_intact(iop) {
            return None;
        }
        match (iop, x, y) {
            (Inline::EqP, _, _) => Some(Value::Bool(x.eq(y))),
            (_, Value::Int(p), Value::Int(q)) => fixnum_op(iop, p, q),
            (_, Value::Float(p), Value::Float(q)) if FLONUM_FAST_PATH => flonum_op(iop, p, q),
            _ => None,
        }
    }

    /// A binary inline operation on `x` and `y` whose pure fast path did
    /// not apply: `cons`, or the general path with `x` pushed and `y` in
    /// `self.acc`. `true`: its value is in `self.acc`; `false`: control
    /// moved.
    fn inline_pair(&mut self, iop: Inline, x: Value, y: Value) -> Result<bool, VmError> {
        if iop == Inline::Cons && self.inline_intact(iop) {
            // The pair's slot, not a `Value`: where `cons_ref` is not
            // inlined its `Ref` comes back in a register.
            self.acc = Value::Obj(if CONS_INLINE {
                self.heap.cons_ref(x, y)
            } else {
                self.heap.alloc_ref(Object::Pair(x, y))
            });
            return Ok(true);
        }
        self.stack.push(x);
        self.acc = y;
        self.inline_general(iop)
    }

    /// `inline_pair` of `x` and the accumulator. A `cons` onto a pair (a
    /// list being built, as `map` does) reads the accumulator's tag and
    /// slot, not the value whole: `run_plain` has just written it as two
    /// words, and reading it back as one 16-byte load stalled
    /// (docs/PERFORMANCE.md, "Pairs by slot"). In the guest, as before.
    #[inline(always)]
    fn inline_pair_acc(&mut self, iop: Inline, x: Value) -> Result<bool, VmError> {
        if CONS_INLINE && iop == Inline::Cons {
            if let Value::Obj(d) = self.acc {
                if self.inline_intact(iop) {
                    self.acc = Value::Obj(self.heap.cons_onto(x, d));
                    return Ok(true);
                }
            }
        }
        self.inline_pair(iop, x, self.acc)
    }

    /// The fast path of a unary inline operation whose guard holds: the
    /// list predicates and accessors, `not`, `zero?` of a fixnum.
    #[inline(always)]
    fn inline1_fast(&self, iop: Inline, x: Value) -> Option<Value> {
        if !self.inline_intact(iop) {
            return None;
        }
        match (iop, x) {
            (Inline::NullP, _) => Some(Value::Bool(matches!(x, Value::Null))),
            (Inline::Not, _) => Some(Value::Bool(matches!(x, Value::Bool(false)))),
            (Inline::ZeroP, Value::Int(i)) => Some(Value::Bool(i == 0)),
            (Inline::Car | Inline::Cdr | Inline::PairP, Value::Obj(r)) => match self.heap.get(r) {
                Object::Pair(a, d) => Some(match iop {
                    Inline::Car => *a,
                    Inline::Cdr => *d,
                    _ => Value::Bool(true),
                }),
                _ => None,
            },
            // Not an object: no pair (`deriv`'s `(pair? a)` of a symbol
            // took the general path).
            (Inline::PairP, _) => Some(Value::Bool(false)),
            _ => None,
        }
    }

    /// The value of a checked variable reference (one that may run before
    /// its `letrec` initialisation) and the constant naming it for errors.
    #[inline(always)]
    fn checked_variable(&self, op: Op, fp: usize) -> (Value, u32) {
        match op {
            Op::LocalChecked(s, k) => (self.stack[fp + s as usize], k),
            Op::LocalBoxChecked(s, k) => (self.unbox(self.stack[fp + s as usize]), k),
            Op::FreeChecked(i, k) => (self.free(i), k),
            Op::FreeBoxChecked(i, k) => (self.unbox(self.free(i)), k),
            _ => (Value::Unspecified, 0),
        }
    }

    /// `set!` or `define` of a global to the value in `self.acc`: saved
    /// for a rollback first, and the inline guards checked again when it
    /// names an inlined primitive.
    ///
    /// This and the other methods the instruction loop calls take and give
    /// values through `self.acc`, never the loop's `acc`: a value of 16
    /// bytes is passed by address in wasm32, and an address taken of the
    /// loop's `acc` keeps it in memory for the whole loop.
    fn set_global_to_acc(&mut self, g: u32) {
        self.save_global(g);
        self.globals.values[g as usize] = self.acc;
        self.note_global_write(g);
    }

    /// A closure of child template `c` of `t`, its free values popped off
    /// the stack, into `self.acc`.
    fn make_closure(&mut self, t: &Template, c: u32) {
        let child = t.children[c as usize].clone();
        let start = self.stack.len() - child.nfree as usize;
        let free: Box<[Value]> = self.stack[start..].into();
        self.stack.truncate(start);
        self.acc = self.heap.alloc(Object::Closure(Closure {
            template: child,
            free,
        }));
    }

    /// A `case-lambda` of the top `n` values of the stack, popped, into
    /// `self.acc`.
    fn make_case_lambda(&mut self, n: u16) {
        let start = self.stack.len() - n as usize;
        let cs = self.stack[start..].to_vec();
        self.stack.truncate(start);
        self.acc = self.heap.alloc(Object::CaseLambda(cs));
    }

    /// Sets free slot `free` of the closure in frame slot `closure` to
    /// frame slot `value` (closures of one `letrec` that refer to each
    /// other).
    fn patch_free(&mut self, fp: usize, closure: u16, free: u16, value: u16) {
        let c = self.stack[fp + closure as usize];
        let v = self.stack[fp + value as usize];
        if let Some(Object::Closure(cl)) = self.heap.obj_mut(c) {
            if let Some(slot) = cl.free.get_mut(free as usize) {
                *slot = v;
            }
        }
    }

    /// The frame `%arb:eval-at-tier` left below the code it ran holds the
    /// tier to return to in its closure slot.
    fn restore_tier_from_frame(&mut self) {
        if let Value::Int(i) = self.closure {
            if let Some(t) = u8::try_from(i).ok().and_then(Tier::from_level) {
                // Never more rights than the session has (a loaded frame
                // could claim any tier).
                self.tier = t.max(self.session_tier);
            }
        }
    }

    /// The operands of an inline primitive are in place (first on the stack,
    /// last in `self.acc`, `self.pc` past the instruction) but the fast
    /// path did not apply: run the primitive in full, its value into
    /// `self.acc` (`true`), or call whatever the name now holds or raise
    /// (`false`: control moved).
    pub(super) fn inline_general(&mut self, iop: Inline) -> Result<bool, VmError> {
        let acc = self.acc;
        if !FLONUM_FAST_PATH {
            // In the guest two flonums take this path (`FLONUM_FAST_PATH`):
            // their arithmetic and comparison are made here, before
            // `inline`'s whole match (docs/PERFORMANCE.md, "Flonums past
            // the guest's loop").
            if let (Value::Float(q), Some(&Value::Float(p))) = (acc, self.stack.last()) {
                if iop.arity() == 2 && self.inline_intact(iop) {
                    if let Some(r) = flonum_op(iop, p, q) {
                        self.stack.pop();
                        self.acc = r;
                        return Ok(true);
                    }
                }
            }
        }
        if self.inline_intact(iop) {
            return match self.inline(iop) {
                Ok(()) => Ok(true),
                Err(f) => {
                    let f = self.as_called(f, None);
                    self.raise_fault(f)?;
                    Ok(false)
                }
            };
        }
        let n = iop.arity();
        let current = self.globals.values[self.inline.globals[iop as usize] as usize];
        self.stack.push(acc);
        let at = self.stack.len() - n;
        self.stack.insert(at, current);
        self.count_step()?;
        self.call(n, false)?;
        Ok(false)
    }

    #[inline]
    pub(super) fn note_global_write(&mut self, g: u32) {
        if self.inline.globals.contains(&g) {
            self.refresh_inline();
        }
    }

    /// Recomputes which inline primitives still have their original global.
    pub(super) fn refresh_inline(&mut self) {
        let mut ok = 0u32;
        for (k, (&g, &p)) in self
            .inline
            .globals
            .iter()
            .zip(self.inline.prims.iter())
            .enumerate()
        {
            if matches!(self.globals.values.get(g as usize), Some(Value::Prim(q)) if *q == p) {
                ok |= 1 << k;
            }
        }
        self.inline.ok = ok;
    }

    #[inline]
    pub(super) fn free(&self, i: u16) -> Value {
        match self.heap.obj(self.closure) {
            // A closure of another template (only in forged dumps) has
            // no such slot: undefined, not a panic.
            Some(Object::Closure(c)) => c.free.get(i as usize).copied().unwrap_or(Value::Undefined),
            _ => Value::Undefined,
        }
    }

    #[inline]
    pub(super) fn unbox(&self, b: Value) -> Value {
        match self.heap.obj(b) {
            Some(Object::Box(v)) => *v,
            _ => Value::Undefined,
        }
    }

    #[inline]
    pub(super) fn set_box(&mut self, b: Value, v: Value) {
        if let Some(Object::Box(slot)) = self.heap.obj_mut(b) {
            *slot = v;
        }
    }

    /// Inline primitives; the second operand is in `acc`, the first on the stack.
    #[inline]
    pub(super) fn inline(&mut self, op: Inline) -> Result<(), Fault> {
        let b = self.acc;
        match op {
            Inline::Car | Inline::Cdr => {
                match self.heap.pair(b) {
                    Some((a, d)) => self.acc = if op == Inline::Car { a } else { d },
                    None => {
                        return Err(type_fault(op.name(), "a pair", b, &self.heap, &self.syms));
                    }
                }
                return Ok(());
            }
            Inline::NullP => {
                self.acc = Value::Bool(matches!(b, Value::Null));
                return Ok(());
            }
            Inline::PairP => {
                self.acc = Value::Bool(self.heap.pair(b).is_some());
                return Ok(());
            }
            Inline::Not => {
                self.acc = Value::Bool(matches!(b, Value::Bool(false)));
                return Ok(());
            }
            Inline::ZeroP => {
                self.acc = match b {
                    Value::Int(i) => Value::Bool(i == 0),
                    Value::Float(f) => Value::Bool(f == 0.0),
                    _ => match Number::from_value(&self.heap, b) {
                        Some(n) => Value::Bool(n.is_zero()),
                        None => {
                            return Err(type_fault("zero?", "a number", b, &self.heap, &self.syms))
                        }
                    },
                };
                return Ok(());
            }
            _ => {}
        }
        let a = self.stack.pop().unwrap_or(Value::Unspecified);
        self.acc = match (op, a, b) {
            (Inline::Add, Value::Int(x), Value::Int(y)) => match x.checked_add(y) {
                Some(z) => Value::Int(z),
                None => self.arith_slow(op, a, b)?,
            },
            (Inline::Sub, Value::Int(x), Value::Int(y)) => match x.checked_sub(y) {
                Some(z) => Value::Int(z),
                None => self.arith_slow(op, a, b)?,
            },
            (Inline::Mul, Value::Int(x), Value::Int(y)) => match x.checked_mul(y) {
                Some(z) => Value::Int(z),
                None => self.arith_slow(op, a, b)?,
            },
            (Inline::Add, Value::Float(x), Value::Float(y)) => Value::Float(x + y),
            (Inline::Sub, Value::Float(x), Value::Float(y)) => Value::Float(x - y),
            (Inline::Mul, Value::Float(x), Value::Float(y)) => Value::Float(x * y),
            // A flonum and a fixnum: the fixnum as a flonum, as `arith_slow`
            // does.
            (Inline::Add, Value::Float(x), Value::Int(y)) => Value::Float(x + y as f64),
            (Inline::Add, Value::Int(x), Value::Float(y)) => Value::Float(x as f64 + y),
            (Inline::Sub, Value::Float(x), Value::Int(y)) => Value::Float(x - y as f64),
            (Inline::Sub, Value::Int(x), Value::Float(y)) => Value::Float(x as f64 - y),
            (Inline::Mul, Value::Float(x), Value::Int(y)) => Value::Float(x * y as f64),
            (Inline::Mul, Value::Int(x), Value::Float(y)) => Value::Float(x as f64 * y),
            // Two flonums compare as `number::compare` does (a NaN: false).
            (Inline::NumEq, Value::Float(x), Value::Float(y)) => Value::Bool(x == y),
            (Inline::Lt, Value::Float(x), Value::Float(y)) => Value::Bool(x < y),
            (Inline::Gt, Value::Float(x), Value::Float(y)) => Value::Bool(x > y),
            (Inline::Le, Value::Float(x), Value::Float(y)) => Value::Bool(x <= y),
            (Inline::Ge, Value::Float(x), Value::Float(y)) => Value::Bool(x >= y),
            (Inline::NumEq, Value::Int(x), Value::Int(y)) => Value::Bool(x == y),
            (Inline::Lt, Value::Int(x), Value::Int(y)) => Value::Bool(x < y),
            (Inline::Gt, Value::Int(x), Value::Int(y)) => Value::Bool(x > y),
            (Inline::Le, Value::Int(x), Value::Int(y)) => Value::Bool(x <= y),
            (Inline::Ge, Value::Int(x), Value::Int(y)) => Value::Bool(x >= y),
            (Inline::EqP, _, _) => Value::Bool(a.eq(b)),
            (Inline::Cons, _, _) => self.heap.cons(a, b),
            (Inline::VectorRef, _, _) => match (self.heap.obj(a), b) {
                (Some(Object::Vector(v)), Value::Int(i)) => {
                    match usize::try_from(i).ok().and_then(|i| v.get(i)) {
                        Some(x) => *x,
                        None => {
                            let msg = format!(
                                "vector-ref: index {i} out of range for a vector of length {}",
                                v.len()
                            );
                            return Err(Fault::Error(msg, vec![]));
                        }
                    }
                }
                (Some(Object::Vector(_)), _) => {
                    return Err(type_fault(
                        "vector-ref",
                        "an exact integer index",
                        b,
                        &self.heap,
                        &self.syms,
                    ))
                }
                _ => {
                    return Err(type_fault(
                        "vector-ref",
                        "a vector",
                        a,
                        &self.heap,
                        &self.syms,
                    ))
                }
            },
            _ => self.arith_slow(op, a, b)?,
        };
        Ok(())
    }

    pub(super) fn arith_slow(&mut self, op: Inline, a: Value, b: Value) -> Result<Value, Fault> {
        let name = op.name();
        if let Some(v) = self.complex_arith(name, a, b)? {
            return Ok(v);
        }
        let x = Num::from_value(&self.heap, a)
            .ok_or_else(|| type_fault(name, "a number", a, &self.heap, &self.syms))?;
        let y = Num::from_value(&self.heap, b)
            .ok_or_else(|| type_fault(name, "a number", b, &self.heap, &self.syms))?;
        let mut budget = self.budget();
        budget.charge(x.limbs() + y.limbs())?;
        let cmp = |o: Option<std::cmp::Ordering>, f: fn(std::cmp::Ordering) -> bool| {
            Value::Bool(o.is_some_and(f))
        };
        let w = &mut budget;
        let n = match op {
            Inline::Add => number::add(&x, &y, w)?,
            Inline::Sub => number::sub(&x, &y, w)?,
            Inline::Mul => number::mul(&x, &y, w)?,
            Inline::NumEq => return Ok(cmp(number::compare(&x, &y, w)?, |o| o.is_eq())),
            Inline::Lt => return Ok(cmp(number::compare(&x, &y, w)?, |o| o.is_lt())),
            Inline::Gt => return Ok(cmp(number::compare(&x, &y, w)?, |o| o.is_gt())),
            Inline::Le => return Ok(cmp(number::compare(&x, &y, w)?, |o| o.is_le())),
            Inline::Ge => return Ok(cmp(number::compare(&x, &y, w)?, |o| o.is_ge())),
            _ => return Ok(Value::Unspecified),
        };
        Ok(n.into_value(&mut self.heap))
    }

    /// `arith_slow` when an operand is not real.
    fn complex_arith(&mut self, name: &str, a: Value, b: Value) -> Result<Option<Value>, Fault> {
        let (Some(x), Some(y)) = (
            Number::from_value(&self.heap, a),
            Number::from_value(&self.heap, b),
        ) else {
            return Ok(None);
        };
        if matches!((&x, &y), (Number::Real(_), Number::Real(_))) {
            return Ok(None);
        }
        let result = builtins::complex_binary(name, &x, &y, &mut self.budget())?;
        Ok(Some(match result {
            builtins::ComplexBinary::Number(n) => n.into_value(&mut self.heap),
            builtins::ComplexBinary::Truth(t) => Value::Bool(t),
        }))
    }
}
