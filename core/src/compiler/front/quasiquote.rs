//! `quasiquote`: templates to list construction (`cons`, `append`,
//! `list->vector`), nested levels counted.

use std::rc::Rc;

use reblessive::Stk;

use super::{Env, Front, R};
use crate::compiler::ast::Expr;
use crate::compiler::special::Special;
use crate::pos::Pos;
use crate::syntax::Syn;
use crate::value::Value;

impl Front<'_> {
    // ---- quasiquote --------------------------------------------------------

    /// A template one level deeper, walked on the heap stack.
    pub(super) async fn quasi(
        &mut self,
        stk: &mut Stk,
        t: &Syn,
        depth: usize,
        env: &Env,
    ) -> R<Expr> {
        self.deeper(t.pos())?;
        let r = stk.run(|stk| self.quasi_inner(stk, t, depth, env)).await;
        self.depth -= 1;
        r
    }

    async fn quasi_inner(&mut self, stk: &mut Stk, t: &Syn, depth: usize, env: &Env) -> R<Expr> {
        match t {
            Syn::List(items, tail, pos) => {
                if let (Some(Syn::Sym(id, _)), None, 2) = (items.first(), tail, items.len()) {
                    // A nested `unquote` or `quasiquote` keeps its head and
                    // its argument is a template one level out or in, built
                    // as a list so that `,,@x` splices into the `unquote`.
                    let nested = match self.special(id, env) {
                        Some(Special::Unquote) if depth == 1 => {
                            return self.compile(stk, &items[1], env).await;
                        }
                        Some(Special::Unquote) => Some(depth - 1),
                        Some(Special::Quasiquote) => Some(depth + 1),
                        _ => None,
                    };
                    if let Some(d) = nested {
                        let head = Expr::Const(self.datum(&items[0])?);
                        let rest = self
                            .quasi_list(stk, &items[1..], &None, d, env, *pos)
                            .await?;
                        return Ok(self.prim_call(self.known.prims.cons, vec![head, rest], *pos));
                    }
                }
                // `(a unquote x)` is `(a . ,x)`: the same datum, so the
                // same template.
                if tail.is_none() && items.len() >= 3 {
                    let k = items.len() - 2;
                    if let Syn::Sym(id, _) = &items[k] {
                        if self.special(id, env) == Some(Special::Unquote) {
                            let rest = Syn::List(items[k..].to_vec().into(), None, *pos);
                            return self
                                .quasi_list(
                                    stk,
                                    &items[..k],
                                    &Some(Rc::new(rest)),
                                    depth,
                                    env,
                                    *pos,
                                )
                                .await;
                        }
                    }
                }
                self.quasi_list(stk, items, tail, depth, env, *pos).await
            }
            Syn::Vector(items, pos) => {
                // Its elements, as they are: `#(1 unquote x)` has three.
                let l = self.quasi_list(stk, items, &None, depth, env, *pos).await?;
                Ok(self.prim_call(self.known.prims.list_to_vector, vec![l], *pos))
            }
            other => Ok(Expr::Const(self.datum(other)?)),
        }
    }

    /// The list of templates `items` ending in `tail`, built from the end:
    /// the tail, then each element, splicing where asked.
    async fn quasi_list(
        &mut self,
        stk: &mut Stk,
        items: &[Syn],
        tail: &Option<Rc<Syn>>,
        depth: usize,
        env: &Env,
        pos: Pos,
    ) -> R<Expr> {
        let mut acc = match tail {
            Some(t) => self.quasi(stk, t, depth, env).await?,
            None => Expr::Const(Value::Null),
        };
        for item in items.iter().rev() {
            if let Syn::List(parts, None, ipos) = item {
                if let (Some(Syn::Sym(id, _)), 2) = (parts.first(), parts.len()) {
                    if self.special(id, env) == Some(Special::UnquoteSplicing) {
                        if depth == 1 {
                            let spliced = self.compile(stk, &parts[1], env).await?;
                            acc =
                                self.prim_call(self.known.prims.append, vec![spliced, acc], *ipos);
                            continue;
                        }
                        let head = Expr::Const(self.datum(&parts[0])?);
                        let rest = stk
                            .run(|stk| {
                                self.quasi_list(stk, &parts[1..], &None, depth - 1, env, *ipos)
                            })
                            .await?;
                        let e = self.prim_call(self.known.prims.cons, vec![head, rest], *ipos);
                        acc = self.prim_call(self.known.prims.cons, vec![e, acc], *ipos);
                        continue;
                    }
                }
            }
            let e = self.quasi(stk, item, depth, env).await?;
            acc = self.prim_call(self.known.prims.cons, vec![e, acc], pos);
        }
        Ok(acc)
    }
}
