//! The plan of a build: the slices to solve and their order, what each needs and may keep
//! ([`Plan`] with its per-slice [`Forecast`] against the memory budget and the disk), checked
//! before any work; the memory budget's defaults and sizes.

use super::*;

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
                Err(io) => Err(BuildError::OutNotDirectory {
                    path: out.to_path_buf(),
                    file: at.to_path_buf(),
                    io,
                }),
            };
        }
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p,
            _ => return Ok(()),
        }
    }
}

pub(super) fn list(ms: &[Material]) -> String {
    ms.iter()
        .map(Material::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A validated build: everything is checked before any work starts. Made by [`Plan::new`],
/// [`Plan::for_forecast`] or [`Plan::for_slice`], its options set by the `with_` methods; its
/// fields are read through the methods of the same names.
#[derive(Clone, Debug)]
pub struct Plan {
    pub(crate) rules: Rules,
    pub(crate) pieces: u32,
    pub(crate) out: PathBuf,
    /// Slices in solve order.
    pub(crate) slices: Vec<Material>,
    /// zstd settings of the WLD and DTC files ([`ZSTD`] by default).
    pub(crate) zstd: CompressionParams,
    /// zstd settings of the DTW files ([`DTW_ZSTD`] by default).
    pub(crate) dtw_zstd: CompressionParams,
    /// How WLD files fill their "don't care" positions (default [`Fill::Major`]).
    pub(crate) fill: Fill,
    /// Positions a block of the WLD files and values files ([`WLD_BLOCK_LEN`] by default).
    pub(crate) wld_block_len: u32,
    /// Positions a block of the distance files, DTW and DTC ([`DTW_BLOCK_LEN`] by default).
    pub(crate) distance_block_len: u32,
    /// The value kinds written (default WLD and DTW). Without distances
    /// ([`Values::solves_distances`]) solved slices are kept as outcomes (2 bits a position
    /// instead of 16): what a build of 7 or 8 pieces needs to fit in memory. Distances
    /// inside a slice then depend on nominal distances of its exits, so the WLD headers
    /// record no longest distance (0).
    pub(crate) values: Values,
    /// The count profile of DTC files ([`Values::WLD_DTC`]; by default the rules' preset's,
    /// [`CountProfile::for_rules`]), written in their headers.
    pub(crate) count: CountProfile,
    /// Memory budget, bytes: the build plans within it (`dtb gen --memory`; by default
    /// `default_budget`). A WLD-only build whose finished slices do not fit beside the
    /// slice being solved keeps them in scratch files mapped from disk; solving a slice whose
    /// own working set does not fit stops the build before it starts, naming the slice.
    pub(crate) memory: u64,
    /// A job of one slice (`dtb gen --slice` without `--with-deps`): the slice. The other
    /// slices of the plan must be finished; the job shares the directory with other jobs.
    pub(crate) single: Option<Material>,
    /// Bytes of scratch files the build may keep on disk (`None`: no limit). A WLD-only
    /// build whose finished slices would pass it reads the largest of them from their
    /// compressed table files instead ([`Plan::from_tables`]). The command line sets it
    /// to the free space of the output directory's file system, less a margin.
    pub(crate) scratch_limit: Option<u64>,
    /// A slice of at least this many positions (both sides to move) that a spilling
    /// WLD-only build solves resumes mid-way ([`Plan::results_on_disk`]; default
    /// [`CHECKPOINT_POSITIONS`]).
    pub(crate) checkpoint_positions: u64,
    /// The least time between two records of such a slice's finished rounds (default
    /// 60 s; zero: after every round).
    pub(crate) checkpoint_every: std::time::Duration,
    /// A WLD-only build under compulsory capture writes its WLD files in format version 3
    /// (threat positions "don't care", docs/FORMAT.md), as `dtb repack` would make them from
    /// version 1 ones; `false` writes version 1 (`dtb gen --format-version 1`). Full builds
    /// and rule sets without compulsory capture always write version 1 WLD files.
    pub(crate) threats: bool,
    /// A WLD-only build also writes each slice's true values, every position's, in a file
    /// beside its table ([`Plan::values_path`], format version 4): what a later one-slice
    /// job reads instead of the table, so that it searches no "don't care" position of its
    /// inputs and loads none of the slices they lead to (`dtb gen --keep-values`).
    pub(crate) keep_values: bool,
}

impl Plan {
    /// The rule set (under its canonical name).
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The largest number of pieces built.
    pub fn pieces(&self) -> u32 {
        self.pieces
    }

    /// The output directory.
    pub fn out(&self) -> &std::path::Path {
        &self.out
    }

    /// The slices, in solve order.
    pub fn slices(&self) -> &[Material] {
        &self.slices
    }

    /// The zstd settings of the WLD and DTC files.
    pub fn zstd(&self) -> &CompressionParams {
        &self.zstd
    }

    /// The zstd settings of the DTW files.
    pub fn dtw_zstd(&self) -> &CompressionParams {
        &self.dtw_zstd
    }

    /// The zstd settings of the files of value kind `kind`: DTW files have their own; DTC
    /// files keep the WLD setting (the DTW one was measured on 8-bit DTW blocks only).
    pub fn zstd_for(&self, kind: ValueKind) -> &CompressionParams {
        match kind {
            ValueKind::Dtw => &self.dtw_zstd,
            ValueKind::Wld | ValueKind::Dtc => &self.zstd,
        }
    }

    /// The value kinds written.
    pub fn values(&self) -> Values {
        self.values
    }

    /// Whether the build solves exact distances ([`Values::solves_distances`]).
    pub(crate) fn distances(&self) -> bool {
        self.values.solves_distances()
    }

    /// The count profile of its DTC files.
    pub fn count(&self) -> &CountProfile {
        &self.count
    }

    /// DTC files under this count profile (default: the rules' preset's).
    pub fn with_count(mut self, count: CountProfile) -> Plan {
        self.count = count;
        self
    }

    /// The memory budget, bytes.
    pub fn memory(&self) -> u64 {
        self.memory
    }

    /// The one slice of a single-slice job.
    pub fn single(&self) -> Option<Material> {
        self.single
    }

    /// The bytes of scratch files the build may keep on disk.
    pub fn scratch_limit(&self) -> Option<u64> {
        self.scratch_limit
    }

    /// These zstd settings for every file (by default [`ZSTD`] for WLD and DTC files and
    /// [`DTW_ZSTD`] for DTW files).
    pub fn with_zstd(mut self, zstd: CompressionParams) -> Plan {
        self.zstd = zstd;
        self.dtw_zstd = zstd;
        self
    }

    /// This fill of the "don't care" positions of WLD files (default [`Fill::Major`]).
    pub fn with_fill(mut self, fill: Fill) -> Plan {
        self.fill = fill;
        self
    }

    /// Blocks of `positions` in the WLD files (and values files) instead of [`WLD_BLOCK_LEN`]:
    /// a multiple of 64, at most [`MAX_BLOCK_LEN`](dtb_probe::internal::format::MAX_BLOCK_LEN).
    /// Longer blocks compress smaller, or as small with faster zstd settings, and an uncached
    /// probe decompresses the whole block (docs/PERFORMANCE.md).
    ///
    /// # Errors
    /// [`BuildError::BlockLen`] for any other length.
    pub fn with_wld_block_len(mut self, positions: u32) -> Result<Plan, BuildError> {
        if !crate::compress::block_len_ok(positions) {
            return Err(BuildError::BlockLen(positions));
        }
        self.wld_block_len = positions;
        Ok(self)
    }

    /// Positions a block of the WLD files.
    pub fn wld_block_len(&self) -> u32 {
        self.wld_block_len
    }

    /// Blocks of `positions` in the distance files (DTW and DTC) instead of
    /// [`DTW_BLOCK_LEN`]: a multiple of 64, at most
    /// [`MAX_BLOCK_LEN`](dtb_probe::internal::format::MAX_BLOCK_LEN). As for WLD files,
    /// longer blocks compress smaller or as small with faster zstd settings (English 2-6
    /// DTW: 65,536 positions at level 9 compress 2.9 times as fast as today's blocks and
    /// setting for 1.6% more bytes), and a probe that misses the block cache decompresses
    /// the whole block (docs/PERFORMANCE.md).
    ///
    /// # Errors
    /// [`BuildError::DistanceBlockLen`] for any other length.
    pub fn with_distance_block_len(mut self, positions: u32) -> Result<Plan, BuildError> {
        if !crate::compress::block_len_ok(positions) {
            return Err(BuildError::DistanceBlockLen(positions));
        }
        self.distance_block_len = positions;
        Ok(self)
    }

    /// Positions a block of the distance files (DTW and DTC).
    pub fn distance_block_len(&self) -> u32 {
        self.distance_block_len
    }

    /// These value kinds (see [`Plan::values`]).
    pub fn with_values(mut self, values: Values) -> Plan {
        self.values = values;
        self
    }

    /// This memory budget, bytes (checked against each slice's forecast before any work).
    pub fn with_memory(mut self, bytes: u64) -> Plan {
        self.memory = bytes;
        self
    }

    /// Whether the WLD files are written in format version 3 (threat positions "don't
    /// care"): a WLD-only build under compulsory capture, unless told otherwise
    /// ([`Plan::with_threats`]).
    pub fn writes_threats(&self) -> bool {
        self.threats && !self.distances() && self.rules.capture_compulsory
    }

    /// Threat positions "don't care" in the WLD files of a WLD-only build under compulsory
    /// capture (format version 3; the default), or not (version 1). Other builds write
    /// version 1 WLD files either way.
    pub fn with_threats(mut self, threats: bool) -> Plan {
        self.threats = threats;
        self
    }

    /// Whether a WLD-only build writes a values file beside each table
    /// ([`Plan::with_keep_values`]).
    pub fn keeps_values(&self) -> bool {
        self.keep_values && !self.distances()
    }

    /// Write each slice's true values in a file beside its table ([`Plan::values_path`]),
    /// for the one-slice jobs that read it later. Builds with distances write none.
    pub fn with_keep_values(mut self, keep: bool) -> Plan {
        self.keep_values = keep;
        self
    }

    /// Path of the values file of slice `m`: its WLD table's name with `.values` for
    /// `.wld`, a WLD file of format version 4 (every position's true value).
    pub fn values_path(&self, m: Material) -> PathBuf {
        self.path(m, ValueKind::Wld)
            .with_extension(VALUES_EXTENSION)
    }

    /// Whether a finished slice `m` of this WLD-only build would be loaded from its values
    /// file (present on disk) rather than from its table.
    pub(crate) fn values_on_disk(&self, m: Material) -> bool {
        !self.distances() && self.values_path(m).is_file()
    }

    /// This limit on scratch files, bytes (`None`: no limit).
    pub fn with_scratch_limit(mut self, bytes: Option<u64>) -> Plan {
        self.scratch_limit = bytes;
        self
    }

    /// The least positions (both sides) of a slice that resumes mid-way, and the least
    /// time between two of its records.
    pub fn checkpoints(&self) -> (u64, std::time::Duration) {
        (self.checkpoint_positions, self.checkpoint_every)
    }

    /// Slices of at least `positions` (both sides) resume mid-way, recording their
    /// finished rounds at most once every `every` (see [`Plan::results_on_disk`]).
    pub fn with_checkpoints(mut self, positions: u64, every: std::time::Duration) -> Plan {
        self.checkpoint_positions = positions;
        self.checkpoint_every = every;
        self
    }

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
            dtw_zstd: DTW_ZSTD,
            fill: Fill::Major,
            wld_block_len: WLD_BLOCK_LEN,
            distance_block_len: DTW_BLOCK_LEN,
            values: Values::WLD_DTW,
            count: CountProfile::for_rules(&rules),
            memory: default_budget(),
            single: None,
            scratch_limit: None,
            checkpoint_positions: CHECKPOINT_POSITIONS,
            checkpoint_every: CHECKPOINT_EVERY,
            threats: true,
            keep_values: false,
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
        values: Values,
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
        plan.values = values;
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
    pub(super) fn stored_positions(&self, m: Material) -> u64 {
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
        if !self.distances() {
            // The store's copy of the outcomes, unless it goes to a scratch file.
            let kept = 2 * size.div_ceil(32) * 8;
            return OVERHEAD_BYTES + self.wld_solver(m, threads).1 + kept;
        }
        OVERHEAD_BYTES + solve_memory(&self.rules, m, threads) + 2 * size * 2
    }

    /// The solver a WLD-only build takes for slice `m`, and the memory it needs: the
    /// bit-parallel one for a slice that it takes ([`bitpar_supports`]: 8x8, kings that move
    /// one square), except a slice of kings only whose rows would pass three quarters of the
    /// budget; such a slice, or one of kings only that it does not take, the bit solver
    /// ([`crate::bitbase`], seven bits a position: a tenth to a sixteenth of the grouped
    /// solver's memory, and faster, since the grouped one solves the slice's single men
    /// group on one thread: performance-history, session 28); otherwise the grouped one.
    ///
    /// A bit-parallel or grouped solve that would pass three quarters of the budget keeps the
    /// slice's own arrays (outcomes, capture flags; the bit-parallel solver's planes) in
    /// scratch files mapped from disk ([`Plan::maps_results`]): the memory returned is then
    /// the rest of its working set.
    pub fn wld_solver(&self, m: Material, threads: usize) -> (WldSolver, u64) {
        let (method, bytes) = self.wld_solver_with(m, threads, false);
        if method == WldSolver::Bits || OVERHEAD_BYTES + bytes <= self.memory / 4 * 3 {
            return (method, bytes);
        }
        self.wld_solver_with(m, threads, true)
    }

    /// The work units slice `m` reports as it is solved on `threads` threads, what the
    /// progress bars, `build_done` and the ETA count: the solver's cost, so that the rate so
    /// far forecasts the slices left ([`Plan::solver_work`]).
    pub fn work(&self, m: Material, threads: usize) -> u64 {
        if self.distances() {
            // Every slice by the grouped solver with distances: alike a position.
            return 4 * SliceIndex::new(m, self.rules.geometry()).size();
        }
        self.solver_work(m, self.wld_solver(m, threads).0)
    }

    /// Forecast seconds of one core that slice `m` takes on `threads` threads, writing
    /// included: its [`Plan::work`] at the costs measured: in WLD slices of the bit-parallel
    /// solver 14.0 ns of a core a unit at 8 pieces and more, 9.8 in smaller ones; in those of
    /// the other solvers 18.5 and 12.0; 113 with distances. Measured on one machine each
    /// (the constants say which): another machine's build may take 1.2-2x more or less.
    pub fn core_seconds(&self, m: Material, threads: usize) -> f64 {
        if self.distances() {
            return self.work(m, threads) as f64 * DISTANCE_NS_PER_UNIT * 1e-9;
        }
        // The solver once: `work` would choose it again.
        let method = self.wld_solver(m, threads).0;
        let bitpar = matches!(method, WldSolver::BitParallel | WldSolver::BitParallelLean);
        let ns = match (m.pieces() >= 8, bitpar) {
            (true, true) => BITPAR_NS_PER_UNIT,
            (false, true) => BITPAR_NS_PER_UNIT_SMALL,
            (true, false) => WLD_NS_PER_UNIT,
            (false, false) => WLD_NS_PER_UNIT_SMALL,
        };
        self.solver_work(m, method) as f64 * ns * 1e-9
    }

    /// [`Plan::work`] of a WLD-only solve of slice `m` by `method`: four units a slot of the
    /// bit-parallel solver's rows ([`bitpar_slots`](crate::solve::bitpar_slots): 1.2 to 6 a position, as many as the
    /// innermost colour has kings, and its time goes by them: about 30 ns a slot a core at
    /// 8 pieces), less where that colour has two kings or more ([`bitpar_work`]), 36 a
    /// position for the grouped solver (men-only English slices: about 260 ns
    /// a position, 9 slots' time) and 48 for the bit solver (kings only: about 350 ns); all
    /// measured on one machine (performance-history, session 36).
    ///
    /// On 10x10 with flying kings (International) the grouped and bit solvers' units are
    /// weighed by `flying_weight`: their positions cost more from 6 pieces on, and most
    /// where one man leaves the kings a few huge men groups.
    pub fn solver_work(&self, m: Material, method: WldSolver) -> u64 {
        let size = SliceIndex::new(m, self.rules.geometry()).size();
        let per = match method {
            WldSolver::BitParallel | WldSolver::BitParallelLean => {
                return bitpar_work(&self.rules, m)
            }
            WldSolver::Grouped | WldSolver::GroupedSerial => 36,
            WldSolver::Bits => 48,
        };
        per * size * flying_weight(&self.rules, m, method) / 100
    }

    /// Whether solving slice `m` (WLD-only, grouped or bit-parallel solver) keeps its own
    /// arrays in scratch files, because in memory they would take its working set past three
    /// quarters of the budget.
    pub fn maps_results(&self, m: Material, threads: usize) -> bool {
        if self.distances() {
            return false;
        }
        let (method, bytes) = self.wld_solver_with(m, threads, false);
        method != WldSolver::Bits && OVERHEAD_BYTES + bytes > self.memory / 4 * 3
    }

    /// Whether slice `m`, solved by a build that spills (finished slices in scratch files),
    /// keeps its own arrays in scratch files mapped from disk: because in memory they would
    /// not fit ([`Plan::maps_results`]), or because the slice is large enough
    /// ([`Plan::checkpoints`]) that a run stopped part-way should resume it where it stopped,
    /// which the files and a record of the rounds they hold final allow. WLD-only, grouped
    /// or bit-parallel solver.
    pub fn results_on_disk(&self, m: Material, threads: usize) -> bool {
        self.maps_results(m, threads)
            || (!self.distances()
                && self.wld_solver(m, threads).0 != WldSolver::Bits
                && 2 * SliceIndex::new(m, self.rules.geometry()).size()
                    >= self.checkpoint_positions)
    }

    /// Bytes of scratch files slice `m` keeps its own arrays in while it is solved, where it
    /// does ([`Plan::results_on_disk`]): outcomes and capture flags, and the bit-parallel
    /// solver's planes.
    pub fn results_disk_bytes(&self, m: Material, threads: usize) -> u64 {
        match self.wld_solver(m, threads).0 {
            WldSolver::BitParallel | WldSolver::BitParallelLean => {
                bitpar_memory(&self.rules, m, self.bitpar_how(false), threads).0
            }
            _ => wld_results_bytes(SliceIndex::new(m, self.rules.geometry()).size()),
        }
    }

    /// How the bit-parallel solver solves a slice of this build, with lean rows or not.
    fn bitpar_how(&self, lean: bool) -> BitparHow {
        BitparHow {
            threats: self.writes_threats(),
            lean,
        }
    }

    /// [`Plan::wld_solver`] with the solver's own arrays in memory or (`mapped`) not.
    fn wld_solver_with(&self, m: Material, threads: usize, mapped: bool) -> (WldSolver, u64) {
        let ix = SliceIndex::new(m, self.rules.geometry());
        if m.men() == 0 {
            // The bit-parallel solver where it takes the slice and its rows fit the budget
            // (it runs the slice's one men group on every thread, 2.5x faster a core than
            // the bit solver on English 0304: performance-history, session 34), else the
            // bit solver (seven bits a position).
            // With lean rows (the other kings' moves found when needed, not kept) where only
            // they fit.
            if bitpar_supports(&self.rules, m) {
                let fits = bitpar_move_list_fits(&self.rules, m);
                for (lean, method) in [
                    (false, WldSolver::BitParallel),
                    (true, WldSolver::BitParallelLean),
                ] {
                    if !(lean || fits) {
                        continue;
                    }
                    let (results, rest) =
                        bitpar_memory(&self.rules, m, self.bitpar_how(lean), threads);
                    if OVERHEAD_BYTES + results + rest <= self.memory / 4 * 3 {
                        return (method, results + rest);
                    }
                }
            }
            return (WldSolver::Bits, kings_wld_memory(ix.size(), threads));
        }
        if bitpar_supports(&self.rules, m) {
            let lean = !bitpar_move_list_fits(&self.rules, m);
            let (results, rest) = bitpar_memory(&self.rules, m, self.bitpar_how(lean), threads);
            let method = if lean {
                WldSolver::BitParallelLean
            } else {
                WldSolver::BitParallel
            };
            return (method, rest + if mapped { 0 } else { results });
        }
        let results = if mapped {
            wld_results_bytes(ix.size())
        } else {
            0
        };
        let grouped = solve_memory_wld(&self.rules, m, threads, false).saturating_sub(results);
        // Groups one at a time where one set of group buffers a thread takes more than a
        // quarter of the budget.
        let serial = solve_memory_wld(&self.rules, m, threads, true).saturating_sub(results);
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
            * if !self.distances() {
                size.div_ceil(32) * 8
            } else {
                2 * size
            }
    }

    /// Memory (bytes) the build's store takes for slice `m` loaded from its file: as
    /// [`Plan::held_bytes`], and in a WLD-only build under compulsory capture as much again
    /// for what look-ups found in its "don't care" positions (`Store::value`), unless it
    /// loads from its values file (no "don't care").
    pub fn loaded_bytes(&self, m: Material) -> u64 {
        let memo = !self.distances() && self.rules.capture_compulsory && !self.values_on_disk(m);
        self.held_bytes(m) * if memo { 2 } else { 1 }
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
                if s.action == Action::Solve && self.results_on_disk(s.material, threads) {
                    // Its own arrays, while it is solved.
                    s.disk_bytes += self.results_disk_bytes(s.material, threads);
                }
                if s.action == Action::Solve && !self.distances() {
                    // The store's copy of the outcomes goes to the scratch file.
                    s.solve_bytes -= self.held_bytes(s.material).min(s.solve_bytes);
                }
                s.held_bytes = 0;
                s.spill = true;
            }
        }
        f
    }

    /// Which slices are finished on disk, and who reads which slice and when each may be
    /// dropped given them (finished slices are read from their files when needed).
    fn readers_on_disk(&self) -> (Vec<bool>, Readers) {
        let done: Vec<bool> = self
            .slices
            .iter()
            .map(|&m| on_disk(self, m) == OnDisk::Finished)
            .collect();
        let readers = Readers::new(&self.slices, &done, &self.whole(&done));
        (done, readers)
    }

    /// Per slice, whether it is finished (`done`) and loads from its values file.
    pub(super) fn whole(&self, done: &[bool]) -> Vec<bool> {
        self.slices
            .iter()
            .zip(done)
            .map(|(&m, &d)| d && self.values_on_disk(m))
            .collect()
    }

    /// Per slice of the plan, bytes (as [`Plan::held_bytes`]) of the slices of `tables`
    /// held while it is solved or loaded, counted as in [`Plan::forecast_in_memory`].
    fn held_timeline(&self, tables: &std::collections::HashSet<Material>) -> Vec<u64> {
        let (_, readers) = self.readers_on_disk();
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
    pub(super) fn table_cache_bytes(&self) -> u64 {
        (self.memory / 32).min(1 << 30)
    }

    /// [`Plan::forecast`] with every finished slice a later one reads held in memory.
    fn forecast_in_memory(&self, threads: usize) -> Vec<Forecast> {
        let states: Vec<OnDisk> = self.slices.iter().map(|&m| on_disk(self, m)).collect();
        let done: Vec<bool> = states.iter().map(|s| *s == OnDisk::Finished).collect();
        let readers = Readers::new(&self.slices, &done, &self.whole(&done));
        let mut held = 0u64;
        let mut out = Vec::with_capacity(self.slices.len());
        for (i, &m) in self.slices.iter().enumerate() {
            // Finished slices are loaded from their files; the others are solved here.
            let bytes = |j: usize| {
                if done[j] {
                    self.loaded_bytes(self.slices[j])
                } else {
                    self.held_bytes(self.slices[j])
                }
            };
            for &j in &readers.drop_before[i] {
                // (saturating: a plan whose slices were reordered by hand is not in
                // dependency order; `run` refuses it with a missing-slice error)
                held = held.saturating_sub(bytes(j));
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
                held += bytes(i);
            }
        }
        out
    }

    /// The finished slices this build reads from their table files (compressed, through a
    /// block cache) instead of scratch files, so that its scratch files stay within
    /// [`Plan::scratch_limit`]: empty unless it spills ([`Plan::needs_spill`]) and is
    /// WLD-only. Chosen greedily, slice by slice in solve order: while the scratch files
    /// held at a slice would pass the limit, the largest held slice not yet chosen is, first
    /// among those without a scratch file on disk, so that a build run again (with more or
    /// less free space) keeps reading the scratch files a stopped run made instead of
    /// loading those slices again from their tables.
    pub fn from_tables(&self, threads: usize) -> std::collections::HashSet<Material> {
        let mut chosen = std::collections::HashSet::new();
        let Some(limit) = self.scratch_limit else {
            return chosen;
        };
        if self.distances() || !self.needs_spill(threads) {
            return chosen;
        }
        let (done, readers) = self.readers_on_disk();
        // Looked at once: the choice below asks for each held slice again and again.
        let in_scratch: std::collections::HashSet<Material> = self
            .slices
            .iter()
            .copied()
            .filter(|&m| super::scratch_path(self, m, 0).is_file())
            .collect();
        let mut held: Vec<Material> = Vec::new();
        for (i, &m) in self.slices.iter().enumerate() {
            for &j in &readers.drop_before[i] {
                held.retain(|&x| x != self.slices[j]);
            }
            let own = if !done[i] && self.results_on_disk(m, threads) {
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
                    .max_by_key(|&&x| (!in_scratch.contains(&x), self.held_bytes(x), x))
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
    pub fn kinds(&self) -> impl Iterator<Item = ValueKind> {
        self.values.iter()
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

/// Hundredths: how much more a position of slice `m` costs the grouped solver (`method`
/// [`WldSolver::Grouped`] or [`WldSolver::GroupedSerial`]) or the bit solver
/// ([`WldSolver::Bits`]) on 10x10 with flying kings than [`WLD_NS_PER_UNIT_SMALL`] says,
/// fitted to International WLD slices on two cores of an AMD EPYC (performance-history,
/// session 52; CPU time over the forecast, `--block-len 262144 --fill best`): at 5 pieces
/// and fewer 1 (the 2-5 build from empty, 1.03-1.05x the forecast at the default flags),
/// but 1.5 where one man leaves four kings in 45 huge men groups (0113, 0212, 0311: 1.5-1.9
/// in the build with `--fill best`, whose writing is about a tenth longer);
/// at 6 pieces 1.6 (nine slices with two to four men, 1.1-1.8 as jobs, whose searches of
/// their inputs' positions add about a tenth), 2.9 with one man (0411 as a job; 0114 and 0213 in the
/// build) and 1.65 for the bit solver's kings-only slices (0105, 0204, 0303: 1.6-1.8). Other rules: 1 (not
/// measured apart; English slices with kings go to the bit-parallel solver). Beyond 6
/// pieces the 6-piece weights, a floor: not measured.
pub(crate) fn flying_weight(rules: &Rules, m: Material, method: WldSolver) -> u64 {
    if rules.kings != dtb_probe::internal::rules::KingRange::Flying
        || rules.geometry().squares != 50
    {
        return 100;
    }
    let six = m.pieces() >= 6;
    match (method, m.men()) {
        (WldSolver::Bits, _) | (_, 0) => {
            if six {
                165
            } else {
                100
            }
        }
        (_, 1) => {
            if six {
                290
            } else {
                150
            }
        }
        _ => {
            if six {
                160
            } else {
                100
            }
        }
    }
}

/// Nanoseconds of a core a work unit ([`Plan::work`]) of the bit-parallel solver takes in a
/// WLD-only build, writing included, in slices of 8 pieces and more: English 0404, 0413,
/// 0422 and 0431 as jobs on two cores of an AMD EPYC (solve and writing, 76.4, 185.7, 191.3
/// and 71.2 s: performance-history, session 50), each within 0.88-1.13x of this forecast
/// with two kings innermost weighed as measured (session 52; 13.3 before). It was 18.5 (an
/// Intel Xeon, sessions 35 and 36) before the solver's steps of sessions 37-48.
const BITPAR_NS_PER_UNIT: f64 = 14.0;

/// The same in smaller slices, whose rows stay nearer the caches: English 2-7 WLD from
/// empty on the same machine, 631.9-640.0 s wall (sessions 48 and 49; the grouped and bit
/// solvers' slices at [`WLD_NS_PER_UNIT_SMALL`]); 8.9 before two kings innermost were
/// weighed as measured (session 52).
const BITPAR_NS_PER_UNIT_SMALL: f64 = 9.8;

/// Nanoseconds of a core a work unit of the other WLD solvers (grouped, bit solver) takes,
/// writing included, in slices of 8 pieces and more: fitted with the bit-parallel solver's
/// slices on an Intel Xeon (sessions 35 and 36), not measured alone since.
const WLD_NS_PER_UNIT: f64 = 18.5;

/// The same in smaller slices: fitted on English 2-7 WLD from empty on the same machine,
/// 886.9-961.7 s wall (sessions 34 and 35); International 2-5 WLD, all its slices the
/// grouped solver's, took 182.5-187.2 s wall on two cores against a forecast of 177.5 s
/// (session 50, AMD EPYC).
const WLD_NS_PER_UNIT_SMALL: f64 = 12.0;

/// The same for a build with distances (four units a position a side): English 2-7 with
/// DTW (`--zstd-level 9`), 4,187.7 s wall on two cores for 37.06 G positions solved
/// (performance-history, session 23).
const DISTANCE_NS_PER_UNIT: f64 = 113.0;

/// The solver of a slice in a WLD-only build ([`Plan::wld_solver`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WldSolver {
    /// [`crate::solve::solve_slice_grouped_wld`]: one men group at a time on each thread.
    Grouped,
    /// The same, each group on every thread: one set of group buffers.
    GroupedSerial,
    /// [`crate::bitbase::solve_kings_wld`]: bitmaps, for slices of kings only.
    Bits,
    /// [`crate::solve::solve_slice_bitpar_wld`]: a king's squares a word, for 8x8 slices
    /// with short kings.
    BitParallel,
    /// The same with lean rows ([`crate::solve::BitparHow::lean`]), for a slice of kings
    /// only whose rows would not fit the budget otherwise, and for any slice whose move
    /// lists a `u32` would not number ([`crate::solve::bitpar_move_list_fits`]).
    BitParallelLean,
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
    if t.starts_with('-') {
        return Err(format!(
            "{s:?} is not a size: a size is not negative (for example 512M or 20G)"
        ));
    }
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

/// A size in bytes as people read it: bytes below 1 KiB, else the largest binary unit it
/// reaches, with one decimal where it is not whole (`512 bytes`, `1 KiB`, `64 MiB`,
/// `118.7 GiB`).
pub fn size_words(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut unit = 0;
    while unit + 1 < UNITS.len() && bytes >= 1 << (10 * (unit + 1)) {
        unit += 1;
    }
    if unit == 0 {
        return format!("{bytes} bytes");
    }
    let x = bytes as f64 / (1u64 << (10 * unit)) as f64;
    let tenths = (x * 10.0).round() / 10.0;
    if tenths.fract() == 0.0 {
        format!("{tenths:.0} {}", UNITS[unit])
    } else {
        format!("{tenths:.1} {}", UNITS[unit])
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
    /// Bytes of scratch files of finished slices on disk at that time (mapped, the page
    /// cache holding what it can), where they do not fit in memory.
    pub disk_bytes: u64,
    /// Finished slices go to scratch files in this build.
    pub spill: bool,
    /// Why a file of the slice present on disk cannot be used (it is solved again).
    pub unusable: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the budget, a slice whose other kings' moves a `u32` would not number is
    /// solved (and forecast) with lean rows: English 0405 (18.8 G moves a group, in a 9-piece
    /// forecast) against 0404 (3.3 G at most).
    #[test]
    fn lean_rows_where_the_move_list_would_overflow() {
        let dir = tempfile::tempdir().unwrap();
        let plan = Plan::for_forecast(Rules::ENGLISH, 9, dir.path())
            .unwrap()
            .with_memory(1 << 50);
        let solver = |s: &str| plan.wld_solver(Material::parse(s).unwrap(), 2).0;
        assert_eq!(solver("0404"), WldSolver::BitParallel);
        assert_eq!(solver("0405"), WldSolver::BitParallelLean);
    }

    #[test]
    fn dtw_files_have_their_own_zstd_unless_one_is_given_for_all() {
        let dir = tempfile::tempdir().unwrap();
        let plan = Plan::new(Rules::ENGLISH, 4, dir.path()).unwrap();
        assert_eq!((plan.zstd(), plan.dtw_zstd()), (&ZSTD, &DTW_ZSTD));
        assert_ne!(ZSTD, DTW_ZSTD);
        let one = plan.with_zstd(CompressionParams::level(9));
        assert_eq!(one.zstd(), &CompressionParams::level(9));
        assert_eq!(one.dtw_zstd(), &CompressionParams::level(9));
    }

    #[test]
    fn sizes_in_words() {
        assert_eq!(size_words(0), "0 bytes");
        assert_eq!(size_words(1023), "1023 bytes");
        assert_eq!(size_words(1024), "1 KiB");
        assert_eq!(size_words(1536), "1.5 KiB");
        assert_eq!(size_words(64 << 20), "64 MiB");
        assert_eq!(size_words(127_453_182_771), "118.7 GiB");
        assert_eq!(size_words(3 << 40), "3 TiB");
    }
}
