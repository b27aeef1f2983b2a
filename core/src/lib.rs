//! arbores-core: the Arbores engine.
//!
//! This crate does no I/O of any kind: no files, clocks, threads, environment
//! or standard output. Output written by Scheme goes to a buffer returned with
//! each evaluation; anything from outside (time, bytes of a snapshot) comes in
//! as an argument. That is what lets the same engine run natively, inside
//! wasmtime and in the browser with identical behaviour.

// Safe Rust only, but for one hint to the processor (`repo::prefetch`,
// which says why it cannot be unsound; tests/tidy.rs checks that no other
// file holds `unsafe`).
#![deny(unsafe_code)]

// The modules in layers, lowest first: a module uses only modules of its
// own layer or below (docs/ARCHITECTURE.md, "Layers"; checked by
// tests/tidy.rs). `repo` stands beside them: it uses only itself, and
// any layer may use it.
//
// 0. the transcendental functions of floats: uses nothing of the crate,
//    and every module, `repo` too, may use it
mod float_math;
// 1. data: the values in memory
mod chunked;
mod complex;
mod heap;
mod host;
mod memory_files;
mod number;
mod pos;
mod symbol;
mod value;
// 2. text: syntax, reading, printing, data between syntax and values
mod datum;
mod json;
mod printer;
mod reader;
mod syntax;
// 3. compiler
mod compiler;
// 4. primitives
mod builtins;
// 5. knowledge as Scheme
pub mod arb;
// 6. the virtual machine
mod vm;
// 7. the public face
mod api;
mod sessions;
// beside: the knowledge repository
pub mod repo;
// the unit tests' random generator
#[cfg(test)]
mod test_eval;
#[cfg(test)]
mod test_rng;

pub use api::tools::{Run, Suspension, Tool, ToolAnswer, ToolCall};
pub use api::{
    did_you_mean, install_prepared_image, split_forms, Engine, EvalError, Evaluation, Position,
    PreparedFrom,
};
pub use heap::MemoryMeter;
pub use host::{BasicHost, Host, InterruptCheck};
pub use memory_files::{MemoryFiles, DEFAULT_FILES_CAP};
pub use repo::cas::{BlobSource, StoreError};
pub use repo::forest::{hex, Hash, ImportError, Snapshot};
pub use repo::knowledge::{CommitReply, KnowledgeStore};
pub use repo::Tier;
pub use sessions::{
    EntryHash, MemorySnapshotStore, SavedSnapshot, SnapshotDiff, SnapshotListing, SnapshotStore,
    Turn, Turns,
};
pub use vm::{ErrorKind, Limits};
