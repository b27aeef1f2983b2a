//! The control primitives: what a primitive cannot do without the VM
//! (calls with computed arguments, continuations, the dynamic state,
//! `eval`, running code at a lower tier, the end of a knowledge load).

use std::rc::Rc;

use super::call::Next;
use super::{Vm, VmError};
use crate::builtins::{Control, Fault};
use crate::compiler::front::EvalEnv;
use crate::datum;
use crate::pos::Pos;
use crate::printer;
use crate::reader;
use crate::repo::Tier;
use crate::symbol::Sym;
use crate::syntax::{Ident, Syn};
use crate::value::code::{Frame, Template};
use crate::value::{Closure, Object, Value};

/// Every symbol `s` holds, once each (shared parts walked once: the walk
/// is iterative, and bounded by the size of the syntax, not its
/// unfolding).
fn symbols_of(s: &Syn) -> std::collections::BTreeSet<Sym> {
    let mut out = std::collections::BTreeSet::new();
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![s];
    while let Some(s) = todo.pop() {
        match s {
            Syn::Sym(id, _) => {
                out.insert(id.sym);
            }
            Syn::List(items, tail, _) => {
                if seen.insert(items.as_ptr() as usize) {
                    todo.extend(items.iter());
                    todo.extend(tail.as_deref());
                }
            }
            Syn::Vector(items, _) => {
                if seen.insert(items.as_ptr() as usize) {
                    todo.extend(items.iter());
                }
            }
            Syn::LabelDef(_, inner, _) => todo.push(inner),
            Syn::Atom(..) | Syn::LabelRef(..) => {}
        }
    }
    out
}

impl Vm {
    /// Performs control primitive `c`, called with `n` arguments above
    /// `callee_idx` on the stack.
    pub(super) fn control(
        &mut self,
        c: Control,
        callee_idx: usize,
        n: usize,
        tail: bool,
    ) -> Result<Next, VmError> {
        let arg = |vm: &Vm, i: usize| vm.stack[callee_idx + 1 + i];
        match c {
            Control::Apply => self.apply(callee_idx, n),
            Control::CallCC => {
                let f = arg(self, 0);
                if !self.is_procedure(f) {
                    let who = match self.stack[callee_idx] {
                        Value::Prim(id) => self.prims.get(id).map(|p| p.name),
                        _ => None,
                    };
                    let who = who.unwrap_or("call-with-current-continuation");
                    return self.expected_procedure(callee_idx, who, f);
                }
                self.check_capture_room(callee_idx)?;
                let k = self.capture(callee_idx, tail);
                self.stack.truncate(callee_idx);
                self.stack.push(f);
                self.stack.push(k);
                Ok(Next::Call(1))
            }
            Control::CallEC => {
                let f = arg(self, 0);
                if !self.is_procedure(f) {
                    return self.expected_procedure(callee_idx, "%call/ec", f);
                }
                Ok(self.call_with_escape(callee_idx, f, tail))
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
                Ok(Next::Call(vals.len()))
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
                match self.heap.obj(k) {
                    Some(Object::Continuation(_)) => self.throw(k, &vals),
                    Some(Object::Escape(_)) if self.escape_is_live(k) => self.escape(k, &vals),
                    Some(Object::Escape(_)) => {
                        let message = super::continuation::DEAD_ESCAPE.into();
                        return self.fail(callee_idx, Fault::Error(message, vec![]));
                    }
                    _ => {
                        return self.fail(
                            callee_idx,
                            Fault::Error("%throw: not a continuation".into(), vec![]),
                        );
                    }
                }
                Ok(Next::Done)
            }
            Control::Abort => {
                let obj = arg(self, 0);
                self.stack.truncate(callee_idx);
                Err(self.uncaught(obj))
            }
            Control::Winders => self.answer(callee_idx, self.winders, tail),
            Control::Handlers => self.answer(callee_idx, self.handlers, tail),
            Control::SetWinders => {
                self.winders = arg(self, 0);
                self.answer(callee_idx, Value::Unspecified, tail)
            }
            Control::SetHandlers => {
                self.handlers = arg(self, 0);
                self.answer(callee_idx, Value::Unspecified, tail)
            }
            Control::Eval => {
                let env = (n == 2).then(|| arg(self, 1));
                self.eval_datum(callee_idx, arg(self, 0), env)
            }
            Control::Environment => self.environment(callee_idx, arg(self, 0), tail),
            Control::EvalAtTier => self.eval_at_tier(callee_idx, arg(self, 0), arg(self, 1), tail),
            Control::LoadEnded => {
                let done = !matches!(arg(self, 0), Value::Bool(false));
                let ids: Vec<u64> = (1..n)
                    .filter_map(|i| crate::arb::values::as_id(&self.heap, arg(self, i)))
                    .collect();
                self.end_loading(done, &ids);
                self.answer(callee_idx, Value::Unspecified, tail)
            }
            Control::Suspend => self.suspend(callee_idx, arg(self, 0), tail),
            Control::BoundNames => {
                let prefix = match n {
                    0 => String::new(),
                    _ => match self.heap.obj(arg(self, 0)) {
                        Some(Object::Str(s)) => s.iter().collect(),
                        _ => {
                            let shown = printer::shown(&self.heap, &self.syms, arg(self, 0));
                            let message = format!("%bound-names: expected a string, got {shown}");
                            return self.fail(callee_idx, Fault::Error(message, vec![]));
                        }
                    },
                };
                let names = self.bound_names(&prefix);
                if let Err(e) = self
                    .heap
                    .check_room(names.iter().map(|n| n.len() * 4 + 64).sum())
                {
                    return self.fail(callee_idx, e.into());
                }
                let items: Vec<Value> = names.iter().map(|n| self.heap.string(n)).collect();
                let list = self.heap.list(&items);
                self.answer(callee_idx, list, tail)
            }
            Control::ContinuationWinders => {
                let v = match self.heap.obj(arg(self, 0)) {
                    Some(Object::Continuation(c)) => c.winders,
                    Some(Object::Escape(e)) => e.winders,
                    _ => Value::Null,
                };
                self.answer(callee_idx, v, tail)
            }
        }
    }

