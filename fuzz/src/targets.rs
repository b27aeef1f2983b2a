//! The fuzz targets. Each takes the fuzzer's bytes and panics only when the
//! engine broke a promise: a panic of its own, a limit that did not stop an
//! evaluation, an engine left unusable, a store that does not round-trip.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use arbitrary::{Result, Unstructured};
use arbores_core::{Engine, ErrorKind, Evaluation, Limits, Snapshot, Tier};

use crate::gen;

/// Limits of every fuzzed evaluation: small, so a run spends its time on
/// many inputs rather than on one long loop.
pub const LIMITS: Limits = Limits {
    max_steps: 200_000,
    max_memory: 32 << 20,
};

/// When the interrupt check starts saying stop.
pub const TIMEOUT: Duration = Duration::from_millis(500);

/// How long after the timeout an evaluation may still run: the limits must
/// stop it within this (an input that takes longer is a hang).
pub const GRACE: Duration = Duration::from_millis(500);

/// A fresh engine with the fuzzing limits and a fixed clock.
pub fn engine(tier: Tier) -> Engine {
    let mut e = Engine::new();
    e.set_limits(LIMITS);
    e.set_tier(tier);
    e.set_clock(1_753_785_000.0);
    e
}

/// Evaluates `source` with a wall-clock timeout and checks what came back.
pub fn eval_checked(e: &mut Engine, source: &str) -> Evaluation {
    let start = Instant::now();
    e.set_interrupt_check(Some(Box::new(move || start.elapsed() > TIMEOUT)));
    let r = e.eval(source);
    let took = start.elapsed();
    e.set_interrupt_check(None);
    assert!(
        took <= TIMEOUT + GRACE,
        "the limits did not stop the evaluation: it ran {took:?} (timeout {TIMEOUT:?}):\n{source}"
    );
    if let Some(err) = &r.error {
        assert!(
            !err.message.is_empty(),
            "an error without a message: {err:?}"
        );
    }
    r
}

/// The engine still evaluates after whatever came before.
pub fn assert_usable(e: &mut Engine, context: &str) {
    let r = eval_checked(e, "42");
    assert_eq!(
        r.value.as_deref(),
        Some("42"),
        "the engine is no longer usable after:\n{context}\n{r:?}"
    );
}

/// Source text as bytes: the reader and whatever the text then does.
pub fn reader(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut e = engine(Tier::ReadOnly);
    let r = eval_checked(&mut e, &text);
    // What was read can be written back and read again as data.
    if r.error.is_none() {
        if let Some(value) = &r.value {
            let quoted = format!("(quote {value})");
            let again = eval_checked(&mut e, &quoted);
            let _ = again;
        }
    }
    assert_usable(&mut e, &text);
}

/// Programs from the grammar of the language.
pub fn eval(data: &[u8]) {
    let program = gen::program(data);
    let mut e = engine(Tier::ReadWrite);
    let r = eval_checked(&mut e, &program);
    if let Some(err) = &r.error {
        if err.kind == ErrorKind::StepLimit || err.kind == ErrorKind::MemoryLimit {
            // A limit undoes the evaluation: evaluating it again gives the
            // same kind of end.
            let again = eval_checked(&mut e, &program);
            let _ = again;
        }
    }
    assert_usable(&mut e, &program);
}

/// A knowledge base with a history worth decoding: nodes with
/// dependencies, updates, a delete, a transaction, a branch.
fn base_snapshot() -> &'static Snapshot {
    static BASE: OnceLock<Snapshot> = OnceLock::new();
    BASE.get_or_init(|| {
        let mut e = engine(Tier::System);
        let setup = r#"
          (arb:create "(define (sq x) (* x x))" '() "squares" "function" '("sq" "square"))
          (arb:create "(define (cube x) (* x (sq x)))" '((256 . "sq")) "cubes 立方" "function" '("cube"))
          (arb:update 256 '(("description" . "multiplies a number by itself")))
          (arb:create "(define pi 3.14159)" '() "a constant" "constant" '("pi"))
          (arb:transaction
            (arb:create "(define (twice f x) (f (f x)))" '() "applies twice" "function" '("twice"))
            (arb:delete 258))
          (arb:switch-version 3)
          (arb:create "(define (inc x) (+ x 1))" '() "adds one" "function" '("inc"))
        "#;
        let r = e.eval(setup);
        assert!(r.error.is_none(), "the base knowledge base: {r:?}");
        e.export_full().expect("the base knowledge base exports")
    })
}

