//! The virtual machine: runs templates with heap-allocated frames.
//!
//! Nothing here recurses on the Rust stack: a Scheme call pushes a [`Frame`]
//! onto `frames` and values onto `stack`, so deep non-tail recursion is
//! bounded only by the memory cap, and `call/cc` is a copy of those two
//! vectors. Every evaluation runs under a step budget (one step per procedure
//! call), a memory cap and an interrupt check, and stops cleanly on each.

use std::rc::Rc;

use crate::api::{ErrorKind, InterruptCheck};
use crate::arb::loader::{Links, Resolution};
use crate::arb::{KCtx, Tier};
use crate::builtins::{Control, Ctx, Fault, PrimKind, PrimTable};
use crate::compiler::code::{Inline, Op, Template};
use crate::compiler::front::{value_to_syn, Front};
use crate::compiler::gen::Gen;
use crate::compiler::scope::Scope;
use crate::compiler::{CompileError, Known};
use crate::globals::Globals;
use crate::heap::Heap;
use crate::number::{self, Num};
use crate::printer;
use crate::repo::knowledge::Knowledge;
use crate::symbol::SymbolTable;
use crate::syntax::Pos;
use crate::syntax::Syn;
use crate::value::{Closure, Continuation, ErrorObject, ErrorObjectKind, Object, Value};

/// A suspended caller: where to continue when the callee returns.
#[derive(Clone)]
pub struct Frame {
    pub template: Rc<Template>,
    pub pc: u32,
    pub fp: u32,
    pub closure: Value,
}

/// An evaluation that did not complete.
#[derive(Debug, Clone)]
pub struct VmError {
    pub kind: ErrorKind,
    pub message: String,
    pub pos: Option<Pos>,
    pub backtrace: Vec<String>,
}

/// How often (in steps) the VM polls the interrupt check and memory use.
const POLL_INTERVAL: u64 = 4096;

pub struct Vm {
    pub heap: Heap,
    pub syms: SymbolTable,
    pub globals: Globals,
    pub prims: PrimTable,
    pub stack: Vec<Value>,
    pub frames: Vec<Frame>,
    pub winders: Value,
    pub handlers: Value,
    pub out: String,
    pub steps_left: u64,
    pub interrupt: Option<InterruptCheck>,
    /// The host's clock for this evaluation (seconds since the Unix epoch).
    pub now: f64,
    pub known: Known,
    /// For each `Inline` op, the primitive its guard global must still hold.
    pub inline_prims: Vec<u32>,
    /// For each `Inline` op, the global that names its primitive.
    pub inline_globals: Vec<u32>,
    /// Bit k set: inline op k may take its fast path (its global is intact).
    pub inline_ok: u32,
    /// Globals the current evaluation changed, with their values before it,
    /// and per global the evaluation that saved it last.
    saved_globals: Vec<(u32, Value)>,
    global_stamps: Vec<u32>,
    eval_stamp: u32,
    /// Globals holding prelude procedures the VM calls itself.
    pub raise_global: Option<u32>,
    pub invoke_k_global: Option<u32>,
    /// The prelude's `%arb:run-thunks`, which runs a node's load.
    pub run_thunks_global: Option<u32>,
    /// The knowledge base; created on first use (see `Vm::knowledge`).
    pub knowledge: Option<Knowledge>,
    /// The tier of the running code, and the tier each evaluation starts in.
    pub tier: Tier,
    pub session_tier: Tier,
    /// Stored nodes this session has loaded.
    pub links: Links,
    halt: Rc<Template>,
    /// The frame below code run by `%arb:eval-at-tier`: puts the tier back.
    restore_tier: Rc<Template>,
    // registers
    pc: usize,
    fp: usize,
    tmpl: Rc<Template>,
    closure: Value,
    acc: Value,
}

/// Two-fixnum cases of the inline primitives; `None` on overflow or for
/// operations that are not arithmetic or comparison.
#[inline(always)]
fn fixnum_op(op: Inline, x: i64, y: i64) -> Option<Value> {
    match op {
        Inline::Add => x.checked_add(y).map(Value::Int),
        Inline::Sub => x.checked_sub(y).map(Value::Int),
        Inline::Mul => x.checked_mul(y).map(Value::Int),
        Inline::NumEq | Inline::EqP => Some(Value::Bool(x == y)),
        Inline::Lt => Some(Value::Bool(x < y)),
        Inline::Gt => Some(Value::Bool(x > y)),
        Inline::Le => Some(Value::Bool(x <= y)),
        Inline::Ge => Some(Value::Bool(x >= y)),
        _ => None,
    }
}

impl Vm {
    pub fn new(heap: Heap, mut syms: SymbolTable, globals: Globals, prims: PrimTable) -> Vm {
        let known = Known::new(&mut syms);
        // The VM's own code: the bottom frame, and the frame below code run
        // by `%arb:eval-at-tier`.
        let internal = |code: Vec<Op>| {
            Rc::new(Template {
                code,
                consts: vec![],
                children: vec![],
                nparams: 0,
                rest: false,
                nfree: 0,
                name: None,
                pos: Pos::NONE,
                positions: vec![],
                internal: true,
                gc_stamp: std::cell::Cell::new(0),
            })
        };
        let halt = internal(vec![Op::Halt]);
        let restore_tier = internal(vec![Op::RestoreTier, Op::Return]);
        Vm {
            heap,
            syms,
            globals,
            prims,
            stack: Vec::new(),
            frames: Vec::new(),
            winders: Value::Null,
            handlers: Value::Null,
            out: String::new(),
            steps_left: u64::MAX,
            interrupt: None,
            now: 0.0,
            known,
            inline_prims: Vec::new(),
            inline_globals: Vec::new(),
            inline_ok: 0,
            saved_globals: Vec::new(),
            global_stamps: Vec::new(),
            eval_stamp: 0,
            raise_global: None,
            invoke_k_global: None,
            run_thunks_global: None,
            knowledge: None,
            tier: Tier::default(),
            session_tier: Tier::default(),
            links: Links::default(),
            halt: halt.clone(),
            restore_tier,
            pc: 0,
            fp: 0,
            tmpl: halt,
            closure: Value::Null,
            acc: Value::Unspecified,
        }
    }

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

    fn limit_error(&mut self, kind: ErrorKind, message: String) -> VmError {
        let (pos, backtrace) = self.where_();
        VmError {
            kind,
            message,
            pos,
            backtrace,
        }
    }

