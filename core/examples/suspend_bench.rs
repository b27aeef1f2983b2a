//! What a suspended evaluation costs: the size of its dump, and the time to
//! start an evaluation that suspends, to dump it, to load the dump into
//! another engine and to resume it there; with the time to make a new
//! engine for scale.
//!
//!     cargo run --release -p arbores-core --example suspend_bench [ROUNDS]
//!
//! Each figure is the median of ROUNDS (default 200) runs, with the fastest
//! and slowest beside it, for a small program (a helper procedure and one
//! tool call) and one with more session state (twenty definitions, a
//! record, a string of 10,000 characters, three `par` branches waiting).

use std::time::{Duration, Instant};

use arbores_core::{Engine, Run, Tool, ToolAnswer};

const SMALL: &str = r#"
(define (greet name) (string-append "hello, " name))
(greet (search "user name"))
"#;

const LARGER: &str = r#"
(define-record-type task (make-task id title done) task? (id task-id) (title task-title) (done task-done?))
(define tasks (list (make-task 1 "write" #f) (make-task 2 "test" #f) (make-task 3 "land" #f)))
(define notes (make-string 10000 #\x))
(define (f0 x) (+ x 0)) (define (f1 x) (+ x 1)) (define (f2 x) (+ x 2)) (define (f3 x) (+ x 3))
(define (f4 x) (+ x 4)) (define (f5 x) (+ x 5)) (define (f6 x) (+ x 6)) (define (f7 x) (+ x 7))
(define (f8 x) (+ x 8)) (define (f9 x) (+ x 9)) (define (f10 x) (+ x 10)) (define (f11 x) (+ x 11))
(define (f12 x) (+ x 12)) (define (f13 x) (+ x 13)) (define (f14 x) (+ x 14)) (define (f15 x) (+ x 15))
(define counter (let ((n 0)) (lambda () (set! n (+ n 1)) n)))
(par (search (task-title (car tasks))) (search "b") (f3 (string-length (search "c"))))
"#;

fn engine() -> Engine {
    let mut e = Engine::new();
    e.define_tool(Tool {
        name: "search".into(),
        params: vec!["query".into()],
        description: String::new(),
    })
    .expect("tool");
    e
}

struct Figures {
    bytes: usize,
    start: Vec<Duration>,
    dump: Vec<Duration>,
    load: Vec<Duration>,
    resume: Vec<Duration>,
}

fn measure(program: &str, rounds: usize) -> Figures {
    let mut f = Figures {
        bytes: 0,
        start: vec![],
        dump: vec![],
        load: vec![],
        resume: vec![],
    };
    let mut a = engine();
    let mut b = engine();
    for _ in 0..rounds {
        let t = Instant::now();
        let Run::Suspended(s) = a.start(program) else {
            panic!("the program did not suspend")
        };
        f.start.push(t.elapsed());
        let t = Instant::now();
        let bytes = a.dump(s.id).expect("dump");
        f.dump.push(t.elapsed());
        a.abandon(s.id);
        f.bytes = bytes.len();
        let t = Instant::now();
        let loaded = b.load_suspension(&bytes).expect("load");
        f.load.push(t.elapsed());
        let answers = loaded
            .calls
            .iter()
            .map(|_| ToolAnswer::Value("\"ok\"".into()))
            .collect();
        let t = Instant::now();
        match b.resume(loaded.id, answers).expect("resume") {
            Run::Done(e) => assert!(e.error.is_none(), "{e:?}"),
            Run::Suspended(_) => panic!("still suspended"),
        }
        f.resume.push(t.elapsed());
    }
    f
}

fn show(what: &str, mut d: Vec<Duration>) {
    d.sort();
    let us = |x: Duration| x.as_secs_f64() * 1e6;
    println!(
        "  {what:<28} median {:>8.1} µs   min {:>8.1}   max {:>8.1}",
        us(d[d.len() / 2]),
        us(d[0]),
        us(d[d.len() - 1])
    );
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200)
        .max(1);
    let mut new_engine = Vec::new();
    for _ in 0..rounds.min(50) {
        let t = Instant::now();
        let e = Engine::new();
        new_engine.push(t.elapsed());
        drop(e);
    }
    println!("rounds: {rounds}");
    show("new engine (for scale)", new_engine);
    for (name, program) in [("small program", SMALL), ("larger session", LARGER)] {
        let f = measure(program, rounds);
        println!("{name}: dump {} bytes", f.bytes);
        show("start until suspended", f.start);
        show("dump", f.dump);
        show("load into another engine", f.load);
        show("resume to the end", f.resume);
    }
}
