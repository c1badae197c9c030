//! A position: who stands where, and the side to move.

use crate::board::Geometry;
use crate::material::Material;
use crate::rules::{Color, Rules, RulesId};

/// Why a set of pieces is not a legal position of a variant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error("square {0} holds pieces of both colours")]
    SquareTaken(u32),
    #[error("square {square} is not on the {board}x{board} board")]
    OffBoard { square: u32, board: u8 },
    #[error("a king mark on square {0}, which holds no piece")]
    KingWithoutPiece(u32),
    #[error("{color} man on square {square}, its own crowning row (it would have been crowned)")]
    ManOnCrowningRow { color: &'static str, square: u32 },
    #[error("{color} has {count} pieces; at most {max} fit the variant")]
    TooManyPieces {
        color: &'static str,
        count: u32,
        max: u32,
    },
}

/// A draughts position: bitboards of white pieces, black pieces and kings (bit `n-1` is square
/// `n`), and the side to move. Construct with [`Position::new`] (checked) or parse PDN FEN
/// with [`crate::fen`]; every `Position` value is legal for the rules it was checked against.
///
/// A position remembers those rules as a [`RulesId`] ([`Position::rules_id`]): a
/// [`crate::Tablebase`] refuses a position of other rules
/// ([`crate::ProbeError::VariantMismatch`]) instead of answering for pieces it reads under
/// its own rules. Positions made from others (moves, [`Position::with_side_to_move`]) keep
/// it; the slice index (internal) makes board-only positions ([`RulesId::board_only`]).
/// Equality and hashing compare the pieces and the side to move only, not the rules.
#[derive(Clone, Copy, Debug)]
pub struct Position {
    white: u64,
    black: u64,
    kings: u64,
    side: Color,
    rules: RulesId,
}

impl PartialEq for Position {
    #[inline]
    fn eq(&self, other: &Position) -> bool {
        (self.white, self.black, self.kings, self.side)
            == (other.white, other.black, other.kings, other.side)
    }
}

impl Eq for Position {}

impl std::hash::Hash for Position {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.white, self.black, self.kings, self.side).hash(state)
    }
}

fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

impl Position {
    /// A checked position: pieces on the board, no square twice, kings only where a piece
    /// stands, no man on its own crowning row, at most as many pieces a side as the start.
    ///
    /// # Errors
    /// [`PositionError`] naming the first problem found.
    pub fn new(
        rules: &Rules,
        white: u64,
        black: u64,
        kings: u64,
        side: Color,
    ) -> Result<Position, PositionError> {
        let g = rules.geometry();
        let outside = (white | black | kings) & !g.all;
        if outside != 0 {
            return Err(PositionError::OffBoard {
                square: outside.trailing_zeros() + 1,
                board: g.size,
            });
        }
        if white & black != 0 {
            return Err(PositionError::SquareTaken(
                (white & black).trailing_zeros() + 1,
            ));
        }
        if kings & !(white | black) != 0 {
            return Err(PositionError::KingWithoutPiece(
                (kings & !(white | black)).trailing_zeros() + 1,
            ));
        }
        let wmen_bad = white & !kings & g.top_row;
        if wmen_bad != 0 {
            return Err(PositionError::ManOnCrowningRow {
                color: "White",
                square: wmen_bad.trailing_zeros() + 1,
            });
        }
        let bmen_bad = black & !kings & g.bottom_row;
        if bmen_bad != 0 {
            return Err(PositionError::ManOnCrowningRow {
                color: "Black",
                square: bmen_bad.trailing_zeros() + 1,
            });
        }
        let max = rules.max_pieces_per_side();
        for (c, bb) in [(Color::White, white), (Color::Black, black)] {
            if bb.count_ones() > max {
                return Err(PositionError::TooManyPieces {
                    color: color_name(c),
                    count: bb.count_ones(),
                    max,
                });
            }
        }
        Ok(Position {
            white,
            black,
            kings,
            side,
            rules: rules.id(),
        })
    }

    /// This position checked against `rules` and carrying their identity: what a program that
    /// made a position under other rules (or a board-only one, from an index) does to probe it
    /// in a tablebase of `rules`, saying so.
    ///
    /// # Errors
    /// [`PositionError`] if the pieces are not a legal position of `rules`.
    pub fn with_rules(&self, rules: &Rules) -> Result<Position, PositionError> {
        Position::new(rules, self.white, self.black, self.kings, self.side)
    }

    /// The identity of the rules this position was checked against (or, made by an index,
    /// of its board only).
    #[inline]
    pub fn rules_id(&self) -> RulesId {
        self.rules
    }

    /// Build without checks. Callers inside the crate guarantee legality (move application,
    /// unindexing) and pass the rules identity of the position it was made from.
    #[inline]
    pub(crate) fn from_parts(
        white: u64,
        black: u64,
        kings: u64,
        side: Color,
        rules: RulesId,
    ) -> Position {
        Position {
            white,
            black,
            kings,
            side,
            rules,
        }
    }

