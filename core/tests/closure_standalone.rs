//! `arb:closure` returns source text that runs standalone in any R7RS
//! Scheme: each case stores some nodes, asks for a closure, and runs it in a
//! fresh Arbores engine (no knowledge base) and, when `guile` is installed,
//! in `guile --r7rs`; both must print what the knowledge base itself gives.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use arbores_core::{Engine, Tier};

fn engine() -> Engine {
    let mut e = Engine::new();
    e.set_tier(Tier::System);
    e
}

fn eval_ok(e: &mut Engine, src: &str) -> String {
    let r = e.eval(src);
    assert!(r.error.is_none(), "{src}\n=> {:?}", r.error);
    r.output
}

fn guile_available() -> bool {
    Command::new("guile")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn guile(program: &str) -> String {
    // One file per call: the tests run in parallel threads of one process.
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let file =
        std::env::temp_dir().join(format!("arbores-closure-{}-{call}.scm", std::process::id()));
    std::fs::write(&file, program).expect("write program");
    let out = Command::new("guile")
        .args(["--r7rs", "--no-auto-compile", "-s"])
        .arg(&file)
        .env("GUILE_AUTO_COMPILE", "0")
        .output();
    let _ = std::fs::remove_file(&file);
    let out = out.expect("run guile");
    assert!(
        out.status.success(),
        "guile failed on:\n{program}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Stores `setup`, takes the closure of `roots`, and checks that `use_it`
/// prints the same in the knowledge base, in a fresh engine given only the
/// closure, and in guile. Returns the closure text.
fn check(setup: &str, roots: &str, use_it: &str) -> String {
    let mut k = engine();
    eval_ok(&mut k, setup);
    let expected = eval_ok(&mut k, use_it);
    assert!(!expected.is_empty());
    let text = eval_ok(&mut k, &format!("(display (arb:closure '{roots}))"));
    let program = format!("{text}\n{use_it}\n");
    let mut fresh = engine();
    assert_eq!(eval_ok(&mut fresh, &program), expected, "closure:\n{text}");
    if guile_available() {
        assert_eq!(guile(&program), expected, "closure in guile:\n{text}");
    } else {
        eprintln!("guile is not installed: closures checked in Arbores only");
    }
    text
}

#[test]
fn names_that_line_up_give_the_code_verbatim() {
    let text = check(
        r#"(arb:create "(define (partition-by p lst)
  (let loop ((l lst) (yes '()) (no '()))
    (cond ((null? l) (cons (reverse yes) (reverse no)))
          ((p (car l)) (loop (cdr l) (cons (car l) yes) no))
          (else (loop (cdr l) yes (cons (car l) no))))))" '() "split" "function" '("partition-by"))
(arb:create "(define (quicksort lst)
  (if (null? lst) '()
      (let* ((p (car lst)) (parts (partition-by (lambda (x) (< x p)) (cdr lst))))
        (append (quicksort (car parts)) (list p) (quicksort (cdr parts))))))"
  '((256 . "partition-by")) "快速排序实现" "function" '("quicksort" "qsort"))"#,
        "(257)",
        "(write (list (quicksort '(3 1 4 1 5 9 2 6)) (qsort '(2 1)))) (newline)",
    );
    assert!(text.starts_with("(define (partition-by p lst)"), "{text}");
    assert!(!text.contains("arb:node-"), "{text}");
    // Dependencies first, each once.
    assert_eq!(text.matches("(define (partition-by").count(), 1);
    assert!(text.find("partition-by p lst").unwrap() < text.find("(define (quicksort").unwrap());
}

#[test]
fn local_names_that_differ_are_bound_to_their_nodes() {
    let text = check(
        r#"(arb:create "(define (helper x) (* x 10))" '() "times ten" "function" '("helper"))
(arb:create "(define (helper x) (+ x 1))" '() "plus one" "function" '("helper-too"))
(arb:create "(define (both x) (list (ten x) (inc x)))"
  '((256 . "ten") (257 . "inc")) "uses two helpers of the same name" "function" '("both"))"#,
        "(258)",
        "(write (both 5)) (newline)",
    );
    assert!(text.contains("(define arb:node-256"), "{text}");
    assert!(text.contains("(ten arb:node-256)"), "{text}");
}

#[test]
fn a_diamond_of_dependencies_appears_once_each() {
    let text = check(
        r#"(arb:create "(define (base x) (* x x))" '() "square" "function" '("base"))
(arb:create "(define (left x) (+ (base x) 1))" '((256 . "base")) "left" "function" '("left"))
(arb:create "(define (right x) (- (base x) 1))" '((256 . "base")) "right" "function" '("right"))
(arb:create "(define (top x) (list (left x) (right x)))" '((257 . "left") (258 . "right")) "top" "function" '("top"))"#,
        "(259 257)",
        "(write (list (top 3) (left 2))) (newline)",
    );
    assert_eq!(text.matches("(define (base x)").count(), 1, "{text}");
}

#[test]
fn expressions_and_constants_become_values() {
    check(
        r#"(arb:create "(lambda (x) (* x x))" '() "squares" "function" '("square-it"))
(arb:create "(define limit 100)" '() "a limit" "constant" '("limit"))
(arb:create "(define (capped x) (min limit (sq x)))" '((256 . "sq") (257 . "limit")) "capped square" "function" '("capped"))"#,
        "(258 256)",
        "(write (list (capped 5) (capped 50) (square-it 3))) (newline)",
    );
}

#[test]
fn builtins_and_cycles_are_refused_with_a_reason() {
    let mut k = engine();
    eval_ok(
        &mut k,
        r#"(arb:create "(define (a x) x)" '() "a" "function" '("a"))
(arb:create "(define (b x) (a x))" '((256 . "a")) "b" "function" '("b"))
(arb:update 256 '(("dependencies" . ((257 . "b")))))
(arb:create "(define (c x) x)" '((13 . "make")) "c" "function" '("c"))"#,
    );
    let kind =
        |k: &mut Engine, src: &str| eval_ok(k, &format!("(display (cdr (assoc \"error\" {src})))"));
    assert_eq!(kind(&mut k, "(arb:closure '(257))"), "dependency-cycle");
    assert_eq!(kind(&mut k, "(arb:closure '(258))"), "not-standalone");
}
