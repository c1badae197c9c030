//! The retrograde solver: exact distance-to-win (DTW, plies) for every position of one slice,
//! both sides to move, given the values of every slice its captures and promotions lead to.
//!
//! Builds use the grouped solver (`solve_slice_grouped`: one men placement at a time, see
//! there). The whole-slice solver (`solve_slice_reference`, compiled for tests only),
//! described here, is its independent check: a test oracle, not a fallback. Phases:
//! 1. **Initialise** (parallel over index chunks): every position's legal moves. Terminal
//!    positions, capture positions (all successors are in solved slices) and positions with no
//!    move that stays in the slice are resolved at once. The others count their in-slice
//!    successors and note the best exit (a crowning move into a solved slice).
//! 2. **Propagate** by levels of plies `L = 0, 1, 2, ...` (parallel over each level's list):
//!    every predecessor of a position lost in `L` plies is won in `L + 1`; every predecessor of
//!    a position won in `L` plies loses one successor, and when none is left it is lost in
//!    `max(L + 1, its slowest exit)` plies. Exits whose distance is reached are scheduled.
//! 3. Whatever is unresolved is a draw.
//!
//! Each cell is written through atomics; levels are separated by rayon joins, so the values
//! are the same for any number of threads.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU16, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Mutex;

use crossbeam_utils::CachePadded;

use dtb_probe::internal::count::CountProfile;
use dtb_probe::internal::format::WldCode;
use dtb_probe::internal::index::SliceIndex;
use dtb_probe::internal::material::Material;
use dtb_probe::internal::position::Position;
use dtb_probe::internal::rules::{BlockedOutcome, Color, Rules};
use dtb_probe::internal::value::{self, blocked_code, Code, Wld, DRAW};
use dtb_probe::movegen::{has_capture, legal_moves, single_jumps, Counting};

use crate::finished::Finished;
use crate::packed::code_of_bits;
use crate::scratch::Spill;
use crate::words::{try_filled, OutOfMemory, Words};
use rayon::prelude::*;

mod bitpar;
mod group;
#[cfg(test)]
mod reference;
mod resume;

pub use bitpar::{
    bitpar_memory, bitpar_move_list_fits, bitpar_slots, bitpar_supports, bitpar_work,
    solve_slice_bitpar_wld, solve_slice_bitpar_wld_in, BitparHow,
};
use group::{solve_group, solve_men_group, Scratch, SliceSolve, PROGRESS_BATCH};
#[cfg(test)]
pub(crate) use reference::solve_slice_reference;
use resume::{Checkpoint, Progress};

const AUX_CAPTURE: u16 = 1 << 15;
const AUX_WIN_EXIT: u16 = 1 << 14;
pub(crate) const AUX_DRAW_EXIT: u16 = 1 << 13;
const AUX_LEVEL: u16 = (1 << 13) - 1;

/// The result of solving one slice.
pub struct SolvedSlice {
    /// The slice.
    pub material: Material,
    /// Positions per side.
    pub size: u64,
    /// True DTW codes per side (index 0 White to move, 1 Black), capture positions included.
    pub values: [Vec<Code>; 2],
    /// Per side, one bit per position: the side to move must capture (stored value "don't
    /// care").
    pub capture: [Vec<u64>; 2],
    /// Per side: wins, losses, draws (true values, all positions).
    pub counts: [[u64; 3]; 2],
    /// Longest distance in plies.
    pub max_plies: u16,
    /// Number of propagation levels run.
    pub levels: usize,
}

impl SolvedSlice {
    /// The slice and the true codes of the sides it stores (White to move only for a
    /// colour-symmetric slice): what [`crate::store::Store::insert`] keeps.
    pub fn into_stored(self) -> (Material, [Option<Vec<Code>>; 2]) {
        let m = self.material;
        let [a, b] = self.values;
        (m, [Some(a), (m != m.mirror()).then_some(b)])
    }

    /// Whether position `i` of `side` is a capture position.
    #[inline]
    pub fn is_capture(&self, side: usize, i: u64) -> bool {
        self.capture[side][(i / 64) as usize] >> (i % 64) & 1 != 0
    }

    /// The codes to store in a DTW file for `side`: [`stored_codes`] of its values.
    pub fn stored_codes(&self, side: usize) -> Vec<u16> {
        stored_codes(&self.values[side], &self.capture[side])
    }
}

/// The result of solving one slice for a WLD-only build: outcomes, no distances.
pub struct SolvedWld {
    /// The slice.
    pub material: Material,
    /// Positions per side.
    pub size: u64,
    /// True outcomes per side (index 0 White to move, 1 Black), capture positions included,
    /// as WLD file codes (0 draw, 1 win, 2 loss) packed 2 bits a position, 32 a word
    /// (position `i` in bits `2 * (i % 32)` of word `i / 32`; the bits past the last
    /// position are 0).
    /// In memory, or in scratch files for a slice larger than the budget
    /// ([`solve_slice_grouped_wld_in`]).
    pub values: [Words; 2],
    /// Per side, one bit per position: the side to move must capture.
    pub capture: [Words; 2],
    /// Per side: wins, losses, draws (true values, all positions).
    pub counts: [[u64; 3]; 2],
    /// Number of propagation levels (or passes) run.
    pub levels: usize,
    /// Seconds spent on this slice by earlier runs that stopped part-way, whose finished
    /// rounds this run took over (0 for a slice solved in one run).
    pub earlier_seconds: f64,
    /// Rounds taken over from those runs (0 for a slice solved in one run).
    pub resumed_rounds: usize,
    /// Where the solver found the threat positions itself (format version 3,
    /// [`dtb_probe::internal::value::is_threat_dont_care`]): per side, how many, and
    /// `capture` marks them too (every "don't care" position of the file). `None`: `capture`
    /// marks capture positions alone.
    pub threats: Option<[u64; 2]>,
}

