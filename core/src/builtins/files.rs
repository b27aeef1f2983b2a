//! `(scheme file)`: file ports, `file-exists?`, `delete-file`. Every file
//! is the host's (`Host::read_file` and kin): the core only asks, and a
//! host that grants nothing refuses each with a file error.

use super::io::new_port;
use super::{boolean, string, Ctx, Fault, PrimTable};
use crate::value::{PortKind, Value};

pub fn register(t: &mut PrimTable) {
    t.add("open-input-file", 1, Some(1), |c, a| {
        open_input(c, a[0], "open-input-file", true)
    });
    t.add("open-binary-input-file", 1, Some(1), |c, a| {
        open_input(c, a[0], "open-binary-input-file", false)
    });
    t.add("open-output-file", 1, Some(1), |c, a| {
        open_output(c, a[0], "open-output-file", true)
    });
    t.add("open-binary-output-file", 1, Some(1), |c, a| {
        open_output(c, a[0], "open-binary-output-file", false)
    });
    t.add("file-exists?", 1, Some(1), |c, a| {
        let path = path(c, "file-exists?", a[0])?;
        c.budget
            .host
            .file_exists(&path)
            .map(boolean)
            .map_err(|e| refused("file-exists?", &path, e))
    });
    t.add("delete-file", 1, Some(1), |c, a| {
        let path = path(c, "delete-file", a[0])?;
        c.budget
            .host
            .delete_file(&path)
            .map_err(|e| refused("delete-file", &path, e))?;
        Ok(Value::Unspecified)
    });
}

fn path(c: &Ctx, who: &str, v: Value) -> Result<String, Fault> {
    Ok(string(c, who, v)?.iter().collect())
}

fn refused(who: &str, path: &str, reason: String) -> Fault {
    Fault::FileError(format!("{who}: {path:?}: {reason}"))
}

fn open_input(c: &mut Ctx, v: Value, who: &str, textual: bool) -> Result<Value, Fault> {
    let path = path(c, who, v)?;
    // A file larger than the memory cap could never be held.
    let max = c.heap.cap;
    let bytes = c
        .budget
        .host
        .read_file(&path, max)
        .map_err(|e| refused(who, &path, e))?;
    c.charge(bytes.len() as u64)?;
    let kind = PortKind::File(path.clone());
    if textual {
        let text = String::from_utf8(bytes).map_err(|e| {
            refused(
                who,
                &path,
                format!("not UTF-8 text (at byte {})", e.utf8_error().valid_up_to()),
            )
        })?;
        Ok(new_port(
            c,
            true,
            true,
            kind,
            text.chars().collect(),
            vec![],
        ))
    } else {
        Ok(new_port(c, true, false, kind, vec![], bytes))
    }
}

fn open_output(c: &mut Ctx, v: Value, who: &str, textual: bool) -> Result<Value, Fault> {
    let path = path(c, who, v)?;
    // Created (or emptied) now, so that a refusal comes at the open.
    c.budget
        .host
        .write_file(&path, &[], false)
        .map_err(|e| refused(who, &path, e))?;
    let port = new_port(c, false, textual, PortKind::File(path), vec![], vec![]);
    c.io.files.push(port);
    Ok(port)
}
