//! `Bytes`: the bytes of a table or lexicon, compiled into the program or
//! handed over at run time, and `Reader`, which finds the parts of such a
//! file checking that each fits. Only `std` here: core/build.rs uses it
//! too (to read the built-in table and lexicon as the engine does).

use std::sync::Arc;

/// Bytes compiled into the program, or handed over at run time.
#[derive(Clone)]
pub enum Bytes {
    Static(&'static [u8]),
    Shared(Arc<[u8]>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Static(b) => b,
            Bytes::Shared(b) => b,
        }
    }
}

/// The little-endian u32 at `at` (in range: the caller checked).
pub fn le_u32(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize
}

/// Walks a file's parts in order: each is checked to fit in the bytes,
/// and found by its offset; an error names the part and the byte where
/// the file was cut.
pub struct Reader<'a> {
    pub bytes: &'a [u8],
    /// Where the next part starts.
    pub at: usize,
}

impl Reader<'_> {
    /// The offset of the next `n` bytes, `what`.
    pub fn take(&mut self, n: usize, what: &str) -> Result<usize, String> {
        let start = self.at;
        let end = start
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| format!("truncated at {what} (byte {start})"))?;
        self.at = end;
        Ok(start)
    }

    /// The next little-endian u32.
    pub fn u32(&mut self, what: &str) -> Result<usize, String> {
        let at = self.take(4, what)?;
        Ok(le_u32(self.bytes, at))
    }

    /// The offset of the next `count` items of `size` bytes.
    pub fn array(&mut self, count: usize, size: usize, what: &str) -> Result<usize, String> {
        let n = count
            .checked_mul(size)
            .ok_or_else(|| format!("{what} too large"))?;
        self.take(n, what)
    }
}
