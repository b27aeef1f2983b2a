//! Errors: raising them into Scheme, ending an evaluation with one, and
//! saying where it happened.

use std::rc::Rc;

use super::Vm;
use crate::builtins::Fault;
use crate::pos::Pos;
use crate::printer;
use crate::value::code::Template;
use crate::value::{ErrorObject, ErrorObjectKind, Object, Value};

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
    /// The program called `exit` (or `emergency-exit`): the evaluation
    /// ended there with its effects kept; the message is the exit status
    /// the program asked for, in decimal.
    Exit,
}

impl ErrorKind {
    /// Every kind with its short stable name, used across every boundary
    /// (WIT, JavaScript, error output) and in messages.
    pub const ALL: [(ErrorKind, &'static str); 6] = [
        (ErrorKind::Syntax, "syntax-error"),
        (ErrorKind::Runtime, "runtime-error"),
        (ErrorKind::StepLimit, "step-limit"),
        (ErrorKind::MemoryLimit, "memory-limit"),
        (ErrorKind::Interrupted, "interrupted"),
        (ErrorKind::Exit, "exit"),
    ];

    pub fn as_str(self) -> &'static str {
        ErrorKind::ALL[self as usize].1
    }

    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(k, _)| *k)
    }

    /// Whether a limit ended the evaluation (which then undid all of it),
    /// rather than an error in the program.
    pub fn is_limit(self) -> bool {
        matches!(
            self,
            ErrorKind::StepLimit | ErrorKind::MemoryLimit | ErrorKind::Interrupted
        )
    }
}

/// An evaluation that did not complete.
#[derive(Debug, Clone)]
pub struct VmError {
    pub kind: ErrorKind,
    pub message: String,
    pub pos: Option<Pos>,
    pub backtrace: Vec<String>,
}

impl Vm {
    pub(super) fn limit_error(&mut self, kind: ErrorKind, message: String) -> VmError {
        let (pos, backtrace) = self.where_();
        VmError {
            kind,
            message,
            pos,
            backtrace,
        }
    }

    /// The error that ends an evaluation that outgrew the memory cap.
    pub(super) fn memory_limit_error(&mut self) -> VmError {
        let cap = self.heap.cap;
        self.limit_error(
            ErrorKind::MemoryLimit,
            format!("memory limit exceeded: the evaluation needs more than {cap} bytes"),
        )
    }

    /// The position of the innermost user code and a short backtrace:
    /// innermost first, repeated frames (deep recursion) folded into one
    /// line with a count, at most `MAX_BACKTRACE` lines.
    pub(super) fn where_(&self) -> (Option<Pos>, Vec<String>) {
        const MAX_BACKTRACE: usize = 12;
        let mut pos = None;
        // (template, position, count) runs: equal frames fold into one.
        let mut runs: Vec<(Rc<Template>, Option<Pos>, usize)> = Vec::new();
        let mut visit = |t: &Rc<Template>, pc: usize| {
            if t.internal {
                return;
            }
            let p = t.position_at(pc);
            if pos.is_none() {
                pos = p;
            }
            match runs.last_mut() {
                Some((rt, lp, n)) if Rc::ptr_eq(rt, t) && *lp == p => *n += 1,
                _ => runs.push((t.clone(), p, 1)),
            }
        };
        visit(&self.tmpl, self.pc);
        for f in self.frames.iter().rev() {
            visit(&f.template, f.pc as usize);
        }
        let total = runs.len();
        let mut bt: Vec<String> = runs
            .into_iter()
            .take(MAX_BACKTRACE)
            .map(|(t, p, n)| {
                let name = match t.name {
                    Some(n) => self.syms.name(n).to_string(),
                    None if t.pos.is_known() => "anonymous procedure".to_string(),
                    None => "top level".to_string(),
                };
                let mut line = match p {
                    Some(p) if p.is_known() => format!("{name} ({}:{})", p.line, p.col),
                    _ => name,
                };
                if n > 1 {
                    line.push_str(&format!(" [{n} frames]"));
                }
                line
            })
            .collect();
        if total > MAX_BACKTRACE {
            bt.push(format!("... {} more", total - MAX_BACKTRACE));
        }
        (pos, bt)
    }

    // ---- errors raised by Scheme code ---------------------------------------

