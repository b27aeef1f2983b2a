//! The global environment: variables by index, and global syntax by name;
//! and the names of the hidden globals the engine makes itself.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::special::Special;
use crate::symbol::{Sym, SymbolTable};
use crate::syntax::scope::Macro;
use crate::value::Value;

#[derive(Clone)]
pub enum GlobalSyntax {
    Special(Special),
    Macro(Rc<Macro>),
}

#[derive(Clone, Default)]
pub struct Globals {
    pub values: Vec<Value>,
    pub names: Vec<Sym>,
    by_sym: Vec<u32>,
    pub syntax: BTreeMap<Sym, GlobalSyntax>,
    /// Libraries defined with `define-library` ("name part ...") and the
    /// names each exports.
    pub libraries: BTreeMap<String, Vec<Sym>>,
    /// Names brought in by `(import (prefix ...))` or `(import (rename
    /// ...))` at top level, and the global each stands for.
    pub aliases: BTreeMap<Sym, Sym>,
    /// Names an import set at top level left out (`only`, `except`, the
    /// old names of `rename` and `prefix`), each with the unbound global a
    /// reference to it in the program's own text stands for, whose name
    /// says why.
    pub hidden: BTreeMap<Sym, Sym>,
    /// Names an import at top level brought in as they are: never hidden
    /// by a later one (a program's imports are taken together).
    pub imported: std::collections::BTreeSet<Sym>,
    /// The exports of each bundled library read so far, by canonical
    /// name, each with the global it stands for.
    pub bundled_exports: BTreeMap<&'static str, Vec<(Sym, Sym)>>,
    /// The `define-library` form of each bundled library read so far (its
    /// name and declarations), by canonical name.
    pub bundled_forms: BTreeMap<&'static str, Vec<crate::syntax::Syn>>,
}

const NONE: u32 = u32::MAX;

/// What ends the name of the engine's own cell of a global (`reverse@(arbores)`):
/// the engine's code (the prelude, the bundled libraries, what their macros
/// introduce) reads and defines these cells, a program the plain ones, so
/// a program that defines its own `reverse` or `cons` does not change how
/// `map` or `guard` work. The reader cannot produce such a name (`@(`
/// splits it), so no program can name the engine's cell.
pub const ENGINE_CELL: &str = "@(arbores)";

/// The name a program knows a global by: `name` without [`ENGINE_CELL`].
pub fn program_name(name: &str) -> &str {
    name.strip_suffix(ENGINE_CELL).unwrap_or(name)
}

impl Globals {
    /// The index of the global named `s`, creating an unbound one if needed.
    pub fn index(&mut self, s: Sym) -> u32 {
        let k = s.0 as usize;
        if k >= self.by_sym.len() {
            self.by_sym.resize(k + 1, NONE);
        }
        if self.by_sym[k] == NONE {
            self.by_sym[k] = self.values.len() as u32;
            self.values.push(Value::Undefined);
            self.names.push(s);
        }
        self.by_sym[k]
    }

    pub fn lookup(&self, s: Sym) -> Option<u32> {
        match self.by_sym.get(s.0 as usize) {
            Some(&i) if i != NONE => Some(i),
            _ => None,
        }
    }

    /// The global a name stands for: itself unless an import renamed it.
    pub fn alias_target(&self, s: Sym) -> Sym {
        self.aliases.get(&s).copied().unwrap_or(s)
    }

    /// The engine's own cell of global `s` ([`ENGINE_CELL`]), made on
    /// first use with the value `s` has then (a primitive, or nothing yet:
    /// the engine's `define` sets both).
    pub fn engine_cell(&mut self, syms: &mut SymbolTable, s: Sym) -> Sym {
        let name = syms.name(s);
        if name.ends_with(ENGINE_CELL) {
            return s;
        }
        let cell = syms.intern(&format!("{name}{ENGINE_CELL}"));
        if self.lookup(cell).is_none() {
            let c = self.index(cell);
            if let Some(g) = self.lookup(s) {
                self.values[c as usize] = self.values[g as usize];
            }
        }
        cell
    }

    pub fn define(&mut self, s: Sym, v: Value) {
        let i = self.index(s);
        self.values[i as usize] = v;
    }
}

/// The global that holds the value of stored node `id` once loaded (what
/// `arb:ref` binds a name to, and what the VM's loader defines).
pub fn node_global_name(id: u64) -> String {
    format!("@#{id}")
}

/// The node id of a name made by [`node_global_name`].
pub fn parse_node_global(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("@#")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_globals_round_trip_and_reject_other_names() {
        for id in [0, 7, 256, u64::MAX] {
            assert_eq!(parse_node_global(&node_global_name(id)), Some(id));
        }
        for bad in ["@#", "@#x", "@#-1", "#12", "@#18446744073709551616", "f@#1"] {
            assert_eq!(parse_node_global(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_index_is_made_once_per_name() {
        let mut g = Globals::default();
        let a = g.index(Sym(3));
        let b = g.index(Sym(9));
        assert_ne!(a, b);
        assert_eq!(g.index(Sym(3)), a);
        assert_eq!(g.lookup(Sym(9)), Some(b));
        assert_eq!(g.lookup(Sym(4)), None);
        assert!(matches!(g.values[a as usize], Value::Undefined));
        g.define(Sym(3), Value::Int(1));
        assert!(matches!(g.values[a as usize], Value::Int(1)));
    }
}
