//! Figures for the version forest: commit rates, switch times, export sizes
//! and times, import time, at 100k and 1M nodes.
//!
//! cargo run --release -p arbores-core --example forest_bench [-- SIZES...]
//! (sizes default to 100000 1000000)

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use arbores_core::repo::forest::{NodeChanges, Op, Snapshot, Timestamp, VersionForest};
use arbores_core::repo::node::{Node, NodeId};

fn node(i: u64) -> Node {
    Node {
        id: 0,
        code: Some(format!("(define (f{i} x) (+ x {i}))")),
        description: Some(format!("adds {i} to its argument")),
        symbol_names: vec![format!("f{i}")],
        kind: Some("function".into()),
        dependencies: Vec::new(),
    }
}

fn builtins() -> Vec<Node> {
    (1..40)
        .map(|id| Node {
            id,
            code: None,
            description: Some(format!("builtin {id}")),
            symbol_names: vec![format!("arb:b{id}")],
            kind: Some("builtin-function".into()),
            dependencies: Vec::new(),
        })
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// CPU time of this thread, where Linux tells it: on a busy machine the
/// wall-clock figures also count waiting for a core.
fn cpu() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(Duration::from_nanos(
        s.split_whitespace().next()?.parse().ok()?,
    ))
}

fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let (t, c) = (Instant::now(), cpu());
    let r = f();
    let wall = t.elapsed();
    // The kernel counts CPU time in scheduler ticks (a few ms): shown only
    // where that is precise enough.
    if let (Some(c0), Some(c1)) = (c, cpu()) {
        if wall >= Duration::from_millis(100) {
            print!("[cpu {:.0} ms] ", ms(c1.saturating_sub(c0)));
        }
    }
    (r, wall)
}

fn update(id: NodeId, k: u64) -> Op {
    Op::Update {
        id,
        changes: NodeChanges {
            code: Some(Some(format!("(define (g{k} x) (* x {k}))"))),
            ..NodeChanges::default()
        },
    }
}

fn bench(n: u64) {
    println!("== {n} nodes");
    let mut clock = 0i64;
    let mut now = || {
        clock += 1;
        Timestamp(clock)
    };

    // All creates in one commit.
    let mut f = VersionForest::new(builtins(), "init", now()).expect("forest");
    let ops: Vec<Op> = (0..n).map(|i| Op::Create(node(i))).collect();
    let (c, d) = time(|| f.commit(ops, "bulk", now()).expect("commit"));
    println!(
        "create {n} in one commit: {:.0} ms ({:.0} nodes/s; {} changes reported)",
        ms(d),
        n as f64 / d.as_secs_f64(),
        c.changes.len()
    );
    let ids = c.created;

    // One node per commit: all of them at 100k, a sample on top of the
    // bulk store at larger sizes (each version keeps its own trie path, so a
    // million one-node versions would mostly measure memory).
    let singles = n.min(100_000);
    let mut g = VersionForest::new(builtins(), "init", now()).expect("forest");
    let (_, d) = time(|| {
        for i in 0..singles {
            g.commit(vec![Op::Create(node(i))], "one", now())
                .expect("commit");
        }
    });
    println!(
        "create {singles} one per commit (empty start): {:.0} ms ({:.0} commits/s)",
        ms(d),
        singles as f64 / d.as_secs_f64()
    );
    drop(g);
    let k = 10_000u64;
    let (_, d) = time(|| {
        for i in 0..k {
            f.commit(vec![Op::Create(node(n + i))], "one", now())
                .expect("commit");
        }
    });
    println!(
        "create {k} one per commit on top of {n}: {:.0} ms ({:.0} commits/s)",
        ms(d),
        k as f64 / d.as_secs_f64()
    );

    // Full export, then a chain of one-update commits, then switches.
    let (full, d) = time(|| f.export_full().expect("in memory"));
    println!(
        "full export: {:.1} MiB in {} blobs, {:.0} ms",
        mib(full.size()),
        full.blobs.len(),
        ms(d)
    );
    let mut incs: Vec<Snapshot> = Vec::new();
    let tip_before = f.current();
    let mut step = 0u64;
    let mut deltas = Vec::new();
    for i in 0..1000u64 {
        let id = ids[((i * 7919) % n) as usize];
        f.commit(vec![update(id, i)], "update", now())
            .expect("commit");
        deltas.push(f.current());
        step += 1;
        if step == 1 {
            let (inc, d) = time(|| f.export_new());
            println!(
                "incremental export after 1 update: {} bytes in {} blobs ({:.4}% of full), {:.3} ms",
                inc.size(),
                inc.blobs.len(),
                100.0 * inc.size() as f64 / full.size() as f64,
                ms(d)
            );
            incs.push(inc);
        }
    }
    let (inc, d) = time(|| f.export_new());
    println!(
        "incremental export after 999 more updates: {:.2} MiB in {} blobs ({:.0} bytes/commit), {:.1} ms",
        mib(inc.size()),
        inc.blobs.len(),
        inc.size() as f64 / 999.0,
        ms(d)
    );
    incs.push(inc);

    let tip = f.current();
    for dist in [1usize, 100, 1000] {
        let target = if dist == 1000 {
            tip_before
        } else {
            deltas[deltas.len() - 1 - dist]
        };
        let (changes, d1) = time(|| f.switch(target, "back", now()).expect("switch"));
        let (_, d2) = time(|| f.switch(tip, "forward", now()).expect("switch"));
        println!(
            "switch across {dist} deltas: {:.3} ms ({} nodes changed), and back {:.3} ms",
            ms(d1),
            changes.len(),
            ms(d2)
        );
    }
    // A branch: switch between siblings whose common ancestor is 1000
    // versions back.
    f.switch(tip_before, "fork", now()).expect("switch");
    for i in 0..1000u64 {
        let id = ids[((i * 104_729) % n) as usize];
        f.commit(vec![update(id, i + 5000)], "update", now())
            .expect("commit");
    }
    let (changes, d) = time(|| f.switch(tip, "cross", now()).expect("switch"));
    println!(
        "switch between branches 1000 + 1000 deltas apart: {:.3} ms ({} nodes changed)",
        ms(d),
        changes.len()
    );
    incs.push(f.export_new());

    // Import: the full export plus the increments, through a lookup.
    let mut store: HashMap<[u8; 32], Vec<u8>> = HashMap::new();
    for s in std::iter::once(&full).chain(incs.iter()) {
        for (h, b) in &s.blobs {
            store.insert(*h, b.clone());
        }
    }
    let refs = incs.last().map_or(&full.refs, |s| &s.refs).clone();
    drop(full);
    drop(incs);
    let (g, d) = time(|| VersionForest::import(&refs, |h| store.get(h)).expect("import"));
    println!(
        "import ({} versions, {:.1} MiB of blobs): {:.0} ms",
        g.versions().count(),
        mib(store.values().map(|b| b.len() + 32).sum()),
        ms(d)
    );
    assert_eq!(g.current(), f.current());
    assert_eq!(
        g.content_hash(g.current()).ok(),
        f.content_hash(f.current()).ok()
    );
}

fn main() {
    for n in common::sizes(&[100_000u64, 1_000_000]) {
        bench(n);
    }
}
