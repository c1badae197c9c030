//! `dtb repack` (format version 3: threat positions "don't care" in WLD files): every value
//! the repacked English 2-4 tables answer equals the original tables' answer, on every stored
//! position of every slice; the files are smaller; `dtb verify` finds them consistent; the
//! headers say version 3 and keep their W/L/D counts.

mod common;

use std::process::Command;

use common::english4;
use dtb_gen::compress::Fill;
use dtb_gen::repack::{repack_dir, RepackOptions};
use dtb_probe::internal::format::{
    table_file_name, ValueKind, FORMAT_VERSION, FORMAT_VERSION_THREAT,
};
use dtb_probe::internal::index::SliceIndex;
use dtb_probe::internal::value::is_threat_dont_care;
use dtb_probe::{Color, Material, Rules, Tablebase};
use rayon::prelude::*;

const E: Rules = Rules::ENGLISH;

fn options(fill: Fill) -> RepackOptions {
    RepackOptions {
        zstd: dtb_gen::build::ZSTD,
        fill,
        block_len: None,
        check: true,
        max_pieces: None,
        estimate: None,
    }
}

#[test]
fn repacked_tables_answer_every_position_as_before() {
    let out = tempfile::tempdir().unwrap();
    let reports = repack_dir(
        english4(),
        out.path(),
        E,
        &options(Fill::Major),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(reports.len(), 23, "every 2-4 WLD slice");
    let (before, after): (u64, u64) = reports
        .iter()
        .map(|r| (r.bytes_before, r.bytes_after))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let threats: u64 = reports.iter().map(|r| r.threats).sum();
    let checked: u64 = reports.iter().map(|r| r.checked).sum();
    assert!(threats > 100_000, "{threats} threat positions");
    assert_eq!(checked, threats, "every threat position compared");
    assert!(after < before, "{after} bytes, not below {before}");

    let old = Tablebase::open(english4(), E).unwrap();
    let new = Tablebase::open(out.path(), E).unwrap();
    let seen_threats = assert_same_answers(&old, &new);
    assert_eq!(seen_threats, threats);

    // Through a cache of 0 bytes (nothing kept from one probe to the next) the same answers.
    // A threat position's one-ply search reads each block once: its other look-ups are
    // answered from the blocks the probe itself has read, the only hits such a cache has.
    let mut cold = Tablebase::with_cache_bytes(E, 0);
    cold.add_directory(out.path()).unwrap();
    let m = dtb_probe::Material::parse("1111").unwrap();
    let ix = SliceIndex::new(m, E.geometry());
    let mut moves = Vec::new();
    let mut probed = 0u64;
    for i in (0..ix.size()).step_by(7) {
        for side in [Color::White, Color::Black] {
            let pos = ix.unindex(i, side);
            if is_threat_dont_care(&E, &pos, &mut moves) {
                assert_eq!(
                    cold.probe_wld(&pos).unwrap(),
                    old.probe_wld(&pos).unwrap(),
                    "{m} side {side:?} index {i}, 0-byte cache"
                );
                probed += 1;
            }
        }
    }
    let s = cold.cache_stats();
    println!(
        "{probed} threat probes of {m}, 0-byte cache: {} look-ups, {} blocks decompressed",
        s.hits + s.misses,
        s.misses
    );
    assert!(probed > 1000, "{probed} threat positions probed");
    assert!(
        s.misses >= probed && s.hits > probed / 4 && (s.bytes, s.thread_bytes) == (0, 0),
        "{probed} threat probes through a 0-byte cache: {s:?}"
    );

    // The repacked set checks out on its own, and `dtb info` shows the version.
    let reports = dtb_gen::verify::verify_dir(out.path(), E, &|_| {}).unwrap();
    assert_eq!(reports.len(), 23);
    for r in &reports {
        assert!(r.problems.is_empty(), "{}: {:?}", r.material, r.problems);
    }
    let info = Command::new(dtb_tests::dtb_binary())
        .args(["info", "--json", "--dir"])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(info.status.success());
    let text = String::from_utf8(info.stdout).unwrap();
    assert_eq!(text.lines().count(), 23);
    for line in text.lines() {
        let o: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(o["format_version"], 3, "{line}");
    }

    // Repacking again copies the version 3 files byte for byte.
    let again = tempfile::tempdir().unwrap();
    let r2 = repack_dir(
        out.path(),
        again.path(),
        E,
        &options(Fill::Prev),
        &mut |_| {},
    )
    .unwrap();
    assert!(r2.iter().all(|r| r.copied));
    let name = "english-1111.wld";
    assert_eq!(
        std::fs::read(out.path().join(name)).unwrap(),
        std::fs::read(again.path().join(name)).unwrap()
    );
}

/// Asserts that every stored position of every WLD slice of `old` (version 1) answers the
/// same through `new` (version 3), whose headers say version 3 and keep the W/L/D counts;
/// returns the number of threat positions among them.
fn assert_same_answers(old: &Tablebase, new: &Tablebase) -> u64 {
    let mut seen_threats = 0u64;
    let (om, nm) = (old.materials(ValueKind::Wld), new.materials(ValueKind::Wld));
    assert_eq!(om, nm, "the same slices");
    for m in om {
        let (o, n) = (
            old.table(m, ValueKind::Wld).unwrap(),
            new.table(m, ValueKind::Wld).unwrap(),
        );
        assert_eq!(o.header().version, FORMAT_VERSION);
        assert_eq!(n.header().version, FORMAT_VERSION_THREAT);
        assert_eq!(o.header().counts, n.header().counts, "{m}: W/L/D counts");
        let ix = SliceIndex::new(m, E.geometry());
        for side in [Color::White, Color::Black] {
            if !o.header().side_stored(side.index()) {
                continue;
            }
            let t: u64 = (0..ix.size())
                .into_par_iter()
                .map_init(Vec::new, |moves, i| {
                    let pos = ix.unindex(i, side);
                    assert_eq!(
                        old.probe_wld(&pos).unwrap(),
                        new.probe_wld(&pos).unwrap(),
                        "{m} side {side:?} index {i}"
                    );
                    u64::from(is_threat_dont_care(&E, &pos, moves))
                })
                .sum();
            seen_threats += t;
        }
    }
    seen_threats
}

/// Runs `dtb ARGS`, asserting success; its standard output.
fn dtb(args: &[&str]) -> String {
    let out = Command::new(dtb_tests::dtb_binary())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dtb {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `dtb gen --wld-only` writes version 3 files itself (threat positions found from the
/// solver's capture bits of both sides): byte for byte what `dtb repack` makes of the same
/// build written as version 1 (`--format-version 1`), every position answering as in the
/// version 1 set. A job of one 5-piece slice reads its version 3 inputs back (threat
/// positions resolved by one ply) and writes the same file as from version 1 inputs.
#[test]
fn gen_writes_what_repack_makes_of_version_1_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str| tmp.path().join(name).to_str().unwrap().to_string();
    let (v3, v1, repacked) = (dir("v3"), dir("v1"), dir("repacked"));
    let summary = |text: &str| -> serde_json::Value {
        serde_json::from_str(text.lines().last().unwrap()).unwrap()
    };
    let s3 = summary(&dtb(&[
        "gen",
        "--pieces",
        "4",
        "--wld-only",
        "--json",
        "--out",
        &v3,
    ]));
    let s1 = summary(&dtb(&[
        "gen",
        "--pieces",
        "4",
        "--wld-only",
        "--format-version",
        "1",
        "--json",
        "--out",
        &v1,
    ]));
    let reports = repack_dir(
        v1.as_ref(),
        repacked.as_ref(),
        E,
        &options(Fill::Major),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(reports.len(), 23, "every 2-4 WLD slice");
    let threats: u64 = reports.iter().map(|r| r.threats).sum();
    assert_eq!(s3["threats"], threats, "gen's threat count is repack's");
    assert_eq!(s1["threats"], 0);
    assert!(s3["wld_bytes"].as_u64().unwrap() < s1["wld_bytes"].as_u64().unwrap());
    let files = |d: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".wld"))
            .collect();
        v.sort();
        v
    };
    assert_eq!(files(&v3).len(), 23);
    assert_eq!(files(&v3), files(&repacked));
    for name in files(&v3) {
        let read = |d: &str| std::fs::read(std::path::Path::new(d).join(&name)).unwrap();
        assert!(
            read(&v3) == read(&repacked),
            "{name}: gen's version 3 file differs from repack's"
        );
    }
    let old = Tablebase::open(&v1, E).unwrap();
    let new = Tablebase::open(&v3, E).unwrap();
    assert_eq!(assert_same_answers(&old, &new), threats);

    // Slice 1112 and the 5-piece slices it reads (0203, 0212, 0311), built from each set's
    // files: the same version 3 files.
    for d in [&v3, &v1] {
        dtb(&[
            "gen",
            "--slice",
            "1112",
            "--with-deps",
            "--wld-only",
            "--out",
            d,
        ]);
    }
    let five: Vec<String> = files(&v3)
        .into_iter()
        .filter(|n| !files(&repacked).contains(n))
        .collect();
    assert_eq!(five.len(), 4, "{five:?}");
    assert_eq!(files(&v3), files(&v1));
    let t = Tablebase::open(&v3, E).unwrap();
    for name in &five {
        let read = |d: &str| std::fs::read(std::path::Path::new(d).join(name)).unwrap();
        assert!(
            read(&v3) == read(&v1),
            "{name} from version 3 inputs differs"
        );
        let m = dtb_probe::internal::format::parse_file_name(name, "english")
            .unwrap()
            .0;
        assert_eq!(
            t.table(m, ValueKind::Wld).unwrap().header().version,
            FORMAT_VERSION_THREAT
        );
    }

    // Refused: version 3 where it is not defined, and a version that WLD files do not have.
    for (args, why) in [
        (&["--format-version", "3"][..], "only WLD-only builds"),
        (
            &[
                "--wld-only",
                "--format-version",
                "3",
                "--variant",
                "english,capture=optional",
            ][..],
            "capture is optional",
        ),
        (
            &["--wld-only", "--format-version", "2"][..],
            "version 1 (every value stored) or 3",
        ),
    ] {
        let out = Command::new(dtb_tests::dtb_binary())
            .args(["gen", "--pieces", "2", "--out", &dir("refused")])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(why),
            "{args:?}: {err}"
        );
    }
    assert!(!tmp.path().join("refused").join("english-0101.wld").exists());
}

