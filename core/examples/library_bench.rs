//! What the bundled libraries cost: the engine's start (which loads none
//! of them) and, in a fresh engine, the first `(import LIB)` of each (read,
//! compile and run its source), then work done with them. Medians of
//! several runs, in milliseconds.
//!
//! `cargo run --release -p arbores-core --example library_bench [RUNS]`
use std::time::Instant;

use arbores_core::Engine;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Milliseconds `src` takes in a fresh engine (the engine's start not
/// counted), checked to end without error.
fn time_eval(src: &str) -> f64 {
    let mut e = Engine::new();
    let t = Instant::now();
    let r = e.eval(src);
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    if let Some(err) = r.error {
        panic!("{src}: {}", err.message);
    }
    ms
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(15);
    let start = median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                let e = Engine::new();
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                drop(e);
                ms
            })
            .collect(),
    );
    println!("engine start: {start:.2} ms");
    // The standard char-sets are computed once per process, by the first
    // import of (scheme charset): timed alone, before the medians.
    let first = time_eval("(import (scheme charset))");
    println!("first import (scheme charset) in the process: {first:.2} ms");
    let cases: &[(&str, &str)] = &[
        ("import (scheme base)", "(import (scheme base))"),
        ("import (srfi 1)", "(import (srfi 1))"),
        ("import (scheme charset)", "(import (scheme charset))"),
        ("import (srfi 13)", "(import (srfi 13))"),
        ("import (scheme generator)", "(import (scheme generator))"),
        ("import (scheme lseq)", "(import (scheme lseq))"),
    ];
    for (what, src) in cases {
        let ms = median((0..runs).map(|_| time_eval(src)).collect());
        println!("{what}: {ms:.2} ms");
    }
}
