//! Vectors and bytevectors (R7RS 6.8, 6.9).

use super::{
    boolean, character, copy_into, index, list_items, range, register_elements, string, type_error,
    Ctx, Elements, Fault, PrimTable,
};
use crate::value::{Object, Value};

// Long by design: a table, one entry per primitive.
pub fn register(t: &mut PrimTable) {
    t.add("vector?", 1, Some(1), |c, a| {
        Ok(boolean(matches!(c.heap.obj(a[0]), Some(Object::Vector(_)))))
    });
    t.add("make-vector", 1, Some(2), |c, a| {
        let n = index(c, "make-vector", a[0])?;
        c.heap.check_room(n.saturating_mul(16))?;
        let fill = a.get(1).copied().unwrap_or(Value::Bool(false));
        let mut items = Vec::with_capacity(n);
        while items.len() < n {
            let chunk = (n - items.len()).min(COPY_CHUNK);
            c.charge(chunk as u64 * COPY_UNITS)?;
            items.resize(items.len() + chunk, fill);
        }
        Ok(c.heap.alloc(Object::Vector(items)))
    });
    t.add("vector", 0, None, |c, a| {
        Ok(c.heap.alloc(Object::Vector(a.to_vec())))
    });
    register_elements::<Value>(t);
    t.add("vector->list", 1, Some(3), |c, a| {
        let v = vector(c, "vector->list", a[0])?;
        let (s, e) = range(c, "vector->list", a, 1, v.len())?;
        let items = values_charged::<Value>(c, "vector->list", a[0], s, e)?;
        c.list(&items)
    });
    t.add("list->vector", 1, Some(1), |c, a| {
        let items = list_items(c, "list->vector", a[0])?;
        Ok(c.heap.alloc(Object::Vector(items)))
    });
    t.add("vector->string", 1, Some(3), |c, a| {
        let v = vector(c, "vector->string", a[0])?;
        let (s, e) = range(c, "vector->string", a, 1, v.len())?;
        let items = values_charged::<Value>(c, "vector->string", a[0], s, e)?;
        let mut out = Vec::with_capacity(items.len());
        for x in items {
            c.charge(COPY_UNITS)?;
            out.push(character(c, "vector->string", x)?);
        }
        Ok(c.heap.alloc(Object::Str(out)))
    });
    t.add("string->vector", 1, Some(3), |c, a| {
        let s = string(c, "string->vector", a[0])?;
        let (st, e) = range(c, "string->vector", a, 1, s.len())?;
        let items = values_charged::<char>(c, "string->vector", a[0], st, e)?;
        Ok(c.heap.alloc(Object::Vector(items)))
    });
    t.add("vector-copy", 1, Some(3), |c, a| {
        let v = vector(c, "vector-copy", a[0])?;
        let (s, e) = range(c, "vector-copy", a, 1, v.len())?;
        let items = values_charged::<Value>(c, "vector-copy", a[0], s, e)?;
        Ok(c.heap.alloc(Object::Vector(items)))
    });
    t.add("vector-copy!", 3, Some(5), |c, a| {
        copy_into::<Value>(c, "vector-copy!", a)
    });
    t.add("vector-append", 0, None, |c, a| {
        let mut total = 0usize;
        for &v in a {
            total = total.saturating_add(vector(c, "vector-append", v)?.len());
        }
        c.heap.check_room(total.saturating_mul(16))?;
        let mut out = Vec::with_capacity(total);
        for &v in a {
            let len = vector(c, "vector-append", v)?.len();
            let mut i = 0;
            while i < len {
                let j = (i + COPY_CHUNK).min(len);
                c.charge((j - i) as u64 * COPY_UNITS)?;
                out.extend_from_slice(&vector(c, "vector-append", v)?[i..j]);
                i = j;
            }
        }
        Ok(c.heap.alloc(Object::Vector(out)))
    });
    t.add("vector-fill!", 2, Some(4), |c, a| {
        let len = vector(c, "vector-fill!", a[0])?.len();
        let (s, e) = range(c, "vector-fill!", a, 2, len)?;
        let mut i = s;
        while i < e {
            let j = (i + COPY_CHUNK).min(e);
            c.charge((j - i) as u64 * COPY_UNITS)?;
            if let Some(Object::Vector(d)) = c.heap.obj_mut(a[0]) {
                d[i..j].fill(a[1]);
            }
            i = j;
        }
        Ok(Value::Unspecified)
    });
    // bytevectors
    t.add("bytevector?", 1, Some(1), |c, a| {
        Ok(boolean(matches!(
            c.heap.obj(a[0]),
            Some(Object::Bytevector(_))
        )))
    });
    t.add("make-bytevector", 1, Some(2), |c, a| {
        let n = index(c, "make-bytevector", a[0])?;
        let fill = match a.get(1) {
            Some(&v) => byte(c, "make-bytevector", v)?,
            None => 0,
        };
        c.heap.check_room(n)?;
        Ok(c.heap.alloc(Object::Bytevector(vec![fill; n])))
    });
    t.add("bytevector", 0, None, |c, a| {
        let mut out = Vec::with_capacity(a.len());
        for &v in a {
            out.push(byte(c, "bytevector", v)?);
        }
        Ok(c.heap.alloc(Object::Bytevector(out)))
    });
    register_elements::<u8>(t);
    t.add("bytevector-copy", 1, Some(3), |c, a| {
        let b = bytes(c, "bytevector-copy", a[0])?;
        let (s, e) = range(c, "bytevector-copy", a, 1, b.len())?;
        let piece = b[s..e].to_vec();
        Ok(c.heap.alloc(Object::Bytevector(piece)))
    });
    t.add("bytevector-copy!", 3, Some(5), |c, a| {
        copy_into::<u8>(c, "bytevector-copy!", a)
    });
    t.add("bytevector-append", 0, None, |c, a| {
        let mut out = Vec::new();
        for &v in a {
            out.extend_from_slice(bytes(c, "bytevector-append", v)?);
        }
        Ok(c.heap.alloc(Object::Bytevector(out)))
    });
    t.add("utf8->string", 1, Some(3), |c, a| {
        let b = bytes(c, "utf8->string", a[0])?;
        let (s, e) = range(c, "utf8->string", a, 1, b.len())?;
        match std::str::from_utf8(&b[s..e]) {
            Ok(text) => {
                let text = text.to_string();
                Ok(c.heap.string(&text))
            }
            Err(_) => Err(Fault::Error(
                "utf8->string: the bytes are not valid UTF-8".into(),
                vec![],
            )),
        }
    });
    t.add("string->utf8", 1, Some(3), |c, a| {
        let s = string(c, "string->utf8", a[0])?;
        let (st, e) = range(c, "string->utf8", a, 1, s.len())?;
        let text: String = s[st..e].iter().collect();
        Ok(c.heap.alloc(Object::Bytevector(text.into_bytes())))
    });
}

