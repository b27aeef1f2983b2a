//! Every fuzz target on a fixed set of pseudo-random inputs (the same on
//! every run) and on every saved regression input: a short fuzzing run in
//! the test suite. Long runs: scripts/fuzz.

use std::path::PathBuf;

use arbores_fuzz::targets;
use fastrand::Rng;

/// Up to `max - 1` seeded bytes: the same on every run, so a failure names an
/// input that reproduces.
fn bytes(rng: &mut Rng, max: usize) -> Vec<u8> {
    let len = rng.usize(..max);
    (0..len).map(|_| rng.u8(..)).collect()
}

fn regressions(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("regressions")
        .join(target);
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .map(|p| {
                    let bytes = std::fs::read(&p).unwrap();
                    (p, bytes)
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn smoke(target: &str, run: fn(&[u8]), inputs: usize, max_len: usize, seed: u64) {
    for (path, bytes) in regressions(target) {
        eprintln!("{target}: regression {}", path.display());
        run(&bytes);
    }
    let mut rng = Rng::with_seed(seed);
    for i in 0..inputs {
        let bytes = bytes(&mut rng, max_len);
        let shown = bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
        // Printed only when the target panics (the harness shows stderr then).
        let result = std::panic::catch_unwind(|| run(&bytes));
        if let Err(panic) = result {
            eprintln!("{target}: generated input {i} (hex {shown}) failed");
            std::panic::resume_unwind(panic);
        }
    }
}

#[test]
fn reader() {
    smoke("reader", targets::reader, 300, 300, 0x5eed_0001);
}

#[test]
fn eval() {
    smoke("eval", targets::eval, 300, 600, 0x5eed_0002);
}

#[test]
fn store() {
    smoke("store", targets::store, 150, 64, 0x5eed_0003);
}

#[test]
fn arb() {
    smoke("arb", targets::arb, 100, 200, 0x5eed_0004);
}

#[test]
fn bundle() {
    smoke("bundle", targets::bundle, 100, 64, 0x5eed_0005);
}

#[test]
fn suspension() {
    smoke("suspension", targets::suspension, 150, 64, 0x5eed_0006);
}

#[test]
fn session() {
    smoke("session", targets::session, 150, 64, 0x5eed_0007);
}

#[test]
fn an_undamaged_store_imports() {
    // Else the store target would fuzz nothing but the error paths.
    assert!(targets::store_undamaged_imports());
}

#[test]
fn generated_programs_are_scheme() {
    let mut rng = Rng::with_seed(7);
    let mut read_ok = 0;
    for _ in 0..200 {
        let program = arbores_fuzz::gen::program(&bytes(&mut rng, 400));
        let mut e = targets::engine(arbores_core::Tier::ReadOnly);
        let r = targets::eval_checked(&mut e, &program);
        if r.error
            .as_ref()
            .is_none_or(|e| e.kind != arbores_core::ErrorKind::Syntax)
        {
            read_ok += 1;
        }
    }
    // Most generated programs compile: the grammar reaches the evaluator.
    assert!(
        read_ok >= 120,
        "only {read_ok} of 200 generated programs compiled"
    );
}
