//! The index: a dense bijection between the positions of one slice and `0..size` (design
//! decision 4). The side to move is not part of the index; a table stores one value array per
//! side.
//!
//! Layout, most significant part first:
//! 1. White men, split by `j`, the number of them on White's home row (row N-1, where Black
//!    men never stand); within `j`, the home-row men and then the others, each as a subset
//!    rank (combinatorial number system).
//! 2. Black men: a subset of the squares a black man may use (all but row N-1) that white men
//!    do not occupy.
//! 3. White kings: a subset of the squares no man occupies.
//! 4. Black kings: a subset of the squares no man and no white king occupies.
//!
//! A subset `{p_1 < ... < p_k}` of `0..n` has rank `sum C(p_i, i)` (colex order), and the
//! squares of parts 2-4 are first compressed to their rank among the free squares. The
//! number of positions per slice is therefore the exact number of legal placements, and
//! summed over slices it equals the published counts (`../shared/data/position-counts.tsv`).

use crate::board::Geometry;
use crate::material::Material;
use crate::position::Position;
use crate::rules::{Color, RulesId};

/// `BINOM[n][k]` = C(n, k) for n, k <= 64 (0 where k > n).
pub static BINOM: [[u64; 65]; 65] = build_binom();

const fn build_binom() -> [[u64; 65]; 65] {
    let mut t = [[0u64; 65]; 65];
    let mut n = 0;
    while n <= 64 {
        t[n][0] = 1;
        let mut k = 1;
        while k <= n {
            // C(64, 32) < 2^64; saturate the (unused) larger ones would not occur.
            t[n][k] = t[n - 1][k - 1].wrapping_add(if k < n { t[n - 1][k] } else { 0 });
            k += 1;
        }
        n += 1;
    }
    t
}

#[inline(always)]
fn binom(n: u32, k: u32) -> u64 {
    if k > n {
        0
    } else {
        BINOM[n as usize][k as usize]
    }
}

/// Rank of the set bits of `bb`, each first compressed to its rank among the bits of `free`.
#[inline(always)]
fn rank_in(bb: u64, free: u64) -> u64 {
    let mut r = 0u64;
    let mut i = 1u32;
    let mut b = bb;
    while b != 0 {
        let low = b & b.wrapping_neg();
        let p = (free & (low - 1)).count_ones();
        r += binom(p, i);
        i += 1;
        b ^= low;
    }
    r
}

/// The subset of size `k` with rank `r` of the set bits of `free` (the `p`-th set bit standing
/// for position `p`), as a bitboard.
#[inline]
fn unrank_in(r: u64, k: u32, free: u64) -> u64 {
    let mut pos = [0u8; 16];
    unrank_positions(r, k, free.count_ones(), &mut pos);
    pos[..k as usize]
        .iter()
        .fold(0u64, |out, &p| out | select(free, p as u32))
}

/// The subsets of three elements of `0..TRIPLES_N` in colex order: entry `r` holds the subset
/// of rank `r`, its elements in bits 0-7, 8-15 and 16-23 (ascending). What
/// [`unrank_positions`] reads for the last three elements instead of two searches.
const TRIPLES_N: usize = 50;
const TRIPLES: usize = (TRIPLES_N * (TRIPLES_N - 1) * (TRIPLES_N - 2)) / 6;
static COLEX3: [u32; TRIPLES] = build_colex3();

const fn build_colex3() -> [u32; TRIPLES] {
    let mut t = [0u32; TRIPLES];
    let mut r = 0;
    // Colex order: by the largest element, then the middle one, then the smallest.
    let mut c = 2;
    while c < TRIPLES_N {
        let mut b = 1;
        while b < c {
            let mut a = 0;
            while a < b {
                t[r] = (a | b << 8 | c << 16) as u32;
                r += 1;
                a += 1;
            }
            b += 1;
        }
        c += 1;
    }
    t
}

/// The subset of `0..n` with colex rank `r` and `k` elements, ascending, into `out[..k]`:
/// a search for each element above the last three, then a table.
#[inline]
fn unrank_positions(mut r: u64, k: u32, n: u32, out: &mut [u8; 16]) {
    let mut hi = n;
    let mut i = k;
    while i > 1 {
        if i == 3 && r < TRIPLES as u64 {
            let t = COLEX3[r as usize];
            out[0] = t as u8;
            out[1] = (t >> 8) as u8;
            out[2] = (t >> 16) as u8;
            return;
        }
        // The largest c in i-1..hi with C(c, i) <= r (C(i-1, i) = 0): a binary search whose
        // steps depend on the range's length only, the comparison a conditional move, since
        // its outcomes are as good as random (a branch a step mispredicted half the time).
        let col = |c: u32| BINOM[c as usize][i as usize];
        let (mut lo, mut len) = (i - 1, hi - (i - 1));
        while len > 1 {
            let half = len / 2;
            let mid = lo + half;
            lo = if col(mid) <= r { mid } else { lo };
            len -= half;
        }
        r -= col(lo);
        out[(i - 1) as usize] = lo as u8;
        hi = lo;
        i -= 1;
    }
    if i == 1 {
        out[0] = r as u8;
    }
}

