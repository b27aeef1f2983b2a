//! A new engine starts from the thread's prepared image (`Engine::new`):
//! it must behave as one that compiled the prelude itself, and engines made
//! from one image must not share anything a session can change.

mod support;

use arbores_core::{Engine, Run, ToolAnswer};
use support::define_tool;

/// Makes about one collection's worth of garbage.
const CHURN: &str =
    "(let loop ((i 0)) (if (< i 5000) (begin (make-string 200 #\\x) (loop (+ i 1))))) 'done";

/// Uses prelude procedures whose code holds quoted lists (plan-check's
/// `'(seq par)`), which only the compiled code keeps alive.
const USES_PRELUDE_CONSTANTS: &str =
    "(list (plan-check '(plan (seq (calc \"1\") (par (calc \"2\") (calc \"3\"))))) (assq 'b '((a . 1) (b . 2))) (%calc \"2+3*4\"))";

#[test]
fn engines_from_one_image_collect_garbage_independently() {
    // Collector stamps are unique in the process: with a stamp per heap,
    // the two engines, alike, number their collections alike, and each
    // collection of b right after a's would take the shared prelude code
    // for traced already and free what it holds.
    let mut a = Engine::new();
    let mut b = Engine::new();
    for _ in 0..20 {
        assert_eq!(a.eval(CHURN).value.as_deref(), Some("done"));
        assert_eq!(b.eval(CHURN).value.as_deref(), Some("done"));
        for e in [&mut a, &mut b] {
            let r = e.eval(USES_PRELUDE_CONSTANTS);
            assert_eq!(r.error, None);
            assert_eq!(r.value.as_deref(), Some("(#t (b . 2) 14)"));
        }
    }
}

#[test]
fn a_session_changes_nothing_of_another_engine() {
    let mut a = Engine::new();
    define_tool(&mut a, "search", &["q"]);
    a.eval("(define car cdr) (set! list vector) (define mine 1)");
    assert_eq!(a.eval("(car '(1 2))").value.as_deref(), Some("(2)"));
    let mut b = Engine::new();
    assert_eq!(b.eval("(car '(1 2))").value.as_deref(), Some("1"));
    assert_eq!(b.eval("(list 1 2)").value.as_deref(), Some("(1 2)"));
    assert!(b.eval("mine").error.is_some());
    // The tool registry of plans is a prelude global a holds its own copy of.
    let r = b.eval("(plan-check '(plan (search \"x\")))");
    assert!(
        r.error.unwrap().message.contains("unknown tool"),
        "b sees a's tool"
    );
}

#[test]
fn a_prepared_engine_starts_as_one_that_compiled_the_prelude() {
    let mut prepared = Engine::new();
    let mut compiled = Engine::new_unprepared();
    for e in [&mut prepared, &mut compiled] {
        define_tool(e, "search", &["q"]);
    }
    for source in [
        "(length (%bound-names \"\"))",
        "(%bound-names \"string-u\")",
        USES_PRELUDE_CONSTANTS,
        "(import (scheme sort)) (list-sort < '(3 1 2))",
        "(guard (e (#t (error-object-message e))) (car 1))",
        "(call-with-current-continuation (lambda (k) (dynamic-wind (lambda () 1) (lambda () (k 'out)) (lambda () 2))))",
    ] {
        let p = prepared.eval(source);
        let c = compiled.eval(source);
        assert_eq!(p, c, "{source}");
    }
    // The same suspension dumps to the same bytes, and each engine's dump
    // resumes in the other.
    let program = "(define (greet n) (string-append \"hi \" n)) (greet (search \"name\"))";
    let (Run::Suspended(sp), Run::Suspended(sc)) =
        (prepared.start(program), compiled.start(program))
    else {
        panic!("both suspend")
    };
    let dp = prepared.dump(sp.id).unwrap();
    let dc = compiled.dump(sc.id).unwrap();
    assert_eq!(dp, dc);
    for (into, bytes) in [(&mut compiled, &dp), (&mut prepared, &dc)] {
        let s = into.load_suspension(bytes).unwrap();
        let Run::Done(ev) = into
            .resume(s.id, vec![ToolAnswer::Value("\"Ana\"".into())])
            .unwrap()
        else {
            panic!("done")
        };
        assert_eq!(ev.value.as_deref(), Some("\"hi Ana\""));
    }
}

#[test]
fn each_thread_prepares_its_own_image() {
    let t = std::thread::spawn(|| {
        let mut e = Engine::new();
        e.eval(CHURN);
        e.eval(USES_PRELUDE_CONSTANTS).value
    });
    let mut e = Engine::new();
    e.eval(CHURN);
    assert_eq!(e.eval(USES_PRELUDE_CONSTANTS).value, t.join().unwrap());
}
