//! `Knowledge` kept in a store: each commit stored before the call that
//! made it returns; concurrent writers replay or conflict, never lose a
//! commit; a store that fails leaves the knowledge base as stored; opening
//! reads only what is used.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::*;
use crate::repo::cas::{Hash, MemoryBlobs};
use crate::repo::index::SymbolMode;
use crate::test_rng::TestRng as Rng;

/// A store in memory with the compare-and-swap commit of a real one.
#[derive(Default)]
struct TestStore {
    blobs: MemoryBlobs,
    head: RefCell<Option<Vec<u8>>>,
    /// Commits refuse with this error while set.
    failing: RefCell<Option<String>>,
    commits: Cell<u32>,
    /// Commit calls so far, and another writer's work run at the start of
    /// the call numbered `interpose.0` (1 for the first).
    calls: Cell<u32>,
    interpose: RefCell<Option<(u32, Box<dyn FnOnce()>)>>,
}

impl BlobSource for TestStore {
    fn blob(&self, name: &Hash) -> Result<Option<Vec<u8>>, String> {
        self.blobs.blob(name)
    }
}

impl KnowledgeStore for TestStore {
    fn head(&self) -> Result<Option<Vec<u8>>, String> {
        Ok(self.head.borrow().clone())
    }

    fn commit(&self, base: Option<&[u8]>, snapshot: &Snapshot) -> Result<CommitReply, String> {
        self.calls.set(self.calls.get() + 1);
        let due = matches!(&*self.interpose.borrow(), Some((at, _)) if *at == self.calls.get());
        if due {
            let taken = self.interpose.borrow_mut().take();
            if let Some((_, work)) = taken {
                work();
            }
        }
        if let Some(e) = self.failing.borrow().clone() {
            return Err(e);
        }
        if self.head.borrow().as_deref() != base {
            return Ok(CommitReply::Moved(self.head.borrow().clone()));
        }
        self.blobs.extend(snapshot.blobs.iter().cloned());
        *self.head.borrow_mut() = Some(snapshot.refs.clone());
        self.commits.set(self.commits.get() + 1);
        Ok(CommitReply::Committed)
    }
}

fn ts(ms: i64) -> Timestamp {
    Timestamp(ms)
}

fn node(name: &str) -> Node {
    Node {
        id: 0,
        code: Some(format!("(define ({name} x) x)")),
        description: Some(format!("the {name} function")),
        symbol_names: vec![name.to_string()],
        kind: Some("function".to_string()),
        dependencies: vec![],
    }
}

fn describe(id: NodeId) -> String {
    format!("change {id}")
}

fn open(store: &Rc<TestStore>) -> Knowledge {
    Knowledge::open(store.clone(), ts(0)).expect("open")
}

fn find(k: &Knowledge, name: &str) -> Vec<NodeId> {
    k.indexes
        .symbols
        .search(name, SymbolMode::Exact, 10)
        .expect("search")
        .iter()
        .map(|h| h.id)
        .collect()
}

#[test]
fn each_commit_is_stored_before_the_call_returns() {
    let store = Rc::new(TestStore::default());
    let mut k = open(&store);
    assert!(store.head().unwrap().is_none(), "opening wrote");
    let a = k.create(node("alpha"), &describe, ts(1)).unwrap();
    assert_eq!(store.commits.get(), 1);
    // Another session opened now sees it, by name, lazily.
    let other = open(&store);
    assert_eq!(find(&other, "alpha"), vec![a.id]);
    assert_eq!(other.current(), a.version.unwrap());
    // A transaction is stored once, when the outermost one commits.
    k.begin().unwrap();
    k.create(node("beta"), &describe, ts(2)).unwrap();
    k.begin().unwrap();
    k.create(node("gamma"), &describe, ts(2)).unwrap();
    assert_eq!(k.commit_transaction("inner", ts(2)).unwrap(), None);
    assert_eq!(store.commits.get(), 1);
    let v = k.commit_transaction("both", ts(3)).unwrap().unwrap();
    assert_eq!(store.commits.get(), 2);
    assert_eq!(k.take_committed(), vec![a.version.unwrap(), v]);
    let other = open(&store);
    assert_eq!(other.current(), v);
    assert_eq!(find(&other, "gamma").len(), 1);
    // A switch is stored too.
    k.switch(2, "back", ts(4)).unwrap();
    assert_eq!(open(&store).current(), 2);
}

/// A knowledge base opened before anything was stored sees another
/// writer's commits when it syncs: its own unstored initial version is not
/// work of its own that would hold the sync back.
#[test]
fn a_session_opened_on_an_empty_store_sees_other_writers() {
    let store = Rc::new(TestStore::default());
    let mut early = open(&store);
    let mut writer = open(&store);
    assert!(!early.sync().unwrap(), "nothing stored yet");
    let x = writer.create(node("x"), &describe, ts(1)).unwrap();
    assert!(
        early.sync().unwrap(),
        "the other writer's commit is adopted"
    );
    assert_eq!(find(&early, "x"), vec![x.id]);
    assert_eq!(early.current(), x.version.unwrap());
    assert!(!early.sync().unwrap());
    // Its own commit then builds on it, with no replay.
    let calls = store.calls.get();
    let y = early.create(node("y"), &describe, ts(2)).unwrap();
    assert_eq!(store.calls.get(), calls + 1);
    assert_eq!(y.id, x.id + 1);
}

