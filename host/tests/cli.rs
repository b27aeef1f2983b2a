//! Runs the real `arbores` binary, with the embedded wasm guest and with
//! `--engine native`, the way a user would.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_arbores");

/// A cache directory shared by the tests, so the guest is compiled once.
fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("arbores-test-cache")
}

fn command(engine: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("--engine").arg(engine).args(args);
    cmd.env("ARBORES_CACHE_DIR", cache_dir());
    cmd.env_remove("ARBORES_STORE");
    cmd
}

fn arbores(engine: &str, args: &[&str], stdin: Option<&str>) -> Output {
    if engine == "wasm" {
        require_guest();
    }
    run(command(engine, args), stdin)
}

fn run(mut cmd: Command, stdin: Option<&str>) -> Output {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("starting arbores");
    let mut pipe = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        pipe.write_all(text.as_bytes()).unwrap();
    }
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn describe(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        stdout(out),
        stderr(out)
    )
}

/// Fails loudly, rather than skipping, when this binary has no guest.
fn require_guest() {
    static CHECK: Once = Once::new();
    CHECK.call_once(|| {
        let out = run(command("wasm", &["eval", "1"]), None);
        if stderr(&out).contains("built without the wasm guest") {
            panic!(
                "this arbores has no wasm guest embedded: run scripts/build-guest, then \
                 cargo build --release -p arbores-host, and run the tests again"
            );
        }
    });
}

/// Defines `wasm` and `native` tests for a function taking the engine name.
macro_rules! both_engines {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn wasm() {
                super::$name("wasm")
            }
            #[test]
            fn native() {
                super::$name("native")
            }
        }
    )*};
}

both_engines!(
    prints_the_value,
    prints_output_then_value,
    options_after_the_subcommand,
    run_reports_error_position,
    run_prints_program_output,
    eval_reads_stdin,
    run_reads_stdin,
    step_limit,
    memory_limit,
    timeout,
    repl_reads_stdin,
    repl_survives_step_limit,
    repl_survives_memory_limit,
    repl_survives_timeout,
    repl_shows_errors_and_goes_on,
);

fn prints_the_value(engine: &str) {
    let out = arbores(engine, &["eval", "(+ 1 2)"], None);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(stdout(&out), "3\n", "{}", describe(&out));
}

fn prints_output_then_value(engine: &str) {
    let out = arbores(
        engine,
        &["eval", "(display \"hello\") (newline) (display 7) 42"],
        None,
    );
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(stdout(&out), "hello\n7\n42\n", "{}", describe(&out));
}

fn options_after_the_subcommand(engine: &str) {
    if engine == "wasm" {
        require_guest();
    }
    let mut cmd = Command::new(BIN);
    cmd.args([
        "eval",
        "(* 6 7)",
        "--fuel",
        "100000",
        "--engine",
        engine,
        "--memory",
        "64M",
        "--timeout",
        "5",
    ]);
    cmd.env("ARBORES_CACHE_DIR", cache_dir());
    let out = run(cmd, None);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(stdout(&out), "42\n");
}

fn program_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("programs");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn run_reports_error_position(engine: &str) {
    let file = program_file(
        &format!("error-{engine}.scm"),
        "(display \"before\")\n(newline)\n(define (f x)\n  (car x))\n(f 5)\n(display \"after\")\n",
    );
    let path = file.to_str().unwrap();
    let out = arbores(engine, &["run", path], None);
    assert!(!out.status.success(), "{}", describe(&out));
    assert_eq!(
        stdout(&out),
        "before\n",
        "output before the error is kept\n{}",
        describe(&out)
    );
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!("error: {path}:4:3: ")),
        "{}",
        describe(&out)
    );
    assert!(err.contains("car"), "{}", describe(&out));
    assert!(
        err.lines().any(|l| l.starts_with("  at f")),
        "backtrace names f\n{}",
        describe(&out)
    );
}

fn run_prints_program_output(engine: &str) {
    let file = program_file(
        &format!("ok-{engine}.scm"),
        "(define (fact n) (if (= n 0) 1 (* n (fact (- n 1)))))\n(display (fact 20))\n(newline)\n(fact 5)\n",
    );
    let out = arbores(engine, &["run", file.to_str().unwrap()], None);
    assert!(out.status.success(), "{}", describe(&out));
    // A program's last value is not printed; only what it writes.
    assert_eq!(stdout(&out), "2432902008176640000\n", "{}", describe(&out));
}

fn eval_reads_stdin(engine: &str) {
    let out = arbores(engine, &["eval", "-"], Some("(define x 40)\n(+ x 2)\n"));
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(stdout(&out), "42\n");
}

fn run_reads_stdin(engine: &str) {
    let out = arbores(
        engine,
        &["run", "-"],
        Some("(display \"from stdin\")\n(car '())\n"),
    );
    assert!(!out.status.success(), "{}", describe(&out));
    assert_eq!(stdout(&out), "from stdin");
    assert!(
        stderr(&out).starts_with("error: <stdin>:2:1: "),
        "{}",
        describe(&out)
    );
}

