//! `dtb verify`: every file's checksums, and every stored value against its successors.
//!
//! With exact distances, local consistency is a proof of correctness: a win in `d` plies
//! needs a successor lost in `d - 1`, a loss in `d` needs every successor won in at most
//! `d - 1` and one in exactly `d - 1`, so by induction on `d` every win and loss is real, and a
//! draw that had a winning move would see a successor marked lost.
//!
//! A slice without a DTW file (`dtb gen --wld-only`) is checked on outcomes alone: a win
//! needs a successor lost, a loss every successor won, a draw neither. That catches a wrong
//! index or a changed value, but is not a proof: a cycle of drawn positions marked as wins and
//! losses can be consistent.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use dtb_probe::format::{wld_code, ValueKind};
use dtb_probe::index::{MenCache, SliceIndex};
use dtb_probe::movegen::{legal_moves, Counting};
use dtb_probe::rules::{BlockedOutcome, Color, Rules};
use dtb_probe::tablebase::parse_file_name;
use dtb_probe::value::{
    code_of_wld, goodness, is_capture_position, parent_code, wld_of, DRAW, LOST,
};
use dtb_probe::{fen, Material, Tablebase};
use rayon::prelude::*;

/// One disagreement found.
#[derive(Clone, Debug)]
pub struct Problem {
    /// The file or slice concerned.
    pub what: String,
    pub message: String,
}

/// Outcome of verifying one slice.
#[derive(Clone, Debug)]
pub struct SliceReport {
    pub material: Material,
    pub positions: u64,
    /// Checked on outcomes only (the slice has no DTW file).
    pub outcomes_only: bool,
    pub problems: Vec<Problem>,
}

