//! PDN FEN: `<side>:W<white pieces>:B<black pieces>` (variants.md, "Board, squares,
//! notation"). Pieces are square numbers separated by commas, kings prefixed with `K`,
//! ranges `a-b` allowed, either list may be empty (`W:W18:B`).
//!
//! Square numbers are those of the variant's [`Numbering`]: [`parse`] reads them so, and
//! [`write_for`] writes them so (Italian and Spanish number their mirrored boards). [`write()`]
//! writes the standard numbering, which is the internal one.
//!
//! Squares may also be written algebraically, as Russian players and pydraughts write them:
//! `W:Wh6:Bg7,c5,d2`, kings `Kh6`. Files `a`.. from White's left, ranks `1`.. from White's
//! side, on the board the variant is played on (8x8: `a1`-`h8`, 10x10: `a1`-`j10`; `a1`
//! is a playable dark square on the standard board, a light one on the mirrored board of
//! Italian and Spanish, whose `b1` is playable). A light square is
//! [`FenError::LightSquare`], a square off the board [`FenError::OffBoardSquare`].
//! [`write_algebraic`] writes them; [`write_customary`] writes each variant as its players do
//! ([`Notation`]: algebraic for Russian, numbers for the others).

use crate::position::{Position, PositionError};
use crate::rules::{Color, Numbering, Rules};

/// Input kept in an error: at most 24 characters (`...` marks a cut), so that a hostile
/// megabyte of text gives a one-line message and the error itself stays small.
pub(crate) fn clip(text: &str) -> String {
    if text.chars().count() <= 24 {
        text.to_string()
    } else {
        format!("{}...", text.chars().take(21).collect::<String>())
    }
}

/// Why a string is not a PDN FEN position of the variant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    /// The text is empty (or only spaces).
    #[error("empty FEN")]
    Empty,
    /// The first field is not `W` or `B`.
    #[error("side to move must be W or B, found {0:?}")]
    BadSideToMove(String),
    /// Not two or three `:`-separated fields (after any `[FEN "..."]` tag and trailing
    /// move counters): the side to move, then each colour's piece list (a colour with no
    /// pieces may be left out).
    #[error(
        "expected `side:Wpieces:Bpieces` (fields separated by ':'; a colour with no pieces \
         may be left out), found {0} field{s}",
        s = if *.0 == 1 { "" } else { "s" }
    )]
    FieldCount(usize),
    /// A piece list that does not start with its colour.
    #[error("piece list {0:?} must start with W or B")]
    BadColorField(String),
    /// The same colour's piece list given twice.
    #[error("the {0} piece list appears twice")]
    DuplicateColor(char),
    /// A square that is not a number.
    #[error("{0:?} is not a square number")]
    BadSquare(String),
    /// A square number off the board.
    #[error("square {square} is not on the board: its squares are numbered from 1 to {max}")]
    SquareOutOfRange {
        /// The number given.
        square: u32,
        /// The board's largest square number.
        max: u32,
    },
    /// A square listed twice (in one list or in both).
    #[error("square {0} is listed twice")]
    DuplicateSquare(u32),
    /// A range `a-b` with `a > b`.
    #[error("range {0:?} is not ascending")]
    BadRange(String),
    /// An algebraic square (`c3`) that names a light square, where no piece stands.
    #[error("{0:?} is a light square: pieces stand on the dark squares")]
    LightSquare(String),
    /// An algebraic square whose file or rank is beyond the board (`i1` or `a9` on 8x8).
    #[error(
        "{square:?} is not on the {board}x{board} board (files a-{last_file}, ranks 1-{board})"
    )]
    OffBoardSquare {
        /// The square as given.
        square: String,
        /// The board's side (8 or 10).
        board: u8,
        /// The board's last file letter.
        last_file: char,
    },
    /// A range of algebraic squares (`a1-c3`): ranges are of square numbers only.
    #[error("range {0:?} is of algebraic squares: ranges are of square numbers only")]
    AlgebraicRange(String),
    /// The squares parse but the position is not legal (a man on its crowning row, too many
    /// pieces, ...).
    #[error(transparent)]
    Position(#[from] PositionError),
}

