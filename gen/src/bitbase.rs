//! The solver of slices of kings only for WLD-only builds, in bits: seven bits a position
//! (both sides: under two bytes a kings placement) instead of the grouped solver's 40 to 60
//! bytes a placement, so that English 0404 (736 M placements) solves in about 1.3 GB.
//!
//! A slice of kings only is one men group, and under compulsory capture its positions have
//! no exit but their captures (there are no men to crown): every position without a capture
//! moves only inside the slice. The solver keeps, per side, bitmaps of the positions won,
//! lost, decided at the start (`fixed`), with a capture (`cap`), resolved in the last pass
//! (`new`) or in this one (`next`), and of the positions to test for a loss (`cand`):
//! 1. **Start** (parallel over index chunks): a capture position, a blocked one, or (where
//!    capture is optional) one with a winning exit is decided at once from the slices its
//!    captures lead to; one with a drawing exit can never be lost (`fixed`).
//! 2. **Passes** until nothing new is resolved: every predecessor (a king moved back by the
//!    side that just moved) of a position newly lost is won; every predecessor of a position
//!    newly won is a candidate, and a candidate all of whose quiet moves lead to won positions
//!    is lost. The passes reach the least fixed point of these two rules, which is the game's
//!    value (everything never resolved is a draw), whatever order the threads take.
//!
//! The outcomes are those of the grouped solver (tested on every slice of kings only up to
//! five pieces, and under optional capture, flying kings and blocked-side draws). No
//! distances: a WLD-only build needs none.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use dtb_probe::internal::format::WldCode;
use dtb_probe::internal::index::{GroupDecoder, SliceIndex};
use dtb_probe::internal::material::Material;
use dtb_probe::internal::position::Position;
use dtb_probe::internal::rules::{Color, Rules};
use dtb_probe::internal::value::{blocked_code, Wld};
use dtb_probe::movegen::{has_capture, legal_moves, Counting, Move};
use rayon::prelude::*;

use crate::finished::Finished;
use crate::packed::spread;
use crate::solve::{classify, SolveError, SolvedWld, Start, Steps, AUX_DRAW_EXIT};
use crate::words::{try_filled, OutOfMemory};

/// Positions a task of the start pass classifies.
const INIT_CHUNK: u64 = if cfg!(test) { 1 << 8 } else { 1 << 16 };
/// Bitmap words a task of a pass scans (64 positions each).
const SCAN_WORDS: usize = if cfg!(test) { 4 } else { 1 << 10 };

/// One bit a position, set by any thread.
struct Bits(Vec<AtomicU64>);

impl Bits {
    fn new(n: u64) -> Result<Bits, OutOfMemory> {
        Ok(Bits(try_filled(n.div_ceil(64), || AtomicU64::new(0))?))
    }

    #[inline]
    fn get(&self, i: u64) -> bool {
        self.0[(i / 64) as usize].load(Relaxed) >> (i % 64) & 1 != 0
    }

    /// Set bit `i`; whether it was clear before (this call set it).
    #[inline]
    fn set(&self, i: u64) -> bool {
        let bit = 1u64 << (i % 64);
        self.0[(i / 64) as usize].fetch_or(bit, Relaxed) & bit == 0
    }

    fn count(&self) -> u64 {
        self.0
            .iter()
            .map(|w| u64::from(w.load(Relaxed).count_ones()))
            .sum()
    }

    fn clear(&self) {
        self.0.par_iter().for_each(|w| w.store(0, Relaxed));
    }

    fn into_words(self) -> Vec<u64> {
        self.0.into_iter().map(AtomicU64::into_inner).collect()
    }
}

/// The bitmaps of one side to move.
struct Side {
    win: Bits,
    loss: Bits,
    fixed: Bits,
    cap: Bits,
    new: Bits,
    next: Bits,
    cand: Bits,
}

