//! The virtual machine: runs templates with heap-allocated frames.
//!
//! Nothing here recurses on the Rust stack: a Scheme call pushes a
//! [`Frame`] onto `frames` and values onto `stack`, so deep non-tail
//! recursion is bounded only by the memory cap, and `call/cc` is a copy of
//! those two vectors. Every evaluation runs under a step budget (one step
//! per procedure call), a memory cap and the host's interrupt check, and
//! stops cleanly on each.
//!
//! - `eval`: an evaluation of source text from start to end (read, compile
//!   and run each form; undo it all when a limit ends it), and the prelude.
//! - `dispatch`: the instruction loop and the inline primitives.
//! - `call`: procedure calls and returns, primitives of every kind.
//! - `control`: the control primitives (`apply`, `call/cc`, `eval`, ...).
//! - `continuation`: capturing and resuming continuations.
//! - `rollback`: what an evaluation changed, saved so a limit can undo it.
//! - `limits`: the step budget, the memory cap, the interrupt check and the
//!   collector's roots.
//! - `error`: errors, raising them into Scheme, backtraces.
//! - `loader`: stored knowledge used by name.
//! - `suspend`: evaluations parked while the host answers tool calls.
//! - `image`: a parked evaluation and its session as bytes.
//! - `snapshot`: a session's bindings as content-addressed entries.
//! - `prepared`: the prepared image (the VM after the prelude) as bytes.
//! - `verify`: the checks of loaded code that keep the VM's indexing in range.
//!
//! Fields are private: the engine (`api`) drives the VM through methods.

mod call;
mod continuation;
mod control;
mod dispatch;
mod error;
mod eval;
mod image;
mod limits;
mod loader;
mod prepared;
mod rollback;
mod session_syntax;
mod snapshot;
mod suspend;
#[cfg(test)]
mod unit_tests;
mod verify;

use std::rc::Rc;

use crate::builtins::output::Output;
use crate::builtins::PrimTable;
use crate::compiler::front::Front;
use crate::compiler::gen::Gen;
use crate::compiler::globals::{GlobalSyntax, Globals};
use crate::compiler::special::Special;
use crate::compiler::{CompileError, Known};
use crate::heap::{Heap, MemoryMeter};
use crate::host::{BasicHost, Host, HostSlot};
use crate::repo::forest::{ForestError, Timestamp};
use crate::repo::index::Indexes;
use crate::repo::knowledge::Knowledge;
use crate::repo::Tier;
use crate::symbol::SymbolTable;
use crate::syntax::scope::Scope;
use crate::syntax::Syn;
use crate::value::code::{Frame, Inline, Op, Template};
use crate::value::Value;

pub use error::{ErrorKind, VmError};
pub use eval::{Answer, Outcome, PendingCall, ValueForm};
pub use limits::Limits;
use loader::Links;
pub use snapshot::{EntryHash, Manifest};
use suspend::ParkingLot;

/// Globals holding prelude procedures the VM calls itself.
#[derive(Clone, Default)]
struct PreludeHooks {
    /// `raise`: a primitive's error becomes a call of it when a handler is
    /// installed.
    raise: Option<u32>,
    /// `%invoke-continuation`: runs `dynamic-wind` handlers, then throws.
    invoke_continuation: Option<u32>,
    /// `%arb:run-thunks`: runs the load of stored nodes.
    run_thunks: Option<u32>,
    /// `%par-escape`: the running `par` branch's escape, reset when a run
    /// slice starts.
    par_escape: Option<u32>,
    /// The parameters holding the current output, error and input ports
    /// (`builtins::Standard` order).
    ports: [Option<u32>; 3],
}

/// The guards of the inline operations (see `code::Inline`).
#[derive(Clone, Default)]
struct InlineGuards {
    /// For each operation, the primitive its global must still hold.
    prims: Vec<u32>,
    /// For each operation, the global that names its primitive.
    globals: Vec<u32>,
    /// Bit k set: operation k may take its fast path (its global is intact).
    ok: u32,
}

