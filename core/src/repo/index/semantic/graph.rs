//! The HNSW graph of the semantic index (see the parent module).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::Arc;

use super::code::{quantise, Code, CodeRef};
use super::SemanticConfig;
use crate::repo::index::vector::StoredVector;
use crate::repo::node::NodeId;

/// A candidate: distance to the query and member number. Ordered by
/// distance, then number, so every choice is deterministic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Near(pub(super) f32, pub(super) u32);

impl Eq for Near {}

impl PartialOrd for Near {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Near {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// Members seen by one search: one bit each, and the words touched, so
/// that clearing costs what the search visited.
struct Visited {
    bits: Vec<u64>,
    touched: Vec<usize>,
}

impl Visited {
    fn new(members: usize) -> Visited {
        Visited {
            bits: vec![0; members.div_ceil(64)],
            touched: Vec::new(),
        }
    }

    /// Marks `slot`; whether it was unmarked.
    fn insert(&mut self, slot: u32) -> bool {
        let w = (slot / 64) as usize;
        let bit = 1u64 << (slot % 64);
        if w >= self.bits.len() {
            self.bits.resize(w + 1, 0);
        }
        let old = self.bits[w];
        if old & bit != 0 {
            return false;
        }
        if old == 0 {
            self.touched.push(w);
        }
        self.bits[w] = old | bit;
        true
    }

    fn clear(&mut self) {
        for &w in &self.touched {
            self.bits[w] = 0;
        }
        self.touched.clear();
    }
}

/// Layers above this one would need about `links^16` members.
const MAX_LEVEL: usize = 16;

/// An HNSW graph over the codes of its members (Malkov & Yashunin, 2016),
/// which takes inserts; removal only marks a member dead.
///
/// Members are numbered in insertion order (their *slot*). Per slot: the
/// code (`dim` bytes) and its scale, the base-layer neighbour list (a count,
/// then up to `2 × links` slots), and for the few members on upper layers
/// an index into `uppers`, which holds `links + 1` words per layer above
/// the base.
pub(super) struct Graph {
    dim: usize,
    pub(super) links: usize,
    ef_construction: usize,
    heuristic: bool,
    /// 1 / ln(links): a member is on layer ≥ l with probability links^-l.
    level_mult: f64,
    rng: u64,
    codes: Vec<i8>,
    scales: Vec<f32>,
    pub(super) base: Vec<u32>,
    pub(super) upper_at: Vec<u32>,
    pub(super) uppers: Vec<Vec<u32>>,
    ids: Vec<NodeId>,
    vecs: Vec<Arc<StoredVector>>,
    /// A member's dense vector while it is being coded (reused).
    scratch: Vec<f32>,
    pub(super) is_dead: Vec<bool>,
    pub(super) dead: usize,
    /// The entry point (a member of the top layer) and the top layer.
    pub(super) entry: Option<(u32, usize)>,
    /// Reused by inserts.
    visited: Visited,
    /// Members whose lists or state changed since `take_touched`: what a
    /// stored copy of the graph must write again.
    touched: Vec<u32>,
    /// Members added or killed since `take_recoded`: whose code groups a
    /// stored copy must write again.
    recoded: Vec<u32>,
}

/// One member as a stored graph keeps it: its node, whether it is dead,
/// and its neighbour lists, base layer first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct MemberRecord {
    pub(super) id: NodeId,
    pub(super) dead: bool,
    pub(super) lists: Vec<Vec<u32>>,
}

/// `upper_at` of a member on the base layer only.
pub(super) const BASE_ONLY: u32 = u32::MAX;

impl Graph {
    pub(super) fn new(dim: usize, config: &SemanticConfig) -> Graph {
        let links = config.links.max(2);
        Graph {
            dim,
            links,
            ef_construction: config.ef_construction.max(1),
            heuristic: config.heuristic,
            level_mult: 1.0 / crate::float_math::ln(links as f64),
            rng: config.seed,
            codes: Vec::new(),
            scales: Vec::new(),
            base: Vec::new(),
            upper_at: Vec::new(),
            uppers: Vec::new(),
            ids: Vec::new(),
            vecs: Vec::new(),
            scratch: Vec::new(),
            is_dead: Vec::new(),
            dead: 0,
            entry: None,
            visited: Visited::new(0),
            touched: Vec::new(),
            recoded: Vec::new(),
        }
    }