impl Side {
    fn new(n: u64) -> Result<Side, OutOfMemory> {
        Ok(Side {
            win: Bits::new(n)?,
            loss: Bits::new(n)?,
            fixed: Bits::new(n)?,
            cap: Bits::new(n)?,
            new: Bits::new(n)?,
            next: Bits::new(n)?,
            cand: Bits::new(n)?,
        })
    }

    #[inline]
    fn resolved(&self, i: u64) -> bool {
        self.win.get(i) || self.loss.get(i)
    }

    /// Record what the start pass found of position `i`; a resolved one joins the frontier.
    #[inline]
    fn record_start(&self, i: u64, st: Start) {
        match st {
            Start::Known { code, capture } => {
                self.fixed.set(i);
                if capture {
                    self.cap.set(i);
                }
                match code.wld() {
                    Wld::Win => self.win.set(i),
                    Wld::Loss => self.loss.set(i),
                    Wld::Draw => false,
                };
            }
            Start::Open { aux, win_exit, .. } => {
                if win_exit.is_some() {
                    self.win.set(i);
                } else if aux & AUX_DRAW_EXIT != 0 {
                    self.fixed.set(i);
                }
            }
        }
        if self.resolved(i) {
            self.new.set(i);
        }
    }
}

/// Peak heap bytes [`solve_kings_wld`] takes for a slice of `n` placements, its result
/// included: seven bitmaps a side while it solves, then the won, lost and capture bitmaps
/// beside the packed result (two bits a position a side); plus 64 KiB a thread and 256 KiB.
pub fn kings_wld_memory(n: u64, threads: usize) -> u64 {
    let bitmap = n.div_ceil(64) * 8;
    let solving = 2 * 7 * bitmap;
    let packing = 2 * 3 * bitmap + 2 * n.div_ceil(32) * 8;
    solving.max(packing) + (256 << 10) + (64 << 10) * threads.max(1) as u64
}

/// Solve slice `material`, which has kings only, for a WLD-only build: the outcome of every
/// position, both sides to move, looking up the slices its captures lead to in `src`.
/// `progress` is called with work units done (`4 * size` in all).
///
/// # Errors
/// [`SolveError::Lookup`] if a slice a capture leads to is not in `src`.
///
/// # Panics
/// If `material` has men (a bug in the caller).
pub fn solve_kings_wld<S: Finished>(
    rules: &Rules,
    src: &S,
    material: Material,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SolvedWld, SolveError<S::Error>> {
    assert_eq!(
        material.men(),
        0,
        "solve_kings_wld takes slices of kings only"
    );
    let ix = SliceIndex::new(material, rules.geometry());
    let n = ix.size();
    let kings = KingsSlice {
        rules,
        src,
        dec: ix.group_decoder(0),
        steps: Steps::new(rules),
        n,
    };
    let oom = |e| SolveError::OutOfMemory(material, e);
    let mut sides = [Side::new(n).map_err(oom)?, Side::new(n).map_err(oom)?];
    kings.start_pass(&sides, progress)?;
    let passes = kings.passes(&mut sides, progress);
    let (values, capture, counts) = kings.packed(sides);
    Ok(SolvedWld::in_memory(
        (material, n),
        values,
        capture,
        counts,
        passes,
    ))
}

/// A slice of kings only being solved in bits: what every phase reads.
struct KingsSlice<'a, S> {
    rules: &'a Rules,
    /// The finished slices its captures lead to.
    src: &'a S,
    /// The slice's one group (no men): kings placements and their ranks.
    dec: GroupDecoder,
    steps: Steps,
    /// Placements a side.
    n: u64,
}

