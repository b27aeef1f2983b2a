//! Procedure calls and returns: closures (a new frame, or the current one
//! replaced in tail position), primitives of each kind, `case-lambda`,
//! continuations and parameter objects.

use std::rc::Rc;

use super::{Vm, VmError};
use crate::builtins::{Budget, Ctx, Fault, Io, KCtx, PrimFn, PrimKind};
use crate::repo::forest::Timestamp;
use crate::value::code::{Frame, Template};
use crate::value::{Object, Value};

/// What a call did: control is where it should be, or another call is to
/// be made of the procedure now below `n` arguments on the stack (`apply`,
/// `call/cc`, a `case-lambda` clause, ...).
pub(super) enum Next {
    Done,
    Call(usize),
    /// As `Call`, the call in tail position whatever the first call was
    /// (`%call/ec` calls its procedure from the frame it made).
    TailCall(usize),
}

/// What a knowledge primitive makes of a string argument, in copies of
/// its UTF-8 bytes (see `Vm::check_text_room`).
const TEXT_COPIES: usize = 2;

impl Vm {
    /// Continuation (or escape) `k`, called with `vals` where the
    /// `dynamic-wind` list is not the one it was made in: a call of the
    /// prelude's `%invoke-continuation`, which runs the after and before
    /// thunks on the way and then throws (None without the prelude).
    fn wind_to(&mut self, callee_idx: usize, k: Value, vals: &[Value]) -> Option<Next> {
        let g = self.hooks.invoke_continuation?;
        let invoke = self.globals.values[g as usize];
        let list = self.heap.list(vals);
        self.stack.truncate(callee_idx);
        self.stack.push(invoke);
        self.stack.push(k);
        self.stack.push(list);
        Some(Next::Call(2))
    }

    /// Calls the procedure below the `n` arguments on top of the stack.
    /// In tail position the current frame is replaced.
    pub(super) fn call(&mut self, n: usize, tail: bool) -> Result<(), VmError> {
        let mut n = n;
        let mut tail = tail;
        loop {
            let callee_idx = self.stack.len() - n - 1;
            let f = self.stack[callee_idx];
            let next = match f {
                Value::Prim(id) => self.call_primitive(id, callee_idx, n, tail)?,
                Value::Obj(r) => {
                    if let Object::Closure(c) = self.heap.get(r) {
                        let t = c.template.clone();
                        return self.enter(t, f, callee_idx, n, tail);
                    }
                    self.call_object(f, callee_idx, n, tail)?
                }
                _ => {
                    self.stack.truncate(callee_idx);
                    let fault = self.not_procedure(f);
                    self.raise_fault(fault)?;
                    Next::Done
                }
            };
            match next {
                Next::Done => return Ok(()),
                Next::Call(m) => n = m,
                Next::TailCall(m) => {
                    n = m;
                    tail = true;
                }
            }
        }
    }

    /// A primitive's value in the accumulator, the call's values off the
    /// stack, and a return when the call was in tail position.
    pub(super) fn deliver(&mut self, callee_idx: usize, v: Value, tail: bool) {
        self.stack.truncate(callee_idx);
        self.acc = v;
        if tail {
            self.do_return();
        }
    }

    fn call_primitive(
        &mut self,
        id: u32,
        callee_idx: usize,
        n: usize,
        tail: bool,
    ) -> Result<Next, VmError> {
        let Some(prim) = self.prims.get(id) else {
            self.stack.truncate(callee_idx);
            let fault = self.not_procedure(Value::Prim(id));
            self.raise_fault(fault)?;
            return Ok(Next::Done);
        };
        if n < prim.min as usize || prim.max.is_some_and(|m| n > m as usize) {
            let msg = arity_message(
                prim.name,
                prim.min as usize,
                prim.max.map(|m| m as usize),
                n,
            );
            self.stack.truncate(callee_idx);
            self.raise_fault(Fault::Error(msg, vec![]))?;
            return Ok(Next::Done);
        }
        match prim.kind {
            PrimKind::Simple(func) => {
                self.call_simple_by(func, callee_idx, tail)?;
                Ok(Next::Done)
            }
            PrimKind::Knowledge(func) => {
                self.check_text_room(callee_idx)?;
                let host = self.host.get();
                let new_indexes = &self.new_indexes;
                let knowledge = self.knowledge.get_or_insert_with(|| {
                    super::new_knowledge(new_indexes, Timestamp::from_seconds(host.now()))
                });
                let v = {
                    let mut ctx = KCtx {
                        heap: &mut self.heap,
                        syms: &mut self.syms,
                        k: knowledge,
                        tier: self.tier,
                        host,
                    };
                    func(&mut ctx, &self.stack[callee_idx + 1..])
                };
                // What the knowledge base did that its user should hear of
                // (a stored index refused and built again).
                for note in knowledge.take_notes() {
                    self.host.get().write_error(&format!("arbores: {note}\n"));
                }
                self.sync_knowledge();
                self.deliver(callee_idx, v, tail);
                Ok(Next::Done)
            }
            PrimKind::Control(c) => self.control(c, callee_idx, n, tail),
        }
    }

