//! Reads for a browser of the knowledge base: a page of nodes (filtered by
//! type, sorted by name, id or recency), one node with its links and its
//! history across versions, every version as a graph, and the difference of
//! two versions. Plain data out, no I/O and no Scheme: every face that shows
//! the knowledge base to a person (the playground's browser today) reads it
//! through these, so the answers are the same everywhere.
//!
//! All of them read the committed versions (`version` `None` means the
//! working state, which outside a transaction is the current version).

use std::collections::{BTreeMap, HashMap};

use crate::repo::forest::{ForestError, Op, Timestamp, VersionForest};
use crate::repo::knowledge::Knowledge;
use crate::repo::node::{is_reserved, Node, NodeId, VersionId};

/// How a page of nodes is ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortBy {
    /// By first symbol name (nodes without one last), then id.
    Name,
    /// Most recently changed first (on the path from the root to the version
    /// shown), then id descending.
    Recency,
    /// By id, ascending.
    Id,
}

impl SortBy {
    pub fn from_name(name: &str) -> Option<SortBy> {
        match name {
            "name" => Some(SortBy::Name),
            "recency" => Some(SortBy::Recency),
            "id" => Some(SortBy::Id),
            _ => None,
        }
    }
}

/// Which nodes a page lists.
#[derive(Clone, Debug, Default)]
pub struct NodeFilter {
    /// Only nodes of this type ("function", "builtin-function", ...).
    pub kind: Option<String>,
    /// Also the builtin `arb:` procedures (reserved ids).
    pub builtins: bool,
}

/// One line of a node list.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSummary {
    pub id: NodeId,
    pub symbol_names: Vec<String>,
    pub kind: Option<String>,
    pub description: Option<String>,
    /// The newest version on the path to the version shown that created or
    /// changed the node.
    pub changed_in: Option<VersionId>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodePage {
    /// The version listed.
    pub version: VersionId,
    /// How many nodes pass the filter.
    pub total: usize,
    pub offset: usize,
    pub nodes: Vec<NodeSummary>,
    /// Every type of the version with its number of nodes (builtins counted
    /// only when the filter includes them), by type name.
    pub kinds: Vec<(String, usize)>,
}

/// The version a read looks at: the current one for `None`.
fn resolve(k: &Knowledge, version: Option<VersionId>) -> Result<VersionId, ForestError> {
    let v = version.unwrap_or_else(|| k.current());
    k.forest.version_info(v)?;
    Ok(v)
}

/// The ids an operation touches.
fn touched(op: &Op) -> NodeId {
    match op {
        Op::Create(n) => n.id,
        Op::Update { id, .. } => *id,
        Op::Delete(id) => *id,
    }
}

/// For every node, the newest version on the root → `version` path that
/// created or changed it.
fn last_changes(
    forest: &VersionForest,
    version: VersionId,
) -> Result<HashMap<NodeId, VersionId>, ForestError> {
    let mut out = HashMap::new();
    for v in forest.chain(version, usize::MAX)? {
        for op in &forest.version_info(v)?.forward {
            out.insert(touched(op), v);
        }
    }
    Ok(out)
}

/// A page of the nodes of `version`.
pub fn node_page(
    k: &Knowledge,
    version: Option<VersionId>,
    filter: &NodeFilter,
    sort: SortBy,
    offset: usize,
    limit: usize,
) -> Result<NodePage, ForestError> {
    let version = resolve(k, version)?;
    let changes = last_changes(&k.forest, version)?;
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut nodes: Vec<&Node> = Vec::new();
    for node in k.forest.nodes(version)? {
        let node = node?;
        if is_reserved(node.id) && !filter.builtins {
            continue;
        }
        let kind = node.kind.clone().unwrap_or_default();
        *kinds.entry(kind).or_default() += 1;
        if filter
            .kind
            .as_deref()
            .is_some_and(|want| node.kind.as_deref().unwrap_or("") != want)
        {
            continue;
        }
        nodes.push(node);
    }
    match sort {
        SortBy::Id => nodes.sort_by_key(|n| n.id),
        SortBy::Name => nodes.sort_by(|a, b| {
            let key = |n: &Node| (n.symbol_names.is_empty(), n.symbol_names.first().cloned());
            key(a).cmp(&key(b)).then(a.id.cmp(&b.id))
        }),
        SortBy::Recency => nodes.sort_by(|a, b| {
            let key = |n: &Node| (changes.get(&n.id).copied().unwrap_or(0), n.id);
            key(b).cmp(&key(a))
        }),
    }
    let total = nodes.len();
    let page = nodes
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|n| NodeSummary {
            id: n.id,
            symbol_names: n.symbol_names.clone(),
            kind: n.kind.clone(),
            description: n.description.clone(),
            changed_in: changes.get(&n.id).copied(),
        })
        .collect();
    Ok(NodePage {
        version,
        total,
        offset,
        nodes: page,
        kinds: kinds.into_iter().collect(),
    })
}

