//! Crash and damage trials of the knowledge store, shared by the test
//! (`host/tests/crash.rs`, a few trials) and the figures program
//! (`host/examples/crash.rs`, hundreds).
//!
//! A *kill trial* starts a writer on a fresh store, kills it with SIGKILL
//! at a random moment, then checks what a user relies on: the store opens,
//! `arbores fsck` finds nothing wrong, every commit whose version the
//! writer printed (and flushed) before it died is there, a transaction is
//! all there or not there at all, every version holds exactly the one
//! change it was made by, and nothing but the store and SQLite's own files
//! is left beside it. The writers:
//! - `Repl`: a REPL fed one `arb:create` per line;
//! - `Run`: `arbores run FILE` doing one `arb:create` after another;
//! - `Transaction`: `arbores run FILE` making many nodes in one
//!   `arb:transaction`, then single creates.
//!
//! A *damage trial* flips one byte of a good store file, or cuts the file
//! short, at a random place, then runs an evaluation that calls every
//! stored procedure, and `fsck`: each must give the right answer or an
//! error naming the store file (exit status 6), never a wrong answer, and
//! neither may change the damaged file.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How a killed writer was writing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer {
    Repl,
    Run,
    Transaction,
}

impl Writer {
    pub const ALL: [Writer; 3] = [Writer::Repl, Writer::Run, Writer::Transaction];

    pub fn name(self) -> &'static str {
        match self {
            Writer::Repl => "repl",
            Writer::Run => "run",
            Writer::Transaction => "transaction",
        }
    }
}

/// How a store file is damaged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage {
    FlippedByte,
    Truncated,
}

impl Damage {
    pub const ALL: [Damage; 2] = [Damage::FlippedByte, Damage::Truncated];

    pub fn name(self) -> &'static str {
        match self {
            Damage::FlippedByte => "flipped byte",
            Damage::Truncated => "truncated",
        }
    }
}

/// The trials' seeded generator: a failing trial can be run again from
/// its seed.
pub use fastrand::Rng as Random;

pub struct Harness {
    pub bin: PathBuf,
    /// Where the trials' stores are made (emptied first).
    pub dir: PathBuf,
    /// The compiled-guest cache shared by every process.
    pub cache: PathBuf,
    /// Single creates per `Repl` and `Run` writer, and after the
    /// transaction.
    pub creates: usize,
    /// Nodes of the `Transaction` writer's transaction.
    pub transaction_nodes: usize,
}

/// What one kill trial saw.
#[derive(Debug, Default)]
pub struct KillTrial {
    /// Versions the writer printed before it died.
    pub reported: usize,
    /// Versions in the store after the kill (the initial one excluded).
    pub stored: u64,
    /// Whether the transaction was stored (`Transaction` only).
    pub transaction_stored: bool,
    /// Promises broken, each saying what and where; empty when all held.
    pub failures: Vec<String>,
}

