//! What a new engine costs in-process: `Engine::new` (a copy of the
//! thread's prepared image) beside `Engine::new_unprepared` (the prelude
//! compiled and run again, what every engine did before) and an engine
//! loaded from the prepared image's bytes (made here, as
//! `scripts/build-image` makes them, and installed), in one run.
//!
//!     cargo run --release -p arbores-core --example start_bench [ROUNDS]
//!
//! Each figure is the median of ROUNDS (default 200) new engines, with the
//! fastest and slowest beside it; the two kinds alternate so that the
//! machine's load falls on both alike. "first" is the thread's first
//! `Engine::new`, which loads the prepared image. "new + (+ 1 2)" adds a
//! first evaluation, so the figure is that of an engine that has done
//! something. `arbores bench-start` prints the same inside the wasmtime
//! guest.

use std::time::{Duration, Instant};

use arbores_core::Engine;

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let image: &'static [u8] = Box::leak(
        Engine::prepared_image_bytes()
            .expect("the image")
            .into_boxed_slice(),
    );
    arbores_core::install_prepared_image(image);
    let t = Instant::now();
    let first = Engine::new();
    let first_time = t.elapsed();
    drop(first);

    let mut prepared = Vec::with_capacity(rounds);
    let mut unprepared = Vec::with_capacity(rounds);
    let mut evaluated = Vec::with_capacity(rounds);
    let mut loaded = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        let e = Engine::from_prepared_image(image).expect("the image loads");
        loaded.push(t.elapsed());
        drop(e);

        let t = Instant::now();
        let e = Engine::new();
        prepared.push(t.elapsed());
        drop(e);

        let t = Instant::now();
        let e = Engine::new_unprepared();
        unprepared.push(t.elapsed());
        drop(e);

        let t = Instant::now();
        let mut e = Engine::new();
        let v = e.eval("(+ 1 2)");
        evaluated.push(t.elapsed());
        assert_eq!(v.value.as_deref(), Some("3"));
    }
    println!("new engine, native, {rounds} rounds (median, fastest, slowest):");
    println!(
        "  first Engine::new (loads the image)  {:>10}  ({:?}, {} bytes)",
        us(first_time),
        Engine::prepared_from(),
        image.len()
    );
    row("an engine loaded from the image", &mut loaded);
    row("Engine::new (from the image)", &mut prepared);
    row("Engine::new + eval (+ 1 2)", &mut evaluated);
    row("Engine::new_unprepared (prelude)", &mut unprepared);
}

fn row(what: &str, times: &mut [Duration]) {
    times.sort();
    println!(
        "  {what:<36} {:>10}  ({} .. {})",
        us(times[times.len() / 2]),
        us(times[0]),
        us(times[times.len() - 1])
    );
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}
