//! Count profiles on the command line (issue 35, the rule model): `dtb variants` lists each
//! preset's regimes, limits and resets, and `--variant` takes `count=` with one clear error
//! for each bad form.

use std::process::{Command, Output};

const DTB: &str = env!("CARGO_BIN_EXE_dtb");

fn dtb(args: &[&str]) -> Output {
    Command::new(DTB).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn preset<'a>(j: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    j["presets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap()
}

#[test]
fn variants_json_lists_each_count_profile() {
    let out = dtb(&["variants", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let i = &preset(&j, "international")["count"];
    assert_eq!(i["rule"], true);
    assert_eq!(
        i["regimes"],
        serde_json::json!([
            {"name": "five", "material": "a lone king against 2 kings, a king and a man, or a king",
             "limit_plies": 10, "limit_moves": 5, "resets": "only a change of regime"},
            {"name": "sixteen",
             "material": "a lone king against 3 kings, 2 kings and a man, or a king and 2 men",
             "limit_plies": 32, "limit_moves": 16, "resets": "only a change of regime"},
            {"name": "general", "material": "any other material", "limit_plies": 50,
             "limit_moves": 25, "resets": "a man move (a crowning included) or a capture"},
        ])
    );
    assert!(i["source"]
        .as_str()
        .unwrap()
        .starts_with("FMJD rules as lidraughts"));
    let e = &preset(&j, "english")["count"];
    assert_eq!(
        e["regimes"],
        serde_json::json!([{"name": "general", "material": "any material", "limit_plies": 80,
            "limit_moves": 40, "resets": "a man move (a crowning included) or a capture"}])
    );
    let it = &preset(&j, "italian")["count"];
    assert_eq!(it["rule"], false);
    assert_eq!(it["regimes"][0]["limit_plies"], serde_json::Value::Null);
    let r = &preset(&j, "russian")["count"]["regimes"];
    let limits: Vec<_> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["name"].as_str().unwrap(), x["limit_plies"].as_u64()))
        .collect();
    assert_eq!(
        limits,
        [
            ("five", Some(10)),
            ("fifteen", Some(30)),
            ("kings-4-5", Some(30)),
            ("kings-6-7", Some(60)),
            ("general", None)
        ]
    );
}

#[test]
fn variants_text_says_each_profile_in_words() {
    let out = dtb(&["variants"]);
    assert_eq!(out.status.code(), Some(0));
    let t = text(&out.stdout);
    assert!(t.contains(
        "    sixteen              32 plies (16 moves each); a lone king against 3 kings, 2 \
         kings and a man, or a king and 2 men; reset by only a change of regime"
    ));
    assert!(t.contains("  count                  no count rule (game-theoretic values only)"));
    assert!(t.contains("  count                  PLIES | REGIME:PLIES,... | none"));
}

#[test]
fn variant_takes_a_count_and_refuses_a_bad_one() {
    for spec in [
        "english,count=100",
        "international,count=general:50,sixteen:32,five:10",
        "international,count=sixteen:40,blocked=draw",
        "italian,count=80",
        "english,count=none",
    ] {
        let out = dtb(&["perft", "--variant", spec, "--depth", "1"]);
        assert_eq!(out.status.code(), Some(0), "{spec}: {}", text(&out.stderr));
    }
    for (spec, msg) in [
        (
            "international,count=six:10",
            "unknown count regime \"six\": the regimes of international are five, sixteen, \
             general",
        ),
        (
            "english,count=abc",
            "count limit \"abc\" for general: a limit is a whole number of plies, 1 to 65535, \
             or none",
        ),
        (
            "english,count=0",
            "count limit 0 for general: a limit is at least 1 ply (0 would draw every position \
             at once); none turns it off",
        ),
        (
            "english,count=five:10",
            "english's count profile has no regime five (its regimes: general)",
        ),
        (
            "international,count=five:10,five:12",
            "count regime five is given twice (each regime at most once)",
        ),
    ] {
        let out = dtb(&["perft", "--variant", spec, "--depth", "1"]);
        assert_eq!(out.status.code(), Some(2), "{spec}");
        assert_eq!(
            text(&out.stderr),
            format!("dtb: error: --variant {spec:?}: {msg}\n"),
            "{spec}"
        );
    }
}

