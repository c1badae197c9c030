//! Legal move generation, written once against the fields of [`Rules`].
//!
//! Captures are found by a depth-first search over jump sequences from each piece; the
//! precedence rule then keeps the sequences it allows, and with compulsory capture quiet
//! moves are generated only when no capture exists.
//!
//! Move text (PDN) is read and written in the numbering of the rules ([`parse_move`],
//! [`Move::to_pdn_for`], [`pdn_in_for`]); [`Move::to_pdn`] and [`pdn_in`] write the standard
//! numbering, which is the internal one.

use crate::board::{Dir, Geometry, NONE};
use crate::fen::{algebraic_name, algebraic_square, Notation};
use crate::position::Position;
use crate::rules::{
    Color, KingLanding, KingRange, MidCapturePromotion, Precedence, Removal, Rules,
};

/// Most jumps one move can hold (no board here allows more captures in one sequence).
pub const MAX_JUMPS: usize = 24;

/// A move: a quiet step or slide, or a capture sequence. Squares are internal (0-based, the
/// standard numbering less one); [`Move::to_pdn_for`] writes the variant's PDN numbers and
/// [`Move::to_pdn`] the standard ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    /// Square the moving piece leaves.
    pub from: u8,
    /// Square where it ends.
    pub to: u8,
    /// Bitboard of the pieces taken (0 for a quiet move).
    pub captured: u64,
    /// Whether the moving man is crowned by this move.
    pub crowned: bool,
    jumps: u8,
    /// Landing square of each jump; `path[jumps-1] == to`.
    path: [u8; MAX_JUMPS],
    /// Square of the piece taken by each jump, in order.
    taken: [u8; MAX_JUMPS],
}

impl Move {
    fn quiet(from: u8, to: u8, crowned: bool) -> Move {
        Move {
            from,
            to,
            captured: 0,
            crowned,
            jumps: 0,
            path: [0; MAX_JUMPS],
            taken: [0; MAX_JUMPS],
        }
    }

    /// Whether this move captures.
    #[inline]
    pub fn is_capture(&self) -> bool {
        self.jumps > 0
    }

    /// Landing squares of the jumps, in order (empty for a quiet move).
    pub fn path(&self) -> &[u8] {
        &self.path[..self.jumps as usize]
    }

    /// Squares of the captured pieces in the order they were jumped.
    pub fn taken(&self) -> &[u8] {
        &self.taken[..self.jumps as usize]
    }

    /// PDN in the standard numbering (the internal one): `a-b` for a quiet move, `axb` for a
    /// capture, or with `full` the whole path `axcxb`. For a variant with its own numbering
    /// (Italian, Spanish) use [`Move::to_pdn_for`].
    pub fn to_pdn(&self, full: bool) -> String {
        self.pdn_with(full, |sq| sq as u32 + 1)
    }

    /// PDN in the square numbering of `rules` ([`Rules::numbering`]), otherwise as
    /// [`Move::to_pdn`]; [`parse_move`] reads it back for the same rules.
    pub fn to_pdn_for(&self, rules: &Rules, full: bool) -> String {
        self.pdn_with(full, |sq| rules.square_number(sq))
    }

    /// The move in `notation` on the board of `rules`: [`Notation::Numbers`] as
    /// [`Move::to_pdn_for`]; [`Notation::Algebraic`] as Russian and Brazilian players write
    /// it, `c3-d4` for a quiet move, `c3:e5` for a capture or with `full` its whole path
    /// `c3:e5:c7`. [`parse_move`] reads both back for the same rules.
    pub fn to_notation(&self, rules: &Rules, notation: Notation, full: bool) -> String {
        match notation {
            Notation::Numbers => self.to_pdn_for(rules, full),
            Notation::Algebraic => self.written(full, ':', |sq| algebraic_name(sq, rules)),
        }
    }

    fn pdn_with(&self, full: bool, number: impl Fn(u8) -> u32) -> String {
        self.written(full, 'x', |sq| number(sq).to_string())
    }

    fn written(&self, full: bool, capture: char, name: impl Fn(u8) -> String) -> String {
        if !self.is_capture() {
            return format!("{}-{}", name(self.from), name(self.to));
        }
        let mut s = name(self.from);
        let shown: &[u8] = if full { self.path() } else { &[self.to] };
        for &p in shown {
            s.push(capture);
            s.push_str(&name(p));
        }
        s
    }

    /// The position after this move is played in `pos` under `rules`, checked: the move must be
    /// one of `pos`'s legal moves (same start, end, captured pieces and crowning; the route of
    /// a capture does not matter), and `pos` a legal position of `rules`.
    ///
    /// # Errors
    /// [`MoveError::IllegalPosition`] if `pos` is not legal under `rules`;
    /// [`MoveError::Illegal`] if the move is not legal in `pos` (a move of another position,
    /// or one played twice).
    pub fn apply(&self, rules: &Rules, pos: &Position) -> Result<Position, MoveError> {
        Position::new(
            rules,
            pos.white(),
            pos.black(),
            pos.kings(),
            pos.side_to_move(),
        )
        .map_err(MoveError::IllegalPosition)?;
        let mut moves = Vec::new();
        legal_moves(rules, pos, Counting::Unique, &mut moves);
        if !moves.iter().any(|m| self.same_result(m)) {
            return Err(MoveError::Illegal(self.to_pdn_for(rules, true)));
        }
        Ok(self.apply_unchecked(pos))
    }

    /// Whether two moves lead from a position to the same position.
    fn same_result(&self, o: &Move) -> bool {
        (self.from, self.to, self.captured, self.crowned) == (o.from, o.to, o.captured, o.crowned)
    }

    /// Internal: the position after this move, **unchecked**, for the generator's and the
    /// prober's hot loops over moves that [`legal_moves`] just produced for this very `pos`.
    /// Any other move (of another position, played twice, fields changed) gives an impossible
    /// position (two pieces on a square, a piece from nowhere) that nothing downstream
    /// detects. Use [`Move::apply`].
    #[doc(hidden)]
    #[inline]
    pub fn apply_unchecked(&self, pos: &Position) -> Position {
        let from = 1u64 << self.from;
        let to = 1u64 << self.to;
        let side = pos.side_to_move();
        let own = (pos.pieces(side) & !from) | to;
        let opp = pos.pieces(side.opponent()) & !self.captured;
        let mut kings = pos.kings() & !self.captured;
        if kings & from != 0 {
            kings = (kings & !from) | to;
        } else if self.crowned {
            kings |= to;
        }
        let (w, b) = match side {
            Color::White => (own, opp),
            Color::Black => (opp, own),
        };
        Position::from_parts(w, b, kings, side.opponent(), pos.rules_id())
    }
}

/// How perft and move lists treat capture sequences that take the same pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counting {
    /// Moves with the same start, end and set of captured pieces (and the same crowning: a man
    /// crowned mid-capture may end where another route leaves it a man) are one move: they
    /// lead to the same position. This is the list of legal moves (data/README.md "unique").
    Unique,
    /// Sequences that take the same pieces in a different order are separate; a flying king's
    /// choice of intermediate landing squares with the same order of captures is not
    /// (data/README.md "paths").
    Paths,
}

struct Gen<'a> {
    rules: &'a Rules,
    g: &'static Geometry,
    side: Color,
    opp: u64,
    kings: u64,
    /// Occupied squares with the moving piece lifted off its starting square.
    occupied: u64,
    from: u8,
    path: [u8; MAX_JUMPS],
    taken: [u8; MAX_JUMPS],
    out: &'a mut Vec<Move>,
}

#[inline]
fn forward(side: Color) -> [Dir; 2] {
    match side {
        Color::White => [Dir::UpLeft, Dir::UpRight],
        Color::Black => [Dir::DownLeft, Dir::DownRight],
    }
}

