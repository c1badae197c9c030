//! The rule set of a variant as data: one named field per rule (design decision 1).
//!
//! Every preset in `../shared/docs/variants.md` is a constant of [`Rules`]; move generation
//! reads the fields and is written once for all of them.

use crate::board::Geometry;

/// A side: White starts at the bottom (high square numbers) and moves up (toward row 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    /// Starts on the highest-numbered squares (standard numbering) and moves up the board.
    White,
    /// Starts on the lowest-numbered squares (standard numbering) and moves down the board.
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
    /// Any capture sequence may be chosen, however many pieces it takes; each sequence is
    /// still played to its end (English, Russian, Pool, gracz8).
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
    /// The side with more pieces wins; with as many pieces, the one with more kings; with as
    /// many kings, the game is drawn (the optional-rules text's third option). The game ends
    /// at once: a blocked side with more material has won in 0 plies.
    Majority,
}

/// How the playable squares are numbered in FEN and move text: the board of the variant's PDN
/// GameType (variants.md, "Italian and Spanish are played on the mirrored board").
///
/// Internally every variant uses the standard geometry (White at the bottom, moving toward
/// row 0; the square of internal index `i` is standard square `i + 1`). A mirrored board is the
/// standard one reflected left to right, which maps diagonals to diagonals and each side's
/// forward directions to its forward directions, so the game is the same; only the numbers that
/// players write differ, and [`Rules::square_number`] / [`Rules::square_of_number`] translate
/// them at the edge (FEN and move text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbering {
    /// The standard board (dark square at each player's near left) in reading order from the top
    /// row: 8x8 square 1 = (0,1), 32 = (7,6); White starts on the highest numbers (variants.md,
    /// "Board, squares, notation"; every preset but Italian and Spanish).
    Standard,
    /// The mirrored board (light square at the near left) in reading order from Black's side:
    /// square 1 = a8, the top-left corner; 1-4 = a8, c8, e8, g8; 29-32 = b1, d1, f1, h1; White
    /// starts on 21-32 (PDN GameType 22, Italian).
    Italian,
    /// The mirrored board numbered from White's side: square 1 = h1, White's near-right corner,
    /// each row read from White's right (1-4 = h1, f1, d1, b1; 5 = g2); White starts on 1-12
    /// (PDN GameType 24, Spanish). It is the Italian numbering turned by 180 degrees.
    Spanish,
}

impl Numbering {
    /// The number (1-based, as written in FEN and moves) of internal square `sq` on `g`.
    ///
    /// Internal (it takes the board geometry): engines use [`Rules::square_number`].
    #[doc(hidden)]
    #[inline]
    pub fn number(self, g: &Geometry, sq: u8) -> u32 {
        let half = g.half();
        let mirrored = || (sq / half) * half + (half - 1 - sq % half);
        match self {
            Numbering::Standard => sq as u32 + 1,
            Numbering::Italian => mirrored() as u32 + 1,
            Numbering::Spanish => g.squares as u32 - mirrored() as u32,
        }
    }

    /// The internal square of number `n` (1-based), or `None` if `n` is not on the board.
    ///
    /// Internal (it takes the board geometry): engines use [`Rules::square_of_number`].
    #[doc(hidden)]
    #[inline]
    pub fn square(self, g: &Geometry, n: u32) -> Option<u8> {
        if n == 0 || n > g.squares as u32 {
            return None;
        }
        // Each numbering is its own inverse up to the final +1 / reversal.
        let idx = match self {
            Numbering::Standard | Numbering::Italian => (n - 1) as u8,
            Numbering::Spanish => (g.squares as u32 - n) as u8,
        };
        Some(match self {
            Numbering::Standard => idx,
            Numbering::Italian | Numbering::Spanish => {
                let half = g.half();
                (idx / half) * half + (half - 1 - idx % half)
            }
        })
    }

