//! An evaluation of source text from start to end, and the prelude.

use std::collections::VecDeque;
use std::rc::Rc;

use super::suspend::{EvaluationBudget, Parked, QueuedForm};
use super::{ErrorKind, Limits, Vm, VmError};
use crate::builtins::Fault;
use crate::compiler::CompileError;
use crate::datum;
use crate::json;
use crate::pos::Pos;
use crate::reader;
use crate::value::code::Template;
use crate::value::Value;

/// How an evaluation shows the value of its last form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueForm {
    /// As `write` prints it.
    Write,
    /// As JSON text, by the mapping of `json.rs`; a value with no JSON
    /// form is an error.
    Json,
}

/// What an evaluation gives back: the value of its last form, or the error
/// that ended it, and the text written to the current output port that the
/// host did not take as it was written (`Host::write_output`), either way
/// (output written before an error is kept).
pub struct Outcome {
    /// `Ok(None)` when the last form has no value to show (a definition,
    /// an unspecified value).
    pub value: Result<Option<String>, VmError>,
    pub output: String,
    /// The number the evaluation is parked under, when a tool call
    /// suspended it (the value is then `Ok(None)`).
    pub suspended: Option<u64>,
}

impl Vm {
    /// Reads and runs every form of the prelude. A prelude that fails is a
    /// defect of the engine itself: the error says which form.
    pub fn load_prelude(&mut self, text: &str) -> Result<(), String> {
        let forms = reader::read_all(text, &mut self.syms).map_err(|e| {
            format!(
                "prelude does not read: {} at {}:{}",
                e.message, e.pos.line, e.pos.col
            )
        })?;
        let mut templates = Vec::new();
        for form in forms {
            let where_ = form.pos();
            let form = form.without_positions();
            let t = self.compile_form(&form, &None, true).map_err(|e| {
                format!(
                    "prelude does not compile: {} in the form at {}:{}",
                    e.message, where_.line, where_.col
                )
            })?;
            templates.push(t.clone());
            self.run(t)
                .map_err(|e| format!("prelude does not run: {}", e.message))?;
        }
        self.make_cells_for_prelude_syntax();
        self.hooks = super::prepared::prelude_hooks(self);
        self.image = Some(Rc::new(super::image::PreludeImage::new(
            self, text, templates,
        )));
        self.collect_garbage();
        Ok(())
    }

    /// Makes the engine's own cell of every bound global the prelude's
    /// macros name, so that they are part of the prelude's image: a
    /// program using those macros then makes no global of its own that a
    /// dump or snapshot would carry.
    fn make_cells_for_prelude_syntax(&mut self) {
        use crate::symbol::Sym;
        use crate::syntax::Syn;
        fn names(s: &Syn, out: &mut Vec<Sym>) {
            match s {
                Syn::Sym(id, _) => out.push(id.sym),
                Syn::List(items, tail, _) => {
                    items.iter().for_each(|i| names(i, out));
                    if let Some(t) = tail {
                        names(t, out);
                    }
                }
                Syn::Vector(items, _) => items.iter().for_each(|i| names(i, out)),
                Syn::LabelDef(_, inner, _) => names(inner, out),
                Syn::Atom(..) | Syn::LabelRef(..) => {}
            }
        }
        let mut named = Vec::new();
        for entry in self.globals.syntax.values() {
            if let crate::compiler::globals::GlobalSyntax::Macro(m) = entry {
                for (_, template) in &m.rules {
                    names(template, &mut named);
                }
            }
        }
        named.sort();
        named.dedup();
        for s in named {
            let bound = self
                .globals
                .lookup(s)
                .is_some_and(|g| !matches!(self.globals.values[g as usize], Value::Undefined));
            if bound {
                self.globals.engine_cell(&mut self.syms, s);
            }
        }
    }