pub struct Vm {
    heap: Heap,
    syms: SymbolTable,
    globals: Globals,
    prims: PrimTable,
    known: Known,
    host: HostSlot,
    stack: Vec<Value>,
    frames: Vec<Frame>,
    winders: Value,
    handlers: Value,
    /// The current output port's text not yet handed to the host.
    out: Output,
    /// File output ports not yet closed: their pending text is written
    /// out when an evaluation ends.
    file_outputs: Vec<Value>,
    steps_left: u64,
    /// The most steps one evaluation may take across all its run slices
    /// (`Engine::set_evaluation_budget`); none: each slice has the limits.
    evaluation_budget: Option<u64>,
    /// Units of primitive work charged since the host was last asked
    /// (`builtins::Budget`).
    work_unpolled: u64,
    /// Calls since the instruction loop last polled (`Vm::count_step`);
    /// a field, not a local of the loop, so the loop keeps fewer values.
    since_poll: u64,
    inline: InlineGuards,
    /// Globals the current evaluation changed, with their values before it,
    /// and per global the evaluation that saved it last.
    saved_globals: Vec<(u32, Value)>,
    global_stamps: Vec<u32>,
    eval_stamp: u32,
    hooks: PreludeHooks,
    /// The knowledge base; created on first use (see `Vm::knowledge`).
    knowledge: Option<Knowledge>,
    /// Makes the indexes of a knowledge base created on first use, when
    /// the host chose an embedder or lexicon (`Engine::set_embedder`).
    new_indexes: Option<Rc<dyn Fn() -> Indexes>>,
    /// The tier of the running code, and the tier each evaluation starts in.
    tier: Tier,
    session_tier: Tier,
    /// Stored nodes this session has loaded.
    links: Links,
    /// Evaluations waiting for the host's answers to tool calls.
    parking: ParkingLot,
    /// What the prelude made, which dumps name rather than write; set
    /// when the prelude is loaded.
    image: Option<Rc<image::PreludeImage>>,
    halt: Rc<Template>,
    /// The frame below code run by `%arb:eval-at-tier`: puts the tier back.
    restore_tier: Rc<Template>,
    /// The frame a `%call/ec` call pushes below its procedure, the
    /// escape object in its closure slot: it only returns
    /// (`continuation::escape`).
    escape_return: Rc<Template>,
    // registers
    pc: usize,
    fp: usize,
    tmpl: Rc<Template>,
    closure: Value,
    acc: Value,
}

/// What an idle VM is made of: the prelude's heap, names and code, which
/// `Vm::fresh_copy` carries over and `Vm::new` builds.
struct Idle {
    heap: Heap,
    syms: SymbolTable,
    globals: Globals,
    prims: PrimTable,
    known: Known,
    inline: InlineGuards,
    global_stamps: Vec<u32>,
    eval_stamp: u32,
    hooks: PreludeHooks,
    image: Option<Rc<image::PreludeImage>>,
    halt: Rc<Template>,
    restore_tier: Rc<Template>,
    escape_return: Rc<Template>,
}

