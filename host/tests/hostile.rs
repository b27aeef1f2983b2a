//! The hostile-program suite (`tests/hostile/`, described in
//! `hostile/runner.rs`) on both engines through the real `arbores` binary:
//! every program must end within its limits with the error it names, the
//! process within `--memory` plus the stated overhead, the session alive
//! and the store intact.
//!
//! Programs listed in `tests/hostile/NOT-YET-HELD` are skipped, and the
//! test says which. `HOSTILE_ONLY=NAME` runs only the programs whose name
//! contains NAME.
//! `bench/hostile` prints the same runs as a table of figures.

#[path = "hostile/runner.rs"]
mod runner;

use std::path::PathBuf;
use std::sync::Mutex;

/// The programs measure time and memory: one at a time, whatever the test
/// harness runs in parallel.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn suite(engine: &str) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let only = std::env::var("HOSTILE_ONLY").ok();
    let programs = runner::load_suite(only.as_deref()).expect("reading tests/hostile");
    assert!(!programs.is_empty(), "no hostile program to run");
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("hostile-{engine}"));
    let mut runner = runner::Runner::new(PathBuf::from(env!("CARGO_BIN_EXE_arbores")), work);
    let not_yet = runner::not_yet_held().expect("reading tests/hostile/NOT-YET-HELD");
    let mut failed = Vec::new();
    let mut skipped = Vec::new();
    for program in &programs {
        if not_yet.contains(&(program.name.clone(), engine.to_string())) {
            skipped.push(program.name.as_str());
            continue;
        }
        let run = runner.run(program, engine);
        println!("{}", runner::figure_row(&run));
        if !run.failures.is_empty() {
            failed.push(runner::describe(&run));
        }
    }
    println!(
        "hostile suite ({engine}): {} passed, {} failed, {} skipped (not yet held: {})",
        programs.len() - failed.len() - skipped.len(),
        failed.len(),
        skipped.len(),
        skipped.join(", ")
    );
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[test]
fn hostile_programs_wasm() {
    suite("wasm");
}

#[test]
fn hostile_programs_native() {
    suite("native");
}
