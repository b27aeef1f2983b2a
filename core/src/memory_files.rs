//! `MemoryFiles`: a file system held in memory, for a host that has no
//! disk to grant (the browser playground). It answers the `Host` file
//! calls (`read_file`, `write_file`, `file_exists`, `delete_file`) the way
//! a granted directory does natively, so `(scheme file)`, `load` and
//! `include` work the same in the page.
//!
//! Paths are names in one flat space rooted at `/`: `notes.txt`,
//! `./notes.txt` and `/notes.txt` are one file, `.` and `..` are resolved
//! as POSIX does (`..` of the root is the root), and a name like
//! `data/a.csv` needs no directory made first. The whole is capped
//! (`MemoryFiles::new`): a write that would pass the cap is refused and
//! changes nothing. `to_bytes` / `from_bytes` keep the files across a
//! restart of the engine, in a checked format.

use std::collections::BTreeMap;

/// The files' bytes, at most, unless a host chooses another cap.
pub const DEFAULT_FILES_CAP: usize = 64 * 1024 * 1024;

const MAGIC: &[u8; 8] = b"ARBFIL01";

/// Files by their normalised path, with their total size.
#[derive(Clone, Debug)]
pub struct MemoryFiles {
    files: BTreeMap<String, Vec<u8>>,
    total: usize,
    cap: usize,
    /// Bumped by every change, so a host can tell whether to save.
    generation: u64,
}

impl Default for MemoryFiles {
    fn default() -> Self {
        MemoryFiles::new(DEFAULT_FILES_CAP)
    }
}

