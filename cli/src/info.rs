//! `dtb info`: the tables of a directory, one line each (slice, positions, W/L/D counts,
//! longest distance, bytes, bits a position, checksum), and the totals.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use dtb_gen::values::ALL;
use dtb_probe::internal::format::{Header, ValueKind};
use dtb_probe::internal::table::{BlockCache, TableFile};
use dtb_probe::{CountProfile, Material};
use serde_json::json;

use crate::output::{bits_per_position, longest};

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// Directory holding the tables.
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
    /// One JSON object per table.
    #[arg(long)]
    json: bool,
}

/// Run the command line `args`; the exit code on success (probe: 1 if any position failed).
///
/// # Errors
/// Any failure, as one message chain for the caller to print.
pub fn run(a: Args) -> Result<ExitCode> {
    info(&a.dir, a.json)
}

/// A table file's checksum: its header's crc32 (bytes 252..256, docs/FORMAT.md), which
/// covers the header and, through the payload crc32 the header holds, every later byte; two
/// files with the same checksum hold the same bytes (but for a 1 in 2^32 accident). `None` if
/// the file cannot be read.
fn file_checksum(path: &Path) -> Option<u32> {
    use std::io::Read;
    let mut head = [0u8; 256];
    std::fs::File::open(path).ok()?.read_exact(&mut head).ok()?;
    Some(u32::from_le_bytes([
        head[252], head[253], head[254], head[255],
    ]))
}

/// A DTC header's cursed wins and blessed losses over its stored sides.
fn cursed_totals(h: &Header) -> (u64, u64) {
    (0..2)
        .filter(|&s| h.side_stored(s))
        .fold((0, 0), |(w, l), s| (w + h.cursed[s][0], l + h.cursed[s][1]))
}

/// The DTC fields of `dtb info --json`: the count profile, cursed wins, blessed losses.
fn dtc_json(o: &mut serde_json::Value, h: &Header) {
    let (cw, bl) = cursed_totals(h);
    o["count"] = json!(CountProfile::decode(&h.count_code).map(|p| p.describe()));
    o["cursed_wins"] = json!(cw);
    o["blessed_losses"] = json!(bl);
}

fn info(dir: &Path, json: bool) -> Result<ExitCode> {
    // As `probe`, `verify` and `analyze` say it.
    crate::tables::require_dir(dir)?;
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list table directory {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("wld" | "dtw" | "dtc")
            )
        })
        .collect();
    names.sort();
    if names.is_empty() {
        // Before any output: no all-zero total line ahead of the error.
        bail!("no table files (*.wld, *.dtw, *.dtc) in {}", dir.display());
    }
    let cache = Arc::new(BlockCache::new(1 << 20));
    // Per value kind, in the order of `values::ALL`.
    let mut total = [0u64; ALL.len()];
    let mut bytes = [0u64; ALL.len()];
    let mut bad = 0usize;
    for p in &names {
        let t = match TableFile::open(p, cache.clone()) {
            Ok(t) => t,
            Err(e) => {
                bad += 1;
                // The file and why, as `dtb verify` says it: the whole error chain.
                let why = dtb_probe::report(&e);
                if json {
                    outln!(
                        "{}",
                        json!({"file": p.file_name().map(|n| n.to_string_lossy()), "error": why})
                    );
                } else {
                    eprintln!("dtb: {why}");
                }
                continue;
            }
        };
        let h = t.header();
        let positions = h.positions_per_side * u64::from(h.stored_side_count());
        let c = h.total_counts();
        let k = ALL.iter().position(|&x| x == h.kind).unwrap_or(0);
        total[k] += positions;
        bytes[k] += t.compressed_len();
        let m = Material::from_counts(h.material);
        let bits = bits_per_position(t.compressed_len(), positions);
        let checksum = file_checksum(p).map(|c| format!("{c:08x}"));
        if json {
            let mut o = json!({"file": p.file_name().map(|n| n.to_string_lossy()), "variant": h.variant, "slice": m.to_string(),
                       "kind": h.kind.extension(), "format_version": h.version, "positions": positions, "wins": c[0], "losses": c[1], "draws": c[2],
                       "max_plies": h.max_plies, "bytes": t.compressed_len(), "bits_per_position": bits, "block_len": h.block_len,
                       "checksum": checksum});
            if h.kind == ValueKind::Dtc {
                dtc_json(&mut o, h);
            }
            outln!("{}", o);
        } else {
            outln!(
                "{:<22} {} {} v{} {:>12} positions  W {:>11} L {:>11} D {:>11}  max {:>3} plies  {:>10} bytes  {:.4} bits/pos  blocks of {}  crc {}",
                p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default(),
                m, h.kind.extension(), h.version, positions, c[0], c[1], c[2],
                longest(h.max_plies, h.kind == ValueKind::Wld && c[0] > 0), t.compressed_len(), bits,
                h.block_len, checksum.as_deref().unwrap_or("?")
            );
            if h.kind == ValueKind::Dtc {
                let (cw, bl) = cursed_totals(h);
                let profile = CountProfile::decode(&h.count_code);
                if profile == Some(CountProfile::MTC) {
                    // No limit: nothing is cursed or blessed; the plies are moves to conversion.
                    outln!("{:<22} no count rule: moves to conversion (count=mtc)", "");
                } else {
                    let profile = profile.map_or_else(|| "?".to_string(), |p| p.describe());
                    outln!(
                        "{:<22} count rule {profile}: {cw} cursed wins, {bl} blessed losses",
                        ""
                    );
                }
            }
        }
    }
    if !json {
        let parts: Vec<String> = ALL
            .iter()
            .enumerate()
            .map(|(k, kind)| {
                format!(
                    "{} {} positions {} bytes ({:.4} bits/pos)",
                    kind.extension().to_uppercase(),
                    total[k],
                    bytes[k],
                    bits_per_position(bytes[k], total[k])
                )
            })
            .collect();
        outln!("total: {}", parts.join("; "));
    }
    Ok(if bad > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
