//! A game checked against the tables: every position's value from the first one the tables
//! cover to the end, and each move that changed the result marked with the best move instead.
//!
//! [`analyze`] plays a [`pdn::Game`](crate::pdn::Game) under the tablebase's rules from its
//! `[FEN]` tag (or the variant's start position) and gives each ply the value of the position
//! before it (for the mover) and after it (for the opponent, who moves there), both as the
//! tables give them (win, draw or loss, and the distance to the end of the game in plies
//! where DTW tables are there). A move that turns the mover's win into a draw or a loss, or a
//! draw into a loss, has a [`Change`] and the best move of the position before it.
//! [`write_pdn`] writes the game back as PDN with these values as comments.
//!
//! ```
//! use dtb_probe::{analyze, pdn, Rules, Tablebase, Wld};
//!
//! # let tables = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/english-2");
//! let tb = Tablebase::open(tables, Rules::ENGLISH)?; // English 2-piece tables
//! // White wins in 9 plies with 32-27; 32-28 draws.
//! let text = "[FEN \"W:WK32:BK26\"]\n1... 32-28 26-22 *";
//! let game = pdn::games(text).next().unwrap()?;
//! let a = analyze::analyze(&tb, &game);
//! assert!(a.error.is_none());
//! let first = &a.plies[0];
//! assert_eq!(first.before.map(|v| (v.wld, v.plies)), Some((Wld::Win, Some(9))));
//! assert_eq!(first.after.map(|v| v.wld), Some(Wld::Draw));
//! assert_eq!(first.change, Some(analyze::Change::WinToDraw));
//! assert_eq!(first.best.as_ref().map(|b| b.pdn.as_str()), Some("32-27"));
//! assert_eq!(a.plies[1].change, None); // a draw kept
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::fen::{self, FenError, Notation};
use crate::format::ValueKind;
use crate::movegen::{legal_moves, notation_in, parse_move, Counting, Move, MoveError};
use crate::pdn::{Game, GameMove};
use crate::position::Position;
use crate::quote;
use crate::rules::{Color, Rules};
use crate::tablebase::{Dtw, ProbeError, Tablebase};
use crate::value::Wld;

/// A game played through the tables ([`analyze`]).
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The game's number in its file ([`Game::number`]).
    pub game: usize,
    /// The position the game starts from (`None` when its `[FEN]` tag is not a position).
    pub start: Option<Position>,
    /// The plies played, each with its values; up to the first illegal move, if any.
    pub plies: Vec<Ply>,
    /// Why the game was not played to its end: `None` when every move was played.
    pub error: Option<GameError>,
}

impl Analysis {
    /// The value of the start position for its side to move (`None` where the tables do not
    /// cover it).
    pub fn start_value(&self) -> Option<Dtw> {
        self.plies.first().and_then(|p| p.before)
    }

    /// The moves that changed the result.
    pub fn changes(&self) -> impl Iterator<Item = &Ply> {
        self.plies.iter().filter(|p| p.change.is_some())
    }
}

/// One ply of a game and the values around it.
#[derive(Clone, Debug)]
pub struct Ply {
    /// Its move number as written or counted ([`GameMove::number`]).
    pub number: u32,
    /// Whether it is the second move of its number ([`GameMove::second`]).
    pub second: bool,
    /// The side that played it.
    pub mover: Color,
    /// The move as the game wrote it.
    pub text: String,
    /// The move played.
    pub mv: Move,
    /// The move as the variant's players write it ([`Notation::of`]: numbers, or algebraic
    /// for Russian and Brazilian; the full path only where the short form would name two
    /// moves).
    pub pdn: String,
    /// The position before the move (FEN in the notation the variant's players use).
    pub fen: String,
    /// The value of the position before the move, for its side to move (the mover); `None`
    /// where the tables do not cover it (more pieces than built, or a table missing).
    pub before: Option<Dtw>,
    /// The value of the position after the move, for **its** side to move (the opponent):
    /// a loss there is a win for the mover. A side left without pieces or moves has lost
    /// (`Some(0)` plies), or under `blocked` rules as they say.
    pub after: Option<Dtw>,
    /// How the move changed the mover's result, if it did (both values known).
    pub change: Option<Change>,
    /// The best move of the position before, where the move changed the result (`None`
    /// otherwise, or where the tables cannot rank the moves).
    pub best: Option<BestMove>,
}

