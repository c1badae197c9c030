//! Board geometry shared by 8x8 and 10x10 (design decision 2).
//!
//! Squares are numbered 1..=N*N/2 in reading order (variants.md); internally square `n` is bit
//! `n - 1` of a `u64` bitboard. Variants that number a mirrored board (Italian, Spanish) use
//! this same geometry and translate numbers at the edge ([`crate::rules::Numbering`]). Row 0 is the top (Black's home, White's crowning row); column 0
//! is the left. Neighbours are precomputed per square and direction, so move generation is one
//! table look-up per step on any board size; a whole set of squares steps at once by two
//! masked shifts ([`Geometry::step_set`]).

/// A diagonal direction. `UpLeft`/`UpRight` point toward row 0 (White's forward directions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    UpLeft = 0,
    UpRight = 1,
    DownLeft = 2,
    DownRight = 3,
}

impl Dir {
    /// All four directions.
    pub const ALL: [Dir; 4] = [Dir::UpLeft, Dir::UpRight, Dir::DownLeft, Dir::DownRight];

    /// The opposite direction.
    #[inline]
    pub fn reverse(self) -> Dir {
        match self {
            Dir::UpLeft => Dir::DownRight,
            Dir::UpRight => Dir::DownLeft,
            Dir::DownLeft => Dir::UpRight,
            Dir::DownRight => Dir::UpLeft,
        }
    }
}

/// Marks "no square" in the neighbour table.
pub const NONE: u8 = u8::MAX;

/// The geometry of one board size.
#[derive(Debug)]
pub struct Geometry {
    /// Board side (8 or 10).
    pub size: u8,
    /// Number of playable squares (32 or 50).
    pub squares: u8,
    /// Bitboard of all playable squares.
    pub all: u64,
    /// Bitboard of row 0 (White's crowning row).
    pub top_row: u64,
    /// Bitboard of row size-1 (Black's crowning row).
    pub bottom_row: u64,
    /// `neighbour[dir][sq]`: the adjacent square in that direction, or [`NONE`].
    neighbour: [[u8; 64]; 4],
    /// `shift[dir][parity]`: the squares of rows of that parity (row 0 even) with a
    /// neighbour in `dir`, and the distance in square numbers to it, the same for each of
    /// them (toward lower numbers for the up directions). See [`Geometry::step_set`].
    shift: [[(u64, u8); 2]; 4],
    /// `ray[dir][sq]`: the squares beyond `sq` in `dir` to the edge, `sq` excluded. Square
    /// numbers fall along the up directions and rise along the down ones, so the nearest
    /// square of a set on a ray is its highest (up) or lowest (down) bit.
    ray: [[u64; 64]; 4],
}

const fn build(size: u8) -> Geometry {
    let half = size / 2;
    let squares = size * half;
    let mut neighbour = [[NONE; 64]; 4];
    let mut shift = [[(0u64, 0u8); 2]; 4];
    let mut s = 0u8;
    while s < squares {
        let row = (s / half) as i32;
        let k = (s % half) as i32;
        let col = if row % 2 == 0 { 2 * k + 1 } else { 2 * k };
        let deltas = [(-1i32, -1i32), (-1, 1), (1, -1), (1, 1)];
        let mut d = 0;
        while d < 4 {
            let r = row + deltas[d].0;
            let c = col + deltas[d].1;
            if r >= 0 && r < size as i32 && c >= 0 && c < size as i32 {
                let t = (r * half as i32 + c / 2) as u8;
                neighbour[d][s as usize] = t;
                let parity = (row % 2) as usize;
                let by = t.abs_diff(s);
                // One distance per direction and row parity: what makes `step_set` two
                // shifts (checked here, at compile time, for both boards).
                assert!(shift[d][parity].0 == 0 || shift[d][parity].1 == by);
                shift[d][parity] = (shift[d][parity].0 | 1u64 << s, by);
            }
            d += 1;
        }
        s += 1;
    }
    // Rays: from the far end of each diagonal inward (the neighbour tables are complete).
    let mut ray = [[0u64; 64]; 4];
    let mut d = 0;
    while d < 4 {
        let mut s = 0u8;
        while s < squares {
            let mut t = neighbour[d][s as usize];
            while t != NONE {
                ray[d][s as usize] |= 1u64 << t;
                t = neighbour[d][t as usize];
            }
            s += 1;
        }
        d += 1;
    }
    let all = if squares == 64 {
        u64::MAX
    } else {
        (1u64 << squares) - 1
    };
    let top_row = (1u64 << half) - 1;
    let bottom_row = top_row << (squares - half);
    Geometry {
        size,
        squares,
        all,
        top_row,
        bottom_row,
        neighbour,
        shift,
        ray,
    }
}

