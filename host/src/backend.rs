//! What the session needs of an engine, and what shapes how it runs: the
//! settings, the stopper (the wall-clock deadline and Ctrl-C) and the
//! [`Backend`] trait both engines implement. Below both engines and the
//! session, so that neither engine needs the session.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arbores_core::{Evaluation, Limits, Run, Suspension, Tier, Tool, ToolAnswer};

use crate::store::{LoadError, Store};

/// Counts the bytes the process holds: the native engine's memory cap is
/// checked against it (`native.rs`), so the cap bounds what the process
/// pays, not an estimate of the Scheme heap. No limit is set here: a
/// refused allocation would abort the process instead of ending one
/// evaluation. Allocations of a megabyte or more are mapped in huge pages
/// where they fit (`huge_pages.rs`), so the process's end gives them back
/// quickly.
#[global_allocator]
pub static ALLOCATOR: cap::Cap<crate::huge_pages::HugePages<std::alloc::System>> = cap::Cap::new(
    crate::huge_pages::HugePages::new(std::alloc::System),
    usize::MAX,
);

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
    /// The tier evaluations start in.
    pub tier: Tier,
    /// A fixed clock (ARBORES_CLOCK), in seconds since the Unix epoch.
    pub clock: Option<f64>,
    /// Where evaluations' output goes as it is written.
    pub output: OutputSink,
    /// Files, environment and command line the program may see.
    pub grants: crate::grants::Grants,
    /// The semantic index's embedder of the native engine (`--embedder
    /// e5`); `None` for the core's default, the built-in table.
    pub embedder: Option<crate::e5::E5>,
    /// What ends a sandboxed evaluation that does not stop at its timeout.
    pub backstop: Backstop,
}

/// What ends a sandboxed evaluation that goes on past its timeout: a
/// guest that stops asking `should-stop` (the core asks it every few
/// thousand steps and inside its long primitives, so this is for a guest
/// that misbehaves). The native engine has no backstop.
#[derive(Clone, Default)]
pub enum Backstop {
    /// wasmtime's epoch deadline, a grace period after the timeout: the
    /// guest's code checks it at every call and every turn of a loop, which
    /// costs it about a sixth of its time (docs/PERFORMANCE.md). The trap
    /// replaces the instance and the session goes on without its
    /// definitions. For sessions that outlive an evaluation: the REPL and
    /// `arbores mcp`.
    #[default]
    Epoch,
    /// The process itself: the guest is compiled without the epoch checks,
    /// and a watchdog thread, a grace period after the timeout, calls the
    /// function with the evaluation as it failed and ends the process with
    /// the status it returns. For the commands whose process ends with
    /// their evaluation (`eval`, `run`, `start`, `resume`).
    ProcessExit(Arc<dyn Fn(Evaluation) -> u8 + Send + Sync>),
}

impl std::fmt::Debug for Backstop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backstop::Epoch => "Epoch",
            Backstop::ProcessExit(_) => "ProcessExit",
        })
    }
}

#[cfg(test)]
impl Settings {
    /// What the tests run with: `engine` under `limits`, no timeout, the
    /// read-write tier, the clock fixed at 0, the output kept, nothing
    /// granted, the built-in embedder.
    pub fn for_tests(engine: EngineKind, limits: Limits) -> Settings {
        Settings {
            engine,
            limits,
            timeout: None,
            tier: Tier::ReadWrite,
            clock: Some(0.0),
            output: OutputSink::kept(),
            grants: Default::default(),
            embedder: None,
            backstop: Backstop::Epoch,
        }
    }
}

/// Where the engine hands an evaluation's output as it is written
/// (`Host::write_output`, the component's `write-output`): standard
/// output, so a program that prints without end costs the process no
/// memory; or nowhere, so the output comes back whole with the result
/// (`--json`, which prints one object at the end, and tests). Shared by the
/// session and the engine's host, which is replaced with the instance.
#[derive(Clone, Debug)]
pub struct OutputSink(Arc<Mutex<Streamed>>, bool, Option<(u64, Stopper)>);

/// What one evaluation's output to standard output was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Streamed {
    pub bytes: u64,
    /// The last byte written was a newline.
    pub ends_with_newline: bool,
}

impl OutputSink {
    /// Output goes to standard output as it is written.
    pub fn stdout() -> OutputSink {
        OutputSink(Arc::default(), true, None)
    }

