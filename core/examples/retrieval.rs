//! Retrieval quality of `arb:semantic-search` on the labelled dev set in
//! `tests/retrieval/`: recall@1, recall@5 and MRR@10 per kind of query and
//! per language, for the dev and the held-out test split.
//!
//! cargo run --release -p arbores-core --example retrieval [-- --verbose]
//!
//! The scoring itself is Scheme (`tests/retrieval/evaluate.scm`), run through
//! the engine as a user would: nodes made by `arb:create`, found by
//! `arb:semantic-search`. The host's own program runs the same file with
//! the host's embedders.

use std::path::PathBuf;
use std::process::ExitCode;

use arbores_core::{Engine, Tier};

fn main() -> ExitCode {
    let verbose = std::env::args().any(|a| a == "--verbose");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/retrieval");
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name))
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.join(name).display()))
    };
    let mut engine = Engine::new();
    engine.set_tier(Tier::System);
    let program = format!(
        "(define (%verbose?) {})\n(define %nodes '(\n{}\n))\n(define %queries '(\n{}\n))\n{}",
        if verbose { "#t" } else { "#f" },
        read("nodes.scm"),
        read("queries.scm"),
        read("evaluate.scm"),
    );
    let started = std::time::Instant::now();
    let result = engine.eval(&program);
    print!("{}", result.output);
    if let Some(e) = result.error {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    eprintln!("({:.1} s)", started.elapsed().as_secs_f64());
    ExitCode::SUCCESS
}
