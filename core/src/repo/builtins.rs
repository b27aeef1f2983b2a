//! The builtin nodes: every `arb:` procedure, registered in the reserved id
//! range (`id % 65536 < 256`) with code `#f` and type "builtin-function", so
//! that `(arb:search-by-symbol "arb:")` finds them like any other knowledge.

use super::node::{Node, NodeId};
use super::tier::Tier;

/// (id, name, the tier a call needs, description). Ids are stable: stored
/// versions refer to them.
pub const ARB_PROCEDURES: &[(NodeId, &str, Tier, &str)] = &[
    (
        1,
        "arb:current-version",
        Tier::ReadOnly,
        "The id of the current version of the knowledge base",
    ),
    (
        2,
        "arb:reflog",
        Tier::ReadOnly,
        "Every move of the current version, newest first (skip, limit)",
    ),
    (
        3,
        "arb:version-info",
        Tier::ReadOnly,
        "A version's parent and its forward and reverse deltas",
    ),
    (
        4,
        "arb:version-chain",
        Tier::ReadOnly,
        "The versions from the root to a version (limit)",
    ),
    (
        5,
        "arb:version-successors",
        Tier::ReadOnly,
        "The direct children of a version",
    ),
    (
        6,
        "arb:switch-version",
        Tier::System,
        "Makes another version current and updates the indexes",
    ),
    (
        7,
        "arb:semantic-search",
        Tier::ReadOnly,
        "Nodes whose descriptions are closest in meaning to a query",
    ),
    (
        8,
        "arb:search-by-symbol",
        Tier::ReadOnly,
        "Nodes whose symbol names match a pattern (exact, prefix, wildcard, regex)",
    ),
    (
        9,
        "arb:get-metadata",
        Tier::ReadOnly,
        "A node's id, description, type, symbol names, dependencies and code",
    ),
    (
        10,
        "arb:get-dependencies",
        Tier::ReadOnly,
        "The ids a node depends on",
    ),
    (
        11,
        "arb:get-dependents",
        Tier::ReadOnly,
        "The ids of the nodes that depend on a node",
    ),
    (
        12,
        "arb:closure",
        Tier::ReadOnly,
        "Standalone Scheme source of nodes with everything they depend on",
    ),
    (
        13,
        "arb:create",
        Tier::ReadWrite,
        "Stores new Scheme code with its metadata as a new version",
    ),
    (
        14,
        "arb:update",
        Tier::ReadWrite,
        "Changes fields of a stored node as a new version",
    ),
    (
        15,
        "arb:delete",
        Tier::ReadWrite,
        "Removes a stored node as a new version",
    ),
    (
        16,
        "arb:eval-readonly",
        Tier::ReadOnly,
        "Evaluates an expression with read-only access to the knowledge base",
    ),
    (
        17,
        "arb:eval",
        Tier::ReadWrite,
        "Evaluates an expression that may change the knowledge base",
    ),
    (
        18,
        "arb:ref",
        Tier::ReadOnly,
        "Binds local names to stored nodes by id for a body",
    ),
    (
        19,
        "arb:transaction",
        Tier::ReadWrite,
        "Runs changes as one version, or none if any fails",
    ),
    (
        20,
        "arb:error?",
        Tier::ReadOnly,
        "Whether a value is an error result of an arb: procedure",
    ),
];

/// The builtin nodes, in id order.
pub fn builtin_nodes() -> Vec<Node> {
    ARB_PROCEDURES
        .iter()
        .map(|&(id, name, _, description)| Node {
            id,
            code: None,
            description: Some(description.to_string()),
            symbol_names: vec![name.to_string()],
            kind: Some("builtin-function".to_string()),
            dependencies: Vec::new(),
        })
        .collect()
}

/// The tier an `arb:` procedure needs, by name.
pub fn tier_of(name: &str) -> Option<Tier> {
    ARB_PROCEDURES.iter().find(|p| p.1 == name).map(|p| p.2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::node::is_reserved;

    #[test]
    fn builtins_are_reserved_unique_and_named_arb() {
        let nodes = builtin_nodes();
        for (i, n) in nodes.iter().enumerate() {
            assert!(is_reserved(n.id), "{} is not in the reserved range", n.id);
            assert!(n.symbol_names[0].starts_with("arb:"));
            assert!(nodes[..i]
                .iter()
                .all(|m| m.id != n.id && m.symbol_names != n.symbol_names));
        }
        assert_eq!(tier_of("arb:switch-version"), Some(Tier::System));
        assert_eq!(tier_of("arb:create"), Some(Tier::ReadWrite));
        assert_eq!(tier_of("arb:get-metadata"), Some(Tier::ReadOnly));
        assert_eq!(tier_of("car"), None);
    }
}
