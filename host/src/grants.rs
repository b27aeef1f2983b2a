//! What the operator grants a program, and the host's side of it: files
//! under the directories given with `--allow-read` and `--allow-write`,
//! the variables named with `--env`, the command line of `run`, the
//! standard input and error. Both engines answer the core's `Host`
//! capability methods through one `Grants`, so a program sees the same
//! world natively and in the sandbox. Nothing here is decided by the
//! program: without a grant, each request is refused with a message that
//! names the option that would grant it.

use std::io::{BufRead, Write};
use std::path::{Component, Path, PathBuf};

use arbores_core::Tier;

/// The grants of one command.
#[derive(Clone, Debug, Default)]
pub struct Grants {
    /// Directories whose files may be read (canonical paths).
    pub read: Vec<PathBuf>,
    /// Directories whose files may be created, written and deleted (and
    /// read) (canonical paths).
    pub write: Vec<PathBuf>,
    /// The environment variables the program sees, by name.
    pub env: Vec<(String, String)>,
    /// `(command-line)`: the program's name, then its arguments.
    pub command_line: Vec<String>,
    /// The tier of the command: the read-only tier writes no file, grant
    /// or not.
    pub tier: Tier,
    /// Why programs have no standard input, when they have none (`arbores
    /// mcp`, whose standard input carries the protocol).
    pub no_stdin: Option<&'static str>,
}

/// Why a path is asked for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
}

impl Grants {
    /// Grants from the command line: each directory must exist; a variable
    /// given as NAME takes its value from this process's environment
    /// (absent when unset), one given as NAME=VALUE takes that value.
    pub fn new(
        read: &[PathBuf],
        write: &[PathBuf],
        env: &[String],
        command_line: Vec<String>,
        tier: Tier,
    ) -> Result<Grants, String> {
        let dirs = |list: &[PathBuf], option: &str| {
            list.iter()
                .map(|d| {
                    let canonical = d
                        .canonicalize()
                        .map_err(|e| format!("{option} {}: {e}", d.display()))?;
                    if !canonical.is_dir() {
                        return Err(format!("{option} {}: not a directory", d.display()));
                    }
                    Ok(canonical)
                })
                .collect::<Result<Vec<_>, String>>()
        };
        let mut vars = Vec::new();
        for item in env {
            match item.split_once('=') {
                Some((name, value)) => vars.push((name.to_string(), value.to_string())),
                None => {
                    if let Ok(value) = std::env::var(item) {
                        vars.push((item.clone(), value));
                    }
                }
            }
        }
        Ok(Grants {
            read: dirs(read, "--allow-read")?,
            write: dirs(write, "--allow-write")?,
            env: vars,
            command_line,
            tier,
            no_stdin: None,
        })
    }

    /// The file `path` names, if the grants allow this access to it: the
    /// path made absolute (relative to the current directory), without
    /// `.` and `..`, and with its symbolic links resolved must lie in a
    /// granted directory.
    fn resolve(&self, path: &str, access: Access) -> Result<PathBuf, String> {
        if access == Access::Write && self.tier == Tier::ReadOnly {
            return Err("not permitted: the read-only tier writes no files".into());
        }
        let dirs: Vec<&PathBuf> = match access {
            Access::Read => self.read.iter().chain(&self.write).collect(),
            Access::Write => self.write.iter().collect(),
        };
        let (doing, option) = match access {
            Access::Read => ("reading", "--allow-read DIR"),
            Access::Write => ("writing", "--allow-write DIR"),
        };
        if dirs.is_empty() {
            return Err(format!(
                "not permitted: {doing} files is not granted (grant a directory with {option})"
            ));
        }
        if path.is_empty() || path.contains('\0') {
            return Err("not a file name".into());
        }
        let cwd = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
        let lexical = normalize(&cwd.join(path));
        let outside = || {
            format!(
                "not permitted: outside the directories granted for {doing} (grant with {option})"
            )
        };
        let inside = |p: &Path| dirs.iter().any(|d| p.starts_with(d));
        // Symbolic links may lead out: what exists of the path is resolved
        // and must lie inside too.
        let resolved = match lexical.canonicalize() {
            Ok(p) => p,
            Err(e) => {
                let (Some(parent), Some(name)) = (lexical.parent(), lexical.file_name()) else {
                    return Err(outside());
                };
                if std::fs::symlink_metadata(&lexical).is_ok() {
                    // A link to nowhere: where it leads is not known.
                    return Err(outside());
                }
                match parent.canonicalize() {
                    Ok(p) => p.join(name),
                    // Say why only for a path inside: nothing is told of
                    // what lies outside.
                    Err(_) if inside(&lexical) => return Err(e.to_string()),
                    Err(_) => return Err(outside()),
                }
            }
        };
        if !inside(&resolved) {
            return Err(outside());
        }
        Ok(resolved)
    }