impl<S: Finished> KingsSlice<'_, S> {
    /// Phase 1, start: every position classified on its own (captures and blocked sides
    /// known, wins by an exit found), the resolved ones the first frontier.
    fn start_pass(
        &self,
        sides: &[Side; 2],
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<(), SolveError<S::Error>> {
        let n = self.n;
        (0..n.div_ceil(INIT_CHUNK))
            .into_par_iter()
            .try_for_each_init(
                || (Vec::new(), S::Cache::default()),
                |(moves, look), c| {
                    let lo = c * INIT_CHUNK;
                    let len = INIT_CHUNK.min(n - lo);
                    let placements = self.dec.kings_from(lo).take(len as usize);
                    for (j, (wk, bk)) in placements.enumerate() {
                        let i = lo + j as u64;
                        for side in [Color::White, Color::Black] {
                            let st = self.start(wk, bk, side, moves, look)?;
                            sides[side.index()].record_start(i, st);
                        }
                    }
                    progress(2 * len);
                    Ok(())
                },
            )
            .map_err(SolveError::Lookup)
    }

    /// Phase 2, passes until nothing new is resolved: the predecessors of the positions
    /// resolved last are won (a move to a lost position) or candidates, and a candidate
    /// whose every move leads to a won position is lost. Returns the number of passes.
    fn passes(&self, sides: &mut [Side; 2], progress: &(dyn Fn(u64) + Sync)) -> usize {
        let n = self.n;
        let mut passes = 0usize;
        let mut reported = 2 * n;
        loop {
            let frontier: u64 = sides.iter().map(|s| s.new.count()).sum();
            if frontier == 0 {
                break;
            }
            passes += 1;
            self.unmove_frontier(sides);
            self.resolve_candidates(sides);
            // What this pass found is the next frontier.
            for side in sides.iter_mut() {
                side.cand.clear();
                side.new.clear();
                std::mem::swap(&mut side.new, &mut side.next);
            }
            let report = frontier.min(4 * n - reported);
            progress(report);
            reported += report;
        }
        progress(4 * n - reported);
        passes
    }

    /// Predecessors of the positions resolved last: won, or candidates.
    fn unmove_frontier(&self, sides: &[Side; 2]) {
        for (s, side) in sides.iter().enumerate() {
            let mover = &sides[1 - s];
            scan(&side.new, |i| {
                let (wk, bk) = self.dec.kings(i);
                let lost = side.loss.get(i);
                // The side that just moved is the other one (s = 0: White to move here).
                let movers = if s == 0 { bk } else { wk };
                self.each_move(i, (wk, bk), movers, |q| {
                    if mover.resolved(q) {
                        return true;
                    }
                    if lost {
                        // A capture position has no quiet move to here.
                        if !mover.cap.get(q) && mover.win.set(q) {
                            mover.next.set(q);
                        }
                    } else if !mover.fixed.get(q) {
                        mover.cand.set(q);
                    }
                    true
                });
            });
        }
    }

    /// Candidates all of whose moves lead to won positions are lost.
    fn resolve_candidates(&self, sides: &[Side; 2]) {
        for (s, side) in sides.iter().enumerate() {
            let other = &sides[1 - s];
            scan(&side.cand, |i| {
                if side.resolved(i) {
                    return;
                }
                let (wk, bk) = self.dec.kings(i);
                let own = if s == 0 { wk } else { bk };
                let all_won = self.each_move(i, (wk, bk), own, |r| other.win.get(r));
                if all_won && side.loss.set(i) {
                    side.next.set(i);
                }
            });
        }
    }

    /// Phase 3: the outcomes, packed, the capture bits and the counts per side; the solving
    /// bitmaps go first.
    #[allow(clippy::type_complexity)]
    fn packed(&self, sides: [Side; 2]) -> ([Vec<u64>; 2], [Vec<u64>; 2], [[u64; 3]; 2]) {
        let n = self.n;
        let mut counts = [[0u64; 3]; 2];
        let mut values: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
        let mut capture: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
        for (s, side) in sides.into_iter().enumerate() {
            let Side { win, loss, cap, .. } = side;
            let (w, l) = (win.count(), loss.count());
            counts[s] = [w, l, n - w - l];
            let (win, loss) = (win.into_words(), loss.into_words());
            values[s] = (0..n.div_ceil(32) as usize)
                .into_par_iter()
                .map(|k| {
                    let half = |words: &[u64]| (words[k / 2] >> (32 * (k % 2))) as u32;
                    (spread(half(&win)) * u64::from(WldCode::Win.bits()))
                        | (spread(half(&loss)) * u64::from(WldCode::Loss.bits()))
                })
                .collect();
            capture[s] = if self.rules.capture_compulsory {
                cap.into_words()
            } else {
                vec![0; n.div_ceil(64) as usize]
            };
        }
        (values, capture, counts)
    }

    /// Calls `f` with the placement number after each quiet move of a king in `movers` (a
    /// subset of the kings `wk`, `bk` of placement `i`) until it returns false; whether it
    /// never did. King moves are their own reverse, so these are also the placements the
    /// kings came from.
    #[inline]
    fn each_move(
        &self,
        i: u64,
        (wk, bk): (u64, u64),
        movers: u64,
        mut f: impl FnMut(u64) -> bool,
    ) -> bool {
        let occ = wk | bk;
        let mut ks = movers;
        while ks != 0 {
            let from = ks.trailing_zeros() as u8;
            ks &= ks - 1;
            let mut to = self.steps.king_targets(from, occ);
            while to != 0 {
                let t = to.trailing_zeros() as u8;
                to &= to - 1;
                if !f(self.dec.kings_rank_after(i, wk, bk, from, t)) {
                    return false;
                }
            }
        }
        true
    }

    /// What the start pass knows of one position (kings `wk`, `bk`, `side` to move).
    #[inline]
    fn start(
        &self,
        wk: u64,
        bk: u64,
        side: Color,
        moves: &mut Vec<Move>,
        look: &mut S::Cache,
    ) -> Result<Start, S::Error> {
        let pos = self.dec.with_kings(wk, bk, side);
        kings_start(self.rules, &self.steps, self.src, &pos, moves, look)
    }
}

