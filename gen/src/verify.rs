//! `dtb verify`: every file's checksums, and every stored value against its successors.
//!
//! With exact distances, local consistency is a proof of correctness: a win in `d` plies
//! needs a successor lost in `d - 1`, a loss in `d` needs every successor won in at most
//! `d - 1` and one in exactly `d - 1`, so by induction on `d` every win and loss is real, and a
//! draw that had a winning move would see a successor marked lost.
//!
//! Checking every position (no `--sample`), it also adds up the true values and checks the
//! figures each header states: the win/loss/draw counts of each side, the longest distance
//! (a DTW file's largest stored code; a WLD file's longest true distance, where stated), and
//! a DTC file's cursed wins and blessed losses of each side (under the profile it states).
//!
//! A slice without a DTW file (`dtb gen --wld-only`) is checked on outcomes alone: a win
//! needs a successor lost, a loss every successor won, a draw neither. That catches a wrong
//! index or a changed value, but is not a proof: a cycle of drawn positions marked as wins and
//! losses can be consistent.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use dtb_probe::internal::count::CountProfile;
use dtb_probe::internal::format::{
    parse_file_name, table_file_name, ValueKind, WldCode, FORMAT_VERSION_THREAT,
};
use dtb_probe::internal::index::{MenCache, SliceIndex};
use dtb_probe::internal::rules::{Color, Rules};
use dtb_probe::internal::table::TableFile;
use dtb_probe::internal::value::{
    blocked_code, is_capture_position, is_threat_dont_care, Best, Code, DRAW, FLIP,
};
use dtb_probe::movegen::{legal_moves, Counting};
use dtb_probe::{fen, Category, Material, Tablebase, Wld};
use rayon::prelude::*;

use crate::values::{Values, ALL};

/// One disagreement found.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    // DTC files are checked under the count profile the first one states (a file of
    // another profile is then reported as a mismatch).
    if let Some(p) = dtc_count_profile(&tb, dir) {
        tb.set_count_profile(p);
    }
    let mut slices: Vec<Material> = tb.materials(ValueKind::Wld);
    for m in tb
        .materials(ValueKind::Dtw)
        .into_iter()
        .chain(tb.materials(ValueKind::Dtc))
    {
        if !slices.contains(&m) {
            slices.push(m);
        }
    }
    slices.sort_by_key(|m| (m.pieces(), m.men(), *m));
    let found: Vec<(ValueKind, Vec<Material>)> =
        ALL.into_iter().map(|k| (k, tb.materials(k))).collect();
    let mut reports = Vec::new();
    for m in slices {
        // The kinds of file the slice has: one without a DTW file (built by `dtb gen
        // --values wld`, possibly into a directory whose smaller slices have DTW files) is
        // checked on outcomes.
        let values = found
            .iter()
            .filter(|(_, ms)| ms.contains(&m))
            .fold(Values::WLD, |v, &(k, _)| v.with(k));
        reports.push(verify_slice(&tb, m, dir, values, sample, progress));
    }
    Ok(reports)
}

/// The count profile the first DTC file of `tb` (opened on `dir`) states: what `dtb
/// verify` checks DTC files under. `None` without DTC files, or where that file cannot be
/// read or states no profile this version knows (its check then says why).
pub fn dtc_count_profile(tb: &Tablebase, dir: &Path) -> Option<CountProfile> {
    let &m = tb.materials(ValueKind::Dtc).first()?;
    let cache = std::sync::Arc::new(dtb_probe::internal::table::BlockCache::new(0));
    TableFile::open(&file_of(dir, tb.rules(), m, ValueKind::Dtc), cache)
        .ok()
        .and_then(|t| CountProfile::decode(&t.header().count_code))
}

fn file_of(dir: &Path, rules: &Rules, m: Material, kind: ValueKind) -> PathBuf {
    dir.join(table_file_name(rules.name, m, kind))
}

