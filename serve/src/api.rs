//! The answers of the JSON API, computed synchronously from a [`Tablebase`] (the server runs
//! them off the async executor). Shapes are documented in README.md ("dtb serve").

use dtb_probe::analyze::{self as game_analysis, GameError, Ply};
use dtb_probe::fen::{self, FenError, Notation};
use dtb_probe::internal::format::ValueKind;
use dtb_probe::movegen::{legal_moves, notation_in, Counting, Move};
use dtb_probe::pdn::{self, Game, PdnError};
use dtb_probe::{
    Color, Dtc, Dtw, Position, ProbeError, RankedDtcMove, RankedMove, Rules, Tablebase, Variant,
    Wld,
};
use serde_json::{json, Value};

/// Longest FEN the API reads, in bytes (a 10x10 FEN with every square listed is under 200).
pub const MAX_FEN_BYTES: usize = 512;

/// Most plies a mainline of a drawn position plays before it is cut (`"cut": true`).
pub const DRAW_LINE_PLIES: usize = 40;

/// Largest PDN text `POST /api/v1/{variant}/analyze` reads, in bytes (more gets 413).
pub const MAX_PDN_BYTES: usize = 1 << 20;

/// Most games one analyze request may hold (more gets 400: split the file, or run
/// `dtb analyze`).
pub const MAX_ANALYZE_GAMES: usize = 1000;

/// Most moves, all games together, one analyze request may hold (more gets 400).
pub const MAX_ANALYZE_PLIES: usize = 20_000;

/// One variant's tables, as served under `/api/v1/{name}`.
pub struct Served {
    /// The variant's rules (its name is the path segment).
    pub rules: Rules,
    /// Its tables, from one or more directories.
    pub tb: Tablebase,
    /// Whether any DTW table is there: without, distances are `null` and moves are ranked by
    /// outcome only (a `--wld-only` build).
    pub has_dtw: bool,
    /// Whether any DTC table is there (`dtb gen --values dtc`): then answers carry the value
    /// under the tablebase's count profile ([`Tablebase::count_profile`]) at the request's
    /// `counter=`.
    pub has_dtc: bool,
}

impl Served {
    /// Wrap a tablebase for serving; its count profile ([`Tablebase::set_count_profile`],
    /// from the `--variant` text's `count=`) is the one DTC answers are under.
    pub fn new(tb: Tablebase) -> Served {
        Served {
            rules: *tb.rules(),
            has_dtw: !tb.materials(ValueKind::Dtw).is_empty(),
            has_dtc: !tb.materials(ValueKind::Dtc).is_empty(),
            tb,
        }
    }

    /// The variant as `--variant` writes it, with its count profile where it is not the
    /// preset's (`english,count=20`).
    pub fn spec(&self) -> String {
        Variant {
            rules: self.rules,
            count: *self.tb.count_profile(),
        }
        .spec()
    }
}

/// Why a request got no answer: the HTTP status follows from the kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// 400: no FEN, a malformed FEN, an illegal position, a finished game.
    #[error("{0}")]
    BadRequest(String),
    /// 404: an unknown variant, or a position (or one its moves lead to) with no table.
    #[error("{0}")]
    NotFound(String),
    /// 500: a damaged or foreign table. `public` goes to the client, `log` (which names the
    /// file) to the server's log only.
    #[error("{public}")]
    Internal { public: String, log: String },
}

impl ApiError {
    /// The HTTP status code.
    pub fn status(&self) -> u16 {
        match self {
            ApiError::BadRequest(_) => 400,
            ApiError::NotFound(_) => 404,
            ApiError::Internal { .. } => 500,
        }
    }
}

impl From<FenError> for ApiError {
    fn from(e: FenError) -> ApiError {
        match e {
            FenError::Position(p) => ApiError::BadRequest(format!("illegal position: {p}")),
            e => ApiError::BadRequest(format!("bad FEN: {e}")),
        }
    }
}

impl From<ProbeError> for ApiError {
    fn from(e: ProbeError) -> ApiError {
        match e {
            ProbeError::IllegalPosition(_)
            | ProbeError::GameOver
            | ProbeError::CapturePosition
            | ProbeError::CounterOutOfRange { .. }
            | ProbeError::VariantMismatch { .. } => ApiError::BadRequest(e.to_string()),
            ProbeError::MissingTable { .. } => ApiError::NotFound(e.to_string()),
            ProbeError::Table(_) | ProbeError::Mismatch { .. } | ProbeError::Directory { .. } => {
                ApiError::Internal {
                    public:
                        "a table this position needs is damaged (the server log names the file)"
                            .to_string(),
                    log: dtb_probe::report(&e),
                }
            }
        }
    }
}

/// The FEN of a request, checked for presence and length.
pub fn fen_param(fen: Option<&str>) -> Result<&str, ApiError> {
    let f = fen
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .ok_or_else(|| ApiError::BadRequest("missing query parameter fen".to_string()))?;
    if f.len() > MAX_FEN_BYTES {
        return Err(ApiError::BadRequest(format!(
            "FEN longer than {MAX_FEN_BYTES} bytes"
        )));
    }
    Ok(f)
}

