//! Output to the evaluation's text, string and bytevector ports, `read`
//! (R7RS 6.13). There are no file ports: the core does no I/O.

use super::{boolean, character, index, range, string, type_error, Ctx, Fault, PrimTable};
use crate::datum;
use crate::json;
use crate::printer::{self, Mode};
use crate::reader::Reader;
use crate::value::{Object, Port, Value};

// Long by design: a table, one entry per primitive.
pub fn register(t: &mut PrimTable) {
    t.add("display", 1, Some(2), |c, a| {
        print(c, a, Mode::Display, "display")
    });
    t.add("write", 1, Some(2), |c, a| {
        print(c, a, Mode::Write, "write")
    });
    t.add("write-shared", 1, Some(2), |c, a| {
        print(c, a, Mode::Shared, "write-shared")
    });
    t.add("write-simple", 1, Some(2), |c, a| {
        print(c, a, Mode::Simple, "write-simple")
    });
    t.add("newline", 0, Some(1), |c, a| {
        emit(c, a.first().copied(), "newline", "\n")
    });
    t.add("write-char", 1, Some(2), |c, a| {
        let ch = character(c, "write-char", a[0])?;
        emit(c, a.get(1).copied(), "write-char", &ch.to_string())
    });
    t.add("write-string", 1, Some(4), |c, a| {
        let s = string(c, "write-string", a[0])?;
        let (start, end) = super::range(c, "write-string", a, 2, s.len())?;
        let text: String = s[start..end].iter().collect();
        emit(c, a.get(1).copied(), "write-string", &text)
    });
    t.add("write-u8", 1, Some(2), |c, a| {
        let b = match a[0] {
            Value::Int(i) if (0..=255).contains(&i) => i as u8,
            v => return Err(type_error(c, "write-u8", "a byte", v)),
        };
        match a.get(1).and_then(|p| port_mut(c, *p)) {
            Some(p) if !p.input && !p.textual => {
                p.bytes.push(b);
                Ok(Value::Unspecified)
            }
            _ => Err(Fault::Error(
                "write-u8: expected a binary output port".into(),
                vec![],
            )),
        }
    });
    t.add("write-bytevector", 1, Some(4), |c, a| {
        let bytes = match c.heap.obj(a[0]) {
            Some(Object::Bytevector(b)) => b.clone(),
            _ => return Err(type_error(c, "write-bytevector", "a bytevector", a[0])),
        };
        let (s, e) = super::range(c, "write-bytevector", a, 2, bytes.len())?;
        match a.get(1).and_then(|p| port_mut(c, *p)) {
            Some(p) if !p.input && !p.textual => {
                p.bytes.extend_from_slice(&bytes[s..e]);
                Ok(Value::Unspecified)
            }
            _ => Err(Fault::Error(
                "write-bytevector: expected a binary output port".into(),
                vec![],
            )),
        }
    });
    t.add("current-output-port", 0, Some(0), |c, _| {
        Ok(console_port(c))
    });
    t.add("current-error-port", 0, Some(0), |c, _| Ok(console_port(c)));
    t.add("current-input-port", 0, Some(0), |c, _| {
        Ok(new_port(c, true, true, vec![], vec![]))
    });
    t.add("flush-output-port", 0, Some(1), |c, a| {
        // A string or bytevector port has nowhere to flush to.
        let console = match a.first().map(|p| port(c, *p)) {
            None => true,
            Some(Some(p)) if !p.input => p.console,
            _ => return Err(type_error(c, "flush-output-port", "an output port", a[0])),
        };
        if console {
            c.out.flush(c.budget.host);
        }
        Ok(Value::Unspecified)
    });
    t.add("open-input-string", 1, Some(1), |c, a| {
        let s = string(c, "open-input-string", a[0])?.clone();
        Ok(new_port(c, true, true, s, vec![]))
    });
    t.add("open-output-string", 0, Some(0), |c, _| {
        Ok(new_port(c, false, true, vec![], vec![]))
    });
    t.add("get-output-string", 1, Some(1), |c, a| {
        match port(c, a[0]) {
            Some(p) if !p.input && p.textual => {
                let s = p.chars.clone();
                Ok(c.heap.alloc(Object::Str(s)))
            }
            _ => Err(type_error(
                c,
                "get-output-string",
                "a string output port",
                a[0],
            )),
        }
    });
    t.add("open-input-bytevector", 1, Some(1), |c, a| {
        match c.heap.obj(a[0]) {
            Some(Object::Bytevector(b)) => {
                let b = b.clone();
                Ok(new_port(c, true, false, vec![], b))
            }
            _ => Err(type_error(c, "open-input-bytevector", "a bytevector", a[0])),
        }
    });
    t.add("open-output-bytevector", 0, Some(0), |c, _| {
        Ok(new_port(c, false, false, vec![], vec![]))
    });
    t.add("get-output-bytevector", 1, Some(1), |c, a| {
        match port(c, a[0]) {
            Some(p) if !p.input && !p.textual => {
                let b = p.bytes.clone();
                Ok(c.heap.alloc(Object::Bytevector(b)))
            }
            _ => Err(type_error(
                c,
                "get-output-bytevector",
                "a bytevector output port",
                a[0],
            )),
        }
    });
    t.add("read-char", 0, Some(1), |c, a| {
        read_chars(c, a.first().copied(), "read-char", true)
    });
    t.add("peek-char", 0, Some(1), |c, a| {
        read_chars(c, a.first().copied(), "peek-char", false)
    });
    t.add("char-ready?", 0, Some(1), |c, a| {
        let _ = input(c, a.first().copied(), "char-ready?", true)?;
        Ok(Value::Bool(true))
    });
    t.add("read-line", 0, Some(1), |c, a| {
        let p = input(c, a.first().copied(), "read-line", true)?;
        if p.pos >= p.chars.len() {
            return Ok(Value::Eof);
        }
        let rest = &p.chars[p.pos..];
        let n = rest.iter().position(|&ch| ch == '\n').unwrap_or(rest.len());
        let line: Vec<char> = rest[..n].to_vec();
        p.pos += (n + 1).min(rest.len());
        Ok(c.heap.alloc(Object::Str(line)))
    });
    t.add("read-string", 1, Some(2), |c, a| {
        let k = index(c, "read-string", a[0])?;
        let p = input(c, a.get(1).copied(), "read-string", true)?;
        if p.pos >= p.chars.len() && k > 0 {
            return Ok(Value::Eof);
        }
        let end = (p.pos + k).min(p.chars.len());
        let s = p.chars[p.pos..end].to_vec();
        p.pos = end;
        Ok(c.heap.alloc(Object::Str(s)))
    });
    t.add("read-u8", 0, Some(1), |c, a| {
        read_byte(c, a.first().copied(), "read-u8", true)
    });
    t.add("peek-u8", 0, Some(1), |c, a| {
        read_byte(c, a.first().copied(), "peek-u8", false)
    });
    t.add("u8-ready?", 0, Some(1), |c, a| {
        let _ = input(c, a.first().copied(), "u8-ready?", false)?;
        Ok(Value::Bool(true))
    });
    t.add("read-bytevector", 1, Some(2), |c, a| {
        let k = index(c, "read-bytevector", a[0])?;
        let p = input(c, a.get(1).copied(), "read-bytevector", false)?;
        if p.pos >= p.bytes.len() && k > 0 {
            return Ok(Value::Eof);
        }
        let end = (p.pos + k).min(p.bytes.len());
        let b = p.bytes[p.pos..end].to_vec();
        p.pos = end;
        Ok(c.heap.alloc(Object::Bytevector(b)))
    });
    t.add("read-bytevector!", 1, Some(4), |c, a| {
        let who = "read-bytevector!";
        let len = match c.heap.obj(a[0]) {
            Some(Object::Bytevector(b)) => b.len(),
            _ => return Err(type_error(c, who, "a bytevector", a[0])),
        };
        let (start, end) = range(c, who, a, 2, len)?;
        let p = input(c, a.get(1).copied(), who, false)?;
        if p.pos >= p.bytes.len() && end > start {
            return Ok(Value::Eof);
        }
        let n = (end - start).min(p.bytes.len() - p.pos);
        let read = p.bytes[p.pos..p.pos + n].to_vec();
        p.pos += n;
        if let Some(Object::Bytevector(b)) = c.heap.obj_mut(a[0]) {
            b[start..start + n].copy_from_slice(&read);
        }
        Ok(Value::Int(n as i64))
    });
    t.add("read", 0, Some(1), read);
    // JSON by the engine's one mapping (docs/API.md, "Values as JSON").
    t.add("scheme->json", 1, Some(1), |c, a| {
        let text = json::to_json(c.heap, c.syms, a[0])
            .map_err(|e| Fault::Error(format!("scheme->json: {e}"), vec![]))?;
        Ok(c.heap.string(&text))
    });
    t.add("json->scheme", 1, Some(1), |c, a| {
        let text: String = string(c, "json->scheme", a[0])?.iter().collect();
        json::from_json(c.heap, c.syms, &text)
            .map_err(|e| Fault::Error(format!("json->scheme: {e}"), vec![]))
    });
    t.add("eof-object", 0, Some(0), |_, _| Ok(Value::Eof));
    t.add("eof-object?", 1, Some(1), |_, a| {
        Ok(boolean(matches!(a[0], Value::Eof)))
    });
    t.add("port?", 1, Some(1), |c, a| {
        Ok(boolean(port(c, a[0]).is_some()))
    });
    t.add("input-port?", 1, Some(1), |c, a| {
        Ok(boolean(port(c, a[0]).is_some_and(|p| p.input)))
    });
    t.add("output-port?", 1, Some(1), |c, a| {
        Ok(boolean(port(c, a[0]).is_some_and(|p| !p.input)))
    });
    t.add("textual-port?", 1, Some(1), |c, a| {
        Ok(boolean(port(c, a[0]).is_some_and(|p| p.textual)))
    });
    t.add("binary-port?", 1, Some(1), |c, a| {
        Ok(boolean(port(c, a[0]).is_some_and(|p| !p.textual)))
    });
    t.add("input-port-open?", 1, Some(1), |c, a| {
        Ok(boolean(port(c, a[0]).is_some_and(|p| p.input && p.open)))
    });
    t.add("output-port-open?", 1, Some(1), |c, a| {
        Ok(boolean(port(c, a[0]).is_some_and(|p| !p.input && p.open)))
    });
    t.add("close-port", 1, Some(1), |c, a| {
        close(c, a[0], "close-port")
    });
    t.add("close-input-port", 1, Some(1), |c, a| {
        close(c, a[0], "close-input-port")
    });
    t.add("close-output-port", 1, Some(1), |c, a| {
        close(c, a[0], "close-output-port")
    });
}