/// The other fill gives the same answers (spot check of the largest slice) and a rule set
/// without compulsory capture is refused with a message.
#[test]
fn prev_fill_and_refusals() {
    let out = tempfile::tempdir().unwrap();
    let mut o = options(Fill::Prev);
    o.max_pieces = Some(3);
    let reports = repack_dir(english4(), out.path(), E, &o, &mut |_| {}).unwrap();
    assert!(reports.iter().all(|r| r.material.pieces() <= 3));
    assert!(reports.iter().map(|r| r.threats).sum::<u64>() > 0);
    // A build reads a version 3 file back with its threat positions resolved (one ply):
    // the values of the version 1 file.
    let first = &reports[0];
    let path = |d: &std::path::Path| {
        d.join(dtb_probe::internal::format::table_file_name(
            "english",
            first.material,
            ValueKind::Wld,
        ))
    };
    use dtb_gen::store::{Lookups, Store};
    let (mut a, mut b) = (Store::new(E), Store::new(E));
    a.load_wld_file(first.material, &path(out.path())).unwrap();
    b.load_wld_file(first.material, &path(english4())).unwrap();
    let ix = SliceIndex::new(first.material, E.geometry());
    let (mut la, mut lb) = (Lookups::default(), Lookups::default());
    for i in 0..ix.size() {
        let pos = ix.unindex(i, Color::White);
        let (va, vb) = (
            a.value(&pos, &mut la).unwrap(),
            b.value(&pos, &mut lb).unwrap(),
        );
        assert_eq!(va.wld(), vb.wld(), "{i}");
    }
    let optional = Rules::parse("english,capture=optional").unwrap();
    let e = repack_dir(english4(), out.path(), optional, &o, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("no compulsory capture"), "{e}");
    let e = repack_dir(english4(), english4(), E, &o, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("another directory"), "{e}");
    o.block_len = Some(100);
    let e = repack_dir(english4(), out.path(), E, &o, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("multiple of 64"), "{e}");
    // An estimate at a new block length is refused, not guessed from the old length's ratio.
    o.block_len = Some(1 << 17);
    o.estimate = Some(4);
    let empty = tempfile::tempdir().unwrap();
    let e = repack_dir(english4(), empty.path(), E, &o, &mut |_| {}).unwrap_err();
    assert!(
        e.to_string().contains("cannot judge blocks of 131072"),
        "{e}"
    );
}