/// DTC tables from the command line: `dtb gen --values dtc` under a limit, `dtb probe
/// --counter` with its category, result and DTC in text and JSON, `--moves` with
/// `zeroing`, `--line` ending in the defender's claim, `dtb info` with the cursed counts,
/// `dtb verify` clean; and every bad counter or profile refused with a clear error.
#[test]
fn dtc_tables_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let v = "english,count=20";
    let out = dtb(&[
        "gen",
        "--variant",
        v,
        "--pieces",
        "3",
        "--values",
        "dtc",
        "--out",
        d,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("DTC"));
    let out = dtb(&["verify", "--variant", v, "--dir", d]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    cursed_counts_are_verified(dir.path(), v);
    // A king against a king: won, 9 plies to conversion (the capture), a draw once the
    // counter leaves fewer plies than that.
    let fen = "W:WK32:BK26";
    let out = dtb(&[
        "probe",
        "--variant",
        v,
        "--dir",
        d,
        "--json",
        "--counter",
        "11",
        fen,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["category"], "win");
    assert_eq!(j["dtc"], 9);
    assert_eq!(j["result"], "win");
    let out = dtb(&[
        "probe",
        "--variant",
        v,
        "--dir",
        d,
        "--json",
        "--counter",
        "12",
        fen,
    ]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (j["category"].as_str(), j["result"].as_str()),
        (Some("win"), Some("draw"))
    );
    let out = dtb(&[
        "probe",
        "--variant",
        v,
        "--dir",
        d,
        "--moves",
        "--json",
        fen,
    ]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &j["moves"][0];
    assert_eq!(
        (first["move"].as_str(), first["category"].as_str()),
        (Some("32-27"), Some("loss"))
    );
    assert_eq!(first["zeroing"], false);
    let out = dtb(&[
        "probe",
        "--variant",
        v,
        "--dir",
        d,
        "--line",
        "--counter",
        "12",
        fen,
    ]);
    assert!(
        text(&out.stdout).contains("draw claimed by the count rule"),
        "{}",
        text(&out.stdout)
    );
    let out = dtb(&["info", "--dir", d, "--json"]);
    assert!(text(&out.stdout).contains("\"cursed_wins\""));
    // Bad input: each a clear error, nothing guessed.
    for (args, says) in [
        (vec!["--counter", "-1"], "--counter"),
        (vec!["--counter", "ten"], "whole number"),
        (vec!["--counter", "20"], "at or over the limit of 20 plies"),
        (vec!["--counter", "99999999"], "whole number"),
    ] {
        let mut a = vec!["probe", "--variant", v, "--dir", d];
        a.extend(args);
        a.push(fen);
        let out = dtb(&a);
        assert_ne!(out.status.code(), Some(0));
        assert!(
            text(&out.stderr).contains(says),
            "{a:?}: {}",
            text(&out.stderr)
        );
    }
    // Tables of one profile probed under another: refused.
    let out = dtb(&["probe", "--dir", d, fen]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("another count profile"),
        "{}",
        text(&out.stderr)
    );
    // --counter without DTC tables.
    let plain = tempfile::tempdir().unwrap();
    let p = plain.path().to_str().unwrap();
    dtb(&["gen", "--pieces", "2", "--out", p]);
    let out = dtb(&["probe", "--dir", p, "--counter", "3", fen]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("needs DTC tables"),
        "{}",
        text(&out.stderr)
    );
}

/// The probe's JSON answer for `fen` from the tables of `dir` under `variant`.
fn probe_json(variant: &str, dir: &str, fen: &str, counter: &str) -> serde_json::Value {
    let out = dtb(&[
        "probe",
        "--variant",
        variant,
        "--dir",
        dir,
        "--json",
        "--counter",
        counter,
        fen,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Moves to conversion from the command line: `dtb gen --values mtc` writes DTC files under
/// `count=mtc`, probed with `count=mtc` at any counter; a win cursed under 20 plies is a win
/// there, in the same plies (its conversion, a capture, ends the game). The directory then
/// refuses a DTC build of another profile and keeps its files; `--values mtc` beside limits
/// of its own, or with dtc, is refused; `dtb plan` writes jobs that build under `count=mtc`.
#[test]
fn mtc_tables_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let gen = |variant: &str, values: &str, out: &str| {
        dtb(&[
            "gen",
            "--variant",
            variant,
            "--pieces",
            "3",
            "--values",
            values,
            "--out",
            out,
        ])
    };
    let out = gen("english", "mtc", d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = dtb(&["verify", "--variant", "english,count=mtc", "--dir", d]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let info = text(&dtb(&["info", "--dir", d]).stdout);
    assert!(
        info.contains("no count rule: moves to conversion (count=mtc)"),
        "{info}"
    );
    let limited = tempfile::tempdir().unwrap();
    let l = limited.path().to_str().unwrap();
    assert_eq!(gen("english,count=20", "dtc", l).status.code(), Some(0));
    let fen = "W:WK1,K19:BK27";
    let cursed = probe_json("english,count=20", l, fen, "0");
    assert_eq!(cursed["category"], "cursed-win");
    let plies = cursed["dtc"].as_u64().unwrap();
    assert!(plies > 20, "{cursed}");
    for counter in ["0", "1000"] {
        let j = probe_json("english,count=mtc", d, fen, counter);
        assert_eq!(
            (&j["category"], &j["result"]),
            (&"win".into(), &"win".into())
        );
        assert_eq!(j["dtc"].as_u64(), Some(plies), "{j}");
    }
    // The same profile by its other name.
    assert_eq!(probe_json("english,count=none", d, fen, "0")["dtc"], plies);
    // Probed under English's own rule: refused, with the count= that reads them.
    let out = dtb(&["probe", "--dir", d, fen]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("probe with count=none in the variant"),
        "{}",
        text(&out.stderr)
    );
    // A DTC build of another profile into the directory: refused, its files kept.
    let file = dir.path().join("english-0102.dtc");
    let before = std::fs::read(&file).unwrap();
    let out = gen("english,count=20", "dtc", d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let e = text(&out.stderr);
    assert!(e.contains("another count profile (general:none)"), "{e}");
    assert!(e.contains("another --out"), "{e}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // Bad combinations: one clear error each.
    for (variant, values, says) in [
        ("english,count=20", "mtc", "drop count= or use --values dtc"),
        ("english", "mtc,dtc", "two count profiles"),
        ("english", "MTC,DTC", "two count profiles"),
        ("english", "DTW,Mtc", "dtw and mtc are solved apart"),
        ("english", "dtw,mtc,mtc", "dtw and mtc are solved apart"),
        ("english", "dtw,mtc", "dtw and mtc are solved apart"),
        ("english", "mtd", "dtw, dtc, mtc"),
    ] {
        let out = gen(variant, values, l);
        assert_ne!(out.status.code(), Some(0), "{values}");
        assert!(
            text(&out.stderr).contains(says),
            "{values}: {}",
            text(&out.stderr)
        );
    }
    // Jobs of an MTC plan build under count=mtc (International's own rule has other
    // regimes, so the variant's text names it).
    let out = dtb(&[
        "plan",
        "--variant",
        "international",
        "--pieces",
        "3",
        "--values",
        "mtc",
        "--emit",
        "make",
        "--out",
        d,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let make = text(&out.stdout);
    assert!(
        make.contains("gen --variant international,count=mtc --slice 0101 --values wld,dtc"),
        "{make}"
    );
}

/// `dtb verify` checks the cursed wins and blessed losses a DTC header states: a king
/// against two kings (0102, which also holds `W:WK1,K19:BK27` colour-reversed) has cursed
/// wins under 20 plies, and a header claiming one more for Black to move fails the slice,
/// naming both figures; restored, the file passes again.
fn cursed_counts_are_verified(dir: &std::path::Path, v: &str) {
    use dtb_probe::internal::format::{Header, HEADER_LEN};
    let path = dir.join("english-0102.dtc");
    let good = std::fs::read(&path).unwrap();
    let mut h = Header::decode(&good).unwrap();
    let c = h.cursed;
    assert!(c[1][0] > 0, "0102 has cursed wins under 20 plies: {c:?}");
    h.cursed[1][0] += 1;
    let mut bad = good.clone();
    bad[..HEADER_LEN].copy_from_slice(&h.encode());
    std::fs::write(&path, &bad).unwrap();
    let d = dir.to_str().unwrap();
    let out = dtb(&["verify", "--variant", v, "--dir", d]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("slice 0102: FAILED"), "{t}");
    let figures = |bw: u64| {
        format!(
            "{} and {bw} cursed wins, {} and {} blessed losses (white, black to move)",
            c[0][0], c[0][1], c[1][1]
        )
    };
    let want = format!(
        "english-0102.dtc: header states {}; the values: {}",
        figures(c[1][0] + 1),
        figures(c[1][0])
    );
    assert!(t.contains(&want), "{want}\n{t}");
    std::fs::write(&path, &good).unwrap();
    let out = dtb(&["verify", "--variant", v, "--dir", d]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

/// `dtb verify` on a directory with both distance kinds beside the WLD files (the checked-in
/// English 2-piece tables: WLD, DTW and DTC under the 80-ply count): every slice passes, each
/// checked once for each distance kind. A WLD file's header states the longest distance to
/// the end of the game (DTW's), which the DTC pass must not compare with its own distances
/// (it did, failing two good slices). A WLD header claiming a longer one fails its slice,
/// said once though both passes read the file.
#[test]
fn verify_a_directory_with_dtw_and_dtc_files() {
    use dtb_probe::internal::format::{Header, HEADER_LEN};
    let src =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../probe/tests/data/english-2");
    let dir = tempfile::tempdir().unwrap();
    let mut names = Vec::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        if name.starts_with("english-") {
            std::fs::copy(e.path(), dir.path().join(&name)).unwrap();
            names.push(name);
        }
    }
    names.sort();
    assert_eq!(names.len(), 9, "{names:?}");
    let d = dir.path().to_str().unwrap();
    let out = dtb(&["verify", "--dir", d]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{t}");
    for s in ["0101", "0110", "1010"] {
        assert!(t.contains(&format!("slice {s}: ok")), "{s}\n{t}");
    }
    assert!(!t.contains("FAILED"), "{t}");
    // A `count=` naming the files' own profile checks them; one naming another is refused
    // (exit 2, as `dtb probe` refuses it), not checked under the files' profile unsaid.
    let out = dtb(&["verify", "--variant", "english,count=80", "--dir", d]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let out = dtb(&["verify", "--variant", "english,count=20", "--dir", d]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains(
            "under another count profile (general:80) than the one named (general:20): leave \
             count= out"
        ),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));

    let path = dir.path().join("english-1010.wld");
    let good = std::fs::read(&path).unwrap();
    let mut h = Header::decode(&good).unwrap();
    let stated = h.max_plies;
    assert!(
        stated > 0,
        "a DTW build states the longest distance in the WLD header"
    );
    h.max_plies += 1;
    let mut bad = good.clone();
    bad[..HEADER_LEN].copy_from_slice(&h.encode());
    std::fs::write(&path, &bad).unwrap();
    let out = dtb(&["verify", "--dir", d]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("slice 1010: FAILED"), "{t}");
    let want = format!(
        "english-1010.wld: header states a longest distance of {} plies; the values: {stated} plies",
        stated + 1
    );
    assert_eq!(t.matches(&want).count(), 1, "{want}\n{t}");
    assert!(t.contains("slice 0110: ok"), "{t}");
}
