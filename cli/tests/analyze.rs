//! `dtb analyze` (issue 36) on PDN files written here, checked against `dtb probe`.
//!
//! - 1,000 games of random legal play from random setup positions inside English 2-4 piece
//!   tables (a splitmix64 stream, the same every run), written with the PDN a real file
//!   has (tags, numbered moves, comments, variations, glyphs, full capture paths, every
//!   result): every position's value in `--json` is `dtb probe`'s for its FEN, the marked
//!   moves are exactly those after which the mover's result is worse than before, and their
//!   best move is `dtb probe`'s; the PDN output reads back with the same tags and moves.
//! - A game with an illegal move between good ones, and one with a syntax error: each is
//!   reported with its game number, move number and legal moves (or line), exit status 1,
//!   and the other games are analysed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use dtb_probe::internal::rng::splitmix64;
use dtb_probe::movegen::{legal_moves, pdn_in, Counting, Move};
use dtb_probe::{fen, pdn, Color, Position, Rules};
use serde_json::Value;

const DTB: &str = env!("CARGO_BIN_EXE_dtb");

fn dtb(args: &[&str]) -> Output {
    Command::new(DTB).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// English 2-4 piece tables, built once for the tests of this file.
fn tables() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("analyze-english-4");
        let out = dtb(&[
            "gen",
            "--variant",
            "english",
            "--pieces",
            "4",
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        dir
    })
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        (splitmix64(&mut self.0) % n as u64) as usize
    }
}

