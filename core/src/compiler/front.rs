//! The front end: expands macros and special forms, resolves every variable,
//! and produces the [`Expr`] the code generator compiles.

use std::collections::VecDeque;
use std::rc::Rc;

use super::ast::{Expr, LambdaExpr, VarInfo};
use super::code::Inline;
use super::scope::{resolve, Binding, Macro, Meaning, Scope, Special, VarId};
use super::syntax_rules::Expander;
use super::{CompileError, Known};
use crate::globals::{GlobalSyntax, Globals};
use crate::heap::Heap;
use crate::number::Num;
use crate::symbol::{Sym, SymbolTable};
use crate::syntax::{Atom, Ident, Pos, Syn};
use crate::value::{Object, Value};

type R<T> = Result<T, CompileError>;
type Env = Option<Rc<Scope>>;

/// Deepest nesting of code the compiler accepts (it recurses on nesting).
const MAX_NESTING: usize = 1000;
/// Most macro expansions in one form (a macro that expands to itself forever).
const MAX_EXPANSIONS: usize = 1_000_000;
/// Most syntax nodes all expansions of one top-level form may produce.
const MAX_EXPANSION_NODES: usize = 2_000_000;

pub struct Front<'a> {
    pub syms: &'a mut SymbolTable,
    pub heap: &'a mut Heap,
    pub globals: &'a mut Globals,
    pub known: &'a Known,
    pub vars: Vec<VarInfo>,
    lambda: u32,
    next_lambda: u32,
    depth: usize,
    expansions: usize,
    /// Syntax nodes macro expansions may still produce for this form.
    expansion_budget: usize,
    /// The environment of top-level forms: none at the real top level, a
    /// library's scope for the body of a `define-library`.
    toplevel_env: Env,
    /// Globals this form defines (the caller uses them to name procedures).
    pub prims: &'a crate::builtins::PrimTable,
}

fn err<T>(message: impl Into<String>, pos: Pos) -> R<T> {
    Err(CompileError {
        message: message.into(),
        pos,
    })
}

enum BodyItem {
    Define(VarId, Syn, Option<Sym>),
    DefineLambda(VarId, Syn, Vec<Syn>, Sym, Pos),
    Expr(Syn),
}

impl<'a> Front<'a> {
    pub fn new(
        syms: &'a mut SymbolTable,
        heap: &'a mut Heap,
        globals: &'a mut Globals,
        known: &'a Known,
        prims: &'a crate::builtins::PrimTable,
    ) -> Self {
        Front {
            syms,
            heap,
            globals,
            known,
            vars: Vec::new(),
            lambda: 0,
            next_lambda: 1,
            depth: 0,
            expansions: 0,
            expansion_budget: MAX_EXPANSION_NODES,
            toplevel_env: None,
            prims,
        }
    }

    fn name(&self, s: Sym) -> String {
        self.syms.name(s).to_string()
    }

    fn new_var(&mut self, name: Sym, letrec: bool) -> VarId {
        self.vars.push(VarInfo {
            name,
            lambda: self.lambda,
            assigned: false,
            captured: false,
            letrec,
            fixable: false,
        });
        (self.vars.len() - 1) as VarId
    }

    fn meaning(&self, id: &Ident, env: &Env) -> Meaning {
        resolve(id, env)
    }

    /// The special form an identifier names here, if any.
    fn special(&self, id: &Ident, env: &Env) -> Option<Special> {
        match self.meaning(id, env) {
            Meaning::Global(s) => match self.globals.syntax.get(&s) {
                Some(GlobalSyntax::Special(sp)) => Some(*sp),
                _ => None,
            },
            _ => None,
        }
    }

    fn macro_of(&self, id: &Ident, env: &Env) -> Option<Rc<Macro>> {
        match self.meaning(id, env) {
            Meaning::Macro(m) => Some(m),
            Meaning::Global(s) => match self.globals.syntax.get(&s) {
                Some(GlobalSyntax::Macro(m)) => Some(m.clone()),
                _ => None,
            },
            Meaning::Var(_) => None,
        }
    }

    /// Is `s` the auxiliary keyword `kw` (`else`, `=>`, ...) as seen from here?
    fn is_keyword(&self, s: &Syn, kw: Sym, env: &Env) -> bool {
        match s {
            Syn::Sym(id, _) => matches!(self.meaning(id, env), Meaning::Global(g) if g == kw),
            _ => false,
        }
    }

    // ---- top level ---------------------------------------------------------

    /// Compiles one top-level form. `begin` at top level is spliced by the caller.
    pub fn toplevel(&mut self, form: &Syn, env: &Env) -> R<Expr> {
        self.toplevel_env = env.clone();
        self.compile(form, env)
    }

    fn at_toplevel(&self, env: &Env) -> bool {
        match (env, &self.toplevel_env) {
            (None, None) => true,
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// The global a top-level definition of `id` defines: its own name, or
    /// inside a library the hidden or exported name the library gave it.
    fn global_target(&self, id: &Ident, env: &Env) -> Sym {
        match self.meaning(id, env) {
            Meaning::Global(s) => s,
            _ => id.sym,
        }
    }

    /// If `form` is a top-level `begin` (possibly produced by a macro), its forms.
    pub fn toplevel_begin(&mut self, form: &Syn, env: &Env) -> R<Option<(Vec<Syn>, Env)>> {
        self.toplevel_env = env.clone();
        let mut form = form.clone();
        loop {
            let Syn::List(items, None, pos) = &form else {
                return Ok(None);
            };
            let Some(Syn::Sym(head, _)) = items.first() else {
                return Ok(None);
            };
            if let Some(m) = self.macro_of(head, env) {
                form = self.expand(&m, &form, env, *pos)?;
                continue;
            }
            return match self.special(head, env) {
                Some(Special::Begin) => Ok(Some((items[1..].to_vec(), env.clone()))),
                Some(Special::DefineLibrary) if env.is_none() => {
                    self.define_library(&items[1..], *pos).map(Some)
                }
                // At top level the body's definitions are top-level
                // definitions, made in a scope that also binds the names.
                Some(Special::ArbRef) => {
                    let (body, scope) = self.arb_ref_scope(&items[1..], env, *pos)?;
                    Ok(Some((body, Some(scope))))
                }
                _ => Ok(None),
            };
        }
    }

    fn expand(&mut self, m: &Rc<Macro>, form: &Syn, env: &Env, pos: Pos) -> R<Syn> {
        self.expansions += 1;
        if self.expansions > MAX_EXPANSIONS {
            return err(
                "too many macro expansions (does a macro expand into itself?)",
                pos,
            );
        }
        let ex = Expander::new(m, env.clone(), self.known.underscore);
        ex.expand(form, &mut self.expansion_budget).map_err(|e| {
            let e = if e.starts_with("no syntax-rules pattern") {
                format!(
                    "no syntax-rules pattern of '{}' matches this use",
                    self.syms.name(m.name)
                )
            } else {
                format!("{}: {}", self.syms.name(m.name), e)
            };
            CompileError { message: e, pos }
        })
    }

    // ---- expressions -------------------------------------------------------

    pub fn compile(&mut self, form: &Syn, env: &Env) -> R<Expr> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            self.depth -= 1;
            return err("expression nested too deeply", form.pos());
        }
        let r = self.compile_inner(form, env);
        self.depth -= 1;
        r
    }

    fn compile_inner(&mut self, form: &Syn, env: &Env) -> R<Expr> {
        match form {
            Syn::Sym(id, pos) => self.variable(id, env, *pos),
            Syn::Atom(a, _) => Ok(Expr::Const(self.atom_value(a))),
            Syn::Vector(..) => Ok(Expr::Const(self.datum(form)?)),
            Syn::LabelDef(_, _, pos) | Syn::LabelRef(_, pos) => {
                err("datum labels are only allowed in quoted data", *pos)
            }
            Syn::List(items, tail, pos) => {
                if tail.is_some() {
                    return err("a dotted list is not a valid expression", *pos);
                }
                let Some(head) = items.first() else {
                    return err(
                        "() is not a valid expression; write '() for the empty list",
                        *pos,
                    );
                };
                if let Syn::Sym(id, _) = head {
                    match self.meaning(id, env) {
                        Meaning::Macro(m) => {
                            let out = self.expand(&m, form, env, *pos)?;
                            return self.compile(&out, env);
                        }
                        Meaning::Global(s) => match self.globals.syntax.get(&s).cloned() {
                            Some(GlobalSyntax::Macro(m)) => {
                                let out = self.expand(&m, form, env, *pos)?;
                                return self.compile(&out, env);
                            }
                            Some(GlobalSyntax::Special(sp)) => {
                                return self.special_form(sp, items, env, *pos)
                            }
                            None => {}
                        },
                        Meaning::Var(_) => {}
                    }
                }
                self.application(items, env, *pos)
            }
        }
    }