    /// Reads and evaluates every form of `source` in order, within
    /// `limits`. A limit that ends the evaluation undoes all of it:
    /// globals, global syntax and every older object it changed are put
    /// back. A transaction left open by an error or a limit is aborted.
    /// A tool call raises an error: nothing here can suspend.
    pub fn evaluate(&mut self, source: &str, limits: Limits) -> Outcome {
        self.start_as(source, limits, false, ValueForm::Write)
    }

    /// Like `evaluate`, the value shown in `form`.
    pub fn evaluate_as(&mut self, source: &str, limits: Limits, form: ValueForm) -> Outcome {
        self.start_as(source, limits, false, form)
    }

    /// Like `evaluate`; when `may_suspend`, a tool call parks the
    /// evaluation (`Outcome::suspended`) instead of raising an error.
    pub fn start(&mut self, source: &str, limits: Limits, may_suspend: bool) -> Outcome {
        self.start_as(source, limits, may_suspend, ValueForm::Write)
    }

    fn start_as(
        &mut self,
        source: &str,
        limits: Limits,
        may_suspend: bool,
        form: ValueForm,
    ) -> Outcome {
        self.heap.cap = limits.max_memory;
        let heap = &self.heap;
        let room = |n: usize| heap.check_room(n).is_ok();
        let forms = match reader::read_all_within(source, &mut self.syms, &room) {
            Ok(f) => f,
            Err(e) => {
                return Outcome {
                    value: Err(syntax_error(e.message, e.pos, e.out_of_memory)),
                    output: String::new(),
                    suspended: None,
                }
            }
        };
        let queue = forms.into_iter().map(|f| (f, None)).collect();
        let budget = self
            .evaluation_budget
            .map(|max| EvaluationBudget { max, used: 0 });
        self.slice(queue, None, limits, budget, may_suspend, form)
    }

    /// Continues parked evaluation `id` with the host's answers to its
    /// calls, in order: a value, or the message of an error raised at the
    /// call. The answers are checked before anything runs; on error the
    /// evaluation stays parked.
    pub fn resume(
        &mut self,
        id: u64,
        answers: Vec<Answer>,
        limits: Limits,
    ) -> Result<Outcome, String> {
        let Some(calls) = self.pending_calls(id) else {
            return Err(format!(
                "no suspended evaluation {id} (finished, abandoned or never made)"
            ));
        };
        let expected = calls.len();
        if answers.len() != expected {
            return Err(format!(
                "suspended evaluation {id} waits on {expected} tool call(s), got {} answer(s)",
                answers.len()
            ));
        }
        let mut items = Vec::with_capacity(answers.len());
        for (i, a) in answers.into_iter().enumerate() {
            let item = match a {
                Answer::Value(text) => {
                    let v = self
                        .read_datum(&text)
                        .map_err(|e| format!("answer {}: {e}", i + 1))?;
                    (Value::Bool(true), v)
                }
                Answer::Error(message) => {
                    let who = self.heap.string(&calls[i].tool);
                    (
                        Value::Bool(false),
                        self.make_error_object(message, vec![who]),
                    )
                }
            };
            items.push(item);
        }
        let parked = (self.parking.parked.remove(&id))
            .expect("`pending_calls` found it parked, and checking the answers unparks nothing");
        let pairs: Vec<Value> = items
            .into_iter()
            .map(|(ok, v)| self.heap.cons(ok, v))
            .collect();
        let answers = self.heap.list(&pairs);
        Ok(self.slice(
            parked.queue,
            Some((parked.k, answers)),
            limits,
            parked.budget,
            true,
            ValueForm::Write,
        ))
    }

