//! The front end: expands macros and special forms, resolves every variable,
//! and produces the [`Expr`] the code generator compiles.
//!
//! This module holds the walk itself (forms, variables, applications, macro
//! uses) and the dispatch over special forms; the forms live by family in
//! the submodules:
//!
//! - `core`: `quote`, `lambda`, `case-lambda`, `define`, `set!`, `if`,
//!   `begin`, `delay` and the rest the code generator knows directly.
//! - `body`: bodies with internal definitions (`letrec*` semantics).
//! - `derived`: `let` and its kin, `cond`, `case`, `and`, `or`, `when`,
//!   `unless`, `do`: rewritten into the core.
//! - `macros`: `define-syntax`, `let-syntax`, `syntax-rules` transformers.
//! - `records`: `define-record-type` as definitions over record primitives.
//! - `library`: `define-library`, `import`, `cond-expand`.
//! - `arb_ref`: `arb:ref`, names bound to stored nodes.
//! - `quasiquote`: `quasiquote` to list construction.
//!
//! To add a special form: a case of [`Special`] with its name, an arm in
//! `Front::special_form`, and its method in the submodule of its family.

mod arb_ref;
mod body;
mod bundled;
mod core;
mod derived;
mod include;
mod library;
mod macros;
mod quasiquote;
mod records;
mod standard;

use std::rc::Rc;

use reblessive::Stk;

use super::ast::{Expr, VarInfo};
use super::globals::{GlobalSyntax, Globals};
use super::special::Special;
use super::syntax_rules::Expander;
use super::{CompileError, Known};
use crate::datum;
use crate::heap::Heap;
use crate::host::Host;
use crate::pos::Pos;
use crate::symbol::{Sym, SymbolTable};
use crate::syntax::scope::{resolve, resolve_free, Macro, Meaning, Scope, VarId};
use crate::syntax::{Atom, Ident, Syn};
use crate::value::code::Inline;
use crate::value::Value;

pub use library::{defined_names, features};

type R<T> = Result<T, CompileError>;
type Env = Option<Rc<Scope>>;

/// Deepest nesting of macro patterns and templates, import sets and
/// feature requirements (their walks recurse). Code itself nests as deep
/// as the memory cap allows: its walk runs on a heap stack ([`Stk`]).
pub(super) const MAX_NESTING: usize = 1000;
/// Levels of code nesting between two checks of the memory cap.
const ROOM_CHECK_LEVELS: usize = 1024;
/// A generous bound on what one level of nesting costs while it is
/// compiled (the walk's frames on the heap stack, the syntax and the
/// expression built): what is checked against the cap.
const LEVEL_BYTES: usize = 4096;
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
    /// Levels of code being compiled.
    depth: usize,
    /// Levels of the walks that recurse on the Rust stack.
    nesting: usize,
    expansions: usize,
    /// Syntax nodes macro expansions may still produce for this form.
    expansion_budget: usize,
    /// The environment of top-level forms: none at the real top level, a
    /// library's scope for the body of a `define-library`.
    toplevel_env: Env,
    /// Where `include` reads files: the engine's host, which grants or
    /// refuses each path as it does for `(scheme file)`. None: `include`
    /// is an error.
    pub host: Option<&'a mut dyn Host>,
    /// Compiling the engine's own code: the prelude or a bundled
    /// library's body.
    pub internal: bool,
    /// Compiling for `eval` in an environment `environment` made: its
    /// bindings (the code's outermost scope is `Scope::new_environment`).
    pub eval_env: Option<Rc<EvalEnv>>,
}

/// The bindings of an environment `environment` made (R7RS 6.12), as
/// `eval` compiles in it: each name with the global (or syntax) it stands
/// for, and for each other name the expression holds, the unbound global
/// a reference to it stands for (whose name says why).
#[derive(Default)]
pub struct EvalEnv {
    pub names: std::collections::BTreeMap<Sym, Sym>,
    pub missing: std::collections::BTreeMap<Sym, Sym>,
}

