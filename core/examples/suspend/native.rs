//! The suspension benchmarks' programs and their native half, shared by
//! `core/examples/suspend_bench.rs` and `host/examples/suspend_wasm_bench.rs`
//! (which puts the wasmtime guest beside it); `bench/suspend-browser.mjs`
//! reads the same `.scm` files.

use std::time::{Duration, Instant};

use arbores_core::{Engine, Run, Tool, ToolAnswer};

/// The programs, by name: a small one (a helper procedure and one tool
/// call) and one with more session state (twenty definitions, a record,
/// a string of 10,000 characters, three `par` branches waiting).
pub const PROGRAMS: [(&str, &str); 2] = [
    ("small program", include_str!("small.scm")),
    ("larger session", include_str!("larger.scm")),
];

/// The one tool the programs call: `(search query)`.
pub const TOOL: &str = "search";
pub const TOOL_PARAMS: [&str; 1] = ["query"];

/// The text of the value every call is answered with.
pub const ANSWER: &str = "\"ok\"";

/// A new engine with the tool defined.
pub fn engine() -> Engine {
    let mut e = Engine::new();
    e.define_tool(Tool {
        name: TOOL.into(),
        params: TOOL_PARAMS.iter().map(|p| p.to_string()).collect(),
        description: String::new(),
    })
    .expect("tool");
    e
}

/// One round's figures: the dump's size and the four times.
pub struct Round {
    pub bytes: usize,
    pub times: [Duration; 4],
}

/// What the four times are, in `Round::times` order.
pub const STEPS: [&str; 4] = [
    "start until suspended",
    "dump",
    "load into another engine",
    "resume to the end",
];

/// Rounds gathered: the last dump size and each step's times.
#[derive(Default)]
pub struct Figures {
    pub bytes: usize,
    pub times: [Vec<Duration>; 4],
}

impl Figures {
    pub fn push(&mut self, round: Round) {
        self.bytes = round.bytes;
        for (all, t) in self.times.iter_mut().zip(round.times) {
            all.push(t);
        }
    }

    /// Each step's (median, fastest, slowest).
    pub fn summary(&self) -> [(Duration, Duration, Duration); 4] {
        self.times.clone().map(spread)
    }
}

/// Two engines: `a` starts and dumps, `b` loads and resumes.
pub struct Native {
    a: Engine,
    b: Engine,
}

impl Native {
    pub fn new() -> Native {
        Native {
            a: engine(),
            b: engine(),
        }
    }

    /// Starts `program` until it suspends, dumps it, loads the dump into the
    /// other engine and resumes it there to the end, timing each step.
    pub fn round(&mut self, program: &str) -> Round {
        let t = Instant::now();
        let Run::Suspended(s) = self.a.start(program) else {
            panic!("the program did not suspend")
        };
        let start = t.elapsed();
        let t = Instant::now();
        let bytes = self.a.dump(s.id).expect("dump");
        let dump = t.elapsed();
        self.a.abandon(s.id);
        let t = Instant::now();
        let loaded = self.b.load_suspension(&bytes).expect("load");
        let load = t.elapsed();
        let answers = loaded
            .calls
            .iter()
            .map(|_| ToolAnswer::Value(ANSWER.into()))
            .collect();
        let t = Instant::now();
        match self.b.resume(loaded.id, answers).expect("resume") {
            Run::Done(e) => assert!(e.error.is_none(), "{e:?}"),
            Run::Suspended(_) => panic!("still suspended"),
        }
        let resume = t.elapsed();
        Round {
            bytes: bytes.len(),
            times: [start, dump, load, resume],
        }
    }
}

/// The median, fastest and slowest of `times` (at least one).
pub fn spread(mut times: Vec<Duration>) -> (Duration, Duration, Duration) {
    times.sort();
    (times[times.len() / 2], times[0], times[times.len() - 1])
}

/// Microseconds, for printing.
pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
