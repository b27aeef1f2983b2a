//! Unit tests and randomized property tests of the version forest.

use std::collections::BTreeMap;

use super::codec;
use super::*;

fn ts(ms: i64) -> Timestamp {
    Timestamp(ms)
}

fn user(code: &str) -> Node {
    Node {
        id: 0,
        code: Some(code.to_owned()),
        description: Some(format!("描述 {code}")),
        symbol_names: vec![code.to_owned()],
        kind: Some("function".into()),
        dependencies: Vec::new(),
    }
}

fn builtin(id: NodeId, name: &str) -> Node {
    Node {
        id,
        code: None,
        description: Some(format!("builtin {name}")),
        symbol_names: vec![name.to_owned()],
        kind: Some("builtin-function".into()),
        dependencies: Vec::new(),
    }
}

fn builtins() -> Vec<Node> {
    vec![
        builtin(1, "arb:current-version"),
        builtin(2, "arb:reflog"),
        builtin(65536 + 3, "arb:far"),
    ]
}

fn forest() -> VersionForest {
    VersionForest::new(builtins(), "initial", ts(1000)).expect("forest")
}

type Model = BTreeMap<NodeId, Node>;

fn content(f: &VersionForest, v: VersionId) -> Model {
    f.nodes(v)
        .expect("version")
        .map(|n| n.expect("node"))
        .map(|n| (n.id, n.clone()))
        .collect()
}

/// Applies recorded operations to a plain map, strictly.
fn replay(map: &mut Model, ops: &[Op]) {
    for op in ops {
        match op {
            Op::Create(n) => assert!(
                map.insert(n.id, n.clone()).is_none(),
                "create over {}",
                n.id
            ),
            Op::Update { id, changes } => {
                let n = map.get_mut(id).expect("update of a missing node");
                changes.apply(n);
            }
            Op::Delete(id) => assert!(map.remove(id).is_some(), "delete of missing {id}"),
        }
    }
}

fn model_diff(a: &Model, b: &Model) -> Vec<NodeChange> {
    let ids: std::collections::BTreeSet<_> = a.keys().chain(b.keys()).copied().collect();
    ids.into_iter()
        .filter(|id| a.get(id) != b.get(id))
        .map(|id| NodeChange {
            id,
            old: a.get(&id).cloned(),
            new: b.get(&id).cloned(),
        })
        .collect()
}

// ------------------------------------------------------------------ basics

#[test]
fn root_version_holds_the_builtins() {
    let f = forest();
    assert_eq!(f.current(), ROOT_VERSION);
    assert_eq!(f.node_count(1).unwrap(), 3);
    assert_eq!(f.get(1, 2).unwrap().unwrap().symbol_names, ["arb:reflog"]);
    assert_eq!(f.get(1, 65539).unwrap().unwrap().code, None);
    assert_eq!(f.get(1, 256).unwrap(), None);
    let info = f.version_info(1).unwrap();
    assert_eq!(info.parent, None);
    assert!(info.forward.is_empty() && info.reverse.is_empty());
    assert_eq!(info.timestamp, ts(1000));
    let log: Vec<_> = f.reflog(0, 10).unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].kind, ReflogKind::Init);
    assert_eq!(log[0].version, 1);
}

#[test]
fn builtins_must_have_distinct_reserved_ids() {
    let e = VersionForest::new(vec![builtin(300, "x")], "", ts(0)).err();
    assert_eq!(e, Some(ForestError::NotReserved(300)));
    let e = VersionForest::new(vec![builtin(5, "x"), builtin(5, "y")], "", ts(0)).err();
    assert_eq!(e, Some(ForestError::DuplicateId(5)));
}

#[test]
fn commit_records_forward_and_reverse_deltas() {
    let mut f = forest();
    let c = f
        .commit(
            vec![Op::Create(user("a")), Op::Create(user("b"))],
            "two",
            ts(2000),
        )
        .unwrap();
    assert_eq!(c.version, 2);
    assert_eq!(c.created, vec![256, 257]);
    assert_eq!(c.changes.len(), 2);
    assert_eq!(c.changes[0].old, None);
    assert_eq!(c.changes[0].new.as_ref().unwrap().id, 256);

    let mut p = f.begin().unwrap();
    let changes = NodeChanges {
        description: Some(Some("new".into())),
        dependencies: Some(vec![(257, "b".into()), (1, "cv".into())]),
        ..NodeChanges::default()
    };
    p.update(256, changes.clone()).unwrap();
    assert_eq!(
        p.get(256).unwrap().unwrap().description.as_deref(),
        Some("new")
    );
    let gone = p.delete(257).unwrap();
    assert_eq!(gone.code.as_deref(), Some("b"));
    let c = f.commit_pending(p, "edit", ts(3000)).unwrap();
    assert_eq!(c.version, 3);

    let info = f.version_info(3).unwrap();
    assert_eq!(info.parent, Some(2));
    assert_eq!(info.description, "edit");
    assert_eq!(
        info.forward,
        vec![Op::Update { id: 256, changes }, Op::Delete(257)]
    );
    assert_eq!(info.reverse[0], Op::Create(gone));
    assert_eq!(
        info.reverse[1],
        Op::Update {
            id: 256,
            changes: NodeChanges {
                description: Some(Some("描述 a".into())),
                dependencies: Some(vec![]),
                ..NodeChanges::default()
            }
        }
    );
    // Reverse applied to the version gives the parent.
    let mut m = content(&f, 3);
    replay(&mut m, &info.reverse);
    assert_eq!(m, content(&f, 2));
    assert_eq!(f.chain(3, 100).unwrap(), vec![1, 2, 3]);
    assert_eq!(f.chain(3, 2).unwrap(), vec![2, 3]);
    assert_eq!(f.chain(3, 0).unwrap(), Vec::<VersionId>::new());
    assert_eq!(f.successors(2).unwrap(), vec![3]);
    assert_eq!(f.successors(3).unwrap(), Vec::<VersionId>::new());
}