/// The notation of a request's `notation=` (`numeric` or `algebraic`), by default the one the
/// variant's players write ([`Notation::of`]: algebraic for Russian and Brazilian).
///
/// # Errors
/// 400 for any other value.
pub fn notation_param(rules: &Rules, notation: Option<&str>) -> Result<Notation, ApiError> {
    match notation {
        None => Ok(Notation::of(rules)),
        Some(n) => Notation::parse(n).ok_or_else(|| {
            ApiError::BadRequest(format!(
                "notation must be numeric or algebraic, not {}",
                dtb_probe::quote(n)
            ))
        }),
    }
}

/// The counter of a request's `counter=`: plies since the count rule's counter was last reset
/// (by a capture or a man move, as the variant's count profile says), `None` when not given.
///
/// # Errors
/// 400 for anything but a whole number from 0 to 65535 (a counter at or over the limit of
/// the position's regime is refused by the probe, also with 400).
pub fn counter_param(counter: Option<&str>) -> Result<Option<u16>, ApiError> {
    let Some(text) = counter else {
        return Ok(None);
    };
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse::<u16>().map(Some).map_err(|_| {
            ApiError::BadRequest(format!(
                "counter {} is over every count limit: it is at most 65535 plies",
                dtb_probe::quote(t)
            ))
        });
    }
    Err(ApiError::BadRequest(format!(
        "counter must be a whole number of plies since the last capture or man move (0 or \
         more), not {}",
        dtb_probe::quote(text)
    )))
}

fn plies(d: Dtw) -> Option<u16> {
    if d.wld == Wld::Draw {
        None
    } else {
        d.plies
    }
}

fn numbers(rules: &Rules, squares: &[u8]) -> Vec<u32> {
    squares.iter().map(|&s| rules.square_number(s)).collect()
}

/// One move as the API gives it. `wld` and `dtw` are the move's value for the side making it,
/// as `dtb probe --moves`, Python's `moves()` and C's `dtb_moves_fen` give it
/// ([`RankedMove::for_mover`]); `category` is lichess's: the position after the move, for its
/// side to move (so `"category": "loss"` beside `"wld": "win"`). `move` and `fen_after` are
/// in `notation`; `from`, `to`, `path` and `captures` are square numbers whatever it is.
/// With DTC tables (`dtc` given), the position after the move under the count rule, for its
/// side to move at its counter ([`dtc_json`]: `category`, `result`, `dtc`, `counter`), and
/// `zeroing`: whether the move resets the counter.
fn move_json(
    s: &Served,
    pos: &Position,
    ranked: &RankedMove,
    dtc: Option<&RankedDtcMove>,
    all: &[Move],
    notation: Notation,
) -> Value {
    let r = &s.rules;
    let m = &ranked.mv;
    let mover = ranked.for_mover();
    let dtw = if s.has_dtw { plies(mover) } else { None };
    let mut v = json!({
        "move": notation_in(r, notation, m, all),
        "fen_after": fen::write_in(&m.apply_unchecked(pos), r, notation),
        "wld": mover.wld.as_str(),
        "dtw": dtw,
        "category": ranked.after.wld.as_str(),
        "from": r.square_number(m.from),
        "to": r.square_number(m.to),
        "path": numbers(r, m.path()),
        "captures": numbers(r, m.taken()),
        "crowned": m.crowned,
    });
    if let Some(d) = dtc {
        dtc_json(&mut v, &d.after);
        v["zeroing"] = json!(d.zeroing);
    }
    v
}

/// A value under the count rule as the API gives it (and `dtb probe --json`): `category` at
/// counter 0 with lichess's names (`win`, `cursed-win`, `draw`, `blessed-loss`, `loss`),
/// `result` at `counter`, `dtc` (plies to conversion; null for a draw), `counter`, and
/// `limit` (the plies of the position's count regime; null where no count rule applies).
fn dtc_json(o: &mut Value, d: &Dtc) {
    o["category"] = json!(d.category.as_str());
    o["result"] = json!(d.result.as_str());
    o["dtc"] = json!(d.plies);
    o["counter"] = json!(d.counter);
    o["limit"] = json!(d.limit);
}

