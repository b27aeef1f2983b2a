//! The static embedder's table format: where each part lies in the
//! bytes (`Layout::parse`, which checks every length and offset against
//! the file's length) and the check of what the parts hold
//! (`Layout::check`: offsets in order, UTF-8, vector and entry numbers in
//! range, finite numbers). Only `std` here: core/build.rs includes this
//! file to read and check the built-in table when the program is built,
//! with the same code the engine runs for a table handed over at run
//! time, so that no process checks the built-in one again.
//!
//! # Format (little-endian)
//!
//! ```text
//! magic "ARBEMB01"
//! u32 dim, u32 vectors, u32 entries
//! u32 n, n bytes: UTF-8 text about the table (source, licence)
//! u32 n, n bytes: the entries' strings, concatenated
//! u32 × (entries + 1): offsets of each string in those bytes
//! f32 × entries: log-probability of each entry (segmentation score)
//! u32 × entries: the vector of each entry
//! f32 × vectors: scale of each vector
//! i8 × (vectors × dim): the vectors (component = i8 × scale)
//! u32 k
//! u32 × (vectors × k): translations: the entries of the other script
//!     (Chinese for a Latin token, and back) nearest to each vector, or
//!     u32::MAX for none
//! u8 × (vectors × k): their cosine × 255
//! ```

use super::bytes::Reader;

pub const MAGIC: &[u8; 8] = b"ARBEMB01";

/// Where each part of a table lies: byte offsets into its bytes, and its
/// counts. Made only by `parse`, so every part lies inside the bytes.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub dim: usize,
    /// The description's offset and length.
    pub info: (usize, usize),
    pub strings: usize,
    pub offsets: usize,
    pub scores: usize,
    pub vector_of: usize,
    pub scales: usize,
    pub vectors: usize,
    pub entries: usize,
    pub n_vectors: usize,
    /// Translations per vector, and where they are.
    pub k: usize,
    pub neighbours: usize,
    pub similarities: usize,
}

pub fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

pub fn le_f32(b: &[u8], at: usize) -> f32 {
    f32::from_bits(le_u32(b, at))
}

impl Layout {
    /// The layout of table `b`, every length and offset checked against
    /// its length; an error says what is wrong and where.
    pub fn parse(b: &[u8]) -> Result<Layout, String> {
        if b.len() < 8 || &b[..8] != MAGIC {
            return Err("not an Arbores embedder table (bad magic)".into());
        }
        let mut r = Reader { bytes: b, at: 8 };
        let dim = r.u32("the dimension")?;
        let n_vectors = r.u32("the vector count")?;
        let entries = r.u32("the entry count")?;
        if dim == 0 || dim > 4096 {
            return Err(format!("dimension {dim} out of range 1..4096"));
        }
        let n = r.u32("the description length")?;
        let info = (r.take(n, "the description")?, n);
        if std::str::from_utf8(&b[info.0..info.0 + n]).is_err() {
            return Err("the description is not UTF-8".into());
        }
        let n = r.u32("the strings' length")?;
        let strings = r.take(n, "the strings")?;
        let offsets = r.array(entries + 1, 4, "the string offsets")?;
        let scores = r.array(entries, 4, "the scores")?;
        let vector_of = r.array(entries, 4, "the vector numbers")?;
        let scales = r.array(n_vectors, 4, "the scales")?;
        let vectors = r.array(n_vectors, dim, "the vectors")?;
        let k = r.u32("the translation count")?;
        if k > 64 {
            return Err(format!("{k} translations per token, at most 64"));
        }
        let neighbours = r.array(n_vectors * k, 4, "the translations")?;
        let similarities = r.array(n_vectors * k, 1, "the translation similarities")?;
        if r.at != b.len() {
            return Err(format!("{} bytes after the vectors", b.len() - r.at));
        }
        Ok(Layout {
            dim,
            info,
            strings,
            offsets,
            scores,
            vector_of,
            scales,
            vectors,
            entries,
            n_vectors,
            k,
            neighbours,
            similarities,
        })
    }

    /// Checks the contents the layout points at in `b` (the bytes it was
    /// parsed from): the strings' offsets and UTF-8, every entry's vector
    /// and score, every translation and scale. Linear in the table: a
    /// few milliseconds for the built-in one natively, more in the
    /// sandbox.
    pub fn check(&self, b: &[u8]) -> Result<(), String> {
        let Layout {
            strings,
            offsets,
            scores,
            vector_of,
            scales,
            entries,
            n_vectors,
            k,
            neighbours,
            ..
        } = *self;
        let strings_len = self.strings_len();
        let mut last = 0;
        for i in 0..=entries {
            let o = le_u32(b, offsets + 4 * i) as usize;
            if o < last || o > strings_len {
                return Err(format!("string offset {i} out of order or range"));
            }
            last = o;
        }
        if std::str::from_utf8(&b[strings..strings + strings_len]).is_err() {
            return Err("the strings are not UTF-8".into());
        }
        for i in 0..entries {
            if le_u32(b, vector_of + 4 * i) as usize >= n_vectors {
                return Err(format!("entry {i} names a vector beyond the table"));
            }
            if !le_f32(b, scores + 4 * i).is_finite() {
                return Err(format!("entry {i} has a non-finite score"));
            }
        }
        for i in 0..n_vectors * k {
            let e = le_u32(b, neighbours + 4 * i);
            if e != u32::MAX && e as usize >= entries {
                return Err(format!("translation {i} names an entry beyond the table"));
            }
        }
        for i in 0..n_vectors {
            if !le_f32(b, scales + 4 * i).is_finite() {
                return Err(format!("vector {i} has a non-finite scale"));
            }
        }
        Ok(())
    }

    /// Length of the strings' bytes (they end where the offsets begin,
    /// after the offsets' own length field was read by `parse`).
    pub fn strings_len(&self) -> usize {
        self.offsets - self.strings
    }

    /// The bytes of entry `i`'s string in `b`; only for a table whose
    /// contents passed `check` (an offset is read as it is).
    pub fn string_bytes<'a>(&self, b: &'a [u8], i: usize) -> &'a [u8] {
        let start = le_u32(b, self.offsets + 4 * i) as usize;
        let end = le_u32(b, self.offsets + 4 * (i + 1)) as usize;
        &b[self.strings + start..self.strings + end]
    }
}
