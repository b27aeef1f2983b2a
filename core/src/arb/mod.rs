//! The `arb:` procedures: the knowledge repository as Scheme sees it.
//!
//! - `values`: Scheme values in and out (association lists with string
//!   keys, ids of any size, error alists).
//! - `procedures`: every `arb:` procedure of the reference (docs/API.md),
//!   as primitives that see the knowledge base through [`KCtx`].
//! - `deltas`: a version's operations as S-expressions of `arb:` calls.
//! - `closure`: stored nodes as standalone R7RS source text.
//! - `loader`: knowledge usable by name: the VM loads a stored node when an
//!   unbound variable names it.
//!
//! What is written in Scheme (`arb:eval`, `arb:eval-readonly`,
//! `arb:transaction`, `arb:error?`) is in the prelude, built on the `%arb:`
//! primitives registered here.

pub mod closure;
pub mod deltas;
pub(crate) mod loader;
pub mod procedures;
pub mod values;

use crate::builtins::PrimTable;
use crate::heap::Heap;
use crate::repo::forest::Timestamp;
use crate::repo::knowledge::Knowledge;
use crate::repo::node::NodeId;
use crate::symbol::SymbolTable;
use crate::value::Value;

pub use values::ArbError;

/// What an evaluation context may do with the knowledge base.
///
/// Lower is more: the system tier may do everything, read-write everything
/// but move the current version, read-only only read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Tier {
    /// T0: the operator's own command line or REPL.
    System = 0,
    /// T1: scripts, `arb:eval`, agent sessions.
    #[default]
    ReadWrite = 1,
    /// T2: `arb:eval-readonly` and read-only sessions.
    ReadOnly = 2,
}

impl Tier {
    pub fn from_level(level: u8) -> Option<Tier> {
        Some(match level {
            0 => Tier::System,
            1 => Tier::ReadWrite,
            2 => Tier::ReadOnly,
            _ => return None,
        })
    }

    /// The name used on command lines and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::System => "system",
            Tier::ReadWrite => "read-write",
            Tier::ReadOnly => "read-only",
        }
    }

    pub fn from_name(name: &str) -> Option<Tier> {
        Some(match name {
            "system" | "T0" | "t0" => Tier::System,
            "read-write" | "T1" | "t1" => Tier::ReadWrite,
            "read-only" | "T2" | "t2" => Tier::ReadOnly,
            _ => return None,
        })
    }
}

/// What a knowledge primitive sees.
pub struct KCtx<'a> {
    pub heap: &'a mut Heap,
    pub syms: &'a mut SymbolTable,
    pub k: &'a mut Knowledge,
    /// The tier of the running code.
    pub tier: Tier,
    /// The host's clock for this evaluation, in seconds since the epoch.
    pub now: f64,
}

impl KCtx<'_> {
    pub fn timestamp(&self) -> Timestamp {
        timestamp(self.now)
    }
}

/// Seconds since the epoch (the engine's clock) as a version timestamp.
pub fn timestamp(now: f64) -> Timestamp {
    if now.is_finite() {
        Timestamp((now * 1000.0).round() as i64)
    } else {
        Timestamp(0)
    }
}

/// A knowledge primitive. Every failure is an error alist (`ArbError`),
/// arity included, so that `arb:transaction` and callers can test it with
/// `arb:error?`.
pub type KnowledgeFn = fn(&mut KCtx, &[Value]) -> Result<Value, ArbError>;

/// The global that holds the value of stored node `id` once loaded
/// (what `arb:ref` binds a name to).
pub fn node_global_name(id: NodeId) -> String {
    format!("@#{id}")
}

/// The node id of a name made by [`node_global_name`].
pub fn parse_node_global(name: &str) -> Option<NodeId> {
    let digits = name.strip_prefix("@#")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Registers the `arb:` and `%arb:` primitives.
pub fn register(t: &mut PrimTable) {
    procedures::register(t);
}
