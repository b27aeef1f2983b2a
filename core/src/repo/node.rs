//! A node: one stored S-expression and what is known about it.

/// Node and version identifiers are 64-bit integers.
pub type NodeId = u64;
pub type VersionId = u64;

/// Ids with `id % 65536 < 256` are reserved for builtins (the `arb:`
/// procedures); user nodes never get one.
pub fn is_reserved(id: NodeId) -> bool {
    id % 65536 < 256
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub id: NodeId,
    /// Scheme source text; `None` for builtins.
    pub code: Option<String>,
    pub description: Option<String>,
    /// Suggested symbol names, in the order given.
    pub symbol_names: Vec<String>,
    /// The node's type ("function", "constant", "builtin-function", ...).
    pub kind: Option<String>,
    /// Dependencies: node id → the local name this node's code uses for it,
    /// in the order given.
    pub dependencies: Vec<(NodeId, String)>,
}
