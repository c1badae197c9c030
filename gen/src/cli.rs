//! The command line: raw arguments become a validated plan before any work starts.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};

/// `println!` for results on standard output: a closed pipe (`dtb info | head -1`) ends the
/// command quietly with status 0; any other failed write (a full disk) with one error line
/// and status 2; never a panic.
macro_rules! outln {
    ($($arg:tt)*) => {{
        let mut out = std::io::stdout().lock();
        if let Err(e) = writeln!(out, $($arg)*).and_then(|()| out.flush()) {
            // A reader that stopped reading (`dtb info | head`) ends the command quietly,
            // as Unix tools do; any other write error is an error.
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            eprintln!("dtb: error: writing to standard output: {e}");
            std::process::exit(2);
        }
    }};
}

use clap::{Parser, Subcommand, ValueEnum};
use dtb_probe::format::ValueKind;
use dtb_probe::movegen::{legal_moves, pdn_in_for, perft, Counting};
use dtb_probe::table::{BlockCache, TableFile};
use dtb_probe::{fen, Material, Rules, Tablebase};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use serde_json::json;

use crate::build::{self, Action, Observer, Plan, SliceStats};
use crate::write::CompressionParams;

const AFTER_HELP: &str = "\
Examples:
  dtb gen --variant english --pieces 4 --out tables     build English 2-4 piece tables
  dtb probe --dir tables 'W:WK32:BK26'                  value, distance and best move
  dtb probe --dir tables --json --batch positions.txt   one JSON object per line
  dtb info --dir tables                                 slices, sizes, W/L/D counts
  dtb perft --variant english --depth 8                 count move-tree leaves
  dtb gen --variant english,blocked=majority --pieces 4 a preset with a rule field changed

Positions are PDN FEN: side to move, then each colour's squares, kings marked K
(`W:W18,K27:B3,K12`). Distances are in plies (half-moves) to the end of the game.";

