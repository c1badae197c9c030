//! Helpers shared by the integration tests that need the dev-dependencies (`dtb-gen`,
//! `tempfile`): the library target `dtb_tests` (tests/src/lib.rs) can only use normal
//! dependencies, and the tests crate has none, so these live here and each test file
//! includes them with `mod common;`.

#![allow(dead_code)]

pub mod counted;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use dtb_gen::build::{run, Plan, Quiet};
use dtb_probe::internal::board::Geometry;
use dtb_probe::internal::index::SliceIndex;
use dtb_probe::{Material, Rules};

/// English tables with up to `pieces` pieces, built afresh once per test process into
/// `$CARGO_TARGET_TMPDIR/dtb-english-<pieces>-<test binary>`. Statics are never dropped, so a
/// `TempDir` here would leak one directory per run; a fixed path per test binary, emptied
/// before each build, leaves at most one copy behind, inside `target/`.
fn built(cell: &'static OnceLock<PathBuf>, pieces: u32) -> &'static Path {
    cell.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable");
        let stem = exe.file_stem().and_then(|s| s.to_str()).unwrap_or("tests");
        let dir =
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("dtb-english-{pieces}-{stem}"));
        let _ = std::fs::remove_dir_all(&dir);
        let plan = Plan::new(Rules::ENGLISH, pieces, &dir).expect("valid plan");
        run(&plan, &Quiet).expect("English build");
        dir
    })
    .as_path()
}

/// English 2-4 piece tables (WLD and DTW), built once per test binary (a few seconds).
pub fn english4() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    built(&DIR, 4)
}

/// English 2-5 piece tables, built once per test binary (minutes: ignored tests only).
pub fn english5() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    built(&DIR, 5)
}

/// Every material with `pieces` pieces in all, at most `max_side` a side, one side possibly
/// empty, in a fixed order.
pub fn materials_with(pieces: u32, max_side: u32) -> Vec<Material> {
    let mut v = Vec::new();
    for w in 0..=pieces.min(max_side) {
        let b = pieces - w;
        if b > max_side {
            continue;
        }
        for wm in 0..=w {
            for bm in 0..=b {
                v.push(Material::new(
                    wm as u8,
                    (w - wm) as u8,
                    bm as u8,
                    (b - bm) as u8,
                ));
            }
        }
    }
    v
}

/// Every material with 2..=`max` pieces and a piece on each side (canonical and mirrored).
pub fn both_sides_materials(max: u32, max_side: u32) -> Vec<Material> {
    (2..=max)
        .flat_map(|n| materials_with(n, max_side))
        .filter(|m| m.white() > 0 && m.black() > 0)
        .collect()
}

/// Size of a slice.
pub fn size(m: Material, g: &'static Geometry) -> u64 {
    SliceIndex::new(m, g).size()
}

/// A deterministic pseudo-random stream (splitmix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        dtb_probe::internal::rng::splitmix64(&mut self.0)
    }

    /// A value below `n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }
}

/// The bitboard of PDN squares (1-based).
pub fn squares(list: &[u32]) -> u64 {
    list.iter().fold(0, |b, &s| b | 1u64 << (s - 1))
}