#[test]
fn invalid_operations_are_typed_errors_and_change_nothing() {
    let mut f = forest();
    f.commit(vec![Op::Create(user("a"))], "a", ts(1)).unwrap();
    let mut p = f.begin().unwrap();
    assert_eq!(
        p.update(1, NodeChanges::default()),
        Err(ForestError::ReservedId(1))
    );
    assert_eq!(p.delete(65539).err(), Some(ForestError::ReservedId(65539)));
    let e = p.delete(999).err().unwrap();
    assert_eq!(e, ForestError::NodeNotFound(999));
    assert_eq!(e.kind(), "s-expression-not-found");
    let mut bad = user("b");
    bad.dependencies = vec![(1, "ok".into()), (4242, "missing".into())];
    assert_eq!(
        p.create(bad),
        Err(ForestError::DependencyNotFound {
            node: None,
            dependency: 4242
        })
    );
    let deps = NodeChanges {
        dependencies: Some(vec![(777, "x".into())]),
        ..NodeChanges::default()
    };
    assert!(matches!(
        p.update(256, deps),
        Err(ForestError::DependencyNotFound {
            node: Some(256),
            ..
        })
    ));
    assert!(p.is_empty());
    assert_eq!(p.node_count(), 4);
    // A failed op in the middle of `commit` commits nothing.
    let e = f.commit(vec![Op::Create(user("c")), Op::Delete(31337)], "x", ts(2));
    assert_eq!(e.err(), Some(ForestError::NodeNotFound(31337)));
    assert_eq!(f.current(), 2);
    assert_eq!(f.versions().count(), 2);
    assert_eq!(
        f.switch(99, "", ts(3)),
        Err(ForestError::VersionNotFound(99))
    );
    assert_eq!(
        f.version_info(99).err().unwrap().kind(),
        "version-not-found"
    );
    assert!(f.chain(99, 1).is_err() && f.successors(99).is_err() && f.get(99, 1).is_err());
}

#[test]
fn dropped_transaction_leaves_no_trace_and_stale_one_is_refused() {
    let mut f = forest();
    let mut p = f.begin().unwrap();
    assert_eq!(p.create(user("a")).unwrap(), 256);
    drop(p);
    assert_eq!(f.versions().count(), 1);
    assert_eq!(f.reflog_len(), 1);
    let mut p = f.begin().unwrap();
    assert_eq!(p.create(user("a")).unwrap(), 256);
    let mut q = f.begin().unwrap();
    q.create(user("q")).unwrap();
    f.commit_pending(p, "p", ts(2)).unwrap();
    assert_eq!(
        f.commit_pending(q, "q", ts(3)).err(),
        Some(ForestError::StaleTransaction {
            base: 1,
            current: 2
        })
    );
}

#[test]
fn node_ids_skip_the_reserved_range() {
    let mut f = forest();
    f.next_node_id = 65535;
    let c = f
        .commit(
            vec![Op::Create(user("a")), Op::Create(user("b"))],
            "",
            ts(1),
        )
        .unwrap();
    assert_eq!(c.created, vec![65535, 65536 + 256]);
    assert!(c.created.iter().all(|&id| !is_reserved(id)));
    f.next_node_id = u64::MAX;
    assert_eq!(
        f.commit(vec![Op::Create(user("c"))], "", ts(2)).err(),
        Some(ForestError::IdsExhausted)
    );
}