impl SolvedWld {
    /// A slice solved in one run, in memory, capture positions marked alone (no threat
    /// positions): what the kings-only solvers give.
    pub(crate) fn in_memory(
        (material, size): (Material, u64),
        values: [Vec<u64>; 2],
        capture: [Vec<u64>; 2],
        counts: [[u64; 3]; 2],
        levels: usize,
    ) -> SolvedWld {
        SolvedWld {
            material,
            size,
            values: values.map(Words::from),
            capture: capture.map(Words::from),
            counts,
            levels,
            earlier_seconds: 0.0,
            resumed_rounds: 0,
            threats: None,
        }
    }

    /// Panics unless `self` and `want` give every position of both sides the same outcome
    /// and capture flag, and the same counts (tests of one solver against another).
    #[cfg(test)]
    pub(crate) fn assert_agrees_with(&self, want: &SolvedWld) {
        let m = want.material;
        for side in 0..2 {
            for i in 0..want.size {
                assert_eq!(self.code(side, i), want.code(side, i), "{m} {side} {i}");
                assert_eq!(self.is_capture(side, i), want.is_capture(side, i), "{m}");
            }
        }
        assert_eq!(self.counts, want.counts, "{m}");
    }

    /// The WLD file code of position `i` of `side`.
    #[inline]
    pub fn code(&self, side: usize, i: u64) -> WldCode {
        code_of_bits(self.values[side][(i / 32) as usize] >> (2 * (i % 32)))
    }

    /// Whether position `i` of `side` is a capture position.
    #[inline]
    pub fn is_capture(&self, side: usize, i: u64) -> bool {
        self.capture[side][(i / 64) as usize] >> (i % 64) & 1 != 0
    }
}

/// The codes a DTW file stores for one side: the true `values`, with each capture position's
/// (a bit set in `capture`) "don't care" replaced by the value stored just before it (which
/// keeps runs long for compression).
pub fn stored_codes(values: &[Code], capture: &[u64]) -> Vec<u16> {
    let mut out = Vec::with_capacity(values.len());
    let mut prev = DRAW;
    for (i, &v) in values.iter().enumerate() {
        let v = if capture[i / 64] >> (i % 64) & 1 != 0 {
            prev
        } else {
            v
        };
        out.push(v.bits());
        prev = v;
    }
    out
}

/// Why a slice could not be solved.
#[derive(Debug, thiserror::Error)]
pub enum SolveError<E: std::error::Error + 'static> {
    #[error("looking up a solved slice failed")]
    Lookup(#[source] E),
    #[error("distance overflow in slice {0}: more than 8191 plies")]
    TooDeep(Material),
    /// A men group has more positions than the grouped solver numbers in 32 bits.
    #[error("slice {0} has men groups of more than 2^31 king placements, too large for the solver (a slice of kings only: --wld-only solves it in bits)")]
    GroupTooLarge(Material),
    /// A buffer of the slice could not be allocated.
    #[error(
        "{1} (the memory this process may use is less than its forecast: a smaller --memory, \
         or a higher limit)"
    )]
    OutOfMemory(Material, OutOfMemory),
    /// A scratch file for the slice's own values could not be made.
    #[error("scratch file {}: {message}", .path.display())]
    Scratch { path: PathBuf, message: String },
}

/// What the first phase learns of one position from its legal moves.
pub(crate) enum Start {
    /// Its value is known: terminal, a capture position (every successor is in a solved
    /// slice), or no move stays in the part being solved.
    Known { code: Code, capture: bool },
    /// It waits for `inside` successors in the part being solved; `aux` holds its exits.
    Open {
        inside: u8,
        aux: u16,
        win_exit: Option<Code>,
    },
}

/// The successors seen so far of one position: how many stay in the part being solved, and
/// the best win, any draw and the slowest loss among those that leave it.
#[derive(Default)]
struct Exits {
    inside: u8,
    win_exit: Option<Code>,
    draw_exit: bool,
    /// [`DRAW`] while there is none.
    loss_exit: Code,
}

impl Exits {
    /// A successor whose value (from the successor's side to move) is `child`.
    #[inline]
    fn add(&mut self, child: Code) {
        let v = child.parent();
        // By distance, not by code: under `blocked = majority` a code may carry the flag.
        match v.wld() {
            Wld::Win => {
                if self.win_exit.is_none_or(|w| v.goodness() > w.goodness()) {
                    self.win_exit = Some(v);
                }
            }
            Wld::Draw => self.draw_exit = true,
            Wld::Loss => {
                if self.loss_exit == DRAW || v.goodness() > self.loss_exit.goodness() {
                    self.loss_exit = v;
                }
            }
        }
    }

    /// What the first phase knows once every successor was added (at least one).
    #[inline]
    fn finish(self, capture: bool) -> Start {
        if self.inside == 0 {
            let code = self
                .win_exit
                .unwrap_or(if self.draw_exit { DRAW } else { self.loss_exit });
            return Start::Known { code, capture };
        }
        let mut aux = self.loss_exit.plies().unwrap_or(0).min(AUX_LEVEL);
        if self.draw_exit {
            aux |= AUX_DRAW_EXIT;
        }
        if self.win_exit.is_some() {
            aux |= AUX_WIN_EXIT;
        }
        Start::Open {
            inside: self.inside,
            aux,
            win_exit: self.win_exit,
        }
    }
}

/// Whether a level of the propagation may hold wins and losses alike (`blocked = majority`:
/// a blocked side may win in 0 plies), so that each position's outcome is read from its
/// code; otherwise a level's outcome is its parity.
#[inline]
fn mixed_levels(rules: &Rules) -> bool {
    rules.blocked == BlockedOutcome::Majority
}

/// The code of a position resolved at `level` plies: a win if `win`, else a loss. For the
/// presets (no flagged codes) this is `level + 1`.
#[inline]
fn code_at(level: usize, win: bool) -> Code {
    if win {
        Code::win(level as u16)
    } else {
        Code::loss(level as u16)
    }
}

/// Classify `pos` (with its legal `moves`). `child` gives a successor's value code, or
/// `None` when the successor lies in the part being solved now.
pub(crate) fn classify<E>(
    rules: &Rules,
    pos: &Position,
    moves: &[dtb_probe::movegen::Move],
    mut child: impl FnMut(&Position) -> Result<Option<Code>, E>,
) -> Result<Start, E> {
    if moves.is_empty() {
        return Ok(Start::Known {
            code: blocked_code(rules, pos),
            capture: false,
        });
    }
    let capture = value::is_capture_position(rules, moves);
    let mut exits = Exits::default();
    for m in moves {
        // Captures always leave the slice, so a capture position has no `None` child.
        match child(&m.apply_unchecked(pos))? {
            Some(c) => exits.add(c),
            None => exits.inside += 1,
        }
    }
    Ok(exits.finish(capture))
}

