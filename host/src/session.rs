//! One Scheme session, run by either engine, plus what the host adds around
//! an evaluation: the wall-clock deadline, Ctrl-C, and the knowledge store
//! (loaded when the session starts, saved after each evaluation that
//! changed the knowledge base).

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arbores_core::{Evaluation, Limits, Snapshot, Tier};

use crate::store::{BlobReader, LoadError, SaveStats, Store};
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
    /// The tier evaluations start in.
    pub tier: Tier,
    /// A fixed clock (ARBORES_CLOCK), in seconds since the Unix epoch.
    pub clock: Option<f64>,
}

impl Settings {
    /// Seconds since the Unix epoch: what `(scheme time)` reports and what
    /// dates the knowledge base's versions.
    pub fn now(&self) -> f64 {
        match self.clock {
            Some(t) => t,
            None => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0),
        }
    }
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
    /// session's definitions are gone (its knowledge comes back from the
    /// store).
    pub session_lost: bool,
    /// Saving the knowledge base (or reloading it after a restart) failed.
    pub store_error: Option<String>,
}

/// What both engines offer the session. Calls into the wasm guest can trap;
/// the instance is then replaced (see `replaced`) and the call fails.
pub trait Backend {
    /// The evaluation, and whether the instance trapped and was replaced.
    fn eval(&mut self, source: &str) -> (Evaluation, bool);
    fn has_unsaved_changes(&mut self) -> Result<bool, String>;
    fn export(&mut self, full: bool) -> Result<Snapshot, String>;
    /// Err(Ok(_)): the engine refused the state; Err(Err(_)): the call failed.
    fn load(
        &mut self,
        refs: &[u8],
        blobs: &mut BlobReader,
    ) -> Result<(), Result<LoadError, String>>;
    /// Whether the instance was replaced since the last call (and so lost
    /// its knowledge base); clears the flag.
    fn take_replaced(&mut self) -> bool;
}

/// How long the last load and save took, for `,settings`.
#[derive(Default)]
pub struct StoreStats {
    /// Blobs read, their bytes, and the time the load took.
    pub loaded: Option<(usize, u64, Duration)>,
    pub last_save: Option<SaveStats>,
}

pub struct Session {
    backend: Box<dyn Backend>,
    store: Store,
    tier: Tier,
    /// The engine restarted and the store could not be loaded into the new
    /// instance: saving now would replace the stored history with a new one.
    reload_failed: bool,
    pub stats: StoreStats,
}

impl Session {
    /// Starts an engine and loads the store's knowledge base into it. A
    /// store that cannot be read is an error: the session must not start,
    /// or its first save would replace what it failed to read.
    pub fn new(settings: &Settings, stopper: &Stopper, store: Store) -> Result<Session, String> {
        let backend: Box<dyn Backend> = match settings.engine {
            EngineKind::Native => Box::new(native::NativeSession::new(settings, stopper.clone())),
            EngineKind::Wasm => Box::new(wasm::WasmSession::new(settings, stopper.clone())?),
        };
        let mut session = Session {
            backend,
            store,
            tier: settings.tier,
            reload_failed: false,
            stats: StoreStats::default(),
        };
        session.load().map_err(|message| {
            let dir = session.store.dir().display().to_string();
            let what = if message.starts_with(&dir) {
                String::new()
            } else {
                format!(" {dir}")
            };
            format!(
                "cannot open the knowledge store{what}: {message}\n\
                 note: nothing was changed; repair or move the store, or use another \
                 with --store DIR (or ARBORES_STORE)"
            )
        })?;
        Ok(session)
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Loads the stored knowledge base, if there is one.
    fn load(&mut self) -> Result<(), String> {
        let result = self.load_store();
        self.reload_failed = result.is_err();
        result
    }

    fn load_store(&mut self) -> Result<(), String> {
        let Some(refs) = self.store.open()? else {
            return Ok(());
        };
        let start = Instant::now();
        let mut reader = self.store.blob_reader();
        let result = self.backend.load(&refs, &mut reader);
        self.backend.take_replaced();
        match result {
            Ok(()) => {
                self.stats.loaded = Some((reader.read, reader.bytes, start.elapsed()));
                Ok(())
            }
            Err(Ok(e)) => Err(self.store.explain(&e, &reader)),
            Err(Err(message)) => Err(message),
        }
    }

    pub fn eval(&mut self, stopper: &Stopper, timeout: Option<Duration>, source: &str) -> Outcome {
        stopper.begin(timeout);
        let (evaluation, session_lost) = self.backend.eval(source);
        stopper.end();
        let stopped = match &evaluation.error {
            Some(e) if e.kind == arbores_core::ErrorKind::Interrupted => stopper.reason(),
            _ => None,
        };
        self.backend.take_replaced();
        let store_error = if session_lost {
            // A fresh instance: its knowledge base comes back from the store
            // (everything committed before this evaluation was saved).
            self.load()
                .err()
                .map(|m| format!("cannot reload the knowledge store after the restart: {m}"))
        } else {
            self.save().err()
        };
        Outcome {
            evaluation,
            stopped,
            session_lost,
            store_error,
        }
    }

    /// Stores what changed since the last save. Read-only sessions change
    /// nothing, so they never write; and a store is not created for a
    /// knowledge base that holds only its initial version (one that was
    /// only read, or asked about an unbound variable).
    pub fn save(&mut self) -> Result<(), String> {
        let result = self.try_save();
        if self.backend.take_replaced() {
            // The instance trapped while exporting: take the stored state
            // back rather than go on with an empty knowledge base.
            let reloaded = self.load();
            return Err(match (result, reloaded) {
                (Err(e), Ok(())) => format!("{e}; the knowledge base was reloaded from the store"),
                (Err(e), Err(m)) => format!("{e}; reloading the store failed too: {m}"),
                (Ok(()), _) => "the engine was restarted while saving".to_string(),
            });
        }
        result.map_err(|e| format!("cannot save the knowledge store: {e}"))
    }

    fn try_save(&mut self) -> Result<(), String> {
        if self.tier == Tier::ReadOnly {
            return Ok(());
        }
        let full = self.store.needs_full();
        if !full {
            // A knowledge base with only its initial version has nothing to
            // save: `arbores eval '(+ 1 2)'` creates no store.
            if !self.backend.has_unsaved_changes()? {
                return Ok(());
            }
        }
        if self.reload_failed {
            return Err(
                "the change was not saved: after the engine restarted, the store \
                        could not be loaded again, and saving now would replace its history; \
                        leave arbores and start it again"
                    .to_string(),
            );
        }
        let snapshot = self.backend.export(full)?;
        let stats = self.store.save(&snapshot)?;
        self.stats.last_save = Some(stats);
        Ok(())
    }
}
