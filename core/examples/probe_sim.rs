use arbores_core::repo::index::{default_lexicon, Embedder, StaticEmbedder};
fn main() {
    let e = StaticEmbedder::from_static(arbores_core::repo::index::BUILTIN_TABLE.unwrap()).unwrap();
    let l = default_lexicon().unwrap();
    let n = |v: Vec<f32>| { let s = v.iter().map(|x| x*x).sum::<f32>().sqrt(); v.into_iter().map(|x| x/s.max(1e-9)).collect::<Vec<_>>() };
    for w in std::env::args().skip(1) {
        let a = n(e.embed(&w));
        print!("{w}:");
        for (g, x) in l.glosses(&w) {
            let b = n(e.embed(&g));
            let c: f32 = a.iter().zip(&b).map(|(x,y)| x*y).sum();
            print!("  {g} ({x:.2}) cos {c:.2};");
        }
        println!();
    }
}