/// What the start of a kings-only solve knows of position `pos` (its slice's `material`):
/// under compulsory capture, a position without a capture is open, or decided where its
/// side is blocked; otherwise it is classified from its moves, those that leave the slice
/// (captures) looked up in `src`.
pub(crate) fn kings_start<S: Finished>(
    rules: &Rules,
    steps: &Steps,
    src: &S,
    pos: &Position,
    moves: &mut Vec<Move>,
    look: &mut S::Cache,
) -> Result<Start, S::Error> {
    let side = pos.side_to_move();
    if rules.capture_compulsory && !has_capture(rules, pos) {
        // Quiet king moves only, all inside the slice.
        let own = pos.pieces(side);
        let occ = pos.occupied();
        let mut inside = 0u32;
        let mut ks = own;
        while ks != 0 {
            let sq = ks.trailing_zeros() as u8;
            ks &= ks - 1;
            inside += steps.king_targets(sq, occ).count_ones();
        }
        if inside == 0 {
            return Ok(Start::Known {
                code: blocked_code(rules, pos),
                capture: false,
            });
        }
        return Ok(Start::Open {
            inside: 1,
            aux: 0,
            win_exit: None,
        });
    }
    let material = pos.material();
    legal_moves(rules, pos, Counting::Unique, moves);
    classify(rules, pos, moves, |succ| {
        if succ.material() == material {
            Ok(None)
        } else {
            src.value(succ, look).map(Some)
        }
    })
}

