//! The bit-parallel WLD solver against the grouped one (docs/performance-history.md, "The
//! solver", item 5): loads the WLD tables of every slice the named slices lead to from DIR,
//! then per slice
//! 1. solves it with both (untimed: this also resolves, once, the capture positions of the
//!    loaded tables that the look-ups meet) and checks that every position's outcome and
//!    capture flag agree;
//! 2. times both, alternated (grouped, bit-parallel, grouped, ...), `--runs` times on each
//!    thread count of `--threads`, and prints each run, the medians and their ratio.
//!
//! `cargo run --release -p dtb-gen --example bitpar_lab -- [--runs 3] [--threads 1,2]
//! [--only bitpar] DIR
//! 1212 2211 ...` (English; `all5` names every slice of five pieces it takes)

use std::time::Instant;

use dtb_gen::solve::{bitpar_supports, solve_slice_bitpar_wld, solve_slice_grouped_wld, SolvedWld};
use dtb_gen::store::Store;
use dtb_probe::internal::material::Material;
use dtb_probe::Rules;

/// Print `message` as one error line and exit with status 2.
fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("bitpar_lab: error: {message}");
    std::process::exit(2);
}

/// The command line: runs, thread counts, the tables' directory, the slices.
struct Args {
    runs: usize,
    /// `--only bitpar`: solve with the bit-parallel solver alone, `runs` times, unchecked
    /// (for `perf record`).
    only: bool,
    threads: Vec<usize>,
    dir: String,
    slices: Vec<Material>,
}

fn args() -> Args {
    let mut a: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 3;
    let mut threads = vec![1, 2];
    let mut only = false;
    while a.first().is_some_and(|s| s.starts_with("--")) {
        let value = a.get(1).cloned().unwrap_or_default();
        match a[0].as_str() {
            "--only" if value == "bitpar" => only = true,
            "--runs" => runs = value.parse().unwrap_or_else(|_| fail("--runs N")),
            "--threads" => {
                threads = value
                    .split(',')
                    .map(|t| t.parse().unwrap_or_else(|_| fail("--threads 1,2")))
                    .collect()
            }
            other => fail(format!("unknown option {other}")),
        }
        a.drain(..2);
    }
    let Some((dir, names)) = a.split_first() else {
        fail("usage: bitpar_lab [--runs N] [--threads 1,2] DIR SLICE...")
    };
    let rules = Rules::ENGLISH;
    let mut slices = Vec::new();
    for s in names {
        // `all5`: every slice of five pieces the bit-parallel solver takes.
        if let Some(n) = s.strip_prefix("all").and_then(|n| n.parse().ok()) {
            slices.extend(
                Material::solve_order(n, rules.max_pieces_per_side())
                    .into_iter()
                    .filter(|m| m.pieces() == n && bitpar_supports(&rules, *m)),
            );
            continue;
        }
        slices.push(
            // A slice and its colour-reversed one are one table (2211 is 1122).
            Material::parse(s)
                .map(|m| m.canonical())
                .filter(|m| bitpar_supports(&rules, *m))
                .unwrap_or_else(|| {
                    fail(format!(
                        "{s:?}: not a slice with a king and pieces on both sides"
                    ))
                }),
        );
    }
    Args {
        runs,
        only,
        threads,
        dir: dir.clone(),
        slices,
    }
}

/// A store holding every slice the `targets` lead to, read from the files in `dir`.
fn load(rules: Rules, dir: &str, targets: &[Material]) -> Store {
    let max = targets.iter().map(|m| m.pieces()).max().unwrap_or(0);
    let mut store = Store::new(rules);
    let t = Instant::now();
    let mut loaded = 0;
    for m in Material::solve_order(max, rules.max_pieces_per_side()) {
        // Only what a target can lead to: fewer pieces (a capture) or, as many, fewer men
        // (a crowning).
        let needed = targets
            .iter()
            .any(|t| m.pieces() < t.pieces() || (m.pieces() == t.pieces() && m.men() < t.men()));
        if !needed {
            continue;
        }
        let path = std::path::Path::new(dir).join(format!("{}-{m}.wld", rules.name));
        if let Err(e) = store.load_wld_file(m, &path) {
            fail(format!("{m} must be solved first: {e}"));
        }
        loaded += 1;
    }
    eprintln!(
        "loaded {loaded} slices in {:.1} s ({} MB)",
        t.elapsed().as_secs_f64(),
        store.bytes() >> 20
    );
    store
}

/// Every position's outcome and capture flag of `a` and `b`, and their counts, agree.
fn check(m: Material, a: &SolvedWld, b: &SolvedWld) {
    for side in 0..2 {
        if a.values[side].as_slice() != b.values[side].as_slice() {
            let i = (0..a.size).find(|&i| a.code(side, i) != b.code(side, i));
            fail(format!("{m}: outcomes differ, side {side}, first at {i:?}"));
        }
        if a.capture[side].as_slice() != b.capture[side].as_slice() {
            fail(format!("{m}: capture flags differ, side {side}"));
        }
    }
    if a.counts != b.counts {
        fail(format!("{m}: counts {:?} against {:?}", a.counts, b.counts));
    }
}

/// The one-minute load average (Linux), to label a timing; `?` elsewhere.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let a = args();
    let rules = Rules::ENGLISH;
    let store = load(rules, &a.dir, &a.slices);
    let grouped = |m| solve_slice_grouped_wld(&rules, &store, m, false, &|_| {});
    let bitpar = |m| solve_slice_bitpar_wld(&rules, &store, m);
    for &m in &a.slices {
        if a.only {
            for _ in 0..a.runs {
                let t = Instant::now();
                bitpar(m).unwrap_or_else(|e| fail(format!("{m}: {e}")));
                println!("{m} bitpar {:.3} s", t.elapsed().as_secs_f64());
            }
            continue;
        }
        let t = Instant::now();
        let want = grouped(m).unwrap_or_else(|e| fail(format!("{m}: {e}")));
        let first = t.elapsed().as_secs_f64();
        let got = bitpar(m).unwrap_or_else(|e| fail(format!("{m}: {e}")));
        check(m, &want, &got);
        let positions = 2 * want.size;
        println!(
            "{m} {positions} positions: outcomes and capture flags agree (W/L/D {:?}; \
             first grouped run {first:.2} s)",
            want.counts
        );
        // `--runs 0`: the check alone.
        for &threads in a.threads.iter().filter(|_| a.runs > 0) {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap_or_else(|e| fail(e));
            let (mut tg, mut tb) = (Vec::new(), Vec::new());
            for run in 0..a.runs {
                for (name, times) in [("grouped", &mut tg), ("bitpar", &mut tb)] {
                    let load = loadavg();
                    let t = Instant::now();
                    pool.install(|| match name {
                        "grouped" => grouped(m).map(drop),
                        _ => bitpar(m).map(drop),
                    })
                    .unwrap_or_else(|e| fail(format!("{m}: {e}")));
                    let s = t.elapsed().as_secs_f64();
                    println!(
                        "{m} threads {threads} run {run} {name:7} {s:.3} s {:.2} M/s/core \
                         (load average at start {load})",
                        positions as f64 / s / threads as f64 / 1e6
                    );
                    times.push(s);
                }
            }
            let (g, b) = (median(tg), median(tb));
            println!(
                "{m} threads {threads} median grouped {g:.3} s bitpar {b:.3} s ratio {:.2}",
                g / b
            );
        }
    }
}
