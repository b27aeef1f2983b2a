//! The `arb:` procedures: the knowledge repository as Scheme sees it.
//!
//! - `values`: Scheme values in and out (association lists with string
//!   keys, ids of any size, error alists).
//! - `procedures`: every `arb:` procedure of the reference (docs/API.md),
//!   as primitives that see the knowledge base through [`KCtx`].
//! - `deltas`: a version's operations as S-expressions of `arb:` calls.
//! - `closure`: stored nodes as standalone R7RS source text, and the shape
//!   of a node's code (what it defines, what its value is), which the VM's
//!   loader also reads.
//!
//! These are primitives: they never need the VM. The VM calls them through
//! [`crate::builtins::KCtx`], and loads stored nodes by name itself
//! (`vm::loader`).
//!
//! What is written in Scheme (`arb:eval`, `arb:eval-readonly`,
//! `arb:transaction`, `arb:error?`) is in the prelude, built on the `%arb:`
//! primitives registered here.

pub mod closure;
pub mod deltas;
pub mod procedures;
pub mod values;

use crate::builtins::PrimTable;

pub use values::ArbError;

/// Registers the `arb:` and `%arb:` primitives.
pub fn register(t: &mut PrimTable) {
    procedures::register(t);
}