impl Vm {
    /// A VM with these primitives bound to their names, every special form
    /// bound, and nothing else (see `load_prelude`).
    pub fn new(prims: PrimTable) -> Vm {
        let mut syms = SymbolTable::default();
        let mut globals = Globals::default();
        for (i, p) in prims.prims.iter().enumerate() {
            let s = syms.intern(p.name);
            globals.define(s, Value::Prim(i as u32));
        }
        for (name, sp) in Special::ALL {
            let s = syms.intern(name);
            globals.syntax.insert(s, GlobalSyntax::Special(*sp));
        }
        let known = Known::new(&mut syms, |name| prims.id(name));
        let mut inline = InlineGuards::default();
        for (_, name) in Inline::ALL {
            inline.prims.push(prims.id(name).unwrap_or(u32::MAX));
            inline.globals.push(globals.index(syms.intern(name)));
        }
        let halt = Template::internal(vec![Op::Halt]);
        let restore_tier = Template::internal(vec![Op::RestoreTier, Op::Return]);
        let escape_return = Template::internal(vec![Op::Return]);
        let mut heap = Heap::new();
        heap.prims = prims
            .prims
            .iter()
            .map(|p| crate::heap::PrimInfo {
                name: p.name,
                min: p.min,
                max: p.max,
            })
            .collect();
        let mut vm = Vm::idle(Idle {
            heap,
            syms,
            globals,
            prims,
            known,
            inline,
            global_stamps: Vec::new(),
            eval_stamp: 0,
            hooks: PreludeHooks::default(),
            image: None,
            halt,
            restore_tier,
            escape_return,
        });
        vm.refresh_inline();
        vm
    }

    /// A VM in the state this idle one is in (the prelude loaded): a copy
    /// of its heap, symbols, globals and primitives that shares its
    /// compiled code, which nothing changes once compiled (templates are
    /// traced by collector stamps unique in the process, see
    /// `Heap::collect`). Nothing else carries over: a new VM gets the
    /// engine's own host, no knowledge base, nothing parked, nothing
    /// loaded, the default tier. How a new engine starts from the prepared
    /// image instead of compiling the prelude again (`api::Engine::new`).
    pub fn fresh_copy(&self) -> Vm {
        debug_assert!(self.stack.is_empty() && self.frames.is_empty());
        Vm::idle(Idle {
            heap: self.heap.clone(),
            syms: self.syms.clone(),
            globals: self.globals.clone(),
            prims: self.prims.clone(),
            known: self.known.clone(),
            inline: self.inline.clone(),
            global_stamps: self.global_stamps.clone(),
            eval_stamp: self.eval_stamp,
            hooks: self.hooks.clone(),
            image: self.image.clone(),
            halt: self.halt.clone(),
            restore_tier: self.restore_tier.clone(),
            escape_return: self.escape_return.clone(),
        })
    }

    /// An idle VM made of `parts`: every other field (host, stacks,
    /// registers, output, limits, knowledge base, links, parked
    /// evaluations, tier) starts empty. The one place that lists them, so
    /// a new field cannot be forgotten by one way of making a VM.
    fn idle(parts: Idle) -> Vm {
        Vm {
            heap: parts.heap,
            syms: parts.syms,
            globals: parts.globals,
            prims: parts.prims,
            known: parts.known,
            host: HostSlot::default(),
            stack: Vec::new(),
            frames: Vec::new(),
            winders: Value::Null,
            handlers: Value::Null,
            out: Output::default(),
            file_outputs: Vec::new(),
            steps_left: u64::MAX,
            evaluation_budget: None,
            work_unpolled: 0,
            since_poll: 0,
            inline: parts.inline,
            saved_globals: Vec::new(),
            global_stamps: parts.global_stamps,
            eval_stamp: parts.eval_stamp,
            hooks: parts.hooks,
            knowledge: None,
            new_indexes: None,
            tier: Tier::default(),
            session_tier: Tier::default(),
            links: Links::default(),
            parking: ParkingLot::default(),
            image: parts.image,
            halt: parts.halt.clone(),
            restore_tier: parts.restore_tier,
            escape_return: parts.escape_return,
            pc: 0,
            fp: 0,
            tmpl: parts.halt,
            closure: Value::Null,
            acc: Value::Unspecified,
        }
    }

    // ---- what the engine sets and reads --------------------------------------

    pub fn install_host(&mut self, host: Box<dyn Host>) {
        self.host.install(host);
    }

    /// The engine's own host (a settable clock and interrupt check), in
    /// place of an installed one.
    pub fn basic_host(&mut self) -> &mut BasicHost {
        self.host.basic()
    }

