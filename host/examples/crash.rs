//! Figures of the store's crash and damage trials (`tests/crash/harness.rs`):
//! writers killed with SIGKILL at random moments (a REPL, `arbores run`, a
//! large `arb:transaction`) on each engine, and store files with a flipped
//! byte or cut short. Prints one row per kind of trial and every broken
//! promise; exits 1 if any was broken.
//!
//! cargo run --release -p arbores-host --example crash -- [--bin PATH]
//!     [--engine E] [--trials N] [--damage-trials N] [--writer repl|run|transaction] [--creates N]
//!     [--transaction-nodes N] [--seed N] [--cache DIR]
//!
//! `--cache` reuses a directory of compiled guests (the tests' is
//! `target/tmp/arbores-test-cache`); by default the guest is compiled
//! once into a fresh one.

#[path = "../tests/crash/harness.rs"]
mod harness;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use harness::{Damage, Harness, Random, Writer};

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut bin = root.join("target/release/arbores");
    let mut engines = vec!["wasm".to_string(), "native".to_string()];
    let mut trials = 100usize;
    let mut damage_trials = 100usize;
    let mut creates = 400usize;
    let mut transaction_nodes = 20_000usize;
    let mut seed = 0x00c0_ffeeu64;
    let mut cache = None;
    let mut writers: Vec<Writer> = Writer::ALL.to_vec();
    let mut args = std::env::args().skip(1);
    let number = |v: Option<String>, what: &str| -> u64 {
        v.and_then(|v| v.parse().ok()).unwrap_or_else(|| {
            eprintln!("{what} needs a number");
            std::process::exit(2)
        })
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bin" => bin = args.next().expect("--bin PATH").into(),
            "--engine" => engines = vec![args.next().expect("--engine wasm|native")],
            "--trials" => trials = number(args.next(), "--trials") as usize,
            "--damage-trials" => damage_trials = number(args.next(), "--damage-trials") as usize,
            "--creates" => creates = number(args.next(), "--creates") as usize,
            "--transaction-nodes" => {
                transaction_nodes = number(args.next(), "--transaction-nodes") as usize
            }
            "--seed" => seed = number(args.next(), "--seed"),
            "--writer" => {
                let name = args.next().unwrap_or_default();
                writers = Writer::ALL
                    .into_iter()
                    .filter(|w| w.name() == name)
                    .collect();
                if writers.is_empty() {
                    eprintln!("--writer repl|run|transaction");
                    std::process::exit(2);
                }
            }
            "--cache" => cache = Some(PathBuf::from(args.next().expect("--cache DIR"))),
            _ => {
                eprintln!(
                    "usage: crash [--bin PATH] [--engine wasm|native] [--trials N] \
                     [--damage-trials N] [--writer repl|run|transaction] [--creates N] [--transaction-nodes N] [--seed N] \
                     [--cache DIR]"
                );
                std::process::exit(2);
            }
        }
    }
    let work = std::env::temp_dir().join(format!("arbores-crash-{}", std::process::id()));
    let cache = cache.unwrap_or_else(|| work.join("cache"));
    let mut h = Harness::new(bin.clone(), work.join("trials"), cache);
    h.creates = creates;
    h.transaction_nodes = transaction_nodes;
    let mut random = Random::with_seed(seed);
    println!("binary: {}; seed {seed}", bin.display());
    println!(
        "writers: {creates} single creates; a transaction of {transaction_nodes} nodes, then \
         {creates} creates\n"
    );
    println!("| engine | writer | unkilled run | trials | reported commits | lost | transaction stored / absent | fsck failed | broken promises | time |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut broken = Vec::new();
    for engine in &engines {
        for &writer in &writers {
            let whole = match h.calibrate(engine, writer) {
                Ok(d) => d,
                Err(e) => {
                    println!("| {engine} | {} | failed: {e} |", writer.name());
                    broken.push(e);
                    continue;
                }
            };
            let start = Instant::now();
            let (mut reported, mut lost, mut stored, mut absent, mut fsck, mut failures) =
                (0, 0, 0, 0, 0, 0);
            for trial in 0..trials {
                let at = Duration::from_micros(random.u64(..=whole.as_micros() as u64));
                let seen = h.kill_trial(engine, writer, trial, at);
                reported += seen.reported;
                lost += seen
                    .failures
                    .iter()
                    .filter(|f| f.contains("missing"))
                    .count();
                fsck += seen
                    .failures
                    .iter()
                    .filter(|f| f.starts_with("fsck"))
                    .count();
                if seen.transaction_stored {
                    stored += 1;
                } else {
                    absent += 1;
                }
                failures += usize::from(!seen.failures.is_empty());
                for f in seen.failures {
                    broken.push(format!(
                        "{engine} {} trial {trial}, killed at {at:?}: {f}",
                        writer.name()
                    ));
                }
            }
            let tx = if writer == Writer::Transaction {
                format!("{stored} / {absent}")
            } else {
                "-".to_string()
            };
            println!(
                "| {engine} | {} | {:.2} s | {trials} | {reported} | {lost} | {tx} | {fsck} | {failures} | {:.0} s |",
                writer.name(),
                whole.as_secs_f64(),
                start.elapsed().as_secs_f64()
            );
        }
    }
    println!("\n| engine | damage | trials | right answer | store error naming the file | fsck found it | broken promises |");
    println!("|---|---|---|---|---|---|---|");
    for engine in &engines {
        let base = match h.damage_base(engine, 200) {
            Ok(b) => b,
            Err(e) => {
                println!("| {engine} | failed: {e} |");
                broken.push(e);
                continue;
            }
        };
        for damage in Damage::ALL {
            let (mut right, mut refused, mut found, mut failures) = (0, 0, 0, 0);
            for trial in 0..damage_trials {
                let seen = h.damage_trial(engine, &base, damage, trial, &mut random);
                if seen.failures.is_empty() {
                    if seen.unaffected {
                        right += 1;
                    } else {
                        refused += 1;
                    }
                }
                found += usize::from(seen.fsck_found);
                failures += usize::from(!seen.failures.is_empty());
                for f in seen.failures {
                    broken.push(format!("{engine} {} trial {trial}: {f}", damage.name()));
                }
            }
            println!(
                "| {engine} | {} | {damage_trials} | {right} | {refused} | {found} | {failures} |",
                damage.name()
            );
        }
    }
    if !broken.is_empty() {
        println!("\nbroken promises:");
        for b in &broken {
            println!("- {b}");
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    std::process::exit(i32::from(!broken.is_empty()));
}
