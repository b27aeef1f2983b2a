//! Text analysis shared by the search indexes: how descriptions, symbol
//! names, code and queries become words.
//!
//! - Words of alphabetic scripts are runs of letters and digits, split
//!   also where a lower-case letter meets an upper-case one (`mergeSort`),
//!   and lowercased. Symbol names split the same way: `merge-sort` is
//!   merge, sort; `string->list` is string, list.
//! - Chinese, Japanese and Korean text has no spaces between words: a run
//!   of such characters is one piece, which the lexical index cuts into
//!   character pairs and the static embedder segments with its vocabulary.
//! - Code contributes its identifiers (split as names are) and the text of
//!   its string literals; numbers, characters and comments are skipped.

/// One piece of analysed text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// A lowercased word of an alphabetic script.
    Word(&'a str),
    /// A run of CJK characters.
    Cjk(&'a [char]),
}

/// Scripts written without spaces between words.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF        // Hiragana, Katakana
        | 0x31F0..=0x31FF      // Katakana phonetic extensions
        | 0x3400..=0x4DBF      // CJK extension A
        | 0x4E00..=0x9FFF      // CJK unified ideographs
        | 0xAC00..=0xD7AF      // Hangul syllables
        | 0xF900..=0xFAFF      // CJK compatibility ideographs
        | 0x20000..=0x3134F    // CJK extensions B–G
    )
}

/// Reusable buffers of `pieces`, so that analysing a million descriptions
/// allocates once.
#[derive(Default)]
pub struct Scratch {
    word: String,
    cjk: Vec<char>,
}

/// Calls `f` with every piece of `text`, in order.
pub fn pieces(text: &str, scratch: &mut Scratch, f: &mut dyn FnMut(Piece<'_>)) {
    let Scratch { word, cjk } = scratch;
    word.clear();
    cjk.clear();
    // Whether the previous character was a lower-case letter or a digit:
    // an upper-case letter after one starts a new word (camelCase).
    let mut after_lower = false;
    for c in text.chars() {
        if is_cjk(c) {
            if !word.is_empty() {
                f(Piece::Word(word));
                word.clear();
            }
            cjk.push(c);
            after_lower = false;
            continue;
        }
        if !cjk.is_empty() {
            f(Piece::Cjk(cjk));
            cjk.clear();
        }
        if c.is_alphanumeric() {
            let upper = c.is_uppercase();
            if upper && after_lower && !word.is_empty() {
                f(Piece::Word(word));
                word.clear();
            }
            after_lower = !upper;
            if c.is_ascii() {
                word.push(c.to_ascii_lowercase());
            } else {
                word.extend(c.to_lowercase());
            }
        } else {
            after_lower = false;
            if !word.is_empty() {
                f(Piece::Word(word));
                word.clear();
            }
        }
    }
    if !word.is_empty() {
        f(Piece::Word(word));
    }
    if !cjk.is_empty() {
        f(Piece::Cjk(cjk));
    }
}

/// The parts of Scheme source that say what it is about: identifiers and
/// the contents of string literals, separated by spaces (each is then
/// analysed by `pieces`). Comments, numbers, characters and booleans are
/// left out. Never fails: text that is not valid Scheme is read as far as
/// these simple rules go.
pub fn code_words(code: &str, out: &mut String) {
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ';' => {
                // A line comment: to the end of the line.
                chars.by_ref().find(|&c| c == '\n');
            }
            '"' => {
                out.push(' ');
                let mut escaped = false;
                for c in chars.by_ref() {
                    if escaped {
                        escaped = false;
                        out.push(' ');
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        break;
                    } else {
                        out.push(c);
                    }
                }
                out.push(' ');
            }
            '#' => {
                // #\x characters, #t/#f, #( vectors, #u8( ...: skip the
                // token (a vector's parenthesis is left to the loop).
                if chars.peek() == Some(&'\\') {
                    chars.next();
                    chars.next();
                }
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || "()[]\"';`,".contains(c) {
                        break;
                    }
                    chars.next();
                }
            }
            c if c.is_whitespace() || "()[]'`,".contains(c) => out.push(' '),
            c => {
                // An identifier or a number: numbers start with a digit,
                // or a sign or dot followed by one.
                let mut token = String::new();
                token.push(c);
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || "()[]\"';`,".contains(c) {
                        break;
                    }
                    token.push(c);
                    chars.next();
                }
                let numeric = token.starts_with(|c: char| c.is_ascii_digit())
                    || (token.len() > 1
                        && token.starts_with(['+', '-', '.'])
                        && token[1..].starts_with(|c: char| c.is_ascii_digit()));
                if !numeric {
                    out.push(' ');
                    out.push_str(&token);
                    out.push(' ');
                }
            }
        }
    }
}

