//! Macros: `define-syntax`, `let-syntax`, `letrec-syntax` and the
//! `syntax-rules` transformers they bind (expanded by
//! `compiler::syntax_rules`).

use std::rc::Rc;

use reblessive::Stk;

use super::{err, Env, Front, MAX_NESTING, R};
use crate::compiler::ast::Expr;
use crate::compiler::globals::GlobalSyntax;
use crate::compiler::special::Special;
use crate::pos::Pos;
use crate::symbol::Sym;
use crate::syntax::scope::{Binding, Macro};
use crate::syntax::{Ident, Syn};
use crate::value::Value;

impl Front<'_> {
    /// `define-syntax` at the top level (a body's are handled by `body`).
    pub(super) fn define_syntax_global(&mut self, args: &[Syn], env: &Env, pos: Pos) -> R<Expr> {
        self.check_toplevel(env, pos, "define-syntax")?;
        let (id, m) = self.define_syntax(args, env, pos)?;
        let target = self.global_target(&id, env);
        self.globals.syntax.insert(target, GlobalSyntax::Macro(m));
        Ok(Expr::Const(Value::Unspecified))
    }

    /// `let-syntax`, or `letrec-syntax` (`recursive`), and its body.
    pub(super) async fn let_syntax(
        &mut self,
        stk: &mut Stk,
        recursive: bool,
        args: &[Syn],
        env: &Env,
        pos: Pos,
        kw: &str,
    ) -> R<Expr> {
        let (body, scope) = self.bind_each(args, env, pos, kw, |f, scope, id, spec| {
            let menv = if recursive {
                Some(scope.clone())
            } else {
                env.clone()
            };
            let m = f.syntax_rules(&spec, &menv, id.sym)?;
            scope.bind(id, Binding::Macro(m));
            Ok(())
        })?;
        self.body_of(stk, body, &Some(scope), pos, kw).await
    }

    pub(super) fn define_syntax(
        &mut self,
        args: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<(Ident, Rc<Macro>)> {
        let [Syn::Sym(id, _), spec] = args else {
            return err("define-syntax takes a name and a syntax-rules form", pos);
        };
        let m = self.syntax_rules(spec, env, id.sym)?;
        Ok((id.clone(), m))
    }

    pub(super) fn syntax_rules(&mut self, spec: &Syn, env: &Env, name: Sym) -> R<Rc<Macro>> {
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
        // R7RS 4.3.2: an ellipsis listed among the literals is a literal;
        // these rules then have no ellipsis at all.
        if literals.iter().any(|l| l.sym == ellipsis.sym) {
            ellipsis = Ident::plain(crate::symbol::Sym(u32::MAX));
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
            // Matching and instantiating recurse on the rule's nesting.
            if pat.deeper_than(MAX_NESTING) || tmpl.deeper_than(MAX_NESTING) {
                return err(
                    format!("a syntax-rules rule nested deeper than {MAX_NESTING} levels"),
                    r.pos(),
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
            builtin: self.internal,
        }))
    }
}
