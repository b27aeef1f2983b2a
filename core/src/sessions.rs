//! Session snapshots on the engine's public face: save every binding the
//! session defined as content-addressed entries, restore them into any
//! engine of the same build, list and diff snapshots, and keep a session
//! as a tree of turns (roll back to or fork from any earlier one).
//!
//! Entries live where the host keeps them, behind [`SnapshotStore`]: the
//! engine does no I/O. A snapshot itself is a small manifest (binding
//! name → entry hash) in a checked, keyed envelope; a session saved as
//! one value ([`Engine::save_session`]) is a manifest that carries its
//! entries inline. The format is in `core/src/vm/snapshot.rs` and
//! docs/ARCHITECTURE.md.
//!
//! ```
//! use arbores_core::{Engine, MemorySnapshotStore, Turns};
//!
//! let mut store = MemorySnapshotStore::new(); // or the host's own SnapshotStore
//! let mut e = Engine::new();
//! e.eval("(define n 0) (define (bump!) (set! n (+ n 1)) n)");
//! let saved = e.save_snapshot(&mut store).unwrap(); // entries go to the store
//! let mut fresh = Engine::new();
//! fresh.restore_snapshot(&saved.manifest, &store).unwrap();
//! assert_eq!(fresh.eval("(bump!)").value.as_deref(), Some("1"));
//!
//! // Turns: a snapshot after each turn; roll back or fork from any of them.
//! let mut turns = Turns::new();
//! let t0 = turns.record(&e, &mut store, "turn 0").unwrap();
//! e.eval("(bump!)");
//! turns.record(&e, &mut store, "turn 1").unwrap();
//! turns.go_to(t0, &mut e, &store).unwrap(); // back to n = 0
//! assert_eq!(e.eval("n").value.as_deref(), Some("0"));
//! ```

use std::collections::BTreeMap;

use crate::api::Engine;
pub use crate::vm::EntryHash;
use crate::vm::Manifest;

/// Where the entries of snapshots are kept: a map from an entry's hash
/// (BLAKE3 of its bytes) to its bytes. Entries never change, so a store
/// only adds.
pub trait SnapshotStore {
    /// The bytes of entry `hash`, if the store has them.
    fn get(&self, hash: &EntryHash) -> Option<Vec<u8>>;
    /// Keeps an entry; true if it was not there before.
    fn put(&mut self, hash: &EntryHash, bytes: &[u8]) -> Result<bool, String>;
}

/// A [`SnapshotStore`] in memory.
#[derive(Clone, Default)]
pub struct MemorySnapshotStore {
    entries: BTreeMap<EntryHash, Vec<u8>>,
}

impl MemorySnapshotStore {
    pub fn new() -> MemorySnapshotStore {
        MemorySnapshotStore::default()
    }

    /// How many entries it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The bytes of all its entries.
    pub fn total_bytes(&self) -> usize {
        self.entries.values().map(Vec::len).sum()
    }
}

impl SnapshotStore for MemorySnapshotStore {
    fn get(&self, hash: &EntryHash) -> Option<Vec<u8>> {
        self.entries.get(hash).cloned()
    }

    fn put(&mut self, hash: &EntryHash, bytes: &[u8]) -> Result<bool, String> {
        if self.entries.contains_key(hash) {
            return Ok(false);
        }
        self.entries.insert(*hash, bytes.to_vec());
        Ok(true)
    }
}

/// A snapshot just saved.
#[derive(Clone, Debug)]
pub struct SavedSnapshot {
    /// The manifest: what [`Engine::restore_snapshot`] takes.
    pub manifest: Vec<u8>,
    /// How many bindings it holds.
    pub bindings: usize,
    /// How many of its entries the store did not have yet.
    pub new_entries: usize,
    /// The bytes of those new entries.
    pub new_bytes: usize,
    /// Syntax the session defined which a snapshot cannot hold (a macro
    /// made by another macro, or in a local scope).
    pub skipped: Vec<String>,
}

