//! What several core test programs share: a seeded generator, so a
//! failure names an input that reproduces, and an engine that knows the
//! `search` and `calc` tools. Each program uses part of it.
#![allow(dead_code, unused_imports)]

use arbores_core::{Engine, Tool};

/// The seeded generator of the tests: a failure names a seed that
/// reproduces it.
pub use fastrand::Rng;

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