    /// One run slice: the parked continuation `resume` with its answers (if
    /// any), then the forms of `queue`, within `limits` and what `budget`
    /// (the evaluation's across its slices) has left.
    fn slice(
        &mut self,
        mut queue: VecDeque<QueuedForm>,
        resume: Option<(Value, Value)>,
        limits: Limits,
        budget: Option<EvaluationBudget>,
        may_suspend: bool,
        form: ValueForm,
    ) -> Outcome {
        self.reset_loading();
        self.out.start();
        let steps = budget.map_or(limits.max_steps, |b| b.slice_steps(limits.max_steps));
        self.steps_left = steps;
        // Work a primitive charged in an earlier evaluation and not yet
        // counted as steps is not this one's.
        self.work_unpolled = 0;
        self.heap.cap = limits.max_memory;
        self.parking.allowed = may_suspend;
        // A slice starts outside any `par` (one that suspended waits at
        // the top level).
        if let Some(g) = self.hooks.par_escape {
            self.globals.values[g as usize] = Value::Bool(false);
        }
        let syntax_before = self.globals.syntax.clone();
        self.begin_evaluation();
        let mut result = match resume {
            Some((k, answers)) => self.resume_run(k, answers),
            None => Ok(Value::Unspecified),
        };
        if result.is_ok() {
            result = self.run_forms(&mut queue, result.unwrap_or(Value::Unspecified));
        }
        // The value is printed while the limits still hold: a structure
        // that shares its parts can stand for text as long as any
        // computation, and a limit hit here ends the evaluation like any.
        let mut printed = None;
        if let Ok(v) = result {
            match self.print_value(v, form) {
                Ok(text) => printed = text,
                Err(e) => result = Err(e),
            }
        }
        self.parking.allowed = false;
        let budget = budget.map(|b| EvaluationBudget {
            max: b.max,
            used: b.used.saturating_add(steps - self.steps_left.min(steps)),
        });
        let mut suspended = None;
        if let Err(e) = &mut result {
            if self.is_suspending(e) {
                let (k, calls, printed) =
                    (self.parking.request.take()).expect("`is_suspending` saw the request");
                suspended = Some(self.parking.park(Parked {
                    k,
                    calls,
                    printed,
                    queue,
                    budget,
                }));
                result = Ok(Value::Unspecified);
            } else if e.kind == ErrorKind::StepLimit && steps < limits.max_steps {
                // The evaluation's budget, not the slice's limit, ran out.
                let max = budget.map_or(0, |b| b.max);
                e.message = format!(
                    "step limit exceeded: the evaluation ran out of its budget of {max} steps across its run slices"
                );
            }
        }
        // A transaction still open was left by an error or a limit: it
        // changes nothing.
        if let Some(k) = &mut self.knowledge {
            if k.depth() > 0 {
                k.abort_all();
                self.sync_knowledge();
            }
        }
        // What file ports hold is written out, whatever ended the
        // evaluation: the program wrote it.
        if let Err(message) = self.flush_files() {
            if result.is_ok() {
                result = Err(VmError {
                    kind: ErrorKind::Runtime,
                    message,
                    pos: None,
                    backtrace: vec![],
                });
            }
        }
        if result.as_ref().is_err_and(|e| e.kind.is_limit()) {
            self.rollback_evaluation();
            self.globals.syntax = syntax_before;
            self.forget_loaded();
            // Not when the host says stop (an interrupt): the next
            // evaluation collects when it needs to.
            self.collect_or_stop();
        } else {
            self.commit_evaluation();
        }
        let value = result.map(|_| printed);
        // The heap after an evaluation holds only what globals reach; a
        // large evaluation should not leave its garbage behind until the
        // next one.
        if self.heap.wants_gc {
            self.collect_or_stop();
        }
        self.out.flush(self.host.get());
        Outcome {
            value,
            output: self.out.take(),
            suspended,
        }
    }

