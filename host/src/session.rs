//! One Scheme session, run by either engine, plus what the host adds around
//! an evaluation: the wall-clock deadline and Ctrl-C.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arbores_core::{Evaluation, Limits};

use crate::{native, wasm};

/// Which engine runs the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineKind {
    /// The core inside wasmtime: sandboxed, memory-capped, safe for untrusted code.
    Wasm,
    /// The core linked into this binary: for trusted local use and as a baseline.
    Native,
}

/// Everything that shapes how evaluations run.
#[derive(Clone, Debug)]
pub struct Settings {
    pub engine: EngineKind,
    pub limits: Limits,
    /// Wall-clock limit per evaluation; `None` for no limit.
    pub timeout: Option<Duration>,
}

/// Why the host asked an evaluation to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    Timeout,
    CtrlC,
}

/// The host's answer to the core's interrupt check, shared with the Ctrl-C
/// handler (another thread) and, for wasm, with the store's host functions.
#[derive(Clone, Default)]
pub struct Stopper(Arc<StopState>);

#[derive(Default)]
struct StopState {
    deadline: Mutex<Option<Instant>>,
    running: AtomicBool,
    ctrl_c: AtomicBool,
    /// 0: none, 1: timeout, 2: Ctrl-C.
    reason: AtomicU8,
}

impl Stopper {
    /// Called before each evaluation.
    pub fn begin(&self, timeout: Option<Duration>) {
        *self.0.deadline.lock().unwrap_or_else(|p| p.into_inner()) =
            timeout.map(|t| Instant::now() + t);
        self.0.ctrl_c.store(false, Ordering::SeqCst);
        self.0.reason.store(0, Ordering::SeqCst);
        self.0.running.store(true, Ordering::SeqCst);
    }

    pub fn end(&self) {
        self.0.running.store(false, Ordering::SeqCst);
    }

    /// The interrupt check: cheap enough to be asked every few thousand steps.
    pub fn should_stop(&self) -> bool {
        if self.0.ctrl_c.load(Ordering::Relaxed) {
            self.0.reason.store(2, Ordering::SeqCst);
            return true;
        }
        let deadline = *self.0.deadline.lock().unwrap_or_else(|p| p.into_inner());
        if deadline.is_some_and(|d| Instant::now() >= d) {
            self.0.reason.store(1, Ordering::SeqCst);
            return true;
        }
        false
    }

    pub fn reason(&self) -> Option<StopReason> {
        match self.0.reason.load(Ordering::SeqCst) {
            1 => Some(StopReason::Timeout),
            2 => Some(StopReason::CtrlC),
            _ => None,
        }
    }

    /// Ctrl-C: stops a running evaluation cleanly; a second Ctrl-C while
    /// it is still running, or one between evaluations, ends the program.
    pub fn install_ctrl_c(&self) {
        let me = self.clone();
        // Failing to install the handler only loses the clean stop.
        let _ = ctrlc::set_handler(move || {
            if me.0.running.load(Ordering::SeqCst) && !me.0.ctrl_c.swap(true, Ordering::SeqCst) {
                return;
            }
            std::process::exit(130);
        });
    }
}

/// An evaluation as the host saw it.
pub struct Outcome {
    pub evaluation: Evaluation,
    /// Set when the host stopped the evaluation (timeout, Ctrl-C).
    pub stopped: Option<StopReason>,
    /// The wasm instance trapped and was replaced by a fresh one: the
    /// session's definitions are gone.
    pub session_lost: bool,
}

pub enum Session {
    Native(Box<native::NativeSession>),
    Wasm(Box<wasm::WasmSession>),
}

impl Session {
    pub fn new(settings: &Settings, stopper: &Stopper) -> Result<Session, String> {
        Ok(match settings.engine {
            EngineKind::Native => Session::Native(Box::new(native::NativeSession::new(
                settings,
                stopper.clone(),
            ))),
            EngineKind::Wasm => {
                Session::Wasm(Box::new(wasm::WasmSession::new(settings, stopper.clone())?))
            }
        })
    }

    pub fn eval(&mut self, stopper: &Stopper, timeout: Option<Duration>, source: &str) -> Outcome {
        stopper.begin(timeout);
        let (evaluation, session_lost) = match self {
            Session::Native(s) => (s.eval(source), false),
            Session::Wasm(s) => s.eval(source),
        };
        stopper.end();
        let stopped = match &evaluation.error {
            Some(e) if e.kind == arbores_core::ErrorKind::Interrupted => stopper.reason(),
            _ => None,
        };
        Outcome {
            evaluation,
            stopped,
            session_lost,
        }
    }
}