    /// Output is kept by the engine and returned with the result.
    pub fn kept() -> OutputSink {
        OutputSink(Arc::default(), false, None)
    }

    /// At most `max` bytes of each evaluation's output go to standard
    /// output (`--max-output`): what would pass the cap is dropped and
    /// `stopper` stops the evaluation at its next check (within a few
    /// thousand steps), with [`StopReason::OutputLimit`]. Output kept for
    /// the result is bounded by the memory cap instead.
    pub fn with_max(self, max: Option<u64>, stopper: &Stopper) -> OutputSink {
        OutputSink(self.0, self.1, max.map(|m| (m, stopper.clone())))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Streamed> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Called before each evaluation.
    pub fn begin(&self) {
        *self.state() = Streamed::default();
    }

    /// The engine's `write_output`: whether the text was taken.
    pub fn write(&self, text: &str) -> bool {
        if !self.1 {
            return false;
        }
        if text.is_empty() {
            return true;
        }
        let mut text = text;
        if let Some((max, stopper)) = &self.2 {
            let room = max.saturating_sub(self.state().bytes);
            if text.len() as u64 > room {
                let mut end = room as usize;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text = &text[..end];
                stopper.output_full();
            }
            if text.is_empty() {
                return true;
            }
        }
        let mut out = std::io::stdout().lock();
        // A closed pipe is not worth failing the evaluation over, as when
        // the result is printed.
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        let mut state = self.state();
        state.bytes += text.len() as u64;
        state.ends_with_newline = text.ends_with('\n');
        true
    }

    /// The cap on each evaluation's output, if any (`--max-output`).
    pub fn max(&self) -> Option<u64> {
        self.2.as_ref().map(|(max, _)| *max)
    }

    /// What the evaluation since `begin` wrote.
    pub fn streamed(&self) -> Streamed {
        *self.state()
    }
}

/// Seconds since the Unix epoch: what `(scheme time)` reports and what
/// dates the knowledge base's versions. `fixed` is ARBORES_CLOCK.
pub fn now(fixed: Option<f64>) -> f64 {
    match fixed {
        Some(t) => t,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0),
    }
}

/// Why the host asked an evaluation to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    Timeout,
    CtrlC,
    /// The client that asked for the evaluation cancelled its request
    /// (`arbores mcp`).
    Cancelled,
    /// The evaluation's output reached `--max-output`.
    OutputLimit,
}

/// The host's answer to the core's interrupt check, shared with the Ctrl-C
/// handler (another thread) and, for wasm, with the store's host functions.
#[derive(Clone, Default)]
pub struct Stopper(Arc<StopState>);

impl std::fmt::Debug for Stopper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stopper")
    }
}

#[derive(Default)]
struct StopState {
    deadline: Mutex<Option<Instant>>,
    running: AtomicBool,
    ctrl_c: AtomicBool,
    /// The output reached its cap (`--max-output`).
    output_full: AtomicBool,
    /// 0: none, 1: timeout, 2: Ctrl-C, 3: cancelled, 4: output cap.
    reason: AtomicU8,
    /// The number of the request being served (0: none), and the last
    /// request cancelled: equal, the evaluation stops. Numbers are never
    /// reused, so a cancellation that comes late stops nothing else.
    job: AtomicU64,
    cancelled: AtomicU64,
}

impl Stopper {
    /// Called before each evaluation.
    pub fn begin(&self, timeout: Option<Duration>) {
        *self.0.deadline.lock().unwrap_or_else(|p| p.into_inner()) =
            timeout.map(|t| Instant::now() + t);
        self.0.ctrl_c.store(false, Ordering::SeqCst);
        self.0.output_full.store(false, Ordering::SeqCst);
        self.0.reason.store(0, Ordering::SeqCst);
        self.0.running.store(true, Ordering::SeqCst);
    }

    pub fn end(&self) {
        self.0.running.store(false, Ordering::SeqCst);
    }

    /// The interrupt check: cheap enough to be asked every few thousand steps.
    pub fn should_stop(&self) -> bool {
        if self.0.output_full.load(Ordering::Relaxed) {
            self.0.reason.store(4, Ordering::SeqCst);
            return true;
        }
        if self.0.ctrl_c.load(Ordering::Relaxed) {
            self.0.reason.store(2, Ordering::SeqCst);
            return true;
        }
        let job = self.0.job.load(Ordering::Relaxed);
        if job != 0 && self.0.cancelled.load(Ordering::Relaxed) == job {
            self.0.reason.store(3, Ordering::SeqCst);
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
            3 => Some(StopReason::Cancelled),
            4 => Some(StopReason::OutputLimit),
            _ => None,
        }
    }

