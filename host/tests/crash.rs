//! The store's crash and damage promises (`crash/harness.rs`) at small
//! sizes, on both engines through the real `arbores` binary: writers
//! killed with SIGKILL at random moments lose no commit they reported and
//! leave a store that opens and passes `fsck`; a flipped byte or a cut in
//! the store file gives the right answer or an error naming the file,
//! never a wrong answer, and changes nothing. `bench/crash` runs hundreds
//! of trials and prints the figures.

#[path = "crash/harness.rs"]
mod harness;

use std::path::PathBuf;
use std::time::Duration;

use harness::{Damage, Harness, Random, Writer};

fn harness(name: &str) -> Harness {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let mut h = Harness::new(
        PathBuf::from(env!("CARGO_BIN_EXE_arbores")),
        target.join(format!("crash-{name}")),
        target.join("arbores-test-cache"),
    );
    h.creates = 60;
    h.transaction_nodes = 2_000;
    h
}

fn killed_writers(engine: &str) {
    const TRIALS: usize = 3;
    let h = harness(&format!("kill-{engine}"));
    let mut random = Random::with_seed(0x5eed_0000 + engine.len() as u64);
    let mut failed = Vec::new();
    for writer in Writer::ALL {
        let whole = h.calibrate(engine, writer).unwrap();
        for trial in 0..TRIALS {
            let at = Duration::from_micros(random.u64(..=whole.as_micros() as u64));
            let seen = h.kill_trial(engine, writer, trial, at);
            for f in &seen.failures {
                failed.push(format!(
                    "{} trial {trial}, killed at {at:?}: {f}",
                    writer.name()
                ));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

fn damaged_files(engine: &str) {
    const TRIALS: usize = 6;
    let h = harness(&format!("damage-{engine}"));
    let base = h.damage_base(engine, 40).unwrap();
    let mut random = Random::with_seed(0xda3a_9e00 + engine.len() as u64);
    let mut failed = Vec::new();
    for damage in Damage::ALL {
        for trial in 0..TRIALS {
            let seen = h.damage_trial(engine, &base, damage, trial, &mut random);
            for f in &seen.failures {
                failed.push(format!("{} trial {trial}: {f}", damage.name()));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn killed_writers_native() {
    killed_writers("native");
}

#[test]
fn killed_writers_wasm() {
    killed_writers("wasm");
}

#[test]
fn damaged_files_native() {
    damaged_files("native");
}

#[test]
fn damaged_files_wasm() {
    damaged_files("wasm");
}
