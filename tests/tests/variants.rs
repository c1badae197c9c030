//! Rule sets as players write them (issue 20): a preset with field overrides
//! (`english,blocked=majority`), the blocked-side outcomes of the optional-rules text (loss,
//! draw, majority), and what they change: one position per new outcome and per override whose
//! value the field changes, with the value asserted both ways; tables built, verified, named
//! apart and refused under other rules; the command line's errors.

use std::path::Path;
use std::sync::OnceLock;

use assert_cmd::Command;
use dtb_gen::build::{run, Plan, Quiet};
use dtb_probe::internal::format::{ValueKind, FORMAT_VERSION, FORMAT_VERSION_FLIP};
use dtb_probe::internal::value::{self, Code, ValueSource, DRAW, LOST, WON};
use dtb_probe::{fen, Dtw, Position, ProbeError, Rules, Tablebase, Wld};
use dtb_tests::dtb_binary;
use serde_json::Value;

fn rules(spec: &str) -> Rules {
    Rules::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// Tables of `spec` up to 4 pieces, built once per test process.
fn tables(spec: &'static str) -> &'static Path {
    static DIRS: OnceLock<std::sync::Mutex<Vec<(&'static str, &'static Path)>>> = OnceLock::new();
    let dirs = DIRS.get_or_init(Default::default);
    let mut dirs = dirs
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, d)) = dirs.iter().find(|(s, _)| *s == spec) {
        return d;
    }
    let exe = std::env::current_exe().expect("test executable");
    let stem = exe.file_stem().and_then(|s| s.to_str()).unwrap_or("tests");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("dtb-{}-4-{stem}", spec.replace([',', '='], "_")));
    let _ = std::fs::remove_dir_all(&dir);
    let plan = Plan::new(rules(spec), 4, &dir).expect("valid plan");
    run(&plan, &Quiet).expect("build");
    let dir: &'static Path = Box::leak(dir.into_boxed_path());
    dirs.push((spec, dir));
    dir
}

fn probe(spec: &'static str, f: &str) -> Dtw {
    let r = rules(spec);
    let tb = Tablebase::open(tables(spec), r).unwrap();
    tb.probe_dtw(&fen::parse(f, &r).unwrap()).unwrap()
}

fn dtw(wld: Wld, plies: Option<u16>) -> Dtw {
    Dtw { wld, plies }
}

/// Stored values are never needed for a blocked position.
struct NoTables;
impl ValueSource for NoTables {
    type Error = ();
    fn stored(&self, _: &Position) -> Result<Code, ()> {
        panic!("a blocked position is resolved without tables")
    }
}

/// `blocked=majority`: White (to move) is walled in on its first two rows, eight pieces of
/// which four kings, with no move; Black's material decides. More pieces wins, fewer loses;
/// with as many pieces, more kings wins, fewer loses, as many draws. At once: 0 plies. Under
/// the preset the same positions are lost, under `blocked=draw` drawn.
#[test]
fn majority_judges_a_blocked_side_by_pieces_then_kings() {
    let english = Rules::ENGLISH;
    let draw = rules("english,blocked=draw");
    let majority = rules("english,blocked=majority");
    let white = "W5,6,7,8,K1,K2,K3,K4";
    for (black, want) in [
        ("BK32", WON),                          // 8 pieces against 1
        ("B9,10,11,12,13,14,15,16,17", LOST),   // 8 against 9
        ("B9,10,11,12,13,14,15,16", WON),       // 8 each; 4 kings against none
        ("B9,10,11,12,K29,K30,K31,K32", DRAW),  // 8 each, 4 kings each
        ("B9,10,11,K28,K29,K30,K31,K32", LOST), // 8 each; 4 kings against 5
    ] {
        let f = format!("W:{white}:{black}");
        let pos = fen::parse(&f, &english).unwrap();
        let mut moves = Vec::new();
        dtb_probe::movegen::legal_moves(
            &english,
            &pos,
            dtb_probe::movegen::Counting::Unique,
            &mut moves,
        );
        assert!(moves.is_empty(), "{f}: White is blocked");
        assert_eq!(value::resolve(&majority, &NoTables, &pos), Ok(want), "{f}");
        assert_eq!(value::resolve(&english, &NoTables, &pos), Ok(LOST), "{f}");
        assert_eq!(value::resolve(&draw, &NoTables, &pos), Ok(DRAW), "{f}");
    }
    // The codes: a win in 0 plies, and the loss in 1 ply of a move into it.
    assert_eq!((WON.wld(), WON.plies()), (Wld::Win, Some(0)));
    let parent = WON.parent();
    assert_eq!((parent.wld(), parent.plies()), (Wld::Loss, Some(1)));
    assert_eq!(
        (parent.parent().wld(), parent.parent().plies()),
        (Wld::Win, Some(2))
    );
    // Presets' codes are unchanged: plies + 1, odd plies a win.
    assert_eq!((LOST.wld(), LOST.plies()), (Wld::Loss, Some(0)));
    assert_eq!(Code::win(9).bits(), 10);
    assert_eq!(Code::loss(52).bits(), 53);
}

