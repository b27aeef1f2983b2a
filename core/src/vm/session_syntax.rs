//! The global syntax a session defined, as bytes for dumps (`image.rs`)
//! and session snapshots (`snapshot.rs`).
//!
//! A macro is written in the binary form the prepared image gives the
//! prelude's macros (`prepared::write_macro_with`), its symbols numbered
//! in a table of the block's own, not as text evaluated again on load:
//! text would be compiled by whatever `define-syntax`, `syntax-rules` and
//! literals mean in the loading session (a program may have rebound
//! them), and would lose which names a bundled library's macro sees as
//! its own; the binary form rebuilds the very transformer. A library's
//! macro is written with its scope, which holds only names standing for
//! globals (`NAME@(LIBRARY)`); the globals are carried with the session's
//! other globals, so the library's body is not run again.
//!
//! Layout (integers LEB128; a symbol is 1 + its index in the block's
//! table, 0 the "no ellipsis" of rules that list it among their literals):
//!
//! ```text
//! symbols: count, then names
//! scopes:  count, then per scope: internal (byte), count, (name, global) pairs
//! macros:  count, then per macro: its global name, scope (0 none, else 1 + index), the macro
//! removed: count, then the names of the prelude's syntax the session undefined
//! aliases: count, then (name, global) pairs: names imports renamed
//! hidden:  count, then (name, global) pairs: names imports left out
//! imported: count, then names imports brought in as they are
//! libraries: count, then per library: its name (text), count, exported names
//! ```
//!
//! With the imports' names: what `import` made the session's names
//! stand for is part of what its forms mean, like its macros.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::image::{In, Out, PreludeImage, R};
use super::prepared::{read_macro_with, write_macro_with};
use super::Vm;
use crate::compiler::globals::GlobalSyntax;
use crate::symbol::Sym;
use crate::syntax::scope::{Binding, Macro, Scope};
use crate::syntax::{Ident, Syn};

/// The session's syntax read back, applied by `CarriedSyntax::apply`.
pub(super) struct CarriedSyntax {
    defined: Vec<(Sym, Rc<Macro>)>,
    removed: Vec<Sym>,
    aliases: Vec<(Sym, Sym)>,
    hidden: Vec<(Sym, Sym)>,
    imported: Vec<Sym>,
    libraries: Vec<(String, Vec<Sym>)>,
}

/// Numbers symbols in a block's own table.
#[derive(Default)]
struct SymTable {
    syms: Vec<Sym>,
    ids: BTreeMap<Sym, u64>,
}

/// The symbol a macro's ellipsis is when its rules have none.
const NO_ELLIPSIS: Sym = Sym(u32::MAX);

impl SymTable {
    fn id(&mut self, s: Sym) -> u64 {
        if s == NO_ELLIPSIS {
            return 0;
        }
        let next = self.syms.len() as u64 + 1;
        *self.ids.entry(s).or_insert_with(|| {
            self.syms.push(s);
            next
        })
    }
}

impl Vm {
    /// The syntax the session defined or changed since the prelude (and
    /// the prelude's it undefined), as a block of bytes; with the names
    /// of the macros the block cannot hold, each with why (`what`: what
    /// cannot hold it, for the message).
    pub(super) fn write_session_syntax(
        &self,
        image: &PreludeImage,
        what: &str,
    ) -> (Vec<u8>, Vec<(String, String)>) {
        let mut table = SymTable::default();
        let mut scopes: Vec<Rc<Scope>> = Vec::new();
        let mut body = Out::default();
        let mut count = 0u64;
        let mut refused = Vec::new();
        let mut macros = Out::default();
        for (key, entry) in &self.globals.syntax {
            if image.same_syntax(*key, entry) {
                continue;
            }
            let name = self.syms.name(*key);
            let GlobalSyntax::Macro(m) = entry else {
                refused.push((
                    name.to_string(),
                    format!(
                        "{name} is a special form under another name, which {what} cannot hold"
                    ),
                ));
                continue;
            };
            let mut one = Out::default();
            let r = self.write_carried_macro(&mut one, *key, m, what, &mut table, &mut scopes);
            match r {
                Ok(()) => {
                    macros.0.extend_from_slice(&one.0);
                    count += 1;
                }
                Err(why) => refused.push((name.to_string(), why)),
            }
        }
        // Scopes, once each, before the macros that name them.
        body.u(scopes.len() as u64);
        for scope in &scopes {
            body.byte(scope.internal as u8);
            let bindings = scope.bindings.borrow();
            body.u(bindings.len() as u64);
            for (id, b) in bindings.iter() {
                // `write_carried_macro` took only scopes of plain names
                // bound to globals.
                if let Binding::Global(g) = b {
                    body.u(table.id(id.sym));
                    body.u(table.id(*g));
                }
            }
        }
        body.u(count);
        body.0.extend_from_slice(&macros.0);
        let removed: Vec<Sym> = image
            .syntax_names()
            .filter(|s| !self.globals.syntax.contains_key(s))
            .collect();
        body.u(removed.len() as u64);
        for s in removed {
            body.u(table.id(s));
        }
        for map in [&self.globals.aliases, &self.globals.hidden] {
            body.u(map.len() as u64);
            for (name, global) in map {
                body.u(table.id(*name));
                body.u(table.id(*global));
            }
        }
        body.u(self.globals.imported.len() as u64);
        for s in &self.globals.imported {
            body.u(table.id(*s));
        }
        body.u(self.globals.libraries.len() as u64);
        for (name, exported) in &self.globals.libraries {
            body.str(name);
            body.u(exported.len() as u64);
            for s in exported {
                body.u(table.id(*s));
            }
        }
        let mut out = Out::default();
        out.u(table.syms.len() as u64);
        for s in &table.syms {
            out.str(self.syms.name(*s));
        }
        out.0.extend_from_slice(&body.0);
        (out.0, refused)
    }