/// A random legal position of 2-4 pieces (each side at least one) whose side to move has a
/// move, as FEN.
fn random_setup(rng: &mut Rng, rules: &Rules) -> (String, Position) {
    loop {
        let total = 2 + rng.below(3);
        let white = 1 + rng.below(total - 1);
        let mut squares: Vec<usize> = Vec::new();
        while squares.len() < total {
            let s = 1 + rng.below(32);
            if !squares.contains(&s) {
                squares.push(s);
            }
        }
        let list = |sq: &[usize], rng: &mut Rng| -> String {
            sq.iter()
                .map(|s| {
                    if rng.below(2) == 0 {
                        format!("K{s}")
                    } else {
                        s.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        let side = if rng.below(2) == 0 { 'W' } else { 'B' };
        let w = list(&squares[..white], rng);
        let b = list(&squares[white..], rng);
        let f = format!("{side}:W{w}:B{b}");
        let Ok(pos) = fen::parse(&f, rules) else {
            continue; // a man on its crowning row
        };
        let mut moves = Vec::new();
        legal_moves(rules, &pos, Counting::Unique, &mut moves);
        if !moves.is_empty() {
            return (f, pos);
        }
    }
}

/// One generated game: its PDN text, and the FEN before each move and after the last.
struct Generated {
    pdn: String,
    fens: Vec<String>,
    moves: Vec<String>,
}

const RESULTS: [&str; 8] = ["1-0", "0-1", "1/2-1/2", "2-0", "0-2", "1-1", "0-0", "*"];

/// A game of random legal play from a random setup, written as PDN with numbered moves
/// (Black moves first in English: its moves are `N.`, White's `N...`), and now and then a
/// comment, a variation (with text that is no legal move: it must be skipped), a glyph, a
/// strength mark and a capture's full path.
fn random_game(rng: &mut Rng, rules: &Rules, number: usize) -> Generated {
    let (start, mut pos) = random_setup(rng, rules);
    let mut pdn = format!("[Event \"random {number}\"]\n");
    if rng.below(2) == 0 {
        pdn.push_str("[GameType \"21\"]\n");
    }
    pdn.push_str(&format!("[FEN \"{start}\"]\n"));
    let plies = 1 + rng.below(40);
    let mut fens = vec![fen::write_for(&pos, rules)];
    let mut moves = Vec::new();
    let mut number = 1;
    let mut words: Vec<String> = Vec::new();
    let mut need_label = true;
    let mut all: Vec<Move> = Vec::new();
    for _ in 0..plies {
        legal_moves(rules, &pos, Counting::Unique, &mut all);
        if all.is_empty() {
            break;
        }
        let m = all[rng.below(all.len())];
        let written = if m.path().len() > 1 && rng.below(2) == 0 {
            m.to_pdn(true)
        } else {
            pdn_in(&m, &all)
        };
        let black = pos.side_to_move() == Color::Black;
        if black {
            words.push(format!("{number}."));
        } else if need_label || rng.below(4) == 0 {
            words.push(format!("{number}..."));
        }
        let mark = ["", "", "", "!", "?", "!?"][rng.below(6)];
        words.push(format!("{written}{mark}"));
        need_label = false;
        match rng.below(10) {
            0 => {
                words.push(format!("{{comment {number} (with parentheses)}}"));
                need_label = true;
            }
            1 => {
                words.push(format!("({number}... 1-2 {{x}} (3x4) 99-98)"));
                need_label = true;
            }
            2 => words.push("$1".to_string()),
            _ => {}
        }
        if !black {
            number += 1;
        }
        pos = m.apply(rules, &pos).unwrap();
        fens.push(fen::write_for(&pos, rules));
        moves.push(written);
    }
    words.push(RESULTS[rng.below(RESULTS.len())].to_string());
    // Lines of about 60 characters, as PDN writers wrap them.
    let mut line = String::new();
    for w in words {
        if line.len() > 60 {
            pdn.push_str(&line);
            pdn.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&w);
    }
    pdn.push_str(&line);
    pdn.push_str("\n\n");
    Generated { pdn, fens, moves }
}

/// `dtb probe --json`'s answers for `fens` (one batch run), by FEN.
fn probe_all(dir: &Path, fens: &[String], scratch: &Path) -> HashMap<String, Value> {
    let batch = scratch.join("fens.txt");
    std::fs::write(&batch, fens.join("\n")).unwrap();
    let out = dtb(&[
        "probe",
        "--variant",
        "english",
        "--dir",
        dir.to_str().unwrap(),
        "--json",
        "--batch",
        batch.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["fen"].as_str().unwrap().to_string(), v)
        })
        .collect()
}

/// The outcome a value for the side to move, reversed for the other side.
fn reversed(wld: &str) -> &'static str {
    match wld {
        "win" => "loss",
        "loss" => "win",
        "draw" => "draw",
        other => panic!("not an outcome: {other}"),
    }
}

#[test]
fn a_thousand_random_games_are_valued_as_dtb_probe_values_their_positions() {
    let dir = tables();
    let rules = Rules::ENGLISH;
    let scratch = tempfile::tempdir().unwrap();
    let mut rng = Rng(36);
    let games: Vec<Generated> = (1..=1000)
        .map(|n| random_game(&mut rng, &rules, n))
        .collect();
    let file = scratch.path().join("games.pdn");
    std::fs::write(
        &file,
        games.iter().map(|g| g.pdn.as_str()).collect::<String>(),
    )
    .unwrap();
    // The file README's games-a-second figure is measured on.
    if let Some(keep) = std::env::var_os("DTB_ANALYZE_GAMES") {
        std::fs::copy(&file, keep).unwrap();
    }
    let out = dtb(&[
        "analyze",
        "--dir",
        dir.to_str().unwrap(),
        "--json",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1001);
    let all_fens: Vec<String> = games.iter().flat_map(|g| g.fens.clone()).collect();
    let probed = probe_all(dir, &all_fens, scratch.path());
    // A value of `dtb analyze --json` ({"side_to_move", "wld", "dtw"}) is `dtb probe`'s for
    // the FEN, whose side to move it names.
    let check = |v: &Value, f: &str, what: &str| {
        let p = &probed[f];
        let side = if f.starts_with('W') { "white" } else { "black" };
        assert_eq!(v["side_to_move"], side, "{what} {f}");
        assert_eq!(v["wld"], p["wld"], "{what} {f}");
        assert_eq!(v["dtw"], p["dtw"], "{what} {f}");
    };
    let (mut plies, mut changed, mut kept) = (0, 0, 0);
    let mut kinds: HashMap<String, usize> = HashMap::new();
    for (g, j) in games.iter().zip(&lines) {
        let n = j["game"].as_u64().unwrap();
        assert_eq!(j["error"], Value::Null, "game {n}");
        let ps = j["plies"].as_array().unwrap();
        assert_eq!(ps.len(), g.moves.len(), "game {n}");
        for (i, p) in ps.iter().enumerate() {
            let what = format!("game {n} ply {}", i + 1);
            assert_eq!(p["move"], g.moves[i].as_str(), "{what}");
            assert_eq!(p["fen_before"], g.fens[i].as_str(), "{what}");
            check(&p["value_before"], &g.fens[i], &format!("{what} before"));
            check(&p["value_after"], &g.fens[i + 1], &format!("{what} after"));
            let before = p["value_before"]["wld"].as_str().unwrap();
            let after = reversed(p["value_after"]["wld"].as_str().unwrap());
            let worse = matches!((before, after), ("win", "draw" | "loss") | ("draw", "loss"));
            assert_eq!(p["changed_result"], worse, "{what}");
            plies += 1;
            if worse {
                changed += 1;
                *kinds.entry(format!("{before} to {after}")).or_default() += 1;
                let best = &probed[&g.fens[i]]["best_move"];
                assert_eq!(&p["best_move"], best, "{what}");
                // The best move keeps the value: the position after it is the mover's
                // result reversed, one ply nearer the end.
                let b = &p["best_value_after"];
                assert_eq!(b["wld"], reversed(before), "{what}");
                let d = p["value_before"]["dtw"].as_u64().map(|d| d - 1);
                assert_eq!(b["dtw"].as_u64(), d, "{what}");
                assert_eq!(
                    p["change"],
                    format!("{before} to {after}").as_str(),
                    "{what}"
                );
            } else {
                kept += 1;
                assert_eq!(p["best_move"], Value::Null, "{what}");
                assert_eq!(p["change"], Value::Null, "{what}");
            }
        }
    }
    // Random play throws results away often (902 times here), and keeps them more often;
    // every kind of change is there.
    assert!(
        changed > 500 && kept > 5000,
        "{changed} changed, {kept} kept"
    );
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    let summary = &lines[1000]["summary"];
    assert_eq!(summary["games"], 1000);
    assert_eq!(summary["errors"], 0);
    assert_eq!(summary["plies"], plies);
    assert_eq!(summary["valued_plies"], plies);
    assert_eq!(summary["changed"], changed);
    assert!(summary["games_per_second"].as_f64().unwrap() > 0.0);
    assert!(
        text(&out.stderr).contains("games/s"),
        "{}",
        text(&out.stderr)
    );

    // The PDN output keeps every game's tags and moves, and reads back.
    let out = dtb(&[
        "analyze",
        "--dir",
        dir.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let pdn_out = text(&out.stdout);
    let read: Vec<pdn::Game> = pdn::games(&pdn_out).map(Result::unwrap).collect();
    let original: Vec<pdn::Game> = pdn::games(&std::fs::read_to_string(&file).unwrap())
        .map(Result::unwrap)
        .collect();
    assert_eq!(read.len(), 1000);
    let mut marked = 0;
    for (r, o) in read.iter().zip(&original) {
        assert_eq!(r.tags, o.tags);
        assert_eq!(r.result, o.result);
        let rm: Vec<(&str, u32, bool)> = r
            .moves
            .iter()
            .map(|m| (m.text.as_str(), m.number, m.second))
            .collect();
        let om: Vec<(&str, u32, bool)> = o
            .moves
            .iter()
            .map(|m| (m.text.as_str(), m.number, m.second))
            .collect();
        assert_eq!(rm, om, "game {}", o.number);
        for m in &r.moves {
            let dtb_comment = m.comments.iter().find(|c| c.starts_with("dtb: ")).unwrap();
            marked += usize::from(dtb_comment.contains(", best "));
        }
    }
    assert_eq!(marked, changed);
}

#[test]
fn an_illegal_move_and_a_syntax_error_are_reported_and_the_other_games_analysed() {
    let dir = tables();
    let rules = Rules::ENGLISH;
    let mut rng = Rng(7);
    let good: Vec<Generated> = (0..2).map(|n| random_game(&mut rng, &rules, n)).collect();
    // Game 2: two good moves, then a man moved backwards.
    let bad = "[Event \"bad\"]\n[FEN \"B:W18,K30:B6,K1\"]\n1. 6-10 30-26\n2. 10-6 *\n\n";
    let broken = "[Event \"broken\"]\n1. 11-15 (1. 9-14\n\n";
    let file_text = format!("{}{bad}{}{broken}", good[0].pdn, good[1].pdn);
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("games.pdn");
    std::fs::write(&file, &file_text).unwrap();
    let line_of = |t: &str| file_text.lines().position(|l| l.contains(t)).unwrap() + 1;
    let (bad_line, broken_line) = (line_of("2. 10-6"), line_of("(1. 9-14"));

    // The legal moves after 1. 6-10 30-26.
    let mut pos = fen::parse("B:W18,K30:B6,K1", &rules).unwrap();
    for m in ["6-10", "30-26"] {
        pos = dtb_probe::movegen::parse_move(&rules, &pos, m)
            .unwrap()
            .apply(&rules, &pos)
            .unwrap();
    }
    let mut all = Vec::new();
    legal_moves(&rules, &pos, Counting::Unique, &mut all);
    let legal: Vec<String> = all.iter().map(|m| pdn_in(m, &all)).collect();
    assert!(legal.len() > 3 && !legal.contains(&"10-6".to_string()));

    let out = dtb(&[
        "analyze",
        "--dir",
        dir.to_str().unwrap(),
        "--json",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let expected = format!(
        "dtb: game 2 (line {bad_line}): move 2. \"10-6\": 10-6 is not a legal move here; legal \
         moves: {}\n",
        legal.join(", ")
    );
    assert!(stderr.contains(&expected), "{stderr}\nexpected {expected}");
    let expected =
        format!("dtb: game 4 (line {broken_line}): variation opened with '(' is never closed\n");
    assert!(stderr.contains(&expected), "{stderr}\nexpected {expected}");
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    for (j, g) in [(&lines[0], &good[0]), (&lines[2], &good[1])] {
        assert_eq!(j["error"], Value::Null);
        assert_eq!(j["plies"].as_array().unwrap().len(), g.moves.len());
        assert!(j["plies"][0]["value_before"]["wld"].is_string());
    }
    let e = &lines[1]["error"];
    assert_eq!(lines[1]["game"], 2);
    assert_eq!(e["kind"], "illegal_move");
    assert_eq!(e["move_number"], "2.");
    assert_eq!(e["move"], "10-6");
    assert_eq!(e["line"], bad_line);
    assert_eq!(e["legal_moves"], serde_json::json!(legal));
    // The plies before it are valued.
    assert_eq!(lines[1]["plies"].as_array().unwrap().len(), 2);
    assert_eq!(lines[3]["game"], 4);
    assert_eq!(lines[3]["error"]["kind"], "syntax");
    assert_eq!(lines[4]["summary"]["errors"], 2);
    assert_eq!(lines[4]["summary"]["games"], 4);

    // In PDN, the bad game says where its analysis stops, and keeps its moves.
    let out = dtb(&[
        "analyze",
        "--dir",
        dir.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let games: Vec<pdn::Game> = pdn::games(&text(&out.stdout)).map(Result::unwrap).collect();
    assert_eq!(games.len(), 3);
    let g = &games[1];
    assert_eq!(g.moves.len(), 3);
    let last = g.moves[1].comments.last().unwrap();
    assert!(
        last.starts_with("dtb: not analysed from here: move 2."),
        "{last}"
    );
}

#[test]
fn a_missing_file_and_a_game_type_of_other_rules_are_said_in_words() {
    let dir = tables();
    let out = dtb(&[
        "analyze",
        "--dir",
        dir.to_str().unwrap(),
        "/nonexistent/games.pdn",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("dtb: error: cannot read /nonexistent/games.pdn"));
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("games.pdn");
    std::fs::write(
        &file,
        "[GameType \"20\"]\n[FEN \"W:W32:B1\"]\n1. 32-27 *\n[GameType \"21,B,8,8,N1,0\"]\n\
         [FEN \"W:WK32:BK26\"]\n1... 32-27 *\n",
    )
    .unwrap();
    let out = dtb(&[
        "analyze",
        "--dir",
        dir.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr).lines().next().unwrap(),
        "dtb: game 1 (line 1): [GameType \"20\"] is international, but the tables are english \
         (GameType 21): pass the game's variant"
    );
    assert!(
        text(&out.stdout).contains("1... 32-27 {dtb: White wins"),
        "{}",
        text(&out.stdout)
    );
}

/// A Russian game is answered in its players' notation: the best move instead of a move that
/// threw the win away, and the legal moves of an illegal one, are algebraic (`c1-d2`), as
/// Russian players write them and as the game was written.
#[test]
fn a_russian_game_is_answered_in_algebraic_notation() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("analyze-russian-3");
    let out = dtb(&[
        "gen",
        "--variant",
        "russian",
        "--pieces",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rules = Rules::RUSSIAN;
    // Every move of a position whose side to move wins: a move that throws the win away
    // must be answered with an algebraic best move.
    let start = "W:Wc3,e3:Bh6"; // e3-d4 draws; best e3-f4
    let pos = fen::parse(start, &rules).unwrap();
    let mut moves = Vec::new();
    legal_moves(&rules, &pos, Counting::Unique, &mut moves);
    let mut marked = 0;
    for m in &moves {
        let written = m.to_notation(&rules, fen::Notation::Algebraic, false);
        let pdn_text = format!("[GameType \"25\"]\n[FEN \"{start}\"]\n1. {written} *\n");
        let file = dir.join("game.pdn");
        std::fs::write(&file, pdn_text).unwrap();
        let r = dtb(&[
            "analyze",
            "--variant",
            "russian",
            "--dir",
            dir.to_str().unwrap(),
            "--json",
            file.to_str().unwrap(),
        ]);
        let out = text(&r.stdout);
        let game: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        let ply = &game["plies"][0];
        if ply["changed_result"] == Value::Bool(true) {
            marked += 1;
            let best = ply["best_move"].as_str().unwrap();
            assert!(
                best.len() == 5
                    && best.as_bytes()[2] == b'-'
                    && best.as_bytes()[0].is_ascii_lowercase(),
                "{best}"
            );
        }
    }
    assert!(marked > 0, "no move of {start} throws the win away");
    // An illegal move lists the legal ones algebraically.
    let file = dir.join("illegal.pdn");
    std::fs::write(&file, format!("[FEN \"{start}\"]\n1. c3-c4 *\n")).unwrap();
    let r = dtb(&[
        "analyze",
        "--variant",
        "russian",
        "--dir",
        dir.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    let err = text(&r.stderr);
    assert!(
        err.contains("legal moves: ") && err.contains("c3-b4"),
        "{err}"
    );
}
