//! Reliability of `dtb gen`: nothing lost, nothing wrong, no crash.
//!
//! - A build killed (SIGKILL) at pseudo-random moments, again and again on one directory,
//!   never leaves a file with a final name that is not the finished file, resumes by skipping
//!   the finished slices, and ends byte-identical to an uninterrupted build.
//! - A second `dtb gen` on a directory in use is refused at once; the first is unharmed.
//! - Builds are byte-identical across runs and thread counts.
//! - A full disk (a tiny tmpfs, when this process may mount one) and an output path that is a
//!   regular file give one clear error line and no finished-looking partial file.
//! - Damaged finished files (a flipped byte, a truncation, another slice's file) and a stale
//!   temporary are found and rebuilt; a 2-3 build extended to 4 pieces equals the 2-4 build.
//!
//! The English 2-4 reference build is made once per test binary through the `dtb` binary and
//! kept in memory.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use dtb_probe::internal::table::{BlockCache, TableFile};

const DTB: &str = env!("CARGO_BIN_EXE_dtb");
const LOCK_FILE: &str = ".dtb-gen.lock";

/// Deterministic pseudo-random numbers (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        dtb_probe::internal::rng::splitmix64(&mut self.0)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `dtb gen --variant english --pieces <pieces> --out <dir> --json <extra...>`.
fn gen_command(pieces: u32, dir: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(DTB);
    c.args(["gen", "--variant", "english", "--pieces"])
        .arg(pieces.to_string())
        .arg("--out")
        .arg(dir)
        .arg("--json")
        .args(extra);
    c
}

/// One per-slice JSON line of `dtb gen --json`: (slice, skipped, seconds).
fn slice_lines(stdout: &str) -> Vec<(String, bool, f64)> {
    let mut v = Vec::new();
    // Only complete lines: a killed process may have been cut mid-line.
    let complete = match stdout.rfind('\n') {
        Some(i) => &stdout[..=i],
        None => "",
    };
    for line in complete.lines() {
        let j: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
        if j.get("summary").is_some() {
            continue;
        }
        let slice = j["slice"].as_str().expect("slice name").to_string();
        let skipped = j["skipped"].as_bool().expect("skipped flag");
        let seconds = j["seconds"].as_f64().expect("seconds");
        v.push((slice, skipped, seconds));
    }
    v
}

/// Whether `name` has the form of a finished table of the English build:
/// `english-DDDD.wld` or `english-DDDD.dtw`.
fn is_table_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("english-") else {
        return false;
    };
    let Some((digits, ext)) = rest.split_once('.') else {
        return false;
    };
    digits.len() == 4
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (ext == "wld" || ext == "dtw")
}

/// The table files (final names only) of `dir` and their bytes.
fn table_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(dir).expect("list directory") {
        let e = e.expect("directory entry");
        let name = e.file_name().to_string_lossy().into_owned();
        if is_table_name(&name) {
            m.insert(name, std::fs::read(e.path()).expect("read table"));
        }
    }
    m
}

/// The uninterrupted English 2-4 build: its files, per-slice seconds (solve order) and wall
/// time. Its directory is removed once read (a static is never dropped).
struct Reference {
    files: BTreeMap<String, Vec<u8>>,
    slices: Vec<(String, f64)>,
    wall: Duration,
}

fn reference() -> &'static Reference {
    static REF: OnceLock<Reference> = OnceLock::new();
    REF.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("dtb-reliability-ref-")
            .tempdir()
            .expect("temp dir");
        let t0 = Instant::now();
        let out = gen_command(4, dir.path(), &[]).output().expect("run dtb");
        let wall = t0.elapsed();
        assert!(
            out.status.success(),
            "reference build failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
        let lines = slice_lines(&stdout);
        assert_eq!(lines.len(), 23, "English 2-4 has 23 slices");
        assert!(lines.iter().all(|(_, skipped, _)| !skipped));
        let files = table_files(dir.path());
        assert_eq!(files.len(), 46, "two files per slice");
        eprintln!(
            "reference English 2-4 build: {:.2} s wall, {:.2} s in slices",
            wall.as_secs_f64(),
            lines.iter().map(|l| l.2).sum::<f64>()
        );
        drop(dir);
        Reference {
            files,
            slices: lines.into_iter().map(|(s, _, secs)| (s, secs)).collect(),
            wall,
        }
    })
}

