//! The knowledge base's stored form as JavaScript values: a blob's name as
//! 64 lowercase hex digits (its IndexedDB key), and bytes read back from
//! IndexedDB. What is valid is decided by the core, which checks every blob
//! against its name on import.

use js_sys::{Array, ArrayBuffer, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// A blob's name as JavaScript and IndexedDB see it: 64 lowercase hex
/// digits, as every store names blobs.
pub use arbores_core::hex;

/// The bytes of a stored value: a `Uint8Array` or an `ArrayBuffer` (what
/// IndexedDB may hand back), else `None`.
pub fn bytes_of(value: &JsValue) -> Option<Vec<u8>> {
    if let Some(a) = value.dyn_ref::<Uint8Array>() {
        return Some(a.to_vec());
    }
    if let Some(b) = value.dyn_ref::<ArrayBuffer>() {
        return Some(Uint8Array::new(b).to_vec());
    }
    None
}

/// What a stored value that is not bytes is, for a message.
pub fn describe(value: &JsValue) -> String {
    if value.is_undefined() {
        "nothing".into()
    } else if value.is_null() {
        "null".into()
    } else if let Some(s) = value.as_string() {
        format!("a string of {} characters", s.chars().count())
    } else if value.as_f64().is_some() {
        "a number".into()
    } else if Array::is_array(value) {
        "an array".into()
    } else {
        format!(
            "a value of type {}",
            value.js_typeof().as_string().unwrap_or_default()
        )
    }
}
