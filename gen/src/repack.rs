//! `dtb repack`: re-encode finished WLD tables in format version 3, where threat positions
//! (the side not to move has a capture, [`is_threat_dont_care`]) are "don't care" too and
//! the prober answers them by a one-ply search. No value is solved again: the "don't care"
//! masks are recomputed from the positions, the values of the other positions are copied,
//! and (unless told otherwise) every threat position's answer from the new files is checked
//! against the value the old file stored for it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use dtb_probe::internal::format::{ValueKind, WldCode, FORMAT_VERSION, FORMAT_VERSION_THREAT};
use dtb_probe::internal::index::{MenCache, SliceIndex};
use dtb_probe::internal::rules::{Color, Rules};
use dtb_probe::internal::table::TableFile;
use dtb_probe::internal::value::is_threat_dont_care;
use dtb_probe::movegen::has_capture;
use dtb_probe::{Material, Tablebase, Wld};
use rayon::prelude::*;

use crate::compress::{Fill, Filler};
use crate::packed::PackedWld;
use crate::write::{write_packed_wld, CompressionParams};

/// What repacking one slice did.
#[derive(Clone, Debug)]
pub struct RepackedSlice {
    pub material: Material,
    /// Positions stored (all stored sides).
    pub positions: u64,
    /// Capture positions ("don't care" before and after). With an estimate, those of the
    /// sampled blocks scaled to the slice.
    pub captures: u64,
    /// Threat positions made "don't care" (with an estimate, scaled likewise).
    pub threats: u64,
    /// File bytes before and after.
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// Threat positions whose value from the new files was compared with the old file's
    /// (0 without the check).
    pub checked: u64,
    /// The file was version 3 already and was copied as it is.
    pub copied: bool,
    /// `out` held this slice's version 3 file already, whole (a repack stopped and run
    /// again): kept, not repacked; `captures`, `threats` and `checked` are 0.
    pub resumed: bool,
    /// `bytes_after` is an estimate from sampled blocks ([`RepackOptions::estimate`]);
    /// `captures` and `threats` count the sampled blocks only.
    pub estimated: bool,
}

impl RepackedSlice {
    /// The report of slice `m`, whose file `old` was not repacked (copied or kept): its
    /// file is `bytes_after` bytes; nothing counted, checked or estimated.
    fn kept(m: Material, old: &TableFile, bytes_after: u64) -> RepackedSlice {
        RepackedSlice {
            material: m,
            positions: old.header().positions_per_side
                * u64::from(old.header().stored_side_count()),
            captures: 0,
            threats: 0,
            bytes_before: old.compressed_len(),
            bytes_after,
            checked: 0,
            copied: false,
            resumed: false,
            estimated: false,
        }
    }
}