/// What a snapshot holds: each binding's name and entry, by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotListing {
    /// The program's bindings, by name.
    pub bindings: Vec<(String, EntryHash)>,
    /// The engine's own state the snapshot holds too (its cells,
    /// `NAME@(arbores)`: the host tools defined, ...), restored with the
    /// rest but not the program's to list.
    pub engine: Vec<(String, EntryHash)>,
    /// Syntax the session defined that the snapshot could not hold.
    pub skipped: Vec<String>,
}

/// How two snapshots differ, by binding name (each list sorted).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Bindings in both whose entries differ.
    pub changed: Vec<String>,
}

impl SnapshotListing {
    /// The binding names.
    pub fn names(&self) -> Vec<&str> {
        self.bindings.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// What changed from `self` to `newer`.
    pub fn diff(&self, newer: &SnapshotListing) -> SnapshotDiff {
        let old: BTreeMap<&str, &EntryHash> =
            self.bindings.iter().map(|(n, h)| (n.as_str(), h)).collect();
        let new: BTreeMap<&str, &EntryHash> = newer
            .bindings
            .iter()
            .map(|(n, h)| (n.as_str(), h))
            .collect();
        let mut d = SnapshotDiff::default();
        for (name, h) in &new {
            match old.get(name) {
                None => d.added.push(name.to_string()),
                Some(o) if o != h => d.changed.push(name.to_string()),
                Some(_) => {}
            }
        }
        for name in old.keys() {
            if !new.contains_key(name) {
                d.removed.push(name.to_string());
            }
        }
        d
    }
}

/// What a snapshot holds, the engine's own cells (`globals::ENGINE_CELL`)
/// apart from the program's bindings.
fn listing(m: Manifest) -> SnapshotListing {
    let (engine, bindings) = m
        .bindings
        .into_iter()
        .partition(|(name, _)| name.ends_with(crate::compiler::globals::ENGINE_CELL));
    SnapshotListing {
        bindings,
        engine,
        skipped: m.skipped,
    }
}

impl Engine {
    /// Saves every global binding the session defined or changed (data,
    /// mutable state, records, procedures and closures, taken from the
    /// heap) as entries in `store`, one per binding, and returns the
    /// manifest that names them. Entries the store already has (unchanged
    /// bindings) are not written again. The session's syntax (its macros,
    /// a library's it imported) and what its imports made names stand
    /// for are held in the manifest; a macro it cannot hold (made by
    /// another macro, or in a local scope) is named in `skipped`. Values
    /// of stored knowledge are not saved: they are loaded from the
    /// knowledge base on use.
    pub fn save_snapshot(&self, store: &mut dyn SnapshotStore) -> Result<SavedSnapshot, String> {
        let saved = self.vm.save_session()?;
        let mut new_entries = 0;
        let mut new_bytes = 0;
        for (hash, bytes) in &saved.entries {
            if store.put(hash, bytes)? {
                new_entries += 1;
                new_bytes += bytes.len();
            }
        }
        let manifest = self.vm.seal_manifest(
            &saved.bindings,
            &saved.skipped,
            &saved.syntax,
            &[],
            &self.dump_key,
        )?;
        Ok(SavedSnapshot {
            manifest,
            bindings: saved.bindings.len(),
            new_entries,
            new_bytes,
            skipped: saved.skipped,
        })
    }

    /// Replaces the session's bindings with those of the snapshot
    /// `manifest`, its entries read from `store` (or carried in the
    /// manifest): afterwards the session is as it was when saved, a
    /// binding made since is unbound again, and its syntax and imports
    /// are the snapshot's. Bytes that are not a
    /// snapshot, of another format or build, damaged, signed with another
    /// key, or entries missing or damaged are refused with an error that
    /// says which, and nothing changes.
    pub fn restore_snapshot(
        &mut self,
        manifest: &[u8],
        store: &dyn SnapshotStore,
    ) -> Result<SnapshotListing, String> {
        let m = self.vm.read_manifest(manifest, &self.dump_key)?;
        self.vm.restore_session(&m, &|h| store.get(h))?;
        Ok(listing(m))
    }