    fn variable(&mut self, id: &Ident, env: &Env, pos: Pos) -> R<Expr> {
        match self.meaning(id, env) {
            Meaning::Var(v) => {
                self.note_reference(v);
                Ok(Expr::Local(v, pos))
            }
            Meaning::Macro(_) => err(
                format!("syntax keyword '{}' used as a variable", self.name(id.sym)),
                pos,
            ),
            Meaning::Global(s) => {
                if self.globals.syntax.contains_key(&s) {
                    return err(
                        format!("syntax keyword '{}' used as a variable", self.name(s)),
                        pos,
                    );
                }
                Ok(Expr::Global(self.globals.index(s), pos))
            }
        }
    }

    fn note_reference(&mut self, v: VarId) {
        if self.vars[v as usize].lambda != self.lambda {
            self.vars[v as usize].captured = true;
        }
    }

    fn application(&mut self, items: &[Syn], env: &Env, pos: Pos) -> R<Expr> {
        // Inline a few primitives when the head is the untouched global.
        if let Syn::Sym(id, _) = &items[0] {
            if let Meaning::Global(s) = self.meaning(id, env) {
                if let Some(op) = Inline::from_name(self.syms.name(s)) {
                    if op.arity() == items.len() - 1 {
                        let args = items[1..]
                            .iter()
                            .map(|a| self.compile(a, env))
                            .collect::<R<Vec<_>>>()?;
                        return Ok(Expr::Inline(op, args, pos));
                    }
                }
            }
        }
        let f = self.compile(&items[0], env)?;
        let args = items[1..]
            .iter()
            .map(|a| self.compile(a, env))
            .collect::<R<Vec<_>>>()?;
        Ok(Expr::Call(Box::new(f), args, pos))
    }

    fn prim_call(&mut self, name: &str, args: Vec<Expr>, pos: Pos) -> Expr {
        let id = self.prims.id(name).unwrap_or(0);
        Expr::Call(Box::new(Expr::Const(Value::Prim(id))), args, pos)
    }

    fn body_of(&mut self, items: &[Syn], env: &Env, pos: Pos, what: &str) -> R<Expr> {
        if items.is_empty() {
            return err(
                format!("{what} needs at least one expression in its body"),
                pos,
            );
        }
        self.body(items, env, pos)
    }

    fn seq(&mut self, items: &[Syn], env: &Env) -> R<Expr> {
        if items.is_empty() {
            return Ok(Expr::Const(Value::Unspecified));
        }
        let mut out = items
            .iter()
            .map(|i| self.compile(i, env))
            .collect::<R<Vec<_>>>()?;
        Ok(if out.len() == 1 {
            out.pop().unwrap_or(Expr::Const(Value::Unspecified))
        } else {
            Expr::Seq(out)
        })
    }

    fn special_form(&mut self, sp: Special, items: &[Syn], env: &Env, pos: Pos) -> R<Expr> {
        let args = &items[1..];
        let kw = match &items[0] {
            Syn::Sym(id, _) => self.name(id.sym),
            _ => String::new(),
        };
        match sp {
            Special::Quote => {
                if args.len() != 1 {
                    return err("quote takes exactly one datum", pos);
                }
                Ok(Expr::Const(self.datum(&args[0])?))
            }
            Special::Quasiquote => {
                if args.len() != 1 {
                    return err("quasiquote takes exactly one template", pos);
                }
                self.quasi(&args[0], 1, env)
            }
            Special::Unquote | Special::UnquoteSplicing => {
                err(format!("{kw} outside of quasiquote"), pos)
            }
            Special::Lambda => {
                if args.is_empty() {
                    return err("lambda needs parameters and a body", pos);
                }
                let l = self.lambda(&args[0], &args[1..], env, None, pos)?;
                Ok(Expr::Lambda(Box::new(l)))
            }
            Special::CaseLambda => {
                let mut clauses = Vec::new();
                for c in args {
                    let Some(parts) = c.as_list().filter(|p| !p.is_empty()) else {
                        return err("case-lambda clause must be (formals body ...)", c.pos());
                    };
                    clauses.push(self.lambda(&parts[0], &parts[1..], env, None, c.pos())?);
                }
                Ok(Expr::CaseLambda(clauses))
            }
            Special::Define => {
                if !self.at_toplevel(env) {
                    return err(
                        "define is only allowed at the top level or at the start of a body",
                        pos,
                    );
                }
                let (name, value) = self.definition(args, env, pos)?;
                let name = self.global_target(&Ident::plain(name), env);
                if let Some(GlobalSyntax::Special(_) | GlobalSyntax::Macro(_)) =
                    self.globals.syntax.get(&name)
                {
                    self.globals.syntax.remove(&name);
                }
                let g = self.globals.index(name);
                Ok(Expr::DefineGlobal(g, Box::new(value)))
            }
            Special::Set => {
                if args.len() != 2 {
                    return err("set! takes a variable and an expression", pos);
                }
                let Syn::Sym(id, vpos) = &args[0] else {
                    return err("set! needs a variable name", args[0].pos());
                };
                let value = self.compile(&args[1], env)?;
                match self.meaning(id, env) {
                    Meaning::Var(v) => {
                        self.note_reference(v);
                        self.vars[v as usize].assigned = true;
                        Ok(Expr::SetLocal(v, Box::new(value)))
                    }
                    Meaning::Macro(_) => err(
                        format!("cannot set! the syntax keyword '{}'", self.name(id.sym)),
                        *vpos,
                    ),
                    Meaning::Global(s) => {
                        if self.globals.syntax.contains_key(&s) {
                            return err(
                                format!("cannot set! the syntax keyword '{}'", self.name(s)),
                                *vpos,
                            );
                        }
                        Ok(Expr::SetGlobal(
                            self.globals.index(s),
                            Box::new(value),
                            *vpos,
                        ))
                    }
                }
            }
            Special::If => {
                if args.len() != 2 && args.len() != 3 {
                    return err(
                        "if takes a test, a consequent and an optional alternative",
                        pos,
                    );
                }
                let t = self.compile(&args[0], env)?;
                let c = self.compile(&args[1], env)?;
                let a = if args.len() == 3 {
                    self.compile(&args[2], env)?
                } else {
                    Expr::Const(Value::Unspecified)
                };
                Ok(Expr::If(Box::new(t), Box::new(c), Box::new(a)))
            }
            Special::Begin => {
                if env.is_none() {
                    // A top-level begin reached here (inside an expression); definitions inside
                    // are global definitions.
                    let mut out = Vec::new();
                    for a in args {
                        out.push(self.compile(a, env)?);
                    }
                    return Ok(if out.is_empty() {
                        Expr::Const(Value::Unspecified)
                    } else {
                        Expr::Seq(out)
                    });
                }
                self.seq(args, env)
            }
            Special::Let => self.let_form(args, env, pos),
            Special::LetStar => {
                let Some((bindings, body)) = args.split_first() else {
                    return err("let* needs bindings and a body", pos);
                };
                let Some(bs) = bindings.as_list() else {
                    return err("let* bindings must be a list", bindings.pos());
                };
                self.let_star(bs, body, env, pos)
            }
            Special::Letrec | Special::LetrecStar => {
                let Some((bindings, body)) = args.split_first() else {
                    return err(format!("{kw} needs bindings and a body"), pos);
                };
                let Some(bs) = bindings.as_list() else {
                    return err(format!("{kw} bindings must be a list"), bindings.pos());
                };
                let scope = Scope::new(env.clone());
                let mut pairs = Vec::new();
                for b in bs {
                    let (id, init) = self.binding_pair(b, &kw)?;
                    let v = self.new_var(id.sym, true);
                    scope.bind(id, Binding::Var(v));
                    pairs.push((v, init));
                }
                let benv = Some(scope);
                let mut vars = Vec::new();
                let mut steps = Vec::new();
                for (v, init) in pairs {
                    let name = self.vars[v as usize].name;
                    let e = self.compile_named(&init, &benv, Some(name))?;
                    vars.push(v);
                    steps.push((Some(v), e));
                }
                let body = self.body_of(body, &benv, pos, &kw)?;
                Ok(self.letrec(vars, steps, body))
            }
            Special::Cond => self.cond(args, env, pos),
            Special::Case => self.case(args, env, pos),
            Special::And => {
                if args.is_empty() {
                    return Ok(Expr::Const(Value::Bool(true)));
                }
                let mut e = self.compile(&args[args.len() - 1], env)?;
                for a in args[..args.len() - 1].iter().rev() {
                    let t = self.compile(a, env)?;
                    e = Expr::If(
                        Box::new(t),
                        Box::new(e),
                        Box::new(Expr::Const(Value::Bool(false))),
                    );
                }
                Ok(e)
            }
            Special::Or => {
                if args.is_empty() {
                    return Ok(Expr::Const(Value::Bool(false)));
                }
                let mut e = self.compile(&args[args.len() - 1], env)?;
                for a in args[..args.len() - 1].iter().rev() {
                    let t = self.compile(a, env)?;
                    let tmp = self.new_var(self.known.tmp, false);
                    e = Expr::Let(
                        vec![tmp],
                        vec![t],
                        Box::new(Expr::If(
                            Box::new(Expr::Local(tmp, pos)),
                            Box::new(Expr::Local(tmp, pos)),
                            Box::new(e),
                        )),
                    );
                }
                Ok(e)
            }
            Special::When | Special::Unless => {
                let Some((test, body)) = args.split_first() else {
                    return err(format!("{kw} needs a test"), pos);
                };
                let t = self.compile(test, env)?;
                let b = self.seq(body, env)?;
                let u = Expr::Const(Value::Unspecified);
                Ok(if sp == Special::When {
                    Expr::If(Box::new(t), Box::new(b), Box::new(u))
                } else {
                    Expr::If(Box::new(t), Box::new(u), Box::new(b))
                })
            }
            Special::Do => self.do_loop(args, env, pos),
            Special::DefineSyntax => {
                if !self.at_toplevel(env) {
                    return err(
                        "define-syntax is only allowed at the top level or at the start of a body",
                        pos,
                    );
                }
                let (id, m) = self.define_syntax(args, env, pos)?;
                let target = self.global_target(&id, env);
                self.globals.syntax.insert(target, GlobalSyntax::Macro(m));
                Ok(Expr::Const(Value::Unspecified))
            }
            Special::LetSyntax | Special::LetrecSyntax => {
                let Some((bindings, body)) = args.split_first() else {
                    return err(format!("{kw} needs bindings and a body"), pos);
                };
                let Some(bs) = bindings.as_list() else {
                    return err(format!("{kw} bindings must be a list"), bindings.pos());
                };
                let scope = Scope::new(env.clone());
                let menv = if sp == Special::LetrecSyntax {
                    Some(scope.clone())
                } else {
                    env.clone()
                };
                for b in bs {
                    let (id, spec) = self.binding_pair(b, &kw)?;
                    let m = self.syntax_rules(&spec, &menv, id.sym)?;
                    scope.bind(id, Binding::Macro(m));
                }
                self.body_of(body, &Some(scope), pos, &kw)
            }
            Special::SyntaxRules => err(
                "syntax-rules is only valid as the transformer of define-syntax or let-syntax",
                pos,
            ),
            Special::DefineRecordType => {
                if !self.at_toplevel(env) {
                    return err("define-record-type is only allowed at the top level or at the start of a body", pos);
                }
                let forms = self.record_definitions(args, pos)?;
                let mut out = Vec::new();
                for f in &forms {
                    out.push(self.compile(f, env)?);
                }
                Ok(Expr::Seq(out))
            }
            Special::Delay | Special::DelayForce | Special::MakePromiseLazy => {
                if args.len() != 1 {
                    return err(format!("{kw} takes one expression"), pos);
                }
                // A lazy promise holds a thunk returning a promise; `delay` makes
                // that promise from the expression's value (R7RS 7.3).
                let thunk = self.thunk(&args[0], env, pos, sp == Special::Delay)?;
                Ok(self.prim_call("%make-lazy-promise", vec![thunk], pos))
            }
            Special::Include => err("include is not available: Arbores reads no files", pos),
            Special::CondExpand => {
                let chosen = self.cond_expand(args, pos)?;
                if env.is_none() {
                    let mut out = Vec::new();
                    for a in &chosen {
                        out.push(self.compile(a, env)?);
                    }
                    return Ok(if out.is_empty() {
                        Expr::Const(Value::Unspecified)
                    } else {
                        Expr::Seq(out)
                    });
                }
                self.seq(&chosen, env)
            }
            Special::Import => {
                for spec in args {
                    self.check_import(spec)?;
                }
                Ok(Expr::Const(Value::Unspecified))
            }
            Special::DefineLibrary => err("define-library is only allowed at the top level", pos),
            Special::ArbRef => {
                let (body, scope) = self.arb_ref_scope(args, env, pos)?;
                self.body(&body, &Some(scope), pos)
            }
            Special::SyntaxError => {
                let msg = match args.first() {
                    Some(Syn::Atom(Atom::Str(s), _)) => s.to_string(),
                    _ => "syntax error".into(),
                };
                let irritants: Vec<String> = args
                    .iter()
                    .skip(1)
                    .map(|a| crate::printer::syn_to_string(a, self.syms))
                    .collect();
                err(
                    if irritants.is_empty() {
                        msg
                    } else {
                        format!("{msg} {}", irritants.join(" "))
                    },
                    pos,
                )
            }
            Special::Parameterize
            | Special::Guard
            | Special::LetValues
            | Special::LetStarValues
            | Special::DefineValues => err(format!("{kw} is defined by the prelude"), pos),
        }
    }