    /// A graph made again from its stored members (slot order) with the
    /// vector of each, its entry point and its generator's state. Checks
    /// every list against its capacity and every neighbour and the entry
    /// point against the members, so a damaged record is an error, never a
    /// search that reads out of bounds.
    pub(super) fn from_members(
        dim: usize,
        config: &SemanticConfig,
        members: Vec<(MemberRecord, Arc<StoredVector>)>,
        entry: Option<(u32, usize)>,
        rng: u64,
    ) -> Result<Graph, String> {
        let mut g = Graph::new(dim, config);
        g.rng = rng;
        let n = members.len();
        let stride = 2 * g.links + 1;
        g.base = vec![0; n * stride];
        for (slot, (m, vec)) in members.into_iter().enumerate() {
            let Some((base, uppers)) = m.lists.split_first() else {
                return Err(format!("member {slot} has no base-layer list"));
            };
            if uppers.len() > MAX_LEVEL {
                return Err(format!("member {slot} is on {} layers", uppers.len() + 1));
            }
            if vec.dim() != dim {
                return Err(format!(
                    "member {slot} has a vector of {} components, expected {dim}",
                    vec.dim()
                ));
            }
            for (layer, list) in m.lists.iter().enumerate() {
                let cap = if layer == 0 { 2 * g.links } else { g.links };
                if list.len() > cap {
                    return Err(format!(
                        "member {slot} has {} neighbours on layer {layer}, at most {cap}",
                        list.len()
                    ));
                }
                if let Some(bad) = list.iter().find(|&&s| s as usize >= n) {
                    return Err(format!(
                        "member {slot} links to member {bad} of {n} on layer {layer}"
                    ));
                }
            }
            let start = g.codes.len();
            g.codes.resize(start + dim, 0);
            g.scratch.resize(dim, 0.0);
            vec.write_dense(&mut g.scratch);
            g.scales.push(quantise(&g.scratch, &mut g.codes[start..]));
            let at = slot * stride;
            g.base[at] = base.len() as u32;
            g.base[at + 1..at + 1 + base.len()].copy_from_slice(base);
            if uppers.is_empty() {
                g.upper_at.push(BASE_ONLY);
            } else {
                g.upper_at.push(g.uppers.len() as u32);
                let mut words = vec![0; uppers.len() * (g.links + 1)];
                for (l, list) in uppers.iter().enumerate() {
                    let at = l * (g.links + 1);
                    words[at] = list.len() as u32;
                    words[at + 1..at + 1 + list.len()].copy_from_slice(list);
                }
                g.uppers.push(words);
            }
            g.ids.push(m.id);
            g.vecs.push(vec);
            g.is_dead.push(m.dead);
            g.dead += usize::from(m.dead);
        }
        if let Some((slot, top)) = entry {
            if slot as usize >= n || g.level(slot) != top {
                return Err(format!(
                    "the entry point {slot} (layer {top}) is not a top member of {n}"
                ));
            }
        } else if n > 0 {
            return Err(format!("{n} members but no entry point"));
        }
        g.entry = entry;
        Ok(g)
    }

    /// The layers above the base that `slot` is on.
    fn level(&self, slot: u32) -> usize {
        match self.upper_at.get(slot as usize) {
            Some(&u) if u != BASE_ONLY => self
                .uppers
                .get(u as usize)
                .map_or(0, |l| l.len() / (self.links + 1)),
            _ => 0,
        }
    }

    /// `slot` as a stored graph keeps it.
    pub(super) fn record(&self, slot: u32) -> Option<MemberRecord> {
        let i = slot as usize;
        let id = *self.ids.get(i)?;
        let lists = (0..=self.level(slot))
            .map(|layer| self.neighbours(slot, layer).to_vec())
            .collect();
        Some(MemberRecord {
            id,
            dead: self.is_dead[i],
            lists,
        })
    }

