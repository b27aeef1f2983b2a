//! Procedures, continuations, values, errors, records, promises, parameters
//! (R7RS 6.10, 6.11, 4.2.6, 4.2.7, 5.5), and `eval`.

use super::{boolean, list_items, type_error, Control, Ctx, Fault, PrimTable};
use crate::value::{ErrorObject, ErrorObjectKind, Object, RecordType, Value};

// Long by design: a table, one entry per primitive.
pub fn register(t: &mut PrimTable) {
    t.add("procedure?", 1, Some(1), |c, a| {
        Ok(boolean(is_procedure(c, a[0])))
    });
    t.add("%procedure-info", 1, Some(1), |c, a| {
        Ok(procedure_info(c, a[0]))
    });
    t.control("apply", 2, None, Control::Apply);
    t.control(
        "call-with-current-continuation",
        1,
        Some(1),
        Control::CallCC,
    );
    t.control("call/cc", 1, Some(1), Control::CallCC);
    t.control("%call/ec", 1, Some(1), Control::CallEC);
    t.control("%apply-values", 2, Some(2), Control::ApplyValues);
    t.control("%throw", 2, Some(2), Control::Throw);
    t.control("%abort", 1, Some(1), Control::Abort);
    t.control("%winders", 0, Some(0), Control::Winders);
    t.control("%set-winders!", 1, Some(1), Control::SetWinders);
    t.control("%handlers", 0, Some(0), Control::Handlers);
    t.control("%set-handlers!", 1, Some(1), Control::SetHandlers);
    t.control(
        "%continuation-winders",
        1,
        Some(1),
        Control::ContinuationWinders,
    );
    t.control("eval", 1, Some(2), Control::Eval);
    t.control("%environment", 1, Some(1), Control::Environment);
    // The names an environment of `environment`'s binds, in order.
    t.add("%environment-names", 1, Some(1), |c, a| {
        let names = match c.heap.obj(a[0]) {
            Some(Object::Environment(names)) => *names,
            _ => return Err(type_error(c, "%environment-names", "an environment", a[0])),
        };
        let items: Vec<Value> = match c.heap.obj(names) {
            Some(Object::Vector(items)) => items.iter().step_by(2).copied().collect(),
            _ => vec![],
        };
        Ok(c.heap.list(&items))
    });
    t.add("%environment?", 1, Some(1), |c, a| {
        Ok(boolean(matches!(
            c.heap.obj(a[0]),
            Some(Object::Environment(_))
        )))
    });
    t.control("%arb:eval-at-tier", 2, Some(2), Control::EvalAtTier);
    t.control("%arb:load-ended", 1, None, Control::LoadEnded);
    t.control("%suspend", 1, Some(1), Control::Suspend);
    t.control("%bound-names", 0, Some(1), Control::BoundNames);
    t.add("values", 0, None, |c, a| {
        Ok(if a.len() == 1 {
            a[0]
        } else {
            c.heap.alloc(Object::Values(a.to_vec()))
        })
    });
    t.add("error", 1, None, |c, a| {
        let irritants = c.heap.list(&a[1..]);
        let obj = c.heap.alloc(Object::Error(Box::new(ErrorObject {
            kind: ErrorObjectKind::Error,
            message: a[0],
            irritants,
        })));
        Err(Fault::Raise(obj))
    });
    t.add("%raise-primitive", 1, Some(1), |_, a| {
        Err(Fault::Raise(a[0]))
    });
    t.add("error-object?", 1, Some(1), |c, a| {
        Ok(boolean(matches!(c.heap.obj(a[0]), Some(Object::Error(_)))))
    });
    t.add("error-object-message", 1, Some(1), |c, a| {
        match c.heap.obj(a[0]) {
            Some(Object::Error(e)) => Ok(e.message),
            _ => Err(type_error(
                c,
                "error-object-message",
                "an error object",
                a[0],
            )),
        }
    });
    t.add("error-object-irritants", 1, Some(1), |c, a| {
        match c.heap.obj(a[0]) {
            Some(Object::Error(e)) => Ok(e.irritants),
            _ => Err(type_error(
                c,
                "error-object-irritants",
                "an error object",
                a[0],
            )),
        }
    });
    t.add("read-error?", 1, Some(1), |c, a| {
        Ok(boolean(
            matches!(c.heap.obj(a[0]), Some(Object::Error(e)) if e.kind == ErrorObjectKind::Read),
        ))
    });
    t.add("file-error?", 1, Some(1), |c, a| {
        Ok(boolean(
            matches!(c.heap.obj(a[0]), Some(Object::Error(e)) if e.kind == ErrorObjectKind::File),
        ))
    });
    // records
    t.add("%make-record-type", 2, Some(2), |c, a| {
        let Value::Sym(name) = a[0] else {
            return Err(type_error(c, "define-record-type", "a type name", a[0]));
        };
        let mut fields = Vec::new();
        for f in list_items(c, "define-record-type", a[1])? {
            match f {
                Value::Sym(s) => fields.push(s),
                other => return Err(type_error(c, "define-record-type", "a field name", other)),
            }
        }
        Ok(c.heap
            .alloc(Object::RecordType(Box::new(RecordType { name, fields }))))
    });
    t.add("%record", 1, None, |c, a| {
        Ok(c.heap.alloc(Object::Record(a[0], a[1..].into())))
    });
    t.add("%record?", 2, Some(2), |c, a| {
        Ok(boolean(
            matches!(c.heap.obj(a[0]), Some(Object::Record(t, _)) if t.eq(a[1])),
        ))
    });
    t.add("%record-ref", 4, Some(4), |c, a| {
        let (Some(Object::Record(t, fields)), Value::Int(i)) = (c.heap.obj(a[0]), a[2]) else {
            return Err(record_error(c, a[3], a[1], a[0]));
        };
        if !t.eq(a[1]) {
            return Err(record_error(c, a[3], a[1], a[0]));
        }
        Ok(fields
            .get(i as usize)
            .copied()
            .unwrap_or(Value::Unspecified))
    });
    t.add("%record-set!", 5, Some(5), |c, a| {
        let ok = matches!(c.heap.obj(a[0]), Some(Object::Record(t, _)) if t.eq(a[1]));
        if !ok {
            return Err(record_error(c, a[4], a[1], a[0]));
        }
        if let (Some(Object::Record(_, fields)), Value::Int(i)) = (c.heap.obj_mut(a[0]), a[2]) {
            if let Some(slot) = fields.get_mut(i as usize) {
                *slot = a[3];
            }
        }
        Ok(Value::Unspecified)
    });
    // promises
    t.add("%make-lazy-promise", 1, Some(1), |c, a| {
        Ok(c.heap.alloc(Object::Promise {
            done: false,
            value: a[0],
        }))
    });
    t.add("make-promise", 1, Some(1), |c, a| {
        if matches!(c.heap.obj(a[0]), Some(Object::Promise { .. })) {
            return Ok(a[0]);
        }
        Ok(c.heap.alloc(Object::Promise {
            done: true,
            value: a[0],
        }))
    });
    t.add("promise?", 1, Some(1), |c, a| {
        Ok(boolean(matches!(
            c.heap.obj(a[0]),
            Some(Object::Promise { .. })
        )))
    });
    t.add("%promise-done?", 1, Some(1), |c, a| {
        match c.heap.obj(a[0]) {
            Some(Object::Promise { done, .. }) => Ok(Value::Bool(*done)),
            _ => Err(type_error(c, "force", "a promise", a[0])),
        }
    });
    t.add("%promise-value", 1, Some(1), |c, a| {
        match c.heap.obj(a[0]) {
            Some(Object::Promise { value, .. }) => Ok(*value),
            _ => Err(type_error(c, "force", "a promise", a[0])),
        }
    });
    t.add("%promise-update!", 2, Some(2), |c, a| {
        // The outer promise takes over the state of the one its thunk returned.
        let (d, v) = match c.heap.obj(a[1]) {
            Some(Object::Promise { done, value }) => (*done, *value),
            _ => return Err(type_error(c, "force", "a promise from delay-force", a[1])),
        };
        if let Some(Object::Promise { done, value }) = c.heap.obj_mut(a[0]) {
            *done = d;
            *value = v;
        }
        Ok(Value::Unspecified)
    });
    // parameters
    t.add("%make-parameter", 2, Some(2), |c, a| {
        Ok(c.heap.alloc(Object::Parameter {
            value: a[0],
            converter: a[1],
        }))
    });
    t.add("%parameter?", 1, Some(1), |c, a| {
        Ok(boolean(matches!(
            c.heap.obj(a[0]),
            Some(Object::Parameter { .. })
        )))
    });
    t.add("%parameter-value", 1, Some(1), |c, a| {
        match c.heap.obj(a[0]) {
            Some(Object::Parameter { value, .. }) => Ok(*value),
            _ => Err(type_error(c, "parameterize", "a parameter object", a[0])),
        }
    });
    t.add("%parameter-converter", 1, Some(1), |c, a| {
        match c.heap.obj(a[0]) {
            Some(Object::Parameter { converter, .. }) => Ok(*converter),
            _ => Err(type_error(c, "parameterize", "a parameter object", a[0])),
        }
    });
    t.add("%parameter-set!", 2, Some(2), |c, a| {
        match c.heap.obj_mut(a[0]) {
            Some(Object::Parameter { value, .. }) => {
                *value = a[1];
                Ok(Value::Unspecified)
            }
            _ => Err(type_error(c, "parameterize", "a parameter object", a[0])),
        }
    });
    // environments: `environment` is the prelude's, over `%environment`;
    // the R5RS two are the top level, as `interaction-environment` is
    // (chibi's are environments of their own; R7RS leaves them optional).
    t.add("interaction-environment", 0, Some(0), |c, _| {
        Ok(c.heap.alloc(Object::Environment(Value::Bool(false))))
    });
    t.add("scheme-report-environment", 1, Some(1), |c, a| {
        report_version(c, "scheme-report-environment", a[0])?;
        Ok(c.heap.alloc(Object::Environment(Value::Bool(false))))
    });
    t.add("null-environment", 1, Some(1), |c, a| {
        report_version(c, "null-environment", a[0])?;
        Ok(c.heap.alloc(Object::Environment(Value::Bool(false))))
    });
    // time, from the clock the host passes in
    t.add("current-second", 0, Some(0), |c, _| {
        Ok(Value::Float(c.budget.host.now()))
    });
    t.add("current-jiffy", 0, Some(0), |c, _| {
        Ok(Value::Int((c.budget.host.now() * 1_000_000.0) as i64))
    });
    t.add("jiffies-per-second", 0, Some(0), |_, _| {
        Ok(Value::Int(1_000_000))
    });
    t.add("features", 0, Some(0), |c, _| {
        let syms: Vec<Value> = crate::compiler::front::features()
            .iter()
            .map(|f| Value::Sym(c.syms.intern(f)))
            .collect();
        Ok(c.heap.list(&syms))
    });
    t.add("void", 0, None, |_, _| Ok(Value::Unspecified));
}