fn side_name(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

/// The value of `pos` under the count rule at `counter` (0 when not given) and its moves
/// ranked under it ([`Tablebase::probe_dtc`], [`Tablebase::probe_moves_dtc`]); `None` where
/// the directory has no DTC tables, or where `counter` was not given and the position's DTC
/// table is missing (the answer is then the game-theoretic one alone).
///
/// # Errors
/// 404 for a counter given without DTC tables, 400 for a counter at or over the limit, and
/// as [`position`].
fn under_rule(
    s: &Served,
    pos: &Position,
    wld: Wld,
    counter: Option<u16>,
) -> Result<Option<(Dtc, Vec<RankedDtcMove>)>, ApiError> {
    if !s.has_dtc {
        return match counter {
            None => Ok(None),
            Some(_) => Err(ApiError::NotFound(format!(
                "no dtc tables for {}: counter= gives values under the move-count rule, which \
                 needs them (build them with dtb gen --values dtc)",
                s.rules.name
            ))),
        };
    }
    let c = counter.unwrap_or(0);
    let probed =
        s.tb.probe_dtc(pos, c)
            .and_then(|d| Ok((d, s.tb.probe_moves_dtc(pos, c)?)));
    match probed {
        Ok((d, _)) if d.category.game_theoretic() != wld => Err(ApiError::Internal {
            public: "the WLD and DTC tables disagree on this position".to_string(),
            log: format!(
                "{}: WLD says {wld}, DTC {} (run dtb verify)",
                fen::write(pos),
                d.category
            ),
        }),
        Ok(v) => Ok(Some(v)),
        Err(ProbeError::MissingTable {
            kind: ValueKind::Dtc,
            ..
        }) if counter.is_none() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// `GET /api/v1/{variant}?fen=[&counter=]`: the position's value and every legal move, best
/// first, each with its value for the side making it (`wld`, `dtw`) and lichess's `category`
/// of the position after it. A finished game (the side to move blocked or without pieces, or
/// facing none) is a value with `"game_over": true` and no moves. FEN and moves are written
/// in `notation` (the FEN read may be in either). Where the directory has DTC tables, the
/// value under the variant's count rule at `counter` (default 0): `category`, `result`,
/// `dtc`, `counter`, `limit` (`dtc_json`), and the moves ranked under the rule, each with
/// the position after it under the rule and `zeroing` (`move_json`).
///
/// # Errors
/// [`ApiError`]: 400 for a malformed FEN, an illegal position or a counter at or over the
/// limit of the position's regime, 404 for a missing table (or a counter without DTC
/// tables), 500 for a damaged one.
pub fn position(
    s: &Served,
    fen_text: &str,
    notation: Notation,
    counter: Option<u16>,
) -> Result<Value, ApiError> {
    let pos = fen::parse(fen_text, &s.rules)?;
    let wld = s.tb.probe_wld(&pos)?;
    let ranked = if s.has_dtw {
        s.tb.probe_moves(&pos)?
    } else {
        s.tb.probe_moves_wld(&pos)?
    };
    let dtw = match (s.has_dtw, ranked.first()) {
        (false, _) => None,
        (true, Some(best)) => {
            let v = best.for_mover();
            if v.wld != wld {
                return Err(ApiError::Internal {
                    public: "the WLD and DTW tables disagree on this position".to_string(),
                    log: format!(
                        "{}: WLD says {wld}, DTW {} (run dtb verify)",
                        fen_text, v.wld
                    ),
                });
            }
            plies(v)
        }
        (true, None) => plies(s.tb.probe_dtw(&pos)?),
    };
    let rule = under_rule(s, &pos, wld, counter)?;
    let mut all = Vec::new();
    legal_moves(&s.rules, &pos, Counting::Unique, &mut all);
    let moves: Vec<Value> = match &rule {
        // Under the count rule: its order, each move with its game value too.
        Some((_, dtc_moves)) => dtc_moves
            .iter()
            .filter_map(|d| {
                let r = ranked.iter().find(|r| r.mv == d.mv)?;
                Some(move_json(s, &pos, r, Some(d), &all, notation))
            })
            .collect(),
        None => ranked
            .iter()
            .map(|r| move_json(s, &pos, r, None, &all, notation))
            .collect(),
    };
    let mut v = json!({
        "fen": fen::write_in(&pos, &s.rules, notation),
        "variant": s.rules.name,
        "notation": notation.name(),
        "side_to_move": side_name(pos.side_to_move()),
        "wld": wld.as_str(),
        "dtw": dtw,
        "category": wld.as_str(),
        "game_over": moves.is_empty(),
        "moves": moves,
    });
    if let Some((d, _)) = &rule {
        dtc_json(&mut v, d);
    }
    Ok(v)
}

/// `GET /api/v1/{variant}/mainline?fen=`: the best line to the end of the game (a drawn
/// position: [`DRAW_LINE_PLIES`] plies, then `"cut": true`). Each step is a move as in
/// [`position`]'s list. Needs DTW tables (404 without).
///
/// # Errors
/// As [`position`].
pub fn mainline(s: &Served, fen_text: &str, notation: Notation) -> Result<Value, ApiError> {
    let mut pos = fen::parse(fen_text, &s.rules)?;
    let start_wld = s.tb.probe_wld(&pos)?;
    if !s.has_dtw {
        return Err(ApiError::NotFound(format!(
            "no dtw tables for {}: a mainline needs distances (this is a WLD-only build)",
            s.rules.name
        )));
    }
    let start = s.tb.probe_dtw(&pos)?;
    let limit = match plies(start) {
        Some(p) => p as usize,
        None => DRAW_LINE_PLIES,
    };
    let winner = match start_wld {
        Wld::Win => Some(side_name(pos.side_to_move())),
        Wld::Loss => Some(side_name(pos.side_to_move().opponent())),
        Wld::Draw => None,
    };
    let start_fen = fen::write_in(&pos, &s.rules, notation);
    let mut line = Vec::new();
    let mut all = Vec::new();
    while line.len() < limit {
        let ranked = s.tb.probe_moves(&pos)?;
        let Some(best) = ranked.first() else { break };
        all.clear();
        legal_moves(&s.rules, &pos, Counting::Unique, &mut all);
        line.push(move_json(s, &pos, best, None, &all, notation));
        pos = best.mv.apply_unchecked(&pos);
    }
    let cut = start.wld == Wld::Draw && line.len() == limit;
    Ok(json!({
        "fen": start_fen,
        "variant": s.rules.name,
        "notation": notation.name(),
        "wld": start_wld.as_str(),
        "dtw": plies(start),
        "winner": winner,
        "mainline": line,
        "cut": cut,
    }))
}

/// A position's value for its side to move, as `dtb analyze --json` gives it:
/// `{"side_to_move", "wld", "dtw"}` (`dtw` null for a draw and without DTW tables), or null
/// where the tables do not cover the position.
fn value_json(s: &Served, v: Option<Dtw>, side: Color) -> Value {
    match v {
        Some(v) => json!({
            "side_to_move": side_name(side),
            "wld": v.wld.as_str(),
            "dtw": if s.has_dtw { plies(v) } else { None },
        }),
        None => Value::Null,
    }
}

/// One ply of an analysed game: `dtb analyze --json`'s ply, with `move` and `best_move` in
/// `notation` (the move as the game wrote it is `written`), and `fen_after`, `from` and `to`
/// (square numbers) added.
fn ply_json(s: &Served, i: usize, p: &Ply, pos: &Position, notation: Notation) -> Value {
    let r = &s.rules;
    let mut all = Vec::new();
    legal_moves(r, pos, Counting::Unique, &mut all);
    let label = if p.second {
        format!("{}...", p.number)
    } else {
        format!("{}.", p.number)
    };
    json!({
        "ply": i + 1,
        "move_number": label,
        "side": side_name(p.mover),
        "move": notation_in(r, notation, &p.mv, &all),
        "written": clip(&p.text),
        "pdn": p.pdn,
        "fen_before": fen::write_in(pos, r, notation),
        "fen_after": fen::write_in(&p.mv.apply_unchecked(pos), r, notation),
        "from": r.square_number(p.mv.from),
        "to": r.square_number(p.mv.to),
        "value_before": value_json(s, p.before, p.mover),
        "value_after": value_json(s, p.after, p.mover.opponent()),
        "changed_result": p.change.is_some(),
        "change": p.change.map(|c| c.as_str()),
        "best_move": p.best.as_ref().map(|b| notation_in(r, notation, &b.mv, &all)),
        "best_value_after": value_json(s, p.best.as_ref().map(|b| b.after), p.mover.opponent()),
    })
}

/// Why a game was not played to its end, as `dtb analyze --json` gives it; a move's
/// `legal_moves` and `fen` in `notation` (`pos` is the position of the faulty move).
fn game_error_json(
    s: &Served,
    g: &Game,
    e: &GameError,
    pos: Option<&Position>,
    notation: Notation,
) -> Value {
    let message = e.to_string();
    match e {
        GameError::Move {
            ply,
            text,
            legal,
            fen,
            ..
        } => {
            let kind = e.kind();
            let (legal, fen) = match pos {
                Some(pos) => {
                    let mut all = Vec::new();
                    legal_moves(&s.rules, pos, Counting::Unique, &mut all);
                    let legal: Vec<String> = all
                        .iter()
                        .map(|m| notation_in(&s.rules, notation, m, &all))
                        .collect();
                    (legal, fen::write_in(pos, &s.rules, notation))
                }
                None => (legal.clone(), fen.clone()),
            };
            let m = g.moves.get(*ply);
            json!({
                "kind": kind, "message": message, "ply": ply + 1,
                "move_number": m.map(|m| m.label()), "move": clip(text),
                "line": m.map(|m| m.line), "legal_moves": legal, "fen": fen,
            })
        }
        GameError::Fen { .. } | GameError::GameType { .. } => {
            json!({"kind": e.kind(), "message": message})
        }
        GameError::Probe { ply, .. } => {
            json!({"kind": e.kind(), "message": message, "ply": ply + 1})
        }
    }
}

/// Text from the request echoed in an answer: at most 40 characters.
fn clip(text: &str) -> String {
    match text.char_indices().nth(40) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}...", &text[..cut]),
    }
}

fn game_json(s: &Served, g: &Game, notation: Notation) -> (Value, usize, bool) {
    let an = game_analysis::analyze(&s.tb, g);
    let tags: serde_json::Map<String, Value> = g
        .tags
        .iter()
        .map(|(n, v)| (clip(n), json!(clip(v))))
        .collect();
    let mut plies = Vec::with_capacity(an.plies.len());
    let mut pos = an.start;
    for (i, p) in an.plies.iter().enumerate() {
        let Some(before) = pos else { break };
        plies.push(ply_json(s, i, p, &before, notation));
        pos = Some(p.mv.apply_unchecked(&before));
    }
    let error = an
        .error
        .as_ref()
        .map(|e| game_error_json(s, g, e, pos.as_ref(), notation));
    let changed = an.changes().count();
    let v = json!({
        "game": g.number,
        "line": g.line,
        "tags": tags,
        "result": g.result,
        "start_fen": an.start.map(|p| fen::write_in(&p, &s.rules, notation)),
        "moves": g.moves.len(),
        "plies": plies,
        "changed": changed,
        "error": error,
    });
    (v, changed, an.error.is_some())
}

/// A game of the text that could not be read: `{"game", "line", "error": {"kind":
/// "syntax", "message"}}`, as `dtb analyze --json` writes it.
fn syntax_json(e: &PdnError) -> Value {
    json!({"game": e.game, "line": e.line, "error": {"kind": "syntax", "message": e.to_string()}})
}

/// `POST /api/v1/{variant}/analyze` with PDN text: every game played through the tables
/// ([`dtb_probe::analyze::analyze`]), as `dtb analyze --json` gives each game, with moves and
/// FEN in `notation` and each ply's `fen_after`; then a `summary` (`games`, `errors`,
/// `plies`, `changed`). A game that cannot be read or played to its end carries its
/// `error` (kind, message, and for a move its number and the legal moves); the others are
/// analysed all the same.
///
/// # Errors
/// 400 for a text without a game, with more than [`MAX_ANALYZE_GAMES`] games or more than
/// [`MAX_ANALYZE_PLIES`] moves in all.
pub fn analyze(s: &Served, text: &str, notation: Notation) -> Result<Value, ApiError> {
    let mut read: Vec<Result<Game, PdnError>> = Vec::new();
    let mut moves = 0usize;
    for g in pdn::games(text) {
        if read.len() == MAX_ANALYZE_GAMES {
            return Err(ApiError::BadRequest(format!(
                "more than {MAX_ANALYZE_GAMES} games: send fewer at a time, or run dtb analyze"
            )));
        }
        if let Ok(g) = &g {
            moves += g.moves.len();
            if moves > MAX_ANALYZE_PLIES {
                return Err(ApiError::BadRequest(format!(
                    "more than {MAX_ANALYZE_PLIES} moves in all: send fewer games at a time, \
                     or run dtb analyze"
                )));
            }
        }
        read.push(g);
    }
    if read.is_empty() {
        return Err(ApiError::BadRequest(
            "no PDN game in the request body".to_string(),
        ));
    }
    let (mut errors, mut plies, mut changed) = (0, 0, 0);
    let games: Vec<Value> = read
        .iter()
        .map(|g| match g {
            Ok(g) => {
                let (v, c, failed) = game_json(s, g, notation);
                plies += v["plies"].as_array().map_or(0, Vec::len);
                changed += c;
                errors += usize::from(failed);
                v
            }
            Err(e) => {
                errors += 1;
                syntax_json(e)
            }
        })
        .collect();
    Ok(json!({
        "variant": s.rules.name,
        "notation": notation.name(),
        "games": games,
        "summary": {"games": games.len(), "errors": errors, "plies": plies, "changed": changed},
    }))
}

/// `GET /api/v1/variants`: what the page needs to draw each served board: the variant, board
/// side, largest piece count, whether distances are there (`dtw`) and values under the
/// count rule (`dtc`; `count` is its profile's limits, `general:80`, and `spec` the variant
/// with `count=` where not the preset's), a sample position, and every
/// playable square's number, algebraic name (`c3`) and its row and column on screen (row 0
/// at the top, Black's side; White plays up the board), and the notation its players write
/// (the API's default for it).
pub fn variants<'a>(served: impl Iterator<Item = &'a Served>) -> Value {
    let list: Vec<Value> = served
        .map(|s| {
            let r = &s.rules;
            let g = r.geometry();
            let mirrored = r.numbering != dtb_probe::internal::rules::Numbering::Standard;
            let mut squares: Vec<Value> = (0..g.squares)
                .map(|sq| {
                    let (row, col) = g.coords(sq);
                    let col = if mirrored { g.size - 1 - col } else { col };
                    json!({"number": r.square_number(sq), "name": fen::algebraic_name(sq, r), "row": row, "col": col})
                })
                .collect();
            squares.sort_by_key(|v| v["number"].as_u64());
            json!({
                "name": r.name,
                "board": r.board,
                "max_pieces": s.tb.max_pieces(),
                "dtw": s.has_dtw,
                "dtc": s.has_dtc,
                "count": s.tb.count_profile().describe(),
                "spec": s.spec(),
                "notation": Notation::of(r).name(),
                "example": example_fen(r),
                "start": fen::write_in(&Position::start(r), r, Notation::of(r)),
                "squares": squares,
            })
        })
        .collect();
    json!({ "variants": list })
}

