//! A version's operations as S-expressions of `arb:` calls: what
//! `arb:version-info` shows as the forward and reverse deltas.
//!
//! One operation is one call, `(arb:create CODE 'DEPS DESCRIPTION TYPE
//! 'NAMES)`, `(arb:update ID '((FIELD . VALUE) ...))` or `(arb:delete ID)`;
//! several are `(arb:transaction CALL ...)`. Evaluated at the version's
//! parent (forward) or at the version (reverse), they make the same change,
//! except that a re-created node gets a new id there (the recorded delta
//! keeps the original id; see `forest::Op`).

use crate::heap::Heap;
use crate::repo::forest::{NodeChanges, Op};
use crate::repo::node::NodeId;
use crate::symbol::SymbolTable;
use crate::value::Value;

use super::values::{alist, id, opt_string, strings};

fn quoted(heap: &mut Heap, syms: &mut SymbolTable, v: Value) -> Value {
    let q = Value::Sym(syms.intern("quote"));
    heap.list(&[q, v])
}

/// Dependencies as given to `arb:create`: `(ID . "local-name")`, or a bare
/// id when it has no local name.
pub fn dependencies_value(heap: &mut Heap, deps: &[(NodeId, String)]) -> Value {
    let items: Vec<Value> = deps
        .iter()
        .map(|(d, name)| {
            let idv = id(heap, *d);
            if name.is_empty() {
                idv
            } else {
                let n = heap.string(name);
                heap.cons(idv, n)
            }
        })
        .collect();
    heap.list(&items)
}

/// The fields an update sets, as the alist `arb:update` takes.
pub fn changes_value(heap: &mut Heap, c: &NodeChanges) -> Value {
    let mut entries: Vec<(&str, Value)> = Vec::new();
    if let Some(d) = &c.description {
        entries.push(("description", opt_string(heap, d.as_deref())));
    }
    if let Some(code) = &c.code {
        entries.push(("code", opt_string(heap, code.as_deref())));
    }
    if let Some(t) = &c.kind {
        entries.push(("type", opt_string(heap, t.as_deref())));
    }
    if let Some(n) = &c.symbol_names {
        entries.push(("symbol-names", strings(heap, n)));
    }
    if let Some(d) = &c.dependencies {
        entries.push(("dependencies", dependencies_value(heap, d)));
    }
    alist(heap, &entries)
}

pub fn op_value(heap: &mut Heap, syms: &mut SymbolTable, op: &Op) -> Value {
    match op {
        Op::Create(n) => {
            let head = Value::Sym(syms.intern("arb:create"));
            let code = opt_string(heap, n.code.as_deref());
            let deps = dependencies_value(heap, &n.dependencies);
            let deps = quoted(heap, syms, deps);
            let desc = opt_string(heap, n.description.as_deref());
            let kind = opt_string(heap, n.kind.as_deref());
            let names = strings(heap, &n.symbol_names);
            let names = quoted(heap, syms, names);
            heap.list(&[head, code, deps, desc, kind, names])
        }
        Op::Update { id: node, changes } => {
            let head = Value::Sym(syms.intern("arb:update"));
            let idv = id(heap, *node);
            let c = changes_value(heap, changes);
            let c = quoted(heap, syms, c);
            heap.list(&[head, idv, c])
        }
        Op::Delete(node) => {
            let head = Value::Sym(syms.intern("arb:delete"));
            let idv = id(heap, *node);
            heap.list(&[head, idv])
        }
    }
}

/// The delta of a version: one call, or `(arb:transaction call ...)`.
pub fn ops_value(heap: &mut Heap, syms: &mut SymbolTable, ops: &[Op]) -> Value {
    if ops.len() == 1 {
        return op_value(heap, syms, &ops[0]);
    }
    let mut items = vec![Value::Sym(syms.intern("arb:transaction"))];
    for op in ops {
        items.push(op_value(heap, syms, op));
    }
    heap.list(&items)
}

pub use crate::repo::forest::{op_summary, transaction_summary};
