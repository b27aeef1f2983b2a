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
//! - [`panic`]: keeps the text of a Rust panic for the host to report.
//!
//! Persistence (IndexedDB) and the knowledge-store calls belong in modules of
//! their own beside these, exported as async functions; the worker is their
//! caller, as it is the one that owns the engine.

mod convert;
mod engine;
mod panic;

pub use engine::Engine;
pub use panic::panic_message;
