//! `Knowledge` kept in a store: each commit stored before the call that
//! made it returns; concurrent writers replay or conflict, never lose a
//! commit; a store that fails leaves the knowledge base as stored; opening
//! reads only what is used.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::*;
use crate::repo::cas::{Hash, MemoryBlobs};
use crate::repo::index::SymbolMode;

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
    // The newest entry only.
    assert_eq!(reads(), 1);
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
    let mut seed = 0x1234_5678u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
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
