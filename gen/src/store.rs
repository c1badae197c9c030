//! The values of solved slices held in memory while later slices are solved. A slice the
//! solver gave holds the true value of every position, capture positions included, so that a
//! successor in it is one look-up (no test for captures, no search). The files hold "don't
//! care" in capture positions (and, version 3, threat positions); a WLD slice loaded from its
//! file (a job of one slice, a resumed build) is held as read, and a look-up into it that
//! meets such a position resolves it then, by the search a prober runs
//! ([`dtb_probe::internal::value::resolve`]), remembering the outcome (2 bits a position).
//! That gives exactly the values the solver had, so a job or a resumed build computes the
//! same tables as one build that never stopped (tested), and reading an input costs its
//! decompression and the positions the solver looks up, not a search of every capture and
//! threat position of every input. A DTW slice (no 2-bit memo for distances) is resolved
//! whole when it is loaded. A slice's values file (`dtb gen --keep-values`, format version
//! 4) holds every true value, as the solver gave them: read from it, a slice is held as a
//! solved one, with no search and no memo.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use dtb_probe::internal::count::CountProfile;
use dtb_probe::internal::format::{unpack_value, ValueKind, WldCode, FORMAT_VERSION_TRUE};
use dtb_probe::internal::index::{KingRow, KingsRanker, SliceIndex};
use dtb_probe::internal::material::Material;
use dtb_probe::internal::position::Position;
use dtb_probe::internal::rules::{Color, Rules};
use dtb_probe::internal::table::{BlockCache, TableError, TableFile};
use dtb_probe::internal::tablebase::ProbeError;
use dtb_probe::internal::value::{
    is_threat_dont_care, normalize, threat_moves_all_safe, Best, Code, ValueSource, LOST,
};
use dtb_probe::movegen::{has_capture, legal_moves, single_jumps, Counting};

use crate::finished::{mark_loss_draw, Finished, TableSource};
use crate::packed::{code_of_bits, pack_codes, unspread, PackedWld, EVEN};
use crate::scratch::{Scratch, ScratchKind};

/// One side's stored values: DTW codes, or (in a WLD-only build) outcomes packed two bits
/// a position, 32 a word, as [`WldCode`]s.
pub enum Codes {
    Dtw(Vec<Code>),
    Wld(Vec<u64>),
    /// Packed outcomes as in `Wld`, or DTW codes as in `Dtw`, in a scratch file mapped into
    /// memory (read-only): what a build whose finished slices do not fit its memory budget
    /// keeps, the operating system's page cache holding what is used ([`crate::scratch::Spill`]).
    Mapped(Arc<Scratch>),
}

impl Codes {
    /// The outcomes of value codes (DTW codes, or WLD codes with nominal distances), packed.
    pub fn wld_of_codes(values: &[Code]) -> Codes {
        Codes::Wld(pack_codes(values))
    }

    /// The code at `i` (a WLD outcome with its nominal distance), `None` past the end
    /// (`len` values are held).
    #[inline]
    fn get(&self, i: usize, len: u64) -> Option<Code> {
        let bits = match self {
            Codes::Dtw(v) => return v.get(i).copied(),
            _ if i as u64 >= len => return None,
            Codes::Wld(w) => (w.get(i / 32)? >> (2 * (i % 32))) & 3,
            Codes::Mapped(f) if f.kind() == ScratchKind::Dtw => {
                let b = f.bytes().get(2 * i..2 * i + 2)?;
                return Some(Code::from_bits(u16::from_le_bytes([b[0], b[1]])));
            }
            // Little-endian words: position i is in byte i / 4.
            Codes::Mapped(f) => u64::from(*f.bytes().get(i / 4)? >> (2 * (i % 4)) & 3),
        };
        Some(code_of_bits(bits).code())
    }

    /// The 2-bit codes of positions `i .. i + n` (`n` from 1 to 32) as the fields of a word,
    /// position `i` lowest, the bits above them 0; `None` for DTW codes or past the end
    /// (`len` values are held).
    #[inline(always)]
    fn fields(&self, i: u64, n: u32, len: u64) -> Option<u64> {
        debug_assert!((1..=32).contains(&n));
        if i + u64::from(n) > len {
            return None;
        }
        let keep = u64::MAX >> (64 - 2 * n);
        let v = match self {
            Codes::Dtw(_) => return None,
            Codes::Wld(w) => {
                let (k, o) = ((i / 32) as usize, (i % 32) as u32);
                let mut v = *w.get(k)? >> (2 * o);
                if o + n > 32 {
                    v |= *w.get(k + 1)? << (64 - 2 * o);
                }
                v
            }
            Codes::Mapped(f) if f.kind() == ScratchKind::Dtw => return None,
            // Little-endian words: position i is in byte i / 4; at most 9 bytes.
            Codes::Mapped(f) => {
                let (a, b) = ((i / 4) as usize, ((i + u64::from(n) - 1) / 4) as usize);
                let mut buf = [0u8; 16];
                buf[..=b - a].copy_from_slice(f.bytes().get(a..=b)?);
                (u128::from_le_bytes(buf) >> (2 * (i % 4))) as u64
            }
        };
        Some(v & keep)
    }

    /// Whether these are outcomes packed 2 bits a position (in memory or in a scratch
    /// file), not DTW codes.
    fn is_packed(&self) -> bool {
        match self {
            Codes::Dtw(_) => false,
            Codes::Wld(_) => true,
            Codes::Mapped(f) => f.kind() == ScratchKind::Wld,
        }
    }

    /// Bytes of memory held (a mapped file: none of its own).
    fn bytes(&self) -> u64 {
        match self {
            Codes::Dtw(v) => v.len() as u64 * 2,
            Codes::Wld(w) => w.len() as u64 * 8,
            Codes::Mapped(_) => 0,
        }
    }

    /// Bytes of scratch files.
    fn disk_bytes(&self) -> u64 {
        match self {
            Codes::Mapped(f) => f.len(),
            _ => 0,
        }
    }
}

/// The values of the side whose blocks start at `first` in `table`, read block by block on
/// all worker threads (every block checked as [`TableFile::read_block`] does). WLD values
/// are packed as they are read (the largest 7-piece slice would need 2.8 GB a side as 16-bit
/// codes); a block of a multiple of 32 positions is copied as words, since the file's bytes
/// hold four 2-bit codes each in the order of the store's words.
fn read_side(table: &TableFile, kind: ValueKind, first: u32) -> Result<Codes, TableError> {
    use rayon::prelude::*;
    let h = table.header();
    let len = h.positions_per_side as usize;
    let block_len = h.block_len as usize;
    let format = |source| TableError::Format {
        path: table.path().to_path_buf(),
        source,
    };
    // Block `k` of the side: its checked bytes.
    let raw = |k: usize| -> Result<Arc<[u8]>, TableError> {
        let block = first.saturating_add(u32::try_from(k).unwrap_or(u32::MAX));
        table.read_block(block)
    };
    match kind {
        ValueKind::Wld if block_len.is_multiple_of(32) && block_len > 0 => {
            let mut w = vec![0u64; len.div_ceil(32)];
            w.par_chunks_mut(block_len / 32).enumerate().try_for_each(
                |(k, words)| -> Result<(), TableError> {
                    let raw = raw(k)?;
                    for (word, bytes) in words.iter_mut().zip(raw.chunks(8)) {
                        let mut b = [0u8; 8];
                        b[..bytes.len()].copy_from_slice(bytes);
                        *word = u64::from_le_bytes(b);
                    }
                    Ok(())
                },
            )?;
            Ok(Codes::Wld(w))
        }
        ValueKind::Wld => {
            // Blocks that split a word: value by value, in order.
            let mut w = vec![0u64; len.div_ceil(32)];
            let mut i = 0usize;
            for k in 0..h.blocks_per_side() as usize {
                let raw = raw(k)?;
                for j in 0..h.block_values(first + k as u32) {
                    let code = unpack_value(h.value_width, &raw, j).map_err(format)?;
                    w[i / 32] |= u64::from(code & 3) << (2 * (i % 32));
                    i += 1;
                }
            }
            Ok(Codes::Wld(w))
        }
        ValueKind::Dtw | ValueKind::Dtc => {
            let mut v = vec![Code::from_bits(0); len];
            v.par_chunks_mut(block_len.max(1))
                .enumerate()
                .try_for_each(|(k, codes)| -> Result<(), TableError> {
                    let raw = raw(k)?;
                    for (j, c) in codes.iter_mut().enumerate() {
                        *c = Code::from_bits(unpack_value(h.value_width, &raw, j).map_err(format)?);
                    }
                    Ok(())
                })?;
            Ok(Codes::Dtw(v))
        }
    }
}

