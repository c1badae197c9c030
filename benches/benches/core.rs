//! Criterion benchmarks of the hot paths, English rules throughout:
//!
//! - `movegen`: `legal_moves` over a fixed set of positions (all, quiet only, capture only),
//!   and perft depth 7 from the start position.
//! - `index`: `SliceIndex::index` and `unindex` on the 6-piece slice 2121.
//! - `solve`: `solve_slice` of the 4-piece slice 1111, its dependencies solved in setup.
//! - `probe`: `probe_wld`, `probe_dtw` and `probe_dtc` (at counter 3) of 4-piece positions (quiet, and capture ones
//!   resolved by search) on the 2-4 piece tables built in setup, with a warm block cache and
//!   with a cache that keeps nothing (every probe starts cold; a block is decompressed once
//!   a probe, however many of its values the probe reads).
//! - `probe_threat`: WLD probes of plain quiet positions and of threat positions through the
//!   2-4 tables in format version 1 and repacked in version 3 (threat positions answered by
//!   a one-ply search), cached and uncached.
//! - `probe_international`: the same kinds of WLD probe (plain quiet, threat, capture) on
//!   International 2-4 version 3 tables (flying kings: far more moves to search), cached
//!   and uncached; the one group not in English rules.
//!
//! Every position set is made deterministically by unindexing pseudo-random indices (a fixed
//! seed), so runs compare. Throughput is in positions (perft: leaf nodes; solve: positions
//! of both sides to move). Run with `cargo bench -p dtb-benches`; measurement times are
//! short so the whole run takes a few minutes on two cores.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use dtb_gen::build::{self, Plan, Quiet, Values};
use dtb_gen::solve::solve_slice;
use dtb_gen::store::Store;
use dtb_probe::internal::index::SliceIndex;
use dtb_probe::movegen::{legal_moves, perft, Counting, Move};
use dtb_probe::{Color, Material, Position, Rules, Tablebase};

const RULES: Rules = Rules::ENGLISH;

/// SplitMix64: a small deterministic generator, enough to pick indices.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        dtb_probe::internal::rng::splitmix64(&mut self.0)
    }

    /// A value in `0..n` (n > 0); the modulo bias is irrelevant here.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn material(digits: &str) -> Material {
    Material::parse(digits).expect("four digits")
}

/// `per_slice` positions of each slice, from pseudo-random indices, the side to move
/// alternating (English rules: [`sample_in`]).
fn sample(slices: &[Material], per_slice: usize, seed: u64) -> Vec<Position> {
    sample_in(&RULES, slices, per_slice, seed)
}

/// [`sample`] under `rules`.
fn sample_in(rules: &Rules, slices: &[Material], per_slice: usize, seed: u64) -> Vec<Position> {
    let mut rng = SplitMix64(seed);
    let mut out = Vec::with_capacity(slices.len() * per_slice);
    for &m in slices {
        let ix = SliceIndex::new(m, rules.geometry());
        for k in 0..per_slice {
            let side = if k % 2 == 0 {
                Color::White
            } else {
                Color::Black
            };
            out.push(ix.unindex(rng.below(ix.size()), side));
        }
    }
    out
}

/// Split positions into (quiet, capture): whether the side to move must capture. Positions
/// without a legal move (game over) go to neither (English rules: [`split_by_capture_in`]).
fn split_by_capture(positions: &[Position]) -> (Vec<Position>, Vec<Position>) {
    split_by_capture_in(&RULES, positions)
}

/// [`split_by_capture`] under `rules`.
fn split_by_capture_in(rules: &Rules, positions: &[Position]) -> (Vec<Position>, Vec<Position>) {
    let mut moves = Vec::new();
    let (mut quiet, mut capture) = (Vec::new(), Vec::new());
    for p in positions {
        legal_moves(rules, p, Counting::Unique, &mut moves);
        match moves.first() {
            Some(m) if m.is_capture() => capture.push(*p),
            Some(_) => quiet.push(*p),
            None => {}
        }
    }
    (quiet, capture)
}

