//! Material signatures (slices): how many men and kings each side has.

use std::fmt;

/// A material signature: the slice a position belongs to. Written as four digits, white men,
/// white kings, black men, black kings (`1011` = one white man against a black man and a black
/// king), the convention of `../shared/data/endgame-facts.tsv` and of table file names. When
/// a count is above 9 the four counts are written in decimal separated by dots instead
/// (`12.0.12.0`, the English start position), so that every name reads one way; a slice whose
/// counts are all at most 9 is always written as four digits.
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

    /// The counts in file order (white men, white kings, black men, black kings), as table
    /// headers and file names hold them.
    pub const fn counts(&self) -> [u8; 4] {
        [
            self.white_men,
            self.white_kings,
            self.black_men,
            self.black_kings,
        ]
    }

    /// The slice of counts in file order ([`Material::counts`]).
    pub const fn from_counts(c: [u8; 4]) -> Self {
        Material::new(c[0], c[1], c[2], c[3])
    }

    /// Total number of pieces.
    pub fn pieces(&self) -> u32 {
        self.white_men as u32
            + self.white_kings as u32
            + self.black_men as u32
            + self.black_kings as u32
    }

    /// Total number of men, both colours.
    pub fn men(&self) -> u32 {
        self.white_men as u32 + self.black_men as u32
    }

    /// White's and Black's piece counts.
    pub fn white(&self) -> u32 {
        self.white_men as u32 + self.white_kings as u32
    }
    /// Black's piece count.
    pub fn black(&self) -> u32 {
        self.black_men as u32 + self.black_kings as u32
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

    /// The canonical slices, other than this one, that one move from a position of this
    /// slice can reach, with either side to move: a man crowned by a quiet move, or a capture
    /// of any number of the opponent's men and kings, the capturing man crowned or not
    /// (whatever the rules of crowning during a capture). Slices where a side has no pieces
    /// left (game over) are not listed. A superset under every variant's rules (not every
    /// listed slice need be reachable); sorted.
    pub fn successors(&self) -> Vec<Material> {
        let c = self.counts();
        let mut out = Vec::new();
        // `mover`: index of the moving side's men in `c` (its kings follow).
        for (mover, opp) in [(0, 2), (2, 0)] {
            let crowned = |mut d: [u8; 4]| {
                d[mover] -= 1;
                d[mover + 1] += 1;
                d
            };
            let mut after = Vec::new();
            if c[mover] > 0 {
                after.push(crowned(c));
            }
            for men in 0..=c[opp] {
                for kings in 0..=c[opp + 1] {
                    if men + kings == 0 {
                        continue;
                    }
                    let mut d = c;
                    d[opp] -= men;
                    d[opp + 1] -= kings;
                    after.push(d);
                    if c[mover] > 0 {
                        after.push(crowned(d));
                    }
                }
            }
            for d in after {
                let m = Material::from_counts(d);
                if m.white() > 0 && m.black() > 0 {
                    out.push(if m.is_canonical() { m } else { m.mirror() });
                }
            }
        }
        out.sort();
        out.dedup();
        out.retain(|m| *m != self.canonical());
        out
    }

    /// The stored one of the pair {self, mirror} (see [`Material::is_canonical`]).
    pub fn canonical(&self) -> Material {
        if self.is_canonical() {
            *self
        } else {
            self.mirror()
        }
    }

    /// Parse a slice name as [`Display`](fmt::Display) writes it: four digits (`"1011"`), or,
    /// when some count is above 9, four decimal counts of at most 99 separated by dots
    /// (`"12.0.12.0"`). Any other spelling (`"1.0.1.1"`, `"012.0.12.0"`) is refused, so that
    /// one slice has one name.
    pub fn parse(s: &str) -> Option<Material> {
        let b = s.as_bytes();
        if b.len() == 4 && b.iter().all(|c| c.is_ascii_digit()) {
            return Some(Material::new(
                b[0] - b'0',
                b[1] - b'0',
                b[2] - b'0',
                b[3] - b'0',
            ));
        }
        let mut c = [0u8; 4];
        let mut parts = s.split('.');
        for slot in &mut c {
            let p = parts.next()?;
            if p.is_empty() || p.len() > 2 || !p.bytes().all(|d| d.is_ascii_digit()) {
                return None;
            }
            *slot = p.parse().ok()?;
        }
        if parts.next().is_some() {
            return None;
        }
        let m = Material::from_counts(c);
        (m.to_string() == s).then_some(m)
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
        let c = self.counts();
        let sep = if c.iter().all(|&n| n <= 9) { "" } else { "." };
        write!(f, "{}{sep}{}{sep}{}{sep}{}", c[0], c[1], c[2], c[3])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::SliceIndex;
    use crate::movegen::{legal_moves, Counting};
    use crate::rules::{Color, Rules};
    use crate::test_rng::Rng;

    /// Every move of random positions of every slice up to 5 pieces, under every preset,
    /// leads to the slice itself or to one of [`Material::successors`]; and every listed
    /// slice has both sides present and is canonical.
    #[test]
    fn successors_cover_every_move() {
        let mut rng = Rng(0x5eed);
        let mut moves = Vec::new();
        let mut reached = 0u64;
        for rules in Rules::PRESETS {
            let g = rules.geometry();
            for m in Material::solve_order(5, rules.max_pieces_per_side()) {
                let succ = m.successors();
                assert!(succ
                    .iter()
                    .all(|s| s.is_canonical() && s.white() > 0 && s.black() > 0));
                assert!(
                    succ.windows(2).all(|w| w[0] < w[1]),
                    "{m}: sorted, no repeats"
                );
                let ix = SliceIndex::new(m, g);
                if ix.size() == 0 {
                    continue;
                }
                for k in 0..200 {
                    let side = if k % 2 == 0 {
                        Color::White
                    } else {
                        Color::Black
                    };
                    let pos = ix.unindex(rng.next() % ix.size(), side);
                    legal_moves(rules, &pos, Counting::Unique, &mut moves);
                    for mv in &moves {
                        let after = mv.apply_unchecked(&pos).material();
                        if after.white() == 0 || after.black() == 0 || after.canonical() == m {
                            continue;
                        }
                        reached += 1;
                        assert!(
                            succ.contains(&after.canonical()),
                            "{m}: a move reaches {after}, not among {succ:?}"
                        );
                    }
                }
            }
        }
        assert!(reached > 10_000, "only {reached} moves left their slice");
    }

    /// Issue 22 (8): a slice with a count above 9 is written with dots, so that the English
    /// start position (12 men a side) reads `12.0.12.0`, not the ambiguous `120120` (which
    /// could be 1,2,0,120 or 12,0,12,0); four digits stay four digits; parse reads back
    /// exactly what Display writes and nothing else.
    #[test]
    fn slice_names_read_one_way() {
        let start = Material::new(12, 0, 12, 0);
        assert_eq!(start.to_string(), "12.0.12.0");
        assert_eq!(Material::parse("12.0.12.0"), Some(start));
        assert_eq!(Material::new(1, 0, 1, 1).to_string(), "1011");
        assert_eq!(Material::new(0, 10, 9, 0).to_string(), "0.10.9.0");
        assert_eq!(Material::new(20, 0, 20, 0).pieces(), 40);
        for m in [start, Material::new(0, 10, 9, 0), Material::new(9, 9, 9, 9)] {
            assert_eq!(Material::parse(&m.to_string()), Some(m));
        }
        for bad in [
            "120120",
            "1.0.1.1",
            "012.0.12.0",
            "12.0.12",
            "12.0.12.0.0",
            "100.0.1.0",
            "12..12.0",
            "12.0.12.0.",
        ] {
            assert_eq!(Material::parse(bad), None, "{bad}");
        }
        // The probe error names the start position's slice that way.
        let rules = Rules::ENGLISH;
        let pos = crate::Position::start(&rules);
        assert_eq!(pos.material().to_string(), "12.0.12.0");
        let e = crate::Tablebase::new(rules)
            .probe_wld(&pos)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("no wld table for slice 12.0.12.0 (24 pieces)"),
            "{e}"
        );
        // File names: a dotted slice name is found, an ambiguous one is not.
        assert_eq!(
            crate::format::parse_file_name("english-0.10.1.0.wld", "english"),
            Some((Material::new(0, 10, 1, 0), crate::format::ValueKind::Wld))
        );
        assert_eq!(
            crate::format::parse_file_name("english-01010.wld", "english"),
            None
        );
    }

    #[test]
    fn successors_of_one_slice() {
        // 1011, a white man against a black man and king. White to move: crowns (0111),
        // takes the man (1001, stored as 0110) or the king (1010), crowning or not (0101,
        // 0110); takes both (no black pieces: not listed). Black to move: crowns (1002,
        // stored as 0210); takes the man (no white pieces).
        let got = Material::new(1, 0, 1, 1).successors();
        let want: Vec<Material> = ["0101", "0110", "0111", "0210", "1001", "1010"]
            .iter()
            .map(|s| Material::parse(s).unwrap().canonical())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(got, want);
    }
}
