//! `Bytes`: the bytes of a table or lexicon, compiled into the program or
//! handed over at run time. Only `std` here: core/build.rs uses it too (to
//! read the built-in lexicon as the engine does).

use std::sync::Arc;

/// Bytes compiled into the program, or handed over at run time.
#[derive(Clone)]
pub enum Bytes {
    Static(&'static [u8]),
    Shared(Arc<[u8]>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Static(b) => b,
            Bytes::Shared(b) => b,
        }
    }
}
