//! `dtb serve`: the web explorer over the tables of one or more directories.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use dtb_probe::Tablebase;

use crate::args::rules_named;
use crate::tables::open_tables;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Directory holding tables, as in every other command (repeatable: the Nth --dir goes
    /// with the Nth --variant; two directories of one variant are served together).
    #[arg(long, default_value = "tables")]
    dir: Vec<PathBuf>,
    /// Variant of each --dir, in order (default: english for every --dir).
    #[arg(long)]
    variant: Vec<String>,
    /// Address to listen on (port 0: any free port; the address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: std::net::SocketAddr,
}

/// Run the command line `args`; the exit code on success (probe: 1 if any position failed).
///
/// # Errors
/// Any failure, as one message chain for the caller to print.
pub fn run(a: Args) -> Result<ExitCode> {
    let (dirs, variants, listen) = (&a.dir, &a.variant, a.listen);
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
        let said = format!("dtb serve: listening on http://{addr}/ ({names})");
        if crate::output::line(format_args!("{said}")).is_err() {
            // Standard output is gone; the address still matters to whoever started us.
            eprintln!("{said}");
        }
    })?;
    Ok(ExitCode::SUCCESS)
}
