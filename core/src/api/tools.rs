//! Host tools: procedures Scheme calls and the host answers.
//!
//! A host declares a tool (name, parameters, description); Scheme calls it
//! like any procedure. The call does not block inside the engine: the
//! evaluation *suspends*, [`Engine::start`] (or [`Engine::resume`]) returns
//! the pending calls with a number, and the host later resumes it with one
//! answer per call, a value or an error that Scheme sees raised at the
//! call. `par` branches waiting on tools suspend together, so one
//! suspension can hold several calls. docs/AGENTS.md is the guide.
//!
//! ```
//! use arbores_core::{Engine, Run, Tool, ToolAnswer};
//!
//! let mut engine = Engine::new();
//! engine
//!     .define_tool(Tool {
//!         name: "search".into(),
//!         params: vec!["query".into()],
//!         description: "Searches the web; returns a list of titles.".into(),
//!     })
//!     .unwrap();
//! let mut run = engine.start(r#"(map string-upcase (search "arbores"))"#);
//! let evaluation = loop {
//!     match run {
//!         Run::Done(evaluation) => break evaluation,
//!         Run::Suspended(s) => {
//!             assert_eq!(s.calls[0].tool, "search");
//!             assert_eq!(s.calls[0].args, [r#""arbores""#]);
//!             let answers = vec![ToolAnswer::Value(r#"("a" "b")"#.into())];
//!             run = engine.resume(s.id, answers).unwrap();
//!         }
//!     }
//! };
//! assert_eq!(evaluation.value.as_deref(), Some(r#"("A" "B")"#));
//! ```

use crate::api::{Engine, Evaluation};
use crate::vm::{Outcome, PendingCall};

pub use crate::vm::Answer as ToolAnswer;

/// A tool a host offers to Scheme code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tool {
    /// The procedure's name in Scheme: 1 to 128 of `A-Z a-z 0-9 _ . -`,
    /// starting with a letter (so it is also a valid MCP tool name).
    pub name: String,
    /// The names of its parameters, in order: the procedure takes exactly
    /// these arguments.
    pub params: Vec<String>,
    /// What it does, for the people and models who write the code.
    pub description: String,
}

/// One call an evaluation waits on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    /// The tool's name.
    pub tool: String,
    /// The arguments, in order, each in `write` form.
    pub args: Vec<String>,
}

/// An evaluation that waits on the host.
#[derive(Clone, Debug, PartialEq)]
pub struct Suspension {
    /// What to pass to [`Engine::resume`] or [`Engine::abandon`].
    pub id: u64,
    /// The calls to answer, in order: one call outside `par`; inside `par`,
    /// every waiting branch's calls in branch order.
    pub calls: Vec<ToolCall>,
    /// What the evaluation wrote to the current output port in this run
    /// slice and the host did not take as it was written (as
    /// [`crate::Evaluation::output`]).
    pub output: String,
}

/// Where a run slice ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Run {
    /// The evaluation finished (with a value or an error).
    Done(Evaluation),
    /// It waits on tool calls.
    Suspended(Suspension),
}

impl Engine {
    /// Defines (or redefines) a tool: a global procedure `name` taking
    /// `params` whose calls suspend the evaluation.
    pub fn define_tool(&mut self, tool: Tool) -> Result<(), String> {
        check_name("tool", &tool.name)?;
        for p in &tool.params {
            check_name(&format!("tool {}: parameter", tool.name), p)?;
        }
        let params = tool.params.join(" ");
        // Defined, and registered for plans (which call host tools only).
        let source = format!(
            "(define ({name} {params}) (%tool-call '{name} {params})) (%host-tool! '{name} {n})",
            name = tool.name,
            n = tool.params.len()
        );
        let outcome = self.vm.evaluate(&source, self.limits);
        if let Err(e) = outcome.value {
            return Err(format!("tool {}: {}", tool.name, e.message));
        }
        self.tools.retain(|t| t.name != tool.name);
        self.tools.push(tool);
        Ok(())
    }

    /// The tools defined so far, in order of definition.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Evaluates `source` like [`Engine::eval`], except that a tool call
    /// suspends the evaluation instead of raising an error. The limits
    /// apply to each run slice (from a start or resume to the next
    /// suspension or the end), and a limit undoes only its slice.
    pub fn start(&mut self, source: &str) -> Run {
        let outcome = self.vm.start(source, self.limits, true);
        self.run_of(outcome)
    }

    /// Continues suspended evaluation `id` with one answer per call, in
    /// the order of [`Suspension::calls`]. An unknown `id`, a wrong number
    /// of answers or an answer that is not one datum is refused, and the
    /// evaluation stays suspended.
    pub fn resume(&mut self, id: u64, answers: Vec<ToolAnswer>) -> Result<Run, String> {
        let outcome = self.vm.resume(id, answers, self.limits)?;
        Ok(self.run_of(outcome))
    }