/// A slice's stored codes per side (`None` for a side not stored: the colour-symmetric
/// slices keep White to move only).
pub struct StoredSlice {
    index: SliceIndex,
    sides: [Option<Codes>; 2],
    dont_care: DontCare,
    /// Of a WLD slice read from its file, per stored side: what look-ups found, 2 bits a
    /// position (0 not looked up yet; else the true outcome's [`WldCode`] bits plus 1), so
    /// that a position is tested and searched once, however often it is looked up.
    found: [Vec<AtomicU64>; 2],
}

/// Which positions of a held slice hold "don't care" instead of their true value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DontCare {
    /// None: the solver's values, or a slice resolved whole.
    None,
    /// Capture positions (a file read under compulsory capture).
    Captures,
    /// Capture and threat positions (a version 3 WLD file).
    CapturesAndThreats,
}

impl StoredSlice {
    /// Bytes of memory held.
    pub fn bytes(&self) -> u64 {
        let found: usize = self.found.iter().map(Vec::len).sum();
        self.sides.iter().flatten().map(Codes::bytes).sum::<u64>() + 8 * found as u64
    }
}

/// A look-up of a slice that is not (yet) in the store: a bug in the solve order.
#[derive(Debug, thiserror::Error)]
#[error("slice {material} ({side:?} to move) is not solved yet")]
pub struct Missing {
    pub material: Material,
    pub side: Color,
}

/// Solved slices by canonical material, in a table indexed by the four counts (a look-up is
/// an array access, not a hash: it happens for every exit of every position solved).
pub struct Store {
    rules: Rules,
    /// DTC values (a build of DTC files): the count profile by which a capture search
    /// combines them ([`CountProfile::convert`]); `None` for game values.
    count: Option<CountProfile>,
    slices: Vec<Option<Arc<StoredSlice>>>,
}

/// Counts per kind of piece are below this (20 a side at most, on 10x10).
const COUNT_BOUND: usize = 21;

#[inline]
fn slot(m: &Material) -> Option<usize> {
    let c = m.counts();
    if c.iter().any(|&x| x as usize >= COUNT_BOUND) {
        return None;
    }
    Some(c.iter().fold(0, |acc, &x| acc * COUNT_BOUND + x as usize))
}

impl Store {
    /// An empty store for `rules`.
    pub fn new(rules: Rules) -> Store {
        Store {
            rules,
            count: None,
            slices: Vec::new(),
        }
    }

    /// A store of DTC values under `count`: the capture searches that resolve a slice read
    /// from its file combine values as [`CountProfile::convert`] says.
    pub fn with_count(mut self, count: CountProfile) -> Store {
        self.count = Some(count);
        self
    }

    /// What a capture from `before` into a position of value `child` stands for.
    #[inline]
    fn capture_code(&self, before: &Position, after: &Position, child: Code) -> Code {
        match &self.count {
            None => child,
            Some(p) => p.convert(&before.material(), &after.material(), true, child),
        }
    }

    /// Add a solved slice's true DTW codes, every position's (capture positions included, as
    /// in [`crate::solve::SolvedSlice::values`]; `sides[s]` for side `s`, if stored).
    pub fn insert(&mut self, (material, sides): (Material, [Option<Vec<Code>>; 2])) {
        let [a, b] = sides;
        self.insert_codes(material, [a.map(Codes::Dtw), b.map(Codes::Dtw)]);
    }

    /// Add a solved slice's true values in either form (capture positions included).
    pub fn insert_codes(&mut self, material: Material, sides: [Option<Codes>; 2]) {
        self.insert_held(material, sides, DontCare::None);
    }

    /// Add a slice's codes, of which the positions `dont_care` names hold "don't care".
    fn insert_held(&mut self, material: Material, sides: [Option<Codes>; 2], dont_care: DontCare) {
        let index = SliceIndex::new(material, self.rules.geometry());
        let Some(at) = slot(&material) else {
            return; // cannot happen: no variant has more than 20 pieces a side
        };
        if self.slices.is_empty() {
            self.slices.resize(COUNT_BOUND.pow(4), None);
        }
        let found = std::array::from_fn(|k| match &sides[k] {
            Some(Codes::Wld(w)) if dont_care != DontCare::None => {
                w.iter().map(|_| AtomicU64::new(0)).collect()
            }
            _ => Vec::new(),
        });
        self.slices[at] = Some(Arc::new(StoredSlice {
            index,
            sides,
            dont_care,
            found,
        }));
    }

    /// Drop a slice (no later look-up needs it); nothing if it is not held.
    pub fn remove(&mut self, material: Material) {
        if let Some(held) = slot(&material).and_then(|at| self.slices.get_mut(at)) {
            *held = None;
        }
    }

    /// Total bytes held.
    pub fn bytes(&self) -> u64 {
        self.slices.iter().flatten().map(|s| s.bytes()).sum()
    }

    /// Total bytes of scratch files mapped.
    pub fn disk_bytes(&self) -> u64 {
        self.slices
            .iter()
            .flatten()
            .flat_map(|s| s.sides.iter().flatten())
            .map(Codes::disk_bytes)
            .sum()
    }

    /// The codes held for slice `m` (taken out of the store), if any.
    pub fn take(&mut self, m: Material) -> Option<[Option<Codes>; 2]> {
        let held = self.slices.get_mut(slot(&m)?)?.take()?;
        let s = Arc::try_unwrap(held).ok()?;
        Some(s.sides)
    }

    /// Read a DTW table file entirely into the store.
    ///
    /// # Errors
    /// A [`TableError`] if the file cannot be read or is corrupt.
    pub fn load_dtw_file(&mut self, material: Material, path: &Path) -> Result<(), TableError> {
        self.load_file(material, path, ValueKind::Dtw, false)
    }

    /// Read a DTC table file entirely into the store, which must be one of DTC values
    /// under the file's count profile ([`Store::with_count`]).
    ///
    /// # Errors
    /// A [`TableError`] if the file cannot be read, is corrupt, or is of another profile.
    pub fn load_dtc_file(&mut self, material: Material, path: &Path) -> Result<(), TableError> {
        self.load_file(material, path, ValueKind::Dtc, false)
    }

    /// Read a WLD table file entirely into the store (packed, as a WLD-only build keeps it).
    ///
    /// # Errors
    /// A [`TableError`] if the file cannot be read or is corrupt.
    pub fn load_wld_file(&mut self, material: Material, path: &Path) -> Result<(), TableError> {
        self.load_file(material, path, ValueKind::Wld, false)
    }

    /// Read a slice's values file (`dtb gen --keep-values`: a WLD file of format version 4,
    /// every position's true value) entirely into the store: held as the solver's values
    /// are, so that no look-up into it searches and it reads no other slice.
    ///
    /// # Errors
    /// A [`TableError`] if the file cannot be read, is corrupt, is not of version 4, or is
    /// of other rules or another slice.
    pub fn load_values_file(&mut self, material: Material, path: &Path) -> Result<(), TableError> {
        self.load_file(material, path, ValueKind::Wld, true)
    }

