//! Libraries and features: `define-library`, `import`, `cond-expand`.
//!
//! The standard libraries are all present at once (the REPL has every
//! name); `import` checks that a library exists, and `define-library` makes
//! a new one as a scope over the global environment (see "Decisions" in
//! docs/ARCHITECTURE.md).

use super::bundled::{self, Bundled};
use super::{err, Env, Front, R};
use crate::number::Num;
use crate::pos::Pos;
use crate::symbol::{Sym, SymbolTable};
use crate::syntax::scope::{Binding, Scope};
use crate::syntax::{Atom, Ident, Syn};
use crate::value::Value;

/// Features `cond-expand` recognises.
pub const FEATURES: &[&str] = &[
    "r7rs",
    "exact-closed",
    "exact-complex",
    "ratios",
    "full-unicode",
    "arbores",
];

/// Every feature `cond-expand` recognises: the engine's and those of the
/// bundled libraries (`srfi-1`, ...).
pub fn features() -> Vec<&'static str> {
    let bundled = bundled::BUNDLED.iter().flat_map(|b| b.features.iter());
    FEATURES.iter().chain(bundled).copied().collect()
}

/// Library names `import` accepts besides the standard ones of
/// `standard.rs` (the REPL has all of them at once) and the bundled ones
/// of `bundled.rs`.
pub const LIBRARIES: &[&str] = &["arbores", "arbores plan"];

