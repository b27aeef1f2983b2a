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
