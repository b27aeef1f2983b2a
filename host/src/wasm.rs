//! `--engine wasm`: the core runs as a WebAssembly component inside wasmtime.
//!
//! The guest enforces the step and memory limits and polls `should-stop`
//! itself, so a limit normally ends an evaluation cleanly and the session
//! keeps its state. The host adds backstops for a guest that misbehaves: a
//! cap on linear memory somewhat above the core's, and a grace period after
//! the timeout, either wasmtime's epoch deadline or the process's end
//! (`Backstop`). A trap (the memory cap, the epoch deadline) makes the host
//! discard the instance, start a fresh one and say the session state was
//! lost (the session then loads the knowledge store into the fresh
//! instance); the process backstop reports the evaluation as the trap
//! would have and ends the process.
//!
//! The knowledge store crosses the boundary as blobs: the guest asks for
//! each blob it needs through `get-blob` when it needs it (answered from
//! the store file), and hands each commit to `store-commit`, which stores
//! it before the guest goes on. Only the blobs an evaluation uses
//! needs are read, each once, and none is held by the host.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::Duration;

use arbores_core::{
    ErrorKind, EvalError, Evaluation, Position, Run, Snapshot, Suspension, Tier, Tool, ToolAnswer,
    ToolCall,
};

use crate::store::{Commit, Store as KnowledgeFile};
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, ResourceLimiter, Store, Trap};

use crate::backend::{Backend, Backstop, Restored, Settings, Stopper};
use crate::store::LoadError;

mod bindings {
    wasmtime::component::bindgen!({
        world: "arbores",
        path: "../wasm/wit",
    });
}

use bindings::arbores::engine::types as wit;
use bindings::exports::arbores::engine::tools as wit_tools;
use bindings::{Arbores, ArboresPre};

include!(concat!(env!("OUT_DIR"), "/guest.rs"));

/// Must match the pin in host/Cargo.toml; part of the cache file's name.
const WASMTIME_VERSION: &str = "48.0.8";

/// How often the epoch advances: the resolution of the backstop deadline.
const EPOCH_TICK: Duration = Duration::from_millis(50);

/// How long after the timeout the guest has to stop on its own before the
/// epoch deadline traps it.
const GRACE: Duration = Duration::from_secs(2);

/// Native stack the guest's wasm frames may use (wasmtime's default is
/// 512 KiB). The host runs evaluations on a thread with a larger stack.
pub const MAX_WASM_STACK: usize = 16 << 20;

/// Linear memory allowed for a core cap: generous, because the backstop
/// must not fire before the core's own limit does. The core counts the
/// Scheme objects it allocates, not the allocator's slack, the spare
/// capacity of its growing vectors (up to three times their contents while
/// one reallocates), Rust's stack or the program text. Measured: a list
/// growing without bound peaks at about 3.5 to 4 times the core's cap in
/// linear memory when the core stops it.
fn linear_memory_cap(core_cap: usize) -> usize {
    let wanted = (core_cap as u64).saturating_mul(9) / 2 + (64 << 20);
    wanted.min(4 << 30) as usize
}

/// The most `--memory` the wasm engine accepts, so that the linear memory
/// cap still fits wasm32's 4 GiB.
pub const MAX_CORE_MEMORY: u64 = 896 << 20;

struct HostState {
    stopper: Stopper,
    /// `ARBORES_TEST_GUEST_DEAF`: `should-stop` always says no, as to a
    /// guest that stopped asking, so that tests reach the backstops.
    deaf: bool,
    settings: Settings,
    panic: Option<String>,
    limiter: MemoryLimiter,
    /// The knowledge store the guest reads and commits to.
    knowledge: KnowledgeFile,
}

impl bindings::arbores::engine::host::Host for HostState {
    fn should_stop(&mut self) -> bool {
        self.stopper.should_stop() && !self.deaf
    }

    fn write_output(&mut self, text: String) -> bool {
        self.settings.output.write(&text)
    }

    fn panicked(&mut self, message: String) {
        self.panic = Some(message);
    }

    fn now(&mut self) -> f64 {
        crate::backend::now(self.settings.clock)
    }