/// An estimate writes nothing (its `out` is not even made, version 3 files are not copied)
/// and gives each slice's capture and threat positions scaled from its sampled blocks: near
/// what the repack itself counts. A `from` that does not exist leaves no `out` either.
#[test]
fn an_estimate_writes_nothing_and_scales_what_it_samples() {
    let tmp = tempfile::tempdir().unwrap();
    let (done, never) = (tmp.path().join("done"), tmp.path().join("never"));
    let mut o = options(Fill::Major);
    o.check = false;
    let full = repack_dir(english4(), &done, E, &o, &mut |_| {}).unwrap();
    o.estimate = Some(3);
    let est = repack_dir(english4(), &never, E, &o, &mut |_| {}).unwrap();
    assert!(!never.exists());
    assert_eq!(est.len(), full.len());
    let near = |what: &str, f: fn(&dtb_gen::repack::RepackedSlice) -> u64| {
        let (a, b) = (
            full.iter().map(f).sum::<u64>() as f64,
            est.iter().map(f).sum::<u64>() as f64,
        );
        assert!(
            a > 0.0 && (b / a - 1.0).abs() < 0.1,
            "{what}: {b} against {a}"
        );
    };
    near("threat positions", |r| r.threats);
    near("capture positions", |r| r.captures);
    assert!(est.iter().all(|r| r.estimated && !r.copied));
    // Over version 3 files: each reported as one the repack would copy, none copied.
    let est3 = repack_dir(&done, &never, E, &o, &mut |_| {}).unwrap();
    assert!(est3.len() == full.len() && est3.iter().all(|r| r.copied));
    assert!(!never.exists());
    let e = repack_dir(
        &tmp.path().join("nosuch"),
        &never,
        E,
        &options(Fill::Major),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("nosuch"), "{e}");
    assert!(!never.exists());
}

