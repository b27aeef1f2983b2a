//! Knowledge usable by name: when running code reads a global that has no
//! value, the VM asks here before it reports an unbound variable.
//!
//! - A plain name (`quicksort`) is looked up among the symbol names of the
//!   working state. One node with that name: its value. Several: an error
//!   that names them (use `arb:ref`). None: the variable is unbound.
//! - `@#ID` (what `arb:ref` binds a name to) is the value of node ID.
//!
//! A node is *loaded* by running its code in a scope of its own, like a
//! library body: the names it defines become hidden globals `NAME@#ID`,
//! each dependency's local name stands for that dependency's value `@#DEP`,
//! and its value — the last name it defines, or its last expression — is
//! stored in the global `@#ID`. Dependencies are loaded first. Plain names
//! are never defined in the session: every read goes through the lookup
//! (cached per generation of the knowledge base), so a later update or a
//! version switch is seen at once, and a session definition of the same
//! name simply takes precedence.
//!
//! When the knowledge base changes, the value globals of the nodes that
//! changed are cleared, so the next use loads them again.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use super::{Vm, VmError};
use crate::arb::closure::{code_shape, NodeValue};
use crate::builtins::Fault;
use crate::compiler::globals::{node_global_name, parse_node_global};
use crate::number::Num;
use crate::pos::Pos;
use crate::repo::index::SymbolMode;
use crate::repo::node::{Node, NodeId};
use crate::symbol::SymbolTable;
use crate::syntax::scope::{Binding, Scope};
use crate::syntax::{Atom, Ident, Syn};
use crate::value::code::Template;
use crate::value::{Closure, Object, Value};

/// What the session has loaded from the knowledge base.
#[derive(Clone, Default)]
pub struct Links {
    /// Loaded nodes and the global holding each one's value.
    loaded: BTreeMap<NodeId, u32>,
    /// Nodes whose load started in this evaluation and has not finished.
    loading: BTreeSet<NodeId>,
    /// Plain names (by global) resolved at `generation`: the node, and the
    /// global that holds its value.
    names: BTreeMap<u32, (NodeId, u32)>,
    generation: u64,
}

/// What to do about a global that has no value.
pub enum Resolution {
    /// Its value, from a loaded node.
    Value(Value),
    /// Run these thunks (a Scheme list) as the load of these nodes (a list
    /// of ids), then read the global again.
    Load(Value, Value),
    /// Not knowledge either: report the unbound variable.
    Unbound,
    Fault(Fault),
}

impl Vm {
    /// Follows changes of the knowledge base: clears the values of changed
    /// nodes and the cached name lookups. Called after every knowledge
    /// primitive.
    pub(super) fn sync_knowledge(&mut self) {
        let Some(k) = &mut self.knowledge else {
            return;
        };
        if k.generation() == self.links.generation {
            return;
        }
        self.links.generation = k.generation();
        self.links.names.clear();
        for id in k.take_changed() {
            if let Some(g) = self.links.loaded.remove(&id) {
                self.globals.values[g as usize] = Value::Undefined;
            }
        }
    }

    /// Forgets every loaded node (after a limit put the globals back to
    /// what they were before the evaluation, which may not match the
    /// knowledge base any more).
    pub fn forget_loaded(&mut self) {
        for (_, g) in std::mem::take(&mut self.links.loaded) {
            self.globals.values[g as usize] = Value::Undefined;
        }
        self.links.names.clear();
        self.links.loading.clear();
    }

    /// Whether stored code is being loaded.
    pub(super) fn is_loading(&self) -> bool {
        !self.links.loading.is_empty()
    }

    /// Called when an evaluation starts: loads left unfinished by an
    /// earlier evaluation are forgotten.
    pub(super) fn reset_loading(&mut self) {
        self.links.loading.clear();
    }

    /// `(%arb:load-ended DONE ID ...)`: the load of these nodes finished
    /// (`done`), or was left by an error (they will be loaded again).
    pub(super) fn end_loading(&mut self, done: bool, ids: &[NodeId]) {
        for &id in ids {
            if self.links.loading.remove(&id) && done {
                let name = node_global_name(id);
                let g = self.globals.index(self.syms.intern(&name));
                self.links.loaded.insert(id, g);
            }
        }
    }

    /// A global read found no value: the knowledge base may have it.
    /// `Some(v)`: use `v` and go on. `None`: control moved (a load was
    /// started, after which the instruction at `pc - 1` runs again, or an
    /// error was raised); the caller leaves its instruction loop.
    /// `pushes`: the instruction pushes the value, so an error is raised
    /// with a slot pushed in its place (a handler's frame then sees the
    /// stack as the code after the instruction expects it).
    pub(super) fn unbound_global(
        &mut self,
        g: u32,
        pc: usize,
        pushes: bool,
    ) -> Result<Option<Value>, VmError> {
        let fault = match self.resolve_unbound(g) {
            Resolution::Value(v) => return Ok(Some(v)),
            Resolution::Load(thunks, ids) => match self.hooks.run_thunks {
                Some(i) => {
                    let run = self.globals.values[i as usize];
                    self.pc = pc - 1;
                    self.stack.push(run);
                    self.stack.push(thunks);
                    self.stack.push(ids);
                    self.call(2, false)?;
                    return Ok(None);
                }
                None => self.unbound(g, ""),
            },
            Resolution::Unbound => self.unbound(g, ""),
            Resolution::Fault(f) => f,
        };
        if pushes {
            self.stack.push(Value::Unspecified);
        }
        self.raise_fault(fault)?;
        Ok(None)
    }