    fn get_blob(&mut self, name: Vec<u8>) -> Result<Option<Vec<u8>>, String> {
        let name: arbores_core::Hash = name
            .as_slice()
            .try_into()
            .map_err(|_| format!("a blob name of {} bytes instead of 32", name.len()))?;
        self.knowledge.needed_blob(&name).map_err(|e| e.message)
    }

    fn read_file(&mut self, path: String, max: u64) -> Result<Vec<u8>, String> {
        let max = usize::try_from(max).unwrap_or(usize::MAX);
        self.settings.grants.read_file(&path, max)
    }

    fn write_file(&mut self, path: String, bytes: Vec<u8>, append: bool) -> Result<(), String> {
        self.settings.grants.write_file(&path, &bytes, append)
    }

    fn file_exists(&mut self, path: String) -> Result<bool, String> {
        self.settings.grants.file_exists(&path)
    }

    fn delete_file(&mut self, path: String) -> Result<(), String> {
        self.settings.grants.delete_file(&path)
    }

    fn read_input(&mut self) -> Result<Option<String>, String> {
        self.settings.grants.read_input()
    }

    fn write_error(&mut self, text: String) -> bool {
        crate::grants::write_error(&text)
    }

    fn command_line(&mut self) -> Vec<String> {
        self.settings.grants.command_line.clone()
    }

    fn environment(&mut self) -> Vec<(String, String)> {
        self.settings.grants.env.clone()
    }

    fn store_head(&mut self) -> Result<Option<Vec<u8>>, String> {
        self.knowledge.head().map_err(|e| e.message)
    }