const SPIN: &str = "(let loop () (loop))";
const GROW: &str = "(let loop ((l '())) (loop (cons 1 l)))";

fn step_limit(engine: &str) {
    let out = arbores(engine, &["--fuel", "100000", "eval", SPIN], None);
    assert!(!out.status.success(), "{}", describe(&out));
    assert!(stderr(&out).contains("step limit"), "{}", describe(&out));
    assert!(stderr(&out).contains("--fuel"), "{}", describe(&out));
}

fn memory_limit(engine: &str) {
    let out = arbores(engine, &["--memory", "64M", "eval", GROW], None);
    assert!(!out.status.success(), "{}", describe(&out));
    assert!(stderr(&out).contains("memory limit"), "{}", describe(&out));
    assert!(stderr(&out).contains("--memory"), "{}", describe(&out));
}

fn timeout(engine: &str) {
    let start = Instant::now();
    let out = arbores(
        engine,
        &["--fuel", "1000000000000", "--timeout", "1", "eval", SPIN],
        None,
    );
    let took = start.elapsed();
    assert!(!out.status.success(), "{}", describe(&out));
    assert!(
        stderr(&out).contains("timed out after 1s"),
        "{}",
        describe(&out)
    );
    // Stopped through the interrupt check, not the later backstop.
    assert!(!stderr(&out).contains("restarted"), "{}", describe(&out));
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

fn repl_reads_stdin(engine: &str) {
    let input = "(define (sq x)\n  (* x x))\n(sq 12)\n\n; a comment\n(display \"a\") (display \"b\")\n\"str\"\n";
    let out = arbores(engine, &["repl"], Some(input));
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(stdout(&out), "144\nab\n\"str\"\n", "{}", describe(&out));
    assert_eq!(stderr(&out), "", "{}", describe(&out));
}

/// After the limit form, the session still works and keeps its definitions.
fn repl_survives(engine: &str, options: &[&str], form: &str, message: &str) {
    let input = format!("(define kept 5)\n{form}\n(+ 1 2)\nkept\n");
    let mut args = options.to_vec();
    args.push("repl");
    let out = arbores(engine, &args, Some(&input));
    assert!(out.status.success(), "{}", describe(&out));
    assert!(stderr(&out).contains(message), "{}", describe(&out));
    assert!(!stderr(&out).contains("restarted"), "{}", describe(&out));
    assert_eq!(stdout(&out), "3\n5\n", "{}", describe(&out));
}

fn repl_survives_step_limit(engine: &str) {
    repl_survives(engine, &["--fuel", "100000"], SPIN, "step limit");
}

fn repl_survives_memory_limit(engine: &str) {
    repl_survives(engine, &["--memory", "64M"], GROW, "memory limit");
}

fn repl_survives_timeout(engine: &str) {
    repl_survives(
        engine,
        &["--fuel", "1000000000000", "--timeout", "1"],
        SPIN,
        "timed out",
    );
}

fn repl_shows_errors_and_goes_on(engine: &str) {
    let out = arbores(
        engine,
        &["repl"],
        Some("(define y 2)\n(car y)\n(+ y\n\n 1)\n(oops\n"),
    );
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(stdout(&out), "3\n", "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.starts_with("error: 1:1: car"), "{}", describe(&out));
    // The unfinished form at the end reaches the reader, which complains.
    assert_eq!(err.matches("error: ").count(), 2, "{}", describe(&out));
}

#[test]
fn bad_options_are_reported() {
    for args in [
        &["--fuel", "lots", "eval", "1"][..],
        &["--memory", "12Q", "eval", "1"],
        &["--timeout", "-3", "eval", "1"],
        &["--engine", "jvm", "eval", "1"],
        &["frobnicate"],
    ] {
        let out = run(command("native", args), None);
        assert_eq!(out.status.code(), Some(2), "{args:?}\n{}", describe(&out));
        assert!(
            stderr(&out).starts_with("error: "),
            "{args:?}\n{}",
            describe(&out)
        );
    }
}

#[test]
fn missing_file_is_reported() {
    let out = run(
        command("native", &["run", "/nonexistent/program.scm"]),
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        stderr(&out).starts_with("error: /nonexistent/program.scm: "),
        "{}",
        describe(&out)
    );
}

#[test]
fn binary_stdin_is_reported() {
    let mut cmd = command("native", &["eval", "-"]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&[0xff, 0xfe, 0x28])
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stderr(&out).contains("not UTF-8"), "{}", describe(&out));
}

#[test]
fn too_much_memory_for_wasm() {
    let out = run(command("wasm", &["--memory", "8G", "eval", "1"]), None);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        stderr(&out).contains("--engine native"),
        "{}",
        describe(&out)
    );
}

#[test]
fn help_for_every_command() {
    for sub in [&[][..], &["eval"], &["run"], &["repl"], &["playground"]] {
        let mut args = sub.to_vec();
        args.push("--help");
        let out = run(command("native", &args), None);
        assert!(out.status.success(), "{args:?}\n{}", describe(&out));
        let text = stdout(&out);
        for option in ["--engine", "--fuel", "--memory", "--timeout", "--store"] {
            assert!(
                text.contains(option),
                "{args:?} help lacks {option}\n{text}"
            );
        }
    }
}