    /// `(lambda () body)`, optionally `(lambda () (make-promise body))`.
    fn thunk(&mut self, body: &Syn, env: &Env, pos: Pos, wrap_in_promise: bool) -> R<Expr> {
        let outer = self.lambda;
        let id = self.next_lambda;
        self.next_lambda += 1;
        self.lambda = id;
        let r = self.compile(body, env);
        self.lambda = outer;
        let mut e = r?;
        if wrap_in_promise {
            e = self.prim_call("make-promise", vec![e], pos);
        }
        Ok(Expr::Lambda(Box::new(LambdaExpr {
            id,
            params: vec![],
            rest: None,
            body: e,
            name: None,
            pos,
        })))
    }

    fn let_star(&mut self, bs: &[Syn], body: &[Syn], env: &Env, pos: Pos) -> R<Expr> {
        if bs.is_empty() {
            return self.body_of(body, env, pos, "let*");
        }
        let (vars, inits, scope) = self.bind_let(&bs[..1], env, "let*")?;
        let inner = self.let_star(&bs[1..], body, &Some(scope), pos)?;
        Ok(Expr::Let(vars, inits, Box::new(inner)))
    }

    fn compile_named(&mut self, init: &Syn, env: &Env, name: Option<Sym>) -> R<Expr> {
        // A lambda bound to a name is named after it, for backtraces.
        if let Syn::List(items, None, pos) = init {
            if let Some(Syn::Sym(head, _)) = items.first() {
                if self.special(head, env) == Some(Special::Lambda) && items.len() >= 2 {
                    let l = self.lambda(&items[1], &items[2..], env, name, *pos)?;
                    return Ok(Expr::Lambda(Box::new(l)));
                }
            }
        }
        self.compile(init, env)
    }

    /// `(define name expr)` or `(define (name . formals) body ...)`.
    fn definition(&mut self, args: &[Syn], env: &Env, pos: Pos) -> R<(Sym, Expr)> {
        match args.first() {
            Some(Syn::Sym(id, _)) => {
                let value = match args.len() {
                    1 => Expr::Const(Value::Unspecified),
                    2 => self.compile_named(&args[1], env, Some(id.sym))?,
                    _ => return err("define takes a name and one expression", pos),
                };
                Ok((id.sym, value))
            }
            Some(Syn::List(items, tail, fpos)) if !items.is_empty() => {
                // Curried define: (define ((f a) b) ...) = (define (f a) (lambda (b) ...))
                let formals = Syn::List(items[1..].to_vec().into(), tail.clone(), *fpos);
                match &items[0] {
                    Syn::Sym(id, _) => {
                        let l = self.lambda(&formals, &args[1..], env, Some(id.sym), pos)?;
                        Ok((id.sym, Expr::Lambda(Box::new(l))))
                    }
                    inner @ Syn::List(..) => {
                        let lam = self.lambda_syntax(formals, args[1..].to_vec(), pos);
                        let mut v = vec![inner.clone(), lam];
                        v.truncate(2);
                        self.definition(&v, env, pos)
                    }
                    other => err("define: expected a name", other.pos()),
                }
            }
            _ => err("define: expected a name or (name formals ...)", pos),
        }
    }

    /// Syntax for `(lambda formals body...)` whose `lambda` means the special form
    /// whatever the user has bound that name to.
    fn lambda_syntax(&mut self, formals: Syn, body: Vec<Syn>, pos: Pos) -> Syn {
        let lam = self.known.lambda_alias.clone();
        let mut v = vec![Syn::Sym(lam, pos), formals];
        v.extend(body);
        Syn::list(v, pos)
    }

