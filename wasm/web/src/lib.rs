//! arbores-web: the Arbores engine for the browser.
//!
//! A thin wasm-bindgen face over `arbores_core`: no Scheme logic lives here,
//! only the translation between JavaScript values and the core's API. The
//! playground in `web/` loads this module in a Web Worker (see
//! `web/worker.js`), so a long evaluation never blocks the page.
//!
//! Layout, so later additions have an obvious home:
//! - [`engine`]: the `Engine` class exported to JavaScript.
//! - [`convert`]: plain serde shapes of what crosses the boundary.
//! - [`browse`]: the knowledge browser's reads (the core's `repo::browse`)
//!   as JavaScript values.
//! - [`store`]: `BrowserStore`, the knowledge base kept in IndexedDB
//!   (`indexed_db_futures`), in the store format and with the save rule of
//!   the `arbores` command's store directory.
//! - [`bundle`]: bundle files (the knowledge base as one file, the format
//!   of `arbores export`), read, checked, exported and installed.
//! - [`session`]: `SessionStore`, the session's definitions (the bytes of
//!   `Engine.saveSession`) and files kept in IndexedDB across Stop and
//!   reload.
//! - [`files`]: the page's files (`(scheme file)`, `load`, `include`), in
//!   memory, and the `Engine` methods that list, read, save and restore
//!   them.
//! - [`snapshot`]: blob names and stored bytes as JavaScript values.
//! - [`tools`]: host tools and suspended evaluations (`defineTool`,
//!   `start`, `resume`, `dump`, `loadSuspension`), driven by
//!   `web/src/agent.js` with tools as JavaScript async functions.
//! - [`panic`]: keeps the text of a Rust panic for the host to report.
//!
//! The engine stays synchronous; the store's reads and writes are
//! promises, and the worker (`web/src/worker.js`) sequences them. The
//! knowledge-store calls are the `arb:` procedures, reached through `eval`
//! like any Scheme.

/// Counts the bytes the module holds: the memory cap is checked against
/// it (with the memory's size, `engine.rs`), so the cap bounds the
/// module's linear memory, not an estimate of the Scheme heap, as in the
/// `arbores` command's sandboxed engine.
#[global_allocator]
pub(crate) static ALLOCATOR: cap::Cap<std::alloc::System> =
    cap::Cap::new(std::alloc::System, usize::MAX);

/// The prepared image `scripts/build-image` wrote, when there was one at
/// build time (`build.rs`).
mod prepared {
    include!(concat!(env!("OUT_DIR"), "/prepared.rs"));
}

/// Hands the engine its prepared image, before the first engine is made.
pub(crate) fn install_prepared_image() {
    if let Some(bytes) = prepared::PREPARED_IMAGE {
        arbores_core::install_prepared_image(bytes);
    }
}

mod browse;
mod bundle;
mod convert;
mod engine;
mod files;
mod panic;
mod session;
mod snapshot;
mod store;
mod tools;

pub use bundle::Bundle;
pub use engine::Engine;
pub use panic::panic_message;
pub use session::SessionStore;
pub use store::{BrowserStore, Stored};