/// Another node, as a link: its id, the local name the linking node uses
/// for it (dependencies only) and its own symbol names.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeLink {
    pub id: NodeId,
    pub local_name: Option<String>,
    pub symbol_names: Vec<String>,
}

/// What happened to a node in one version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Updated,
    Deleted,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Updated => "updated",
            ChangeKind::Deleted => "deleted",
        }
    }
}

/// A version that created, changed or deleted a node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeHistoryEntry {
    pub version: VersionId,
    pub change: ChangeKind,
    pub timestamp: Timestamp,
    pub description: String,
    /// The node's code in that version (`None` once deleted).
    pub code: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodeView {
    pub version: VersionId,
    pub node: Node,
    pub dependencies: Vec<NodeLink>,
    pub dependents: Vec<NodeLink>,
    /// Every version, on any branch, that changed the node, oldest first.
    pub history: Vec<NodeHistoryEntry>,
}

/// The node `id` as it is in `version`, or `None` if it is not there.
pub fn node_view(
    k: &Knowledge,
    id: NodeId,
    version: Option<VersionId>,
) -> Result<Option<NodeView>, ForestError> {
    let version = resolve(k, version)?;
    let forest = &k.forest;
    let Some(node) = forest.get(version, id)? else {
        return Ok(None);
    };
    let names = |dep: NodeId| -> Vec<String> {
        forest
            .get(version, dep)
            .ok()
            .flatten()
            .map(|n| n.symbol_names.clone())
            .unwrap_or_default()
    };
    let dependencies = node
        .dependencies
        .iter()
        .map(|(dep, local)| NodeLink {
            id: *dep,
            local_name: Some(local.clone()),
            symbol_names: names(*dep),
        })
        .collect();
    let mut dependents: Vec<NodeLink> = Vec::new();
    for n in forest.nodes(version)? {
        let n = n?;
        if n.dependencies.iter().any(|(d, _)| *d == id) {
            dependents.push(NodeLink {
                id: n.id,
                local_name: None,
                symbol_names: n.symbol_names.clone(),
            });
        }
    }
    dependents.sort_by_key(|l| l.id);
    let mut history = Vec::new();
    for v in forest.versions() {
        let record = forest.version_info(v)?;
        let mut change = None;
        for op in record.forward.iter().filter(|op| touched(op) == id) {
            change = Some(match (op, change) {
                (Op::Create(_), _) => ChangeKind::Created,
                (Op::Delete(_), _) => ChangeKind::Deleted,
                (Op::Update { .. }, Some(ChangeKind::Created)) => ChangeKind::Created,
                (Op::Update { .. }, _) => ChangeKind::Updated,
            });
        }
        if let Some(change) = change {
            history.push(NodeHistoryEntry {
                version: v,
                change,
                timestamp: record.timestamp,
                description: record.description.clone(),
                code: forest.get(v, id)?.and_then(|n| n.code.clone()),
            });
        }
    }
    Ok(Some(NodeView {
        version,
        node: node.clone(),
        dependencies,
        dependents,
        history,
    }))
}

/// One version, for drawing the version graph.
pub use super::forest::VersionSummary;

#[derive(Clone, Debug, PartialEq)]
pub struct VersionGraph {
    pub current: VersionId,
    /// Every version, in order of creation (a parent before its children).
    pub versions: Vec<VersionSummary>,
}

pub fn version_graph(k: &Knowledge) -> VersionGraph {
    let forest = &k.forest;
    let versions = forest
        .versions()
        // Summaries only: a version's deltas are not read to draw it.
        .filter_map(|v| forest.version_summary(v).ok())
        .collect();
    VersionGraph {
        current: forest.current(),
        versions,
    }
}

/// What differs between two versions, each list by id.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct VersionDiff {
    pub from: VersionId,
    pub to: VersionId,
    pub added: Vec<Node>,
    pub removed: Vec<Node>,
    /// (in `from`, in `to`)
    pub changed: Vec<(Node, Node)>,
}

