//! The control procedures' own cases (R7RS 6.10, 6.11): `error` and
//! `raise` as an uncaught error shows them, error objects, `apply` of an
//! improper list, a call of what is not a procedure.

use super::super::test_support::Probe;

#[test]
fn uncaught_errors_show_message_and_irritants() {
    Probe::new().errors(&[
        ("(error \"boom\" 1 \"two\" 'three)", "boom: 1 \"two\" three"),
        ("(raise 42)", "uncaught exception: 42"),
        ("(raise (list 1 2))", "uncaught exception: (1 2)"),
        (
            "(error-object-message 5)",
            "error-object-message: expected an error object, got 5",
        ),
        (
            "(apply + 1 2)",
            "apply: last argument must be a proper list, got 2",
        ),
        (
            "(apply + 1 '(2 . 3))",
            "apply: last argument must be a proper list, got (2 . 3)",
        ),
        ("(apply)", "apply: expected at least 2 arguments, got 0"),
        ("(5 3)", "not a procedure: 5"),
        ("(\"str\")", "not a procedure: \"str\""),
    ]);
}

#[test]
fn error_objects_keep_what_error_was_given() {
    Probe::new().values(&[
        (
            "(guard (e (#t (list (error-object? e) (error-object-message e)
                                 (error-object-irritants e))))
               (error \"bad\" 1 'x))",
            "(#t \"bad\" (1 x))",
        ),
        ("(guard (e (#t (error-object? e))) (raise 5))", "#f"),
        ("(guard (e ((string? e) e)) (raise \"s\"))", "\"s\""),
        (
            "(guard (e ((error-object? e) (error-object-message e))) (car 1))",
            "\"car: expected a pair, got 1\"",
        ),
        ("(call-with-values (lambda () (values 1 2)) +)", "3"),
        ("(call-with-values values list)", "()"),
    ]);
}

#[test]
fn an_error_stands_at_the_call_inside_the_text() {
    let mut p = Probe::new();
    let e = p.error("(define (f x)\n  (vector-ref x 9))\n(f (vector 1))");
    assert_eq!(
        e.message,
        "vector-ref: index 9 out of range for a vector of length 1"
    );
    assert_eq!(e.position.map(|p| (p.line, p.column)), Some((2, 3)));
    assert_eq!(e.backtrace, ["f (2:3)", "top level (3:1)"]);
    // A `guard` no clause of which applies raises the error again, where
    // it was first raised.
    let e = p.error("(guard (e ((file-error? e) 'file)) (car 1))");
    assert_eq!(e.message, "car: expected a pair, got 1");
    assert_eq!(e.position.map(|p| (p.line, p.column)), Some((1, 36)));
}
