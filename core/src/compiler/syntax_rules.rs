//! `syntax-rules`: pattern matching and template instantiation on syntax.
//!
//! Supports literals, `_`, nested ellipses, patterns after an ellipsis (also
//! before an improper tail), vector patterns, a custom ellipsis identifier and
//! the `(... ...)` escape. Template symbols that are not pattern variables are
//! renamed to fresh aliases (see `scope`), one alias per symbol per expansion.

use std::rc::Rc;

use crate::pos::Pos;
use crate::syntax::scope::{resolve, Alias, Macro, Scope};
use crate::syntax::{Atom, Ident, Syn};

#[derive(Clone)]
enum Tree {
    One(Syn),
    Many(Vec<Tree>),
}

type Bindings = Vec<(Ident, Tree)>;

pub struct Expander<'m> {
    mac: &'m Macro,
    use_env: Option<Rc<Scope>>,
    underscore: crate::symbol::Sym,
    ellipsis_sym: crate::symbol::Sym,
}

impl<'m> Expander<'m> {
    pub fn new(mac: &'m Macro, use_env: Option<Rc<Scope>>, underscore: crate::symbol::Sym) -> Self {
        Expander {
            mac,
            use_env,
            underscore,
            ellipsis_sym: mac.ellipsis.sym,
        }
    }

    /// Expands `form`; `Err` when no rule matches. `budget` is the number of
    /// syntax nodes expansions may still produce for the form being compiled:
    /// a pathological macro cannot make unbounded syntax.
    pub fn expand(&self, form: &Syn, budget: &mut usize) -> Result<Syn, String> {
        for (pattern, template) in &self.mac.rules {
            let mut b = Vec::new();
            // The keyword position is ignored, in the pattern and the form.
            let (Some(pitems), Syn::List(fitems, ftail, fpos)) = (split_list(pattern), form) else {
                continue;
            };
            let ppat = Syn::List(
                pitems.0[1.min(pitems.0.len())..].to_vec().into(),
                pitems.1.clone(),
                pattern.pos(),
            );
            let frest = Syn::List(
                fitems[1.min(fitems.len())..].to_vec().into(),
                ftail.clone(),
                *fpos,
            );
            if self.match_(&ppat, &frest, &mut b) {
                let mut renames: Vec<(Ident, Rc<Alias>)> = Vec::new();
                return self.instantiate(template, &b, &mut renames, form.pos(), budget);
            }
        }
        Err(format!(
            "no syntax-rules pattern of '{}' matches this use",
            "{}" // name filled in by the caller
        ))
    }

    /// The ellipsis is recognised by name whatever renaming it went through
    /// (a macro-defining macro writes `(... ...)`, which arrives renamed);
    /// a custom ellipsis must be that very identifier.
    fn is_ellipsis(&self, s: &Syn) -> bool {
        match s {
            Syn::Sym(id, _) => {
                id.sym == self.ellipsis_sym
                    && (self.mac.ellipsis.alias.is_none() || id.same(&self.mac.ellipsis))
            }
            _ => false,
        }
    }

    fn is_literal(&self, id: &Ident) -> bool {
        self.mac.literals.iter().any(|l| l.same(id))
    }

