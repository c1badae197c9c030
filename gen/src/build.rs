//! A whole build: plan the slices of a variant up to N pieces, solve each in dependency order,
//! write its WLD and DTW files, and resume a build that was interrupted.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use dtb_probe::internal::format::{
    table_file_name, Header, ValueKind, WldCode, FORMAT_VERSION, FORMAT_VERSION_FLIP,
};
use dtb_probe::internal::index::SliceIndex;
use dtb_probe::internal::material::Material;
use dtb_probe::internal::rules::{BlockedOutcome, Rules};
use dtb_probe::internal::table::{BlockCache, TableFile};
use dtb_probe::internal::value::Code;

use crate::bitbase::{kings_wld_memory, solve_kings_wld, spread};
use crate::finished::{Finished, Layered, TableSource};
use crate::solve::{
    group_too_large, solve_memory, solve_memory_wld, solve_slice, solve_slice_grouped_wld_in,
    stored_codes, MappedResults, SolvedSlice, SolvedWld,
};
use crate::store::{Codes, Raw, ScratchKind, Spill, Store};
use crate::words::Words;
use crate::write::{write_packed_wld, write_table, CompressionParams, TableData, WriteError};

/// Most pieces a build may ask for: the index and files support up to 9 a side, the solver is
/// designed for 8 pieces in all.
pub const MAX_PIECES: u32 = 8;
/// Most pieces a forecast may ask for (`dtb plan --emit json`): the slice graph, sizes and
/// forecasts of sets dtb does not build yet (English 2-9, 2-10), for sizing a cluster.
pub const FORECAST_MAX_PIECES: u32 = 10;
/// Positions per block in WLD files.
pub const WLD_BLOCK_LEN: u32 = 1 << 16;
/// Positions per block in DTW files.
pub const DTW_BLOCK_LEN: u32 = 1 << 14;
/// zstd settings of both kinds of files: level 15 (English 2-5 measured: level 15 writes in
/// about half the time of 19 for 0.4% more WLD bytes; level 9 is 9% larger), with the
/// optimal parser of `btopt` instead of `btultra` (level 15's for blocks of 16 KiB or less),
/// search log 3 and target length
/// 999. English 2-6 WLD blocks (`examples/zstd_lab.rs`): 2.3x faster to compress than plain
/// level 15 (9.7 s against 22.2 s on two threads) for 1.0% more bytes.
pub const ZSTD: CompressionParams = CompressionParams {
    strategy: Some(7),
    search_log: Some(3),
    target_length: Some(999),
    ..CompressionParams::level(15)
};
/// Memory a build takes beside the solver's data and the store: the program, compression
/// contexts, files being written and read back, and heap the allocator keeps after it is
/// freed. English 2-5 full build: peak resident 225 MiB, 51 MiB above the solver's estimate.
pub const OVERHEAD_BYTES: u64 = 64 << 20;
/// Name of the lock file that keeps two builds out of one directory.
pub const LOCK_FILE: &str = ".dtb-gen.lock";

/// Why a build stopped.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("--pieces {0}: must be between 2 and {MAX_PIECES}")]
    Pieces(u32),
    #[error(
        "--pieces {0}: a forecast takes 2 to {FORECAST_MAX_PIECES} pieces (a build, 2 to {MAX_PIECES})"
    )]
    ForecastPieces(u32),
    #[error("--out {}: {} is not a directory", .path.display(), .file.display())]
    OutNotDirectory {
        path: PathBuf,
        file: PathBuf,
        /// What the file system says to making the directory (nothing is made: a file is in
        /// the way).
        source: std::io::Error,
    },
    #[error("cannot create output directory {}", .path.display())]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} is in use by another dtb gen (lock file {LOCK_FILE}); wait for it to finish")]
    Locked(PathBuf),
    #[error("cannot lock {}", .path.display())]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("slice {material} needs about {needed_mib} MiB to solve but only {available_mib} MiB is available (the memory budget, or free memory if less; see --memory)")]
    Memory {
        material: Material,
        needed_mib: u64,
        available_mib: u64,
    },
    #[error("solving slice {material}")]
    Solve {
        material: Material,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("reading back finished slice {material}")]
    Load {
        material: Material,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("slice {slice} reads slices that are not finished in the output directory: {} (build them first, or add --with-deps)", list(.missing))]
    MissingInputs {
        slice: Material,
        missing: Vec<Material>,
    },
    #[error("slice {0}: {1}")]
    Slice(String, &'static str),
    #[error("slice {0} is being built by another dtb gen in this directory")]
    SliceLocked(Material),
}

/// The output directory must be a directory or creatable as one: its nearest existing
/// ancestor (itself included) must be a directory.
fn check_out(out: &Path) -> Result<(), BuildError> {
    let mut at = out;
    loop {
        if at.exists() {
            if at.is_dir() {
                return Ok(());
            }
            // A file is in the way, so this cannot make anything; its error is the cause.
            return match std::fs::create_dir(out) {
                Ok(()) => Ok(()),
                Err(source) => Err(BuildError::OutNotDirectory {
                    path: out.to_path_buf(),
                    file: at.to_path_buf(),
                    source,
                }),
            };
        }
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p,
            _ => return Ok(()),
        }
    }
}