fn file_name_of(slice: &str, ext: &str) -> String {
    format!("english-{slice}.{ext}")
}

/// What a directory holds after a (possibly killed) build.
#[derive(Debug, Default)]
struct DirState {
    /// Slices with both files present (each verified and identical to the reference).
    finished: BTreeSet<String>,
    /// Table files present (final names).
    tables: usize,
    /// Temporary files left behind (`.*.tmp`).
    temporaries: usize,
}

/// Checks the invariant of an interrupted build: every file with a final table name opens,
/// passes its checksums and equals the reference file byte for byte; everything else is the
/// lock file or a `.*.tmp` temporary.
fn check_dir(dir: &Path, reference: &Reference, when: &str) -> DirState {
    let cache = Arc::new(BlockCache::new(1 << 20));
    let mut st = DirState::default();
    let mut present = BTreeSet::new();
    for e in std::fs::read_dir(dir).expect("list directory") {
        let e = e.expect("directory entry");
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        if name == LOCK_FILE {
            continue;
        }
        if is_table_name(&name) {
            let t = TableFile::open(&path, cache.clone())
                .unwrap_or_else(|err| panic!("{when}: {name} looks finished but is not: {err}"));
            t.verify_payload()
                .unwrap_or_else(|err| panic!("{when}: {name} fails verification: {err}"));
            let bytes = std::fs::read(&path).expect("read table");
            let want = reference
                .files
                .get(&name)
                .unwrap_or_else(|| panic!("{when}: unexpected table {name}"));
            assert!(
                &bytes == want,
                "{when}: {name} differs from the reference build ({} vs {} bytes)",
                bytes.len(),
                want.len()
            );
            st.tables += 1;
            present.insert(name);
        } else if name.starts_with('.') && name.ends_with(".tmp") {
            st.temporaries += 1;
        } else {
            panic!("{when}: unexpected file {name:?} in the output directory");
        }
    }
    for (slice, _) in &reference.slices {
        if present.contains(&file_name_of(slice, "wld"))
            && present.contains(&file_name_of(slice, "dtw"))
        {
            st.finished.insert(slice.clone());
        }
    }
    st
}

/// Asserts that the slice lines a run printed say "skipped" exactly for the slices that were
/// finished on disk when it started.
fn check_skips(lines: &[(String, bool, f64)], finished_before: &BTreeSet<String>, when: &str) {
    for (slice, skipped, _) in lines {
        assert_eq!(
            *skipped,
            finished_before.contains(slice),
            "{when}: slice {slice} reported skipped={skipped}, but it was {}finished on disk before the run",
            if finished_before.contains(slice) { "" } else { "not " }
        );
    }
}

/// When a restarted build is killed.
#[derive(Clone, Copy, Debug)]
enum KillAt {
    /// After a pseudo-random delay: the time the restart needs to redo the work lost by the
    /// last kill, plus a random part (0.2..1.4) of the next unfinished slice's reference time.
    Timed,
    /// As soon as a new temporary file appears (a table being written, flushed or verified).
    Temporary,
    /// As soon as a new table file appears under its final name (right after a rename: the
    /// WLD file of the slice, written after its DTW file, is usually still missing).
    NewTable,
}

/// The temporaries and table files of `dir`, by name.
fn names(dir: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut tmp = BTreeSet::new();
    let mut tables = BTreeSet::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".tmp") {
            tmp.insert(name);
        } else if is_table_name(&name) {
            tables.insert(name);
        }
    }
    (tmp, tables)
}

