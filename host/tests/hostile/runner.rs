//! The hostile-program suite of `tests/hostile/`: reading its programs,
//! running each through an `arbores` binary the way an agent host would,
//! measuring what the process paid (wall time, peak resident memory), and
//! checking the promises the limits make.
//!
//! Shared by the test (`host/tests/hostile.rs`, which fails on a broken
//! promise) and the figures tool (`host/examples/hostile.rs`, which only
//! reports, so it can measure any build, an older one included).
//!
//! A program is a `.scm` file whose leading `;;` lines describe it:
//!
//! ```text
//! ;; Free text: what the program does and why it is hostile.
//! ;; options: --memory 64M --timeout 3   options given to arbores
//! ;; tier: read-only                      the tier it runs in (default: system)
//! ;; mode: run                            `arbores run FILE` (default: the REPL)
//! ;; error: memory-limit                  the error kind that must end it
//! ;; message: not closed                  text the error must contain
//! ;; output: (caught after)               text standard output must contain
//! ;; value: 144                           a line standard output must hold
//! ;; within: 20s                          the most it may take, start-up excluded
//! ```
//!
//! `{{N*TEXT}}` in the body stands for TEXT repeated N times, so a program
//! can hold source a million parentheses deep without the file doing so.
//!
//! Each program runs in a fresh copy of a store holding one node
//! (`seeded-square`). In the REPL mode the program is preceded by the
//! definition of a canary and followed by a read of it: the session is alive
//! afterwards only if the canary is still there (an engine that trapped and
//! restarted has lost it). A read-only program must leave the store byte for
//! byte as it was; any other must leave it loadable with its node.

#![allow(dead_code)] // each of the two users needs a different part

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the process may hold beyond `--memory`: the host, wasmtime, the
/// compiled guest, the engine's code and its fixed structures.
pub const OVERHEAD: u64 = 64 << 20;

/// The memory cap when a program names none: `arbores`' default.
pub const DEFAULT_MEMORY: u64 = 512 << 20;

/// The engines every program runs on.
pub const ENGINES: [&str; 2] = ["wasm", "native"];

const CANARY_DEFINE: &str = "(define hostile-canary 'alive)\n";
const CANARY_READ: &str = "\nhostile-canary\n";
const SEED: &str = "(arb:create \"(define (seeded-square x) (* x x))\" '() \"squares a number\" \"function\" '(\"seeded-square\"))";

/// One hostile program and what it must do.
#[derive(Debug, Clone)]
pub struct Program {
    pub name: String,
    pub options: Vec<String>,
    pub tier: Option<String>,
    pub run_mode: bool,
    /// The error kind that must end it, and text its message must contain.
    pub error: Option<(String, String)>,
    pub outputs: Vec<String>,
    pub values: Vec<String>,
    pub within: Duration,
    pub source: String,
}

impl Program {
    /// The `--memory` the program runs under.
    pub fn memory_cap(&self) -> u64 {
        self.options
            .iter()
            .position(|o| o == "--memory")
            .and_then(|i| self.options.get(i + 1))
            .and_then(|s| parse_size(s))
            .unwrap_or(DEFAULT_MEMORY)
    }

    /// The resident memory the whole process may reach.
    pub fn memory_bound(&self) -> u64 {
        self.memory_cap() + OVERHEAD
    }
}

/// The directory of the suite.
pub fn suite_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/hostile")
}

/// Every program of the suite, by name; `only` keeps those whose name
/// contains it.
pub fn load_suite(only: Option<&str>) -> Result<Vec<Program>, String> {
    let dir = suite_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "scm"))
        .collect();
    files.sort();
    let mut programs = Vec::new();
    for f in files {
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        if only.is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        programs.push(parse(&name, &text).map_err(|e| format!("{}: {e}", f.display()))?);
    }
    Ok(programs)
}