/// Words that say what a node *is*, which its description leaves unsaid:
/// a description says "merge sort", never "merge sort, a procedure". A
/// query's generic head word ("sort algorithm", 排序算法 through its gloss,
/// "hash function") then finds what it names, and only that:
///
/// - a procedure (its code defines one, `(define (f ...) ...)` or
///   `(define f (lambda ...))`, or its type is "function" or "procedure")
///   is a procedure, function, routine and method;
/// - a predicate (its name ends in `?`, or every value it returns is a
///   truth value: `is_predicate`) is also a predicate, and no algorithm:
///   it checks whether something holds (`sorted?` is no sort);
/// - another procedure that iterates by itself (it calls itself, or runs a named
///   `let`, a `do` loop or a fold) is also an algorithm: a step repeated
///   until the problem is solved, where a procedure that hands its input to
///   one library call is not (`(define (f l) (sort l <))`);
/// - a node whose code defines a value that is no procedure is a constant.
///
/// Appends the words, separated by spaces, to `out`; every one is in
/// `IMPLIED_VOCABULARY`.
pub fn implied_words(kind: Option<&str>, code: Option<&str>, out: &mut String) {
    let tokens: Vec<&str> = match code {
        Some(c) => scheme_tokens(c),
        None => Vec::new(),
    };
    // (define (name ...) ...) or (define name (lambda ...)).
    let (defined, procedure_code) = match tokens.as_slice() {
        ["(", "define", "(", name, ..] => (Some(*name), true),
        ["(", "define", name, "(", head, ..] if !name.starts_with('(') => {
            (Some(*name), matches!(*head, "lambda" | "case-lambda"))
        }
        ["(", "define", name, ..] => (Some(*name), false),
        _ => (None, false),
    };
    let kind = kind.unwrap_or("").trim().to_ascii_lowercase();
    let procedure = procedure_code || matches!(kind.as_str(), "function" | "procedure");
    if procedure {
        for w in &IMPLIED_VOCABULARY[..4] {
            out.push(' ');
            out.push_str(w);
        }
        if procedure_code && is_predicate(&tokens, defined) {
            out.push(' ');
            out.push_str(IMPLIED_VOCABULARY[6]);
        } else if iterates(&tokens, defined) {
            out.push(' ');
            out.push_str(IMPLIED_VOCABULARY[4]);
        }
    } else if defined.is_some() || kind == "constant" {
        out.push(' ');
        out.push_str(IMPLIED_VOCABULARY[5]);
    }
}

/// Every word `implied_words` gives (none changed by `stem`).
pub const IMPLIED_VOCABULARY: [&str; 7] = [
    "procedure",
    "function",
    "routine",
    "method",
    "algorithm",
    "constant",
    "predicate",
];

