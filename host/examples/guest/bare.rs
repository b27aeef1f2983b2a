//! The embedded guest for the host's examples, without the `arbores`
//! host around it: the component's bindings, a host that grants nothing
//! and has no store, and the component compiled and linked.

pub mod bindings {
    wasmtime::component::bindgen!({
        world: "arbores",
        path: "../wasm/wit",
    });
}

use std::path::{Path, PathBuf};

use bindings::arbores::engine::types as wit;
use bindings::{Arbores, ArboresPre};
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::Engine;

/// A host that grants nothing and has no store: all a new engine needs.
pub struct Bare;

impl bindings::arbores::engine::host::Host for Bare {
    fn should_stop(&mut self) -> bool {
        false
    }
    fn write_output(&mut self, _text: String) -> bool {
        false
    }
    fn panicked(&mut self, message: String) {
        eprintln!("the guest panicked: {message}");
    }
    fn now(&mut self) -> f64 {
        0.0
    }
    fn get_blob(&mut self, _name: Vec<u8>) -> Result<Option<Vec<u8>>, String> {
        Ok(None)
    }
    fn store_head(&mut self) -> Result<Option<Vec<u8>>, String> {
        Ok(None)
    }
    fn store_commit(
        &mut self,
        _base: Option<Vec<u8>>,
        _snapshot: wit::Snapshot,
    ) -> Result<wit::CommitReply, String> {
        Err("no store".into())
    }
    fn read_file(&mut self, _path: String, _max: u64) -> Result<Vec<u8>, String> {
        Err("not permitted".into())
    }
    fn write_file(&mut self, _path: String, _bytes: Vec<u8>, _append: bool) -> Result<(), String> {
        Err("not permitted".into())
    }
    fn file_exists(&mut self, _path: String) -> Result<bool, String> {
        Err("not permitted".into())
    }
    fn delete_file(&mut self, _path: String) -> Result<(), String> {
        Err("not permitted".into())
    }
    fn read_input(&mut self) -> Result<Option<String>, String> {
        Err("not permitted".into())
    }
    fn write_error(&mut self, _text: String) -> bool {
        false
    }
    fn command_line(&mut self) -> Vec<String> {
        vec![]
    }
    fn environment(&mut self) -> Vec<(String, String)> {
        vec![]
    }
}

impl wit::Host for Bare {}

/// This build's component, as `scripts/build-guest` writes it.
pub fn this_build() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/guest/arbores_guest.component.wasm")
}

/// The component at `path` compiled (the time it took beside it) and linked
/// to a `Bare` host, ready to instantiate.
pub fn compile(engine: &Engine, path: &Path) -> (ArboresPre<Bare>, std::time::Duration) {
    let t = std::time::Instant::now();
    let component = Component::from_file(engine, path)
        .unwrap_or_else(|e| panic!("{}: {e} (run scripts/build-guest)", path.display()));
    let took = t.elapsed();
    let mut linker = Linker::<Bare>::new(engine);
    Arbores::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state).expect("link");
    let pre = ArboresPre::new(linker.instantiate_pre(&component).expect("pre")).expect("pre");
    (pre, took)
}
