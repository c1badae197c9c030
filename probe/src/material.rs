//! Material signatures (slices): how many men and kings each side has.

use std::fmt;

/// A material signature: the slice a position belongs to. Written as four digits, white men,
/// white kings, black men, black kings (`1011` = one white man against a black man and a black
/// king), the convention of `../shared/data/endgame-facts.tsv` and of table file names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Material {
    pub white_men: u8,
    pub white_kings: u8,
    pub black_men: u8,
    pub black_kings: u8,
}

impl Material {
    /// From the four counts.
    pub const fn new(white_men: u8, white_kings: u8, black_men: u8, black_kings: u8) -> Self {
        Material {
            white_men,
            white_kings,
            black_men,
            black_kings,
        }
    }

    /// Total number of pieces.
    pub fn pieces(&self) -> u32 {
        (self.white_men + self.white_kings + self.black_men + self.black_kings) as u32
    }

    /// Total number of men, both colours.
    pub fn men(&self) -> u32 {
        (self.white_men + self.black_men) as u32
    }

    /// White's and Black's piece counts.
    pub fn white(&self) -> u32 {
        (self.white_men + self.white_kings) as u32
    }
    /// Black's piece count.
    pub fn black(&self) -> u32 {
        (self.black_men + self.black_kings) as u32
    }

    /// The colour-swapped signature (`1011` -> `1110`).
    pub fn mirror(&self) -> Material {
        Material::new(
            self.black_men,
            self.black_kings,
            self.white_men,
            self.white_kings,
        )
    }

    /// Whether this is the stored one of the pair {self, mirror}: the smaller of the two as
    /// four digits. Tables exist only for canonical signatures; the others are read through the
    /// colour-reversed position.
    pub fn is_canonical(&self) -> bool {
        *self <= self.mirror()
    }

    /// Parse four digits (`"1011"`).
    pub fn parse(s: &str) -> Option<Material> {
        let b = s.as_bytes();
        if b.len() != 4 || !b.iter().all(|c| c.is_ascii_digit()) {
            return None;
        }
        Some(Material::new(
            b[0] - b'0',
            b[1] - b'0',
            b[2] - b'0',
            b[3] - b'0',
        ))
    }

    /// Every canonical signature with both sides present and 2..=`max_pieces` pieces (at most
    /// `max_per_side` a side), in an order where each slice comes after every slice its moves
    /// can lead to out of the slice: fewer pieces first (captures), then fewer men
    /// (promotions).
    pub fn solve_order(max_pieces: u32, max_per_side: u32) -> Vec<Material> {
        let mut v = Vec::new();
        for n in 2..=max_pieces {
            for w in 1..n {
                let b = n - w;
                if w > max_per_side || b > max_per_side || w > 9 || b > 9 {
                    continue;
                }
                for wm in 0..=w {
                    for bm in 0..=b {
                        let m = Material::new(wm as u8, (w - wm) as u8, bm as u8, (b - bm) as u8);
                        if m.is_canonical() {
                            v.push(m);
                        }
                    }
                }
            }
        }
        v.sort_by_key(|m| (m.pieces(), m.men(), *m));
        v
    }
}

impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}{}{}",
            self.white_men, self.white_kings, self.black_men, self.black_kings
        )
    }
}