    /// The knowledge behind the unbound global `g`, if any.
    fn resolve_unbound(&mut self, g: u32) -> Resolution {
        self.sync_knowledge();
        // The hot path: a name already resolved in this generation.
        if let Some(&(id, vg)) = self.links.names.get(&g) {
            return self.node_value(id, vg);
        }
        let name = self.syms.name(self.globals.names[g as usize]).to_string();
        if let Some(id) = parse_node_global(&name) {
            let exists = match self.knowledge().get(id) {
                Ok(node) => node.is_some(),
                Err(e) => return Resolution::Fault(Fault::Error(e.to_string(), vec![])),
            };
            return if !exists {
                Resolution::Fault(Fault::Error(
                    format!("there is no stored s-expression with id {id} in the current version"),
                    vec![],
                ))
            } else if self.links.loading.contains(&id) {
                Resolution::Fault(loading_fault(id))
            } else {
                self.plan_load(id)
            };
        }
        let k = self.knowledge();
        let hits = match k.indexes.symbols.search(&name, SymbolMode::Exact, 6) {
            Ok(h) => h,
            // A damaged or missing index blob: the name may well be stored,
            // so saying "unbound" would be a wrong answer.
            Err(e @ crate::repo::index::IndexError::Store(_)) => {
                return Resolution::Fault(Fault::Error(
                    format!("{name}: cannot look the name up: {}", e.message()),
                    vec![],
                ))
            }
            Err(_) => return Resolution::Unbound,
        };
        let id = match hits.as_slice() {
            [] => return Resolution::Unbound,
            [one] => one.id,
            many => {
                let ids: Vec<String> = many.iter().map(|h| h.id.to_string()).collect();
                return Resolution::Fault(Fault::Error(
                    format!(
                        "{name}: several stored s-expressions have this name ({}{}); choose one with (arb:ref (({name} ID)) ...)",
                        ids.join(", "),
                        if many.len() > 5 { ", ..." } else { "" }
                    ),
                    vec![],
                ));
            }
        };
        let vg = {
            let s = self.syms.intern(&node_global_name(id));
            self.globals.index(s)
        };
        self.links.names.insert(g, (id, vg));
        self.node_value(id, vg)
    }

    /// The value of node `id`, held in global `vg` once loaded.
    fn node_value(&mut self, id: NodeId, vg: u32) -> Resolution {
        match self.globals.values[vg as usize] {
            Value::Undefined if self.links.loading.contains(&id) => {
                Resolution::Fault(loading_fault(id))
            }
            Value::Undefined => self.plan_load(id),
            v => Resolution::Value(v),
        }
    }

    /// The thunks that load `root` and whatever of its dependencies is not
    /// loaded, dependencies first.
    fn plan_load(&mut self, root: NodeId) -> Resolution {
        let order = match self.load_order(root) {
            Ok(o) => o,
            Err(f) => return Resolution::Fault(f),
        };
        let mut thunks = Vec::new();
        let mut ids = Vec::new();
        for node in &order {
            match self.compile_node(node) {
                Ok(templates) => {
                    for t in templates {
                        thunks.push(self.heap.alloc(Object::Closure(Closure {
                            template: t,
                            free: Box::new([]),
                        })));
                    }
                }
                Err(f) => return Resolution::Fault(f),
            }
            ids.push(node.id);
        }
        self.links.loading.extend(ids.iter().copied());
        let thunks = self.heap.list(&thunks);
        let ids: Vec<Value> = ids
            .iter()
            .map(|id| Num::from_u64(*id).into_value(&mut self.heap))
            .collect();
        let ids = self.heap.list(&ids);
        Resolution::Load(thunks, ids)
    }

