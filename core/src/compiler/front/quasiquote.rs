//! `quasiquote`: templates to list construction (`cons`, `append`,
//! `list->vector`), nested levels counted.

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
                    match self.special(id, env) {
                        Some(Special::Unquote) => {
                            if depth == 1 {
                                return self.compile(stk, &items[1], env).await;
                            }
                            let inner = self.quasi(stk, &items[1], depth - 1, env).await?;
                            return Ok(self.wrap_list2(items[0].clone(), inner, *pos));
                        }
                        Some(Special::Quasiquote) => {
                            let inner = self.quasi(stk, &items[1], depth + 1, env).await?;
                            return Ok(self.wrap_list2(items[0].clone(), inner, *pos));
                        }
                        _ => {}
                    }
                }
                // Build from the end: tail, then each element (splicing where asked).
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
                                    acc = self.prim_call(
                                        self.known.prims.append,
                                        vec![spliced, acc],
                                        *ipos,
                                    );
                                    continue;
                                }
                                let inner = self.quasi(stk, &parts[1], depth - 1, env).await?;
                                let e = self.wrap_list2(parts[0].clone(), inner, *ipos);
                                acc = self.prim_call(self.known.prims.cons, vec![e, acc], *ipos);
                                continue;
                            }
                        }
                    }
                    let e = self.quasi(stk, item, depth, env).await?;
                    acc = self.prim_call(self.known.prims.cons, vec![e, acc], *pos);
                }
                Ok(acc)
            }
            Syn::Vector(items, pos) => {
                let as_list = Syn::List(items.clone(), None, *pos);
                let l = self.quasi(stk, &as_list, depth, env).await?;
                Ok(self.prim_call(self.known.prims.list_to_vector, vec![l], *pos))
            }
            other => Ok(Expr::Const(self.datum(other)?)),
        }
    }

    pub(super) fn wrap_list2(&mut self, head: Syn, inner: Expr, pos: Pos) -> Expr {
        let h = match self.datum(&head) {
            Ok(v) => v,
            Err(_) => Value::Unspecified,
        };
        let cons = self.known.prims.cons;
        let tail = self.prim_call(cons, vec![inner, Expr::Const(Value::Null)], pos);
        self.prim_call(cons, vec![Expr::Const(h), tail], pos)
    }
}
