//! Code generation: [`Expr`] to [`Template`]s.
//!
//! Locals live in the frame at fixed slots (the compiler tracks the stack
//! depth at every point). Closures are flat: a lambda's free variables are
//! copied into the closure when it is created. A variable that is both
//! captured and assigned lives in a box shared by everyone who sees it; a
//! letrec-bound lambda is never boxed: its closure is patched after the group
//! is created (`PatchFree`).

use std::cell::Cell;
use std::rc::Rc;

use reblessive::Stk;

use super::ast::{Expr, LambdaExpr, VarInfo};
use crate::pos::Pos;
use crate::symbol::Sym;
use crate::syntax::scope::VarId;
use crate::value::code::{fuse, Inline, Op, Template};
use crate::value::Value;

struct FnState {
    lambda: u32,
    code: Vec<Op>,
    consts: Vec<Value>,
    children: Vec<Rc<Template>>,
    positions: Vec<(u32, Pos)>,
    free: Vec<VarId>,
    /// Values on the frame's stack here: locals and pending operands (a
    /// local's slot must fit in a u16, pending operands need not).
    depth: u32,
}

pub struct Gen<'a> {
    vars: &'a [VarInfo],
    slot: Vec<u16>,
    fns: Vec<FnState>,
    internal: bool,
}

#[derive(Debug)]
pub struct TooManyLocals;

type R<T> = Result<T, TooManyLocals>;

impl<'a> Gen<'a> {
    pub fn new(vars: &'a [VarInfo], internal: bool) -> Self {
        Gen {
            vars,
            slot: vec![0; vars.len()],
            fns: Vec::new(),
            internal,
        }
    }

    /// Compiles a top-level expression into a template taking no arguments.
    /// The walk recurses on the nesting of the code on the heap stack
    /// `stk` (reblessive), not the Rust stack.
    pub async fn toplevel(mut self, stk: &mut Stk, e: &Expr, pos: Pos) -> R<Rc<Template>> {
        self.fns.push(FnState::new(0));
        // Not a tail position: the form's own frame stays, so an error raised
        // by its last call still points at the form.
        self.expr(stk, e, false).await?;
        self.emit(Op::Return);
        let f = self
            .fns
            .pop()
            .expect("a function is being compiled: pushed on entry, popped on exit");
        let _ = pos;
        Ok(Rc::new(f.finish(0, false, None, Pos::NONE, self.internal)))
    }

    fn f(&mut self) -> &mut FnState {
        self.fns
            .last_mut()
            .expect("a function is being compiled: pushed on entry, popped on exit")
    }

    fn emit(&mut self, op: Op) {
        self.f().code.push(op);
    }

    fn here(&mut self) -> usize {
        self.f().code.len()
    }

    fn mark(&mut self, pos: Pos) {
        if pos.is_known() {
            let pc = self.here() as u32;
            self.f().positions.push((pc, pos));
        }
    }

    fn konst(&mut self, v: Value) -> u32 {
        let f = self.f();
        f.consts.push(v);
        (f.consts.len() - 1) as u32
    }

    fn push(&mut self) -> R<()> {
        self.emit(Op::Push);
        self.grow(1)
    }

    fn grow(&mut self, n: u16) -> R<()> {
        let f = self.f();
        f.depth = f.depth.checked_add(u32::from(n)).ok_or(TooManyLocals)?;
        Ok(())
    }

    fn shrink(&mut self, n: u16) {
        let f = self.f();
        f.depth -= u32::from(n);
    }

    /// The slot the next pushed value takes, for a local.
    fn next_slot(&mut self) -> R<u16> {
        u16::try_from(self.f().depth).map_err(|_| TooManyLocals)
    }

    fn load_const(&mut self, v: Value) {
        let op = match v {
            Value::Int(i) if i >= i32::MIN as i64 && i <= i32::MAX as i64 => Op::Fixnum(i as i32),
            Value::Null => Op::Nil,
            Value::Bool(true) => Op::True,
            Value::Bool(false) => Op::False,
            Value::Unspecified => Op::Unspecified,
            _ => Op::Const(self.konst(v)),
        };
        self.emit(op);
    }

    /// Where variable `v` is, seen from the current function.
    fn locate(&mut self, v: VarId) -> Loc {
        let info = &self.vars[v as usize];
        let f = self
            .fns
            .last_mut()
            .expect("a function is being compiled: pushed on entry, popped on exit");
        if info.lambda == f.lambda {
            Loc::Local(self.slot[v as usize])
        } else {
            match f.free.iter().position(|&x| x == v) {
                Some(i) => Loc::Free(i as u16),
                None => {
                    f.free.push(v);
                    Loc::Free((f.free.len() - 1) as u16)
                }
            }
        }
    }

