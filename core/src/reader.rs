//! The reader: R7RS lexical syntax to [`Syn`].
//!
//! Iterative, with an explicit stack of open lists on the heap, so nesting
//! takes no Rust stack: source nested a million levels deep reads (the wasm
//! guest's stack is far smaller), bounded only by the memory cap, which the
//! reader checks as its stack grows (see [`Reader::check_room`]).

use std::rc::Rc;

use crate::complex::{self, Number};
use crate::number;
use crate::pos::Pos;
use crate::symbol::SymbolTable;
use crate::syntax::{Atom, Ident, Syn};

#[derive(Debug, Clone, PartialEq)]
pub struct ReadError {
    pub message: String,
    pub pos: Pos,
    /// The text nests deeper than the memory cap leaves room for: not a
    /// syntax error but the memory limit.
    pub out_of_memory: bool,
}

/// Says whether `n` more bytes fit under the memory cap.
pub type RoomCheck<'a> = &'a dyn Fn(usize) -> bool;

/// Nesting levels between two checks of the memory cap.
const ROOM_CHECK_LEVELS: usize = 4096;

pub struct Reader<'a> {
    chars: Vec<char>,
    i: usize,
    line: u32,
    col: u32,
    fold_case: bool,
    symbols: &'a mut SymbolTable,
    room: Option<RoomCheck<'a>>,
}

enum Open {
    List {
        items: Vec<Syn>,
        tail: Option<Syn>,
        dot: bool,
        pos: Pos,
        close: char,
    },
    Vector {
        items: Vec<Syn>,
        pos: Pos,
    },
    Bytes {
        items: Vec<u8>,
        pos: Pos,
    },
    /// A prefix such as `'` waiting for its datum.
    Prefix {
        name: &'static str,
        pos: Pos,
    },
    Label {
        n: u32,
        pos: Pos,
    },
    /// `#;` waiting for the datum to discard.
    Skip,
}