    fn load_file(
        &mut self,
        material: Material,
        path: &Path,
        kind: ValueKind,
        values_file: bool,
    ) -> Result<(), TableError> {
        // Every block is read once: nothing to keep in a cache.
        let table = TableFile::open(path, Arc::new(BlockCache::new(0)))?;
        let h = table.header().clone();
        let per_side = h.blocks_per_side();
        let mut sides: [Option<Codes>; 2] = [None, None];
        let invalid = |why: String| TableError::Format {
            path: path.to_path_buf(),
            source: dtb_probe::internal::format::FormatError::Invalid(why),
        };
        if let Some(why) = h.mismatch(&self.rules, material, kind) {
            return Err(invalid(why));
        }
        if values_file != (h.version == FORMAT_VERSION_TRUE) {
            return Err(invalid(if values_file {
                format!(
                    "not a values file: format version {}, not {FORMAT_VERSION_TRUE}",
                    h.version
                )
            } else {
                format!("a values file (format version {FORMAT_VERSION_TRUE}) where a table was expected")
            }));
        }
        if kind == ValueKind::Dtc && self.count.map(|p| p.encode()) != Some(h.count_code) {
            return Err(invalid(format!(
                "its DTC values are under another count profile than the build's ({})",
                self.count
                    .map_or_else(|| "none".to_string(), |p| p.describe())
            )));
        }
        let mut first = 0u32; // the side's first block
        for (s, slot) in sides.iter_mut().enumerate() {
            if !h.side_stored(s) {
                continue;
            }
            *slot = Some(read_side(&table, kind, first)?);
            first += u32::try_from(per_side).map_err(|_| invalid("too many blocks".into()))?;
        }
        let dont_care = if !self.rules.capture_compulsory || values_file {
            DontCare::None // no capture position holds "don't care"
        } else if h.version == dtb_probe::internal::format::FORMAT_VERSION_THREAT {
            DontCare::CapturesAndThreats
        } else {
            DontCare::Captures
        };
        self.insert_held(material, sides, dont_care);
        if kind != ValueKind::Wld {
            // Distances have no 2-bit memo: a DTW slice is resolved whole now, as a look-up
            // that searched each time would cost more than that.
            self.resolve_whole(material).map_err(|e| {
                invalid(format!(
                    "its capture positions cannot be resolved: {e} (load smaller slices first)"
                ))
            })?;
        }
        Ok(())
    }

    /// Resolve every "don't care" of held slice `material` (read from its file) to its true
    /// value, in place: what a slice needs before it goes to a scratch file, which holds true
    /// values ([`crate::scratch::Scratch`]). Nothing for a slice that holds none.
    ///
    /// # Errors
    /// [`Missing`] if a slice its searches read is not held.
    pub fn resolve_whole(&mut self, material: Material) -> Result<(), Missing> {
        let dont_care = slot(&material)
            .and_then(|at| self.slices.get(at))
            .and_then(Option::as_ref)
            .map_or(DontCare::None, |s| s.dont_care);
        if dont_care == DontCare::None {
            return Ok(());
        }
        let missing = Missing {
            material,
            side: Color::White,
        };
        let index = SliceIndex::new(material, self.rules.geometry());
        // Capture positions first: their searches read smaller slices only.
        let mut sides = self.take(material).ok_or(missing)?;
        self.resolve_captures(&index, &mut sides)?;
        self.insert_held(material, sides, dont_care);
        if dont_care == DontCare::CapturesAndThreats {
            self.resolve_threats(material)?;
        }
        let sides = self.take(material).ok_or(Missing {
            material,
            side: Color::White,
        })?;
        self.insert_codes(material, sides);
        Ok(())
    }

    /// Replace the "don't care" of every threat position ([`is_threat_dont_care`]) of slice
    /// `material`, held here as read from a version 3 WLD file with its capture positions
    /// resolved already ([`Store::resolve_whole`]), by its true value: the best of the values of the positions its quiet
    /// moves lead to, which are true (rule 3 of a threat position, docs/FORMAT.md: each is a
    /// capture position, or a quiet position that is not a threat position). The values found
    /// in a round of chunks are written before the next round looks up (no threat position's
    /// value is read, so the order does not matter).
    fn resolve_threats(&mut self, material: Material) -> Result<(), Missing> {
        use rayon::prelude::*;
        const CHUNK: u64 = 1 << 16;
        const ROUND: u64 = 256;
        let index = SliceIndex::new(material, self.rules.geometry());
        let size = index.size();
        let chunks = size.div_ceil(CHUNK);
        for s in 0..2 {
            let side = if s == 0 { Color::White } else { Color::Black };
            let held = slot(&material)
                .and_then(|at| self.slices.get(at))
                .and_then(Option::as_ref)
                .is_some_and(|h| matches!(h.sides[s], Some(Codes::Wld(_))));
            if !held {
                continue;
            }
            let mut first = 0;
            while first < chunks {
                let last = (first + ROUND).min(chunks);
                let this = &*self;
                let found: Vec<(u64, Vec<(u32, Code)>)> = (first..last)
                    .into_par_iter()
                    .map(|c| {
                        let start = c * CHUNK;
                        let len = (size - start).min(CHUNK) as usize;
                        let mut out = Vec::new();
                        this.threat_values(&index, side, start, len, |j, code| {
                            out.push((j as u32, code))
                        })?;
                        Ok((start, out))
                    })
                    .collect::<Result<_, Missing>>()?;
                let mut sides = self.take(material).ok_or(Missing { material, side })?;
                if let Some(Codes::Wld(w)) = &mut sides[s] {
                    for (start, values) in found {
                        for (j, code) in values {
                            w.set_wld(start as usize + j as usize, WldCode::of(code));
                        }
                    }
                }
                self.insert_held(material, sides, DontCare::CapturesAndThreats);
                first = last;
            }
        }
        Ok(())
    }

    /// Call `set(j, code)` with the true value of each threat position `start + j`
    /// (`j < len`) of `side`, looking up the positions its quiet moves lead to here.
    fn threat_values(
        &self,
        index: &SliceIndex,
        side: Color,
        start: u64,
        len: usize,
        mut set: impl FnMut(usize, Code),
    ) -> Result<(), Missing> {
        let mut moves = Vec::with_capacity(16);
        let mut look = Lookups::default();
        positions_of(index, side, start, len, |j, pos| {
            if is_threat_dont_care(&self.rules, pos, &mut moves) {
                let mut best = Best::default();
                for m in &moves {
                    best.offer(self.value(&m.apply_unchecked(pos), &mut look)?);
                }
                set(j, best.value());
            }
            Ok(())
        })
    }

    /// Replace the "don't care" of every capture position in `sides` (a slice read from its
    /// file) by its true value, a search over its captures into the smaller slices held here.
    fn resolve_captures(
        &self,
        index: &SliceIndex,
        sides: &mut [Option<Codes>; 2],
    ) -> Result<(), Missing> {
        use rayon::prelude::*;
        if !self.rules.capture_compulsory {
            return Ok(()); // no capture position holds "don't care"
        }
        // Positions a work item: a multiple of 32, so packed words are not shared.
        const CHUNK: usize = 1 << 16;
        let size = index.size();
        for (s, codes) in sides.iter_mut().enumerate() {
            let side = if s == 0 { Color::White } else { Color::Black };
            match codes {
                None | Some(Codes::Mapped(_)) => {}
                Some(Codes::Dtw(v)) => {
                    v.par_chunks_mut(CHUNK)
                        .enumerate()
                        .try_for_each(|(c, chunk)| {
                            let start = (c * CHUNK) as u64;
                            self.capture_values(index, side, start, chunk.len(), |j, code| {
                                chunk[j] = code
                            })
                        })?
                }
                Some(Codes::Wld(w)) => {
                    w.par_chunks_mut(CHUNK / 32)
                        .enumerate()
                        .try_for_each(|(c, words)| {
                            let start = (c * CHUNK) as u64;
                            let len = (size - start).min(CHUNK as u64) as usize;
                            self.capture_values(index, side, start, len, |j, code| {
                                words.set_wld(j, WldCode::of(code))
                            })
                        })?
                }
            }
        }
        Ok(())
    }

    /// Call `set(j, code)` with the true value of each capture position `start + j`
    /// (`j < len`) of `side`.
    fn capture_values(
        &self,
        index: &SliceIndex,
        side: Color,
        start: u64,
        len: usize,
        mut set: impl FnMut(usize, Code),
    ) -> Result<(), Missing> {
        let mut after = Vec::with_capacity(16);
        let mut moves = Vec::new();
        let mut look = Lookups::default();
        positions_of(index, side, start, len, |j, pos| {
            if !has_capture(&self.rules, pos) {
                return Ok(());
            }
            after.clear();
            if !single_jumps(&self.rules, pos, &mut after) {
                legal_moves(&self.rules, pos, Counting::Unique, &mut moves);
                after.extend(moves.iter().map(|m| m.apply_unchecked(pos)));
            }
            let mut best = Best::default();
            for succ in &after {
                best.offer(self.capture_code(pos, succ, self.value(succ, &mut look)?));
            }
            set(j, best.value());
            Ok(())
        })
    }
}

