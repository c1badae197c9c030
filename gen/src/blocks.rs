//! A block solver of WLD outcomes for slices of kings only where the colour with fewer
//! kings has two (English 0202, 0203, ... 0208, and their colour swaps): the first case of the block layout
//! that performance-history, session 51, proposes for slices with two kings innermost.
//! An experiment beside [`crate::bitbase`] and the bit-parallel solver: builds do not use it
//! yet; `examples/block_lab.rs` times it against them, and the tests below hold it to the
//! bit solver.
//!
//! The layout: the other colour's kings (the *outer* placement, any `k` of the 32 squares)
//! number a *block*; a block holds 32 words, word `o` one inner king's square, bit `x` the
//! other's. Each position is held twice (words `o` bit `x` and `x` bit `o`), so
//! - an inner king on a bit moves by a masked shift of the word
//!   ([`Geometry::step_set`]), the one on a word moves to another word of the same block:
//!   no ranking, no list of moves, no crossing between copies;
//! - an outer king's move maps a block to another, word `o` to word `o` (one ranking a
//!   block and move, 32 words read together);
//! - a block is re-evaluated whole when a block it reads changed (won if a move reaches a
//!   lost position, lost if every move reaches a won one): the least fixed point of those
//!   rules, the game's outcome, whatever the order ([`crate::bitbase`]).
//!
//! The start decides, on one copy of each position, a word at a time which positions have a
//! capture or no move; captures only of or by the king on the word's
//! square a row at a time (each capture of the board without the slot's king, its
//! successors looked up for every slot at once); the others one by one, from their single
//! jumps where none can go on, else through the move generator (as the bit solver does).
//!
//! Measured against the bit-parallel solver (performance-history, session 52): 1.1-1.4x
//! faster on English 0205-0206, the passes 2-3x cheaper than the rows' iteration, the start
//! slower; it does not find threat positions.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

use dtb_probe::internal::board::{Dir, Geometry};
use dtb_probe::internal::format::WldCode;
use dtb_probe::internal::index::{GroupDecoder, SliceIndex};
use dtb_probe::internal::material::Material;
use dtb_probe::internal::position::Position;
use dtb_probe::internal::rules::{Color, KingRange, Precedence, Rules};
use dtb_probe::internal::value::Wld;
use dtb_probe::movegen::{legal_moves, single_jumps, Counting, Move};
use rayon::prelude::*;

use crate::bitbase::kings_start;
use crate::finished::Finished;
use crate::solve::{SolveError, SolvedWld, Start, Steps};
use crate::words::try_filled;

/// Whether [`solve_kings_blocks_wld`] takes slice `material` under `rules`: kings only, on
/// 8x8 with kings that move one square, compulsory capture and any capture sequence free to
/// choose (English), the colour with fewer kings (White where they are equal) two of them,
/// the other at most eight.
pub fn blocks_support(rules: &Rules, material: Material) -> bool {
    let (w, b) = (material.white_kings, material.black_kings);
    rules.kings == KingRange::Short
        && rules.capture_compulsory
        && rules.precedence == Precedence::Free
        && rules.geometry().squares == 32
        && material.men() == 0
        && w.min(b) == 2
        && w.max(b) <= 8
}

/// Which colour is inner, and how outer placements are numbered.
struct Layout {
    inner: Color,
    /// Kings of the outer colour.
    k: usize,
    /// Blocks: outer placements of `k` kings on 32 squares.
    blocks: usize,
    /// `binom[n][r]`: n choose r, for the ranks.
    binom: [[u32; 9]; 33],
}

impl Layout {
    fn new(material: Material) -> Layout {
        let inner = if material.white_kings == 2 {
            Color::White
        } else {
            Color::Black
        };
        let k = usize::from(match inner {
            Color::White => material.black_kings,
            Color::Black => material.white_kings,
        });
        let mut binom = [[0u32; 9]; 33];
        binom[0][0] = 1;
        for n in 1..33 {
            binom[n][0] = 1;
            for r in 1..9 {
                binom[n][r] = binom[n - 1][r - 1] + binom[n - 1][r];
            }
        }
        Layout {
            inner,
            k,
            blocks: binom[32][k] as usize,
            binom,
        }
    }

    /// The number of outer placement `set` (colex order of its squares).
    #[inline]
    fn rank(&self, set: u32) -> usize {
        let mut r = 0u32;
        let mut s = set;
        let mut i = 1;
        while s != 0 {
            r += self.binom[s.trailing_zeros() as usize][i];
            s &= s - 1;
            i += 1;
        }
        r as usize
    }

