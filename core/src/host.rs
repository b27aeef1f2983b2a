//! The embedder's side of the engine: everything that comes from outside.
//!
//! The core does no I/O. What it needs from the world — the time, whether
//! to stop, where output goes as it is written, files, the standard input
//! and error, the command line and the environment — it asks of one
//! [`Host`] the embedder installs with `Engine::set_host`. This trait is
//! the single place where capabilities from outside are added: each
//! becomes a method with a default, so
//! an embedder that does not offer it keeps compiling and the engine
//! behaves as if it were absent.

/// What the engine asks of the program that embeds it. Methods are called
/// only while the engine runs (during `eval` and the calls that touch the
/// knowledge base), never from another thread.
pub trait Host {
    /// The time, in seconds since the Unix epoch (UTC). Read when Scheme
    /// asks (`current-second`, `current-jiffy`) and when a version is
    /// committed (its timestamp). The default is the epoch itself: an
    /// engine with no clock.
    fn now(&mut self) -> f64 {
        0.0
    }

    /// Polled every few thousand steps of an evaluation; `true` ends the
    /// evaluation with `ErrorKind::Interrupted`, undoing it, and the engine
    /// stays usable. This is how a host enforces a wall-clock timeout, a
    /// Stop button or Ctrl-C. The default never stops.
    fn should_stop(&mut self) -> bool {
        false
    }

    /// Takes text the running evaluation wrote to the current output port,
    /// in order, as it goes: whenever about 64 KiB is waiting, at every
    /// poll (every few thousand steps), at `flush-output-port` and when the
    /// evaluation ends, so the engine never holds more than a small buffer
    /// of it. `true`: the host took it (printed it, posted it), and
    /// `Evaluation::output` will not hold it. `false` refuses it: the engine
    /// keeps this text and everything the evaluation writes after it, and
    /// returns it in `Evaluation::output` (counted against the memory cap).
    /// The default refuses: output comes back with the result.
    fn write_output(&mut self, text: &str) -> bool {
        let _ = text;
        false
    }
    // ---- capabilities the operator grants (R7RS `(scheme file)`,
    // `(scheme process-context)`, the standard ports). Each default is
    // the engine with nothing granted: files and standard input are
    // refused with a `not permitted` error, and the program sees no
    // arguments and no environment.

    /// The whole of file `path` (as the program wrote it), at most `max`
    /// bytes: a larger file is an error. `Err` holds the reason, which
    /// the engine raises as a file error.
    fn read_file(&mut self, path: &str, max: usize) -> Result<Vec<u8>, String> {
        let _ = max;
        Err(no_files(path))
    }

    /// Writes `bytes` to file `path`: appended when `append`, else the
    /// file is created or emptied first (opening an output file calls
    /// this with no bytes).
    fn write_file(&mut self, path: &str, bytes: &[u8], append: bool) -> Result<(), String> {
        let _ = (bytes, append);
        Err(no_files(path))
    }

    /// Whether file `path` exists.
    fn file_exists(&mut self, path: &str) -> Result<bool, String> {
        Err(no_files(path))
    }

    fn delete_file(&mut self, path: &str) -> Result<(), String> {
        Err(no_files(path))
    }

    /// The next piece of the standard input (a line, with its newline),
    /// or `None` at its end.
    fn read_input(&mut self) -> Result<Option<String>, String> {
        Err("not permitted: this engine has no standard input".into())
    }

    /// Writes text to the standard error; `false` when the host has none,
    /// and the text then joins the evaluation's output.
    fn write_error(&mut self, text: &str) -> bool {
        let _ = text;
        false
    }

    /// `(command-line)`: the program's name, then its arguments.
    fn command_line(&mut self) -> Vec<String> {
        Vec::new()
    }

    /// The environment variables the program may see, by name.
    fn environment(&mut self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// The refusal of an engine with no file system.
fn no_files(path: &str) -> String {
    format!("not permitted: {path:?}: this engine has no files")
}

/// Asked every few thousand steps during an evaluation; returning `true`
/// ends the evaluation with `ErrorKind::Interrupted`.
pub type InterruptCheck = Box<dyn FnMut() -> bool>;

/// The host an engine starts with: a clock that reads what it was last set
/// to, and an optional interrupt check. It is what `Engine::set_clock` and
/// `Engine::set_interrupt_check` configure; it also serves embedders that
/// need nothing more (tests with a fixed clock).
#[derive(Default)]
pub struct BasicHost {
    /// Seconds since the Unix epoch.
    pub clock: f64,
    pub interrupt: Option<InterruptCheck>,
}

impl Host for BasicHost {
    fn now(&mut self) -> f64 {
        self.clock
    }

    fn should_stop(&mut self) -> bool {
        self.interrupt.as_mut().is_some_and(|check| check())
    }
}

/// The host an engine holds: its own [`BasicHost`] until an embedder
/// installs another.
#[derive(Default)]
pub(crate) struct HostSlot {
    basic: BasicHost,
    installed: Option<Box<dyn Host>>,
}

impl HostSlot {
    pub fn get(&mut self) -> &mut dyn Host {
        match &mut self.installed {
            Some(h) => h.as_mut(),
            None => &mut self.basic,
        }
    }

    pub fn install(&mut self, host: Box<dyn Host>) {
        self.installed = Some(host);
    }

    /// The basic host, put back in place of an installed one if need be.
    pub fn basic(&mut self) -> &mut BasicHost {
        self.installed = None;
        &mut self.basic
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nothing;
    impl Host for Nothing {}

    #[test]
    fn defaults_are_the_epoch_and_never_stop() {
        let mut h = Nothing;
        assert_eq!(h.now(), 0.0);
        assert!(!h.should_stop());
        assert!(!h.write_output("text"));
    }

    #[test]
    fn defaults_grant_nothing() {
        let mut h = Nothing;
        let refused = h.read_file("a.txt", 10).unwrap_err();
        assert!(refused.starts_with("not permitted"), "{refused}");
        assert!(h.write_file("a.txt", b"x", false).is_err());
        assert!(h.file_exists("a.txt").is_err());
        assert!(h.delete_file("a.txt").is_err());
        assert!(h.read_input().is_err());
        assert!(!h.write_error("x"));
        assert!(h.command_line().is_empty());
        assert!(h.environment().is_empty());
    }

    #[test]
    fn the_basic_host_reads_its_clock_and_check() {
        let mut h = BasicHost {
            clock: 12.5,
            interrupt: None,
        };
        assert_eq!(h.now(), 12.5);
        assert!(!h.should_stop());
        let mut calls = 0;
        h.interrupt = Some(Box::new(move || {
            calls += 1;
            calls > 1
        }));
        assert!(!h.should_stop());
        assert!(h.should_stop());
    }
}