/// Decodes the kings of one men group quickly: the empty squares are listed once, so a
/// king's square is a table look-up instead of a bit search.
#[derive(Clone, Debug)]
pub struct GroupDecoder {
    empty: [u8; 64],
    n: u32,
    white_kings: u32,
    black_kings: u32,
    bk_n: u64,
    empty_bb: u64,
    men: (u64, u64),
    /// The identity of the positions made: board-only.
    rules: RulesId,
}

impl GroupDecoder {
    /// (white men, black men) of the group.
    pub fn men(&self) -> (u64, u64) {
        self.men
    }

    /// The position with kings placement `king_idx` (< kings per group) and side to move.
    #[inline]
    pub fn position(&self, king_idx: u64, side: Color) -> Position {
        let (wkb, bkb) = self.kings(king_idx);
        self.with_kings(wkb, bkb, side)
    }

    /// The position with this group's men, white kings `wk` and black kings `bk` (which must
    /// stand on squares the men leave empty, the counts of the slice), and side to move.
    #[inline]
    pub fn with_kings(&self, wk: u64, bk: u64, side: Color) -> Position {
        let (wmen, bmen) = self.men;
        Position::from_parts(wmen | wk, bmen | bk, wk | bk, side, self.rules)
    }

    /// The kings placement number (< kings per group) of white kings `wk` and black kings
    /// `bk` placed among this group's men: the inverse of [`GroupDecoder::kings`].
    #[inline]
    fn kings_rank(&self, wk: u64, bk: u64) -> u64 {
        self.ranker().rank(wk, bk)
    }

    /// The part of this decoder that ranks kings placements ([`GroupDecoder::kings_rank`]),
    /// without the list of empty squares that decoding needs: 16 bytes instead of about 100.
    #[inline]
    pub fn ranker(&self) -> KingsRanker {
        KingsRanker {
            empty_bb: self.empty_bb,
            bk_n: self.bk_n,
        }
    }

    /// [`GroupDecoder::kings_rank`] after one king moves from `from` to `to` (an empty square
    /// of the group), given the placement before the move: its number `rank`, white kings
    /// `wk` and black kings `bk`. The mover is White's king when `from` is in `wk`.
    ///
    /// When no king of the mover's colour stands between the two squares (in square order)
    /// the mover keeps its place among its side's kings and its own term of the rank changes
    /// by two binomial look-ups. A black king's squares are counted among those without a
    /// white king, so a white king's move also changes the term of each black king between
    /// the two squares, by one square. With a king of the mover's colour between them, the
    /// rank is computed afresh.
    #[inline(always)]
    pub fn kings_rank_after(&self, rank: u64, wk: u64, bk: u64, from: u8, to: u8) -> u64 {
        let (lo, hi) = (from.min(to), from.max(to));
        let between = ((1u64 << hi) - 1) & !((2u64 << lo) - 1);
        let moved = (1u64 << from) | (1u64 << to);
        let white = wk >> from & 1 != 0;
        let (own, free, scale) = if white {
            (wk, self.empty_bb, self.bk_n)
        } else {
            (bk, self.empty_bb & !wk, 1)
        };
        if own & between != 0 {
            return if white {
                self.kings_rank(wk ^ moved, bk)
            } else {
                self.kings_rank(wk, bk ^ moved)
            };
        }
        let below = |sq: u32| (1u64 << sq) - 1;
        let i = (own & below(from.into())).count_ones() + 1;
        let old = binom((free & below(from.into())).count_ones(), i);
        let new = binom((free & below(to.into())).count_ones(), i);
        let mut r = rank + new * scale - old * scale;
        let mut passed = if white { bk & between } else { 0 };
        if passed != 0 {
            // Each black king passed over counts one free square more below it (the mover
            // left one below it) or one fewer (the mover took one).
            let free_b = self.empty_bb & !wk;
            while passed != 0 {
                let b = passed.trailing_zeros();
                passed &= passed - 1;
                let j = (bk & below(b)).count_ones() + 1;
                let c = (free_b & below(b)).count_ones();
                let was = binom(c, j);
                r = if from < to {
                    r + binom(c + 1, j) - was
                } else {
                    r - was + binom(c - 1, j)
                };
            }
        }
        r
    }

    /// (white kings, black kings) bitboards of kings placement `king_idx`.
    #[inline]
    pub fn kings(&self, king_idx: u64) -> (u64, u64) {
        let mut wpos = [0u8; 16];
        let mut bpos = [0u8; 16];
        let wk = self.white_kings as usize;
        unrank_positions(king_idx / self.bk_n, self.white_kings, self.n, &mut wpos);
        unrank_positions(
            king_idx % self.bk_n,
            self.black_kings,
            self.n - self.white_kings,
            &mut bpos,
        );
        let mut wkb = 0u64;
        for &p in &wpos[..wk] {
            wkb |= 1u64 << self.empty[p as usize];
        }
        let mut bkb = 0u64;
        for &b in &bpos[..self.black_kings as usize] {
            // The b-th empty square that holds no white king.
            let mut p = b;
            for &w in &wpos[..wk] {
                if w <= p {
                    p += 1;
                }
            }
            bkb |= 1u64 << self.empty[p as usize];
        }
        (wkb, bkb)
    }
}

