//! How long an evaluation runs on after the interrupt check first says
//! stop, and how late the check is first asked after the deadline:
//! `cargo run --release -p arbores-core --example interrupt_latency`;
//! with `gc`, of a program whose time goes to collections of eight million
//! live pairs.
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use arbores_core::{Engine, Limits};

fn main() {
    let gc = std::env::args().nth(1).as_deref() == Some("gc");
    let program = if gc {
        "(let ((keep (make-list 8000000 'x)))
  (let loop ((i 0)) (make-vector 100000 0) (loop (+ i 1))) keep)"
    } else {
        "(let* ((a (make-list 1000000 'x)) (b (list-copy a)))
  (let loop () (equal? a b) (write a (open-output-string)) (member 'y b) (loop)))"
    };
    for run in 0..5 {
        let mut e = Engine::new();
        e.set_limits(Limits::default());
        let start = Instant::now();
        let deadline = start + Duration::from_millis(1000 + 137 * run);
        let first: Rc<Cell<Option<Instant>>> = Rc::new(Cell::new(None));
        let last_poll: Rc<Cell<Instant>> = Rc::new(Cell::new(start));
        let max_gap: Rc<Cell<Duration>> = Rc::new(Cell::new(Duration::ZERO));
        let (f, lp, mg) = (first.clone(), last_poll.clone(), max_gap.clone());
        e.set_interrupt_check(Some(Box::new(move || {
            let now = Instant::now();
            mg.set(mg.get().max(now - lp.get()));
            lp.set(now);
            if now >= deadline {
                if f.get().is_none() {
                    f.set(Some(now));
                }
                true
            } else {
                false
            }
        })));
        let r = e.eval(program);
        let end = Instant::now();
        let first = first.get().expect("asked after the deadline");
        println!(
            "run {run}: {:?}; first asked {:?} after the deadline, ended {:?} after that; longest gap between polls {:?}",
            r.error.map(|e| e.kind),
            first - deadline,
            end - first,
            max_gap.get()
        );
        let t = Instant::now();
        drop(e);
        println!("        engine dropped in {:?}", t.elapsed());
    }
}
