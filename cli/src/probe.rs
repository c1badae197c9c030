//! `dtb probe`: the value of positions (FEN arguments or a batch file), with the distance,
//! the best move, every move ranked (`--moves`) or the best line (`--line`).

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use dtb_probe::fen::Notation;
use dtb_probe::internal::format::ValueKind;
use dtb_probe::movegen::{legal_moves, notation_in, Counting};
use dtb_probe::{fen, Rules, Tablebase, Wld};
use serde_json::json;

use crate::args::Variant;
use crate::output::{error_line, plies, shown};
use crate::tables::open_tables;

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    #[command(flatten)]
    variant: Variant,
    /// Directory holding the tables; repeat it for several (a search path: a table in an
    /// earlier --dir is used before the same slice's in a later one).
    #[arg(long, default_value = "tables")]
    dir: Vec<PathBuf>,
    /// One JSON object per position: {"fen", "wld", "dtw", "best_move"} or {"fen", "error",
    /// "kind"} (kind: what went wrong, as a word);
    /// with "missing" (why) added, and exit status 1, when the directory holds DTW tables
    /// but one the distance or best move needs is missing.
    #[arg(long)]
    json: bool,
    /// Read positions from FILE, one FEN per line (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    batch: Option<PathBuf>,
    /// Play the best line to the end of the game and print each move with its value for the
    /// mover, as --moves gives it (win in 9, loss in 8, ...; needs the DTW tables); with
    /// --json a "line" array of {"move", "wld", "dtw", "fen"}.
    #[arg(long)]
    line: bool,
    /// After each position, every legal move with its value for the mover (win or loss
    /// with the distance in plies, or draw) and the position after it, best first; with
    /// --json a "moves" array of {"move", "wld", "dtw", "fen"}.
    #[arg(long, conflicts_with = "line")]
    moves: bool,
    /// How moves and the positions after them are written: `algebraic` (c3-b4, c3:e5) or
    /// `numeric` (22-17, 22x15); by default as the variant's players write them, algebraic
    /// for Russian and Brazilian, numeric for the others. FEN input may be in either.
    #[arg(long, value_enum)]
    notation: Option<NotationArg>,
    /// Plies since the counter of the variant's move-count rule was last reset (by a capture
    /// or a man move, as `dtb variants` says for each variant; `count=` in --variant changes
    /// the limits). With DTC tables in the directory (`dtb gen --values dtc`) each answer
    /// adds the value under that rule: its category at counter 0 (win, cursed-win, draw,
    /// blessed-loss, loss), the result at this counter and the distance to conversion in
    /// plies ("category", "result", "dtc", "counter" in --json; per move with --moves,
    /// with "zeroing"). Default 0. A counter at or over the limit of the position's regime
    /// is an error (the game is already drawn).
    #[arg(long, value_name = "PLIES", allow_hyphen_values = true,
          value_parser = crate::args::number_in(0u16, None))]
    counter: Option<u16>,
    /// Positions in PDN FEN.
    fens: Vec<String>,
}

/// `--notation`'s values.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum NotationArg {
    /// Square numbers (22-17, 22x15).
    Numeric,
    /// Algebraic squares (c3-b4, c3:e5).
    Algebraic,
}

/// Run the command line `args`; the exit code on success (probe: 1 if any position failed).
///
/// # Errors
/// Any failure, as one message chain for the caller to print.
pub fn run(a: Args) -> Result<ExitCode> {
    let variant = a.variant.parsed()?;
    probe(&variant, a)
}