/// A commit that loses the race twice is applied again twice, and its
/// reply gives the id it was finally stored under.
#[test]
fn a_commit_replayed_twice_reports_its_final_id() {
    let store = Rc::new(TestStore::default());
    let mut a = open(&store);
    let mut b = open(&store);
    let mut c = open(&store);
    assert_eq!(a.create(node("x"), &describe, ts(1)).unwrap().id, 256);
    // b's first try finds a's commit (call 2), its second try (call 3)
    // finds c's, made meanwhile.
    let calls = store.calls.get();
    *store.interpose.borrow_mut() = Some((
        calls + 2,
        Box::new(move || {
            c.create(node("z"), &describe, ts(2)).unwrap();
        }),
    ));
    let y = b.create(node("y"), &describe, ts(3)).unwrap();
    let fresh = open(&store);
    assert_eq!(find(&fresh, "z"), vec![257]);
    assert_eq!(find(&fresh, "y"), vec![258]);
    assert_eq!(y.id, 258);
}

#[test]
fn two_writers_lose_nothing() {
    let store = Rc::new(TestStore::default());
    let mut a = open(&store);
    let mut b = open(&store);
    let x = a.create(node("x"), &describe, ts(1)).unwrap();
    // b started before a's commit: its create is applied again on a's
    // state, and gets the next id and the next version.
    let y = b.create(node("y"), &describe, ts(2)).unwrap();
    assert_eq!((x.id, x.version), (256, Some(2)));
    assert_eq!((y.id, y.version), (257, Some(3)));
    assert_eq!(b.take_renumbered(), vec![(256, 257)]);
    let fresh = open(&store);
    assert_eq!(find(&fresh, "x"), vec![256]);
    assert_eq!(find(&fresh, "y"), vec![257]);
    assert_eq!(fresh.forest.chain(3, 10).unwrap(), vec![1, 2, 3]);
    // b's knowledge base is the stored one.
    assert_eq!(find(&b, "x"), vec![256]);
    // a catches up when it syncs.
    assert!(a.sync().unwrap());
    assert_eq!(find(&a, "y"), vec![257]);
    assert!(!a.sync().unwrap());
}

#[test]
fn the_same_node_changed_on_both_sides_is_a_conflict() {
    let store = Rc::new(TestStore::default());
    let mut a = open(&store);
    let n = a.create(node("shared"), &describe, ts(1)).unwrap().id;
    let mut b = open(&store);
    let change = |d: &str| NodeChanges {
        description: Some(Some(d.to_string())),
        ..NodeChanges::default()
    };
    a.update(n, change("from a"), &describe, ts(2)).unwrap();
    let commits = store.commits.get();
    let e = b.update(n, change("from b"), &describe, ts(3)).unwrap_err();
    match &e {
        ForestError::Conflict { nodes, reason } => {
            assert_eq!(nodes, &vec![n]);
            assert!(reason.contains(&n.to_string()), "{reason}");
        }
        other => panic!("not a conflict: {other:?}"),
    }
    assert_eq!(e.kind(), "conflict");
    assert_eq!(store.commits.get(), commits, "the conflict was stored");
    // b is now a's state, consistent with its indexes.
    let desc = b.get(n).unwrap().unwrap().description.clone();
    assert_eq!(desc.as_deref(), Some("from a"));
    assert_eq!(b.current(), a.current());
    // And b goes on from there.
    b.update(n, change("from b, again"), &describe, ts(4))
        .unwrap();
    a.sync().unwrap();
    let desc = a.get(n).unwrap().unwrap().description.clone();
    assert_eq!(desc.as_deref(), Some("from b, again"));
}

#[test]
fn a_transaction_is_applied_again_with_its_ids_renumbered() {
    let store = Rc::new(TestStore::default());
    let mut a = open(&store);
    let mut b = open(&store);
    b.begin().unwrap();
    let first = b.create(node("first"), &describe, ts(1)).unwrap().id;
    let mut second = node("second");
    second.dependencies = vec![(first, "first".into())];
    let second = b.create(second, &describe, ts(1)).unwrap().id;
    b.update(
        first,
        NodeChanges {
            description: Some(Some("changed in the transaction".into())),
            ..NodeChanges::default()
        },
        &describe,
        ts(1),
    )
    .unwrap();
    // Meanwhile a stores two nodes, taking b's ids.
    a.create(node("p"), &describe, ts(2)).unwrap();
    a.create(node("q"), &describe, ts(2)).unwrap();
    let v = b.commit_transaction("b's", ts(3)).unwrap().unwrap();
    assert_eq!(v, 4);
    let moved = b.take_renumbered();
    assert_eq!(moved, vec![(first, 258), (second, 259)]);
    let fresh = open(&store);
    let f = fresh.get(258).unwrap().unwrap();
    assert_eq!(f.description.as_deref(), Some("changed in the transaction"));
    let s = fresh.get(259).unwrap().unwrap();
    assert_eq!(s.dependencies, vec![(258, "first".to_string())]);
    assert_eq!(
        fresh.indexes.dependencies.dependents(258).unwrap(),
        vec![259]
    );
}

