//! Ports (R7RS 6.13): writing and reading, string and bytevector ports,
//! the standard ports, `read`. The standard ports and file ports reach
//! the world through the host (`files.rs` opens files); the current ports
//! are the prelude's parameters, read through `Io`.

use super::{
    boolean, character, index, range, string, type_error, Ctx, Fault, PrimTable, Standard,
};
use crate::datum;
use crate::heap::{growth_cost, Heap};
use crate::host::Host;
use crate::json;
use crate::printer::{self, Mode};
use crate::reader::Reader;
use crate::value::{Object, Port, PortKind, Value};

/// Pending text of a file output port is written out when it reaches this
/// many bytes (and at `flush-output-port`, at close and when the
/// evaluation ends).
const FILE_BUFFER: usize = 64 << 10;

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
        emit_bytes(c, a.get(1).copied(), "write-u8", &[b])
    });
    t.add("write-bytevector", 1, Some(4), |c, a| {
        let bytes = match c.heap.obj(a[0]) {
            Some(Object::Bytevector(b)) => b.clone(),
            _ => return Err(type_error(c, "write-bytevector", "a bytevector", a[0])),
        };
        let (s, e) = super::range(c, "write-bytevector", a, 2, bytes.len())?;
        emit_bytes(c, a.get(1).copied(), "write-bytevector", &bytes[s..e])
    });
    // The initial values of the parameters `current-output-port`,
    // `current-error-port` and `current-input-port` (prelude.scm).
    t.add("%standard-port", 1, Some(1), |c, a| {
        let (input, kind) = match super::symbol_name(c, "%standard-port", a[0])?.as_str() {
            "output" => (false, PortKind::Output),
            "error" => (false, PortKind::Error),
            "input" => (true, PortKind::Input),
            _ => {
                return Err(type_error(
                    c,
                    "%standard-port",
                    "output, error or input",
                    a[0],
                ))
            }
        };
        Ok(new_port(c, input, true, kind, vec![], vec![]))
    });
    t.add("flush-output-port", 0, Some(1), |c, a| {
        let pv = match a.first() {
            Some(v) => *v,
            None => match c.io.current(c.heap, Standard::Output) {
                Some(v) => v,
                None => return Ok(Value::Unspecified),
            },
        };
        match port(c, pv) {
            Some(p) if !p.input => {
                if matches!(p.kind, PortKind::Output | PortKind::Error) {
                    c.out.flush(c.budget.host);
                }
            }
            _ => return Err(type_error(c, "flush-output-port", "an output port", pv)),
        }
        flush_file(c.heap, c.budget.host, pv)
            .map_err(|e| Fault::FileError(format!("flush-output-port: {e}")))?;
        Ok(Value::Unspecified)
    });
    t.add("open-input-string", 1, Some(1), |c, a| {
        let s = string(c, "open-input-string", a[0])?.clone();
        Ok(new_port(c, true, true, PortKind::Memory, s, vec![]))
    });
    t.add("open-output-string", 0, Some(0), |c, _| {
        Ok(new_port(c, false, true, PortKind::Memory, vec![], vec![]))
    });
    t.add("get-output-string", 1, Some(1), |c, a| {
        match port(c, a[0]) {
            Some(p) if !p.input && p.textual && p.kind == PortKind::Memory => {
                let n = p.chars.len();
                c.heap
                    .check_room(n.saturating_mul(std::mem::size_of::<char>()))?;
                c.charge_elements(n)?;
                let Some(Object::Port(p)) = c.heap.obj(a[0]) else {
                    unreachable!("checked to be a port above")
                };
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
                Ok(new_port(c, true, false, PortKind::Memory, vec![], b))
            }
            _ => Err(type_error(c, "open-input-bytevector", "a bytevector", a[0])),
        }
    });
    t.add("open-output-bytevector", 0, Some(0), |c, _| {
        Ok(new_port(c, false, false, PortKind::Memory, vec![], vec![]))
    });
    t.add("get-output-bytevector", 1, Some(1), |c, a| {
        match port(c, a[0]) {
            Some(p) if !p.input && !p.textual && p.kind == PortKind::Memory => {
                let n = p.bytes.len();
                c.heap.check_room(n)?;
                c.charge_elements(n / 16)?;
                let Some(Object::Port(p)) = c.heap.obj(a[0]) else {
                    unreachable!("checked to be a port above")
                };
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
        let pv = input(c, a.first().copied(), "read-line", true)?;
        fill(c, pv, |rest| line_end(rest, false).is_some())?;
        let p = opened(c.heap, pv)?;
        if p.pos >= p.chars.len() {
            return Ok(Value::Eof);
        }
        let rest = &p.chars[p.pos..];
        // All there is is buffered now: a carriage return that ends it is a
        // line's end by itself.
        let (n, end) = line_end(rest, true).unwrap_or((rest.len(), 0));
        let line: Vec<char> = rest[..n].to_vec();
        p.pos += n + end;
        Ok(c.heap.alloc(Object::Str(line)))
    });
    t.add("read-string", 1, Some(2), |c, a| {
        let k = index(c, "read-string", a[0])?;
        let pv = input(c, a.get(1).copied(), "read-string", true)?;
        fill(c, pv, |rest| rest.len() >= k)?;
        let p = opened(c.heap, pv)?;
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
        let pv = input(c, a.get(1).copied(), "read-bytevector", false)?;
        let p = opened(c.heap, pv)?;
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
        let pv = input(c, a.get(1).copied(), who, false)?;
        let p = opened(c.heap, pv)?;
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
        let text = match json::to_json_within(c.heap, c.syms, a[0], &mut c.budget) {
            Ok(text) => text,
            Err(json::Stopped::Refused(e)) => {
                return Err(Fault::Error(format!("scheme->json: {e}"), vec![]))
            }
            Err(json::Stopped::Work(fault)) => return Err(fault),
        };
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

pub(super) fn new_port(
    c: &mut Ctx,
    input: bool,
    textual: bool,
    kind: PortKind,
    chars: Vec<char>,
    bytes: Vec<u8>,
) -> Value {
    c.heap.alloc(Object::Port(Box::new(Port {
        input,
        textual,
        chars,
        bytes,
        pos: 0,
        open: true,
        kind,
    })))
}

pub(super) fn port<'h>(c: &'h Ctx, v: Value) -> Option<&'h Port> {
    match c.heap.obj(v) {
        Some(Object::Port(p)) => Some(p),
        _ => None,
    }
}

fn port_in(heap: &mut Heap, v: Value) -> Option<&mut Port> {
    match heap.obj_mut(v) {
        Some(Object::Port(p)) => Some(p),
        _ => None,
    }
}

/// A port already checked to be one.
fn opened(heap: &mut Heap, v: Value) -> Result<&mut Port, Fault> {
    port_in(heap, v).ok_or_else(|| Fault::Error("expected a port".into(), vec![]))
}

fn close(c: &mut Ctx, v: Value, who: &str) -> Result<Value, Fault> {
    if port(c, v).is_none() {
        return Err(type_error(c, who, "a port", v));
    }
    let flushed = flush_file(c.heap, c.budget.host, v);
    if let Some(p) = port_in(c.heap, v) {
        p.open = false;
    }
    c.io.files.retain(|f| !f.eq(v));
    flushed.map_err(|e| Fault::FileError(format!("{who}: {e}")))?;
    Ok(Value::Unspecified)
}

/// Writes the pending data of a file output port to its file (nothing for
/// any other port). The VM calls it for every file port still open when
/// an evaluation ends.
pub fn flush_file(heap: &mut Heap, host: &mut dyn Host, v: Value) -> Result<(), String> {
    let Some(p) = port_in(heap, v) else {
        return Ok(());
    };
    let PortKind::File(path) = &p.kind else {
        return Ok(());
    };
    if p.input || (p.chars.is_empty() && p.bytes.is_empty()) {
        return Ok(());
    }
    let path = path.clone();
    let data = if p.textual {
        p.chars.drain(..).collect::<String>().into_bytes()
    } else {
        std::mem::take(&mut p.bytes)
    };
    host.write_file(&path, &data, true)
        .map_err(|e| format!("cannot write {path:?}: {e}"))
}

/// The port an output primitive writes to: its argument, else the current
/// output port (`None` before the prelude made it: the output text).
fn output_port(c: &Ctx, port_arg: Option<Value>) -> Option<Value> {
    port_arg.or_else(|| c.io.current(c.heap, Standard::Output))
}

/// Writes text to a port, or to the current output port when none is given.
fn emit(c: &mut Ctx, port_arg: Option<Value>, who: &str, text: &str) -> Result<Value, Fault> {
    let Some(pv) = output_port(c, port_arg) else {
        c.out.write(c.budget.host, text);
        return Ok(Value::Unspecified);
    };
    let full = match port_in(c.heap, pv) {
        Some(p) if !p.input && p.textual && p.open => match p.kind {
            PortKind::Output => {
                c.out.write(c.budget.host, text);
                false
            }
            PortKind::Error => {
                // What the program wrote to the output before comes first.
                c.out.flush(c.budget.host);
                if !c.budget.host.write_error(text) {
                    c.out.write(c.budget.host, text);
                }
                false
            }
            _ => {
                // Grown here only when the new buffer fits under the cap
                // beside the old one (in wasm32 both exist while it is
                // copied, and the instance keeps that high-water mark).
                let (len, room) = (p.chars.len(), p.chars.capacity());
                let need = len + text.len();
                if need > room {
                    let more = need.max(2 * room) - len;
                    let size = std::mem::size_of::<char>();
                    c.heap
                        .check_room(growth_cost(room * size, (len + more) * size))?;
                    let Some(p) = port_in(c.heap, pv) else {
                        unreachable!("checked to be a port above")
                    };
                    p.chars.reserve_exact(more);
                }
                let Some(p) = port_in(c.heap, pv) else {
                    unreachable!("checked to be a port above")
                };
                p.chars.extend(text.chars());
                matches!(p.kind, PortKind::File(_)) && p.chars.len() >= FILE_BUFFER
            }
        },
        _ => return Err(type_error(c, who, "an open textual output port", pv)),
    };
    if full {
        flush_file(c.heap, c.budget.host, pv)
            .map_err(|e| Fault::FileError(format!("{who}: {e}")))?;
    }
    Ok(Value::Unspecified)
}

/// Writes bytes to a binary output port.
fn emit_bytes(
    c: &mut Ctx,
    port_arg: Option<Value>,
    who: &str,
    bytes: &[u8],
) -> Result<Value, Fault> {
    let Some(pv) = output_port(c, port_arg) else {
        return Err(Fault::Error(
            format!("{who}: expected a binary output port"),
            vec![],
        ));
    };
    let full = match port_in(c.heap, pv) {
        Some(p) if !p.input && !p.textual && p.open => {
            p.bytes.extend_from_slice(bytes);
            matches!(p.kind, PortKind::File(_)) && p.bytes.len() >= FILE_BUFFER
        }
        _ => return Err(type_error(c, who, "an open binary output port", pv)),
    };
    if full {
        flush_file(c.heap, c.budget.host, pv)
            .map_err(|e| Fault::FileError(format!("{who}: {e}")))?;
    }
    Ok(Value::Unspecified)
}

fn print(c: &mut Ctx, a: &[Value], mode: Mode, who: &str) -> Result<Value, Fault> {
    let text = printer::to_string_within(c.heap, c.syms, a[0], mode, &mut c.budget)?;
    emit(c, a.get(1).copied(), who, &text)
}

/// The port a reading primitive reads: its argument, else the current
/// input port; an error unless it is an open input port of that sort.
fn input(c: &mut Ctx, v: Option<Value>, who: &str, textual: bool) -> Result<Value, Fault> {
    let v = match v.or_else(|| c.io.current(c.heap, Standard::Input)) {
        Some(v) => v,
        None => {
            return Err(Fault::Error(
                format!("{who}: there is no current input port"),
                vec![],
            ))
        }
    };
    match c.heap.obj(v) {
        Some(Object::Port(p)) if p.input && p.textual == textual && p.open => Ok(v),
        _ => {
            let shown = printer::shown(c.heap, c.syms, v);
            Err(Fault::Error(
                format!(
                    "{who}: expected an open {} input port, got {shown}",
                    if textual { "textual" } else { "binary" }
                ),
                vec![],
            ))
        }
    }
}

/// For the standard input: asks the host for more until `enough` holds of
/// the text not yet read, or the input ends. Other ports hold all their
/// data already.
fn fill(c: &mut Ctx, pv: Value, enough: impl Fn(&[char]) -> bool) -> Result<(), Fault> {
    loop {
        let p = opened(c.heap, pv)?;
        if p.kind != PortKind::Input || enough(&p.chars[p.pos..]) {
            return Ok(());
        }
        if !more_input(c, pv)? {
            return Ok(());
        }
    }
}

/// Where the first line of `rest` ends, and the length of its end: a
/// linefeed, a carriage return, or a carriage return and a linefeed (R7RS
/// 6.13.2, `read-line`). A carriage return that is the last character
/// buffered ends a line only when nothing more can come (`complete`):
/// before that, a linefeed may follow it.
fn line_end(rest: &[char], complete: bool) -> Option<(usize, usize)> {
    let i = rest.iter().position(|&ch| ch == '\n' || ch == '\r')?;
    match (rest[i], rest.get(i + 1)) {
        ('\n', _) => Some((i, 1)),
        (_, Some('\n')) => Some((i, 2)),
        (_, Some(_)) => Some((i, 1)),
        (_, None) if complete => Some((i, 1)),
        (_, None) => None,
    }
}

/// One more piece of the standard input into the port; `false` at its end.
fn more_input(c: &mut Ctx, pv: Value) -> Result<bool, Fault> {
    let piece = c
        .budget
        .host
        .read_input()
        .map_err(|e| Fault::FileError(format!("standard input: {e}")))?;
    let Some(text) = piece else {
        return Ok(false);
    };
    c.charge(text.len() as u64)?;
    let p = opened(c.heap, pv)?;
    // What was read is dropped, so the buffer holds only what is pending.
    p.chars.drain(..p.pos);
    p.pos = 0;
    p.chars.extend(text.chars());
    Ok(true)
}

fn read_chars(c: &mut Ctx, v: Option<Value>, who: &str, advance: bool) -> Result<Value, Fault> {
    let pv = input(c, v, who, true)?;
    fill(c, pv, |rest| !rest.is_empty())?;
    let p = opened(c.heap, pv)?;
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
    let pv = input(c, v, who, false)?;
    let p = opened(c.heap, pv)?;
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
    let pv = input(c, a.first().copied(), "read", true)?;
    loop {
        let (text, from_stdin) = {
            let p = opened(c.heap, pv)?;
            (
                p.chars[p.pos..].iter().collect::<String>(),
                p.kind == PortKind::Input,
            )
        };
        let parsed = {
            let heap = &*c.heap;
            let room = |n: usize| heap.check_room(n).is_ok();
            let mut r = Reader::new(&text, c.syms).check_room(&room);
            r.read().map(|d| (d, r.consumed()))
        };
        // The standard input may hold only the start of a datum so far.
        let wants_more = match &parsed {
            Err(e) => e.message.contains("end of input"),
            Ok((None, _)) => true,
            Ok(_) => false,
        };
        if from_stdin && wants_more && more_input(c, pv)? {
            continue;
        }
        let (datum, consumed) = parsed.map_err(|e| {
            if e.out_of_memory {
                return Fault::OutOfMemory;
            }
            Fault::ReadError(format!(
                "read: {} (at {}:{} of the port's text)",
                e.message, e.pos.line, e.pos.col
            ))
        })?;
        opened(c.heap, pv)?.pos += consumed;
        return match datum {
            None => Ok(Value::Eof),
            Some(s) => datum::to_value(c.heap, &s)
                .map_err(|e| Fault::ReadError(format!("read: {}", e.message))),
        };
    }
}

#[cfg(test)]
mod tests;
