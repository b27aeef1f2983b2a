//! The one mapping between Scheme values and JSON, both ways.
//!
//! Every part of Arbores that speaks JSON is to use this module: today
//! `Engine::eval_json` (an evaluation's value as JSON) and the primitives
//! `scheme->json` and `json->scheme`. docs/API.md ("Values as JSON") is
//! its reference; the rules, in short:
//!
//! | Scheme | JSON |
//! |---|---|
//! | `#t`, `#f` | `true`, `false` |
//! | the symbol `null` | `null` |
//! | an exact integer, any size | a number without fraction or exponent |
//! | a finite inexact real | a number with a fraction or an exponent (`2.0`) |
//! | a string | a string |
//! | any other symbol | a string (its name); read back as a string |
//! | a vector | an array; an array reads as a vector |
//! | an association list (every element a pair whose car is a string or symbol) | an object, keys in order; an object reads as an alist with string keys |
//! | any other proper list, `()` included | an array |
//!
//! Refused, with an error that says what and where (a path such as
//! `$[2]["id"]` for values, line and column for text): non-finite reals,
//! exact non-integers, characters, bytevectors, procedures and every other
//! object, improper lists, data nested deeper than [`MAX_DEPTH`] (which is
//! also how cycles through cars end) or cyclic lists, a key given twice.
//! Reading refuses what RFC 8259 does not allow, lone surrogates (no
//! character is one), numbers beyond the flonum range and duplicate keys.
//!
//! Why not serde_json: see "Decisions" in docs/ARCHITECTURE.md.

use crate::heap::Heap;
use crate::number::{Num, Work};
use crate::printer;
use crate::symbol::SymbolTable;
use crate::value::{Object, Value};

/// Deepest nesting of arrays and objects either way.
pub const MAX_DEPTH: usize = 1000;

/// A value with no JSON form, or text that is not JSON: what and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    pub message: String,
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

// ---- Scheme to JSON ---------------------------------------------------------

/// Why [`to_json_within`] did not give the text.
pub enum Stopped<S> {
    /// `v` has no JSON form.
    Refused(JsonError),
    /// The work's limit stopped the writing.
    Work(S),
}

impl<S> From<JsonError> for Stopped<S> {
    fn from(e: JsonError) -> Self {
        Stopped::Refused(e)
    }
}

/// Units of work charged per value written, plus one per 8 bytes of text:
/// a structure that shares its parts can stand for text far longer than
/// itself, so the writing, not the structure, is what is charged.
const VALUE_UNITS: u64 = 32;

/// The JSON text of `v` (compact: no spaces), its work charged to `work`
/// as it goes.
pub fn to_json_within<W: Work>(
    heap: &Heap,
    syms: &SymbolTable,
    v: Value,
    work: &mut W,
) -> Result<String, Stopped<W::Stop>> {
    let mut w = Writer {
        heap,
        syms,
        out: String::new(),
        path: Vec::new(),
        work,
        charged: 0,
    };
    w.value(v)?;
    Ok(w.out)
}

/// One step of the path to the value being written, for errors.
enum Step {
    Index(usize),
    Key(String),
}

struct Writer<'a, W: Work> {
    heap: &'a Heap,
    syms: &'a SymbolTable,
    out: String,
    path: Vec<Step>,
    work: &'a mut W,
    /// The length of `out` when the work was last charged.
    charged: usize,
}