/// A version whose description the engine made names the ids its nodes
/// were stored under after a replay; a description the writer gave is
/// kept as given.
#[test]
fn a_replayed_version_is_described_by_its_stored_ids() {
    let store = Rc::new(TestStore::default());
    let mut a = open(&store);
    let mut b = open(&store);
    a.create(node("x"), &describe, ts(1)).unwrap();
    let summary = |id| op_summary(&Op::Create(Node { id, ..node("y") }));
    let y = b.create(node("y"), &summary, ts(2)).unwrap();
    assert_eq!(y.id, 257);
    a.create(node("p"), &describe, ts(3)).unwrap();
    b.begin().unwrap();
    b.create(node("q"), &describe, ts(4)).unwrap();
    let generated = transaction_summary(b.pending_ops());
    assert_eq!(generated, "transaction: create 258 (q)");
    let tx = b.commit_transaction(&generated, ts(4)).unwrap().unwrap();
    a.create(node("r"), &describe, ts(5)).unwrap();
    b.begin().unwrap();
    b.create(node("s"), &describe, ts(6)).unwrap();
    let given = b
        .commit_transaction("s, made by hand", ts(6))
        .unwrap()
        .unwrap();
    let fresh = open(&store);
    let described = |v| fresh.forest.version_info(v).unwrap().description.clone();
    assert_eq!(described(y.version.unwrap()), "create 257 (y)");
    assert_eq!(described(tx), "transaction: create 259 (q)");
    assert_eq!(described(given), "s, made by hand");
}

#[test]
fn a_failing_store_leaves_the_knowledge_base_as_stored() {
    let store = Rc::new(TestStore::default());
    let mut k = open(&store);
    let kept = k.create(node("kept"), &describe, ts(1)).unwrap();
    *store.failing.borrow_mut() = Some("disk full".into());
    let e = k.create(node("lost"), &describe, ts(2)).unwrap_err();
    assert_eq!(e.kind(), "store-error");
    assert!(e.to_string().contains("disk full"), "{e}");
    assert!(find(&k, "lost").is_empty());
    assert_eq!(k.current(), kept.version.unwrap());
    *store.failing.borrow_mut() = None;
    let again = k.create(node("lost"), &describe, ts(3)).unwrap();
    assert_eq!(again.version, Some(kept.version.unwrap() + 1));
    assert_eq!(find(&open(&store), "lost"), vec![again.id]);
    // The first commit of an empty store failing: back to nothing.
    let empty = Rc::new(TestStore::default());
    *empty.failing.borrow_mut() = Some("read-only file system".into());
    let mut k = open(&empty);
    assert!(k.create(node("x"), &describe, ts(1)).is_err());
    assert!(find(&k, "x").is_empty());
    assert_eq!(k.current(), 1);
}

#[test]
fn opening_reads_only_what_is_used() {
    let store = Rc::new(TestStore::default());
    let mut k = open(&store);
    k.begin().unwrap();
    for i in 0..20_000 {
        k.create(node(&format!("f{i}")), &describe, ts(1)).unwrap();
    }
    k.commit_transaction("many", ts(1)).unwrap();
    let stored = store.blobs.len();
    assert!(stored > 20_000);
    let k = open(&store);
    let reads = || k.forest.blobs().reads().0;
    // The newest entry, and the path to the semantic index's header (to
    // know whether this engine's embedder made it).
    assert!(reads() <= 5, "{} blobs read by opening", reads());
    let hit = find(&k, "f12345");
    assert_eq!(hit.len(), 1);
    let after_search = reads();
    assert!(after_search < 12, "{after_search} blobs read by one search");
    let n = k.get(hit[0]).unwrap().unwrap();
    assert_eq!(n.symbol_names, vec!["f12345".to_string()]);
    assert!(
        reads() - after_search < 12,
        "{} blobs read for one node",
        reads() - after_search
    );
    assert_eq!(
        k.node_count(),
        20_000 + super::super::builtins::ARB_PROCEDURES.len() as u64
    );
    // Everything checks out when read whole.
    let report = k.forest.verify().unwrap();
    assert_eq!(report.versions, 2);
}

#[test]
fn random_writers_lose_nothing() {
    let store = Rc::new(TestStore::default());
    let mut writers: Vec<Knowledge> = (0..4).map(|_| open(&store)).collect();
    let mut made: Vec<(String, NodeId, VersionId)> = Vec::new();
    let mut rng = Rng::new(0x1234_5678);
    let mut next = move || rng.next();
    for i in 0..200 {
        let w = (next() % 4) as usize;
        let k = &mut writers[w];
        if next() % 3 == 0 && !made.is_empty() {
            // An update of a node someone made: may conflict. A session
            // sees the others' commits before each evaluation.
            k.sync().unwrap();
            let (_, id, _) = made[(next() % made.len() as u64) as usize].clone();
            let r = k.update(
                id,
                NodeChanges {
                    code: Some(Some(format!("(define (w{w}-{i} x) x)"))),
                    ..NodeChanges::default()
                },
                &describe,
                ts(i),
            );
            match r {
                Ok(_) => {}
                // Another writer changed the same node: refused, never lost.
                Err(ForestError::Conflict { .. }) => {}
                Err(e) => panic!("{e}"),
            }
        } else {
            let name = format!("n{i}");
            let d = k.create(node(&name), &describe, ts(i)).unwrap();
            made.push((name, d.id, d.version.unwrap()));
        }
    }
    let fresh = open(&store);
    for (name, id, version) in &made {
        assert_eq!(find(&fresh, name), vec![*id], "{name}");
        assert!(fresh.forest.contains_version(*version));
    }
    // Distinct versions: every stored commit made one.
    let versions: Vec<_> = made.iter().map(|m| m.2).collect();
    let mut distinct = versions.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), versions.len());
    fresh.forest.verify().unwrap();
}

// ---- the semantic index kept in the store ------------------------------------

use crate::repo::index::{HashingEmbedder, SemanticConfig, SemanticHit, SemanticQuery};

/// A graph from 60 nodes on, the pending set inserted at 16: small enough
/// that the tests below cross every threshold.
fn small_config() -> SemanticConfig {
    SemanticConfig {
        exact_threshold: 60,
        side_set_max: 16,
        ..SemanticConfig::default()
    }
}

