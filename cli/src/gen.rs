//! `dtb gen`: build the tables of a set (or of one slice), with progress bars or JSON lines;
//! `--dry-run` prints the plan against the memory budget instead.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use dtb_gen::build::{self, Action, Observer, Plan, SliceStats};
use dtb_gen::write::CompressionParams;
use dtb_probe::Material;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use serde_json::json;

use crate::args::{FillArg, Set};
use crate::output::{bits_per_position, count_of, longest, plies, StdoutError};

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    #[command(flatten)]
    set: Set,
    /// Worker threads, 1 to 1024 (default: one per core).
    #[arg(long, value_parser = crate::args::number_in(1u16, Some(1024)))]
    threads: Option<u16>,
    /// zstd level of every table file (1 to 22; higher is smaller and slower to write),
    /// with zstd's own parameters for it. Without it (or --zstd), WLD and DTC files are
    /// written at level 15 with search settings tuned on English WLD tables (--zstd
    /// 15:strat=7,slog=2,tlen=999,mml=5), DTW files with settings tuned on English DTW tables
    /// (15:strat=7,slog=2,tlen=32: compressed in three quarters of the time, for 1% more
    /// bytes).
    #[arg(long, value_parser = crate::args::number_in(1i32, Some(22)), conflicts_with = "zstd")]
    zstd_level: Option<i32>,
    /// zstd settings of every table file: LEVEL[:strat=S,slog=N,tlen=N,mml=N,clog=N,hlog=N]
    /// (strat 1 fast .. 9 btultra2, slog search log, tlen target length, mml minimum match,
    /// clog chain log, hlog hash log). Any settings are readable by every prober.
    #[arg(long, value_name = "SPEC")]
    zstd: Option<CompressionParams>,
    /// How WLD files fill their "don't care" positions (values readers never use: only the
    /// bytes differ). best tries major, prev and next on each block and keeps the smallest:
    /// smaller files, slower writing. Every build's WLD files, with or without DTW.
    #[arg(long, value_enum, default_value_t = FillArg::Major)]
    fill: FillArg,
    /// Positions per block of the WLD files and values files (a multiple of 64, from 64 to
    /// 16777216; default 65536: 16 KiB decompressed). Longer blocks compress smaller, or as
    /// small with faster --zstd settings: with --block-len 262144 --zstd 9 English 2-7 was
    /// built 1.08 times as fast for 1.2% fewer bytes, and an 8-piece slice written 3.3
    /// times as fast for 3% more (docs/PERFORMANCE.md), while a probe that misses the block
    /// cache decompresses for about twice as long. Every prober reads any block length.
    #[arg(long, value_name = "N", value_parser = crate::args::block_len_parser(), allow_hyphen_values = true)]
    block_len: Option<u32>,
    /// Positions per block of the distance files, DTW and DTC (a multiple of 64, from 64 to
    /// 16777216; default 16384: 16 KiB decompressed where a DTW value takes a byte). As
    /// with --block-len, longer blocks compress smaller or as small with faster --zstd
    /// settings: with --block-len 262144 --distance-block-len 65536 --zstd 9 English 2-6
    /// (WLD and DTW) was built 1.22 times as fast, its DTW files written 2.3 times as fast
    /// for 1.3% more bytes (docs/PERFORMANCE.md), while a probe that misses the block cache
    /// decompresses for about 2.3 times as long. Every prober reads any block length.
    #[arg(long, value_name = "N", value_parser = crate::args::block_len_parser(), allow_hyphen_values = true)]
    distance_block_len: Option<u32>,
    /// Disk the scratch files may take (as --memory: 50G). A WLD-only build whose
    /// finished slices would pass it reads the largest of them from their compressed
    /// table files (slower look-ups) instead of scratch files. Default: the free space
    /// of --out's file system (with the scratch files already there) less 1/8.
    #[arg(long, value_name = "SIZE", value_parser = build::parse_size, allow_hyphen_values = true)]
    scratch_limit: Option<u64>,
    /// Resume large slices mid-way: a slice of at least this many positions (both sides
    /// to move; default 1073741824, about two minutes of solving) that a WLD-only build
    /// keeping finished slices in scratch files (a --memory smaller than the whole set)
    /// solves keeps its own outcomes in scratch files too, and records the rounds it has
    /// finished, so that a run stopped at any moment (even by SIGKILL) starts again at the
    /// last record instead of the slice's start. 0: every such slice.
    #[arg(long, value_name = "POSITIONS", value_parser = crate::args::number_in(0u64, None), allow_hyphen_values = true)]
    checkpoint_positions: Option<u64>,
    /// The least time between two records of a slice's finished rounds (see
    /// --checkpoint-positions), in seconds (default 60; 0: after every round). Each record
    /// first writes the slice's scratch files to disk.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    checkpoint_every: Option<std::time::Duration>,
    /// Build one slice alone (its material: white men, white kings, black men, black
    /// kings, e.g. 0404), from the finished slices it reads in --out; a missing one is
    /// an error naming it. --pieces is ignored.
    #[arg(long, value_name = "SLICE")]
    slice: Option<String>,
    /// Also write the true values of each slice this run solves (every position's,
    /// capture and threat positions included) in a file beside its table,
    /// <variant>-<slice>.values (a WLD file of format version 4, zstd level 3; about a
    /// third of a bit a position, 5.6 times the tables at English 2-7), for the one-slice
    /// jobs that read it later: a job reads an input's values file instead of its table,
    /// so it searches none of the input's "don't care" positions and loads none of the
    /// slices those searches read. Any WLD-only build reads values files it finds, with or
    /// without this flag. WLD-only builds (--values wld) only. Probers never read these
    /// files; remove them once no slice is left to build.
    #[arg(long)]
    keep_values: bool,
    /// With --slice: build the slices it depends on that are missing first.
    #[arg(long, requires = "slice")]
    with_deps: bool,
    /// Print one JSON object per slice and a summary, instead of text.
    #[arg(long)]
    json: bool,
    /// Write nothing: list what the build would do with each slice (solve, load a
    /// finished one that a slice to solve needs, or skip) and the memory it would need,
    /// against the memory available now. Exit status 1 if some slice would not fit.
    #[arg(long)]
    dry_run: bool,
}