/// Count final value `v` as a win, loss or draw (in that order in `counts`) and raise
/// `max_plies` to its distance.
#[inline]
fn tally(counts: &mut [u64; 3], max_plies: &mut u16, v: Code) {
    if let Some(p) = v.plies() {
        *max_plies = (*max_plies).max(p);
    }
    counts[match v.wld() {
        Wld::Win => 0,
        Wld::Loss => 1,
        Wld::Draw => 2,
    }] += 1;
}

/// Solve slice `material` (both sides to move) under `rules`, looking up other slices in
/// `src`. `progress` is called with positions done (at most `2 * 2 * size` in all).
///
/// Slices are solved one men placement at a time (`solve_slice_grouped`); a slice of kings
/// only is one such group, whose positions are classified, and whose levels are propagated,
/// on every thread. The whole-slice reference solver gives the same values (tested).
///
/// # Errors
/// [`SolveError`]: a look-up of another slice failed, or a distance does not fit.
pub fn solve_slice<S: Finished>(
    rules: &Rules,
    src: &S,
    material: Material,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SolvedSlice, SolveError<S::Error>> {
    solve_slice_grouped(rules, src, material, progress)
}

/// Peak heap bytes [`solve_slice`] is expected to use for `material` on `threads` worker
/// threads, its result included (the values and capture bits it returns), the store it reads
/// not included. An upper estimate from the solver's own structures, checked against the
/// measured peak in `tests/tests/solve_memory.rs`:
/// - the result: a 2-byte code and a capture bit per position, both sides;
/// - the men groups by potential: a potential (2 bytes) and a group number (8) per group;
/// - per worker, the buffers of the largest group it solves (kept from group to group): per
///   kings placement, its two cells (6 bytes each) and the placement (16), and the level
///   lists: a frontier and a candidate entry of 4 bytes per cell at most (16), allowed
///   twice for a group alone in its round (the lists of its parallel chunks before they
///   are merged), four times for the groups that share a worker (each level's list keeps
///   the largest capacity any group gave it; English 0410 measured 2.9 times);
/// - 256 KiB for the rest, and 64 KiB a thread (look-up caches, move lists, the thread
///   pool's bookkeeping).
///
/// A slice whose groups are too large to number ([`group_too_large`]) is not solved here
/// at all; its figure is what the grouped solver would need.
pub fn solve_memory(rules: &Rules, material: Material, threads: usize) -> u64 {
    let ix = SliceIndex::new(material, rules.geometry());
    let n = ix.size();
    let k = ix.kings_per_group();
    let groups = ix.men_groups();
    let result = 2 * (2 * n + n.div_ceil(64) * 8);
    let fixed = (256 << 10) + (64 << 10) * threads.max(1) as u64;
    let workers = groups.min(threads.max(1) as u64);
    let lists = if groups == 1 { 2 } else { 4 } * (2 * 2 * 4);
    let per_group = k * (2 * 6 + 16 + lists);
    fixed + result + groups * (2 + 8) + workers * per_group
}

/// Peak heap bytes [`solve_slice_grouped_wld`] is expected to use: [`solve_memory`] with its
/// result as outcomes and capture bits (3 bits a position a side) instead of DTW codes.
/// With `serial` ([`solve_slice_grouped_wld`]), one worker's group buffers, with the level
/// lists of a group alone in its round.
pub fn solve_memory_wld(rules: &Rules, material: Material, threads: usize, serial: bool) -> u64 {
    let ix = SliceIndex::new(material, rules.geometry());
    let n = ix.size();
    let dtw_result = 2 * (2 * n + n.div_ceil(64) * 8);
    let wld_result = 2 * (n.div_ceil(32) * 8 + n.div_ceil(64) * 8);
    let parallel = solve_memory(rules, material, threads) - dtw_result + wld_result;
    if !serial {
        return parallel;
    }
    let k = ix.kings_per_group();
    let workers = ix.men_groups().min(threads.max(1) as u64);
    let shared = if ix.men_groups() == 1 { 2 } else { 4 } * (2 * 2 * 4);
    parallel - workers * k * (2 * 6 + 16 + shared) + k * (2 * 6 + 16 + 2 * (2 * 2 * 4))
}

/// Whether slice `material`'s men groups are too large for the grouped solvers, which number
/// a group's positions (both sides) in 32 bits: only 10x10 slices of 8 pieces or more come
/// near. Such a slice is refused before a build starts ([`SolveError::GroupTooLarge`]),
/// unless it is of kings only in a WLD-only build, which the bit solver takes
/// ([`crate::bitbase`]).
pub fn group_too_large(rules: &Rules, material: Material) -> bool {
    2 * SliceIndex::new(material, rules.geometry()).kings_per_group() > u64::from(u32::MAX)
}

/// What one men group (or several, merged) adds to the slice's figures (its values are
/// written in place).
#[derive(Default)]
struct GroupResult {
    counts: [[u64; 3]; 2],
    max_plies: u16,
    levels: usize,
    /// Progress units the group reported itself (a parallel init pass).
    reported: u64,
}

impl GroupResult {
    fn merge(mut self, other: GroupResult) -> GroupResult {
        for (acc, add) in self
            .counts
            .iter_mut()
            .flatten()
            .zip(other.counts.iter().flatten())
        {
            *acc += add;
        }
        self.max_plies = self.max_plies.max(other.max_plies);
        self.levels = self.levels.max(other.levels);
        self.reported += other.reported;
        self
    }
}

/// Potential of a men placement: rows advanced, summed over every man. A quiet man move raises
/// it by one, so a group only reaches groups of higher potential.
fn potential(g: &dtb_probe::internal::board::Geometry, wmen: u64, bmen: u64) -> u32 {
    let half = g.half() as u32;
    let last = g.size as u32 - 1;
    let mut p = 0;
    let mut w = wmen;
    while w != 0 {
        p += last - w.trailing_zeros() / half;
        w &= w - 1;
    }
    let mut b = bmen;
    while b != 0 {
        p += b.trailing_zeros() / half;
        b &= b - 1;
    }
    p
}

/// How many men placements of slice `m` have each [`potential`] (index: the potential), as
/// [`groups_by_potential`] finds them, counted row by row without decoding a placement:
/// what a memory estimate needs before any solving (white men stand off the top row, black
/// men off the bottom row, never two on a square).
pub(crate) fn potential_sizes(g: &dtb_probe::internal::board::Geometry, m: Material) -> Vec<u64> {
    let half = u32::from(g.half());
    let last = u32::from(g.size) - 1;
    let (wm, bm) = (u32::from(m.white_men), u32::from(m.black_men));
    let top = (last * (wm + bm)) as usize;
    let choose = |n: u32, k: u32| dtb_probe::internal::index::BINOM[n as usize][k as usize];
    // ways[w][b][p]: placements of w white and b black men on the rows seen so far.
    let mut ways = vec![vec![vec![0u64; top + 1]; bm as usize + 1]; wm as usize + 1];
    ways[0][0][0] = 1;
    for row in 0..=last {
        let mut next = vec![vec![vec![0u64; top + 1]; bm as usize + 1]; wm as usize + 1];
        let white_ok = row != 0;
        let black_ok = row != last;
        for w in 0..=wm {
            for b in 0..=bm {
                for (p, &n) in ways[w as usize][b as usize].iter().enumerate() {
                    if n == 0 {
                        continue;
                    }
                    for i in 0..=if white_ok { half.min(wm - w) } else { 0 } {
                        for j in 0..=if black_ok { (half - i).min(bm - b) } else { 0 } {
                            let q = p + (i * (last - row) + j * row) as usize;
                            next[(w + i) as usize][(b + j) as usize][q] +=
                                n * choose(half, i) * choose(half - i, j);
                        }
                    }
                }
            }
        }
        ways = next;
    }
    let mut sizes = std::mem::take(&mut ways[wm as usize][bm as usize]);
    while sizes.len() > 1 && sizes.last() == Some(&0) {
        sizes.pop();
    }
    sizes
}

/// The grouped solver: a slice's positions fall into men groups (one men placement, every
/// king placement: a contiguous index range of [`SliceIndex::kings_per_group`] positions a
/// side). Only king moves stay in a group; man moves lead to groups of higher
/// `potential`, already solved. So groups are solved from the highest potential down, the
/// groups of one potential in parallel, each single-threaded in small arrays that stay in
/// cache, with man moves looked up as exits. A large group alone in its round (the one group
/// of a slice of kings only) classifies its positions and propagates each large level on
/// every thread, its cells claimed by atomic operations.
///
/// # Errors
/// As [`solve_slice`].
fn solve_slice_grouped<S: Finished>(
    rules: &Rules,
    src: &S,
    material: Material,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SolvedSlice, SolveError<S::Error>> {
    solve_distances(rules, src, None, material, progress)
}

/// Solve slice `material` for DTC values under `count` (issue 35; the module `count` of
/// dtb-probe says what they are): the grouped solver of distances, where every move that
/// leaves a men group (a capture, a crowning, a man move) is an exit whose value is
/// [`CountProfile::convert`]ed, and `src` holds the DTC values of the slices it reads.
/// Inside a group only king moves are played, which never reset the counter, so the
/// distances the solver propagates there add up as the counter does. The outcomes are the
/// game-theoretic ones (a cursed win is a win above the limit).
///
/// # Errors
/// As [`solve_slice`].
pub fn solve_slice_dtc<S: Finished>(
    rules: &Rules,
    count: &CountProfile,
    src: &S,
    material: Material,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SolvedSlice, SolveError<S::Error>> {
    let src = Converted {
        src,
        count,
        before: material,
    };
    solve_distances(rules, &src, Some(count), material, progress)
}

/// Finished slices' DTC values as a move from slice `before` into them stands for
/// ([`CountProfile::convert`]): what [`solve_slice_dtc`] reads through. Only captures and
/// crownings reach other slices, so the piece moved is taken for a man (whether it was
/// does not change whether a capture resets).
struct Converted<'a, S> {
    src: &'a S,
    count: &'a CountProfile,
    before: Material,
}

impl<S: Finished> Finished for Converted<'_, S> {
    type Cache = S::Cache;
    type Error = S::Error;

    #[inline]
    fn value(&self, pos: &Position, cache: &mut S::Cache) -> Result<Code, S::Error> {
        let child = self.src.value(pos, cache)?;
        Ok(self
            .count
            .convert(&self.before, &pos.material(), true, child))
    }
}

/// [`solve_slice_grouped`], under a count profile for DTC values.
fn solve_distances<S: Finished>(
    rules: &Rules,
    src: &S,
    count: Option<&CountProfile>,
    material: Material,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SolvedSlice, SolveError<S::Error>> {
    let ix = SliceIndex::new(material, rules.geometry());
    let n = ix.size();
    if group_too_large(rules, material) {
        return Err(SolveError::GroupTooLarge(material));
    }
    let oom = |e| SolveError::OutOfMemory(material, e);
    let results = DtwResults([atomic_codes(n).map_err(oom)?, atomic_codes(n).map_err(oom)?]);
    let mut capture = [
        Words::zeroed(n.div_ceil(64)).map_err(oom)?,
        Words::zeroed(n.div_ceil(64)).map_err(oom)?,
    ];
    let [c0, c1] = &mut capture;
    let slice = Shared {
        values: results,
        capture: [c0.atomics(), c1.atomics()],
    };
    let how = How {
        count,
        ..How::default()
    };
    let (results, figures) = grouped(rules, src, material, slice, how, progress)?;
    let capture = capture.map(|c| c.to_vec());
    // In place: a vector of atomics collects into plain values without a copy.
    let values = results.0.map(|v| {
        v.into_iter()
            .map(|c| Code::from_bits(c.into_inner()))
            .collect()
    });
    Ok(SolvedSlice {
        material,
        size: n,
        values,
        capture,
        counts: figures.counts,
        max_plies: figures.max_plies,
        levels: figures.levels,
    })
}

/// The grouped solver for a WLD-only build: as `solve_slice_grouped`, but the slice's
/// values are kept as outcomes, two bits a position (0.75 bytes a position with the capture
/// bits, both sides, instead of 4.25), and a man move into a group already solved is looked
/// up as an outcome with a nominal distance, as the other slices of a WLD-only build are.
/// Outcomes do not depend on the distances of exits, so the values' outcomes are those of
/// `solve_slice_grouped` (tested); distances are not computed. With `serial`, the groups
/// of a round are solved one at a time, each on every thread (as a group alone in its round
/// is): one set of group buffers instead of one a thread, for a tight budget.
///
/// # Errors
/// As [`solve_slice`]; a slice whose men groups are too large to number in 32 bits is
/// [`SolveError::GroupTooLarge`] (kings only: [`crate::bitbase::solve_kings_wld`] takes it).
pub fn solve_slice_grouped_wld<S: Finished>(
    rules: &Rules,
    src: &S,
    material: Material,
    serial: bool,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SolvedWld, SolveError<S::Error>> {
    solve_slice_grouped_wld_in(rules, src, material, serial, None, progress)
}

/// Where [`solve_slice_grouped_wld_in`] keeps the slice's outcomes and capture flags: scratch
/// files in `dir`, named after the slice, whose pages `spill` watches; with a record of
/// the rounds they hold final, so that a stopped run's files are taken over.
pub struct MappedResults<'a> {
    pub dir: &'a Path,
    pub spill: &'a Spill,
    /// The least time between two records of the slice's finished rounds (see `resume`).
    pub every: std::time::Duration,
}

impl MappedResults<'_> {
    /// The scratch file of one of a slice's arrays (`what`: `values` or `capture`).
    pub fn path(&self, material: Material, what: &str, side: usize) -> PathBuf {
        self.dir.join(format!("solving-{material}-{what}-{side}"))
    }

    /// The record of the rounds of slice `material` that its scratch files hold final
    /// (see `resume`).
    pub fn record(&self, material: Material) -> PathBuf {
        self.dir.join(format!("solving-{material}.json"))
    }

    /// Whether `name` is one of the scratch files of slice `material` being solved (its
    /// arrays, its record).
    pub fn is_solving_file(name: &str, material: Material) -> bool {
        name.strip_prefix(&format!("solving-{material}"))
            .is_some_and(|rest| rest.starts_with('-') || rest == ".json")
    }
}

/// [`solve_slice_grouped_wld`] with the slice's outcomes and capture flags (0.75 bytes a
/// position, both sides) in scratch files mapped from disk where `mapped` says, so that a
/// slice larger than the memory budget solves within it: the groups of a round read only
/// groups finished in earlier rounds, whose pages the kernel may have written back.
///
/// # Errors
/// As [`solve_slice_grouped_wld`]; [`SolveError::Scratch`] if a scratch file cannot be made.
pub fn solve_slice_grouped_wld_in<S: Finished>(
    rules: &Rules,
    src: &S,
    material: Material,
    serial: bool,
    mapped: Option<&MappedResults>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SolvedWld, SolveError<S::Error>> {
    let ix = SliceIndex::new(material, rules.geometry());
    let n = ix.size();
    if group_too_large(rules, material) {
        return Err(SolveError::GroupTooLarge(material));
    }
    let len = |what: &str| {
        if what == "values" {
            n.div_ceil(32)
        } else {
            n.div_ceil(64)
        }
    };
    let arrays = [("values", 0), ("values", 1), ("capture", 0), ("capture", 1)]
        .map(|(what, side)| (what, side, len(what)));
    let (words, mut checkpoint) = wld_arrays(
        material,
        Checkpoint::identity(rules, material, n),
        &arrays,
        mapped,
    )?;
    let [mut v0, mut v1, mut c0, mut c1]: [Words; 4] = words
        .try_into()
        .unwrap_or_else(|_| unreachable!("four arrays"));
    let slice = Shared {
        values: WldResults([v0.atomics(), v1.atomics()]),
        capture: [c0.atomics(), c1.atomics()],
    };
    let (_, figures) = grouped(
        rules,
        src,
        material,
        slice,
        How {
            serial,
            checkpoint: checkpoint.as_mut(),
            count: None,
        },
        progress,
    )?;
    if let Some(c) = checkpoint {
        c.finish();
    }
    let (values, capture) = ([v0, v1], [c0, c1]);
    Ok(SolvedWld {
        material,
        size: n,
        values,
        capture,
        counts: figures.counts,
        levels: figures.levels,
        earlier_seconds: figures.earlier_seconds,
        resumed_rounds: figures.resumed_rounds,
        threats: None,
    })
}

/// The arrays of a WLD solve of `material`, each named `(what, side, words)` in `arrays`:
/// zeroed on the heap; or with `mapped`, in scratch files, mapped again as a stopped run left
/// them if its record says `identity` and every file is whole (else new and zero); with the
/// checkpoints over the files.
///
/// # Errors
/// [`SolveError::OutOfMemory`], [`SolveError::Scratch`].
fn wld_arrays<E: std::error::Error + 'static>(
    material: Material,
    identity: String,
    arrays: &[(&str, usize, u64)],
    mapped: Option<&MappedResults>,
) -> Result<(Vec<Words>, Option<Checkpoint>), SolveError<E>> {
    let scratch = |path: PathBuf| {
        move |e: std::io::Error| SolveError::Scratch {
            message: dtb_probe::report(&e),
            path,
        }
    };
    // A stopped run's files are mapped again if its record matches and all are whole.
    let mut reopened = Vec::new();
    if let Some(m) = mapped {
        if Checkpoint::resumable(&identity, &m.record(material)) {
            for &(what, side, len) in arrays {
                let path = m.path(material, what, side);
                match Words::reopen_in_file(len, &path, m.spill) {
                    Ok(Some(w)) => reopened.push(w),
                    Ok(None) => break,
                    Err(e) => return Err(scratch(path)(e)),
                }
            }
        }
    }
    let resume = reopened.len() == arrays.len();
    if !resume {
        // Some were whole, not all: they go (dropping them removes their files) before the
        // fresh ones are made under the same names.
        reopened.clear();
    }
    let mut words = Vec::with_capacity(arrays.len());
    for (k, &(what, side, len)) in arrays.iter().enumerate() {
        words.push(match mapped {
            None => Words::zeroed(len).map_err(|e| SolveError::OutOfMemory(material, e))?,
            Some(_) if resume => std::mem::take(&mut reopened[k]),
            Some(m) => {
                let path = m.path(material, what, side);
                Words::zeroed_in_file(len, &path, m.spill).map_err(scratch(path))?
            }
        });
    }
    let checkpoint = mapped.map(|m| {
        let files = words.iter().filter_map(Words::file).collect();
        Checkpoint::new(identity, m.record(material), files, resume, m.every)
    });
    Ok((words, checkpoint))
}

/// Runs `f` with this worker thread's buffers from `pool` (and `true`), or with fresh ones
/// (and `false`) if its slot is taken: never waits for a slot, since a thread that holds its
/// own already (a value source that runs rayon work inside a look-up) would wait forever.
fn with_buffers<C: Default, T>(
    pool: &[CachePadded<Mutex<Scratch<C>>>],
    f: impl FnOnce(&mut Scratch<C>, bool) -> T,
) -> T {
    let slot = rayon::current_thread_index().unwrap_or(0) % pool.len();
    match pool[slot].try_lock() {
        Ok(mut held) => f(&mut held, true),
        Err(_) => f(&mut Scratch::default(), false),
    }
}

/// How the grouped solver runs a slice.
#[derive(Default)]
struct How<'a> {
    /// One group at a time, each on every thread: one set of buffers instead of one a
    /// thread, for a budget that would not hold them.
    serial: bool,
    /// Take over the rounds a stopped run finished, and record finished rounds as they go.
    checkpoint: Option<&'a mut Checkpoint>,
    /// DTC values under this profile (the source already converts other slices' values).
    count: Option<&'a CountProfile>,
}