/// A king each, White's on its highest-numbered internal square (the bottom-right corner)
/// and Black's two rows above it, White to move: a two-piece position every build holds.
fn example_fen(r: &Rules) -> String {
    if r.name == "english" {
        return "W:WK32:BK26".to_string(); // "taking the move", README's example
    }
    let g = r.geometry();
    let w = g.squares - 1;
    let b = g.squares - 1 - 2 * g.half();
    format!("W:WK{}:BK{}", r.square_number(w), r.square_number(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn squares_of(rules: Rules) -> Vec<Value> {
        let s = Served::new(Tablebase::new(rules));
        let v = variants(std::iter::once(&s));
        v["variants"][0]["squares"].as_array().unwrap().clone()
    }

    #[test]
    fn boards_in_each_numbering() {
        // International: 50 squares, 1 at the top on the second column, 50 bottom right.
        let sq = squares_of(Rules::INTERNATIONAL);
        assert_eq!(sq.len(), 50);
        assert_eq!(
            sq[0],
            json!({"number": 1, "name": "b10", "row": 0, "col": 1})
        );
        assert_eq!(
            sq[5],
            json!({"number": 6, "name": "a9", "row": 1, "col": 0})
        );
        assert_eq!(
            sq[49],
            json!({"number": 50, "name": "i1", "row": 9, "col": 8})
        );
        // Italian: the mirrored board, 1 = a8 (top left), 32 = h1.
        let it = Rules::by_name("italian").unwrap();
        let sq = squares_of(it);
        assert_eq!(
            sq[0],
            json!({"number": 1, "name": "a8", "row": 0, "col": 0})
        );
        assert_eq!(
            sq[31],
            json!({"number": 32, "name": "h1", "row": 7, "col": 7})
        );
        // Spanish: numbered from White's side, 1 = h1 (bottom right), 4 = b1, 5 = g2.
        let sq = squares_of(Rules::by_name("spanish").unwrap());
        assert_eq!(
            sq[0],
            json!({"number": 1, "name": "h1", "row": 7, "col": 7})
        );
        assert_eq!(
            sq[3],
            json!({"number": 4, "name": "b1", "row": 7, "col": 1})
        );
        assert_eq!(
            sq[4],
            json!({"number": 5, "name": "g2", "row": 6, "col": 6})
        );
        // Every board: the playable squares are the dark ones, one per (row, col).
        for r in Rules::PRESETS {
            let sq = squares_of(*r);
            let cells: std::collections::HashSet<(u64, u64)> = sq
                .iter()
                .map(|s| (s["row"].as_u64().unwrap(), s["col"].as_u64().unwrap()))
                .collect();
            assert_eq!(cells.len(), sq.len(), "{}", r.name);
            let parity: std::collections::HashSet<u64> =
                cells.iter().map(|(r, c)| (r + c) % 2).collect();
            assert_eq!(parity.len(), 1, "{}: one colour of squares", r.name);
        }
    }

    #[test]
    fn fen_parameter_and_error_statuses() {
        assert_eq!(fen_param(Some(" W:WK32:BK26 ")), Ok("W:WK32:BK26"));
        assert_eq!(fen_param(None).unwrap_err().status(), 400);
        assert_eq!(fen_param(Some("  ")).unwrap_err().status(), 400);
        let long = "1".repeat(MAX_FEN_BYTES + 1);
        assert_eq!(fen_param(Some(&long)).unwrap_err().status(), 400);
        let e: ApiError = fen::parse("W:W1:B20", &Rules::ENGLISH).unwrap_err().into();
        assert!(e.to_string().starts_with("illegal position"), "{e}");
        let e: ApiError = ProbeError::GameOver.into();
        assert_eq!(e.status(), 400);
        // An empty tablebase: every position is a missing table, 404.
        let s = Served::new(Tablebase::new(Rules::ENGLISH));
        let n = Notation::Numbers;
        assert_eq!(
            position(&s, "W:WK32:BK26", n, None).unwrap_err().status(),
            404
        );
        assert_eq!(mainline(&s, "W:WK32:BK26", n).unwrap_err().status(), 404);
        let e = &Rules::ENGLISH;
        let ru = &Rules::RUSSIAN;
        assert_eq!(notation_param(e, None), Ok(Notation::Numbers));
        assert_eq!(notation_param(ru, None), Ok(Notation::Algebraic));
        assert_eq!(
            notation_param(&Rules::BRAZILIAN, None),
            Ok(Notation::Algebraic)
        );
        assert_eq!(notation_param(ru, Some("numeric")), Ok(Notation::Numbers));
        assert_eq!(
            notation_param(e, Some("algebraic")),
            Ok(Notation::Algebraic)
        );
        assert_eq!(notation_param(e, Some("x")).unwrap_err().status(), 400);
    }
}

#[cfg(test)]
mod dtc_tests {
    use super::*;

    /// English 2-piece tables with DTC under the preset's 80-ply limit (the library's test
    /// data).
    fn english_2() -> Served {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../probe/tests/data/english-2");
        Served::new(Tablebase::open(dir, Rules::ENGLISH).unwrap())
    }

    #[test]
    fn counter_parameter() {
        assert_eq!(counter_param(None), Ok(None));
        assert_eq!(counter_param(Some("0")), Ok(Some(0)));
        assert_eq!(counter_param(Some(" 79 ")), Ok(Some(79)));
        assert_eq!(counter_param(Some("65535")), Ok(Some(65535)));
        for bad in ["", " ", "-1", "+3", "3.5", "1e3", "abc", "\u{fffd}", "0x10"] {
            let e = counter_param(Some(bad)).unwrap_err();
            assert_eq!(e.status(), 400, "{bad:?}");
            assert!(e.to_string().contains("whole number"), "{bad:?}: {e}");
        }
        let huge = "9".repeat(5000);
        let e = counter_param(Some(&huge)).unwrap_err();
        assert!(e.to_string().contains("over every count limit"), "{e}");
        assert!(e.to_string().len() < 200, "{e}");
    }

    /// The taking-the-move position under the 80-ply rule: a win at counter 0 and wherever
    /// its distance to conversion fits, drawn past that; the counter at the limit is 400; the
    /// moves ranked under the rule, each with the position after it at its counter.
    #[test]
    fn values_under_the_count_rule() {
        let s = english_2();
        assert!(s.has_dtc);
        let n = Notation::Numbers;
        let plain = position(&s, "W:WK32:BK26", n, None).unwrap();
        let v = position(&s, "W:WK32:BK26", n, Some(0)).unwrap();
        assert_eq!(plain, v, "no counter is counter 0");
        assert_eq!(v["wld"], "win");
        assert_eq!(v["category"], "win");
        assert_eq!(v["result"], "win");
        assert_eq!(v["counter"], 0);
        assert_eq!(v["limit"], 80);
        let dtc = v["dtc"].as_u64().unwrap();
        assert!((1..=9).contains(&dtc), "{v}");
        let best = &v["moves"][0];
        assert_eq!(best["move"], "32-27");
        assert_eq!(best["wld"], "win");
        assert_eq!(best["category"], "loss");
        assert_eq!(best["result"], "loss");
        assert_eq!(best["counter"], 1, "a king move does not reset");
        assert_eq!(best["zeroing"], false);
        assert_eq!(best["dtc"].as_u64(), Some(dtc - 1));
        let fits = 80 - dtc;
        let at = position(&s, "W:WK32:BK26", n, Some(fits as u16)).unwrap();
        assert_eq!(
            (&at["category"], &at["result"]),
            (&json!("win"), &json!("win"))
        );
        let past = position(&s, "W:WK32:BK26", n, Some(fits as u16 + 1)).unwrap();
        assert_eq!(past["category"], "win");
        assert_eq!(past["result"], "draw", "{past}");
        assert_eq!(past["wld"], "win", "the game-theoretic value stays");
        let e = position(&s, "W:WK32:BK26", n, Some(80)).unwrap_err();
        assert_eq!(e.status(), 400);
        assert!(e.to_string().contains("limit of 80 plies"), "{e}");
        let draw = position(&s, "B:WK32:BK26", n, Some(5)).unwrap();
        assert_eq!(draw["category"], "draw");
        assert_eq!(draw["dtc"], Value::Null);
        // The mainline takes no counter; a WLD/DTW directory none at all.
        let (wld_dtw, _keep) = without_dtc();
        assert!(!wld_dtw.has_dtc);
        let e = position(&wld_dtw, "W:WK32:BK26", n, Some(0)).unwrap_err();
        assert_eq!(e.status(), 404);
        assert!(e.to_string().contains("dtb gen --values dtc"), "{e}");
        let v = position(&wld_dtw, "W:WK32:BK26", n, None).unwrap();
        assert_eq!(v["result"], Value::Null, "{v}");
        assert_eq!(v["moves"][0].get("zeroing"), None, "{v}");
    }

    /// A copy of the English 2-piece tables without their DTC files.
    fn without_dtc() -> (Served, tempfile::TempDir) {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../probe/tests/data/english-2");
        let copy = tempfile::tempdir().unwrap();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "wld" || x == "dtw") {
                std::fs::copy(&p, copy.path().join(p.file_name().unwrap())).unwrap();
            }
        }
        let tb = Tablebase::open(copy.path(), Rules::ENGLISH).unwrap();
        (Served::new(tb), copy)
    }
}