/// Run the command line `args`; the exit code on success (probe: 1 if any position failed).
///
/// # Errors
/// Any failure, as one message chain for the caller to print.
pub fn run(a: Args) -> Result<ExitCode> {
    // Given, one setting for every file; otherwise the plan's own for each kind.
    let zstd = a.zstd.or(a.zstd_level.map(CompressionParams::level));
    let variant = a.set.variant()?;
    let rules = variant.rules;
    let out = a.set.out.clone();
    let plan = match &a.slice {
        Some(text) => {
            let m = Material::parse(text).with_context(|| {
                format!("--slice {text:?}: not a slice (four digits: white men, white kings, black men, black kings, e.g. 0404)")
            })?;
            Plan::for_slice(rules, m, out, a.set.values(), a.with_deps || a.dry_run)?
        }
        None => Plan::new(rules, a.set.pieces, out)?,
    };
    if a.keep_values && a.set.values().solves_distances() {
        bail!(
            "--keep-values: values files are for WLD-only builds (--values wld); this build \
             solves distances ({})",
            a.set.values()
        );
    }
    let mut plan = a
        .set
        .with_format_version(plan.with_values(a.set.values()))?
        .with_keep_values(a.keep_values)
        .with_fill(a.fill.into())
        .with_count(variant.count);
    if let Some(n) = a.block_len {
        plan = plan.with_wld_block_len(n)?;
    }
    plan = crate::args::with_distance_block_len(plan, a.distance_block_len, "this build")?;
    if let Some(z) = zstd {
        plan = plan.with_zstd(z);
    }
    if let Some(m) = a.set.memory {
        plan = plan.with_memory(m);
    }
    let limit = a.scratch_limit.or_else(|| {
        let free = fs_free(plan.out())? + build::scratch_on_disk(&plan);
        Some(free - free / 8)
    });
    let (positions, every) = plan.checkpoints();
    let plan = plan.with_scratch_limit(limit).with_checkpoints(
        a.checkpoint_positions.unwrap_or(positions),
        a.checkpoint_every.unwrap_or(every),
    );
    if a.dry_run {
        return dry_run(plan, a.threads, a.json);
    }
    gen(plan, a.threads, a.json)
}