    /// A bitboard whose bit `n - 1` stands for square number `n`, as an internal bitboard.
    ///
    /// Internal (it takes the board geometry): engines translate square by square with
    /// [`Rules::square_of_number`].
    #[doc(hidden)]
    pub fn to_internal(self, g: &Geometry, numbered: u64) -> u64 {
        if self == Numbering::Standard {
            return numbered;
        }
        let mut out = 0u64;
        let mut bb = numbered;
        while bb != 0 {
            let n = bb.trailing_zeros() + 1;
            bb &= bb - 1;
            if let Some(sq) = self.square(g, n) {
                out |= 1u64 << sq;
            }
        }
        out
    }
}

/// A rule set's identity in four bytes, carried by every [`crate::Position`] so that a
/// position read under one rule set is not probed in another's tables
/// ([`crate::ProbeError::VariantMismatch`]). [`Rules::id`] packs the rule fields of
/// [`Rules::encode`] (board, every game rule and the numbering) exactly: two rule sets have the
/// same id if and only if they encode the same. [`RulesId::board_only`] is the identity of a
/// position made without rules (by the crate's slice index, which only knows the board): any
/// tablebase of that board accepts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RulesId(u32);

/// Set in the id of a whole rule set, clear in a board-only id.
const FULL_RULES: u32 = 1 << 31;

impl RulesId {
    /// The identity of a position that knows only its board (side `board`, 8 or 10).
    #[inline]
    pub const fn board_only(board: u8) -> RulesId {
        RulesId(board as u32)
    }

    /// Whether this is a board-only identity ([`RulesId::board_only`]).
    #[inline]
    pub const fn is_board_only(self) -> bool {
        self.0 & FULL_RULES == 0
    }

    /// The board side (8 or 10) of the identity.
    #[inline]
    pub const fn board(self) -> u8 {
        self.0 as u8
    }
}