fn bench_movegen(c: &mut Criterion) {
    // 8 slices x 128 = 1024 positions, from kings-only endings to 8 against 8 men.
    let slices: Vec<Material> = [
        "0202", "2121", "3030", "2222", "4040", "3131", "6060", "8080",
    ]
    .iter()
    .map(|s| material(s))
    .collect();
    let all = sample(&slices, 128, 1);
    let (quiet, capture) = split_by_capture(&all);
    eprintln!(
        "movegen positions: {} ({} quiet, {} capture, {} without a move)",
        all.len(),
        quiet.len(),
        capture.len(),
        all.len() - quiet.len() - capture.len()
    );

    let mut g = c.benchmark_group("movegen");
    let mut moves: Vec<Move> = Vec::with_capacity(64);
    for (name, set) in [("all", &all), ("quiet", &quiet), ("capture", &capture)] {
        g.throughput(Throughput::Elements(set.len() as u64));
        g.bench_function(format!("legal_moves/{name}"), |b| {
            b.iter(|| {
                let mut n = 0usize;
                for p in set.iter() {
                    legal_moves(&RULES, black_box(p), Counting::Unique, &mut moves);
                    n += moves.len();
                }
                n
            })
        });
    }

    let start = Position::start(&RULES);
    let nodes = perft(&RULES, &start, 7, Counting::Unique);
    // ../shared/data/perft.tsv: English, depth 7.
    assert_eq!(nodes, 179_740, "perft english depth 7");
    g.throughput(Throughput::Elements(nodes));
    g.bench_function("perft/english_7", |b| {
        b.iter(|| perft(&RULES, black_box(&start), 7, Counting::Unique))
    });
    g.finish();
}

fn bench_index(c: &mut Criterion) {
    const N: usize = 4096;
    let m = material("2121");
    let ix = SliceIndex::new(m, RULES.geometry());
    let mut rng = SplitMix64(2);
    let indices: Vec<u64> = (0..N).map(|_| rng.below(ix.size())).collect();
    let positions: Vec<Position> = indices
        .iter()
        .map(|&i| ix.unindex(i, Color::White))
        .collect();
    eprintln!("index slice {m}: {} positions per side", ix.size());

    let mut g = c.benchmark_group("index");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(format!("index/{m}"), |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for p in &positions {
                acc ^= ix.index(black_box(p));
            }
            acc
        })
    });
    g.bench_function(format!("unindex/{m}"), |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for &i in &indices {
                acc ^= ix.unindex(black_box(i), Color::White).white();
            }
            acc
        })
    });
    g.finish();
}

fn bench_solve(c: &mut Criterion) {
    let target = material("1111");
    // Dependencies: captures lead to fewer pieces, promotions to fewer men.
    let mut store = Store::new(RULES);
    for m in Material::solve_order(target.pieces(), 12) {
        if m.pieces() < target.pieces() || m.men() < target.men() {
            let s = solve_slice(&RULES, &store, m, &|_| {}).expect("dependency solves");
            store.insert(s.into_stored());
        }
    }
    let size = SliceIndex::new(target, RULES.geometry()).size();
    eprintln!("solve slice {target}: {size} positions per side");

    let mut g = c.benchmark_group("solve");
    // One solve takes a good fraction of a second: few samples of one iteration each.
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.measurement_time(Duration::from_secs(8));
    g.throughput(Throughput::Elements(2 * size));
    g.bench_function(format!("solve_slice/{target}"), |b| {
        b.iter(|| {
            solve_slice(&RULES, &store, black_box(target), &|_| {})
                .expect("solves")
                .max_plies
        })
    });
    g.finish();
}

