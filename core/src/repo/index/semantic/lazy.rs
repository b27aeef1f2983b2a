//! Searching a stored semantic index without loading it.
//!
//! Loading reads every entry and member of the map (1.7 s at 100,000
//! nodes); a search visits a few thousand members. So a search of an index
//! that is stored and ready (it has a graph and no graph work is due)
//! walks the stored map instead. In format 4, the distance to each member
//! it meets is measured from the member's code group (`[4] group`: about
//! 120 members' nodes, dead flags and 8-bit codes to a blob), and a
//! member's record (`[2] slot`, its neighbour lists) is read only when the
//! walk expands it; in formats 2 and 3 each member it meets is read from
//! its record, which holds its code (format 3) or whose code is made from
//! its node's entry (format 2). What is read is checked and kept for later
//! searches of the same process. The entries (`[1] id`, the exact vectors
//! and types) are read only for the members the walk returns, to score
//! them; the pending set is read from its markers (`[3] id`). The walk is the loaded graph's own search
//! (`Graph::search`: the same greedy descent, the same best-first search
//! with the same ties over the same codes), so it finds the same members.
//! What it reads is checked as loading checks it (a list within its
//! capacity, neighbours among the members, a code of the index's
//! dimension, a group of the size the header gives that agrees with the
//! records of its members, an entry that points back at its member);
//! anything wrong is
//! an error, and the caller loads the index, which notes the damage and
//! builds it again.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::rc::Rc;
use std::sync::Arc;

use super::code::{Code, CodeRef};
use super::graph::Near;
use super::stored::{self, CodeGroup, GraphHeader};
use crate::repo::cas::sorted::SortedMap;
use crate::repo::index::vector::StoredVector;
use crate::repo::node::NodeId;

/// A graph member as read from the map.
pub(super) struct Member {
    pub(super) id: NodeId,
    pub(super) dead: bool,
    lists: Vec<Vec<u32>>,
    /// Formats 2 and 3 (format 4 keeps it in the member's group).
    code: Option<Code>,
}

/// A node's entry as read from the map.
pub(super) struct EntryView {
    pub(super) slot: Option<u32>,
    pub(super) vec: Arc<StoredVector>,
    pub(super) kind: Option<Arc<str>>,
}

/// What searches of one stored map have read, kept until the map changes.
#[derive(Default)]
pub(super) struct Cache {
    /// By slot (sized to the graph on first use).
    members: Vec<Option<Rc<Member>>>,
    /// How many of `members` are read.
    pub(super) read: usize,
    /// Code groups by number (format 4; sized on first use).
    groups: Vec<Option<Rc<CodeGroup>>>,
    entries: BTreeMap<NodeId, Option<Rc<EntryView>>>,
    pending: Option<Rc<Vec<NodeId>>>,
}

#[cfg(test)]
impl Cache {
    /// How many code groups are read.
    pub(super) fn groups_read(&self) -> usize {
        self.groups.iter().filter(|g| g.is_some()).count()
    }
}

/// A stored map seen as a graph.
pub(super) struct View<'a> {
    pub(super) map: &'a SortedMap,
    pub(super) dim: usize,
    pub(super) links: usize,
    pub(super) graph: &'a GraphHeader,
    /// Members to a code group; 0 for the formats without groups.
    pub(super) group: u32,
    pub(super) cache: &'a RefCell<Cache>,
}

type R<T> = Result<T, String>;

fn disagree(slot: u32, id: NodeId) -> String {
    format!("graph member {slot} (node {id}) and its entry disagree")
}