/// `path` as a name from the root, without `.`, `..` or repeated
/// slashes; an error for what names no file.
pub fn normalize(path: &str) -> Result<String, String> {
    if path.is_empty() || path.contains('\0') {
        return Err(format!("not a file name: {path:?}"));
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() || path.ends_with('/') {
        return Err(format!("not a file name: {path:?} (names a directory)"));
    }
    Ok(format!("/{}", parts.join("/")))
}

impl MemoryFiles {
    /// No files; at most `cap` bytes in all.
    pub fn new(cap: usize) -> MemoryFiles {
        MemoryFiles {
            files: BTreeMap::new(),
            total: 0,
            cap,
            generation: 0,
        }
    }

    /// The whole of the file, refused when larger than `max` bytes.
    pub fn read(&self, path: &str, max: usize) -> Result<Vec<u8>, String> {
        let name = normalize(path)?;
        let bytes = self
            .files
            .get(&name)
            .ok_or_else(|| format!("no such file: {name}"))?;
        if bytes.len() > max {
            return Err(format!(
                "{} bytes, more than the memory cap of {max} bytes",
                bytes.len()
            ));
        }
        Ok(bytes.clone())
    }

    /// Writes `bytes`: appended when `append`, else the file is created
    /// or emptied first. Refused, changing nothing, past the cap.
    pub fn write(&mut self, path: &str, bytes: &[u8], append: bool) -> Result<(), String> {
        let name = normalize(path)?;
        let old = self.files.get(&name).map_or(0, Vec::len);
        let new = if append {
            old + bytes.len()
        } else {
            bytes.len()
        };
        let total = self.total - old + new;
        if total > self.cap {
            return Err(format!(
                "the files would hold {total} bytes, more than their cap of {} bytes",
                self.cap
            ));
        }
        let file = self.files.entry(name).or_default();
        if !append {
            file.clear();
        }
        file.extend_from_slice(bytes);
        self.total = total;
        self.generation += 1;
        Ok(())
    }

    pub fn exists(&self, path: &str) -> Result<bool, String> {
        Ok(self.files.contains_key(&normalize(path)?))
    }

    pub fn delete(&mut self, path: &str) -> Result<(), String> {
        let name = normalize(path)?;
        match self.files.remove(&name) {
            Some(bytes) => {
                self.total -= bytes.len();
                self.generation += 1;
                Ok(())
            }
            None => Err(format!("no such file: {name}")),
        }
    }

    /// Every file's name and size, by name.
    pub fn list(&self) -> Vec<(String, usize)> {
        self.files
            .iter()
            .map(|(n, b)| (n.clone(), b.len()))
            .collect()
    }

    /// Bytes held in all.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Changes so far (see the field).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Removes every file.
    pub fn clear(&mut self) {
        if !self.files.is_empty() {
            self.generation += 1;
        }
        self.files.clear();
        self.total = 0;
    }

    /// The files as bytes for `from_bytes`: `ARBFIL01`, the count, each
    /// name and contents with their lengths (u32 and u64, little-endian),
    /// then the BLAKE3 hash of all that.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.total + 64);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.files.len() as u64).to_le_bytes());
        for (name, bytes) in &self.files {
            out.extend_from_slice(&(name.len() as u32).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(bytes);
        }
        let hash = blake3::hash(&out);
        out.extend_from_slice(hash.as_bytes());
        out
    }

    /// Files saved by `to_bytes`, capped at `cap`; damaged, foreign or
    /// too large bytes are refused with what is wrong.
    pub fn from_bytes(bytes: &[u8], cap: usize) -> Result<MemoryFiles, String> {
        let refuse = |what: &str| Err(format!("saved files refused: {what}"));
        if bytes.len() < MAGIC.len() + 8 + 32 || &bytes[..MAGIC.len()] != MAGIC {
            return refuse("not saved files of this format");
        }
        let (body, hash) = bytes.split_at(bytes.len() - 32);
        if blake3::hash(body).as_bytes() != hash {
            return refuse("damaged (their hash does not match)");
        }
        let mut at = MAGIC.len();
        let mut take = |n: usize| -> Option<&[u8]> {
            let end = at.checked_add(n).filter(|&e| e <= body.len())?;
            let part = &body[at..end];
            at = end;
            Some(part)
        };
        let count = take(8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
        let Some(count) = count else {
            return refuse("truncated");
        };
        let mut files = MemoryFiles::new(cap);
        for i in 0..count {
            let Some(n) = take(4).map(|b| u32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
            else {
                return refuse(&format!("truncated in file {i}'s name"));
            };
            let Some(name) = take(n as usize).and_then(|b| std::str::from_utf8(b).ok()) else {
                return refuse(&format!("file {i}'s name is truncated or not UTF-8"));
            };
            let name = name.to_string();
            let Some(n) = take(8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            else {
                return refuse(&format!("truncated in {name}'s length"));
            };
            let Some(contents) = usize::try_from(n).ok().and_then(&mut take) else {
                return refuse(&format!("{name} is truncated"));
            };
            if normalize(&name).as_deref() != Ok(name.as_str()) {
                return refuse(&format!("{name:?} is not a file name"));
            }
            files
                .write(&name, contents, false)
                .map_err(|e| format!("saved files refused: {e}"))?;
        }
        if at != body.len() {
            return refuse("bytes after the last file");
        }
        files.generation = 0;
        Ok(files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_resolved_from_the_root() {
        assert_eq!(normalize("notes.txt").unwrap(), "/notes.txt");
        assert_eq!(normalize("./a//b/../c.txt").unwrap(), "/a/c.txt");
        assert_eq!(normalize("/../../x").unwrap(), "/x");
        assert!(normalize("").is_err());
        assert!(normalize("a\0b").is_err());
        assert!(normalize("dir/").unwrap_err().contains("directory"));
        assert!(normalize("..").is_err());
    }

    #[test]
    fn write_append_read_delete() {
        let mut f = MemoryFiles::default();
        assert!(!f.exists("a.txt").unwrap());
        f.write("a.txt", b"one\n", false).unwrap();
        f.write("./a.txt", b"two\n", true).unwrap();
        assert_eq!(f.read("/a.txt", 100).unwrap(), b"one\ntwo\n");
        assert!(f.read("a.txt", 3).unwrap_err().contains("memory cap"));
        f.write("a.txt", b"three", false).unwrap();
        assert_eq!(f.read("a.txt", 100).unwrap(), b"three");
        assert_eq!(f.total(), 5);
        assert_eq!(f.list(), vec![("/a.txt".to_string(), 5)]);
        f.delete("a.txt").unwrap();
        assert_eq!(f.total(), 0);
        assert_eq!(f.read("a.txt", 100).unwrap_err(), "no such file: /a.txt");
        assert_eq!(f.delete("a.txt").unwrap_err(), "no such file: /a.txt");
    }

    #[test]
    fn the_cap_refuses_a_write_and_changes_nothing() {
        let mut f = MemoryFiles::new(10);
        f.write("a", b"12345678", false).unwrap();
        let before = f.generation();
        let e = f.write("a", b"abc", true).unwrap_err();
        assert!(e.contains("more than their cap of 10 bytes"), "{e}");
        assert_eq!(f.read("a", 100).unwrap(), b"12345678");
        assert_eq!(f.generation(), before);
        assert!(f.write("b", b"abc", false).is_err());
        // Rewriting a file counts its new size, not both.
        f.write("a", b"0123456789", false).unwrap();
        assert_eq!(f.total(), 10);
    }

    #[test]
    fn saved_files_come_back_and_damage_is_refused() {
        let mut f = MemoryFiles::default();
        f.write("a.txt", b"alpha", false).unwrap();
        f.write("data/b.bin", &[0, 255, 7], false).unwrap();
        f.write("empty", b"", false).unwrap();
        let bytes = f.to_bytes();
        let back = MemoryFiles::from_bytes(&bytes, DEFAULT_FILES_CAP).unwrap();
        assert_eq!(back.list(), f.list());
        assert_eq!(back.read("data/b.bin", 10).unwrap(), vec![0, 255, 7]);
        assert_eq!(back.generation(), 0);
        // Every flipped byte and every truncation is refused, never a panic.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x41;
            assert!(
                MemoryFiles::from_bytes(&b, DEFAULT_FILES_CAP).is_err(),
                "{i}"
            );
            assert!(
                MemoryFiles::from_bytes(&bytes[..i], DEFAULT_FILES_CAP).is_err(),
                "{i}"
            );
        }
        // Too large for the cap it is loaded under.
        let e = MemoryFiles::from_bytes(&bytes, 4).unwrap_err();
        assert!(e.contains("cap"), "{e}");
    }
}