    /// Before a knowledge primitive runs (it cannot stop part way): is
    /// there room under the memory cap for what it makes of the strings it
    /// is given? Each is copied out of the heap as UTF-8 and, for a search,
    /// split into words: about twice its bytes. A 100 MB query must end
    /// with `memory-limit`, not take the process past the cap.
    fn check_text_room(&mut self, callee_idx: usize) -> Result<(), VmError> {
        let mut bytes = 0usize;
        for v in &self.stack[callee_idx + 1..] {
            if let Some(Object::Str(s)) = self.heap.obj(*v) {
                bytes = bytes.saturating_add(if s.len() < 1 << 16 {
                    s.len() * 4
                } else {
                    s.iter().map(|c| c.len_utf8()).sum()
                });
            }
        }
        let need = bytes.saturating_mul(TEXT_COPIES);
        if need < 1 << 20 || self.heap.check_room(need).is_ok() {
            return Ok(());
        }
        if !self.collect_or_stop() {
            return Err(self.interrupted_error());
        }
        if self.heap.check_room(need).is_ok() {
            Ok(())
        } else {
            Err(self.memory_limit_error())
        }
    }

    /// The function of primitive `id` when it is a simple one that takes
    /// `n` arguments, for `call_simple` (`CALL_FAST_PATHS`).
    #[inline(always)]
    pub(super) fn simple_primitive(&self, id: u32, n: usize) -> Option<PrimFn> {
        let prim = self.prims.get(id)?;
        match prim.kind {
            PrimKind::Simple(func)
                if n >= prim.min as usize && !prim.max.is_some_and(|m| n > m as usize) =>
            {
                Some(func)
            }
            _ => None,
        }
    }

    /// `call_simple`, made in the guest by one of two functions, one for a
    /// call in tail position and one for the others: with `tail` an
    /// argument, `call_simple` took five in the guest (its result's
    /// address among them), and the fifth went on the stack, written as
    /// four bytes and read back as eight, a stalled load at every call
    /// (docs/PERFORMANCE.md, "A Value's payload as a word").
    #[inline(always)]
    pub(super) fn call_simple_by(
        &mut self,
        func: PrimFn,
        callee_idx: usize,
        tail: bool,
    ) -> Result<(), VmError> {
        if !cfg!(target_arch = "wasm32") {
            self.call_simple(func, callee_idx, tail)
        } else if tail {
            self.call_simple_tail(func, callee_idx)
        } else {
            self.call_simple_here(func, callee_idx)
        }
    }

    #[inline(never)]
    fn call_simple_tail(&mut self, func: PrimFn, callee_idx: usize) -> Result<(), VmError> {
        self.call_simple(func, callee_idx, true)
    }

    #[inline(never)]
    fn call_simple_here(&mut self, func: PrimFn, callee_idx: usize) -> Result<(), VmError> {
        self.call_simple(func, callee_idx, false)
    }

    /// A call of simple primitive `func`, its arguments (as many as it
    /// takes) above `callee_idx` on the stack: its value delivered, or its
    /// fault raised.
    #[cfg_attr(target_arch = "wasm32", inline(always))]
    pub(super) fn call_simple(
        &mut self,
        func: PrimFn,
        callee_idx: usize,
        tail: bool,
    ) -> Result<(), VmError> {
        let mut r = self.run_simple(func, callee_idx);
        if matches!(r, Err(Fault::OutOfMemory)) && self.heap.metered().is_some() {
            // Refused for want of room counting garbage: collect (the
            // arguments are on the stack) and try once more.
            r = if self.collect_or_stop() {
                self.run_simple(func, callee_idx)
            } else {
                Err(Fault::Interrupted)
            };
        }
        match r {
            Ok(v) => self.deliver(callee_idx, v, tail),
            Err(e) => {
                let callee = self.stack[callee_idx];
                self.stack.truncate(callee_idx);
                let e = self.named_by_primitive(e, callee);
                let e = self.as_called(e, Some(callee));
                self.raise_fault(e)?;
            }
        }
        Ok(())
    }

