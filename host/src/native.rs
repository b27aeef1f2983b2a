//! `--engine native`: arbores-core linked directly. No sandbox: the step and
//! memory limits are the core's own, and nothing backs them up.

use arbores_core::{Engine, Evaluation};

use crate::session::{Settings, Stopper};

pub struct NativeSession {
    engine: Engine,
}

impl NativeSession {
    pub fn new(settings: &Settings, stopper: Stopper) -> NativeSession {
        let mut engine = Engine::new();
        engine.set_limits(settings.limits);
        engine.set_interrupt_check(Some(Box::new(move || stopper.should_stop())));
        NativeSession { engine }
    }

    pub fn eval(&mut self, source: &str) -> Evaluation {
        self.engine.set_clock(now());
        self.engine.eval(source)
    }
}

/// Seconds since the Unix epoch, for `(scheme time)` in both engines.
pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