/// How squares are written in positions and moves: a variant's players' way by default
/// ([`Notation::of`]), the other on request ([`Notation::parse`]: `numeric` or `algebraic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notation {
    /// Square numbers of the variant's [`Numbering`] (`W:W18,K31:B5`, moves `22-17`, `26x17`).
    Numbers,
    /// Algebraic squares (`W:Wh6:Bg7,c5,d2`, moves `c3-d4`, `c3:e5`).
    Algebraic,
}

impl Notation {
    /// The notation players of `rules` write: algebraic for Russian and Brazilian draughts
    /// (their rule fields, whatever the blocked-side option), numbers for every other variant
    /// (PDN's numbers of English, International, pool, ...; the mirrored boards' numbers of
    /// Italian and Spanish).
    pub fn of(rules: &Rules) -> Notation {
        let algebraic = [Rules::RUSSIAN, Rules::BRAZILIAN].iter().any(|preset| {
            *preset
                == Rules {
                    name: preset.name,
                    blocked: preset.blocked,
                    ..*rules
                }
        });
        if algebraic {
            Notation::Algebraic
        } else {
            Notation::Numbers
        }
    }

    /// The notation named `name`: `numeric` (or `numbers`) or `algebraic`, in any case;
    /// `None` for anything else.
    pub fn parse(name: &str) -> Option<Notation> {
        match name.trim().to_ascii_lowercase().as_str() {
            "numeric" | "numbers" => Some(Notation::Numbers),
            "algebraic" => Some(Notation::Algebraic),
            _ => None,
        }
    }

    /// The name [`Notation::parse`] reads: `numeric` or `algebraic`.
    pub fn name(self) -> &'static str {
        match self {
            Notation::Numbers => "numeric",
            Notation::Algebraic => "algebraic",
        }
    }
}

/// The internal square of algebraic square `text` (file letter, rank number) on the board of
/// `rules`, if `text` is written algebraically at all (`Ok(None)` otherwise).
pub(crate) fn algebraic_square(text: &str, rules: &Rules) -> Result<Option<u8>, FenError> {
    let t = text.trim();
    let mut chars = t.chars();
    let Some(file) = chars.next().filter(char::is_ascii_alphabetic) else {
        return Ok(None);
    };
    let rank = chars.as_str();
    if rank.is_empty() || rank.len() > 2 || !rank.bytes().all(|b| b.is_ascii_digit()) {
        return Err(FenError::BadSquare(clip(t)));
    }
    let g = rules.geometry();
    let n = g.size;
    let file = file.to_ascii_lowercase() as u8 - b'a';
    let rank: u8 = rank.parse().map_err(|_| FenError::BadSquare(clip(t)))?;
    if file >= n || rank == 0 || rank > n {
        return Err(FenError::OffBoardSquare {
            square: clip(t),
            board: n,
            last_file: (b'a' + n - 1) as char,
        });
    }
    let row = n - rank;
    // The mirrored board (Italian, Spanish) is the standard one reflected left to right.
    let col = if rules.numbering == Numbering::Standard {
        file
    } else {
        n - 1 - file
    };
    if (row + col).is_multiple_of(2) {
        return Err(FenError::LightSquare(clip(t)));
    }
    Ok(Some(row * g.half() + col / 2))
}

/// The algebraic name (`c3`: file from White's left, rank from White's side) of internal
/// square `sq` (0-based, the standard numbering less one; [`Rules::square_number`] gives its
/// number) on the board of `rules`.
pub fn algebraic_name(sq: u8, rules: &Rules) -> String {
    let g = rules.geometry();
    let (row, col) = g.coords(sq);
    let file = if rules.numbering == Numbering::Standard {
        col
    } else {
        g.size - 1 - col
    };
    format!("{}{}", (b'a' + file) as char, g.size - row)
}

/// One square of a piece list, a number or an algebraic square, as the variant's number.
fn parse_one(text: &str, rules: &Rules) -> Result<u32, FenError> {
    match algebraic_square(text, rules)? {
        Some(sq) => Ok(rules.square_number(sq)),
        None => parse_square(text, rules.geometry().squares as u32),
    }
}

