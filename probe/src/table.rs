//! Reading one table file: memory-mapped, validated at open, blocks decompressed on demand
//! into a [`BlockCache`] shared by many tables.
//!
//! [`TableFile`] is `Send + Sync`: probes may come from many threads at once.

use std::cell::UnsafeCell;
use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use memmap2::Mmap;
use quick_cache::sync::Cache;
use quick_cache::Weighter;

use crate::format::{
    block_crc, block_range, check_block_table, unpack_value, FormatError, Header, HEADER_LEN,
};

/// Errors from opening or reading a table file. Every message starts with the file path; the
/// underlying error, where there is one, is the [`source`](std::error::Error::source)
/// ([`crate::report`] prints the whole chain).
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// The file could not be opened, inspected or mapped.
    #[error("{}", path.display())]
    Io {
        /// The table file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The file's bytes are not a valid table (corrupt, truncated, foreign, wrong version).
    #[error("{}", path.display())]
    Format {
        /// The table file.
        path: PathBuf,
        /// What is wrong.
        source: FormatError,
    },
    /// A value was asked for at an index not below the table's positions per side.
    #[error("{}: index {index} out of range for side {side} (the table has {positions} positions per side)", path.display())]
    IndexOutOfRange {
        /// The table file.
        path: PathBuf,
        /// Side to move asked for (0 white, 1 black).
        side: usize,
        /// Index asked for.
        index: u64,
        /// Positions per side in the table.
        positions: u64,
    },
    /// A value was asked for a side to move whose values the table does not store.
    #[error("{}: side {side} ({}) is not stored in this table", path.display(), side_name(*side))]
    SideNotStored {
        /// The table file.
        path: PathBuf,
        /// Side to move asked for (0 white, 1 black; anything else is never stored).
        side: usize,
    },
    /// A block number not below the table's block count.
    #[error("{}: block {block} out of range (the table has {block_count} blocks)", path.display())]
    BlockOutOfRange {
        /// The table file.
        path: PathBuf,
        /// Block asked for.
        block: u32,
        /// Blocks in the table.
        block_count: u32,
    },
}

fn side_name(side: usize) -> &'static str {
    match side {
        0 => "white to move",
        1 => "black to move",
        _ => "no such side",
    }
}

impl TableError {
    /// The table file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            TableError::Io { path, .. }
            | TableError::Format { path, .. }
            | TableError::IndexOutOfRange { path, .. }
            | TableError::SideNotStored { path, .. }
            | TableError::BlockOutOfRange { path, .. } => path,
        }
    }

    /// The format error, if this is one.
    pub fn format_error(&self) -> Option<&FormatError> {
        match self {
            TableError::Format { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Blocks each probing thread keeps at hand, direct-mapped by table id and block number, at
/// most (4 MiB with 16 KiB blocks). The slots belong to the [`BlockCache`] (one set per
/// thread, [`THREAD_SETS`] sets), so they go when it goes, and the bytes they hold count in
/// its bound: all threads' slots together hold at most a quarter of it
/// ([`BlockCache::new`]); a cache of 0 bytes keeps none.
const RECENT_SLOTS: usize = 256;
const _: () = assert!(RECENT_SLOTS.is_power_of_two());

/// Sets of recent-block slots in a cache: thread `n` (numbered as threads first probe)
/// uses set `n % THREAD_SETS`. Beyond this many threads, two may share a set; a thread that
/// finds its set in use reads the shared cache instead of waiting.
const THREAD_SETS: usize = 64;

/// A thread's recently used block: (table id, block number, decompressed bytes).
type Recent = Option<(u64, u32, Arc<[u8]>)>;

/// One thread's recent-block slots (empty until the thread first keeps a block) and the
/// bytes they hold.
#[derive(Default)]
struct Slots {
    slots: Vec<Recent>,
    bytes: u64,
}

/// A [`Slots`] behind its own try-lock, alone on its cache line: only its thread takes it
/// (uncontended but for [`BlockCache::clear`] and threads beyond [`THREAD_SETS`]). A
/// one-flag lock rather than a `Mutex`: taking it is one compare-and-swap and releasing it
/// a plain store, on every probe's look-up.
#[derive(Default)]
#[repr(align(64))]
struct SlotSet {
    busy: AtomicBool,
    slots: UnsafeCell<Slots>,
}

// SAFETY: `slots` is only reached through a `SlotGuard`, and at most one exists per set at a
// time (`try_lock` sets `busy` with a compare-and-swap that succeeds for one caller until the
// guard's drop clears it, with acquire/release ordering between holders). `Slots` is `Send`.
unsafe impl Sync for SlotSet {}

impl SlotSet {
    /// The set's slots, if no one else holds them now.
    #[inline]
    fn try_lock(&self) -> Option<SlotGuard<'_>> {
        self.busy
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| SlotGuard(self))
    }

    /// The set's slots, waiting for another holder to let go (held only for a look-up).
    fn lock(&self) -> SlotGuard<'_> {
        loop {
            if let Some(g) = self.try_lock() {
                return g;
            }
            std::thread::yield_now();
        }
    }
}

/// Exclusive access to one [`SlotSet`]'s slots, released on drop.
struct SlotGuard<'a>(&'a SlotSet);

impl std::ops::Deref for SlotGuard<'_> {
    type Target = Slots;
    #[inline]
    fn deref(&self) -> &Slots {
        // SAFETY: this guard holds the set's `busy` flag, so no other reference to the slots
        // exists (see `SlotSet`'s `Sync`).
        unsafe { &*self.0.slots.get() }
    }
}

impl std::ops::DerefMut for SlotGuard<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut Slots {
        // SAFETY: as `deref`; `&mut self` makes this the only use of the guard.
        unsafe { &mut *self.0.slots.get() }
    }
}

impl Drop for SlotGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.busy.store(false, Ordering::Release);
    }
}

