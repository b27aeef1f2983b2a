//! The pair, list, symbol and equivalence procedures' own cases (R7RS
//! 6.1, 6.4, 6.5): improper and circular lists, indices past the end,
//! and each error's wording.

use super::super::test_support::Probe;

#[test]
fn improper_and_circular_lists() {
    let mut p = Probe::new();
    p.values(&[
        ("(list? '(1 . 2))", "#f"),
        (
            "(let ((l (list 1 2))) (set-cdr! (cdr l) l) (list? l))",
            "#f",
        ),
        ("(list-copy '(1 2 . 3))", "(1 2 . 3)"),
        ("(append '(1) 2)", "(1 . 2)"),
        ("(append '() 5)", "5"),
        ("(append)", "()"),
        ("(list-tail '(1 2) 2)", "()"),
        ("(cons* 1 2 '(3))", "(1 2 3)"),
        ("(make-list 2 'x)", "(x x)"),
        ("(memv 1.0 '(1 1.0))", "(1.0)"),
        ("(memq 'c '(a b))", "#f"),
        ("(assq 'b '((a 1) (b 2)))", "(b 2)"),
        ("(assv 5 '())", "#f"),
    ]);
    p.errors(&[
        (
            "(length '(1 2 . 3))",
            "length: expected a proper list, got (1 2 . 3)",
        ),
        (
            "(append '(1 . 2) '(3))",
            "append: expected a proper list, got (1 . 2)",
        ),
        (
            "(reverse '(1 . 2))",
            "reverse: expected a proper list, got (1 . 2)",
        ),
        (
            "(assv 2 '((1 a) 2))",
            "assv: expected a list of pairs, got ((1 a) 2)",
        ),
        ("(assq 'x 5)", "assq: expected a proper list, got 5"),
    ]);
    // A circular list is written with labels, and the error stands at the
    // call that met it.
    let e = p.error("(define l (list 1 2))\n(set-cdr! (cdr l) l)\n  (length l)");
    assert_eq!(
        e.message,
        "length: expected a proper list, got #0=(1 2 . #0#)"
    );
    assert_eq!(e.position.map(|p| (p.line, p.column)), Some((3, 3)));
}

#[test]
fn indices_past_the_end_are_errors() {
    Probe::new().errors(&[
        ("(list-ref '(1 2) 2)", "list-ref: index 2 out of range"),
        (
            "(list-ref '(1 2) -1)",
            "list-ref: expected a non-negative exact integer, got -1",
        ),
        (
            "(list-set! (list 1 2) 5 0)",
            "list-set!: index 5 out of range",
        ),
        (
            "(list-tail (list 1 2) 3)",
            "list-tail: index 3 is past the end of the list",
        ),
        (
            "(make-list -1 0)",
            "make-list: expected a non-negative exact integer, got -1",
        ),
    ]);
}

#[test]
fn equivalence_as_r7rs_defines_it() {
    Probe::new().values(&[
        ("(eqv? 100000000000000000000 100000000000000000000)", "#t"),
        ("(eqv? 2 2.0)", "#f"),
        ("(eqv? (string #\\a) (string #\\a))", "#f"),
        ("(equal? #(1 (2 \"x\")) #(1 (2 \"x\")))", "#t"),
        ("(equal? 2 2.0)", "#f"),
        ("(equal? #u8(1 2) #u8(1 2))", "#t"),
        // `equal?` ends on circular structure.
        (
            "(let ((a (list 1 2)) (b (list 1 2)))
               (set-cdr! (cdr a) a) (set-cdr! (cdr b) b) (equal? a b))",
            "#t",
        ),
        ("(boolean=? #t #t #f)", "#f"),
        ("(symbol=? 'a 'a 'b)", "#f"),
        ("(symbol->string 'λ)", "\"λ\""),
        ("(string->symbol \"hello world\")", "|hello world|"),
        ("(eq? (string->symbol \"ab\") 'ab)", "#t"),
    ]);
}

#[test]
fn type_and_argument_count_errors_name_the_procedure() {
    Probe::new().errors(&[
        ("(car '())", "car: expected a pair, got ()"),
        ("(cdr '())", "cdr: expected a pair, got ()"),
        ("(set-car! '() 1)", "set-car!: expected a pair, got ()"),
        ("(boolean=? #t 1)", "boolean=?: expected a boolean, got 1"),
        (
            "(string->symbol 5)",
            "string->symbol: expected a string, got 5",
        ),
        ("(cons 1)", "cons: expected 2 arguments, got 1"),
        ("(car 1 2)", "car: expected 1 argument, got 2"),
    ]);
}