/// `(program, engine)` pairs of `NOT-YET-HELD`, each line's engines spelt out.
pub fn not_yet_held() -> Result<Vec<(String, String)>, String> {
    let path = suite_dir().join("NOT-YET-HELD");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let program = words.next().unwrap_or_default().to_string();
        if !suite_dir().join(format!("{program}.scm")).is_file() {
            return Err(format!("{}: no program `{program}`", path.display()));
        }
        match words.next() {
            None => out.extend(ENGINES.iter().map(|e| (program.clone(), e.to_string()))),
            Some(e) if ENGINES.contains(&e) => out.push((program, e.to_string())),
            Some(e) => return Err(format!("{}: unknown engine `{e}`", path.display())),
        }
    }
    Ok(out)
}

/// The words an error of each kind begins with, as `arbores` prints it.
fn kind_message(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "memory-limit" => "memory limit exceeded",
        "step-limit" => "step limit exceeded",
        "interrupted" => "timed out after",
        "output-limit" => "output limit exceeded",
        "syntax-error" | "runtime-error" => "",
        _ => return None,
    })
}

pub fn parse(name: &str, text: &str) -> Result<Program, String> {
    let mut program = Program {
        name: name.to_string(),
        options: Vec::new(),
        tier: None,
        run_mode: false,
        error: None,
        outputs: Vec::new(),
        values: Vec::new(),
        within: Duration::from_secs(10),
        source: String::new(),
    };
    let mut kind = None;
    let mut message = None;
    let mut body = Vec::new();
    let mut in_header = true;
    for line in text.lines() {
        let header = line.strip_prefix(";;").filter(|_| in_header);
        let Some(header) = header else {
            in_header = false;
            body.push(line);
            continue;
        };
        let header = header.trim();
        let Some((key, value)) = header.split_once(':') else {
            continue;
        };
        let value = value.trim().to_string();
        match key.trim() {
            "options" => program.options = value.split_whitespace().map(String::from).collect(),
            "tier" => program.tier = Some(value),
            "mode" => match value.as_str() {
                "run" => program.run_mode = true,
                "repl" => program.run_mode = false,
                _ => return Err(format!("mode `{value}`: run or repl")),
            },
            "error" => {
                if kind_message(&value).is_none() {
                    return Err(format!("unknown error kind `{value}`"));
                }
                kind = Some(value);
            }
            "message" => message = Some(value),
            "output" => program.outputs.push(value),
            "value" => program.values.push(value),
            "within" => {
                program.within = parse_duration(&value)
                    .ok_or_else(|| format!("within `{value}`: a duration such as 2.5s"))?
            }
            // A colon in the free text.
            _ => {}
        }
    }
    program.error = match (kind, message) {
        (Some(k), m) => {
            let m = m.unwrap_or_else(|| kind_message(&k).unwrap().to_string());
            if m.is_empty() {
                return Err(format!("error `{k}` needs a `message:`"));
            }
            Some((k, m))
        }
        (None, Some(_)) => return Err("`message:` without `error:`".into()),
        (None, None) => None,
    };
    if program.run_mode && !program.values.is_empty() {
        return Err("`value:` needs the REPL mode".into());
    }
    program.source = expand(&body.join("\n"))?;
    Ok(program)
}

/// `{{N*TEXT}}` becomes TEXT repeated N times.
pub fn expand(text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}").ok_or("`{{` without `}}`")?;
        let (count, unit) = after[..end]
            .split_once('*')
            .ok_or("`{{N*TEXT}}` needs a `*`")?;
        let count: usize = count
            .trim()
            .parse()
            .map_err(|_| format!("`{count}` is not a count"))?;
        out.push_str(&unit.repeat(count));
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

