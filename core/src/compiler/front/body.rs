//! Bodies: internal definitions with `letrec*` semantics, then expressions.

use std::collections::VecDeque;
use std::rc::Rc;

use reblessive::Stk;

use super::{err, Env, Front, R};
use crate::compiler::ast::Expr;
use crate::compiler::special::Special;
use crate::pos::Pos;
use crate::symbol::Sym;
use crate::syntax::scope::{Binding, Scope, VarId};
use crate::syntax::{Atom, Syn};
use crate::value::Value;

/// A form of a body once macros are expanded and `begin`s spliced.
enum BodyItem {
    Define(VarId, Syn, Option<Sym>),
    DefineLambda(VarId, Syn, Vec<Syn>, Sym, Pos),
    Expr(Syn),
}

impl Front<'_> {
    /// A body: internal definitions (letrec* semantics) then expressions.
    pub(super) async fn body(
        &mut self,
        stk: &mut Stk,
        forms: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<Expr> {
        let scope = Scope::new(env.clone());
        let benv: Env = Some(scope.clone());
        let (items, any_define) = self.body_items(forms, &scope, &benv)?;
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
            return self.seq(stk, &exprs, &benv).await;
        }
        // Definitions and expressions, in order; the last item is the value.
        let mut vars = Vec::new();
        let mut steps: Vec<(Option<VarId>, Expr)> = Vec::new();
        for item in items {
            match item {
                BodyItem::Define(v, init, name) => {
                    vars.push(v);
                    let e = self.compile_named(stk, &init, &benv, name).await?;
                    steps.push((Some(v), e));
                }
                BodyItem::DefineLambda(v, formals, body, name, lpos) => {
                    vars.push(v);
                    let l = self
                        .lambda(stk, &formals, &body, &benv, Some(name), lpos)
                        .await?;
                    steps.push((Some(v), Expr::Lambda(Box::new(l))));
                }
                BodyItem::Expr(s) => {
                    let e = self.compile(stk, &s, &benv).await?;
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

    /// Expands the forms of a body until each is a definition or an
    /// expression, binding each defined name in `scope` as it is found (so
    /// later forms see it). Also says whether there was any definition.
    fn body_items(
        &mut self,
        forms: &[Syn],
        scope: &Rc<Scope>,
        benv: &Env,
    ) -> R<(Vec<BodyItem>, bool)> {
        let mut queue: VecDeque<Syn> = forms.iter().cloned().collect();
        let mut items: Vec<BodyItem> = Vec::new();
        let mut any_define = false;
        while let Some(mut form) = queue.pop_front() {
            loop {
                let Syn::List(list, tail, fpos) = &form else {
                    break;
                };
                let Some(Syn::Sym(head, _)) = list.first() else {
                    break;
                };
                if let Some(m) = self.macro_of(head, benv) {
                    form = self.expand(&m, &form, benv, *fpos)?;
                    continue;
                }
                // A dotted list is a macro use or an error (the expression's).
                if tail.is_some() {
                    break;
                }
                match self.special(head, benv) {
                    Some(Special::Begin) => {
                        for f in list[1..].iter().rev() {
                            queue.push_front(f.clone());
                        }
                        form = Syn::nil(*fpos); // consumed
                    }
                    Some(Special::Include) => {
                        let ci = self.name(head.sym) == "include-ci";
                        let (list, fpos) = (list.clone(), *fpos);
                        for f in self.include_forms(&list[1..], ci, fpos)?.into_iter().rev() {
                            queue.push_front(f);
                        }
                        form = Syn::nil(fpos); // consumed
                    }
                    Some(Special::Define) => {
                        any_define = true;
                        let (list, fpos) = (list.clone(), *fpos);
                        self.body_define(&list, fpos, scope, &mut queue, &mut items)?;
                        form = Syn::nil(fpos);
                    }
                    Some(Special::DefineSyntax) => {
                        let (id, m) = self.define_syntax(&list[1..], benv, *fpos)?;
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
        Ok((items, any_define))
    }

    /// One internal `define` (`list` is the whole form): its variable bound
    /// in `scope` and its item added; a curried define is rewritten and
    /// queued again.
    fn body_define(
        &mut self,
        list: &[Syn],
        fpos: Pos,
        scope: &Scope,
        queue: &mut VecDeque<Syn>,
        items: &mut Vec<BodyItem>,
    ) -> R<()> {
        let args = &list[1..];
        match args.first() {
            Some(Syn::Sym(id, _)) => {
                if args.len() > 2 {
                    return err("define takes a name and one expression", fpos);
                }
                let v = self.new_var(id.sym, true);
                scope.bind(id.clone(), Binding::Var(v));
                let init = args
                    .get(1)
                    .cloned()
                    .unwrap_or(Syn::Atom(Atom::Unspecified, fpos));
                items.push(BodyItem::Define(v, init, Some(id.sym)));
            }
            Some(Syn::List(sig, tail, spos)) if !sig.is_empty() => {
                let formals = Syn::List(sig[1..].to_vec().into(), tail.clone(), *spos);
                match &sig[0] {
                    Syn::Sym(id, _) => {
                        let v = self.new_var(id.sym, true);
                        scope.bind(id.clone(), Binding::Var(v));
                        items.push(BodyItem::DefineLambda(
                            v,
                            formals,
                            args[1..].to_vec(),
                            id.sym,
                            fpos,
                        ));
                    }
                    inner @ Syn::List(..) => {
                        // curried: rewrite and requeue
                        let lam = self.lambda_syntax(formals, args[1..].to_vec(), fpos);
                        let def = Syn::list(vec![list[0].clone(), inner.clone(), lam], fpos);
                        queue.push_front(def);
                    }
                    other => return err("define: expected a name", other.pos()),
                }
            }
            _ => return err("define: expected a name or (name formals ...)", fpos),
        }
        Ok(())
    }

    /// Builds a letrec, deciding which variables can be patched instead of boxed.
    ///
    /// Only a group made entirely of lambdas is patched: then no other code
    /// runs while its closures are created, so nothing can capture a member
    /// before it exists.
    pub(super) fn letrec(
        &mut self,
        vars: Vec<VarId>,
        steps: Vec<(Option<VarId>, Expr)>,
        body: Expr,
    ) -> Expr {
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
}
