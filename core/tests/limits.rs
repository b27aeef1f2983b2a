//! Every evaluation is bounded: steps, memory, and a host interrupt. Running
//! out is a clean error naming the limit, and the engine stays usable.

use std::cell::Cell;
use std::rc::Rc;

use arbores_core::{Engine, ErrorKind, Limits};

fn engine(steps: u64, memory: usize) -> Engine {
    let mut e = Engine::new();
    e.set_limits(Limits {
        max_steps: steps,
        max_memory: memory,
    });
    e
}

#[test]
fn infinite_loop_ends_at_the_step_budget() {
    let mut e = engine(100_000, 64 << 20);
    assert!(e.eval("(define x 1)").error.is_none());
    let r = e.eval("(let loop () (loop))");
    let err = r.error.expect("an error");
    assert_eq!(err.kind, ErrorKind::StepLimit, "{err:?}");
    assert!(err.message.contains("step limit"), "{}", err.message);
    assert_eq!(e.eval("(+ x 2)").value.as_deref(), Some("3"));
}

#[test]
fn unbounded_allocation_ends_at_the_memory_cap() {
    let mut e = engine(u64::MAX, 32 << 20);
    let r = e.eval("(let loop ((l '())) (loop (cons 1 l)))");
    let err = r.error.expect("an error");
    assert_eq!(err.kind, ErrorKind::MemoryLimit, "{err:?}");
    assert!(err.message.contains("memory limit"), "{}", err.message);
    assert_eq!(e.eval("(+ 1 2)").value.as_deref(), Some("3"));
}

#[test]
fn huge_single_allocations_fail_cleanly() {
    let mut e = engine(u64::MAX, 32 << 20);
    for src in [
        "(make-vector 1000000000000)",
        "(make-string 100000000)",
        "(make-list 100000000)",
        "(expt 7 (expt 10 12))",
    ] {
        let err = e
            .eval(src)
            .error
            .unwrap_or_else(|| panic!("{src} should fail"));
        assert_eq!(err.kind, ErrorKind::MemoryLimit, "{src}: {err:?}");
    }
    assert_eq!(
        e.eval("(vector-length (make-vector 10 0))")
            .value
            .as_deref(),
        Some("10")
    );
}

#[test]
fn deep_recursion_is_bounded_by_memory_not_the_rust_stack() {
    let mut e = engine(u64::MAX, 512 << 20);
    let r = e.eval("(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1))))) (count 1000000)");
    assert_eq!(r.value.as_deref(), Some("1000000"), "{:?}", r.error);
    let mut small = engine(u64::MAX, 16 << 20);
    let err = small
        .eval("(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1))))) (count 10000000)")
        .error
        .expect("error");
    assert_eq!(err.kind, ErrorKind::MemoryLimit);
}

#[test]
fn interrupt_check_stops_an_evaluation() {
    let mut e = engine(u64::MAX, 64 << 20);
    let polls = Rc::new(Cell::new(0u32));
    let p = polls.clone();
    e.set_interrupt_check(Some(Box::new(move || {
        p.set(p.get() + 1);
        p.get() > 3
    })));
    let err = e.eval("(let loop () (loop))").error.expect("error");
    assert_eq!(err.kind, ErrorKind::Interrupted);
    e.set_interrupt_check(None);
    assert_eq!(e.eval("(* 6 7)").value.as_deref(), Some("42"));
}