    pub fn lambda(
        &mut self,
        formals: &Syn,
        body: &[Syn],
        env: &Env,
        name: Option<Sym>,
        pos: Pos,
    ) -> R<LambdaExpr> {
        let outer = self.lambda;
        let id = self.next_lambda;
        self.next_lambda += 1;
        self.lambda = id;
        let scope = Scope::new(env.clone());
        let mut params = Vec::new();
        let mut rest = None;
        let r = (|| {
            let (fixed, tail): (&[Syn], Option<&Syn>) = match formals {
                Syn::Sym(..) => (&[], Some(formals)),
                Syn::List(items, tail, _) => (items, tail.as_deref()),
                other => return err("lambda: bad parameter list", other.pos()),
            };
            for p in fixed.iter().chain(tail) {
                let Syn::Sym(pid, ppos) = p else {
                    return err("lambda: parameters must be identifiers", p.pos());
                };
                if scope.bindings.borrow().iter().any(|(b, _)| b.same(pid)) {
                    return err(
                        format!("lambda: duplicate parameter '{}'", self.name(pid.sym)),
                        *ppos,
                    );
                }
                let v = self.new_var(pid.sym, false);
                scope.bind(pid.clone(), Binding::Var(v));
                if tail.is_some_and(|t| std::ptr::eq(t, p)) {
                    rest = Some(v);
                } else {
                    params.push(v);
                }
            }
            self.body_of(body, &Some(scope.clone()), pos, "lambda")
        })();
        self.lambda = outer;
        let body = r?;
        Ok(LambdaExpr {
            id,
            params,
            rest,
            body,
            name,
            pos,
        })
    }

    /// A body: internal definitions (letrec* semantics) then expressions.
    fn body(&mut self, forms: &[Syn], env: &Env, pos: Pos) -> R<Expr> {
        let scope = Scope::new(env.clone());
        let benv: Env = Some(scope.clone());
        let mut queue: VecDeque<Syn> = forms.iter().cloned().collect();
        let mut items: Vec<BodyItem> = Vec::new();
        let mut any_define = false;
        while let Some(form) = queue.pop_front() {
            let mut form = form;
            loop {
                let Syn::List(list, None, fpos) = &form else {
                    break;
                };
                let Some(Syn::Sym(head, _)) = list.first() else {
                    break;
                };
                if let Some(m) = self.macro_of(head, &benv) {
                    form = self.expand(&m, &form, &benv, *fpos)?;
                    continue;
                }
                match self.special(head, &benv) {
                    Some(Special::Begin) => {
                        for f in list[1..].iter().rev() {
                            queue.push_front(f.clone());
                        }
                        form = Syn::nil(*fpos); // consumed
                    }
                    Some(Special::Define) => {
                        any_define = true;
                        let args = &list[1..];
                        match args.first() {
                            Some(Syn::Sym(id, _)) => {
                                if args.len() > 2 {
                                    return err("define takes a name and one expression", *fpos);
                                }
                                let v = self.new_var(id.sym, true);
                                scope.bind(id.clone(), Binding::Var(v));
                                let init = args
                                    .get(1)
                                    .cloned()
                                    .unwrap_or(Syn::Atom(Atom::Unspecified, *fpos));
                                items.push(BodyItem::Define(v, init, Some(id.sym)));
                            }
                            Some(Syn::List(sig, tail, spos)) if !sig.is_empty() => {
                                let formals =
                                    Syn::List(sig[1..].to_vec().into(), tail.clone(), *spos);
                                match &sig[0] {
                                    Syn::Sym(id, _) => {
                                        let v = self.new_var(id.sym, true);
                                        scope.bind(id.clone(), Binding::Var(v));
                                        items.push(BodyItem::DefineLambda(
                                            v,
                                            formals,
                                            args[1..].to_vec(),
                                            id.sym,
                                            *fpos,
                                        ));
                                    }
                                    inner @ Syn::List(..) => {
                                        // curried: rewrite and requeue
                                        let lam =
                                            self.lambda_syntax(formals, args[1..].to_vec(), *fpos);
                                        let def = Syn::list(
                                            vec![list[0].clone(), inner.clone(), lam],
                                            *fpos,
                                        );
                                        queue.push_front(def);
                                    }
                                    other => return err("define: expected a name", other.pos()),
                                }
                            }
                            _ => {
                                return err("define: expected a name or (name formals ...)", *fpos)
                            }
                        }
                        form = Syn::nil(*fpos);
                    }
                    Some(Special::DefineSyntax) => {
                        let (id, m) = self.define_syntax(&list[1..], &benv, *fpos)?;
                        scope.bind(id, Binding::Macro(m));
                        form = Syn::nil(*fpos);
                    }
                    Some(Special::DefineRecordType) => {
                        let defs = self.record_definitions(&list[1..], *fpos)?;
                        for f in defs.into_iter().rev() {
                            queue.push_front(f);
                        }
                        form = Syn::nil(*fpos);
                    }
                    _ => {}
                }
                break;
            }
            if !form.is_nil() {
                items.push(BodyItem::Expr(form));
            }
        }
        if !any_define {
            let exprs: Vec<Syn> = items
                .into_iter()
                .filter_map(|i| match i {
                    BodyItem::Expr(s) => Some(s),
                    _ => None,
                })
                .collect();
            if exprs.is_empty() {
                return err("body has no expressions", pos);
            }
            return self.seq(&exprs, &benv);
        }
        // Definitions and expressions, in order; the last item is the value.
        let mut vars = Vec::new();
        let mut steps: Vec<(Option<VarId>, Expr)> = Vec::new();
        for item in items {
            match item {
                BodyItem::Define(v, init, name) => {
                    vars.push(v);
                    let e = self.compile_named(&init, &benv, name)?;
                    steps.push((Some(v), e));
                }
                BodyItem::DefineLambda(v, formals, body, name, lpos) => {
                    vars.push(v);
                    let l = self.lambda(&formals, &body, &benv, Some(name), lpos)?;
                    steps.push((Some(v), Expr::Lambda(Box::new(l))));
                }
                BodyItem::Expr(s) => {
                    let e = self.compile(&s, &benv)?;
                    steps.push((None, e));
                }
            }
        }
        let last = match steps.last() {
            Some((None, _)) => steps
                .pop()
                .map(|(_, e)| e)
                .unwrap_or(Expr::Const(Value::Unspecified)),
            _ => {
                return err(
                    "body ends with a definition: it needs an expression after its definitions",
                    pos,
                )
            }
        };
        Ok(self.letrec(vars, steps, last))
    }

    /// Builds a letrec, deciding which variables can be patched instead of boxed.
    ///
    /// Only a group made entirely of lambdas is patched: then no other code
    /// runs while its closures are created, so nothing can capture a member
    /// before it exists.
    fn letrec(&mut self, vars: Vec<VarId>, steps: Vec<(Option<VarId>, Expr)>, body: Expr) -> Expr {
        let all_lambdas = steps
            .iter()
            .all(|(v, e)| v.is_some() && matches!(e, Expr::Lambda(_)));
        for (v, e) in &steps {
            if let Some(v) = v {
                let info = &mut self.vars[*v as usize];
                if all_lambdas && matches!(e, Expr::Lambda(_)) && !info.assigned {
                    info.fixable = true;
                } else {
                    // Initialised after the variable exists: an assignment.
                    info.assigned = true;
                }
            }
        }
        Expr::Letrec(vars, steps, Box::new(body))
    }

    fn binding_pair(&mut self, b: &Syn, kw: &str) -> R<(Ident, Syn)> {
        match b.as_list() {
            Some([Syn::Sym(id, _), init]) => Ok((id.clone(), init.clone())),
            Some([Syn::Sym(id, p)]) => Ok((id.clone(), Syn::Atom(Atom::Unspecified, *p))),
            _ => err(
                format!("{kw}: each binding must be (name expression)"),
                b.pos(),
            ),
        }
    }

    fn bind_let(
        &mut self,
        bs: &[Syn],
        env: &Env,
        kw: &str,
    ) -> R<(Vec<VarId>, Vec<Expr>, Rc<Scope>)> {
        let scope = Scope::new(env.clone());
        let mut vars = Vec::new();
        let mut inits = Vec::new();
        for b in bs {
            let (id, init) = self.binding_pair(b, kw)?;
            if kw == "let" && scope.bindings.borrow().iter().any(|(x, _)| x.same(&id)) {
                return err(
                    format!("let: duplicate variable '{}'", self.name(id.sym)),
                    b.pos(),
                );
            }
            inits.push(self.compile_named(&init, env, Some(id.sym))?);
            let v = self.new_var(id.sym, false);
            vars.push(v);
            scope.bind(id, Binding::Var(v));
        }
        Ok((vars, inits, scope))
    }

    fn let_form(&mut self, args: &[Syn], env: &Env, pos: Pos) -> R<Expr> {
        match args.first() {
            Some(Syn::Sym(name, _)) => {
                // Named let: ((letrec ((name (lambda vars body...))) name) inits...)
                let Some(bindings) = args.get(1) else {
                    return err("named let needs bindings and a body", pos);
                };
                let Some(bs) = bindings.as_list() else {
                    return err("let bindings must be a list", bindings.pos());
                };
                let mut formals = Vec::new();
                let mut inits = Vec::new();
                for b in bs {
                    let (id, init) = self.binding_pair(b, "let")?;
                    formals.push(Syn::Sym(id, b.pos()));
                    inits.push(self.compile(&init, env)?);
                }
                let scope = Scope::new(env.clone());
                let v = self.new_var(name.sym, true);
                scope.bind(name.clone(), Binding::Var(v));
                let benv = Some(scope);
                let l = self.lambda(
                    &Syn::list(formals, bindings.pos()),
                    &args[2..],
                    &benv,
                    Some(name.sym),
                    pos,
                )?;
                let call = Expr::Call(Box::new(Expr::Local(v, pos)), inits, pos);
                Ok(self.letrec(vec![v], vec![(Some(v), Expr::Lambda(Box::new(l)))], call))
            }
            Some(bindings) => {
                let Some(bs) = bindings.as_list() else {
                    return err("let bindings must be a list", bindings.pos());
                };
                let (vars, inits, scope) = self.bind_let(bs, env, "let")?;
                let body = self.body_of(&args[1..], &Some(scope), pos, "let")?;
                if vars.is_empty() {
                    return Ok(body);
                }
                Ok(Expr::Let(vars, inits, Box::new(body)))
            }
            None => err("let needs bindings and a body", pos),
        }
    }