fn probe(variant: &dtb_probe::Variant, a: Args) -> Result<ExitCode> {
    let rules = &variant.rules;
    let Args {
        dir: dirs,
        json,
        batch,
        line,
        moves,
        fens,
        notation,
        counter,
        ..
    } = a;
    let notation = match notation {
        Some(NotationArg::Numeric) => Notation::Numbers,
        Some(NotationArg::Algebraic) => Notation::Algebraic,
        None => Notation::of(rules),
    };
    let mut tb = open_tables(&dirs[0], rules)?;
    tb.set_count_profile(variant.count);
    for d in &dirs[1..] {
        if !d.is_dir() {
            bail!(
                "table directory {} does not exist or is not a directory",
                d.display()
            );
        }
        tb.add_directory(d)?;
    }
    let names = dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if line && tb.materials(ValueKind::Dtw).is_empty() && tb.materials(ValueKind::Dtc).is_empty() {
        bail!(
            "--line plays the best moves, which needs DTW tables; {names} holds WLD tables only \
             (built with --wld-only): build without --wld-only, or probe without --line"
        );
    }
    let dtc = !tb.materials(ValueKind::Dtc).is_empty();
    if counter.is_some() && !dtc {
        bail!(
            "--counter gives values under the move-count rule, which needs DTC tables; {names} \
             holds none: build them with dtb gen --values dtc"
        );
    }
    let out_as = Out {
        json,
        notation,
        counter: dtc.then_some(counter.unwrap_or(0)),
    };
    if fens.is_empty() && batch.is_none() {
        bail!("no position given: pass FEN arguments or --batch FILE");
    }
    let failed = std::cell::Cell::new(false);
    let answer = |text: &str, out: &mut dyn Write| -> Result<()> {
        let ok = if line {
            answer_line(&tb, rules, text, out_as, out)?
        } else if moves {
            answer_moves(&tb, rules, text, out_as, out)?
        } else {
            answer_probe(&tb, rules, text, out_as, out)?
        };
        if !ok {
            failed.set(true);
        }
        Ok(())
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for f in &fens {
        answer(f, &mut out)?;
    }
    if let Some(b) = batch {
        let mut reader: Box<dyn BufRead> = if b.as_os_str() == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            Box::new(std::io::BufReader::new(
                std::fs::File::open(&b)
                    .with_context(|| format!("cannot open batch file {}", b.display()))?,
            ))
        };
        // One position a line, answered as it arrives (so a pipe can drive it); blank lines
        // and `#` comments are skipped; a line that is not UTF-8, or longer than any FEN,
        // gets its own error.
        let mut buf = Vec::new();
        let mut number = 0usize;
        while let Some(len) = read_line_bounded(&mut reader, &mut buf, MAX_LINE_BYTES)
            .context("reading batch input")?
        {
            number += 1;
            if let Some((msg, kind)) = refusal(&buf, len, number) {
                failed.set(true);
                if json {
                    writeln!(
                        out,
                        "{}",
                        json!({"line": number, "error": msg, "kind": kind})
                    )?;
                } else {
                    eprintln!("dtb: {msg}");
                }
                out.flush()?;
                continue;
            }
            let text = String::from_utf8_lossy(&buf)
                .trim_start_matches('\u{feff}')
                .trim()
                .to_string();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            answer(&text, &mut out)?;
            out.flush()?;
        }
    }
    Ok(if failed.get() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// How answers are written: JSON or text, and the notation of moves and positions.
#[derive(Clone, Copy)]
struct Out {
    json: bool,
    notation: Notation,
    /// The counter DTC values are given at (`None`: no DTC tables, no such values).
    counter: Option<u16>,
}

/// Longest batch line read, in bytes without its line end: a FEN is at most a few hundred
/// bytes (a 10x10 board with every square listed, in a PDN tag, is under 300).
const MAX_LINE_BYTES: usize = 4096;

/// Why batch line `number` (`buf`, `len` bytes in all) gets no answer, if it does not: longer
/// than any FEN, or not UTF-8. The message and the JSON `kind`.
fn refusal(buf: &[u8], len: usize, number: usize) -> Option<(String, &'static str)> {
    if len > MAX_LINE_BYTES {
        Some((
            format!(
                "batch line {number} is {len} bytes, longer than any FEN (at most \
                 {MAX_LINE_BYTES} bytes a line)"
            ),
            "line_too_long",
        ))
    } else if std::str::from_utf8(buf).is_err() {
        Some((format!("batch line {number} is not UTF-8 text"), "not_utf8"))
    } else {
        None
    }
}

/// Read one line into `buf` (without its `\n`), keeping at most `max + 1` bytes of it and
/// reading past the rest, so that a line of any length costs bounded memory. `Ok(None)` at
/// the end of the input, else the line's whole length in bytes (over `max`: `buf` is cut).
fn read_line_bounded(
    r: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<usize>> {
    buf.clear();
    let mut len = 0usize;
    let mut any = false;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(any.then_some(len));
        }
        any = true;
        let (part, used, end) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], i + 1, true),
            None => (chunk, chunk.len(), false),
        };
        let room = (max + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&part[..part.len().min(room)]);
        len += part.len();
        r.consume(used);
        if end {
            return Ok(Some(len));
        }
    }
}

