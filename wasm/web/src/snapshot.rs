//! The knowledge base's stored form as JavaScript sees it.
//!
//! An export is `{blobs: [{hash, bytes}], refs}`: each blob's name as 64
//! lowercase hex digits and its bytes as a `Uint8Array`, and the refs record
//! as a `Uint8Array`. The worker stores them in IndexedDB as they are (blobs
//! under their hex names, then the refs record) and gives them back to
//! `Engine.importStored` as a `Map` from hex name to bytes.
//!
//! Only the translation lives here; what is valid is decided by the core,
//! which checks every blob against its name on import.

use arbores_core::{Hash, Snapshot};
use js_sys::{Array, ArrayBuffer, Object, Reflect, Uint8Array};
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

/// `{blobs: [{hash, bytes}], refs, size}`, where `size` is the number of
/// bytes to store (blob names counted as 32 bytes each, as the core does).
pub fn to_js(snapshot: &Snapshot) -> Result<JsValue, JsError> {
    let blobs = Array::new_with_length(snapshot.blobs.len() as u32);
    for (i, (hash, bytes)) in snapshot.blobs.iter().enumerate() {
        let blob = Object::new();
        set(&blob, "hash", &JsValue::from_str(&hex(hash)))?;
        set(&blob, "bytes", &Uint8Array::from(bytes.as_slice()))?;
        blobs.set(i as u32, blob.into());
    }
    let out = Object::new();
    set(&out, "blobs", &blobs)?;
    set(&out, "refs", &Uint8Array::from(snapshot.refs.as_slice()))?;
    set(&out, "size", &JsValue::from_f64(snapshot.size() as f64))?;
    Ok(out.into())
}

fn set(target: &Object, key: &str, value: &JsValue) -> Result<(), JsError> {
    Reflect::set(target, &JsValue::from_str(key), value)
        .map(|_| ())
        .map_err(|_| JsError::new(&format!("cannot set the field {key} of an export")))
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