fn parse_square(text: &str, max: u32) -> Result<u32, FenError> {
    let t = text.trim();
    if t.is_empty() || t.len() > 4 || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(FenError::BadSquare(clip(t)));
    }
    let n: u32 = t.parse().map_err(|_| FenError::BadSquare(clip(t)))?;
    if n == 0 || n > max {
        return Err(FenError::SquareOutOfRange { square: n, max });
    }
    Ok(n)
}

/// Parse one colour's piece list (without the leading `W`/`B`) into (pieces, kings).
fn parse_pieces(list: &str, rules: &Rules, seen: &mut u64) -> Result<(u64, u64), FenError> {
    let max = rules.geometry().squares as u32;
    let mut pieces = 0u64;
    let mut kings = 0u64;
    for item in list.split(',') {
        let item = item.trim();
        if item.is_empty() {
            if list.trim().is_empty() {
                continue;
            }
            return Err(FenError::BadSquare(String::new()));
        }
        let (king, rest) = match item.strip_prefix(['K', 'k']) {
            Some(r) => (true, r),
            None => (false, item),
        };
        let (lo, hi) = match rest.split_once('-') {
            Some((a, b)) => {
                if algebraic_square(a, rules).is_ok_and(|s| s.is_some())
                    || algebraic_square(b, rules).is_ok_and(|s| s.is_some())
                {
                    return Err(FenError::AlgebraicRange(clip(item)));
                }
                let lo = parse_square(a, max)?;
                let hi = parse_square(b, max)?;
                if lo > hi {
                    return Err(FenError::BadRange(clip(item)));
                }
                (lo, hi)
            }
            None => {
                let s = parse_one(rest, rules)?;
                (s, s)
            }
        };
        for n in lo..=hi {
            let bit = 1u64 << (n - 1);
            if *seen & bit != 0 {
                return Err(FenError::DuplicateSquare(n));
            }
            *seen |= bit;
            pieces |= bit;
            if king {
                kings |= bit;
            }
        }
    }
    Ok((pieces, kings))
}

/// Parse a PDN FEN string for `rules`, square numbers in the variant's numbering
/// ([`Rules::numbering`]). Surrounding whitespace, double quotes and a trailing `.` are ignored;
/// so is a PDN tag around it (`[FEN "W:W31:B1"]`), and move-counter fields after the piece
/// lists (`W:W31:B1:H0:F1`: `H` half-moves since a capture or man move, `F` the move number,
/// as Scan and lidraughts write them), which a tablebase value does not depend on.
///
/// # Errors
/// [`FenError`] for malformed text; [`FenError::Position`] when the pieces do not form a legal
/// position (a man on its crowning row, too many pieces, ...), naming squares in the variant's
/// numbering.
pub fn parse(text: &str, rules: &Rules) -> Result<Position, FenError> {
    let mut t = text.trim();
    // A PDN tag: [FEN "..."].
    if let Some(inner) = t
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .and_then(|r| r.trim_start().strip_prefix("FEN"))
    {
        t = inner.trim();
    }
    let t = t.trim_matches('"').trim().trim_end_matches('.');
    if t.is_empty() {
        return Err(FenError::Empty);
    }
    let mut fields: Vec<&str> = t.split(':').collect();
    // Move counters at the end (H<n>, F<n>), each at most once, are read past.
    let counter = |f: &str, c: char| {
        let f = f.trim();
        f.strip_prefix(c)
            .or_else(|| f.strip_prefix(c.to_ascii_lowercase()))
            .is_some_and(|n| !n.is_empty() && n.len() <= 6 && n.bytes().all(|b| b.is_ascii_digit()))
    };
    for c in ['F', 'H'] {
        if fields.len() > 2 && fields.last().is_some_and(|f| counter(f, c)) {
            fields.pop();
        }
    }
    // A colour with no pieces may be written `:B` or left out (`W:W28`).
    if !(2..=3).contains(&fields.len()) {
        return Err(FenError::FieldCount(fields.len()));
    }
    let side = match fields[0].trim() {
        "W" | "w" => Color::White,
        "B" | "b" => Color::Black,
        other => return Err(FenError::BadSideToMove(clip(other))),
    };
    let mut seen = 0u64;
    let mut white = None;
    let mut black = None;
    for f in &fields[1..] {
        let f = f.trim();
        let (slot, letter) = match f.chars().next() {
            Some('W') | Some('w') => (&mut white, 'W'),
            Some('B') | Some('b') => (&mut black, 'B'),
            _ => return Err(FenError::BadColorField(clip(f))),
        };
        if slot.is_some() {
            return Err(FenError::DuplicateColor(letter));
        }
        *slot = Some(parse_pieces(&f[1..], rules, &mut seen)?);
    }
    let (w, wk) = white.unwrap_or((0, 0));
    let (b, bk) = black.unwrap_or((0, 0));
    let g = rules.geometry();
    let n = rules.numbering;
    let internal = |bb: u64| n.to_internal(g, bb);
    Position::new(rules, internal(w), internal(b), internal(wk | bk), side).map_err(|e| {
        // Position errors name internal squares (standard numbers): name the variant's.
        let renumber = |s: u32| rules.square_number((s - 1) as u8);
        FenError::Position(match e {
            PositionError::ManOnCrowningRow { color, square } => PositionError::ManOnCrowningRow {
                color,
                square: renumber(square),
            },
            other => other,
        })
    })
}