    /// What the snapshot `manifest` holds (checked as a restore checks it,
    /// its entries not read).
    pub fn snapshot_listing(&self, manifest: &[u8]) -> Result<SnapshotListing, String> {
        Ok(listing(self.vm.read_manifest(manifest, &self.dump_key)?))
    }

    /// The whole session as one value: a snapshot that carries its
    /// entries, for a host that keeps no entry store (the browser keeps
    /// it in IndexedDB).
    pub fn save_session(&self) -> Result<Vec<u8>, String> {
        let saved = self.vm.save_session()?;
        let inline: Vec<&[u8]> = saved.entries.values().map(Vec::as_slice).collect();
        self.vm.seal_manifest(
            &saved.bindings,
            &saved.skipped,
            &saved.syntax,
            &inline,
            &self.dump_key,
        )
    }

    /// Restores bytes made by [`Engine::save_session`] (or a manifest
    /// whose entries are all inline), as [`Engine::restore_snapshot`].
    pub fn restore_session(&mut self, bytes: &[u8]) -> Result<SnapshotListing, String> {
        self.restore_snapshot(bytes, &MemorySnapshotStore::new())
    }
}

/// One turn of a session: the snapshot taken after it.
#[derive(Clone, Debug)]
pub struct Turn {
    /// The turn it followed, if any.
    pub parent: Option<usize>,
    /// What the host says the turn was (e.g. the source evaluated).
    pub label: String,
    pub manifest: Vec<u8>,
}

/// A session as a tree of turns: a snapshot after each turn, rollback to
/// any earlier turn (the next turn then starts a new branch from it), and
/// forks (the same turns restored in another engine, continued apart).
/// Turns are numbered from 0 in the order they were recorded.
#[derive(Clone, Debug, Default)]
pub struct Turns {
    turns: Vec<Turn>,
    current: Option<usize>,
}

impl Turns {
    pub fn new() -> Turns {
        Turns::default()
    }

    /// Snapshots `engine` as a turn following the current one and makes
    /// it current; returns its number.
    pub fn record(
        &mut self,
        engine: &Engine,
        store: &mut dyn SnapshotStore,
        label: &str,
    ) -> Result<usize, String> {
        let saved = engine.save_snapshot(store)?;
        self.turns.push(Turn {
            parent: self.current,
            label: label.to_string(),
            manifest: saved.manifest,
        });
        self.current = Some(self.turns.len() - 1);
        Ok(self.turns.len() - 1)
    }

    /// Restores turn `n` into `engine` (the same one, to roll back; a
    /// fresh one, to fork) and makes it current.
    pub fn go_to(
        &mut self,
        n: usize,
        engine: &mut Engine,
        store: &dyn SnapshotStore,
    ) -> Result<(), String> {
        let turn = self.turns.get(n).ok_or_else(|| {
            format!(
                "no turn {n} (the session has turns 0 to {})",
                self.turns.len() as i64 - 1
            )
        })?;
        engine.restore_snapshot(&turn.manifest, store)?;
        self.current = Some(n);
        Ok(())
    }

    /// The turn the next one will follow.
    pub fn current(&self) -> Option<usize> {
        self.current
    }

    pub fn get(&self, n: usize) -> Option<&Turn> {
        self.turns.get(n)
    }

    pub fn len(&self) -> usize {
        self.turns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    /// The turns that followed turn `n` (more than one: branches).
    pub fn children(&self, n: usize) -> Vec<usize> {
        (0..self.turns.len())
            .filter(|&i| self.turns[i].parent == Some(n))
            .collect()
    }

    /// Turn `n` and its ancestors, oldest first.
    pub fn path(&self, n: usize) -> Vec<usize> {
        let mut path = Vec::new();
        let mut at = Some(n).filter(|&n| n < self.turns.len());
        while let Some(i) = at {
            path.push(i);
            at = self.turns[i].parent;
        }
        path.reverse();
        path
    }
}
