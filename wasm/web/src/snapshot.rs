//! The knowledge base's stored form as JavaScript values: a blob's name as
//! 64 lowercase hex digits (its IndexedDB key), and bytes read back from
//! IndexedDB. What is valid is decided by the core, which checks every blob
//! against its name on import.

use arbores_core::Hash;
use js_sys::{Array, ArrayBuffer, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// A blob's name as JavaScript and IndexedDB see it: 64 lowercase hex digits.
pub fn hex(hash: &Hash) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(64);
    for b in hash {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

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

#[cfg(test)]
mod tests {
    use super::hex;

    #[test]
    fn hex_names_are_64_lowercase_digits() {
        let mut h = [0u8; 32];
        h[0] = 0xab;
        h[1] = 0x01;
        h[31] = 0xff;
        let s = hex(&h);
        assert_eq!(s.len(), 64);
        assert!(s.starts_with("ab01"));
        assert!(s.ends_with("ff"));
        assert_eq!(s, s.to_lowercase());
    }
}