    /// Has the memory cap checked against the embedder's allocator.
    pub fn set_memory_meter(&mut self, meter: Option<MemoryMeter>) {
        self.heap.set_meter(meter);
    }

    /// Forgets the heap's objects and the knowledge base without dropping
    /// them (`Engine::end_leaving_heap`).
    pub fn leave_heap(&mut self) {
        std::mem::forget(std::mem::take(&mut self.heap));
        std::mem::forget(self.knowledge.take());
    }

    /// Has one-buffer allocations checked against what the memory has
    /// grown to (`Engine::set_memory_footprint`).
    pub fn set_memory_footprint(&mut self, footprint: Option<MemoryMeter>) {
        self.heap.set_footprint(footprint);
    }

    /// The most steps an evaluation started from now on may take across
    /// all its run slices (none: only each slice's limit).
    pub fn set_evaluation_budget(&mut self, max_steps: Option<u64>) {
        self.evaluation_budget = max_steps;
    }

    pub fn evaluation_budget(&self) -> Option<u64> {
        self.evaluation_budget
    }

    /// The tier evaluations start in.
    pub fn session_tier(&self) -> Tier {
        self.session_tier
    }

    pub fn set_session_tier(&mut self, tier: Tier) {
        self.session_tier = tier;
    }

    /// The knowledge base, created (holding the builtins) on first use.
    pub fn knowledge(&mut self) -> &mut Knowledge {
        let host = self.host.get();
        let new_indexes = &self.new_indexes;
        self.knowledge
            .get_or_insert_with(|| new_knowledge(new_indexes, Timestamp::from_seconds(host.now())))
    }

    /// How a knowledge base created on first use is indexed (`None`: the
    /// default indexes).
    pub fn set_new_indexes(&mut self, f: Option<Rc<dyn Fn() -> Indexes>>) {
        self.new_indexes = f;
    }

    /// The host's clock, as the knowledge base dates versions.
    pub fn timestamp(&mut self) -> Timestamp {
        Timestamp::from_seconds(self.host.get().now())
    }

    /// Adopts what other writers stored since the knowledge base last
    /// read or wrote its store; whether the state moved.
    pub fn sync_store(&mut self) -> Result<bool, ForestError> {
        let Some(k) = &mut self.knowledge else {
            return Ok(false);
        };
        let moved = k.sync()?;
        if moved {
            self.sync_knowledge();
        }
        Ok(moved)
    }

    /// The versions committed since the last call, in order.
    pub fn take_committed(&mut self) -> Vec<u64> {
        self.knowledge
            .as_mut()
            .map(|k| k.take_committed())
            .unwrap_or_default()
    }

    /// The knowledge base if it was ever used.
    pub fn existing_knowledge(&self) -> Option<&Knowledge> {
        self.knowledge.as_ref()
    }

    /// Replaces the knowledge base; everything loaded from the old one is
    /// forgotten.
    pub fn install_knowledge(&mut self, k: Knowledge) {
        self.knowledge = Some(k);
        self.forget_loaded();
    }

    // ---- running -------------------------------------------------------------

    /// Runs a top-level template to completion.
    pub fn run(&mut self, t: Rc<Template>) -> Result<Value, VmError> {
        self.tier = self.session_tier;
        self.stack.clear();
        self.frames.clear();
        self.stack.push(Value::Unspecified); // the callee slot below the frame
        self.frames.push(Frame {
            template: self.halt.clone(),
            pc: 0,
            fp: 1,
            closure: Value::Null,
        });
        self.fp = 1;
        self.pc = 0;
        self.tmpl = t;
        self.closure = Value::Null;
        self.acc = Value::Unspecified;
        self.finish_run()
    }

    /// Runs the code set up in the registers to its `Halt`.
    fn finish_run(&mut self) -> Result<Value, VmError> {
        let r = self.execute();
        // Drop references so the collector and the templates can let go.
        self.stack.clear();
        self.frames.clear();
        self.tmpl = self.halt.clone();
        self.closure = Value::Null;
        if r.is_err() {
            self.winders = Value::Null;
            self.handlers = Value::Null;
        }
        r
    }

