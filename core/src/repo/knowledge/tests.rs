//! `Knowledge` under random histories: the indexes always equal indexes
//! rebuilt from scratch for the working state; a failed transaction leaves
//! no trace; a successful one makes exactly one version; every version's
//! content is its forward deltas replayed from the root, and its reverse
//! delta applied to it gives its parent.

use std::collections::BTreeMap;

use super::*;
use crate::repo::index::{SemanticQuery, SymbolMode};

fn ts(ms: i64) -> Timestamp {
    Timestamp(ms)
}

fn node(name: &str, description: &str) -> Node {
    Node {
        id: 0,
        code: Some(format!("(define ({name} x) x)")),
        description: Some(description.to_string()),
        symbol_names: vec![name.to_string()],
        kind: Some("function".to_string()),
        dependencies: vec![],
    }
}

fn describe(id: NodeId) -> String {
    format!("change {id}")
}

#[test]
fn builtins_are_searchable_and_switch_keeps_indexes_in_step() {
    let mut k = Knowledge::new(ts(0));
    let hits = k
        .indexes
        .symbols
        .search("arb:", SymbolMode::Prefix, 100)
        .expect("search");
    assert_eq!(hits.len(), super::super::builtins::ARB_PROCEDURES.len());
    let root = k.current();
    let done = k
        .create(node("quicksort", "快速排序实现"), &describe, ts(1))
        .expect("create");
    let v = done.version.expect("a version of its own");
    let found = k
        .indexes
        .symbols
        .search("quick*", SymbolMode::Wildcard, 10)
        .expect("search");
    assert_eq!(
        found.iter().map(|h| h.id).collect::<Vec<_>>(),
        vec![done.id]
    );
    k.switch(root, "back to the root", ts(2)).expect("switch");
    assert!(k
        .indexes
        .symbols
        .search("quicksort", SymbolMode::Exact, 10)
        .expect("search")
        .is_empty());
    k.switch(v, "forward again", ts(3)).expect("switch");
    assert_eq!(
        k.indexes
            .symbols
            .search("quicksort", SymbolMode::Exact, 10)
            .expect("search")
            .len(),
        1
    );
}

#[test]
fn a_transaction_sees_its_own_changes_in_the_indexes() {
    let mut k = Knowledge::new(ts(0));
    let before = k.forest.versions().count();
    k.begin().unwrap();
    let a = k.create(node("add", "加法函数"), &describe, ts(1)).unwrap();
    assert_eq!(a.version, None);
    assert!(k.get(a.id).unwrap().is_some());
    assert_eq!(
        k.indexes
            .symbols
            .search("add", SymbolMode::Exact, 10)
            .unwrap()
            .len(),
        1
    );
    let hits = k
        .indexes
        .semantic
        .search("加法", &SemanticQuery::default())
        .unwrap();
    assert_eq!(hits.first().map(|h| h.id), Some(a.id));
    // Nothing is a version yet.
    assert_eq!(k.forest.versions().count(), before);
    assert!(k.forest.get(k.current(), a.id).unwrap().is_none());
    let v = k
        .commit_transaction("add", ts(2))
        .unwrap()
        .expect("version");
    assert_eq!(k.current(), v);
    assert_eq!(k.forest.versions().count(), before + 1);
    assert!(k.forest.get(v, a.id).unwrap().is_some());
}

#[test]
fn switching_inside_a_transaction_is_refused() {
    let mut k = Knowledge::new(ts(0));
    k.create(node("a", "a"), &describe, ts(1)).unwrap();
    k.begin().unwrap();
    assert_eq!(k.switch(1, "x", ts(2)), Err(ForestError::TransactionOpen));
    k.abort_all();
    assert_eq!(k.depth(), 0);
    k.switch(1, "x", ts(2)).unwrap();
}

// ------------------------------------------------------------ random histories

use crate::test_rng::TestRng as Rng;

const NAMES: &[&str] = &["sort", "qsort", "quick", "fact", "fold", "map", "排序"];
const DESCS: &[&str] = &[
    "快速排序实现",
    "归并排序算法",
    "计算阶乘",
    "sort a list",
    "fold",
];

