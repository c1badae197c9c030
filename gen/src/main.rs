//! The `dtb` command: generate, probe, inspect and verify draughts endgame tablebases.

use std::process::ExitCode;

fn main() -> ExitCode {
    match dtb_gen::cli::run(std::env::args_os()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dtb: error: {}", dtb_gen::cli::error_line(&e));
            ExitCode::from(2)
        }
    }
}
