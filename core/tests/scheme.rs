//! The Scheme programs of `tests/scheme` on the native engine, in process:
//! one test per program (`native::KIND/NAME`), each in a fresh engine, the
//! knowledge programs in the system tier with the clock their expectations
//! were written with. The harness (unified diffs, `ARBORES_BLESS=1`) is
//! `tests/suite`; the host runs the same files through the `arbores`
//! binary on both engines.

use arbores_core::{Engine, Tier};
use arbores_scheme_suite::{Kind, Program, KNOWLEDGE_CLOCK, NO_ERROR};

fn run(program: &Program) -> Result<String, String> {
    let source = program.source()?;
    let mut engine = Engine::new();
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
    let native: fn(&Program) -> Result<String, String> = run;
    arbores_scheme_suite::main(vec![("native", native)])
}
