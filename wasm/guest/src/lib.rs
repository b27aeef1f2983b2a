//! arbores-guest: the Arbores engine as a WebAssembly component.
//!
//! Built for wasm32-unknown-unknown (no WASI, no JS) and wrapped into a
//! component by `wasm/componentize`; the world is `wasm/wit/arbores.wit`.
//! This crate only translates between the WIT types and `arbores_core`; all
//! behaviour lives in the core, so that the native, wasmtime and browser
//! faces agree.

use std::cell::RefCell;

use std::rc::Rc;

use arbores_core::{
    BlobSource, CommitReply, Engine, Hash, Host, ImportError, KnowledgeStore, Limits, Run,
    Snapshot, Tier, Tool, ToolAnswer,
};

wit_bindgen::generate!({
    world: "arbores",
    path: "../wit",
});

use arbores::engine::host;
use arbores::engine::types as wit;
use exports::arbores::engine::engine::{Evaluation, Guest, LoadError, Restored};
use exports::arbores::engine::tools as wit_tools;

/// Counts the bytes the instance holds: the memory cap is checked against
/// it, so the cap bounds the linear memory, not an estimate of the Scheme
/// heap.
#[global_allocator]
static ALLOCATOR: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// The prepared image `scripts/build-image` wrote, when there was one at
/// build time (`build.rs`): the instance's first engine loads it instead of
/// compiling the prelude.
mod prepared {
    include!(concat!(env!("OUT_DIR"), "/prepared.rs"));
}

thread_local! {
    // One session per instance. wasm32-unknown-unknown is single-threaded,
    // so a thread local is a plain global; `None` until the first call.
    static ENGINE: RefCell<Option<Engine>> = const { RefCell::new(None) };
}

fn with_engine<R>(f: impl FnOnce(&mut Engine) -> R) -> R {
    ENGINE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let engine = slot.get_or_insert_with(|| {
            install_panic_hook(); // again after a reset: the same hook
            if let Some(bytes) = prepared::PREPARED_IMAGE {
                arbores_core::install_prepared_image(bytes);
            }
            let mut engine = Engine::new();
            engine.set_host(Box::new(ComponentHost));
            engine.set_memory_meter(Some(|| ALLOCATOR.allocated()));
            // The instance's linear memory only grows: what it has grown to.
            engine.set_memory_footprint(Some(|| core::arch::wasm32::memory_size(0) << 16));
            engine
        });
        f(engine)
    })
}

/// The core's host is the component's: its clock, its interrupt check,
/// where output goes and what the operator granted are the world's
/// imports.
struct ComponentHost;

impl Host for ComponentHost {
    fn now(&mut self) -> f64 {
        host::now()
    }

    fn should_stop(&mut self) -> bool {
        host::should_stop()
    }

    fn write_output(&mut self, text: &str) -> bool {
        host::write_output(text)
    }

    fn read_file(&mut self, path: &str, max: usize) -> Result<Vec<u8>, String> {
        host::read_file(path, max as u64)
    }

    fn write_file(&mut self, path: &str, bytes: &[u8], append: bool) -> Result<(), String> {
        host::write_file(path, bytes, append)
    }

    fn file_exists(&mut self, path: &str) -> Result<bool, String> {
        host::file_exists(path)
    }

    fn delete_file(&mut self, path: &str) -> Result<(), String> {
        host::delete_file(path)
    }

    fn read_input(&mut self) -> Result<Option<String>, String> {
        host::read_input()
    }

    fn write_error(&mut self, text: &str) -> bool {
        host::write_error(text)
    }

    fn command_line(&mut self) -> Vec<String> {
        host::command_line()
    }

    fn environment(&mut self) -> Vec<(String, String)> {
        host::environment()
    }
}

fn install_panic_hook() {
    // With panic = "abort" a panic becomes an `unreachable` trap that tells
    // the host nothing; hand it the message first.
    std::panic::set_hook(Box::new(|info| host::panicked(&info.to_string())));
}

struct Component;

impl Guest for Component {
    fn set_limits(limits: wit::Limits) {
        with_engine(|engine| {
            engine.set_limits(Limits {
                max_steps: limits.max_steps,
                max_memory: usize::try_from(limits.max_memory).unwrap_or(usize::MAX),
            })
        })
    }

    fn eval(source: String) -> Evaluation {
        evaluation_to_wit(with_engine(|engine| engine.eval(&source)))
    }

    fn reset() {
        ENGINE.with(|cell| cell.borrow_mut().take());
        with_engine(|_| ());
    }

    fn set_tier(tier: wit::Tier) {
        // The WIT enum lists the tiers in level order (arbores.wit); an
        // unknown case, impossible by the type, would get the fewest rights.
        let tier = Tier::from_level(tier as u8).unwrap_or(Tier::ReadOnly);
        with_engine(|engine| engine.set_tier(tier))
    }