/// Write a position as PDN FEN in the standard numbering (the internal one), pieces in
/// ascending square order, kings marked `K`, no ranges: `W:W5,K26:B8`. For a variant with its
/// own numbering (Italian, Spanish) use [`write_for`].
pub fn write(pos: &Position) -> String {
    write_pieces(pos, |bb| {
        let mut out = Vec::with_capacity(bb.count_ones() as usize);
        let mut b = bb;
        while b != 0 {
            let sq = b.trailing_zeros();
            b &= b - 1;
            out.push((sq, sq + 1));
        }
        out
    })
}

/// Write a position as PDN FEN in the square numbering of `rules` (what [`parse`] reads back
/// for the same rules), pieces in ascending square order, kings marked `K`, no ranges.
pub fn write_for(pos: &Position, rules: &Rules) -> String {
    if rules.numbering == Numbering::Standard {
        return write(pos);
    }
    let squares = rules.geometry().squares as u32;
    write_pieces(pos, |bb| {
        (1..=squares)
            .filter_map(|n| {
                let sq = rules.square_of_number(n)? as u32;
                (bb & (1u64 << sq) != 0).then_some((sq, n))
            })
            .collect()
    })
}

/// Write a position as PDN FEN with algebraic squares on the board of `rules` (`W:Wh6:Bg7,c5`),
/// each colour's pieces from White's near left (a1, c1, ..., b2, ...), kings marked `K`:
/// what [`parse`] reads back for the same rules.
pub fn write_algebraic(pos: &Position, rules: &Rules) -> String {
    let g = rules.geometry();
    let mut s = String::new();
    s.push(pos.side_to_move().letter());
    for c in [Color::White, Color::Black] {
        s.push(':');
        s.push(c.letter());
        // Rank by rank from White's side, each from the left as the players see it.
        let mut squares: Vec<(String, u8)> = (0..g.squares)
            .filter(|&sq| pos.pieces(c) >> sq & 1 != 0)
            .map(|sq| (algebraic_name(sq, rules), sq))
            .collect();
        squares.sort_by_key(|(name, _)| (name[1..].parse::<u8>().unwrap_or(0), name.clone()));
        for (i, (name, sq)) in squares.into_iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            if pos.kings() >> sq & 1 != 0 {
                s.push('K');
            }
            s.push_str(&name);
        }
    }
    s
}

/// Write a position in the notation its variant's players use ([`Notation::of`]):
/// [`write_algebraic`] for Russian and Brazilian, [`write_for`] (square numbers) for every
/// other variant.
pub fn write_customary(pos: &Position, rules: &Rules) -> String {
    write_in(pos, rules, Notation::of(rules))
}

/// Write a position in `notation`: [`write_algebraic`] or [`write_for`].
pub fn write_in(pos: &Position, rules: &Rules, notation: Notation) -> String {
    match notation {
        Notation::Algebraic => write_algebraic(pos, rules),
        Notation::Numbers => write_for(pos, rules),
    }
}