/// Whether a procedure's code (its tokens) is a predicate: its name ends
/// in `?`, as Scheme names its predicates, or every value its body can
/// return is a truth value (`#t`, `#f`, a comparison, a call of a
/// predicate, `not`, or `and`/`or`/`if`/`cond`/`case`/`let` of such
/// values, a call of itself counting as its own value). A predicate tells
/// whether something holds: a check, not an algorithm that computes or
/// arranges something (`sorted?` is no sort).
fn is_predicate(tokens: &[&str], defined: Option<&str>) -> bool {
    let Some(name) = defined else {
        return false;
    };
    if name.ends_with('?') {
        return true;
    }
    let tree = Tree::parse(tokens);
    // (define (name args ...) body ...) or (define name (lambda (args) body ...)).
    let Some(Tree::List(define)) = tree.first() else {
        return false;
    };
    let body: &[Tree] = match define.get(1) {
        Some(Tree::List(_)) => define.get(2..).unwrap_or(&[]),
        _ => match define.get(2) {
            Some(Tree::List(l)) => l.get(2..).unwrap_or(&[]),
            _ => &[],
        },
    };
    let mut truth = false;
    match body.last() {
        Some(last) => returns_truth(last, name, 0, &mut truth) && truth,
        None => false,
    }
}

/// Code as nested lists of atoms (from `scheme_tokens`); an unbalanced
/// text is closed where it ends, and lists nested deeper than
/// `Tree::DEPTH` are left out (so that no recursion over it goes deep).
enum Tree<'a> {
    Atom(&'a str),
    List(Vec<Tree<'a>>),
}

impl<'a> Tree<'a> {
    const DEPTH: usize = 64;

    fn parse(tokens: &[&'a str]) -> Vec<Tree<'a>> {
        let mut stack: Vec<Vec<Tree<'a>>> = vec![Vec::new()];
        // Lists opened beyond the depth kept, not yet closed.
        let mut beyond = 0usize;
        for &t in tokens {
            if beyond > 0 {
                match t {
                    "(" => beyond += 1,
                    ")" => beyond -= 1,
                    _ => {}
                }
                continue;
            }
            match t {
                "(" if stack.len() > Self::DEPTH => beyond = 1,
                "(" => stack.push(Vec::new()),
                ")" => {
                    if stack.len() > 1 {
                        let l = stack.pop().unwrap_or_default();
                        if let Some(top) = stack.last_mut() {
                            top.push(Tree::List(l));
                        }
                    }
                }
                a => {
                    if let Some(top) = stack.last_mut() {
                        top.push(Tree::Atom(a));
                    }
                }
            }
        }
        while stack.len() > 1 {
            let l = stack.pop().unwrap_or_default();
            if let Some(top) = stack.last_mut() {
                top.push(Tree::List(l));
            }
        }
        stack.pop().unwrap_or_default()
    }
}

/// Whether every value `e`, in tail position of procedure `name`, can
/// return is a truth value; `truth` is set when one is something other
/// than a call of `name` itself. Deep nesting is no truth value.
fn returns_truth(e: &Tree, name: &str, depth: usize, truth: &mut bool) -> bool {
    if depth > 64 {
        return false;
    }
    let all = |es: &[Tree], truth: &mut bool| {
        !es.is_empty() && es.iter().all(|e| returns_truth(e, name, depth + 1, truth))
    };
    let list = match e {
        Tree::Atom(a) => {
            let t = matches!(*a, "#t" | "#f" | "#true" | "#false");
            *truth |= t;
            return t;
        }
        Tree::List(l) => l,
    };
    let Some(Tree::Atom(head)) = list.first() else {
        return false;
    };
    let args = &list[1..];
    match *head {
        "and" | "or" => all(args, truth),
        "if" => args.len() == 3 && all(&args[1..], truth),
        "when" | "unless" | "begin" => args
            .last()
            .is_some_and(|l| all(std::slice::from_ref(l), truth)),
        "let" | "let*" | "letrec" | "letrec*" | "let-values" | "let*-values" => {
            // A named let's body comes after its name and bindings.
            let body = match args.first() {
                Some(Tree::Atom(_)) => args.get(2..),
                _ => args.get(1..),
            };
            body.and_then(|b| b.last())
                .is_some_and(|l| all(std::slice::from_ref(l), truth))
        }
        "cond" | "case" => {
            let clauses = if *head == "case" {
                args.get(1..)
            } else {
                Some(args)
            };
            clauses.is_some_and(|cs| {
                !cs.is_empty()
                    && cs.iter().all(|c| match c {
                        Tree::List(c) => match c.last() {
                            Some(last) if c.len() > 1 => {
                                returns_truth(last, name, depth + 1, truth)
                            }
                            // A clause of only a test returns the test.
                            Some(test) => returns_truth(test, name, depth + 1, truth),
                            None => false,
                        },
                        Tree::Atom(_) => false,
                    })
            })
        }
        h if h == name => true,
        h => {
            let t = h == "not"
                || h.ends_with('?')
                || matches!(h, "=" | "<" | ">" | "<=" | ">=" | "char=?" | "string=?");
            *truth |= t;
            t
        }
    }
}

/// Whether code (its tokens) loops by itself: the defined name used again
/// after its definition's head, a named `let`, a `do` loop, or a fold.
fn iterates(tokens: &[&str], defined: Option<&str>) -> bool {
    let head = match tokens {
        ["(", "define", "(", ..] => 4,
        _ => 3,
    };
    let recursive = defined.is_some_and(|name| tokens.iter().skip(head).any(|t| *t == name));
    recursive
        || tokens.windows(3).any(|w| match w {
            ["(", "let", name] => *name != "(" && *name != ")",
            ["(", "do", next] => *next == "(",
            ["(", f, _] => matches!(
                *f,
                "fold" | "fold-left" | "fold-right" | "reduce" | "reduce-right"
            ),
            _ => false,
        })
}

/// Scheme source as parentheses and atoms (strings, comments and
/// characters skipped), enough for `implied_words`.
fn scheme_tokens(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'(' | b'[' => {
                out.push("(");
                i += 1;
            }
            b')' | b']' => {
                out.push(")");
                i += 1;
            }
            b';' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            c if c.is_ascii_whitespace() || c == b'\'' || c == b'`' || c == b',' => i += 1,
            _ => {
                let start = i;
                if c == b'#' && bytes.get(i + 1) == Some(&b'\\') {
                    i += 3;
                }
                while i < bytes.len()
                    && !bytes[i].is_ascii_whitespace()
                    && !b"()[]\";'`,".contains(&bytes[i])
                {
                    i += 1;
                }
                let end = i.min(bytes.len());
                if let Some(t) = code.get(start..end) {
                    if !t.is_empty() {
                        out.push(t);
                    }
                }
            }
        }
    }
    out
}

/// A light English suffix stripper: enough to make `sort`, `sorts`,
/// `sorted` and `sorting` one word, conservative enough to leave short
/// words alone.
pub fn stem(word: &str) -> &str {
    let n = word.len();
    if !word.is_ascii() {
        return word;
    }
    for (suffix, min_len) in [("ing", 6), ("ed", 5), ("es", 5), ("s", 4)] {
        if n >= min_len && word.ends_with(suffix) {
            if suffix == "s" && word.ends_with("ss") {
                return word;
            }
            return &word[..n - suffix.len()];
        }
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        pieces(text, &mut Scratch::default(), &mut |p| {
            out.push(match p {
                Piece::Word(w) => w.to_string(),
                Piece::Cjk(c) => format!("[{}]", c.iter().collect::<String>()),
            })
        });
        out
    }

    #[test]
    fn words_names_and_cjk_runs() {
        assert_eq!(all("merge-sort"), ["merge", "sort"]);
        assert_eq!(all("string->list"), ["string", "list"]);
        assert_eq!(
            all("mergeSort HTTPServer x2y"),
            ["merge", "sort", "httpserver", "x2y"]
        );
        assert_eq!(
            all("Quick sort 快速排序, OK"),
            ["quick", "sort", "[快速排序]", "ok"]
        );
        assert_eq!(all("排序algorithm算法"), ["[排序]", "algorithm", "[算法]"]);
        assert_eq!(all("ÉCOLE straße"), ["école", "straße"]);
        assert_eq!(all(" ,;- "), Vec::<String>::new());
    }

    #[test]
    fn code_words_keep_identifiers_and_strings() {
        let mut out = String::new();
        code_words(
            "(define (fN x) ; comment here\n (string-append \"Hello, \\\"world\\\"\" #\\a #t 42 -1.5 x->y 'sym))",
            &mut out,
        );
        assert_eq!(
            all(&out),
            ["define", "f", "n", "x", "string", "append", "hello", "world", "x", "y", "sym"]
        );
        // Unbalanced input is read as far as it goes.
        let mut out = String::new();
        code_words("(display \"unterminated", &mut out);
        assert_eq!(all(&out), ["display", "unterminated"]);
    }

    fn implied(kind: &str, code: &str) -> String {
        let mut out = String::new();
        implied_words(Some(kind), Some(code), &mut out);
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn what_code_says_a_node_is() {
        let p = "procedure function routine method";
        let a = "procedure function routine method algorithm";
        // Recursion, a named let, a do loop and a fold iterate.
        assert_eq!(
            implied(
                "function",
                "(define (len l) (if (null? l) 0 (+ 1 (len (cdr l)))))"
            ),
            a
        );
        assert_eq!(
            implied(
                "",
                "(define (f v) (let loop ((i 0)) (if (< i 3) (loop (+ i 1)) i)))"
            ),
            a
        );
        assert_eq!(
            implied("", "(define (f v) (do ((i 0 (+ i 1))) ((= i 3) v)))"),
            a
        );
        assert_eq!(implied("", "(define f (lambda (l) (fold-left + 0 l)))"), a);
        // One library call, or a plain let, does not.
        assert_eq!(implied("function", "(define (f l) (sort l <))"), p);
        assert_eq!(implied("", "(define (f x) (let ((y 1)) (+ x y)))"), p);
        // A string holding the name is no call.
        assert_eq!(implied("", "(define (f x) (display \"f\"))"), p);
        assert_eq!(
            implied("constant", "(define label \"按名称排序\")"),
            "constant"
        );
        assert_eq!(implied("", "(define limit 10)"), "constant");
        assert_eq!(implied("note", "just words"), "");
        // A predicate is a check, not an algorithm: by its name, or by
        // every value it returns being a truth value.
        let check = "procedure function routine method predicate";
        assert_eq!(
            implied(
                "function",
                "(define (sorted? l) (or (null? l) (null? (cdr l)) (and (<= (car l) (cadr l)) (sorted? (cdr l)))))"
            ),
            check
        );
        assert_eq!(
            implied(
                "",
                "(define (all-even l) (cond ((null? l) #t) ((odd? (car l)) #f) (else (all-even (cdr l)))))"
            ),
            check
        );
        assert_eq!(
            implied("", "(define small (lambda (x) (let ((y 3)) (< x y))))"),
            check
        );
        // One value that is no truth value, or only its own call, is no
        // predicate.
        assert_eq!(
            implied(
                "",
                "(define (find l x) (cond ((null? l) #f) ((= (car l) x) l) (else (find (cdr l) x))))"
            ),
            a
        );
        assert_eq!(implied("", "(define (f x) (if (> x 0) #t))"), p);
        assert_eq!(implied("", "(define (f x) (f x))"), a);
        // Deep or unbalanced code never fails.
        let deep = format!("(define (f x) {}#t", "(and ".repeat(100_000));
        assert_eq!(implied("", &deep), p);
        // Unbalanced or odd input never fails.
        assert_eq!(implied("", "(define (f \"x"), p);
        assert_eq!(implied("", "(define"), "");
        assert_eq!(implied("", "#\\a ("), "");
    }

    #[test]
    fn the_implied_vocabulary_is_stemmed() {
        for w in IMPLIED_VOCABULARY {
            assert_eq!(stem(w), w);
        }
    }

    #[test]
    fn stems() {
        assert_eq!(stem("sorting"), "sort");
        assert_eq!(stem("sorted"), "sort");
        assert_eq!(stem("sorts"), "sort");
        assert_eq!(stem("class"), "class");
        assert_eq!(stem("is"), "is");
        assert_eq!(stem("algorithms"), "algorithm");
        assert_eq!(stem("trié"), "trié");
    }
}
