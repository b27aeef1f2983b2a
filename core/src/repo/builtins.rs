//! The builtin nodes: every `arb:` procedure, registered in the reserved id
//! range (`id % 65536 < 256`) with code `#f` and type "builtin-function", so
//! that `(arb:search-by-symbol "arb:")` finds them like any other knowledge.

use super::node::{Node, NodeId};

/// (id, name, tier, description). Ids are stable: stored versions refer to
/// them. Tiers: 0 system, 1 read-write, 2 read-only.
pub const ARB_PROCEDURES: &[(NodeId, &str, u8, &str)] = &[
    (
        1,
        "arb:current-version",
        2,
        "The id of the current version of the knowledge base",
    ),
    (
        2,
        "arb:reflog",
        2,
        "Every move of the current version, newest first (skip, limit)",
    ),
    (
        3,
        "arb:version-info",
        2,
        "A version's parent and its forward and reverse deltas",
    ),
    (
        4,
        "arb:version-chain",
        2,
        "The versions from the root to a version (limit)",
    ),
    (
        5,
        "arb:version-successors",
        2,
        "The direct children of a version",
    ),
    (
        6,
        "arb:switch-version",
        0,
        "Makes another version current and updates the indexes",
    ),
    (
        7,
        "arb:semantic-search",
        2,
        "Nodes whose descriptions are closest in meaning to a query",
    ),
    (
        8,
        "arb:search-by-symbol",
        2,
        "Nodes whose symbol names match a pattern (exact, prefix, wildcard, regex)",
    ),
    (
        9,
        "arb:get-metadata",
        2,
        "A node's id, description, type, symbol names, dependencies and code",
    ),
    (10, "arb:get-dependencies", 2, "The ids a node depends on"),
    (
        11,
        "arb:get-dependents",
        2,
        "The ids of the nodes that depend on a node",
    ),
    (
        12,
        "arb:closure",
        2,
        "Standalone Scheme source of nodes with everything they depend on",
    ),
    (
        13,
        "arb:create",
        1,
        "Stores new Scheme code with its metadata as a new version",
    ),
    (
        14,
        "arb:update",
        1,
        "Changes fields of a stored node as a new version",
    ),
    (
        15,
        "arb:delete",
        1,
        "Removes a stored node as a new version",
    ),
    (
        16,
        "arb:eval-readonly",
        2,
        "Evaluates an expression with read-only access to the knowledge base",
    ),
    (
        17,
        "arb:eval",
        1,
        "Evaluates an expression that may change the knowledge base",
    ),
    (
        18,
        "arb:ref",
        2,
        "Binds local names to stored nodes by id for a body",
    ),
    (
        19,
        "arb:transaction",
        1,
        "Runs changes as one version, or none if any fails",
    ),
    (
        20,
        "arb:error?",
        2,
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
pub fn tier_of(name: &str) -> Option<u8> {
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
        assert_eq!(tier_of("arb:switch-version"), Some(0));
        assert_eq!(tier_of("arb:create"), Some(1));
        assert_eq!(tier_of("arb:get-metadata"), Some(2));
        assert_eq!(tier_of("car"), None);
    }
}
