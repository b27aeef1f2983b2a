//! The partial sums of one window of node ids, for a search that has read
//! its posting lists whole and adds them up a window at a time
//! (`LexicalIndex::gather_whole`).
//!
//! A window's sums, a group's best alternative and an alternative's sum
//! are arrays indexed by the node's place in the window, so adding a
//! posting is one load and one store in the processor's cache, with no
//! list of the nodes met: a group's values are drained into the sums by
//! walking its lists again (a node met twice drains nothing the second
//! time), and the window's nodes are found by walking the lists again
//! where they hold few postings for the window, or else by a pass over
//! its sums that skips whole runs of slots below what the caller still
//! wants. A
//! `NodeSums` (a value per node of the whole store, the nodes met listed
//! as met) did the same with a store and a branch more per posting.
//!
//! Every slot is `UNMET` between uses: each use resets what it touched.

use std::sync::{Arc, Mutex};

use super::partial_sums::larger;
use super::read_lists::{Run, WINDOW};

const SLOTS: usize = WINDOW as usize;
/// A slot no value was put in (values are never negative).
const UNMET: f32 = -1.0;
/// Slots looked at together by `drain`.
const RUN: usize = 16;
/// `drain` walks the lists rather than the places where the places are
/// more than this many times the postings.
const SPARSE: usize = 8;

/// The sums, a group's best alternative and an alternative's sum, by a
/// node's place in the window (its id less the window's first).
pub struct WindowSums {
    sums: Box<[f32; SLOTS]>,
    best: Box<[f32; SLOTS]>,
    alternative: Box<[f32; SLOTS]>,
}

impl std::fmt::Debug for WindowSums {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WindowSums")
    }
}

fn unmet() -> Box<[f32; SLOTS]> {
    vec![UNMET; SLOTS]
        .into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("a vector of SLOTS slots"))
}

/// The slot of a node's place in the window (masked so that no place can
/// reach past the slots).
#[inline(always)]
fn slot(place: u16) -> usize {
    usize::from(place) & (SLOTS - 1)
}

impl WindowSums {
    fn new() -> WindowSums {
        WindowSums {
            sums: unmet(),
            best: unmet(),
            alternative: unmet(),
        }
    }

    /// Adds `w` times each part of `list` to its node's sum.
    pub fn add(&mut self, list: Run<'_>, w: f32) {
        for (&place, &part) in list.places.iter().zip(list.parts) {
            let s = &mut self.sums[slot(place)];
            *s = larger(*s, 0.0) + w * part;
        }
    }

    /// Raises each node's best alternative to `w` times its part in `list`.
    pub fn raise(&mut self, list: Run<'_>, w: f32) {
        for (&place, &part) in list.places.iter().zip(list.parts) {
            let b = &mut self.best[slot(place)];
            *b = larger(*b, w * part);
        }
    }

    /// Adds `share` times each part of `list` to its node's sum of the
    /// alternative being added up.
    pub fn add_to_alternative(&mut self, list: Run<'_>, share: f32) {
        for (&place, &part) in list.places.iter().zip(list.parts) {
            let a = &mut self.alternative[slot(place)];
            *a = larger(*a, 0.0) + share * part;
        }
    }

    /// Raises the best alternative of each node of `list` to `w` times its
    /// sum of the alternative, which is reset: called with each of the
    /// alternative's lists, once all were added.
    pub fn raise_to_alternative(&mut self, list: Run<'_>, w: f32) {
        for &place in list.places {
            let i = slot(place);
            let a = self.alternative[i];
            let v = if a >= 0.0 { w * a } else { UNMET };
            self.best[i] = larger(self.best[i], v);
            self.alternative[i] = UNMET;
        }
    }

    /// Adds the best alternative of each node of `list` to its sum, and
    /// resets it: called with each list of the group, once all were
    /// raised (a node met again adds nothing).
    pub fn add_best(&mut self, list: Run<'_>) {
        for &place in list.places {
            let i = slot(place);
            let b = self.best[i];
            self.sums[i] = larger(self.sums[i], 0.0) + larger(b, 0.0);
            self.best[i] = UNMET;
        }
    }

