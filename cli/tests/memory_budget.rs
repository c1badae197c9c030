//! `dtb gen --memory`: a WLD-only build within a budget writes the same bytes as one without,
//! whichever way it holds its finished slices (memory, or mapped scratch files) and solves its
//! slices of kings only (grouped, or in bits); a slice that cannot fit stops the build before
//! any work; `--slice` builds one slice from the finished ones it reads, or with its
//! dependencies.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use dtb_gen::build::{self, parse_size, BuildError, Plan, Quiet, Values, WldSolver, SCRATCH_DIR};
use dtb_probe::internal::material::Material;
use dtb_probe::Rules;

const DTB: &str = env!("CARGO_BIN_EXE_dtb");

/// Every `.wld` file of `dir` by name, with its bytes.
fn wld_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "wld"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

fn wld_plan(pieces: u32, dir: &Path, memory: u64) -> Plan {
    let mut plan = Plan::new(Rules::ENGLISH, pieces, dir).unwrap();
    plan = plan.with_values(Values::WLD);
    plan = plan.with_memory(memory);
    plan
}

/// English 2-5 WLD with a large budget (everything in memory) and with one small enough
/// that finished slices go to scratch files (slices of kings only are solved by the
/// bit-parallel solver with the large budget, with lean rows with the small one), the largest slices with men keep their own outcomes in mapped scratch
/// files (grouped and bit-parallel solvers alike), and with scratch disk limited, finished slices are read from their table files:
/// the same 45 files, byte for byte; no scratch file left behind.
#[test]
fn a_small_budget_writes_the_same_files() {
    let big = tempfile::tempdir().unwrap();
    let small = tempfile::tempdir().unwrap();
    let large = wld_plan(5, big.path(), 16 << 30);
    assert!(!large.needs_spill(2));
    let tight = wld_plan(5, small.path(), 92 << 20);
    assert!(
        tight.needs_spill(2),
        "92 MiB should not hold 2-5's finished slices"
    );
    // A slice of kings only: the bit-parallel solver where it fits three quarters of the
    // budget, with lean rows where only they fit (so the two builds compare them too), else
    // the bit solver.
    let kings = Material::parse("0104").unwrap();
    assert_eq!(large.wld_solver(kings, 2).0, WldSolver::BitParallel);
    assert_eq!(tight.wld_solver(kings, 2).0, WldSolver::BitParallelLean);
    let tiny = wld_plan(5, small.path(), 68 << 20);
    assert_eq!(tiny.wld_solver(kings, 2).0, WldSolver::Bits);
    // The largest slices with men keep their own outcomes in mapped scratch files.
    let mapped: Vec<Material> = tight
        .slices()
        .iter()
        .copied()
        .filter(|&m| tight.maps_results(m, 2))
        .collect();
    assert!(
        mapped.iter().any(|m| m.men() > 0 && m.pieces() == 5),
        "no 5-piece slice with men maps its outcomes at 92 MiB: {mapped:?}"
    );
    // Both solvers of slices with men map theirs: the grouped one (men only) and the
    // bit-parallel one (men and kings).
    for method in [WldSolver::Grouped, WldSolver::BitParallel] {
        assert!(
            mapped.iter().any(|&m| tight.wld_solver(m, 2).0 == method),
            "no slice solved {method:?} maps its arrays at 92 MiB: {mapped:?}"
        );
    }
    assert!(large.slices().iter().all(|&m| !large.maps_results(m, 2)));
    // And with scratch files limited to 1 MiB: the largest finished slices are read from
    // their table files instead.
    let third = tempfile::tempdir().unwrap();
    let mut tabled = wld_plan(5, third.path(), 92 << 20);
    tabled = tabled.with_scratch_limit(Some(1 << 20));
    let from_tables = tabled.from_tables(2);
    assert!(
        from_tables.len() >= 3 && from_tables.iter().any(|m| m.pieces() == 4),
        "{from_tables:?}"
    );
    let peak_disk = tabled
        .forecast(2)
        .iter()
        .map(|f| f.disk_bytes)
        .max()
        .unwrap();
    let untabled_disk = tight
        .forecast(2)
        .iter()
        .map(|f| f.disk_bytes)
        .max()
        .unwrap();
    assert!(peak_disk < untabled_disk, "{peak_disk} vs {untabled_disk}");
    build::run(&large, &Quiet).unwrap();
    build::run(&tight, &Quiet).unwrap();
    build::run(&tabled, &Quiet).unwrap();
    let a = wld_files(big.path());
    assert_eq!(a.len(), 45);
    for b in [wld_files(small.path()), wld_files(third.path())] {
        assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
        for (name, bytes) in &a {
            assert!(bytes == &b[name], "{name} differs");
        }
    }
    assert!(!small.path().join(SCRATCH_DIR).exists());
    assert!(!third.path().join(SCRATCH_DIR).exists());
}

