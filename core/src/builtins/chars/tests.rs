//! The character procedures' own cases (R7RS 6.6): Unicode scalar values
//! at their bounds, case and digits beyond ASCII, and each error's wording.

use super::super::test_support::Probe;

#[test]
fn unicode_beyond_ascii() {
    Probe::new().values(&[
        ("(char->integer #\\x10FFFF)", "1114111"),
        ("(integer->char 955)", "#\\λ"),
        ("(char->integer (integer->char 57344))", "57344"),
        ("(char-upcase #\\λ)", "#\\Λ"),
        ("(char-downcase #\\Σ)", "#\\σ"),
        ("(char-foldcase #\\Σ)", "#\\σ"),
        // A character whose upper case is two characters stays itself.
        ("(char-upcase #\\ß)", "#\\ß"),
        ("(digit-value #\\٣)", "3"),
        ("(digit-value #\\a)", "#f"),
        ("(char-numeric? #\\٣)", "#t"),
        ("(char-alphabetic? #\\λ)", "#t"),
        ("(char-whitespace? #\\x3000)", "#t"),
        ("(char-upper-case? #\\Λ)", "#t"),
        ("(char-lower-case? #\\Λ)", "#f"),
        ("(char<? #\\a #\\b #\\c)", "#t"),
        ("(char<? #\\a #\\b #\\a)", "#f"),
        ("(char-ci=? #\\a #\\A #\\a)", "#t"),
        ("(char-ci<? #\\a #\\B)", "#t"),
    ]);
}

#[test]
fn only_unicode_scalar_values_are_characters() {
    Probe::new().errors(&[
        (
            "(integer->char 55296)",
            "integer->char: 55296 is not a Unicode scalar value",
        ),
        (
            "(integer->char 1114112)",
            "integer->char: 1114112 is not a Unicode scalar value",
        ),
        (
            "(integer->char -1)",
            "integer->char: -1 is not a Unicode scalar value",
        ),
        (
            "(integer->char 65.0)",
            "integer->char: expected an exact integer, got 65.0",
        ),
    ]);
}

#[test]
fn type_and_argument_count_errors_name_the_procedure() {
    Probe::new().errors(&[
        (
            "(char<? #\\a \"b\")",
            "char<?: expected a character, got \"b\"",
        ),
        (
            "(char-upper-case? 5)",
            "char-upper-case?: expected a character, got 5",
        ),
        (
            "(char->integer \"a\")",
            "char->integer: expected a character, got \"a\"",
        ),
        ("(char-upcase)", "char-upcase: expected 1 argument, got 0"),
        ("(char=?)", "char=?: expected at least 1 argument, got 0"),
    ]);
}
