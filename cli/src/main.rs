//! The `dtb` command: generate, probe, inspect and verify draughts endgame tablebases.
//!
//! `main` parses the command line into one [`Command`] (each subcommand's flags are its own
//! `Args` struct, in the file of the same name), runs it, and turns the outcome into the exit
//! status: 0 on success (and when a reader closed standard output early, as Unix tools do),
//! 1 where the command says so (a position without an answer, a failed check), 2 for an
//! error, printed once as one line with its causes.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[macro_use]
mod output;
mod analyze;
mod args;
mod gen;
mod info;
mod perft;
mod plan;
mod probe;
mod repack;
mod serve;
mod tables;
mod variants;
mod verify;

const AFTER_HELP: &str = "\
Examples:
  dtb gen --variant english --pieces 4 --out tables     build English 2-4 piece tables
  dtb probe --dir tables 'W:WK32:BK26'                  value, distance and best move
  dtb probe --dir tables --json --batch positions.txt   one JSON object per line
  dtb analyze --dir tables games.pdn                    each game's values, lost results marked
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
    Gen(gen::Args),
    /// Value of positions: win/loss/draw, distance in plies and best move.
    Probe(probe::Args),
    /// Play the games of a PDN file through the tables: every position's value from the
    /// first one the tables cover to the end, and each move that threw a win or a draw
    /// away, with the best move instead; as PDN with comments, or --json.
    Analyze(analyze::Args),
    /// List the tables of a directory: slices, positions, W/L/D counts, bytes, bits per position.
    Info(info::Args),
    /// Check every table: checksums, every stored value against its successors' values, and
    /// (without --sample) the win/loss/draw counts and longest distance each header states.
    Verify(verify::Args),
    /// Re-encode finished WLD tables in format version 3: threat positions (the side not to
    /// move has a capture; a one-ply search answers them) become "don't care", and the
    /// files get smaller. Values are copied, not solved again; unless --no-check, every
    /// threat position's answer from the new files is compared with the value the old file
    /// stored. DTW files are not copied. Version 3 files are copied as they are. A repack
    /// stopped and run again keeps the slices it finished (files whole: checked by header
    /// and checksums).
    Repack(repack::Args),
    /// Count the leaves of the legal-move tree (move generator check).
    Perft(perft::Args),
    /// The slice graph of a build for a scheduler: every unit of work (one slice, built by
    /// `dtb gen --slice`) with what it reads, its memory, disk, positions and time, as JSON,
    /// a Makefile (`make -j K` builds what is missing) or a Slurm submission script (one
    /// job a missing unit, `afterok` dependencies; run it again after a failure).
    Plan(plan::Args),
    /// Serve a tablebase explorer over HTTP: a board page at / and a JSON API in the shape
    /// of the lichess tablebase API (GET /api/v1/{variant}?fen=..., /api/v1/{variant}/mainline?fen=...,
    /// /api/v1/variants). Runs until interrupted.
    Serve(serve::Args),
    /// List the variant presets and their rule fields in words, and the fields `--variant`
    /// overrides take.
    Variants(variants::Args),
}

/// A usage error's text with any value or argument it quotes cut to its first 40 characters
/// and its length (clap quotes them whole: a 100 KB `--values` would come back whole).
fn bounded(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let mut text = e.render().to_string();
    for kind in [ContextKind::InvalidValue, ContextKind::InvalidArg] {
        if let Some(ContextValue::String(v)) = e.get(kind) {
            if let Some((cut, _)) = v.char_indices().nth(40) {
                let short = format!("{}... ({} bytes)", &v[..cut], v.len());
                text = text.replace(v.as_str(), &short);
            }
        }
    }
    text
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Usage errors go to standard error with status 2; --help and --version to
            // standard output with status 0.
            if !e.use_stderr() {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // One style for every error: clap's usage errors take the prefix the command's
            // own errors have ("dtb: error: ...").
            eprint!("dtb: {}", bounded(&e));
            return ExitCode::from(2);
        }
    };
    let outcome = match cli.command {
        Command::Gen(a) => gen::run(a),
        Command::Probe(a) => probe::run(a),
        Command::Analyze(a) => analyze::run(a),
        Command::Info(a) => info::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Repack(a) => repack::run(a),
        Command::Perft(a) => perft::run(a),
        Command::Plan(a) => plan::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Variants(a) => variants::run(a),
    };
    match outcome {
        Ok(code) => code,
        Err(e) if output::is_closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dtb: error: {}", output::error_line(&e));
            ExitCode::from(2)
        }
    }
}
