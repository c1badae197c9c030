//! What a solve of distances by levels over the bit-parallel solver's rows would cost
//! (docs/performance-history.md, session 42, "The next step"): reads one slice's DTW table
//! and counts, over the rows of the bit-parallel layout (side to move, men group, the kings
//! other than the innermost one; a slot per square of the innermost king, each position
//! once, its innermost king the lowest of its colour), at how many levels of plies each row
//! changes (the distinct distances of its won and lost positions that are not capture
//! positions) and at how many levels a row would be evaluated (one after a level at which a
//! row it reads by a king move changed, or at which it changes itself, up to its deepest
//! level). Outcomes are taken as known: draws and capture positions are never open.
//!
//! `cargo run --release -p dtb-gen --example dtw_levels -- DIR SLICE [VARIANT]`
//!
//! Refused: kings that fly (the rows' king moves here are one square), a table that is not
//! DTW, a slice that is its own mirror (one side stored), a distance past 255 plies.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use dtb_probe::internal::board::{Dir, NONE};
use dtb_probe::internal::index::SliceIndex;
use dtb_probe::internal::material::Material;
use dtb_probe::internal::rules::KingRange;
use dtb_probe::internal::table::{BlockCache, TableFile};
use dtb_probe::movegen::has_capture;
use dtb_probe::{Color, Rules, ValueKind};
use rayon::prelude::*;

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("dtw_levels: error: {message}");
    std::process::exit(2);
}

/// Levels 0..=255 as bits.
#[derive(Clone, Copy, Default)]
struct Levels([u64; 4]);

impl Levels {
    fn add(&mut self, l: usize) {
        self.0[l / 64] |= 1 << (l % 64);
    }
    fn or(&mut self, o: &Levels) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a |= b;
        }
    }
    /// Every level one more (a change at `l` makes its readers evaluated at `l + 1`).
    fn next(&self) -> Levels {
        let w = self.0;
        Levels([
            w[0] << 1,
            w[1] << 1 | w[0] >> 63,
            w[2] << 1 | w[1] >> 63,
            w[3] << 1 | w[2] >> 63,
        ])
    }
    /// Levels up to `max`, inclusive.
    fn up_to(&self, max: usize) -> Levels {
        let mut r = *self;
        for (i, w) in r.0.iter_mut().enumerate() {
            let lo = 64 * i;
            if max < lo {
                *w = 0;
            } else if max < lo + 63 {
                *w &= (2u64 << (max - lo)) - 1;
            }
        }
        r
    }
    fn count(&self) -> u64 {
        self.0.iter().map(|w| u64::from(w.count_ones())).sum()
    }
    fn max(&self) -> Option<usize> {
        (0..4)
            .rev()
            .find(|&i| self.0[i] != 0)
            .map(|i| 64 * i + 63 - self.0[i].leading_zeros() as usize)
    }
}

/// One row of both sides: the levels at which it changes, and its open positions.
#[derive(Clone, Copy, Default)]
struct Row {
    changes: [Levels; 2],
    open: [u64; 2],
}

#[derive(Default)]
struct Tally {
    rows: u64,
    open: u64,
    changes: u64,
    evaluations: u64,
    rows_open: u64,
}

