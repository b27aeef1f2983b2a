//! Damaged and forged dumps never panic: real dumps of several programs
//! are mutated (bit flips, bytes replaced, inserted and removed, payloads
//! cut short) and signed again with the default key, as a forger who
//! knows it would; each one is either refused with a message or loads and
//! resumes to a value or an error, under limits.

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use arbores_core::{Engine, Limits, MemorySnapshotStore, Run, SnapshotStore, ToolAnswer};
use support::Rng;

const DEFAULT_KEY: &[u8; 32] = b"arbores suspended evaluation 001";
const HEADER_LEN: usize = 52;

/// Programs whose dumps hold closures, boxes, records, ports, bignums,
/// continuations of `par`, `guard` and `dynamic-wind`, and frames of the
/// prelude.
const PROGRAMS: &[&str] = &[
    r#"(define-record-type point (make-point x y) point? (x point-x) (y point-y))
       (define counter (let ((n 0)) (lambda () (set! n (+ n 1)) n)))
       (define big (expt 2 100))
       (define log (open-output-string))
       (define answer
         (dynamic-wind
           (lambda () (write-string "in " log))
           (lambda ()
             (guard (c (#t (list 'failed (error-object-message c))))
               (let ((r (search "cats")))
                 (list r (counter) (point-y (make-point 1 2)) (+ big 1) (/ 1 3)))))
           (lambda () (write-string "out" log))))
       (list answer (get-output-string log) (counter))"#,
    r#"(define (loop i acc) (if (= i 0) acc (loop (- i 1) (cons i acc))))
       (define xs (loop 5 '()))
       (par (map (lambda (x) (* x x)) xs) (search "a") (vector-ref (vector 1 2 (calc "3")) 2))"#,
    r#"(define k #f)
       (define v (call/cc (lambda (c) (set! k c) 1)))
       (let loop ((n 3) (acc '()))
         (if (= n 0)
             (string-append (search "x") (number->string (length acc)))
             (loop (- n 1) (cons (make-string n #\a) acc))))"#,
    r#"(define (greet name) (string-append "hello, " name)) (greet (search "name"))"#,
    r#"(import (srfi 116))
       (define-syntax swap!
         (syntax-rules () ((_ a b) (let ((tmp a)) (set! a b) (set! b tmp)))))
       (define-syntax pick (syntax-rules ::: (first) ((_ first x y :::) x) ((_ x :::) (list x :::))))
       (define l (ilist 1 2 3))
       (define a (search "a"))
       (define b (icadr l))
       (swap! a b)
       (list (pick first a b) (pick a b) (ilength l))"#,
];

fn engine() -> Engine {
    let mut e = support::engine_with_tools();
    e.set_limits(Limits {
        max_steps: 100_000,
        max_memory: 64 << 20,
    });
    e
}

/// The dump's payload with a valid envelope around it: the length set
/// and the hash computed with the default key.
fn sign(header: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut bytes = header[..HEADER_LEN - 8].to_vec();
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(payload);
    let hash = blake3::keyed_hash(DEFAULT_KEY, &bytes);
    bytes.extend_from_slice(hash.as_bytes());
    bytes
}

/// One mutation of a payload.
fn mutate(rng: &mut Rng, payload: &mut Vec<u8>) -> String {
    let n = payload.len();
    if n == 0 {
        let b = rng.u8(..);
        payload.push(b);
        return format!("{b:#x} put in the empty payload");
    }
    match rng.usize(..6) {
        0 => {
            let i = rng.usize(..n);
            let bit = rng.u32(..8);
            payload[i] ^= 1 << bit;
            format!("bit {bit} of byte {i} flipped")
        }
        1 => {
            let i = rng.usize(..n);
            let b = [0u8, 1, 2, 0x7f, 0x80, 0xff][rng.usize(..6)];
            payload[i] = b;
            format!("byte {i} set to {b:#x}")
        }
        2 => {
            let i = rng.usize(..n);
            payload[i] = payload[i].wrapping_add(1);
            format!("byte {i} incremented")
        }
        3 => {
            let i = rng.usize(..n);
            payload.truncate(i);
            format!("cut at {i}")
        }
        4 => {
            let i = rng.usize(..n);
            payload.remove(i);
            format!("byte {i} removed")
        }
        _ => {
            let i = rng.usize(..n);
            let b = rng.u8(..);
            payload.insert(i, b);
            format!("{b:#x} inserted at {i}")
        }
    }
}

/// Loads `bytes`, and resumes what loads with an answer per call until it
/// ends (a few rounds at most). Whatever happens must not panic; a refusal
/// must say something.
fn load_and_run(bytes: &[u8]) -> Result<(), String> {
    let mut e = engine();
    let loaded = match e.load_suspension(bytes) {
        Ok(s) => s,
        Err(message) => {
            assert!(!message.is_empty());
            return Ok(());
        }
    };
    let mut calls = loaded.calls.len();
    let mut id = loaded.id;
    for _ in 0..4 {
        let answers = (0..calls)
            .map(|_| ToolAnswer::Value("\"x\"".into()))
            .collect();
        match e.resume(id, answers) {
            Ok(Run::Suspended(s)) => {
                calls = s.calls.len();
                id = s.id;
            }
            Ok(Run::Done(_)) | Err(_) => break,
        }
    }
    // The engine goes on (a forged dump may have redefined any global,
    // but not syntax).
    match e.eval("'ok").value.as_deref() {
        Some("ok") => Ok(()),
        other => Err(format!("the engine is unusable afterwards: {other:?}")),
    }
}

/// `run` on a thread of its own, so that a panic is caught and a hang
/// (code that loops without counting steps) is reported, not waited out.
/// `None`: it went well.
fn run_isolated(run: impl FnOnce() -> Result<(), String> + Send + 'static) -> Option<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = catch_unwind(AssertUnwindSafe(run));
        let _ = tx.send(match r {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e),
            Err(panic) => Some(format!(
                "panicked: {}",
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )),
        });
    });
    match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(r) => r,
        Err(_) => Some("did not finish in 30 s (a loop that counts no steps?)".into()),
    }
}

fn rounds() -> usize {
    std::env::var("ARBORES_DUMP_MUTATIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300)
}

#[test]
fn mutated_and_resigned_dumps_are_refused_or_run_never_panic() {
    let rounds = rounds();
    // Silence the default hook: a panic is reported below with its case.
    std::panic::set_hook(Box::new(|_| {}));
    let mut failures = Vec::new();
    for (p, program) in PROGRAMS.iter().enumerate() {
        let mut a = engine();
        let s = match a.start(program) {
            Run::Suspended(s) => s,
            Run::Done(e) => panic!("program {p} did not suspend: {e:?}"),
        };
        let bytes = a.dump(s.id).unwrap();
        // The unmutated dump, signed again, still loads and runs.
        let header = &bytes[..HEADER_LEN];
        let payload = &bytes[HEADER_LEN..bytes.len() - 32];
        assert_eq!(sign(header, payload), bytes);
        let mut rng = Rng::with_seed(0x9e37_79b9_7f4a_7c15 ^ (p as u64 + 1));
        for round in 0..rounds {
            let mut m = payload.to_vec();
            let mut what = Vec::new();
            for _ in 0..1 + rng.usize(..3) {
                if m.is_empty() {
                    break;
                }
                what.push(mutate(&mut rng, &mut m));
            }
            let forged = sign(header, &m);
            if let Some(failure) = run_isolated(move || load_and_run(&forged)) {
                failures.push(format!("program {p} round {round} ({what:?}): {failure}"));
                if failures.len() >= 5 {
                    break;
                }
            }
        }
    }
    let _ = std::panic::take_hook();
    assert!(
        failures.is_empty(),
        "mutated dumps failed (the first few):\n{}",
        failures.join("\n")
    );
}

// ---- session snapshots -------------------------------------------------------

/// A session whose snapshot holds closures sharing state, records, a
/// bignum, strings, vectors, a port and a continuation.
const SESSION: &str = r#"
  (define-record-type point (make-point x y) point? (x point-x) (y point-y))
  (define origin (make-point 1 2))
  (define inc #f)
  (define get #f)
  (let ((n 0)) (set! inc (lambda () (set! n (+ n 1)) n)) (set! get (lambda () n)))
  (define (walk xs acc) (if (null? xs) acc (walk (cdr xs) (+ acc (car xs)))))
  (define data (list (vector 1 "two" #\3) (expt 2 100) 1/3 2.5 'sym))
  (define log (open-output-string))
  (define k (call/cc (lambda (c) c)))
  (define-syntax twice (syntax-rules () ((_ e) (begin e e))))
  (define-syntax pick (syntax-rules ::: (first) ((_ first x y :::) x) ((_ x :::) (list x :::))))
"#;

/// Uses of every binding of `SESSION`.
const USES: &[&str] = &[
    "(inc)",
    "(get)",
    "(point-x origin)",
    "(point? (make-point 3 4))",
    "(walk '(1 2 3) 0)",
    "data",
    "(write-string \"x\" log)",
    "(procedure? k)",
    "(twice (inc))",
    "(pick first 1 2)",
    "(pick 1 2 3)",
];

fn leb(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A manifest naming `bindings`, signed with the default key, as a forger
/// who knows the format would write it (the header taken from a real one).
fn forge_manifest(
    header: &[u8],
    bindings: &[(String, [u8; 32])],
    skipped: &[String],
    syntax: &[u8],
) -> Vec<u8> {
    let mut p = Vec::new();
    leb(&mut p, bindings.len() as u64);
    for (name, hash) in bindings {
        leb(&mut p, name.len() as u64);
        p.extend_from_slice(name.as_bytes());
        p.extend_from_slice(hash);
    }
    leb(&mut p, skipped.len() as u64);
    for name in skipped {
        leb(&mut p, name.len() as u64);
        p.extend_from_slice(name.as_bytes());
    }
    leb(&mut p, syntax.len() as u64);
    p.extend_from_slice(syntax);
    leb(&mut p, 0);
    sign(header, &p)
}

/// Restores a forged snapshot and uses every binding under limits: a
/// refusal must say something, nothing may panic.
fn restore_and_use(manifest: &[u8], store: &MemorySnapshotStore) -> Result<(), String> {
    let mut e = engine();
    if let Err(message) = e.restore_snapshot(manifest, store) {
        assert!(!message.is_empty());
        return Ok(());
    }
    for src in USES {
        let _ = e.eval(src);
    }
    match e.eval("'ok").value.as_deref() {
        Some("ok") => Ok(()),
        other => Err(format!("the engine is unusable afterwards: {other:?}")),
    }
}

#[test]
fn mutated_snapshot_entries_are_refused_or_run_never_panic() {
    let rounds = rounds();
    std::panic::set_hook(Box::new(|_| {}));
    let mut a = engine();
    let r = a.eval(SESSION);
    assert!(r.error.is_none(), "{:?}", r.error);
    let mut store = MemorySnapshotStore::new();
    let saved = a.save_snapshot(&mut store).unwrap();
    let mut listing = a.snapshot_listing(&saved.manifest).unwrap();
    // The manifest names every binding, the engine's own cells among the
    // program's, by name.
    let engine_cells = std::mem::take(&mut listing.engine);
    listing.bindings.extend(engine_cells);
    listing.bindings.sort_by(|a, b| a.0.cmp(&b.0));
    let header = &saved.manifest[..HEADER_LEN];
    // The session's syntax: the manifest's payload after the bindings and
    // the skipped names, before the inline entries (none: one byte).
    let before = forge_manifest(header, &listing.bindings, &listing.skipped, &[]);
    let start = before.len() - 32 - 2;
    let end = saved.manifest.len() - 32 - 1;
    let mut syntax_section = saved.manifest[start..end].to_vec();
    let syntax = {
        // Its length, then the block.
        let mut n = 0usize;
        while syntax_section[n] & 0x80 != 0 {
            n += 1;
        }
        syntax_section.split_off(n + 1)
    };
    assert!(
        syntax.len() > 20,
        "the session's macros are in the manifest"
    );
    // The unmutated snapshot, forged again, is the same bytes.
    assert_eq!(
        forge_manifest(header, &listing.bindings, &listing.skipped, &syntax),
        saved.manifest
    );
    // A binding of stored knowledge's value is refused by name.
    let mut knowledge = listing.bindings.clone();
    knowledge.push(("~@#1".into(), listing.bindings[0].1));
    let forged = forge_manifest(header, &knowledge, &listing.skipped, &syntax);
    let err = engine().restore_snapshot(&forged, &store).unwrap_err();
    assert!(err.contains("value of stored knowledge"), "{err}");
    let mut rng = Rng::with_seed(0x2545_f491_4f6c_dd1d);
    let mut failures = Vec::new();
    for round in 0..rounds {
        // One round in four damages the session's syntax instead.
        if round % 4 == 3 {
            let mut forged_syntax = syntax.clone();
            let mut what = vec!["syntax".to_string()];
            for _ in 0..1 + rng.usize(..3) {
                if forged_syntax.is_empty() {
                    break;
                }
                what.push(mutate(&mut rng, &mut forged_syntax));
            }
            let manifest =
                forge_manifest(header, &listing.bindings, &listing.skipped, &forged_syntax);
            let store = store.clone();
            if let Some(failure) = run_isolated(move || restore_and_use(&manifest, &store)) {
                failures.push(format!("round {round} ({what:?}): {failure}"));
                if failures.len() >= 5 {
                    break;
                }
            }
            continue;
        }
        let mut bindings = listing.bindings.clone();
        let b = rng.usize(..bindings.len());
        let mut entry = store.get(&bindings[b].1).unwrap();
        let mut what = vec![format!("entry of {}", bindings[b].0)];
        for _ in 0..1 + rng.usize(..3) {
            if entry.len() < 2 {
                break;
            }
            // The first byte is the entry format: mutate what follows.
            let mut body = entry[1..].to_vec();
            what.push(mutate(&mut rng, &mut body));
            entry.truncate(1);
            entry.extend_from_slice(&body);
        }
        let hash = *blake3::hash(&entry).as_bytes();
        let mut forged_store = store.clone();
        forged_store.put(&hash, &entry).unwrap();
        bindings[b].1 = hash;
        let manifest = forge_manifest(header, &bindings, &listing.skipped, &syntax);
        if let Some(failure) = run_isolated(move || restore_and_use(&manifest, &forged_store)) {
            failures.push(format!("round {round} ({what:?}): {failure}"));
            if failures.len() >= 5 {
                break;
            }
        }
    }
    let _ = std::panic::take_hook();
    assert!(
        failures.is_empty(),
        "mutated snapshots failed (the first few):\n{}",
        failures.join("\n")
    );
}
