//! Session snapshots as bytes: every global binding a session defined or
//! changed, one content-addressed entry per binding, and a manifest that
//! names the entries.
//!
//! An entry is the payload `Dumper::graph` writes for one binding (its
//! value and every object and compiled procedure it reaches, the prelude's
//! named, not written) behind a version byte; its address is the BLAKE3
//! hash of its bytes, so an unchanged binding gives the same entry in
//! every snapshot and is stored once. An object reached from several
//! bindings is written by one of them (the first by name that reaches it,
//! or the binding whose value it is) and named by the others as "object i
//! of the binding of global g": a restore rebuilds one object, so state
//! shared between closures stays shared.
//!
//! Manifest layout (in the envelope of `image::seal`, magic `ARBSNAP\0`):
//!
//! ```text
//! bindings: count, then per binding (sorted by name): name, entry hash (32 bytes)
//! skipped:  count, then the names of the syntax the session defined that a snapshot cannot hold
//! syntax:   the syntax the session defined (`session_syntax.rs`), as bytes
//! inline:   count, then entries carried in the manifest itself
//! ```

use std::collections::BTreeMap;

use super::image::{check_envelope, seal, Claims, Dumper, In, Out, PreludeImage, HEADER_LEN, R};
use super::Vm;
use crate::value::Value;

const MAGIC: &[u8; 8] = b"ARBSNAP\0";
/// The first byte of every entry: the entry format.
const ENTRY_VERSION: u8 = 1;

/// The content address of an entry: BLAKE3 of its bytes.
pub type EntryHash = [u8; 32];

/// A session's bindings written as entries.
pub struct SavedSession {
    /// Sorted by name.
    pub bindings: Vec<(String, EntryHash)>,
    pub entries: BTreeMap<EntryHash, Vec<u8>>,
    /// Syntax the session defined which a snapshot cannot hold (made
    /// by another macro, or in a local scope).
    pub skipped: Vec<String>,
    /// The rest of the session's syntax (`session_syntax.rs`).
    pub syntax: Vec<u8>,
}

/// A manifest read and checked.
pub struct Manifest {
    pub bindings: Vec<(String, EntryHash)>,
    pub skipped: Vec<String>,
    /// The session's syntax (`session_syntax.rs`), read when restored.
    pub syntax: Vec<u8>,
    pub inline: BTreeMap<EntryHash, Vec<u8>>,
}

impl Vm {
    /// Every binding of the session as entries.
    pub fn save_session(&self) -> Result<SavedSession, String> {
        let image = self
            .image
            .as_ref()
            .ok_or("the engine has no prelude image")?;
        let mut saved = self.session_globals(image);
        saved.sort_by(|a, b| self.global_name(a.0).cmp(self.global_name(b.0)));
        let mut claims = Claims {
            binding: saved.iter().map(|(g, _)| *g).collect(),
            ..Claims::default()
        };
        // A binding owns the object that is its value (the first by name,
        // when two share it), then each claims, in name order, what it
        // reaches that no other has claimed.
        for (e, (_, v)) in saved.iter().enumerate() {
            if let Value::Obj(r) = v {
                claims.owner.entry(*r).or_insert((e as u32, 0));
            }
        }
        let mut found = Vec::with_capacity(saved.len());
        for (e, (_, v)) in saved.iter().enumerate() {
            let mut d = Dumper::new(self, Some((&claims, e as u32)));
            d.discover(&[*v], image);
            let objs = d.objects_found().to_vec();
            for (i, r) in objs.iter().enumerate() {
                claims.owner.insert(*r, (e as u32, i as u32));
            }
            found.push(objs.len());
        }
        let (syntax, refused) = self.write_session_syntax(image, "a snapshot");
        let mut out = SavedSession {
            bindings: Vec::with_capacity(saved.len()),
            entries: BTreeMap::new(),
            skipped: refused.into_iter().map(|(name, _)| name).collect(),
            syntax,
        };
        for (e, (g, v)) in saved.iter().enumerate() {
            let mut d = Dumper::new(self, Some((&claims, e as u32)));
            d.discover(&[*v], image);
            // Discovery is deterministic and what an entry reaches was
            // claimed before or by it: the numbering is the one claimed.
            debug_assert_eq!(d.objects_found().len(), found[e]);
            let payload = d.graph(image, |d, body| d.value(body, *v, image));
            let mut bytes = Vec::with_capacity(1 + payload.len());
            bytes.push(ENTRY_VERSION);
            bytes.extend_from_slice(&payload);
            let hash = *blake3::hash(&bytes).as_bytes();
            out.bindings.push((self.global_name(*g).to_string(), hash));
            out.entries.entry(hash).or_insert(bytes);
        }
        Ok(out)
    }

