//! The slice graph of a build, handed to a scheduler (`dtb plan`): every unit of work (one
//! slice, built by `dtb gen --slice`) with the units it reads, its forecast memory, scratch
//! disk, positions and time; as JSON, as a Makefile whose targets are the finished files, or
//! as a Slurm submission script. dtb orders nothing across machines itself: make and Slurm
//! do, from these dependencies.

use std::collections::HashMap;
use std::fmt::Write as _;

use dtb_probe::internal::format::ValueKind;
use dtb_probe::internal::index::SliceIndex;
use dtb_probe::internal::material::Material;

use crate::build::{Plan, DTW_BLOCK_LEN, DTW_ZSTD, OVERHEAD_BYTES, WLD_BLOCK_LEN, ZSTD};
use crate::compress::Fill;
use crate::values::Values;

/// One unit of work: a slice, built alone from the finished slices it reads.
#[derive(Clone, Debug)]
pub struct Unit {
    pub material: Material,
    /// The units it reads (its successors in the plan), in solve order.
    pub reads: Vec<Material>,
    /// Forecast peak memory of `dtb gen --slice` for it, bytes (within the budget).
    pub memory: u64,
    /// Forecast scratch files on disk, bytes (finished slices it reads that do not fit in
    /// memory beside it).
    pub disk: u64,
    /// Positions solved (both sides to move).
    pub positions: u64,
    /// Forecast seconds on the stated cores, writing included ([`Speed`]).
    pub seconds: f64,
}

/// How the units are to run: cores a job, and the speed to forecast time with.
#[derive(Clone, Copy, Debug)]
pub struct Speed {
    /// Cores (threads) a job.
    pub cpus: u32,
    /// Positions solved a second a core, the same for every slice; `None`: each slice's
    /// solver's work at the costs measured ([`Plan::core_seconds`]).
    pub per_core: Option<f64>,
}

/// The units of `plan` in solve order (a valid order for any scheduler).
pub fn units(plan: &Plan, speed: Speed) -> Vec<Unit> {
    let at: HashMap<Material, usize> = plan
        .slices
        .iter()
        .enumerate()
        .map(|(i, &m)| (m, i))
        .collect();
    let threads = speed.cpus.max(1) as usize;
    // Slices a job reads from their tables, searching their "don't care" positions: all,
    // unless the plan's jobs keep values files; then those finished on disk without one
    // (built by a run that kept none).
    let tables_only: std::collections::HashSet<Material> = plan
        .slices
        .iter()
        .copied()
        .filter(|&s| {
            !plan.keeps_values()
                || (plan.path(s, ValueKind::Wld).is_file() && !plan.values_on_disk(s))
        })
        .collect();
    let searched = |s: Material| tables_only.contains(&s);
    plan.slices
        .iter()
        .map(|&m| {
            let mut reads: Vec<Material> = m
                .successors()
                .into_iter()
                .filter(|s| at.contains_key(s))
                .collect();
            reads.sort_by_key(|s| at[s]);
            // A job loads what it reads and, for the look-ups of an input read from its
            // table, what that reads, down to the smallest slices: all held while it
            // solves. An input read from its values file reads nothing: in a plan whose
            // jobs keep them, every input but one finished on disk without one.
            let held: u64 = inputs(&reads, &at, &searched)
                .iter()
                .map(|&s| {
                    if searched(s) {
                        plan.loaded_bytes(s)
                    } else {
                        plan.held_bytes(s)
                    }
                })
                .sum();
            let solve = plan.solve_bytes(m, threads);
            // As the job plans it ([`Plan::needs_spill`]): finished slices to scratch files
            // when they would pass three quarters of the budget.
            // A slice that keeps its own outcomes in scratch files ([`Plan::maps_results`])
            // spills, and adds them to its disk; so does a large one when the job spills
            // anyway ([`Plan::results_on_disk`]: it resumes mid-way).
            let maps = plan.maps_results(m, threads);
            let spills = held + solve > plan.memory / 4 * 3 || maps;
            let own = if spills && plan.results_on_disk(m, threads) {
                plan.results_disk_bytes(m, threads)
            } else {
                0
            };
            let (memory, disk) = if spills {
                let kept = if !plan.distances() {
                    plan.held_bytes(m)
                } else {
                    0
                };
                (solve.saturating_sub(kept).max(OVERHEAD_BYTES), held + own)
            } else {
                (held + solve, 0)
            };
            let positions = 2 * SliceIndex::new(m, plan.rules.geometry()).size();
            Unit {
                material: m,
                reads,
                memory,
                disk,
                positions,
                seconds: match speed.per_core {
                    Some(per_core) => positions as f64 / (per_core * threads as f64).max(1.0),
                    None => plan.core_seconds(m, threads) / threads as f64,
                },
            }
        })
        .collect()
}

