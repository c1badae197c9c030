//! `dtb verify`: every file's checksums, and every stored value against its successors.
//!
//! With exact distances, local consistency is a proof of correctness: a win in `d` plies
//! needs a successor lost in `d - 1`, a loss in `d` needs every successor won in at most
//! `d - 1` and one in exactly `d - 1`, so by induction on `d` every win and loss is real, and a
//! draw that had a winning move would see a successor marked lost.
//!
//! Checking every position (no `--sample`), it also adds up the true values and checks the
//! figures each header states: the win/loss/draw counts of each side, and the longest distance
//! (a DTW file's largest stored code; a WLD file's longest true distance, where stated).
//!
//! A slice without a DTW file (`dtb gen --wld-only`) is checked on outcomes alone: a win
//! needs a successor lost, a loss every successor won, a draw neither. That catches a wrong
//! index or a changed value, but is not a proof: a cycle of drawn positions marked as wins and
//! losses can be consistent.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use dtb_probe::internal::format::{wld_code, ValueKind, FORMAT_VERSION_THREAT};
use dtb_probe::internal::index::{MenCache, SliceIndex};
use dtb_probe::internal::rules::{Color, Rules};
use dtb_probe::internal::tablebase::parse_file_name;
use dtb_probe::internal::value::{
    blocked_code, code_of_wld, goodness, is_capture_position, is_threat_dont_care, parent_code,
    wld_of, DRAW, FLIP, LOST,
};
use dtb_probe::movegen::{legal_moves, Counting};
use dtb_probe::{fen, Material, Tablebase, Wld};
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
                        message: dtb_probe::report(&e),
                    });
                    tables.push(None);
                }
            },
            Err(e) => {
                problems.push(Problem {
                    what,
                    message: dtb_probe::report(&e),
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
    // Checking every position: also add up the true values, to check the figures the headers
    // state (counts per side; the longest distance).
    let whole = total == all;
    let figures = Mutex::new(Figures::default());
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
    let threat_files = wld.header().version == FORMAT_VERSION_THREAT;
    (0..total.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
        let mut moves = Vec::new();
        let mut scratch = Vec::new();
        let mut men = MenCache::default();
        let mut fig = Figures::default();
        let lo = c * CHUNK;
        let hi = (lo + CHUNK).min(total);
        for g in (lo..hi).map(pick) {
            let side = sides[(g / n) as usize];
            let i = g % n;
            let pos = ix.unindex_cached(i, side, &mut men);
            legal_moves(rules, &pos, Counting::Unique, &mut moves);
            if is_capture_position(rules, &moves) {
                if whole {
                    // A "don't care" entry: its true value comes from the capture search; its
                    // stored DTW code still counts towards the file's largest code.
                    fig.add_true(tb, &pos, dtw.is_some());
                    if let Some(Ok(code)) = dtw.map(|t| t.stored_code(side.index(), i)) {
                        fig.max_stored = fig.max_stored.max(code & !FLIP);
                    }
                }
                continue;
            }
            let expected: Result<u16, String> = if moves.is_empty() {
                Ok(blocked_code(rules, &pos))
            } else {
                let mut best: Option<u16> = None;
                let mut err = None;
                for mv in &moves {
                    let succ = mv.apply_unchecked(&pos);
                    let probed = if wld_only {
                        tb.probe_wld(&succ).map(code_of_wld)
                    } else {
                        tb.probe_dtw(&succ).map(|d| d.code())
                    };
                    match probed {
                        Ok(code) => {
                            let v = parent_code(code);
                            if best.is_none_or(|b| goodness(v) > goodness(b)) {
                                best = Some(v);
                            }
                        }
                        Err(e) => {
                            err = Some(dtb_probe::report(&e));
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
                Some(dtw) => dtw
                    .stored_code(side.index(), i)
                    .map_err(|e| dtb_probe::report(&e)),
                None => Ok(expected.clone().unwrap_or(DRAW)), // WLD-only: nothing to compare
            };
            // A version 3 WLD file leaves threat positions "don't care": their WLD value is
            // the probe's one-ply search (the DTW file, if any, still stores them).
            let stored_wld = if threat_files && is_threat_dont_care(rules, &pos, &mut scratch) {
                tb.probe_wld(&pos)
                    .map(|w| wld_code(code_of_wld(w)))
                    .map_err(|e| dtb_probe::report(&e))
            } else {
                wld.stored_code(side.index(), i)
                    .map_err(|e| dtb_probe::report(&e))
            };
            if whole {
                if let (Ok(w), Ok(code)) = (&stored_wld, &stored) {
                    fig.add(side, wld_of_file_code(*w), dtw.map(|_| *code));
                    if dtw.is_some() {
                        fig.max_stored = fig.max_stored.max(*code & !FLIP);
                    }
                } else {
                    fig.unknown += 1;
                }
            }
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
        figures.lock().expect("no panics while held").merge(&fig);
        progress(hi - lo);
    });
    if whole {
        // A side whose values are not stored (a colour-symmetric slice): its true values
        // through the probe (colour-reversed look-ups).
        for side in [Color::White, Color::Black] {
            if wld.header().side_stored(side.index()) {
                continue;
            }
            (0..n.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
                let mut men = MenCache::default();
                let mut fig = Figures::default();
                let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
                for i in lo..hi {
                    let pos = ix.unindex_cached(i, side, &mut men);
                    fig.add_true(tb, &pos, dtw.is_some());
                }
                figures.lock().expect("no panics while held").merge(&fig);
                progress(hi - lo);
            });
        }
        let fig = figures.into_inner().expect("no panics while held");
        let mut files = vec![(ValueKind::Wld, wld)];
        files.extend(dtw.map(|t| (ValueKind::Dtw, t)));
        for (kind, t) in files {
            let what = file_of(dir, rules, m, kind).display().to_string();
            for message in fig.header_problems(t.header(), kind, n) {
                problems.push(Problem {
                    what: what.clone(),
                    message,
                });
            }
        }
    }
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

/// The true values of a slice, added up to check the figures its headers state.
#[derive(Default)]
struct Figures {
    /// Wins, losses, draws, white to move then black to move.
    counts: [[u64; 3]; 2],
    /// The largest true distance code of any position (with DTW tables), without the outcome
    /// flag: the longest distance plus one.
    max_true: u16,
    /// The largest code stored in the DTW file, "don't care" entries included, without the
    /// outcome flag.
    max_stored: u16,
    /// Positions whose value could not be read (reported elsewhere): no figure is checked.
    unknown: u64,
}

/// The outcome of a WLD file code (0 draw, 1 win, 2 loss).
fn wld_of_file_code(w: u16) -> Wld {
    match w {
        1 => Wld::Win,
        2 => Wld::Loss,
        _ => Wld::Draw,
    }
}

impl Figures {
    fn add(&mut self, side: Color, w: Wld, dtw_code: Option<u16>) {
        let k = match w {
            Wld::Win => 0,
            Wld::Loss => 1,
            Wld::Draw => 2,
        };
        self.counts[side.index()][k] += 1;
        if let Some(c) = dtw_code {
            self.max_true = self.max_true.max(c & !FLIP);
        }
    }

    /// Count `pos` by its true value, found by the probe (capture search).
    fn add_true(&mut self, tb: &Tablebase, pos: &dtb_probe::Position, with_dtw: bool) {
        let got = if with_dtw {
            tb.probe_dtw(pos).map(|d| (d.wld, Some(d.code())))
        } else {
            tb.probe_wld(pos).map(|w| (w, None))
        };
        match got {
            Ok((w, code)) => self.add(pos.side_to_move(), w, code),
            Err(_) => self.unknown += 1,
        }
    }

    fn merge(&mut self, o: &Figures) {
        for s in 0..2 {
            for k in 0..3 {
                self.counts[s][k] += o.counts[s][k];
            }
        }
        self.max_true = self.max_true.max(o.max_true);
        self.max_stored = self.max_stored.max(o.max_stored);
        self.unknown += o.unknown;
    }

    /// What the header of a `kind` file of a slice of `n` positions a side states that these
    /// values contradict: the win/loss/draw counts of each side (they must add up to `n`), and
    /// the longest distance (DTW: the largest stored code less one; WLD, where not 0 for
    /// unknown: the longest true distance, when the DTW file was read).
    fn header_problems(
        &self,
        h: &dtb_probe::internal::format::Header,
        kind: ValueKind,
        n: u64,
    ) -> Vec<String> {
        let mut out = Vec::new();
        if self.unknown > 0 {
            return out;
        }
        for (s, name) in ["white", "black"].iter().enumerate() {
            let (hc, vc) = (h.counts[s], self.counts[s]);
            if hc != vc {
                out.push(format!(
                    "header counts for {name} to move: {} wins, {} losses, {} draws ({} positions); \
                     the values: {} wins, {} losses, {} draws ({n} positions)",
                    hc[0],
                    hc[1],
                    hc[2],
                    hc.iter().map(|&c| u128::from(c)).sum::<u128>(),
                    vc[0],
                    vc[1],
                    vc[2]
                ));
            }
        }
        let with_dtw = self.max_true > 0 || self.max_stored > 0;
        let (stated, found) = match kind {
            ValueKind::Dtw => (h.max_plies, self.max_stored.saturating_sub(1)),
            ValueKind::Wld if h.max_plies != 0 && with_dtw => {
                (h.max_plies, self.max_true.saturating_sub(1))
            }
            ValueKind::Wld => return out,
        };
        if stated != found {
            out.push(format!(
                "header states a longest distance of {stated} plies; the values: {found} plies"
            ));
        }
        out
    }
}

/// splitmix64's output for state `x`: a well-mixed hash of `x`.
fn splitmix(mut x: u64) -> u64 {
    dtb_probe::internal::rng::splitmix64(&mut x)
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