    fn load_var(&mut self, v: VarId, pos: Pos) {
        let info = &self.vars[v as usize];
        let (boxed, checked) = (info.boxed(), info.letrec);
        let name = info.name;
        let loc = self.locate(v);
        if checked {
            self.mark(pos);
            let k = self.konst(Value::Sym(name));
            self.emit(match (loc, boxed) {
                (Loc::Local(s), false) => Op::LocalChecked(s, k),
                (Loc::Local(s), true) => Op::LocalBoxChecked(s, k),
                (Loc::Free(i), false) => Op::FreeChecked(i, k),
                (Loc::Free(i), true) => Op::FreeBoxChecked(i, k),
            });
        } else {
            self.emit(match (loc, boxed) {
                (Loc::Local(s), false) => Op::Local(s),
                (Loc::Local(s), true) => Op::LocalBox(s),
                (Loc::Free(i), false) => Op::Free(i),
                (Loc::Free(i), true) => Op::FreeBox(i),
            });
        }
    }

    /// Loads the variable's storage itself (the box, if boxed), for capture.
    fn load_raw(&mut self, v: VarId) {
        let op = match self.locate(v) {
            Loc::Local(s) => Op::Local(s),
            Loc::Free(i) => Op::Free(i),
        };
        self.emit(op);
    }

    fn ret(&mut self, tail: bool) {
        if tail {
            self.emit(Op::Return);
        }
    }

    /// One expression, one level deeper, on the heap stack.
    async fn expr(&mut self, stk: &mut Stk, e: &Expr, tail: bool) -> R<()> {
        stk.run(|stk| self.expr_inner(stk, e, tail)).await
    }

    async fn expr_inner(&mut self, stk: &mut Stk, e: &Expr, tail: bool) -> R<()> {
        match e {
            Expr::Const(v) => {
                self.load_const(*v);
                self.ret(tail);
            }
            Expr::Local(v, pos) => {
                self.load_var(*v, *pos);
                self.ret(tail);
            }
            Expr::Global(g, pos) => {
                self.mark(*pos);
                self.emit(Op::Global(*g));
                self.ret(tail);
            }
            Expr::SetLocal(v, value) => {
                self.expr(stk, value, false).await?;
                let boxed = self.vars[*v as usize].boxed();
                let op = match (self.locate(*v), boxed) {
                    (Loc::Local(s), false) => Op::SetLocal(s),
                    (Loc::Local(s), true) => Op::SetLocalBox(s),
                    (Loc::Free(i), _) => Op::SetFreeBox(i),
                };
                self.emit(op);
                self.ret(tail);
            }
            Expr::SetGlobal(g, value, pos) => {
                self.expr(stk, value, false).await?;
                self.mark(*pos);
                self.emit(Op::SetGlobal(*g));
                self.ret(tail);
            }
            Expr::DefineGlobal(g, value) => {
                self.expr(stk, value, false).await?;
                self.emit(Op::DefineGlobal(*g));
                self.ret(tail);
            }
            Expr::If(t, c, a) => self.if_expr(stk, t, c, a, tail).await?,
            Expr::Seq(items) => {
                if items.is_empty() {
                    self.load_const(Value::Unspecified);
                    self.ret(tail);
                }
                for (i, it) in items.iter().enumerate() {
                    self.expr(stk, it, tail && i + 1 == items.len()).await?;
                }
            }
            Expr::Call(f, args, pos) => {
                self.push_arg(stk, f).await?;
                for a in args {
                    self.push_arg(stk, a).await?;
                }
                let n = u16::try_from(args.len()).map_err(|_| TooManyLocals)?;
                self.mark(*pos);
                self.emit(if tail { Op::TailCall(n) } else { Op::Call(n) });
                self.shrink(n + 1);
            }
            Expr::Inline(op, args, pos) => self.inline_expr(stk, *op, args, *pos, tail).await?,
            Expr::Let(vars, inits, body) => {
                for (v, init) in vars.iter().zip(inits) {
                    self.expr(stk, init, false).await?;
                    let s = self.next_slot()?;
                    self.push()?;
                    self.slot[*v as usize] = s;
                    if self.vars[*v as usize].boxed() {
                        self.emit(Op::BoxLocal(s));
                    }
                }
                self.expr(stk, body, tail).await?;
                if !tail {
                    self.emit(Op::Drop(vars.len() as u16));
                }
                self.shrink(vars.len() as u16);
            }
            Expr::Letrec(vars, steps, body) => {
                self.letrec_expr(stk, vars, steps, body, tail).await?
            }
            Expr::Lambda(l) => {
                self.closure(stk, l).await?;
                self.ret(tail);
            }
            Expr::CaseLambda(ls) => {
                for l in ls {
                    self.closure(stk, l).await?;
                    self.push()?;
                }
                self.emit(Op::MakeCaseLambda(ls.len() as u16));
                self.shrink(ls.len() as u16);
                self.ret(tail);
            }
        }
        Ok(())
    }