#[test]
fn killed_builds_resume_and_end_identical() {
    let reference = reference();
    let dir = tempfile::Builder::new()
        .prefix("dtb-reliability-kill-")
        .tempdir()
        .expect("temp dir");
    let overhead = (reference.wall.as_secs_f64()
        - reference.slices.iter().map(|s| s.1).sum::<f64>())
    .clamp(0.01, 0.5);
    const KILLS: usize = 12;
    const MIN_LANDED: usize = 10;
    let mut rng = Rng(0x5eed_0001_dead_beef);

    let mut landed = 0;
    let mut with_temporaries = 0;
    let mut half_slices = 0;
    let mut skipped_lines = 0;
    let mut state = check_dir(dir.path(), reference, "before the first run");
    for i in 0..KILLS {
        let mut kind = [KillAt::Timed, KillAt::Temporary, KillAt::NewTable][i % 3];
        // Reference seconds of the slices not finished yet, in solve order.
        let left: Vec<f64> = reference
            .slices
            .iter()
            .filter(|(s, _)| !state.finished.contains(s))
            .map(|s| s.1)
            .collect();
        let left_total: f64 = left.iter().sum();
        assert!(!left.is_empty(), "the build finished before kill {i}");
        let before = state.finished.clone();
        let (tmp_before, tables_before) = names(dir.path());
        if reference.files.len() - tables_before.len() <= 2 {
            // Waiting for the next table could mean waiting for the end of the build.
            kind = KillAt::Timed;
        }
        let started = Instant::now();
        let mut child = gen_command(4, dir.path(), &[])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start dtb gen");
        match kind {
            KillAt::Timed => {
                // Spread the kills over the work left; never past 80% of it, so that the run
                // is still going.
                let aim =
                    (rng.unit() * 2.0 * left_total / (KILLS - i) as f64).min(0.8 * left_total);
                std::thread::sleep(Duration::from_secs_f64(overhead + aim));
            }
            KillAt::Temporary | KillAt::NewTable => {
                // Wait for the n-th new table file (NewTable), or for the temporary of the n-th
                // (Temporary; if it lived too short to be seen, the n-th table itself), n drawn
                // to spread the kills over the tables left, never the last one.
                let available = reference.files.len() - tables_before.len();
                let spread = 2 * available / (KILLS - i);
                let n = (1 + (rng.next() as usize) % spread.max(1))
                    .min(available - 1)
                    .max(1);
                let deadline = started + Duration::from_secs(60);
                let mut tmp_seen = tmp_before.clone();
                loop {
                    let (tmp, tables) = names(dir.path());
                    let new_tables = tables.difference(&tables_before).count();
                    let new_tmp = tmp.difference(&tmp_seen).next().is_some();
                    let hit = match kind {
                        KillAt::Temporary => (new_tables + 1 == n && new_tmp) || new_tables >= n,
                        _ => new_tables >= n,
                    };
                    if hit
                        || Instant::now() > deadline
                        || child.try_wait().expect("poll dtb gen").is_some()
                    {
                        break;
                    }
                    if new_tables + 1 < n {
                        tmp_seen.extend(tmp);
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
        }
        let at = started.elapsed();
        child.kill().expect("kill dtb gen");
        let out = child.wait_with_output().expect("wait for dtb gen");
        let when = format!("after kill {i} ({kind:?}) at {:.3} s", at.as_secs_f64());
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(
                out.status.signal(),
                Some(9),
                "{when}: the build ended by itself ({:?}) before it was killed; stderr: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            landed += 1;
        }
        let lines = slice_lines(&String::from_utf8_lossy(&out.stdout));
        check_skips(&lines, &before, &when);
        skipped_lines += lines.iter().filter(|l| l.1).count();
        state = check_dir(dir.path(), reference, &when);
        assert!(
            state.finished.is_superset(&before),
            "{when}: finished slices disappeared"
        );
        if state.temporaries > 0 {
            with_temporaries += 1;
        }
        if state.tables > 2 * state.finished.len() {
            half_slices += 1;
        }
        eprintln!(
            "{when}: {} slices finished, {} table files, {} temporaries, {} slice lines printed",
            state.finished.len(),
            state.tables,
            state.temporaries,
            lines.len()
        );
    }
    assert!(landed >= MIN_LANDED, "only {landed} kills landed");

    // Let it finish.
    let before = state.finished.clone();
    let out = gen_command(4, dir.path(), &[])
        .output()
        .expect("run dtb gen");
    assert!(
        out.status.success(),
        "final run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = slice_lines(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(lines.len(), 23, "the final run reports every slice");
    check_skips(&lines, &before, "final run");
    skipped_lines += lines.iter().filter(|l| l.1).count();
    assert!(skipped_lines > 0, "no resumed run skipped a finished slice");
    let state = check_dir(dir.path(), reference, "after the final run");
    assert_eq!(
        state.temporaries, 0,
        "temporaries left after a complete run"
    );
    assert_eq!(
        table_files(dir.path()),
        reference.files,
        "the resumed build differs from the uninterrupted one"
    );
    eprintln!(
        "{landed} kills landed; {with_temporaries} left temporaries, {half_slices} left a slice with one of its two files; {skipped_lines} skipped slice lines"
    );
}

#[test]
fn second_generator_on_the_same_directory_is_refused() {
    let reference = reference();
    let dir = tempfile::Builder::new()
        .prefix("dtb-reliability-lock-")
        .tempdir()
        .expect("temp dir");
    let mut first = gen_command(4, dir.path(), &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the first dtb gen");
    let mut first_out = BufReader::new(first.stdout.take().expect("stdout"));
    // Its first slice line proves it holds the lock.
    let mut line = String::new();
    first_out.read_line(&mut line).expect("read first line");
    assert!(
        line.contains("\"slice\""),
        "first line of the first generator: {line:?}"
    );

    let t0 = Instant::now();
    let second: Output = gen_command(4, dir.path(), &[])
        .output()
        .expect("run the second dtb gen");
    let took = t0.elapsed();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "the second generator succeeded");
    assert!(
        stderr.contains("in use"),
        "the second generator's message lacks \"in use\": {stderr:?}"
    );
    assert!(
        took < Duration::from_secs(5),
        "the second generator took {took:?} to give up"
    );
    assert!(
        second.stdout.is_empty(),
        "the second generator reported work: {}",
        String::from_utf8_lossy(&second.stdout)
    );
    assert!(
        first.try_wait().expect("poll first").is_none(),
        "the first generator finished before the second was refused: the test proved nothing"
    );

    let mut rest = String::new();
    first_out.read_to_string(&mut rest).expect("read the rest");
    let status = first.wait().expect("wait for the first");
    let mut err = String::new();
    first
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("read stderr");
    assert!(status.success(), "the first generator failed: {err}");
    let lines = slice_lines(&(line + &rest));
    assert_eq!(lines.len(), 23);
    assert!(rest.contains("\"summary\":true"), "no summary line");
    assert_eq!(table_files(dir.path()), reference.files);
    eprintln!("second generator refused in {took:?}: {}", stderr.trim());
}

#[test]
fn builds_are_identical_across_runs_and_thread_counts() {
    let reference = reference();
    for threads in ["1", "2"] {
        let dir = tempfile::Builder::new()
            .prefix("dtb-reliability-threads-")
            .tempdir()
            .expect("temp dir");
        let t0 = Instant::now();
        let out = gen_command(4, dir.path(), &["--threads", threads])
            .output()
            .expect("run dtb gen");
        assert!(
            out.status.success(),
            "--threads {threads}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let files = table_files(dir.path());
        assert_eq!(files.len(), reference.files.len());
        for (name, bytes) in &files {
            assert!(
                bytes == &reference.files[name],
                "--threads {threads}: {name} differs from the reference build"
            );
        }
        eprintln!(
            "--threads {threads}: identical, {:.2} s",
            t0.elapsed().as_secs_f64()
        );
    }
}

/// Unmounts a tmpfs when dropped.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.0)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("warning: could not unmount {}", self.0.display());
        }
    }
}

#[test]
fn full_disk_is_a_clear_error_and_leaves_no_finished_looking_file() {
    let reference = reference();
    let mount_point = tempfile::Builder::new()
        .prefix("dtb-reliability-full-")
        .tempdir()
        .expect("temp dir");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(mount_point.path())
        .stderr(Stdio::piped())
        .output();
    match mounted {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            eprintln!(
                "note: full-disk test skipped: cannot mount a tmpfs here ({})",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            return;
        }
        Err(e) => {
            eprintln!("note: full-disk test skipped: cannot run mount ({e})");
            return;
        }
    }
    let _guard = Mounted(mount_point.path().to_path_buf());
    let dir = mount_point.path();
    let out = gen_command(4, dir, &[]).output().expect("run dtb gen");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a build into 64 KiB succeeded");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one error line expected: {stderr:?}");
    let line = lines[0];
    assert!(line.starts_with("dtb: error: "), "{line}");
    // The message names the table being written and the cause.
    let prefix = format!("{}/english-", dir.display());
    assert!(
        line.contains(&prefix) && (line.contains(".wld") || line.contains(".dtw")),
        "the error does not name the file: {line}"
    );
    assert!(
        line.contains("No space left on device"),
        "the error does not say the disk is full: {line}"
    );
    let state = check_dir(dir, reference, "after the full disk");
    assert_eq!(
        state.temporaries, 0,
        "the failed write left its temporary file"
    );
    // The slices reported done are exactly those on disk.
    let done: BTreeSet<String> = slice_lines(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .map(|l| l.0)
        .collect();
    assert_eq!(done, state.finished);
    eprintln!("full disk after {} slices: {}", state.finished.len(), line);
}

#[test]
fn output_path_that_is_a_file_is_a_clear_error() {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), b"not a directory").expect("write");
    for out_path in [file.path().to_path_buf(), file.path().join("tables")] {
        let out = gen_command(2, &out_path, &[])
            .output()
            .expect("run dtb gen");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "--out {}", out_path.display());
        assert!(!stderr.contains("panicked"), "{stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one error line expected: {stderr:?}");
        assert!(lines[0].starts_with("dtb: error: "), "{stderr}");
        assert!(
            lines[0].contains(&out_path.display().to_string()),
            "the error does not name {}: {stderr}",
            out_path.display()
        );
        assert!(out.stdout.is_empty());
        assert_eq!(
            std::fs::read(file.path()).expect("read"),
            b"not a directory",
            "the file was changed"
        );
    }
}

