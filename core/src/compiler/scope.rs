//! Compile-time scopes and hygienic identifier resolution.
//!
//! A `syntax-rules` expansion renames every symbol its template introduces to
//! a fresh [`Alias`] that remembers the scope the macro was defined in. An
//! alias bound by a binding form inside the expansion is a new variable seen
//! only by that same alias (hygiene: the `swap!`/`tmp` case). An alias that is
//! free where it lands is looked up in the macro's own scope (referential
//! transparency: a locally rebound `if` or `else` does not change what the
//! macro means).

use std::cell::RefCell;
use std::rc::Rc;

use crate::symbol::Sym;
use crate::syntax::{Ident, Syn};

pub type VarId = u32;

/// A renamed identifier introduced by a macro expansion.
pub struct Alias {
    pub orig: Ident,
    /// The scope of the macro definition; `None` is the global scope.
    pub env: Option<Rc<Scope>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    Quote,
    Quasiquote,
    Unquote,
    UnquoteSplicing,
    Lambda,
    Define,
    Set,
    If,
    Begin,
    Let,
    LetStar,
    Letrec,
    LetrecStar,
    Cond,
    Case,
    And,
    Or,
    When,
    Unless,
    Do,
    DefineSyntax,
    LetSyntax,
    LetrecSyntax,
    SyntaxRules,
    CaseLambda,
    DefineRecordType,
    Delay,
    DelayForce,
    MakePromiseLazy,
    Parameterize,
    Guard,
    LetValues,
    LetStarValues,
    DefineValues,
    Include,
    CondExpand,
    Import,
    DefineLibrary,
    SyntaxError,
    ArbRef,
}

impl Special {
    pub const ALL: &'static [(&'static str, Special)] = &[
        ("quote", Special::Quote),
        ("quasiquote", Special::Quasiquote),
        ("unquote", Special::Unquote),
        ("unquote-splicing", Special::UnquoteSplicing),
        ("lambda", Special::Lambda),
        ("define", Special::Define),
        ("set!", Special::Set),
        ("if", Special::If),
        ("begin", Special::Begin),
        ("let", Special::Let),
        ("let*", Special::LetStar),
        ("letrec", Special::Letrec),
        ("letrec*", Special::LetrecStar),
        ("cond", Special::Cond),
        ("case", Special::Case),
        ("and", Special::And),
        ("or", Special::Or),
        ("when", Special::When),
        ("unless", Special::Unless),
        ("do", Special::Do),
        ("define-syntax", Special::DefineSyntax),
        ("let-syntax", Special::LetSyntax),
        ("letrec-syntax", Special::LetrecSyntax),
        ("syntax-rules", Special::SyntaxRules),
        ("case-lambda", Special::CaseLambda),
        ("define-record-type", Special::DefineRecordType),
        ("delay", Special::Delay),
        ("delay-force", Special::DelayForce),
        ("make-promise-lazy", Special::MakePromiseLazy),
        ("parameterize", Special::Parameterize),
        ("guard", Special::Guard),
        ("let-values", Special::LetValues),
        ("let*-values", Special::LetStarValues),
        ("define-values", Special::DefineValues),
        ("include", Special::Include),
        ("include-ci", Special::Include),
        ("cond-expand", Special::CondExpand),
        ("import", Special::Import),
        ("define-library", Special::DefineLibrary),
        ("syntax-error", Special::SyntaxError),
        ("arb:ref", Special::ArbRef),
    ];
}

/// A `syntax-rules` transformer.
pub struct Macro {
    pub name: Sym,
    pub literals: Vec<Ident>,
    pub ellipsis: Ident,
    pub rules: Vec<(Syn, Syn)>,
    pub env: Option<Rc<Scope>>,
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
}

impl Scope {
    pub fn new(parent: Option<Rc<Scope>>) -> Rc<Scope> {
        Rc::new(Scope {
            bindings: RefCell::new(Vec::new()),
            parent,
        })
    }

    pub fn bind(&self, id: Ident, b: Binding) {
        self.bindings.borrow_mut().push((id, b));
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
    let mut id = id.clone();
    let mut scope = scope.clone();
    loop {
        let mut s = scope.clone();
        while let Some(sc) = s {
            for (bid, b) in sc.bindings.borrow().iter().rev() {
                if bid.same(&id) {
                    return match b {
                        Binding::Var(v) => Meaning::Var(*v),
                        Binding::Macro(m) => Meaning::Macro(m.clone()),
                        Binding::Global(s) => Meaning::Global(*s),
                    };
                }
            }
            s = sc.parent.clone();
        }
        match id.alias.clone() {
            Some(a) => {
                id = a.orig.clone();
                scope = a.env.clone();
            }
            None => return Meaning::Global(id.sym),
        }
    }
}