/// The bindings and the body of `(KW (BINDING...) BODY...)`, whose
/// arguments are `args`.
fn bindings_and_body<'s>(args: &'s [Syn], pos: Pos, kw: &str) -> R<(&'s [Syn], &'s [Syn])> {
    let Some((bindings, body)) = args.split_first() else {
        return err(format!("{kw} needs bindings and a body"), pos);
    };
    let Some(bs) = bindings.as_list() else {
        return err(format!("{kw} bindings must be a list"), bindings.pos());
    };
    Ok((bs, body))
}

fn err<T>(message: impl Into<String>, pos: Pos) -> R<T> {
    Err(CompileError {
        message: message.into(),
        pos,
        out_of_memory: false,
    })
}

impl<'a> Front<'a> {
    pub fn new(
        syms: &'a mut SymbolTable,
        heap: &'a mut Heap,
        globals: &'a mut Globals,
        known: &'a Known,
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
            nesting: 0,
            expansions: 0,
            expansion_budget: MAX_EXPANSION_NODES,
            toplevel_env: None,
            host: None,
            internal: false,
            eval_env: None,
        }
    }

    /// Is `env` within code `eval` compiles in an environment of
    /// `environment`'s, where nothing may be defined or assigned (R7RS
    /// 6.12: its bindings are immutable, as is the environment)?
    fn in_eval_env(&self, env: &Env) -> bool {
        self.eval_env.is_some() && env.as_ref().is_some_and(|s| s.in_environment)
    }

    /// The error of a definition (by `kw`) where `in_eval_env` holds.
    fn check_mutable_env(&self, env: &Env, pos: Pos, kw: &str) -> R<()> {
        if self.in_eval_env(env) {
            return err(
                format!("{kw}: the environment of (environment ...) is immutable (R7RS 6.12): nothing can be defined in it"),
                pos,
            );
        }
        Ok(())
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

    /// What an identifier means here: a global renamed by an import set
    /// (`b:car` after `(import (prefix (scheme base) b:))`) means the
    /// global it stands for; a name an import set left out, written in the
    /// program's own text (not introduced by a macro, not in a library or
    /// a stored node), means nothing.
    fn meaning(&self, id: &Ident, env: &Env) -> Meaning {
        let found = match resolve_free(id, env) {
            Ok(m) => m,
            // A name of code `eval` compiles in an environment: what the
            // environment binds it to, else unbound (the session's
            // globals are not there).
            Err(free) if free.in_environment && !self.engine_code(id) => {
                if let Some(ev) = &self.eval_env {
                    let g = ev
                        .names
                        .get(&free.sym)
                        .or_else(|| ev.missing.get(&free.sym));
                    return Meaning::Global(g.copied().unwrap_or(free.sym));
                }
                Meaning::Global(free.sym)
            }
            Err(free) => Meaning::Global(free.sym),
        };
        match found {
            // The engine's own code (the prelude, a bundled library's
            // body, what a prelude macro introduces) means the globals it
            // names, whatever a program's imports renamed to those names
            // (`car` after importing (srfi 101)'s).
            Meaning::Global(s) if self.internal || introduced_by_builtin(id) => Meaning::Global(s),
            Meaning::Global(s)
                if id.alias.is_none() && s == id.sym && self.toplevel_env.is_none() =>
            {
                match self.globals.hidden.get(&s) {
                    Some(h) => Meaning::Global(*h),
                    None => Meaning::Global(self.globals.alias_target(s)),
                }
            }
            Meaning::Global(s) => Meaning::Global(self.globals.alias_target(s)),
            m => m,
        }
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
    pub async fn toplevel(&mut self, stk: &mut Stk, form: &Syn, env: &Env) -> R<Expr> {
        self.toplevel_env = env.clone();
        self.compile(stk, form, env).await
    }

    fn at_toplevel(&self, env: &Env) -> bool {
        match (env, &self.toplevel_env) {
            (None, None) => true,
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// A definition by `kw` where it is compiled as a global one: only at
    /// the top level (a body's definitions are handled by `body`).
    fn check_toplevel(&self, env: &Env, pos: Pos, kw: &str) -> R<()> {
        self.check_mutable_env(env, pos, kw)?;
        if self.at_toplevel(env) {
            return Ok(());
        }
        err(
            format!("{kw} is only allowed at the top level or at the start of a body"),
            pos,
        )
    }

    /// The global a top-level definition of `id` defines: its own name, or
    /// inside a library the hidden or exported name the library gave it.
    /// A definition of a name an import renamed makes it a global of its
    /// own again.
    fn global_target(&mut self, id: &Ident, env: &Env) -> Sym {
        match resolve(id, env) {
            Meaning::Global(s) => {
                self.globals.aliases.remove(&s);
                self.globals.hidden.remove(&s);
                s
            }
            _ => id.sym,
        }
    }

    /// If `form` is a top-level `begin` (possibly produced by a macro), its forms.
    /// Each form comes with the environment it is compiled in.
    pub fn toplevel_begin(&mut self, form: &Syn, env: &Env) -> R<Option<Vec<(Syn, Env)>>> {
        self.toplevel_env = env.clone();
        let mut form = form.clone();
        loop {
            let Syn::List(items, tail, pos) = &form else {
                return Ok(None);
            };
            let Some(Syn::Sym(head, _)) = items.first() else {
                return Ok(None);
            };
            if let Some(m) = self.macro_of(head, env) {
                form = self.expand(&m, &form, env, *pos)?;
                continue;
            }
            // A dotted list is a macro use or an error (the expression's).
            if tail.is_some() {
                return Ok(None);
            }
            let special = self.special(head, env);
            // A bundled library an import needs runs first, then the
            // import (or the define-library that imports it) comes again.
            let specs = match special {
                Some(Special::Import) => items[1..].to_vec(),
                Some(Special::DefineLibrary) if env.is_none() => {
                    library::library_imports(&items[1..], self.syms)
                }
                _ => vec![],
            };
            if let Some(first) = self.bundled_to_load(&specs)?.first() {
                let (body, scope) = self.load_bundled(first)?;
                let mut forms: Vec<(Syn, Env)> =
                    body.into_iter().map(|f| (f, scope.clone())).collect();
                forms.push((form.clone(), env.clone()));
                return Ok(Some(forms));
            }
            let with = |(forms, env): (Vec<Syn>, Env)| {
                forms.into_iter().map(|f| (f, env.clone())).collect()
            };
            return match special {
                Some(Special::Begin) => Ok(Some(with((items[1..].to_vec(), env.clone())))),
                Some(Special::Include) => {
                    let ci = self.name(head.sym) == "include-ci";
                    let forms = self.include_forms(&items[1..], ci, *pos)?;
                    Ok(Some(with((forms, env.clone()))))
                }
                Some(Special::DefineLibrary) if env.is_none() => self
                    .define_library(&items[1..], *pos)
                    .map(|d| Some(with(d))),
                // At top level the body's definitions are top-level
                // definitions, made in a scope that also binds the names.
                Some(Special::ArbRef) => {
                    let (body, scope) = self.arb_ref_scope(&items[1..], env, *pos)?;
                    Ok(Some(with((body, Some(scope)))))
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
        // A use of a prelude binding form in the program's own text is
        // checked first (its own expansion steps are not).
        if m.builtin {
            if let Some(Syn::Sym(head, _)) = form.as_list().and_then(|i| i.first()) {
                if !introduced_by_builtin(head) {
                    self.check_prelude_use(m, form)?;
                }
            }
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
            CompileError {
                message: e,
                pos,
                out_of_memory: false,
            }
        })
    }

    // ---- expressions -------------------------------------------------------

    /// Compiles one expression. Every walk into nested code goes through
    /// here, one level deeper: the walk runs on the heap stack `stk`, not
    /// the Rust stack, so nesting is bounded by the memory cap, which is
    /// checked every [`ROOM_CHECK_LEVELS`] levels.
    pub async fn compile(&mut self, stk: &mut Stk, form: &Syn, env: &Env) -> R<Expr> {
        self.deeper(form.pos())?;
        let r = stk.run(|stk| self.compile_inner(stk, form, env)).await;
        self.depth -= 1;
        r
    }

    /// Runs `walk`, a step of a walk that recurses on the Rust stack (import
    /// sets, feature requirements), one level deeper: past [`MAX_NESTING`]
    /// levels it is an error.
    fn nested<T>(&mut self, pos: Pos, walk: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        if self.nesting >= MAX_NESTING {
            return err(format!("nested deeper than {MAX_NESTING} levels"), pos);
        }
        self.nesting += 1;
        let r = walk(self);
        self.nesting -= 1;
        r
    }

    /// One level deeper into the code: past another [`ROOM_CHECK_LEVELS`]
    /// levels, is there room for them under the memory cap?
    fn deeper(&mut self, pos: Pos) -> R<()> {
        if self.depth > 0
            && self.depth % ROOM_CHECK_LEVELS == 0
            && self
                .heap
                .check_room(ROOM_CHECK_LEVELS * LEVEL_BYTES)
                .is_err()
        {
            return Err(CompileError {
                message: format!(
                    "memory limit exceeded: the code nests more than {} levels deep",
                    self.depth
                ),
                pos,
                out_of_memory: true,
            });
        }
        self.depth += 1;
        Ok(())
    }

    async fn compile_inner(&mut self, stk: &mut Stk, form: &Syn, env: &Env) -> R<Expr> {
        match form {
            Syn::Sym(id, pos) => self.variable(id, env, *pos),
            Syn::Atom(a, _) => Ok(Expr::Const(self.atom_value(a))),
            Syn::Vector(..) => Ok(Expr::Const(self.datum(form)?)),
            Syn::LabelDef(_, _, pos) | Syn::LabelRef(_, pos) => {
                err("datum labels are only allowed in quoted data", *pos)
            }
            Syn::List(items, tail, pos) => {
                // A macro use may be a dotted list, `(m a . b)`, which a
                // pattern with a tail matches (R7RS 4.3.2); nothing else may.
                let dotted = || err("a dotted list is not a valid expression", *pos);
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
                            return self.compile(stk, &out, env).await;
                        }
                        Meaning::Global(s) => match self.globals.syntax.get(&s).cloned() {
                            Some(GlobalSyntax::Macro(m)) => {
                                let out = self.expand(&m, form, env, *pos)?;
                                return self.compile(stk, &out, env).await;
                            }
                            Some(GlobalSyntax::Special(_)) if tail.is_some() => return dotted(),
                            Some(GlobalSyntax::Special(sp)) => {
                                return stk
                                    .run(|stk| self.special_form(stk, sp, items, env, *pos))
                                    .await
                            }
                            None => {}
                        },
                        Meaning::Var(_) => {}
                    }
                }
                if tail.is_some() {
                    return dotted();
                }
                self.application(stk, items, env, *pos).await
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
                let s = self.cell_for(s, id);
                Ok(Expr::Global(self.globals.index(s), pos))
            }
        }
    }

    /// Whether `id` belongs to the engine's own code: the prelude or a
    /// bundled library being compiled, or what one of their macros
    /// introduced into a program.
    pub(super) fn engine_code(&self, id: &Ident) -> bool {
        self.internal || introduced_by_builtin(id)
    }

    /// The global `id`, which means global `s`, reads and sets: the
    /// engine's own cell of `s` for the engine's code, `s` itself for a
    /// program's (`globals::ENGINE_CELL`).
    pub(super) fn cell_for(&mut self, s: Sym, id: &Ident) -> Sym {
        if self.engine_code(id) {
            self.engine_cell(s)
        } else {
            s
        }
    }

    /// The engine's own cell of global `s` (`Globals::engine_cell`).
    pub(super) fn engine_cell(&mut self, s: Sym) -> Sym {
        self.globals.engine_cell(self.syms, s)
    }

    fn note_reference(&mut self, v: VarId) {
        if self.vars[v as usize].lambda != self.lambda {
            self.vars[v as usize].captured = true;
        }
    }

    async fn application(&mut self, stk: &mut Stk, items: &[Syn], env: &Env, pos: Pos) -> R<Expr> {
        // Inline a few primitives when the head is the untouched global.
        if let Syn::Sym(id, _) = &items[0] {
            if let Meaning::Global(s) = self.meaning(id, env) {
                if let Some(op) = Inline::from_name(self.syms.name(s)) {
                    if op.arity() == items.len() - 1 {
                        let args = self.compile_all(stk, &items[1..], env).await?;
                        return Ok(Expr::Inline(op, args, pos));
                    }
                }
            }
        }
        let f = self.compile(stk, &items[0], env).await?;
        let args = self.compile_all(stk, &items[1..], env).await?;
        Ok(Expr::Call(Box::new(f), args, pos))
    }

    /// Each form compiled, in order.
    async fn compile_all(&mut self, stk: &mut Stk, forms: &[Syn], env: &Env) -> R<Vec<Expr>> {
        let mut out = Vec::with_capacity(forms.len());
        for f in forms {
            out.push(self.compile(stk, f, env).await?);
        }
        Ok(out)
    }

    /// A call of a primitive by index, whatever the global of its name
    /// holds now (what derived forms expand into).
    fn prim_call(&self, prim: Value, args: Vec<Expr>, pos: Pos) -> Expr {
        Expr::Call(Box::new(Expr::Const(prim)), args, pos)
    }

    async fn body_of(
        &mut self,
        stk: &mut Stk,
        items: &[Syn],
        env: &Env,
        pos: Pos,
        what: &str,
    ) -> R<Expr> {
        if items.is_empty() {
            return err(
                format!("{what} needs at least one expression in its body"),
                pos,
            );
        }
        self.body(stk, items, env, pos).await
    }

    async fn seq(&mut self, stk: &mut Stk, items: &[Syn], env: &Env) -> R<Expr> {
        if items.is_empty() {
            return Ok(Expr::Const(Value::Unspecified));
        }
        let mut out = self.compile_all(stk, items, env).await?;
        Ok(if out.len() == 1 {
            out.pop().unwrap_or(Expr::Const(Value::Unspecified))
        } else {
            Expr::Seq(out)
        })
    }

    /// Forms in sequence; at the top level each is compiled as a top-level
    /// form (its definitions are global definitions).
    async fn toplevel_seq(&mut self, stk: &mut Stk, forms: &[Syn], env: &Env) -> R<Expr> {
        if env.is_some() {
            return self.seq(stk, forms, env).await;
        }
        let out = self.compile_all(stk, forms, env).await?;
        Ok(if out.is_empty() {
            Expr::Const(Value::Unspecified)
        } else {
            Expr::Seq(out)
        })
    }

    // ---- special forms -----------------------------------------------------

    async fn special_form(
        &mut self,
        stk: &mut Stk,
        sp: Special,
        items: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<Expr> {
        let args = &items[1..];
        let kw = match &items[0] {
            Syn::Sym(id, _) => self.name(id.sym),
            _ => String::new(),
        };
        match sp {
            Special::Quote => self.quote(args, pos),
            Special::Quasiquote => {
                if args.len() != 1 {
                    return err("quasiquote takes exactly one template", pos);
                }
                self.quasi(stk, &args[0], 1, env).await
            }
            Special::Unquote | Special::UnquoteSplicing => {
                err(format!("{kw} outside of quasiquote"), pos)
            }
            Special::Lambda => self.lambda_form(stk, args, env, pos).await,
            Special::CaseLambda => self.case_lambda(stk, args, env).await,
            Special::Define => self.define_global(stk, args, env, pos).await,
            Special::Set => self.set(stk, args, env, pos).await,
            Special::If => self.if_form(stk, args, env, pos).await,
            Special::Begin => self.toplevel_seq(stk, args, env).await,
            Special::Let => self.let_form(stk, args, env, pos).await,
            Special::LetStar => self.let_star_form(stk, args, env, pos).await,
            Special::Letrec | Special::LetrecStar => {
                self.letrec_form(stk, args, env, pos, &kw).await
            }
            Special::Cond => self.cond(stk, args, env, pos).await,
            Special::Case => self.case(stk, args, env, pos).await,
            Special::And => self.and(stk, args, env).await,
            Special::Or => self.or(stk, args, env, pos).await,
            Special::When | Special::Unless => {
                self.when_unless(stk, sp == Special::When, args, env, pos, &kw)
                    .await
            }
            Special::Do => self.do_loop(stk, args, env, pos).await,
            Special::DefineSyntax => self.define_syntax_global(args, env, pos),
            Special::LetSyntax | Special::LetrecSyntax => {
                self.let_syntax(stk, sp == Special::LetrecSyntax, args, env, pos, &kw)
                    .await
            }
            Special::SyntaxRules => err(
                "syntax-rules is only valid as the transformer of define-syntax or let-syntax",
                pos,
            ),
            Special::DefineRecordType => self.define_record_type(stk, args, env, pos).await,
            Special::Delay | Special::DelayForce | Special::MakePromiseLazy => {
                self.delay(stk, sp == Special::Delay, args, env, pos, &kw)
                    .await
            }
            Special::Include => {
                let forms = self.include_forms(args, kw == "include-ci", pos)?;
                self.toplevel_seq(stk, &forms, env).await
            }
            Special::CondExpand => {
                let chosen = self.cond_expand(args)?;
                self.toplevel_seq(stk, &chosen, env).await
            }
            Special::Import => {
                self.check_mutable_env(env, pos, "import")?;
                self.import(args)?;
                Ok(Expr::Const(Value::Unspecified))
            }
            Special::DefineLibrary => err("define-library is only allowed at the top level", pos),
            Special::ArbRef => {
                let (body, scope) = self.arb_ref_scope(args, env, pos)?;
                self.body(stk, &body, &Some(scope), pos).await
            }
            Special::SyntaxError => self.syntax_error(args, pos),
            Special::Parameterize
            | Special::Guard
            | Special::LetValues
            | Special::LetStarValues
            | Special::DefineValues => err(format!("{kw} is defined by the prelude"), pos),
        }
    }

    // ---- data --------------------------------------------------------------

    pub fn atom_value(&mut self, a: &Atom) -> Value {
        datum::atom_value(self.heap, a)
    }

    /// Quoted syntax to a value (aliases stripped, datum labels resolved).
    pub fn datum(&mut self, s: &Syn) -> R<Value> {
        datum::to_value(self.heap, s).map_err(|e| CompileError {
            message: e.message,
            pos: e.pos,
            out_of_memory: false,
        })
    }
}

/// Did a macro of the engine's own code (or the compiler) introduce `id`:
/// is the renaming its name went through last (the one whose original is
/// the name as written in a template) a builtin one?
fn introduced_by_builtin(id: &Ident) -> bool {
    let mut alias = id.alias.as_ref();
    let mut builtin = false;
    while let Some(a) = alias {
        builtin = a.builtin;
        alias = a.orig.alias.as_ref();
    }
    builtin
}

/// The hidden globals a name defined by each bundled library becomes
/// (`fold@(scheme list)`, ...).
pub fn bundled_hidden_names(name: &str) -> impl Iterator<Item = String> + '_ {
    bundled::BUNDLED.iter().map(move |b| b.hidden(name))
}

/// Every library `import` knows by name, standard and bundled (one name
/// of each bundled library: its canonical one), for the tests that go
/// over all of them.
#[cfg(test)]
pub(crate) fn library_names() -> Vec<&'static str> {
    let standard = standard::STANDARD.iter().map(|(name, _)| *name);
    let bundled = bundled::BUNDLED.iter().map(|b| b.canonical());
    standard.chain(bundled).collect()
}
