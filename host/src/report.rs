//! Printing what an evaluation produced: output and value to stdout, errors
//! to stderr as `error: [FILE:]LINE:COL: message`, the backtrace, and a note
//! on which option changes a limit that was hit.

use std::io::Write;
use std::time::Duration;

use arbores_core::{ErrorKind, EvalError};

use crate::backend::{Settings, StopReason};
use crate::exit::{self, Exit};
use crate::session::Outcome;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `run`: the program's output exactly as written, no value.
    Program,
    /// `eval` and the REPL: output ended with a newline, then the value.
    Interactive,
    /// `--json`: one JSON object on a line (see `json`).
    Json,
}

/// How the REPL dresses what it prints: colours (each only when that
/// stream is a terminal and NO_COLOR is not set), and the source text an
/// error's line:column points into, shown under the message with a caret.
#[derive(Clone, Copy, Default)]
pub struct Decor<'a> {
    /// Values in colour on stdout.
    pub colour_out: bool,
    /// Errors and notes in colour on stderr.
    pub colour_err: bool,
    pub source: Option<&'a str>,
    /// For the forms of one line, evaluated one by one: whether the
    /// output of those before left the line open (and, after printing,
    /// whether this one did); `last`: this is the line's last form.
    pub line: Option<&'a std::cell::Cell<bool>>,
    pub last: bool,
    /// A note printed after the error (see `unbound_hint`).
    pub hint: Option<&'a str>,
}

/// ANSI colours; nothing when off.
pub fn paint(on: bool, code: &str, text: &str) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

pub const RED: &str = "1;31";
pub const GREEN: &str = "32";
pub const DIM: &str = "2";
pub const YELLOW: &str = "33";

/// The line `position` points into, and a caret under its column:
/// `  3 | (car y)` then `    |  ^`. None when the line is not in `source`.
pub fn caret(source: &str, line: u32, column: u32, colour: bool) -> Option<String> {
    let text = source.lines().nth(line.checked_sub(1)? as usize)?;
    let width = line.to_string().len();
    // The characters before the column, as blanks (tabs kept, so the
    // caret lines up under them).
    let before: String = text
        .chars()
        .take(column.saturating_sub(1) as usize)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let bar = paint(colour, DIM, "|");
    Some(format!(
        "{line:>width$} {bar} {text}\n{:>width$} {bar} {before}{}\n",
        "",
        paint(colour, RED, "^")
    ))
}

/// Prints `outcome` in `style`, dressed as `decor` says; returns the exit
/// status it calls for.
pub fn print(
    outcome: &Outcome,
    settings: &Settings,
    origin: Option<&str>,
    style: Style,
    decor: Decor,
) -> Exit {
    let exit = exit_of(outcome);
    if style == Style::Json {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", json(outcome, settings, exit));
        let _ = out.flush();
        return exit;
    }
    print_evaluation(outcome, settings, origin, style, decor);
    if let Some(e) = &outcome.store_error {
        eprintln!("{} {e}", paint(decor.colour_err, RED, "error:"));
    }
    exit
}

/// The status of an evaluation: the store's failure; else its error's
/// kind; else, when its value is the error an `arb:` call returned because
/// its change could not be stored (`conflict`), that; else success.
pub fn exit_of(outcome: &Outcome) -> Exit {
    if outcome.store_error.is_some() {
        return Exit::Store;
    }
    match &outcome.evaluation.error {
        Some(e) => match e.kind {
            ErrorKind::Syntax | ErrorKind::Runtime => Exit::Failed,
            ErrorKind::Exit => Exit::Program(e.message.parse().unwrap_or(1)),
            ErrorKind::StepLimit => Exit::Steps,
            ErrorKind::MemoryLimit => Exit::Memory,
            ErrorKind::Interrupted => match outcome.stopped {
                Some(StopReason::CtrlC | StopReason::Cancelled) => Exit::Interrupted,
                Some(StopReason::OutputLimit) => Exit::Output,
                _ => Exit::Time,
            },
        },
        None => match outcome.evaluation.value.as_deref() {
            Some(v) if v.starts_with("((\"error\" . \"conflict\")") => Exit::Conflict,
            _ => Exit::Ok,
        },
    }
}