/// White king 1 and man 5 against Black men 6 and 10, White to move: blocked (the king's
/// jump over 6 lands on 10). Two pieces each, one king against none. From Black's side one
/// move earlier (`B:W5,K1:B2,10`) the move 2-6 walls White in. Tables 2-4 of each rule set.
#[test]
fn blocked_outcome_changes_values_in_the_tables() {
    let blocked = "W:W5,K1:B6,10";
    let before = "B:W5,K1:B2,10";
    // The position itself: lost, drawn (the game ends here: 0 plies), won at once.
    assert_eq!(probe("english", blocked), dtw(Wld::Loss, Some(0)));
    assert_eq!(
        probe("english,blocked=draw", blocked),
        dtw(Wld::Draw, Some(0))
    );
    assert_eq!(
        probe("english,blocked=majority", blocked),
        dtw(Wld::Win, Some(0))
    );
    // One ply earlier: 2-6 wins in 1 under the preset; under `draw` it draws; under
    // `majority` it loses in 1 ply (an odd loss), and Black wins in 51 plies otherwise.
    assert_eq!(probe("english", before), dtw(Wld::Win, Some(1)));
    assert_eq!(
        probe("english,blocked=draw", before),
        dtw(Wld::Win, Some(51))
    );
    assert_eq!(
        probe("english,blocked=majority", before),
        dtw(Wld::Win, Some(51))
    );
    // Five pieces, resolved by the capture search: White must take 23x30, which leaves Black
    // walled in (men 21, 25, king 29) with three pieces against one. The preset: White wins
    // in 1 ply; `majority`: White loses in 1 ply (in the 2-5 build, Black's 22-26 from
    // `B:WK23:B21,K22,25,K29` is then a win in 2 plies, 15 under the preset).
    let forced = "W:WK23:B21,25,K26,K29";
    assert_eq!(probe("english", forced), dtw(Wld::Win, Some(1)));
    assert_eq!(probe("english,blocked=draw", forced), dtw(Wld::Draw, None));
    assert_eq!(
        probe("english,blocked=majority", forced),
        dtw(Wld::Loss, Some(1))
    );
    for (spec, after, mover, best) in [
        (
            "english",
            dtw(Wld::Loss, Some(0)),
            dtw(Wld::Win, Some(1)),
            "2-6",
        ),
        (
            "english,blocked=draw",
            dtw(Wld::Draw, None),
            dtw(Wld::Draw, None),
            "10-14",
        ),
        (
            "english,blocked=majority",
            dtw(Wld::Win, Some(0)),
            dtw(Wld::Loss, Some(1)),
            "10-14",
        ),
    ] {
        let r = rules(spec);
        let tb = Tablebase::open(tables(spec), r).unwrap();
        let pos = fen::parse(before, &r).unwrap();
        let ranked = tb.probe_moves(&pos).unwrap();
        let m = ranked
            .iter()
            .find(|m| m.mv.to_pdn_for(&r, false) == "2-6")
            .expect("2-6 is legal");
        assert_eq!((m.after, m.for_mover()), (after, mover), "{spec}");
        assert_eq!(ranked[0].mv.to_pdn_for(&r, false), best, "{spec}");
        // The WLD tables agree on the outcomes.
        assert_eq!(tb.probe_wld(&pos).unwrap(), Wld::Win);
        assert_eq!(
            tb.probe_wld(&fen::parse(blocked, &r).unwrap()).unwrap(),
            after.wld
        );
    }
}