/// Checks slice `m`: its WLD file, and each distance file it has (DTW, DTC) against its
/// successors, one pass each.
fn verify_slice(
    tb: &Tablebase,
    m: Material,
    dir: &Path,
    values: Values,
    sample: Option<u64>,
    progress: &(dyn Fn(u64) + Sync),
) -> SliceReport {
    let distances: Vec<ValueKind> = [ValueKind::Dtw, ValueKind::Dtc]
        .into_iter()
        .filter(|&k| values.contains(k))
        .collect();
    if distances.is_empty() {
        return verify_slice_kind(tb, m, dir, None, sample, progress);
    }
    let mut reports = distances
        .into_iter()
        .map(|k| verify_slice_kind(tb, m, dir, Some(k), sample, progress));
    let mut first = reports
        .next()
        .unwrap_or_else(|| unreachable!("one kind at least"));
    // Each pass checks the WLD file too: a problem of its header is said once.
    for r in reports {
        for p in r.problems {
            if !first.problems.contains(&p) {
                first.problems.push(p);
            }
        }
    }
    first
}

/// Checks slice `m`'s WLD file and its file of `distance` (none: outcomes only).
fn verify_slice_kind(
    tb: &Tablebase,
    m: Material,
    dir: &Path,
    distance: Option<ValueKind>,
    sample: Option<u64>,
    progress: &(dyn Fn(u64) + Sync),
) -> SliceReport {
    let rules = tb.rules();
    let mut problems = Vec::new();
    let outcomes_only = distance.is_none();
    let (wld, dtw) = open_checked(tb, rules, m, dir, distance, &mut problems);
    let (Some(wld), true) = (wld, outcomes_only || dtw.is_some()) else {
        return SliceReport {
            material: m,
            positions: 0,
            outcomes_only,
            problems,
        };
    };
    let ix = SliceIndex::new(m, rules.geometry());
    let n = ix.size();
    let sides: Vec<Color> = [Color::White, Color::Black]
        .into_iter()
        .filter(|c| wld.header().side_stored(c.index()))
        .collect();
    let all = n * sides.len() as u64;
    let total = sample.map_or(all, |s| s.min(all));
    let check = SliceCheck {
        tb,
        rules,
        ix,
        wld,
        dtw,
        kind: distance.unwrap_or(ValueKind::Wld),
        outcomes_only,
        threat_files: wld.header().version == FORMAT_VERSION_THREAT,
        // Checking every position: also add up the true values, to check the figures the
        // headers state (counts per side; the longest distance).
        whole: total == all,
    };
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
    let found = Found::default();
    (0..total.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
        let mut buf = Buffers::default();
        let mut fig = Figures::default();
        let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(total));
        for g in (lo..hi).map(pick) {
            let (side, i) = (sides[(g / n) as usize], g % n);
            match check.position(side, i, &mut buf, &mut fig) {
                Verdict::Agrees => {}
                Verdict::Differs { pos, message } => found.differs(&check, m, i, &pos, message),
                Verdict::Unreadable(e) => found.unreadable(e),
            }
        }
        found
            .figures
            .lock()
            .expect("no panics while held")
            .merge(&fig);
        progress(hi - lo);
    });
    if check.whole {
        let mut fig = std::mem::take(&mut *found.figures.lock().expect("no panics while held"));
        check.add_unstored_sides(&mut fig, progress);
        let mut files = vec![(ValueKind::Wld, wld)];
        files.extend(dtw.map(|t| (distance.unwrap_or(ValueKind::Dtw), t)));
        for (kind, t) in files {
            let what = file_of(dir, rules, m, kind).display().to_string();
            for message in fig.header_problems(t.header(), kind, distance, n) {
                problems.push(Problem {
                    what: what.clone(),
                    message,
                });
            }
        }
    }
    problems.extend(found.problems(m));
    SliceReport {
        material: m,
        positions: total,
        outcomes_only,
        problems,
    }
}

/// Positions a task of [`verify_slice`]'s parallel check takes.
const CHUNK: u64 = 1 << 12;

/// The files of slice `m` that are checked, their checksums verified: the WLD file and
/// the DTW file if `values` has it; `None` for one that cannot be opened or is damaged, the
/// reason added to `problems`.
fn open_checked<'a>(
    tb: &'a Tablebase,
    rules: &Rules,
    m: Material,
    dir: &Path,
    distance: Option<ValueKind>,
    problems: &mut Vec<Problem>,
) -> (Option<&'a TableFile>, Option<&'a TableFile>) {
    let mut open = |kind: ValueKind| {
        let checked = tb
            .table(m, kind)
            .map_err(|e| dtb_probe::report(&e))
            .and_then(|t| {
                t.verify_payload()
                    .map(|()| t)
                    .map_err(|e| dtb_probe::report(&e))
            });
        checked
            .map_err(|message| {
                problems.push(Problem {
                    what: file_of(dir, rules, m, kind).display().to_string(),
                    message,
                })
            })
            .ok()
    };
    let wld = open(ValueKind::Wld);
    let dtw = distance.and_then(&mut open);
    (wld, dtw)
}