/// Ranks the kings placements of one men group: `GroupDecoder::kings_rank` from the
/// group's empty squares alone. Built by [`GroupDecoder::ranker`] or
/// [`SliceIndex::ranker_of_men`]; cheap to build and to copy.
#[derive(Clone, Copy, Debug)]
pub struct KingsRanker {
    empty_bb: u64,
    bk_n: u64,
}

impl KingsRanker {
    /// The kings placement number (< kings per group) of white kings `wk` and black kings
    /// `bk`, which must stand on the group's empty squares, as many as the slice has.
    #[inline]
    pub fn rank(&self, wk: u64, bk: u64) -> u64 {
        rank_in(wk, self.empty_bb) * self.bk_n + rank_in(bk, self.empty_bb & !wk)
    }
}

impl KingsRanker {
    /// The placement numbers of kings `(wk, bk)` with one king more of `color` on a square
    /// that varies (what [`KingsRanker::rank`] gives for each), from tables built once:
    /// ranking a row of positions that differ by that king costs a few bit counts a square.
    #[inline]
    pub fn with_one_more(&self, wk: u64, bk: u64, color: Color) -> KingRow {
        let below = |sq: u64| (sq & sq.wrapping_neg()) - 1;
        // For the varying colour's kings `own` among `free`: with k of them below the new
        // king, the rank is `base[k] + binom(p, k + 1)` (p: the free squares below it), where
        // `base[k]` sums the k below it as they are and the ones above one place higher.
        let tables = |own: u64, free: u64, constant: u64| {
            let mut base = [0u64; 17];
            let mut b = own;
            let mut sq = [0u32; 16];
            let mut n = 0;
            let mut above = constant;
            while b != 0 {
                sq[n] = (free & below(b)).count_ones();
                above += binom(sq[n], n as u32 + 2);
                b &= b - 1;
                n += 1;
            }
            base[0] = above;
            for j in 0..n {
                base[j + 1] = base[j] + binom(sq[j], j as u32 + 1) - binom(sq[j], j as u32 + 2);
            }
            base
        };
        match color {
            Color::White => {
                let base = tables(wk, self.empty_bb, 0);
                // Black's kings among the squares left: one fewer below each above the new
                // king. With k' of them below it: `black[k']`.
                let mut black = [0u64; 17];
                let free = self.empty_bb & !wk;
                let mut q = [0u32; 16];
                let (mut b, mut n) = (bk, 0);
                while b != 0 {
                    q[n] = (free & below(b)).count_ones();
                    b &= b - 1;
                    n += 1;
                }
                for (k, slot) in black.iter_mut().enumerate().take(n + 1) {
                    *slot = (0..n)
                        .map(|j| binom(q[j] - u32::from(j >= k && q[j] > 0), j as u32 + 1))
                        .sum();
                }
                KingRow {
                    free: self.empty_bb,
                    own: wk,
                    other: bk,
                    scale: self.bk_n,
                    base,
                    black,
                }
            }
            Color::Black => {
                let free = self.empty_bb & !wk;
                // White's kings fixed: their part of the number is a constant.
                let base = tables(bk, free, rank_in(wk, self.empty_bb) * self.bk_n);
                KingRow {
                    free,
                    own: bk,
                    other: 0,
                    scale: 1,
                    base,
                    black: [0; 17],
                }
            }
        }
    }
}

/// What [`KingsRanker::with_one_more`] builds: the placement number of a row's kings with
/// one more on square `x`, by [`KingRow::rank`].
#[derive(Clone, Copy, Debug)]
pub struct KingRow {
    /// The squares the varying king's colour is ranked among, and its other kings.
    free: u64,
    own: u64,
    /// Black's kings where the varying king is White (their rank depends on it), else 0.
    other: u64,
    scale: u64,
    /// The varying king's number less its own term, by how many of its colour's other
    /// kings stand below it (see [`KingsRanker::with_one_more`]).
    base: [u64; 17],
    black: [u64; 17],
}

impl KingRow {
    /// The placement number with the king on square `x` (empty of men and kings).
    #[inline(always)]
    pub fn rank(&self, x: u32) -> u64 {
        let below = (1u64 << x) - 1;
        let k = (self.own & below).count_ones() as usize;
        let p = (self.free & below).count_ones();
        let r = self.base[k] + binom(p, k as u32 + 1);
        let b = (self.other & below).count_ones() as usize;
        r * self.scale + self.black[b]
    }

    /// Where the placement numbers of the row run on by one: `(first, squares)`, where the
    /// `j`-th of `squares` in ascending order (from 0) has number `first + j`. These are the
    /// free squares below every other king of the varying colour, where that colour is
    /// ranked last (Black, or White where Black has no king); `None` otherwise. What a
    /// reader of many squares of a row uses to read their values as one run.
    #[inline]
    pub fn run(&self) -> Option<(u64, u64)> {
        if self.scale != 1 || self.other != 0 {
            return None;
        }
        let below_own = (self.own & self.own.wrapping_neg()).wrapping_sub(1);
        Some((self.base[0] + self.black[0], self.free & below_own))
    }
}