/// The men groups of slice `ix` by potential (rounds are solved from the highest potential
/// down), and how many each potential has.
fn groups_by_potential(rules: &Rules, ix: &SliceIndex) -> (Vec<usize>, Vec<Vec<u64>>) {
    let geo = rules.geometry();
    // Decoding every men placement is a large share of a men-only slice (millions of
    // groups of two positions): done on every thread, then gathered in order.
    let potentials: Vec<u16> = (0..ix.men_groups())
        .into_par_iter()
        .map(|grp| {
            let (w, b) = ix.men_of(grp);
            potential(geo, w, b) as u16
        })
        .collect();
    // Each round's list allocated to its exact length: 8 bytes a group (a men-only slice
    // has as many groups as positions a side).
    let mut sizes: Vec<usize> = Vec::new();
    for &p in &potentials {
        let p = p as usize;
        if sizes.len() <= p {
            sizes.resize(p + 1, 0);
        }
        sizes[p] += 1;
    }
    let mut by_potential: Vec<Vec<u64>> = sizes.iter().map(|&c| Vec::with_capacity(c)).collect();
    for (grp, &p) in (0u64..).zip(&potentials) {
        by_potential[p as usize].push(grp);
    }
    (sizes, by_potential)
}

/// Where a stopped run left the slice, if it did; its files hold another run's values if
/// they were made for other rounds: then they are cleared and the solve starts afresh.
fn resume_point<R: Results>(
    checkpoint: Option<&Checkpoint>,
    sizes: &[usize],
    slice: &Shared<R>,
) -> Progress {
    start_point(checkpoint, sizes, || {
        slice.values.clear();
        slice
            .capture
            .iter()
            .flat_map(|c| c.iter())
            .for_each(|w| w.store(0, Relaxed));
    })
}

