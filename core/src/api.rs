//! The engine's public face: create an engine, set limits, evaluate text.

pub use crate::arb::Tier;
use crate::builtins::PrimTable;
use crate::compiler::code::Inline;
use crate::compiler::scope::{Scope, Special};
use crate::compiler::CompileError;
use crate::globals::{GlobalSyntax, Globals};
use crate::heap::Heap;
use crate::printer;
use crate::reader;
use crate::repo::forest::{Hash, ImportError, Snapshot, VersionForest};
use crate::repo::index::{Embedder, SemanticConfig};
use crate::repo::knowledge::Knowledge;
use crate::symbol::SymbolTable;
use crate::syntax::Syn;
use crate::value::Value;
use crate::vm::Vm;
use std::rc::Rc;

/// A line:column position in the evaluated source text (both 1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// What kind of failure ended an evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The source text could not be read (unbalanced parentheses, bad token, ...).
    Syntax,
    /// A Scheme error was raised and not handled (includes wrong types, unbound variables).
    Runtime,
    /// The step budget ran out.
    StepLimit,
    /// The memory cap was reached.
    MemoryLimit,
    /// The host asked the evaluation to stop.
    Interrupted,
}

impl ErrorKind {
    /// A short stable name, used across the wasm boundary and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "syntax-error",
            ErrorKind::Runtime => "runtime-error",
            ErrorKind::StepLimit => "step-limit",
            ErrorKind::MemoryLimit => "memory-limit",
            ErrorKind::Interrupted => "interrupted",
        }
    }

    pub fn from_name(name: &str) -> Option<ErrorKind> {
        Some(match name {
            "syntax-error" => ErrorKind::Syntax,
            "runtime-error" => ErrorKind::Runtime,
            "step-limit" => ErrorKind::StepLimit,
            "memory-limit" => ErrorKind::MemoryLimit,
            "interrupted" => ErrorKind::Interrupted,
            _ => return None,
        })
    }
}

/// An evaluation that did not complete.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError {
    pub kind: ErrorKind,
    /// What went wrong, e.g. `car: expected a pair, got ()`.
    pub message: String,
    /// Where in the evaluated text, when known.
    pub position: Option<Position>,
    /// Innermost first: `name (line:column)` of the Scheme procedures active at the error.
    pub backtrace: Vec<String>,
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.position {
            Some(p) => write!(f, "{}: {}", p, self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

/// The result of evaluating a source text: the value of its last form (in
/// `write` form), everything written to the current output port, and the error
/// that ended it, if any. Output written before an error is kept.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// `None` when the last form has no value to show (a definition, an
    /// unspecified value) or the evaluation failed.
    pub value: Option<String>,
    pub output: String,
    pub error: Option<EvalError>,
}

/// Per-evaluation limits. Every evaluation starts with the full budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Procedure calls allowed in one evaluation (one call = one step).
    pub max_steps: u64,
    /// Bytes the Scheme heap and stacks may occupy.
    pub max_memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: 1_000_000_000,
            max_memory: 512 << 20,
        }
    }
}

/// Asked every few thousand steps during an evaluation; returning `true` ends
/// the evaluation with [`ErrorKind::Interrupted`]. The core has no clock: a
/// host enforces a wall-clock timeout by answering from its own.
pub type InterruptCheck = Box<dyn FnMut() -> bool>;

/// An Arbores engine: one Scheme session with its global environment.
pub struct Engine {
    limits: Limits,
    vm: Vm,
}

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

const PRELUDE: &str = include_str!("prelude.scm");

impl Engine {
    pub fn new() -> Engine {
        let mut syms = SymbolTable::default();
        let mut globals = Globals::default();
        let prims = PrimTable::standard();
        for (i, p) in prims.prims.iter().enumerate() {
            let s = syms.intern(p.name);
            globals.define(s, Value::Prim(i as u32));
        }
        for (name, sp) in Special::ALL {
            let s = syms.intern(name);
            globals.syntax.insert(s, GlobalSyntax::Special(*sp));
        }
        let mut vm = Vm::new(Heap::new(), syms, globals, prims);
        vm.inline_prims = INLINE_ORDER
            .iter()
            .map(|(_, name)| vm.prims.id(name).unwrap_or(u32::MAX))
            .collect();
        vm.inline_globals = INLINE_ORDER
            .iter()
            .map(|(_, name)| {
                let s = vm.syms.intern(name);
                vm.globals.index(s)
            })
            .collect();
        vm.refresh_inline();
        let mut engine = Engine {
            limits: Limits::default(),
            vm,
        };
        engine.load_prelude();
        engine
    }

