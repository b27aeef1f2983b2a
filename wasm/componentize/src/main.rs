//! Wraps a core wasm module built with wit-bindgen into a WebAssembly
//! component, like `wasm-tools component new`, without having to install
//! that CLI (a long build) just for this step.
//!
//!     arbores-componentize INPUT.wasm OUTPUT.component.wasm
//!
//! The output is written to a temporary file and renamed into place, so an
//! interrupted run never leaves a half-written component behind.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        eprintln!("usage: arbores-componentize INPUT.wasm OUTPUT.component.wasm");
        return ExitCode::from(2);
    };
    match run(Path::new(input), Path::new(output)) {
        Ok(size) => {
            eprintln!("componentize: wrote {output} ({size} bytes)");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(input: &Path, output: &Path) -> Result<usize, String> {
    let module = std::fs::read(input).map_err(|e| format!("{}: {e}", input.display()))?;
    let component = wit_component::ComponentEncoder::default()
        .module(&module)
        .map_err(|e| {
            format!(
                "{}: not a module with component type information: {e:#}",
                input.display()
            )
        })?
        .validate(true)
        .encode()
        .map_err(|e| format!("{}: cannot build a component: {e:#}", input.display()))?;

    let mut tmp = PathBuf::from(output);
    tmp.as_mut_os_string().push(".tmp");
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(&tmp, &component).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, output).map_err(|e| format!("{}: {e}", output.display()))?;
    Ok(component.len())
}
