//! The port procedures' own cases (R7RS 6.13): textual and binary ports
//! kept apart, closed ports, `read` errors with their place in the port's
//! text, ranges of `write-string`, and each error's wording.

use super::super::test_support::Probe;

#[test]
fn string_and_bytevector_ports() {
    let mut p = Probe::new();
    p.values(&[
        ("(read-char (open-input-string \"λx\"))", "#\\λ"),
        ("(read-string 2 (open-input-string \"héllo\"))", "\"hé\""),
        ("(read-line (open-input-string \"a\\nb\"))", "\"a\""),
        ("(read (open-input-string \"\"))", "#<eof>"),
        ("(peek-char (open-input-string \"\"))", "#<eof>"),
        ("(read (open-input-string \"(1 . 2) x\"))", "(1 . 2)"),
        ("(read-u8 (open-input-bytevector #u8(255)))", "255"),
        (
            "(read-bytevector 2 (open-input-bytevector #u8(1 2 3)))",
            "#u8(1 2)",
        ),
        (
            "(let ((b (make-bytevector 4 0)))
               (read-bytevector! b (open-input-bytevector #u8(7 8)) 1) b)",
            "#u8(0 7 8 0)",
        ),
        (
            "(let ((p (open-output-bytevector)))
               (write-u8 1 p) (write-bytevector #u8(2 3 4) p 1)
               (get-output-bytevector p))",
            "#u8(1 3 4)",
        ),
    ]);
    assert_eq!(
        p.output("(write-string \"hello\" (current-output-port) 1 3)"),
        "el"
    );
    assert_eq!(p.output("(write \"a\\nλ\") (display #\\λ)"), "\"a\\nλ\"λ");
}

#[test]
fn a_port_of_the_wrong_kind_or_closed_is_an_error() {
    let mut p = Probe::new();
    p.value(
        "(define out (open-output-string)) (close-port out)
         (define in (open-input-string \"ab\")) (close-port in)",
    );
    p.errors(&[
        (
            "(read-u8 (open-input-string \"x\"))",
            "read-u8: expected an open binary input port, got #<input-port>",
        ),
        (
            "(read-char (open-input-bytevector #u8(1)))",
            "read-char: expected an open textual input port, got #<input-port>",
        ),
        (
            "(write-u8 256 (open-output-bytevector))",
            "write-u8: expected a byte, got 256",
        ),
        (
            "(write-char #\\a out)",
            "write-char: expected an open textual output port, got #<output-port>",
        ),
        (
            "(read-char in)",
            "read-char: expected an open textual input port, got #<input-port>",
        ),
        (
            "(write-string \"hello\" (current-output-port) 3 9)",
            "write-string: range 3 to 9 is out of bounds for length 5",
        ),
        (
            "(read-string -1 (open-input-string \"x\"))",
            "read-string: expected a non-negative exact integer, got -1",
        ),
    ]);
}

#[test]
fn read_errors_say_where_in_the_ports_text() {
    let mut p = Probe::new();
    p.errors(&[
        (
            "(read (open-input-string \"(1 . )\"))",
            "read: expected a datum after '.' (at 1:6 of the port's text)",
        ),
        (
            "(read (open-input-string \")\"))",
            "read: unexpected ')' (at 1:1 of the port's text)",
        ),
    ]);
    // The error raised is a read error that a handler can tell apart.
    assert_eq!(
        p.value(
            "(guard (e ((read-error? e) 'read) (#t 'other))
               (read (open-input-string \"#(1\")))"
        ),
        "read"
    );
}

#[test]
fn json_errors_say_where() {
    Probe::new().errors(&[
        (
            "(json->scheme \"[1, 2\")",
            "json->scheme: 1:6: expected ',' or ']' in an array",
        ),
        (
            "(scheme->json (lambda (x) x))",
            "scheme->json: at $: #<procedure> has no JSON form: only booleans, numbers, strings, symbols, lists and vectors have one",
        ),
    ]);
}