/// Why a repack stopped.
#[derive(Debug, thiserror::Error)]
pub enum RepackError {
    #[error(transparent)]
    Probe(#[from] dtb_probe::ProbeError),
    #[error(transparent)]
    Table(#[from] dtb_probe::internal::table::TableError),
    #[error(transparent)]
    Write(#[from] crate::write::WriteError),
    #[error("{}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "slice {material}: {count} threat positions answer differently from the old file, the \
         first side {side} index {index}: old {old}, new {new}"
    )]
    Changed {
        material: Material,
        count: u64,
        side: usize,
        index: u64,
        old: Wld,
        new: Wld,
    },
    #[error("{0}")]
    Invalid(String),
}

/// The options of a repack.
#[derive(Clone, Copy, Debug)]
pub struct RepackOptions {
    pub zstd: CompressionParams,
    pub fill: Fill,
    /// Positions a block of the new files (a multiple of 32); `None` keeps the old files'.
    pub block_len: Option<u32>,
    /// Compare every threat position's new answer with the old stored value.
    pub check: bool,
    /// Only the slices of at most this many pieces.
    pub max_pieces: Option<u32>,
    /// Write nothing: estimate each slice's new size from every Nth block (old and new
    /// values of the block compressed alike; the slice's bytes scaled by their ratio). Not
    /// with a `block_len` other than the old files': refused, as the ratio cannot show it.
    pub estimate: Option<u32>,
}

/// Repack every WLD table of `rules`' variant in `from` into `out` (created if missing, once
/// `from` has such tables; never with [`RepackOptions::estimate`], which writes nothing), in
/// ascending order of pieces, so that a slice's captures lead to slices already repacked.
/// DTW files are not copied; version 3 files are copied as they are (not with an estimate:
/// reported as `copied`, their bytes unchanged). `done` is called after each slice.
///
/// # Errors
/// A directory that cannot be read or written, a damaged table, or (with the check) a
/// changed value; the slices finished before stay written.
pub fn repack_dir(
    from: &Path,
    out: &Path,
    rules: Rules,
    opts: &RepackOptions,
    done: &mut dyn FnMut(&RepackedSlice),
) -> Result<Vec<RepackedSlice>, RepackError> {
    if !rules.capture_compulsory {
        return Err(RepackError::Invalid(format!(
            "rule set {:?} has no compulsory capture: threat positions are not \"don't care\"",
            rules.name
        )));
    }
    if let Some(b) = opts.block_len {
        if !crate::compress::block_len_ok(b) {
            return Err(RepackError::Invalid(format!(
                "block length {b} is not a multiple of 64 from 64 to {}",
                dtb_probe::internal::format::MAX_BLOCK_LEN
            )));
        }
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| RepackError::Io { path, source }
    };
    // The input first: a missing or foreign `from` leaves no `out` behind.
    let mut src = Tablebase::with_cache_bytes(rules, 64 << 20);
    src.add_directory(from)?;
    let materials = src.materials(ValueKind::Wld);
    if out.exists()
        && std::fs::canonicalize(from).map_err(io(from))?
            == std::fs::canonicalize(out).map_err(io(out))?
    {
        return Err(RepackError::Invalid(
            "--out must be another directory than --from".into(),
        ));
    }
    // An estimate writes nothing, `out` included.
    if opts.estimate.is_none() && !materials.is_empty() {
        std::fs::create_dir_all(out).map_err(io(out))?;
    }
    let mut reports = Vec::new();
    for m in materials {
        if opts.max_pieces.is_some_and(|p| m.pieces() > p) {
            continue;
        }
        let old = src.table(m, ValueKind::Wld)?;
        let name = old
            .path()
            .file_name()
            .map(PathBuf::from)
            .ok_or_else(|| RepackError::Invalid("a table path has no file name".into()))?;
        let dest = out.join(&name);
        let r = if old.header().version == FORMAT_VERSION_THREAT {
            if opts.estimate.is_none() {
                std::fs::copy(old.path(), &dest).map_err(io(&dest))?;
            }
            RepackedSlice {
                copied: true,
                ..RepackedSlice::kept(m, old, old.compressed_len())
            }
        } else if opts.estimate.is_none() && repacked_already(&rules, m, old, &dest) {
            let bytes = std::fs::metadata(&dest).map_err(io(&dest))?.len();
            RepackedSlice {
                resumed: true,
                ..RepackedSlice::kept(m, old, bytes)
            }
        } else {
            repack_slice(&rules, m, old, &dest, out, opts)?
        };
        done(&r);
        reports.push(r);
    }
    Ok(reports)
}

/// Whether `dest` is already the version 3 repack of `old` (slice `m`), whole: a repack that
/// was stopped and run again keeps the slices it finished. Files are written to a temporary
/// name, checked and renamed (`write.rs`), so a file there is finished unless damaged since:
/// its header must match `old`'s (rules, slice, sides, positions, counts) at version 3, and its
/// checksums must hold. Anything else is repacked again.
fn repacked_already(rules: &Rules, m: Material, old: &TableFile, dest: &Path) -> bool {
    if !dest.exists() {
        return false;
    }
    let cache = std::sync::Arc::new(dtb_probe::internal::table::BlockCache::new(0));
    let Ok(new) = TableFile::open(dest, cache) else {
        return false;
    };
    let (h, o) = (new.header(), old.header());
    h.version == FORMAT_VERSION_THREAT
        && h.mismatch(rules, m, ValueKind::Wld).is_none()
        && (h.sides, h.positions_per_side, h.counts) == (o.sides, o.positions_per_side, o.counts)
        && new.verify_payload().is_ok()
}

/// What repacking reads and adds up over the blocks of one stored side of a slice.
struct SideRepack<'a> {
    rules: &'a Rules,
    ix: &'a SliceIndex,
    /// The version 1 file.
    old: &'a TableFile,
    side: usize,
    color: Color,
    /// Positions a work item: a block of the new file (a multiple of 64).
    chunk: u64,
    /// Every how many work items one is done (an estimate samples; otherwise 1).
    every: u64,
    opts: &'a RepackOptions,
    tally: &'a Tally,
}

/// Counts over a slice's blocks.
#[derive(Default)]
struct Tally {
    /// Positions read (for an estimate, those of the sampled blocks), and of them the
    /// capture and threat positions.
    positions: AtomicU64,
    captures: AtomicU64,
    threats: AtomicU64,
    /// Estimate: compressed bytes of the sampled blocks, old values and new.
    sampled: [AtomicU64; 2],
}

