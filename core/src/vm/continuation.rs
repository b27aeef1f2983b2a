//! Continuations: a capture copies the stacks and the dynamic state (the
//! `dynamic-wind` list, the handler stack, the tier); a throw puts them
//! back. Assigned variables live in boxes, so re-entering a continuation
//! does not bring back their old values.
//!
//! Escape-only continuations (`%call/ec`, what `guard` enters a guard
//! with) copy nothing: the call pushes a frame of the internal template
//! `escape_return` (a lone `Return`) whose closure slot holds the escape
//! object, and calls the procedure above it. The frame marks the
//! activation: an escape is live while its frame is on the current
//! stack, found at the index it records holding that very object (the
//! frame of one activation, or its copy in a full continuation that was
//! re-entered: a generator that leaves a guard's body and comes back).
//! Escaping is dropping what is above the frame and resuming it with
//! the values, which then returns as the call would have; a dead escape
//! is a Scheme error, checked before any after thunk runs.

use std::rc::Rc;

use super::call::Next;
use super::{Vm, VmError};
use crate::value::code::Frame;
use crate::value::{Continuation, Escape, Object, Value};

/// The error of an escape invoked when its frame is not on the stack.
pub(super) const DEAD_ESCAPE: &str =
    "escape continuation: called after the extent of the %call/ec that made it ended";

impl Vm {
    /// Resumes continuation `k` with `vals`.
    pub(super) fn throw(&mut self, k: Value, vals: &[Value]) {
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
            // Never more rights than the session has now (a loaded
            // continuation could claim any tier).
            self.tier = c.tier.max(self.session_tier);
        }
        self.acc = v;
        // The continuation's top frame is where the value is delivered.
        if let Some(fr) = self.frames.pop() {
            self.resume_frame(fr);
        }
    }

    /// Before a capture copies the stack below `callee_idx` and the
    /// frames: is there room for the copy under the memory cap? Checked
    /// at every capture, not only at the next poll: a deepening recursion
    /// that captures at every level copies ever longer stacks, and
    /// between two polls (a few thousand steps) the copies alone could
    /// take the process far past the cap.
    pub(super) fn check_capture_room(&mut self, callee_idx: usize) -> Result<(), VmError> {
        let bytes = callee_idx * std::mem::size_of::<Value>()
            + (self.frames.len() + 1) * std::mem::size_of::<Frame>()
            + 64;
        if self.held() + bytes > self.heap.cap {
            if !self.collect_or_stop() {
                return Err(self.interrupted_error());
            }
            if self.held() + bytes > self.heap.cap {
                return Err(self.memory_limit_error());
            }
        }
        Ok(())
    }

    /// `(%call/ec f)`, its arguments above `callee_idx`: calls `f` with
    /// an escape of the call.
    pub(super) fn call_with_escape(&mut self, callee_idx: usize, f: Value, tail: bool) -> Next {
        // The continuation of the call, as for a closure's: in tail
        // position the caller's (this frame slides away), else this one.
        let base = if tail {
            let base = self.fp - 1;
            self.stack.drain(base..callee_idx);
            base
        } else {
            self.push_frame();
            callee_idx
        };
        let k = self.heap.alloc(Object::Escape(Box::new(Escape {
            frame: self.frames.len() as u32,
            height: base as u32,
            winders: self.winders,
            handlers: self.handlers,
            tier: self.tier,
        })));
        self.frames.push(Frame {
            template: self.escape_return.clone(),
            pc: 0,
            fp: (base + 1) as u32,
            closure: k,
        });
        // `f` is called in tail position from a frame of the same template
        // just above, as code of its own would call it (the callee above
        // the frame's slots, of which it has none): whatever `f` is (a
        // closure, a primitive, `call/cc`, a continuation), the escape's
        // frame is in `frames` while it runs, its return comes back to
        // that frame, which returns, and a fault raised in its place
        // leaves a frame that fits its stack (`verify::check_frames`, in
        // a dump of the handler's continuation). Nothing is copied.
        self.stack.truncate(base);
        self.stack.push(k);
        self.stack.push(k);
        self.stack.push(f);
        self.stack.push(k);
        self.tmpl = self.escape_return.clone();
        self.pc = 0;
        self.fp = base + 2;
        self.closure = k;
        Next::TailCall(1)
    }

    /// Whether escape `k`'s frame is on the current stack: the frame at
    /// its index is of `escape_return` with `k` itself in its closure
    /// slot (`k` is live, so no other object has its reference), at its
    /// height.
    pub(super) fn escape_is_live(&self, k: Value) -> bool {
        let Some(Object::Escape(e)) = self.heap.obj(k) else {
            return false;
        };
        let (frame, height) = (e.frame as usize, e.height as usize);
        self.frames.get(frame).is_some_and(|fr| {
            Rc::ptr_eq(&fr.template, &self.escape_return)
                && fr.closure.eq(k)
                && (fr.fp as usize).checked_sub(1) == Some(height)
        }) && self.stack.len() > height
    }

    /// Escapes to live escape `k` with `vals`: everything above its frame
    /// is dropped, the dynamic state of its call put back, and the frame
    /// resumed with the values (its `Return` then returns from the call).
    /// The caller has checked `escape_is_live` and run the after thunks.
    pub(super) fn escape(&mut self, k: Value, vals: &[Value]) {
        let v = match vals.len() {
            1 => vals[0],
            _ => self.heap.alloc(Object::Values(vals.to_vec())),
        };
        let Some(Object::Escape(e)) = self.heap.obj(k) else {
            return;
        };
        let (frame, height) = (e.frame as usize, e.height as usize);
        self.winders = e.winders;
        self.handlers = e.handlers;
        // Never more rights than the session has now, as for a throw.
        self.tier = e.tier.max(self.session_tier);
        self.frames.truncate(frame + 1);
        self.stack.truncate(height + 1);
        self.acc = v;
        if let Some(fr) = self.frames.pop() {
            self.resume_frame(fr);
        }
    }

    pub(super) fn capture(&mut self, callee_idx: usize, tail: bool) -> Value {
        // Copies of exactly their length, made once: a copy grown by a
        // push and shrunk again leaves behind two freed blocks larger than
        // any before, which a program capturing ever deeper stacks never
        // reuses (the process held half as much again as the heap).
        let (stack, frames) = if tail {
            (self.stack[..self.fp - 1].to_vec(), self.frames.to_vec())
        } else {
            let mut frames = Vec::with_capacity(self.frames.len() + 1);
            frames.extend_from_slice(&self.frames);
            frames.push(Frame {
                template: self.tmpl.clone(),
                pc: self.pc as u32,
                fp: self.fp as u32,
                closure: self.closure,
            });
            (self.stack[..callee_idx].to_vec(), frames)
        };
        self.heap.alloc(Object::Continuation(Box::new(Continuation {
            stack,
            frames,
            winders: self.winders,
            handlers: self.handlers,
            tier: self.tier,
        })))
    }
}
