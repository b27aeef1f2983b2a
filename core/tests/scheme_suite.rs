//! The data-driven Scheme suite, run on the native engine.
//!
//! `tests/scheme/pass/NAME.scm` must print exactly `NAME.out`;
//! `tests/scheme/knowledge/NAME.scm` too, run in the system tier with an
//! empty knowledge base;
//! `tests/scheme/fail/NAME.scm` must end with the error in `NAME.err`
//! (`error: LINE:COL: MESSAGE` and its backtrace lines, as `arbores run`
//! prints them). The same files run through the wasm guest in the host's tests.

use std::fs;
use std::path::{Path, PathBuf};

use arbores_core::{Engine, Evaluation, Tier};

fn suite_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/scheme")
        .join(kind)
}

fn programs(kind: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(suite_dir(kind))
        .expect("suite directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "scm"))
        .collect();
    v.sort();
    v
}

fn error_text(r: &Evaluation) -> String {
    let Some(e) = &r.error else {
        return String::new();
    };
    let mut s = match e.position {
        Some(p) => format!("error: {}:{}: {}\n", p.line, p.column, e.message),
        None => format!("error: {}\n", e.message),
    };
    for b in &e.backtrace {
        s.push_str(&format!("  at {b}\n"));
    }
    s
}

fn diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let mut out = String::new();
    for i in 0..e.len().max(a.len()) {
        match (e.get(i), a.get(i)) {
            (Some(x), Some(y)) if x == y => {}
            (x, y) => out.push_str(&format!(
                "  line {}:\n    expected: {}\n    actual:   {}\n",
                i + 1,
                x.unwrap_or(&"<none>"),
                y.unwrap_or(&"<none>")
            )),
        }
    }
    out
}

fn run(
    kind: &str,
    expected_ext: &str,
    actual_of: fn(&Evaluation) -> String,
    setup: fn(&mut Engine),
) -> (usize, Vec<String>) {
    let mut passed = 0;
    let mut failures = Vec::new();
    for p in programs(kind) {
        let src = fs::read_to_string(&p).expect("program");
        let expected = fs::read_to_string(p.with_extension(expected_ext))
            .unwrap_or_else(|_| panic!("{} has no .{expected_ext} file", p.display()));
        let mut engine = Engine::new();
        setup(&mut engine);
        let r = engine.eval(&src);
        let actual = actual_of(&r);
        if actual == expected {
            passed += 1;
        } else {
            failures.push(format!("{}:\n{}", p.display(), diff(&expected, &actual)));
        }
    }
    (passed, failures)
}

#[test]
fn scheme_programs() {
    let (p1, mut f1) = run(
        "pass",
        "out",
        |r| format!("{}{}", r.output, error_text(r)),
        |_| {},
    );
    let (p2, f2) = run(
        "fail",
        "err",
        |r| {
            if r.error.is_none() {
                "no error\n".into()
            } else {
                error_text(r)
            }
        },
        |_| {},
    );
    f1.extend(f2);
    // The knowledge programs run as the operator's own (system tier), each
    // in a fresh engine with an empty knowledge base.
    let (p3, f3) = run(
        "knowledge",
        "out",
        |r| format!("{}{}", r.output, error_text(r)),
        |e| {
            e.set_tier(Tier::System);
            e.set_clock(1_753_785_000.0); // 2025-07-29T10:30:00Z
        },
    );
    let p2 = p2 + p3;
    f1.extend(f3);
    println!(
        "scheme suite (native): {} passed, {} failed",
        p1 + p2,
        f1.len()
    );
    assert!(f1.is_empty(), "failing programs:\n{}", f1.join("\n"));
}