    /// The outer placement numbered `r`.
    fn unrank(&self, mut r: u32) -> u32 {
        let mut set = 0u32;
        for i in (1..=self.k).rev() {
            let mut n = i - 1;
            while self.binom[n + 1][i] <= r {
                n += 1;
            }
            r -= self.binom[n][i];
            set |= 1 << n;
        }
        set
    }

    /// White's and Black's kings of the position with inner kings `inner` and outer `outer`.
    #[inline]
    fn kings(&self, inner: u32, outer: u32) -> (u64, u64) {
        match self.inner {
            Color::White => (u64::from(inner), u64::from(outer)),
            Color::Black => (u64::from(outer), u64::from(inner)),
        }
    }
}

/// The next set of as many squares in colex order (Gosper's hack).
#[inline]
fn next_set(v: u32) -> u32 {
    let t = v | (v - 1);
    let w = t.wrapping_add(1);
    w | (((!t & w) - 1) >> (v.trailing_zeros() + 1))
}

/// One side to move: a word a (block, inner king square), bits the other inner king.
struct Planes {
    won: Vec<AtomicU32>,
    lost: Vec<AtomicU32>,
    /// Decided at the start (captures, blocked positions): never re-evaluated.
    fixed: Vec<AtomicU32>,
    capture: Vec<AtomicU32>,
    dirty: Vec<AtomicBool>,
}

/// Solve slice `material` (kings only, [`blocks_support`]) for a WLD-only build: the outcome
/// of every position, both sides to move, looking up the slices its captures lead to in
/// `src`.
///
/// # Errors
/// [`SolveError::Lookup`] if a slice a capture leads to is not in `src`;
/// [`SolveError::OutOfMemory`] if its planes cannot be allocated.
///
/// # Panics
/// If [`blocks_support`] does not take the slice (a bug in the caller).
pub fn solve_kings_blocks_wld<S: Finished>(
    rules: &Rules,
    src: &S,
    material: Material,
) -> Result<SolvedWld, SolveError<S::Error>> {
    solve_kings_blocks_wld_timed(rules, src, material).map(|(solved, _)| solved)
}

/// Where [`solve_kings_blocks_wld_timed`] spent its time, and on what.
#[derive(Clone, Copy, Debug)]
pub struct BlockPhases {
    /// Wall seconds of the start (capture and blocked positions decided).
    pub start_seconds: f64,
    /// Wall seconds of the passes.
    pub iterate_seconds: f64,
    /// Wall seconds putting the outcomes in the slice's index order.
    pub out_seconds: f64,
    /// Capture positions, White to move and Black.
    pub captures: [u64; 2],
    /// Positions the start decided one by one from their moves (the others a word or a row
    /// at a time), both sides.
    pub one_by_one: u64,
}

/// [`solve_kings_blocks_wld`], with the time of each phase.
///
/// # Errors
/// As [`solve_kings_blocks_wld`].
///
/// # Panics
/// As [`solve_kings_blocks_wld`].
pub fn solve_kings_blocks_wld_timed<S: Finished>(
    rules: &Rules,
    src: &S,
    material: Material,
) -> Result<(SolvedWld, BlockPhases), SolveError<S::Error>> {
    assert!(blocks_support(rules, material), "{material}");
    let lay = Layout::new(material);
    let words = (lay.blocks * 32) as u64;
    let oom = |e| SolveError::OutOfMemory(material, e);
    let planes = || -> Result<Planes, SolveError<S::Error>> {
        Ok(Planes {
            won: try_filled(words, || AtomicU32::new(0)).map_err(oom)?,
            lost: try_filled(words, || AtomicU32::new(0)).map_err(oom)?,
            fixed: try_filled(words, || AtomicU32::new(0)).map_err(oom)?,
            capture: try_filled(words, || AtomicU32::new(0)).map_err(oom)?,
            dirty: try_filled(lay.blocks as u64, || AtomicBool::new(true)).map_err(oom)?,
        })
    };
    let sides = [planes()?, planes()?];
    let solver = Blocks {
        rules,
        g: rules.geometry(),
        lay: &lay,
        steps: Steps::new(rules),
        dec: SliceIndex::new(material, rules.geometry()).group_decoder(0),
        adj: std::array::from_fn(|sq| {
            Dir::ALL.iter().fold(0u32, |a, &d| {
                a | rules.geometry().step_set(1 << sq, d) as u32
            })
        }),
    };
    let t = std::time::Instant::now();
    let one_by_one = solver.start(src, &sides)?;
    let start_seconds = t.elapsed().as_secs_f64();
    let passes = solver.iterate(&sides);
    let iterate_seconds = t.elapsed().as_secs_f64() - start_seconds;
    let captures = sides.each_ref().map(|p| {
        // Each position is held twice.
        p.capture
            .iter()
            .map(|w| u64::from(w.load(Relaxed).count_ones()))
            .sum::<u64>()
            / 2
    });
    let solved = solver.packed(material, &sides, passes);
    let phases = BlockPhases {
        start_seconds,
        iterate_seconds,
        out_seconds: t.elapsed().as_secs_f64() - start_seconds - iterate_seconds,
        captures,
        one_by_one,
    };
    Ok((solved, phases))
}

