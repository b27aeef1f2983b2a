//! Runs the real `arbores` binary, with the embedded wasm guest and with
//! `--engine native`, the way a user would.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_arbores");

/// A cache directory shared by the tests, so the guest is compiled once.
fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("arbores-test-cache")
}

/// A fresh path for a store, named after the test; not created (an older
/// store there, its SQLite companions and a converted directory are
/// removed).
fn fresh_store(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("stores")
        .join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    for suffix in ["", "-wal", "-shm", "-journal", ".dir-store"] {
        let p = PathBuf::from(format!("{}{suffix}", path.display()));
        let _ = std::fs::remove_file(&p);
        let _ = std::fs::remove_dir_all(&p);
    }
    path
}

/// A store of its own for every command that does not name one, so that
/// no test writes into the user's store or another test's.
fn unique_store() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    fresh_store(&format!(
        "auto-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

fn command(engine: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("--engine").arg(engine).args(args);
    cmd.env("ARBORES_CACHE_DIR", cache_dir());
    cmd.env("ARBORES_STORE", unique_store());
    cmd.env_remove("ARBORES_CLOCK");
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

#[path = "support/both_engines.rs"]
#[macro_use]
mod both_engines;

both_engines!(
    starts_from_the_built_in_image,
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
    files_only_as_granted,
    include_only_as_granted,
    program_sees_its_process_context,
    repl_ends_at_exit,
    repl_prints_each_form,
    repl_names_procedures,
    repl_shows_the_error_line_with_a_caret,
    unbound_names_get_a_guess,
    repl_describes_and_finds_names,
    repl_times_loads_and_browses,
    output_cap,
);

/// `--max-output`: exactly the cap is printed (then `eval` ends the line
/// it left open), then an output-limit error (exit status 8); in the REPL
/// the session goes on.
fn output_cap(engine: &str) {
    let flood = "(let loop () (display \"xyz\") (loop))";
    let out = arbores(engine, &["--max-output", "100K", "eval", flood], None);
    assert_eq!(out.status.code(), Some(8), "{}", describe(&out));
    let cap = 100 << 10;
    let printed = "xyz".repeat(cap / 3 + 1)[..cap].to_string() + "\n";
    assert!(
        stdout(&out) == printed,
        "stdout: {} bytes, not the first {cap} of the flood and a newline",
        out.stdout.len()
    );
    assert!(
        stderr(&out).contains("output limit exceeded"),
        "{}",
        describe(&out)
    );
    assert!(stderr(&out).contains("--max-output"), "{}", describe(&out));
    let out = arbores(
        engine,
        &["--max-output", "1K", "repl"],
        Some(&format!(
            "(define x 41)\n{flood}\n(display \"ok\")\n(+ x 1)\n"
        )),
    );
    assert!(out.status.success(), "{}", describe(&out));
    assert!(stdout(&out).ends_with("ok\n42\n"), "{}", describe(&out));
    assert!(
        stderr(&out).contains("output limit exceeded"),
        "{}",
        describe(&out)
    );
}

/// Each engine starts from the prepared image built in at build time
/// (scripts/build-image), not by compiling the prelude: fails when the
/// image built in is stale (made from other code than the core's), damaged
/// or missing, and says why.
fn starts_from_the_built_in_image(engine: &str) {
    let out = arbores(engine, &["eval", "(%prepared-from)"], None);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        stdout(&out),
        "image\n",
        "the prelude was compiled at start-up (run scripts/build, which makes the \
         image first): {}",
        describe(&out)
    );
}

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

/// A directory of its own for a test's files, emptied.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("scratch")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn files_only_as_granted(engine: &str) {
    let root = scratch(&format!("files-{engine}"));
    let (data, out_dir) = (root.join("data"), root.join("out"));
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(&out_dir).unwrap();
    std::fs::write(data.join("in.txt"), "first line\n(a b c)\n").unwrap();
    std::fs::write(root.join("secret.txt"), "secret").unwrap();
    let (data_arg, out_arg) = (data.to_str().unwrap(), out_dir.to_str().unwrap());
    let input = data.join("in.txt");
    let read = format!(
        "(call-with-input-file {:?} (lambda (p) (let ((l (read-line p))) (list l (read p)))))",
        input.to_str().unwrap()
    );
    // Nothing granted: refused, naming the option.
    let out = arbores(engine, &["eval", &read], None);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stderr(&out).contains("not permitted"), "{}", describe(&out));
    assert!(stderr(&out).contains("--allow-read"), "{}", describe(&out));
    // Granted: read.
    let out = arbores(engine, &["--allow-read", data_arg, "eval", &read], None);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        stdout(&out),
        "(\"first line\" (a b c))\n",
        "{}",
        describe(&out)
    );
    // `..` may not lead out of the granted directory.
    let escape = format!("(open-input-file \"{data_arg}/../secret.txt\")");
    let out = arbores(engine, &["--allow-read", data_arg, "eval", &escape], None);
    assert!(
        stderr(&out).contains("outside the directories"),
        "{}",
        describe(&out)
    );
    // A read grant writes nothing; a write grant writes, appends, deletes.
    let target = out_dir.join("made.txt");
    let target = target.to_str().unwrap();
    let write = format!(
        "(with-output-to-file {target:?} (lambda () (display \"one\") (newline)))
         (let ((p (open-output-file {target:?}))) (write '(two 2) p) (close-port p))
         (call-with-input-file {target:?} read)"
    );
    let out = arbores(engine, &["--allow-read", out_arg, "eval", &write], None);
    assert!(stderr(&out).contains("--allow-write"), "{}", describe(&out));
    assert!(!Path::new(target).exists());
    let out = arbores(engine, &["--allow-write", out_arg, "eval", &write], None);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(stdout(&out), "(two 2)\n", "{}", describe(&out));
    assert_eq!(std::fs::read_to_string(target).unwrap(), "(two 2)");
    // A port left open is written out when the evaluation ends.
    let unclosed = format!("(define p (open-output-file {target:?})) (display \"kept\" p)");
    let out = arbores(engine, &["--allow-write", out_arg, "eval", &unclosed], None);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(std::fs::read_to_string(target).unwrap(), "kept");
    // The read-only tier deletes nothing, whatever the grants.
    let delete = format!("(delete-file {target:?}) (file-exists? {target:?})");
    let args = [
        "--tier",
        "read-only",
        "--allow-write",
        out_arg,
        "eval",
        &delete,
    ];
    let out = arbores(engine, &args, None);
    assert!(
        stderr(&out).contains("read-only tier"),
        "{}",
        describe(&out)
    );
    let out = arbores(engine, &["--allow-write", out_arg, "eval", &delete], None);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(stdout(&out), "#f\n", "{}", describe(&out));
    // `load` reads and evaluates a granted file.
    std::fs::write(data.join("lib.scm"), "(define (twice x) (* 2 x))\n").unwrap();
    let load = format!(
        "(load {:?}) (twice 21)",
        data.join("lib.scm").to_str().unwrap()
    );
    let out = arbores(engine, &["--allow-read", data_arg, "eval", &load], None);
    assert_eq!(stdout(&out), "42\n", "{}", describe(&out));
}

fn include_only_as_granted(engine: &str) {
    let root = scratch(&format!("include-{engine}"));
    let lib = root.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("util.scm"), "(define (twice x) (* 2 x))\n").unwrap();
    std::fs::write(
        lib.join("decls.scm"),
        "(export thrice) (import (scheme base))\n",
    )
    .unwrap();
    std::fs::write(lib.join("body.scm"), "(define (thrice x) (* 3 x))\n").unwrap();
    let util = lib.join("util.scm");
    let (decls, body) = (lib.join("decls.scm"), lib.join("body.scm"));
    let program = program_file(
        &format!("include-{engine}.scm"),
        &format!(
            "(include {:?})
             (define-library (inc util) (include-library-declarations {:?}) (include {:?}))
             (import (inc util))
             (display (list (twice 21) (thrice 3))) (newline)",
            util.to_str().unwrap(),
            decls.to_str().unwrap(),
            body.to_str().unwrap()
        ),
    );
    let (lib_arg, program) = (lib.to_str().unwrap(), program.to_str().unwrap());
    // Not granted: refused with the grant to ask for, as a file would be.
    let out = arbores(engine, &["run", program], None);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stderr(&out).contains("include:"), "{}", describe(&out));
    assert!(stderr(&out).contains("--allow-read"), "{}", describe(&out));
    // Granted: the files' forms are spliced in.
    let out = arbores(engine, &["--allow-read", lib_arg, "run", program], None);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(stdout(&out), "(42 9)\n", "{}", describe(&out));
}