    fn global_name(&self, g: u32) -> &str {
        self.syms.name(self.globals.names[g as usize])
    }

    /// A manifest naming `bindings`, carrying `inline` entries.
    pub fn seal_manifest(
        &self,
        bindings: &[(String, EntryHash)],
        skipped: &[String],
        syntax: &[u8],
        inline: &[&[u8]],
        key: &[u8; 32],
    ) -> Result<Vec<u8>, String> {
        let image = self
            .image
            .as_ref()
            .ok_or("the engine has no prelude image")?;
        let mut p = Out::default();
        p.u(bindings.len() as u64);
        for (name, hash) in bindings {
            p.str(name);
            p.0.extend_from_slice(hash);
        }
        p.u(skipped.len() as u64);
        for name in skipped {
            p.str(name);
        }
        p.bytes(syntax);
        p.u(inline.len() as u64);
        for entry in inline {
            p.bytes(entry);
        }
        Ok(seal(MAGIC, image, &p.0, key))
    }

    /// Reads and checks a manifest (envelope, names in order, no name
    /// twice); its entries are checked when restored.
    pub fn read_manifest(&self, bytes: &[u8], key: &[u8; 32]) -> Result<Manifest, String> {
        let image = self
            .image
            .as_ref()
            .ok_or("the engine has no prelude image")?;
        let payload = check_envelope(bytes, key, image, MAGIC, "a session snapshot")?;
        let mut inp = In {
            buf: payload,
            pos: 0,
            base: HEADER_LEN,
        };
        read_manifest_payload(&mut inp)
    }

    /// Replaces the session's bindings with those of a snapshot: every
    /// binding the session made that the snapshot lacks is unbound again
    /// (a prelude binding gets its first value back). Entries are taken
    /// from the manifest or from `fetch`. On error nothing changes.
    pub fn restore_session(
        &mut self,
        manifest: &Manifest,
        fetch: &dyn Fn(&EntryHash) -> Option<Vec<u8>>,
    ) -> Result<(), String> {
        let image = self.image.take().ok_or("the engine has no prelude image")?;
        let r = self.restore_with(manifest, fetch, &image);
        self.image = Some(image);
        r
    }