#[cfg(test)]
mod analyze_tests {
    use super::*;

    /// English 2-piece tables (the library's test data).
    fn english_2() -> Served {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../probe/tests/data/english-2");
        Served::new(Tablebase::open(dir, Rules::ENGLISH).unwrap())
    }

    /// A good game: 32-28 throws White's win away (win to draw, best 32-27), 26-22 keeps
    /// the draw; a second game has an illegal move, reported with its game and move number
    /// and the legal moves, its first ply still valued.
    #[test]
    fn games_are_analysed_and_an_illegal_move_is_reported() {
        let s = english_2();
        let text = "[FEN \"W:WK32:BK26\"]\n1. 32-28 26-22 *\n\n\
                    [FEN \"W:WK32:BK26\"]\n1. 32-27 26-17 *\n";
        let v = analyze(&s, text, Notation::Numbers).unwrap();
        assert_eq!(
            v["summary"],
            json!({"games": 2, "errors": 1, "plies": 3, "changed": 1})
        );
        let g = &v["games"][0];
        assert_eq!(g["game"], 1);
        assert_eq!(g["error"], Value::Null);
        assert_eq!(g["start_fen"], "W:WK32:BK26");
        let p = &g["plies"][0];
        assert_eq!(p["move"], "32-28");
        assert_eq!(p["move_number"], "1.");
        assert_eq!(p["fen_before"], "W:WK32:BK26");
        assert_eq!(p["fen_after"], "B:WK28:BK26");
        assert_eq!(
            p["value_before"],
            json!({"side_to_move": "white", "wld": "win", "dtw": 9})
        );
        assert_eq!(
            p["value_after"],
            json!({"side_to_move": "black", "wld": "draw", "dtw": null})
        );
        assert_eq!(p["changed_result"], true);
        assert_eq!(p["change"], "win to draw");
        assert_eq!(p["best_move"], "32-27");
        assert_eq!(p["best_value_after"]["wld"], "loss");
        let p = &g["plies"][1];
        assert_eq!(p["move"], "26-22");
        assert_eq!(p["fen_before"], "B:WK28:BK26");
        assert_eq!(p["changed_result"], false);
        assert_eq!(p["best_move"], Value::Null);

        let g = &v["games"][1];
        assert_eq!(g["game"], 2);
        assert_eq!(g["plies"].as_array().unwrap().len(), 1);
        let e = &g["error"];
        assert_eq!(e["kind"], "illegal_move");
        assert_eq!(e["ply"], 2);
        assert_eq!(e["move_number"], "1...");
        assert_eq!(e["move"], "26-17");
        assert_eq!(e["fen"], "B:WK27:BK26");
        let legal = e["legal_moves"].as_array().unwrap();
        assert!(!legal.is_empty() && !legal.contains(&json!("26-17")), "{e}");
        assert!(e["message"].as_str().unwrap().contains("26-17"), "{e}");
    }