    fn match_(&self, pat: &Syn, form: &Syn, b: &mut Bindings) -> bool {
        match pat {
            Syn::Sym(pid, _) => {
                if self.is_literal(pid) {
                    match form {
                        Syn::Sym(fid, _) => {
                            let lm = resolve(pid, &self.mac.env);
                            let fm = resolve(fid, &self.use_env);
                            lm.same(&fm)
                        }
                        _ => false,
                    }
                } else if pid.sym == self.underscore {
                    true
                } else {
                    b.push((pid.clone(), Tree::One(form.clone())));
                    true
                }
            }
            Syn::List(pitems, ptail, _) => {
                let (fitems, ftail): (&[Syn], Option<&Rc<Syn>>) = match form {
                    Syn::List(items, tail, _) => (items, tail.as_ref()),
                    _ => return false,
                };
                self.match_seq(
                    pitems,
                    ptail.as_deref(),
                    fitems,
                    ftail.map(|t| &**t),
                    form.pos(),
                    b,
                    false,
                )
            }
            Syn::Vector(pitems, _) => match form {
                Syn::Vector(fitems, _) => {
                    self.match_seq(pitems, None, fitems, None, form.pos(), b, true)
                }
                _ => false,
            },
            Syn::Atom(a, _) => match form {
                Syn::Atom(f, _) => atom_equal(a, f),
                _ => false,
            },
            Syn::LabelDef(..) | Syn::LabelRef(..) => false,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn match_seq(
        &self,
        pitems: &[Syn],
        ptail: Option<&Syn>,
        fitems: &[Syn],
        ftail: Option<&Syn>,
        fpos: Pos,
        b: &mut Bindings,
        is_vector: bool,
    ) -> bool {
        let ell = pitems.iter().position(|p| self.is_ellipsis(p));
        match ell {
            None => {
                if fitems.len() < pitems.len() {
                    return false;
                }
                for (p, f) in pitems.iter().zip(fitems) {
                    if !self.match_(p, f, b) {
                        return false;
                    }
                }
                let rest_items = &fitems[pitems.len()..];
                match ptail {
                    None => rest_items.is_empty() && ftail.is_none(),
                    Some(pt) => {
                        let rest = rebuild(rest_items, ftail, fpos, is_vector);
                        self.match_(pt, &rest, b)
                    }
                }
            }
            Some(k) if k >= 1 => {
                let before = &pitems[..k - 1];
                let repeated = &pitems[k - 1];
                let after = &pitems[k + 1..];
                if fitems.len() < before.len() + after.len() {
                    return false;
                }
                for (p, f) in before.iter().zip(fitems) {
                    if !self.match_(p, f, b) {
                        return false;
                    }
                }
                // With a tail pattern, the items after the ellipsis match the
                // last items of the proper part; the tail matches the form's tail.
                let n_rep = fitems.len() - before.len() - after.len();
                let mut subs: Vec<Bindings> = Vec::new();
                for f in &fitems[before.len()..before.len() + n_rep] {
                    let mut sb = Vec::new();
                    if !self.match_(repeated, f, &mut sb) {
                        return false;
                    }
                    subs.push(sb);
                }
                for var in pattern_vars(repeated, self) {
                    let seq = subs
                        .iter()
                        .map(|sb| {
                            sb.iter()
                                .rev()
                                .find(|(id, _)| id.same(&var))
                                .map(|(_, t)| t.clone())
                                .unwrap_or(Tree::Many(vec![]))
                        })
                        .collect();
                    b.push((var, Tree::Many(seq)));
                }
                for (p, f) in after.iter().zip(&fitems[before.len() + n_rep..]) {
                    if !self.match_(p, f, b) {
                        return false;
                    }
                }
                match ptail {
                    None => ftail.is_none(),
                    Some(pt) => {
                        let rest = match ftail {
                            Some(t) => t.clone(),
                            None => Syn::nil(fpos),
                        };
                        self.match_(pt, &rest, b)
                    }
                }
            }
            Some(_) => false,
        }
    }

    fn lookup<'b>(&self, id: &Ident, b: &'b Bindings) -> Option<&'b Tree> {
        b.iter().rev().find(|(v, _)| v.same(id)).map(|(_, t)| t)
    }

    fn instantiate(
        &self,
        t: &Syn,
        b: &Bindings,
        renames: &mut Vec<(Ident, Rc<Alias>)>,
        use_pos: Pos,
        budget: &mut usize,
    ) -> Result<Syn, String> {
        if *budget == 0 {
            return Err("macro expansion too large".into());
        }
        *budget -= 1;
        match t {
            Syn::Sym(id, pos) => {
                if let Some(tree) = self.lookup(id, b) {
                    return match tree {
                        Tree::One(s) => Ok(s.clone()),
                        Tree::Many(_) => Err(format!(
                            "pattern variable used without an ellipsis in the template"
                        )),
                    };
                }
                let alias = match renames.iter().find(|(orig, _)| orig.same(id)) {
                    Some((_, a)) => a.clone(),
                    None => {
                        let a = Rc::new(Alias {
                            orig: id.clone(),
                            env: self.mac.env.clone(),
                            builtin: self.mac.builtin,
                        });
                        renames.push((id.clone(), a.clone()));
                        a
                    }
                };
                let p = if pos.is_known() { *pos } else { use_pos };
                Ok(Syn::Sym(
                    Ident {
                        sym: id.sym,
                        alias: Some(alias),
                    },
                    p,
                ))
            }
            Syn::List(items, tail, pos) => {
                // (... ...) escapes the ellipsis: (... template) is template taken literally.
                if items.len() == 2 && tail.is_none() && self.is_ellipsis(&items[0]) {
                    let inner = Expander {
                        mac: self.mac,
                        use_env: self.use_env.clone(),
                        underscore: self.underscore,
                        ellipsis_sym: crate::symbol::Sym(u32::MAX),
                    };
                    return inner.instantiate(&items[1], b, renames, use_pos, budget);
                }
                let out = self.instantiate_seq(items, b, renames, use_pos, budget)?;
                let tail = match tail {
                    Some(t) => Some(Rc::new(self.instantiate(t, b, renames, use_pos, budget)?)),
                    None => None,
                };
                // Code the engine brings has no positions: its expansion
                // stands where the macro was used.
                let pos = &if pos.is_known() { *pos } else { use_pos };
                // Normalise (a b . (c d)) to (a b c d) so later passes see proper lists.
                Ok(match tail {
                    Some(t) => match &*t {
                        Syn::List(titems, ttail, _) => {
                            let mut all = out;
                            all.extend(titems.iter().cloned());
                            Syn::List(all.into(), ttail.clone(), *pos)
                        }
                        _ => Syn::List(out.into(), Some(t), *pos),
                    },
                    None => Syn::List(out.into(), None, *pos),
                })
            }
            Syn::Vector(items, pos) => Ok(Syn::Vector(
                self.instantiate_seq(items, b, renames, use_pos, budget)?
                    .into(),
                if pos.is_known() { *pos } else { use_pos },
            )),
            other => Ok(other.clone()),
        }
    }

