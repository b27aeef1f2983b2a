//! Embeds the prepared image when it has been built (scripts/build-image).

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    println!("cargo:rerun-if-changed=build.rs");
    prepared_image(&manifest.join("../../target/prepared"));
}

include!("../../core/build_support/prepared_image.rs");