#[test]
fn branches_switch_and_reflog() {
    let mut f = forest();
    f.commit(vec![Op::Create(user("a"))], "v2", ts(2)).unwrap();
    f.commit(vec![Op::Create(user("b"))], "v3", ts(3)).unwrap();
    let back = f.switch(2, "back to 2", ts(4)).unwrap();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].id, 257);
    assert!(back[0].old.is_some() && back[0].new.is_none());
    let c = f.commit(vec![Op::Create(user("c"))], "v4", ts(5)).unwrap();
    assert_eq!(c.version, 4);
    // Ids are never reused across branches.
    assert_eq!(c.created, vec![258]);
    assert_eq!(f.successors(2).unwrap(), vec![3, 4]);
    assert_eq!(f.chain(4, 10).unwrap(), vec![1, 2, 4]);
    let d = f.switch(3, "to 3", ts(6)).unwrap();
    assert_eq!(d, model_diff(&content(&f, 4), &content(&f, 3)));
    assert_eq!(d.len(), 2);
    // Switching to the current version is not a move.
    assert!(f.switch(3, "again", ts(7)).unwrap().is_empty());
    let log: Vec<_> = f
        .reflog(0, 50)
        .unwrap()
        .into_iter()
        .map(|e| (e.version, e.kind))
        .collect();
    use ReflogKind::*;
    assert_eq!(
        log,
        vec![
            (3, Switch),
            (4, Commit),
            (2, Switch),
            (3, Commit),
            (2, Commit),
            (1, Init)
        ]
    );
    let page: Vec<_> = f
        .reflog(2, 2)
        .unwrap()
        .into_iter()
        .map(|e| e.description.as_str())
        .collect();
    assert_eq!(page, vec!["back to 2", "v3"]);
    assert_eq!(f.reflog(10, 5).unwrap().len(), 0);
    let top = f.reflog(0, 1).unwrap()[0];
    assert_eq!(top.previous, Some(4));
    assert_eq!(top.timestamp, ts(6));
}

#[test]
fn equal_content_has_equal_hash_whatever_the_history() {
    let mut f = forest();
    f.commit(vec![Op::Create(user("a"))], "", ts(1)).unwrap();
    let only_a = f.content_hash(2).unwrap();
    f.commit(vec![Op::Create(user("b"))], "", ts(2)).unwrap();
    assert_ne!(f.content_hash(3).unwrap(), only_a);
    f.commit(vec![Op::Delete(257)], "", ts(3)).unwrap();
    assert_eq!(f.content_hash(4).unwrap(), only_a);
    assert!(f.diff(2, 4).unwrap().is_empty());
}

#[test]
fn timestamps_format_as_iso8601() {
    assert_eq!(ts(0).to_iso8601(), "1970-01-01T00:00:00Z");
    assert_eq!(ts(1_753_785_000_000).to_iso8601(), "2025-07-29T10:30:00Z");
    assert_eq!(ts(-999).to_iso8601(), "1969-12-31T23:59:59.001Z");
    assert_eq!(ts(951_782_400_000).to_iso8601(), "2000-02-29T00:00:00Z");
}

// ------------------------------------------------------------- persistence

#[test]
fn varints_are_canonical() {
    for v in [0u64, 1, 127, 128, 300, u64::MAX >> 1, u64::MAX] {
        let mut w = codec::Writer { buf: Vec::new() };
        w.uint(v);
        let mut r = codec::Reader::new(&w.buf);
        assert_eq!(r.uint("v").unwrap(), v);
        assert!(r.end().is_ok());
    }
    for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
        let mut w = codec::Writer { buf: Vec::new() };
        w.int(v);
        assert_eq!(codec::Reader::new(&w.buf).int("v").unwrap(), v);
    }
    // Overlong and oversized encodings are refused.
    assert!(codec::Reader::new(&[0x80, 0x00]).uint("v").is_err());
    assert!(codec::Reader::new(&[0xff; 10]).uint("v").is_err());
    assert!(codec::Reader::new(&[0xff; 3]).uint("v").is_err());
}

fn sample() -> VersionForest {
    let mut f = forest();
    f.commit(
        vec![Op::Create(user("a")), Op::Create(user("b"))],
        "ab",
        ts(2),
    )
    .unwrap();
    let mut c = user("c");
    c.dependencies = vec![(256, "a".into())];
    c.symbol_names = vec!["c".into(), "ç".into()];
    f.commit(vec![Op::Create(c)], "c", ts(3)).unwrap();
    f.switch(2, "back", ts(4)).unwrap();
    f.commit(
        vec![
            Op::Update {
                id: 257,
                changes: NodeChanges {
                    code: Some(None),
                    kind: Some(None),
                    symbol_names: Some(vec![]),
                    ..NodeChanges::default()
                },
            },
            Op::Delete(256),
        ],
        "edit",
        ts(5),
    )
    .unwrap();
    f
}

