//! The harness of the Scheme programs in `tests/scheme`, one for every way
//! they run: natively in the core (`core/tests/scheme.rs`), and through the
//! `arbores` binary in the sandbox and on the native engine
//! (`host/tests/scheme.rs`).
//!
//! Every program is its own test, named `ENGINE::KIND/NAME` (run one with
//! `cargo test --release -p arbores-core --test scheme -- pass/tail-calls`);
//! a mismatch shows a unified diff of the expectation and the actual text;
//! `ARBORES_BLESS=1` writes the actual text into the expectation instead
//! of failing (review the change with `git diff`).
//!
//! The harness knows nothing of the engine: a runner turns a [`Program`]
//! into the text its expectation holds (errors as the core's
//! `EvalError::report` writes them, which is what `arbores run` prints).

use std::fs;
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};

/// The three folders of `tests/scheme`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `pass/NAME.scm` prints exactly `NAME.out` (then the error, if one
    /// ends it).
    Pass,
    /// `fail/NAME.scm` ends with the error in `NAME.err`.
    Fail,
    /// `knowledge/NAME.scm` prints `NAME.out`, run in the system tier with
    /// an empty knowledge base and the clock at [`KNOWLEDGE_CLOCK`].
    Knowledge,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Pass, Kind::Fail, Kind::Knowledge];

    /// The folder under `tests/scheme`.
    pub fn dir(self) -> &'static str {
        match self {
            Kind::Pass => "pass",
            Kind::Fail => "fail",
            Kind::Knowledge => "knowledge",
        }
    }

    /// The extension of the expectation file.
    pub fn expectation(self) -> &'static str {
        match self {
            Kind::Fail => "err",
            Kind::Pass | Kind::Knowledge => "out",
        }
    }
}

/// The clock of the knowledge programs (their expectations show dates):
/// seconds since the Unix epoch, and as `ARBORES_CLOCK` takes it.
pub const KNOWLEDGE_CLOCK: (f64, &str) = (1_753_785_000.0, "2025-07-29T10:30:00Z");

/// What a `fail` program that ended without an error shows.
pub const NO_ERROR: &str = "no error\n";

/// One program of the suite.
#[derive(Clone, Debug)]
pub struct Program {
    pub kind: Kind,
    /// The file name without `.scm`.
    pub name: String,
    pub path: PathBuf,
}

impl Program {
    pub fn source(&self) -> Result<String, String> {
        fs::read_to_string(&self.path).map_err(|e| format!("{}: {e}", self.path.display()))
    }

    pub fn expectation_path(&self) -> PathBuf {
        self.path.with_extension(self.kind.expectation())
    }
}

/// `tests/scheme` of the repository.
pub fn root() -> PathBuf {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR"));
    suite.parent().unwrap_or(suite).join("scheme")
}

/// Every program of the suite, by kind then name.
pub fn programs() -> Vec<Program> {
    let mut all = Vec::new();
    for kind in Kind::ALL {
        let dir = root().join(kind.dir());
        let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let mut found: Vec<Program> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "scm"))
            .map(|path| Program {
                kind,
                name: path
                    .file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                path,
            })
            .collect();
        found.sort_by(|a, b| a.name.cmp(&b.name));
        all.extend(found);
    }
    all
}

/// Whether `ARBORES_BLESS` asks for expectations to be rewritten.
pub fn blessing() -> bool {
    std::env::var_os("ARBORES_BLESS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Compares `actual` with the program's expectation: `Ok` when they are
/// equal (or the expectation was rewritten because of `ARBORES_BLESS`),
/// else the unified diff.
pub fn check(program: &Program, actual: &str) -> Result<(), String> {
    let path = program.expectation_path();
    let expected = fs::read_to_string(&path).unwrap_or_default();
    if expected == actual {
        return Ok(());
    }
    if blessing() {
        return fs::write(&path, actual).map_err(|e| format!("{}: {e}", path.display()));
    }
    Err(format!(
        "{} does not match (ARBORES_BLESS=1 rewrites it):\n{}",
        path.display(),
        diff(&expected, actual)
    ))
}

/// A unified diff of two texts, by lines, with three lines of context.
pub fn diff(expected: &str, actual: &str) -> String {
    similar::TextDiff::from_lines(expected, actual)
        .unified_diff()
        .context_radius(3)
        .header("expected", "actual")
        .missing_newline_hint(true)
        .to_string()
}

/// Runs every program (those the command line selects) as its own test
/// named `ENGINE::KIND/NAME`, each engine in `engines` with its runner,
/// which gives the text to compare with the expectation; then exits.
pub fn main<F>(engines: Vec<(&'static str, F)>) -> !
where
    F: Fn(&Program) -> Result<String, String> + Clone + Send + Sync + 'static,
{
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for (engine, run) in engines {
        for program in programs() {
            let run = run.clone();
            let name = format!("{engine}::{}/{}", program.kind.dir(), program.name);
            trials.push(Trial::test(name, move || {
                let actual = run(&program).map_err(Failed::from)?;
                check(&program, &actual).map_err(Failed::from)
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_shows_an_inserted_line_once() {
        let d = diff("a\nb\nc\n", "a\nx\nb\nc\n");
        assert!(d.contains("+x\n"), "{d}");
        let changed = d.lines().filter(|l| l.starts_with(['+', '-']));
        assert_eq!(
            changed
                .filter(|l| !l.starts_with("+++") && !l.starts_with("---"))
                .count(),
            1,
            "{d}"
        );
    }

    #[test]
    fn every_program_has_its_expectation() {
        let all = programs();
        assert!(all.len() > 50, "{} programs", all.len());
        for p in &all {
            assert!(
                p.expectation_path().is_file(),
                "{} has no expectation",
                p.path.display()
            );
        }
    }
}
