//! The Scheme programs of `tests/scheme` on the native engine, in process:
//! one test per program (`native::KIND/NAME`), each in a fresh engine
//! started from a prepared image loaded from bytes (as every face starts),
//! and again (`compiled::KIND/NAME`) in an engine that compiled the prelude
//! itself (what an engine does when the image is stale); the
//! knowledge programs in the system tier with the clock their expectations
//! were written with. The harness (unified diffs, `ARBORES_BLESS=1`) is
//! `tests/suite`; the host runs the same files through the `arbores`
//! binary on both engines.

use arbores_core::{Engine, Tier};
use arbores_scheme_suite::{Kind, Program, KNOWLEDGE_CLOCK, NO_ERROR};

fn run(program: &Program) -> Result<String, String> {
    run_in(program, Engine::new())
}

fn run_compiled(program: &Program) -> Result<String, String> {
    run_in(program, Engine::new_unprepared())
}

fn run_in(program: &Program, mut engine: Engine) -> Result<String, String> {
    let source = program.source()?;
    if program.kind == Kind::Knowledge {
        engine.set_tier(Tier::System);
        engine.set_clock(KNOWLEDGE_CLOCK.0);
    }
    let r = engine.eval(&source);
    let error = r.error.as_ref().map(|e| e.report(None));
    Ok(match (program.kind, error) {
        (Kind::Fail, None) => NO_ERROR.to_string(),
        (Kind::Fail, Some(error)) => error,
        (Kind::Pass | Kind::Knowledge, error) => r.output + &error.unwrap_or_default(),
    })
}

fn main() {
    // The image as scripts/build-image makes it, loaded by each thread's
    // first engine.
    let image = Engine::prepared_image_bytes().expect("the prepared image is made");
    arbores_core::install_prepared_image(Box::leak(image.into_boxed_slice()));
    assert_eq!(Engine::prepared_from(), arbores_core::PreparedFrom::Image);
    let native: fn(&Program) -> Result<String, String> = run;
    let compiled: fn(&Program) -> Result<String, String> = run_compiled;
    arbores_scheme_suite::main(vec![("native", native), ("compiled", compiled)])
}