/// What kind of failure `e` is, for programs reading `--json`: `malformed_fen`,
/// `illegal_position`, `game_over`, `missing_table`, `corrupt_table`, `variant_mismatch`
/// (a file of another variant, rule set or slice under this one's name), `capture_position`,
/// `counter_out_of_range`, `directory`, or `error` for anything else.
fn error_kind(e: &anyhow::Error) -> &'static str {
    use dtb_probe::fen::FenError;
    use dtb_probe::ProbeError;
    for cause in e.chain() {
        if let Some(p) = cause.downcast_ref::<ProbeError>() {
            return match p {
                ProbeError::IllegalPosition(_) => "illegal_position",
                ProbeError::GameOver => "game_over",
                ProbeError::MissingTable { .. } => "missing_table",
                ProbeError::Table(_) => "corrupt_table",
                ProbeError::Mismatch { .. } | ProbeError::VariantMismatch { .. } => {
                    "variant_mismatch"
                }
                ProbeError::Directory { .. } => "directory",
                ProbeError::CapturePosition => "capture_position",
                ProbeError::CounterOutOfRange { .. } => "counter_out_of_range",
            };
        }
        if let Some(f) = cause.downcast_ref::<FenError>() {
            return match f {
                FenError::Position(_) => "illegal_position",
                _ => "malformed_fen",
            };
        }
    }
    "error"
}