/// `reads` and every slice of the plan (`at`) that a `searched` one among them reads in
/// turn, each once.
fn inputs(
    reads: &[Material],
    at: &HashMap<Material, usize>,
    searched: &dyn Fn(Material) -> bool,
) -> Vec<Material> {
    let mut all: Vec<Material> = reads.to_vec();
    let mut k = 0;
    while k < all.len() {
        if !searched(all[k]) {
            k += 1;
            continue;
        }
        for s in all[k].successors() {
            if at.contains_key(&s) && !all.contains(&s) {
                all.push(s);
            }
        }
        k += 1;
    }
    all
}

/// The longest chain of units, by forecast time: its total seconds and its units, first
/// to last. What no number of machines can shorten.
fn critical_path(units: &[Unit]) -> (f64, Vec<Material>) {
    let at: HashMap<Material, usize> = units
        .iter()
        .enumerate()
        .map(|(i, u)| (u.material, i))
        .collect();
    // In solve order every unit's reads come before it.
    let mut finish = vec![0f64; units.len()];
    let mut via: Vec<Option<usize>> = vec![None; units.len()];
    for (i, u) in units.iter().enumerate() {
        let mut start = 0f64;
        for r in &u.reads {
            let j = at[r];
            if finish[j] > start {
                start = finish[j];
                via[i] = Some(j);
            }
        }
        finish[i] = start + u.seconds;
    }
    let Some(end) = (0..units.len()).max_by(|&a, &b| finish[a].total_cmp(&finish[b])) else {
        return (0.0, Vec::new());
    };
    let mut path = vec![units[end].material];
    let mut k = end;
    while let Some(j) = via[k] {
        path.push(units[j].material);
        k = j;
    }
    path.reverse();
    (finish[end], path)
}

/// The file whose presence says unit `m` is finished: its WLD file (written last).
fn target(plan: &Plan, m: Material) -> String {
    plan.path(m, ValueKind::Wld)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The `dtb gen` arguments of unit `u`, after the program name, before `--out DIR`.
fn gen_args(plan: &Plan, u: &Unit, cpus: u32) -> String {
    let mib = u.memory.div_ceil(1 << 20) + 64;
    format!(
        "gen --variant {} --slice {}{}{}{}{}{}{}{} --threads {cpus} --memory {mib}M",
        // DTC files depend on the count profile: the variant's text says it (`count=`).
        shell_word(&if plan.values.contains(ValueKind::Dtc) {
            dtb_probe::Variant {
                rules: plan.rules,
                count: plan.count,
            }
            .spec()
        } else {
            plan.rules.spec()
        }),
        u.material,
        if plan.values == Values::WLD_DTW {
            String::new()
        } else {
            format!(" --values {}", plan.values)
        },
        // Version 3 is the default where it is defined: only version 1 is asked for.
        if !plan.distances() && plan.rules.capture_compulsory && !plan.threats {
            " --format-version 1"
        } else {
            ""
        },
        // Major is the default fill: only another is asked for.
        if plan.fill == Fill::Major {
            String::new()
        } else {
            format!(" --fill {}", plan.fill.name())
        },
        if plan.wld_block_len == WLD_BLOCK_LEN {
            String::new()
        } else {
            format!(" --block-len {}", plan.wld_block_len)
        },
        if plan.distance_block_len == DTW_BLOCK_LEN {
            String::new()
        } else {
            format!(" --distance-block-len {}", plan.distance_block_len)
        },
        // zstd's settings where the plan sets them (`with_zstd`: one for every file).
        if plan.zstd == ZSTD && plan.dtw_zstd == DTW_ZSTD {
            String::new()
        } else {
            format!(" --zstd {}", shell_word(&plan.zstd.to_string()))
        },
        if plan.keeps_values() {
            " --keep-values"
        } else {
            ""
        },
    )
}

/// A Makefile: `make -j K` builds every missing file in a valid order, `make` again does
/// nothing. `DTB` (the program) and `DIR` (the output directory) may be set on make's
/// command line.
pub fn makefile(plan: &Plan, units: &[Unit], cpus: u32, program: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# dtb plan --emit make: {} 2-{} pieces{}, {} units. `make -j K` builds what is missing.",
        plan.rules.name,
        plan.pieces,
        if !plan.distances() { ", WLD only" } else { "" },
        units.len()
    );
    let _ = writeln!(out, "DTB ?= {}", shell_word(program));
    let _ = writeln!(out, "DIR ?= {}", shell_word(&plan.out.to_string_lossy()));
    // A rule set that is not a preset is named with `=` (`english+blocked=majority`), which
    // make would read as an assignment in a rule line: the name goes through a variable.
    let name = plan.rules.name;
    let via_variable = name.contains('=');
    if via_variable {
        let _ = writeln!(out, "NAME := {name}");
    }
    let file = |m: Material| {
        let t = target(plan, m);
        match t.strip_prefix(name) {
            Some(rest) if via_variable => format!("$(NAME){rest}"),
            _ => t,
        }
    };
    let _ = write!(out, ".PHONY: all\nall:");
    for u in units {
        let _ = write!(out, " $(DIR)/{}", file(u.material));
    }
    let _ = writeln!(out, "\n");
    for u in units {
        let _ = write!(out, "$(DIR)/{}:", file(u.material));
        for r in &u.reads {
            let _ = write!(out, " $(DIR)/{}", file(*r));
        }
        let _ = writeln!(out, "\n\t$(DTB) {} --out $(DIR)\n", gen_args(plan, u, cpus));
    }
    out
}