    /// Writes the pending text of every open file output port; the first
    /// failure, after trying them all.
    /// The text of an evaluation's value in the form asked for (none for
    /// an unspecified value), its work charged to the evaluation's limits
    /// and its length bounded by the memory cap.
    fn print_value(&mut self, v: Value, form: ValueForm) -> Result<Option<String>, VmError> {
        if matches!(v, Value::Unspecified) {
            return Ok(None);
        }
        let printed = match form {
            ValueForm::Write => self.write_within_limits(v).map_err(Ok),
            ValueForm::Json => {
                let (heap, syms, mut budget) = self.reading_within_limits();
                match json::to_json_within(heap, syms, v, &mut budget) {
                    Ok(text) if text.len() > self.text_room() => {
                        // What is held may be garbage.
                        if !self.collect_or_stop() {
                            Err(Ok(Fault::Interrupted))
                        } else if text.len() > self.text_room() {
                            Err(Ok(Fault::OutOfMemory))
                        } else {
                            Ok(text)
                        }
                    }
                    Ok(text) => Ok(text),
                    Err(json::Stopped::Work(fault)) => Err(Ok(fault)),
                    Err(json::Stopped::Refused(e)) => Err(Err(e)),
                }
            }
        };
        match printed {
            Ok(text) => Ok(Some(text)),
            Err(Ok(Fault::OutOfMemory)) => Err(self.memory_limit_error()),
            Err(Ok(Fault::Interrupted)) => Err(self.interrupted_error()),
            Err(Ok(_)) => Err(self.step_limit_error()),
            Err(Err(e)) => Err(VmError {
                kind: ErrorKind::Runtime,
                message: format!("the value {e}"),
                pos: None,
                backtrace: vec![],
            }),
        }
    }

    fn flush_files(&mut self) -> Result<(), String> {
        let mut first = Ok(());
        for port in self.file_outputs.clone() {
            let done = crate::builtins::flush_file(&mut self.heap, self.host.get(), port);
            if first.is_ok() {
                first = done;
            }
        }
        first
    }

    /// Compiles and runs each form after the previous one ran (a macro
    /// defined by one is used by the next); the value of the last, or
    /// `last` when there is none. On error `queue` holds the forms not
    /// yet started.
    fn run_forms(
        &mut self,
        queue: &mut VecDeque<QueuedForm>,
        mut last: Value,
    ) -> Result<Value, VmError> {
        while let Some((form, env)) = queue.pop_front() {
            if let Some(inner) = self.toplevel_begin(&form, &env).map_err(compile_error)? {
                for f in inner.into_iter().rev() {
                    queue.push_front(f);
                }
                continue;
            }
            // A bundled library's code is the engine's own (see `Scope`).
            let internal = env.as_ref().is_some_and(|s| s.internal);
            let t: Rc<Template> = self
                .compile_form(&form, &env, internal)
                .map_err(compile_error)?;
            last = self.run(t)?;
        }
        Ok(last)
    }

    /// One datum from text (a host's answer), as a value.
    fn read_datum(&mut self, text: &str) -> Result<Value, String> {
        let forms = reader::read_all(text, &mut self.syms)
            .map_err(|e| format!("{}:{}: {}", e.pos.line, e.pos.col, e.message))?;
        match forms.as_slice() {
            [one] => datum::to_value(&mut self.heap, one).map_err(|e| e.message),
            _ => Err(format!(
                "expected one datum, got {} in {text:?}",
                forms.len()
            )),
        }
    }

    /// The calls parked evaluation `id` waits on, in order, as printed
    /// when it suspended.
    pub fn pending_calls(&self, id: u64) -> Option<Vec<PendingCall>> {
        Some(self.parking.parked.get(&id)?.printed.clone())
    }
}

/// A host's answer to one tool call.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The call's value, as the text of one datum.
    Value(String),
    /// The call failed: raised at the call as an error object with this
    /// message and the tool's name as its irritant.
    Error(String),
}

/// A tool call an evaluation waits on: the tool's name and the arguments
/// in `write` form.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingCall {
    pub tool: String,
    pub args: Vec<String>,
}

fn compile_error(e: CompileError) -> VmError {
    syntax_error(e.message, e.pos, e.out_of_memory)
}

/// Source that cannot be read or compiled: a syntax error, or the memory
/// limit when reading or compiling it ran out of room.
fn syntax_error(message: String, pos: Pos, out_of_memory: bool) -> VmError {
    VmError {
        kind: if out_of_memory {
            ErrorKind::MemoryLimit
        } else {
            ErrorKind::Syntax
        },
        message,
        pos: Some(pos),
        backtrace: vec![],
    }
}
