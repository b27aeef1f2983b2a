//! Random Scheme programs from a grammar of the language, driven by the
//! fuzzer's bytes: literals of every type, variables in scope, calls of the
//! standard procedures, and every special and derived form, nested to a
//! bounded depth. Loops are bounded so most programs end on their own; the
//! limits catch the rest.
//!
//! The bytes decide every choice, so libFuzzer's mutations of an input are
//! small changes of the program, and an input always gives the same text.

use arbitrary::{Result, Unstructured};

/// Procedures a generated call may name: the standard library as the
/// engine provides it, plus a few names that are syntax elsewhere.
#[rustfmt::skip]
const PROCEDURES: &[&str] = &[
    "+", "-", "*", "/", "=", "<", ">", "<=", ">=", "abs", "quotient", "remainder", "modulo",
    "floor/", "truncate/", "gcd", "lcm", "expt", "exact", "inexact", "exact-integer-sqrt",
    "sqrt", "exp", "log", "sin", "atan", "floor", "round", "numerator", "denominator",
    "number->string", "string->number", "max", "min", "square", "exact-integer?", "nan?",
    "zero?", "odd?", "even?", "number?", "integer?", "rational?", "car", "cdr", "cons", "list",
    "length", "append", "reverse", "list-tail", "list-ref", "list-copy", "memq", "member",
    "assq", "assoc", "list->vector", "vector->list", "make-list", "set-car!", "set-cdr!",
    "cadr", "cddr", "caar", "pair?", "null?", "list?", "symbol?", "string?", "vector?",
    "procedure?", "boolean?", "char?", "eq?", "eqv?", "equal?", "not", "vector", "make-vector",
    "vector-ref", "vector-set!", "vector-length", "vector-fill!", "vector-copy",
    "vector-append", "vector-map", "vector-for-each", "string", "make-string", "string-length",
    "string-ref", "string-set!", "substring", "string-append", "string-copy", "string->list",
    "list->string", "string->symbol", "symbol->string", "string-upcase", "string-downcase",
    "string=?", "string<?", "string-ci=?", "string-map", "string-for-each", "string->vector",
    "vector->string", "string-fill!", "string-copy!", "char->integer", "integer->char",
    "char-upcase", "char-alphabetic?", "char-numeric?", "digit-value", "bytevector",
    "make-bytevector", "bytevector-u8-ref", "bytevector-u8-set!", "bytevector-length",
    "bytevector-copy", "bytevector-append", "utf8->string", "string->utf8", "apply", "map",
    "for-each", "call/cc", "call-with-current-continuation", "values", "call-with-values",
    "dynamic-wind", "with-exception-handler", "raise", "raise-continuable", "error",
    "error-object?", "error-object-message", "error-object-irritants", "make-parameter",
    "force", "make-promise", "promise?", "eval", "display", "write", "write-shared",
    "write-simple", "newline", "write-char", "write-string", "open-input-string",
    "open-output-string", "get-output-string", "read", "read-char", "peek-char", "read-line",
    "read-string", "eof-object", "eof-object?", "iota", "filter", "reduce", "fold-left",
    "fold-right", "string-join", "string-contains", "list-index", "cons*", "boolean=?",
    "symbol=?", "features", "current-second", "current-jiffy", "exit",
];

/// Names a program may define, bind and assign.
const LOCALS: &[&str] = &["a", "b", "c", "d", "f", "g", "k", "x", "y", "loop"];

/// Standard names a program may shadow or redefine (hygiene, inlining guards).
const SHADOWED: &[&str] = &[
    "list",
    "car",
    "+",
    "if",
    "quote",
    "else",
    "=>",
    "...",
    "_",
    "vector-ref",
];

pub struct Gen<'a, 'b> {
    u: &'a mut Unstructured<'b>,
    out: String,
    /// Nesting left before only leaves are generated.
    depth: u32,
    /// Total nodes left: keeps a program's size in proportion to its input.
    budget: u32,
}

impl<'a, 'b> Gen<'a, 'b> {
    pub fn new(u: &'a mut Unstructured<'b>) -> Self {
        Gen {
            u,
            out: String::new(),
            depth: 8,
            budget: 400,
        }
    }

    /// A whole program: a few top-level forms.
    pub fn program(mut self) -> Result<String> {
        // Every name a program uses has a value to start with.
        self.w(
            "(define a 1) (define b '(1 2)) (define c \"str\") (define d (vector 1 2)) \
                (define f car) (define g (lambda args args)) (define k #f) (define x 2.5) \
                (define y 'y) (define loop 0)\n",
        );
        let forms = self.u.int_in_range(1..=6)?;
        for _ in 0..forms {
            if self.u.is_empty() {
                break;
            }
            self.toplevel()?;
            self.out.push('\n');
        }
        Ok(self.out)
    }

