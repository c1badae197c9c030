//! A whole build: plan the slices of a variant up to N pieces, solve each in dependency order,
//! write its WLD and DTW files, and resume a build that was interrupted.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use dtb_probe::internal::count::CountProfile;
use dtb_probe::internal::format::{
    table_file_name, Header, ValueKind, FORMAT_VERSION, FORMAT_VERSION_FLIP, FORMAT_VERSION_THREAT,
    FORMAT_VERSION_TRUE,
};
use dtb_probe::internal::index::SliceIndex;
use dtb_probe::internal::material::Material;
use dtb_probe::internal::rules::{BlockedOutcome, Color, Rules};
use dtb_probe::internal::table::{BlockCache, TableError, TableFile};

use crate::bitbase::{kings_wld_memory, solve_kings_wld};
use crate::compress::{add_threats, fill_blocks, Fill};
use crate::finished::{Finished, TableSource};
use crate::packed::pack_codes;
use crate::scratch::{Raw, Scratch, ScratchKind, Spill};
use crate::solve::{
    bitpar_memory, bitpar_move_list_fits, bitpar_supports, bitpar_work, group_too_large,
    solve_memory, solve_memory_wld, solve_slice, solve_slice_bitpar_wld_in, solve_slice_dtc,
    solve_slice_grouped_wld_in, stored_codes, BitparHow, MappedResults, SolvedSlice, SolvedWld,
};
use crate::store::{Codes, Layered, Store};
use crate::words::Words;
use crate::write::{write_packed_wld, write_table, CompressionParams, TableData, WriteError};

mod plan;

pub use crate::values::Values;
use plan::list;
pub use plan::{parse_size, size_words, wld_results_bytes, Action, Forecast, Plan, WldSolver};

/// Most pieces a build may ask for: the index and files support up to 9 a side, the solver is
/// designed for 8 pieces in all.
pub const MAX_PIECES: u32 = 8;
/// Most pieces a forecast may ask for (`dtb plan --emit json`): the slice graph, sizes and
/// forecasts of sets dtb does not build yet (English 2-9, 2-10), for sizing a cluster.
pub const FORECAST_MAX_PIECES: u32 = 10;
/// Positions per block in WLD files, by default (16 KiB a block decompressed; another with
/// [`Plan::with_wld_block_len`]).
pub const WLD_BLOCK_LEN: u32 = 1 << 16;
/// Positions per block in DTW and DTC files, by default (16 KiB a block decompressed for
/// 8-bit DTW; another with [`Plan::with_distance_block_len`]).
pub const DTW_BLOCK_LEN: u32 = 1 << 14;
/// zstd settings of WLD and DTC files (and of DTW files given one setting for all,
/// [`Plan::with_zstd`]): level 15 (English 2-5 measured: level 15 writes in
/// about half the time of 19 for 0.4% more WLD bytes; level 9 is 9% larger), with the
/// optimal parser of `btopt` instead of `btultra` (level 15's for blocks of 16 KiB or less),
/// search log 2, target length 999 and matches of at least 5 bytes. English 2-6 WLD blocks
/// (`examples/zstd_lab.rs`, session 5): search log 3 and target length 999 2.3x faster to
/// compress than plain level 15 for 1.0% more bytes. English 8-piece blocks (0404, 0413,
/// 0422, session 46): search log 2 and minimum match 5 a further 1.29x (76.6 s against
/// 99.0 s on two threads) for 0.48% more bytes; at 8 pieces zstd is about a quarter of a
/// build, so this is about 6% of English 2-8.
pub const ZSTD: CompressionParams = CompressionParams {
    strategy: Some(7),
    search_log: Some(2),
    target_length: Some(999),
    min_match: Some(5),
    ..CompressionParams::level(15)
};
/// zstd settings of DTW files by default: level 15's optimal parser as for
/// WLD files ([`ZSTD`]), with search log 2 and target length 32. English 2-6 DTW blocks
/// (`examples/zstd_lab.rs --dtw`, session 41): 1.33x faster to compress than [`ZSTD`] (64.4
/// s against 86.0 s on two threads) for 1.07% more bytes; plain level 9 2.5x for 6.0% more.
/// In English 2-6 full builds (the same binary, alternated): DTW writing 78.0 / 77.5 s against
/// 100.5 / 100.2 s. DTC files (16-bit codes, not measured with it) keep [`ZSTD`].
pub const DTW_ZSTD: CompressionParams = CompressionParams {
    strategy: Some(7),
    search_log: Some(2),
    target_length: Some(32),
    ..CompressionParams::level(15)
};
/// Memory a build takes beside the solver's data and the store: the program, compression
/// contexts, files being written and read back, and heap the allocator keeps after it is
/// freed. English 2-5 full build: peak resident 225 MiB, 51 MiB above the solver's estimate.
pub const OVERHEAD_BYTES: u64 = 64 << 20;
/// A slice of at least this many positions (both sides to move) that a spilling WLD-only
/// build solves keeps its outcomes in scratch files and records its finished rounds, so
/// that a run stopped part-way resumes it there ([`Plan::results_on_disk`]): about two
/// minutes of solving at the measured 4-8 M positions a second a core.
pub const CHECKPOINT_POSITIONS: u64 = 1 << 30;
/// The least time between two records of such a slice's finished rounds: each record
/// flushes the slice's scratch files to disk.
pub const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_secs(60);
/// Extension of a slice's values file ([`Plan::values_path`]): `english-1212.values` beside
/// `english-1212.wld`.
pub const VALUES_EXTENSION: &str = "values";
/// zstd settings of values files: written once and read by a few jobs, so fast to write
/// rather than small.
pub const VALUES_ZSTD: CompressionParams = CompressionParams::level(3);
/// Name of the lock file that keeps two builds out of one directory.
pub const LOCK_FILE: &str = ".dtb-gen.lock";