    /// Forgets suspended evaluation `id` (what it did before it suspended
    /// stays done); whether there was one.
    /// Sets the most steps one evaluation may take across **all** its run
    /// slices, for evaluations started from now on (`None`, the default:
    /// only the per-slice limit of [`Engine::set_limits`] applies). Each
    /// slice then gets its step limit or what the budget has left, the
    /// smaller; when the budget runs out the slice ends with a
    /// `step-limit` error that says so, undone like any limit, and the
    /// evaluation is over. The budget and the steps taken so far belong to
    /// the evaluation: a later change of the setting leaves it as it is, and
    /// a dump carries them to the engine that loads it. [`Engine::eval`] is
    /// one slice, under the same budget.
    ///
    /// ```
    /// use arbores_core::{Engine, Run, Tool, ToolAnswer, ErrorKind};
    ///
    /// let mut engine = Engine::new();
    /// engine.define_tool(Tool { name: "ask".into(), params: vec![], description: String::new() }).unwrap();
    /// engine.set_evaluation_budget(Some(20_000));
    /// // Each slice spins 8,000 steps, then asks again: the third slice runs out.
    /// let mut run = engine.start("(let loop ((n 0)) (let spin ((i 0)) (if (< i 8000) (spin (+ i 1)))) (ask) (loop (+ n 1)))");
    /// let mut slices = 1;
    /// let evaluation = loop {
    ///     match run {
    ///         Run::Done(evaluation) => break evaluation,
    ///         Run::Suspended(s) => {
    ///             slices += 1;
    ///             run = engine.resume(s.id, vec![ToolAnswer::Value("#t".into())]).unwrap();
    ///         }
    ///     }
    /// };
    /// assert_eq!(slices, 3);
    /// assert_eq!(evaluation.error.unwrap().kind, ErrorKind::StepLimit);
    /// ```
    pub fn set_evaluation_budget(&mut self, max_steps: Option<u64>) {
        self.vm.set_evaluation_budget(max_steps);
    }

    /// The budget of [`Engine::set_evaluation_budget`].
    pub fn evaluation_budget(&self) -> Option<u64> {
        self.vm.evaluation_budget()
    }

    pub fn abandon(&mut self, id: u64) -> bool {
        self.vm.abandon(id)
    }

    /// The suspended evaluations, oldest first.
    pub fn suspended(&self) -> Vec<u64> {
        self.vm.parked_ids()
    }

    fn run_of(&mut self, outcome: Outcome) -> Run {
        if let Some(id) = outcome.suspended {
            let calls = self.vm.pending_calls(id).unwrap_or_default();
            return Run::Suspended(Suspension {
                id,
                calls: calls.into_iter().map(tool_call).collect(),
                output: outcome.output,
            });
        }
        Run::Done(Evaluation::of(outcome.value, outcome.output))
    }
}

/// The key dumps are hashed with until a host sets its own: the hash then
/// detects damage, not forgery.
pub(crate) const DEFAULT_DUMP_KEY: [u8; 32] = *b"arbores suspended evaluation 001";

impl Engine {
    /// The bytes of suspended evaluation `id` with the session it needs:
    /// every global the session defined or changed and everything they
    /// reach, its macros (a library's it imported too) and what its
    /// imports made names stand for (docs/AGENTS.md, "Suspensions as
    /// bytes"). The evaluation stays suspended here; the bytes can be
    /// loaded, any number of times, into any engine of the same build.
    /// Refused when the session holds what a dump cannot carry (a macro
    /// made by another macro or in a local scope, named in the error; a
    /// suspension inside a library body).
    pub fn dump(&self, id: u64) -> Result<Vec<u8>, String> {
        self.vm.dump_parked(id, &self.dump_key)
    }

    /// Loads bytes made by [`Engine::dump`]: the session's globals, macros
    /// and imported names are set from them and the evaluation is suspended here under a new number,
    /// waiting on the same calls. Bytes that are not a dump, of another
    /// format or build, damaged, or hashed with another key are refused
    /// with an error that says which, and nothing changes; so are bytes
    /// whose pending calls cannot be printed within this engine's limits
    /// (the calls are handed over as text). The loaded evaluation runs
    /// under this engine's limits (each resume is a run slice with the
    /// whole per-slice budget, as here); what is left of an evaluation
    /// budget (`set_evaluation_budget`) travels in the bytes.
    pub fn load_suspension(&mut self, bytes: &[u8]) -> Result<Suspension, String> {
        let id = self.vm.load_parked(bytes, &self.dump_key, self.limits)?;
        let calls = self.vm.pending_calls(id).unwrap_or_default();
        Ok(Suspension {
            id,
            calls: calls.into_iter().map(tool_call).collect(),
            output: String::new(),
        })
    }

    /// Sets the key of the hash that checks dumps. With a secret key shared
    /// only by the host's engines, bytes changed or made by anyone else are
    /// refused, so a dump can be kept where others can write.
    pub fn set_dump_key(&mut self, key: [u8; 32]) {
        self.dump_key = key;
    }
}

fn tool_call(c: PendingCall) -> ToolCall {
    ToolCall {
        tool: c.tool,
        args: c.args,
    }
}

/// A tool or parameter name: what Scheme reads as a plain symbol and MCP
/// accepts as a tool name.
fn check_name(what: &str, name: &str) -> Result<(), String> {
    let ok = (1..=128).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} name {name:?} is not 1 to 128 of A-Z a-z 0-9 _ . - starting with a letter"
        ))
    }
}
