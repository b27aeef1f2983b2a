//! The posting lists a search read whole, each as a term's part in each
//! node of it, kept until the caller is done scoring with them.
//!
//! A list is kept a window of node ids at a time (`WINDOW` ids, aligned):
//! for each window it meets, the window's number and where its postings
//! start, then each posting's place in its window (16 bits) and part (32
//! bits). Six bytes a posting where a `(NodeId, f32)` takes sixteen: a
//! Chinese query at a million nodes reads about 300,000 postings, which
//! the search writes once and adds up a window at a time
//! (`LexicalIndex::sum_windows`), and a window's postings of a list are
//! found from its number, with no walk over the list to find where the
//! window ends.
//!
//! The buffers go back to a `ListPool` shared by an index's clones when
//! the lists are dropped, and the next search reads into them: megabytes a
//! query, which the allocator gave back to the system after each search
//! and the kernel then had to clear again for the next (a tenth of such a
//! query's time).

use std::sync::{Arc, Mutex};

use crate::repo::node::NodeId;

/// The log2 of the node ids of a window.
const WINDOW_BITS: u32 = 15;
/// The node ids of a window: the windows of node ids start at multiples
/// of it.
pub const WINDOW: NodeId = 1 << WINDOW_BITS;
/// A node's place in its window.
const PLACE: NodeId = WINDOW - 1;

/// A term's part in each node of its posting list, by ascending node, a
/// window at a time.
#[derive(Debug, Default)]
pub struct Parts {
    /// Each window met, in the order met: its number (its first id over
    /// `WINDOW`) and where its postings start in `places` and `parts`.
    windows: Vec<(NodeId, usize)>,
    /// Each posting's node less its window's first id.
    places: Vec<u16>,
    /// Each posting's part.
    parts: Vec<f32>,
}

/// The postings of one list in one window: a node's place in the window
/// and the term's part in it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Run<'a> {
    pub places: &'a [u16],
    pub parts: &'a [f32],
}

impl Run<'_> {
    pub fn len(&self) -> usize {
        self.places.len()
    }

    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// One past the last place (0 if empty): where the run ends.
    pub fn end(&self) -> usize {
        self.places.last().map_or(0, |&p| usize::from(p) + 1)
    }
}

impl Parts {
    fn with_capacity(len: usize) -> Parts {
        Parts {
            windows: Vec::new(),
            places: Vec::with_capacity(len),
            parts: Vec::with_capacity(len),
        }
    }

    fn capacity(&self) -> usize {
        self.places.capacity().min(self.parts.capacity())
    }

    fn clear(&mut self) {
        self.windows.clear();
        self.places.clear();
        self.parts.clear();
    }

    pub fn len(&self) -> usize {
        self.places.len()
    }

    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// Appends postings of ascending nodes `ids` with their `parts` (as
    /// many; the rest of the longer is left out), after every posting
    /// appended before.
    pub fn extend(&mut self, ids: &[NodeId], parts: &[f32]) {
        let n = ids.len().min(parts.len());
        let (ids, parts) = (&ids[..n], &parts[..n]);
        let (Some(&first), Some(&last)) = (ids.first(), ids.last()) else {
            return;
        };
        let window = first >> WINDOW_BITS;
        if window == last >> WINDOW_BITS && first <= last {
            // All in one window (most blocks): the places in one loop the
            // compiler widens.
            self.enter(window);
            self.places
                .extend(ids.iter().map(|&id| (id & PLACE) as u16));
        } else {
            for &id in ids {
                self.enter(id >> WINDOW_BITS);
                self.places.push((id & PLACE) as u16);
            }
        }
        self.parts.extend_from_slice(parts);
    }

    /// The next posting is in window `window`.
    #[inline]
    fn enter(&mut self, window: NodeId) {
        if self.windows.last().is_none_or(|w| w.0 != window) {
            self.windows.push((window, self.places.len()));
        }
    }

    /// How many windows the list meets.
    pub fn windows(&self) -> usize {
        self.windows.len()
    }

    /// The number of the `i`-th window met (none past the last).
    pub fn window(&self, i: usize) -> Option<NodeId> {
        Some(self.windows.get(i)?.0)
    }