/// A result thrown away by one move, for the mover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// A won position left drawn.
    WinToDraw,
    /// A won position left lost.
    WinToLoss,
    /// A drawn position left lost.
    DrawToLoss,
}

impl Change {
    /// `"win to draw"`, `"win to loss"` or `"draw to loss"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::WinToDraw => "win to draw",
            Change::WinToLoss => "win to loss",
            Change::DrawToLoss => "draw to loss",
        }
    }

    /// The change from the mover's value `before` to the value `after` the move for the
    /// opponent, if the result changed.
    pub fn between(before: Wld, after: Wld) -> Option<Change> {
        match (before, after) {
            (Wld::Win, Wld::Draw) => Some(Change::WinToDraw),
            (Wld::Win, Wld::Win) => Some(Change::WinToLoss),
            (Wld::Draw, Wld::Win) => Some(Change::DrawToLoss),
            _ => None,
        }
    }
}

/// The move the tables rank first in a position ([`Tablebase::best_move`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BestMove {
    /// The move.
    pub mv: Move,
    /// The move as the variant's players write it ([`Notation::of`]: numbers, or algebraic
    /// for Russian and Brazilian), the full path where the short form names two moves.
    pub pdn: String,
    /// The value of the position after it, for its side to move (as [`Ply::after`]).
    pub after: Dtw,
}

/// Why a game was not played to its end ([`Analysis::error`]).
#[derive(Clone, Debug, thiserror::Error)]
pub enum GameError {
    /// The `[FEN]` tag is not a position of the variant.
    #[error("[FEN {}]: {error}", quote(.text))]
    Fen {
        /// The tag's value.
        text: String,
        /// Why it is not a position.
        error: FenError,
    },
    /// The `[GameType]` tag names another game than the tablebase's variant.
    #[error("[GameType {}] is {}, but the tables are {variant} (GameType {expected}): pass the game's variant",
        quote(.found), game_type_name(.found))]
    GameType {
        /// The tag's value.
        found: String,
        /// The GameType of the tablebase's rules.
        expected: u32,
        /// The tablebase's rule set.
        variant: &'static str,
    },
    /// A move that is no legal move of its position, or names several.
    #[error("move {} {}: {error}; legal moves: {}", label(*.number, *.second), quote(.text),
        if .legal.is_empty() { "none".to_string() } else { .legal.join(", ") })]
    Move {
        /// Its ply in the game, from 0.
        ply: usize,
        /// Its move number.
        number: u32,
        /// Whether it is the second move of its number.
        second: bool,
        /// The move as written.
        text: String,
        /// Why it is refused.
        error: MoveError,
        /// The legal moves of the position, in the variant's PDN.
        legal: Vec<String>,
        /// The position (FEN).
        fen: String,
    },
    /// The tables failed (a corrupt file) at this ply.
    #[error("move {}: {error}", label(*.number, *.second))]
    Probe {
        /// Its ply in the game, from 0.
        ply: usize,
        /// Its move number.
        number: u32,
        /// Whether it is the second move of its number.
        second: bool,
        /// What failed.
        error: ProbeError,
    },
}

fn label(number: u32, second: bool) -> String {
    if second {
        format!("{number}...")
    } else {
        format!("{number}.")
    }
}

