//! Game values and their resolution by search where tables hold "don't care".
//!
//! A value is a [`Code`], 16 bits ("DTW code"): `0` is a draw; any other code `c` means the side
//! to move wins or loses in `plies = (c & 0x7FFF) - 1` plies. Without the flag bit
//! ([`FLIP`], bit 15) an odd number of plies is a win and an even number a loss (`0` plies: a
//! side that has already lost), which is all the presets ever produce. The flag reverses the
//! outcome: a flagged code with an even number of plies is a win, with an odd number a loss.
//! Flagged codes arise only under `blocked = majority` ([`BlockedOutcome::Majority`]), where
//! a blocked side to move with more material has already won (`0` plies, [`WON`]) and a move
//! into such a position loses in one ply. Each (outcome, plies) pair has exactly one code
//! ([`Code::win`], [`Code::loss`]), and the code of a move's parent is the child's plus one
//! ([`Code::parent`]) with or without the flag.
//!
//! WLD tables are read into the same code with a nominal distance (win = 1 ply, loss = 0
//! plies, [`Code::of_wld`]), which keeps only the outcome. What a WLD file stores is another
//! code, [`crate::format::WldCode`].

use crate::movegen::{
    has_capture, has_quiet_move, legal_moves, quiet_moves, single_jumps, Counting, Move,
};
use crate::position::Position;
use crate::rules::{BlockedOutcome, Color, Rules};

/// The flag bit of a code whose outcome is the reverse of its parity (see the module docs).
pub const FLIP: u16 = 0x8000;

/// A game value as the solver and the DTW tables code it (see the module docs): a draw, or a
/// win or loss for the side to move with its distance in plies. The bits are those a DTW file
/// stores; a WLD file stores another code ([`crate::format::WldCode`]), so the two cannot be
/// swapped by mistake.
///
/// The order ([`Ord`]) is the side to move's preference: fast wins, then draws, then slow
/// losses ([`Code::goodness`]); codes of the same goodness (only invalid bit patterns) are
/// ordered by their bits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct Code(u16);

/// Code of a draw.
pub const DRAW: Code = Code(0);
/// Code of a position whose side to move has lost (no pieces or no move): 0 plies.
pub const LOST: Code = Code(1);
/// Code of a position whose side to move has already won: blocked, with more material, under
/// `blocked = majority` (0 plies).
pub const WON: Code = Code(FLIP | 1);

impl Code {
    /// The code of these bits (as a DTW file or the solver's memory holds them). Any bits are
    /// a code; a table reader checks the range before ([`crate::format::Header::check_block`]).
    #[inline]
    pub const fn from_bits(bits: u16) -> Code {
        Code(bits)
    }

    /// The bits of this code.
    #[inline]
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// The code of a win in `plies` plies (flagged when `plies` is even). `plies` below 32767.
    #[inline]
    pub const fn win(plies: u16) -> Code {
        if plies % 2 == 1 {
            Code(plies + 1)
        } else {
            Code(FLIP | (plies + 1))
        }
    }

    /// The code of a loss in `plies` plies (flagged when `plies` is odd). `plies` below 32767.
    #[inline]
    pub const fn loss(plies: u16) -> Code {
        if plies.is_multiple_of(2) {
            Code(plies + 1)
        } else {
            Code(FLIP | (plies + 1))
        }
    }

    /// The code of a WLD outcome with its nominal distance (win 1 ply, loss 0 plies), as WLD
    /// tables are read.
    #[inline]
    pub const fn of_wld(w: Wld) -> Code {
        match w {
            Wld::Win => Code(2),
            Wld::Loss => LOST,
            Wld::Draw => DRAW,
        }
    }

    /// The outcome for the side to move.
    #[inline]
    pub fn wld(self) -> Wld {
        if self == DRAW {
            Wld::Draw
        } else if (self.0 & !FLIP).is_multiple_of(2) != (self.0 & FLIP != 0) {
            // Unflagged: plies = code - 1 odd, the code even.
            Wld::Win
        } else {
            Wld::Loss
        }
    }

