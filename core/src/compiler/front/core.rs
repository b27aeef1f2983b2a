//! The core forms: what the code generator knows directly, or nearly.

use reblessive::Stk;

use std::rc::Rc;

use super::{err, Env, Front, R};
use crate::compiler::ast::{Expr, LambdaExpr};
use crate::compiler::globals::GlobalSyntax;
use crate::compiler::special::Special;
use crate::pos::Pos;
use crate::symbol::Sym;
use crate::syntax::scope::{Binding, Meaning, Scope, VarId};
use crate::syntax::{Atom, Ident, Syn};
use crate::value::Value;

impl Front<'_> {
    pub(super) fn quote(&mut self, args: &[Syn], pos: Pos) -> R<Expr> {
        if args.len() != 1 {
            return err("quote takes exactly one datum", pos);
        }
        Ok(Expr::Const(self.datum(&args[0])?))
    }

    pub(super) async fn lambda_form(
        &mut self,
        stk: &mut Stk,
        args: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<Expr> {
        if args.is_empty() {
            return err("lambda needs parameters and a body", pos);
        }
        let l = self
            .lambda(stk, &args[0], &args[1..], env, None, pos)
            .await?;
        Ok(Expr::Lambda(Box::new(l)))
    }

    pub(super) async fn case_lambda(&mut self, stk: &mut Stk, args: &[Syn], env: &Env) -> R<Expr> {
        let mut clauses = Vec::new();
        for c in args {
            let Some(parts) = c.as_list().filter(|p| !p.is_empty()) else {
                return err(
                    format!(
                        "case-lambda: the clause {} is not (formals body ...)",
                        self.shown(c)
                    ),
                    c.pos(),
                );
            };
            self.check_formals(&parts[0], c, "case-lambda", &mut Vec::new())?;
            if parts.len() < 2 {
                return err(
                    format!("case-lambda: the clause {} has no body", self.shown(c)),
                    c.pos(),
                );
            }
            clauses.push(
                self.lambda(stk, &parts[0], &parts[1..], env, None, c.pos())
                    .await?,
            );
        }
        Ok(Expr::CaseLambda(clauses))
    }

    /// `define` at the top level (a body's definitions are handled by `body`).
    pub(super) async fn define_global(
        &mut self,
        stk: &mut Stk,
        args: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<Expr> {
        self.check_toplevel(env, pos, "define")?;
        let (name, value) = self.definition(stk, args, env, pos).await?;
        let name = self.global_target(&Ident::plain(name), env);
        if let Some(GlobalSyntax::Special(_) | GlobalSyntax::Macro(_)) =
            self.globals.syntax.get(&name)
        {
            self.globals.syntax.remove(&name);
        }
        let g = self.globals.index(name);
        if !self.internal {
            return Ok(Expr::DefineGlobal(g, Box::new(value)));
        }
        // The engine's definition goes to its own cell and, for programs,
        // to the plain one.
        let cell = self.engine_cell(name);
        let c = self.globals.index(cell);
        Ok(Expr::Seq(vec![
            Expr::DefineGlobal(c, Box::new(value)),
            Expr::DefineGlobal(g, Box::new(Expr::Global(c, pos))),
        ]))
    }

    pub(super) async fn set(
        &mut self,
        stk: &mut Stk,
        args: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<Expr> {
        if args.len() != 2 {
            return err("set! takes a variable and an expression", pos);
        }
        let Syn::Sym(id, vpos) = &args[0] else {
            return err("set! needs a variable name", args[0].pos());
        };
        let value = self.compile(stk, &args[1], env).await?;
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
                if self.in_eval_env(env) && !self.engine_code(id) {
                    return err(
                        format!(
                            "set!: cannot assign '{}': the bindings of an environment of (environment ...) are immutable (R7RS 6.12)",
                            self.name(id.sym)
                        ),
                        *vpos,
                    );
                }
                // The engine's code sets its own cell only: what it keeps
                // there (`%host-tools`, `par`'s escape) is its own state.
                let s = self.cell_for(s, id);
                Ok(Expr::SetGlobal(
                    self.globals.index(s),
                    Box::new(value),
                    *vpos,
                ))
            }
        }
    }

    pub(super) async fn if_form(
        &mut self,
        stk: &mut Stk,
        args: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<Expr> {
        if args.len() != 2 && args.len() != 3 {
            return err(
                "if takes a test, a consequent and an optional alternative",
                pos,
            );
        }
        let t = self.compile(stk, &args[0], env).await?;
        let c = self.compile(stk, &args[1], env).await?;
        let a = if args.len() == 3 {
            self.compile(stk, &args[2], env).await?
        } else {
            Expr::Const(Value::Unspecified)
        };
        Ok(Expr::If(Box::new(t), Box::new(c), Box::new(a)))
    }

    /// `delay`, `delay-force` and `make-promise-lazy`.
    pub(super) async fn delay(
        &mut self,
        stk: &mut Stk,
        eager_value: bool,
        args: &[Syn],
        env: &Env,
        pos: Pos,
        kw: &str,
    ) -> R<Expr> {
        if args.len() != 1 {
            return err(format!("{kw} takes one expression"), pos);
        }
        // A lazy promise holds a thunk returning a promise; `delay` makes
        // that promise from the expression's value (R7RS 7.3).
        let thunk = self.thunk(stk, &args[0], env, pos, eager_value).await?;
        Ok(self.prim_call(self.known.prims.make_lazy_promise, vec![thunk], pos))
    }

    pub(super) fn syntax_error(&mut self, args: &[Syn], pos: Pos) -> R<Expr> {
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

    /// `(lambda () body)`, optionally `(lambda () (make-promise body))`.
    pub(super) async fn thunk(
        &mut self,
        stk: &mut Stk,
        body: &Syn,
        env: &Env,
        pos: Pos,
        wrap_in_promise: bool,
    ) -> R<Expr> {
        let outer = self.lambda;
        let id = self.next_lambda;
        self.next_lambda += 1;
        self.lambda = id;
        let r = self.compile(stk, body, env).await;
        self.lambda = outer;
        let mut e = r?;
        if wrap_in_promise {
            e = self.prim_call(self.known.prims.make_promise, vec![e], pos);
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

    pub(super) async fn compile_named(
        &mut self,
        stk: &mut Stk,
        init: &Syn,
        env: &Env,
        name: Option<Sym>,
    ) -> R<Expr> {
        // A lambda bound to a name is named after it, for backtraces.
        if let Syn::List(items, None, pos) = init {
            if let Some(Syn::Sym(head, _)) = items.first() {
                if self.special(head, env) == Some(Special::Lambda) && items.len() >= 2 {
                    let l = self
                        .lambda(stk, &items[1], &items[2..], env, name, *pos)
                        .await?;
                    return Ok(Expr::Lambda(Box::new(l)));
                }
            }
        }
        self.compile(stk, init, env).await
    }

    /// `(define name expr)` or `(define (name . formals) body ...)`.
    /// A curried define is rewritten and compiled again, one level deeper.
    pub(super) async fn definition(
        &mut self,
        stk: &mut Stk,
        args: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<(Sym, Expr)> {
        match args.first() {
            Some(Syn::Sym(id, _)) => {
                let value = match args.len() {
                    1 => Expr::Const(Value::Unspecified),
                    2 => self.compile_named(stk, &args[1], env, Some(id.sym)).await?,
                    _ => return err("define takes a name and one expression", pos),
                };
                Ok((id.sym, value))
            }
            Some(Syn::List(items, tail, fpos)) if !items.is_empty() => {
                // Curried define: (define ((f a) b) ...) = (define (f a) (lambda (b) ...))
                let formals = Syn::List(items[1..].to_vec().into(), tail.clone(), *fpos);
                match &items[0] {
                    Syn::Sym(id, _) => {
                        let l = self
                            .lambda(stk, &formals, &args[1..], env, Some(id.sym), pos)
                            .await?;
                        Ok((id.sym, Expr::Lambda(Box::new(l))))
                    }
                    inner @ Syn::List(..) => {
                        let lam = self.lambda_syntax(formals, args[1..].to_vec(), pos);
                        let mut v = vec![inner.clone(), lam];
                        v.truncate(2);
                        self.deeper(pos)?;
                        let r = stk.run(|stk| self.definition(stk, &v, env, pos)).await;
                        self.depth -= 1;
                        r
                    }
                    other => err("define: expected a name", other.pos()),
                }
            }
            _ => err("define: expected a name or (name formals ...)", pos),
        }
    }

    /// Syntax for `(lambda formals body...)` whose `lambda` means the special form
    /// whatever the user has bound that name to.
    pub(super) fn lambda_syntax(&mut self, formals: Syn, body: Vec<Syn>, pos: Pos) -> Syn {
        let lam = self.known.lambda_alias.clone();
        let mut v = vec![Syn::Sym(lam, pos), formals];
        v.extend(body);
        Syn::list(v, pos)
    }

    pub(super) async fn lambda(
        &mut self,
        stk: &mut Stk,
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
        // One level deeper, on the heap stack (a body can hold a lambda
        // without a call of `compile` between them).
        let r = match self.deeper(pos) {
            Ok(()) => {
                let r = stk
                    .run(|stk| {
                        self.lambda_body(stk, formals, body, &scope, &mut params, &mut rest, pos)
                    })
                    .await;
                self.depth -= 1;
                r
            }
            Err(e) => Err(e),
        };
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

    /// A lambda's parameters bound in `scope`, then its body compiled.
    #[allow(clippy::too_many_arguments)]
    async fn lambda_body(
        &mut self,
        stk: &mut Stk,
        formals: &Syn,
        body: &[Syn],
        scope: &Rc<Scope>,
        params: &mut Vec<VarId>,
        rest: &mut Option<VarId>,
        pos: Pos,
    ) -> R<Expr> {
        {
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
                    *rest = Some(v);
                } else {
                    params.push(v);
                }
            }
            self.body_of(stk, body, &Some(scope.clone()), pos, "lambda")
                .await
        }
    }
}