/// A repack stopped and run again keeps the slices it finished: run twice into the same
/// directory, the second run repacks nothing and leaves every file as it was; a file damaged
/// since (one byte) or of another slice's name is repacked again, to the same bytes.
#[test]
fn a_repack_run_again_keeps_what_it_finished() {
    let out = tempfile::tempdir().unwrap();
    let mut o = options(Fill::Major);
    o.max_pieces = Some(3);
    let first = repack_dir(english4(), out.path(), E, &o, &mut |_| {}).unwrap();
    assert!(first.iter().all(|r| !r.resumed) && first.len() > 5);
    let name = |m: Material| table_file_name("english", m, ValueKind::Wld);
    let bytes = |m: Material| std::fs::read(out.path().join(name(m))).unwrap();
    let before: Vec<Vec<u8>> = first.iter().map(|r| bytes(r.material)).collect();
    let again = repack_dir(english4(), out.path(), E, &o, &mut |_| {}).unwrap();
    assert!(again
        .iter()
        .all(|r| r.resumed && r.threats == 0 && r.checked == 0));
    for (r, b) in again.iter().zip(&before) {
        assert_eq!(&bytes(r.material), b, "{}", r.material);
        assert_eq!(r.bytes_after, b.len() as u64);
    }
    // One changed byte in the last block: its checksum fails, the slice is repacked.
    let (a, b) = (
        first[first.len() - 1].material,
        first[first.len() - 2].material,
    );
    let mut damaged = bytes(a);
    let at = damaged.len() - 3;
    damaged[at] ^= 0x40;
    std::fs::write(out.path().join(name(a)), &damaged).unwrap();
    // Another slice's file under this slice's name: its header names the other slice.
    std::fs::copy(
        out.path().join(name(b)),
        out.path().join(name(first[0].material)),
    )
    .unwrap();
    let third = repack_dir(english4(), out.path(), E, &o, &mut |_| {}).unwrap();
    for (r, want) in third.iter().zip(&before) {
        let redone = r.material == a || r.material == first[0].material;
        assert_eq!(r.resumed, !redone, "{}", r.material);
        assert_eq!(&bytes(r.material), want, "{}", r.material);
    }
}

