//! Flags that several subcommands share, each defined once and flattened into their `Args`.

use std::path::PathBuf;

use anyhow::Result;
use dtb_gen::build::{self, Plan, Values};
use dtb_probe::{CountProfile, Rules};

/// `--variant`, for every subcommand that works on one rule set.
#[derive(clap::Args, Debug)]
pub struct Variant {
    /// Variant: a preset, then any FIELD=VALUE overrides, comma-separated
    /// (`english,blocked=majority`; fields and values: `dtb variants`), and for DTC values
    /// its move-count limits in plies (`english,count=100`,
    /// `international,count=sixteen:32,five:10`, `count=none`; `count=mtc` for moves to
    /// conversion).
    #[arg(long, default_value = "english")]
    pub variant: String,
}

impl Variant {
    /// The rule set: a preset, then any `FIELD=VALUE` overrides ([`Rules::parse`]); an error
    /// names what is allowed.
    pub fn rules(&self) -> Result<Rules> {
        rules_named(&self.variant)
    }

    /// The rule set and its count profile (DTC values; the preset's unless `count=`).
    pub fn parsed(&self) -> Result<dtb_probe::Variant> {
        dtb_probe::Variant::parse(&self.variant)
            .map_err(|e| anyhow::anyhow!("--variant {:?}: {e}", self.variant))
    }
}

/// The rule set of one `--variant` argument. The text may hold a `count=` profile
/// ([`dtb_probe::Variant::parse`]), checked here; WLD and DTW values do not depend on it
/// (DTC values do: [`Variant::parsed`]).
pub fn rules_named(spec: &str) -> Result<Rules> {
    dtb_probe::Variant::parse(spec)
        .map(|v| v.rules)
        .map_err(|e| anyhow::anyhow!("--variant {spec:?}: {e}"))
}

/// A clap value parser for a whole number from `lo` to `hi` (no upper bound for `None`),
/// whose error says so in words ("a whole number from 1 to 1024", "a whole number of at
/// least 1"), not in Rust's range syntax. Clap echoes the input, bounded in `main`.
pub fn number_in<T>(lo: T, hi: Option<T>) -> impl Fn(&str) -> Result<T, String> + Clone
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy + Send + Sync + 'static,
{
    move |text: &str| match text.trim().parse::<T>() {
        Ok(n) if n >= lo && hi.is_none_or(|hi| n <= hi) => Ok(n),
        parsed => Err(match hi {
            Some(hi) => format!("expected a whole number from {lo} to {hi}"),
            // Digits that do not parse: more than the type holds, not less than `lo`.
            None if parsed.is_err() && is_digits(text.trim()) => {
                format!("expected a whole number of at least {lo}; this one is too large")
            }
            None => format!("expected a whole number of at least {lo}"),
        }),
    }
}

/// Whether `text` is one or more ASCII digits, with an optional leading `+`.
fn is_digits(text: &str) -> bool {
    let d = text.strip_prefix('+').unwrap_or(text);
    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
}

/// The value parser of the block-length flags (`--block-len`, `--distance-block-len`):
/// 64 to [`MAX_BLOCK_LEN`](dtb_probe::internal::format::MAX_BLOCK_LEN) positions; the
/// multiple-of-64 rule is the plan's own check ([`build::BuildError::BlockLen`]).
pub fn block_len_parser() -> impl Fn(&str) -> Result<u32, String> + Clone {
    number_in(64u32, Some(dtb_probe::internal::format::MAX_BLOCK_LEN))
}

/// `--distance-block-len N` set on `plan`, refused where its files hold no distances
/// (`--wld-only`): what `dtb gen` and `dtb plan` both check. `whose` names the files'
/// writer in the message ("this build", "these jobs").
pub fn with_distance_block_len(plan: Plan, n: Option<u32>, whose: &str) -> Result<Plan> {
    let Some(n) = n else {
        return Ok(plan);
    };
    if !plan.values().solves_distances() {
        anyhow::bail!(
            "--distance-block-len: {whose} write{} no distance files (--values {}); \
             --block-len sets the WLD files' blocks",
            if whose == "this build" { "s" } else { "" },
            plan.values()
        );
    }
    Ok(plan.with_distance_block_len(n)?)
}