/// Which finished slices are read from their table files (the scratch limit passed) follows
/// the scratch files on disk: a slice whose scratch file a stopped run left is kept in
/// scratch while another can go to its table, so that a run started again with other free
/// space does not load and resolve that slice again from its table.
#[test]
fn slices_read_from_tables_spare_the_scratch_files_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let plan = wld_plan(5, dir.path(), 110 << 20);
    let peak = plan.forecast(2).iter().map(|f| f.disk_bytes).max().unwrap();
    // The largest limit under the peak at which exactly one slice goes to its table.
    let (limit, big) = (1..64)
        .map(|k| peak - peak / 64 * k)
        .find_map(|limit| {
            let chosen = plan.clone().with_scratch_limit(Some(limit)).from_tables(2);
            (chosen.len() == 1).then(|| (limit, *chosen.iter().next().unwrap()))
        })
        .expect("a limit with one slice read from its table");
    let scratch = dir.path().join(SCRATCH_DIR);
    std::fs::create_dir_all(&scratch).unwrap();
    std::fs::write(scratch.join(format!("english-{big}-0.wld2")), b"").unwrap();
    let now = plan.with_scratch_limit(Some(limit)).from_tables(2);
    assert!(
        !now.is_empty(),
        "the limit still needs a slice from its table"
    );
    assert!(
        !now.contains(&big),
        "{big} has a scratch file, yet: {now:?}"
    );
}

/// A budget too small for some slice is refused before any slice is solved, naming it.
#[test]
fn a_budget_too_small_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let plan = wld_plan(4, dir.path(), 8 << 20);
    match build::run(&plan, &Quiet) {
        Err(BuildError::Memory {
            material,
            needed_mib,
            available_mib,
        }) => {
            assert_eq!(available_mib, 8);
            assert!(needed_mib > 8, "{material}: {needed_mib}");
        }
        other => panic!("expected a memory error, got {:?}", other.map(|s| s.len())),
    }
    assert!(
        wld_files(dir.path()).is_empty(),
        "files written before the refusal"
    );
}

/// `--slice 0202` without its dependencies names every missing one; with them it builds
/// exactly the closure of 0202's successors, and its file equals the one of a whole build;
/// so do bit-parallel slices built alone from the whole build's other files.
#[test]
fn one_slice_alone_and_with_its_dependencies() {
    let dir = tempfile::tempdir().unwrap();
    let m = Material::parse("0202").unwrap();
    match Plan::for_slice(Rules::ENGLISH, m, dir.path(), Values::WLD, false) {
        Err(BuildError::MissingInputs { slice, missing }) => {
            assert_eq!(slice, m);
            let names: Vec<String> = missing.iter().map(|x| x.to_string()).collect();
            assert_eq!(names, ["0101", "0102"]);
        }
        other => panic!(
            "expected missing inputs, got {:?}",
            other.map(|p| p.slices().to_vec())
        ),
    }
    let plan = Plan::for_slice(Rules::ENGLISH, m, dir.path(), Values::WLD, true).unwrap();
    assert_eq!(*plan.slices().last().unwrap(), m);
    build::run(&plan, &Quiet).unwrap();
    let whole = tempfile::tempdir().unwrap();
    build::run(&wld_plan(4, whole.path(), 16 << 30), &Quiet).unwrap();
    let (one, all) = (wld_files(dir.path()), wld_files(whole.path()));
    assert_eq!(one.len(), plan.slices().len());
    for (name, bytes) in &one {
        assert!(bytes == &all[name], "{name} differs");
    }
    // Now that they are finished, the slice alone builds (again) from them.
    std::fs::remove_file(dir.path().join("english-0202.wld")).unwrap();
    let again = Plan::for_slice(Rules::ENGLISH, m, dir.path(), Values::WLD, false).unwrap();
    build::run(&again, &Quiet).unwrap();
    assert!(wld_files(dir.path())["english-0202.wld"] == all["english-0202.wld"]);
    // Slices the bit-parallel solver takes (men and kings), each alone from the others'
    // files, whose capture and threat positions it meets "don't care" and resolves (its
    // row look-ups go position by position there): the whole build's bytes again.
    for name in ["1111", "0211", "1021", "0112"] {
        let m = Material::parse(name).unwrap();
        let file = format!("english-{name}.wld");
        std::fs::remove_file(whole.path().join(&file)).unwrap();
        let one = Plan::for_slice(Rules::ENGLISH, m, whole.path(), Values::WLD, false).unwrap();
        assert_eq!(one.slices().last(), Some(&m));
        build::run(&one, &Quiet).unwrap();
        assert!(
            wld_files(whole.path())[&file] == all[&file],
            "{file} differs"
        );
    }
}