fn open_small(store: &Rc<TestStore>) -> Knowledge {
    let mut k = open(store);
    k.set_embedder(Box::new(HashingEmbedder::default()), small_config());
    k
}

const TOPICS: &[&str] = &[
    "sort a list of numbers",
    "parse a json document",
    "read the configuration file",
    "compute the factorial",
    "draw a tree on the screen",
    "send a network request",
    "merge two sorted lists",
    "快速排序实现",
];

fn described(i: usize) -> Node {
    let mut n = node(&format!("g{i}"));
    n.description = Some(format!("{} variant {}", TOPICS[i % TOPICS.len()], i / 7));
    n
}

fn create_many(k: &mut Knowledge, from: usize, to: usize) {
    k.begin().unwrap();
    for i in from..to {
        k.create(described(i), &describe, ts(1)).unwrap();
    }
    k.commit_transaction("many", ts(1)).unwrap();
}

const QUERIES: &[&str] = &[
    "sorting numbers",
    "json",
    "configuration",
    "排序",
    "tree variant 3",
];

/// The semantic hits of every query, loading (or building) the index.
fn semantic_hits(k: &mut Knowledge) -> Vec<Vec<SemanticHit>> {
    let q = SemanticQuery {
        top_k: 12,
        ..SemanticQuery::default()
    };
    let ix = k.semantic().unwrap();
    ix.maintain();
    QUERIES.iter().map(|t| ix.search(t, &q).unwrap()).collect()
}

/// The same queries over an index built from scratch from `k`'s nodes.
fn rebuilt_hits(k: &Knowledge) -> Vec<Vec<SemanticHit>> {
    let mut fresh = Indexes::with_embedder(Box::new(HashingEmbedder::default()), small_config());
    fresh.rebuild(k.working_nodes().unwrap()).unwrap();
    let q = SemanticQuery {
        top_k: 12,
        ..SemanticQuery::default()
    };
    fresh.semantic.maintain();
    QUERIES
        .iter()
        .map(|t| fresh.semantic.search(t, &q).unwrap())
        .collect()
}

fn entries(k: &mut Knowledge) -> Vec<(NodeId, Vec<f32>, Option<String>)> {
    k.semantic()
        .unwrap()
        .entries()
        .map(|(i, v, t)| (i, v.to_dense(), t.map(str::to_string)))
        .collect()
}

#[test]
fn the_semantic_index_is_stored_and_loaded_not_rebuilt() {
    let store = Rc::new(TestStore::default());
    let mut k = open_small(&store);
    create_many(&mut k, 0, 200);
    let before = semantic_hits(&mut k);
    let before_entries = entries(&mut k);
    // The commit built the graph (200 ≥ 60), so the stored index has it.
    let stats = k.indexes.semantic.stats();
    assert_eq!(stats.segments.len(), 1, "{stats:?}");
    assert!(stats.pending < 16, "{stats:?}");

    let mut again = open_small(&store);
    assert!(again.indexes.semantic.is_stored());
    assert!(!again.indexes.semantic.is_loaded());
    assert!(again.take_notes().is_empty());
    let reads = again.forest.blobs().reads().0;
    let after = semantic_hits(&mut again);
    assert!(again.take_notes().is_empty(), "loaded, not rebuilt");
    assert!(again.forest.blobs().reads().0 > reads);
    assert_eq!(after, before);
    assert_eq!(entries(&mut again), before_entries);
    assert_eq!(again.indexes.semantic.stats(), k.indexes.semantic.stats());
    assert_eq!(after, rebuilt_hits(&again));
    assert!(after.iter().all(|h| !h.is_empty()));
}

#[test]
fn the_stored_semantic_index_follows_creates_changes_and_deletes() {
    let store = Rc::new(TestStore::default());
    let mut k = open_small(&store);
    create_many(&mut k, 0, 100);
    // Another process, which never searches: its changes go into the
    // stored index without loading it, until the pending set is due.
    let mut w = open_small(&store);
    let first = w.create(described(100), &describe, ts(2)).unwrap();
    assert!(!w.indexes.semantic.is_loaded());
    let mut changed = described(3);
    changed.description = Some("an entirely new meaning: json parser".into());
    let id3 = find(&w, "g3")[0];
    w.update(
        id3,
        NodeChanges {
            description: Some(changed.description.clone()),
            ..NodeChanges::default()
        },
        &describe,
        ts(3),
    )
    .unwrap();
    let id5 = find(&w, "g5")[0];
    w.delete(id5, &describe, ts(4)).unwrap();
    assert!(
        !w.indexes.semantic.is_loaded(),
        "three small commits load nothing"
    );
    for i in 101..130 {
        w.create(described(i), &describe, ts(5)).unwrap();
    }
    // The pending set reached 16 at some commit: the graph took it.
    let stats = w.indexes.semantic.stats();
    assert!(stats.pending < 16, "{stats:?}");

    let mut r = open_small(&store);
    let hits = semantic_hits(&mut r);
    assert!(r.take_notes().is_empty());
    assert_eq!(hits, rebuilt_hits(&r));
    let ids: Vec<NodeId> = entries(&mut r).iter().map(|e| e.0).collect();
    assert!(ids.contains(&first.id) && ids.contains(&id3) && !ids.contains(&id5));
    let v3 = entries(&mut r).into_iter().find(|e| e.0 == id3).unwrap();
    let mut fresh = Indexes::with_embedder(Box::new(HashingEmbedder::default()), small_config());
    fresh.rebuild(r.working_nodes().unwrap()).unwrap();
    let f3 = fresh.semantic.entries().find(|e| e.0 == id3).unwrap();
    assert_eq!(
        v3.1,
        f3.1.to_dense(),
        "the changed description was embedded again"
    );
}