    /// The front end over this VM's symbols, heap and globals, reading
    /// included files through its host.
    fn front(&mut self) -> Front<'_> {
        let mut front = Front::new(
            &mut self.syms,
            &mut self.heap,
            &mut self.globals,
            &self.known,
        );
        front.host = Some(self.host.get());
        front
    }

    /// Compiles one top-level form (top-level `begin` is compiled as a
    /// sequence) in `env`: none at the top level, a library's scope in its body.
    pub fn compile_form(
        &mut self,
        form: &Syn,
        env: &Option<Rc<Scope>>,
        internal: bool,
    ) -> Result<Rc<Template>, CompileError> {
        let mut front = self.front();
        front.internal = internal;
        // Both walks recurse on the nesting of the code, on a heap stack
        // (reblessive), not the Rust stack.
        let mut stack = reblessive::Stack::new();
        let expr = stack.enter(|stk| front.toplevel(stk, form, env)).finish()?;
        let vars = std::mem::take(&mut front.vars);
        stack
            .enter(|stk| Gen::new(&vars, internal).toplevel(stk, &expr, form.pos()))
            .finish()
            .map_err(|_| CompileError {
                message: "procedure has too many local variables".into(),
                pos: form.pos(),
                out_of_memory: false,
            })
    }

    /// Compiles `form` for `eval` in an environment `environment` made:
    /// its names mean what the environment binds them to, and nothing
    /// else of the session.
    pub fn compile_in_environment(
        &mut self,
        form: &Syn,
        ev: Rc<crate::compiler::front::EvalEnv>,
    ) -> Result<Rc<Template>, CompileError> {
        let mut front = self.front();
        front.eval_env = Some(ev);
        let env = Some(Scope::new_environment());
        let mut stack = reblessive::Stack::new();
        let expr = stack
            .enter(|stk| front.toplevel(stk, form, &env))
            .finish()?;
        let vars = std::mem::take(&mut front.vars);
        stack
            .enter(|stk| Gen::new(&vars, false).toplevel(stk, &expr, form.pos()))
            .finish()
            .map_err(|_| CompileError {
                message: "procedure has too many local variables".into(),
                pos: form.pos(),
                out_of_memory: false,
            })
    }

    /// If `form` is a top-level `begin` or `define-library` (or an import
    /// of a bundled library not yet run), its forms, each with the
    /// environment it runs in (so each is compiled after the previous one
    /// ran: a macro defined by one is used by the next).
    #[allow(clippy::type_complexity)]
    pub fn toplevel_begin(
        &mut self,
        form: &Syn,
        env: &Option<Rc<Scope>>,
    ) -> Result<Option<Vec<(Syn, Option<Rc<Scope>>)>>, CompileError> {
        let mut front = self.front();
        front.toplevel_begin(form, env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiler::KnownPrims;

    #[test]
    fn every_primitive_the_compiler_and_the_inline_guards_name_exists() {
        let mut t = PrimTable::default();
        crate::builtins::register(&mut t);
        for name in KnownPrims::NAMES {
            assert!(t.id(name).is_some(), "{name}");
        }
        for (_, name) in Inline::ALL {
            assert!(t.id(name).is_some(), "{name}");
        }
        let vm = Vm::new(t);
        assert_eq!(vm.inline.ok.count_ones() as usize, Inline::ALL.len());
    }
}

/// A knowledge base holding the builtins, indexed as `new_indexes` makes
/// them (the default indexes if `None`).
pub(crate) fn new_knowledge(
    new_indexes: &Option<Rc<dyn Fn() -> Indexes>>,
    timestamp: Timestamp,
) -> Knowledge {
    match new_indexes {
        Some(f) => Knowledge::new_with(timestamp, f()),
        None => Knowledge::new(timestamp),
    }
}
