//! Retrieval quality and cost of the native host's embedders on the
//! labelled set in `tests/retrieval/`: the same Scheme program as the
//! core's `retrieval` example (`tests/retrieval/evaluate.scm`: recall@1,
//! recall@5 and MRR@10 per kind and language, and `排序算法`'s sorting
//! nodes), run with `--embedder e5`'s model (src/e5.rs) and, side by side,
//! the built-in table; then what each costs: embedding a node's text (the
//! part of indexing that depends on the embedder) and answering a query
//! (`arb:semantic-search`'s top 10, query embedding included).
//!
//! cargo run --release -p arbores-host --example retrieval_e5 -- [--e5-model FILE]
//!     [--weight W] [--floor F] [--rendition R] [--verbose] [--only e5|builtin]
//!
//! The model is looked for at `--e5-model`, ARBORES_E5_MODEL, then
//! target/e5/e5-small-q4.bin (scripts/fetch-e5).

#[path = "../src/e5.rs"]
#[allow(dead_code)]
mod e5;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use arbores_core::repo::index::semantic::vector_text;
use arbores_core::repo::index::{Embedder, SemanticConfig, SemanticQuery};
use arbores_core::{Engine, Tier};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let option = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let model = option("--e5-model")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("ARBORES_E5_MODEL").map(PathBuf::from))
        .unwrap_or_else(|| root.join("target/e5/e5-small-q4.bin"));
    let dir = root.join("tests/retrieval");
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name))
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.join(name).display()))
    };
    let program = format!(
        "(define (%verbose?) {})\n(define %nodes '(\n{}\n))\n(define %queries '(\n{}\n))\n{}",
        if args.iter().any(|a| a == "--verbose") {
            "#t"
        } else {
            "#f"
        },
        read("nodes.scm"),
        read("queries.scm"),
        read("evaluate.scm"),
    );
    // The query texts: the first string of each entry of queries.scm.
    let queries: Vec<String> = read("queries.scm")
        .lines()
        .filter(|l| l.starts_with('('))
        .filter_map(|l| l.split('"').nth(1).map(str::to_string))
        .collect();
    let only = option("--only");
    let mut runs: Vec<(&str, Option<e5::E5>)> = Vec::new();
    if only.as_deref() != Some("builtin") {
        match e5::E5::load(&model) {
            Ok(m) => runs.push(("e5", Some(m))),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if only.as_deref() != Some("e5") {
        runs.push(("builtin", None));
    }
    for (name, model) in runs {
        let mut engine = Engine::new();
        engine.set_tier(Tier::System);
        if let Some(m) = &model {
            println!("## embedder e5 ({})\n", m.id());
            engine.set_embedder(Box::new(m.clone()), SemanticConfig::default());
        } else {
            println!("## embedder builtin\n");
        }
        let fusion = &mut engine.knowledge().indexes.fusion;
        if let Some(w) = option("--weight") {
            fusion.vector_weight = w.parse().expect("--weight takes a number");
        }
        if let Some(f) = option("--floor") {
            fusion.vector_floor = f.parse().expect("--floor takes a number");
        }
        if let Some(f) = option("--rendition") {
            fusion.rendition_weight = f.parse().expect("--rendition takes a number");
        }
        let started = Instant::now();
        let result = engine.eval(&program);
        print!("{}", result.output);
        if let Some(e) = result.error {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
        println!("(the program: {:.1} s)\n", started.elapsed().as_secs_f64());
        // Costs: each node's text embedded once as the index embeds it,
        // then each query searched (top 10) with the index in memory.
        let k = engine.knowledge();
        let texts: Vec<String> = (256..)
            .map_while(|id| k.get(id).ok().flatten().cloned())
            .filter_map(|n| vector_text(&n))
            .collect();
        let embedder: Box<dyn Embedder> = match &model {
            Some(m) => Box::new(m.clone()),
            None => arbores_core::repo::index::default_embedder(),
        };
        let t = Instant::now();
        for text in &texts {
            std::hint::black_box(embedder.embed(text));
        }
        let per_node = t.elapsed().as_secs_f64() / texts.len() as f64;
        let mut times = Vec::new();
        for q in &queries {
            let t = Instant::now();
            let hits = k.indexes.search(
                q,
                &SemanticQuery {
                    top_k: 10,
                    threshold: 0.0,
                    kind: None,
                },
            );
            times.push(t.elapsed().as_secs_f64());
            std::hint::black_box(hits.ok());
        }
        times.sort_by(f64::total_cmp);
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        println!(
            "cost ({name}): embedding a node's text {:.3} ms ({} nodes); a query (top 10 of {} nodes) mean {:.3} ms, median {:.3} ms, max {:.3} ms\n",
            per_node * 1e3,
            texts.len(),
            k.indexes.semantic.len(),
            mean * 1e3,
            times[times.len() / 2] * 1e3,
            times[times.len() - 1] * 1e3
        );
    }
    ExitCode::SUCCESS
}