    fn restore_with(
        &mut self,
        manifest: &Manifest,
        fetch: &dyn Fn(&EntryHash) -> Option<Vec<u8>>,
        image: &PreludeImage,
    ) -> Result<(), String> {
        let mut entries = Vec::with_capacity(manifest.bindings.len());
        for (name, hash) in &manifest.bindings {
            let bytes = match manifest.inline.get(hash) {
                Some(b) => b.clone(),
                None => fetch(hash).ok_or_else(|| {
                    format!(
                        "the entry of `{name}` ({}) is missing from the snapshot store",
                        crate::repo::forest::hex(hash)
                    )
                })?,
            };
            if blake3::hash(&bytes).as_bytes() != hash {
                return Err(format!(
                    "the entry of `{name}` is damaged: its bytes do not match its hash {}",
                    crate::repo::forest::hex(hash)
                ));
            }
            if bytes.first() != Some(&ENTRY_VERSION) {
                return Err(format!(
                    "the entry of `{name}` is in an entry format this engine does not read"
                ));
            }
            entries.push(bytes);
        }
        let mut syntax_in = In {
            buf: &manifest.syntax,
            pos: 0,
            base: 0,
        };
        let in_syntax = |e: String| format!("in the session's syntax: {e}");
        let syntax = self
            .read_session_syntax(&mut syntax_in)
            .map_err(in_syntax)?;
        if syntax_in.pos != syntax_in.buf.len() {
            return Err(in_syntax(
                syntax_in.err::<()>("data after the end").unwrap_err(),
            ));
        }
        let in_entry = |name: &str, e: String| format!("in the entry of `{name}`: {e}");
        let mut heads = Vec::with_capacity(entries.len());
        for ((name, _), bytes) in manifest.bindings.iter().zip(&entries) {
            let mut inp = In {
                buf: &bytes[1..],
                pos: 0,
                base: 1,
            };
            let l = self
                .read_graph_head(&mut inp, image)
                .map_err(|e| in_entry(name, e))?;
            heads.push((inp, l));
        }
        let globals: Vec<u32> = manifest
            .bindings
            .iter()
            .map(|(name, _)| {
                let s = self.syms.intern(name);
                self.globals.index(s)
            })
            .collect();
        let externs: BTreeMap<u32, Vec<Value>> = globals
            .iter()
            .zip(&heads)
            .map(|(g, (_, l))| (*g, l.objs.clone()))
            .collect();
        let mut values = Vec::with_capacity(heads.len());
        for ((name, _), (mut inp, l)) in manifest.bindings.iter().zip(heads) {
            let mut l = l.with_externs(&externs);
            let v: R<Value> = (|| {
                self.read_graph_body(&mut inp, &mut l)?;
                let v = self.read_value_of(&mut inp, &l)?;
                if inp.pos != inp.buf.len() {
                    return inp.err("data after the end");
                }
                Ok(v)
            })();
            values.push(v.map_err(|e| in_entry(name, e))?);
        }
        for (g, _) in self.session_globals(image) {
            self.globals.values[g as usize] = image
                .values
                .get(g as usize)
                .copied()
                .unwrap_or(Value::Undefined);
        }
        for (g, v) in globals.into_iter().zip(values) {
            self.globals.values[g as usize] = v;
        }
        // The session's syntax and imports are the snapshot's: the block
        // holds them all.
        self.globals.syntax = image.prelude_syntax();
        self.globals.aliases.clear();
        self.globals.hidden.clear();
        self.globals.imported.clear();
        self.globals.libraries.clear();
        syntax.apply(self);
        self.refresh_inline();
        Ok(())
    }
}

fn read_manifest_payload(inp: &mut In) -> R<Manifest> {
    let n = inp.len()?;
    let mut bindings: Vec<(String, EntryHash)> = Vec::with_capacity(n);
    for _ in 0..n {
        let name = inp.str()?.to_string();
        if name.is_empty() {
            return inp.err("a binding with no name");
        }
        // A save never writes the values of stored knowledge (loaded by
        // name on use): a snapshot naming one is not the engine's.
        if name.contains("@#") {
            return inp.err(&format!(
                "binding `{name}` is the value of stored knowledge, which a snapshot does not hold"
            ));
        }
        if let Some((last, _)) = bindings.last() {
            if *last >= name {
                return inp.err(&format!("binding `{name}` out of order or twice"));
            }
        }
        let mut hash = [0u8; 32];
        for b in hash.iter_mut() {
            *b = inp.byte()?;
        }
        bindings.push((name, hash));
    }
    let n = inp.len()?;
    let mut skipped = Vec::with_capacity(n);
    for _ in 0..n {
        skipped.push(inp.str()?.to_string());
    }
    let syntax = inp.bytes()?.to_vec();
    let n = inp.len()?;
    let mut inline = BTreeMap::new();
    for _ in 0..n {
        let entry = inp.bytes()?.to_vec();
        inline.insert(*blake3::hash(&entry).as_bytes(), entry);
    }
    if inp.pos != inp.buf.len() {
        return inp.err("data after the end");
    }
    Ok(Manifest {
        bindings,
        skipped,
        syntax,
        inline,
    })
}
