//! What a suspended evaluation costs: the size of its dump, and the time to
//! start an evaluation that suspends, to dump it, to load the dump into
//! another engine and to resume it there; with the time to make a new
//! engine for scale.
//!
//!     cargo run --release -p arbores-core --example suspend_bench [ROUNDS]
//!
//! Each figure is the median of ROUNDS (default 200) runs, with the fastest
//! and slowest beside it, for a small program (a helper procedure and one
//! tool call) and one with more session state (twenty definitions, a
//! record, a string of 10,000 characters, three `par` branches waiting):
//! `suspend/small.scm` and `suspend/larger.scm`. The same beside the
//! wasmtime guest: `host/examples/suspend_wasm_bench.rs` (and `bench/suspend`
//! for the browser's engine and a peer).

use std::time::{Duration, Instant};

use arbores_core::Engine;

#[path = "suspend/native.rs"]
mod suspend;

use suspend::{spread, us, Figures, Native, PROGRAMS, STEPS};

fn show(what: &str, (median, min, max): (Duration, Duration, Duration)) {
    println!(
        "  {what:<28} median {:>8.1} µs   min {:>8.1}   max {:>8.1}",
        us(median),
        us(min),
        us(max)
    );
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200)
        .max(1);
    let mut new_engine = Vec::new();
    for _ in 0..rounds.min(50) {
        let t = Instant::now();
        let e = Engine::new();
        new_engine.push(t.elapsed());
        drop(e);
    }
    println!("rounds: {rounds}");
    show("new engine (for scale)", spread(new_engine));
    for (name, program) in PROGRAMS {
        let mut native = Native::new();
        let mut f = Figures::default();
        for _ in 0..rounds {
            f.push(native.round(program));
        }
        println!("{name}: dump {} bytes", f.bytes);
        for (step, s) in STEPS.iter().zip(f.summary()) {
            show(step, s);
        }
    }
}