impl Gen<'_> {
    #[inline]
    fn crowning_row(&self) -> u64 {
        match self.side {
            Color::White => self.g.top_row,
            Color::Black => self.g.bottom_row,
        }
    }

    #[inline]
    fn occupied_now(&self, captured: u64) -> u64 {
        match self.rules.removal {
            Removal::AtEnd => self.occupied,
            Removal::Immediate => self.occupied & !captured,
        }
    }

    #[inline]
    fn may_jump(&self, sq: u8, king: bool, captured: u64) -> bool {
        let bit = 1u64 << sq;
        self.opp & bit != 0
            && captured & bit == 0
            && (king || self.rules.men_capture_kings || self.kings & bit == 0)
    }

    #[inline]
    fn dir_allowed(&self, d: Dir, king: bool) -> bool {
        king || self.rules.men_capture_backward || forward(self.side).contains(&d)
    }

    /// The landing squares of the jumps available from `cur` in direction `d`, with the
    /// square jumped; bitboard of landings (0 if none).
    #[inline]
    fn jump_in(&self, cur: u8, d: Dir, king: bool, captured: u64) -> (u8, u64) {
        let occ = self.occupied_now(captured);
        if king && self.rules.kings == KingRange::Flying {
            // Slide to the first piece, then over it to the next (or the edge).
            let over = self.g.slide(cur, d, occ).1;
            if over == NONE || !self.may_jump(over, king, captured) {
                return (NONE, 0);
            }
            return (over, self.g.slide(over, d, occ).0);
        }
        let over = self.g.step(cur, d);
        if over == NONE || !self.may_jump(over, king, captured) {
            return (NONE, 0);
        }
        let land = self.g.step(over, d);
        if land == NONE || occ & (1u64 << land) != 0 {
            return (over, 0);
        }
        (over, 1u64 << land)
    }

    fn can_capture(&self, cur: u8, king: bool, captured: u64) -> bool {
        Dir::ALL
            .iter()
            .any(|&d| self.dir_allowed(d, king) && self.jump_in(cur, d, king, captured).1 != 0)
    }

    fn search(&mut self, cur: u8, king: bool, crowned: bool, captured: u64, depth: usize) {
        let mut found = false;
        if depth < MAX_JUMPS {
            for d in Dir::ALL {
                if !self.dir_allowed(d, king) {
                    continue;
                }
                let (over, mut lands) = self.jump_in(cur, d, king, captured);
                if lands == 0 {
                    continue;
                }
                found = true;
                let cap = captured | (1u64 << over);
                if king
                    && self.rules.kings == KingRange::Flying
                    && self.rules.king_landing == KingLanding::MustContinue
                    && lands.count_ones() > 1
                {
                    let mut cont = 0u64;
                    let mut l = lands;
                    while l != 0 {
                        let sq = l.trailing_zeros() as u8;
                        l &= l - 1;
                        if self.can_capture(sq, true, cap) {
                            cont |= 1u64 << sq;
                        }
                    }
                    if cont != 0 {
                        lands = cont;
                    }
                }
                self.taken[depth] = over;
                while lands != 0 {
                    let land = lands.trailing_zeros() as u8;
                    lands &= lands - 1;
                    self.path[depth] = land;
                    let reaches_row = !king && self.crowning_row() & (1u64 << land) != 0;
                    if reaches_row {
                        match self.rules.mid_capture_promotion {
                            MidCapturePromotion::CrownAndStop => {
                                self.record(land, true, cap, depth + 1)
                            }
                            MidCapturePromotion::CrownAndContinue => {
                                self.search(land, true, true, cap, depth + 1)
                            }
                            MidCapturePromotion::ContinueAsMan => {
                                self.search(land, false, false, cap, depth + 1)
                            }
                        }
                    } else {
                        self.search(land, king, crowned, cap, depth + 1);
                    }
                }
            }
        }
        if !found && depth > 0 {
            let ends_on_row = self.crowning_row() & (1u64 << cur) != 0;
            let was_man = self.kings & (1u64 << self.from) == 0;
            self.record(cur, crowned || (was_man && ends_on_row), captured, depth);
        }
    }

    fn record(&mut self, to: u8, crowned: bool, captured: u64, jumps: usize) {
        let mut m = Move::quiet(self.from, to, crowned);
        m.captured = captured;
        m.jumps = jumps as u8;
        m.path[..jumps].copy_from_slice(&self.path[..jumps]);
        m.taken[..jumps].copy_from_slice(&self.taken[..jumps]);
        self.out.push(m);
    }
}

fn precedence_key(rules: &Rules, kings: u64, m: &Move) -> (u32, u32, u32, u64) {
    let n = m.captured.count_ones();
    match rules.precedence {
        Precedence::Free => (0, 0, 0, 0),
        Precedence::MostPieces => (n, 0, 0, 0),
        Precedence::MostPiecesThenKings => (n, (m.captured & kings).count_ones(), 0, 0),
        Precedence::KingFirst => ((kings >> m.from) as u32 & 1, 0, 0, 0),
        Precedence::Italian => {
            let by_king = (kings >> m.from) as u32 & 1;
            let nk = (m.captured & kings).count_ones();
            // Earlier kings are better: a bit per step, set where a king was taken, the first
            // step most significant.
            let mut order = 0u64;
            for (i, &t) in m.taken().iter().enumerate() {
                if kings & (1u64 << t) != 0 {
                    order |= 1u64 << (63 - i);
                }
            }
            (n, by_king, nk, order)
        }
    }
}

/// The pieces of the side to move with a first jump: a piece they may take next to them
/// (in a direction they capture in) and an empty square beyond, whole sets at once. Flying
/// kings are all taken (their jumps are found along the diagonal).
fn first_jumpers(rules: &Rules, pos: &Position) -> u64 {
    let g = rules.geometry();
    let side = pos.side_to_move();
    let own = pos.pieces(side);
    let opp = pos.pieces(side.opponent());
    let kings = pos.kings();
    let empty = g.all & !pos.occupied();
    let by_man = if rules.men_capture_kings {
        opp
    } else {
        opp & !kings
    };
    let (men, own_kings) = (own & !kings, own & kings);
    let mut bb = 0;
    if men != 0 {
        for &d in man_capture_dirs(rules, side) {
            bb |= short_jumpers(g, men, by_man, empty, d);
        }
    }
    if rules.kings == KingRange::Flying {
        bb |= own_kings;
    } else if own_kings != 0 {
        for d in Dir::ALL {
            bb |= short_jumpers(g, own_kings, opp, empty, d);
        }
    }
    bb
}

/// A capture generator for the side to move of `pos`, appending to `out`.
fn generator<'a>(rules: &'a Rules, pos: &Position, out: &'a mut Vec<Move>) -> Gen<'a> {
    let side = pos.side_to_move();
    Gen {
        rules,
        g: rules.geometry(),
        side,
        opp: pos.pieces(side.opponent()),
        kings: pos.kings(),
        occupied: 0,
        from: 0,
        path: [0; MAX_JUMPS],
        taken: [0; MAX_JUMPS],
        out,
    }
}

impl Gen<'_> {
    /// Every capture of the piece on `sq` (of the side to move of `pos`).
    #[inline]
    fn search_piece(&mut self, pos: &Position, sq: u8) {
        self.from = sq;
        self.occupied = pos.occupied() & !(1u64 << sq);
        let king = pos.kings() & (1u64 << sq) != 0;
        self.search(sq, king, false, 0, 0);
    }
}

/// Every capture of the piece on `from` (a piece of the side to move), before any precedence
/// rule: under [`Precedence::Free`] exactly the captures among the legal moves that start
/// there. `out` is cleared first; it stays empty where that piece has none, and where
/// `from` holds no piece of the side to move (an empty square, the other side's, or a
/// number past the board's squares). Each route is listed (as [`Counting::Paths`] counts
/// them).
pub fn captures_from(rules: &Rules, pos: &Position, from: u8, out: &mut Vec<Move>) {
    out.clear();
    let own = pos.pieces(pos.side_to_move());
    if own.checked_shr(u32::from(from)).is_some_and(|b| b & 1 != 0) {
        generator(rules, pos, out).search_piece(pos, from);
    }
}