enum Token {
    Open(char, Pos),
    OpenVector(Pos),
    OpenBytes(Pos),
    Close(char, Pos),
    Dot(Pos),
    Prefix(&'static str, Pos),
    Label(u32, Pos),
    LabelRef(u32, Pos),
    DatumComment,
    Datum(Syn),
}

impl<'a> Reader<'a> {
    pub fn new(text: &str, symbols: &'a mut SymbolTable) -> Reader<'a> {
        Reader {
            chars: text.chars().collect(),
            i: 0,
            line: 1,
            col: 1,
            fold_case: false,
            symbols,
            room: None,
        }
    }

    /// Has the reader check the memory cap with `room` as its stack of open
    /// lists grows: deeper nesting than the cap leaves room for is an
    /// error ([`ReadError::out_of_memory`]), not an allocation failure.
    pub fn check_room(mut self, room: RoomCheck<'a>) -> Self {
        self.room = Some(room);
        self
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.chars.get(self.i).copied()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn err<T>(&self, message: impl Into<String>, pos: Pos) -> Result<T, ReadError> {
        Err(ReadError {
            message: message.into(),
            pos,
            out_of_memory: false,
        })
    }

    /// Before the stack of open lists grows past another
    /// [`ROOM_CHECK_LEVELS`] levels: is there room for them under the cap?
    fn check_depth(&self, depth: usize) -> Result<(), ReadError> {
        let Some(room) = self.room else {
            return Ok(());
        };
        if depth == 0 || depth % ROOM_CHECK_LEVELS != 0 || room(ROOM_CHECK_LEVELS * LEVEL_BYTES) {
            return Ok(());
        }
        Err(ReadError {
            message: format!("memory limit exceeded: the text nests more than {depth} levels deep"),
            pos: self.pos(),
            out_of_memory: true,
        })
    }

    /// Characters consumed so far.
    pub fn consumed(&self) -> usize {
        self.i
    }

    /// Reads every datum of the text.
    pub fn read_all(&mut self) -> Result<Vec<Syn>, ReadError> {
        let mut out = Vec::new();
        while let Some(d) = self.read()? {
            out.push(d);
        }
        Ok(out)
    }

    /// Reads the next datum, or `None` at the end of the text.
    pub fn read(&mut self) -> Result<Option<Syn>, ReadError> {
        let mut stack: Vec<Open> = Vec::new();
        loop {
            let tok = match self.token()? {
                Some(t) => t,
                None => {
                    return match stack.last() {
                        None => Ok(None),
                        Some(open) => self.unclosed(open),
                    };
                }
            };
            self.check_depth(stack.len())?;
            let mut done: Option<Syn> = match tok {
                Token::Open(close, pos) => {
                    stack.push(Open::List {
                        items: Vec::new(),
                        tail: None,
                        dot: false,
                        pos,
                        close,
                    });
                    None
                }
                Token::OpenVector(pos) => {
                    stack.push(Open::Vector {
                        items: Vec::new(),
                        pos,
                    });
                    None
                }
                Token::OpenBytes(pos) => {
                    stack.push(Open::Bytes {
                        items: Vec::new(),
                        pos,
                    });
                    None
                }
                Token::Prefix(name, pos) => {
                    stack.push(Open::Prefix { name, pos });
                    None
                }
                Token::Label(n, pos) => {
                    stack.push(Open::Label { n, pos });
                    None
                }
                Token::DatumComment => {
                    stack.push(Open::Skip);
                    None
                }
                Token::LabelRef(n, pos) => Some(Syn::LabelRef(n, pos)),
                Token::Datum(d) => Some(d),
                Token::Dot(pos) => match stack.last_mut() {
                    Some(Open::List { items, dot, .. }) if !*dot && !items.is_empty() => {
                        *dot = true;
                        None
                    }
                    _ => return self.err("unexpected '.'", pos),
                },
                Token::Close(c, pos) => Some(self.close(stack.pop(), c, pos)?),
            };
            // Deliver a finished datum to whatever is waiting for it.
            while let Some(d) = done.take() {
                match stack.last_mut() {
                    None => return Ok(Some(d)),
                    Some(Open::List {
                        items, tail, dot, ..
                    }) => {
                        if *dot {
                            if tail.is_some() {
                                return self.err("more than one datum after '.'", d.pos());
                            }
                            *tail = Some(d);
                        } else {
                            items.push(d);
                        }
                    }
                    Some(Open::Vector { items, .. }) => items.push(d),
                    Some(Open::Bytes { items, .. }) => match &d {
                        Syn::Atom(Atom::Num(number::Num::Int(b)), _) if (0..=255).contains(b) => {
                            items.push(*b as u8)
                        }
                        _ => {
                            return self
                                .err("a bytevector holds only exact integers 0 to 255", d.pos())
                        }
                    },
                    Some(Open::Prefix { .. }) => {
                        let Some(Open::Prefix { name, pos }) = stack.pop() else {
                            unreachable!("the top was a prefix")
                        };
                        let sym = self.symbols.intern(name);
                        done = Some(Syn::list(vec![Syn::Sym(Ident::plain(sym), pos), d], pos));
                    }
                    Some(Open::Label { .. }) => {
                        let Some(Open::Label { n, pos }) = stack.pop() else {
                            unreachable!("the top was a label")
                        };
                        done = Some(Syn::LabelDef(n, Rc::new(d), pos));
                    }
                    Some(Open::Skip) => {
                        stack.pop();
                    }
                }
            }
        }
    }

    /// The error for the end of the text inside `open`.
    fn unclosed<T>(&self, open: &Open) -> Result<T, ReadError> {
        let (what, pos) = match open {
            Open::List { pos, .. } => ("list", *pos),
            Open::Vector { pos, .. } => ("vector", *pos),
            Open::Bytes { pos, .. } => ("bytevector", *pos),
            Open::Prefix { pos, .. } => ("quotation", *pos),
            Open::Label { pos, .. } => ("datum label", *pos),
            Open::Skip => ("#; comment", self.pos()),
        };
        self.err(
            format!("unexpected end of input: the {what} opened here is not closed"),
            pos,
        )
    }

    /// The datum that closing bracket `c` (at `pos`) ends, opened as `open`.
    fn close(&self, open: Option<Open>, c: char, pos: Pos) -> Result<Syn, ReadError> {
        match open {
            Some(Open::List {
                items,
                tail,
                dot,
                pos: open_pos,
                close,
            }) => {
                if c != close {
                    return self.err(
                        format!("'{c}' closes a list opened with the other kind of bracket"),
                        pos,
                    );
                }
                if dot && tail.is_none() {
                    return self.err("expected a datum after '.'", pos);
                }
                Ok(Syn::List(items.into(), tail.map(Rc::new), open_pos))
            }
            Some(Open::Vector {
                items,
                pos: open_pos,
            }) if c == ')' => Ok(Syn::Vector(items.into(), open_pos)),
            Some(Open::Bytes {
                items,
                pos: open_pos,
            }) if c == ')' => Ok(Syn::Atom(Atom::Bytes(items.into()), open_pos)),
            Some(Open::Prefix { .. }) | Some(Open::Label { .. }) | Some(Open::Skip) => {
                self.err(format!("unexpected '{c}': expected a datum"), pos)
            }
            _ => self.err(format!("unexpected '{c}'"), pos),
        }
    }

    fn skip_atmosphere(&mut self) -> Result<(), ReadError> {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => {
                    self.next();
                }
                Some(';') => {
                    while let Some(c) = self.next() {
                        if c == '\n' {
                            break;
                        }
                    }
                }
                Some('#') if self.peek_at(1) == Some('|') => {
                    let start = self.pos();
                    self.next();
                    self.next();
                    let mut depth = 1;
                    loop {
                        match self.next() {
                            None => return self.err("unterminated #| comment", start),
                            Some('|') if self.peek() == Some('#') => {
                                self.next();
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            Some('#') if self.peek() == Some('|') => {
                                self.next();
                                depth += 1;
                            }
                            _ => {}
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn token(&mut self) -> Result<Option<Token>, ReadError> {
        self.skip_atmosphere()?;
        let pos = self.pos();
        let Some(c) = self.peek() else {
            return Ok(None);
        };
        match c {
            '(' | '[' => {
                self.next();
                Ok(Some(Token::Open(if c == '(' { ')' } else { ']' }, pos)))
            }
            ')' | ']' => {
                self.next();
                Ok(Some(Token::Close(c, pos)))
            }
            '\'' => {
                self.next();
                Ok(Some(Token::Prefix("quote", pos)))
            }
            '`' => {
                self.next();
                Ok(Some(Token::Prefix("quasiquote", pos)))
            }
            ',' => {
                self.next();
                if self.peek() == Some('@') {
                    self.next();
                    Ok(Some(Token::Prefix("unquote-splicing", pos)))
                } else {
                    Ok(Some(Token::Prefix("unquote", pos)))
                }
            }
            '"' => {
                self.next();
                let s = self.string_body('"', pos)?;
                Ok(Some(Token::Datum(Syn::Atom(Atom::Str(s.into()), pos))))
            }
            '|' => {
                self.next();
                let s = self.string_body('|', pos)?;
                let sym = self.symbols.intern(&s);
                Ok(Some(Token::Datum(Syn::Sym(Ident::plain(sym), pos))))
            }
            '#' => self.hash_token(pos),
            _ => {
                let text = self.atom_text();
                if text == "." {
                    return Ok(Some(Token::Dot(pos)));
                }
                self.atom(text, pos).map(|d| Some(Token::Datum(d)))
            }
        }
    }

    fn is_delimiter(c: char) -> bool {
        c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']' | '"' | ';' | '\'' | '`' | ',')
    }

    fn atom_text(&mut self) -> String {
        let mut s = String::new();
        while let Some(c) = self.peek() {
            if Self::is_delimiter(c) {
                break;
            }
            if c == '|' {
                // |...| inside a symbol: the part between bars is taken literally.
                self.next();
                while let Some(c) = self.next() {
                    if c == '|' {
                        break;
                    }
                    s.push(c);
                }
                continue;
            }
            s.push(c);
            self.next();
        }
        s
    }

    fn atom(&mut self, text: String, pos: Pos) -> Result<Syn, ReadError> {
        if let Some(n) = number_atom(&text) {
            return Ok(Syn::Atom(n, pos));
        }
        if promises_number(&text) {
            return self.err(format!("bad number: {text}"), pos);
        }
        let name = if self.fold_case {
            text.to_lowercase()
        } else {
            text
        };
        let sym = self.symbols.intern(&name);
        Ok(Syn::Sym(Ident::plain(sym), pos))
    }

    fn string_body(&mut self, quote: char, start: Pos) -> Result<String, ReadError> {
        let mut s = String::new();
        loop {
            let Some(c) = self.next() else {
                return self.err(
                    if quote == '"' {
                        "unterminated string"
                    } else {
                        "unterminated |symbol|"
                    },
                    start,
                );
            };
            if c == quote {
                return Ok(s);
            }
            if c != '\\' {
                s.push(c);
                continue;
            }
            let epos = self.pos();
            let Some(e) = self.next() else {
                return self.err("unterminated string", start);
            };
            match e {
                'a' => s.push('\u{7}'),
                'b' => s.push('\u{8}'),
                't' => s.push('\t'),
                'n' => s.push('\n'),
                'r' => s.push('\r'),
                '"' => s.push('"'),
                '\\' => s.push('\\'),
                '|' => s.push('|'),
                'x' | 'X' => {
                    let mut hex = String::new();
                    loop {
                        match self.next() {
                            Some(';') => break,
                            Some(h) if h.is_ascii_hexdigit() && hex.len() < 8 => hex.push(h),
                            _ => {
                                return self
                                    .err("bad \\x escape: expected hex digits and ';'", epos)
                            }
                        }
                    }
                    match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        Some(ch) => s.push(ch),
                        None => {
                            return self
                                .err(format!("\\x{hex}; is not a Unicode scalar value"), epos)
                        }
                    }
                }
                c if c == ' ' || c == '\t' || c == '\n' || c == '\r' => {
                    // Line continuation: \ <spaces> newline <spaces>
                    let mut saw_newline = c == '\n';
                    while let Some(w) = self.peek() {
                        if w == '\n' && !saw_newline {
                            saw_newline = true;
                            self.next();
                        } else if w == ' ' || w == '\t' || w == '\r' {
                            self.next();
                        } else {
                            break;
                        }
                    }
                    if !saw_newline {
                        return self.err("bad escape '\\ ' in string", epos);
                    }
                }
                other => return self.err(format!("unknown string escape \\{other}"), epos),
            }
        }
    }

    fn hash_token(&mut self, pos: Pos) -> Result<Option<Token>, ReadError> {
        let c1 = self.peek_at(1);
        match c1 {
            Some('(') => {
                self.next();
                self.next();
                Ok(Some(Token::OpenVector(pos)))
            }
            Some(';') => {
                self.next();
                self.next();
                Ok(Some(Token::DatumComment))
            }
            Some('\\') => {
                self.next();
                self.next();
                self.character(pos)
                    .map(|c| Some(Token::Datum(Syn::Atom(Atom::Char(c), pos))))
            }
            Some('!') => {
                self.next();
                self.next();
                let text = self.atom_text();
                match text.as_str() {
                    "fold-case" => self.fold_case = true,
                    "no-fold-case" => self.fold_case = false,
                    "eof" => return Ok(Some(Token::Datum(Syn::Atom(Atom::Eof, pos)))),
                    "unspecified" => {
                        return Ok(Some(Token::Datum(Syn::Atom(Atom::Unspecified, pos))))
                    }
                    _ => {} // other #! directives (e.g. a script's first line) are comments
                }
                self.token()
            }
            Some(d) if d.is_ascii_digit() => {
                self.next();
                let mut n: u32 = 0;
                while let Some(d) = self.peek().filter(|c| c.is_ascii_digit()) {
                    n = n.saturating_mul(10).saturating_add(d as u32 - '0' as u32);
                    self.next();
                }
                match self.next() {
                    Some('=') => Ok(Some(Token::Label(n, pos))),
                    Some('#') => Ok(Some(Token::LabelRef(n, pos))),
                    _ => self.err("bad datum label: expected #n= or #n#", pos),
                }
            }
            _ => {
                let text = self.atom_text();
                match text.as_str() {
                    "#t" | "#true" => {
                        return Ok(Some(Token::Datum(Syn::Atom(Atom::Bool(true), pos))))
                    }
                    "#f" | "#false" => {
                        return Ok(Some(Token::Datum(Syn::Atom(Atom::Bool(false), pos))))
                    }
                    _ => {}
                }
                if text.eq_ignore_ascii_case("#u8") && self.peek() == Some('(') {
                    self.next();
                    return Ok(Some(Token::OpenBytes(pos)));
                }
                if let Some(n) = number_atom(&text) {
                    return Ok(Some(Token::Datum(Syn::Atom(n, pos))));
                }
                // A radix or exactness prefix promises a number.
                let prefix = text.chars().nth(1).map(|c| c.to_ascii_lowercase());
                if matches!(prefix, Some('e' | 'i' | 'x' | 'b' | 'o' | 'd')) {
                    return self.err(format!("bad number: {text}"), pos);
                }
                self.err(format!("bad syntax: {text}"), pos)
            }
        }
    }

    fn character(&mut self, pos: Pos) -> Result<char, ReadError> {
        let Some(first) = self.next() else {
            return self.err("unexpected end of input after #\\", pos);
        };
        let mut name = String::from(first);
        while let Some(c) = self.peek() {
            if Self::is_delimiter(c) {
                break;
            }
            name.push(c);
            self.next();
        }
        if name.chars().count() == 1 {
            return Ok(first);
        }
        let lower = name.to_lowercase();
        let named = match lower.as_str() {
            "alarm" => Some('\u{7}'),
            "backspace" => Some('\u{8}'),
            "delete" => Some('\u{7f}'),
            "escape" => Some('\u{1b}'),
            "newline" | "linefeed" => Some('\n'),
            "null" | "nul" => Some('\0'),
            "return" => Some('\r'),
            "space" => Some(' '),
            "tab" => Some('\t'),
            _ => None,
        };
        if let Some(c) = named {
            return Ok(c);
        }
        if (first == 'x' || first == 'X') && name.len() > 1 {
            if let Some(c) = u32::from_str_radix(&name[1..], 16)
                .ok()
                .and_then(char::from_u32)
            {
                return Ok(c);
            }
        }
        self.err(format!("unknown character name #\\{name}"), pos)
    }
}

/// What one level of nesting costs while it is read and once read: its
/// entry on the stack of open lists and its syntax node.
const LEVEL_BYTES: usize = std::mem::size_of::<Open>() + 2 * std::mem::size_of::<Syn>();

/// Reads all data in `text`.
pub fn read_all(text: &str, symbols: &mut SymbolTable) -> Result<Vec<Syn>, ReadError> {
    Reader::new(text, symbols).read_all()
}

/// Reads all data in `text` with symbols and character names folded to
/// lower case, as after `#!fold-case` (`include-ci`).
pub fn read_all_fold_case(text: &str, symbols: &mut SymbolTable) -> Result<Vec<Syn>, ReadError> {
    let mut r = Reader::new(text, symbols);
    r.fold_case = true;
    r.read_all()
}

/// Reads all data in `text`, nested as deep as `room` (the memory cap)
/// allows.
pub fn read_all_within(
    text: &str,
    symbols: &mut SymbolTable,
    room: RoomCheck,
) -> Result<Vec<Syn>, ReadError> {
    Reader::new(text, symbols).check_room(room).read_all()
}

/// The number `text` spells, real or not, as an atom.
fn number_atom(text: &str) -> Option<Atom> {
    Some(match complex::parse(text, 10)? {
        Number::Real(r) => Atom::Num(r),
        Number::Complex(z) => Atom::Complex(z),
    })
}

#[cfg(test)]
mod unit_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_of(s: &Syn) -> usize {
        let mut depth = 0;
        let mut s = s;
        while let Syn::List(items, None, _) = s {
            depth += 1;
            match items.first() {
                Some(first) => s = first,
                None => break,
            }
        }
        depth
    }

    #[test]
    fn nesting_a_million_levels_deep_reads_and_drops() {
        let n = 1_000_000;
        let text = format!("{}{}", "(".repeat(n), ")".repeat(n));
        let mut syms = SymbolTable::default();
        let forms = read_all(&text, &mut syms).expect("reads");
        assert_eq!(forms.len(), 1);
        assert_eq!(depth_of(&forms[0]), n);
        // Dropping it must not recurse either.
        drop(forms);
    }

    #[test]
    fn deep_quotations_and_vectors_read() {
        let n = 100_000;
        let text = format!("{}x", "'#(".repeat(n)) + &")".repeat(n);
        let mut syms = SymbolTable::default();
        let forms = read_all(&text, &mut syms).expect("reads");
        assert_eq!(forms.len(), 1);
    }

    #[test]
    fn a_million_open_lists_say_which_is_not_closed() {
        let text = "(".repeat(1_000_000);
        let mut syms = SymbolTable::default();
        let Err(e) = read_all(&text, &mut syms) else {
            panic!("read an unclosed list")
        };
        assert!(e.message.contains("not closed"), "{}", e.message);
        assert!(!e.out_of_memory);
        assert_eq!((e.pos.line, e.pos.col), (1, 1_000_000));
    }

    #[test]
    fn nesting_beyond_the_room_the_cap_leaves_is_a_memory_error() {
        let text = "(".repeat(100_000);
        let mut syms = SymbolTable::default();
        // Room for about 10,000 levels: each check asks for the next ones.
        let asked = std::cell::Cell::new(0);
        let room = |n: usize| {
            asked.set(asked.get() + n);
            asked.get() < 10_000 * LEVEL_BYTES
        };
        let mut checked = Reader::new(&text, &mut syms).check_room(&room);
        let Err(e) = checked.read() else {
            panic!("read deeper than the cap")
        };
        assert!(e.out_of_memory, "{}", e.message);
        assert!(e.message.contains("memory limit"), "{}", e.message);
    }
}

/// Whether a token that is not a number is read as a bad number rather than
/// as a symbol: it starts as a number does (a digit, or a sign or a point
/// before one, or a sign and a point before one). `write` puts a symbol so
/// named in bars, so that it reads back.
pub(crate) fn promises_number(text: &str) -> bool {
    let mut chars = text.chars();
    let first = chars.next().unwrap_or(' ');
    let second = chars.next();
    let third = chars.next();
    first.is_ascii_digit()
        || (matches!(first, '+' | '-' | '.')
            && second.is_some_and(|c| {
                c.is_ascii_digit()
                    || (first != '.' && c == '.' && third.is_some_and(|c| c.is_ascii_digit()))
            }))
}
