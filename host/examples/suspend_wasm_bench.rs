//! What a suspended evaluation costs, natively and inside the wasmtime
//! guest side by side: the size of its dump, and the time to start an
//! evaluation until it suspends, to dump it, to load the dump into another
//! engine and to resume it there to the end.
//!
//!     scripts/build-guest   # the component this reads
//!     cargo run --release -p arbores-host --example suspend_wasm_bench [ROUNDS] [--json]
//!
//! The programs, the tool and the native half are those of
//! `core/examples/suspend_bench.rs` (`core/examples/suspend/`). Sandboxed:
//! `target/guest/arbores_guest.component.wasm` compiled once (not timed)
//! and instantiated twice, each instance in a store of its own with the
//! tool defined through the component's `tools` interface; one starts and
//! dumps (`tools.start`, `tools.dump`), the other loads and resumes
//! (`tools.load-suspension`, `tools.resume`), as two processes would. Each
//! time is taken from the host around one call of the component's, so it
//! includes the call into the guest and the copying of its arguments and
//! results across the boundary (the source text, the pending calls, the
//! dump's bytes). The native and sandboxed rounds alternate, so a change of
//! the machine's load falls on both alike. Each figure is the median of
//! ROUNDS (default 200), with the fastest and slowest beside it; for
//! scale, a new engine (`Engine::new` natively, `engine.reset` in an
//! instance). `--json`
//! prints one JSON object per program and face instead of the table (what
//! `bench/suspend` reads).

use std::time::{Duration, Instant};

use wasmtime::{Config, Engine, Store};

#[path = "../../core/examples/suspend/native.rs"]
mod suspend;

#[path = "guest/bare.rs"]
mod guest;

use guest::bindings::exports::arbores::engine::tools::{Answer, Run, Tool};
use guest::bindings::{Arbores, ArboresPre};
use guest::Bare;
use suspend::{spread, us, Figures, Native, Round, ANSWER, PROGRAMS, STEPS, TOOL, TOOL_PARAMS};

/// One instance of the component, in a store of its own, with the tool.
struct Instance {
    store: Store<Bare>,
    api: Arbores,
}

impl Instance {
    fn new(pre: &ArboresPre<Bare>) -> Instance {
        let mut store = Store::new(pre.engine(), Bare);
        let api = pre.instantiate(&mut store).expect("instantiate");
        let tool = Tool {
            name: TOOL.into(),
            params: TOOL_PARAMS.iter().map(|p| p.to_string()).collect(),
            description: String::new(),
        };
        api.arbores_engine_tools()
            .call_define_tool(&mut store, &tool)
            .expect("call")
            .expect("define-tool");
        Instance { store, api }
    }
}

/// Two instances: `a` starts and dumps, `b` loads and resumes.
struct Sandboxed {
    a: Instance,
    b: Instance,
}

