//! `dtb plan`: the slice graph of a build as units of work for a scheduler (JSON, a Makefile
//! or a Slurm submission script).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use dtb_gen::build::{self, Plan};
use dtb_gen::jobs::{self as units, SlurmOptions, Speed};
use dtb_gen::write::CompressionParams;

use crate::args::{FillArg, Set};

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    #[command(flatten)]
    set: Set,
    /// What to write: json, make or slurm.
    #[arg(long, value_enum)]
    emit: Emit,
    /// Cores a job (`--threads` of each `dtb gen`, `--cpus-per-task` in Slurm).
    #[arg(long, default_value_t = 1, value_parser = crate::args::number_in(1u32, Some(1024)))]
    cpus: u32,
    /// Positions solved a second a core (at least 1), the same for every slice, for the
    /// time forecast. Without it each slice's time is its solver's work at the costs
    /// measured on two cores, writing included: English 8-piece WLD slices 0.88-1.13x of
    /// their forecast (a position of a slice whose colour with fewer kings has two kings
    /// costs about 1.55 times one with one king), English 2-7 with DTW as a whole.
    #[arg(long, allow_hyphen_values = true)]
    speed: Option<f64>,
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
    /// The jobs of a WLD-only build keep no values files (`dtb gen --keep-values`, which
    /// they pass by default): less disk (values files take about a third of a bit a
    /// position: English 2-7's 1.51 GB, 5.6 times its tables), but each job then searches
    /// its inputs' capture and threat positions and loads the slices those searches read
    /// (more memory, and at 7 pieces about a third of a job's time).
    #[arg(long)]
    no_keep_values: bool,
    /// How the jobs' WLD files fill their "don't care" positions, as `dtb gen --fill`.
    #[arg(long, value_enum, default_value_t = FillArg::Major)]
    fill: FillArg,
    /// Positions per block of the jobs' WLD files, as `dtb gen --block-len`.
    #[arg(long, value_name = "N", value_parser = crate::args::block_len_parser(), allow_hyphen_values = true)]
    block_len: Option<u32>,
    /// Positions per block of the jobs' DTW and DTC files, as `dtb gen --distance-block-len`.
    #[arg(long, value_name = "N", value_parser = crate::args::block_len_parser(), allow_hyphen_values = true)]
    distance_block_len: Option<u32>,
    /// zstd settings of the jobs' files, as `dtb gen --zstd` (LEVEL[:strat=S,slog=N,...]).
    #[arg(long, value_name = "SPEC")]
    zstd: Option<CompressionParams>,
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

/// Run the command line `args`; the exit code on success (probe: 1 if any position failed).
///
/// # Errors
/// Any failure, as one message chain for the caller to print.
pub fn run(a: Args) -> Result<ExitCode> {
    let variant = a.set.variant()?;
    let rules = variant.rules;
    let pieces = a.set.pieces;
    if pieces > build::MAX_PIECES && !matches!(a.emit, Emit::Json) {
        bail!(
            "--pieces {pieces}: dtb gen builds at most {} pieces, so a plan of {pieces} \
             is a forecast only: --emit json",
            build::MAX_PIECES
        );
    }
    let plan = Plan::for_forecast(rules, pieces, &a.set.out)?
        .with_values(a.set.values())
        .with_fill(a.fill.into())
        .with_count(variant.count)
        .with_keep_values(!a.no_keep_values);
    let mut plan = a.set.with_format_version(plan)?;
    if let Some(n) = a.block_len {
        plan = plan.with_wld_block_len(n)?;
    }
    plan = crate::args::with_distance_block_len(plan, a.distance_block_len, "these jobs")?;
    if let Some(z) = a.zstd {
        plan = plan.with_zstd(z);
    }
    if let Some(m) = a.set.memory {
        plan = plan.with_memory(m);
    }
    // Below one position a second the forecast would be clamped, not computed: refused.
    if let Some(s) = a.speed.filter(|s| !(s.is_finite() && *s >= 1.0)) {
        bail!("--speed must be a number of positions a second a core, at least 1 (got {s})");
    }
    let speed = Speed {
        cpus: a.cpus,
        per_core: a.speed,
    };
    let list = units::units(&plan, speed);
    if let Some(u) = units::over_budget(&plan, &list) {
        let what = over_budget(&plan, &list, u, a.set.memory.is_some());
        match a.emit {
            // A forecast (of up to 10 pieces) is still worth reading: said on stderr, and
            // in the JSON ("fits", "over_budget").
            Emit::Json => eprintln!("dtb: warning: {what}"),
            // Jobs that would fail: nothing to run.
            Emit::Make | Emit::Slurm => bail!("{what}"),
        }
    }
    let program = match a.program {
        Some(p) => p,
        None => std::env::current_exe().context("finding this program's path")?,
    };
    let program = program.to_string_lossy();
    let text = match a.emit {
        Emit::Json => units::json(&plan, &list, speed).to_string(),
        Emit::Make => units::makefile(&plan, &list, a.cpus, &program),
        Emit::Slurm => units::slurm_script(
            &plan,
            &list,
            a.cpus,
            &program,
            &SlurmOptions {
                partition: a.partition,
                account: a.account,
                time: a.time,
                extra: a.sbatch_arg,
            },
        ),
    };
    outln!("{}", text.trim_end());
    Ok(ExitCode::SUCCESS)
}

/// What a plan with jobs over the budget says: how many, the budget and where it comes from
/// (a job's budget is `--memory`, the memory of one node; without it, this machine's), the
/// largest job, and, for a plan with distances, that a WLD-only one needs less.
fn over_budget(plan: &Plan, list: &[units::Unit], largest: &units::Unit, given: bool) -> String {
    let over = list.iter().filter(|u| u.memory > plan.memory()).count();
    format!(
        "{over} of {} jobs need more memory than the budget of {} a job ({}); the largest, \
         slice {}, needs {}{}",
        list.len(),
        build::size_words(plan.memory()),
        if given {
            "--memory"
        } else {
            "without --memory, the memory available on this machine now; on a cluster, give \
             the memory of one node with --memory"
        },
        largest.material,
        build::size_words(largest.memory),
        if plan.values().solves_distances() {
            "; a WLD-only plan (--values wld) needs far less"
        } else {
            ""
        }
    )
}