/// One JSON object as a line for the most careful reader: serde_json's text with DEL, the C1
/// controls and the line and paragraph separators (U+2028, U+2029; legal in JSON, but line
/// breaks to JavaScript before ES2019 and to some line readers) escaped as `\uXXXX` as well.
/// They can only stand inside strings (echoed FEN text), where the escape reads back the same.
fn json_line(v: &serde_json::Value) -> String {
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

/// Print why position `f` got no answer: a JSON object on standard output, or a line on
/// standard error.
fn report_failure(f: &str, e: &anyhow::Error, json: bool, out: &mut dyn Write) -> Result<()> {
    if json {
        let o = json!({"fen": f, "error": error_line(e), "kind": error_kind(e)});
        writeln!(out, "{}", json_line(&o))?;
    } else {
        // A blank position is shown quoted ("dtb: \"\": empty FEN"), not as nothing.
        let name = if f.trim().is_empty() {
            format!("{f:?}")
        } else {
            shown(f)
        };
        eprintln!("dtb: {name}: {}", error_line(e));
    }
    Ok(())
}

/// Answer one FEN; false if it failed (the error is printed) or its answer is incomplete (a
/// DTW table it needs is missing from a directory that has DTW tables).
fn answer_probe(
    tb: &Tablebase,
    rules: &Rules,
    f: &str,
    how: Out,
    out: &mut dyn Write,
) -> Result<bool> {
    let json = how.json;
    match probe_one(tb, rules, f, how) {
        Ok(a) => {
            if json {
                writeln!(out, "{}", json_line(&a.json(f)))?;
            } else {
                let mut line = a.text(f);
                if let Some(m) = &a.missing {
                    line.push_str(&format!("  ({m})"));
                    eprintln!("dtb: {}: incomplete answer: {m}", shown(f));
                }
                writeln!(out, "{line}")?;
            }
            // An incomplete answer is a failure of the directory: exit status 1.
            Ok(a.missing.is_none())
        }
        Err(e) => {
            report_failure(f, &e, json, out)?;
            Ok(false)
        }
    }
}

/// Every legal move of one FEN with its value for the mover and the FEN after it, best first
/// (from the WLD tables in a WLD-only directory); false if it failed.
fn answer_moves(
    tb: &Tablebase,
    rules: &Rules,
    f: &str,
    how: Out,
    out: &mut dyn Write,
) -> Result<bool> {
    let json = how.json;
    let ranked = (|| -> Result<_> {
        let pos = fen::parse(f, rules)?;
        let a = probe_one(tb, rules, f, how)?;
        let ranked = if tb.materials(ValueKind::Dtw).is_empty() {
            tb.probe_moves_wld(&pos)?
        } else {
            tb.probe_moves(&pos)?
        };
        let mut all = Vec::new();
        legal_moves(rules, &pos, Counting::Unique, &mut all);
        let row = |r: &dtb_probe::RankedMove, dtc| {
            (
                notation_in(rules, how.notation, &r.mv, &all),
                r.for_mover(),
                fen::write_in(&r.mv.apply_unchecked(&pos), rules, how.notation),
                dtc,
            )
        };
        let rows: Vec<Row> = match how.counter {
            // Under the count rule: its order, each move with its game value too.
            Some(c) => tb
                .probe_moves_dtc(&pos, c)?
                .into_iter()
                .filter_map(|d| {
                    let r = ranked.iter().find(|r| r.mv == d.mv)?;
                    Some(row(r, Some(d)))
                })
                .collect(),
            None => ranked.iter().map(|r| row(r, None)).collect(),
        };
        Ok((a, rows))
    })();
    let (a, rows) = match ranked {
        Ok(r) => r,
        Err(e) => {
            report_failure(f, &e, json, out)?;
            return Ok(false);
        }
    };
    if json {
        let moves: Vec<_> = rows
            .iter()
            .map(|(m, v, after, d)| {
                let mut o =
                    json!({"move": m, "wld": v.wld.to_string(), "dtw": v.plies, "fen": after});
                if let Some(d) = d {
                    // The position after the move, for its side to move (lichess's way).
                    dtc_json(&mut o, &d.after);
                    o["zeroing"] = json!(d.zeroing);
                }
                o
            })
            .collect();
        let mut o = a.json(f);
        o["moves"] = json!(moves);
        writeln!(out, "{}", json_line(&o))?;
    } else {
        writeln!(out, "{}", a.text(f))?;
        let width = rows.iter().map(|(m, _, _, _)| m.len()).max().unwrap_or(0);
        for (m, v, after, d) in &rows {
            let value = match v.plies {
                Some(p) => format!("{} in {}", v.wld, plies(p)),
                None => v.wld.to_string(),
            };
            let rule = d.as_ref().map_or(String::new(), |d| {
                format!(
                    "  [after it: {}{}]",
                    dtc_text(&d.after),
                    if d.zeroing {
                        "; resets the counter"
                    } else {
                        ""
                    }
                )
            });
            writeln!(out, "  {m:<width$}  {value:<16}  {after}{rule}")?;
        }
    }
    Ok(a.missing.is_none())
}

/// One row of `--moves`: the move, its game value for the mover, the FEN after it, and
/// with DTC tables its value under the count rule.
type Row = (
    String,
    dtb_probe::Dtw,
    String,
    Option<dtb_probe::RankedDtcMove>,
);

/// Play and print the best line from one FEN; false if it failed.
fn answer_line(
    tb: &Tablebase,
    rules: &Rules,
    f: &str,
    how: Out,
    out: &mut dyn Write,
) -> Result<bool> {
    let json = how.json;
    if let Some(counter) = how.counter {
        return answer_line_dtc(tb, rules, f, (how, counter), out);
    }
    match play_line(tb, rules, f, how.notation) {
        Ok((steps, cut)) => {
            if json {
                let moves: Vec<_> = steps
                    .iter()
                    .map(|(m, v, after)| {
                        json!({"move": m, "wld": v.wld.as_str(), "dtw": v.plies, "fen": after})
                    })
                    .collect();
                writeln!(out, "{}", json!({"fen": f, "line": moves, "cut": cut}))?;
            } else {
                writeln!(out, "{f}")?;
                for (i, (m, v, after)) in steps.iter().enumerate() {
                    let v = match v.plies {
                        Some(p) => format!("{} in {}", v.wld, plies(p)),
                        None => v.wld.to_string(),
                    };
                    writeln!(out, "{:>4}. {m:<12} {v:<16} {after}", i + 1)?;
                }
                if cut {
                    writeln!(
                        out,
                        "      (a draw: line cut after {DRAW_LINE_PLIES} plies)"
                    )?;
                }
            }
            Ok(true)
        }
        Err(e) => {
            report_failure(f, &e, json, out)?;
            Ok(false)
        }
    }
}

/// `--line` with DTC tables: the line under the count rule from `f` at `counter` (each side
/// plays its best move under the rule, [`Tablebase::probe_moves_dtc`]'s first), until the
/// game ends, the counter reaches the limit (the defender claims the draw), or
/// [`DRAW_LINE_PLIES`] plies of a drawn line; false if it failed.
fn answer_line_dtc(
    tb: &Tablebase,
    rules: &Rules,
    f: &str,
    (how, counter): (Out, u16),
    out: &mut dyn Write,
) -> Result<bool> {
    let line = (|| -> Result<_> {
        let mut pos = fen::parse(f, rules)?;
        let mut c = counter;
        let start = tb.probe_dtc(&pos, c)?;
        let mut steps = Vec::new();
        let end = loop {
            let d = tb.probe_dtc(&pos, c)?;
            if d.result == Wld::Draw && steps.len() >= DRAW_LINE_PLIES {
                break "cut";
            }
            let Some(best) = tb.probe_moves_dtc(&pos, c)?.into_iter().next() else {
                break "game over";
            };
            let mut all = Vec::new();
            legal_moves(rules, &pos, Counting::Unique, &mut all);
            let name = notation_in(rules, how.notation, &best.mv, &all);
            pos = best.mv.apply_unchecked(&pos);
            c = best.after.counter;
            steps.push((name, best, fen::write_in(&pos, rules, how.notation)));
            legal_moves(rules, &pos, Counting::Unique, &mut all);
            if all.is_empty() || pos.pieces(pos.side_to_move()) == 0 {
                break "game over";
            }
            if best.after.limit.is_some_and(|l| c >= l) {
                break "draw claimed by the count rule";
            }
        };
        Ok((start, steps, end))
    })();
    let (start, steps, end) = match line {
        Ok(l) => l,
        Err(e) => {
            report_failure(f, &e, how.json, out)?;
            return Ok(false);
        }
    };
    if how.json {
        let moves: Vec<_> = steps
            .iter()
            .map(|(m, r, after)| {
                let mut o = json!({"move": m, "fen": after, "zeroing": r.zeroing});
                dtc_json(&mut o, &r.after);
                o
            })
            .collect();
        let mut o = json!({"fen": f, "line": moves, "end": end});
        dtc_json(&mut o, &start);
        writeln!(out, "{}", json_line(&o))?;
    } else {
        writeln!(out, "{f}  [count rule: {}]", dtc_text(&start))?;
        for (i, (m, r, after)) in steps.iter().enumerate() {
            let zero = if r.zeroing { ", counter reset" } else { "" };
            writeln!(
                out,
                "{:>4}. {m:<12} counter {:>3}{zero:<15} {after}",
                i + 1,
                r.after.counter
            )?;
        }
        writeln!(out, "      ({end})")?;
    }
    Ok(true)
}

/// Most plies `--line` plays from a drawn position.
const DRAW_LINE_PLIES: usize = 40;

/// One ply of a best line: the move, its value for the mover (as `--moves` gives it: a win in
/// 9 plies counting the move itself; a draw without distance), the FEN after it.
type Step = (String, dtb_probe::Dtw, String);

/// The best line from `f` until the game ends (or [`DRAW_LINE_PLIES`] plies of a draw), and
/// whether it was cut there.
fn play_line(
    tb: &Tablebase,
    rules: &Rules,
    f: &str,
    notation: Notation,
) -> Result<(Vec<Step>, bool)> {
    let mut pos = fen::parse(f, rules)?;
    let mut steps = Vec::new();
    let start = tb.probe_dtw(&pos)?;
    let limit = match start.plies {
        Some(p) => p as usize,
        None => DRAW_LINE_PLIES,
    };
    while steps.len() < limit {
        let Some((m, mut value)) = tb.best_move(&pos)? else {
            break;
        };
        if value.wld == Wld::Draw {
            value.plies = None;
        }
        let mut moves = Vec::new();
        legal_moves(rules, &pos, Counting::Unique, &mut moves);
        let name = notation_in(rules, notation, &m, &moves);
        pos = m.apply_unchecked(&pos);
        steps.push((name, value, fen::write_in(&pos, rules, notation)));
    }
    let cut = start.plies.is_none() && steps.len() == limit;
    Ok((steps, cut))
}

/// What `dtb probe` answers for one FEN.
struct ProbeAnswer {
    wld: String,
    /// Plies to the end (`None`: a draw, or not known, see `missing`).
    dtw: Option<u16>,
    best: Option<String>,
    /// The value under the count rule, where DTC tables are there.
    dtc: Option<dtb_probe::Dtc>,
    /// Why the distance or the best move is not given although the directory holds DTW
    /// tables: the missing table (`None` for a complete answer, and in a WLD-only
    /// directory, where no distance is expected).
    missing: Option<String>,
}

impl ProbeAnswer {
    /// `{"fen", "wld", "dtw", "best_move"}`, with `"missing"` for an incomplete answer.
    fn json(&self, f: &str) -> serde_json::Value {
        let mut o = json!({"fen": f, "wld": self.wld, "dtw": self.dtw, "best_move": self.best});
        if let Some(d) = &self.dtc {
            dtc_json(&mut o, d);
        }
        if let Some(m) = &self.missing {
            o["missing"] = json!(m);
        }
        o
    }

    /// `FEN  win in 9 plies  best 32-27`.
    fn text(&self, f: &str) -> String {
        let mut line = format!("{f}  {}", self.wld);
        if let Some(d) = self.dtw {
            line.push_str(&format!(" in {}", plies(d)));
        }
        if let Some(b) = &self.best {
            line.push_str(&format!("  best {b}"));
        }
        if let Some(d) = &self.dtc {
            line.push_str(&format!("  [count rule: {}]", dtc_text(d)));
        }
        line
    }
}

/// The answer for one FEN. DTW and best move are `None` where the DTW tables are missing;
/// where the directory holds DTW tables but one this position needs is missing, what can be
/// answered is, and `missing` says what is not and why.
fn probe_one(tb: &Tablebase, rules: &Rules, f: &str, how: Out) -> Result<ProbeAnswer> {
    let notation = how.notation;
    let pos = fen::parse(f, rules)?;
    let wld = tb.probe_wld(&pos)?;
    // A directory without any DTW table is a WLD-only build: no distance is expected.
    let has_dtw = !tb.materials(ValueKind::Dtw).is_empty();
    let agree = |d: dtb_probe::Dtw| -> Result<Option<u16>> {
        if d.wld != wld {
            bail!(
                "WLD and DTW tables disagree on this position ({wld} vs {}): run dtb verify",
                d.wld
            );
        }
        Ok(d.plies)
    };
    let mut missing = None;
    let (dtw, best) = match tb.best_move(&pos) {
        Ok(Some((m, d))) => {
            let mut moves = Vec::new();
            legal_moves(rules, &pos, Counting::Unique, &mut moves);
            (agree(d)?, Some(notation_in(rules, notation, &m, &moves)))
        }
        Ok(None) => (Some(0), None),
        Err(
            e @ dtb_probe::ProbeError::MissingTable {
                kind: ValueKind::Dtw,
                ..
            },
        ) if has_dtw => {
            // The best move needs a table the distance of the position itself may not.
            let dtw = match tb.probe_dtw(&pos) {
                Ok(d) => {
                    missing = Some(format!("best move unknown: {e}"));
                    agree(d)?
                }
                Err(
                    e @ dtb_probe::ProbeError::MissingTable {
                        kind: ValueKind::Dtw,
                        ..
                    },
                ) => {
                    missing = Some(format!("distance and best move unknown: {e}"));
                    None
                }
                Err(e) => return Err(e.into()),
            };
            (dtw, None)
        }
        Err(dtb_probe::ProbeError::MissingTable {
            kind: ValueKind::Dtw,
            ..
        }) => (None, None),
        Err(e) => return Err(e.into()),
    };
    // A draw has no distance, unless the game ends here drawn (a blocked side under
    // `blocked = draw` or `majority`): 0 plies, no move.
    let dtw = if wld == Wld::Draw && best.is_some() {
        None
    } else {
        dtw
    };
    let dtc = match how.counter {
        Some(c) => match tb.probe_dtc(&pos, c) {
            Ok(d) if d.category.game_theoretic() != wld => bail!(
                "WLD and DTC tables disagree on this position ({wld} vs {}): run dtb verify",
                d.category
            ),
            Ok(d) => Some(d),
            Err(
                e @ dtb_probe::ProbeError::MissingTable {
                    kind: ValueKind::Dtc,
                    ..
                },
            ) => {
                missing = Some(format!("value under the count rule unknown: {e}"));
                None
            }
            Err(e) => return Err(e.into()),
        },
        None => None,
    };
    Ok(ProbeAnswer {
        wld: wld.to_string(),
        dtw,
        best,
        dtc,
        missing,
    })
}

/// The JSON fields of a DTC value: `category`, `result` (at `counter`), `dtc`, `counter`.
fn dtc_json(o: &mut serde_json::Value, d: &dtb_probe::Dtc) {
    o["category"] = json!(d.category.as_str());
    o["result"] = json!(d.result.as_str());
    o["dtc"] = json!(d.plies);
    o["counter"] = json!(d.counter);
}

/// `cursed-win, 85 plies to conversion (limit 80); at counter 3: draw`.
fn dtc_text(d: &dtb_probe::Dtc) -> String {
    let mut t = d.category.to_string();
    if let Some(p) = d.plies.filter(|_| d.category != dtb_probe::Category::Draw) {
        t.push_str(&format!(", {} to conversion", plies(p)));
    }
    match d.limit {
        Some(l) => t.push_str(&format!(" (limit {})", plies(l))),
        None => t.push_str(" (no count limit here)"),
    }
    if d.counter != 0 {
        t.push_str(&format!("; at counter {}: {}", d.counter, d.result));
    }
    t
}