/// The outcome as one JSON object: `value` (its written form, or null),
/// `output`, `error` (null, or `kind`, `message`, `line`, `column`,
/// `backtrace`), `version` (`before`, `after`), `committed` (the versions
/// it stored, in order) and `exit` (the status). docs/API.md describes it.
pub fn json(outcome: &Outcome, settings: &Settings, exit: Exit) -> serde_json::Value {
    let ev = &outcome.evaluation;
    let error = if let Some(message) = &outcome.store_error {
        serde_json::json!({"kind": exit::STORE_ERROR, "message": message,
                           "line": null, "column": null, "backtrace": []})
    } else if let Some(e) = &ev.error {
        let kind = match (e.kind, outcome.stopped) {
            (ErrorKind::Interrupted, Some(StopReason::CtrlC | StopReason::Cancelled)) => {
                "interrupted"
            }
            (ErrorKind::Interrupted, Some(StopReason::OutputLimit)) => exit::OUTPUT_LIMIT,
            (ErrorKind::Interrupted, _) => exit::TIME_LIMIT,
            (k, _) => k.as_str(),
        };
        serde_json::json!({
            "kind": kind,
            "message": message_of(outcome, settings),
            "line": e.position.map(|p| p.line),
            "column": e.position.map(|p| p.column),
            "backtrace": e.backtrace,
        })
    } else {
        serde_json::Value::Null
    };
    serde_json::json!({
        "value": ev.value,
        "output": ev.output,
        "error": error,
        "version": {"before": outcome.version_before, "after": outcome.version_after},
        "committed": outcome.committed,
        "exit": exit.status(),
    })
}

/// An error's message as the user reads it: a stop says why.
fn message_of(outcome: &Outcome, settings: &Settings) -> String {
    let Some(error) = &outcome.evaluation.error else {
        return String::new();
    };
    match (error.kind, outcome.stopped) {
        (ErrorKind::Interrupted, Some(StopReason::CtrlC)) => "interrupted (Ctrl-C)".to_string(),
        (ErrorKind::Interrupted, Some(StopReason::Cancelled)) => {
            "interrupted: the client cancelled the request".to_string()
        }
        (ErrorKind::Interrupted, Some(StopReason::OutputLimit)) => format!(
            "output limit exceeded: the evaluation printed {} (--max-output); the rest was dropped",
            size(settings.output.max().unwrap_or(0))
        ),
        // A backstop ended it: the epoch trap (the session lost) or the
        // process's watchdog (no stop was asked for).
        (ErrorKind::Interrupted, stopped) if outcome.session_lost || stopped.is_none() => {
            format!(
                "timed out after {}: {}",
                duration(settings.timeout),
                error.message
            )
        }
        (ErrorKind::Interrupted, Some(StopReason::Timeout)) => {
            format!("timed out after {}", duration(settings.timeout))
        }
        _ => error.message.clone(),
    }
}