/// Where a solve in rounds of `sizes` groups starts: what a matching record of `checkpoint`
/// says; nothing done, after `clear` wiped the files, if they hold another run's rounds;
/// nothing done without checkpoints.
fn start_point(checkpoint: Option<&Checkpoint>, sizes: &[usize], clear: impl FnOnce()) -> Progress {
    match checkpoint {
        Some(c) if c.found_other(sizes) => {
            clear();
            Progress::default()
        }
        Some(c) => c.start(sizes).unwrap_or_default(),
        None => Progress::default(),
    }
}

/// After a round: `done` recorded by `checkpoint` (when it is due), if the solve keeps
/// checkpoints.
fn record_round<E: std::error::Error + 'static>(
    checkpoint: Option<&mut Checkpoint>,
    sizes: &[usize],
    done: &Progress,
) -> Result<(), SolveError<E>> {
    match checkpoint {
        Some(c) => c
            .after_round(sizes, done)
            .map_err(|(path, e)| SolveError::Scratch {
                path,
                message: dtb_probe::report(&e),
            }),
        None => Ok(()),
    }
}

/// What [`grouped`] returns: the values, the figures.
type Grouped<R> = (R, Figures);

/// The figures of a slice solved by [`grouped`].
struct Figures {
    counts: [[u64; 3]; 2],
    max_plies: u16,
    levels: usize,
    /// Seconds of earlier runs whose rounds were taken over ([`Checkpoint`]).
    earlier_seconds: f64,
    /// The rounds taken over.
    resumed_rounds: usize,
}