fn assert_same(a: &VersionForest, b: &VersionForest) {
    assert_eq!(a.current(), b.current());
    assert_eq!(
        a.versions().collect::<Vec<_>>(),
        b.versions().collect::<Vec<_>>()
    );
    for v in a.versions() {
        assert_eq!(content(a, v), content(b, v), "content of {v}");
        assert_eq!(a.version_info(v).unwrap(), b.version_info(v).unwrap());
        assert_eq!(a.successors(v).unwrap(), b.successors(v).unwrap());
        assert_eq!(a.content_hash(v).unwrap(), b.content_hash(v).unwrap());
    }
    assert_eq!(
        a.reflog(0, usize::MAX).unwrap(),
        b.reflog(0, usize::MAX).unwrap()
    );
    assert_eq!(a.next_node_id, b.next_node_id);
    assert_eq!(a.next_version, b.next_version);
    let hashes = |f: &VersionForest| -> Vec<Hash> {
        (0..f.reflog_len() as u64)
            .map(|i| f.entry(i).unwrap().hash)
            .collect()
    };
    assert_eq!(hashes(a), hashes(b));
    assert_eq!(a.refs_bytes(), b.refs_bytes());
}

#[test]
fn export_import_round_trip() {
    let mut f = sample();
    let snap = f.export_full().unwrap();
    let g = VersionForest::import_snapshots([&snap]).unwrap();
    assert_same(&f, &g);
    // Through a lookup function, as a host with a blob directory would.
    let store: BTreeMap<Hash, Vec<u8>> = snap.blobs.iter().cloned().collect();
    let mut g = VersionForest::import(&snap.refs, |h| store.get(h)).unwrap();
    assert_same(&f, &g);
    // The imported forest goes on where the original stopped.
    let a = f.commit(vec![Op::Create(user("x"))], "x", ts(9)).unwrap();
    let b = g.commit(vec![Op::Create(user("x"))], "x", ts(9)).unwrap();
    assert_eq!(a, b);
    assert_same(&f, &g);
    // Nothing new since the import: only the refs record.
    let mut h = VersionForest::import_snapshots([&snap]).unwrap();
    assert!(h.export_new().blobs.is_empty());
}

/// The blobs of a canonical trie of `nodes` laid out by refs version 1's
/// route, into `out`; returns the root's name.
fn v1_trie(nodes: &[&Node], level: u32, out: &mut BTreeMap<Hash, Vec<u8>>) -> Hash {
    if level > 0 && nodes.len() == 1 {
        let b = codec::encode_leaf(nodes[0]);
        let h = codec::hash_bytes(&b);
        out.insert(h, b);
        return h;
    }
    let mut slots: BTreeMap<u32, Vec<&Node>> = BTreeMap::new();
    for n in nodes {
        slots
            .entry(hamt::slot(hamt::route_v1(n.id), level))
            .or_default()
            .push(n);
    }
    let bitmap = slots.keys().fold(0u32, |m, s| m | 1 << s);
    let children: Vec<Hash> = slots
        .values()
        .map(|ns| v1_trie(ns, level + 1, out))
        .collect();
    let b = codec::encode_branch_v2(bitmap, &children);
    let h = codec::hash_bytes(&b);
    out.insert(h, b);
    h
}

/// `f`'s state as a refs version 1 store would hold it; `edit` may change
/// a version's record first.
fn as_v1_store(
    f: &VersionForest,
    edit: impl Fn(&mut VersionRecord),
) -> (Vec<u8>, BTreeMap<Hash, Vec<u8>>) {
    let mut blobs = BTreeMap::new();
    let mut prev = None;
    let mut log = f.reflog(0, usize::MAX).unwrap();
    log.reverse();
    for e in log {
        let root = match e.kind {
            ReflogKind::Switch => None,
            _ => {
                let nodes: Vec<&Node> = f.nodes(e.version).unwrap().map(|n| n.unwrap()).collect();
                Some(v1_trie(&nodes, 0, &mut blobs))
            }
        };
        let mut record = f.version_info(e.version).unwrap().clone();
        edit(&mut record);
        let entry = codec::encode_entry(&codec::EntryRef {
            prev,
            kind: e.kind,
            version: e.version,
            previous: e.previous,
            timestamp: e.timestamp,
            description: &e.description,
            record: root.map(|root| codec::VersionPart {
                parent: record.parent,
                root,
                node_count: record.node_count,
                forward: &record.forward,
                reverse: &record.reverse,
            }),
        });
        let h = codec::hash_bytes(&entry);
        blobs.insert(h, entry);
        prev = Some(h);
    }
    let refs = codec::encode_refs(&codec::Refs {
        version: 1,
        current: f.current,
        next_version: f.next_version,
        next_node_id: f.next_node_id,
        reflog_len: f.reflog_len() as u64,
        reflog_head: prev.unwrap_or([0; 32]),
    });
    (refs, blobs)
}