    fn instantiate_seq(
        &self,
        items: &[Syn],
        b: &Bindings,
        renames: &mut Vec<(Ident, Rc<Alias>)>,
        use_pos: Pos,
        budget: &mut usize,
    ) -> Result<Vec<Syn>, String> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < items.len() {
            let item = &items[i];
            let mut depth = 0;
            while i + 1 + depth < items.len() && self.is_ellipsis(&items[i + 1 + depth]) {
                depth += 1;
            }
            if depth == 0 {
                out.push(self.instantiate(item, b, renames, use_pos, budget)?);
            } else {
                let mut results = Vec::new();
                self.expand_ellipsis(item, b, depth, renames, use_pos, budget, &mut results)?;
                out.extend(results);
            }
            i += 1 + depth;
        }
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn expand_ellipsis(
        &self,
        item: &Syn,
        b: &Bindings,
        depth: usize,
        renames: &mut Vec<(Ident, Rc<Alias>)>,
        use_pos: Pos,
        budget: &mut usize,
        out: &mut Vec<Syn>,
    ) -> Result<(), String> {
        // The variables of `item` bound to sequences drive the iteration.
        let vars: Vec<Ident> = template_vars(item, self)
            .into_iter()
            .filter(|v| matches!(self.lookup(v, b), Some(Tree::Many(_))))
            .collect();
        if vars.is_empty() {
            return Err(
                "an ellipsis in the template follows no pattern variable bound to a sequence"
                    .into(),
            );
        }
        let mut len: Option<usize> = None;
        for v in &vars {
            if let Some(Tree::Many(seq)) = self.lookup(v, b) {
                match len {
                    None => len = Some(seq.len()),
                    Some(l) if l != seq.len() => return Err("pattern variables under one ellipsis matched sequences of different lengths".into()),
                    _ => {}
                }
            }
        }
        // The bindings of one iteration are pushed on top of the outer ones
        // and popped after it: no copy of the binding list per element.
        let mut nb = b.clone();
        let base = nb.len();
        for k in 0..len.unwrap_or(0) {
            for v in &vars {
                if let Some(Tree::Many(seq)) = self.lookup(v, b) {
                    nb.push((v.clone(), seq[k].clone()));
                }
            }
            if depth > 1 {
                self.expand_ellipsis(item, &nb, depth - 1, renames, use_pos, budget, out)?;
            } else {
                out.push(self.instantiate(item, &nb, renames, use_pos, budget)?);
            }
            nb.truncate(base);
        }
        Ok(())
    }
}

fn split_list(s: &Syn) -> Option<(&[Syn], &Option<Rc<Syn>>)> {
    match s {
        Syn::List(items, tail, _) if !items.is_empty() => Some((items, tail)),
        _ => None,
    }
}

fn rebuild(items: &[Syn], tail: Option<&Syn>, pos: Pos, is_vector: bool) -> Syn {
    if is_vector {
        return Syn::Vector(items.to_vec().into(), pos);
    }
    if items.is_empty() {
        if let Some(t) = tail {
            return t.clone();
        }
    }
    Syn::List(items.to_vec().into(), tail.map(|t| Rc::new(t.clone())), pos)
}

fn pattern_vars(p: &Syn, e: &Expander) -> Vec<Ident> {
    let mut out = Vec::new();
    collect_vars(p, e, &mut out, true);
    out
}

fn template_vars(t: &Syn, e: &Expander) -> Vec<Ident> {
    let mut out = Vec::new();
    collect_vars(t, e, &mut out, false);
    out
}

fn collect_vars(p: &Syn, e: &Expander, out: &mut Vec<Ident>, pattern: bool) {
    match p {
        Syn::Sym(id, _) => {
            if e.is_ellipsis(p) {
                return;
            }
            if pattern && (e.is_literal(id) || id.sym == e.underscore) {
                return;
            }
            if !out.iter().any(|o| o.same(id)) {
                out.push(id.clone());
            }
        }
        Syn::List(items, tail, _) => {
            for i in items.iter() {
                collect_vars(i, e, out, pattern);
            }
            if let Some(t) = tail {
                collect_vars(t, e, out, pattern);
            }
        }
        Syn::Vector(items, _) => {
            for i in items.iter() {
                collect_vars(i, e, out, pattern);
            }
        }
        _ => {}
    }
}

pub fn atom_equal(a: &Atom, b: &Atom) -> bool {
    match (a, b) {
        (Atom::Bool(x), Atom::Bool(y)) => x == y,
        (Atom::Num(x), Atom::Num(y)) => x == y,
        (Atom::Complex(x), Atom::Complex(y)) => x == y,
        (Atom::Char(x), Atom::Char(y)) => x == y,
        (Atom::Str(x), Atom::Str(y)) => x == y,
        (Atom::Bytes(x), Atom::Bytes(y)) => x == y,
        (Atom::Unspecified, Atom::Unspecified) | (Atom::Eof, Atom::Eof) => true,
        _ => false,
    }
}
