//! `arb:closure`: stored nodes and everything they depend on, as source
//! text that runs standalone in any R7RS Scheme.
//!
//! Every needed node appears once, dependencies before dependents. When the
//! names line up — each node is definitions only, each dependency's local
//! name is the name its node defines, and no two nodes define the same name
//! — the text is the nodes' own code, verbatim. Otherwise each node becomes
//! one definition of a value of its own, with its dependencies bound by
//! their local names:
//!
//! ```scheme
//! (define arb:node-300
//!   (let ((helper arb:node-256))
//! (define (quicksort lst) ... (helper ...))
//!     quicksort))
//! (define quicksort arb:node-300)
//! ```
//!
//! (the code is kept verbatim, not re-indented: indenting would change
//! multi-line string literals). In both forms the requested nodes are then
//! reachable by their symbol names.

use std::collections::{BTreeMap, BTreeSet};

use crate::compiler::front::defined_names;
use crate::reader;
use crate::repo::knowledge::Knowledge;
use crate::repo::node::{Node, NodeId, VersionId};
use crate::symbol::SymbolTable;
use crate::syntax::Syn;

use super::values::{ArbError, Extra};

/// What a node's code evaluates to, as the loader and the closure see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeValue {
    /// The last form defines this name: the node's value is its value.
    Name(String),
    /// The last form is an expression: the node's value is its value.
    Expression,
    /// The last form is another kind of definition (a record type, a
    /// macro, several values): the node has no single value.
    Nothing,
}

/// What the loader and the closure need to know of a node's code.
pub struct CodeShape {
    pub forms: Vec<Syn>,
    pub defined: Vec<String>,
    pub value: NodeValue,
    /// Every top-level form is a definition.
    pub definitions_only: bool,
}

fn head_name<'a>(form: &Syn, syms: &'a SymbolTable) -> Option<&'a str> {
    match form.as_list()?.first()? {
        Syn::Sym(id, _) => Some(syms.name(id.sym)),
        _ => None,
    }
}

/// A definition, or a `begin` (nested however deep) of definitions only.
fn is_definition(form: &Syn, syms: &SymbolTable) -> bool {
    let mut pending = vec![form];
    while let Some(form) = pending.pop() {
        match head_name(form, syms) {
            Some("define" | "define-values" | "define-record-type" | "define-syntax") => {}
            Some("begin") => match form.as_list() {
                Some(items) => pending.extend(&items[1..]),
                None => return false,
            },
            _ => return false,
        }
    }
    true
}

/// The name `(define NAME ...)`, `(define (NAME ...) ...)` or a curried
/// `(define ((NAME ...) ...) ...)` defines.
fn define_target(form: &Syn, syms: &SymbolTable) -> Option<String> {
    if head_name(form, syms) != Some("define") {
        return None;
    }
    let mut target = form.as_list()?.get(1)?;
    while let Syn::List(inner, _, _) = target {
        target = inner.first()?;
    }
    match target {
        Syn::Sym(id, _) => Some(syms.name(id.sym).to_string()),
        _ => None,
    }
}

/// Reads a node's code and finds what it defines and what it evaluates to.
pub fn code_shape(code: &str, syms: &mut SymbolTable) -> Result<CodeShape, String> {
    let forms = reader::read_all(code, syms)
        .map_err(|e| format!("{}:{}: {}", e.pos.line, e.pos.col, e.message))?;
    let mut defined_syms = Vec::new();
    for f in &forms {
        defined_names(f, syms, &mut defined_syms);
    }
    let mut defined: Vec<String> = Vec::new();
    for s in defined_syms {
        let n = syms.name(s).to_string();
        if !defined.contains(&n) {
            defined.push(n);
        }
    }
    let value = match forms.last() {
        None => NodeValue::Nothing,
        Some(last) => match define_target(last, syms) {
            Some(n) => NodeValue::Name(n),
            None if is_definition(last, syms) => NodeValue::Nothing,
            None => NodeValue::Expression,
        },
    };
    let definitions_only = forms.iter().all(|f| is_definition(f, syms));
    Ok(CodeShape {
        forms,
        defined,
        value,
        definitions_only,
    })
}

/// Whether `name` reads back as exactly one identifier of that name.
fn is_identifier(name: &str, syms: &mut SymbolTable) -> bool {
    match reader::read_all(name, syms) {
        Ok(forms) => matches!(forms.as_slice(), [Syn::Sym(id, _)] if syms.name(id.sym) == name),
        Err(_) => false,
    }
}