fn list(ms: &[Material]) -> String {
    ms.iter()
        .map(Material::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A validated build: everything is checked before any work starts.
#[derive(Clone, Debug)]
pub struct Plan {
    pub rules: Rules,
    pub pieces: u32,
    pub out: PathBuf,
    /// Slices in solve order.
    pub slices: Vec<Material>,
    /// zstd settings of the files ([`ZSTD`] by default).
    pub zstd: CompressionParams,
    /// Write WLD files only, and keep solved slices in memory as outcomes (2 bits a position
    /// instead of 16): what a build of 7 or 8 pieces needs to fit in memory. Distances
    /// inside a slice then depend on nominal distances of its exits, so no DTW is written and
    /// the WLD headers record no longest distance (0).
    pub wld_only: bool,
    /// Memory budget, bytes: the build plans within it (`dtb gen --memory`; by default
    /// `default_budget`). A WLD-only build whose finished slices do not fit beside the
    /// slice being solved keeps them in scratch files mapped from disk; solving a slice whose
    /// own working set does not fit stops the build before it starts, naming the slice.
    pub memory: u64,
    /// A job of one slice (`dtb gen --slice` without `--with-deps`): the slice. The other
    /// slices of the plan must be finished; the job shares the directory with other jobs.
    pub single: Option<Material>,
    /// Bytes of scratch files the build may keep on disk (`None`: no limit). A WLD-only
    /// build whose finished slices would pass it reads the largest of them from their
    /// compressed table files instead ([`Plan::from_tables`]). The command line sets it
    /// to the free space of the output directory's file system, less a margin.
    pub scratch_limit: Option<u64>,
}

impl Plan {
    /// Check the arguments and list the slices. The rules are taken under their canonical
    /// name ([`Rules::named`]): fields that are not a preset's never write files under a
    /// preset's name.
    ///
    /// # Errors
    /// [`BuildError::Pieces`] for a piece count outside 2..=[`MAX_PIECES`].
    pub fn new(rules: Rules, pieces: u32, out: impl Into<PathBuf>) -> Result<Plan, BuildError> {
        if !(2..=MAX_PIECES).contains(&pieces) {
            return Err(BuildError::Pieces(pieces));
        }
        let out = out.into();
        check_out(&out)?;
        Ok(Plan::unchecked(rules, pieces, out))
    }

    /// A plan to forecast from, not to build: as [`Plan::new`] but up to
    /// [`FORECAST_MAX_PIECES`] (and no more pieces a side than the board holds). Its slices,
    /// sizes and forecasts are those a build would have; [`run`] refuses it when it has more
    /// than [`MAX_PIECES`].
    ///
    /// # Errors
    /// [`BuildError::ForecastPieces`] for a piece count outside 2..=[`FORECAST_MAX_PIECES`].
    pub fn for_forecast(
        rules: Rules,
        pieces: u32,
        out: impl Into<PathBuf>,
    ) -> Result<Plan, BuildError> {
        if !(2..=FORECAST_MAX_PIECES).contains(&pieces) {
            return Err(BuildError::ForecastPieces(pieces));
        }
        let out = out.into();
        check_out(&out)?;
        Ok(Plan::unchecked(rules, pieces, out))
    }

    fn unchecked(rules: Rules, pieces: u32, out: PathBuf) -> Plan {
        let rules = rules.named();
        Plan {
            rules,
            pieces,
            out,
            slices: Material::solve_order(pieces, rules.max_pieces_per_side()),
            zstd: ZSTD,
            wld_only: false,
            memory: default_budget(),
            single: None,
            scratch_limit: None,
        }
    }

    /// A build of slice `m` alone (`dtb gen --slice`): the slices it reads, directly or not,
    /// must be finished in `out` unless `with_deps`, which builds the missing ones first (the
    /// plan's slices are `m` and everything it depends on, in solve order; the finished ones
    /// are loaded or skipped as in any resumed build). `m` may be given as either colour's
    /// material.
    ///
    /// # Errors
    /// [`BuildError::Slice`] for a slice with a side without pieces or more pieces than
    /// [`MAX_PIECES`]; [`BuildError::MissingInputs`] (without `with_deps`) naming every slice
    /// it depends on that is not finished.
    pub fn for_slice(
        rules: Rules,
        m: Material,
        out: impl Into<PathBuf>,
        wld_only: bool,
        with_deps: bool,
    ) -> Result<Plan, BuildError> {
        let name = m.to_string();
        if m.white() == 0 || m.black() == 0 {
            return Err(BuildError::Slice(name, "each side needs a piece"));
        }
        if m.pieces() > MAX_PIECES || m.pieces() < 2 {
            return Err(BuildError::Slice(
                name,
                "more pieces than a build takes (8)",
            ));
        }
        if m.white() > rules.max_pieces_per_side() || m.black() > rules.max_pieces_per_side() {
            return Err(BuildError::Slice(
                name,
                "more pieces a side than the board holds",
            ));
        }
        let m = m.canonical();
        let mut plan = Plan::new(rules, m.pieces().max(2), out)?;
        plan.wld_only = wld_only;
        // Everything m depends on: the closure of its successors.
        let mut needed = std::collections::BTreeSet::from([m]);
        let mut todo = vec![m];
        while let Some(x) = todo.pop() {
            for s in x.successors() {
                if needed.insert(s) {
                    todo.push(s);
                }
            }
        }
        plan.slices.retain(|x| needed.contains(x));
        if !with_deps {
            let missing: Vec<Material> = plan
                .slices
                .iter()
                .copied()
                .filter(|&x| x != m && on_disk(&plan, x) != OnDisk::Finished)
                .collect();
            if !missing.is_empty() {
                return Err(BuildError::MissingInputs { slice: m, missing });
            }
            plan.single = Some(m);
        }
        Ok(plan)
    }

    /// Positions (side to move counted, both sides) of slice `m` as stored: both sides, or
    /// White only for a colour-symmetric slice.
    fn stored_positions(&self, m: Material) -> u64 {
        let n = SliceIndex::new(m, self.rules.geometry()).size();
        if m == m.mirror() {
            n
        } else {
            2 * n
        }
    }

    /// Memory (bytes) solving and writing slice `m` on `threads` threads is expected to
    /// take, beside the solved slices the build holds: the solver's peak, its result
    /// included ([`solve_memory`]), plus what writing adds beside the result: the outcomes
    /// packed for the store (a quarter byte a position) in a WLD-only build, a copy of the
    /// codes (2 bytes) otherwise; plus [`OVERHEAD_BYTES`].
    pub fn solve_bytes(&self, m: Material, threads: usize) -> u64 {
        let size = SliceIndex::new(m, self.rules.geometry()).size();
        if self.wld_only {
            // The store's copy of the outcomes, unless it goes to a scratch file.
            let kept = 2 * size.div_ceil(32) * 8;
            return OVERHEAD_BYTES + self.wld_solver(m, threads).1 + kept;
        }
        OVERHEAD_BYTES + solve_memory(&self.rules, m, threads) + 2 * size * 2
    }

    /// The solver a WLD-only build takes for slice `m`, and the memory it needs: the grouped
    /// one, or for a slice of kings only whose grouped working set would not fit half the
    /// budget (or whose group is too large for it), the bit solver
    /// ([`crate::bitbase`], seven bits a position).
    ///
    /// A grouped solve that would pass three quarters of the budget keeps the slice's own
    /// outcomes and capture flags in scratch files mapped from disk ([`Plan::maps_results`]):
    /// the memory returned is then the rest of its working set.
    pub fn wld_solver(&self, m: Material, threads: usize) -> (WldSolver, u64) {
        let (method, bytes) = self.wld_solver_with(m, threads, 0);
        if method == WldSolver::Bits || OVERHEAD_BYTES + bytes <= self.memory / 4 * 3 {
            return (method, bytes);
        }
        let n = SliceIndex::new(m, self.rules.geometry()).size();
        self.wld_solver_with(m, threads, wld_results_bytes(n))
    }

    /// Whether solving slice `m` (WLD-only, grouped solver) keeps its own outcomes and
    /// capture flags in scratch files, because in memory they would take its working set past
    /// three quarters of the budget.
    pub fn maps_results(&self, m: Material, threads: usize) -> bool {
        if !self.wld_only {
            return false;
        }
        let (method, bytes) = self.wld_solver_with(m, threads, 0);
        method != WldSolver::Bits && OVERHEAD_BYTES + bytes > self.memory / 4 * 3
    }

    /// [`Plan::wld_solver`] with `mapped` bytes of the grouped solver's arrays not in memory.
    fn wld_solver_with(&self, m: Material, threads: usize, mapped: u64) -> (WldSolver, u64) {
        let ix = SliceIndex::new(m, self.rules.geometry());
        let grouped = solve_memory_wld(&self.rules, m, threads, false).saturating_sub(mapped);
        let too_large = group_too_large(&self.rules, m);
        if m.men() == 0 && (too_large || grouped > self.memory / 2) {
            return (WldSolver::Bits, kings_wld_memory(ix.size(), threads));
        }
        // Groups one at a time where one set of group buffers a thread takes more than a
        // quarter of the budget.
        let serial = solve_memory_wld(&self.rules, m, threads, true).saturating_sub(mapped);
        if grouped > serial && grouped - serial > self.memory / 4 {
            (WldSolver::GroupedSerial, serial)
        } else {
            (WldSolver::Grouped, grouped)
        }
    }

    /// Memory (bytes) the build's store takes for slice `m` once it is solved or loaded:
    /// 2 bits a stored position in a WLD-only build, 16 otherwise.
    pub fn held_bytes(&self, m: Material) -> u64 {
        let size = SliceIndex::new(m, self.rules.geometry()).size();
        let sides = if m == m.mirror() { 1 } else { 2 };
        sides
            * if self.wld_only {
                size.div_ceil(32) * 8
            } else {
                2 * size
            }
    }

    /// What [`run`] would do now, slice by slice, given the files on disk, and the memory it
    /// would need: nothing is written. Reads (and checks) every finished file.
    pub fn forecast(&self, threads: usize) -> Vec<Forecast> {
        let mut f = self.forecast_in_memory(threads);
        if self.needs_spill(threads) {
            let tables = self.from_tables(threads);
            let in_tables = self.held_timeline(&tables);
            for (s, t) in f.iter_mut().zip(in_tables) {
                s.disk_bytes = s.held_bytes - t;
                if !tables.is_empty() && s.action == Action::Solve {
                    s.solve_bytes += self.table_cache_bytes();
                }
                if s.action == Action::Solve && self.maps_results(s.material, threads) {
                    // Its own outcomes and capture flags, while it is solved.
                    let n = SliceIndex::new(s.material, self.rules.geometry()).size();
                    s.disk_bytes += wld_results_bytes(n);
                }
                if s.action == Action::Solve && self.wld_only {
                    // The store's copy of the outcomes goes to the scratch file.
                    s.solve_bytes -= self.held_bytes(s.material).min(s.solve_bytes);
                }
                s.held_bytes = 0;
                s.spill = true;
            }
        }
        f
    }

    /// Per slice of the plan, bytes (as [`Plan::held_bytes`]) of the slices of `tables`
    /// held while it is solved or loaded, counted as in [`Plan::forecast_in_memory`].
    fn held_timeline(&self, tables: &std::collections::HashSet<Material>) -> Vec<u64> {
        let done: Vec<bool> = self
            .slices
            .iter()
            .map(|&m| on_disk(self, m) == OnDisk::Finished)
            .collect();
        let readers = Readers::new(&self.slices, &done);
        let mut held = 0u64;
        let mut out = Vec::with_capacity(self.slices.len());
        for (i, &m) in self.slices.iter().enumerate() {
            for &j in &readers.drop_before[i] {
                if tables.contains(&self.slices[j]) {
                    held = held.saturating_sub(self.held_bytes(self.slices[j]));
                }
            }
            out.push(held);
            if readers.read[i] && tables.contains(&m) {
                held += self.held_bytes(m);
            }
        }
        out
    }

    /// The block cache of the table files a build reads finished slices from
    /// ([`Plan::from_tables`]): a 32nd of the budget, at most 1 GiB.
    fn table_cache_bytes(&self) -> u64 {
        (self.memory / 32).min(1 << 30)
    }

    /// [`Plan::forecast`] with every finished slice a later one reads held in memory.
    fn forecast_in_memory(&self, threads: usize) -> Vec<Forecast> {
        let states: Vec<OnDisk> = self.slices.iter().map(|&m| on_disk(self, m)).collect();
        let done: Vec<bool> = states.iter().map(|s| *s == OnDisk::Finished).collect();
        let readers = Readers::new(&self.slices, &done);
        let mut held = 0u64;
        let mut out = Vec::with_capacity(self.slices.len());
        for (i, &m) in self.slices.iter().enumerate() {
            for &j in &readers.drop_before[i] {
                // (saturating: a plan whose slices were reordered by hand is not in
                // dependency order; `run` refuses it with a missing-slice error)
                held = held.saturating_sub(self.held_bytes(self.slices[j]));
            }
            let action = match (done[i], readers.read[i]) {
                (false, _) => Action::Solve,
                (true, true) => Action::Load,
                (true, false) => Action::Skip,
            };
            out.push(Forecast {
                material: m,
                positions: self.stored_positions(m),
                action,
                solve_bytes: if action == Action::Solve {
                    self.solve_bytes(m, threads)
                } else {
                    0
                },
                held_bytes: held,
                disk_bytes: 0,
                spill: false,
                unusable: match &states[i] {
                    OnDisk::Unusable(why) => Some(why.clone()),
                    _ => None,
                },
            });
            if readers.read[i] {
                held += self.held_bytes(m);
            }
        }
        out
    }

    /// The finished slices this build reads from their table files (compressed, through a
    /// block cache) instead of scratch files, so that its scratch files stay within
    /// [`Plan::scratch_limit`]: empty unless it spills ([`Plan::needs_spill`]) and is
    /// WLD-only. Chosen greedily, slice by slice in solve order: while the scratch files
    /// held at a slice would pass the limit, the largest held slice not yet chosen is.
    pub fn from_tables(&self, threads: usize) -> std::collections::HashSet<Material> {
        let mut chosen = std::collections::HashSet::new();
        let Some(limit) = self.scratch_limit else {
            return chosen;
        };
        if !self.wld_only || !self.needs_spill(threads) {
            return chosen;
        }
        let done: Vec<bool> = self
            .slices
            .iter()
            .map(|&m| on_disk(self, m) == OnDisk::Finished)
            .collect();
        let readers = Readers::new(&self.slices, &done);
        let mut held: Vec<Material> = Vec::new();
        for (i, &m) in self.slices.iter().enumerate() {
            for &j in &readers.drop_before[i] {
                held.retain(|&x| x != self.slices[j]);
            }
            let own = if !done[i] && self.maps_results(m, threads) {
                wld_results_bytes(SliceIndex::new(m, self.rules.geometry()).size())
            } else {
                0
            };
            loop {
                let disk: u64 = held
                    .iter()
                    .filter(|x| !chosen.contains(*x))
                    .map(|&x| self.held_bytes(x))
                    .sum::<u64>()
                    + own;
                if disk <= limit {
                    break;
                }
                let Some(&big) = held
                    .iter()
                    .filter(|x| !chosen.contains(*x))
                    .max_by_key(|&&x| (self.held_bytes(x), x))
                else {
                    break; // its own arrays alone pass the limit: the forecast says so
                };
                chosen.insert(big);
            }
            if readers.read[i] {
                held.push(m);
            }
        }
        chosen
    }

    /// Whether this build keeps finished slices in scratch files: its forecast, with every
    /// finished slice in memory, passes three quarters of its budget somewhere.
    pub fn needs_spill(&self, threads: usize) -> bool {
        self.forecast_in_memory(threads).iter().any(|f| {
            f.held_bytes + f.solve_bytes > self.memory / 4 * 3
                || (f.action == Action::Solve && self.maps_results(f.material, threads))
        })
    }

    /// The kinds of file this build writes.
    pub fn kinds(&self) -> &'static [ValueKind] {
        if self.wld_only {
            &[ValueKind::Wld]
        } else {
            &[ValueKind::Wld, ValueKind::Dtw]
        }
    }

    /// Path of the file of slice `m`, kind `kind`.
    pub fn path(&self, m: Material, kind: ValueKind) -> PathBuf {
        self.out.join(table_file_name(self.rules.name, m, kind))
    }
}

/// Bytes of the grouped WLD solver's own arrays for a slice of `n` positions a side: the
/// outcomes (2 bits) and capture flags (1 bit) of both sides ([`solve_memory_wld`] counts
/// them).
pub fn wld_results_bytes(n: u64) -> u64 {
    2 * (n.div_ceil(32) * 8 + n.div_ceil(64) * 8)
}

/// What a build does with a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Solve it and write its files.
    Solve,
    /// Finished on disk; read back, since a slice still to be solved leads to it.
    Load,
    /// Finished on disk, and nothing left reads it.
    Skip,
}

