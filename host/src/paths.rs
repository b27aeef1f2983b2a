//! Per-user directories. Each may be missing (no home directory): callers
//! then do without a cache or history rather than fail.

use std::path::PathBuf;

/// Compiled guest modules: ARBORES_CACHE_DIR, else e.g. ~/.cache/arbores.
pub fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os("ARBORES_CACHE_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::cache_dir().map(|d| d.join("arbores")),
    }
}

/// REPL history and the default store: e.g. ~/.local/share/arbores.
pub fn data_dir() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("arbores"))
}

/// The knowledge store's directory when neither --store nor ARBORES_STORE
/// names one.
pub fn default_store() -> PathBuf {
    data_dir()
        .map(|d| d.join("store"))
        .unwrap_or_else(|| PathBuf::from("arbores-store"))
}