/// Check every table file of `rules`' variant in `dir`: checksums, then values. `progress`
/// is called with positions checked.
///
/// # Errors
/// Only if the directory cannot be listed; file problems are reported, not returned.
pub fn verify_dir(
    dir: &Path,
    rules: Rules,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<SliceReport>, dtb_probe::ProbeError> {
    verify_dir_sampled(dir, rules, None, progress)
}

/// [`verify_dir`], checking at most `sample` positions a slice (both sides together), spread
/// over its index range: one pseudo-random position in each of `sample` equal stretches
/// (the same ones on every run). For builds too large to check whole; `None` checks all.
///
/// # Errors
/// As [`verify_dir`].
pub fn verify_dir_sampled(
    dir: &Path,
    rules: Rules,
    sample: Option<u64>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<SliceReport>, dtb_probe::ProbeError> {
    let tb = Tablebase::with_cache_bytes(rules, 256 << 20);
    let mut tb = tb;
    tb.add_directory(dir)?;
    let mut slices: Vec<Material> = tb.materials(ValueKind::Wld);
    for m in tb.materials(ValueKind::Dtw) {
        if !slices.contains(&m) {
            slices.push(m);
        }
    }
    slices.sort_by_key(|m| (m.pieces(), m.men(), *m));
    let dtw_slices = tb.materials(ValueKind::Dtw);
    let mut reports = Vec::new();
    for m in slices {
        // A slice without a DTW file (built by `dtb gen --wld-only`, possibly into a
        // directory whose smaller slices have DTW files) is checked on outcomes.
        let wld_only = !dtw_slices.contains(&m);
        reports.push(verify_slice(
            &tb, &rules, m, dir, wld_only, sample, progress,
        ));
    }
    Ok(reports)
}

fn file_of(dir: &Path, rules: &Rules, m: Material, kind: ValueKind) -> PathBuf {
    dir.join(format!("{}-{m}.{}", rules.name, kind.extension()))
}

fn verify_slice(
    tb: &Tablebase,
    rules: &Rules,
    m: Material,
    dir: &Path,
    wld_only: bool,
    sample: Option<u64>,
    progress: &(dyn Fn(u64) + Sync),
) -> SliceReport {
    let mut problems = Vec::new();
    let mut tables = Vec::new();
    let kinds: &[ValueKind] = if wld_only {
        &[ValueKind::Wld]
    } else {
        &[ValueKind::Wld, ValueKind::Dtw]
    };
    for &kind in kinds {
        let what = file_of(dir, rules, m, kind).display().to_string();
        match tb.table(m, kind) {
            Ok(t) => match t.verify_payload() {
                Ok(()) => tables.push(Some(t)),
                Err(e) => {
                    problems.push(Problem {
                        what,
                        message: e.to_string(),
                    });
                    tables.push(None);
                }
            },
            Err(e) => {
                problems.push(Problem {
                    what,
                    message: e.to_string(),
                });
                tables.push(None);
            }
        }
    }
    let ix = SliceIndex::new(m, rules.geometry());
    let n = ix.size();
    let dtw = tables.get(1).copied().flatten();
    let (Some(wld), true) = (tables[0], wld_only || dtw.is_some()) else {
        return SliceReport {
            material: m,
            positions: 0,
            outcomes_only: wld_only,
            problems,
        };
    };
    let sides: Vec<Color> = [Color::White, Color::Black]
        .into_iter()
        .filter(|c| wld.header().side_stored(c.index()))
        .collect();
    let found = Mutex::new(Vec::new());
    let bad = AtomicU64::new(0);
    let unreadable = AtomicU64::new(0);
    let first_unreadable: Mutex<Option<String>> = Mutex::new(None);
    const CHUNK: u64 = 1 << 12;
    let all = n * sides.len() as u64;
    let total = sample.map_or(all, |s| s.min(all));
    // Position `g` of `all`, for item `j` of `total`: all of them in order, or one
    // pseudo-random position in each of `total` equal stretches.
    let pick = |j: u64| -> u64 {
        if total == all {
            return j;
        }
        let (lo, hi) = (
            (j as u128 * all as u128 / total as u128) as u64,
            ((j + 1) as u128 * all as u128 / total as u128) as u64,
        );
        lo + splitmix(j ^ u64::from(m.pieces()) << 56) % (hi - lo).max(1)
    };
    (0..total.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
        let mut moves = Vec::new();
        let mut men = MenCache::default();
        let lo = c * CHUNK;
        let hi = (lo + CHUNK).min(total);
        for g in (lo..hi).map(pick) {
            let side = sides[(g / n) as usize];
            let i = g % n;
            let pos = ix.unindex_cached(i, side, &mut men);
            legal_moves(rules, &pos, Counting::Unique, &mut moves);
            if is_capture_position(rules, &moves) {
                continue;
            }
            let expected: Result<u16, String> = if moves.is_empty() {
                Ok(match rules.blocked {
                    BlockedOutcome::Loss => LOST,
                    BlockedOutcome::Draw => DRAW,
                })
            } else {
                let mut best: Option<u16> = None;
                let mut err = None;
                for mv in &moves {
                    let succ = mv.apply(&pos);
                    let probed = if wld_only {
                        tb.probe_wld(&succ).map(code_of_wld)
                    } else {
                        tb.probe_dtw(&succ).map(|d| d.plies.map_or(DRAW, |p| p + 1))
                    };
                    match probed {
                        Ok(code) => {
                            let v = parent_code(code);
                            if best.is_none_or(|b| goodness(v) > goodness(b)) {
                                best = Some(v);
                            }
                        }
                        Err(e) => {
                            err = Some(e.to_string());
                            break;
                        }
                    }
                }
                match err {
                    Some(e) => Err(e),
                    None => Ok(best.unwrap_or(LOST)),
                }
            };
            let stored = match dtw {
                Some(dtw) => dtw.value(side.index(), i).map_err(|e| e.to_string()),
                None => Ok(expected.clone().unwrap_or(DRAW)), // WLD-only: nothing to compare
            };
            let stored_wld = wld.value(side.index(), i).map_err(|e| e.to_string());
            if let Err(e) = &expected {
                // A successor could not be read (a bad file of another slice): one report
                // for the slice, not one per position.
                if unreadable.fetch_add(1, Relaxed) == 0 {
                    *first_unreadable.lock().expect("no panics while held") = Some(e.clone());
                }
                continue;
            }
            let msg = match (expected, stored, stored_wld) {
                (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => Some(e),
                (Ok(e), Ok(s), Ok(w)) => {
                    // Under WLD-only, `e` holds nominal distances and `s == e`.
                    let w_expected = wld_code(e);
                    if e != s {
                        Some(format!(
                            "DTW stores code {s} ({:?}), successors give {e} ({:?})",
                            wld_of(s),
                            wld_of(e)
                        ))
                    } else if w != w_expected {
                        Some(format!("WLD stores {w}, successors give {:?}", wld_of(e)))
                    } else {
                        None
                    }
                }
            };
            if let Some(message) = msg {
                if bad.fetch_add(1, Relaxed) < 20 {
                    found.lock().expect("no panics while held").push(Problem {
                        what: format!("slice {m} index {i} {}", fen::write_for(&pos, rules)),
                        message,
                    });
                }
            }
        }
        progress(hi - lo);
    });
    let skipped = unreadable.load(Relaxed);
    if skipped > 0 {
        let e = first_unreadable
            .into_inner()
            .expect("no panics while held")
            .unwrap_or_default();
        problems.push(Problem {
            what: format!("slice {m}"),
            message: format!("{skipped} positions not checked: a successor could not be read: {e}"),
        });
    }
    let mut found = found.into_inner().expect("no panics while held");
    found.sort_by(|a, b| a.what.cmp(&b.what));
    let extra = bad.load(Relaxed).saturating_sub(found.len() as u64);
    problems.extend(found);
    if extra > 0 {
        problems.push(Problem {
            what: format!("slice {m}"),
            message: format!("{extra} more mismatching positions"),
        });
    }
    SliceReport {
        material: m,
        positions: total,
        outcomes_only: wld_only,
        problems,
    }
}

/// splitmix64's output function: a well-mixed hash of `x`.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Table files of `dir` whose names look like another variant's or are unreadable are not
/// this command's business; this lists the ones it checks, for messages.
pub fn table_files(dir: &Path, rules: &Rules) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| parse_file_name(n, rules.name).is_some())
        })
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}
