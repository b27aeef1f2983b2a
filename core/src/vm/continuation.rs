//! Continuations: a capture copies the stacks and the dynamic state (the
//! `dynamic-wind` list, the handler stack, the tier); a throw puts them
//! back. Assigned variables live in boxes, so re-entering a continuation
//! does not bring back their old values.

use super::{Vm, VmError};
use crate::value::code::Frame;
use crate::value::{Continuation, Object, Value};

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
