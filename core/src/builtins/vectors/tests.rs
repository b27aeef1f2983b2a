//! The vector and bytevector procedures' own cases (R7RS 6.8, 6.9):
//! bounds, ranges, overlapping copies, bytes out of range, UTF-8 at its
//! edges, and each error's wording.

use super::super::test_support::Probe;

#[test]
fn ranges_and_overlapping_copies() {
    Probe::new().values(&[
        ("(vector-copy #(1 2 3) 1)", "#(2 3)"),
        ("(vector-copy #(1 2 3) 3)", "#()"),
        ("(vector->list #(1 2 3) 1 2)", "(2)"),
        ("(string->vector \"héllo\" 1 3)", "#(#\\é #\\l)"),
        ("(vector->string #(#\\λ #\\x) 1)", "\"x\""),
        // R7RS: the copy is as if through a temporary, in either direction.
        (
            "(let ((v (vector 1 2 3 4 5))) (vector-copy! v 2 v 0 3) v)",
            "#(1 2 1 2 3)",
        ),
        (
            "(let ((v (vector 1 2 3 4 5))) (vector-copy! v 0 v 2 5) v)",
            "#(3 4 5 4 5)",
        ),
        (
            "(let ((v (make-vector 3 0))) (vector-fill! v 7 1) v)",
            "#(0 7 7)",
        ),
        ("(vector-append #(1) #() #(2 3))", "#(1 2 3)"),
        ("(bytevector-copy #u8(1 2 3) 1)", "#u8(2 3)"),
        (
            "(let ((b (bytevector 1 2 3 4 5))) (bytevector-copy! b 1 b 0 3) b)",
            "#u8(1 1 2 3 5)",
        ),
        ("(bytevector-append #u8(1) #u8(2) #u8())", "#u8(1 2)"),
        ("(bytevector-u8-ref #u8(0 255) 1)", "255"),
    ]);
}

#[test]
fn utf8_conversions_count_bytes_and_characters() {
    Probe::new().values(&[
        ("(utf8->string #u8(#xce #xbb))", "\"λ\""),
        ("(utf8->string #u8(#xce #xbb #x41) 2)", "\"A\""),
        ("(string->utf8 \"λa\")", "#u8(206 187 97)"),
        // The range of `string->utf8` is in characters.
        ("(string->utf8 \"λa\" 1)", "#u8(97)"),
    ]);
    Probe::new().errors(&[
        (
            "(utf8->string #u8(#xff))",
            "utf8->string: the bytes are not valid UTF-8",
        ),
        // A range that cuts a character in two.
        (
            "(utf8->string #u8(#xce #xbb #x41) 1)",
            "utf8->string: the bytes are not valid UTF-8",
        ),
        (
            "(string->utf8 \"λa\" 3)",
            "string->utf8: range 3 to 2 is out of bounds for length 2",
        ),
    ]);
}

#[test]
fn indices_and_ranges_past_the_end_are_errors() {
    Probe::new().errors(&[
        (
            "(vector-ref #(1 2) 2)",
            "vector-ref: index 2 out of range for a vector of length 2",
        ),
        (
            "(vector-ref (vector 1) -1)",
            "vector-ref: index -1 out of range for a vector of length 1",
        ),
        (
            "(vector-set! (make-vector 2 0) 2 1)",
            "vector-set!: index 2 out of range for a vector of length 2",
        ),
        (
            "(vector-copy #(1 2 3) 2 1)",
            "vector-copy: range 2 to 1 is out of bounds for length 3",
        ),
        (
            "(vector->list #(1 2 3) 4)",
            "vector->list: range 4 to 3 is out of bounds for length 3",
        ),
        (
            "(vector-fill! (make-vector 3 0) 7 2 4)",
            "vector-fill!: range 2 to 4 is out of bounds for length 3",
        ),
        (
            "(vector-copy! (make-vector 2 0) 1 #(1 2))",
            "vector-copy!: the destination is too short",
        ),
        (
            "(bytevector-u8-ref #u8(1 2) 2)",
            "bytevector-u8-ref: index 2 out of range for a bytevector of length 2",
        ),
        (
            "(bytevector-copy #u8(1 2 3) 2 1)",
            "bytevector-copy: range 2 to 1 is out of bounds for length 3",
        ),
        (
            "(bytevector-copy! (make-bytevector 2 0) 0 #u8(1 2 3))",
            "bytevector-copy!: the destination is too short",
        ),
    ]);
}

#[test]
fn bytes_are_exact_integers_from_0_to_255() {
    Probe::new().errors(&[
        (
            "(make-bytevector 2 256)",
            "make-bytevector: expected a byte (an exact integer from 0 to 255), got 256",
        ),
        (
            "(make-bytevector 2 -1)",
            "make-bytevector: expected a byte (an exact integer from 0 to 255), got -1",
        ),
        (
            "(bytevector 1 2 300)",
            "bytevector: expected a byte (an exact integer from 0 to 255), got 300",
        ),
        (
            "(bytevector-u8-set! (bytevector 1) 0 256)",
            "bytevector-u8-set!: expected a byte (an exact integer from 0 to 255), got 256",
        ),
        (
            "(bytevector 1.0)",
            "bytevector: expected a byte (an exact integer from 0 to 255), got 1.0",
        ),
    ]);
}

#[test]
fn type_and_argument_count_errors_name_the_procedure() {
    Probe::new().errors(&[
        (
            "(vector-ref '(1) 0)",
            "vector-ref: expected a vector, got (1)",
        ),
        (
            "(vector-ref #(1 2) 'a)",
            "vector-ref: expected an exact integer index, got a",
        ),
        (
            "(make-vector -1)",
            "make-vector: expected a non-negative exact integer, got -1",
        ),
        (
            "(make-vector 2.5)",
            "make-vector: expected a non-negative exact integer, got 2.5",
        ),
        (
            "(vector->string #(#\\a 1))",
            "vector->string: expected a character, got 1",
        ),
        (
            "(vector-append #(1) '(2))",
            "vector-append: expected a vector, got (2)",
        ),
        (
            "(vector-length)",
            "vector-length: expected 1 argument, got 0",
        ),
        (
            "(vector-set! (vector 1) 0)",
            "vector-set!: expected 3 arguments, got 2",
        ),
    ]);
}