fn new_port(c: &mut Ctx, input: bool, textual: bool, chars: Vec<char>, bytes: Vec<u8>) -> Value {
    c.heap.alloc(Object::Port(Box::new(Port {
        input,
        textual,
        chars,
        bytes,
        pos: 0,
        open: true,
        console: false,
    })))
}

fn console_port(c: &mut Ctx) -> Value {
    c.heap.alloc(Object::Port(Box::new(Port {
        input: false,
        textual: true,
        chars: vec![],
        bytes: vec![],
        pos: 0,
        open: true,
        console: true,
    })))
}

fn port<'h>(c: &'h Ctx, v: Value) -> Option<&'h Port> {
    match c.heap.obj(v) {
        Some(Object::Port(p)) => Some(p),
        _ => None,
    }
}

fn port_mut<'h>(c: &'h mut Ctx, v: Value) -> Option<&'h mut Port> {
    match c.heap.obj_mut(v) {
        Some(Object::Port(p)) => Some(p),
        _ => None,
    }
}

fn close(c: &mut Ctx, v: Value, who: &str) -> Result<Value, Fault> {
    match port_mut(c, v) {
        Some(p) => {
            p.open = false;
            Ok(Value::Unspecified)
        }
        None => Err(type_error(c, who, "a port", v)),
    }
}

