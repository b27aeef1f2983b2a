//! The reader's own cases, beside it: what programs cannot see directly —
//! the exact position and wording of each syntax error, and edge cases of
//! R7RS lexical syntax (numbers, characters, symbols, comments, labels).

use super::*;
use crate::printer::syn_to_string;

/// Each datum of `text` printed back, one per element.
fn read(text: &str) -> Vec<String> {
    let mut syms = SymbolTable::default();
    match read_all(text, &mut syms) {
        Ok(forms) => forms.iter().map(|f| syn_to_string(f, &syms)).collect(),
        Err(e) => panic!(
            "{text:?} should read, but: {} at {}:{}",
            e.message, e.pos.line, e.pos.col
        ),
    }
}

/// The error `text` gives: its message and where (line, column).
fn error(text: &str) -> (String, u32, u32) {
    let mut syms = SymbolTable::default();
    match read_all(text, &mut syms) {
        Ok(forms) => panic!(
            "{text:?} should be an error, but read {:?}",
            forms
                .iter()
                .map(|f| syn_to_string(f, &syms))
                .collect::<Vec<_>>()
        ),
        Err(e) => (e.message, e.pos.line, e.pos.col),
    }
}

#[test]
fn numbers_in_every_radix_exactness_and_notation() {
    let cases = [
        ("1/2", "1/2"),
        ("6/4", "3/2"),
        ("-0/5", "0"),
        ("#e1.5", "3/2"),
        // `#e` reads the decimal as written, not the double nearest to it.
        ("#e.1", "1/10"),
        ("#e-1.25e1", "-25/2"),
        ("#e1e-3", "1/1000"),
        ("#i1/2", "0.5"),
        ("#x-ff", "-255"),
        ("#XFF", "255"),
        ("#b101", "5"),
        ("#o17", "15"),
        ("#d10", "10"),
        ("#x#e1", "1"),
        ("#e#x10", "16"),
        (".5", "0.5"),
        ("-.5e1", "-5.0"),
        ("1e3", "1000.0"),
        ("1E3", "1000.0"),
        ("+5", "5"),
        (
            "123456789012345678901234567890",
            "123456789012345678901234567890",
        ),
        ("+inf.0", "+inf.0"),
        ("-INF.0", "-inf.0"),
        ("+NaN.0", "+nan.0"),
        ("1+2i", "1+2i"),
        ("+i", "+i"),
        // An inexact complex has inexact parts, as in Guile and Chez.
        ("-2.5i", "0.0-2.5i"),
    ];
    for (text, want) in cases {
        assert_eq!(read(text), [want], "reading {text:?}");
    }
}

#[test]
fn what_looks_like_a_number_but_is_a_symbol() {
    for text in [
        "+", "-", "...", "+a", "-x-", "->", "a.b", "+.x", "inf.0", "a1+",
    ] {
        assert_eq!(read(text), [text], "reading {text:?}");
    }
}

#[test]
fn characters_strings_and_bar_symbols() {
    let cases = [
        (r"#\a", r"#\a"),
        (r"#\x41", r"#\A"),
        (r"#\x", r"#\x"),
        (r"#\space", r"#\space"),
        (r"#\newline", r"#\newline"),
        (r"#\(", r"#\("),
        (r#""a\x41;b""#, r#""aAb""#),
        (r#""tab\there""#, r#""tab\there""#),
        ("\"line \\\n    continued\"", r#""line continued""#),
        ("|a b|", "|a b|"),
        ("|x\\x41;|", "xA"),
        ("||", "||"),
    ];
    for (text, want) in cases {
        assert_eq!(read(text), [want], "reading {text:?}");
    }
}

#[test]
fn comments_prefixes_and_directives() {
    let cases: [(&str, &[&str]); 8] = [
        ("#;(skipped entirely) 1", &["1"]),
        ("#; #;a b c", &["c"]),
        ("#| outer #| inner |# still |# 2", &["2"]),
        ("1 ; to the end of the line\n2", &["1", "2"]),
        (
            "'x `(a ,b ,@c)",
            &[
                "(quote x)",
                "(quasiquote (a (unquote b) (unquote-splicing c)))",
            ],
        ),
        ("#!fold-case ABC #!no-fold-case DEF", &["abc", "DEF"]),
        ("#(1 #u8(2 3) (4 . 5))", &["#(1 #u8(2 3) (4 . 5))"]),
        // Syntax keeps a dotted tail as written; it becomes (a b c) as data.
        ("(a . (b c))", &["(a . (b c))"]),
    ];
    for (text, want) in cases {
        assert_eq!(read(text), want, "reading {text:?}");
    }
}

#[test]
fn syntax_errors_say_what_and_where() {
    // (text, a part of the message, line, column)
    let cases = [
        (")", "unexpected", 1, 1),
        ("(1 2", "not closed", 1, 1),
        ("(a\n (b c)\n (d", "not closed", 3, 2),
        ("\"abc", "string", 1, 1),
        ("#\\nosuchname", "character", 1, 1),
        ("#u8(256)", "bytevector", 1, 5),
        ("#u8(a)", "bytevector", 1, 5),
        ("(. 1)", ".", 1, 2),
        ("(1 . 2 3)", ".", 1, 8),
        ("#| never closed", "comment", 1, 1),
        ("|never closed", "|", 1, 1),
        ("\"bad \\q escape\"", "escape", 1, 7),
        // Not identifiers in R7RS (an identifier cannot start with a digit).
        ("1+", "number", 1, 1),
        ("1/2/3", "number", 1, 1),
        ("1e", "number", 1, 1),
        ("#z", "#z", 1, 1),
        ("1 2 #e1.2.3", "number", 1, 5),
        ("#0x", "label", 1, 1),
    ];
    for (text, part, line, col) in cases {
        let (message, l, c) = error(text);
        assert!(
            message.contains(part),
            "reading {text:?}: the message {message:?} should mention {part:?}"
        );
        assert_eq!((l, c), (line, col), "reading {text:?}: {message}");
    }
}

#[test]
fn labels_make_shared_and_cyclic_data() {
    assert_eq!(read("'(#0=(a) #0#)").len(), 1);
    assert_eq!(read("'#1=(a . #1#)").len(), 1);
}