fn parse_duration(text: &str) -> Option<Duration> {
    let t = text.trim();
    let secs: f64 = if let Some(ms) = t.strip_suffix("ms") {
        ms.trim().parse::<f64>().ok()? / 1000.0
    } else {
        t.strip_suffix('s').unwrap_or(t).trim().parse().ok()?
    };
    (secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..digits].parse().ok()?;
    let shift = match t[digits..].to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

/// What one run of a program cost and how it ended.
#[derive(Debug)]
pub struct Run {
    pub program: String,
    pub engine: String,
    /// Wall time less the engine's start-up time.
    pub time_to_stop: Duration,
    /// Peak resident memory of the `arbores` process, in bytes.
    pub peak_rss: u64,
    pub status: Option<i32>,
    pub signal: Option<i32>,
    /// Killed for running far past its `within:`.
    pub killed: bool,
    pub stdout: Captured,
    pub stderr: Captured,
    /// Broken promises; empty when the run kept them all.
    pub failures: Vec<String>,
}

/// The start and the end of what a process wrote (an output flood can
/// write gigabytes), and how much it wrote.
#[derive(Debug, Default)]
pub struct Captured {
    pub head: Vec<u8>,
    pub tail: Vec<u8>,
    pub total: u64,
}

const KEEP: usize = 64 << 10;

impl Captured {
    fn read_all(mut from: impl Read) -> Captured {
        let mut c = Captured::default();
        let mut buf = vec![0u8; 64 << 10];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    c.total += n as u64;
                    let chunk = &buf[..n];
                    let room = KEEP.saturating_sub(c.head.len());
                    c.head.extend_from_slice(&chunk[..room.min(n)]);
                    c.tail.extend_from_slice(chunk);
                    if c.tail.len() > 2 * KEEP {
                        c.tail.drain(..c.tail.len() - KEEP);
                    }
                }
            }
        }
        if c.tail.len() > KEEP {
            c.tail.drain(..c.tail.len() - KEEP);
        }
        c
    }

    /// Everything when it was small, else the head and the tail.
    pub fn text(&self) -> String {
        if self.total as usize <= KEEP {
            String::from_utf8_lossy(&self.head).into_owned()
        } else {
            format!(
                "{}\n[... {} bytes in all ...]\n{}",
                String::from_utf8_lossy(&self.head[..self.head.len().min(2000)]),
                self.total,
                String::from_utf8_lossy(&self.tail[self.tail.len().saturating_sub(2000)..])
            )
        }
    }

    fn lines(&self) -> Vec<String> {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.total as usize > KEEP {
            text.push('\n');
            text.push_str(&String::from_utf8_lossy(&self.tail));
        }
        text.lines().map(String::from).collect()
    }
}

/// Runs programs through one `arbores` binary.
pub struct Runner {
    pub bin: PathBuf,
    /// Scratch space: stores, program files, the compiled-guest cache.
    pub work: PathBuf,
    startup: BTreeMap<String, Duration>,
}

/// The process as it ended.
struct Finished {
    status: Option<i32>,
    signal: Option<i32>,
    wall: Duration,
    peak_rss: u64,
    killed: bool,
    stdout: Captured,
    stderr: Captured,
}

impl Runner {
    pub fn new(bin: PathBuf, work: PathBuf) -> Runner {
        std::fs::create_dir_all(&work).expect("creating the work directory");
        Runner {
            bin,
            work,
            startup: BTreeMap::new(),
        }
    }

