//! Hash tables as heap objects (`(scheme hash-table)`, SRFI 125 and 69).
//!
//! A table keeps its entries in insertion order in three parallel vectors
//! (keys, values, the keys' hashes) and an index of entry numbers, a
//! `hashbrown::HashTable` keyed by the stored hashes. The hash of a key
//! and the equivalence of two keys depend on the table's [`Kind`] and need
//! the heap (an `equal?` table hashes a list by its contents), so this
//! module only stores and finds: the caller computes a key's hash and
//! gives the equivalence as a closure (`builtins::hashtables`).
//!
//! The collector never moves or renumbers a live object, so a hash made
//! from an object's heap index (`eq?` and `eqv?` tables) stays right as
//! long as the table holds the key. What does renumber objects is loading
//! a dump or a saved session: a table read back is hashed again
//! (`vm::image`), its hashes not trusted.

use crate::value::Value;

/// The equivalence a table uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Eq,
    Eqv,
    Equal,
    String,
    StringCi,
    /// A procedure of the program's: the library (in Scheme) calls the
    /// hash function and the equivalence, and stores the key under the
    /// hash it got; here keys of a custom table are matched by `eq?`.
    Custom,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Eq,
        Kind::Eqv,
        Kind::Equal,
        Kind::String,
        Kind::StringCi,
        Kind::Custom,
    ];

    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(c: u8) -> Option<Kind> {
        Kind::ALL.get(c as usize).copied()
    }
}

#[derive(Clone)]
pub struct HashTable {
    pub kind: Kind,
    pub mutable: bool,
    /// The equivalence and hash procedures the table was made with (or
    /// `#f`), for `hash-table-equivalence-function` and kin; a custom
    /// table calls them.
    pub equiv: Value,
    pub hash: Value,
    keys: Vec<Value>,
    values: Vec<Value>,
    hashes: Vec<u64>,
    index: hashbrown::HashTable<u32>,
}

impl HashTable {
    pub fn new(kind: Kind, equiv: Value, hash: Value, capacity: usize) -> HashTable {
        HashTable {
            kind,
            mutable: true,
            equiv,
            hash,
            keys: Vec::with_capacity(capacity),
            values: Vec::with_capacity(capacity),
            hashes: Vec::with_capacity(capacity),
            index: hashbrown::HashTable::with_capacity(capacity),
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn keys(&self) -> &[Value] {
        &self.keys
    }

    pub fn values(&self) -> &[Value] {
        &self.values
    }

    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    pub fn key(&self, i: usize) -> Value {
        self.keys[i]
    }

    pub fn value(&self, i: usize) -> Value {
        self.values[i]
    }

    /// Approximate bytes held, for the memory cap.
    pub fn size(&self) -> usize {
        self.keys.capacity() * 16
            + self.values.capacity() * 16
            + self.hashes.capacity() * 8
            + self.index.capacity() * 5
    }

    /// The entry whose key has hash `h` and for which `same(key)` holds.
    #[inline]
    pub fn find(&self, h: u64, mut same: impl FnMut(Value) -> bool) -> Option<usize> {
        let keys = &self.keys;
        let hashes = &self.hashes;
        self.index
            .find(h, |&i| hashes[i as usize] == h && same(keys[i as usize]))
            .map(|&i| i as usize)
    }

    /// The keys stored under hash `h` (a custom table's candidates).
    pub fn keys_with_hash(&self, h: u64) -> Vec<Value> {
        let mut out: Vec<Value> = self
            .index
            .iter_hash(h)
            .filter(|&&i| self.hashes[i as usize] == h)
            .map(|&i| self.keys[i as usize])
            .collect();
        out.reverse();
        out
    }

    /// Adds an entry; the caller has checked the key is not there.
    pub fn push(&mut self, h: u64, key: Value, value: Value) {
        let i = self.keys.len() as u32;
        self.keys.push(key);
        self.values.push(value);
        self.hashes.push(h);
        let hashes = &self.hashes;
        self.index.insert_unique(h, i, |&j| hashes[j as usize]);
    }

    pub fn set_value(&mut self, i: usize, value: Value) {
        self.values[i] = value;
    }

    /// Removes entry `i`; the last entry takes its place.
    pub fn remove(&mut self, i: usize) {
        let last = self.keys.len() - 1;
        if let Ok(e) = self.index.find_entry(self.hashes[i], |&j| j as usize == i) {
            e.remove();
        }
        if i != last {
            if let Some(slot) = self
                .index
                .find_mut(self.hashes[last], |&j| j as usize == last)
            {
                *slot = i as u32;
            }
        }
        self.keys.swap_remove(i);
        self.values.swap_remove(i);
        self.hashes.swap_remove(i);
    }

    pub fn clear(&mut self) {
        self.keys.clear();
        self.values.clear();
        self.hashes.clear();
        self.index.clear();
    }

    /// Entries `(key, value)` to rebuild the index from (a table read
    /// back from a dump); `rehash` then indexes them.
    pub fn from_entries(
        kind: Kind,
        mutable: bool,
        equiv: Value,
        hash: Value,
        entries: Vec<(Value, Value, u64)>,
    ) -> HashTable {
        let mut t = HashTable::new(kind, equiv, hash, entries.len());
        t.mutable = mutable;
        for (k, v, h) in entries {
            t.keys.push(k);
            t.values.push(v);
            t.hashes.push(h);
        }
        t
    }

    /// Indexes the entries again under the hashes `hash` gives (one per
    /// entry, or `None` to keep the stored one).
    pub fn rehash(&mut self, mut hash: impl FnMut(Value) -> Option<u64>) {
        self.index.clear();
        for i in 0..self.keys.len() {
            if let Some(h) = hash(self.keys[i]) {
                self.hashes[i] = h;
            }
            let hashes = &self.hashes;
            self.index
                .insert_unique(hashes[i], i as u32, |&j| hashes[j as usize]);
        }
    }
}