fn program_sees_its_process_context(engine: &str) {
    let file = program_file(
        &format!("process-{engine}.scm"),
        "(write (cdr (command-line))) (newline)
         (write (get-environment-variable \"ARBORES_TEST_SHOWN\"))
         (write (get-environment-variable \"ARBORES_TEST_HIDDEN\"))
         (write (get-environment-variables)) (newline)
         (write-string \"to stderr\" (current-error-port))
         (write (list (read-line) (read) (read-char) (read-line) (read-line))) (newline)
         (dynamic-wind
           (lambda () #f)
           (lambda () (exit 3))
           (lambda () (display \"after thunk ran\") (newline)))
         (display \"not reached\")",
    );
    let mut cmd = command(
        engine,
        &["--env", "ARBORES_TEST_SHOWN", "--env", "X=1", "run"],
    );
    cmd.arg(&file).args(["a", "--b", "c d"]);
    cmd.env("ARBORES_TEST_SHOWN", "yes")
        .env("ARBORES_TEST_HIDDEN", "no");
    if engine == "wasm" {
        require_guest();
    }
    let out = run(cmd, Some("a line\n(1\n 2) rest\n"));
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert_eq!(
        stdout(&out),
        "(\"a\" \"--b\" \"c d\")\n\"yes\"#f((\"ARBORES_TEST_SHOWN\" . \"yes\") (\"X\" . \"1\"))\n\
         (\"a line\" (1 2) #\\space \"rest\" #<eof>)\nafter thunk ran\n",
        "{}",
        describe(&out)
    );
    assert_eq!(stderr(&out), "to stderr", "{}", describe(&out));
}

fn repl_ends_at_exit(engine: &str) {
    let out = arbores(
        engine,
        &["repl"],
        Some("(display \"before\")\n(emergency-exit 4)\n(display \"after\")\n"),
    );
    assert_eq!(out.status.code(), Some(4), "{}", describe(&out));
    assert_eq!(stdout(&out), "before\n", "{}", describe(&out));
}

/// Each form of a line is evaluated and printed by itself, in order; an
/// error stops the rest of its line, not the lines after.
fn repl_prints_each_form(engine: &str) {
    let out = arbores(
        engine,
        &["repl"],
        Some("1 2 (+ 1 2)\n(define x 5) x \"s\" ; done\n(car '()) 7\n(display \"a\") 8\n"),
    );
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        stdout(&out),
        "1\n2\n3\n5\n\"s\"\na\n8\n",
        "{}",
        describe(&out)
    );
    // The error's position is that in the line.
    assert!(
        stderr(&out).starts_with("error: 1:1: car"),
        "{}",
        describe(&out)
    );
    // Never colour into a pipe.
    assert!(!stdout(&out).contains('\x1b') && !stderr(&out).contains('\x1b'));
    // A second form's error points into the line where it is.
    let out = arbores(engine, &["repl"], Some("1 (car '())\n"));
    assert_eq!(stdout(&out), "1\n", "{}", describe(&out));
    assert!(
        stderr(&out).starts_with("error: 1:3: car"),
        "{}",
        describe(&out)
    );
}

/// Procedures print with their names: primitives, procedures of the
/// prelude, and the program's own.
fn repl_names_procedures(engine: &str) {
    let out = arbores(
        engine,
        &["repl"],
        Some(
            "car\nvector-map\n(define (f x) x)\nf\n(define g (lambda (y) y))\ng\n(lambda (z) z)\n",
        ),
    );
    assert_eq!(
        stdout(&out),
        "#<procedure car>\n#<procedure vector-map>\n#<procedure f>\n#<procedure g>\n#<procedure>\n",
        "{}",
        describe(&out)
    );
}

/// Under an error: the line of the source it points into, and a caret
/// under its column.
fn repl_shows_the_error_line_with_a_caret(engine: &str) {
    let out = arbores(engine, &["repl"], Some("(list 1\n      (car '()))\n"));
    let err = stderr(&out);
    assert!(
        err.starts_with(
            "error: 2:7: car: expected a pair, got ()\n2 |       (car '()))\n  |       ^\n"
        ),
        "{}",
        describe(&out)
    );
}

/// An unbound variable's error names the nearest bound names (the
/// session's own definitions too); nothing near, no guess; `--json` output
/// stays one object; in the REPL, `(help)` points to `,help`.
fn unbound_names_get_a_guess(engine: &str) {
    let out = arbores(engine, &["eval", "(string-apend \"a\" \"b\")"], None);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        stderr(&out).ends_with(
            "unbound variable: string-apend\n  at top level (1:2)\nnote: did you mean `string-append`?\n"
        ),
        "{}",
        describe(&out)
    );
    let out = arbores(engine, &["eval", "(zzqqxx 1)"], None);
    assert!(!stderr(&out).contains("note:"), "{}", describe(&out));
    let out = arbores(engine, &["--json", "eval", "(string-apend)"], None);
    assert!(stderr(&out).is_empty(), "{}", describe(&out));
    let input = "(define (my-counter) 1)\n(my-countr)\n(help)\n(car 1)\n";
    let out = arbores(engine, &["repl"], Some(input));
    let err = stderr(&out);
    assert!(
        err.contains("note: did you mean `my-counter`?\n"),
        "{}",
        describe(&out)
    );
    assert!(
        err.contains("note: the REPL's commands start with a comma: ,help lists them\n"),
        "{}",
        describe(&out)
    );
    assert_eq!(err.matches("note:").count(), 2, "{}", describe(&out));
}

/// `,describe` and `,apropos` on the session's names and stored knowledge.
fn repl_describes_and_finds_names(engine: &str) {
    let input = "\
(define (two a b) a)
(define answer 42)
(arb:create \"(define (stored-cube x) (* x x x))\" '() \"cubes a number\" \"function\" '(\"stored-cube\"))
,describe car
,describe two
,describe answer
,describe if
,describe stored-cube
,describe no-such-name
,apropos string-upc
,apropos ored-cu
";
    let out = arbores(engine, &["repl"], Some(input));
    assert!(out.status.success(), "{}", describe(&out));
    let text = stdout(&out);
    for expected in [
        "car: procedure, takes 1 argument\n",
        "two: procedure, takes 2 arguments\n",
        "answer: variable, bound to 42\n",
        "if: syntax",
        "stored-cube: procedure, takes 1 argument\n",
        "stored node 256 (stored-cube)\n  type:         function\n  description:  cubes a number\n  version:      last changed in v2",
        "no-such-name is not bound, and no stored node has that name\n",
        "string-upcase\n",
        "\nstored-cube\n",
    ] {
        assert!(text.contains(expected), "{expected:?} in\n{}", describe(&out));
    }
}

/// `,time`, `,load` (only as granted), `,log`, `,show`, `,help`.
fn repl_times_loads_and_browses(engine: &str) {
    let dir = scratch(&format!("repl-load-{engine}"));
    std::fs::write(dir.join("lib.scm"), "(define (loaded) 'yes)\n(loaded)\n").unwrap();
    let file = dir.join("lib.scm").display().to_string();
    let input = format!(
        ",load {file}\n(define (f) 1)\n,time (f) (+ 1 2)\n\
(arb:create \"(define k 1)\" '() \"one\" \"value\" '(\"k\"))\n,log\n,show 256\n,help\n"
    );
    // Without a grant, nothing is read.
    let out = arbores(engine, &["repl"], Some(&input));
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        stderr(&out).contains(&format!("cannot load {file}: not permitted")),
        "{}",
        describe(&out)
    );
    assert!(!stdout(&out).contains("yes"), "{}", describe(&out));
    let dir_text = dir.display().to_string();
    let out = arbores(engine, &["--allow-read", &dir_text, "repl"], Some(&input));
    assert!(out.status.success(), "{}", describe(&out));
    let text = stdout(&out);
    assert!(text.starts_with("yes\n1\n3\n;; "), "{}", describe(&out));
    assert!(text.contains(" ms wall time\n"), "{}", describe(&out));
    assert!(text.contains("* v2  "), "{}", describe(&out));
    assert!(text.contains("node 256 in v2\n"), "{}", describe(&out));
    for command in [
        ",describe",
        ",apropos",
        ",time",
        ",load",
        ",log",
        ",show",
        ",save",
        ",restore",
        ",snapshots",
        ",settings",
        ",quit",
    ] {
        assert!(
            text.contains(&format!("  {command} ")),
            "{command} in\n{}",
            describe(&out)
        );
    }
    assert_eq!(stderr(&out), "", "{}", describe(&out));
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

/// `,save` in one process and engine, `,restore` in another process and
/// the other engine: closures come back with their state.
#[test]
fn repl_saves_and_restores_sessions_across_engines() {
    require_guest();
    let store = fresh_store("saved-sessions");
    let _ = std::fs::remove_dir_all(format!("{}.sessions", store.display()));
    let with_store = |engine: &str, input: &str| {
        let mut cmd = command(engine, &["repl"]);
        cmd.env("ARBORES_STORE", &store);
        run(cmd, Some(input))
    };
    let out = with_store(
        "native",
        "(define bump! (let ((n 0)) (lambda () (set! n (+ n 1)) n)))\n(bump!)\n,save work\n,snapshots\n",
    );
    assert!(out.status.success(), "{}", describe(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("1\nsaved this session as work ("),
        "{}",
        describe(&out)
    );
    assert!(text.contains("\nwork "), "{}", describe(&out));
    let out = with_store("wasm", ",restore work\n(bump!)\n(define later 1)\n,restore work\nlater\n,restore none\n,save ../x\n");
    let text = stdout(&out);
    assert!(
        text.starts_with("restored work: 1 definitions (bump!)\n2\nrestored work"),
        "{}",
        describe(&out)
    );
    let err = stderr(&out);
    assert!(
        err.contains("unbound variable: later"),
        "{}",
        describe(&out)
    );
    assert!(
        err.contains("no saved session \"none\""),
        "{}",
        describe(&out)
    );
    assert!(err.contains("a session name is"), "{}", describe(&out));
    // A damaged file is refused, naming why.
    let file = format!("{}.sessions/work.session", store.display());
    let mut bytes = std::fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&file, bytes).unwrap();
    let out = with_store("native", ",restore work\n");
    assert!(
        stderr(&out).contains("nothing was restored: the content hash does not match"),
        "{}",
        describe(&out)
    );
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
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
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
        for option in [
            "--engine",
            "--fuel",
            "--memory",
            "--timeout",
            "--store",
            "--tier",
        ] {
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

/// `arbores --engine wasm --timeout 1 --fuel HUGE ARGS...` (so that only
/// the clock stops it), its guest deaf to `should-stop` when `deaf`
/// (`ARBORES_TEST_GUEST_DEAF`), as a guest that stopped asking would be.
fn one_second(args: &[&str], deaf: bool) -> Command {
    require_guest();
    let mut all = vec!["--timeout", "1", "--fuel", "100000000000"];
    all.extend_from_slice(args);
    let mut cmd = command("wasm", &all);
    if deaf {
        cmd.env("ARBORES_TEST_GUEST_DEAF", "1");
    }
    cmd
}

/// A deaf guest in a long-lived session: wasmtime's epoch deadline traps it
/// a grace period after the timeout, and the REPL goes on in a fresh
/// instance.
#[test]
fn repl_backstop_is_the_epoch_deadline() {
    let start = Instant::now();
    let input = "(define x 1)\n(let loop () (loop))\n(+ 1 2)\n";
    let out = run(one_second(&["repl"], true), Some(input));
    let took = start.elapsed();
    assert!(out.status.success(), "{}", describe(&out));
    let err = stderr(&out);
    assert!(
        err.contains("the engine did not stop within 2s of the timeout")
            && err.contains("the engine was restarted"),
        "{}",
        describe(&out)
    );
    assert!(stdout(&out).ends_with("3\n"), "{}", describe(&out));
    assert!(took >= Duration::from_secs(3), "took {took:?}");
}

/// The same guest in a one-shot command: the process is the backstop. It
/// reports the evaluation in the command's form, after what the program
/// printed, and ends with the timeout's status, a grace period after the
/// timeout.
#[test]
fn one_shot_backstop_is_the_process() {
    let program = program_file(
        "deaf-loop.scm",
        "(display \"before\")\n(newline)\n(define (spin) (spin))\n(spin)\n",
    );
    let start = Instant::now();
    let mut cmd = one_second(&["run"], true);
    cmd.arg(&program);
    let out = run(cmd, None);
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(5), "{}", describe(&out));
    assert_eq!(stdout(&out), "before\n", "{}", describe(&out));
    let err = stderr(&out);
    assert!(
        err.contains("deaf-loop.scm: timed out after 1s: the engine did not stop within 2s")
            && err.contains("--timeout")
            && !err.contains("restarted"),
        "{}",
        describe(&out)
    );
    assert!(
        took >= Duration::from_secs(3) && took < Duration::from_secs(10),
        "took {took:?}"
    );

    // --json: one object, as for any other time limit.
    const SPIN_FOREVER: &str = "(let loop () (loop))";
    let out = run(one_second(&["--json", "eval", SPIN_FOREVER], true), None);
    assert_eq!(out.status.code(), Some(5), "{}", describe(&out));
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("one JSON object");
    assert_eq!(v["error"]["kind"], "time-limit", "{v}");
    assert_eq!(v["exit"], 5, "{v}");

    // A guest that asks stops at the timeout itself, well before.
    let start = Instant::now();
    let out = run(one_second(&["eval", SPIN_FOREVER], false), None);
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(5), "{}", describe(&out));
    let err = stderr(&out);
    assert!(
        err.contains("timed out after 1s") && !err.contains("did not stop"),
        "{err}"
    );
    assert!(took < Duration::from_secs(3), "took {took:?}");
}

// ---------------------------------------------------------------------------
// The knowledge store

/// `arbores --store DIR ARGS...`
fn in_store(engine: &str, store: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut full = vec!["--store", store.to_str().unwrap()];
    full.extend_from_slice(args);
    arbores(engine, &full, stdin)
}

/// A running `arbores` that the test talks to a line at a time: it writes
/// to the standard input and reads the standard output as it comes.
struct Talk {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Talk {
    fn start(engine: &str, args: &[&str]) -> Talk {
        if engine == "wasm" {
            require_guest();
        }
        let mut child = command(engine, args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Talk {
            child,
            input,
            output,
        }
    }

    /// Writes a line.
    fn say(&mut self, line: &str) {
        writeln!(self.input, "{line}").unwrap();
        self.input.flush().unwrap();
    }

    /// Writes a line and waits for the next line of output.
    fn ask(&mut self, line: &str) -> String {
        self.say(line);
        let mut reply = String::new();
        self.output.read_line(&mut reply).unwrap();
        reply
    }

    /// Ends the input: the rest of the standard output, and how the
    /// process ended.
    fn finish(mut self) -> (String, Output) {
        drop(self.input);
        let mut rest = String::new();
        self.output.read_to_string(&mut rest).unwrap();
        (rest, self.child.wait_with_output().unwrap())
    }
}

/// The store file and its SQLite companions (`-wal`, `-shm`) with their
/// bytes, to show a store was not touched.
fn store_bytes(store: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let p = PathBuf::from(format!("{}{suffix}", store.display()));
        if let Ok(bytes) = std::fs::read(&p) {
            out.push((p, bytes));
        }
    }
    out
}

/// Changes the store file behind arbores' back, as damage would.
fn tamper(store: &Path, sql: &str) {
    let conn = rusqlite::Connection::open(store).unwrap();
    let changed = conn.execute(sql, []).unwrap();
    assert!(changed > 0, "{sql} changed nothing");
}

/// The names of the store's blobs, in order.
fn blob_names(store: &Path) -> Vec<Vec<u8>> {
    let conn = rusqlite::Connection::open(store).unwrap();
    let mut stmt = conn
        .prepare("SELECT hash FROM blobs ORDER BY hash")
        .unwrap();
    let names = stmt
        .query_map([], |r| r.get::<_, Vec<u8>>(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    names
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every file under `dir` with its bytes, to show a store was not touched.
fn files_of(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p, bytes));
            }
        }
    }
    out.sort();
    out
}

const CREATE_TRIPLE: &str = "(arb:create \"(define (triple x) (* 3 x))\" '() \"multiplies by three\" \"function\" '(\"triple\"))";

fn ok(out: &Output) {
    assert!(out.status.success(), "{}", describe(out));
    assert_eq!(stderr(out), "", "{}", describe(out));
}

both_engines!(
    knowledge_outlives_the_command,
    create_search_switch_transaction,
    run_is_read_write,
    read_only_changes_nothing,
    reads_create_no_store,
    corrupt_refs_is_reported,
    corrupt_blob_is_reported,
    missing_blob_is_reported,
    lost_refs_is_an_error,
    concurrent_writers_lose_nothing,
    first_writers_race_on_a_new_store,
    json_output,
    exit_statuses,
    not_a_store_is_refused,
    repl_saves_each_commit,
    a_searching_session_sees_other_writers_nodes,
    a_session_opened_before_its_store_existed_sees_other_writers,
    a_store_of_the_first_layout_opens,
    mcp_answers_a_client,
);

/// A node created by one `arbores eval` is usable by name in the next.
fn knowledge_outlives_the_command(engine: &str) {
    let store = fresh_store(&format!("outlives-{engine}"));
    let out = in_store(engine, &store, &["eval", CREATE_TRIPLE], None);
    ok(&out);
    assert_eq!(
        stdout(&out),
        "((\"s-expression-id\" . 256) (\"new-version-id\" . 2))\n"
    );
    assert!(store.is_file(), "{} is not a store file", store.display());
    // A new store file has 16 KiB pages (its size stays near the blobs').
    let conn = rusqlite::Connection::open(&store).unwrap();
    let page: i64 = conn
        .pragma_query_value(None, "page_size", |r| r.get(0))
        .unwrap();
    assert_eq!(page, 16384);
    drop(conn);
    let out = in_store(engine, &store, &["eval", "(triple 14)"], None);
    ok(&out);
    assert_eq!(stdout(&out), "42\n");
}

/// arb:create, arb:search-by-symbol, arb:transaction and arb:switch-version
/// across separate commands: each sees what the one before stored.
fn create_search_switch_transaction(engine: &str) {
    let store = fresh_store(&format!("css-{engine}"));
    let eval = |src: &str| {
        let out = in_store(engine, &store, &["eval", src], None);
        ok(&out);
        stdout(&out)
    };
    eval(CREATE_TRIPLE);
    assert_eq!(
        eval("(map (lambda (h) (cdr (assoc \"id\" h))) (arb:search-by-symbol \"tri\" \"prefix\"))"),
        "(256)\n"
    );
    assert_eq!(
        eval(
            "(arb:transaction \
               (arb:create \"(define (add x y) (+ x y))\" '() \"adds\" \"function\" '(\"add\")) \
               (arb:create \"(define (sub x y) (- x y))\" '() \"subtracts\" \"function\" '(\"sub\")))"
        ),
        "((\"result\" (\"s-expression-id\" . 258) (\"new-version-id\" . #f)) (\"new-version-id\" . 3))\n"
    );
    assert_eq!(
        eval("(list (arb:current-version) (add 1 2) (sub 5 3))"),
        "(3 3 2)\n"
    );
    // A transaction that fails leaves nothing, here or in the store.
    eval("(arb:transaction (arb:create \"(define (mul x y) (* x y))\" '() \"multiplies\" \"function\" '(\"mul\")) (arb:create \"oops(\"))");
    assert_eq!(
        eval("(list (arb:current-version) (arb:search-by-symbol \"mul\" \"exact\"))"),
        "(3 ())\n"
    );
    // Back to version 2: add and sub are gone, in this command and the next.
    assert_eq!(eval("(arb:switch-version 2)"), "2\n");
    assert_eq!(
        eval("(list (arb:current-version) (arb:search-by-symbol \"add\" \"exact\") (triple 2))"),
        "(2 () 6)\n"
    );
    assert_eq!(
        eval("(map (lambda (e) (cdr (assoc \"version-id\" e))) (arb:reflog))"),
        "(2 3 2 1)\n"
    );
}

/// `run` is a script: read-write, so it may commit but not move the current
/// version, unless the operator gives it the system tier.
fn run_is_read_write(engine: &str) {
    let store = fresh_store(&format!("run-tier-{engine}"));
    let s = store.to_str().unwrap();
    let program = program_file(
        &format!("switch-{engine}.scm"),
        &format!("{CREATE_TRIPLE}\n(write (arb:switch-version 1))\n"),
    );
    let file = program.to_str().unwrap();
    let out = arbores(engine, &["--store", s, "run", file], None);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        stdout(&out).contains("(\"error\" . \"permission-denied\")"),
        "{}",
        describe(&out)
    );
    // The commit was kept; the switch was not.
    let current = |store: &str| {
        let out = arbores(
            engine,
            &["--store", store, "eval", "(arb:current-version)"],
            None,
        );
        ok(&out);
        stdout(&out)
    };
    assert_eq!(current(s), "2\n");

    let out = arbores(
        engine,
        &["--store", s, "--tier", "system", "run", file],
        None,
    );
    ok(&out);
    assert_eq!(stdout(&out), "1");
    assert_eq!(current(s), "1\n");
    // eval is the operator's: system by default, read-write when asked.
    let out = arbores(
        engine,
        &[
            "--store",
            s,
            "--tier",
            "read-write",
            "eval",
            "(arb:switch-version 3)",
        ],
        None,
    );
    assert!(
        stdout(&out).contains("permission-denied"),
        "{}",
        describe(&out)
    );
    assert_eq!(current(s), "1\n");
}

/// `--tier read-only` refuses every change and never writes: no store is
/// created, and an existing one stays exactly as it was.
fn read_only_changes_nothing(engine: &str) {
    let store = fresh_store(&format!("read-only-{engine}"));
    for command in ["eval", "run", "repl"] {
        let args: Vec<&str> = match command {
            "eval" => vec!["--tier", "read-only", "eval", CREATE_TRIPLE],
            "run" => vec!["--tier", "read-only", "run", "-"],
            _ => vec!["--tier", "read-only", "repl"],
        };
        let stdin = (command != "eval").then_some(format!("(write {CREATE_TRIPLE})\n"));
        let out = in_store(engine, &store, &args, stdin.as_deref());
        assert!(out.status.success(), "{command}\n{}", describe(&out));
        assert!(
            stdout(&out).contains("permission-denied"),
            "{command}\n{}",
            describe(&out)
        );
        assert!(!store.exists(), "{command} created {}", store.display());
    }
    let out = in_store(engine, &store, &["eval", CREATE_TRIPLE], None);
    ok(&out);
    let before = store_bytes(&store);
    let out = in_store(
        engine,
        &store,
        &[
            "--tier",
            "read-only",
            "eval",
            &format!("(write {CREATE_TRIPLE}) (triple 5)"),
        ],
        None,
    );
    ok(&out);
    assert!(
        stdout(&out).contains("permission-denied"),
        "{}",
        describe(&out)
    );
    assert!(
        stdout(&out).ends_with("15\n"),
        "reads still work\n{}",
        describe(&out)
    );
    assert_eq!(store_bytes(&store), before, "read-only wrote to the store");
}

/// Evaluations that only read (or meet an unbound variable, which looks
/// for stored knowledge by that name) create no store.
fn reads_create_no_store(engine: &str) {
    let store = fresh_store(&format!("reads-{engine}"));
    for src in [
        "(+ 1 2)",
        "(length (arb:search-by-symbol \"arb:\"))",
        "(arb:current-version)",
        "no-such-variable",
    ] {
        let _ = in_store(engine, &store, &["eval", src], None);
        assert!(!store.exists(), "{src} created {}", store.display());
    }
}

/// A corrupt refs record stops arbores with an error naming the store
/// and the record, and nothing in the store is changed (not even by a
/// command that commits).
fn corrupt_refs_is_reported(engine: &str) {
    let store = fresh_store(&format!("corrupt-refs-{engine}"));
    ok(&in_store(engine, &store, &["eval", CREATE_TRIPLE], None));
    tamper(
        &store,
        "UPDATE refs SET data = CAST(substr(data, 1, length(data) - 1) || x'55' AS BLOB)",
    );
    let before = store_bytes(&store);
    for src in ["(triple 2)", CREATE_TRIPLE] {
        let out = in_store(engine, &store, &["eval", src], None);
        assert_eq!(out.status.code(), Some(6), "{}", describe(&out));
        assert_eq!(stdout(&out), "", "{}", describe(&out));
        let err = stderr(&out);
        assert!(
            err.starts_with("error: cannot open the knowledge store"),
            "{err}"
        );
        assert!(
            err.contains(&format!("{}: the refs record", store.display())),
            "{err}"
        );
        assert!(err.contains("--store"), "advice\n{err}");
    }
    assert_eq!(store_bytes(&store), before, "the store was changed");
}

/// A store with blobs but no refs record is damaged, not empty: a commit
/// would start a new history and leave the old one unreachable.
fn lost_refs_is_an_error(engine: &str) {
    let store = fresh_store(&format!("lost-refs-{engine}"));
    ok(&in_store(engine, &store, &["eval", CREATE_TRIPLE], None));
    tamper(&store, "DELETE FROM refs");
    let before = store_bytes(&store);
    for src in ["(arb:current-version)", CREATE_TRIPLE] {
        let out = in_store(engine, &store, &["eval", src], None);
        assert_eq!(out.status.code(), Some(6), "{}", describe(&out));
        assert_eq!(stdout(&out), "", "{}", describe(&out));
        assert!(
            stderr(&out).contains("no refs record"),
            "{}",
            describe(&out)
        );
    }
    assert_eq!(store_bytes(&store), before, "the store was changed");
}

/// A blob whose bytes do not match its name: the error names the store
/// and the blob, and only what needs that blob fails.
fn corrupt_blob_is_reported(engine: &str) {
    let store = fresh_store(&format!("corrupt-blob-{engine}"));
    ok(&in_store(engine, &store, &["eval", CREATE_TRIPLE], None));
    let names = blob_names(&store);
    assert!(names.len() > 3, "{} blobs", names.len());
    let mut failed = 0;
    for victim in &names {
        let fresh = fresh_store(&format!("corrupt-blob-{engine}-one"));
        std::fs::copy(&store, &fresh).unwrap();
        tamper(
            &fresh,
            &format!(
                "UPDATE blobs SET data = CAST(x'00' || data AS BLOB) WHERE hash = x'{}'",
                hex(victim)
            ),
        );
        let before = store_bytes(&fresh);
        let out = in_store(engine, &fresh, &["eval", "(triple 2)"], None);
        if out.status.success() {
            // A blob this evaluation never reads (another index's, an older
            // version's) does not stop it.
            assert_eq!(stdout(&out), "6\n", "{}", describe(&out));
        } else {
            failed += 1;
            // Read when opening: the store's status; read by the evaluation:
            // its error.
            assert!(
                matches!(out.status.code(), Some(1) | Some(6)),
                "{}",
                describe(&out)
            );
            let err = stderr(&out);
            // Named with the store's path when opening needs it, else as
            // the evaluation's error.
            assert!(err.contains(&format!("blob {}", hex(victim))), "{err}");
            assert!(err.contains("do not hash to its name"), "{err}");
        }
        assert_eq!(store_bytes(&fresh), before, "the store was changed");
    }
    assert!(failed > 0, "no blob was needed by (triple 2)");
}

fn missing_blob_is_reported(engine: &str) {
    let store = fresh_store(&format!("missing-blob-{engine}"));
    ok(&in_store(engine, &store, &["eval", CREATE_TRIPLE], None));
    // The refs record names the root blob of the current version first.
    let names = blob_names(&store);
    let mut failed = 0;
    for victim in &names {
        let fresh = fresh_store(&format!("missing-blob-{engine}-one"));
        std::fs::copy(&store, &fresh).unwrap();
        tamper(
            &fresh,
            &format!("DELETE FROM blobs WHERE hash = x'{}'", hex(victim)),
        );
        let out = in_store(engine, &fresh, &["eval", "(triple 2)"], None);
        if !out.status.success() {
            failed += 1;
            // Read when opening: the store's status; read by the evaluation:
            // its error.
            assert!(
                matches!(out.status.code(), Some(1) | Some(6)),
                "{}",
                describe(&out)
            );
            let err = stderr(&out);
            assert!(err.contains(&format!("blob {}", hex(victim))), "{err}");
            assert!(err.contains("is missing"), "{err}");
        }
    }
    assert!(failed > 0, "no blob was needed by (triple 2)");
}

/// A file or directory that is not a store is refused, not written into.
fn not_a_store_is_refused(engine: &str) {
    let store = fresh_store(&format!("not-a-store-{engine}"));
    std::fs::write(&store, "my notes, not a database\n".repeat(100)).unwrap();
    let before = store_bytes(&store);
    let out = in_store(engine, &store, &["eval", CREATE_TRIPLE], None);
    assert_eq!(out.status.code(), Some(6), "{}", describe(&out));
    assert!(
        stderr(&out).contains("not an arbores store"),
        "{}",
        describe(&out)
    );
    assert_eq!(store_bytes(&store), before);

    // A directory that is not a store of the first format.
    let store = fresh_store(&format!("not-a-store-dir-{engine}"));
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("notes.txt"), "mine").unwrap();
    let out = in_store(engine, &store, &["eval", CREATE_TRIPLE], None);
    assert_eq!(out.status.code(), Some(6), "{}", describe(&out));
    assert!(
        stderr(&out).contains("not an arbores store"),
        "{}",
        describe(&out)
    );
    assert_eq!(files_of(&store).len(), 1);

    // Another application's SQLite database.
    let store = fresh_store(&format!("other-db-{engine}"));
    rusqlite::Connection::open(&store)
        .unwrap()
        .execute_batch("CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('mine');")
        .unwrap();
    let out = in_store(engine, &store, &["eval", CREATE_TRIPLE], None);
    assert_eq!(out.status.code(), Some(6), "{}", describe(&out));
    assert!(
        stderr(&out).contains("not an arbores store"),
        "{}",
        describe(&out)
    );

    // A store of a layout this arbores does not know.
    let store = fresh_store(&format!("future-store-{engine}"));
    ok(&in_store(engine, &store, &["eval", CREATE_TRIPLE], None));
    rusqlite::Connection::open(&store)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let out = in_store(engine, &store, &["eval", "(+ 1 2)"], None);
    assert_eq!(out.status.code(), Some(6), "{}", describe(&out));
    assert!(
        stderr(&out).contains("a store of layout 99"),
        "{}",
        describe(&out)
    );
}

/// The REPL saves after each evaluation that commits, not at exit: a
/// second command started while the first is still open sees the change.
fn repl_saves_each_commit(engine: &str) {
    let store = fresh_store(&format!("repl-saves-{engine}"));
    let s = store.to_str().unwrap();
    let mut repl = Talk::start(engine, &["--store", s, "repl"]);
    // The REPL prints the commit's reply once it is stored: then ask
    // another arbores.
    let line = repl.ask(CREATE_TRIPLE);
    assert!(line.contains("new-version-id"), "{line}");
    let out = in_store(engine, &store, &["eval", "(triple 7)"], None);
    // `,settings` says what the last commit wrote.
    repl.say(",settings");
    let (settings, repl) = repl.finish();
    assert!(repl.status.success(), "{}", describe(&repl));
    assert!(
        settings.contains("last commit: ") && settings.contains(" new blobs ("),
        "{settings}"
    );
    ok(&out);
    assert_eq!(stdout(&out), "21\n");
}

/// A long-lived session that has searched by meaning (its semantic index
/// loaded from the store) finds, in its next evaluation, the nodes another
/// process created meanwhile; nothing is built again.
fn a_searching_session_sees_other_writers_nodes(engine: &str) {
    let store = fresh_store(&format!("search-sync-{engine}"));
    let s = store.to_str().unwrap();
    ok(&in_store(engine, &store, &["eval", CREATE_TRIPLE], None));
    let mut repl = Talk::start(engine, &["--store", s, "repl"]);
    let search = "(map cdar (arb:semantic-search \"zebra crossing signal\" 3 0.5))";
    let line = repl.ask(search);
    assert_eq!(line.trim(), "()", "{line}");
    let other = in_store(
        engine,
        &store,
        &[
            "eval",
            "(arb:create \"(define zebra 1)\" '() \"zebra crossing signal\" \"constant\" '(\"zebra\"))",
        ],
        None,
    );
    ok(&other);
    assert!(stdout(&other).contains("257"), "{}", describe(&other));
    repl.say(search);
    let (rest, repl) = repl.finish();
    assert!(repl.status.success(), "{}", describe(&repl));
    assert_eq!(rest.trim(), "(257)", "{rest}");
    assert!(
        !stderr(&repl).contains("built again"),
        "{}",
        describe(&repl)
    );
}

/// A REPL started before its store file existed sees, in its next
/// evaluation, what another process stored meanwhile (the file that
/// process created), and its own commit builds on it.
fn a_session_opened_before_its_store_existed_sees_other_writers(engine: &str) {
    let store = fresh_store(&format!("no-file-yet-{engine}"));
    let s = store.to_str().unwrap();
    let mut repl = Talk::start(engine, &["--store", s, "repl"]);
    let line = repl.ask("(arb:search-by-symbol \"triple\" \"exact\")");
    assert_eq!(line.trim(), "()", "{line}");
    assert!(!store.exists(), "a read made the store file");
    ok(&in_store(engine, &store, &["eval", CREATE_TRIPLE], None));
    repl.say("(triple 7)");
    repl.say(
        "(arb:create \"(define (twice x) (* 2 x))\" '() \"doubles\" \"function\" '(\"twice\"))",
    );
    let (rest, repl) = repl.finish();
    assert!(repl.status.success(), "{}", describe(&repl));
    assert_eq!(
        rest,
        "21\n((\"s-expression-id\" . 257) (\"new-version-id\" . 3))\n",
        "{}",
        describe(&repl)
    );
    let after = in_store(
        engine,
        &store,
        &["eval", "(list (triple 2) (twice 2))"],
        None,
    );
    ok(&after);
    assert_eq!(stdout(&after), "(6 4)\n");
}

/// `arbores mcp` speaks the protocol on its standard streams: the
/// handshake, the tool list, an evaluation with its structured result, a
/// Scheme error as a tool error, and bad arguments as a tool error of
/// kind invalid-argument;
/// nothing but protocol messages on standard output, and the server ends
/// when its input does. (host/tests/mcp/ drives it with a real client.)
fn mcp_answers_a_client(engine: &str) {
    let requests = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"eval","arguments":{"source":"(display \"hi\") (+ 1 2)"}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"eval","arguments":{"source":"(car '())"}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"eval","arguments":{"sauce":"1"}}}"#,
    ];
    let mut server = Talk::start(engine, &["mcp"]);
    let mut replies = Vec::new();
    for request in requests {
        if request.contains("\"id\"") {
            let line = server.ask(request);
            let reply: serde_json::Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not a JSON-RPC message ({e}): {line:?}"));
            replies.push(reply);
        } else {
            server.say(request);
        }
    }
    let (rest, out) = server.finish();
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(rest, "", "more on standard output than the replies");

    assert_eq!(replies[0]["result"]["serverInfo"]["name"], "arbores");
    assert_eq!(replies[0]["result"]["protocolVersion"], "2025-06-18");
    let mut tools: Vec<&str> = replies[1]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    tools.sort();
    assert_eq!(
        tools,
        [
            "create",
            "eval",
            "get",
            "restore",
            "search",
            "snapshot",
            "snapshots"
        ]
    );
    let done = &replies[2]["result"];
    assert_eq!(done["isError"], false, "{done}");
    assert_eq!(done["structuredContent"]["value"], "3");
    assert_eq!(done["structuredContent"]["output"], "hi");
    let failed = &replies[3]["result"];
    assert_eq!(failed["isError"], true, "{failed}");
    assert_eq!(
        failed["structuredContent"]["error"]["kind"],
        "runtime-error"
    );
    assert_eq!(failed["structuredContent"]["error"]["column"], 1);
    let refused = &replies[4]["result"];
    assert_eq!(refused["isError"], true, "{refused}");
    let error = &refused["structuredContent"]["error"];
    assert_eq!(error["kind"], "invalid-argument", "{refused}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("unknown field `sauce`"), "{message}");
}

/// `arbores mcp --help` says what the server offers and how a client
/// starts it.
#[test]
fn mcp_help_shows_tools_and_configuration() {
    let mut cmd = Command::new(BIN);
    cmd.args(["mcp", "--help"]);
    let out = run(cmd, None);
    assert!(out.status.success(), "{}", describe(&out));
    let help = stdout(&out);
    for needle in [
        "eval",
        "search",
        "get",
        "create",
        "snapshot",
        "restore",
        "snapshots",
        "mcpServers",
        "--tier read-only",
        "read-write",
    ] {
        assert!(help.contains(needle), "{needle:?} missing from:\n{help}");
    }
}

/// A store written by either engine opens in the other.
#[test]
fn stores_are_shared_by_the_engines() {
    let store = fresh_store("shared");
    ok(&in_store("native", &store, &["eval", CREATE_TRIPLE], None));
    let out = in_store("wasm", &store, &["eval", "(triple 3)"], None);
    ok(&out);
    assert_eq!(stdout(&out), "9\n");
    ok(&in_store(
        "wasm",
        &store,
        &[
            "eval",
            "(arb:create \"(define (halve x) (/ x 2))\" '() \"halves\" \"function\" '(\"halve\"))",
        ],
        None,
    ));
    let out = in_store(
        "native",
        &store,
        &["eval", "(list (halve (triple 4)) (arb:current-version))"],
        None,
    );
    ok(&out);
    assert_eq!(stdout(&out), "(6 3)\n");
}

/// When the wasm instance traps and is replaced, the knowledge committed
/// before comes back from the store.
#[test]
fn wasm_restart_reloads_the_store() {
    let store = fresh_store("restart");
    let s = store.to_str().unwrap();
    let input = format!(
        "{CREATE_TRIPLE}\n(string-length (number->string (expt 3 20000000)))\n(triple 5)\n"
    );
    let out = arbores(
        "wasm",
        &["--store", s, "--timeout", "1", "repl"],
        Some(&input),
    );
    assert!(out.status.success(), "{}", describe(&out));
    assert!(stderr(&out).contains("timed out"), "{}", describe(&out));
    assert!(stdout(&out).ends_with("15\n"), "{}", describe(&out));
    println!(
        "wasm restart: the instance {} replaced",
        if stderr(&out).contains("restarted") {
            "was"
        } else {
            "was not"
        }
    );
}

#[test]
fn bad_tier_and_clock_are_reported() {
    let out = run(command("native", &["--tier", "root", "eval", "1"]), None);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("read-only"), "{}", describe(&out));
    let mut cmd = command("native", &["eval", "1"]);
    cmd.env("ARBORES_CLOCK", "teatime");
    let out = run(cmd, None);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        stderr(&out).starts_with("error: ARBORES_CLOCK: "),
        "{}",
        describe(&out)
    );
}

/// ARBORES_CLOCK fixes what (scheme time) reports and dates new versions.
#[test]
fn fixed_clock() {
    let store = fresh_store("clock");
    let mut cmd = command(
        "native",
        &[
            "--store",
            store.to_str().unwrap(),
            "eval",
            &format!("{CREATE_TRIPLE} (list (current-second) (cdr (assoc \"timestamp\" (car (arb:reflog)))))"),
        ],
    );
    cmd.env("ARBORES_CLOCK", "1753785000");
    let out = run(cmd, None);
    ok(&out);
    assert!(
        stdout(&out).ends_with("(1753785000.0 \"2025-07-29T10:30:00Z\")\n"),
        "{}",
        describe(&out)
    );
}

/// Copies `from` (a directory tree) to `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// `tests/fixtures/store-v1` is a store directory of the first format,
/// written by an earlier build whose tries placed keys by a hash of the id
/// (refs version 1): five versions, one a branch, `double` updated, `quad`
/// depending on it. A read-only session reads it as it is; the first
/// writer converts it into a store file at the same path (the directory
/// kept beside it), and its next commit writes the current layout.
fn a_store_of_the_first_layout_opens(engine: &str) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store-v1");
    let store = fresh_store(&format!("first-layout-{engine}"));
    copy_tree(&fixture, &store);
    assert_eq!(std::fs::read(store.join("refs")).unwrap()[8], 1);
    let history = "(list (arb:current-version) (arb:version-chain 5) \
                   (cdr (assoc \"description\" (arb:get-metadata 256 4))) \
                   (arb:version-successors 3))";
    let expected = "(5 (1 2 3 5) \"twice a number\" (4 5))\n";
    let before = files_of(&store);
    let out = in_store(
        engine,
        &store,
        &["--tier", "read-only", "eval", history],
        None,
    );
    ok(&out);
    assert_eq!(stdout(&out), expected);
    assert_eq!(files_of(&store), before, "a read-only session wrote");
    // Version 5 (current) is the branch without `quad`; version 4 has it.
    let out = in_store(
        engine,
        &store,
        &["eval", "(arb:switch-version 4) (quad 5)"],
        None,
    );
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        stderr(&out).starts_with("note: converted the store directory"),
        "{}",
        describe(&out)
    );
    assert_eq!(stdout(&out), "20\n");
    assert!(store.is_file(), "the directory was not converted");
    let kept = PathBuf::from(format!("{}.dir-store", store.display()));
    assert_eq!(
        files_of(&kept).len(),
        before.len(),
        "the directory was not kept"
    );
    let out = in_store(engine, &store, &["eval", history], None);
    ok(&out);
    assert_eq!(stdout(&out), expected.replacen("(5 (1", "(4 (1", 1));
}

