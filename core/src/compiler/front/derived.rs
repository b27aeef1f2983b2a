//! Derived forms (R7RS 4.2): rewritten into core expressions as they are
//! compiled.

use reblessive::Stk;

use super::{bindings_and_body, err, Env, Front, R};
use crate::compiler::ast::{Expr, LambdaExpr};
use crate::pos::Pos;
use crate::syntax::scope::{Binding, Macro, Scope, VarId};
use crate::syntax::{Ident, Syn};
use crate::value::code::Inline;
use crate::value::Value;
use std::rc::Rc;

impl Front<'_> {
    pub(super) async fn let_form(
        &mut self,
        stk: &mut Stk,
        args: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<Expr> {
        match args.first() {
            Some(Syn::Sym(name, _)) => {
                // Named let: ((letrec ((name (lambda vars body...))) name) inits...)
                let Some(bindings) = args.get(1) else {
                    return err("named let needs bindings and a body", pos);
                };
                let Some(bs) = bindings.as_list() else {
                    return err("let bindings must be a list", bindings.pos());
                };
                let mut formals: Vec<Syn> = Vec::new();
                let mut inits = Vec::new();
                for b in bs {
                    let (id, init) = self.binding_pair(b, "let")?;
                    self.check_unique(&formals, &id, b, "let")?;
                    formals.push(Syn::Sym(id, b.pos()));
                    inits.push(self.compile(stk, &init, env).await?);
                }
                let scope = Scope::new(env.clone());
                let v = self.new_var(name.sym, true);
                scope.bind(name.clone(), Binding::Var(v));
                let benv = Some(scope);
                let formals = Syn::list(formals, bindings.pos());
                let l = self
                    .lambda(stk, &formals, &args[2..], &benv, Some(name.sym), pos)
                    .await?;
                let call = Expr::Call(Box::new(Expr::Local(v, pos)), inits, pos);
                Ok(self.letrec(vec![v], vec![(Some(v), Expr::Lambda(Box::new(l)))], call))
            }
            Some(bindings) => {
                let Some(bs) = bindings.as_list() else {
                    return err("let bindings must be a list", bindings.pos());
                };
                let (vars, inits, scope) = self.bind_let(stk, bs, env, "let").await?;
                let body = self
                    .body_of(stk, &args[1..], &Some(scope), pos, "let")
                    .await?;
                if vars.is_empty() {
                    return Ok(body);
                }
                Ok(Expr::Let(vars, inits, Box::new(body)))
            }
            None => err("let needs bindings and a body", pos),
        }
    }

    pub(super) async fn let_star_form(
        &mut self,
        stk: &mut Stk,
        args: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<Expr> {
        let (bs, body) = bindings_and_body(args, pos, "let*")?;
        self.let_star(stk, bs, body, env, pos).await
    }

    /// Each binding one level deeper (walked on the heap stack).
    pub(super) async fn let_star(
        &mut self,
        stk: &mut Stk,
        bs: &[Syn],
        body: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<Expr> {
        if bs.is_empty() {
            return self.body_of(stk, body, env, pos, "let*").await;
        }
        let (vars, inits, scope) = self.bind_let(stk, &bs[..1], env, "let*").await?;
        let scope = Some(scope);
        self.deeper(pos)?;
        let inner = stk
            .run(|stk| self.let_star(stk, &bs[1..], body, &scope, pos))
            .await;
        self.depth -= 1;
        let inner = inner?;
        Ok(Expr::Let(vars, inits, Box::new(inner)))
    }

    /// `letrec` and `letrec*` (both with `letrec*` semantics).
    pub(super) async fn letrec_form(
        &mut self,
        stk: &mut Stk,
        args: &[Syn],
        env: &Env,
        pos: Pos,
        kw: &str,
    ) -> R<Expr> {
        let mut pairs = Vec::new();
        let (body, scope) = self.bind_each(args, env, pos, kw, |f, scope, id, init| {
            let v = f.new_var(id.sym, true);
            scope.bind(id, Binding::Var(v));
            pairs.push((v, init));
            Ok(())
        })?;
        let benv = Some(scope);
        let mut vars = Vec::new();
        let mut steps = Vec::new();
        for (v, init) in pairs {
            let name = self.vars[v as usize].name;
            let e = self.compile_named(stk, &init, &benv, Some(name)).await?;
            vars.push(v);
            steps.push((Some(v), e));
        }
        let body = self.body_of(stk, body, &benv, pos, kw).await?;
        Ok(self.letrec(vars, steps, body))
    }

    /// A binding `(variable init)` of form `kw` (R7RS 4.2.2), else an
    /// error naming the form and the binding, at the binding.
    pub(super) fn binding_pair(&mut self, b: &Syn, kw: &str) -> R<(Ident, Syn)> {
        let shape = if kw.ends_with("-syntax") {
            "(keyword transformer)"
        } else {
            "(variable init)"
        };
        let what = match b.as_list() {
            Some([Syn::Sym(id, _), init]) => return Ok((id.clone(), init.clone())),
            Some([Syn::Sym(..)]) if shape.starts_with("(variable") => "has no init",
            Some([Syn::Sym(..)]) => "has no transformer",
            Some([Syn::Sym(..), ..]) => "has more than two elements",
            Some([]) => "is empty",
            Some(_) => "does not start with an identifier",
            None => "is not a list",
        };
        err(
            format!(
                "{kw}: the binding {} {what}; each binding must be {shape}",
                self.shown(b)
            ),
            b.pos(),
        )
    }

    /// An error if `id` is already among the variables `earlier` (R7RS: a
    /// variable may appear only once in the bindings of `let`, `letrec`,
    /// `do` ...); `b` is the binding that names it again.
    pub(super) fn check_unique(&self, earlier: &[Syn], id: &Ident, b: &Syn, kw: &str) -> R<()> {
        if earlier
            .iter()
            .any(|e| matches!(e, Syn::Sym(x, _) if x.same(id)))
        {
            let what = if kw.ends_with("-syntax") {
                "keyword"
            } else {
                "variable"
            };
            return err(
                format!(
                    "{kw}: duplicate {what} '{}' in the binding {}",
                    self.name(id.sym),
                    self.shown(b)
                ),
                b.pos(),
            );
        }
        Ok(())
    }

    /// Syntax as an error message shows it: at most about 100 characters.
    pub(super) fn shown(&self, s: &Syn) -> String {
        let text = crate::printer::syn_to_string(s, self.syms);
        match text.char_indices().nth(100) {
            Some((i, _)) => format!("{}...", &text[..i]),
            None => text,
        }
    }

    /// `(KW ((NAME SPEC) ...) BODY...)`: each binding, in order, given to
    /// `bind` with a new scope within `env` to bind it in; the body and
    /// that scope.
    pub(super) fn bind_each<'s>(
        &mut self,
        args: &'s [Syn],
        env: &Env,
        pos: Pos,
        kw: &str,
        mut bind: impl FnMut(&mut Self, &Rc<Scope>, Ident, Syn) -> R<()>,
    ) -> R<(&'s [Syn], Rc<Scope>)> {
        let (bs, body) = bindings_and_body(args, pos, kw)?;
        let scope = Scope::new(env.clone());
        let mut seen = Vec::new();
        for b in bs {
            let (id, spec) = self.binding_pair(b, kw)?;
            self.check_unique(&seen, &id, b, kw)?;
            seen.push(Syn::Sym(id.clone(), b.pos()));
            bind(self, &scope, id, spec)?;
        }
        Ok((body, scope))
    }

    pub(super) async fn bind_let(
        &mut self,
        stk: &mut Stk,
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
                    format!(
                        "let: duplicate variable '{}' in the binding {}",
                        self.name(id.sym),
                        self.shown(b)
                    ),
                    b.pos(),
                );
            }
            inits.push(self.compile_named(stk, &init, env, Some(id.sym)).await?);
            let v = self.new_var(id.sym, false);
            vars.push(v);
            scope.bind(id, Binding::Var(v));
        }
        Ok((vars, inits, scope))
    }

    /// Each clause one level deeper (walked on the heap stack).
    pub(super) async fn cond(
        &mut self,
        stk: &mut Stk,
        clauses: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<Expr> {
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
            return self.seq(stk, &parts[1..], env).await;
        }
        let test = self.compile(stk, &parts[0], env).await?;
        self.deeper(pos)?;
        let otherwise = stk.run(|stk| self.cond(stk, rest, env, pos)).await;
        self.depth -= 1;
        let otherwise = otherwise?;
        if parts.len() >= 2 && self.is_keyword(&parts[1], self.known.arrow, env) {
            if parts.len() != 3 {
                return err("cond: (test => receiver) takes one receiver", first.pos());
            }
            let f = self.compile(stk, &parts[2], env).await?;
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
        let body = self.seq(stk, &parts[1..], env).await?;
        Ok(Expr::If(
            Box::new(test),
            Box::new(body),
            Box::new(otherwise),
        ))
    }

    pub(super) async fn case(
        &mut self,
        stk: &mut Stk,
        args: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<Expr> {
        let Some((key, clauses)) = args.split_first() else {
            return err("case needs a key and clauses", pos);
        };
        let key = self.compile(stk, key, env).await?;
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
                let f = self.compile(stk, &parts[2], env).await?;
                Expr::Call(Box::new(f), vec![Expr::Local(tmp, pos)], c.pos())
            } else {
                self.seq(stk, &parts[1..], env).await?
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
                    let eqv = self.known.prims.eqv;
                    self.prim_call(eqv, vec![Expr::Local(tmp, pos), Expr::Const(v)], pos)
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

    pub(super) async fn and(&mut self, stk: &mut Stk, args: &[Syn], env: &Env) -> R<Expr> {
        if args.is_empty() {
            return Ok(Expr::Const(Value::Bool(true)));
        }
        let mut e = self.compile(stk, &args[args.len() - 1], env).await?;
        for a in args[..args.len() - 1].iter().rev() {
            let t = self.compile(stk, a, env).await?;
            e = Expr::If(
                Box::new(t),
                Box::new(e),
                Box::new(Expr::Const(Value::Bool(false))),
            );
        }
        Ok(e)
    }

    pub(super) async fn or(&mut self, stk: &mut Stk, args: &[Syn], env: &Env, pos: Pos) -> R<Expr> {
        if args.is_empty() {
            return Ok(Expr::Const(Value::Bool(false)));
        }
        let mut e = self.compile(stk, &args[args.len() - 1], env).await?;
        for a in args[..args.len() - 1].iter().rev() {
            let t = self.compile(stk, a, env).await?;
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

    pub(super) async fn when_unless(
        &mut self,
        stk: &mut Stk,
        when: bool,
        args: &[Syn],
        env: &Env,
        pos: Pos,
        kw: &str,
    ) -> R<Expr> {
        let Some((test, body)) = args.split_first() else {
            return err(format!("{kw} needs a test"), pos);
        };
        let t = self.compile(stk, test, env).await?;
        let b = self.seq(stk, body, env).await?;
        let u = Expr::Const(Value::Unspecified);
        Ok(if when {
            Expr::If(Box::new(t), Box::new(b), Box::new(u))
        } else {
            Expr::If(Box::new(t), Box::new(u), Box::new(b))
        })
    }

    pub(super) async fn do_loop(
        &mut self,
        stk: &mut Stk,
        args: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<Expr> {
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
        let mut seen: Vec<Syn> = Vec::new();
        for s in specs {
            let what = match s.as_list() {
                Some([Syn::Sym(..), _] | [Syn::Sym(..), _, _]) => None,
                Some([Syn::Sym(..)]) => Some("has no init"),
                Some([Syn::Sym(..), ..]) => Some("has more than three elements"),
                Some([]) => Some("is empty"),
                Some(_) => Some("does not start with an identifier"),
                None => Some("is not a list"),
            };
            if let Some(what) = what {
                return err(
                    format!(
                        "do: the binding {} {what}; each binding must be (variable init step) or (variable init)",
                        self.shown(s)
                    ),
                    s.pos(),
                );
            }
            let parts = s.as_list().unwrap_or_default();
            let (Some(Syn::Sym(id, _)), Some(init)) = (parts.first(), parts.get(1)) else {
                return err("do: each binding must be (variable init step)", s.pos());
            };
            self.check_unique(&seen, id, s, "do")?;
            seen.push(parts[0].clone());
            inits.push(self.compile(stk, init, env).await?);
            params.push((id.clone(), parts.get(2).cloned()));
            steps_syn.push(parts.get(2).cloned().unwrap_or_else(|| parts[0].clone()));
        }
        self.lambda = lam_id;
        let r = self
            .do_body(
                stk, args, env, pos, exit, &params, &steps_syn, lam_id, loop_var,
            )
            .await;
        self.lambda = outer;
        let l = r?;
        let call = Expr::Call(Box::new(Expr::Local(loop_var, pos)), inits, pos);
        Ok(self.letrec(
            vec![loop_var],
            vec![(Some(loop_var), Expr::Lambda(Box::new(l)))],
            call,
        ))
    }

    /// The loop procedure of a `do`.
    #[allow(clippy::too_many_arguments)]
    async fn do_body(
        &mut self,
        stk: &mut Stk,
        args: &[Syn],
        env: &Env,
        pos: Pos,
        exit: &[Syn],
        params: &[(Ident, Option<Syn>)],
        steps_syn: &[Syn],
        lam_id: u32,
        loop_var: VarId,
    ) -> R<LambdaExpr> {
        {
            let lscope = Scope::new(env.clone());
            let mut pvars = Vec::new();
            for (id, _) in params {
                let v = self.new_var(id.sym, false);
                lscope.bind(id.clone(), Binding::Var(v));
                pvars.push(v);
            }
            let lenv = Some(lscope);
            let test = self.compile(stk, &exit[0], &lenv).await?;
            let result = self.seq(stk, &exit[1..], &lenv).await?;
            let body = self.seq(stk, &args[2..], &lenv).await?;
            let next = self.compile_all(stk, steps_syn, &lenv).await?;
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
        }
    }
}

/// The binding forms the prelude defines as macros (R7RS 4.2.2, 4.2.6,
/// 4.2.7, 5.3.3): their uses checked before they expand, so that a
/// malformed binding is an error naming the form and the binding, at the
/// binding, rather than "no pattern matches" at the form.
impl Front<'_> {
    pub(super) fn check_prelude_use(&self, m: &Macro, form: &Syn) -> R<()> {
        let Some(items) = form.as_list() else {
            return Ok(());
        };
        let kw = self.syms.name(m.name);
        let pos = form.pos();
        let needs_body = |rest: &[Syn]| {
            if rest.is_empty() {
                err(
                    format!("{kw} needs at least one expression in its body"),
                    pos,
                )
            } else {
                Ok(())
            }
        };
        match kw {
            "let-values" | "let*-values" => {
                let (bs, body) = bindings_and_body(&items[1..], pos, kw)?;
                let mut seen = Vec::new();
                for b in bs {
                    let Some([formals, _]) = b.as_list() else {
                        return err(
                            format!(
                                "{kw}: the binding {} is not (formals init); each binding must be (formals init)",
                                self.shown(b)
                            ),
                            b.pos(),
                        );
                    };
                    if kw == "let*-values" {
                        seen.clear();
                    }
                    self.check_formals(formals, b, kw, &mut seen)?;
                }
                needs_body(body)
            }
            "define-values" => match &items[1..] {
                [formals, _] => self.check_formals(formals, form, kw, &mut Vec::new()),
                _ => err("define-values takes formals and an expression", pos),
            },
            "receive" => match &items[1..] {
                [formals, _, body @ ..] => {
                    self.check_formals(formals, form, kw, &mut Vec::new())?;
                    needs_body(body)
                }
                _ => err("receive takes formals, an expression and a body", pos),
            },
            "parameterize" => {
                let (bs, body) = bindings_and_body(&items[1..], pos, kw)?;
                for b in bs {
                    if !matches!(b.as_list(), Some([_, _])) {
                        return err(
                            format!(
                                "parameterize: the binding {} is not (parameter value); each binding must be (parameter value)",
                                self.shown(b)
                            ),
                            b.pos(),
                        );
                    }
                }
                needs_body(body)
            }
            "guard" => {
                let Some(spec) = items.get(1) else {
                    return err("guard needs (variable clause ...) and a body", pos);
                };
                let Some([Syn::Sym(..), clauses @ ..]) = spec.as_list() else {
                    return err(
                        format!(
                            "guard: {} is not (variable clause ...): it must start with the identifier the condition is bound to",
                            self.shown(spec)
                        ),
                        spec.pos(),
                    );
                };
                for c in clauses {
                    if !matches!(c.as_list(), Some([_, ..])) {
                        return err(
                            format!(
                                "guard: the clause {} is not (test expression ...)",
                                self.shown(c)
                            ),
                            c.pos(),
                        );
                    }
                }
                needs_body(&items[2..])
            }
            _ => Ok(()),
        }
    }

    /// Formals of a `lambda`-like binding (an identifier, or a proper or
    /// dotted list of identifiers) in `within` of form `kw`, each not
    /// already among `seen` (to which they are added).
    pub(super) fn check_formals(
        &self,
        formals: &Syn,
        within: &Syn,
        kw: &str,
        seen: &mut Vec<Ident>,
    ) -> R<()> {
        let names: Vec<&Syn> = match formals {
            Syn::Sym(..) => vec![formals],
            Syn::List(items, tail, _) => items.iter().chain(tail.as_deref()).collect(),
            _ => {
                return err(
                    format!(
                        "{kw}: {} are not formals: expected an identifier or a list of identifiers",
                        self.shown(formals)
                    ),
                    formals.pos(),
                )
            }
        };
        for n in names {
            let Syn::Sym(id, _) = n else {
                return err(
                    format!(
                        "{kw}: {} in {} is not an identifier",
                        self.shown(n),
                        self.shown(within)
                    ),
                    n.pos(),
                );
            };
            if seen.iter().any(|s| s.same(id)) {
                return err(
                    format!(
                        "{kw}: duplicate variable '{}' in {}",
                        self.name(id.sym),
                        self.shown(within)
                    ),
                    n.pos(),
                );
            }
            seen.push(id.clone());
        }
        Ok(())
    }
}