    fn store_commit(
        &mut self,
        base: Option<Vec<u8>>,
        snapshot: wit::Snapshot,
    ) -> Result<wit::CommitReply, String> {
        let blobs = snapshot
            .blobs
            .into_iter()
            .map(|b| {
                let name: arbores_core::Hash = b.name.as_slice().try_into().map_err(|_| {
                    format!(
                        "the engine committed a blob named by {} bytes instead of 32",
                        b.name.len()
                    )
                })?;
                Ok((name, b.bytes))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let snapshot = Snapshot {
            blobs,
            refs: snapshot.refs,
        };
        match self.knowledge.commit(base.as_deref(), &snapshot) {
            Ok(Commit::Done(_)) => Ok(wit::CommitReply::Committed),
            Ok(Commit::Moved(head)) => Ok(wit::CommitReply::Moved(head)),
            Err(e) => Err(e.message),
        }
    }
}

// The `types` interface has only type definitions; the component imports
// it because the exported `engine` interface uses them.
impl wit::Host for HostState {}

/// Caps the instance's linear memory. Growing past the cap traps (rather
/// than making `memory.grow` return -1, which Rust's allocator turns into an
/// opaque abort), and the flag tells the host why.
struct MemoryLimiter {
    max_bytes: usize,
    hit: bool,
    /// The size the linear memory was made with.
    initial: usize,
    /// The linear memory, once found, asking for huge pages as it grows.
    pages: Option<crate::huge_pages::LinearMemory>,
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max_bytes {
            self.hit = true;
            wasmtime::bail!(
                "linear memory would grow to {desired} bytes, over the cap of {} bytes",
                self.max_bytes
            );
        }
        if current == 0 {
            self.initial = desired;
        }
        if let Some(pages) = &mut self.pages {
            pages.growing(current);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}

pub struct WasmSession {
    engine: Engine,
    pre: ArboresPre<HostState>,
    store: Store<HostState>,
    instance: Arbores,
    settings: Settings,
    stopper: Stopper,
    /// The instance trapped and was replaced since `take_replaced`.
    replaced: bool,
}

impl WasmSession {
    pub fn new(
        settings: &Settings,
        stopper: Stopper,
        knowledge: &KnowledgeFile,
    ) -> Result<WasmSession, String> {
        let Some(guest) = GUEST else {
            return Err(
                "this arbores was built without the wasm guest; run scripts/build \
                        (or use --engine native)"
                    .into(),
            );
        };
        let mut config = Config::new();
        // The checks are in the compiled code: a guest compiled without
        // them is another compiled guest (cached apart, by the engine's
        // settings).
        config.epoch_interruption(matches!(settings.backstop, Backstop::Epoch));
        // Checked against the async stack size even though nothing here runs
        // asynchronously.
        config.async_stack_size(MAX_WASM_STACK);
        config.max_wasm_stack(MAX_WASM_STACK);
        // wasmtime's own linear memory, its initial data mapped
        // copy-on-write from the compiled guest, in the layout
        // `huge_pages::LinearMemory` finds it by (wasmtime's defaults on
        // 64-bit systems, stated): reserved whole, guards on both sides.
        config
            .memory_init_cow(true)
            .memory_reservation(crate::huge_pages::RESERVATION)
            .memory_may_move(false)
            .guard_before_linear_memory(true);
        let engine = Engine::new(&config).map_err(|e| format!("cannot start wasmtime: {e}"))?;
        let component = load_component(&engine, guest)?;

        let mut linker = Linker::<HostState>::new(&engine);
        Arbores::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)
            .map_err(|e| format!("cannot link the wasm guest: {e}"))?;
        let pre = linker
            .instantiate_pre(&component)
            .and_then(ArboresPre::new)
            .map_err(|e| format!("the embedded wasm guest does not fit this host: {e}"))?;

        if settings.timeout.is_some() && matches!(settings.backstop, Backstop::Epoch) {
            start_epoch_ticker(&engine);
        }
        let (store, instance) = instantiate(&engine, &pre, settings, &stopper, knowledge)?;
        Ok(WasmSession {
            engine,
            pre,
            store,
            instance,
            settings: settings.clone(),
            stopper,
            replaced: false,
        })
    }

    /// Replaces a trapped instance with a fresh one.
    fn replace_instance(&mut self) {
        let knowledge = self.store.data().knowledge.clone();
        match instantiate(
            &self.engine,
            &self.pre,
            &self.settings,
            &self.stopper,
            &knowledge,
        ) {
            Ok((store, instance)) => {
                self.store = store;
                self.instance = instance;
                self.replaced = true;
            }
            Err(message) => {
                // Leaves the old, poisoned instance: every later call
                // reports a trap, which is the truth.
                eprintln!("error: {message}");
            }
        }
    }

    /// Runs one call other than `eval`: no deadline (these calls do not
    /// poll should-stop); a trap replaces the instance and is an error.
    fn call<T>(
        &mut self,
        what: &str,
        f: impl FnOnce(&Arbores, &mut Store<HostState>) -> wasmtime::Result<T>,
    ) -> Result<T, String> {
        self.prepare_call();
        let result = f(&self.instance, &mut self.store);
        result.map_err(|err| self.trapped(&err, what))
    }

    fn prepare_call(&mut self) {
        let state = self.store.data_mut();
        state.panic = None;
        state.limiter.hit = false;
        self.store.set_epoch_deadline(1 << 48);
    }

    fn trapped(&mut self, err: &wasmtime::Error, what: &str) -> String {
        let error = self.explain_trap(err);
        self.replace_instance();
        format!("the engine failed while {what}: {}", error.message)
    }

    /// Evaluates `source`; the flag says whether the instance trapped and
    /// was replaced, losing the session's state.
    pub fn eval(&mut self, source: &str) -> (Evaluation, bool) {
        match self.run_slice(|i, s| i.arbores_engine_engine().call_eval(s, source)) {
            Ok(result) => (from_wit(result), false),
            Err(evaluation) => (evaluation, true),
        }
    }

    /// Runs a call that evaluates Scheme code, under the wall-clock
    /// backstop; a trap replaces the instance and becomes the failed
    /// evaluation.
    fn run_slice<T>(
        &mut self,
        f: impl FnOnce(&Arbores, &mut Store<HostState>) -> wasmtime::Result<T>,
    ) -> Result<T, Evaluation> {
        let state = self.store.data_mut();
        state.panic = None;
        state.limiter.hit = false;
        let ticks = match self.settings.timeout {
            Some(t) => ((t + GRACE).as_millis() / EPOCH_TICK.as_millis()) as u64 + 1,
            // Never, in practice, but far from overflowing the epoch counter.
            None => 1 << 48,
        };
        self.store.set_epoch_deadline(ticks);
        let watchdog = match (&self.settings.backstop, self.settings.timeout) {
            (Backstop::ProcessExit(stuck), Some(t)) => {
                Some(Watchdog::arm(t + GRACE, stuck.clone()))
            }
            _ => None,
        };
        let result = f(&self.instance, &mut self.store);
        drop(watchdog);
        result.map_err(|err| {
            let error = self.explain_trap(&err);
            self.replace_instance();
            Evaluation {
                value: None,
                output: String::new(),
                error: Some(error),
            }
        })
    }

    fn explain_trap(&self, err: &wasmtime::Error) -> EvalError {
        let state = self.store.data();
        let (kind, message) = if let Some(panic) = &state.panic {
            (
                ErrorKind::Runtime,
                format!("internal error in the engine: {panic}"),
            )
        } else if state.limiter.hit {
            (
                ErrorKind::MemoryLimit,
                format!(
                    "memory limit exceeded: the engine's memory reached its cap of {} bytes",
                    state.limiter.max_bytes
                ),
            )
        } else {
            match err.downcast_ref::<Trap>() {
                Some(Trap::Interrupt) => (ErrorKind::Interrupted, not_stopped()),
                Some(Trap::StackOverflow) => (
                    ErrorKind::Runtime,
                    "stack overflow in the engine".to_string(),
                ),
                _ => (ErrorKind::Runtime, format!("the engine trapped: {err}")),
            }
        };
        EvalError {
            kind,
            message,
            position: None,
            backtrace: vec![],
        }
    }
}

impl Backend for WasmSession {
    fn eval(&mut self, source: &str) -> (Evaluation, bool) {
        WasmSession::eval(self, source)
    }

    fn set_limits(&mut self, limits: arbores_core::Limits) -> Result<(), String> {
        let wit_limits = wit::Limits {
            max_steps: limits.max_steps,
            max_memory: limits.max_memory as u64,
        };
        self.call("setting the limits", |i, s| {
            i.arbores_engine_engine().call_set_limits(s, wit_limits)
        })
    }

    fn open_store(&mut self, _store: &KnowledgeFile) -> Result<(), Result<LoadError, String>> {
        // The instance's host state holds the store (given at creation).
        let result = self.call("opening the knowledge store", |i, s| {
            i.arbores_engine_engine().call_open_store(s)
        });
        match result {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Ok(from_wit_load_error(e))),
            Err(m) => Err(Err(m)),
        }
    }

    fn sync(&mut self) -> Result<bool, Result<LoadError, String>> {
        let result = self.call("reading the knowledge store", |i, s| {
            i.arbores_engine_engine().call_sync(s)
        });
        match result {
            Ok(Ok(moved)) => Ok(moved),
            Ok(Err(e)) => Err(Ok(from_wit_load_error(e))),
            Err(m) => Err(Err(m)),
        }
    }

    fn current_version(&mut self) -> Result<u64, String> {
        self.call("reading the current version", |i, s| {
            i.arbores_engine_engine().call_current_version(s)
        })
    }

    fn take_committed(&mut self) -> Result<Vec<u64>, String> {
        self.call("reading the versions committed", |i, s| {
            i.arbores_engine_engine().call_take_committed(s)
        })
    }

    fn take_replaced(&mut self) -> bool {
        std::mem::take(&mut self.replaced)
    }

    fn define_tool(&mut self, tool: &Tool) -> Result<(), String> {
        let wit_tool = wit_tools::Tool {
            name: tool.name.clone(),
            params: tool.params.clone(),
            description: tool.description.clone(),
        };
        self.call("defining a tool", |i, s| {
            i.arbores_engine_tools().call_define_tool(s, &wit_tool)
        })?
    }

    fn start(&mut self, source: &str) -> (Run, bool) {
        match self.run_slice(|i, s| i.arbores_engine_tools().call_start(s, source)) {
            Ok(run) => (run_from_wit(run), false),
            Err(evaluation) => (Run::Done(evaluation), true),
        }
    }

    fn resume(&mut self, id: u64, answers: Vec<ToolAnswer>) -> Result<Run, String> {
        let answers: Vec<wit_tools::Answer> = answers
            .into_iter()
            .map(|a| match a {
                ToolAnswer::Value(v) => wit_tools::Answer::Value(v),
                ToolAnswer::Error(m) => wit_tools::Answer::Error(m),
            })
            .collect();
        match self.run_slice(|i, s| i.arbores_engine_tools().call_resume(s, id, &answers)) {
            Ok(result) => result.map(run_from_wit),
            Err(evaluation) => Ok(Run::Done(evaluation)),
        }
    }

    fn set_evaluation_budget(&mut self, max_steps: Option<u64>) -> Result<(), String> {
        self.call("setting the evaluation budget", |i, s| {
            i.arbores_engine_tools()
                .call_set_evaluation_budget(s, max_steps)
        })
    }

    fn abandon(&mut self, id: u64) -> Result<bool, String> {
        self.call("abandoning a suspended evaluation", |i, s| {
            i.arbores_engine_tools().call_abandon(s, id)
        })
    }

    fn dump(&mut self, id: u64) -> Result<Vec<u8>, String> {
        self.call("dumping a suspended evaluation", |i, s| {
            i.arbores_engine_tools().call_dump(s, id)
        })?
    }

    fn load_suspension(&mut self, bytes: &[u8]) -> Result<Suspension, String> {
        self.call("loading a suspended evaluation", |i, s| {
            i.arbores_engine_tools().call_load_suspension(s, bytes)
        })?
        .map(suspension_from_wit)
    }

    fn set_dump_key(&mut self, key: [u8; 32]) -> Result<(), String> {
        self.call("setting the dump key", |i, s| {
            i.arbores_engine_tools().call_set_dump_key(s, &key)
        })?
    }

    fn save_session(&mut self) -> Result<Vec<u8>, String> {
        self.call("saving the session", |i, s| {
            i.arbores_engine_engine().call_save_session(s)
        })?
    }

    fn restore_session(&mut self, bytes: &[u8]) -> Result<Restored, String> {
        let r = self.call("restoring a session", |i, s| {
            i.arbores_engine_engine().call_restore_session(s, bytes)
        })??;
        Ok(Restored {
            bindings: r.bindings,
            skipped: r.skipped,
        })
    }
}

fn suspension_from_wit(s: wit_tools::Suspension) -> Suspension {
    Suspension {
        id: s.id,
        calls: s
            .calls
            .into_iter()
            .map(|c| ToolCall {
                tool: c.tool,
                args: c.args,
            })
            .collect(),
        output: s.output,
    }
}

#[cfg_attr(not(test), allow(dead_code))]
fn run_from_wit(run: wit_tools::Run) -> Run {
    match run {
        wit_tools::Run::Done(e) => Run::Done(from_wit(e)),
        wit_tools::Run::Suspended(s) => Run::Suspended(suspension_from_wit(s)),
    }
}

fn instantiate(
    engine: &Engine,
    pre: &ArboresPre<HostState>,
    settings: &Settings,
    stopper: &Stopper,
    knowledge: &KnowledgeFile,
) -> Result<(Store<HostState>, Arbores), String> {
    let limits = settings.limits;
    let max_bytes = linear_memory_cap(limits.max_memory);
    let state = HostState {
        stopper: stopper.clone(),
        deaf: std::env::var_os("ARBORES_TEST_GUEST_DEAF").is_some(),
        settings: settings.clone(),
        panic: None,
        limiter: MemoryLimiter {
            max_bytes,
            hit: false,
            initial: 0,
            pages: None,
        },
        knowledge: knowledge.clone(),
    };
    let mut store = Store::new(engine, state);
    store.limiter(|state| &mut state.limiter);
    // A guest whose output the host refuses (`--json`) returns it in one
    // string; allow as much as its memory can hold rather than wasmtime's
    // default 128 MiB.
    store.set_hostcall_fuel(max_bytes);
    store.set_epoch_deadline(1 << 48);
    // One instantiation at a time in the process, so that the memory
    // found is this one's (its size alone would not tell it from another
    // made at the same time).
    static INSTANTIATING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let one_at_a_time = INSTANTIATING.lock().unwrap_or_else(|e| e.into_inner());
    let instance = pre
        .instantiate(&mut store)
        .map_err(|e| format!("cannot start the wasm guest: {e}"))?;
    let limiter = &mut store.data_mut().limiter;
    limiter.pages = crate::huge_pages::LinearMemory::find(limiter.initial);
    drop(one_at_a_time);
    let wit_limits = wit::Limits {
        max_steps: limits.max_steps,
        max_memory: limits.max_memory as u64,
    };
    instance
        .arbores_engine_engine()
        .call_set_limits(&mut store, wit_limits)
        .map_err(|e| format!("cannot set the wasm guest's limits: {e}"))?;
    let tier = match settings.tier {
        Tier::System => wit::Tier::System,
        Tier::ReadWrite => wit::Tier::ReadWrite,
        Tier::ReadOnly => wit::Tier::ReadOnly,
    };
    instance
        .arbores_engine_engine()
        .call_set_tier(&mut store, tier)
        .map_err(|e| format!("cannot set the wasm guest's tier: {e}"))?;
    Ok((store, instance))
}

fn from_wit_load_error(e: wit::LoadError) -> LoadError {
    LoadError {
        kind: e.kind,
        message: e.message,
        blob: e.blob.and_then(|b| b.as_slice().try_into().ok()),
    }
}

fn from_wit(result: wit::Evaluation) -> Evaluation {
    Evaluation {
        value: result.value,
        output: result.output,
        error: result.error.map(|e| EvalError {
            // A kind this host does not know is still an error.
            kind: ErrorKind::from_name(&e.kind).unwrap_or(ErrorKind::Runtime),
            message: e.message,
            position: e.position.map(|p| Position {
                line: p.line,
                column: p.column,
            }),
            backtrace: e.backtrace,
        }),
    }
}

/// What a backstop says of an evaluation that went on past its timeout.
fn not_stopped() -> String {
    format!(
        "the engine did not stop within {}s of the timeout",
        GRACE.as_secs()
    )
}

/// The process backstop of one run slice (`Backstop::ProcessExit`): a
/// thread that waits until `after` has passed and, unless the slice ended
/// first (the watchdog dropped), reports the evaluation as a backstop's
/// trap would and ends the process.
struct Watchdog {
    /// Dropped with the watchdog: the thread wakes and ends.
    _ended: std::sync::mpsc::Sender<()>,
}

impl Watchdog {
    fn arm(
        after: Duration,
        stuck: std::sync::Arc<dyn Fn(Evaluation) -> u8 + Send + Sync>,
    ) -> Watchdog {
        let (ended, wait) = std::sync::mpsc::channel::<()>();
        let spawned = std::thread::Builder::new()
            .name("watchdog".into())
            .spawn(move || {
                if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(after) {
                    let status = stuck(Evaluation {
                        value: None,
                        output: String::new(),
                        error: Some(EvalError {
                            kind: ErrorKind::Interrupted,
                            message: not_stopped(),
                            position: None,
                            backtrace: vec![],
                        }),
                    });
                    std::process::exit(i32::from(status));
                }
            });
        // A watchdog that cannot start loses only the backstop: the timeout
        // itself is enforced through should-stop.
        drop(spawned);
        Watchdog { _ended: ended }
    }
}

fn start_epoch_ticker(engine: &Engine) {
    static STARTED: Once = Once::new();
    let engine = engine.clone();
    STARTED.call_once(move || {
        let spawned = std::thread::Builder::new()
            .name("epoch-ticker".into())
            .spawn(move || loop {
                std::thread::sleep(EPOCH_TICK);
                engine.increment_epoch();
            });
        // Without the ticker only the backstop is lost; the timeout itself
        // is enforced through should-stop.
        drop(spawned);
    });
}

/// Compiling the guest takes a noticeable fraction of a second (far more in
/// a debug build of the host); reuse the compiled form from the cache.
fn load_component(engine: &Engine, guest: &[u8]) -> Result<Component, String> {
    let cached = cache_file(engine);
    if let Some(path) = &cached {
        if path.is_file() {
            // SAFETY: the file is one this host wrote into the user's own
            // cache directory, named by the guest's hash and the engine's
            // compatibility hash; wasmtime checks its version and settings
            // and we fall back to compiling when it refuses.
            if let Ok(component) = unsafe { Component::deserialize_file(engine, path) } {
                return Ok(component);
            }
        }
    }
    let component =
        Component::new(engine, guest).map_err(|e| format!("cannot compile the wasm guest: {e}"))?;
    if let Some(path) = &cached {
        // A cache that cannot be written only costs the next start-up time.
        let _ = write_cache(&component, path);
    }
    Ok(component)
}

fn cache_file(engine: &Engine) -> Option<PathBuf> {
    let dir = crate::paths::cache_dir()?;
    let mut hasher = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    WASMTIME_VERSION.hash(&mut hasher);
    Some(dir.join(format!(
        "guest-{GUEST_HASH:016x}-{:016x}.cwasm",
        hasher.finish()
    )))
}

fn write_cache(component: &Component, path: &Path) -> std::io::Result<()> {
    let bytes = component.serialize().map_err(std::io::Error::other)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    // Written aside and renamed into place, so a reader never sees half a
    // file, even with several arbores starting at once.
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
impl WasmSession {
    /// A session for test `name` that opens no store: a read-only one
    /// where there is no file stands for none (nothing is created).
    pub fn without_store(settings: &Settings, name: &str) -> WasmSession {
        let none = std::env::temp_dir().join(format!("arbores-{name}-no-store"));
        let store = KnowledgeFile::open(&none, crate::store::Access::ReadOnly)
            .expect("an absent read-only store");
        WasmSession::new(settings, Stopper::default(), &store)
            .expect("the wasm guest (run scripts/build)")
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;

    /// Bytes of `/proc/self/smaps` in huge pages and in all, for the
    /// mappings within `range`.
    fn huge_and_resident(range: std::ops::Range<usize>) -> (usize, usize) {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let (mut inside, mut huge, mut resident) = (false, 0, 0);
        for line in smaps.lines() {
            let mut fields = line.split_whitespace();
            let first = fields.next().unwrap_or("");
            if let Some((start, _)) = first.split_once('-') {
                if let Ok(start) = usize::from_str_radix(start, 16) {
                    inside = range.contains(&start);
                    continue;
                }
            }
            let kb = || {
                fields
                    .clone()
                    .next()
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap_or(0)
            };
            if inside && first == "AnonHugePages:" {
                huge += kb() << 10;
            } else if inside && first == "Rss:" {
                resident += kb() << 10;
            }
        }
        (huge, resident)
    }

    /// The guest's memory is wasmtime's own, its data mapped from the
    /// compiled guest rather than copied (the memory is found by the file
    /// mapping in it), and what a program grows it by is in huge pages
    /// where the system gives them.
    #[test]
    fn linear_memory_starts_copy_on_write_and_grows_in_huge_pages() {
        let settings = Settings::for_tests(
            crate::backend::EngineKind::Wasm,
            arbores_core::Limits {
                max_steps: 100_000_000,
                max_memory: 400 << 20,
            },
        );
        let mut session = WasmSession::without_store(&settings, "huge-pages");
        let base = session
            .store
            .data()
            .limiter
            .pages
            .as_ref()
            .map(|p| p.base());
        let base = base.expect("the linear memory, with its image mapped from a file, found");
        let reservation = crate::huge_pages::RESERVATION as usize;
        let (_, at_start) = huge_and_resident(base..base + reservation);
        let (evaluation, replaced) =
            session.eval("(define v (make-vector 10000000 0)) (vector-length v)");
        assert!(!replaced);
        assert_eq!(
            evaluation.value.as_deref(),
            Some("10000000"),
            "{evaluation:?}"
        );
        let (huge, resident) = huge_and_resident(base..base + reservation);
        assert!(resident > at_start + (60 << 20), "{resident} resident");
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        if thp.is_ok_and(|s| !s.contains("[never]")) {
            assert!(huge > 50 << 20, "{huge} of {resident} bytes in huge pages");
        }
    }
}