thread_local! {
    /// This thread's number, given when it first touches a cache.
    static THREAD_NO: usize = {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        NEXT.fetch_add(1, Ordering::Relaxed)
    };

    /// One zstd decompression context per thread: creating one costs more than decompressing
    /// a small block.
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Decompress one zstd frame into `out` with this thread's context; returns the bytes
/// written (an error if the frame holds more than `out`).
fn decompress_into(compressed: &[u8], out: &mut [u8]) -> io::Result<usize> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.try_borrow_mut().map_err(io::Error::other)?;
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new()?);
        }
        match slot.as_mut() {
            Some(d) => d.decompress_to_buffer(compressed, out),
            None => Err(io::Error::other("no zstd decompressor")),
        }
    })
}

/// Blocks a probe keeps while it runs ([`ProbeBlocks`]).
const PROBE_BLOCKS: usize = 4;

/// The blocks one probe has read through a cache that keeps nothing (0 bytes), kept until
/// it returns, so that a probe reading several values (a threat position's one-ply search,
/// a capture search, ranking moves) decompresses each block once. At most [`PROBE_BLOCKS`]
/// blocks, the oldest replaced first; they are outside the cache's bound ([`BlockCache`]'s
/// Memory section) and freed with the probe. Used from one thread only.
#[derive(Default)]
pub(crate) struct ProbeBlocks {
    held: [Recent; PROBE_BLOCKS],
    next: usize,
}

impl ProbeBlocks {
    #[inline]
    fn get(&self, id: u64, block: u32) -> Option<&Arc<[u8]>> {
        self.held
            .iter()
            .flatten()
            .find(|(i, b, _)| *i == id && *b == block)
            .map(|(_, _, raw)| raw)
    }

    fn keep(&mut self, id: u64, block: u32, raw: Arc<[u8]>) {
        if let Some(slot) = self.held.get_mut(self.next) {
            *slot = Some((id, block, raw));
        }
        self.next = (self.next + 1) % PROBE_BLOCKS;
    }
}

/// Key of a cached block: (table id, block number).
type BlockKey = (u64, u32);

/// Weighs a cached block by its length in bytes (at least 1, so every entry can be evicted).
#[derive(Clone, Copy, Debug, Default)]
struct ByteWeighter;

impl Weighter<BlockKey, Arc<[u8]>> for ByteWeighter {
    fn weight(&self, _key: &BlockKey, val: &Arc<[u8]>) -> u64 {
        (val.len() as u64).max(1)
    }
}

/// Typical decompressed block size assumed when sizing the cache's internal tables.
const TYPICAL_BLOCK_BYTES: usize = 16 * 1024;

/// Counters striped over cache lines, so that threads counting at once do not contend on one
/// line (a shared counter on every probe is what kept cached probes from scaling).
const STRIPES: usize = 16;

#[derive(Default)]
#[repr(align(64))]
struct Stripe {
    hits: AtomicU64,
    misses: AtomicU64,
    not_cached: AtomicU64,
}

/// What a [`BlockCache`] has done and holds: [`BlockCache::stats`], [`crate::Tablebase::cache_stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Block look-ups answered from memory (this thread's recent blocks, the shared cache, or
    /// a block the same probe has already read: the only hits a 0-byte cache has).
    pub hits: u64,
    /// Block look-ups that read, checked and decompressed a block from its file.
    pub misses: u64,
    /// Cache-only look-ups ([`TableFile::cached_code`]) that found the block not in memory
    /// and so gave no value.
    pub not_cached: u64,
    /// Bytes of decompressed blocks held by the shared cache now.
    pub bytes: u64,
    /// Blocks held by the shared cache now.
    pub blocks: usize,
    /// Bytes of decompressed blocks held by the probing threads' recent-block slots now (a
    /// block also in the shared cache counted again). `bytes + thread_bytes` is at most
    /// `capacity_bytes`.
    pub thread_bytes: u64,
    /// The bound, in bytes: given at creation or by [`BlockCache::set_capacity`].
    pub capacity_bytes: usize,
}

/// A bounded cache of decompressed blocks, shared by any number of [`TableFile`]s (wrap it in
/// an `Arc`). Entries are keyed by table id and block number and weighed by their length in
/// bytes. Safe to use from many threads.
///
/// # Memory
/// `capacity_bytes` bounds every decompressed block it holds: three quarters for the shared
/// cache, a quarter for the recent-block slots of the threads probing through it (each
/// thread keeps up to 256 blocks at hand while the quarter lasts; first come, first served).
/// [`CacheStats::bytes`] and [`CacheStats::thread_bytes`] say what is held. Everything is
/// freed when the cache is dropped (with the last [`TableFile`] and
/// [`crate::Tablebase`] using it), whether or not the probing threads still run;
/// [`BlockCache::clear`] frees it at once and [`BlockCache::set_capacity`] changes the
/// bound. Outside the bound: each probing thread's zstd decompression context (about 100
/// KiB, kept until the thread exits) and blocks in use by a probe under way (with a bound
/// of 0, up to four blocks a probe has read, kept until it returns so that it reads none
/// twice: 64 KiB with dtb's WLD blocks of 16 KiB).
pub struct BlockCache {
    cache: Cache<BlockKey, Arc<[u8]>, ByteWeighter>,
    capacity_bytes: AtomicUsize,
    /// Bytes the threads' slots may hold together: `capacity_bytes / 4`.
    thread_budget: AtomicU64,
    /// Bytes the threads' slots hold now (the sum of their [`Slots::bytes`]).
    thread_bytes: AtomicU64,
    threads: Box<[SlotSet]>,
    stripes: [Stripe; STRIPES],
}

/// The shared cache's part of a bound of `capacity` bytes, and the threads' slots' part.
fn split_capacity(capacity: usize) -> (u64, u64) {
    let threads = capacity as u64 / 4;
    (capacity as u64 - threads, threads)
}

