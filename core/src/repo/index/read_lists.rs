//! The posting lists a search read whole, each as a term's part in each
//! node of it, kept until the caller is done scoring with them.
//!
//! A Chinese query at a million nodes reads about 300,000 postings, 16
//! bytes each: megabytes a query, which the allocator gave back to the
//! system after each search and the kernel then had to clear again for the
//! next (a tenth of such a query's time). The buffers go back to a `ListPool`
//! shared by an index's clones when the lists are dropped, and the next
//! search reads into them.

use std::sync::{Arc, Mutex};

use crate::repo::node::NodeId;

/// A term's part in each node of its posting list, by ascending node.
pub type Parts = Vec<(NodeId, f32)>;

/// The most buffers a pool keeps (a query has a few dozen terms at most).
const KEPT: usize = 48;
/// The most postings the buffers a pool keeps may hold in all (16 MiB).
const KEPT_POSTINGS: usize = 1 << 20;

/// Empty buffers kept between searches.
#[derive(Clone, Debug, Default)]
pub struct ListPool(Arc<Mutex<Vec<Parts>>>);

impl ListPool {
    /// An empty buffer with room for `len` postings: the smallest kept
    /// that has it, or a new one (a kept buffer that is too small is not
    /// grown: growing copies what it had room for).
    pub fn take(&self, len: usize) -> Parts {
        let found = self.0.lock().ok().and_then(|mut kept| {
            let (i, _) = kept
                .iter()
                .enumerate()
                .filter(|(_, b)| b.capacity() >= len)
                .min_by_key(|(_, b)| b.capacity())?;
            Some(kept.swap_remove(i))
        });
        found.unwrap_or_else(|| Vec::with_capacity(len))
    }

    /// Keeps `buffers`, emptied, the largest first, while the pool has room.
    fn give(&self, buffers: impl Iterator<Item = Parts>) {
        let Ok(mut kept) = self.0.lock() else {
            return;
        };
        kept.extend(buffers.map(|mut b| {
            b.clear();
            b
        }));
        kept.sort_unstable_by_key(|b| std::cmp::Reverse(b.capacity()));
        // The largest that fit together, taken in order (a large one
        // that does not fit leaves room for smaller ones).
        let mut room = KEPT_POSTINGS;
        let mut n = 0;
        for i in 0..kept.len() {
            if n < KEPT && kept[i].capacity() <= room {
                room -= kept[i].capacity();
                kept.swap(n, i);
                n += 1;
            }
        }
        kept.truncate(n);
    }
}

/// The lists a search read whole, by term number, and the pool their
/// buffers go back to.
#[derive(Debug, Default)]
pub struct ReadLists {
    by_term: Vec<Option<Parts>>,
    pool: ListPool,
}

impl ReadLists {
    /// No list read yet of `terms` terms.
    pub fn new(terms: usize, pool: &ListPool) -> ReadLists {
        ReadLists {
            by_term: vec![None; terms],
            pool: pool.clone(),
        }
    }

    /// Term `t`'s parts, if its list was read.
    pub fn get(&self, t: usize) -> Option<&[(NodeId, f32)]> {
        self.by_term.get(t)?.as_deref()
    }

    /// Term `t`'s parts, or none where its list was not read.
    pub fn list(&self, t: usize) -> &[(NodeId, f32)] {
        self.get(t).unwrap_or_default()
    }

    pub fn is_read(&self, t: usize) -> bool {
        self.get(t).is_some()
    }

    /// Term `t`'s list, read.
    pub fn set(&mut self, t: usize, parts: Parts) {
        if let Some(slot) = self.by_term.get_mut(t) {
            *slot = Some(parts);
        }
    }
}

impl Drop for ReadLists {
    fn drop(&mut self) {
        self.pool.give(self.by_term.drain(..).flatten());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_comes_back_empty_and_is_taken_where_it_fits() {
        let pool = ListPool::default();
        let mut read = ReadLists::new(3, &pool);
        let mut parts = pool.take(100);
        parts.push((7, 0.5));
        read.set(1, parts);
        assert_eq!(read.list(1), &[(7, 0.5)]);
        assert!(read.is_read(1) && !read.is_read(0) && !read.is_read(5));
        drop(read);
        // Too small for 1,000: a new one, the kept one stays.
        let big = pool.take(1000);
        assert!(big.capacity() >= 1000 && big.is_empty());
        let small = pool.take(50);
        assert!(small.is_empty() && (100..1000).contains(&small.capacity()));
        assert_eq!(pool.0.lock().unwrap().len(), 0);
    }

    #[test]
    fn a_pool_keeps_at_most_its_bound() {
        let pool = ListPool::default();
        let mut read = ReadLists::new(KEPT + 10, &pool);
        for t in 0..KEPT + 10 {
            read.set(t, Vec::with_capacity(KEPT_POSTINGS / 8));
        }
        drop(read);
        let kept = pool.0.lock().unwrap();
        let held: usize = kept.iter().map(|b| b.capacity()).sum();
        assert!(held <= KEPT_POSTINGS, "{held}");
        assert!(kept.len() >= 7, "{}", kept.len());
        drop(kept);
        let mut read = ReadLists::new(1, &pool);
        read.set(0, Vec::with_capacity(4 * KEPT_POSTINGS));
        drop(read);
        let kept = pool.0.lock().unwrap();
        assert!(kept.iter().all(|b| b.capacity() <= KEPT_POSTINGS));
    }
}
