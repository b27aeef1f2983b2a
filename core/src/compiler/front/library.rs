//! Libraries and features: `define-library`, `import`, `cond-expand`.
//!
//! The standard libraries are all present at once (the REPL has every
//! name); `import` checks that a library exists, and `define-library` makes
//! a new one as a scope over the global environment (see "Decisions" in
//! docs/ARCHITECTURE.md).

use super::{err, Env, Front, R};
use crate::number::Num;
use crate::pos::Pos;
use crate::symbol::{Sym, SymbolTable};
use crate::syntax::scope::{Binding, Scope};
use crate::syntax::{Atom, Ident, Syn};

/// Features `cond-expand` recognises.
pub const FEATURES: &[&str] = &[
    "r7rs",
    "exact-closed",
    "exact-complex",
    "ratios",
    "full-unicode",
    "arbores",
];

/// Library names `import` accepts (the REPL has all of them at once).
pub const LIBRARIES: &[&str] = &[
    "scheme base",
    "scheme char",
    "scheme write",
    "scheme read",
    "scheme lazy",
    "scheme case-lambda",
    "scheme inexact",
    "scheme complex",
    "scheme cxr",
    "scheme eval",
    "scheme time",
    "scheme process-context",
    "scheme r5rs",
    "arbores",
];

impl Front<'_> {
    /// The body of the first `cond-expand` clause whose requirement holds.
    pub(super) fn cond_expand(&mut self, clauses: &[Syn]) -> R<Vec<Syn>> {
        for c in clauses {
            let Some(parts) = c.as_list().filter(|p| !p.is_empty()) else {
                return err("cond-expand clause must be (requirement body ...)", c.pos());
            };
            if self.feature_match(&parts[0])? {
                return Ok(parts[1..].to_vec());
            }
        }
        Ok(vec![])
    }

    pub(super) fn feature_match(&mut self, req: &Syn) -> R<bool> {
        match req {
            Syn::Sym(id, _) => {
                let n = self.name(id.sym);
                Ok(n == "else" || FEATURES.contains(&n.as_str()))
            }
            Syn::List(items, None, p) if !items.is_empty() => {
                let head = match &items[0] {
                    Syn::Sym(id, _) => self.name(id.sym),
                    _ => return err("bad cond-expand requirement", *p),
                };
                match head.as_str() {
                    "and" => {
                        for i in &items[1..] {
                            if !self.feature_match(i)? {
                                return Ok(false);
                            }
                        }
                        Ok(true)
                    }
                    "or" => {
                        for i in &items[1..] {
                            if self.feature_match(i)? {
                                return Ok(true);
                            }
                        }
                        Ok(false)
                    }
                    "not" if items.len() == 2 => Ok(!self.feature_match(&items[1])?),
                    "library" if items.len() == 2 => Ok(self.library_known(&items[1])),
                    _ => err("bad cond-expand requirement", *p),
                }
            }
            other => err("bad cond-expand requirement", other.pos()),
        }
    }

    pub(super) fn library_name(&self, spec: &Syn) -> Option<String> {
        let parts = spec.as_list()?;
        let mut names = Vec::new();
        for p in parts {
            match p {
                Syn::Sym(id, _) => names.push(self.syms.name(id.sym).to_string()),
                Syn::Atom(Atom::Num(Num::Int(i)), _) => names.push(i.to_string()),
                _ => return None,
            }
        }
        Some(names.join(" "))
    }

    pub(super) fn library_known(&self, spec: &Syn) -> bool {
        self.library_name(spec)
            .is_some_and(|n| LIBRARIES.contains(&n.as_str()) || self.globals.libraries.contains(&n))
    }

    /// `(define-library name decl ...)`: the library's imports are checked,
    /// its name registered for later `import`s, and its body (the `begin`
    /// declarations) returned to run at top level in the library's own scope.
    /// In that scope every name the body defines stands for a global: the
    /// exported name for exports (or the outside name of a `rename`), a
    /// hidden name `NAME@(LIBRARY)` for the rest, so the library's private
    /// definitions neither see nor disturb the program's. The body sees the
    /// global environment (everything the REPL has) besides its own names.
    pub(super) fn define_library(&mut self, args: &[Syn], pos: Pos) -> R<(Vec<Syn>, Env)> {
        let Some((name, decls)) = args.split_first() else {
            return err("define-library needs a name", pos);
        };
        let Some(lib) = self.library_name(name) else {
            return err(
                "define-library: the name must be a list of identifiers and integers",
                name.pos(),
            );
        };
        let mut body = Vec::new();
        // inner name -> outer name
        let mut exports: Vec<(Sym, Sym)> = Vec::new();
        for d in decls {
            let Some(parts) = d.as_list().filter(|p| !p.is_empty()) else {
                return err(
                    "define-library: expected (export ...), (import ...) or (begin ...)",
                    d.pos(),
                );
            };
            let head = match &parts[0] {
                Syn::Sym(id, _) => self.name(id.sym),
                _ => String::new(),
            };
            match head.as_str() {
                "export" => {
                    for e in &parts[1..] {
                        match e {
                            Syn::Sym(id, _) => exports.push((id.sym, id.sym)),
                            Syn::List(items, None, _) if items.len() == 3 => match (
                                &items[1], &items[2],
                            ) {
                                (Syn::Sym(inner, _), Syn::Sym(outer, _)) => {
                                    exports.push((inner.sym, outer.sym))
                                }
                                _ => return err(
                                    "define-library: (rename inner outer) takes two identifiers",
                                    e.pos(),
                                ),
                            },
                            other => return err("define-library: bad export spec", other.pos()),
                        }
                    }
                }
                "import" => {
                    for spec in &parts[1..] {
                        self.check_import(spec)?;
                    }
                }
                "begin" => body.extend(parts[1..].iter().cloned()),
                "include" | "include-ci" | "include-library-declarations" => {
                    return err(
                        format!("{head} is not available: Arbores reads no files"),
                        d.pos(),
                    )
                }
                "cond-expand" => {
                    for f in self.cond_expand(&parts[1..])? {
                        if let Some(inner) = f.as_list() {
                            if matches!(inner.first(), Some(Syn::Sym(id, _)) if self.name(id.sym) == "begin")
                            {
                                body.extend(inner[1..].iter().cloned());
                            }
                        }
                    }
                }
                _ => {
                    return err(
                        format!("define-library: unknown declaration '{head}'"),
                        d.pos(),
                    )
                }
            }
        }
        let scope = Scope::new(None);
        let mut defined = Vec::new();
        for f in &body {
            self.defined_names(f, &mut defined);
        }
        for n in defined {
            let target = match exports.iter().find(|(inner, _)| *inner == n) {
                Some((_, outer)) => *outer,
                None => {
                    let hidden = format!("{}@({})", self.name(n), lib);
                    self.syms.intern(&hidden)
                }
            };
            if !scope.bindings.borrow().iter().any(|(id, _)| id.sym == n) {
                scope.bind(Ident::plain(n), Binding::Global(target));
            }
        }
        self.globals.libraries.insert(lib);
        Ok((body, Some(scope)))
    }

    /// Names a library body form defines, found without expanding macros
    /// (`define`, `define-values`, `define-record-type`, `define-syntax`,
    /// and those inside `begin`).
    pub(super) fn defined_names(&self, form: &Syn, out: &mut Vec<Sym>) {
        defined_names(form, self.syms, out)
    }

    pub(super) fn check_import(&mut self, spec: &Syn) -> R<()> {
        // (only lib id...), (except lib id...), (prefix lib p), (rename lib (a b)...)
        if let Some(parts) = spec.as_list() {
            if let Some(Syn::Sym(id, _)) = parts.first() {
                let head = self.name(id.sym);
                if matches!(head.as_str(), "only" | "except" | "prefix" | "rename")
                    && parts.len() >= 2
                {
                    return self.check_import(&parts[1]);
                }
            }
        }
        if self.library_known(spec) {
            Ok(())
        } else {
            let shown = crate::printer::syn_to_string(spec, self.syms);
            err(format!("import: unknown library {shown}"), spec.pos())
        }
    }
}

