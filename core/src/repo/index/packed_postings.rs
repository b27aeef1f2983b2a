//! A block of postings in fixed-width fields: every value of a field takes
//! as many bits as the block's largest, so that the place of each is known
//! without reading the ones before it. The widths written are whole bytes
//! (the largest's bits rounded up to 8, 16, 24 …; 0 where every value is
//! 0), so that a field of one or two bytes a value is unpacked by a loop
//! the compiler widens many values at a time: a tenth more bytes in the
//! index, a fifth less time for a Chinese query at a million nodes
//! (docs/PERFORMANCE.md). Blocks written before hold widths of any number
//! of bits, and read as they did.
//!
//! Numbers of one or two bytes each (LEB128) made each posting's place wait
//! on the size of the one before, and which size comes next is a guess the
//! processor often gets wrong: decoding three of them was 5.5 ns of the 7 a
//! Chinese query at a million nodes spends on each posting it reads
//! (docs/PERFORMANCE.md). Here a value is one load, a shift and a mask.
//!
//! The bytes: `FORMAT`; the number of postings and the first id (LEB128);
//! the widths in bits of the three fields (a byte each); then, packed from
//! the lowest bit of each byte, each gap between ids less one, each count
//! less one, and each length, field after field. Unused bits of the last
//! byte are zero.

use std::cell::RefCell;

use crate::repo::cas::DecodeError;
use crate::repo::forest::codec::{Reader, Writer};
use crate::repo::node::NodeId;

/// One posting: (node, count, length).
pub type Posting = (NodeId, u64, u64);

/// A packed block's first byte: a block of LEB128 numbers starts with its
/// number of postings, never 0.
pub const FORMAT: u8 = 0;

/// The widest field (a value is read in one 64-bit load from its byte).
const WIDEST: u32 = 56;

/// How many bits `v` takes.
fn width(v: u64) -> u32 {
    u64::BITS - v.leading_zeros()
}

/// The block packed, or `None` if a value is too wide (an id gap past
/// 2^56, which no store that gives ids in order makes) or not a posting
/// (ids not ascending, a count of 0): the caller keeps such a block the
/// other way.
pub fn encode(block: &[Posting]) -> Option<Vec<u8>> {
    #[cfg(test)]
    if WRITE_BITS.get() {
        return encode_in(block, false);
    }
    encode_in(block, true)
}

