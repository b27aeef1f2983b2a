//! Bad input never panics: generated programs, hostile programs and
//! malformed text each end in a value or an error, and the engine goes on.

use arbores_core::{Engine, Limits};

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

const TOKENS: &[&str] = &[
    "(",
    "(",
    "(",
    ")",
    ")",
    ")",
    " ",
    "'",
    "`",
    ",",
    ",@",
    ".",
    "#(",
    "#u8(",
    "\"s\"",
    "\"",
    "#\\a",
    "#t",
    "#f",
    "0",
    "1",
    "-1",
    "2.5",
    "1/3",
    "#e1.5",
    "99999999999999999999",
    "x",
    "y",
    "f",
    "lambda",
    "define",
    "let",
    "let*",
    "letrec",
    "if",
    "cond",
    "case",
    "else",
    "=>",
    "set!",
    "quote",
    "quasiquote",
    "unquote",
    "begin",
    "do",
    "and",
    "or",
    "when",
    "define-syntax",
    "syntax-rules",
    "...",
    "_",
    "call/cc",
    "dynamic-wind",
    "values",
    "call-with-values",
    "apply",
    "car",
    "cdr",
    "cons",
    "list",
    "vector",
    "vector-ref",
    "string-ref",
    "substring",
    "+",
    "-",
    "*",
    "/",
    "<",
    "=",
    "expt",
    "exact",
    "error",
    "raise",
    "guard",
    "with-exception-handler",
    "eval",
    "read",
    "open-input-string",
    "string->symbol",
    "symbol->string",
    "make-vector",
    "make-string",
    "list-tail",
    "append",
    "map",
    "for-each",
    "#;",
    "#|",
    "|#",
    "#0=",
    "#0#",
    "|a b|",
    "define-record-type",
    "parameterize",
    "make-parameter",
    "delay",
    "force",
    "case-lambda",
    "let-values",
    "exact-integer-sqrt",
    "string->number",
    "number->string",
    "char-upcase",
    "integer->char",
    "1e400",
    "+nan.0",
    "-inf.0",
    "#x-ff",
];

#[test]
fn generated_programs_never_panic() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut e = Engine::new();
    e.set_limits(Limits {
        max_steps: 20_000,
        max_memory: 16 << 20,
    });
    for _ in 0..3000 {
        let n = 1 + rng.next() % 40;
        let src: String = (0..n)
            .map(|_| rng.pick(TOKENS))
            .collect::<Vec<_>>()
            .join(" ");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| e.eval(&src)));
        assert!(r.is_ok(), "panicked on: {src}");
    }
    assert_eq!(e.eval("(+ 1 2)").value.as_deref(), Some("3"));
}

#[test]
fn hostile_programs_end_cleanly() {
    let deep = "(".repeat(200_000);
    let deep_quote = format!("'{}{}", "(".repeat(50_000), ")".repeat(50_000));
    let long_list = format!("(length '({}))", "1 ".repeat(200_000));
    let programs: Vec<String> = vec![
        deep,
        deep_quote,
        long_list,
        "(define-syntax m (syntax-rules () ((_) (m)))) (m)".into(),
        "(define-syntax m (syntax-rules () ((_ x ...) (m x ... x ...)))) (m 1)".into(),
        "(let loop ((s \"x\")) (loop (string-append s s)))".into(),
        "(let loop ((v (vector 1))) (loop (vector-append v v)))".into(),
        "(define l (list 1 2)) (set-cdr! (cdr l) l) (length l)".into(),
        "(define l (list 1 2)) (set-cdr! (cdr l) l) (list->vector l)".into(),
        "(define l (list 1 2)) (set-cdr! (cdr l) l) (apply + l)".into(),
        "(define l (list 1 2)) (set-cdr! (cdr l) l) (equal? l l)".into(),
        "(define l (list 1 2)) (set-cdr! (cdr l) l) (write l)".into(),
        "(define v (vector 1)) (vector-set! v 0 v) (display v)".into(),
        "(define l (list 1 2)) (set-cdr! (cdr l) l) (eval l)".into(),
        "(expt 2 (expt 2 40))".into(),
        "(exact->inexact (expt 10 400))".into(),
        "(exact 1e308)".into(),
        "(make-vector -1)".into(),
        "(make-string 3 5)".into(),
        "(integer->char 55296)".into(),
        "(string->symbol 5)".into(),
        "(vector-ref (vector 1 2) 2)".into(),
        "(substring \"abc\" 2 1)".into(),
        "(list-tail '(1 2) 5)".into(),
        "(call/cc call/cc)".into(),
        "((call/cc call/cc) (lambda (x) x))".into(),
        "(read (open-input-string \"#0=(a . #0#)\"))".into(),
        "(let ((p (delay (force p)))) (force p))".into(),
        "(with-exception-handler (lambda (e) e) (lambda () (raise 'x)))".into(),
        "(raise (make-vector 10000 'x))".into(),
        "(apply apply apply '())".into(),
        "(#t)".into(),
        "()".into(),
        "(define)".into(),
        "(lambda)".into(),
        "(let ((x 1) (x 2)) x)".into(),
        "(quote)".into(),
        "#\\nosuch".into(),
        "\"\\xZZ;\"".into(),
        "#u8(256)".into(),
        "(string->number \"1/0\")".into(),
        "(/ 1 0)".into(),
        "(/ 1.0 0)".into(),
        "(exact (/ 1.0 0))".into(),
        "(floor/ 1 0)".into(),
        "(exact-integer-sqrt -1)".into(),
        "(number->string 10 7)".into(),
        "(string-copy! (make-string 2) 0 \"abcdef\")".into(),
        "(utf8->string (bytevector 255 254))".into(),
        "(error)".into(),
        "(error 'not-a-string 1 2)".into(),
    ];
    let mut e = Engine::new();
    e.set_limits(Limits {
        max_steps: 2_000_000,
        max_memory: 64 << 20,
    });
    for p in &programs {
        let shown: String = p.chars().take(60).collect();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| e.eval(p)));
        assert!(r.is_ok(), "panicked on: {shown}");
        assert_eq!(
            e.eval("(* 6 7)").value.as_deref(),
            Some("42"),
            "engine unusable after: {shown}"
        );
    }
}
