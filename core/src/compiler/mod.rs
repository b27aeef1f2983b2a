//! The compiler: syntax → resolved AST (`front`) → templates (`gen`).
//!
//! - `special`: the special forms, by name.
//! - `globals`: the global environment the compiler resolves names in.
//! - `front`: macros and special forms to [`ast::Expr`], every variable
//!   resolved (submodules by family of forms).
//! - `syntax_rules`: matching and instantiating `syntax-rules` macros.
//! - `gen`: [`ast::Expr`] to [`crate::value::code::Template`].

pub mod ast;
pub mod front;
pub mod gen;
pub mod globals;
pub mod special;
pub mod syntax_rules;
#[cfg(test)]
mod unit_tests;

use std::rc::Rc;

use crate::pos::Pos;
use crate::symbol::{Sym, SymbolTable};
use crate::syntax::scope::Alias;
use crate::syntax::Ident;
use crate::value::Value;

#[derive(Debug, Clone)]
pub struct CompileError {
    pub message: String,
    pub pos: Pos,
    /// The code nests deeper than the memory cap leaves room for: the
    /// memory limit, not a syntax error.
    pub out_of_memory: bool,
}

/// Symbols and identifiers the compiler needs by name.
#[derive(Clone)]
pub struct Known {
    pub else_: Sym,
    pub arrow: Sym,
    pub underscore: Sym,
    pub ellipsis: Sym,
    /// Name of compiler temporaries; not writable in source, so never captured.
    pub tmp: Sym,
    pub value: Sym,
    pub do_loop: Sym,
    /// Identifiers that always mean the special forms, whatever is bound locally.
    pub lambda_alias: Ident,
    pub define_alias: Ident,
    pub quote_alias: Ident,
    pub prims: KnownPrims,
}

/// The primitives derived forms expand into, called by index whatever the
/// globals of their names hold (so redefining `cons` does not change what
/// a quasiquote builds).
#[derive(Clone)]
pub struct KnownPrims {
    pub cons: Value,
    pub append: Value,
    pub list_to_vector: Value,
    pub eqv: Value,
    pub make_promise: Value,
    pub make_lazy_promise: Value,
}

impl KnownPrims {
    /// The names the compiler calls, for a check that the primitive table
    /// has each.
    #[cfg(test)]
    pub const NAMES: [&'static str; 6] = [
        "cons",
        "append",
        "list->vector",
        "eqv?",
        "make-promise",
        "%make-lazy-promise",
    ];
}

impl Known {
    /// `prim` gives a primitive's index by name. A missing one becomes an
    /// index no primitive has: calling it is a "not a procedure" error.
    pub fn new(syms: &mut SymbolTable, prim: impl Fn(&str) -> Option<u32>) -> Known {
        let p = |name: &str| Value::Prim(prim(name).unwrap_or(u32::MAX));
        let global = |s: Sym| Ident {
            sym: s,
            alias: Some(Rc::new(Alias {
                orig: Ident::plain(s),
                env: None,
                builtin: true,
            })),
        };
        Known {
            else_: syms.intern("else"),
            arrow: syms.intern("=>"),
            underscore: syms.intern("_"),
            ellipsis: syms.intern("..."),
            tmp: syms.intern(" t"),
            value: syms.intern(" v"),
            do_loop: syms.intern("do-loop"),
            lambda_alias: global(syms.intern("lambda")),
            define_alias: global(syms.intern("define")),
            quote_alias: global(syms.intern("quote")),
            prims: KnownPrims {
                cons: p("cons"),
                append: p("append"),
                list_to_vector: p("list->vector"),
                eqv: p("eqv?"),
                make_promise: p("make-promise"),
                make_lazy_promise: p("%make-lazy-promise"),
            },
        }
    }
}