struct Blocks<'a> {
    rules: &'a Rules,
    g: &'static Geometry,
    lay: &'a Layout,
    steps: Steps,
    /// The slice's one group (no men): positions from kings.
    dec: GroupDecoder,
    /// The diagonal neighbours of each square.
    adj: [u32; 32],
}

/// Blocks a task of the start, of a pass or (Black inner) of the index order takes.
const CHUNK: usize = if cfg!(test) { 16 } else { 1024 };

impl Blocks<'_> {
    /// Every position decided at the start is: one copy classified, both copies set.
    /// Returns how many were decided one by one.
    fn start<S: Finished>(
        &self,
        src: &S,
        sides: &[Planes; 2],
    ) -> Result<u64, SolveError<S::Error>> {
        let lay = self.lay;
        (0..lay.blocks.div_ceil(CHUNK))
            .into_par_iter()
            .map_init(
                || (Vec::new(), Vec::new(), S::Cache::default()),
                |w, c| {
                    let lo = c * CHUNK;
                    let mut outer = lay.unrank(lo as u32);
                    let mut n = 0;
                    for b in lo..(lo + CHUNK).min(lay.blocks) {
                        if b > lo {
                            outer = next_set(outer);
                        }
                        n += self.start_block(src, sides, (b, outer), w)?;
                    }
                    Ok(n)
                },
            )
            .try_reduce(|| 0, |a, b| Ok(a + b))
            .map_err(SolveError::Lookup)
    }

    /// The start of block `b` (outer placement `outer`), a word at a time: which positions
    /// have a capture and which have no move at all (both sides), then those decided one by
    /// one from their moves ([`kings_start`]: a capture position's successors are in
    /// smaller slices), on one copy of each position, both copies set.
    fn start_block<S: Finished>(
        &self,
        src: &S,
        sides: &[Planes; 2],
        (b, outer): (usize, u32),
        (moves, succs, look): &mut (Vec<Move>, Vec<Position>, S::Cache),
    ) -> Result<u64, S::Error> {
        let free = !outer;
        let mut one_by_one = 0u64;
        // The block's planes of each side, (won, lost, fixed, capture) a word: this task's
        // alone, so built here and stored once.
        let mut local = [[[0u32; 4]; 32]; 2];
        let mut os = free;
        while os != 0 {
            let o = os.trailing_zeros();
            os &= os - 1;
            // Only the first copy of each position (x below o) is decided here.
            let first = free & ((1u32 << o) - 1);
            if first == 0 {
                continue;
            }
            let (inner, outer_side) = self.special(outer, o);
            for (side, (singly, by_row)) in [
                (self.lay.inner, inner),
                (self.lay.inner.opponent(), outer_side),
            ] {
                let planes = &mut local[side.index()];
                let mut set = |x: u32, code: Wld, capture: bool| {
                    for (w, bit) in [(o, x), (x, o)] {
                        let word = &mut planes[w as usize];
                        word[2] |= 1 << bit;
                        word[3] |= u32::from(capture) << bit;
                        match code {
                            Wld::Win => word[0] |= 1 << bit,
                            Wld::Loss => word[1] |= 1 << bit,
                            Wld::Draw => {}
                        }
                    }
                };
                let mut xs = singly & first;
                if by_row & first != 0 {
                    let (won, drawn, rest) =
                        self.row_captures(src, side, (outer, o), by_row & first, (moves, look))?;
                    xs |= rest;
                    let mut done = by_row & first & !rest;
                    while done != 0 {
                        let x = done.trailing_zeros();
                        done &= done - 1;
                        let code = if won >> x & 1 != 0 {
                            Wld::Win
                        } else if drawn >> x & 1 != 0 {
                            Wld::Draw
                        } else {
                            Wld::Loss
                        };
                        set(x, code, true);
                    }
                }
                one_by_one += u64::from(xs.count_ones());
                while xs != 0 {
                    let x = xs.trailing_zeros();
                    xs &= xs - 1;
                    let (wk, bk) = self.lay.kings(1 << x | 1 << o, outer);
                    let pos = self.dec.with_kings(wk, bk, side);
                    if let Some(wld) = self.single_jumps(src, &pos, (succs, look))? {
                        set(x, wld, true);
                        continue;
                    }
                    let st = kings_start(self.rules, &self.steps, src, &pos, moves, look)?;
                    if let Start::Known { code, capture } = st {
                        set(x, code.wld(), capture);
                    }
                }
            }
        }
        for (p, planes) in sides.iter().zip(&local) {
            for (w, &[won, lost, fixed, capture]) in planes.iter().enumerate() {
                let at = b * 32 + w;
                p.won[at].store(won, Relaxed);
                p.lost[at].store(lost, Relaxed);
                p.fixed[at].store(fixed, Relaxed);
                p.capture[at].store(capture, Relaxed);
            }
        }
        Ok(one_by_one)
    }

    /// The outcome of capture position `pos` where every capture is one jump that cannot go
    /// on: the best of its successors ([`single_jumps`], no move list), looked up. `None`
    /// where it has no capture or some capture could go on (the caller then decides it from
    /// its moves).
    fn single_jumps<S: Finished>(
        &self,
        src: &S,
        pos: &Position,
        (succs, look): (&mut Vec<Position>, &mut S::Cache),
    ) -> Result<Option<Wld>, S::Error> {
        if !single_jumps(self.rules, pos, succs) || succs.is_empty() {
            return Ok(None);
        }
        let mut drawn = false;
        for succ in succs.iter() {
            if succ.pieces(succ.side_to_move()) == 0 {
                return Ok(Some(Wld::Win)); // the other side has no piece left
            }
            match src.value(succ, look)?.wld() {
                Wld::Loss => return Ok(Some(Wld::Win)),
                Wld::Draw => drawn = true,
                Wld::Win => {}
            }
        }
        Ok(Some(if drawn { Wld::Draw } else { Wld::Loss }))
    }

    /// The capture positions `slots` of word `o` (outer placement `outer`, `side` to move)
    /// whose captures are all of or by the king on `o`, a row at a time: each capture of the
    /// board without the slot's king, its successor looked up for every slot at once
    /// ([`Finished::losses_draws_with_king`]). Returns the slots won, drawn, and those left
    /// to decide one by one: a capture lands on the slot, or (the outer colour capturing)
    /// the slot is next to a landing square, where a capture might go on over it.
    fn row_captures<S: Finished>(
        &self,
        src: &S,
        side: Color,
        (outer, o): (u32, u32),
        slots: u32,
        (moves, look): (&mut Vec<Move>, &mut S::Cache),
    ) -> Result<(u32, u32, u32), S::Error> {
        let (wk, bk) = self.lay.kings(1 << o, outer);
        let pos = self.dec.with_kings(wk, bk, side);
        legal_moves(self.rules, &pos, Counting::Unique, moves);
        let mut rest = 0u32;
        for m in moves.iter() {
            let mut near = 0u32;
            for &l in m.path() {
                near |= 1 << l;
                if side != self.lay.inner {
                    near |= self.adj[l as usize];
                }
            }
            rest |= slots & near;
        }
        let (mut won, mut drawn) = (0u32, 0u32);
        let row = slots & !rest;
        if row != 0 {
            for m in moves.iter() {
                let succ = m.apply_unchecked(&pos);
                // The outer colour's last king taken: it is to move with no piece. (The inner
                // colour to move has the slot's king.)
                if succ.side_to_move() != self.lay.inner && succ.pieces(succ.side_to_move()) == 0 {
                    won |= row;
                    continue;
                }
                let (l, d) =
                    src.losses_draws_with_king(&succ, self.lay.inner, u64::from(row), look)?;
                won |= l as u32;
                drawn |= d as u32;
            }
        }
        Ok((won & row, drawn & row & !won, rest))
    }

    /// Of word `o` of the block of outer placement `outer`, for the inner colour to move
    /// and for the outer: the slots the start decides one by one (the king on the slot
    /// captures or is captured, or the side has no move) and those where the only captures
    /// are those of or over the king on `o`, decided a row at a time. Kings that move and
    /// capture one square (English).
    #[allow(clippy::type_complexity)]
    fn special(&self, outer: u32, o: u32) -> ((u32, u32), (u32, u32)) {
        let g = self.g;
        let valid = !outer & !(1u32 << o);
        let step = |set: u32, d: Dir| g.step_set(u64::from(set), d) as u32;
        let back = |set: u32, d: Dir| g.step_set(u64::from(set), d.reverse()) as u32;
        let one = |sq: u32, d: Dir| step(1 << sq, d);
        // The inner colour to move: the king on the slot jumps an outer king onto an empty
        // square (not an outer king's, not o; never its own), or moves; the king on o
        // likewise, except where the slot is its landing or its only target.
        let (mut inner_cap, mut inner_moves) = (0u32, 0u32);
        let (mut o_cap, mut o_targets) = (0u32, 0u32);
        for d in Dir::ALL {
            inner_cap |= back(outer & back(valid, d), d);
            inner_moves |= back(valid, d);
            let v = one(o, d);
            if v & outer != 0 {
                let l = step(v, d) & !outer;
                if l != 0 {
                    o_cap |= l;
                }
            } else {
                o_targets |= v & !outer;
            }
        }
        // A jump of o lands on l: the slots other than l have it; two landings, every slot.
        let o_cap_slots = match o_cap.count_ones() {
            0 => 0,
            1 => valid & !o_cap,
            _ => valid,
        };
        let o_move_slots = match o_targets.count_ones() {
            0 => 0,
            1 => valid & !o_targets,
            _ => valid,
        };
        let inner_none = !(inner_cap | o_cap_slots | inner_moves | o_move_slots);
        let inner = (
            valid & (inner_cap | inner_none),
            valid & o_cap_slots & !inner_cap,
        );
        // The outer colour to move: an outer king jumps the king on o (landing not the slot)
        // or the king on the slot (landing not o); or it has no move.
        let (mut outer_cap, mut outer_targets) = (0u32, 0u32);
        let (mut o_taken_at, mut o_taken, mut o_slots) = (0u32, false, 0u32);
        let mut us = outer;
        while us != 0 {
            let u = us.trailing_zeros();
            us &= us - 1;
            for d in Dir::ALL {
                let v = one(u, d);
                if v == 0 || v & outer != 0 {
                    continue;
                }
                outer_targets |= v;
                let l = step(v, d) & !outer;
                if l == 0 {
                    continue;
                }
                if v == 1 << o {
                    o_taken = true;
                    o_taken_at |= l;
                } else if l != 1 << o {
                    outer_cap |= v;
                }
            }
        }
        if o_taken {
            o_slots = match o_taken_at.count_ones() {
                1 => valid & !o_taken_at,
                _ => valid,
            };
        }
        // Moves: targets other than o, the slot taking at most one of them.
        let t = outer_targets & !(1u32 << o);
        let outer_move_slots = match t.count_ones() {
            0 => 0,
            1 => valid & !t,
            _ => valid,
        };
        let outer_none = !(outer_cap | o_slots | outer_move_slots);
        let outer = (
            valid & (outer_cap | outer_none),
            valid & o_slots & !outer_cap,
        );
        (inner, outer)
    }

    /// Passes over the dirty blocks of each side in turn until none is left; returns the
    /// passes run.
    fn iterate(&self, sides: &[Planes; 2]) -> usize {
        let mut passes = 0;
        loop {
            let mut any = false;
            for s in [self.lay.inner, self.lay.inner.opponent()] {
                let (me, them) = (&sides[s.index()], &sides[s.opponent().index()]);
                let changed = (0..self.lay.blocks.div_ceil(CHUNK))
                    .into_par_iter()
                    .map(|c| {
                        let lo = c * CHUNK;
                        let mut n = 0usize;
                        for b in lo..(lo + CHUNK).min(self.lay.blocks) {
                            if me.dirty[b].swap(false, Relaxed) {
                                let outer = self.lay.unrank(b as u32);
                                n += usize::from(self.evaluate(s, me, them, b, outer));
                            }
                        }
                        n
                    })
                    .sum::<usize>();
                any |= changed > 0;
            }
            passes += 1;
            if !any {
                return passes;
            }
        }
    }

    /// The quiet moves of the outer kings of placement `outer`: each king's target square
    /// and the block it leads to, the first of the 32 entries (at most eight kings of four
    /// targets each).
    fn outer_moves(&self, outer: u32) -> ([(u32, usize); 32], usize) {
        let mut moves = [(0u32, 0usize); 32];
        let mut n = 0;
        let mut us = outer;
        while us != 0 {
            let u = us.trailing_zeros();
            us &= us - 1;
            let mut to = self.adj[u as usize] & !outer;
            while to != 0 {
                let t = to.trailing_zeros();
                to &= to - 1;
                moves[n] = (t, self.lay.rank(outer & !(1 << u) | 1 << t));
                n += 1;
            }
        }
        (moves, n)
    }

    /// Re-evaluates block `b` (outer placement `outer`) of side `s` to move, `me` its
    /// planes, `them` the other side's; whether any position was decided. The blocks that
    /// read it are marked dirty.
    fn evaluate(&self, s: Color, me: &Planes, them: &Planes, b: usize, outer: u32) -> bool {
        let g = self.g;
        let base = b * 32;
        let mut changed = false;
        // The outer kings' moves: once a block, not a word.
        let (outer_moves, n_moves) = if s == self.lay.inner {
            ([(0, 0); 32], 0)
        } else {
            self.outer_moves(outer)
        };
        let mut os = !outer;
        while os != 0 {
            let o = os.trailing_zeros();
            os &= os - 1;
            let at = base + o as usize;
            let valid = !outer & !(1u32 << o);
            let open = valid
                & !me.fixed[at].load(Relaxed)
                & !me.won[at].load(Relaxed)
                & !me.lost[at].load(Relaxed);
            if open == 0 {
                continue;
            }
            let (mut win, mut not_all_won) = (0u32, 0u32);
            if s == self.lay.inner {
                // The king on the bit: shifts of the same word of the other side.
                let (lost, won) = (them.lost[at].load(Relaxed), them.won[at].load(Relaxed));
                for d in Dir::ALL {
                    let back = d.reverse();
                    win |= g.step_set(u64::from(lost & valid), back) as u32;
                    not_all_won |= g.step_set(u64::from(!won & valid), back) as u32;
                }
                // The king on the word: the other words of the block.
                let mut to = self.adj[o as usize] & !outer;
                while to != 0 {
                    let t = to.trailing_zeros();
                    to &= to - 1;
                    let (at2, mask) = (base + t as usize, !(1u32 << t));
                    win |= them.lost[at2].load(Relaxed) & mask;
                    not_all_won |= !them.won[at2].load(Relaxed) & mask;
                }
            } else {
                for &(t, b2) in &outer_moves[..n_moves] {
                    if t == o {
                        continue; // the king on o stands there
                    }
                    let (at2, mask) = (b2 * 32 + o as usize, !(1u32 << t));
                    win |= them.lost[at2].load(Relaxed) & mask;
                    not_all_won |= !them.won[at2].load(Relaxed) & mask;
                }
            }
            let (w, l) = (open & win, open & !win & !not_all_won);
            if w != 0 {
                me.won[at].fetch_or(w, Relaxed);
            }
            if l != 0 {
                me.lost[at].fetch_or(l, Relaxed);
            }
            changed |= w | l != 0;
        }
        if changed {
            // The positions that move here: the other side's, in this block where it is the
            // inner colour, else in the blocks an outer king's move leads from.
            if s == self.lay.inner {
                // King moves are their own reverse: the blocks they lead to lead here.
                let (moves, n) = self.outer_moves(outer);
                for &(_, b2) in &moves[..n] {
                    them.dirty[b2].store(true, Relaxed);
                }
            } else {
                them.dirty[b].store(true, Relaxed);
            }
        }
        changed
    }

    /// The outcomes in the slice's index order, packed, with the capture bits and counts.
    /// A kings-only slice numbers White's kings first, then Black's among the squares left
    /// (each colex, [`SliceIndex`]). Where the inner colour is Black, a block's positions are
    /// one run of the index (the block's number times the pairs a block holds, then its
    /// pairs in order): each block is written as it is read. Where it is White, a pair of
    /// inner squares is one run over the blocks that leave it free: the blocks are read a
    /// tile at a time, and each pair's run of the tile written from it.
    fn packed(&self, material: Material, sides: &[Planes; 2], passes: usize) -> SolvedWld {
        let n = SliceIndex::new(material, self.g).size();
        let lay = self.lay;
        let mut values: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
        let mut capture: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
        let mut counts = [[0u64; 3]; 2];
        for (s, p) in sides.iter().enumerate() {
            let out = Out {
                values: (0..n.div_ceil(32)).map(|_| AtomicU64::new(0)).collect(),
                capture: (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            };
            let bit = |at: usize, x: u32| {
                let get = |v: &AtomicU32| v.load(Relaxed) >> x & 1 != 0;
                (get(&p.won[at]), get(&p.lost[at]), get(&p.capture[at]))
            };
            let (w, l) = match lay.inner {
                Color::Black => {
                    // Pairs a block: of the squares its outer kings leave.
                    let pairs = u64::from(lay.binom[32 - lay.k][2]);
                    (0..lay.blocks.div_ceil(CHUNK))
                        .into_par_iter()
                        .map(|c| {
                            let lo = c * CHUNK;
                            let mut outer = lay.unrank(lo as u32);
                            let mut sink = Sink::new(&out, lo as u64 * pairs);
                            for b in lo..(lo + CHUNK).min(lay.blocks) {
                                if b > lo {
                                    outer = next_set(outer);
                                }
                                let free = !outer;
                                let mut os = free;
                                while os != 0 {
                                    let o = os.trailing_zeros();
                                    os &= os - 1;
                                    let mut xs = free & ((1u32 << o) - 1);
                                    while xs != 0 {
                                        let x = xs.trailing_zeros();
                                        xs &= xs - 1;
                                        sink.put(bit(b * 32 + o as usize, x));
                                    }
                                }
                            }
                            sink.finish()
                        })
                        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
                }
                Color::White => {
                    let ranker = self.dec.ranker();
                    (0..lay.blocks.div_ceil(TILE))
                        .into_par_iter()
                        .map(|c| {
                            let lo = c * TILE;
                            let hi = (lo + TILE).min(lay.blocks);
                            let mut outers = Vec::with_capacity(hi - lo);
                            let mut outer = lay.unrank(lo as u32);
                            for b in lo..hi {
                                if b > lo {
                                    outer = next_set(outer);
                                }
                                outers.push(outer);
                            }
                            let mut counts = (0, 0);
                            for o in 1..32u32 {
                                for x in 0..o {
                                    let pair = 1u32 << x | 1 << o;
                                    let Some(first) = outers.iter().position(|u| u & pair == 0)
                                    else {
                                        continue;
                                    };
                                    let at = ranker.rank(u64::from(pair), u64::from(outers[first]));
                                    let mut sink = Sink::new(&out, at);
                                    for (j, u) in outers.iter().enumerate().skip(first) {
                                        if u & pair == 0 {
                                            sink.put(bit((lo + j) * 32 + o as usize, x));
                                        }
                                    }
                                    let (w, l) = sink.finish();
                                    counts = (counts.0 + w, counts.1 + l);
                                }
                            }
                            counts
                        })
                        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
                }
            };
            counts[s] = [w, l, n - w - l];
            values[s] = out.values.into_iter().map(AtomicU64::into_inner).collect();
            capture[s] = if self.rules.capture_compulsory {
                out.capture.into_iter().map(AtomicU64::into_inner).collect()
            } else {
                vec![0; n.div_ceil(64) as usize]
            };
        }
        SolvedWld::in_memory((material, n), values, capture, counts, passes)
    }
}

