//! Suspended evaluations as bytes: dump, load in a fresh engine, resume,
//! fork, and refusal of foreign or damaged bytes.

mod support;

use arbores_core::{Engine, Run, Suspension, ToolAnswer};

use support::engine_with_tools as engine;

fn suspended(r: Run) -> Suspension {
    match r {
        Run::Suspended(s) => s,
        Run::Done(e) => panic!("expected a suspension, got {e:?}"),
    }
}

fn finish(e: &mut Engine, id: u64, answers: &[&str]) -> (Option<String>, String) {
    let answers = answers
        .iter()
        .map(|a| ToolAnswer::Value(a.to_string()))
        .collect();
    match e.resume(id, answers).unwrap() {
        Run::Done(ev) => {
            assert_eq!(ev.error, None);
            (ev.value, ev.output)
        }
        Run::Suspended(s) => panic!("still suspended: {s:?}"),
    }
}

/// A program with closures, a counter in a box, a record, a string port, a
/// bignum and a rational, a `guard` and a `dynamic-wind` around the call,
/// and forms after the one that suspends.
const PROGRAM: &str = r#"
(define-record-type point (make-point x y) point? (x point-x) (y point-y))
(define counter (let ((n 0)) (lambda () (set! n (+ n 1)) n)))
(define big (expt 2 100))
(define third (/ 1 3))
(define p (make-point 1 2))
(define log (open-output-string))
(counter)
(define answer
  (dynamic-wind
    (lambda () (write-string "in " log))
    (lambda ()
      (guard (c (#t (list 'failed (error-object-message c))))
        (let ((r (search "cats")))
          (list r (counter) (point-y p) (+ big 1) (* third 3)))))
    (lambda () (write-string "out" log))))
(display "after ")
(list answer (get-output-string log) (counter))
"#;

#[test]
fn a_dump_resumes_in_a_fresh_engine_like_the_original() {
    let mut a = engine();
    let s = suspended(a.start(PROGRAM));
    let bytes = a.dump(s.id).unwrap();
    let mut b = engine();
    let loaded = b.load_suspension(&bytes).unwrap();
    assert_eq!(loaded.calls, s.calls);
    let expected = Some("((\"A\" 2 2 1267650600228229401496703205377 1) \"in out\" 3)".to_string());
    assert_eq!(
        finish(&mut b, loaded.id, &["\"A\""]),
        (expected.clone(), "after ".into())
    );
    // The session came along: globals and their state.
    assert_eq!(
        b.eval("(list (counter) (point? p))").value.as_deref(),
        Some("(4 #t)")
    );
    // And the original still resumes, the same way.
    assert_eq!(
        finish(&mut a, s.id, &["\"A\""]),
        (expected, "after ".into())
    );
}

#[test]
fn one_dump_resumed_twice_with_different_answers_forks() {
    let mut a = engine();
    let s = suspended(a.start("(define base 10) (define r (calc \"x\")) (+ base r)"));
    let bytes = a.dump(s.id).unwrap();
    let mut b = engine();
    let mut c = engine();
    let sb = b.load_suspension(&bytes).unwrap();
    let sc = c.load_suspension(&bytes).unwrap();
    assert_eq!(finish(&mut b, sb.id, &["1"]).0.as_deref(), Some("11"));
    assert_eq!(finish(&mut c, sc.id, &["2"]).0.as_deref(), Some("12"));
    // Twice into the same engine too.
    let s1 = b.load_suspension(&bytes).unwrap();
    let s2 = b.load_suspension(&bytes).unwrap();
    assert_ne!(s1.id, s2.id);
    assert_eq!(finish(&mut b, s2.id, &["5"]).0.as_deref(), Some("15"));
    assert_eq!(finish(&mut b, s1.id, &["6"]).0.as_deref(), Some("16"));
}

#[test]
fn a_par_suspension_dumps_and_resumes_with_all_its_calls() {
    let mut a = engine();
    let src = "(par (list (search \"1\") (search \"2\")) (calc \"3\"))";
    let s = suspended(a.start(src));
    let mut b = engine();
    let l = b.load_suspension(&a.dump(s.id).unwrap()).unwrap();
    assert_eq!(l.calls, s.calls);
    let s2 = suspended(
        b.resume(
            l.id,
            vec![ToolAnswer::Value("a".into()), ToolAnswer::Value("c".into())],
        )
        .unwrap(),
    );
    // Dumped again mid-way, in the second engine, resumed in a third.
    let mut c = engine();
    let l2 = c.load_suspension(&b.dump(s2.id).unwrap()).unwrap();
    assert_eq!(
        finish(&mut c, l2.id, &["b"]).0.as_deref(),
        Some("((a b) c)")
    );
}

#[test]
fn foreign_and_damaged_bytes_are_refused_with_a_reason() {
    let mut a = engine();
    let s = suspended(a.start("(define k 1) (search \"x\")"));
    let bytes = a.dump(s.id).unwrap();
    let mut b = engine();
    let refuse = |b: &mut Engine, bytes: &[u8], why: &str| {
        let err = b.load_suspension(bytes).unwrap_err();
        assert!(err.contains(why), "{err}");
    };
    refuse(&mut b, b"", "not a suspended evaluation");
    refuse(
        &mut b,
        b"hello world, not a dump at all; definitely not",
        "not a suspended evaluation",
    );
    refuse(&mut b, &bytes[..bytes.len() - 1], "truncated or extended");
    let mut longer = bytes.clone();
    longer.push(0);
    refuse(&mut b, &longer, "truncated or extended");
    let mut format = bytes.clone();
    format[8] = 99;
    refuse(&mut b, &format, "format 99");
    // The format before sessions' syntax was carried.
    format[8] = 2;
    refuse(&mut b, &format, "in format 2; this engine reads format 3");
    // Every single flipped byte of the payload or the hash is caught.
    for i in 52..bytes.len() {
        let mut bad = bytes.clone();
        bad[i] ^= 0x40;
        let err = b.load_suspension(&bad).unwrap_err();
        assert!(err.contains("content hash"), "byte {i}: {err}");
    }
    // Another build (fingerprint) is refused even when the hash is right:
    // simulated by a key mismatch first, then a fingerprint change.
    let mut keyed = engine();
    keyed.set_dump_key([7; 32]);
    refuse(&mut keyed, &bytes, "another dump key");
    // Another build of the engine (another prelude or primitives) with a
    // sound hash: refused by its fingerprint.
    let mut foreign = bytes.clone();
    foreign[20] ^= 1;
    let n = foreign.len() - 32;
    let hash = blake3::keyed_hash(b"arbores suspended evaluation 001", &foreign[..n]);
    foreign[n..].copy_from_slice(hash.as_bytes());
    refuse(&mut b, &foreign, "another build of the engine");
    assert!(b.suspended().is_empty());
    // Nothing changed in the refusing engine.
    assert!(b.eval("k").error.is_some());
    assert!(b.load_suspension(&bytes).is_ok());
}

#[test]
fn what_a_dump_cannot_hold_is_refused_when_dumping() {
    let mut a = engine();
    // A macro made by a macro holds renamed identifiers.
    let s = suspended(a.start(
        "(define-syntax def-twice
           (syntax-rules () ((_ name) (define-syntax name (syntax-rules () ((_ e) (begin e e)))))))
         (def-twice twice)
         (search \"x\")",
    ));
    let err = a.dump(s.id).unwrap_err();
    assert!(
        err.contains("cannot hold (twice): the macro twice holds a renamed identifier"),
        "{err}"
    );
    assert!(a
        .dump(999)
        .unwrap_err()
        .contains("no suspended evaluation 999"));
}

/// The session's macros come along: one with a literal and its own
/// ellipsis, a hygienic one, and the prelude's `unless` defined again;
/// they expand in the forms still to run and in later evaluations, in
/// each engine the dump is loaded into.
#[test]
fn a_session_with_macros_dumps_and_resumes() {
    let program = r#"
      (define-syntax pick
        (syntax-rules ::: (first)
          ((_ first x y :::) x)
          ((_ x :::) (list x :::))))
      (define-syntax swap!
        (syntax-rules () ((_ a b) (let ((tmp a)) (set! a b) (set! b tmp)))))
      (define-syntax unless (syntax-rules () ((_ c e) (list 'mine c e))))
      (define-syntax dots (syntax-rules (...) ((_ ...) 'dots) ((_ x) 'one)))
      (define r (search "x"))
      (define tmp 1)
      (define y r)
      (swap! tmp y)
      (list (pick first tmp y) (pick 1 2) tmp y (unless #f 3) (dots ...) (dots 1))"#;
    let mut a = engine();
    let s = suspended(a.start(program));
    let bytes = a.dump(s.id).unwrap();
    for answer in ["\"A\"", "\"B\""] {
        let mut b = engine();
        let loaded = b.load_suspension(&bytes).unwrap();
        let expected = format!("({answer} (1 2) {answer} 1 (mine #f 3) dots one)");
        assert_eq!(finish(&mut b, loaded.id, &[answer]).0, Some(expected));
        assert_eq!(
            b.eval("(let ((tmp 5) (z 6)) (swap! tmp z) (list (pick first tmp z) (unless 1 2)))")
                .value
                .as_deref(),
            Some("(6 (mine 1 2))")
        );
    }
    // An engine without the dump has none of them.
    let mut c = engine();
    assert_eq!(c.eval("(unless #f 3)").value.as_deref(), Some("3"));
    assert!(c.eval("(pick 1 2)").error.is_some());
}

/// A session that imported a library of Arbores whose body defines a
/// macro (`define-cxrs` in `(srfi 116)`) dumps; the loading engine has
/// the library's procedures and macros without running its body again.
#[test]
fn a_session_that_imported_a_library_with_syntax_dumps_and_resumes() {
    let program = r#"
      (import (srfi 116))
      (define l (ilist 1 2 3))
      (define r (search "x"))
      (list r (icadr l) (ilength l))"#;
    let mut a = engine();
    let s = suspended(a.start(program));
    let bytes = a.dump(s.id).unwrap();
    let mut b = engine();
    let loaded = b.load_suspension(&bytes).unwrap();
    assert_eq!(
        finish(&mut b, loaded.id, &["7"]).0.as_deref(),
        Some("(7 2 3)")
    );
    let again = b.eval("(import (srfi 116)) (list (icaddr l) (ilist? l))");
    assert_eq!(again.error, None);
    assert_eq!(again.value.as_deref(), Some("(3 #t)"));
}

/// A library the program defined, whose exported macro uses a private
/// procedure: the loading engine expands the macro and imports the
/// library again.
#[test]
fn a_session_that_defined_a_library_with_syntax_dumps_and_resumes() {
    let program = r#"
      (define-library (my lib)
        (export double-it)
        (import (scheme base))
        (begin
          (define (helper x) (* 2 x))
          (define-syntax double-it (syntax-rules () ((_ e) (helper e))))))
      (import (my lib))
      (define r (search "x"))
      (double-it r)"#;
    let mut a = engine();
    let s = suspended(a.start(program));
    let bytes = a.dump(s.id).unwrap();
    let mut b = engine();
    let loaded = b.load_suspension(&bytes).unwrap();
    assert_eq!(finish(&mut b, loaded.id, &["21"]).0.as_deref(), Some("42"));
    let again = b.eval("(import (my lib)) (double-it 5)");
    assert_eq!(again.error, None);
    assert_eq!(again.value.as_deref(), Some("10"));
    assert!(b.eval("helper").error.is_some());
}

#[test]
fn a_small_program_dumps_small() {
    let mut a = engine();
    let s = suspended(
        a.start("(define (greet name) (string-append \"hello, \" name)) (greet (search \"name\"))"),
    );
    let bytes = a.dump(s.id).unwrap();
    assert!(bytes.len() < 10_000, "{} bytes", bytes.len());
}

/// Complex numbers, exact and inexact, held by the session and by the
/// continuation, come back equal.
#[test]
fn complex_numbers_survive_a_dump() {
    let mut a = engine();
    let s = suspended(a.start(
        "(define z 1/2+3i) (define w (make-polar 2. 1.)) (let ((r (search \"q\"))) (list r z (* w 1) -i))",
    ));
    let bytes = a.dump(s.id).unwrap();
    let mut b = engine();
    let loaded = b.load_suspension(&bytes).unwrap();
    let (value, _) = finish(&mut b, loaded.id, &["1"]);
    let (expected, _) = finish(&mut a, s.id, &["1"]);
    assert_eq!(value, expected);
    assert!(value.unwrap().starts_with("(1 1/2+3i "));
}

/// A dump made in a read-write session resumes with the rights of the
/// session that loads it: a read-only engine refuses the write after the
/// tool call.
#[test]
fn a_loaded_evaluation_has_the_rights_of_the_loading_session() {
    let mut a = engine();
    let s = suspended(a.start("(define r (search \"x\")) (arb:create 'k \"(define k 1)\" \"\")"));
    let bytes = a.dump(s.id).unwrap();
    let mut b = engine();
    b.set_tier(arbores_core::Tier::ReadOnly);
    let loaded = b.load_suspension(&bytes).unwrap();
    let refused = finish(&mut b, loaded.id, &["1"]).0.unwrap();
    assert!(refused.contains("permission-denied"), "{refused}");
    let mut c = engine();
    let loaded = c.load_suspension(&bytes).unwrap();
    let created = finish(&mut c, loaded.id, &["1"]).0.unwrap();
    assert!(!created.contains("permission-denied"), "{created}");
}

/// A hash table held by the session and by the continuation comes back
/// from a dump, indexed again, and the resumed program goes on using it.
#[test]
fn hash_tables_survive_a_dump() {
    let program = r#"
      (import (srfi 69))
      (define key (list 'k))
      (define t (make-hash-table eq?))
      (hash-table-set! t key 'identity)
      (define s (make-hash-table equal?))
      (hash-table-set! s "text" 1)
      (let ((r (search "q")))
        (hash-table-set! s r 2)
        (list (hash-table-ref/default t key #f) (hash-table-ref/default s "text" #f)
              (hash-table-ref/default s r #f) (hash-table-size s)))"#;
    let mut a = engine();
    let s = suspended(a.start(program));
    let bytes = a.dump(s.id).unwrap();
    let mut b = engine();
    // Objects first, so the loaded ones get other numbers.
    let _ = b.eval("(define junk (make-vector 300 (list 1)))");
    let loaded = b.load_suspension(&bytes).unwrap();
    let (value, _) = finish(&mut b, loaded.id, &["\"answer\""]);
    let (expected, _) = finish(&mut a, s.id, &["\"answer\""]);
    assert_eq!(value, expected);
    assert_eq!(value.as_deref(), Some("(identity 1 2 2)"));
}

/// The calls a loaded dump waits on are printed within the loading
/// engine's limits, as when the evaluation suspended: a value that shares
/// its parts (2^20 leaves, megabytes written out) is refused under a
/// 4 MB cap instead of being printed unbounded.
#[test]
fn a_dump_whose_calls_do_not_print_within_the_limits_is_refused() {
    let mut a = engine();
    let s = suspended(a.start(
        "(define (dbl x n) (if (= n 0) x (dbl (cons x x) (- n 1))))
         (search (dbl 'x 20))",
    ));
    assert!(s.calls[0].args[0].len() > 2_000_000);
    let bytes = a.dump(s.id).unwrap();
    let mut b = engine();
    b.set_limits(arbores_core::Limits {
        max_memory: 4 << 20,
        ..b.limits()
    });
    let err = b.load_suspension(&bytes).unwrap_err();
    assert!(
        err.contains("do not print within the limits (memory limit exceeded)"),
        "{err}"
    );
    assert!(b.suspended().is_empty());
    // Under limits it fits, the same text as where it suspended.
    b.set_limits(arbores_core::Limits::default());
    assert_eq!(b.load_suspension(&bytes).unwrap().calls, s.calls);
}

/// R7RS 6.12's environments are values: one alive across a suspension
/// (and one made of a bundled library) comes back in a fresh engine with
/// its bindings, and the top level's.
#[test]
fn environments_alive_at_a_suspension_dump_and_resume() {
    let mut a = engine();
    let s = suspended(a.start(
        "(define env (environment '(only (scheme base) + quote) '(prefix (scheme list) l:)))
         (define top (interaction-environment))
         (define r (search \"x\"))
         (list r (eval '(+ 1 (l:fold + 0 '(1 2))) env)
               (guard (e (#t (error-object-message e))) (eval 'car env))
               (eval '(car '(9)) top))",
    ));
    let bytes = a.dump(s.id).unwrap();
    let mut b = engine();
    let loaded = b.load_suspension(&bytes).unwrap();
    let expected = "(\"A\" 4 \"unbound variable: car (not in the environment)\" 9)";
    assert_eq!(
        finish(&mut b, loaded.id, &["\"A\""]),
        (Some(expected.to_string()), String::new())
    );
    assert_eq!(
        b.eval("(eval '(l:first '(5 6)) env)").value.as_deref(),
        Some("5")
    );
}

/// A suspension inside 200 nested guards (each entered with an escape
/// continuation, `%call/ec`: a frame of the VM's and an object in the
/// dump) and a `dynamic-wind`: loaded in a fresh engine, an answer
/// returns through every guard, and an error answer is caught by the
/// guard whose clause matches after the 149 inner ones re-raised it (each
/// leaving the `dynamic-wind` to test its clauses and entering it again
/// to re-raise).
#[test]
fn a_suspension_inside_nested_guards_resumes_through_them() {
    const NESTED: &str = r#"
(define log '())
(define (note x) (set! log (cons x log)))
(define (nest n)
  (if (= n 0)
      (dynamic-wind
        (lambda () (note 'in))
        (lambda () (search "deep"))
        (lambda () (note 'out)))
      (guard (e ((and (string? e) (= n 100)) (list 'caught-at n))
                ((and (error-object? e) (= n 150)) (list 'error-at n (error-object-message e))))
        (let ((v (nest (- n 1))))
          (if (pair? v) v (+ v 1))))))
(list (nest 200) (length log) (car log))
"#;
    let mut a = engine();
    let s = suspended(a.start(NESTED));
    let bytes = a.dump(s.id).unwrap();
    let mut b = engine();
    let l = b.load_suspension(&bytes).unwrap();
    assert_eq!(
        finish(&mut b, l.id, &["0"]).0.as_deref(),
        Some("(200 2 out)")
    );
    let mut c = engine();
    let l = c.load_suspension(&bytes).unwrap();
    let r = c
        .resume(l.id, vec![ToolAnswer::Error("no such page".into())])
        .unwrap();
    let Run::Done(ev) = r else {
        panic!("still suspended")
    };
    assert_eq!(ev.error, None);
    assert_eq!(
        ev.value.as_deref(),
        Some("((error-at 150 \"no such page\") 300 out)")
    );
}

/// A suspension in a handler of an error raised by the procedure
/// `%call/ec` called (a primitive, called from the frame `%call/ec`
/// made): the frames of its continuation fit their stack, so the dump
/// loads and resumes.
#[test]
fn a_suspension_in_a_handler_of_an_escape_s_procedure_dumps() {
    let mut a = engine();
    let s = suspended(a.start(
        "(call/cc (lambda (out)
           (with-exception-handler
             (lambda (e) (out (list 'answered (search \"h\"))))
             (lambda () (+ 1 (%call/ec car))))))",
    ));
    let bytes = a.dump(s.id).unwrap();
    let mut b = engine();
    let l = b.load_suspension(&bytes).unwrap();
    assert_eq!(
        finish(&mut b, l.id, &["\"x\""]).0.as_deref(),
        Some("(answered \"x\")")
    );
}