/// A program that creates `count` nodes named `f-TAG-I`, printing each
/// reply's node id and version id on a line.
fn creating_program(tag: &str, count: usize) -> String {
    format!(
        "(do ((i 0 (+ i 1))) ((= i {count}))
           (let* ((name (string-append \"f-{tag}-\" (number->string i)))
                  (r (arb:create (string-append \"(define (\" name \") \" (number->string i) \")\")
                                 '() \"a numbered function\" \"function\" (list name))))
             (if (arb:error? r) (error \"arb:create failed\" r))
             (write (list (cdr (assoc \"s-expression-id\" r)) (cdr (assoc \"new-version-id\" r))))
             (newline)))"
    )
}

/// `writers` processes, each running `creating_program` with `each`
/// creates on the store at `store`, started together: what each printed,
/// as (node, version) pairs, once all have exited successfully.
fn race_writers(engine: &str, store: &Path, writers: usize, each: usize) -> Vec<Vec<(u64, u64)>> {
    if engine == "wasm" {
        require_guest();
    }
    let s = store.to_str().unwrap().to_string();
    let mut children: Vec<_> = (0..writers)
        .map(|_| {
            command(engine, &["--store", &s, "run", "-"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Every process is started before any is given its program.
    for (w, child) in children.iter_mut().enumerate() {
        let program = creating_program(&w.to_string(), each);
        let mut input = child.stdin.take().unwrap();
        input.write_all(program.as_bytes()).unwrap();
    }
    children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            ok(&out);
            let text = stdout(&out);
            assert_eq!(text.lines().count(), each, "{}", describe(&out));
            text.lines()
                .map(|line| {
                    let fields: Vec<u64> = line
                        .trim_matches(['(', ')'])
                        .split(' ')
                        .map(|f| f.parse().unwrap_or_else(|_| panic!("{line}")))
                        .collect();
                    (fields[0], fields[1])
                })
                .collect()
        })
        .collect()
}

/// Checks that every node in `created` is in the current version under its
/// id and name, that no node or version was given twice, and that the
/// versions are exactly 2 ..= N + 1.
fn all_created_are_stored(engine: &str, store: &Path, created: &[Vec<(u64, u64)>]) {
    let mut nodes = std::collections::BTreeSet::new();
    let mut versions = std::collections::BTreeSet::new();
    for &(node, version) in created.iter().flatten() {
        assert!(nodes.insert(node), "node {node} given twice");
        assert!(versions.insert(version), "version {version} given twice");
    }
    let total = nodes.len();
    let expected_versions: std::collections::BTreeSet<u64> = (2..2 + total as u64).collect();
    assert_eq!(versions, expected_versions);
    let check = format!(
        "(list (arb:current-version) (length (arb:search-by-symbol \"f-\" \"prefix\" 100000)) \
               (let loop ((ids '({})) (n 0)) \
                 (if (null? ids) n \
                     (let ((d (assoc \"description\" (arb:get-metadata (car ids))))) \
                       (loop (cdr ids) \
                             (if (and d (equal? (cdr d) \"a numbered function\")) (+ n 1) n))))))",
        nodes
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let out = in_store(engine, store, &["eval", &check], None);
    ok(&out);
    assert_eq!(stdout(&out), format!("({} {total} {total})\n", total + 1));
}

/// Several processes committing to one store at the same time lose
/// nothing: four writers of 200 commits each. Every node each created is
/// there, under the id its reply gave; no two commits made the same
/// version; `arbores log` shows every commit as the version its reply
/// named; `fsck` finds nothing wrong. (About 2.5 s on either engine.)
fn concurrent_writers_lose_nothing(engine: &str) {
    const WRITERS: usize = 4;
    const EACH: usize = 200;
    let store = fresh_store(&format!("concurrent-{engine}"));
    let created = race_writers(engine, &store, WRITERS, EACH);
    all_created_are_stored(engine, &store, &created);
    let out = in_store(engine, &store, &["log", "--json"], None);
    ok(&out);
    let log: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let versions = log["versions"].as_array().unwrap();
    assert_eq!(versions.len(), WRITERS * EACH + 1, "{log}");
    let described: std::collections::HashMap<u64, &str> = versions
        .iter()
        .map(|v| {
            (
                v["id"].as_u64().unwrap(),
                v["description"].as_str().unwrap(),
            )
        })
        .collect();
    for &(node, version) in created.iter().flatten() {
        let description = described
            .get(&version)
            .copied()
            .unwrap_or("(not in the log)");
        assert!(
            description.starts_with(&format!("create {node} ")),
            "v{version} should create node {node}: {description}"
        );
    }
    let out = in_store(engine, &store, &["fsck"], None);
    ok(&out);
    assert!(
        stdout(&out).contains("no problems found"),
        "{}",
        describe(&out)
    );
}

/// Writers racing to make the first commit of a store that does not exist
/// yet all succeed: creating the file, switching it to WAL and reading it
/// while another process does the same never fails (SQLite answers "busy"
/// in some of these moments without waiting, so the store waits and
/// retries itself). Many short trials, since the window is narrow.
fn first_writers_race_on_a_new_store(engine: &str) {
    let trials = if engine == "native" { 40 } else { 15 };
    for trial in 0..trials {
        let store = fresh_store(&format!("first-race-{engine}-{trial}"));
        let created = race_writers(engine, &store, 4, 3);
        all_created_are_stored(engine, &store, &created);
    }
}

/// `--json`: one JSON object with the value, the output, the error, the
/// versions before and after and the versions committed; `--json` before
/// or after the subcommand, never taken as Scheme source.
fn json_output(engine: &str) {
    let store = fresh_store(&format!("json-{engine}"));
    let s = store.to_str().unwrap();
    for args in [
        vec!["--store", s, "--json", "eval", "(display \"hi\") (+ 1 2)"],
        vec!["--store", s, "eval", "--json", "(display \"hi\") (+ 1 2)"],
    ] {
        let out = arbores(engine, &args, None);
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(v["value"], "3");
        assert_eq!(v["output"], "hi");
        assert_eq!(v["error"], serde_json::Value::Null);
        assert_eq!(v["exit"], 0);
    }
    let out = arbores(
        engine,
        &["--store", s, "--json", "eval", CREATE_TRIPLE],
        None,
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["version"]["before"], 1, "{v}");
    assert_eq!(v["version"]["after"], 2, "{v}");
    assert_eq!(v["committed"], serde_json::json!([2]), "{v}");
    let out = arbores(engine, &["--json", "--store", s, "eval", "(car 5)"], None);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["error"]["kind"], "runtime-error", "{v}");
    assert_eq!(v["error"]["line"], 1, "{v}");
    assert_eq!(v["exit"], 1, "{v}");
}

/// Each kind of failure has its own exit status (docs/API.md).
fn exit_statuses(engine: &str) {
    let out = arbores(engine, &["--fuel", "100000", "eval", SPIN], None);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let out = arbores(engine, &["--timeout", "0.3", "eval", SPIN], None);
    assert_eq!(out.status.code(), Some(5), "{}", describe(&out));
    let out = arbores(engine, &["eval", "(car 1)"], None);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let store = fresh_store(&format!("exit-store-{engine}"));
    std::fs::write(&store, "not a database at all, not at all\n".repeat(50)).unwrap();
    let out = in_store(engine, &store, &["--json", "eval", "(+ 1 2)"], None);
    assert_eq!(out.status.code(), Some(6), "{}", describe(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["error"]["kind"], "store-error", "{v}");
}

/// The store commands on a small history: log, show, diff, export and
/// import (into a new store, which then answers the same), fsck, gc.
#[test]
fn store_commands() {
    let store = fresh_store("commands");
    let eval = |src: &str| {
        let out = in_store("native", &store, &["eval", src], None);
        ok(&out);
    };
    eval(CREATE_TRIPLE);
    eval("(arb:update 256 '((\"code\" . \"(define (triple x) (+ x x x))\")))");
    let run = |store: &Path, args: &[&str]| {
        let out = in_store("native", store, args, None);
        assert!(out.status.success(), "{args:?}\n{}", describe(&out));
        stdout(&out)
    };
    let log = run(&store, &["log"]);
    assert!(log.starts_with("* v3 "), "{log}");
    assert!(log.contains(" v2 ") && log.contains(" v1 "), "{log}");
    let log: serde_json::Value = serde_json::from_str(&run(&store, &["log", "--json"])).unwrap();
    assert_eq!(log["current"], 3);
    assert_eq!(log["versions"].as_array().unwrap().len(), 3);

    let node = run(&store, &["show", "256"]);
    assert!(
        node.contains("triple") && node.contains("(+ x x x)"),
        "{node}"
    );
    let node: serde_json::Value =
        serde_json::from_str(&run(&store, &["--json", "show", "256"])).unwrap();
    assert_eq!(node["names"], serde_json::json!(["triple"]));
    assert_eq!(node["history"].as_array().unwrap().len(), 2, "{node}");
    let version = run(&store, &["show", "v2"]);
    assert!(version.contains("+ 256 triple"), "{version}");

    let diff = run(&store, &["diff", "v2", "v3"]);
    assert!(
        diff.contains("~ 256 triple") && diff.contains("(* 3 x)"),
        "{diff}"
    );
    let diff: serde_json::Value =
        serde_json::from_str(&run(&store, &["diff", "1", "3", "--json"])).unwrap();
    assert_eq!(diff["added"].as_array().unwrap().len(), 1, "{diff}");

    let check: serde_json::Value = serde_json::from_str(&run(&store, &["fsck", "--json"])).unwrap();
    assert_eq!(check["ok"], true, "{check}");

    let bundle = PathBuf::from(format!("{}.bundle", store.display()));
    run(&store, &["export", bundle.to_str().unwrap()]);
    let copy = fresh_store("commands-imported");
    run(&copy, &["import", bundle.to_str().unwrap()]);
    let out = in_store(
        "native",
        &copy,
        &["eval", "(list (arb:current-version) (triple 5))"],
        None,
    );
    ok(&out);
    assert_eq!(stdout(&out), "(3 15)\n");
    // Again into the same store: nothing to add.
    let out = in_store("native", &copy, &["import", bundle.to_str().unwrap()], None);
    ok(&out);
    assert!(
        stdout(&out).contains("already holds everything"),
        "{}",
        describe(&out)
    );
    // A damaged bundle is refused, naming what is wrong.
    let mut bytes = std::fs::read(&bundle).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    std::fs::write(&bundle, &bytes).unwrap();
    let other = fresh_store("commands-damaged");
    let out = in_store(
        "native",
        &other,
        &["import", bundle.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stderr(&out).contains("damaged"), "{}", describe(&out));
    assert!(!other.exists(), "a refused import wrote a store");

    // gc: a blob nothing reaches goes; what the history reaches stays.
    tamper_insert_orphan(&store);
    let gc = run(&store, &["gc", "--dry-run"]);
    assert!(gc.starts_with("would remove 1 blobs"), "{gc}");
    let gc = run(&store, &["gc"]);
    assert!(gc.starts_with("removed 1 blobs"), "{gc}");
    let out = in_store("native", &store, &["eval", "(triple 2)"], None);
    ok(&out);
    assert_eq!(stdout(&out), "6\n");

    // fsck names a damaged blob and fails with the store's status.
    let victim = blob_names(&store)[0].clone();
    tamper(
        &store,
        &format!(
            "UPDATE blobs SET data = CAST(x'00' || data AS BLOB) WHERE hash = x'{}'",
            hex(&victim)
        ),
    );
    let out = in_store("native", &store, &["fsck"], None);
    assert_eq!(out.status.code(), Some(6), "{}", describe(&out));
    assert!(stdout(&out).contains(&hex(&victim)), "{}", describe(&out));
}

/// A blob no version reaches, as a commit that lost a race leaves.
fn tamper_insert_orphan(store: &Path) {
    let conn = rusqlite::Connection::open(store).unwrap();
    let data = b"an orphan".to_vec();
    let name = arbores_core::repo::cas::hash_bytes(&data);
    conn.execute(
        "INSERT INTO blobs (hash, data) VALUES (?1, ?2)",
        (name.as_slice(), data.as_slice()),
    )
    .unwrap();
}

/// The refs record of a store, as stored.
fn stored_refs(store: &Path) -> Vec<u8> {
    let conn = rusqlite::Connection::open(store).unwrap();
    conn.query_row("SELECT data FROM refs WHERE name = 'head'", [], |r| {
        r.get(0)
    })
    .unwrap()
}

/// `fsck --repair`: a healthy store is left as it is; a lost refs record
/// is rebuilt from the history (same versions, same answers, new node ids
/// that do not collide); a damaged newest reflog entry is moved aside and
/// the history ends at the newest state that reads whole, saying so; a
/// page SQLite finds damaged gets a new file with what could be read and
/// the old one kept beside it. Each repaired store then passes `fsck`.
#[test]
fn fsck_repair() {
    let store = fresh_store("repair");
    for e in std::fs::read_dir(store.parent().unwrap())
        .unwrap()
        .flatten()
    {
        if e.file_name().to_string_lossy().starts_with("repair.") {
            let _ = std::fs::remove_file(e.path());
        }
    }
    let eval = |store: &Path, src: &str| {
        let out = in_store("native", store, &["eval", src], None);
        ok(&out);
        stdout(&out)
    };
    eval(&store, CREATE_TRIPLE);
    eval(
        &store,
        "(arb:update 256 '((\"code\" . \"(define (triple x) (+ x x x))\")))",
    );
    eval(&store, "(arb:create \"(define (nine) (triple 3))\" '((256 . \"triple\")) \"nine\" \"function\" '(\"nine\"))");
    let probe = "(list (arb:current-version) (triple 5) (nine))";
    assert_eq!(eval(&store, probe), "(4 15 9)\n");

    // Healthy: nothing to repair, nothing touched.
    let before = store_bytes(&store);
    let out = in_store("native", &store, &["fsck", "--repair"], None);
    ok(&out);
    assert!(
        stdout(&out).contains("nothing to repair"),
        "{}",
        describe(&out)
    );
    assert_eq!(store_bytes(&store), before, "a healthy store was changed");

    // The refs record lost: an error that points at the repair, then the
    // repair rebuilds it.
    tamper(&store, "DELETE FROM refs");
    let out = in_store("native", &store, &["eval", probe], None);
    assert_eq!(out.status.code(), Some(6), "{}", describe(&out));
    assert!(stderr(&out).contains("fsck --repair"), "{}", describe(&out));
    let out = in_store("native", &store, &["--json", "fsck", "--repair"], None);
    assert!(out.status.success(), "{}", describe(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["repaired"], true, "{report}");
    assert_eq!(report["check"]["ok"], true, "{report}");
    let said = report["actions"][0].as_str().unwrap();
    assert!(
        said.contains("refs record is missing") && said.contains("entry"),
        "{said}"
    );
    assert_eq!(eval(&store, probe), "(4 15 9)\n");
    // The id counter came back past every stored node.
    let made = eval(
        &store,
        "(arb:create \"(define ten 10)\" '() \"ten\" \"constant\" '(\"ten\"))",
    );
    assert!(
        made.contains("(\"s-expression-id\" . 258)") && made.contains("(\"new-version-id\" . 5)"),
        "{made}"
    );

    // The newest reflog entry damaged: moved aside, the history ends one
    // entry earlier, and the output says which entry was dropped.
    let refs = stored_refs(&store);
    let newest = refs[refs.len() - 64..refs.len() - 32].to_vec();
    tamper(
        &store,
        &format!(
            "UPDATE blobs SET data = CAST(data || x'00' AS BLOB) WHERE hash = x'{}'",
            hex(&newest)
        ),
    );
    let out = in_store("native", &store, &["fsck"], None);
    assert_eq!(out.status.code(), Some(6), "{}", describe(&out));
    let out = in_store("native", &store, &["fsck", "--repair"], None);
    assert!(out.status.success(), "{}", describe(&out));
    let text = stdout(&out);
    assert!(
        text.contains("moved 1 blobs") && text.contains("dropped from the history"),
        "{text}"
    );
    assert!(text.contains("no problems found"), "{text}");
    assert_eq!(eval(&store, probe), "(4 15 9)\n");
    assert_eq!(eval(&store, "(arb:search-by-symbol \"ten\")"), "()\n");
    let conn = rusqlite::Connection::open(&store).unwrap();
    let kept: i64 = conn
        .query_row("SELECT count(*) FROM damaged_blobs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(kept, 1);
    drop(conn);

    // A page SQLite finds damaged: a new file, the old one kept beside it.
    let out = in_store("native", &store, &["eval", "(arb:current-version)"], None);
    ok(&out);
    let conn = rusqlite::Connection::open(&store).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    let page: i64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    let pages: i64 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    let mut bytes = std::fs::read(&store).unwrap();
    // The b-tree page header of the last page: a page type no b-tree has.
    let last = ((pages - 1) * page) as usize;
    bytes[last] = 0x77;
    std::fs::write(&store, &bytes).unwrap();
    let out = in_store("native", &store, &["fsck"], None);
    assert_eq!(out.status.code(), Some(6), "{}", describe(&out));
    let out = in_store("native", &store, &["fsck", "--repair"], None);
    let text = stdout(&out);
    assert!(
        text.contains("SQLite found the file damaged") && text.contains(".damaged-"),
        "{}",
        describe(&out)
    );
    let kept: Vec<_> = std::fs::read_dir(store.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("repair.damaged-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    // Whatever could be read is there and consistent; fsck agrees.
    let out = in_store("native", &store, &["fsck"], None);
    assert_eq!(
        out.status.success(),
        text.contains("no problems found"),
        "{}",
        describe(&out)
    );
}

/// `export --since V` writes only what a store at V lacks; `import` adds
/// it to a store whose history it continues, refuses a store that went
/// its own way (changing nothing), and says what an empty store lacks.
#[test]
fn incremental_export_and_import() {
    let source = fresh_store("since-source");
    let eval = |store: &Path, src: &str| {
        let out = in_store("native", store, &["eval", src], None);
        ok(&out);
        stdout(&out)
    };
    let run = |store: &Path, args: &[&str]| {
        let out = in_store("native", store, args, None);
        assert!(out.status.success(), "{args:?}\n{}", describe(&out));
        stdout(&out)
    };
    eval(&source, CREATE_TRIPLE);
    let full = PathBuf::from(format!("{}.full.bundle", source.display()));
    run(&source, &["export", full.to_str().unwrap()]);
    let mirror = fresh_store("since-mirror");
    run(&mirror, &["import", full.to_str().unwrap()]);
    let diverged = fresh_store("since-diverged");
    run(&diverged, &["import", full.to_str().unwrap()]);
    eval(
        &diverged,
        "(arb:create \"(define one 1)\" '() \"one\" \"constant\" '(\"one\"))",
    );

    eval(
        &source,
        "(arb:update 256 '((\"code\" . \"(define (triple x) (+ x x x))\")))",
    );
    eval(&source, "(arb:create \"(define (nine) (triple 3))\" '((256 . \"triple\")) \"nine\" \"function\" '(\"nine\"))");
    let since = PathBuf::from(format!("{}.since.bundle", source.display()));
    let text = run(
        &source,
        &["export", since.to_str().unwrap(), "--since", "v2"],
    );
    assert!(text.contains("what a store at v2 lacks"), "{text}");
    let all = PathBuf::from(format!("{}.all.bundle", source.display()));
    run(&source, &["export", all.to_str().unwrap()]);
    let (since_len, all_len) = (
        std::fs::metadata(&since).unwrap().len(),
        std::fs::metadata(&all).unwrap().len(),
    );
    assert!(
        since_len < all_len,
        "incremental {since_len} bytes, full {all_len}"
    );

    run(&mirror, &["import", since.to_str().unwrap()]);
    let probe = "(list (arb:current-version) (triple 5) (nine))";
    assert_eq!(eval(&mirror, probe), "(4 15 9)\n");
    let check: serde_json::Value =
        serde_json::from_str(&run(&mirror, &["fsck", "--json"])).unwrap();
    assert_eq!(check["ok"], true, "{check}");

    let before = store_bytes(&diverged);
    let out = in_store(
        "native",
        &diverged,
        &["import", since.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(6), "{}", describe(&out));
    assert!(
        stderr(&out).contains("not a part of the bundle's"),
        "{}",
        describe(&out)
    );
    assert_eq!(
        store_bytes(&diverged),
        before,
        "a refused import changed the store"
    );

    let empty = fresh_store("since-empty");
    let out = in_store("native", &empty, &["import", since.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        stderr(&out).contains("export --since"),
        "{}",
        describe(&out)
    );
    assert_eq!(eval(&empty, "(arb:current-version)"), "1\n");

    let out = in_store(
        "native",
        &source,
        &["export", since.to_str().unwrap(), "--since", "v9"],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stderr(&out).contains("no version v9"), "{}", describe(&out));
}

#[path = "support/tiny_e5.rs"]
mod tiny_e5;

/// `--embedder e5` with a store: `(arb:semantic-search QUERY 3)`'s
/// descriptions, then the standard output and error.
fn e5_search(model: &Path, store: &Path, query: &str) -> Output {
    let mut cmd = command(
        "native",
        &[
            "--embedder",
            "e5",
            "--e5-model",
            model.to_str().unwrap(),
            "eval",
        ],
    );
    cmd.arg(format!(
        "(map (lambda (h) (cdr (assoc \"description\" h))) (arb:semantic-search {query:?} 3))"
    ));
    cmd.env("ARBORES_STORE", store);
    run(cmd, None)
}

const SORT_NODE: &str = r#"(arb:create "(define (merge-sort l) l)" '() "Sorts a list by merging sorted halves" "function" '("merge-sort"))"#;
const TREE_NODE: &str =
    r#"(arb:create "(define (tree-depth t) 0)" '() "二叉树的深度" "function" '("tree-depth"))"#;
const JSON_NODE: &str = r#"(arb:create "(define (read-json s) s)" '() "Parses a JSON document into nested lists" "function" '("read-json"))"#;

/// The plug-in path with a tiny model in the real model's layout, run by
/// the same engine: the store records which embedder made its index, and
/// an engine with another refuses it (saying so) and builds its own, so
/// vectors never mix. Needs no downloaded weights.
#[test]
fn embedder_e5_plugs_a_model_in_and_the_store_records_it() {
    let dir = scratch("embedder-e5-tiny");
    let model = dir.join("tiny.bin");
    std::fs::write(&model, tiny_e5::model(7)).unwrap();
    let store = fresh_store("embedder-e5-tiny");
    let with = |embedder: &[&str], expr: &str| {
        let mut cmd = command("native", embedder);
        cmd.args(["eval", expr]).env("ARBORES_STORE", &store);
        run(cmd, None)
    };
    let e5 = ["--embedder", "e5", "--e5-model", model.to_str().unwrap()];
    let out = with(&e5, &format!("(begin {SORT_NODE} {TREE_NODE})"));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let out = e5_search(&model, &store, "merge sorted halves");
    assert!(
        stdout(&out).starts_with("(\"Sorts a list by merging sorted halves\""),
        "{}",
        describe(&out)
    );
    assert!(!stderr(&out).contains("not used"), "{}", describe(&out));
    // The built-in embedder meets the e5 index: not used, built again, and
    // its commit stores its own.
    let out = with(
        &[],
        &format!("(begin (arb:semantic-search \"merge sorted halves\" 3) {JSON_NODE})"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let tiny_id = format!("made by the embedder e5-{}-", tiny_e5::model(7).len());
    assert!(
        stderr(&out).contains("the stored semantic index is not used")
            && stderr(&out).contains(&tiny_id),
        "{}",
        describe(&out)
    );
    // ...which e5 refuses in turn, and stores its own again.
    let out = with(
        &e5,
        r#"(begin (arb:semantic-search "merge sorted halves" 3) (arb:create "(define (f) 1)" '() "one" "function" '("f")))"#,
    );
    assert!(
        stderr(&out).contains("made by the embedder static-"),
        "{}",
        describe(&out)
    );
    let out = e5_search(&model, &store, "merge sorted halves");
    assert!(!stderr(&out).contains("not used"), "{}", describe(&out));
    assert!(
        stdout(&out).starts_with("(\"Sorts a list by merging sorted halves\""),
        "{}",
        describe(&out)
    );
    // Other weights are another embedder.
    let other = dir.join("other.bin");
    std::fs::write(&other, tiny_e5::model(8)).unwrap();
    let out = e5_search(&other, &store, "merge sorted halves");
    assert!(stderr(&out).contains(&tiny_id), "{}", describe(&out));
}

#[test]
fn embedder_e5_refusals_say_why() {
    let dir = scratch("embedder-e5-refusals");
    // The sandboxed engine cannot run it.
    let out = run(command("wasm", &["--embedder", "e5", "eval", "1"]), None);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        stderr(&out).contains("needs --engine native"),
        "{}",
        describe(&out)
    );
    // No model: where it was looked for and how to get it.
    let missing = dir.join("none.bin");
    let out = e5_search(&missing, &unique_store(), "x");
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        stderr(&out).contains("cannot read the e5 model")
            && stderr(&out).contains("scripts/fetch-e5"),
        "{}",
        describe(&out)
    );
    // A damaged model is refused before the engine reads it.
    let model = tiny_e5::model(7);
    for (name, bytes) in [
        ("cut.bin", &model[..model.len() - 100]),
        ("short.bin", &model[..30]),
        ("foreign.bin", &b"GGUF\x03\x00\x00\x00"[..]),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = e5_search(&path, &unique_store(), "x");
        assert_eq!(out.status.code(), Some(1), "{name}\n{}", describe(&out));
        assert!(
            stderr(&out).contains("not a model the e5 engine can run"),
            "{name}\n{}",
            describe(&out)
        );
    }
}

/// The real model (scripts/fetch-e5): a Chinese query finds an English
/// description and an English paraphrase a Chinese one, through the
/// command line. Skipped, saying so, without the weights.
#[test]
fn embedder_e5_real_model_finds_across_languages() {
    let model = std::env::var_os("ARBORES_E5_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/e5/e5-small-q4.bin")
        });
    if !model.is_file() {
        eprintln!(
            "skipped: no e5 model at {} (scripts/fetch-e5 fetches it; ARBORES_E5_MODEL names another)",
            model.display()
        );
        return;
    }
    let store = fresh_store("embedder-e5-real");
    let mut cmd = command(
        "native",
        &[
            "--embedder",
            "e5",
            "--e5-model",
            model.to_str().unwrap(),
            "eval",
        ],
    );
    cmd.arg(format!("(begin {SORT_NODE} {TREE_NODE} {JSON_NODE})"))
        .env("ARBORES_STORE", &store);
    let out = run(cmd, None);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    for (query, first) in [
        ("排序算法", "Sorts a list by merging sorted halves"),
        ("how deep is a binary tree", "二叉树的深度"),
        ("解析 JSON 文档", "Parses a JSON document into nested lists"),
    ] {
        let out = e5_search(&model, &store, query);
        assert!(
            stdout(&out).starts_with(&format!("({first:?}")),
            "{query}\n{}",
            describe(&out)
        );
        assert!(!stderr(&out).contains("not used"), "{}", describe(&out));
    }
}

// ---- the host-tool loop from a shell: `arbores start` and `resume` ----

both_engines!(
    start_suspends_and_resume_ends,
    start_without_tool_calls_is_eval,
    a_tool_error_is_raised_where_the_code_guards_it,
    one_dump_resumed_twice_is_a_fork,
    par_suspends_with_both_calls_and_resumes_step_by_step,
    damaged_or_foreign_suspensions_are_refused,
    answers_that_do_not_fit_are_refused,
    a_dump_key_file_seals_the_suspension,
);

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `arbores start --tool T ... --dump DUMP MORE... SOURCE`, the tools
/// separated by blanks.
fn start(engine: &str, tools: &str, dump: &Path, source: &str, more: &[&str]) -> Output {
    let mut args = vec!["start"];
    for tool in tools.split_whitespace() {
        args.extend(["--tool", tool]);
    }
    args.extend(["--dump", path_str(dump)]);
    args.extend(more);
    args.push(source);
    arbores(engine, &args, None)
}

/// `arbores resume FILE MORE...`.
fn resume(engine: &str, file: &Path, more: &[&str]) -> Output {
    let mut args = vec!["resume", path_str(file)];
    args.extend(more);
    arbores(engine, &args, None)
}

/// `out`, having checked its exit status.
fn exits(out: Output, status: i32) -> Output {
    assert_eq!(out.status.code(), Some(status), "{}", describe(&out));
    out
}

fn json_of(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not one JSON object ({e}):\n{}", describe(out)))
}

fn start_suspends_and_resume_ends(engine: &str) {
    let dir = scratch(&format!("suspend-basic-{engine}"));
    let dump = dir.join("s1.arbs");
    let program = r#"(define n 2) (display "asking ") (* n (length (search "arbores")))"#;
    let out = exits(start(engine, "search/query", &dump, program, &[]), 10);
    assert_eq!(stdout(&out), "asking \n(search \"arbores\")\n");
    assert!(
        stderr(&out).contains("waiting on 1 tool call"),
        "{}",
        describe(&out)
    );
    assert!(stderr(&out).contains(&format!("arbores resume {}", dump.display())));
    let bytes = std::fs::read(&dump).unwrap();
    assert!(bytes.starts_with(b"ARBSUSP\0"), "{} bytes", bytes.len());
    let out = exits(resume(engine, &dump, &["--value", "(a b c)"]), 0);
    assert_eq!(stdout(&out), "6\n");

    // The same with --json: the status, the calls with their JSON
    // arguments, the dump's file and size.
    let out = exits(
        start(engine, "search/query", &dump, program, &["--json"]),
        10,
    );
    let v = json_of(&out);
    assert_eq!(
        (&v["status"], &v["exit"]),
        (&"suspended".into(), &10.into())
    );
    assert_eq!(v["output"], "asking ");
    let call = serde_json::json!({"tool": "search", "args": ["\"arbores\""], "json": ["arbores"]});
    assert_eq!(v["calls"], serde_json::json!([call]));
    assert_eq!(v["dump"]["file"], path_str(&dump));
    assert_eq!(v["dump"]["bytes"], std::fs::metadata(&dump).unwrap().len());
    let answer = ["--json", "--json-value", r#"{"x": 1, "y": 2}"#];
    let v = json_of(&exits(resume(engine, &dump, &answer), 0));
    assert_eq!(
        (v["status"].as_str(), v["value"].as_str()),
        (Some("done"), Some("4"))
    );
    assert_eq!(v["error"], serde_json::Value::Null);
}

/// `--dump-key-file`: bytes sealed with one key load only with that key
/// (raw 32 bytes or 64 hex digits), on either engine, and the next
/// suspension is sealed with it too; a key file of another size is a usage
/// error before anything runs.
fn a_dump_key_file_seals_the_suspension(engine: &str) {
    let dir = scratch(&format!("suspend-key-{engine}"));
    let dump = dir.join("s.arbs");
    let raw = dir.join("raw.key");
    std::fs::write(&raw, [7u8; 32]).unwrap();
    let hex = dir.join("hex.key");
    std::fs::write(&hex, format!("{}\n", "07".repeat(32))).unwrap();
    let other = dir.join("other.key");
    std::fs::write(&other, [8u8; 32]).unwrap();
    let program = "(+ (ask 1) (ask 2))";
    let sealed = ["--dump-key-file", path_str(&raw)];
    exits(start(engine, "ask/n", &dump, program, &sealed), 10);
    let refused = exits(resume(engine, &dump, &["--value", "1"]), 11);
    assert!(
        stderr(&refused).contains("another dump key"),
        "{}",
        describe(&refused)
    );
    let wrong = ["--dump-key-file", path_str(&other), "--value", "1"];
    exits(resume(engine, &dump, &wrong), 11);
    // The same key written as hex opens it, and seals the next suspension.
    let next = dir.join("next.arbs");
    let hex_key = ["--dump-key-file", path_str(&hex), "--value", "40"];
    let mut args = hex_key.to_vec();
    args.extend(["--dump", path_str(&next)]);
    exits(resume(engine, &dump, &args), 10);
    exits(resume(engine, &next, &["--value", "2"]), 11);
    let out = exits(
        resume(
            engine,
            &next,
            &["--dump-key-file", path_str(&raw), "--value", "2"],
        ),
        0,
    );
    assert_eq!(stdout(&out), "42\n");
    // A key file that is neither form.
    let short = dir.join("short.key");
    std::fs::write(&short, b"abc").unwrap();
    let out = exits(
        resume(
            engine,
            &dump,
            &["--dump-key-file", path_str(&short), "--value", "1"],
        ),
        2,
    );
    assert!(
        stderr(&out).contains("expected 32 bytes or 64 hexadecimal digits, found 3 bytes"),
        "{}",
        describe(&out)
    );
}

/// Code that calls no tool ends as `eval` would: value, errors, exit
/// statuses; no dump is written.
fn start_without_tool_calls_is_eval(engine: &str) {
    let dir = scratch(&format!("suspend-eval-{engine}"));
    let dump = dir.join("never.arbs");
    let out = exits(start(engine, "", &dump, "(display \"hi\") (+ 1 2)", &[]), 0);
    assert_eq!(stdout(&out), "hi\n3\n");
    let out = exits(start(engine, "", &dump, "(car '())", &[]), 1);
    assert!(stderr(&out).contains("car"), "{}", describe(&out));
    exits(
        start(
            engine,
            "",
            &dump,
            "(let loop () (loop))",
            &["--fuel", "10000"],
        ),
        3,
    );
    assert!(!dump.exists(), "an evaluation that ended wrote a dump");
    let file = program_file(
        &format!("start-{engine}.scm"),
        "(define (f) (ask)) (list 'got (f))",
    );
    let mut args = vec![
        "--json",
        "start",
        "--tool",
        "ask",
        "--dump",
        path_str(&dump),
    ];
    args.extend(["--file", path_str(&file)]);
    let out = exits(arbores(engine, &args, None), 10);
    let call = serde_json::json!({"tool": "ask", "args": [], "json": []});
    assert_eq!(json_of(&out)["calls"][0], call);
    let out = exits(resume(engine, &dump, &["--value", "42"]), 0);
    assert_eq!(stdout(&out), "(got 42)\n");
    // A tool name the engine refuses is a wrong command line.
    let out = exits(start(engine, "bad.name!/q", &dump, "1", &[]), 2);
    assert!(
        stderr(&out).contains("--tool bad.name!"),
        "{}",
        describe(&out)
    );
}

fn a_tool_error_is_raised_where_the_code_guards_it(engine: &str) {
    let dir = scratch(&format!("suspend-error-{engine}"));
    let dump = dir.join("s.arbs");
    let program = r#"(guard (c ((error-object? c)
                         (list 'failed (error-object-message c) (error-object-irritants c))))
                  (search "x"))"#;
    exits(start(engine, "search/query", &dump, program, &[]), 10);
    let out = exits(resume(engine, &dump, &["--error", "quota exceeded"]), 0);
    assert_eq!(stdout(&out), "(failed \"quota exceeded\" (\"search\"))\n");
    // Unguarded, the error ends the evaluation: exit status 1.
    exits(start(engine, "search/query", &dump, "(search 1)", &[]), 10);
    let out = exits(
        resume(engine, &dump, &["--answers", r#"[{"error": "down"}]"#]),
        1,
    );
    assert!(stderr(&out).contains("down"), "{}", describe(&out));
}

fn one_dump_resumed_twice_is_a_fork(engine: &str) {
    let dir = scratch(&format!("suspend-fork-{engine}"));
    let dump = dir.join("fork.arbs");
    let program = "(define count 0) (define (bump!) (set! count (+ count 1)) count)
                   (bump!) (let* ((b (bump!)) (a (ask \"how many?\"))) (list b a count))";
    exits(start(engine, "ask/question", &dump, program, &[]), 10);
    let before = std::fs::read(&dump).unwrap();
    for (answer, expected) in [("one", "(2 one 2)\n"), ("\"two\"", "(2 \"two\" 2)\n")] {
        let out = exits(resume(engine, &dump, &["--value", answer]), 0);
        assert_eq!(stdout(&out), expected);
    }
    assert_eq!(
        std::fs::read(&dump).unwrap(),
        before,
        "resume left its file as it was"
    );
}

/// Two branches of a `par` wait at once: one suspension with both calls
/// in order; answers of mixed kinds go back in the order given; a branch
/// that calls again makes the next suspension, written over the same file.
fn par_suspends_with_both_calls_and_resumes_step_by_step(engine: &str) {
    let dir = scratch(&format!("suspend-par-{engine}"));
    let dump = dir.join("par.arbs");
    let tools = "search/query calc/expression";
    let program = r#"(par (search "a")
                         (+ 1 2)
                         (let ((x (calc "1+1"))) (list x (search "again"))))"#;
    let v = json_of(&exits(
        start(engine, tools, &dump, program, &["--json"]),
        10,
    ));
    let calls: Vec<_> = (v["calls"].as_array().unwrap().iter())
        .map(|c| (c["tool"].clone(), c["json"].clone()))
        .collect();
    let expected = [("search", ["a"]), ("calc", ["1+1"])]
        .map(|(tool, args)| (serde_json::json!(tool), serde_json::json!(args)));
    assert_eq!(calls, expected, "{v}");
    // Answers go by the order given, whatever their kinds: --json-value
    // answers the first call, --value the second.
    let answers = ["--json-value", r#"{"hits": [1, 2]}"#, "--value", "2"];
    let mut more = answers.to_vec();
    more.extend(["--dump", path_str(&dump)]);
    let out = exits(resume(engine, &dump, &more), 10);
    assert_eq!(stdout(&out), "(search \"again\")\n");
    let out = exits(
        resume(engine, &dump, &["--answers", r#"[{"value": "done"}]"#]),
        0,
    );
    assert_eq!(stdout(&out), "(((\"hits\" . #(1 2))) 3 (2 done))\n");
    // Too few answers for a par's two calls: refused, naming them.
    exits(
        start(
            engine,
            tools,
            &dump,
            "(par (search \"p\") (calc \"q\"))",
            &[],
        ),
        10,
    );
    let out = exits(resume(engine, &dump, &["--error", "x"]), 2);
    let named = "waits on 2 tool call(s), (search \"p\") (calc \"q\"); 1 answer(s) given";
    assert!(stderr(&out).contains(named), "{}", describe(&out));
    let both = ["--error", "first down", "--error", "second down"];
    let err = stderr(&exits(resume(engine, &dump, &both), 1));
    assert!(
        err.contains("first down") && !err.contains("second down"),
        "the first branch's error is raised: {err}"
    );
}

fn damaged_or_foreign_suspensions_are_refused(engine: &str) {
    let dir = scratch(&format!("suspend-damaged-{engine}"));
    let dump = dir.join("good.arbs");
    let next = dir.join("next.arbs");
    exits(start(engine, "ask", &dump, "(ask)", &[]), 10);
    let good = std::fs::read(&dump).unwrap();
    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x40;
    let cases: [(&str, Vec<u8>, &str); 4] = [
        ("flipped.arbs", flipped, "content hash does not match"),
        (
            "short.arbs",
            good[..good.len() - 3].to_vec(),
            "truncated or extended",
        ),
        (
            "text.arbs",
            b"(define x 1)\n".to_vec(),
            "not a suspended evaluation of Arbores",
        ),
        (
            "empty.arbs",
            Vec::new(),
            "not a suspended evaluation of Arbores",
        ),
    ];
    for (name, bytes, message) in cases {
        let file = dir.join(name);
        std::fs::write(&file, &bytes).unwrap();
        let out = exits(
            resume(engine, &file, &["--value", "1", "--dump", path_str(&next)]),
            11,
        );
        let err = stderr(&out);
        let named = format!("{}: ", file.display());
        assert!(
            err.contains(&named) && err.contains(message),
            "{name}\n{}",
            describe(&out)
        );
        assert!(
            !next.exists(),
            "{name}: a refused resume wrote {}",
            next.display()
        );
        let out = resume(engine, &file, &["--json", "--value", "1"]);
        assert_eq!(
            json_of(&out)["error"]["kind"],
            "suspension-error",
            "{}",
            describe(&out)
        );
    }
    // A file larger than the memory cap is not read whole.
    let large = dir.join("large.arbs");
    std::fs::write(&large, vec![0u8; (1 << 20) + 1]).unwrap();
    let out = exits(
        resume(engine, &large, &["--memory", "1M", "--value", "1"]),
        11,
    );
    assert!(
        stderr(&out).contains("the memory cap"),
        "{}",
        describe(&out)
    );
    let missing = dir.join("missing.arbs");
    let out = exits(resume(engine, &missing, &["--value", "1"]), 1);
    let named = format!("cannot read {}", missing.display());
    assert!(stderr(&out).contains(&named), "{}", describe(&out));
    let nowhere = dir.join("no/such/dir.arbs");
    let out = exits(
        resume(
            engine,
            &dump,
            &["--value", "1", "--dump", path_str(&nowhere)],
        ),
        2,
    );
    assert!(
        stderr(&out).contains("there is no directory"),
        "{}",
        describe(&out)
    );
}

fn answers_that_do_not_fit_are_refused(engine: &str) {
    let dir = scratch(&format!("suspend-answers-{engine}"));
    let dump = dir.join("s.arbs");
    let next = dir.join("next.arbs");
    exits(
        start(engine, "ask/q", &dump, "(list (ask 1) (ask 2))", &[]),
        10,
    );
    for (answers, message) in [
        (
            &[][..],
            "waits on 1 tool call(s), (ask 1); 0 answer(s) given",
        ),
        (&["--value", "1", "--value", "2"], "2 answer(s) given"),
        (&["--value", "(unclosed"], "answer 1 (--value (unclosed)"),
        (&["--json-value", "{nope"], "answer 1 (--json-value {nope)"),
        (
            &["--answers", r#"[{"value": "1", "error": "x"}]"#],
            "--answers: answer 1 has 2 members",
        ),
        (&["--answers", r#"[{"json": 1}]"#], r#"{"json": "1"}"#),
        (&["--answers", "{}"], "--answers: expected a JSON array"),
    ] {
        let mut more = vec!["--dump", path_str(&next)];
        more.extend(answers);
        let out = exits(resume(engine, &dump, &more), 2);
        assert!(
            stderr(&out).contains(message),
            "{answers:?}\n{}",
            describe(&out)
        );
        assert!(
            !next.exists(),
            "{answers:?}: a refused resume wrote {}",
            next.display()
        );
    }
    // The file is unchanged by all that: it still resumes.
    let out = exits(
        resume(engine, &dump, &["--value", "1", "--dump", path_str(&next)]),
        10,
    );
    assert_eq!(stdout(&out), "(ask 2)\n");
}

/// A dump made by either engine resumes in the other, in another process.
#[test]
fn a_suspension_made_by_one_engine_resumes_in_the_other() {
    let dir = scratch("suspend-cross");
    for (from, to) in [("native", "wasm"), ("wasm", "native")] {
        let dump = dir.join(format!("{from}.arbs"));
        let program = "(define base 40) (define (add r) (+ base r)) (add (search \"q\"))";
        exits(start(from, "search/query", &dump, program, &[]), 10);
        let out = exits(resume(to, &dump, &["--value", "2"]), 0);
        assert_eq!(stdout(&out), "42\n", "{from} -> {to}");
    }
}

#[test]
fn start_and_resume_explain_themselves() {
    for (sub, words) in [
        (
            "start",
            &["--tool", "--dump", "--budget", "10 suspended"][..],
        ),
        (
            "resume",
            &["--value", "--json-value", "--error", "--answers", "a fork"][..],
        ),
    ] {
        let out = exits(run(command("native", &[sub, "--help"]), None), 0);
        for word in words
            .iter()
            .chain(&["--engine", "--fuel", "--store", "--json"])
        {
            assert!(
                stdout(&out).contains(word),
                "{sub} --help lacks {word}\n{}",
                stdout(&out)
            );
        }
    }
}

/// docs/AGENTS.md, "The loop, from a shell": its worked session is what
/// the commands print. Each `$ COMMAND` runs in `sh` (standard error into
/// standard output, as a terminal shows both), in a directory of its own,
/// and must print the lines under it; `$ cat FILE` writes FILE with them.
#[test]
fn the_shell_loop_in_agents_md_is_what_arbores_prints() {
    require_guest();
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/AGENTS.md")).unwrap();
    let section = doc
        .split_once("## The loop, from a shell")
        .expect("the section")
        .1;
    let block = section
        .split_once("```text\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("a text block")
        .0;
    let dir = scratch("agents-md-shell-loop");
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let store = unique_store();
    let mut last_status = 0;
    let mut steps = block.split("$ ").filter(|s| !s.is_empty());
    let mut ran = 0;
    while let Some(step) = steps.next() {
        let (command, expected) = step.split_once('\n').unwrap();
        if let Some(file) = command.strip_prefix("cat ") {
            std::fs::write(dir.join(file), expected).unwrap();
            continue;
        }
        let printed = if command == "echo $?" {
            format!("{last_status}\n")
        } else {
            let mut cmd = Command::new("sh");
            cmd.arg("-c")
                .arg(format!("exec 2>&1; {command}"))
                .current_dir(&dir);
            cmd.env("PATH", &path)
                .env("ARBORES_STORE", &store)
                .env("ARBORES_CACHE_DIR", cache_dir())
                .env_remove("ARBORES_CLOCK");
            let out = run(cmd, None);
            last_status = out.status.code().unwrap_or(-1);
            ran += 1;
            stdout(&out)
        };
        assert_eq!(printed, expected, "$ {command}");
    }
    assert!(ran >= 4, "the block ran only {ran} commands");
}