    fn run_simple(&mut self, func: PrimFn, callee_idx: usize) -> Result<Value, Fault> {
        let memory = self.budget_memory();
        let mut ctx = Ctx {
            heap: &mut self.heap,
            syms: &mut self.syms,
            out: &mut self.out,
            budget: Budget {
                steps_left: &mut self.steps_left,
                unpolled: &mut self.work_unpolled,
                host: self.host.get(),
                memory,
            },
            io: Io {
                globals: &self.globals.values,
                params: self.hooks.ports,
                files: &mut self.file_outputs,
            },
        };
        func(&mut ctx, &self.stack[callee_idx + 1..])
    }

    /// A call of a heap object that is not a closure.
    fn call_object(
        &mut self,
        f: Value,
        callee_idx: usize,
        n: usize,
        tail: bool,
    ) -> Result<Next, VmError> {
        match self.heap.obj(f) {
            Some(Object::CaseLambda(clauses)) => {
                let chosen = clauses.iter().copied().find(|c| match self.heap.obj(*c) {
                    Some(Object::Closure(cl)) => {
                        let t = &cl.template;
                        n == t.nparams as usize || (t.rest && n >= t.nparams as usize)
                    }
                    _ => false,
                });
                match chosen {
                    Some(c) => {
                        self.stack[callee_idx] = c;
                        Ok(Next::Call(n))
                    }
                    None => {
                        let who = self
                            .global_name_of(f)
                            .unwrap_or_else(|| "case-lambda".into());
                        self.stack.truncate(callee_idx);
                        self.raise_fault(Fault::Error(
                            format!("{who}: no clause accepts {n} arguments"),
                            vec![],
                        ))?;
                        Ok(Next::Done)
                    }
                }
            }
            Some(Object::Continuation(k)) => {
                let same_winders = k.winders.eq(self.winders);
                let vals: Vec<Value> = self.stack[callee_idx + 1..].to_vec();
                if !same_winders {
                    if let Some(next) = self.wind_to(callee_idx, f, &vals) {
                        return Ok(next);
                    }
                }
                self.throw(f, &vals);
                Ok(Next::Done)
            }
            Some(Object::Escape(e)) => {
                let same_winders = e.winders.eq(self.winders);
                // Checked before any `dynamic-wind` after thunk runs: an
                // escape whose frame is gone leaves everything as it is.
                if !self.escape_is_live(f) {
                    self.stack.truncate(callee_idx);
                    self.raise_fault(Fault::Error(
                        super::continuation::DEAD_ESCAPE.into(),
                        vec![],
                    ))?;
                    return Ok(Next::Done);
                }
                let vals: Vec<Value> = self.stack[callee_idx + 1..].to_vec();
                if !same_winders {
                    // As for a continuation: the prelude runs the after
                    // thunks, then `%throw` escapes.
                    if let Some(next) = self.wind_to(callee_idx, f, &vals) {
                        return Ok(next);
                    }
                }
                self.escape(f, &vals);
                Ok(Next::Done)
            }
            Some(Object::Parameter { value, .. }) => {
                let v = *value;
                if n != 0 {
                    self.stack.truncate(callee_idx);
                    let who = self.global_name_of(f).unwrap_or_else(|| "parameter".into());
                    self.raise_fault(Fault::Error(
                        format!("{who}: a parameter object takes no arguments, got {n}"),
                        vec![],
                    ))?;
                    return Ok(Next::Done);
                }
                self.deliver(callee_idx, v, tail);
                Ok(Next::Done)
            }
            _ => {
                self.stack.truncate(callee_idx);
                let fault = self.not_procedure(f);
                self.raise_fault(fault)?;
                Ok(Next::Done)
            }
        }
    }

    pub(super) fn enter(
        &mut self,
        t: Rc<Template>,
        f: Value,
        callee_idx: usize,
        n: usize,
        tail: bool,
    ) -> Result<(), VmError> {
        let np = t.nparams as usize;
        if n != np && !(t.rest && n >= np) {
            let name = match t.name {
                Some(_) => self.proc_name(&t),
                None => self.global_name_of(f).unwrap_or_else(|| self.proc_name(&t)),
            };
            let msg = arity_message(&name, np, if t.rest { None } else { Some(np) }, n);
            self.stack.truncate(callee_idx);
            return self.raise_fault(Fault::Error(msg, vec![]));
        }
        if t.rest {
            let extra = self.heap.list(&self.stack[callee_idx + 1 + np..]);
            self.stack.truncate(callee_idx + 1 + np);
            self.stack.push(extra);
        }
        self.enter_frame(t, f, callee_idx, tail);
        Ok(())
    }

