//! What bounds an evaluation: the step budget, the memory cap and the
//! host's interrupt check, polled at safe points, where the collector may
//! also run.

use std::rc::Rc;

use super::{ErrorKind, Vm, VmError};
use crate::builtins::{Budget, Fault};
use crate::heap::growth_cost;
use crate::heap::Heap;
use crate::printer;
use crate::symbol::SymbolTable;
use crate::value::code::{Frame, Template};
use crate::value::Value;

/// Bytes of an evaluation's text always allowed, whatever is held (see
/// `Vm::text_room`).
const TEXT_ROOM_FLOOR: usize = 1 << 20;

/// How often (in steps) the VM polls the interrupt check and memory use.
const POLL_INTERVAL: u64 = 4096;

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

impl Vm {
    /// One step of the budget per call; polls every `POLL_INTERVAL` steps
    /// and whenever the heap asks for a collection.
    #[inline(always)]
    pub(super) fn count_step(&mut self) -> Result<(), VmError> {
        if self.steps_left != 0 && self.since_poll + 1 < POLL_INTERVAL && !self.heap.wants_gc {
            self.steps_left -= 1;
            self.since_poll += 1;
            return Ok(());
        }
        self.count_step_and_poll()
    }

    /// `count_step` when the budget is spent or a poll is due.
    #[inline(never)]
    fn count_step_and_poll(&mut self) -> Result<(), VmError> {
        if self.steps_left == 0 {
            return Err(self.step_limit_error());
        }
        self.steps_left -= 1;
        self.since_poll += 1;
        if self.since_poll >= POLL_INTERVAL || self.heap.wants_gc {
            self.since_poll = 0;
            self.poll()?;
        }
        Ok(())
    }

    pub(super) fn step_limit_error(&mut self) -> VmError {
        self.limit_error(
            ErrorKind::StepLimit,
            "step limit exceeded: the evaluation ran out of its step budget".into(),
        )
    }

    pub(super) fn interrupted_error(&mut self) -> VmError {
        self.limit_error(ErrorKind::Interrupted, "evaluation interrupted".into())
    }

