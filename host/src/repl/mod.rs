//! The read-eval-print loop: with line editing, history, Tab completion
//! and colour on a terminal, and without prompts when standard input is a
//! pipe or a file. Each form of a line is evaluated and printed by itself.
//! `input.rs`: when lines make complete forms, the history's place, the
//! completer; `commands.rs`: the `,` commands.

mod commands;
mod input;

use std::cell::RefCell;
use std::io::{IsTerminal, Write};
use std::rc::Rc;

use rustyline::config::{CompletionType, Config};
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::Editor;

use crate::backend::{EngineKind, Settings, Stopper};
use crate::exit::Exit;
use crate::grants::read_input;
use crate::report::{self, Decor, Style};
use crate::session::{Outcome, Session};

pub use input::{completeness, Input};

pub struct Repl<'a> {
    pub session: Session,
    pub settings: &'a Settings,
    pub stopper: &'a Stopper,
    /// How each evaluation is printed (text, or JSON with --json).
    pub style: Style,
}

/// The REPL as it runs: the session is shared with the completer, which
/// asks it for names while a line is edited (never during an evaluation).
struct Running<'a> {
    session: Rc<RefCell<Session>>,
    settings: &'a Settings,
    stopper: &'a Stopper,
    style: Style,
    /// Colour values (stdout a terminal) and errors (stderr a terminal),
    /// unless NO_COLOR is set.
    colour_out: bool,
    colour_err: bool,
}

impl Repl<'_> {
    /// The status to end with: success, or what the program gave to
    /// `(exit STATUS)`.
    pub fn run(self) -> Result<Exit, String> {
        let no_colour = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let mut running = Running {
            session: Rc::new(RefCell::new(self.session)),
            settings: self.settings,
            stopper: self.stopper,
            style: self.style,
            colour_out: !no_colour && std::io::stdout().is_terminal(),
            colour_err: !no_colour && std::io::stderr().is_terminal(),
        };
        let exit = if std::io::stdin().is_terminal() {
            running.interactive()?
        } else {
            running.piped()?
        };
        // The completer's share went with the line editor.
        if let Ok(session) = Rc::try_unwrap(running.session) {
            session.into_inner().end();
        }
        Ok(exit.unwrap_or(Exit::Ok))
    }
}