    /// Plies to the end of the game (`None` for a draw).
    #[inline]
    pub fn plies(self) -> Option<u16> {
        if self == DRAW {
            None
        } else {
            Some((self.0 & !FLIP).saturating_sub(1))
        }
    }

    /// The value for the mover of a move leading to a position of this value (whose side to
    /// move is the mover's opponent): one ply more, outcome reversed.
    #[inline]
    pub fn parent(self) -> Code {
        if self == DRAW {
            DRAW
        } else {
            Code(self.0 + 1)
        }
    }

    /// Ordering key: larger is better for the side to move (fast wins, then draws, then slow
    /// losses).
    #[inline]
    pub fn goodness(self) -> i32 {
        let plies = self.plies().unwrap_or(0) as i32;
        match self.wld() {
            Wld::Win => 100_000 - plies,
            Wld::Draw => 0,
            Wld::Loss => -100_000 + plies,
        }
    }
}

impl Ord for Code {
    #[inline]
    fn cmp(&self, other: &Code) -> std::cmp::Ordering {
        (self.goodness(), self.0).cmp(&(other.goodness(), other.0))
    }
}

impl PartialOrd for Code {
    #[inline]
    fn partial_cmp(&self, other: &Code) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Debug for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.plies() {
            Some(p) => write!(f, "Code({:#06x}: {} in {p})", self.0, self.wld()),
            None => write!(f, "Code(draw)"),
        }
    }
}

/// Win, loss or draw for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wld {
    Win,
    Draw,
    Loss,
}

impl Wld {
    /// `"win"`, `"draw"` or `"loss"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Wld::Win => "win",
            Wld::Draw => "draw",
            Wld::Loss => "loss",
        }
    }
}

impl std::fmt::Display for Wld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The value of `pos`, whose side to move has pieces but no legal move, under `rules`
/// ([`BlockedOutcome`]): lost, drawn, or under `majority` won by the side with more pieces,
/// with as many pieces by the side with more kings, else drawn. The game ends here: 0 plies.
#[inline]
pub fn blocked_code(rules: &Rules, pos: &Position) -> Code {
    match rules.blocked {
        BlockedOutcome::Loss => LOST,
        BlockedOutcome::Draw => DRAW,
        BlockedOutcome::Majority => {
            let me = pos.side_to_move();
            let key = |c: Color| {
                let p = pos.pieces(c);
                (p.count_ones(), (p & pos.kings()).count_ones())
            };
            match key(me).cmp(&key(me.opponent())) {
                std::cmp::Ordering::Greater => WON,
                std::cmp::Ordering::Less => LOST,
                std::cmp::Ordering::Equal => DRAW,
            }
        }
    }
}

/// The best value for the side to move over its moves, given the values of the positions
/// they lead to one at a time ([`Best::offer`]): the best [`Code::parent`], the first of equal
/// ones, and [`LOST`] when no move was offered.
#[derive(Clone, Copy, Debug, Default)]
pub struct Best(Option<Code>);

impl Best {
    /// Offers a move to a position of value `child`; true when the move is the best so far.
    #[inline]
    pub fn offer(&mut self, child: Code) -> bool {
        let v = child.parent();
        let better = self.0.is_none_or(|b| v.goodness() > b.goodness());
        if better {
            self.0 = Some(v);
        }
        better
    }

    /// The best value offered, or [`LOST`] if none was.
    #[inline]
    pub fn value(self) -> Code {
        self.0.unwrap_or(LOST)
    }
}

/// Where stored values come from: the generator's memory or table files.
pub trait ValueSource {
    /// The source's error (a missing or corrupt table).
    type Error;
    /// The stored code of `pos`, a position already [`normalize`]d (canonical material).
    /// Capture positions may hold any value ("don't care").
    fn stored(&self, pos: &Position) -> Result<Code, Self::Error>;