/// Call `f(j, position)` for positions `start + j` (`j < len`) of `side` in `index`, in
/// order, decoding each men group once; the first error stops the walk.
fn positions_of(
    index: &SliceIndex,
    side: Color,
    start: u64,
    len: usize,
    mut f: impl FnMut(usize, &Position) -> Result<(), Missing>,
) -> Result<(), Missing> {
    let kk = index.kings_per_group();
    let mut j = 0usize;
    while j < len {
        let i = start + j as u64;
        let (grp, li) = (i / kk, i % kk);
        let dec = index.group_decoder(grp);
        let run = ((kk - li) as usize).min(len - j);
        for (k, (wk, bk)) in dec.kings_from(li).take(run).enumerate() {
            f(j + k, &dec.with_kings(wk, bk, side))?;
        }
        j += run;
    }
    Ok(())
}

/// One men placement looked up lately: where positions with these men, these king counts
/// and this side to move are stored.
#[derive(Clone)]
struct Entry {
    /// (white men, black men) as looked up; king counts and side to move packed in `key`.
    wmen: u64,
    bmen: u64,
    key: u32,
    /// The look-up is of the colour-reversed position (the material is not canonical).
    flip: bool,
    /// The slice's place in `Store::slices`, the stored side, and the group's first index.
    slot: u32,
    side: u8,
    base: u64,
    /// The kings ranker of the group in the slice looked up.
    rank: KingsRanker,
    /// What the slice leaves "don't care" (a slice read from its file).
    dont_care: DontCare,
    /// The side holds WLD outcomes (their nominal distances), not DTW codes.
    nominal: bool,
}

/// A solver worker's memory of the men placements whose values it looked up last, so that
/// looking up a successor with the same men (a crowning or a capture from the same men
/// group, which differs only in its kings) ranks its kings instead of indexing it whole.
pub struct Lookups {
    entries: Vec<Option<Entry>>,
    /// Move lists of the searches of "don't care" positions, one a depth of search.
    buffers: Vec<Buffers>,
}

/// A search's successors and move list.
#[derive(Default)]
struct Buffers {
    after: Vec<Position>,
    moves: Vec<dtb_probe::movegen::Move>,
}

impl Default for Lookups {
    fn default() -> Lookups {
        Lookups {
            entries: vec![None; LOOKUP_ENTRIES],
            buffers: Vec::new(),
        }
    }
}

/// Entries of a [`Lookups`] (a power of two). 1024 (about 56 KB a worker) measured 1.04-1.06x
/// faster than 256 on 1221, 0213 and 3030 (docs/performance-history.md, step 22).
const LOOKUP_ENTRIES: usize = 1024;

impl Store {
    /// The true value of `pos` (any position of a solved slice, not normalized; the side not
    /// to move must have a piece), as [`dtb_probe::internal::value::resolve`] gives it from this store,
    /// remembering its men placement in `cache` for the next look-up.
    ///
    /// # Errors
    /// [`Missing`] if its slice is not in the store.
    #[inline]
    pub fn value(&self, pos: &Position, cache: &mut Lookups) -> Result<Code, Missing> {
        let stm = pos.side_to_move();
        if pos.pieces(stm) == 0 {
            return Ok(LOST);
        }
        let kings = pos.kings();
        let (wk, bk) = (pos.white() & kings, pos.black() & kings);
        let e = self.cached_entry(pos, cache)?;
        let (rk_w, rk_b) = if e.flip {
            let g = self.rules.geometry();
            (g.rotate(bk), g.rotate(wk))
        } else {
            (wk, bk)
        };
        let i = e.base + e.rank.rank(rk_w, rk_b);
        let (at, side, dont_care, nominal) =
            (e.slot as usize, e.side as usize, e.dont_care, e.nominal);
        if dont_care != DontCare::None {
            return self.dont_care_code(pos, (at, side, i), dont_care, nominal, cache);
        }
        self.stored_at(at, side, i, pos)
    }

    /// The true value of `pos`, stored at `(slot, side, index)` of a slice that holds
    /// "don't care" (read from its file): what an earlier look-up found (the 2-bit memo `found`,
    /// 0 for none), else its search or its stored code, remembered for the next look-up.
    fn dont_care_code(
        &self,
        pos: &Position,
        (at, side, i): (usize, usize, u64),
        dont_care: DontCare,
        nominal: bool,
        cache: &mut Lookups,
    ) -> Result<Code, Missing> {
        let found = self
            .slices
            .get(at)
            .and_then(Option::as_ref)
            .and_then(|s| s.found[side].get(i as usize / 32));
        let shift = 2 * (i % 32);
        if let Some(f) = found {
            let bits = f.load(Relaxed) >> shift & 3;
            if bits != 0 {
                return Ok(code_of_bits(bits - 1).code());
            }
        }
        let threats = dont_care == DontCare::CapturesAndThreats;
        let v = match self.dont_care_value(pos, threats, cache)? {
            Some(v) => v,
            None => self.stored_at(at, side, i, pos)?,
        };
        let v = if nominal { WldCode::of(v).code() } else { v };
        if let Some(f) = found {
            f.fetch_or(u64::from(WldCode::of(v).bits() + 1) << shift, Relaxed);
        }
        Ok(v)
    }

    /// Where the positions with `pos`'s men, king counts and side to move are stored: the
    /// entry `cache` remembers, or a new one it then remembers.
    #[inline]
    fn cached_entry<'c>(
        &self,
        pos: &Position,
        cache: &'c mut Lookups,
    ) -> Result<&'c Entry, Missing> {
        let stm = pos.side_to_move();
        let kings = pos.kings();
        let (wk, bk) = (pos.white() & kings, pos.black() & kings);
        let (wmen, bmen) = (pos.white() ^ wk, pos.black() ^ bk);
        let key = (wk.count_ones() << 8 | bk.count_ones()) << 1 | stm.index() as u32;
        let h = (wmen.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ bmen.wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
        .wrapping_add(key as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let at = (h >> (64 - LOOKUP_ENTRIES.trailing_zeros())) as usize;
        let slot = &mut cache.entries[at];
        if !matches!(slot, Some(e) if e.wmen == wmen && e.bmen == bmen && e.key == key) {
            let Some(e) = self.entry(pos, wmen, bmen, key) else {
                return Err(Missing {
                    material: pos.material(),
                    side: stm,
                });
            };
            *slot = Some(e);
        }
        Ok(slot.as_ref().unwrap_or_else(|| unreachable!("just filled")))
    }

    /// The stored code at index `i` of side `side` of the slice in slot `at`.
    #[inline]
    fn stored_at(&self, at: usize, side: usize, i: u64, pos: &Position) -> Result<Code, Missing> {
        self.slices
            .get(at)
            .and_then(Option::as_ref)
            .and_then(|s| s.sides[side].as_ref()?.get(i as usize, s.index.size()))
            .ok_or(Missing {
                material: pos.material(),
                side: pos.side_to_move(),
            })
    }

    /// The true value of `pos`, a position of a slice read from its file, if its stored value
    /// is "don't care": a capture position (the best of its captures), or in a version 3 file
    /// (`threats`) a threat position (the best of its quiet moves, docs/FORMAT.md); `None`
    /// for any other position, whose stored value is true. The successors are looked up
    /// here, each resolved in turn, as [`dtb_probe::internal::value::resolve`] would.
    fn dont_care_value(
        &self,
        pos: &Position,
        threats: bool,
        cache: &mut Lookups,
    ) -> Result<Option<Code>, Missing> {
        let rules = &self.rules;
        let mut buf = cache.buffers.pop().unwrap_or_default();
        if has_capture(rules, pos) {
            if !single_jumps(rules, pos, &mut buf.after) {
                legal_moves(rules, pos, Counting::Unique, &mut buf.moves);
                buf.after.clear();
                buf.after
                    .extend(buf.moves.iter().map(|m| m.apply_unchecked(pos)));
            }
        } else if threats
            && has_capture(rules, &pos.with_side_to_move(pos.side_to_move().opponent()))
            && threat_moves_all_safe(rules, pos, &mut buf.moves)
        {
            buf.after.clear();
            buf.after
                .extend(buf.moves.iter().map(|m| m.apply_unchecked(pos)));
        } else {
            cache.buffers.push(buf);
            return Ok(None);
        }
        // Only a capture position of a DTC slice may be met here (DTC files leave threat
        // positions as they are), and every one of its moves is a capture.
        let mut best = Best::default();
        for succ in &buf.after {
            best.offer(self.capture_code(pos, succ, self.value(succ, cache)?));
        }
        cache.buffers.push(buf);
        Ok(Some(best.value()))
    }

    /// A cache entry for the men of `pos`, or `None` if its slice or side is not stored.
    #[cold]
    fn entry(&self, pos: &Position, wmen: u64, bmen: u64, key: u32) -> Option<Entry> {
        let n = normalize(&self.rules, pos);
        let flip = n.side_to_move() != pos.side_to_move();
        let material = n.material();
        let at = slot(&material)?;
        let s = self.slices.get(at)?.as_ref()?;
        let side = n.side_to_move().index();
        s.sides[side].as_ref()?;
        let kings = n.kings();
        let men = (n.white() & !kings, n.black() & !kings);
        let kk = s.index.kings_per_group();
        Some(Entry {
            wmen,
            bmen,
            key,
            flip,
            slot: at as u32,
            side: side as u8,
            base: s.index.group_of(men.0, men.1) * kk,
            rank: s.index.ranker_of_men(men),
            dont_care: s.dont_care,
            nominal: s.sides[side].as_ref().is_none_or(Codes::is_packed),
        })
    }
}