#[test]
fn switching_versions_takes_the_stored_index_of_the_version() {
    let store = Rc::new(TestStore::default());
    let mut k = open_small(&store);
    create_many(&mut k, 0, 80);
    let old = k.current();
    let old_hits = semantic_hits(&mut k);
    create_many(&mut k, 80, 200);
    let new = k.current();
    let new_hits = semantic_hits(&mut k);
    assert_ne!(old_hits, new_hits);
    // A large move: the old version's stored index is taken.
    k.switch(old, "back", ts(5)).unwrap();
    assert_eq!(semantic_hits(&mut k), old_hits);
    assert_eq!(semantic_hits(&mut k), rebuilt_hits(&k));
    // And kept by the store: a new process on the old version.
    let mut r = open_small(&store);
    assert_eq!(r.current(), old);
    assert_eq!(semantic_hits(&mut r), old_hits);
    r.switch(new, "forward", ts(6)).unwrap();
    assert_eq!(semantic_hits(&mut r), new_hits);
    // A small move (one node) is applied to the loaded index in memory.
    let before = r.current();
    r.create(described(500), &describe, ts(7)).unwrap();
    r.switch(before, "undo", ts(8)).unwrap();
    assert_eq!(semantic_hits(&mut r), new_hits);
    assert!(r.take_notes().is_empty());
}

#[test]
fn a_damaged_stored_index_is_built_again_with_a_note() {
    let store = Rc::new(TestStore::default());
    let mut k = open_small(&store);
    create_many(&mut k, 0, 150);
    let good = semantic_hits(&mut k);
    let maps = k.forest.indexes_of(k.current()).unwrap().clone();
    let map = &maps.iter().find(|(n, _)| n == "semantic").unwrap().1;
    let root = map.seal().unwrap();
    // Every blob of the map, in turn, flipped: the first damaged one is
    // noticed (by its hash) and the index built again, with the same
    // answers.
    let mut blobs = Vec::new();
    map.export_all(&mut Default::default(), &mut blobs).unwrap();
    assert!(blobs.len() > 3, "{} blobs", blobs.len());
    for (hash, _) in blobs.iter().take(6) {
        assert!(store.blobs.with_blob(hash, |b| {
            let m = b.len() / 2;
            b[m] ^= 0x10
        }));
        let mut r = open_small(&store);
        let hits = semantic_hits(&mut r);
        let notes = r.take_notes().join("\n");
        assert!(
            notes.contains("the stored semantic index") && notes.contains("built again"),
            "{notes}"
        );
        assert_eq!(hits, good);
        assert!(store.blobs.with_blob(hash, |b| {
            let m = b.len() / 2;
            b[m] ^= 0x10
        }));
    }
    // The root's own damage is seen when the header is read.
    let mut r = open_small(&store);
    assert!(r.take_notes().is_empty());
    assert_eq!(semantic_hits(&mut r), good);
    assert!(store.blobs.with_blob(&root.hash, |b| b.truncate(3)));
    let mut r = open_small(&store);
    assert!(!r.indexes.semantic.is_stored());
    assert_eq!(semantic_hits(&mut r), good);
    assert!(r.take_notes().join("\n").contains("built again"));
    // The next commit stores a sound index again.
    r.create(described(900), &describe, ts(9)).unwrap();
    let mut s = open_small(&store);
    let _ = semantic_hits(&mut s);
    assert!(s.take_notes().is_empty());
    assert_eq!(semantic_hits(&mut s), rebuilt_hits(&s));
}

#[test]
fn another_embedder_builds_the_index_again() {
    let store = Rc::new(TestStore::default());
    let mut k = open_small(&store);
    create_many(&mut k, 0, 100);
    let _ = semantic_hits(&mut k);
    let other = || Box::new(HashingEmbedder::new(64));
    let mut r = open(&store);
    r.set_embedder(other(), small_config());
    let notes = r.take_notes().join("\n");
    assert!(
        notes.contains("made by the embedder hashing-256") && notes.contains("hashing-64"),
        "{notes}"
    );
    let ix = r.semantic().unwrap();
    assert_eq!(ix.dim(), 64);
    assert!(ix.entries().all(|(_, v, _)| v.dim() == 64));
    // Its first commit stores the index of the new embedder...
    r.create(described(100), &describe, ts(2)).unwrap();
    let mut s = open(&store);
    s.set_embedder(other(), small_config());
    assert!(s.take_notes().is_empty());
    assert!(s.indexes.semantic.is_stored());
    let mut fresh = Indexes::with_embedder(other(), small_config());
    fresh.rebuild(s.working_nodes().unwrap()).unwrap();
    assert_eq!(s.semantic().unwrap().len(), fresh.semantic.len());
    assert!(s.take_notes().is_empty(), "loaded, not built");
    // ...which the first embedder refuses in turn.
    let mut t = open_small(&store);
    assert!(t
        .take_notes()
        .join("\n")
        .contains("made by the embedder hashing-64"));
    assert_eq!(semantic_hits(&mut t), rebuilt_hits(&t));
}

