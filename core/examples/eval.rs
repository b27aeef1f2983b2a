//! Evaluates its argument (or stdin) with the native engine and prints the result.
//!
//! `eval [--tier system|read-write|read-only] [--clock SECONDS] [EXPR]`
use std::io::Read;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut src = None;
    let mut e = arbores_core::Engine::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--tier" => match args
                .next()
                .as_deref()
                .and_then(arbores_core::Tier::from_name)
            {
                Some(t) => e.set_tier(t),
                None => {
                    eprintln!("--tier takes system, read-write or read-only");
                    std::process::exit(2);
                }
            },
            "--clock" => match args.next().and_then(|s| s.parse::<f64>().ok()) {
                Some(c) => e.set_clock(c),
                None => {
                    eprintln!("--clock takes seconds since the epoch");
                    std::process::exit(2);
                }
            },
            _ => src = Some(a),
        }
    }
    let src = src.unwrap_or_else(|| {
        let mut s = String::new();
        let _ = std::io::stdin().read_to_string(&mut s);
        s
    });
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