    /// The start position of a variant (men on the rows nearest each player).
    pub fn start(rules: &Rules) -> Position {
        let g = rules.geometry();
        let n = rules.max_pieces_per_side();
        let black = (1u64 << n) - 1;
        let white = ((1u64 << n) - 1) << (g.squares as u32 - n);
        Position::from_parts(white, black, 0, rules.first_to_move, rules.id())
    }

    /// Bitboard of the pieces of `c`.
    #[inline]
    pub fn pieces(&self, c: Color) -> u64 {
        match c {
            Color::White => self.white,
            Color::Black => self.black,
        }
    }
    /// Bitboard of all white pieces.
    #[inline]
    pub fn white(&self) -> u64 {
        self.white
    }
    /// Bitboard of all black pieces.
    #[inline]
    pub fn black(&self) -> u64 {
        self.black
    }
    /// Bitboard of all kings, both colours.
    #[inline]
    pub fn kings(&self) -> u64 {
        self.kings
    }
    /// Bitboard of every occupied square.
    #[inline]
    pub fn occupied(&self) -> u64 {
        self.white | self.black
    }
    /// The side to move.
    #[inline]
    pub fn side_to_move(&self) -> Color {
        self.side
    }
    /// The same pieces with the other side to move.
    #[inline]
    pub fn with_side_to_move(&self, side: Color) -> Position {
        Position { side, ..*self }
    }

    /// The position after the side to move's piece on internal square `from` (0-based) moves
    /// without capturing to the empty square `to`, a man crowning there if `to` is on its
    /// crowning row; the other side is then to move. The caller guarantees that such a move
    /// exists (a piece of the side to move on `from`, `to` empty and on the board).
    ///
    /// Internal (it takes the board geometry; `dtb-gen`'s solver uses it): engines play moves
    /// with [`Move::apply`](crate::Move::apply).
    #[doc(hidden)]
    #[inline]
    pub fn after_quiet_move(&self, g: &Geometry, from: u8, to: u8) -> Position {
        let d = (1u64 << from) | (1u64 << to);
        let (mut white, mut black, mut kings) = (self.white, self.black, self.kings);
        let crown_row = match self.side {
            Color::White => {
                white ^= d;
                g.top_row
            }
            Color::Black => {
                black ^= d;
                g.bottom_row
            }
        };
        if kings >> from & 1 != 0 {
            kings ^= d;
        } else if crown_row >> to & 1 != 0 {
            kings |= 1u64 << to;
        }
        Position {
            white,
            black,
            kings,
            side: self.side.opponent(),
            rules: self.rules,
        }
    }

    /// The position after the side to move's piece on internal square `from` jumps over the
    /// other side's piece on `over` (taken off) to the empty square `to`, a man crowning there
    /// if `to` is on its crowning row; the other side is then to move. The caller guarantees
    /// that such a jump exists and that it ends the move (no further jump).
    ///
    /// Internal (`dtb-gen`'s solver builds single jumps of one king without a move list).
    #[doc(hidden)]
    #[inline]
    pub fn after_jump(&self, g: &Geometry, from: u8, over: u8, to: u8) -> Position {
        let taken = 1u64 << over;
        let p = Position {
            white: self.white & !taken,
            black: self.black & !taken,
            kings: self.kings & !taken,
            ..*self
        };
        p.after_quiet_move(g, from, to)
    }

    /// The position with a king of `color` added on internal square `square` (0-based), the
    /// same side to move. The caller guarantees that the square is empty and on the board.
    ///
    /// Internal (`dtb-gen`'s solver looks up a row of positions that differ by one king).
    #[doc(hidden)]
    #[inline]
    pub fn with_king(&self, color: Color, square: u32) -> Position {
        let bit = 1u64 << square;
        let (mut white, mut black) = (self.white, self.black);
        match color {
            Color::White => white |= bit,
            Color::Black => black |= bit,
        }
        Position {
            white,
            black,
            kings: self.kings | bit,
            ..*self
        }
    }

    /// Men, kings of each colour: the material signature (slice) of the position.
    pub fn material(&self) -> Material {
        Material {
            white_men: (self.white & !self.kings).count_ones() as u8,
            white_kings: (self.white & self.kings).count_ones() as u8,
            black_men: (self.black & !self.kings).count_ones() as u8,
            black_kings: (self.black & self.kings).count_ones() as u8,
        }
    }

    /// The colour-reversed position: the board rotated by 180 degrees, colours swapped and
    /// the other side to move. Under colour-symmetric rules it has the same game value.
    ///
    /// Internal (it takes the board geometry): the tablebase applies colour symmetry itself.
    #[doc(hidden)]
    pub fn flipped(&self, g: &Geometry) -> Position {
        Position {
            white: g.rotate(self.black),
            black: g.rotate(self.white),
            kings: g.rotate(self.kings),
            side: self.side.opponent(),
            rules: self.rules,
        }
    }
}
