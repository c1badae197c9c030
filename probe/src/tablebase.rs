//! A directory of tables, probed from any number of threads.
//!
//! ```
//! use dtb_probe::{fen, Rules, Tablebase, Wld};
//! # let tables = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/english-2");
//! let rules = Rules::ENGLISH;
//! let tb = Tablebase::open(tables, rules)?; // English 2-piece tables, WLD and DTW
//! let pos = fen::parse("W:WK32:BK26", &rules)?;
//! assert_eq!(tb.probe_wld(&pos)?, Wld::Win);
//!
//! // Every legal move, best first, with the value of the position after it (for the
//! // opponent, who moves there).
//! let moves = tb.probe_moves(&pos)?;
//! let ranked: Vec<_> = moves.iter().map(|m| (m.mv.to_pdn(false), m.after.wld)).collect();
//! assert_eq!(ranked, [("32-27".to_string(), Wld::Loss), ("32-28".to_string(), Wld::Draw)]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::count::{Category, CountProfile};
use crate::format::{parse_file_name, FormatError, ValueKind, WldCode, FORMAT_VERSION_THREAT};
use crate::index::SliceIndex;
use crate::material::Material;
use crate::movegen::{has_capture, legal_moves, Counting, Move};
use crate::position::{Position, PositionError};
use crate::rules::{Color, Rules, RulesId};
use crate::table::{BlockCache, CacheStats, ProbeBlocks, TableError, TableFile};
use crate::value::{self, Code, ValueSource, Wld};

/// Why a probe gave no value. Cloneable, so that every thread asking about a broken table
/// sees the same error.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ProbeError {
    /// The position is not legal under the tablebase's rules.
    #[error("illegal position: {0}")]
    IllegalPosition(#[from] PositionError),
    /// The position was read or made under other rules than the tablebase's (its
    /// [`Position::rules_id`] is another rule set's, or another board's): its pieces would
    /// be valued under rules it does not belong to. Parse the FEN with the tablebase's rules
    /// ([`Tablebase::rules`]), or re-check the position with [`Position::with_rules`].
    #[error(
        "the position is of other rules ({position}) than the tablebase's ({tablebase}): parse it with the tablebase's rules"
    )]
    VariantMismatch {
        /// The rule set the position was checked against: a preset's name, `"8x8 board"`
        /// for a board-only position, or `"another rule set"`.
        position: String,
        /// The tablebase's rule set (its canonical name).
        tablebase: &'static str,
    },
    /// The board is empty: neither side has a piece, so no side has won and no game leads
    /// here. A finished game is a value, not this error: a side to move with no pieces, or
    /// blocked, has lost (or as [`Rules::blocked`] says), and a side to move facing no
    /// pieces has won, all in 0 plies.
    #[error("the game is over: the board is empty")]
    GameOver,
    /// No table for a slice the probe needs: the probed position's own slice, or one that a
    /// capture or a move from it leads to (`reached` says which).
    #[error(
        "no {kind} table for slice {material} ({pieces} pieces) in the directories added{reached}"
    )]
    MissingTable {
        material: Material,
        kind: ValueKind,
        pieces: u32,
        /// How the probe came to need the slice.
        reached: Reached,
    },
    /// A table file could not be read, or is corrupt.
    #[error(transparent)]
    Table(Arc<TableError>),
    /// A table file with this variant's name holds another variant's or slice's values.
    #[error("{path}: not the expected table: {what}")]
    Mismatch { path: PathBuf, what: String },
    /// The directory could not be listed.
    #[error("{path}: {message}")]
    Directory { path: PathBuf, message: String },
    /// A quiet-position probe ([`Tablebase::probe_quiet_wld`]) of a position whose side to
    /// move must capture: its stored value means nothing, and the caller said it resolves
    /// captures itself.
    #[error("the side to move must capture: a quiet-position probe answers only positions without a capture")]
    CapturePosition,
    /// A DTC probe's counter (plies since the last capture or man move, as the count profile
    /// says) is at or over the limit of the position's regime: the game is already drawn by
    /// the count rule, or the counter is wrong.
    #[error("counter {counter} is at or over the limit of {limit} plies of the position's count regime ({regime}): the game is already drawn by the count rule")]
    CounterOutOfRange {
        /// The counter given.
        counter: u16,
        /// The regime's limit in plies.
        limit: u16,
        /// The regime's name (`general`, `five`, ...).
        regime: &'static str,
    },
}

/// How a probe came to need a slice whose table is missing ([`ProbeError::MissingTable`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reached {
    /// The slice asked for: the probed position is in it (or its table itself was asked for).
    Asked,
    /// A capture (or a series of compulsory captures) from the probed position leads to it:
    /// the probed slice's own table cannot answer a capture position.
    Capture,
    /// A move from the probed position (looking for the best move), possibly followed by
    /// compulsory captures, leads to it.
    Move,
}

