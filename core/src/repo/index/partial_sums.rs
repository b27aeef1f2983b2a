//! A value for each node a search meets, for a search that reads posting
//! lists one after another (term at a time): each list is added in place,
//! where merging it into a list of sums sorted by node would copy every
//! sum met so far for each list read.
//!
//! Node ids are given out in order from 256 (`forest`), so a store's ids
//! stay close to the number of its nodes: the values live in an array
//! indexed by id, and the ids met are listed in the order first met (what
//! the search later goes through, and what clearing resets). An id past
//! the array's limit (a store most of whose nodes were deleted, or ids
//! made by hand) is kept in a sorted map instead: slower, never larger
//! than the nodes met.
//!
//! The arrays are as long as the largest id met (4 bytes a node), and
//! filling them is what a search at a million nodes could not afford for
//! each query: `Pool` keeps them between searches, and a search takes
//! them back cleared, which resets only the ids it met.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::repo::node::NodeId;

/// A slot no value was put in since the last clearing (values are never
/// negative).
const UNMET: f32 = -1.0;

/// A value for each node met: summed (`add`) or the largest (`raise`).
#[derive(Debug, Default)]
pub struct NodeSums {
    /// By id, for ids below `limit`; `UNMET` where not met.
    dense: Vec<f32>,
    /// Ids at or past `limit`.
    sparse: BTreeMap<NodeId, f32>,
    /// The ids met, each once, in the order first met: the first `count`
    /// (past them, room to write the next without asking whether it is
    /// new: whether a node was met is a branch no processor predicts).
    met: Vec<NodeId>,
    count: usize,
    /// Ids below this are kept in `dense`.
    limit: u64,
}

impl NodeSums {
    /// The slot of node `id`, made `UNMET` if new.
    #[inline]
    fn slot(&mut self, id: NodeId) -> &mut f32 {
        if id < self.dense.len() as u64 {
            return &mut self.dense[id as usize];
        }
        self.slot_beyond(id)
    }

    #[cold]
    fn slot_beyond(&mut self, id: NodeId) -> &mut f32 {
        if id < self.limit {
            // Doubling, so that a list read in id order grows the array
            // a few times, not once for each id.
            let len = (id as usize + 1)
                .max(self.dense.len().saturating_mul(2))
                .min(self.limit as usize);
            self.dense.resize(len, UNMET);
            return &mut self.dense[id as usize];
        }
        self.sparse.entry(id).or_insert(UNMET)
    }

    /// Adds `v` (not negative) to node `id`'s value; the value now.
    pub fn add(&mut self, id: NodeId, v: f32) -> f32 {
        self.each(std::iter::once((id, v)), sum)
    }

    /// `add` of `w` times each part of `list`; the largest value it
    /// leaves.
    pub fn add_list(&mut self, list: impl Iterator<Item = (NodeId, f32)>, w: f32) -> f32 {
        self.each(list.map(|(id, part)| (id, w * part)), sum)
    }

    /// `raise` to `w` times each part of `list`.
    pub fn raise_list(&mut self, list: impl Iterator<Item = (NodeId, f32)>, w: f32) {
        self.each(list.map(|(id, part)| (id, w * part)), larger);
    }

    /// `add` of `w` times each value of `from`, which is cleared; the
    /// largest value it leaves.
    pub fn add_drained(&mut self, from: &mut NodeSums, w: f32) -> f32 {
        let most = self.each(from.values().map(|(id, v)| (id, w * v)), sum);
        from.clear();
        most
    }

    /// `raise` to `w` times each value of `from`, which is cleared.
    pub fn raise_drained(&mut self, from: &mut NodeSums, w: f32) {
        self.each(from.values().map(|(id, v)| (id, w * v)), larger);
        from.clear();
    }

    /// Each (node, v) of `items` combined into its value by `combine(old,
    /// v)` (`old` `UNMET` for a node not met); the largest value it
    /// leaves. One loop for many, so that the count of nodes met stays in
    /// a register instead of going through memory for each.
    #[inline(always)]
    fn each(
        &mut self,
        items: impl Iterator<Item = (NodeId, f32)>,
        combine: impl Fn(f32, f32) -> f32,
    ) -> f32 {
        let mut most = 0.0f32;
        let mut count = self.count;
        for (id, v) in items {
            let s = self.slot(id);
            let old = *s;
            let now = combine(old, v);
            *s = now;
            if count == self.met.len() {
                self.met.push(0);
            }
            self.met[count] = id;
            count += usize::from(old < 0.0);
            most = larger(most, now);
        }
        self.count = count;
        most
    }

    /// How many nodes were met.
    pub fn count_met(&self) -> usize {
        self.count
    }

    /// The ids met, in the order first met.
    fn met(&self) -> &[NodeId] {
        &self.met[..self.count]
    }

    /// Node `id`'s value, 0 if it was not met.
    fn value(&self, id: NodeId) -> f32 {
        // Compared as ids, not as indexes: an id past 32 bits is no index
        // of a 32-bit target.
        let v = if id < self.dense.len() as u64 {
            self.dense[id as usize]
        } else {
            self.sparse.get(&id).copied().unwrap_or(UNMET)
        };
        v.max(0.0)
    }

