//! Writes `$OUT_DIR/source_hash.rs`: a hash of the core's code (every file
//! under `src/`, the manifest and the workspace's lock file), which a
//! prepared image records when it is made and `Engine::new` compares
//! before loading one (`vm/prepared.rs`): an image made from other code is
//! stale and is not used.
//!
//! With the feature `builtin-table`, the built-in embedder table is
//! checked (`src/repo/index/table_layout.rs`, a module here too: the build
//! fails on a damaged table) and the build writes
//! `$OUT_DIR/builtin_table_id.rs`, its id (`static-LENGTH-BLAKE3PREFIX`, as
//! `StaticEmbedder` names a table), and `$OUT_DIR/builtin_table_lookup.bin`,
//! its entry lookup (`src/repo/index/table_lookup.rs`, also a module here),
//! so that no process checks, hashes or indexes the table.
//!
//! With the feature `builtin-lexicon`, `$OUT_DIR/builtin_lexicon.rs` (what
//! `Lexicon::check` gave: the build fails on a damaged lexicon) and
//! `$OUT_DIR/builtin_lexicon_reverse.bin` (its English-to-Chinese list),
//! so that no process checks the lexicon or gathers that list.

#[allow(dead_code)]
#[path = "src/repo/index/table_lookup.rs"]
mod table_lookup;

// The table format's own code, to check the built-in table as the engine
// would (the engine then trusts it: `StaticEmbedder::from_static_built`).
#[allow(dead_code)]
#[path = "src/repo/index/table_layout.rs"]
mod table_layout;

// The lexicon's own code, to check the built-in lexicon and make its
// English-to-Chinese list exactly as the engine would.
#[allow(dead_code)]
#[path = "src/repo/index/bytes.rs"]
mod bytes;
#[allow(dead_code)]
#[path = "src/repo/index/lexicon.rs"]
mod lexicon;

use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let inputs = [
        manifest.join("src"),
        manifest.join("Cargo.toml"),
        manifest.join("../Cargo.lock"),
    ];
    println!("cargo:rerun-if-changed=build.rs");
    let mut files = Vec::new();
    for input in &inputs {
        println!("cargo:rerun-if-changed={}", input.display());
        collect(input, &mut files);
    }
    files.sort();
    // FNV-1a over 128 bits of each file's path (from the manifest's
    // directory) and contents; then the byte and file counts.
    let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
    let mut total: u64 = 0;
    let feed = |bytes: &[u8], h: &mut u128| {
        for &b in bytes {
            *h ^= b as u128;
            *h = h.wrapping_mul(0x0000000001000000000000000000013B);
        }
    };
    for f in &files {
        let rel = f.strip_prefix(&manifest).unwrap_or(f);
        let name = rel.to_string_lossy().replace('\\', "/");
        feed(name.as_bytes(), &mut h);
        feed(&[0], &mut h);
        let bytes = std::fs::read(f).unwrap_or_default();
        total += bytes.len() as u64;
        feed(&(bytes.len() as u64).to_le_bytes(), &mut h);
        feed(&bytes, &mut h);
    }
    let mut hash = [0u8; 32];
    hash[..16].copy_from_slice(&h.to_le_bytes());
    hash[16..24].copy_from_slice(&total.to_le_bytes());
    hash[24..].copy_from_slice(&(files.len() as u64).to_le_bytes());
    let code = format!("pub const SOURCE_HASH: [u8; 32] = {hash:?};\n");
    write_if_changed("source_hash.rs", &code);
    write_builtin_table_id(&manifest);
    write_builtin_lexicon(&manifest);
}

/// The built-in lexicon checked, and its English-to-Chinese list.
fn write_builtin_lexicon(manifest: &Path) {
    if std::env::var_os("CARGO_FEATURE_BUILTIN_LEXICON").is_none() {
        return;
    }
    let file = manifest.join("data/zh-en.lexicon");
    println!("cargo:rerun-if-changed={}", file.display());
    let bytes = std::fs::read(&file).expect("reading core/data/zh-en.lexicon");
    let lexicon = lexicon::Lexicon::from_bytes(bytes)
        .unwrap_or_else(|e| panic!("the built-in lexicon core/data/zh-en.lexicon: {e}"));
    let longest = lexicon.check().expect("checked by from_bytes");
    write_if_changed(
        "builtin_lexicon.rs",
        &format!("pub const BUILTIN_LEXICON_LONGEST: usize = {longest};\n"),
    );
    let reverse = lexicon::Lexicon::encode_reverse(&lexicon.reverse_entries());
    let path =
        PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join("builtin_lexicon_reverse.bin");
    if std::fs::read(&path).ok().as_deref() != Some(reverse.as_slice()) {
        std::fs::write(&path, reverse).expect("writing builtin_lexicon_reverse.bin into OUT_DIR");
    }
}

/// The built-in table's id, written when the feature includes the table.
fn write_builtin_table_id(manifest: &Path) {
    if std::env::var_os("CARGO_FEATURE_BUILTIN_TABLE").is_none() {
        return;
    }
    let table = manifest.join("data/zh-en-static.table");
    println!("cargo:rerun-if-changed={}", table.display());
    let bytes = std::fs::read(&table).expect("reading core/data/zh-en-static.table");
    let hash = blake3::hash(&bytes).to_hex();
    let code = format!(
        "pub const BUILTIN_TABLE_ID: &str = \"static-{}-{}\";\n",
        bytes.len(),
        &hash[..16]
    );
    write_if_changed("builtin_table_id.rs", &code);
    write_builtin_table_lookup(&bytes);
}

/// The table checked, and its entry lookup: `u32 max_chars`, then the
/// slots, as little-endian u32s. A table that does not parse or check is
/// a build error.
fn write_builtin_table_lookup(b: &[u8]) {
    let layout = table_layout::Layout::parse(b)
        .and_then(|layout| layout.check(b).map(|()| layout))
        .unwrap_or_else(|e| panic!("the built-in table core/data/zh-en-static.table: {e}"));
    let (slots, max_chars) =
        table_lookup::build_slots(layout.entries, |i| layout.string_bytes(b, i));
    let mut out = Vec::with_capacity(4 + 4 * slots.len());
    out.extend_from_slice(&(max_chars as u32).to_le_bytes());
    for s in slots {
        out.extend_from_slice(&s.to_le_bytes());
    }
    let path = PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join("builtin_table_lookup.bin");
    if std::fs::read(&path).ok().as_deref() != Some(out.as_slice()) {
        std::fs::write(&path, out).expect("writing builtin_table_lookup.bin into OUT_DIR");
    }
}

fn write_if_changed(name: &str, code: &str) {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join(name);
    if std::fs::read_to_string(&out).ok().as_deref() != Some(code) {
        std::fs::write(&out, code).unwrap_or_else(|e| panic!("writing {name} into OUT_DIR: {e}"));
    }
}

fn collect(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_dir() {
        if let Ok(entries) = std::fs::read_dir(path) {
            for e in entries.flatten() {
                collect(&e.path(), files);
            }
        }
    } else if path.is_file() {
        files.push(path.to_path_buf());
    }
}