/// PDN 3.0's GameType numbers of the draughts games dtb has presets for.
const GAME_TYPES: [(u32, &str); 14] = [
    (20, "international"),
    (21, "english"),
    (22, "italian"),
    (23, "pool"),
    (24, "spanish"),
    (25, "russian"),
    (26, "brazilian"),
    (27, "canadian"),
    (28, "portuguese"),
    (29, "czech"),
    (30, "turkish"),
    (31, "thai"),
    (40, "frisian"),
    (41, "spantsiretti"),
];

/// The PDN GameType number of `rules`: that of the preset they are (whatever the
/// blocked-side outcome), `None` for a rule set PDN has no number for (gracz8,
/// international-optional, other field changes).
pub fn game_type(rules: &Rules) -> Option<u32> {
    let preset = Rules::PRESETS.iter().find(|p| {
        Rules {
            name: p.name,
            blocked: p.blocked,
            ..*rules
        } == **p
    })?;
    GAME_TYPES
        .iter()
        .find(|(_, name)| *name == preset.name)
        .map(|(n, _)| *n)
}

/// The leading number of a GameType tag's value (`"21"`, `"20,W,10,10,N2,0"`).
fn game_type_number(value: &str) -> Option<u32> {
    let v = value.trim();
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    v[..digits].parse().ok()
}

fn game_type_name(value: &str) -> String {
    match game_type_number(value) {
        Some(n) => match GAME_TYPES.iter().find(|(k, _)| *k == n) {
            Some((_, name)) => name.to_string(),
            None => format!("game type {n}"),
        },
        None => "not a game type number".to_string(),
    }
}

/// Plays `game` under the tablebase's rules from its `[FEN]` tag (or the start position) and
/// values every position the tables cover. Never fails as a whole: an illegal move, a bad
/// `[FEN]` or `[GameType]`, or a failing table stops the game there ([`Analysis::error`]),
/// with the plies before it valued.
pub fn analyze(tb: &Tablebase, game: &Game) -> Analysis {
    let rules = *tb.rules();
    let mut a = Analysis {
        game: game.number,
        start: None,
        plies: Vec::with_capacity(game.moves.len()),
        error: None,
    };
    if let Some(found) = game.tag("GameType") {
        if let Some(expected) = game_type(&rules) {
            if game_type_number(found) != Some(expected) {
                a.error = Some(GameError::GameType {
                    found: found.to_string(),
                    expected,
                    variant: rules.name,
                });
                return a;
            }
        }
    }
    let start = match game.tag("FEN") {
        Some(text) => match fen::parse(text, &rules) {
            Ok(p) => p,
            Err(error) => {
                a.error = Some(GameError::Fen {
                    text: text.to_string(),
                    error,
                });
                return a;
            }
        },
        None => Position::start(&rules),
    };
    a.start = Some(start);
    if let Err(e) = play(tb, &rules, game, start, &mut a.plies) {
        a.error = Some(*e);
    }
    a
}

/// Plays the moves of `game` from `pos`, pushing each valued ply onto `plies`.
fn play(
    tb: &Tablebase,
    rules: &Rules,
    game: &Game,
    mut pos: Position,
    plies: &mut Vec<Ply>,
) -> Result<(), Box<GameError>> {
    let with_dtw = !tb.materials(ValueKind::Dtw).is_empty();
    let mut legal = Vec::new();
    let probe_err = |ply: usize, m: &GameMove, error| {
        Box::new(GameError::Probe {
            ply,
            number: m.number,
            second: m.second,
            error,
        })
    };
    let mut before = None;
    for (i, gm) in game.moves.iter().enumerate() {
        legal_moves(rules, &pos, Counting::Unique, &mut legal);
        let mv = match read_move(rules, &pos, &gm.text) {
            Ok(mv) => mv,
            Err(error) => {
                return Err(Box::new(GameError::Move {
                    ply: i,
                    number: gm.number,
                    second: gm.second,
                    text: gm.text.clone(),
                    error,
                    legal: legal
                        .iter()
                        .map(|m| notation_in(rules, Notation::of(rules), m, &legal))
                        .collect(),
                    fen: fen::write_customary(&pos, rules),
                }))
            }
        };
        if i == 0 {
            before = value(tb, &pos, with_dtw).map_err(|e| probe_err(i, gm, e))?;
        }
        let next = mv.apply_unchecked(&pos);
        let after = value(tb, &next, with_dtw).map_err(|e| probe_err(i, gm, e))?;
        let change = match (before, after) {
            (Some(b), Some(a)) => Change::between(b.wld, a.wld),
            _ => None,
        };
        let best = match change {
            Some(_) => best_move(tb, rules, &pos, with_dtw, &legal),
            None => None,
        };
        plies.push(Ply {
            number: gm.number,
            second: gm.second,
            mover: pos.side_to_move(),
            text: gm.text.clone(),
            mv,
            pdn: notation_in(rules, Notation::of(rules), &mv, &legal),
            fen: fen::write_customary(&pos, rules),
            before,
            after,
            change,
            best,
        });
        pos = next;
        before = after;
    }
    Ok(())
}