/// What one damage trial saw.
#[derive(Debug, Default)]
pub struct DamageTrial {
    pub offset: u64,
    /// The evaluation gave the right answer (the damage missed what it
    /// reads).
    pub unaffected: bool,
    /// fsck found the damage.
    pub fsck_found: bool,
    pub failures: Vec<String>,
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn describe(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// The program of a `Run` writer: `count` creates, each printing its
/// node and version as soon as it returns.
fn run_program(count: usize) -> String {
    format!(
        "(do ((i 0 (+ i 1))) ((= i {count}))
           (let* ((name (string-append \"k-\" (number->string i)))
                  (r (arb:create (string-append \"(define (\" name \") \" (number->string i) \")\")
                                 '() \"killed\" \"function\" (list name))))
             (if (arb:error? r) (error \"arb:create failed\" r))
             (write (list (cdr (assoc \"s-expression-id\" r)) (cdr (assoc \"new-version-id\" r))))
             (newline)
             (flush-output-port)))\n"
    )
}

/// The program of a `Transaction` writer: one transaction of `nodes`
/// creates, its version printed when it returns, then `Run`'s creates.
fn transaction_program(nodes: usize, creates: usize) -> String {
    format!(
        "(define v (arb:transaction
           (do ((i 0 (+ i 1))) ((= i {nodes}))
             (let ((name (string-append \"t-\" (number->string i))))
               (arb:create (string-append \"(define (\" name \") \" (number->string i) \")\")
                           '() \"in the transaction\" \"function\" (list name))))))
         (if (arb:error? v) (error \"arb:transaction failed\" v))
         (write (list 'transaction (cdr (assoc \"new-version-id\" v))))
         (newline) (flush-output-port)
         {}",
        run_program(creates)
    )
}

impl Harness {
    pub fn new(bin: PathBuf, dir: PathBuf, cache: PathBuf) -> Harness {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the trials' directory");
        Harness {
            bin,
            dir,
            cache,
            creates: 400,
            transaction_nodes: 20_000,
        }
    }

    fn command(&self, engine: &str, store: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.arg("--engine")
            .arg(engine)
            .arg("--store")
            .arg(store)
            // A writer is killed, not timed out: on a loaded machine the
            // 20,000-node transaction can take longer than the default.
            .arg("--timeout")
            .arg("0")
            .args(args)
            .env("ARBORES_CACHE_DIR", &self.cache)
            .env_remove("ARBORES_CLOCK");
        cmd
    }

    fn arbores(&self, engine: &str, store: &Path, args: &[&str]) -> Output {
        self.command(engine, store, args)
            .stdin(Stdio::null())
            .output()
            .expect("arbores runs")
    }

    /// A fresh directory holding only the trial's store (not created).
    fn fresh(&self, name: &str) -> PathBuf {
        let dir = self.dir.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a trial directory");
        dir.join("store")
    }

    fn start(&self, engine: &str, writer: Writer, store: &Path) -> Child {
        let dir = store.parent().expect("a trial directory");
        let program = match writer {
            Writer::Repl => None,
            Writer::Run => Some(run_program(self.creates)),
            Writer::Transaction => Some(transaction_program(self.transaction_nodes, self.creates)),
        };
        let mut cmd = match &program {
            Some(source) => {
                let file = dir.join("program.scm");
                std::fs::write(&file, source).expect("the program file");
                self.command(
                    engine,
                    store,
                    &["run", file.to_str().expect("a UTF-8 path")],
                )
            }
            None => self.command(engine, store, &["repl"]),
        };
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("arbores starts");
        let mut input = child.stdin.take().expect("stdin");
        let lines: String = match writer {
            Writer::Repl => (0..self.creates)
                .map(|i| {
                    format!(
                        "(let ((r (arb:create \"(define (k-{i}) {i})\" '() \"killed\" \"function\" '(\"k-{i}\")))) \
                           (list (cdr (assoc \"s-expression-id\" r)) (cdr (assoc \"new-version-id\" r))))\n"
                    )
                })
                .collect(),
            _ => String::new(),
        };
        // Written from a thread: a REPL killed mid-way stops reading.
        std::thread::spawn(move || {
            let _ = input.write_all(lines.as_bytes());
        });
        child
    }

    /// How long `writer` takes to finish on `engine` when nothing kills
    /// it; kills are spread over this.
    pub fn calibrate(&self, engine: &str, writer: Writer) -> Result<Duration, String> {
        let store = self.fresh(&format!("calibrate-{engine}-{}", writer.name()));
        let start = Instant::now();
        let out = self
            .start(engine, writer, &store)
            .wait_with_output()
            .map_err(|e| e.to_string())?;
        let took = start.elapsed();
        if !out.status.success() {
            return Err(format!(
                "{engine} {} did not finish: {}",
                writer.name(),
                describe(&out)
            ));
        }
        Ok(took)
    }

    /// One kill trial: `writer` on `engine`, killed after `kill_after`.
    pub fn kill_trial(
        &self,
        engine: &str,
        writer: Writer,
        trial: usize,
        kill_after: Duration,
    ) -> KillTrial {
        let store = self.fresh(&format!("kill-{engine}-{}-{trial}", writer.name()));
        let mut child = self.start(engine, writer, &store);
        let mut pipe = child.stdout.take().expect("stdout");
        let reader = std::thread::spawn(move || {
            let mut printed = Vec::new();
            let _ = pipe.read_to_end(&mut printed);
            text(&printed)
        });
        std::thread::sleep(kill_after);
        let _ = child.kill();
        let _ = child.wait();
        let printed = reader.join().unwrap_or_default();
        let mut seen = KillTrial::default();
        // Only whole lines count: a line cut by the kill was not reported.
        let whole = match printed.rfind('\n') {
            Some(end) => &printed[..end],
            None => "",
        };
        let mut creates: Vec<(u64, u64)> = Vec::new();
        let mut transaction: Option<u64> = None;
        for line in whole.lines().map(str::trim).filter(|l| !l.is_empty()) {
            // The REPL prints a prompt before values on a terminal only;
            // a line is `(NODE VERSION)` or `(transaction VERSION)`.
            let fields: Vec<&str> = line.trim_matches(['(', ')']).split(' ').collect();
            match fields.as_slice() {
                ["transaction", v] => transaction = v.parse().ok(),
                [n, v] => match (n.parse(), v.parse()) {
                    (Ok(n), Ok(v)) => creates.push((n, v)),
                    _ => seen.failures.push(format!("an unexpected line: {line}")),
                },
                _ => seen.failures.push(format!("an unexpected line: {line}")),
            }
        }
        seen.reported = creates.len() + usize::from(transaction.is_some());
        self.check_after_kill(engine, &store, &creates, transaction, &mut seen);
        seen
    }

    fn check_after_kill(
        &self,
        engine: &str,
        store: &Path,
        creates: &[(u64, u64)],
        transaction: Option<u64>,
        seen: &mut KillTrial,
    ) {
        // (current version, single creates, nodes of the transaction,
        // reported nodes present).
        let ids: Vec<String> = creates.iter().map(|(n, _)| n.to_string()).collect();
        let check = format!(
            "(define (count-names prefix)
               (length (arb:search-by-symbol prefix \"prefix\" 10000000)))
             (define (present ids n)
               (if (null? ids) n
                   (present (cdr ids)
                            (if (arb:error? (arb:get-metadata (car ids))) n (+ n 1)))))
             (list (arb:current-version) (count-names \"k-\") (count-names \"t-\")
                   (present '({}) 0))",
            ids.join(" ")
        );
        let out = self.arbores(engine, store, &["--tier", "read-only", "eval", &check]);
        if !out.status.success() {
            seen.failures
                .push(format!("the store does not open: {}", describe(&out)));
            return;
        }
        let answer = text(&out.stdout);
        let fields: Vec<u64> = answer
            .trim()
            .trim_matches(['(', ')'])
            .split(' ')
            .filter_map(|f| f.parse().ok())
            .collect();
        let [current, singles, in_transaction, present] = fields[..] else {
            seen.failures
                .push(format!("the check printed {answer:?}: {}", describe(&out)));
            return;
        };
        seen.stored = current.saturating_sub(1);
        seen.transaction_stored = in_transaction > 0;
        if present != creates.len() as u64 {
            seen.failures.push(format!(
                "{} of the {} reported creates are missing",
                creates.len() as u64 - present,
                creates.len()
            ));
        }
        if let Some(&(_, last)) = creates.last() {
            if current < last {
                seen.failures.push(format!(
                    "the current version is {current}, but v{last} was reported"
                ));
            }
        }
        if in_transaction != 0 && in_transaction != self.transaction_nodes as u64 {
            seen.failures.push(format!(
                "a transaction is partly stored: {in_transaction} of {} nodes",
                self.transaction_nodes
            ));
        }
        if transaction.is_some() && in_transaction == 0 {
            seen.failures
                .push("the reported transaction is missing".to_string());
        }
        // Every version after the first is one create or the transaction.
        let out = self.arbores(engine, store, &["log", "--json"]);
        let log: Option<serde_json::Value> = serde_json::from_slice(&out.stdout).ok();
        let descriptions: Vec<String> = log
            .as_ref()
            .and_then(|l| l["versions"].as_array())
            .map(|vs| {
                vs.iter()
                    .filter(|v| v["parent"].is_u64())
                    .map(|v| v["description"].as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default();
        let whole = format!("transaction of {} changes", self.transaction_nodes);
        let odd = descriptions
            .iter()
            .filter(|d| !d.starts_with("create ") && !d.starts_with(&whole))
            .count();
        let versions = singles + u64::from(in_transaction > 0);
        if !out.status.success()
            || odd != 0
            || descriptions.len() as u64 != versions
            || current != versions + 1
        {
            seen.failures.push(format!(
                "versions and changes disagree: current v{current}, {singles} single creates, \
                 transaction {}, {} versions logged, {odd} of another change",
                if in_transaction > 0 {
                    "stored"
                } else {
                    "absent"
                },
                descriptions.len()
            ));
        }
        let out = self.arbores(engine, store, &["fsck"]);
        if !out.status.success() {
            seen.failures
                .push(format!("fsck failed: {}", describe(&out)));
        }
        // Nothing left behind but the store and SQLite's companions.
        let dir = store.parent().expect("a trial directory");
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if !matches!(
                    name.as_str(),
                    "store" | "store-wal" | "store-shm" | "program.scm"
                ) {
                    seen.failures.push(format!("left behind: {name}"));
                }
            }
        }
    }

    /// Makes the store the damage trials start from: `count` stored
    /// procedures, `(d-I)` returning I. Returns the evaluation that calls
    /// them all and its answer.
    pub fn damage_base(
        &self,
        engine: &str,
        count: usize,
    ) -> Result<(PathBuf, String, String), String> {
        let store = self.fresh("damage-base");
        let program = format!(
            "(do ((i 0 (+ i 1))) ((= i {count}))
               (let ((name (string-append \"d-\" (number->string i))))
                 (arb:create (string-append \"(define (\" name \") \" (number->string i) \")\")
                             '() \"damaged\" \"function\" (list name))))\n"
        );
        let file = store.with_file_name("program.scm");
        std::fs::write(&file, program).map_err(|e| e.to_string())?;
        let out = self.arbores(engine, &store, &["run", file.to_str().unwrap_or("")]);
        if !out.status.success() {
            return Err(format!("making the base store: {}", describe(&out)));
        }
        let calls: Vec<String> = (0..count).map(|i| format!("(d-{i})")).collect();
        let check = format!(
            "(list (arb:current-version) (length (arb:search-by-symbol \"d-\" \"prefix\" 1000000)) (+ {}))",
            calls.join(" ")
        );
        let expected = format!(
            "({} {count} {})\n",
            count + 1,
            count * count.saturating_sub(1) / 2
        );
        let out = self.arbores(engine, &store, &["eval", &check]);
        if text(&out.stdout) != expected {
            return Err(format!(
                "the base store answers wrongly: {}",
                describe(&out)
            ));
        }
        for companion in ["store-wal", "store-shm"] {
            if store.with_file_name(companion).exists() {
                return Err(format!("{companion} is left after the writer closed"));
            }
        }
        Ok((store, check, expected))
    }

    /// One damage trial on a copy of `base`.
    pub fn damage_trial(
        &self,
        engine: &str,
        base: &(PathBuf, String, String),
        damage: Damage,
        trial: usize,
        random: &mut Random,
    ) -> DamageTrial {
        let (base, check, expected) = base;
        let store = self.fresh(&format!("damage-{engine}-{trial}"));
        let mut seen = DamageTrial::default();
        let mut bytes = match std::fs::read(base) {
            Ok(b) => b,
            Err(e) => {
                seen.failures.push(format!("reading the base: {e}"));
                return seen;
            }
        };
        seen.offset = random.u64(..bytes.len() as u64);
        match damage {
            Damage::FlippedByte => {
                bytes[seen.offset as usize] ^= random.u8(1..);
            }
            Damage::Truncated => bytes.truncate(seen.offset as usize),
        }
        if let Err(e) = std::fs::write(&store, &bytes) {
            seen.failures.push(format!("writing the damaged copy: {e}"));
            return seen;
        }
        let place = store.display().to_string();
        let out = self.arbores(engine, &store, &["eval", check]);
        let answer = text(&out.stdout);
        let said = text(&out.stderr);
        if out.status.success() {
            if answer == *expected {
                seen.unaffected = true;
            } else {
                seen.failures.push(format!(
                    "a wrong answer at offset {}: {answer:?}, not {expected:?}",
                    seen.offset
                ));
            }
        } else if out.status.code() != Some(6) || !said.contains(&place) {
            seen.failures.push(format!(
                "not a store error naming the file (offset {}): {}",
                seen.offset,
                describe(&out)
            ));
        }
        let out = self.arbores(engine, &store, &["fsck"]);
        seen.fsck_found = !out.status.success();
        if seen.fsck_found
            && !text(&out.stdout).contains(&place)
            && !text(&out.stderr).contains(&place)
        {
            seen.failures.push(format!(
                "fsck does not name the file (offset {}): {}",
                seen.offset,
                describe(&out)
            ));
        }
        if !seen.unaffected && !seen.fsck_found {
            seen.failures.push(format!(
                "the evaluation failed but fsck found nothing (offset {})",
                seen.offset
            ));
        }
        match std::fs::read(&store) {
            Ok(after) if after == bytes => {}
            Ok(_) => seen.failures.push(format!(
                "the damaged file was changed (offset {})",
                seen.offset
            )),
            Err(e) => seen.failures.push(format!("the damaged file: {e}")),
        }
        seen
    }
}
