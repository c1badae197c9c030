//! Solver experiments (docs/performance-history.md, "The solver"): loads the WLD tables of every
//! slice the named slices can lead to from DIR, then solves the named
//! slices one by one and prints, per slice, the solve time, positions per second per
//! core and a checksum of the outcomes (win, loss, draw) and capture flags (to show a change
//! to the solver keeps what the files hold identical; the distances a WLD-only source gives
//! are nominal, so they are left out).
//!
//! `cargo run --release -p dtb-gen --example solve_lab -- [--variant NAME] DIR 1221 0304 ...`
//! (default variant english; threads: `RAYON_NUM_THREADS`)

use std::hash::{Hash, Hasher};
use std::time::Instant;

use dtb_gen::solve::solve_slice;
use dtb_gen::store::Store;
use dtb_probe::internal::material::Material;
use dtb_probe::Rules;

/// Print `message` as one error line and exit with status 2.
fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("solve_lab: error: {message}");
    std::process::exit(2);
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut rules = Rules::ENGLISH;
    if args.first().is_some_and(|a| a == "--variant") {
        let name = args.get(1).cloned().unwrap_or_default();
        rules = Rules::by_name(&name).unwrap_or_else(|| fail(format!("no variant {name:?}")));
        args.drain(..2);
    }
    let Some((dir, names)) = args.split_first() else {
        eprintln!("usage: solve_lab [--variant NAME] DIR SLICE...");
        std::process::exit(2);
    };
    let targets: Vec<Material> = names
        .iter()
        .map(|s| {
            Material::parse(s)
                .filter(|m| m.is_canonical() && m.white() > 0 && m.black() > 0)
                .unwrap_or_else(|| {
                    fail(format!(
                        "{s:?} is not a canonical slice with pieces on both sides \
                         (four digits: white men, white kings, black men, black kings; e.g. 1221)"
                    ))
                })
        })
        .collect();
    let max = targets.iter().map(|m| m.pieces()).max().unwrap_or(0);
    let mut store = Store::new(rules);
    let t = Instant::now();
    // Every slice solved before the last target in the build order, targets excepted.
    let order = Material::solve_order(max, rules.max_pieces_per_side());
    let Some(last) = order.iter().rposition(|m| targets.contains(m)) else {
        fail("no slice of this variant given")
    };
    for &m in &order[..last] {
        // Only what a target can lead to: fewer pieces (a capture) or, as many, fewer men
        // (a crowning).
        let needed = targets
            .iter()
            .any(|t| m.pieces() < t.pieces() || (m.pieces() == t.pieces() && m.men() < t.men()));
        if targets.contains(&m) || !needed {
            continue;
        }
        let path = std::path::Path::new(dir).join(format!("{}-{m}.wld", rules.name));
        if let Err(e) = store.load_wld_file(m, &path) {
            fail(format!("{m} must be solved first: {e}"));
        }
    }
    eprintln!(
        "loaded {} slices in {:.1} s ({} MB)",
        last,
        t.elapsed().as_secs_f64(),
        store.bytes() >> 20
    );
    let threads = rayon::current_num_threads() as f64;
    for m in targets {
        let t = Instant::now();
        let s = solve_slice(&rules, &store, m, &|_| {})
            .unwrap_or_else(|e| fail(format!("solving {m}: {e}")));
        let secs = t.elapsed().as_secs_f64();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for side in &s.values {
            for &v in side {
                v.wld().hash(&mut h);
            }
        }
        s.capture.hash(&mut h);
        println!(
            "{m} {} positions {:.2} s {:.2} M/s/core wld checksum {:016x} max {}",
            2 * s.size,
            secs,
            2.0 * s.size as f64 / secs / threads / 1e6,
            h.finish(),
            s.max_plies
        );
    }
}
