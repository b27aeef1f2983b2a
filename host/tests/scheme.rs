//! The Scheme programs of `tests/scheme` through the real `arbores` binary,
//! in the sandbox (`wasm::KIND/NAME`) and on the native engine
//! (`native::KIND/NAME`): `arbores run FILE`, a fresh store for each
//! program, the knowledge programs with `--tier system` and the clock
//! their expectations were written with. The harness (one test per
//! program, unified diffs, `ARBORES_BLESS=1`) is `tests/suite`; the core
//! runs the same files in `core/tests/scheme.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;

use arbores_scheme_suite::{Kind, Program, KNOWLEDGE_CLOCK, NO_ERROR};

/// Removes a store file, its SQLite companions and a converted directory
/// store, so that every program starts from an empty knowledge base.
fn remove_store(store: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal", ".dir-store"] {
        let p = PathBuf::from(format!("{}{suffix}", store.display()));
        let _ = std::fs::remove_file(&p);
        let _ = std::fs::remove_dir_all(&p);
    }
}

fn run(engine: &'static str, program: &Program) -> Result<String, String> {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let store =
        tmp.join("scheme-stores")
            .join(format!("{engine}-{}-{}", program.kind.dir(), program.name));
    remove_store(&store);
    let path = program.path.to_string_lossy().into_owned();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbores"));
    // The compiled guest is cached where the CLI tests cache it.
    cmd.env("ARBORES_CACHE_DIR", tmp.join("arbores-test-cache"))
        .env_remove("ARBORES_CLOCK")
        .args(["--engine", engine, "--store"])
        .arg(&store);
    if program.kind == Kind::Knowledge {
        cmd.args(["--tier", "system"])
            .env("ARBORES_CLOCK", KNOWLEDGE_CLOCK.1);
    }
    let out = cmd
        .args(["run", &path])
        .output()
        .map_err(|e| format!("starting arbores: {e}"))?;
    remove_store(&store);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Errors name the file; the expectations do not.
    let stderr = String::from_utf8_lossy(&out.stderr).replace(&format!("{path}:"), "");
    if stderr.contains("built without the wasm guest") {
        return Err(format!("this arbores has no wasm guest embedded: {stderr}"));
    }
    Ok(match program.kind {
        Kind::Fail if stderr.is_empty() => NO_ERROR.to_string(),
        Kind::Fail => stderr,
        Kind::Pass | Kind::Knowledge => format!("{stdout}{stderr}"),
    })
}

fn main() {
    type Runner = fn(&Program) -> Result<String, String>;
    let wasm: Runner = |p| run("wasm", p);
    let native: Runner = |p| run("native", p);
    arbores_scheme_suite::main(vec![("wasm", wasm), ("native", native)])
}
