//! The string procedures' own cases (R7RS 6.7): characters beyond ASCII
//! count as one, indices and ranges past the end, overlapping copies, and
//! each error's wording.

use super::super::test_support::Probe;

#[test]
fn non_ascii_characters_count_as_one() {
    Probe::new().values(&[
        ("(string-length \"λx\")", "2"),
        ("(string-length \"日本\")", "2"),
        ("(string-ref \"héllo\" 1)", "#\\é"),
        ("(substring \"héllo\" 1 3)", "\"él\""),
        ("(string-copy \"héllo\" 4)", "\"o\""),
        ("(make-string 3 #\\é)", "\"ééé\""),
        (
            "(let ((s (make-string 3 #\\a))) (string-set! s 1 #\\λ) s)",
            "\"aλa\"",
        ),
        ("(string->list \"aλb\" 1)", "(#\\λ #\\b)"),
        ("(string #\\日 #\\本)", "\"日本\""),
        ("(list->string (list #\\λ #\\x))", "\"λx\""),
        ("(string-append \"λ\" \"\" \"μ\")", "\"λμ\""),
    ]);
}

#[test]
fn case_maps_whole_strings() {
    Probe::new().values(&[
        ("(string-upcase \"straße\")", "\"STRASSE\""),
        ("(string-downcase \"ΣΑΣ\")", "\"σας\""),
        ("(string-foldcase \"ΣΑΣ\")", "\"σασ\""),
        ("(string-ci=? \"Straße\" \"STRASSE\")", "#t"),
        ("(string-ci<? \"apple\" \"BANANA\")", "#t"),
        ("(string<? \"abc\" \"abd\" \"abe\")", "#t"),
        ("(string<? \"abc\" \"ab\")", "#f"),
        ("(string<? \"ab\" \"abc\")", "#t"),
        ("(string=? \"a\" \"a\" \"b\")", "#f"),
        ("(string>=? \"b\" \"b\" \"a\")", "#t"),
    ]);
}

#[test]
fn copies_fills_and_overlaps() {
    Probe::new().values(&[
        ("(string-copy \"abc\" 1)", "\"bc\""),
        ("(string-copy \"abc\" 3)", "\"\""),
        ("(string-copy \"abc\" 1 2)", "\"b\""),
        (
            "(let ((s (make-string 3 #\\x))) (string-copy! s 1 \"ab\") s)",
            "\"xab\"",
        ),
        // R7RS: the copy is as if through a temporary, in either direction.
        (
            "(let ((s (string-copy \"abcde\"))) (string-copy! s 1 s 0 3) s)",
            "\"aabce\"",
        ),
        (
            "(let ((s (string-copy \"abcde\"))) (string-copy! s 0 s 2) s)",
            "\"cdede\"",
        ),
        (
            "(let ((s (make-string 4 #\\a))) (string-fill! s #\\λ 1 3) s)",
            "\"aλλa\"",
        ),
        ("(string-join '(\"a\" \"b\" \"c\") \", \")", "\"a, b, c\""),
    ]);
}

#[test]
fn indices_and_ranges_past_the_end_are_errors() {
    Probe::new().errors(&[
        (
            "(string-ref \"abc\" 3)",
            "string-ref: index 3 out of range for a string of length 3",
        ),
        (
            "(string-ref \"\" 0)",
            "string-ref: index 0 out of range for a string of length 0",
        ),
        (
            "(string-ref \"héllo\" 5)",
            "string-ref: index 5 out of range for a string of length 5",
        ),
        (
            "(string-ref \"abc\" -1)",
            "string-ref: expected a non-negative exact integer, got -1",
        ),
        (
            "(string-ref \"abc\" 1.0)",
            "string-ref: expected a non-negative exact integer, got 1.0",
        ),
        (
            "(string-set! (make-string 2 #\\a) 2 #\\b)",
            "string-set!: index 2 out of range for a string of length 2",
        ),
        (
            "(substring \"abc\" 2 1)",
            "substring: range 2 to 1 is out of bounds for length 3",
        ),
        (
            "(substring \"abc\" 0 4)",
            "substring: range 0 to 4 is out of bounds for length 3",
        ),
        (
            "(string-copy \"abc\" 4)",
            "string-copy: range 4 to 3 is out of bounds for length 3",
        ),
        (
            "(string->list \"abc\" 2 1)",
            "string->list: range 2 to 1 is out of bounds for length 3",
        ),
        (
            "(string-copy! (make-string 2 #\\x) 0 \"abc\")",
            "string-copy!: the destination is too short",
        ),
        (
            "(string-fill! (make-string 3 #\\a) #\\b 1 5)",
            "string-fill!: range 1 to 5 is out of bounds for length 3",
        ),
    ]);
}

#[test]
fn type_and_argument_count_errors_name_the_procedure() {
    Probe::new().errors(&[
        (
            "(string-ref 'abc 0)",
            "string-ref: expected a string, got abc",
        ),
        (
            "(string-set! (make-string 1) 0 5)",
            "string-set!: expected a character, got 5",
        ),
        (
            "(make-string 2 \"a\")",
            "make-string: expected a character, got \"a\"",
        ),
        (
            "(string-append \"a\" 'b)",
            "string-append: expected a string, got b",
        ),
        (
            "(list->string '(#\\a 1))",
            "list->string: expected a character, got 1",
        ),
        (
            "(string #\\a \"b\")",
            "string: expected a character, got \"b\"",
        ),
        (
            "(string-length)",
            "string-length: expected 1 argument, got 0",
        ),
        (
            "(substring \"abc\" 1)",
            "substring: expected 3 arguments, got 2",
        ),
        (
            "(string-copy \"a\" 0 1 2)",
            "string-copy: expected 1 to 3 arguments, got 4",
        ),
    ]);
}