/// Imports `refs` and `blobs`; checks an import that succeeds is usable
/// and exports what imports again. Whether it imported.
fn import_checked(refs: &[u8], blobs: &[(arbores_core::Hash, Vec<u8>)]) -> bool {
    let mut e = engine(Tier::System);
    let result = e.import(refs, |name| {
        blobs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.as_slice())
    });
    let Err(err) = result else {
        for probe in [
            "(arb:current-version)",
            "(arb:reflog)",
            "(arb:search-by-symbol \"*\" \"wildcard\")",
            "(arb:semantic-search \"number\")",
            "(arb:version-chain (arb:current-version))",
            "(map (lambda (v) (arb:switch-version v)) '(1 2 3 4 5 6 7 8))",
            "(arb:closure '(256 257 258 259 260))",
            "(cube 3)",
        ] {
            eval_checked(&mut e, probe);
        }
        assert_usable(&mut e, "an imported store");
        let again = e
            .export_full()
            .unwrap_or_else(|err| panic!("a store that imported does not export: {err}"));
        let mut fresh = engine(Tier::System);
        if let Err(err) = fresh.import_snapshots([&again]) {
            panic!("a store that imported does not export and import again: {err}");
        }
        return true;
    };
    // The message must say something.
    assert!(!err.to_string().is_empty());
    false
}

/// The base store, undamaged, imports: the store target starts from a
/// store the decoder accepts.
pub fn store_undamaged_imports() -> bool {
    let base = base_snapshot();
    import_checked(&base.refs, &base.blobs)
}

/// The store decoder: a valid store, damaged by the fuzzer's bytes, with
/// the damaged blobs (usually) renamed by their new hashes all the way up
/// to the refs record, so the decoder, not only the hash check, sees them.
pub fn store(data: &[u8]) {
    let base = base_snapshot();
    let mut u = Unstructured::new(data);
    let mut blobs = base.blobs.clone();
    let mut refs = base.refs.clone();
    let _ = damage(&mut u, &mut blobs, &mut refs);
    let _ = import_checked(&refs, &blobs);
}

fn damage(
    u: &mut Unstructured,
    blobs: &mut Vec<(arbores_core::Hash, Vec<u8>)>,
    refs: &mut Vec<u8>,
) -> Result<()> {
    let rename = !u.ratio(1, 8)?;
    let mut renames: Vec<(arbores_core::Hash, arbores_core::Hash)> = Vec::new();
    for _ in 0..u.int_in_range(1..=4)? {
        let on_refs = u.ratio(1, 6)?;
        let index = if blobs.is_empty() {
            0
        } else {
            u.choose_index(blobs.len())?
        };
        if !on_refs && u.ratio(1, 10)? && !blobs.is_empty() {
            blobs.remove(index);
            continue;
        }
        let bytes = if on_refs || blobs.is_empty() {
            &mut *refs
        } else {
            &mut blobs[index].1
        };
        mutate(u, bytes)?;
        if !on_refs && !blobs.is_empty() {
            let old = blobs[index].0;
            let new = *blake3::hash(&blobs[index].1).as_bytes();
            if rename {
                blobs[index].0 = new;
                renames.push((old, new));
            }
        }
    }
    if rename {
        // Blobs name their children by hash: carry each new name up.
        let mut i = 0;
        while i < renames.len() {
            let (old, new) = renames[i];
            for b in blobs.iter_mut() {
                if replace_all(&mut b.1, &old, &new) {
                    let renamed = *blake3::hash(&b.1).as_bytes();
                    renames.push((b.0, renamed));
                    b.0 = renamed;
                }
            }
            if refs.len() >= 32 {
                let body = refs.len() - 32;
                if replace_all(&mut refs[..body], &old, &new) {
                    let sum = *blake3::hash(&refs[..body]).as_bytes();
                    refs[body..].copy_from_slice(&sum);
                }
            }
            i += 1;
            if i > 10_000 {
                break;
            }
        }
        if u.ratio(7, 8)? && refs.len() >= 32 {
            let body = refs.len() - 32;
            let sum = *blake3::hash(&refs[..body]).as_bytes();
            refs[body..].copy_from_slice(&sum);
        }
    }
    Ok(())
}