/// A variant's rules. Construct from a preset ([`Rules::ENGLISH`], [`Rules::by_name`]), from
/// the text a player writes ([`Rules::parse`]: `"english,blocked=majority"`, which also names
/// the rule set), or flip a field of one: `Rules { capture_compulsory: false,
/// ..Rules::INTERNATIONAL }` (then [`Rules::named`] gives it its name for table files).
///
/// Each field is one row of the preset table in variants.md ("Presets"). Beside each field:
/// the row, the section of `../shared/docs/variants.md` that states the rule, and the rule
/// texts that section cites (the *seed* texts 000-004 the project was founded on; the
/// other presets follow their federations' usual rules, as variants.md says).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Preset name, as used on the command line and in table file names (a rule set that is
    /// not a preset gets a derived name, [`Rules::derived_name`]).
    pub name: &'static str,
    /// Board side, 8 or 10: an N x N board with N*N/2 playable squares; each side starts with
    /// men on the N/2 - 1 rows nearest it.
    ///
    /// variants.md row "board"; section "Board, squares, notation (all variants)" (which
    /// squares are playable, their numbering, where each side starts); "english" (8x8, 12
    /// men each: seeds 000, 001, 004), "international" (10x10, 20 men each: seeds 000, 004),
    /// "gracz8" (8x8: seed 002).
    pub board: u8,
    /// The side that moves first from the start position.
    ///
    /// variants.md row "first to move"; "english": "Black moves first" (seeds 000, 001,
    /// 004); "international": "White first" (seeds 000, 004); "gracz8": "White moves first"
    /// (seed 002).
    pub first_to_move: Color,
    /// Whether men capture backward as well as forward. Men always move (without capturing)
    /// forward only ("Common to all variants": "Men move one square diagonally forward").
    ///
    /// variants.md row "men capture backward"; "international": "Men move forward but
    /// capture forward and backward" (seeds 000, 004); "gracz8": "Men move and capture
    /// forward only" (seed 002).
    pub men_capture_backward: bool,
    /// How far kings move and capture: short or flying.
    ///
    /// variants.md row "kings"; "english": "Kings move and capture one square in all four
    /// diagonal directions" (seeds 000, 001, 004); "international": "Kings fly" (seeds 000,
    /// 004); "Optional rule fields": "king captures only one square" is `Short` (seed 003).
    pub kings: KingRange,
    /// Whether a player who can capture must capture (`false`: a quiet move may be played
    /// instead).
    ///
    /// variants.md row "capture compulsory"; "english": "Capturing is compulsory" (seed);
    /// "Optional rule fields": "capture compulsory: no (capturing is optional...)" (seed 003,
    /// the `international-optional` preset).
    pub capture_compulsory: bool,
    /// Which capture sequences the player may choose when several exist.
    ///
    /// variants.md row "which capture (precedence)"; "english": "no obligation to take the
    /// most pieces" (seeds 000, 001, 004); "international": "The capture that takes the most
    /// pieces is compulsory (kings and men count the same)" (seeds 000, 004); "gracz8": "any
    /// capture may be chosen" (seed 002); the paragraph "Italian precedence, in order"; and
    /// "Optional rule fields": "king has priority in capturing" is
    /// [`Precedence::KingFirst`] (seed 003).
    pub precedence: Precedence,
    /// When captured pieces leave the board.
    ///
    /// variants.md row "captured pieces removed" and its footnote (with short kings both
    /// settings give the same moves); "international": "Captured pieces are removed only
    /// when the move is complete; until then they cannot be jumped again and block" (seeds
    /// 000, 004); "gracz8": "Captured pieces are removed at once" (seed 002); "Common to all
    /// variants": "A piece is never jumped twice".
    pub removal: Removal,
    /// What a man that reaches its crowning row in the middle of a capture does.
    ///
    /// variants.md row "man reaching the far row mid-capture"; "english": "crowned and its
    /// move ends, even if it could capture further as a king" (seeds 000, 001, 004);
    /// "international": "A man is crowned only if its move ends on the far row" (seeds 000,
    /// 004); "gracz8": "crowned at once and continues capturing as a king" (seed 002).
    pub mid_capture_promotion: MidCapturePromotion,
    /// Whether a man may capture a king.
    ///
    /// variants.md row "men may capture kings" (Italian: no, its federation's rule).
    pub men_capture_kings: bool,
    /// Where a flying king may land after a jump. Has no effect with short kings.
    ///
    /// variants.md row "flying king's landing square in a capture"; "Common to all
    /// variants": "a sequence is maximal: where a flying king could land on several squares,
    /// it must choose one from which it can capture again, if any such square exists";
    /// "gracz8": "the text does not oblige it to choose a square from which it can go on,
    /// and dtb follows the text" (seed 002), which is [`KingLanding::Any`].
    pub king_landing: KingLanding,
    /// Value of a position whose side to move has pieces but no legal move. It changes
    /// values, not legal moves.
    ///
    /// variants.md "Common to all variants": "The side to move with no pieces, or with no
    /// legal move, has lost (seed: all texts)"; "Optional rule fields": "a side to move that
    /// is blocked (has pieces, but no legal move): loses (default), or draws" (seed 003);
    /// [`BlockedOutcome::Majority`] is that text's third option (README, "Variants as
    /// players write them").
    pub blocked: BlockedOutcome,
    /// How FEN and moves number the squares. It changes notation only, not the game.
    ///
    /// Not a row of variants.md's preset table (`dtb variants` calls it "square numbering"):
    /// its section "Board, squares, notation (all variants)" gives the standard numbering,
    /// and its paragraph "Italian and Spanish are played on the mirrored board (PDN GameType
    /// 22 and 24)" theirs.
    pub numbering: Numbering,
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
        numbering: Numbering::Standard,
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
        numbering: Numbering::Standard,
    };

    /// Polish 8x8 rules as published for online play (variants.md, "gracz8"; seed 002): men
    /// capture forward only, flying kings that may land on any square beyond, free choice of
    /// capture, pieces removed at once, a man crowned mid-capture goes on as a king.
    pub const GRACZ8: Rules = Rules {
        name: "gracz8",
        board: 8,
        first_to_move: Color::White,
        men_capture_backward: false,
        kings: KingRange::Flying,
        capture_compulsory: true,
        precedence: Precedence::Free,
        removal: Removal::Immediate,
        mid_capture_promotion: MidCapturePromotion::CrownAndContinue,
        men_capture_kings: true,
        king_landing: KingLanding::Any,
        blocked: BlockedOutcome::Loss,
        numbering: Numbering::Standard,
    };

    /// Russian draughts (variants.md, "russian"): flying kings, men capture backward, free
    /// choice, a man crowned mid-capture goes on as a king.
    pub const RUSSIAN: Rules = Rules {
        name: "russian",
        board: 8,
        first_to_move: Color::White,
        men_capture_backward: true,
        kings: KingRange::Flying,
        capture_compulsory: true,
        precedence: Precedence::Free,
        removal: Removal::AtEnd,
        mid_capture_promotion: MidCapturePromotion::CrownAndContinue,
        men_capture_kings: true,
        king_landing: KingLanding::MustContinue,
        blocked: BlockedOutcome::Loss,
        numbering: Numbering::Standard,
    };

    /// Brazilian draughts (variants.md, "brazilian"): the international rules on 8x8.
    pub const BRAZILIAN: Rules = Rules {
        name: "brazilian",
        board: 8,
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
        numbering: Numbering::Standard,
    };

    /// Pool checkers (variants.md, "pool"; PDN GameType 23): Black first, flying kings, men
    /// capture backward, free choice, a man passing the far row mid-capture stays a man.
    pub const POOL: Rules = Rules {
        name: "pool",
        board: 8,
        first_to_move: Color::Black,
        men_capture_backward: true,
        kings: KingRange::Flying,
        capture_compulsory: true,
        precedence: Precedence::Free,
        removal: Removal::AtEnd,
        mid_capture_promotion: MidCapturePromotion::ContinueAsMan,
        men_capture_kings: true,
        king_landing: KingLanding::MustContinue,
        blocked: BlockedOutcome::Loss,
        numbering: Numbering::Standard,
    };

    /// Czech draughts (variants.md, "czech"): flying kings, men capture forward only, a king
    /// must capture if it can.
    pub const CZECH: Rules = Rules {
        name: "czech",
        board: 8,
        first_to_move: Color::White,
        men_capture_backward: false,
        kings: KingRange::Flying,
        capture_compulsory: true,
        precedence: Precedence::KingFirst,
        removal: Removal::AtEnd,
        mid_capture_promotion: MidCapturePromotion::CrownAndStop,
        men_capture_kings: true,
        king_landing: KingLanding::MustContinue,
        blocked: BlockedOutcome::Loss,
        numbering: Numbering::Standard,
    };

    /// Italian draughts (variants.md, "italian"; PDN GameType 22): short kings, men capture
    /// forward only and never capture kings, the Italian order of precedence, the mirrored
    /// board numbered from a8.
    pub const ITALIAN: Rules = Rules {
        name: "italian",
        board: 8,
        first_to_move: Color::White,
        men_capture_backward: false,
        kings: KingRange::Short,
        capture_compulsory: true,
        precedence: Precedence::Italian,
        removal: Removal::AtEnd,
        mid_capture_promotion: MidCapturePromotion::CrownAndStop,
        men_capture_kings: false,
        king_landing: KingLanding::MustContinue,
        blocked: BlockedOutcome::Loss,
        numbering: Numbering::Italian,
    };

    /// Spanish draughts (variants.md, "spanish"; PDN GameType 24): flying kings, men capture
    /// forward only, most pieces then most kings, the mirrored board numbered from h1.
    pub const SPANISH: Rules = Rules {
        name: "spanish",
        board: 8,
        first_to_move: Color::White,
        men_capture_backward: false,
        kings: KingRange::Flying,
        capture_compulsory: true,
        precedence: Precedence::MostPiecesThenKings,
        removal: Removal::AtEnd,
        mid_capture_promotion: MidCapturePromotion::CrownAndStop,
        men_capture_kings: true,
        king_landing: KingLanding::MustContinue,
        blocked: BlockedOutcome::Loss,
        numbering: Numbering::Spanish,
    };

    /// The 10x10 game of the optional-rules text (variants.md, "Optional rule fields"; seed
    /// 003): the international rules with optional capture (a quiet move may be played when a
    /// capture exists; a capture, once chosen, follows the usual precedence) and the default
    /// blocked outcome (loss). The same text's other options are fields already:
    /// `kings: KingRange::Short`, `precedence: Precedence::KingFirst`,
    /// `blocked: BlockedOutcome::Draw`.
    pub const INTERNATIONAL_OPTIONAL: Rules = Rules {
        name: "international-optional",
        capture_compulsory: false,
        ..Rules::INTERNATIONAL
    };

    /// Every preset of variants.md, in its order (the CLI's `dtb variants` and `--variant`).
    pub const PRESETS: &'static [Rules] = &[
        Rules::ENGLISH,
        Rules::INTERNATIONAL,
        Rules::GRACZ8,
        Rules::RUSSIAN,
        Rules::BRAZILIAN,
        Rules::POOL,
        Rules::CZECH,
        Rules::ITALIAN,
        Rules::SPANISH,
        Rules::INTERNATIONAL_OPTIONAL,
    ];

    /// The preset named `name` (case-insensitive), if any.
    pub fn by_name(name: &str) -> Option<Rules> {
        Self::PRESETS
            .iter()
            .copied()
            .find(|r| r.name.eq_ignore_ascii_case(name))
    }

    /// The board geometry these rules are played on.
    ///
    /// Internal: `Geometry` is not part of the engine API (`dtb-gen`, the front ends and the
    /// tests use it); engines use [`Rules::board`], [`Rules::square_number`] and
    /// [`Rules::square_of_number`].
    #[doc(hidden)]
    #[inline]
    pub fn geometry(&self) -> &'static Geometry {
        Geometry::for_size(self.board)
    }

    /// The number written in FEN and moves for internal square `sq` (see [`Numbering`]).
    #[inline]
    pub fn square_number(&self, sq: u8) -> u32 {
        self.numbering.number(self.geometry(), sq)
    }

    /// The internal square that this variant's players call `n`, if it is on the board.
    #[inline]
    pub fn square_of_number(&self, n: u32) -> Option<u8> {
        self.numbering.square(self.geometry(), n)
    }

    /// The rule fields as 16 bytes, stored in every table file header so that a table built
    /// under other rules is refused. Byte 0 is the encoding version (2: byte 12, the
    /// numbering, was added; version 1 had no byte 12 and covered only standard numbering);
    /// bytes 1-12 are the fields in declaration order, each as its enum discriminant or 0/1;
    /// bytes 13-15 are zero. Distinct for every preset, and for every rule set ([`Rules::decode`]
    /// reverses it).
    pub fn encode(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0] = 2;
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
        b[12] = self.numbering as u8;
        b
    }

    /// This rule set's compact identity: the fields of [`Rules::encode`] packed into 24 bits
    /// (board 8 bits, then each field in as many bits as its values need), with the
    /// whole-rules flag. Equal for two rule sets exactly when their encodings are.
    pub fn id(&self) -> RulesId {
        let e = self.encode();
        // (byte of encode, bits it needs): board, first to move, men capture backward, kings,
        // capture compulsory, precedence (5 values), removal, mid-capture promotion (3),
        // men capture kings, king landing, blocked (3), numbering (3).
        const FIELDS: [(usize, u32); 11] = [
            (2, 1),
            (3, 1),
            (4, 1),
            (5, 1),
            (6, 3),
            (7, 1),
            (8, 2),
            (9, 1),
            (10, 1),
            (11, 2),
            (12, 2),
        ];
        let mut id = u32::from(e[1]);
        let mut at = 8;
        for (byte, bits) in FIELDS {
            debug_assert!(u32::from(e[byte]) < 1 << bits);
            id |= u32::from(e[byte]) << at;
            at += bits;
        }
        RulesId(id | FULL_RULES)
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
        for (i, a) in Rules::PRESETS.iter().enumerate() {
            assert_eq!(Rules::by_name(a.name), Some(*a));
            assert_eq!(Rules::by_name(&a.name.to_uppercase()), Some(*a));
            for b in &Rules::PRESETS[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.encode(), b.encode(), "{} and {}", a.name, b.name);
            }
        }
        let names: Vec<&str> = Rules::PRESETS.iter().map(|r| r.name).collect();
        assert_eq!(
            names,
            [
                "english",
                "international",
                "gracz8",
                "russian",
                "brazilian",
                "pool",
                "czech",
                "italian",
                "spanish",
                "international-optional"
            ]
        );
    }

    /// `Rules::id` tells rule sets apart exactly as `encode` does: every preset its own, each
    /// single-field change of a preset another, the name not part of it.
    #[test]
    fn ids_are_distinct_exactly_when_encodings_are() {
        let mut all: Vec<Rules> = Rules::PRESETS.to_vec();
        for r in Rules::PRESETS {
            all.push(Rules {
                blocked: BlockedOutcome::Draw,
                ..*r
            });
            all.push(Rules {
                blocked: BlockedOutcome::Majority,
                ..*r
            });
            all.push(Rules {
                capture_compulsory: !r.capture_compulsory,
                ..*r
            });
            all.push(Rules {
                precedence: Precedence::KingFirst,
                ..*r
            });
            all.push(Rules {
                numbering: Numbering::Spanish,
                ..*r
            });
            all.push(Rules {
                name: "renamed",
                ..*r
            });
        }
        for a in &all {
            assert!(!a.id().is_board_only());
            assert_eq!(a.id().board(), a.board);
            for b in &all {
                assert_eq!(a.id() == b.id(), a.encode() == b.encode(), "{a:?} {b:?}");
            }
        }
        assert!(RulesId::board_only(8).is_board_only());
        assert_ne!(RulesId::board_only(8), Rules::ENGLISH.id());
        assert_ne!(RulesId::board_only(8), RulesId::board_only(10));
    }

    /// The out-of-scope variants of the reference data are not matched by a prefix or a
    /// neighbour's name.
    #[test]
    fn by_name_matches_whole_names_only() {
        for n in [
            "english-6x6",
            "international-6x6",
            "frisian",
            "killer",
            "thai-12men",
            "turkish",
            "canadian",
            "internat",
            "italian ",
            "",
        ] {
            assert_eq!(Rules::by_name(n), None, "{n:?}");
        }
    }

    /// variants.md: Italian 1-4 = a8, c8, e8, g8 and 29-32 = b1, d1, f1, h1; Spanish 1 = h1
    /// with White on 1-12. Internal squares are standard (row, column) with White at the
    /// bottom; the mirrored board's column c is the standard board's column N-1-c.
    #[test]
    fn mirrored_numberings_name_the_squares_their_players_mean() {
        let g = Rules::ITALIAN.geometry();
        // (number, row, column on the mirrored board); row 0 is rank 8, column 0 is file a.
        let italian = [
            (1, 0, 0),
            (2, 0, 2),
            (4, 0, 6),
            (5, 1, 1),
            (29, 7, 1),
            (32, 7, 7),
        ];
        for (n, row, col) in italian {
            let sq = Rules::ITALIAN.square_of_number(n).unwrap();
            assert_eq!(g.coords(sq), (row, 7 - col), "italian {n}");
            assert_eq!(Rules::ITALIAN.square_number(sq), n);
        }
        // Spanish: 1 = h1, 4 = b1, 5 = g2, 12 = a3, 32 = a8.
        let spanish = [
            (1, 7, 7),
            (4, 7, 1),
            (5, 6, 6),
            (8, 6, 0),
            (12, 5, 1),
            (32, 0, 0),
        ];
        for (n, row, col) in spanish {
            let sq = Rules::SPANISH.square_of_number(n).unwrap();
            assert_eq!(g.coords(sq), (row, 7 - col), "spanish {n}");
            assert_eq!(Rules::SPANISH.square_number(sq), n);
        }
        for r in Rules::PRESETS {
            let g = r.geometry();
            for sq in 0..g.squares {
                assert_eq!(r.square_of_number(r.square_number(sq)), Some(sq));
            }
            assert_eq!(r.square_of_number(0), None);
            assert_eq!(r.square_of_number(g.squares as u32 + 1), None);
        }
        // White's start squares: 21-32 internally; Italian 21-32, Spanish 1-12.
        let white_start = 0xFFFu64 << 20;
        assert_eq!(Numbering::Italian.to_internal(g, 0xFFF << 20), white_start);
        assert_eq!(Numbering::Spanish.to_internal(g, 0xFFF), white_start);
    }
}