/// `capture=optional`: `W:W5,7:B2,6` is a win in 9 plies for White (5-1 first) when every
/// capture is compulsory, a draw when captures may be declined (by either side).
#[test]
fn optional_capture_changes_a_value() {
    let f = "W:W5,7:B2,6";
    assert_eq!(probe("english", f), dtw(Wld::Win, Some(9)));
    assert_eq!(probe("english,capture=optional", f), dtw(Wld::Draw, None));
}

/// Every value of the new rule sets' 2-4 builds is consistent with its successors
/// (`dtb verify`), file names are apart from the preset's, and the DTW files of
/// `blocked=majority` are format version 2 (flagged codes), every other file version 1.
#[test]
fn new_rule_sets_build_verify_and_are_named_apart() {
    for spec in [
        "english,blocked=majority",
        "english,blocked=draw",
        "english,capture=optional",
    ] {
        let r = rules(spec);
        let dir = tables(spec);
        let reports = dtb_gen::verify::verify_dir(dir, r, &|_| {}).unwrap();
        assert_eq!(reports.len(), 23, "{spec}: slices");
        for rep in &reports {
            assert!(
                rep.problems.is_empty(),
                "{spec} {}: {:?}",
                rep.material,
                rep.problems
            );
        }
        let mut files = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            if name.starts_with('.') {
                continue;
            }
            files += 1;
            assert!(name.starts_with(&format!("{}-", r.name)), "{name}");
            assert!(!name.starts_with("english-"), "{name}");
            let t = dtb_probe::internal::table::TableFile::open(
                &p,
                std::sync::Arc::new(dtb_probe::internal::table::BlockCache::new(1 << 20)),
            )
            .unwrap();
            let h = t.header();
            assert_eq!(h.variant, r.name);
            assert_eq!(h.rules_code, r.encode());
            let flip = spec.contains("majority") && h.kind == ValueKind::Dtw;
            assert_eq!(
                h.version,
                if flip {
                    FORMAT_VERSION_FLIP
                } else {
                    FORMAT_VERSION
                },
                "{name}"
            );
        }
        assert_eq!(files, 46, "{spec}");
    }
    assert_eq!(
        rules("english,blocked=majority").name,
        "english+blocked=majority"
    );
}