/// The grouped solver's work (see [`solve_slice_grouped`]), the values and capture bits
/// written into `slice`; returns the values with the slice's figures. With a `checkpoint`,
/// the rounds a stopped run finished are taken over, and finished rounds are recorded as
/// they go.
fn grouped<S: Finished, R: Results>(
    rules: &Rules,
    src: &S,
    material: Material,
    slice: Shared<R>,
    how: How<'_>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Grouped<R>, SolveError<S::Error>> {
    let How {
        serial,
        mut checkpoint,
        count,
    } = how;
    let ix = SliceIndex::new(material, rules.geometry());
    let n = ix.size();
    let k = ix.kings_per_group();
    let (sizes, by_potential) = groups_by_potential(rules, &ix);
    let steps = Steps::new(rules);
    // Each group writes its own index range; groups of one potential run in parallel and
    // read only groups of higher potential, finished in an earlier round (the rounds are
    // separated by rayon's joins). Relaxed atomics are plain loads and stores on x86-64.
    debug_assert!(slice
        .capture
        .iter()
        .all(|c| c.len() as u64 == n.div_ceil(64)));
    // One set of buffers per worker thread, kept from group to group (a new set per rayon
    // job would allocate and fault in every large group's arrays again).
    let cx = SliceSolve {
        rules,
        src,
        material,
        ix: &ix,
        steps: &steps,
        slice: &slice,
        count,
    };
    // Each set on cache lines of its own: the workers write their set's lengths and
    // counters at every group, and a men-only slice's groups hold two positions each.
    let pool: Vec<CachePadded<Mutex<Scratch<S::Cache>>>> = (0..rayon::current_num_threads().max(1))
        .map(|_| CachePadded::new(Mutex::new(Scratch::default())))
        .collect();
    let start = resume_point(checkpoint.as_deref(), &sizes, &slice);
    let men_only = material.white_kings + material.black_kings == 0;
    // The slice's figures so far: the rounds taken over, then each round merged in.
    let mut total = GroupResult {
        counts: start.counts,
        levels: start.levels,
        ..GroupResult::default()
    };
    for (round_index, level_groups) in by_potential.iter().rev().enumerate() {
        if round_index < start.rounds_done {
            progress(4 * k * level_groups.len() as u64);
            continue;
        }
        // A group alone in its round (the one group of a slice of kings only) classifies
        // its positions on every thread.
        let alone = serial || level_groups.len() == 1;
        let one = |&grp: &u64| {
            with_buffers(&pool, |sc, pooled| {
                let r = if men_only {
                    solve_men_group(&cx, grp, sc)
                } else {
                    solve_group(&cx, grp, sc, alone.then_some(progress))
                };
                // Progress in batches: a men-only slice has millions of groups of a few
                // positions, and each report is an atomic add and a clock read. A group
                // alone in its round has reported its init pass already.
                sc.unreported += 4 * k - r.as_ref().map_or(0, |r| r.reported);
                if sc.unreported >= PROGRESS_BATCH || !pooled {
                    progress(std::mem::take(&mut sc.unreported));
                }
                r
            })
        };
        // Reduced as they come, not collected: a round of a men-only slice has millions of
        // groups.
        let round = if serial {
            // One group at a time, each on every thread: one set of buffers instead of one
            // a thread, for a budget that would not hold them.
            level_groups
                .iter()
                .try_fold(GroupResult::default(), |a, g| one(g).map(|b| a.merge(b)))?
        } else {
            level_groups
                .par_iter()
                .map(one)
                .try_reduce(GroupResult::default, |a, b| Ok(a.merge(b)))?
        };
        total = total.merge(round);
        let done = Progress {
            rounds_done: round_index + 1,
            counts: total.counts,
            levels: total.levels,
            seconds: start.seconds,
            threats: [0, 0],
        };
        record_round(checkpoint.as_deref_mut(), &sizes, &done)?;
    }
    for sc in &pool {
        let mut sc = sc.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        progress(std::mem::take(&mut sc.unreported));
    }
    let Shared { values, .. } = slice;
    Ok((
        values,
        Figures {
            counts: total.counts,
            max_plies: total.max_plies,
            levels: total.levels,
            earlier_seconds: start.seconds,
            resumed_rounds: start.rounds_done,
        },
    ))
}