    pub fn read_file(&self, path: &str, max: usize) -> Result<Vec<u8>, String> {
        let file = self.resolve(path, Access::Read)?;
        let size = std::fs::metadata(&file).map_err(|e| e.to_string())?.len();
        if size > max as u64 {
            return Err(format!(
                "{size} bytes, more than the memory cap of {max} bytes"
            ));
        }
        std::fs::read(&file).map_err(|e| e.to_string())
    }

    pub fn write_file(&self, path: &str, bytes: &[u8], append: bool) -> Result<(), String> {
        let file = self.resolve(path, Access::Write)?;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&file)
            .map_err(|e| e.to_string())?;
        f.write_all(bytes).map_err(|e| e.to_string())
    }

    pub fn file_exists(&self, path: &str) -> Result<bool, String> {
        match self.resolve(path, Access::Read) {
            Ok(file) => Ok(file.exists()),
            Err(e) => Err(e),
        }
    }

    /// A line of the standard input, unless it is not the program's.
    pub fn read_input(&self) -> Result<Option<String>, String> {
        match self.no_stdin {
            Some(why) => Err(why.to_string()),
            None => read_input(),
        }
    }

    pub fn delete_file(&self, path: &str) -> Result<(), String> {
        let file = self.resolve(path, Access::Write)?;
        std::fs::remove_file(&file).map_err(|e| e.to_string())
    }
}

/// A line of this process's standard input (with its newline), `None` at
/// its end. Shared with the piped REPL, which reads its forms line by
/// line from the same buffer.
pub fn read_input() -> Result<Option<String>, String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) => Ok(None),
        Ok(_) => Ok(Some(line)),
        Err(e) => Err(e.to_string()),
    }
}

/// Text for the standard error, written at once.
pub fn write_error(text: &str) -> bool {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
    true
}

/// The path without `.` and with each `..` taking away the component
/// before it (lexically, as the program wrote it).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grants(read: &[PathBuf], write: &[PathBuf], tier: Tier) -> Grants {
        Grants::new(read, write, &[], vec![], tier).unwrap()
    }

    #[test]
    fn nothing_granted_refuses_with_the_option_to_use() {
        let g = Grants::default();
        let e = g.read_file("x.txt", 100).unwrap_err();
        assert!(e.contains("--allow-read"), "{e}");
        let e = g.write_file("x.txt", b"", false).unwrap_err();
        assert!(e.contains("--allow-write"), "{e}");
    }

    #[test]
    fn files_inside_only() {
        let root = std::env::temp_dir().join(format!("arbores-grants-{}", std::process::id()));
        let inside = root.join("in");
        let other = root.join("out");
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("secret"), "s").unwrap();
        let g = grants(&[], &[inside.clone()], Tier::ReadWrite);
        let file = inside.join("a.txt");
        let name = file.to_str().unwrap();
        g.write_file(name, b"hello", false).unwrap();
        g.write_file(name, b" world", true).unwrap();
        assert_eq!(g.read_file(name, 100).unwrap(), b"hello world");
        assert!(g.read_file(name, 5).unwrap_err().contains("memory cap"));
        assert!(g.file_exists(name).unwrap());
        // `..` and symbolic links may not lead out.
        let escape = format!("{}/../out/secret", inside.display());
        assert!(g
            .read_file(&escape, 100)
            .unwrap_err()
            .starts_with("not permitted"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(other.join("secret"), inside.join("link")).unwrap();
            let link = inside.join("link");
            let e = g.read_file(link.to_str().unwrap(), 100).unwrap_err();
            assert!(e.starts_with("not permitted"), "{e}");
            std::os::unix::fs::symlink(other.join("new"), inside.join("dangling")).unwrap();
            let dangling = inside.join("dangling");
            assert!(g
                .write_file(dangling.to_str().unwrap(), b"x", false)
                .is_err());
            assert!(!other.join("new").exists());
        }
        // Read-only grants and the read-only tier do not write.
        let r = grants(&[inside.clone()], &[], Tier::ReadWrite);
        assert_eq!(r.read_file(name, 100).unwrap(), b"hello world");
        assert!(r
            .write_file(name, b"", false)
            .unwrap_err()
            .contains("--allow-write"));
        let ro = grants(&[], &[inside.clone()], Tier::ReadOnly);
        assert!(ro.delete_file(name).unwrap_err().contains("read-only tier"));
        g.delete_file(name).unwrap();
        assert!(!g.file_exists(name).unwrap());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn environment_by_name_or_value() {
        let g = Grants::new(
            &[],
            &[],
            &["A=1".into(), "ARBORES_SURELY_UNSET_VARIABLE".into()],
            vec![],
            Tier::ReadWrite,
        )
        .unwrap();
        assert_eq!(g.env, vec![("A".to_string(), "1".to_string())]);
    }
}
