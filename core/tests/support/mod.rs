//! What several core test programs share: a seeded generator, so a
//! failure names an input that reproduces, and an engine that knows the
//! `search` and `calc` tools. Each program uses part of it.
#![allow(dead_code)]

use arbores_core::{Engine, Tool};

/// xorshift64: small and deterministic.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// A fresh engine with the tools `search (query)` and `calc (expression)`.
pub fn engine_with_tools() -> Engine {
    let mut e = Engine::new();
    define_tool(&mut e, "search", &["query"]);
    define_tool(&mut e, "calc", &["expression"]);
    e
}

/// Gives `e` the tool `name` with these parameters (and no description).
pub fn define_tool(e: &mut Engine, name: &str, params: &[&str]) {
    e.define_tool(Tool {
        name: name.into(),
        params: params.iter().map(|p| p.to_string()).collect(),
        description: String::new(),
    })
    .expect("a new tool name");
}