/// What `(import (arbores plan))` gives (the prelude defines them).
pub const PLAN_EXPORTS: &[&str] = &["plan-run", "plan-check"];

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
        self.nested(req.pos(), |front| front.feature_match_inner(req))
    }

    fn feature_match_inner(&mut self, req: &Syn) -> R<bool> {
        match req {
            Syn::Sym(id, _) => {
                let n = self.name(id.sym);
                Ok(n == "else" || features().contains(&n.as_str()))
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
        self.library_name(spec).is_some_and(|n| {
            LIBRARIES.contains(&n.as_str())
                || super::standard::exports(&n).is_some()
                || bundled::find(&n).is_some()
                || self.globals.libraries.contains_key(&n)
        })
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
        if let Some(name) = args.first() {
            let lib = self.library_name(name).unwrap_or_default();
            if bundled::find(&lib).is_some() {
                return err(
                    format!("define-library: ({lib}) is a library of Arbores; choose another name"),
                    name.pos(),
                );
            }
        }
        self.define_library_as(args, pos, None)
    }

    /// `define-library`, for a bundled library when `bundled` is given:
    /// then every name the body defines, exported or not, is hidden
    /// (`NAME@(CANONICAL)`), and imports reach the exports through
    /// aliases.
    fn define_library_as(
        &mut self,
        args: &[Syn],
        pos: Pos,
        bundled: Option<&Bundled>,
    ) -> R<(Vec<Syn>, Env)> {
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
        // name seen inside -> global, for names an import set renamed
        let mut imported: Vec<(Sym, Sym)> = Vec::new();
        // Declarations still to take, in order; `include-library-declarations`
        // puts a file's in front.
        let mut queue: std::collections::VecDeque<Syn> = decls.iter().cloned().collect();
        while let Some(d) = queue.pop_front() {
            let d = &d;
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
                        let names = self.import_set(spec)?;
                        imported.extend(names.into_iter().filter(|(n, t)| n != t));
                    }
                }
                "begin" => body.extend(parts[1..].iter().cloned()),
                "include" | "include-ci" => {
                    let forms = self.include_forms(&parts[1..], head == "include-ci", d.pos())?;
                    body.extend(forms);
                }
                "include-library-declarations" => {
                    let forms = self.include_forms(&parts[1..], false, d.pos())?;
                    for f in forms.into_iter().rev() {
                        queue.push_front(f);
                    }
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
        let scope = if bundled.is_some() {
            Scope::new_internal()
        } else {
            Scope::new(None)
        };
        let mut defined = Vec::new();
        for f in &body {
            self.defined_names(f, &mut defined);
        }
        for n in defined {
            let target = match exports.iter().find(|(inner, _)| *inner == n) {
                Some((_, outer)) if bundled.is_none() => *outer,
                _ => {
                    let hidden = format!("{}@({})", self.name(n), lib);
                    self.syms.intern(&hidden)
                }
            };
            if !scope.bindings.borrow().iter().any(|(id, _)| id.sym == n) {
                scope.bind(Ident::plain(n), Binding::Global(target));
            }
        }
        for (name, target) in imported {
            if !scope.bindings.borrow().iter().any(|(id, _)| id.sym == name) {
                scope.bind(Ident::plain(name), Binding::Global(target));
            }
        }
        if bundled.is_none() {
            let exported = exports.iter().map(|(_, outer)| *outer).collect();
            self.globals.libraries.insert(lib, exported);
        }
        Ok((body, Some(scope)))
    }

    /// Names a library body form defines, found without expanding macros
    /// (`define`, `define-values`, `define-record-type`, `define-syntax`,
    /// and those inside `begin`).
    /// Also the hidden name through which a record type's procedures
    /// reach the type (`%record-type:NAME`, see `records.rs`).
    pub(super) fn defined_names(&mut self, form: &Syn, out: &mut Vec<Sym>) {
        defined_names(form, self.syms, out);
        let mut types = Vec::new();
        record_type_names(form, self.syms, &mut types);
        for t in types {
            let hidden = format!("%record-type:{}", self.syms.name(t));
            out.push(self.syms.intern(&hidden));
        }
    }

    /// `(import SET ...)` at top level: the names the sets bring in stand
    /// for their globals from now on; the names of their libraries that
    /// no import brings in as they are (left out by `only` and `except`,
    /// renamed by `rename` and `prefix`) are hidden from the program's
    /// text until an import brings them in or the program defines them.
    pub(super) fn import(&mut self, specs: &[Syn]) -> R<()> {
        if let Some(b) = self.bundled_to_load(specs)?.first() {
            let pos = specs.first().map_or(Pos::default(), |s| s.pos());
            return err(
                format!(
                    "import: ({}) must first be imported at top level",
                    b.canonical()
                ),
                pos,
            );
        }
        let mut brought = Vec::new();
        let mut left_out = Vec::new();
        for spec in specs {
            let names = self.import_set(spec)?;
            for lib in self.import_set_libraries(spec) {
                for (n, _) in self.library_exports(&lib)? {
                    if !names.iter().any(|(name, _)| *name == n) {
                        left_out.push((n, lib.clone()));
                    }
                }
            }
            brought.extend(names);
        }
        for (name, target) in &brought {
            self.globals.hidden.remove(name);
            self.globals.imported.insert(*name);
            if name == target {
                self.globals.aliases.remove(name);
            } else {
                self.globals.aliases.insert(*name, *target);
            }
        }
        for (n, lib) in left_out {
            if self.globals.imported.contains(&n) {
                continue;
            }
            let why = format!("{} (not imported from ({lib}))", self.name(n));
            let hidden = self.syms.intern(&why);
            self.globals.hidden.insert(n, hidden);
        }
        Ok(())
    }

    /// The bindings of `(environment SET ...)` (R7RS 6.12): each name the
    /// import sets bring in, with the global it stands for. A name two
    /// sets bind to different globals is an error (R7RS 5.2).
    pub fn environment_bindings(&mut self, specs: &[Syn]) -> R<Vec<(Sym, Sym)>> {
        let mut out: Vec<(Sym, Sym)> = Vec::new();
        for spec in specs {
            let names = self.import_set(spec).map_err(|mut e| {
                if let Some(rest) = e.message.strip_prefix("import: ") {
                    e.message = format!("environment: {rest}");
                }
                e
            })?;
            for (name, target) in names {
                match out.iter().find(|(n, _)| *n == name) {
                    Some((_, t)) if *t != target => {
                        return err(
                            format!(
                                "environment: {} is imported twice, with different bindings",
                                self.name(name)
                            ),
                            spec.pos(),
                        )
                    }
                    Some(_) => {}
                    None => out.push((name, target)),
                }
            }
        }
        Ok(out)
    }

    /// The body of the first bundled library the import sets `specs`
    /// draw on that has not run in this engine yet (those it needs come
    /// first), to run at top level in its scope; none when all have run.
    pub fn next_bundled_body(&mut self, specs: &[Syn]) -> R<Option<(Vec<Syn>, Env)>> {
        match self.bundled_to_load(specs)?.first() {
            Some(b) => self.load_bundled(b).map(Some),
            None => Ok(None),
        }
    }

    /// The library names an import set draws on (one; none if malformed,
    /// which `import_set` reports).
    fn import_set_libraries(&self, spec: &Syn) -> Vec<String> {
        let mut spec = spec;
        while let Some((_, inner, _)) = self.import_modifier(spec) {
            spec = inner;
        }
        if spec.as_list().is_none() {
            return vec![];
        }
        self.library_name(spec).into_iter().collect()
    }

    /// If `spec` is `(only SET ...)`, `(except SET ...)`, `(prefix SET
    /// ...)` or `(rename SET ...)` with a list for SET: the keyword, SET
    /// and what follows it.
    fn import_modifier<'s>(&self, spec: &'s Syn) -> Option<(String, &'s Syn, &'s [Syn])> {
        let parts = spec.as_list()?;
        let head = match parts.first() {
            Some(Syn::Sym(id, _)) => self.name(id.sym),
            _ => return None,
        };
        let inner = parts.get(1).filter(|s| s.as_list().is_some())?;
        matches!(head.as_str(), "only" | "except" | "prefix" | "rename")
            .then(|| (head, inner, &parts[2..]))
    }

    /// The names an import set brings in, each with the global it stands
    /// for (R7RS 5.2): a library's exports, narrowed by `only` and
    /// `except`, renamed by `prefix` and `rename`. A name an import set
    /// lists that is not there is an error.
    pub(super) fn import_set(&mut self, spec: &Syn) -> R<Vec<(Sym, Sym)>> {
        self.nested(spec.pos(), |front| front.import_set_inner(spec))
    }

    fn import_set_inner(&mut self, spec: &Syn) -> R<Vec<(Sym, Sym)>> {
        if let Some((head, set, rest)) = self.import_modifier(spec) {
            let mut names = self.import_set(set)?;
            let inner = crate::printer::syn_to_string(set, self.syms);
            let present = |names: &[(Sym, Sym)], s: &Syn| -> R<Sym> {
                let Syn::Sym(id, p) = s else {
                    return err(format!("import: {head} takes identifiers"), s.pos());
                };
                if !names.iter().any(|(n, _)| *n == id.sym) {
                    let shown = self.syms.name(id.sym);
                    return err(format!("import: {inner} has no {shown}"), *p);
                }
                Ok(id.sym)
            };
            match head.as_str() {
                "only" | "except" => {
                    let mut listed = Vec::new();
                    for s in rest {
                        listed.push(present(&names, s)?);
                    }
                    let keep = head == "only";
                    names.retain(|(n, _)| listed.contains(n) == keep);
                }
                "prefix" => {
                    let [Syn::Sym(p, _)] = rest else {
                        return err("import: (prefix IMPORT-SET PREFIX)", spec.pos());
                    };
                    let prefix = self.name(p.sym);
                    for (n, _) in names.iter_mut() {
                        let renamed = format!("{prefix}{}", self.syms.name(*n));
                        *n = self.syms.intern(&renamed);
                    }
                }
                _ => {
                    for pair in rest {
                        let Some([from, Syn::Sym(to, _)]) = pair.as_list() else {
                            return err("import: rename takes (OLD NEW) pairs", pair.pos());
                        };
                        let from = present(&names, from)?;
                        for (n, _) in names.iter_mut().filter(|(n, _)| *n == from) {
                            *n = to.sym;
                        }
                    }
                }
            }
            return Ok(names);
        }
        let Some(lib) = self.library_name(spec).filter(|_| self.library_known(spec)) else {
            let shown = crate::printer::syn_to_string(spec, self.syms);
            return err(format!("import: unknown library {shown}"), spec.pos());
        };
        self.library_exports(&lib)
    }

    /// The names a library exports, each with the global it stands for:
    /// a standard one's from its list, a bundled one's from its source,
    /// the `(arbores)` library's the `arb:` names, a defined one's from
    /// its `export` declarations.
    fn library_exports(&mut self, lib: &str) -> R<Vec<(Sym, Sym)>> {
        if let Some(b) = bundled::find(lib) {
            return self.bundled_exports(b);
        }
        Ok(self
            .plain_exports(lib)
            .into_iter()
            .map(|n| (n, n))
            .collect())
    }

    /// The exports of a library whose names stand for globals of the same
    /// name.
    fn plain_exports(&mut self, lib: &str) -> Vec<Sym> {
        if let Some(names) = super::standard::exports(lib) {
            return names.iter().map(|n| self.syms.intern(n)).collect();
        }
        if let Some(names) = self.globals.libraries.get(lib) {
            return names.clone();
        }
        if lib == "arbores plan" {
            return PLAN_EXPORTS.iter().map(|n| self.syms.intern(n)).collect();
        }
        if lib != "arbores" {
            return Vec::new();
        }
        let syms = &*self.syms;
        let arb = |s: &Sym| syms.name(*s).starts_with("arb:");
        let mut names: Vec<Sym> = self
            .globals
            .names
            .iter()
            .filter(|s| arb(s))
            .copied()
            .collect();
        names.extend(self.globals.syntax.keys().filter(|s| arb(s)));
        names
    }
}