impl Action {
    /// Lower-case name, as `dtb gen --dry-run` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Action::Solve => "solve",
            Action::Load => "load",
            Action::Skip => "skip",
        }
    }
}

/// The solver of a slice in a WLD-only build ([`Plan::wld_solver`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WldSolver {
    /// [`crate::solve::solve_slice_grouped_wld`]: one men group at a time on each thread.
    Grouped,
    /// The same, each group on every thread: one set of group buffers.
    GroupedSerial,
    /// [`crate::bitbase::solve_kings_wld`]: bitmaps, for slices of kings only.
    Bits,
}

/// Memory a build may use, bytes: the least of the memory available now (Linux
/// `MemAvailable`), what the process's address-space limit (`ulimit -v`) leaves beside its
/// present size, and what its cgroup's `memory.max` leaves beside `memory.current`; `None`
/// if none of these can be read.
fn memory_limit() -> Option<u64> {
    let mut limit = available_memory();
    let mut lower = |x: Option<u64>| {
        if let Some(x) = x {
            limit = Some(limit.map_or(x, |l| l.min(x)));
        }
    };
    lower(address_space_left());
    lower(cgroup_left());
    limit
}

/// The default memory budget: [`memory_limit`] less a margin of 1/16 (at least 256 MiB)
/// for the rest of the machine; 4 GiB where nothing can be read.
fn default_budget() -> u64 {
    match memory_limit() {
        Some(l) => l.saturating_sub((l / 16).max(256 << 20)).max(64 << 20),
        None => 4 << 30,
    }
}

