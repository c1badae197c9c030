//! `dtb repack`: finished WLD tables re-encoded in format version 3 (threat positions
//! "don't care"), values copied and checked, not solved again.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use dtb_gen::build;
use dtb_gen::repack::{repack_dir, RepackOptions};
use dtb_gen::write::CompressionParams;
use dtb_probe::Rules;
use serde_json::json;

use crate::args::{FillArg, Variant};
use crate::output::{bits_per_position, StdoutError};

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    #[command(flatten)]
    variant: Variant,
    /// Directory holding the finished WLD tables (all slices up to some number of pieces).
    #[arg(long)]
    from: PathBuf,
    /// Directory to write the version 3 tables to (created if missing; not --from).
    #[arg(long)]
    out: PathBuf,
    /// zstd settings, as for `dtb gen --zstd` (default: what `dtb gen` uses).
    #[arg(long, value_name = "SPEC")]
    zstd: Option<CompressionParams>,
    /// How "don't care" positions are filled (the values readers never use; only the bytes
    /// differ).
    #[arg(long, value_enum, default_value_t = FillArg::Major)]
    fill: FillArg,
    /// Positions a block in the new files (a multiple of 64; default: the old files').
    #[arg(long, value_name = "N", value_parser = crate::args::block_len_parser(), allow_hyphen_values = true)]
    block_len: Option<u32>,
    /// Skip comparing the threat positions' new answers with the old values.
    #[arg(long)]
    no_check: bool,
    /// Repack only the slices of at most N pieces (2 to 10).
    #[arg(long, value_name = "N", value_parser = crate::args::number_in(2u32, Some(10)))]
    pieces: Option<u32>,
    /// Write nothing: estimate each slice's new size from every Nth block (for sets too
    /// large to repack in the time at hand). Not with --block-len: the estimate scales the
    /// old file by old and new values compressed at one block length, so it cannot judge
    /// a change of length.
    #[arg(long, value_name = "N", value_parser = crate::args::number_in(1u32, None), conflicts_with = "block_len")]
    estimate: Option<u32>,
    /// One JSON object per slice and a summary.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let rules = a.variant.rules()?;
    let opts = RepackOptions {
        zstd: a.zstd.unwrap_or(build::ZSTD),
        fill: a.fill.into(),
        block_len: a.block_len,
        check: !a.no_check,
        max_pieces: a.pieces,
        estimate: a.estimate,
    };
    repack(&a.from, &a.out, rules, &opts, a.json)
}

fn repack(
    from: &Path,
    out: &Path,
    rules: Rules,
    opts: &RepackOptions,
    json: bool,
) -> Result<ExitCode> {
    // A missing directory, or one of other rules' tables, said as `probe` says it, before
    // anything is made.
    crate::tables::open_tables(from, &rules)?;
    let t0 = Instant::now();
    let mut total = [0u64; 5]; // positions, bytes before, after, threats, checked
                               // The first failed write of a slice's line (the repack goes on; the error is returned
                               // when it ends).
    let mut failed: Option<StdoutError> = None;
    let reports = repack_dir(from, out, rules, opts, &mut |r| {
        total[0] += r.positions;
        total[1] += r.bytes_before;
        total[2] += r.bytes_after;
        total[3] += r.threats;
        total[4] += r.checked;
        if failed.is_some() {
            return;
        }
        let before = bits_per_position(r.bytes_before, r.positions);
        let after = bits_per_position(r.bytes_after, r.positions);
        let line = if json {
            json!({"slice": r.material.to_string(), "positions": r.positions, "captures": r.captures,
                   "threats": r.threats, "bytes_before": r.bytes_before, "bytes_after": r.bytes_after,
                   "bits_before": before, "bits_after": after, "checked": r.checked, "copied": r.copied, "resumed": r.resumed, "estimated": r.estimated,
                   "seconds": t0.elapsed().as_secs_f64()})
            .to_string()
        } else {
            format!(
                "{} {:>12} positions  capture {:>5.1}%  threat {:>5.1}%  {:>10} -> {:>10} bytes  {:.4} -> {:.4} bits/pos  checked {}{}",
                r.material, r.positions,
                100.0 * r.captures as f64 / r.positions.max(1) as f64,
                100.0 * r.threats as f64 / r.positions.max(1) as f64,
                r.bytes_before, r.bytes_after, before, after, r.checked,
                if r.copied && opts.estimate.is_some() { "  (version 3 already: would be copied)" } else if r.copied { "  (version 3 already: copied)" } else if r.resumed { "  (repacked before: kept)" } else if r.estimated { "  (estimate)" } else { "" }
            )
        };
        if let Err(e) = crate::output::line(format_args!("{line}")) {
            failed = Some(e);
        }
    })
    .with_context(|| format!("repacking {} into {}", from.display(), out.display()))?;
    if let Some(e) = failed {
        return Err(e.into());
    }
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
            "total: {}, {} positions, {} -> {} bytes, {b:.4} -> {a:.4} bits/pos, {} threat positions ({} checked), {:.1} s",
            crate::output::count_of(reports.len() as u64, "slice"), total[0], total[1], total[2], total[3], total[4], t0.elapsed().as_secs_f64()
        );
    }
    Ok(ExitCode::SUCCESS)
}
