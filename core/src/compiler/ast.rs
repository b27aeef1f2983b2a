//! The resolved intermediate form between syntax and code.
//!
//! Every variable reference is already a local variable (by id) or a global
//! (by index); macros are expanded; derived forms are reduced to these few.

use crate::pos::Pos;
use crate::symbol::Sym;
use crate::syntax::scope::VarId;
use crate::value::code::Inline;
use crate::value::Value;

pub struct VarInfo {
    pub name: Sym,
    /// The lambda that binds it (0 = top level).
    pub lambda: u32,
    /// Assigned with `set!` (or by a letrec initialiser that is not a lambda).
    pub assigned: bool,
    /// Referenced from a lambda other than its binder.
    pub captured: bool,
    /// Bound by letrec/internal define: may be read before it has a value.
    pub letrec: bool,
    /// Bound by letrec to a lambda and never assigned: its closure is
    /// patched in place instead of boxing the variable.
    pub fixable: bool,
}

impl VarInfo {
    /// An assigned variable lives in a box, captured or not: a continuation
    /// copies the stack, and re-entering it must not restore old values of
    /// variables (they are locations, not part of the continuation).
    pub fn boxed(&self) -> bool {
        self.assigned
    }
}

pub enum Expr {
    Const(Value),
    Local(VarId, Pos),
    Global(u32, Pos),
    SetLocal(VarId, Box<Expr>),
    SetGlobal(u32, Box<Expr>, Pos),
    DefineGlobal(u32, Box<Expr>),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    Lambda(Box<LambdaExpr>),
    CaseLambda(Vec<LambdaExpr>),
    Seq(Vec<Expr>),
    Call(Box<Expr>, Vec<Expr>, Pos),
    Inline(Inline, Vec<Expr>, Pos),
    Let(Vec<VarId>, Vec<Expr>, Box<Expr>),
    /// letrec* semantics: `steps` run in order, each initialising its
    /// variable (or evaluated for effect when `None`), then the body.
    Letrec(Vec<VarId>, Vec<(Option<VarId>, Expr)>, Box<Expr>),
}

pub struct LambdaExpr {
    pub id: u32,
    pub params: Vec<VarId>,
    pub rest: Option<VarId>,
    pub body: Expr,
    pub name: Option<Sym>,
    pub pos: Pos,
}

impl Expr {
    /// Holds no other expression.
    fn is_leaf(&self) -> bool {
        matches!(self, Expr::Const(_) | Expr::Local(..) | Expr::Global(..))
    }

    /// Moves the expressions this one holds that hold others into `out`,
    /// leaving constants in their place.
    fn detach_nested(&mut self, out: &mut Vec<Expr>) {
        fn take(e: &mut Expr, out: &mut Vec<Expr>) {
            if !e.is_leaf() {
                out.push(std::mem::replace(e, Expr::Const(Value::Unspecified)));
            }
        }
        match self {
            Expr::Const(_) | Expr::Local(..) | Expr::Global(..) => {}
            Expr::SetLocal(_, e) | Expr::SetGlobal(_, e, _) | Expr::DefineGlobal(_, e) => {
                take(e, out)
            }
            Expr::If(t, c, a) => {
                take(t, out);
                take(c, out);
                take(a, out);
            }
            Expr::Lambda(l) => take(&mut l.body, out),
            Expr::CaseLambda(ls) => ls.iter_mut().for_each(|l| take(&mut l.body, out)),
            Expr::Seq(items) | Expr::Inline(_, items, _) => {
                items.iter_mut().for_each(|e| take(e, out))
            }
            Expr::Call(f, args, _) => {
                take(f, out);
                args.iter_mut().for_each(|e| take(e, out));
            }
            Expr::Let(_, inits, body) => {
                inits.iter_mut().for_each(|e| take(e, out));
                take(body, out);
            }
            Expr::Letrec(_, steps, body) => {
                steps.iter_mut().for_each(|(_, e)| take(e, out));
                take(body, out);
            }
        }
    }
}

/// Dropping an expression takes no Rust stack on its depth: code nested
/// 100,000 levels deep would otherwise overflow it, one frame per level.
/// Nested expressions are detached onto a heap stack and dropped one by one.
impl Drop for Expr {
    fn drop(&mut self) {
        if self.is_leaf() {
            return;
        }
        let mut pending = Vec::new();
        self.detach_nested(&mut pending);
        while let Some(mut e) = pending.pop() {
            e.detach_nested(&mut pending);
        }
    }
}
