//! The knowledge repository: versioned Scheme knowledge, kept by the core.
//!
//! - `cas`: content-addressed storage: blobs read lazily from the host's
//!   store, and the persistent sorted map the persisted indexes are built on.
//! - `node`: what is stored — a node of Scheme code with its metadata.
//! - `forest`: the persistent version forest (copy-on-write maps, versions,
//!   deltas, reflog) and its persistence as content-addressed blobs.
//! - `index`: the indexes of the current version (symbol names,
//!   dependencies, meaning), updated incrementally.
//! - `builtins`: the `arb:` procedures as nodes of the reserved id range.
//! - `browse`: structured reads for a person browsing the knowledge base
//!   (node pages, a node with its history, the version graph, diffs).
//! - `knowledge`: the forest and its indexes kept in step.
//! - `tier`: what an evaluation context may do with the knowledge base.
//! - `prefetch`: a hint that brings bytes into the processor's cache
//!   ahead of their use (the crate's only `unsafe` code).
//!
//! Pure like the rest of the core: time comes in as an argument, snapshots
//! go out and come in as bytes.

pub mod browse;
pub mod builtins;
pub mod bundle;
pub mod cas;
pub mod forest;
pub mod index;
pub mod knowledge;
pub mod node;
pub mod prefetch;
pub mod tier;

pub use tier::Tier;