/// All captures available to the side to move (after the precedence rule), appended to `out`.
fn captures(rules: &Rules, pos: &Position, out: &mut Vec<Move>) {
    let start = out.len();
    // Only the pieces with a first jump are searched.
    let mut bb = first_jumpers(rules, pos);
    let mut gen = generator(rules, pos, out);
    while bb != 0 {
        let sq = bb.trailing_zeros() as u8;
        bb &= bb - 1;
        gen.search_piece(pos, sq);
    }
    if rules.precedence != Precedence::Free && out.len() > start + 1 {
        let kings = pos.kings();
        let best = out[start..]
            .iter()
            .map(|m| precedence_key(rules, kings, m))
            .max()
            .unwrap_or_default();
        let mut i = start;
        while i < out.len() {
            if precedence_key(rules, kings, &out[i]) == best {
                i += 1;
            } else {
                out.swap_remove(i);
            }
        }
    }
}

/// The directions in which a man of `side` captures: forward only, or all four.
#[inline]
fn man_capture_dirs(rules: &Rules, side: Color) -> &'static [Dir] {
    if rules.men_capture_backward {
        &Dir::ALL
    } else {
        match side {
            Color::White => &[Dir::UpLeft, Dir::UpRight],
            Color::Black => &[Dir::DownLeft, Dir::DownRight],
        }
    }
}

/// The pieces of `from` that can jump in direction `d` (one step, no flying): a piece of
/// `over` next to them there and an `empty` square beyond. Whole sets at once
/// ([`Geometry::step_set`] against the direction finds the squares next to a set).
#[inline(always)]
fn short_jumpers(g: &Geometry, from: u64, over: u64, empty: u64, d: Dir) -> u64 {
    let back = d.reverse();
    from & g.step_set(over & g.step_set(empty, back), back)
}

/// Whether the side to move has a capture: a piece with an enemy piece it may take next to
/// it (a flying king: first along an empty diagonal) and an empty square just beyond.
pub fn has_capture(rules: &Rules, pos: &Position) -> bool {
    let g = rules.geometry();
    let side = pos.side_to_move();
    let empty = g.all & !pos.occupied();
    let opp = pos.pieces(side.opponent());
    let by_man = if rules.men_capture_kings {
        opp
    } else {
        opp & !pos.kings()
    };
    let own = pos.pieces(side);
    let jumps = |from: u64, over: u64, d: Dir| short_jumpers(g, from, over, empty, d) != 0;
    let men = own & !pos.kings();
    if men != 0
        && man_capture_dirs(rules, side)
            .iter()
            .any(|&d| jumps(men, by_man, d))
    {
        return true;
    }
    let kings = own & pos.kings();
    if kings == 0 {
        return false;
    }
    if rules.kings != KingRange::Flying {
        return Dir::ALL.iter().any(|&d| jumps(kings, opp, d));
    }
    // A flying king first slides along empty squares to the first occupied square of each
    // diagonal (a ray table and a bit scan, [`Geometry::slide`]); it captures when that
    // square holds an enemy piece with an empty square just beyond. Endgames hold few kings,
    // so this goes king by king (it was all kings at once, a step per square slid).
    let occ = pos.occupied();
    let mut each = kings;
    while each != 0 {
        let sq = each.trailing_zeros() as u8;
        each &= each - 1;
        for d in Dir::ALL {
            let (_, first) = g.slide(sq, d, occ);
            if first != NONE && opp >> first & 1 != 0 {
                let beyond = g.step(first, d);
                if beyond != NONE && empty >> beyond & 1 != 0 {
                    return true;
                }
            }
        }
    }
    false
}

/// The positions after each capture of the side to move, when every capture is a single
/// jump whose piece could not jump again, taken by a man or a short-range king: `true`, with
/// `out` holding one position per legal capture (`Move::apply_unchecked` of each move `legal_moves`
/// lists with [`Counting::Unique`], in another order; empty when there is no capture).
///
/// `false` (and `out` unspecified) when the general generator is needed: some piece could
/// jump again, the side to move has a flying king, a precedence rule could choose among
/// single captures (all but none and "most pieces"), or a man reaching the crowning row
/// would go on capturing as a king.
///
/// The fast path of position evaluation (the solver's capture positions and
/// [`crate::value::resolve`]): most capture positions of small endgames hold only single
/// jumps, and this skips building move lists. For the generator and the probe's own search,
/// not part of the engine API.
#[doc(hidden)]
pub fn single_jumps(rules: &Rules, pos: &Position, out: &mut Vec<Position>) -> bool {
    out.clear();
    if !matches!(rules.precedence, Precedence::Free | Precedence::MostPieces) {
        return false;
    }
    let side = pos.side_to_move();
    let own = pos.pieces(side);
    let kings = pos.kings();
    if own & kings != 0 && rules.kings == KingRange::Flying {
        return false;
    }
    let g = rules.geometry();
    let opp = pos.pieces(side.opponent());
    let occ = pos.occupied();
    let row = match side {
        Color::White => g.top_row,
        Color::Black => g.bottom_row,
    };
    let by_man = if rules.men_capture_kings {
        opp
    } else {
        opp & !kings
    };
    let man_dirs = man_capture_dirs(rules, side);
    // Only the pieces that can take something are looked at (no flying king here).
    let mut bb = first_jumpers(rules, pos);
    while bb != 0 {
        let sq = bb.trailing_zeros() as u8;
        bb &= bb - 1;
        let king = kings >> sq & 1 != 0;
        let (dirs, takes): (&[Dir], u64) = if king {
            (&Dir::ALL, opp)
        } else {
            (man_dirs, by_man)
        };
        for &d in dirs {
            let over = g.step(sq, d);
            if over == NONE || takes >> over & 1 == 0 {
                continue;
            }
            let land = g.step(over, d);
            if land == NONE || occ >> land & 1 != 0 {
                continue;
            }
            let crowns = !king && row >> land & 1 != 0;
            if crowns && rules.mid_capture_promotion == MidCapturePromotion::CrownAndContinue {
                return false;
            }
            if !(crowns && rules.mid_capture_promotion == MidCapturePromotion::CrownAndStop) {
                // Could the same piece jump again from `land`? Its start square is empty now;
                // the piece just taken cannot be taken again, and (short range) no second
                // jump lands on it, so when captured pieces leave the board does not matter.
                let occ2 = occ & !(1u64 << sq);
                for &d2 in dirs {
                    let o2 = g.step(land, d2);
                    if o2 == NONE || o2 == over || takes >> o2 & 1 == 0 {
                        continue;
                    }
                    let l2 = g.step(o2, d2);
                    if l2 != NONE && occ2 >> l2 & 1 == 0 {
                        return false;
                    }
                }
            }
            let moved = (1u64 << sq) | (1u64 << land);
            let own2 = own ^ moved;
            let opp2 = opp & !(1u64 << over);
            let mut kings2 = kings & !(1u64 << over);
            if king {
                kings2 ^= moved;
            } else if crowns {
                kings2 |= 1u64 << land;
            }
            let (w, b) = match side {
                Color::White => (own2, opp2),
                Color::Black => (opp2, own2),
            };
            out.push(Position::from_parts(
                w,
                b,
                kings2,
                side.opponent(),
                pos.rules_id(),
            ));
        }
    }
    true
}