#[test]
fn a_corrupt_cache_is_replaced() {
    require_guest();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("corrupt-cache");
    let _ = std::fs::remove_dir_all(&dir);
    let eval = || {
        let mut cmd = command("wasm", &["eval", "(+ 1 2)"]);
        cmd.env("ARBORES_CACHE_DIR", &dir);
        run(cmd, None)
    };
    let out = eval();
    assert_eq!(stdout(&out), "3\n", "{}", describe(&out));
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "one compiled module in {files:?}");
    let good = std::fs::read(&files[0]).unwrap();
    std::fs::write(&files[0], b"\x7fELF this is not a compiled module").unwrap();
    let out = eval();
    assert_eq!(stdout(&out), "3\n", "{}", describe(&out));
    assert_eq!(
        std::fs::read(&files[0]).unwrap().len(),
        good.len(),
        "the cache file was rewritten"
    );
}

#[test]
fn playground_serves_files() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("playground-dist");
    std::fs::create_dir_all(dir.join("pkg")).unwrap();
    std::fs::write(dir.join("index.html"), "<!doctype html><title>t</title>").unwrap();
    std::fs::write(dir.join("app.js"), "console.log(1)").unwrap();
    std::fs::write(dir.join("pkg/engine_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();

    let mut child = Command::new(BIN)
        .args(["playground", "--port", "0", "--dir"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first_line = Vec::new();
    let mut out = child.stdout.take().unwrap();
    let mut byte = [0u8];
    while out.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        first_line.push(byte[0]);
    }
    let line = String::from_utf8(first_line).unwrap();
    let url = line.split_whitespace().last().unwrap_or("").to_string();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();

    let get = |path: &str| -> String {
        let mut s = TcpStream::connect(&addr).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut response = String::new();
        let mut bytes = Vec::new();
        s.read_to_end(&mut bytes).unwrap();
        response.push_str(&String::from_utf8_lossy(&bytes));
        response
    };
    let index = get("/");
    let js = get("/app.js?v=1");
    let wasm = get("/pkg/engine_bg.wasm");
    let missing = get("/nope.js");
    let escape = get("/../../etc/passwd");
    let _ = child.kill();
    let _ = child.wait();

    assert!(
        line.starts_with("Arbores playground: http://127.0.0.1:"),
        "{line}"
    );
    assert!(
        index.starts_with("HTTP/1.1 200")
            && index.contains("text/html")
            && index.contains("<title>t</title>")
    );
    assert!(
        js.starts_with("HTTP/1.1 200") && js.contains("Content-Type: text/javascript"),
        "{js}"
    );
    assert!(
        wasm.starts_with("HTTP/1.1 200") && wasm.contains("Content-Type: application/wasm"),
        "{wasm}"
    );
    assert!(missing.starts_with("HTTP/1.1 404"), "{missing}");
    assert!(escape.starts_with("HTTP/1.1 404"), "{escape}");
}

/// A primitive that runs long without reaching the interrupt check (here a
/// huge bignum power, in case the core's arithmetic does not poll): the
/// epoch deadline ends it a grace period after the timeout, and the next
/// evaluation works in a fresh instance. If the core does poll there, the
/// timeout ends it cleanly instead; either way the REPL goes on.
#[test]
fn wasm_backstop_ends_a_stuck_evaluation() {
    let start = Instant::now();
    let input = "(string-length (number->string (expt 3 20000000)))\n(+ 1 2)\n";
    let out = arbores("wasm", &["--timeout", "1", "repl"], Some(input));
    let took = start.elapsed();
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        stderr(&out).contains("timed out after 1s"),
        "{}",
        describe(&out)
    );
    assert!(stdout(&out).ends_with("3\n"), "{}", describe(&out));
    assert!(
        took < Duration::from_secs(8),
        "took {took:?}\n{}",
        describe(&out)
    );
}

/// The data-driven Scheme suite of `tests/scheme`, through `arbores run`:
/// the same programs and expectations the core's own tests use natively.
fn scheme_suite(engine: &str) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/scheme");
    let mut passed = 0;
    let mut failures = Vec::new();
    for (kind, ext) in [("pass", "out"), ("fail", "err")] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(kind))
            .expect("tests/scheme")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "scm"))
            .collect();
        files.sort();
        for f in files {
            let expected =
                std::fs::read_to_string(f.with_extension(ext)).expect("expectation file");
            let path = f.to_string_lossy().into_owned();
            let out = arbores(engine, &["run", &path], None);
            let actual = if kind == "pass" {
                stdout(&out)
            } else {
                stderr(&out).replace(&format!("{path}:"), "")
            };
            if actual == expected {
                passed += 1;
            } else {
                failures.push(format!(
                    "{path}\n--- expected\n{expected}--- actual\n{actual}"
                ));
            }
        }
    }
    println!(
        "scheme suite ({engine}): {passed} passed, {} failed",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

both_engines!(scheme_suite);