    fn command(&self, engine: &str, store: &Path) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.arg("--engine").arg(engine);
        cmd.arg("--store").arg(store);
        cmd.env("ARBORES_CACHE_DIR", self.work.join("cache"));
        cmd.env_remove("ARBORES_STORE");
        cmd.env_remove("ARBORES_CLOCK");
        cmd
    }

    /// Starts `cmd`, feeds it `stdin`, and waits for it, killing it after
    /// `deadline`; measures its peak resident memory through wait4.
    fn finish(&self, mut cmd: Command, stdin: &str, deadline: Duration) -> Finished {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let start = Instant::now();
        let mut child = cmd.spawn().expect("starting arbores");
        let pid = child.id() as libc::pid_t;
        let mut input = child.stdin.take().unwrap();
        let text = stdin.to_string();
        let feeder = std::thread::spawn(move || {
            // A process that ends before reading everything closes the pipe.
            let _ = input.write_all(text.as_bytes());
        });
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        let out = std::thread::spawn(move || Captured::read_all(out));
        let err = std::thread::spawn(move || Captured::read_all(err));
        let done = Arc::new(AtomicBool::new(false));
        let killed = Arc::new(AtomicBool::new(false));
        let watchdog = {
            let (done, killed) = (done.clone(), killed.clone());
            std::thread::spawn(move || {
                while start.elapsed() < deadline {
                    if done.load(Ordering::SeqCst) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                if !done.load(Ordering::SeqCst) {
                    killed.store(true, Ordering::SeqCst);
                    // SAFETY: the child is not reaped until wait4 below
                    // returns, so the pid still names it.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            })
        };
        let mut status: libc::c_int = 0;
        // SAFETY: plain FFI with valid out-pointers.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let reaped = loop {
            let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            if r == pid || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                break r == pid;
            }
        };
        let wall = start.elapsed();
        done.store(true, Ordering::SeqCst);
        // The child was reaped here, not through `child`: forget it.
        std::mem::forget(child);
        let _ = watchdog.join();
        let _ = feeder.join();
        let stdout = out.join().unwrap_or_default();
        let stderr = err.join().unwrap_or_default();
        let (code, signal) = if !reaped {
            (None, None)
        } else if libc::WIFEXITED(status) {
            (Some(libc::WEXITSTATUS(status)), None)
        } else if libc::WIFSIGNALED(status) {
            (None, Some(libc::WTERMSIG(status)))
        } else {
            (None, None)
        };
        Finished {
            status: code,
            signal,
            wall,
            // Linux reports kilobytes.
            peak_rss: usage.ru_maxrss as u64 * 1024,
            killed: killed.load(Ordering::SeqCst),
            stdout,
            stderr,
        }
    }

    fn scratch(&self, program: &str, engine: &str) -> PathBuf {
        let dir = self.work.join("runs").join(format!("{program}-{engine}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("creating a scratch directory");
        dir
    }

    /// A store holding the seeded node.
    fn seeded_store(&self, dir: &Path, engine: &str) -> Result<PathBuf, String> {
        let store = dir.join("store");
        let mut cmd = self.command(engine, &store);
        cmd.args(["eval", SEED]);
        let done = self.finish(cmd, "", Duration::from_secs(60));
        let text = String::from_utf8_lossy(&done.stdout.head).into_owned();
        if done.status != Some(0) || !text.contains("new-version-id") {
            return Err(format!(
                "seeding the store failed: status {:?}\n{}{}",
                done.status,
                text,
                done.stderr.text()
            ));
        }
        Ok(store)
    }

    /// How long the engine takes to start, read a store and end: the part
    /// of a run's wall time that is not the program's (median of three).
    fn startup(&mut self, engine: &str) -> Duration {
        if let Some(d) = self.startup.get(engine) {
            return *d;
        }
        let dir = self.scratch("startup", engine);
        let store = self.seeded_store(&dir, engine).unwrap_or(dir.join("store"));
        let mut times: Vec<Duration> = (0..3)
            .map(|_| {
                let mut cmd = self.command(engine, &store);
                cmd.arg("repl");
                let stdin = format!("{CANARY_DEFINE}{CANARY_READ}");
                self.finish(cmd, &stdin, Duration::from_secs(60)).wall
            })
            .collect();
        times.sort();
        self.startup.insert(engine.to_string(), times[1]);
        times[1]
    }

    /// Runs `program` on `engine` and checks every promise.
    pub fn run(&mut self, program: &Program, engine: &str) -> Run {
        let startup = self.startup(engine);
        let dir = self.scratch(&program.name, engine);
        let mut failures = Vec::new();
        let store = match self.seeded_store(&dir, engine) {
            Ok(s) => s,
            Err(e) => {
                failures.push(e);
                dir.join("store")
            }
        };
        let before = snapshot(&store);

        let mut cmd = self.command(engine, &store);
        cmd.args(&program.options);
        if let Some(tier) = &program.tier {
            cmd.args(["--tier", tier]);
        }
        let stdin = if program.run_mode {
            let file = dir.join(format!("{}.scm", program.name));
            std::fs::write(&file, &program.source).expect("writing the program");
            cmd.arg("run").arg(file);
            String::new()
        } else {
            cmd.arg("repl");
            format!("{CANARY_DEFINE}{}{CANARY_READ}", program.source)
        };
        // Far past the promise, but a hang must not hold the suite forever.
        let deadline = startup + program.within * 3 + Duration::from_secs(30);
        let done = self.finish(cmd, &stdin, deadline);
        let time_to_stop = done.wall.saturating_sub(startup);

        let stderr = done.stderr.text();
        let stdout_lines = done.stdout.lines();
        if done.killed {
            failures.push(format!("did not end: killed after {:.1?}", done.wall));
        }
        if let Some(sig) = done.signal.filter(|_| !done.killed) {
            failures.push(format!("ended by signal {sig}"));
        }
        if time_to_stop > program.within {
            failures.push(format!(
                "took {:.2?} (start-up excluded), more than {:.2?}",
                time_to_stop, program.within
            ));
        }
        if done.peak_rss > program.memory_bound() {
            failures.push(format!(
                "peak resident memory {} MiB, over the bound of {} MiB (--memory {} MiB + {} MiB)",
                done.peak_rss >> 20,
                program.memory_bound() >> 20,
                program.memory_cap() >> 20,
                OVERHEAD >> 20
            ));
        }
        for bad in [
            "panicked",
            "internal error",
            "session state",
            "engine trapped",
            "did not stop within",
        ] {
            if stderr.contains(bad) {
                failures.push(format!("standard error says `{bad}`"));
            }
        }
        match &program.error {
            Some((kind, message)) => {
                let line = stderr.lines().find(|l| l.starts_with("error:"));
                match line {
                    Some(l) if l.contains(message.as_str()) => {}
                    Some(l) => failures.push(format!(
                        "expected a {kind} error containing `{message}`, got `{l}`"
                    )),
                    None => failures.push(format!("expected a {kind} error, got none")),
                }
            }
            None => {
                if let Some(l) = stderr.lines().find(|l| l.starts_with("error:")) {
                    failures.push(format!("expected no error, got `{l}`"));
                }
            }
        }
        for text in &program.outputs {
            if !stdout_lines.iter().any(|l| l.contains(text.as_str())) {
                failures.push(format!("standard output lacks `{text}`"));
            }
        }
        for value in &program.values {
            if !stdout_lines.iter().any(|l| l == value) {
                failures.push(format!("standard output lacks the line `{value}`"));
            }
        }
        if program.run_mode {
            // An error (1) or the limit that stopped it (3 steps, 4 memory,
            // 5 time, 8 output): docs/API.md, "Exit status".
            if !matches!(done.status, Some(1 | 3 | 4 | 5 | 8)) {
                failures.push(format!(
                    "exit status {:?}, expected a failure (1, 3, 4, 5 or 8)",
                    done.status
                ));
            }
        } else {
            if done.status != Some(0) {
                failures.push(format!("exit status {:?}, expected 0", done.status));
            }
            if stdout_lines.last().map(String::as_str) != Some("alive") {
                failures.push("the session did not survive: the canary is gone".into());
            }
        }
        self.check_store(program, engine, &store, &before, &mut failures);

        Run {
            program: program.name.clone(),
            engine: engine.to_string(),
            time_to_stop,
            peak_rss: done.peak_rss,
            status: done.status,
            signal: done.signal,
            killed: done.killed,
            stdout: done.stdout,
            stderr: done.stderr,
            failures,
        }
    }

    /// Read-only: not a byte changed. Otherwise: the store still opens and
    /// holds what was committed before the program ran.
    fn check_store(
        &self,
        program: &Program,
        engine: &str,
        store: &Path,
        before: &[(PathBuf, Vec<u8>)],
        failures: &mut Vec<String>,
    ) {
        if program.tier.as_deref() == Some("read-only") {
            let after = snapshot(store);
            if after != before {
                failures.push(format!(
                    "the store changed under the read-only tier ({} files before, {} after)",
                    before.len(),
                    after.len()
                ));
            }
            return;
        }
        let mut cmd = self.command(engine, store);
        cmd.args(["eval", "(seeded-square 12)"]);
        let done = self.finish(cmd, "", Duration::from_secs(60));
        let text = String::from_utf8_lossy(&done.stdout.head).into_owned();
        if done.status != Some(0) || text != "144\n" {
            failures.push(format!(
                "the store no longer gives its node back: status {:?}, `{}` {}",
                done.status,
                text.trim(),
                done.stderr.text()
            ));
        }
    }
}

/// Every file at `path` (a store file, or a store directory's tree) with
/// its bytes.
pub fn snapshot(path: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&p) {
                stack.extend(entries.filter_map(|e| e.ok().map(|e| e.path())));
            }
        } else if let Ok(bytes) = std::fs::read(&p) {
            out.push((p, bytes));
        }
    }
    // Sibling files of a single-file store (journals, write-ahead logs).
    if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
        if !path.is_dir() {
            if let Ok(entries) = std::fs::read_dir(dir) {
                for e in entries.filter_map(|e| e.ok()) {
                    let p = e.path();
                    let n = e.file_name();
                    if p != path && n.to_string_lossy().starts_with(&*name.to_string_lossy()) {
                        if let Ok(bytes) = std::fs::read(&p) {
                            out.push((p, bytes));
                        }
                    }
                }
            }
        }
    }
    out.sort();
    out
}

