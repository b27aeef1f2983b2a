//! An evaluation of source text from start to end, and the prelude.

use std::collections::VecDeque;
use std::rc::Rc;

use super::{ErrorKind, Limits, Vm, VmError};
use crate::code::Template;
use crate::compiler::CompileError;
use crate::printer;
use crate::reader;
use crate::syntax::scope::Scope;
use crate::syntax::Syn;
use crate::value::Value;

/// What an evaluation gives back: the value of its last form, or the error
/// that ended it, and the text written to the current output port either
/// way (output written before an error is kept).
pub struct Outcome {
    /// `Ok(None)` when the last form has no value to show (a definition,
    /// an unspecified value).
    pub value: Result<Option<String>, VmError>,
    pub output: String,
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
        for form in forms {
            let t = self.compile_form(&form, &None, true).map_err(|e| {
                format!(
                    "prelude does not compile: {} at {}:{}",
                    e.message, e.pos.line, e.pos.col
                )
            })?;
            self.run(t)
                .map_err(|e| format!("prelude does not run: {}", e.message))?;
        }
        let global = |vm: &mut Vm, name: &str| {
            let s = vm.syms.intern(name);
            vm.globals.lookup(s)
        };
        self.hooks.raise = global(self, "raise");
        self.hooks.invoke_continuation = global(self, "%invoke-continuation");
        self.hooks.run_thunks = global(self, "%arb:run-thunks");
        self.collect_garbage();
        Ok(())
    }

    /// Reads and evaluates every form of `source` in order, within
    /// `limits`. A limit that ends the evaluation undoes all of it:
    /// globals, global syntax and every older object it changed are put
    /// back. A transaction left open by an error or a limit is aborted.
    pub fn evaluate(&mut self, source: &str, limits: Limits) -> Outcome {
        self.reset_loading();
        self.out.clear();
        self.steps_left = limits.max_steps;
        self.heap.cap = limits.max_memory;
        let forms = match reader::read_all(source, &mut self.syms) {
            Ok(f) => f,
            Err(e) => {
                return Outcome {
                    value: Err(VmError {
                        kind: ErrorKind::Syntax,
                        message: e.message,
                        pos: Some(e.pos),
                        backtrace: vec![],
                    }),
                    output: String::new(),
                }
            }
        };
        let syntax_before = self.globals.syntax.clone();
        self.begin_evaluation();
        let result = self.run_forms(forms);
        // A transaction still open was left by an error or a limit: it
        // changes nothing.
        if let Some(k) = &mut self.knowledge {
            if k.depth() > 0 {
                k.abort_all();
                self.sync_knowledge();
            }
        }
        if result.as_ref().is_err_and(|e| e.kind.is_limit()) {
            self.rollback_evaluation();
            self.globals.syntax = syntax_before;
            self.forget_loaded();
            self.collect_garbage();
        } else {
            self.commit_evaluation();
        }
        let value = result.map(|last| match last {
            Value::Unspecified => None,
            v => Some(printer::write_string(&self.heap, &self.syms, v)),
        });
        // The heap after an evaluation holds only what globals reach; a
        // large evaluation should not leave its garbage behind until the
        // next one.
        if self.heap.wants_gc {
            self.collect_garbage();
        }
        Outcome {
            value,
            output: std::mem::take(&mut self.out),
        }
    }

    /// Compiles and runs each form after the previous one ran (a macro
    /// defined by one is used by the next); the value of the last.
    fn run_forms(&mut self, forms: Vec<Syn>) -> Result<Value, VmError> {
        let mut last = Value::Unspecified;
        // Each form with the environment it runs in (a library body runs in
        // the library's scope).
        let mut queue: VecDeque<(Syn, Option<Rc<Scope>>)> =
            forms.into_iter().map(|f| (f, None)).collect();
        while let Some((form, env)) = queue.pop_front() {
            if let Some((inner, inner_env)) =
                self.toplevel_begin(&form, &env).map_err(compile_error)?
            {
                for f in inner.into_iter().rev() {
                    queue.push_front((f, inner_env.clone()));
                }
                continue;
            }
            let t: Rc<Template> = self
                .compile_form(&form, &env, false)
                .map_err(compile_error)?;
            last = self.run(t)?;
        }
        Ok(last)
    }
}

fn compile_error(e: CompileError) -> VmError {
    VmError {
        kind: ErrorKind::Syntax,
        message: e.message,
        pos: Some(e.pos),
        backtrace: vec![],
    }
}
