//! One Scheme session, run by either engine, plus what the host adds around
//! an evaluation: the wall-clock deadline, Ctrl-C, and the knowledge store
//! (opened when the session starts, synced with other writers before each
//! evaluation; the engine stores each commit itself, through the store).

use std::time::{Duration, Instant};

use arbores_core::{Evaluation, Run, Suspension, Tool, ToolAnswer};

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
        self.store.end_reads();
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
        let sliced = self.slice(stopper, timeout, |backend| {
            let (evaluation, lost) = backend.eval(source);
            Ok((Run::Done(evaluation), lost))
        });
        match sliced {
            Ok((outcome, _)) => outcome,
            // `eval` never refuses: its errors are the evaluation's.
            Err(message) => Outcome::failed(message),
        }
    }

    /// Defines a host tool in the session (`arbores start --tool`).
    pub fn define_tool(&mut self, tool: &Tool) -> Result<(), String> {
        self.backend.define_tool(tool)
    }

    /// The most steps an evaluation started from now on may take across
    /// its run slices.
    pub fn set_evaluation_budget(&mut self, max_steps: Option<u64>) -> Result<(), String> {
        self.backend.set_evaluation_budget(max_steps)
    }

    /// The bytes of suspended evaluation `id` and its session.
    pub fn dump(&mut self, id: u64) -> Result<Vec<u8>, String> {
        self.backend.dump(id)
    }

    /// Suspends here the evaluation that `bytes` hold.
    pub fn load_suspension(&mut self, bytes: &[u8]) -> Result<Suspension, String> {
        self.backend.load_suspension(bytes)
    }

    /// Seals and checks dumps with `key` instead of the default key.
    pub fn set_dump_key(&mut self, key: [u8; 32]) -> Result<(), String> {
        self.backend.set_dump_key(key)
    }

    /// Evaluates `source` as [`Session::eval`] does, except that a call of
    /// a host tool suspends it: the outcome of the run slice, with the
    /// suspension when there is one.
    pub fn start(
        &mut self,
        stopper: &Stopper,
        timeout: Option<Duration>,
        source: &str,
    ) -> (Outcome, Option<Suspension>) {
        let sliced = self.slice(stopper, timeout, |backend| Ok(backend.start(source)));
        sliced.unwrap_or_else(|message| (Outcome::failed(message), None))
    }

    /// Continues suspended evaluation `id` with one answer per call, as the
    /// next run slice. Err: the engine refused the answers (the
    /// evaluation did not run and stays suspended).
    pub fn resume(
        &mut self,
        stopper: &Stopper,
        timeout: Option<Duration>,
        id: u64,
        answers: Vec<ToolAnswer>,
    ) -> Result<(Outcome, Option<Suspension>), String> {
        self.slice(stopper, timeout, |backend| {
            let run = backend.resume(id, answers)?;
            // A trap replaced the instance: `take_replaced` says so.
            let lost = backend.take_replaced();
            Ok((run, lost))
        })
    }

    /// One run slice (`eval`, `start`, `resume`) with what the host adds
    /// around it: the store synced first, the deadline, the output, what
    /// it committed. Err: `run` refused to run (its message).
    fn slice(
        &mut self,
        stopper: &Stopper,
        timeout: Option<Duration>,
        run: impl FnOnce(&mut dyn Backend) -> Result<(Run, bool), String>,
    ) -> Result<(Outcome, Option<Suspension>), String> {
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
            let mut outcome = Outcome::failed(String::new());
            outcome.store_error = Some(format!(
                "cannot read the knowledge store: {message}; nothing was evaluated"
            ));
            return Ok((outcome, None));
        }
        let version_before = self.backend.current_version().ok();
        let _ = self.store.take_trouble();
        stopper.begin(timeout);
        self.output.begin();
        let ran = run(self.backend.as_mut());
        stopper.end();
        // An idle session keeps no snapshot of the store open.
        self.store.end_reads();
        let (run, session_lost) = ran?;
        let (evaluation, suspension) = match run {
            Run::Done(evaluation) => (evaluation, None),
            Run::Suspended(mut s) => {
                let evaluation = Evaluation {
                    output: std::mem::take(&mut s.output),
                    ..Evaluation::default()
                };
                (evaluation, Some(s))
            }
        };
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
        let outcome = Outcome {
            evaluation,
            streamed: self.output.streamed(),
            stopped,
            session_lost,
            store_error,
            version_before,
            version_after,
            committed,
        };
        Ok((outcome, suspension))
    }
}

impl Outcome {
    /// An evaluation that did not run; `message`, when there is one, is
    /// its runtime error.
    fn failed(message: String) -> Outcome {
        let error = (!message.is_empty()).then(|| arbores_core::EvalError {
            kind: arbores_core::ErrorKind::Runtime,
            message,
            position: None,
            backtrace: vec![],
        });
        Outcome {
            evaluation: Evaluation {
                error,
                ..Evaluation::default()
            },
            streamed: Streamed::default(),
            stopped: None,
            session_lost: false,
            store_error: None,
            version_before: None,
            version_after: None,
            committed: Vec::new(),
        }
    }

    /// An evaluation that went on past its timeout and was ended by the
    /// process backstop (`Backstop::ProcessExit`): what the host knows of
    /// it then (what it printed is printed already).
    pub fn stuck(evaluation: Evaluation) -> Outcome {
        Outcome {
            evaluation,
            ..Outcome::failed(String::new())
        }
    }
}
