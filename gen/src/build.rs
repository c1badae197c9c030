//! A whole build: plan the slices of a variant up to N pieces, solve each in dependency order,
//! write its WLD and DTW files, and resume a build that was interrupted.

use std::fs::File;
use std::path::PathBuf;
use std::time::Instant;

use dtb_probe::format::{table_file_name, wld_code, Header, ValueKind};
use dtb_probe::index::SliceIndex;
use dtb_probe::material::Material;
use dtb_probe::rules::Rules;
use dtb_probe::table::{BlockCache, TableFile};

use crate::solve::{solve_memory, solve_slice, stored_codes, SolvedSlice};
use crate::store::{Codes, Store};
use crate::write::{write_table, CompressionParams, TableData, WriteError};

/// Most pieces a build may ask for: the index and files support up to 9 a side, the solver is
/// designed for 8 pieces in all.
pub const MAX_PIECES: u32 = 8;
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
    #[error("cannot create output directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} is in use by another dtb gen (lock file {LOCK_FILE}); wait for it to finish")]
    Locked(PathBuf),
    #[error("cannot lock {path}: {source}")]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("slice {material} needs about {needed_mib} MiB to solve but only {available_mib} MiB is available")]
    Memory {
        material: Material,
        needed_mib: u64,
        available_mib: u64,
    },
    #[error("solving slice {material}: {message}")]
    Solve { material: Material, message: String },
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("reading back finished slice {material}: {message}")]
    Load { material: Material, message: String },
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
}

impl Plan {
    /// Check the arguments and list the slices.
    ///
    /// # Errors
    /// [`BuildError::Pieces`] for a piece count outside 2..=[`MAX_PIECES`].
    pub fn new(rules: Rules, pieces: u32, out: impl Into<PathBuf>) -> Result<Plan, BuildError> {
        if !(2..=MAX_PIECES).contains(&pieces) {
            return Err(BuildError::Pieces(pieces));
        }
        Ok(Plan {
            rules,
            pieces,
            out: out.into(),
            slices: Material::solve_order(pieces, rules.max_pieces_per_side()),
            zstd: ZSTD,
            wld_only: false,
        })
    }

    /// Positions (side to move counted, both sides) of slice `m` as stored: both sides, or
    /// White only for a colour-symmetric slice.
    pub fn stored_positions(&self, m: Material) -> u64 {
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
        let kept = if self.wld_only {
            2 * size / 4
        } else {
            2 * size * 2
        };
        OVERHEAD_BYTES + solve_memory(&self.rules, m, threads) + kept
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
        let name = table_file_name(
            self.rules.name,
            [m.white_men, m.white_kings, m.black_men, m.black_kings],
            kind,
        )
        .unwrap_or_else(|| format!("{}-{m}.{}", self.rules.name, kind.extension()));
        self.out.join(name)
    }
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

/// Remove the temporary files an interrupted writer left (`.<name>.<random>.tmp`); only
/// called while holding the directory lock, so no writer of ours is using them.
fn remove_stale_temporaries(dir: &std::path::Path) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') && name.ends_with(".tmp") {
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
            Err(e) => return OnDisk::Unusable(e.to_string()),
        };
        let h = t.header();
        if h.variant != plan.rules.name
            || h.rules_code != plan.rules.encode()
            || h.material != [m.white_men, m.white_kings, m.black_men, m.black_kings]
            || h.kind != kind
            || h.positions_per_side != SliceIndex::new(m, plan.rules.geometry()).size()
        {
            return OnDisk::Unusable(format!(
                "{}: its header is not this slice's under these rules",
                path.display()
            ));
        }
        if let Err(e) = t.verify_payload() {
            return OnDisk::Unusable(e.to_string());
        }
    }
    OnDisk::Finished
}

fn header(plan: &Plan, s: &SolvedSlice, kind: ValueKind, sides: u8) -> Header {
    let m = s.material;
    let dtw_width = if s.max_plies < u8::MAX as u16 { 8 } else { 16 };
    Header {
        kind,
        value_width: if kind == ValueKind::Wld { 2 } else { dtw_width },
        variant: plan.rules.name.to_string(),
        rules_code: plan.rules.encode(),
        material: [m.white_men, m.white_kings, m.black_men, m.black_kings],
        sides,
        positions_per_side: s.size,
        block_len: if kind == ValueKind::Wld {
            WLD_BLOCK_LEN
        } else {
            DTW_BLOCK_LEN
        },
        block_count: 0,
        counts: s.counts,
        max_plies: if plan.wld_only { 0 } else { s.max_plies },
        payload_crc: 0,
    }
}