    fn cond(&mut self, clauses: &[Syn], env: &Env, pos: Pos) -> R<Expr> {
        let Some((first, rest)) = clauses.split_first() else {
            return Ok(Expr::Const(Value::Unspecified));
        };
        let Some(parts) = first.as_list().filter(|p| !p.is_empty()) else {
            return err("cond clause must be (test expression ...)", first.pos());
        };
        if self.is_keyword(&parts[0], self.known.else_, env) {
            if !rest.is_empty() {
                return err("cond: else must be the last clause", first.pos());
            }
            return self.seq(&parts[1..], env);
        }
        let test = self.compile(&parts[0], env)?;
        let otherwise = self.cond(rest, env, pos)?;
        if parts.len() >= 2 && self.is_keyword(&parts[1], self.known.arrow, env) {
            if parts.len() != 3 {
                return err("cond: (test => receiver) takes one receiver", first.pos());
            }
            let f = self.compile(&parts[2], env)?;
            let tmp = self.new_var(self.known.tmp, false);
            let call = Expr::Call(Box::new(f), vec![Expr::Local(tmp, pos)], first.pos());
            return Ok(Expr::Let(
                vec![tmp],
                vec![test],
                Box::new(Expr::If(
                    Box::new(Expr::Local(tmp, pos)),
                    Box::new(call),
                    Box::new(otherwise),
                )),
            ));
        }
        if parts.len() == 1 {
            let tmp = self.new_var(self.known.tmp, false);
            return Ok(Expr::Let(
                vec![tmp],
                vec![test],
                Box::new(Expr::If(
                    Box::new(Expr::Local(tmp, pos)),
                    Box::new(Expr::Local(tmp, pos)),
                    Box::new(otherwise),
                )),
            ));
        }
        let body = self.seq(&parts[1..], env)?;
        Ok(Expr::If(
            Box::new(test),
            Box::new(body),
            Box::new(otherwise),
        ))
    }

    fn case(&mut self, args: &[Syn], env: &Env, pos: Pos) -> R<Expr> {
        let Some((key, clauses)) = args.split_first() else {
            return err("case needs a key and clauses", pos);
        };
        let key = self.compile(key, env)?;
        let tmp = self.new_var(self.known.tmp, false);
        let mut e = Expr::Const(Value::Unspecified);
        for (i, c) in clauses.iter().enumerate().rev() {
            let Some(parts) = c.as_list().filter(|p| !p.is_empty()) else {
                return err("case clause must be ((datum ...) expression ...)", c.pos());
            };
            let is_else = self.is_keyword(&parts[0], self.known.else_, env);
            if is_else && i != clauses.len() - 1 {
                return err("case: else must be the last clause", c.pos());
            }
            let body = if parts.len() == 3 && self.is_keyword(&parts[1], self.known.arrow, env) {
                let f = self.compile(&parts[2], env)?;
                Expr::Call(Box::new(f), vec![Expr::Local(tmp, pos)], c.pos())
            } else {
                self.seq(&parts[1..], env)?
            };
            if is_else {
                e = body;
                continue;
            }
            let Some(data) = parts[0].as_list() else {
                return err("case clause must start with a list of data", parts[0].pos());
            };
            let mut test = Expr::Const(Value::Bool(false));
            for d in data.iter().rev() {
                let v = self.datum(d)?;
                let cmp = if matches!(v, Value::Obj(_) | Value::Float(_)) {
                    self.prim_call("eqv?", vec![Expr::Local(tmp, pos), Expr::Const(v)], pos)
                } else {
                    Expr::Inline(
                        Inline::EqP,
                        vec![Expr::Local(tmp, pos), Expr::Const(v)],
                        pos,
                    )
                };
                test = Expr::If(
                    Box::new(cmp),
                    Box::new(Expr::Const(Value::Bool(true))),
                    Box::new(test),
                );
            }
            e = Expr::If(Box::new(test), Box::new(body), Box::new(e));
        }
        Ok(Expr::Let(vec![tmp], vec![key], Box::new(e)))
    }

    fn do_loop(&mut self, args: &[Syn], env: &Env, pos: Pos) -> R<Expr> {
        // (do ((var init step)...) (test res...) body...) as a named-let loop.
        let (Some(specs), Some(exit)) = (
            args.first().and_then(|s| s.as_list()),
            args.get(1).and_then(|s| s.as_list()),
        ) else {
            return err(
                "do: expected (do ((var init step) ...) (test result ...) body ...)",
                pos,
            );
        };
        if exit.is_empty() {
            return err("do: the exit clause needs a test", pos);
        }
        let mut inits = Vec::new();
        let loop_var = self.new_var(self.known.do_loop, true);
        let outer = self.lambda;
        let lam_id = self.next_lambda;
        self.next_lambda += 1;
        // Inits are evaluated outside the loop.
        let mut params = Vec::new();
        let mut steps_syn = Vec::new();
        for s in specs {
            let Some(parts) = s.as_list() else {
                return err("do: each variable must be (var init [step])", s.pos());
            };
            let (Some(Syn::Sym(id, _)), Some(init)) = (parts.first(), parts.get(1)) else {
                return err("do: each variable must be (var init [step])", s.pos());
            };
            if parts.len() > 3 {
                return err("do: each variable must be (var init [step])", s.pos());
            }
            inits.push(self.compile(init, env)?);
            params.push((id.clone(), parts.get(2).cloned()));
            steps_syn.push(parts.get(2).cloned().unwrap_or_else(|| parts[0].clone()));
        }
        self.lambda = lam_id;
        let r = (|| {
            let lscope = Scope::new(env.clone());
            let mut pvars = Vec::new();
            for (id, _) in &params {
                let v = self.new_var(id.sym, false);
                lscope.bind(id.clone(), Binding::Var(v));
                pvars.push(v);
            }
            let lenv = Some(lscope);
            let test = self.compile(&exit[0], &lenv)?;
            let result = self.seq(&exit[1..], &lenv)?;
            let body = self.seq(&args[2..], &lenv)?;
            let mut next = Vec::new();
            for s in &steps_syn {
                next.push(self.compile(s, &lenv)?);
            }
            self.note_reference(loop_var);
            let again = Expr::Call(Box::new(Expr::Local(loop_var, pos)), next, pos);
            let looped = Expr::Seq(vec![body, again]);
            Ok(LambdaExpr {
                id: lam_id,
                params: pvars,
                rest: None,
                body: Expr::If(Box::new(test), Box::new(result), Box::new(looped)),
                name: Some(self.known.do_loop),
                pos,
            })
        })();
        self.lambda = outer;
        let l = r?;
        let call = Expr::Call(Box::new(Expr::Local(loop_var, pos)), inits, pos);
        Ok(self.letrec(
            vec![loop_var],
            vec![(Some(loop_var), Expr::Lambda(Box::new(l)))],
            call,
        ))
    }

    fn define_syntax(&mut self, args: &[Syn], env: &Env, pos: Pos) -> R<(Ident, Rc<Macro>)> {
        let [Syn::Sym(id, _), spec] = args else {
            return err("define-syntax takes a name and a syntax-rules form", pos);
        };
        let m = self.syntax_rules(spec, env, id.sym)?;
        Ok((id.clone(), m))
    }