fn random_node(r: &mut Rng, ids: &[NodeId]) -> Node {
    let dependencies = (0..r.below(3))
        .filter(|_| !ids.is_empty())
        .map(|_| (ids[r.below(ids.len() as u64) as usize], "d".to_string()))
        .collect();
    Node {
        id: 0,
        code: Some(format!("(define x{} 1)", r.below(100))),
        description: r
            .chance(80)
            .then(|| DESCS[r.below(DESCS.len() as u64) as usize].to_string()),
        symbol_names: (0..r.below(3))
            .map(|_| NAMES[r.below(NAMES.len() as u64) as usize].to_string())
            .collect(),
        kind: r.chance(50).then(|| "function".to_string()),
        dependencies,
    }
}

fn user_ids(k: &Knowledge) -> Vec<NodeId> {
    let mut ids: Vec<NodeId> = k
        .working_nodes()
        .unwrap()
        .map(|n| n.unwrap().id)
        .filter(|id| !crate::repo::node::is_reserved(*id))
        .collect();
    ids.sort_unstable();
    ids
}

fn random_op(r: &mut Rng, k: &mut Knowledge, clock: i64) -> Result<Done, ForestError> {
    let ids = user_ids(k);
    let all: Vec<NodeId> = k.working_nodes().unwrap().map(|n| n.unwrap().id).collect();
    match (r.below(10), ids.is_empty()) {
        (0..=4, _) | (_, true) => {
            let n = random_node(r, &all);
            k.create(n, &describe, ts(clock))
        }
        (5..=7, false) => {
            let id = ids[r.below(ids.len() as u64) as usize];
            let fresh = random_node(r, &all);
            let changes = NodeChanges {
                description: r.chance(60).then(|| fresh.description.clone()),
                symbol_names: r.chance(50).then(|| fresh.symbol_names.clone()),
                dependencies: r.chance(30).then(|| fresh.dependencies.clone()),
                ..NodeChanges::default()
            };
            k.update(id, changes, &describe, ts(clock))
        }
        _ => {
            // Sometimes a missing id: the operation fails and changes nothing.
            let id = if r.chance(10) {
                9_999_999
            } else {
                ids[r.below(ids.len() as u64) as usize]
            };
            k.delete(id, &describe, ts(clock))
        }
    }
}

fn assert_indexes_match_working_state(k: &Knowledge) {
    let mut fresh = Indexes::new();
    fresh.rebuild(k.working_nodes().unwrap()).unwrap();
    assert_eq!(k.indexes.symbols, fresh.symbols, "symbol index");
    assert_eq!(
        k.indexes.dependencies, fresh.dependencies,
        "dependency index"
    );
    let entries = |ix: &Indexes| {
        let mut v: Vec<_> = ix
            .semantic
            .entries()
            .map(|(i, v, t)| (i, v.to_dense(), t.map(str::to_string)))
            .collect();
        v.sort_by_key(|e| e.0);
        v
    };
    assert_eq!(entries(&k.indexes), entries(&fresh), "semantic index");
    if k.indexes.lexical_built {
        // The lexical index is the same map, whatever the order of the
        // changes that made it, and gives the same hybrid answers.
        assert_eq!(
            k.indexes.lexical.len().unwrap(),
            fresh.lexical.len().unwrap(),
            "lexical index"
        );
        let entries = |ix: &Indexes| {
            let map = ix.lexical.clone().map().unwrap();
            map.iter()
                .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
                .collect::<Vec<_>>()
        };
        assert!(
            entries(&k.indexes) == entries(&fresh),
            "lexical index entries"
        );
        let q = crate::repo::index::SemanticQuery::default();
        let answers = |ix: &Indexes, text: &str| {
            let mut v: Vec<_> = ix
                .search(text, &q)
                .unwrap()
                .into_iter()
                .map(|h| (h.id, (h.score * 1e4).round() as i64))
                .collect();
            v.sort();
            v
        };
        for text in ["sort", "list", "fact x", "排序"] {
            assert_eq!(
                answers(&k.indexes, text),
                answers(&fresh, text),
                "hybrid search {text:?}"
            );
        }
    }
}

type Model = BTreeMap<NodeId, Node>;

fn content(k: &Knowledge, v: VersionId) -> Model {
    k.forest
        .nodes(v)
        .unwrap()
        .map(|n| n.unwrap())
        .map(|n| (n.id, n.clone()))
        .collect()
}

fn replay(map: &mut Model, ops: &[Op]) {
    for op in ops {
        match op {
            Op::Create(n) => assert!(map.insert(n.id, n.clone()).is_none()),
            Op::Update { id, changes } => {
                changes.apply(map.get_mut(id).expect("update of a missing node"));
            }
            Op::Delete(id) => assert!(map.remove(id).is_some()),
        }
    }
}