impl Front<'_> {
    /// A bundled library's `define-library` form (its name and
    /// declarations), read from its source once per engine.
    fn bundled_form(&mut self, b: &Bundled) -> R<Vec<Syn>> {
        if let Some(args) = self.globals.bundled_forms.get(b.canonical()) {
            return Ok(args.clone());
        }
        let forms =
            crate::reader::read_all(b.source, self.syms).map_err(|e| super::CompileError {
                message: format!("library ({}) does not read: {}", b.canonical(), e.message),
                pos: e.pos,
                out_of_memory: false,
            })?;
        match forms.as_slice() {
            [Syn::List(items, None, _)] if items.len() >= 2 => {
                let args: Vec<Syn> = items[1..].iter().map(Syn::without_positions).collect();
                self.globals
                    .bundled_forms
                    .insert(b.canonical(), args.clone());
                Ok(args)
            }
            _ => err(
                format!("library ({}) is not one define-library form", b.canonical()),
                Pos::default(),
            ),
        }
    }

    /// A bundled library's exports and the globals they stand for: its
    /// own definitions' hidden globals, or for a name it exports without
    /// defining (`car` from `(srfi 1)`) the global of that name.
    fn bundled_exports(&mut self, b: &'static Bundled) -> R<Vec<(Sym, Sym)>> {
        if let Some(known) = self.globals.bundled_exports.get(b.canonical()) {
            return Ok(known.clone());
        }
        let args = self.bundled_form(b)?;
        // (name it has inside, name it is exported as)
        let mut exported: Vec<(Sym, Sym)> = Vec::new();
        let mut defined = Vec::new();
        for d in &args[1..] {
            let Some(parts) = d.as_list() else { continue };
            let head = match parts.first() {
                Some(Syn::Sym(id, _)) => self.name(id.sym),
                _ => continue,
            };
            match head.as_str() {
                "export" => exported.extend(parts[1..].iter().filter_map(|e| match e {
                    Syn::Sym(id, _) => Some((id.sym, id.sym)),
                    Syn::List(items, None, _) if items.len() == 3 => match (&items[1], &items[2]) {
                        (Syn::Sym(inner, _), Syn::Sym(outer, _)) => Some((inner.sym, outer.sym)),
                        _ => None,
                    },
                    _ => None,
                })),
                "begin" => {
                    for f in &parts[1..] {
                        self.defined_names(f, &mut defined);
                    }
                }
                _ => {}
            }
        }
        // A name exported without being defined is one the library
        // imports: from another bundled library (its hidden global), or
        // the global of that name.
        let mut reexported: Vec<(Sym, Sym)> = Vec::new();
        for spec in library_imports(&args, self.syms) {
            for lib in self.import_set_libraries(&spec) {
                if let Some(other) = bundled::find(&lib) {
                    if !std::ptr::eq(other, b) {
                        reexported.extend(self.bundled_exports(other)?);
                    }
                }
            }
        }
        let pairs: Vec<(Sym, Sym)> = exported
            .into_iter()
            .map(|(n, outer)| {
                if defined.contains(&n) {
                    let hidden = b.hidden(self.syms.name(n));
                    (outer, self.syms.intern(&hidden))
                } else if let Some(&(_, g)) = reexported.iter().find(|(m, _)| *m == n) {
                    (outer, g)
                } else if let Some(g) = self.prelude_hidden(b, n) {
                    (outer, g)
                } else {
                    (outer, n)
                }
            })
            .collect();
        self.globals
            .bundled_exports
            .insert(b.canonical(), pairs.clone());
        Ok(pairs)
    }

    /// The syntax `NAME@(CANONICAL)` the prelude defines for bundled
    /// library `b` (the prelude holds a library's syntax, see
    /// `prelude.scm`), if it does.
    fn prelude_hidden(&mut self, b: &Bundled, n: Sym) -> Option<Sym> {
        let hidden = b.hidden(self.syms.name(n));
        let g = self.syms.intern(&hidden);
        self.globals.syntax.contains_key(&g).then_some(g)
    }

    /// The bundled libraries the import sets `specs` draw on that have
    /// not run in this engine yet.
    /// Those a library needs come before it.
    pub(super) fn bundled_to_load(&mut self, specs: &[Syn]) -> R<Vec<&'static Bundled>> {
        let mut out: Vec<&'static Bundled> = Vec::new();
        self.add_bundled(specs, &mut out)?;
        Ok(out)
    }

    fn add_bundled(&mut self, specs: &[Syn], out: &mut Vec<&'static Bundled>) -> R<()> {
        for spec in specs {
            for lib in self.import_set_libraries(spec) {
                let Some(b) = bundled::find(&lib) else {
                    continue;
                };
                let marker = self.syms.intern(&b.marker());
                let loaded = self
                    .globals
                    .lookup(marker)
                    .is_some_and(|i| !matches!(self.globals.values[i as usize], Value::Undefined));
                if loaded || out.iter().any(|o| std::ptr::eq(*o, b)) {
                    continue;
                }
                let args = self.bundled_form(b)?;
                let deps = library_imports(&args, self.syms);
                self.add_bundled(&deps, out)?;
                out.push(b);
            }
        }
        Ok(())
    }

    /// The body of a bundled library to run at top level, in its scope.
    pub(super) fn load_bundled(&mut self, b: &'static Bundled) -> R<(Vec<Syn>, Env)> {
        let args = self.bundled_form(b)?;
        self.define_library_as(&args, Pos::default(), Some(b))
    }
}