/// What `ulimit -v` leaves: the soft address-space limit less the present virtual size.
fn address_space_left() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft = line.split_whitespace().nth(3)?;
    let soft: u64 = soft.parse().ok()?; // "unlimited" does not parse: no limit
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let size: u64 = status
        .lines()
        .find(|l| l.starts_with("VmSize:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(soft.saturating_sub(size * 1024))
}

/// What the cgroup (v2) of this process leaves: `memory.max` less `memory.current`.
fn cgroup_left() -> Option<u64> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = cg.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = std::path::Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/'));
    let max: u64 = std::fs::read_to_string(dir.join("memory.max"))
        .ok()?
        .trim()
        .parse()
        .ok()?; // "max": no limit
    let current: u64 = std::fs::read_to_string(dir.join("memory.current"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(max.saturating_sub(current))
}

/// A memory size as `dtb gen --memory` takes it: a number of bytes, or a number with a
/// binary unit `K`, `M`, `G` or `T` (KiB, MiB, GiB, TiB; `KiB`, `MB`, ... are the same), a
/// fraction allowed: `512M`, `20G`, `1.5G`.
///
/// # Errors
/// A message naming what is wrong.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => {
            return Err(format!(
                "{s:?}: unknown unit {unit:?} (bytes, or K, M, G, T: binary units)"
            ))
        }
    };
    let x: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size (for example 512M or 20G)"))?;
    let bytes = x * (1u64 << shift) as f64;
    if !bytes.is_finite() || !(1.0..=1e18).contains(&bytes) {
        return Err(format!(
            "{s:?}: a memory size must be at least 1 byte and below 1 EB"
        ));
    }
    Ok(bytes as u64)
}

/// One slice of [`Plan::forecast`].
#[derive(Clone, Debug)]
pub struct Forecast {
    pub material: Material,
    /// Positions stored (side to move counted).
    pub positions: u64,
    pub action: Action,
    /// Expected working memory to solve and write it ([`Plan::solve_bytes`]; 0 unless it
    /// is solved).
    pub solve_bytes: u64,
    /// Memory held by the solved slices kept while it is solved or loaded.
    pub held_bytes: u64,
    /// Bytes of scratch files of finished slices on disk at that time (mapped, the page
    /// cache holding what it can), where they do not fit in memory.
    pub disk_bytes: u64,
    /// Finished slices go to scratch files in this build.
    pub spill: bool,
    /// Why a file of the slice present on disk cannot be used (it is solved again).
    pub unusable: Option<String>,
}

/// Figures of one slice.
#[derive(Clone, Debug, Default)]
pub struct SliceStats {
    pub material: Material,
    /// Positions stored (side to move counted).
    pub positions: u64,
    /// Positions solved (both sides to move).
    pub solved: u64,
    /// Wall seconds for the whole slice (solve and write).
    pub seconds: f64,
    /// Wall seconds of the solve alone.
    pub solve_seconds: f64,
    /// Wall seconds writing (compressing, checking, syncing) the DTW and the WLD file.
    pub write_seconds: [f64; 2],
    pub wld_bytes: u64,
    pub dtw_bytes: u64,
    /// Wins, losses, draws over the stored positions.
    pub counts: [u64; 3],
    pub max_plies: u16,
    /// True when the slice was already finished on disk and only loaded.
    pub skipped: bool,
}