fn run_history(seed: u64, steps: usize) {
    let r = &mut Rng::new(seed);
    let mut k = Knowledge::new(ts(0));
    let mut clock = 0i64;
    for _ in 0..steps {
        clock += 1;
        let choice = r.below(10);
        if choice < 4 {
            // One operation, a version of its own if it succeeds.
            let versions = k.forest.versions().count();
            let reflog = k.forest.reflog_len();
            let ok = random_op(r, &mut k, clock).is_ok();
            assert_eq!(k.forest.versions().count(), versions + usize::from(ok));
            assert_eq!(k.forest.reflog_len(), reflog + usize::from(ok));
        } else if choice < 8 {
            // A transaction, perhaps with a nested one, committed or aborted.
            let current = k.current();
            let versions = k.forest.versions().count();
            let reflog = k.forest.reflog_len();
            let before_symbols = k.indexes.symbols.clone();
            let before_deps = k.indexes.dependencies.clone();
            let before_content = content(&k, current);
            k.begin().unwrap();
            for _ in 0..r.below(6) {
                let _ = random_op(r, &mut k, clock);
                if r.chance(20) {
                    let inner_before = k.indexes.symbols.clone();
                    let inner_nodes: Model = k
                        .working_nodes()
                        .unwrap()
                        .map(|n| n.unwrap())
                        .map(|n| (n.id, n.clone()))
                        .collect();
                    k.begin().unwrap();
                    for _ in 0..r.below(4) {
                        let _ = random_op(r, &mut k, clock);
                    }
                    if r.chance(50) {
                        assert!(k.abort_transaction());
                        assert_eq!(k.indexes.symbols, inner_before);
                        let now: Model = k
                            .working_nodes()
                            .unwrap()
                            .map(|n| n.unwrap())
                            .map(|n| (n.id, n.clone()))
                            .collect();
                        assert_eq!(now, inner_nodes);
                    } else {
                        assert_eq!(k.commit_transaction("inner", ts(clock)), Ok(None));
                    }
                }
                assert_indexes_match_working_state(&k);
            }
            if r.chance(40) {
                k.abort_transaction();
                assert_eq!(k.current(), current);
                assert_eq!(k.forest.versions().count(), versions);
                assert_eq!(k.forest.reflog_len(), reflog);
                assert_eq!(k.indexes.symbols, before_symbols);
                assert_eq!(k.indexes.dependencies, before_deps);
                assert_eq!(content(&k, current), before_content);
            } else {
                let v = k
                    .commit_transaction("tx", ts(clock))
                    .unwrap()
                    .expect("outermost commit makes a version");
                assert_eq!(k.forest.versions().count(), versions + 1);
                assert_eq!(k.forest.reflog_len(), reflog + 1);
                assert_eq!(k.current(), v);
                assert_eq!(k.forest.version_info(v).unwrap().parent, Some(current));
            }
        } else {
            let all: Vec<VersionId> = k.forest.versions().collect();
            let target = all[r.below(all.len() as u64) as usize];
            k.switch(target, "switch", ts(clock)).unwrap();
            assert_eq!(k.current(), target);
        }
        assert_eq!(k.depth(), 0);
        assert_indexes_match_working_state(&k);
    }
    // Every version: its content is its chain's forward deltas replayed
    // from the root, and its reverse delta applied to it gives its parent.
    let root = content(&k, crate::repo::forest::ROOT_VERSION);
    for v in k.forest.versions().collect::<Vec<_>>() {
        let mut m = root.clone();
        for step in k.forest.chain(v, usize::MAX).unwrap().iter().skip(1) {
            replay(&mut m, &k.forest.version_info(*step).unwrap().forward);
        }
        assert_eq!(m, content(&k, v), "version {v} is not its deltas replayed");
        let info = k.forest.version_info(v).unwrap();
        if let Some(p) = info.parent {
            let mut back = content(&k, v);
            replay(&mut back, &info.reverse);
            assert_eq!(
                back,
                content(&k, p),
                "reverse delta of {v} is not its parent"
            );
        }
    }
}

#[test]
fn random_histories_keep_indexes_versions_and_deltas_consistent() {
    for seed in 1..=12 {
        run_history(seed, 120);
    }
}