/// What a build is: the set of tables and its memory budget, for `dtb gen` and `dtb plan`.
#[derive(clap::Args, Debug)]
pub struct Set {
    #[command(flatten)]
    pub variant: Variant,
    /// Largest number of pieces on the board (2..=8; `dtb plan --emit json` up to 10, a
    /// forecast of a set dtb does not build yet).
    #[arg(long, default_value_t = 4, value_parser = number_in(0u32, None))]
    pub pieces: u32,
    /// Directory of the tables (created if missing; for `dtb plan`, where its jobs write
    /// them: the plan itself makes nothing there).
    #[arg(long, default_value = "tables")]
    pub out: PathBuf,
    /// The value kinds to write, comma-separated: `wld` (win/loss/draw, always written),
    /// `dtw` (exact distance to the end of the game in plies, won or lost, and the best
    /// move), `dtc` (distance to
    /// conversion in plies under the variant's move-count rule, `count=` in --variant:
    /// cursed wins, and values at any counter; dtw and dtc go in separate runs, into the
    /// same directory if you like) or `mtc` (moves to conversion: plies to the next man
    /// move or capture that keeps the win, with no count rule; DTC files under `count=mtc`,
    /// probed with `--variant VARIANT,count=mtc`; a directory holds DTC files of one
    /// profile). Default: wld,dtw. With
    /// `wld` alone, solved slices are kept at 2 bits a position instead of 16 (what 7 and
    /// 8 pieces need to fit in memory), and `dtb probe` answers win, loss or draw without
    /// distance or best move.
    #[arg(long, value_name = "KINDS", value_parser = parse_values, conflicts_with = "wld_only")]
    pub values: Option<Kinds>,
    /// The same as `--values wld`.
    #[arg(long)]
    pub wld_only: bool,
    /// Memory budget (of each job, for `dtb plan`): bytes, or with a binary unit K, M, G, T
    /// (512M, 20G, 1.5G). The build plans within it: a WLD-only build keeps finished slices
    /// in scratch files mapped from disk (under DIR/.dtb-scratch, removed when done) if they
    /// do not fit beside the slice being solved, and a slice's own arrays too where they
    /// would not fit; a slice that cannot fit even so stops the build before any work,
    /// naming it. Default:
    /// the memory available when the build starts (the least of free memory, `ulimit -v`
    /// and the cgroup's memory.max) less 1/16, at least 256 MiB. A budget of 64 MiB or
    /// less is refused before anything is written: no build fits in it.
    #[arg(long, value_name = "SIZE", value_parser = parse_budget, allow_hyphen_values = true)]
    pub memory: Option<u64>,
    /// Format version of the WLD files of a `--values wld` build (1 or 3; for `dtb plan`, of
    /// its jobs). 3, the default
    /// under compulsory capture, stores threat positions (the side not to move has a
    /// capture; docs/FORMAT.md) as "don't care" like capture positions, answered by the
    /// probe's one-ply search: 39% fewer bytes for English 2-7, read by readers of
    /// version 3 only. 1 stores their values, for readers of version 1 (`dtb repack`
    /// turns such files into version 3 later). Full builds and rule sets without
    /// compulsory capture write version 1 WLD files: asking them for 3 is an error.
    #[arg(long, value_name = "N", value_parser = parse_format_version)]
    pub format_version: Option<u32>,
}

impl Set {
    /// The variant, with the count profile of its DTC files: `count=` in --variant, or
    /// moves to conversion for `--values mtc` (an error beside another `count=`).
    pub fn variant(&self) -> Result<dtb_probe::Variant> {
        let mut v = self.variant.parsed()?;
        if self.values.is_some_and(|k| k.mtc) {
            let base = dtb_probe::Variant::of(v.rules);
            if v.count != base.count && v.count != CountProfile::MTC {
                anyhow::bail!(
                    "--values mtc is DTC with no count rule (count=mtc); --variant {:?} gives \
                     count limits of its own: drop count= or use --values dtc",
                    self.variant.variant
                );
            }
            v.count = CountProfile::MTC;
        }
        Ok(v)
    }

    /// The value kinds asked for (`--values`, `--wld-only`).
    pub fn values(&self) -> Values {
        match (self.values, self.wld_only) {
            (Some(k), _) => k.values,
            (None, true) => Values::WLD,
            (None, false) => Values::WLD_DTW,
        }
    }