/// The legal move `text` names, squares as numbers or algebraic (`c3-d4`).
fn read_move(rules: &Rules, pos: &Position, text: &str) -> Result<Move, MoveError> {
    if !text.bytes().any(|b| b.is_ascii_lowercase() && b != b'x') {
        return parse_move(rules, pos, text);
    }
    // Algebraic squares: each as its number, separators kept.
    let mut numeric = String::with_capacity(text.len());
    for part in text.split_inclusive(['-', 'x', 'X', ':']) {
        let (square, sep) = match part.char_indices().last() {
            Some((i, c)) if "-xX:".contains(c) => (&part[..i], &part[i..]),
            _ => (part, ""),
        };
        match fen::algebraic_square(square, rules) {
            Ok(Some(sq)) => numeric.push_str(&rules.square_number(sq).to_string()),
            Ok(None) => numeric.push_str(square),
            Err(_) => return Err(MoveError::Syntax(text.to_string())),
        }
        numeric.push_str(sep);
    }
    parse_move(rules, pos, &numeric).map_err(|e| match e {
        // Name the move as the game wrote it.
        MoveError::Illegal(_) => MoveError::Illegal(text.to_string()),
        MoveError::Syntax(_) => MoveError::Syntax(text.to_string()),
        MoveError::OffBoard { square, max, .. } => MoveError::OffBoard {
            text: text.to_string(),
            square,
            max,
        },
        e => e,
    })
}