impl<W: Work> Writer<'_, W> {
    fn refuse<T>(&self, v: Value, why: &str) -> Result<T, Stopped<W::Stop>> {
        let mut at = String::from("$");
        for s in &self.path {
            match s {
                Step::Index(i) => at.push_str(&format!("[{i}]")),
                Step::Key(k) => {
                    at.push('[');
                    write_string(k, &mut at);
                    at.push(']');
                }
            }
        }
        let mut shown = printer::shown(self.heap, self.syms, v);
        if shown.chars().count() > 60 {
            shown = shown.chars().take(57).collect::<String>() + "...";
        }
        Err(Stopped::Refused(JsonError {
            message: format!("at {at}: {shown} has no JSON form: {why}"),
        }))
    }

    fn value(&mut self, v: Value) -> Result<(), Stopped<W::Stop>> {
        let written = (self.out.len() - self.charged) as u64;
        self.charged = self.out.len();
        self.work
            .charge(VALUE_UNITS + written / 8)
            .map_err(Stopped::Work)?;
        if self.path.len() > MAX_DEPTH {
            return self.refuse(v, "nested too deeply (or cyclic)");
        }
        match v {
            Value::Bool(b) => self.out.push_str(if b { "true" } else { "false" }),
            Value::Int(i) => self.out.push_str(&i.to_string()),
            Value::Float(f) => self.float(v, f)?,
            Value::Sym(s) => match self.syms.name(s) {
                "null" => self.out.push_str("null"),
                name => write_string(name, &mut self.out),
            },
            Value::Null => self.out.push_str("[]"),
            Value::Char(_) => return self.refuse(v, "a character (write it as a string)"),
            Value::Obj(r) => match self.heap.get(r) {
                Object::Str(s) => write_string(&s.iter().collect::<String>(), &mut self.out),
                Object::Big(b) => {
                    let digits = crate::number::to_string(&Num::Big(b.clone()), 10, self.work)
                        .map_err(Stopped::Work)?;
                    self.out.push_str(&digits);
                }
                Object::Rat(_) => {
                    return self.refuse(v, "an exact fraction (make it inexact first)")
                }
                Object::Vector(items) => self.array(items.iter().copied())?,
                Object::Pair(..) => self.list(v)?,
                _ => {
                    return self.refuse(
                        v,
                        "only booleans, numbers, strings, symbols, lists and vectors have one",
                    )
                }
            },
            Value::Unspecified | Value::Undefined | Value::Eof | Value::Prim(_) => {
                return self.refuse(
                    v,
                    "only booleans, numbers, strings, symbols, lists and vectors have one",
                )
            }
        }
        Ok(())
    }

    fn float(&mut self, v: Value, f: f64) -> Result<(), Stopped<W::Stop>> {
        if !f.is_finite() {
            return self.refuse(v, "JSON numbers are finite");
        }
        // Debug keeps a fraction or an exponent (`2.0`, `1e300`): the number
        // reads back inexact.
        self.out.push_str(&format!("{f:?}"));
        Ok(())
    }

    fn array(&mut self, items: impl Iterator<Item = Value>) -> Result<(), Stopped<W::Stop>> {
        self.out.push('[');
        for (i, item) in items.enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.path.push(Step::Index(i));
            self.value(item)?;
            self.path.pop();
        }
        self.out.push(']');
        Ok(())
    }

    /// A proper list: an object when it is an association list, else an
    /// array.
    fn list(&mut self, v: Value) -> Result<(), Stopped<W::Stop>> {
        let mut items = Vec::new();
        let mut l = v;
        while let Some((a, d)) = self.heap.pair(l) {
            items.push(a);
            l = d;
            if items.len() % 4096 == 0 {
                self.work
                    .charge(4096 * VALUE_UNITS)
                    .map_err(Stopped::Work)?;
            }
            if items.len() > self.heap.slots() {
                return self.refuse(v, "a cyclic list");
            }
        }
        if !matches!(l, Value::Null) {
            return self.refuse(v, "an improper list");
        }
        let keys: Option<Vec<String>> = items.iter().map(|e| self.key_of(*e)).collect();
        let Some(keys) = keys else {
            return self.array(items.into_iter());
        };
        self.out.push('{');
        let mut seen = std::collections::BTreeSet::new();
        for (i, (key, entry)) in keys.iter().zip(&items).enumerate() {
            if !seen.insert(key) {
                return self.refuse(v, &format!("the key {key:?} is given twice"));
            }
            if i > 0 {
                self.out.push(',');
            }
            write_string(key, &mut self.out);
            self.out.push(':');
            let value = self.heap.pair(*entry).map_or(Value::Null, |(_, d)| d);
            self.path.push(Step::Key(key.clone()));
            self.value(value)?;
            self.path.pop();
        }
        self.out.push('}');
        Ok(())
    }

    /// The key of an association list's entry: the name of its car when it
    /// is a pair whose car is a string or a symbol.
    fn key_of(&self, entry: Value) -> Option<String> {
        let (k, _) = self.heap.pair(entry)?;
        match k {
            Value::Sym(s) => Some(self.syms.name(s).to_string()),
            Value::Obj(_) => match self.heap.obj(k) {
                Some(Object::Str(s)) => Some(s.iter().collect()),
                _ => None,
            },
            _ => None,
        }
    }
}