#[test]
fn a_searching_reader_sees_another_writers_nodes_after_sync() {
    let store = Rc::new(TestStore::default());
    let mut reader = open_small(&store);
    create_many(&mut reader, 0, 120);
    let _ = semantic_hits(&mut reader);
    let mut writer = open_small(&store);
    let mut made = Vec::new();
    for i in 0..40 {
        let mut n = described(1000 + i);
        n.description = Some(format!("zebra crossing signal {i}"));
        made.push(writer.create(n, &describe, ts(2)).unwrap().id);
    }
    let q = SemanticQuery {
        top_k: 50,
        ..SemanticQuery::default()
    };
    let zebra = |k: &mut Knowledge| -> Vec<NodeId> {
        let ix = k.semantic().unwrap();
        ix.maintain();
        let mut ids: Vec<NodeId> = ix
            .search("zebra crossing signal", &q)
            .unwrap()
            .iter()
            .filter(|h| h.score > 0.5)
            .map(|h| h.id)
            .collect();
        ids.sort_unstable();
        ids
    };
    assert!(zebra(&mut reader).is_empty());
    assert!(reader.sync().unwrap());
    assert_eq!(zebra(&mut reader), made);
    // And the reader's own next commit stores an index with them.
    reader.create(described(2000), &describe, ts(3)).unwrap();
    let mut r = open_small(&store);
    assert_eq!(zebra(&mut r), made);
    assert_eq!(semantic_hits(&mut r), rebuilt_hits(&r));
}

/// The hybrid hits of every query, as `arb:semantic-search` finds them.
fn hybrid_hits(k: &mut Knowledge) -> Vec<Vec<SemanticHit>> {
    let (hits, said) = hybrid_hits_told(k);
    assert!(said.is_empty(), "{said:?}");
    hits
}

/// `hybrid_hits`, and what the search told its user (notes, long work).
fn hybrid_hits_told(k: &mut Knowledge) -> (Vec<Vec<SemanticHit>>, String) {
    let q = SemanticQuery {
        top_k: 12,
        ..SemanticQuery::default()
    };
    let mut said = Vec::new();
    let hits = QUERIES
        .iter()
        .map(|t| {
            k.search_with(t, &q, &mut |s| said.push(s.to_string()))
                .unwrap()
                .unwrap()
        })
        .collect();
    said.extend(k.take_notes());
    (hits, said.join("\n"))
}

/// The same over indexes built from scratch from `k`'s nodes.
fn rebuilt_hybrid_hits(k: &Knowledge) -> Vec<Vec<SemanticHit>> {
    let mut fresh = Indexes::with_embedder(Box::new(HashingEmbedder::default()), small_config());
    fresh.rebuild(k.working_nodes().unwrap()).unwrap();
    fresh.semantic.maintain();
    let q = SemanticQuery {
        top_k: 12,
        ..SemanticQuery::default()
    };
    QUERIES
        .iter()
        .map(|t| fresh.search(t, &q).unwrap())
        .collect()
}

fn lexical_map(k: &Knowledge) -> crate::repo::cas::sorted::SortedMap {
    let maps = k.forest.indexes_of(k.current()).unwrap().clone();
    maps.into_iter()
        .find(|(n, _)| n == crate::repo::index::LEXICAL)
        .expect("a stored lexical index")
        .1
}

/// Searches that have read a quarter of the stored graph's members load
/// the index whole (the rest of the process searches in memory), and
/// answer as before.
#[test]
fn searches_that_read_much_of_the_stored_index_load_it() {
    let store = Rc::new(TestStore::default());
    let mut k = open_small(&store);
    create_many(&mut k, 0, 3000);
    let good = hybrid_hits(&mut k);
    let mut r = open_small(&store);
    let q = SemanticQuery {
        top_k: 12,
        ..SemanticQuery::default()
    };
    let mut searches = 0;
    while !r.indexes.semantic.is_loaded() {
        assert!(searches < 200, "not loaded after {searches} searches");
        let text = format!("{} {searches}", QUERIES[searches % QUERIES.len()]);
        let hits = r.search_with(&text, &q, &mut |s| panic!("{s}"));
        let fresh = k.search_with(&text, &q, &mut |s| panic!("{s}"));
        assert_eq!(hits.unwrap().unwrap(), fresh.unwrap().unwrap());
        searches += 1;
    }
    assert!(r.take_notes().is_empty());
    assert_eq!(hybrid_hits(&mut r), good);
    assert!(r.indexes.semantic.is_loaded());
}

/// A search that reads the stored semantic index in place and meets a
/// damaged code group (a blob on the way to it no longer matches its
/// name) says so, builds the index again from the nodes and answers as
/// before: an error, never a panic or a wrong answer.
#[test]
fn a_damaged_code_group_met_in_place_is_built_again_with_a_note() {
    let store = Rc::new(TestStore::default());
    let mut k = open_small(&store);
    create_many(&mut k, 0, 400);
    let good = hybrid_hits(&mut k);
    let maps = k.forest.indexes_of(k.current()).unwrap().clone();
    let map = maps
        .iter()
        .find(|(n, _)| n == "semantic")
        .unwrap()
        .1
        .clone();
    // The last code group (format 4: keys `[4] group`), and the blobs a
    // change of it alone writes again: the path from the root to it.
    let key = map
        .iter()
        .map(|kv| kv.unwrap().0.to_vec())
        .filter(|k| k[0] == 4)
        .last()
        .expect("code groups");
    let mut all = Vec::new();
    map.export_all(&mut Default::default(), &mut all).unwrap();
    let mut changed = map.clone();
    changed.insert(&key, b"another value").unwrap();
    let mut kept = Vec::new();
    changed
        .export_all(&mut Default::default(), &mut kept)
        .unwrap();
    let kept: std::collections::HashSet<_> = kept.into_iter().map(|(h, _)| h).collect();
    let path: Vec<_> = all.iter().filter(|(h, _)| !kept.contains(h)).collect();
    assert!(
        path.len() >= 2 && path.len() < all.len() / 2,
        "{}",
        path.len()
    );
    let mut in_place = 0;
    for (hash, _) in path {
        let flip = |b: &mut Vec<u8>| {
            let m = b.len() / 2;
            b[m] ^= 0x10
        };
        assert!(store.blobs.with_blob(hash, flip));
        let mut r = open_small(&store);
        // The root's damage is met when the header is read; the others' by
        // the search.
        in_place += usize::from(r.indexes.semantic.searchable_stored());
        let (hits, said) = hybrid_hits_told(&mut r);
        assert!(
            said.contains("the stored semantic index") && said.contains("built again"),
            "{said}"
        );
        assert_eq!(hits, good);
        assert!(store.blobs.with_blob(hash, flip));
    }
    assert!(in_place >= 1, "{in_place}");
}

