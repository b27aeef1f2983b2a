//! The global environment: variables by index, and global syntax by name.

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::compiler::scope::{Macro, Special};
use crate::symbol::Sym;
use crate::value::Value;

#[derive(Clone)]
pub enum GlobalSyntax {
    Special(Special),
    Macro(Rc<Macro>),
}

#[derive(Default)]
pub struct Globals {
    pub values: Vec<Value>,
    pub names: Vec<Sym>,
    by_sym: Vec<u32>,
    pub syntax: BTreeMap<Sym, GlobalSyntax>,
    /// Names of libraries defined with `define-library` ("name part ...").
    pub libraries: std::collections::BTreeSet<String>,
}

const NONE: u32 = u32::MAX;

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

    pub fn define(&mut self, s: Sym, v: Value) {
        let i = self.index(s);
        self.values[i as usize] = v;
    }
}
