//! The REPL on a terminal: the real `arbores` binary on a pseudo-terminal,
//! driven as a user types (Tab completion, lines typed while an evaluation
//! runs, colour, Ctrl-D), on both engines.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_arbores");

fn scratch(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "terminal-{name}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `arbores repl` on a pseudo-terminal of 100 columns.
struct Terminal {
    child: Child,
    master: std::fs::File,
    seen: Arc<Mutex<Vec<u8>>>,
}

impl Terminal {
    fn start(engine: &str, dir: &std::path::Path, env: &[(&str, &str)]) -> Terminal {
        Terminal::start_with(engine, dir, env, &[])
    }

    /// With `env` set and the variables `unset` removed.
    fn start_with(
        engine: &str,
        dir: &std::path::Path,
        env: &[(&str, &str)],
        unset: &[&str],
    ) -> Terminal {
        let (mut master, mut slave) = (0, 0);
        let size = libc::winsize {
            ws_row: 40,
            ws_col: 100,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty writes two descriptors; the name is not asked for.
        let r = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and are ours.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let mut cmd = Command::new(BIN);
        cmd.args(["--engine", engine, "repl"])
            .env(
                "ARBORES_CACHE_DIR",
                PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("arbores-test-cache"),
            )
            .env("ARBORES_STORE", dir.join("store"))
            .env("ARBORES_HISTORY", dir.join("history"))
            .env("TERM", "xterm")
            // Plain text unless a test asks for colour (NO_COLOR empty).
            .env("NO_COLOR", "1")
            .env_remove("ARBORES_CLOCK");
        for (k, v) in env {
            cmd.env(k, v);
        }
        for k in unset {
            cmd.env_remove(k);
        }
        cmd.stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("starting arbores");
        drop(cmd);
        let master = std::fs::File::from(master);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let sink = seen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with EIO when the child has closed the terminal.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let t = Terminal {
            child,
            master,
            seen,
        };
        t.wait_for("> ", Duration::from_secs(60));
        t
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }

    fn type_text(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    /// Waits until what the terminal shows, after `from` bytes, contains
    /// `what`; panics with the screen after `limit`.
    fn wait_for_after(&self, from: usize, what: &str, limit: Duration) -> usize {
        let start = Instant::now();
        loop {
            {
                let seen = self.seen.lock().unwrap();
                let text = String::from_utf8_lossy(&seen[from.min(seen.len())..]).into_owned();
                if let Some(i) = text.find(what) {
                    return from + i + what.len();
                }
            }
            if start.elapsed() > limit {
                panic!(
                    "waited {limit:?} for {what:?}; the terminal shows:\n{}",
                    self.text()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait_for(&self, what: &str, limit: Duration) -> usize {
        self.wait_for_after(0, what, limit)
    }

    /// Waits for the process to end; its status.
    fn finish(mut self, limit: Duration) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("arbores did not end; the terminal shows:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = self.master.as_raw_fd();
    }
}

const LONG: Duration = Duration::from_secs(60);

/// How the line editor draws its prompt: the line cleared, then `> `.
const PROMPT: &str = "\x1b[K> ";

#[path = "support/both_engines.rs"]
#[macro_use]
mod both_engines;

both_engines!(
    typed_ahead_lines_are_all_evaluated,
    tab_completes_bound_and_stored_names,
    values_and_errors_in_colour,
    ctrl_d_on_an_unfinished_form_says_so,
);

/// Lines typed while an evaluation runs wait in the terminal and are each
/// read and evaluated afterwards, none dropped.
fn typed_ahead_lines_are_all_evaluated(engine: &str) {
    let dir = scratch("ahead");
    let mut t = Terminal::start(engine, &dir, &[]);
    t.type_text("(define (spin until) (if (> (current-jiffy) until) 'spun (spin until)))\n");
    let at = t.wait_for_after(0, PROMPT, LONG);
    // Long enough to type the next lines while it runs, however fast the
    // engine: a second by the clock.
    t.type_text("(spin (+ (current-jiffy) (jiffies-per-second)))\n");
    std::thread::sleep(Duration::from_millis(150));
    let before = t.text();
    t.type_text("(* 111 2)\n(* 111 3)\n(* 111 4)\n");
    let spun = t.wait_for_after(at, "\nspun", LONG);
    let mut from = spun;
    for value in ["222", "333", "444"] {
        from = t.wait_for_after(from, &format!("\n{value}"), LONG);
    }
    assert!(
        !before[at..].contains("\nspun"),
        "the lines were typed only after the evaluation ended:\n{before}"
    );
    t.type_text("\u{4}");
    assert!(t.finish(LONG).success());
}

/// Tab completes the session's names, the standard ones and the names of
/// stored knowledge; the completed form evaluates.
fn tab_completes_bound_and_stored_names(engine: &str) {
    let dir = scratch("tab");
    let mut t = Terminal::start(engine, &dir, &[]);
    t.type_text("(define my-unusual-thing 42)\n");
    let at = t.wait_for(PROMPT, LONG);
    t.type_text("my-unus\t");
    let at = t.wait_for_after(at, "my-unusual-thing", LONG);
    t.type_text("\n");
    let at = t.wait_for_after(at, "\n42", LONG);
    // A standard procedure.
    t.type_text("(string-upc\t \"ab\")\n");
    let at = t.wait_for_after(at, "\"AB\"", LONG);
    // A stored node's name, not yet loaded in this session.
    t.type_text(
        "(arb:create \"(define (stored-square x) (* x x))\" '() \"squares\" \"function\" '(\"stored-square\"))\n",
    );
    let at = t.wait_for_after(at, "new-version-id", LONG);
    t.type_text("(stored-squ\t 12)\n");
    let at = t.wait_for_after(at, "\n144", LONG);
    // A command.
    t.type_text(",descr\t car\n");
    t.wait_for_after(at, "car: procedure, takes 1 argument", LONG);
    t.type_text(",quit\n");
    assert!(t.finish(LONG).success());
}

/// Values and errors in colour on a terminal, with the source line and a
/// caret under the error's position; NO_COLOR turns colour off.
fn values_and_errors_in_colour(engine: &str) {
    let dir = scratch("colour");
    let mut t = Terminal::start(engine, &dir, &[("NO_COLOR", "")]);
    t.type_text("(+ 1 2)\n");
    let at = t.wait_for("\x1b[32m3\x1b[0m", LONG);
    t.type_text("(list 1\n  (car '()))\n");
    let at = t.wait_for_after(at, "\x1b[1;31merror:\x1b[0m 2:3: car", LONG);
    t.wait_for_after(at, "(car '()))", LONG);
    t.wait_for_after(at, "\x1b[1;31m^\x1b[0m", LONG);
    t.type_text(",quit\n");
    assert!(t.finish(LONG).success());

    let mut t = Terminal::start(engine, &dir, &[("NO_COLOR", "1")]);
    t.type_text("(+ 1 2)\n(car 5)\n");
    t.wait_for("error: 1:1: car", LONG);
    let shown = t.text();
    t.type_text(",quit\n");
    assert!(t.finish(LONG).success());
    assert!(shown.contains("\n3\r\n"), "{shown:?}");
    assert!(
        !shown.contains("\x1b[32m") && !shown.contains("\x1b[1;31m"),
        "{shown:?}"
    );
}

/// Ctrl-D inside an unfinished form says the form is dropped (and keeps it
/// in the history); a second Ctrl-D leaves, and the history is written.
fn ctrl_d_on_an_unfinished_form_says_so(engine: &str) {
    let dir = scratch("ctrl-d");
    let mut t = Terminal::start(engine, &dir, &[]);
    t.type_text("(+ 40 2)\n");
    let at = t.wait_for("42", LONG);
    t.type_text("(define (f x)\n");
    let at = t.wait_for_after(at, "... ", LONG);
    t.type_text("\u{4}");
    let at = t.wait_for_after(at, "unfinished form dropped:", LONG);
    t.wait_for_after(at, " (define (f x) (Ctrl-D again leaves", LONG);
    t.type_text("\u{4}");
    assert!(t.finish(LONG).success());
    let history = std::fs::read_to_string(dir.join("history")).unwrap();
    assert!(history.contains("(+ 40 2)"), "{history}");
    assert!(history.contains("(define (f x)"), "{history}");
}

/// Without ARBORES_HISTORY, the history is kept in the user's state
/// directory, not beside the store.
#[test]
fn history_in_the_state_directory() {
    let dir = scratch("state");
    let state = dir.join("state");
    let env = [
        ("XDG_STATE_HOME", state.to_str().unwrap()),
        ("HOME", dir.to_str().unwrap()),
    ];
    let mut t = Terminal::start_with("native", &dir, &env, &["ARBORES_HISTORY"]);
    t.type_text("(* 6 7)\n");
    t.wait_for("42", LONG);
    t.type_text(",quit\n");
    assert!(t.finish(LONG).success());
    let history = std::fs::read_to_string(state.join("arbores").join("history")).unwrap();
    assert!(history.contains("(* 6 7)"), "{history}");
    assert!(!dir.join("store.history").exists());
}