/// DTW codes to WLD file codes, in place. A capture position (bit set in `capture`) is
/// "don't care"; it gets the most common value among the non-capture positions of its WLD
/// block (English 2-5: 3.7% fewer bytes than repeating the previous value, the choice kept
/// for DTW files; `examples/compress_lab.rs`).
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
                *c = wld_code(*c);
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
    std::fs::create_dir_all(&plan.out).map_err(|source| BuildError::CreateDir {
        path: plan.out.clone(),
        source,
    })?;
    let lock_path = plan.out.join(LOCK_FILE);
    let lock = File::create(&lock_path).map_err(|source| BuildError::Lock {
        path: lock_path.clone(),
        source,
    })?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Err(BuildError::Locked(plan.out.clone())),
        Err(std::fs::TryLockError::Error(source)) => {
            return Err(BuildError::Lock {
                path: lock_path,
                source,
            })
        }
    }
    remove_stale_temporaries(&plan.out);
    let mut done = Vec::with_capacity(plan.slices.len());
    for &m in &plan.slices {
        let state = on_disk(plan, m);
        if let OnDisk::Unusable(why) = &state {
            obs.unusable(m, why);
        }
        done.push(state == OnDisk::Finished);
    }
    let readers = Readers::new(&plan.slices, &done);
    let mut store = Store::new(plan.rules);
    let mut all = Vec::new();
    let total = plan.slices.len();
    for (i, &m) in plan.slices.iter().enumerate() {
        let symmetric = m == m.mirror();
        let positions = plan.stored_positions(m);
        let size = SliceIndex::new(m, plan.rules.geometry()).size();
        // Slices no later slice reads leave the store (they are on disk): what a build
        // holds is the slices its remaining slices lead to, not all it has solved.
        for &j in &readers.drop_before[i] {
            store.remove(plan.slices[j]);
        }
        if done[i] {
            obs.slice_start(i, total, m, 0);
            let loaded = if !readers.read[i] {
                Ok(()) // finished, and nothing left to solve reads it
            } else if plan.wld_only {
                store.load_wld_file(m, &plan.path(m, ValueKind::Wld))
            } else {
                store.load_dtw_file(m, &plan.path(m, ValueKind::Dtw))
            };
            loaded.map_err(|e| BuildError::Load {
                material: m,
                message: e.to_string(),
            })?;
            let t = TableFile::open(
                &plan.path(m, ValueKind::Wld),
                std::sync::Arc::new(BlockCache::new(1 << 16)),
            );
            let (counts, wld_bytes, max_plies) = match t {
                Ok(t) => {
                    let c = t.header().counts;
                    let counts = if symmetric {
                        c[0]
                    } else {
                        [c[0][0] + c[1][0], c[0][1] + c[1][1], c[0][2] + c[1][2]]
                    };
                    (counts, t.compressed_len(), t.header().max_plies)
                }
                Err(_) => ([0; 3], 0, 0),
            };
            let dtw_bytes = std::fs::metadata(plan.path(m, ValueKind::Dtw))
                .map(|md| md.len())
                .unwrap_or(0);
            let st = SliceStats {
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
            };
            obs.slice_done(&st);
            all.push(st);
            continue;
        }
        let needed = plan.solve_bytes(m, rayon::current_num_threads());
        if let Some(avail) = available_memory() {
            if needed > avail {
                return Err(BuildError::Memory {
                    material: m,
                    needed_mib: needed >> 20,
                    available_mib: avail >> 20,
                });
            }
        }
        obs.slice_start(i, total, m, 4 * size);
        let t0 = Instant::now();
        let solved = solve_slice(&plan.rules, &store, m, &|n| obs.progress(n)).map_err(|e| {
            BuildError::Solve {
                material: m,
                message: e.to_string(),
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
            values: [mut c0, mut c1],
            capture: [cap0, cap1],
            ..
        } = solved;
        if symmetric {
            c1 = Vec::new();
        }
        let kept = (plan.wld_only && readers.read[i]).then(|| {
            [
                Some(Codes::wld_of_codes(&c0)),
                (!symmetric).then(|| Codes::wld_of_codes(&c1)),
            ]
        });
        let mut copy = (!plan.wld_only).then(|| {
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
        let (w0, w1) = match &mut copy {
            Some((a, b)) => (a, b),
            None => (&mut c0, &mut c1),
        };
        to_wld_codes(w0, &cap0);
        to_wld_codes(w1, &cap1);
        let wld_bytes = write_table(
            &plan.path(m, ValueKind::Wld),
            &TableData {
                header: wld_header,
                sides: sides_of(symmetric, w0, w1),
            },
            &plan.zstd,
        )?;
        drop(copy);
        drop((cap0, cap1));
        let counts = if symmetric {
            c[0]
        } else {
            [c[0][0] + c[1][0], c[0][1] + c[1][1], c[0][2] + c[1][2]]
        };
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
        match kept {
            _ if !readers.read[i] => {}
            Some(sides) => {
                drop((c0, c1));
                store.insert_codes(m, sides);
            }
            None => store.insert(m, [Some(c0), (!symmetric).then_some(c1)]),
        }
        obs.slice_done(&st);
        all.push(st);
    }
    drop(lock);
    Ok(all)
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
