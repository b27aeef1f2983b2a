//! The store commands: `log`, `show`, `diff`, `fsck`, `gc`, `export` and
//! `import`. Each opens the store with the core linked in (no evaluation
//! runs, so no sandbox is needed), prints text or, with `--json`, one JSON
//! object, and fails with the store's exit status when the store is at
//! fault.

use std::collections::HashSet;
use std::path::Path;
use std::rc::Rc;

use arbores_core::repo::browse::{self, VersionDiff};
use arbores_core::repo::bundle;
use arbores_core::repo::node::Node;
use arbores_core::{Engine, Hash};
use serde_json::{json, Value};

use crate::exit::{Exit, Failure};
use crate::store::{Access, EngineStore, Store};

/// A store opened for a command, with the knowledge base read from it.
struct Opened {
    store: Store,
    engine: Engine,
}

fn open(path: &Path, access: Access) -> Result<Opened, Failure> {
    let store = Store::open(path, access).map_err(|e| Failure::store(e.message))?;
    let mut engine = Engine::new();
    engine
        .open_store(Rc::new(EngineStore(store.clone())))
        .map_err(|e| Failure::store(store.explain(&e.into())))?;
    Ok(Opened { store, engine })
}

fn failed(e: impl std::fmt::Display) -> Failure {
    Failure::store(e.to_string())
}

fn print(json: bool, value: Value, text: String) {
    if json {
        println!("{value}");
    } else {
        print!("{text}");
    }
}

fn node_json(n: &Node) -> Value {
    json!({
        "id": n.id,
        "names": n.symbol_names,
        "type": n.kind,
        "description": n.description,
        "code": n.code,
        "dependencies": n.dependencies.iter().map(|(id, local)| json!({"id": id, "local_name": local})).collect::<Vec<_>>(),
    })
}

fn names(n: &Node) -> String {
    if n.symbol_names.is_empty() {
        "(no name)".to_string()
    } else {
        n.symbol_names.join(", ")
    }
}

/// `arbores log`: every version, newest first, marking the current one and
/// where a version does not follow the one printed after it (a branch).
pub fn log(path: &Path, limit: Option<usize>, json: bool) -> Result<Exit, Failure> {
    let mut o = open(path, Access::ReadOnly)?;
    if o.store.head().map_err(failed)?.is_none() {
        print(
            json,
            json!({"current": null, "versions": []}),
            format!("nothing is stored in {} yet\n", path.display()),
        );
        return Ok(Exit::Ok);
    }
    let graph = browse::version_graph(o.engine.knowledge());
    let shown: Vec<_> = graph
        .versions
        .iter()
        .rev()
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    let mut text = String::new();
    for (i, v) in shown.iter().enumerate() {
        let mark = if v.id == graph.current { "*" } else { " " };
        text.push_str(&format!(
            "{mark} v{}  {}  {} nodes  {}\n",
            v.id,
            v.timestamp.to_iso8601(),
            v.node_count,
            v.description
        ));
        let next_older = shown.get(i + 1).map(|n| n.id);
        if let Some(parent) = v.parent.filter(|p| Some(*p) != next_older) {
            text.push_str(&format!("      (branches from v{parent})\n"));
        }
    }
    let versions: Vec<Value> = shown
        .iter()
        .map(|v| {
            json!({"id": v.id, "parent": v.parent, "timestamp": v.timestamp.to_iso8601(),
                   "description": v.description, "nodes": v.node_count,
                   "current": v.id == graph.current})
        })
        .collect();
    print(
        json,
        json!({"current": graph.current, "versions": versions}),
        text,
    );
    Ok(Exit::Ok)
}

/// A version argument: `v5` or `5`.
fn version_arg(text: &str) -> Result<u64, Failure> {
    text.strip_prefix('v')
        .unwrap_or(text)
        .parse()
        .map_err(|_| Failure::usage(format!("`{text}` is not a version (write v5 or 5)")))
}