impl Finished for Store {
    type Cache = Lookups;
    type Error = Missing;

    #[inline]
    fn value(&self, pos: &Position, cache: &mut Lookups) -> Result<Code, Missing> {
        Store::value(self, pos, cache)
    }

    /// [`Finished::values_with_king`]: the men placement looked up once for the whole row,
    /// then each square's kings ranked and read; where the slice leaves positions "don't
    /// care" (a slice read from its file), each square's value from what earlier look-ups
    /// found, or through [`Store::value`] (its search) where none has.
    fn values_with_king(
        &self,
        pos: &Position,
        color: Color,
        squares: u64,
        cache: &mut Lookups,
        f: &mut dyn FnMut(u32, Code),
    ) -> Result<(), Missing> {
        self.each_with_king(pos, (color, squares), cache, None, f)
            .map(|_| ())
    }

    /// [`Finished::losses_draws_with_king`]: as [`Finished::values_with_king`], with the masks
    /// built inline (no call a square).
    fn losses_draws_with_king(
        &self,
        pos: &Position,
        color: Color,
        squares: u64,
        cache: &mut Lookups,
    ) -> Result<(u64, u64), Missing> {
        let mut masks = (0u64, 0u64);
        let mut packed = (0u64, 0u64);
        let whole = self.each_with_king(
            pos,
            (color, squares),
            cache,
            Some(&mut packed),
            |x, code| mark_loss_draw(&mut masks, x, code),
        )?;
        Ok(if whole { packed } else { masks })
    }
}

impl Store {
    /// The value codes of `pos` plus a king of `color` on each square of `squares`, as
    /// `f(square, code)` in ascending order: the men placement looked up once for the whole
    /// row, then each square's kings ranked and read; where the slice leaves positions "don't
    /// care" (a slice read from its file), each square's value from what earlier look-ups
    /// found, or through [`Store::value`] (its search) where none has.
    ///
    /// With `packed`, where the slice holds its outcomes packed (2 bits a position) and
    /// nothing "don't care", the squares' losses and draws are put there instead, read a
    /// word at a time ([`losses_draws_packed`]), and `f` is not called: returns whether
    /// that was done.
    #[inline]
    fn each_with_king(
        &self,
        pos: &Position,
        (color, squares): (Color, u64),
        cache: &mut Lookups,
        packed: Option<&mut (u64, u64)>,
        mut f: impl FnMut(u32, Code),
    ) -> Result<bool, Missing> {
        if squares == 0 {
            return Ok(false);
        }
        let first = pos.with_king(color, squares.trailing_zeros());
        let mut each = squares;
        let mut next = || {
            let x = each.trailing_zeros();
            each &= each.wrapping_sub(1);
            (x, 1u64 << x)
        };
        if first.pieces(first.side_to_move()) == 0 {
            for _ in 0..squares.count_ones() {
                f(next().0, LOST);
            }
            return Ok(false);
        }
        let e = self.cached_entry(&first, cache)?.clone();
        let missing = || Missing {
            material: first.material(),
            side: first.side_to_move(),
        };
        let held = self
            .slices
            .get(e.slot as usize)
            .and_then(Option::as_ref)
            .ok_or_else(missing)?;
        let (codes, size) = (
            held.sides[e.side as usize].as_ref().ok_or_else(missing)?,
            held.index.size(),
        );
        let kings = pos.kings();
        let (wk, bk) = (pos.white() & kings, pos.black() & kings);
        let g = self.rules.geometry();
        // The row's kings as the slice stores them (colours swapped and the board turned
        // where it is stored for the other colour), ranked once for all the squares.
        let row = if e.flip {
            e.rank
                .with_one_more(g.rotate(bk), g.rotate(wk), color.opponent())
        } else {
            e.rank.with_one_more(wk, bk, color)
        };
        let last = g.squares as u32 - 1;
        if let (Some(out), DontCare::None, true) = (packed, e.dont_care, codes.is_packed()) {
            // The squares as the slice stores them: turned where it is stored flipped.
            let turn = |b: u64| if e.flip { g.rotate(b) } else { b };
            let (loss, draw) = losses_draws_packed(codes, size, e.base, &row, turn(squares))
                .ok_or_else(missing)?;
            *out = (turn(loss), turn(draw));
            return Ok(true);
        }
        if e.dont_care != DontCare::None {
            // A slice read from its file: each square from the memo, or searched.
            let (at, side) = (e.slot as usize, e.side as usize);
            for _ in 0..squares.count_ones() {
                let x = next().0;
                let sq = if e.flip { last - x } else { x };
                let i = e.base + row.rank(sq);
                let at_x = pos.with_king(color, x);
                f(
                    x,
                    self.dont_care_code(&at_x, (at, side, i), e.dont_care, e.nominal, cache)?,
                );
            }
            return Ok(false);
        }
        for _ in 0..squares.count_ones() {
            let x = next().0;
            let sq = if e.flip { last - x } else { x };
            let i = e.base + row.rank(sq);
            f(x, codes.get(i as usize, size).ok_or_else(missing)?);
        }
        Ok(false)
    }
}

/// The losses and draws (for the side to move) among the positions of a row, from outcomes
/// packed 2 bits a position: `squares` are the varying king's squares as the slice stores
/// them, `row` their placement numbers in the group that starts at `base`. Where the numbers
/// run on by one ([`KingRow::run`]) their codes are read as one field of words, the rest a
/// square at a time, each without a branch on its code. `None` where a number is past the
/// end of the slice (`size` positions) or `codes` are not packed outcomes.
#[inline]
fn losses_draws_packed(
    codes: &Codes,
    size: u64,
    base: u64,
    row: &KingRow,
    squares: u64,
) -> Option<(u64, u64)> {
    // A field of 2-bit codes: its losses (code 2) and draws (code 0, or the invalid 3 as
    // `code_of_bits` reads it) as the low bits of each field.
    let split = |f: u64| {
        let (lo, hi) = (f & EVEN, f >> 1 & EVEN);
        (hi & !lo, !(lo ^ hi) & EVEN)
    };
    let (mut loss, mut draw) = (0u64, 0u64);
    let mut rest = squares;
    if let Some((first, run)) = row.run() {
        let wanted = squares & run;
        if wanted != 0 {
            // The run's squares up to the highest wanted, at most 32 (a field of one word).
            let top = 63 - wanted.leading_zeros();
            let upto = run & (u64::MAX >> (63 - top));
            let n = upto.count_ones();
            if n <= 32 {
                let (l, d) = split(codes.fields(base + first, n, size)?);
                loss |= deposit(u64::from(unspread(l)), upto) & wanted;
                draw |= deposit(u64::from(unspread(d)), upto) & wanted;
                rest &= !wanted;
            }
        }
    }
    while rest != 0 {
        let x = rest.trailing_zeros();
        rest &= rest - 1;
        let (l, d) = split(codes.fields(base + row.rank(x), 1, size)?);
        loss |= l << x;
        draw |= (d & 1) << x;
    }
    Some((loss, draw))
}