/// The nodes `roots` need, dependencies first. A dependency cycle, a
/// missing node or a builtin (which has no source) is an error.
pub fn dependency_order<'k>(
    k: &'k Knowledge,
    roots: &[NodeId],
    version: Option<VersionId>,
) -> Result<Vec<&'k Node>, ArbError> {
    let get = |id: NodeId| -> Result<Option<&'k Node>, ArbError> {
        k.get_at(version, id).map_err(|e| {
            ArbError::new(e.kind(), e.to_string())
                .with("version-id", Extra::Id(version.unwrap_or_default()))
        })
    };
    // 0: unseen, 1: in progress, 2: done.
    let mut state: BTreeMap<NodeId, u8> = BTreeMap::new();
    let mut order: Vec<&Node> = Vec::new();
    for &root in roots {
        if state.get(&root) == Some(&2) {
            continue;
        }
        let Some(node) = get(root)? else {
            return Err(ArbError::new(
                "s-expression-not-found",
                format!("arb:closure: no s-expression with id {root}"),
            )
            .with("s-expression-id", Extra::Id(root)));
        };
        // (node, index of the next dependency to visit)
        let mut stack: Vec<(&Node, usize)> = vec![(node, 0)];
        state.insert(root, 1);
        while let Some((node, i)) = stack.pop() {
            if node.code.is_none() {
                let name = node.symbol_names.first().cloned().unwrap_or_default();
                return Err(ArbError::new(
                    "not-standalone",
                    format!(
                        "arb:closure: s-expression {} ({name}) is a builtin of Arbores and has no source",
                        node.id
                    ),
                )
                .with("s-expression-id", Extra::Id(node.id)));
            }
            match node.dependencies.get(i) {
                Some((dep, _)) => {
                    stack.push((node, i + 1));
                    match state.get(dep).copied().unwrap_or(0) {
                        2 => {}
                        1 => {
                            let mut cycle: Vec<u64> = stack
                                .iter()
                                .map(|(n, _)| n.id)
                                .skip_while(|id| id != dep)
                                .collect();
                            cycle.push(*dep);
                            return Err(ArbError::new(
                                "dependency-cycle",
                                format!(
                                    "arb:closure: the dependencies form a cycle ({}); standalone code needs an order",
                                    cycle.iter().map(u64::to_string).collect::<Vec<_>>().join(" -> ")
                                ),
                            )
                            .with("cycle", Extra::Ids(cycle)));
                        }
                        _ => {
                            let Some(d) = get(*dep)? else {
                                return Err(ArbError::new(
                                    "dependency-not-found",
                                    format!(
                                        "arb:closure: s-expression {} depends on {dep}, which does not exist",
                                        node.id
                                    ),
                                )
                                .with("s-expression-id", Extra::Id(node.id))
                                .with("dependency", Extra::Id(*dep)));
                            };
                            state.insert(*dep, 1);
                            stack.push((d, 0));
                        }
                    }
                }
                None => {
                    state.insert(node.id, 2);
                    order.push(node);
                }
            }
        }
    }
    Ok(order)
}

fn wrapper_name(id: NodeId) -> String {
    format!("arb:node-{id}")
}

/// The standalone source text of `roots` and everything they depend on.
pub fn standalone(
    k: &Knowledge,
    syms: &mut SymbolTable,
    roots: &[NodeId],
    version: Option<VersionId>,
) -> Result<String, ArbError> {
    let order = dependency_order(k, roots, version)?;
    let mut shapes: BTreeMap<NodeId, CodeShape> = BTreeMap::new();
    for node in &order {
        let code = node.code.as_deref().unwrap_or("");
        let shape = code_shape(code, syms).map_err(|m| {
            ArbError::new(
                "syntax-error",
                format!(
                    "arb:closure: the code of s-expression {} does not read: {m}",
                    node.id
                ),
            )
        })?;
        shapes.insert(node.id, shape);
    }
    // Plain text when the names line up.
    let mut all_defined: BTreeSet<&str> = BTreeSet::new();
    let mut plain = true;
    for node in &order {
        let shape = &shapes[&node.id];
        if !shape.definitions_only || shape.value == NodeValue::Expression {
            plain = false;
        }
        for n in &shape.defined {
            if !all_defined.insert(n) {
                plain = false;
            }
        }
        for (dep, local) in &node.dependencies {
            let lines_up =
                local.is_empty() || matches!(&shapes[dep].value, NodeValue::Name(n) if n == local);
            if !lines_up {
                plain = false;
            }
        }
    }
    let mut out = String::new();
    let mut top_level: BTreeSet<String> = BTreeSet::new();
    for node in &order {
        let code = node.code.as_deref().unwrap_or("").trim_end();
        let shape = &shapes[&node.id];
        if plain {
            out.push_str(code);
            out.push('\n');
            top_level.extend(shape.defined.iter().cloned());
            continue;
        }
        let bindings: Vec<String> = node
            .dependencies
            .iter()
            .filter(|(_, local)| !local.is_empty())
            .map(|(dep, local)| format!("({local} {})", wrapper_name(*dep)))
            .collect();
        out.push_str(&format!(
            "(define {}\n  (let ({})\n{code}\n",
            wrapper_name(node.id),
            bindings.join(" ")
        ));
        match &shape.value {
            NodeValue::Name(n) => out.push_str(&format!("    {n}))\n")),
            NodeValue::Expression => out.push_str("    ))\n"),
            NodeValue::Nothing => out.push_str("    (if #f #f)))\n"),
        }
        top_level.insert(wrapper_name(node.id));
    }
    // The requested nodes by their names.
    let mut seen_roots = BTreeSet::new();
    for &root in roots {
        if !seen_roots.insert(root) {
            continue;
        }
        let Some(node) = order.iter().find(|n| n.id == root) else {
            continue;
        };
        let shape = &shapes[&root];
        let source = match (&shape.value, plain) {
            (NodeValue::Name(n), true) => n.clone(),
            (NodeValue::Nothing, _) => continue,
            _ => wrapper_name(root),
        };
        let mut names: Vec<String> = Vec::new();
        if let NodeValue::Name(n) = &shape.value {
            names.push(n.clone());
        }
        names.extend(node.symbol_names.iter().cloned());
        for name in names {
            if name == source || top_level.contains(&name) || !is_identifier(&name, syms) {
                continue;
            }
            out.push_str(&format!("(define {name} {source})\n"));
            top_level.insert(name);
        }
    }
    Ok(out)
}