/// A number of seconds, 0 or more (fractions allowed).
fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    std::time::Duration::try_from_secs_f64(secs)
        .map_err(|_| format!("{s:?}: seconds must be 0 or more, and finite"))
}

struct Bars {
    multi: MultiProgress,
    overall: ProgressBar,
    slice: ProgressBar,
    json: bool,
    /// The first failed write of a JSON line to standard output (the build goes on: its
    /// product is the files; the error is returned when it ends).
    failed: Mutex<Option<StdoutError>>,
    /// When the first slice of this run started (after the checks and loads before it).
    started: std::sync::OnceLock<Instant>,
    /// The process's CPU time and major page faults then (where the system says them).
    started_usage: std::sync::OnceLock<build::ProcessUsage>,
    /// The name of the distance files the build writes (DTW or DTC), for its lines; `None`
    /// for a WLD-only build, whose lines give no distance and no distance bytes.
    distance: Option<&'static str>,
    /// Positions a block of the distance and the WLD files this run writes (0: none), what
    /// a slice found finished in other blocks is told against.
    block_lens: [u32; 2],
}

impl Observer for Bars {
    fn build_start(&self, work: u64) {
        self.overall.set_length(work.max(1));
        self.overall.set_position(0);
        self.overall.reset_eta();
        let _ = self.started.set(Instant::now());
        if let Some(u) = build::process_usage() {
            let _ = self.started_usage.set(u);
        }
    }
    fn slice_start(&self, i: usize, total: usize, m: Material, work: u64) {
        self.overall.set_message(format!("slice {}/{total}", i + 1));
        self.slice.reset();
        self.slice.set_length(work.max(1));
        self.slice.set_message(format!("slice {m}"));
    }
    fn progress(&self, units: u64) {
        self.slice.inc(units);
        self.overall.inc(units);
    }
    fn unusable(&self, m: Material, why: &str) {
        let line = format!("slice {m}: solving it again, its file is unusable: {why}");
        if self.multi.is_hidden() {
            eprintln!("{line}");
        } else {
            let _ = self.multi.println(&line);
        }
    }
    fn slice_done(&self, s: &SliceStats) {
        let line = if self.json {
            let mut line = slice_json(s);
            if let Some(fields) = line.as_object_mut() {
                fields.extend(self.build_json());
            }
            line.to_string()
        } else {
            slice_text(s, self.distance, self.block_lens)
        };
        if self.json {
            let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
            if failed.is_none() {
                if let Err(e) = crate::output::line(format_args!("{line}")) {
                    *failed = Some(e);
                }
            }
        } else {
            let _ = self.multi.println(&line);
            if self.multi.is_hidden() {
                eprintln!("{line}");
            }
        }
    }
}