/// The low bits of `bits` placed, in order, on the set bits of `mask` (what `pdep` does; a
/// loop over the mask's runs of set bits, since builds do not assume BMI2).
#[inline]
fn deposit(mut bits: u64, mask: u64) -> u64 {
    let (mut out, mut m) = (0u64, mask);
    while m != 0 {
        let lo = m.trailing_zeros();
        let len = (m >> lo).trailing_ones();
        let ones = u64::MAX >> (64 - len);
        out |= (bits & ones) << lo;
        bits = bits.checked_shr(len).unwrap_or(0);
        m &= !(ones << lo);
    }
    out
}

impl ValueSource for Store {
    type Error = Missing;

    fn stored(&self, pos: &Position) -> Result<Code, Missing> {
        let material = pos.material();
        let side = pos.side_to_move();
        let missing = || Missing { material, side };
        let s = slot(&material)
            .and_then(|at| self.slices.get(at))
            .and_then(Option::as_ref)
            .ok_or_else(missing)?;
        let v = s.sides[side.index()].as_ref().ok_or_else(missing)?;
        v.get(s.index.index(pos) as usize, s.index.size())
            .ok_or_else(missing)
    }

    #[inline]
    fn capture_code(&self, before: &Position, after: &Position, child: Code) -> Code {
        Store::capture_code(self, before, after, child)
    }

    fn threats_dont_care(&self, pos: &Position) -> Result<bool, Missing> {
        Ok(slot(&pos.material())
            .and_then(|at| self.slices.get(at))
            .and_then(Option::as_ref)
            .is_some_and(|s| s.dont_care == DontCare::CapturesAndThreats))
    }
}

/// The build's store first, then finished table files for the slices it does not hold: a
/// build whose scratch files would not fit its disk reads some finished slices from their
/// compressed files through `dtb-probe`'s block cache instead ([`crate::build::Plan::from_tables`]).
pub struct Layered<'a> {
    pub store: &'a Store,
    pub tables: &'a TableSource,
}

/// Why [`Layered`] gave no value: the slice is in neither, or its file failed.
#[derive(Debug, thiserror::Error)]
pub enum LayeredError {
    #[error(transparent)]
    Table(#[from] ProbeError),
}

impl Finished for Layered<'_> {
    type Cache = Lookups;
    type Error = LayeredError;