#[test]
fn the_lexical_index_is_stored_and_read_lazily() {
    let store = Rc::new(TestStore::default());
    let mut k = open_small(&store);
    create_many(&mut k, 0, 3000);
    let good = hybrid_hits(&mut k);
    assert_eq!(good, rebuilt_hybrid_hits(&k));
    let mut blobs = Vec::new();
    lexical_map(&k)
        .export_all(&mut Default::default(), &mut blobs)
        .unwrap();
    assert!(blobs.len() > 40, "{} blobs", blobs.len());

    // Another process takes the stored index and reads a few of its blobs
    // for a query: the header, one term's frequency and its postings.
    let r = open_small(&store);
    assert!(r.indexes.lexical_built);
    let before = r.forest.blobs().reads().0;
    let lq = r
        .indexes
        .lexical
        .query("configuration", &crate::repo::index::lexical::PlainWords)
        .unwrap();
    let top = r.indexes.lexical.top(&lq, 5, &|_| Ok(true)).unwrap();
    assert_eq!(top.len(), 5);
    let read = r.forest.blobs().reads().0 - before;
    assert!(
        (read as usize) * 4 < blobs.len(),
        "{read} of {} blobs read by one query",
        blobs.len()
    );
    let mut r = r;
    let before = r.forest.blobs().reads().0;
    let q = SemanticQuery {
        top_k: 12,
        ..SemanticQuery::default()
    };
    let first = r.search_with(QUERIES[0], &q, &mut |s| panic!("{s}"));
    assert_eq!(first.unwrap().unwrap(), good[0]);
    // Neither index was loaded or built: both were read where stored.
    assert!(!r.indexes.semantic.is_loaded());
    let read = r.forest.blobs().reads().0 - before;
    assert!(
        (read as usize) < store.blobs.len() / 4,
        "{read} of {} blobs read by one search",
        store.blobs.len(),
    );
    assert_eq!(hybrid_hits(&mut r), good);
    assert!(r.take_notes().is_empty());

    // Changes follow it and are stored with their versions.
    r.create(described(5000), &describe, ts(2)).unwrap();
    let doomed = find(&r, "g17")[0];
    r.delete(doomed, &describe, ts(3)).unwrap();
    let mut changes = NodeChanges::default();
    changes.description = Some(Some("parse a json configuration".into()));
    let changed = find(&r, "g18")[0];
    r.update(changed, changes, &describe, ts(4)).unwrap();
    let mut s = open_small(&store);
    let after = hybrid_hits(&mut s);
    assert_eq!(after, rebuilt_hybrid_hits(&s));
    assert_ne!(after, good);
    assert!(s.take_notes().is_empty());
}

#[test]
fn a_damaged_lexical_index_is_built_again_with_a_note() {
    let store = Rc::new(TestStore::default());
    let mut k = open_small(&store);
    create_many(&mut k, 0, 1000);
    let good = hybrid_hits(&mut k);
    let map = lexical_map(&k);
    let mut blobs = Vec::new();
    map.export_all(&mut Default::default(), &mut blobs).unwrap();
    // Every blob, in turn, flipped: when the queries read it, the index
    // is built again with a note and the answers are the same.
    let mut noticed = 0;
    for (hash, _) in &blobs {
        let flip = |b: &mut Vec<u8>| {
            let m = b.len() / 2;
            b[m] ^= 0x10
        };
        assert!(store.blobs.with_blob(hash, flip));
        let mut r = open_small(&store);
        let (hits, notes) = hybrid_hits_told(&mut r);
        if !notes.is_empty() {
            assert!(
                notes.contains("the stored lexical index") && notes.contains("built again"),
                "{notes}"
            );
            noticed += 1;
        }
        assert_eq!(hits, good);
        assert!(store.blobs.with_blob(hash, flip));
    }
    assert!(noticed > 0);
    // A root of another format is refused the same way.
    let root = map.seal().unwrap();
    assert!(store.blobs.with_blob(&root.hash, |b| b.truncate(3)));
    let mut r = open_small(&store);
    let (hits, notes) = hybrid_hits_told(&mut r);
    assert_eq!(hits, good);
    assert!(notes.contains("lexical"), "{notes}");
    // The next commit stores a sound index again.
    r.create(described(900), &describe, ts(9)).unwrap();
    let mut s = open_small(&store);
    assert_eq!(hybrid_hits(&mut s), rebuilt_hybrid_hits(&s));
    assert!(s.take_notes().is_empty());
}

/// A store of 600 described nodes whose lexical index's root does not
/// decode, and that root.
fn store_with_a_damaged_lexical_index() -> (Rc<TestStore>, crate::repo::cas::sorted::MapRoot) {
    let store = Rc::new(TestStore::default());
    let mut k = open_small(&store);
    create_many(&mut k, 0, 600);
    let root = lexical_map(&k).seal().unwrap();
    assert!(store.blobs.with_blob(&root.hash, |b| b.truncate(3)));
    (store, root)
}