/// Options of a Slurm script.
#[derive(Clone, Debug, Default)]
pub struct SlurmOptions {
    pub partition: Option<String>,
    pub account: Option<String>,
    /// `--time` of each job (Slurm's format, e.g. `2:00:00`).
    pub time: Option<String>,
    /// Further `sbatch` arguments, each passed as one word.
    pub extra: Vec<String>,
}

/// A bash script that submits one Slurm job per unit whose file is missing, each depending
/// (`afterok`) on the jobs of the missing units it reads, with `--kill-on-invalid-dep=yes`
/// (a failed job cancels what depends on it), `--mem` from the forecast and
/// `--cpus-per-task`. Run again after a failure, it submits only what is still missing.
pub fn slurm_script(
    plan: &Plan,
    units: &[Unit],
    cpus: u32,
    program: &str,
    opts: &SlurmOptions,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "#!/usr/bin/env bash\n# dtb plan --emit slurm: {} 2-{} pieces{}, {} units.\n# Submits a job for every unit whose file is missing; run it again after a failure.\nset -euo pipefail",
        plan.rules.name,
        plan.pieces,
        if !plan.distances() { ", WLD only" } else { "" },
        units.len()
    );
    let _ = writeln!(out, "DTB=${{DTB:-{}}}", shell_word(program));
    let _ = writeln!(
        out,
        "DIR=${{DIR:-{}}}",
        shell_word(&plan.out.to_string_lossy())
    );
    let mut common = vec![
        "--parsable".to_string(),
        "--kill-on-invalid-dep=yes".to_string(),
        format!("--cpus-per-task={cpus}"),
    ];
    if let Some(p) = &opts.partition {
        common.push(format!("--partition={p}"));
    }
    if let Some(a) = &opts.account {
        common.push(format!("--account={a}"));
    }
    if let Some(t) = &opts.time {
        common.push(format!("--time={t}"));
    }
    common.extend(opts.extra.iter().cloned());
    let common: Vec<String> = common.iter().map(|w| shell_word(w)).collect();
    // Checked before anything is made: without sbatch the script would make DIR, then die
    // on the first unit.
    let _ = writeln!(
        out,
        "if ! command -v sbatch >/dev/null 2>&1; then\n  echo \"sbatch not found: this script submits Slurm jobs; run it where sbatch is on PATH (dtb plan --emit make builds on one machine)\" >&2\n  exit 1\nfi"
    );
    let _ = writeln!(
        out,
        "mkdir -p \"$DIR\"\ndeclare -A JOB=()\nsubmitted=0\n# unit MEM_MIB ARGS READS...: submit unless its file exists\nunit() {{\n  local m=$1 mem=$2 args=$3 file=$4; shift 4\n  [ -f \"$DIR/$file\" ] && return 0\n  local dep=\"\"\n  for r in \"$@\"; do\n    if [ -n \"${{JOB[$r]:-}}\" ]; then dep=\"$dep:${{JOB[$r]}}\"; fi\n  done\n  local opts=({} --job-name=\"dtb-$m\" --mem=\"${{mem}}M\" --output=\"$DIR/.dtb-slurm-$m.log\")\n  if [ -n \"$dep\" ]; then opts+=(--dependency=\"afterok$dep\"); fi\n  JOB[$m]=$(sbatch \"${{opts[@]}}\" --wrap=\"$DTB $args --out '$DIR'\")\n  JOB[$m]=${{JOB[$m]%%;*}}\n  submitted=$((submitted + 1))\n  echo \"$m ${{JOB[$m]}}\"\n}}",
        common.join(" ")
    );
    for u in units {
        let args = gen_args(plan, u, cpus);
        let mem = u.memory.div_ceil(1 << 20) + 128;
        let _ = write!(
            out,
            "unit {} {mem} {} {}",
            u.material,
            shell_word(&args),
            shell_word(&target(plan, u.material))
        );
        for r in &u.reads {
            let _ = write!(out, " {r}");
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "echo \"submitted $submitted jobs\"");
    out
}