/// Draughts endgame tablebases: build them, probe them, check them.
#[derive(Parser, Debug)]
#[command(name = "dtb", version, about, after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Build WLD and DTW tables for every slice up to N pieces (resumes an interrupted build).
    Gen {
        /// Variant: a preset, then any FIELD=VALUE overrides, comma-separated
        /// (`english,blocked=majority`; fields and values: `dtb variants`).
        #[arg(long, default_value = "english")]
        variant: String,
        /// Largest number of pieces on the board (2..=8).
        #[arg(long, default_value_t = 4)]
        pieces: u32,
        /// Directory to write the tables to (created if missing).
        #[arg(long, default_value = "tables")]
        out: PathBuf,
        /// Worker threads, 1..=1024 (default: one per core).
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
        threads: Option<u16>,
        /// zstd level of the table files (1..=22; higher is smaller and slower to write),
        /// with zstd's own parameters for it. Without it (or --zstd), files are written at
        /// level 15 with search settings tuned on English WLD tables (--zstd 15:strat=7,slog=3,tlen=999).
        #[arg(long, value_parser = clap::value_parser!(i32).range(1..=22), conflicts_with = "zstd")]
        zstd_level: Option<i32>,
        /// zstd settings of the table files: LEVEL[:strat=S,slog=N,tlen=N,mml=N,clog=N,hlog=N]
        /// (strat 1 fast .. 9 btultra2, slog search log, tlen target length, mml minimum match,
        /// clog chain log, hlog hash log). Any settings are readable by every prober.
        #[arg(long, value_name = "SPEC")]
        zstd: Option<CompressionParams>,
        /// Write WLD tables only (no DTW), keeping solved slices in memory at 2 bits a
        /// position instead of 16: for 7 and 8 pieces. `dtb probe` then answers win, loss or
        /// draw, without distance or best move.
        #[arg(long)]
        wld_only: bool,
        /// Memory budget: bytes, or with a binary unit K, M, G, T (512M, 20G, 1.5G). The
        /// build plans within it: a WLD-only build keeps finished slices in scratch files
        /// mapped from disk (under DIR/.dtb-scratch, removed when done) if they do not fit
        /// beside the slice being solved, and solves slices of kings only in bits; a slice
        /// that cannot fit even so stops the build before any work, naming it. Default: the
        /// memory available when the build starts (the least of free memory, `ulimit -v`
        /// and the cgroup's memory.max) less 1/16, at least 256 MiB.
        #[arg(long, value_name = "SIZE", value_parser = build::parse_size)]
        memory: Option<u64>,
        /// Disk the scratch files may take (as --memory: 50G). A WLD-only build whose
        /// finished slices would pass it reads the largest of them from their compressed
        /// table files (slower look-ups) instead of scratch files. Default: the free space
        /// of --out's file system (with the scratch files already there) less 1/8.
        #[arg(long, value_name = "SIZE", value_parser = build::parse_size)]
        scratch_limit: Option<u64>,
        /// Build one slice alone (its material: white men, white kings, black men, black
        /// kings, e.g. 0404), from the finished slices it reads in --out; a missing one is
        /// an error naming it. --pieces is ignored.
        #[arg(long, value_name = "SLICE")]
        slice: Option<String>,
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
    },
    /// Value of positions: win/loss/draw, distance in plies and best move.
    Probe {
        /// Variant: a preset, then any FIELD=VALUE overrides (`dtb variants`).
        #[arg(long, default_value = "english")]
        variant: String,
        /// Directory holding the tables; repeat it for several (a search path: a table in an
        /// earlier --dir is used before the same slice's in a later one).
        #[arg(long, default_value = "tables")]
        dir: Vec<PathBuf>,
        /// One JSON object per position: {"fen", "wld", "dtw", "best_move"} or {"fen", "error"};
        /// with "missing" (why) added, and exit status 1, when the directory holds DTW tables
        /// but one the distance or best move needs is missing.
        #[arg(long)]
        json: bool,
        /// Read positions from FILE, one FEN per line (`-` for standard input).
        #[arg(long, value_name = "FILE")]
        batch: Option<PathBuf>,
        /// Play the best line to the end of the game and print each move with the distance
        /// left (needs the DTW tables).
        #[arg(long)]
        line: bool,
        /// After each position, every legal move with its value for the mover (win or loss
        /// with the distance in plies, or draw) and the position after it, best first; with
        /// --json a "moves" array of {"move", "wld", "dtw", "fen"}.
        #[arg(long, conflicts_with = "line")]
        moves: bool,
        /// Positions in PDN FEN.
        fens: Vec<String>,
    },
    /// List the tables of a directory: slices, positions, W/L/D counts, bytes, bits per position.
    Info {
        /// Directory holding the tables.
        #[arg(long, default_value = "tables")]
        dir: PathBuf,
        /// One JSON object per table.
        #[arg(long)]
        json: bool,
    },
    /// Check every table: checksums, every stored value against its successors' values, and
    /// (without --sample) the win/loss/draw counts and longest distance each header states.
    Verify {
        /// Variant: a preset, then any FIELD=VALUE overrides (`dtb variants`).
        #[arg(long, default_value = "english")]
        variant: String,
        /// Directory holding the tables.
        #[arg(long, default_value = "tables")]
        dir: PathBuf,
        /// One JSON object per slice and a summary.
        #[arg(long)]
        json: bool,
        /// Check N positions a slice instead of all of them: one pseudo-random position in
        /// each of N equal stretches of its index (the same on every run). For builds too
        /// large to check whole (International 2-6: 47.8 G positions).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        sample: Option<u64>,
    },
    /// Re-encode finished WLD tables in format version 3: threat positions (the side not to
    /// move has a capture; a one-ply search answers them) become "don't care", and the
    /// files get smaller. Values are copied, not solved again; unless --no-check, every
    /// threat position's answer from the new files is compared with the value the old file
    /// stored. DTW files are not copied. Version 3 files are copied as they are.
    Repack {
        /// Variant: a preset, then any FIELD=VALUE overrides (`dtb variants`).
        #[arg(long, default_value = "english")]
        variant: String,
        /// Directory holding the finished WLD tables (all slices up to some number of pieces).
        #[arg(long)]
        from: PathBuf,
        /// Directory to write the version 3 tables to (created if missing; not --from).
        #[arg(long)]
        out: PathBuf,
        /// zstd settings, as for `dtb gen --zstd` (default: what `dtb gen` uses).
        #[arg(long, value_name = "SPEC")]
        zstd: Option<CompressionParams>,
        /// How "don't care" positions are filled: major (the block's most common value) or
        /// prev (the value before, extending runs).
        #[arg(long, value_enum, default_value_t = FillArg::Major)]
        fill: FillArg,
        /// Positions a block in the new files (a multiple of 64; default: the old files').
        #[arg(long, value_name = "N")]
        block_len: Option<u32>,
        /// Skip comparing the threat positions' new answers with the old values.
        #[arg(long)]
        no_check: bool,
        /// Repack only the slices of at most N pieces.
        #[arg(long, value_name = "N")]
        pieces: Option<u32>,
        /// Write nothing: estimate each slice's new size from every Nth block (for sets too
        /// large to repack in the time at hand).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        estimate: Option<u32>,
        /// One JSON object per slice and a summary.
        #[arg(long)]
        json: bool,
    },
    /// Count the leaves of the legal-move tree (move generator check).
    Perft {
        /// Variant: a preset, then any FIELD=VALUE overrides (`dtb variants`).
        #[arg(long, default_value = "english")]
        variant: String,
        /// Depth in plies (0..=40).
        #[arg(long, value_parser = clap::value_parser!(u32).range(0..=40))]
        depth: u32,
        /// How captures taking the same pieces by different routes count.
        #[arg(long, value_enum, default_value_t = CountingArg::Unique)]
        counting: CountingArg,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
        /// Start position in PDN FEN (default: the variant's start position).
        fen: Option<String>,
    },
    /// The slice graph of a build for a scheduler: every unit of work (one slice, built by
    /// `dtb gen --slice`) with what it reads, its memory, disk, positions and time, as JSON,
    /// a Makefile (`make -j K` builds what is missing) or a Slurm submission script (one
    /// job a missing unit, `afterok` dependencies; run it again after a failure).
    Plan {
        /// Variant: a preset, then any FIELD=VALUE overrides (`dtb variants`).
        #[arg(long, default_value = "english")]
        variant: String,
        /// Largest number of pieces on the board (2..=8; up to 10 with `--emit json`, a
        /// forecast of a set dtb does not build yet).
        #[arg(long, default_value_t = 4)]
        pieces: u32,
        /// Directory the jobs write the tables to.
        #[arg(long, default_value = "tables")]
        out: PathBuf,
        /// WLD tables only (as `dtb gen --wld-only`).
        #[arg(long)]
        wld_only: bool,
        /// Memory budget of a job (as `dtb gen --memory`); each job asks for what its slice
        /// is forecast to need within it.
        #[arg(long, value_name = "SIZE", value_parser = build::parse_size)]
        memory: Option<u64>,
        /// What to write: json, make or slurm.
        #[arg(long, value_enum)]
        emit: Emit,
        /// Cores a job (`--threads` of each `dtb gen`, `--cpus-per-task` in Slurm).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
        cpus: u32,
        /// Positions solved a second a core, for the time forecast (default: 8 M, English
        /// 2-7 as measured; International is about 3.5 M).
        #[arg(long, default_value_t = 8e6)]
        speed: f64,
        /// The dtb program the jobs run (default: this one).
        #[arg(long)]
        program: Option<PathBuf>,
        /// Slurm partition.
        #[arg(long)]
        partition: Option<String>,
        /// Slurm account.
        #[arg(long)]
        account: Option<String>,
        /// Slurm time limit of each job (e.g. 2:00:00).
        #[arg(long)]
        time: Option<String>,
        /// A further sbatch argument (repeatable), e.g. --sbatch-arg=--qos=long.
        #[arg(long, allow_hyphen_values = true)]
        sbatch_arg: Vec<String>,
    },
    /// Serve a tablebase explorer over HTTP: a board page at / and a JSON API in the shape
    /// of the lichess tablebase API (GET /api/v1/{variant}?fen=..., /api/v1/{variant}/mainline?fen=...,
    /// /api/v1/variants). Runs until interrupted.
    Serve {
        /// Directory holding tables (repeatable: the Nth --dir goes with the Nth --variant;
        /// two directories of one variant are served together).
        #[arg(long, required = true)]
        dir: Vec<PathBuf>,
        /// Variant of each --dir, in order (default: english for every --dir).
        #[arg(long)]
        variant: Vec<String>,
        /// Address to listen on (port 0: any free port; the address is printed).
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: std::net::SocketAddr,
    },
    /// List the variant presets and their rule fields in words, and the fields `--variant`
    /// overrides take.
    Variants {
        /// The same as one JSON object: {"presets": [{"name", "fields": {FIELD: VALUE}}],
        /// "fields": [{"field", "row", "values"}]}.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Emit {
    /// Every unit with its reads, memory, disk, positions and time; the plan's totals.
    Json,
    /// A Makefile whose targets are the finished files.
    Make,
    /// A bash script that submits the missing units to Slurm.
    Slurm,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FillArg {
    /// The most common value among the block's other positions.
    Major,
    /// The value before in index order.
    Prev,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum CountingArg {
    /// Same start, end and captured pieces count once (the legal moves).
    Unique,
    /// Each order of capturing counts separately.
    Paths,
}

/// The rule set of a `--variant` argument, for every subcommand: a preset, then any
/// `FIELD=VALUE` overrides ([`Rules::parse`]); an error names what is allowed.
fn rules_named(spec: &str) -> Result<Rules> {
    Rules::parse(spec).map_err(|e| anyhow::anyhow!("--variant {spec:?}: {e}"))
}

/// One line for an error and its causes, each cause added only where the message above it
/// does not already say it (the library errors include their cause in their own message).
pub fn error_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.is_empty() {
            line = text;
        } else if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

/// Run the command line `args`; the exit code on success (probe: 1 if any position failed).
///
/// # Errors
/// Any failure, as one message chain for the caller to print.
pub fn run(args: impl IntoIterator<Item = OsString>) -> Result<ExitCode> {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return Ok(ExitCode::from(code));
        }
    };
    match cli.command {
        Command::Gen {
            variant,
            pieces,
            out,
            threads,
            zstd_level,
            zstd,
            wld_only,
            memory,
            scratch_limit,
            slice,
            with_deps,
            json,
            dry_run,
        } => {
            let zstd = zstd
                .or(zstd_level.map(CompressionParams::level))
                .unwrap_or(build::ZSTD);
            let rules = rules_named(&variant)?;
            if dry_run && out.exists() && !out.is_dir() {
                // What the build itself would stop on (it cannot create the directory).
                bail!("--out {} exists and is not a directory", out.display());
            }
            let mut plan = match &slice {
                Some(text) => {
                    let m = Material::parse(text).with_context(|| {
                        format!("--slice {text:?}: not a slice (four digits: white men, white kings, black men, black kings, e.g. 0404)")
                    })?;
                    Plan::for_slice(rules, m, out, wld_only, with_deps || dry_run)?
                }
                None => Plan::new(rules, pieces, out)?,
            };
            plan.wld_only = wld_only;
            plan.zstd = zstd;
            if let Some(m) = memory {
                plan.memory = m;
            }
            plan.scratch_limit = scratch_limit.or_else(|| {
                let free = fs_free(&plan.out)? + build::scratch_on_disk(&plan);
                Some(free - free / 8)
            });
            if dry_run {
                return gen_dry_run(plan, threads, json);
            }
            gen(plan, threads, json)
        }
        Command::Probe {
            variant,
            dir,
            json,
            batch,
            line,
            moves,
            fens,
        } => probe(&variant, &dir, json, batch, line, moves, fens),
        Command::Verify {
            variant,
            dir,
            json,
            sample,
        } => verify(&variant, &dir, json, sample),
        Command::Info { dir, json } => info(&dir, json),
        Command::Repack {
            variant,
            from,
            out,
            zstd,
            fill,
            block_len,
            no_check,
            pieces,
            estimate,
            json,
        } => {
            let rules = rules_named(&variant)?;
            let opts = crate::repack::RepackOptions {
                zstd: zstd.unwrap_or(build::ZSTD),
                fill: match fill {
                    FillArg::Major => crate::repack::Fill::Major,
                    FillArg::Prev => crate::repack::Fill::Prev,
                },
                block_len,
                check: !no_check,
                max_pieces: pieces,
                estimate,
            };
            repack_cmd(&from, &out, rules, &opts, json)
        }
        Command::Perft {
            variant,
            depth,
            counting,
            json,
            fen,
        } => perft_cmd(&variant, depth, counting, json, fen),
        Command::Plan {
            variant,
            pieces,
            out,
            wld_only,
            memory,
            emit,
            cpus,
            speed,
            program,
            partition,
            account,
            time,
            sbatch_arg,
        } => {
            let rules = rules_named(&variant)?;
            if pieces > crate::build::MAX_PIECES && !matches!(emit, Emit::Json) {
                bail!(
                    "--pieces {pieces}: dtb gen builds at most {} pieces, so a plan of {pieces} \
                     is a forecast only: --emit json",
                    crate::build::MAX_PIECES
                );
            }
            let mut plan = Plan::for_forecast(rules, pieces, out)?;
            plan.wld_only = wld_only;
            if let Some(m) = memory {
                plan.memory = m;
            }
            if !(speed.is_finite() && speed > 0.0) {
                bail!("--speed must be a positive number of positions a second a core");
            }
            let speed = crate::plan::Speed {
                cpus,
                per_core: speed,
            };
            let units = crate::plan::units(&plan, speed);
            let program = match program {
                Some(p) => p,
                None => std::env::current_exe().context("finding this program's path")?,
            };
            let program = program.to_string_lossy();
            let text = match emit {
                Emit::Json => crate::plan::json(&plan, &units, speed).to_string(),
                Emit::Make => crate::plan::makefile(&plan, &units, cpus, &program),
                Emit::Slurm => crate::plan::slurm_script(
                    &plan,
                    &units,
                    cpus,
                    &program,
                    &crate::plan::SlurmOptions {
                        partition,
                        account,
                        time,
                        extra: sbatch_arg,
                    },
                ),
            };
            outln!("{}", text.trim_end());
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve {
            dir,
            variant,
            listen,
        } => serve(&dir, &variant, listen),
        Command::Variants { json } => {
            use dtb_probe::variant::FIELDS;
            if json {
                let presets: Vec<_> = Rules::PRESETS
                    .iter()
                    .map(|r| {
                        let fields: serde_json::Map<String, serde_json::Value> = r
                            .fields()
                            .iter()
                            .map(|(k, v)| (k.to_string(), json!(v)))
                            .collect();
                        json!({"name": r.name, "fields": fields})
                    })
                    .collect();
                let fields: Vec<_> = FIELDS
                    .iter()
                    .map(|f| json!({"field": f.key, "row": f.row, "values": f.values}))
                    .collect();
                outln!("{}", json!({"presets": presets, "fields": fields}));
                return Ok(ExitCode::SUCCESS);
            }
            for r in Rules::PRESETS {
                outln!("{}", r.name);
                for (f, (key, value)) in FIELDS.iter().zip(r.fields()) {
                    outln!("  {key:<22} {value:<24} ({})", f.row);
                }
            }
            outln!("");
            outln!(
                "--variant PRESET[,FIELD=VALUE]... changes fields of a preset, each at most once:"
            );
            for f in &FIELDS {
                outln!("  {:<22} {}", f.key, f.values.join(" | "));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

struct Bars {
    multi: MultiProgress,
    overall: ProgressBar,
    slice: ProgressBar,
    json: bool,
}

impl Observer for Bars {
    fn build_start(&self, work: u64) {
        self.overall.set_length(work.max(1));
        self.overall.set_position(0);
        self.overall.reset_eta();
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
            slice_json(s).to_string()
        } else {
            slice_text(s)
        };
        if self.json {
            outln!("{line}");
        } else {
            let _ = self.multi.println(&line);
            if self.multi.is_hidden() {
                eprintln!("{line}");
            }
        }
    }
}

fn bits_per_position(bytes: u64, positions: u64) -> f64 {
    if positions == 0 {
        0.0
    } else {
        bytes as f64 * 8.0 / positions as f64
    }
}

fn slice_text(s: &SliceStats) -> String {
    let threads = rayon::current_num_threads().max(1) as f64;
    let status = if s.skipped {
        "already built".to_string()
    } else {
        format!(
            "{:.2} s ({:.2} s solving, {:.0} positions/s/core)",
            s.seconds,
            s.solve_seconds,
            s.solved as f64 / s.solve_seconds.max(1e-9) / threads
        )
    };
    format!(
        "slice {}: {} positions, {} wins {} losses {} draws, longest {} plies; {}; WLD {} bytes ({:.4} bits/position), DTW {} bytes",
        s.material,
        s.positions,
        s.counts[0],
        s.counts[1],
        s.counts[2],
        longest(s.max_plies, s.dtw_bytes == 0 && s.counts[0] > 0),
        status,
        s.wld_bytes,
        bits_per_position(s.wld_bytes, s.positions),
        s.dtw_bytes
    )
}

/// The longest distance for text output: "?" where it is not known (WLD tables alone record
/// 0, FORMAT.md) although the slice has wins, so at least one distance of a ply or more.
fn longest(max_plies: u16, wld_only: bool) -> String {
    if wld_only && max_plies == 0 {
        "?".to_string()
    } else {
        max_plies.to_string()
    }
}

fn slice_json(s: &SliceStats) -> serde_json::Value {
    json!({
        "slice": s.material.to_string(),
        "positions": s.positions,
        "wins": s.counts[0], "losses": s.counts[1], "draws": s.counts[2],
        "max_plies": s.max_plies,
        "seconds": s.seconds,
        "solve_seconds": s.solve_seconds,
        "dtw_write_seconds": s.write_seconds[0],
        "wld_write_seconds": s.write_seconds[1],
        "solved": s.solved,
        "skipped": s.skipped,
        "wld_bytes": s.wld_bytes,
        "dtw_bytes": s.dtw_bytes,
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

/// `dtb gen --dry-run`: [`Plan::forecast`], printed.
fn gen_dry_run(plan: Plan, threads: Option<u16>, json: bool) -> Result<ExitCode> {
    let rules = plan.rules;
    let pieces = plan.pieces;
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
                    "scratch_bytes": f.disk_bytes, "budget_bytes": plan.memory,
                    "fits": need <= plan.memory, "unusable": f.unusable,
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
                if need > plan.memory {
                    format!("  OVER the budget of {} MiB", mib(plan.memory))
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
    let fits = peak.0 <= plan.memory;
    let disk_peak = slices.iter().map(|f| f.disk_bytes).max().unwrap_or(0);
    let mut from_tables: Vec<String> = plan
        .from_tables(threads)
        .into_iter()
        .map(|m| m.to_string())
        .collect();
    from_tables.sort();
    let disk_free = fs_free(&plan.out);
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
                "budget_bytes": plan.memory, "scratch_peak_bytes": disk_peak,
                "disk_free_bytes": disk_free, "from_tables": from_tables,
                "available_bytes": available, "fits": fits,
            })
        );
    } else {
        outln!(
            "{} 2-{} pieces: {} slices ({} to solve, {} to load, {} to skip), {} positions; \
             expected peak {} MiB{} on {} threads, budget {} MiB ({}){}: {}",
            rules.name,
            pieces,
            slices.len(),
            count[0],
            count[1],
            count[2],
            positions,
            mib(peak.0),
            peak_slice.map_or(String::new(), |m| format!(" (slice {m})")),
            threads,
            mib(plan.memory),
            match available {
                Some(a) => format!("{} MiB available now", a >> 20),
                None => "available memory unknown".to_string(),
            },
            if disk_peak > 0 {
                format!(
                    ", scratch files up to {} MiB on disk ({} free){}",
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
    let rules = plan.rules;
    let pieces = plan.pieces;
    let threads = worker_threads(threads);
    if threads == 0 {
        bail!("--threads must be at least 1");
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .context("starting worker threads")?;
    let multi = MultiProgress::new();
    // The whole build in work units (four a position solved): rate and ETA of all of it.
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
        ProgressStyle::with_template("{msg:>12} [{bar:30}] {percent:>3}% {per_sec} ETA {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let bars = Bars {
        multi,
        overall,
        slice,
        json,
    };
    let t0 = Instant::now();
    let stats = build::run(&plan, &bars)?;
    bars.slice.finish_and_clear();
    bars.overall.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    let positions: u64 = stats.iter().map(|s| s.positions).sum();
    let solved: u64 = stats.iter().map(|s| s.solved).sum();
    let solve_secs: f64 = stats.iter().map(|s| s.solve_seconds).sum();
    let dtw_write: f64 = stats.iter().map(|s| s.write_seconds[0]).sum();
    let wld_write: f64 = stats.iter().map(|s| s.write_seconds[1]).sum();
    let wld: u64 = stats.iter().map(|s| s.wld_bytes).sum();
    let dtw: u64 = stats.iter().map(|s| s.dtw_bytes).sum();
    let peak = build::peak_memory().unwrap_or(0);
    let rate = solved as f64 / solve_secs.max(1e-9) / threads as f64;
    if json {
        outln!(
            "{}",
            json!({
                "summary": true, "variant": rules.name, "pieces": pieces,
                "slices": stats.len(), "positions": positions, "solved": solved,
                "seconds": secs, "solve_seconds": solve_secs, "dtw_write_seconds": dtw_write, "wld_write_seconds": wld_write, "positions_per_second_per_core": rate, "threads": threads,
                "peak_memory_bytes": peak, "wld_bytes": wld, "dtw_bytes": dtw,
                "wld_bits_per_position": bits_per_position(wld, positions),
                "dtw_bits_per_position": bits_per_position(dtw, positions),
            })
        );
    } else {
        outln!(
            "{} 2-{} pieces: {} slices, {} positions in {:.1} s; solving {:.1} s, {:.0} positions/s/core on {} threads ({} positions solved, both sides to move); peak memory {} MiB",
            rules.name, pieces, stats.len(), positions, secs, solve_secs, rate, threads, solved, peak >> 20
        );
        outln!(
            "WLD {} bytes ({:.4} bits/position, written in {:.1} s), DTW {} bytes ({:.4} bits/position, written in {:.1} s), in {}",
            wld,
            bits_per_position(wld, positions),
            wld_write,
            dtw,
            bits_per_position(dtw, positions),
            dtw_write,
            plan.out.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn probe(
    variant: &str,
    dirs: &[PathBuf],
    json: bool,
    batch: Option<PathBuf>,
    line: bool,
    moves: bool,
    fens: Vec<String>,
) -> Result<ExitCode> {
    let rules = rules_named(variant)?;
    let mut tb = open_tables(&dirs[0], &rules)?;
    for d in &dirs[1..] {
        if !d.is_dir() {
            bail!(
                "table directory {} does not exist or is not a directory",
                d.display()
            );
        }
        tb.add_directory(d)?;
    }
    let names = dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if line && tb.materials(ValueKind::Dtw).is_empty() {
        bail!(
            "--line plays the best moves, which needs DTW tables; {names} holds WLD tables only \
             (built with --wld-only): build without --wld-only, or probe without --line"
        );
    }
    if fens.is_empty() && batch.is_none() {
        bail!("no position given: pass FEN arguments or --batch FILE");
    }
    let failed = std::cell::Cell::new(false);
    let answer = |text: &str, out: &mut dyn Write| -> Result<()> {
        let ok = if line {
            answer_line(&tb, &rules, text, json, out)?
        } else if moves {
            answer_moves(&tb, &rules, text, json, out)?
        } else {
            answer_probe(&tb, &rules, text, json, out)?
        };
        if !ok {
            failed.set(true);
        }
        Ok(())
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for f in &fens {
        answer(f, &mut out)?;
    }
    if let Some(b) = batch {
        let mut reader: Box<dyn BufRead> = if b.as_os_str() == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            Box::new(std::io::BufReader::new(
                std::fs::File::open(&b)
                    .with_context(|| format!("cannot open batch file {}", b.display()))?,
            ))
        };
        // One position a line, answered as it arrives (so a pipe can drive it); blank lines
        // and `#` comments are skipped; a line that is not UTF-8 gets its own error.
        let mut buf = Vec::new();
        let mut number = 0usize;
        loop {
            buf.clear();
            if reader
                .read_until(b'\n', &mut buf)
                .context("reading batch input")?
                == 0
            {
                break;
            }
            number += 1;
            let text = match std::str::from_utf8(&buf) {
                Ok(t) => t.trim_start_matches('\u{feff}').trim().to_string(),
                Err(_) => {
                    failed.set(true);
                    let msg = format!("batch line {number} is not UTF-8 text");
                    if json {
                        writeln!(
                            out,
                            "{}",
                            json!({"line": number, "error": msg, "kind": "not_utf8"})
                        )?;
                    } else {
                        eprintln!("dtb: {msg}");
                    }
                    continue;
                }
            };
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            answer(&text, &mut out)?;
            out.flush()?;
        }
    }
    Ok(if failed.get() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The input as shown in messages: at most 80 characters.
fn shown(text: &str) -> String {
    if text.chars().count() <= 80 {
        text.to_string()
    } else {
        format!("{}...", text.chars().take(77).collect::<String>())
    }
}

fn plies(n: u16) -> String {
    if n == 1 {
        "1 ply".to_string()
    } else {
        format!("{n} plies")
    }
}

/// What kind of failure `e` is, for programs reading `--json`: `malformed_fen`,
/// `illegal_position`, `game_over`, `missing_table`, `corrupt_table`, `variant_mismatch`
/// (a file of another variant, rule set or slice under this one's name), `capture_position`,
/// `directory`, or `error` for anything else.
fn error_kind(e: &anyhow::Error) -> &'static str {
    use dtb_probe::fen::FenError;
    use dtb_probe::ProbeError;
    for cause in e.chain() {
        if let Some(p) = cause.downcast_ref::<ProbeError>() {
            return match p {
                ProbeError::IllegalPosition(_) => "illegal_position",
                ProbeError::GameOver => "game_over",
                ProbeError::MissingTable { .. } => "missing_table",
                ProbeError::Table(_) => "corrupt_table",
                ProbeError::Mismatch { .. } => "variant_mismatch",
                ProbeError::Directory { .. } => "directory",
                ProbeError::CapturePosition => "capture_position",
            };
        }
        if let Some(f) = cause.downcast_ref::<FenError>() {
            return match f {
                FenError::Position(_) => "illegal_position",
                _ => "malformed_fen",
            };
        }
    }
    "error"
}

/// Print why position `f` got no answer: a JSON object on standard output, or a line on
/// standard error.
fn report_failure(f: &str, e: &anyhow::Error, json: bool, out: &mut dyn Write) -> Result<()> {
    if json {
        writeln!(
            out,
            "{}",
            json!({"fen": f, "error": error_line(e), "kind": error_kind(e)})
        )?;
    } else {
        eprintln!("dtb: {}: {}", shown(f), error_line(e));
    }
    Ok(())
}

/// Answer one FEN; false if it failed (the error is printed) or its answer is incomplete (a
/// DTW table it needs is missing from a directory that has DTW tables).
fn answer_probe(
    tb: &Tablebase,
    rules: &Rules,
    f: &str,
    json: bool,
    out: &mut dyn Write,
) -> Result<bool> {
    match probe_one(tb, rules, f) {
        Ok(a) => {
            if json {
                let mut o = json!({"fen": f, "wld": a.wld, "dtw": a.dtw, "best_move": a.best});
                if let Some(m) = &a.missing {
                    o["missing"] = json!(m);
                }
                writeln!(out, "{o}")?;
            } else {
                let mut line = format!("{f}  {}", a.wld);
                if let Some(d) = a.dtw {
                    line.push_str(&format!(" in {}", plies(d)));
                }
                if let Some(b) = a.best {
                    line.push_str(&format!("  best {b}"));
                }
                if let Some(m) = &a.missing {
                    line.push_str(&format!("  ({m})"));
                    eprintln!("dtb: {}: incomplete answer: {m}", shown(f));
                }
                writeln!(out, "{line}")?;
            }
            // An incomplete answer is a failure of the directory: exit status 1.
            Ok(a.missing.is_none())
        }
        Err(e) => {
            report_failure(f, &e, json, out)?;
            Ok(false)
        }
    }
}

/// Every legal move of one FEN with its value for the mover and the FEN after it, best first
/// (from the WLD tables in a WLD-only directory); false if it failed.
fn answer_moves(
    tb: &Tablebase,
    rules: &Rules,
    f: &str,
    json: bool,
    out: &mut dyn Write,
) -> Result<bool> {
    let ranked = (|| -> Result<_> {
        let pos = fen::parse(f, rules)?;
        let a = probe_one(tb, rules, f)?;
        let ranked = if tb.materials(ValueKind::Dtw).is_empty() {
            tb.probe_moves_wld(&pos)?
        } else {
            tb.probe_moves(&pos)?
        };
        let mut all = Vec::new();
        legal_moves(rules, &pos, Counting::Unique, &mut all);
        let rows: Vec<(String, dtb_probe::Dtw, String)> = ranked
            .iter()
            .map(|r| {
                (
                    pdn_in_for(rules, &r.mv, &all),
                    r.for_mover(),
                    fen::write_for(&r.mv.apply_unchecked(&pos), rules),
                )
            })
            .collect();
        Ok((a, rows))
    })();
    let (a, rows) = match ranked {
        Ok(r) => r,
        Err(e) => {
            report_failure(f, &e, json, out)?;
            return Ok(false);
        }
    };
    if json {
        let moves: Vec<_> = rows
            .iter()
            .map(|(m, v, after)| {
                json!({"move": m, "wld": v.wld.to_string(), "dtw": v.plies, "fen": after})
            })
            .collect();
        let mut o =
            json!({"fen": f, "wld": a.wld, "dtw": a.dtw, "best_move": a.best, "moves": moves});
        if let Some(m) = &a.missing {
            o["missing"] = json!(m);
        }
        writeln!(out, "{o}")?;
    } else {
        let mut head = format!("{f}  {}", a.wld);
        if let Some(d) = a.dtw {
            head.push_str(&format!(" in {}", plies(d)));
        }
        if let Some(b) = &a.best {
            head.push_str(&format!("  best {b}"));
        }
        writeln!(out, "{head}")?;
        let width = rows.iter().map(|(m, _, _)| m.len()).max().unwrap_or(0);
        for (m, v, after) in &rows {
            let value = match v.plies {
                Some(p) => format!("{} in {}", v.wld, plies(p)),
                None => v.wld.to_string(),
            };
            writeln!(out, "  {m:<width$}  {value:<16}  {after}")?;
        }
    }
    Ok(a.missing.is_none())
}

/// Play and print the best line from one FEN; false if it failed.
fn answer_line(
    tb: &Tablebase,
    rules: &Rules,
    f: &str,
    json: bool,
    out: &mut dyn Write,
) -> Result<bool> {
    match play_line(tb, rules, f) {
        Ok((steps, cut)) => {
            if json {
                let moves: Vec<_> = steps
                    .iter()
                    .map(|(m, d, after)| json!({"move": m, "dtw": d, "fen": after}))
                    .collect();
                writeln!(out, "{}", json!({"fen": f, "line": moves, "cut": cut}))?;
            } else {
                writeln!(out, "{f}")?;
                for (i, (m, d, after)) in steps.iter().enumerate() {
                    let d = d.map_or("draw".to_string(), |d| format!("{} left", plies(d)));
                    writeln!(out, "{:>4}. {m:<12} {d:<16} {after}", i + 1)?;
                }
                if cut {
                    writeln!(
                        out,
                        "      (a draw: line cut after {DRAW_LINE_PLIES} plies)"
                    )?;
                }
            }
            Ok(true)
        }
        Err(e) => {
            report_failure(f, &e, json, out)?;
            Ok(false)
        }
    }
}

/// Open the tables of `rules`' variant in `dir`, with a hint when the directory holds
/// another variant's tables or none.
fn open_tables(dir: &Path, rules: &Rules) -> Result<Tablebase> {
    if !dir.exists() {
        bail!(
            "table directory {} does not exist (build one with `dtb gen --out {}`)",
            dir.display(),
            dir.display()
        );
    }
    if !dir.is_dir() {
        bail!("{} is not a directory", dir.display());
    }
    let tb = Tablebase::open(dir, *rules)?;
    if tb.max_pieces() == 0 {
        let others = rule_sets_in(dir, rules);
        if others.is_empty() {
            bail!(
                "no {} tables in {} (build them with `dtb gen --variant {} --out {}`)",
                rules.name,
                dir.display(),
                rules.spec(),
                dir.display()
            );
        }
        let described: Vec<String> = others
            .iter()
            .map(|o| format!("{} ({})", o.name, rules.differences(o)))
            .collect();
        bail!(
            "no {} tables in {}; it holds tables of other rules: {}: pass --variant {}",
            rules.name,
            dir.display(),
            described.join(", "),
            others[0].spec()
        );
    }
    Ok(tb)
}

/// The rule sets other than `rules` whose tables `dir` holds, from the headers of files named
/// like tables (`NAME-wmwkbmbk.wld` or `.dtw`), one each, in name order.
fn rule_sets_in(dir: &Path, rules: &Rules) -> Vec<Rules> {
    let mut found: Vec<Rules> = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    names.sort();
    for p in names {
        let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some((variant, _)) = name.rsplit_once('-') else {
            continue;
        };
        if variant == rules.name
            || found.iter().any(|r| r.name == variant)
            || dtb_probe::tablebase::parse_file_name(name, variant).is_none()
        {
            continue;
        }
        let mut head = [0u8; dtb_probe::format::HEADER_LEN];
        let read = File::open(&p).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head));
        if let Some(r) = read
            .ok()
            .and_then(|()| dtb_probe::format::Header::decode(&head).ok())
            .and_then(|h| Rules::decode(&h.rules_code))
        {
            if r.encode() != rules.encode() && !found.iter().any(|f| f.encode() == r.encode()) {
                found.push(r);
            }
        }
    }
    found
}

/// Most plies `--line` plays from a drawn position.
const DRAW_LINE_PLIES: usize = 40;

/// The best line from `f`: (move, plies left after it, FEN after it) per ply, until the game
/// ends (or [`DRAW_LINE_PLIES`] plies of a draw).
/// One ply of a best line: the move, the plies left after it (`None`: a draw), the FEN after.
type Step = (String, Option<u16>, String);

fn play_line(tb: &Tablebase, rules: &Rules, f: &str) -> Result<(Vec<Step>, bool)> {
    let mut pos = fen::parse(f, rules)?;
    let mut steps = Vec::new();
    let start = tb.probe_dtw(&pos)?;
    let limit = match start.plies {
        Some(p) => p as usize,
        None => DRAW_LINE_PLIES,
    };
    while steps.len() < limit {
        let Some((m, _)) = tb.best_move(&pos)? else {
            break;
        };
        let mut moves = Vec::new();
        legal_moves(rules, &pos, Counting::Unique, &mut moves);
        let name = pdn_in_for(rules, &m, &moves);
        pos = m.apply_unchecked(&pos);
        let after = if pos.pieces(pos.side_to_move().opponent()) == 0
            || pos.pieces(pos.side_to_move()) == 0
        {
            Some(0)
        } else {
            tb.probe_dtw(&pos)?.plies
        };
        steps.push((name, after, fen::write_for(&pos, rules)));
    }
    let cut = start.plies.is_none() && steps.len() == limit;
    Ok((steps, cut))
}

fn verify(variant: &str, dir: &Path, json: bool, sample: Option<u64>) -> Result<ExitCode> {
    let rules = rules_named(variant)?;
    open_tables(dir, &rules)?;
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("verify [{bar:30}] {pos}/{len} positions {per_sec} ETA {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let t0 = Instant::now();
    let reports = crate::verify::verify_dir_sampled(dir, rules, sample, &|n| {
        bar.inc_length(n);
        bar.inc(n)
    })?;
    bar.finish_and_clear();
    let mut bad = 0usize;
    let mut positions = 0u64;
    for r in &reports {
        positions += r.positions;
        bad += usize::from(!r.problems.is_empty());
        if json {
            let problems: Vec<_> = r
                .problems
                .iter()
                .map(|p| json!({"where": p.what, "problem": p.message}))
                .collect();
            outln!(
                "{}",
                json!({"slice": r.material.to_string(), "positions": r.positions, "outcomes_only": r.outcomes_only, "ok": r.problems.is_empty(), "problems": problems})
            );
        } else if r.problems.is_empty() {
            let what = if r.outcomes_only {
                ", outcomes only: no DTW file"
            } else {
                ""
            };
            outln!("slice {}: ok ({} positions{what})", r.material, r.positions);
        } else {
            outln!("slice {}: FAILED", r.material);
            for p in &r.problems {
                if p.message.starts_with(&p.what) {
                    outln!("  {}", p.message);
                } else {
                    outln!("  {}: {}", p.what, p.message);
                }
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    if json {
        outln!(
            "{}",
            json!({"summary": true, "slices": reports.len(), "failed": bad, "positions": positions, "seconds": secs})
        );
    } else {
        outln!(
            "{} slices, {} positions checked in {:.1} s: {}",
            reports.len(),
            positions,
            secs,
            if bad == 0 {
                "all ok".to_string()
            } else {
                format!("{bad} FAILED")
            }
        );
    }
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What `dtb probe` answers for one FEN.
struct ProbeAnswer {
    wld: String,
    /// Plies to the end (`None`: a draw, or not known, see `missing`).
    dtw: Option<u16>,
    best: Option<String>,
    /// Why the distance or the best move is not given although the directory holds DTW
    /// tables: the missing table (`None` for a complete answer, and in a WLD-only
    /// directory, where no distance is expected).
    missing: Option<String>,
}

/// The answer for one FEN. DTW and best move are `None` where the DTW tables are missing;
/// where the directory holds DTW tables but one this position needs is missing, what can be
/// answered is, and `missing` says what is not and why.
fn probe_one(tb: &Tablebase, rules: &Rules, f: &str) -> Result<ProbeAnswer> {
    let pos = fen::parse(f, rules)?;
    let wld = tb.probe_wld(&pos)?;
    // A directory without any DTW table is a WLD-only build: no distance is expected.
    let has_dtw = !tb.materials(ValueKind::Dtw).is_empty();
    let agree = |d: dtb_probe::Dtw| -> Result<Option<u16>> {
        if d.wld != wld {
            bail!(
                "WLD and DTW tables disagree on this position ({wld} vs {}): run dtb verify",
                d.wld
            );
        }
        Ok(d.plies)
    };
    let mut missing = None;
    let (dtw, best) = match tb.best_move(&pos) {
        Ok(Some((m, d))) => {
            let mut moves = Vec::new();
            legal_moves(rules, &pos, Counting::Unique, &mut moves);
            (agree(d)?, Some(pdn_in_for(rules, &m, &moves)))
        }
        Ok(None) => (Some(0), None),
        Err(
            e @ dtb_probe::ProbeError::MissingTable {
                kind: ValueKind::Dtw,
                ..
            },
        ) if has_dtw => {
            // The best move needs a table the distance of the position itself may not.
            let dtw = match tb.probe_dtw(&pos) {
                Ok(d) => {
                    missing = Some(format!("best move unknown: {e}"));
                    agree(d)?
                }
                Err(
                    e @ dtb_probe::ProbeError::MissingTable {
                        kind: ValueKind::Dtw,
                        ..
                    },
                ) => {
                    missing = Some(format!("distance and best move unknown: {e}"));
                    None
                }
                Err(e) => return Err(e.into()),
            };
            (dtw, None)
        }
        Err(dtb_probe::ProbeError::MissingTable {
            kind: ValueKind::Dtw,
            ..
        }) => (None, None),
        Err(e) => return Err(e.into()),
    };
    // A draw has no distance, unless the game ends here drawn (a blocked side under
    // `blocked = draw` or `majority`): 0 plies, no move.
    let dtw = if wld == dtb_probe::Wld::Draw && best.is_some() {
        None
    } else {
        dtw
    };
    Ok(ProbeAnswer {
        wld: wld.to_string(),
        dtw,
        best,
        missing,
    })
}

/// A table file's checksum: its header's crc32 (bytes 252..256, docs/FORMAT.md), which
/// covers the header and, through the payload crc32 the header holds, every later byte; two
/// files with the same checksum hold the same bytes (but for a 1 in 2^32 accident). `None` if
/// the file cannot be read.
fn file_checksum(path: &Path) -> Option<u32> {
    use std::io::Read;
    let mut head = [0u8; 256];
    std::fs::File::open(path).ok()?.read_exact(&mut head).ok()?;
    Some(u32::from_le_bytes([
        head[252], head[253], head[254], head[255],
    ]))
}

fn info(dir: &Path, json: bool) -> Result<ExitCode> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list table directory {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("wld" | "dtw")))
        .collect();
    names.sort();
    let cache = Arc::new(BlockCache::new(1 << 20));
    let mut total = [0u64; 2];
    let mut bytes = [0u64; 2];
    let mut bad = 0usize;
    for p in &names {
        let t = match TableFile::open(p, cache.clone()) {
            Ok(t) => t,
            Err(e) => {
                bad += 1;
                if json {
                    outln!(
                        "{}",
                        json!({"file": p.file_name().map(|n| n.to_string_lossy()), "error": e.to_string()})
                    );
                } else {
                    eprintln!("dtb: {e}");
                }
                continue;
            }
        };
        let h = t.header();
        let sides = h.sides.count_ones() as u64;
        let positions = h.positions_per_side * sides;
        let mut c = [0u64; 3];
        for s in 0..2 {
            if h.sides & (1 << s) != 0 {
                for (ck, add) in c.iter_mut().zip(h.counts[s]) {
                    *ck += add;
                }
            }
        }
        let k = if h.kind == ValueKind::Wld { 0 } else { 1 };
        total[k] += positions;
        bytes[k] += t.compressed_len();
        let m = Material::new(h.material[0], h.material[1], h.material[2], h.material[3]);
        let bits = bits_per_position(t.compressed_len(), positions);
        let checksum = file_checksum(p).map(|c| format!("{c:08x}"));
        if json {
            outln!(
                "{}",
                json!({"file": p.file_name().map(|n| n.to_string_lossy()), "variant": h.variant, "slice": m.to_string(),
                       "kind": h.kind.extension(), "format_version": h.version, "positions": positions, "wins": c[0], "losses": c[1], "draws": c[2],
                       "max_plies": h.max_plies, "bytes": t.compressed_len(), "bits_per_position": bits,
                       "checksum": checksum})
            );
        } else {
            outln!(
                "{:<22} {} {} v{} {:>12} positions  W {:>11} L {:>11} D {:>11}  max {:>3} plies  {:>10} bytes  {:.4} bits/pos  crc {}",
                p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default(),
                m, h.kind.extension(), h.version, positions, c[0], c[1], c[2],
                longest(h.max_plies, h.kind == ValueKind::Wld && c[0] > 0), t.compressed_len(), bits,
                checksum.as_deref().unwrap_or("?")
            );
        }
    }
    if !json {
        outln!(
            "total: WLD {} positions {} bytes ({:.4} bits/pos); DTW {} positions {} bytes ({:.4} bits/pos)",
            total[0], bytes[0], bits_per_position(bytes[0], total[0]),
            total[1], bytes[1], bits_per_position(bytes[1], total[1])
        );
    }
    if names.is_empty() {
        bail!("no table files (*.wld, *.dtw) in {}", dir.display());
    }
    Ok(if bad > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn repack_cmd(
    from: &Path,
    out: &Path,
    rules: Rules,
    opts: &crate::repack::RepackOptions,
    json: bool,
) -> Result<ExitCode> {
    let t0 = Instant::now();
    let mut total = [0u64; 5]; // positions, bytes before, after, threats, checked
    let reports = crate::repack::repack_dir(from, out, rules, opts, &mut |r| {
        total[0] += r.positions;
        total[1] += r.bytes_before;
        total[2] += r.bytes_after;
        total[3] += r.threats;
        total[4] += r.checked;
        let before = bits_per_position(r.bytes_before, r.positions);
        let after = bits_per_position(r.bytes_after, r.positions);
        if json {
            outln!(
                "{}",
                json!({"slice": r.material.to_string(), "positions": r.positions, "captures": r.captures,
                       "threats": r.threats, "bytes_before": r.bytes_before, "bytes_after": r.bytes_after,
                       "bits_before": before, "bits_after": after, "checked": r.checked, "copied": r.copied, "estimated": r.estimated,
                       "seconds": t0.elapsed().as_secs_f64()})
            );
        } else {
            outln!(
                "{} {:>12} positions  capture {:>5.1}%  threat {:>5.1}%  {:>10} -> {:>10} bytes  {:.4} -> {:.4} bits/pos  checked {}{}",
                r.material, r.positions,
                100.0 * r.captures as f64 / r.positions.max(1) as f64,
                100.0 * r.threats as f64 / r.positions.max(1) as f64,
                r.bytes_before, r.bytes_after, before, after, r.checked,
                if r.copied { "  (version 3 already: copied)" } else if r.estimated { "  (estimate)" } else { "" }
            );
        }
    })
    .with_context(|| format!("repacking {} into {}", from.display(), out.display()))?;
    if reports.is_empty() {
        bail!("no {} WLD tables in {}", rules.name, from.display());
    }
    let (b, a) = (
        bits_per_position(total[1], total[0]),
        bits_per_position(total[2], total[0]),
    );
    if json {
        outln!(
            "{}",
            json!({"summary": true, "slices": reports.len(), "positions": total[0], "bytes_before": total[1],
                   "bytes_after": total[2], "bits_before": b, "bits_after": a, "threats": total[3],
                   "checked": total[4], "seconds": t0.elapsed().as_secs_f64()})
        );
    } else {
        outln!(
            "total: {} slices, {} positions, {} -> {} bytes, {b:.4} -> {a:.4} bits/pos, {} threat positions ({} checked), {:.1} s",
            reports.len(), total[0], total[1], total[2], total[3], total[4], t0.elapsed().as_secs_f64()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn perft_cmd(
    variant: &str,
    depth: u32,
    counting: CountingArg,
    json: bool,
    f: Option<String>,
) -> Result<ExitCode> {
    let rules = rules_named(variant)?;
    let pos = match f {
        Some(f) => fen::parse(&f, &rules)?,
        None => dtb_probe::Position::start(&rules),
    };
    let c = match counting {
        CountingArg::Unique => Counting::Unique,
        CountingArg::Paths => Counting::Paths,
    };
    let t0 = Instant::now();
    let nodes = perft(&rules, &pos, depth, c);
    let secs = t0.elapsed().as_secs_f64();
    if json {
        outln!(
            "{}",
            json!({"variant": rules.name, "fen": fen::write_for(&pos, &rules), "depth": depth,
                   "counting": format!("{counting:?}").to_lowercase(), "nodes": nodes, "seconds": secs})
        );
    } else {
        outln!("{nodes}");
        eprintln!(
            "perft {} depth {depth} ({:?}): {nodes} nodes in {secs:.2} s",
            fen::write_for(&pos, &rules),
            counting
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `dtb serve`: pair each directory with its variant, open the tables (with the hints of
/// `dtb probe` for a wrong directory), and serve them until interrupted.
fn serve(dirs: &[PathBuf], variants: &[String], listen: std::net::SocketAddr) -> Result<ExitCode> {
    if !variants.is_empty() && variants.len() != dirs.len() {
        bail!(
            "{} --dir and {} --variant given: give one --variant for each --dir (or none for english)",
            dirs.len(),
            variants.len()
        );
    }
    let mut tables: Vec<Tablebase> = Vec::new();
    for (i, dir) in dirs.iter().enumerate() {
        let rules = rules_named(variants.get(i).map_or("english", String::as_str))?;
        open_tables(dir, &rules)?;
        match tables.iter_mut().find(|t| t.rules().name == rules.name) {
            Some(tb) => {
                tb.add_directory(dir)?;
            }
            None => tables.push(Tablebase::open(dir, rules)?),
        }
    }
    let names: Vec<&str> = tables.iter().map(|t| t.rules().name).collect();
    let names = names.join(", ");
    dtb_serve::run(dtb_serve::Config::new(listen, tables), |addr| {
        outln!("dtb serve: listening on http://{addr}/ ({names})");
    })?;
    Ok(ExitCode::SUCCESS)
}
