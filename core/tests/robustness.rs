//! Bad input never panics: generated programs, hostile programs and
//! malformed text each end in a value or an error, and the engine goes on.

mod support;

use arbores_core::{Engine, Limits};
use support::Rng;

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
    let mut rng = Rng::with_seed(0x2545_f491_4f6c_dd1d);
    let mut e = Engine::new();
    e.set_limits(Limits {
        max_steps: 20_000,
        max_memory: 16 << 20,
    });
    for _ in 0..3000 {
        let n = 1 + rng.u64(..40);
        let src: String = (0..n)
            .map(|_| TOKENS[rng.usize(..TOKENS.len())])
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
    let nest = |open: &str, middle: &str, close: &str, n: usize| {
        format!("{}{middle}{}", open.repeat(n), close.repeat(n))
    };
    let programs: Vec<String> = vec![
        deep,
        deep_quote,
        long_list,
        // Walks that still recurse on code's nesting refuse it past a
        // fixed depth, with an error; quoted data of any depth is fine.
        nest("`(", "x", ")", 100_000),
        nest(
            "(define-syntax m (syntax-rules () ((_) '",
            "x",
            ")))",
            100_000,
        ),
        nest("(cond-expand (", "else", ") 1)", 100_000),
        nest("(import ", "(only (scheme base) car)", ")", 100_000),
        nest("(define ", "(f)", " 1)", 100_000),
        nest("(begin ", "(define x 1)", ")", 100_000),
        format!(
            "(arb:create \"{}\" \"deep\")",
            nest("(begin ", "(define deep 1)", ")", 100_000)
        ),
        format!(
            "(eval '{} (scheme-report-environment 5))",
            nest("(list ", "1", ")", 100_000)
        ),
        format!(
            "(read (open-input-string \"{}\"))",
            nest("(", "", ")", 100_000)
        ),
        format!("(read (open-input-string \"{}\"))", "(".repeat(100_000)),
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

/// Random calls of every `arb:` procedure with random arguments, in random
/// transactions and evaluations: each ends in a value or an error, never a
/// panic, and afterwards the knowledge base still works.
#[test]
fn random_knowledge_calls_never_panic() {
    const PROCS: &[&str] = &[
        "arb:current-version",
        "arb:reflog",
        "arb:version-info",
        "arb:version-chain",
        "arb:version-successors",
        "arb:switch-version",
        "arb:semantic-search",
        "arb:search-by-symbol",
        "arb:get-metadata",
        "arb:get-dependencies",
        "arb:get-dependents",
        "arb:closure",
        "arb:create",
        "arb:update",
        "arb:delete",
        "arb:eval-readonly",
        "arb:eval",
        "arb:error?",
        "%arb:tx-begin",
        "%arb:tx-commit",
        "%arb:tx-abort",
        "%arb:eval-at-tier",
        "%arb:load-ended",
        "%arb:check-tier",
    ];
    const ARGS: &[&str] = &[
        "0",
        "1",
        "2",
        "256",
        "257",
        "258",
        "-1",
        "18446744073709551615",
        "18446744073709551616",
        "1.5",
        "#f",
        "#t",
        "'()",
        "'(256)",
        "'((256 . \"f\"))",
        "'((256 . 7))",
        "'(\"f\" \"g\")",
        "\"(define (f x) x)\"",
        "\"(define (g y) (f y))\"",
        "\"(lambda (x) x)\"",
        "\"(\"",
        "\"\"",
        "\"f\"",
        "\"*\"",
        "\"(((\"",
        "\"exact\"",
        "\"regex\"",
        "\"fuzzy\"",
        "\"排序\"",
        "'sym",
        "'(\"description\" . \"d\")",
        "'((\"code\" . \"(define (f x) (* x 2))\"))",
        "'((\"dependencies\" . (256)))",
        "'(+ 1 2)",
        "'(f 3)",
        "'(arb:create \"(define h 1)\" '() \"h\" \"c\" '(\"h\"))",
        "(make-vector 3 0)",
        "(lambda (x) x)",
        "f",
        "g",
        "h",
        "@#256",
    ];
    let mut r = Rng::with_seed(0x0123_4567_89ab_cdef);
    let mut e = Engine::new();
    e.set_tier(arbores_core::Tier::System);
    e.set_limits(Limits {
        max_steps: 200_000,
        max_memory: 64 << 20,
    });
    for round in 0..400 {
        let mut src = String::new();
        let wrap = r.u64(..4);
        if wrap == 1 {
            src.push_str("(arb:transaction ");
        }
        for _ in 0..1 + r.u64(..4) {
            let p = PROCS[r.usize(..PROCS.len())];
            src.push('(');
            src.push_str(p);
            for _ in 0..r.u64(..6) {
                src.push(' ');
                src.push_str(ARGS[r.usize(..ARGS.len())]);
            }
            src.push_str(") ");
        }
        if wrap == 1 {
            src.push(')');
        }
        let src = if wrap == 2 {
            format!("(guard (e (#t 'caught)) {src})")
        } else {
            src
        };
        let _ = e.eval(&src);
        if round % 50 == 0 {
            let v = e.eval("(+ 1 2)");
            assert_eq!(v.value.as_deref(), Some("3"), "after {src}");
        }
    }
    // Still a working knowledge base.
    let v = e.eval(
        "(arb:create \"(define (still-works x) (+ x 1))\" '() \"ok\" \"function\" '(\"still-works\"))
         (still-works 41)",
    );
    assert_eq!(v.value.as_deref(), Some("42"), "{:?}", v.error);
    let v = e.eval("(arb:error? (arb:get-metadata 1))");
    assert_eq!(v.value.as_deref(), Some("#f"));
}

/// Code nested 100,000 levels deep, of every shape the compiler walks,
/// reads, compiles and runs on a test thread's small stack: the front end
/// and the code generator walk it on a heap stack, and the expression and
/// the templates it makes drop without recursion.
#[test]
fn deep_code_compiles_and_runs() {
    const N: usize = 100_000;
    let nest = |open: &str, middle: &str, close: &str| {
        format!("{}{middle}{}", open.repeat(N), close.repeat(N))
    };
    let cases: Vec<(String, String)> = vec![
        (nest("(+ 1 ", "0", ")"), N.to_string()),
        (nest("(car (list ", "7", "))"), "7".into()),
        (nest("(if #t ", "7", " 0)"), "7".into()),
        // A procedure holds at most 65,535 locals at once (frame slots
        // are 16-bit): 60,000 nested lets, each binding one.
        (
            "(let ((x 1)) ".repeat(60_000) + "x" + &")".repeat(60_000),
            "1".into(),
        ),
        (nest("((lambda () ", "5", "))"), "5".into()),
        (nest("(and #t ", "3", ")"), "3".into()),
        (nest("(begin 1 ", "4", ")"), "4".into()),
        (
            format!(
                "(let* ({}) x)",
                "(x 1) ".to_string() + &"(x (+ x 1)) ".repeat(60_000 - 1)
            ),
            "60000".into(),
        ),
        (
            format!("(cond {} (else 2))", "(#f 1) ".repeat(N)),
            "2".into(),
        ),
        (
            format!(
                "(let loop ((x `{}) (n 0)) (if (pair? x) (loop (car x) (+ n 1)) (list n x)))",
                nest("(", ",(+ 1 1)", ")")
            ),
            format!("({N} 2)"),
        ),
        (
            format!(
                "(eval (let loop ((n {N}) (e 0)) (if (= n 0) e (loop (- n 1) (list '+ 1 e)))) \
                 (scheme-report-environment 5))"
            ),
            N.to_string(),
        ),
    ];
    let mut e = Engine::new();
    e.set_limits(Limits {
        max_steps: 100_000_000,
        max_memory: 1 << 30,
    });
    for (program, expected) in &cases {
        let shown: String = program.chars().take(40).collect();
        let r = e.eval(program);
        assert_eq!(
            r.value.as_deref(),
            Some(expected.as_str()),
            "{shown}: {:?}",
            r.error
        );
    }
    // More locals than a frame has slots: a clear error, and the engine goes on.
    let r = e.eval(&("(let ((x 1)) ".repeat(N) + "x" + &")".repeat(N)));
    let err = r.error.expect("an error");
    assert!(
        err.message.contains("too many local variables"),
        "{}",
        err.message
    );
    assert_eq!(e.eval("(* 6 7)").value.as_deref(), Some("42"));
}

/// Code nested deeper than the memory cap leaves room for ends with the
/// memory limit, and the engine goes on.
#[test]
fn code_deeper_than_the_cap_is_a_memory_error() {
    let mut e = Engine::new();
    e.set_limits(Limits {
        max_steps: 100_000_000,
        max_memory: 64 << 20,
    });
    let deep = format!(
        "(eval (let loop ((n 1000000) (e 0)) (if (= n 0) e (loop (- n 1) (list '+ 1 e)))) \
         (scheme-report-environment 5))"
    );
    let r = e.eval(&deep);
    let err = r.error.expect("an error");
    assert_eq!(
        err.kind,
        arbores_core::ErrorKind::MemoryLimit,
        "{}",
        err.message
    );
    assert_eq!(e.eval("(* 6 7)").value.as_deref(), Some("42"));
}
