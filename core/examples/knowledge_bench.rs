//! Figures for the knowledge base as Scheme uses it: every operation goes
//! through `Engine::eval` and the `arb:` procedures (reading the call,
//! building result alists and all), next to the same work done directly on
//! `Knowledge` in Rust, at 100k and 1M nodes.
//!
//! cargo run --release -p arbores-core --example knowledge_bench [-- SIZES...]
//! (sizes default to 100000 1000000)
//!
//! Printed per size: create rate in one transaction and one by one, switch
//! time across 1, 100 and 1,000 deltas, search latencies, full and
//! incremental export size and time, import time.

mod common;

use std::time::{Duration, Instant};

use arbores_core::repo::forest::Timestamp;
use arbores_core::repo::knowledge::Knowledge;
use arbores_core::repo::node::Node;
use arbores_core::{Engine, Limits, Snapshot, Tier};

const WORDS: &[&str] = &[
    "sort",
    "list",
    "tree",
    "graph",
    "path",
    "search",
    "merge",
    "split",
    "count",
    "sum",
    "vector",
    "string",
    "parse",
    "print",
    "number",
    "prime",
    "matrix",
    "queue",
    "stack",
    "hash",
    "排序",
    "算法",
    "列表",
    "树",
    "图",
    "路径",
    "搜索",
    "合并",
    "计数",
    "字符串",
    "fast",
    "slow",
    "recursive",
    "iterative",
    "binary",
    "linear",
    "random",
    "stable",
    "lazy",
    "pure",
];

/// A description of a few words, the same in Rust and in Scheme.
fn description(i: u64) -> String {
    let n = WORDS.len() as u64;
    let a = WORDS[(i.wrapping_mul(7919) % n) as usize];
    let b = WORDS[(i.wrapping_mul(104_729) / 7 % n) as usize];
    let c = WORDS[(i / 3 % n) as usize];
    format!("{a} {b} {c} {i}")
}

fn scheme_words() -> String {
    let quoted: Vec<String> = WORDS.iter().map(|w| format!("\"{w}\"")).collect();
    format!("(define bench-words (vector {}))", quoted.join(" "))
}

/// The Scheme version of `description` and of the node code.
const SCHEME_HELPERS: &str = r#"
(define (bench-description i)
  (let ((n (vector-length bench-words)))
    (string-append (vector-ref bench-words (modulo (* i 7919) n)) " "
                   (vector-ref bench-words (modulo (quotient (* i 104729) 7) n)) " "
                   (vector-ref bench-words (modulo (quotient i 3) n)) " "
                   (number->string i))))
(define (bench-create i)
  (let ((s (number->string i)))
    (arb:create (string-append "(define (f" s " x) (+ x " s "))")
                '()
                (bench-description i)
                "function"
                (list (string-append "f" s)))))
(define (bench-build i)
  (let ((s (number->string i)))
    (list (string-append "(define (f" s " x) (+ x " s "))")
          '()
          (bench-description i)
          "function"
          (list (string-append "f" s)))))
"#;

fn node(i: u64) -> Node {
    Node {
        id: 0,
        code: Some(format!("(define (f{i} x) (+ x {i}))")),
        description: Some(description(i)),
        symbol_names: vec![format!("f{i}")],
        kind: Some("function".into()),
        dependencies: Vec::new(),
    }
}

fn engine() -> Engine {
    let mut e = Engine::new();
    e.set_tier(Tier::System);
    e.set_clock(1_753_785_000.0);
    e.set_limits(Limits {
        max_steps: u64::MAX,
        max_memory: 8 << 30,
    });
    run(&mut e, &scheme_words());
    run(&mut e, SCHEME_HELPERS);
    e
}

fn run(e: &mut Engine, src: &str) -> String {
    let r = e.eval(src);
    if let Some(err) = r.error {
        panic!("{src}\n=> {err}");
    }
    r.value.unwrap_or_default()
}

