//! `dtb verify`: every table of a directory re-checked against its successors' values.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::args::Variant;
use crate::tables::open_tables;

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    #[command(flatten)]
    variant: Variant,
    /// Directory holding the tables.
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
    /// One JSON object per slice and a summary.
    #[arg(long)]
    json: bool,
    /// Check N positions a slice instead of all of them: one pseudo-random position in
    /// each of N equal stretches of its index (the same on every run). For builds too
    /// large to check whole (International 2-6: 47.8 G positions).
    #[arg(long, value_name = "N", value_parser = parse_sample, allow_hyphen_values = true)]
    sample: Option<u64>,
}

/// `--sample`: a whole number of positions a slice, at least 1 (said in words, not as
/// clap's range of `u64`).
fn parse_sample(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("--sample must be at least 1 (positions checked a slice)".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "--sample takes a whole number of positions a slice, at least 1, not {s:?}"
        )),
    }
}

/// Run the command line `args`; the exit code on success (probe: 1 if any position failed).
///
/// # Errors
/// Any failure, as one message chain for the caller to print.
pub fn run(a: Args) -> Result<ExitCode> {
    let (dir, json, sample) = (a.dir.as_path(), a.json, a.sample);
    let rules = a.variant.rules()?;
    let tb = open_tables(dir, &rules)?;
    // DTC files are checked under the profile they state; a `count=` that names another
    // is refused, as `dtb probe` refuses it, rather than checked under the files' own.
    let named = a
        .variant
        .variant
        .split(',')
        .any(|f| f.trim().starts_with("count="));
    if let (true, Some(theirs)) = (named, dtb_gen::verify::dtc_count_profile(&tb, dir)) {
        let asked = a.variant.parsed()?.count;
        if asked != theirs {
            let hint = theirs
                .limits_text(&dtb_probe::CountProfile::for_rules(&rules))
                .map_or_else(
                    || ": leave count= out (they are under the variant's own)".to_string(),
                    |t| format!(": pass count={t}, or leave count= out"),
                );
            anyhow::bail!(
                "--variant {:?}: the DTC files in {} are under another count profile ({}) \
                 than the one named ({}){hint}",
                a.variant.variant,
                dir.display(),
                theirs.describe(),
                asked.describe()
            );
        }
    }
    drop(tb);
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("verify [{bar:30}] {pos}/{len} positions {per_sec} ETA {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let t0 = Instant::now();
    let reports = dtb_gen::verify::verify_dir_sampled(dir, rules, sample, &|n| {
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
            "{}, {} positions checked in {:.1} s: {}",
            crate::output::count_of(reports.len() as u64, "slice"),
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
