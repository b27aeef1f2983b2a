use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    prepared_image(&manifest.join("../../target/prepared"));
    // Rust's default 1 MiB shadow stack on wasm32 is small for a deeply
    // recursive reader or printer; overflowing it traps (the stack is placed
    // first in linear memory), losing the session. 8 MiB costs only address
    // space until used.
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg-cdylib=-zstack-size=8388608");
    }
}

include!("../../core/build_support/prepared_image.rs");