/// Why a build stopped.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("--pieces {0}: must be between 2 and {MAX_PIECES}")]
    Pieces(u32),
    #[error("--block-len {0}: a WLD block holds a multiple of 64 positions, from 64 to {max}", max = dtb_probe::internal::format::MAX_BLOCK_LEN)]
    BlockLen(u32),
    #[error("--distance-block-len {0}: a DTW or DTC block holds a multiple of 64 positions, from 64 to {max}", max = dtb_probe::internal::format::MAX_BLOCK_LEN)]
    DistanceBlockLen(u32),
    #[error(
        "--pieces {0}: a forecast takes 2 to {FORECAST_MAX_PIECES} pieces (a build, 2 to {MAX_PIECES})"
    )]
    ForecastPieces(u32),
    #[error("--out {}: {} is in the way: it exists and is not a directory", .path.display(), .file.display())]
    OutNotDirectory {
        path: PathBuf,
        file: PathBuf,
        /// What the file system says to making the directory (nothing is made: a file is in
        /// the way). Not the error's source: the message says it in words.
        io: std::io::Error,
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
    #[error("reading back finished slice {material} from its values file (remove {}, and the slice is read from its table instead)", path.display())]
    LoadValues {
        material: Material,
        path: PathBuf,
        source: dtb_probe::internal::table::TableError,
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
    /// The output directory holds a DTC file under another count profile (the message
    /// names it and both profiles); nothing is written.
    #[error("{0}")]
    OtherProfile(String),
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
    /// Wall seconds of the solve alone (a slice resumed mid-way: with the earlier runs'
    /// part).
    pub solve_seconds: f64,
    /// Rounds of the solve taken over from a run stopped part-way (0: solved in one run).
    pub resumed_rounds: usize,
    /// Wall seconds writing (compressing, checking, syncing) the DTW and the WLD file; the
    /// WLD file's include finding its threat positions (`threat_seconds`).
    pub write_seconds: [f64; 2],
    /// Wall seconds finding the threat positions of a version 3 WLD file (0 otherwise).
    pub threat_seconds: f64,
    /// Threat positions stored as "don't care" (version 3 WLD file; 0 otherwise).
    pub threats: u64,
    pub wld_bytes: u64,
    pub dtw_bytes: u64,
    /// Bytes of the slice's values file (`--keep-values`; 0 if none was written), and the
    /// wall seconds writing it (inside `seconds`, not in `write_seconds`).
    pub values_bytes: u64,
    pub values_seconds: f64,
    /// Wins, losses, draws over the stored positions.
    pub counts: [u64; 3],
    pub max_plies: u16,
    /// Positions a block of the slice's distance (DTW or DTC) file and of its WLD file, as
    /// they are on disk (0 where the build has no such file): the plan's lengths for a file
    /// written now, the file's own for one found finished (a build resumed with another
    /// `--block-len` keeps those).
    pub block_lens: [u32; 2],
    /// True when the slice was already finished on disk and only loaded.
    pub skipped: bool,
}

/// What a build reports as it goes; the CLI draws progress bars from it.
pub trait Observer: Sync {
    /// Before the first slice: the work units of every slice this run will solve, for an
    /// overall rate and ETA: a slice's units are its solver's cost ([`Plan::work`]; four a
    /// position in a build with distances).
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

/// What this process has used so far (Linux; `None` elsewhere): CPU seconds, user and
/// system, of every thread, and major page faults (pages read from disk on first touch: the
/// mapped scratch files of a build that spills). From `/proc/self/stat` (proc(5): fields 12,
/// `majflt`, and 14-15, `utime` and `stime`, in clock ticks of 1/100 s, the kernel's
/// `USER_HZ` on every Linux architecture).
pub fn process_usage() -> Option<ProcessUsage> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Field 2, the command's name, is in parentheses and may hold spaces or parentheses:
    // the fields are counted from after its last `)`, where field 3 is.
    let fields: Vec<&str> = s.get(s.rfind(')')? + 1..)?.split_whitespace().collect();
    let field = |k: usize| -> Option<u64> { fields.get(k - 3)?.parse().ok() };
    Some(ProcessUsage {
        cpu_seconds: (field(14)? + field(15)?) as f64 / 100.0,
        major_page_faults: field(12)?,
    })
}

/// [`process_usage`]'s figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProcessUsage {
    /// CPU seconds, user and system, of every thread.
    pub cpu_seconds: f64,
    /// Pages read from disk when touched.
    pub major_page_faults: u64,
}

impl ProcessUsage {
    /// What was used between `earlier` and these figures.
    pub fn since(self, earlier: ProcessUsage) -> ProcessUsage {
        ProcessUsage {
            cpu_seconds: (self.cpu_seconds - earlier.cpu_seconds).max(0.0),
            major_page_faults: self
                .major_page_faults
                .saturating_sub(earlier.major_page_faults),
        }
    }
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
    /// A whole DTC file of this slice under another count profile (why): a build stops
    /// rather than write over it ([`BuildError::OtherProfile`]).
    OtherProfile(String),
}

