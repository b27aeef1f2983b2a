//! The exit statuses of `arbores`: one per kind of outcome, so that a
//! script or an agent host can tell them apart without reading messages.
//! Defined once here; docs/API.md and `arbores --help` list them.

use std::process::ExitCode;

use arbores_core::ErrorKind;

/// The kinds of failure the host adds to the engine's own
/// (`ErrorKind::as_str`), as `--json` and `arbores mcp` name them.
pub const STORE_ERROR: &str = "store-error";
pub const TIME_LIMIT: &str = "time-limit";
pub const CONFLICT: &str = "conflict";
pub const OUTPUT_LIMIT: &str = "output-limit";
pub const SUSPENSION_ERROR: &str = "suspension-error";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Everything went well.
    Ok,
    /// A Scheme error (syntax or runtime) ended the evaluation, or a command
    /// failed for a reason of its own (a file that cannot be read).
    Failed,
    /// The command line is wrong (clap's own status).
    Usage,
    /// The evaluation ran out of its step budget (--fuel).
    Steps,
    /// The evaluation reached its memory cap (--memory).
    Memory,
    /// The evaluation ran out of its time (--timeout).
    Time,
    /// The knowledge store could not be opened, read or written, or is
    /// damaged.
    Store,
    /// A change was not stored because another writer changed the same
    /// nodes: the evaluation's value is the `conflict` error.
    Conflict,
    /// Stopped with Ctrl-C.
    Interrupted,
    /// The evaluation's output reached its cap (--max-output).
    Output,
    /// `arbores start` or `resume`: the evaluation waits on host tools;
    /// the calls are printed and the suspension saved (`--dump`).
    Suspended,
    /// `arbores resume`: the file is not a suspension this engine can load
    /// (not a dump, damaged, another build or dump key); or a suspension
    /// could not be saved.
    Suspension,
    /// The program called `(exit STATUS)`: its own status.
    Program(u8),
}

impl Exit {
    /// The process's exit status.
    pub fn status(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::Steps => 3,
            Exit::Memory => 4,
            Exit::Time => 5,
            Exit::Store => 6,
            Exit::Conflict => 7,
            Exit::Output => 8,
            Exit::Suspended => 10,
            Exit::Suspension => 11,
            Exit::Interrupted => 130,
            Exit::Program(status) => status,
        }
    }

    pub fn code(self) -> ExitCode {
        ExitCode::from(self.status())
    }

    /// The kind of failure, as `--json` names it (`None` for success).
    pub fn kind(self) -> Option<&'static str> {
        Some(match self {
            Exit::Ok | Exit::Program(0) | Exit::Suspended => return None,
            Exit::Program(_) => ErrorKind::Exit.as_str(),
            Exit::Failed => "error",
            Exit::Usage => "usage",
            Exit::Steps => ErrorKind::StepLimit.as_str(),
            Exit::Memory => ErrorKind::MemoryLimit.as_str(),
            Exit::Time => TIME_LIMIT,
            Exit::Store => STORE_ERROR,
            Exit::Conflict => CONFLICT,
            Exit::Output => OUTPUT_LIMIT,
            Exit::Suspension => SUSPENSION_ERROR,
            Exit::Interrupted => ErrorKind::Interrupted.as_str(),
        })
    }
}

/// A command that failed outside an evaluation: its status and message.
#[derive(Debug)]
pub struct Failure {
    pub exit: Exit,
    pub message: String,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            exit: Exit::Usage,
            message: message.into(),
        }
    }

    pub fn store(message: impl Into<String>) -> Failure {
        Failure {
            exit: Exit::Store,
            message: message.into(),
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure {
            exit: Exit::Failed,
            message,
        }
    }
}