/// Whether the side to move has a quiet (non-capturing) move: a man with an empty square
/// diagonally forward, or a king with an empty neighbouring square.
pub fn has_quiet_move(rules: &Rules, pos: &Position) -> bool {
    let g = rules.geometry();
    let side = pos.side_to_move();
    let empty = g.all & !pos.occupied();
    let own = pos.pieces(side);
    let mut men = own & !pos.kings();
    while men != 0 {
        let sq = men.trailing_zeros() as u8;
        men &= men - 1;
        if forward(side)
            .iter()
            .any(|&d| g.step(sq, d) != NONE && empty >> g.step(sq, d) & 1 != 0)
        {
            return true;
        }
    }
    let mut kings = own & pos.kings();
    while kings != 0 {
        let sq = kings.trailing_zeros() as u8;
        kings &= kings - 1;
        if Dir::ALL
            .iter()
            .any(|&d| g.step(sq, d) != NONE && empty >> g.step(sq, d) & 1 != 0)
        {
            return true;
        }
    }
    false
}

/// The single jumps of the side not to move in `pos` by men (and short kings), per
/// direction: how many, the squares of the pieces they take, the squares they land on.
#[inline]
fn short_jumps(rules: &Rules, pos: &Position) -> ([u32; 4], [u64; 4], [u64; 4]) {
    let g = rules.geometry();
    let them = pos.side_to_move().opponent();
    let empty = g.all & !pos.occupied();
    let (mine, their, kings) = (pos.pieces(them.opponent()), pos.pieces(them), pos.kings());
    let by_man = if rules.men_capture_kings {
        mine
    } else {
        mine & !kings
    };
    let mut jumpers = [0u64; 4];
    for &d in man_capture_dirs(rules, them) {
        jumpers[d as usize] |= short_jumpers(g, their & !kings, by_man, empty, d);
    }
    if rules.kings != KingRange::Flying && their & kings != 0 {
        for d in Dir::ALL {
            jumpers[d as usize] |= short_jumpers(g, their & kings, mine, empty, d);
        }
    }
    let (mut count, mut over, mut land) = ([0u32; 4], [0u64; 4], [0u64; 4]);
    for d in Dir::ALL {
        let k = d as usize;
        count[k] = jumpers[k].count_ones();
        over[k] = g.step_set(jumpers[k], d);
        land[k] = g.step_set(over[k], d);
    }
    (count, over, land)
}

/// Room for the other side's flying kings' jumps in [`quiet_successors_keep_threats`].
const FLIGHTS: usize = 32;

/// The jumps of the flying kings `kings` over pieces of `mine` (squares occupied: `occ`):
/// per jump, the piece taken and the squares that must stay empty (those slid over and the
/// one just beyond the piece), written into `out`; returns how many. Past `out`'s room the
/// rest are not counted, which only sends more moves to the capture tests.
fn flying_jumps(g: &Geometry, kings: u64, mine: u64, occ: u64, out: &mut [(u8, u64)]) -> usize {
    let empty = g.all & !occ;
    let mut n = 0;
    let mut ks = kings;
    while ks != 0 && n < out.len() {
        let k = ks.trailing_zeros() as u8;
        ks &= ks - 1;
        for d in Dir::ALL {
            let (passed, first) = g.slide(k, d, occ);
            if first == NONE || mine >> first & 1 == 0 {
                continue;
            }
            let beyond = g.step(first, d);
            if beyond != NONE && empty >> beyond & 1 != 0 && n < out.len() {
                out[n] = (first, passed | 1u64 << beyond);
                n += 1;
            }
        }
    }
    n
}

/// Whether `pos` has a quiet move and every quiet move leads to a position where the side
/// then to move (the other side) has a capture, or where the mover would have none: the
/// successor test of a threat position ([`crate::value::threat_moves_all_safe`], whose answer
/// this is), without a move list, for the generator's threat pass.
///
/// The other side's single jumps in `pos` are found once, by direction. A quiet move from
/// `a` to `b` leaves such a jump in place unless the piece it takes stood on `a` or it lands
/// on `b` (the jumper, the piece taken and its kind are otherwise unchanged), so while one
/// is left the other side has a capture after the move and neither capture test is needed.
/// A flying king's jump stays unless the move takes away the piece it takes or fills a
/// square it slides over or the one beyond that piece.
pub fn quiet_successors_keep_threats(rules: &Rules, pos: &Position) -> bool {
    let g = rules.geometry();
    let me = pos.side_to_move();
    let them = me.opponent();
    let occ = pos.occupied();
    let empty = g.all & !occ;
    let mine = pos.pieces(me);
    let kings = pos.kings();
    let their = pos.pieces(them);
    let (count, over, land) = short_jumps(rules, pos);
    let mut flying = [(0u8, 0u64); FLIGHTS];
    let flights = if rules.kings == KingRange::Flying {
        flying_jumps(g, their & kings, mine, occ, &mut flying)
    } else {
        0
    };
    let flying = &flying[..flights];
    // Whether a jump of the other side is left after the move from `a` to `b`: per
    // direction, its jumps less the one over `a` and the one onto `b` (one jump when `b` is
    // just beyond `a`); or a flying king's whose piece is not the mover and whose squares
    // `b` leaves empty.
    let jump_left = |a: u8, b: u8| {
        Dir::ALL.iter().any(|&d| {
            let k = d as usize;
            let by_a = (over[k] >> a & 1) as u32;
            let by_b = (land[k] >> b & 1) as u32;
            let same = by_a & by_b & u32::from(g.step(a, d) == b);
            count[k] > by_a + by_b - same
        }) || flying
            .iter()
            .any(|&(taken, clear)| taken != a && clear >> b & 1 == 0)
    };
    let safe = |a: u8, b: u8| {
        if jump_left(a, b) {
            return true;
        }
        let q = pos.after_quiet_move(g, a, b);
        has_capture(rules, &q) || !has_capture(rules, &q.with_side_to_move(me))
    };
    // Only a move from a square a jump takes, or onto a square a jump lands on, can leave
    // no jump: the others are safe without a look (when there is a jump; without one,
    // every move is looked at). Steps of men (and of short kings) are taken a direction at
    // a time, the risky ones alone one by one.
    let (over_any, land_any) = if count.iter().sum::<u32>() == 0 && flying.is_empty() {
        (g.all, g.all)
    } else {
        flying.iter().fold(
            (
                over.iter().fold(0, |x, &o| x | o),
                land.iter().fold(0, |x, &l| x | l),
            ),
            |(o, l), &(taken, clear)| (o | 1u64 << taken, l | clear),
        )
    };
    let mut any = false;
    let mut steps = |pieces: u64, d: Dir| {
        let back = d.reverse();
        let movers = pieces & g.step_set(empty, back);
        any |= movers != 0;
        let mut risky = movers & (over_any | g.step_set(land_any, back));
        while risky != 0 {
            let a = risky.trailing_zeros() as u8;
            risky &= risky - 1;
            if !safe(a, g.step(a, d)) {
                return false;
            }
        }
        true
    };
    for d in forward(me) {
        if !steps(mine & !kings, d) {
            return false;
        }
    }
    let my_kings = mine & kings;
    if rules.kings == KingRange::Short {
        for d in Dir::ALL {
            if my_kings != 0 && !steps(my_kings, d) {
                return false;
            }
        }
        return any;
    }
    let mut ks = my_kings;
    while ks != 0 {
        let a = ks.trailing_zeros() as u8;
        ks &= ks - 1;
        for d in Dir::ALL {
            let mut b = g.step(a, d);
            while b != NONE && empty >> b & 1 != 0 {
                let risky = over_any >> a & 1 != 0 || land_any >> b & 1 != 0;
                if risky && !safe(a, b) {
                    return false;
                }
                any = true;
                b = g.step(b, d);
            }
        }
    }
    any
}

