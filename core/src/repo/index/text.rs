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
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
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