/// A WLD-only build that keeps values files (`--keep-values`) writes the same tables as
/// one that does not, and a values file beside each. A one-slice job over them loads only
/// the slices its moves lead to (their values files: no search, so not the slices those
/// lead to) and writes the same table and values file again; a damaged values file of an
/// input stops the job before any work, naming the file.
#[test]
fn one_slice_jobs_read_values_files() {
    let plain = tempfile::tempdir().unwrap();
    let kept = tempfile::tempdir().unwrap();
    build::run(&wld_plan(4, plain.path(), 16 << 30), &Quiet).unwrap();
    let whole = wld_plan(4, kept.path(), 16 << 30).with_keep_values(true);
    assert!(whole.keeps_values());
    build::run(&whole, &Quiet).unwrap();
    let tables = wld_files(kept.path());
    assert!(tables == wld_files(plain.path()), "tables differ");
    for &x in whole.slices() {
        assert!(whole.values_path(x).is_file(), "{x}: no values file");
    }
    let m = Material::parse("1111").unwrap();
    let table = format!("english-{m}.wld");
    let values = std::fs::read(whole.values_path(m)).unwrap();
    std::fs::remove_file(kept.path().join(&table)).unwrap();
    std::fs::remove_file(whole.values_path(m)).unwrap();
    let job = Plan::for_slice(Rules::ENGLISH, m, kept.path(), Values::WLD, false)
        .unwrap()
        .with_keep_values(true);
    let direct = m.successors();
    let mut loads = 0;
    for f in job.forecast(2) {
        if f.material == m {
            assert_eq!(f.action, build::Action::Solve);
        } else if direct.contains(&f.material) {
            assert_eq!(f.action, build::Action::Load, "{}", f.material);
            loads += 1;
        } else {
            assert_eq!(f.action, build::Action::Skip, "{}", f.material);
        }
    }
    assert!(loads >= 3, "{loads} slices loaded");
    // Without values files the job loads more: what its inputs' searches read.
    std::fs::remove_file(plain.path().join(&table)).unwrap();
    let searched = Plan::for_slice(Rules::ENGLISH, m, plain.path(), Values::WLD, false).unwrap();
    let more = searched
        .forecast(2)
        .iter()
        .filter(|f| f.action == build::Action::Load)
        .count();
    assert!(
        more > loads,
        "{more} loads without values files, {loads} with"
    );
    build::run(&job, &Quiet).unwrap();
    assert!(
        wld_files(kept.path())[&table] == tables[&table],
        "{table} differs"
    );
    assert!(
        std::fs::read(job.values_path(m)).unwrap() == values,
        "values file differs"
    );
    // An input's values file cut short: the job stops, naming it, and writes nothing.
    let input = direct[0].canonical();
    let path = job.values_path(input);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
    std::fs::remove_file(kept.path().join(&table)).unwrap();
    let e = build::run(&job, &Quiet).unwrap_err();
    let text = format!("{:#}", anyhow::Error::from(e));
    assert!(
        text.contains(&format!("english-{input}.values")) && text.contains("remove"),
        "{text}"
    );
    assert!(!kept.path().join(&table).exists(), "{table} written");
}

#[test]
fn sizes_parse_in_binary_units() {
    assert_eq!(parse_size("512M"), Ok(512 << 20));
    assert_eq!(parse_size("20G"), Ok(20 << 30));
    assert_eq!(parse_size("20GiB"), Ok(20 << 30));
    assert_eq!(parse_size("1.5g"), Ok(3 << 29));
    assert_eq!(parse_size("4096"), Ok(4096));
    for bad in ["", "G", "12X", "-1G", "0", "1..5G", "1e30"] {
        assert!(parse_size(bad).is_err(), "{bad:?} accepted");
    }
}

