//! Compression experiments on WLD tables (docs/performance-history.md, "Compression"):
//! solves English up to N pieces in memory, then compresses every slice's WLD values under
//! several don't-care choices for capture positions and block lengths, and prints the total
//! bytes and bits per stored position of each.
//!
//! `cargo run --release -p dtb-gen --example compress_lab -- 5 [zstd-level] [prev,major,...]`
//! (strategies: prev, next, major, bmajor, threat, true)

#![allow(clippy::needless_range_loop)] // index loops over parallel arrays read clearer here

use dtb_gen::solve::{solve_slice, SolvedSlice};
use dtb_gen::store::Store;
use dtb_probe::internal::format::{pack_values, WldCode};
use dtb_probe::internal::material::Material;
use dtb_probe::internal::value::Code;
use dtb_probe::Rules;

/// The WLD file code of `c`, as the integer the file packs.
fn wld(c: Code) -> u16 {
    u16::from(WldCode::of(c).bits())
}

const WLD_DRAW: u16 = WldCode::Draw.bits() as u16;

/// WLD values of one side with capture positions filled by `strategy`.
fn fill(s: &SolvedSlice, side: usize, strategy: &str) -> Vec<u16> {
    let n = s.size as usize;
    let v: Vec<u16> = s.values[side].iter().map(|&c| wld(c)).collect();
    let cap = |i: usize| s.is_capture(side, i as u64);
    let mut out = v.clone();
    match strategy {
        "prev" => {
            let mut prev = WLD_DRAW;
            for i in 0..n {
                if cap(i) {
                    out[i] = prev;
                }
                prev = out[i];
            }
        }
        "next" => {
            let mut next = WLD_DRAW;
            for i in (0..n).rev() {
                if cap(i) {
                    out[i] = next;
                }
                next = out[i];
            }
        }
        "major" => {
            let mut count = [0u64; 3];
            for i in 0..n {
                if !cap(i) {
                    count[v[i] as usize] += 1;
                }
            }
            let m = (0..3).max_by_key(|&k| count[k]).unwrap() as u16;
            for i in 0..n {
                if cap(i) {
                    out[i] = m;
                }
            }
        }
        "bmajor" => {
            // The most common value among the block's own non-capture positions.
            for lo in (0..n).step_by(1 << 16) {
                let hi = (lo + (1 << 16)).min(n);
                let mut count = [0u64; 3];
                for i in lo..hi {
                    if !cap(i) {
                        count[v[i] as usize] += 1;
                    }
                }
                let m = (0..3).max_by_key(|&k| count[k]).unwrap() as u16;
                for i in lo..hi {
                    if cap(i) {
                        out[i] = m;
                    }
                }
            }
        }
        "threat" => {
            // Also "don't care": positions whose side not to move could capture if it were
            // its turn (an upper bound for a format that resolves them by a search).
            let ix =
                dtb_probe::internal::index::SliceIndex::new(s.material, Rules::ENGLISH.geometry());
            let color = [dtb_probe::Color::White, dtb_probe::Color::Black][side];
            let mut mask = vec![false; n];
            for (i, m) in mask.iter_mut().enumerate() {
                let p = ix.unindex(i as u64, color);
                *m = cap(i)
                    || dtb_probe::movegen::has_capture(
                        &Rules::ENGLISH,
                        &p.with_side_to_move(color.opponent()),
                    );
            }
            for lo in (0..n).step_by(1 << 16) {
                let hi = (lo + (1 << 16)).min(n);
                let mut count = [0u64; 3];
                for i in lo..hi {
                    if !mask[i] {
                        count[v[i] as usize] += 1;
                    }
                }
                let m = (0..3).max_by_key(|&k| count[k]).unwrap() as u16;
                for i in lo..hi {
                    if mask[i] {
                        out[i] = m;
                    }
                }
            }
        }
        "true" => {}
        _ => unreachable!(),
    }
    out
}

fn compressed(values: &[u16], block: usize, level: i32) -> u64 {
    let mut c = zstd::bulk::Compressor::new(level).unwrap();
    values
        .chunks(block)
        .map(|b| c.compress(&pack_values(2, b).unwrap()).unwrap().len() as u64)
        .sum()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let pieces: u32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let level: i32 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(15);
    let rules = Rules::ENGLISH;
    let mut store = Store::new(rules);
    let strategies: Vec<&str> = match args.get(3) {
        Some(list) => list.split(',').collect(),
        None => vec!["prev", "major", "bmajor", "threat"],
    };
    let blocks = [1usize << 16];
    let mut paired = 0u64;
    let mut total = vec![vec![0u64; blocks.len()]; strategies.len()];
    let mut positions = 0u64;
    for m in Material::solve_order(pieces, 12) {
        let s = solve_slice(&rules, &store, m, &|_| {}).unwrap();
        let symmetric = m == m.mirror();
        let sides: &[usize] = if symmetric { &[0] } else { &[0, 1] };
        for &side in sides {
            positions += s.size;
            for (a, st) in strategies.iter().enumerate() {
                let v = fill(&s, side, st);
                for (b, &bl) in blocks.iter().enumerate() {
                    total[a][b] += compressed(&v, bl.min(v.len()), level);
                }
            }
        }
        if !symmetric {
            // Both sides' values of one index next to each other, blocks of 2^15 indices.
            let (a, b) = (fill(&s, 0, "bmajor"), fill(&s, 1, "bmajor"));
            let inter: Vec<u16> = a.iter().zip(&b).flat_map(|(&x, &y)| [x, y]).collect();
            paired += compressed(&inter, 1 << 16, level);
        } else {
            paired += compressed(&fill(&s, 0, "bmajor"), 1 << 16, level);
        }
        store.insert(s.into_stored());
    }
    println!("English 2-{pieces}, {positions} positions, zstd level {level}");
    println!(
        "sides interleaved, bmajor, 65536 values: {paired} bytes {:.4} bits/position",
        paired as f64 * 8.0 / positions as f64
    );
    for (a, st) in strategies.iter().enumerate() {
        for (b, &bl) in blocks.iter().enumerate() {
            let name = if bl == usize::MAX {
                "whole side".to_string()
            } else {
                format!("{bl} values")
            };
            println!(
                "{st:>6} {name:>14}: {:>10} bytes {:.4} bits/position",
                total[a][b],
                total[a][b] as f64 * 8.0 / positions as f64
            );
        }
    }
}