#[test]
fn a_refs_version_1_store_is_laid_out_again() {
    for seed in [0u64, 7, 19] {
        let mut f = if seed == 0 {
            sample()
        } else {
            random_forest(seed, 60)
        };
        let full = f.export_full().unwrap();
        let (refs, v1) = as_v1_store(&f, |_| {});
        // The old layout really differs, or this would prove nothing.
        assert!(v1.keys().any(|h| !full.blobs.iter().any(|(b, _)| b == h)));
        let mut g = VersionForest::import(&refs, |h| v1.get(h)).unwrap();
        // Laid out again, the state is the original's, hashes and all.
        assert_same(&f, &g);
        assert!(g.has_unsaved());
        // What the next export writes, added to the old store, is a store
        // of the current refs version that imports to the same state, and
        // the leaves were already there.
        let new = g.export_new();
        assert_eq!(new.refs, full.refs);
        let leaves: Vec<_> = new
            .blobs
            .iter()
            .filter(|(_, b)| b[1] == codec::TAG_LEAF)
            .collect();
        assert!(leaves.is_empty(), "{} leaves rewritten", leaves.len());
        let mut store = v1.clone();
        store.extend(new.blobs.iter().cloned());
        let h = VersionForest::import(&new.refs, |x| store.get(x)).unwrap();
        assert_same(&f, &h);
        assert!(!h.has_unsaved());
    }
    // A delta that disagrees with the stored trie is refused.
    let f = sample();
    let (refs, mut v1) = as_v1_store(&f, |_| {});
    let empty_3 = |r: &mut VersionRecord| {
        if r.id == 3 {
            r.forward.clear();
        }
    };
    let (refs_bad, bad) = as_v1_store(&f, empty_3);
    // The entries of `bad` carry the emptied delta; its tries are `f`'s.
    v1.extend(bad);
    assert_ne!(refs, refs_bad);
    let e = VersionForest::import(&refs_bad, |h| v1.get(h)).err();
    assert!(matches!(e, Some(ImportError::Inconsistent(_))), "{e:?}");
}

#[test]
fn incremental_exports_add_up() {
    let mut f = forest();
    let base = f.export_full().unwrap();
    let mut snaps = vec![base];
    f.commit(vec![Op::Create(user("a"))], "a", ts(2)).unwrap();
    snaps.push(f.export_new());
    f.commit(vec![Op::Create(user("b"))], "b", ts(3)).unwrap();
    f.switch(2, "back", ts(4)).unwrap();
    snaps.push(f.export_new());
    let only_refs = f.export_new();
    assert!(only_refs.blobs.is_empty());
    snaps.push(only_refs);
    f.commit(vec![Op::Delete(256)], "del", ts(5)).unwrap();
    snaps.push(f.export_new());
    let g = VersionForest::import_snapshots(&snaps).unwrap();
    assert_same(&f, &g);
    // An earlier prefix gives the earlier state.
    let g = VersionForest::import_snapshots(&snaps[..2]).unwrap();
    assert_eq!(g.current(), 2);
    assert_eq!(g.versions().count(), 2);
    // A switch costs one reflog entry.
    let mut f2 = VersionForest::import_snapshots(&snaps).unwrap();
    f2.switch(3, "", ts(6)).unwrap();
    assert_eq!(f2.export_new().blobs.len(), 1);
}

#[test]
fn incremental_export_is_proportional_to_the_change() {
    let mut f = forest();
    let ops = (0..20_000)
        .map(|i| Op::Create(user(&format!("(define v{i} {i})"))))
        .collect();
    f.commit(ops, "many", ts(2)).unwrap();
    let full = f.export_full().unwrap();
    f.commit(
        vec![Op::Update {
            id: 5000,
            changes: NodeChanges {
                code: Some(Some("(define changed 1)".into())),
                ..NodeChanges::default()
            },
        }],
        "one",
        ts(3),
    )
    .unwrap();
    let inc = f.export_new();
    // One leaf, the branches on its path (at most five levels below 2^25
    // ids), one entry, the forward and reverse deltas.
    assert!(inc.blobs.len() <= 9, "{} blobs", inc.blobs.len());
    assert!(
        inc.size() * 200 < full.size(),
        "{} vs {}",
        inc.size(),
        full.size()
    );
    let g = VersionForest::import_snapshots([&full, &inc]).unwrap();
    assert_same(&f, &g);
}

fn flip(bytes: &mut [u8], i: usize) {
    bytes[i] ^= 0x01;
}

