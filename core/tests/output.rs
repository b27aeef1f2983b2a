//! Output streamed to the host: what an evaluation writes to the current
//! output port reaches `Host::write_output` in order as it is written, so
//! the engine holds only a small buffer of it, and a host that does not
//! stream gets it all back in `Evaluation::output`.

use std::cell::RefCell;
use std::rc::Rc;

use arbores_core::{Engine, ErrorKind, Host, Limits};

/// Takes every piece of output, remembering it.
struct Streaming {
    pieces: Rc<RefCell<Vec<String>>>,
}

impl Host for Streaming {
    fn write_output(&mut self, text: &str) -> bool {
        self.pieces.borrow_mut().push(text.to_string());
        true
    }
}

fn streaming_engine(steps: u64, memory: usize) -> (Engine, Rc<RefCell<Vec<String>>>) {
    let pieces = Rc::new(RefCell::new(Vec::new()));
    let mut e = Engine::new();
    e.set_host(Box::new(Streaming {
        pieces: pieces.clone(),
    }));
    e.set_limits(Limits {
        max_steps: steps,
        max_memory: memory,
    });
    (e, pieces)
}

#[test]
fn output_reaches_the_host_in_order_and_not_twice() {
    let (mut e, pieces) = streaming_engine(u64::MAX, 64 << 20);
    let r = e.eval(
        "(do ((i 0 (+ i 1))) ((= i 100000)) (display i) (write-char #\\space))
         (car '())",
    );
    assert_eq!(r.error.expect("an error").kind, ErrorKind::Runtime);
    assert_eq!(r.output, "", "streamed output is not returned again");
    let expected: String = (0..100_000).map(|i| format!("{i} ")).collect();
    let pieces = pieces.borrow();
    assert_eq!(pieces.concat(), expected);
    assert!(pieces.len() > 4, "handed over as it was written");
    let largest = pieces.iter().map(String::len).max().unwrap_or(0);
    assert!(largest < 80 << 10, "a piece of {largest} bytes");
}

#[test]
fn a_streamed_flood_ends_at_its_limit_not_the_memory_cap() {
    // Far more output than the cap allows to hold: the host takes it as
    // it comes, so only the step budget ends the loop.
    let (mut e, pieces) = streaming_engine(8_000_000, 8 << 20);
    let r = e.eval("(let loop () (display \"xxxxxxxxxx\") (loop))");
    assert_eq!(r.error.expect("an error").kind, ErrorKind::StepLimit);
    let total: usize = pieces.borrow().iter().map(String::len).sum();
    assert!(total > 16 << 20, "only {total} bytes written");
    assert_eq!(e.eval("(+ 1 2)").value.as_deref(), Some("3"));
}

#[test]
fn output_before_a_limit_is_handed_over_once() {
    let (mut e, pieces) = streaming_engine(100_000, 64 << 20);
    let r = e.eval("(display \"before\") (let loop () (loop))");
    assert_eq!(r.error.expect("an error").kind, ErrorKind::StepLimit);
    assert_eq!(pieces.borrow().concat(), "before");
    assert_eq!(r.output, "");
}

#[test]
fn flush_output_port_hands_the_text_over_at_once() {
    let (mut e, pieces) = streaming_engine(u64::MAX, 64 << 20);
    let r = e.eval(
        "(display \"a\") (flush-output-port) (display \"b\")
         (flush-output-port (current-output-port)) (display \"c\")
         (flush-output-port (open-output-string)) 1",
    );
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(*pieces.borrow(), ["a", "b", "c"]);
    let err = e.eval("(flush-output-port 5)").error.expect("an error");
    assert!(err.message.contains("flush-output-port"), "{}", err.message);
}

#[test]
fn without_a_streaming_host_the_output_comes_back_whole() {
    let mut e = Engine::new();
    let big = 300_000;
    let r = e.eval(&format!(
        "(display (make-string {big} #\\z)) (display \"end\") (car 1)"
    ));
    assert!(r.error.is_some());
    assert_eq!(r.output.len(), big + 3);
    assert!(r.output.ends_with("zend"));
}