/// Units of work charged per element a primitive copies (about what a
/// copy of one takes, memory traffic included).
const COPY_UNITS: u64 = 2;

/// Elements copied between two charges.
const COPY_CHUNK: usize = 1 << 16;

/// Elements `s..e` of `v` (a vector, or a string: its characters) as
/// values, copied a chunk at a time with the work charged.
pub(super) fn values_charged<T: Elements>(
    c: &mut Ctx,
    who: &str,
    v: Value,
    s: usize,
    e: usize,
) -> Result<Vec<Value>, Fault> {
    let mut out = Vec::with_capacity(e - s);
    let mut i = s;
    while i < e {
        let j = (i + COPY_CHUNK).min(e);
        c.charge((j - i) as u64 * COPY_UNITS)?;
        out.extend(T::of(c, who, v)?[i..j].iter().map(|x| x.value()));
        i = j;
    }
    Ok(out)
}

impl Elements for Value {
    const KIND: &'static str = "vector";
    const LENGTH: &'static str = "vector-length";
    const REF: &'static str = "vector-ref";
    const SET: &'static str = "vector-set!";
    fn of<'h>(c: &'h Ctx, who: &str, v: Value) -> Result<&'h Vec<Value>, Fault> {
        vector(c, who, v)
    }
    fn piece(c: &mut Ctx, who: &str, v: Value, s: usize, e: usize) -> Result<Vec<Value>, Fault> {
        values_charged::<Value>(c, who, v, s, e)
    }
    fn of_mut(o: &mut Object) -> Option<&mut Vec<Value>> {
        match o {
            Object::Vector(d) => Some(d),
            _ => None,
        }
    }
    fn element(_: &Ctx, _: &str, v: Value) -> Result<Value, Fault> {
        Ok(v)
    }
    fn value(self) -> Value {
        self
    }
}

impl Elements for u8 {
    const KIND: &'static str = "bytevector";
    const LENGTH: &'static str = "bytevector-length";
    const REF: &'static str = "bytevector-u8-ref";
    const SET: &'static str = "bytevector-u8-set!";
    fn of<'h>(c: &'h Ctx, who: &str, v: Value) -> Result<&'h Vec<u8>, Fault> {
        bytes(c, who, v)
    }
    fn of_mut(o: &mut Object) -> Option<&mut Vec<u8>> {
        match o {
            Object::Bytevector(d) => Some(d),
            _ => None,
        }
    }
    fn element(c: &Ctx, who: &str, v: Value) -> Result<u8, Fault> {
        byte(c, who, v)
    }
    fn value(self) -> Value {
        Value::Int(self as i64)
    }
}

fn vector<'h>(c: &'h Ctx, who: &str, v: Value) -> Result<&'h Vec<Value>, Fault> {
    match c.heap.obj(v) {
        Some(Object::Vector(items)) => Ok(items),
        _ => Err(type_error(c, who, "a vector", v)),
    }
}

fn bytes<'h>(c: &'h Ctx, who: &str, v: Value) -> Result<&'h Vec<u8>, Fault> {
    match c.heap.obj(v) {
        Some(Object::Bytevector(b)) => Ok(b),
        _ => Err(type_error(c, who, "a bytevector", v)),
    }
}

fn byte(c: &Ctx, who: &str, v: Value) -> Result<u8, Fault> {
    match v {
        Value::Int(i) if (0..=255).contains(&i) => Ok(i as u8),
        _ => Err(type_error(
            c,
            who,
            "a byte (an exact integer from 0 to 255)",
            v,
        )),
    }
}

#[cfg(test)]
mod tests;
