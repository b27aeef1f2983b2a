//! Retrieval quality of `arb:semantic-search` on the labelled dev set in
//! `tests/retrieval/`: recall@1, recall@5 and MRR@10 per kind of query and
//! per language, for the dev and the held-out test split.
//!
//! cargo run --release -p arbores-core --example retrieval -- [OPTIONS]
//!
//! Options: `--verbose` (every query's ranks), `--embedder hashing` (the
//! model-free hashing embedder instead of the built-in table), `--table
//! FILE` (another static table), `--weight W` and `--floor F` (the fusion's
//! vector weight and cosine floor, for tuning), `--vectors FILE` (vectors
//! of a real model computed beforehand for every text of the set, by
//! `scripts/embedder/e5_dev_vectors.py`: measures what that model gives
//! through the same search path).
//!
//! The scoring itself is Scheme (`tests/retrieval/evaluate.scm`), run through
//! the engine as a user would: nodes made by `arb:create`, found by
//! `arb:semantic-search`. The host's own program runs the same file with
//! the host's embedders.

use std::path::PathBuf;
use std::process::ExitCode;

use std::collections::HashMap;

use arbores_core::repo::index::{Embedder, HashingEmbedder, SemanticConfig, StaticEmbedder};
use arbores_core::{Engine, Tier};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "--verbose");
    let option = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/retrieval");
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name))
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.join(name).display()))
    };
    let mut engine = Engine::new();
    engine.set_tier(Tier::System);
    if let Some(path) = option("--table") {
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
        let table = StaticEmbedder::from_bytes(bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
        engine.set_embedder(Box::new(table), SemanticConfig::default());
    }
    if let Some(path) = option("--vectors") {
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
        engine.set_embedder(
            Box::new(Precomputed::parse(&text)),
            SemanticConfig::default(),
        );
    }
    if option("--embedder").as_deref() == Some("hashing") {
        engine.set_embedder(
            Box::new(HashingEmbedder::default()),
            SemanticConfig::default(),
        );
    }
    let fusion = &mut engine.knowledge().indexes.fusion;
    if let Some(w) = option("--weight") {
        fusion.vector_weight = w.parse().expect("--weight takes a number");
    }
    if let Some(f) = option("--floor") {
        fusion.vector_floor = f.parse().expect("--floor takes a number");
    }
    if let Some(f) = option("--gloss") {
        fusion.gloss_weight = f.parse().expect("--gloss takes a number");
    }
    if let Some(f) = option("--translation") {
        fusion.translation_weight = f.parse().expect("--translation takes a number");
    }
    if let Some(f) = option("--reverse") {
        fusion.reverse_weight = f.parse().expect("--reverse takes a number");
    }
    if let Some(f) = option("--rendition") {
        fusion.rendition_weight = f.parse().expect("--rendition takes a number");
    }
    if let Some(f) = option("--rendition-glosses") {
        fusion.rendition_glosses = f.parse().expect("--rendition-glosses takes a number");
    }
    if let Some(f) = option("--coverage") {
        fusion.coverage = f.parse().expect("--coverage takes a number");
    }
    if let Some(f) = option("--implied-weight") {
        fusion.implied_weight = f.parse().expect("--implied-weight takes a number");
    }
    if let Some(f) = option("--senses") {
        fusion.sense_weight = f.parse().expect("--senses takes a number");
    }
    if let Some(f) = option("--implied") {
        let weights = arbores_core::repo::index::FieldWeights {
            implied: f.parse().expect("--implied takes a number"),
            ..Default::default()
        };
        // Built again from every node at the first search, with these
        // weights (`clear` keeps them).
        let indexes = &mut engine.knowledge().indexes;
        indexes.lexical = arbores_core::repo::index::LexicalIndex::new(weights);
        indexes.lexical_built = false;
    }
    if args.iter().any(|a| a == "--no-lexicon") {
        engine.knowledge().indexes.lexicon = None;
    }
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
    if let Some(text) = option("--explain") {
        use arbores_core::repo::index::hybrid::Words;
        use arbores_core::repo::index::SemanticQuery;
        let k = engine.knowledge();
        let ix = &k.indexes;
        let words = Words::new(ix.lexicon.as_deref(), &ix.semantic, &ix.fusion, &text);
        let lq = ix.lexical.query(&text, &words).unwrap();
        println!("{lq:?}");
        let qv = arbores_core::repo::index::hybrid::query_vector(ix.scoring(), &text).unwrap();
        let hits = ix
            .search(
                &text,
                &SemanticQuery {
                    top_k: 15,
                    threshold: 0.0,
                    kind: None,
                },
            )
            .unwrap();
        for h in hits {
            let lex = ix.lexical.score(&lq, h.id).unwrap();
            let cos = qv
                .as_ref()
                .map_or(0.0, |v| ix.semantic.score_of(h.id, v).unwrap());
            let d = k
                .get(h.id)
                .ok()
                .flatten()
                .and_then(|n| n.description.clone())
                .unwrap_or_default();
            println!("{:.3} lex {:.3} cos {:.3}  {}", h.score, lex, cos, d);
        }
    }
    ExitCode::SUCCESS
}

/// Vectors computed beforehand, looked up by text (a text not in the file
/// gets the zero vector: it matches nothing by meaning).
struct Precomputed {
    dim: usize,
    vectors: HashMap<String, Vec<f32>>,
}

impl Precomputed {
    fn parse(file: &str) -> Precomputed {
        let mut vectors = HashMap::new();
        for line in file.lines() {
            let (text, v) = line.split_once('\t').expect("TEXT<TAB>VECTOR lines");
            let v: Vec<f32> = v.split(' ').map(|x| x.parse().expect("a number")).collect();
            vectors.entry(text.to_string()).or_insert(v);
        }
        let dim = vectors.values().next().map_or(1, Vec::len);
        Precomputed { dim, vectors }
    }
}

impl Embedder for Precomputed {
    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, text: &str) -> Vec<f32> {
        self.vectors
            .get(text)
            .cloned()
            .unwrap_or_else(|| vec![0.0; self.dim])
    }
}