    /// Calls `f` with the place and sum of each node met, and resets them:
    /// the nodes of `lists` (every list added to the window), the first
    /// `end` places holding them all. A sum below `wanted` need not be
    /// given to `f`, which returns what is wanted from then on.
    ///
    /// Where the lists hold few nodes for the places, they are walked
    /// (each node given once, in no order); where they hold many, the
    /// places are (in order, whole runs below `wanted` passed over).
    pub fn drain<'l>(
        &mut self,
        lists: impl Iterator<Item = Run<'l>> + Clone,
        end: usize,
        wanted: f32,
        f: impl FnMut(usize, f32) -> f32,
    ) {
        let postings: usize = lists.clone().map(|l| l.len()).sum();
        if postings.saturating_mul(SPARSE) < end {
            self.drain_lists(lists, wanted, f);
        } else {
            self.drain_places(end, wanted, f);
        }
    }

    fn drain_lists<'l>(
        &mut self,
        lists: impl Iterator<Item = Run<'l>>,
        mut wanted: f32,
        mut f: impl FnMut(usize, f32) -> f32,
    ) {
        for list in lists {
            for &place in list.places {
                let i = slot(place);
                let v = self.sums[i];
                if v >= 0.0 {
                    self.sums[i] = UNMET;
                    if v >= wanted {
                        wanted = f(i, v);
                    }
                }
            }
        }
    }

    fn drain_places(&mut self, end: usize, mut wanted: f32, mut f: impl FnMut(usize, f32) -> f32) {
        // Whole runs: the last one may reach past `end`, into places no
        // list reached, which are unmet.
        let end = end.next_multiple_of(RUN).min(SLOTS);
        let (runs, _) = self.sums[..end].as_chunks_mut::<RUN>();
        for (r, run) in runs.iter_mut().enumerate() {
            // As integers, the bits of sums (never negative) order as the
            // sums do, and `UNMET`'s below them all: a maximum that the
            // compiler takes many lanes at a time (a float maximum must
            // keep its order of operations), over a run of a length it
            // knows (`max()` over a slice left a scalar loop for most of
            // each run).
            let most = run.iter().fold(i32::MIN, |m, v| m.max(v.to_bits() as i32));
            if most < 0 {
                continue;
            }
            let most = f32::from_bits(most as u32);
            if most >= wanted {
                for (i, &v) in run.iter().enumerate() {
                    if v >= 0.0 {
                        wanted = f(r * RUN + i, v);
                    }
                }
            }
            run.fill(UNMET);
        }
    }
}

/// Window sums kept between searches (each is 384 KiB, and filling a new
/// one is most of a small query's time), shared by an index's clones.
#[derive(Clone, Debug, Default)]
pub struct WindowPool(Arc<Mutex<Vec<WindowSums>>>);

/// The most a pool keeps (one per search running at once).
const KEPT: usize = 2;

impl WindowPool {
    /// Window sums with every slot unmet.
    pub fn take(&self) -> WindowSums {
        let kept = self.0.lock().ok().and_then(|mut kept| kept.pop());
        kept.unwrap_or_else(WindowSums::new)
    }