fn bench_probe(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let plan = Plan::new(RULES, 4, dir.path()).expect("plan");
    build::run(&plan, &Quiet).expect("build English 2-4 piece tables");
    // DTC tables beside them (English's count rule, 80 plies).
    let dtc = Plan::new(RULES, 4, dir.path())
        .expect("plan")
        .with_values(Values::WLD_DTC);
    build::run(&dtc, &Quiet).expect("build English 2-4 piece DTC tables");

    // Positions of every 4-piece slice (the largest tables, full blocks), stored (canonical)
    // or colour-reversed, shuffled so that each set below mixes all slices.
    let slices: Vec<Material> = Material::solve_order(4, 12)
        .into_iter()
        .filter(|m| m.pieces() == 4)
        .flat_map(|m| [m, m.mirror()])
        .collect();
    let mut all = sample(&slices, 256, 3);
    let mut rng = SplitMix64(4);
    for i in (1..all.len()).rev() {
        all.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let (quiet, capture) = split_by_capture(&all);
    const SET: usize = 256;
    assert!(
        quiet.len() >= 2 * SET && capture.len() >= 2 * SET,
        "too few sampled positions: {} quiet, {} capture",
        quiet.len(),
        capture.len()
    );
    // Cached: the same small set, probed once in setup so every block is in the cache.
    // Uncached: a different set, through a cache of 0 bytes that keeps no block.
    let quiet_hot = &quiet[..SET];
    let quiet_cold = &quiet[SET..2 * SET];
    let capture_hot = &capture[..SET];
    let capture_cold = &capture[SET..2 * SET];
    eprintln!(
        "probe positions: {} quiet, {} capture; sets of {SET}",
        quiet.len(),
        capture.len()
    );

    let warm = Tablebase::open(dir.path(), RULES).expect("open tables");
    let mut cold = Tablebase::with_cache_bytes(RULES, 0);
    cold.add_directory(dir.path()).expect("open tables");
    // Open every table (lazily opened on first use) and fill the warm cache.
    for tb in [&warm, &cold] {
        for p in quiet_hot
            .iter()
            .chain(capture_hot)
            .chain(quiet_cold)
            .chain(capture_cold)
        {
            tb.probe_wld(p).expect("probe");
            tb.probe_dtw(p).expect("probe");
            tb.probe_dtc(p, 0).expect("probe");
        }
    }

    let mut g = c.benchmark_group("probe");
    g.throughput(Throughput::Elements(SET as u64));
    let cases = [
        ("quiet/cached", &warm, quiet_hot),
        ("quiet/uncached", &cold, quiet_cold),
        ("capture/cached", &warm, capture_hot),
        ("capture/uncached", &cold, capture_cold),
    ];
    for (name, tb, set) in cases {
        g.bench_function(format!("wld/{name}"), |b| {
            b.iter(|| {
                let mut wins = 0u32;
                for p in set {
                    wins +=
                        (tb.probe_wld(black_box(p)).expect("probe") == dtb_probe::Wld::Win) as u32;
                }
                wins
            })
        });
        g.bench_function(format!("dtw/{name}"), |b| {
            b.iter(|| {
                let mut plies = 0u32;
                for p in set {
                    plies += tb
                        .probe_dtw(black_box(p))
                        .expect("probe")
                        .plies
                        .unwrap_or(0) as u32;
                }
                plies
            })
        });
        g.bench_function(format!("dtc/{name}"), |b| {
            b.iter(|| {
                let mut plies = 0u32;
                for p in set {
                    let d = tb.probe_dtc(black_box(p), black_box(3)).expect("probe");
                    plies += d.plies.unwrap_or(0) as u32;
                }
                plies
            })
        });
    }
    g.finish();

    // Scaling: the same work (PASSES passes over a set) on one thread and split over two
    // threads sharing one Tablebase. Two threads at half the time per batch = linear scaling.
    const PASSES: usize = 20;
    let mut g = c.benchmark_group("probe_threads");
    g.throughput(Throughput::Elements((PASSES * SET) as u64));
    for (name, tb, set) in [
        ("wld/quiet/cached", &warm, quiet_hot),
        ("wld/quiet/uncached", &cold, quiet_cold),
    ] {
        let work = |passes: usize| {
            let mut wins = 0u32;
            for _ in 0..passes {
                for p in set {
                    wins +=
                        (tb.probe_wld(black_box(p)).expect("probe") == dtb_probe::Wld::Win) as u32;
                }
            }
            wins
        };
        // Each measurement runs its `iters` batches on threads started once for it, so
        // thread start-up and the per-thread block slots filling up are paid once per
        // measurement, not once per batch (which made two threads look barely faster).
        let timed = |threads: usize, iters: u64| {
            std::thread::scope(|s| {
                let start = std::time::Instant::now();
                let handles: Vec<_> = (0..threads)
                    .map(|_| {
                        s.spawn(|| {
                            let mut wins = 0u32;
                            for _ in 0..iters {
                                wins = wins.wrapping_add(work(PASSES / threads));
                            }
                            black_box(wins)
                        })
                    })
                    .collect();
                for h in handles {
                    h.join().expect("probe thread");
                }
                start.elapsed()
            })
        };
        g.bench_function(format!("{name}/1"), |b| {
            b.iter_custom(|iters| timed(1, iters))
        });
        g.bench_function(format!("{name}/2"), |b| {
            b.iter_custom(|iters| timed(2, iters))
        });
    }
    g.finish();
    drop(dir);
}

/// Format version 3 against version 1 (`probe_threat`): the same English 2-4 WLD tables,
/// built, then repacked with threat positions "don't care" (`dtb repack`). Quiet positions
/// split into plain ones (one look-up either way) and threat positions (version 3: a
/// one-ply search); each probed through both sets, cached and uncached, taking turns.
///
/// "Cached": a 64 MiB cache holding every block of the set (probed once in setup).
/// "Uncached": a 0-byte cache, so every probe starts cold: no block is kept from one probe
/// to the next, and each block a probe needs is read from the (page-cached) file,
/// checksummed, decompressed and checked. Within one probe a block is decompressed once,
/// however many of its values the probe's search reads (the probe keeps what it read
/// until it returns); the setup prints the look-ups and decompressions a probe makes.
fn bench_threat(c: &mut Criterion) {
    use dtb_gen::compress::Fill;
    use dtb_gen::repack::{repack_dir, RepackOptions};
    use dtb_probe::internal::value::is_threat_dont_care;
    let dir = tempfile::tempdir().expect("temporary directory");
    let plan = Plan::new(RULES, 4, dir.path()).expect("plan");
    build::run(&plan, &Quiet).expect("build English 2-4 piece tables");
    let v3 = tempfile::tempdir().expect("temporary directory");
    let opts = RepackOptions {
        zstd: dtb_gen::build::ZSTD,
        fill: Fill::Major,
        block_len: None,
        check: false,
        max_pieces: None,
        estimate: None,
    };
    repack_dir(dir.path(), v3.path(), RULES, &opts, &mut |_| {}).expect("repack");

    let slices: Vec<Material> = Material::solve_order(4, 12)
        .into_iter()
        .filter(|m| m.pieces() == 4)
        .flat_map(|m| [m, m.mirror()])
        .collect();
    let mut all = sample(&slices, 1024, 5);
    let mut rng = SplitMix64(6);
    for i in (1..all.len()).rev() {
        all.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let (quiet, _) = split_by_capture(&all);
    let mut moves = Vec::new();
    let (threat, plain): (Vec<Position>, Vec<Position>) = quiet
        .iter()
        .partition(|p| is_threat_dont_care(&RULES, p, &mut moves));
    const SET: usize = 256;
    assert!(
        plain.len() >= 2 * SET && threat.len() >= 2 * SET,
        "too few sampled positions: {} plain quiet, {} threat",
        plain.len(),
        threat.len()
    );
    eprintln!(
        "probe_threat positions: {} plain quiet, {} threat; sets of {SET}",
        plain.len(),
        threat.len()
    );
    let open = |d: &std::path::Path, bytes: usize| {
        let mut tb = Tablebase::with_cache_bytes(RULES, bytes);
        tb.add_directory(d).expect("open tables");
        tb
    };
    let (warm1, cold1) = (open(dir.path(), 64 << 20), open(dir.path(), 0));
    let (warm3, cold3) = (open(v3.path(), 64 << 20), open(v3.path(), 0));
    for tb in [&warm1, &cold1, &warm3, &cold3] {
        for p in plain[..2 * SET].iter().chain(&threat[..2 * SET]) {
            tb.probe_wld(p).expect("probe");
        }
    }
    // What an uncached probe reads: look-ups, and blocks read and decompressed (misses),
    // per probe; the difference is the look-ups answered from blocks the same probe read.
    for (kind, set) in [
        ("plain quiet", &plain[SET..2 * SET]),
        ("threat", &threat[SET..2 * SET]),
    ] {
        for (version, tb) in [("v1", &cold1), ("v3", &cold3)] {
            tb.reset_cache_stats();
            for p in set {
                tb.probe_wld(p).expect("probe");
            }
            let s = tb.cache_stats();
            let per = |n: u64| n as f64 / set.len() as f64;
            eprintln!(
                "probe_threat uncached {version} {kind}: {:.2} look-ups, {:.2} blocks decompressed a probe",
                per(s.hits + s.misses),
                per(s.misses)
            );
        }
    }
    let mut g = c.benchmark_group("probe_threat");
    g.throughput(Throughput::Elements(SET as u64));
    for (kind, set_hot, set_cold) in [
        ("quiet", &plain[..SET], &plain[SET..2 * SET]),
        ("threat", &threat[..SET], &threat[SET..2 * SET]),
    ] {
        for (cache, v1, v3, set) in [
            ("cached", &warm1, &warm3, set_hot),
            ("uncached", &cold1, &cold3, set_cold),
        ] {
            for (version, tb) in [("v1", v1), ("v3", v3)] {
                g.bench_function(format!("wld/{kind}/{cache}/{version}"), |b| {
                    b.iter(|| {
                        let mut wins = 0u32;
                        for p in set {
                            wins += (tb.probe_wld(black_box(p)).expect("probe")
                                == dtb_probe::Wld::Win) as u32;
                        }
                        wins
                    })
                });
            }
        }
    }
    g.finish();
}

/// International WLD probes (`probe_international`): 2-4 piece tables of a WLD-only build
/// (format version 3, what `dtb gen --variant international --wld-only` writes), probed for
/// 4-piece positions split into plain quiet, threat (a one-ply search over every quiet move
/// of flying kings) and capture positions, with a 64 MiB cache holding every block and with
/// a 0-byte one (as in `probe_threat`).
fn bench_international(c: &mut Criterion) {
    use dtb_probe::internal::value::is_threat_dont_care;
    let rules = Rules::INTERNATIONAL;
    let dir = tempfile::tempdir().expect("temporary directory");
    let plan = Plan::new(rules, 4, dir.path())
        .expect("plan")
        .with_values(Values::WLD);
    build::run(&plan, &Quiet).expect("build International 2-4 piece tables");
    let slices: Vec<Material> = Material::solve_order(4, 20)
        .into_iter()
        .filter(|m| m.pieces() == 4 && m.white() > 0 && m.black() > 0)
        .flat_map(|m| [m, m.mirror()])
        .collect();
    let mut all = sample_in(&rules, &slices, 256, 8);
    let mut rng = SplitMix64(9);
    for i in (1..all.len()).rev() {
        all.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let (quiet, capture) = split_by_capture_in(&rules, &all);
    let mut moves = Vec::new();
    let (threat, plain): (Vec<Position>, Vec<Position>) = quiet
        .iter()
        .partition(|p| is_threat_dont_care(&rules, p, &mut moves));
    const SET: usize = 256;
    eprintln!(
        "probe_international positions: {} plain quiet, {} threat, {} capture; sets of {SET}",
        plain.len(),
        threat.len(),
        capture.len()
    );
    let open = |bytes: usize| {
        let mut tb = Tablebase::with_cache_bytes(rules, bytes);
        tb.add_directory(dir.path()).expect("open tables");
        tb
    };
    let (warm, cold) = (open(64 << 20), open(0));
    let mut g = c.benchmark_group("probe_international");
    g.throughput(Throughput::Elements(SET as u64));
    for (kind, set) in [
        ("quiet", &plain),
        ("threat", &threat),
        ("capture", &capture),
    ] {
        assert!(
            set.len() >= 2 * SET,
            "too few {kind} positions: {}",
            set.len()
        );
        let (hot, cold_set) = (&set[..SET], &set[SET..2 * SET]);
        for p in hot.iter().chain(cold_set) {
            warm.probe_wld(p).expect("probe");
        }
        for (cache, tb, set) in [("cached", &warm, hot), ("uncached", &cold, cold_set)] {
            g.bench_function(format!("wld/{kind}/{cache}"), |b| {
                b.iter(|| {
                    let mut wins = 0u32;
                    for p in set {
                        wins += (tb.probe_wld(black_box(p)).expect("probe") == dtb_probe::Wld::Win)
                            as u32;
                    }
                    wins
                })
            });
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = bench_movegen, bench_index, bench_solve, bench_probe, bench_threat, bench_international
}
criterion_main!(benches);
