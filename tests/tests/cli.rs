//! The `dtb` command-line contract that scripts rely on: probe's JSON and text output, batch
//! input, info, perft, gen's resume and determinism, and errors (one line, non-zero exit,
//! never a panic).
//!
//! The binary: `cargo test -p dtb-tests` does not build other packages' binaries, and
//! `CARGO_BIN_EXE_dtb` exists only in dtb-cli's own integration tests, so
//! `dtb_tests::dtb_binary()` builds it once per test process (`cargo build -p dtb-cli --bin
//! dtb` for the running profile) and returns `target/<profile>/dtb`, where
//! `Command::cargo_bin("dtb")` then finds it too (checked below).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::english4;
use dtb_probe::movegen::parse_move;
use dtb_probe::{fen, Rules, Tablebase, Wld};
use dtb_tests::{dtb_binary, read_tsv};
use serde_json::Value;

const E: Rules = Rules::ENGLISH;

fn dtb() -> Command {
    Command::new(dtb_binary())
}

fn stdout_of(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 stdout")
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("UTF-8 stderr")
}

fn json_lines(text: &str) -> Vec<serde_json::Map<String, Value>> {
    text.lines()
        .map(|l| match serde_json::from_str::<Value>(l) {
            Ok(Value::Object(o)) => o,
            other => panic!("not a JSON object line: {l:?} ({other:?})"),
        })
        .collect()
}

fn keys(o: &serde_json::Map<String, Value>) -> BTreeSet<&str> {
    o.keys().map(String::as_str).collect()
}