/// The values and capture flags of the slice being solved, shared by the group workers.
struct Shared<'a, R> {
    values: R,
    capture: [&'a [AtomicU64]; 2],
}

/// Where the grouped solver keeps the final values of the slice being solved: each group
/// writes its own index range once, and reads groups finished in earlier rounds.
trait Results: Sync {
    /// The value code of position `i` of `side` (0 White to move, 1 Black).
    fn get(&self, side: usize, i: usize) -> Code;
    /// Write the codes of positions `base..base + len` of `side` (`code(j)` for
    /// `base + j`), a range no other group writes.
    fn set_run(&self, side: usize, base: usize, len: usize, code: impl Fn(usize) -> Code);
    /// Every position back to its starting value (nothing written yet).
    fn clear(&self);
}

/// DTW codes, 2 bytes a position.
struct DtwResults([Vec<AtomicU16>; 2]);

impl Results for DtwResults {
    #[inline]
    fn get(&self, side: usize, i: usize) -> Code {
        Code::from_bits(self.0[side][i].load(Relaxed))
    }

    fn set_run(&self, side: usize, base: usize, len: usize, code: impl Fn(usize) -> Code) {
        for (j, cell) in self.0[side][base..base + len].iter().enumerate() {
            cell.store(code(j).bits(), Relaxed);
        }
    }

    fn clear(&self) {
        self.0
            .iter()
            .flatten()
            .for_each(|c| c.store(DRAW.bits(), Relaxed));
    }
}

/// Outcomes as WLD file codes ([`WldCode`]), 2 bits a position, 32
/// a word: the layout of a WLD block's bytes, so a block of the file is a run of words.
struct WldResults<'a>([&'a [AtomicU64]; 2]);

impl Results for WldResults<'_> {
    #[inline]
    fn get(&self, side: usize, i: usize) -> Code {
        code_of_bits(self.0[side][i / 32].load(Relaxed) >> (2 * (i % 32))).code()
    }

    fn set_run(&self, side: usize, base: usize, len: usize, code: impl Fn(usize) -> Code) {
        // Words at either end may be shared with the next group: or-ed in (all start at 0,
        // a draw, and each position is written once).
        let words = self.0[side];
        let mut word = 0u64;
        let mut at = base / 32;
        for j in 0..len {
            let i = base + j;
            if i / 32 != at {
                if word != 0 {
                    words[at].fetch_or(word, Relaxed);
                }
                word = 0;
                at = i / 32;
            }
            word |= u64::from(WldCode::of(code(j)).bits()) << (2 * (i % 32));
        }
        if word != 0 {
            words[at].fetch_or(word, Relaxed);
        }
    }

    fn clear(&self) {
        self.0
            .iter()
            .flat_map(|w| w.iter())
            .for_each(|w| w.store(0, Relaxed));
    }
}

