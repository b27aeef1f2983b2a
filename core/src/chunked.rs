//! A vector stored in chunks of a fixed size, for the heap's slots.
//!
//! Growing it allocates one more chunk and never copies what it holds: a
//! `Vec` that grows copies its whole buffer into a new one, and for that
//! moment (in wasm32, for good: an instance's memory keeps its high-water
//! mark) both buffers exist, so a heap of a third of the memory cap could
//! not grow at all. Here the peak beyond what is held is one chunk.
//! Indexing costs one more load than a `Vec`'s (the chunk's address).

use std::ops::{Index, IndexMut};

/// Slots in a chunk: a power of two, so an index splits with a shift and
/// a mask.
const BITS: u32 = 16;
pub const CHUNK: usize = 1 << BITS;
const MASK: usize = CHUNK - 1;

/// Every chunk but the last holds exactly `CHUNK` items; every chunk was
/// allocated with room for `CHUNK` items, so pushing never reallocates.
pub struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Clone> Clone for Chunked<T> {
    /// A clone whose chunks have their full room, as the original's.
    fn clone(&self) -> Self {
        let chunks = self
            .chunks
            .iter()
            .map(|c| {
                let mut copy = Vec::with_capacity(CHUNK);
                copy.extend_from_slice(c);
                copy
            })
            .collect();
        Chunked {
            chunks,
            len: self.len,
        }
    }
}

impl<T> Chunked<T> {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Items the chunks allocated so far have room for.
    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.chunks.len() * CHUNK
    }

    #[inline]
    pub fn push(&mut self, item: T) {
        match self.chunks.last_mut() {
            Some(last) if last.len() < CHUNK => last.push(item),
            _ => self.push_chunk(item),
        }
        self.len += 1;
    }

    #[cold]
    fn push_chunk(&mut self, item: T) {
        let mut chunk = Vec::with_capacity(CHUNK);
        chunk.push(item);
        self.chunks.push(chunk);
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        self.chunks.get(i >> BITS)?.get(i & MASK)
    }

    /// Keeps the first `len` items; chunks left empty are freed.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        let n = len.div_ceil(CHUNK);
        self.chunks.truncate(n);
        if let Some(last) = self.chunks.last_mut() {
            last.truncate(len - (n - 1) * CHUNK);
        }
        self.len = len;
    }

    /// The items in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + '_ {
        self.chunks.iter().flat_map(|c| c.iter())
    }

    /// The chunks in order, as slices: every one but the last `CHUNK`
    /// long.
    pub fn chunks_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut [T]> + '_ {
        self.chunks.iter_mut().map(|c| c.as_mut_slice())
    }

    /// Sets every item to `value`.
    pub fn fill(&mut self, value: T)
    where
        T: Clone,
    {
        for c in &mut self.chunks {
            c.fill(value.clone());
        }
    }
}

impl<T: Clone> Chunked<T> {
    /// `n` copies of `value`.
    pub fn from_elem(value: T, n: usize) -> Self {
        let mut v = Chunked::default();
        for _ in 0..n {
            v.push(value.clone());
        }
        v
    }
}

impl<T> FromIterator<T> for Chunked<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut v = Chunked::default();
        for item in items {
            v.push(item);
        }
        v
    }
}

impl<T> Index<usize> for Chunked<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        &self.chunks[i >> BITS][i & MASK]
    }
}

impl<T> IndexMut<usize> for Chunked<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.chunks[i >> BITS][i & MASK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_index_truncate_across_chunks() {
        let mut v: Chunked<u32> = Chunked::default();
        let n = 2 * CHUNK + 5;
        for i in 0..n {
            v.push(i as u32);
        }
        assert_eq!(v.len(), n);
        assert_eq!(v.capacity(), 3 * CHUNK);
        assert_eq!(v[CHUNK], CHUNK as u32);
        assert_eq!(v.get(n), None);
        assert_eq!(v.iter().rev().next(), Some(&(n as u32 - 1)));
        v.truncate(CHUNK);
        assert_eq!((v.len(), v.capacity()), (CHUNK, CHUNK));
        v.push(7);
        assert_eq!((v[CHUNK], v.capacity()), (7, 2 * CHUNK));
        v.truncate(3);
        assert_eq!(v.iter().copied().collect::<Vec<_>>(), vec![0, 1, 2]);
        let c = v.clone();
        assert_eq!(c.chunks[0].capacity(), CHUNK);
        v.truncate(0);
        assert!(v.is_empty() && v.capacity() == 0);
    }
}
