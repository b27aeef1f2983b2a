//! `--engine native`: arbores-core linked directly. No sandbox: the step and
//! memory limits are the core's own, and nothing backs them up.

use std::rc::Rc;

use arbores_core::repo::index::SemanticConfig;
use arbores_core::{Engine, Evaluation, Host, Run, Suspension, Tool, ToolAnswer};

use crate::backend::{Backend, OutputSink, Restored, Settings, Stopper};
use crate::grants::Grants;
use crate::store::{EngineStore, LoadError, Store};

pub struct NativeSession {
    engine: Engine,
}

/// What the core asks of the host: the clock (ARBORES_CLOCK or the
/// system's), the stopper (deadline, Ctrl-C), where output goes and what
/// the operator granted.
struct NativeHost {
    clock: Option<f64>,
    stopper: Stopper,
    output: OutputSink,
    grants: Grants,
}

impl Host for NativeHost {
    fn now(&mut self) -> f64 {
        crate::backend::now(self.clock)
    }

    fn should_stop(&mut self) -> bool {
        self.stopper.should_stop()
    }

    fn write_output(&mut self, text: &str) -> bool {
        self.output.write(text)
    }

    fn read_file(&mut self, path: &str, max: usize) -> Result<Vec<u8>, String> {
        self.grants.read_file(path, max)
    }

    fn write_file(&mut self, path: &str, bytes: &[u8], append: bool) -> Result<(), String> {
        self.grants.write_file(path, bytes, append)
    }

    fn file_exists(&mut self, path: &str) -> Result<bool, String> {
        self.grants.file_exists(path)
    }

    fn delete_file(&mut self, path: &str) -> Result<(), String> {
        self.grants.delete_file(path)
    }

    fn read_input(&mut self) -> Result<Option<String>, String> {
        self.grants.read_input()
    }

    fn write_error(&mut self, text: &str) -> bool {
        crate::grants::write_error(text)
    }

    fn command_line(&mut self) -> Vec<String> {
        self.grants.command_line.clone()
    }

    fn environment(&mut self) -> Vec<(String, String)> {
        self.grants.env.clone()
    }
}

impl NativeSession {
    pub fn new(settings: &Settings, stopper: Stopper) -> NativeSession {
        let mut engine = Engine::new();
        engine.set_memory_meter(Some(|| {
            crate::backend::ALLOCATOR.allocated() + crate::huge_pages::rounding()
        }));
        engine.set_limits(settings.limits);
        engine.set_tier(settings.tier);
        if let Some(e5) = &settings.embedder {
            engine.set_embedder(Box::new(e5.clone()), SemanticConfig::default());
        }
        engine.set_host(Box::new(NativeHost {
            clock: settings.clock,
            stopper,
            output: settings.output.clone(),
            grants: settings.grants.clone(),
        }));
        NativeSession { engine }
    }
}

impl Backend for NativeSession {
    fn eval(&mut self, source: &str) -> (Evaluation, bool) {
        (self.engine.eval(source), false)
    }

    fn set_limits(&mut self, limits: arbores_core::Limits) -> Result<(), String> {
        self.engine.set_limits(limits);
        Ok(())
    }

    fn open_store(&mut self, store: &Store) -> Result<(), Result<LoadError, String>> {
        self.engine
            .open_store(Rc::new(EngineStore(store.clone())))
            .map_err(|e| Ok(e.into()))
    }

    fn sync(&mut self) -> Result<bool, Result<LoadError, String>> {
        self.engine.sync().map_err(|e| Ok(e.into()))
    }

    fn current_version(&mut self) -> Result<u64, String> {
        Ok(self.engine.current_version())
    }

    fn take_committed(&mut self) -> Result<Vec<u64>, String> {
        Ok(self.engine.take_committed())
    }

    fn take_replaced(&mut self) -> bool {
        false
    }

    fn define_tool(&mut self, tool: &Tool) -> Result<(), String> {
        self.engine.define_tool(tool.clone())
    }

    fn start(&mut self, source: &str) -> (Run, bool) {
        (self.engine.start(source), false)
    }

    fn resume(&mut self, id: u64, answers: Vec<ToolAnswer>) -> Result<Run, String> {
        self.engine.resume(id, answers)
    }

    fn set_evaluation_budget(&mut self, max_steps: Option<u64>) -> Result<(), String> {
        self.engine.set_evaluation_budget(max_steps);
        Ok(())
    }

    fn abandon(&mut self, id: u64) -> Result<bool, String> {
        Ok(self.engine.abandon(id))
    }

    fn dump(&mut self, id: u64) -> Result<Vec<u8>, String> {
        self.engine.dump(id)
    }

    fn load_suspension(&mut self, bytes: &[u8]) -> Result<Suspension, String> {
        self.engine.load_suspension(bytes)
    }

    fn set_dump_key(&mut self, key: [u8; 32]) -> Result<(), String> {
        self.engine.set_dump_key(key);
        Ok(())
    }

    fn save_session(&mut self) -> Result<Vec<u8>, String> {
        self.engine.save_session()
    }

    fn restore_session(&mut self, bytes: &[u8]) -> Result<Restored, String> {
        let listing = self.engine.restore_session(bytes)?;
        Ok(Restored {
            bindings: listing.bindings.into_iter().map(|(name, _)| name).collect(),
            skipped: listing.skipped,
        })
    }

    /// The process ends: the engine's heap (ten million objects after a
    /// program stopped by its timeout) and its knowledge base (the caches
    /// of what its searches read) are left to the operating system rather
    /// than dropped object by object; `Session::end` then closes the store
    /// the knowledge base read, whose clone it keeps.
    fn end(self: Box<Self>) {
        self.engine.end_leaving_heap();
    }
}
