//! The engine's public face: create an engine, set limits, evaluate text.

/// A line:column position in the evaluated source text (both 1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// What kind of failure ended an evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The source text could not be read (unbalanced parentheses, bad token, ...).
    Syntax,
    /// A Scheme error was raised and not handled (includes wrong types, unbound variables).
    Runtime,
    /// The step budget ran out.
    StepLimit,
    /// The memory cap was reached.
    MemoryLimit,
    /// The host asked the evaluation to stop.
    Interrupted,
}

impl ErrorKind {
    /// A short stable name, used across the wasm boundary and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "syntax-error",
            ErrorKind::Runtime => "runtime-error",
            ErrorKind::StepLimit => "step-limit",
            ErrorKind::MemoryLimit => "memory-limit",
            ErrorKind::Interrupted => "interrupted",
        }
    }

    pub fn from_name(name: &str) -> Option<ErrorKind> {
        Some(match name {
            "syntax-error" => ErrorKind::Syntax,
            "runtime-error" => ErrorKind::Runtime,
            "step-limit" => ErrorKind::StepLimit,
            "memory-limit" => ErrorKind::MemoryLimit,
            "interrupted" => ErrorKind::Interrupted,
            _ => return None,
        })
    }
}

/// An evaluation that did not complete.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError {
    pub kind: ErrorKind,
    /// What went wrong, e.g. `car: expected a pair, got ()`.
    pub message: String,
    /// Where in the evaluated text, when known.
    pub position: Option<Position>,
    /// Innermost first: `name (line:column)` of the Scheme procedures active at the error.
    pub backtrace: Vec<String>,
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.position {
            Some(p) => write!(f, "{}: {}", p, self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

/// The result of evaluating a source text: the value of its last form (in
/// `write` form), everything written to the current output port, and the error
/// that ended it, if any. Output written before an error is kept.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// `None` when the last form has no value to show (a definition, an
    /// unspecified value) or the evaluation failed.
    pub value: Option<String>,
    pub output: String,
    pub error: Option<EvalError>,
}

/// Per-evaluation limits. Every evaluation starts with the full budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Procedure calls allowed in one evaluation (one call = one step).
    pub max_steps: u64,
    /// Bytes the Scheme heap and stacks may occupy.
    pub max_memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_steps: 1_000_000_000, max_memory: 512 << 20 }
    }
}

/// An Arbores engine: one Scheme session with its global environment.
pub struct Engine {
    limits: Limits,
    interrupt: Option<InterruptCheck>,
}

/// Asked every few thousand steps during an evaluation; returning `true` ends
/// the evaluation with [`ErrorKind::Interrupted`]. The core has no clock: a
/// host enforces a wall-clock timeout by answering from its own.
pub type InterruptCheck = Box<dyn FnMut() -> bool>;

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

impl Engine {
    pub fn new() -> Engine {
        Engine { limits: Limits::default(), interrupt: None }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Installs (or removes) the check that lets a host stop a running
    /// evaluation: a timeout, a Stop button, Ctrl-C.
    pub fn set_interrupt_check(&mut self, check: Option<InterruptCheck>) {
        self.interrupt = check;
    }

    /// Reads and evaluates every form of `source` in order.
    pub fn eval(&mut self, source: &str) -> Evaluation {
        let _ = source;
        Evaluation {
            value: None,
            output: String::new(),
            error: Some(EvalError {
                kind: ErrorKind::Runtime,
                message: "evaluator under construction".into(),
                position: None,
                backtrace: vec![],
            }),
        }
    }
}
