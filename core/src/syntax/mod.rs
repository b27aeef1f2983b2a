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

    /// This syntax with no positions: for code the engine brings (the
    /// prelude, bundled libraries), whose lines are not in any text the
    /// user gave. Its errors and its macros' expansions are then placed
    /// where the user's code called or used it. Recurses on the nesting,
    /// which only the engine's own source reaches.
    pub fn without_positions(&self) -> Syn {
        let all =
            |items: &Rc<[Syn]>| -> Rc<[Syn]> { items.iter().map(Syn::without_positions).collect() };
        match self {
            Syn::Sym(id, _) => Syn::Sym(id.clone(), Pos::NONE),
            Syn::Atom(a, _) => Syn::Atom(a.clone(), Pos::NONE),
            Syn::List(items, tail, _) => Syn::List(
                all(items),
                tail.as_ref().map(|t| Rc::new(t.without_positions())),
                Pos::NONE,
            ),
            Syn::Vector(items, _) => Syn::Vector(all(items), Pos::NONE),
            Syn::LabelDef(n, d, _) => Syn::LabelDef(*n, Rc::new(d.without_positions()), Pos::NONE),
            Syn::LabelRef(n, _) => Syn::LabelRef(*n, Pos::NONE),
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

    /// Does this syntax nest more than `limit` levels deep? Measured with a
    /// stack on the heap, for the walks that still recurse on their input
    /// (macro patterns and templates, import sets, feature requirements).
    pub fn deeper_than(&self, limit: usize) -> bool {
        let mut pending = vec![(self, 0usize)];
        while let Some((s, depth)) = pending.pop() {
            if depth > limit {
                return true;
            }
            match s {
                Syn::List(items, tail, _) => {
                    pending.extend(items.iter().map(|i| (i, depth + 1)));
                    pending.extend(tail.as_deref().map(|t| (t, depth + 1)));
                }
                Syn::Vector(items, _) => pending.extend(items.iter().map(|i| (i, depth + 1))),
                Syn::LabelDef(_, inner, _) => pending.push((inner, depth + 1)),
                Syn::Sym(..) | Syn::Atom(..) | Syn::LabelRef(..) => {}
            }
        }
        false
    }
}

/// Dropping syntax takes no Rust stack on its depth: a list nested a
/// million levels deep (read from hostile or generated source) would
/// otherwise overflow it, one frame per level. Nested nodes this node
/// holds alone are detached onto a heap stack and dropped one by one.
impl Drop for Syn {
    fn drop(&mut self) {
        if !holds_nested(self) {
            return;
        }
        let mut pending: Vec<Syn> = Vec::new();
        detach_nested(self, &mut pending);
        while let Some(mut node) = pending.pop() {
            detach_nested(&mut node, &mut pending);
            // `node` now holds no nested node alone: dropping it is shallow.
        }
    }
}

/// A node that can hold others.
fn is_nested(s: &Syn) -> bool {
    matches!(s, Syn::List(..) | Syn::Vector(..) | Syn::LabelDef(..))
}

fn holds_nested(s: &Syn) -> bool {
    match s {
        Syn::List(items, tail, _) => {
            items.iter().any(is_nested) || tail.as_deref().is_some_and(is_nested)
        }
        Syn::Vector(items, _) => items.iter().any(is_nested),
        Syn::LabelDef(_, inner, _) => is_nested(inner),
        Syn::Sym(..) | Syn::Atom(..) | Syn::LabelRef(..) => false,
    }
}

/// Moves the nested nodes `s` is the only holder of into `out`, leaving
/// leaves in their place. Shared ones stay: their last holder detaches them.
fn detach_nested(s: &mut Syn, out: &mut Vec<Syn>) {
    let mut take = |slot: &mut Syn| {
        if is_nested(slot) {
            out.push(std::mem::replace(slot, Syn::LabelRef(0, Pos::NONE)));
        }
    };
    match s {
        Syn::List(items, tail, _) => {
            if let Some(items) = Rc::get_mut(items) {
                items.iter_mut().for_each(&mut take);
            }
            if let Some(tail) = tail.as_mut().and_then(Rc::get_mut) {
                take(tail);
            }
        }
        Syn::Vector(items, _) => {
            if let Some(items) = Rc::get_mut(items) {
                items.iter_mut().for_each(&mut take);
            }
        }
        Syn::LabelDef(_, inner, _) => {
            if let Some(inner) = Rc::get_mut(inner) {
                take(inner);
            }
        }
        Syn::Sym(..) | Syn::Atom(..) | Syn::LabelRef(..) => {}
    }
}
