//! The current output port's text on its way to the host.
//!
//! What an evaluation writes to the current output port is handed to the
//! host ([`Host::write_output`]) in pieces as it is written, so the engine
//! holds at most about [`CHUNK`] of it whatever the program prints. A host
//! that refuses a piece gets the rest of the evaluation's output back with
//! its result instead, as one text.

use crate::host::Host;

/// Text waiting for the host is handed over once it reaches this size;
/// smaller pieces wait for the next poll or the end of the evaluation.
pub const CHUNK: usize = 64 << 10;

/// The evaluation's output not yet handed to the host.
#[derive(Default)]
pub struct Output {
    waiting: String,
    /// The host refused text during this evaluation: everything from there
    /// on is kept for the evaluation's result.
    kept: bool,
}

impl Output {
    /// Starts an evaluation: nothing waiting, the host asked again.
    pub fn start(&mut self) {
        self.waiting.clear();
        self.shrink();
        self.kept = false;
    }

    /// Writes `text`, handing what waits to `host` once it reaches
    /// [`CHUNK`] (a large text goes to the host as it is, not copied).
    pub fn write(&mut self, host: &mut dyn Host, text: &str) {
        if self.kept || self.waiting.len() + text.len() < CHUNK {
            self.waiting.push_str(text);
            return;
        }
        self.flush(host);
        if self.kept || text.len() < CHUNK {
            self.waiting.push_str(text);
        } else if !host.write_output(text) {
            self.kept = true;
            self.waiting.push_str(text);
        }
    }

    /// Hands everything waiting to `host`, unless it refused before.
    pub fn flush(&mut self, host: &mut dyn Host) {
        if self.kept || self.waiting.is_empty() {
            return;
        }
        if host.write_output(&self.waiting) {
            self.waiting.clear();
            self.shrink();
        } else {
            self.kept = true;
        }
    }

    /// What the host did not take: the evaluation's result holds it.
    pub fn take(&mut self) -> String {
        std::mem::take(&mut self.waiting)
    }

    /// The bytes the buffer holds (what counts against the memory cap).
    pub fn capacity(&self) -> usize {
        self.waiting.capacity()
    }

    /// One large write must not leave its buffer behind.
    fn shrink(&mut self) {
        if self.waiting.capacity() > 2 * CHUNK {
            self.waiting.shrink_to(CHUNK);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes everything (or nothing), remembering each piece.
    struct Sink {
        takes: bool,
        pieces: Vec<String>,
    }

    impl Host for Sink {
        fn write_output(&mut self, text: &str) -> bool {
            if self.takes {
                self.pieces.push(text.to_string());
            }
            self.takes
        }
    }

    #[test]
    fn small_writes_wait_for_a_flush() {
        let mut host = Sink {
            takes: true,
            pieces: vec![],
        };
        let mut out = Output::default();
        out.write(&mut host, "a");
        out.write(&mut host, "b");
        assert!(host.pieces.is_empty());
        out.flush(&mut host);
        assert_eq!(host.pieces, ["ab"]);
        assert_eq!(out.take(), "");
    }

    #[test]
    fn the_buffer_stays_bounded_and_the_order_kept() {
        let mut host = Sink {
            takes: true,
            pieces: vec![],
        };
        let mut out = Output::default();
        let mut written = String::new();
        for i in 0..100_000 {
            let text = format!("{i} ");
            out.write(&mut host, &text);
            written.push_str(&text);
            assert!(out.capacity() <= 2 * CHUNK);
        }
        let big = "x".repeat(3 * CHUNK);
        out.write(&mut host, &big);
        written.push_str(&big);
        assert!(out.capacity() <= 2 * CHUNK);
        out.flush(&mut host);
        assert_eq!(host.pieces.concat(), written);
        assert!(host.pieces.len() > 2);
    }

    #[test]
    fn a_refusing_host_gets_it_all_back_once() {
        let mut host = Sink {
            takes: false,
            pieces: vec![],
        };
        let mut out = Output::default();
        let big = "y".repeat(CHUNK);
        out.write(&mut host, "a");
        out.write(&mut host, &big);
        out.write(&mut host, "b");
        out.flush(&mut host);
        assert_eq!(out.take(), format!("a{big}b"));
        out.start();
        host.takes = true;
        out.write(&mut host, "c");
        out.flush(&mut host);
        assert_eq!(host.pieces, ["c"]);
    }
}