/// Quiet (non-capturing) moves of the side to move, appended to `out`.
pub fn quiet_moves(rules: &Rules, pos: &Position, out: &mut Vec<Move>) {
    let g = rules.geometry();
    let side = pos.side_to_move();
    let occ = pos.occupied();
    let row = match side {
        Color::White => g.top_row,
        Color::Black => g.bottom_row,
    };
    let own = pos.pieces(side);
    let mut men = own & !pos.kings();
    while men != 0 {
        let sq = men.trailing_zeros() as u8;
        men &= men - 1;
        for d in forward(side) {
            let t = g.step(sq, d);
            if t != NONE && occ & (1u64 << t) == 0 {
                out.push(Move::quiet(sq, t, row & (1u64 << t) != 0));
            }
        }
    }
    let mut kings = own & pos.kings();
    while kings != 0 {
        let sq = kings.trailing_zeros() as u8;
        kings &= kings - 1;
        for d in Dir::ALL {
            let mut t = g.step(sq, d);
            while t != NONE && occ & (1u64 << t) == 0 {
                out.push(Move::quiet(sq, t, false));
                if rules.kings == KingRange::Short {
                    break;
                }
                t = g.step(t, d);
            }
        }
    }
}

/// The legal moves of `pos` under `rules`, appended to `out` (cleared first).
pub fn legal_moves(rules: &Rules, pos: &Position, counting: Counting, out: &mut Vec<Move>) {
    out.clear();
    captures(rules, pos, out);
    match counting {
        Counting::Unique => dedup_by(out, |a, b| {
            a.from == b.from && a.to == b.to && a.captured == b.captured && a.crowned == b.crowned
        }),
        Counting::Paths => dedup_by(out, |a, b| {
            a.from == b.from && a.to == b.to && a.taken() == b.taken() && a.crowned == b.crowned
        }),
    }
    if out.is_empty() || !rules.capture_compulsory {
        quiet_moves(rules, pos, out);
    }
}

fn dedup_by(v: &mut Vec<Move>, same: impl Fn(&Move, &Move) -> bool) {
    if v.len() < 2 {
        return;
    }
    let mut i = 1;
    while i < v.len() {
        if v[..i].iter().any(|m| same(m, &v[i])) {
            v.remove(i);
        } else {
            i += 1;
        }
    }
}

/// Perft: the number of leaf nodes of the legal-move tree of depth `depth`.
pub fn perft(rules: &Rules, pos: &Position, depth: u32, counting: Counting) -> u64 {
    let mut stack: Vec<Vec<Move>> = (0..=depth).map(|_| Vec::with_capacity(32)).collect();
    perft_rec(rules, pos, depth, counting, &mut stack)
}

fn perft_rec(
    rules: &Rules,
    pos: &Position,
    depth: u32,
    counting: Counting,
    stack: &mut [Vec<Move>],
) -> u64 {
    if depth == 0 {
        return 1;
    }
    let (moves, rest) = stack.split_first_mut().expect("stack has depth + 1 levels");
    legal_moves(rules, pos, counting, moves);
    if depth == 1 {
        return moves.len() as u64;
    }
    let mut n = 0;
    for m in moves.iter() {
        n += perft_rec(rules, &m.apply_unchecked(pos), depth - 1, counting, rest);
    }
    n
}

/// Why a move text does not name exactly one legal move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// Not move notation at all.
    #[error(
        "{} is not move notation (a-b, axb or axcxb, squares as numbers or as c3)",
        crate::quote(.0)
    )]
    Syntax(String),
    /// Well formed, but a square number is off the board.
    #[error(
        "{} names square {square}, which is not on the board (its squares are numbered from 1 \
         to {max})",
        clip(.text)
    )]
    OffBoard {
        /// The move text.
        text: String,
        /// The number given.
        square: u32,
        /// The board's largest square number.
        max: u32,
    },
    /// Well formed, but no legal move of the position has these squares.
    #[error("{} is not a legal move here", clip(.0))]
    Illegal(String),
    /// Several legal captures match (the move text and the full paths to choose from).
    #[error("{} is ambiguous here: give the full path ({})", clip(.0), .1)]
    Ambiguous(String, String),
    /// [`Move::apply`] on a position that is not legal under the rules given.
    #[error("illegal position: {0}")]
    IllegalPosition(crate::position::PositionError),
}

/// `text` as an error shows it: whole up to 40 characters, else its first 40 and its length
/// (a move read from a file may be any length).
fn clip(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(40) {
        None => text.into(),
        Some((cut, _)) => format!("{}... ({} bytes)", &text[..cut], text.len()).into(),
    }
}

/// Find the legal move of `pos` that PDN text `text` names (`11-15`, `22x15`, `3x12x19`), square
/// numbers in the numbering of `rules` ([`Rules::numbering`]), or algebraic squares as Russian
/// and Brazilian players write them (`c3-d4`, `c3:e5`, `c3xe5`, the full path `c3:e5:c7`).
///
/// # Errors
/// [`MoveError`] if the text is malformed, names no legal move, or names several.
pub fn parse_move(rules: &Rules, pos: &Position, text: &str) -> Result<Move, MoveError> {
    let t = text.trim();
    let capture = t.contains(['x', 'X', ':']);
    let parts: Vec<&str> = t.split(['x', 'X', ':', '-']).collect();
    let mut squares = Vec::with_capacity(parts.len());
    for p in &parts {
        let digits = p.trim();
        // Digits only: `parse` would also take a sign (`+30`).
        let sq = match digits.parse::<u32>() {
            Ok(n) if digits.len() <= 3 && digits.bytes().all(|b| b.is_ascii_digit()) => {
                match rules.square_of_number(n) {
                    Some(sq) => Some(sq),
                    None => {
                        return Err(MoveError::OffBoard {
                            text: t.to_string(),
                            square: n,
                            max: u32::from(rules.geometry().squares),
                        })
                    }
                }
            }
            _ => algebraic_square(digits, rules).ok().flatten(),
        };
        match sq {
            Some(sq) => squares.push(sq),
            None => return Err(MoveError::Syntax(t.to_string())),
        }
    }
    if squares.len() < 2 || (!capture && squares.len() != 2) {
        return Err(MoveError::Syntax(t.to_string()));
    }
    let mut moves = Vec::new();
    legal_moves(rules, pos, Counting::Unique, &mut moves);
    let from = squares[0];
    let to = *squares.last().expect("at least two squares");
    let mut matching: Vec<&Move> = moves
        .iter()
        .filter(|m| m.from == from && m.to == to && m.is_capture() == capture)
        .collect();
    if squares.len() > 2 {
        // A full path: the move with exactly these landing squares, or else (a flying king may
        // land on other squares between the same captures) the one taking the pieces that
        // the path passes over.
        let exact: Vec<&Move> = matching
            .iter()
            .copied()
            .filter(|m| m.path() == &squares[1..])
            .collect();
        matching = if exact.is_empty() {
            let passed = pieces_passed(rules, pos, &squares);
            matching
                .into_iter()
                .filter(|m| Some(m.captured) == passed)
                .collect()
        } else {
            exact
        };
    }
    match matching.len() {
        0 => Err(MoveError::Illegal(t.to_string())),
        1 => Ok(*matching[0]),
        _ => Err(MoveError::Ambiguous(
            t.to_string(),
            matching
                .iter()
                .map(|m| m.to_pdn_for(rules, true))
                .collect::<Vec<_>>()
                .join(" or "),
        )),
    }
}

/// The opponent's pieces on the straight diagonal segments between consecutive squares of
/// `path`, or `None` if two consecutive squares are not on one diagonal.
fn pieces_passed(rules: &Rules, pos: &Position, path: &[u8]) -> Option<u64> {
    let g = rules.geometry();
    let opp = pos.pieces(pos.side_to_move().opponent());
    let mut passed = 0u64;
    for w in path.windows(2) {
        let (a, b) = (w[0], w[1]);
        let mut found = false;
        for d in Dir::ALL {
            let mut between = 0u64;
            let mut sq = g.step(a, d);
            while sq != NONE && sq != b {
                between |= 1u64 << sq;
                sq = g.step(sq, d);
            }
            if sq == b {
                passed |= between & opp;
                found = true;
                break;
            }
        }
        if !found {
            return None;
        }
    }
    Some(passed)
}

