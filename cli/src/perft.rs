//! `dtb perft`: the leaves of the legal-move tree to a depth, the move generator's check
//! against published counts.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use clap::ValueEnum;
use dtb_probe::fen;
use dtb_probe::movegen::{perft, Counting};
use serde_json::json;

use crate::args::Variant;

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    #[command(flatten)]
    variant: Variant,
    /// Depth in plies (0 to 40).
    #[arg(long, value_parser = crate::args::number_in(0u32, Some(40)))]
    depth: u32,
    /// How captures taking the same pieces by different routes count.
    #[arg(long, value_enum, default_value_t = CountingArg::Unique)]
    counting: CountingArg,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// Start position in PDN FEN (default: the variant's start position).
    fen: Option<String>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum CountingArg {
    /// Same start, end and captured pieces count once (the legal moves).
    Unique,
    /// Each order of capturing counts separately.
    Paths,
}

/// Run the command line `args`; the exit code on success (probe: 1 if any position failed).
///
/// # Errors
/// Any failure, as one message chain for the caller to print.
pub fn run(a: Args) -> Result<ExitCode> {
    let (depth, counting, json, f) = (a.depth, a.counting, a.json, a.fen);
    let rules = a.variant.rules()?;
    let pos = match f {
        Some(f) => fen::parse(&f, &rules)?,
        None => dtb_probe::Position::start(&rules),
    };
    // As the user wrote it (clap's name of the value): `unique`, `paths`.
    let counting_name = counting
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string());
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
            json!({"variant": rules.name, "fen": fen::write_customary(&pos, &rules), "depth": depth,
                   "counting": counting_name, "nodes": nodes, "seconds": secs})
        );
    } else {
        outln!("{nodes}");
        eprintln!(
            "perft {} depth {depth} ({counting_name}): {} in {secs:.2} s",
            fen::write_customary(&pos, &rules),
            crate::output::count_of(nodes, "node"),
        );
    }
    Ok(ExitCode::SUCCESS)
}
