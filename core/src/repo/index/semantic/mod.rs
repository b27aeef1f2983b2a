//! The semantic index: each node's description → an embedding; a query's
//! embedding → the nodes with the most similar descriptions.
//!
//! Similarity is the cosine of L2-normalised embeddings, clamped to [0, 1]:
//! it depends only on the two texts (and the embedder), never on what else
//! is indexed, so scores are comparable across calls and a threshold means
//! the same thing every time. Only hits with a positive score are returned.
//!
//! # How it is organised
//!
//! Every indexed node has an entry (its vector and type). An entry is either
//! *pending* — searched exactly, by brute force — or a member of the HNSW
//! *graph* (hierarchical navigable small world: layers of neighbour lists
//! that a search descends greedily).
//!
//! - Below `exact_threshold` nodes there is no graph: every search is exact.
//!   Once the index reaches the threshold, every entry is inserted into a
//!   new graph. If it later shrinks below half the threshold, the graph is
//!   dropped again (half, so that a size hovering around the threshold does
//!   not rebuild on every change).
//! - New and changed entries go to the pending set; when it reaches
//!   `side_set_max`, they are inserted into the graph (one by one: the graph
//!   takes inserts, so updates never split the index into several graphs).
//! - A removed or changed entry leaves a dead member in the graph: searches
//!   still pass through it (it keeps the graph connected) but never return
//!   it. Once more than half the members are dead, the graph is rebuilt from
//!   the live entries.
//!
//! The graph does not hold the vectors themselves but an 8-bit code of each
//! (`Code`: every component rounded to a multiple of the vector's largest
//! component / 127), a quarter of the size: a search reads mostly codes,
//! and reads them at random, so their size is what it costs. Each of the
//! `ef_search` candidates the graph finds is then scored exactly from the
//! stored vector, as is every pending entry, so a node's score is the same
//! whichever way it was found. HNSW is approximate: a true neighbour may be
//! missed. When a type filter leaves fewer than `top_k` candidates, the
//! graph is asked again for more; when the candidates wanted would be a
//! large part of the graph, the search is an exact scan.
//!
//! Everything is deterministic: layers are drawn from a generator seeded
//! with `SemanticConfig::seed`, entries are inserted in id order, and the
//! build runs on the calling thread.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

mod code;
mod graph;
mod lazy;
mod stored;

use code::Code;
use graph::{Graph, MemberRecord};
use stored::{GraphHeader, Header, Key};

use super::embed::{normalize, Embedder};
use super::vector::StoredVector;
use super::IndexError;
use crate::repo::cas::sorted::SortedMap;
use crate::repo::cas::{Blobs, StoreError};
use crate::repo::node::{Node, NodeId};

/// `wants_loading`: a search that has read 1/LOAD_SHARE of the stored
/// graph's members loads the index whole.
const LOAD_SHARE: usize = 4;

#[derive(Clone, Debug)]
pub struct SemanticConfig {
    /// Below this many nodes, search is exact (no graph).
    pub exact_threshold: usize,
    /// New and changed entries are searched exactly until this many have
    /// gathered; then they are inserted into the graph together.
    pub side_set_max: usize,
    /// Seed of the graph's layer assignment.
    pub seed: u64,
    /// Candidates the graph returns per search (HNSW `ef`), each then scored
    /// exactly: more finds more true neighbours, and costs about linearly.
    pub ef_search: usize,
    /// HNSW `efConstruction`: candidates considered for a new member's
    /// neighbours. Higher builds slower and finds more.
    pub ef_construction: usize,
    /// Neighbours per member on the upper layers (HNSW `M`); twice as many
    /// on the base layer.
    pub links: usize,
    /// Choose graph neighbours by the HNSW paper's heuristic (a candidate
    /// is skipped when it is nearer to a neighbour already chosen than to
    /// the new member) rather than simply the nearest.
    pub heuristic: bool,
}

impl Default for SemanticConfig {
    fn default() -> Self {
        SemanticConfig {
            // An exact scan of 10k 256-dimensional vectors takes well under
            // a millisecond; a graph only pays above that.
            exact_threshold: 10_000,
            // An exact scan of 128 vectors costs about 10 µs per query.
            side_set_max: 4096,
            seed: 0x4172_626f_7265_7321,
            // Measured with `examples/index_bench.rs` (docs/PERFORMANCE.md):
            // recall@10 ~95% at a million nodes for ef 64, links 16,
            // efConstruction 40 and the heuristic; the heuristic needs fewer
            // distances per search for the same recall.
            ef_search: 64,
            ef_construction: 40,
            links: 16,
            heuristic: true,
        }
    }
}

/// Options of a semantic search.
#[derive(Clone, Debug)]
pub struct SemanticQuery<'a> {
    /// At most this many hits.
    pub top_k: usize,
    /// Only hits scoring at least this (in [0, 1]).
    pub threshold: f32,
    /// Only nodes of this type.
    pub kind: Option<&'a str>,
}