impl std::fmt::Display for Reached {
    /// Empty for [`Reached::Asked`], else `": a capture from the probed position leads
    /// there"` or the same for a move: the end of [`ProbeError::MissingTable`]'s message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reached::Asked => Ok(()),
            Reached::Capture => f.write_str(": a capture from the probed position leads there"),
            Reached::Move => f.write_str(": a move from the probed position leads there"),
        }
    }
}

/// A game value with its distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dtw {
    /// Win, loss or draw for the side to move.
    pub wld: Wld,
    /// Plies to the end of the game under perfect play (winner fastest, loser slowest);
    /// `None` for a draw that the game does not end in now. Under the presets odd for a win
    /// and even for a loss, but for `Some(0)` with a win: the game is over, the opponent has
    /// no pieces left; under `blocked = majority` either parity (`Some(0)` with a win: also
    /// the side to move is blocked with more material and has won). `Some(0)` with a draw:
    /// the game ends here drawn (a blocked side under `blocked = draw`, or with as much
    /// material under `majority`; reported by [`Tablebase::probe_dtw`] for the position
    /// probed, not by the tables, which hold a plain draw there).
    pub plies: Option<u16>,
}

impl Dtw {
    fn from_code(code: Code) -> Dtw {
        Dtw {
            wld: code.wld(),
            plies: code.plies(),
        }
    }

    /// The value code ([`crate::value`]) of this value: a draw (ended or not) is
    /// [`value::DRAW`].
    #[doc(hidden)]
    pub fn code(&self) -> Code {
        match (self.wld, self.plies) {
            (Wld::Win, Some(p)) => Code::win(p),
            (Wld::Loss, Some(p)) => Code::loss(p),
            (w, None) => Code::of_wld(w),
            (Wld::Draw, _) => value::DRAW,
        }
    }
}

struct Entry {
    path: PathBuf,
    table: OnceLock<Result<Opened, ProbeError>>,
}

/// An opened table and its slice's index, made once (every look-up needs both).
struct Opened {
    file: TableFile,
    index: SliceIndex,
}

/// The hasher of the table map's keys (a material and a value kind: five small numbers).
/// The map is read on every look-up of a probe, and SipHash, the default, cost about 8% of
/// a cached International threat probe (docs/performance-history.md, session 16); the keys come
/// from file names and probed positions, not from a peer that could choose collisions.
#[derive(Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn finish(&self) -> u64 {
        // SplitMix64's finalizer: every bit of the packed key reaches the low bits (the
        // bucket) and the high ones (the map's tags).
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

type TableMap = HashMap<(Material, ValueKind), Entry, std::hash::BuildHasherDefault<KeyHasher>>;

/// The tables of one variant found in one or more directories. Files are only listed when a
/// directory is added and opened (memory-mapped, header checked) on first use; probes take
/// `&self` and may come from many threads.
pub struct Tablebase {
    rules: Rules,
    /// `rules.id()`, compared with every probed position's.
    rules_id: RulesId,
    /// The count profile DTC probes answer under; DTC tables of another are refused.
    count: CountProfile,
    cache: Arc<BlockCache>,
    tables: TableMap,
}

impl std::fmt::Debug for Tablebase {
    /// The variant, the tables found (and how many are open) and the cache's statistics.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = |kind| self.tables.keys().filter(|(_, k)| *k == kind).count();
        let open = self
            .tables
            .values()
            .filter(|e| e.table.get().is_some())
            .count();
        f.debug_struct("Tablebase")
            .field("variant", &self.rules.name)
            .field("wld_tables", &count(ValueKind::Wld))
            .field("dtw_tables", &count(ValueKind::Dtw))
            .field("dtc_tables", &count(ValueKind::Dtc))
            .field("open_tables", &open)
            .field("max_pieces", &self.max_pieces())
            .field("cache", &self.cache_stats())
            .finish()
    }
}

/// How a probe may reach its values.
#[derive(Clone, Copy)]
struct Mode {
    /// Only from blocks already in memory, without opening a file or reading a block.
    cache_only: bool,
}

/// Why a probe of [`Mode`] gave no value: an error, or (cache-only) a block not in memory.
enum Miss {
    Error(ProbeError),
    NotCached,
}

impl From<ProbeError> for Miss {
    fn from(e: ProbeError) -> Miss {
        Miss::Error(e)
    }
}

/// Default bound on decompressed blocks held in memory: 64 MiB.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

impl Tablebase {
    /// An empty tablebase for `rules` with the default block cache.
    pub fn new(rules: Rules) -> Tablebase {
        Tablebase::with_cache_bytes(rules, DEFAULT_CACHE_BYTES)
    }

    /// An empty tablebase whose block cache holds at most `bytes` of decompressed data: the
    /// shared cache and the recent blocks each probing thread keeps at hand together (a
    /// quarter of the bound at most for the threads'; see [`BlockCache`]'s Memory section).
    /// All of it is freed when the tablebase is dropped, or by [`Tablebase::clear_cache`];
    /// [`Tablebase::set_cache_bytes`] changes the bound.
    ///
    /// The rules are taken under their canonical name ([`Rules::named`]), which names the
    /// files looked for.
    pub fn with_cache_bytes(rules: Rules, bytes: usize) -> Tablebase {
        let rules = rules.named();
        Tablebase {
            rules_id: rules.id(),
            count: CountProfile::for_rules(&rules),
            rules,
            cache: Arc::new(BlockCache::new(bytes)),
            tables: TableMap::default(),
        }
    }

