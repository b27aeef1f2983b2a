//! arbores-core: the Arbores engine.
//!
//! This crate does no I/O of any kind: no files, clocks, threads, environment
//! or standard output. Output written by Scheme goes to a buffer returned with
//! each evaluation; anything from outside (time, bytes of a snapshot) comes in
//! as an argument. That is what lets the same engine run natively, inside
//! wasmtime and in the browser with identical behaviour.

mod api;
pub mod arb;
mod builtins;
mod compiler;
mod globals;
mod heap;
mod number;
mod printer;
mod reader;
pub mod repo;
mod symbol;
mod syntax;
mod value;
mod vm;

pub use api::{Engine, ErrorKind, EvalError, Evaluation, InterruptCheck, Limits, Position, Tier};
pub use repo::forest::{Hash, ImportError, Snapshot};