/// Per-block compressed lengths of a table file (its block table: offsets after the
/// 256-byte header).
fn block_lengths(path: &std::path::Path) -> Vec<u64> {
    let bytes = std::fs::read(path).unwrap();
    let u64_at = |k: usize| u64::from_le_bytes(bytes[k..k + 8].try_into().unwrap());
    let blocks = (u64_at(256) as usize - 264) / 12;
    (0..blocks)
        .map(|b| u64_at(256 + 8 * (b + 1)) - u64_at(256 + 8 * b))
        .collect()
}

/// `dtb gen --fill best` (per block, the smallest of the major, prev and next fills): no
/// block is longer than the major fill's and some are shorter; the files are byte for byte
/// what `dtb repack --fill best` makes of the version 1 set, and every position answers as
/// in that set.
#[test]
fn best_fill_is_never_longer_and_answers_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str| tmp.path().join(name).to_str().unwrap().to_string();
    let (best, major, v1, repacked) = (dir("best"), dir("major"), dir("v1"), dir("repacked"));
    let gen = |out: &str, extra: &[&str]| {
        let mut args = vec!["gen", "--pieces", "4", "--wld-only", "--out", out];
        args.extend_from_slice(extra);
        dtb(&args);
    };
    gen(&best, &["--fill", "best"]);
    gen(&major, &[]);
    gen(&v1, &["--format-version", "1"]);
    let reports = repack_dir(
        v1.as_ref(),
        repacked.as_ref(),
        E,
        &options(Fill::Best),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(reports.len(), 23);
    let threats: u64 = reports.iter().map(|r| r.threats).sum();
    let (mut shorter, mut blocks) = (0, 0);
    for r in &reports {
        let name = table_file_name("english", r.material, ValueKind::Wld);
        let at = |d: &str| std::path::Path::new(d).join(&name);
        let (b, m) = (block_lengths(&at(&best)), block_lengths(&at(&major)));
        assert_eq!(b.len(), m.len(), "{name}");
        for (k, (x, y)) in b.iter().zip(&m).enumerate() {
            assert!(
                x <= y,
                "{name} block {k}: {x} bytes with best, {y} with major"
            );
            shorter += usize::from(x < y);
        }
        blocks += b.len();
        assert!(
            std::fs::read(at(&best)).unwrap() == std::fs::read(at(&repacked)).unwrap(),
            "{name}: gen --fill best differs from repack --fill best"
        );
    }
    assert!(shorter > 0, "no block of {blocks} shorter");
    // A full build (WLD and DTW) writes its WLD files through the same writer: with
    // --fill best no block is longer than with major, and its values are the same.
    let full = |fill: &str| {
        let d = dir(&format!("full-{fill}"));
        dtb(&["gen", "--pieces", "4", "--fill", fill, "--out", &d]);
        d
    };
    let (full_best, full_major) = (full("best"), full("major"));
    let mut full_shorter = 0;
    for r in &reports {
        let name = table_file_name("english", r.material, ValueKind::Wld);
        let at = |d: &str| std::path::Path::new(d).join(&name);
        let (b, m) = (
            block_lengths(&at(&full_best)),
            block_lengths(&at(&full_major)),
        );
        assert_eq!(b.len(), m.len(), "{name}");
        for (x, y) in b.iter().zip(&m) {
            assert!(
                x <= y,
                "full build {name}: {x} bytes with best, {y} with major"
            );
            full_shorter += usize::from(x < y);
        }
    }
    assert!(
        full_shorter > 0,
        "no block of a full build shorter with best"
    );
    let a = Tablebase::open(&full_major, E).unwrap();
    let b = Tablebase::open(&full_best, E).unwrap();
    for r in &reports {
        let ix = SliceIndex::new(r.material, E.geometry());
        for side in [Color::White, Color::Black] {
            (0..ix.size()).into_par_iter().for_each(|i| {
                let pos = ix.unindex(i, side);
                let want = a.probe_dtw(&pos).unwrap();
                assert_eq!(b.probe_dtw(&pos).unwrap(), want, "{} {i}", r.material);
                assert_eq!(b.probe_wld(&pos).unwrap(), a.probe_wld(&pos).unwrap());
            });
        }
    }
    let old = Tablebase::open(&v1, E).unwrap();
    let new = Tablebase::open(&best, E).unwrap();
    assert_eq!(assert_same_answers(&old, &new), threats);
}