    /// The names `%bound-names` lists: sorted, without duplicates; the
    /// names of stored knowledge (at most 500 of them) included.
    pub(crate) fn bound_names(&self, prefix: &str) -> Vec<String> {
        let g = &self.globals;
        let visible =
            |name: &str| name.starts_with(prefix) && !name.starts_with('%') && !name.contains('@');
        let mut names = std::collections::BTreeSet::new();
        for (i, s) in g.names.iter().enumerate() {
            let bound = !matches!(g.values.get(i), None | Some(Value::Undefined));
            let name = self.syms.name(*s);
            if bound && visible(name) && !g.hidden.contains_key(s) {
                names.insert(name.to_string());
            }
        }
        for s in g.syntax.keys().chain(g.aliases.keys()) {
            let name = self.syms.name(*s);
            if visible(name) && !g.hidden.contains_key(s) {
                names.insert(name.to_string());
            }
        }
        // Stored knowledge is used by name: its names complete too.
        if let Some(k) = &self.knowledge {
            let hits = k.indexes.symbols.search(
                prefix,
                crate::repo::index::symbol::SymbolMode::Prefix,
                500,
            );
            for hit in hits.into_iter().flatten() {
                if visible(&hit.name) {
                    names.insert(hit.name);
                }
            }
        }
        names.into_iter().collect()
    }

    fn is_procedure(&self, v: Value) -> bool {
        crate::builtins::control::is_procedure_in(&self.heap, v)
    }

    /// `WHO: expected a procedure, got F`, raised in place of the call.
    fn expected_procedure(
        &mut self,
        callee_idx: usize,
        who: &str,
        f: Value,
    ) -> Result<Next, VmError> {
        let shown = printer::shown(&self.heap, &self.syms, f);
        let message = format!("{who}: expected a procedure, got {shown}");
        self.fail(callee_idx, Fault::Error(message, vec![]))
    }

    /// The primitive's value `v`: the call is over.
    fn answer(&mut self, callee_idx: usize, v: Value, tail: bool) -> Result<Next, VmError> {
        self.deliver(callee_idx, v, tail);
        Ok(Next::Done)
    }

    /// The primitive failed with `f`: raised in place of the call.
    pub(super) fn fail(&mut self, callee_idx: usize, f: Fault) -> Result<Next, VmError> {
        self.stack.truncate(callee_idx);
        self.raise_fault(f)?;
        Ok(Next::Done)
    }

