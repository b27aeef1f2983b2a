//! Scopes and hygienic identifier resolution: the part of a syntax object
//! that says what its identifiers mean.
//!
//! A `syntax-rules` expansion renames every symbol its template introduces to
//! a fresh [`Alias`] that remembers the scope the macro was defined in. An
//! alias bound by a binding form inside the expansion is a new variable seen
//! only by that same alias (hygiene: the `swap!`/`tmp` case). An alias that is
//! free where it lands is looked up in the macro's own scope (referential
//! transparency: a locally rebound `if` or `else` does not change what the
//! macro means).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::{Ident, Syn};
use crate::symbol::Sym;

pub type VarId = u32;

/// A renamed identifier introduced by a macro expansion.
pub struct Alias {
    pub orig: Ident,
    /// The scope of the macro definition; `None` is the global scope.
    pub env: Option<Rc<Scope>>,
    /// Made by a macro of the engine's own code (the prelude) or by the
    /// compiler: a global it names is that global, never what a
    /// program's import renamed to that name.
    pub builtin: bool,
}

/// A `syntax-rules` transformer.
pub struct Macro {
    pub name: Sym,
    pub literals: Vec<Ident>,
    pub ellipsis: Ident,
    pub rules: Vec<(Syn, Syn)>,
    pub env: Option<Rc<Scope>>,
    /// Defined by the engine's own code (the prelude).
    pub builtin: bool,
}

#[derive(Clone)]
pub enum Binding {
    Var(VarId),
    Macro(Rc<Macro>),
    /// A name that stands for a global of another name: a library's
    /// definitions live under hidden (or exported) global names.
    Global(Sym),
}

/// One level of lexical scope.
pub struct Scope {
    pub bindings: RefCell<Vec<(Ident, Binding)>>,
    pub parent: Option<Rc<Scope>>,
    /// The top-level scope of a library of the engine's own: code compiled
    /// in it is left out of backtraces, like the prelude's, so an error
    /// points at the program's call.
    pub internal: bool,
    /// Within the code `eval` compiles in an environment `environment`
    /// made (R7RS 6.12): a name no scope binds is looked up in that
    /// environment's bindings, not the session's globals.
    pub in_environment: bool,
}

impl Scope {
    pub fn new(parent: Option<Rc<Scope>>) -> Rc<Scope> {
        let in_environment = parent.as_ref().is_some_and(|p| p.in_environment);
        Rc::new(Scope {
            bindings: RefCell::new(Vec::new()),
            parent,
            internal: false,
            in_environment,
        })
    }

    /// The outermost scope of code `eval` compiles in an environment of
    /// `environment`'s (see `in_environment`).
    pub fn new_environment() -> Rc<Scope> {
        Rc::new(Scope {
            bindings: RefCell::new(Vec::new()),
            parent: None,
            internal: false,
            in_environment: true,
        })
    }

    /// A top-level scope for the engine's own library code.
    pub fn new_internal() -> Rc<Scope> {
        Rc::new(Scope {
            bindings: RefCell::new(Vec::new()),
            parent: None,
            internal: true,
            in_environment: false,
        })
    }

    pub fn bind(&self, id: Ident, b: Binding) {
        BOUND.with(|bound| *bound.borrow_mut().entry(id.sym).or_insert(0) += 1);
        self.bindings.borrow_mut().push((id, b));
    }
}

thread_local! {
    /// How many bindings of each name all living scopes hold. A name no
    /// scope binds resolves without walking the scope chain: code nested
    /// 100,000 scopes deep would otherwise walk them all for every global
    /// it names (`let`, `+`), quadratic in the depth.
    static BOUND: RefCell<HashMap<Sym, usize>> = RefCell::new(HashMap::new());
}

/// Does any living scope bind `sym`?
fn bound_anywhere(sym: Sym) -> bool {
    BOUND.with(|bound| bound.borrow().get(&sym).is_some_and(|&n| n > 0))
}

/// Dropping a scope forgets its bindings (see `BOUND`) and takes no Rust
/// stack on the depth of its chain: parents it is the last holder of are
/// dropped one by one.
impl Drop for Scope {
    fn drop(&mut self) {
        let forget = |scope: &Scope| {
            let bindings = scope.bindings.borrow();
            if bindings.is_empty() {
                return;
            }
            // The thread's storage may be gone when a scope is dropped
            // as the thread ends: then there is nothing to forget.
            let _ = BOUND.try_with(|bound| {
                let mut bound = bound.borrow_mut();
                for (id, _) in bindings.iter() {
                    if let Some(n) = bound.get_mut(&id.sym) {
                        *n -= 1;
                        if *n == 0 {
                            bound.remove(&id.sym);
                        }
                    }
                }
            });
        };
        forget(self);
        let mut parent = self.parent.take();
        while let Some(p) = parent {
            match Rc::try_unwrap(p) {
                Ok(mut scope) => {
                    forget(&scope);
                    scope.bindings.borrow_mut().clear();
                    parent = scope.parent.take();
                }
                Err(_) => break,
            }
        }
    }
}

/// What an identifier means at a point of the program.
#[derive(Clone)]
pub enum Meaning {
    Var(VarId),
    Macro(Rc<Macro>),
    /// Not lexically bound: a global variable, global macro or special form, by name.
    Global(Sym),
}

impl Meaning {
    pub fn same(&self, other: &Meaning) -> bool {
        match (self, other) {
            (Meaning::Var(a), Meaning::Var(b)) => a == b,
            (Meaning::Macro(a), Meaning::Macro(b)) => Rc::ptr_eq(a, b),
            (Meaning::Global(a), Meaning::Global(b)) => a == b,
            _ => false,
        }
    }
}

/// Resolves an identifier through the lexical scopes, following aliases back
/// to the scopes of the macros that introduced them.
pub fn resolve(id: &Ident, scope: &Option<Rc<Scope>>) -> Meaning {
    resolve_free(id, scope).unwrap_or_else(|free| Meaning::Global(free.sym))
}

/// An identifier no scope binds: its name (the one written where it was
/// first introduced), and whether that place is code `eval` compiles in
/// an environment (`Scope::in_environment`).
pub struct Free {
    pub sym: Sym,
    pub in_environment: bool,
}

/// [`resolve`], telling a name no scope binds apart.
pub fn resolve_free(id: &Ident, scope: &Option<Rc<Scope>>) -> Result<Meaning, Free> {
    let mut id = id.clone();
    let mut scope = scope.clone();
    loop {
        let mut s = if bound_anywhere(id.sym) {
            scope.clone()
        } else {
            None
        };
        while let Some(sc) = s {
            for (bid, b) in sc.bindings.borrow().iter().rev() {
                if bid.same(&id) {
                    return Ok(match b {
                        Binding::Var(v) => Meaning::Var(*v),
                        Binding::Macro(m) => Meaning::Macro(m.clone()),
                        Binding::Global(s) => Meaning::Global(*s),
                    });
                }
            }
            s = sc.parent.clone();
        }
        match id.alias.clone() {
            Some(a) => {
                id = a.orig.clone();
                scope = a.env.clone();
            }
            None => {
                return Err(Free {
                    sym: id.sym,
                    in_environment: scope.as_ref().is_some_and(|s| s.in_environment),
                })
            }
        }
    }
}