/// A version whose lexical index cannot be used (an older layout, here a
/// root that does not decode) gets a sound one at its next commit, with
/// no search before it: the processes after it find it stored instead of
/// each building it at its first search. The same for a transaction.
#[test]
fn the_next_commit_stores_a_lexical_index_the_version_could_not_use() {
    for in_transaction in [false, true] {
        let (store, root) = store_with_a_damaged_lexical_index();
        let mut r = open_small(&store);
        if in_transaction {
            r.begin().unwrap();
            r.create(described(900), &describe, ts(9)).unwrap();
            r.create(described(901), &describe, ts(9)).unwrap();
            r.commit_transaction("two", ts(9)).unwrap();
        } else {
            r.create(described(900), &describe, ts(9)).unwrap();
        }
        let notes = r.take_notes().join("\n");
        assert!(
            notes.contains("the stored lexical index"),
            "{in_transaction}: {notes}"
        );
        assert_ne!(lexical_map(&r).seal().unwrap().hash, root.hash);
        let mut s = open_small(&store);
        let (hits, notes) = hybrid_hits_told(&mut s);
        assert!(notes.is_empty(), "{in_transaction}: {notes}");
        assert_eq!(hits, rebuilt_hybrid_hits(&s), "{in_transaction}");
    }
}

/// A change to a store whose lexical index this build cannot use says, as
/// it builds one from the nodes, what it does; the commit stores it.
#[test]
fn a_change_tells_of_the_lexical_index_it_builds() {
    let (store, root) = store_with_a_damaged_lexical_index();
    let mut r = open_small(&store);
    let mut said = Vec::new();
    r.prepare_lexical(&mut |s| said.push(s.to_string()))
        .unwrap();
    let said = said.join("\n");
    assert!(
        said.contains("the stored lexical index cannot be used"),
        "{said}"
    );
    assert!(said.contains("building the lexical index of "), "{said}");
    let mut again = Vec::new();
    r.prepare_lexical(&mut |s| again.push(s.to_string()))
        .unwrap();
    assert!(again.is_empty(), "{again:?}");
    r.create(described(900), &describe, ts(9)).unwrap();
    assert!(r.take_notes().is_empty());
    assert_ne!(lexical_map(&r).seal().unwrap().hash, root.hash);
    let mut s = open_small(&store);
    let (hits, notes) = hybrid_hits_told(&mut s);
    assert!(notes.is_empty(), "{notes}");
    assert_eq!(hits, rebuilt_hybrid_hits(&s));
}

/// A host's embedder (`Engine::set_embedder`) indexes the store the engine
/// opens, and a store opened later by the same engine, from its first
/// search; the store records it, so an engine without it refuses the index
/// (with a note) instead of mixing vectors.
#[test]
fn an_engines_embedder_indexes_the_stores_it_opens() {
    let store = Rc::new(TestStore::default());
    let mut engine = crate::Engine::new();
    engine.set_tier(crate::repo::Tier::System);
    engine.set_embedder(Box::new(HashingEmbedder::new(64)), small_config());
    engine.open_store(store.clone()).unwrap();
    let made = engine.eval(
        r#"(arb:create "(define (merge-sort l) l)" '() "sorts a list by merging halves" "function" '("merge-sort"))"#,
    );
    assert!(made.error.is_none(), "{:?}", made.error);
    let found = engine.eval(r#"(length (arb:semantic-search "merging halves" 1))"#);
    assert_eq!(found.value.as_deref(), Some("1"), "{:?}", found.error);
    let k = engine.knowledge();
    assert_eq!(k.indexes.semantic.embedder_id(), "hashing-64");
    assert!(k.take_notes().is_empty(), "{:?}", k.take_notes());
    // The store holds the index of that embedder.
    let mut same = Knowledge::open_with(
        store.clone(),
        ts(1),
        Indexes::with_embedder(Box::new(HashingEmbedder::new(64)), small_config()),
    )
    .unwrap();
    assert!(same.indexes.semantic.is_stored());
    assert!(same.take_notes().is_empty());
    let mut other = open(&store);
    assert!(other
        .take_notes()
        .join("\n")
        .contains("made by the embedder hashing-64"));
    // The same engine opening the store again keeps its embedder.
    engine.open_store(store.clone()).unwrap();
    let k = engine.knowledge();
    assert_eq!(k.indexes.semantic.embedder_id(), "hashing-64");
    assert!(k.indexes.semantic.is_stored());
    assert!(k.take_notes().is_empty());
    // A new engine given the embedder before it opens the store embeds
    // nothing but its query: the builtins are not indexed in memory first
    // and the stored index is used.
    struct Counting(HashingEmbedder, Rc<Cell<usize>>);
    impl Embedder for Counting {
        fn dim(&self) -> usize {
            self.0.dim()
        }
        fn embed(&self, text: &str) -> Vec<f32> {
            self.1.set(self.1.get() + 1);
            self.0.embed(text)
        }
        fn id(&self) -> String {
            self.0.id()
        }
    }
    let count = Rc::new(Cell::new(0));
    let mut fresh = crate::Engine::new();
    fresh.set_tier(crate::repo::Tier::System);
    fresh.set_embedder(
        Box::new(Counting(HashingEmbedder::new(64), count.clone())),
        small_config(),
    );
    fresh.open_store(store.clone()).unwrap();
    let found = fresh.eval(r#"(length (arb:semantic-search "merging halves" 1))"#);
    assert_eq!(found.value.as_deref(), Some("1"), "{:?}", found.error);
    assert_eq!(count.get(), 1, "only the query is embedded");
}