impl Bars {
    /// The whole run so far, for the JSON line of each slice: the share of this run's
    /// solving work done (0 to 1, in the work units of the overall bar: each slice's
    /// solver's cost, [`dtb_gen::build::Plan::work`]),
    /// the seconds since its first slice started, and the seconds left at the mean rate
    /// so far (null before any work is done).
    fn build_json(&self) -> serde_json::Map<String, serde_json::Value> {
        let done = self.overall.position();
        let total = self.overall.length().unwrap_or(1).max(1);
        let elapsed = self
            .started
            .get()
            .map_or(0.0, |t| t.elapsed().as_secs_f64());
        let eta = (done > 0).then(|| elapsed * total.saturating_sub(done) as f64 / done as f64);
        let mut m = serde_json::Map::new();
        m.insert(
            "build_done".into(),
            json!((done as f64 / total as f64).min(1.0)),
        );
        m.insert("build_elapsed_seconds".into(), json!(elapsed));
        m.insert("build_eta_seconds".into(), json!(eta));
        // The CPU seconds and major page faults since then: a slice whose line adds many
        // faults and few CPU seconds for its wall time waited on the disk.
        let usage = (self.started_usage.get().copied())
            .zip(build::process_usage())
            .map(|(a, b)| b.since(a));
        m.insert(
            "build_cpu_seconds".into(),
            json!(usage.map(|u| u.cpu_seconds)),
        );
        m.insert(
            "build_major_page_faults".into(),
            json!(usage.map(|u| u.major_page_faults)),
        );
        m
    }
}

/// `distance`: the name of the build's distance files (DTW or DTC) in the line, `None` for a
/// WLD-only build (the line then gives neither the longest distance nor distance bytes).
/// `block_lens`: positions a block of the distance and WLD files this run writes; a slice
/// found finished in other blocks says so (its files are kept as they are).
fn slice_text(s: &SliceStats, distance: Option<&str>, block_lens: [u32; 2]) -> String {
    let threads = rayon::current_num_threads().max(1) as f64;
    let status = if s.skipped {
        let mut kept = Vec::new();
        if s.block_lens[1] != 0 && s.block_lens[1] != block_lens[1] {
            kept.push(format!(
                "its WLD file in blocks of {} positions, not {}",
                s.block_lens[1], block_lens[1]
            ));
        }
        if let (Some(name), true) = (
            distance,
            s.block_lens[0] != 0 && s.block_lens[0] != block_lens[0],
        ) {
            kept.push(format!(
                "its {name} file in blocks of {} positions, not {}",
                s.block_lens[0], block_lens[0]
            ));
        }
        if kept.is_empty() {
            "already built".to_string()
        } else {
            format!(
                "already built and kept as it is: {} (remove the slice's files to build it \
                 again in this run's blocks)",
                kept.join("; ")
            )
        }
    } else {
        let resumed = if s.resumed_rounds > 0 {
            format!(
                ", {} rounds taken over from a stopped run",
                s.resumed_rounds
            )
        } else {
            String::new()
        };
        format!(
            "{:.2} s ({:.2} s solving{resumed}, {:.0} positions/s/core)",
            s.seconds,
            s.solve_seconds,
            s.solved as f64 / s.solve_seconds.max(1e-9) / threads
        )
    };
    let (longest_text, distance_text) = match distance {
        Some(name) => (
            match longest(s.max_plies, s.dtw_bytes == 0 && s.counts[0] > 0).as_str() {
                "?" => ", longest ? plies".to_string(),
                _ => format!(", longest {}", plies(s.max_plies)),
            },
            format!(", {name} {} bytes", s.dtw_bytes),
        ),
        None => (String::new(), String::new()),
    };
    format!(
        "slice {}: {} positions, {} wins {} losses {} draws{longest_text}; {}; WLD {} bytes ({:.4} bits/position){distance_text}",
        s.material,
        s.positions,
        s.counts[0],
        s.counts[1],
        s.counts[2],
        status,
        s.wld_bytes,
        bits_per_position(s.wld_bytes, s.positions),
    )
}

