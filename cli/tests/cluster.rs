//! `dtb plan --emit make`: the Makefile of a build, run by a real `make -j2`, builds the
//! same bytes as `dtb gen`; killed mid-run and run again, it builds only what is missing;
//! `make` over a finished directory does nothing. Jobs of different slices share the
//! directory; a second job on the same slice is refused. `--emit json` and `--emit slurm`
//! describe the same graph.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

const DTB: &str = env!("CARGO_BIN_EXE_dtb");

/// Every table file of `dir` by name: (bytes, modification time).
fn tables(dir: &Path) -> BTreeMap<String, (Vec<u8>, SystemTime)> {
    std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "wld" || x == "dtw"))
                .map(|p| {
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    let m = std::fs::metadata(&p).unwrap().modified().unwrap();
                    (name, (std::fs::read(&p).unwrap(), m))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn plan(args: &[&str]) -> String {
    let out = Command::new(DTB).arg("plan").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn make(dir: &Path) -> Command {
    let mut c = Command::new("make");
    c.args(["-j2", "-s", "-f"]).arg(dir.join("Makefile"));
    c.current_dir(dir);
    c
}

/// English 2-5 (WLD and DTW) through `make -j2` equals `dtb gen --pieces 5`, file for file;
/// a make killed (SIGKILL to its whole process group) after some slices are finished, run
/// again, leaves those files untouched and builds the rest; a third make does nothing.
#[test]
fn make_builds_the_same_files_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("gen");
    let out = Command::new(DTB)
        .args(["gen", "--pieces", "5", "--out"])
        .arg(&reference)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = tables(&reference);
    assert_eq!(want.len(), 90);

    let work = tmp.path().join("make");
    std::fs::create_dir_all(&work).unwrap();
    let dir = work.join("t");
    let mk = plan(&[
        "--pieces",
        "5",
        "--emit",
        "make",
        "--cpus",
        "1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    std::fs::write(work.join("Makefile"), mk).unwrap();
    // Run, and kill the whole make (its jobs too) once a few slices are finished.
    let mut child = make(&work).process_group(0).spawn().unwrap();
    let t0 = Instant::now();
    loop {
        let n = tables(&dir).len();
        if n >= 20 || child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(600),
            "make made no progress"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // kill(1) on the process group that make leads: make and every job it started.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status();
    let _ = child.wait();
    let before = tables(&dir);
    assert!(!before.is_empty());
    for (name, (bytes, _)) in &before {
        assert!(
            &want[name].0 == bytes,
            "{name}: a file that looks finished is not"
        );
    }
    let status = make(&work).status().unwrap();
    assert!(status.success());
    let after = tables(&dir);
    assert_eq!(after.len(), 90);
    for (name, (bytes, _)) in &want {
        assert!(&after[name].0 == bytes, "{name} differs from dtb gen's");
    }
    for (name, (_, time)) in &before {
        assert_eq!(after[name].1, *time, "{name} was built again");
    }
    let out = make(&work).arg("--question").output().unwrap();
    assert!(
        out.status.success(),
        "make has more to do over a finished directory"
    );
}

/// A WLD-only plan's jobs write what `dtb gen --wld-only` writes, version 3 by default and
/// version 1 with `--format-version 1` (passed to every job): English 2-4 through
/// `make -j2`, file for file, each version.
#[test]
fn make_of_a_wld_only_plan_keeps_the_format_version() {
    let tmp = tempfile::tempdir().unwrap();
    for (version, extra) in [(3, &[][..]), (1, &["--format-version", "1"][..])] {
        let reference = tmp.path().join(format!("gen-{version}"));
        let out = Command::new(DTB)
            .args(["gen", "--pieces", "4", "--wld-only"])
            .args(extra)
            .arg("--out")
            .arg(&reference)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let want = tables(&reference);
        assert_eq!(want.len(), 23);
        for (name, (bytes, _)) in &want {
            // The header's format_version, bytes 8..12.
            assert_eq!(bytes[8..12], [version, 0, 0, 0], "{name}");
        }
        let work = tmp.path().join(format!("make-{version}"));
        std::fs::create_dir_all(&work).unwrap();
        let dir = work.join("t");
        let mut args = vec!["--pieces", "4", "--wld-only", "--emit", "make", "--out"];
        args.push(dir.to_str().unwrap());
        args.extend_from_slice(extra);
        let mk = plan(&args);
        assert_eq!(mk.contains("--format-version 1"), version == 1, "{mk}");
        std::fs::write(work.join("Makefile"), mk).unwrap();
        assert!(make(&work).status().unwrap().success());
        let got = tables(&dir);
        assert_eq!(got.len(), 23);
        for (name, (bytes, _)) in &want {
            assert!(
                &got[name].0 == bytes,
                "{name} (version {version}) differs from dtb gen's"
            );
        }
    }
}

/// A job of one slice refuses a slice another job holds, and a job whose inputs are missing
/// fails with their names and a non-zero status (what makes Slurm cancel its dependants).
#[test]
fn slice_jobs_refuse_what_they_cannot_do() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    let out = Command::new(DTB)
        .args(["gen", "--pieces", "3", "--wld-only", "--out", d])
        .output()
        .unwrap();
    assert!(out.status.success());
    // Hold 1111's slice lock as another job would.
    let lock = std::fs::File::create(tmp.path().join(".dtb-gen-1111.lock")).unwrap();
    lock.lock().unwrap();
    let out = Command::new(DTB)
        .args(["gen", "--slice", "1111", "--wld-only", "--out", d])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    // 1111 reads 4-piece slices that are missing: that is found first.
    assert!(
        err.contains("not finished") && err.contains("0211"),
        "{err}"
    );
    drop(lock);
    // A 3-piece slice whose inputs are finished, locked: refused as held.
    std::fs::remove_file(tmp.path().join("english-1020.wld")).unwrap();
    let lock = std::fs::File::create(tmp.path().join(".dtb-gen-1020.lock")).unwrap();
    lock.lock().unwrap();
    let out = Command::new(DTB)
        .args(["gen", "--slice", "1020", "--wld-only", "--out", d])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("being built by another dtb gen"), "{err}");
    assert!(!tmp.path().join("english-1020.wld").exists());
    drop(lock);
    let out = Command::new(DTB)
        .args(["gen", "--slice", "1020", "--wld-only", "--out", d])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(tmp.path().join("english-1020.wld").exists());
}

/// `--emit json` lists every unit with its reads, memory within the budget, and a critical
/// path; `--emit slurm` submits each unit once, with `afterok` dependencies, the kill flag,
/// `--mem` and `--cpus-per-task`, and the options given.
#[test]
fn json_and_slurm_describe_the_graph() {
    let j: serde_json::Value = serde_json::from_str(&plan(&[
        "--pieces",
        "6",
        "--wld-only",
        "--memory",
        "512M",
        "--emit",
        "json",
        "--cpus",
        "2",
    ]))
    .unwrap();
    let units = j["units"].as_array().unwrap();
    assert_eq!(units.len(), 82);
    assert_eq!(j["jobs"], 82);
    for u in units {
        assert!(u["memory_bytes"].as_u64().unwrap() <= 512 << 20, "{u}");
    }
    let first = &units[0];
    assert_eq!(first["slice"], "0101");
    assert_eq!(first["reads"].as_array().unwrap().len(), 0);
    assert!(j["critical_path_seconds"].as_f64().unwrap() > 0.0);
    assert!(j["cpu_hours"].as_f64().unwrap() > 0.0);
    // A flat speed: each unit's seconds are its positions over the speed of its cores.
    let j: serde_json::Value = serde_json::from_str(&plan(&[
        "--pieces", "3", "--emit", "json", "--cpus", "2", "--speed", "1000",
    ]))
    .unwrap();
    assert_eq!(j["time_forecast"], "flat");
    for u in j["units"].as_array().unwrap() {
        let want = u["positions"].as_f64().unwrap() / 2000.0;
        assert!((u["seconds"].as_f64().unwrap() - want).abs() < 1e-9, "{u}");
    }
    // Speeds that are not a number of positions a second are refused, naming the flag.
    for bad in ["0", "-5", "0.5", "1e-300", "nan", "inf"] {
        let out = Command::new(DTB)
            .args(["plan", "--pieces", "3", "--emit", "json"])
            .arg(format!("--speed={bad}"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--speed {bad}: {err}");
        assert!(err.contains("--speed"), "--speed {bad}: {err}");
        assert!(out.stdout.is_empty(), "--speed {bad}");
    }
    let s = plan(&[
        "--pieces",
        "4",
        "--emit",
        "slurm",
        "--cpus",
        "2",
        "--partition",
        "debug",
        "--time",
        "1:00:00",
        "--sbatch-arg=--qos=low",
        "--out",
        "/data/t",
    ]);
    assert!(s.starts_with("#!/usr/bin/env bash"));
    for want in [
        "--kill-on-invalid-dep=yes",
        "--cpus-per-task=2",
        "--partition=debug",
        "--time=1:00:00",
        "--qos=low",
        "--dependency=\"afterok$dep\"",
        "DIR=${DIR:-/data/t}",
    ] {
        assert!(s.contains(want), "no {want} in\n{s}");
    }
    assert_eq!(s.lines().filter(|l| l.starts_with("unit ")).count(), 23);
    assert!(s.contains("unit 1111 "), "{s}");
}