/// Writes text to a port, or to the evaluation's output when no port is given.
fn emit(c: &mut Ctx, port_arg: Option<Value>, who: &str, text: &str) -> Result<Value, Fault> {
    match port_arg {
        None => {
            c.out.write(c.budget.host, text);
            Ok(Value::Unspecified)
        }
        Some(pv) => match port_mut(c, pv) {
            Some(p) if p.console => {
                c.out.write(c.budget.host, text);
                Ok(Value::Unspecified)
            }
            Some(p) if !p.input && p.textual && p.open => {
                p.chars.extend(text.chars());
                Ok(Value::Unspecified)
            }
            _ => Err(type_error(c, who, "an open textual output port", pv)),
        },
    }
}

fn print(c: &mut Ctx, a: &[Value], mode: Mode, who: &str) -> Result<Value, Fault> {
    let text = printer::to_string_within(c.heap, c.syms, a[0], mode, &mut c.budget)?;
    emit(c, a.get(1).copied(), who, &text)
}

fn input<'h>(
    c: &'h mut Ctx,
    v: Option<Value>,
    who: &str,
    textual: bool,
) -> Result<&'h mut Port, Fault> {
    let Some(v) = v else {
        return Err(Fault::Error(
            format!("{who}: there is no standard input here; pass a string port"),
            vec![],
        ));
    };
    let shown = printer::write_string(c.heap, c.syms, v);
    match c.heap.obj_mut(v) {
        Some(Object::Port(p)) if p.input && p.textual == textual && p.open => Ok(p),
        _ => Err(Fault::Error(
            format!(
                "{who}: expected an open {} input port, got {shown}",
                if textual { "textual" } else { "binary" }
            ),
            vec![],
        )),
    }
}

