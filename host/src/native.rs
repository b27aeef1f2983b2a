//! `--engine native`: arbores-core linked directly. No sandbox: the step and
//! memory limits are the core's own, and nothing backs them up.

use arbores_core::{Engine, Evaluation, Snapshot};

use crate::session::{Backend, Settings, Stopper};
use crate::store::{BlobReader, LoadError};

pub struct NativeSession {
    engine: Engine,
    settings: Settings,
}

impl NativeSession {
    pub fn new(settings: &Settings, stopper: Stopper) -> NativeSession {
        let mut engine = Engine::new();
        engine.set_limits(settings.limits);
        engine.set_tier(settings.tier);
        engine.set_interrupt_check(Some(Box::new(move || stopper.should_stop())));
        NativeSession {
            engine,
            settings: settings.clone(),
        }
    }
}

impl Backend for NativeSession {
    fn eval(&mut self, source: &str) -> (Evaluation, bool) {
        self.engine.set_clock(self.settings.now());
        (self.engine.eval(source), false)
    }

    fn has_unsaved_changes(&mut self) -> Result<bool, String> {
        Ok(self.engine.has_unsaved_changes())
    }

    fn export(&mut self, full: bool) -> Result<Snapshot, String> {
        Ok(if full {
            self.engine.export_full()
        } else {
            self.engine.export_new()
        })
    }

    fn load(
        &mut self,
        refs: &[u8],
        blobs: &mut BlobReader,
    ) -> Result<(), Result<LoadError, String>> {
        self.engine
            .import(refs, |name| blobs.get(name))
            .map_err(|e| Ok(e.into()))
    }

    fn take_replaced(&mut self) -> bool {
        false
    }
}