pub fn version_diff(
    k: &Knowledge,
    from: VersionId,
    to: VersionId,
) -> Result<VersionDiff, ForestError> {
    let mut out = VersionDiff {
        from,
        to,
        ..VersionDiff::default()
    };
    for change in k.forest.diff(from, to)? {
        match (change.old, change.new) {
            (None, Some(n)) => out.added.push(n),
            (Some(o), None) => out.removed.push(o),
            (Some(o), Some(n)) => out.changed.push((o, n)),
            (None, None) => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::forest::NodeChanges;

    fn node(code: &str, name: &str, kind: &str, deps: &[(NodeId, &str)]) -> Node {
        Node {
            id: 0,
            code: Some(code.into()),
            description: Some(format!("about {name}")),
            symbol_names: vec![name.into()],
            kind: Some(kind.into()),
            dependencies: deps.iter().map(|(d, l)| (*d, l.to_string())).collect(),
        }
    }

    /// v2 creates a, v3 creates b (uses a), v4 updates a, then a branch:
    /// back to v2, v5 creates c.
    fn sample() -> (Knowledge, [NodeId; 3]) {
        let mut k = Knowledge::new(Timestamp(0));
        let said = |what: &'static str| move |_: NodeId| what.to_string();
        let a = k
            .create(
                node("(define a 1)", "a", "constant", &[]),
                &said("create a"),
                Timestamp(1),
            )
            .unwrap()
            .id;
        let b = k
            .create(
                node("(define (b) x)", "b", "function", &[(a, "x")]),
                &said("create b"),
                Timestamp(2),
            )
            .unwrap()
            .id;
        let changes = NodeChanges {
            code: Some(Some("(define a 2)".into())),
            ..NodeChanges::default()
        };
        k.update(a, changes, &said("update a"), Timestamp(3))
            .unwrap();
        k.switch(2, "switch to 2", Timestamp(4)).unwrap();
        let c = k
            .create(
                node("(define c 3)", "c", "constant", &[]),
                &said("create c"),
                Timestamp(5),
            )
            .unwrap()
            .id;
        (k, [a, b, c])
    }

    #[test]
    fn pages_filter_and_sort() {
        let (k, [a, b, _c]) = sample();
        let all = node_page(&k, Some(4), &NodeFilter::default(), SortBy::Name, 0, 10).unwrap();
        assert_eq!(all.total, 2);
        assert_eq!(all.nodes.iter().map(|n| n.id).collect::<Vec<_>>(), [a, b]);
        assert_eq!(all.kinds, [("constant".into(), 1), ("function".into(), 1)]);
        let recent =
            node_page(&k, Some(4), &NodeFilter::default(), SortBy::Recency, 0, 10).unwrap();
        assert_eq!(
            recent.nodes.iter().map(|n| n.id).collect::<Vec<_>>(),
            [a, b]
        );
        assert_eq!(recent.nodes[0].changed_in, Some(4));
        let functions = NodeFilter {
            kind: Some("function".into()),
            builtins: false,
        };
        let page = node_page(&k, Some(4), &functions, SortBy::Id, 0, 10).unwrap();
        assert_eq!(page.nodes.iter().map(|n| n.id).collect::<Vec<_>>(), [b]);
        let second = node_page(&k, Some(4), &NodeFilter::default(), SortBy::Id, 1, 1).unwrap();
        assert_eq!((second.total, second.nodes[0].id), (2, b));
        let with_builtins = NodeFilter {
            kind: None,
            builtins: true,
        };
        let builtins = node_page(&k, Some(1), &with_builtins, SortBy::Id, 0, 100).unwrap();
        assert!(builtins.total >= 15, "{}", builtins.total);
        assert!(node_page(&k, Some(99), &NodeFilter::default(), SortBy::Id, 0, 1).is_err());
    }

    #[test]
    fn a_node_with_links_and_history() {
        let (k, [a, b, c]) = sample();
        let view = node_view(&k, a, Some(4)).unwrap().unwrap();
        assert_eq!(view.node.code.as_deref(), Some("(define a 2)"));
        assert_eq!(
            view.dependents.iter().map(|l| l.id).collect::<Vec<_>>(),
            [b]
        );
        let history: Vec<_> = view.history.iter().map(|h| (h.version, h.change)).collect();
        assert_eq!(
            history,
            [(2, ChangeKind::Created), (4, ChangeKind::Updated)]
        );
        assert_eq!(view.history[0].code.as_deref(), Some("(define a 1)"));
        let bv = node_view(&k, b, Some(3)).unwrap().unwrap();
        assert_eq!(bv.dependencies[0].local_name.as_deref(), Some("x"));
        assert_eq!(bv.dependencies[0].symbol_names, ["a"]);
        // c exists only on the branch made after switching back.
        assert!(node_view(&k, c, Some(4)).unwrap().is_none());
        assert!(node_view(&k, c, None).unwrap().is_some());
    }

    #[test]
    fn the_graph_and_a_diff() {
        let (k, [a, b, c]) = sample();
        let g = version_graph(&k);
        assert_eq!(g.current, 5);
        let parents: Vec<_> = g.versions.iter().map(|v| (v.id, v.parent)).collect();
        assert_eq!(
            parents,
            [
                (1, None),
                (2, Some(1)),
                (3, Some(2)),
                (4, Some(3)),
                (5, Some(2))
            ]
        );
        let d = version_diff(&k, 4, 5).unwrap();
        assert_eq!(d.added.iter().map(|n| n.id).collect::<Vec<_>>(), [c]);
        assert_eq!(d.removed.iter().map(|n| n.id).collect::<Vec<_>>(), [b]);
        assert_eq!(d.changed.len(), 1);
        assert_eq!(d.changed[0].0.id, a);
        assert_eq!(d.changed[0].1.code.as_deref(), Some("(define a 1)"));
        assert!(version_diff(&k, 4, 77).is_err());
    }
}
