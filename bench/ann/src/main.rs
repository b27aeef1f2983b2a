//! The semantic index's HNSW graph beside `instant-distance` and an exact
//! scan, on the same vectors: those the default embedder (the built-in
//! static table) makes of N generated descriptions.
//!
//!     cargo run --release -p arbores-ann-bench -- [N...] [KEY=VALUE...]
//!
//! N defaults to 1,000,000. For each N it prints, for the index's own graph
//! (built by `SemanticIndex` as a store's commit builds it: embedding, then
//! graph inserts on the calling thread) and for an `instant-distance`
//! HNSW built over the very vectors the index holds (on all cores, as the
//! crate does): build time (wall and process CPU), heap memory (live bytes
//! after the build, and the peak during it, counted by this program's
//! allocator), the time of a warm top-10 query in process (median, p99 and
//! mean over `queries` queries, after one untimed pass over them all), and
//! recall@10 against an exact scan of every vector (over the first
//! `recall` queries). Then, unless `hybrid=0`, the warm top-10 of the
//! fused (lexical + vector) search that `arb:semantic-search` runs, on a
//! lexical index of the same nodes (written to blobs and opened again, as
//! a store's process has it), timed in all and by the query's language.
//!
//! The descriptions are made of the words of the labelled retrieval set
//! (tests/retrieval/nodes.scm and queries.scm): half English (4-12 words),
//! half Chinese (2-6 words of two to four characters), each node with one
//! or two symbol names of English words and a number; the queries are 2-5
//! words of the same vocabulary, in either language.
//!
//! Recall@10 counts, of the 10 hits returned, those whose exact score is at
//! least the exact 10th-best score (so ties between equal vectors count as
//! found), over 10.
//!
//! KEY=VALUE: `queries` (default 1000), `recall` (300), `peer` (0 skips
//! instant-distance), `hybrid` (0 skips the fused search), `lexical_only`
//! (1: only the fused search, over the lexical index with no vectors,
//! timed by the query's language: the lexical scorer's part; on the index
//! as built in memory and as written to blobs and opened again, as a
//! store's process has it; 2: only the latter),
//! `hybrid_queries` (200), `id_ef` and `id_efc` (instant-distance's
//! ef_search and ef_construction, default 100 and 100, the crate's), the
//! index's `ef` (ef_search), `efc` (ef_construction) and `links`, and
//! `efs=64,128,256`: the candidates per search to measure the index's
//! graph with, each in turn on the same graph (default: its ef_search).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use arbores_core::repo::cas::sorted::SortedMap;
use arbores_core::repo::cas::{Blobs, MemoryBlobs};
use arbores_core::repo::index::{
    default_embedder, default_lexicon, DependencyIndex, FieldWeights, Fusion, Indexes,
    LexicalIndex, SemanticConfig, SemanticIndex, SemanticQuery, SymbolIndex,
};
use arbores_core::repo::node::{Node, NodeId};
use fastrand::Rng;