impl SideRepack<'_> {
    /// Work item `c`: its values read from the old file into `w` (packed), its threat
    /// positions marked in `t`, its "don't care" positions filled by `filler`, and (for an
    /// estimate) its compressed sizes before and after added up.
    fn block(
        &self,
        c: usize,
        w: &mut [u64],
        t: &mut [u64],
        filler: &mut std::io::Result<Filler>,
    ) -> Result<(), RepackError> {
        if !(c as u64).is_multiple_of(self.every) {
            return Ok(());
        }
        let (chunk, h) = (self.chunk, self.old.header());
        let lo = c as u64 * chunk;
        let hi = (lo + chunk).min(h.positions_per_side);
        let mut men = MenCache::default();
        let mut moves = Vec::with_capacity(16);
        let mut dc = vec![0u64; t.len()];
        let (mut caps, mut thr) = (0, 0);
        let mut block: Option<(u32, std::sync::Arc<[u8]>)> = None;
        for i in lo..hi {
            let (b, off) = h
                .block_of(self.side, i)
                .ok_or_else(|| RepackError::Invalid(format!("index {i} out of range")))?;
            let raw = match &block {
                Some((k, raw)) if *k == b => raw,
                _ => &block.insert((b, self.old.read_block(b)?)).1,
            };
            let code = u16::from(raw[off / 4] >> (2 * (off % 4)) & 3);
            let j = (i - lo) as usize;
            w[j / 32] |= u64::from(code) << (2 * (j % 32));
            let pos = self.ix.unindex_cached(i, self.color, &mut men);
            if has_capture(self.rules, &pos) {
                caps += 1;
                dc[j / 64] |= 1 << (j % 64);
            } else if is_threat_dont_care(self.rules, &pos, &mut moves) {
                thr += 1;
                dc[j / 64] |= 1 << (j % 64);
                t[j / 64] |= 1 << (j % 64);
            }
        }
        self.tally.positions.fetch_add(hi - lo, Relaxed);
        self.tally.captures.fetch_add(caps, Relaxed);
        self.tally.threats.fetch_add(thr, Relaxed);
        let old_words = self.opts.estimate.map(|_| w.to_vec());
        match filler {
            Ok(f) => f.fill(w, &dc, (hi - lo) as usize),
            Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
        }
        .map_err(|e| RepackError::Invalid(format!("zstd: {e}")))?;
        if let Some(old_words) = old_words {
            let mut z = self
                .opts
                .zstd
                .compressor()
                .map_err(|e| RepackError::Invalid(format!("zstd: {e}")))?;
            for (k, words) in [&old_words[..], &w[..]].into_iter().enumerate() {
                let c = z
                    .compress(&words.block_bytes((hi - lo) as usize))
                    .map_err(|e| RepackError::Invalid(format!("zstd: {e}")))?;
                self.tally.sampled[k].fetch_add(c.len() as u64, Relaxed);
            }
        }
        Ok(())
    }
}