    fn write_carried_macro(
        &self,
        out: &mut Out,
        key: Sym,
        m: &Macro,
        what: &str,
        table: &mut SymTable,
        scopes: &mut Vec<Rc<Scope>>,
    ) -> Result<(), String> {
        let name = self.syms.name(key);
        let scope = match &m.env {
            None => 0,
            Some(scope) => {
                let carried = scope.parent.is_none()
                    && scope
                        .bindings
                        .borrow()
                        .iter()
                        .all(|(id, b)| id.alias.is_none() && matches!(b, Binding::Global(_)));
                if !carried {
                    return Err(format!(
                        "the macro {name} is defined in a local scope, which {what} cannot hold"
                    ));
                }
                match scopes.iter().position(|s| Rc::ptr_eq(s, scope)) {
                    Some(i) => i + 1,
                    None => {
                        scopes.push(scope.clone());
                        scopes.len()
                    }
                }
            }
        };
        out.u(table.id(key));
        out.u(scope as u64);
        write_macro_with(out, m, name, what, &mut |s| table.id(s))
    }

    /// Reads a block made by `write_session_syntax`, interning its names
    /// but changing nothing else.
    pub(super) fn read_session_syntax(&mut self, inp: &mut In) -> R<CarriedSyntax> {
        let n = inp.len()?;
        let mut syms = Vec::with_capacity(n);
        for _ in 0..n {
            let name = inp.str()?;
            syms.push(self.syms.intern(name));
        }
        let ellipsis = |inp: &mut In| -> R<Sym> {
            match inp.index(syms.len() + 1, "symbol")? {
                0 => Ok(NO_ELLIPSIS),
                k => Ok(syms[k - 1]),
            }
        };
        let sym = |inp: &mut In| -> R<Sym> {
            match ellipsis(inp)? {
                NO_ELLIPSIS => inp.err("no symbol where one is needed"),
                s => Ok(s),
            }
        };
        let n = inp.len()?;
        let mut scopes = Vec::with_capacity(n);
        for _ in 0..n {
            let scope = match inp.byte()? {
                0 => Scope::new(None),
                1 => Scope::new_internal(),
                _ => return inp.err("a scope neither the engine's nor a program's"),
            };
            let m = inp.len()?;
            for _ in 0..m {
                let name = sym(inp)?;
                let global = sym(inp)?;
                scope.bind(Ident::plain(name), Binding::Global(global));
            }
            scopes.push(scope);
        }
        let n = inp.len()?;
        let mut defined = Vec::with_capacity(n);
        for _ in 0..n {
            let key = sym(inp)?;
            let env = match inp.index(scopes.len() + 1, "scope")? {
                0 => None,
                k => Some(scopes[k - 1].clone()),
            };
            let mut m = read_macro_with(inp, &sym, &ellipsis)?;
            // What `syntax-rules` checks of the rules it takes.
            if m.rules
                .iter()
                .any(|(p, _)| !matches!(p, Syn::List(items, _, _) if !items.is_empty()))
            {
                return inp.err("a macro's pattern is not a list starting with its keyword");
            }
            m.env = env;
            defined.push((key, Rc::new(m)));
        }
        let n = inp.len()?;
        let mut removed = Vec::with_capacity(n);
        for _ in 0..n {
            removed.push(sym(inp)?);
        }
        let pairs = |inp: &mut In| -> R<Vec<(Sym, Sym)>> {
            let n = inp.len()?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push((sym(inp)?, sym(inp)?));
            }
            Ok(v)
        };
        let aliases = pairs(inp)?;
        let hidden = pairs(inp)?;
        let n = inp.len()?;
        let mut imported = Vec::with_capacity(n);
        for _ in 0..n {
            imported.push(sym(inp)?);
        }
        let n = inp.len()?;
        let mut libraries = Vec::with_capacity(n);
        for _ in 0..n {
            let name = inp.str()?.to_string();
            let m = inp.len()?;
            let mut exported = Vec::with_capacity(m);
            for _ in 0..m {
                exported.push(sym(inp)?);
            }
            libraries.push((name, exported));
        }
        Ok(CarriedSyntax {
            defined,
            removed,
            aliases,
            hidden,
            imported,
            libraries,
        })
    }
}

impl CarriedSyntax {
    /// Defines the syntax read in `vm` (and undefines what the session
    /// that wrote it had undefined), and gives its names what the
    /// session's imports made them stand for.
    pub(super) fn apply(self, vm: &mut Vm) {
        for s in self.removed {
            vm.globals.syntax.remove(&s);
        }
        for (key, m) in self.defined {
            vm.globals.syntax.insert(key, GlobalSyntax::Macro(m));
        }
        let g = &mut vm.globals;
        g.aliases.extend(self.aliases);
        g.hidden.extend(self.hidden);
        g.imported.extend(self.imported);
        g.libraries.extend(self.libraries);
    }
}