    fn syntax_rules(&mut self, spec: &Syn, env: &Env, name: Sym) -> R<Rc<Macro>> {
        let Some(items) = spec.as_list().filter(|i| !i.is_empty()) else {
            return err("expected a syntax-rules form", spec.pos());
        };
        let is_sr = match &items[0] {
            Syn::Sym(id, _) => self.special(id, env) == Some(Special::SyntaxRules),
            _ => false,
        };
        if !is_sr {
            // (define-syntax new old): an alias of another macro.
            if let Syn::Sym(id, _) = spec {
                if let Some(m) = self.macro_of(id, env) {
                    return Ok(m);
                }
            }
            return err("only syntax-rules transformers are supported", spec.pos());
        }
        let mut rest = &items[1..];
        let mut ellipsis = Ident::plain(self.known.ellipsis);
        if let Some(Syn::Sym(e, _)) = rest.first() {
            ellipsis = e.clone();
            rest = &rest[1..];
        }
        let Some((lits, rules)) = rest.split_first() else {
            return err("syntax-rules needs a literal list", spec.pos());
        };
        let Some(lits) = lits.as_list() else {
            return err(
                "syntax-rules literals must be a list of identifiers",
                lits.pos(),
            );
        };
        let mut literals = Vec::new();
        for l in lits {
            let Syn::Sym(id, _) = l else {
                return err("syntax-rules literals must be identifiers", l.pos());
            };
            literals.push(id.clone());
        }
        let mut out = Vec::new();
        for r in rules {
            let Some([pat, tmpl]) = r.as_list() else {
                return err("each syntax-rules rule must be (pattern template)", r.pos());
            };
            if !matches!(pat, Syn::List(items, _, _) if !items.is_empty()) {
                return err(
                    "a syntax-rules pattern must be a list starting with the keyword",
                    pat.pos(),
                );
            }
            out.push((pat.clone(), tmpl.clone()));
        }
        Ok(Rc::new(Macro {
            name,
            literals,
            ellipsis,
            rules: out,
            env: env.clone(),
        }))
    }

    /// `define-record-type` as a sequence of definitions using record primitives.
    fn record_definitions(&mut self, args: &[Syn], pos: Pos) -> R<Vec<Syn>> {
        if args.len() < 2 {
            return err(
                "define-record-type needs a type name, a constructor and a predicate",
                pos,
            );
        }
        let tname = match &args[0] {
            Syn::Sym(id, _) => id.clone(),
            Syn::List(items, _, _) if matches!(items.first(), Some(Syn::Sym(..))) => items[0]
                .as_ident()
                .cloned()
                .unwrap_or(Ident::plain(self.known.tmp)),
            other => return err("define-record-type: bad type name", other.pos()),
        };
        let mut fields: Vec<Ident> = Vec::new();
        let mut field_specs = Vec::new();
        for f in &args[3.min(args.len())..] {
            let Some(parts) = f.as_list().filter(|p| !p.is_empty() && p.len() <= 3) else {
                return err(
                    "define-record-type: field must be (name accessor [modifier])",
                    f.pos(),
                );
            };
            let Syn::Sym(fid, _) = &parts[0] else {
                return err(
                    "define-record-type: field name must be an identifier",
                    parts[0].pos(),
                );
            };
            fields.push(fid.clone());
            field_specs.push(parts.to_vec());
        }
        let p = pos;
        let sym = |s: &str, me: &mut Self| Syn::Sym(Ident::plain(me.syms.intern(s)), p);
        let def = |me: &mut Self, name: Syn, value: Syn| {
            let d = me.known.define_alias.clone();
            Syn::list(vec![Syn::Sym(d, p), name, value], p)
        };
        let quote = |me: &mut Self, s: Syn| {
            let q = me.known.quote_alias.clone();
            Syn::list(vec![Syn::Sym(q, p), s], p)
        };
        let type_var = Syn::Sym(tname.clone(), p);
        let mut out = Vec::new();
        let fields_syn = Syn::list(
            fields
                .iter()
                .map(|f| Syn::Sym(Ident::plain(f.sym), p))
                .collect(),
            p,
        );
        let qname = quote(self, Syn::Sym(Ident::plain(tname.sym), p));
        let qfields = quote(self, fields_syn);
        let mk = sym("%make-record-type", self);
        out.push(def(
            self,
            type_var.clone(),
            Syn::list(vec![mk, qname, qfields], p),
        ));
        // constructor
        match &args[1] {
            Syn::List(items, None, cpos) if !items.is_empty() => {
                let Syn::Sym(cname, _) = &items[0] else {
                    return err("define-record-type: bad constructor", *cpos);
                };
                let mut cargs = Vec::new();
                for a in &items[1..] {
                    let Syn::Sym(aid, _) = a else {
                        return err(
                            "define-record-type: constructor arguments must be field names",
                            a.pos(),
                        );
                    };
                    if !fields.iter().any(|f| f.same(aid)) {
                        return err(
                            format!(
                                "define-record-type: '{}' is not a field",
                                self.name(aid.sym)
                            ),
                            a.pos(),
                        );
                    }
                    cargs.push(aid.clone());
                }
                let mut call = vec![sym("%record", self), type_var.clone()];
                for f in &fields {
                    if cargs.iter().any(|a| a.same(f)) {
                        call.push(Syn::Sym(f.clone(), p));
                    } else {
                        call.push(Syn::Atom(Atom::Bool(false), p));
                    }
                }
                let formals = Syn::list(cargs.iter().map(|a| Syn::Sym(a.clone(), p)).collect(), p);
                let lam = self.lambda_syntax(formals, vec![Syn::list(call, p)], p);
                out.push(def(self, Syn::Sym(cname.clone(), p), lam));
            }
            Syn::Sym(cname, _) => {
                // A bare constructor name takes every field in order.
                let mut call = vec![sym("%record", self), type_var.clone()];
                call.extend(fields.iter().map(|f| Syn::Sym(f.clone(), p)));
                let formals = Syn::list(fields.iter().map(|f| Syn::Sym(f.clone(), p)).collect(), p);
                let lam = self.lambda_syntax(formals, vec![Syn::list(call, p)], p);
                out.push(def(self, Syn::Sym(cname.clone(), p), lam));
            }
            Syn::Atom(Atom::Bool(false), _) => {}
            other => return err("define-record-type: bad constructor", other.pos()),
        }
        // predicate
        if let Some(Syn::Sym(pname, _)) = args.get(2) {
            let x = Syn::Sym(Ident::plain(self.known.tmp), p);
            let body = Syn::list(vec![sym("%record?", self), x.clone(), type_var.clone()], p);
            let lam = self.lambda_syntax(Syn::list(vec![x], p), vec![body], p);
            out.push(def(self, Syn::Sym(pname.clone(), p), lam));
        }
        for (i, parts) in field_specs.iter().enumerate() {
            let x = Syn::Sym(Ident::plain(self.known.tmp), p);
            let idx = Syn::Atom(Atom::Num(Num::Int(i as i64)), p);
            if let Some(Syn::Sym(acc, _)) = parts.get(1) {
                let qacc = quote(self, Syn::Sym(Ident::plain(acc.sym), p));
                let body = Syn::list(
                    vec![
                        sym("%record-ref", self),
                        x.clone(),
                        type_var.clone(),
                        idx.clone(),
                        qacc,
                    ],
                    p,
                );
                let lam = self.lambda_syntax(Syn::list(vec![x.clone()], p), vec![body], p);
                out.push(def(self, Syn::Sym(acc.clone(), p), lam));
            }
            if let Some(Syn::Sym(modi, _)) = parts.get(2) {
                let v = Syn::Sym(Ident::plain(self.known.value), p);
                let qm = quote(self, Syn::Sym(Ident::plain(modi.sym), p));
                let body = Syn::list(
                    vec![
                        sym("%record-set!", self),
                        x.clone(),
                        type_var.clone(),
                        idx.clone(),
                        v.clone(),
                        qm,
                    ],
                    p,
                );
                let lam = self.lambda_syntax(Syn::list(vec![x.clone(), v], p), vec![body], p);
                out.push(def(self, Syn::Sym(modi.clone(), p), lam));
            }
        }
        Ok(out)
    }

    fn cond_expand(&mut self, clauses: &[Syn], pos: Pos) -> R<Vec<Syn>> {
        for c in clauses {
            let Some(parts) = c.as_list().filter(|p| !p.is_empty()) else {
                return err("cond-expand clause must be (requirement body ...)", c.pos());
            };
            if self.feature_match(&parts[0])? {
                return Ok(parts[1..].to_vec());
            }
        }
        let _ = pos;
        Ok(vec![])
    }

    fn feature_match(&mut self, req: &Syn) -> R<bool> {
        match req {
            Syn::Sym(id, _) => {
                let n = self.name(id.sym);
                Ok(n == "else" || crate::builtins::FEATURES.contains(&n.as_str()))
            }
            Syn::List(items, None, p) if !items.is_empty() => {
                let head = match &items[0] {
                    Syn::Sym(id, _) => self.name(id.sym),
                    _ => return err("bad cond-expand requirement", *p),
                };
                match head.as_str() {
                    "and" => {
                        for i in &items[1..] {
                            if !self.feature_match(i)? {
                                return Ok(false);
                            }
                        }
                        Ok(true)
                    }
                    "or" => {
                        for i in &items[1..] {
                            if self.feature_match(i)? {
                                return Ok(true);
                            }
                        }
                        Ok(false)
                    }
                    "not" if items.len() == 2 => Ok(!self.feature_match(&items[1])?),
                    "library" if items.len() == 2 => Ok(self.library_known(&items[1])),
                    _ => err("bad cond-expand requirement", *p),
                }
            }
            other => err("bad cond-expand requirement", other.pos()),
        }
    }