/// Repacks one version 1 WLD table `old` (slice `m`) into `dest`; `out` holds the slices
/// repacked before (for the check).
fn repack_slice(
    rules: &Rules,
    m: Material,
    old: &TableFile,
    dest: &Path,
    out: &Path,
    opts: &RepackOptions,
) -> Result<RepackedSlice, RepackError> {
    let h = old.header().clone();
    if h.version != FORMAT_VERSION {
        return Err(RepackError::Invalid(format!(
            "{}: format version {} cannot be repacked",
            old.path().display(),
            h.version
        )));
    }
    let ix = SliceIndex::new(m, rules.geometry());
    let n = h.positions_per_side;
    let sides: Vec<usize> = (0..2).filter(|&s| h.side_stored(s)).collect();
    // Per stored side: the values two bits a position (old file order), and which
    // positions are threat positions (bits), both filled block by block.
    // Work items are the new file's blocks (whole mask words: a multiple of 64).
    let chunk = u64::from(opts.block_len.unwrap_or(h.block_len));
    if !chunk.is_multiple_of(64) {
        return Err(RepackError::Invalid(format!(
            "{}: blocks of {chunk} positions; give a block length (a multiple of 64)",
            old.path().display()
        )));
    }
    if opts.estimate.is_some() && chunk != u64::from(h.block_len) {
        return Err(RepackError::Invalid(format!(
            "{}: an estimate compares fills at one block length and cannot judge blocks of \
             {chunk} positions instead of {}: repack without an estimate",
            old.path().display(),
            h.block_len
        )));
    }
    let tally = Tally::default();
    let every = u64::from(opts.estimate.unwrap_or(1).max(1));
    let mut words: Vec<Vec<u64>> = Vec::new();
    let mut threat_masks: Vec<Vec<u64>> = Vec::new();
    for &side in &sides {
        let color = if side == 0 {
            Color::White
        } else {
            Color::Black
        };
        let mut w = vec![0u64; n.div_ceil(32) as usize];
        let mut t = vec![0u64; n.div_ceil(64) as usize];
        let job = SideRepack {
            rules,
            ix: &ix,
            old,
            side,
            color,
            chunk,
            every,
            opts,
            tally: &tally,
        };
        w.par_chunks_mut((chunk / 32) as usize)
            .zip(t.par_chunks_mut((chunk / 64) as usize))
            .enumerate()
            .try_for_each_init(
                || Filler::new(opts.fill, &opts.zstd),
                |filler, (c, (w, t))| job.block(c, w, t, filler),
            )?;
        words.push(w);
        threat_masks.push(t);
    }
    let Tally {
        positions: read,
        captures,
        threats,
        sampled,
    } = tally;
    if opts.estimate.is_some() {
        let [old_s, new_s] = sampled.map(AtomicU64::into_inner);
        let ratio = if old_s == 0 {
            1.0
        } else {
            new_s as f64 / old_s as f64
        };
        // The capture and threat positions of the sampled blocks, scaled to the slice.
        let all = n * sides.len() as u64;
        let scaled = |k: AtomicU64| {
            let read = read.load(Relaxed).max(1);
            (k.into_inner() as f64 * all as f64 / read as f64).round() as u64
        };
        return Ok(RepackedSlice {
            material: m,
            positions: all,
            captures: scaled(captures),
            threats: scaled(threats),
            bytes_before: old.compressed_len(),
            bytes_after: (old.compressed_len() as f64 * ratio).round() as u64,
            checked: 0,
            copied: false,
            resumed: false,
            estimated: true,
        });
    }
    let mut header = h.clone();
    header.version = FORMAT_VERSION_THREAT;
    if let Some(b) = opts.block_len {
        header.block_len = b;
    }
    let refs: Vec<&[u64]> = words.iter().map(|w| w.as_slice()).collect();
    let bytes_after = write_packed_wld(dest, header, &refs, &opts.zstd)?;
    drop(words);
    let mut checked = 0;
    if opts.check {
        checked = check_threats(rules, m, old, out, &sides, &threat_masks)?;
    }
    Ok(RepackedSlice {
        material: m,
        positions: n * sides.len() as u64,
        captures: captures.into_inner(),
        threats: threats.into_inner(),
        bytes_before: old.compressed_len(),
        bytes_after,
        checked,
        copied: false,
        resumed: false,
        estimated: false,
    })
}

/// A changed answer: (how many so far, side, index, old value, new value).
type Mismatch = (u64, usize, u64, Wld, Wld);

/// Probes every threat position of slice `m` through the repacked files in `out` and
/// compares the answer with the value `old` stores; returns how many were compared.
fn check_threats(
    rules: &Rules,
    m: Material,
    old: &TableFile,
    out: &Path,
    sides: &[usize],
    threat_masks: &[Vec<u64>],
) -> Result<u64, RepackError> {
    let ix = SliceIndex::new(m, rules.geometry());
    let new = Tablebase::open(out, *rules)?;
    let checked = AtomicU64::new(0);
    let first: std::sync::Mutex<Option<Mismatch>> = Default::default();
    for (k, &side) in sides.iter().enumerate() {
        let color = if side == 0 {
            Color::White
        } else {
            Color::Black
        };
        threat_masks[k].par_chunks(1024).enumerate().try_for_each(
            |(c, t)| -> Result<(), RepackError> {
                let mut men = MenCache::default();
                let mut bad = 0;
                for (wi, &word) in t.iter().enumerate() {
                    let mut bits = word;
                    while bits != 0 {
                        let b = bits.trailing_zeros() as u64;
                        bits &= bits - 1;
                        let i = (c as u64 * 1024 + wi as u64) * 64 + b;
                        let pos = ix.unindex_cached(i, color, &mut men);
                        let raw = old.stored_code(side, i)?;
                        let was = WldCode::from_bits(raw)
                            .ok_or_else(|| {
                                RepackError::Invalid(format!("WLD code {raw} at index {i}"))
                            })?
                            .wld();
                        let now = new.probe_wld(&pos)?;
                        checked.fetch_add(1, Relaxed);
                        if was != now {
                            bad += 1;
                            let mut f = first.lock().expect("no panics while held");
                            if f.is_none() {
                                *f = Some((0, side, i, was, now));
                            }
                        }
                    }
                }
                if bad > 0 {
                    let mut f = first.lock().expect("no panics while held");
                    if let Some(f) = f.as_mut() {
                        f.0 += bad;
                    }
                }
                Ok(())
            },
        )?;
    }
    if let Some((count, side, index, old, new)) = first.into_inner().expect("no panics") {
        return Err(RepackError::Changed {
            material: m,
            count,
            side,
            index,
            old,
            new,
        });
    }
    Ok(checked.into_inner())
}