    #[inline]
    fn value(&self, pos: &Position, cache: &mut Self::Cache) -> Result<Code, LayeredError> {
        match self.store.value(pos, cache) {
            Ok(v) => Ok(v),
            Err(_) => Ok(self.tables.value(pos, &mut ())?),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{self, Plan, Quiet};
    use crate::scratch::{Raw, Spill};
    use crate::solve::solve_slice;
    use crate::values::Values;
    use dtb_probe::internal::value::Wld;

    /// English 2-`pieces` built into a new temporary directory, with the plan as `set`
    /// leaves it.
    fn built(pieces: u32, set: impl FnOnce(&mut Plan)) -> (tempfile::TempDir, Plan) {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut plan = Plan::new(Rules::ENGLISH, pieces, dir.path()).expect("plan");
        set(&mut plan);
        build::run(&plan, &Quiet).expect("build");
        (dir, plan)
    }

    /// The sides to move slice `m` stores: White alone for a colour-symmetric slice.
    fn stored_sides(m: Material) -> &'static [Color] {
        if m == m.mirror() {
            &[Color::White]
        } else {
            &[Color::White, Color::Black]
        }
    }

    /// A slice read back from its file, whose capture positions (and in a version 3 WLD
    /// file threat positions) hold "don't care", must give the solver's true value of every
    /// position again: for the full build's DTW files exactly, for a WLD-only build's files
    /// (version 1 and version 3) as outcomes. English 2-4, every position of every stored
    /// side.
    #[test]
    fn slices_loaded_from_files_hold_the_true_values() {
        use dtb_probe::internal::format::{FORMAT_VERSION, FORMAT_VERSION_THREAT};
        use dtb_probe::internal::value::is_threat_dont_care;
        let rules = Rules::ENGLISH;
        for (values, threats) in [
            (Values::WLD_DTW, true),
            (Values::WLD, false),
            (Values::WLD, true),
        ] {
            let wld_only = values == Values::WLD;
            let (_dir, plan) = built(4, |p| {
                p.values = values;
                p.threats = threats;
            });
            let mut solved = Store::new(rules);
            let mut loaded = Store::new(rules);
            let mut captures = 0u64;
            let mut threat_positions = 0u64;
            let mut moves = Vec::new();
            for &m in &plan.slices {
                let version =
                    TableFile::open(&plan.path(m, ValueKind::Wld), Arc::new(BlockCache::new(0)))
                        .expect("open")
                        .header()
                        .version;
                let v3 = wld_only && threats;
                let want_version = if v3 {
                    FORMAT_VERSION_THREAT
                } else {
                    FORMAT_VERSION
                };
                assert_eq!(version, want_version, "{m}: WLD format version");
                let s = solve_slice(&rules, &solved, m, &|_| {}).expect("solve");
                if wld_only {
                    loaded.load_wld_file(m, &plan.path(m, ValueKind::Wld))
                } else {
                    loaded.load_dtw_file(m, &plan.path(m, ValueKind::Dtw))
                }
                .expect("load");
                let ix = SliceIndex::new(m, rules.geometry());
                let sides = stored_sides(m);
                // Held as read, each look-up resolving what it meets (the smaller slices
                // held as read too).
                let mut look = Lookups::default();
                for &side in sides {
                    for i in 0..ix.size() {
                        let want = s.values[side.index()][i as usize];
                        let pos = ix.unindex(i, side);
                        let got = loaded.value(&pos, &mut look).expect("value");
                        if wld_only {
                            assert_eq!(got.wld(), want.wld(), "{m} {side:?} {i}");
                        } else {
                            assert_eq!(got, want, "{m} {side:?} {i}");
                        }
                        captures += s.is_capture(side.index(), i) as u64;
                        threat_positions += is_threat_dont_care(&rules, &pos, &mut moves) as u64;
                    }
                }
                solved.insert(s.into_stored());
            }
            // Every slice resolved whole, in solve order: every stored value true.
            for &m in &plan.slices {
                loaded.resolve_whole(m).expect("resolve");
                let ix = SliceIndex::new(m, rules.geometry());
                for &side in stored_sides(m) {
                    for i in 0..ix.size() {
                        let pos = ix.unindex(i, side);
                        let (want, got) = (
                            solved.stored(&pos).expect("solved"),
                            loaded.stored(&pos).expect("stored"),
                        );
                        if wld_only {
                            assert_eq!(got.wld(), want.wld(), "resolved {m} {side:?} {i}");
                        } else {
                            assert_eq!(got, want, "resolved {m} {side:?} {i}");
                        }
                    }
                }
            }
            assert!(
                captures > 1_000_000,
                "{captures} capture positions compared"
            );
            // Measured: 487,122 threat positions in the stored sides of English 2-4.
            assert!(
                threat_positions > 400_000,
                "{threat_positions} threat positions compared"
            );
        }
    }

    /// The values files of a WLD-only build (`--keep-values`) are of format version 4 and
    /// hold the solver's true outcome of every position, capture and threat positions
    /// included: each read alone (no other slice held: no look-up into it searches) gives
    /// every stored value of the solver's. English 2-4. A values file is refused where a
    /// table is expected and the reverse, and so is another slice's.
    #[test]
    fn values_files_hold_every_true_value() {
        let rules = Rules::ENGLISH;
        let (_dir, plan) = built(4, |p| {
            p.values = Values::WLD;
            p.keep_values = true;
        });
        let mut solved = Store::new(rules);
        let mut compared = 0u64;
        for &m in &plan.slices {
            let s = crate::solve::solve_slice(&rules, &solved, m, &|_| {}).expect("solve");
            let path = plan.values_path(m);
            let version = TableFile::open(&path, Arc::new(BlockCache::new(0)))
                .expect("open")
                .header()
                .version;
            assert_eq!(version, FORMAT_VERSION_TRUE, "{m}");
            let mut alone = Store::new(rules);
            alone.load_values_file(m, &path).expect("load");
            let ix = SliceIndex::new(m, rules.geometry());
            for &side in stored_sides(m) {
                for i in 0..ix.size() {
                    let pos = ix.unindex(i, side);
                    let want = s.values[side.index()][i as usize];
                    let got = alone.stored(&pos).expect("stored");
                    assert_eq!(got.wld(), want.wld(), "{m} {side:?} {i}");
                    compared += 1;
                }
            }
            solved.insert(s.into_stored());
        }
        assert!(compared > 2_000_000, "{compared} positions compared");
        let m = Material::parse("1111").expect("slice");
        let mut store = Store::new(rules);
        let e = store
            .load_values_file(m, &plan.path(m, ValueKind::Wld))
            .expect_err("a table read as a values file");
        let e = dtb_probe::report(&e);
        assert!(e.contains("not a values file"), "{e}");
        let e = store
            .load_wld_file(m, &plan.values_path(m))
            .expect_err("a values file read as a table");
        let e = dtb_probe::report(&e);
        assert!(e.contains("a values file (format version 4)"), "{e}");
        let other = Material::parse("1102").expect("slice");
        let e = store
            .load_values_file(m, &plan.values_path(other))
            .expect_err("another slice's values file");
        let e = dtb_probe::report(&e);
        assert!(e.contains("1102") || e.contains("0211"), "{e}");
    }

    /// English 2-4 built into version 3 files (threat positions "don't care"), and held three
    /// ways: solved in memory (true codes), the same outcomes packed (what a build holds),
    /// and read back from the files.
    fn english_four_three_ways() -> (tempfile::TempDir, Plan, [Store; 3]) {
        let rules = Rules::ENGLISH;
        let (dir, plan) = built(4, |p| {
            p.values = Values::WLD;
            p.threats = true;
        });
        let [mut solved, mut packed, mut loaded] = [(); 3].map(|()| Store::new(rules));
        for &m in &plan.slices {
            let s = solve_slice(&rules, &solved, m, &|_| {}).expect("solve");
            let (m, sides) = s.into_stored();
            packed.insert_codes(m, sides.clone().map(|v| v.map(|v| Codes::wld_of_codes(&v))));
            solved.insert((m, sides));
            loaded
                .load_wld_file(m, &plan.path(m, ValueKind::Wld))
                .expect("load");
        }
        (dir, plan, [solved, packed, loaded])
    }

    /// Every `step`-th position of `slices` that has a king, both sides to move, once for each
    /// colour with a king: the position less that colour's lowest king (a row of look-ups),
    /// as `f(slice, side to move, index, colour, row)`.
    fn each_row_with_a_king(
        rules: &Rules,
        slices: &[Material],
        step: usize,
        mut f: impl FnMut(Material, Color, u64, Color, &Position),
    ) {
        for &m in slices {
            let ix = SliceIndex::new(m, rules.geometry());
            for side in [Color::White, Color::Black] {
                for i in (0..ix.size()).step_by(step) {
                    let pos = ix.unindex(i, side);
                    for color in [Color::White, Color::Black] {
                        let kings = pos.pieces(color) & pos.kings();
                        if kings == 0 {
                            continue;
                        }
                        let bit = kings & kings.wrapping_neg();
                        let row = Position::new(
                            rules,
                            pos.white() & !bit,
                            pos.black() & !bit,
                            pos.kings() & !bit,
                            side,
                        )
                        .expect("row");
                        f(m, side, i, color, &row);
                    }
                }
            }
        }
    }

    /// A row of look-ups (`values_with_king`, what the bit-parallel solver reads a capture's
    /// or a crowning's successors with) in slices read from version 3 files, whose capture
    /// and threat positions hold "don't care", gives each square's true value, whether the
    /// position was found by an earlier look-up or is searched now: English 2-4, every
    /// seventh position with a king, with each of its colours' lowest king as the row's, twice
    /// (the second pass reads what the first found).
    #[test]
    fn a_row_of_look_ups_in_slices_read_from_files_gives_the_true_values() {
        let rules = Rules::ENGLISH;
        let g = rules.geometry();
        let (_dir, plan, [solved, _, loaded]) = english_four_three_ways();
        let (mut look, mut truth) = (Lookups::default(), Lookups::default());
        let mut squares_read = [0u64; 2];
        for (pass, read) in squares_read.iter_mut().enumerate() {
            each_row_with_a_king(&rules, &plan.slices, 7, |m, side, i, color, row| {
                let squares = g.all & !row.occupied();
                let mut got = Vec::new();
                loaded
                    .values_with_king(row, color, squares, &mut look, &mut |x, c| got.push((x, c)))
                    .expect("row look-up");
                assert_eq!(got.len() as u32, squares.count_ones(), "{m} {i}");
                for (x, code) in got {
                    let at = row.with_king(color, x);
                    let want = solved.value(&at, &mut truth).expect("true value");
                    assert_eq!(code.wld(), want.wld(), "pass {pass}: {m} {side:?} {i} {x}");
                    *read += 1;
                }
            });
        }
        assert_eq!(squares_read[0], squares_read[1]);
        assert!(squares_read[0] > 1_000_000, "{squares_read:?} squares read");
    }

    /// The masks of a row of look-ups (`losses_draws_with_king`, what the bit-parallel
    /// solver reads) are each square's value, from slices solved in memory (packed words
    /// read in place) and from the same slices read from their files: English 2-4, every
    /// fifth position with a king, each of its colours' lowest king as the row's, both sides
    /// to move (so colour-swapped look-ups too).
    #[test]
    fn row_masks_are_each_squares_value() {
        let rules = Rules::ENGLISH;
        let g = rules.geometry();
        let (dir, plan, [solved, packed, loaded]) = english_four_three_ways();
        // The same packed outcomes in mapped scratch files (what a spilling build reads).
        let spill = Spill::default();
        let mut mapped = Store::new(rules);
        for (k, &m) in plan.slices.iter().enumerate() {
            let at = slot(&m).expect("a slot");
            let held = packed.slices[at].as_ref().expect("held");
            let sides = [0, 1].map(|side| match &held.sides[side] {
                Some(Codes::Wld(w)) => {
                    let path = dir.path().join(format!("{k}-{side}.wld2"));
                    let f = Scratch::write(Raw::Words(w), &path, &spill).expect("scratch");
                    Some(Codes::Mapped(f))
                }
                None => None,
                Some(_) => unreachable!("packed outcomes"),
            });
            mapped.insert_codes(m, sides);
        }
        let (mut look, mut file_look, mut truth) =
            (Lookups::default(), Lookups::default(), Lookups::default());
        let mut map_look = Lookups::default();
        let (mut lost_seen, mut drawn_seen) = (0u32, 0u32);
        each_row_with_a_king(&rules, &plan.slices, 5, |m, side, i, color, row| {
            let squares = g.all & !row.occupied();
            let (mut lost, mut drawn) = (0u64, 0u64);
            let mut each = squares;
            while each != 0 {
                let x = each.trailing_zeros();
                each &= each - 1;
                let at = row.with_king(color, x);
                match solved.value(&at, &mut truth).expect("value").wld() {
                    Wld::Loss => lost |= 1 << x,
                    Wld::Draw => drawn |= 1 << x,
                    Wld::Win => {}
                }
            }
            let want = (lost, drawn);
            let got = packed
                .losses_draws_with_king(row, color, squares, &mut look)
                .expect("row in memory");
            assert_eq!(got, want, "in memory: {m} {side:?} {i} {color:?}");
            let got = mapped
                .losses_draws_with_king(row, color, squares, &mut map_look)
                .expect("row in scratch files");
            assert_eq!(got, want, "mapped: {m} {side:?} {i} {color:?}");
            let got = loaded
                .losses_draws_with_king(row, color, squares, &mut file_look)
                .expect("row from files");
            assert_eq!(got, want, "from files: {m} {side:?} {i} {color:?}");
            lost_seen += lost.count_ones();
            drawn_seen += drawn.count_ones();
        });
        assert!(
            lost_seen > 10_000 && drawn_seen > 10_000,
            "{lost_seen} {drawn_seen}"
        );
    }

    /// A WLD file whose blocks are not whole words (1,000 positions: dtb's writers never
    /// make one, another writer may) reads to the same values as dtb's own: English 2-3,
    /// every slice rewritten with that block length, every position of every stored side.
    #[test]
    fn a_wld_file_whose_blocks_split_words_reads_the_same() {
        use crate::write::{write_table, CompressionParams, TableData};
        let rules = Rules::ENGLISH;
        let (_dir, plan) = built(3, |p| {
            p.values = Values::WLD;
            p.threats = false;
        });
        let odd = tempfile::tempdir().expect("temp dir");
        let mut ours = Store::new(rules);
        let mut theirs = Store::new(rules);
        let mut compared = 0u64;
        for &m in &plan.slices {
            let path = plan.path(m, ValueKind::Wld);
            let t = TableFile::open(&path, Arc::new(BlockCache::new(0))).expect("open");
            let mut header = t.header().clone();
            header.block_len = 1000;
            let sides: Vec<Vec<u16>> = (0..2)
                .filter(|&s| header.side_stored(s))
                .map(|s| {
                    (0..header.positions_per_side)
                        .map(|i| t.stored_code(s, i).expect("code"))
                        .collect()
                })
                .collect();
            let other = odd.path().join(path.file_name().expect("name"));
            let data = TableData {
                header,
                sides: sides.iter().map(Vec::as_slice).collect(),
            };
            write_table(&other, &data, &CompressionParams::level(3)).expect("write");
            ours.load_wld_file(m, &path).expect("load");
            theirs.load_wld_file(m, &other).expect("load");
            let ix = SliceIndex::new(m, rules.geometry());
            for side in [Color::White, Color::Black] {
                if !t.header().side_stored(side.index()) {
                    continue;
                }
                for i in 0..ix.size() {
                    let pos = ix.unindex(i, side);
                    assert_eq!(ours.stored(&pos).ok(), theirs.stored(&pos).ok(), "{m} {i}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 50_000, "{compared} positions compared");
    }

    /// A file that is not the slice's, or not of these rules, is an error, not a panic or a
    /// slice of wrong values.
    #[test]
    fn a_file_of_another_slice_or_other_rules_is_refused() {
        let (_dir, plan) = built(3, |p| p.values = Values::WLD);
        let other = tempfile::tempdir().expect("temp dir");
        let mut russian = Plan::new(Rules::RUSSIAN, 2, other.path()).expect("plan");
        russian.values = Values::WLD;
        build::run(&russian, &Quiet).expect("build");
        let m = |s: &str| Material::parse(s).unwrap();
        let mut store = Store::new(Rules::ENGLISH);
        for (slice, file, why) in [
            (
                "0101",
                plan.path(m("0110"), ValueKind::Wld),
                "holds slice 0110, not 0101",
            ),
            (
                "1010",
                plan.path(m("0102"), ValueKind::Wld),
                "holds slice 0102, not 1010",
            ),
            (
                "0101",
                russian.path(m("0101"), ValueKind::Wld),
                "other rules, rule set \"russian\"",
            ),
        ] {
            let e = dtb_probe::report(&store.load_wld_file(m(slice), &file).unwrap_err());
            assert!(e.contains(why), "{e}");
        }
        let e = dtb_probe::report(
            &store
                .load_dtw_file(m("0101"), &plan.path(m("0101"), ValueKind::Wld))
                .unwrap_err(),
        );
        assert!(
            e.contains("a wld table where a dtw table was expected"),
            "{e}"
        );
    }
}

#[cfg(test)]
mod scratch_tests {
    use super::*;
    use crate::scratch::{sidecar, Raw, Spill};

    /// A scratch file written by [`Scratch::write`] reads back every value, is mapped again
    /// by [`Scratch::reuse`] while whole, and is refused (and removed) once a byte changes or
    /// its sidecar names another length; dropping the last mapping removes both files.
    #[test]
    fn scratch_files_round_trip_and_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let spill = Spill::default();
        let codes: Vec<Code> = (0..10_000u32)
            .map(|i| Code::from_bits((i * 7919 % 300) as u16))
            .collect();
        let words: Vec<u64> = (0..300u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) & 0x5555_5555_5555_5555)
            .collect();
        let dtw_path = dir.path().join("x-dtw.wld2");
        let wld_path = dir.path().join("x-wld.wld2");
        let dtw = Codes::Mapped(Scratch::write(Raw::Codes(&codes), &dtw_path, &spill).unwrap());
        let wld = Codes::Mapped(Scratch::write(Raw::Words(&words), &wld_path, &spill).unwrap());
        let n = words.len() as u64 * 32;
        for (i, &c) in codes.iter().enumerate() {
            assert_eq!(dtw.get(i, codes.len() as u64), Some(c));
        }
        let packed = Codes::Wld(words.clone());
        for i in 0..n as usize {
            assert_eq!(wld.get(i, n), packed.get(i, n), "{i}");
        }
        // Fields of 1 to 32 codes from any position, from words and from the file alike:
        // each field the code `get` gives; none past the end, none of DTW codes.
        for i in 0..n - 40 {
            for k in 1..=32u32 {
                let f = packed.fields(i, k, n).expect("in range");
                assert_eq!(wld.fields(i, k, n), Some(f), "{i} {k}");
                for j in 0..u64::from(k) {
                    let want = packed
                        .get((i + j) as usize, n)
                        .map(|c| WldCode::of(c).bits());
                    assert_eq!(Some((f >> (2 * j) & 3) as u8), want, "{i} {k} {j}");
                }
                assert_eq!(f >> (2 * k - 1) >> 1, 0, "{i} {k}: bits above the fields");
            }
        }
        assert_eq!(packed.fields(n - 3, 4, n), None);
        assert_eq!(wld.fields(n - 3, 4, n), None);
        assert_eq!(dtw.fields(0, 4, codes.len() as u64), None);
        assert_eq!(dtw.get(codes.len(), codes.len() as u64), None);
        spill.drop_pages();
        assert_eq!(dtw.get(17, codes.len() as u64), Some(codes[17]));
        // Whole: mapped again (a second mapping of the same file).
        let again = Scratch::reuse(&dtw_path, ScratchKind::Dtw, 2 * codes.len() as u64, &spill);
        let again = again.map(Codes::Mapped);
        assert!(again.is_some_and(|c| c.get(5, codes.len() as u64) == Some(codes[5])));
        // The wrong length: refused, both files removed.
        assert!(Scratch::reuse(&wld_path, ScratchKind::Wld, 8, &spill).is_none());
        assert!(!wld_path.exists() && !sidecar(&wld_path).exists());
        drop(wld);
        // A changed byte: refused.
        drop(dtw);
        assert!(!dtw_path.exists(), "dropping the mapping removes the file");
        let dtw = Codes::Mapped(Scratch::write(Raw::Codes(&codes), &dtw_path, &spill).unwrap());
        std::mem::forget(dtw); // keep the file: a stopped build's
        let mut bytes = std::fs::read(&dtw_path).unwrap();
        bytes[100] ^= 1;
        std::fs::write(&dtw_path, bytes).unwrap();
        assert!(
            Scratch::reuse(&dtw_path, ScratchKind::Dtw, 2 * codes.len() as u64, &spill).is_none()
        );
        assert!(!dtw_path.exists());
    }
}