    /// The position of the innermost user code and a short backtrace.
    /// The position of the innermost user code and a short backtrace:
    /// innermost first, repeated frames (deep recursion) folded into one
    /// line with a count, at most `MAX_BACKTRACE` lines.
    fn where_(&self) -> (Option<Pos>, Vec<String>) {
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

    fn stack_bytes(&self) -> usize {
        self.stack.capacity() * std::mem::size_of::<Value>()
            + self.frames.capacity() * std::mem::size_of::<Frame>()
    }

    pub fn collect_garbage(&mut self) {
        let mut roots: Vec<Value> = Vec::with_capacity(self.frames.len() + 8);
        roots.push(self.acc);
        roots.push(self.closure);
        roots.push(self.winders);
        roots.push(self.handlers);
        roots.extend(self.saved_globals.iter().map(|(_, v)| *v));
        for f in &self.frames {
            roots.push(f.closure);
        }
        let mut templates: Vec<&Rc<Template>> = vec![&self.tmpl];
        for f in &self.frames {
            templates.push(&f.template);
        }
        let roots = roots
            .into_iter()
            .chain(self.stack.iter().copied())
            .chain(self.globals.values.iter().copied());
        self.heap.collect(roots, templates.into_iter());
    }

    /// Periodic checks: interrupt, memory. Called at safe points only.
    fn poll(&mut self) -> Result<(), VmError> {
        if let Some(check) = self.interrupt.as_mut() {
            if check() {
                return Err(
                    self.limit_error(ErrorKind::Interrupted, "evaluation interrupted".into())
                );
            }
        }
        self.check_memory()
    }

    fn check_memory(&mut self) -> Result<(), VmError> {
        if self.heap.wants_gc || self.heap.bytes + self.stack_bytes() > self.heap.cap {
            self.collect_garbage();
            if self.heap.bytes + self.stack_bytes() > self.heap.cap {
                let cap = self.heap.cap;
                return Err(self.limit_error(
                    ErrorKind::MemoryLimit,
                    format!(
                        "memory limit exceeded: the evaluation needs more than {} bytes",
                        cap
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Compiles one top-level form (top-level `begin` is compiled as a
    /// sequence) in `env`: none at the top level, a library's scope in its body.
    pub fn compile_form(
        &mut self,
        form: &Syn,
        env: &Option<Rc<Scope>>,
        internal: bool,
    ) -> Result<Rc<Template>, CompileError> {
        let mut front = Front::new(
            &mut self.syms,
            &mut self.heap,
            &mut self.globals,
            &self.known,
            &self.prims,
        );
        let expr = front.toplevel(form, env)?;
        let vars = std::mem::take(&mut front.vars);
        Gen::new(&vars, internal)
            .toplevel(&expr, form.pos())
            .map_err(|_| CompileError {
                message: "procedure has too many local variables".into(),
                pos: form.pos(),
            })
    }

    /// If `form` is a top-level `begin` or `define-library`, its forms and
    /// the environment they run in (so each is compiled after the previous
    /// one ran: a macro defined by one is used by the next).
    #[allow(clippy::type_complexity)]
    pub fn toplevel_begin(
        &mut self,
        form: &Syn,
        env: &Option<Rc<Scope>>,
    ) -> Result<Option<(Vec<Syn>, Option<Rc<Scope>>)>, CompileError> {
        let mut front = Front::new(
            &mut self.syms,
            &mut self.heap,
            &mut self.globals,
            &self.known,
            &self.prims,
        );
        front.toplevel_begin(form, env)
    }

    // ---- errors raised by Scheme code ---------------------------------------

    fn make_error_object(&mut self, message: String, irritants: Vec<Value>) -> Value {
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
    fn raise_fault(&mut self, f: Fault) -> Result<(), VmError> {
        let obj = match f {
            Fault::Error(message, irritants) => self.make_error_object(message, irritants),
            Fault::Raise(v) => v,
            Fault::ReadError(message) => {
                let m = self.heap.string(&message);
                self.heap.alloc(Object::Error(Box::new(ErrorObject {
                    kind: ErrorObjectKind::Read,
                    message: m,
                    irritants: Value::Null,
                })))
            }
            Fault::OutOfMemory => {
                let cap = self.heap.cap;
                return Err(self.limit_error(
                    ErrorKind::MemoryLimit,
                    format!("memory limit exceeded: the evaluation needs more than {cap} bytes"),
                ));
            }
        };
        if matches!(self.handlers, Value::Null) {
            return Err(self.uncaught(obj));
        }
        let Some(g) = self.raise_global else {
            return Err(self.uncaught(obj));
        };
        let raise = self.globals.values[g as usize];
        // Call raise as if the failing instruction had been a call to it.
        self.stack.push(raise);
        self.stack.push(obj);
        self.call(1, false)
    }

    fn uncaught(&mut self, obj: Value) -> VmError {
        let message = self.error_message(obj);
        let (pos, backtrace) = self.where_();
        VmError {
            kind: ErrorKind::Runtime,
            message,
            pos,
            backtrace,
        }
    }

    /// The text of an uncaught raise: an error object's message and irritants,
    /// or the raised object itself.
    pub fn error_message(&self, obj: Value) -> String {
        condition_text(&self.heap, &self.syms, obj)
    }

    fn not_procedure(&mut self, f: Value) -> Fault {
        let shown = printer::write_string(&self.heap, &self.syms, f);
        Fault::Error(format!("not a procedure: {shown}"), vec![])
    }

    fn proc_name(&self, t: &Template) -> String {
        match t.name {
            Some(n) => self.syms.name(n).to_string(),
            None => "anonymous procedure".into(),
        }
    }

    // ---- calls --------------------------------------------------------------

    /// Calls the procedure below the `n` arguments on top of the stack.
    /// In tail position the current frame is replaced.
    fn call(&mut self, n: usize, tail: bool) -> Result<(), VmError> {
        let mut n = n;
        loop {
            let callee_idx = self.stack.len() - n - 1;
            let f = self.stack[callee_idx];
            match f {
                Value::Prim(id) => {
                    let prim = &self.prims.prims[id as usize];
                    if n < prim.min as usize || prim.max.is_some_and(|m| n > m as usize) {
                        let msg = arity_message(
                            prim.name,
                            prim.min as usize,
                            prim.max.map(|m| m as usize),
                            n,
                        );
                        return self.raise_fault(Fault::Error(msg, vec![]));
                    }
                    match prim.kind {
                        PrimKind::Simple(func) => {
                            let r = {
                                let mut ctx = Ctx {
                                    heap: &mut self.heap,
                                    syms: &mut self.syms,
                                    out: &mut self.out,
                                    now: self.now,
                                };
                                func(&mut ctx, &self.stack[callee_idx + 1..])
                            };
                            match r {
                                Ok(v) => {
                                    self.stack.truncate(callee_idx);
                                    self.acc = v;
                                    if tail {
                                        self.do_return();
                                    }
                                    return Ok(());
                                }
                                Err(e) => {
                                    self.stack.truncate(callee_idx);
                                    return self.raise_fault(e);
                                }
                            }
                        }
                        PrimKind::Knowledge(func) => {
                            let now = self.now;
                            let tier = self.tier;
                            let knowledge = self
                                .knowledge
                                .get_or_insert_with(|| Knowledge::new(crate::arb::timestamp(now)));
                            let r = {
                                let mut ctx = KCtx {
                                    heap: &mut self.heap,
                                    syms: &mut self.syms,
                                    k: knowledge,
                                    tier,
                                    now,
                                };
                                func(&mut ctx, &self.stack[callee_idx + 1..])
                            };
                            self.sync_knowledge();
                            self.stack.truncate(callee_idx);
                            self.acc = match r {
                                Ok(v) => v,
                                Err(e) => e.to_value(&mut self.heap),
                            };
                            if tail {
                                self.do_return();
                            }
                            return Ok(());
                        }
                        PrimKind::Control(c) => match self.control(c, callee_idx, n, tail)? {
                            Some(m) => {
                                n = m;
                                continue;
                            }
                            None => return Ok(()),
                        },
                    }
                }
                Value::Obj(r) => {
                    if let Object::Closure(c) = self.heap.get(r) {
                        let t = c.template.clone();
                        return self.enter(t, f, callee_idx, n, tail);
                    }
                    match self.heap.get(r) {
                        Object::CaseLambda(clauses) => {
                            let mut chosen = None;
                            for c in clauses {
                                if let Some(Object::Closure(cl)) = self.heap.obj(*c) {
                                    let t = &cl.template;
                                    if n == t.nparams as usize
                                        || (t.rest && n >= t.nparams as usize)
                                    {
                                        chosen = Some(*c);
                                        break;
                                    }
                                }
                            }
                            match chosen {
                                Some(c) => {
                                    self.stack[callee_idx] = c;
                                    continue;
                                }
                                None => {
                                    self.stack.truncate(callee_idx);
                                    return self.raise_fault(Fault::Error(
                                        format!("case-lambda: no clause accepts {n} arguments"),
                                        vec![],
                                    ));
                                }
                            }
                        }
                        Object::Continuation(k) => {
                            let same_winders = k.winders.eq(self.winders);
                            let vals: Vec<Value> = self.stack[callee_idx + 1..].to_vec();
                            if !same_winders {
                                if let Some(g) = self.invoke_k_global {
                                    // Let the prelude run the dynamic-wind handlers, then throw.
                                    let invoke = self.globals.values[g as usize];
                                    let list = self.heap.list(&vals);
                                    self.stack.truncate(callee_idx);
                                    self.stack.push(invoke);
                                    self.stack.push(f);
                                    self.stack.push(list);
                                    n = 2;
                                    continue;
                                }
                            }
                            self.throw(f, &vals);
                            return Ok(());
                        }
                        Object::Parameter { value, .. } => {
                            let v = *value;
                            if n != 0 {
                                self.stack.truncate(callee_idx);
                                return self.raise_fault(Fault::Error(
                                    "parameter: a parameter object takes no arguments".into(),
                                    vec![],
                                ));
                            }
                            self.stack.truncate(callee_idx);
                            self.acc = v;
                            if tail {
                                self.do_return();
                            }
                            return Ok(());
                        }
                        _ => {
                            self.stack.truncate(callee_idx);
                            let fault = self.not_procedure(f);
                            return self.raise_fault(fault);
                        }
                    }
                }
                _ => {
                    self.stack.truncate(callee_idx);
                    let fault = self.not_procedure(f);
                    return self.raise_fault(fault);
                }
            }
        }
    }

    fn enter(
        &mut self,
        t: Rc<Template>,
        f: Value,
        callee_idx: usize,
        n: usize,
        tail: bool,
    ) -> Result<(), VmError> {
        let np = t.nparams as usize;
        if n != np && !(t.rest && n >= np) {
            let name = self.proc_name(&t);
            let msg = arity_message(&name, np, if t.rest { None } else { Some(np) }, n);
            self.stack.truncate(callee_idx);
            return self.raise_fault(Fault::Error(msg, vec![]));
        }
        if t.rest {
            let extra = self.heap.list(&self.stack[callee_idx + 1 + np..]);
            self.stack.truncate(callee_idx + 1 + np);
            self.stack.push(extra);
        }
        if tail {
            // Slide callee and arguments down over the current frame.
            let base = self.fp - 1;
            self.stack.drain(base..callee_idx);
            self.fp = base + 1;
            self.tmpl = t;
        } else {
            let caller = std::mem::replace(&mut self.tmpl, t);
            self.frames.push(Frame {
                template: caller,
                pc: self.pc as u32,
                fp: self.fp as u32,
                closure: self.closure,
            });
            self.fp = callee_idx + 1;
        }
        self.closure = f;
        self.pc = 0;
        Ok(())
    }

    fn do_return(&mut self) {
        self.stack.truncate(self.fp - 1);
        if let Some(fr) = self.frames.pop() {
            self.tmpl = fr.template;
            self.pc = fr.pc as usize;
            self.fp = fr.fp as usize;
            self.closure = fr.closure;
        }
    }

    /// Resumes continuation `k` with `vals`.
    fn throw(&mut self, k: Value, vals: &[Value]) {
        let v = match vals.len() {
            1 => vals[0],
            _ => self.heap.alloc(Object::Values(vals.to_vec())),
        };
        if let Some(Object::Continuation(c)) = self.heap.obj(k) {
            self.stack.clear();
            self.stack.extend_from_slice(&c.stack);
            self.frames.clear();
            self.frames.extend(c.frames.iter().cloned());
            self.winders = c.winders;
            self.handlers = c.handlers;
            self.tier = c.tier;
        }
        self.acc = v;
        // The continuation's top frame is where the value is delivered.
        if let Some(fr) = self.frames.pop() {
            self.tmpl = fr.template;
            self.pc = fr.pc as usize;
            self.fp = fr.fp as usize;
            self.closure = fr.closure;
        }
    }

    fn capture(&mut self, callee_idx: usize, tail: bool) -> Value {
        let (stack, mut frames) = if tail {
            (self.stack[..self.fp - 1].to_vec(), self.frames.clone())
        } else {
            let mut frames = self.frames.clone();
            frames.push(Frame {
                template: self.tmpl.clone(),
                pc: self.pc as u32,
                fp: self.fp as u32,
                closure: self.closure,
            });
            (self.stack[..callee_idx].to_vec(), frames)
        };
        frames.shrink_to_fit();
        self.heap.alloc(Object::Continuation(Box::new(Continuation {
            stack,
            frames,
            winders: self.winders,
            handlers: self.handlers,
            tier: self.tier,
        })))
    }

    /// Control primitives. `Some(n)` asks the caller to perform a call of the
    /// procedure now below `n` arguments on the stack.
    fn control(
        &mut self,
        c: Control,
        callee_idx: usize,
        n: usize,
        tail: bool,
    ) -> Result<Option<usize>, VmError> {
        let arg = |vm: &Vm, i: usize| vm.stack[callee_idx + 1 + i];
        match c {
            Control::Apply => {
                // (apply f a ... lst)
                let f = arg(self, 0);
                let lst = arg(self, n - 1);
                let mut items = Vec::new();
                let mut l = lst;
                while let Some((a, d)) = self.heap.pair(l) {
                    items.push(a);
                    l = d;
                    if items.len() > 10_000_000 {
                        break;
                    }
                }
                if !matches!(l, Value::Null) {
                    self.stack.truncate(callee_idx);
                    let shown = printer::write_string(&self.heap, &self.syms, lst);
                    self.raise_fault(Fault::Error(
                        format!("apply: last argument must be a proper list, got {shown}"),
                        vec![],
                    ))?;
                    return Ok(None);
                }
                let middle: Vec<Value> = self.stack[callee_idx + 2..callee_idx + n].to_vec();
                self.stack.truncate(callee_idx);
                self.stack.push(f);
                self.stack.extend_from_slice(&middle);
                self.stack.extend_from_slice(&items);
                Ok(Some(middle.len() + items.len()))
            }
            Control::CallCC => {
                let f = arg(self, 0);
                let k = self.capture(callee_idx, tail);
                self.stack.truncate(callee_idx);
                self.stack.push(f);
                self.stack.push(k);
                Ok(Some(1))
            }
            Control::ApplyValues => {
                // (%apply-values f v): spread multiple values as arguments.
                let f = arg(self, 0);
                let v = arg(self, 1);
                let vals: Vec<Value> = match self.heap.obj(v) {
                    Some(Object::Values(vs)) => vs.clone(),
                    _ => vec![v],
                };
                self.stack.truncate(callee_idx);
                self.stack.push(f);
                self.stack.extend_from_slice(&vals);
                Ok(Some(vals.len()))
            }
            Control::Throw => {
                // (%throw k vals-list): resume without running winders.
                let k = arg(self, 0);
                let mut vals = Vec::new();
                let mut l = arg(self, 1);
                while let Some((a, d)) = self.heap.pair(l) {
                    vals.push(a);
                    l = d;
                }
                if !matches!(self.heap.obj(k), Some(Object::Continuation(_))) {
                    self.stack.truncate(callee_idx);
                    self.raise_fault(Fault::Error("%throw: not a continuation".into(), vec![]))?;
                    return Ok(None);
                }
                self.throw(k, &vals);
                Ok(None)
            }
            Control::Abort => {
                let obj = arg(self, 0);
                self.stack.truncate(callee_idx);
                Err(self.uncaught(obj))
            }
            Control::Winders | Control::Handlers => {
                self.stack.truncate(callee_idx);
                self.acc = if c == Control::Winders {
                    self.winders
                } else {
                    self.handlers
                };
                if tail {
                    self.do_return();
                }
                Ok(None)
            }
            Control::SetWinders | Control::SetHandlers => {
                let v = arg(self, 0);
                if c == Control::SetWinders {
                    self.winders = v;
                } else {
                    self.handlers = v;
                }
                self.stack.truncate(callee_idx);
                self.acc = Value::Unspecified;
                if tail {
                    self.do_return();
                }
                Ok(None)
            }
            Control::Eval => {
                let expr = arg(self, 0);
                self.stack.truncate(callee_idx);
                let syn = match value_to_syn(&self.heap, &mut self.syms, expr) {
                    Ok(s) => s,
                    Err(msg) => {
                        self.raise_fault(Fault::Error(format!("eval: {msg}"), vec![]))?;
                        return Ok(None);
                    }
                };
                match self.compile_form(&syn, &None, false) {
                    Ok(t) => {
                        let c = self.heap.alloc(Object::Closure(Closure {
                            template: t,
                            free: Box::new([]),
                        }));
                        self.stack.push(c);
                        Ok(Some(0))
                    }
                    Err(e) => {
                        self.raise_fault(Fault::Error(format!("eval: {}", e.message), vec![]))?;
                        Ok(None)
                    }
                }
            }
            Control::EvalAtTier => {
                let level = arg(self, 0);
                let expr = arg(self, 1);
                let requested = match level {
                    Value::Int(i) => u8::try_from(i).ok().and_then(Tier::from_level),
                    _ => None,
                };
                let Some(requested) = requested else {
                    self.stack.truncate(callee_idx);
                    self.raise_fault(Fault::Error(
                        "%arb:eval-at-tier: the tier must be 0, 1 or 2".into(),
                        vec![],
                    ))?;
                    return Ok(None);
                };
                let t = match self.compile_eval_expr(expr) {
                    Ok(t) => t,
                    Err(f) => {
                        self.stack.truncate(callee_idx);
                        self.raise_fault(f)?;
                        return Ok(None);
                    }
                };
                // The tier can only go down: code cannot give itself more
                // rights than the code that runs it.
                let old = self.tier;
                let new = old.max(requested);
                let mut base = callee_idx;
                if tail {
                    // Slide this call over the current frame, as `enter` does.
                    let fp_base = self.fp - 1;
                    self.stack.drain(fp_base..callee_idx);
                    base = fp_base;
                } else {
                    self.frames.push(Frame {
                        template: self.tmpl.clone(),
                        pc: self.pc as u32,
                        fp: self.fp as u32,
                        closure: self.closure,
                    });
                }
                // Below the evaluated code: a frame that puts the tier back
                // when it returns, then returns to the caller.
                self.stack.truncate(base + 1);
                self.frames.push(Frame {
                    template: self.restore_tier.clone(),
                    pc: 0,
                    fp: (base + 1) as u32,
                    closure: Value::Int(old as i64),
                });
                let c = self.heap.alloc(Object::Closure(Closure {
                    template: t.clone(),
                    free: Box::new([]),
                }));
                self.stack.push(c);
                self.tier = new;
                self.tmpl = t;
                self.fp = base + 2;
                self.closure = c;
                self.pc = 0;
                Ok(None)
            }
            Control::LoadEnded => {
                let done = !matches!(arg(self, 0), Value::Bool(false));
                let ids: Vec<u64> = (1..n)
                    .filter_map(|i| crate::arb::values::as_id(&self.heap, arg(self, i)))
                    .collect();
                self.stack.truncate(callee_idx);
                self.end_loading(done, &ids);
                self.acc = Value::Unspecified;
                if tail {
                    self.do_return();
                }
                Ok(None)
            }
            Control::ContinuationWinders => {
                let k = arg(self, 0);
                self.stack.truncate(callee_idx);
                self.acc = match self.heap.obj(k) {
                    Some(Object::Continuation(c)) => c.winders,
                    _ => Value::Null,
                };
                if tail {
                    self.do_return();
                }
                Ok(None)
            }
        }
    }

    // ---- the loop -----------------------------------------------------------

    /// Runs instructions until the evaluation halts.
    ///
    /// The outer loop reloads the current template whenever control moves
    /// (call, return, raise); the inner loop runs straight-line code of one
    /// template with `pc` in a local, which is where the time goes.
    fn execute(&mut self) -> Result<Value, VmError> {
        let mut since_poll: u64 = 0;
        loop {
            let t = self.tmpl.clone();
            let code = &t.code[..];
            let consts = &t.consts[..];
            let fp = self.fp;
            let mut pc = self.pc;
            // The accumulator lives in a register here; `self.acc` is
            // written back before anything that reads it (calls, raises,
            // the collector) and read again when control returns.
            let mut acc = self.acc;
            loop {
                let op = code[pc];
                pc += 1;
                match op {
                    Op::Const(i) => acc = consts[i as usize],
                    Op::Fixnum(i) => acc = Value::Int(i as i64),
                    Op::Nil => acc = Value::Null,
                    Op::True => acc = Value::Bool(true),
                    Op::False => acc = Value::Bool(false),
                    Op::Unspecified => acc = Value::Unspecified,
                    Op::Local(s) => acc = self.stack[fp + s as usize],
                    Op::PushLocal(s) => {
                        let v = self.stack[fp + s as usize];
                        self.stack.push(v);
                    }
                    Op::PushConst(i) => self.stack.push(consts[i as usize]),
                    Op::Push => self.stack.push(acc),
                    Op::SetLocal(s) => {
                        self.stack[fp + s as usize] = acc;
                        acc = Value::Unspecified;
                    }
                    Op::LocalBox(s) => acc = self.unbox(self.stack[fp + s as usize]),
                    Op::SetLocalBox(s) => {
                        let b = self.stack[fp + s as usize];
                        self.set_box(b, acc);
                        acc = Value::Unspecified;
                    }
                    Op::BoxLocal(s) => {
                        let i = fp + s as usize;
                        let v = self.stack[i];
                        self.stack[i] = self.heap.alloc(Object::Box(v));
                    }
                    Op::Free(i) => acc = self.free(i),
                    Op::FreeBox(i) => {
                        let b = self.free(i);
                        acc = self.unbox(b);
                    }
                    Op::SetFreeBox(i) => {
                        let b = self.free(i);
                        self.set_box(b, acc);
                        acc = Value::Unspecified;
                    }
                    Op::LocalChecked(..)
                    | Op::LocalBoxChecked(..)
                    | Op::FreeChecked(..)
                    | Op::FreeBoxChecked(..) => {
                        let (v, k) = match op {
                            Op::LocalChecked(s, k) => (self.stack[fp + s as usize], k),
                            Op::LocalBoxChecked(s, k) => {
                                (self.unbox(self.stack[fp + s as usize]), k)
                            }
                            Op::FreeChecked(i, k) => (self.free(i), k),
                            Op::FreeBoxChecked(i, k) => {
                                let b = self.free(i);
                                (self.unbox(b), k)
                            }
                            _ => (Value::Unspecified, 0),
                        };
                        if matches!(v, Value::Undefined) {
                            self.pc = pc;
                            self.acc = acc;
                            let fault = self.used_before_defined(k);
                            self.raise_fault(fault)?;
                            break;
                        }
                        acc = v;
                    }
                    Op::Global(g) => {
                        let v = self.globals.values[g as usize];
                        if matches!(v, Value::Undefined) {
                            self.pc = pc;
                            self.acc = acc;
                            match self.unbound_global(g, pc)? {
                                Some(v) => acc = v,
                                None => break,
                            }
                            continue;
                        }
                        acc = v;
                    }
                    Op::SetGlobal(g) => {
                        if matches!(self.globals.values[g as usize], Value::Undefined) {
                            self.pc = pc;
                            self.acc = acc;
                            let fault = self.unbound(g, "set!: ");
                            self.raise_fault(fault)?;
                            break;
                        }
                        self.save_global(g);
                        self.globals.values[g as usize] = acc;
                        acc = Value::Unspecified;
                        self.note_global_write(g);
                    }
                    Op::DefineGlobal(g) => {
                        self.save_global(g);
                        self.globals.values[g as usize] = acc;
                        acc = Value::Unspecified;
                        self.note_global_write(g);
                    }
                    Op::Drop(n) => {
                        let len = self.stack.len() - n as usize;
                        self.stack.truncate(len);
                    }
                    Op::Jump(target) => pc = target as usize,
                    Op::JumpIfFalse(target) => {
                        if matches!(acc, Value::Bool(false)) {
                            pc = target as usize;
                        }
                    }
                    Op::MakeClosure(c) => {
                        let child = t.children[c as usize].clone();
                        let start = self.stack.len() - child.nfree as usize;
                        let free: Box<[Value]> = self.stack[start..].into();
                        self.stack.truncate(start);
                        acc = self.heap.alloc(Object::Closure(Closure {
                            template: child,
                            free,
                        }));
                    }
                    Op::PatchFree {
                        closure,
                        free,
                        value,
                    } => {
                        let c = self.stack[fp + closure as usize];
                        let v = self.stack[fp + value as usize];
                        if let Some(Object::Closure(cl)) = self.heap.obj_mut(c) {
                            if let Some(slot) = cl.free.get_mut(free as usize) {
                                *slot = v;
                            }
                        }
                    }
                    Op::MakeCaseLambda(n) => {
                        let start = self.stack.len() - n as usize;
                        let cs = self.stack[start..].to_vec();
                        self.stack.truncate(start);
                        acc = self.heap.alloc(Object::CaseLambda(cs));
                    }
                    Op::Call(n) | Op::TailCall(n) => {
                        self.pc = pc;
                        self.acc = acc;
                        self.count_step(&mut since_poll)?;
                        self.call(n as usize, matches!(op, Op::TailCall(_)))?;
                        break;
                    }
                    Op::Return => {
                        self.acc = acc;
                        self.do_return();
                        break;
                    }
                    Op::Inline(iop) => {
                        if iop.arity() == 2 && self.inline_ok & (1 << iop as u32) != 0 {
                            let len = self.stack.len();
                            let x = self.stack[len - 1];
                            let r = match (iop, x, acc) {
                                (Inline::EqP, _, _) => Some(Value::Bool(x.eq(acc))),
                                (Inline::Cons, _, _) => Some(self.heap.cons(x, acc)),
                                (_, Value::Int(p), Value::Int(q)) => fixnum_op(iop, p, q),
                                _ => None,
                            };
                            if let Some(r) = r {
                                self.stack.truncate(len - 1);
                                acc = r;
                                continue;
                            }
                        }
                        match self.inline_general(iop, pc, acc, &mut since_poll)? {
                            Some(v) => acc = v,
                            None => break,
                        }
                    }
                    Op::InlineLI { op: iop, slot, imm } => {
                        let x = self.stack[fp + slot as usize];
                        if self.inline_ok & (1 << iop as u32) != 0 {
                            if let Value::Int(a) = x {
                                if let Some(r) = fixnum_op(iop, a, imm as i64) {
                                    acc = r;
                                    continue;
                                }
                            }
                        }
                        self.stack.push(x);
                        match self.inline_general(
                            iop,
                            pc,
                            Value::Int(imm as i64),
                            &mut since_poll,
                        )? {
                            Some(v) => acc = v,
                            None => break,
                        }
                    }
                    Op::InlineLL { op: iop, a, b } => {
                        let x = self.stack[fp + a as usize];
                        let y = self.stack[fp + b as usize];
                        if self.inline_ok & (1 << iop as u32) != 0 {
                            let r = match (iop, x, y) {
                                (Inline::EqP, _, _) => Some(Value::Bool(x.eq(y))),
                                (Inline::Cons, _, _) => Some(self.heap.cons(x, y)),
                                (_, Value::Int(p), Value::Int(q)) => fixnum_op(iop, p, q),
                                _ => None,
                            };
                            if let Some(r) = r {
                                acc = r;
                                continue;
                            }
                        }
                        self.stack.push(x);
                        match self.inline_general(iop, pc, y, &mut since_poll)? {
                            Some(v) => acc = v,
                            None => break,
                        }
                    }
                    Op::Inline1L { op: iop, slot } => {
                        let x = self.stack[fp + slot as usize];
                        if self.inline_ok & (1 << iop as u32) != 0 {
                            // The list primitives, without leaving the loop.
                            let r = match (iop, x) {
                                (Inline::NullP, _) => Some(Value::Bool(matches!(x, Value::Null))),
                                (Inline::Not, _) => {
                                    Some(Value::Bool(matches!(x, Value::Bool(false))))
                                }
                                (Inline::ZeroP, Value::Int(i)) => Some(Value::Bool(i == 0)),
                                (Inline::Car | Inline::Cdr | Inline::PairP, Value::Obj(r)) => {
                                    match self.heap.get(r) {
                                        Object::Pair(a, d) => Some(match iop {
                                            Inline::Car => *a,
                                            Inline::Cdr => *d,
                                            _ => Value::Bool(true),
                                        }),
                                        _ => None,
                                    }
                                }
                                _ => None,
                            };
                            if let Some(r) = r {
                                acc = r;
                                continue;
                            }
                        }
                        match self.inline_general(iop, pc, x, &mut since_poll)? {
                            Some(v) => acc = v,
                            None => break,
                        }
                    }
                    Op::PushGlobal(g) => {
                        let v = self.globals.values[g as usize];
                        if matches!(v, Value::Undefined) {
                            self.pc = pc;
                            self.acc = acc;
                            match self.unbound_global(g, pc)? {
                                Some(v) => self.stack.push(v),
                                None => break,
                            }
                            continue;
                        }
                        self.stack.push(v);
                    }
                    Op::Halt => return Ok(acc),
                    Op::RestoreTier => {
                        if let Value::Int(i) = self.closure {
                            if let Some(t) = u8::try_from(i).ok().and_then(Tier::from_level) {
                                self.tier = t;
                            }
                        }
                    }
                }
            }
        }
    }

    /// The operands of an inline primitive are in place (first on the stack,
    /// last in `acc`) but the fixnum fast path did not apply: run the
    /// primitive in full, or call whatever the name now holds. `None` means
    /// control moved (a call or a raise) and the loop must reload.
    fn inline_general(
        &mut self,
        iop: Inline,
        pc: usize,
        acc: Value,
        since_poll: &mut u64,
    ) -> Result<Option<Value>, VmError> {
        self.pc = pc;
        self.acc = acc;
        if self.inline_ok & (1 << iop as u32) != 0 {
            return match self.inline(iop) {
                Ok(()) => Ok(Some(self.acc)),
                Err(f) => {
                    self.raise_fault(f)?;
                    Ok(None)
                }
            };
        }
        let n = iop.arity();
        let current = self.globals.values[self.inline_globals[iop as usize] as usize];
        self.stack.push(acc);
        let at = self.stack.len() - n;
        self.stack.insert(at, current);
        self.count_step(since_poll)?;
        self.call(n, false)?;
        Ok(None)
    }

    /// Saves a global's value before the current evaluation first changes it.
    #[inline]
    fn save_global(&mut self, g: u32) {
        let i = g as usize;
        if i >= self.global_stamps.len() {
            self.global_stamps
                .resize(self.globals.values.len().max(i + 1), 0);
        }
        if self.global_stamps[i] != self.eval_stamp {
            self.global_stamps[i] = self.eval_stamp;
            self.saved_globals.push((g, self.globals.values[i]));
        }
    }

    /// Starts an evaluation that can be undone as a whole.
    pub fn begin_evaluation(&mut self) {
        self.eval_stamp = self.eval_stamp.wrapping_add(1);
        self.saved_globals.clear();
        self.heap.begin_evaluation();
    }

    pub fn commit_evaluation(&mut self) {
        self.saved_globals.clear();
        self.heap.commit_evaluation();
    }

    /// Puts back every global and every older object the evaluation changed.
    pub fn rollback_evaluation(&mut self) {
        for (g, v) in self.saved_globals.drain(..).rev() {
            self.globals.values[g as usize] = v;
        }
        self.heap.rollback_evaluation();
        self.refresh_inline();
    }

    #[inline]
    fn note_global_write(&mut self, g: u32) {
        if self.inline_globals.contains(&g) {
            self.refresh_inline();
        }
    }

    /// Recomputes which inline primitives still have their original global.
    pub fn refresh_inline(&mut self) {
        let mut ok = 0u32;
        for (k, (&g, &p)) in self
            .inline_globals
            .iter()
            .zip(self.inline_prims.iter())
            .enumerate()
        {
            if matches!(self.globals.values.get(g as usize), Some(Value::Prim(q)) if *q == p) {
                ok |= 1 << k;
            }
        }
        self.inline_ok = ok;
    }

    /// One step of the budget per call; polls every `POLL_INTERVAL` steps
    /// and whenever the heap asks for a collection.
    #[inline]
    fn count_step(&mut self, since_poll: &mut u64) -> Result<(), VmError> {
        if self.steps_left == 0 {
            return Err(self.limit_error(
                ErrorKind::StepLimit,
                "step limit exceeded: the evaluation ran out of its step budget".into(),
            ));
        }
        self.steps_left -= 1;
        *since_poll += 1;
        if *since_poll >= POLL_INTERVAL || self.heap.wants_gc {
            *since_poll = 0;
            self.poll()?;
        }
        Ok(())
    }

    /// A global read found no value: the knowledge base may have it.
    /// `Some(v)`: use `v` and go on. `None`: control moved (a load was
    /// started, after which the instruction at `pc - 1` runs again, or an
    /// error was raised); the caller leaves its instruction loop.
    fn unbound_global(&mut self, g: u32, pc: usize) -> Result<Option<Value>, VmError> {
        match self.resolve_unbound(g) {
            Resolution::Value(v) => Ok(Some(v)),
            Resolution::Load(thunks, ids) => {
                let Some(run) = self
                    .run_thunks_global
                    .map(|i| self.globals.values[i as usize])
                else {
                    let fault = self.unbound(g, "");
                    self.raise_fault(fault)?;
                    return Ok(None);
                };
                self.pc = pc - 1;
                self.stack.push(run);
                self.stack.push(thunks);
                self.stack.push(ids);
                self.call(2, false)?;
                Ok(None)
            }
            Resolution::Unbound => {
                let fault = self.unbound(g, "");
                self.raise_fault(fault)?;
                Ok(None)
            }
            Resolution::Fault(f) => {
                self.raise_fault(f)?;
                Ok(None)
            }
        }
    }

    /// `arb:eval`'s argument as a template: a datum, or source text (all
    /// its forms, in order).
    fn compile_eval_expr(&mut self, expr: Value) -> Result<Rc<Template>, Fault> {
        let syn = if let Some(Object::Str(chars)) = self.heap.obj(expr) {
            let text: String = chars.iter().collect();
            let forms = crate::reader::read_all(&text, &mut self.syms).map_err(|e| {
                Fault::ReadError(format!("{}:{}: {}", e.pos.line, e.pos.col, e.message))
            })?;
            let begin = Syn::Sym(
                crate::syntax::Ident::plain(self.syms.intern("begin")),
                Pos::NONE,
            );
            let mut items = vec![begin];
            items.extend(forms);
            Syn::list(items, Pos::NONE)
        } else {
            value_to_syn(&self.heap, &mut self.syms, expr).map_err(Fault::ReadError)?
        };
        self.compile_form(&syn, &None, false)
            .map_err(|e| Fault::ReadError(e.message))
    }

    /// The error for reading (or `set!`ing) a global that has no value.
    fn unbound(&self, g: u32, who: &str) -> Fault {
        let name = self.globals.names[g as usize];
        Fault::Error(
            format!("{who}unbound variable: {}", self.syms.name(name)),
            vec![],
        )
    }

    fn used_before_defined(&mut self, k: u32) -> Fault {
        let name = match self.tmpl.consts.get(k as usize) {
            Some(Value::Sym(s)) => self.syms.name(*s).to_string(),
            _ => "variable".into(),
        };
        Fault::Error(
            format!("{name}: variable used before its definition"),
            vec![],
        )
    }

    #[inline]
    fn free(&self, i: u16) -> Value {
        match self.heap.obj(self.closure) {
            Some(Object::Closure(c)) => c.free[i as usize],
            _ => Value::Undefined,
        }
    }

    #[inline]
    fn unbox(&self, b: Value) -> Value {
        match self.heap.obj(b) {
            Some(Object::Box(v)) => *v,
            _ => Value::Undefined,
        }
    }

    #[inline]
    fn set_box(&mut self, b: Value, v: Value) {
        if let Some(Object::Box(slot)) = self.heap.obj_mut(b) {
            *slot = v;
        }
    }

    /// Inline primitives; the second operand is in `acc`, the first on the stack.
    #[inline]
    fn inline(&mut self, op: Inline) -> Result<(), Fault> {
        let b = self.acc;
        match op {
            Inline::Car | Inline::Cdr => {
                match self.heap.pair(b) {
                    Some((a, d)) => self.acc = if op == Inline::Car { a } else { d },
                    None => {
                        let who = if op == Inline::Car { "car" } else { "cdr" };
                        return Err(Fault::Error(
                            format!(
                                "{who}: expected a pair, got {}",
                                printer::write_string(&self.heap, &self.syms, b)
                            ),
                            vec![],
                        ));
                    }
                }
                return Ok(());
            }
            Inline::NullP => {
                self.acc = Value::Bool(matches!(b, Value::Null));
                return Ok(());
            }
            Inline::PairP => {
                self.acc = Value::Bool(self.heap.pair(b).is_some());
                return Ok(());
            }
            Inline::Not => {
                self.acc = Value::Bool(matches!(b, Value::Bool(false)));
                return Ok(());
            }
            Inline::ZeroP => {
                self.acc = match b {
                    Value::Int(i) => Value::Bool(i == 0),
                    Value::Float(f) => Value::Bool(f == 0.0),
                    _ => match Num::from_value(&self.heap, b) {
                        Some(n) => Value::Bool(n.is_zero()),
                        None => {
                            return Err(type_fault("zero?", "a number", b, &self.heap, &self.syms))
                        }
                    },
                };
                return Ok(());
            }
            _ => {}
        }
        let a = self.stack.pop().unwrap_or(Value::Unspecified);
        self.acc = match (op, a, b) {
            (Inline::Add, Value::Int(x), Value::Int(y)) => match x.checked_add(y) {
                Some(z) => Value::Int(z),
                None => self.arith_slow(op, a, b)?,
            },
            (Inline::Sub, Value::Int(x), Value::Int(y)) => match x.checked_sub(y) {
                Some(z) => Value::Int(z),
                None => self.arith_slow(op, a, b)?,
            },
            (Inline::Mul, Value::Int(x), Value::Int(y)) => match x.checked_mul(y) {
                Some(z) => Value::Int(z),
                None => self.arith_slow(op, a, b)?,
            },
            (Inline::Add, Value::Float(x), Value::Float(y)) => Value::Float(x + y),
            (Inline::Sub, Value::Float(x), Value::Float(y)) => Value::Float(x - y),
            (Inline::Mul, Value::Float(x), Value::Float(y)) => Value::Float(x * y),
            (Inline::NumEq, Value::Int(x), Value::Int(y)) => Value::Bool(x == y),
            (Inline::Lt, Value::Int(x), Value::Int(y)) => Value::Bool(x < y),
            (Inline::Gt, Value::Int(x), Value::Int(y)) => Value::Bool(x > y),
            (Inline::Le, Value::Int(x), Value::Int(y)) => Value::Bool(x <= y),
            (Inline::Ge, Value::Int(x), Value::Int(y)) => Value::Bool(x >= y),
            (Inline::EqP, _, _) => Value::Bool(a.eq(b)),
            (Inline::Cons, _, _) => self.heap.cons(a, b),
            (Inline::VectorRef, _, _) => match (self.heap.obj(a), b) {
                (Some(Object::Vector(v)), Value::Int(i)) => {
                    match usize::try_from(i).ok().and_then(|i| v.get(i)) {
                        Some(x) => *x,
                        None => {
                            let msg = format!(
                                "vector-ref: index {i} out of range for a vector of length {}",
                                v.len()
                            );
                            return Err(Fault::Error(msg, vec![]));
                        }
                    }
                }
                (Some(Object::Vector(_)), _) => {
                    return Err(type_fault(
                        "vector-ref",
                        "an exact integer index",
                        b,
                        &self.heap,
                        &self.syms,
                    ))
                }
                _ => {
                    return Err(type_fault(
                        "vector-ref",
                        "a vector",
                        a,
                        &self.heap,
                        &self.syms,
                    ))
                }
            },
            _ => self.arith_slow(op, a, b)?,
        };
        Ok(())
    }

    fn arith_slow(&mut self, op: Inline, a: Value, b: Value) -> Result<Value, Fault> {
        let name = match op {
            Inline::Add => "+",
            Inline::Sub => "-",
            Inline::Mul => "*",
            Inline::NumEq => "=",
            Inline::Lt => "<",
            Inline::Gt => ">",
            Inline::Le => "<=",
            Inline::Ge => ">=",
            _ => "arithmetic",
        };
        let x = Num::from_value(&self.heap, a)
            .ok_or_else(|| type_fault(name, "a number", a, &self.heap, &self.syms))?;
        let y = Num::from_value(&self.heap, b)
            .ok_or_else(|| type_fault(name, "a number", b, &self.heap, &self.syms))?;
        let cmp = |o: Option<std::cmp::Ordering>, f: fn(std::cmp::Ordering) -> bool| {
            Value::Bool(o.is_some_and(f))
        };
        Ok(match op {
            Inline::Add => number::add(&x, &y).into_value(&mut self.heap),
            Inline::Sub => number::sub(&x, &y).into_value(&mut self.heap),
            Inline::Mul => number::mul(&x, &y).into_value(&mut self.heap),
            Inline::NumEq => cmp(number::compare(&x, &y), |o| o.is_eq()),
            Inline::Lt => cmp(number::compare(&x, &y), |o| o.is_lt()),
            Inline::Gt => cmp(number::compare(&x, &y), |o| o.is_gt()),
            Inline::Le => cmp(number::compare(&x, &y), |o| o.is_le()),
            Inline::Ge => cmp(number::compare(&x, &y), |o| o.is_ge()),
            _ => Value::Unspecified,
        })
    }
}

/// The text of a raised object: an error object's message and irritants,
/// or the object itself.
pub fn condition_text(heap: &Heap, syms: &SymbolTable, obj: Value) -> String {
    if let Some(Object::Error(e)) = heap.obj(obj) {
        let mut s = printer::display_string(heap, syms, e.message);
        let mut irr = e.irritants;
        let mut first = true;
        while let Some((a, d)) = heap.pair(irr) {
            s.push_str(if first && !s.ends_with(':') {
                ": "
            } else {
                " "
            });
            first = false;
            s.push_str(&printer::write_string(heap, syms, a));
            irr = d;
        }
        return s;
    }
    format!(
        "uncaught exception: {}",
        printer::write_string(heap, syms, obj)
    )
}

pub fn type_fault(who: &str, expected: &str, got: Value, heap: &Heap, syms: &SymbolTable) -> Fault {
    Fault::Error(
        format!(
            "{who}: expected {expected}, got {}",
            printer::write_string(heap, syms, got)
        ),
        vec![],
    )
}

fn arity_message(name: &str, min: usize, max: Option<usize>, got: usize) -> String {
    let plural = |n: usize| if n == 1 { "argument" } else { "arguments" };
    match max {
        Some(m) if m == min => format!("{name}: expected {min} {}, got {got}", plural(min)),
        Some(m) => format!("{name}: expected {min} to {m} arguments, got {got}"),
        None => format!("{name}: expected at least {min} {}, got {got}", plural(min)),
    }
}