    async fn if_expr(&mut self, stk: &mut Stk, t: &Expr, c: &Expr, a: &Expr, tail: bool) -> R<()> {
        self.expr(stk, t, false).await?;
        let jf = self.here();
        self.emit(Op::JumpIfFalse(0));
        self.expr(stk, c, tail).await?;
        let jend = self.here();
        if !tail {
            self.emit(Op::Jump(0));
        }
        let else_pc = self.here() as u32;
        self.f().code[jf] = Op::JumpIfFalse(else_pc);
        self.expr(stk, a, tail).await?;
        if !tail {
            let end = self.here() as u32;
            self.f().code[jend] = Op::Jump(end);
        }
        Ok(())
    }

    async fn inline_expr(
        &mut self,
        stk: &mut Stk,
        op: Inline,
        args: &[Expr],
        pos: Pos,
        tail: bool,
    ) -> R<()> {
        if let Some(fused) = self.fused_inline(op, args) {
            self.mark(pos);
            self.emit(fused);
            self.ret(tail);
            return Ok(());
        }
        let n = args.len();
        for (i, a) in args.iter().enumerate() {
            if i + 1 < n {
                self.push_arg(stk, a).await?;
            } else {
                self.expr(stk, a, false).await?;
            }
        }
        self.mark(pos);
        self.emit(Op::Inline(op));
        self.shrink((n - 1) as u16);
        self.ret(tail);
        Ok(())
    }

    /// A `letrec*` group: slots made first, then each initialised in turn.
    /// Closures of a group made only of lambdas are patched into each
    /// other's free slots instead of boxed.
    async fn letrec_expr(
        &mut self,
        stk: &mut Stk,
        vars: &[VarId],
        steps: &[(Option<VarId>, Expr)],
        body: &Expr,
        tail: bool,
    ) -> R<()> {
        let k = self.konst(Value::Undefined);
        for v in vars {
            self.emit(Op::Const(k));
            let s = self.next_slot()?;
            self.push()?;
            self.slot[*v as usize] = s;
            if self.vars[*v as usize].boxed() {
                self.emit(Op::BoxLocal(s));
            }
        }
        // Closures created so far in this group, with their free variables.
        let mut created: Vec<(VarId, Vec<VarId>)> = Vec::new();
        for (v, init) in steps {
            match (v, init) {
                (Some(v), Expr::Lambda(l)) if self.vars[*v as usize].fixable => {
                    let free = self.closure(stk, l).await?;
                    let s = self.slot[*v as usize];
                    self.emit(Op::SetLocal(s));
                    created.push((*v, free));
                    for (c, frees) in &created {
                        if let Some(i) = frees.iter().position(|x| x == v) {
                            let op = Op::PatchFree {
                                closure: self.slot[*c as usize],
                                free: i as u16,
                                value: s,
                            };
                            self.emit(op);
                        }
                    }
                }
                (Some(v), init) => {
                    self.expr(stk, init, false).await?;
                    let boxed = self.vars[*v as usize].boxed();
                    let s = self.slot[*v as usize];
                    self.emit(if boxed {
                        Op::SetLocalBox(s)
                    } else {
                        Op::SetLocal(s)
                    });
                }
                (None, e) => self.expr(stk, e, false).await?,
            }
        }
        self.expr(stk, body, tail).await?;
        if !tail {
            self.emit(Op::Drop(vars.len() as u16));
        }
        self.shrink(vars.len() as u16);
        Ok(())
    }