    /// Whether the table of `pos` (a [`normalize`]d position) leaves threat positions
    /// ([`is_threat_dont_care`]) "don't care", so that their value must come from a one-ply
    /// search: WLD files of format version 3 ([`crate::format::FORMAT_VERSION_THREAT`]).
    /// Sources holding true values everywhere (the generator's memory) answer `false`.
    fn threats_dont_care(&self, _pos: &Position) -> Result<bool, Self::Error> {
        Ok(false)
    }

    /// The code a capture from `before` into a position of code `child` stands for, before
    /// the ply it takes: `child` itself for game values; for DTC values the count profile's
    /// rule ([`crate::count::CountProfile::convert`]), since a capture may reset the counter.
    #[inline]
    fn capture_code(&self, _before: &Position, _after: &Position, child: Code) -> Code {
        child
    }
}

/// Whether the side not to move of `pos` has a capture (it would have one were it its turn):
/// the cheap first test of [`is_threat_dont_care`].
#[inline]
fn has_threat(rules: &Rules, pos: &Position) -> bool {
    has_capture(rules, &pos.with_side_to_move(pos.side_to_move().opponent()))
}

/// Whether `pos` is a **threat position** that a format-3 WLD file stores as "don't care":
/// under compulsory capture, the side to move has no capture but has a quiet move, the side
/// not to move has a capture (a threat), and every quiet move of the side to move leads to a
/// position that is either a capture position (resolved by the capture search) or not a
/// threat position in the same sense (its side not to move, the mover, has no capture), so
/// that a one-ply search from `pos` reads only stored values that are true. `moves` is
/// scratch space; on `true` it holds the quiet moves of `pos`.
///
/// The generator decides "don't care" by this function alone; the prober by the same three
/// rules, tested together with its one-ply search (`threat_search`); the tests compare every
/// answer of version 3 files with version 1 ones over whole slices.
pub fn is_threat_dont_care(rules: &Rules, pos: &Position, moves: &mut Vec<Move>) -> bool {
    if !rules.capture_compulsory || has_capture(rules, pos) || !has_threat(rules, pos) {
        return false;
    }
    threat_moves_all_safe(rules, pos, moves)
}

/// [`is_threat_dont_care`] for a position already known to be a threat candidate (capture
/// compulsory, the side to move without a capture, the side not to move with one), as the
/// generator knows it from its capture bits of both sides: the rest of the test, its quiet
/// moves (left in `moves`) and their successors.
pub fn threat_moves_all_safe(rules: &Rules, pos: &Position, moves: &mut Vec<Move>) -> bool {
    let me = pos.side_to_move();
    moves.clear();
    quiet_moves(rules, pos, moves);
    !moves.is_empty()
        && moves
            .iter()
            .all(|m| safe_successor(rules, &m.apply_unchecked(pos), me).is_some())
}

/// Rule 3 of [`is_threat_dont_care`] for one quiet successor `q` of a position whose side
/// to move was `me`: `Some(true)` when `q`'s side to move must capture (a capture
/// position), `Some(false)` when neither side can capture in `q` (not a threat position),
/// `None` when `q` breaks the rule (its side to move has no capture, `me` has one).
#[inline]
fn safe_successor(rules: &Rules, q: &Position, me: Color) -> Option<bool> {
    if has_capture(rules, q) {
        Some(true)
    } else if has_capture(rules, &q.with_side_to_move(me)) {
        None
    } else {
        Some(false)
    }
}

/// The canonical form of a position for table look-up: its material is canonical, and for a
/// colour-symmetric material the side to move is White. Returns the position to look up
/// (possibly colour-reversed, same game value).
pub fn normalize(rules: &Rules, pos: &Position) -> Position {
    let m = pos.material();
    let mirror = m.mirror();
    if m > mirror || (m == mirror && pos.side_to_move() == Color::Black) {
        pos.flipped(rules.geometry())
    } else {
        *pos
    }
}

/// Whether the position's stored value is "don't care": its side to move must capture.
#[inline]
pub fn is_capture_position(rules: &Rules, moves: &[Move]) -> bool {
    rules.capture_compulsory && moves.first().is_some_and(|m| m.is_capture())
}