    /// A tablebase for `rules` with the tables of directory `dir`.
    ///
    /// # Errors
    /// [`ProbeError::Directory`] if `dir` cannot be listed.
    pub fn open(dir: impl AsRef<Path>, rules: Rules) -> Result<Tablebase, ProbeError> {
        let mut tb = Tablebase::new(rules);
        tb.add_directory(dir)?;
        Ok(tb)
    }

    /// A tablebase for a variant read from text ([`crate::Variant::parse`]): its rules, and
    /// its count profile for DTC probes, with the tables of directory `dir`.
    ///
    /// # Errors
    /// [`ProbeError::Directory`] if `dir` cannot be listed.
    pub fn open_variant(
        dir: impl AsRef<Path>,
        variant: &crate::Variant,
    ) -> Result<Tablebase, ProbeError> {
        let mut tb = Tablebase::new(variant.rules);
        tb.set_count_profile(variant.count);
        tb.add_directory(dir)?;
        Ok(tb)
    }

    /// The rules the tablebase answers for.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The count profile DTC probes answer under: the rules' preset's
    /// ([`CountProfile::for_rules`]) unless set.
    pub fn count_profile(&self) -> &CountProfile {
        &self.count
    }

    /// Answer DTC probes under `profile`: DTC tables built under another profile are then
    /// refused ([`ProbeError::Mismatch`]). DTC tables opened under the previous profile are
    /// closed (opened again on next use).
    pub fn set_count_profile(&mut self, profile: CountProfile) {
        if profile != self.count {
            self.count = profile;
            for ((_, kind), e) in &mut self.tables {
                if *kind == ValueKind::Dtc {
                    e.table = OnceLock::new();
                }
            }
        }
    }

    /// Record the table files of `dir` named `<variant>-<wm><wk><bm><bk>.<wld|dtw>` (the
    /// slice as [`Material`]'s Display writes it: dotted above 9 of a kind) for this
    /// variant (other files are ignored; nothing is opened yet). Returns how many were
    /// recorded.
    ///
    /// Directories form a search path: a slice's table of one kind found in a directory
    /// added earlier is kept, and the same file name in a later directory is skipped (not
    /// counted). So `open(a)` then `add_directory(b)` answers from `a` wherever `a` has the
    /// table, and from `b` for what only `b` has (`b` may hold the DTW tables of a
    /// WLD-only `a`, or more pieces).
    ///
    /// # Errors
    /// [`ProbeError::Directory`] if `dir` cannot be listed.
    pub fn add_directory(&mut self, dir: impl AsRef<Path>) -> Result<usize, ProbeError> {
        let dir = dir.as_ref();
        let derr = |e: std::io::Error| ProbeError::Directory {
            path: dir.to_path_buf(),
            message: e.to_string(),
        };
        let mut found = 0;
        for entry in std::fs::read_dir(dir).map_err(derr)? {
            let entry = entry.map_err(derr)?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some((material, kind)) = parse_file_name(name, self.rules.name) else {
                continue;
            };
            if let std::collections::hash_map::Entry::Vacant(slot) =
                self.tables.entry((material, kind))
            {
                slot.insert(Entry {
                    path: entry.path(),
                    table: OnceLock::new(),
                });
                found += 1;
            }
        }
        Ok(found)
    }

    /// The canonical slices with a table of `kind`, sorted.
    pub fn materials(&self, kind: ValueKind) -> Vec<Material> {
        let mut v: Vec<Material> = self
            .tables
            .keys()
            .filter(|(_, k)| *k == kind)
            .map(|(m, _)| *m)
            .collect();
        v.sort_by_key(|m| (m.pieces(), *m));
        v
    }

    /// The largest number of pieces of any WLD table found (0 if none).
    pub fn max_pieces(&self) -> u32 {
        self.tables
            .keys()
            .map(|(m, _)| m.pieces())
            .max()
            .unwrap_or(0)
    }

    /// The opened table for a canonical slice (opening it on first use): its header and raw
    /// stored codes. Its [`TableFile::stored_code`] is **not** a game value for capture
    /// positions, nor in WLD tables of format version 3 for threat positions
    /// ([`crate::value::is_threat_dont_care`]) ("don't care" entries); use [`Tablebase::probe_wld`],
    /// [`Tablebase::probe_dtw`] for values.
    ///
    /// Internal, like [`TableFile`]: for `dtb verify`, `dtb repack`, the C ABI and the tests,
    /// which read headers and raw codes; not part of the engine API.
    ///
    /// # Errors
    /// [`ProbeError::MissingTable`], [`ProbeError::Table`], [`ProbeError::Mismatch`].
    #[doc(hidden)]
    pub fn table(&self, material: Material, kind: ValueKind) -> Result<&TableFile, ProbeError> {
        let entry = self
            .tables
            .get(&(material, kind))
            .ok_or(ProbeError::MissingTable {
                material,
                kind,
                pieces: material.pieces(),
                reached: Reached::Asked,
            })?;
        self.opened(entry, material, kind).map(|o| &o.file)
    }

