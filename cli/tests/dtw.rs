//! Distance tables end to end: the longest win, parity, best lines, and `dtb verify` catching
//! a changed value that keeps valid checksums.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use dtb_gen::build::{self, Plan, Quiet, Values};
use dtb_gen::write::{write_table, CompressionParams, TableData};
use dtb_probe::internal::format::{unpack_value, ValueKind};
use dtb_probe::internal::index::SliceIndex;
use dtb_probe::internal::rules::Color;
use dtb_probe::internal::table::{BlockCache, TableFile};
use dtb_probe::internal::value::{Code, Wld};
use dtb_probe::movegen::has_capture;
use dtb_probe::{fen, Rules, Tablebase};

/// English 2-4 tables built afresh once per run at a fixed path inside `target/` (a static
/// `TempDir` would never be dropped, leaking a directory per run).
fn tables() -> &'static Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dtb-english-4-dtw");
        let _ = std::fs::remove_dir_all(&dir);
        let plan = Plan::new(Rules::ENGLISH, 4, &dir).expect("plan");
        build::run(&plan, &Quiet).expect("build 2-4");
        dir
    })
    .as_path()
}

/// A temporary copy of the table files of `dir` (not its lock or temporary files).
fn copy_of(dir: &Path) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() && !p.file_name().unwrap().to_string_lossy().starts_with('.') {
            std::fs::copy(&p, copy.path().join(p.file_name().unwrap())).unwrap();
        }
    }
    copy
}

fn read_all(path: &Path) -> (dtb_probe::internal::format::Header, Vec<Vec<u16>>) {
    let t = TableFile::open(path, std::sync::Arc::new(BlockCache::new(1 << 20))).unwrap();
    let h = t.header().clone();
    let mut sides = Vec::new();
    let mut block = 0;
    for s in 0..2 {
        if !h.side_stored(s) {
            continue;
        }
        let mut v = Vec::new();
        for _ in 0..h.blocks_per_side() {
            let raw = t.read_block(block).unwrap();
            for j in 0..h.block_values(block) {
                v.push(unpack_value(h.value_width, &raw, j).unwrap());
            }
            block += 1;
        }
        sides.push(v);
    }
    (h, sides)
}

#[test]
fn longest_win_is_109_plies_and_wld_agrees_with_dtw_parity() {
    let dir = tables();
    let mut longest = 0;
    let mut files = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|e| e.to_str()) != Some("dtw") {
            continue;
        }
        files += 1;
        let (h, dtw) = read_all(&p);
        let (_, wld) = read_all(&p.with_extension("wld"));
        longest = longest.max(h.max_plies);
        let m = h.material;
        let ix = SliceIndex::new(
            dtb_probe::Material::from_counts(m),
            Rules::ENGLISH.geometry(),
        );
        let mut capture_positions = 0;
        for (side, (d, w)) in dtw.iter().zip(&wld).enumerate() {
            assert_eq!(d.len(), w.len());
            let color = [Color::White, Color::Black][side];
            for (i, (&dc, &wc)) in d.iter().zip(w).enumerate() {
                if has_capture(&Rules::ENGLISH, &ix.unindex(i as u64, color)) {
                    // "Don't care": the two files fill it differently (FORMAT.md).
                    capture_positions += 1;
                    continue;
                }
                let expect = match Code::from_bits(dc).wld() {
                    Wld::Draw => 0,
                    Wld::Win => 1,
                    Wld::Loss => 2,
                };
                assert_eq!(wc, expect, "{}", p.display());
            }
        }
        if h.material[0] + h.material[2] > 0 {
            assert!(
                capture_positions > 0,
                "{}: no capture position?",
                p.display()
            );
        }
    }
    assert_eq!(files, 23);
    // ../shared/data/README.md: the longest win over 2-4 pieces is 109 plies (two men v two).
    assert_eq!(longest, 109);
    let tb = Tablebase::open(dir, Rules::ENGLISH).unwrap();
    let d = tb.materials(ValueKind::Dtw);
    assert_eq!(d.len(), 23);
}