/// Whether the files of slice `m` are finished: each kind the plan writes exists, opens,
/// matches the plan and passes its payload checksum. Nothing is decompressed: the writer
/// compared every block with the values before the file got its name, and every block
/// read later is checked again (its checksum, length and codes).
fn on_disk(plan: &Plan, m: Material) -> OnDisk {
    let cache = std::sync::Arc::new(BlockCache::new(1 << 20));
    for kind in plan.kinds() {
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
        if kind == ValueKind::Dtc && t.header().count_code != plan.count.encode() {
            let theirs = CountProfile::decode(&t.header().count_code)
                .map_or_else(|| "an unknown one".to_string(), |p| p.describe());
            return OnDisk::OtherProfile(format!(
                "{}: its DTC values are under another count profile ({theirs}) than this \
                 build's ({}); a directory holds the DTC files of one profile: build into \
                 another --out, or remove its .dtc files first",
                path.display(),
                plan.count.describe()
            ));
        }
        if let Err(e) = t.verify_checksum() {
            return OnDisk::Unusable(dtb_probe::report(&e));
        }
    }
    OnDisk::Finished
}

/// Per side, the cursed wins and blessed losses among a DTC slice's true values (both sides
/// counted, as the header's win/loss/draw counts are).
fn cursed_counts(count: &CountProfile, s: &SolvedSlice) -> [[u64; 2]; 2] {
    use dtb_probe::Category;
    use rayon::prelude::*;
    let m = s.material;
    s.values.each_ref().map(|v| {
        v.par_chunks(1 << 16)
            .map(|chunk| {
                chunk.iter().fold([0u64; 2], |mut a, &c| {
                    match count.category(&m, c) {
                        Category::CursedWin => a[0] += 1,
                        Category::BlessedLoss => a[1] += 1,
                        _ => {}
                    }
                    a
                })
            })
            .reduce(|| [0; 2], |a, b| [a[0] + b[0], a[1] + b[1]])
    })
}

/// The bytes and block length of slice `m`'s WLD file if it is there whole (opens, matches
/// the plan's rules, passes its payload checksum), in format version 1 as a full build
/// writes it.
fn wld_kept(plan: &Plan, m: Material) -> Option<(u64, u32)> {
    let t = TableFile::open(
        &plan.path(m, ValueKind::Wld),
        std::sync::Arc::new(BlockCache::new(0)),
    )
    .ok()?;
    let h = t.header();
    (h.mismatch(&plan.rules, m, ValueKind::Wld).is_none()
        && h.version == FORMAT_VERSION
        && t.verify_checksum().is_ok())
    .then(|| (t.compressed_len(), h.block_len))
}

/// Positions a block of the table file at `path` (0 where it cannot be opened).
fn file_block_len(path: &Path) -> u32 {
    TableFile::open(path, std::sync::Arc::new(BlockCache::new(0)))
        .map_or(0, |t| t.header().block_len)
}

fn header(plan: &Plan, s: &SolvedSlice, kind: ValueKind) -> Header {
    header_of(plan, s.material, kind, s.counts, s.max_plies)
}