/// The version of an R5RS environment: 5 (R7RS 6.12: "if version is
/// equal to 5"), the only one there is.
fn report_version(c: &Ctx, who: &str, v: Value) -> Result<(), Fault> {
    match v {
        Value::Int(5) => Ok(()),
        _ => Err(type_error(c, who, "the version 5", v)),
    }
}

fn record_error(c: &Ctx, who: Value, ty: Value, got: Value) -> Fault {
    let name = match who {
        Value::Sym(s) => c.syms.name(s).to_string(),
        _ => "record accessor".into(),
    };
    let tname = match c.heap.obj(ty) {
        Some(Object::RecordType(rt)) => c.syms.name(rt.name).to_string(),
        _ => "record".into(),
    };
    type_error(c, &name, &format!("a record of type {tname}"), got)
}

/// `(%procedure-info OBJ)`: `#f` when OBJ is not a procedure, else
/// `(NAME LEAST MOST)`: its name (a string, or `#f` when it has none), the
/// fewest arguments it takes and the most (`#f`: any number more). What
/// the REPL's `,describe` shows.
fn procedure_info(c: &mut Ctx, v: Value) -> Value {
    // (name, least, most)
    fn closure(c: &Ctx, t: &crate::value::code::Template) -> (Option<String>, u16, Option<u16>) {
        let name = t.name.map(|n| c.syms.name(n).to_string());
        (name, t.nparams, (!t.rest).then_some(t.nparams))
    }
    let info = match v {
        Value::Prim(i) => c
            .heap
            .prims
            .get(i as usize)
            .map(|p| (Some(p.name.to_string()), p.min, p.max)),
        _ => match c.heap.obj(v) {
            Some(Object::Closure(k)) => Some(closure(c, &k.template)),
            Some(Object::CaseLambda(clauses)) => {
                let mut least = u16::MAX;
                let mut most = Some(0u16);
                let mut name = None;
                for clause in clauses {
                    if let Some(Object::Closure(k)) = c.heap.obj(*clause) {
                        let (n, l, m) = closure(c, &k.template);
                        name = name.or(n);
                        least = least.min(l);
                        most = match (most, m) {
                            (Some(a), Some(b)) => Some(a.max(b)),
                            _ => None,
                        };
                    }
                }
                Some((name, if least == u16::MAX { 0 } else { least }, most))
            }
            Some(Object::Continuation(_) | Object::Escape(_)) => Some((None, 0, None)),
            Some(Object::Parameter { .. }) => Some((None, 0, Some(1))),
            _ => None,
        },
    };
    let Some((name, least, most)) = info else {
        return Value::Bool(false);
    };
    let name = match name {
        Some(n) => c.heap.string(&n),
        None => Value::Bool(false),
    };
    let most = most.map_or(Value::Bool(false), |m| Value::Int(m as i64));
    c.heap.list(&[name, Value::Int(least as i64), most])
}

pub fn is_procedure(c: &Ctx, v: Value) -> bool {
    is_procedure_in(c.heap, v)
}

/// Whether `v` can be called: a primitive, a closure, a `case-lambda`, a
/// continuation (full or escape-only) or a parameter object.
pub fn is_procedure_in(heap: &crate::heap::Heap, v: Value) -> bool {
    match v {
        Value::Prim(_) => true,
        _ => matches!(
            heap.obj(v),
            Some(
                Object::Closure(_)
                    | Object::CaseLambda(_)
                    | Object::Continuation(_)
                    | Object::Escape(_)
                    | Object::Parameter { .. }
            )
        ),
    }
}

#[cfg(test)]
mod tests;