    pub(super) fn make_error_object(&mut self, message: String, irritants: Vec<Value>) -> Value {
        let m = self.heap.string(&message);
        let irr = self.heap.list(&irritants);
        self.heap.alloc(Object::Error(Box::new(ErrorObject {
            kind: ErrorObjectKind::Error,
            message: m,
            irritants: irr,
        })))
    }

    /// Turns a fault into a Scheme `raise`: calls the prelude's `raise` when a
    /// handler is installed, else ends the evaluation with the error.
    pub(super) fn raise_fault(&mut self, f: Fault) -> Result<(), VmError> {
        let obj = match f {
            Fault::Error(message, irritants) => self.make_error_object(message, irritants),
            Fault::Raise(v) => v,
            Fault::ReadError(message) => self.condition(ErrorObjectKind::Read, &message),
            Fault::FileError(message) => self.condition(ErrorObjectKind::File, &message),
            Fault::Exit(status) => {
                return Err(VmError {
                    kind: ErrorKind::Exit,
                    message: status.to_string(),
                    pos: None,
                    backtrace: vec![],
                })
            }
            Fault::OutOfMemory => return Err(self.memory_limit_error()),
            Fault::StepLimit => return Err(self.step_limit_error()),
            Fault::Interrupted => return Err(self.interrupted_error()),
        };
        if matches!(self.handlers, Value::Null) {
            return Err(self.uncaught(obj));
        }
        let Some(g) = self.hooks.raise else {
            return Err(self.uncaught(obj));
        };
        let raise = self.globals.values[g as usize];
        // Call raise as if the failing instruction had been a call to it.
        self.stack.push(raise);
        self.stack.push(obj);
        self.call(1, false)
    }

    /// A read or file error object with this message.
    fn condition(&mut self, kind: ErrorObjectKind, message: &str) -> Value {
        let m = self.heap.string(message);
        self.heap.alloc(Object::Error(Box::new(ErrorObject {
            kind,
            message: m,
            irritants: Value::Null,
        })))
    }

    pub(super) fn uncaught(&mut self, obj: Value) -> VmError {
        let mut message = printer::condition_text(&self.heap, &self.syms, obj);
        if message.trim().is_empty() {
            // (error "") says nothing: the message must say what happened.
            message = "an error was raised with an empty message".into();
        }
        let (pos, backtrace) = self.where_();
        VmError {
            kind: ErrorKind::Runtime,
            message,
            pos,
            backtrace,
        }
    }

    pub(super) fn not_procedure(&mut self, f: Value) -> Fault {
        let shown = printer::shown(&self.heap, &self.syms, f);
        Fault::Error(format!("not a procedure: {shown}"), vec![])
    }

    pub(super) fn proc_name(&self, t: &Template) -> String {
        match t.name {
            Some(n) => self.syms.name(n).to_string(),
            None => "anonymous procedure".into(),
        }
    }

    /// The error for reading (or `set!`ing) a global that has no value.
    pub(super) fn unbound(&self, g: u32, who: &str) -> Fault {
        let name = self.globals.names[g as usize];
        Fault::Error(
            format!(
                "{who}unbound variable: {}",
                crate::compiler::globals::program_name(self.syms.name(name))
            ),
            vec![],
        )
    }

    pub(super) fn used_before_defined(&mut self, k: u32) -> Fault {
        let name = match self.tmpl.consts.get(k as usize) {
            Some(Value::Sym(s)) => self.syms.name(*s).to_string(),
            _ => "variable".into(),
        };
        Fault::Error(
            format!("{name}: variable used before its definition"),
            vec![],
        )
    }
}

/// The errors of the engine's own procedures name the procedure the
/// program called: `(string-for-each 5 5)` fails in `string->list`, which
/// the prelude's `string-for-each` calls, and says `string-for-each:
/// expected a string, got 5`.
impl Vm {
    /// A primitive `callee` (None: an inline one) failed with `f` (not an
    /// error the engine's Scheme code raised itself, which names its
    /// procedure as it means to): when
    /// the engine's code called it on its own (not a procedure the
    /// program handed it, such as `map`'s first argument), the fault
    /// named after the engine's procedure the program called, if that one
    /// has a name of its own.
    pub(super) fn as_called(&mut self, f: Fault, callee: Option<Value>) -> Fault {
        let Some((name, base)) = self.engine_entry() else {
            return f;
        };
        if let Some(callee) = callee {
            // Handed in by the program: its own errors are its own.
            let top = self.stack.len();
            if self.stack[base.min(top)..top].iter().any(|v| v.eq(callee)) {
                return f;
            }
        }
        let name = self.syms.name(name).to_string();
        match f {
            Fault::Error(m, irritants) => Fault::Error(renamed(&m, &name), irritants),
            Fault::FileError(m) => Fault::FileError(renamed(&m, &name)),
            Fault::ReadError(m) => Fault::ReadError(renamed(&m, &name)),
            other => other,
        }
    }

