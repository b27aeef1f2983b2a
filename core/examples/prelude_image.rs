//! Writes the prepared image of this build of the engine: the VM after the
//! prelude, as bytes that every face builds in and loads instead of
//! compiling the prelude (`Engine::prepared_image_bytes`,
//! `install_prepared_image`).
//!
//!     cargo run --release -p arbores-core --example prelude_image -- OUT
//!
//! `scripts/build-image` runs it before the faces are built. OUT is
//! rewritten only when the bytes changed, so an unchanged image rebuilds
//! nothing.

use std::time::Instant;

use arbores_core::Engine;

fn main() {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: prelude_image OUT");
        std::process::exit(2);
    };
    let t = Instant::now();
    let bytes = match Engine::prepared_image_bytes() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("prelude_image: the image cannot be made: {e}");
            std::process::exit(1);
        }
    };
    let made = t.elapsed();
    // Loaded back before it is written: an image that does not load, or
    // loads into another state, is never shipped.
    match Engine::from_prepared_image(&bytes).and_then(|e| e.state_as_prepared_image()) {
        Ok(again) if again == bytes => {}
        Ok(_) => {
            eprintln!("prelude_image: the image loads into another state than it was made from");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("prelude_image: the image does not load: {e}");
            std::process::exit(1);
        }
    }
    if std::fs::read(&out).ok().as_deref() == Some(&bytes[..]) {
        eprintln!("prelude_image: {out} is up to date ({} bytes)", bytes.len());
        return;
    }
    if let Err(e) = std::fs::write(&out, &bytes) {
        eprintln!("prelude_image: cannot write {out}: {e}");
        std::process::exit(1);
    }
    eprintln!(
        "prelude_image: wrote {out} ({} bytes, made in {:.1} ms)",
        bytes.len(),
        made.as_secs_f64() * 1e3
    );
}
