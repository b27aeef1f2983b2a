//! The static embedder's entry lookup: an open-addressing table of entry
//! numbers keyed by the entries' own bytes. Built at run time for a table
//! handed over (`static_embed::Lookup`) and, for the built-in table, at
//! build time (core/build.rs includes this file, so both are built by the
//! same code), which spares every process that embeds the 84k inserts.
//! The hash is the same on every target (64-bit FNV-1a): the build runs
//! on the build machine, the lookup also in wasm32. Only `std` here.

/// Slots for `entries` entries: a power of two at least twice the entry
/// count, so probe runs stay short.
pub fn slot_count(entries: usize) -> usize {
    (entries * 2).next_power_of_two().max(16)
}

/// 64-bit FNV-1a of `key`.
pub fn hash(key: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in key {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Longest entry, in characters, that a segmentation tries.
pub const MAX_CHARS: usize = 24;

/// The slots (entry number + 1, 0 for an empty slot) of `entries`
/// entries whose bytes `string` gives, and the longest entry in
/// characters (at most `MAX_CHARS`). A repeated string: the later entry
/// wins.
pub fn build_slots<'a>(entries: usize, string: impl Fn(usize) -> &'a [u8]) -> (Vec<u32>, usize) {
    let size = slot_count(entries);
    let mask = size - 1;
    let mut slots = vec![0u32; size];
    let mut max_chars = 1;
    for i in 0..entries {
        let s = string(i);
        if s.is_empty() {
            continue;
        }
        // Characters: the bytes that do not continue one.
        let chars = s.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        max_chars = max_chars.max(chars);
        let mut at = hash(s) as usize & mask;
        loop {
            let slot = slots[at];
            if slot == 0 || string(slot as usize - 1) == s {
                slots[at] = i as u32 + 1;
                break;
            }
            at = (at + 1) & mask;
        }
    }
    (slots, max_chars.min(MAX_CHARS))
}
