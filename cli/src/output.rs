//! Writing results: standard output that may be closed early, numbers and errors in words.

use std::io::Write;

/// A failed write to standard output. A reader that stopped reading (`dtb info | head -1`)
/// ends the command quietly with status 0 ([`is_closed_pipe`]); any other failure (a full
/// disk) is an error like any other.
#[derive(Debug, thiserror::Error)]
#[error("writing to standard output")]
pub struct StdoutError(#[source] pub std::io::Error);

/// Write one line of results to standard output and flush it.
///
/// # Errors
/// [`StdoutError`] if the write fails.
pub fn line(args: std::fmt::Arguments) -> Result<(), StdoutError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{args}")
        .and_then(|()| out.flush())
        .map_err(StdoutError)
}

/// `println!` for results, returning [`StdoutError`] to the caller's `?`.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::line(format_args!($($arg)*))?
    };
}

/// Whether `e` is standard output closed by its reader.
pub fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        let io = c
            .downcast_ref::<StdoutError>()
            .map(|s| &s.0)
            .or_else(|| c.downcast_ref::<std::io::Error>());
        io.is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// One line for an error and its causes, outermost first, joined by `": "`: each error's
/// message says only its own level, and its cause is its `source()`.
pub fn error_line(e: &anyhow::Error) -> String {
    format!("{e:#}")
}

/// Bits a position of `bytes` over `positions` (0 for no positions).
pub fn bits_per_position(bytes: u64, positions: u64) -> f64 {
    if positions == 0 {
        0.0
    } else {
        bytes as f64 * 8.0 / positions as f64
    }
}

/// The longest distance for text output: "?" where it is not known (WLD tables alone record
/// 0, FORMAT.md) although the slice has wins, so at least one distance of a ply or more.
pub fn longest(max_plies: u16, outcomes_only: bool) -> String {
    if outcomes_only && max_plies == 0 {
        "?".to_string()
    } else {
        max_plies.to_string()
    }
}

/// `n` plies in words: "1 ply", "9 plies".
pub fn plies(n: u16) -> String {
    if n == 1 {
        "1 ply".to_string()
    } else {
        format!("{n} plies")
    }
}

/// `n` and a noun, singular for one: "1 slice", "23 slices" (`noun` takes an `s`).
pub fn count_of(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The input as shown in messages: at most 80 characters.
pub fn shown(text: &str) -> String {
    if text.chars().count() <= 80 {
        text.to_string()
    } else {
        format!("{}...", text.chars().take(77).collect::<String>())
    }
}
