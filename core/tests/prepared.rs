//! The prepared image as bytes (`vm/prepared.rs`): an engine loaded from
//! it is in the very state of one that compiled the prelude, the same code
//! always writes the same bytes, and bytes that are damaged, stale or cut
//! short are refused, never used.

mod support;

use arbores_core::{Engine, Run, ToolAnswer};
use support::define_tool;

fn image() -> Vec<u8> {
    Engine::prepared_image_bytes().expect("the prepared image is written")
}

/// The header's fields: magic (8), format (4), fingerprint (32), source
/// hash (32), payload length (8); the hash of everything before is last.
const SOURCE_AT: usize = 44;
const HEADER: usize = 84;

/// `bytes` with its closing hash made again, so only the content's own
/// checks can refuse it.
fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
    let n = bytes.len() - 32;
    let hash = *blake3::hash(&bytes[..n]).as_bytes();
    bytes[n..].copy_from_slice(&hash);
    bytes
}

#[test]
fn the_same_code_writes_the_same_image() {
    assert_eq!(image(), image());
}

#[test]
fn an_engine_from_the_image_is_in_the_state_of_one_that_compiled_the_prelude() {
    let bytes = image();
    let loaded = Engine::from_prepared_image(&bytes).expect("the image loads");
    // Written again from the loaded engine: every symbol, global, heap
    // slot, free list, template and macro as the compiled one had them.
    assert_eq!(loaded.state_as_prepared_image().unwrap(), bytes);
}

#[test]
fn an_engine_from_the_image_behaves_as_one_that_compiled_the_prelude() {
    let bytes = image();
    let mut loaded = Engine::from_prepared_image(&bytes).unwrap();
    let mut compiled = Engine::new_unprepared();
    for e in [&mut loaded, &mut compiled] {
        define_tool(e, "search", &["q"]);
    }
    for source in [
        "(length (%bound-names \"\"))",
        "(%bound-names \"let\")",
        "(let-values (((a b) (values 1 2))) (list a b))",
        "(guard (e ((string? e) (string-append e \"!\"))) (raise \"up\"))",
        "(parameterize ((current-output-port (open-output-string))) (display 1) 2)",
        "(import (scheme stream)) (stream->list (stream-take 3 (stream-cons 1 (stream-cons 2 (stream-cons 3 stream-null)))))",
        "(import (srfi 13)) (string-index \"abc\" #\\b)",
        "(define-values (x y) (values 1 2)) (+ x y)",
        "(plan-check '(plan (seq (search \"a\") (calc \"1+2\"))))",
        "(call/cc (lambda (k) (dynamic-wind (lambda () 1) (lambda () (k 'out)) (lambda () 2))))",
        "(let loop ((i 0)) (if (< i 20000) (begin (cons i i) (loop (+ i 1))) 'done))",
        "(car '())",
    ] {
        assert_eq!(loaded.eval(source), compiled.eval(source), "{source}");
    }
    // A suspension dumped by one loads in the other: the prelude's code is
    // named alike in both.
    let run = loaded.start("(+ 1 (search \"q\"))");
    let Run::Suspended(s) = run else {
        panic!("the tool call did not suspend");
    };
    let dump = loaded.dump(s.id).unwrap();
    let resumed = compiled
        .load_suspension(&dump)
        .expect("the dump loads in the compiled engine");
    let done = compiled
        .resume(resumed.id, vec![ToolAnswer::Value("41".into())])
        .unwrap();
    assert!(
        matches!(done, Run::Done(ref e) if e.value.as_deref() == Some("42")),
        "{done:?}"
    );
}

#[test]
fn every_damaged_byte_is_refused() {
    let bytes = image();
    let n = bytes.len();
    // Every byte of the header and the hash, and bytes spread over the
    // payload.
    let mut places: Vec<usize> = (0..HEADER).chain(n - 32..n).collect();
    places.extend((HEADER..n - 32).step_by(97));
    for at in places {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        assert!(
            Engine::from_prepared_image(&bad).is_err(),
            "a flipped byte at {at} of {n} was not noticed"
        );
    }
    for len in [0, 8, HEADER, HEADER + 32, n / 2, n - 1] {
        assert!(
            Engine::from_prepared_image(&bytes[..len]).is_err(),
            "cut at {len}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(Engine::from_prepared_image(&longer).is_err());
}

#[test]
fn an_image_of_other_code_is_stale() {
    let mut bytes = image();
    bytes[SOURCE_AT] ^= 1;
    let e = Engine::from_prepared_image(&resealed(bytes)).err().unwrap();
    assert!(e.contains("stale"), "{e}");
}

#[test]
fn payload_damage_behind_a_good_hash_is_an_error_not_a_panic() {
    // The hash is made again, so the decoder's own checks must hold.
    let bytes = image();
    let n = bytes.len();
    let mut refused = 0;
    let mut tried = 0;
    for at in (HEADER..n - 32).step_by(61) {
        for flip in [0x01u8, 0x80] {
            let mut bad = bytes.clone();
            bad[at] ^= flip;
            tried += 1;
            if Engine::from_prepared_image(&resealed(bad)).is_err() {
                refused += 1;
            }
        }
    }
    // Not every change is detectable without the hash (a different
    // number is still a number), but none may panic, and most are caught.
    assert!(refused * 2 > tried, "{refused} of {tried} refused");
}