    /// The output reached its cap: the evaluation stops at its next check.
    pub fn output_full(&self) {
        self.0.output_full.store(true, Ordering::SeqCst);
    }

    /// The request the evaluations from now on serve (0: none).
    pub fn set_job(&self, job: u64) {
        self.0.job.store(job, Ordering::SeqCst);
    }

    /// Stops the evaluations of request `job`, now or when it starts.
    pub fn cancel(&self, job: u64) {
        self.0.cancelled.store(job, Ordering::SeqCst);
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

/// What both engines offer the session. Calls into the wasm guest can trap;
/// the instance is then replaced (see `take_replaced`) and the call fails.
// `abandon` serves only `engines_agree`, which checks the tool methods on
// both engines: `arbores start` and `resume` leave a suspension to the
// process's end.
#[cfg_attr(not(test), allow(dead_code))]
pub trait Backend {
    /// The evaluation, and whether the instance trapped and was replaced.
    fn eval(&mut self, source: &str) -> (Evaluation, bool);
    /// The limits of the evaluations from now on (the settings' until
    /// called; `arbores mcp` sets each call's).
    fn set_limits(&mut self, limits: Limits) -> Result<(), String>;
    /// Keeps the engine's knowledge base in `store` (read lazily; each
    /// commit stored before the call that made it returns).
    /// Err(Ok(_)): the engine refused the stored state; Err(Err(_)): the
    /// call failed.
    fn open_store(&mut self, store: &Store) -> Result<(), Result<LoadError, String>>;
    /// Adopts what other writers stored; whether the state moved.
    fn sync(&mut self) -> Result<bool, Result<LoadError, String>>;
    fn current_version(&mut self) -> Result<u64, String>;
    /// The versions committed since the last call.
    fn take_committed(&mut self) -> Result<Vec<u64>, String>;
    /// Whether the instance was replaced since the last call (and so lost
    /// its knowledge base); clears the flag.
    fn take_replaced(&mut self) -> bool;

    // ---- host tools (docs/AGENTS.md) ----

    /// Defines a tool the session's Scheme code can call.
    fn define_tool(&mut self, tool: &Tool) -> Result<(), String>;
    /// Evaluates `source`; a tool call suspends it. The flag is `eval`'s.
    fn start(&mut self, source: &str) -> (Run, bool);
    /// Continues a suspended evaluation with one answer per call.
    fn resume(&mut self, id: u64, answers: Vec<ToolAnswer>) -> Result<Run, String>;
    /// The most steps one evaluation started from now on may take across
    /// all its run slices (`Engine::set_evaluation_budget`).
    fn set_evaluation_budget(&mut self, max_steps: Option<u64>) -> Result<(), String>;
    /// Forgets a suspended evaluation; whether there was one.
    fn abandon(&mut self, id: u64) -> Result<bool, String>;
    /// The bytes of a suspended evaluation and its session.
    fn dump(&mut self, id: u64) -> Result<Vec<u8>, String>;
    /// Suspends here the evaluation that `bytes` hold.
    fn load_suspension(&mut self, bytes: &[u8]) -> Result<Suspension, String>;
    /// The key of the hash that seals dumps and snapshots
    /// (`Engine::set_dump_key`): bytes sealed with another key are refused.
    fn set_dump_key(&mut self, key: [u8; 32]) -> Result<(), String>;

    // ---- session snapshots (docs/ARCHITECTURE.md) ----

    /// The session's definitions as bytes (`Engine::save_session`).
    fn save_session(&mut self) -> Result<Vec<u8>, String>;
    /// Replaces the session's definitions with those `bytes` hold.
    fn restore_session(&mut self, bytes: &[u8]) -> Result<Restored, String>;

    /// Ends the engine when the process is about to end: by default it is
    /// dropped. An engine whose heap is large may leave it to the
    /// operating system instead of freeing it object by object.
    fn end(self: Box<Self>) {}
}

/// What a restored session holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restored {
    /// The names of its bindings, sorted.
    pub bindings: Vec<String>,
    /// Macros the saved session had defined that could not be saved
    /// (made by another macro, or in a local scope).
    pub skipped: Vec<String>,
}