/// `dtb plan --fill best` hands the fill to every job's `dtb gen` (a cluster build writes
/// the bytes a one-machine `dtb gen --fill best` writes), a full plan's as well as a
/// WLD-only one's.
#[test]
fn plan_hands_the_fill_to_its_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("t").to_string_lossy().into_owned();
    let plan = |extra: &[&str]| {
        let mut args = vec!["plan", "--pieces", "3", "--emit", "make", "--out", &out];
        args.extend_from_slice(extra);
        Command::new(dtb_tests::dtb_binary())
            .args(&args)
            .output()
            .unwrap()
    };
    let best = plan(&["--wld-only", "--fill", "best"]);
    let text = String::from_utf8_lossy(&best.stdout);
    assert!(
        best.status.success(),
        "{}",
        String::from_utf8_lossy(&best.stderr)
    );
    let jobs = text
        .lines()
        .filter(|l| l.contains(" gen --variant"))
        .count();
    assert!(jobs > 0, "{text}");
    assert_eq!(
        text.lines().filter(|l| l.contains(" --fill best ")).count(),
        jobs,
        "{text}"
    );
    let major = plan(&["--wld-only"]);
    assert!(major.status.success());
    assert!(!String::from_utf8_lossy(&major.stdout).contains("--fill"));
    // An estimate cannot judge a new block length (`dtb repack --estimate` scales the
    // old file by a ratio taken at one length): refused before any work.
    let est = Command::new(dtb_tests::dtb_binary())
        .args(["repack", "--from", &out, "--out", &out, "--estimate", "4"])
        .args(["--block-len", "131072"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&est.stderr);
    assert!(!est.status.success(), "{err}");
    assert!(
        err.contains("--estimate") && err.contains("--block-len"),
        "{err}"
    );
    // A full plan's jobs fill as asked too, and a WLD-only plan says so with --values.
    let full = plan(&["--fill", "best"]);
    let text = String::from_utf8_lossy(&full.stdout);
    assert!(
        full.status.success(),
        "{}",
        String::from_utf8_lossy(&full.stderr)
    );
    let gens: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" gen --variant"))
        .collect();
    assert!(
        !gens.is_empty() && gens.iter().all(|l| l.contains(" --fill best ")),
        "{text}"
    );
    assert!(gens.iter().all(|l| !l.contains("--values")), "{text}");
    let best_text = String::from_utf8_lossy(&best.stdout);
    assert!(best_text.contains(" --values wld "), "{best_text}");
}

/// Checks the `kind` files of the English 2-4 set in `dir` against the default build `a`:
/// the same slices, each header's block length `len` and its block table as many blocks,
/// every stored position answered alike (`probe`, compared as text). Returns how many files
/// hold more than one block a side.
fn same_answers_in_blocks_of(
    a: &Tablebase,
    dir: &str,
    len: u64,
    kind: ValueKind,
    probe: impl Fn(&Tablebase, &dtb_probe::Position) -> Result<String, dtb_probe::ProbeError> + Sync,
) -> u64 {
    let b = Tablebase::open(dir, E).unwrap();
    let ms = a.materials(kind);
    assert_eq!(ms, b.materials(kind));
    assert_eq!(ms.len(), 23);
    let mut split = 0;
    for m in ms {
        let h = b.table(m, kind).unwrap().header().clone();
        assert_eq!(u64::from(h.block_len), len, "{m}");
        let name = table_file_name("english", m, kind);
        let blocks = block_lengths(&std::path::Path::new(dir).join(&name)).len() as u64;
        let sides = u64::from(h.stored_side_count());
        assert_eq!(blocks, sides * h.positions_per_side.div_ceil(len), "{m}");
        split += u64::from(blocks > sides);
        let ix = SliceIndex::new(m, E.geometry());
        for side in [Color::White, Color::Black] {
            (0..ix.size()).into_par_iter().for_each(|i| {
                let pos = ix.unindex(i, side);
                assert_eq!(
                    probe(&b, &pos).unwrap(),
                    probe(a, &pos).unwrap(),
                    "{m} {side:?} {i}"
                );
            });
        }
    }
    split
}

