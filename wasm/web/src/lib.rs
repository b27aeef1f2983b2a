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
//! - [`snapshot`]: the knowledge base's stored form (blobs and refs record)
//!   as JavaScript values.
//! - [`panic`]: keeps the text of a Rust panic for the host to report.
//!
//! Persistence is not here: the worker (`web/store.js`) keeps the exports in
//! IndexedDB with the browser's own API. The engine stays synchronous and
//! free of browser bindings; IndexedDB's events are handled where the
//! worker's message loop already runs. The knowledge-store calls are the
//! `arb:` procedures, reached through `eval` like any Scheme.

mod convert;
mod engine;
mod panic;
mod snapshot;

pub use engine::Engine;
pub use panic::panic_message;
