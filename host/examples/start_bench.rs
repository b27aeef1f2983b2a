//! What a new engine costs, natively and inside the wasmtime guest, in
//! one run.
//!
//!     scripts/build-guest   # the component this reads
//!     cargo run --release -p arbores-host --example start_bench [ROUNDS]
//!
//! Natively: `Engine::new` (a copy of the thread's prepared image) beside
//! `Engine::new_unprepared` (the prelude compiled and run again, what every
//! engine did before), alternating, and the thread's first `Engine::new`,
//! which prepares the image.
//!
//! Sandboxed, with `target/guest/arbores_guest.component.wasm` compiled
//! once (not timed): a whole new wasmtime instance (a store, the
//! instantiation, and the first call, which makes the instance's first
//! engine and so its prepared image), and a new engine inside an instance
//! (`engine.reset`, which replaces the instance's engine with a copy of
//! its image; timed from the host, so it includes the call into the
//! guest). Each figure is the median of ROUNDS (default 200), with the
//! fastest and slowest beside it; new instances are timed ROUNDS / 10
//! times (at least 5).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, Store};

mod bindings {
    wasmtime::component::bindgen!({
        world: "arbores",
        path: "../wasm/wit",
    });
}

use bindings::arbores::engine::types as wit;
use bindings::{Arbores, ArboresPre};

/// A host that grants nothing and has no store: all a new engine needs.
struct Bare;

impl bindings::arbores::engine::host::Host for Bare {
    fn should_stop(&mut self) -> bool {
        false
    }
    fn write_output(&mut self, _text: String) -> bool {
        false
    }
    fn panicked(&mut self, message: String) {
        eprintln!("the guest panicked: {message}");
    }
    fn now(&mut self) -> f64 {
        0.0
    }
    fn get_blob(&mut self, _name: Vec<u8>) -> Result<Option<Vec<u8>>, String> {
        Ok(None)
    }
    fn store_head(&mut self) -> Result<Option<Vec<u8>>, String> {
        Ok(None)
    }
    fn store_commit(
        &mut self,
        _base: Option<Vec<u8>>,
        _snapshot: wit::Snapshot,
    ) -> Result<wit::CommitReply, String> {
        Err("no store".into())
    }
    fn read_file(&mut self, _path: String, _max: u64) -> Result<Vec<u8>, String> {
        Err("not permitted".into())
    }
    fn write_file(&mut self, _path: String, _bytes: Vec<u8>, _append: bool) -> Result<(), String> {
        Err("not permitted".into())
    }
    fn file_exists(&mut self, _path: String) -> Result<bool, String> {
        Err("not permitted".into())
    }
    fn delete_file(&mut self, _path: String) -> Result<(), String> {
        Err("not permitted".into())
    }
    fn read_input(&mut self) -> Result<Option<String>, String> {
        Err("not permitted".into())
    }
    fn write_error(&mut self, _text: String) -> bool {
        false
    }
    fn command_line(&mut self) -> Vec<String> {
        vec![]
    }
    fn environment(&mut self) -> Vec<(String, String)> {
        vec![]
    }
}

impl wit::Host for Bare {}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    native(rounds);
    sandboxed(rounds);
}

fn native(rounds: usize) {
    let t = Instant::now();
    drop(arbores_core::Engine::new());
    let first = t.elapsed();
    let mut prepared = Vec::with_capacity(rounds);
    let mut unprepared = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        let e = arbores_core::Engine::new();
        prepared.push(t.elapsed());
        drop(e);
        let t = Instant::now();
        let e = arbores_core::Engine::new_unprepared();
        unprepared.push(t.elapsed());
        drop(e);
    }
    println!("native, {rounds} rounds (median, fastest .. slowest):");
    println!(
        "  {:<44} {:>10}",
        "first Engine::new (prepares the image)",
        us(first)
    );
    row("Engine::new (a copy of the image)", &mut prepared);
    row(
        "Engine::new_unprepared (compiles the prelude)",
        &mut unprepared,
    );
}

fn sandboxed(rounds: usize) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../target/guest/arbores_guest.component.wasm");
    let engine = Engine::new(&Config::new()).expect("wasmtime");
    let t = Instant::now();
    let component = Component::from_file(&engine, &path)
        .unwrap_or_else(|e| panic!("{}: {e} (run scripts/build-guest)", path.display()));
    let compile = t.elapsed();
    let mut linker = Linker::<Bare>::new(&engine);
    Arbores::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state).expect("link");
    let pre = ArboresPre::new(linker.instantiate_pre(&component).expect("pre")).expect("pre");

    let limits = wit::Limits {
        max_steps: 1_000_000_000,
        max_memory: 512 << 20,
    };
    let new_instance =
        |store: &mut Store<Bare>| -> Arbores { pre.instantiate(store).expect("instantiate") };

    let instances = (rounds / 10).max(5);
    let (mut whole, mut inst, mut first_engine) = (vec![], vec![], vec![]);
    for _ in 0..instances {
        let t = Instant::now();
        let mut store = Store::new(&engine, Bare);
        let instance = new_instance(&mut store);
        let made = t.elapsed();
        // The first call makes the instance's first engine.
        instance
            .arbores_engine_engine()
            .call_set_limits(&mut store, limits)
            .expect("set-limits");
        let all = t.elapsed();
        whole.push(all);
        inst.push(made);
        first_engine.push(all - made);
    }

    let mut store = Store::new(&engine, Bare);
    let instance = new_instance(&mut store);
    let api = instance.arbores_engine_engine();
    api.call_set_limits(&mut store, limits).expect("set-limits");
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
    println!(
        "wasmtime guest ({} KiB component, compiled once in {:.1} s, not counted):",
        std::fs::metadata(&path)
            .map(|m| m.len() / 1024)
            .unwrap_or(0),
        compile.as_secs_f64()
    );
    row(
        &format!("new instance, whole ({instances} rounds)"),
        &mut whole,
    );
    row("  of which store + instantiate", &mut inst);
    row("  of which its first engine (prelude)", &mut first_engine);
    row("new engine in an instance (reset)", &mut reset);
    row("  reset + eval (+ 1 2)", &mut reset_eval);
}

fn row(what: &str, times: &mut [Duration]) {
    times.sort();
    println!(
        "  {what:<44} {:>10}  ({} .. {})",
        us(times[times.len() / 2]),
        us(times[0]),
        us(times[times.len() - 1])
    );
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}
