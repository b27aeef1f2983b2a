//! One Scheme session, run by either engine, plus what the host adds around
//! an evaluation: the wall-clock deadline, Ctrl-C, and the knowledge store
//! (opened when the session starts, synced with other writers before each
//! evaluation; the engine stores each commit itself, through the store).

use std::time::{Duration, Instant};

use arbores_core::Evaluation;

use crate::backend::{Backend, EngineKind, OutputSink, Settings, StopReason, Stopper, Streamed};
use crate::exit::Failure;
use crate::store::Store;
use crate::{native, wasm};

/// An evaluation as the host saw it.
pub struct Outcome {
    /// Its `output` is what the engine did not hand to the output sink as
    /// it was written (`streamed`).
    pub evaluation: Evaluation,
    /// The output printed while the evaluation ran.
    pub streamed: Streamed,
    /// Set when the host stopped the evaluation (timeout, Ctrl-C).
    pub stopped: Option<StopReason>,
    /// The wasm instance trapped and was replaced by a fresh one: the
    /// session's definitions are gone (its knowledge comes back from the
    /// store).
    pub session_lost: bool,
    /// The store could not be read before the evaluation (it did not run),
    /// a read it failed ended the evaluation, or it could not be reloaded
    /// after a restart.
    pub store_error: Option<String>,
    /// The current version before and after the evaluation.
    pub version_before: Option<u64>,
    pub version_after: Option<u64>,
    /// The versions the evaluation committed, each stored before the call
    /// that made it returned.
    pub committed: Vec<u64>,
}

/// How long opening the store took, for `,settings`.
#[derive(Default)]
pub struct StoreStats {
    pub opened: Option<Duration>,
}

pub struct Session {
    backend: Box<dyn Backend>,
    store: Store,
    output: OutputSink,
    pub stats: StoreStats,
}

impl Session {
    /// Starts an engine and opens the store's knowledge base in it. A
    /// store that cannot be read is an error: the session does not start.
    pub fn new(settings: &Settings, stopper: &Stopper, store: Store) -> Result<Session, Failure> {
        let backend: Box<dyn Backend> = match settings.engine {
            EngineKind::Native => Box::new(native::NativeSession::new(settings, stopper.clone())),
            EngineKind::Wasm => {
                Box::new(wasm::WasmSession::new(settings, stopper.clone(), &store)?)
            }
        };
        let mut session = Session {
            backend,
            store,
            output: settings.output.clone(),
            stats: StoreStats::default(),
        };
        session.open().map_err(|message| {
            let path = session.store.path().display().to_string();
            let what = if message.starts_with(&path) {
                String::new()
            } else {
                format!(" {path}")
            };
            Failure::store(format!(
                "cannot open the knowledge store{what}: {message}\n\
                 note: nothing was changed; repair it (`arbores fsck`), move it, or use \
                 another with --store FILE (or ARBORES_STORE)"
            ))
        })?;
        Ok(session)
    }

    /// Ends the session when the process ends: the engine is ended by
    /// `Backend::end` (what it holds in memory may be left to the operating
    /// system: freeing ten million objects one by one takes a tenth of a
    /// second, the caches of a store of a million nodes as long), then the
    /// store is closed, whatever clones of it the engine kept.
    pub fn end(self) {
        let Session { backend, store, .. } = self;
        backend.end();
        store.close();
    }

    /// The session's definitions as bytes (`Engine::save_session`).
    pub fn save_session(&mut self) -> Result<Vec<u8>, String> {
        self.backend.save_session()
    }

    /// Replaces the session's definitions with those `bytes` hold.
    pub fn restore_session(&mut self, bytes: &[u8]) -> Result<crate::backend::Restored, String> {
        self.backend.restore_session(bytes)
    }

    /// The limits of the evaluations from now on.
    pub fn set_limits(&mut self, limits: arbores_core::Limits) -> Result<(), String> {
        self.backend.set_limits(limits)
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    fn open(&mut self) -> Result<(), String> {
        let start = Instant::now();
        let result = self.backend.open_store(&self.store);
        self.backend.take_replaced();
        match result {
            Ok(()) => {
                self.stats.opened = Some(start.elapsed());
                Ok(())
            }
            Err(Ok(e)) => Err(self.store.explain(&e)),
            Err(Err(message)) => Err(message),
        }
    }

    pub fn eval(&mut self, stopper: &Stopper, timeout: Option<Duration>, source: &str) -> Outcome {
        // A long-lived session works on what other writers stored.
        let synced = match self.backend.sync() {
            Ok(_) => None,
            Err(Ok(e)) => Some(self.store.explain(&e)),
            Err(Err(m)) => Some(m),
        };
        if self.backend.take_replaced() {
            let _ = self.open();
        }
        if let Some(message) = synced {
            return Outcome {
                evaluation: Evaluation::default(),
                streamed: Streamed::default(),
                stopped: None,
                session_lost: false,
                store_error: Some(format!(
                    "cannot read the knowledge store: {message}; nothing was evaluated"
                )),
                version_before: None,
                version_after: None,
                committed: Vec::new(),
            };
        }
        let version_before = self.backend.current_version().ok();
        let _ = self.store.take_trouble();
        stopper.begin(timeout);
        self.output.begin();
        let (evaluation, session_lost) = self.backend.eval(source);
        stopper.end();
        let stopped = match &evaluation.error {
            Some(e) if e.kind == arbores_core::ErrorKind::Interrupted => stopper.reason(),
            _ => None,
        };
        self.backend.take_replaced();
        let mut store_error = None;
        let mut committed = Vec::new();
        if session_lost {
            // A fresh instance: its knowledge base comes back from the store
            // (every commit was stored when it was made).
            store_error = self
                .open()
                .err()
                .map(|m| format!("cannot reopen the knowledge store after the restart: {m}"));
        } else {
            committed = self.backend.take_committed().unwrap_or_default();
        }
        // A read the store failed ended the evaluation: the store is at
        // fault (a damaged file, a lost disk), not the program.
        if let (Some(trouble), Some(_)) = (self.store.take_trouble(), &evaluation.error) {
            store_error.get_or_insert(format!("the knowledge store: {trouble}"));
        }
        let version_after = self.backend.current_version().ok();
        Outcome {
            evaluation,
            streamed: self.output.streamed(),
            stopped,
            session_lost,
            store_error,
            version_before,
            version_after,
            committed,
        }
    }
}