#[test]
fn corrupting_any_byte_of_an_export_is_detected() {
    let mut f = sample();
    let snap = f.export_full().unwrap();
    for i in 0..snap.refs.len() {
        let mut s = snap.clone();
        flip(&mut s.refs, i);
        let e = VersionForest::import_snapshots([&s]).err();
        assert!(
            matches!(e, Some(ImportError::Refs(_))),
            "refs byte {i}: {e:?}"
        );
    }
    for len in 0..snap.refs.len() {
        let mut s = snap.clone();
        s.refs.truncate(len);
        assert!(
            VersionForest::import_snapshots([&s]).is_err(),
            "refs cut at {len}"
        );
    }
    let mut extra = snap.clone();
    extra.refs.push(0);
    assert!(VersionForest::import_snapshots([&extra]).is_err());
    for (b, (name, bytes)) in snap.blobs.iter().enumerate() {
        for i in 0..bytes.len() {
            // Snapshot import checks every blob against its name.
            let mut s = snap.clone();
            flip(&mut s.blobs[b].1, i);
            let e = VersionForest::import_snapshots([&s]).err();
            assert_eq!(e, Some(ImportError::HashMismatch { hash: *name }));
            // So does an import through a lookup function.
            let e = VersionForest::import(&s.refs, |h| {
                s.blobs.iter().find(|(n, _)| n == h).map(|(_, b)| b)
            })
            .err();
            assert_eq!(e, Some(ImportError::HashMismatch { hash: *name }));
        }
        for len in 0..bytes.len() {
            let mut s = snap.clone();
            s.blobs[b].1.truncate(len);
            assert!(VersionForest::import_snapshots([&s]).is_err());
        }
        // A lost blob is named.
        let mut s = snap.clone();
        s.blobs.remove(b);
        let e = VersionForest::import_snapshots([&s]).err();
        assert!(
            matches!(&e, Some(ImportError::MissingBlob { hash, .. }) if hash == name),
            "{e:?}"
        );
    }
    let msg = ImportError::HashMismatch {
        hash: snap.blobs[0].0,
    }
    .to_string();
    assert!(msg.contains(&codec::hex(&snap.blobs[0].0)));
}

/// A store whose blobs all hash correctly but do not make a valid forest.
fn forged(root_bitmap: u32, root_children: &[Hash], extra: Vec<Vec<u8>>, count: u64) -> Snapshot {
    let root = codec::encode_branch(root_bitmap, count, root_children);
    let root_hash = codec::hash_bytes(&root);
    let entry = codec::encode_entry3(&codec::Entry3 {
        seq: 0,
        prev: None,
        back: None,
        kind: ReflogKind::Init,
        version: 1,
        previous: None,
        made: 1,
        timestamp: ts(0),
        description: String::new(),
        header: Some(codec::Header {
            parent: None,
            root: root_hash,
            node_count: count,
            forward: (vec![], 0),
            reverse: (vec![], 0),
            indexes: vec![],
        }),
    });
    let mut blobs: Vec<_> = extra
        .into_iter()
        .map(|b| (codec::hash_bytes(&b), b))
        .collect();
    blobs.push((root_hash, root));
    let head = codec::hash_bytes(&entry);
    blobs.push((head, entry));
    Snapshot {
        blobs,
        refs: codec::encode_refs(&codec::Refs {
            version: codec::REFS_VERSION,
            current: 1,
            next_version: 2,
            next_node_id: 256,
            reflog_len: 1,
            reflog_head: head,
        }),
    }
}

#[test]
fn well_hashed_but_invalid_stores_are_refused() {
    let leaf = codec::encode_leaf(&builtin(1, "x"));
    let lh = codec::hash_bytes(&leaf);
    let right = 1u32 << hamt::slot(hamt::route(1), 0);
    // The right place imports.
    let ok = forged(right, &[lh], vec![leaf.clone()], 1);
    assert!(VersionForest::import_snapshots([&ok]).is_ok());
    // The wrong slot does not: lookups would miss the node.
    let wrong = forged(right.rotate_left(1), &[lh], vec![leaf.clone()], 1);
    let e = VersionForest::import_snapshots([&wrong]).err();
    assert!(matches!(e, Some(ImportError::Inconsistent(_))), "{e:?}");
    // A wrong node count.
    let e = VersionForest::import_snapshots([&forged(right, &[lh], vec![leaf.clone()], 2)]).err();
    assert!(matches!(e, Some(ImportError::Inconsistent(_))), "{e:?}");
    // A bitmap that does not match the children.
    let other = if right == 1 { 2 } else { 1 };
    let e = VersionForest::import_snapshots([&forged(right | other, &[lh], vec![leaf.clone()], 1)])
        .err();
    assert!(matches!(e, Some(ImportError::CorruptBlob { .. })), "{e:?}");
    // A non-canonical branch holding one leaf below the root.
    let sub = codec::encode_branch(1 << hamt::slot(hamt::route(1), 1), 1, &[lh]);
    let sh = codec::hash_bytes(&sub);
    let e = VersionForest::import_snapshots([&forged(right, &[sh], vec![leaf, sub], 1)]).err();
    assert!(matches!(e, Some(ImportError::Inconsistent(_))), "{e:?}");
}

// ------------------------------------------------------------ properties

use crate::test_rng::TestRng as Rng;

fn random_text(r: &mut Rng) -> String {
    const WORDS: &[&str] = &["sort", "排序", "x", "(define", ")", "λ", "fact", " "];
    (0..r.below(4))
        .map(|_| WORDS[r.below(WORDS.len() as u64) as usize])
        .collect()
}

fn random_opt(r: &mut Rng) -> Option<String> {
    r.chance(70).then(|| random_text(r))
}

fn random_deps(r: &mut Rng, ids: &[NodeId]) -> Vec<(NodeId, String)> {
    (0..r.below(3))
        .filter_map(|_| r.pick(ids).map(|id| (id, random_text(r))))
        .collect()
}