/// The value of `pos` for its side to move; `None` where the tables do not cover it. A side
/// with no pieces has lost; distances come from the DTW tables where they are, else only
/// the outcome from the WLD tables.
fn value(tb: &Tablebase, pos: &Position, with_dtw: bool) -> Result<Option<Dtw>, ProbeError> {
    let side = pos.side_to_move();
    if pos.pieces(side) == 0 {
        return Ok(Some(Dtw {
            wld: Wld::Loss,
            plies: Some(0),
        }));
    }
    if pos.occupied().count_ones() > tb.max_pieces() {
        return Ok(None);
    }
    if with_dtw {
        match tb.probe_dtw(pos) {
            Ok(d) => return Ok(Some(d)),
            Err(ProbeError::MissingTable {
                kind: ValueKind::Dtw,
                ..
            }) => {}
            Err(ProbeError::MissingTable { .. }) => return Ok(None),
            Err(e) => return Err(e),
        }
    }
    match tb.probe_wld(pos) {
        Ok(wld) => Ok(Some(Dtw { wld, plies: None })),
        Err(ProbeError::MissingTable { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The best move of `pos` and the value after it, from the DTW tables where they are, else
/// the WLD tables; `None` where the tables cannot rank its moves.
fn best_move(
    tb: &Tablebase,
    rules: &Rules,
    pos: &Position,
    with_dtw: bool,
    legal: &[Move],
) -> Option<BestMove> {
    let ranked = if with_dtw {
        tb.probe_moves(pos)
            .or_else(|_| tb.probe_moves_wld(pos))
            .ok()?
    } else {
        tb.probe_moves_wld(pos).ok()?
    };
    let r = ranked.into_iter().next()?;
    Some(BestMove {
        mv: r.mv,
        pdn: notation_in(rules, Notation::of(rules), &r.mv, legal),
        after: r.after,
    })
}

impl GameError {
    /// The error's kind as JSON answers name it: `ambiguous_move`, `bad_move`,
    /// `illegal_move`, `bad_fen`, `game_type` or `probe` (what `dtb analyze --json` and the
    /// HTTP API give programs to branch on).
    pub fn kind(&self) -> &'static str {
        match self {
            GameError::Move { error, .. } => match error {
                MoveError::Ambiguous(..) => "ambiguous_move",
                MoveError::Syntax(_) | MoveError::OffBoard { .. } => "bad_move",
                _ => "illegal_move",
            },
            GameError::Fen { .. } => "bad_fen",
            GameError::GameType { .. } => "game_type",
            GameError::Probe { .. } => "probe",
        }
    }
}

/// A value in words, with the winner named: `"White wins in 9 plies"`, `"draw"`.
/// `side` is the side to move of the position valued.
pub fn describe(value: &Dtw, side: Color) -> String {
    let winner = match value.wld {
        Wld::Draw => return "draw".to_string(),
        Wld::Win => side,
        Wld::Loss => side.opponent(),
    };
    let name = color_name(winner);
    match value.plies {
        Some(0) => format!("{name} has won"),
        Some(1) => format!("{name} wins in 1 ply"),
        Some(p) => format!("{name} wins in {p} plies"),
        None => format!("{name} wins"),
    }
}

fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// `game` written back as PDN with `analysis` in comments, for CheckerBoard and other PDN
/// readers: the tags as they were, the moves played (as written), each followed by the
/// game's own comments and then `{dtb: ...}` with the value after it, with the winner named
/// (`{dtb: White wins in 8 plies}`, `{dtb: draw}`); a move that changed the result says so
/// and gives the best move with the value after it (`{dtb: draw; changed the result (win to
/// draw), best 32-27: White wins in 8 plies}`).
/// The value of the first position the tables cover is a comment before its move. Moves
/// after an illegal one are kept as written, without values, after a comment that says why;
/// variations are left out. Lines are at most 79 characters where comments allow.
pub fn write_pdn(game: &Game, analysis: &Analysis) -> String {
    let mut out = String::new();
    for (name, value) in &game.tags {
        out.push_str(&format!(
            "[{name} \"{}\"]\n",
            value.replace('\\', "\\\\").replace('"', "\\\"")
        ));
    }
    let mut words: Vec<String> = game.comments.iter().map(|c| comment(c)).collect();
    let stopped = analysis.plies.len();
    let mut covered = false;
    // Whether the last word is the first move of a number, so that a second move of the
    // same number needs no `N...` before it.
    let mut numbered = false;
    for (i, gm) in game.moves.iter().enumerate() {
        let ply = analysis.plies.get(i);
        if let (Some(p), false) = (ply, covered) {
            if let Some(b) = p.before {
                words.push(comment(&format!("dtb: {}", describe(&b, p.mover))));
                covered = true;
                numbered = false;
            }
        }
        if i == stopped {
            if let Some(e) = &analysis.error {
                words.push(comment(&format!("dtb: not analysed from here: {e}")));
                numbered = false;
            }
        }
        // A number and its move stay on one line.
        if !gm.second || !numbered {
            words.push(format!("{} {}", gm.label(), gm.text));
        } else {
            words.push(gm.text.clone());
        }
        numbered = !gm.second;
        for c in &gm.comments {
            words.push(comment(c));
            numbered = false;
        }
        if let Some(text) = ply.and_then(ply_comment) {
            words.push(comment(&text));
            numbered = false;
            covered = true;
        }
    }
    if stopped >= game.moves.len() {
        if let Some(e) = &analysis.error {
            words.push(comment(&format!("dtb: {e}")));
        }
    }
    words.push(game.result.clone().unwrap_or_else(|| "*".to_string()));
    let mut line = String::new();
    for w in words {
        if !line.is_empty() && line.len() + 1 + w.len() > 79 {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&w);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// The `dtb:` comment after ply `p`, if its values are known.
fn ply_comment(p: &Ply) -> Option<String> {
    let after = p.after?;
    let mut text = format!("dtb: {}", describe(&after, p.mover.opponent()));
    if let Some(c) = p.change {
        text.push_str(&format!("; changed the result ({})", c.as_str()));
        if let Some(b) = &p.best {
            text.push_str(&format!(
                ", best {}: {}",
                b.pdn,
                describe(&b.after, p.mover.opponent())
            ));
        }
    }
    Some(text)
}

/// A PDN comment: `{text}` with any `}` in it replaced, which would end it.
fn comment(text: &str) -> String {
    format!("{{{}}}", text.replace('}', ")"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdn;

    fn tables() -> Tablebase {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/english-2");
        Tablebase::open(dir, Rules::ENGLISH).unwrap()
    }

    fn game(text: &str) -> Game {
        pdn::games(text).next().unwrap().unwrap()
    }

    #[test]
    fn an_ambiguous_capture_names_its_full_paths_and_algebraic_squares_are_read() {
        let tb = tables();
        // White's man on 26 takes two pieces either way round to 10.
        let a = analyze(&tb, &game("[FEN \"W:W26:B14,15,22,23\"]\n1... 26x10 *"));
        let Some(GameError::Move {
            error, legal, ply, ..
        }) = &a.error
        else {
            panic!("{:?}", a.error);
        };
        assert_eq!(*ply, 0);
        assert!(matches!(error, MoveError::Ambiguous(..)));
        assert_eq!(legal, &["26x17x10", "26x19x10"]);
        assert_eq!(
            a.error.unwrap().to_string(),
            "move 1... \"26x10\": 26x10 is ambiguous here: give the full path (26x17x10 or \
             26x19x10); legal moves: 26x17x10, 26x19x10"
        );
        for text in ["26x17x10", "d2xb4xd6", "d2:b4:d6"] {
            let a = analyze(
                &tb,
                &game(&format!("[FEN \"W:W26:B14,15,22,23\"]\n1... {text} *")),
            );
            assert!(a.error.is_none(), "{text}: {:?}", a.error);
            assert_eq!(a.plies[0].pdn, "26x17x10");
            // Five pieces, then three: beyond these 2-piece tables.
            assert_eq!((a.plies[0].before, a.plies[0].after), (None, None));
        }
        let a = analyze(&tb, &game("[FEN \"W:W26:B14,15,22,23\"]\n1... d2-c3 *"));
        assert!(matches!(
            a.error,
            Some(GameError::Move {
                error: MoveError::Illegal(_),
                ..
            })
        ));
    }

    #[test]
    fn values_start_where_the_tables_do_and_the_pdn_says_them() {
        let tb = tables();
        // 3 pieces, then White takes one: 2 pieces, covered from there on.
        let g = game("[FEN \"B:WK31:B2,K27\"]\n1. 27-24 31-27 2. 24x31 *");
        let a = analyze(&tb, &g);
        assert!(a.error.is_none(), "{:?}", a.error);
        assert_eq!(a.plies[0].before, None);
        assert_eq!(a.plies[2].after.map(|v| v.wld), Some(Wld::Loss));
        let written = write_pdn(&g, &a);
        assert!(
            written.starts_with("[FEN \"B:WK31:B2,K27\"]\n1. 27-24 31-27"),
            "{written}"
        );
        // Read back: the same moves, a value after each covered one.
        let back = game(&written);
        let moves: Vec<&str> = back.moves.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(moves, ["27-24", "31-27", "24x31"]);
        assert_eq!(back.result.as_deref(), Some("*"));
    }

    #[test]
    fn a_bad_fen_or_game_type_stops_the_game_in_words() {
        let tb = tables();
        let a = analyze(&tb, &game("[FEN \"W:W33:B1\"]\n1... 33-28 *"));
        assert_eq!(
            a.error.unwrap().to_string(),
            "[FEN \"W:W33:B1\"]: square 33 is not on the board: its squares are numbered from 1 \
             to 32"
        );
        let a = analyze(&tb, &game("[GameType \"25\"]\n1. 11-15 *"));
        assert_eq!(
            a.error.unwrap().to_string(),
            "[GameType \"25\"] is russian, but the tables are english (GameType 21): pass the \
             game's variant"
        );
        // The same game under GameType 21 with a board description is read.
        let a = analyze(&tb, &game("[GameType \"21,B,8,8,N1,0\"]\n1. 11-15 *"));
        assert!(a.error.is_none());
        assert_eq!(game_type(&Rules::ENGLISH), Some(21));
        assert_eq!(game_type(&Rules::GRACZ8), None);
        let majority = Rules::parse("english,blocked=majority").unwrap();
        assert_eq!(game_type(&majority), Some(21));
    }

    /// What the `pdn` fuzz target holds, on 4,000 random mutations of a small file (a
    /// stable build runs no coverage-guided fuzzer): no panic, errors on lines of the text,
    /// and the annotated PDN of each game reads back as one game with the same moves and tags.
    #[test]
    fn mutated_files_never_panic_and_written_games_read_back() {
        let base = "[Event \"a\"]\n[FEN \"W:W26:B14,15,22,23\"]\n1... 26x17x10 {c} 2. 14-18 \
                    (2. 15-19) $3 2... 10-6! 1-0\n\n[FEN \"B:WK32:BK26\"]\n1. 26-22 32-27 ; x\n\
                    % esc\n2. 22-18 * 12.9x18x27 1-1 c3-d4 0-0";
        let pieces = [
            "{", "}", "(", ")", "[", "]", ";", "%", "\"", "\\", "x", "-", ".", "...", "1", "12",
            "*", " ", "\n", "1-1", "0-0", "a1", "K", "$", "!", "?", "é",
        ];
        let tb = Tablebase::new(Rules::ENGLISH);
        let mut seed = 36u64;
        for _ in 0..4000 {
            let mut text: Vec<char> = base.chars().collect();
            for _ in 0..1 + crate::rng::splitmix64(&mut seed) % 4 {
                let r = crate::rng::splitmix64(&mut seed) as usize;
                let at = r % (text.len() + 1);
                if r.is_multiple_of(3) && at < text.len() {
                    text.remove(at);
                } else {
                    let p = pieces[(r >> 20) % pieces.len()];
                    for (k, c) in p.chars().enumerate() {
                        text.insert(at + k, c);
                    }
                }
            }
            let text: String = text.into_iter().collect();
            let lines = text.lines().count().max(1);
            for g in pdn::games(&text) {
                match g {
                    Err(e) => assert!(e.line >= 1 && e.line <= lines + 1, "{text:?}: {e}"),
                    Ok(g) => {
                        let a = analyze(&tb, &g);
                        let written = write_pdn(&g, &a);
                        let back: Vec<_> = pdn::games(&written).collect();
                        assert_eq!(back.len(), 1, "{text:?} -> {written:?}");
                        let back = back[0].as_ref().expect("reads back");
                        let moves = |g: &Game| -> Vec<String> {
                            g.moves.iter().map(|m| m.text.clone()).collect()
                        };
                        assert_eq!(moves(back), moves(&g), "{text:?} -> {written:?}");
                        assert_eq!(back.tags, g.tags, "{text:?} -> {written:?}");
                    }
                }
            }
        }
    }
}