/// Calls `f` with every set bit of `bits`, on every thread.
fn scan(bits: &Bits, f: impl Fn(u64) + Sync) {
    bits.0
        .par_chunks(SCAN_WORDS)
        .enumerate()
        .for_each(|(c, words)| {
            for (k, w) in words.iter().enumerate() {
                let mut w = w.load(Relaxed);
                let base = ((c * SCAN_WORDS + k) * 64) as u64;
                while w != 0 {
                    f(base + u64::from(w.trailing_zeros()));
                    w &= w - 1;
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::{solve_slice, solve_slice_grouped_wld};
    use crate::store::Codes;
    use crate::store::Store;
    use dtb_probe::internal::format::WldCode;
    use dtb_probe::internal::rules::BlockedOutcome;

    /// Solve the slices of `rules` up to `pieces` (only those of kings only if `kings_only`)
    /// twice: with distances ([`solve_slice`], into one store) and as a WLD-only build does
    /// (the bit solver for kings only, the grouped WLD solver otherwise, into a store of
    /// packed outcomes). Every position's outcome, capture flag and the counts must agree.
    fn wld_solvers_agree(rules: Rules, pieces: u32, kings_only: bool) {
        let mut full_store = Store::new(rules);
        let mut wld_store = Store::new(rules);
        let mut kings_slices = 0;
        for m in Material::solve_order(pieces, rules.max_pieces_per_side()) {
            if kings_only && m.men() != 0 {
                continue;
            }
            let full = solve_slice(&rules, &full_store, m, &|_| {}).unwrap();
            let wld = if m.men() == 0 {
                kings_slices += 1;
                solve_kings_wld(&rules, &wld_store, m, &|_| {}).unwrap()
            } else {
                solve_slice_grouped_wld(&rules, &wld_store, m, m.pieces() % 2 == 0, &|_| {})
                    .unwrap()
            };
            let name = rules.name;
            let sum = |c: [[u64; 3]; 2]| c.map(|s| s.iter().sum::<u64>());
            assert_eq!(sum(wld.counts), [full.size; 2], "{name} {m}");
            assert_eq!(wld.counts, full.counts, "{name} {m}: counts");
            for side in 0..2 {
                for i in 0..full.size {
                    let want = WldCode::of(full.values[side][i as usize]);
                    assert_eq!(wld.code(side, i), want, "{name} {m} side {side} index {i}");
                    assert_eq!(wld.is_capture(side, i), full.is_capture(side, i), "{m} {i}");
                }
                // Nothing past the last position.
                let tail = full.size % 32;
                if tail != 0 {
                    assert_eq!(wld.values[side].last().unwrap() >> (2 * tail), 0, "{m}");
                }
            }
            full_store.insert(full.into_stored());
            let [a, b] = wld.values;
            wld_store.insert_codes(
                m,
                [Some(Codes::Wld(a.to_vec())), Some(Codes::Wld(b.to_vec()))],
            );
        }
        assert!(kings_slices >= 2, "{kings_slices} slices of kings only");
    }

    #[test]
    fn english_kings_only_to_five_pieces() {
        wld_solvers_agree(Rules::ENGLISH, 5, true);
    }

    #[test]
    fn english_every_slice_to_four_pieces() {
        wld_solvers_agree(Rules::ENGLISH, 4, false);
    }

    /// Flying kings (8x8 and 10x10), optional capture, men that may not take kings, a
    /// blocked side drawing, and a blocked side judged by material (wins in 0 plies, losses
    /// in odd plies): each changes how the start pass and the passes decide.
    #[test]
    fn other_rule_fields() {
        let blocked_draws = Rules {
            blocked: BlockedOutcome::Draw,
            ..Rules::ENGLISH
        };
        for (rules, n) in [
            (Rules::GRACZ8, 4),
            (Rules::INTERNATIONAL, 3),
            (Rules::INTERNATIONAL_OPTIONAL, 3),
            (Rules::ITALIAN, 3),
            (blocked_draws, 4),
            (Rules::parse("english,blocked=majority").unwrap(), 4),
            (
                Rules::parse("international,capture=optional,blocked=majority").unwrap(),
                3,
            ),
        ] {
            wld_solvers_agree(rules, n, false);
        }
    }

    #[test]
    fn spread_puts_bit_j_on_bit_2j() {
        for x in [0u32, 1, 0x8000_0000, 0xFFFF_FFFF, 0x1234_5678] {
            let want = (0..32).fold(0u64, |w, j| w | u64::from(x >> j & 1) << (2 * j));
            assert_eq!(spread(x), want, "{x:#x}");
        }
    }
}