fn timed(e: &mut Engine, src: &str) -> (String, Duration) {
    let t = Instant::now();
    let v = run(e, src);
    (v, t.elapsed())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Per-call time of `call` (a Scheme expression using `i`), over `count`
/// calls in one evaluation, less the same loop without the call.
fn per_call(e: &mut Engine, call: &str, count: u64) -> Duration {
    let (_, total) = timed(e, &format!("(do ((i 0 (+ i 1))) ((= i {count})) {call})"));
    let (_, empty) = timed(e, &format!("(do ((i 0 (+ i 1))) ((= i {count})) i)"));
    total.saturating_sub(empty) / count as u32
}

fn bench(n: u64) {
    println!("== {n} nodes");
    // --- Rust: Knowledge directly (forest + indexes), one transaction.
    let mut rust_k = {
        let mut k = Knowledge::new(Timestamp(0));
        let t = Instant::now();
        k.begin().expect("in memory");
        for i in 0..n {
            let _ = k.create(node(i), &|_| String::new(), Timestamp(1));
        }
        let ops = t.elapsed();
        let t2 = Instant::now();
        k.commit_transaction("bulk", Timestamp(1)).expect("commit");
        let commit = t2.elapsed();
        let total = ops + commit;
        println!(
            "Rust Knowledge, one transaction: {:.0} nodes/s ({:.2} s: operations {:.2} s, commit {:.2} s)",
            n as f64 / total.as_secs_f64(),
            total.as_secs_f64(),
            ops.as_secs_f64(),
            commit.as_secs_f64()
        );
        k
    };
    // Rust-level search latencies, for comparison with the Scheme ones.
    {
        use arbores_core::repo::index::{SemanticQuery, SymbolMode};
        let t = Instant::now();
        rust_k.indexes.semantic.maintain();
        println!(
            "Rust semantic graph build (deferred to the first search): {:.2} s = {:.0} nodes/s",
            t.elapsed().as_secs_f64(),
            n as f64 / t.elapsed().as_secs_f64()
        );
        let k = &rust_k;
        let reps = 2000u64;
        let m = n.max(1);
        let row = |label: &str, f: &mut dyn FnMut(u64)| {
            let t = Instant::now();
            for i in 0..reps {
                f(i);
            }
            println!("Rust {label}: {:.1} µs", us(t.elapsed() / reps as u32));
        };
        row("exact", &mut |i| {
            let _ = k
                .indexes
                .symbols
                .search(&format!("f{}", i * 7919 % m), SymbolMode::Exact, 100);
        });
        row("prefix, 6 characters", &mut |i| {
            let _ = k.indexes.symbols.search(
                &format!("f{}", 10000 + i * 7919 % 80000),
                SymbolMode::Prefix,
                100,
            );
        });
        row("prefix, 4 characters, limit 10", &mut |i| {
            let _ =
                k.indexes
                    .symbols
                    .search(&format!("f{}", 100 + i % 800), SymbolMode::Prefix, 10);
        });
        row("semantic top-10 (hybrid)", &mut |i| {
            let _ = k
                .indexes
                .search(&description(i * 13), &SemanticQuery::default());
        });
    }
    drop(rust_k);
    // --- Scheme: the same through arb:create in arb:transaction.
    let mut e = engine();
    let (_, build) = timed(
        &mut e,
        &format!("(do ((i 0 (+ i 1))) ((= i {n})) (bench-build i))"),
    );
    let (_, bulk) = timed(
        &mut e,
        &format!("(arb:transaction (do ((i 0 (+ i 1))) ((= i {n})) (bench-create i)))"),
    );
    println!(
        "Scheme arb:create in one arb:transaction: {:.0} nodes/s ({:.2} s; building the arguments alone {:.2} s)",
        n as f64 / bulk.as_secs_f64(),
        bulk.as_secs_f64(),
        build.as_secs_f64()
    );
    let (_, first) = timed(&mut e, "(arb:semantic-search \"sort list\")");
    println!(
        "first arb:semantic-search after the bulk load (builds the graph): {:.2} s",
        first.as_secs_f64()
    );
    // One by one: each create its own version.
    let single = 5_000u64;
    let (_, t) = timed(
        &mut e,
        &format!(
            "(do ((i {n} (+ i 1))) ((= i {})) (bench-create i))",
            n + single
        ),
    );
    println!(
        "Scheme arb:create one by one (a version each): {:.0} creates/s ({single} at {n} nodes)",
        single as f64 / t.as_secs_f64()
    );
    // Switches: a chain of 1,000 versions, each one update.
    let base: u64 = run(&mut e, "(arb:current-version)")
        .parse()
        .expect("version");
    let (_, t) = timed(
        &mut e,
        &format!(
            "(do ((i 0 (+ i 1))) ((= i 1000))
               (arb:update (+ 256 (modulo (* i 37) {n})) (list (cons \"description\" (bench-description (+ i 7))))))"
        ),
    );
    let top: u64 = run(&mut e, "(arb:current-version)")
        .parse()
        .expect("version");
    assert_eq!(top, base + 1000, "every update made a version");
    println!(
        "Scheme arb:update one by one: {:.0} updates/s",
        1000.0 / t.as_secs_f64()
    );
    for d in [1u64, 100, 1000] {
        let mut times = Vec::new();
        for _ in 0..5 {
            let (v1, t1) = timed(&mut e, &format!("(arb:switch-version {})", top - d));
            let (v2, t2) = timed(&mut e, &format!("(arb:switch-version {top})"));
            assert_eq!((v1, v2), ((top - d).to_string(), top.to_string()));
            times.push(t1);
            times.push(t2);
        }
        println!(
            "arb:switch-version across {d} deltas: median {:.3} ms",
            ms(median(times))
        );
    }
    // Searches: patterns vary with i so that nothing is cached.
    let k = 2_000;
    let m = n.max(1);
    let rows = [
        ("exact", format!("(arb:search-by-symbol (string-append \"f\" (number->string (modulo (* i 7919) {m}))) \"exact\")")),
        ("prefix, 6 characters (<= 100 hits)", format!("(arb:search-by-symbol (string-append \"f\" (number->string (+ 10000 (modulo (* i 7919) 80000)))))")),
        ("prefix, 4 characters, limit 10", format!("(arb:search-by-symbol (string-append \"f\" (number->string (+ 100 (modulo i 800)))) \"prefix\" 10)")),
        ("wildcard f12*3", "(arb:search-by-symbol \"f12*3\" \"wildcard\" 10)".to_string()),
        ("regex ^f12.*9$", "(arb:search-by-symbol \"^f12.*9$\" \"regex\" 10)".to_string()),
        ("fuzzy (distance 2)", format!("(arb:search-by-symbol (string-append \"f\" (number->string (+ 10000 (modulo (* i 7919) 80000)))) \"fuzzy\" 10)")),
        ("semantic top-10", "(arb:semantic-search (bench-description (* i 13)))".to_string()),
    ];
    // Graph work that the switches and updates deferred is done by the
    // first semantic search; time it on its own.
    let (_, t) = timed(&mut e, "(arb:semantic-search \"sort list\")");
    println!(
        "first arb:semantic-search after the updates and switches (graph work): {:.1} ms",
        ms(t)
    );
    for (label, call) in rows {
        let count = if label.starts_with("semantic") || label.starts_with("fuzzy") {
            k / 10
        } else {
            k
        };
        let t = per_call(&mut e, &call, count);
        println!("{label}: {:.1} µs per call", us(t));
    }
    // Persistence.
    let t = Instant::now();
    let full = e.export_full().expect("in memory");
    let full_t = t.elapsed();
    println!(
        "full export: {:.1} MiB in {} blobs, {:.0} ms",
        full.size() as f64 / (1 << 20) as f64,
        full.blobs.len(),
        ms(full_t)
    );
    run(&mut e, &format!("(bench-create {})", n + single + 1));
    let t = Instant::now();
    let inc = e.export_new();
    let inc_t = t.elapsed();
    println!(
        "incremental export after one arb:create: {} bytes in {} blobs, {:.3} ms",
        inc.size(),
        inc.blobs.len(),
        ms(inc_t)
    );
    let snaps: Vec<Snapshot> = vec![full, inc];
    let mut fresh = Engine::new();
    let t = Instant::now();
    fresh.import_snapshots(snaps.iter()).expect("import");
    println!(
        "import (full + incremental, indexes rebuilt): {:.0} ms",
        ms(t.elapsed())
    );
    let mut fresh = fresh;
    fresh.set_tier(Tier::System);
    let (_, first) = timed(&mut fresh, "(arb:semantic-search \"sort list\")");
    println!(
        "first arb:semantic-search after the import (builds the graph): {:.2} s",
        first.as_secs_f64()
    );
    let v = run(&mut fresh, "(arb:current-version)");
    assert_eq!(v, run(&mut e, "(arb:current-version)"));
}

fn main() {
    for n in common::sizes(&[100_000u64, 1_000_000]) {
        bench(n);
    }
}