    fn library_name(&self, spec: &Syn) -> Option<String> {
        let parts = spec.as_list()?;
        let mut names = Vec::new();
        for p in parts {
            match p {
                Syn::Sym(id, _) => names.push(self.syms.name(id.sym).to_string()),
                Syn::Atom(Atom::Num(Num::Int(i)), _) => names.push(i.to_string()),
                _ => return None,
            }
        }
        Some(names.join(" "))
    }

    fn library_known(&self, spec: &Syn) -> bool {
        self.library_name(spec).is_some_and(|n| {
            crate::builtins::LIBRARIES.contains(&n.as_str()) || self.globals.libraries.contains(&n)
        })
    }

    /// `(arb:ref ((name id) ...) body ...)`: a scope in which each name
    /// stands for the stored node `id` (the global `@#ID`, which the VM
    /// loads from the knowledge base on first use), and the body.
    fn arb_ref_scope(&mut self, args: &[Syn], env: &Env, pos: Pos) -> R<(Vec<Syn>, Rc<Scope>)> {
        let Some((bindings, body)) = args.split_first() else {
            return err("arb:ref needs bindings ((name id) ...) and a body", pos);
        };
        if body.is_empty() {
            return err("arb:ref needs a body after its bindings", pos);
        }
        let Some(bs) = bindings.as_list() else {
            return err(
                "arb:ref: bindings must be a list of (name id)",
                bindings.pos(),
            );
        };
        let scope = Scope::new(env.clone());
        for b in bs {
            let pair = b.as_list().filter(|p| p.len() == 2);
            let (id, node) = match pair {
                Some([Syn::Sym(id, _), Syn::Atom(Atom::Num(n), _)]) => match n.to_u64() {
                    Some(node) => (id.clone(), node),
                    None => {
                        return err(
                            "arb:ref: an id must be a non-negative exact integer",
                            b.pos(),
                        )
                    }
                },
                _ => return err("arb:ref: each binding must be (name id)", b.pos()),
            };
            let target = self.syms.intern(&crate::arb::node_global_name(node));
            scope.bind(id, Binding::Global(target));
        }
        Ok((body.to_vec(), scope))
    }

    /// `(define-library name decl ...)`: the library's imports are checked,
    /// its name registered for later `import`s, and its body (the `begin`
    /// declarations) returned to run at top level in the library's own scope.
    /// In that scope every name the body defines stands for a global: the
    /// exported name for exports (or the outside name of a `rename`), a
    /// hidden name `NAME@(LIBRARY)` for the rest, so the library's private
    /// definitions neither see nor disturb the program's. The body sees the
    /// global environment (everything the REPL has) besides its own names.
    fn define_library(&mut self, args: &[Syn], pos: Pos) -> R<(Vec<Syn>, Env)> {
        let Some((name, decls)) = args.split_first() else {
            return err("define-library needs a name", pos);
        };
        let Some(lib) = self.library_name(name) else {
            return err(
                "define-library: the name must be a list of identifiers and integers",
                name.pos(),
            );
        };
        let mut body = Vec::new();
        // inner name -> outer name
        let mut exports: Vec<(Sym, Sym)> = Vec::new();
        for d in decls {
            let Some(parts) = d.as_list().filter(|p| !p.is_empty()) else {
                return err(
                    "define-library: expected (export ...), (import ...) or (begin ...)",
                    d.pos(),
                );
            };
            let head = match &parts[0] {
                Syn::Sym(id, _) => self.name(id.sym),
                _ => String::new(),
            };
            match head.as_str() {
                "export" => {
                    for e in &parts[1..] {
                        match e {
                            Syn::Sym(id, _) => exports.push((id.sym, id.sym)),
                            Syn::List(items, None, _) if items.len() == 3 => match (
                                &items[1], &items[2],
                            ) {
                                (Syn::Sym(inner, _), Syn::Sym(outer, _)) => {
                                    exports.push((inner.sym, outer.sym))
                                }
                                _ => return err(
                                    "define-library: (rename inner outer) takes two identifiers",
                                    e.pos(),
                                ),
                            },
                            other => return err("define-library: bad export spec", other.pos()),
                        }
                    }
                }
                "import" => {
                    for spec in &parts[1..] {
                        self.check_import(spec)?;
                    }
                }
                "begin" => body.extend(parts[1..].iter().cloned()),
                "include" | "include-ci" | "include-library-declarations" => {
                    return err(
                        format!("{head} is not available: Arbores reads no files"),
                        d.pos(),
                    )
                }
                "cond-expand" => {
                    for f in self.cond_expand(&parts[1..], d.pos())? {
                        if let Some(inner) = f.as_list() {
                            if matches!(inner.first(), Some(Syn::Sym(id, _)) if self.name(id.sym) == "begin")
                            {
                                body.extend(inner[1..].iter().cloned());
                            }
                        }
                    }
                }
                _ => {
                    return err(
                        format!("define-library: unknown declaration '{head}'"),
                        d.pos(),
                    )
                }
            }
        }
        let scope = Scope::new(None);
        let mut defined = Vec::new();
        for f in &body {
            self.defined_names(f, &mut defined);
        }
        for n in defined {
            let target = match exports.iter().find(|(inner, _)| *inner == n) {
                Some((_, outer)) => *outer,
                None => {
                    let hidden = format!("{}@({})", self.name(n), lib);
                    self.syms.intern(&hidden)
                }
            };
            if !scope.bindings.borrow().iter().any(|(id, _)| id.sym == n) {
                scope.bind(Ident::plain(n), Binding::Global(target));
            }
        }
        self.globals.libraries.insert(lib);
        Ok((body, Some(scope)))
    }

    /// Names a library body form defines, found without expanding macros
    /// (`define`, `define-values`, `define-record-type`, `define-syntax`,
    /// and those inside `begin`).
    fn defined_names(&self, form: &Syn, out: &mut Vec<Sym>) {
        defined_names(form, self.syms, out)
    }

    fn check_import(&mut self, spec: &Syn) -> R<()> {
        // (only lib id...), (except lib id...), (prefix lib p), (rename lib (a b)...)
        if let Some(parts) = spec.as_list() {
            if let Some(Syn::Sym(id, _)) = parts.first() {
                let head = self.name(id.sym);
                if matches!(head.as_str(), "only" | "except" | "prefix" | "rename")
                    && parts.len() >= 2
                {
                    return self.check_import(&parts[1]);
                }
            }
        }
        if self.library_known(spec) {
            Ok(())
        } else {
            let shown = crate::printer::syn_to_string(spec, self.syms);
            err(format!("import: unknown library {shown}"), spec.pos())
        }
    }

    // ---- quasiquote --------------------------------------------------------

    fn quasi(&mut self, t: &Syn, depth: usize, env: &Env) -> R<Expr> {
        match t {
            Syn::List(items, tail, pos) => {
                if let (Some(Syn::Sym(id, _)), None, 2) = (items.first(), tail, items.len()) {
                    match self.special(id, env) {
                        Some(Special::Unquote) => {
                            if depth == 1 {
                                return self.compile(&items[1], env);
                            }
                            let inner = self.quasi(&items[1], depth - 1, env)?;
                            return Ok(self.wrap_list2(items[0].clone(), inner, *pos));
                        }
                        Some(Special::Quasiquote) => {
                            let inner = self.quasi(&items[1], depth + 1, env)?;
                            return Ok(self.wrap_list2(items[0].clone(), inner, *pos));
                        }
                        _ => {}
                    }
                }
                // Build from the end: tail, then each element (splicing where asked).
                let mut acc = match tail {
                    Some(t) => self.quasi(t, depth, env)?,
                    None => Expr::Const(Value::Null),
                };
                for item in items.iter().rev() {
                    if let Syn::List(parts, None, ipos) = item {
                        if let (Some(Syn::Sym(id, _)), 2) = (parts.first(), parts.len()) {
                            if self.special(id, env) == Some(Special::UnquoteSplicing) {
                                if depth == 1 {
                                    let spliced = self.compile(&parts[1], env)?;
                                    acc = self.prim_call("append", vec![spliced, acc], *ipos);
                                    continue;
                                }
                                let inner = self.quasi(&parts[1], depth - 1, env)?;
                                let e = self.wrap_list2(parts[0].clone(), inner, *ipos);
                                acc = self.prim_call("cons", vec![e, acc], *ipos);
                                continue;
                            }
                        }
                    }
                    let e = self.quasi(item, depth, env)?;
                    acc = self.prim_call("cons", vec![e, acc], *pos);
                }
                Ok(acc)
            }
            Syn::Vector(items, pos) => {
                let as_list = Syn::List(items.clone(), None, *pos);
                let l = self.quasi(&as_list, depth, env)?;
                Ok(self.prim_call("list->vector", vec![l], *pos))
            }
            other => Ok(Expr::Const(self.datum(other)?)),
        }
    }