/// One line of the figures table.
pub fn figure_row(run: &Run) -> String {
    let verdict = if run.failures.is_empty() {
        "kept".to_string()
    } else {
        run.failures.join("; ")
    };
    format!(
        "| {} | {} | {:.2} s | {} MB | {} |",
        run.program,
        run.engine,
        run.time_to_stop.as_secs_f64(),
        run.peak_rss / 1_000_000,
        verdict.replace('|', "\\|").replace('\n', " ")
    )
}

pub fn describe(run: &Run) -> String {
    format!(
        "{} on {}: {}\n  status {:?}, signal {:?}, {:.2?} to stop, peak RSS {} MiB\n--- stdout\n{}\n--- stderr\n{}",
        run.program,
        run.engine,
        run.failures.join("\n  "),
        run.status,
        run.signal,
        run.time_to_stop,
        run.peak_rss >> 20,
        run.stdout.text(),
        run.stderr.text()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_repetitions() {
        assert_eq!(expand("a{{3*(}}b{{2*)}}").unwrap(), "a(((b))");
        assert!(expand("{{x*(}}").is_err());
        assert!(expand("{{3*(").is_err());
    }

    #[test]
    fn reads_a_header() {
        let p = parse(
            "p",
            ";; What it does: grows.\n;; options: --memory 64M\n;; error: memory-limit\n;; within: 2.5s\n(loop)\n",
        )
        .unwrap();
        assert_eq!(p.options, ["--memory", "64M"]);
        assert_eq!(p.memory_cap(), 64 << 20);
        assert_eq!(
            p.error,
            Some(("memory-limit".into(), "memory limit exceeded".into()))
        );
        assert_eq!(p.within, Duration::from_millis(2500));
        assert_eq!(p.source, "(loop)");
        assert!(parse("p", ";; error: nonsense\n1").is_err());
        assert!(parse("p", ";; error: syntax-error\n1").is_err());
    }
}
