//! Session snapshots: every binding of a session saved from the heap as
//! content-addressed entries, restored into a fresh engine (closures,
//! shared mutable state, records), listed and diffed; turns rolled back
//! and forked; damaged or foreign bytes refused with nothing changed.

use arbores_core::{Engine, MemorySnapshotStore, SnapshotStore, Tool, Turns};

fn eval(e: &mut Engine, src: &str) -> String {
    let r = e.eval(src);
    if let Some(err) = r.error {
        panic!("{src}: {}", err.message);
    }
    r.value.unwrap_or_default()
}

fn eval_err(e: &mut Engine, src: &str) -> String {
    e.eval(src).error.map(|e| e.message).unwrap_or_default()
}

const SESSION: &str = r#"
  (define-record-type point (make-point x y) point? (x point-x) (y point-y))
  (define origin (make-point 0 0))
  (define inc #f)
  (define get #f)
  (let ((n 0))
    (set! inc (lambda () (set! n (+ n 1)) n))
    (set! get (lambda () n)))
  (inc) (inc)
  (define (adder k) (lambda (x) (+ x k)))
  (define add5 (adder 5))
  (define table (list (vector 1 "two" #\3) (expt 2 100) 1/3 2.5 'sym))
  (define same table)
  (define text (make-string 3 #\z))
"#;

#[test]
fn a_session_restored_in_a_fresh_engine_continues() {
    let mut a = Engine::new();
    eval(&mut a, SESSION);
    let mut store = MemorySnapshotStore::new();
    let saved = a.save_snapshot(&mut store).unwrap();
    assert!(saved.skipped.is_empty());
    assert_eq!(saved.new_entries, store.len());

    let mut b = Engine::new();
    let listing = b.restore_snapshot(&saved.manifest, &store).unwrap();
    for name in [
        "inc",
        "get",
        "add5",
        "adder",
        "origin",
        "point",
        "make-point",
        "table",
    ] {
        assert!(listing.names().contains(&name), "{name} not saved");
    }
    // A closure keeps working; state shared by two closures stays shared.
    assert_eq!(eval(&mut b, "(add5 10)"), "15");
    assert_eq!(eval(&mut b, "(inc)"), "3");
    assert_eq!(eval(&mut b, "(inc)"), "4");
    assert_eq!(eval(&mut b, "(get)"), "4");
    // Records: a restored instance and a new one share one type.
    assert_eq!(eval(&mut b, "(point? origin)"), "#t");
    assert_eq!(eval(&mut b, "(point-x (make-point 7 8))"), "7");
    assert_eq!(eval(&mut b, "(point? (make-point 1 2))"), "#t");
    // Data, and identity between bindings.
    assert_eq!(
        eval(&mut b, "table"),
        r#"(#(1 "two" #\3) 1267650600228229401496703205376 1/3 2.5 sym)"#
    );
    assert_eq!(eval(&mut b, "(eq? table same)"), "#t");
    eval(&mut b, "(string-set! text 0 #\\a)");
    assert_eq!(eval(&mut b, "text"), "\"azz\"");
    // The original is untouched by what the copy does.
    assert_eq!(eval(&mut a, "(get)"), "2");
}

#[test]
fn a_session_as_one_value_round_trips() {
    let mut a = Engine::new();
    eval(&mut a, SESSION);
    let bytes = a.save_session().unwrap();
    let mut b = Engine::new();
    b.restore_session(&bytes).unwrap();
    assert_eq!(eval(&mut b, "(list (inc) (get) (add5 1))"), "(3 3 6)");
}

#[test]
fn unchanged_bindings_are_shared_between_snapshots() {
    let mut e = Engine::new();
    let mut src = String::new();
    for i in 0..200 {
        src.push_str(&format!("(define v{i} (list {i} \"value {i}\"))\n"));
    }
    src.push_str("(define (f x) (* x 2))");
    eval(&mut e, &src);
    let mut store = MemorySnapshotStore::new();
    let first = e.save_snapshot(&mut store).unwrap();
    assert_eq!(first.bindings, 201);
    assert_eq!(first.new_entries, 201);
    let again = e.save_snapshot(&mut store).unwrap();
    assert_eq!(again.new_entries, 0);
    eval(&mut e, "(set! v17 'changed)");
    let second = e.save_snapshot(&mut store).unwrap();
    assert_eq!(second.new_entries, 1, "one changed binding, one new entry");
    eval(&mut e, "(define w 1)");
    let third = e.save_snapshot(&mut store).unwrap();
    assert_eq!(third.new_entries, 1);
    assert_eq!(store.len(), 203);

    let d = e
        .snapshot_listing(&first.manifest)
        .unwrap()
        .diff(&e.snapshot_listing(&third.manifest).unwrap());
    assert_eq!(d.added, vec!["w"]);
    assert_eq!(d.changed, vec!["v17"]);
    assert!(d.removed.is_empty());
    let back = e
        .snapshot_listing(&third.manifest)
        .unwrap()
        .diff(&e.snapshot_listing(&first.manifest).unwrap());
    assert_eq!(back.removed, vec!["w"]);
}

#[test]
fn restoring_in_place_unbinds_what_came_after() {
    let mut e = Engine::new();
    eval(&mut e, "(define x 1) (define car-was car)");
    let mut store = MemorySnapshotStore::new();
    let s = e.save_snapshot(&mut store).unwrap();
    eval(&mut e, "(define y 2) (set! x 10) (set! car cdr)");
    e.restore_snapshot(&s.manifest, &store).unwrap();
    assert_eq!(eval(&mut e, "x"), "1");
    assert!(eval_err(&mut e, "y").contains("unbound"));
    // A prelude binding the session changed gets its value back.
    assert_eq!(eval(&mut e, "(car '(1 2))"), "1");
}

#[test]
fn turns_roll_back_and_fork() {
    let mut store = MemorySnapshotStore::new();
    let mut e = Engine::new();
    let mut turns = Turns::new();
    eval(&mut e, "(define x 1)");
    let t0 = turns.record(&e, &mut store, "(define x 1)").unwrap();
    eval(&mut e, "(define y (* x 10)) (set! x 2)");
    let t1 = turns.record(&e, &mut store, "turn 1").unwrap();
    assert_eq!(turns.get(t1).unwrap().parent, Some(t0));

    // Roll back to turn 0, then go on: a new branch from turn 0.
    turns.go_to(t0, &mut e, &store).unwrap();
    assert_eq!(eval(&mut e, "x"), "1");
    assert!(eval_err(&mut e, "y").contains("unbound"));
    eval(&mut e, "(define z 'other)");
    let t2 = turns.record(&e, &mut store, "turn 2").unwrap();
    assert_eq!(turns.children(t0), vec![t1, t2]);
    assert_eq!(turns.path(t2), vec![t0, t2]);

    // Fork from turn 1 in a fresh engine: both go on apart.
    let mut fork = Engine::new();
    let mut forked = turns.clone();
    forked.go_to(t1, &mut fork, &store).unwrap();
    assert_eq!(eval(&mut fork, "(list x y)"), "(2 10)");
    assert!(eval_err(&mut fork, "z").contains("unbound"));
    assert_eq!(eval(&mut e, "(list x z)"), "(1 other)");
    assert!(turns
        .go_to(9, &mut e, &store)
        .unwrap_err()
        .contains("no turn 9"));
}

/// A snapshot holds the session's macros (its own, one of the prelude's
/// defined again, a library's) and its imports; a macro it cannot hold
/// (made by another macro) is named in `skipped`. A restore replaces the
/// session's syntax with the snapshot's.
#[test]
fn a_snapshot_holds_the_sessions_syntax() {
    let mut e = Engine::new();
    eval(
        &mut e,
        "(import (srfi 116))
         (define-syntax swap! (syntax-rules () ((_ a b) (let ((t a)) (set! a b) (set! b t)))))
         (define-syntax unless (syntax-rules () ((_ c e) (list 'mine c e))))
         (define-syntax def-twice
           (syntax-rules () ((_ name) (define-syntax name (syntax-rules () ((_ x) (begin x x)))))))
         (def-twice twice)
         (define p 1)",
    );
    let mut store = MemorySnapshotStore::new();
    let s = e.save_snapshot(&mut store).unwrap();
    assert_eq!(s.skipped, vec!["twice"]);
    assert_eq!(
        e.snapshot_listing(&s.manifest).unwrap().skipped,
        vec!["twice"]
    );
    let uses = "(let ((q 2)) (swap! p q) (list p q (unless #f 3) (icadr (ilist 1 2 3))))";
    for mut b in [Engine::new(), e] {
        // A macro of the restoring session's own is gone afterwards.
        eval(
            &mut b,
            "(define-syntax later (syntax-rules () ((_) 'later)))",
        );
        b.restore_snapshot(&s.manifest, &store).unwrap();
        assert_eq!(eval(&mut b, uses), "(2 1 (mine #f 3) 2)");
        assert!(eval_err(&mut b, "(later)").contains("unbound"));
        assert!(eval_err(&mut b, "(twice 1)").contains("unbound"));
    }
    // A snapshot of a session with no syntax takes the restoring
    // session's away, imports too.
    let bytes = Engine::new().save_session().unwrap();
    let mut c = Engine::new();
    eval(
        &mut c,
        "(import (srfi 116)) (define-syntax swap! (syntax-rules () ((_ a b) 'no)))",
    );
    c.restore_session(&bytes).unwrap();
    assert!(eval_err(&mut c, "(ilist 1)").contains("unbound"));
    assert!(eval_err(&mut c, "(swap! 1 2)").contains("unbound"));
}

/// A store that hands back other bytes than it was given.
struct Tampered(MemorySnapshotStore);

impl SnapshotStore for Tampered {
    fn get(&self, hash: &[u8; 32]) -> Option<Vec<u8>> {
        let mut b = self.0.get(hash)?;
        let last = b.len() - 1;
        b[last] ^= 1;
        Some(b)
    }
    fn put(&mut self, hash: &[u8; 32], bytes: &[u8]) -> Result<bool, String> {
        self.0.put(hash, bytes)
    }
}

#[test]
fn bad_bytes_are_refused_and_nothing_changes() {
    let mut a = Engine::new();
    eval(&mut a, SESSION);
    let mut store = MemorySnapshotStore::new();
    let s = a.save_snapshot(&mut store).unwrap();
    let mut b = Engine::new();
    eval(&mut b, "(define kept 'yes)");
    let mut refuse = |bytes: &[u8], store: &dyn SnapshotStore, says: &str| {
        let err = b.restore_snapshot(bytes, store).unwrap_err();
        assert!(err.contains(says), "{err:?} does not say {says:?}");
    };
    let m = &s.manifest;
    refuse(b"hello", &store, "not a session snapshot");
    refuse(&m[..m.len() - 1], &store, "truncated");
    refuse(&m[..40], &store, "not a session snapshot");
    let mut flipped = m.clone();
    flipped[60] ^= 4;
    refuse(&flipped, &store, "hash does not match");
    let mut foreign = m.clone();
    foreign[20] ^= 1;
    refuse(&foreign, &store, "hash does not match");
    refuse(
        m,
        &MemorySnapshotStore::new(),
        "missing from the snapshot store",
    );
    refuse(m, &Tampered(store.clone()), "damaged");
    // Signed with another key.
    let mut other = Engine::new();
    other.set_dump_key([7; 32]);
    refuse(
        &other.save_session().unwrap(),
        &store,
        "hash does not match",
    );
    assert_eq!(eval(&mut b, "kept"), "yes");
    assert!(eval_err(&mut b, "inc").contains("unbound"));
}

/// Hash tables of every kind come back from a saved session and find
/// their keys: objects are renumbered on restore, so the tables are
/// hashed again (an `eq?` table's hashes are object numbers).
#[test]
fn hash_tables_survive_a_saved_session() {
    let mut a = Engine::new();
    eval(
        &mut a,
        r#"(import (scheme hash-table))
           (define key (list 'a "b"))
           (define by-identity (make-hash-table eq?))
           (hash-table-set! by-identity key 'found)
           (define by-content (make-hash-table equal?))
           (hash-table-set! by-content (list 1 "two" #(3)) 'nested)
           (hash-table-set! by-content (expt 2 100) 'big)
           (define ci (make-hash-table string-ci=?))
           (hash-table-set! ci "Key" 'ci)
           (define mod10 (make-hash-table (lambda (a b) (= (modulo a 10) (modulo b 10)))
                                          (lambda (x) (modulo x 10))))
           (hash-table-set! mod10 13 'thirteen)
           (define frozen (hash-table-copy by-content))
           (define many (make-hash-table eqv?))
           (do ((i 0 (+ i 1))) ((= i 1000)) (hash-table-set! many i (* i i)))"#,
    );
    let bytes = a.save_session().unwrap();
    let mut b = Engine::new();
    // Many objects first, so the restored ones get other numbers.
    eval(&mut b, "(define junk (make-vector 500 (list 1 2)))");
    b.restore_session(&bytes).unwrap();
    eval(&mut b, "(import (scheme hash-table))");
    assert_eq!(
        eval(
            &mut b,
            r#"(list (hash-table-ref/default by-identity key #f)
                     (hash-table-ref/default by-identity (list 'a "b") #f)
                     (hash-table-ref/default by-content (list 1 "two" (vector 3)) #f)
                     (hash-table-ref/default by-content (expt 2 100) #f)
                     (hash-table-ref/default ci "KEY" #f)
                     (hash-table-ref/default mod10 3 #f)
                     (hash-table-mutable? frozen)
                     (hash-table-size many)
                     (hash-table-ref/default many 999 #f))"#
        ),
        "(found #f nested big ci thirteen #f 1000 998001)"
    );
    // It goes on working: changes, collections.
    eval(
        &mut b,
        r#"(hash-table-set! by-identity (list 'new) 1)
           (let loop ((i 0)) (if (< i 200000) (begin (make-vector 10) (loop (+ i 1)))))"#,
    );
    assert_eq!(
        eval(
            &mut b,
            "(list (hash-table-size by-identity) (hash-table-ref by-identity key))"
        ),
        "(2 found)"
    );
}

/// A listing names the program's bindings, not the engine's own state
/// that the snapshot also holds (the host tools defined), which a restore
/// brings back all the same.
#[test]
fn listings_name_the_program_s_bindings_only() {
    let mut e = Engine::new();
    e.define_tool(Tool {
        name: "lookup".into(),
        params: vec!["q".into()],
        description: String::new(),
    })
    .unwrap();
    eval(&mut e, "(define answer 42)");
    let mut store = MemorySnapshotStore::new();
    let saved = e.save_snapshot(&mut store).unwrap();
    let names: Vec<String> = e
        .snapshot_listing(&saved.manifest)
        .unwrap()
        .bindings
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert!(names.contains(&"answer".to_string()), "{names:?}");
    assert!(names.iter().all(|n| !n.contains("@(")), "{names:?}");
    let listing = e.snapshot_listing(&saved.manifest).unwrap();
    assert!(
        listing
            .engine
            .iter()
            .any(|(n, _)| n.starts_with("%host-tools")),
        "{:?}",
        listing.engine
    );
    let mut other = Engine::new();
    let restored = other.restore_snapshot(&saved.manifest, &store).unwrap();
    assert_eq!(restored.bindings.len(), names.len());
    assert_eq!(
        eval(&mut other, "(list answer (procedure? lookup))"),
        "(42 #t)"
    );
}

/// A global holding an environment of `environment`'s is restored with
/// its bindings.
#[test]
fn an_environment_in_a_session_round_trips() {
    let mut a = Engine::new();
    eval(
        &mut a,
        "(define env (environment '(prefix (only (scheme base) car quote) b:)))",
    );
    let bytes = a.save_session().unwrap();
    let mut b = Engine::new();
    b.restore_session(&bytes).unwrap();
    assert_eq!(eval(&mut b, "(eval '(b:car (b:quote (1 2))) env)"), "1");
    assert_eq!(
        b.eval("(eval '(car '(1)) env)")
            .error
            .map(|e| e.message)
            .as_deref(),
        Some("unbound variable: car (not in the environment)")
    );
}

/// A session with guards in its procedures, and an escape continuation
/// (what `guard` enters a guard with) kept in a global: restored in a
/// fresh engine, the guards work, and the escape, whose frame is not on
/// the new engine's stack, is an error when called, not a crash.
#[test]
fn guards_and_an_escape_in_a_session_round_trip() {
    let mut a = Engine::new();
    eval(
        &mut a,
        "(define (safe-div x y) (guard (e ((error-object? e) 'undefined)) (quotient x y)))
         (define (depth n) (if (= n 0) (raise 'bottom) (guard (e ((string? e) 'no)) (depth (- n 1)))))
         (define kept (%call/ec (lambda (k) k)))",
    );
    let bytes = a.save_session().unwrap();
    let mut b = Engine::new();
    b.restore_session(&bytes).unwrap();
    assert_eq!(
        eval(&mut b, "(list (safe-div 7 2) (safe-div 1 0))"),
        "(3 undefined)"
    );
    assert_eq!(eval(&mut b, "(guard (e (#t e)) (depth 1000))"), "bottom");
    assert_eq!(eval(&mut b, "kept"), "#<escape-continuation>");
    assert!(
        eval_err(&mut b, "(kept 1)").contains("called after the extent"),
        "{}",
        eval_err(&mut b, "(kept 1)")
    );
    assert_eq!(eval(&mut b, "(procedure? kept)"), "#t");
}
