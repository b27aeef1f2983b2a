//! `define-record-type`: a sequence of definitions over the record
//! primitives (`%make-record-type`, `%record`, `%record?`, `%record-ref`,
//! `%record-set!`).

use reblessive::Stk;

use super::{err, Env, Front, R};
use crate::compiler::ast::Expr;
use crate::number::Num;
use crate::pos::Pos;
use crate::syntax::scope::Alias;
use crate::syntax::{Atom, Ident, Syn};

impl Front<'_> {
    pub(super) async fn define_record_type(
        &mut self,
        stk: &mut Stk,
        args: &[Syn],
        env: &Env,
        pos: Pos,
    ) -> R<Expr> {
        self.check_toplevel(env, pos, "define-record-type")?;
        let forms = self.record_definitions(args, pos)?;
        let mut out = Vec::new();
        for f in &forms {
            out.push(self.compile(stk, f, env).await?);
        }
        Ok(Expr::Seq(out))
    }

    /// `define-record-type` as a sequence of definitions using record primitives.
    pub(super) fn record_definitions(&mut self, args: &[Syn], pos: Pos) -> R<Vec<Syn>> {
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
        let (fields, field_specs) = self.record_fields(&args[3.min(args.len())..])?;
        match args.get(2) {
            Some(Syn::Sym(..)) | None => {}
            Some(other) => {
                return err(
                    format!(
                        "define-record-type: the predicate name {} is not an identifier",
                        self.shown(other)
                    ),
                    other.pos(),
                )
            }
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
        let hidden = self.record_type_hidden(&tname);
        let type_var = Syn::Sym(hidden, p);
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
        out.push(def(self, Syn::Sym(tname.clone(), p), type_var.clone()));
        // constructor
        match &args[1] {
            Syn::List(items, None, cpos) if !items.is_empty() => {
                let Syn::Sym(cname, _) = &items[0] else {
                    return err("define-record-type: bad constructor", *cpos);
                };
                let cargs = self.constructor_args(&items[1..], &fields)?;
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

    /// The fields of a `define-record-type` (R7RS 5.5): each field spec
    /// is (field accessor) or (field accessor modifier), of identifiers,
    /// each field named once. The names, and each spec's parts.
    #[allow(clippy::type_complexity)]
    fn record_fields(&self, specs: &[Syn]) -> R<(Vec<Ident>, Vec<Vec<Syn>>)> {
        let mut fields: Vec<Ident> = Vec::new();
        let mut field_specs = Vec::new();
        // R7RS 5.5: each field spec is (field accessor) or (field accessor
        // modifier), of identifiers, each field named once.
        for f in specs {
            let what = match f.as_list() {
                Some(parts @ ([_, _] | [_, _, _])) => {
                    match parts.iter().find(|p| !matches!(p, Syn::Sym(..))) {
                        Some(bad) => {
                            return err(
                                format!(
                                "define-record-type: {} in the field spec {} is not an identifier",
                                self.shown(bad),
                                self.shown(f)
                            ),
                                bad.pos(),
                            )
                        }
                        None => None,
                    }
                }
                Some([_]) => Some("has no accessor"),
                Some([]) => Some("is empty"),
                Some(_) => Some("has more than three elements"),
                None => Some("is not a list"),
            };
            if let Some(what) = what {
                return err(
                    format!(
                        "define-record-type: the field spec {} {what}; each must be (field accessor) or (field accessor modifier)",
                        self.shown(f)
                    ),
                    f.pos(),
                );
            }
            let parts = f.as_list().unwrap_or_default();
            let Some(Syn::Sym(fid, _)) = parts.first() else {
                return err(
                    "define-record-type: field name must be an identifier",
                    f.pos(),
                );
            };
            if fields.iter().any(|x| x.same(fid)) {
                return err(
                    format!(
                        "define-record-type: duplicate field '{}' in the field spec {}",
                        self.name(fid.sym),
                        self.shown(f)
                    ),
                    f.pos(),
                );
            }
            fields.push(fid.clone());
            field_specs.push(parts.to_vec());
        }
        Ok((fields, field_specs))
    }

    /// The second, hidden name through which a record type's procedures
    /// refer to the type, so that a constructor, predicate or accessor
    /// named like the type replaces the type name's binding without
    /// breaking the others, as in chibi (R7RS 5.5: the type name and the
    /// procedures are separate bindings). A type name a macro introduced
    /// is renamed; the hidden name is renamed alike (the same macro
    /// environment), so it resolves as the type name would.
    fn record_type_hidden(&mut self, tname: &Ident) -> Ident {
        let hidden_sym = {
            let name = self.name(tname.sym).to_string();
            self.syms.intern(&format!("%record-type:{name}"))
        };
        match &tname.alias {
            None => Ident::plain(hidden_sym),
            Some(a) => Ident {
                sym: hidden_sym,
                alias: Some(std::rc::Rc::new(Alias {
                    orig: Ident::plain(hidden_sym),
                    env: a.env.clone(),
                    builtin: a.builtin,
                })),
            },
        }
    }

    /// The constructor's arguments: each must name a field.
    fn constructor_args(&self, args: &[Syn], fields: &[Ident]) -> R<Vec<Ident>> {
        let mut out = Vec::new();
        for a in args {
            let Syn::Sym(aid, _) = a else {
                return err(
                    "define-record-type: constructor arguments must be field names",
                    a.pos(),
                );
            };
            if out.iter().any(|f: &Ident| f.same(aid)) {
                return err(
                    format!(
                        "define-record-type: the constructor names the field '{}' twice",
                        self.name(aid.sym)
                    ),
                    a.pos(),
                );
            }
            if !fields.iter().any(|f| f.same(aid)) {
                return err(
                    format!(
                        "define-record-type: '{}' is not a field",
                        self.name(aid.sym)
                    ),
                    a.pos(),
                );
            }
            out.push(aid.clone());
        }
        Ok(out)
    }
}