impl View<'_> {
    /// Node `id`'s entry, `None` if it has none.
    pub(super) fn entry(&self, id: NodeId) -> R<Option<Rc<EntryView>>> {
        if let Some(e) = self.cache.borrow().entries.get(&id) {
            return Ok(e.clone());
        }
        let e = match self
            .map
            .get(&stored::entry_key(id))
            .map_err(|e| e.to_string())?
        {
            None => None,
            Some(bytes) => {
                let e = stored::decode_entry(bytes, self.dim)?;
                Some(Rc::new(EntryView {
                    slot: e.slot,
                    vec: e.vec,
                    kind: e.kind.map(Arc::from),
                }))
            }
        };
        self.cache.borrow_mut().entries.insert(id, e.clone());
        Ok(e)
    }

    /// The nodes out of the graph, by id.
    pub(super) fn pending(&self) -> R<Rc<Vec<NodeId>>> {
        if let Some(p) = &self.cache.borrow().pending {
            return Ok(p.clone());
        }
        let mut ids = Vec::new();
        for item in self.map.range_from(&[stored::PENDING_TAG]) {
            let (k, v) = item.map_err(|e| e.to_string())?;
            match stored::parse_key(k)? {
                stored::Key::Pending(id) if v.is_empty() => ids.push(id),
                stored::Key::Pending(id) => {
                    return Err(format!("the pending marker of node {id} holds a value"))
                }
                // Format 4: the code groups follow.
                stored::Key::Group(_) if self.group > 0 => break,
                _ => return Err(format!("a key {k:02x?} after the pending markers")),
            }
        }
        let ids = Rc::new(ids);
        self.cache.borrow_mut().pending = Some(ids.clone());
        Ok(ids)
    }

    /// Member `slot`, read and checked on first use.
    pub(super) fn member(&self, slot: u32) -> R<Rc<Member>> {
        if let Some(Some(m)) = self.cache.borrow().members.get(slot as usize) {
            return Ok(m.clone());
        }
        if slot >= self.graph.members {
            return Err(format!(
                "member {slot} is beyond the graph's {} members",
                self.graph.members
            ));
        }
        let Some(bytes) = self
            .map
            .get(&stored::member_key(slot))
            .map_err(|e| e.to_string())?
        else {
            return Err(format!("graph member {slot} is not stored"));
        };
        let (record, own, code) = stored::decode_member(bytes, self.dim)?;
        if record.lists.is_empty() || record.lists.len() > 17 {
            return Err(format!("member {slot} is on {} layers", record.lists.len()));
        }
        for (layer, list) in record.lists.iter().enumerate() {
            let cap = if layer == 0 {
                2 * self.links
            } else {
                self.links
            };
            if list.len() > cap {
                return Err(format!(
                    "member {slot} has {} neighbours on layer {layer}, at most {cap}",
                    list.len()
                ));
            }
            if let Some(bad) = list.iter().find(|&&s| s >= self.graph.members) {
                return Err(format!(
                    "member {slot} links to member {bad} of {} on layer {layer}",
                    self.graph.members
                ));
            }
        }
        if record.dead != own.is_some() {
            return Err(format!(
                "graph member {slot} (node {}) is dead without its vector, or alive with one",
                record.id
            ));
        }
        let code = if self.group > 0 {
            // Format 4: the code is in the group, which must agree.
            let (id, dead) = self.node(slot)?;
            if (id, dead) != (record.id, record.dead) {
                return Err(format!(
                    "graph member {slot} is node {} ({}) in its record, node {id} ({}) in its group",
                    record.id,
                    if record.dead { "dead" } else { "alive" },
                    if dead { "dead" } else { "alive" },
                ));
            }
            None
        } else {
            Some(match (code, own) {
                (Some(code), _) => code,
                // Format 2: the code is made from the vector.
                (None, Some(v)) => Code::new(&v.to_dense()),
                (None, None) => match self.entry(record.id)? {
                    Some(e) if e.slot == Some(slot) => Code::new(&e.vec.to_dense()),
                    _ => return Err(disagree(slot, record.id)),
                },
            })
        };
        let m = Rc::new(Member {
            id: record.id,
            dead: record.dead,
            lists: record.lists,
            code,
        });
        let mut cache = self.cache.borrow_mut();
        if cache.members.len() != self.graph.members as usize {
            cache.members = vec![None; self.graph.members as usize];
        }
        cache.members[slot as usize] = Some(m.clone());
        cache.read += 1;
        Ok(m)
    }

    /// The entry of live member `slot`, node `id` (its exact vector and
    /// type), checked to point back at it.
    pub(super) fn member_entry(&self, slot: u32, id: NodeId) -> R<Rc<EntryView>> {
        match self.entry(id)? {
            Some(e) if e.slot == Some(slot) => Ok(e),
            _ => Err(disagree(slot, id)),
        }
    }

    /// Code group `g` (format 4), read and checked on first use.
    fn group(&self, g: u32) -> R<Rc<CodeGroup>> {
        if let Some(Some(c)) = self.cache.borrow().groups.get(g as usize) {
            return Ok(c.clone());
        }
        let size = self.group.max(1);
        let groups = self.graph.members.div_ceil(size);
        if g >= groups {
            return Err(format!(
                "code group {g} is beyond the graph's {groups} groups"
            ));
        }
        let expect = (self.graph.members - g * size).min(size) as usize;
        let Some(bytes) = self
            .map
            .get(&stored::group_key(g))
            .map_err(|e| e.to_string())?
        else {
            return Err(format!("code group {g} is not stored"));
        };
        let c = Rc::new(stored::decode_group(bytes, g, expect, self.dim)?);
        let mut cache = self.cache.borrow_mut();
        if cache.groups.len() != groups as usize {
            cache.groups = vec![None; groups as usize];
        }
        cache.groups[g as usize] = Some(c.clone());
        Ok(c)
    }

    /// Member `slot`'s node and whether it is dead.
    pub(super) fn node(&self, slot: u32) -> R<(NodeId, bool)> {
        if self.group == 0 {
            let m = self.member(slot)?;
            return Ok((m.id, m.dead));
        }
        let c = self.group(slot / self.group)?;
        let i = (slot % self.group) as usize;
        Ok((c.ids[i], c.dead[i]))
    }

    /// The distance from `q` to member `slot`, and whether it is dead.
    fn distance(&self, q: CodeRef<'_>, slot: u32) -> R<(f32, bool)> {
        if self.group == 0 {
            let m = self.member(slot)?;
            let Some(code) = &m.code else {
                return Err(format!("graph member {slot} has no code"));
            };
            return Ok((q.distance(code.view()), m.dead));
        }
        let c = self.group(slot / self.group)?;
        let i = (slot % self.group) as usize;
        Ok((q.distance(c.code(i, self.dim)), c.dead[i]))
    }

    /// `Graph::search` over the stored members: the live members nearest
    /// to `q`, at most `ef`, nearest first by code distance.
    pub(super) fn search(&self, q: &Code, ef: usize) -> R<Vec<u32>> {
        let Some((entry, top)) = self.graph.entry else {
            return Ok(Vec::new());
        };
        let q = q.view();
        let (d, entry_dead) = self.distance(q, entry)?;
        let mut nearest = Near(d, entry);
        let mut nearest_dead = entry_dead;
        let top = usize::from(top);
        if self.member(entry)?.lists.len() != top + 1 {
            return Err(format!("the entry point {entry} is not on layer {top}"));
        }
        for layer in (1..=top).rev() {
            // Greedy descent: always step nearer.
            loop {
                let mut moved = false;
                let m = self.member(nearest.1)?;
                for &n in m.lists.get(layer).map_or(&[][..], |l| &l[..]) {
                    let (d, dead) = self.distance(q, n)?;
                    if d < nearest.0 {
                        nearest = Near(d, n);
                        nearest_dead = dead;
                        moved = true;
                    }
                }
                if !moved {
                    break;
                }
            }
        }
        // Best-first search of the base layer (`Graph::search_layer`).
        let ef = ef.max(1);
        let mut visited: Vec<u64> = vec![0; (self.graph.members as usize).div_ceil(64)];
        let mut seen = |s: u32| {
            let (w, bit) = ((s / 64) as usize, 1u64 << (s % 64));
            let fresh = visited[w] & bit == 0;
            visited[w] |= bit;
            fresh
        };
        let mut todo: BinaryHeap<Reverse<Near>> = BinaryHeap::new();
        let mut found: BinaryHeap<Near> = BinaryHeap::new();
        seen(nearest.1);
        todo.push(Reverse(nearest));
        if !nearest_dead {
            found.push(nearest);
        }
        while let Some(Reverse(c)) = todo.pop() {
            if found.len() >= ef && found.peek().is_some_and(|w| c.0 > w.0) {
                break;
            }
            let m = self.member(c.1)?;
            for &n in m.lists.first().map_or(&[][..], |l| &l[..]) {
                if !seen(n) {
                    continue;
                }
                let (d, dead) = self.distance(q, n)?;
                if found.len() < ef || found.peek().is_some_and(|w| d < w.0) {
                    todo.push(Reverse(Near(d, n)));
                    if !dead {
                        found.push(Near(d, n));
                        if found.len() > ef {
                            found.pop();
                        }
                    }
                }
            }
        }
        Ok(found.into_sorted_vec().into_iter().map(|n| n.1).collect())
    }
}