    /// `plan` with the WLD format version asked for (`--format-version`); an error for 3
    /// where it is not defined.
    pub fn with_format_version(&self, plan: Plan) -> Result<Plan> {
        let plan = plan.with_threats(self.format_version != Some(1));
        if self.format_version == Some(3) && !plan.writes_threats() {
            anyhow::bail!(
                "--format-version 3: only WLD-only builds (--values wld) under compulsory \
                 capture write version 3 WLD files{}",
                if plan.rules().capture_compulsory {
                    ""
                } else {
                    "; capture is optional here: threat positions have no \"don't care\""
                }
            );
        }
        Ok(plan)
    }
}

/// `--memory`: a size ([`build::parse_size`]) above what every build needs beside its
/// solver's data ([`build::OVERHEAD_BYTES`]: the program, compression contexts, files being
/// written), so that a budget no build fits is refused before anything is made, in words.
fn parse_budget(s: &str) -> Result<u64, String> {
    let bytes = build::parse_size(s)?;
    if bytes <= build::OVERHEAD_BYTES {
        return Err(format!(
            "a build needs more than {} (the program, compression and files beside the \
             solver's data); {} is {}",
            build::size_words(build::OVERHEAD_BYTES),
            s.trim(),
            build::size_words(bytes)
        ));
    }
    Ok(bytes)
}

/// `--values`: kinds by their file extensions ([`Values`]'s parser).
fn parse_values(s: &str) -> Result<Kinds, String> {
    // `mtc` is DTC under the moves-to-conversion profile: the same files, another profile.
    let (mut mtc, mut dtc) = (false, false);
    let names: Vec<&str> = s
        .split(',')
        .map(str::trim)
        .map(|k| {
            dtc |= k.eq_ignore_ascii_case("dtc");
            if k.eq_ignore_ascii_case("mtc") {
                mtc = true;
                "dtc"
            } else {
                k
            }
        })
        .collect();
    if mtc && dtc {
        return Err(
            "dtc and mtc are two count profiles: build them into two directories, \
                    one run each"
                .to_string(),
        );
    }
    let values: Values = names.join(",").parse().map_err(|e: String| {
        let e = e.replace("dtw, dtc (", "dtw, dtc, mtc (");
        if mtc {
            e.replace("--values dtc", "--values mtc")
                .replace("and dtc", "and mtc")
        } else {
            e
        }
    })?;
    Ok(Kinds { values, mtc })
}

/// `--values`: the kinds, and whether `mtc` named the DTC files' profile.
#[derive(Clone, Copy, Debug)]
pub struct Kinds {
    values: Values,
    mtc: bool,
}

/// `--format-version`: 1 or 3 (2 is a DTW version, chosen by the rules).
fn parse_format_version(s: &str) -> Result<u32, String> {
    match s.trim() {
        "1" => Ok(1),
        "3" => Ok(3),
        _ => Err(format!(
            "{s:?}: WLD files are format version 1 (every value stored) or 3 (threat \
             positions \"don't care\")"
        )),
    }
}

/// How WLD files fill their "don't care" positions (capture positions, and threat positions
/// in version 3): values that readers never use, so only the file's bytes differ.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum FillArg {
    /// The most common value among the block's other positions: fastest.
    Major,
    /// The value before, in index order (extends runs).
    Prev,
    /// The value after, in index order.
    Next,
    /// Per block, whichever of major, prev and next compresses smallest: 3.6% fewer bytes
    /// on International 2-5 (docs/PERFORMANCE.md), each block compressed four times.
    Best,
}

impl FillArg {
    /// The name on the command line: the library's ([`dtb_gen::compress::Fill::name`]), the
    /// one `dtb plan` writes into its jobs.
    pub fn name(self) -> &'static str {
        dtb_gen::compress::Fill::from(self).name()
    }
}

impl From<FillArg> for dtb_gen::compress::Fill {
    fn from(a: FillArg) -> Self {
        use dtb_gen::compress::Fill;
        match a {
            FillArg::Major => Fill::Major,
            FillArg::Prev => Fill::Prev,
            FillArg::Next => Fill::Next,
            FillArg::Best => Fill::Best,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FillArg;
    use clap::ValueEnum;

    /// The name clap accepts for each fill is the one the library writes into `dtb plan`'s
    /// jobs ([`FillArg::name`]), so a planned job parses.
    #[test]
    fn fill_names_are_the_ones_clap_accepts() {
        for f in FillArg::value_variants() {
            let v = f.to_possible_value().expect("every fill has a name");
            assert_eq!(v.get_name(), f.name());
        }
    }
}