/// One slice's files and what checking a position of it needs.
struct SliceCheck<'a> {
    tb: &'a Tablebase,
    rules: &'a Rules,
    ix: SliceIndex,
    wld: &'a TableFile,
    dtw: Option<&'a TableFile>,
    /// The kind of `dtw`: DTW or DTC (WLD when there is none).
    kind: ValueKind,
    /// Only outcomes are checked (the slice has no DTW file).
    outcomes_only: bool,
    /// The WLD file leaves threat positions "don't care" (format version 3).
    threat_files: bool,
    /// Every position is checked, so the true values are added up too.
    whole: bool,
}

/// A worker's buffers, kept from position to position.
#[derive(Default)]
struct Buffers {
    moves: Vec<dtb_probe::movegen::Move>,
    threat_moves: Vec<dtb_probe::movegen::Move>,
    men: MenCache,
}

/// What checking one position found.
enum Verdict {
    /// Its stored values agree with its successors' (or it is a capture position, whose
    /// stored value is "don't care").
    Agrees,
    /// They do not.
    Differs {
        pos: dtb_probe::Position,
        message: String,
    },
    /// A successor's value could not be read (a bad file of another slice).
    Unreadable(String),
}

impl SliceCheck<'_> {
    /// Checks position `i` of `side`: its stored DTW code (or, WLD-only, its outcome) against
    /// the best over its successors, and its stored WLD code against that outcome, adding its
    /// true value to `fig` when the whole slice is checked.
    fn position(&self, side: Color, i: u64, buf: &mut Buffers, fig: &mut Figures) -> Verdict {
        let (rules, tb) = (self.rules, self.tb);
        let pos = self.ix.unindex_cached(i, side, &mut buf.men);
        legal_moves(rules, &pos, Counting::Unique, &mut buf.moves);
        if is_capture_position(rules, &buf.moves) {
            if self.whole {
                // A "don't care" entry: its true value comes from the capture search; its
                // stored DTW code still counts towards the file's largest code.
                fig.add_true(tb, &pos, self.dtw.map(|_| self.kind));
                if let Some(Ok(code)) = self.dtw.map(|t| t.stored_code(side.index(), i)) {
                    fig.max_stored = fig.max_stored.max(code & !FLIP);
                }
            }
            return Verdict::Agrees;
        }
        let expected = self.best_over_successors(&pos, &buf.moves);
        let stored = match self.dtw {
            Some(dtw) => dtw
                .stored_code(side.index(), i)
                .map(Code::from_bits)
                .map_err(|e| dtb_probe::report(&e)),
            None => Ok(expected.clone().unwrap_or(DRAW)), // WLD-only: nothing to compare
        };
        // A version 3 WLD file leaves threat positions "don't care": their WLD value is the
        // probe's one-ply search (the DTW file, if any, still stores them).
        let stored_wld =
            if self.threat_files && is_threat_dont_care(rules, &pos, &mut buf.threat_moves) {
                tb.probe_wld(&pos)
                    .map(WldCode::of_wld)
                    .map_err(|e| dtb_probe::report(&e))
            } else {
                self.wld
                    .stored_code(side.index(), i)
                    .map_err(|e| dtb_probe::report(&e))
                    .and_then(|raw| {
                        WldCode::from_bits(raw).ok_or_else(|| format!("invalid WLD code {raw}"))
                    })
            };
        if self.whole {
            if let (Ok(w), Ok(code)) = (&stored_wld, &stored) {
                let category = (self.dtw.is_some() && self.kind == ValueKind::Dtc)
                    .then(|| tb.count_profile().category(&pos.material(), *code));
                fig.add(side, w.wld(), self.dtw.map(|_| *code), category);
                if self.dtw.is_some() {
                    fig.max_stored = fig.max_stored.max(code.bits() & !FLIP);
                }
            } else {
                fig.unknown += 1;
            }
        }
        let message = match (expected, stored, stored_wld) {
            (Err(e), _, _) => return Verdict::Unreadable(e),
            (_, Err(e), _) | (_, _, Err(e)) => e,
            // Under WLD-only, `e` holds nominal distances and `s == e`.
            (Ok(e), Ok(s), Ok(_)) if e != s => format!(
                "DTW stores code {} ({:?}), successors give {} ({:?})",
                s.bits(),
                s.wld(),
                e.bits(),
                e.wld()
            ),
            (Ok(e), Ok(_), Ok(w)) if w != WldCode::of(e) => {
                format!("WLD stores {}, successors give {:?}", w.bits(), e.wld())
            }
            _ => return Verdict::Agrees,
        };
        Verdict::Differs { pos, message }
    }

    /// The value of `pos` (not a capture position; `moves` its legal moves) by the best of
    /// its successors' values as the probe reads them, or why one could not be read.
    fn best_over_successors(
        &self,
        pos: &dtb_probe::Position,
        moves: &[dtb_probe::movegen::Move],
    ) -> Result<Code, String> {
        if moves.is_empty() {
            return Ok(blocked_code(self.rules, pos));
        }
        let mut best = Best::default();
        for mv in moves {
            let succ = mv.apply_unchecked(pos);
            let probed = match self.kind {
                _ if self.outcomes_only => self.tb.probe_wld(&succ).map(Code::of_wld),
                ValueKind::Dtc => {
                    // What the move makes of the successor's DTC code: it may reset the
                    // counter.
                    self.tb
                        .probe_code(&succ, ValueKind::Dtc)
                        .map(|c| self.tb.count_profile().convert_move(pos, mv, &succ, c))
                }
                _ => self.tb.probe_dtw(&succ).map(|d| d.code()),
            };
            best.offer(probed.map_err(|e| dtb_probe::report(&e))?);
        }
        Ok(best.value())
    }

    /// Adds to `fig` the true values of a side whose values are not stored (a
    /// colour-symmetric slice), through the probe (colour-reversed look-ups).
    fn add_unstored_sides(&self, fig: &mut Figures, progress: &(dyn Fn(u64) + Sync)) {
        let n = self.ix.size();
        for side in [Color::White, Color::Black] {
            if self.wld.header().side_stored(side.index()) {
                continue;
            }
            let merged = Mutex::new(Figures::default());
            (0..n.div_ceil(CHUNK)).into_par_iter().for_each(|c| {
                let mut men = MenCache::default();
                let mut part = Figures::default();
                let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
                for i in lo..hi {
                    let pos = self.ix.unindex_cached(i, side, &mut men);
                    part.add_true(self.tb, &pos, self.dtw.map(|_| self.kind));
                }
                merged.lock().expect("no panics while held").merge(&part);
                progress(hi - lo);
            });
            fig.merge(&merged.into_inner().expect("no panics while held"));
        }
    }
}

