//! `(scheme process-context)`: the command line, the environment and
//! `exit`, as the host gives them. `exit` itself is in the prelude: it
//! runs the `dynamic-wind` after-thunks, then calls `%exit`.

use super::{string, Fault, PrimTable};
use crate::value::Value;

pub fn register(t: &mut PrimTable) {
    t.add("command-line", 0, Some(0), |c, _| {
        let mut words = c.budget.host.command_line();
        // R7RS: the first string is the command's name, which may be empty.
        if words.is_empty() {
            words.push(String::new());
        }
        let items: Vec<Value> = words.iter().map(|w| c.heap.string(w)).collect();
        Ok(c.heap.list(&items))
    });
    t.add("get-environment-variable", 1, Some(1), |c, a| {
        let name: String = string(c, "get-environment-variable", a[0])?
            .iter()
            .collect();
        let found = c
            .budget
            .host
            .environment()
            .into_iter()
            .find(|(n, _)| *n == name);
        Ok(match found {
            Some((_, value)) => c.heap.string(&value),
            None => Value::Bool(false),
        })
    });
    t.add("get-environment-variables", 0, Some(0), |c, _| {
        let vars = c.budget.host.environment();
        let pairs: Vec<Value> = vars
            .iter()
            .map(|(n, v)| {
                let (n, v) = (c.heap.string(n), c.heap.string(v));
                c.heap.cons(n, v)
            })
            .collect();
        Ok(c.heap.list(&pairs))
    });
    t.add("%exit", 1, Some(1), |_, a| exit(a[0]));
}

/// R7RS: `#t` (or nothing) is success, `#f` failure, an exact integer
/// that status (as the system keeps it: its low 8 bits); anything else
/// counts as success, as in Guile and chibi.
fn exit(status: Value) -> Result<Value, Fault> {
    let code = match status {
        Value::Bool(false) => 1,
        Value::Int(n) => (n & 0xff) as i32,
        _ => 0,
    };
    Err(Fault::Exit(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_statuses() {
        let code = |v| match exit(v) {
            Err(Fault::Exit(c)) => c,
            _ => -1,
        };
        assert_eq!(code(Value::Bool(true)), 0);
        assert_eq!(code(Value::Bool(false)), 1);
        assert_eq!(code(Value::Int(3)), 3);
        assert_eq!(code(Value::Int(256 + 7)), 7);
        assert_eq!(code(Value::Int(-1)), 255);
        assert_eq!(code(Value::Null), 0);
    }
}