/// `s` as a JSON string literal.
fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

// ---- JSON to Scheme ---------------------------------------------------------

/// The value of JSON text `text` (one JSON value, with white space around
/// it allowed).
pub fn from_json(heap: &mut Heap, syms: &mut SymbolTable, text: &str) -> Result<Value, JsonError> {
    let mut r = Reader {
        chars: text.chars().collect(),
        pos: 0,
        heap,
        syms,
    };
    r.space();
    let v = r.value(0)?;
    r.space();
    if r.pos < r.chars.len() {
        return r.fail("text after the JSON value");
    }
    Ok(v)
}

struct Reader<'a> {
    chars: Vec<char>,
    pos: usize,
    heap: &'a mut Heap,
    syms: &'a mut SymbolTable,
}

impl Reader<'_> {
    /// An error at the current position, as `LINE:COLUMN: message`.
    fn fail<T>(&self, message: &str) -> Result<T, JsonError> {
        let before = &self.chars[..self.pos.min(self.chars.len())];
        let line = 1 + before.iter().filter(|c| **c == '\n').count();
        let column = 1 + before.iter().rev().take_while(|c| **c != '\n').count();
        Err(JsonError {
            message: format!("{line}:{column}: {message}"),
        })
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, c: char) -> Result<(), JsonError> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            self.fail(&format!("expected '{c}'"))
        }
    }

    fn word(&mut self, word: &str, v: Value) -> Result<Value, JsonError> {
        let end = self.pos + word.chars().count();
        if end <= self.chars.len() && self.chars[self.pos..end].iter().copied().eq(word.chars()) {
            self.pos = end;
            Ok(v)
        } else {
            self.fail("expected a JSON value")
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        if depth > MAX_DEPTH {
            return self.fail(&format!("nested deeper than {MAX_DEPTH} levels"));
        }
        match self.peek() {
            None => self.fail("unexpected end of the text: expected a JSON value"),
            Some('n') => {
                let null = Value::Sym(self.syms.intern("null"));
                self.word("null", null)
            }
            Some('t') => self.word("true", Value::Bool(true)),
            Some('f') => self.word("false", Value::Bool(false)),
            Some('"') => {
                let s = self.string()?;
                Ok(self.heap.string(&s))
            }
            Some('[') => self.array(depth),
            Some('{') => self.object(depth),
            Some(c) if c == '-' || c.is_ascii_digit() => self.number(),
            Some(_) => self.fail("expected a JSON value"),
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.pos += 1;
        self.space();
        let mut items = Vec::new();
        if self.peek() == Some(']') {
            self.pos += 1;
        } else {
            loop {
                items.push(self.value(depth + 1)?);
                self.space();
                match self.peek() {
                    Some(',') => {
                        self.pos += 1;
                        self.space();
                    }
                    Some(']') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return self.fail("expected ',' or ']' in an array"),
                }
            }
        }
        Ok(self.heap.alloc(Object::Vector(items)))
    }

    fn object(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.pos += 1;
        self.space();
        let mut keys: Vec<String> = Vec::new();
        let mut entries = Vec::new();
        if self.peek() == Some('}') {
            self.pos += 1;
            return Ok(Value::Null);
        }
        loop {
            if self.peek() != Some('"') {
                return self.fail("expected a string key in an object");
            }
            let at = self.pos;
            let key = self.string()?;
            if keys.contains(&key) {
                self.pos = at;
                return self.fail(&format!("the key {key:?} is given twice"));
            }
            self.space();
            self.expect(':')?;
            self.space();
            let v = self.value(depth + 1)?;
            let k = self.heap.string(&key);
            entries.push(self.heap.cons(k, v));
            keys.push(key);
            self.space();
            match self.peek() {
                Some(',') => {
                    self.pos += 1;
                    self.space();
                }
                Some('}') => {
                    self.pos += 1;
                    break;
                }
                _ => return self.fail("expected ',' or '}' in an object"),
            }
        }
        Ok(self.heap.list(&entries))
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.pos += 1;
        let mut s = String::new();
        loop {
            let Some(c) = self.peek() else {
                return self.fail("unexpected end of the text inside a string");
            };
            self.pos += 1;
            match c {
                '"' => return Ok(s),
                '\\' => s.push(self.escape()?),
                c if (c as u32) < 0x20 => {
                    self.pos -= 1;
                    return self.fail("a control character must be escaped in a string");
                }
                c => s.push(c),
            }
        }
    }

    fn escape(&mut self) -> Result<char, JsonError> {
        let Some(c) = self.peek() else {
            return self.fail("unexpected end of the text inside a string");
        };
        self.pos += 1;
        Ok(match c {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => {
                let hi = self.hex4()?;
                if (0xD800..0xDC00).contains(&hi) {
                    if self.peek() != Some('\\') || self.chars.get(self.pos + 1) != Some(&'u') {
                        return self.fail("a lone surrogate \\u escape is not a character");
                    }
                    self.pos += 2;
                    let lo = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return self.fail("a lone surrogate \\u escape is not a character");
                    }
                    let code = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    char::from_u32(code).map_or_else(|| self.fail("not a character"), Ok)?
                } else {
                    match char::from_u32(hi) {
                        Some(c) => c,
                        None => return self.fail("a lone surrogate \\u escape is not a character"),
                    }
                }
            }
            _ => {
                self.pos -= 1;
                return self.fail("unknown escape in a string");
            }
        })
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut n = 0;
        for _ in 0..4 {
            let Some(d) = self.peek().and_then(|c| c.to_digit(16)) else {
                return self.fail("expected four hexadecimal digits after \\u");
            };
            n = n * 16 + d;
            self.pos += 1;
        }
        Ok(n)
    }

    /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`: exact without a
    /// fraction or exponent, inexact with one.
    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.pos;
        let digits = |r: &mut Self| {
            let from = r.pos;
            while r.peek().is_some_and(|c| c.is_ascii_digit()) {
                r.pos += 1;
            }
            r.pos - from
        };
        if self.peek() == Some('-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        let n = digits(self);
        if n == 0 || (n > 1 && self.chars[int_start] == '0') {
            return self.fail("a number's integer part is 0 or starts with 1 to 9");
        }
        let mut exact = true;
        if self.peek() == Some('.') {
            self.pos += 1;
            exact = false;
            if digits(self) == 0 {
                return self.fail("expected digits after '.'");
            }
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            self.pos += 1;
            exact = false;
            if matches!(self.peek(), Some('+' | '-')) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return self.fail("expected digits in the exponent");
            }
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        if exact {
            let n = match text.parse::<i64>() {
                Ok(i) => Num::Int(i),
                Err(_) => match text.parse::<num_bigint::BigInt>() {
                    Ok(b) => Num::Big(b),
                    Err(_) => return self.fail("not a number"),
                },
            };
            return Ok(n.into_value(self.heap));
        }
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::Float(f)),
            _ => {
                self.pos = start;
                self.fail(&format!("{text} is beyond the range of an inexact number"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to_json(heap: &Heap, syms: &SymbolTable, v: Value) -> Result<String, JsonError> {
        match to_json_within(heap, syms, v, &mut crate::number::Unmetered) {
            Ok(text) => Ok(text),
            Err(Stopped::Refused(e)) => Err(e),
            Err(Stopped::Work(never)) => match never {},
        }
    }

    fn read_write(text: &str) -> String {
        let mut heap = Heap::new();
        let mut syms = SymbolTable::default();
        let v = from_json(&mut heap, &mut syms, text).unwrap_or_else(|e| panic!("{text}: {e}"));
        to_json(&heap, &syms, v).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn read(text: &str) -> (Heap, SymbolTable, Result<Value, JsonError>) {
        let mut heap = Heap::new();
        let mut syms = SymbolTable::default();
        let r = from_json(&mut heap, &mut syms, text);
        (heap, syms, r)
    }

    fn read_error(text: &str) -> String {
        read(text).2.expect_err(text).message
    }

    fn shown(text: &str) -> String {
        let (heap, syms, v) = read(text);
        printer::write_string(&heap, &syms, v.expect(text))
    }

    #[test]
    fn json_reads_as_the_documented_scheme_values() {
        assert_eq!(shown("null"), "null");
        assert_eq!(shown("[true, false]"), "#(#t #f)");
        assert_eq!(shown("\"a\\\"b\\u00e9\\ud83d\\ude00\""), "\"a\\\"bé😀\"");
        assert_eq!(
            shown("{\"id\": 256, \"names\": [\"sq\"]}"),
            "((\"id\" . 256) (\"names\" . #(\"sq\")))"
        );
        assert_eq!(shown("{}"), "()");
        assert_eq!(shown("[]"), "#()");
        assert_eq!(shown("12345678901234567890123"), "12345678901234567890123");
        assert_eq!(shown("-9007199254740993"), "-9007199254740993");
        assert_eq!(shown("1.0"), "1.0");
        assert_eq!(shown("1e2"), "100.0");
        assert_eq!(shown("-0.5E-1"), "-0.05");
        assert_eq!(shown(" \t\r\n7 \n"), "7");
    }

    #[test]
    fn values_round_trip_through_text() {
        for text in [
            "null",
            "true",
            "0",
            "-1",
            "9007199254740993",
            "-123456789012345678901234567890",
            "2.0",
            "-0.0",
            "1e300",
            "0.1",
            "\"tab\\tquote\\\"back\\\\slash\\u0001\"",
            "[1,[2,[3,[]]],{\"a\":null}]",
            "{\"k\":{\"k\":[1.5,\"x\"]},\"l\":[]}",
        ] {
            let once = read_write(text);
            assert_eq!(read_write(&once), once, "{text}");
        }
        assert_eq!(read_write("[1, 2.50, 1E3]"), "[1,2.5,1000.0]");
        assert_eq!(read_write("\"\\/\""), "\"/\"");
    }

    fn written(build: impl FnOnce(&mut Heap, &mut SymbolTable) -> Value) -> Result<String, String> {
        let mut heap = Heap::new();
        let mut syms = SymbolTable::default();
        let v = build(&mut heap, &mut syms);
        to_json(&heap, &syms, v).map_err(|e| e.message)
    }

    #[test]
    fn scheme_writes_as_the_documented_json() {
        // An alist with string and symbol keys is an object; a list of
        // alists an array of objects; other lists arrays.
        let out = written(|h, s| {
            let id = h.string("id");
            let e1 = h.cons(id, Value::Int(256));
            let names = {
                let a = h.string("square");
                let b = h.string("sq");
                h.list(&[a, b])
            };
            let k = Value::Sym(s.intern("symbol-names"));
            let e2 = h.cons(k, names);
            let code = h.string("code");
            let e3 = h.cons(code, Value::Bool(false));
            let deps = h.string("dependencies");
            let e4 = h.cons(deps, Value::Null);
            let alist = h.list(&[e1, e2, e3, e4]);
            h.list(&[
                alist,
                Value::Sym(s.intern("null")),
                Value::Sym(s.intern("arb:create")),
            ])
        });
        assert_eq!(
            out.unwrap(),
            "[{\"id\":256,\"symbol-names\":[\"square\",\"sq\"],\"code\":false,\"dependencies\":[]},null,\"arb:create\"]"
        );
        let big = written(|h, _| Num::Big(num_bigint::BigInt::from(2).pow(70)).into_value(h));
        assert_eq!(big.unwrap(), "1180591620717411303424");
        assert_eq!(written(|_, _| Value::Float(3.0)).unwrap(), "3.0");
        assert_eq!(
            written(|h, _| h.alloc(Object::Vector(vec![]))).unwrap(),
            "[]"
        );
    }

    #[test]
    fn values_without_a_json_form_are_refused_with_where() {
        let inf = written(|h, _| {
            let k = h.string("x");
            let e = h.cons(k, Value::Float(f64::INFINITY));
            let alist = h.list(&[e]);
            h.alloc(Object::Vector(vec![Value::Int(1), alist]))
        });
        assert_eq!(
            inf.unwrap_err(),
            "at $[1][\"x\"]: +inf.0 has no JSON form: JSON numbers are finite"
        );
        let nan = written(|_, _| Value::Float(f64::NAN)).unwrap_err();
        assert!(nan.contains("+nan.0 has no JSON form"), "{nan}");
        let ch = written(|_, _| Value::Char('a')).unwrap_err();
        assert!(
            ch.starts_with("at $: #\\a has no JSON form: a character"),
            "{ch}"
        );
        let rat = written(|h, _| {
            let q = num_rational::BigRational::new(1.into(), 3.into());
            Num::Rat(q).into_value(h)
        })
        .unwrap_err();
        assert!(
            rat.contains("1/3 has no JSON form: an exact fraction"),
            "{rat}"
        );
        let dotted = written(|h, _| h.cons(Value::Int(257), Value::Int(1))).unwrap_err();
        assert!(dotted.contains("an improper list"), "{dotted}");
        let dup = written(|h, _| {
            let a = h.string("a");
            let e1 = h.cons(a, Value::Int(1));
            let a2 = h.string("a");
            let e2 = h.cons(a2, Value::Int(2));
            h.list(&[e1, e2])
        })
        .unwrap_err();
        assert!(dup.contains("the key \"a\" is given twice"), "{dup}");
        for v in [Value::Unspecified, Value::Eof, Value::Prim(0)] {
            assert!(written(|_, _| v).is_err());
        }
        let bytes = written(|h, _| h.alloc(Object::Bytevector(vec![1]))).unwrap_err();
        assert!(bytes.contains("#u8(1) has no JSON form"), "{bytes}");
    }

    #[test]
    fn cycles_and_deep_nesting_end_in_an_error() {
        let cyclic = written(|h, _| {
            let l = h.cons(Value::Int(1), Value::Null);
            if let Some(Object::Pair(_, d)) = h.obj_mut(l) {
                *d = l;
            }
            l
        })
        .unwrap_err();
        assert!(cyclic.contains("a cyclic list"), "{cyclic}");
        let deep = written(|h, _| {
            let mut v = Value::Int(0);
            for _ in 0..MAX_DEPTH + 5 {
                v = h.alloc(Object::Vector(vec![v]));
            }
            v
        })
        .unwrap_err();
        assert!(deep.contains("nested too deeply"), "{deep}");
        let text = "[".repeat(MAX_DEPTH + 5);
        assert!(read_error(&text).contains("nested deeper than 1000 levels"));
    }

    #[test]
    fn text_that_is_not_json_is_refused_with_line_and_column() {
        for (text, expected) in [
            ("", "1:1: unexpected end of the text: expected a JSON value"),
            ("[1,]", "1:4: expected a JSON value"),
            ("[1 2]", "1:4: expected ',' or ']' in an array"),
            ("{\"a\" 1}", "1:6: expected ':'"),
            ("{a: 1}", "1:2: expected a string key in an object"),
            ("{\"a\":1,\"a\":2}", "1:8: the key \"a\" is given twice"),
            (
                "01",
                "1:3: a number's integer part is 0 or starts with 1 to 9",
            ),
            ("1.", "1:3: expected digits after '.'"),
            ("1e", "1:3: expected digits in the exponent"),
            (
                "1e400",
                "1:1: 1e400 is beyond the range of an inexact number",
            ),
            ("NaN", "1:1: expected a JSON value"),
            ("nul", "1:1: expected a JSON value"),
            (
                "\"a\nb\"",
                "1:3: a control character must be escaped in a string",
            ),
            ("\"\\x\"", "1:3: unknown escape in a string"),
            (
                "\"\\ud800\"",
                "1:8: a lone surrogate \\u escape is not a character",
            ),
            (
                "\"\\udc00\"",
                "1:8: a lone surrogate \\u escape is not a character",
            ),
            ("\"abc", "1:5: unexpected end of the text inside a string"),
            ("true false", "1:6: text after the JSON value"),
            ("[\n  1,\n  x]", "3:3: expected a JSON value"),
        ] {
            assert_eq!(read_error(text), expected, "{text:?}");
        }
    }
}