impl Tally {
    fn add(mut self, o: Tally) -> Tally {
        self.rows += o.rows;
        self.open += o.open;
        self.changes += o.changes;
        self.evaluations += o.evaluations;
        self.rows_open += o.rows_open;
        self
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, slice) = match args.as_slice() {
        [d, s] | [d, s, _] => (d, s),
        _ => fail("usage: dtw_levels DIR SLICE [VARIANT]"),
    };
    let rules = match args.get(2) {
        Some(v) => Rules::by_name(v).unwrap_or_else(|| fail(format!("no variant {v:?}"))),
        None => Rules::ENGLISH,
    };
    if rules.kings != KingRange::Short {
        fail(format!(
            "{}: kings that fly; the rows' king moves here are one square",
            rules.name
        ));
    }
    let m = Material::parse(slice).unwrap_or_else(|| fail(format!("no slice {slice:?}")));
    let path = Path::new(dir).join(format!("{}-{m}.dtw", rules.name));
    let table = TableFile::open(&path, Arc::new(BlockCache::new(256 << 20)))
        .unwrap_or_else(|e| fail(dtb_probe::report(&e)));
    let h = table.header();
    if h.kind != ValueKind::Dtw {
        fail(format!("{}: a {} table, not DTW", path.display(), h.kind));
    }
    if h.stored_side_count() != 2 {
        fail("a slice that is its own mirror (one side stored) is not handled");
    }
    let g = rules.geometry();
    let ix = SliceIndex::new(m, g);
    let kk = ix.kings_per_group();
    // The innermost king's colour: the one with fewer kings (Black on a tie), as the solver.
    let black = m.black_kings > 0 && (m.white_kings == 0 || m.black_kings <= m.white_kings);
    let t0 = std::time::Instant::now();
    let tally = (0..ix.men_groups())
        .into_par_iter()
        .map(|grp| {
            let dec = ix.group_decoder(grp);
            let mut rows: HashMap<(u64, u64), Row> = HashMap::new();
            for kr in 0..kk {
                let (wk, bk) = dec.kings(kr);
                let inner = if black { bk } else { wk };
                if inner == 0 {
                    continue;
                }
                let lowest = inner & inner.wrapping_neg();
                let key = if black {
                    (wk, bk & !lowest)
                } else {
                    (wk & !lowest, bk)
                };
                let row = rows.entry(key).or_default();
                for side in [Color::White, Color::Black] {
                    let s = side.index();
                    let code = table
                        .stored_code(s, grp * kk + kr)
                        .unwrap_or_else(|e| fail(dtb_probe::report(&e)));
                    if code == 0 || has_capture(&rules, &dec.with_kings(wk, bk, side)) {
                        continue;
                    }
                    if code > 256 {
                        fail(format!("a distance of {} plies: over 255", code - 1));
                    }
                    row.changes[s].add(usize::from(code - 1));
                    row.open[s] += 1;
                }
            }
            let (wmen, bmen) = dec.men();
            let men = wmen | bmen;
            let mut t = Tally::default();
            for (&(wo, bo), row) in &rows {
                t.rows += 2;
                for side in [Color::White, Color::Black] {
                    let s = side.index();
                    let o = 1 - s;
                    if row.open[s] == 0 {
                        continue;
                    }
                    t.rows_open += 1;
                    t.open += row.open[s];
                    t.changes += row.changes[s].count();
                    let max = row.changes[s].max().unwrap_or(0);
                    // Read by a move of the innermost king: this row, the other side.
                    let mut reads = Levels::default();
                    if (side == Color::Black) == black {
                        reads.or(&row.changes[o]);
                    }
                    // Read by a move of another king of the side to move: the row with it moved.
                    let own = if side == Color::White { wo } else { bo };
                    let occ = men | wo | bo;
                    let mut ks = own;
                    while ks != 0 {
                        let a = ks.trailing_zeros() as u8;
                        ks &= ks - 1;
                        for d in Dir::ALL {
                            let b = g.step(a, d);
                            if b == NONE || occ >> b & 1 != 0 {
                                continue;
                            }
                            let moved = (1u64 << a) | (1u64 << b);
                            let key = if side == Color::White {
                                (wo ^ moved, bo)
                            } else {
                                (wo, bo ^ moved)
                            };
                            if let Some(r) = rows.get(&key) {
                                reads.or(&r.changes[o]);
                            }
                        }
                    }
                    let mut eval = reads.next();
                    eval.or(&row.changes[s]);
                    t.evaluations += eval.up_to(max).count();
                }
            }
            t
        })
        .reduce(Tally::default, Tally::add);
    println!(
        "{m}: {} rows ({} of them with open positions), {} open positions ({:.2} a row), \
         max plies {}; a row changes at {:.2} levels, is evaluated at {:.2}: {:.3} evaluations \
         an open position, {:.3} a slot; {:.1} s",
        tally.rows,
        tally.rows_open,
        tally.open,
        tally.open as f64 / tally.rows_open.max(1) as f64,
        h.max_plies,
        tally.changes as f64 / tally.rows_open.max(1) as f64,
        tally.evaluations as f64 / tally.rows_open.max(1) as f64,
        tally.evaluations as f64 / tally.open.max(1) as f64,
        tally.evaluations as f64 / (32 * tally.rows).max(1) as f64,
        t0.elapsed().as_secs_f64()
    );
}