impl Default for SemanticQuery<'_> {
    fn default() -> Self {
        SemanticQuery {
            top_k: 10,
            threshold: 0.0,
            kind: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SemanticHit {
    pub id: NodeId,
    /// Cosine similarity clamped to [0, 1].
    pub score: f32,
}

/// Sizes, for tests, benchmarks and diagnostics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SemanticStats {
    pub nodes: usize,
    pub pending: usize,
    /// The graph as (members, members since removed or changed); empty
    /// while search is exact.
    pub segments: Vec<(usize, usize)>,
    /// Descriptions whose embedding was refused (wrong length, not finite).
    pub rejected: usize,
}

struct Entry {
    vec: Arc<StoredVector>,
    kind: Option<Arc<str>>,
    /// Hash of the description, so a change that keeps it re-embeds nothing.
    text: u64,
    /// The entry's member number in the graph; `None` while pending.
    slot: Option<u32>,
}

pub struct SemanticIndex {
    embedder: Box<dyn Embedder>,
    config: SemanticConfig,
    entries: BTreeMap<NodeId, Entry>,
    /// The entries not in the graph, with their vectors (a scan of them
    /// looks nothing up).
    pending: BTreeMap<NodeId, Arc<StoredVector>>,
    graph: Option<Graph>,
    /// Interned type names: many nodes share a few types.
    kinds: BTreeSet<Arc<str>>,
    rejected: usize,
    /// Whether `entries`, `pending` and `graph` hold the index; when not,
    /// they are empty and the stored map is all there is (see `adopt`).
    loaded: bool,
    /// The index as the working state's version stores it (module
    /// `stored`), kept in step with every change; `None` when there is no
    /// trustworthy one: a loaded index is then written whole when a version
    /// asks for it (`persist`), an unloaded one is built from the nodes.
    stored: Option<SortedMap>,
    /// The stored map's header while the index is not loaded.
    header: Header,
    /// Entries changed since the stored map was last written (loaded).
    dirty: BTreeSet<NodeId>,
    /// What a host should tell its user (a stored index refused, a
    /// rebuild), oldest first.
    notes: Vec<String>,
    /// What searches of the stored map read while it is not loaded.
    lazy: RefCell<lazy::Cache>,
}

impl SemanticIndex {
    pub fn new(embedder: Box<dyn Embedder>, config: SemanticConfig) -> Self {
        let mut config = config;
        config.side_set_max = config.side_set_max.max(1);
        config.exact_threshold = config.exact_threshold.max(config.side_set_max);
        config.ef_search = config.ef_search.max(1);
        config.ef_construction = config.ef_construction.max(1);
        config.links = config.links.clamp(2, 128);
        let header = Header {
            format: stored::FORMAT,
            embedder: embedder.id(),
            dim: embedder.dim() as u32,
            links: config.links as u32,
            group: stored::group_size(embedder.dim()),
            entries: 0,
            pending: 0,
            graph: None,
        };
        SemanticIndex {
            embedder,
            config,
            entries: BTreeMap::new(),
            pending: BTreeMap::new(),
            graph: None,
            kinds: BTreeSet::new(),
            rejected: 0,
            loaded: true,
            stored: None,
            header,
            dirty: BTreeSet::new(),
            notes: Vec::new(),
            lazy: RefCell::default(),
        }
    }

    pub fn config(&self) -> &SemanticConfig {
        &self.config
    }

    pub fn dim(&self) -> usize {
        self.embedder.dim()
    }

    /// Forgets everything: an empty index, loaded, with no stored copy
    /// yet (`persist` writes one).
    pub fn clear(&mut self) {
        self.forget_loaded();
        self.rejected = 0;
        self.loaded = true;
        self.stored = None;
    }

    fn forget_loaded(&mut self) {
        self.lazy = RefCell::default();
        self.entries.clear();
        self.pending.clear();
        self.graph = None;
        self.kinds.clear();
        self.dirty.clear();
    }

    /// The embedder's id (`Embedder::id`), as stored with the vectors.
    pub fn embedder_id(&self) -> String {
        self.embedder.id()
    }

    /// Whether the index is in memory (else searching first needs `load`
    /// or a rebuild from the nodes).
    pub fn is_loaded(&self) -> bool {
        self.loaded
    }

    /// Whether there is a stored copy kept in step with the index.
    pub fn is_stored(&self) -> bool {
        self.stored.is_some()
    }

    /// Notes for the host's user since the last call.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Adds a note for the host's user.
    pub fn note(&mut self, text: String) {
        self.notes.push(text);
    }

    fn note_damaged(&mut self, why: &str) {
        self.notes.push(format!(
            "the stored semantic index cannot be used ({why}); it is built again from the nodes"
        ));
    }

    /// Takes `map` (a version's stored semantic index, `None` if it has
    /// none) as the index, unloaded: nothing but its header is read until
    /// `load`. Refused, with the reason, when the header does not parse or
    /// was written by another embedder or graph shape: the index is then
    /// to be built from the nodes. `Ok(false)` when there is no map.
    /// A refused or missing map leaves the index as it was.
    pub fn adopt(&mut self, map: Option<&SortedMap>) -> Result<bool, String> {
        let Some(map) = map else { return Ok(false) };
        let header = match map.get(stored::HEADER_KEY) {
            Ok(Some(bytes)) => stored::decode_header(bytes)?,
            Ok(None) => return Err("it has no header".into()),
            Err(e) => return Err(e.to_string()),
        };
        let embedder = self.embedder.id();
        if header.embedder != embedder {
            return Err(format!(
                "it was made by the embedder {}, this engine embeds with {embedder}",
                header.embedder
            ));
        }
        if header.dim as usize != self.dim() || header.links as usize != self.config.links {
            return Err(format!(
                "its vectors have {} components and its graph {} links, expected {} and {}",
                header.dim,
                header.links,
                self.dim(),
                self.config.links
            ));
        }
        if header.pending > header.entries
            || header.graph.as_ref().is_some_and(|g| {
                g.dead > g.members
                    || u64::from(g.members - g.dead) + header.pending != header.entries
            })
        {
            return Err(format!("its counts disagree: {header:?}"));
        }
        self.forget_loaded();
        self.loaded = false;
        self.header = header;
        self.stored = Some(map.clone());
        Ok(true)
    }

    /// Whether a search can read the stored index where it needs to
    /// instead of loading it (module `lazy`): the index is not loaded, is
    /// stored, has a graph and no graph work is due.
    pub fn searchable_stored(&self) -> bool {
        !self.loaded && self.stored.is_some() && self.header.graph.is_some() && !self.needs_work()
    }

    /// Whether searches of the stored map have read enough of it that
    /// loading it whole pays: once they have read a quarter of the graph's
    /// members (each read a record fetched and decoded on its own, where
    /// loading reads the records a blob at a time), the rest of the
    /// process's searches run on the graph in memory.
    pub fn wants_loading(&self) -> bool {
        match (&self.header.graph, self.loaded) {
            (Some(g), false) => {
                self.lazy.borrow().read.saturating_mul(LOAD_SHARE) >= g.members as usize
            }
            _ => false,
        }
    }

    fn view(&self) -> Option<lazy::View<'_>> {
        if self.loaded {
            return None;
        }
        Some(lazy::View {
            map: self.stored.as_ref()?,
            dim: self.dim(),
            links: self.config.links,
            graph: self.header.graph.as_ref()?,
            group: self.header.group,
            cache: &self.lazy,
        })
    }

    /// Forgets the index without a stored copy: it is built from the nodes
    /// when a search needs it; changes meanwhile are not followed.
    pub fn forget(&mut self) {
        self.forget_loaded();
        self.loaded = false;
        self.stored = None;
    }

    /// Reads the whole stored map into memory, checking that its parts
    /// agree: every entry of a graph member is that member's node, every
    /// live member has its entry, counts match the header. On an error the
    /// index is left unloaded with no stored copy (to be built again).
    pub fn load(&mut self) -> Result<(), String> {
        if self.loaded {
            return Ok(());
        }
        let result = self.read_stored();
        self.lazy = RefCell::default();
        if result.is_err() {
            self.forget_loaded();
            self.stored = None;
        } else if self.header.format < stored::FORMAT {
            // An older layout: written whole, in this one, by the next
            // `persist`.
            self.stored = None;
        }
        result
    }

    fn read_stored(&mut self) -> Result<(), String> {
        let Some(map) = self.stored.clone() else {
            return Err("there is no stored index".into());
        };
        let header = self.header.clone();
        let dim = self.dim();
        let mut members: Vec<(MemberRecord, Option<Arc<StoredVector>>)> = Vec::new();
        let mut codes: Vec<Option<Code>> = Vec::new();
        let mut by_slot: BTreeMap<u32, NodeId> = BTreeMap::new();
        let mut marked: Vec<NodeId> = Vec::new();
        let mut groups: Vec<&[u8]> = Vec::new();
        for item in map.iter() {
            let (k, v) = item.map_err(|e| e.to_string())?;
            match stored::parse_key(k)? {
                Key::Header => {}
                Key::Entry(id) => {
                    let e = stored::decode_entry(v, dim)?;
                    let kind = e.kind.as_deref().map(|k| self.intern(k));
                    match e.slot {
                        Some(slot) => {
                            if by_slot.insert(slot, id).is_some() {
                                return Err(format!("two entries claim graph member {slot}"));
                            }
                        }
                        None => {
                            self.pending.insert(id, e.vec.clone());
                        }
                    }
                    self.entries.insert(
                        id,
                        Entry {
                            vec: e.vec,
                            kind,
                            text: e.text,
                            slot: e.slot,
                        },
                    );
                }
                Key::Member(slot) => {
                    if slot as usize != members.len() {
                        return Err(format!(
                            "graph member {slot} follows {} members",
                            members.len()
                        ));
                    }
                    let (m, own, code) = stored::decode_member(v, dim)?;
                    members.push((m, own));
                    codes.push(code);
                }
                Key::Pending(id) => {
                    if !v.is_empty() {
                        return Err(format!("the pending marker of node {id} holds a value"));
                    }
                    marked.push(id);
                }
                Key::Group(g) => {
                    if header.format < 4 || g as usize != groups.len() {
                        return Err(format!(
                            "code group {g} follows {} groups in an index of format {}",
                            groups.len(),
                            header.format
                        ));
                    }
                    groups.push(v);
                }
            }
        }
        // Markers come in id order, as the pending set iterates.
        if !marked.iter().eq(self.pending.keys()) {
            return Err(format!(
                "{} nodes are marked pending, {} entries are out of the graph",
                marked.len(),
                self.pending.len()
            ));
        }
        let counted = (self.entries.len() as u64, self.pending.len() as u64);
        if counted != (header.entries, header.pending) {
            return Err(format!(
                "the header counts {} entries ({} pending), the map holds {} ({})",
                header.entries, header.pending, counted.0, counted.1
            ));
        }
        let Some(gh) = &header.graph else {
            if !members.is_empty() || !by_slot.is_empty() || !groups.is_empty() {
                return Err("graph members but no graph in the header".into());
            }
            self.loaded = true;
            return Ok(());
        };
        if members.len() != gh.members as usize {
            return Err(format!(
                "the header counts {} graph members, the map holds {}",
                gh.members,
                members.len()
            ));
        }
        let mut parts = Vec::with_capacity(members.len());
        for (slot, (m, own)) in members.into_iter().enumerate() {
            let slot = slot as u32;
            let vec = match (m.dead, by_slot.remove(&slot), own) {
                (false, Some(id), None) if id == m.id => match self.entries.get(&id) {
                    Some(e) => e.vec.clone(),
                    None => return Err(format!("graph member {slot} has no entry")),
                },
                (true, None, Some(v)) => v,
                _ => {
                    return Err(format!(
                        "graph member {slot} (node {}) and the entries disagree",
                        m.id
                    ))
                }
            };
            parts.push((m, vec));
        }
        if let Some((slot, id)) = by_slot.into_iter().next() {
            return Err(format!(
                "node {id} names graph member {slot}, which is not stored"
            ));
        }
        let entry = gh.entry.map(|(s, t)| (s, usize::from(t)));
        let graph = Graph::from_members(dim, &self.config, parts, entry, gh.rng)?;
        // A stored code (format 3) is the one its vector makes.
        for (slot, code) in codes.iter().enumerate() {
            if let Some(c) = code {
                let made = graph.code(slot as u32);
                if made.code != &c.code[..] || made.scale.to_bits() != c.scale.to_bits() {
                    return Err(format!(
                        "graph member {slot}'s stored code is not its vector's"
                    ));
                }
            }
        }
        if header.format >= 4 {
            Self::check_groups(&graph, header.group, &groups, dim)?;
        }
        if graph.dead != gh.dead as usize {
            return Err(format!(
                "the header counts {} dead members, the map holds {}",
                gh.dead, graph.dead
            ));
        }
        self.graph = Some(graph);
        self.loaded = true;
        Ok(())
    }

    /// Format 4: the code groups are those the members of `graph` make
    /// (`size` members to a group).
    fn check_groups(graph: &Graph, size: u32, groups: &[&[u8]], dim: usize) -> Result<(), String> {
        let size = size.max(1);
        let members = graph.len() as u32;
        let count = members.div_ceil(size);
        if groups.len() != count as usize {
            return Err(format!(
                "the map holds {} code groups, its {members} members make {count}",
                groups.len(),
            ));
        }
        for (g, bytes) in (0..count).zip(groups) {
            let first = g * size;
            let expect = (members - first).min(size);
            let c = stored::decode_group(bytes, g, expect as usize, dim)?;
            for (i, slot) in (first..first + expect).enumerate() {
                let made = graph.code(slot);
                let mine = c.code(i, dim);
                if graph.id(slot) != Some(c.ids[i])
                    || graph.is_dead[slot as usize] != c.dead[i]
                    || made.code != mine.code
                    || made.scale.to_bits() != mine.scale.to_bits()
                {
                    return Err(format!("code group {g} disagrees with graph member {slot}"));
                }
            }
        }
        Ok(())
    }

    /// The header describing the index as it is now.
    fn header_now(&self) -> Header {
        if !self.loaded {
            return self.header.clone();
        }
        Header {
            format: stored::FORMAT,
            embedder: self.embedder.id(),
            dim: self.dim() as u32,
            links: self.config.links as u32,
            group: stored::group_size(self.dim()),
            entries: self.entries.len() as u64,
            pending: self.pending.len() as u64,
            graph: self.graph.as_ref().map(|g| GraphHeader {
                members: g.len() as u32,
                dead: g.dead as u32,
                entry: g.entry.map(|(s, t)| (s, t as u8)),
                rng: g.rng(),
            }),
        }
    }

    /// The stored form of the index as the working state's version keeps
    /// it, written whole first if there is none yet; `None` while the
    /// index is neither loaded nor stored (it is then built from the nodes
    /// when a search needs it).
    pub fn persist(&mut self) -> Option<SortedMap> {
        if self.stored.is_none() && self.loaded {
            match self.write_all() {
                Ok(map) => self.stored = Some(map),
                // Only a map in memory is written: it cannot fail to load.
                Err(e) => self.note_damaged(&e.to_string()),
            }
        }
        self.stored.clone()
    }

    fn member_bytes(g: &Graph, slot: u32) -> Option<Vec<u8>> {
        let m = g.record(slot)?;
        // A dead member's node no longer has an entry with its vector.
        let own = m.dead.then(|| g.vector(slot)).flatten();
        Some(stored::encode_member(&m, own, None))
    }

    /// Code group `group` of `g`, as stored (format 4).
    fn group_bytes(g: &Graph, size: u32, group: u32) -> Vec<u8> {
        let first = group * size;
        let last = (first + size).min(g.len() as u32);
        stored::encode_group((first..last).map(|slot| {
            (
                g.id(slot).unwrap_or_default(),
                g.is_dead[slot as usize],
                g.code(slot),
            )
        }))
    }

    fn entry_bytes(e: &Entry) -> Vec<u8> {
        stored::encode_entry(e.text, e.slot, e.kind.as_deref(), &e.vec)
    }

    fn write_all(&mut self) -> Result<SortedMap, StoreError> {
        let mut map = SortedMap::new(Blobs::none());
        map.insert(
            stored::HEADER_KEY,
            &stored::encode_header(&self.header_now()),
        )?;
        for (id, e) in &self.entries {
            map.insert(&stored::entry_key(*id), &Self::entry_bytes(e))?;
            if e.slot.is_none() {
                map.insert(&stored::pending_key(*id), &[])?;
            }
        }
        let size = stored::group_size(self.dim());
        if let Some(g) = &mut self.graph {
            g.take_touched();
            g.take_recoded();
            for slot in 0..g.len() as u32 {
                if let Some(bytes) = Self::member_bytes(g, slot) {
                    map.insert(&stored::member_key(slot), &bytes)?;
                }
            }
            for group in 0..(g.len() as u32).div_ceil(size) {
                map.insert(
                    &stored::group_key(group),
                    &Self::group_bytes(g, size, group),
                )?;
            }
        }
        self.dirty.clear();
        Ok(map)
    }

    /// Writes what changed in memory into the stored map (loaded index).
    fn flush(&mut self) {
        let touched = self
            .graph
            .as_mut()
            .map(Graph::take_touched)
            .unwrap_or_default();
        let recoded = self
            .graph
            .as_mut()
            .map(Graph::take_recoded)
            .unwrap_or_default();
        let size = stored::group_size(self.dim());
        let dirty = std::mem::take(&mut self.dirty);
        let Some(mut map) = self.stored.take() else {
            return;
        };
        let header = self.header_now();
        let result = (|| -> Result<(), StoreError> {
            for id in dirty {
                let marked = match self.entries.get(&id) {
                    Some(e) => {
                        map.insert(&stored::entry_key(id), &Self::entry_bytes(e))?;
                        e.slot.is_none()
                    }
                    None => {
                        map.remove(&stored::entry_key(id))?;
                        false
                    }
                };
                if marked {
                    map.insert(&stored::pending_key(id), &[])?;
                } else {
                    map.remove(&stored::pending_key(id))?;
                }
            }
            if let Some(g) = &self.graph {
                for slot in touched {
                    if let Some(bytes) = Self::member_bytes(g, slot) {
                        map.insert(&stored::member_key(slot), &bytes)?;
                    }
                }
                let mut groups: Vec<u32> = recoded.iter().map(|s| s / size).collect();
                groups.dedup();
                for group in groups {
                    map.insert(
                        &stored::group_key(group),
                        &Self::group_bytes(g, size, group),
                    )?;
                }
            }
            map.insert(stored::HEADER_KEY, &stored::encode_header(&header))?;
            Ok(())
        })();
        match result {
            Ok(()) => self.stored = Some(map),
            // Written whole by the next `persist`.
            Err(e) => self.note_damaged(&e.to_string()),
        }
    }

    /// Whether `maintain` has graph work to do (build the graph, insert
    /// the pending set, rebuild a graph mostly dead, or drop one no longer
    /// needed), read from the header when the index is not loaded. A commit
    /// does this work before it stores the index, so a stored index is
    /// always ready to search.
    pub fn needs_work(&self) -> bool {
        let h = self.header_now();
        if !self.loaded && self.stored.is_none() {
            return false;
        }
        let n = h.entries as usize;
        match &h.graph {
            None => n >= self.config.exact_threshold,
            Some(g) => {
                n < self.config.exact_threshold / 2
                    || g.dead as usize * 2 > g.members as usize
                    || h.pending as usize >= self.config.side_set_max
            }
        }
    }

    /// Number of indexed nodes (those with a description that has features).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn stats(&self) -> SemanticStats {
        SemanticStats {
            nodes: self.entries.len(),
            pending: self.pending.len(),
            segments: self.graph.iter().map(|g| (g.len(), g.dead)).collect(),
            rejected: self.rejected,
        }
    }

    /// Every indexed node: id, normalised vector, type; by ascending id.
    pub fn entries(&self) -> impl Iterator<Item = (NodeId, &StoredVector, Option<&str>)> + '_ {
        self.entries
            .iter()
            .map(|(id, e)| (*id, &*e.vec, e.kind.as_deref()))
    }

    /// Index `node` (or drop it, if it has no usable description).
    pub fn insert(&mut self, node: &Node) {
        self.insert_deferred(node);
        self.maintain();
    }

    pub fn remove(&mut self, id: NodeId) {
        self.remove_deferred(id);
        self.maintain();
    }

    /// One change of the current version (see the module `index`).
    pub fn apply(&mut self, old: Option<&Node>, new: Option<&Node>) {
        self.apply_deferred(old, new);
        self.maintain();
    }

    /// `apply` without reorganising; call `maintain` after a batch. A
    /// loaded index changes in memory and writes the change through to its
    /// stored copy; an unloaded one changes its stored copy alone.
    pub fn apply_deferred(&mut self, old: Option<&Node>, new: Option<&Node>) {
        if !self.loaded {
            self.apply_stored(old, new);
            return;
        }
        if let Some(o) = old {
            if new.map(|n| n.id) != Some(o.id) {
                self.remove_deferred(o.id);
            }
        }
        if let Some(n) = new {
            self.insert_deferred(n);
        }
        self.flush();
    }

    /// A change of an unloaded index, made in its stored map: the node's
    /// entry is written (pending, out of the graph) or removed, and a graph
    /// member it leaves is marked dead. Damage met on the way drops the
    /// stored map (the index is then built from the nodes).
    fn apply_stored(&mut self, old: Option<&Node>, new: Option<&Node>) {
        let Some(mut map) = self.stored.take() else {
            return;
        };
        self.lazy = RefCell::default();
        let mut header = self.header.clone();
        let mut result = Ok(());
        if let Some(o) = old {
            if new.map(|n| n.id) != Some(o.id) {
                result = self.remove_stored(&mut map, &mut header, o.id);
            }
        }
        if let (Ok(()), Some(n)) = (&result, new) {
            result = self.insert_stored(&mut map, &mut header, n);
        }
        let result = result.and_then(|()| {
            map.insert(stored::HEADER_KEY, &stored::encode_header(&header))
                .map(drop)
                .map_err(|e| e.to_string())
        });
        match result {
            Ok(()) => {
                self.header = header;
                self.stored = Some(map);
            }
            Err(why) => self.note_damaged(&why),
        }
    }

    fn remove_stored(
        &self,
        map: &mut SortedMap,
        header: &mut Header,
        id: NodeId,
    ) -> Result<(), String> {
        let key = stored::entry_key(id);
        let Some(bytes) = map.get(&key).map_err(|e| e.to_string())? else {
            return Ok(());
        };
        let e = stored::decode_entry(bytes, self.dim())?;
        map.remove(&key).map_err(|e| e.to_string())?;
        header.entries = header.entries.saturating_sub(1);
        let Some(slot) = e.slot else {
            header.pending = header.pending.saturating_sub(1);
            map.remove(&stored::pending_key(id))
                .map_err(|e| e.to_string())?;
            return Ok(());
        };
        let key = stored::member_key(slot);
        let Some(bytes) = map.get(&key).map_err(|e| e.to_string())? else {
            return Err(format!(
                "node {id} names graph member {slot}, which is not stored"
            ));
        };
        let (mut m, _, code) = stored::decode_member(bytes, self.dim())?;
        if m.id != id || m.dead {
            return Err(format!("graph member {slot} is not node {id}'s"));
        }
        m.dead = true;
        if header.format >= 4 {
            map.insert(&key, &stored::encode_member(&m, Some(&e.vec), None))
                .map_err(|e| e.to_string())?;
            Self::mark_dead_in_group(map, header, slot, id, self.dim())?;
        } else {
            // An older layout keeps the code in the record.
            let code = code.unwrap_or_else(|| Code::new(&e.vec.to_dense()));
            map.insert(
                &key,
                &stored::encode_member(&m, Some(&e.vec), Some(code.view())),
            )
            .map_err(|e| e.to_string())?;
        }
        if let Some(g) = &mut header.graph {
            g.dead += 1;
        }
        Ok(())
    }

    /// Marks member `slot` (node `id`) dead in its code group (format 4).
    fn mark_dead_in_group(
        map: &mut SortedMap,
        header: &Header,
        slot: u32,
        id: NodeId,
        dim: usize,
    ) -> Result<(), String> {
        let (Some(gh), size) = (&header.graph, header.group.max(1)) else {
            return Err(format!("graph member {slot} but no graph in the header"));
        };
        let group = slot / size;
        let expect = gh.members.saturating_sub(group * size).min(size) as usize;
        let key = stored::group_key(group);
        let Some(bytes) = map.get(&key).map_err(|e| e.to_string())? else {
            return Err(format!("code group {group} is not stored"));
        };
        let mut c = stored::decode_group(bytes, group, expect, dim)?;
        let i = (slot % size) as usize;
        if c.ids.get(i) != Some(&id) || c.dead[i] {
            return Err(format!(
                "code group {group} does not hold node {id} alive at member {slot}"
            ));
        }
        c.dead[i] = true;
        let bytes =
            stored::encode_group((0..c.len()).map(|i| (c.ids[i], c.dead[i], c.code(i, dim))));
        map.insert(&key, &bytes).map_err(|e| e.to_string())?;
        Ok(())
    }

    fn insert_stored(
        &mut self,
        map: &mut SortedMap,
        header: &mut Header,
        node: &Node,
    ) -> Result<(), String> {
        let Some(text) = vector_text(node) else {
            return self.remove_stored(map, header, node.id);
        };
        let hash = super::embed::hash(0, &text);
        let key = stored::entry_key(node.id);
        if let Some(bytes) = map.get(&key).map_err(|e| e.to_string())? {
            let e = stored::decode_entry(bytes, self.dim())?;
            if e.text == hash {
                // Same description: keep the vector and its place.
                let bytes = stored::encode_entry(hash, e.slot, node.kind.as_deref(), &e.vec);
                map.insert(&key, &bytes).map_err(|e| e.to_string())?;
                return Ok(());
            }
        }
        self.remove_stored(map, header, node.id)?;
        let vec = match self.prepare(self.embedder.embed(&text)) {
            Ok(Some(v)) => StoredVector::new(&v),
            Ok(None) => return Ok(()),
            Err(_) => {
                self.rejected += 1;
                return Ok(());
            }
        };
        let bytes = stored::encode_entry(hash, None, node.kind.as_deref(), &vec);
        map.insert(&key, &bytes).map_err(|e| e.to_string())?;
        map.insert(&stored::pending_key(node.id), &[])
            .map_err(|e| e.to_string())?;
        header.entries += 1;
        header.pending += 1;
        Ok(())
    }

    fn insert_deferred(&mut self, node: &Node) {
        let Some(text) = vector_text(node) else {
            self.remove_deferred(node.id);
            return;
        };
        let text = text.as_str();
        let hash = super::embed::hash(0, text);
        let kind = node.kind.as_deref().map(|k| self.intern(k));
        if let Some(e) = self.entries.get_mut(&node.id) {
            if e.text == hash {
                // Same description: keep the vector and its place.
                e.kind = kind;
                self.dirty.insert(node.id);
                return;
            }
        }
        let vec = match self.prepare(self.embedder.embed(text)) {
            Ok(Some(v)) => Arc::new(StoredVector::new(&v)),
            Ok(None) => {
                // No features (e.g. only punctuation): nothing to find it by.
                self.remove_deferred(node.id);
                return;
            }
            Err(_) => {
                self.rejected += 1;
                self.remove_deferred(node.id);
                return;
            }
        };
        let entry = Entry {
            vec: vec.clone(),
            kind,
            text: hash,
            slot: None,
        };
        self.dirty.insert(node.id);
        // One search of each map (this runs for every node stored).
        if let Some(old) = self.entries.insert(node.id, entry) {
            if let (Some(slot), Some(g)) = (old.slot, &mut self.graph) {
                g.kill(slot);
            }
        }
        self.pending.insert(node.id, vec);
    }

    fn remove_deferred(&mut self, id: NodeId) {
        let Some(e) = self.entries.remove(&id) else {
            return;
        };
        self.dirty.insert(id);
        match (e.slot, &mut self.graph) {
            (Some(slot), Some(g)) => g.kill(slot),
            _ => {
                self.pending.remove(&id);
            }
        }
    }

    fn intern(&mut self, kind: &str) -> Arc<str> {
        if let Some(k) = self.kinds.get(kind) {
            return k.clone();
        }
        let k: Arc<str> = Arc::from(kind);
        self.kinds.insert(k.clone());
        k
    }

    /// Checks and normalises an embedding; `None` for the zero vector.
    fn prepare(&self, mut v: Vec<f32>) -> Result<Option<Vec<f32>>, IndexError> {
        let dim = self.embedder.dim();
        if v.len() != dim {
            return Err(IndexError::BadEmbedding(format!(
                "the embedder returned {} components, expected {dim}",
                v.len()
            )));
        }
        // Without early exits, so that the loops vectorise.
        if !v.iter().fold(true, |ok, x| ok & x.is_finite()) {
            return Err(IndexError::BadEmbedding(
                "the embedder returned a non-finite component".into(),
            ));
        }
        normalize(&mut v);
        if v.iter().fold(true, |zero, &x| zero & (x == 0.0)) {
            return Ok(None);
        }
        Ok(Some(v))
    }

    /// The cheap part of `maintain`, for commits, switches and loads: a
    /// graph that the index outgrew (more than half dead) or that it no
    /// longer needs is dropped and its members go back to the pending set.
    /// Building and extending the graph waits for the next search that
    /// calls `maintain`: a bulk load or an import does not pay for a graph
    /// until someone searches by meaning (until then searches are exact).
    /// Returns whether the index is large enough to want a graph.
    pub fn settle(&mut self) -> bool {
        if !self.loaded {
            return false;
        }
        let n = self.entries.len();
        let keep_graph = match &self.graph {
            None => n >= self.config.exact_threshold,
            Some(_) => n >= self.config.exact_threshold / 2,
        };
        let stale = self.graph.as_ref().is_some_and(|g| g.dead * 2 > g.len());
        if (!keep_graph || stale) && self.graph.take().is_some() {
            for (id, e) in self.entries.iter_mut() {
                if e.slot.take().is_some() {
                    self.pending.insert(*id, e.vec.clone());
                }
            }
            // Every entry and member changed: written whole by `persist`.
            self.stored = None;
            self.dirty.clear();
        }
        keep_graph
    }

    /// Reorganise after changes (see the module documentation): settles,
    /// then builds the graph, or inserts the pending entries into it once
    /// they have reached `side_set_max`.
    pub fn maintain(&mut self) {
        self.maintain_with(&mut |_, _| {});
    }

    /// `maintain`, telling `progress` (done, total) every 10,000 members
    /// inserted into the graph.
    pub fn maintain_with(&mut self, progress: &mut dyn FnMut(usize, usize)) {
        let keep_graph = self.settle();
        if !keep_graph {
            return;
        }
        if self.graph.is_some() && self.pending.len() < self.config.side_set_max {
            return;
        }
        let dim = self.embedder.dim();
        if self.graph.is_none() {
            // A new graph: every entry gets a member, written whole.
            self.stored = None;
            self.dirty.clear();
        }
        let g = self
            .graph
            .get_or_insert_with(|| Graph::new(dim, &self.config));
        let pending = std::mem::take(&mut self.pending);
        let total = pending.len();
        for (done, (id, vec)) in pending.into_iter().enumerate() {
            if done % 10_000 == 0 && done > 0 {
                progress(done, total);
            }
            let Some(e) = self.entries.get_mut(&id) else {
                continue;
            };
            match g.insert(id, vec.clone()) {
                Some(slot) => {
                    e.slot = Some(slot);
                    self.dirty.insert(id);
                }
                // The graph is full (2^32 - 1 members): stay exact.
                None => {
                    self.pending.insert(id, vec);
                }
            }
        }
        if self.stored.is_some() {
            self.flush();
        } else {
            self.dirty.clear();
            if let Some(g) = &mut self.graph {
                g.take_touched();
                g.take_recoded();
            }
        }
    }

    /// The score of node `id` for the prepared query vector `q` (0 if the
    /// node has no vector).
    pub fn score_of(&self, id: NodeId, q: &[f32]) -> Result<f32, IndexError> {
        if let Some(view) = self.view() {
            let e = view.entry(id).map_err(IndexError::StoredSemantic)?;
            return Ok(e.map_or(0.0, |e| e.vec.dot(q).clamp(0.0, 1.0)));
        }
        Ok(self
            .entries
            .get(&id)
            .map_or(0.0, |e| e.vec.dot(q).clamp(0.0, 1.0)))
    }

    /// Words of other languages meaning what `text`'s words mean (see
    /// `Embedder::translations`).
    pub fn translations(&self, text: &str) -> Vec<(String, f32)> {
        self.embedder.translations(text)
    }

    /// The embedder's cheap vector of a few words, normalised
    /// (`Embedder::word_vector`); `None` if it makes none or it is zero.
    pub fn word_vector(&self, text: &str) -> Option<Vec<f32>> {
        let v = self.embedder.word_vector(text)?;
        if v.len() != self.dim() {
            return None;
        }
        self.prepare(v).ok().flatten()
    }

    /// The embedding of a query text, normalised; `None` if it has no
    /// features (it then matches nothing).
    pub fn embed_query(&self, text: &str) -> Result<Option<Vec<f32>>, IndexError> {
        self.prepare(self.embedder.embed_query(text))
    }

    /// The embedding of a node's text (`vector_text`), normalised, as the
    /// index embeds it; `None` if it has no features.
    pub fn embed_passage(&self, text: &str) -> Result<Option<Vec<f32>>, IndexError> {
        self.prepare(self.embedder.embed(text))
    }

    /// The nodes whose descriptions are most similar to `text`: by score,
    /// highest first, then by ascending id.
    pub fn search(
        &self,
        text: &str,
        query: &SemanticQuery<'_>,
    ) -> Result<Vec<SemanticHit>, IndexError> {
        match self.embed_query(text)? {
            Some(q) => self.search_prepared(&q, query),
            None => Ok(Vec::new()),
        }
    }

    /// As `search`, from a vector of the embedder's dimension.
    pub fn search_vector(
        &self,
        vector: &[f32],
        query: &SemanticQuery<'_>,
    ) -> Result<Vec<SemanticHit>, IndexError> {
        match self.prepare(vector.to_vec())? {
            Some(q) => self.search_prepared(&q, query),
            None => Ok(Vec::new()),
        }
    }

    /// `search` from a prepared query vector. An index that is not
    /// loaded is searched in its stored map (`searchable_stored`); one that
    /// is not even that, or a search that must be exact, asks the caller
    /// to load it first (`IndexError::Unloaded`).
    pub fn search_prepared(
        &self,
        q: &[f32],
        query: &SemanticQuery<'_>,
    ) -> Result<Vec<SemanticHit>, IndexError> {
        if !self.loaded {
            if query.top_k == 0 || self.header.entries == 0 {
                return Ok(Vec::new());
            }
            if !self.searchable_stored() {
                return Err(IndexError::Unloaded);
            }
            return self.search_stored(q, query);
        }
        if query.top_k == 0 || self.entries.is_empty() {
            return Ok(Vec::new());
        }
        let threshold = if query.threshold.is_nan() {
            0.0
        } else {
            query.threshold.clamp(0.0, 1.0)
        };
        let wanted = |e: &Entry| match query.kind {
            None => true,
            Some(k) => e.kind.as_deref() == Some(k),
        };
        let score = |v: &StoredVector| v.dot(q).clamp(0.0, 1.0);
        let keep = |s: f32| s > 0.0 && s >= threshold;
        let mut hits: Vec<(f32, NodeId)> = Vec::new();
        let mut exact = true;
        if let Some(g) = &self.graph {
            // The pending set is scanned once; only the graph's part is
            // asked again with more candidates.
            let mut pending_hits: Vec<(f32, NodeId)> = Vec::new();
            let mut pending_matched = 0;
            for (&id, vec) in &self.pending {
                if query.kind.is_some() && !self.entries.get(&id).is_some_and(wanted) {
                    continue;
                }
                pending_matched += 1;
                let s = score(vec);
                if keep(s) {
                    pending_hits.push((s, id));
                }
            }
            let code = Code::new(q);
            let mut ef = self.config.ef_search.max(query.top_k.saturating_mul(2));
            // Candidates enough to be a quarter of the graph: a scan costs
            // about as much, and is exact.
            while ef.saturating_mul(4) <= g.live() {
                hits.clone_from(&pending_hits);
                let mut matched = pending_matched;
                for slot in g.search(&code, ef) {
                    let Some((id, vec)) = g.member(slot) else {
                        continue;
                    };
                    if query.kind.is_some() && !self.entries.get(&id).is_some_and(wanted) {
                        continue;
                    }
                    matched += 1;
                    let s = score(vec);
                    if keep(s) {
                        hits.push((s, id));
                    }
                }
                // A type filter can discard most of what the graph returns:
                // ask for more rather than answer short.
                if matched >= query.top_k {
                    exact = false;
                    break;
                }
                ef = ef.saturating_mul(4);
            }
        }
        if exact {
            hits.clear();
            for (id, e) in &self.entries {
                if wanted(e) {
                    let s = score(&e.vec);
                    if keep(s) {
                        hits.push((s, *id));
                    }
                }
            }
        }
        let order = |a: &(f32, NodeId), b: &(f32, NodeId)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if hits.len() > query.top_k {
            hits.select_nth_unstable_by(query.top_k - 1, order);
            hits.truncate(query.top_k);
        }
        hits.sort_unstable_by(order);
        Ok(hits
            .into_iter()
            .map(|(score, id)| SemanticHit { id, score })
            .collect())
    }

    /// `search_prepared` over the stored map, reading only the members the
    /// graph search visits and the pending set: the same candidates as
    /// the loaded graph gives, scored the same way.
    fn search_stored(
        &self,
        q: &[f32],
        query: &SemanticQuery<'_>,
    ) -> Result<Vec<SemanticHit>, IndexError> {
        let (Some(view), Some(g)) = (self.view(), self.header.graph.as_ref()) else {
            return Err(IndexError::Unloaded);
        };
        let bad = IndexError::StoredSemantic;
        let threshold = if query.threshold.is_nan() {
            0.0
        } else {
            query.threshold.clamp(0.0, 1.0)
        };
        let wanted = |kind: &Option<Arc<str>>| match query.kind {
            None => true,
            Some(k) => kind.as_deref() == Some(k),
        };
        let score = |v: &StoredVector| v.dot(q).clamp(0.0, 1.0);
        let keep = |s: f32| s > 0.0 && s >= threshold;
        let mut pending_hits: Vec<(f32, NodeId)> = Vec::new();
        let mut pending_matched = 0;
        let pending = view.pending().map_err(bad)?;
        if pending.len() as u64 != self.header.pending {
            return Err(bad(format!(
                "{} nodes are marked pending, the header counts {}",
                pending.len(),
                self.header.pending
            )));
        }
        for &id in pending.iter() {
            let Some(e) = view.entry(id).map_err(bad)? else {
                return Err(bad(format!("node {id} is marked pending but has no entry")));
            };
            if e.slot.is_some() {
                return Err(bad(format!("node {id} is marked pending but in the graph")));
            }
            if !wanted(&e.kind) {
                continue;
            }
            pending_matched += 1;
            let s = score(&e.vec);
            if keep(s) {
                pending_hits.push((s, id));
            }
        }
        let code = Code::new(q);
        let live = g.members.saturating_sub(g.dead) as usize;
        let mut ef = self.config.ef_search.max(query.top_k.saturating_mul(2));
        while ef.saturating_mul(4) <= live {
            let mut hits = pending_hits.clone();
            let mut matched = pending_matched;
            for slot in view.search(&code, ef).map_err(bad)? {
                let (id, dead) = view.node(slot).map_err(bad)?;
                if dead {
                    continue;
                }
                let e = view.member_entry(slot, id).map_err(bad)?;
                if !wanted(&e.kind) {
                    continue;
                }
                matched += 1;
                let s = score(&e.vec);
                if keep(s) {
                    hits.push((s, id));
                }
            }
            if matched >= query.top_k {
                let order =
                    |a: &(f32, NodeId), b: &(f32, NodeId)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
                if hits.len() > query.top_k {
                    hits.select_nth_unstable_by(query.top_k - 1, order);
                    hits.truncate(query.top_k);
                }
                hits.sort_unstable_by(order);
                return Ok(hits
                    .into_iter()
                    .map(|(score, id)| SemanticHit { id, score })
                    .collect());
            }
            ef = ef.saturating_mul(4);
        }
        // Exact: every entry, which takes loading the index.
        Err(IndexError::Unloaded)
    }
}
/// What a node's vector is made from: its description and its symbol
/// names (split into words by the embedder), or `None` if it has neither.
pub fn vector_text(node: &Node) -> Option<String> {
    let mut text = node.description.clone().unwrap_or_default();
    for name in &node.symbol_names {
        text.push_str(if text.is_empty() { "" } else { " ; " });
        text.push_str(name);
    }
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::graph::BASE_ONLY;
    use super::*;
    use crate::repo::index::embed::HashingEmbedder;

    fn node(id: NodeId, desc: &str, kind: Option<&str>) -> Node {
        Node {
            id,
            code: Some("x".into()),
            description: Some(desc.into()),
            symbol_names: Vec::new(),
            kind: kind.map(Into::into),
            dependencies: Vec::new(),
        }
    }

    fn index(config: SemanticConfig) -> SemanticIndex {
        SemanticIndex::new(Box::new(HashingEmbedder::default()), config)
    }

    fn ids(hits: &[SemanticHit]) -> Vec<NodeId> {
        hits.iter().map(|h| h.id).collect()
    }

    /// The seed's example: "排序算法" finds the two sorting nodes first.
    #[test]
    fn chinese_example() {
        let mut ix = index(SemanticConfig::default());
        let docs = [
            (123, "快速排序实现"),
            (456, "归并排序算法"),
            (1, "获取当前版本"),
            (2, "版本历史查询"),
            (3, "读取配置文件"),
            (4, "计算阶乘的递归函数"),
            (5, "解析JSON字符串"),
            (6, "发送网络请求"),
            (7, "Parse a JSON document into nested lists"),
            (8, "Compute the factorial of an integer recursively"),
            (9, "Read the configuration file"),
            (10, "二叉树的遍历"),
            (11, "字符串转大写"),
        ];
        for (id, d) in docs {
            ix.insert(&node(id, d, Some("function")));
        }
        let hits = ix.search("排序算法", &SemanticQuery::default()).unwrap();
        assert!(hits.len() >= 2, "{hits:?}");
        let top: BTreeSet<NodeId> = ids(&hits[..2]).into_iter().collect();
        assert_eq!(top, BTreeSet::from([123, 456]), "{hits:?}");
        for h in &hits[2..] {
            assert!(h.score < hits[1].score - 0.1, "{hits:?}");
        }
        assert!(hits.iter().all(|h| (0.0..=1.0).contains(&h.score)));
        // English works the same way.
        ix.insert(&node(20, "Quicksort: an in-place sorting algorithm", None));
        ix.insert(&node(21, "merge sort for lists", None));
        let hits = ix
            .search("sort algorithm", &SemanticQuery::default())
            .unwrap();
        assert_eq!(hits[0].id, 20, "{hits:?}");
        assert_eq!(hits[1].id, 21, "{hits:?}");
    }

    #[test]
    fn options_top_k_threshold_kind() {
        let mut ix = index(SemanticConfig::default());
        ix.insert(&node(1, "sort a list of numbers", Some("function")));
        ix.insert(&node(2, "sort a vector", Some("function")));
        ix.insert(&node(3, "sort order constant", Some("constant")));
        ix.insert(&node(4, "open a window", Some("function")));
        let q = |top_k, threshold, kind| SemanticQuery {
            top_k,
            threshold,
            kind,
        };
        let all = ix.search("sort", &q(10, 0.0, None)).unwrap();
        assert_eq!(all.len(), 3, "{all:?}");
        let one = ix.search("sort", &q(1, 0.0, None)).unwrap();
        assert_eq!(one, all[..1].to_vec());
        let consts = ix.search("sort", &q(10, 0.0, Some("constant"))).unwrap();
        assert_eq!(ids(&consts), vec![3]);
        let high = ix.search("sort", &q(10, 0.99, None)).unwrap();
        assert!(high.is_empty(), "{high:?}");
        let mid = all[1].score;
        let cut = ix.search("sort", &q(10, mid, None)).unwrap();
        assert_eq!(cut, all[..2].to_vec());
        // The same text scores 1.
        let same = ix.search("open a window", &q(1, 0.0, None)).unwrap();
        assert_eq!(same[0].id, 4);
        assert!((same[0].score - 1.0).abs() < 1e-5);
        assert!(ix.search("", &q(10, 0.0, None)).unwrap().is_empty());
        assert!(ix.search("sort", &q(0, 0.0, None)).unwrap().is_empty());
        assert_eq!(ix.search("sort", &q(10, f32::NAN, None)).unwrap(), all);
        // Scores do not depend on what else is indexed.
        ix.remove(2);
        ix.remove(4);
        let again = ix.search("sort", &q(10, 0.0, None)).unwrap();
        let without: Vec<SemanticHit> = all.iter().filter(|h| h.id != 2).cloned().collect();
        assert_eq!(again, without);
    }

    #[test]
    fn no_description_or_no_features_is_not_indexed() {
        let mut ix = index(SemanticConfig::default());
        ix.insert(&node(1, "--- ...", None));
        let mut n = node(2, "x", None);
        n.description = None;
        ix.insert(&n);
        assert_eq!(ix.len(), 0);
        ix.insert(&node(3, "real words", None));
        ix.insert(&node(3, "", None));
        assert_eq!(ix.len(), 0);
    }

    struct Broken;
    impl Embedder for Broken {
        fn dim(&self) -> usize {
            4
        }
        fn embed(&self, text: &str) -> Vec<f32> {
            match text {
                "short" => vec![1.0],
                "nan" => vec![f32::NAN, 0.0, 0.0, 0.0],
                _ => vec![1.0, 0.0, 0.0, 0.0],
            }
        }
    }

    /// Tells queries from passages, as multilingual-e5 does: a query is
    /// the last axis, a passage the first.
    struct Asymmetric;
    impl Embedder for Asymmetric {
        fn dim(&self) -> usize {
            2
        }
        fn embed(&self, _text: &str) -> Vec<f32> {
            vec![1.0, 0.0]
        }
        fn embed_query(&self, _text: &str) -> Vec<f32> {
            vec![0.0, 1.0]
        }
    }

    #[test]
    fn queries_and_passages_are_embedded_apart() {
        let mut ix = SemanticIndex::new(Box::new(Asymmetric), SemanticConfig::default());
        ix.insert(&node(1, "merge sort", None));
        assert_eq!(ix.embed_query("merge sort").unwrap(), Some(vec![0.0, 1.0]));
        assert_eq!(
            ix.embed_passage("merge sort").unwrap(),
            Some(vec![1.0, 0.0])
        );
        // The node was embedded as a passage: a query vector on the
        // passage axis finds it with cosine 1, the query's own with 0.
        let hits = ix
            .search_vector(&[1.0, 0.0], &SemanticQuery::default())
            .unwrap();
        assert_eq!(ids(&hits), vec![1]);
        assert!((hits[0].score - 1.0).abs() < 1e-6, "{}", hits[0].score);
        assert!(ix
            .search("merge sort", &SemanticQuery::default())
            .unwrap()
            .iter()
            .all(|h| h.score < 1e-6));
    }

    #[test]
    fn a_broken_embedder_is_contained() {
        let mut ix = SemanticIndex::new(Box::new(Broken), SemanticConfig::default());
        ix.insert(&node(1, "short", None));
        ix.insert(&node(2, "nan", None));
        ix.insert(&node(3, "fine", None));
        assert_eq!(ix.len(), 1);
        assert_eq!(ix.stats().rejected, 2);
        let err = ix.search("short", &SemanticQuery::default()).unwrap_err();
        assert_eq!(err.kind(), "invalid-embedding");
        assert!(ix
            .search_vector(&[1.0, 2.0], &SemanticQuery::default())
            .is_err());
        let hits = ix
            .search_vector(&[2.0, 0.0, 0.0, 0.0], &SemanticQuery::default())
            .unwrap();
        assert_eq!(ids(&hits), vec![3]);
    }

    use crate::test_rng::TestRng as Rng;

    const WORDS: &[&str] = &[
        "sort",
        "list",
        "tree",
        "graph",
        "parse",
        "string",
        "number",
        "vector",
        "hash",
        "table",
        "排序",
        "算法",
        "列表",
        "树",
        "图",
        "解析",
        "字符串",
        "数字",
        "向量",
        "哈希",
    ];

    fn random_desc(rng: &mut Rng) -> String {
        let n = 1 + rng.below(4);
        (0..n)
            .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Graphs on: search still finds what an exact scan finds, and ignores
    /// removed and replaced nodes.
    #[test]
    fn segments_agree_with_exact_search() {
        let config = SemanticConfig {
            exact_threshold: 300,
            side_set_max: 64,
            ..SemanticConfig::default()
        };
        let mut ix = index(config.clone());
        let mut rng = Rng::new(7);
        let mut live: BTreeMap<NodeId, Node> = BTreeMap::new();
        for step in 0..3000 {
            let id = rng.below(1500);
            let kind = ["function", "constant"][rng.below(2) as usize];
            if rng.below(4) == 0 {
                ix.remove(id);
                live.remove(&id);
            } else {
                let n = node(id, &random_desc(&mut rng), Some(kind));
                ix.insert(&n);
                live.insert(id, n);
            }
            if step % 500 == 499 {
                let s = ix.stats();
                assert!(!s.segments.is_empty(), "{s:?}");
                assert!(s.pending < config.side_set_max, "{s:?}");
            }
        }
        let mut exact = index(SemanticConfig {
            exact_threshold: usize::MAX,
            ..config
        });
        for n in live.values() {
            exact.insert(n);
        }
        assert_eq!(exact.stats().segments, vec![]);
        assert_eq!(ix.len(), exact.len());
        // Every unique description must be found with score 1 at the top.
        let mut recall = 0;
        let mut total = 0;
        for n in live.values().take(200) {
            let text = n.description.as_deref().unwrap();
            let q = SemanticQuery {
                top_k: 5,
                ..SemanticQuery::default()
            };
            let got = ix.search(text, &q).unwrap();
            let want = exact.search(text, &q).unwrap();
            assert!((got[0].score - want[0].score).abs() < 1e-6);
            for w in &want {
                total += 1;
                if got.iter().any(|g| g.score >= w.score - 1e-6) {
                    recall += 1;
                }
            }
            for g in &got {
                assert!(live.contains_key(&g.id));
            }
            let kq = SemanticQuery {
                top_k: 5,
                kind: Some("constant"),
                ..SemanticQuery::default()
            };
            for g in ix.search(text, &kq).unwrap() {
                assert_eq!(live[&g.id].kind.as_deref(), Some("constant"));
            }
        }
        assert!(recall * 100 >= total * 95, "recall {recall}/{total}");
        // Shrinking far below the threshold drops the graphs.
        for id in 0..1500 {
            ix.remove(id);
        }
        assert_eq!(ix.stats().segments, vec![]);
        assert_eq!(ix.len(), 0);
    }

    /// Incremental updates end in the same index as a rebuild.
    #[test]
    fn incremental_equals_rebuild() {
        for (seed, threshold) in [(1u64, usize::MAX), (2, 200), (3, 50)] {
            let config = SemanticConfig {
                exact_threshold: threshold,
                side_set_max: 32,
                ..SemanticConfig::default()
            };
            let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut ix = index(config.clone());
            let mut live: BTreeMap<NodeId, Node> = BTreeMap::new();
            for _ in 0..2000 {
                let id = rng.below(400);
                let old = live.get(&id).cloned();
                let new = if rng.below(3) == 0 {
                    None
                } else {
                    let kind = ["function", "constant"][rng.below(2) as usize];
                    Some(node(id, &random_desc(&mut rng), Some(kind)))
                };
                ix.apply(old.as_ref(), new.as_ref());
                match new {
                    Some(n) => live.insert(id, n),
                    None => live.remove(&id),
                };
            }
            let mut fresh = index(config);
            for n in live.values() {
                fresh.apply_deferred(None, Some(n));
            }
            fresh.maintain();
            let a: Vec<_> = ix.entries().map(|(i, v, k)| (i, v.to_dense(), k)).collect();
            let b: Vec<_> = fresh
                .entries()
                .map(|(i, v, k)| (i, v.to_dense(), k))
                .collect();
            assert_eq!(a, b);
        }
    }

    /// A graph's structural invariants: every list within its capacity,
    /// naming other existing members that are on that layer.
    fn check_graph(g: &Graph) {
        for slot in 0..g.len() as u32 {
            let levels = match g.upper_at[slot as usize] {
                BASE_ONLY => 0,
                u => g.uppers[u as usize].len() / (g.links + 1),
            };
            for layer in 0..=levels {
                let list = g.neighbours(slot, layer);
                let cap = if layer == 0 { 2 * g.links } else { g.links };
                assert!(list.len() <= cap);
                for &n in list {
                    assert_ne!(n, slot);
                    assert!((n as usize) < g.len());
                    assert!(g.list_at(n, layer).is_some(), "{n} not on layer {layer}");
                }
            }
        }
        assert_eq!(g.is_dead.iter().filter(|d| **d).count(), g.dead);
    }

    fn random_nodes(seed: u64, n: u64) -> Vec<Node> {
        let mut rng = Rng::new(seed);
        (0..n)
            .map(|id| {
                let kind = ["function", "constant"][rng.below(2) as usize];
                node(id, &random_desc(&mut rng), Some(kind))
            })
            .collect()
    }

    fn graph_config() -> SemanticConfig {
        SemanticConfig {
            exact_threshold: 100,
            side_set_max: 8,
            ..SemanticConfig::default()
        }
    }

    /// The graph's candidates, found by their 8-bit codes and rescored from
    /// the stored vectors, give the same top hits, with the same scores, as
    /// an exact scan.
    #[test]
    fn code_candidates_rescored_equal_exact_search() {
        let nodes = random_nodes(11, 600);
        let mut ix = index(graph_config());
        let mut exact = index(SemanticConfig {
            exact_threshold: usize::MAX,
            ..graph_config()
        });
        for n in &nodes {
            ix.insert(n);
            exact.insert(n);
        }
        let s = ix.stats();
        assert_eq!(s.segments, vec![(600 - s.pending, 0)]);
        check_graph(ix.graph.as_ref().unwrap());
        let mut rng = Rng::new(12);
        for _ in 0..100 {
            let text = random_desc(&mut rng);
            for top_k in [1, 5, 10] {
                let q = SemanticQuery {
                    top_k,
                    ..SemanticQuery::default()
                };
                assert_eq!(ix.search(&text, &q), exact.search(&text, &q), "{text}");
            }
        }
    }

    /// Updates go into the one graph; dead members are never returned, and
    /// once more than half are dead the graph is rebuilt.
    #[test]
    fn updates_keep_one_graph() {
        let config = graph_config();
        let mut ix = index(config.clone());
        let mut live: BTreeMap<NodeId, Node> = BTreeMap::new();
        for n in random_nodes(21, 200) {
            ix.insert(&n);
            live.insert(n.id, n);
        }
        let mut rng = Rng::new(22);
        let mut rebuilt = false;
        let mut last_dead = 0;
        for step in 0..1500 {
            let id = rng.below(250);
            if rng.below(5) == 0 {
                ix.remove(id);
                live.remove(&id);
            } else {
                let n = node(id, &random_desc(&mut rng), Some("function"));
                ix.insert(&n);
                live.insert(id, n);
            }
            let s = ix.stats();
            assert_eq!(s.segments.len(), 1, "{s:?}");
            let (members, dead) = s.segments[0];
            assert!(dead * 2 <= members, "{s:?}");
            assert!(s.pending < config.side_set_max, "{s:?}");
            assert_eq!(members - dead + s.pending, live.len(), "{s:?}");
            rebuilt |= dead < last_dead;
            last_dead = dead;
            if step % 150 == 0 {
                check_graph(ix.graph.as_ref().unwrap());
                for n in live.values().take(20) {
                    let hits = ix
                        .search(n.description.as_deref().unwrap(), &SemanticQuery::default())
                        .unwrap();
                    assert!((hits[0].score - 1.0).abs() < 1e-5, "{hits:?}");
                    assert!(hits.iter().all(|h| live.contains_key(&h.id)));
                }
            }
        }
        assert!(rebuilt);
    }

    /// The same changes give the same graph and the same answers.
    #[test]
    fn graphs_are_deterministic() {
        let build = || {
            let mut ix = index(graph_config());
            for n in random_nodes(31, 500) {
                ix.insert(&n);
            }
            for n in random_nodes(32, 200) {
                ix.insert(&n);
            }
            ix
        };
        let (a, b) = (build(), build());
        let (ga, gb) = (a.graph.as_ref().unwrap(), b.graph.as_ref().unwrap());
        assert_eq!(ga.base, gb.base);
        assert_eq!(ga.uppers, gb.uppers);
        assert_eq!(ga.entry, gb.entry);
        let mut rng = Rng::new(33);
        for _ in 0..50 {
            let text = random_desc(&mut rng);
            let q = SemanticQuery::default();
            assert_eq!(a.search(&text, &q), b.search(&text, &q));
        }
    }

    /// A type filter that leaves too few of the graph's candidates asks
    /// again for more, and in the end scans: a rare type is found whole.
    #[test]
    fn a_rare_type_is_found_whole() {
        let mut ix = index(graph_config());
        let mut exact = index(SemanticConfig {
            exact_threshold: usize::MAX,
            ..graph_config()
        });
        let mut nodes = random_nodes(41, 1200);
        for n in nodes.iter_mut().step_by(300) {
            n.kind = Some("rare".into());
        }
        for n in &nodes {
            ix.apply_deferred(None, Some(n));
            exact.apply_deferred(None, Some(n));
        }
        ix.maintain();
        exact.maintain();
        assert_eq!(ix.stats().segments, vec![(1200, 0)]);
        let q = SemanticQuery {
            top_k: 10,
            kind: Some("rare"),
            ..SemanticQuery::default()
        };
        let mut rng = Rng::new(42);
        for _ in 0..20 {
            let text = random_desc(&mut rng);
            let got = ix.search(&text, &q).unwrap();
            assert_eq!(got, exact.search(&text, &q).unwrap());
            assert!(got.iter().all(|h| h.id % 300 == 0), "{got:?}");
        }
        // Asking for a large part of the graph is an exact scan too.
        let big = SemanticQuery {
            top_k: 1000,
            ..SemanticQuery::default()
        };
        assert_eq!(
            ix.search("sort list", &big).unwrap(),
            exact.search("sort list", &big).unwrap()
        );
    }

    /// `map`, the stored form of `ix`, as format 2 (records without codes)
    /// or 3 (codes in the records) wrote it: no code groups.
    fn older_format(ix: &SemanticIndex, map: &SortedMap, format: u64) -> SortedMap {
        let mut old = map.clone();
        let g = ix.graph.as_ref().unwrap();
        for slot in 0..g.len() as u32 {
            let m = g.record(slot).unwrap();
            let own = m.dead.then(|| g.vector(slot)).flatten();
            let code = (format == 3).then(|| g.code(slot));
            old.insert(
                &stored::member_key(slot),
                &stored::encode_member(&m, own, code),
            )
            .unwrap();
        }
        let size = stored::group_size(ix.dim());
        for group in 0..(g.len() as u32).div_ceil(size) {
            old.remove(&stored::group_key(group)).unwrap().unwrap();
        }
        let header = Header {
            format,
            group: 0,
            ..ix.header_now()
        };
        old.insert(stored::HEADER_KEY, &stored::encode_header(&header))
            .unwrap();
        old
    }

    /// A stored index searched where it is, without loading it, answers
    /// as the loaded index does, with and without a type filter, with a
    /// pending set, and reads only part of the map.
    #[test]
    fn stored_index_is_searched_without_loading() {
        let mut ix = index(graph_config());
        let mut nodes = random_nodes(11, 2000);
        for n in nodes.iter_mut().step_by(3) {
            n.kind = Some("third".into());
        }
        for n in &nodes[..1995] {
            ix.apply_deferred(None, Some(n));
        }
        ix.maintain();
        for n in &nodes[1995..] {
            ix.apply_deferred(None, Some(n));
        }
        ix.apply_deferred(Some(&nodes[5]), None);
        assert!(ix.stats().pending > 0, "{:?}", ix.stats());
        let map = ix.persist().unwrap();
        let mut lazy = index(graph_config());
        assert_eq!(lazy.adopt(Some(&map)), Ok(true));
        assert!(lazy.searchable_stored());
        lazy.search("sort a list", &SemanticQuery::default())
            .unwrap();
        let read = lazy.lazy.borrow().read;
        assert!(read < nodes.len() / 2, "{read} members read by one search");
        let mut rng = Rng::new(5);
        for i in 0..30 {
            let text = random_desc(&mut rng);
            let q = SemanticQuery {
                top_k: 10,
                kind: (i % 3 == 0).then_some("third"),
                ..SemanticQuery::default()
            };
            assert_eq!(
                lazy.search(&text, &q).unwrap(),
                ix.search(&text, &q).unwrap()
            );
            let v = lazy.embed_query(&text).unwrap().unwrap();
            for n in nodes.iter().step_by(97) {
                assert_eq!(
                    lazy.score_of(n.id, &v).unwrap(),
                    ix.score_of(n.id, &v).unwrap()
                );
            }
        }
        assert!(!lazy.is_loaded());
        // A search that must be exact asks for the index to be loaded.
        let big = SemanticQuery {
            top_k: 1000,
            ..SemanticQuery::default()
        };
        assert_eq!(lazy.search("sort list", &big), Err(IndexError::Unloaded));
        // Indexes of formats 2 (member records without their codes) and
        // 3 (codes in the records, no groups) are searched the same way,
        // the codes made from the entries or read from the records; once
        // loaded, they are written whole in format 4.
        for format in [2, 3] {
            let old = older_format(&ix, &map, format);
            let mut two = index(graph_config());
            assert_eq!(two.adopt(Some(&old)), Ok(true));
            let mut rng = Rng::new(6);
            for _ in 0..10 {
                let text = random_desc(&mut rng);
                let q = SemanticQuery::default();
                assert_eq!(
                    two.search(&text, &q).unwrap(),
                    ix.search(&text, &q).unwrap()
                );
            }
            assert!(!two.is_loaded());
            assert!(two.lazy.borrow().groups_read() == 0);
            two.load().unwrap();
            assert!(!two.is_stored(), "format {format} is written again");
            assert_eq!(
                two.search("sort a list", &SemanticQuery::default())
                    .unwrap(),
                ix.search("sort a list", &SemanticQuery::default()).unwrap()
            );
            let again = two.persist().unwrap();
            let h = stored::decode_header(again.get(stored::HEADER_KEY).unwrap().unwrap()).unwrap();
            assert_eq!(h.format, stored::FORMAT);
            let keys = |m: &SortedMap| -> Vec<Vec<u8>> {
                m.iter().map(|kv| kv.unwrap().0.to_vec()).collect()
            };
            assert_eq!(keys(&again), keys(&map));
        }
        // Damage in what the search reads is an error naming it.
        let mut damaged = map.clone();
        let slot = ix.graph.as_ref().unwrap().entry.unwrap().0;
        let mut m = ix.graph.as_ref().unwrap().record(slot).unwrap();
        m.lists[0].push(99_999);
        damaged
            .insert(
                &stored::member_key(slot),
                &stored::encode_member(&m, None, None),
            )
            .unwrap();
        let mut b = index(graph_config());
        assert_eq!(b.adopt(Some(&damaged)), Ok(true));
        match b.search("sort", &SemanticQuery::default()) {
            Err(IndexError::StoredSemantic(why)) => assert!(why.contains("99999"), "{why}"),
            other => panic!("{other:?}"),
        }
        // The walk reads the entry point's code group first: damage there
        // (cut short, another count, another node than the record's) is
        // an error naming it.
        let size = stored::group_size(ix.dim());
        let group = slot / size;
        let key = stored::group_key(group);
        let good = map.get(&key).unwrap().unwrap().to_vec();
        let members = ix.graph.as_ref().unwrap().len() as u32;
        let expect = (members - group * size).min(size) as usize;
        let mut moved = stored::decode_group(&good, group, expect, ix.dim()).unwrap();
        moved.ids[(slot % size) as usize] += 1;
        let moved = stored::encode_group(
            (0..moved.len()).map(|i| (moved.ids[i], moved.dead[i], moved.code(i, ix.dim()))),
        );
        let mut fewer = vec![good[0] - 1];
        fewer.extend_from_slice(&good[1..]);
        for (bad, says) in [
            (
                good[..good.len() - 3].to_vec(),
                format!("code group {group}"),
            ),
            (fewer, format!("code group {group} holds")),
            (moved, format!("graph member {slot} is node")),
        ] {
            let mut damaged = map.clone();
            damaged.insert(&key, &bad).unwrap();
            let mut b = index(graph_config());
            assert_eq!(b.adopt(Some(&damaged)), Ok(true));
            match b.search("sort", &SemanticQuery::default()) {
                Err(IndexError::StoredSemantic(why)) => assert!(why.contains(&says), "{why}"),
                other => panic!("{other:?}"),
            }
            // Loading it refuses it too.
            assert!(b.load().is_err());
        }
        // A missing group.
        let mut damaged = map.clone();
        damaged.remove(&key).unwrap();
        let mut b = index(graph_config());
        assert_eq!(b.adopt(Some(&damaged)), Ok(true));
        match b.search("sort", &SemanticQuery::default()) {
            Err(IndexError::StoredSemantic(why)) => {
                assert!(
                    why.contains(&format!("code group {group} is not stored")),
                    "{why}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    /// A stored index round-trips; one whose parts disagree (a header
    /// counting another number of entries, an entry missing, another
    /// format) is refused with the reason, never loaded.
    #[test]
    fn stored_index_round_trips_and_refuses_disagreement() {
        let mut ix = index(graph_config());
        for n in random_nodes(7, 300) {
            ix.apply_deferred(None, Some(&n));
        }
        ix.maintain();
        let map = ix.persist().unwrap();
        let q = SemanticQuery::default();
        let mut back = index(graph_config());
        assert_eq!(back.adopt(Some(&map)), Ok(true));
        back.load().unwrap();
        assert_eq!(back.stats(), ix.stats());
        check_graph(back.graph.as_ref().unwrap());
        for t in ["sort", "tree graph", "list"] {
            assert_eq!(back.search(t, &q).unwrap(), ix.search(t, &q).unwrap());
        }

        let header = stored::decode_header(map.get(stored::HEADER_KEY).unwrap().unwrap()).unwrap();
        let refused = |m: &SortedMap| {
            let mut b = index(graph_config());
            match b.adopt(Some(m)) {
                Err(why) => why,
                Ok(_) => b.load().unwrap_err(),
            }
        };
        let mut stale = map.clone();
        let mut h = header.clone();
        h.entries += 1;
        stale
            .insert(stored::HEADER_KEY, &stored::encode_header(&h))
            .unwrap();
        assert!(refused(&stale).contains("counts disagree"));
        let mut missing = map.clone();
        let (id, _, _) = ix.entries().next().unwrap();
        missing.remove(&stored::entry_key(id)).unwrap();
        let why = refused(&missing);
        assert!(why.contains("entries") || why.contains("member"), "{why}");
        let mut other = map.clone();
        let mut bytes = stored::encode_header(&header);
        bytes[0] = 9;
        other.insert(stored::HEADER_KEY, &bytes).unwrap();
        assert!(refused(&other).contains("format 9"));
        // A code group whose code is not its member's vector's, or which
        // is missing.
        let mut recoded = map.clone();
        let key = stored::group_key(1);
        let mut bytes = recoded.get(&key).unwrap().unwrap().to_vec();
        let last = bytes.len() - 1;
        bytes[last] = bytes[last].wrapping_add(1);
        recoded.insert(&key, &bytes).unwrap();
        let why = refused(&recoded);
        assert!(why.contains("code group 1 disagrees"), "{why}");
        let mut lost = map.clone();
        lost.remove(&key).unwrap();
        let why = refused(&lost);
        assert!(why.contains("code group"), "{why}");
        // Format 3: a record's code that is not its vector's.
        let mut three = older_format(&ix, &map, 3);
        let g = ix.graph.as_ref().unwrap();
        let m = g.record(7).unwrap();
        let mut code = Code::new(&g.vector(7).unwrap().to_dense());
        code.code[0] = code.code[0].wrapping_add(1);
        three
            .insert(
                &stored::member_key(7),
                &stored::encode_member(&m, None, Some(code.view())),
            )
            .unwrap();
        assert!(refused(&three).contains("member 7's stored code"));
        let mut no_header = map.clone();
        no_header.remove(stored::HEADER_KEY).unwrap();
        assert!(refused(&no_header).contains("no header"));
        // A refused map leaves the index as it was.
        let mut kept = index(graph_config());
        kept.insert(&node(1, "sort a list", None));
        assert!(kept.adopt(Some(&stale)).is_err());
        assert!(kept.is_loaded());
        assert_eq!(kept.len(), 1);
    }
}