/// PDN for `m` among the legal moves `all`, in the standard numbering: the short form, or the
/// full path where the short form would name two moves. For a variant with its own numbering
/// use [`pdn_in_for`].
pub fn pdn_in(m: &Move, all: &[Move]) -> String {
    m.to_pdn(needs_full_path(m, all))
}

/// [`pdn_in`] in the square numbering of `rules` (Italian and Spanish number their own boards).
pub fn pdn_in_for(rules: &Rules, m: &Move, all: &[Move]) -> String {
    m.to_pdn_for(rules, needs_full_path(m, all))
}

/// `m` among the legal moves `all` in `notation` ([`Move::to_notation`]): the short form, or
/// the full path where the short form would name two moves. [`Notation::of`] gives the
/// notation a variant's players write.
pub fn notation_in(rules: &Rules, notation: Notation, m: &Move, all: &[Move]) -> String {
    m.to_notation(rules, notation, needs_full_path(m, all))
}

fn needs_full_path(m: &Move, all: &[Move]) -> bool {
    m.is_capture()
        && all.iter().any(|o| {
            o.from == m.from && o.to == m.to && (o.captured != m.captured || o.crowned != m.crowned)
        })
}

/// Positions from which a quiet move that keeps the material (no capture, no crowning) leads
/// to `pos`, appended to `out`. The side to move in each is `pos`'s opponent. Whether the move
/// is legal there (it is not where a capture is compulsory) is for the caller to check. For the
/// generator's reference solver, not part of the engine API.
#[doc(hidden)]
pub fn quiet_unmoves(rules: &Rules, pos: &Position, out: &mut Vec<Position>) {
    let g = rules.geometry();
    let mover = pos.side_to_move().opponent();
    let occ = pos.occupied();
    let own = pos.pieces(mover);
    let back = match mover {
        Color::White => [Dir::DownLeft, Dir::DownRight],
        Color::Black => [Dir::UpLeft, Dir::UpRight],
    };
    let (w, b, k) = (pos.white(), pos.black(), pos.kings());
    let moved = |from: u8, to: u8, king: bool| {
        let d = (1u64 << from) | (1u64 << to);
        let (w2, b2) = match mover {
            Color::White => (w ^ d, b),
            Color::Black => (w, b ^ d),
        };
        Position::from_parts(w2, b2, if king { k ^ d } else { k }, mover, pos.rules_id())
    };
    let mut men = own & !k;
    while men != 0 {
        let t = men.trailing_zeros() as u8;
        men &= men - 1;
        for d in back {
            let f = g.step(t, d);
            if f != NONE && occ & (1u64 << f) == 0 {
                out.push(moved(f, t, false));
            }
        }
    }
    let mut kings = own & k;
    while kings != 0 {
        let t = kings.trailing_zeros() as u8;
        kings &= kings - 1;
        for d in Dir::ALL {
            let mut f = g.step(t, d);
            while f != NONE && occ & (1u64 << f) == 0 {
                out.push(moved(f, t, true));
                if rules.kings == KingRange::Short {
                    break;
                }
                f = g.step(f, d);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fen;

    /// A move's error never carries a long text whole (a PDN file's word may be any length):
    /// a malformed one and a well-formed path of 3,000 squares come back as 40 characters
    /// and their length; a short one is shown as it was.
    #[test]
    fn move_errors_quote_long_texts_bounded() {
        let rules = Rules::ENGLISH;
        let pos = fen::parse("W:W21:B14", &rules).unwrap();
        let junk = "q".repeat(10_000);
        let path = vec!["1"; 3000].join("-");
        for text in [junk.as_str(), path.as_str()] {
            let e = parse_move(&rules, &pos, text).unwrap_err().to_string();
            assert!(e.len() < 200, "{} bytes: {e}", e.len());
            assert!(e.contains(&format!("... ({} bytes)", text.len())), "{e}");
        }
        let e = parse_move(&rules, &pos, "21-22").unwrap_err().to_string();
        assert_eq!(e, "21-22 is not a legal move here");
        let e = parse_move(&rules, &pos, "x").unwrap_err().to_string();
        assert!(e.starts_with("\"x\" is not move notation"), "{e}");
        let pos = crate::fen::parse("W:W6:B26", &Rules::ENGLISH).unwrap();
        let e = parse_move(&Rules::ENGLISH, &pos, "6-99").unwrap_err();
        assert_eq!(
            e.to_string(),
            "6-99 names square 99, which is not on the board (its squares are numbered from 1 to 32)"
        );
    }

    /// The quick tests `has_capture` and `has_quiet_move` agree with the full move list on
    /// every position of small slices, for every preset (men and kings of both colours,
    /// both sides to move).
    #[test]
    fn quick_tests_agree_with_move_lists() {
        use crate::material::Material;
        for rules in Rules::PRESETS {
            let slices = [
                Material::new(1, 1, 1, 0),
                Material::new(0, 1, 1, 1),
                Material::new(2, 0, 1, 0),
                Material::new(1, 0, 0, 2),
                // Four pieces: a flying king's diagonal blocked by two pieces, its own or
                // the enemy's, and a jump onto an occupied square.
                Material::new(0, 1, 0, 3),
            ];
            let mut moves = Vec::new();
            for_each_position(rules, &slices, |p, m, i| {
                legal_moves(rules, p, Counting::Unique, &mut moves);
                let captures = moves.iter().any(|m| m.is_capture());
                let quiets = moves.iter().any(|m| !m.is_capture());
                assert_eq!(has_capture(rules, p), captures, "{} {m} {i}", rules.name);
                if !rules.capture_compulsory || !captures {
                    assert_eq!(has_quiet_move(rules, p), quiets, "{} {m} {i}", rules.name);
                }
            });
        }
    }

    /// `single_jumps`, where it answers, gives exactly the positions after the legal
    /// captures, on every position of small slices under every preset (and with optional
    /// capture it is never asked: callers use it only for compulsory captures). It must
    /// answer for most English capture positions, or it is no fast path.
    #[test]
    fn single_jumps_agree_with_move_lists() {
        use crate::material::Material;
        for rules in Rules::PRESETS {
            let (mut answered, mut captures) = (0u64, 0u64);
            let slices = [
                Material::new(1, 1, 1, 0),
                Material::new(0, 1, 1, 1),
                Material::new(2, 0, 1, 1),
                Material::new(1, 1, 0, 2),
                Material::new(0, 2, 2, 0),
            ];
            let mut moves = Vec::new();
            let mut fast = Vec::new();
            for_each_position(rules, &slices, |p, m, i| {
                legal_moves(rules, p, Counting::Unique, &mut moves);
                let is_capture = moves.first().is_some_and(|m| m.is_capture());
                captures += is_capture as u64;
                if !single_jumps(rules, p, &mut fast) {
                    return;
                }
                answered += is_capture as u64;
                let mut want: Vec<Position> = moves
                    .iter()
                    .filter(|m| m.is_capture())
                    .map(|m| m.apply_unchecked(p))
                    .collect();
                let key = |q: &Position| (q.white(), q.black(), q.kings());
                want.sort_by_key(key);
                fast.sort_by_key(key);
                let side = p.side_to_move();
                assert_eq!(fast, want, "{} {m} {i} {side:?}", rules.name);
            });
            if rules.name == "english" {
                assert!(answered * 2 > captures, "{answered} of {captures}");
            }
        }
    }

    /// On crowded random boards (6 to 40 pieces, every preset, both sides to move), where
    /// captures are long, diagonals blocked and flying kings see far: `has_capture` agrees
    /// with the move list, `single_jumps`, where it answers, gives its captures, and each
    /// piece's `captures_from` hold every capture route of the move list (under free
    /// precedence, nothing else).
    #[test]
    fn quick_tests_agree_on_crowded_random_boards() {
        let mut rng = crate::test_rng::Rng(6);
        let key = |q: &Position| (q.white(), q.black(), q.kings());
        let (mut moves, mut fast) = (Vec::new(), Vec::new());
        let (mut routes, mut piece) = (Vec::new(), Vec::new());
        let mut long = 0;
        for rules in Rules::PRESETS {
            let g = rules.geometry();
            let mut checked = 0;
            while checked < 1500 {
                // Each square: empty, or one of the four pieces; men off their crowning row.
                let fill = 6 + rng.next() % 35;
                let (mut white, mut black, mut kings) = (0u64, 0u64, 0u64);
                for sq in 0..g.squares {
                    if rng.next() % 50 >= fill {
                        continue;
                    }
                    let bit = 1u64 << sq;
                    let r = rng.next();
                    let king = r & 1 == 1;
                    if r & 2 == 0 {
                        if king || g.top_row & bit == 0 {
                            white |= bit;
                        }
                    } else if king || g.bottom_row & bit == 0 {
                        black |= bit;
                    }
                    if king {
                        kings |= bit & (white | black);
                    }
                }
                for side in [Color::White, Color::Black] {
                    let Ok(p) = Position::new(rules, white, black, kings, side) else {
                        continue;
                    };
                    checked += 1;
                    legal_moves(rules, &p, Counting::Unique, &mut moves);
                    let captures = moves.iter().any(|m| m.is_capture());
                    assert_eq!(has_capture(rules, &p), captures, "{} {p:?}", rules.name);
                    if single_jumps(rules, &p, &mut fast) {
                        let mut want: Vec<Position> = moves
                            .iter()
                            .filter(|m| m.is_capture())
                            .map(|m| m.apply_unchecked(&p))
                            .collect();
                        want.sort_by_key(key);
                        fast.sort_by_key(key);
                        assert_eq!(fast, want, "{} {p:?}", rules.name);
                    }
                    legal_moves(rules, &p, Counting::Paths, &mut moves);
                    routes.clear();
                    for sq in 0..g.squares {
                        captures_from(rules, &p, sq, &mut piece);
                        assert!(piece.iter().all(|m| m.from == sq && m.is_capture()));
                        routes.extend_from_slice(&piece);
                    }
                    let legal: Vec<Move> =
                        moves.iter().filter(|m| m.is_capture()).copied().collect();
                    long += legal.iter().filter(|m| m.jumps > 1).count();
                    // As the move list counts routes: the same pieces taken in the same order.
                    let same = |a: &Move, b: &Move| {
                        (a.from, a.to, a.taken(), a.crowned) == (b.from, b.to, b.taken(), b.crowned)
                    };
                    for m in &legal {
                        assert!(
                            routes.iter().any(|r| same(r, m)),
                            "{} {p:?} {m:?}",
                            rules.name
                        );
                    }
                    if rules.precedence == Precedence::Free {
                        dedup_by(&mut routes, same);
                        assert_eq!(routes.len(), legal.len(), "{} {p:?}", rules.name);
                    }
                }
            }
        }
        assert!(long > 1000, "{long} multiple jumps");
    }

    /// Call `f(position, slice, index)` for every position of `slices`, both sides to move.
    fn for_each_position(
        rules: &Rules,
        slices: &[crate::material::Material],
        mut f: impl FnMut(&Position, crate::material::Material, u64),
    ) {
        for &m in slices {
            let ix = crate::index::SliceIndex::new(m, rules.geometry());
            for i in 0..ix.size() {
                for side in [Color::White, Color::Black] {
                    f(&ix.unindex(i, side), m, i);
                }
            }
        }
    }

    /// The lean successor test of threat positions gives the move-list test's answer on
    /// every position of small slices of every preset (both sides to move), threat
    /// candidates among them (the side to move without a capture, the other side with one).
    #[test]
    fn threat_successor_test_without_moves_agrees_with_the_move_list() {
        use crate::material::Material;
        let slices = [
            Material::new(1, 0, 1, 1),
            Material::new(2, 0, 1, 0),
            Material::new(1, 1, 2, 0),
            Material::new(0, 2, 1, 0),
            Material::new(2, 0, 2, 0),
        ];
        let mut moves = Vec::new();
        for rules in Rules::PRESETS {
            let (mut candidates, mut safe) = (0u64, 0u64);
            for_each_position(rules, &slices, |p, m, i| {
                let want = crate::value::threat_moves_all_safe(rules, p, &mut moves);
                let got = quiet_successors_keep_threats(rules, p);
                assert_eq!(got, want, "{} {m} {i} {}", rules.name, fen::write(p));
                if !has_capture(rules, p)
                    && has_capture(rules, &p.with_side_to_move(p.side_to_move().opponent()))
                {
                    candidates += 1;
                    safe += u64::from(got);
                }
            });
            assert!(
                candidates > 1000 && safe > 100,
                "{}: {candidates} {safe}",
                rules.name
            );
            assert!(safe < candidates, "{}: {candidates} {safe}", rules.name);
        }
    }

    /// Every quiet move's reverse is found by `quiet_unmoves`, and every unmove's forward
    /// move is a quiet move of the predecessor (on positions without captures).
    #[test]
    fn unmoves_invert_quiet_moves() {
        for rules in Rules::PRESETS {
            for f in [
                "W:W18,K27:B3,K12",
                "B:WK5,22:B9,K30",
                "W:W15,K1:BK10,K20,11",
            ] {
                let Ok(p) = fen::parse(f, rules) else {
                    continue;
                };
                let mut moves = Vec::new();
                legal_moves(rules, &p, Counting::Unique, &mut moves);
                for m in moves.iter().filter(|m| !m.is_capture() && !m.crowned) {
                    let after = m.apply_unchecked(&p);
                    let mut pre = Vec::new();
                    quiet_unmoves(rules, &after, &mut pre);
                    assert!(pre.contains(&p), "{} {f}: {}", rules.name, m.to_pdn(false));
                }
                let mut pre = Vec::new();
                quiet_unmoves(rules, &p, &mut pre);
                for q in pre {
                    let mut qm = Vec::new();
                    quiet_moves(rules, &q, &mut qm);
                    assert!(
                        qm.iter().any(|m| m.apply_unchecked(&q) == p),
                        "{f}: {}",
                        fen::write(&q)
                    );
                }
            }
        }
    }

    #[test]
    fn english_capture_rules() {
        let e = Rules::ENGLISH;
        // A man that reaches the crowning row in a capture is crowned and the move ends.
        // (As a king on 2 it could go on over 6 to 9.)
        let p = fen::parse("W:W11:B6,7", &e).unwrap();
        let mut v = Vec::new();
        legal_moves(&e, &p, Counting::Unique, &mut v);
        let names: Vec<String> = v.iter().map(|m| m.to_pdn(true)).collect();
        assert_eq!(names, vec!["11x2"]);
        assert!(v[0].crowned);
        // Free choice: the shorter capture is legal beside the longer one.
        let p = fen::parse("W:W26,27:B23,14", &e).unwrap();
        legal_moves(&e, &p, Counting::Unique, &mut v);
        let mut names: Vec<String> = v.iter().map(|m| m.to_pdn(true)).collect();
        names.sort();
        assert_eq!(names, vec!["26x19", "27x18x9"]);
        // One piece's captures (internal squares, 0-based): 27's; none from 22 (empty),
        // from Black's 23, or from a square number past the board.
        captures_from(&e, &p, 26, &mut v);
        let names: Vec<String> = v.iter().map(|m| m.to_pdn(true)).collect();
        assert_eq!(names, vec!["27x18x9"]);
        for from in [21, 22, 32, 64, 255] {
            captures_from(&e, &p, from, &mut v);
            assert!(v.is_empty(), "{from}");
        }
    }

    /// Italian and Spanish moves are read and written in their own numbering; the internal
    /// squares (and `to_pdn`) stay standard.
    #[test]
    fn mirrored_numberings_in_move_text() {
        let it = Rules::ITALIAN;
        // Italian 30 = d1, 27 = e2, 23 = f3 are standard 31, 26, 22.
        let p = fen::parse("W:W30:B27", &it).unwrap();
        let m = parse_move(&it, &p, "30x23").unwrap();
        assert_eq!(m.to_pdn_for(&it, false), "30x23");
        assert_eq!(m.to_pdn(false), "31x22");
        assert_eq!(
            parse_move(&it, &p, "31x22"),
            Err(MoveError::Illegal("31x22".into()))
        );
        let mut all = Vec::new();
        legal_moves(&it, &p, Counting::Unique, &mut all);
        assert_eq!(pdn_in_for(&it, &m, &all), "30x23");
        assert_eq!(pdn_in(&m, &all), "31x22");

        // Spanish start: White on 1-12 (rank 1-3 numbered from h1), moving toward 32.
        let sp = Rules::SPANISH;
        let start = Position::start(&sp);
        let mut v = Vec::new();
        legal_moves(&sp, &start, Counting::Unique, &mut v);
        let mut names: Vec<String> = v.iter().map(|m| m.to_pdn_for(&sp, false)).collect();
        names.sort();
        assert_eq!(
            names,
            ["10-13", "10-14", "11-14", "11-15", "12-15", "12-16", "9-13"]
        );
        let m = parse_move(&sp, &start, "9-13").unwrap();
        assert_eq!(
            fen::write_for(&m.apply_unchecked(&start), &sp),
            "B:W1,2,3,4,5,6,7,8,10,11,12,13:B21,22,23,24,25,26,27,28,29,30,31,32"
        );
    }

    /// A full path names a capture even when it lands between the captures on other squares
    /// than the move kept for the same pieces (flying kings).
    #[test]
    fn full_path_with_other_landing_squares() {
        let r = Rules::INTERNATIONAL;
        // The king on 46 takes 37 and lands anywhere from 32 to 19, then takes 14.
        let p = fen::parse("W:WK46:B37,14", &r).unwrap();
        let mut v = Vec::new();
        legal_moves(&r, &p, Counting::Unique, &mut v);
        let mut names: Vec<String> = v.iter().map(|m| m.to_pdn(false)).collect();
        names.sort();
        assert_eq!(names, ["46x10", "46x5"]);
        let short = parse_move(&r, &p, "46x10").unwrap();
        for text in ["46x32x10", "46x28x10", "46x23x10", "46x19x10"] {
            assert_eq!(parse_move(&r, &p, text), Ok(short), "{text}");
        }
        assert!(parse_move(&r, &p, "46x37x10").is_err());
        assert!(parse_move(&r, &p, "46x33x10").is_err());
    }

    /// Captures that take the same pieces by different routes are one legal move; `Paths`
    /// counts each order (movegen-cases.tsv, py-draughts windmill).
    #[test]
    fn duplicate_captures_are_one_move() {
        let r = Rules::INTERNATIONAL;
        let p = fen::parse("W:WK2:B7,8,17,18", &r).unwrap();
        let mut v = Vec::new();
        legal_moves(&r, &p, Counting::Unique, &mut v);
        assert_eq!(v.len(), 1);
        legal_moves(&r, &p, Counting::Paths, &mut v);
        let mut paths: Vec<String> = v.iter().map(|m| m.to_pdn(true)).collect();
        paths.sort();
        assert_eq!(paths, ["2x11x22x13x2", "2x13x22x11x2"]);
    }

    /// Issue 22 (3): [`Move::apply`] refuses a move that is not legal in the position. 22-17
    /// applied to `W:W22:B9` gives `B:W17:B9`; applied again (Black to move, no white piece on
    /// 22) it is refused instead of giving `W:W17:B9,17`; a move of another position, one whose
    /// public fields were changed, and a position illegal under the rules are refused too; a
    /// capture counted by route (Counting::Paths) applies like its unique move.
    #[test]
    fn apply_refuses_a_move_not_legal_there() {
        let e = Rules::ENGLISH;
        let pos = fen::parse("W:W22:B9", &e).unwrap();
        let m = parse_move(&e, &pos, "22-17").unwrap();
        let once = m.apply(&e, &pos).unwrap();
        assert_eq!(fen::write(&once), "B:W17:B9");
        assert_eq!(m.apply(&e, &once), Err(MoveError::Illegal("22-17".into())));
        let other = fen::parse("W:W30:B9", &e).unwrap();
        assert_eq!(m.apply(&e, &other), Err(MoveError::Illegal("22-17".into())));
        let mut forged = m;
        forged.crowned = true;
        assert!(matches!(forged.apply(&e, &pos), Err(MoveError::Illegal(_))));
        let mut forged = m;
        forged.captured = 1 << 8;
        assert!(matches!(forged.apply(&e, &pos), Err(MoveError::Illegal(_))));
        // Square 40 exists on the International board only.
        let intl = fen::parse("W:W40:B9", &Rules::INTERNATIONAL).unwrap();
        let mut im = Vec::new();
        legal_moves(&Rules::INTERNATIONAL, &intl, Counting::Unique, &mut im);
        let im = im[0];
        assert!(matches!(
            im.apply(&e, &intl),
            Err(MoveError::IllegalPosition(_))
        ));
        // Every route of a capture is the same legal move.
        let cap = fen::parse("W:WK1:B6,7,15,16", &e).unwrap();
        let mut paths = Vec::new();
        legal_moves(&e, &cap, Counting::Paths, &mut paths);
        for p in &paths {
            assert_eq!(p.apply(&e, &cap).unwrap(), p.apply_unchecked(&cap));
        }
    }

    /// Issue 36: Russian and Brazilian players write `c3-b4` and `c3:e5`; moves are written
    /// in either notation and read back from both (and `x` for `:`), on every board.
    #[test]
    fn moves_in_algebraic_notation() {
        let ru = Rules::RUSSIAN;
        let pos = crate::fen::parse("W:Wc3:Bf6", &ru).unwrap();
        let m = parse_move(&ru, &pos, "22-17").unwrap();
        assert_eq!(m.to_notation(&ru, Notation::Algebraic, false), "c3-b4");
        assert_eq!(m.to_notation(&ru, Notation::Numbers, false), "22-17");
        assert_eq!(parse_move(&ru, &pos, "c3-b4"), Ok(m));
        assert_eq!(parse_move(&ru, &pos, " C3-B4 "), Ok(m));
        let cap = crate::fen::parse("W:Wc3:Bd4,f6", &ru).unwrap();
        let mut all = Vec::new();
        legal_moves(&ru, &cap, Counting::Unique, &mut all);
        assert_eq!(all.len(), 1);
        let c = all[0];
        assert_eq!(notation_in(&ru, Notation::Algebraic, &c, &all), "c3:g7");
        assert_eq!(c.to_notation(&ru, Notation::Algebraic, true), "c3:e5:g7");
        assert_eq!(notation_in(&ru, Notation::Numbers, &c, &all), "22x8");
        for text in ["c3:g7", "c3xg7", "c3:e5:g7", "22x8", "22x15x8"] {
            assert_eq!(parse_move(&ru, &cap, text), Ok(c), "{text}");
        }
        assert!(matches!(
            parse_move(&ru, &cap, "c3:e4"),
            Err(MoveError::Syntax(_))
        ));
        assert!(matches!(
            parse_move(&ru, &cap, "c3-b4"),
            Err(MoveError::Illegal(_))
        ));
        // Every legal move of every preset's start position reads back from both notations.
        for r in Rules::PRESETS {
            let start = Position::start(r);
            let mut all = Vec::new();
            legal_moves(r, &start, Counting::Unique, &mut all);
            for m in &all {
                for n in [Notation::Numbers, Notation::Algebraic] {
                    let text = notation_in(r, n, m, &all);
                    assert_eq!(parse_move(r, &start, &text), Ok(*m), "{} {text}", r.name);
                }
            }
        }
    }
}
