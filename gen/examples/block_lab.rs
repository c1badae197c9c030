//! The block solver against the solvers builds use, on one kings-only slice
//! (`dtb_gen::blocks`): loads the kings-only slices of fewer pieces from DIR (their values
//! files, `dtb gen --keep-values`, where there are some, as a build holds them; else their
//! WLD tables), then solves SLICE by each solver named, in the order given, and prints each one's
//! seconds, positions per second per core and whether its outcomes and capture flags are the
//! first solver's.
//!
//! `cargo run --release -p dtb-gen --example block_lab -- DIR 0206 blocks bitpar blocks`
//! (solvers: `blocks`, `bitpar` (the bit-parallel solver, full rows), `lean` (its lean
//! rows), `bits` (the bit solver); English; threads: `RAYON_NUM_THREADS`)

use std::time::Instant;

use dtb_gen::bitbase::solve_kings_wld;
use dtb_gen::blocks::{blocks_support, solve_kings_blocks_wld_timed};
use dtb_gen::solve::{solve_slice_bitpar_wld_in, BitparHow, SolvedWld};
use dtb_gen::store::Store;
use dtb_probe::internal::material::Material;
use dtb_probe::Rules;

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("block_lab: error: {message}");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, slice, solvers @ ..] = &args[..] else {
        fail("usage: block_lab DIR SLICE SOLVER...")
    };
    let rules = Rules::ENGLISH;
    let m = Material::parse(slice)
        .filter(|m| m.is_canonical() && blocks_support(&rules, *m))
        .unwrap_or_else(|| {
            fail(format!(
                "{slice}: not a canonical English kings-only slice whose colour with fewer \
                 kings has two (0202 to 0208)"
            ))
        });
    let mut store = Store::new(rules);
    let t = Instant::now();
    for s in Material::solve_order(m.pieces() - 1, rules.max_pieces_per_side()) {
        if s.men() != 0 || s.white() == 0 || s.black() == 0 {
            continue;
        }
        // The values file where there is one (every value, as a build holds them), else the
        // WLD table (capture and threat positions searched when looked up).
        let values = std::path::Path::new(dir).join(format!("english-{s}.values"));
        let loaded = if values.exists() {
            store.load_values_file(s, &values)
        } else {
            store.load_wld_file(
                s,
                &std::path::Path::new(dir).join(format!("english-{s}.wld")),
            )
        };
        if let Err(e) = loaded {
            // The error and what caused it (a missing file says so).
            let mut why = e.to_string();
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                why = format!("{why}: {c}");
                cause = c.source();
            }
            fail(format!("slice {s}, which {m} reads: {why}"));
        }
    }
    eprintln!("loaded in {:.1} s", t.elapsed().as_secs_f64());
    let threads = rayon::current_num_threads() as f64;
    let mut first: Option<SolvedWld> = None;
    for name in solvers {
        let t = Instant::now();
        let how = |lean| BitparHow {
            threats: false,
            lean,
        };
        let got = match name.as_str() {
            "blocks" => solve_kings_blocks_wld_timed(&rules, &store, m).map(|(solved, p)| {
                eprintln!(
                    "blocks: start {:.2} s ({} capture positions, {} decided one by one), \
                     passes {:.2} s, index order {:.2} s",
                    p.start_seconds,
                    p.captures[0] + p.captures[1],
                    p.one_by_one,
                    p.iterate_seconds,
                    p.out_seconds
                );
                solved
            }),
            "bitpar" => solve_slice_bitpar_wld_in(&rules, &store, m, how(false), None, &|_| {}),
            "lean" => solve_slice_bitpar_wld_in(&rules, &store, m, how(true), None, &|_| {}),
            "bits" => solve_kings_wld(&rules, &store, m, &|_| {}),
            other => fail(format!("no solver {other:?}")),
        }
        .unwrap_or_else(|e| fail(format!("{name}: {e}")));
        let secs = t.elapsed().as_secs_f64();
        let same = match &first {
            None => "first".to_string(),
            Some(f) => {
                let same = (0..2).all(|s| {
                    f.values[s].to_vec() == got.values[s].to_vec()
                        && f.capture[s].to_vec() == got.capture[s].to_vec()
                });
                if same { "same" } else { "DIFFERENT" }.to_string()
            }
        };
        println!(
            "{m} {name} {} positions {secs:.2} s {:.2} M/s/core passes {} counts {:?} {same}",
            2 * got.size,
            2.0 * got.size as f64 / secs / threads / 1e6,
            got.levels,
            got.counts,
        );
        if first.is_none() {
            first = Some(got);
        }
    }
}