impl Running<'_> {
    fn interactive(&mut self) -> Result<Option<Exit>, String> {
        let config = Config::builder()
            .completion_type(CompletionType::List)
            .auto_add_history(false)
            // Asking the terminal where the cursor is reads the answer from
            // the input, where typed-ahead keys wait; the output of every
            // evaluation ends its line anyway.
            .check_cursor_position(false)
            .build();
        let mut editor: Editor<input::ReplHelper, FileHistory> =
            Editor::with_config(config).map_err(|e| format!("cannot start line editing: {e}"))?;
        editor.set_helper(Some(input::ReplHelper {
            names: self.name_source(),
        }));
        let history = input::history_file();
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
                        match self.command(line.trim()) {
                            commands::Next::Go => continue,
                            commands::Next::Leave => break,
                            commands::Next::Exit(e) => {
                                exit = Some(e);
                                break;
                            }
                        }
                    }
                    buffer.push_str(&line);
                    buffer.push('\n');
                    match completeness(&buffer) {
                        Input::Empty => buffer.clear(),
                        Input::Open => {}
                        Input::Complete => {
                            let _ = editor.add_history_entry(buffer.trim_end());
                            exit = self.eval_forms(&buffer);
                            buffer.clear();
                            if exit.is_some() {
                                break;
                            }
                        }
                    }
                }
                Err(ReadlineError::Interrupted) => buffer.clear(),
                Err(ReadlineError::Eof) if completeness(&buffer) != Input::Empty => {
                    // Said, not silently lost; a second Ctrl-D leaves.
                    let _ = editor.add_history_entry(buffer.trim_end());
                    eprintln!(
                        "{} {} (Ctrl-D again leaves; it is in the history)",
                        report::paint(self.colour_err, report::YELLOW, "unfinished form dropped:"),
                        abbreviate_source(&buffer)
                    );
                    buffer.clear();
                }
                Err(ReadlineError::Eof) => break,
                Err(e) => return Err(format!("cannot read input: {e}")),
            }
        }
        if let Some(path) = history.filter(|p| input::history_is_ours(p)) {
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = editor.save_history(&path);
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
                match self.command(line.trim()) {
                    commands::Next::Go => continue,
                    commands::Next::Leave => return Ok(None),
                    commands::Next::Exit(e) => return Ok(Some(e)),
                }
            }
            buffer.push_str(line);
            buffer.push('\n');
            match completeness(&buffer) {
                Input::Empty => buffer.clear(),
                Input::Open => {}
                Input::Complete => {
                    let exit = self.eval_forms(&buffer);
                    buffer.clear();
                    if exit.is_some() {
                        return Ok(exit);
                    }
                }
            }
        }
        // An unfinished form at the end: let the reader say what is wrong.
        if completeness(&buffer) != Input::Empty {
            return Ok(self.eval_forms(&buffer));
        }
        Ok(None)
    }

    /// Evaluates each form of `source` by itself and prints its value, as
    /// if typed on lines of their own; stops at the first error. Error
    /// positions are those in `source`. The status to leave with when the
    /// program called `exit`.
    fn eval_forms(&mut self, source: &str) -> Option<Exit> {
        let Some(pieces) = arbores_core::split_forms(source) else {
            return self.eval_and_print(source, source, None).1;
        };
        let line = std::cell::Cell::new(false);
        let count = pieces.len();
        for (i, piece) in pieces.into_iter().enumerate() {
            // Blanks in place of what comes before (newlines kept), so
            // that line:column and the caret point into `source`.
            let mut text: String = source[..piece.start]
                .chars()
                .map(|c| if c == '\n' { '\n' } else { ' ' })
                .collect();
            text.push_str(&source[piece]);
            let outcome = self.eval_quietly(&text);
            let hint = self.hint(&outcome);
            let decor = Decor {
                line: Some(&line),
                last: i + 1 == count,
                hint: hint.as_deref(),
                ..self.decor(source)
            };
            let exit = report::print(&outcome, self.settings, None, self.style, decor);
            let failed = outcome.evaluation.error.is_some() || outcome.store_error.is_some();
            let exit = matches!(exit, Exit::Program(_)).then_some(exit);
            if failed || exit.is_some() {
                return exit;
            }
        }
        None
    }

    /// One evaluation, printed; whether it failed, and the status to leave
    /// with when the program called `exit`.
    fn eval_and_print(
        &mut self,
        text: &str,
        shown: &str,
        origin: Option<&str>,
    ) -> (bool, Option<Exit>) {
        let outcome = self.eval_quietly(text);
        let hint = self.hint(&outcome);
        let decor = Decor {
            hint: hint.as_deref(),
            ..self.decor(shown)
        };
        let exit = report::print(&outcome, self.settings, origin, self.style, decor);
        let failed = outcome.evaluation.error.is_some() || outcome.store_error.is_some();
        (failed, matches!(exit, Exit::Program(_)).then_some(exit))
    }

    /// How to dress what is printed; errors point into `shown`.
    fn decor<'s>(&self, shown: &'s str) -> Decor<'s> {
        Decor {
            colour_out: self.colour_out,
            colour_err: self.colour_err,
            source: Some(shown),
            line: None,
            last: true,
            hint: None,
        }
    }

    /// "Did you mean" for an unbound variable (`report::unbound_hint`).
    fn hint(&self, outcome: &Outcome) -> Option<String> {
        if self.style == Style::Json {
            return None;
        }
        report::unbound_hint(outcome, true, || {
            let mut session = self.session.borrow_mut();
            bound_names(&mut session, self.stopper, self.settings.timeout, "")
        })
    }

    /// Evaluates without printing the value (output still streams).
    fn eval_quietly(&mut self, text: &str) -> Outcome {
        self.session
            .borrow_mut()
            .eval(self.stopper, self.settings.timeout, text)
    }

    /// The completer's names: what `%bound-names` says in this session.
    fn name_source(&self) -> input::NameSource {
        let session = self.session.clone();
        let stopper = self.stopper.clone();
        let timeout = self.settings.timeout;
        Rc::new(RefCell::new(move |prefix: &str| {
            let Ok(mut session) = session.try_borrow_mut() else {
                return Vec::new();
            };
            bound_names(&mut session, &stopper, timeout, prefix)
        }))
    }
}

/// The session's bound names and stored knowledge's names that start with
/// `prefix` (the core's `%bound-names`), sorted.
pub(crate) fn bound_names(
    session: &mut Session,
    stopper: &Stopper,
    timeout: Option<std::time::Duration>,
    prefix: &str,
) -> Vec<String> {
    let source = format!("(%bound-names {})", scheme_string(prefix));
    let outcome = session.eval(stopper, timeout, &source);
    match outcome
        .evaluation
        .value
        .as_deref()
        .map(commands::parse_written)
    {
        Some(Some(commands::Written::List(items))) => items
            .into_iter()
            .filter_map(|w| match w {
                commands::Written::Str(s) => Some(s),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `text` as a Scheme string literal.
pub(crate) fn scheme_string(text: &str) -> String {
    let mut s = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// The start of an unfinished form, on one line.
fn abbreviate_source(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 60 {
        format!("{} ...", one_line.chars().take(60).collect::<String>())
    } else {
        one_line
    }
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