    /// Keeps `w` for the next search; every slot must be unmet again
    /// (each use resets what it touched).
    pub fn give(&self, w: WindowSums) {
        debug_assert!(
            [&w.sums, &w.best, &w.alternative]
                .iter()
                .all(|a| a.iter().all(|&v| v == UNMET)),
            "window sums given back with slots set"
        );
        if let Ok(mut kept) = self.0.lock() {
            if kept.len() < KEPT {
                kept.push(w);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list's postings in a window, as places and parts.
    struct Owned(Vec<u16>, Vec<f32>);

    impl Owned {
        fn of(postings: &[(u16, f32)]) -> Owned {
            Owned(
                postings.iter().map(|p| p.0).collect(),
                postings.iter().map(|p| p.1).collect(),
            )
        }

        fn run(&self) -> Run<'_> {
            Run {
                places: &self.0,
                parts: &self.1,
            }
        }
    }

    /// Every node met in the first `end` places, by walking the places.
    fn drained(w: &mut WindowSums, end: usize) -> Vec<(usize, f32)> {
        let mut out = Vec::new();
        w.drain_places(end, f32::NEG_INFINITY, |i, v| {
            out.push((i, v));
            f32::NEG_INFINITY
        });
        out
    }

    #[test]
    fn sums_best_alternatives_and_alternatives_sums_by_place() {
        let pool = WindowPool::default();
        let mut w = pool.take();
        w.add(Owned::of(&[(0, 0.5), (3, 0.25)]).run(), 2.0);
        // A group of two alternatives: one of one term, one of two terms.
        let one = Owned::of(&[(1, 0.5), (3, 1.0)]);
        let two_a = Owned::of(&[(1, 1.0), (2, 0.5)]);
        let two_b = Owned::of(&[(1, 1.0)]);
        w.raise(one.run(), 0.5);
        w.add_to_alternative(two_a.run(), 0.25);
        w.add_to_alternative(two_b.run(), 0.75);
        w.raise_to_alternative(two_a.run(), 0.5);
        w.raise_to_alternative(two_b.run(), 0.5);
        for list in [&one, &two_a, &two_b] {
            w.add_best(list.run());
        }
        // 1001: best of 0.25 and 0.5 · (0.25 + 0.75); 1002: 0.5 · 0.125;
        // 1003: 0.5 plus 0.5.
        assert_eq!(
            drained(&mut w, 4),
            vec![(0, 1.0), (1, 0.5), (2, 0.0625), (3, 1.0)]
        );
        assert!(drained(&mut w, SLOTS).is_empty(), "drained means reset");
        pool.give(w);
    }

    #[test]
    fn a_node_met_with_nothing_to_add_is_still_met() {
        let mut w = WindowSums::new();
        w.add(Owned::of(&[(7, 0.5)]).run(), 0.0);
        let nine = Owned::of(&[(9, 0.5)]);
        w.raise(nine.run(), 0.0);
        w.add_best(nine.run());
        assert_eq!(drained(&mut w, SLOTS), vec![(7, 0.0), (9, 0.0)]);
    }

    #[test]
    fn drain_leaves_out_runs_below_what_is_wanted_and_resets_them() {
        let mut w = WindowSums::new();
        let list: Vec<(u16, f32)> = (0..100).map(|i| (i * 3, 0.5)).collect();
        let (list, more) = (
            Owned::of(&list),
            Owned::of(&[(5, 1.0), (150, 1.0), (299, 2.0)]),
        );
        w.add(list.run(), 1.0);
        w.add(more.run(), 1.0);
        let mut out = Vec::new();
        // Wanted: at least the largest given so far.
        let mut bar = f32::NEG_INFINITY;
        // As many postings as places: the places are walked.
        w.drain([list.run(), more.run()].into_iter(), 300, bar, |i, v| {
            out.push(i);
            bar = bar.max(v);
            bar
        });
        // The first run (0..16) gives every node met; then only the runs
        // holding 1.0 or more (144..160, 288..304), each all it met.
        let runs = [0..16, 144..160, 288..304];
        let expected: Vec<usize> = runs
            .into_iter()
            .flatten()
            .filter(|&i| (i % 3 == 0 && i < 300) || i == 5 || i == 299)
            .collect();
        assert_eq!(out, expected);
        assert!(drained(&mut w, SLOTS).is_empty());
        // Few nodes for the places: the lists are walked, each node given
        // once, the largest first met here, then those not below it.
        let a = Owned::of(&[(40, 1.0), (41, 0.5)]);
        let b = Owned::of(&[(40, 1.0), (50, 2.0), (60, 1.0)]);
        w.add(a.run(), 1.0);
        w.add(b.run(), 1.0);
        let mut out = Vec::new();
        let mut bar = f32::NEG_INFINITY;
        w.drain([a.run(), b.run()].into_iter(), SLOTS, bar, |i, v| {
            out.push((i, v));
            bar = bar.max(v);
            bar
        });
        assert_eq!(out, vec![(40, 2.0), (50, 2.0)]);
        assert!(drained(&mut w, SLOTS).is_empty());
        WindowPool::default().give(w);
    }
}
