//! Generate draughts endgame tablebases by retrograde analysis; the library behind `dtb`.
//!
//! A build ([`build::run`] of a [`build::Plan`]) solves every slice (material signature) of a
//! variant up to N pieces in dependency order ([`solve`]), keeps the solved values in memory
//! ([`store`]) for the slices that depend on them, and writes each slice's WLD and DTW files
//! atomically ([`mod@write`]). [`verify`] re-checks every stored value against its successors.
//! The `dtb` command line is its own package, `dtb-cli` (cli/), which depends on this one.
//!
//! ```no_run
//! use dtb_gen::build::{self, Plan, Quiet};
//! use dtb_probe::Rules;
//!
//! let plan = Plan::new(Rules::ENGLISH, 4, "tables")?; // checked before any work starts
//! let stats = build::run(&plan, &Quiet)?; // resumes: finished slices are only loaded
//! println!("{} slices", stats.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// No function over 120 lines (clippy counts code lines) and none over 6 parameters
// (clippy.toml), outside tests: checked by clippy in CI.
#![warn(clippy::too_many_lines)]

pub mod bitbase;
pub mod blocks;
pub mod build;
pub mod compress;
pub mod finished;
pub mod jobs;
pub mod packed;
pub mod repack;
pub mod scratch;
pub mod solve;
pub mod store;
pub mod values;
pub mod verify;
pub mod words;
pub mod write;