/// The header of slice `m`'s file of `kind`, with its counts and longest distance (recorded
/// only by builds that solve distances); the stored sides: White to move alone for a
/// colour-symmetric slice.
fn header_of(
    plan: &Plan,
    m: Material,
    kind: ValueKind,
    counts: [[u64; 3]; 2],
    max_plies: u16,
) -> Header {
    let size = SliceIndex::new(m, plan.rules.geometry()).size();
    let sides = if m == m.mirror() { 1 } else { 3 };
    // Per kind: the format version, the bits a value and the positions a block. Flagged
    // codes (a win in an even number of plies, a loss in an odd one) arise only under
    // `blocked = majority`: its DTW files are format version 2, 16-bit (docs/FORMAT.md).
    let (version, value_width, block_len) = match kind {
        ValueKind::Wld => (FORMAT_VERSION, 2, plan.wld_block_len),
        ValueKind::Dtw if plan.rules.blocked == BlockedOutcome::Majority => {
            (FORMAT_VERSION_FLIP, 16, plan.distance_block_len)
        }
        ValueKind::Dtw if max_plies < u16::from(u8::MAX) => {
            (FORMAT_VERSION, 8, plan.distance_block_len)
        }
        ValueKind::Dtw => (FORMAT_VERSION, 16, plan.distance_block_len),
        // A conversion into a won position is a loss in one ply: flagged codes.
        ValueKind::Dtc => (FORMAT_VERSION_FLIP, 16, plan.distance_block_len),
    };
    let count_code = if kind == ValueKind::Dtc {
        plan.count.encode()
    } else {
        [0; 16]
    };
    Header {
        version,
        kind,
        value_width,
        variant: plan.rules.name.to_string(),
        rules_code: plan.rules.encode(),
        material: m.counts(),
        sides,
        positions_per_side: size,
        block_len,
        block_count: 0,
        counts,
        // A WLD file states the longest distance to the end of the game, which only a
        // DTW build knows.
        max_plies: match (kind, plan.values.distance()) {
            (ValueKind::Wld, Some(ValueKind::Dtw)) | (ValueKind::Dtw | ValueKind::Dtc, _) => {
                max_plies
            }
            _ => 0,
        },
        count_code,
        cursed: [[0; 2]; 2],
        payload_crc: 0,
    }
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
/// loaded back from its table file, for as long as it is held (a look-up of one of its
/// capture or threat positions searches one move on); one loaded from its values file reads
/// nothing.
struct Readers {
    /// `read[j]`: some slice solved or loaded in this run reads slice `j`.
    read: Vec<bool>,
    /// `drop_before[i]`: the slices whose last reader comes just before slice `i`: they
    /// leave the store before slice `i` starts.
    drop_before: Vec<Vec<usize>>,
}

impl Readers {
    /// `slices` in solve order, `done[i]`: slice `i` is finished on disk; `whole[i]`: and
    /// it loads with every position's true value (from its values file), so that it reads
    /// none of its successors.
    fn new(slices: &[Material], done: &[bool], whole: &[bool]) -> Readers {
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
            if runs[i] && !(done[i] && whole[i]) {
                for &j in &reads[i] {
                    read[j] = true;
                }
            }
        }
        // A slice is held until its last reader is solved; a reader loaded from its file
        // looks its capture and threat positions up through it for as long as it is held
        // itself (`Store::value`), so a slice it reads stays as long. Readers come later in
        // the order: backwards, a reader's own `last` is final when its reads are marked.
        let mut last: Vec<Option<usize>> = vec![None; n];
        for i in (0..n).rev() {
            if runs[i] && !(done[i] && whole[i]) {
                let until = if done[i] { last[i] } else { Some(i) };
                for &j in &reads[i] {
                    last[j] = last[j].max(until);
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
    // A build refused before any work leaves no directory it made behind.
    let made = first_missing(&plan.out);
    let locks = lock_output(plan)?;
    let checked = finished_on_disk(plan, obs).and_then(|done| {
        check_before_work(plan, &done)?;
        Ok(done)
    });
    let done = match checked {
        Ok(done) => done,
        Err(e) => {
            // Removed while still held, so no other run takes the lock in between.
            if let Some(top) = made {
                unmake_output(plan, &top);
            }
            drop(locks);
            return Err(e);
        }
    };
    let readers = Readers::new(&plan.slices, &done, &plan.whole(&done));
    let threads = rayon::current_num_threads();
    obs.build_start(
        plan.slices
            .iter()
            .zip(&done)
            .filter(|(_, &d)| !d)
            .map(|(&m, _)| plan.work(m, threads))
            .sum(),
    );
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
    if plan.values.distance() == Some(ValueKind::Dtc) {
        store = store.with_count(plan.count);
    }
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
            if !plan.distances() {
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
                obs.slice_start(i, total, m, plan.work(m, threads));
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
        let _ = std::fs::remove_file(slice_lock_path(plan, m));
    }
    drop(locks);
    Ok(all)
}

/// The outermost folder of `dir` (itself, or a parent) that does not exist yet: what
/// `create_dir_all` will make.
fn first_missing(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .last()
        .map(Path::to_path_buf)
}

/// Removes the output directory this run created (up to `top`, the outermost folder it
/// made), with the lock files it put there, when it stops before any work; a folder that
/// holds anything else stays (another job may have written there).
fn unmake_output(plan: &Plan, top: &Path) {
    let _ = std::fs::remove_file(plan.out.join(LOCK_FILE));
    if let Some(m) = plan.single {
        let _ = std::fs::remove_file(slice_lock_path(plan, m));
    }
    for dir in plan.out.ancestors() {
        if std::fs::remove_dir(dir).is_err() || dir == top {
            break;
        }
    }
}

/// The lock file of a job of one slice, slice `m`.
fn slice_lock_path(plan: &Plan, m: Material) -> PathBuf {
    plan.out.join(format!(".dtb-gen-{m}.lock"))
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
                let path = plan.path(m, kind);
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
///
/// # Errors
/// [`BuildError::OtherProfile`] for a DTC file under another count profile: a build never
/// writes over tables it did not make.
fn finished_on_disk(plan: &Plan, obs: &dyn Observer) -> Result<Vec<bool>, BuildError> {
    use rayon::prelude::*;
    // Checked on all worker threads (a restart of a big build reads gigabytes here); told
    // to `obs` in plan order.
    let states: Vec<OnDisk> = plan.slices.par_iter().map(|&m| on_disk(plan, m)).collect();
    if let Some(OnDisk::OtherProfile(why)) =
        states.iter().find(|s| matches!(s, OnDisk::OtherProfile(_)))
    {
        return Err(BuildError::OtherProfile(why.clone()));
    }
    Ok(plan
        .slices
        .iter()
        .zip(states)
        .map(|(&m, state)| {
            if let OnDisk::Unusable(why) = &state {
                obs.unusable(m, why);
            }
            state == OnDisk::Finished
        })
        .collect())
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
    if let Some((&m, _)) = plan.slices.iter().zip(done).find(|(&m, &d)| {
        !d && group_too_large(&plan.rules, m) && (plan.distances() || m.men() != 0)
    }) {
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
        // And the arrays and record of the slice this run solves first, which a stopped
        // run may have left part-way (taken over if its record matches, see
        // `solve::MappedResults::record`).
        let first = plan
            .slices
            .iter()
            .zip(done)
            .find(|(_, &d)| !d)
            .map(|(&m, _)| m);
        for e in std::fs::read_dir(&scratch).into_iter().flatten().flatten() {
            let solving = first.is_some_and(|m| {
                MappedResults::is_solving_file(&e.file_name().to_string_lossy(), m)
            });
            if !keep.contains(&e.path()) && !solving {
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
    if held && !reused {
        let load = |e: TableError| BuildError::Load {
            material: m,
            source: e.into(),
        };
        match plan.values.distance() {
            // Its true values, where the run that solved it kept them (`--keep-values`).
            None if plan.values_on_disk(m) => {
                let path = plan.values_path(m);
                store
                    .load_values_file(m, &path)
                    .map_err(|source| BuildError::LoadValues {
                        material: m,
                        path,
                        source,
                    })?;
            }
            None => store
                .load_wld_file(m, &plan.path(m, ValueKind::Wld))
                .map_err(load)?,
            Some(ValueKind::Dtc) => store
                .load_dtc_file(m, &plan.path(m, ValueKind::Dtc))
                .map_err(load)?,
            Some(k) => store.load_dtw_file(m, &plan.path(m, k)).map_err(load)?,
        }
    } // else finished, and nothing left to solve reads it (or mapped again)
    if let (Some(sp), true, false) = (spill, held, reused) {
        spill_slice(plan, store, m, sp)?;
    }
    let t = TableFile::open(
        &plan.path(m, ValueKind::Wld),
        std::sync::Arc::new(BlockCache::new(1 << 16)),
    );
    let (counts, wld_bytes, max_plies, wld_block_len) = match t {
        Ok(t) => {
            let h = t.header();
            let counts = both_sides(h.counts, symmetric);
            (counts, t.compressed_len(), h.max_plies, h.block_len)
        }
        Err(_) => ([0; 3], 0, 0, 0),
    };
    let dtw_bytes = plan
        .values
        .distance()
        .and_then(|k| std::fs::metadata(plan.path(m, k)).ok())
        .map_or(0, |md| md.len());
    let distance_block_len = plan
        .values
        .distance()
        .map_or(0, |k| file_block_len(&plan.path(m, k)));
    Ok(SliceStats {
        material: m,
        positions,
        solved: 0,
        seconds: 0.0,
        solve_seconds: 0.0,
        resumed_rounds: 0,
        write_seconds: [0.0; 2],
        threat_seconds: 0.0,
        threats: 0,
        wld_bytes,
        dtw_bytes,
        values_bytes: 0,
        values_seconds: 0.0,
        counts,
        max_plies,
        block_lens: [distance_block_len, wld_block_len],
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
        - if spilling && !plan.distances() {
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
    let kind = plan.values.distance().unwrap_or(ValueKind::Dtw);
    let progress = |n| obs.progress(n);
    let solved = match kind {
        ValueKind::Dtc => solve_slice_dtc(&plan.rules, &plan.count, &*store, m, &progress),
        _ => solve_slice(&plan.rules, &*store, m, &progress),
    }
    .map_err(|e| BuildError::Solve {
        material: m,
        source: e.into(),
    })?;
    let solve_seconds = t0.elapsed().as_secs_f64();
    let mut dtw_header = header(plan, &solved, kind);
    if kind == ValueKind::Dtc {
        dtw_header.cursed = cursed_counts(&plan.count, &solved);
    }
    let (c, max_plies) = (solved.counts, solved.max_plies);
    // The store keeps the true values (capture positions included); the files get "don't
    // care" in capture positions: the DTW file the value before (`stored_codes`), the WLD
    // file as every build fills its WLD files (`write_wld`).
    let SolvedSlice {
        values: [c0, mut c1],
        capture: [mut cap0, mut cap1],
        ..
    } = solved;
    if symmetric {
        c1 = Vec::new();
    }
    let t1 = Instant::now();
    let dtw_bytes = {
        let s0 = stored_codes(&c0, &cap0);
        let s1 = if symmetric {
            Vec::new()
        } else {
            stored_codes(&c1, &cap1)
        };
        write_table(
            &plan.path(m, kind),
            &TableData {
                header: dtw_header,
                sides: sides_of(symmetric, &s0, &s1),
            },
            plan.zstd_for(kind),
        )?
    };
    let dtw_seconds = t1.elapsed().as_secs_f64();
    let (mut w0, mut w1) = (pack_codes(&c0), pack_codes(&c1));
    let mut wld_block_len = plan.wld_block_len;
    let written = match wld_kept(plan, m) {
        // A DTC build into a directory whose WLD files a DTW build wrote keeps them: the
        // outcomes are the same, and the DTW build's header states the longest DTW.
        Some((bytes, block_len)) if kind == ValueKind::Dtc => {
            wld_block_len = block_len;
            WldWritten {
                bytes,
                threats: 0,
                threat_seconds: 0.0,
                seconds: 0.0,
            }
        }
        _ => write_wld(
            plan,
            WldOut {
                material: m,
                outcomes: [&mut w0, &mut w1],
                capture: [&mut cap0, &mut cap1],
                counts: c,
                max_plies,
                threats: None,
            },
        )?,
    };
    drop((w0, w1, cap0, cap1));
    let st = SliceStats {
        material: m,
        positions,
        solved: 2 * size,
        seconds: t0.elapsed().as_secs_f64(),
        solve_seconds,
        resumed_rounds: 0,
        write_seconds: [dtw_seconds, written.seconds],
        threat_seconds: written.threat_seconds,
        threats: written.threats,
        wld_bytes: written.bytes,
        dtw_bytes,
        values_bytes: 0,
        values_seconds: 0.0,
        counts: both_sides(c, symmetric),
        max_plies,
        block_lens: [plan.distance_block_len, wld_block_len],
        skipped: false,
    };
    if read {
        store.insert((m, [Some(c0), (!symmetric).then_some(c1)]));
        if let Some(sp) = spill {
            spill_slice(plan, store, m, sp)?;
        }
    }
    Ok(st)
}

/// One slice's outcomes on their way to its WLD file.
struct WldOut<'a> {
    material: Material,
    /// Per side, the true outcomes packed ([`crate::packed`]); their "don't care" positions
    /// are filled here. A colour-symmetric slice stores White to move alone: the second is
    /// not read.
    outcomes: [&'a mut [u64]; 2],
    /// Per side (both, stored or not), one bit a position: the side to move must capture.
    /// Threat positions are added in place when the file is version 3, unless `threats`.
    capture: [&'a mut [u64]; 2],
    /// Where the solver marked the threat positions in `capture` already: how many, per
    /// side ([`SolvedWld::threats`]).
    threats: Option<[u64; 2]>,
    /// Per side: wins, losses, draws.
    counts: [[u64; 3]; 2],
    /// The longest distance in plies (recorded only by builds that solve distances).
    max_plies: u16,
}

/// What writing a WLD file did.
struct WldWritten {
    bytes: u64,
    threats: u64,
    threat_seconds: f64,
    /// The whole write, the threat pass included.
    seconds: f64,
}

/// The one WLD writer of every build: "don't care" positions (capture positions, and in a
/// version 3 file threat positions, [`Plan::writes_threats`]) filled block by block as the
/// plan says ([`Plan::with_fill`]), then the packed blocks compressed and written
/// atomically.
fn write_wld(plan: &Plan, out: WldOut) -> Result<WldWritten, BuildError> {
    let WldOut {
        material: m,
        outcomes,
        capture: [cap0, cap1],
        counts,
        max_plies,
        threats: found,
    } = out;
    let mut outcomes = Vec::from(outcomes);
    if m == m.mirror() {
        outcomes.truncate(1);
    }
    let t0 = Instant::now();
    let size = SliceIndex::new(m, plan.rules.geometry()).size();
    let v3 = plan.writes_threats();
    let mut threats = 0;
    if let (true, Some(t)) = (v3, found) {
        threats = t[0] + if outcomes.len() == 2 { t[1] } else { 0 };
    } else if v3 {
        let ix = SliceIndex::new(m, plan.rules.geometry());
        threats = add_threats(&plan.rules, &ix, Color::White, cap0, cap1);
        if outcomes.len() == 2 {
            threats += add_threats(&plan.rules, &ix, Color::Black, cap1, cap0);
        }
    }
    let threat_seconds = t0.elapsed().as_secs_f64();
    let path = plan.path(m, ValueKind::Wld);
    let block_len = plan.wld_block_len;
    let blocks_per_side = size.div_ceil(u64::from(block_len)) as u32;
    for (k, (v, dc)) in outcomes.iter_mut().zip([&*cap0, &*cap1]).enumerate() {
        // The file numbers the second side's blocks after the first's.
        fill_blocks(v, dc, size, block_len, plan.fill, &plan.zstd).map_err(|(b, source)| {
            WriteError::Compress {
                path: path.clone(),
                block: k as u32 * blocks_per_side + b,
                source,
            }
        })?;
    }
    let mut header = header_of(plan, m, ValueKind::Wld, counts, max_plies);
    if v3 {
        header.version = FORMAT_VERSION_THREAT;
    }
    let sides: Vec<&[u64]> = outcomes.iter().map(|v| &**v).collect();
    let bytes = write_packed_wld(&path, header, &sides, &plan.zstd)?;
    Ok(WldWritten {
        bytes,
        threats,
        threat_seconds,
        seconds: t0.elapsed().as_secs_f64(),
    })
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
    let ext = match plan.values.distance() {
        // DTC values under one profile must not be taken for another's, nor for DTW.
        Some(ValueKind::Dtc) => profile_tag(&plan.count),
        _ => "wld2".to_string(),
    };
    scratch_dir(plan).join(format!("{}-{m}-{side}.{ext}", plan.rules.name))
}

/// `dtc-` and the profile's code in hex: the extension of a DTC build's scratch files.
fn profile_tag(count: &CountProfile) -> String {
    let code = count.encode();
    let hex: String = code[1..12].iter().map(|b| format!("{b:02x}")).collect();
    format!("dtc-{hex}")
}

/// Hold slice `m` of the build directory alone (`.dtb-gen-<slice>.lock`) for a job of one
/// slice.
fn lock_slice(plan: &Plan, m: Material) -> Result<File, BuildError> {
    let path = slice_lock_path(plan, m);
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
    // A scratch file holds true values: a slice read from its file is resolved whole first.
    store.resolve_whole(m).map_err(|e| BuildError::Load {
        material: m,
        source: e.into(),
    })?;
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
    let (kind, len) = if !plan.distances() {
        (ScratchKind::Wld, size.div_ceil(32) * 8)
    } else {
        (ScratchKind::Dtw, 2 * size)
    };
    let sides = if m == m.mirror() { 1 } else { 2 };
    let mut got: [Option<Codes>; 2] = [None, None];
    for (k, slot) in got.iter_mut().enumerate().take(sides) {
        match Scratch::reuse(&scratch_path(plan, m, k), kind, len, spill) {
            Some(c) => *slot = Some(Codes::Mapped(c)),
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
    Scratch::write(raw, &path, spill)
        .map(Codes::Mapped)
        .map_err(|source| {
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
    // The solvers count four units a position; the observer gets the slice's work.
    let size = SliceIndex::new(m, plan.rules.geometry()).size();
    let scaled = Scaled::new(obs, 4 * size, plan.solver_work(m, method));
    let progress = |n| scaled.progress(n);
    match method {
        WldSolver::Bits => solve_kings_wld(&plan.rules, src, m, &progress),
        WldSolver::BitParallel | WldSolver::BitParallelLean => {
            let how = BitparHow {
                threats: plan.writes_threats(),
                lean: method == WldSolver::BitParallelLean,
            };
            solve_slice_bitpar_wld_in(&plan.rules, src, m, how, mapped, &progress)
        }
        WldSolver::Grouped | WldSolver::GroupedSerial => solve_slice_grouped_wld_in(
            &plan.rules,
            src,
            m,
            method == WldSolver::GroupedSerial,
            mapped,
            &progress,
        ),
    }
    .map_err(|e| BuildError::Solve {
        material: m,
        source: e.into(),
    })
}

/// A solver's progress, `raw` units in all, passed on to an observer as `work` units: each
/// report's share, rounded so that the reports add up to `work` exactly.
struct Scaled<'a> {
    obs: &'a dyn Observer,
    raw: u64,
    work: u64,
    done: std::sync::atomic::AtomicU64,
}

impl<'a> Scaled<'a> {
    fn new(obs: &'a dyn Observer, raw: u64, work: u64) -> Scaled<'a> {
        Scaled {
            obs,
            raw: raw.max(1),
            work,
            done: Default::default(),
        }
    }

    fn progress(&self, n: u64) {
        let before = self.done.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        let at = |x: u64| {
            (u128::from(x.min(self.raw)) * u128::from(self.work) / u128::from(self.raw)) as u64
        };
        let units = at(before.saturating_add(n)) - at(before);
        if units > 0 {
            self.obs.progress(units);
        }
    }
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

/// A solved slice's true outcomes as the store keeps them (the sides it stores): in scratch
/// files if the build spills, in memory otherwise.
fn kept_outcomes(
    plan: &Plan,
    m: Material,
    sides: [&[u64]; 2],
    spill: Option<&Spill>,
) -> Result<[Option<Codes>; 2], BuildError> {
    use rayon::prelude::*;
    let mut kept = [None, None];
    let stored = if m == m.mirror() { 1 } else { 2 };
    for (k, words) in sides.into_iter().enumerate().take(stored) {
        kept[k] = Some(match spill {
            Some(sp) => to_scratch(plan, m, k, Raw::Words(words), sp)?,
            // Copied on every thread (a first touch of each page, as `try_filled`).
            None => Codes::Wld(words.par_iter().copied().collect()),
        });
    }
    Ok(kept)
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
    let (method, _) = plan.wld_solver(m, threads);
    obs.slice_start(i, total, m, plan.solver_work(m, method));
    let t0 = Instant::now();
    let dir = scratch_dir(plan);
    let mapped = match spill {
        Some(spill) if plan.results_on_disk(m, threads) => {
            std::fs::create_dir_all(&dir).map_err(|source| BuildError::CreateDir {
                path: dir.clone(),
                source,
            })?;
            Some(MappedResults {
                dir: &dir,
                spill,
                every: plan.checkpoint_every,
            })
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
    // Earlier runs' part of a slice resumed mid-way counts too: the slice's whole solve.
    let solve_seconds = t0.elapsed().as_secs_f64() + solved.earlier_seconds;
    let SolvedWld {
        values: [mut v0, mut v1],
        capture: [cap0, cap1],
        counts: c,
        resumed_rounds,
        threats,
        ..
    } = solved;
    if symmetric {
        v1 = Words::default();
    }
    // The store keeps the true outcomes, and so does the values file; the table gets its
    // capture positions filled.
    let kept = match (keep, spill) {
        (false, _) => None,
        (true, spill) => Some(kept_outcomes(plan, m, [&v0, &v1], spill)?),
    };
    let t1 = Instant::now();
    let values_bytes = if plan.keeps_values() {
        let mut header = header_of(plan, m, ValueKind::Wld, c, 0);
        header.version = FORMAT_VERSION_TRUE;
        let sides: Vec<&[u64]> = if symmetric { vec![&v0] } else { vec![&v0, &v1] };
        write_packed_wld(&plan.values_path(m), header, &sides, &VALUES_ZSTD)?
    } else {
        0
    };
    let values_seconds = t1.elapsed().as_secs_f64();
    let (mut cap0, mut cap1) = (cap0, cap1);
    let written = write_wld(
        plan,
        WldOut {
            material: m,
            outcomes: [&mut v0, &mut v1],
            capture: [&mut cap0, &mut cap1],
            counts: c,
            max_plies: 0,
            threats,
        },
    )?;
    drop((cap0, cap1, v0, v1));
    if let Some(k) = kept {
        store.insert_codes(m, k);
    }
    Ok(SliceStats {
        material: m,
        positions: plan.stored_positions(m),
        solved: 2 * size,
        seconds: t0.elapsed().as_secs_f64(),
        solve_seconds,
        resumed_rounds,
        write_seconds: [0.0, written.seconds],
        threat_seconds: written.threat_seconds,
        threats: written.threats,
        wld_bytes: written.bytes,
        dtw_bytes: 0,
        values_bytes,
        values_seconds,
        counts: both_sides(c, symmetric),
        max_plies: 0,
        block_lens: [0, plan.wld_block_len],
        skipped: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::sync::Mutex;

    /// What a build tells its observer: the build's work, each slice's work, and progress.
    #[derive(Default)]
    struct Tally {
        build: Mutex<u64>,
        /// Per slice: its work announced, and the progress reported while it ran.
        slices: Mutex<Vec<(Material, u64, u64)>>,
    }

    impl Observer for Tally {
        fn build_start(&self, work: u64) {
            *self.build.lock().unwrap() = work;
        }
        fn slice_start(&self, _: usize, _: usize, m: Material, work: u64) {
            self.slices.lock().unwrap().push((m, work, 0));
        }
        fn progress(&self, units: u64) {
            self.slices.lock().unwrap().last_mut().unwrap().2 += units;
        }
    }

    /// The progress a build reports adds up to the work it announced, slice by slice and in
    /// all, with the solvers' work weighted (English 2-4 WLD-only: the bit-parallel solver's
    /// slots, men-only and kings-only slices) and without (2-4 with distances).
    #[test]
    fn progress_adds_up_to_the_work_announced() {
        for values in [Values::WLD, Values::WLD_DTW] {
            let dir = tempfile::tempdir().unwrap();
            let plan = Plan::new(Rules::ENGLISH, 4, dir.path())
                .unwrap()
                .with_values(values);
            let tally = Tally::default();
            run(&plan, &tally).unwrap();
            let slices = tally.slices.into_inner().unwrap();
            assert_eq!(slices.len(), plan.slices.len());
            for &(m, work, done) in &slices {
                assert_eq!(done, work, "{m}");
                assert_eq!(work, plan.work(m, rayon::current_num_threads()), "{m}");
            }
            let all: u64 = slices.iter().map(|s| s.1).sum();
            assert_eq!(*tally.build.lock().unwrap(), all);
        }
    }

    /// A slice's work in a WLD-only build: four units a slot of the bit-parallel solver's
    /// rows, 32 k / (E - K + 1) slots a position for k kings of the innermost colour, K kings
    /// and E squares the men leave (a count that does not go through the solver's layout),
    /// each 0.78 of that with two kings innermost and (0.29 + 1.42 / k) with three or more
    /// (only first copies solved); 36 a position for the men-only slices of the grouped
    /// solver.
    #[test]
    fn work_goes_by_the_slots_of_the_rows() {
        let dir = tempfile::tempdir().unwrap();
        let plan = Plan::new(Rules::ENGLISH, 7, dir.path())
            .unwrap()
            .with_values(Values::WLD)
            .with_memory(20 << 30);
        for (slice, k) in [
            ("2122", 1),
            ("1222", 2),
            ("0313", 3),
            ("1015", 5),
            ("1213", 2),
        ] {
            let m = Material::parse(slice).unwrap();
            let size = SliceIndex::new(m, Rules::ENGLISH.geometry()).size();
            let kings = u64::from(m.white_kings + m.black_kings);
            let empty = 32 - u64::from(m.white_men + m.black_men);
            let slots = 32 * k * size / (empty - kings + 1);
            assert_eq!(slots * (empty - kings + 1), 32 * k * size, "{slice}");
            let hundredths = match k {
                1 => 100,
                2 => 78,
                _ => 29 + 142 / k,
            };
            assert_eq!(plan.work(m, 2), 4 * slots * hundredths / 100, "{slice}");
        }
        let men = Material::parse("3030").unwrap();
        let size = SliceIndex::new(men, Rules::ENGLISH.geometry()).size();
        assert_eq!(plan.work(men, 2), 36 * size);
        // With distances, four a position whatever the slice.
        let full = Plan::new(Rules::ENGLISH, 7, dir.path()).unwrap();
        let m = Material::parse("1222").unwrap();
        let size = SliceIndex::new(m, Rules::ENGLISH.geometry()).size();
        assert_eq!(full.work(m, 2), 4 * size);
    }

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
                // From round 10, some finished slices load from values files.
                let whole: Vec<bool> = (0..n)
                    .map(|i| {
                        seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        done[i] && round >= 10 && seed >> 63 != 0
                    })
                    .collect();
                let r = Readers::new(&slices, &done, &whole);
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
                    if runs && !whole[i] {
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
                    // A slice loaded from its file reads its successors while it is held.
                    for h in &held {
                        let k = slices.iter().position(|x| x == h).expect("in order");
                        if done[k] && !whole[k] {
                            for s in h.successors() {
                                if slices.contains(&s) {
                                    assert!(
                                        held.contains(&s),
                                        "{m}: {h} held, reads {s}, not held"
                                    );
                                }
                            }
                        }
                    }
                    most = most.max(held.iter().map(size).sum());
                }
                // Every slice read by a later one that runs is read: nothing missing ...
                // and a loaded slice is one such (no load that nothing needs).
                for i in 0..n {
                    let needed = (i + 1..n).any(|k| {
                        (!done[k] || r.read[k])
                            && !whole[k]
                            && slices[k].successors().contains(&slices[i])
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