fn slice_json(s: &SliceStats) -> serde_json::Value {
    json!({
        "slice": s.material.to_string(),
        "positions": s.positions,
        "wins": s.counts[0], "losses": s.counts[1], "draws": s.counts[2],
        "max_plies": s.max_plies,
        "seconds": s.seconds,
        "solve_seconds": s.solve_seconds,
        "resumed_rounds": s.resumed_rounds,
        "dtw_write_seconds": s.write_seconds[0],
        "wld_write_seconds": s.write_seconds[1],
        "threat_seconds": s.threat_seconds,
        "threats": s.threats,
        "solved": s.solved,
        "skipped": s.skipped,
        "wld_block_len": s.block_lens[1],
        "distance_block_len": s.block_lens[0],
        "wld_bytes": s.wld_bytes,
        "dtw_bytes": s.dtw_bytes,
        "values_bytes": s.values_bytes,
        "values_write_seconds": s.values_seconds,
        "wld_bits_per_position": bits_per_position(s.wld_bytes, s.positions),
        "positions_per_second_per_core": if s.skipped {
            0.0
        } else {
            s.solved as f64
                / s.solve_seconds.max(1e-9)
                / rayon::current_num_threads().max(1) as f64
        },
        "peak_memory_bytes": build::peak_memory().unwrap_or(0),
    })
}

/// `--threads`, or one per core.
fn worker_threads(threads: Option<u16>) -> usize {
    threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    )
}

