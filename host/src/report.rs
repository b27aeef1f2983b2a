//! Printing what an evaluation produced: output and value to stdout, errors
//! to stderr as `error: [FILE:]LINE:COL: message`, the backtrace, and a note
//! on which option changes a limit that was hit.

use std::io::Write;
use std::time::Duration;

use arbores_core::{ErrorKind, EvalError};

use crate::backend::{Settings, StopReason};
use crate::session::Outcome;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `run`: the program's output exactly as written, no value.
    Program,
    /// `eval` and the REPL: output ended with a newline, then the value.
    Interactive,
}

/// Prints the outcome; returns whether the evaluation succeeded and its
/// knowledge was saved.
pub fn print(outcome: &Outcome, settings: &Settings, origin: Option<&str>, style: Style) -> bool {
    let evaluated = print_evaluation(outcome, settings, origin, style);
    if let Some(e) = &outcome.store_error {
        eprintln!("error: {e}");
        return false;
    }
    evaluated
}

fn print_evaluation(
    outcome: &Outcome,
    settings: &Settings,
    origin: Option<&str>,
    style: Style,
) -> bool {
    let ev = &outcome.evaluation;
    let mut out = std::io::stdout().lock();
    // Write errors (a closed pipe) are not worth failing over here.
    let _ = out.write_all(ev.output.as_bytes());
    if style == Style::Interactive {
        if !ev.output.is_empty() && !ev.output.ends_with('\n') {
            let _ = out.write_all(b"\n");
        }
        if let Some(value) = &ev.value {
            let _ = writeln!(out, "{value}");
        }
    }
    let _ = out.flush();
    drop(out);

    let Some(error) = &ev.error else { return true };
    let mut err = std::io::stderr().lock();
    let message = match (error.kind, outcome.stopped) {
        (ErrorKind::Interrupted, Some(StopReason::CtrlC)) => "interrupted (Ctrl-C)".to_string(),
        (ErrorKind::Interrupted, _) if outcome.session_lost => {
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
    };
    let shown = EvalError {
        message,
        ..error.clone()
    };
    let _ = err.write_all(shown.report(origin).as_bytes());
    let note = match error.kind {
        ErrorKind::StepLimit => Some(format!(
            "each evaluation may take {} steps; change the budget with --fuel",
            settings.limits.max_steps
        )),
        ErrorKind::MemoryLimit => Some(format!(
            "each evaluation may use {} of memory; change the cap with --memory",
            size(settings.limits.max_memory as u64)
        )),
        ErrorKind::Interrupted if outcome.stopped != Some(StopReason::CtrlC) => {
            Some("change the wall-clock limit with --timeout SECS (0 for none)".to_string())
        }
        _ => None,
    };
    if let Some(note) = note {
        let _ = writeln!(err, "note: {note}");
    }
    if outcome.session_lost {
        let _ = writeln!(
            err,
            "note: the engine was restarted; the session's earlier definitions are lost \
             (its knowledge base comes back from the store)"
        );
    }
    false
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