/// Playing the best moves from a won position ends the game in exactly the promised plies,
/// and every step's distance drops by one.
#[test]
fn best_lines_end_in_exactly_the_promised_plies() {
    let rules = Rules::ENGLISH;
    let tb = Tablebase::open(tables(), rules).unwrap();
    for f in [
        "W:W18,25:BK13",
        "B:WK32:B19,K26",
        "W:WK4,30:BK26,K29",
        "W:WK18:B24,K29",
        "B:WK1,19:BK7",
    ] {
        let mut pos = fen::parse(f, &rules).unwrap();
        let start = tb.probe_dtw(&pos).unwrap().plies.expect("decided");
        let mut plies = 0;
        while let Some((m, after)) = tb.best_move(&pos).unwrap() {
            pos = m.apply(&rules, &pos).unwrap();
            plies += 1;
            let left = tb.probe_dtw(&pos).unwrap().plies.unwrap();
            assert_eq!(after.plies, Some(start - plies + 1), "{f} ply {plies}");
            assert_eq!(left, start - plies, "{f} ply {plies}");
            assert!(plies <= start, "{f}: line longer than promised");
        }
        assert_eq!(plies, start, "{f}");
    }
}

/// Root-move ranking: each move's value is the probe of the position after it, the list is
/// best first for the mover, its head is `best_move` and the position's own value, and the
/// WLD-table ranking gives the same outcomes in the same order of outcome.
#[test]
fn ranked_moves_are_the_probes_after_each_move_best_first() {
    let rules = Rules::ENGLISH;
    let tb = Tablebase::open(tables(), rules).unwrap();
    let rank = |d: dtb_probe::Dtw| match (d.wld, d.plies) {
        (Wld::Win, Some(p)) => 1000 - p as i32,
        (Wld::Draw, _) => 0,
        (Wld::Loss, Some(p)) => -1000 + p as i32,
        other => panic!("decided value without plies: {other:?}"),
    };
    let mut seen_mixed = false;
    for f in [
        "W:W18,25:BK13",
        "B:WK32:B19,K26",
        "W:WK4,30:BK26,K29",
        "W:WK18:B24,K29",
        "B:WK1,19:BK7",
        "W:WK32:BK26",
        "B:WK32:BK26",
        "W:W22,30:B17,1",
    ] {
        let pos = fen::parse(f, &rules).unwrap();
        let ranked = tb.probe_moves(&pos).unwrap();
        let mut moves = Vec::new();
        dtb_probe::movegen::legal_moves(
            &rules,
            &pos,
            dtb_probe::movegen::Counting::Unique,
            &mut moves,
        );
        assert_eq!(ranked.len(), moves.len(), "{f}");
        for r in &ranked {
            let after = r.mv.apply(&rules, &pos).unwrap();
            assert_eq!(
                r.after,
                tb.probe_dtw(&after).unwrap(),
                "{f} {}",
                r.mv.to_pdn(false)
            );
        }
        for w in ranked.windows(2) {
            assert!(
                rank(w[0].for_mover()) >= rank(w[1].for_mover()),
                "{f}: not best first"
            );
        }
        let outcomes: std::collections::HashSet<_> = ranked.iter().map(|r| r.after.wld).collect();
        seen_mixed |= outcomes.len() > 1;
        assert_eq!(ranked[0].for_mover(), tb.probe_dtw(&pos).unwrap(), "{f}");
        let (best, value) = tb.best_move(&pos).unwrap().unwrap();
        assert_eq!((best, value), (ranked[0].mv, ranked[0].for_mover()), "{f}");
        let wld = tb.probe_moves_wld(&pos).unwrap();
        assert_eq!(wld.len(), ranked.len(), "{f}");
        let key = |w: Wld| match w {
            Wld::Loss => 0,
            Wld::Draw => 1,
            Wld::Win => 2,
        };
        for w in wld.windows(2) {
            assert!(
                key(w[0].after.wld) <= key(w[1].after.wld),
                "{f}: WLD ranking order"
            );
        }
        let mut a: Vec<_> = ranked.iter().map(|r| r.after.wld).collect();
        let mut b: Vec<_> = wld.iter().map(|r| r.after.wld).collect();
        a.sort_by_key(|w| key(*w));
        b.sort_by_key(|w| key(*w));
        assert_eq!(a, b, "{f}: outcomes differ between DTW and WLD ranking");
        assert!(wld.iter().all(|r| r.after.plies.is_none()), "{f}");
    }
    assert!(
        seen_mixed,
        "no position had moves of different outcomes: the test shows nothing"
    );
}