/// What the parallel check of a slice found, gathered from its workers.
#[derive(Default)]
struct Found {
    /// The first 20 positions whose values differ (in no particular order).
    shown: Mutex<Vec<Problem>>,
    differing: AtomicU64,
    unreadable: AtomicU64,
    first_unreadable: Mutex<Option<String>>,
    figures: Mutex<Figures>,
}

impl Found {
    fn differs(
        &self,
        check: &SliceCheck,
        m: Material,
        i: u64,
        pos: &dtb_probe::Position,
        message: String,
    ) {
        if self.differing.fetch_add(1, Relaxed) < 20 {
            self.shown
                .lock()
                .expect("no panics while held")
                .push(Problem {
                    what: format!("slice {m} index {i} {}", fen::write_for(pos, check.rules)),
                    message,
                });
        }
    }

    /// One report for the slice, not one per position.
    fn unreadable(&self, e: String) {
        if self.unreadable.fetch_add(1, Relaxed) == 0 {
            *self.first_unreadable.lock().expect("no panics while held") = Some(e);
        }
    }

    /// The problems to report: positions not checked, then the differing positions shown
    /// (sorted), then how many more differ.
    fn problems(self, m: Material) -> Vec<Problem> {
        let mut problems = Vec::new();
        let skipped = self.unreadable.into_inner();
        if skipped > 0 {
            let e = self
                .first_unreadable
                .into_inner()
                .expect("no panics while held")
                .unwrap_or_default();
            problems.push(Problem {
                what: format!("slice {m}"),
                message: format!(
                    "{skipped} positions not checked: a successor could not be read: {e}"
                ),
            });
        }
        let mut shown = self.shown.into_inner().expect("no panics while held");
        shown.sort_by(|a, b| a.what.cmp(&b.what));
        let extra = self
            .differing
            .into_inner()
            .saturating_sub(shown.len() as u64);
        problems.extend(shown);
        if extra > 0 {
            problems.push(Problem {
                what: format!("slice {m}"),
                message: format!("{extra} more mismatching positions"),
            });
        }
        problems
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
    /// With DTC tables: cursed wins and blessed losses, white to move then black to move.
    cursed: [[u64; 2]; 2],
}

impl Figures {
    /// Count a position of `side` to move by its outcome `w`, its distance code if there is
    /// one, and under a count profile its category.
    fn add(&mut self, side: Color, w: Wld, dtw_code: Option<Code>, category: Option<Category>) {
        let k = match w {
            Wld::Win => 0,
            Wld::Loss => 1,
            Wld::Draw => 2,
        };
        self.counts[side.index()][k] += 1;
        match category {
            Some(Category::CursedWin) => self.cursed[side.index()][0] += 1,
            Some(Category::BlessedLoss) => self.cursed[side.index()][1] += 1,
            _ => {}
        }
        if let Some(c) = dtw_code {
            self.max_true = self.max_true.max(c.bits() & !FLIP);
        }
    }