/// `dtb gen --block-len N` writes WLD files of blocks of N positions (the header says so,
/// and the block table holds as many blocks) whose every position answers as in the default
/// build; a one-slice job reads such inputs and their values files back, and writes its own
/// slice as the whole build did; `dtb verify` finds the set consistent. A length that is not
/// a multiple of 64 is refused before anything is written.
#[test]
fn gen_block_len_sets_the_blocks_and_keeps_every_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str| tmp.path().join(name).to_str().unwrap().to_string();
    let (plain, short, long) = (dir("plain"), dir("short"), dir("long"));
    let gen = |out: &str, extra: &[&str]| {
        let mut args = vec!["gen", "--pieces", "4", "--wld-only", "--out", out];
        args.extend_from_slice(extra);
        dtb(&args);
    };
    gen(&plain, &[]);
    gen(&short, &["--block-len", "4096", "--keep-values"]);
    gen(&long, &["--block-len", "1048576", "--zstd", "9"]);
    let a = Tablebase::open(&plain, E).unwrap();
    let mut split = 0;
    for (d, len) in [(&short, 4096u64), (&long, 1 << 20)] {
        split += same_answers_in_blocks_of(&a, d, len, ValueKind::Wld, |t, pos| {
            t.probe_wld(pos).map(|w| format!("{w:?}"))
        });
    }
    assert!(
        split > 0,
        "no file of more than one block a side at 4096 positions"
    );
    // A one-slice job over the short blocks' set (its inputs' values files at 4096 too).
    let name = table_file_name("english", Material::parse("1111").unwrap(), ValueKind::Wld);
    let before = std::fs::read(std::path::Path::new(&short).join(&name)).unwrap();
    std::fs::remove_file(std::path::Path::new(&short).join(&name)).unwrap();
    let job = dtb(&[
        "gen",
        "--slice",
        "1111",
        "--wld-only",
        "--block-len",
        "4096",
        "--json",
        "--out",
        &short,
    ]);
    // Its summary counts the slices it read as the set's, and the one it built apart.
    let summary = job.lines().last().unwrap();
    assert!(
        summary.contains("\"summary\":true") && summary.contains("\"built\":1,"),
        "{job}"
    );
    let read = job
        .lines()
        .filter(|l| l.contains("\"skipped\":true"))
        .count();
    assert!(
        read > 0 && summary.contains(&format!("\"slices\":{},", read + 1)),
        "{job}"
    );
    assert!(
        std::fs::read(std::path::Path::new(&short).join(&name)).unwrap() == before,
        "the job's 1111 differs from the build's"
    );
    let verified = dtb(&["verify", "--dir", &short, "--json"]);
    assert!(
        verified.contains("\"failed\":0,") && !verified.contains("\"ok\":false"),
        "{verified}"
    );
    // Resumed with another block length, the finished files stay as they are, and each
    // slice's line says so: its JSON the file's length, its text line in words.
    let again = ["gen", "--pieces", "4", "--wld-only", "--block-len", "8192"];
    let lines = dtb(&[&again[..], &["--json", "--out", &short]].concat());
    let slices: Vec<_> = lines.lines().filter(|l| l.contains("\"slice\"")).collect();
    assert_eq!(slices.len(), 23, "{lines}");
    for l in slices {
        assert!(
            l.contains("\"skipped\":true") && l.contains("\"wld_block_len\":4096,"),
            "{l}"
        );
    }
    let text = Command::new(dtb_tests::dtb_binary())
        .args(again)
        .args(["--out", &short])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&text.stdout)
            .contains(": 23 slices (0 built, 23 found finished), "),
        "{}",
        String::from_utf8_lossy(&text.stdout)
    );
    let text = String::from_utf8_lossy(&text.stderr);
    assert!(
        text.contains(
            "slice 1111: 661200 positions, 161772 wins 14122 losses 485306 draws; already built and \
             kept as it is: its WLD file in blocks of 4096 positions, not 8192"
        ),
        "{text}"
    );
    assert_eq!(
        std::fs::read(std::path::Path::new(&short).join(&name)).unwrap(),
        before
    );
    let bad = Command::new(dtb_tests::dtb_binary())
        .args(["gen", "--pieces", "3", "--wld-only", "--block-len", "100"])
        .args(["--out", &dir("bad")])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("--block-len 100") && err.contains("multiple of 64"),
        "{err}"
    );
    assert!(!std::path::Path::new(&dir("bad")).exists());
}