/// A table file of one rule set under another's name is refused, naming both rule sets and
/// the field that differs.
#[test]
fn a_table_of_other_rules_is_refused_naming_both() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tables("english,blocked=majority").join("english+blocked=majority-0101.wld");
    std::fs::copy(&src, tmp.path().join("english-0101.wld")).unwrap();
    let tb = Tablebase::open(tmp.path(), Rules::ENGLISH).unwrap();
    let pos = fen::parse("W:WK1:BK32", &Rules::ENGLISH).unwrap();
    let e = tb.probe_wld(&pos).unwrap_err();
    assert!(matches!(e, ProbeError::Mismatch { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.ends_with(
            "english-0101.wld: not the expected table: it was built under other rules, rule \
             set \"english+blocked=majority\", not \"english\": blocked: loss for english, \
             majority for english+blocked=majority"
        ),
        "{text}"
    );
}

fn dtb() -> Command {
    Command::new(dtb_binary())
}

/// Bad overrides: one clear error line each on stderr, exit status 2, in every subcommand
/// that takes `--variant`.
#[test]
fn bad_overrides_are_one_error_line_and_status_2() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    for (spec, says) in [
        (
            "english,capture=maybe",
            "capture=maybe: capture is one of optional, compulsory",
        ),
        (
            "english,foo=1",
            "unknown rule field \"foo\": the fields are board, first,",
        ),
        (
            "english,blocked=draw,blocked=majority",
            "rule field blocked is given twice",
        ),
        ("english,,blocked=draw", "empty item 2"),
        ("english,blocked=draw,", "empty item 3"),
    ] {
        for args in [
            vec!["perft", "--depth", "1"],
            vec!["probe", "--dir", dir, "W:WK1:BK32"],
            vec!["verify", "--dir", dir],
            vec!["gen", "--pieces", "2", "--out", dir],
        ] {
            let out = dtb()
                .args(&args)
                .args(["--variant", spec])
                .output()
                .unwrap();
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(out.status.code(), Some(2), "{args:?} {spec}: {err}");
            assert_eq!(err.lines().count(), 1, "{args:?} {spec}: {err}");
            assert!(err.contains(says), "{args:?} {spec}: {err}");
            assert!(out.stdout.is_empty());
        }
    }
    assert_eq!(
        std::fs::read_dir(dir).unwrap().count(),
        0,
        "nothing written"
    );
}

