//! Evaluates its argument (or stdin) with the native engine and prints the result.
use std::io::Read;

fn main() {
    let src = match std::env::args().nth(1) {
        Some(s) => s,
        None => {
            let mut s = String::new();
            let _ = std::io::stdin().read_to_string(&mut s);
            s
        }
    };
    let mut e = arbores_core::Engine::new();
    let r = e.eval(&src);
    print!("{}", r.output);
    if let Some(v) = r.value {
        println!("{v}");
    }
    if let Some(err) = r.error {
        eprintln!("error: {err}");
        for b in err.backtrace {
            eprintln!("  at {b}");
        }
        std::process::exit(1);
    }
}
