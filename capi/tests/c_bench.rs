//! A probe from C costs what it costs from Rust: the same loop over the same positions, timed
//! in a C program through `dtb_probe` (bitboards) and here through `Tablebase::probe_dtw`
//! (a `Position` made from the same bitboards each time, as the C entry point does), with a
//! 64 MiB cache after a warm-up round (cached) and with a 0-byte cache (every look-up reads
//! and decompresses its block). Ignored by default (a timing; run it on a quiet machine):
//! `cargo test --release -p dtb-capi --test c_bench -- --ignored --nocapture`.

mod common;

use std::process::Command;
use std::time::Instant;

use common::{compile, tables};
use dtb_probe::{Color, Position, Rules, Tablebase, Wld};

/// `n` legal English positions of 2-4 pieces with values, from a fixed pseudo-random walk:
/// quiet and capture positions alike.
fn positions(tb: &Tablebase, n: usize) -> Vec<(u64, u64, u64, Color)> {
    let rules = Rules::ENGLISH;
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let pieces = 2 + (next() % 3) as usize;
        let (mut w, mut b, mut k) = (0u64, 0u64, 0u64);
        for i in 0..pieces {
            let sq = 1u64 << (next() % 32);
            if (w | b) & sq != 0 {
                continue;
            }
            if i % 2 == 0 {
                w |= sq
            } else {
                b |= sq
            }
            if next() % 2 == 0 {
                k |= sq;
            }
        }
        let side = if next() % 2 == 0 {
            Color::White
        } else {
            Color::Black
        };
        if let Ok(p) = Position::new(&rules, w, b, k, side) {
            if tb.probe_dtw(&p).is_ok() {
                out.push((w, b, k, side));
            }
        }
    }
    out
}

fn rust_ns(
    tb: &Tablebase,
    pos: &[(u64, u64, u64, Color)],
    rounds: usize,
    reps: usize,
) -> (f64, i64) {
    let rules = *tb.rules();
    let mut best = f64::MAX;
    let mut sum = 0i64;
    for _ in 0..reps {
        let t = Instant::now();
        sum = 0;
        for _ in 0..rounds {
            for &(w, b, k, s) in pos {
                let p = Position::new(&rules, w, b, k, s).unwrap();
                let d = tb.probe_dtw(&p).unwrap();
                let wld = match d.wld {
                    Wld::Win => 1,
                    Wld::Draw => 0,
                    Wld::Loss => -1,
                };
                let dtw = match (d.wld, d.plies) {
                    (Wld::Draw, _) | (_, None) => -1,
                    (_, Some(p)) => i64::from(p),
                };
                sum += wld * 1000 + dtw;
            }
        }
        let ns = t.elapsed().as_nanos() as f64 / (pos.len() * rounds) as f64;
        best = best.min(ns);
    }
    (best, sum)
}

/// The loop of the C program, in Rust, through the C entry point (`dtb_probe` on a handle):
/// the cost of the wrapper alone, without a C compiler or a process between.
fn rust_through_c_ns(
    tb: *const dtb::dtb_tablebase,
    pos: &[dtb::dtb_position],
    rounds: usize,
) -> f64 {
    let t = Instant::now();
    let mut sum = 0i64;
    for _ in 0..rounds {
        for p in pos {
            let mut v = dtb::dtb_value::default();
            // SAFETY: an open handle, a valid position and a writable value.
            let s = unsafe { dtb::dtb_probe(tb, p, 0, &mut v) };
            assert_eq!(s, dtb::DTB_OK);
            sum += i64::from(v.wld) * 1000 + i64::from(v.dtw);
        }
    }
    std::hint::black_box(sum);
    t.elapsed().as_nanos() as f64 / (pos.len() * rounds) as f64
}

#[test]
#[ignore = "a timing: run on a quiet machine with --release"]
fn a_probe_from_c_costs_what_it_costs_from_rust() {
    let (rounds, reps) = (20, 15);
    let cached = Tablebase::with_cache_bytes(Rules::ENGLISH, 64 << 20);
    let mut cached = cached;
    cached.add_directory(tables()).unwrap();
    let mut uncached = Tablebase::with_cache_bytes(Rules::ENGLISH, 0);
    uncached.add_directory(tables()).unwrap();
    let pos = positions(&cached, 20_000);
    let file = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-positions.txt");
    let text: String = pos
        .iter()
        .map(|(w, b, k, s)| format!("{w} {b} {k} {}\n", s.index()))
        .collect();
    std::fs::write(&file, text).unwrap();

    let exe = compile("bench_probe.c", "dtb-bench-probe-c");
    rust_ns(&cached, &pos, 1, 1); // warm-up round
    let mut handle = std::ptr::null_mut();
    let dir = std::ffi::CString::new(tables().to_str().unwrap()).unwrap();
    // SAFETY: NUL-terminated strings and a writable out pointer.
    let s = unsafe { dtb::dtb_open(dir.as_ptr(), c"english".as_ptr(), 64 << 20, &mut handle) };
    assert_eq!(s, dtb::DTB_OK);
    let cpos: Vec<dtb::dtb_position> = pos
        .iter()
        .map(|&(w, b, k, s)| dtb::dtb_position {
            white: w,
            black: b,
            kings: k,
            side_to_move: s.index() as i32,
        })
        .collect();
    rust_through_c_ns(handle, &cpos, 1);
    let mut via = f64::MAX;
    // C and Rust take turns, one timing each a turn, so that both see the same load; the
    // least of each is reported.
    let (mut c_cached, mut c_uncached, mut r_cached, mut r_uncached) =
        (f64::MAX, f64::MAX, f64::MAX, f64::MAX);
    let (mut c_sum, mut r_sum) = (0.0, 0);
    for _ in 0..reps {
        let out = Command::new(&exe)
            .arg(tables())
            .arg(&file)
            .arg(rounds.to_string())
            .arg("1")
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let field = |name: &str| -> f64 {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {name} in {stdout}"))
        };
        c_cached = c_cached.min(field("cached"));
        c_uncached = c_uncached.min(field("uncached"));
        c_sum = field("checksum");
        let (rc, sum) = rust_ns(&cached, &pos, rounds, 1);
        let (ru, _) = rust_ns(&uncached, &pos, 1, 1);
        r_cached = r_cached.min(rc);
        via = via.min(rust_through_c_ns(handle, &cpos, rounds));
        r_uncached = r_uncached.min(ru);
        r_sum = sum;
    }
    assert_eq!(
        r_sum,
        c_sum as i64 * rounds as i64,
        "C and Rust probed other values"
    );
    println!(
        "{} positions (English 2-4, quiet and capture), ns per probe, least of {reps}:",
        pos.len()
    );
    println!(
        "  cached:   C {c_cached:.1}  Rust {r_cached:.1}  C/Rust {:.3}",
        c_cached / r_cached
    );
    println!("  cached, dtb_probe called from Rust: {via:.1}");
    // SAFETY: the handle from dtb_open, closed once.
    unsafe { dtb::dtb_close(handle) };
    println!(
        "  uncached: C {c_uncached:.1}  Rust {r_uncached:.1}  C/Rust {:.3}",
        c_uncached / r_uncached
    );
    assert!(
        c_cached <= r_cached * 1.10,
        "cached: C {c_cached} ns, Rust {r_cached} ns"
    );
    assert!(
        c_uncached <= r_uncached * 1.10,
        "uncached: C {c_uncached} ns, Rust {r_uncached} ns"
    );
}