    /// Count `pos` by its true value, found by the probe (capture search).
    fn add_true(&mut self, tb: &Tablebase, pos: &dtb_probe::Position, kind: Option<ValueKind>) {
        let got = match kind {
            Some(ValueKind::Dtc) => tb
                .probe_code(pos, ValueKind::Dtc)
                .map(|c| (c.wld(), Some(c))),
            Some(_) => tb.probe_dtw(pos).map(|d| (d.wld, Some(d.code()))),
            None => tb.probe_wld(pos).map(|w| (w, None)),
        };
        match got {
            Ok((w, code)) => {
                let category = code
                    .filter(|_| kind == Some(ValueKind::Dtc))
                    .map(|c| tb.count_profile().category(&pos.material(), c));
                self.add(pos.side_to_move(), w, code, category);
            }
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
        for (a, b) in self
            .cursed
            .iter_mut()
            .flatten()
            .zip(o.cursed.iter().flatten())
        {
            *a += b;
        }
    }

    /// What the header of a `kind` file of a slice of `n` positions a side states that these
    /// values contradict: the win/loss/draw counts of each side (they must add up to `n`), and
    /// the longest distance (DTW: the largest stored code less one; WLD, where not 0 for
    /// unknown: the longest true distance to the end of the game, when these values are the
    /// DTW file's, `read`; never a DTC file's: a WLD header states DTW's longest distance),
    /// and for DTC the cursed wins and blessed losses of each side.
    fn header_problems(
        &self,
        h: &dtb_probe::internal::format::Header,
        kind: ValueKind,
        read: Option<ValueKind>,
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
        if kind == ValueKind::Dtc && h.cursed != self.cursed {
            let c = |x: [[u64; 2]; 2]| {
                format!(
                    "{} and {} cursed wins, {} and {} blessed losses (white, black to move)",
                    x[0][0], x[1][0], x[0][1], x[1][1]
                )
            };
            out.push(format!(
                "header states {}; the values: {}",
                c(h.cursed),
                c(self.cursed)
            ));
        }
        let (stated, found) = match kind {
            ValueKind::Dtw => (h.max_plies, self.max_stored.saturating_sub(1)),
            // A DTC header states the longest true distance, capture positions' included
            // (a conversion above the limit may be a capture's alone).
            ValueKind::Dtc => (h.max_plies, self.max_true.saturating_sub(1)),
            ValueKind::Wld if h.max_plies != 0 && read == Some(ValueKind::Dtw) => {
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