    /// The engine's procedure the program called, when it is the code
    /// running: an activation of a procedure the prelude or a bundled
    /// library defines at its top level (not one of its `%` helpers, a
    /// local loop or a `lambda`), with where its frame starts on the
    /// stack. (When the procedure the program called has handed over to
    /// another of the engine's by a tail call, that one is running: its
    /// name is the one given.)
    fn engine_entry(&mut self) -> Option<(crate::symbol::Sym, usize)> {
        if !self.tmpl.internal {
            return None;
        }
        let name = self.tmpl.name?;
        let base = self.fp.saturating_sub(1);
        let text = self.syms.name(name).to_string();
        if text.starts_with('%') || text.contains('@') {
            return None;
        }
        // Defined at the engine's top level: the prelude's own cell, or
        // a bundled library's hidden global, holds a procedure.
        // Defined at the engine's top level: the prelude's own cell holds
        // a procedure, or a bundled library exports it (its helpers, such
        // as `locate` of (scheme hash-table), are no procedure a program
        // calls).
        let cell = self
            .syms
            .intern(&format!("{text}{}", crate::compiler::globals::ENGINE_CELL));
        if let Some(g) = self.globals.lookup(cell) {
            if !matches!(self.globals.values[g as usize], Value::Undefined) {
                return Some((name, base));
            }
        }
        for hidden in crate::compiler::front::bundled_hidden_names(&text) {
            let s = self.syms.intern(&hidden);
            let exported = self
                .globals
                .bundled_exports
                .values()
                .any(|pairs| pairs.iter().any(|(_, g)| *g == s));
            if exported {
                return Some((name, base));
            }
        }
        None
    }
}

impl Vm {
    /// A fault of primitive `callee` whose message names no procedure
    /// (`standard input: ...`) names it.
    pub(super) fn named_by_primitive(&self, f: Fault, callee: Value) -> Fault {
        let Value::Prim(id) = callee else { return f };
        let Some(prim) = self.prims.get(id) else {
            return f;
        };
        let name = |m: String| {
            if names_who(&m).is_some() {
                m
            } else {
                format!("{}: {m}", prim.name)
            }
        };
        match f {
            Fault::Error(m, irritants) => Fault::Error(name(m), irritants),
            Fault::FileError(m) => Fault::FileError(name(m)),
            other => other,
        }
    }

    /// The name of a global that holds `v` (a parameter object, a
    /// `case-lambda` or a `lambda` has no name of its own), for an error
    /// about it: a program's name, else the name an engine's global has
    /// in its library (`NAME@(LIBRARY)`).
    pub(super) fn global_name_of(&self, v: Value) -> Option<String> {
        let g = &self.globals;
        let mut engine = None;
        for (i, x) in g.values.iter().enumerate() {
            if !x.eq(v) {
                continue;
            }
            let Some(s) = g.names.get(i) else { continue };
            let name = self.syms.name(*s);
            if name.starts_with('%') {
                continue;
            }
            match name.split_once("@(") {
                None if !name.contains('@') => return Some(name.to_string()),
                Some((plain, _)) if engine.is_none() && !plain.is_empty() => {
                    engine = Some(plain.to_string())
                }
                _ => {}
            }
        }
        engine
    }
}

/// The procedure a message starts by naming (`car: expected ...`), if any.
fn names_who(message: &str) -> Option<&str> {
    let (who, _) = message.split_once(": ")?;
    (!who.is_empty() && !who.contains(char::is_whitespace)).then_some(who)
}

/// `message` naming `name` instead of the procedure it names, or with
/// `name` in front when it names none.
fn renamed(message: &str, name: &str) -> String {
    match names_who(message) {
        Some(who) if who == name => message.to_string(),
        Some(who) => format!("{name}{}", &message[who.len()..]),
        None => format!("{name}: {message}"),
    }
}
