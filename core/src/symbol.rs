//! Interned symbols. A symbol is a small integer; its name lives in the table.
//!
//! A `BTreeMap` rather than a `HashMap`: on wasm32 without an entropy source a
//! hash map's keys are predictable, and symbol names come from untrusted code.

use std::collections::BTreeMap;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Sym(pub u32);

#[derive(Clone, Default)]
pub struct SymbolTable {
    names: Vec<Rc<str>>,
    ids: BTreeMap<Rc<str>, Sym>,
    /// Bytes held by names, counted against the memory cap.
    pub bytes: usize,
}

impl SymbolTable {
    pub fn intern(&mut self, name: &str) -> Sym {
        if let Some(&s) = self.ids.get(name) {
            return s;
        }
        let rc: Rc<str> = Rc::from(name);
        let s = Sym(self.names.len() as u32);
        self.bytes += name.len() + 48;
        self.names.push(rc.clone());
        self.ids.insert(rc, s);
        s
    }

    /// How many symbols are interned (`Sym(0)` to `Sym(len - 1)`).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn name(&self, s: Sym) -> &str {
        self.names.get(s.0 as usize).map(|r| &**r).unwrap_or("?")
    }
}