    fn w(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> Result<T> {
        Ok(*self.u.choose(items)?)
    }

    fn toplevel(&mut self) -> Result<()> {
        match self.u.int_in_range(0..=9)? {
            0 => {
                self.w("(define (");
                let name = self.pick(LOCALS)?;
                self.w(name);
                let params = self.u.int_in_range(0..=3)?;
                for p in ["x", "y", "k"].iter().take(params) {
                    self.w(" ");
                    self.w(p);
                }
                self.w(") ");
                self.expr()?;
                self.w(")");
            }
            1 => {
                self.w("(define ");
                let name = if self.u.ratio(1, 8)? {
                    self.pick(SHADOWED)?
                } else {
                    self.pick(LOCALS)?
                };
                self.w(name);
                self.w(" ");
                self.expr()?;
                self.w(")");
            }
            2 => self.define_syntax()?,
            3 => {
                self.w("(define-record-type point (make-point x y) point? (x point-x set-point-x!) (y point-y))");
            }
            4 if self.u.ratio(1, 4)? => {
                // Raw tokens: malformed text inside well-formed context.
                self.junk()?;
            }
            _ => self.expr()?,
        }
        Ok(())
    }

    fn junk(&mut self) -> Result<()> {
        const TOKENS: &[&str] = &[
            "(",
            ")",
            "'",
            "`",
            ",",
            ",@",
            ".",
            "#(",
            "#u8(",
            "\"",
            "#\\",
            "#;",
            "#|",
            "|#",
            "#!fold-case",
            "#0=",
            "#0#",
            "[",
            "]",
            "{",
            "#e",
            "#x",
            "1/0",
            "#\\x110000",
            "\\x41;",
            "|a b|",
            "#d1e400",
            "1e-400",
            "+nan.0",
        ];
        for _ in 0..self.u.int_in_range(1..=8)? {
            let t = self.pick(TOKENS)?;
            self.w(t);
            self.w(" ");
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<()> {
        if self.depth == 0 || self.budget == 0 || self.u.is_empty() {
            return self.leaf();
        }
        self.budget -= 1;
        self.depth -= 1;
        let r = self.compound();
        self.depth += 1;
        r
    }

    fn body(&mut self) -> Result<()> {
        for i in 0..self.u.int_in_range(1..=3)? {
            if i > 0 {
                self.w(" ");
            }
            self.expr()?;
        }
        Ok(())
    }

    fn exprs(&mut self, min: u32, max: u32) -> Result<()> {
        for _ in 0..self.u.int_in_range(min..=max)? {
            self.w(" ");
            self.expr()?;
        }
        Ok(())
    }

    fn bindings(&mut self) -> Result<()> {
        self.w("(");
        let mut used = Vec::new();
        for _ in 0..self.u.int_in_range(0..=3)? {
            let v = self.pick(LOCALS)?;
            if used.contains(&v) {
                continue;
            }
            used.push(v);
            self.w("(");
            self.w(v);
            self.w(" ");
            self.expr()?;
            self.w(")");
        }
        self.w(")");
        Ok(())
    }

    fn compound(&mut self) -> Result<()> {
        match self.u.int_in_range(0..=34)? {
            0..=9 => {
                self.w("(");
                let p = self.pick(PROCEDURES)?;
                self.w(p);
                self.exprs(0, 4)?;
                self.w(")");
            }
            10 => {
                self.w("(if ");
                self.exprs(2, 3)?;
                self.w(")");
            }
            11 => {
                let form = self.pick(&["let", "let*", "letrec", "letrec*"])?;
                self.w("(");
                self.w(form);
                self.w(" ");
                self.bindings()?;
                self.w(" ");
                self.body()?;
                self.w(")");
            }
            12 => {
                // A named let that counts to a small bound.
                let n = self.u.int_in_range(0..=200)?;
                self.w(&format!(
                    "(let loop ((i 0) (acc '())) (if (< i {n}) (loop (+ i 1) (cons "
                ));
                self.expr()?;
                self.w(" acc)) acc))");
            }
            13 => {
                self.w("(lambda (");
                let first = self.pick(LOCALS)?;
                let second = self.pick(LOCALS)?;
                match self.u.int_in_range(0..=2)? {
                    0 => {}
                    1 => self.w(first),
                    _ if first == second => self.w(first),
                    _ => {
                        self.w(first);
                        self.w(" ");
                        self.w(second);
                    }
                }
                if !self.out.ends_with('(') && self.u.ratio(1, 4)? {
                    self.w(" . rest");
                }
                self.w(") ");
                self.body()?;
                self.w(")");
            }
            14 => {
                self.w("((lambda (x y) ");
                self.body()?;
                self.w(")");
                self.exprs(2, 2)?;
                self.w(")");
            }
            15 => {
                self.w("(set! ");
                let v = self.pick(LOCALS)?;
                self.w(v);
                self.w(" ");
                self.expr()?;
                self.w(")");
            }
            16 => {
                self.w("(begin");
                self.exprs(1, 3)?;
                self.w(")");
            }
            17 => {
                self.w("(cond (");
                self.expr()?;
                self.w(" => (lambda (x) x)) (");
                self.expr()?;
                self.w(" ");
                self.expr()?;
                self.w(") (else ");
                self.expr()?;
                self.w("))");
            }
            18 => {
                self.w("(case ");
                self.expr()?;
                self.w(" ((1 2 a) ");
                self.expr()?;
                self.w(") ((#\\a \"s\") => list) (else ");
                self.expr()?;
                self.w("))");
            }
            19 => {
                let form = self.pick(&["and", "or", "when", "unless"])?;
                self.w("(");
                self.w(form);
                self.exprs(1, 3)?;
                self.w(")");
            }
            20 => {
                let n = self.u.int_in_range(0..=100)?;
                self.w(&format!(
                    "(do ((i 0 (+ i 1)) (v (make-vector {n} 0))) ((= i {n}) v) (vector-set! v i "
                ));
                self.expr()?;
                self.w("))");
            }
            21 => {
                self.w("`(1 ,");
                self.expr()?;
                self.w(" ,@(list ");
                self.expr()?;
                self.w(") #(a ,");
                self.expr()?;
                self.w("))");
            }
            22 => {
                self.w("(call/cc (lambda (k) ");
                self.expr()?;
                self.w(" (k ");
                self.expr()?;
                self.w(")))");
            }
            23 => {
                self.w("(dynamic-wind (lambda () ");
                self.expr()?;
                self.w(") (lambda () ");
                self.expr()?;
                self.w(") (lambda () ");
                self.expr()?;
                self.w("))");
            }
            24 => {
                self.w("(guard (e (#t (list 'caught e)) ((string? e) => string-length)) ");
                self.body()?;
                self.w(")");
            }
            25 => {
                self.w("(with-exception-handler (lambda (e) ");
                self.expr()?;
                self.w(") (lambda () ");
                let raise =
                    self.pick(&["(raise-continuable ", "(raise ", "(error \"boom\" ", "("])?;
                self.w(raise);
                self.expr()?;
                self.w(")))");
            }
            26 => {
                self.w("(call-with-values (lambda () (values");
                self.exprs(0, 3)?;
                self.w(")) list)");
            }
            27 => {
                self.w("(let-values (((a b) (values ");
                self.expr()?;
                self.w(" ");
                self.expr()?;
                self.w(")) ((c . d) (values 1 2 3))) ");
                self.body()?;
                self.w(")");
            }
            28 => {
                self.w("(let ((p (make-parameter 1))) (parameterize ((p ");
                self.expr()?;
                self.w(")) ");
                self.body()?;
                self.w("))");
            }
            29 => {
                let form = self.pick(&["delay", "delay-force", "make-promise"])?;
                self.w("(force (");
                self.w(form);
                self.w(" ");
                self.expr()?;
                self.w("))");
            }
            30 => {
                self.w("(let ((p (open-output-string))) (write ");
                self.expr()?;
                self.w(" p) (read (open-input-string (get-output-string p))))");
            }
            31 => {
                self.w("(case-lambda ((x) ");
                self.expr()?;
                self.w(") ((x . r) ");
                self.expr()?;
                self.w("))");
            }
            32 => {
                self.w("(let-syntax ((m (syntax-rules () ((_ x) (list x x)) ((_ x y ...) (list y ... x))))) (m");
                self.exprs(1, 3)?;
                self.w("))");
            }
            33 => {
                self.w("(eval '");
                self.datum(2)?;
                self.w(" (interaction-environment))");
            }
            _ => {
                self.w("(apply ");
                let p = self.pick(PROCEDURES)?;
                self.w(p);
                self.w(" (list");
                self.exprs(0, 3)?;
                self.w("))");
            }
        }
        Ok(())
    }

    fn define_syntax(&mut self) -> Result<()> {
        let pattern = self.pick(&[
            "((_ x) x)",
            "((_ x ...) (list x ...))",
            "((_ (a b) ...) (list (cons a b) ...))",
            "((_ x . y) (quote y))",
            "((_ #(x ...)) (vector x ...))",
            "((_ x) (let ((t x)) (if t t x)))",
            "((_ (x ...) ...) '((x ... 0) ...))",
            "((_ x y) (m y x))",
        ])?;
        self.w("(define-syntax m (syntax-rules () ");
        self.w(pattern);
        self.w("))");
        Ok(())
    }

    fn leaf(&mut self) -> Result<()> {
        match self.u.int_in_range(0..=5)? {
            0 | 1 => {
                let v = self.pick(LOCALS)?;
                self.w(v);
            }
            2 => {
                let p = self.pick(PROCEDURES)?;
                self.w(p);
            }
            3 => {
                self.w("'");
                self.datum(3)?;
            }
            _ => self.atom()?,
        }
        Ok(())
    }

    fn datum(&mut self, depth: u32) -> Result<()> {
        if depth == 0 || self.u.ratio(1, 2)? {
            return self.atom();
        }
        let kind = self.u.int_in_range(0..=2)?;
        self.w(["(", "#(", "["][kind as usize]);
        let close = if kind == 2 { "]" } else { ")" };
        let mut items = 0;
        for _ in 0..self.u.int_in_range(0..=4)? {
            self.datum(depth - 1)?;
            self.w(" ");
            items += 1;
        }
        if kind != 1 && items > 0 && self.u.ratio(1, 6)? {
            self.w(". ");
            self.atom()?;
        }
        self.w(close);
        Ok(())
    }

    fn atom(&mut self) -> Result<()> {
        match self.u.int_in_range(0..=12)? {
            0 => {
                let n: i64 = self.u.arbitrary()?;
                self.w(&n.to_string());
            }
            1 => {
                let n = self.u.int_in_range(-10..=10)?;
                self.w(&n.to_string());
            }
            2 => {
                let digits = self.u.int_in_range(19..=60)?;
                let d: String = (0..digits)
                    .map(|i| char::from(b'1' + (i % 9) as u8))
                    .collect();
                self.w(&d);
            }
            3 => {
                let (a, b): (i32, i32) = (self.u.arbitrary()?, self.u.arbitrary()?);
                self.w(&format!("{a}/{}", b.unsigned_abs().max(1)));
            }
            4 => {
                let f = self.pick(&[
                    "0.5", "-0.0", "+inf.0", "-inf.0", "+nan.0", "1e308", "1e-320", "3.14159",
                    "#e1.5", "#i1/3", "#x-ff", "#b101",
                ])?;
                self.w(f);
            }
            5 => {
                let s = self.pick(&[
                    "\"\"",
                    "\"abc\"",
                    "\"a\\nb\\tc\"",
                    "\"\\x3bb;\"",
                    "\"λ日本\"",
                    "\"\\\\\"",
                    "\"a\\\"b\"",
                ])?;
                self.w(s);
            }
            6 => {
                let c = self.pick(&[
                    "#\\a",
                    "#\\space",
                    "#\\newline",
                    "#\\x41",
                    "#\\λ",
                    "#\\null",
                    "#\\x0",
                    "#\\)",
                ])?;
                self.w(c);
            }
            7 => {
                let b = self.pick(&["#t", "#f", "#true", "#false"])?;
                self.w(b);
            }
            8 => self.w("'()"),
            9 => {
                let s = self.pick(&[
                    "'sym",
                    "'|two words|",
                    "'λ",
                    "'a.b",
                    "'...",
                    "'+",
                    "'-x",
                    "'->x",
                ])?;
                self.w(s);
            }
            10 => {
                self.w("#u8(");
                for _ in 0..self.u.int_in_range(0..=4)? {
                    let b: u8 = self.u.arbitrary()?;
                    self.w(&format!("{b} "));
                }
                self.w(")");
            }
            11 => {
                let n = self.u.int_in_range(0..=5)?;
                self.w(&format!("(make-vector {n} 'v)"));
            }
            _ => {
                let n = self.u.int_in_range(0..=8)?;
                self.w(&format!("(make-string {n} #\\z)"));
            }
        }
        Ok(())
    }
}

/// The program the bytes describe (empty input: an empty program).
pub fn program(data: &[u8]) -> String {
    let mut u = Unstructured::new(data);
    Gen::new(&mut u).program().unwrap_or_default()
}
