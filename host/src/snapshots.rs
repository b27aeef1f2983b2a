//! Saved sessions of the REPL (`,save NAME`, `,restore NAME`, `,snapshots`):
//! the bytes of a session snapshot (`Engine::save_session`: every
//! definition of the session, closures and their state included) kept as
//! one file per name in a directory beside the store file,
//! `STORE.sessions/NAME.session`. A file is written whole to a temporary
//! name and renamed, so a name always holds a complete snapshot.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The directory of saved sessions for the store at `store`.
pub fn dir(store: &Path) -> PathBuf {
    let mut name = store
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "arbores-store".into());
    name.push(".sessions");
    store.with_file_name(name)
}

/// A session's name: 1 to 64 of `A-Z a-z 0-9 _ . -`, not starting with a dot.
pub fn check_name(name: &str) -> Result<(), String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "_.-".contains(c);
    if (1..=64).contains(&name.len()) && !name.starts_with('.') && name.chars().all(allowed) {
        return Ok(());
    }
    Err(format!(
        "a session name is 1 to 64 of A-Z a-z 0-9 _ . - not starting with a dot, not {name:?}"
    ))
}

fn file(store: &Path, name: &str) -> Result<PathBuf, String> {
    check_name(name)?;
    Ok(dir(store).join(format!("{name}.session")))
}

/// Keeps `bytes` under `name`, replacing what the name held.
pub fn save(store: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, String> {
    let path = file(store, name)?;
    let d = dir(store);
    std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    let tmp = d.join(format!(".{name}.session.{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("{}: {e}", path.display())
    })?;
    Ok(path)
}

/// The bytes kept under `name`.
pub fn load(store: &Path, name: &str) -> Result<Vec<u8>, String> {
    let path = file(store, name)?;
    std::fs::read(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!("no saved session {name:?} (,snapshots lists them)")
        }
        _ => format!("{}: {e}", path.display()),
    })
}

/// A saved session as `,snapshots` lists it.
pub struct Listed {
    pub name: String,
    pub bytes: u64,
    pub modified: Option<SystemTime>,
}

/// Every saved session, by name.
pub fn list(store: &Path) -> Result<Vec<Listed>, String> {
    let d = dir(store);
    let entries = match std::fs::read_dir(&d) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(format!("{}: {e}", d.display())),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", d.display()))?;
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let Some(name) = file_name.strip_suffix(".session") else {
            continue;
        };
        if check_name(name).is_err() {
            continue;
        }
        let meta = entry.metadata().ok();
        out.push(Listed {
            name: name.to_string(),
            bytes: meta.as_ref().map_or(0, |m| m.len()),
            modified: meta.and_then(|m| m.modified().ok()),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_sessions_live_beside_the_store_by_name() {
        let root = std::env::temp_dir().join(format!("arbores-snapshots-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let store = root.join("store");
        assert_eq!(dir(&store), root.join("store.sessions"));
        assert!(list(&store).unwrap().is_empty());
        save(&store, "work", b"one").unwrap();
        save(&store, "work", b"two").unwrap();
        save(&store, "b-1.x", b"three").unwrap();
        assert_eq!(load(&store, "work").unwrap(), b"two");
        let names: Vec<String> = list(&store).unwrap().into_iter().map(|l| l.name).collect();
        assert_eq!(names, ["b-1.x", "work"]);
        assert!(load(&store, "none")
            .unwrap_err()
            .contains("no saved session"));
        for bad in ["", "../x", ".hidden", "a/b", "x y"] {
            assert!(save(&store, bad, b"").is_err(), "{bad:?}");
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
