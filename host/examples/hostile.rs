//! Figures of the hostile-program suite: for each program of
//! `tests/hostile/` and each engine, the time the limits took to stop it and
//! the peak resident memory of the whole `arbores` process, with the
//! promises it broke. Reports without failing, so it measures any build.
//!
//! cargo run --release -p arbores-host --example hostile -- [--bin PATH] [--only NAME] [--engine E]

#[path = "../tests/hostile/runner.rs"]
mod runner;

use std::path::PathBuf;

fn main() {
    let mut bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/arbores");
    let mut only = None;
    let mut engines: Vec<String> = runner::ENGINES.iter().map(|e| e.to_string()).collect();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bin" => bin = args.next().expect("--bin PATH").into(),
            "--only" => only = args.next(),
            "--engine" => engines = vec![args.next().expect("--engine wasm|native")],
            _ => {
                eprintln!("usage: hostile [--bin PATH] [--only NAME] [--engine wasm|native]");
                std::process::exit(2);
            }
        }
    }
    let programs = match runner::load_suite(only.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let work = std::env::temp_dir().join(format!("arbores-hostile-{}", std::process::id()));
    let mut runner = runner::Runner::new(bin.clone(), work.clone());
    println!("binary: {}", bin.display());
    println!(
        "bound: --memory plus {} MiB of overhead\n",
        runner::OVERHEAD >> 20
    );
    println!("| program | engine | time to stop | peak RSS | promises |");
    println!("|---|---|---|---|---|");
    let mut broken = 0;
    for program in &programs {
        for engine in &engines {
            let run = runner.run(program, engine);
            broken += usize::from(!run.failures.is_empty());
            println!("{}", runner::figure_row(&run));
        }
    }
    println!(
        "\n{} runs, {} kept every promise, {} broke one",
        programs.len() * engines.len(),
        programs.len() * engines.len() - broken,
        broken
    );
    let _ = std::fs::remove_dir_all(&work);
}
