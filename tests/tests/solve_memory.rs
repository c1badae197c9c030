//! The build's memory check rests on `dtb_gen::solve::solve_memory`, an estimate of the
//! solver's peak heap. Here every English slice of 2-4 pieces and the 5-piece slices with at
//! most one man (kings only: one group classified in parallel chunks; one man: large groups)
//! and the men-only 5-piece slices (millions of tiny groups) are solved with the heap
//! counted by an instrumented allocator: the estimate must never be below the measured peak
//! (a build that passes the check must not run out of memory), nor far above it (a check that
//! asks for too much refuses builds that fit: International 2-6 was refused for 27 GiB where
//! about 10 were needed).
//!
//! The bit-parallel WLD solver's estimate (`bitpar_memory`) is held below the same way on
//! the slices it takes.
//!
//! One test in this file: the allocator counts every thread of the process.

use std::alloc::System;

use dtb_gen::solve::{
    bitpar_memory, bitpar_supports, solve_memory, solve_slice, solve_slice_bitpar_wld_in, BitparHow,
};
use dtb_gen::store::Store;
use dtb_probe::{Material, Rules};
use peakmem_alloc::{PeakMemAlloc, PeakMemAllocTrait, INSTRUMENTED_SYSTEM};

#[global_allocator]
static HEAP: &PeakMemAlloc<System> = &INSTRUMENTED_SYSTEM;

const E: Rules = Rules::ENGLISH;

#[test]
fn solver_memory_estimate_bounds_the_measured_peak() {
    let threads = rayon::current_num_threads();
    let mut store = Store::new(E);
    let mut checked = 0;
    let mut worst = (0.0f64, Material::default());
    let mut bitpar_checked = 0;
    for m in Material::solve_order(5, 12) {
        if m.pieces() == 5 && m.men() > 1 {
            continue; // not needed by the slices measured, and the slowest to solve
        }
        let estimate = solve_memory(&E, m, threads);
        HEAP.reset_peak_memory();
        let solved = solve_slice(&E, &store, m, &|_| {}).unwrap_or_else(|e| panic!("{m}: {e}"));
        let peak = HEAP.get_peak_memory() as u64;
        assert!(
            peak <= estimate,
            "{m}: measured peak {peak} bytes above the estimate {estimate}"
        );
        // Far above only where a fixed cost dominates (a few KiB of look-up caches per
        // worker); from 1 MiB on, within 2x.
        if peak > 1 << 20 {
            let ratio = estimate as f64 / peak as f64;
            assert!(
                ratio <= 2.0,
                "{m}: estimate {estimate} is {ratio:.2}x the measured peak {peak}"
            );
            if ratio > worst.0 {
                worst = (ratio, m);
            }
            checked += 1;
        }
        println!("{m}: estimate {estimate} measured {peak}");
        // The bit-parallel WLD solver's estimate too, where it takes the slice (one group on
        // every thread for kings only), with lean rows as well.
        for lean in [false, true].into_iter().filter(|_| bitpar_supports(&E, m)) {
            let how = BitparHow {
                threats: false,
                lean,
            };
            let (results, rest) = bitpar_memory(&E, m, how, threads);
            HEAP.reset_peak_memory();
            let wld = solve_slice_bitpar_wld_in(&E, &store, m, how, None, &|_| {})
                .unwrap_or_else(|e| panic!("{m}: {e}"));
            let peak = HEAP.get_peak_memory() as u64;
            drop(wld);
            println!(
                "{m}: bit-parallel (lean {lean}) estimate {} measured {peak}",
                results + rest
            );
            assert!(
                peak <= results + rest,
                "{m}: bit-parallel (lean {lean}) peak {peak} bytes above the estimate {}",
                results + rest
            );
            bitpar_checked += 1;
        }
        store.insert(solved.into_stored());
    }
    println!("worst ratio {:.2} on {}", worst.0, worst.1);
    assert!(bitpar_checked >= 40, "{bitpar_checked} bit-parallel slices");
    // 2-4 has few slices over 1 MiB; the 5-piece ones all are.
    assert!(
        checked >= 10,
        "only {checked} slices large enough to compare"
    );
}
