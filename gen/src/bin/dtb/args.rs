//! Flags that several subcommands share, each defined once and flattened into their `Args`.

use std::path::PathBuf;

use anyhow::Result;
use dtb_gen::build;
use dtb_probe::Rules;

/// `--variant`, for every subcommand that works on one rule set.
#[derive(clap::Args, Debug)]
pub struct Variant {
    /// Variant: a preset, then any FIELD=VALUE overrides, comma-separated
    /// (`english,blocked=majority`; fields and values: `dtb variants`).
    #[arg(long, default_value = "english")]
    pub variant: String,
}

impl Variant {
    /// The rule set: a preset, then any `FIELD=VALUE` overrides ([`Rules::parse`]); an error
    /// names what is allowed.
    pub fn rules(&self) -> Result<Rules> {
        rules_named(&self.variant)
    }
}

/// The rule set of one `--variant` argument.
pub fn rules_named(spec: &str) -> Result<Rules> {
    Rules::parse(spec).map_err(|e| anyhow::anyhow!("--variant {spec:?}: {e}"))
}

/// What a build is: the set of tables and its memory budget, for `dtb gen` and `dtb plan`.
#[derive(clap::Args, Debug)]
pub struct Set {
    #[command(flatten)]
    pub variant: Variant,
    /// Largest number of pieces on the board (2..=8; `dtb plan --emit json` up to 10, a
    /// forecast of a set dtb does not build yet).
    #[arg(long, default_value_t = 4)]
    pub pieces: u32,
    /// Directory of the tables (created if missing).
    #[arg(long, default_value = "tables")]
    pub out: PathBuf,
    /// Write WLD tables only (no DTW), keeping solved slices in memory at 2 bits a
    /// position instead of 16: for 7 and 8 pieces. `dtb probe` then answers win, loss or
    /// draw, without distance or best move.
    #[arg(long)]
    pub wld_only: bool,
    /// Memory budget (of each job, for `dtb plan`): bytes, or with a binary unit K, M, G, T
    /// (512M, 20G, 1.5G). The build plans within it: a WLD-only build keeps finished slices
    /// in scratch files mapped from disk (under DIR/.dtb-scratch, removed when done) if they
    /// do not fit beside the slice being solved, and solves slices of kings only in bits; a
    /// slice that cannot fit even so stops the build before any work, naming it. Default:
    /// the memory available when the build starts (the least of free memory, `ulimit -v`
    /// and the cgroup's memory.max) less 1/16, at least 256 MiB.
    #[arg(long, value_name = "SIZE", value_parser = build::parse_size)]
    pub memory: Option<u64>,
}