/// The kings placements of one group in order of their number, from a given one on: what
/// [`GroupDecoder::kings`] gives for `start`, `start + 1`, ... up to the last placement, each
/// found from the one before by the next subset in colex order (Gosper's step on the
/// compressed squares) instead of an unranking.
#[derive(Clone, Debug)]
pub struct KingsIter {
    /// The empty squares of the group, ascending (`n` of them).
    empty: [u8; 64],
    /// The empty squares without a white king, ascending.
    free: [u8; 64],
    n: u32,
    white_kings: u32,
    black_kings: u32,
    /// White's and Black's kings as subsets of `empty` and `free` (bit `p` for the `p`-th).
    cw: u64,
    cb: u64,
    wk: u64,
    bk: u64,
    left: u64,
}

/// The next larger number with as many set bits as `x` (non-zero): the next subset of the
/// same size in colex order.
#[inline(always)]
fn next_subset(x: u64) -> u64 {
    let low = x & x.wrapping_neg();
    let r = x + low;
    (((r ^ x) >> 2) >> low.trailing_zeros()) | r
}

/// The squares `list[p]` for the set bits `p` of `c`.
#[inline(always)]
fn expand(mut c: u64, list: &[u8; 64]) -> u64 {
    let mut out = 0u64;
    while c != 0 {
        out |= 1u64 << list[c.trailing_zeros() as usize];
        c &= c - 1;
    }
    out
}

impl KingsIter {
    fn rebuild_free(&mut self) {
        let mut k = 0;
        for p in 0..self.n as usize {
            if self.cw >> p & 1 == 0 {
                self.free[k] = self.empty[p];
                k += 1;
            }
        }
    }
}

impl Iterator for KingsIter {
    type Item = (u64, u64);

