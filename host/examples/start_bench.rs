//! What a new engine costs, natively and inside the wasmtime guest, in
//! one run.
//!
//!     scripts/build-guest   # the component and the prepared image this reads
//!     cargo run --release -p arbores-host --example start_bench [ROUNDS] [BASELINE...]
//!
//! Natively, with the prepared image `arbores` builds in installed: the
//! first `Engine::new` of a thread (which loads the image), an engine
//! loaded from the image's bytes, `Engine::new_unprepared` (the prelude
//! compiled and run, what the first engine of a thread did before there
//! was an image) and `Engine::new` (a copy of the thread's image),
//! alternating.
//!
//! Sandboxed, with `target/guest/arbores_guest.component.wasm` compiled
//! once (not timed): a whole new wasmtime instance (a store, the
//! instantiation, and the first call, which makes the instance's first
//! engine and so its prepared image), alternating with the same of each
//! component BASELINE given (other builds, to compare side by side),
//! and a new engine inside an instance
//! (`engine.reset`, which replaces the instance's engine with a copy of
//! its image; timed from the host, so it includes the call into the
//! guest). Each figure is the median of ROUNDS (default 200), with the
//! fastest and slowest beside it; new instances are timed ROUNDS / 10
//! times (at least 5).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use wasmtime::{Config, Engine, Store};

#[path = "guest/bare.rs"]
mod guest;

use guest::bindings::arbores::engine::types as wit;
use guest::bindings::ArboresPre;
use guest::Bare;

/// The prepared image `scripts/build-image` wrote, as `arbores` builds it in.
mod prepared {
    include!(concat!(env!("OUT_DIR"), "/prepared.rs"));
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let baselines: Vec<PathBuf> = std::env::args().skip(2).map(PathBuf::from).collect();
    let Some(image) = prepared::PREPARED_IMAGE else {
        panic!("no prepared image was built in (run scripts/build-image)");
    };
    arbores_core::install_prepared_image(image);
    native(rounds, image);
    sandboxed(rounds, baselines);
}

fn native(rounds: usize, image: &'static [u8]) {
    let t = Instant::now();
    drop(arbores_core::Engine::new());
    let first = t.elapsed();
    println!(
        "native: this thread's image: {:?}",
        arbores_core::Engine::prepared_from()
    );
    let threads = (rounds / 10).max(5);
    let mut first_of_thread = Vec::with_capacity(threads);
    for _ in 0..threads {
        let took = std::thread::spawn(|| {
            let t = Instant::now();
            drop(arbores_core::Engine::new());
            let took = t.elapsed();
            assert_eq!(
                arbores_core::Engine::prepared_from(),
                arbores_core::PreparedFrom::Image
            );
            took
        })
        .join()
        .expect("thread");
        first_of_thread.push(took);
    }
    let mut prepared = Vec::with_capacity(rounds);
    let mut unprepared = Vec::with_capacity(rounds);
    let mut loaded = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        let e = arbores_core::Engine::new();
        prepared.push(t.elapsed());
        drop(e);
        let t = Instant::now();
        let e = arbores_core::Engine::new_unprepared();
        unprepared.push(t.elapsed());
        drop(e);
        let t = Instant::now();
        let e = arbores_core::Engine::from_prepared_image(image).expect("the image loads");
        loaded.push(t.elapsed());
        drop(e);
    }
    println!("native, {rounds} rounds (median, fastest .. slowest):");
    println!(
        "  {:<52} {:>10}",
        "first Engine::new of the process (loads the image)",
        us(first)
    );
    row(
        &format!("first Engine::new of a new thread ({threads} threads)"),
        &mut first_of_thread,
    );
    row("an engine loaded from the image bytes", &mut loaded);
    row(
        "Engine::new_unprepared (compiles the prelude)",
        &mut unprepared,
    );
    row("Engine::new (a copy of the thread's image)", &mut prepared);
}

/// A component compiled and ready to instantiate.
struct Guest {
    path: PathBuf,
    pre: ArboresPre<Bare>,
    compile: Duration,
}

fn load_guest(engine: &Engine, path: PathBuf) -> Guest {
    let (pre, compile) = guest::compile(engine, &path);
    Guest { path, pre, compile }
}

fn sandboxed(rounds: usize, baselines: Vec<PathBuf>) {
    let engine = Engine::new(&Config::new()).expect("wasmtime");
    let mut guests = vec![load_guest(&engine, guest::this_build())];
    for b in baselines {
        guests.push(load_guest(&engine, b));
    }
    let limits = wit::Limits {
        max_steps: 1_000_000_000,
        max_memory: 512 << 20,
    };

    let instances = (rounds / 10).max(5);
    // Per guest: whole, store + instantiate, first engine.
    let mut times: Vec<[Vec<Duration>; 3]> = guests.iter().map(|_| Default::default()).collect();
    // The guests alternate, so the machine's load falls on each alike.
    for _ in 0..instances {
        for (g, guest) in guests.iter().enumerate() {
            let t = Instant::now();
            let mut store = Store::new(&engine, Bare);
            let instance = guest.pre.instantiate(&mut store).expect("instantiate");
            let made = t.elapsed();
            // The first call makes the instance's first engine.
            instance
                .arbores_engine_engine()
                .call_set_limits(&mut store, limits)
                .expect("set-limits");
            let all = t.elapsed();
            times[g][0].push(all);
            times[g][1].push(made);
            times[g][2].push(all - made);
        }
    }
    for (g, guest) in guests.iter().enumerate() {
        let mut store = Store::new(&engine, Bare);
        let instance = guest.pre.instantiate(&mut store).expect("instantiate");
        let api = instance.arbores_engine_engine();
        api.call_set_limits(&mut store, limits).expect("set-limits");
        let from = api.call_eval(&mut store, "(%prepared-from)").expect("eval");
        println!(
            "wasmtime guest {} ({} KiB component, compiled once in {:.1} s, not counted); its image: {}",
            guest.path.display(),
            std::fs::metadata(&guest.path)
                .map(|m| m.len() / 1024)
                .unwrap_or(0),
            guest.compile.as_secs_f64(),
            from.value
                .or(from.error.map(|e| e.message))
                .unwrap_or_default()
        );
        let [whole, inst, first_engine] = &mut times[g];
        row(&format!("new instance, whole ({instances} rounds)"), whole);
        row("  of which store + instantiate", inst);
        row("  of which its first engine", first_engine);
        if g > 0 {
            continue;
        }
        let (mut reset, mut reset_eval) = (vec![], vec![]);
        for _ in 0..rounds {
            let t = Instant::now();
            api.call_reset(&mut store).expect("reset");
            reset.push(t.elapsed());
            let t = Instant::now();
            api.call_reset(&mut store).expect("reset");
            let e = api.call_eval(&mut store, "(+ 1 2)").expect("eval");
            reset_eval.push(t.elapsed());
            assert_eq!(e.value.as_deref(), Some("3"));
        }
        row("new engine in an instance (reset)", &mut reset);
        row("  reset + eval (+ 1 2)", &mut reset_eval);
    }
}

fn row(what: &str, times: &mut [Duration]) {
    times.sort();
    println!(
        "  {what:<52} {:>10}  ({} .. {})",
        us(times[times.len() / 2]),
        us(times[0]),
        us(times[times.len() - 1])
    );
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}
