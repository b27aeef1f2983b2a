//! The knowledge browser's reads as JavaScript values: the shapes of
//! `arbores_core::repo::browse` (which does the work) with the field names
//! the page uses. Ids and versions are JavaScript numbers.

use arbores_core::repo::browse::{
    NodeHistoryEntry, NodeLink, NodePage, NodeSummary, NodeView, VersionDiff, VersionGraph,
};
use arbores_core::repo::node::Node;
use serde::Serialize;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeJs {
    pub id: u64,
    pub code: Option<String>,
    pub description: Option<String>,
    pub symbol_names: Vec<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub dependencies: Vec<u64>,
}

impl From<&Node> for NodeJs {
    fn from(n: &Node) -> Self {
        NodeJs {
            id: n.id,
            code: n.code.clone(),
            description: n.description.clone(),
            symbol_names: n.symbol_names.clone(),
            kind: n.kind.clone(),
            dependencies: n.dependencies.iter().map(|(d, _)| *d).collect(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryJs {
    pub id: u64,
    pub symbol_names: Vec<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub description: Option<String>,
    pub changed_in: Option<u64>,
}

impl From<NodeSummary> for SummaryJs {
    fn from(n: NodeSummary) -> Self {
        SummaryJs {
            id: n.id,
            symbol_names: n.symbol_names,
            kind: n.kind,
            description: n.description,
            changed_in: n.changed_in,
        }
    }
}

#[derive(Serialize)]
pub struct TypeCountJs {
    #[serde(rename = "type")]
    pub kind: String,
    pub count: usize,
}

#[derive(Serialize)]
pub struct PageJs {
    pub version: u64,
    pub total: usize,
    pub offset: usize,
    pub nodes: Vec<SummaryJs>,
    pub types: Vec<TypeCountJs>,
}

impl From<NodePage> for PageJs {
    fn from(p: NodePage) -> Self {
        PageJs {
            version: p.version,
            total: p.total,
            offset: p.offset,
            nodes: p.nodes.into_iter().map(SummaryJs::from).collect(),
            types: p
                .kinds
                .into_iter()
                .map(|(kind, count)| TypeCountJs { kind, count })
                .collect(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkJs {
    pub id: u64,
    pub local_name: Option<String>,
    pub symbol_names: Vec<String>,
}

impl From<NodeLink> for LinkJs {
    fn from(l: NodeLink) -> Self {
        LinkJs {
            id: l.id,
            local_name: l.local_name,
            symbol_names: l.symbol_names,
        }
    }
}

#[derive(Serialize)]
pub struct HistoryJs {
    pub version: u64,
    pub change: &'static str,
    pub timestamp: String,
    pub description: String,
    pub code: Option<String>,
}

impl From<NodeHistoryEntry> for HistoryJs {
    fn from(h: NodeHistoryEntry) -> Self {
        HistoryJs {
            version: h.version,
            change: h.change.as_str(),
            timestamp: h.timestamp.to_iso8601(),
            description: h.description,
            code: h.code,
        }
    }
}

#[derive(Serialize)]
pub struct NodeViewJs {
    pub version: u64,
    pub node: NodeJs,
    pub dependencies: Vec<LinkJs>,
    pub dependents: Vec<LinkJs>,
    pub history: Vec<HistoryJs>,
}

impl From<NodeView> for NodeViewJs {
    fn from(v: NodeView) -> Self {
        NodeViewJs {
            version: v.version,
            node: NodeJs::from(&v.node),
            dependencies: v.dependencies.into_iter().map(LinkJs::from).collect(),
            dependents: v.dependents.into_iter().map(LinkJs::from).collect(),
            history: v.history.into_iter().map(HistoryJs::from).collect(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionJs {
    pub id: u64,
    pub parent: Option<u64>,
    pub timestamp: String,
    pub description: String,
    pub node_count: u64,
}

#[derive(Serialize)]
pub struct GraphJs {
    pub current: u64,
    pub versions: Vec<VersionJs>,
}

impl From<VersionGraph> for GraphJs {
    fn from(g: VersionGraph) -> Self {
        GraphJs {
            current: g.current,
            versions: g
                .versions
                .into_iter()
                .map(|v| VersionJs {
                    id: v.id,
                    parent: v.parent,
                    timestamp: v.timestamp.to_iso8601(),
                    description: v.description,
                    node_count: v.node_count,
                })
                .collect(),
        }
    }
}

#[derive(Serialize)]
pub struct ChangedJs {
    pub before: NodeJs,
    pub after: NodeJs,
}

#[derive(Serialize)]
pub struct DiffJs {
    pub from: u64,
    pub to: u64,
    pub added: Vec<NodeJs>,
    pub removed: Vec<NodeJs>,
    pub changed: Vec<ChangedJs>,
}

impl From<VersionDiff> for DiffJs {
    fn from(d: VersionDiff) -> Self {
        DiffJs {
            from: d.from,
            to: d.to,
            added: d.added.iter().map(NodeJs::from).collect(),
            removed: d.removed.iter().map(NodeJs::from).collect(),
            changed: d
                .changed
                .iter()
                .map(|(before, after)| ChangedJs {
                    before: before.into(),
                    after: after.into(),
                })
                .collect(),
        }
    }
}

/// The current version, the node count and the newest reflog entries: what
/// the page shows after every evaluation.
#[derive(Serialize)]
pub struct SummaryOfKnowledgeJs {
    pub version: u64,
    pub nodes: u64,
    pub reflog: Vec<ReflogJs>,
}

#[derive(Serialize)]
pub struct ReflogJs {
    pub version: u64,
    pub timestamp: String,
    pub description: String,
}
