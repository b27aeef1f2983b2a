//! `arb:ref`: local names for stored nodes of the knowledge base.

use std::rc::Rc;

use super::{err, Env, Front, R};
use crate::compiler::globals::node_global_name;
use crate::pos::Pos;
use crate::syntax::scope::{Binding, Scope};
use crate::syntax::{Atom, Syn};

impl Front<'_> {
    /// `(arb:ref ((name id) ...) body ...)`: a scope in which each name
    /// stands for the stored node `id` (the global `@#ID`, which the VM
    /// loads from the knowledge base on first use), and the body.
    pub(super) fn arb_ref_scope(
        &mut self,
        args: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<(Vec<Syn>, Rc<Scope>)> {
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
            let target = self.syms.intern(&node_global_name(node));
            scope.bind(id, Binding::Global(target));
        }
        Ok((body.to_vec(), scope))
    }
}