/// The command line: a bad size is a usage error (status 2, one line naming it); a bad
/// `--slice` likewise; `--dry-run` prints the budget.
#[test]
fn command_line_memory_and_slice() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(DTB).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let d = dir.path().to_str().unwrap();
    let (code, _, err) = run(&["gen", "--memory", "lots", "--out", d]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("lots"), "{err}");
    let (code, _, err) = run(&["gen", "--slice", "04x4", "--out", d]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--slice"), "{err}");
    let (code, _, err) = run(&["gen", "--slice", "0000", "--out", d]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("each side needs a piece"), "{err}");
    let (code, _, err) = run(&["gen", "--slice", "0202", "--wld-only", "--out", d]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--with-deps") && err.contains("0101"), "{err}");
    let (code, out, err) = run(&[
        "gen",
        "--pieces",
        "5",
        "--wld-only",
        "--memory",
        "512M",
        "--dry-run",
        "--out",
        d,
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("budget 512 MiB") && out.contains("fits"),
        "{out}"
    );
}

/// Every `.wld` and `.dtw` file of `dir` by name, with its bytes.
fn table_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "wld" || x == "dtw"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// A full build (WLD and DTW) within a budget that sends its finished slices' DTW codes to
/// scratch files writes the same 90 files as one without a budget.
#[test]
fn a_full_build_within_a_budget_writes_the_same_files() {
    let big = tempfile::tempdir().unwrap();
    let small = tempfile::tempdir().unwrap();
    let mut large = Plan::new(Rules::ENGLISH, 5, big.path()).unwrap();
    large = large.with_memory(16 << 30);
    let mut tight = Plan::new(Rules::ENGLISH, 5, small.path()).unwrap();
    tight = tight.with_memory(200 << 20);
    assert!(!large.needs_spill(2));
    assert!(
        tight.needs_spill(2),
        "200 MiB should not hold 2-5's DTW codes"
    );
    build::run(&large, &Quiet).unwrap();
    build::run(&tight, &Quiet).unwrap();
    let (a, b) = (table_files(big.path()), table_files(small.path()));
    assert_eq!(a.len(), 90);
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        assert!(bytes == &b[name], "{name} differs");
    }
    assert!(!small.path().join(SCRATCH_DIR).exists());
}

/// Run `dtb ARGS` and SIGKILL it as soon as `until()` holds (polled every `poll`), or let it
/// end if it finishes first; panics if neither happens within 5 minutes.
fn run_and_kill_when(args: &[&str], poll: std::time::Duration, until: impl Fn() -> bool) {
    let mut child = Command::new(DTB)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !until() && child.try_wait().unwrap().is_none() {
        assert!(
            t0.elapsed().as_secs() < 300,
            "{args:?}: nothing to stop at in 5 minutes"
        );
        std::thread::sleep(poll);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Run `dtb ARGS` to the end (it must succeed) and return its standard output.
fn run_to_the_end(args: &[&str]) -> String {
    let out = Command::new(DTB).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The 45 WLD files of English 2-5 in `dir` are byte for byte those in `reference`, and the
/// build's scratch folder is gone.
fn assert_same_files_as(reference: &Path, dir: &Path) {
    let (a, b) = (wld_files(reference), wld_files(dir));
    assert_eq!(a.len(), 45);
    for (name, bytes) in &a {
        assert!(
            b.get(name) == Some(bytes),
            "{name} differs after the resume"
        );
    }
    assert!(!dir.join(SCRATCH_DIR).exists());
}

/// A budgeted WLD-only build killed (SIGKILL) once some 5-piece slice is finished leaves
/// scratch files with their sidecars; after one of them is damaged, the re-run resumes and
/// ends with the same files as an uninterrupted build, its scratch folder gone.
#[test]
fn a_killed_budgeted_build_resumes_over_its_scratch_files() {
    let reference = tempfile::tempdir().unwrap();
    build::run(&wld_plan(5, reference.path(), 16 << 30), &Quiet).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    let args = [
        "gen",
        "--pieces",
        "5",
        "--wld-only",
        "--memory",
        "110M",
        "--json",
        "--out",
        &d,
    ];
    let scratch = dir.path().join(SCRATCH_DIR);
    let five = |p: &Path| {
        std::fs::read_dir(p).unwrap().flatten().any(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.ends_with(".wld")
                && n.bytes()
                    .filter(u8::is_ascii_digit)
                    .map(|b| u32::from(b - b'0'))
                    .sum::<u32>()
                    == 5
        })
    };
    // A fast machine may finish first: then there is nothing to resume.
    run_and_kill_when(&args, std::time::Duration::from_millis(20), || {
        five(dir.path())
    });
    let names: Vec<String> = std::fs::read_dir(&scratch)
        .map(|r| {
            r.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let data: Vec<&String> = names.iter().filter(|n| n.ends_with(".wld2")).collect();
    for n in &data {
        assert!(
            names.contains(&format!("{n}.crc")),
            "{n} without its sidecar"
        );
    }
    if let Some(n) = data.first() {
        let p = scratch.join(n);
        let mut bytes = std::fs::read(&p).unwrap();
        bytes[0] ^= 0x40;
        std::fs::write(&p, bytes).unwrap();
    }
    run_to_the_end(&args);
    assert_same_files_as(reference.path(), dir.path());
}

/// A budgeted WLD-only build killed (SIGKILL) in the middle of a slice, after that slice
/// recorded some finished rounds (`--checkpoint-positions 0 --checkpoint-every 0`: every
/// slice with men, after every round), takes those rounds over when run again (its `--json`
/// line says how many) and ends with the same files as an uninterrupted build.
#[test]
fn a_build_killed_mid_slice_resumes_at_its_last_record() {
    let reference = tempfile::tempdir().unwrap();
    build::run(&wld_plan(5, reference.path(), 16 << 30), &Quiet).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    let args = [
        "gen",
        "--pieces",
        "5",
        "--wld-only",
        "--memory",
        "110M",
        "--checkpoint-positions",
        "0",
        "--checkpoint-every",
        "0",
        "--json",
        "--out",
        &d,
    ];
    let scratch = dir.path().join(SCRATCH_DIR);
    let records = || -> Vec<String> {
        std::fs::read_dir(&scratch)
            .map(|r| {
                r.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with("solving-") && n.ends_with(".json"))
                    .collect()
            })
            .unwrap_or_default()
    };
    // Kill a run as soon as a record appears; if the slice finished (its record gone) before
    // the kill, the next run goes on from there and is killed at the next record.
    let mut stopped = None;
    for _ in 0..50 {
        run_and_kill_when(&args, std::time::Duration::from_millis(2), || {
            !records().is_empty()
        });
        if let Some(r) = records().first() {
            stopped = Some(
                r.trim_start_matches("solving-")
                    .trim_end_matches(".json")
                    .to_string(),
            );
            break;
        }
    }
    let slice = stopped.expect("no run was stopped with a record in place");
    let lines: Vec<serde_json::Value> = run_to_the_end(&args)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .collect();
    let line = lines
        .iter()
        .find(|v| v["slice"] == slice.as_str())
        .unwrap_or_else(|| panic!("no --json line for slice {slice}"));
    // The summary of a WLD-only build names no kind of distance.
    let summary = lines
        .iter()
        .find(|v| v["summary"] == true)
        .expect("summary");
    assert!(summary["distance_kind"].is_null(), "{summary}");
    assert!(
        line["resumed_rounds"].as_u64().unwrap() > 0,
        "slice {slice} did not take its recorded rounds over: {line}"
    );
    assert!(line["solve_seconds"].as_f64().unwrap() > 0.0, "{line}");
    assert_same_files_as(reference.path(), dir.path());
}

/// A build whose process may not have the memory it was told (`--memory 4G` under
/// `ulimit -v` of 200 MB) stops on the first slice-sized buffer it cannot get with a clear
/// error and status 2, not an abort; the slices finished before it stay finished. With
/// distances: a WLD-only build solves 0104 (kings only) in bits, well under the limit.
#[test]
fn a_failed_large_allocation_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 200000 && exec {} gen --variant international --slice 0104 --with-deps \
             --memory 4G --threads 1 --out {}",
            env!("CARGO_BIN_EXE_dtb"),
            out.display()
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let last = err.lines().last().unwrap_or("");
    assert!(
        last.starts_with("dtb: error: solving slice 0104: cannot allocate ")
            && last.contains("MiB"),
        "{last}"
    );
    assert!(!out.join("international-0104.wld").exists());
    assert!(out.join("international-0103.wld").exists(), "{err}");
}