impl BlockCache {
    /// A cache holding up to `capacity_bytes` bytes of decompressed blocks, the probing
    /// threads' recent blocks included (see [Memory](BlockCache#memory)). A block larger than
    /// the shared cache's part (or than one of its internal shards) is returned but not kept.
    pub fn new(capacity_bytes: usize) -> BlockCache {
        let (shared, threads) = split_capacity(capacity_bytes);
        let items = (shared as usize / TYPICAL_BLOCK_BYTES).max(1);
        BlockCache {
            cache: Cache::with_weighter(items, shared, ByteWeighter),
            capacity_bytes: AtomicUsize::new(capacity_bytes),
            thread_budget: AtomicU64::new(threads),
            thread_bytes: AtomicU64::new(0),
            threads: (0..THREAD_SETS).map(|_| SlotSet::default()).collect(),
            stripes: Default::default(),
        }
    }

    fn stripe(&self) -> &Stripe {
        &self.stripes[THREAD_NO.with(|n| *n) % STRIPES]
    }

    /// This thread's slot set, if no other thread holds it now.
    #[inline]
    fn my_slots(&self) -> Option<SlotGuard<'_>> {
        self.threads[THREAD_NO.with(|n| *n) % THREAD_SETS].try_lock()
    }

    /// Keeps `raw` (block `block` of table `id`) in slot `slot` of this thread's set, if the
    /// threads' part of the bound has room for it.
    fn keep_recent(&self, slot: usize, id: u64, block: u32, raw: Arc<[u8]>) {
        let Some(mut set) = self.my_slots() else {
            return;
        };
        let add = raw.len() as u64;
        let budget = self.thread_budget.load(Ordering::Relaxed);
        if set.slots.is_empty() {
            if add > budget {
                return;
            }
            set.slots = vec![None; RECENT_SLOTS];
        }
        let old = set.slots[slot]
            .as_ref()
            .map_or(0, |(_, _, r)| r.len() as u64);
        // Reserve the difference first, and only if it fits, so that threads filling slots
        // at once stay within the budget together at every moment.
        if add > old {
            let grow = add - old;
            let reserved =
                self.thread_bytes
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                        (held + grow <= budget).then_some(held + grow)
                    });
            if reserved.is_err() {
                return;
            }
        } else {
            self.thread_bytes.fetch_sub(old - add, Ordering::Relaxed);
        }
        set.bytes = set.bytes - old + add;
        set.slots[slot] = Some((id, block, raw));
    }

    /// Empties every thread's slots (taking each set's lock in turn).
    fn clear_threads(&self) {
        for set in self.threads.iter() {
            let mut s = set.lock();
            let freed = std::mem::take(&mut *s);
            self.thread_bytes.fetch_sub(freed.bytes, Ordering::Relaxed);
        }
    }

    /// Bytes held by the threads' recent-block slots now.
    pub fn thread_bytes(&self) -> u64 {
        self.thread_bytes.load(Ordering::Relaxed)
    }

    /// Sets the bound to `capacity_bytes` (shrinking or growing): the shared cache evicts
    /// down to its new part at once and every thread's slots are emptied (they refill within
    /// the new part). 0 keeps no block from then on.
    pub fn set_capacity(&self, capacity_bytes: usize) {
        let (shared, threads) = split_capacity(capacity_bytes);
        self.capacity_bytes.store(capacity_bytes, Ordering::Relaxed);
        self.thread_budget.store(threads, Ordering::Relaxed);
        self.cache.set_capacity(shared);
        self.clear_threads();
    }

    /// Hits, misses and cache-only misses counted since creation (or [`BlockCache::reset_stats`]),
    /// and the bytes and blocks held now.
    pub fn stats(&self) -> CacheStats {
        let sum = |f: fn(&Stripe) -> &AtomicU64| {
            self.stripes
                .iter()
                .map(|s| f(s).load(Ordering::Relaxed))
                .sum()
        };
        CacheStats {
            hits: sum(|s| &s.hits),
            misses: sum(|s| &s.misses),
            not_cached: sum(|s| &s.not_cached),
            bytes: self.weight(),
            blocks: self.len(),
            thread_bytes: self.thread_bytes(),
            capacity_bytes: self.capacity_bytes(),
        }
    }

    /// Counts a look-up answered from a probe's own blocks ([`ProbeBlocks`]) as a hit.
    fn count_hit(&self) {
        self.stripe().hits.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a cache-only look-up that found nothing in memory (a table not yet opened).
    pub(crate) fn count_not_cached(&self) {
        self.stripe().not_cached.fetch_add(1, Ordering::Relaxed);
    }

    /// Sets the hit, miss and cache-only miss counters to zero (the blocks held stay).
    pub fn reset_stats(&self) {
        for s in &self.stripes {
            s.hits.store(0, Ordering::Relaxed);
            s.misses.store(0, Ordering::Relaxed);
            s.not_cached.store(0, Ordering::Relaxed);
        }
    }

    /// The bound given to [`BlockCache::new`] (or [`BlockCache::set_capacity`]), in bytes.
    #[inline]
    pub fn capacity_bytes(&self) -> usize {
        self.capacity_bytes.load(Ordering::Relaxed)
    }

    /// Bytes of decompressed blocks held now by the shared cache (not counting the threads'
    /// slots: [`BlockCache::thread_bytes`]).
    fn weight(&self) -> u64 {
        self.cache.weight()
    }

    /// Number of blocks held now.
    pub fn len(&self) -> usize {
        self.cache.len()
    }

    /// Whether no block is held.
    pub fn is_empty(&self) -> bool {
        self.cache.is_empty()
    }

    /// Drops every cached block, the threads' recent blocks included.
    pub fn clear(&self) {
        self.cache.clear();
        self.clear_threads();
    }

    fn get_or_load(
        &self,
        key: BlockKey,
        load: impl FnOnce() -> Result<Arc<[u8]>, TableError>,
    ) -> Result<Arc<[u8]>, TableError> {
        let mut loaded = false;
        let r = self.cache.get_or_insert_with(&key, || {
            loaded = true;
            load()
        });
        let s = self.stripe();
        if loaded {
            s.misses.fetch_add(1, Ordering::Relaxed);
        } else {
            s.hits.fetch_add(1, Ordering::Relaxed);
        }
        r
    }

    /// The block if the shared cache holds it; counts a hit or a cache-only miss.
    fn get_cached(&self, key: BlockKey) -> Option<Arc<[u8]>> {
        let r = self.cache.get(&key);
        let s = self.stripe();
        if r.is_some() {
            s.hits.fetch_add(1, Ordering::Relaxed);
        } else {
            s.not_cached.fetch_add(1, Ordering::Relaxed);
        }
        r
    }
}