/// Names a top-level form defines, found without expanding macros
/// (`define`, `define-values`, `define-record-type`, `define-syntax`, and
/// those inside `begin`).
pub fn defined_names(form: &Syn, syms: &SymbolTable, out: &mut Vec<Sym>) {
    let Some(items) = form.as_list() else { return };
    let Some(Syn::Sym(head, _)) = items.first() else {
        return;
    };
    let sym = |s: &Syn, out: &mut Vec<Sym>| {
        if let Syn::Sym(id, _) = s {
            out.push(id.sym);
        }
    };
    match syms.name(head.sym) {
        "begin" => {
            for f in &items[1..] {
                defined_names(f, syms, out);
            }
        }
        "define" | "define-syntax" => {
            let mut target = items.get(1);
            // (define ((f a) b) ...) names f
            while let Some(Syn::List(inner, _, _)) = target {
                target = inner.first();
            }
            if let Some(t) = target {
                sym(t, out);
            }
        }
        "define-values" => {
            if let Some(Syn::List(formals, tail, _)) = items.get(1) {
                for f in formals.iter().chain(tail.as_deref()) {
                    sym(f, out);
                }
            } else if let Some(s) = items.get(1) {
                sym(s, out);
            }
        }
        "define-record-type" => {
            for (i, part) in items.iter().enumerate().skip(1) {
                match (i, part) {
                    (1 | 2, Syn::List(inner, _, _)) => {
                        if let Some(f) = inner.first() {
                            sym(f, out);
                        }
                    }
                    (1..=3, s) => sym(s, out),
                    (_, Syn::List(field, _, _)) => {
                        for f in field.iter().skip(1) {
                            sym(f, out);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}