fn set(k: &[&'static str]) -> BTreeSet<&'static str> {
    k.iter().copied().collect()
}

fn dir_arg() -> &'static str {
    english4().to_str().expect("UTF-8 temp path")
}

/// `Command::cargo_bin("dtb")` (assert_cmd's lookup of `target/<profile>/dtb`) finds the
/// binary `dtb_binary()` built.
#[test]
fn cargo_bin_finds_the_built_binary() {
    let bin = dtb_binary();
    if std::env::var_os("DTB_BIN").is_none() {
        assert_eq!(assert_cmd::cargo::cargo_bin("dtb"), bin);
    }
    let out = Command::cargo_bin("dtb")
        .expect("cargo_bin finds dtb")
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(stdout_of(&out).trim(), "dtb 0.1.0");
}

// ---------------------------------------------------------------------------------------
// probe
// ---------------------------------------------------------------------------------------

/// `dtb probe --json` on all 100 sample rows in one call: one object per line, in order, with
/// exactly the keys fen, wld, dtw, best_move; the published value and distance; a best move
/// that is legal and leads one ply down.
#[test]
fn probe_json_answers_the_sample() {
    let rows = read_tsv("english-4piece-sample.tsv");
    let fens: Vec<&str> = rows.iter().map(|r| r["fen"].as_str()).collect();
    let out = dtb()
        .args([
            "probe",
            "--variant",
            "english",
            "--dir",
            dir_arg(),
            "--json",
        ])
        .args(&fens)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let lines = json_lines(&stdout_of(&out));
    assert_eq!(lines.len(), rows.len());
    let tb = Tablebase::open(english4(), E).unwrap();
    for (o, row) in lines.iter().zip(&rows) {
        let f = &row["fen"];
        assert_eq!(keys(o), set(&["fen", "wld", "dtw", "best_move"]), "{f}");
        assert_eq!(o["fen"], Value::from(f.as_str()));
        assert_eq!(o["wld"], Value::from(row["outcome"].as_str()), "{f}");
        let plies: u64 = row["plies"].parse().unwrap();
        if row["outcome"] == "draw" {
            assert_eq!(o["dtw"], Value::Null, "{f}");
        } else {
            assert_eq!(o["dtw"], Value::from(plies), "{f}");
        }
        let best = o["best_move"]
            .as_str()
            .unwrap_or_else(|| panic!("{f}: best_move"));
        let pos = fen::parse(f, &E).unwrap();
        let m = parse_move(&E, &pos, best).unwrap_or_else(|e| panic!("{f}: {best}: {e}"));
        let child = tb.probe_dtw(&m.apply(&E, &pos).unwrap()).unwrap();
        match row["outcome"].as_str() {
            "draw" => assert_eq!(child.wld, Wld::Draw, "{f} {best}"),
            _ => assert_eq!(u64::from(child.plies.unwrap()) + 1, plies, "{f} {best}"),
        }
    }
}

/// A bad FEN and a position beyond the tables among good ones: `{"fen", "error"}` for those,
/// the others still answered in order, exit status 1.
#[test]
fn probe_json_errors_are_objects_and_exit_1() {
    let fens = [
        "W:WK32:BK26",
        "W:W33:B1",
        "B:WK32:BK26",
        "nonsense",
        "W:WK1,K2,K3:BK30,K31", // 5 pieces, no capture: beyond a 4-piece build
        "W:W:B",                // the empty board: game over
        "W:WK2:BK21",
    ];
    let out = dtb()
        .args(["probe", "--dir", dir_arg(), "--json"])
        .args(fens)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(!stderr_of(&out).contains("panicked"));
    let lines = json_lines(&stdout_of(&out));
    assert_eq!(lines.len(), fens.len());
    for (o, f) in lines.iter().zip(fens) {
        assert_eq!(o["fen"], Value::from(f));
    }
    let err = |i: usize| {
        assert_eq!(
            keys(&lines[i]),
            set(&["fen", "error", "kind"]),
            "{}",
            fens[i]
        );
        lines[i]["error"].as_str().unwrap().to_string()
    };
    assert!(err(1).contains("33"), "{}", err(1));
    assert!(err(3).contains("fields"), "{}", err(3));
    assert!(
        err(4).contains("table") && err(4).contains("5 pieces"),
        "{}",
        err(4)
    );
    assert!(err(5).contains("over"), "{}", err(5));
    for (i, wld, dtw) in [(0, "win", Some(9)), (2, "draw", None), (6, "win", Some(11))] {
        assert_eq!(keys(&lines[i]), set(&["fen", "wld", "dtw", "best_move"]));
        assert_eq!(lines[i]["wld"], Value::from(wld), "{}", fens[i]);
        assert_eq!(
            lines[i]["dtw"],
            dtw.map_or(Value::Null, Value::from),
            "{}",
            fens[i]
        );
    }
    assert_eq!(lines[0]["best_move"], Value::from("32-27"));
}

/// `--batch FILE` and `--batch -` read one FEN per line (blank lines and surrounding spaces
/// ignored) and answer exactly as the same FENs given as arguments.
#[test]
fn probe_batch_file_and_stdin() {
    let rows = read_tsv("english-4piece-sample.tsv");
    let fens: Vec<&str> = rows.iter().take(30).map(|r| r["fen"].as_str()).collect();
    let by_args = dtb()
        .args(["probe", "--dir", dir_arg(), "--json"])
        .args(&fens)
        .output()
        .unwrap();
    assert!(by_args.status.success());
    let expected = stdout_of(&by_args);
    assert_eq!(expected.lines().count(), 30);

    let mut text = String::new();
    for (i, f) in fens.iter().enumerate() {
        if i % 7 == 0 {
            text.push('\n');
        }
        text.push_str(&format!("  {f} \n"));
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("fens.txt");
    std::fs::write(&file, &text).unwrap();
    let from_file = dtb()
        .args(["probe", "--dir", dir_arg(), "--json", "--batch"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(from_file.status.success(), "{}", stderr_of(&from_file));
    assert_eq!(stdout_of(&from_file), expected);

    let from_stdin = dtb()
        .args(["probe", "--dir", dir_arg(), "--json", "--batch", "-"])
        .write_stdin(text.clone())
        .output()
        .unwrap();
    assert!(from_stdin.status.success(), "{}", stderr_of(&from_stdin));
    assert_eq!(stdout_of(&from_stdin), expected);

    // A bad line in a batch: answered as an error, the rest still answered, exit 1.
    let bad = dtb()
        .args(["probe", "--dir", dir_arg(), "--json", "--batch", "-"])
        .write_stdin(format!("{}\nW:W0:B5\n{}\n", fens[0], fens[1]))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    let lines = json_lines(&stdout_of(&bad));
    assert_eq!(lines.len(), 3);
    assert!(lines[1].contains_key("error"));
    assert!(lines[0].contains_key("wld") && lines[2].contains_key("wld"));
}

/// Text output: `FEN  win in 9 plies  best 32-27`, a draw without distance, a finished game
/// with 0 plies and no move; errors go to stderr as one line each, exit 1.
#[test]
fn probe_text_output() {
    let out = dtb()
        .args(["probe", "--dir", dir_arg()])
        .args(["W:WK32:BK26", "B:WK32:BK26", "W:W:B5", "B:W8,K16:B3,10"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[0], "W:WK32:BK26  win in 9 plies  best 32-27");
    let draw_move = lines[1]
        .strip_prefix("B:WK32:BK26  draw  best ")
        .unwrap_or_else(|| panic!("{:?}", lines[1]));
    let pos = fen::parse("B:WK32:BK26", &E).unwrap();
    let m = parse_move(&E, &pos, draw_move).unwrap();
    let tb = Tablebase::open(english4(), E).unwrap();
    assert_eq!(
        tb.probe_wld(&m.apply(&E, &pos).unwrap()).unwrap(),
        Wld::Draw
    );
    assert_eq!(lines[2], "W:W:B5  loss in 0 plies");
    assert_eq!(lines[3], "B:W8,K16:B3,10  win in 1 ply  best 3x19");

    let bad = dtb()
        .args(["probe", "--dir", dir_arg(), "W:WK32:BK26", "W:W3:B10"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(stdout_of(&bad), "W:WK32:BK26  win in 9 plies  best 32-27\n");
    let err = stderr_of(&bad);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("dtb: W:W3:B10: ") && err.contains("crowning row"),
        "{err}"
    );
}

/// Issue 36: a finished game is answered one way, as a value, whether the side to move is
/// blocked (`W:W29:B25,22`) or has no pieces (`W:W:B25,22`): a loss in 0 plies with no best
/// move and no moves. The side to move facing no pieces (`W:W18:B`, `B:W:B25,22`) has won, in
/// 0 plies; `--line` prints the FEN and no step for any of them, and the exit status is 0.
#[test]
fn probe_answers_no_pieces_as_it_answers_a_blocked_side() {
    let fens = ["W:W29:B25,22", "W:W:B25,22", "W:W18:B", "B:W:B25,22"];
    let expect = ["loss", "loss", "win", "win"];
    let out = dtb()
        .args(["probe", "--dir", dir_arg(), "--json", "--moves"])
        .args(fens)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let lines = json_lines(&stdout_of(&out));
    assert_eq!(lines.len(), fens.len());
    for ((o, f), wld) in lines.iter().zip(fens).zip(expect) {
        assert_eq!(o["fen"], Value::from(f));
        assert_eq!(o["wld"], Value::from(wld), "{f}: {o:?}");
        assert_eq!(o["dtw"], Value::from(0), "{f}: {o:?}");
        assert_eq!(o["best_move"], Value::Null, "{f}: {o:?}");
        assert_eq!(o["moves"], Value::Array(vec![]), "{f}: {o:?}");
    }
    let text = dtb()
        .args(["probe", "--dir", dir_arg(), "--line"])
        .args(fens)
        .output()
        .unwrap();
    assert!(text.status.success(), "{}", stderr_of(&text));
    assert_eq!(
        stdout_of(&text),
        "W:W29:B25,22\nW:W:B25,22\nW:W18:B\nB:W:B25,22\n"
    );
    let text = dtb()
        .args(["probe", "--dir", dir_arg()])
        .args(fens)
        .output()
        .unwrap();
    assert!(text.status.success(), "{}", stderr_of(&text));
    assert_eq!(
        stdout_of(&text),
        "W:W29:B25,22  loss in 0 plies\nW:W:B25,22  loss in 0 plies\n\
         W:W18:B  win in 0 plies\nB:W:B25,22  win in 0 plies\n"
    );
}

/// Issue 22 (1): a directory with DTW tables that lacks one a position needs does not answer
/// like a WLD-only build. With `english-0110.dtw` removed, `W:W5:B2` (its best move 5-1
/// crowns into 0110) prints `W:W5:B2  win in 11 plies  (best move unknown: no dtw table for
/// slice 0110 ...: a move from the probed position leads there)`, says so on stderr and exits
/// 1; `--json` gives `"dtw": 11, "best_move": null` and a `"missing"` field naming 0110; a
/// position that needs nothing missing (`W:WK32:BK26`) keeps its usual four keys. With
/// `english-1010.dtw` removed too, the distance itself is missing and said so.
#[test]
fn probe_says_what_a_missing_dtw_table_leaves_out() {
    let tmp = tempfile::tempdir().unwrap();
    copy_tables(english4(), tmp.path());
    std::fs::remove_file(tmp.path().join("english-0110.dtw")).unwrap();
    let dir = tmp.path().to_str().unwrap();
    let out = dtb()
        .args(["probe", "--variant", "english", "--dir", dir, "W:W5:B2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    assert!(
        text.starts_with(
            "W:W5:B2  win in 11 plies  (best move unknown: no dtw table for slice 0110 (2 pieces)"
        ),
        "{text}"
    );
    assert!(
        text.trim_end()
            .ends_with("a move from the probed position leads there)"),
        "{text}"
    );
    assert!(
        stderr_of(&out).contains("incomplete answer"),
        "{}",
        stderr_of(&out)
    );

    let out = dtb()
        .args(["probe", "--dir", dir, "--json", "W:W5:B2", "W:WK32:BK26"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&stdout_of(&out));
    assert_eq!(lines.len(), 2);
    assert_eq!(
        keys(&lines[0]),
        set(&["fen", "wld", "dtw", "best_move", "missing"])
    );
    assert_eq!(lines[0]["wld"], Value::from("win"));
    assert_eq!(lines[0]["dtw"], Value::from(11));
    assert_eq!(lines[0]["best_move"], Value::Null);
    let why = lines[0]["missing"].as_str().unwrap();
    assert!(why.contains("no dtw table for slice 0110"), "{why}");
    assert_eq!(keys(&lines[1]), set(&["fen", "wld", "dtw", "best_move"]));
    assert_eq!(lines[1]["dtw"], Value::from(9));

    std::fs::remove_file(tmp.path().join("english-1010.dtw")).unwrap();
    let out = dtb()
        .args(["probe", "--dir", dir, "--json", "W:W5:B2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&stdout_of(&out));
    assert_eq!(lines[0]["wld"], Value::from("win"));
    assert_eq!(lines[0]["dtw"], Value::Null);
    let why = lines[0]["missing"].as_str().unwrap();
    assert!(
        why.starts_with("distance and best move unknown: no dtw table for slice 1010"),
        "{why}"
    );
}

// ---------------------------------------------------------------------------------------
// info
// ---------------------------------------------------------------------------------------

/// `dtb info --json`: one object per table file with the keys file, variant, slice, kind,
/// format_version, positions, wins, losses, draws, max_plies, bytes, bits_per_position; the WLD (and DTW)
/// positions and counts sum to the published 2-4 piece White-to-move totals.
#[test]
fn info_json_one_object_per_table() {
    let out = dtb()
        .args(["info", "--dir", dir_arg(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let lines = json_lines(&stdout_of(&out));
    assert_eq!(lines.len(), 46, "23 slices, WLD and DTW");
    let want_keys = set(&[
        "file",
        "variant",
        "slice",
        "kind",
        "format_version",
        "positions",
        "wins",
        "losses",
        "draws",
        "max_plies",
        "bytes",
        "bits_per_position",
        "block_len",
        "checksum",
    ]);
    let mut totals: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    let mut max_plies: BTreeMap<String, u64> = BTreeMap::new();
    for o in &lines {
        assert_eq!(keys(o), want_keys);
        let kind = o["kind"].as_str().unwrap().to_string();
        let slice = o["slice"].as_str().unwrap();
        let file = o["file"].as_str().unwrap();
        assert_eq!(file, format!("english-{slice}.{kind}"));
        assert_eq!(o["variant"], Value::from("english"));
        // A full build writes format version 1 (version 3 is for WLD-only builds).
        assert_eq!(o["format_version"], Value::from(1), "{file}");
        // The default block lengths: 65,536 positions in WLD files, 16,384 in DTW files.
        let want_block = if kind == "wld" { 65_536 } else { 16_384 };
        assert_eq!(o["block_len"], Value::from(want_block), "{file}");
        let n = |k: &str| o[k].as_u64().unwrap_or_else(|| panic!("{file}: {k}"));
        assert_eq!(
            n("wins") + n("losses") + n("draws"),
            n("positions"),
            "{file}"
        );
        let on_disk = std::fs::metadata(english4().join(file)).unwrap().len();
        assert_eq!(n("bytes"), on_disk, "{file}");
        let bits = o["bits_per_position"].as_f64().unwrap();
        let want_bits = on_disk as f64 * 8.0 / n("positions") as f64;
        assert!(
            (bits - want_bits).abs() < 1e-9 * want_bits.max(1.0),
            "{file}"
        );
        let t = totals.entry(kind.clone()).or_default();
        for (k, key) in ["positions", "wins", "losses", "draws"].iter().enumerate() {
            t[k] += n(key);
        }
        let mp = max_plies.entry(kind).or_default();
        *mp = (*mp).max(n("max_plies"));
        if slice == "0101" {
            assert_eq!(
                n("positions"),
                992,
                "symmetric slice stores White to move only"
            );
            assert_eq!(n("max_plies"), 11);
        }
        if slice == "0110" {
            // Black man on 28 squares, White king on the 31 others; both sides stored.
            assert_eq!(
                n("positions"),
                2 * 28 * 31,
                "asymmetric slice stores both sides"
            );
        }
    }
    for kind in ["wld", "dtw"] {
        assert_eq!(
            totals[kind],
            [6_408_836, 2_675_270, 2_004_797, 1_728_769],
            "{kind}"
        );
    }
    assert_eq!(max_plies["dtw"], 109);

    // Text mode ends with the totals line.
    let text = dtb().args(["info", "--dir", dir_arg()]).output().unwrap();
    assert!(text.status.success());
    let t = stdout_of(&text);
    assert_eq!(t.lines().count(), 47);
    let last = t.lines().last().unwrap();
    assert!(
        last.starts_with("total: WLD 6408836 positions ") && last.contains("DTW 6408836 positions"),
        "{last}"
    );
}

// ---------------------------------------------------------------------------------------
// perft
// ---------------------------------------------------------------------------------------

#[test]
fn perft_english_depth_6() {
    let out = dtb()
        .args(["perft", "--variant", "english", "--depth", "6"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(stdout_of(&out), "36768\n");
    let out = dtb()
        .args(["perft", "--variant", "english", "--depth", "6", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let o = &json_lines(&stdout_of(&out))[0];
    assert_eq!(o["nodes"], Value::from(36768u64));
    assert_eq!(o["depth"], Value::from(6u64));
    assert_eq!(o["variant"], Value::from("english"));
    assert_eq!(o["counting"], Value::from("unique"));
    assert_eq!(
        o["fen"],
        Value::from("B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12")
    );
    // From a given FEN (first row of the 4-piece sample), depth 1 = its legal moves.
    let out = dtb()
        .args(["perft", "--depth", "1", "B:WK32:B19,K26"])
        .output()
        .unwrap();
    assert_eq!(stdout_of(&out), "6\n");
}

// ---------------------------------------------------------------------------------------
// gen
// ---------------------------------------------------------------------------------------

/// Name -> bytes of the table files of a directory.
fn table_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("wld" | "dtw")))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

fn all_names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn copy_tables(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for (name, bytes) in table_files(from) {
        std::fs::write(to.join(name), bytes).unwrap();
    }
}

/// `dtb gen` on a finished directory skips every slice (`"skipped": true`, the right counts)
/// and leaves every file bit-identical, with no stray file.
#[test]
fn gen_rerun_skips_every_slice_and_keeps_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tables");
    copy_tables(english4(), &dir);
    let before = table_files(&dir);
    assert_eq!(before.len(), 46);
    let out = dtb()
        .args([
            "gen",
            "--variant",
            "english",
            "--pieces",
            "4",
            "--json",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let lines = json_lines(&stdout_of(&out));
    assert_eq!(lines.len(), 24, "23 slices and a summary");
    let mut positions = 0;
    let mut wins = 0;
    for o in &lines[..23] {
        assert_eq!(o["skipped"], Value::Bool(true), "{o:?}");
        positions += o["positions"].as_u64().unwrap();
        wins += o["wins"].as_u64().unwrap();
    }
    assert_eq!((positions, wins), (6_408_836, 2_675_270));
    let summary = &lines[23];
    assert_eq!(summary["summary"], Value::Bool(true));
    assert_eq!(summary["slices"], Value::from(23u64));
    assert_eq!(summary["positions"], Value::from(6_408_836u64));
    assert_eq!(summary["solved"], Value::from(0u64), "nothing solved again");
    assert_eq!(table_files(&dir), before, "files changed by a re-run");
    let extra: Vec<String> = all_names(&dir)
        .into_iter()
        .filter(|n| !before.contains_key(n) && n != ".dtb-gen.lock")
        .collect();
    assert!(extra.is_empty(), "stray files {extra:?}");
}

/// A damaged file (a flipped byte in a block) and a missing one: a re-run reports the
/// damaged one, rebuilds exactly those two slices, skips the others, and ends with every
/// file bit-identical to the intact build. A lock file left behind by an earlier run does
/// not stop it.
#[test]
fn gen_rebuilds_damaged_and_missing_slices() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tables");
    copy_tables(english4(), &dir);
    let original = table_files(&dir);
    std::fs::write(dir.join(".dtb-gen.lock"), b"").unwrap();
    let damaged = dir.join("english-0120.wld");
    let mut bytes = std::fs::read(&damaged).unwrap();
    let n = bytes.len();
    bytes[n - 2] ^= 0x21;
    std::fs::write(&damaged, bytes).unwrap();
    std::fs::remove_file(dir.join("english-1010.dtw")).unwrap();
    let out = dtb()
        .args(["gen", "--pieces", "4", "--json", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let lines = json_lines(&stdout_of(&out));
    assert_eq!(lines.len(), 24);
    let rebuilt: BTreeSet<&str> = lines[..23]
        .iter()
        .filter(|o| o["skipped"] == Value::Bool(false))
        .map(|o| o["slice"].as_str().unwrap())
        .collect();
    assert_eq!(rebuilt, set(&["0120", "1010"]));
    // The build's CPU time (in seconds, not clock ticks: at most every thread busy for the
    // whole build, the main thread beside them) and its major page faults. Rebuilding two
    // 4-piece slices can take less than the kernel's 10 ms tick of CPU time, so 0 is a
    // true answer here (CI saw it: 0.0 CPU seconds in 0.020 s of wall time).
    let summary = &lines[23];
    let (secs, threads) = (
        summary["seconds"].as_f64().unwrap(),
        summary["threads"].as_f64().unwrap(),
    );
    let cpu = summary["cpu_seconds"]
        .as_f64()
        .expect("cpu_seconds on Linux");
    assert!(
        cpu >= 0.0 && cpu <= secs * (threads + 1.0) + 0.05,
        "{summary:?}"
    );
    assert!(summary["major_page_faults"].is_u64(), "{summary:?}");
    // Each slice's line tells how far the run is: its share of the solving work done
    // (rising to all of it), seconds so far and left; skipped slices before any solving
    // have done nothing and know no ETA.
    let done: Vec<f64> = lines[..23]
        .iter()
        .map(|o| o["build_done"].as_f64().unwrap())
        .collect();
    assert!(done.windows(2).all(|w| w[0] <= w[1]), "{done:?}");
    assert!(done[22] > 0.99 && done[22] <= 1.0, "{done:?}");
    let first_solved = lines.iter().position(|o| o["skipped"] == false).unwrap();
    for o in &lines[..first_solved] {
        assert_eq!(o["build_done"], 0.0);
        assert_eq!(o["build_eta_seconds"], Value::Null);
    }
    let eta = lines[22]["build_eta_seconds"].as_f64().unwrap();
    assert!((0.0..1.0).contains(&eta), "{eta}");
    assert!(lines[22]["build_elapsed_seconds"].as_f64().unwrap() > 0.0);
    // The CPU seconds and major page faults since the first slice started, rising: the CPU
    // seconds at most every thread and the main thread busy all that time.
    let cpu: Vec<f64> = lines[..23]
        .iter()
        .map(|o| o["build_cpu_seconds"].as_f64().expect("on Linux"))
        .collect();
    assert!(cpu.windows(2).all(|w| w[0] <= w[1]), "{cpu:?}");
    let elapsed = lines[22]["build_elapsed_seconds"].as_f64().unwrap();
    assert!(
        cpu[22] <= elapsed * (threads + 1.0) + 0.05,
        "{cpu:?} in {elapsed} s"
    );
    assert!(lines[..23]
        .iter()
        .all(|o| o["build_major_page_faults"].is_u64()));
    assert_eq!(table_files(&dir), original);
    // The damaged file is reported (one line, naming the slice, the file and the damage);
    // the missing one is just built.
    let err = stderr_of(&out);
    let reports: Vec<&str> = err.lines().filter(|l| l.contains("unusable")).collect();
    assert_eq!(reports.len(), 1, "{err}");
    assert!(
        reports[0].starts_with("slice 0120: solving it again")
            && reports[0].contains("english-0120.wld")
            && reports[0].contains("checksum"),
        "{err}"
    );
}

/// `--dry-run` writes nothing and lists what a build would do: in a directory that does not
/// exist, every slice is to be solved; over finished 2-4 tables with one file removed and
/// one overwritten, `--pieces 5` solves those two slices (naming the unusable file) and the
/// 5-piece ones, and loads the rest (each is read by a slice that runs). The summary's peak is the largest slice line's, and a build far
/// beyond any machine (English 2-8 with DTW: about 390 GiB) is reported as not fitting,
/// exit status 1.
#[test]
fn gen_dry_run_writes_nothing_and_forecasts_each_slice() {
    let tmp = tempfile::tempdir().unwrap();
    let fresh = tmp.path().join("fresh");
    let out = dtb()
        .args(["gen", "--pieces", "4", "--dry-run", "--json", "--out"])
        .arg(&fresh)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(!fresh.exists(), "a dry run created the output directory");
    let lines = json_lines(&stdout_of(&out));
    assert_eq!(lines.len(), 24);
    let (slices, summary) = lines.split_at(23);
    assert!(slices.iter().all(|o| o["action"] == "solve"));
    let peak = slices
        .iter()
        .map(|o| o["peak_bytes"].as_u64().unwrap())
        .max();
    assert_eq!(summary[0]["peak_bytes"].as_u64(), peak);
    assert_eq!(summary[0]["solve"], 23);
    assert_eq!(summary[0]["fits"], true);

    let dir = tmp.path().join("tables");
    copy_tables(english4(), &dir);
    std::fs::remove_file(dir.join("english-1111.wld")).unwrap();
    std::fs::write(dir.join("english-0210.dtw"), b"not a table").unwrap();
    let before = table_files(&dir);
    let out = dtb()
        .args(["gen", "--pieces", "5", "--dry-run", "--json", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(table_files(&dir), before, "a dry run changed the directory");
    let lines = json_lines(&stdout_of(&out));
    for o in &lines[..lines.len() - 1] {
        let name = o["slice"].as_str().unwrap();
        let pieces: u32 = name.bytes().map(|b| u32::from(b - b'0')).sum();
        let want = if pieces == 5 || name == "1111" || name == "0210" {
            "solve"
        } else {
            "load"
        };
        assert_eq!(o["action"], want, "{name}");
        // The foreign file is named, with why; the missing one is not "unusable".
        assert_eq!(o["unusable"].is_string(), name == "0210", "{name}: {o:?}");
        assert_eq!(o["solve_bytes"] == 0, want != "solve", "{name}");
    }

    let out = dtb()
        .args(["gen", "--pieces", "8", "--dry-run", "--out"])
        .arg(&fresh)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    let last = text.lines().last().unwrap();
    assert!(last.contains("does NOT fit"), "{last}");
    assert!(!fresh.exists());
}

/// A directory locked by another `dtb gen` (here: this test holding the lock file) is refused
/// with one line, and nothing is written.
#[test]
fn gen_refuses_a_locked_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tables");
    std::fs::create_dir_all(&dir).unwrap();
    let lock = std::fs::File::create(dir.join(".dtb-gen.lock")).unwrap();
    lock.lock().unwrap();
    let out = dtb()
        .args(["gen", "--pieces", "2", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert!(!out.status.success());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("in use by another dtb gen"), "{err}");
    assert!(table_files(&dir).is_empty());
    lock.unlock().unwrap();
    let out = dtb()
        .args(["gen", "--pieces", "2", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(table_files(&dir).len(), 6);
}

/// The text lines of `dtb gen` name only the files the build writes: a WLD-only build's give
/// no distance and no DTW bytes (it has neither), a full build's give both, counted in plies.
/// Slice lines go to standard error without a terminal, the summary to standard output.
#[test]
fn gen_text_lines_name_only_what_the_build_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |values: &str, dir: &str| {
        let out = dtb()
            .args(["gen", "--pieces", "2", "--values", values, "--out"])
            .arg(tmp.path().join(dir))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
        let (slices, summary) = (stderr_of(&out), stdout_of(&out));
        let slice = slices
            .lines()
            .find(|l| l.starts_with("slice 0101:"))
            .unwrap_or_else(|| panic!("no line of slice 0101: {slices}"))
            .to_string();
        (slice, summary)
    };
    let (slice, summary) = run("wld", "wld");
    assert_eq!(
        slice.split(';').next().unwrap(),
        "slice 0101: 992 positions, 230 wins 108 losses 654 draws"
    );
    assert!(
        !slice.contains("DTW") && !summary.contains("DTW"),
        "{slice}\n{summary}"
    );
    assert!(
        summary.lines().last().unwrap().starts_with("WLD "),
        "{summary}"
    );
    let (slice, summary) = run("wld,dtw", "full");
    assert_eq!(
        slice.split(';').next().unwrap(),
        "slice 0101: 992 positions, 230 wins 108 losses 654 draws, longest 11 plies"
    );
    assert!(
        slice.contains(", DTW ") && slice.ends_with(" bytes"),
        "{slice}"
    );
    assert!(
        summary.lines().last().unwrap().contains(", DTW "),
        "{summary}"
    );
}

/// `--threads 1` and `--threads 2` write byte-identical files, and the same bytes as the
/// library build of the 4-piece directory for the slices they share.
#[test]
fn gen_output_does_not_depend_on_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for threads in ["1", "2"] {
        let dir = tmp.path().join(format!("t{threads}"));
        let out = dtb()
            .args([
                "gen",
                "--variant",
                "english",
                "--pieces",
                "3",
                "--threads",
                threads,
                "--out",
            ])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
        dirs.push(dir);
    }
    let a = table_files(&dirs[0]);
    let b = table_files(&dirs[1]);
    assert_eq!(a.len(), 2 * 9, "9 slices with 2-3 pieces");
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        assert!(bytes == &b[name], "{name} differs between 1 and 2 threads");
    }
    let four = table_files(english4());
    for (name, bytes) in &a {
        assert!(
            bytes == &four[name],
            "{name} differs from the 4-piece build's"
        );
    }
}

/// The decompressed blocks of every table file in `dir`, by file name.
fn decompressed(dir: &Path) -> BTreeMap<String, Vec<Vec<u8>>> {
    use dtb_probe::internal::table::{BlockCache, TableFile};
    let cache = std::sync::Arc::new(BlockCache::new(1 << 20));
    table_files(dir)
        .into_keys()
        .map(|name| {
            let t = TableFile::open(&dir.join(&name), cache.clone()).unwrap();
            let blocks = (0..t.header().block_count)
                .map(|b| t.read_block(b).unwrap().to_vec())
                .collect();
            (name, blocks)
        })
        .collect()
}

/// zstd settings change a file's bytes, never what a reader gets: 2-3 built with `--zstd 3`,
/// `--zstd 19:strat=9` and `--zstd-level 1` decompress to exactly the blocks of the default
/// build (the 4-piece fixture's files of those slices).
#[test]
fn zstd_settings_change_bytes_not_values() {
    let tmp = tempfile::tempdir().unwrap();
    let four = table_files(english4());
    let default_blocks = decompressed(english4());
    for (k, args) in [
        ["--zstd", "3"],
        ["--zstd", "19:strat=9"],
        ["--zstd-level", "1"],
    ]
    .iter()
    .enumerate()
    {
        let dir = tmp.path().join(format!("z{k}"));
        let out = dtb()
            .args(["gen", "--variant", "english", "--pieces", "3"])
            .args(args)
            .arg("--out")
            .arg(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr_of(&out));
        let files = table_files(&dir);
        assert_eq!(files.len(), 2 * 9, "{args:?}");
        assert!(
            files.iter().any(|(name, bytes)| bytes != &four[name]),
            "{args:?}: every file byte-identical to the default settings'"
        );
        for (name, blocks) in decompressed(&dir) {
            assert!(
                blocks == default_blocks[&name],
                "{args:?}: {name} decodes differently"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------

/// A failing command: non-zero exit, nothing on stdout, one line saying `error` on stderr
/// (clap's own errors add a usage hint after it), no panic.
fn fails(args: &[&str], needle: &str) -> String {
    let out = dtb().args(args).output().unwrap();
    let err = stderr_of(&out);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(
        out.stdout.is_empty(),
        "{args:?}: stdout {:?}",
        stdout_of(&out)
    );
    let error_lines: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(error_lines.len(), 1, "{args:?}: {err}");
    assert!(
        error_lines[0].contains(needle),
        "{args:?}: {:?} should mention {needle:?}",
        error_lines[0]
    );
    err
}

/// Errors of our own: exactly one line.
fn fails_one_line(args: &[&str], needle: &str) {
    let err = fails(args, needle);
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("dtb: error: "), "{err}");
}

#[test]
fn bad_command_lines_fail_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("never");
    let out_s = out.to_str().unwrap();
    fails_one_line(&["gen", "--pieces", "99", "--out", out_s], "99");
    fails_one_line(&["gen", "--pieces", "1", "--out", out_s], "--pieces 1");
    fails_one_line(&["gen", "--variant", "chess", "--out", out_s], "chess");
    // clap refuses it: one error line, then its usage hint.
    fails(
        &["gen", "--threads", "0", "--pieces", "2", "--out", out_s],
        "--threads",
    );
    fails(
        &[
            "gen",
            "--threads",
            "100000",
            "--pieces",
            "2",
            "--out",
            out_s,
        ],
        "expected a whole number from 1 to 1024",
    );
    fails(
        &["perft", "--depth", "100000"],
        "expected a whole number from 0 to 40",
    );
    fails(
        &["gen", "--zstd", "15:foo=1", "--pieces", "2", "--out", out_s],
        "unknown zstd parameter",
    );
    fails(
        &[
            "gen",
            "--zstd",
            "15:slog=99",
            "--pieces",
            "2",
            "--out",
            out_s,
        ],
        "zstd refuses",
    );
    fails(
        &[
            "gen",
            "--zstd",
            "9",
            "--zstd-level",
            "9",
            "--pieces",
            "2",
            "--out",
            out_s,
        ],
        "cannot be used with",
    );
    assert!(!out.exists(), "a refused gen created its output directory");
    let missing = tmp.path().join("missing");
    let missing_s = missing.to_str().unwrap();
    fails_one_line(
        &["probe", "--dir", missing_s, "W:WK32:BK26"],
        "does not exist",
    );
    fails_one_line(
        &[
            "probe",
            "--variant",
            "chess",
            "--dir",
            dir_arg(),
            "W:WK32:BK26",
        ],
        "chess",
    );
    fails_one_line(&["probe", "--dir", dir_arg()], "no position");
    fails_one_line(
        &["probe", "--dir", dir_arg(), "--batch", missing_s],
        "batch",
    );
    fails_one_line(&["info", "--dir", missing_s], "missing");
    fails_one_line(&["perft", "--depth", "2", "W:W99:B1"], "99");
    fails_one_line(&["perft", "--variant", "chess", "--depth", "1"], "chess");
    fails(&["frobnicate"], "frobnicate");
    fails(&["perft"], "required");
    fails(&["gen", "--pieces", "many"], "many");
    // No subcommand at all: the usage on stderr, exit status 2.
    let out = dtb().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_of(&out).contains("Usage: dtb <COMMAND>"));
    assert!(!stderr_of(&out).contains("panicked"));
}

/// A batch line that is not UTF-8 gets its own error (with its line number) while the others
/// are answered; a byte-order mark, blank lines and `#` comments are skipped.
#[test]
fn batch_survives_a_bad_line_and_skips_comments() {
    let mut input = b"\xef\xbb\xbfW:WK32:BK26\n# a comment\n\n".to_vec();
    input.extend_from_slice(b"\xff\xfe\nB:WK32:BK26\n");
    let out = dtb()
        .args(["probe", "--dir", dir_arg(), "--json", "--batch", "-"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0]["wld"], "win");
    assert_eq!(lines[1]["line"], 4);
    assert!(lines[1]["error"].as_str().unwrap().contains("not UTF-8"));
    assert_eq!(lines[2]["fen"], "B:WK32:BK26");
    assert_eq!(lines[2]["wld"], "draw");
}

/// A 10 MB batch line is answered with a bounded error naming its line, in JSON and in
/// text, and the good lines after it are answered; one of exactly 4096 bytes is still read.
#[test]
fn batch_refuses_a_10_mb_line_and_answers_the_next() {
    let mut input = b"W:WK32:BK26\n".to_vec();
    input.extend(std::iter::repeat_n(b'7', 10 << 20));
    input.extend_from_slice(b"\nB:WK32:BK26\n");
    let padded = format!("{:<4096}\n", "W:WK32:BK26");
    input.extend_from_slice(padded.as_bytes());
    let out = dtb()
        .args(["probe", "--dir", dir_arg(), "--json", "--batch", "-"])
        .write_stdin(input.clone())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.len() < 2000, "{} bytes of output", text.len());
    let lines = json_lines(&text);
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[0]["wld"], "win");
    assert_eq!(lines[1]["line"], 2);
    assert_eq!(lines[1]["kind"], "line_too_long");
    assert_eq!(
        lines[1]["error"],
        format!(
            "batch line 2 is {} bytes, longer than any FEN (at most 4096 bytes a line)",
            10 << 20
        )
    );
    assert_eq!(lines[2]["fen"], "B:WK32:BK26");
    assert_eq!(lines[2]["wld"], "draw");
    assert_eq!(lines[3]["wld"], "win");

    let out = dtb()
        .args(["probe", "--dir", dir_arg(), "--batch", "-"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert_eq!(err.lines().count(), 1, "{err:.500}");
    assert!(err.contains("batch line 2 is 10485760 bytes"), "{err:.500}");
    let text = stdout_of(&out);
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .starts_with("B:WK32:BK26  draw"),
        "{text}"
    );
}

/// With no tables of a rule set that is no preset, the hint names `--variant` as `dtb gen`
/// reads it (`english,blocked=majority`, not the file name `english+blocked=majority`, which
/// `dtb gen` refuses) and the directory quoted for the shell; the hint, run by `sh` as it
/// stands (2 pieces), builds the tables, and the probe then answers.
#[test]
fn the_missing_tables_hint_is_a_command_that_works() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("no tables");
    std::fs::create_dir(&empty).unwrap();
    let probe = || {
        dtb()
            .args(["probe", "--variant", "english,blocked=majority", "--dir"])
            .arg(&empty)
            .arg("W:WK32:BK26")
            .output()
            .unwrap()
    };
    let out = probe();
    assert!(!out.status.success());
    let err = stderr_of(&out);
    let quoted = format!("'{}'", empty.display());
    assert!(
        err.contains(&format!(
            "`dtb gen --variant english,blocked=majority --out {quoted}`"
        )),
        "{err}"
    );
    let hint = err.split('`').nth(1).unwrap();
    let rest = hint.strip_prefix("dtb ").unwrap();
    let run = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("\"$0\" {rest} --pieces 2"))
        .arg(dtb_binary())
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr_of(&run));
    let out = probe();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        stdout_of(&out).starts_with("W:WK32:BK26  "),
        "{}",
        stdout_of(&out)
    );
    // The name tables are filed under is not a value --variant takes.
    let out = dtb()
        .args([
            "gen",
            "--variant",
            "english+blocked=majority",
            "--dry-run",
            "--out",
        ])
        .arg(tmp.path().join("new"))
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// A reader that stops early (`dtb perft ... | head -1`) closes the pipe: the command ends
/// quietly with status 0, as Unix tools do, never a panic.
#[test]
fn closed_standard_output_ends_the_command_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    for args in [vec!["perft", "--depth", "8"], vec!["variants"]] {
        // The reader is gone before the command starts, so even a short output (which a
        // pipe would otherwise take whole) meets a closed pipe.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut child = std::process::Command::new(dtb_binary())
            .args(&args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

/// Issue 22: the command line reads algebraic squares for every variant and writes each
/// variant's positions as its players do: Russian algebraic, English and International in
/// numbers (as before). `perft --json` echoes the position it counted from.
#[test]
fn positions_are_read_algebraically_and_written_as_the_variant_writes_them() {
    let echo = |variant: &str, f: &str| -> (String, u64) {
        let out = dtb()
            .args(["perft", "--variant", variant, "--depth", "2", "--json", f])
            .output()
            .unwrap();
        assert!(out.status.success(), "{variant} {f}: {out:?}");
        let o: Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            o["fen"].as_str().unwrap().to_string(),
            o["nodes"].as_u64().unwrap(),
        )
    };
    let (ru, n) = echo("russian", "W:Wh6,c1:Bg7,c5,d2");
    assert_eq!(ru, "W:Wc1,h6:Bd2,c5,g7");
    assert_eq!(echo("russian", "W:W12,30:B8,14,26"), (ru, n));
    assert_eq!(echo("english", "W:Wh6,c1:Bg7,c5,d2").0, "W:W12,30:B8,14,26");
    assert_eq!(echo("international", "W:Wa1:Bj10").0, "W:W46:B5");
    // A light square is an error line and status 2, naming the square.
    let out = dtb()
        .args(["perft", "--variant", "russian", "--depth", "1", "W:Wa2:B6"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"a2\" is a light square"), "{err}");
}

/// Directory and count errors read alike across commands: `info` on a directory that does
/// not exist says it as `probe` does, and on one without tables prints no all-zero total
/// before its error; a number too large for its flag says so; a blank FEN is shown quoted;
/// counts of one are singular.
#[test]
fn errors_and_counts_read_alike() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nosuch");
    for cmd in ["info", "probe"] {
        let mut c = dtb();
        c.args([cmd, "--dir"]).arg(&missing);
        if cmd == "probe" {
            c.arg("W:W5:B6");
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = stderr_of(&out);
        assert!(
            err.starts_with("dtb: error: table directory ") && err.contains("does not exist"),
            "{cmd}: {err}"
        );
    }
    let out = dtb()
        .args(["info", "--dir"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "{}", stdout_of(&out));
    assert!(stderr_of(&out).starts_with("dtb: error: no table files"));
    let out = dtb()
        .args(["plan", "--emit", "json", "--pieces", "99999999999"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).starts_with(
            "dtb: error: invalid value '99999999999' for '--pieces <PIECES>': expected a \
             whole number of at least 0; this one is too large"
        ),
        "{}",
        stderr_of(&out)
    );
    let out = dtb()
        .args(["probe", "--dir", dir_arg(), " "])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr_of(&out), "dtb: \" \": empty FEN\n");
    let one = tmp.path().join("one");
    std::fs::create_dir(&one).unwrap();
    std::fs::copy(
        english4().join("english-0101.wld"),
        one.join("english-0101.wld"),
    )
    .unwrap();
    let out = dtb()
        .args(["verify", "--sample", "10", "--dir"])
        .arg(&one)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    assert!(text.contains("\n1 slice, 10 positions checked"), "{text}");
    // A file where --out names a directory: said in words, nothing made.
    let afile = tmp.path().join("afile");
    std::fs::write(&afile, b"mine").unwrap();
    let out = dtb()
        .args(["gen", "--pieces", "2", "--out"])
        .arg(afile.join("tables"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert!(
        err.starts_with("dtb: error: --out ")
            && err.ends_with("afile is in the way: it exists and is not a directory\n"),
        "{err}"
    );
    assert_eq!(std::fs::read(&afile).unwrap(), b"mine");
    let out = dtb()
        .args(["plan", "--emit", "json", "--speed", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).ends_with("at least 1 (got 0)\n"),
        "{}",
        stderr_of(&out)
    );
    // A value that starts like a flag is still the flag's value.
    let out = dtb()
        .args(["plan", "--emit", "json", "--speed", "-inf"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).ends_with("at least 1 (got -inf)\n"),
        "{}",
        stderr_of(&out)
    );
    let out = dtb().args(["perft", "--depth", "0"]).output().unwrap();
    assert!(
        stderr_of(&out).contains(": 1 node in "),
        "{}",
        stderr_of(&out)
    );
}