#[test]
fn cyclic_garbage_is_reclaimed() {
    // 10^5 iterations of closures that refer to themselves: the heap stays small.
    let mut e = engine(u64::MAX, 16 << 20);
    let r = e.eval(
        "(define (make) (letrec ((f (lambda (n) (if (= n 0) f (f (- n 1)))))) f))
         (let loop ((i 0)) (if (< i 300000) (begin (make) (let ((l (list 1 2))) (set-cdr! (cdr l) l)) (loop (+ i 1))) 'done))",
    );
    assert_eq!(r.value.as_deref(), Some("done"), "{:?}", r.error);
}

#[test]
fn a_limit_undoes_the_whole_evaluation() {
    for (steps, memory, tail) in [
        (1_000_000, 64 << 20, "(let loop () (loop))"),
        (u64::MAX, 32 << 20, "(let loop ((l '())) (loop (cons 1 l)))"),
    ] {
        let mut e = engine(steps, memory);
        let setup = e.eval(
            "(define x 1) (define v (vector 1 2 3)) (define p (list 'a 'b))
             (define c (let ((n 0)) (lambda () (set! n (+ n 1)) n)))",
        );
        assert!(setup.error.is_none(), "{:?}", setup.error);
        let src = format!(
            "(set! x 99) (vector-set! v 0 'changed) (set-car! p 'z) (c) (c) (define y 5)
             (define-syntax foo (syntax-rules () ((_) 1))) (define (car x) 'mine) {tail}"
        );
        let r = e.eval(&src);
        let kind = r.error.expect("a limit error").kind;
        assert!(
            matches!(kind, ErrorKind::StepLimit | ErrorKind::MemoryLimit),
            "{kind:?}"
        );
        let after = e.eval("(list x v p (c) (car '(1 2)))");
        assert_eq!(
            after.value.as_deref(),
            Some("(1 #(1 2 3) (a b) 1 1)"),
            "{:?}",
            after.error
        );
        let y = e.eval("y").error.expect("y is gone");
        assert!(y.message.contains("unbound variable: y"), "{}", y.message);
        let foo = e.eval("(foo)").error.expect("foo is gone");
        assert!(
            foo.message.contains("unbound variable: foo"),
            "{}",
            foo.message
        );
    }
}

#[test]
fn an_ordinary_error_keeps_what_ran_before_it() {
    let mut e = engine(u64::MAX, 64 << 20);
    let r = e.eval("(define kept 1) (car '())");
    assert!(r.error.is_some());
    assert_eq!(e.eval("kept").value.as_deref(), Some("1"));
}

#[test]
fn long_comparisons_walks_and_writes_are_charged_to_the_budget() {
    // Each loop is a handful of calls, but each call works through 300,000
    // pairs: without charging that work, the budget would last for
    // minutes of it.
    for body in [
        "(equal? a b)",
        "(member 'y a)",
        "(write a (open-output-string))",
        "(display b (open-output-string))",
    ] {
        let mut e = engine(3_000_000, 256 << 20);
        let setup = e.eval("(define a (make-list 300000 'x)) (define b (list-copy a))");
        assert!(setup.error.is_none(), "{:?}", setup.error);
        let r = e.eval(&format!("(let loop () {body} (loop))"));
        let err = r.error.unwrap_or_else(|| panic!("{body} should end"));
        assert_eq!(err.kind, ErrorKind::StepLimit, "{body}: {err:?}");
        assert_eq!(e.eval("(+ 1 2)").value.as_deref(), Some("3"));
    }
}

#[test]
fn a_sort_with_the_programs_order_honours_every_limit() {
    let setup = "(import (scheme sort))
                 (define v (let loop ((i 0) (acc '()))
                             (if (= i 20000) (list->vector acc) (loop (+ i 1) (cons (modulo (* i 7919) 10007) acc)))))";
    // Steps: each call of the order counts; the sort ends at the budget.
    let mut e = engine(200_000, 256 << 20);
    assert!(e.eval(setup).error.is_none());
    let r = e.eval("(vector-sort (lambda (a b) (< a b)) v)");
    assert_eq!(r.error.expect("an error").kind, ErrorKind::StepLimit);
    assert_eq!(e.eval("(vector-ref v 0)").value.as_deref(), Some("1299"));
    // Memory: an order that allocates without end stops at the cap.
    let mut e = engine(u64::MAX, 48 << 20);
    assert!(e.eval(setup).error.is_none());
    let r = e.eval("(define keep '()) (vector-sort (lambda (a b) (set! keep (cons (make-vector 100) keep)) (< a b)) v)");
    assert_eq!(r.error.expect("an error").kind, ErrorKind::MemoryLimit);
    assert_eq!(e.eval("(+ 1 2)").value.as_deref(), Some("3"));
    // Time: the host's interrupt check stops an order that loops.
    let mut e = engine(u64::MAX, 256 << 20);
    assert!(e.eval(setup).error.is_none());
    let polls = Rc::new(Cell::new(0u32));
    let p = polls.clone();
    e.set_interrupt_check(Some(Box::new(move || {
        p.set(p.get() + 1);
        p.get() > 50
    })));
    let r = e.eval("(list-sort (lambda (a b) (let loop () (loop))) (vector->list v))");
    assert_eq!(r.error.expect("an error").kind, ErrorKind::Interrupted);
}

#[test]
fn building_and_copying_long_lists_vectors_and_strings_is_charged() {
    // One call each, working through three million elements: charged as
    // they go, each ends at a budget far below that work.
    let mut e = engine(u64::MAX, 1 << 30);
    let setup = e.eval(
        "(define l (make-list 3000000 'x)) (define v (make-vector 3000000 0)) (define s (make-string 3000000 #\\a))",
    );
    assert!(setup.error.is_none(), "{:?}", setup.error);
    e.set_limits(Limits {
        max_steps: 100_000,
        max_memory: 1 << 30,
    });
    for body in [
        "(make-list 3000000 'x)",
        "(make-vector 3000000 0)",
        "(vector->list v)",
        "(list->vector l)",
        "(string->list s)",
        "(string->vector s)",
        "(list->string (vector->list (make-vector 3000000 #\\a)))",
        "(vector-copy v)",
        "(vector-append v v)",
        "(vector-fill! v 1)",
        "(list-copy l)",
        "(reverse l)",
        "(append l '())",
        "(length l)",
        "(list? l)",
        "(list-tail l 2999999)",
        "(apply list l)",
    ] {
        let r = e.eval(&format!("(begin {body} #t)"));
        let err = r.error.unwrap_or_else(|| panic!("{body} should end"));
        assert_eq!(err.kind, ErrorKind::StepLimit, "{body}: {err:?}");
        assert_eq!(e.eval("(length '(1 2))").value.as_deref(), Some("2"));
    }
}

#[test]
fn long_cyclic_and_shared_structures_are_written_with_their_labels() {
    let mut e = engine(u64::MAX, 512 << 20);
    // Past a few thousand pairs the search for labels keeps one byte per
    // heap slot instead of a map: the labels must not change.
    let r = e.eval(
        "(define l (make-list 20000 'x)) (set-cdr! (list-tail l 19999) l)
         (define p (open-output-string)) (write l p)
         (define t (get-output-string p))
         (list (substring t 0 8) (substring t (- (string-length t) 9) (string-length t)) (string-length t))",
    );
    assert_eq!(
        r.value.as_deref(),
        Some("(\"#0=(x x \" \" x . #0#)\" 40010)"),
        "{:?}",
        r.error
    );
    let r = e.eval(
        "(define x (list 1))
         (define m (let loop ((i 0) (acc '())) (if (= i 10000) acc (loop (+ i 1) (cons x acc)))))
         (define p (open-output-string)) (write-shared m p)
         (define t (get-output-string p))
         (list (substring t 0 16) (string-length t))",
    );
    assert_eq!(
        r.value.as_deref(),
        Some("(\"(#0=(1) #0# #0# \" 40004)"),
        "{:?}",
        r.error
    );
    // A list whose elements are lists, a hundred thousand deep through
    // their cars, and no label.
    let r = e.eval(
        "(define d (let loop ((i 0) (acc '())) (if (= i 100000) acc (loop (+ i 1) (list acc i)))))
         (define p (open-output-string)) (write d p)
         (string-length (get-output-string p))",
    );
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(
        e.eval("(memv #\\# (string->list (get-output-string p)))")
            .value
            .as_deref(),
        Some("#f")
    );
}

/// Work a primitive charged and not yet counted as steps (less than a
/// poll's worth: about 32,000 steps) belongs to its own evaluation: the
/// next one starts with none.
#[test]
fn an_evaluation_does_not_inherit_the_work_charged_before_it() {
    let mut e = engine(1_000_000, 1 << 30);
    // 60,000 pairs built: 960,000 units, just under a poll's worth.
    let first = e.eval("(begin (make-list 60000) 1)");
    assert_eq!(first.error.map(|e| e.message), None);
    // 10,000 pairs: 160,000 units (5,000 steps), well within 20,000
    // steps; with the 960,000 left over, 35,000 steps.
    e.set_limits(Limits {
        max_steps: 20_000,
        max_memory: 1 << 30,
    });
    let second = e.eval("(begin (make-list 10000) 2)");
    assert_eq!(second.error.map(|e| e.message), None);
    assert_eq!(second.value.as_deref(), Some("2"));
}
