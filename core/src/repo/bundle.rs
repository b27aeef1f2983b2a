//! The bundle: a whole knowledge base (or the part of it a receiver lacks)
//! as one checked file, the unit of `arbores export` / `arbores import` and
//! of the playground's export. It carries exactly what a store holds: the
//! refs record and content-addressed blobs.
//!
//! ```text
//! magic      "arbores-bundle\n"                       15 bytes
//! format     u32, big-endian: 1
//! refs       u32 length, then the refs record
//! blobs      u64 count, then per blob: 32-byte name (BLAKE3 of the
//!            bytes), u32 length, the bytes; names strictly increasing
//! checksum   BLAKE3 of every byte before it                32 bytes
//! ```
//!
//! Decoding checks everything a bundle can get wrong on its own: the magic,
//! the format, every length against what is left, each blob against its
//! name, the order of names and the final checksum. Whether the blobs make
//! a consistent knowledge base is checked by whoever imports the refs
//! record (`VersionForest::import`), as for any store.

use super::cas::{hash_bytes, hex, Hash};
use super::forest::Snapshot;

pub const MAGIC: &[u8] = b"arbores-bundle\n";
pub const FORMAT: u32 = 1;

/// Why bytes are not a bundle this build can read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BundleError {
    /// Not a bundle at all (the magic is missing).
    NotABundle,
    /// A bundle of a format this build does not know.
    Format(u32),
    /// Cut short or damaged: says where.
    Damaged(String),
}

impl std::fmt::Display for BundleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BundleError::NotABundle => {
                write!(
                    f,
                    "not an arbores bundle (it does not start with `arbores-bundle`)"
                )
            }
            BundleError::Format(n) => write!(
                f,
                "a bundle of format {n}, but this arbores reads format {FORMAT} \
                 (written by a newer arbores?)"
            ),
            BundleError::Damaged(what) => write!(f, "the bundle is damaged: {what}"),
        }
    }
}

/// The bundle of `snapshot` (its blobs in name order, duplicates once).
pub fn encode(snapshot: &Snapshot) -> Vec<u8> {
    let mut blobs: Vec<&(Hash, Vec<u8>)> = snapshot.blobs.iter().collect();
    blobs.sort_by(|a, b| a.0.cmp(&b.0));
    blobs.dedup_by(|a, b| a.0 == b.0);
    let size = snapshot.size() + blobs.len() * 4 + 128;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_be_bytes());
    out.extend_from_slice(&(snapshot.refs.len() as u32).to_be_bytes());
    out.extend_from_slice(&snapshot.refs);
    out.extend_from_slice(&(blobs.len() as u64).to_be_bytes());
    for (name, bytes) in blobs {
        out.extend_from_slice(name);
        out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        out.extend_from_slice(bytes);
    }
    let sum = hash_bytes(&out);
    out.extend_from_slice(&sum);
    out
}

/// Reads a bundle back, checking it (see the module's documentation).
pub fn decode(bytes: &[u8]) -> Result<Snapshot, BundleError> {
    if !bytes.starts_with(MAGIC) {
        return Err(BundleError::NotABundle);
    }
    let mut r = Cursor {
        bytes,
        at: MAGIC.len(),
    };
    let format = r.u32("the format")?;
    if format != FORMAT {
        return Err(BundleError::Format(format));
    }
    if bytes.len() < r.at + 32 {
        return Err(BundleError::Damaged("cut short before its checksum".into()));
    }
    let body = bytes.len() - 32;
    if hash_bytes(&bytes[..body]) != bytes[body..] {
        return Err(BundleError::Damaged(
            "its checksum does not match its bytes (cut short or changed)".into(),
        ));
    }
    let r = &mut Cursor {
        bytes: &bytes[..body],
        at: r.at,
    };
    let refs_len = r.u32("the refs record's length")? as usize;
    let refs = r.take(refs_len, "the refs record")?.to_vec();
    let count = r.u64("the number of blobs")?;
    let mut blobs = Vec::new();
    let mut previous: Option<Hash> = None;
    for i in 0..count {
        let what = format!("blob {} of {count}", i + 1);
        let name: Hash = r
            .take(32, &what)?
            .try_into()
            .map_err(|_| BundleError::Damaged(format!("{what}: a short name")))?;
        let len = r.u32(&what)? as usize;
        let data = r.take(len, &what)?;
        if hash_bytes(data) != name {
            return Err(BundleError::Damaged(format!(
                "blob {}: its bytes do not hash to its name",
                hex(&name)
            )));
        }
        if previous.is_some_and(|p| p >= name) {
            return Err(BundleError::Damaged(format!(
                "blob {}: out of order",
                hex(&name)
            )));
        }
        previous = Some(name);
        blobs.push((name, data.to_vec()));
    }
    if r.at != r.bytes.len() {
        return Err(BundleError::Damaged(format!(
            "{} bytes after the last blob",
            r.bytes.len() - r.at
        )));
    }
    Ok(Snapshot { blobs, refs })
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], BundleError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e <= self.bytes.len())
            .ok_or_else(|| BundleError::Damaged(format!("cut short in {what}")))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self, what: &str) -> Result<u32, BundleError> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &str) -> Result<u64, BundleError> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_be_bytes(a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Snapshot {
        let blobs = ["one", "two", "three"]
            .iter()
            .map(|s| (hash_bytes(s.as_bytes()), s.as_bytes().to_vec()))
            .collect();
        Snapshot {
            blobs,
            refs: b"refs record".to_vec(),
        }
    }

    #[test]
    fn round_trip() {
        let s = sample();
        let back = decode(&encode(&s)).expect("decodes");
        assert_eq!(back.refs, s.refs);
        let mut want = s.blobs.clone();
        want.sort();
        assert_eq!(back.blobs, want);
    }

    /// Every truncation and every flipped byte is an error, never a
    /// different knowledge base.
    #[test]
    fn damage_is_always_found() {
        let bytes = encode(&sample());
        for len in 0..bytes.len() {
            assert!(decode(&bytes[..len]).is_err(), "cut at {len}");
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x20;
            assert!(decode(&b).is_err(), "byte {i} flipped");
        }
    }

    #[test]
    fn foreign_and_future_bundles() {
        assert_eq!(decode(b"hello"), Err(BundleError::NotABundle));
        let mut b = encode(&sample());
        b[MAGIC.len() + 3] = 9;
        assert_eq!(decode(&b), Err(BundleError::Format(9)));
    }
}