/// The system allocator, counting the bytes live and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            if new_size >= layout.size() {
                let now =
                    LIVE.fetch_add(new_size - layout.size(), Relaxed) + new_size - layout.size();
                PEAK.fetch_max(now, Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Heap bytes live and the peak since `start` (the peak is reset to now).
struct Heap(usize);

impl Heap {
    fn start() -> Heap {
        let now = LIVE.load(Relaxed);
        PEAK.store(now, Relaxed);
        Heap(now)
    }
    /// (live now − at start, peak − at start)
    fn since(&self) -> (usize, usize) {
        (
            LIVE.load(Relaxed).saturating_sub(self.0),
            PEAK.load(Relaxed).saturating_sub(self.0),
        )
    }
}

/// User + system CPU time of the whole process (all threads), from
/// /proc/self/stat; zero where there is none.
fn cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // The fields after the command name (which is in parentheses):
    // state is field 3, utime 14 and stime 15, in clock ticks (100 Hz).
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return Duration::ZERO;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`, to the
/// nanosecond: /proc's counters move only at the scheduler's ticks); zero
/// where there is none. On a loaded machine a query's wall time includes
/// the time other processes ran; this does not.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to write.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// The strings of a file of Scheme data (the retrieval set's files), read
/// by the engine's own reader: each is written followed by a NUL.
fn literals(src: &str) -> Vec<String> {
    let program = format!(
        "(define (walk x)
           (cond ((string? x) (display x) (write-char (integer->char 0)))
                 ((pair? x) (walk (car x)) (walk (cdr x)))))
         (walk '(\n{src}\n))"
    );
    let result = arbores_core::Engine::new().eval(&program);
    if let Some(e) = result.error {
        panic!("reading the retrieval set: {}", e.message);
    }
    let mut out: Vec<String> = result.output.split('\0').map(str::to_owned).collect();
    out.pop(); // after the last NUL
    out
}

fn is_han(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

/// The words the descriptions and queries are made of.
struct Vocabulary {
    english: Vec<String>,
    chinese: Vec<String>,
}

impl Vocabulary {
    fn load() -> Vocabulary {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/retrieval/");
        let mut english = std::collections::BTreeSet::new();
        let mut chinese = std::collections::BTreeSet::new();
        for file in ["nodes.scm", "queries.scm"] {
            let src = std::fs::read_to_string(format!("{dir}{file}"))
                .unwrap_or_else(|e| panic!("{dir}{file}: {e}"));
            for lit in literals(&src) {
                if lit.contains('(') {
                    continue; // code
                }
                for w in lit.split(|c: char| !c.is_alphanumeric() || is_han(c)) {
                    let w = w.to_lowercase();
                    if w.len() >= 2 && w.chars().all(|c| c.is_ascii_alphabetic()) {
                        english.insert(w);
                    }
                }
                let han: Vec<char> = lit.chars().collect();
                for run in han.split(|c| !is_han(*c)) {
                    // Every two-character piece, and the three- and
                    // four-character ones that start at even offsets.
                    for len in 2..=4 {
                        let mut at = 0;
                        while at + len <= run.len() {
                            chinese.insert(run[at..at + len].iter().collect::<String>());
                            at += if len == 2 { 1 } else { 2 };
                        }
                    }
                }
            }
        }
        Vocabulary {
            english: english.into_iter().collect(),
            chinese: chinese.into_iter().collect(),
        }
    }

    fn english_words(&self, rng: &mut Rng, n: usize) -> String {
        (0..n)
            .map(|_| self.english[rng.usize(..self.english.len())].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn chinese_words(&self, rng: &mut Rng, n: usize) -> String {
        (0..n)
            .map(|_| self.chinese[rng.usize(..self.chinese.len())].as_str())
            .collect()
    }

    fn description(&self, rng: &mut Rng) -> String {
        if rng.usize(..2) == 0 {
            let n = 4 + rng.usize(..9);
            let mut s = self.english_words(rng, n);
            if let Some(c) = s.get_mut(0..1) {
                c.make_ascii_uppercase();
            }
            s
        } else {
            let n = 2 + rng.usize(..5);
            self.chinese_words(rng, n)
        }
    }

    fn query(&self, rng: &mut Rng) -> String {
        let n = 2 + rng.usize(..4);
        if rng.usize(..2) == 0 {
            self.english_words(rng, n)
        } else {
            self.chinese_words(rng, n.min(3))
        }
    }

    fn node(&self, rng: &mut Rng, id: NodeId) -> Node {
        let parts = 1 + rng.usize(..2);
        let name = format!(
            "{}-{}",
            self.english_words(rng, parts).replace(' ', "-"),
            id % 1000
        );
        let mut names = vec![name.clone()];
        if rng.usize(..3) == 0 {
            names.push(self.english_words(rng, 1));
        }
        Node {
            id,
            code: Some(format!("(define ({name} x) x)")),
            description: Some(self.description(rng)),
            symbol_names: names,
            kind: Some(["function", "constant", "macro", "record"][rng.usize(..4)].to_string()),
            dependencies: Vec::new(),
        }
    }
}

/// A point of instant-distance: a unit vector; distance 1 − cosine, as the
/// index's graph navigates by.
#[derive(Clone)]
struct Point<const D: usize>([f32; D]);

impl<const D: usize> instant_distance::Point for Point<D> {
    fn distance(&self, other: &Self) -> f32 {
        1.0 - dot(&self.0, &other.0)
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Median, 99th percentile and mean of `times`, in ms.
fn summary(times: &mut [Duration]) -> (f64, f64, f64) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let n = times.len();
    let mean = times.iter().map(|&d| ms(d)).sum::<f64>() / n.max(1) as f64;
    (ms(times[n / 2]), ms(times[(n * 99 / 100).min(n - 1)]), mean)
}

fn mb(bytes: usize) -> String {
    format!("{:.0} MB", bytes as f64 / 1e6)
}

struct Settings {
    /// The graph's candidates per search to measure, each with the same
    /// graph (a search asked for ef/2 hits takes ef candidates; its first
    /// 10 are the top-10).
    efs: Vec<usize>,
    /// Queries of the fused search (each costs far more at 1M).
    hybrid_queries: usize,
    queries: usize,
    recall: usize,
    peer: bool,
    hybrid: bool,
    /// Only the fused search, over a lexical index and no vectors: what
    /// the lexical scorer costs, without building the graph (1: the index
    /// as built and as stored; 2: as stored only).
    lexical_only: usize,
    id_ef: usize,
    id_efc: usize,
    config: SemanticConfig,
}

/// The exact top-10 scores of `q` over `flat` (rows of `dim`), best first.
fn exact_top10(flat: &[f32], dim: usize, q: &[f32]) -> Vec<f32> {
    let mut top: Vec<f32> = Vec::with_capacity(11);
    for row in flat.chunks_exact(dim) {
        let s = dot(row, q);
        if top.len() < 10 || s > top[top.len() - 1] {
            let at = top.partition_point(|&t| t >= s);
            top.insert(at, s);
            top.truncate(10);
        }
    }
    top
}

/// Of `got` (exact scores of the hits returned, at most 10 used), the share
/// reaching the exact 10th-best score.
fn recall_of(exact: &[f32], got: &[f32]) -> f64 {
    let Some(&kth) = exact.last() else {
        return 1.0;
    };
    let found = got.iter().take(10).filter(|&&s| s >= kth - 1e-6).count();
    found.min(exact.len()) as f64 / exact.len() as f64
}

/// The vocabulary, `n` nodes and `queries` query texts, the same for a
/// given `n` in every mode.
fn generated(n: usize, queries: usize) -> (Vocabulary, Vec<Node>, Vec<String>) {
    let vocab = Vocabulary::load();
    let mut rng = Rng::with_seed(0x5eed_0000 + n as u64);
    let nodes: Vec<Node> = (1..=n as NodeId)
        .map(|id| vocab.node(&mut rng, id))
        .collect();
    let texts: Vec<String> = (0..queries).map(|_| vocab.query(&mut rng)).collect();
    (vocab, nodes, texts)
}

fn bench<const D: usize>(n: usize, s: &Settings) {
    println!("== {n} nodes (load average {})", load_average());
    let (vocab, nodes, texts) = generated(n, s.queries);
    println!(
        "  vocabulary: {} English words, {} Chinese words; e.g. {:?} / {:?}",
        vocab.english.len(),
        vocab.chinese.len(),
        nodes[0].description.as_deref().unwrap_or(""),
        nodes[1].description.as_deref().unwrap_or("")
    );

    // (a) The index's own graph, built as a commit builds it.
    let heap = Heap::start();
    let (w0, c0) = (Instant::now(), cpu_time());
    let mut semantic = SemanticIndex::new(default_embedder(), s.config.clone());
    for node in &nodes {
        semantic.apply_deferred(None, Some(node));
    }
    let (embed_wall, embed_cpu) = (w0.elapsed(), cpu_time() - c0);
    let (w1, c1) = (Instant::now(), cpu_time());
    semantic.maintain();
    let (graph_wall, graph_cpu) = (w1.elapsed(), cpu_time() - c1);
    let (ours_live, ours_peak) = heap.since();
    let dim = semantic.dim();
    assert_eq!(dim, D, "the default embedder's dimension");
    let indexed = semantic.len();
    println!(
        "  index: {indexed} vectors of {dim} dimensions; embedding + entries {:.1} s wall, {:.1} s CPU ({:.1} µs/node); graph {:.1} s wall, {:.1} s CPU ({:.1} µs/node, one thread); heap {} live, {} peak; graph {:?}",
        embed_wall.as_secs_f64(),
        embed_cpu.as_secs_f64(),
        embed_cpu.as_secs_f64() * 1e6 / n as f64,
        graph_wall.as_secs_f64(),
        graph_cpu.as_secs_f64(),
        graph_cpu.as_secs_f64() * 1e6 / n as f64,
        mb(ours_live),
        mb(ours_peak),
        semantic.stats().segments,
    );

    // The same vectors, as rows, for the exact scan and the peer.
    let mut ids: Vec<NodeId> = Vec::with_capacity(indexed);
    let mut flat: Vec<f32> = vec![0.0; indexed * dim];
    for (row, (id, v, _)) in flat.chunks_exact_mut(dim).zip(semantic.entries()) {
        v.write_dense(row);
        ids.push(id);
    }
    let queries: Vec<Vec<f32>> = texts
        .iter()
        .filter_map(|t| semantic.embed_query(t).ok().flatten())
        .collect();
    println!(
        "  {} queries with features of {}",
        queries.len(),
        texts.len()
    );

    // (b) instant-distance over the same vectors.
    let peer = s.peer.then(|| {
        let heap = Heap::start();
        let (w0, c0) = (Instant::now(), cpu_time());
        let points: Vec<Point<D>> = flat
            .chunks_exact(D)
            .map(|r| Point(r.try_into().expect("rows of D")))
            .collect();
        let map = instant_distance::Builder::default()
            .ef_construction(s.id_efc)
            .ef_search(s.id_ef)
            .seed(0x4172_626f_7265_7321)
            .build(points, ids.clone());
        let (wall, cpu) = (w0.elapsed(), cpu_time() - c0);
        let (live, peak) = heap.since();
        println!(
            "  instant-distance (M 32, ef_construction {}, ef_search {}): built in {:.1} s wall, {:.1} s CPU ({:.1} µs/node, all cores); heap {} live, {} peak",
            s.id_efc,
            s.id_ef,
            wall.as_secs_f64(),
            cpu.as_secs_f64(),
            cpu.as_secs_f64() * 1e6 / n as f64,
            mb(live),
            mb(peak)
        );
        (map, wall, cpu, live, peak)
    });

    // ef → the query asking for that many candidates (see `efs`).
    let asks: Vec<(usize, SemanticQuery)> = s
        .efs
        .iter()
        .map(|&ef| {
            let top_k = if ef <= s.config.ef_search { 10 } else { ef / 2 };
            (
                ef,
                SemanticQuery {
                    top_k,
                    ..SemanticQuery::default()
                },
            )
        })
        .collect();
    let ours = |q: &[f32], ask: &SemanticQuery| -> Vec<NodeId> {
        let mut hits = semantic.search_prepared(q, ask).unwrap_or_default();
        hits.truncate(10);
        hits.iter().map(|h| h.id).collect()
    };
    let mut search = instant_distance::Search::default();
    // Warm: one untimed pass of every query through each.
    for q in &queries {
        for (_, ask) in &asks {
            std::hint::black_box(ours(q, ask));
        }
        if let Some((map, ..)) = &peer {
            std::hint::black_box(
                map.search(&Point(q[..].try_into().unwrap()), &mut search)
                    .len(),
            );
        }
    }
    // Timed, side by side, query by query.
    let mut ours_t: Vec<Vec<Duration>> = vec![Vec::new(); asks.len()];
    let mut peer_t = Vec::new();
    // CPU per query, measured over a pass of all queries through one.
    let mut ours_cpu = Vec::new();
    for (_, ask) in &asks {
        let c = thread_cpu();
        for q in &queries {
            std::hint::black_box(ours(q, ask));
        }
        ours_cpu.push((thread_cpu() - c).as_secs_f64() * 1e3 / queries.len() as f64);
    }
    let peer_cpu = peer.as_ref().map(|(map, ..)| {
        let c = thread_cpu();
        for q in &queries {
            let p = Point(q[..].try_into().unwrap());
            std::hint::black_box(map.search(&p, &mut search).take(10).count());
        }
        (thread_cpu() - c).as_secs_f64() * 1e3 / queries.len() as f64
    });
    for q in &queries {
        for (times, (_, ask)) in ours_t.iter_mut().zip(&asks) {
            let t = Instant::now();
            let hits = ours(q, ask);
            times.push(t.elapsed());
            std::hint::black_box(hits);
        }
        if let Some((map, ..)) = &peer {
            let p = Point(q[..].try_into().unwrap());
            let t = Instant::now();
            let hits: Vec<NodeId> = map
                .search(&p, &mut search)
                .take(10)
                .map(|h| *h.value)
                .collect();
            peer_t.push(t.elapsed());
            std::hint::black_box(hits);
        }
    }

    // Recall against the exact scan.
    let sample = &queries[..s.recall.min(queries.len())];
    let row_of: std::collections::HashMap<NodeId, usize> =
        ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    let score = |q: &[f32], id: NodeId| dot(&flat[row_of[&id] * dim..][..dim], q);
    let mut ours_r = vec![0.0; asks.len()];
    let mut peer_r = 0.0;
    let mut exact_t = Vec::new();
    for q in sample {
        let t = Instant::now();
        let exact = exact_top10(&flat, dim, q);
        exact_t.push(t.elapsed());
        for (r, (_, ask)) in ours_r.iter_mut().zip(&asks) {
            let got: Vec<f32> = ours(q, ask).iter().map(|&id| score(q, id)).collect();
            *r += recall_of(&exact, &got);
        }
        if let Some((map, ..)) = &peer {
            let p = Point(q[..].try_into().unwrap());
            let got: Vec<f32> = map
                .search(&p, &mut search)
                .take(10)
                .map(|h| score(q, *h.value))
                .collect();
            peer_r += recall_of(&exact, &got);
        }
    }
    let k = sample.len().max(1) as f64;
    let (em, ep, emean) = summary(&mut exact_t);
    println!(
        "  exact scan top-10: median {em:.2} ms, p99 {ep:.2} ms, mean {emean:.2} ms ({} queries); recall over {} queries, times over {}",
        sample.len(),
        sample.len(),
        queries.len()
    );
    println!("\n| {n} nodes | build (wall / CPU) | heap after build (peak) | top-10 median | p99 | mean | CPU per query | recall@10 |");
    println!("|---|---|---|---|---|---|---|---|");
    for (i, (ef, _)) in asks.iter().enumerate() {
        let (om, op, omean) = summary(&mut ours_t[i]);
        println!(
            "| index graph, ef {ef} | {:.0} s / {:.0} s (one thread) | {} ({}) | {om:.3} ms | {op:.3} ms | {omean:.3} ms | {:.3} ms | {:.1}% |",
            graph_wall.as_secs_f64(),
            graph_cpu.as_secs_f64(),
            mb(ours_live),
            mb(ours_peak),
            ours_cpu[i],
            100.0 * ours_r[i] / k
        );
    }
    if let Some((map, wall, cpu, live, peak)) = peer {
        let (pm, pp, pmean) = summary(&mut peer_t);
        println!(
            "| instant-distance, ef {} | {:.0} s / {:.0} s (all cores) | {} ({}) | {pm:.3} ms | {pp:.3} ms | {pmean:.3} ms | {:.3} ms | {:.1}% |",
            s.id_ef,
            wall.as_secs_f64(),
            cpu.as_secs_f64(),
            mb(live),
            mb(peak),
            peer_cpu.unwrap_or(0.0),
            100.0 * peer_r / k
        );
        drop(map);
    }
    println!(
        "| exact scan | - | {} (the rows) | {em:.2} ms | {ep:.2} ms | {emean:.2} ms | - | 100% |\n",
        mb(flat.len() * 4)
    );
    drop(flat);

    // The vector path from text (query embedding included).
    let top10 = SemanticQuery::default();
    let mut t_text = Vec::new();
    let c = thread_cpu();
    for t in &texts {
        let t0 = Instant::now();
        std::hint::black_box(semantic.search(t, &top10).ok());
        t_text.push(t0.elapsed());
    }
    let cpu = (thread_cpu() - c).as_secs_f64() * 1e3 / texts.len() as f64;
    let (tm, tp, tmean) = summary(&mut t_text);
    println!(
        "  vector search from text (query embedded): median {tm:.3} ms, p99 {tp:.3} ms, mean {tmean:.3} ms; CPU {cpu:.3} ms per query"
    );

    if !s.hybrid {
        return;
    }
    // The fused search of `arb:semantic-search`, on a lexical index of the
    // same nodes.
    // As a store's process has it: written to blobs and opened again.
    let lexical = stored_and_opened(lexical_index(&nodes));
    let fusion = Fusion::for_embedder(default_embedder().as_ref());
    let ix = Indexes {
        symbols: SymbolIndex::new(),
        dependencies: DependencyIndex::new(),
        semantic,
        lexical,
        fusion,
        lexicon: default_lexicon(),
        lexical_built: true,
    };
    let texts = &texts[..s.hybrid_queries.min(texts.len())];
    for t in texts {
        std::hint::black_box(ix.search(t, &top10).ok());
    }
    let mut t_hybrid = Vec::new();
    let mut cpus = Vec::new();
    let mut by_language: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    for t in texts {
        let (t0, c0) = (Instant::now(), thread_cpu());
        std::hint::black_box(ix.search(t, &top10).ok());
        t_hybrid.push(t0.elapsed());
        let cpu = thread_cpu() - c0;
        cpus.push(cpu);
        by_language[usize::from(t.chars().any(is_han))].push(cpu);
    }
    let (hm, hp, hmean) = summary(&mut t_hybrid);
    let (cm, cp, cmean) = summary(&mut cpus);
    println!(
        "  fused search (arb:semantic-search's, in process, the lexical index stored and opened): median {hm:.3} ms, p99 {hp:.3} ms, mean {hmean:.3} ms; CPU median {cm:.3} ms, p99 {cp:.3} ms, mean {cmean:.3} ms ({} queries)",
        texts.len()
    );
    for (name, times) in ["English", "Chinese"].iter().zip(by_language.iter_mut()) {
        let count = times.len();
        let (m, p, mean) = summary(times);
        println!(
            "  fused search, {name} queries: CPU median {m:.3} ms, p99 {p:.3} ms, mean {mean:.3} ms ({count} queries)"
        );
    }
}

/// `lexical` written to blobs and opened again, its map's nodes read as
/// searches reach them: as a store's process has it.
fn stored_and_opened(mut lexical: LexicalIndex) -> LexicalIndex {
    let map = lexical.map().expect("in memory");
    let root = map.seal();
    let mut blobs = Vec::new();
    map.export(&mut blobs);
    let bytes: usize = blobs.iter().map(|b| b.1.len()).sum();
    println!(
        "  lexical index stored: {} blobs, {:.1} MB",
        blobs.len(),
        bytes as f64 / 1e6
    );
    let stored = MemoryBlobs::new();
    stored.extend(blobs);
    LexicalIndex::from_map(SortedMap::open(root.as_ref(), Blobs::new(stored)))
}

/// A lexical index of `nodes`, built in memory, its cost printed.
fn lexical_index(nodes: &[Node]) -> LexicalIndex {
    let (w0, c0) = (Instant::now(), cpu_time());
    let mut lexical = LexicalIndex::new(FieldWeights::default());
    for node in nodes {
        lexical.insert(node).expect("in memory");
    }
    let (lw, lc) = (w0.elapsed(), cpu_time() - c0);
    println!(
        "  lexical index: {:.1} s wall, {:.1} s CPU ({:.1} µs/node)",
        lw.as_secs_f64(),
        lc.as_secs_f64(),
        lc.as_secs_f64() * 1e6 / nodes.len().max(1) as f64
    );
    lexical
}

/// The fused search with no vectors (`lexical_only=1`): the lexical
/// scorer's part of `arb:semantic-search`, on the nodes and queries `bench`
/// uses, timed by the query's language.
fn bench_lexical(n: usize, s: &Settings) {
    println!(
        "== {n} nodes, lexical only (load average {})",
        load_average()
    );
    let (_, nodes, texts) = generated(n, s.queries);
    let lexical = lexical_index(&nodes);
    let top10 = SemanticQuery {
        top_k: 10,
        threshold: 0.0,
        kind: None,
    };
    let texts = &texts[..s.hybrid_queries.min(texts.len())];
    // As built in memory (one allocation per entry, in the order of the
    // inserts), then as a store's process has it: the map written to blobs
    // and opened again, its nodes read as searches reach them.
    let indexes = if s.lexical_only == 2 {
        vec![("stored and opened", stored_and_opened(lexical))]
    } else {
        let reopened = stored_and_opened(lexical.clone());
        vec![
            ("built in memory", lexical),
            ("stored and opened", reopened),
        ]
    };
    for (how, lexical) in indexes {
        let mut semantic = SemanticIndex::new(default_embedder(), s.config.clone());
        semantic.maintain();
        let ix = Indexes {
            symbols: SymbolIndex::new(),
            dependencies: DependencyIndex::new(),
            semantic,
            lexical,
            fusion: Fusion::for_embedder(default_embedder().as_ref()),
            lexicon: default_lexicon(),
            lexical_built: true,
        };
        for t in texts {
            std::hint::black_box(ix.search(t, &top10).ok());
        }
        let mut cpus: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
        for t in texts {
            let c0 = thread_cpu();
            std::hint::black_box(ix.search(t, &top10).ok());
            cpus[usize::from(t.chars().any(is_han))].push(thread_cpu() - c0);
        }
        for (name, times) in ["English", "Chinese"].iter().zip(cpus.iter_mut()) {
            let count = times.len();
            let (m, p, mean) = summary(times);
            println!(
                "  fused search, no vectors, index {how}, {name} queries: CPU median {m:.3} ms, p99 {p:.3} ms, mean {mean:.3} ms ({count} queries)"
            );
        }
    }
}

fn main() {
    let mut sizes = Vec::new();
    let mut s = Settings {
        efs: Vec::new(),
        hybrid_queries: 200,
        queries: 1000,
        recall: 300,
        peer: true,
        hybrid: true,
        lexical_only: 0,
        id_ef: 100,
        id_efc: 100,
        config: SemanticConfig::default(),
    };
    for arg in std::env::args().skip(1) {
        if let Ok(n) = arg.parse::<usize>() {
            sizes.push(n);
            continue;
        }
        if let Some(list) = arg.strip_prefix("efs=") {
            s.efs = list.split(',').filter_map(|x| x.parse().ok()).collect();
            continue;
        }
        let parsed = arg
            .split_once('=')
            .and_then(|(k, v)| Some((k, v.parse::<usize>().ok()?)));
        let Some((key, v)) = parsed else {
            eprintln!("ann-bench: {arg}: expected N or KEY=NUMBER");
            std::process::exit(2);
        };
        match key {
            "queries" => s.queries = v.max(1),
            "hybrid_queries" => s.hybrid_queries = v.max(1),
            "recall" => s.recall = v,
            "peer" => s.peer = v != 0,
            "hybrid" => s.hybrid = v != 0,
            "lexical_only" => s.lexical_only = v,
            "id_ef" => s.id_ef = v,
            "id_efc" => s.id_efc = v,
            "ef" => s.config.ef_search = v,
            "efc" => s.config.ef_construction = v,
            "links" => s.config.links = v,
            _ => {
                eprintln!("ann-bench: unknown setting {key}");
                std::process::exit(2);
            }
        }
    }
    if sizes.is_empty() {
        sizes.push(1_000_000);
    }
    if s.efs.is_empty() {
        s.efs.push(s.config.ef_search);
    }
    println!(
        "semantic config: {:?}; embedder {}",
        s.config,
        default_embedder().id()
    );
    let dim = default_embedder().dim();
    for n in sizes {
        if s.lexical_only > 0 {
            bench_lexical(n, &s);
            continue;
        }
        match dim {
            24 => bench::<24>(n, &s),
            64 => bench::<64>(n, &s),
            256 => bench::<256>(n, &s),
            d => {
                eprintln!("ann-bench: no instant-distance point type for {d} dimensions");
                std::process::exit(2);
            }
        }
    }
}
