//! What share of English positions with a given number of pieces are capture positions (the
//! side to move must capture): 4,000 positions a slice and side to move, drawn by index with a
//! fixed seed, weighted by the slice's size. The bit-parallel solver resolves capture
//! positions at its start, one look-up a successor (docs/performance-history.md, 5e), so
//! this share says how its cost grows with the pieces.
//!
//! `cargo run --release -p dtb-benches --example capture_share`

use dtb_probe::internal::index::SliceIndex;
use dtb_probe::internal::material::Material;
use dtb_probe::internal::rng::splitmix64;
use dtb_probe::movegen::has_capture;
use dtb_probe::{Color, Variant};

const DRAWS: u64 = 4000;

fn main() {
    let rules = Variant::parse("english").expect("a preset").rules;
    let g = rules.geometry();
    let mut seed = 12345u64;
    for n in 2u8..=8 {
        // (positions, capture positions) over all slices, and over slices with men and kings.
        let (mut all, mut mixed) = ((0f64, 0f64), (0f64, 0f64));
        for wm in 0..=n.min(12) {
            for wk in 0..=n - wm {
                for bm in 0..=(n - wm - wk).min(12) {
                    let bk = n - wm - wk - bm;
                    if wm + wk == 0 || bm + bk == 0 {
                        continue;
                    }
                    let ix = SliceIndex::new(Material::new(wm, wk, bm, bk), g);
                    let size = ix.size();
                    let caps = (0..DRAWS)
                        .filter(|s| {
                            let side = if s % 2 == 0 {
                                Color::White
                            } else {
                                Color::Black
                            };
                            let i = splitmix64(&mut seed) % size;
                            has_capture(&rules, &ix.unindex(i, side))
                        })
                        .count();
                    let share = caps as f64 / DRAWS as f64;
                    let w = size as f64;
                    all = (all.0 + w, all.1 + w * share);
                    if wk + bk > 0 && wm + bm > 0 {
                        mixed = (mixed.0 + w, mixed.1 + w * share);
                    }
                }
            }
        }
        let pct = |(w, c): (f64, f64)| if w > 0.0 { 100.0 * c / w } else { 0.0 };
        println!(
            "{n} pieces: capture positions {:.1}% of all, {:.1}% in slices with men and kings",
            pct(all),
            pct(mixed)
        );
    }
}