    /// `root` and its dependencies that are not loaded, dependencies first.
    /// A cycle is cut where it closes (the value is read when code runs).
    fn load_order(&mut self, root: NodeId) -> Result<Vec<Node>, Fault> {
        let loaded = |vm: &Vm, id: NodeId| {
            vm.links
                .loaded
                .get(&id)
                .is_some_and(|&g| !matches!(vm.globals.values[g as usize], Value::Undefined))
                || vm.links.loading.contains(&id)
        };
        let mut seen: BTreeSet<NodeId> = BTreeSet::new();
        let mut order = Vec::new();
        let first = self
            .knowledge()
            .get(root)
            .map_err(|e| Fault::Error(e.to_string(), vec![]))?
            .cloned();
        let Some(first) = first else {
            return Err(Fault::Error(
                format!("there is no stored s-expression with id {root}"),
                vec![],
            ));
        };
        seen.insert(root);
        let mut stack: Vec<(Node, usize)> = vec![(first, 0)];
        while let Some((node, i)) = stack.pop() {
            match node.dependencies.get(i).map(|d| d.0) {
                Some(dep) => {
                    stack.push((node, i + 1));
                    if seen.contains(&dep) || loaded(self, dep) {
                        continue;
                    }
                    seen.insert(dep);
                    let user = stack.last().map(|(n, _)| n.id).unwrap_or(root);
                    let d = self
                        .knowledge()
                        .get(dep)
                        .map_err(|e| Fault::Error(e.to_string(), vec![]))?
                        .cloned();
                    let Some(d) = d else {
                        return Err(Fault::Error(
                            format!("stored s-expression {user} depends on {dep}, which does not exist in the current version"),
                            vec![],
                        ));
                    };
                    stack.push((d, 0));
                }
                None => order.push(node),
            }
        }
        Ok(order)
    }

    /// A node's code as templates to run in order, the last of which sets
    /// its value global.
    fn compile_node(&mut self, node: &Node) -> Result<Vec<Rc<Template>>, Fault> {
        let label = match node.symbol_names.first() {
            Some(n) => format!("stored s-expression {} ({n})", node.id),
            None => format!("stored s-expression {}", node.id),
        };
        let pos = Pos::NONE;
        let value_sym = self.syms.intern(&node_global_name(node.id));
        let define = Syn::Sym(Ident::plain(self.syms.intern("define")), pos);
        let Some(code) = node.code.clone() else {
            // A builtin: its value is the global of its name.
            let Some(name) = node.symbol_names.first() else {
                return Err(Fault::Error(format!("{label} has no code"), vec![]));
            };
            let target = Syn::Sym(Ident::plain(self.syms.intern(name)), pos);
            let form = Syn::list(
                vec![define, Syn::Sym(Ident::plain(value_sym), pos), target],
                pos,
            );
            return self
                .compile_form(&form, &None, true)
                .map(|t| vec![t])
                .map_err(|e| Fault::Error(format!("{label}: {}", e.message), vec![]));
        };
        let shape = code_shape(&code, &mut self.syms)
            .map_err(|m| Fault::Error(format!("{label}: its code does not read: {m}"), vec![]))?;
        let scope = Scope::new(None);
        for (dep, local) in &node.dependencies {
            if local.is_empty() {
                continue;
            }
            let l = self.syms.intern(local);
            let target = self.syms.intern(&node_global_name(*dep));
            scope.bind(Ident::plain(l), Binding::Global(target));
        }
        for name in &shape.defined {
            let n = self.syms.intern(name);
            let hidden = self.syms.intern(&format!("{name}@#{}", node.id));
            scope.bind(Ident::plain(n), Binding::Global(hidden));
        }
        let mut forms = flatten_begin(shape.forms, &self.syms);
        let value_name = Syn::Sym(Ident::plain(value_sym), pos);
        match shape.value {
            NodeValue::Name(n) => {
                let target = Syn::Sym(Ident::plain(self.syms.intern(&n)), pos);
                forms.push(Syn::list(vec![define, value_name, target], pos));
            }
            NodeValue::Expression => {
                if let Some(last) = forms.pop() {
                    forms.push(Syn::list(vec![define, value_name, last], pos));
                }
            }
            NodeValue::Nothing => {
                let unspecified = Syn::Atom(Atom::Unspecified, pos);
                forms.push(Syn::list(vec![define, value_name, unspecified], pos));
            }
        }
        let env = Some(scope);
        let mut out = Vec::with_capacity(forms.len());
        for f in &forms {
            let t = self.compile_form(f, &env, false).map_err(|e| {
                let at = if e.pos.is_known() {
                    format!(" at {}:{} of its code", e.pos.line, e.pos.col)
                } else {
                    String::new()
                };
                Fault::Error(format!("{label}: {}{at}", e.message), vec![])
            })?;
            out.push(t);
        }
        Ok(out)
    }
}

fn loading_fault(id: NodeId) -> Fault {
    Fault::Error(
        format!(
            "stored s-expression {id} is used while it is being loaded: its code needs its own value (a dependency cycle), or its loading failed earlier in this evaluation"
        ),
        vec![],
    )
}

/// Top-level `begin` forms spliced, so each definition is compiled on its own.
fn flatten_begin(forms: Vec<Syn>, syms: &SymbolTable) -> Vec<Syn> {
    let mut out = Vec::new();
    let mut queue: std::collections::VecDeque<Syn> = forms.into();
    while let Some(f) = queue.pop_front() {
        let is_begin = matches!(f.as_list().and_then(|l| l.first()),
            Some(Syn::Sym(id, _)) if syms.name(id.sym) == "begin");
        if is_begin {
            if let Some(items) = f.as_list() {
                for g in items[1..].iter().rev() {
                    queue.push_front(g.clone());
                }
            }
            continue;
        }
        out.push(f);
    }
    out
}