/// `dtb gen --distance-block-len N` writes DTW files (and DTC files) in blocks of N
/// positions (the header says N, the block table holds as many blocks) whose every position
/// answers as in the default build, leaves the WLD files as they were, and `dtb verify`
/// finds the set consistent. A length that is not a multiple of 64, or a build without
/// distance files, is refused before anything is written.
#[test]
fn gen_distance_block_len_sets_the_blocks_and_keeps_every_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str| tmp.path().join(name).to_str().unwrap().to_string();
    let (plain, short, long, dtc) = (dir("plain"), dir("short"), dir("long"), dir("dtc"));
    let gen = |out: &str, extra: &[&str]| {
        let mut args = vec!["gen", "--pieces", "4", "--out", out];
        args.extend_from_slice(extra);
        dtb(&args);
    };
    gen(&plain, &[]);
    gen(&short, &["--distance-block-len", "128"]);
    gen(&long, &["--distance-block-len", "1048576", "--zstd", "9"]);
    let a = Tablebase::open(&plain, E).unwrap();
    let mut split = 0;
    for (d, len) in [(&short, 128u64), (&long, 1 << 20)] {
        split += same_answers_in_blocks_of(&a, d, len, ValueKind::Dtw, |t, pos| {
            t.probe_dtw(pos).map(|w| format!("{w:?}"))
        });
    }
    assert!(
        split > 0,
        "no DTW file of more than one block a side at 128"
    );
    // `dtb info` shows each file's block length.
    let info = dtb(&["info", "--dir", &short, "--json"]);
    for line in info.lines() {
        let want = if line.contains("\"kind\":\"dtw\"") {
            "\"block_len\":128,"
        } else {
            "\"block_len\":65536,"
        };
        assert!(line.contains(want), "{line}");
    }
    assert!(dtb(&["info", "--dir", &short]).contains("blocks of 128 "));
    // The WLD files are the default build's, byte for byte.
    for m in a.materials(ValueKind::Wld) {
        let name = table_file_name("english", m, ValueKind::Wld);
        let file = |d: &str| std::fs::read(std::path::Path::new(d).join(&name)).unwrap();
        assert!(file(&plain) == file(&short), "{name}");
    }
    let verified = dtb(&["verify", "--dir", &short, "--json"]);
    assert!(
        verified.contains("\"failed\":0,") && !verified.contains("\"ok\":false"),
        "{verified}"
    );
    // DTC files take the length too, and every verify check holds.
    gen(&dtc, &["--values", "dtc", "--distance-block-len", "192"]);
    let c = Tablebase::open(&dtc, E).unwrap();
    let ms = c.materials(ValueKind::Dtc);
    assert_eq!(ms.len(), 23);
    for m in ms {
        let h = c.table(m, ValueKind::Dtc).unwrap().header().clone();
        assert_eq!(h.block_len, 192, "{m}");
    }
    let verified = dtb(&["verify", "--dir", &dtc, "--json"]);
    assert!(
        verified.contains("\"failed\":0,") && !verified.contains("\"ok\":false"),
        "{verified}"
    );
    for (extra, want) in [
        (&["--distance-block-len", "100"][..], "multiple of 64"),
        // A negative number is a value clap refuses by name, not an unknown flag `-6`.
        (&["--distance-block-len", "-64"][..], "invalid value '-64'"),
        (
            &["--wld-only", "--distance-block-len", "65536"][..],
            "no distance files",
        ),
    ] {
        let bad = Command::new(dtb_tests::dtb_binary())
            .args(["gen", "--pieces", "3", "--out", &dir("bad")])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(bad.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&bad.stderr);
        assert!(
            err.contains("--distance-block-len") && err.contains(want),
            "{err}"
        );
        assert!(!std::path::Path::new(&dir("bad")).exists());
    }
}
