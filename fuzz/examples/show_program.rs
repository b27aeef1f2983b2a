//! Prints the program the `eval` fuzz target generates from an input
//! file (a saved artifact or a corpus entry), to reproduce it with
//! `arbores`: `cargo run --release -p arbores-fuzz --example show_program -- FILE`.

fn main() {
    let path = std::env::args().nth(1).expect("a file");
    let data = std::fs::read(path).expect("readable");
    println!("{}", arbores_fuzz::gen::program(&data));
}