    fn load_prelude(&mut self) {
        let forms = match reader::read_all(PRELUDE, &mut self.vm.syms) {
            Ok(f) => f,
            Err(e) => panic!(
                "prelude does not read: {} at {}:{}",
                e.message, e.pos.line, e.pos.col
            ),
        };
        for form in forms {
            let t = match self.vm.compile_form(&form, &None, true) {
                Ok(t) => t,
                Err(e) => panic!(
                    "prelude does not compile: {} at {}:{}",
                    e.message, e.pos.line, e.pos.col
                ),
            };
            if let Err(e) = self.vm.run(t) {
                panic!("prelude does not run: {}", e.message);
            }
        }
        let raise = self.vm.syms.intern("raise");
        self.vm.raise_global = self.vm.globals.lookup(raise);
        let invoke = self.vm.syms.intern("%invoke-continuation");
        self.vm.invoke_k_global = self.vm.globals.lookup(invoke);
        let run = self.vm.syms.intern("%arb:run-thunks");
        self.vm.run_thunks_global = self.vm.globals.lookup(run);
        self.vm.collect_garbage();
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Installs (or removes) the check that lets a host stop a running
    /// evaluation: a timeout, a Stop button, Ctrl-C.
    pub fn set_interrupt_check(&mut self, check: Option<InterruptCheck>) {
        self.vm.interrupt = check;
    }

    /// Sets the clock `(scheme time)` reports, in seconds since the Unix
    /// epoch. The core has no clock of its own.
    pub fn set_clock(&mut self, seconds_since_epoch: f64) {
        self.vm.now = seconds_since_epoch;
    }

    /// The tier evaluations start in (what they may do with the knowledge
    /// base). The default is [`Tier::ReadWrite`]: an operator's own REPL or
    /// command line sets [`Tier::System`].
    pub fn set_tier(&mut self, tier: Tier) {
        self.vm.session_tier = tier;
    }

    #[allow(clippy::misnamed_getters)] // the tier evaluations start in
    pub fn tier(&self) -> Tier {
        self.vm.session_tier
    }

    /// The knowledge base (created, holding only the builtins, on first use).
    pub fn knowledge(&mut self) -> &mut Knowledge {
        self.vm.knowledge()
    }

    /// Replaces the semantic index's embedder with a host's model.
    pub fn set_embedder(&mut self, embedder: Box<dyn Embedder>, config: SemanticConfig) {
        self.vm.knowledge().set_embedder(embedder, config);
        self.vm.forget_loaded();
    }

    /// The whole state of the knowledge base as blobs and a refs record.
    /// Later `export_new` calls start from here.
    pub fn export_full(&mut self) -> Snapshot {
        self.vm.knowledge().forest.export_full()
    }

    /// What is new since the last export or import: the blobs of the
    /// versions committed since, and the refs record. A host stores the
    /// blobs, then the refs.
    pub fn export_new(&mut self) -> Snapshot {
        self.vm.knowledge().forest.export_new()
    }

    /// Whether anything was committed or switched since the last export or
    /// import (whether `export_new` has something to store). A knowledge
    /// base that holds only its initial version (the builtins) has nothing
    /// worth storing: a host need not create a store for it.
    pub fn has_unsaved_changes(&self) -> bool {
        match &self.vm.knowledge {
            Some(k) => k.forest.has_unsaved() && k.forest.reflog_len() > 1,
            None => false,
        }
    }

    /// Replaces the knowledge base with the one stored under `refs`, whose
    /// blobs `lookup` fetches by name. Everything is checked; on error
    /// nothing changes.
    pub fn import<F, B>(&mut self, refs: &[u8], lookup: F) -> Result<(), ImportError>
    where
        F: FnMut(&Hash) -> Option<B>,
        B: AsRef<[u8]>,
    {
        let forest = VersionForest::import(refs, lookup)?;
        self.install(forest);
        Ok(())
    }

    /// Replaces the knowledge base with the one in `snapshots` (a full
    /// export, then any later incremental ones). On error nothing changes.
    pub fn import_snapshots<'a, I>(&mut self, snapshots: I) -> Result<(), ImportError>
    where
        I: IntoIterator<Item = &'a Snapshot>,
    {
        let forest = VersionForest::import_snapshots(snapshots)?;
        self.install(forest);
        Ok(())
    }

    fn install(&mut self, forest: VersionForest) {
        self.vm.knowledge = Some(Knowledge::with_forest(forest));
        self.vm.forget_loaded();
    }

    /// Reads and evaluates every form of `source` in order.
    pub fn eval(&mut self, source: &str) -> Evaluation {
        self.vm.reset_loading();
        self.vm.out.clear();
        self.vm.steps_left = self.limits.max_steps;
        self.vm.heap.cap = self.limits.max_memory;
        let forms = match reader::read_all(source, &mut self.vm.syms) {
            Ok(f) => f,
            Err(e) => {
                return Evaluation {
                    value: None,
                    output: String::new(),
                    error: Some(EvalError {
                        kind: ErrorKind::Syntax,
                        message: e.message,
                        position: Some(Position {
                            line: e.pos.line,
                            column: e.pos.col,
                        }),
                        backtrace: vec![],
                    }),
                };
            }
        };
        let mut last = Value::Unspecified;
        let mut error = None;
        // A limit that ends the evaluation undoes all of it: globals, global
        // syntax and every older object it changed are put back.
        let syntax_before = self.vm.globals.syntax.clone();
        self.vm.begin_evaluation();
        // Each form with the environment it runs in (a library body runs in
        // the library's scope).
        let mut queue: std::collections::VecDeque<(Syn, Option<Rc<Scope>>)> =
            forms.into_iter().map(|f| (f, None)).collect();
        while let Some((form, env)) = queue.pop_front() {
            match self.vm.toplevel_begin(&form, &env) {
                Ok(Some((inner, inner_env))) => {
                    for f in inner.into_iter().rev() {
                        queue.push_front((f, inner_env.clone()));
                    }
                    continue;
                }
                Ok(None) => {}
                Err(e) => {
                    error = Some(compile_error(e));
                    break;
                }
            }
            let t = match self.vm.compile_form(&form, &env, false) {
                Ok(t) => t,
                Err(e) => {
                    error = Some(compile_error(e));
                    break;
                }
            };
            match self.vm.run(t) {
                Ok(v) => last = v,
                Err(e) => {
                    error = Some(EvalError {
                        kind: e.kind,
                        message: e.message,
                        position: e.pos.filter(|p| p.is_known()).map(|p| Position {
                            line: p.line,
                            column: p.col,
                        }),
                        backtrace: e.backtrace,
                    });
                    break;
                }
            }
        }
        let hit_limit = error.as_ref().is_some_and(|e: &EvalError| {
            matches!(
                e.kind,
                ErrorKind::StepLimit | ErrorKind::MemoryLimit | ErrorKind::Interrupted
            )
        });
        // A transaction still open was left by an error or a limit: it
        // changes nothing.
        if let Some(k) = &mut self.vm.knowledge {
            if k.depth() > 0 {
                k.abort_all();
                self.vm.sync_knowledge();
            }
        }
        if hit_limit {
            self.vm.rollback_evaluation();
            self.vm.globals.syntax = syntax_before;
            self.vm.forget_loaded();
            self.vm.collect_garbage();
        } else {
            self.vm.commit_evaluation();
        }
        let value = if error.is_some() || matches!(last, Value::Unspecified) {
            None
        } else {
            Some(printer::write_string(&self.vm.heap, &self.vm.syms, last))
        };
        // The heap after an evaluation holds only what globals reach; a large
        // evaluation should not leave its garbage behind until the next one.
        if self.vm.heap.wants_gc {
            self.vm.collect_garbage();
        }
        Evaluation {
            value,
            output: std::mem::take(&mut self.vm.out),
            error,
        }
    }
}

/// The primitives each `Inline` op stands for, in `Inline` discriminant order.
const INLINE_ORDER: &[(Inline, &str)] = &[
    (Inline::Add, "+"),
    (Inline::Sub, "-"),
    (Inline::Mul, "*"),
    (Inline::NumEq, "="),
    (Inline::Lt, "<"),
    (Inline::Gt, ">"),
    (Inline::Le, "<="),
    (Inline::Ge, ">="),
    (Inline::Car, "car"),
    (Inline::Cdr, "cdr"),
    (Inline::Cons, "cons"),
    (Inline::NullP, "null?"),
    (Inline::PairP, "pair?"),
    (Inline::Not, "not"),
    (Inline::EqP, "eq?"),
    (Inline::ZeroP, "zero?"),
    (Inline::VectorRef, "vector-ref"),
];

fn compile_error(e: CompileError) -> EvalError {
    EvalError {
        kind: ErrorKind::Syntax,
        message: e.message,
        position: if e.pos.is_known() {
            Some(Position {
                line: e.pos.line,
                column: e.pos.col,
            })
        } else {
            None
        },
        backtrace: vec![],
    }
}
