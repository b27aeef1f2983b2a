//! The compiler's own cases, beside it: what a program cannot observe of
//! itself — the wording and the exact position of each compile error, and
//! where code the engine brings (the prelude's macros, bundled libraries)
//! places its errors: always in the user's text, never at a line of the
//! engine's own source.

use crate::{Engine, ErrorKind, EvalError, Position};

/// The error evaluating `source` in a new engine gives.
fn error_of(source: &str) -> EvalError {
    let mut engine = Engine::new();
    let ev = engine.eval(source);
    match ev.error {
        Some(e) => e,
        None => panic!("{source:?} should fail, but gave {:?}", ev.value),
    }
}

fn at(line: u32, column: u32) -> Option<Position> {
    Some(Position { line, column })
}

#[test]
fn malformed_special_forms_say_what_and_where() {
    let cases: &[(&str, &str, u32, u32)] = &[
        (
            "(if)",
            "if takes a test, a consequent and an optional alternative",
            1,
            1,
        ),
        ("(lambda)", "lambda needs parameters and a body", 1, 1),
        ("(let loop)", "named let needs bindings and a body", 1, 1),
        ("(let* x 1)", "let* bindings must be a list", 1, 7),
        ("(letrec)", "letrec needs bindings and a body", 1, 1),
        (
            "(letrec-syntax 5 1)",
            "letrec-syntax bindings must be a list",
            1,
            16,
        ),
        ("(quote)", "quote takes exactly one datum", 1, 1),
        ("(set! 5 1)", "set! needs a variable name", 1, 7),
        ("(case)", "case needs a key and clauses", 1, 1),
        (
            "\n  (lambda (x x) x)",
            "lambda: duplicate parameter 'x'",
            2,
            14,
        ),
        (
            "(syntax-rules)",
            "syntax-rules is only valid as the transformer of define-syntax or let-syntax",
            1,
            1,
        ),
        (
            "(define-record-type)",
            "define-record-type needs a type name, a constructor and a predicate",
            1,
            1,
        ),
    ];
    for &(source, message, line, column) in cases {
        let e = error_of(source);
        assert_eq!(e.kind, ErrorKind::Syntax, "{source:?}: {e}");
        assert_eq!(e.message, message, "{source:?}");
        assert_eq!(e.position, at(line, column), "{source:?}: {e}");
    }
}

/// Inside a procedure, a definition stands only at the start of a body.
/// (At the top level every definition is global, in any position, as in
/// chibi.)
#[test]
fn definitions_only_where_a_definition_may_stand() {
    for (source, kw, column) in [
        ("(define (f) (if #t (define x 1)) 2)", "define", 20),
        (
            "(define (f) (when #t (define-syntax m (syntax-rules () ((_) 1)))) 2)",
            "define-syntax",
            22,
        ),
        (
            "(define (f) (list (define-record-type p (mp) p?)))",
            "define-record-type",
            19,
        ),
    ] {
        let e = error_of(source);
        assert_eq!(
            e.message,
            format!("{kw} is only allowed at the top level or at the start of a body"),
            "{source:?}"
        );
        assert_eq!(e.position, at(1, column), "{source:?}");
    }
}

#[test]
fn a_compile_error_leaves_the_forms_before_it_done() {
    let mut engine = Engine::new();
    let ev = engine.eval("(define kept 1)\n(if)");
    let e = ev.error.expect("the second form is malformed");
    assert_eq!(e.position, at(2, 1));
    assert_eq!(engine.eval("kept").value.as_deref(), Some("1"));
}

#[test]
fn the_prelude_s_macros_place_their_errors_in_the_user_s_text() {
    // A use that matches no rule of a macro the prelude defines.
    let e = error_of("(define x 1)\n  (par . 1)");
    assert_eq!(
        e.message,
        "no syntax-rules pattern of 'par' matches this use"
    );
    assert_eq!(e.position, at(2, 3));
    // A malformed binding of a prelude binding form: checked before it
    // expands, at the binding.
    let e = error_of("(define x 1)\n  (let-values (((a b) (values 1 2)) c) a)");
    assert_eq!(
        e.message,
        "let-values: the binding c is not (formals init); each binding must be (formals init)"
    );
    assert_eq!(e.position, at(2, 37));
    // An error inside an expansion: the user's own subform, and frames
    // at the use, never at a line of the prelude.
    let e = error_of("(let-values (((a b) (values 1 2)))\n (car a))");
    assert_eq!(e.message, "car: expected a pair, got 1");
    assert_eq!(e.position, at(2, 2));
    for frame in &e.backtrace {
        assert!(
            frame.ends_with("(2:2)") || frame.ends_with("(1:1)"),
            "a frame outside the user's text: {frame}"
        );
    }
    // A condition no clause of `guard` takes is raised again by the
    // prelude's code, but reported where the user wrote the guard.
    let e = error_of("\n\n(guard (e (#f 1)) (raise 'boom))");
    assert_eq!(e.message, "uncaught exception: boom");
    assert_eq!(e.position, at(3, 1));
}

#[test]
fn bundled_libraries_place_their_errors_at_the_call() {
    let e = error_of("(import (scheme list))\n(fold + 0 '(1 . 2))");
    assert_eq!(e.message, "fold: expected a proper list: (1 . 2)");
    assert_eq!(e.position, at(2, 1));
}

#[test]
fn a_procedure_with_too_many_locals_is_refused_where_it_is() {
    // Each `let` variable is a local of the enclosing procedure; a frame
    // addresses at most 65,535 of them.
    let program = |n: usize| {
        let mut s = String::from("(define (f)\n  (let (");
        for i in 0..n {
            s.push_str(&format!("(v{i} {i}) "));
        }
        s.push_str(") v0))\n(f)");
        s
    };
    let mut engine = Engine::new();
    let ev = engine.eval(&program(1000));
    assert_eq!(ev.error.map(|e| e.message), None);
    assert_eq!(ev.value.as_deref(), Some("0"));
    let e = error_of(&program(70_000));
    assert_eq!(e.message, "procedure has too many local variables");
    assert_eq!(e.position, at(1, 1));
}