/// `arbores show ID` (a node in the current version) or `arbores show vN`
/// (a version and what it changed).
pub fn show(path: &Path, what: &str, json: bool) -> Result<Exit, Failure> {
    let mut o = open(path, Access::ReadOnly)?;
    let k = o.engine.knowledge();
    if let Some(v) = what.strip_prefix('v') {
        let v = version_arg(v)?;
        let record = k.forest.version_info(v).map_err(failed)?.clone();
        let diff = match record.parent {
            Some(p) => browse::version_diff(k, p, v).map_err(failed)?,
            None => VersionDiff::default(),
        };
        let mut text = format!(
            "version {}{}\n  parent:  {}\n  time:    {}\n  nodes:   {}\n  what:    {}\n",
            record.id,
            if record.id == k.forest.current() {
                " (current)"
            } else {
                ""
            },
            record
                .parent
                .map(|p| format!("v{p}"))
                .unwrap_or("none".into()),
            record.timestamp.to_iso8601(),
            record.node_count,
            record.description
        );
        text.push_str(&diff_text(&diff));
        let value = json!({
            "version": record.id, "parent": record.parent,
            "timestamp": record.timestamp.to_iso8601(), "nodes": record.node_count,
            "description": record.description, "current": record.id == k.forest.current(),
            "changes": diff_json(&diff),
        });
        print(json, value, text);
        return Ok(Exit::Ok);
    }
    let id: u64 = what.parse().map_err(|_| {
        Failure::usage(format!(
            "`{what}` is neither a node id (256) nor a version (v5)"
        ))
    })?;
    let Some(view) = browse::node_view(k, id, None).map_err(failed)? else {
        return Err(Failure::from(format!(
            "there is no node {id} in the current version (v{})",
            k.forest.current()
        )));
    };
    let n = &view.node;
    let links = |l: &[browse::NodeLink]| -> String {
        if l.is_empty() {
            return "none".into();
        }
        l.iter()
            .map(|l| format!("{} ({})", l.id, l.symbol_names.join(", ")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = format!(
        "node {} in v{}\n  names:        {}\n  type:         {}\n  description:  {}\n  dependencies: {}\n  dependents:   {}\n",
        n.id,
        view.version,
        names(n),
        n.kind.as_deref().unwrap_or("-"),
        n.description.as_deref().unwrap_or("-"),
        links(&view.dependencies),
        links(&view.dependents),
    );
    text.push_str("  history:\n");
    for h in &view.history {
        text.push_str(&format!(
            "    v{}  {}  {}  {}\n",
            h.version,
            h.change.as_str(),
            h.timestamp.to_iso8601(),
            h.description
        ));
    }
    if let Some(code) = &n.code {
        text.push_str(&format!("{code}\n"));
    }
    let link_json = |l: &[browse::NodeLink]| -> Vec<Value> {
        l.iter()
            .map(|l| json!({"id": l.id, "names": l.symbol_names, "local_name": l.local_name}))
            .collect()
    };
    let mut value = node_json(n);
    value["version"] = json!(view.version);
    value["dependencies"] = json!(link_json(&view.dependencies));
    value["dependents"] = json!(link_json(&view.dependents));
    value["history"] = json!(view
        .history
        .iter()
        .map(
            |h| json!({"version": h.version, "change": h.change.as_str(),
                         "timestamp": h.timestamp.to_iso8601(), "description": h.description})
        )
        .collect::<Vec<_>>());
    print(json, value, text);
    Ok(Exit::Ok)
}

fn diff_text(d: &VersionDiff) -> String {
    let mut text = String::new();
    for n in &d.added {
        text.push_str(&format!("+ {} {}\n", n.id, names(n)));
        if let Some(code) = &n.code {
            text.push_str(&format!("    {}\n", code.replace('\n', "\n    ")));
        }
    }
    for n in &d.removed {
        text.push_str(&format!("- {} {}\n", n.id, names(n)));
    }
    for (before, after) in &d.changed {
        text.push_str(&format!("~ {} {}\n", after.id, names(after)));
        if before.code != after.code {
            text.push_str(&format!(
                "    was: {}\n    now: {}\n",
                before.code.as_deref().unwrap_or("-"),
                after.code.as_deref().unwrap_or("-")
            ));
        }
        if before.description != after.description {
            text.push_str(&format!(
                "    description: {} -> {}\n",
                before.description.as_deref().unwrap_or("-"),
                after.description.as_deref().unwrap_or("-")
            ));
        }
        if before.symbol_names != after.symbol_names {
            text.push_str(&format!(
                "    names: {} -> {}\n",
                names(before),
                names(after)
            ));
        }
    }
    text
}

fn diff_json(d: &VersionDiff) -> Value {
    json!({
        "added": d.added.iter().map(node_json).collect::<Vec<_>>(),
        "removed": d.removed.iter().map(node_json).collect::<Vec<_>>(),
        "changed": d.changed.iter().map(|(b, a)| json!({"before": node_json(b), "after": node_json(a)})).collect::<Vec<_>>(),
    })
}

/// `arbores diff V1 V2`: the nodes added, removed and changed from one
/// version to the other.
pub fn diff(path: &Path, from: &str, to: &str, json: bool) -> Result<Exit, Failure> {
    let (from, to) = (version_arg(from)?, version_arg(to)?);
    let mut o = open(path, Access::ReadOnly)?;
    let d = browse::version_diff(o.engine.knowledge(), from, to).map_err(failed)?;
    let mut value = diff_json(&d);
    value["from"] = json!(from);
    value["to"] = json!(to);
    let mut text = diff_text(&d);
    if text.is_empty() {
        text = format!("v{from} and v{to} hold the same nodes\n");
    }
    print(json, value, text);
    Ok(Exit::Ok)
}

/// `arbores fsck`: SQLite's own check of the file, every blob against its
/// name, the refs record, and every blob the history reaches read and
/// checked. Prints each problem; the store's status when there is one.
pub fn fsck(path: &Path, json: bool) -> Result<Exit, Failure> {
    let (exit, value, text) = check(path)?;
    print(json, value, text);
    Ok(exit)
}

/// What `fsck` finds: its exit status, JSON and text.
fn check(path: &Path) -> Result<(Exit, Value, String), Failure> {
    let store = Store::open(path, Access::ReadOnly).map_err(|e| Failure::store(e.message))?;
    let mut problems: Vec<String> = store.integrity_problems().map_err(failed)?;
    let mut blobs = 0u64;
    let mut bytes = 0u64;
    let mut damaged: Vec<Hash> = Vec::new();
    store
        .each_blob(|name, data| {
            blobs += 1;
            bytes += data.len() as u64;
            if arbores_core::repo::cas::hash_bytes(data) != *name {
                damaged.push(*name);
            }
        })
        .map_err(failed)?;
    // Named after the walk: the store is busy while it walks.
    for name in &damaged {
        problems.push(format!(
            "{}: its bytes do not hash to its name",
            store.blob_place(name)
        ));
    }
    let mut reachable = 0usize;
    let mut versions = 0usize;
    match store.head() {
        Err(e) => problems.push(e.message),
        Ok(None) => {}
        Ok(Some(_)) => {
            let mut engine = Engine::new();
            match engine.open_store(Rc::new(EngineStore(store.clone()))) {
                Err(e) => problems.push(store.explain(&e.into())),
                Ok(()) => match engine.export_full() {
                    Err(e) => problems.push(store.explain(&e.into())),
                    Ok(all) => {
                        reachable = all.blobs.len();
                        versions = engine.knowledge().forest.versions().count();
                    }
                },
            }
        }
    }
    let ok = problems.is_empty();
    let mut text = String::new();
    for p in &problems {
        text.push_str(&format!("problem: {p}\n"));
    }
    text.push_str(&format!(
        "{}: {} blobs ({bytes} bytes), {versions} versions, {reachable} blobs reached by the history; {}\n",
        path.display(),
        blobs,
        if ok { "no problems found".to_string() } else { format!("{} problems", problems.len()) }
    ));
    Ok((
        if ok { Exit::Ok } else { Exit::Store },
        json!({"ok": ok, "problems": problems, "blobs": blobs, "bytes": bytes,
               "versions": versions, "reachable": reachable}),
        text,
    ))
}

/// `arbores fsck --repair`: makes a damaged store usable again, keeping
/// everything it moves aside. A blob whose bytes do not match its name goes
/// to the table `damaged_blobs`; when the refs record is lost or names a
/// history that no longer reads whole, it is rebuilt from the reflog
/// entries among the blobs, naming the newest state whose whole history
/// reads (newer entries are said, by number and version, to be dropped);
/// when SQLite finds the file itself damaged, what can be read is written
/// to a new store file and the damaged one is kept beside it. Then the
/// store is checked again, as `fsck` does.
pub fn repair(path: &Path, json: bool) -> Result<Exit, Failure> {
    use crate::store::repair;
    use arbores_core::repo::forest::recover;
    let store = Store::open(path, Access::ReadOnly).map_err(|e| Failure::store(e.message))?;
    let salvage = store.salvage().map_err(failed)?;
    let integrity = store
        .integrity_problems()
        .unwrap_or_else(|e| vec![e.message]);
    let by_name = salvage.good_names();
    let imports = |refs: &[u8]| -> Result<(), String> {
        Engine::new()
            .import(refs, |h| by_name.get(h).copied())
            .map_err(|e| e.to_string())
    };
    let stored = salvage.refs.as_deref().map(imports);
    let file_whole = integrity.is_empty() && salvage.unreadable.is_empty();
    let mut actions: Vec<String> = Vec::new();
    // The refs record to write, when the stored one will not do.
    let mut new_refs: Option<Vec<u8>> = None;
    match (&salvage.refs, &stored) {
        (Some(_), Some(Ok(()))) => {}
        (None, _) if salvage.good.is_empty() => {}
        (refs, _) => {
            let why = match &stored {
                Some(Err(e)) => {
                    format!("the history the refs record names does not read whole ({e})")
                }
                _ if refs.is_some() => "the refs record cannot be read".to_string(),
                _ => "the refs record is missing".to_string(),
            };
            let recovery = recover::candidates(salvage.good.iter().map(|(h, b)| (h, b.as_slice())));
            let newest = recovery
                .candidates
                .first()
                .map(|c| c.entry)
                .max(refs.as_deref().and_then(recover::newest_entry));
            let Some(chosen) = recovery
                .candidates
                .iter()
                .find(|c| imports(&c.refs).is_ok())
            else {
                return Err(Failure::store(format!(
                    "{}: {why}, and none of the {} reflog entries among the blobs names a \
                     history that reads whole; nothing was changed",
                    path.display(),
                    recovery.candidates.len()
                )));
            };
            let mut said = format!(
                "{why}: rebuilt it from the reflog: the history now ends at entry {} \
                 (v{} current, {})",
                chosen.entry,
                chosen.version,
                if chosen.description.is_empty() {
                    "no description"
                } else {
                    &chosen.description
                }
            );
            if let Some(newest) = newest.filter(|n| *n > chosen.entry) {
                said.push_str(&format!(
                    "; entries {}..{newest} could not be read whole and are dropped from \
                     the history (their intact blobs stay until `arbores gc`)",
                    chosen.entry + 1
                ));
            }
            let alternatives = recovery
                .candidates
                .iter()
                .filter(|c| c.entry == chosen.entry && c.refs != chosen.refs)
                .count();
            if alternatives > 0 {
                said.push_str(&format!(
                    "; {alternatives} other entries of the same number (commits that lost a \
                     race, or a branch) were left aside: the newest was taken"
                ));
            }
            actions.push(said);
            new_refs = Some(chosen.refs.clone());
        }
    }
    if !salvage.damaged.is_empty() {
        actions.push(format!(
            "moved {} blobs whose bytes do not match their names to the table damaged_blobs",
            salvage.damaged.len()
        ));
    }
    if actions.is_empty() && file_whole {
        print(
            json,
            json!({"ok": true, "repaired": false, "actions": []}),
            format!("{}: nothing to repair\n", path.display()),
        );
        return Ok(Exit::Ok);
    }
    let found = format!("fsck --repair at {} s since the Unix epoch", unix_seconds());
    if file_whole {
        drop(store);
        let store = Store::open(path, Access::ReadWrite).map_err(|e| Failure::store(e.message))?;
        store
            .repair_in_place(
                salvage.refs.as_deref(),
                new_refs.as_deref(),
                &salvage.damaged,
                &found,
            )
            .map_err(failed)?;
    } else {
        drop(store);
        let refs = new_refs.as_deref().or(salvage.refs.as_deref());
        let kept = repair::rebuild(path, &salvage, refs, &found, &unix_seconds().to_string())
            .map_err(failed)?;
        let mut problems = integrity.clone();
        problems.extend(salvage.unreadable.iter().cloned());
        actions.push(format!(
            "SQLite found the file damaged ({}); wrote the {} blobs that could be read into a \
             new store file and kept the damaged one as {}",
            problems.join("; "),
            salvage.good.len(),
            kept.display()
        ));
    }
    let (exit, checked, after) = check(path)?;
    let mut text: String = actions.iter().map(|a| format!("repaired: {a}\n")).collect();
    text.push_str("checked again: ");
    text.push_str(&after);
    print(
        json,
        json!({"ok": exit == Exit::Ok, "repaired": true, "actions": actions, "check": checked}),
        text,
    );
    Ok(exit)
}

fn unix_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `arbores gc`: removes the blobs no version of the history reaches.
pub fn gc(path: &Path, dry_run: bool, json: bool) -> Result<Exit, Failure> {
    let access = if dry_run {
        Access::ReadOnly
    } else {
        Access::ReadWrite
    };
    let mut o = open(path, access)?;
    let Some(head) = o.store.head().map_err(failed)? else {
        print(
            json,
            json!({"removed": 0, "bytes": 0, "dry_run": dry_run}),
            "nothing is stored yet\n".into(),
        );
        return Ok(Exit::Ok);
    };
    // Reads and checks every blob the history reaches: a store that fails
    // here is not collected.
    let all = o
        .engine
        .export_full()
        .map_err(|e| Failure::store(o.store.explain(&e.into())))?;
    let keep: HashSet<Hash> = all.blobs.iter().map(|(h, _)| *h).collect();
    let (removed, bytes) = o
        .store
        .remove_blobs_except(&head, &keep, dry_run)
        .map_err(failed)?;
    let verb = if dry_run { "would remove" } else { "removed" };
    print(
        json,
        json!({"removed": removed, "bytes": bytes, "kept": keep.len(), "dry_run": dry_run}),
        format!(
            "{verb} {removed} blobs ({bytes} bytes) that no version reaches; {} kept\n",
            keep.len()
        ),
    );
    Ok(Exit::Ok)
}

/// `arbores export FILE [--since V]`: the whole knowledge base as one
/// bundle, or only what a store holding the history up to version V lacks.
pub fn export(path: &Path, file: &Path, since: Option<&str>, json: bool) -> Result<Exit, Failure> {
    let mut o = open(path, Access::ReadOnly)?;
    if o.store.head().map_err(failed)?.is_none() {
        return Err(Failure::store(format!(
            "{}: nothing is stored yet, so there is nothing to export",
            path.display()
        )));
    }
    let since = since.map(version_arg).transpose()?;
    if let Some(v) = since {
        if !o.engine.knowledge().forest.contains_version(v) {
            return Err(Failure::from(format!(
                "{}: there is no version v{v} (`arbores log` lists them)",
                path.display()
            )));
        }
    }
    let all = match since {
        None => o.engine.export_full(),
        Some(v) => o.engine.export_since(v),
    }
    .map_err(|e| Failure::store(o.store.explain(&e.into())))?;
    let bytes = bundle::encode(&all);
    let temp = file.with_extension("partial");
    std::fs::write(&temp, &bytes)
        .and_then(|()| std::fs::rename(&temp, file))
        .map_err(|e| Failure::from(format!("{}: {e}", file.display())))?;
    let what = match since {
        None => "the whole history".to_string(),
        Some(v) => format!("what a store at v{v} lacks"),
    };
    print(
        json,
        json!({"file": file.display().to_string(), "blobs": all.blobs.len(), "bytes": bytes.len(), "since": since}),
        format!(
            "wrote {} ({what}: {} blobs, {} bytes)\n",
            file.display(),
            all.blobs.len(),
            bytes.len()
        ),
    );
    Ok(Exit::Ok)
}

/// `arbores import FILE`: a bundle into an empty store, or into a store
/// whose history the bundle continues (an incremental bundle made with
/// `export --since`, or a full one of a longer history). Everything the
/// bundle names is read and checked, from the bundle or the store, before
/// anything is written; the refs record is swapped only if no other writer
/// committed meanwhile.
pub fn import(path: &Path, file: &Path, json: bool) -> Result<Exit, Failure> {
    let at = |e: &dyn std::fmt::Display| Failure::from(format!("{}: {e}", file.display()));
    let bytes = std::fs::read(file).map_err(|e| at(&e))?;
    let snapshot = bundle::decode(&bytes).map_err(|e| at(&e))?;
    let by_name: std::collections::HashMap<Hash, &[u8]> = snapshot
        .blobs
        .iter()
        .map(|(h, b)| (*h, b.as_slice()))
        .collect();
    let store = Store::open(path, Access::ReadWrite).map_err(|e| Failure::store(e.message))?;
    let head = store.head().map_err(failed)?;
    let mut check = Engine::new();
    let mut store_failure: Option<String> = None;
    let checked = check.import(&snapshot.refs, |h| match by_name.get(h) {
        Some(b) => Some(b.to_vec()),
        None if head.is_some() => match store.blob(h) {
            Ok(found) => found,
            Err(e) => {
                store_failure.get_or_insert(e.message);
                None
            }
        },
        None => None,
    });
    if let Some(e) = store_failure {
        return Err(Failure::store(e));
    }
    if let Err(e) = checked {
        let hint = if head.is_none() {
            " (an incremental bundle, made with `export --since`, goes into a store that \
             holds the history it continues)"
        } else {
            ""
        };
        return Err(at(&format!("{e}{hint}")));
    }
    if let Some(head) = &head {
        if *head == snapshot.refs {
            print(
                json,
                json!({"file": file.display().to_string(), "blobs": 0, "version": check.current_version()}),
                format!(
                    "{} already holds everything {} holds\n",
                    path.display(),
                    file.display()
                ),
            );
            return Ok(Exit::Ok);
        }
        let continues = check.knowledge().forest.extends(head).map_err(|e| at(&e))?;
        if !continues {
            return Err(Failure::store(format!(
                "{}: the store's history is not a part of the bundle's (it has versions the \
                 bundle does not know, or the bundle is of another knowledge base); nothing \
                 was changed. Import into a new store (--store NEW_FILE)",
                path.display()
            )));
        }
    }
    match store.commit(head.as_deref(), &snapshot).map_err(failed)? {
        crate::store::Commit::Done(_) => {}
        crate::store::Commit::Moved(_) => {
            return Err(Failure::store(format!(
                "{}: another writer committed while the bundle was checked; nothing was \
                 changed (import again)",
                path.display()
            )))
        }
    }
    print(
        json,
        json!({"file": file.display().to_string(), "blobs": snapshot.blobs.len(), "version": check.current_version()}),
        format!(
            "imported {} ({} blobs) into {}; current version v{}\n",
            file.display(),
            snapshot.blobs.len(),
            path.display(),
            check.current_version()
        ),
    );
    Ok(Exit::Ok)
}

/// A stored node as the REPL's `,describe` shows it.
pub struct StoredNode {
    pub id: u64,
    pub names: String,
    pub kind: Option<String>,
    pub description: Option<String>,
    /// The version that last changed it, and the current one.
    pub changed_in: Option<u64>,
    pub current: u64,
}

impl StoredNode {
    pub fn text(&self) -> String {
        format!(
            "stored node {} ({})\n  type:         {}\n  description:  {}\n  version:      {} (current v{}; `,show {}` for its code and history)",
            self.id,
            self.names,
            self.kind.as_deref().unwrap_or("-"),
            self.description.as_deref().unwrap_or("-"),
            self.changed_in
                .map(|v| format!("last changed in v{v}"))
                .unwrap_or_else(|| "-".into()),
            self.current,
            self.id
        )
    }
}

/// Opens the store for reading: `None` when nothing is stored yet.
fn open_for_reading(path: &Path) -> Result<Option<Opened>, Failure> {
    if !path.exists() {
        return Ok(None);
    }
    let o = open(path, Access::ReadOnly)?;
    if o.store.head().map_err(failed)?.is_none() {
        return Ok(None);
    }
    Ok(Some(o))
}

/// The nodes of the current version one of whose names is `name`.
pub fn stored_by_name(path: &Path, name: &str) -> Result<Vec<StoredNode>, Failure> {
    use arbores_core::repo::index::symbol::SymbolMode;
    let Some(mut o) = open_for_reading(path)? else {
        return Ok(Vec::new());
    };
    let k = o.engine.knowledge();
    let hits = k
        .indexes
        .symbols
        .search(name, SymbolMode::Exact, 20)
        .map_err(|e| failed(e.message()))?;
    let mut found = Vec::new();
    for hit in hits {
        let Some(view) = browse::node_view(k, hit.id, None).map_err(failed)? else {
            continue;
        };
        found.push(StoredNode {
            id: view.node.id,
            names: names(&view.node),
            kind: view.node.kind.clone(),
            description: view.node.description.clone(),
            changed_in: view.history.last().map(|h| h.version),
            current: view.version,
        });
    }
    Ok(found)
}

/// The names of stored nodes (current version) that contain `text`, at
/// most 200.
pub fn stored_names_containing(path: &Path, text: &str) -> Result<Vec<String>, Failure> {
    use arbores_core::repo::index::symbol::SymbolMode;
    let Some(mut o) = open_for_reading(path)? else {
        return Ok(Vec::new());
    };
    let hits = o
        .engine
        .knowledge()
        .indexes
        .symbols
        .search(&format!("*{text}*"), SymbolMode::Wildcard, 200)
        .map_err(|e| failed(e.message()))?;
    Ok(hits.into_iter().map(|h| h.name).collect())
}