/// `dtb gen --dry-run`: [`Plan::forecast`], printed; status 1 if the build would not fit.
fn dry_run(plan: Plan, threads: Option<u16>, json: bool) -> Result<ExitCode> {
    let rules = plan.rules();
    let pieces = plan.pieces();
    let threads = worker_threads(threads);
    let slices = plan.forecast(threads);
    let mib = |b: u64| b.div_ceil(1 << 20);
    let mut peak = (0u64, None);
    let mut count = [0usize; 3];
    for f in &slices {
        let need = f.held_bytes + f.solve_bytes;
        if need > peak.0 {
            peak = (need, Some(f.material));
        }
        count[match f.action {
            Action::Solve => 0,
            Action::Load => 1,
            Action::Skip => 2,
        }] += 1;
        if json {
            outln!(
                "{}",
                json!({
                    "slice": f.material.to_string(), "action": f.action.name(),
                    "positions": f.positions, "solve_bytes": f.solve_bytes,
                    "held_bytes": f.held_bytes, "peak_bytes": need,
                    "scratch_bytes": f.disk_bytes, "budget_bytes": plan.memory(),
                    "fits": need <= plan.memory(), "unusable": f.unusable,
                })
            );
        } else {
            outln!(
                "slice {}: {:5}  {:>14} positions  {:>7} MiB to solve  {:>7} MiB held{}{}{}",
                f.material,
                f.action.name(),
                f.positions,
                mib(f.solve_bytes),
                mib(f.held_bytes),
                if f.spill {
                    format!("  {:>7} MiB on disk", mib(f.disk_bytes))
                } else {
                    String::new()
                },
                if need > plan.memory() {
                    format!("  OVER the budget of {} MiB", mib(plan.memory()))
                } else {
                    String::new()
                },
                f.unusable
                    .as_ref()
                    .map_or(String::new(), |why| format!("  (file unusable: {why})"))
            );
        }
    }
    let available = build::available_memory();
    let fits = peak.0 <= plan.memory();
    let disk_peak = slices.iter().map(|f| f.disk_bytes).max().unwrap_or(0);
    let mut from_tables: Vec<String> = plan
        .from_tables(threads)
        .into_iter()
        .map(|m| m.to_string())
        .collect();
    from_tables.sort();
    // The scratch files a stopped run left count as free: the build reuses or removes them.
    let disk_free = fs_free(plan.out()).map(|f| f + build::scratch_on_disk(&plan));
    let disk_fits = disk_free.is_none_or(|d| disk_peak <= d);
    let fits = fits && disk_fits;
    let positions: u64 = slices.iter().map(|f| f.positions).sum();
    let peak_slice = peak.1.map(|m| m.to_string());
    if json {
        outln!(
            "{}",
            json!({
                "summary": true, "variant": rules.name, "pieces": pieces,
                "slices": slices.len(), "solve": count[0], "load": count[1], "skip": count[2],
                "positions": positions, "threads": threads,
                "peak_bytes": peak.0, "peak_slice": peak_slice,
                "budget_bytes": plan.memory(), "scratch_peak_bytes": disk_peak,
                "disk_free_bytes": disk_free, "from_tables": from_tables,
                "available_bytes": available, "fits": fits,
            })
        );
    } else {
        outln!(
            "{} 2-{} pieces: {} ({} to solve, {} to load, {} to skip), {} positions; \
             expected peak {} MiB{} on {}, budget {} MiB ({}){}: {}",
            rules.name,
            pieces,
            count_of(slices.len() as u64, "slice"),
            count[0],
            count[1],
            count[2],
            positions,
            mib(peak.0),
            peak_slice.map_or(String::new(), |m| format!(" (slice {m})")),
            count_of(threads as u64, "thread"),
            mib(plan.memory()),
            match available {
                Some(a) => format!("{} MiB available now", a >> 20),
                None => "available memory unknown".to_string(),
            },
            if disk_peak > 0 {
                format!(
                    ", scratch files up to {} MiB on disk ({} free, with the scratch files already there){}",
                    mib(disk_peak),
                    disk_free.map_or("unknown".to_string(), |d| format!("{} MiB", d >> 20)),
                    if from_tables.is_empty() {
                        String::new()
                    } else {
                        format!(
                            ", {} finished slices read from their table files",
                            from_tables.len()
                        )
                    }
                )
            } else {
                String::new()
            },
            if fits { "fits" } else { "does NOT fit" }
        );
    }
    Ok(if fits {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Free bytes on the file system of `dir` (or of its nearest existing parent), via `df`'s
/// figures in `/proc`-free form: `statvfs` through `fs2`-less std is not available, so this
/// asks the `df` command; `None` if it cannot tell.
fn fs_free(dir: &Path) -> Option<u64> {
    let mut d = dir.to_path_buf();
    while !d.exists() {
        d = d.parent()?.to_path_buf();
        if d.as_os_str().is_empty() {
            d = PathBuf::from(".");
        }
    }
    let out = std::process::Command::new("df")
        .args(["-k", "--output=avail"])
        .arg(&d)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let kib: u64 = text.lines().nth(1)?.trim().parse().ok()?;
    Some(kib * 1024)
}

fn gen(plan: Plan, threads: Option<u16>, json: bool) -> Result<ExitCode> {
    let rules = plan.rules();
    let pieces = plan.pieces();
    let threads = worker_threads(threads);
    if threads == 0 {
        bail!("--threads must be at least 1");
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .context("starting worker threads")?;
    let distance = plan.values().distance().map(|kind| match kind {
        dtb_probe::ValueKind::Dtc => "DTC",
        _ => "DTW",
    });
    let multi = MultiProgress::new();
    // The whole build in work units (each slice's solver's cost): rate and ETA of all of it.
    let overall = multi.add(ProgressBar::new(1));
    overall.set_style(
        ProgressStyle::with_template(
            "{prefix:>8} [{bar:30}] {percent:>3}% {msg}, elapsed {elapsed_precise}, ETA {eta_precise}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    overall.set_prefix("total");
    let slice = multi.add(ProgressBar::new(1));
    slice.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:30}] {percent:>3}% ETA {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let bars = Bars {
        multi,
        overall,
        slice,
        json,
        failed: Mutex::new(None),
        started: std::sync::OnceLock::new(),
        started_usage: std::sync::OnceLock::new(),
        distance,
        block_lens: [
            distance.map_or(0, |_| plan.distance_block_len()),
            plan.wld_block_len(),
        ],
    };
    let t0 = Instant::now();
    let usage0 = build::process_usage();
    let stats = build::run(&plan, &bars)?;
    bars.slice.finish_and_clear();
    bars.overall.finish_and_clear();
    if let Some(e) = bars.failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e.into());
    }
    let secs = t0.elapsed().as_secs_f64();
    let positions: u64 = stats.iter().map(|s| s.positions).sum();
    // Slices solved and written by this run; the others were found finished (a resumed
    // build, or a `--slice` job's inputs) and count in the totals as the set's.
    let built = stats.iter().filter(|s| !s.skipped).count();
    let solved: u64 = stats.iter().map(|s| s.solved).sum();
    let solve_secs: f64 = stats.iter().map(|s| s.solve_seconds).sum();
    let dtw_write: f64 = stats.iter().map(|s| s.write_seconds[0]).sum();
    let wld_write: f64 = stats.iter().map(|s| s.write_seconds[1]).sum();
    let threat_secs: f64 = stats.iter().map(|s| s.threat_seconds).sum();
    let threats: u64 = stats.iter().map(|s| s.threats).sum();
    let wld: u64 = stats.iter().map(|s| s.wld_bytes).sum();
    let dtw: u64 = stats.iter().map(|s| s.dtw_bytes).sum();
    let values_bytes: u64 = stats.iter().map(|s| s.values_bytes).sum();
    let values_secs: f64 = stats.iter().map(|s| s.values_seconds).sum();
    let peak = build::peak_memory().unwrap_or(0);
    // The build's own CPU time and major page faults (null where the system does not say):
    // CPU seconds over `seconds` x threads is the share of the cores it kept busy.
    let usage = usage0.zip(build::process_usage()).map(|(a, b)| b.since(a));
    let rate = solved as f64 / solve_secs.max(1e-9) / threads as f64;
    if json {
        outln!(
            "{}",
            json!({
                "summary": true, "variant": rules.name, "pieces": pieces,
                "slices": stats.len(), "built": built, "positions": positions, "solved": solved,
                "seconds": secs, "solve_seconds": solve_secs, "dtw_write_seconds": dtw_write, "wld_write_seconds": wld_write, "threat_seconds": threat_secs, "threats": threats, "positions_per_second_per_core": rate, "threads": threads,
                "peak_memory_bytes": peak, "wld_bytes": wld, "dtw_bytes": dtw,
                "cpu_seconds": usage.map(|u| u.cpu_seconds),
                "major_page_faults": usage.map(|u| u.major_page_faults),
                "values_bytes": values_bytes, "values_write_seconds": values_secs,
                // null for a WLD-only build (no distance files).
                "distance_kind": distance.map(str::to_lowercase),
                "wld_bits_per_position": bits_per_position(wld, positions),
                "dtw_bits_per_position": bits_per_position(dtw, positions),
            })
        );
    } else {
        outln!(
            "{} 2-{} pieces: {}{}, {} positions in {:.1} s; solving {:.1} s, {:.0} positions/s/core on {} ({} positions solved, both sides to move); peak memory {} MiB{}",
            rules.name, pieces, count_of(stats.len() as u64, "slice"),
            match stats.len() - built {
                0 => String::new(),
                found => format!(" ({built} built, {found} found finished)"),
            },
            positions, secs, solve_secs, rate,
            count_of(threads as u64, "thread"), solved, peak >> 20,
            match usage {
                Some(u) => format!(
                    "; CPU {:.0}% of {}, {}",
                    100.0 * u.cpu_seconds / (secs * threads as f64).max(1e-9),
                    count_of(threads as u64, "thread"),
                    count_of(u.major_page_faults, "major page fault")
                ),
                None => String::new(),
            }
        );
        let distance_text = match distance {
            Some(name) => format!(
                ", {name} {dtw} bytes ({:.4} bits/position, written in {dtw_write:.1} s)",
                bits_per_position(dtw, positions),
            ),
            None => String::new(),
        };
        outln!(
            "WLD {} bytes ({:.4} bits/position, written in {:.1} s){distance_text}, in {}",
            wld,
            bits_per_position(wld, positions),
            wld_write,
            plan.out().display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
