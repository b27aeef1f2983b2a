//! What the REPL reads: when typed lines make complete forms, where the
//! history is kept, and Tab completion for the line editor.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

/// Where the history is kept: ARBORES_HISTORY (empty: none), else the
/// user's state directory ($XDG_STATE_HOME/arbores/history, by default
/// ~/.local/state/arbores/history). Never beside the store: a store may
/// be shared, or another user's.
pub fn history_file() -> Option<PathBuf> {
    match std::env::var_os("ARBORES_HISTORY") {
        Some(path) if path.is_empty() => None,
        Some(path) => Some(PathBuf::from(path)),
        None => dirs::state_dir().map(|d| d.join("arbores").join("history")),
    }
}

/// Whether the history may be written at `path`: not into a directory or
/// a file another user owns (as when `sudo` keeps the caller's HOME).
pub fn history_is_ours(path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let owned = |p: &std::path::Path| match std::fs::metadata(p) {
        Ok(m) => m.uid() == me,
        Err(_) => true,
    };
    owned(path) && path.parent().is_none_or(owned)
}

#[derive(Debug, PartialEq, Eq)]
pub enum Input {
    /// Only blanks and comments.
    Empty,
    /// A list, string, `|symbol|` or block comment is still open.
    Open,
    /// Ready to evaluate (possibly with too many `)`, which the reader reports).
    Complete,
}

/// Whether `text` holds complete forms, judged lexically: enough to decide
/// when to stop reading lines, not to parse.
pub fn completeness(text: &str) -> Input {
    let mut depth: i64 = 0;
    let mut content = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ';' => {
                // A line comment: to the end of the line.
                chars.by_ref().find(|&c| c == '\n');
            }
            '"' | '|' => {
                content = true;
                let mut closed = false;
                while let Some(d) = chars.next() {
                    if d == '\\' {
                        chars.next();
                    } else if d == c {
                        closed = true;
                        break;
                    }
                }
                if !closed {
                    return Input::Open;
                }
            }
            '#' => match chars.peek() {
                Some('|') => {
                    chars.next();
                    let mut nesting = 1;
                    let mut prev = '\0';
                    while nesting > 0 {
                        let Some(d) = chars.next() else {
                            return Input::Open;
                        };
                        if prev == '|' && d == '#' {
                            nesting -= 1;
                            prev = '\0';
                        } else if prev == '#' && d == '|' {
                            nesting += 1;
                            prev = '\0';
                        } else {
                            prev = d;
                        }
                    }
                }
                Some('\\') => {
                    // A character literal such as #\( or #\" .
                    content = true;
                    chars.next();
                    chars.next();
                }
                _ => content = true,
            },
            '(' | '[' => {
                content = true;
                depth += 1;
            }
            ')' | ']' => {
                content = true;
                depth -= 1;
            }
            c if c.is_whitespace() => {}
            _ => content = true,
        }
    }
    if depth > 0 {
        Input::Open
    } else if content {
        Input::Complete
    } else {
        Input::Empty
    }
}

/// The REPL's commands, for completion after a `,` at the start of a line.
pub const COMMANDS: &[&str] = &[
    ",apropos",
    ",describe",
    ",help",
    ",load",
    ",log",
    ",quit",
    ",restore",
    ",save",
    ",settings",
    ",show",
    ",snapshots",
    ",time",
];

/// Where the names to complete come from: the session's bound names and
/// stored knowledge's names starting with a prefix (`%bound-names`).
pub type NameSource = Rc<RefCell<dyn FnMut(&str) -> Vec<String>>>;

/// The line editor's helper: Tab completion of names.
pub struct ReplHelper {
    pub names: NameSource,
}

/// Characters that end a name: delimiters, quotes and the like.
fn delimits(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '(' | ')' | '[' | ']' | '"' | ';' | '\'' | '`' | ',' | '#'
        )
}

/// The start (a byte offset) of the word that ends at `pos`.
fn word_start(line: &str, pos: usize) -> usize {
    line[..pos]
        .char_indices()
        .rev()
        .find(|&(_, c)| delimits(c))
        .map_or(0, |(i, c)| i + c.len_utf8())
}

impl Completer for ReplHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let pos = pos.min(line.len());
        let before = &line[..pos];
        // A command name.
        let trimmed = before.trim_start();
        if trimmed.starts_with(',') && !trimmed.contains(char::is_whitespace) {
            let start = pos - trimmed.len();
            let found = COMMANDS
                .iter()
                .filter(|c| c.starts_with(trimmed))
                .map(|c| pair(c))
                .collect();
            return Ok((start, found));
        }
        let start = word_start(line, pos);
        let prefix = &line[start..pos];
        if prefix.is_empty() {
            return Ok((pos, Vec::new()));
        }
        let names = (self.names.borrow_mut())(prefix);
        Ok((start, names.iter().map(|n| pair(n)).collect()))
    }
}

fn pair(name: &str) -> Pair {
    Pair {
        display: name.to_string(),
        replacement: name.to_string(),
    }
}

impl Hinter for ReplHelper {
    type Hint = String;
}

impl Highlighter for ReplHelper {}

impl Validator for ReplHelper {}

impl Helper for ReplHelper {}

#[cfg(test)]
mod tests {
    use super::{completeness, word_start, Input};

    #[test]
    fn balance() {
        assert_eq!(completeness(""), Input::Empty);
        assert_eq!(completeness("  ; just a comment\n"), Input::Empty);
        assert_eq!(completeness("#| block |#\n"), Input::Empty);
        assert_eq!(completeness("(+ 1 2)\n"), Input::Complete);
        assert_eq!(completeness("42\n"), Input::Complete);
        assert_eq!(completeness("(define (f x)\n"), Input::Open);
        assert_eq!(completeness("(display \"(\")\n"), Input::Complete);
        assert_eq!(completeness("(display \"a\n"), Input::Open);
        assert_eq!(completeness("(list #\\( #\\))\n"), Input::Complete);
        assert_eq!(completeness("(f ; )\n"), Input::Open);
        assert_eq!(completeness("#| (( |# 1\n"), Input::Complete);
        assert_eq!(completeness("#| #| |# (\n"), Input::Open);
        assert_eq!(completeness("'|a (b|\n"), Input::Complete);
        assert_eq!(completeness("(a))\n"), Input::Complete);
        assert_eq!(completeness("\"\\\"(\"\n"), Input::Complete);
    }

    #[test]
    fn words() {
        assert_eq!(word_start("(car", 4), 1);
        assert_eq!(word_start("(map string-up", 14), 5);
        assert_eq!(word_start("abc", 3), 0);
        assert_eq!(word_start("'(arb:se", 8), 2);
        assert_eq!(word_start("(λx", 4), 1);
    }
}