fn atomic_codes(n: u64) -> Result<Vec<AtomicU16>, OutOfMemory> {
    try_filled(n, || AtomicU16::new(DRAW.bits()))
}

/// Quiet-move targets by square, for the solver's fast path (positions without a capture).
pub(crate) struct Steps {
    /// `fwd[c][sq]`: the squares a man of colour `c` on `sq` moves to (diagonally forward).
    fwd: [[u64; 64]; 2],
    /// `adj[sq]`: the four diagonal neighbours of `sq`.
    adj: [u64; 64],
    flying: bool,
    g: &'static dtb_probe::internal::board::Geometry,
}

impl Steps {
    pub(crate) fn new(rules: &Rules) -> Steps {
        use dtb_probe::internal::board::{Dir, NONE};
        let g = rules.geometry();
        let mut fwd = [[0u64; 64]; 2];
        let mut adj = [0u64; 64];
        for sq in 0..g.squares {
            for d in Dir::ALL {
                let t = g.step(sq, d);
                if t == NONE {
                    continue;
                }
                adj[sq as usize] |= 1 << t;
                match d {
                    Dir::UpLeft | Dir::UpRight => fwd[0][sq as usize] |= 1 << t,
                    Dir::DownLeft | Dir::DownRight => fwd[1][sq as usize] |= 1 << t,
                }
            }
        }
        Steps {
            fwd,
            adj,
            flying: rules.kings == dtb_probe::internal::rules::KingRange::Flying,
            g,
        }
    }

    /// The empty squares a king on `sq` reaches by a quiet move, `occ` the occupied squares.
    /// The relation is symmetric: they are also the squares a king on `sq` came from.
    #[inline]
    pub(crate) fn king_targets(&self, sq: u8, occ: u64) -> u64 {
        if !self.flying {
            return self.adj[sq as usize] & !occ;
        }
        use dtb_probe::internal::board::Dir;
        Dir::ALL
            .iter()
            .fold(0, |out, &d| out | self.g.slide(sq, d, occ).0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    /// Solve every English slice up to `n` pieces in memory; totals for White to move over
    /// all materials (canonical slices give their mirror's White-to-move through Black).
    fn english_totals(n: u32) -> [u64; 3] {
        let rules = Rules::ENGLISH;
        let mut store = Store::new(rules);
        let mut t = [0u64; 3];
        for m in Material::solve_order(n, 12) {
            let s = solve_slice(&rules, &store, m, &|_| {}).unwrap();
            let symmetric = m == m.mirror();
            for (k, tk) in t.iter_mut().enumerate() {
                *tk += s.counts[0][k] + if symmetric { 0 } else { s.counts[1][k] };
            }
            store.insert(s.into_stored());
        }
        t
    }

    /// The grouped and the whole-slice solver are independent computations of the same
    /// values (the grouped one has its own move counting and unmoves for positions without a
    /// capture): they must agree on every position of every English slice up to 4 pieces, on
    /// International up to 3, and up to 3 under the other rule fields that change how
    /// positions are classified: flying kings on 8x8 (gracz8), optional capture, men that
    /// may not capture kings (Italian), a blocked side drawing, a blocked side judged by
    /// material (levels that mix wins and losses).
    #[test]
    fn grouped_and_global_solvers_agree() {
        let blocked_draws = Rules {
            blocked: dtb_probe::internal::rules::BlockedOutcome::Draw,
            ..Rules::ENGLISH
        };
        for (rules, n) in [
            (Rules::ENGLISH, 4),
            (Rules::INTERNATIONAL, 3),
            (Rules::GRACZ8, 3),
            (Rules::INTERNATIONAL_OPTIONAL, 3),
            (Rules::ITALIAN, 3),
            (blocked_draws, 3),
            (Rules::parse("english,blocked=majority").unwrap(), 4),
            (
                Rules::parse("gracz8,capture=optional,blocked=majority").unwrap(),
                3,
            ),
        ] {
            let mut store = Store::new(rules);
            for m in Material::solve_order(n, rules.max_pieces_per_side()) {
                let a = solve_slice_reference(&rules, &store, m, &|_| {}).unwrap();
                let b = solve_slice_grouped(&rules, &store, m, &|_| {}).unwrap();
                assert_eq!(a.counts, b.counts, "{} {m}", rules.name);
                assert_eq!(a.max_plies, b.max_plies, "{m}");
                assert!(a.values == b.values, "{} {m}: values differ", rules.name);
                assert!(a.capture == b.capture, "{m}: capture flags differ");
                store.insert(a.into_stored());
            }
        }
    }

    #[test]
    fn english_up_to_four_pieces_matches_checkers_arena_totals() {
        // ../shared/data/README.md: 2-4 pieces, White to move, both sides present.
        let t = english_totals(4);
        assert_eq!(t.iter().sum::<u64>(), 6_408_836);
        assert_eq!(t, [2_675_270, 2_004_797, 1_728_769]);
    }

    /// The count of men placements by potential, row by row, is what decoding every
    /// placement finds, on 8x8 and 10x10, men of one colour or both.
    #[test]
    fn potential_sizes_count_what_the_groups_hold() {
        for (rules, pieces) in [
            (
                Rules::ENGLISH,
                [(1, 0, 1, 1), (2, 1, 2, 0), (3, 0, 2, 2), (0, 2, 4, 0)],
            ),
            (
                Rules::INTERNATIONAL,
                [(1, 1, 2, 0), (2, 0, 2, 1), (0, 1, 3, 0), (2, 0, 0, 2)],
            ),
        ] {
            for (wm, wk, bm, bk) in pieces {
                let m = Material::new(wm, wk, bm, bk);
                let ix = SliceIndex::new(m, rules.geometry());
                let (sizes, _) = groups_by_potential(&rules, &ix);
                let sizes: Vec<u64> = sizes.iter().map(|&n| n as u64).collect();
                assert_eq!(potential_sizes(rules.geometry(), m), sizes, "{m}");
                assert_eq!(sizes.iter().sum::<u64>(), ix.men_groups(), "{m}");
            }
        }
    }
}