fn random_node(r: &mut Rng, ids: &[NodeId]) -> Node {
    Node {
        id: r.next(),
        code: random_opt(r),
        description: random_opt(r),
        symbol_names: (0..r.below(3)).map(|_| random_text(r)).collect(),
        kind: random_opt(r),
        dependencies: random_deps(r, ids),
    }
}

fn random_changes(r: &mut Rng, ids: &[NodeId]) -> NodeChanges {
    NodeChanges {
        code: r.chance(40).then(|| random_opt(r)),
        description: r.chance(40).then(|| random_opt(r)),
        symbol_names: r
            .chance(30)
            .then(|| (0..r.below(3)).map(|_| random_text(r)).collect()),
        kind: r.chance(20).then(|| random_opt(r)),
        dependencies: r.chance(30).then(|| random_deps(r, ids)),
    }
}

/// One random history. Checks every step against a model (a plain map per
/// version), then every version, then persistence.
/// A forest with a random history of commits (creates, updates and
/// deletes) and switches.
fn random_forest(seed: u64, steps: usize) -> VersionForest {
    let r = &mut Rng::new(seed);
    let mut f = VersionForest::new(builtins(), "init", ts(0)).unwrap();
    for step in 0..steps as i64 {
        let all: Vec<_> = f.versions().collect();
        if r.chance(20) && all.len() > 1 {
            let target = r.pick(&all).unwrap();
            f.switch(target, "switch", ts(step)).unwrap();
            continue;
        }
        let mut p = f.begin().unwrap();
        for _ in 0..1 + r.below(6) {
            let ids: Vec<NodeId> = p.nodes().map(|n| n.unwrap().id).collect();
            let user_ids: Vec<NodeId> = ids.iter().copied().filter(|&i| !is_reserved(i)).collect();
            match r.below(10) {
                c if c < 5 || user_ids.is_empty() => {
                    p.create(random_node(r, &ids)).unwrap();
                }
                c if c < 8 => {
                    let id = r.pick(&user_ids).unwrap();
                    p.update(id, random_changes(r, &ids)).unwrap();
                }
                _ => {
                    p.delete(r.pick(&user_ids).unwrap()).unwrap();
                }
            }
        }
        f.commit_pending(p, "commit", ts(step)).unwrap();
    }
    f
}

fn run_history(seed: u64, steps: usize) {
    let r = &mut Rng::new(seed);
    let mut f = VersionForest::new(builtins(), "init", ts(0)).unwrap();
    let mut models: BTreeMap<VersionId, Model> = BTreeMap::new();
    models.insert(1, content(&f, 1));
    let mut snaps = vec![f.export_full().unwrap()];
    let mut clock = 0;
    for _ in 0..steps {
        clock += 1 + r.below(1000) as i64;
        if r.chance(20) && f.versions().count() > 1 {
            let all: Vec<_> = f.versions().collect();
            let target = r.pick(&all).unwrap();
            let before = f.current();
            let reflog_len = f.reflog_len();
            let d = f.switch(target, "switch", ts(clock)).unwrap();
            assert_eq!(d, model_diff(&models[&before], &models[&target]));
            assert_eq!(f.current(), target);
            assert_eq!(f.reflog_len(), reflog_len + usize::from(before != target));
        } else {
            let base = f.current();
            let mut model = models[&base].clone();
            let mut p = f.begin().unwrap();
            for _ in 0..1 + r.below(6) {
                let ids: Vec<NodeId> = model.keys().copied().collect();
                let user_ids: Vec<NodeId> =
                    ids.iter().copied().filter(|&i| !is_reserved(i)).collect();
                let choice = r.below(10);
                if choice < 4 || user_ids.is_empty() {
                    let n = random_node(r, &ids);
                    let id = p.create(n.clone()).unwrap();
                    assert!(!is_reserved(id) && !model.contains_key(&id));
                    model.insert(id, Node { id, ..n });
                } else if choice < 7 {
                    let id = r.pick(&user_ids).unwrap();
                    let ch = random_changes(r, &ids);
                    p.update(id, ch.clone()).unwrap();
                    ch.apply(model.get_mut(&id).unwrap());
                } else if choice < 9 {
                    let id = r.pick(&user_ids).unwrap();
                    assert_eq!(Some(p.delete(id).unwrap()), model.remove(&id));
                } else {
                    // Failing operations change nothing.
                    let before = p.ops().len();
                    assert!(p.delete(1).is_err());
                    assert!(p.update(1 << 40, NodeChanges::default()).is_err());
                    assert_eq!(p.ops().len(), before);
                }
                assert_eq!(p.node_count(), model.len() as u64);
            }
            if r.chance(10) {
                drop(p);
                continue;
            }
            let c = f.commit_pending(p, "commit", ts(clock)).unwrap();
            assert_eq!(c.changes, model_diff(&models[&base], &model));
            assert_eq!(f.version_info(c.version).unwrap().parent, Some(base));
            models.insert(c.version, model);
        }
        if r.chance(30) {
            snaps.push(f.export_new());
        }
    }

    for (&v, model) in &models {
        assert_eq!(&content(&f, v), model, "seed {seed} version {v}");
        assert_eq!(f.node_count(v).unwrap(), model.len() as u64);
        for (id, n) in model {
            assert_eq!(f.get(v, *id).unwrap(), Some(n));
        }
        let info = f.version_info(v).unwrap();
        if let Some(parent) = info.parent {
            // Forward from the parent gives the version; reverse gives back
            // the parent.
            let mut m = models[&parent].clone();
            replay(&mut m, &info.forward);
            assert_eq!(&m, model);
            replay(&mut m, &info.reverse);
            assert_eq!(m, models[&parent]);
            assert!(f.successors(parent).unwrap().contains(&v));
        }
        // Replaying every forward delta from the root gives the version.
        let chain = f.chain(v, usize::MAX).unwrap();
        assert_eq!(chain[0], ROOT_VERSION);
        let mut m = models[&ROOT_VERSION].clone();
        for w in &chain[1..] {
            replay(&mut m, &f.version_info(*w).unwrap().forward);
        }
        assert_eq!(&m, model);
    }
    // Equal content, equal hash; different content, different hash.
    let vs: Vec<_> = models.keys().copied().collect();
    for &a in vs.iter().take(12) {
        for &b in &vs {
            let same = models[&a] == models[&b];
            assert_eq!(
                f.content_hash(a).unwrap() == f.content_hash(b).unwrap(),
                same
            );
            assert_eq!(f.diff(a, b).unwrap(), model_diff(&models[&a], &models[&b]));
        }
    }

    snaps.push(f.export_new());
    let g = VersionForest::import_snapshots(&snaps).unwrap();
    assert_same(&f, &g);
    let full = f.export_full().unwrap();
    let g = VersionForest::import_snapshots([&full]).unwrap();
    assert_same(&f, &g);
    // A full export holds each blob once.
    let names: std::collections::HashSet<_> = full.blobs.iter().map(|(h, _)| *h).collect();
    assert_eq!(names.len(), full.blobs.len());
}