    /// The opened table and index of `entry` (opening it on first use).
    fn opened<'a>(
        &self,
        entry: &'a Entry,
        material: Material,
        kind: ValueKind,
    ) -> Result<&'a Opened, ProbeError> {
        entry
            .table
            .get_or_init(|| self.open_table(&entry.path, material, kind))
            .as_ref()
            .map_err(Clone::clone)
    }

    fn open_table(
        &self,
        path: &Path,
        material: Material,
        kind: ValueKind,
    ) -> Result<Opened, ProbeError> {
        let t = TableFile::open(path, self.cache.clone())
            .map_err(|e| ProbeError::Table(Arc::new(e)))?;
        let mut what = t.header().mismatch(&self.rules, material, kind);
        if what.is_none() && kind == ValueKind::Dtc && t.header().count_code != self.count.encode()
        {
            let theirs = CountProfile::decode(&t.header().count_code);
            // How a player asks for the file's profile (`count=mtc`, `count=20`).
            let hint = theirs
                .and_then(|p| p.limits_text(&CountProfile::for_rules(&self.rules)))
                .map_or_else(String::new, |t| {
                    format!("; probe with count={t} in the variant")
                });
            let theirs = theirs.map_or_else(|| "an unknown one".to_string(), |p| p.describe());
            what = Some(format!(
                "its DTC values are under another count profile ({theirs}) than the one \
                 probed ({}){hint}",
                self.count.describe()
            ));
        }
        if let Some(what) = what {
            return Err(ProbeError::Mismatch {
                path: path.to_path_buf(),
                what,
            });
        }
        // The header's material is the slice's, checked against the rules' board above
        // (its size is that slice's index size), so the index can be made.
        Ok(Opened {
            file: t,
            index: SliceIndex::new(material, self.rules.geometry()),
        })
    }

    fn check(&self, pos: &Position) -> Result<(), ProbeError> {
        let id = pos.rules_id();
        if id != self.rules_id && id != RulesId::board_only(self.rules.board) {
            return Err(self.variant_mismatch(id));
        }
        Position::new(
            &self.rules,
            pos.white(),
            pos.black(),
            pos.kings(),
            pos.side_to_move(),
        )?;
        if pos.white() | pos.black() == 0 {
            return Err(ProbeError::GameOver);
        }
        Ok(())
    }

    /// The value of a finished game whose side not to move has no pieces: its last piece was
    /// taken, so it has lost (variants.md, "Common to all variants": "The side to move with no
    /// pieces ... has lost", whatever [`Rules::blocked`] says of a blocked side), and the side
    /// to move has won, in 0 plies, with no move left to play. `None` for every other
    /// position (a side to move with no pieces is [`value::resolve`]'s: lost).
    fn finished(pos: &Position) -> Option<Code> {
        (pos.pieces(pos.side_to_move().opponent()) == 0).then_some(value::WON)
    }

    #[cold]
    fn variant_mismatch(&self, id: RulesId) -> ProbeError {
        let position = if id.is_board_only() {
            format!("{0}x{0} board", id.board())
        } else {
            Rules::PRESETS
                .iter()
                .find(|r| r.id() == id)
                .map_or("another rule set".to_string(), |r| r.name.to_string())
        };
        ProbeError::VariantMismatch {
            position,
            tablebase: self.rules.name,
        }
    }

    fn code(&self, pos: &Position, kind: ValueKind) -> Result<Code, ProbeError> {
        match self.code_in(pos, kind, Mode { cache_only: false }) {
            Ok(c) => Ok(c),
            Err(Miss::Error(e)) => Err(e),
            // Not cache-only: every block is read.
            Err(Miss::NotCached) => unreachable_not_cached(),
        }
    }

    fn code_in(&self, pos: &Position, kind: ValueKind, mode: Mode) -> Result<Code, Miss> {
        self.check(pos)?;
        if let Some(c) = Self::finished(pos) {
            return Ok(c);
        }
        value::resolve(&self.rules, &Source::new(self, kind, mode), pos).map_err(|e| match e {
            Miss::Error(e) => Miss::Error(reached_from(e, pos, Reached::Capture)),
            m => m,
        })
    }

    fn cached(&self, pos: &Position, kind: ValueKind) -> Result<Option<Code>, ProbeError> {
        match self.code_in(pos, kind, Mode { cache_only: true }) {
            Ok(c) => Ok(Some(c)),
            Err(Miss::NotCached) => Ok(None),
            Err(Miss::Error(e)) => Err(e),
        }
    }

    fn quiet(&self, pos: &Position, kind: ValueKind) -> Result<Code, ProbeError> {
        self.check(pos)?;
        if self.rules.capture_compulsory && has_capture(&self.rules, pos) {
            return Err(ProbeError::CapturePosition);
        }
        // Without a capture, resolving is one look-up (or a blocked side: a terminal value).
        self.code(pos, kind)
    }

    /// [`Tablebase::probe_wld`] answered only from what is already in memory: tables already
    /// opened and blocks already in the cache (or this thread's recent blocks). `Ok(None)`
    /// ("not cached") where a value it needs (the position's, or after a capture one of its
    /// successors') is not there; nothing is read from disk. For deep in an engine's search,
    /// where a block read costs more than the answer is worth (KingsRow's cache-only flag).
    /// Counted in [`CacheStats::not_cached`].
    ///
    /// # Errors
    /// As [`Tablebase::probe_wld`] (a table that failed to open before fails again).
    pub fn probe_wld_cached(&self, pos: &Position) -> Result<Option<Wld>, ProbeError> {
        Ok(self.cached(pos, ValueKind::Wld)?.map(Code::wld))
    }

    /// [`Tablebase::probe_dtw`] answered only from what is already in memory, as
    /// [`Tablebase::probe_wld_cached`].
    ///
    /// # Errors
    /// As [`Tablebase::probe_dtw`].
    pub fn probe_dtw_cached(&self, pos: &Position) -> Result<Option<Dtw>, ProbeError> {
        Ok(self.cached(pos, ValueKind::Dtw)?.map(Dtw::from_code))
    }

    /// Win, loss or draw of a quiet position (the side to move has no capture), with no
    /// capture search: for an engine that resolves captures itself and probes only quiet
    /// positions. Unlike a raw look-up it never answers a capture position's meaningless
    /// stored value. A threat position of a format version 3 table (the side not to move has
    /// a capture, [`crate::value::is_threat_dont_care`]) is answered by a one-ply search,
    /// whose successors may be capture positions resolved by the capture search.
    ///
    /// # Errors
    /// [`ProbeError::CapturePosition`] if the side to move must capture; otherwise as
    /// [`Tablebase::probe_wld`].
    pub fn probe_quiet_wld(&self, pos: &Position) -> Result<Wld, ProbeError> {
        Ok(self.quiet(pos, ValueKind::Wld)?.wld())
    }

    /// [`Tablebase::probe_dtw`] of a quiet position, as [`Tablebase::probe_quiet_wld`].
    ///
    /// # Errors
    /// As [`Tablebase::probe_quiet_wld`].
    pub fn probe_quiet_dtw(&self, pos: &Position) -> Result<Dtw, ProbeError> {
        Ok(Dtw::from_code(self.quiet(pos, ValueKind::Dtw)?))
    }

    /// The block cache's counters (hits, misses, cache-only misses, since the tablebase was
    /// made or [`Tablebase::reset_cache_stats`]) and what it holds now (bytes, blocks).
    pub fn cache_stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// Drops every block held in memory: the shared cache's and every probing thread's
    /// recent blocks ([`CacheStats::bytes`] and [`CacheStats::thread_bytes`] become 0).
    /// Dropping the tablebase frees them as well, and unmaps its files.
    pub fn clear_cache(&self) {
        self.cache.clear()
    }

    /// Changes the bound on decompressed blocks held in memory to `bytes` (the probing
    /// threads' recent blocks included, as for [`Tablebase::with_cache_bytes`]): a smaller
    /// bound evicts at once, and every thread's recent blocks are dropped. 0 keeps no block
    /// from then on. Probes may run meanwhile.
    pub fn set_cache_bytes(&self, bytes: usize) {
        self.cache.set_capacity(bytes)
    }

    /// Sets the cache's hit and miss counters to zero.
    pub fn reset_cache_stats(&self) {
        self.cache.reset_stats()
    }

    /// Win, loss or draw for the side to move, captures resolved by search. A finished game
    /// is answered, not refused: a side to move with no pieces, or blocked, has lost (or
    /// drawn or won, as [`Rules::blocked`] says of a blocked side), and a side to move whose
    /// opponent has no pieces has won, each in 0 plies ([`Tablebase::probe_dtw`]).
    ///
    /// # Errors
    /// [`ProbeError`]: an illegal position (an empty board: [`ProbeError::GameOver`]), a
    /// missing or corrupt table.
    pub fn probe_wld(&self, pos: &Position) -> Result<Wld, ProbeError> {
        Ok(self.code(pos, ValueKind::Wld)?.wld())
    }

    /// The exact distance to the end of the game in plies (needs the DTW tables).
    ///
    /// # Errors
    /// As [`Tablebase::probe_wld`].
    pub fn probe_dtw(&self, pos: &Position) -> Result<Dtw, ProbeError> {
        let mut d = Dtw::from_code(self.code(pos, ValueKind::Dtw)?);
        if d.wld == Wld::Draw && self.rules.blocked != crate::rules::BlockedOutcome::Loss {
            // A draw that ends the game now: the side to move is blocked.
            let mut moves = Vec::new();
            legal_moves(&self.rules, pos, Counting::Unique, &mut moves);
            if moves.is_empty() {
                d.plies = Some(0);
            }
        }
        Ok(d)
    }

    /// The value code ([`crate::value`]) of `pos` from the tables of `kind`, captures
    /// resolved by search: for `dtb verify` and the generator's tests, not the engine API.
    ///
    /// # Errors
    /// As [`Tablebase::probe_wld`].
    #[doc(hidden)]
    pub fn probe_code(&self, pos: &Position, kind: ValueKind) -> Result<Code, ProbeError> {
        self.code(pos, kind)
    }

    /// The value of `pos` under the tablebase's count profile ([`Tablebase::count_profile`])
    /// when `counter` plies have passed since the counter was last reset (0: the last move
    /// was a capture or a man move, as the profile says): its category at counter 0, its
    /// result at `counter`, and its distance to conversion. Needs the DTC tables, built under
    /// the same profile.
    ///
    /// ```
    /// use dtb_probe::{fen, Category, Rules, Tablebase, Wld};
    /// # let tables = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/english-2");
    /// let tb = Tablebase::open(tables, Rules::ENGLISH)?; // english-2 holds DTC tables too
    /// let pos = fen::parse("W:WK32:BK26", tb.rules())?;
    /// let v = tb.probe_dtc(&pos, 0)?;
    /// assert_eq!(v.category, Category::Win);
    /// assert_eq!(v.result, Wld::Win);
    /// let plies = v.plies.unwrap();
    /// // The same position with fewer plies left than it needs is drawn by the count rule.
    /// assert_eq!(tb.probe_dtc(&pos, 80 - plies + 1)?.result, Wld::Draw);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`Tablebase::probe_wld`]; [`ProbeError::CounterOutOfRange`] for a counter at or
    /// over the limit of the position's regime.
    pub fn probe_dtc(&self, pos: &Position, counter: u16) -> Result<Dtc, ProbeError> {
        self.check(pos)?;
        self.check_counter(pos, counter)?;
        Ok(self.dtc_of(&pos.material(), self.code(pos, ValueKind::Dtc)?, counter))
    }

    fn check_counter(&self, pos: &Position, counter: u16) -> Result<(), ProbeError> {
        let r = self.count.regime_of(pos);
        match self.count.limit(r) {
            Some(limit) if counter >= limit => Err(ProbeError::CounterOutOfRange {
                counter,
                limit,
                regime: self.count.regime_name(r),
            }),
            _ => Ok(()),
        }
    }

    fn dtc_of(&self, m: &Material, code: Code, counter: u16) -> Dtc {
        let r = self.count.regime(m);
        Dtc {
            category: self.count.category(m, code),
            result: self.count.result_at(m, code, counter),
            plies: code.plies(),
            counter,
            limit: self.count.limit(r),
        }
    }

    /// Every legal move of `pos` at `counter` with the DTC value of the position after it
    /// (for its side to move, at its counter: 0 after a move that resets the counter, else
    /// `counter + 1`), best first for the mover under the count rule: moves that win at this
    /// counter fastest first, then cursed wins, draws, blessed losses, and losses slowest
    /// first. Each says whether it resets the counter.
    ///
    /// # Errors
    /// As [`Tablebase::probe_dtc`]; a missing table of a slice a move leads to is
    /// [`ProbeError::MissingTable`] with [`Reached::Move`] or [`Reached::Capture`].
    pub fn probe_moves_dtc(
        &self,
        pos: &Position,
        counter: u16,
    ) -> Result<Vec<RankedDtcMove>, ProbeError> {
        self.check(pos)?;
        self.check_counter(pos, counter)?;
        if Self::finished(pos).is_some() {
            return Ok(Vec::new());
        }
        let mut moves = Vec::new();
        legal_moves(&self.rules, pos, Counting::Unique, &mut moves);
        let src = Source::new(self, ValueKind::Dtc, Mode { cache_only: false });
        let before = pos.material();
        let mut ranked = Vec::with_capacity(moves.len());
        for m in moves {
            let succ = m.apply_unchecked(pos);
            let child = match value::resolve(&self.rules, &src, &succ) {
                Ok(c) => c,
                Err(Miss::Error(e)) => {
                    let how = if m.is_capture() {
                        Reached::Capture
                    } else {
                        Reached::Move
                    };
                    return Err(reached_from(e, pos, how));
                }
                Err(Miss::NotCached) => unreachable_not_cached()?,
            };
            let zeroing = self.count.resets_to(pos, &m, &succ);
            let mover = self.count.convert_move(pos, &m, &succ, child).parent();
            let next = if zeroing { 0 } else { counter + 1 };
            let key = (
                self.count.result_at(&before, mover, counter) == Wld::Win,
                mover.goodness(),
            );
            ranked.push((
                key,
                RankedDtcMove {
                    mv: m,
                    after: self.dtc_of(&succ.material(), child, next),
                    zeroing,
                },
            ));
        }
        ranked.sort_by_key(|(k, _)| std::cmp::Reverse(*k));
        Ok(ranked.into_iter().map(|(_, r)| r).collect())
    }

    /// The best move and the value of the position: in a win, a move to the fastest win; in a
    /// loss, to the slowest loss; in a draw, a drawing move. `None` when the side to move has
    /// no move or the game is over (the opponent has no pieces). Uses the DTW tables.
    ///
    /// # Errors
    /// As [`Tablebase::probe_wld`].
    pub fn best_move(&self, pos: &Position) -> Result<Option<(Move, Dtw)>, ProbeError> {
        Ok(self.probe_moves(pos)?.into_iter().next().map(|r| {
            let v = r.for_mover();
            (r.mv, v)
        }))
    }

    /// Every legal move with the value of the position after it, best first for the side to
    /// move: wins fastest first, then draws, then losses slowest first (moves of equal value
    /// in move-generation order). This is root-move ranking. Uses the DTW tables; see
    /// [`Tablebase::probe_moves_wld`] for a WLD-only directory. Empty when the side to move
    /// has no move, and when the game is over (the opponent has no pieces).
    ///
    /// # Errors
    /// As [`Tablebase::probe_wld`]; a missing table of a slice a move leads to is
    /// [`ProbeError::MissingTable`] with [`Reached::Move`] or [`Reached::Capture`].
    pub fn probe_moves(&self, pos: &Position) -> Result<Vec<RankedMove>, ProbeError> {
        self.rank_moves(pos, ValueKind::Dtw)
    }

    /// [`Tablebase::probe_moves`] from the WLD tables: the same order by outcome, with
    /// [`RankedMove::after`]'s `plies` always `None` (WLD tables hold no distance), so the
    /// moves of one outcome stay in move-generation order.
    ///
    /// # Errors
    /// As [`Tablebase::probe_moves`].
    pub fn probe_moves_wld(&self, pos: &Position) -> Result<Vec<RankedMove>, ProbeError> {
        self.rank_moves(pos, ValueKind::Wld)
    }

    fn rank_moves(&self, pos: &Position, kind: ValueKind) -> Result<Vec<RankedMove>, ProbeError> {
        self.check(pos)?;
        if Self::finished(pos).is_some() {
            // The game is over: the pieces left have no move to make.
            return Ok(Vec::new());
        }
        let mut moves = Vec::new();
        legal_moves(&self.rules, pos, Counting::Unique, &mut moves);
        let src = Source::new(self, kind, Mode { cache_only: false });
        let mut ranked = Vec::with_capacity(moves.len());
        for m in moves {
            let child = match value::resolve(&self.rules, &src, &m.apply_unchecked(pos)) {
                Ok(c) => c,
                Err(Miss::Error(e)) => {
                    return Err(reached_from(
                        e,
                        pos,
                        if m.is_capture() {
                            Reached::Capture
                        } else {
                            Reached::Move
                        },
                    ))
                }
                Err(Miss::NotCached) => unreachable_not_cached()?,
            };
            let after = match kind {
                ValueKind::Dtw | ValueKind::Dtc => Dtw::from_code(child),
                ValueKind::Wld => Dtw {
                    wld: child.wld(),
                    plies: None,
                },
            };
            ranked.push((child.parent().goodness(), RankedMove { mv: m, after }));
        }
        // Stable: equal values keep move-generation order.
        ranked.sort_by_key(|(g, _)| std::cmp::Reverse(*g));
        Ok(ranked.into_iter().map(|(_, r)| r).collect())
    }
}

