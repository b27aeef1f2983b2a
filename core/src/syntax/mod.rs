//! Syntax objects: what the reader produces and the compiler consumes.
//!
//! Syntax is plain Rust data (no heap `Value`s inside), so it can be held by
//! macros and the compiler without rooting anything for the collector. Every
//! node keeps the position it was read from, which is how errors say where.
//! Identifiers carry an optional alias, the renaming `syntax-rules` applies to
//! the symbols a template introduces (see [`scope`]).

pub mod scope;

use std::rc::Rc;

use crate::complex::Complex;
use crate::number::Num;
use crate::pos::Pos;
use crate::symbol::Sym;
use scope::Alias;

#[derive(Clone)]
pub struct Ident {
    pub sym: Sym,
    pub alias: Option<Rc<Alias>>,
}

impl Ident {
    pub fn plain(sym: Sym) -> Ident {
        Ident { sym, alias: None }
    }

    /// The same identifier: same name and the same renaming (by identity).
    pub fn same(&self, other: &Ident) -> bool {
        self.sym == other.sym
            && match (&self.alias, &other.alias) {
                (None, None) => true,
                (Some(a), Some(b)) => Rc::ptr_eq(a, b),
                _ => false,
            }
    }

    /// The symbol this identifier names once every renaming is stripped.
    pub fn base(&self) -> Sym {
        self.sym
    }
}

#[derive(Clone, Debug)]
pub enum Atom {
    Bool(bool),
    Num(Num),
    /// A number that is not real, such as `1+2i`.
    Complex(Box<Complex>),
    Char(char),
    Str(Rc<str>),
    Bytes(Rc<[u8]>),
    Unspecified,
    Eof,
}

#[derive(Clone)]
pub enum Syn {
    Sym(Ident, Pos),
    Atom(Atom, Pos),
    /// A list: its elements and, for an improper list, the final cdr.
    List(Rc<[Syn]>, Option<Rc<Syn>>, Pos),
    Vector(Rc<[Syn]>, Pos),
    /// `#n=datum`: only meaningful inside quoted data.
    LabelDef(u32, Rc<Syn>, Pos),
    /// `#n#`
    LabelRef(u32, Pos),
}

impl Syn {
    pub fn pos(&self) -> Pos {
        match self {
            Syn::Sym(_, p) | Syn::Atom(_, p) | Syn::List(_, _, p) | Syn::Vector(_, p) => *p,
            Syn::LabelDef(_, _, p) | Syn::LabelRef(_, p) => *p,
        }
    }

    pub fn list(items: Vec<Syn>, pos: Pos) -> Syn {
        Syn::List(items.into(), None, pos)
    }

    pub fn nil(pos: Pos) -> Syn {
        Syn::List(Rc::from(Vec::new()), None, pos)
    }

    pub fn is_nil(&self) -> bool {
        matches!(self, Syn::List(items, None, _) if items.is_empty())
    }

    pub fn as_ident(&self) -> Option<&Ident> {
        match self {
            Syn::Sym(id, _) => Some(id),
            _ => None,
        }
    }

    /// The elements of a proper list.
    pub fn as_list(&self) -> Option<&[Syn]> {
        match self {
            Syn::List(items, None, _) => Some(items),
            _ => None,
        }
    }
}