    fn open_store() -> Result<(), LoadError> {
        with_engine(|engine| engine.open_store(Rc::new(HostStore))).map_err(load_error)
    }

    fn sync() -> Result<bool, LoadError> {
        with_engine(|engine| engine.sync()).map_err(load_error)
    }

    fn current_version() -> u64 {
        with_engine(|engine| engine.current_version())
    }

    fn take_committed() -> Vec<u64> {
        with_engine(|engine| engine.take_committed())
    }

    fn save_session() -> Result<Vec<u8>, String> {
        with_engine(|engine| engine.save_session())
    }

    fn restore_session(bytes: Vec<u8>) -> Result<Restored, String> {
        let listing = with_engine(|engine| engine.restore_session(&bytes))?;
        Ok(Restored {
            bindings: listing.bindings.into_iter().map(|(name, _)| name).collect(),
            skipped: listing.skipped,
        })
    }
}

/// The host's store, through the world's imports.
struct HostStore;

impl BlobSource for HostStore {
    fn blob(&self, name: &Hash) -> Result<Option<Vec<u8>>, String> {
        host::get_blob(name)
    }
}

impl KnowledgeStore for HostStore {
    fn head(&self) -> Result<Option<Vec<u8>>, String> {
        host::store_head()
    }

    fn commit(&self, base: Option<&[u8]>, snapshot: &Snapshot) -> Result<CommitReply, String> {
        let snapshot = wit::Snapshot {
            blobs: snapshot
                .blobs
                .iter()
                .map(|(name, bytes)| wit::Blob {
                    name: name.to_vec(),
                    bytes: bytes.clone(),
                })
                .collect(),
            refs: snapshot.refs.clone(),
        };
        Ok(match host::store_commit(base, &snapshot)? {
            wit::CommitReply::Committed => CommitReply::Committed,
            wit::CommitReply::Moved(head) => CommitReply::Moved(head),
        })
    }
}

fn evaluation_to_wit(result: arbores_core::Evaluation) -> Evaluation {
    Evaluation {
        value: result.value,
        output: result.output,
        error: result.error.map(|e| wit::EvalError {
            kind: e.kind.as_str().to_string(),
            message: e.message,
            position: e.position.map(|p| wit::Position {
                line: p.line,
                column: p.column,
            }),
            backtrace: e.backtrace,
        }),
    }
}

impl wit_tools::Guest for Component {
    fn define_tool(tool: wit_tools::Tool) -> Result<(), String> {
        with_engine(|engine| {
            engine.define_tool(Tool {
                name: tool.name,
                params: tool.params,
                description: tool.description,
            })
        })
    }

    fn start(source: String) -> wit_tools::Run {
        run_to_wit(with_engine(|engine| engine.start(&source)))
    }

    fn resume(id: u64, answers: Vec<wit_tools::Answer>) -> Result<wit_tools::Run, String> {
        let answers = answers
            .into_iter()
            .map(|a| match a {
                wit_tools::Answer::Value(v) => ToolAnswer::Value(v),
                wit_tools::Answer::Error(m) => ToolAnswer::Error(m),
            })
            .collect();
        with_engine(|engine| engine.resume(id, answers)).map(run_to_wit)
    }

    fn set_evaluation_budget(max_steps: Option<u64>) {
        with_engine(|engine| engine.set_evaluation_budget(max_steps))
    }

    fn abandon(id: u64) -> bool {
        with_engine(|engine| engine.abandon(id))
    }

    fn dump(id: u64) -> Result<Vec<u8>, String> {
        with_engine(|engine| engine.dump(id))
    }

    fn load_suspension(bytes: Vec<u8>) -> Result<wit_tools::Suspension, String> {
        with_engine(|engine| engine.load_suspension(&bytes)).map(suspension_to_wit)
    }

    fn set_dump_key(key: Vec<u8>) -> Result<(), String> {
        let key: [u8; 32] = key
            .as_slice()
            .try_into()
            .map_err(|_| format!("a dump key is 32 bytes, not {}", key.len()))?;
        with_engine(|engine| engine.set_dump_key(key));
        Ok(())
    }
}

fn suspension_to_wit(s: arbores_core::Suspension) -> wit_tools::Suspension {
    wit_tools::Suspension {
        id: s.id,
        calls: s
            .calls
            .into_iter()
            .map(|c| wit_tools::ToolCall {
                tool: c.tool,
                args: c.args,
            })
            .collect(),
        output: s.output,
    }
}

fn run_to_wit(run: Run) -> wit_tools::Run {
    match run {
        Run::Done(e) => wit_tools::Run::Done(evaluation_to_wit(e)),
        Run::Suspended(s) => wit_tools::Run::Suspended(suspension_to_wit(s)),
    }
}

fn load_error(e: ImportError) -> LoadError {
    LoadError {
        kind: e.kind().to_string(),
        message: e.to_string(),
        blob: e.blob().map(|h| h.to_vec()),
    }
}

export!(Component);