    /// Any member's vector, dead or alive.
    pub(super) fn vector(&self, slot: u32) -> Option<&StoredVector> {
        self.vecs.get(slot as usize).map(|v| &**v)
    }

    /// The members changed since the last call, each once, ascending.
    pub(super) fn take_touched(&mut self) -> Vec<u32> {
        let mut t = std::mem::take(&mut self.touched);
        t.sort_unstable();
        t.dedup();
        t
    }

    /// The members added or killed since the last call, each once,
    /// ascending.
    pub(super) fn take_recoded(&mut self) -> Vec<u32> {
        let mut t = std::mem::take(&mut self.recoded);
        t.sort_unstable();
        t.dedup();
        t
    }

    /// Node of any member, dead or alive.
    pub(super) fn id(&self, slot: u32) -> Option<NodeId> {
        self.ids.get(slot as usize).copied()
    }

    /// The generator's state (stored so that inserts after a reload draw
    /// what they would have drawn).
    pub(super) fn rng(&self) -> u64 {
        self.rng
    }

    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    pub(super) fn live(&self) -> usize {
        self.len() - self.dead
    }

    /// A live member's id and vector.
    pub(super) fn member(&self, slot: u32) -> Option<(NodeId, &StoredVector)> {
        let i = slot as usize;
        if *self.is_dead.get(i)? {
            return None;
        }
        Some((*self.ids.get(i)?, &**self.vecs.get(i)?))
    }

    pub(super) fn kill(&mut self, slot: u32) {
        if let Some(d) = self.is_dead.get_mut(slot as usize) {
            if !*d {
                *d = true;
                self.dead += 1;
                self.touched.push(slot);
                self.recoded.push(slot);
            }
        }
    }

    pub(super) fn code(&self, slot: u32) -> CodeRef<'_> {
        let i = slot as usize;
        CodeRef {
            code: self
                .codes
                .get(i * self.dim..(i + 1) * self.dim)
                .unwrap_or(&[]),
            scale: self.scales.get(i).copied().unwrap_or(0.0),
        }
    }

    fn distance(&self, q: CodeRef<'_>, slot: u32) -> f32 {
        q.distance(self.code(slot))
    }

    /// Where `slot`'s list on `layer` lives: (offset of its count in `base`
    /// or in its `uppers` entry, capacity).
    pub(super) fn list_at(&self, slot: u32, layer: usize) -> Option<(usize, usize)> {
        let i = slot as usize;
        if layer == 0 {
            let stride = 2 * self.links + 1;
            return (i < self.ids.len()).then_some((i * stride, 2 * self.links));
        }
        let u = *self.upper_at.get(i)?;
        let list = self.uppers.get(u as usize)?;
        let at = (layer - 1) * (self.links + 1);
        (at + self.links < list.len()).then_some((at, self.links))
    }

    pub(super) fn neighbours(&self, slot: u32, layer: usize) -> &[u32] {
        let Some((at, cap)) = self.list_at(slot, layer) else {
            return &[];
        };
        let buf = if layer == 0 {
            &self.base[..]
        } else {
            &self.uppers[self.upper_at[slot as usize] as usize][..]
        };
        let n = (buf[at] as usize).min(cap);
        &buf[at + 1..at + 1 + n]
    }

    fn set_neighbours(&mut self, slot: u32, layer: usize, list: &[Near]) {
        let Some((at, cap)) = self.list_at(slot, layer) else {
            return;
        };
        let buf = if layer == 0 {
            &mut self.base[..]
        } else {
            &mut self.uppers[self.upper_at[slot as usize] as usize][..]
        };
        let n = list.len().min(cap);
        buf[at] = n as u32;
        for (dst, c) in buf[at + 1..at + 1 + n].iter_mut().zip(list) {
            *dst = c.1;
        }
        self.touched.push(slot);
    }