/// The value code of `pos`: terminal positions directly, capture positions by a search over
/// the captures, others from `src` (after colour normalization). The side not to move must
/// have a piece.
pub fn resolve<S: ValueSource>(rules: &Rules, src: &S, pos: &Position) -> Result<Code, S::Error> {
    if pos.pieces(pos.side_to_move()) == 0 {
        return Ok(LOST);
    }
    if rules.capture_compulsory && !has_capture(rules, pos) {
        // The common case, without building a move list: a quiet position.
        if !has_quiet_move(rules, pos) {
            return Ok(blocked_code(rules, pos));
        }
        let n = normalize(rules, pos);
        if has_threat(rules, pos) && src.threats_dont_care(&n)? {
            if let Some(v) = threat_search(rules, src, pos)? {
                return Ok(v);
            }
        }
        return src.stored(&n);
    }
    searched(rules, src, pos)
}

/// [`resolve`] of a position whose side to move has a piece and, under compulsory capture,
/// a capture: a search over its moves (under free capture, its stored value when it has a
/// quiet move).
fn searched<S: ValueSource>(rules: &Rules, src: &S, pos: &Position) -> Result<Code, S::Error> {
    if rules.capture_compulsory {
        // Most are single jumps: no move list needed.
        let mut after = Vec::with_capacity(8);
        if single_jumps(rules, pos, &mut after) {
            let mut best = Best::default();
            for succ in &after {
                best.offer(src.capture_code(pos, succ, resolve(rules, src, succ)?));
            }
            return Ok(best.value());
        }
    }
    let mut moves = Vec::new();
    legal_moves(rules, pos, Counting::Unique, &mut moves);
    if moves.is_empty() {
        return Ok(blocked_code(rules, pos));
    }
    if is_capture_position(rules, &moves) {
        let mut best = Best::default();
        for m in &moves {
            let succ = m.apply_unchecked(pos);
            best.offer(src.capture_code(pos, &succ, resolve(rules, src, &succ)?));
        }
        return Ok(best.value());
    }
    src.stored(&normalize(rules, pos))
}

/// The value of a threat candidate `pos` (compulsory capture; its side to move has a quiet
/// move and no capture, its side not to move has a capture) from a table that leaves threat
/// positions "don't care": `None` when `pos` is not a threat position (a quiet move breaks
/// rule 3 of [`is_threat_dont_care`], so its stored value is true), else the best of its
/// quiet moves' successors, each a capture position (searched) or a position whose stored
/// value is true. Rule 3 is tested on every move before any value is read, and what it
/// learns of each successor (whether its side to move must capture) is kept for the search,
/// so no capture test is made twice. Only WLD tables leave threat positions "don't care",
/// where every win is as good as another: the search stops at the first winning move.
fn threat_search<S: ValueSource>(
    rules: &Rules,
    src: &S,
    pos: &Position,
) -> Result<Option<Code>, S::Error> {
    let me = pos.side_to_move();
    let mut moves = Vec::with_capacity(16);
    quiet_moves(rules, pos, &mut moves);
    let mut succ = Vec::with_capacity(moves.len());
    for m in &moves {
        let q = m.apply_unchecked(pos);
        let Some(capture) = safe_successor(rules, &q, me) else {
            return Ok(None);
        };
        succ.push((q, capture));
    }
    if succ.is_empty() {
        return Ok(None);
    }
    let mut best = Best::default();
    for (q, capture) in &succ {
        let v = if *capture {
            searched(rules, src, q)?
        } else if !has_quiet_move(rules, q) {
            // Neither side can capture in `q`, so it is no threat position: its side to
            // move is blocked, or its stored value is true.
            blocked_code(rules, q)
        } else {
            src.stored(&normalize(rules, q))?
        };
        if best.offer(v) && best.value().wld() == Wld::Win {
            break;
        }
    }
    Ok(Some(best.value()))
}
