//! One Scheme session, run by either engine, plus what the host adds around
//! an evaluation: the wall-clock deadline, Ctrl-C, and the knowledge store
//! (loaded when the session starts, saved after each evaluation that
//! changed the knowledge base).

use std::time::{Duration, Instant};

use arbores_core::{Evaluation, Tier};

use crate::backend::{Backend, EngineKind, Settings, StopReason, Stopper};
use crate::store::{SaveStats, Store};
use crate::{native, wasm};

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