    /// A layer drawn from the seeded generator (splitmix64).
    fn random_level(&mut self) -> usize {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        // Uniform in (0, 1].
        let u = ((z >> 11) + 1) as f64 / (1u64 << 53) as f64;
        ((-crate::float_math::ln(u) * self.level_mult) as usize).min(MAX_LEVEL)
    }

    /// Adds a member; its slot, or `None` if the graph is full.
    pub(super) fn insert(&mut self, id: NodeId, vec: Arc<StoredVector>) -> Option<u32> {
        let slot = u32::try_from(self.len()).ok().filter(|&s| s < u32::MAX)?;
        let start = self.codes.len();
        self.codes.resize(start + self.dim, 0);
        self.scratch.resize(self.dim, 0.0);
        vec.write_dense(&mut self.scratch);
        let scale = quantise(&self.scratch, &mut self.codes[start..]);
        self.scales.push(scale);
        self.base.resize(self.base.len() + 2 * self.links + 1, 0);
        let level = self.random_level();
        if level > 0 {
            self.upper_at.push(self.uppers.len() as u32);
            self.uppers.push(vec![0; level * (self.links + 1)]);
        } else {
            self.upper_at.push(BASE_ONLY);
        }
        self.ids.push(id);
        self.vecs.push(vec);
        self.is_dead.push(false);
        self.touched.push(slot);
        self.recoded.push(slot);
        let Some((entry, top)) = self.entry else {
            self.entry = Some((slot, level));
            return Some(slot);
        };
        let own = Code {
            code: self.codes[start..].to_vec(),
            scale,
        };
        let q = own.view();
        let mut nearest = Near(self.distance(q, entry), entry);
        for layer in (level + 1..=top).rev() {
            nearest = self.greedy(q, nearest, layer);
        }
        let mut visited = std::mem::replace(&mut self.visited, Visited::new(0));
        let mut starts = vec![nearest];
        for layer in (0..=level.min(top)).rev() {
            let found = self.search_layer(q, &starts, self.ef_construction, layer, &mut visited);
            visited.clear();
            let chosen = self.select(&found, self.links);
            self.set_neighbours(slot, layer, &chosen);
            for &Near(d, n) in &chosen {
                self.link(n, Near(d, slot), layer);
            }
            if !found.is_empty() {
                starts = found;
            }
        }
        self.visited = visited;
        if level > top {
            self.entry = Some((slot, level));
        }
        Some(slot)
    }

    /// Adds `new` to `slot`'s neighbours on `layer`. A full list first
    /// drops its dead members (only a rebuild would remove them otherwise);
    /// if it is still full, `select` prunes it back to its capacity.
    fn link(&mut self, slot: u32, new: Near, layer: usize) {
        let Some((_, cap)) = self.list_at(slot, layer) else {
            return;
        };
        let mut list = self.neighbours(slot, layer).to_vec();
        if list.len() >= cap {
            list.retain(|&n| !self.is_dead.get(n as usize).copied().unwrap_or(true));
        }
        let list: Vec<Near> = if list.len() < cap {
            // Distances are not needed to append.
            let mut l: Vec<Near> = list.iter().map(|&n| Near(0.0, n)).collect();
            l.push(new);
            l
        } else {
            self.touch(&list);
            let own = self.code(slot);
            let mut l: Vec<Near> = list
                .iter()
                .map(|&n| Near(own.distance(self.code(n)), n))
                .collect();
            l.push(new);
            l.sort_unstable();
            self.select(&l, cap)
        };
        self.set_neighbours(slot, layer, &list);
    }

    /// Greedy descent on an upper layer: the nearest member reachable by
    /// always stepping nearer.
    fn greedy(&self, q: CodeRef<'_>, mut nearest: Near, layer: usize) -> Near {
        loop {
            let mut moved = false;
            for &n in self.neighbours(nearest.1, layer) {
                let d = self.distance(q, n);
                if d < nearest.0 {
                    nearest = Near(d, n);
                    moved = true;
                }
            }
            if !moved {
                return nearest;
            }
        }
    }