impl Sandboxed {
    fn round(&mut self, program: &str) -> Round {
        let (a, b) = (&mut self.a, &mut self.b);
        let tools_a = a.api.arbores_engine_tools();
        let tools_b = b.api.arbores_engine_tools();
        let t = Instant::now();
        let Run::Suspended(s) = tools_a.call_start(&mut a.store, program).expect("call") else {
            panic!("the program did not suspend")
        };
        let start = t.elapsed();
        let t = Instant::now();
        let bytes = tools_a
            .call_dump(&mut a.store, s.id)
            .expect("call")
            .expect("dump");
        let dump = t.elapsed();
        tools_a.call_abandon(&mut a.store, s.id).expect("call");
        let t = Instant::now();
        let loaded = tools_b
            .call_load_suspension(&mut b.store, &bytes)
            .expect("call")
            .expect("load");
        let load = t.elapsed();
        let answers: Vec<Answer> = loaded
            .calls
            .iter()
            .map(|_| Answer::Value(ANSWER.into()))
            .collect();
        let t = Instant::now();
        match tools_b
            .call_resume(&mut b.store, loaded.id, &answers)
            .expect("call")
            .expect("resume")
        {
            Run::Done(e) => assert!(e.error.is_none(), "{:?}", e.error),
            Run::Suspended(_) => panic!("still suspended"),
        }
        let resume = t.elapsed();
        Round {
            bytes: bytes.len(),
            times: [start, dump, load, resume],
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let rounds: usize = args
        .iter()
        .find_map(|a| a.parse().ok())
        .unwrap_or(200)
        .max(1);
    let engine = Engine::new(&Config::new()).expect("wasmtime");
    let (pre, compiled) = guest::compile(&engine, &guest::this_build());
    if !json {
        println!(
            "rounds: {rounds}, median (fastest .. slowest); the guest compiled once in {:.1} s (not counted)",
            compiled.as_secs_f64()
        );
    }
    let (native_new, sandboxed_new) = new_engines(&pre, rounds);
    if json {
        for (face, times) in [("native", native_new), ("wasmtime", sandboxed_new)] {
            let (median, min, max) = spread(times);
            let line = serde_json::json!({
                "face": face, "program": "new engine", "rounds": rounds,
                "new_engine": [us(median), us(min), us(max)],
            });
            println!("{line}");
        }
    } else {
        let cell = |times| {
            let (median, min, max) = spread(times);
            format!("{:.1} µs ({:.1} .. {:.1})", us(median), us(min), us(max))
        };
        println!("  {:<26} {:>28} {:>28}", "", "native", "wasmtime");
        println!(
            "  {:<26} {:>28} {:>28}",
            "new engine (for scale)",
            cell(native_new),
            cell(sandboxed_new)
        );
    }
    for (name, program) in PROGRAMS {
        let mut native = Native::new();
        let mut sandboxed = Sandboxed {
            a: Instance::new(&pre),
            b: Instance::new(&pre),
        };
        let (mut n, mut s) = (Figures::default(), Figures::default());
        for _ in 0..rounds {
            n.push(native.round(program));
            s.push(sandboxed.round(program));
        }
        if json {
            for (face, f) in [("native", &n), ("wasmtime", &s)] {
                println!("{}", json_line(face, name, rounds, f));
            }
        } else {
            table(name, &n, &s);
        }
    }
}

/// For scale: `Engine::new` natively, and `engine.reset` in an instance
/// (a new engine there, timed from the host), alternating.
fn new_engines(pre: &ArboresPre<Bare>, rounds: usize) -> (Vec<Duration>, Vec<Duration>) {
    let mut instance = Instance::new(pre);
    let api = instance.api.arbores_engine_engine();
    let (mut native, mut sandboxed) = (vec![], vec![]);
    for _ in 0..rounds.min(50) {
        let t = Instant::now();
        let e = arbores_core::Engine::new();
        native.push(t.elapsed());
        drop(e);
        let t = Instant::now();
        api.call_reset(&mut instance.store).expect("reset");
        sandboxed.push(t.elapsed());
    }
    (native, sandboxed)
}

fn table(name: &str, native: &Figures, sandboxed: &Figures) {
    println!("{name}:");
    println!(
        "  {:<26} {:>28} {:>28}",
        "dump size",
        format!("{} bytes", native.bytes),
        format!("{} bytes", sandboxed.bytes)
    );
    for (i, step) in STEPS.iter().enumerate() {
        let cell = |f: &Figures| {
            let (median, min, max) = spread(f.times[i].clone());
            format!("{:.1} µs ({:.1} .. {:.1})", us(median), us(min), us(max))
        };
        println!("  {step:<26} {:>28} {:>28}", cell(native), cell(sandboxed));
    }
}

/// `{"face", "program", "rounds", "bytes", "start": [median, min, max], ...}`,
/// the times in microseconds.
fn json_line(face: &str, program: &str, rounds: usize, f: &Figures) -> String {
    let mut line = serde_json::json!({
        "face": face, "program": program, "rounds": rounds, "bytes": f.bytes,
    });
    for (key, (median, min, max)) in ["start", "dump", "load", "resume"].iter().zip(f.summary()) {
        line[*key] = serde_json::json!([us(median), us(min), us(max)]);
    }
    line.to_string()
}
