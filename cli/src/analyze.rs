//! `dtb analyze`: every game of a PDN file played through the tables
//! ([`dtb_probe::analyze`]), written back as PDN with the values as comments, or as JSON.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use dtb_probe::analyze::{self, Analysis, GameError, Ply};
use dtb_probe::pdn::{self, Game, PdnError};
use dtb_probe::{fen, Color, Dtw, Tablebase};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde_json::{json, Value};

use crate::args::Variant;
use crate::tables::open_tables;

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    #[command(flatten)]
    variant: Variant,
    /// Directory holding the tables; repeat it for several (as for `dtb probe`).
    #[arg(long, default_value = "tables")]
    dir: Vec<PathBuf>,
    /// One JSON object per game (its plies with the values before and after each move, the
    /// moves that changed the result and the best move instead), then a summary object.
    #[arg(long)]
    json: bool,
    /// The PDN file (`-` for standard input). UTF-8, or else read as Latin-1 (as
    /// CheckerBoard writes).
    file: PathBuf,
}

/// Games analysed between two progress updates (and output writes).
const CHUNK: usize = 64;

/// Run the command line `args`: 0 when every game was read and played to its end, 1 when
/// some game has an error (reported, the others analysed).
///
/// # Errors
/// Tables that cannot be opened, a file that cannot be read, standard output failing.
pub fn run(a: Args) -> Result<ExitCode> {
    let rules = a.variant.rules()?;
    let mut tb = open_tables(&a.dir[0], &rules)?;
    for d in &a.dir[1..] {
        if !d.is_dir() {
            bail!(
                "table directory {} does not exist or is not a directory",
                d.display()
            );
        }
        tb.add_directory(d)?;
    }
    let text = read_text(&a.file)?;
    let t0 = Instant::now();
    let games: Vec<Result<Game, PdnError>> = pdn::games(&text).collect();
    let bar = ProgressBar::new(games.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("analyze [{bar:30}] {pos}/{len} games {per_sec} ETA {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut totals = Totals::default();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for chunk in games.chunks(CHUNK) {
        let done: Vec<Result<(&Game, Analysis), &PdnError>> = chunk
            .par_iter()
            .map(|g| g.as_ref().map(|g| (g, analyze::analyze(&tb, g))))
            .collect();
        let mut text = String::new();
        for d in &done {
            totals.count(d);
            match d {
                Ok((g, an)) => {
                    if let Some(e) = &an.error {
                        bar.suspend(|| eprintln!("dtb: {}", game_error_line(g, e)));
                    }
                    if a.json {
                        text.push_str(&json_line(&game_json(&tb, g, an)));
                        text.push('\n');
                    } else {
                        text.push_str(&analyze::write_pdn(g, an));
                        text.push('\n');
                    }
                }
                Err(e) => {
                    bar.suspend(|| eprintln!("dtb: {e}"));
                    if a.json {
                        text.push_str(&json_line(&syntax_json(e)));
                        text.push('\n');
                    }
                }
            }
        }
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(crate::output::StdoutError)?;
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    let seconds = t0.elapsed().as_secs_f64();
    let rate = if seconds > 0.0 {
        totals.games as f64 / seconds
    } else {
        0.0
    };
    if a.json {
        outln!(
            "{}",
            json!({"summary": {
                "games": totals.games, "analysed": totals.games - totals.failed,
                "errors": totals.failed, "plies": totals.plies, "valued_plies": totals.valued,
                "changed": totals.changed, "seconds": seconds, "games_per_second": rate,
            }})
        );
    }
    eprintln!(
        "dtb: {} ({} with an error), {} ({} valued), {} changed the result; {seconds:.2} s, \
         {rate:.0} games/s",
        count(totals.games, "game"),
        totals.failed,
        count(totals.plies, "ply"),
        totals.valued,
        count(totals.changed, "move"),
    );
    Ok(if totals.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `n` and the noun, plural unless `n` is 1: `1 game`, `3 plies`.
fn count(n: usize, noun: &str) -> String {
    match (n, noun) {
        (1, _) => format!("1 {noun}"),
        (_, "ply") => format!("{n} plies"),
        _ => format!("{n} {noun}s"),
    }
}

/// The largest PDN input read (bytes): a million games of a few hundred bytes each. A larger
/// input (or an endless one, `/dev/zero`) is refused instead of filling memory.
const MAX_INPUT: u64 = 1 << 30;

/// The file's text: UTF-8, or else each byte as its Latin-1 character; at most
/// [`MAX_INPUT`] bytes.
fn read_text(path: &PathBuf) -> Result<String> {
    use std::io::Read;
    let what = if path.as_os_str() == "-" {
        "standard input".to_string()
    } else {
        path.display().to_string()
    };
    let source: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(path).with_context(|| format!("cannot read {what}"))?)
    };
    let mut bytes = Vec::new();
    source
        .take(MAX_INPUT + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {what}"))?;
    if bytes.len() as u64 > MAX_INPUT {
        anyhow::bail!(
            "{what} is larger than {} MiB: split it into smaller files",
            MAX_INPUT >> 20
        );
    }
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => e.into_bytes().iter().map(|&b| char::from(b)).collect(),
    })
}

#[derive(Default)]
struct Totals {
    games: usize,
    failed: usize,
    plies: usize,
    valued: usize,
    changed: usize,
}

impl Totals {
    fn count(&mut self, d: &Result<(&Game, Analysis), &PdnError>) {
        self.games += 1;
        match d {
            Ok((_, an)) => {
                self.failed += usize::from(an.error.is_some());
                self.plies += an.plies.len();
                self.valued += an.plies.iter().filter(|p| p.before.is_some()).count();
                self.changed += an.changes().count();
            }
            Err(_) => self.failed += 1,
        }
    }
}

/// `game 3 (line 17): move 12... "22-18": ...`
fn game_error_line(g: &Game, e: &GameError) -> String {
    let line = match e {
        GameError::Move { ply, .. } => g.moves.get(*ply).map_or(g.line, |m| m.line),
        _ => g.line,
    };
    format!("game {} (line {line}): {e}", g.number)
}

fn color(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

/// A position's value for its side to move: `{"side_to_move", "wld", "dtw"}`, or null.
fn value_json(v: Option<Dtw>, side: Color) -> Value {
    match v {
        Some(v) => json!({"side_to_move": color(side), "wld": v.wld.as_str(), "dtw": v.plies}),
        None => Value::Null,
    }
}

fn ply_json(i: usize, p: &Ply) -> Value {
    let label = if p.second {
        format!("{}...", p.number)
    } else {
        format!("{}.", p.number)
    };
    json!({
        "ply": i + 1,
        "move_number": label,
        "side": color(p.mover),
        "move": p.text,
        "pdn": p.pdn,
        "fen_before": p.fen,
        "value_before": value_json(p.before, p.mover),
        "value_after": value_json(p.after, p.mover.opponent()),
        "changed_result": p.change.is_some(),
        "change": p.change.map(|c| c.as_str()),
        "best_move": p.best.as_ref().map(|b| b.pdn.clone()),
        "best_value_after": value_json(p.best.as_ref().map(|b| b.after), p.mover.opponent()),
    })
}

fn game_json(tb: &Tablebase, g: &Game, an: &Analysis) -> Value {
    let tags: serde_json::Map<String, Value> =
        g.tags.iter().map(|(n, v)| (n.clone(), json!(v))).collect();
    let plies: Vec<Value> = an
        .plies
        .iter()
        .enumerate()
        .map(|(i, p)| ply_json(i, p))
        .collect();
    json!({
        "game": g.number,
        "line": g.line,
        "tags": tags,
        "result": g.result,
        "start_fen": an.start.map(|p| fen::write_customary(&p, tb.rules())),
        "moves": g.moves.len(),
        "plies": plies,
        "error": an.error.as_ref().map(|e| error_json(g, e)),
    })
}

/// `{"kind", "message", ...}` for a game that was not played to its end; a move's error
/// adds `"ply"` (from 1), `"move_number"`, `"move"`, `"line"`, `"legal_moves"` and `"fen"`.
fn error_json(g: &Game, e: &GameError) -> Value {
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

/// A game of the file that could not be read: `{"game", "line", "error": {"kind":
/// "syntax", "message"}}`.
fn syntax_json(e: &PdnError) -> Value {
    json!({"game": e.game, "line": e.line, "error": {"kind": "syntax", "message": e.to_string()}})
}

/// Text from the file echoed in JSON: at most 40 characters.
fn clip(text: &str) -> String {
    match text.char_indices().nth(40) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}...", &text[..cut]),
    }
}

/// One JSON object as a line, with the characters some line readers take for line ends
/// escaped (as `dtb probe` writes them).
fn json_line(v: &Value) -> String {
    let mut s = String::new();
    for c in v.to_string().chars() {
        if matches!(c, '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}') {
            s.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            s.push(c);
        }
    }
    s
}