fn replace_all(hay: &mut [u8], old: &[u8; 32], new: &[u8; 32]) -> bool {
    let mut changed = false;
    let mut i = 0;
    while i + 32 <= hay.len() {
        if &hay[i..i + 32] == old {
            hay[i..i + 32].copy_from_slice(new);
            changed = true;
            i += 32;
        } else {
            i += 1;
        }
    }
    changed
}

fn mutate(u: &mut Unstructured, bytes: &mut Vec<u8>) -> Result<()> {
    let len = bytes.len();
    match u.int_in_range(0..=6)? {
        0 if len > 0 => {
            let i = u.choose_index(len)?;
            let bit: u8 = u.int_in_range(0..=7)?;
            bytes[i] ^= 1 << bit;
        }
        1 if len > 0 => {
            let i = u.choose_index(len)?;
            bytes[i] = u.arbitrary()?;
        }
        2 => {
            let n = u.int_in_range(0..=len)?;
            bytes.truncate(n);
        }
        3 => {
            let i = u.int_in_range(0..=len)?;
            let extra: Vec<u8> = (0..u.int_in_range(1..=16)?)
                .map(|_| u.arbitrary())
                .collect::<Result<_>>()?;
            bytes.splice(i..i, extra);
        }
        4 if len > 0 => {
            let a = u.choose_index(len)?;
            let b = u.int_in_range(a..=len)?;
            bytes.drain(a..b);
        }
        5 if len > 0 => {
            // A varint-sized field made huge.
            let i = u.choose_index(len)?;
            bytes.splice(
                i..i + 1,
                [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
            );
        }
        _ => {
            let tail: Vec<u8> = u.bytes(u.len().min(64))?.to_vec();
            bytes.extend_from_slice(&tail);
        }
    }
    Ok(())
}

/// Random `arb:` calls with random arguments, in random tiers, then the
/// knowledge base must still export and import again.
pub fn arb(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let tier = match u.int_in_range(0..=5).unwrap_or(0) {
        0 => Tier::ReadOnly,
        1 => Tier::ReadWrite,
        _ => Tier::System,
    };
    let mut e = engine(Tier::System);
    let base = base_snapshot();
    e.import_snapshots([base]).expect("the base store imports");
    e.set_tier(tier);
    let program = arb_program(&mut u).unwrap_or_default();
    eval_checked(&mut e, &program);
    assert_usable(&mut e, &program);
    let full = e.export_full().unwrap_or_else(|err| {
        panic!("after these calls the knowledge base does not export ({err}):\n{program}")
    });
    let mut fresh = engine(Tier::System);
    if let Err(err) = fresh.import_snapshots([&full]) {
        panic!("after these calls the knowledge base does not import again ({err}):\n{program}");
    }
    // Incremental exports since the base add up to the same state.
    let _ = e.export_new();
}

#[rustfmt::skip]
const ARB_PROCEDURES: &[&str] = &[
    "arb:create", "arb:update", "arb:delete", "arb:get-metadata", "arb:get-dependencies",
    "arb:get-dependents", "arb:closure", "arb:search-by-symbol", "arb:semantic-search",
    "arb:current-version", "arb:reflog", "arb:version-info", "arb:version-chain",
    "arb:version-successors", "arb:switch-version", "arb:eval", "arb:eval-readonly",
    "arb:error?",
];

fn arb_program(u: &mut Unstructured) -> Result<String> {
    let mut out = String::new();
    for _ in 0..u.int_in_range(1..=8)? {
        let in_tx = u.ratio(1, 5)?;
        if in_tx {
            out.push_str("(arb:transaction ");
        }
        for _ in 0..u.int_in_range(1..=3)? {
            out.push('(');
            out.push_str(u.choose(ARB_PROCEDURES)?);
            for _ in 0..u.int_in_range(0..=5)? {
                out.push(' ');
                arb_arg(u, &mut out, 2)?;
            }
            out.push(')');
        }
        if in_tx && u.ratio(1, 3)? {
            out.push_str(" (raise 'abort)");
        }
        if in_tx {
            out.push(')');
        }
        out.push('\n');
    }
    Ok(out)
}

fn arb_arg(u: &mut Unstructured, out: &mut String, depth: u32) -> Result<()> {
    let s: String = match u.int_in_range(0..=16)? {
        0 => u.int_in_range(250..=262)?.to_string(),
        1 => u.int_in_range(0..=10)?.to_string(),
        2 => {
            let n: i64 = u.arbitrary()?;
            n.to_string()
        }
        3 => "123456789012345678901234567890".into(),
        4 => (*u.choose(&[
            "\"(define (h x) (* 2 x))\"",
            "\"(define h 1)\"",
            "\"(define (sq x) (+ x x))\"",
            "\"invalid syntax(\"",
            "\"\"",
            "\"1 2 3\"",
            "\"(define-syntax m (syntax-rules () ((_) 1)))\"",
            "\"(begin (define a 1) (define b 2))\"",
            "\"(define (loop) (loop))\"",
        ])?)
        .into(),
        5 => (*u.choose(&[
            "\"function\"",
            "\"constant\"",
            "\"macro\"",
            "\"builtin-function\"",
            "\"\"",
            "\"平方\"",
        ])?)
        .into(),
        6 => (*u.choose(&[
            "\"sq\"",
            "\"*\"",
            "\"s?\"",
            "\"^c.*e$\"",
            "\"(\"",
            "\"cube\"",
            "\"sqaure\"",
            "\"exact\"",
            "\"prefix\"",
            "\"wildcard\"",
            "\"regex\"",
            "\"fuzzy\"",
        ])?)
        .into(),
        7 => (*u.choose(&[
            "'((256 . \"sq\"))",
            "'(256 257)",
            "'((99999 . \"nope\"))",
            "'((256 . 1))",
            "'(256 . 257)",
            "'()",
            "'((\"sq\" . 256))",
        ])?)
        .into(),
        8 => (*u.choose(&[
            "'((\"description\" . \"new\"))",
            "'((\"code\" . \"(define (sq x) (* x x x))\"))",
            "'((\"code\" . \")\"))",
            "'((\"symbol-names\" \"a\" \"b\"))",
            "'((\"symbol-names\" . 5))",
            "'((\"dependencies\" (257 . \"cube\")))",
            "'((\"type\" . #f))",
            "'((\"colour\" . \"red\"))",
            "'(\"code\")",
        ])?)
        .into(),
        9 => (*u.choose(&[
            "'(\"sq\" \"square\")",
            "'(\"\")",
            "'(1 2)",
            "'(\"a b\")",
            "'()",
        ])?)
        .into(),
        10 => (*u.choose(&["#t", "#f", "0.5", "-1", "1.0e300", "+nan.0", "'sym", "#\\a"])?).into(),
        11 => (*u.choose(&[
            "'(sq 5)",
            "'(cube 2)",
            "'(arb:delete 256)",
            "'(arb:switch-version 1)",
            "\"(arb:create \\\"(define z 1)\\\")\"",
            "'(let loop () (loop))",
        ])?)
        .into(),
        12 => {
            let n = u.int_in_range(0..=300)?;
            format!("(make-string {n} #\\a)")
        }
        13 if depth > 0 => {
            let mut inner = String::from("(list");
            for _ in 0..u.int_in_range(0..=3)? {
                inner.push(' ');
                arb_arg(u, &mut inner, depth - 1)?;
            }
            inner.push(')');
            inner
        }
        14 if depth > 0 => {
            let mut inner = String::from("(cons ");
            arb_arg(u, &mut inner, depth - 1)?;
            inner.push(' ');
            arb_arg(u, &mut inner, depth - 1)?;
            inner.push(')');
            inner
        }
        15 => "(arb:current-version)".into(),
        _ => "'()".into(),
    };
    out.push_str(&s);
    Ok(())
}

// ---- the bundle, suspension and session snapshot formats ----------------
//
// Each is sealed (a checksum, or a keyed hash): bytes only flipped would
// test the seal and nothing behind it. These targets damage the structure
// inside and seal it again, so the decoders themselves see the damage.

/// The bundle (`arbores export`): a valid one of the base knowledge base,
/// its blobs and refs damaged as the store target damages them (renamed by
/// their new hashes), encoded, then the container itself damaged (counts,
/// lengths, names, order) and its checksum recomputed; decoded, and what
/// decodes imported and checked as an import is.
pub fn bundle(data: &[u8]) {
    use arbores_core::repo::bundle;
    let base = base_snapshot();
    let mut u = Unstructured::new(data);
    let mut snapshot = base.clone();
    if u.ratio(1, 2).unwrap_or(false) {
        let _ = damage(&mut u, &mut snapshot.blobs, &mut snapshot.refs);
    }
    let mut bytes = bundle::encode(&snapshot);
    if u.ratio(2, 3).unwrap_or(true) {
        let mut body = bytes[..bytes.len() - 32].to_vec();
        for _ in 0..u.int_in_range(1..=3).unwrap_or(1) {
            if mutate(&mut u, &mut body).is_err() {
                break;
            }
        }
        let reseal = u.ratio(7, 8).unwrap_or(true);
        let old_sum = bytes[bytes.len() - 32..].to_vec();
        bytes = body;
        if reseal {
            let sum = *blake3::hash(&bytes).as_bytes();
            bytes.extend_from_slice(&sum);
        } else {
            bytes.extend_from_slice(&old_sum);
        }
    }
    let Ok(decoded) = bundle::decode(&bytes) else {
        return;
    };
    // What decodes is what was encoded, or damage the decoder cannot see
    // on its own (the import checks the rest).
    let _ = import_checked(&decoded.refs, &decoded.blobs);
}

/// The key the suspension and session targets seal with.
const DUMP_KEY: [u8; 32] = *b"arbores fuzzing the dump formats";
/// Magic, format, the build's fingerprint and the payload's length: the
/// header of both envelopes (suspensions and session snapshots).
const ENVELOPE_HEADER: usize = 8 + 4 + 32 + 8;
const SEAL: usize = 32;

/// An envelope with its payload (and now and then its header) damaged,
/// its length field set to the new payload's and sealed again with the
/// key (mostly: now and then the old seal stays, for the check itself).
fn damage_envelope(u: &mut Unstructured, sealed: &[u8]) -> Vec<u8> {
    let mut header = sealed[..ENVELOPE_HEADER].to_vec();
    let mut payload = sealed[ENVELOPE_HEADER..sealed.len() - SEAL].to_vec();
    for _ in 0..u.int_in_range(1..=3).unwrap_or(1) {
        if mutate(u, &mut payload).is_err() {
            break;
        }
    }
    if u.ratio(1, 16).unwrap_or(false) {
        let _ = mutate(u, &mut header);
        header.resize(ENVELOPE_HEADER, 0);
    }
    reseal(u, header, payload, sealed)
}

fn reseal(u: &mut Unstructured, header: Vec<u8>, payload: Vec<u8>, sealed: &[u8]) -> Vec<u8> {
    let mut out = header;
    if !u.ratio(1, 16).unwrap_or(false) {
        out[44..52].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    }
    out.extend_from_slice(&payload);
    if u.ratio(15, 16).unwrap_or(true) {
        let seal = *blake3::keyed_hash(&DUMP_KEY, &out).as_bytes();
        out.extend_from_slice(&seal);
    } else {
        out.extend_from_slice(&sealed[sealed.len() - SEAL..]);
    }
    out
}

fn engine_with_tools() -> Engine {
    let mut e = engine(Tier::ReadWrite);
    e.set_dump_key(DUMP_KEY);
    for (name, params) in [("search", &["query"][..]), ("calc", &["expression"][..])] {
        e.define_tool(arbores_core::Tool {
            name: name.into(),
            params: params.iter().map(|p| p.to_string()).collect(),
            description: String::new(),
        })
        .expect("the fuzzing tools are valid");
    }
    e
}

/// A session worth saving: closures sharing a box, a record, a string
/// port, numbers of every kind, vectors, bytevectors, a hash table, a
/// cyclic list, a parameter, a promise.
const SESSION: &str = r#"
(import (scheme hash-table))
(define-record-type point (make-point x y) point? (x point-x) (y point-y set-point-y!))
(define counter (let ((n 0)) (lambda () (set! n (+ n 1)) n)))
(define big (expt 2 100))
(define third (/ 1 3))
(define z (make-rectangular 1.5 -2))
(define p (make-point 1 (list 2 "two" #\2 'two)))
(define log (open-output-string))
(define v (vector 1 2.5 "s" #u8(1 2 3) (make-point 3 4)))
(define h (make-hash-table equal?))
(hash-table-set! h "k" '(1 . 2))
(define cyc (list 1 2 3))
(set-cdr! (cddr cyc) cyc)
(define param (make-parameter 10))
(define prom (delay (+ 1 2)))
(define (f x . rest) (if (null? rest) (* x x) (apply f rest)))
(counter)
"#;

/// A suspended evaluation as bytes: a valid dump (closures, a record, a
/// port, a bignum, a `guard` and a `dynamic-wind` around the call),
/// damaged inside and sealed again; loaded, and what loads resumed.
pub fn suspension(data: &[u8]) {
    static BASE: OnceLock<Vec<u8>> = OnceLock::new();
    let base = BASE.get_or_init(|| {
        let mut e = engine_with_tools();
        let r = e.eval(SESSION);
        assert!(r.error.is_none(), "the session: {r:?}");
        let program = r#"
          (define answer
            (dynamic-wind
              (lambda () (write-string "in " log))
              (lambda ()
                (guard (c (#t (list 'failed (error-object-message c))))
                  (let ((r (search "cats")))
                    (list r (counter) (point-y p) (+ big 1) (* third 3) (f 2 3)))))
              (lambda () (write-string "out" log))))
          (list answer (get-output-string log) (counter))
        "#;
        match e.start(program) {
            arbores_core::Run::Suspended(s) => e.dump(s.id).expect("the suspension dumps"),
            arbores_core::Run::Done(r) => panic!("the base program did not suspend: {r:?}"),
        }
    });
    let mut u = Unstructured::new(data);
    let bytes = damage_envelope(&mut u, base);
    let mut e = engine_with_tools();
    let Ok(loaded) = e.load_suspension(&bytes) else {
        assert_usable(&mut e, "a suspension refused");
        return;
    };
    let answers = loaded
        .calls
        .iter()
        .map(|_| match u.int_in_range(0..=2).unwrap_or(0) {
            0 => arbores_core::ToolAnswer::Value("\"an answer\"".into()),
            1 => arbores_core::ToolAnswer::Value("(1 2 . #(3))".into()),
            _ => arbores_core::ToolAnswer::Error("the tool failed".into()),
        })
        .collect();
    let start = Instant::now();
    e.set_interrupt_check(Some(Box::new(move || start.elapsed() > TIMEOUT)));
    let resumed = e.resume(loaded.id, answers);
    e.set_interrupt_check(None);
    let took = start.elapsed();
    assert!(
        took <= TIMEOUT + GRACE,
        "the limits did not stop a resumed suspension: it ran {took:?}"
    );
    let _ = resumed;
    for probe in ["(counter)", "(write (list p v big third log))", "answer"] {
        eval_checked(&mut e, probe);
    }
    assert_usable(&mut e, "a damaged suspension that loaded");
}

/// A store of session snapshot entries for the session target.
struct Entries(std::collections::BTreeMap<[u8; 32], Vec<u8>>);

impl arbores_core::SnapshotStore for Entries {
    fn get(&self, hash: &[u8; 32]) -> Option<Vec<u8>> {
        self.0.get(hash).cloned()
    }

    fn put(&mut self, hash: &[u8; 32], bytes: &[u8]) -> std::result::Result<bool, String> {
        Ok(self.0.insert(*hash, bytes.to_vec()).is_none())
    }
}

/// A session snapshot: a valid one (a manifest and its entries, one per
/// binding), with entries damaged and renamed by their new hashes in the
/// manifest, or the manifest itself damaged, sealed again; restored, and
/// what restores evaluated.
pub fn session(data: &[u8]) {
    static BASE: OnceLock<(Vec<u8>, Vec<([u8; 32], Vec<u8>)>)> = OnceLock::new();
    let (manifest, entries) = BASE.get_or_init(|| {
        let mut e = engine_with_tools();
        let r = e.eval(SESSION);
        assert!(r.error.is_none(), "the session: {r:?}");
        let mut store = Entries(Default::default());
        let saved = e.save_snapshot(&mut store).expect("the session saves");
        (saved.manifest, store.0.into_iter().collect())
    });
    let mut u = Unstructured::new(data);
    let mut entries = entries.clone();
    let mut header = manifest[..ENVELOPE_HEADER].to_vec();
    let mut payload = manifest[ENVELOPE_HEADER..manifest.len() - SEAL].to_vec();
    // Entries damaged, each renamed in the manifest by its new hash.
    for _ in 0..u.int_in_range(0..=3).unwrap_or(0) {
        if entries.is_empty() {
            break;
        }
        let Ok(i) = u.choose_index(entries.len()) else {
            break;
        };
        if mutate(&mut u, &mut entries[i].1).is_err() {
            break;
        }
        if u.ratio(7, 8).unwrap_or(true) {
            let old = entries[i].0;
            let new = *blake3::hash(&entries[i].1).as_bytes();
            entries[i].0 = new;
            replace_all(&mut payload, &old, &new);
        }
    }
    // The manifest itself.
    if u.ratio(1, 3).unwrap_or(false) {
        let _ = mutate(&mut u, &mut payload);
    }
    if u.ratio(1, 16).unwrap_or(false) {
        let _ = mutate(&mut u, &mut header);
        header.resize(ENVELOPE_HEADER, 0);
    }
    let bytes = reseal(&mut u, header, payload, manifest);
    let store = Entries(entries.into_iter().collect());
    let mut e = engine_with_tools();
    if e.restore_snapshot(&bytes, &store).is_err() {
        assert_usable(&mut e, "a snapshot refused");
        return;
    }
    for probe in [
        "(counter)",
        "(write (list p v big third z log param prom))",
        "(write cyc)",
        "(list (f 3) (f 1 2 4) (param) (force prom) (point-y p))",
        "(hash-table-ref/default h \"k\" #f)",
        "(get-output-string log)",
    ] {
        eval_checked(&mut e, probe);
    }
    assert_usable(&mut e, "a damaged snapshot that restored");
}