/// The 8x8 board (32 squares).
pub static GEOMETRY_8: Geometry = build(8);
/// The 10x10 board (50 squares).
pub static GEOMETRY_10: Geometry = build(10);

impl Geometry {
    /// The geometry for a board side of 8 or 10 (anything else falls back to 8; [`Rules`]
    /// presets only use those two).
    ///
    /// [`Rules`]: crate::rules::Rules
    pub fn for_size(size: u8) -> &'static Geometry {
        if size == 10 {
            &GEOMETRY_10
        } else {
            &GEOMETRY_8
        }
    }

    /// Squares per row (4 or 5).
    #[inline]
    pub fn half(&self) -> u8 {
        self.size / 2
    }

    /// The neighbour of internal square `sq` (0-based) in direction `d`, or [`NONE`].
    #[inline(always)]
    pub fn step(&self, sq: u8, d: Dir) -> u8 {
        self.neighbour[d as usize][sq as usize]
    }

    /// The neighbours in direction `d` of all the squares of `bb` at once: the union of
    /// [`Geometry::step`] over its squares, those without a neighbour there left out. Two
    /// masked shifts (the distance to a diagonal neighbour depends only on the direction
    /// and the row's parity).
    #[inline(always)]
    pub fn step_set(&self, bb: u64, d: Dir) -> u64 {
        let [(even, by_even), (odd, by_odd)] = self.shift[d as usize];
        match d {
            Dir::UpLeft | Dir::UpRight => (bb & even) >> by_even | (bb & odd) >> by_odd,
            Dir::DownLeft | Dir::DownRight => (bb & even) << by_even | (bb & odd) << by_odd,
        }
    }

    /// Sliding from `sq` in direction `d` over empty squares (`occ` the occupied ones):
    /// the empty squares passed, and the first occupied square met ([`NONE`] at the edge).
    /// Two table reads and a bit scan, whatever the distance.
    #[inline(always)]
    pub fn slide(&self, sq: u8, d: Dir, occ: u64) -> (u64, u8) {
        let ray = self.ray[d as usize][sq as usize];
        let hit = ray & occ;
        if hit == 0 {
            return (ray, NONE);
        }
        let first = match d {
            Dir::UpLeft | Dir::UpRight => 63 - hit.leading_zeros() as u8,
            Dir::DownLeft | Dir::DownRight => hit.trailing_zeros() as u8,
        };
        (
            ray & !self.ray[d as usize][first as usize] & !(1u64 << first),
            first,
        )
    }

    /// (row, column) of internal square `sq`.
    pub fn coords(&self, sq: u8) -> (u8, u8) {
        let half = self.half();
        let row = sq / half;
        let k = sq % half;
        (
            row,
            if row.is_multiple_of(2) {
                2 * k + 1
            } else {
                2 * k
            },
        )
    }

    /// Mirror a bitboard through the centre of the board (rotation by 180 degrees): square
    /// `s` goes to `squares - 1 - s`.
    #[inline]
    pub fn rotate(&self, bb: u64) -> u64 {
        bb.reverse_bits() >> (64 - self.squares as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_numbering_matches_variants_md() {
        let g = &GEOMETRY_8;
        // 1 = (0,1), 4 = (0,7), 5 = (1,0), 29 = (7,0), 32 = (7,6)
        assert_eq!(g.coords(0), (0, 1));
        assert_eq!(g.coords(3), (0, 7));
        assert_eq!(g.coords(4), (1, 0));
        assert_eq!(g.coords(28), (7, 0));
        assert_eq!(g.coords(31), (7, 6));
        let g = &GEOMETRY_10;
        // 1 = (0,1), 5 = (0,9), 6 = (1,0), 46 = (9,0), 50 = (9,8)
        assert_eq!(g.coords(0), (0, 1));
        assert_eq!(g.coords(4), (0, 9));
        assert_eq!(g.coords(5), (1, 0));
        assert_eq!(g.coords(45), (9, 0));
        assert_eq!(g.coords(49), (9, 8));
    }

    /// `step_set` is `step` applied to every square of a set, on both boards: each square
    /// alone, and sets of them (it is a union, so pairs check that shifts do not mix).
    #[test]
    fn step_set_is_step_on_every_square() {
        for g in [&GEOMETRY_8, &GEOMETRY_10] {
            let one = |s: u8, d: Dir| match g.step(s, d) {
                NONE => 0,
                t => 1u64 << t,
            };
            for d in Dir::ALL {
                assert_eq!(g.step_set(0, d), 0);
                assert_eq!(g.step_set(!g.all, d), 0, "no square off the board moves in");
                let mut whole = 0;
                for s in 0..g.squares {
                    assert_eq!(g.step_set(1 << s, d), one(s, d), "{} {s} {d:?}", g.size);
                    whole |= one(s, d);
                    for s2 in s + 1..g.squares {
                        assert_eq!(g.step_set(1 << s | 1 << s2, d), one(s, d) | one(s2, d));
                    }
                }
                assert_eq!(g.step_set(g.all, d), whole);
            }
        }
    }

    /// `slide` is `step` repeated until an occupied square or the edge, on both boards, for
    /// every square, direction and a few thousand occupancies.
    #[test]
    fn slide_is_step_repeated() {
        let mut rng = crate::test_rng::Rng(7);
        for g in [&GEOMETRY_8, &GEOMETRY_10] {
            for k in 0..4000 {
                // Sparse to crowded boards.
                let mut occ = rng.next() & g.all;
                for _ in 0..k % 4 {
                    occ &= rng.next();
                }
                for s in 0..g.squares {
                    for d in Dir::ALL {
                        let (mut empty, mut t) = (0u64, g.step(s, d));
                        while t != NONE && occ >> t & 1 == 0 {
                            empty |= 1 << t;
                            t = g.step(t, d);
                        }
                        assert_eq!(
                            g.slide(s, d, occ),
                            (empty, t),
                            "{} {s} {d:?} {occ:x}",
                            g.size
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn neighbours_are_diagonal_and_symmetric() {
        for g in [&GEOMETRY_8, &GEOMETRY_10] {
            for s in 0..g.squares {
                for d in Dir::ALL {
                    let t = g.step(s, d);
                    if t != NONE {
                        let (r0, c0) = g.coords(s);
                        let (r1, c1) = g.coords(t);
                        assert_eq!((r0 as i32 - r1 as i32).abs(), 1);
                        assert_eq!((c0 as i32 - c1 as i32).abs(), 1);
                        assert_eq!(g.step(t, d.reverse()), s);
                    }
                }
            }
        }
        // 8x8: square 18 (internal 17) neighbours 14, 15, 22, 23.
        let g = &GEOMETRY_8;
        assert_eq!(g.step(17, Dir::UpLeft), 13);
        assert_eq!(g.step(17, Dir::UpRight), 14);
        assert_eq!(g.step(17, Dir::DownLeft), 21);
        assert_eq!(g.step(17, Dir::DownRight), 22);
        assert_eq!(
            g.step_set(1 << 17 | 1 << 31, Dir::UpLeft),
            1 << 13 | 1 << 26
        );
        assert_eq!(g.rotate(1), 1 << 31);
        assert_eq!(GEOMETRY_10.rotate(1 << 49), 1);
    }
}