/// One legal move and the value of the position it leads to ([`Tablebase::probe_moves`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankedMove {
    /// The move (with its captured pieces).
    pub mv: Move,
    /// The value of the position after the move, for **its** side to move (the opponent of
    /// the mover), as the lichess tablebase API gives it: a loss there is a win for the
    /// mover, one ply longer.
    pub after: Dtw,
}

impl RankedMove {
    /// The value of the move for the mover: [`RankedMove::after`] reversed, one ply more.
    pub fn for_mover(&self) -> Dtw {
        Dtw {
            wld: match self.after.wld {
                Wld::Win => Wld::Loss,
                Wld::Loss => Wld::Win,
                Wld::Draw => Wld::Draw,
            },
            plies: self.after.plies.map(|p| p + 1),
        }
    }
}

/// A position's value under a count profile ([`Tablebase::probe_dtc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dtc {
    /// Its value at counter 0: win, cursed win (won, but drawn by the count rule), draw,
    /// blessed loss, loss.
    pub category: Category,
    /// The result for the side to move at [`Dtc::counter`]: a win (or loss) only if
    /// [`Dtc::plies`] is at most the limit less the counter (or the game is over).
    pub result: Wld,
    /// Plies to the next move that resets the counter into a position the same side still
    /// wins (loses) under the rule, or to the end of the game, winner fastest, loser slowest;
    /// above [`Dtc::limit`] for a cursed win or blessed loss; `None` for a draw.
    pub plies: Option<u16>,
    /// The counter this value is at (plies since the last reset).
    pub counter: u16,
    /// The limit in plies of the position's regime; `None`: no count rule applies there.
    pub limit: Option<u16>,
}

