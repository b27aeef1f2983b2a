//! A block of postings in fixed-width fields: every value of a field takes
//! as many bits as the block's largest, so that the place of each is known
//! without reading the ones before it.
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
    out.clear();
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
    let n = n as usize;
    let field = |start: u64, width: u32| Field {
        bytes: packed,
        at: start as usize,
        width,
        mask: if width == 0 {
            0
        } else {
            u64::MAX >> (u64::BITS - width)
        },
    };
    let gaps = field(0, widths[0]);
    let counts = field((n as u64 - 1) * u64::from(widths[0]), widths[1]);
    let lens = field(
        counts.at as u64 + n as u64 * u64::from(widths[1]),
        widths[2],
    );
    out.reserve(n);
    let mut id = first;
    for i in 0..n {
        if i > 0 {
            id = id
                .checked_add(gaps.get(i - 1) + 1)
                .ok_or_else(|| format!("node ids past {id}"))?;
        }
        let (count, len) = (counts.get(i) + 1, lens.get(i));
        if count > len {
            return Err(format!("node {id} counts {count} of a length {len}"));
        }
        out.push((id, count, len));
    }
    Ok(())
}

/// One field's values in a packed block.
struct Field<'a> {
    bytes: &'a [u8],
    /// The bit its first value starts at.
    at: usize,
    width: u32,
    mask: u64,
}

impl Field<'_> {
    /// Value `i` (the caller knows the block holds it).
    #[inline(always)]
    fn get(&self, i: usize) -> u64 {
        let bit = self.at + i * self.width as usize;
        (word(self.bytes, bit / 8) >> (bit % 8)) & self.mask
    }
}

/// The 8 bytes from `i` (zeros past the end) as a little-endian number.
#[inline(always)]
fn word(bytes: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    match bytes.get(i..i + 8) {
        Some(s) => w.copy_from_slice(s),
        None => {
            let tail = bytes.get(i..).unwrap_or_default();
            w[..tail.len()].copy_from_slice(tail);
        }
    }
    u64::from_le_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(block: &[Posting]) {
        let bytes = encode(block).expect("packs");
        let mut out = Vec::new();
        decode(&bytes, &mut out).unwrap();
        assert_eq!(out, block);
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

    #[test]
    fn what_does_not_pack_is_refused_not_mangled() {
        assert_eq!(encode(&[]), None);
        assert_eq!(encode(&[(1, 0, 3)]), None);
        assert_eq!(encode(&[(5, 1, 3), (5, 1, 3)]), None);
        assert_eq!(encode(&[(5, 1, 3), (4, 1, 3)]), None);
        assert_eq!(encode(&[(0, 1, 3), (1 << 60, 1, 3)]), None);
        assert_eq!(encode(&[(0, 1, 1 << 60)]), None);
    }

    #[test]
    fn damaged_bytes_are_errors() {
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
        for i in 0..good.len() * 8 {
            let mut bad = good.clone();
            bad[i / 8] ^= 1 << (i % 8);
            if decode(&bad, &mut out).is_ok() {
                assert!(out.windows(2).all(|w| w[0].0 < w[1].0), "{i}");
                assert!(out.iter().all(|p| 1 <= p.1 && p.1 <= p.2), "{i}");
            }
        }
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
