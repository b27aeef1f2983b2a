//! The VM's own cases, beside it: what a program cannot observe of itself
//! — the frames a backtrace shows (tail calls leave none), how values are
//! named in error messages, what a limit leaves of the session, and that
//! depth costs heap, not the Rust stack.

use crate::{Engine, ErrorKind, EvalError, Limits};

fn error_of(engine: &mut Engine, source: &str) -> EvalError {
    let ev = engine.eval(source);
    match ev.error {
        Some(e) => e,
        None => panic!("{source:?} should fail, but gave {:?}", ev.value),
    }
}

#[test]
fn a_backtrace_shows_each_waiting_call_innermost_first() {
    let mut engine = Engine::new();
    let e = error_of(
        &mut engine,
        "(define (f x) (car x))\n(define (g y) (+ 1 (f y)))\n(g 5)",
    );
    assert_eq!(e.message, "car: expected a pair, got 5");
    assert_eq!(e.backtrace, ["f (1:15)", "g (2:20)", "top level (3:1)"]);
}

#[test]
fn a_tail_call_leaves_no_frame() {
    let mut engine = Engine::new();
    let e = error_of(
        &mut engine,
        "(define (f x) (car x))\n(define (h y) (f y))\n(h 5)",
    );
    assert_eq!(e.backtrace, ["f (1:15)", "top level (3:1)"]);
    // A loop of a million tail calls runs in constant space.
    let ev = engine.eval("(let loop ((i 0)) (if (< i 1000000) (loop (+ i 1)) i))");
    assert_eq!(ev.value.as_deref(), Some("1000000"));
}

#[test]
fn deep_recursion_costs_heap_not_the_rust_stack() {
    let mut engine = Engine::new();
    let ev =
        engine.eval("(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1)))))\n(count 1000000)");
    assert_eq!(ev.error.map(|e| e.message), None);
    assert_eq!(ev.value.as_deref(), Some("1000000"));
}

#[test]
fn an_error_with_an_empty_message_still_says_what_happened() {
    let mut engine = Engine::new();
    for source in ["(error \"\")", "(error \"  \")"] {
        let e = error_of(&mut engine, source);
        assert_eq!(
            e.message, "an error was raised with an empty message",
            "{source}"
        );
        assert_eq!(e.backtrace, ["top level (1:1)"]);
    }
    assert_eq!(engine.eval("42").value.as_deref(), Some("42"));
}

#[test]
fn values_in_messages_are_written_as_write_would() {
    let mut engine = Engine::new();
    for (source, message) in [
        (
            "(car (if #f #f))",
            "car: expected a pair, got #<unspecified>",
        ),
        ("(car \"a b\")", "car: expected a pair, got \"a b\""),
        ("(car '|a b|)", "car: expected a pair, got |a b|"),
        ("(car #\\space)", "car: expected a pair, got #\\space"),
        (
            "(vector-ref (vector 1 2) 5)",
            "vector-ref: index 5 out of range for a vector of length 2",
        ),
        ("(car)", "car: expected 1 argument, got 0"),
        (
            "((lambda (x) x))",
            "anonymous procedure: expected 1 argument, got 0",
        ),
    ] {
        let e = error_of(&mut engine, source);
        assert_eq!(e.kind, ErrorKind::Runtime, "{source:?}");
        assert_eq!(e.message, message, "{source:?}");
    }
}

#[test]
fn a_limit_ends_the_evaluation_and_keeps_the_session() {
    let mut engine = Engine::new();
    assert_eq!(
        engine.eval("(define kept 41)").error.map(|e| e.message),
        None
    );
    engine.set_limits(Limits {
        max_steps: 10_000,
        ..engine.limits()
    });
    let e = error_of(&mut engine, "(define lost 1)\n(let loop () (loop))");
    assert_eq!(e.kind, ErrorKind::StepLimit);
    engine.set_limits(Limits::default());
    // What the evaluation that hit the limit did is undone; what came
    // before stays.
    assert_eq!(engine.eval("(+ kept 1)").value.as_deref(), Some("42"));
    let e = error_of(&mut engine, "lost");
    assert_eq!(e.message, "unbound variable: lost");
}

#[test]
fn the_memory_cap_ends_growth_as_an_error_not_a_crash() {
    let mut engine = Engine::new();
    engine.set_limits(Limits {
        max_memory: 16 << 20,
        ..engine.limits()
    });
    let e = error_of(&mut engine, "(let loop ((l '())) (loop (cons 1 l)))");
    assert_eq!(e.kind, ErrorKind::MemoryLimit);
    engine.set_limits(Limits::default());
    assert_eq!(engine.eval("(+ 1 2)").value.as_deref(), Some("3"));
}

#[test]
fn a_collection_asks_the_interrupt_check_as_it_marks_and_stops_when_told() {
    use std::cell::Cell;
    use std::rc::Rc;
    let mut engine = Engine::new();
    let ev = engine.eval("(define l (make-list 1000000 'x)) (length l)");
    assert_eq!(ev.error.map(|e| e.message), None);
    let asked = Rc::new(Cell::new(0u32));
    let stop = Rc::new(Cell::new(false));
    let (a, s) = (asked.clone(), stop.clone());
    engine.set_interrupt_check(Some(Box::new(move || {
        a.set(a.get() + 1);
        s.get()
    })));
    let collections = engine.vm.heap.collections;
    assert!(engine.vm.collect_or_stop());
    assert_eq!(engine.vm.heap.collections, collections + 1);
    // A million pairs marked: asked every 65,536 objects.
    assert!(asked.get() >= 15, "asked {} times", asked.get());
    // Garbage after the list, then a collection told to stop: abandoned,
    // nothing freed.
    let ev = engine.eval("(define g (make-list 500000 'y))");
    assert_eq!(ev.error.map(|e| e.message), None);
    assert_eq!(engine.eval("(set! g #f)").error.map(|e| e.message), None);
    let slots = engine.vm.heap.slot_count();
    stop.set(true);
    assert!(!engine.vm.collect_or_stop());
    assert_eq!(engine.vm.heap.collections, collections + 1);
    assert_eq!(engine.vm.heap.slot_count(), slots);
    // Its marks were cleared: the next collection frees the garbage and
    // keeps the list.
    stop.set(false);
    engine.vm.collect_garbage();
    assert!(
        engine.vm.heap.slot_count() < slots - 400_000,
        "{} slots of {slots} kept",
        engine.vm.heap.slot_count()
    );
    assert_eq!(engine.eval("(length l)").value.as_deref(), Some("1000000"));
}
