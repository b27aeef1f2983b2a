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