#[test]
fn random_histories_match_the_model() {
    for seed in 0..60 {
        run_history(seed, 60);
    }
}

#[test]
fn a_long_random_history_matches_the_model() {
    run_history(0x0A5B_07E5, 600);
}

#[test]
fn decoders_never_panic_on_random_bytes() {
    let r = &mut Rng::new(7);
    let heads: [&[u8]; 9] = [
        &[codec::FORMAT_VERSION, codec::TAG_LEAF],
        &[codec::FORMAT_VERSION, codec::TAG_BRANCH],
        &[codec::FORMAT_VERSION, codec::TAG_ENTRY],
        codec::REFS_MAGIC,
        &[codec::FORMAT_VERSION, codec::TAG_BRANCH3],
        &[codec::FORMAT_VERSION, codec::TAG_ENTRY3],
        &[codec::FORMAT_VERSION, codec::TAG_DELTA],
        &[codec::FORMAT_VERSION, codec::TAG_MAP_LEAF],
        &[codec::FORMAT_VERSION, codec::TAG_MAP_INNER],
    ];
    for i in 0..40_000 {
        let mut bytes: Vec<u8> = heads[i % heads.len()].to_vec();
        if i % 5 == 0 {
            bytes.clear();
        }
        for _ in 0..r.below(120) {
            // Small values often, so that counts and flags are plausible.
            let b = if r.chance(50) { r.below(4) } else { r.next() } as u8;
            bytes.push(b);
        }
        let _ = codec::decode_tree(&bytes);
        let _ = codec::decode_entry(&bytes);
        let _ = codec::decode_entry3(&bytes);
        let _ = codec::decode_delta(&bytes);
        let _ = codec::decode_refs(&bytes);
        let _ = persist::links(&bytes);
    }
}

#[test]
fn import_errors_say_what_and_where() {
    let mut f = sample();
    let snap = f.export_full().unwrap();
    let mut s = snap.clone();
    s.refs.truncate(20);
    let e = VersionForest::import_snapshots([&s]).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("refs record, byte") && msg.contains("truncated"),
        "{msg}"
    );
    let mut s = snap.clone();
    s.refs[0] = b'X';
    let msg = VersionForest::import_snapshots([&s])
        .unwrap_err()
        .to_string();
    assert!(msg.contains("bad magic"), "{msg}");
    let (name, _) = snap.blobs[1].clone();
    let msg = VersionForest::import(&snap.refs, |h: &Hash| {
        (h != &name).then(|| {
            snap.blobs
                .iter()
                .find(|(n, _)| n == h)
                .map(|(_, b)| b.clone())
        })?
    })
    .unwrap_err()
    .to_string();
    assert!(
        msg.contains(&codec::hex(&name)) && msg.contains("missing"),
        "{msg}"
    );
}