/// `dtb variants` in words, `--json` as data; an override on the command line builds,
/// probes (a win in 0 plies, a drawn end) and plays its line.
#[test]
fn variants_in_words_and_overrides_on_the_command_line() {
    let out = dtb().arg("variants").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    for line in [
        "  kings                  short",
        "  blocked                loss",
    ] {
        assert!(text.contains(line), "{text}");
    }
    assert!(
        text.contains("blocked                loss | draw | majority"),
        "{text}"
    );
    assert!(!text.contains("Short") && !text.contains("AtEnd"), "{text}");
    let out = dtb().args(["variants", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let presets = v["presets"].as_array().unwrap();
    assert_eq!(presets.len(), Rules::PRESETS.len());
    assert_eq!(presets[0]["name"], "english");
    assert_eq!(presets[0]["fields"]["kings"], "short");
    assert_eq!(presets[1]["fields"]["removal"], "at-end");
    assert_eq!(presets[9]["fields"]["capture"], "optional");
    let blocked = v["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["field"] == "blocked")
        .unwrap();
    assert_eq!(
        blocked["values"],
        serde_json::json!(["loss", "draw", "majority"])
    );

    let dir = tables("english,blocked=majority").to_str().unwrap();
    let out = dtb()
        .args([
            "probe",
            "--variant",
            "english,blocked=majority",
            "--dir",
            dir,
            "--json",
        ])
        .args(["W:W5,K1:B6,10", "W:W5,K1:B6,K10", "B:W5,K1:B2,10"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        (&lines[0]["wld"], &lines[0]["dtw"]),
        (&"win".into(), &0.into())
    );
    assert_eq!(lines[0]["best_move"], Value::Null);
    assert_eq!(
        (&lines[1]["wld"], &lines[1]["dtw"]),
        (&"draw".into(), &0.into())
    );
    assert_eq!(
        (&lines[2]["wld"], &lines[2]["dtw"]),
        (&"win".into(), &51.into())
    );
    // The line of a 51-ply win ends in 51 plies, its last position won at once or lost.
    let out = dtb()
        .args([
            "probe",
            "--variant",
            "english,blocked=majority",
            "--dir",
            dir,
            "--json",
        ])
        .args(["--line", "B:W5,K1:B2,10"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let line = v["line"].as_array().unwrap();
    assert_eq!(line.len(), 51);
    // Each step's value is its mover's (issue 36): 51, 50, ... as the moves' values.
    for (i, step) in line.iter().enumerate() {
        assert_eq!(step["dtw"], serde_json::json!(51 - i), "{step}");
    }
    // The preset refuses this directory, naming the rule set it holds.
    let out = dtb()
        .args(["probe", "--variant", "english", "--dir", dir, "W:WK1:BK32"])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains(
            "english+blocked=majority (blocked: loss for english, majority for \
             english+blocked=majority)"
        ) && err.contains("pass --variant english,blocked=majority"),
        "{err}"
    );
}

/// Issue 22, defect 2: a position carries its rules. `W:WK32:BK26` read under English rules
/// (a win in 9 there) and probed in Russian tables was answered as a Russian draw; now the
/// Russian tablebase refuses it, naming both rule sets, through every probe, while the same
/// FEN read under Russian rules (or the English position re-checked with `with_rules`)
/// answers its Russian value. An International position is refused the same way, and a
/// board-only position (made by an index) of the right board is accepted.
#[test]
fn a_position_of_other_rules_is_refused() {
    let ru = Rules::RUSSIAN;
    let tb = Tablebase::open(tables("russian"), ru).unwrap();
    let en = Tablebase::open(tables("english"), Rules::ENGLISH).unwrap();
    let english = fen::parse("W:WK32:BK26", &Rules::ENGLISH).unwrap();
    let russian = fen::parse("W:WK32:BK26", &ru).unwrap();
    assert_eq!(english, russian, "the same pieces");
    assert_eq!(en.probe_dtw(&english).unwrap(), dtw(Wld::Win, Some(9)));
    assert_eq!(tb.probe_wld(&russian).unwrap(), Wld::Draw);
    assert_eq!(
        tb.probe_wld(&english.with_rules(&ru).unwrap()).unwrap(),
        Wld::Draw
    );
    let refused = |r: Result<(), ProbeError>, position: &str| match r {
        Err(ProbeError::VariantMismatch {
            position: p,
            tablebase,
        }) => {
            assert_eq!((p.as_str(), tablebase), (position, "russian"));
        }
        other => panic!("{position}: not refused: {other:?}"),
    };
    refused(tb.probe_wld(&english).map(drop), "english");
    refused(tb.probe_dtw(&english).map(drop), "english");
    refused(tb.probe_wld_cached(&english).map(drop), "english");
    refused(tb.probe_dtw_cached(&english).map(drop), "english");
    refused(tb.probe_quiet_wld(&english).map(drop), "english");
    refused(tb.probe_quiet_dtw(&english).map(drop), "english");
    refused(tb.best_move(&english).map(drop), "english");
    refused(tb.probe_moves(&english).map(drop), "english");
    refused(tb.probe_moves_wld(&english).map(drop), "english");
    // The other way round, and another board.
    assert!(matches!(
        en.probe_wld(&russian),
        Err(ProbeError::VariantMismatch {
            tablebase: "english",
            ..
        })
    ));
    let international = fen::parse("W:WK46:BK5", &Rules::INTERNATIONAL).unwrap();
    refused(tb.probe_wld(&international).map(drop), "international");
    // A rule set that is not a preset is named as such; the message names both.
    let majority = fen::parse("W:WK32:BK26", &rules("russian,blocked=majority")).unwrap();
    let e = tb.probe_wld(&majority).unwrap_err();
    refused(Err(e.clone()), "another rule set");
    assert_eq!(
        e.to_string(),
        "the position is of other rules (another rule set) than the tablebase's (russian): \
         parse it with the tablebase's rules"
    );
    // Positions made from a refused one stay refused; a board-only one is accepted.
    refused(
        tb.probe_wld(&english.flipped(ru.geometry())).map(drop),
        "english",
    );
    let m = english.material();
    let ix = dtb_probe::internal::index::SliceIndex::new(m, ru.geometry());
    let board_only = ix.unindex(ix.index(&english), dtb_probe::Color::White);
    assert!(board_only.rules_id().is_board_only());
    assert_eq!(tb.probe_wld(&board_only).unwrap(), Wld::Draw);
    let ix10 = dtb_probe::internal::index::SliceIndex::new(m, Rules::INTERNATIONAL.geometry());
    refused(
        tb.probe_wld(&ix10.unindex(0, dtb_probe::Color::White))
            .map(drop),
        "10x10 board",
    );
}
