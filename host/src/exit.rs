//! The exit statuses of `arbores`: one per kind of outcome, so that a
//! script or an agent host can tell them apart without reading messages.
//! Defined once here; docs/API.md and `arbores --help` list them.

use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Everything went well.
    Ok = 0,
    /// A Scheme error (syntax or runtime) ended the evaluation, or a command
    /// failed for a reason of its own (a file that cannot be read).
    Failed = 1,
    /// The command line is wrong (clap's own status).
    Usage = 2,
    /// The evaluation ran out of its step budget (--fuel).
    Steps = 3,
    /// The evaluation reached its memory cap (--memory).
    Memory = 4,
    /// The evaluation ran out of its time (--timeout).
    Time = 5,
    /// The knowledge store could not be opened, read or written, or is
    /// damaged.
    Store = 6,
    /// A change was not stored because another writer changed the same
    /// nodes: the evaluation's value is the `conflict` error.
    Conflict = 7,
    /// Stopped with Ctrl-C.
    Interrupted = 130,
}

impl Exit {
    pub fn code(self) -> ExitCode {
        ExitCode::from(self as u8)
    }

    /// The kind of failure, as `--json` names it (`None` for success).
    pub fn kind(self) -> Option<&'static str> {
        Some(match self {
            Exit::Ok => return None,
            Exit::Failed => "error",
            Exit::Usage => "usage",
            Exit::Steps => "step-limit",
            Exit::Memory => "memory-limit",
            Exit::Time => "time-limit",
            Exit::Store => "store-error",
            Exit::Conflict => "conflict",
            Exit::Interrupted => "interrupted",
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