impl fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockCache")
            .field("capacity_bytes", &self.capacity_bytes())
            .field("weight", &self.weight())
            .field("thread_bytes", &self.thread_bytes())
            .field("len", &self.len())
            .finish()
    }
}

/// Source of [`TableFile`] ids, unique within the process, so tables can share a cache.
static NEXT_TABLE_ID: AtomicU64 = AtomicU64::new(1);

/// One open table file: memory-mapped, header and block table validated at open.
pub struct TableFile {
    path: PathBuf,
    map: Mmap,
    header: Header,
    id: u64,
    cache: Arc<BlockCache>,
}

impl fmt::Debug for TableFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableFile")
            .field("path", &self.path)
            .field("id", &self.id)
            .field("len", &self.map.len())
            .field("header", &self.header)
            .finish()
    }
}

impl TableFile {
    /// Opens and memory-maps the table at `path`, decodes and validates its header
    /// ([`Header::decode`]) and its block table ([`check_block_table`]). Blocks are not read
    /// until asked for; [`TableFile::verify_payload`] checks them all.
    ///
    /// Errors: [`TableError::Io`] if the file cannot be opened, is not a regular file or
    /// cannot be mapped; [`TableError::Format`] for an empty, truncated, foreign, wrong-version
    /// or corrupt-header file, or an inconsistent block table.
    pub fn open(path: &Path, cache: Arc<BlockCache>) -> Result<TableFile, TableError> {
        let io_err = |source| TableError::Io {
            path: path.to_path_buf(),
            source,
        };
        let fmt_err = |source| TableError::Format {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io_err)?;
        let meta = file.metadata().map_err(io_err)?;
        if !meta.is_file() {
            return Err(io_err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            )));
        }
        if meta.len() < HEADER_LEN as u64 {
            return Err(fmt_err(FormatError::TooShort {
                len: meta.len(),
                needed: HEADER_LEN as u64,
            }));
        }
        // SAFETY: `Mmap::map` is unsafe because the mapped bytes may change (or vanish) if the
        // file is modified or truncated by anyone while it is mapped. dtb never modifies a table
        // in place: the writer writes to a temporary name in the same directory and renames the
        // finished file over the final name, so a mapped file keeps its contents. Against other
        // writers we do what we can: every read from the mapping is bounds-checked against its
        // length, every block is checksummed before it is decompressed and checked after, and
        // a changed file gives an error rather than a wrong value. A file truncated underneath
        // the mapping can still raise SIGBUS on access; that is outside what Rust can guard.
        let map = unsafe { Mmap::map(&file) }.map_err(io_err)?;
        let header = Header::decode(&map).map_err(fmt_err)?;
        check_block_table(&header, &map).map_err(fmt_err)?;
        Ok(TableFile {
            path: path.to_path_buf(),
            map,
            header,
            id: NEXT_TABLE_ID.fetch_add(1, Ordering::Relaxed),
            cache,
        })
    }

    /// The decoded header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The path the table was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The id that keys this table's blocks in the shared cache (unique within the process).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Length of the file in bytes.
    pub fn compressed_len(&self) -> u64 {
        self.map.len() as u64
    }

    fn format_error(&self, source: FormatError) -> TableError {
        TableError::Format {
            path: self.path.clone(),
            source,
        }
    }

    /// The block holding position `index` of `side`, and the position's offset in it.
    fn locate(&self, side: usize, index: u64) -> Result<(u32, usize), TableError> {
        if !self.header.side_stored(side) {
            return Err(TableError::SideNotStored {
                path: self.path.clone(),
                side,
            });
        }
        self.header
            .block_of(side, index)
            .ok_or_else(|| TableError::IndexOutOfRange {
                path: self.path.clone(),
                side,
                index,
                positions: self.header.positions_per_side,
            })
    }

    /// The code **stored** for position `index` for `side` (0 = white to move, 1 = black to
    /// move): WLD 0 draw / 1 win / 2 loss; DTW 0 draw, otherwise plies + 1 (see
    /// [`crate::format`]).
    ///
    /// # Not the game value of capture positions
    /// Where the side to move has a capture, the stored code is "don't care": whatever
    /// compressed best, often wrong (International `W:W28:B23`, a win in 1 ply, is stored as
    /// a draw). Only [`Tablebase`](crate::Tablebase)'s probes (which resolve captures by
    /// search, and colour-reverse positions of a side not stored) give game values; this is
    /// for checking and tooling that decide themselves which entries mean something.
    ///
    /// # Errors
    /// [`TableError::SideNotStored`], [`TableError::IndexOutOfRange`], or
    /// [`TableError::Format`] if the block holding the value is corrupt.
    pub fn stored_code(&self, side: usize, index: u64) -> Result<u16, TableError> {
        self.stored_code_in(side, index, None)
    }

    /// [`TableFile::stored_code`] for a probe that keeps the blocks it reads in `probe`. Only
    /// where the cache keeps nothing (0 bytes): a block found in `probe` is not read again,
    /// and a block read is kept there. Any other cache keeps the blocks a probe reads in
    /// this thread's recent blocks and the shared cache, and its cached look-ups take the
    /// same path as without `probe` (consulting `probe` after a recent-block miss measured
    /// 5% slower cached capture probes, cause not located).
    pub(crate) fn stored_code_in(
        &self,
        side: usize,
        index: u64,
        probe: Option<&mut ProbeBlocks>,
    ) -> Result<u16, TableError> {
        let (block, offset) = self.locate(side, index)?;
        let width = self.header.value_width;
        let unpack =
            |raw: &[u8]| unpack_value(width, raw, offset).map_err(|e| self.format_error(e));
        if self.cache.capacity_bytes() == 0 {
            if let Some(raw) = probe.as_deref().and_then(|p| p.get(self.id, block)) {
                self.cache.count_hit();
                return unpack(raw);
            }
            let raw = self.read_block(block)?;
            let v = unpack(&raw);
            if let Some(p) = probe {
                p.keep(self.id, block, raw);
            }
            return v;
        }
        let slot = self.recent_slot(block);
        if let Some(v) = self.recent_value(slot, block, offset) {
            return v;
        }
        let raw = self.read_block(block)?;
        let v = unpack(&raw);
        self.cache.keep_recent(slot, self.id, block, raw);
        v
    }

    /// [`TableFile::stored_code`] answered only from blocks already in memory (this thread's
    /// recent blocks or the shared cache): `Ok(None)` where the block holding the value is not
    /// there, without reading the file. What an engine asks deep in its search, where a
    /// block read costs more than the answer is worth (KingsRow's cache-only flag). A cache
    /// of 0 bytes holds nothing: always `Ok(None)`.
    ///
    /// # Errors
    /// As [`TableFile::stored_code`], except that no block is read, so none is found corrupt.
    pub fn cached_code(&self, side: usize, index: u64) -> Result<Option<u16>, TableError> {
        let (block, offset) = self.locate(side, index)?;
        if self.cache.capacity_bytes() == 0 {
            self.cache
                .stripe()
                .not_cached
                .fetch_add(1, Ordering::Relaxed);
            return Ok(None);
        }
        let slot = self.recent_slot(block);
        if let Some(v) = self.recent_value(slot, block, offset) {
            return v.map(Some);
        }
        let Some(raw) = self.cache.get_cached((self.id, block)) else {
            return Ok(None);
        };
        let v =
            unpack_value(self.header.value_width, &raw, offset).map_err(|e| self.format_error(e));
        self.cache.keep_recent(slot, self.id, block, raw);
        v.map(Some)
    }

    /// The slot of `block` among this thread's recent blocks: the top bits of a
    /// multiplicative hash of (table id, block), so that which blocks collide does not depend
    /// on how the table ids fell (the low bits of `id * odd` did: the same probes could hit
    /// this thread's blocks or miss them by the order the tables were opened in).
    fn recent_slot(&self, block: u32) -> usize {
        const G: u64 = 0x9E37_79B9_7F4A_7C15;
        let h = (self.id.wrapping_mul(G) ^ u64::from(block)).wrapping_mul(G);
        (h >> (64 - RECENT_SLOTS.trailing_zeros())) as usize
    }

    /// The value at `offset` of `block` if it is in this thread's recent blocks (a hit counted).
    /// A hit there touches no shared state beyond this thread's stripe of the counters (the
    /// shared cache's shard lock and the block's reference count are what kept cached probes
    /// from scaling across threads).
    fn recent_value(
        &self,
        slot: usize,
        block: u32,
        offset: usize,
    ) -> Option<Result<u16, TableError>> {
        let width = self.header.value_width;
        let set = self.cache.my_slots()?;
        let hit = match set.slots.get(slot) {
            Some(Some((id, b, raw))) if *id == self.id && *b == block => {
                unpack_value(width, raw, offset)
            }
            _ => return None,
        };
        drop(set);
        self.cache.stripe().hits.fetch_add(1, Ordering::Relaxed);
        Some(hit.map_err(|e| self.format_error(e)))
    }

    /// The decompressed bytes of `block` (numbered as in [`Header::block_of`]), from the cache
    /// or, on a miss, checksummed, decompressed and checked ([`Header::check_block`]) and then
    /// cached.
    pub fn read_block(&self, block: u32) -> Result<Arc<[u8]>, TableError> {
        if block >= self.header.block_count {
            return Err(TableError::BlockOutOfRange {
                path: self.path.clone(),
                block,
                block_count: self.header.block_count,
            });
        }
        if self.cache.capacity_bytes() == 0 {
            // Nothing would be kept: no look-up, no placeholder, only the count.
            self.cache.stripe().misses.fetch_add(1, Ordering::Relaxed);
            return self.load_block(block);
        }
        self.cache
            .get_or_load((self.id, block), || self.load_block(block))
    }

    /// Reads, checks and decompresses `block` without the cache.
    fn load_block(&self, block: u32) -> Result<Arc<[u8]>, TableError> {
        self.decompress_block(block)
            .map_err(|e| self.format_error(e))
    }

    fn decompress_block(&self, block: u32) -> Result<Arc<[u8]>, FormatError> {
        let (start, end) = block_range(&self.header, &self.map, block)?;
        let compressed = self
            .map
            .get(start..end)
            .ok_or_else(|| FormatError::BlockTable(format!("block {block} is out of the file")))?;
        let stored = block_crc(&self.header, &self.map, block).ok_or_else(|| {
            FormatError::BlockTable(format!("checksum of block {block} is out of the file"))
        })?;
        if crc32fast::hash(compressed) != stored {
            return Err(FormatError::BlockChecksum(block));
        }
        let expected = self.header.raw_block_len(block);
        // Decompressed where it is kept: one allocation of the block's length, no copy.
        let mut raw: Arc<[u8]> = std::iter::repeat_n(0u8, expected).collect();
        let out = Arc::get_mut(&mut raw).ok_or_else(|| {
            FormatError::Decompress(block, "block buffer shared before it was filled".into())
        })?;
        let len = decompress_into(compressed, out)
            .map_err(|e| FormatError::Decompress(block, e.to_string()))?;
        if len != expected {
            return Err(FormatError::BlockSize {
                block,
                expected,
                actual: len,
            });
        }
        self.header.check_block(block, &raw)?;
        Ok(raw)
    }

    /// Checks the payload checksum over every byte after the header, without decompressing
    /// anything: the bytes are those the writer wrote (and, for dtb's writer, read back and
    /// compared before the file got its name). Each block's own checksum and codes are still
    /// checked whenever it is read.
    pub fn verify_checksum(&self) -> Result<(), TableError> {
        let payload = self.map.get(HEADER_LEN..).unwrap_or(&[]);
        if crc32fast::hash(payload) != self.header.payload_crc {
            return Err(self.format_error(FormatError::PayloadChecksum));
        }
        Ok(())
    }

    /// Checks the whole file: the payload checksum over every byte after the header
    /// ([`TableFile::verify_checksum`]), then every block's checksum, decompressed length and
    /// codes. Does not touch the cache.
    pub fn verify_payload(&self) -> Result<(), TableError> {
        self.verify_checksum()?;
        for block in 0..self.header.block_count {
            self.decompress_block(block)
                .map_err(|e| self.format_error(e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{pack_values, ValueKind, FORMAT_VERSION, FORMAT_VERSION_TRUE};
    use std::sync::atomic::AtomicUsize;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn types_are_send_sync() {
        assert_send_sync::<TableFile>();
        assert_send_sync::<BlockCache>();
        assert_send_sync::<TableError>();
    }

    /// A scratch directory under the system temp dir, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(tag: &str) -> Scratch {
            static N: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "dtb-table-test-{}-{tag}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
        fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
            let p = self.0.join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    use crate::test_rng::Rng;

    /// Builds a table file in memory, following docs/FORMAT.md, independently of the writer in
    /// dtb-gen (which this crate cannot depend on).
    fn build(kind: ValueKind, width: u8, sides: u8, block_len: u32, data: &[Vec<u16>]) -> Vec<u8> {
        let n = data[0].len() as u64;
        let max_plies = match kind {
            ValueKind::Wld => 0,
            ValueKind::Dtw | ValueKind::Dtc => data
                .iter()
                .flatten()
                .max()
                .copied()
                .unwrap_or(0)
                .saturating_sub(1),
        };
        let mut h = Header {
            version: FORMAT_VERSION,
            kind,
            value_width: width,
            variant: "english".into(),
            rules_code: [7; 16],
            material: [1, 1, 0, 2],
            sides,
            positions_per_side: n,
            block_len,
            block_count: 0,
            counts: [[10, 20, 30], [40, 50, 60]],
            max_plies,
            count_code: [0; 16],
            cursed: [[0; 2]; 2],
            payload_crc: 0,
        };
        h.block_count = h.expected_block_count().unwrap();
        let mut blocks = Vec::new();
        for side in data {
            for chunk in side.chunks(block_len as usize) {
                let raw = pack_values(width, chunk).unwrap();
                blocks.push(zstd::bulk::compress(&raw, 3).unwrap());
            }
        }
        assert_eq!(blocks.len(), h.block_count as usize);
        let mut payload = Vec::new();
        let mut off = h.data_start();
        for b in &blocks {
            payload.extend_from_slice(&off.to_le_bytes());
            off += b.len() as u64;
        }
        payload.extend_from_slice(&off.to_le_bytes());
        for b in &blocks {
            payload.extend_from_slice(&crc32fast::hash(b).to_le_bytes());
        }
        for b in &blocks {
            payload.extend_from_slice(b);
        }
        h.payload_crc = crc32fast::hash(&payload);
        let mut file = h.encode().to_vec();
        file.extend_from_slice(&payload);
        file
    }

    fn codes(rng: &mut Rng, n: usize, max: u16) -> Vec<u16> {
        // Runs of equal values, like real tables, so blocks compress.
        let mut v = Vec::with_capacity(n);
        while v.len() < n {
            let c = (rng.next() % (u64::from(max) + 1)) as u16;
            let run = 1 + (rng.next() % 20) as usize;
            for _ in 0..run.min(n - v.len()) {
                v.push(c);
            }
        }
        v
    }

    fn cache() -> Arc<BlockCache> {
        Arc::new(BlockCache::new(1 << 20))
    }

    /// Opens, verifies and reads every value of `path`; returns the first error, never panics.
    fn exercise(path: &Path, n: u64) -> Result<(), TableError> {
        let t = TableFile::open(path, cache())?;
        let v = t.verify_payload();
        let mut first = v.err();
        for side in 0..2 {
            if !t.header().side_stored(side) {
                continue;
            }
            for i in 0..n.min(t.header().positions_per_side) {
                if let Err(e) = t.stored_code(side, i) {
                    first.get_or_insert(e);
                }
            }
        }
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    #[test]
    fn reads_back_every_value() {
        let dir = Scratch::new("read");
        let mut rng = Rng(1);
        for (kind, width, max) in [
            (ValueKind::Wld, 2, 2u16),
            (ValueKind::Dtw, 8, 255),
            (ValueKind::Dtw, 16, 3000),
        ] {
            let n = 3333;
            let data = vec![codes(&mut rng, n, max), codes(&mut rng, n, max)];
            let bytes = build(kind, width, 3, 500, &data);
            let path = dir.file(&format!("t.{}", kind.extension()), &bytes);
            let t = TableFile::open(&path, cache()).unwrap();
            assert_eq!(t.header().block_count, 14);
            assert_eq!(t.header().counts, [[10, 20, 30], [40, 50, 60]]);
            assert_eq!(t.compressed_len(), bytes.len() as u64);
            t.verify_payload().unwrap();
            for (side, vals) in data.iter().enumerate() {
                for (i, &c) in vals.iter().enumerate() {
                    assert_eq!(
                        t.stored_code(side, i as u64).unwrap(),
                        c,
                        "{kind:?} side {side} i {i}"
                    );
                }
            }
            let last = t.read_block(13).unwrap();
            assert_eq!(last.len(), crate::format::packed_len(width, 333));
            let e = t.stored_code(0, n as u64).unwrap_err();
            assert!(matches!(
                e,
                TableError::IndexOutOfRange {
                    index: 3333,
                    positions: 3333,
                    ..
                }
            ));
            assert!(e.to_string().starts_with(&path.display().to_string()));
            assert!(matches!(
                t.stored_code(2, 0),
                Err(TableError::SideNotStored { side: 2, .. })
            ));
            assert!(matches!(
                t.read_block(14),
                Err(TableError::BlockOutOfRange {
                    block: 14,
                    block_count: 14,
                    ..
                })
            ));
        }
    }

    #[test]
    fn one_side_only() {
        let dir = Scratch::new("side");
        let data = vec![(0..1001u16).map(|i| i % 3).collect::<Vec<_>>()];
        let path = dir.file("b.wld", &build(ValueKind::Wld, 2, 2, 100, &data));
        let t = TableFile::open(&path, cache()).unwrap();
        t.verify_payload().unwrap();
        assert_eq!(t.header().block_count, 11);
        assert!(matches!(
            t.stored_code(0, 0),
            Err(TableError::SideNotStored { side: 0, .. })
        ));
        for i in 0..1001u64 {
            assert_eq!(t.stored_code(1, i).unwrap(), (i % 3) as u16);
        }
    }

    #[test]
    fn empty_table() {
        let dir = Scratch::new("empty");
        let path = dir.file("e.wld", &build(ValueKind::Wld, 2, 3, 64, &[vec![], vec![]]));
        let t = TableFile::open(&path, cache()).unwrap();
        assert_eq!(t.header().block_count, 0);
        t.verify_payload().unwrap();
        assert!(matches!(
            t.stored_code(0, 0),
            Err(TableError::IndexOutOfRange { .. })
        ));
    }

    #[test]
    fn shared_small_cache_and_threads() {
        let dir = Scratch::new("threads");
        let mut rng = Rng(2);
        let data = vec![codes(&mut rng, 20_000, 200), codes(&mut rng, 20_000, 200)];
        let path = dir.file("d.dtw", &build(ValueKind::Dtw, 8, 3, 1000, &data));
        // A cache far smaller than the table: blocks are evicted and reloaded.
        let shared = Arc::new(BlockCache::new(4 * 1000));
        let t1 = Arc::new(TableFile::open(&path, shared.clone()).unwrap());
        let t2 = TableFile::open(&path, shared.clone()).unwrap();
        assert_ne!(t1.id(), t2.id());
        let data = Arc::new(data);
        let handles: Vec<_> = (0..4)
            .map(|k| {
                let t = t1.clone();
                let data = data.clone();
                std::thread::spawn(move || {
                    for i in (k..20_000).step_by(3) {
                        let side = i % 2;
                        assert_eq!(t.stored_code(side, i as u64).unwrap(), data[side][i]);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(t2.stored_code(1, 19_999).unwrap(), data[1][19_999]);
        assert!(shared.weight() <= 4 * 1000 + 1000);
        shared.clear();
        assert!(shared.is_empty());
        assert_eq!(t2.stored_code(0, 5).unwrap(), data[0][5]);
        assert_eq!(shared.len(), 1);
    }

    fn fmt_err(r: Result<TableFile, TableError>, path: &Path) -> FormatError {
        match r {
            Err(TableError::Format { path: p, source }) => {
                assert_eq!(p, path);
                source
            }
            other => panic!("expected a format error, got {other:?}"),
        }
    }

    #[test]
    fn rejects_bad_files_at_open() {
        let dir = Scratch::new("bad");
        let mut rng = Rng(3);
        let data = vec![codes(&mut rng, 2000, 2), codes(&mut rng, 2000, 2)];
        let good = build(ValueKind::Wld, 2, 3, 300, &data);

        let p = dir.file("zero.wld", &[]);
        let e = TableFile::open(&p, cache()).unwrap_err();
        assert!(e.to_string().contains("zero.wld"), "{e}");
        assert!(matches!(
            e.format_error(),
            Some(FormatError::TooShort {
                len: 0,
                needed: 256
            })
        ));

        let missing = dir.0.join("missing.wld");
        let e = TableFile::open(&missing, cache()).unwrap_err();
        assert!(
            matches!(&e, TableError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
        );
        assert!(e.to_string().contains("missing.wld"));

        let e = TableFile::open(&dir.0, cache()).unwrap_err();
        assert!(matches!(e, TableError::Io { .. }));

        // Truncations: inside the header, inside the block table, inside the blocks, one byte.
        let table_end = 256 + 15 * 8 + 14 * 4;
        for cut in [
            1,
            100,
            255,
            256,
            300,
            table_end - 1,
            table_end,
            table_end + 10,
            good.len() - 1,
        ] {
            let p = dir.file("cut.wld", &good[..cut]);
            match fmt_err(TableFile::open(&p, cache()), &p) {
                FormatError::TooShort { len, .. } => assert_eq!(len, cut as u64),
                FormatError::FileLength { expected, actual } => {
                    assert_eq!(expected, good.len() as u64);
                    assert_eq!(actual, cut as u64);
                }
                other => panic!("cut at {cut}: unexpected {other:?}"),
            }
        }
        // Trailing garbage.
        let mut longer = good.clone();
        longer.push(0);
        let p = dir.file("long.wld", &longer);
        assert!(matches!(
            fmt_err(TableFile::open(&p, cache()), &p),
            FormatError::FileLength { .. }
        ));

        let mut b = good.clone();
        b[..8].copy_from_slice(b"PNG\r\n\x1a\n\0");
        let p = dir.file("magic.wld", &b);
        let e = TableFile::open(&p, cache()).unwrap_err();
        assert!(
            crate::report(&e).contains("magic.wld: not a dtb table file"),
            "{e}"
        );
        assert!(matches!(e.format_error(), Some(FormatError::BadMagic)));

        let mut b = good.clone();
        b[8..12].copy_from_slice(&(FORMAT_VERSION_TRUE + 1).to_le_bytes());
        let p = dir.file("version.wld", &b);
        assert!(matches!(
            fmt_err(TableFile::open(&p, cache()), &p),
            FormatError::UnsupportedVersion(5)
        ));

        let mut b = good.clone();
        b[72] ^= 1; // positions_per_side
        let p = dir.file("hdr.wld", &b);
        assert!(matches!(
            fmt_err(TableFile::open(&p, cache()), &p),
            FormatError::HeaderChecksum
        ));

        let mut random = vec![0u8; good.len()];
        for x in random.iter_mut() {
            *x = rng.next() as u8;
        }
        let p = dir.file("random.wld", &random);
        assert!(matches!(
            fmt_err(TableFile::open(&p, cache()), &p),
            FormatError::BadMagic
        ));
        // Random bytes behind a valid magic and version.
        random[..12].copy_from_slice(&good[..12]);
        let p = dir.file("random2.wld", &random);
        assert!(matches!(
            fmt_err(TableFile::open(&p, cache()), &p),
            FormatError::HeaderChecksum
        ));

        // An offset moved, with a header that still checks out: caught by the block table check.
        let mut b = good.clone();
        let at = 256 + 8 * 3;
        let off = u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
        b[at..at + 8].copy_from_slice(&(off + 100_000).to_le_bytes());
        let p = dir.file("offset.wld", &b);
        assert!(matches!(
            fmt_err(TableFile::open(&p, cache()), &p),
            FormatError::BlockTable(_)
        ));
    }

    #[test]
    fn every_flipped_byte_is_caught() {
        let dir = Scratch::new("flip");
        let mut rng = Rng(4);
        for (kind, width, max) in [(ValueKind::Wld, 2, 2u16), (ValueKind::Dtw, 16, 999)] {
            let n = 1500;
            let data = vec![codes(&mut rng, n, max), codes(&mut rng, n, max)];
            let good = build(kind, width, 3, 400, &data);
            let p = dir.file("flip", &good);
            exercise(&p, n as u64).unwrap();
            let positions: Vec<usize> =
                (0..good.len()).step_by(7).chain([good.len() - 1]).collect();
            for &at in &positions {
                for mask in [0x01u8, 0x80] {
                    let mut b = good.clone();
                    b[at] ^= mask;
                    std::fs::write(&p, &b).unwrap();
                    let e = exercise(&p, n as u64).expect_err("a flipped byte went unnoticed");
                    assert_eq!(e.path(), p.as_path());
                    if (12..HEADER_LEN).contains(&at) {
                        assert!(matches!(
                            e.format_error(),
                            Some(FormatError::HeaderChecksum)
                        ));
                    }
                }
            }
        }
    }

    #[test]
    fn corrupt_block_found_by_value_and_verify() {
        let dir = Scratch::new("block");
        let mut rng = Rng(5);
        let data = vec![codes(&mut rng, 3000, 2), codes(&mut rng, 3000, 2)];
        let mut b = build(ValueKind::Wld, 2, 3, 1000, &data);
        let h = Header::decode(&b).unwrap();
        let (s, e) = block_range(&h, &b, 4).unwrap();
        b[(s + e) / 2] ^= 0x40;
        let p = dir.file("blk.wld", &b);
        let t = TableFile::open(&p, cache()).unwrap();
        // Values in other blocks still read.
        assert_eq!(t.stored_code(0, 0).unwrap(), data[0][0]);
        assert_eq!(t.stored_code(1, 2999).unwrap(), data[1][2999]);
        let err = t.stored_code(1, 1500).unwrap_err();
        assert!(matches!(
            err.format_error(),
            Some(FormatError::BlockChecksum(4))
        ));
        assert!(
            crate::report(&err).contains("blk.wld: block 4: checksum mismatch"),
            "{err}"
        );
        assert!(matches!(
            t.verify_payload().unwrap_err().format_error(),
            Some(FormatError::PayloadChecksum)
        ));
        // The checksum alone, without decompressing, finds it too.
        assert!(matches!(
            t.verify_checksum().unwrap_err().format_error(),
            Some(FormatError::PayloadChecksum)
        ));
    }

    #[test]
    fn bad_codes_behind_good_checksums() {
        // A writer bug (code 3 in a WLD block) is caught even though every checksum matches.
        let dir = Scratch::new("codes");
        let data = [vec![1u16; 10]];
        let mut h = Header {
            version: FORMAT_VERSION,
            kind: ValueKind::Wld,
            value_width: 2,
            variant: "english".into(),
            rules_code: [0; 16],
            material: [1, 0, 1, 0],
            sides: 1,
            positions_per_side: 10,
            block_len: 10,
            block_count: 1,
            counts: [[0; 3]; 2],
            max_plies: 0,
            count_code: [0; 16],
            cursed: [[0; 2]; 2],
            payload_crc: 0,
        };
        let mut raw = pack_values(2, &data[0]).unwrap();
        raw[1] |= 0b1100_0000; // value 7 := 3
        let block = zstd::bulk::compress(&raw, 1).unwrap();
        let mut payload = Vec::new();
        payload.extend_from_slice(&h.data_start().to_le_bytes());
        payload.extend_from_slice(&(h.data_start() + block.len() as u64).to_le_bytes());
        payload.extend_from_slice(&crc32fast::hash(&block).to_le_bytes());
        payload.extend_from_slice(&block);
        h.payload_crc = crc32fast::hash(&payload);
        let mut file = h.encode().to_vec();
        file.extend_from_slice(&payload);
        let p = dir.file("c.wld", &file);
        let t = TableFile::open(&p, cache()).unwrap();
        assert!(matches!(
            t.stored_code(0, 0).unwrap_err().format_error(),
            Some(FormatError::BlockCode {
                block: 0,
                offset: 7,
                code: 3
            })
        ));
        assert!(matches!(
            t.verify_payload().unwrap_err().format_error(),
            Some(FormatError::BlockCode {
                block: 0,
                offset: 7,
                code: 3
            })
        ));
    }
}