/// One legal move and the DTC value of the position it leads to
/// ([`Tablebase::probe_moves_dtc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankedDtcMove {
    /// The move (with its captured pieces; [`Move::is_capture`]).
    pub mv: Move,
    /// The value of the position after the move, for its side to move (the mover's
    /// opponent), at its counter.
    pub after: Dtc,
    /// Whether the move resets the counter (a capture or a man move, or a change of regime,
    /// as the profile says).
    pub zeroing: bool,
}

/// `e`, with a missing table of a slice other than `pos`'s marked as reached by `how`.
fn reached_from(e: ProbeError, pos: &Position, how: Reached) -> ProbeError {
    match e {
        ProbeError::MissingTable {
            material,
            kind,
            pieces,
            reached: Reached::Asked,
        } if material != pos.material().canonical() => ProbeError::MissingTable {
            material,
            kind,
            pieces,
            reached: how,
        },
        e => e,
    }
}

/// The error for a [`Miss::NotCached`] from a probe that is not cache-only (which cannot
/// happen: such a probe reads every block it needs).
fn unreachable_not_cached() -> Result<Code, ProbeError> {
    Err(ProbeError::Directory {
        path: PathBuf::new(),
        message: "internal error: a block was not read".into(),
    })
}

struct Source<'a> {
    tb: &'a Tablebase,
    kind: ValueKind,
    mode: Mode,
    /// The blocks this probe has read, for its further look-ups (a probe is one call from
    /// one thread).
    blocks: RefCell<ProbeBlocks>,
}

