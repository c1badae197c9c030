//! What a new user tripped over (issue 36): each answer of `dtb` here is checked word for
//! word, with its exit status.
//!
//! - Every `FIELD=VALUE` that `dtb variants --json` lists for a preset restates it.
//! - `dtb gen --memory 1K` is refused in words before anything is made.
//! - `dtb verify --sample 0` is said in words; `dtb perft` names the counting as written.
//! - `dtb info` says why a damaged file is refused.
//! - The Slurm script of `dtb plan` checks for sbatch before it makes anything; a plan whose
//!   jobs need more than the budget says so.

use std::path::PathBuf;
use std::process::{Command, Output};

use dtb_gen::build::size_words;

const DTB: &str = env!("CARGO_BIN_EXE_dtb");

fn dtb(args: &[&str]) -> Output {
    Command::new(DTB).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// `dtb variants` lists `king-landing must-continue` for english (short kings); restating
/// it, and every other field's listed value of every preset, is that preset (the rule set
/// `dtb perft --json` names).
#[test]
fn every_listed_field_value_restates_its_preset() {
    let out = dtb(&["variants", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let presets = j["presets"].as_array().unwrap();
    assert!(presets.len() >= 10);
    let mut checked = 0;
    for p in presets {
        let name = p["name"].as_str().unwrap();
        for (field, value) in p["fields"].as_object().unwrap() {
            let spec = format!("{name},{field}={}", value.as_str().unwrap());
            let out = dtb(&["perft", "--variant", &spec, "--depth", "0", "--json"]);
            assert_eq!(out.status.code(), Some(0), "{spec}: {}", text(&out.stderr));
            let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(r["variant"], name, "{spec}");
            checked += 1;
        }
    }
    assert_eq!(checked, presets.len() * 12);
    // Changing the landing rule of short kings still means nothing, and is still refused.
    let out = dtb(&[
        "perft",
        "--variant",
        "english,king-landing=any",
        "--depth",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "dtb: error: --variant \"english,king-landing=any\": king-landing=any has no effect \
         with kings=short: set kings=flying too, or leave king-landing out\n"
    );
}

/// A `--memory` no build fits in (`1K`, and 64 MiB, what every build needs beside its
/// solver's data) is refused in words, with status 2, before `--out` is made; by `dtb plan`
/// too.
#[test]
fn a_memory_budget_no_build_fits_is_refused_before_anything_is_made() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("t");
    let o = out.to_str().unwrap();
    for (size, words) in [("1K", "1 KiB"), ("64M", "64 MiB"), ("100", "100 bytes")] {
        let want = format!(
            "dtb: error: invalid value '{size}' for '--memory <SIZE>': a build needs more than 64 MiB \
             (the program, compression and files beside the solver's data); {size} is {words}\n"
        );
        for args in [
            &["gen", "--pieces", "2", "--memory", size, "--out", o][..],
            &[
                "gen",
                "--pieces",
                "2",
                "--memory",
                size,
                "--dry-run",
                "--out",
                o,
            ][..],
            &[
                "plan", "--pieces", "2", "--memory", size, "--emit", "make", "--out", o,
            ][..],
        ] {
            let r = dtb(args);
            assert_eq!(r.status.code(), Some(2), "{args:?}");
            let err = text(&r.stderr);
            assert!(err.starts_with(&want), "{args:?}: {err}");
            assert!(r.stdout.is_empty(), "{args:?}");
            assert!(!out.exists(), "{args:?} made {o}");
        }
    }
    // Just above it, a 2-piece build runs.
    let r = dtb(&["gen", "--pieces", "2", "--memory", "65M", "--out", o]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
}

/// A budget a slice's forecast does not fit (English 2-7 in 100 MiB) is refused before any
/// work, and the folders `--out` would have made are gone again; a folder that was there
/// stays.
#[test]
fn a_build_refused_for_memory_leaves_no_folder_it_made() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().join("t");
    let out = top.join("a").join("b");
    let o = out.to_str().unwrap();
    let r = dtb(&["gen", "--pieces", "7", "--memory", "100M", "--out", o]);
    assert_eq!(r.status.code(), Some(2));
    let err = text(&r.stderr);
    assert!(
        err.contains("needs about") && err.contains("see --memory"),
        "{err}"
    );
    assert!(!top.exists(), "{err}");
    std::fs::create_dir(&top).unwrap();
    let r = dtb(&["gen", "--pieces", "7", "--memory", "100M", "--out", o]);
    assert_eq!(r.status.code(), Some(2));
    assert!(top.is_dir() && !top.join("a").exists());
}

/// `--sample 0` is said in words (not as a range of u64), with status 2.
#[test]
fn verify_sample_zero_is_said_in_words() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    let r = dtb(&["verify", "--dir", d, "--sample", "0"]);
    assert_eq!(r.status.code(), Some(2));
    let err = text(&r.stderr);
    assert!(
        err.starts_with(
            "dtb: error: invalid value '0' for '--sample <N>': --sample must be at least 1 \
             (positions checked a slice)\n"
        ),
        "{err}"
    );
    assert!(!err.contains("18446744073709551615"), "{err}");
    let r = dtb(&["verify", "--dir", d, "--sample", "many"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(
        text(&r.stderr).starts_with(
            "dtb: error: invalid value 'many' for '--sample <N>': --sample takes a whole number of \
             positions a slice, at least 1, not \"many\"\n"
        ),
        "{}",
        text(&r.stderr)
    );
}

/// A number out of its range is said in words, not Rust's range syntax, for every flag
/// that takes one; and a usage error never echoes a long value or argument whole (clap quotes
/// them as given): a 3,000-character value comes back as its first 40 characters and its
/// length.
#[test]
fn number_flags_say_their_range_in_words_and_errors_stay_short() {
    let tmp = tempfile::tempdir().unwrap();
    let o = tmp.path().join("t");
    let o = o.to_str().unwrap();
    for (args, want) in [
        (
            &["gen", "--out", o, "--threads", "0"][..],
            "dtb: error: invalid value '0' for '--threads <THREADS>': expected a whole number from 1 to 1024\n",
        ),
        (
            &["gen", "--out", o, "--zstd-level", "23"][..],
            "dtb: error: invalid value '23' for '--zstd-level <ZSTD_LEVEL>': expected a whole number from 1 to 22\n",
        ),
        (
            &["perft", "--depth", "41"][..],
            "dtb: error: invalid value '41' for '--depth <DEPTH>': expected a whole number from 0 to 40\n",
        ),
        (
            &["plan", "--emit", "json", "--cpus", "x"][..],
            "dtb: error: invalid value 'x' for '--cpus <CPUS>': expected a whole number from 1 to 1024\n",
        ),
        (
            &["repack", "--from", o, "--out", o, "--pieces", "11"][..],
            "dtb: error: invalid value '11' for '--pieces <N>': expected a whole number from 2 to 10\n",
        ),
        (
            &["repack", "--from", o, "--out", o, "--estimate", "0"][..],
            "dtb: error: invalid value '0' for '--estimate <N>': expected a whole number of at least 1\n",
        ),
    ] {
        let r = dtb(args);
        assert_eq!(r.status.code(), Some(2), "{args:?}");
        let err = text(&r.stderr);
        assert!(err.starts_with(want), "{args:?}: {err}");
        assert!(!err.contains("..="), "{args:?}: {err}");
    }
    let long = format!("wld,{}", "x".repeat(3000));
    let flag = format!("--{}", "y".repeat(3000));
    for args in [
        vec!["gen", "--out", o, "--values", long.as_str()],
        vec!["gen", "--out", o, "--threads", long.as_str()],
        vec!["gen", "--out", o, flag.as_str()],
    ] {
        let r = dtb(&args);
        assert_eq!(r.status.code(), Some(2));
        let err = text(&r.stderr);
        assert!(err.len() < 600, "{} bytes: {err}", err.len());
        assert!(
            err.contains("... (3004 bytes)") || err.contains("... (3002 bytes)"),
            "{err}"
        );
    }
    assert!(!tmp.path().join("t").exists());
}

/// `dtb perft` names the counting as the user typed it (clap's value name), in its text and
/// its JSON.
#[test]
fn perft_names_the_counting_as_written() {
    for counting in ["unique", "paths"] {
        let r = dtb(&["perft", "--depth", "2", "--counting", counting]);
        assert_eq!(r.status.code(), Some(0));
        assert_eq!(text(&r.stdout), "49\n");
        let err = text(&r.stderr);
        assert!(
            err.starts_with("perft B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12 depth 2 (")
                && err.contains(&format!(" depth 2 ({counting}): 49 nodes in ")),
            "{err}"
        );
        let r = dtb(&["perft", "--depth", "2", "--counting", counting, "--json"]);
        let j: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
        assert_eq!(j["counting"], counting);
    }
}

/// `dtb info` on a damaged file says which and why (the error chain, as `dtb verify` says
/// it), in text and JSON, with status 1: a flipped header byte, a payload cut short.
#[test]
fn info_says_why_a_damaged_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    let r = dtb(&["gen", "--pieces", "2", "--wld-only", "--out", d]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let file = tmp.path().join("english-0101.wld");
    let mut bytes = std::fs::read(&file).unwrap();
    let len = bytes.len();
    bytes[100] ^= 0x10;
    std::fs::write(&file, &bytes).unwrap();
    let check = |why: &str| {
        let r = dtb(&["info", "--dir", d]);
        assert_eq!(r.status.code(), Some(1));
        assert_eq!(text(&r.stderr), format!("dtb: {}: {why}\n", file.display()));
        let r = dtb(&["info", "--dir", d, "--json"]);
        assert_eq!(r.status.code(), Some(1));
        let first: serde_json::Value =
            serde_json::from_str(text(&r.stdout).lines().next().unwrap()).unwrap();
        assert_eq!(
            first,
            serde_json::json!({"file": "english-0101.wld",
                               "error": format!("{}: {why}", file.display())})
        );
    };
    check("header checksum mismatch (header is corrupt)");
    bytes[100] ^= 0x10;
    bytes.pop();
    std::fs::write(&file, &bytes).unwrap();
    check(&format!(
        "file is {} bytes but its block table says {len} (truncated or extended)",
        len - 1
    ));
}

/// bash, by its full path (the tests run it with a PATH that lacks sbatch).
fn bash() -> PathBuf {
    ["/bin/bash", "/usr/bin/bash"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("bash")
}

/// The Slurm script run where there is no sbatch: it says so on stderr, exits 1, and makes
/// nothing (no output directory).
#[test]
fn the_slurm_script_checks_for_sbatch_before_making_anything() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("t");
    let r = dtb(&[
        "plan",
        "--pieces",
        "3",
        "--emit",
        "slurm",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let script = tmp.path().join("submit.sh");
    std::fs::write(&script, &r.stdout).unwrap();
    let empty = tmp.path().join("bin");
    std::fs::create_dir(&empty).unwrap();
    let r = Command::new(bash())
        .arg(&script)
        .env_clear()
        .env("PATH", &empty)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(
        text(&r.stderr),
        "sbatch not found: this script submits Slurm jobs; run it where sbatch is on PATH \
         (dtb plan --emit make builds on one machine)\n"
    );
    assert!(r.stdout.is_empty());
    assert!(!out.exists(), "the script made {}", out.display());
}

/// The largest job of a plan, from its JSON: (slice, bytes).
fn largest(json: &serde_json::Value) -> (String, u64) {
    (
        json["largest_memory_slice"].as_str().unwrap().to_string(),
        json["largest_memory_bytes"].as_u64().unwrap(),
    )
}

/// English 2-8 with distances plans jobs far over a 20 GiB node: `--emit slurm` and `--emit
/// make` refuse it (status 2) naming the largest job and the budget, `--emit json` warns on
/// stderr and says it in the JSON; WLD-only, the same budget fits.
#[test]
fn a_plan_over_its_budget_says_so() {
    let args = |emit: &'static str, values: &'static str| {
        [
            "plan",
            "--pieces",
            "8",
            "--values",
            values,
            "--memory",
            "20G",
            "--emit",
            emit,
            "--out",
            "/nonexistent/t",
        ]
    };
    let r = dtb(&args("json", "wld,dtw"));
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let j: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(j["fits"], false);
    let (slice, bytes) = largest(&j);
    assert!(bytes > 20 << 30, "{bytes}");
    let over: Vec<&str> = j["over_budget"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(over.contains(&slice.as_str()), "{over:?}");
    let what = format!(
        "{} of {} jobs need more memory than the budget of 20 GiB a job (--memory); the \
         largest, slice {slice}, needs {}; a WLD-only plan (--values wld) needs far less\n",
        over.len(),
        j["jobs"],
        size_words(bytes)
    );
    assert_eq!(text(&r.stderr), format!("dtb: warning: {what}"));
    for emit in ["slurm", "make"] {
        let r = dtb(&args(emit, "wld,dtw"));
        assert_eq!(r.status.code(), Some(2), "{emit}");
        assert!(r.stdout.is_empty(), "{emit}");
        assert_eq!(text(&r.stderr), format!("dtb: error: {what}"), "{emit}");
    }
    let r = dtb(&args("json", "wld"));
    assert_eq!(r.status.code(), Some(0));
    assert!(r.stderr.is_empty(), "{}", text(&r.stderr));
    let j: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(j["fits"], true);
    assert_eq!(j["over_budget"], serde_json::json!([]));
    let r = dtb(&args("slurm", "wld"));
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
}

/// Without `--memory`, the budget a plan names is this machine's, and it says how to give a
/// node's.
#[test]
fn a_plan_without_memory_names_where_its_budget_comes_from() {
    let r = dtb(&[
        "plan",
        "--pieces",
        "8",
        "--emit",
        "slurm",
        "--out",
        "/nonexistent/t",
    ]);
    let err = text(&r.stderr);
    // A machine with more memory than 2-8's largest job would plan it whole.
    if r.status.code() == Some(0) {
        return;
    }
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            " a job (without --memory, the memory available on this machine now; on a \
             cluster, give the memory of one node with --memory); the largest, slice "
        ),
        "{err}"
    );
}