    fn wrap_list2(&mut self, head: Syn, inner: Expr, pos: Pos) -> Expr {
        let h = match self.datum(&head) {
            Ok(v) => v,
            Err(_) => Value::Unspecified,
        };
        let tail = self.prim_call("cons", vec![inner, Expr::Const(Value::Null)], pos);
        self.prim_call("cons", vec![Expr::Const(h), tail], pos)
    }

    // ---- data --------------------------------------------------------------

    pub fn atom_value(&mut self, a: &Atom) -> Value {
        atom_value(self.heap, a)
    }

    /// Quoted syntax to a value (aliases stripped, datum labels resolved).
    pub fn datum(&mut self, s: &Syn) -> R<Value> {
        let mut labels: Vec<(u32, Value)> = Vec::new();
        let v = syn_to_value(self.heap, s, &mut labels, 0)?;
        if labels.iter().any(|(_, v)| matches!(v, Value::Undefined)) {
            return err("datum label used before it is defined", s.pos());
        }
        Ok(v)
    }
}

pub fn atom_value(heap: &mut Heap, a: &Atom) -> Value {
    match a {
        Atom::Bool(b) => Value::Bool(*b),
        Atom::Num(n) => n.clone().into_value(heap),
        Atom::Char(c) => Value::Char(*c),
        Atom::Str(s) => heap.string(s),
        Atom::Bytes(b) => heap.alloc(Object::Bytevector(b.to_vec())),
        Atom::Unspecified => Value::Unspecified,
        Atom::Eof => Value::Eof,
    }
}

/// Converts syntax to a datum. Labels (`#0=`) are resolved by allocating the
/// container first and patching references to it.
pub fn syn_to_value(
    heap: &mut Heap,
    s: &Syn,
    labels: &mut Vec<(u32, Value)>,
    depth: usize,
) -> R<Value> {
    if depth > crate::reader::MAX_DEPTH + 10 {
        return err("datum nested too deeply", s.pos());
    }
    Ok(match s {
        Syn::Sym(id, _) => Value::Sym(id.base()),
        Syn::Atom(a, _) => atom_value(heap, a),
        Syn::LabelRef(n, pos) => match labels.iter().rev().find(|(k, _)| k == n) {
            Some((_, v)) => *v,
            None => return err(format!("datum label #{n}# is not defined"), *pos),
        },
        Syn::LabelDef(n, inner, _) => match &**inner {
            Syn::List(items, tail, _) if !items.is_empty() => {
                // Allocate the first pair now so references inside can point at it.
                let head = heap.cons(Value::Unspecified, Value::Null);
                labels.push((*n, head));
                fill_list(heap, head, items, tail.as_deref(), labels, depth)?;
                head
            }
            Syn::Vector(items, _) => {
                let v = heap.alloc(Object::Vector(Vec::new()));
                labels.push((*n, v));
                let mut out = Vec::with_capacity(items.len());
                for i in items.iter() {
                    out.push(syn_to_value(heap, i, labels, depth + 1)?);
                }
                if let Some(Object::Vector(slot)) = heap.obj_mut(v) {
                    *slot = out;
                }
                v
            }
            other => {
                let v = syn_to_value(heap, other, labels, depth + 1)?;
                labels.push((*n, v));
                v
            }
        },
        Syn::List(items, tail, _) => {
            if items.is_empty() {
                match tail {
                    Some(t) => syn_to_value(heap, t, labels, depth + 1)?,
                    None => Value::Null,
                }
            } else {
                let head = heap.cons(Value::Unspecified, Value::Null);
                fill_list(heap, head, items, tail.as_deref(), labels, depth)?;
                head
            }
        }
        Syn::Vector(items, _) => {
            let mut out = Vec::with_capacity(items.len());
            for i in items.iter() {
                out.push(syn_to_value(heap, i, labels, depth + 1)?);
            }
            heap.alloc(Object::Vector(out))
        }
    })
}

fn fill_list(
    heap: &mut Heap,
    head: Value,
    items: &[Syn],
    tail: Option<&Syn>,
    labels: &mut Vec<(u32, Value)>,
    depth: usize,
) -> R<()> {
    let mut cell = head;
    for (i, item) in items.iter().enumerate() {
        let v = syn_to_value(heap, item, labels, depth + 1)?;
        let next = if i + 1 < items.len() {
            heap.cons(Value::Unspecified, Value::Null)
        } else {
            match tail {
                Some(t) => syn_to_value(heap, t, labels, depth + 1)?,
                None => Value::Null,
            }
        };
        if let Some(Object::Pair(a, d)) = heap.obj_mut(cell) {
            *a = v;
            *d = next;
        }
        cell = next;
    }
    Ok(())
}

/// A datum to syntax, for `eval`. Cycles and non-data objects are refused.
pub fn value_to_syn(heap: &Heap, syms: &mut SymbolTable, v: Value) -> Result<Syn, String> {
    value_to_syn_at(heap, syms, v, 0)
}

fn value_to_syn_at(
    heap: &Heap,
    syms: &mut SymbolTable,
    v: Value,
    depth: usize,
) -> Result<Syn, String> {
    if depth > MAX_NESTING {
        return Err("expression nested too deeply (or cyclic)".into());
    }
    let p = Pos::NONE;
    Ok(match v {
        Value::Sym(s) => Syn::Sym(Ident::plain(s), p),
        Value::Null => Syn::nil(p),
        Value::Bool(b) => Syn::Atom(Atom::Bool(b), p),
        Value::Int(i) => Syn::Atom(Atom::Num(Num::Int(i)), p),
        Value::Float(f) => Syn::Atom(Atom::Num(Num::Float(f)), p),
        Value::Char(c) => Syn::Atom(Atom::Char(c), p),
        Value::Unspecified => Syn::Atom(Atom::Unspecified, p),
        Value::Eof => Syn::Atom(Atom::Eof, p),
        Value::Obj(r) => match heap.get(r) {
            Object::Str(s) => Syn::Atom(Atom::Str(s.iter().collect::<String>().into()), p),
            Object::Big(_) | Object::Rat(_) => match Num::from_value(heap, v) {
                Some(n) => Syn::Atom(Atom::Num(n), p),
                None => return Err("bad number".into()),
            },
            Object::Bytevector(b) => Syn::Atom(Atom::Bytes(b.clone().into()), p),
            Object::Pair(..) => {
                let mut items = Vec::new();
                let mut l = v;
                while let Some((a, d)) = heap.pair(l) {
                    items.push(value_to_syn_at(heap, syms, a, depth + 1)?);
                    l = d;
                    if items.len() > 1_000_000 {
                        return Err("expression is a cyclic or enormous list".into());
                    }
                }
                let tail = match l {
                    Value::Null => None,
                    other => Some(Rc::new(value_to_syn_at(heap, syms, other, depth + 1)?)),
                };
                Syn::List(items.into(), tail, p)
            }
            Object::Vector(items) => {
                let mut out = Vec::with_capacity(items.len());
                for i in items.iter() {
                    out.push(value_to_syn_at(heap, syms, *i, depth + 1)?);
                }
                Syn::Vector(out.into(), p)
            }
            _ => {
                return Err(format!(
                    "cannot evaluate {}",
                    crate::printer::write_string(heap, syms, v)
                ))
            }
        },
        Value::Prim(_) | Value::Undefined => {
            return Err(format!(
                "cannot evaluate {}",
                crate::printer::write_string(heap, syms, v)
            ))
        }
    })
}

/// Names a top-level form defines, found without expanding macros
/// (`define`, `define-values`, `define-record-type`, `define-syntax`, and
/// those inside `begin`).
pub fn defined_names(form: &Syn, syms: &SymbolTable, out: &mut Vec<Sym>) {
    let Some(items) = form.as_list() else { return };
    let Some(Syn::Sym(head, _)) = items.first() else {
        return;
    };
    let sym = |s: &Syn, out: &mut Vec<Sym>| {
        if let Syn::Sym(id, _) = s {
            out.push(id.sym);
        }
    };
    match syms.name(head.sym) {
        "begin" => {
            for f in &items[1..] {
                defined_names(f, syms, out);
            }
        }
        "define" | "define-syntax" => {
            let mut target = items.get(1);
            // (define ((f a) b) ...) names f
            while let Some(Syn::List(inner, _, _)) = target {
                target = inner.first();
            }
            if let Some(t) = target {
                sym(t, out);
            }
        }
        "define-values" => {
            if let Some(Syn::List(formals, tail, _)) = items.get(1) {
                for f in formals.iter().chain(tail.as_deref()) {
                    sym(f, out);
                }
            } else if let Some(s) = items.get(1) {
                sym(s, out);
            }
        }
        "define-record-type" => {
            for (i, part) in items.iter().enumerate().skip(1) {
                match (i, part) {
                    (1 | 2, Syn::List(inner, _, _)) => {
                        if let Some(f) = inner.first() {
                            sym(f, out);
                        }
                    }
                    (1..=3, s) => sym(s, out),
                    (_, Syn::List(field, _, _)) => {
                        for f in field.iter().skip(1) {
                            sym(f, out);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}
