//! Fuzzing the Arbores engine.
//!
//! - `reader`: arbitrary bytes as source text.
//! - `eval`: programs generated from a grammar of the language ([`gen`]).
//! - `store`: a valid store damaged in every way, renamed so the decoder
//!   (not only the hash check) sees the damage.
//! - `arb`: the `arb:` procedures called with random arguments, in every
//!   tier, inside and outside transactions.
//! - `bundle`, `suspension`, `session`: the bundle (`arbores export`), a
//!   suspended evaluation's bytes and a session snapshot, each valid,
//!   damaged inside and sealed again (checksum or keyed hash), so the
//!   decoders, not only the seals, see the damage.
//!
//! `scripts/fuzz TARGET SECONDS` runs one under libFuzzer; `tests/smoke.rs`
//! runs each on a fixed set of generated inputs and on every input of
//! `regressions/TARGET/` (inputs that once broke the engine), as part of
//! the test suite.

pub mod gen;
pub mod targets;

use std::path::PathBuf;
use std::sync::OnceLock;

/// With `ARBORES_FUZZ_LAST=FILE` set, each input is written to FILE before
/// it runs. A libFuzzer binary has no alternate signal stack, so a stack
/// overflow kills it with nothing saved and no report (in `-fork` mode, a
/// crash counted with no artifact): run the target again without `-fork`
/// and with this set, and FILE holds the input that killed it.
pub fn keep_last(data: &[u8]) {
    static PATH: OnceLock<Option<PathBuf>> = OnceLock::new();
    let path = PATH.get_or_init(|| std::env::var_os("ARBORES_FUZZ_LAST").map(PathBuf::from));
    if let Some(path) = path {
        let _ = std::fs::write(path, data);
    }
}