    /// The postings of the `i`-th window met (none past the last).
    pub fn run(&self, i: usize) -> Run<'_> {
        let Some(&(_, start)) = self.windows.get(i) else {
            return Run::default();
        };
        let end = self.windows.get(i + 1).map_or(self.places.len(), |w| w.1);
        Run {
            places: self.places.get(start..end).unwrap_or_default(),
            parts: self.parts.get(start..end).unwrap_or_default(),
        }
    }

    /// Each posting's node and part, in the order appended.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, f32)> + '_ {
        (0..self.windows.len()).flat_map(move |i| {
            let base = self.windows[i].0 << WINDOW_BITS;
            let run = self.run(i);
            run.places
                .iter()
                .zip(run.parts)
                .map(move |(&p, &part)| (base | NodeId::from(p), part))
        })
    }

    /// Node `id`'s part (none if the list does not hold it).
    pub fn find(&self, id: NodeId) -> Option<f32> {
        let window = id >> WINDOW_BITS;
        let i = self.windows.partition_point(|w| w.0 < window);
        if self.windows.get(i)?.0 != window {
            return None;
        }
        let run = self.run(i);
        let at = run.places.binary_search(&((id & PLACE) as u16)).ok()?;
        run.parts.get(at).copied()
    }
}

/// The first id of window number `window`.
pub fn window_base(window: NodeId) -> NodeId {
    window << WINDOW_BITS
}

/// The most buffers a pool keeps (a query has a few dozen terms at most).
const KEPT: usize = 48;
/// The most postings the buffers a pool keeps may hold in all (6 MiB).
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
        found.unwrap_or_else(|| Parts::with_capacity(len))
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
            by_term: std::iter::repeat_with(|| None).take(terms).collect(),
            pool: pool.clone(),
        }
    }

    /// Term `t`'s parts, if its list was read.
    pub fn get(&self, t: usize) -> Option<&Parts> {
        self.by_term.get(t)?.as_ref()
    }

    /// Term `t`'s parts, or none where its list was not read.
    pub fn list(&self, t: usize) -> &Parts {
        static NONE: Parts = Parts {
            windows: Vec::new(),
            places: Vec::new(),
            parts: Vec::new(),
        };
        self.get(t).unwrap_or(&NONE)
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
    fn postings_kept_by_window_give_back_their_nodes_and_parts() {
        // Across windows, in one block and in several, and ids near the
        // largest.
        let ids: Vec<NodeId> = vec![
            0,
            5,
            WINDOW - 1,
            WINDOW,
            3 * WINDOW + 7,
            3 * WINDOW + 8,
            NodeId::MAX - WINDOW,
            NodeId::MAX - 1,
            NodeId::MAX,
        ];
        let parts: Vec<f32> = (0..ids.len()).map(|i| i as f32 / 8.0).collect();
        let mut whole = Parts::default();
        whole.extend(&ids, &parts);
        let mut blocks = Parts::default();
        for (i, p) in ids.chunks(2).zip(parts.chunks(2)) {
            blocks.extend(i, p);
        }
        let expected: Vec<(NodeId, f32)> = ids.iter().copied().zip(parts.iter().copied()).collect();
        for list in [&whole, &blocks] {
            assert_eq!(list.iter().collect::<Vec<_>>(), expected);
            assert_eq!(list.windows(), 5);
            assert_eq!(list.window(2), Some(3));
            assert_eq!(window_base(list.window(2).unwrap()), 3 * WINDOW);
            let run = list.run(2);
            assert_eq!(
                (run.places, run.parts, run.end()),
                (&[7u16, 8][..], &parts[4..6], 9)
            );
            assert!(list.run(5).is_empty() && list.window(5).is_none());
            for &(id, part) in &expected {
                assert_eq!(list.find(id), Some(part), "{id}");
            }
            for id in [1, WINDOW + 1, 2 * WINDOW, 3 * WINDOW + 9, NodeId::MAX - 2] {
                assert_eq!(list.find(id), None, "{id}");
            }
        }
        // More ids than parts: the rest left out.
        let mut short = Parts::default();
        short.extend(&[1, 2, 3], &[0.5]);
        assert_eq!(short.iter().collect::<Vec<_>>(), vec![(1, 0.5)]);
    }

    #[test]
    fn a_buffer_comes_back_empty_and_is_taken_where_it_fits() {
        let pool = ListPool::default();
        let mut read = ReadLists::new(3, &pool);
        let mut parts = pool.take(100);
        parts.extend(&[7], &[0.5]);
        read.set(1, parts);
        assert_eq!(read.list(1).iter().collect::<Vec<_>>(), vec![(7, 0.5)]);
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
            read.set(t, Parts::with_capacity(KEPT_POSTINGS / 8));
        }
        drop(read);
        let kept = pool.0.lock().unwrap();
        let held: usize = kept.iter().map(|b| b.capacity()).sum();
        assert!(held <= KEPT_POSTINGS, "{held}");
        assert!(kept.len() >= 7, "{}", kept.len());
        drop(kept);
        let mut read = ReadLists::new(1, &pool);
        read.set(0, Parts::with_capacity(4 * KEPT_POSTINGS));
        drop(read);
        let kept = pool.0.lock().unwrap();
        assert!(kept.iter().all(|b| b.capacity() <= KEPT_POSTINGS));
    }
}
