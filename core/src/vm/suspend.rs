//! Suspended evaluations: a call of `%suspend` ends the run slice and parks
//! the evaluation (the continuation of the call, the calls it waits on and
//! the top-level forms still to run) under a number the host resumes it by.
//!
//! Parking costs nothing special: the VM's stacks are already heap data, so
//! the continuation of the `%suspend` call is an ordinary continuation
//! object, and resuming is throwing the host's answers into it. A parked
//! evaluation can be resumed once; its continuation stays valid for a
//! dump (`snapshot`), which can be loaded and resumed any number of times.

use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use super::call::Next;
use super::{ErrorKind, PendingCall, Vm, VmError};
use crate::builtins::Fault;
use crate::syntax::scope::Scope;
use crate::syntax::Syn;
use crate::value::Value;

/// A top-level form still to run, with the environment it runs in (a
/// library's scope inside its body).
pub(crate) type QueuedForm = (Syn, Option<Rc<Scope>>);

/// An evaluation waiting for the host's answers.
pub(crate) struct Parked {
    /// The continuation of the `%suspend` call.
    pub k: Value,
    /// The calls it waits on: a list of `(tool-name arg ...)`.
    pub calls: Value,
    /// The same as the host is handed them, printed within the limits
    /// when the evaluation suspended (or its dump was loaded).
    pub printed: Vec<PendingCall>,
    /// The top-level forms after the one that suspended.
    pub queue: VecDeque<QueuedForm>,
    /// The evaluation's budget across its run slices, if it has one.
    pub budget: Option<EvaluationBudget>,
}

/// The steps an evaluation may take across all its run slices, and those
/// its slices so far took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EvaluationBudget {
    pub max: u64,
    pub used: u64,
}

impl EvaluationBudget {
    /// The steps a slice may take: the limit, or what the budget has left
    /// when that is less.
    pub fn slice_steps(&self, limit: u64) -> u64 {
        limit.min(self.max.saturating_sub(self.used))
    }
}

/// The parked evaluations of a VM, by number.
#[derive(Default)]
pub(crate) struct ParkingLot {
    pub parked: BTreeMap<u64, Parked>,
    next: u64,
    /// Set by `%suspend` while the run unwinds: the continuation, the
    /// calls and their text.
    pub request: Option<(Value, Value, Vec<PendingCall>)>,
    /// Whether the running evaluation may suspend (started by `start` or
    /// `resume`, not `evaluate`).
    pub allowed: bool,
}

impl ParkingLot {
    pub fn park(&mut self, p: Parked) -> u64 {
        self.next += 1;
        self.parked.insert(self.next, p);
        self.next
    }

    /// What the collector must keep alive.
    pub fn roots(&self) -> impl Iterator<Item = Value> + '_ {
        self.parked
            .values()
            .flat_map(|p| [p.k, p.calls])
            .chain(self.request.iter().flat_map(|(k, c, _)| [*k, *c]))
    }
}

/// The message of the error that carries a suspension out of the run loop;
/// never shown (the evaluation is parked instead).
const SUSPENDING: &str = "(suspending)";

impl Vm {
    /// `(%suspend CALLS)`: parks the evaluation when it may suspend, else
    /// raises an error the program can handle.
    pub(super) fn suspend(
        &mut self,
        callee_idx: usize,
        calls: Value,
        tail: bool,
    ) -> Result<Next, VmError> {
        let refuse = |why: &str| Fault::Error(format!("tool call: {why}"), vec![calls]);
        if !self.parking.allowed {
            let f = refuse("no host answers tool calls in this evaluation (a host runs code that calls tools with Engine::start, which can suspend)");
            return self.fail(callee_idx, f);
        }
        if self.knowledge.as_ref().is_some_and(|k| k.depth() > 0) {
            let f = refuse("a tool cannot be called inside arb:transaction (the transaction would stay open while the host works)");
            return self.fail(callee_idx, f);
        }
        if self.is_loading() {
            let f = refuse("a tool cannot be called while stored code is being loaded");
            return self.fail(callee_idx, f);
        }
        // The host is handed the calls as text (`pending_calls`), printed
        // now, while the limits hold: text that would outgrow them is
        // refused.
        let printed = match self.print_calls_within_limits(calls, true) {
            Ok(printed) => printed,
            Err(f) => return self.fail(callee_idx, f),
        };
        let k = self.capture(callee_idx, tail);
        self.stack.truncate(callee_idx);
        self.parking.request = Some((k, calls, printed));
        Err(VmError {
            kind: ErrorKind::Runtime,
            message: SUSPENDING.into(),
            pos: None,
            backtrace: vec![],
        })
    }

    /// Whether `e` is the error that carries a suspension out.
    pub(super) fn is_suspending(&self, e: &VmError) -> bool {
        self.parking.request.is_some() && e.message == SUSPENDING
    }

    /// Runs a parked continuation with `answers` to the end of its form.
    pub(super) fn resume_run(&mut self, k: Value, answers: Value) -> Result<Value, VmError> {
        self.stack.clear();
        self.frames.clear();
        self.throw(k, &[answers]);
        self.finish_run()
    }

    /// The calls `calls` names (a list of `(tool-name arg ...)`), as the
    /// host is handed them: each argument in `write` form. The work is
    /// charged to the evaluation's limits, and the text of all of them
    /// together is bounded by what the memory cap leaves
    /// (`Vm::text_room`), tried once more after a collection when
    /// `may_collect` (everything `calls` reaches is rooted).
    pub(super) fn print_calls_within_limits(
        &mut self,
        calls: Value,
        may_collect: bool,
    ) -> Result<Vec<PendingCall>, Fault> {
        let mut printed = Vec::new();
        let mut used = 0usize;
        for call in self.list_within_limits(calls)? {
            let mut items = self.list_within_limits(call)?.into_iter();
            let tool = match items.next() {
                Some(Value::Sym(s)) => self.syms.name(s).to_string(),
                Some(v) => self.write_within_room(v, used, may_collect)?,
                None => String::new(),
            };
            used += tool.len();
            let mut args = Vec::new();
            for a in items {
                let text = self.write_within_room(a, used, may_collect)?;
                used += text.len();
                args.push(text);
            }
            printed.push(PendingCall { tool, args });
        }
        Ok(printed)
    }

    /// The elements of list `l` (up to its end or its first repeated
    /// pair: a loaded dump may hold a circular list), walking it charged.
    fn list_within_limits(&mut self, l: Value) -> Result<Vec<Value>, Fault> {
        let mut items = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut at = l;
        while let (Some((a, d)), Value::Obj(r)) = (self.heap.pair(at), at) {
            if !seen.insert(r) {
                break;
            }
            if items.len() % crate::builtins::ELEMENT_CHUNK == 0 {
                let (_, _, mut budget) = self.reading_within_limits();
                let units = crate::builtins::ELEMENT_CHUNK as u64 * crate::builtins::ELEMENT_UNITS;
                budget.charge(units)?;
            }
            items.push(a);
            at = d;
        }
        Ok(items)
    }

    /// Forgets a parked evaluation; whether there was one.
    pub fn abandon(&mut self, id: u64) -> bool {
        self.parking.parked.remove(&id).is_some()
    }

    /// The numbers of the parked evaluations, oldest first.
    pub fn parked_ids(&self) -> Vec<u64> {
        self.parking.parked.keys().copied().collect()
    }
}