/// What a build reports as it goes; the CLI draws progress bars from it.
pub trait Observer: Sync {
    /// Before the first slice: the work units (four a position solved) of every slice this
    /// run will solve, for an overall rate and ETA.
    fn build_start(&self, _work: u64) {}
    /// A slice starts: its number (0-based), the total, and the work units it will report.
    fn slice_start(&self, _i: usize, _total: usize, _m: Material, _work: u64) {}
    /// Work units done.
    fn progress(&self, _units: u64) {}
    /// A slice is finished (solved and written, or found finished).
    fn slice_done(&self, _stats: &SliceStats) {}
    /// Before any slice starts: a file of slice `m` is present but unusable (`why`: damaged,
    /// truncated, another slice's or another variant's), so the slice will be solved and
    /// its files written again.
    fn unusable(&self, _m: Material, _why: &str) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

/// Memory available to a new allocation now (Linux `MemAvailable`; `None` elsewhere).
pub fn available_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Peak resident memory of this process in bytes (Linux; `None` elsewhere).
pub fn peak_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Remove the temporary files an interrupted writer left (`.<name>.<random>.tmp`), those of
/// the file named `of` only unless it is empty; only called while holding the directory
/// lock (or the slice's), so no writer of ours is using them.
fn remove_stale_temporaries(dir: &std::path::Path, of: &str) {
    let prefix = format!(".{of}");
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(&prefix) && name.ends_with(".tmp") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// What a build finds on disk for a slice.
#[derive(Debug, PartialEq)]
enum OnDisk {
    /// Every file of the build's kinds is present, of this slice and rules, and intact.
    Finished,
    /// Some file is missing (never written, or removed).
    Missing,
    /// Some file is present but cannot be used (why): it is solved and written again.
    Unusable(String),
}

/// Whether the files of slice `m` are finished: each kind the plan writes exists, opens,
/// matches the plan and passes its checksums.
fn on_disk(plan: &Plan, m: Material) -> OnDisk {
    let cache = std::sync::Arc::new(BlockCache::new(1 << 20));
    for &kind in plan.kinds() {
        let path = plan.path(m, kind);
        if !path.exists() {
            return OnDisk::Missing;
        }
        let t = match TableFile::open(&path, cache.clone()) {
            Ok(t) => t,
            Err(e) => return OnDisk::Unusable(dtb_probe::report(&e)),
        };
        if let Some(why) = t.header().mismatch(&plan.rules, m, kind) {
            return OnDisk::Unusable(format!("{}: {why}", path.display()));
        }
        if let Err(e) = t.verify_payload() {
            return OnDisk::Unusable(dtb_probe::report(&e));
        }
    }
    OnDisk::Finished
}

fn header(plan: &Plan, s: &SolvedSlice, kind: ValueKind, sides: u8) -> Header {
    header_of(plan, s.material, s.size, s.counts, s.max_plies, kind, sides)
}

fn header_of(
    plan: &Plan,
    m: Material,
    size: u64,
    counts: [[u64; 3]; 2],
    max_plies: u16,
    kind: ValueKind,
    sides: u8,
) -> Header {
    // Flagged codes (a win in an even number of plies, a loss in an odd one) arise only under
    // `blocked = majority`: its DTW files are format version 2, 16-bit (docs/FORMAT.md).
    let flip = kind == ValueKind::Dtw && plan.rules.blocked == BlockedOutcome::Majority;
    let dtw_width = if max_plies < u8::MAX as u16 && !flip {
        8
    } else {
        16
    };
    Header {
        version: if flip {
            FORMAT_VERSION_FLIP
        } else {
            FORMAT_VERSION
        },
        kind,
        value_width: if kind == ValueKind::Wld { 2 } else { dtw_width },
        variant: plan.rules.name.to_string(),
        rules_code: plan.rules.encode(),
        material: m.counts(),
        sides,
        positions_per_side: size,
        block_len: if kind == ValueKind::Wld {
            WLD_BLOCK_LEN
        } else {
            DTW_BLOCK_LEN
        },
        block_count: 0,
        counts,
        max_plies: if plan.wld_only { 0 } else { max_plies },
        payload_crc: 0,
    }
}

/// The bits of value codes ([`Code::bits`], what a DTW file stores), in the same buffer: the
/// in-place collect of a vector into one of the same layout (`Code` is a transparent `u16`)
/// copies nothing, where a second vector of the largest 7-piece slice would take 2.8 GB.
fn into_bits(codes: Vec<Code>) -> Vec<u16> {
    codes.into_iter().map(Code::bits).collect()
}

/// DTW file codes (the bits of [`Code`]s) to WLD file codes ([`WldCode`]), in place. A capture
/// position (bit set in `capture`) is "don't care"; it gets the most common value among the
/// non-capture positions of its WLD block (English 2-5: 3.7% fewer bytes than repeating the
/// previous value, the choice kept for DTW files; `examples/compress_lab.rs`).
fn to_wld_codes(codes: &mut [u16], capture: &[u64]) {
    use rayon::prelude::*;
    let block = WLD_BLOCK_LEN as usize;
    // Blocks are independent: converted on all worker threads.
    codes
        .par_chunks_mut(block)
        .enumerate()
        .for_each(|(b, chunk)| {
            let is_capture = |j: usize| {
                let i = b * block + j;
                capture[i / 64] >> (i % 64) & 1 != 0
            };
            let mut count = [0u32; 3];
            for (j, c) in chunk.iter_mut().enumerate() {
                *c = u16::from(WldCode::of(Code::from_bits(*c)).bits());
                if !is_capture(j) {
                    count[*c as usize] += 1;
                }
            }
            // Ties go to the lower code (draw, then win, then loss).
            let mut common = 0;
            for k in 1..3 {
                if count[k] > count[common] {
                    common = k;
                }
            }
            for (j, c) in chunk.iter_mut().enumerate() {
                if is_capture(j) {
                    *c = common as u16;
                }
            }
        });
}

/// [`to_wld_codes`]'s filling of capture positions, on outcomes packed two bits a position
/// (`words`, `n` positions; [`SolvedWld::values`]): each capture position gets the most
/// common value among the non-capture positions of its WLD block, ties to the lower code.
fn fill_captures_packed(words: &mut [u64], capture: &[u64], n: u64) {
    use rayon::prelude::*;
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let per_block = WLD_BLOCK_LEN as usize / 32;
    words
        .par_chunks_mut(per_block)
        .enumerate()
        .for_each(|(b, chunk)| {
            // Per word: its positions' capture bits, and which of its positions exist.
            let masks = |k: usize| {
                let gk = b * per_block + k;
                let cap = (capture[gk / 2] >> (32 * (gk % 2))) as u32;
                let left = n.saturating_sub(32 * gk as u64);
                let valid = if left >= 32 {
                    u32::MAX
                } else {
                    (1u32 << left) - 1
                };
                (cap & valid, !cap & valid)
            };
            let mut count = [0u32; 3];
            for (k, &w) in chunk.iter().enumerate() {
                let (_, quiet) = masks(k);
                let q = spread(quiet);
                let (lo, hi) = (w & EVEN, (w >> 1) & EVEN);
                count[0] += (!lo & !hi & q).count_ones();
                count[1] += (lo & q).count_ones();
                count[2] += (hi & q).count_ones();
            }
            let mut common = 0;
            for k in 1..3 {
                if count[k] > count[common] {
                    common = k;
                }
            }
            let pattern = common as u64 * EVEN;
            for (k, w) in chunk.iter_mut().enumerate() {
                let (cap, _) = masks(k);
                let m = spread(cap) * 3;
                *w = (*w & !m) | (pattern & m);
            }
        });
}

/// The stored sides of a slice: White to move only for a colour-symmetric one.
fn sides_of<'a>(symmetric: bool, c0: &'a [u16], c1: &'a [u16]) -> Vec<&'a [u16]> {
    if symmetric {
        vec![c0]
    } else {
        vec![c0, c1]
    }
}

/// Which slices of a build read which, through the store: a slice being solved looks up
/// the slices its moves lead to ([`Material::successors`]), and so does a finished slice
/// loaded back from its file (its capture positions are resolved again by one move).
struct Readers {
    /// `read[j]`: some slice solved or loaded in this run reads slice `j`.
    read: Vec<bool>,
    /// `drop_before[i]`: the slices whose last reader comes just before slice `i`: they
    /// leave the store before slice `i` starts.
    drop_before: Vec<Vec<usize>>,
}

impl Readers {
    /// `slices` in solve order, `done[i]`: slice `i` is finished on disk.
    fn new(slices: &[Material], done: &[bool]) -> Readers {
        let at: std::collections::HashMap<Material, usize> =
            slices.iter().enumerate().map(|(i, &m)| (m, i)).collect();
        let reads: Vec<Vec<usize>> = slices
            .iter()
            .map(|m| {
                m.successors()
                    .iter()
                    .filter_map(|s| at.get(s).copied())
                    .collect()
            })
            .collect();
        // Backwards: a finished slice is loaded only if a later slice that runs reads it;
        // what the slices that run read is known once every later slice is decided.
        let n = slices.len();
        let mut read = vec![false; n];
        let mut runs = vec![false; n];
        for i in (0..n).rev() {
            runs[i] = !done[i] || read[i];
            if runs[i] {
                for &j in &reads[i] {
                    read[j] = true;
                }
            }
        }
        let mut last: Vec<Option<usize>> = vec![None; n];
        for i in 0..n {
            if runs[i] {
                for &j in &reads[i] {
                    last[j] = Some(i);
                }
            }
        }
        let mut drop_before = vec![Vec::new(); n];
        for (j, l) in last.iter().enumerate() {
            if let Some(l) = *l {
                if l + 1 < n {
                    drop_before[l + 1].push(j);
                }
            }
        }
        Readers { read, drop_before }
    }
}

/// Run a build: every slice of the plan not yet finished on disk is solved and written; the
/// finished ones are loaded. Holds a lock on the output directory for its whole run.
///
/// # Errors
/// [`BuildError`]: the directory cannot be created or is locked, a slice does not fit in
/// memory, a write fails (full disk, ...).
pub fn run(plan: &Plan, obs: &dyn Observer) -> Result<Vec<SliceStats>, BuildError> {
    if plan.pieces > MAX_PIECES {
        return Err(BuildError::Pieces(plan.pieces));
    }
    let locks = lock_output(plan)?;
    let done = finished_on_disk(plan, obs);
    check_before_work(plan, &done)?;
    let readers = Readers::new(&plan.slices, &done);
    obs.build_start(
        plan.slices
            .iter()
            .zip(&done)
            .filter(|(_, &d)| !d)
            .map(|(&m, _)| 4 * SliceIndex::new(m, plan.rules.geometry()).size())
            .sum(),
    );
    let threads = rayon::current_num_threads();
    // Finished slices go to scratch files when they do not fit beside the slices solved.
    let spill = plan
        .needs_spill(threads)
        .then(|| std::sync::Arc::new(Spill::default()));
    // Mapped pages are dropped whenever the process passes 7/8 of the budget.
    let _watch = spill
        .as_ref()
        .map(|sp| sp.watch(plan.memory - plan.memory / 8));
    // Finished slices read from their table files, where scratch files would not fit.
    let tables = plan.from_tables(threads);
    let scratch = prepare_scratch(plan, spill.is_some(), &done, &readers, &tables)?;
    let mut store = Store::new(plan.rules);
    let mut all = Vec::new();
    let total = plan.slices.len();
    for (i, &m) in plan.slices.iter().enumerate() {
        // Slices no later slice reads leave the store (they are on disk): what a build
        // holds is the slices its remaining slices lead to, not all it has solved.
        for &j in &readers.drop_before[i] {
            store.remove(plan.slices[j]);
        }
        // Held in the store for later slices (not read from its table file).
        let held = readers.read[i] && !tables.contains(&m);
        let st = if done[i] {
            obs.slice_start(i, total, m, 0);
            finished_slice(plan, &mut store, m, held, spill.as_deref())?
        } else {
            check_room(plan, &store, m, spill.is_some())?;
            if plan.wld_only {
                solve_wld(
                    plan,
                    &mut store,
                    m,
                    (i, total),
                    Holding {
                        keep: held,
                        spill: spill.as_deref(),
                        with_tables: !tables.is_empty(),
                    },
                    obs,
                )?
            } else {
                obs.slice_start(
                    i,
                    total,
                    m,
                    4 * SliceIndex::new(m, plan.rules.geometry()).size(),
                );
                solve_full(plan, &mut store, m, readers.read[i], spill.as_deref(), obs)?
            }
        };
        obs.slice_done(&st);
        all.push(st);
    }
    drop(store);
    let _ = std::fs::remove_dir_all(&scratch);
    if let Some(m) = plan.single {
        // Finished: the slice's lock file goes (a job that opened it meanwhile finds the
        // slice's file finished and does nothing).
        let _ = std::fs::remove_file(plan.out.join(format!(".dtb-gen-{m}.lock")));
    }
    drop(locks);
    Ok(all)
}

/// The output directory's lock (and a job of one slice's slice lock), held while a build runs.
struct Locks {
    _dir: File,
    _slice: Option<File>,
}

/// Create the output directory and take its lock: a whole build holds the directory alone; a
/// job of one slice (`dtb gen --slice`, as make or Slurm run them) shares it with other
/// slices' jobs and holds its slice alone. Temporary files a stopped run left go.
fn lock_output(plan: &Plan) -> Result<Locks, BuildError> {
    std::fs::create_dir_all(&plan.out).map_err(|source| BuildError::CreateDir {
        path: plan.out.clone(),
        source,
    })?;
    let lock_path = plan.out.join(LOCK_FILE);
    let lock = File::create(&lock_path).map_err(|source| BuildError::Lock {
        path: lock_path.clone(),
        source,
    })?;
    let shared = plan.single.is_some();
    let locked = if shared {
        lock.try_lock_shared()
    } else {
        lock.try_lock()
    };
    match locked {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Err(BuildError::Locked(plan.out.clone())),
        Err(std::fs::TryLockError::Error(source)) => {
            return Err(BuildError::Lock {
                path: lock_path,
                source,
            })
        }
    }
    let _slice_lock = match plan.single {
        Some(m) => Some(lock_slice(plan, m)?),
        None => None,
    };
    match plan.single {
        None => remove_stale_temporaries(&plan.out, ""),
        Some(m) => {
            for kind in plan.kinds() {
                let path = plan.path(m, *kind);
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                remove_stale_temporaries(&plan.out, &name.unwrap_or_default());
            }
        }
    }
    Ok(Locks {
        _dir: lock,
        _slice: _slice_lock,
    })
}

/// Which slices of the plan are finished on disk (a usable file; an unusable one is told to
/// `obs` and solved again).
fn finished_on_disk(plan: &Plan, obs: &dyn Observer) -> Vec<bool> {
    let mut done = Vec::with_capacity(plan.slices.len());
    for &m in &plan.slices {
        let state = on_disk(plan, m);
        if let OnDisk::Unusable(why) = &state {
            obs.unusable(m, why);
        }
        done.push(state == OnDisk::Finished);
    }
    done
}

/// What stops a build before any work: a job of one slice whose inputs are not finished, a
/// slice no solver takes, a slice whose forecast does not fit the budget.
fn check_before_work(plan: &Plan, done: &[bool]) -> Result<(), BuildError> {
    if let Some(m) = plan.single {
        // Another job may be writing a missing input now: a job of one slice never solves one.
        let missing: Vec<Material> = plan
            .slices
            .iter()
            .zip(done)
            .filter(|&(&x, &d)| x != m && !d)
            .map(|(&x, _)| x)
            .collect();
        if !missing.is_empty() {
            return Err(BuildError::MissingInputs { slice: m, missing });
        }
    }
    // A slice no solver takes is named now, not hours into the build.
    if let Some((&m, _)) =
        plan.slices.iter().zip(done).find(|(&m, &d)| {
            !d && group_too_large(&plan.rules, m) && !(plan.wld_only && m.men() == 0)
        })
    {
        return Err(BuildError::Solve {
            material: m,
            source: Box::new(
                crate::solve::SolveError::<std::convert::Infallible>::GroupTooLarge(m),
            ),
        });
    }
    // Every slice's forecast against the budget before any work: a slice that cannot fit
    // is named now, not hours into the build.
    let threads = rayon::current_num_threads();
    if let Some(f) = plan
        .forecast(threads)
        .into_iter()
        .find(|f| f.solve_bytes + f.held_bytes > plan.memory)
    {
        return Err(BuildError::Memory {
            material: f.material,
            needed_mib: (f.solve_bytes + f.held_bytes).div_ceil(1 << 20),
            available_mib: plan.memory >> 20,
        });
    }
    Ok(())
}

/// The scratch folder of the run: created when finished slices go to scratch files
/// (`spill`), keeping those of a stopped run that this run reads again (checked when mapped)
/// and removing every other file; removed when nothing is spilled.
fn prepare_scratch(
    plan: &Plan,
    spill: bool,
    done: &[bool],
    readers: &Readers,
    tables: &std::collections::HashSet<Material>,
) -> Result<PathBuf, BuildError> {
    let scratch = scratch_dir(plan);
    if spill {
        std::fs::create_dir_all(&scratch).map_err(|source| BuildError::CreateDir {
            path: scratch.clone(),
            source,
        })?;
        // A stopped build's scratch files are reused for the finished slices this run
        // reads (checked when mapped); every other one goes now.
        let keep: std::collections::HashSet<PathBuf> = plan
            .slices
            .iter()
            .enumerate()
            .filter(|&(i, m)| done[i] && readers.read[i] && !tables.contains(m))
            .flat_map(|(_, &m)| [scratch_path(plan, m, 0), scratch_path(plan, m, 1)])
            .flat_map(|p| {
                let side = PathBuf::from(format!("{}.crc", p.display()));
                [p, side]
            })
            .collect();
        for e in std::fs::read_dir(&scratch).into_iter().flatten().flatten() {
            if !keep.contains(&e.path()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    } else {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    Ok(scratch)
}

/// A finished slice: read back into the store if later slices read it (`held`; from its
/// scratch file where a stopped run left one, or its table file, then spilled to scratch if
/// finished slices are), and its figures from its files.
fn finished_slice(
    plan: &Plan,
    store: &mut Store,
    m: Material,
    held: bool,
    spill: Option<&Spill>,
) -> Result<SliceStats, BuildError> {
    let symmetric = m == m.mirror();
    let positions = plan.stored_positions(m);
    let reused = match spill {
        Some(sp) if held => reuse_scratch(plan, store, m, sp),
        _ => false,
    };
    let loaded = if !held || reused {
        Ok(()) // finished, and nothing left to solve reads it (or mapped again)
    } else if plan.wld_only {
        store.load_wld_file(m, &plan.path(m, ValueKind::Wld))
    } else {
        store.load_dtw_file(m, &plan.path(m, ValueKind::Dtw))
    };
    loaded.map_err(|e| BuildError::Load {
        material: m,
        source: e.into(),
    })?;
    if let (Some(sp), true, false) = (spill, held, reused) {
        spill_slice(plan, store, m, sp)?;
    }
    let t = TableFile::open(
        &plan.path(m, ValueKind::Wld),
        std::sync::Arc::new(BlockCache::new(1 << 16)),
    );
    let (counts, wld_bytes, max_plies) = match t {
        Ok(t) => {
            let c = t.header().counts;
            let counts = both_sides(c, symmetric);
            (counts, t.compressed_len(), t.header().max_plies)
        }
        Err(_) => ([0; 3], 0, 0),
    };
    let dtw_bytes = std::fs::metadata(plan.path(m, ValueKind::Dtw))
        .map(|md| md.len())
        .unwrap_or(0);
    Ok(SliceStats {
        material: m,
        positions,
        solved: 0,
        seconds: 0.0,
        solve_seconds: 0.0,
        write_seconds: [0.0; 2],
        wld_bytes,
        dtw_bytes,
        counts,
        max_plies,
        skipped: true,
    })
}

/// Wins, losses and draws of a slice over both sides to move (a symmetric slice stores one).
fn both_sides(c: [[u64; 3]; 2], symmetric: bool) -> [u64; 3] {
    if symmetric {
        c[0]
    } else {
        [c[0][0] + c[1][0], c[0][1] + c[1][1], c[0][2] + c[1][2]]
    }
}

/// Whether solving slice `m` fits beside what the store holds, within the budget and the
/// memory available now.
fn check_room(plan: &Plan, store: &Store, m: Material, spilling: bool) -> Result<(), BuildError> {
    let needed = plan.solve_bytes(m, rayon::current_num_threads())
        - if spilling && plan.wld_only {
            plan.held_bytes(m) // to a scratch file, not copied
        } else {
            0
        };
    let room = plan.memory.saturating_sub(store.bytes());
    let avail = available_memory().map_or(room, |a| a.min(room));
    if needed > avail {
        return Err(BuildError::Memory {
            material: m,
            needed_mib: needed >> 20,
            available_mib: avail >> 20,
        });
    }
    Ok(())
}

/// Solve slice `m` with distances (a full build) and write its DTW and WLD files; the store
/// keeps its true values if later slices read it (`read`).
fn solve_full(
    plan: &Plan,
    store: &mut Store,
    m: Material,
    read: bool,
    spill: Option<&Spill>,
    obs: &dyn Observer,
) -> Result<SliceStats, BuildError> {
    let symmetric = m == m.mirror();
    let positions = plan.stored_positions(m);
    let size = SliceIndex::new(m, plan.rules.geometry()).size();
    let t0 = Instant::now();
    let solved = solve_slice(&plan.rules, &*store, m, &|n| obs.progress(n)).map_err(|e| {
        BuildError::Solve {
            material: m,
            source: e.into(),
        }
    })?;
    let solve_seconds = t0.elapsed().as_secs_f64();
    let dtw_header = header(plan, &solved, ValueKind::Dtw, if symmetric { 1 } else { 3 });
    let wld_header = header(plan, &solved, ValueKind::Wld, if symmetric { 1 } else { 3 });
    let c = solved.counts;
    let max_plies = solved.max_plies;
    // The store keeps the true values (capture positions included); the files get
    // "don't care" in capture positions. A WLD-only build packs the outcomes for the
    // store first, then converts the slice's values to WLD codes in place (the largest
    // 7-piece slice holds 1.4 G positions a side); a full build writes DTW and WLD codes
    // from one copy and keeps the true DTW codes. WLD codes fill capture positions by
    // their block's majority, DTW codes by the value before (`stored_codes`).
    let SolvedSlice {
        values: [c0, mut c1],
        capture: [cap0, cap1],
        ..
    } = solved;
    if symmetric {
        c1 = Vec::new();
    }
    let kept = (plan.wld_only && read).then(|| {
        [
            Some(Codes::wld_of_codes(&c0)),
            (!symmetric).then(|| Codes::wld_of_codes(&c1)),
        ]
    });
    let copy = (!plan.wld_only).then(|| {
        (
            stored_codes(&c0, &cap0),
            if symmetric {
                Vec::new()
            } else {
                stored_codes(&c1, &cap1)
            },
        )
    });
    let t1 = Instant::now();
    let dtw_bytes = match &copy {
        None => 0,
        Some((s0, s1)) => write_table(
            &plan.path(m, ValueKind::Dtw),
            &TableData {
                header: dtw_header,
                sides: sides_of(symmetric, s0, s1),
            },
            &plan.zstd,
        )?,
    };
    let dtw_seconds = t1.elapsed().as_secs_f64();
    let t2 = Instant::now();
    // The true codes: kept for the store by a full build, else converted in place.
    let (mut w0, mut w1, kept_true) = match copy {
        Some((a, b)) => (a, b, Some((c0, c1))),
        None => (into_bits(c0), into_bits(c1), None),
    };
    to_wld_codes(&mut w0, &cap0);
    to_wld_codes(&mut w1, &cap1);
    let wld_bytes = write_table(
        &plan.path(m, ValueKind::Wld),
        &TableData {
            header: wld_header,
            sides: sides_of(symmetric, &w0, &w1),
        },
        &plan.zstd,
    )?;
    drop((w0, w1));
    drop((cap0, cap1));
    let counts = both_sides(c, symmetric);
    let st = SliceStats {
        material: m,
        positions,
        solved: 2 * size,
        seconds: t0.elapsed().as_secs_f64(),
        solve_seconds,
        write_seconds: [dtw_seconds, t2.elapsed().as_secs_f64()],
        wld_bytes,
        dtw_bytes,
        counts,
        max_plies: if plan.wld_only { 0 } else { max_plies },
        skipped: false,
    };
    match (kept, kept_true) {
        _ if !read => {}
        (Some(sides), _) => store.insert_codes(m, sides),
        (None, Some((c0, c1))) => {
            store.insert(m, [Some(c0), (!symmetric).then_some(c1)]);
            if let Some(sp) = spill {
                spill_slice(plan, store, m, sp)?;
            }
        }
        // A WLD-only build reads back the packed outcomes (`kept`), made whenever it reads.
        (None, None) => {}
    }
    Ok(st)
}

/// Folder of a build directory that holds the scratch files of finished slices (a job of
/// one slice: `.dtb-scratch-<slice>`).
pub const SCRATCH_DIR: &str = ".dtb-scratch";

/// The scratch folder of this plan's runs.
fn scratch_dir(plan: &Plan) -> PathBuf {
    match plan.single {
        None => plan.out.join(SCRATCH_DIR),
        Some(m) => plan.out.join(format!("{SCRATCH_DIR}-{m}")),
    }
}

/// Bytes of the scratch files a stopped build left in `plan`'s scratch folder (reused or
/// removed when it runs again: free space, for its scratch limit).
pub fn scratch_on_disk(plan: &Plan) -> u64 {
    std::fs::read_dir(scratch_dir(plan))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|md| md.is_file())
        .map(|md| md.len())
        .sum()
}

/// Path of the scratch file of slice `m`, side `side`.
fn scratch_path(plan: &Plan, m: Material, side: usize) -> PathBuf {
    scratch_dir(plan).join(format!("{}-{m}-{side}.wld2", plan.rules.name))
}

/// Hold slice `m` of the build directory alone (`.dtb-gen-<slice>.lock`) for a job of one
/// slice.
fn lock_slice(plan: &Plan, m: Material) -> Result<File, BuildError> {
    let path = plan.out.join(format!(".dtb-gen-{m}.lock"));
    let f = File::create(&path).map_err(|source| BuildError::Lock {
        path: path.clone(),
        source,
    })?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(std::fs::TryLockError::WouldBlock) => Err(BuildError::SliceLocked(m)),
        Err(std::fs::TryLockError::Error(source)) => Err(BuildError::Lock { path, source }),
    }
}

/// Move slice `m`'s packed outcomes from memory to scratch files.
fn spill_slice(
    plan: &Plan,
    store: &mut Store,
    m: Material,
    spill: &Spill,
) -> Result<(), BuildError> {
    let Some(sides) = store.take(m) else {
        return Ok(());
    };
    let mut out: [Option<Codes>; 2] = [None, None];
    for (k, codes) in sides.into_iter().enumerate() {
        out[k] = match codes {
            Some(Codes::Wld(w)) => Some(to_scratch(plan, m, k, Raw::Words(&w), spill)?),
            Some(Codes::Dtw(c)) => Some(to_scratch(plan, m, k, Raw::Codes(&c), spill)?),
            other => other,
        };
    }
    store.insert_codes(m, out);
    Ok(())
}

/// Map slice `m`'s scratch files left by a stopped build, if every stored side's is whole;
/// whether it did.
fn reuse_scratch(plan: &Plan, store: &mut Store, m: Material, spill: &Spill) -> bool {
    let size = SliceIndex::new(m, plan.rules.geometry()).size();
    let (kind, len) = if plan.wld_only {
        (ScratchKind::Wld, size.div_ceil(32) * 8)
    } else {
        (ScratchKind::Dtw, 2 * size)
    };
    let sides = if m == m.mirror() { 1 } else { 2 };
    let mut got: [Option<Codes>; 2] = [None, None];
    for (k, slot) in got.iter_mut().enumerate().take(sides) {
        match Codes::reuse(&scratch_path(plan, m, k), kind, len, spill) {
            Some(c) => *slot = Some(c),
            None => return false,
        }
    }
    store.insert_codes(m, got);
    true
}

fn to_scratch(
    plan: &Plan,
    m: Material,
    side: usize,
    raw: Raw,
    spill: &Spill,
) -> Result<Codes, BuildError> {
    let path = scratch_path(plan, m, side);
    Codes::spill(raw, &path, spill).map_err(|source| {
        BuildError::Write(WriteError::Io {
            path,
            action: "writing a scratch file of finished outcomes",
            source,
        })
    })
}

/// Solve slice `m` of a WLD-only build with `method`, reading finished slices from `src`.
fn solve_wld_from<S: Finished>(
    plan: &Plan,
    src: &S,
    m: Material,
    method: WldSolver,
    mapped: Option<&MappedResults>,
    obs: &dyn Observer,
) -> Result<SolvedWld, BuildError> {
    match method {
        WldSolver::Bits => solve_kings_wld(&plan.rules, src, m, &|n| obs.progress(n)),
        WldSolver::Grouped | WldSolver::GroupedSerial => solve_slice_grouped_wld_in(
            &plan.rules,
            src,
            m,
            method == WldSolver::GroupedSerial,
            mapped,
            &|n| obs.progress(n),
        ),
    }
    .map_err(|e| BuildError::Solve {
        material: m,
        source: e.into(),
    })
}

/// Where a WLD slice's solve reads finished slices from and keeps its own outcomes.
struct Holding<'a> {
    /// Keep the outcomes for later slices (in the store: memory, or scratch files under
    /// `spill`).
    keep: bool,
    /// The build's scratch files, if it spills.
    spill: Option<&'a Spill>,
    /// Read finished slices the store does not hold from the directory's table files.
    with_tables: bool,
}

/// Solve slice `m` of a WLD-only build and write its file, holding as `holding` says.
fn solve_wld(
    plan: &Plan,
    store: &mut Store,
    m: Material,
    (i, total): (usize, usize),
    holding: Holding,
    obs: &dyn Observer,
) -> Result<SliceStats, BuildError> {
    let Holding {
        keep,
        spill,
        with_tables,
    } = holding;
    let symmetric = m == m.mirror();
    let size = SliceIndex::new(m, plan.rules.geometry()).size();
    let threads = rayon::current_num_threads();
    obs.slice_start(i, total, m, 4 * size);
    let t0 = Instant::now();
    let (method, _) = plan.wld_solver(m, threads);
    let dir = scratch_dir(plan);
    let mapped = match spill {
        Some(spill) if plan.maps_results(m, threads) => {
            std::fs::create_dir_all(&dir).map_err(|source| BuildError::CreateDir {
                path: dir.clone(),
                source,
            })?;
            Some(MappedResults { dir: &dir, spill })
        }
        _ => None,
    };
    let solved = if with_tables {
        // Slices the store does not hold come from the finished files of the directory.
        let mut tb =
            dtb_probe::Tablebase::with_cache_bytes(plan.rules, plan.table_cache_bytes() as usize);
        tb.add_directory(&plan.out).map_err(|e| BuildError::Solve {
            material: m,
            source: e.into(),
        })?;
        let tables = TableSource::new(tb, ValueKind::Wld);
        let src = Layered {
            store,
            tables: &tables,
        };
        solve_wld_from(plan, &src, m, method, mapped.as_ref(), obs)
    } else {
        solve_wld_from(plan, &*store, m, method, mapped.as_ref(), obs)
    }?;
    let solve_seconds = t0.elapsed().as_secs_f64();
    let SolvedWld {
        values: [mut v0, mut v1],
        capture: [cap0, cap1],
        counts: c,
        ..
    } = solved;
    if symmetric {
        v1 = Words::default();
    }
    // The store keeps the true outcomes; the file gets its capture positions filled.
    let kept = if !keep {
        None
    } else if let Some(sp) = spill {
        Some([
            Some(to_scratch(plan, m, 0, Raw::Words(&v0), sp)?),
            if symmetric {
                None
            } else {
                Some(to_scratch(plan, m, 1, Raw::Words(&v1), sp)?)
            },
        ])
    } else {
        Some([
            Some(Codes::Wld(v0.to_vec())),
            (!symmetric).then(|| Codes::Wld(v1.to_vec())),
        ])
    };
    let t2 = Instant::now();
    fill_captures_packed(&mut v0, &cap0, size);
    drop(cap0);
    if !symmetric {
        fill_captures_packed(&mut v1, &cap1, size);
    }
    drop(cap1);
    let header = header_of(
        plan,
        m,
        size,
        c,
        0,
        ValueKind::Wld,
        if symmetric { 1 } else { 3 },
    );
    let sides: Vec<&[u64]> = if symmetric { vec![&v0] } else { vec![&v0, &v1] };
    let wld_bytes = write_packed_wld(&plan.path(m, ValueKind::Wld), header, &sides, &plan.zstd)?;
    drop((v0, v1));
    if let Some(k) = kept {
        store.insert_codes(m, k);
    }
    let counts = if symmetric {
        c[0]
    } else {
        [c[0][0] + c[1][0], c[0][1] + c[1][1], c[0][2] + c[1][2]]
    };
    Ok(SliceStats {
        material: m,
        positions: plan.stored_positions(m),
        solved: 2 * size,
        seconds: t0.elapsed().as_secs_f64(),
        solve_seconds,
        write_seconds: [0.0, t2.elapsed().as_secs_f64()],
        wld_bytes,
        dtw_bytes: 0,
        counts,
        max_plies: 0,
        skipped: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The store as `run` keeps it, replayed: every slice solved or loaded finds all of its
    /// successors in the plan held, whatever slices are finished already (a fresh build, a
    /// resumed one, pseudo-random mixes); a finished slice is loaded only if a slice that
    /// runs after it reads it; and a fresh English 2-7 build holds less than half of its
    /// positions at once.
    #[test]
    fn the_store_holds_what_each_slice_reads() {
        let size = |m: &Material| SliceIndex::new(*m, Rules::ENGLISH.geometry()).size() as f64;
        let mut seed = 0x1234_5678_u64;
        for (pieces, per_side) in [(5, 12), (7, 12), (6, 20)] {
            let slices = Material::solve_order(pieces, per_side);
            let n = slices.len();
            for round in 0..20 {
                let done: Vec<bool> = (0..n)
                    .map(|i| match round {
                        0 => false,
                        1 => true,
                        2 => i < n / 2,
                        _ => {
                            seed = seed
                                .wrapping_mul(6364136223846793005)
                                .wrapping_add(1442695040888963407);
                            seed >> 62 != 0
                        }
                    })
                    .collect();
                let r = Readers::new(&slices, &done);
                let mut held = BTreeSet::new();
                let mut most = 0f64;
                for (i, m) in slices.iter().enumerate() {
                    for j in &r.drop_before[i] {
                        assert!(
                            held.remove(&slices[*j]),
                            "{m}: drops {} not held",
                            slices[*j]
                        );
                    }
                    let runs = !done[i] || r.read[i];
                    if runs {
                        for s in m.successors() {
                            if slices.contains(&s) {
                                assert!(held.contains(&s), "{m} reads {s}, not held");
                            }
                        }
                    }
                    if r.read[i] {
                        assert!(runs);
                        held.insert(*m);
                    }
                    most = most.max(held.iter().map(size).sum());
                }
                // Every slice read by a later one that runs is read: nothing missing ...
                // and a loaded slice is one such (no load that nothing needs).
                for i in 0..n {
                    let needed = (i + 1..n).any(|k| {
                        (!done[k] || r.read[k]) && slices[k].successors().contains(&slices[i])
                    });
                    assert_eq!(r.read[i], needed, "{}", slices[i]);
                }
                if round == 0 && pieces == 7 {
                    // Measured: 43% of the positions at most.
                    let all: f64 = slices.iter().map(size).sum();
                    assert!(most < 0.5 * all, "held {most} of {all} positions at once");
                }
            }
        }
    }
}