/// FEN text with each colour's pieces listed by `listed`: (internal square, number written),
/// in the order to write them.
fn write_pieces(pos: &Position, listed: impl Fn(u64) -> Vec<(u32, u32)>) -> String {
    let mut s = String::new();
    s.push(pos.side_to_move().letter());
    for c in [Color::White, Color::Black] {
        s.push(':');
        s.push(c.letter());
        for (i, (sq, n)) in listed(pos.pieces(c)).into_iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            if pos.kings() & (1u64 << sq) != 0 {
                s.push('K');
            }
            s.push_str(&n.to_string());
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const E: Rules = Rules::ENGLISH;

    #[test]
    fn parses_start_positions_with_ranges() {
        let p = parse("B:W21-32:B1-12", &E).unwrap();
        assert_eq!(p, Position::start(&E));
        let i = Rules::INTERNATIONAL;
        assert_eq!(parse("W:W31-50:B1-20", &i).unwrap(), Position::start(&i));
    }

    #[test]
    fn round_trips_kings_and_empty_sides() {
        for f in ["W:W5,K26:B8", "B:WK32:B19,K26", "W:W18:B", "B:W:BK1"] {
            let p = parse(f, &E).unwrap();
            assert_eq!(write(&p), f);
        }
        let p = parse(" \"W:WK2,K16,K23:B17.\" ", &E).unwrap();
        assert_eq!(write(&p), "W:WK2,K16,K23:B17");
        // colour lists in either order
        assert_eq!(parse("W:B8:W5", &E).unwrap(), parse("W:W5:B8", &E).unwrap());
    }

    /// Italian and Spanish FEN name the squares of their mirrored boards (variants.md): the
    /// start positions read as the players write them, and write back the same way.
    #[test]
    fn mirrored_numberings_read_and_write_as_their_players_mean() {
        let it = Rules::ITALIAN;
        let sp = Rules::SPANISH;
        assert_eq!(parse("W:W21-32:B1-12", &it).unwrap(), Position::start(&it));
        assert_eq!(parse("W:W1-12:B21-32", &sp).unwrap(), Position::start(&sp));
        let start = Position::start(&sp);
        assert_eq!(
            write_for(&start, &sp),
            "W:W1,2,3,4,5,6,7,8,9,10,11,12:B21,22,23,24,25,26,27,28,29,30,31,32"
        );
        // `write` stays in the standard (internal) numbering.
        assert_eq!(
            write(&start),
            write(&Position::start(&Rules::ENGLISH).with_side_to_move(Color::White))
        );
        // Italian 1 = a8 is standard 4 (h8 mirrored); 29 = b1 is standard 32.
        let p = parse("B:WK1:BK29", &it).unwrap();
        assert_eq!(p, parse("B:WK4:BK32", &Rules::ENGLISH).unwrap());
        for f in ["B:WK1:BK29", "W:W5,K26:B8", "W:W18:B", "B:W:BK1"] {
            for r in [it, sp] {
                assert_eq!(write_for(&parse(f, &r).unwrap(), &r), f);
            }
        }
        // Errors name the variant's squares: Italian 2 (c8) is on White's crowning row.
        assert_eq!(
            parse("W:W2:B20", &it),
            Err(FenError::Position(PositionError::ManOnCrowningRow {
                color: "White",
                square: 2
            }))
        );
        // Spanish 2 (f1) is on Black's crowning row.
        assert_eq!(
            parse("W:W20:B2", &sp),
            Err(FenError::Position(PositionError::ManOnCrowningRow {
                color: "Black",
                square: 2
            }))
        );
    }

    /// A PDN `[FEN "..."]` tag and trailing move counters (`:H0:F1`) read as the bare FEN;
    /// counters out of place, repeated, empty or not numbers are errors.
    #[test]
    fn reads_pdn_tags_and_move_counters() {
        let bare = parse("W:W18,K31:B5,K12", &E).unwrap();
        for text in [
            "[FEN \"W:W18,K31:B5,K12\"]",
            "[FEN \"W:W18,K31:B5,K12\"] ",
            "W:W18,K31:B5,K12:H0:F1",
            "W:W18,K31:B5,K12:H12",
            "W:W18,K31:B5,K12:F37",
            "[FEN \"W:W18,K31:B5,K12:H3:F20.\"]",
            "w:W18,K31:B5,K12:h0:f1",
        ] {
            assert_eq!(parse(text, &E), Ok(bare), "{text}");
        }
        assert_eq!(parse("W:W18:H0", &E), parse("W:W18", &E));
        for bad in [
            "W:W18,K31:B5,K12:F1:H0",
            "W:W18,K31:B5,K12:H0:H0",
            "W:W18,K31:B5,K12:H",
            "W:W18,K31:B5,K12:Hx",
            "W:W18,K31:B5,K12:H1234567",
            "[FEN W:W18:B5",
            "W:H0",
        ] {
            assert!(parse(bad, &E).is_err(), "{bad} accepted");
        }
    }

    /// Algebraic squares (issue 22): `W:Wh6:Bg7,c5,d2` as pydraughts and Russian players
    /// write it; a1 is the standard board's square 29 (8x8) or 46 (10x10), h8 square 4, j10
    /// square 5; on the mirrored board (Italian, Spanish) a1 is light and b1 is Italian 29,
    /// Spanish 4 (variants.md). Every square of every preset reads back from its name, and
    /// every position writes and reads back through both notations.
    #[test]
    fn reads_and_writes_algebraic_squares_on_every_board() {
        let ru = Rules::RUSSIAN;
        let p = parse("W:Wh6:Bg7,c5,d2", &ru).unwrap();
        assert_eq!(p, parse("W:W12:B8,14,26", &ru).unwrap());
        assert_eq!(write_algebraic(&p, &ru), "W:Wh6:Bd2,c5,g7");
        assert_eq!(write_customary(&p, &ru), "W:Wh6:Bd2,c5,g7");
        assert_eq!(write_customary(&p, &E), "W:W12:B8,14,26");
        let k = parse("B:WKh6,a1:BKg7", &ru).unwrap();
        assert_eq!(k, parse("B:WK12,29:BK8", &ru).unwrap());
        assert_eq!(parse("W:WKH6:BG7", &ru), parse("W:WK12:B8", &ru));
        let i = Rules::INTERNATIONAL;
        assert_eq!(parse("W:Wa1,j10:Bb10", &i), parse("W:W46,5:B1", &i));
        assert_eq!(parse("W:Wa1:Bh8", &E), parse("W:W29:B4", &E));
        let it = Rules::ITALIAN;
        let sp = Rules::SPANISH;
        assert_eq!(parse("W:Wb1:Ba8", &it), parse("W:W29:B1", &it));
        assert_eq!(parse("W:Wb1:Bh1", &sp), parse("W:W4:B1", &sp));
        assert_eq!(Notation::of(&ru), Notation::Algebraic);
        assert_eq!(
            Notation::of(&Rules::parse("russian,blocked=draw").unwrap()),
            Notation::Algebraic
        );
        assert_eq!(Notation::of(&Rules::BRAZILIAN), Notation::Algebraic);
        assert_eq!(Notation::parse("Numeric"), Some(Notation::Numbers));
        assert_eq!(Notation::parse("algebraic"), Some(Notation::Algebraic));
        assert_eq!(Notation::parse("pdn"), None);
        for r in Rules::PRESETS {
            if *r != ru && *r != Rules::BRAZILIAN {
                assert_eq!(Notation::of(r), Notation::Numbers, "{}", r.name);
            }
            let g = r.geometry();
            let mut seen = 0u64;
            for file in 0..g.size {
                for rank in 1..=g.size {
                    let name = format!("{}{rank}", (b'a' + file) as char);
                    match algebraic_square(&name, r) {
                        Ok(Some(sq)) => {
                            assert_eq!(algebraic_name(sq, r), name);
                            assert_eq!(seen >> sq & 1, 0, "{name} twice");
                            seen |= 1 << sq;
                        }
                        Err(FenError::LightSquare(s)) => assert_eq!(s, name),
                        other => panic!("{} {name}: {other:?}", r.name),
                    }
                }
            }
            assert_eq!(seen, g.all, "{}: every dark square named once", r.name);
            // Positions round-trip through both notations.
            let mut rng = crate::test_rng::Rng(11);
            for _ in 0..300 {
                let occ = rng.next() & rng.next() & g.all;
                let white = occ & rng.next();
                let black = occ & !white;
                let kings = occ & rng.next() | (white & g.top_row) | (black & g.bottom_row);
                let side = if rng.next() & 1 == 0 {
                    Color::White
                } else {
                    Color::Black
                };
                let Ok(pos) = Position::new(r, white, black, kings, side) else {
                    continue;
                };
                for text in [
                    write_algebraic(&pos, r),
                    write_for(&pos, r),
                    write_customary(&pos, r),
                ] {
                    assert_eq!(parse(&text, r), Ok(pos), "{} {text}", r.name);
                }
            }
        }
    }

    /// Bad algebraic squares are typed errors: a light square, files and ranks beyond the
    /// board, a range of them, a square named twice in two notations.
    #[test]
    fn rejects_bad_algebraic_squares() {
        let ru = Rules::RUSSIAN;
        assert_eq!(
            parse("W:Wa2:B", &ru),
            Err(FenError::LightSquare("a2".into()))
        );
        assert_eq!(
            parse("W:Wa1:B", &Rules::ITALIAN),
            Err(FenError::LightSquare("a1".into()))
        );
        let off = |s: &str, board, last_file| FenError::OffBoardSquare {
            square: s.into(),
            board,
            last_file,
        };
        assert_eq!(parse("W:Wi1:B", &ru), Err(off("i1", 8, 'h')));
        assert_eq!(parse("W:Wa9:B", &ru), Err(off("a9", 8, 'h')));
        assert_eq!(parse("W:Wa0:B", &ru), Err(off("a0", 8, 'h')));
        // A lone `k` marks a king (`Wk1` is a king on 1); file k after the mark is off the board.
        assert_eq!(
            parse("W:WKk1:B", &Rules::INTERNATIONAL),
            Err(off("k1", 10, 'j'))
        );
        assert_eq!(
            parse("W:Wl1:B", &Rules::INTERNATIONAL),
            Err(off("l1", 10, 'j'))
        );
        assert_eq!(
            parse("W:Wb11:B", &Rules::INTERNATIONAL),
            Err(off("b11", 10, 'j'))
        );
        assert_eq!(parse("W:Wz99:B", &ru), Err(off("z99", 8, 'h')));
        assert_eq!(parse("W:Wa:B", &ru), Err(FenError::BadSquare("a".into())));
        assert_eq!(
            parse("W:Wa1b:B", &ru),
            Err(FenError::BadSquare("a1b".into()))
        );
        assert_eq!(
            parse("W:Wa123:B", &ru),
            Err(FenError::BadSquare("a123".into()))
        );
        assert_eq!(
            parse("W:Wa1-c3:B", &ru),
            Err(FenError::AlgebraicRange("a1-c3".into()))
        );
        assert_eq!(parse("W:W29,a1:B", &ru), Err(FenError::DuplicateSquare(29)));
        assert_eq!(parse("W:Wa1:Ba1", &ru), Err(FenError::DuplicateSquare(29)));
        assert!(matches!(
            parse("W:Wb8:B", &ru),
            Err(FenError::Position(PositionError::ManOnCrowningRow { .. }))
        ));
        assert_eq!(parse("W:Wé1:B", &ru), Err(FenError::BadSquare("é1".into())));
    }

    #[test]
    fn rejects_each_kind_of_bad_fen() {
        assert_eq!(parse("", &E), Err(FenError::Empty));
        assert_eq!(
            parse("X:W1:B2", &E),
            Err(FenError::BadSideToMove("X".into()))
        );
        assert_eq!(parse("W", &E), Err(FenError::FieldCount(1)));
        assert_eq!(parse("W:W5:B6:B7", &E), Err(FenError::FieldCount(4)));
        // One field, four fields: the count in words, and that a colour may be left out.
        let said = |t: &str| parse(t, &E).unwrap_err().to_string();
        assert!(
            said("W").ends_with("may be left out), found 1 field"),
            "{}",
            said("W")
        );
        assert!(said("W:W5:B6:B7").ends_with(", found 4 fields"));
        assert_eq!(parse("W:W5", &E).unwrap(), parse("W:W5:B", &E).unwrap());
        assert_eq!(
            parse("W:W5:X6", &E),
            Err(FenError::BadColorField("X6".into()))
        );
        assert_eq!(parse("W:W5:W6", &E), Err(FenError::DuplicateColor('W')));
        assert_eq!(parse("W:Wx:B6", &E), Err(FenError::BadSquare("x".into())));
        assert_eq!(
            parse("W:W33:B6", &E),
            Err(FenError::SquareOutOfRange {
                square: 33,
                max: 32
            })
        );
        assert_eq!(
            parse("W:W0:B6", &E),
            Err(FenError::SquareOutOfRange { square: 0, max: 32 })
        );
        // In words, not Rust's range syntax: the message reaches dtb serve's answers.
        assert_eq!(
            parse("W:W51:B6", &Rules::INTERNATIONAL)
                .unwrap_err()
                .to_string(),
            "square 51 is not on the board: its squares are numbered from 1 to 50"
        );
        assert_eq!(parse("W:W6:B6", &E), Err(FenError::DuplicateSquare(6)));
        assert_eq!(
            parse("W:W9-7:B1", &E),
            Err(FenError::BadRange("9-7".into()))
        );
        assert_eq!(
            parse("W:W5,,6:B1", &E),
            Err(FenError::BadSquare(String::new()))
        );
        assert_eq!(
            parse("W:W3:B10", &E),
            Err(FenError::Position(PositionError::ManOnCrowningRow {
                color: "White",
                square: 3
            }))
        );
        assert_eq!(
            parse("W:W10:B30", &E),
            Err(FenError::Position(PositionError::ManOnCrowningRow {
                color: "Black",
                square: 30
            }))
        );
        assert!(matches!(
            parse("W:W5-17:B1", &E),
            Err(FenError::Position(PositionError::TooManyPieces {
                count: 13,
                ..
            }))
        ));
        assert_eq!(
            parse("W:W99999999999:B1", &E),
            Err(FenError::BadSquare("99999999999".into()))
        );
    }

    /// A 10 MB FEN of each shape an error quotes gives an error whose message and value
    /// are a few dozen bytes, never the input; [`crate::quote`] shows 40 characters and the
    /// length.
    #[test]
    fn an_error_never_holds_a_10_mb_fen() {
        let big = 10 << 20;
        let long = |prefix: &str, filler: &str, suffix: &str| {
            let mut t = prefix.to_string();
            while t.len() < big {
                t.push_str(filler);
            }
            t + suffix
        };
        for text in [
            long("", "X", ":W1:B2"),
            long("W:", "Q", ":B2"),
            long("W:W", "7", ":B2"),
            long("W:W", "z", ":B2"),
            long("W:W1-", "9", ":B2"),
            long("W:W", "a1", "-b2:B"),
            long("W:W1", ",", "x:B2"),
            long("W", ":", ""),
        ] {
            let e = parse(&text, &E).unwrap_err();
            let shown = e.to_string();
            let held = format!("{e:?}");
            assert!(shown.len() < 200, "{} bytes: {shown:.300}", shown.len());
            assert!(held.len() < 200, "{} bytes: {held:.300}", held.len());
        }
        let text = long("W:W", "1,", "");
        let q = crate::quote(&text);
        assert_eq!(q, format!("{:?}... ({} bytes)", &text[..40], text.len()));
        assert_eq!(crate::quote("W:WK32:BK26"), "\"W:WK32:BK26\"");
        // 40 characters are not cut; a multi-byte character is never split.
        assert_eq!(
            crate::quote(&"é".repeat(40)),
            format!("{:?}", "é".repeat(40))
        );
        assert_eq!(
            crate::quote(&"é".repeat(41)),
            format!("{:?}... (82 bytes)", "é".repeat(40))
        );
        let variant = long("", "x", "");
        for text in [
            variant.clone(),
            format!("english,{variant}"),
            format!("english,blocked={variant}"),
            format!("english,{variant}=1"),
        ] {
            let e = Rules::parse(&text).unwrap_err();
            assert!(format!("{e} {e:?}").len() < 600, "{e:.300}");
        }
    }
}
