//! The compiler: syntax → resolved AST (`front`) → templates (`gen`).

pub mod ast;
pub mod code;
pub mod front;
pub mod gen;
pub mod scope;
pub mod syntax_rules;

use std::rc::Rc;

use crate::symbol::{Sym, SymbolTable};
use crate::syntax::{Ident, Pos};
use scope::Alias;

#[derive(Debug, Clone)]
pub struct CompileError {
    pub message: String,
    pub pos: Pos,
}

/// Symbols and identifiers the compiler needs by name.
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
}

impl Known {
    pub fn new(syms: &mut SymbolTable) -> Known {
        let global = |s: Sym| Ident {
            sym: s,
            alias: Some(Rc::new(Alias {
                orig: Ident::plain(s),
                env: None,
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
        }
    }
}