fn read_chars(c: &mut Ctx, v: Option<Value>, who: &str, advance: bool) -> Result<Value, Fault> {
    let p = input(c, v, who, true)?;
    match p.chars.get(p.pos) {
        Some(&ch) => {
            if advance {
                p.pos += 1;
            }
            Ok(Value::Char(ch))
        }
        None => Ok(Value::Eof),
    }
}

fn read_byte(c: &mut Ctx, v: Option<Value>, who: &str, advance: bool) -> Result<Value, Fault> {
    let p = input(c, v, who, false)?;
    match p.bytes.get(p.pos) {
        Some(&b) => {
            if advance {
                p.pos += 1;
            }
            Ok(Value::Int(b as i64))
        }
        None => Ok(Value::Eof),
    }
}

fn read(c: &mut Ctx, a: &[Value]) -> Result<Value, Fault> {
    let text: String = {
        let p = input(c, a.first().copied(), "read", true)?;
        p.chars[p.pos..].iter().collect()
    };
    let (datum, consumed) = {
        let mut r = Reader::new(&text, c.syms);
        let d = r.read().map_err(|e| {
            Fault::ReadError(format!(
                "read: {} (at {}:{} of the port's text)",
                e.message, e.pos.line, e.pos.col
            ))
        })?;
        (d, r.consumed())
    };
    if let Ok(p) = input(c, a.first().copied(), "read", true) {
        p.pos += consumed;
    }
    match datum {
        None => Ok(Value::Eof),
        Some(s) => datum::to_value(c.heap, &s)
            .map_err(|e| Fault::ReadError(format!("read: {}", e.message))),
    }
}
