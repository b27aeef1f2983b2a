//! Knowledge stores of the first format: a directory with one file per
//! blob. They are read here, to be converted into a store file once (see
//! `convert`) or, by a read-only session, read as they are.
//!
//! ```text
//! DIR/format            "arbores-store 1"
//! DIR/refs              the refs record
//! DIR/blobs/ab/cdef...  one file per blob, named by the hex of its BLAKE3 hash
//! ```

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use arbores_core::{hex, Hash};

use super::StoreError;

const FORMAT_FILE: &str = "format";
const FORMAT: &str = "arbores-store 1\n";
const REFS_FILE: &str = "refs";
const BLOBS_DIR: &str = "blobs";

/// A store directory of the first format.
#[derive(Clone, Debug)]
pub struct DirStore {
    dir: PathBuf,
}

fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp")
}

impl DirStore {
    /// Checks that `dir` is a store of this format. A directory that is
    /// empty but for the temporary files of a first save that was cut
    /// short holds nothing (`Ok(None)`).
    pub fn open(dir: &Path) -> Result<Option<DirStore>, StoreError> {
        let format_path = dir.join(FORMAT_FILE);
        match std::fs::read(&format_path) {
            Ok(bytes) if bytes == FORMAT.as_bytes() => Ok(Some(DirStore {
                dir: dir.to_path_buf(),
            })),
            Ok(bytes) => {
                let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(40)])
                    .trim_end()
                    .to_string();
                Err(StoreError::foreign(format!(
                    "{}: expected `{}`, found `{shown}`: a store of another format \
                     (written by a newer arbores?) or a damaged file",
                    format_path.display(),
                    FORMAT.trim_end()
                )))
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                let mut entries = std::fs::read_dir(dir)
                    .map_err(|e| StoreError::io(dir, e))?
                    .filter_map(|e| e.ok())
                    .filter(|e| !is_temp_name(&e.file_name().to_string_lossy()));
                if entries.next().is_none() {
                    return Ok(None);
                }
                Err(StoreError::foreign(format!(
                    "{}: not an arbores store (a directory without a {FORMAT_FILE} file \
                     that is not empty)",
                    dir.display()
                )))
            }
            Err(e) => Err(StoreError::io(&format_path, e)),
        }
    }

    /// The refs record; `None` when the first save never finished.
    pub fn refs(&self) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.dir.join(REFS_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(&path, e)),
        }
    }

    pub fn blob_path(&self, name: &Hash) -> PathBuf {
        let h = hex(name);
        self.dir.join(BLOBS_DIR).join(&h[..2]).join(&h[2..])
    }

    /// A blob's bytes, `None` if there is no such file.
    pub fn blob(&self, name: &Hash) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.blob_path(name);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(&path, e)),
        }
    }

    /// Every blob file's name, for a conversion that keeps what the refs
    /// record does not reach (nothing is dropped silently).
    pub fn blob_names(&self) -> Result<Vec<Hash>, StoreError> {
        let root = self.dir.join(BLOBS_DIR);
        let mut out = Vec::new();
        let outer = match std::fs::read_dir(&root) {
            Ok(d) => d,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(StoreError::io(&root, e)),
        };
        for sub in outer {
            let sub = sub.map_err(|e| StoreError::io(&root, e))?.path();
            let Some(prefix) = sub.file_name().map(|n| n.to_string_lossy().into_owned()) else {
                continue;
            };
            if !sub.is_dir() {
                continue;
            }
            for f in std::fs::read_dir(&sub).map_err(|e| StoreError::io(&sub, e))? {
                let f = f.map_err(|e| StoreError::io(&sub, e))?;
                let rest = f.file_name().to_string_lossy().into_owned();
                if let Some(name) = parse_hex(&format!("{prefix}{rest}")) {
                    out.push(name);
                }
            }
        }
        out.sort_unstable();
        Ok(out)
    }
}

fn parse_hex(text: &str) -> Option<Hash> {
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}