    #[inline]
    fn next(&mut self) -> Option<(u64, u64)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let out = (self.wk, self.bk);
        if self.left == 0 {
            return Some(out);
        }
        if self.black_kings > 0 {
            self.cb = next_subset(self.cb);
            if self.cb >> (self.n - self.white_kings) == 0 {
                self.bk = expand(self.cb, &self.free);
                return Some(out);
            }
        }
        // Black's kings wrapped around (or there are none): White's next placement, Black's
        // first. There is one, since placements are left.
        self.cw = next_subset(self.cw);
        self.wk = expand(self.cw, &self.empty);
        if self.black_kings > 0 {
            self.rebuild_free();
            self.cb = (1u64 << self.black_kings) - 1;
            self.bk = expand(self.cb, &self.free);
        }
        Some(out)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl GroupDecoder {
    /// The kings placements numbered `start..kings_per_group` in order, as
    /// [`GroupDecoder::kings`] gives them (empty if `start` is past the last).
    pub fn kings_from(&self, start: u64) -> KingsIter {
        let total = binom(self.n, self.white_kings) * self.bk_n;
        let mut it = KingsIter {
            empty: self.empty,
            free: [0; 64],
            n: self.n,
            white_kings: self.white_kings,
            black_kings: self.black_kings,
            cw: 0,
            cb: 0,
            wk: 0,
            bk: 0,
            left: total.saturating_sub(start),
        };
        if it.left == 0 {
            return it;
        }
        let (wk, bk) = self.kings(start);
        let below = |sq: u32| (1u64 << sq) - 1;
        let compress = |bb: u64, free: u64| {
            let mut c = 0u64;
            let mut b = bb;
            while b != 0 {
                let sq = b.trailing_zeros();
                c |= 1u64 << (free & below(sq)).count_ones();
                b &= b - 1;
            }
            c
        };
        it.cw = compress(wk, self.empty_bb);
        it.cb = compress(bk, self.empty_bb & !wk);
        it.wk = wk;
        it.bk = bk;
        it.rebuild_free();
        it
    }
}

/// `SELECT_IN_BYTE[b][k]`: the position of the `k`-th set bit of byte `b` (8 if none).
static SELECT_IN_BYTE: [[u8; 8]; 256] = build_select();

const fn build_select() -> [[u8; 8]; 256] {
    let mut t = [[8u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        let mut bit = 0;
        while bit < 8 {
            if b >> bit & 1 == 1 {
                t[b][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    t
}

/// The bit of the `n`-th (0-based) set bit of `x` (`x` has more than `n` set bits).
#[inline]
fn select(x: u64, mut n: u32) -> u64 {
    let mut shift = 0u32;
    loop {
        let byte = (x >> shift) & 0xFF;
        let c = byte.count_ones();
        if n < c {
            return 1u64 << (shift + SELECT_IN_BYTE[byte as usize][n as usize] as u32);
        }
        n -= c;
        shift += 8;
        if shift >= 64 {
            return 0;
        }
    }
}

/// Indexer for one slice on one board. Cheap to build (no tables).
#[derive(Clone, Debug)]
pub struct SliceIndex {
    material: Material,
    g: &'static Geometry,
    /// Squares of White's home row (where black men never stand).
    home: u64,
    /// Squares both colours' men may use (rows 1..N-2).
    middle: u64,
    /// Squares black men may use.
    black_men_ok: u64,
    /// For each j: the index of the first position with j white men on the home row.
    j_offset: [u64; 11],
    /// Number of white-king-and-black-king placements per men placement.
    king_block: u64,
    /// The first men group with j white men on the home row (`j_offset[j] / king_block`,
    /// counted without a division: `king_block` is 0 for a slice with more pieces than
    /// squares); `j_group[10]` is the number of men groups.
    j_group: [u64; 11],
    /// Black kings placements per white kings placement (the same in every men group).
    bk_n: u64,
    size: u64,
}

impl SliceIndex {
    /// The indexer of slice `material` on board `g`.
    pub fn new(material: Material, g: &'static Geometry) -> SliceIndex {
        let half = g.half() as u32;
        let s = g.squares as u32;
        let home = g.bottom_row;
        let middle = g.all & !g.top_row & !g.bottom_row;
        let black_men_ok = g.all & !g.bottom_row;
        let wm = material.white_men as u32;
        let bm = material.black_men as u32;
        let wk = material.white_kings as u32;
        let bk = material.black_kings as u32;
        let mid_n = s - 2 * half;
        let free_after_men = s.saturating_sub(wm + bm);
        let king_block = binom(free_after_men, wk) * binom(free_after_men.saturating_sub(wk), bk);
        let mut j_offset = [0u64; 11];
        let mut j_group = [0u64; 11];
        let mut acc = 0u64;
        let mut groups = 0u64;
        for j in 0..=half.min(wm) {
            j_offset[j as usize] = acc;
            j_group[j as usize] = groups;
            let mid = wm - j;
            let black = binom(s - half - mid, bm);
            let men_placements = binom(half, j) * binom(mid_n, mid) * black;
            groups += men_placements;
            acc += men_placements * king_block;
        }
        for j in (half.min(wm) + 1)..11 {
            j_offset[j as usize] = acc;
            j_group[j as usize] = groups;
        }
        SliceIndex {
            material,
            g,
            home,
            middle,
            black_men_ok,
            j_offset,
            king_block,
            j_group,
            bk_n: binom(free_after_men.saturating_sub(wk), bk),
            size: acc,
        }
    }

    /// Number of positions (placements) in the slice.
    #[inline]
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The slice this indexer serves.
    pub fn material(&self) -> Material {
        self.material
    }

    /// The index of `pos`, which must belong to this slice (its material must equal
    /// [`SliceIndex::material`]); the side to move is ignored.
    #[inline]
    pub fn index(&self, pos: &Position) -> u64 {
        let kings = pos.kings();
        let wmen = pos.white() & !kings;
        let bmen = pos.black() & !kings;
        let wk = pos.white() & kings;
        let bk = pos.black() & kings;
        let empty = self.g.all & !(wmen | bmen);
        let wk_rank = rank_in(wk, empty);
        let bk_rank = rank_in(bk, empty & !wk);
        let (j, men_idx) = self.men_rank(wmen, bmen);
        self.j_offset[j] + men_idx * self.king_block + wk_rank * self.bk_n + bk_rank
    }

    /// The men group (= index / [`SliceIndex::kings_per_group`]) of the positions with
    /// white men `wmen` and black men `bmen`, which must be a men placement of this slice.
    pub fn group_of(&self, wmen: u64, bmen: u64) -> u64 {
        let (j, men_idx) = self.men_rank(wmen, bmen);
        self.j_group[j] + men_idx
    }

    /// (white men on the home row, rank of the men placement among those with as many).
    #[inline]
    fn men_rank(&self, wmen: u64, bmen: u64) -> (usize, u64) {
        let m = &self.material;
        let s = self.g.squares as u32;
        let half = self.g.half() as u32;
        let home_men = wmen & self.home;
        let mid_men = wmen & self.middle;
        let j = home_men.count_ones();
        let mid = m.white_men as u32 - j;
        let mid_n = s - 2 * half;
        let home_rank = rank_in(home_men, self.home);
        let mid_rank = rank_in(mid_men, self.middle);
        let black_n = binom(s - half - mid, m.black_men as u32);
        let black_rank = rank_in(bmen, self.black_men_ok & !wmen);
        let men_idx = (home_rank * binom(mid_n, mid) + mid_rank) * black_n + black_rank;
        (j as usize, men_idx)
    }

    /// The position with index `idx` (< [`SliceIndex::size`]) and side to move `side`.
    pub fn unindex(&self, idx: u64, side: Color) -> Position {
        let (wmen, bmen) = self.men_of(idx / self.king_block);
        self.with_kings(wmen, bmen, idx % self.king_block, side)
    }

    /// As [`SliceIndex::unindex`], reusing the men placement decoded last time when `idx` has
    /// the same one (consecutive indices differ only in the kings): the fast way to walk a
    /// range of indices in order.
    #[inline]
    pub fn unindex_cached(&self, idx: u64, side: Color, cache: &mut MenCache) -> Position {
        let group = idx / self.king_block;
        if cache.group != group {
            let (w, b) = self.men_of(group);
            *cache = MenCache {
                group,
                wmen: w,
                bmen: b,
            };
        }
        self.with_kings(cache.wmen, cache.bmen, idx % self.king_block, side)
    }

    /// Number of king placements per men placement: indices `g * K .. (g + 1) * K` share
    /// the men placement number `g` (a "men group") and differ only in the kings.
    #[inline]
    pub fn kings_per_group(&self) -> u64 {
        self.king_block
    }

    /// Number of men placements (men groups): `size / kings_per_group`.
    pub fn men_groups(&self) -> u64 {
        // No kings placement fits (more pieces than squares): no positions, no groups.
        if self.king_block == 0 {
            0
        } else {
            self.j_group[10]
        }
    }

    /// A fast decoder of the kings of men group `group`.
    pub fn group_decoder(&self, group: u64) -> GroupDecoder {
        self.decoder_of_men(self.men_of(group))
    }

    /// The decoder of the group whose (white men, black men) are `men`
    /// ([`SliceIndex::group_of`] gives its number).
    fn decoder_of_men(&self, men: (u64, u64)) -> GroupDecoder {
        let mut empty = [0u8; 64];
        let mut n = 0u32;
        let mut e = self.g.all & !(men.0 | men.1);
        while e != 0 {
            empty[n as usize] = e.trailing_zeros() as u8;
            n += 1;
            e &= e - 1;
        }
        let m = &self.material;
        GroupDecoder {
            empty,
            n,
            white_kings: m.white_kings as u32,
            black_kings: m.black_kings as u32,
            bk_n: self.bk_n,
            empty_bb: self.g.all & !(men.0 | men.1),
            men,
            rules: RulesId::board_only(self.g.size),
        }
    }

    /// The kings ranker of the group whose (white men, black men) are `men`: what
    /// [`SliceIndex::decoder_of_men`] gives, without building the decoder.
    #[inline]
    pub fn ranker_of_men(&self, men: (u64, u64)) -> KingsRanker {
        KingsRanker {
            empty_bb: self.g.all & !(men.0 | men.1),
            bk_n: self.bk_n,
        }
    }

    /// The men of men-placement number `group` (= index / king placements per men placement):
    /// (white men, black men) bitboards.
    pub fn men_of(&self, group: u64) -> (u64, u64) {
        let m = &self.material;
        let s = self.g.squares as u32;
        let half = self.g.half() as u32;
        let mid_n = s - 2 * half;
        let idx = group * self.king_block;
        let mut j = 0u32;
        while j < half.min(m.white_men as u32) && self.j_offset[j as usize + 1] <= idx {
            j += 1;
        }
        let men_idx = group - self.j_offset[j as usize] / self.king_block;
        let mid = m.white_men as u32 - j;
        let black_n = binom(s - half - mid, m.black_men as u32);
        let black_rank = men_idx % black_n;
        let white_idx = men_idx / black_n;
        let mid_count = binom(mid_n, mid);
        let home_men = unrank_in(white_idx / mid_count, j, self.home);
        let mid_men = unrank_in(white_idx % mid_count, mid, self.middle);
        let wmen = home_men | mid_men;
        let bmen = unrank_in(black_rank, m.black_men as u32, self.black_men_ok & !wmen);
        (wmen, bmen)
    }

    #[inline]
    fn with_kings(&self, wmen: u64, bmen: u64, king_idx: u64, side: Color) -> Position {
        let m = &self.material;
        let bk_n = self.bk_n;
        let empty = self.g.all & !(wmen | bmen);
        let wk = unrank_in(king_idx / bk_n, m.white_kings as u32, empty);
        let bk = unrank_in(king_idx % bk_n, m.black_kings as u32, empty & !wk);
        Position::from_parts(
            wmen | wk,
            bmen | bk,
            wk | bk,
            side,
            RulesId::board_only(self.g.size),
        )
    }
}

/// The men placement decoded last by [`SliceIndex::unindex_cached`].
#[derive(Clone, Copy, Debug)]
pub struct MenCache {
    group: u64,
    wmen: u64,
    bmen: u64,
}

impl Default for MenCache {
    fn default() -> Self {
        MenCache {
            group: u64::MAX,
            wmen: 0,
            bmen: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{GEOMETRY_10, GEOMETRY_8};

    #[test]
    fn select_finds_the_nth_set_bit() {
        let x = 0b1011_0000_0000_0000_0101_0010u64 | (1 << 63);
        let bits: Vec<u64> = (0..x.count_ones()).map(|n| select(x, n)).collect();
        assert_eq!(
            bits,
            vec![1 << 1, 1 << 4, 1 << 6, 1 << 20, 1 << 21, 1 << 23, 1 << 63]
        );
    }

    /// Every rank of every subset of up to 4 of `0..64`, 5 of `0..50`, 8 of `0..32`: the
    /// subset unranked is ascending, inside `0..n`, and ranks back to the same number (the
    /// three-element table and the searches agree with the definition of the rank).
    #[test]
    fn unranking_inverts_the_colex_rank() {
        for (n, kmax) in [(64u32, 4u32), (50, 5), (32, 8), (10, 10)] {
            for k in 0..=kmax {
                for r in 0..binom(n, k) {
                    let mut out = [0u8; 16];
                    unrank_positions(r, k, n, &mut out);
                    let p = &out[..k as usize];
                    assert!(p.windows(2).all(|w| w[0] < w[1]), "{n} {k} {r}: {p:?}");
                    assert!(p.iter().all(|&x| u32::from(x) < n), "{n} {k} {r}: {p:?}");
                    let back: u64 = p
                        .iter()
                        .enumerate()
                        .map(|(i, &x)| binom(u32::from(x), i as u32 + 1))
                        .sum();
                    assert_eq!(back, r, "{n} {k}: {p:?}");
                }
            }
        }
        assert_eq!(COLEX3[0], 2 << 16 | 1 << 8);
        assert_eq!(COLEX3[TRIPLES - 1], 49 << 16 | 48 << 8 | 47);
    }

    #[test]
    fn binomials() {
        assert_eq!(binom(32, 2), 496);
        assert_eq!(binom(64, 32), 1_832_624_140_942_590_534);
        assert_eq!(binom(3, 5), 0);
    }

    #[test]
    fn king_slices_match_published_counts() {
        // ../shared/data/endgame-facts.tsv: C(32,a)*C(32-a,b) kings-only placements.
        let g = &GEOMETRY_8;
        assert_eq!(SliceIndex::new(Material::new(0, 1, 0, 1), g).size(), 992);
        assert_eq!(
            SliceIndex::new(Material::new(0, 3, 0, 2), g).size(),
            2_013_760
        );
        assert_eq!(
            SliceIndex::new(Material::new(0, 5, 0, 5), g).size(),
            16_257_084_480
        );
    }

    /// `with_one_more` ranks every placement with one king added as ranking it afresh, for
    /// every placement of the others and every empty square, both colours.
    #[test]
    fn a_row_with_one_more_king_ranks_as_afresh() {
        let g = &GEOMETRY_8;
        for m in [
            Material::new(1, 2, 1, 1),
            Material::new(0, 2, 0, 3),
            Material::new(2, 1, 1, 2),
            Material::new(0, 1, 0, 1),
            Material::new(1, 2, 2, 0),
        ] {
            let ix = SliceIndex::new(m, g);
            for color in [Color::White, Color::Black] {
                let mut less = m;
                match color {
                    Color::White => less.white_kings -= 1,
                    Color::Black if m.black_kings == 0 => continue,
                    Color::Black => less.black_kings -= 1,
                }
                let lx = SliceIndex::new(less, g);
                for grp in (0..ix.men_groups()).step_by(7) {
                    let dec = ix.group_decoder(grp);
                    let rank = dec.ranker();
                    let (wm, bm) = dec.men();
                    let mut checked = 0;
                    for (wk, bk) in lx.group_decoder(grp).kings_from(0) {
                        let row = rank.with_one_more(wk, bk, color);
                        let mut xs = g.all & !(wm | bm | wk | bk);
                        while xs != 0 {
                            let x = xs.trailing_zeros();
                            xs &= xs - 1;
                            let (w, b) = match color {
                                Color::White => (wk | 1 << x, bk),
                                Color::Black => (wk, bk | 1 << x),
                            };
                            assert_eq!(row.rank(x), rank.rank(w, b), "{m} {color:?} {x}");
                            checked += 1;
                        }
                        // The run: the j-th of its squares numbered first + j, and no
                        // square left out that the rule says belongs to it.
                        let last = matches!(color, Color::Black) || m.black_kings == 0;
                        match row.run() {
                            None => assert!(!last, "{m} {color:?}: no run"),
                            Some((first, run)) => {
                                assert!(last, "{m} {color:?}: a run where none is");
                                let own = match color {
                                    Color::White => wk,
                                    Color::Black => bk,
                                };
                                let under = (own & own.wrapping_neg()).wrapping_sub(1);
                                let free = g.all & !(wm | bm | wk | bk) & under;
                                assert_eq!(run, free, "{m} {color:?}");
                                let (mut xs, mut j) = (run, 0);
                                while xs != 0 {
                                    let x = xs.trailing_zeros();
                                    xs &= xs - 1;
                                    assert_eq!(row.rank(x), first + j, "{m} {color:?} {x}");
                                    j += 1;
                                }
                            }
                        }
                    }
                    assert!(checked > 0);
                }
            }
        }
    }

    /// `kings_rank_after` equals ranking the moved placement afresh, for every king step of
    /// every placement of slices with several kings of both colours, and for a king put on
    /// any free square (the bit solver's moves across first copies), past none, one or two
    /// kings of its colour and any of the other's, in every seventh placement.
    #[test]
    fn kings_rank_after_a_move_is_the_rank_of_the_moved_placement() {
        let g = &GEOMETRY_8;
        for m in [
            Material::new(1, 2, 1, 1),
            Material::new(0, 2, 0, 2),
            Material::new(1, 1, 0, 3),
            Material::new(0, 3, 0, 2),
        ] {
            let ix = SliceIndex::new(m, g);
            let (mut steps, mut passing) = (0u64, [0u64; 3]);
            for grp in 0..ix.men_groups() {
                let dec = ix.group_decoder(grp);
                let (wm, bm) = dec.men();
                for r in 0..ix.kings_per_group() {
                    let (wk, bk) = dec.kings(r);
                    let occ = wm | bm | wk | bk;
                    let mut ks = wk | bk;
                    while ks != 0 {
                        let from = ks.trailing_zeros() as u8;
                        ks &= ks - 1;
                        let own = if wk >> from & 1 != 0 { wk } else { bk };
                        let mut adj = 0u64;
                        for d in crate::board::Dir::ALL {
                            let to = g.step(from, d);
                            if to != crate::board::NONE {
                                adj |= 1 << to;
                            }
                        }
                        let far = if r % 7 == 0 { g.all } else { 0 };
                        let mut tos = (adj | far) & !occ;
                        while tos != 0 {
                            let to = tos.trailing_zeros() as u8;
                            tos &= tos - 1;
                            let moved = (1u64 << from) | (1u64 << to);
                            let want = if wk >> from & 1 != 0 {
                                dec.kings_rank(wk ^ moved, bk)
                            } else {
                                dec.kings_rank(wk, bk ^ moved)
                            };
                            assert_eq!(
                                dec.kings_rank_after(r, wk, bk, from, to),
                                want,
                                "{m} {from}->{to}"
                            );
                            let (lo, hi) = (from.min(to), from.max(to));
                            let between = ((1u64 << hi) - 1) & !((2u64 << lo) - 1);
                            if adj >> to & 1 != 0 {
                                steps += 1;
                            }
                            passing[((own & between).count_ones() as usize).min(2)] += 1;
                        }
                    }
                }
            }
            assert!(steps > 1000, "{m}");
            // Past two of its colour only where a colour has three kings.
            let most = usize::from(m.white_kings.max(m.black_kings)).min(3);
            assert!(passing[..most].iter().all(|&n| n > 100), "{m} {passing:?}");
        }
    }

    /// `kings_from(start)` yields what `kings` gives for every number from `start` to the
    /// last, on both boards, for kings of one colour, of both and of neither, from every start
    /// of small groups and from a few starts of larger ones.
    #[test]
    fn kings_from_enumerates_placements_in_order() {
        let small = [
            Material::new(1, 0, 1, 0),
            Material::new(0, 1, 0, 1),
            Material::new(2, 0, 0, 2),
            Material::new(0, 3, 1, 0),
            Material::new(1, 1, 0, 2),
            Material::new(0, 2, 1, 1),
        ];
        let cases = small
            .iter()
            .map(|&m| (&GEOMETRY_10, m))
            .chain(small.iter().map(|&m| (&GEOMETRY_8, m)))
            .chain([
                (&GEOMETRY_8, Material::new(1, 2, 1, 2)),
                (&GEOMETRY_8, Material::new(0, 1, 0, 3)),
            ]);
        let mut checked = 0u64;
        for (g, m) in cases {
            {
                let ix = SliceIndex::new(m, g);
                let kk = ix.kings_per_group();
                for grp in [0, ix.men_groups() / 2, ix.men_groups() - 1] {
                    let dec = ix.group_decoder(grp);
                    let all: Vec<(u64, u64)> = dec.kings_from(0).collect();
                    assert_eq!(all.len() as u64, kk, "{m}");
                    checked += kk;
                    for (r, &k) in all.iter().enumerate() {
                        assert_eq!(k, dec.kings(r as u64), "{m} group {grp} placement {r}");
                    }
                    let starts: Vec<u64> = if kk <= 600 {
                        (0..=kk).collect()
                    } else {
                        vec![1, kk / 3, kk / 2 + 7, kk - 1, kk]
                    };
                    for s in starts {
                        let from: Vec<(u64, u64)> = dec.kings_from(s).collect();
                        assert_eq!(&from[..], &all[s as usize..], "{m} group {grp} from {s}");
                    }
                }
            }
        }
        assert!(checked > 500_000, "{checked}");
    }

    #[test]
    fn a_slice_with_more_pieces_than_squares_is_empty() {
        // Such names parse (`english-9999`); indexing them must not divide by zero.
        let m = Material::parse("9999").unwrap();
        let ix = SliceIndex::new(m, &GEOMETRY_8);
        assert_eq!((ix.size(), ix.men_groups()), (0, 0));
    }

    #[test]
    fn round_trip_small_slices_exhaustively() {
        for g in [&GEOMETRY_8, &GEOMETRY_10] {
            for m in Material::solve_order(3, 12) {
                for mat in [m, m.mirror()] {
                    let ix = SliceIndex::new(mat, g);
                    let mut seen = std::collections::HashSet::new();
                    let mut cache = MenCache::default();
                    let mut dec = ix.group_decoder(0);
                    for i in 0..ix.size() {
                        let p = ix.unindex(i, Color::White);
                        let grp = i / ix.kings_per_group();
                        if i % ix.kings_per_group() == 0 {
                            dec = ix.group_decoder(grp);
                        }
                        assert_eq!(p, dec.position(i % ix.kings_per_group(), Color::White));
                        assert_eq!(p, ix.unindex_cached(i, Color::White, &mut cache));
                        assert_eq!(p.material(), mat);
                        assert_eq!(ix.index(&p), i, "{mat} {i}");
                        let (wm, bm) = (p.white() & !p.kings(), p.black() & !p.kings());
                        assert_eq!(ix.group_of(wm, bm), grp);
                        assert_eq!(ix.decoder_of_men((wm, bm)).men(), dec.men());
                        let (wk, bk) = (p.white() & p.kings(), p.black() & p.kings());
                        let r = ix.ranker_of_men((wm, bm)).rank(wk, bk);
                        assert_eq!(r, i % ix.kings_per_group(), "{mat} {i}");
                        assert_eq!(dec.ranker().rank(wk, bk), r);
                        assert!(seen.insert((p.white(), p.black(), p.kings())));
                        let men = p.occupied() & !p.kings();
                        assert_eq!(p.white() & men & g.top_row, 0);
                        assert_eq!(p.black() & men & g.bottom_row, 0);
                    }
                }
            }
        }
    }
}
