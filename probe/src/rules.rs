//! The rule set of a variant as data: one named field per rule (design decision 1).
//!
//! Every preset in `../shared/docs/variants.md` is a constant of [`Rules`]; move generation
//! reads the fields and is written once for all of them.

use crate::board::Geometry;

/// A side: White starts at the bottom (high square numbers) and moves up (toward row 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    White,
    Black,
}

impl Color {
    /// The other side.
    #[inline]
    pub fn opponent(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// 0 for White, 1 for Black (the side number used in table files).
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// `W` or `B`, as in PDN FEN.
    pub fn letter(self) -> char {
        match self {
            Color::White => 'W',
            Color::Black => 'B',
        }
    }
}

/// How far a king moves and captures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KingRange {
    /// One square in any diagonal direction; captures an adjacent piece (English, Italian).
    Short,
    /// Any number of empty squares along a diagonal; captures a piece at any distance and lands
    /// on an empty square beyond it (International and most continental variants).
    Flying,
}

/// Which of the available capture sequences the player may choose (majority rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precedence {
    /// Any capture and any continuation (English, Russian, Pool, gracz8).
    Free,
    /// The sequence that takes the most pieces; kings and men count the same (International,
    /// Brazilian).
    MostPieces,
    /// Most pieces, then most kings among them (Spanish).
    MostPiecesThenKings,
    /// Italian order: most pieces; then capture with a king; then most kings; then the king
    /// captured earliest.
    Italian,
    /// A king must capture if it can (Czech; the optional-rules text's "king has priority").
    KingFirst,
}

/// When the pieces taken in a capture sequence leave the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// At the end of the move: until then they block and cannot be jumped twice ("Turkish
    /// strike" rule).
    AtEnd,
    /// As each is jumped (gracz8).
    Immediate,
}

/// What happens to a man that reaches its crowning row during a capture sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MidCapturePromotion {
    /// It is crowned and the move ends there (English, Italian, Czech, Spanish).
    CrownAndStop,
    /// It is crowned at once and goes on capturing as a king (Russian, gracz8).
    CrownAndContinue,
    /// It goes on capturing as a man and is crowned only if the move ends on the crowning row
    /// (International, Brazilian, Pool).
    ContinueAsMan,
}

/// Where a flying king may land after jumping a piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KingLanding {
    /// On any empty square beyond the captured piece (gracz8's text).
    Any,
    /// Only on a square from which the capture can go on, when some such square exists
    /// (maximal sequences: International, Russian, Pool, ...).
    MustContinue,
}

/// The value of a position whose side to move has pieces but no legal move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockedOutcome {
    /// The blocked side has lost (all seed texts).
    Loss,
    /// The game is drawn (an option of the optional-rules text).
    Draw,
}

/// A variant's rules. Construct from a preset ([`Rules::ENGLISH`], [`Rules::by_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Preset name, as used on the command line and in table file names.
    pub name: &'static str,
    /// Board side: 8 or 10 squares.
    pub board: u8,
    /// The side that moves first from the start position.
    pub first_to_move: Color,
    /// Whether men also capture backward (International: yes; English: no).
    pub men_capture_backward: bool,
    /// How far kings move and capture.
    pub kings: KingRange,
    /// Whether a player who can capture must capture.
    pub capture_compulsory: bool,
    /// Which capture sequences are legal when several exist.
    pub precedence: Precedence,
    /// When captured pieces leave the board.
    pub removal: Removal,
    /// A man reaching its crowning row in the middle of a capture.
    pub mid_capture_promotion: MidCapturePromotion,
    /// Whether a man may capture a king (Italian: no).
    pub men_capture_kings: bool,
    /// Where a flying king lands after a jump.
    pub king_landing: KingLanding,
    /// Value of a position whose side to move is blocked.
    pub blocked: BlockedOutcome,
}

impl Rules {
    /// English draughts / American checkers (variants.md, "english"; seeds 000, 001, 004).
    pub const ENGLISH: Rules = Rules {
        name: "english",
        board: 8,
        first_to_move: Color::Black,
        men_capture_backward: false,
        kings: KingRange::Short,
        capture_compulsory: true,
        precedence: Precedence::Free,
        removal: Removal::AtEnd,
        mid_capture_promotion: MidCapturePromotion::CrownAndStop,
        men_capture_kings: true,
        king_landing: KingLanding::MustContinue,
        blocked: BlockedOutcome::Loss,
    };

    /// International draughts, 10x10 (variants.md, "international"; seeds 000, 004).
    pub const INTERNATIONAL: Rules = Rules {
        name: "international",
        board: 10,
        first_to_move: Color::White,
        men_capture_backward: true,
        kings: KingRange::Flying,
        capture_compulsory: true,
        precedence: Precedence::MostPieces,
        removal: Removal::AtEnd,
        mid_capture_promotion: MidCapturePromotion::ContinueAsMan,
        men_capture_kings: true,
        king_landing: KingLanding::MustContinue,
        blocked: BlockedOutcome::Loss,
    };

    /// The presets whose tables dtb builds today.
    pub const PRESETS: &'static [Rules] = &[Rules::ENGLISH, Rules::INTERNATIONAL];

    /// The preset named `name` (case-insensitive), if any.
    pub fn by_name(name: &str) -> Option<Rules> {
        Self::PRESETS
            .iter()
            .copied()
            .find(|r| r.name.eq_ignore_ascii_case(name))
    }

    /// The board geometry these rules are played on.
    #[inline]
    pub fn geometry(&self) -> &'static Geometry {
        Geometry::for_size(self.board)
    }

    /// The rule fields as 16 bytes, stored in every table file header so that a table built
    /// under other rules is refused. Byte 0 is the encoding version.
    pub fn encode(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0] = 1;
        b[1] = self.board;
        b[2] = self.first_to_move as u8;
        b[3] = self.men_capture_backward as u8;
        b[4] = self.kings as u8;
        b[5] = self.capture_compulsory as u8;
        b[6] = self.precedence as u8;
        b[7] = self.removal as u8;
        b[8] = self.mid_capture_promotion as u8;
        b[9] = self.men_capture_kings as u8;
        b[10] = self.king_landing as u8;
        b[11] = self.blocked as u8;
        b
    }

    /// Number of men each side starts with (12 on 8x8, 20 on 10x10): no legal position has more
    /// pieces of one colour.
    pub fn max_pieces_per_side(&self) -> u32 {
        let h = self.board as u32 / 2;
        h * (h - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_found_by_name_and_encode_differently() {
        assert_eq!(Rules::by_name("English"), Some(Rules::ENGLISH));
        assert_eq!(Rules::by_name("international"), Some(Rules::INTERNATIONAL));
        assert_eq!(Rules::by_name("chess"), None);
        assert_ne!(Rules::ENGLISH.encode(), Rules::INTERNATIONAL.encode());
        assert_eq!(Rules::ENGLISH.max_pieces_per_side(), 12);
        assert_eq!(Rules::INTERNATIONAL.max_pieces_per_side(), 20);
    }
}