    /// The algebraic notation on request; a text without games, too many games or moves,
    /// and hostile text are answered, never a panic.
    #[test]
    fn notation_limits_and_hostile_text() {
        let s = english_2();
        let v = analyze(&s, "[FEN \"W:WK32:BK26\"] 1. 32-28 *", Notation::Algebraic).unwrap();
        assert_eq!(v["notation"], "algebraic");
        let p = &v["games"][0]["plies"][0];
        assert_eq!(p["move"], "g1-h2");
        assert_eq!(p["pdn"], "32-28");
        assert_eq!(
            analyze(&s, "", Notation::Numbers).unwrap_err().status(),
            400
        );
        assert_eq!(
            analyze(&s, "  \n ", Notation::Numbers)
                .unwrap_err()
                .status(),
            400
        );
        let many = "1. 9-13 *\n".repeat(MAX_ANALYZE_GAMES + 1);
        let e = analyze(&s, &many, Notation::Numbers).unwrap_err();
        assert!(e.to_string().contains("games"), "{e}");
        let long = format!("{} *", "9-13 22-18 ".repeat(MAX_ANALYZE_PLIES / 2 + 1));
        let e = analyze(&s, &long, Notation::Numbers).unwrap_err();
        assert!(e.to_string().contains("moves"), "{e}");
        for junk in [
            "[FEN \"",
            "{ unclosed",
            "((((",
            "1. 99-100 *",
            "[FEN \"W:W33:B1\"] 1. 1-5 *",
            "[GameType \"20\"] 1. 32-28 *",
            "\u{0}\u{ffff}[[[]]]",
            "1. 9x18x27x36x45x54x63x72 *",
        ] {
            let v = analyze(&s, junk, Notation::Numbers);
            if let Ok(v) = v {
                assert!(
                    v["summary"]["errors"].as_u64().unwrap() >= 1,
                    "{junk:?}: {v}"
                );
            }
        }
    }
}