    /// Neighbours for a member out of `candidates` (nearest first): at most
    /// `m`, nearest first.
    fn select(&self, candidates: &[Near], m: usize) -> Vec<Near> {
        if !self.heuristic || candidates.len() <= m {
            return candidates.iter().take(m).copied().collect();
        }
        let mut out: Vec<Near> = Vec::with_capacity(m);
        for &c in candidates {
            if out.len() >= m {
                break;
            }
            let own = self.code(c.1);
            if out.iter().all(|r| own.distance(self.code(r.1)) >= c.0) {
                out.push(c);
            }
        }
        out
    }

    /// The `ef` live members nearest to `q` on `layer` that a best-first
    /// search from `starts` finds; nearest first. Dead members are passed
    /// through but not returned.
    fn search_layer(
        &self,
        q: CodeRef<'_>,
        starts: &[Near],
        ef: usize,
        layer: usize,
        visited: &mut Visited,
    ) -> Vec<Near> {
        let mut todo: BinaryHeap<Reverse<Near>> = BinaryHeap::new();
        let mut found: BinaryHeap<Near> = BinaryHeap::new();
        for &s in starts {
            if visited.insert(s.1) {
                todo.push(Reverse(s));
                if !self.is_dead.get(s.1 as usize).copied().unwrap_or(true) {
                    found.push(s);
                }
            }
        }
        while found.len() > ef {
            found.pop();
        }
        let mut fresh: Vec<u32> = Vec::with_capacity(2 * self.links);
        while let Some(Reverse(c)) = todo.pop() {
            if found.len() >= ef && found.peek().is_some_and(|w| c.0 > w.0) {
                break;
            }
            fresh.clear();
            fresh.extend(
                self.neighbours(c.1, layer)
                    .iter()
                    .filter(|&&n| visited.insert(n)),
            );
            self.touch(&fresh);
            for &n in &fresh {
                let d = self.distance(q, n);
                if found.len() < ef || found.peek().is_some_and(|w| d < w.0) {
                    todo.push(Reverse(Near(d, n)));
                    if !self.is_dead.get(n as usize).copied().unwrap_or(true) {
                        found.push(Near(d, n));
                        if found.len() > ef {
                            found.pop();
                        }
                    }
                }
            }
        }
        found.into_sorted_vec()
    }

    /// Reads one byte of every cache line of the codes about to be
    /// compared, so that their memory loads overlap instead of following
    /// one another (a portable stand-in for a prefetch).
    fn touch(&self, slots: &[u32]) {
        let mut sum = 0i32;
        for &s in slots {
            let at = s as usize * self.dim;
            if let Some(code) = self.codes.get(at..at + self.dim) {
                for b in code.iter().step_by(64) {
                    sum = sum.wrapping_add(i32::from(*b));
                }
            }
        }
        std::hint::black_box(sum);
    }

    /// The live members nearest to `q`, at most `ef` of them, nearest
    /// first by code distance.
    pub(super) fn search(&self, q: &Code, ef: usize) -> Vec<u32> {
        let Some((entry, top)) = self.entry else {
            return Vec::new();
        };
        let q = q.view();
        let mut nearest = Near(self.distance(q, entry), entry);
        for layer in (1..=top).rev() {
            nearest = self.greedy(q, nearest, layer);
        }
        let mut visited = Visited::new(self.len());
        self.search_layer(q, &[nearest], ef.max(1), 0, &mut visited)
            .into_iter()
            .map(|n| n.1)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visited_clears_what_it_marked() {
        let mut v = Visited::new(100);
        assert!(v.insert(3));
        assert!(!v.insert(3));
        assert!(v.insert(99));
        // Beyond the size it was made for: it grows.
        assert!(v.insert(1000));
        assert!(!v.insert(1000));
        v.clear();
        assert!(v.bits.iter().all(|&w| w == 0));
        assert!(v.insert(3) && v.insert(1000));
    }
}