    /// A call of a closure given as many arguments as its template takes,
    /// with no rest list, made without `call` (`CALL_FAST_PATHS`, and
    /// natively always): `false` when the callee is anything else, for
    /// `call` to make.
    #[inline(always)]
    pub(super) fn enter_closure_exact(&mut self, n: usize, tail: bool) -> bool {
        let Some(callee_idx) = self.stack.len().checked_sub(n + 1) else {
            return false;
        };
        let f = self.stack[callee_idx];
        let Value::Obj(r) = f else {
            return false;
        };
        let Object::Closure(c) = self.heap.get(r) else {
            return false;
        };
        if c.template.rest || c.template.nparams as usize != n {
            return false;
        }
        let t = c.template.clone();
        self.enter_frame(t, f, callee_idx, tail);
        true
    }

    /// Makes template `t` of closure `f`, its arguments checked and in
    /// place above `callee_idx`, the running code: in tail position over
    /// the current frame, else in a new one.
    #[inline(always)]
    fn enter_frame(&mut self, t: Rc<Template>, f: Value, callee_idx: usize, tail: bool) {
        if tail {
            // Slide callee and arguments down over the current frame.
            let base = self.fp - 1;
            self.stack.drain(base..callee_idx);
            self.fp = base + 1;
            self.tmpl = t;
        } else {
            let caller = std::mem::replace(&mut self.tmpl, t);
            self.push_caller(caller);
            self.fp = callee_idx + 1;
        }
        self.closure = f;
        self.pc = 0;
    }

    /// Pushes the frame of the caller, whose template is `caller`, for a
    /// call that is not in tail position.
    ///
    /// Natively a function of its own, the frame written in place when
    /// there is room: inlined into the instruction loop, the frame was
    /// built on the stack and copied, its copy reading 16 bytes that had
    /// been written as two halves (a stalled store forwarding at every
    /// call; docs/PERFORMANCE.md, "Calls within the loop and fused
    /// pairs"). In the guest as it was: the call measured no faster there.
    #[cfg_attr(not(target_arch = "wasm32"), inline(never))]
    #[cfg_attr(target_arch = "wasm32", inline(always))]
    fn push_caller(&mut self, caller: Rc<Template>) {
        let frame = Frame {
            template: caller,
            pc: self.pc as u32,
            fp: self.fp as u32,
            closure: self.closure,
        };
        if cfg!(target_arch = "wasm32") || self.frames.len() < self.frames.capacity() {
            self.frames.push(frame);
        } else {
            self.push_frame_growing(frame);
        }
    }

    #[cold]
    #[inline(never)]
    fn push_frame_growing(&mut self, frame: Frame) {
        self.frames.push(frame);
    }

    #[inline]
    pub(super) fn do_return(&mut self) {
        self.stack.truncate(self.fp - 1);
        if let Some(fr) = self.frames.pop() {
            self.resume_frame(fr);
        }
    }

    /// Pushes the running code as the caller's frame (a call that is not in
    /// tail position).
    pub(super) fn push_frame(&mut self) {
        self.frames.push(Frame {
            template: self.tmpl.clone(),
            pc: self.pc as u32,
            fp: self.fp as u32,
            closure: self.closure,
        });
    }

    /// Makes `fr` the running code (a return, or a thrown continuation).
    pub(super) fn resume_frame(&mut self, fr: Frame) {
        self.tmpl = fr.template;
        self.pc = fr.pc as usize;
        self.fp = fr.fp as usize;
        self.closure = fr.closure;
    }
}

pub(super) fn arity_message(name: &str, min: usize, max: Option<usize>, got: usize) -> String {
    let plural = |n: usize| if n == 1 { "argument" } else { "arguments" };
    match max {
        Some(m) if m == min => format!("{name}: expected {min} {}, got {got}", plural(min)),
        Some(m) => format!("{name}: expected {min} to {m} arguments, got {got}"),
        None => format!("{name}: expected at least {min} {}, got {got}", plural(min)),
    }
}