#[test]
fn error_cause_is_printed_once() {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    let out = gen_command(2, file.path(), &[])
        .output()
        .expect("run dtb gen");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    // Said once, in words: the file in the way (not the system's "File exists (os error
    // 17)" after it).
    assert_eq!(
        stderr.matches("is not a directory").count(),
        1,
        "the cause is repeated: {stderr}"
    );
    assert!(!stderr.contains("os error"), "{stderr}");
}

#[test]
fn damaged_finished_files_are_rebuilt_and_a_build_extends() {
    let reference = reference();
    let dir = tempfile::Builder::new()
        .prefix("dtb-reliability-damage-")
        .tempdir()
        .expect("temp dir");
    let run = |pieces: u32| {
        let out = gen_command(pieces, dir.path(), &[])
            .output()
            .expect("run dtb gen");
        assert!(
            out.status.success(),
            "--pieces {pieces}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        slice_lines(&String::from_utf8_lossy(&out.stdout))
    };
    // A 2-3 build holds the same bytes as the 2-4 build for its slices.
    let lines = run(3);
    assert_eq!(lines.len(), 9);
    let three = table_files(dir.path());
    assert_eq!(three.len(), 18);
    for (name, bytes) in &three {
        assert!(
            bytes == &reference.files[name],
            "{name} of the 2-3 build differs from the 2-4 build's"
        );
    }
    // Damage three finished slices and leave a stale temporary.
    let p = |name: &str| dir.path().join(name);
    let mut b = std::fs::read(p("english-0111.wld")).expect("read");
    let at = b.len() - 3;
    b[at] ^= 0x20; // inside the last block
    std::fs::write(p("english-0111.wld"), &b).expect("write");
    let b = std::fs::read(p("english-1011.dtw")).expect("read");
    std::fs::write(p("english-1011.dtw"), &b[..b.len() - 1]).expect("truncate");
    std::fs::copy(p("english-0102.wld"), p("english-0120.wld")).expect("copy");
    std::fs::write(p(".english-0101.wld.AbCdEf.tmp"), b"stale").expect("write");
    let damaged: BTreeSet<&str> = ["0111", "1011", "0120"].into();
    let lines = run(3);
    assert_eq!(lines.len(), 9);
    for (slice, skipped, _) in &lines {
        assert_eq!(
            *skipped,
            !damaged.contains(slice.as_str()),
            "slice {slice}: skipped={skipped}"
        );
    }
    let state = check_dir(dir.path(), reference, "after repairing");
    assert_eq!(state.temporaries, 0, "the stale temporary was not removed");
    assert_eq!(table_files(dir.path()), three);
    // Extending to 4 pieces skips the 2-3 slices and ends like the 2-4 build.
    let lines = run(4);
    assert_eq!(lines.len(), 23);
    for (slice, skipped, _) in &lines {
        assert_eq!(
            *skipped,
            slice.bytes().map(|c| u32::from(c - b'0')).sum::<u32>() <= 3
        );
    }
    assert_eq!(table_files(dir.path()), reference.files);
}
