//! The read-eval-print loop: with line editing and history on a terminal,
//! and without prompts when standard input is a pipe or a file.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use rustyline::error::ReadlineError;

use crate::backend::{EngineKind, Settings, Stopper};
use crate::exit::Exit;
use crate::grants::read_input;
use crate::report::{self, Style};
use crate::session::Session;
use crate::snapshots;

const HELP: &str = "\
Type Scheme forms; input continues on the next line while parentheses are open.
  ,help          this text
  ,settings      the engine, limits, tier and store in use
  ,save NAME     keep this session's definitions (closures and their state too) as NAME
  ,restore NAME  replace this session's definitions with those saved as NAME
  ,snapshots     the saved sessions (kept beside the store: STORE.sessions/)
  ,quit          leave (Ctrl-D works too)
Ctrl-C stops a running evaluation; at the prompt it discards the input typed so far.";

pub struct Repl<'a> {
    pub session: Session,
    pub settings: &'a Settings,
    pub stopper: &'a Stopper,
    /// How each evaluation is printed (text, or JSON with --json).
    pub style: Style,
}

impl Repl<'_> {
    /// The status to end with: success, or what the program gave to
    /// `(exit STATUS)`.
    pub fn run(mut self) -> Result<Exit, String> {
        let exit = if std::io::stdin().is_terminal() {
            self.interactive()?
        } else {
            self.piped()?
        };
        Ok(exit.unwrap_or(Exit::Ok))
    }

    fn interactive(&mut self) -> Result<Option<Exit>, String> {
        let mut editor = rustyline::DefaultEditor::new()
            .map_err(|e| format!("cannot start line editing: {e}"))?;
        let history = history_file();
        if let Some(path) = &history {
            // No history yet is normal.
            let _ = editor.load_history(path);
        }
        say(&format!(
            "Arbores {} ({} engine). ,help for help, ,quit or Ctrl-D to leave.",
            env!("CARGO_PKG_VERSION"),
            engine_name(self.settings)
        ));
        let mut buffer = String::new();
        let mut exit = None;
        loop {
            let prompt = if buffer.is_empty() { "> " } else { "... " };
            match editor.readline(prompt) {
                Ok(line) => {
                    if buffer.is_empty() && line.trim_start().starts_with(',') {
                        let _ = editor.add_history_entry(line.trim());
                        if !self.meta(line.trim()) {
                            break;
                        }
                        continue;
                    }
                    buffer.push_str(&line);
                    buffer.push('\n');
                    match completeness(&buffer) {
                        Input::Empty => buffer.clear(),
                        Input::Open => {}
                        Input::Complete => {
                            let _ = editor.add_history_entry(buffer.trim_end());
                            exit = self.eval(&buffer);
                            buffer.clear();
                            if exit.is_some() {
                                break;
                            }
                        }
                    }
                }
                Err(ReadlineError::Interrupted) => buffer.clear(),
                Err(ReadlineError::Eof) => break,
                Err(e) => return Err(format!("cannot read input: {e}")),
            }
        }
        if let Some(path) = &history {
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = editor.save_history(path);
        }
        Ok(exit)
    }

    /// Reads forms from a pipe or file: evaluates each complete group of
    /// lines as it arrives, so output appears as the input is consumed.
    /// The standard input is read a line at a time, without holding it
    /// between lines: the forms evaluated may read it too.
    fn piped(&mut self) -> Result<Option<Exit>, String> {
        let mut buffer = String::new();
        while let Some(line) =
            read_input().map_err(|e| format!("cannot read standard input: {e}"))?
        {
            let line = line.trim_end_matches(['\n', '\r']);
            if buffer.is_empty() && line.trim_start().starts_with(',') {
                if !self.meta(line.trim()) {
                    return Ok(None);
                }
                continue;
            }
            buffer.push_str(line);
            buffer.push('\n');
            match completeness(&buffer) {
                Input::Empty => buffer.clear(),
                Input::Open => {}
                Input::Complete => {
                    let exit = self.eval(&buffer);
                    buffer.clear();
                    if exit.is_some() {
                        return Ok(exit);
                    }
                }
            }
        }
        // An unfinished form at the end: let the reader say what is wrong.
        if completeness(&buffer) != Input::Empty {
            return Ok(self.eval(&buffer));
        }
        Ok(None)
    }

    /// Evaluates and prints; the status to leave with when the program
    /// called `exit`.
    fn eval(&mut self, source: &str) -> Option<Exit> {
        let outcome = self
            .session
            .eval(self.stopper, self.settings.timeout, source);
        let exit = report::print(&outcome, self.settings, None, self.style);
        matches!(exit, Exit::Program(_)).then_some(exit)
    }

    /// The store line of `,settings`: where, and how long opening took.
    fn store_summary(&self) -> String {
        let mut text = self.session.store().path().display().to_string();
        if let Some(took) = self.session.stats.opened {
            text.push_str(&format!(
                "\n         opened in {:.1} ms (each commit is stored when it is made)",
                took.as_secs_f64() * 1e3
            ));
        }
        if let Some(c) = self.session.store().last_commit() {
            text.push_str(&format!(
                "\n         last commit: {} new blobs ({} bytes, the refs record included), \
                 {} already stored, in {:.1} ms",
                c.written,
                c.bytes,
                c.skipped,
                c.took.as_secs_f64() * 1e3
            ));
        }
        text
    }

    /// Runs a `,command`; returns false to leave the REPL.
    fn meta(&mut self, command: &str) -> bool {
        let (word, arg) = match command.split_once(char::is_whitespace) {
            Some((w, a)) => (w, a.trim()),
            None => (command, ""),
        };
        match (word, arg) {
            (",save" | ",restore", "") => {
                eprintln!("error: {word} needs a name, e.g. {word} work");
                return true;
            }
            (",save", name) => {
                self.save(name);
                return true;
            }
            (",restore", name) => {
                self.restore(name);
                return true;
            }
            (",snapshots", "") => {
                self.list_snapshots();
                return true;
            }
            _ => {}
        }
        match command {
            ",q" | ",quit" | ",exit" => return false,
            ",h" | ",help" | ",?" => say(HELP),
            ",settings" => {
                let s = self.settings;
                say(&format!(
                    "engine:  {}\nfuel:    {} steps per evaluation\nmemory:  {} per evaluation\n\
                     timeout: {}\ntier:    {}\nstore:   {}",
                    engine_name(s),
                    s.limits.max_steps,
                    report::size(s.limits.max_memory as u64),
                    report::duration(s.timeout),
                    s.tier.as_str(),
                    self.store_summary()
                ));
            }
            _ => eprintln!("error: unknown command {command}; ,help lists the commands"),
        }
        true
    }
}