fn dtb(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_dtb"))
        .args(args)
        .output()
        .expect("run dtb")
}

#[test]
fn verify_passes_then_fails_on_one_changed_value_naming_the_slice() {
    let good = tables();
    let out = dtb(&["verify", "--dir", good.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("23 slices, 6408836 positions checked"),
        "{text}"
    );
    // Sampled: 100 positions in each slice (every 2-4 slice has more).
    let out = dtb(&["verify", "--sample", "100", "--dir", good.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("23 slices, 2300 positions checked"), "{text}");

    // Copy, then rewrite one DTW file with one non-capture value changed (checksums valid).
    let bad = copy_of(good);
    let path = bad.path().join("english-1111.dtw");
    let (h, mut sides) = read_all(&path);
    // Index 1000 of White to move: find a non-capture position near it and change its value.
    let rules = Rules::ENGLISH;
    let ix = dtb_probe::internal::index::SliceIndex::new(
        dtb_probe::Material::new(1, 1, 1, 1),
        rules.geometry(),
    );
    let mut i = 1000;
    let mut moves = Vec::new();
    loop {
        let p = ix.unindex(i, dtb_probe::Color::White);
        dtb_probe::movegen::legal_moves(
            &rules,
            &p,
            dtb_probe::movegen::Counting::Unique,
            &mut moves,
        );
        if !moves.is_empty() && !moves[0].is_capture() && sides[0][i as usize] != 0 {
            break;
        }
        i += 1;
    }
    sides[0][i as usize] = 0; // claim a draw where the successors say otherwise
    let data = TableData {
        header: h,
        sides: sides.iter().map(|v| v.as_slice()).collect(),
    };
    write_table(&path, &data, &CompressionParams::level(3)).unwrap();
    let out = dtb(&["verify", "--dir", bad.path().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("slice 1111: FAILED"), "{text}");
    assert!(text.contains(&format!("slice 1111 index {i}")), "{text}");
    assert!(text.contains("1 FAILED"), "{text}");
    // A sample at least as large as a slice checks all of it.
    let out = dtb(&[
        "verify",
        "--sample",
        "99999999",
        "--dir",
        bad.path().to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains(&format!("slice 1111 index {i}")), "{text}");
    assert!(text.contains("6408836 positions checked"), "{text}");
}

/// Rewrite the header of `path` through `edit`, with a valid header checksum (the payload is
/// untouched, so the file still opens and its payload checksum still holds).
fn edit_header(path: &Path, edit: impl FnOnce(&mut dtb_probe::internal::format::Header)) {
    let mut bytes = std::fs::read(path).unwrap();
    let mut h = dtb_probe::internal::format::Header::decode(&bytes).unwrap();
    edit(&mut h);
    bytes[..dtb_probe::internal::format::HEADER_LEN].copy_from_slice(&h.encode());
    std::fs::write(path, bytes).unwrap();
}

/// Issue 22 (9): `dtb verify` checks every figure a header states. A WLD file whose header
/// claims 123,456,789 wins for White to move (checksum fixed, so it opens and `dtb info` shows
/// it), a DTW file whose header states a longest distance of 40 plies where its values reach
/// 34, and a colour-symmetric slice (one side stored) whose Black-to-move counts are changed:
/// each fails its slice, naming the file and both figures, exit status 1; the other slices
/// stay ok.
#[test]
fn verify_checks_the_header_figures() {
    let bad = copy_of(tables());
    let wld = bad.path().join("english-1011.wld");
    let mut was = [0u64; 3];
    let mut black_wins = 0;
    edit_header(&wld, |h| {
        was = h.counts[0];
        black_wins = h.counts[1][0];
        h.counts[0][0] = 123_456_789;
    });
    // `dtb info` shows the claim (wins of both sides to move).
    let info = dtb(&["info", "--json", "--dir", bad.path().to_str().unwrap()]);
    let shown = format!("\"wins\":{}", 123_456_789 + black_wins);
    assert!(
        String::from_utf8_lossy(&info.stdout).contains(&shown),
        "{shown}"
    );
    let dtw = bad.path().join("english-0102.dtw");
    edit_header(&dtw, |h| {
        assert_eq!(h.max_plies, 34);
        h.max_plies = 40;
    });
    let sym = bad.path().join("english-1010.wld");
    edit_header(&sym, |h| {
        assert_eq!(h.sides, 1, "a symmetric slice stores White to move only");
        h.counts[1][2] += 1;
        h.counts[1][0] -= 1;
    });
    let out = dtb(&["verify", "--dir", bad.path().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("slice 1011: FAILED"), "{text}");
    assert!(
        text.contains(&format!(
            "english-1011.wld: header counts for white to move: 123456789 wins, {} losses, {} \
             draws",
            was[1], was[2]
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "the values: {} wins, {} losses, {} draws",
            was[0], was[1], was[2]
        )),
        "{text}"
    );
    assert!(text.contains("slice 0102: FAILED"), "{text}");
    assert!(
        text.contains(
            "english-0102.dtw: header states a longest distance of 40 plies; the values: 34 plies"
        ),
        "{text}"
    );
    assert!(text.contains("slice 1010: FAILED"), "{text}");
    assert!(
        text.contains("english-1010.wld: header counts for black to move"),
        "{text}"
    );
    assert!(text.contains("3 FAILED"), "{text}");
    assert!(text.contains("slice 1111: ok"), "{text}");
}

#[test]
fn probe_line_cli_prints_every_move_to_the_end() {
    let out = dtb(&[
        "probe",
        "--dir",
        tables().to_str().unwrap(),
        "--json",
        "--line",
        "W:W18,25:BK13",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let line = v["line"].as_array().unwrap();
    // english-4piece-sample.tsv: W:W18,25:BK13 wins in 53 plies.
    assert_eq!(line.len(), 53);
    for (k, step) in line.iter().enumerate() {
        // The mover's value, as --moves gives it (issue 36): 53, 52, ..., 1.
        assert_eq!(step["dtw"].as_u64(), Some(53 - k as u64));
    }
    assert_eq!(line[52]["fen"], "B:WK4,K28:B");
}

/// A WLD-only build keeps 2 bits a position for solved slices and looks exits up as bare
/// outcomes; its WLD values must still be exactly those of the full build, slice by slice,
/// also when it resumes from its own WLD files (2-3 first, then 2-4 in the same directory):
/// written as version 1 (`--format-version 1`), the full build's stored values; as version 3
/// (the default), those `dtb repack` makes of the full build's files.
#[test]
fn wld_only_build_gives_the_same_wld_values_and_resumes_from_wld_files() {
    use dtb_gen::compress::Fill;
    use dtb_gen::repack::{repack_dir, RepackOptions};
    use dtb_probe::internal::format::{FORMAT_VERSION, FORMAT_VERSION_THREAT};
    use dtb_probe::internal::value::is_threat_dont_care;
    let full = tables();
    let repacked = tempfile::tempdir().unwrap();
    let opts = RepackOptions {
        zstd: build::ZSTD,
        fill: Fill::Major,
        block_len: None,
        check: false,
        max_pieces: None,
        estimate: None,
    };
    repack_dir(full, repacked.path(), Rules::ENGLISH, &opts, &mut |_| {}).unwrap();
    for threats in [false, true] {
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("dtb-english-4-wld-only-{threats}"));
        let _ = std::fs::remove_dir_all(&dir);
        for pieces in [3, 4] {
            let mut plan = Plan::new(Rules::ENGLISH, pieces, &dir).expect("plan");
            plan = plan.with_values(Values::WLD).with_threats(threats);
            let stats = build::run(&plan, &Quiet).expect("WLD-only build");
            let solved: Vec<_> = stats.iter().filter(|s| !s.skipped).collect();
            if pieces == 4 {
                // The 2-3 slices were loaded from their WLD files, the 4-piece ones solved.
                assert!(solved.iter().all(|s| s.material.pieces() == 4));
                assert!(stats.iter().any(|s| s.skipped));
            }
            assert!(stats.iter().all(|s| s.dtw_bytes == 0));
            let found: u64 = solved.iter().map(|s| s.threats).sum();
            assert_eq!(found > 0, threats, "{found} threat positions");
        }
        // Version 1: the full build's files; version 3: repack's of them.
        let want = if threats { repacked.path() } else { full };
        let mut compared = 0;
        for e in std::fs::read_dir(full).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            if p.extension().and_then(|x| x.to_str()) == Some("dtw") {
                assert!(
                    !dir.join(&name).exists(),
                    "{name} written by a WLD-only build"
                );
                continue;
            }
            if p.extension().and_then(|x| x.to_str()) != Some("wld") {
                continue;
            }
            let (h_full, v_full) = read_all(&want.join(&name));
            let (h_wld, v_wld) = read_all(&dir.join(&name));
            assert!(v_full == v_wld, "{name}: WLD values differ");
            assert_eq!(h_full.counts, h_wld.counts, "{name}");
            assert_eq!(h_full.version, h_wld.version, "{name}");
            let version = if threats {
                FORMAT_VERSION_THREAT
            } else {
                FORMAT_VERSION
            };
            assert_eq!(h_wld.version, version, "{name}");
            assert_eq!(
                h_wld.max_plies, 0,
                "{name}: a WLD-only build records no distance"
            );
            compared += 1;
        }
        let slices = Plan::new(Rules::ENGLISH, 4, &dir).unwrap().slices().len();
        assert_eq!(compared, slices, "every canonical slice compared");
        assert_eq!(slices, 23);

        // `dtb verify` checks a WLD-only directory on outcomes, and finds one changed value
        // (of a position whose value is stored: no capture, no threat; and whose kings did
        // not just crown, so that no slice but 1111 leads to it).
        let out = dtb(&["verify", "--dir", dir.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(
            text.contains("23 slices, 6408836 positions checked"),
            "{text}"
        );
        let path = dir.join("english-1111.wld");
        let (h, mut sides) = read_all(&path);
        let ix = SliceIndex::new(
            dtb_probe::Material::new(1, 1, 1, 1),
            Rules::ENGLISH.geometry(),
        );
        let mut moves = Vec::new();
        // A white king on 1-4 or a black king on 29-32 (PDN FEN `W:W5,K26:B1,K29`).
        let just_crowned = |f: &str| {
            f.split(':').skip(1).any(|part| {
                let (colour, squares) = part.split_at(1);
                squares.split(',').any(|sq| {
                    sq.strip_prefix('K')
                        .and_then(|n| n.parse::<u32>().ok())
                        .is_some_and(|n| if colour == "W" { n <= 4 } else { n >= 29 })
                })
            })
        };
        let i = (500..)
            .find(|&i| {
                let pos = ix.unindex(i, Color::White);
                sides[0][i as usize] == 1 // a win
                    && !has_capture(&Rules::ENGLISH, &pos)
                    && !is_threat_dont_care(&Rules::ENGLISH, &pos, &mut moves)
                    && !just_crowned(&fen::write(&pos))
            })
            .unwrap();
        sides[0][i as usize] = 0; // claim a draw
        let data = TableData {
            header: h,
            sides: sides.iter().map(|v| v.as_slice()).collect(),
        };
        write_table(&path, &data, &CompressionParams::level(3)).unwrap();
        let out = dtb(&["verify", "--dir", dir.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(text.contains(&format!("slice 1111 index {i}")), "{text}");
        assert!(text.contains("1 FAILED"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A WLD-only build may extend a directory whose smaller slices have DTW files: it loads
/// their distances, writes WLD files for the rest, and `dtb verify` checks each slice by
/// what it has (distances where a DTW file exists, outcomes elsewhere).
#[test]
fn wld_only_build_extends_a_full_directory_and_verify_checks_both_kinds() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dtb-english-4-mixed");
    let _ = std::fs::remove_dir_all(&dir);
    build::run(&Plan::new(Rules::ENGLISH, 3, &dir).unwrap(), &Quiet).expect("full 2-3");
    let mut plan = Plan::new(Rules::ENGLISH, 4, &dir).unwrap();
    plan = plan.with_values(Values::WLD);
    let stats = build::run(&plan, &Quiet).expect("WLD-only 4");
    assert!(stats.iter().all(|s| s.skipped == (s.material.pieces() < 4)));
    let dtw_files = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .and_then(|x| x.to_str())
                == Some("dtw")
        })
        .count();
    let small = Plan::new(Rules::ENGLISH, 3, &dir).unwrap().slices().len();
    assert_eq!(dtw_files, small);
    let out = dtb(&["verify", "--dir", dir.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("23 slices, 6408836 positions checked"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// One unreadable file is reported once for its slice and once for each slice that needs it
/// ("positions not checked"), not as thousands of mismatches.
#[test]
fn verify_reports_an_unreadable_file_once_per_slice() {
    let good = tables();
    let bad = copy_of(good);
    let cut = bad.path().join("english-0211.dtw");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&cut)
        .unwrap()
        .set_len(100)
        .unwrap();
    let out = dtb(&["verify", "--dir", bad.path().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("slice 0211: FAILED"), "{text}");
    assert!(
        text.contains("positions not checked: a successor could not be read"),
        "{text}"
    );
    assert!(!text.contains("mismatching"), "{text}");
    assert!(text.lines().count() < 30, "{text}");
}

/// A finished-looking file whose checksums hold but whose size is not the slice's (a file of
/// another build, or a crafted one) is not taken as finished: the build solves that slice
/// again instead of loading short values.
#[test]
fn a_table_of_the_wrong_size_is_rebuilt_not_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let mut plan = Plan::new(Rules::ENGLISH, 3, dir.path()).unwrap();
    plan = plan.with_values(Values::WLD);
    build::run(&plan, &Quiet).unwrap();
    let path = dir.path().join("english-1011.wld");
    let original = std::fs::read(&path).unwrap();
    let (mut h, mut sides) = read_all(&path);
    h.positions_per_side -= 1;
    for s in &mut sides {
        s.pop();
    }
    let data = TableData {
        header: h,
        sides: sides.iter().map(|v| v.as_slice()).collect(),
    };
    write_table(&path, &data, &CompressionParams::level(3)).unwrap();
    let stats = build::run(&plan, &Quiet).unwrap();
    let again: Vec<_> = stats
        .iter()
        .filter(|s| !s.skipped)
        .map(|s| s.material)
        .collect();
    assert_eq!(again.len(), 1, "{again:?}");
    assert_eq!(again[0].to_string(), "1011");
    assert_eq!(std::fs::read(&path).unwrap(), original);
}

#[test]
fn cache_only_and_quiet_probes_agree_with_full_probes() {
    let rules = Rules::ENGLISH;
    let fens = [
        "W:W18,25:BK13",
        "B:WK32:B19,K26",
        "W:WK4,30:BK26,K29",
        "W:WK18:B24,K29",
        "B:WK1,19:BK7",
        "W:WK32:BK26",
        "B:WK32:BK26",
        "W:W22,30:B17,1",
        "B:W22:B18",
        "W:W22:B18",
    ];
    let tb = Tablebase::with_cache_bytes(rules, 8 << 20);
    let mut tb = tb;
    tb.add_directory(tables()).unwrap();
    let pos0 = fen::parse("W:WK32:BK26", &rules).unwrap();
    // Nothing opened yet: not cached, and counted.
    assert_eq!(tb.probe_wld_cached(&pos0).unwrap(), None);
    assert_eq!(tb.probe_dtw_cached(&pos0).unwrap(), None);
    let s = tb.cache_stats();
    assert_eq!((s.hits, s.misses, s.not_cached), (0, 0, 2), "{s:?}");
    let mut captures = 0;
    for f in fens {
        let pos = fen::parse(f, &rules).unwrap();
        let wld = tb.probe_wld(&pos).unwrap();
        let dtw = tb.probe_dtw(&pos).unwrap();
        // Everything the full probes needed is in memory now.
        assert_eq!(tb.probe_wld_cached(&pos).unwrap(), Some(wld), "{f}");
        assert_eq!(tb.probe_dtw_cached(&pos).unwrap(), Some(dtw), "{f}");
        if has_capture(&rules, &pos) {
            captures += 1;
            assert!(
                matches!(
                    tb.probe_quiet_wld(&pos),
                    Err(dtb_probe::ProbeError::CapturePosition)
                ),
                "{f}"
            );
            assert!(tb.probe_quiet_dtw(&pos).is_err(), "{f}");
        } else {
            assert_eq!(tb.probe_quiet_wld(&pos).unwrap(), wld, "{f}");
            assert_eq!(tb.probe_quiet_dtw(&pos).unwrap(), dtw, "{f}");
        }
    }
    assert!(captures >= 2, "the list must hold capture positions");
    let s = tb.cache_stats();
    assert!(s.misses > 0 && s.hits > 0, "{s:?}");
    assert!(
        s.bytes > 0 && s.blocks > 0 && s.capacity_bytes == 8 << 20,
        "{s:?}"
    );
    let shown = format!("{tb:?}");
    assert!(
        shown.contains("english") && shown.contains("hits") && shown.contains("open_tables"),
        "{shown}"
    );
    tb.reset_cache_stats();
    assert_eq!(tb.cache_stats().hits, 0);

    // A 0-byte cache holds nothing: a cache-only probe of a quiet position is never answered
    // once its table is open, and the full probe still is.
    let mut tb0 = Tablebase::with_cache_bytes(rules, 0);
    tb0.add_directory(tables()).unwrap();
    assert_eq!(tb0.probe_dtw(&pos0).unwrap().plies, Some(9));
    assert_eq!(tb0.probe_dtw_cached(&pos0).unwrap(), None);

    // A block dropped from the cache is not cached any more (from a fresh thread, whose
    // recent blocks are empty).
    let mut tb1 = Tablebase::with_cache_bytes(rules, 1 << 20);
    tb1.add_directory(tables()).unwrap();
    tb1.probe_wld(&pos0).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            assert_eq!(tb1.probe_wld_cached(&pos0).unwrap(), Some(Wld::Win));
        });
    });
    tb1.clear_cache();
    std::thread::scope(|s| {
        s.spawn(|| {
            assert_eq!(tb1.probe_wld_cached(&pos0).unwrap(), None);
        });
    });
}

#[test]
fn probe_moves_prints_every_move_with_its_value() {
    let dir = tables().to_str().unwrap();
    let out = dtb(&[
        "probe",
        "--variant",
        "english",
        "--dir",
        dir,
        "--moves",
        "W:WK32:BK26",
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // WK32 has two moves: 32-27 wins in 9, 32-28 draws (the taking-the-move position).
    assert_eq!(
        lines[0], "W:WK32:BK26  win in 9 plies  best 32-27",
        "{text}"
    );
    assert!(
        lines[1].trim_start().starts_with("32-27  win in 9 plies"),
        "{text}"
    );
    assert!(lines[2].trim_start().starts_with("32-28  draw"), "{text}");
    assert_eq!(lines.len(), 3, "{text}");

    let out = dtb(&[
        "probe",
        "--variant",
        "english",
        "--dir",
        dir,
        "--moves",
        "--json",
        "W:WK32:BK26",
    ]);
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["fen"], "W:WK32:BK26");
    assert_eq!(v["wld"], "win");
    assert_eq!(v["dtw"], 9);
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 2);
    assert_eq!(moves[0]["move"], "32-27");
    assert_eq!(moves[0]["wld"], "win");
    assert_eq!(moves[0]["dtw"], 9);
    assert_eq!(moves[0]["fen"], "B:WK27:BK26");
    assert_eq!(moves[1]["move"], "32-28");
    assert_eq!(moves[1]["wld"], "draw");
    assert_eq!(moves[1]["dtw"], serde_json::Value::Null);
}

/// `dtb info` shows each file's checksum: its header's crc32, which covers the header and,
/// through the payload crc32 in it, every later byte (recomputed here from the bytes); the
/// checksums of the 2-4 files are all different, and a copy of a file has its checksum.
#[test]
fn info_shows_a_checksum_that_covers_the_whole_file() {
    let out = dtb(&["info", "--json", "--dir", tables().to_str().unwrap()]);
    assert!(out.status.success());
    let mut seen = std::collections::HashSet::new();
    let mut files = 0;
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(name) = v["file"].as_str() else {
            continue;
        };
        let bytes = std::fs::read(tables().join(name)).unwrap();
        let stored = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        assert_eq!(
            stored(248),
            crc32fast::hash(&bytes[256..]),
            "{name}: payload crc"
        );
        assert_eq!(
            stored(252),
            crc32fast::hash(&bytes[..252]),
            "{name}: header crc"
        );
        let sum = v["checksum"].as_str().unwrap().to_string();
        assert_eq!(sum, format!("{:08x}", stored(252)), "{name}");
        assert!(seen.insert(sum), "{name}: checksum seen before");
        files += 1;
    }
    assert!(files >= 2 * 14, "{files} files");
    let copy = copy_of(tables());
    let again = dtb(&["info", "--dir", copy.path().to_str().unwrap()]);
    let first =
        String::from_utf8(dtb(&["info", "--dir", tables().to_str().unwrap()]).stdout).unwrap();
    assert_eq!(String::from_utf8(again.stdout).unwrap(), first);
}

/// Several directories are a search path: a slice's table in an earlier directory is used
/// before the same file in a later one (a damaged copy first fails its positions; second,
/// it is never read), and what only a later directory has is found there. The CLI takes
/// `--dir` repeated with the same rule.
#[test]
fn directories_are_a_search_path_first_one_wins() {
    let rules = Rules::ENGLISH;
    let good = tables();
    let bad = tempfile::tempdir().unwrap();
    let src = good.join("english-0101.dtw");
    let mut bytes = std::fs::read(&src).unwrap();
    bytes[100] ^= 0xff; // the header: its checksum no longer matches
    std::fs::write(bad.path().join("english-0101.dtw"), &bytes).unwrap();
    let pos = fen::parse("W:W32:BK26", &rules).unwrap();
    assert_eq!(pos.material().to_string(), "1001");
    let kings = fen::parse("W:WK32:BK26", &rules).unwrap();
    let mut bad_first = Tablebase::open(bad.path(), rules).unwrap();
    let files = std::fs::read_dir(good)
        .unwrap()
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name();
            let n = n.to_string_lossy();
            n.ends_with(".wld") || n.ends_with(".dtw")
        })
        .count();
    assert_eq!(bad_first.add_directory(good).unwrap(), files - 1);
    let mut good_first = Tablebase::open(good, rules).unwrap();
    assert_eq!(good_first.add_directory(bad.path()).unwrap(), 0);
    assert!(
        bad_first.probe_dtw(&kings).is_err(),
        "the damaged first copy was not used"
    );
    assert_eq!(good_first.probe_dtw(&kings).unwrap().plies, Some(9));
    // A slice only the later directory has is found there.
    assert_eq!(
        bad_first.probe_dtw(&pos).unwrap(),
        good_first.probe_dtw(&pos).unwrap()
    );
    let (b, g) = (bad.path().to_str().unwrap(), good.to_str().unwrap());
    let first_bad = dtb(&["probe", "--dir", b, "--dir", g, "W:WK32:BK26", "W:W32:BK26"]);
    let first_good = dtb(&["probe", "--dir", g, "--dir", b, "W:WK32:BK26", "W:W32:BK26"]);
    let text = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(first_good.status.code(), Some(0), "{}", text(&first_good));
    assert!(text(&first_good).starts_with("W:WK32:BK26  win in 9 plies  best 32-27\n"));
    assert_eq!(first_bad.status.code(), Some(1), "{}", text(&first_bad));
    // The damaged table's position fails (on standard error); the other is answered.
    assert!(String::from_utf8_lossy(&first_bad.stderr).contains("english-0101.dtw"));
    assert_eq!(
        text(&first_bad).lines().collect::<Vec<_>>(),
        text(&first_good).lines().skip(1).collect::<Vec<_>>(),
        "the 1001 answer comes from the later directory"
    );
}

/// `dtb probe --json` errors carry a kind a program can branch on, one per failure class.
#[test]
fn json_errors_carry_a_kind() {
    let dir = copy_of(tables());
    let d = dir.path().to_str().unwrap();
    // A damaged file, and a file of another slice under a slice's name.
    let mut bytes = std::fs::read(dir.path().join("english-0101.wld")).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(dir.path().join("english-0101.wld"), &bytes).unwrap();
    std::fs::copy(
        dir.path().join("english-0110.wld"),
        dir.path().join("english-1010.wld"),
    )
    .unwrap();
    for (fen, kind) in [
        ("W:W33:B1", "malformed_fen"),
        ("Q:W5:B1", "malformed_fen"),
        ("W:W3:B10", "illegal_position"),
        ("W:W:B", "game_over"),
        ("W:W21,22,23:B1,2", "missing_table"),
        ("W:WK32:BK26", "corrupt_table"),
        ("W:W22:B10", "variant_mismatch"),
    ] {
        let out = dtb(&["probe", "--json", "--dir", d, fen]);
        let v: serde_json::Value =
            serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
        assert_eq!(v["kind"], kind, "{fen}: {v}");
        assert!(
            v["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{fen}: {v}"
        );
        assert_eq!(out.status.code(), Some(1), "{fen}");
    }
}