/// Blocks a task of the index order reads at a time where the inner colour is White.
const TILE: usize = if cfg!(test) { 16 } else { 256 };

/// The packed outcomes and capture bits of one side, written by every thread.
struct Out {
    values: Vec<AtomicU64>,
    capture: Vec<AtomicU64>,
}

/// Writes consecutive positions from `at` on: a word at a time, OR-ed in (the words at the
/// ends of a run may be another task's too).
struct Sink<'a> {
    out: &'a Out,
    at: u64,
    value: u64,
    capture: u64,
    won: u64,
    lost: u64,
}

impl<'a> Sink<'a> {
    fn new(out: &'a Out, at: u64) -> Sink<'a> {
        Sink {
            out,
            at,
            value: 0,
            capture: 0,
            won: 0,
            lost: 0,
        }
    }

    /// Position `at`'s outcome (won, lost) and capture flag.
    #[inline]
    fn put(&mut self, (won, lost, capture): (bool, bool, bool)) {
        let code = if won {
            WldCode::Win.bits()
        } else if lost {
            WldCode::Loss.bits()
        } else {
            0
        };
        self.won += u64::from(won);
        self.lost += u64::from(lost && !won);
        self.value |= u64::from(code) << (2 * (self.at % 32));
        self.capture |= u64::from(capture) << (self.at % 64);
        self.at += 1;
        if self.at.is_multiple_of(32) {
            self.flush_value(self.at - 1);
        }
        if self.at.is_multiple_of(64) {
            self.flush_capture(self.at - 1);
        }
    }

    fn flush_value(&mut self, last: u64) {
        if self.value != 0 {
            self.out.values[(last / 32) as usize].fetch_or(self.value, Relaxed);
        }
        self.value = 0;
    }

    fn flush_capture(&mut self, last: u64) {
        if self.capture != 0 {
            self.out.capture[(last / 64) as usize].fetch_or(self.capture, Relaxed);
        }
        self.capture = 0;
    }

    /// Writes what is left; the wins and losses put.
    fn finish(mut self) -> (u64, u64) {
        if !self.at.is_multiple_of(32) {
            self.flush_value(self.at);
        }
        if !self.at.is_multiple_of(64) {
            self.flush_capture(self.at);
        }
        (self.won, self.lost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitbase::solve_kings_wld;
    use crate::store::{Codes, Store};

    /// Every English kings-only slice of up to five pieces that the block solver takes
    /// (0202, and 0203: slices are solved in one colour order) gives the bit solver's outcome, capture flag and counts for every
    /// position, both sides to move, on one thread and on three.
    #[test]
    fn kings_only_blocks_agree_with_the_bit_solver() {
        let rules = Rules::ENGLISH;
        let mut store = Store::new(rules);
        let mut compared = Vec::new();
        for m in Material::solve_order(5, rules.max_pieces_per_side()) {
            if m.men() != 0 {
                continue;
            }
            let want = solve_kings_wld(&rules, &store, m, &|_| {}).unwrap();
            if blocks_support(&rules, m) {
                for threads in [1, 3] {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    let got = pool
                        .install(|| solve_kings_blocks_wld(&rules, &store, m))
                        .unwrap();
                    got.assert_agrees_with(&want);
                }
                compared.push(m.to_string());
            }
            let [a, b] = want.values;
            store.insert_codes(
                m,
                [Some(Codes::Wld(a.to_vec())), Some(Codes::Wld(b.to_vec()))],
            );
        }
        assert_eq!(compared, ["0202", "0203"], "slices compared");
        // Its colour swapped (not a slice builds solve): Black is the inner colour, whose
        // blocks are runs of the index.
        let m = Material::parse("0302").unwrap();
        let want = solve_kings_wld(&rules, &store, m, &|_| {}).unwrap();
        assert_eq!(Layout::new(m).inner, Color::Black);
        solve_kings_blocks_wld(&rules, &store, m)
            .unwrap()
            .assert_agrees_with(&want);
    }

    /// What it takes: English kings-only slices with two kings of one colour, not those of
    /// rules whose captures are chosen by precedence (Italian), nor men.
    #[test]
    fn it_takes_english_kings_only_slices_with_two_inner_kings() {
        let m = |s: &str| Material::parse(s).unwrap();
        assert!(blocks_support(&Rules::ENGLISH, m("0206")));
        assert!(blocks_support(&Rules::ENGLISH, m("0502")));
        assert!(!blocks_support(&Rules::ENGLISH, m("0305")));
        assert!(!blocks_support(&Rules::ENGLISH, m("1202")));
        assert!(!blocks_support(
            &Rules::by_name("italian").unwrap(),
            m("0203")
        ));
        assert!(!blocks_support(
            &Rules::by_name("international").unwrap(),
            m("0203")
        ));
    }

    #[test]
    fn ranks_number_every_placement_once() {
        let lay = Layout::new(Material::parse("0203").unwrap());
        assert_eq!((lay.inner, lay.k, lay.blocks), (Color::White, 3, 4960));
        let mut set = 0b111u32;
        for r in 0..lay.blocks {
            assert_eq!(lay.rank(set), r);
            assert_eq!(lay.unrank(r as u32), set);
            if r + 1 < lay.blocks {
                set = next_set(set);
            }
        }
    }
}