/// The unit that needs the most memory, where that is more than the plan's budget (a job's
/// memory): a job that cannot run within it. `None` when every unit fits.
pub fn over_budget<'a>(plan: &Plan, units: &'a [Unit]) -> Option<&'a Unit> {
    units
        .iter()
        .filter(|u| u.memory > plan.memory)
        .max_by_key(|u| u.memory)
}

/// `s` quoted for a POSIX shell (and for make recipes) where it needs it.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The JSON of the units: one object each, with the plan's summary.
pub fn json(plan: &Plan, units: &[Unit], speed: Speed) -> serde_json::Value {
    let (critical, path) = critical_path(units);
    let cpu_seconds: f64 = units
        .iter()
        .map(|u| u.seconds * f64::from(speed.cpus))
        .sum();
    serde_json::json!({
        "variant": plan.rules.name,
        "pieces": plan.pieces,
        "values": plan.values.names(),
        "budget_bytes": plan.memory,
        "cpus_per_job": speed.cpus,
        "positions_per_second_per_core": speed.per_core,
        // How `seconds` were forecast: at that flat speed, or by each slice's solver work.
        "time_forecast": if speed.per_core.is_some() { "flat" } else { "solver work" },
        "units": units.iter().map(|u| serde_json::json!({
            "slice": u.material.to_string(),
            "file": target(plan, u.material),
            "reads": u.reads.iter().map(Material::to_string).collect::<Vec<_>>(),
            "memory_bytes": u.memory,
            "scratch_bytes": u.disk,
            "positions": u.positions,
            "seconds": u.seconds,
        })).collect::<Vec<_>>(),
        "jobs": units.len(),
        "largest_memory_bytes": units.iter().map(|u| u.memory).max().unwrap_or(0),
        "largest_memory_slice": units
            .iter()
            .max_by_key(|u| u.memory)
            .map(|u| u.material.to_string()),
        // Every job within the budget; where not, the units that are over it.
        "fits": over_budget(plan, units).is_none(),
        "over_budget": units
            .iter()
            .filter(|u| u.memory > plan.memory)
            .map(|u| u.material.to_string())
            .collect::<Vec<_>>(),
        "critical_path_seconds": critical,
        "critical_path": path.iter().map(Material::to_string).collect::<Vec<_>>(),
        "cpu_hours": cpu_seconds / 3600.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dtb_probe::Rules;

    /// The graph is acyclic in solve order (every unit reads only units before it) and every
    /// unit reads exactly its successors in the plan ([`Material::successors`]); the critical
    /// path is a chain of reads.
    #[test]
    fn units_read_their_successors_and_come_after_them() {
        for (rules, pieces) in [
            (Rules::ENGLISH, 7),
            (Rules::INTERNATIONAL, 6),
            (Rules::ENGLISH, 9),
        ] {
            let mut plan = Plan::for_forecast(rules, pieces, "/nonexistent").unwrap();
            plan.values = Values::WLD;
            plan.memory = 20 << 30;
            let speed = Speed {
                cpus: 2,
                per_core: Some(8e6),
            };
            let us = units(&plan, speed);
            assert_eq!(us.len(), plan.slices.len());
            let pos: HashMap<Material, usize> = us
                .iter()
                .enumerate()
                .map(|(i, u)| (u.material, i))
                .collect();
            for (i, u) in us.iter().enumerate() {
                let mut want: Vec<Material> = u
                    .material
                    .successors()
                    .into_iter()
                    .filter(|s| pos.contains_key(s))
                    .collect();
                want.sort_by_key(|s| pos[s]);
                assert_eq!(u.reads, want, "{}", u.material);
                assert!(
                    u.reads.iter().all(|r| pos[r] < i),
                    "{} reads a later unit",
                    u.material
                );
                if pieces <= crate::build::MAX_PIECES {
                    assert!(u.memory <= plan.memory, "{}", u.material);
                }
            }
            let (secs, path) = critical_path(&us);
            assert!(secs > 0.0 && !path.is_empty());
            for w in path.windows(2) {
                assert!(us[pos[&w[1]]].reads.contains(&w[0]), "{w:?} is not a read");
            }
        }
    }

    /// Without `--speed`, a slice's forecast is its solver's work at the costs measured: the
    /// English 8-piece slices 0404, 0413, 0422 and 0431 (four, three, two and one kings of
    /// the innermost colour) as jobs on two cores (session 50, AMD EPYC: seconds solving and
    /// writing) are each within 0.75-1.35x of it, though they run at 10 to 27 M positions a
    /// second a core, and English 2-7 from empty (631.9-640.0 s, sessions 48 and 49) within
    /// 0.9-1.15x; a flat speed is the same for all.
    #[test]
    fn forecasts_by_solver_work_meet_the_measured_slices() {
        let mut plan = Plan::for_forecast(Rules::ENGLISH, 8, "/nonexistent").unwrap();
        plan.values = Values::WLD;
        plan.memory = 20 << 30;
        let speed = Speed {
            cpus: 2,
            per_core: None,
        };
        let us = units(&plan, speed);
        let at = |s: &str| {
            let m = Material::parse(s).unwrap();
            us.iter().find(|u| u.material == m).unwrap()
        };
        for (slice, wall) in [
            ("0404", 76.4),
            ("0413", 185.7),
            ("0422", 191.3),
            ("0431", 71.2),
        ] {
            let ratio = at(slice).seconds / wall;
            assert!((0.75..=1.35).contains(&ratio), "{slice}: {ratio}");
        }
        let mut seven = Plan::for_forecast(Rules::ENGLISH, 7, "/nonexistent").unwrap();
        seven.values = Values::WLD;
        seven.memory = 20 << 30;
        let all: f64 = units(&seven, speed).iter().map(|u| u.seconds).sum();
        assert!((570.0..730.0).contains(&all), "{all}");
        // A position of 0422 (two kings innermost) costs 1.55 times one of 0431 (one) as
        // measured (session 50), though it has twice the slots.
        let per = |s: &str| at(s).seconds / at(s).positions as f64;
        assert!((1.45..1.65).contains(&(per("0422") / per("0431"))));
        // International (the grouped and bit solvers on 10x10, flying kings): 6-piece
        // slices as jobs on two cores, each within the same band, and 2-5 from empty
        // (182.5-187.2 s wall at the default flags, session 50).
        let mut six = Plan::for_forecast(Rules::INTERNATIONAL, 6, "/nonexistent").unwrap();
        six.values = Values::WLD;
        six.memory = 20 << 30;
        let us6 = units(&six, speed);
        for (slice, wall) in [
            ("1221", 811.5),
            ("2121", 492.3),
            ("0222", 463.8),
            ("1113", 670.9),
            ("0411", 306.6),
        ] {
            let m = Material::parse(slice).unwrap();
            let u = us6.iter().find(|u| u.material == m).unwrap();
            let ratio = u.seconds / wall;
            assert!((0.75..=1.35).contains(&ratio), "{slice}: {ratio}");
        }
        let five: f64 = us6
            .iter()
            .filter(|u| u.material.pieces() <= 5)
            .map(|u| u.seconds)
            .sum();
        assert!((160.0..215.0).contains(&five), "{five}");
        let flat = units(
            &plan,
            Speed {
                cpus: 2,
                per_core: Some(8e6),
            },
        );
        for u in &flat {
            assert_eq!(u.seconds, u.positions as f64 / 16e6);
        }
    }

    /// A forecast of more pieces than a build takes: the slices of 2-9 extend those of 2-8
    /// with the same forecasts, and nothing can build it.
    #[test]
    fn a_forecast_beyond_the_build_limit_extends_the_smaller_plan_and_cannot_run() {
        use crate::build::{BuildError, Quiet, FORECAST_MAX_PIECES, MAX_PIECES};
        assert!(matches!(
            Plan::new(Rules::ENGLISH, MAX_PIECES + 1, "/nonexistent"),
            Err(BuildError::Pieces(9))
        ));
        assert!(matches!(
            Plan::for_forecast(Rules::ENGLISH, FORECAST_MAX_PIECES + 1, "/nonexistent"),
            Err(BuildError::ForecastPieces(11))
        ));
        let speed = Speed {
            cpus: 2,
            per_core: Some(8e6),
        };
        let plan_of = |pieces| {
            let mut p = Plan::for_forecast(Rules::ENGLISH, pieces, "/nonexistent").unwrap();
            p.values = Values::WLD;
            p.memory = 20 << 30;
            p
        };
        let (p8, p9) = (plan_of(8), plan_of(9));
        let (u8s, u9s) = (units(&p8, speed), units(&p9, speed));
        assert!(u9s.len() > u8s.len());
        let nine: HashMap<Material, &Unit> = u9s.iter().map(|u| (u.material, u)).collect();
        for u in &u8s {
            let v = nine[&u.material];
            assert_eq!(
                (v.reads.clone(), v.memory, v.positions),
                (u.reads.clone(), u.memory, u.positions)
            );
        }
        assert!(u9s
            .iter()
            .any(|u| u.material.pieces() == 9 && u.memory > u.positions / 8));
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan_of(9);
        p.out = dir.path().join("t");
        assert!(matches!(
            crate::build::run(&p, &Quiet),
            Err(BuildError::Pieces(9))
        ));
        assert!(
            !p.out.exists(),
            "a refused forecast plan created its directory"
        );
    }

    /// Each unit's `dtb gen` arguments on two CPUs, asserted to be in the plan's Makefile
    /// and its Slurm script alike.
    fn job_args(plan: &Plan, speed: Speed) -> Vec<String> {
        let list = units(plan, speed);
        let make = makefile(plan, &list, 2, "dtb");
        let slurm = slurm_script(plan, &list, 2, "dtb", &SlurmOptions::default());
        let args: Vec<String> = list.iter().map(|u| gen_args(plan, u, 2)).collect();
        for a in &args {
            assert!(make.contains(a) && slurm.contains(a), "{a}");
        }
        args
    }

    /// A WLD-only plan's jobs fill as the plan says (`dtb plan --fill best`): every job's
    /// `dtb gen` is told, in the Makefile and the Slurm script alike; the default fill,
    /// major, is left to `dtb gen`'s own default.
    #[test]
    fn jobs_fill_as_the_plan_says() {
        let speed = Speed {
            cpus: 2,
            per_core: Some(8e6),
        };
        for (fill, want) in [(Fill::Major, None), (Fill::Best, Some(" --fill best"))] {
            let plan = Plan::new(Rules::ENGLISH, 4, "/nonexistent")
                .unwrap()
                .with_values(Values::WLD)
                .with_fill(fill);
            for args in job_args(&plan, speed) {
                match want {
                    Some(w) => assert!(args.contains(w), "{args}"),
                    None => assert!(!args.contains("--fill"), "{args}"),
                }
            }
        }
    }

    /// A plan's WLD and distance block lengths and zstd settings go to every job's `dtb gen`
    /// (`--block-len`, `--distance-block-len`, `--zstd`), in the Makefile and the Slurm
    /// script alike; the defaults are left to `dtb gen`. A length that is not a multiple of
    /// 64 from 64 to 2^24 is refused.
    #[test]
    fn jobs_write_the_plans_block_length_and_zstd() {
        use crate::build::BuildError;
        use crate::write::CompressionParams;
        let speed = Speed {
            cpus: 2,
            per_core: Some(8e6),
        };
        let base = Plan::new(Rules::ENGLISH, 4, "/nonexistent")
            .unwrap()
            .with_values(Values::WLD);
        for bad in [0, 32, 100, (1 << 24) + 64] {
            assert!(matches!(
                base.clone().with_wld_block_len(bad),
                Err(BuildError::BlockLen(n)) if n == bad
            ));
            assert!(matches!(
                base.clone().with_distance_block_len(bad),
                Err(BuildError::DistanceBlockLen(n)) if n == bad
            ));
        }
        // Distance files' blocks, in a plan with distances (the default values).
        let full = Plan::new(Rules::ENGLISH, 4, "/nonexistent").unwrap();
        for (len, want) in [
            (DTW_BLOCK_LEN, None),
            (1 << 16, Some(" --distance-block-len 65536 ")),
        ] {
            let plan = full.clone().with_distance_block_len(len).unwrap();
            assert_eq!(plan.distance_block_len(), len);
            for args in job_args(&plan, speed) {
                match want {
                    Some(w) => assert!(args.contains(w), "{args}"),
                    None => assert!(!args.contains("--distance-block-len"), "{args}"),
                }
            }
        }
        let nine = CompressionParams::level(9);
        for (len, zstd, want) in [
            (WLD_BLOCK_LEN, None, None),
            (64, None, Some(" --block-len 64 ")),
            (1 << 24, None, Some(" --block-len 16777216 ")),
            (1 << 18, Some(nine), Some(" --block-len 262144 --zstd 9 ")),
        ] {
            let mut plan = base.clone().with_wld_block_len(len).unwrap();
            if let Some(z) = zstd {
                plan = plan.with_zstd(z);
            }
            assert_eq!(plan.wld_block_len(), len);
            for args in job_args(&plan, speed) {
                match want {
                    Some(w) => assert!(args.contains(w), "{args}"),
                    None => assert!(
                        !args.contains("--block-len") && !args.contains("--zstd"),
                        "{args}"
                    ),
                }
            }
        }
    }

    /// The jobs of a WLD-only plan keep values files (`--keep-values` in every job's
    /// arguments) and forecast memory for the slices they read alone; an input finished on
    /// disk without a values file is searched, so what it reads counts too, until a values
    /// file is there. Without values files every job forecasts more, some strictly.
    #[test]
    fn jobs_that_keep_values_files_forecast_their_inputs_alone() {
        use crate::build::Quiet;
        let speed = Speed {
            cpus: 2,
            per_core: Some(8e6),
        };
        let dir = tempfile::tempdir().unwrap();
        let plan_of = |keep: bool| {
            Plan::new(Rules::ENGLISH, 5, dir.path())
                .unwrap()
                .with_values(Values::WLD)
                .with_keep_values(keep)
        };
        let memory = |keep: bool| -> Vec<u64> {
            units(&plan_of(keep), speed)
                .iter()
                .map(|u| u.memory)
                .collect()
        };
        let (kept, searched) = (memory(true), memory(false));
        assert!(kept.iter().zip(&searched).all(|(k, s)| k <= s));
        assert!(kept.iter().zip(&searched).any(|(k, s)| k < s));
        let plan = plan_of(true);
        let list = units(&plan, speed);
        assert!(list
            .iter()
            .all(|u| gen_args(&plan, u, 2).contains(" --keep-values")));
        assert!(list
            .iter()
            .all(|u| !gen_args(&plan_of(false), u, 2).contains("--keep-values")));
        // English 2-4 finished without values files: the 5-piece jobs that read it search.
        let four = Plan::new(Rules::ENGLISH, 4, dir.path())
            .unwrap()
            .with_values(Values::WLD);
        crate::build::run(&four, &Quiet).unwrap();
        let mixed = memory(true);
        assert!(mixed.iter().zip(&kept).any(|(m, k)| m > k));
        // ... and with their values files, alone again.
        for m in four.slices() {
            std::fs::remove_file(four.path(*m, ValueKind::Wld)).unwrap();
        }
        crate::build::run(&four.with_keep_values(true), &Quiet).unwrap();
        assert_eq!(memory(true), kept);
    }

    #[test]
    fn shell_words_are_quoted_where_needed() {
        assert_eq!(shell_word("/tmp/t5"), "/tmp/t5");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
