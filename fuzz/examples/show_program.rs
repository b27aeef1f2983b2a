//! Prints the program the `eval` fuzz target generates from an input
//! file (a saved artifact or a corpus entry), to reproduce it with
//! `arbores`: `cargo run --release -p arbores-fuzz --example show_program -- FILE`.

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: show_program FILE");
        return std::process::ExitCode::from(2);
    };
    match std::fs::read(&path) {
        Ok(data) => {
            println!("{}", arbores_fuzz::gen::program(&data));
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