    /// `(apply f a ... lst)`.
    fn apply(&mut self, callee_idx: usize, n: usize) -> Result<Next, VmError> {
        let f = self.stack[callee_idx + 1];
        if !self.is_procedure(f) {
            return self.expected_procedure(callee_idx, "apply", f);
        }
        let lst = self.stack[callee_idx + n];
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
            let shown = printer::shown(&self.heap, &self.syms, lst);
            let message = format!("apply: last argument must be a proper list, got {shown}");
            return self.fail(callee_idx, Fault::Error(message, vec![]));
        }
        let middle: Vec<Value> = self.stack[callee_idx + 2..callee_idx + n].to_vec();
        self.stack.truncate(callee_idx);
        self.stack.push(f);
        self.stack.extend_from_slice(&middle);
        self.stack.extend_from_slice(&items);
        Ok(Next::Call(middle.len() + items.len()))
    }

    /// `(%environment SETS)`: the environment of the import sets, or the
    /// thunks of the body of a bundled library they need that has not run
    /// yet (the prelude's `environment` runs them and asks again).
    fn environment(&mut self, callee_idx: usize, sets: Value, tail: bool) -> Result<Next, VmError> {
        let fail =
            |vm: &mut Vm, message: String| vm.fail(callee_idx, Fault::Error(message, vec![]));
        let mut specs = Vec::new();
        let mut l = sets;
        while let Some((set, rest)) = self.heap.pair(l) {
            match datum::to_syntax(&self.heap, &mut self.syms, set) {
                Ok(s) => specs.push(s),
                Err(msg) => return fail(self, format!("environment: {msg}")),
            }
            l = rest;
        }
        let mut front = self.front();
        let found = front.next_bundled_body(&specs).and_then(|body| match body {
            Some(body) => Ok(Err(body)),
            None => front.environment_bindings(&specs).map(Ok),
        });
        drop(front);
        let bindings = match found {
            Ok(Ok(bindings)) => bindings,
            Ok(Err((forms, scope))) => {
                let mut thunks = Vec::new();
                for f in &forms {
                    match self.compile_form(f, &scope, true) {
                        Ok(t) => thunks.push(self.thunk(t)),
                        Err(e) if e.out_of_memory => {
                            return self.fail(callee_idx, Fault::OutOfMemory)
                        }
                        Err(e) => return fail(self, format!("environment: {}", e.message)),
                    }
                }
                let list = self.heap.list(&thunks);
                return self.answer(callee_idx, list, tail);
            }
            Err(e) if e.out_of_memory => return self.fail(callee_idx, Fault::OutOfMemory),
            Err(e) => return fail(self, e.message),
        };
        let mut items = Vec::with_capacity(bindings.len() * 2);
        for (name, target) in bindings {
            items.push(Value::Sym(name));
            items.push(Value::Sym(target));
        }
        if let Err(e) = self.heap.check_room(items.len() * 16 + 64) {
            return self.fail(callee_idx, e.into());
        }
        let names = self.heap.alloc(Object::Vector(items));
        let env = self.heap.alloc(Object::Environment(names));
        self.answer(callee_idx, env, tail)
    }

    /// The bindings of an environment `environment` made, with an unbound
    /// global for every other name `expr` holds; `None` for the top level.
    fn eval_env(&mut self, env: Value, expr: &Syn) -> Result<Option<Rc<EvalEnv>>, Fault> {
        let names = match self.heap.obj(env) {
            Some(Object::Environment(Value::Bool(false))) => return Ok(None),
            Some(Object::Environment(names)) => *names,
            _ => {
                let shown = printer::shown(&self.heap, &self.syms, env);
                return Err(Fault::Error(
                    format!("eval: expected an environment, got {shown}"),
                    vec![],
                ));
            }
        };
        let mut ev = EvalEnv::default();
        match self.heap.obj(names) {
            Some(Object::Vector(items)) if items.len() % 2 == 0 => {
                for pair in items.chunks(2) {
                    let (Value::Sym(n), Value::Sym(t)) = (pair[0], pair[1]) else {
                        return Err(Fault::Error("eval: a damaged environment".into(), vec![]));
                    };
                    ev.names.insert(n, t);
                }
            }
            _ => return Err(Fault::Error("eval: a damaged environment".into(), vec![])),
        }
        for s in symbols_of(expr) {
            if !ev.names.contains_key(&s) {
                let why = format!("{} (not in the environment)", self.syms.name(s));
                ev.missing.insert(s, self.syms.intern(&why));
            }
        }
        Ok(Some(Rc::new(ev)))
    }

    /// `(eval expr [environment])`: compiled, then called as a thunk.
    fn eval_datum(
        &mut self,
        callee_idx: usize,
        expr: Value,
        env: Option<Value>,
    ) -> Result<Next, VmError> {
        let syn = match datum::to_syntax(&self.heap, &mut self.syms, expr) {
            Ok(s) => s,
            Err(msg) => return self.fail(callee_idx, Fault::Error(format!("eval: {msg}"), vec![])),
        };
        let eval_env = match env.map(|e| self.eval_env(e, &syn)).transpose() {
            Ok(ev) => ev.flatten(),
            Err(f) => return self.fail(callee_idx, f),
        };
        let compiled = match eval_env {
            Some(ev) => self.compile_in_environment(&syn, ev),
            None => self.compile_form(&syn, &None, false),
        };
        match compiled {
            Ok(t) => {
                self.stack.truncate(callee_idx);
                let c = self.thunk(t);
                self.stack.push(c);
                Ok(Next::Call(0))
            }
            Err(e) if e.out_of_memory => self.fail(callee_idx, Fault::OutOfMemory),
            Err(e) => {
                let message = format!("eval: {}", e.message);
                self.fail(callee_idx, Fault::Error(message, vec![]))
            }
        }
    }

    /// A closure of a top-level template, to call with no arguments.
    fn thunk(&mut self, template: Rc<Template>) -> Value {
        self.heap.alloc(Object::Closure(Closure {
            template,
            free: Box::new([]),
        }))
    }

    /// `(%arb:eval-at-tier LEVEL EXPR)`: runs EXPR with the tier lowered to
    /// LEVEL, above a frame that puts the tier back when it returns.
    fn eval_at_tier(
        &mut self,
        callee_idx: usize,
        level: Value,
        expr: Value,
        tail: bool,
    ) -> Result<Next, VmError> {
        let requested = match level {
            Value::Int(i) => u8::try_from(i).ok().and_then(Tier::from_level),
            _ => None,
        };
        let Some(requested) = requested else {
            let message = "%arb:eval-at-tier: the tier must be 0, 1 or 2".into();
            return self.fail(callee_idx, Fault::Error(message, vec![]));
        };
        let t = match self.compile_eval_expr(expr) {
            Ok(t) => t,
            Err(f) => return self.fail(callee_idx, f),
        };
        // The tier can only go down: code cannot give itself more rights
        // than the code that runs it.
        let old = self.tier;
        let new = old.max(requested);
        let mut base = callee_idx;
        if tail {
            // Slide this call over the current frame, as `enter` does.
            let fp_base = self.fp - 1;
            self.stack.drain(fp_base..callee_idx);
            base = fp_base;
        } else {
            self.push_frame();
        }
        // Below the evaluated code: a frame that puts the tier back when it
        // returns, then returns to the caller.
        self.stack.truncate(base + 1);
        self.frames.push(Frame {
            template: self.restore_tier.clone(),
            pc: 0,
            fp: (base + 1) as u32,
            closure: Value::Int(old.level() as i64),
        });
        let c = self.thunk(t.clone());
        self.stack.push(c);
        self.tier = new;
        self.tmpl = t;
        self.fp = base + 2;
        self.closure = c;
        self.pc = 0;
        Ok(Next::Done)
    }

    /// `arb:eval`'s argument as a template: a datum, or source text (all
    /// its forms, in order).
    fn compile_eval_expr(&mut self, expr: Value) -> Result<Rc<Template>, Fault> {
        let syn = if let Some(Object::Str(chars)) = self.heap.obj(expr) {
            let text: String = chars.iter().collect();
            let forms = reader::read_all(&text, &mut self.syms).map_err(|e| {
                Fault::ReadError(format!("{}:{}: {}", e.pos.line, e.pos.col, e.message))
            })?;
            let begin = Syn::Sym(Ident::plain(self.syms.intern("begin")), Pos::NONE);
            let mut items = vec![begin];
            items.extend(forms);
            Syn::list(items, Pos::NONE)
        } else {
            datum::to_syntax(&self.heap, &mut self.syms, expr).map_err(Fault::ReadError)?
        };
        self.compile_form(&syn, &None, false).map_err(|e| {
            if e.out_of_memory {
                Fault::OutOfMemory
            } else {
                Fault::ReadError(e.message)
            }
        })
    }
}
