//! One-line descriptions of operations, for the versions they make: what
//! a version made by one `arb:` call or by a transaction is called unless
//! its maker names it.

use super::Op;

/// A one-line summary of an operation, for version descriptions.
pub fn op_summary(op: &Op) -> String {
    match op {
        Op::Create(n) => match n.symbol_names.first() {
            Some(name) => format!("create {} ({name})", n.id),
            None => format!("create {}", n.id),
        },
        Op::Update { id, changes } => {
            let mut fields = Vec::new();
            if changes.code.is_some() {
                fields.push("code");
            }
            if changes.description.is_some() {
                fields.push("description");
            }
            if changes.kind.is_some() {
                fields.push("type");
            }
            if changes.symbol_names.is_some() {
                fields.push("symbol-names");
            }
            if changes.dependencies.is_some() {
                fields.push("dependencies");
            }
            format!("update {id} ({})", fields.join(", "))
        }
        Op::Delete(id) => format!("delete {id}"),
    }
}

/// A version description for a transaction's operations.
pub fn transaction_summary(ops: &[Op]) -> String {
    match ops.len() {
        0 => "transaction (no changes)".to_string(),
        1 => format!("transaction: {}", op_summary(&ops[0])),
        n => {
            let shown: Vec<String> = ops.iter().take(3).map(op_summary).collect();
            let more = if n > 3 {
                format!(", and {} more", n - 3)
            } else {
                String::new()
            };
            format!("transaction of {n} changes: {}{more}", shown.join(", "))
        }
    }
}
