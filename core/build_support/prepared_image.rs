// Included by the build scripts of the host, the wasmtime guest and the
// browser module (`include!`), which each embed the prepared image.

/// Writes `$OUT_DIR/prepared.rs` defining `PREPARED_IMAGE: Option<&[u8]>`:
/// the prepared image `scripts/build-image` wrote in `dir` (or the file
/// named by ARBORES_PRELUDE_IMAGE), which the engine loads instead of
/// compiling the prelude (`arbores_core::install_prepared_image`).
fn prepared_image(dir: &std::path::Path) {
    println!("cargo:rerun-if-env-changed=ARBORES_PRELUDE_IMAGE");
    let image = match std::env::var_os("ARBORES_PRELUDE_IMAGE") {
        Some(path) => {
            println!("cargo:rerun-if-changed={}", std::path::PathBuf::from(&path).display());
            std::path::PathBuf::from(path)
        }
        None => {
            // The directory, not the file: cargo reruns a script that
            // watches a missing file on every build.
            let _ = std::fs::create_dir_all(dir);
            println!("cargo:rerun-if-changed={}", dir.display());
            dir.join("prelude.image")
        }
    };
    let code = match image.canonicalize() {
        Ok(path) if path.is_file() => format!(
            "pub const PREPARED_IMAGE: Option<&[u8]> = Some(include_bytes!({:?}));\n",
            path.display().to_string()
        ),
        _ => "pub const PREPARED_IMAGE: Option<&[u8]> = None;\n".to_string(),
    };
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join("prepared.rs");
    if std::fs::read_to_string(&out).ok().as_deref() != Some(code.as_str()) {
        std::fs::write(&out, code).expect("writing prepared.rs into OUT_DIR");
    }
}