#[cfg(test)]
thread_local! {
    /// Whether this thread's `encode` packs in bits, as blocks were written
    /// before whole bytes: for tests of stores that hold both.
    pub static WRITE_BITS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `encode` with the widths in bits, as blocks were written before whole
/// bytes (what stores made then hold).
#[cfg(test)]
pub fn encode_bits(block: &[Posting]) -> Option<Vec<u8>> {
    encode_in(block, false)
}

/// `encode`, the widths rounded up to whole bytes if `whole_bytes`.
fn encode_in(block: &[Posting], whole_bytes: bool) -> Option<Vec<u8>> {
    let (&(first, _, _), _) = block.split_first()?;
    // The widths, in one pass that also refuses what is no posting list.
    let mut widths = [0u32; 3];
    for (i, &(id, count, len)) in block.iter().enumerate() {
        if i > 0 {
            let gap = id.checked_sub(block[i - 1].0)?.checked_sub(1)?;
            widths[0] = widths[0].max(width(gap));
        }
        widths[1] = widths[1].max(width(count.checked_sub(1)?));
        widths[2] = widths[2].max(width(len));
    }
    if widths.iter().any(|&w| w > WIDEST) {
        return None;
    }
    if whole_bytes {
        // `WIDEST` is itself whole bytes.
        for w in &mut widths {
            *w = w.next_multiple_of(8);
        }
    }
    let mut w = Writer {
        buf: Vec::with_capacity(16 + block.len() * 3),
    };
    w.byte(FORMAT);
    w.uint(block.len() as u64);
    w.uint(first);
    for &width in &widths {
        w.byte(width as u8);
    }
    let mut bits = Bits {
        out: w.buf,
        acc: 0,
        held: 0,
    };
    for pair in block.windows(2) {
        bits.put(pair[1].0 - pair[0].0 - 1, widths[0]);
    }
    for p in block {
        bits.put(p.1 - 1, widths[1]);
    }
    for p in block {
        bits.put(p.2, widths[2]);
    }
    Some(bits.finish())
}

/// Bits written from the lowest of each byte.
struct Bits {
    out: Vec<u8>,
    acc: u64,
    /// Bits held in `acc`, fewer than 8 between values.
    held: u32,
}

impl Bits {
    /// Writes `v` (less than 2^`width`, `width` at most `WIDEST`).
    fn put(&mut self, v: u64, width: u32) {
        if width == 0 {
            return;
        }
        self.acc |= v << self.held;
        self.held += width;
        while self.held >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.held -= 8;
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.held > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// Appends the postings of packed block `bytes` to `out` (emptied first),
/// checking that ids ascend and counts are at most their lengths (what a
/// block of any format must hold); the error says what is wrong and where.
pub fn decode(bytes: &[u8], out: &mut Vec<Posting>) -> Result<(), String> {
    // The columns' buffers are kept between calls (a look-up decodes one
    // block, and would otherwise allocate six).
    thread_local! {
        static COLUMNS: RefCell<Columns> = RefCell::default();
    }
    out.clear();
    COLUMNS.with_borrow_mut(|cols| {
        let layout = Layout::read(bytes)?;
        cols.unpack_ids(bytes, &layout)?;
        cols.unpack_wide(&layout)?;
        let [counts, lens] = &cols.wide;
        out.extend(
            cols.ids
                .iter()
                .zip(counts.iter().zip(lens))
                .map(|(&id, (&count, &len))| (id, count, len)),
        );
        Ok(())
    })
}

/// A count or length as the columns hold it: at most `u32::MAX` (more
/// only in a damaged block).
pub fn saturated(v: u64) -> u32 {
    v.min(u32::MAX.into()) as u32
}

/// A block's postings as three columns, for a reader of whole lists: each
/// column is unpacked by a loop of its own (one load, a shift and a mask a
/// value, no value waiting on the one before), and what a caller computes
/// from a column runs over an array, which the compiler vectorizes.
#[derive(Clone, Debug, Default)]
pub struct Columns {
    /// The nodes, ascending.
    pub ids: Vec<NodeId>,
    /// Each posting's count, at most `u32::MAX` (more only in a damaged
    /// block, taken as that, as `lexical`'s parts take it).
    pub counts: Vec<u32>,
    /// Each posting's length, at most `u32::MAX` likewise.
    pub lens: Vec<u32>,
    /// The block's packed bits and 16 zero bytes: every value is one
    /// 8-byte load inside it.
    padded: Vec<u8>,
    /// One field's bits from the first of a byte (`unpack`).
    aligned: Vec<u8>,
    /// Counts and lengths wider than 32 bits (`unpack_wide`).
    wide: [Vec<u64>; 2],
}

impl Columns {
    /// The postings of packed block `bytes`, checked as `decode` checks
    /// them.
    pub fn decode(&mut self, bytes: &[u8]) -> Result<(), String> {
        let layout = Layout::read(bytes)?;
        self.unpack_ids(bytes, &layout)?;
        let [count_width, len_width] = [layout.fields[1].width, layout.fields[2].width];
        // A count is kept less one: below 32 bits it still fits in 32.
        if count_width < u32::BITS && len_width <= u32::BITS {
            let n = self.ids.len();
            self.counts.clear();
            self.lens.clear();
            unpack(
                &self.padded,
                layout.fields[1],
                n,
                &mut self.aligned,
                &mut self.counts,
                |v| v as u32 + 1,
            );
            unpack(
                &self.padded,
                layout.fields[2],
                n,
                &mut self.aligned,
                &mut self.lens,
                |v| v as u32,
            );
            // One pass without a branch a posting; the first wrong one is
            // sought only when there is one.
            let wrong = self
                .counts
                .iter()
                .zip(&self.lens)
                .fold(false, |w, (c, l)| w | (c > l));
            if wrong {
                let counts = self.counts.iter().map(|&c| c.into());
                let lens = self.lens.iter().map(|&l| l.into());
                return Err(first_wrong(&self.ids, counts, lens));
            }
            return Ok(());
        }
        self.unpack_wide(&layout)?;
        let [counts, lens] = &self.wide;
        self.counts.clear();
        self.counts.extend(counts.iter().map(|&c| saturated(c)));
        self.lens.clear();
        self.lens.extend(lens.iter().map(|&l| saturated(l)));
        Ok(())
    }

    /// `rows` (postings of a block kept the first way) as columns.
    pub fn set_rows(&mut self, rows: &[Posting]) {
        self.ids.clear();
        self.ids.extend(rows.iter().map(|p| p.0));
        self.counts.clear();
        self.counts.extend(rows.iter().map(|p| saturated(p.1)));
        self.lens.clear();
        self.lens.extend(rows.iter().map(|p| saturated(p.2)));
    }

    /// The block's ids into `ids` (its bits into `padded` first).
    fn unpack_ids(&mut self, bytes: &[u8], layout: &Layout) -> Result<(), String> {
        self.padded.clear();
        self.padded.extend_from_slice(&bytes[layout.packed..]);
        self.padded.extend_from_slice(&[0; 16]);
        // The first id, then each gap (less one) after it: no id passes
        // the largest if the widest gaps would not.
        let gaps = layout.fields[0];
        let most = (layout.n as u64 - 1)
            .checked_mul(gaps.mask + 1)
            .and_then(|all| all.checked_add(layout.first));
        if most.is_none() {
            let mut id = layout.first;
            for i in 1..layout.n {
                let gap = gaps.get(&self.padded, i - 1);
                id = id
                    .checked_add(gap + 1)
                    .ok_or_else(|| format!("node ids past {id}"))?;
            }
        }
        self.ids.clear();
        self.ids.push(layout.first);
        unpack(
            &self.padded,
            gaps,
            layout.n - 1,
            &mut self.aligned,
            &mut self.ids,
            |gap| gap + 1,
        );
        // Each id the one before and its gap, in a loop of its own: a
        // chain of additions with nothing else waiting on them.
        let mut id = layout.first;
        for next in &mut self.ids[1..] {
            id = id.wrapping_add(*next);
            *next = id;
        }
        Ok(())
    }

    /// The counts and lengths at full width, checked.
    fn unpack_wide(&mut self, layout: &Layout) -> Result<(), String> {
        let n = layout.n;
        let [counts, lens] = &mut self.wide;
        counts.clear();
        lens.clear();
        let aligned = &mut self.aligned;
        unpack(&self.padded, layout.fields[1], n, aligned, counts, |v| {
            v + 1
        });
        unpack(&self.padded, layout.fields[2], n, aligned, lens, |v| v);
        if counts.iter().zip(lens.iter()).any(|(c, l)| c > l) {
            return Err(first_wrong(
                &self.ids,
                counts.iter().copied(),
                lens.iter().copied(),
            ));
        }
        Ok(())
    }
}

/// The error for the first posting whose count is above its length.
fn first_wrong(
    ids: &[NodeId],
    counts: impl Iterator<Item = u64>,
    lens: impl Iterator<Item = u64>,
) -> String {
    ids.iter()
        .zip(counts.zip(lens))
        .find(|(_, (count, len))| count > len)
        .map_or_else(String::new, |(id, (count, len))| {
            format!("node {id} counts {count} of a length {len}")
        })
}

/// Where a packed block's values are.
struct Layout {
    /// The number of postings, at least 1.
    n: usize,
    first: NodeId,
    /// Where the packed bits start in the block's bytes.
    packed: usize,
    /// The gaps, the counts and the lengths.
    fields: [Field; 3],
}

impl Layout {
    /// The layout of block `bytes`, whose sizes are checked against each
    /// other: every value it places is inside the packed bits.
    fn read(bytes: &[u8]) -> Result<Layout, String> {
        let mut r = Reader::new(bytes);
        let at = |e: DecodeError| format!("{} at byte {}", e.what, e.offset);
        if r.byte("the format").map_err(at)? != FORMAT {
            return Err("not a packed block".into());
        }
        let n = r.uint("a block's size").map_err(at)?;
        let first = r.uint("a node id").map_err(at)?;
        let mut widths = [0u32; 3];
        for w in &mut widths {
            *w = r.byte("a width").map_err(at)?.into();
        }
        if let Some(w) = widths.iter().find(|&&w| w > WIDEST) {
            return Err(format!("a field of {w} bits"));
        }
        // Every length is at least its count, so at least 1: a block cannot
        // claim more postings than its bits hold lengths for.
        if n == 0 || widths[2] == 0 {
            return Err("no postings".into());
        }
        let packed = &bytes[r.pos()..];
        let total = (n - 1)
            .checked_mul(widths[0].into())
            .zip(n.checked_mul(u64::from(widths[1] + widths[2])))
            .and_then(|(a, b)| a.checked_add(b))
            .filter(|&bits| bits.div_ceil(8) == packed.len() as u64)
            .ok_or_else(|| format!("{n} postings in {} bytes", packed.len()))?;
        if total % 8 != 0 && packed.last().is_some_and(|&b| b >> (total % 8) != 0) {
            return Err("bits set past the last value".into());
        }
        // At most 8 postings a byte (lengths take a bit at least).
        let n = n as usize;
        let field = |at: usize, width: u32| Field {
            at,
            width,
            mask: if width == 0 {
                0
            } else {
                u64::MAX >> (u64::BITS - width)
            },
        };
        let gaps = field(0, widths[0]);
        let counts = field((n - 1) * widths[0] as usize, widths[1]);
        let lens = field(counts.at + n * widths[1] as usize, widths[2]);
        Ok(Layout {
            n,
            first,
            packed: r.pos(),
            fields: [gaps, counts, lens],
        })
    }
}

/// One field's place in a packed block.
#[derive(Clone, Copy)]
struct Field {
    /// The bit its first value starts at.
    at: usize,
    width: u32,
    mask: u64,
}

impl Field {
    /// Value `i` of `padded` (the packed bits and zero bytes after them;
    /// the caller knows the block holds the value).
    #[inline(always)]
    fn get(&self, padded: &[u8], i: usize) -> u64 {
        let bit = self.at + i * self.width as usize;
        let at = bit / 8;
        let word = padded
            .get(at..at + 8)
            .map_or(0, |w| u64::from_le_bytes(w.try_into().unwrap_or_default()));
        (word >> (bit % 8)) & self.mask
    }
}

/// The first `n` values of `field` in `padded`, each through `f`, after
/// what `out` holds (`aligned` is room for the field's bits).
///
/// A field of up to 32 bits is first copied so that it starts at a byte's
/// first bit; then each 8 values take a whole number of bytes and are
/// unpacked by code made for their width, whose offsets and shifts are
/// constants, with no value waiting on another (a block decodes in half
/// the time it took value by value; docs/PERFORMANCE.md).
#[inline(always)]
fn unpack<T: Copy>(
    padded: &[u8],
    field: Field,
    n: usize,
    aligned: &mut Vec<u8>,
    out: &mut Vec<T>,
    mut f: impl FnMut(u64) -> T,
) {
    // A field of whole bytes from a byte's first bit: loops the compiler
    // widens many values at a time.
    if field.at.is_multiple_of(8) {
        let from = field.at / 8;
        match field.width {
            8 => {
                if let Some(bytes) = padded.get(from..from + n) {
                    out.extend(bytes.iter().map(|&b| f(u64::from(b))));
                    return;
                }
            }
            16 => {
                if let Some(bytes) = padded.get(from..from + 2 * n) {
                    let (pairs, _) = bytes.as_chunks::<2>();
                    out.extend(pairs.iter().map(|&p| f(u64::from(u16::from_le_bytes(p)))));
                    return;
                }
            }
            _ => {}
        }
    }
    macro_rules! widths {
        ($($w:literal)*) => {
            match field.width {
                0 => {
                    // Every value 0 (every count 1, in most blocks).
                    out.extend((0..n).map(|_| f(0)));
                    return;
                }
                $($w => {
                    align(padded, field, n, aligned);
                    return unpack_width::<$w, T>(aligned, n, out, f);
                })*
                _ => {}
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32);
    out.extend((0..n).map(|i| f(field.get(padded, i))));
}

/// The `n` values of `field` (in `padded`) into `aligned` from its first
/// bit, and 40 zero bytes after (the last eight values of up to 32 bits
/// each are read whole).
#[inline(always)]
fn align(padded: &[u8], field: Field, n: usize, aligned: &mut Vec<u8>) {
    let (from, shift) = (field.at / 8, field.at % 8);
    let len = (n * field.width as usize).div_ceil(8);
    let words = len.div_ceil(8);
    aligned.clear();
    let bits = padded.get(from..).unwrap_or_default();
    let load = |i: usize| {
        bits.get(i..i + 8)
            .map_or(0, |w| u64::from_le_bytes(w.try_into().unwrap_or_default()))
    };
    if shift == 0 {
        aligned.extend_from_slice(bits.get(..len).unwrap_or_default());
    } else {
        // Eight bytes at a time: the next word's low bits fill the top.
        for j in 0..words {
            let w = load(8 * j) >> shift | load(8 * j + 8) << (64 - shift);
            aligned.extend_from_slice(&w.to_le_bytes());
        }
    }
    aligned.extend_from_slice(&[0; 40]);
}

/// `unpack` of `n` values `W` bits wide, from the first bit of `bits`
/// (followed by 40 zero bytes at least: `align`).
#[inline(always)]
fn unpack_width<const W: usize, T: Copy>(
    bits: &[u8],
    n: usize,
    out: &mut Vec<T>,
    mut f: impl FnMut(u64) -> T,
) {
    let mask = u64::MAX >> (64 - W);
    out.reserve(n.next_multiple_of(8));
    let end = out.len() + n;
    let mut i = 0;
    // Eight values are `W` bytes: their bytes and shifts are the same
    // from one eight to the next. The last eight may reach into the zero
    // bytes after the values, and are cut back to `n`.
    while i < n {
        let Some(group) = bits.get(i / 8 * W..i / 8 * W + W + 8) else {
            break;
        };
        let value = |k: usize| {
            let at = k * W / 8;
            let word = u64::from_le_bytes(group[at..at + 8].try_into().unwrap_or_default());
            (word >> (k * W % 8)) & mask
        };
        let values: [T; 8] = std::array::from_fn(|k| f(value(k)));
        out.extend_from_slice(&values);
        i += 8;
    }
    out.truncate(end);
    // The last few, where the bits did not reach (never with the zero
    // bytes `align` puts after them).
    let mut i = i.min(n);
    while out.len() < end {
        let bit = i * W;
        let word = bits
            .get(bit / 8..bit / 8 + 8)
            .map_or(0, |w| u64::from_le_bytes(w.try_into().unwrap_or_default()));
        out.push(f((word >> (bit % 8)) & mask));
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ways of packing: in whole bytes (what is written) and in bits
    /// (what stores written before hold).
    type Encoder = fn(&[Posting]) -> Option<Vec<u8>>;
    const ENCODERS: [Encoder; 2] = [encode, encode_bits];

    fn round_trip(block: &[Posting]) {
        for encode in ENCODERS {
            let bytes = encode(block).expect("packs");
            let mut out = Vec::new();
            decode(&bytes, &mut out).unwrap();
            assert_eq!(out, block);
        }
    }

    #[test]
    fn postings_come_back_as_they_went_in() {
        round_trip(&[(7, 1, 1)]);
        round_trip(&[(0, 1, 9), (1, 1, 9), (2, 1, 9)]);
        round_trip(&[(300, 2, 40), (301, 1, 128), (9_000, 7, 7), (1 << 40, 1, 3)]);
        let many: Vec<Posting> = (0..500u64)
            .map(|i| (1_000 + i * i, 1 + i % 13, 13 + (i * 7919) % 5000))
            .collect();
        round_trip(&many);
        // The widest values there are.
        let wide = 1u64 << 55;
        round_trip(&[
            (u64::MAX - wide - 1, wide, wide),
            (u64::MAX, 1, (1 << 56) - 1),
        ]);
    }

    /// Blocks of many sizes in which each field in turn takes every width
    /// (the others random), through both decoders: each value comes back,
    /// counts and lengths as columns at most `u32::MAX`.
    #[test]
    fn columns_and_rows_agree_at_every_width_and_size() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        // A value of `w` bits, the highest set if `top`.
        let mut value = |w: u32, top: bool| match w {
            0 => 0,
            _ => (next() >> (64 - w)) | u64::from(top) << (w - 1),
        };
        let mut cols = Columns::default();
        let mut rows = Vec::new();
        let mut checked = 0;
        for (n, encode) in [1usize, 2, 7, 8, 9, 15, 16, 17, 31, 63, 64, 65, 130]
            .into_iter()
            .flat_map(|n| ENCODERS.map(|e| (n, e)))
        {
            for w in 0..=WIDEST {
                for field in 0..3 {
                    let width = |f: usize, small: u32| if f == field { w } else { small };
                    let mut id = value(20, false);
                    let block: Vec<Posting> = (0..n)
                        .map(|i| {
                            let top = i == n / 2;
                            if i > 0 {
                                id += value(width(0, 5), top) + 1;
                            }
                            let count = value(width(1, 2), top) + 1;
                            let len = count + value(width(2, 9), top);
                            (id, count, len)
                        })
                        .collect();
                    let Some(bytes) = encode(&block) else {
                        continue;
                    };
                    decode(&bytes, &mut rows).unwrap();
                    assert_eq!(rows, block, "{n} postings, field {field} of {w} bits");
                    cols.decode(&bytes).unwrap();
                    let ids: Vec<NodeId> = block.iter().map(|p| p.0).collect();
                    let counts: Vec<u32> = block.iter().map(|p| saturated(p.1)).collect();
                    let lens: Vec<u32> = block.iter().map(|p| saturated(p.2)).collect();
                    assert_eq!(cols.ids, ids, "{n} postings, field {field} of {w} bits");
                    assert_eq!(
                        cols.counts, counts,
                        "{n} postings, field {field} of {w} bits"
                    );
                    assert_eq!(cols.lens, lens, "{n} postings, field {field} of {w} bits");
                    checked += 1;
                }
            }
        }
        assert!(checked > 2 * 13 * 57 * 2, "{checked} blocks");
    }

    #[test]
    fn what_does_not_pack_is_refused_not_mangled() {
        for encode in ENCODERS {
            assert_eq!(encode(&[]), None);
            assert_eq!(encode(&[(1, 0, 3)]), None);
            assert_eq!(encode(&[(5, 1, 3), (5, 1, 3)]), None);
            assert_eq!(encode(&[(5, 1, 3), (4, 1, 3)]), None);
            assert_eq!(encode(&[(0, 1, 3), (1 << 60, 1, 3)]), None);
            assert_eq!(encode(&[(0, 1, 1 << 60)]), None);
        }
    }

    #[test]
    fn widths_are_whole_bytes_where_written() {
        // Gaps of up to 3 bits, counts 1, lengths of 10 bits.
        let block: Vec<Posting> = (0..64).map(|i| (100 + 5 * i, 1, 600 + i)).collect();
        let (bytes, bits) = (encode(&block).unwrap(), encode_bits(&block).unwrap());
        let widths = |b: &[u8]| Layout::read(b).unwrap().fields.map(|f| f.width);
        assert_eq!(widths(&bytes), [8, 0, 16]);
        assert_eq!(widths(&bits), [3, 0, 10]);
        assert!(bytes.len() > bits.len());
    }

    #[test]
    fn damaged_bytes_are_errors() {
        for encode in ENCODERS {
            let good = encode(&[(3, 1, 2), (9, 2, 5), (12, 1, 1)]).unwrap();
            let mut out = Vec::new();
            // Cut anywhere, or one byte more.
            for cut in 0..good.len() {
                assert!(decode(&good[..cut], &mut out).is_err(), "{cut}");
            }
            let mut longer = good.clone();
            longer.push(0);
            assert!(decode(&longer, &mut out).is_err());
            // Every single bit flipped: an error, or postings that still
            // hold what a block must.
            let mut cols = Columns::default();
            for i in 0..good.len() * 8 {
                let mut bad = good.clone();
                bad[i / 8] ^= 1 << (i % 8);
                // Both decoders take the same blocks.
                assert_eq!(
                    cols.decode(&bad).is_ok(),
                    decode(&bad, &mut out).is_ok(),
                    "{i}"
                );
                if decode(&bad, &mut out).is_ok() {
                    assert!(out.windows(2).all(|w| w[0].0 < w[1].0), "{i}");
                    assert!(out.iter().all(|p| 1 <= p.1 && p.1 <= p.2), "{i}");
                }
            }
        }
        let mut out = Vec::new();
        // A block claiming postings it has no bits for, huge or not.
        for n in [4u64, 1 << 40, u64::MAX] {
            let mut w = Writer { buf: Vec::new() };
            w.byte(FORMAT);
            w.uint(n);
            w.uint(1);
            for width in [0, 0, 1] {
                w.byte(width);
            }
            w.byte(0xff);
            assert!(decode(&w.buf, &mut out).is_err(), "{n}");
        }
        // A count above its length, ids past the last.
        let mut w = Writer { buf: Vec::new() };
        w.byte(FORMAT);
        w.uint(1);
        w.uint(1);
        for width in [0, 2, 1] {
            w.byte(width);
        }
        w.byte(0b111);
        assert!(decode(&w.buf, &mut out).unwrap_err().contains("counts 4"));
        let mut w = Writer { buf: Vec::new() };
        w.byte(FORMAT);
        w.uint(2);
        w.uint(u64::MAX);
        for width in [1, 0, 1] {
            w.byte(width);
        }
        w.byte(0b110);
        assert!(decode(&w.buf, &mut out).unwrap_err().contains("past"));
    }
}