fn print_evaluation(
    outcome: &Outcome,
    settings: &Settings,
    origin: Option<&str>,
    style: Style,
    decor: Decor,
) {
    let ev = &outcome.evaluation;
    let mut out = std::io::stdout().lock();
    // Write errors (a closed pipe) are not worth failing over here.
    let _ = out.write_all(ev.output.as_bytes());
    if style == Style::Interactive {
        // The output, streamed and returned, ends the line it began,
        // unless a form of the same line comes next and this one has no
        // value to show.
        let wrote = !ev.output.is_empty() || outcome.streamed.bytes > 0;
        let mut line_open = if !wrote {
            decor.line.is_some_and(|l| l.get())
        } else if ev.output.is_empty() {
            !outcome.streamed.ends_with_newline
        } else {
            !ev.output.ends_with('\n')
        };
        let more = decor.line.is_some() && !decor.last;
        if line_open && (ev.value.is_some() || ev.error.is_some() || !more) {
            let _ = out.write_all(b"\n");
            line_open = false;
        }
        if let Some(value) = &ev.value {
            let _ = writeln!(out, "{}", paint(decor.colour_out, GREEN, value));
        }
        if let Some(line) = decor.line {
            line.set(line_open);
        }
    }
    let _ = out.flush();
    drop(out);

    let Some(error) = &ev.error else { return };
    if error.kind == ErrorKind::Exit {
        return;
    }
    let mut err = std::io::stderr().lock();
    let shown = EvalError {
        message: message_of(outcome, settings),
        ..error.clone()
    };
    let report = shown.report(origin);
    let (first, frames) = report.split_once('\n').unwrap_or((&report, ""));
    let _ = match first.strip_prefix("error:") {
        Some(rest) if decor.colour_err => writeln!(err, "{}{rest}", paint(true, RED, "error:")),
        _ => writeln!(err, "{first}"),
    };
    if let (Some(source), Some(p)) = (decor.source, error.position) {
        if let Some(lines) = caret(source, p.line, p.column, decor.colour_err) {
            let _ = err.write_all(lines.as_bytes());
        }
    }
    let _ = if decor.colour_err && !frames.is_empty() {
        write!(
            err,
            "{}",
            paint(true, DIM, frames.trim_end_matches('\n')) + "\n"
        )
    } else {
        write!(err, "{frames}")
    };
    let note = match error.kind {
        ErrorKind::StepLimit => Some(format!(
            "each evaluation may take {} steps; change the budget with --fuel",
            settings.limits.max_steps
        )),
        ErrorKind::MemoryLimit => Some(format!(
            "each evaluation may use {} of memory; change the cap with --memory",
            size(settings.limits.max_memory as u64)
        )),
        ErrorKind::Interrupted
            if outcome.stopped == Some(StopReason::Timeout) || outcome.stopped.is_none() =>
        {
            Some("change the wall-clock limit with --timeout SECS (0 for none)".to_string())
        }
        _ => None,
    };
    if let Some(note) = note.as_deref().or(decor.hint) {
        let _ = writeln!(err, "{} {note}", paint(decor.colour_err, YELLOW, "note:"));
    }
    if outcome.session_lost {
        let _ = writeln!(
            err,
            "note: the engine was restarted; the session's earlier definitions are lost \
             (its knowledge base comes back from the store)"
        );
    }
}

/// For an error about an unbound variable, what the name was probably
/// meant to be: the session's bound names nearest it
/// (`arbores_core::did_you_mean`, as the playground shows it). In the REPL,
/// `help` and `quit` point to its `,` commands instead. `names` (the
/// session's bound names) is asked only for such an error.
pub fn unbound_hint(
    outcome: &Outcome,
    repl: bool,
    names: impl FnOnce() -> Vec<String>,
) -> Option<String> {
    let name = outcome.evaluation.error.as_ref()?.unbound_name()?;
    match name {
        "help" if repl => {
            return Some("the REPL's commands start with a comma: ,help lists them".into())
        }
        "quit" if repl => return Some("leave with ,quit or Ctrl-D".into()),
        _ => {}
    }
    arbores_core::did_you_mean(name, &names())
}

pub fn duration(timeout: Option<Duration>) -> String {
    match timeout {
        None => "no limit".to_string(),
        Some(t) if t.subsec_nanos() == 0 => format!("{}s", t.as_secs()),
        Some(t) => format!("{}s", t.as_secs_f64()),
    }
}

pub fn size(bytes: u64) -> String {
    for (shift, unit) in [(30, "G"), (20, "M"), (10, "K")] {
        if bytes >= 1 << shift && bytes.trailing_zeros() >= shift {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

/// A memory cap: `256M`, `1G`, `65536`, `512KiB` (binary units,
/// case-insensitive), at least 1M.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let bytes = size_in_bytes(text)?;
    if bytes < 1 << 20 {
        return Err(format!(
            "`{text}` is too small; the engine needs at least 1M"
        ));
    }
    Ok(bytes)
}

/// An output cap: a size as for `parse_size`, any number of bytes; 0 for
/// none.
pub fn parse_output_size(text: &str) -> Result<u64, String> {
    size_in_bytes(text)
}

/// `256M`, `1G`, `65536`, `512KiB`: binary units, case-insensitive.
fn size_in_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size such as 256M"))?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(format!("`{text}`: unknown unit; use K, M or G")),
    };
    let bytes = number
        .checked_mul(1 << shift)
        .ok_or(format!("`{text}` is too large"))?;
    Ok(bytes)
}