impl Repl<'_> {
    fn save(&mut self, name: &str) {
        let store = self.session.store().path().to_path_buf();
        let saved = self.session.save_session().and_then(|bytes| {
            snapshots::save(&store, name, &bytes).map(|path| (bytes.len(), path))
        });
        match saved {
            Ok((bytes, path)) => say(&format!(
                "saved this session as {name} ({bytes} bytes, {})",
                path.display()
            )),
            Err(e) => eprintln!("error: the session was not saved: {e}"),
        }
    }

    fn restore(&mut self, name: &str) {
        let store = self.session.store().path().to_path_buf();
        let restored =
            snapshots::load(&store, name).and_then(|bytes| self.session.restore_session(&bytes));
        match restored {
            Ok(r) => {
                say(&format!(
                    "restored {name}: {} definitions ({})",
                    r.bindings.len(),
                    abbreviate(&r.bindings)
                ));
                if !r.skipped.is_empty() {
                    eprintln!(
                        "warning: syntax is not saved; define it again: {}",
                        r.skipped.join(" ")
                    );
                }
            }
            Err(e) => eprintln!("error: nothing was restored: {e}"),
        }
    }

    fn list_snapshots(&self) {
        let store = self.session.store().path().to_path_buf();
        match snapshots::list(&store) {
            Ok(list) if list.is_empty() => say(&format!(
                "no saved sessions in {} (,save NAME keeps one)",
                snapshots::dir(&store).display()
            )),
            Ok(list) => {
                for l in list {
                    let age = l
                        .modified
                        .and_then(|m| m.elapsed().ok())
                        .map(ago)
                        .unwrap_or_default();
                    say(&format!("{:<24} {:>10} bytes  {age}", l.name, l.bytes));
                }
            }
            Err(e) => eprintln!("error: {e}"),
        }
    }
}

/// "saved 5 min ago" and the like.
fn ago(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("saved {s} s ago"),
        60..=3599 => format!("saved {} min ago", s / 60),
        3600..=86399 => format!("saved {} h ago", s / 3600),
        _ => format!("saved {} days ago", s / 86400),
    }
}

/// The first few names, then how many more.
fn abbreviate(names: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut text = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

/// println! without the panic when stdout is a closed pipe.
fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

fn engine_name(settings: &Settings) -> &'static str {
    match settings.engine {
        EngineKind::Wasm => "wasm",
        EngineKind::Native => "native",
    }
}

fn history_file() -> Option<PathBuf> {
    crate::paths::data_dir().map(|d| d.join("history"))
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
                // Line comment: skip to the end of the line.
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
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

#[cfg(test)]
mod tests {
    use super::{completeness, Input};

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
}
