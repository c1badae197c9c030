//! zstd parameter experiments (docs/performance-history.md, "Compression"): reads every WLD table in
//! DIR (with `--dtw` first, every DTW table), decompresses its blocks and compresses them
//! again under each parameter set given, on all threads, and prints per set the total bytes,
//! bits per stored position, the seconds spent compressing and the mean time to decompress
//! a block (what a probe that misses the block cache pays). The blocks are those the tables
//! hold, so the don't-care fill and block length are the writer's; with `GROUP=K` in the
//! environment each file's blocks are joined K at a time (the blocks of `dtb gen --block-len`
//! K times the file's).
//!
//! `cargo run --release -p dtb-gen --example zstd_lab -- [--dtw] DIR 15 15:strat=7,slog=3 ...`
//!
//! A set is a level, optionally followed by `:` and comma-separated overrides of zstd's
//! advanced parameters: `strat` (1 fast .. 9 btultra2), `slog` (search log), `tlen` (target
//! length), `mml` (minimum match length), `clog` (chain log), `hlog` (hash log).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use dtb_gen::write::CompressionParams;
use dtb_probe::internal::table::{BlockCache, TableFile};
use rayon::prelude::*;

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("zstd_lab: error: {message}");
    std::process::exit(2);
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let dtw = args.first().is_some_and(|a| a == "--dtw");
    if dtw {
        args.remove(0);
    }
    let (ext, kind) = if dtw { ("dtw", "DTW") } else { ("wld", "WLD") };
    let Some((dir, specs)) = args.split_first() else {
        eprintln!("usage: zstd_lab [--dtw] DIR LEVEL[:PARAM=V,...]...");
        std::process::exit(2);
    };
    let sets: Vec<CompressionParams> = specs
        .iter()
        .map(|s| s.parse().unwrap_or_else(|e| fail(format!("{s:?}: {e}"))))
        .collect();
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| fail(format!("{dir}: {e}")))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    paths.sort();
    if paths.is_empty() {
        fail(format!("no {kind} tables (*.{ext}) in {dir}"));
    }
    let group: usize = match std::env::var("GROUP") {
        Ok(g) => g
            .parse()
            .ok()
            .filter(|&k| k > 0)
            .unwrap_or_else(|| fail(format!("GROUP={g:?}: not a number of blocks"))),
        Err(_) => 1,
    };
    let cache = Arc::new(BlockCache::new(1 << 20));
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    let mut positions = 0u64;
    let mut stored_bytes = 0u64;
    for p in &paths {
        let t = TableFile::open(Path::new(p), cache.clone())
            .unwrap_or_else(|e| fail(dtb_probe::report(&e)));
        let h = t.header();
        if h.kind.extension() != ext {
            fail(format!("{}: a {} table, not {kind}", p.display(), h.kind));
        }
        positions += h.positions_per_side * u64::from(h.stored_side_count());
        stored_bytes += t.compressed_len();
        for b in 0..h.block_count {
            let raw = t
                .read_block(b)
                .unwrap_or_else(|e| fail(dtb_probe::report(&e)));
            blocks.push(raw.to_vec());
        }
        cache.clear();
        if group > 1 {
            // Each side's blocks apart, as the writer blocks each side.
            let nb = h.block_count as usize;
            let mine: Vec<Vec<u8>> = blocks.drain(blocks.len() - nb..).collect();
            for side in mine.chunks(h.blocks_per_side() as usize) {
                blocks.extend(side.chunks(group).map(<[Vec<u8>]>::concat));
            }
        }
    }
    let raw: usize = blocks.iter().map(Vec::len).sum();
    println!(
        "{} files, {} blocks, {} raw bytes, {} positions, {} bytes as stored ({:.4} bits/position)",
        paths.len(),
        blocks.len(),
        raw,
        positions,
        stored_bytes,
        stored_bytes as f64 * 8.0 / positions as f64
    );
    for set in &sets {
        let t = Instant::now();
        let packed: Vec<Vec<u8>> = blocks
            .par_iter()
            .map_init(
                || set.compressor().unwrap_or_else(|e| fail(e)),
                |c, b| c.compress(b).unwrap_or_else(|e| fail(e)),
            )
            .collect();
        let secs = t.elapsed().as_secs_f64();
        let bytes: usize = packed.iter().map(Vec::len).sum();
        // Decompressing, on one thread: a probe's cost, not a build's.
        let t = Instant::now();
        let mut back = 0usize;
        for (p, b) in packed.iter().zip(&blocks) {
            back += zstd::bulk::decompress(p, b.len())
                .unwrap_or_else(|e| fail(e))
                .len();
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / blocks.len() as f64;
        assert_eq!(back, raw, "decompressed length");
        println!(
            "{set}: {bytes} bytes (blocks only), {:.4} bits/position, {secs:.2} s on {} threads, {:.2} MB/s/thread, {us:.1} us to decompress a block",
            bytes as f64 * 8.0 / positions as f64,
            rayon::current_num_threads(),
            raw as f64 / secs / rayon::current_num_threads() as f64 / 1e6
        );
    }
}