impl<'a> Source<'a> {
    fn new(tb: &'a Tablebase, kind: ValueKind, mode: Mode) -> Source<'a> {
        Source {
            tb,
            kind,
            mode,
            blocks: RefCell::default(),
        }
    }
}

impl Source<'_> {
    /// The table of `material` and its index (in cache-only mode only if it is open
    /// already).
    fn table_of(&self, material: Material) -> Result<&Opened, Miss> {
        let entry = self
            .tb
            .tables
            .get(&(material, self.kind))
            .ok_or(ProbeError::MissingTable {
                material,
                kind: self.kind,
                pieces: material.pieces(),
                reached: Reached::Asked,
            })?;
        Ok(if self.mode.cache_only {
            match entry.table.get() {
                None => {
                    self.tb.cache.count_not_cached();
                    return Err(Miss::NotCached);
                }
                Some(t) => t.as_ref().map_err(|e| Miss::Error(e.clone()))?,
            }
        } else {
            self.tb.opened(entry, material, self.kind)?
        })
    }
}

impl ValueSource for Source<'_> {
    type Error = Miss;

    fn threats_dont_care(&self, pos: &Position) -> Result<bool, Miss> {
        Ok(self.kind == ValueKind::Wld
            && self.table_of(pos.material())?.file.header().version == FORMAT_VERSION_THREAT)
    }

    #[inline]
    fn capture_code(&self, before: &Position, after: &Position, child: Code) -> Code {
        if self.kind == ValueKind::Dtc {
            self.tb
                .count
                .convert(&before.material(), &after.material(), true, child)
        } else {
            child
        }
    }

    fn stored(&self, pos: &Position) -> Result<Code, Miss> {
        let material = pos.material();
        let Opened { file: table, index } = self.table_of(material)?;
        let index = index.index(pos);
        let side = match pos.side_to_move() {
            Color::White => 0,
            Color::Black => 1,
        };
        let raw = if self.mode.cache_only {
            table
                .cached_code(side, index)
                .map_err(|e| ProbeError::Table(Arc::new(e)))?
                .ok_or(Miss::NotCached)?
        } else {
            // Not borrowed elsewhere (look-ups do not nest); were it, the look-up goes
            // without this probe's blocks.
            let mut blocks = self.blocks.try_borrow_mut().ok();
            table
                .stored_code_in(side, index, blocks.as_deref_mut())
                .map_err(|e| ProbeError::Table(Arc::new(e)))?
        };
        match self.kind {
            ValueKind::Dtw | ValueKind::Dtc => Ok(Code::from_bits(raw)),
            // A WLD file holds 2-bit values and its reader refuses the code 3, so this
            // error stands only for a broken invariant, never for a guessed value.
            ValueKind::Wld => WldCode::from_bits(raw).map(WldCode::code).ok_or_else(|| {
                let bl = u64::from(table.header().block_len.max(1));
                Miss::Error(ProbeError::Table(Arc::new(TableError::Format {
                    path: table.path().to_path_buf(),
                    source: FormatError::InvalidCode {
                        offset: usize::try_from(index % bl).unwrap_or(usize::MAX),
                        code: raw,
                    },
                })))
            }),
        }
    }
}