    /// Every (node, value) met, in the order first met.
    pub fn values(&self) -> impl Iterator<Item = (NodeId, f32)> + Clone + '_ {
        self.met().iter().map(|&id| (id, self.value(id)))
    }

    /// `values`, collected.
    pub fn pairs(&self) -> Vec<(NodeId, f32)> {
        self.values().collect()
    }

    /// Forgets every value (resetting only the slots met).
    pub fn clear(&mut self) {
        for &id in &self.met[..self.count] {
            if id < self.dense.len() as u64 {
                self.dense[id as usize] = UNMET;
            }
        }
        self.count = 0;
        self.sparse.clear();
    }
}

/// A value plus `v`, 0 taken for `UNMET` (below every value).
#[inline(always)]
fn sum(old: f32, v: f32) -> f32 {
    larger(old, 0.0) + v
}

/// The larger of two values that are never NaN, in one instruction
/// (`f32::max` also orders NaN).
#[inline(always)]
pub(super) fn larger(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// Cleared `NodeSums` kept between searches, shared by the clones of an
/// index.
#[derive(Clone, Debug, Default)]
pub struct Pool(Arc<Mutex<Vec<NodeSums>>>);

/// The most cleared `NodeSums` a pool keeps (a search takes three).
const KEPT: usize = 6;

impl Pool {
    /// A cleared `NodeSums` keeping ids below `limit` in its array.
    pub fn take(&self, limit: u64) -> NodeSums {
        let kept = self.0.lock().ok().and_then(|mut kept| kept.pop());
        let mut sums = kept.unwrap_or_default();
        // An index of a 32-bit target.
        sums.limit = limit.min(u32::MAX.into());
        if sums.dense.len() as u64 > limit {
            sums.dense.truncate(limit as usize);
        }
        sums
    }

    /// What a search adds into: its sums, and two for a group's parts
    /// (the best alternative, an alternative's sum), all `take(limit)`.
    pub fn take_search(&self, limit: u64) -> (NodeSums, [NodeSums; 2]) {
        (self.take(limit), [self.take(limit), self.take(limit)])
    }

    /// Keeps `sums`, cleared, for the next search.
    pub fn give(&self, sums: impl IntoIterator<Item = NodeSums>) {
        for mut sums in sums {
            sums.clear();
            if let Ok(mut kept) = self.0.lock() {
                if kept.len() < KEPT {
                    kept.push(sums);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_maxima_by_node_in_the_order_met() {
        let pool = Pool::default();
        let mut s = pool.take(100);
        s.add(7, 0.5);
        s.add(3, 0.25);
        assert_eq!(s.add(7, 0.25), 0.75);
        s.add(9, 0.0);
        assert_eq!(s.pairs(), vec![(7, 0.75), (3, 0.25), (9, 0.0)]);
        let mut m = pool.take(100);
        m.raise_list([(5, 1.0), (7, 0.0)].into_iter(), 0.5);
        m.raise_list([(2, 0.0), (5, 0.5)].into_iter(), 0.5);
        m.raise_list([(2, 0.25)].into_iter(), 0.5);
        assert_eq!(m.pairs(), vec![(5, 0.5), (7, 0.0), (2, 0.125)]);
        // Drained into another: summed with what it holds, times 2.
        let mut t = pool.take(100);
        t.add_list([(2, 1.0), (3, 1.0)].into_iter(), 1.0);
        assert_eq!(t.add_drained(&mut m, 2.0), 1.25);
        assert_eq!(t.pairs(), vec![(2, 1.25), (3, 1.0), (5, 1.0), (7, 0.0)]);
        assert_eq!(m.count_met(), 0);
        assert_eq!(m.pairs(), vec![]);
        t.clear();
        assert_eq!(t.count_met(), 0);
        assert_eq!(t.pairs(), vec![]);
    }

    #[test]
    fn ids_past_the_limit_are_kept_apart_and_cleared_too() {
        let pool = Pool::default();
        let mut s = pool.take(10);
        s.add(3, 1.0);
        s.add(u64::MAX, 2.0);
        s.add(10, 3.0);
        s.add(u64::MAX, 0.5);
        assert_eq!(s.pairs(), vec![(3, 1.0), (u64::MAX, 2.5), (10, 3.0)]);
        assert!(s.dense.len() <= 10, "the array stops at the limit");
        pool.give([s]);
        // Taken again, with a lower limit: nothing of the last search.
        let mut s = pool.take(5);
        assert_eq!(s.count_met(), 0);
        s.add(3, 0.5);
        s.add(7, 0.5);
        assert_eq!(s.pairs(), vec![(3, 0.5), (7, 0.5)]);
        assert!(s.dense.len() <= 5);
    }

    #[test]
    fn a_pool_gives_back_what_it_kept_cleared() {
        let pool = Pool::default();
        let mut s = pool.take(1 << 20);
        for id in (0..100_000).step_by(7) {
            s.add(id, 1.0);
        }
        let len = s.dense.len();
        pool.give([s]);
        let s = pool.take(1 << 20);
        assert_eq!(s.dense.len(), len, "the same array, kept");
        assert!(s.dense.iter().all(|&v| v == UNMET));
        assert_eq!(s.count_met(), 0);
    }
}
