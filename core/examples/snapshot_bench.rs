//! What a session snapshot costs: its size, the time to save it (whole,
//! and again after one binding changed, when only that binding's entry is
//! new) and to restore it into a fresh engine; beside the peer a snapshot
//! replaces, evaluating the session's source text again in a fresh engine
//! (what a host without snapshots does to bring definitions back).
//!
//!     cargo run --release -p arbores-core --example snapshot_bench [ROUNDS]
//!
//! Each figure is the median of ROUNDS (default 15) runs, with the fastest
//! and slowest beside it, for three sessions: a small one (a record, a
//! closure pair sharing a counter, a few procedures and data), one of
//! 10,000 bindings, and one whose state is large data (a list of 100,000
//! strings and a vector of 100,000 numbers).

use std::time::{Duration, Instant};

use arbores_core::{Engine, Limits, MemorySnapshotStore};

const SMALL: &str = r#"
(define-record-type task (make-task id title done) task? (id task-id) (title task-title) (done task-done?))
(define tasks (list (make-task 1 "write" #f) (make-task 2 "test" #f) (make-task 3 "land" #f)))
(define bump! #f) (define peek #f)
(let ((n 0)) (set! bump! (lambda () (set! n (+ n 1)) n)) (set! peek (lambda () n)))
(define (adder k) (lambda (x) (+ x k)))
(define add5 (adder 5))
(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(define notes "a few words of notes")
"#;

fn many_bindings() -> String {
    let mut s = String::new();
    for i in 0..10_000 {
        match i % 3 {
            0 => s.push_str(&format!("(define v{i} {i})\n")),
            1 => s.push_str(&format!("(define v{i} (list {i} \"item {i}\"))\n")),
            _ => s.push_str(&format!("(define (v{i} x) (+ x {i}))\n")),
        }
    }
    s
}

const LARGE_DATA: &str = r#"
(define words (let loop ((i 0) (acc '()))
  (if (= i 100000) acc (loop (+ i 1) (cons (string-append "word-" (number->string i)) acc)))))
(define numbers (let ((v (make-vector 100000 0)))
  (let loop ((i 0)) (if (< i 100000) (begin (vector-set! v i (* i i)) (loop (+ i 1))) v))))
(define counter 0)
"#;

fn engine() -> Engine {
    let mut e = Engine::new();
    e.set_limits(Limits {
        max_steps: 100_000_000,
        max_memory: 1 << 30,
    });
    e
}

fn eval(e: &mut Engine, src: &str) {
    let r = e.eval(src);
    assert!(r.error.is_none(), "{:?}", r.error);
}

struct Stats(Vec<Duration>);

impl Stats {
    fn show(mut self) -> String {
        self.0.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        format!(
            "{:>9.3} ms (min {:.3}, max {:.3})",
            ms(self.0[self.0.len() / 2]),
            ms(self.0[0]),
            ms(self.0[self.0.len() - 1])
        )
    }
}

fn time<T>(rounds: usize, mut f: impl FnMut() -> T) -> (Stats, T) {
    let mut times = Vec::with_capacity(rounds);
    let mut last = None;
    for _ in 0..rounds {
        let t = Instant::now();
        let r = f();
        times.push(t.elapsed());
        last = Some(r);
    }
    (Stats(times), last.expect("at least one round"))
}

fn bench(name: &str, source: &str, change: &str, rounds: usize) {
    let mut e = engine();
    eval(&mut e, source);
    println!("{name}:");
    let (save, (store, saved)) = time(rounds, || {
        let mut store = MemorySnapshotStore::new();
        let saved = e.save_snapshot(&mut store).unwrap();
        (store, saved)
    });
    println!(
        "  snapshot          {} bindings, {} entries, {} bytes of entries + {} bytes of manifest",
        saved.bindings,
        store.len(),
        store.total_bytes(),
        saved.manifest.len()
    );
    println!("  save (all new)    {}", save.show());
    eval(&mut e, change);
    // Each round saves into a copy of the first snapshot's store (copied
    // outside the timing): only the changed binding's entry is new.
    let (again, second) = timed(rounds, || {
        let mut s = store.clone();
        let t = Instant::now();
        let r = e.save_snapshot(&mut s).unwrap();
        (t.elapsed(), r)
    });
    println!(
        "  save after one change {}: {} new entry ({} bytes)",
        again.show(),
        second.new_entries,
        second.new_bytes
    );
    let (restore, _) = timed(rounds, || {
        let mut fresh = engine();
        let t = Instant::now();
        fresh.restore_snapshot(&saved.manifest, &store).unwrap();
        (t.elapsed(), ())
    });
    println!("  restore into a fresh engine {}", restore.show());
    let whole = e.save_session().unwrap();
    println!("  as one value (save_session)  {} bytes", whole.len());
    let (replay, _) = timed(rounds, || {
        let mut fresh = engine();
        let t = Instant::now();
        eval(&mut fresh, source);
        (t.elapsed(), ())
    });
    println!("  peer: evaluate the source again {}", replay.show());
}

/// As `time`, for work whose set-up (a fresh engine, a copied store) is
/// left out: `f` returns the time that counts.
fn timed<T>(rounds: usize, mut f: impl FnMut() -> (Duration, T)) -> (Stats, T) {
    let mut times = Vec::with_capacity(rounds);
    let mut last = None;
    for _ in 0..rounds {
        let (d, r) = f();
        times.push(d);
        last = Some(r);
    }
    (Stats(times), last.expect("at least one round"))
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(15);
    bench("small session", SMALL, "(set! notes \"changed\")", rounds);
    bench(
        "10,000 bindings",
        &many_bindings(),
        "(set! v17 'changed)",
        rounds,
    );
    bench("large data", LARGE_DATA, "(set! counter 1)", rounds);
}