/// The import sets of a `define-library` form's `import` declarations
/// (`args`: the name, then the declarations).
pub(super) fn library_imports(args: &[Syn], syms: &SymbolTable) -> Vec<Syn> {
    let mut out = Vec::new();
    for d in args.iter().skip(1) {
        if let Some(parts) = d.as_list() {
            if matches!(parts.first(), Some(Syn::Sym(id, _)) if syms.name(id.sym) == "import") {
                out.extend(parts[1..].iter().cloned());
            }
        }
    }
    out
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

/// The type names of the `define-record-type` forms in `form` (and in the
/// `begin` forms it holds).
fn record_type_names(form: &Syn, syms: &SymbolTable, out: &mut Vec<Sym>) {
    let Some(items) = form.as_list() else { return };
    let Some(Syn::Sym(head, _)) = items.first() else {
        return;
    };
    match syms.name(head.sym) {
        "begin" => {
            for f in &items[1..] {
                record_type_names(f, syms, out);
            }
        }
        "define-record-type" => match items.get(1) {
            Some(Syn::Sym(id, _)) => out.push(id.sym),
            Some(Syn::List(inner, _, _)) => {
                if let Some(Syn::Sym(id, _)) = inner.first() {
                    out.push(id.sym);
                }
            }
            _ => {}
        },
        _ => {}
    }
}