    /// The frame slot of a local that needs no box and no definedness check.
    fn plain_slot(&mut self, e: &Expr) -> Option<u16> {
        let Expr::Local(v, _) = e else { return None };
        let info = &self.vars[*v as usize];
        if info.boxed() || info.letrec {
            return None;
        }
        match self.locate(*v) {
            Loc::Local(s) => Some(s),
            Loc::Free(_) => None,
        }
    }

    /// An inline primitive whose operands are slots or a small integer, as one instruction.
    fn fused_inline(&mut self, op: Inline, args: &[Expr]) -> Option<Op> {
        match args {
            [a] => self.plain_slot(a).map(|slot| Op::Inline1L { op, slot }),
            [a, Expr::Const(Value::Int(i))] if *i >= i32::MIN as i64 && *i <= i32::MAX as i64 => {
                self.plain_slot(a).map(|slot| Op::InlineLI {
                    op,
                    slot,
                    imm: *i as i32,
                })
            }
            [a, b] => match (self.plain_slot(a), self.plain_slot(b)) {
                (Some(a), Some(b)) => Some(Op::InlineLL { op, a, b }),
                _ => None,
            },
            _ => None,
        }
    }

    async fn push_arg(&mut self, stk: &mut Stk, a: &Expr) -> R<()> {
        match a {
            Expr::Global(g, pos) => {
                self.mark(*pos);
                self.emit(Op::PushGlobal(*g));
                self.grow(1)
            }
            Expr::Local(v, _)
                if !self.vars[*v as usize].boxed() && !self.vars[*v as usize].letrec =>
            {
                if let Loc::Local(s) = self.locate(*v) {
                    self.emit(Op::PushLocal(s));
                    return self.grow(1);
                }
                self.expr(stk, a, false).await?;
                self.push()
            }
            Expr::Const(v) if matches!(v, Value::Obj(_) | Value::Sym(_) | Value::Prim(_)) => {
                let k = self.konst(*v);
                self.emit(Op::PushConst(k));
                self.grow(1)
            }
            _ => {
                self.expr(stk, a, false).await?;
                self.push()
            }
        }
    }

    /// Compiles a lambda and emits the creation of its closure; returns its free variables.
    async fn closure(&mut self, stk: &mut Stk, l: &LambdaExpr) -> R<Vec<VarId>> {
        let t = self.lambda(stk, l).await?;
        let free = t.1;
        for &v in &free {
            self.load_raw(v);
            self.push()?;
        }
        let f = self.f();
        f.children.push(t.0);
        let idx = (f.children.len() - 1) as u32;
        self.emit(Op::MakeClosure(idx));
        self.shrink(free.len() as u16);
        Ok(free)
    }

    async fn lambda(&mut self, stk: &mut Stk, l: &LambdaExpr) -> R<(Rc<Template>, Vec<VarId>)> {
        self.fns.push(FnState::new(l.id));
        let mut n: u16 = 0;
        for &p in l.params.iter().chain(l.rest.iter()) {
            self.slot[p as usize] = n;
            n = n.checked_add(1).ok_or(TooManyLocals)?;
        }
        self.f().depth = u32::from(n);
        for &p in l.params.iter().chain(l.rest.iter()) {
            if self.vars[p as usize].boxed() {
                let s = self.slot[p as usize];
                self.emit(Op::BoxLocal(s));
            }
        }
        let r = self.expr(stk, &l.body, true).await;
        let f = self
            .fns
            .pop()
            .expect("a function is being compiled: pushed on entry, popped on exit");
        r?;
        let free = f.free.clone();
        let nparams = l.params.len() as u16;
        let t = f.finish(nparams, l.rest.is_some(), l.name, l.pos, self.internal);
        Ok((Rc::new(t), free))
    }
}

#[derive(Clone, Copy)]
enum Loc {
    Local(u16),
    Free(u16),
}

impl FnState {
    fn new(lambda: u32) -> FnState {
        FnState {
            lambda,
            code: Vec::new(),
            consts: Vec::new(),
            children: Vec::new(),
            positions: Vec::new(),
            free: Vec::new(),
            depth: 0,
        }
    }

    fn finish(
        self,
        nparams: u16,
        rest: bool,
        name: Option<Sym>,
        pos: Pos,
        internal: bool,
    ) -> Template {
        let mut code = self.code;
        fuse(&mut code);
        Template {
            nfree: self.free.len() as u16,
            code,
            consts: self.consts,
            children: self.children,
            nparams,
            rest,
            name,
            pos,
            positions: self.positions,
            internal,
            gc_stamp: Cell::new(0),
        }
    }
}