    /// The evaluation's limits as the VM's own arithmetic sees them (its
    /// scratch is bounded by its operands: the memory is checked at the
    /// VM's next poll).
    pub(super) fn budget(&mut self) -> Budget<'_> {
        Budget {
            steps_left: &mut self.steps_left,
            unpolled: &mut self.work_unpolled,
            host: self.host.get(),
            memory: None,
        }
    }

    /// The heap and symbols to read beside the evaluation's full limits
    /// (the memory meter included), for work done outside a primitive:
    /// printing the value, the calls handed to the host.
    pub(super) fn reading_within_limits(&mut self) -> (&Heap, &SymbolTable, Budget<'_>) {
        let memory = self.budget_memory();
        let budget = Budget {
            steps_left: &mut self.steps_left,
            unpolled: &mut self.work_unpolled,
            host: self.host.get(),
            memory,
        };
        (&self.heap, &self.syms, budget)
    }

    /// Bytes of text the evaluation may still make to hand to the host,
    /// which holds a copy of it beside the engine's: half what the cap
    /// leaves, and at least a mebibyte (the fixed overhead covers that).
    pub(super) fn text_room(&self) -> usize {
        (self.heap.cap.saturating_sub(self.held()) / 2).max(TEXT_ROOM_FLOOR)
    }

    /// `v` as `write` shows it, its work charged to the limits; too long
    /// for the memory left is `Fault::OutOfMemory`. What is held may be
    /// garbage: a text that does not fit is tried once more after a
    /// collection, if that leaves more room.
    pub(super) fn write_within_limits(&mut self, v: Value) -> Result<String, Fault> {
        self.write_within_room(v, 0, true)
    }

    /// [`Vm::write_within_limits`] beside `used` bytes of text already
    /// made for the host; without `may_collect` (values not yet rooted) a
    /// text that does not fit is not tried again.
    pub(super) fn write_within_room(
        &mut self,
        v: Value,
        used: usize,
        may_collect: bool,
    ) -> Result<String, Fault> {
        let mut room = self.text_room().saturating_sub(used);
        loop {
            let (heap, syms, mut budget) = self.reading_within_limits();
            let text =
                printer::to_string_capped(heap, syms, v, printer::Mode::Write, room, &mut budget)?;
            if let Some(text) = text {
                return Ok(text);
            }
            if !may_collect {
                return Err(Fault::OutOfMemory);
            }
            if !self.collect_or_stop() {
                return Err(Fault::Interrupted);
            }
            let more = self.text_room().saturating_sub(used);
            if more <= room {
                return Err(Fault::OutOfMemory);
            }
            room = more;
        }
    }

    /// What a primitive's `Budget` checks the embedder's meter against.
    pub(super) fn budget_memory(&self) -> Option<(crate::heap::MemoryMeter, usize)> {
        let room = self.heap.cap.saturating_sub(2 * self.out.capacity());
        self.heap.meter().map(|m| (m, room))
    }

    /// Periodic checks: interrupt, memory; the output written since the
    /// last poll goes to the host. Called at safe points only.
    pub(super) fn poll(&mut self) -> Result<(), VmError> {
        self.out.flush(self.host.get());
        if self.host.get().should_stop() {
            return Err(self.interrupted_error());
        }
        self.check_memory()
    }

    pub(super) fn check_memory(&mut self) -> Result<(), VmError> {
        if self.heap.wants_gc || self.held() > self.heap.cap {
            if !self.collect_or_stop() {
                return Err(self.interrupted_error());
            }
            if self.held() > self.heap.cap {
                return Err(self.memory_limit_error());
            }
        }
        self.grow_ahead()
    }

    /// The vectors that grow by doubling (the stack, the frames) are grown
    /// here, at a safe point, before they are full, and
    /// only when their new buffers fit under the cap beside everything
    /// held: while a vector is copied its old and new buffers both exist,
    /// and a wasm instance's memory keeps that high-water mark, so growing
    /// unchecked a vector of a third of the cap would take the instance to
    /// the cap and beyond. Where the embedder counts the memory's
    /// footprint, the new buffers must also fit within the cap beside the
    /// holes the old ones left (`Heap::footprint_allows`). (The heap's slots grow a chunk at a time and
    /// are never copied.)
    fn grow_ahead(&mut self) -> Result<(), VmError> {
        let growth = |vm: &Vm| growth(&vm.stack) + growth(&vm.frames);
        if growth(self) == 0 {
            return Ok(());
        }
        let fits = |vm: &Vm| {
            let g = growth(vm);
            vm.held() + g <= vm.heap.cap && vm.heap.footprint_allows(g)
        };
        if !fits(self) {
            // What is held may be garbage.
            if !self.collect_or_stop() {
                return Err(self.interrupted_error());
            }
            if !fits(self) {
                return Err(self.memory_limit_error());
            }
        }
        grow(&mut self.stack);
        grow(&mut self.frames);
        Ok(())
    }

    /// What counts against the cap: what the allocator holds (the heap,
    /// the stacks, the output, everything) when the embedder gave a meter,
    /// else the heap's estimate and the stacks; either way twice more the
    /// output buffer: the host copies what it is handed, and while the
    /// buffer grows its old and new buffers both exist (a wasm instance's
    /// memory keeps that high-water mark). A host that takes the output as
    /// it is written keeps the buffer at about `output::CHUNK`.
    pub(super) fn held(&self) -> usize {
        let output = 2 * self.out.capacity();
        match self.heap.metered() {
            Some(bytes) => bytes + output,
            None => self.heap.bytes + self.stack_bytes() + output,
        }
    }

    pub(super) fn stack_bytes(&self) -> usize {
        self.stack.capacity() * std::mem::size_of::<Value>()
            + self.frames.capacity() * std::mem::size_of::<Frame>()
    }

    /// Collects from every root: registers, stacks, frames, globals and
    /// the values saved for a rollback; the whole collection, whatever
    /// the host says.
    pub fn collect_garbage(&mut self) {
        self.collect(false);
    }

    /// Collects, asking the host's interrupt check as it marks (a
    /// collection of a large heap takes longer than the interrupt may
    /// wait): `false` when the host said stop and nothing was collected.
    pub(super) fn collect_or_stop(&mut self) -> bool {
        self.collect(true)
    }

    fn collect(&mut self, may_stop: bool) -> bool {
        let mut roots: Vec<Value> = Vec::with_capacity(self.frames.len() + 8);
        let mut templates: Vec<&Rc<Template>> = vec![&self.tmpl];
        roots.push(self.acc);
        roots.push(self.closure);
        roots.push(self.winders);
        roots.push(self.handlers);
        roots.extend(self.saved_globals.iter().map(|(_, v)| *v));
        roots.extend(self.parking.roots());
        roots.extend(self.file_outputs.iter().copied());
        if let Some(image) = &self.image {
            roots.extend(image.values.iter().copied());
            templates.extend(image.templates.iter());
        }
        for f in &self.frames {
            roots.push(f.closure);
        }
        for f in &self.frames {
            templates.push(&f.template);
        }
        let roots = roots
            .into_iter()
            .chain(self.stack.iter().copied())
            .chain(self.globals.values.iter().copied());
        let host = self.host.get();
        let mut stop = || may_stop && host.should_stop();
        self.heap.collect(roots, templates.into_iter(), &mut stop)
    }
}

/// The vector's room left below which it is grown ahead.
fn nearly_full<T>(v: &Vec<T>) -> bool {
    v.capacity() - v.len() < v.capacity() / 8 + 1024
}

/// What doubling `v` would cost beyond what is held when it is nearly
/// full, else 0.
fn growth<T>(v: &Vec<T>) -> usize {
    if nearly_full(v) {
        let size = std::mem::size_of::<T>();
        growth_cost(
            v.capacity() * size,
            (v.capacity() + v.capacity().max(1024)) * size,
        )
    } else {
        0
    }
}

/// Doubles `v`'s room when it is nearly full.
fn grow<T>(v: &mut Vec<T>) {
    if nearly_full(v) {
        v.reserve_exact(v.capacity().max(1024));
    }
}
