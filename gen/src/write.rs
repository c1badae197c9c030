//! Writing one table file atomically, in the layout of `dtb_probe::internal::format`
//! (specified in `docs/FORMAT.md`).
//!
//! The file is written under a temporary name in the destination directory, flushed, fsynced,
//! read back and verified, and only then renamed to its final name; the directory is then
//! fsynced. An interrupted run leaves at worst a `.<name>.XXXXXX.tmp` file, never a file with
//! the final name that looks finished.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dtb_probe::internal::format::{
    pack_values, FormatError, Header, ValueKind, FORMAT_VERSION_FLIP, HEADER_LEN,
};
use dtb_probe::internal::table::{BlockCache, TableError, TableFile};

use crate::packed::{PackedWld, EVEN};

/// The values of one table and its header, ready to be written.
#[derive(Clone, Debug)]
pub struct TableData<'a> {
    /// The header. [`write_table`] fills in `block_count` and `payload_crc`, and for DTW
    /// tables `max_plies` (the largest stored code minus one, 0 if every value is a draw);
    /// every other field is written as given.
    pub header: Header,
    /// One slice of codes per stored side, in order white to move then black to move (only
    /// the sides whose bit is set in `header.sides`), each `header.positions_per_side` long.
    /// Codes are as in the file: WLD 0 draw / 1 win / 2 loss; DTW 0 draw, otherwise plies + 1,
    /// fitting in `header.value_width` bits.
    pub sides: Vec<&'a [u16]>,
}

/// zstd settings for a table's blocks: a level and, optionally, overrides of the advanced
/// parameters that level sets (zstd picks them by level and block size). Written
/// `LEVEL[:strat=S,slog=N,tlen=N,mml=N,clog=N,hlog=N]`, e.g. `15:strat=7,slog=3`, each name
/// at most once; 0 leaves a parameter at the level's choice. Any parameters give a valid
/// zstd frame; readers need nothing to know them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompressionParams {
    /// The zstd compression level (1 to 22).
    pub level: i32,
    /// Strategy, 1 (fast) to 9 (btultra2): `ZSTD_c_strategy`.
    pub strategy: Option<u32>,
    /// `ZSTD_c_searchLog`.
    pub search_log: Option<u32>,
    /// `ZSTD_c_targetLength`.
    pub target_length: Option<u32>,
    /// `ZSTD_c_minMatch`.
    pub min_match: Option<u32>,
    /// `ZSTD_c_chainLog`.
    pub chain_log: Option<u32>,
    /// `ZSTD_c_hashLog`.
    pub hash_log: Option<u32>,
}

impl CompressionParams {
    /// Level `level` with zstd's own parameters for it.
    pub const fn level(level: i32) -> CompressionParams {
        CompressionParams {
            level,
            strategy: None,
            search_log: None,
            target_length: None,
            min_match: None,
            chain_log: None,
            hash_log: None,
        }
    }

    fn fields(&self) -> [(&'static str, Option<u32>); 6] {
        [
            ("strat", self.strategy),
            ("slog", self.search_log),
            ("tlen", self.target_length),
            ("mml", self.min_match),
            ("clog", self.chain_log),
            ("hlog", self.hash_log),
        ]
    }

    /// A compressor with these settings.
    ///
    /// # Errors
    /// zstd's, for a level or parameter out of its range.
    pub fn compressor(&self) -> io::Result<zstd::bulk::Compressor<'static>> {
        use zstd::zstd_safe::{CParameter, Strategy};
        let mut c = zstd::bulk::Compressor::new(self.level)?;
        if let Some(s) = self.strategy {
            let strategy = match s {
                1 => Strategy::ZSTD_fast,
                2 => Strategy::ZSTD_dfast,
                3 => Strategy::ZSTD_greedy,
                4 => Strategy::ZSTD_lazy,
                5 => Strategy::ZSTD_lazy2,
                6 => Strategy::ZSTD_btlazy2,
                7 => Strategy::ZSTD_btopt,
                8 => Strategy::ZSTD_btultra,
                9 => Strategy::ZSTD_btultra2,
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("zstd strategy {s} is not 1 to 9"),
                    ))
                }
            };
            c.set_parameter(CParameter::Strategy(strategy))?;
        }
        let set = [
            self.search_log.map(CParameter::SearchLog),
            self.target_length.map(CParameter::TargetLength),
            self.min_match.map(CParameter::MinMatch),
            self.chain_log.map(CParameter::ChainLog),
            self.hash_log.map(CParameter::HashLog),
        ];
        for p in set.into_iter().flatten() {
            c.set_parameter(p)?;
        }
        Ok(c)
    }
}

impl std::fmt::Display for CompressionParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.level)?;
        let mut sep = ':';
        for (name, v) in self.fields() {
            if let Some(v) = v {
                write!(f, "{sep}{name}={v}")?;
                sep = ',';
            }
        }
        Ok(())
    }
}

impl std::str::FromStr for CompressionParams {
    type Err = String;

    fn from_str(s: &str) -> Result<CompressionParams, String> {
        let (level, rest) = s.split_once(':').unwrap_or((s, ""));
        let level: i32 = level
            .trim()
            .parse()
            .map_err(|_| format!("{level:?} is not a zstd level (a whole number, 1 to 22)"))?;
        if !(1..=22).contains(&level) {
            return Err(format!("zstd level {level} is not 1 to 22"));
        }
        let mut p = CompressionParams::level(level);
        // "15:" is the level alone; otherwise every item must be NAME=VALUE.
        let items = rest.split(',').filter(|_| !rest.trim().is_empty());
        for item in items {
            let (name, value) = item
                .split_once('=')
                .ok_or_else(|| format!("{item:?} is not NAME=VALUE"))?;
            let v: u32 = value
                .trim()
                .parse()
                .map_err(|_| format!("{value:?} is not a whole number"))?;
            let slot = match name.trim() {
                "strat" => &mut p.strategy,
                "slog" => &mut p.search_log,
                "tlen" => &mut p.target_length,
                "mml" => &mut p.min_match,
                "clog" => &mut p.chain_log,
                "hlog" => &mut p.hash_log,
                other => {
                    return Err(format!(
                        "unknown zstd parameter {other:?} (strat, slog, tlen, mml, clog, hlog)"
                    ))
                }
            };
            if slot.replace(v).is_some() {
                return Err(format!("zstd parameter {:?} given twice", name.trim()));
            }
        }
        // zstd itself knows each parameter's range: ask it now, not at the first block.
        p.compressor()
            .map_err(|e| format!("zstd refuses {s:?}: {e}"))?;
        Ok(p)
    }
}

/// Why a table could not be written. Every message starts with the destination path.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The data or header given are not a valid table; nothing was written.
    #[error("{}: invalid table data: {reason}", path.display())]
    Invalid {
        /// The destination path.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// zstd failed to compress a block.
    #[error("{}: cannot compress block {block}", path.display())]
    Compress {
        /// The destination path.
        path: PathBuf,
        /// The block number.
        block: u32,
        /// The underlying error.
        source: io::Error,
    },
    /// A file system operation failed (for example a full disk); no file with the final name
    /// was created or replaced.
    #[error("{}: {action}", path.display())]
    Io {
        /// The destination path.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The underlying error.
        source: io::Error,
    },
    /// The file read back under its temporary name did not verify; it was removed.
    #[error("{}: written file failed verification", path.display())]
    Verify {
        /// The destination path.
        path: PathBuf,
        /// What the reader found.
        source: TableError,
    },
}

impl WriteError {
    /// The destination path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            WriteError::Invalid { path, .. }
            | WriteError::Compress { path, .. }
            | WriteError::Io { path, .. }
            | WriteError::Verify { path, .. } => path,
        }
    }
}

/// Checks `data` and returns the header to write, with `block_count` (and for DTW
/// `max_plies`) filled in; `payload_crc` is still to be computed.
fn prepare_header(path: &Path, data: &TableData) -> Result<Header, WriteError> {
    let invalid = |reason: String| WriteError::Invalid {
        path: path.to_path_buf(),
        reason,
    };
    let mut h = data.header.clone();
    h.payload_crc = 0;
    let stored = h.stored_side_count() as usize;
    if data.sides.len() != stored || h.sides & !3 != 0 {
        return Err(invalid(format!(
            "header.sides is {:#04x} ({stored} stored side(s)) but {} slice(s) of values were given",
            h.sides,
            data.sides.len()
        )));
    }
    for (k, side) in data.sides.iter().enumerate() {
        if side.len() as u64 != h.positions_per_side {
            return Err(invalid(format!(
                "stored side {k} has {} values, positions_per_side is {}",
                side.len(),
                h.positions_per_side
            )));
        }
    }
    let max = data
        .sides
        .iter()
        .flat_map(|s| s.iter().copied())
        .max()
        .unwrap_or(0);
    if let Some(limit) = dtb_probe::internal::format::max_code(h.value_width) {
        if max > limit {
            // Find where, for a useful message.
            for (k, side) in data.sides.iter().enumerate() {
                if let Some(i) = side.iter().position(|&c| c > limit) {
                    return Err(invalid(format!(
                        "stored side {k}, index {i}: code {} does not fit in {} bits",
                        side[i], h.value_width
                    )));
                }
            }
        }
    }
    if h.kind == ValueKind::Dtw {
        use dtb_probe::internal::value::FLIP;
        if h.version == FORMAT_VERSION_FLIP {
            // The largest distance of any code, flagged or not.
            let plies = data
                .sides
                .iter()
                .flat_map(|s| s.iter().map(|&c| c & !FLIP))
                .max()
                .unwrap_or(0);
            h.max_plies = plies.saturating_sub(1);
        } else if max >= FLIP {
            return Err(invalid(format!(
                "code {max:#06x} carries the outcome flag, which only format version \
                 {FORMAT_VERSION_FLIP} files hold"
            )));
        } else {
            h.max_plies = max.saturating_sub(1);
        }
    }
    with_block_count(path, h)
}

/// `h` with its block count filled in, validated: the last step of checking a header to
/// write (codes or packed values alike).
fn with_block_count(path: &Path, mut h: Header) -> Result<Header, WriteError> {
    let invalid = |reason: String| WriteError::Invalid {
        path: path.to_path_buf(),
        reason,
    };
    h.block_count = h.expected_block_count().ok_or_else(|| {
        invalid(format!(
            "{} positions per side in blocks of {} need too many blocks",
            h.positions_per_side, h.block_len
        ))
    })?;
    h.validate().map_err(|e| invalid(e.to_string()))?;
    Ok(h)
}

/// The values of a table to write: codes, one `u16` a position, or WLD codes already packed
/// two bits a position (32 a word, the layout of a WLD block's bytes).
#[derive(Clone, Copy)]
enum Payload<'a> {
    Codes(&'a [&'a [u16]]),
    Packed(&'a [&'a [u64]]),
}

impl Payload<'_> {
    /// Block `block` (side-major, in file order) packed as the file stores it.
    fn raw(&self, header: &Header, block: u32) -> Result<Vec<u8>, FormatError> {
        let per_side = header.blocks_per_side() as usize;
        let (side, b) = (block as usize / per_side, block as usize % per_side);
        let bl = header.block_len as usize;
        let n = header.positions_per_side as usize;
        let (lo, hi) = (b * bl, ((b + 1) * bl).min(n));
        match self {
            Payload::Codes(sides) => pack_values(header.value_width, &sides[side][lo..hi]),
            Payload::Packed(sides) => {
                // `block_len` is a multiple of 32 (checked), so a block is whole words.
                let words = &sides[side][lo / 32..hi.div_ceil(32)];
                let out = words.block_bytes(hi - lo);
                if let Some(k) = words.iter().position(|w| w & (w >> 1) & EVEN != 0) {
                    return Err(FormatError::Invalid(format!(
                        "a 2-bit code 3 in word {} of the block",
                        k
                    )));
                }
                Ok(out)
            }
        }
    }
}

/// Packs and compresses every block, side-major, in file order.
fn compress_blocks(
    path: &Path,
    header: &Header,
    data: Payload,
    zstd: &CompressionParams,
) -> Result<Vec<Vec<u8>>, WriteError> {
    use rayon::prelude::*;
    // Blocks are independent: compress them on all worker threads, one compressor each.
    let blocks = (0..header.block_count)
        .into_par_iter()
        .map_init(
            || zstd.compressor(),
            |compressor, block| {
                let compressor = compressor.as_mut().map_err(|e| WriteError::Compress {
                    path: path.to_path_buf(),
                    block,
                    source: std::io::Error::new(e.kind(), e.to_string()),
                })?;
                let raw = data.raw(header, block).map_err(|e| WriteError::Invalid {
                    path: path.to_path_buf(),
                    reason: format!("block {block}: {e}"),
                })?;
                compressor
                    .compress(&raw)
                    .map_err(|source| WriteError::Compress {
                        path: path.to_path_buf(),
                        block,
                        source,
                    })
            },
        )
        .collect::<Result<Vec<Vec<u8>>, WriteError>>()?;
    Ok(blocks)
}

/// Reads the file at `tmp` back and checks it holds exactly `data`.
fn verify_written(tmp: &Path, header: &Header, data: Payload) -> Result<(), TableError> {
    // A cache of zero bytes keeps nothing: every block is read from the file.
    let table = TableFile::open(tmp, Arc::new(BlockCache::new(0)))?;
    let format = |source: FormatError| TableError::Format {
        path: tmp.to_path_buf(),
        source,
    };
    if table.header() != header {
        return Err(format(FormatError::Invalid(
            "header read back differs from the header written".to_string(),
        )));
    }
    table.verify_payload()?;
    use rayon::prelude::*;
    // Blocks are checked on all worker threads; the first bad one (in file order) is named.
    let bad: Vec<Option<TableError>> = (0..header.block_count)
        .into_par_iter()
        .map(|block| {
            let check = || -> Result<(), TableError> {
                let expected = data.raw(header, block).map_err(format)?;
                let got = table.read_block(block)?;
                if got[..] != expected[..] {
                    return Err(format(FormatError::Invalid(format!(
                        "block {block} read back differs from the values written"
                    ))));
                }
                Ok(())
            };
            check().err()
        })
        .collect();
    match bad.into_iter().flatten().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Makes a rename in `dir` durable (Unix: fsync the directory; elsewhere nothing to do).
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// The directory a table at `path` goes in (`.` for a bare file name).
fn destination_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Writes the table `data` to `path` atomically and returns the number of bytes written.
///
/// Validates the input (one slice per stored side, each `positions_per_side` long, codes that
/// fit the width, a valid header), packs and compresses each block with zstd under `zstd`,
/// builds the block table and checksums, writes it all to a temporary file in the directory of
/// `path`, flushes and fsyncs it, reads it back and verifies every block, and renames it to
/// `path` (replacing any file there), then fsyncs the directory. On any error the temporary
/// file is removed and `path` is left as it was.
///
/// The compressed blocks are held in memory until the file is written (they are much smaller
/// than the input codes).
pub fn write_table(
    path: &Path,
    data: &TableData,
    zstd: &CompressionParams,
) -> Result<u64, WriteError> {
    let header = prepare_header(path, data)?;
    write_payload(path, header, Payload::Codes(&data.sides), zstd)
}

/// [`write_table`] for a WLD table whose codes are packed already: `sides` holds, per stored
/// side, the WLD codes (0 draw, 1 win, 2 loss) two bits a position, 32 a word (position `i`
/// in bits `2 * (i % 32)` of word `i / 32`), `positions_per_side.div_ceil(32)` words, the
/// bits past the last position 0. What a WLD-only build writes without a 16-bit copy of its
/// slice. `header` is as for [`TableData::header`].
///
/// # Errors
/// As [`write_table`]; also [`WriteError::Invalid`] for a header that is not a 2-bit WLD
/// table with blocks of a multiple of 32 positions, or a 2-bit field holding 3.
pub fn write_packed_wld(
    path: &Path,
    header: Header,
    sides: &[&[u64]],
    zstd: &CompressionParams,
) -> Result<u64, WriteError> {
    let invalid = |reason: String| WriteError::Invalid {
        path: path.to_path_buf(),
        reason,
    };
    if header.kind != ValueKind::Wld
        || header.value_width != 2
        || !header.block_len.is_multiple_of(32)
    {
        return Err(invalid(format!(
            "packed values need a 2-bit WLD header with blocks of a multiple of 32 positions (kind {:?}, width {}, block {})",
            header.kind, header.value_width, header.block_len
        )));
    }
    let mut h = header;
    h.payload_crc = 0;
    let stored = h.stored_side_count() as usize;
    if sides.len() != stored || h.sides & !3 != 0 {
        return Err(invalid(format!(
            "header.sides is {:#04x} ({stored} stored side(s)) but {} side(s) of values were given",
            h.sides,
            sides.len()
        )));
    }
    let words = h.positions_per_side.div_ceil(32);
    for (k, side) in sides.iter().enumerate() {
        if side.len() as u64 != words {
            return Err(invalid(format!(
                "stored side {k} has {} words, {} positions need {words}",
                side.len(),
                h.positions_per_side
            )));
        }
        let tail = h.positions_per_side % 32;
        if tail != 0 && side.last().is_some_and(|w| w >> (2 * tail) != 0) {
            return Err(invalid(format!(
                "stored side {k} has bits set past its last position"
            )));
        }
    }
    let h = with_block_count(path, h)?;
    write_payload(path, h, Payload::Packed(sides), zstd)
}

/// Compresses, writes, verifies and renames into place (see [`write_table`]).
fn write_payload(
    path: &Path,
    mut header: Header,
    data: Payload,
    zstd: &CompressionParams,
) -> Result<u64, WriteError> {
    let io_err = |action: &'static str| {
        move |source: io::Error| WriteError::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    };
    let file_name =
        path.file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| WriteError::Invalid {
                path: path.to_path_buf(),
                reason: "the path has no (UTF-8) file name".to_string(),
            })?;
    let dir = destination_dir(path);

    let blocks = compress_blocks(path, &header, data, zstd)?;
    let table = header.block_table(&blocks);
    let mut crc = crc32fast::Hasher::new();
    crc.update(&table);
    for b in &blocks {
        crc.update(b);
    }
    header.payload_crc = crc.finalize();
    let header_bytes = header.encode();
    let total =
        (HEADER_LEN + table.len()) as u64 + blocks.iter().map(|b| b.len() as u64).sum::<u64>();

    let prefix = format!(".{file_name}.");
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io_err("creating a temporary file"))?;
    {
        let mut w = BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        w.write_all(&header_bytes)
            .map_err(io_err("writing the temporary file"))?;
        w.write_all(&table)
            .map_err(io_err("writing the temporary file"))?;
        for b in &blocks {
            w.write_all(b)
                .map_err(io_err("writing the temporary file"))?;
        }
        w.flush().map_err(io_err("writing the temporary file"))?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Temporary files are created owner-only; a finished table is readable by everyone.
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(io_err("setting permissions"))?;
    }
    tmp.as_file()
        .sync_all()
        .map_err(io_err("syncing the temporary file"))?;

    verify_written(tmp.path(), &header, data).map_err(|source| WriteError::Verify {
        path: path.to_path_buf(),
        source,
    })?;

    tmp.persist(path)
        .map_err(|e| io_err("renaming the temporary file into place")(e.error))?;
    sync_dir(dir).map_err(io_err("syncing the directory"))?;
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dtb_probe::internal::format::{table_file_name, WldCode, FORMAT_VERSION};
    use dtb_probe::internal::material::Material;

    /// Deterministic pseudo-random numbers (xorshift64*).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    fn codes(rng: &mut Rng, n: usize, max: u16) -> Vec<u16> {
        let mut v = Vec::with_capacity(n);
        while v.len() < n {
            let c = (rng.next() % (u64::from(max) + 1)) as u16;
            let run = 1 + (rng.next() % 12) as usize;
            for _ in 0..run.min(n - v.len()) {
                v.push(c);
            }
        }
        v
    }

    fn header(kind: ValueKind, width: u8, sides: u8, n: u64, block_len: u32) -> Header {
        Header {
            version: FORMAT_VERSION,
            kind,
            value_width: width,
            variant: "english".to_string(),
            rules_code: *b"rules-code-16byt",
            material: [2, 0, 1, 1],
            sides,
            positions_per_side: n,
            block_len,
            block_count: 0,
            counts: [[100, 200, 300], [400, 500, 600]],
            max_plies: 0,
            count_code: [0; 16],
            cursed: [[0; 2]; 2],
            payload_crc: 0,
        }
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn compression_settings_parse_print_and_refuse_what_zstd_refuses() {
        let p: CompressionParams = "15:strat=7,slog=2,tlen=999,mml=5".parse().unwrap();
        assert_eq!(p, crate::build::ZSTD);
        assert_eq!(p.to_string(), "15:strat=7,slog=2,tlen=999,mml=5");
        assert_eq!(
            "9".parse::<CompressionParams>(),
            Ok(CompressionParams::level(9))
        );
        assert_eq!(CompressionParams::level(9).to_string(), "9");
        for bad in [
            "",
            "x",
            "0",
            "23",
            "15:",
            "15:slog",
            "15:slog=x",
            "15:foo=1",
            "15:strat=0",
            "15:strat=10",
            "15:slog=99",
            "-3",
        ] {
            if bad == "15:" {
                // An empty override list is the level alone.
                assert_eq!(
                    bad.parse::<CompressionParams>(),
                    Ok(CompressionParams::level(15))
                );
                continue;
            }
            assert!(
                bad.parse::<CompressionParams>().is_err(),
                "{bad:?} accepted"
            );
        }
        // The settings change the bytes, never what a reader gets back.
        let raw: Vec<u8> = (0..16384u32).map(|i| (i * i / 7 % 5) as u8).collect();
        let a = p.compressor().unwrap().compress(&raw).unwrap();
        let b = CompressionParams::level(15)
            .compressor()
            .unwrap()
            .compress(&raw)
            .unwrap();
        for c in [a, b] {
            assert_eq!(zstd::bulk::decompress(&c, raw.len()).unwrap(), raw);
        }
    }

    #[test]
    fn round_trip_every_kind() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = Rng(0x1234_5678);
        let n = 5003usize;
        for (kind, width, max) in [
            (ValueKind::Wld, 2u8, 2u16),
            (ValueKind::Dtw, 8, 255),
            (ValueKind::Dtw, 16, 4321),
        ] {
            let white = codes(&mut rng, n, max);
            let mut black = codes(&mut rng, n, max);
            black[17] = max; // make sure the largest code appears
            let h = header(kind, width, 3, n as u64, 700);
            let m = Material::from_counts(h.material);
            let name = table_file_name(&h.variant, m, kind);
            assert_eq!(name, format!("english-2011.{}", kind.extension()));
            let path = dir.path().join(&name);
            let data = TableData {
                header: h.clone(),
                sides: vec![&white, &black],
            };
            let written = write_table(&path, &data, &CompressionParams::level(3)).unwrap();
            assert_eq!(written, std::fs::metadata(&path).unwrap().len());

            let t = TableFile::open(&path, Arc::new(BlockCache::new(1 << 20))).unwrap();
            t.verify_payload().unwrap();
            let rh = t.header();
            assert_eq!(rh.block_count, 16); // 2 sides x ceil(5003 / 700) = 2 x 8
            assert_eq!(rh.block_values(7), 5003 - 7 * 700);
            assert_eq!(rh.counts, h.counts);
            assert_eq!(rh.rules_code, h.rules_code);
            assert_eq!(rh.material, [2, 0, 1, 1]);
            assert_eq!(rh.variant, "english");
            let expect_plies = if kind == ValueKind::Dtw { max - 1 } else { 0 };
            assert_eq!(rh.max_plies, expect_plies);
            for i in 0..n {
                assert_eq!(
                    t.stored_code(0, i as u64).unwrap(),
                    white[i],
                    "{kind:?} white {i}"
                );
                assert_eq!(
                    t.stored_code(1, i as u64).unwrap(),
                    black[i],
                    "{kind:?} black {i}"
                );
            }
            assert!(matches!(
                t.stored_code(0, n as u64),
                Err(TableError::IndexOutOfRange { .. })
            ));
        }
        assert!(leftovers(dir.path()).is_empty());
    }

    /// Format version 2: flagged DTW codes (a win in 0 or 2 plies, a loss in 1) are written
    /// and read back, `max_plies` is the longest distance of any code; a version 1 file
    /// refuses them, and a corrupt flagged code (`0x8000`, or beyond `max_plies`) is caught.
    #[test]
    fn flagged_codes_need_version_2() {
        use dtb_probe::internal::format::FORMAT_VERSION_FLIP;
        use dtb_probe::internal::value::{Code, DRAW, FLIP, WON};
        let dir = tempfile::tempdir().unwrap();
        let codes = [
            WON,
            Code::loss(1),
            Code::win(2),
            Code::win(3),
            DRAW,
            Code::loss(4),
        ]
        .map(Code::bits);
        assert_eq!(codes, [0x8001, 0x8002, 0x8003, 4, 0, 5]);
        let path = dir.path().join("english-0101.dtw");
        let mut h = header(ValueKind::Dtw, 16, 1, 6, 4);
        h.version = FORMAT_VERSION_FLIP;
        let data = TableData {
            header: h.clone(),
            sides: vec![&codes],
        };
        write_table(&path, &data, &CompressionParams::level(1)).unwrap();
        let t = TableFile::open(&path, Arc::new(BlockCache::new(1 << 16))).unwrap();
        assert_eq!(t.header().version, FORMAT_VERSION_FLIP);
        assert_eq!(t.header().max_plies, 4);
        let got: Vec<u16> = (0..6).map(|i| t.stored_code(0, i).unwrap()).collect();
        assert_eq!(got, codes);
        // Version 1 has no flagged codes.
        let v1 = TableData {
            header: header(ValueKind::Dtw, 16, 1, 6, 4),
            sides: vec![&codes],
        };
        let e = write_table(
            &dir.path().join("v1.dtw"),
            &v1,
            &CompressionParams::level(1),
        );
        assert!(e.unwrap_err().to_string().contains("outcome flag"));
        // Version 2 is for 16-bit DTW files only.
        let mut narrow = h.clone();
        narrow.value_width = 8;
        let e = write_table(
            &dir.path().join("v2-8.dtw"),
            &TableData {
                header: narrow,
                sides: vec![&[1, 2, 3, 0, 0, 0]],
            },
            &CompressionParams::level(1),
        );
        assert!(e.unwrap_err().to_string().contains("format version 2"));
        // A reader checks flagged codes against max_plies.
        let mut hh = t.header().clone();
        hh.block_count = 2;
        for bad in [FLIP, FLIP | 6] {
            let raw: Vec<u8> = [bad, 1, 2, 3]
                .iter()
                .flat_map(|c| c.to_le_bytes())
                .collect();
            assert!(hh.check_block(0, &raw).is_err(), "{bad:#x}");
        }
        let raw: Vec<u8> = [FLIP | 5, 1, 2, 3]
            .iter()
            .flat_map(|c| c.to_le_bytes())
            .collect();
        assert!(hh.check_block(0, &raw).is_ok());
    }

    #[test]
    fn wld_codes_and_one_side() {
        let dir = tempfile::tempdir().unwrap();
        let black = [
            WldCode::Win,
            WldCode::Loss,
            WldCode::Draw,
            WldCode::Win,
            WldCode::Win,
        ]
        .map(|c| u16::from(c.bits()));
        let path = dir.path().join("english-0101.wld");
        let data = TableData {
            header: header(ValueKind::Wld, 2, 2, 5, 2),
            sides: vec![&black],
        };
        write_table(&path, &data, &CompressionParams::level(1)).unwrap();
        let t = TableFile::open(&path, Arc::new(BlockCache::new(1 << 16))).unwrap();
        assert_eq!(t.header().block_count, 3);
        assert!(matches!(
            t.stored_code(0, 0),
            Err(TableError::SideNotStored { side: 0, .. })
        ));
        let got: Vec<u16> = (0..5).map(|i| t.stored_code(1, i).unwrap()).collect();
        assert_eq!(got, black);
        // The last block holds one value: one byte, low two bits.
        assert_eq!(&t.read_block(2).unwrap()[..], &[0b01]);
    }

    #[test]
    fn replaces_existing_file_and_sets_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("english-1010.dtw");
        std::fs::write(&path, b"old contents").unwrap();
        let white = vec![0u16, 1, 2, 3, 4, 5, 6, 7];
        let data = TableData {
            header: header(ValueKind::Dtw, 8, 1, 8, 3),
            sides: vec![&white],
        };
        let written = write_table(&path, &data, &CompressionParams::level(19)).unwrap();
        let t = TableFile::open(&path, Arc::new(BlockCache::new(1 << 16))).unwrap();
        assert_eq!(t.compressed_len(), written);
        assert_eq!(t.header().max_plies, 6);
        assert_eq!(t.stored_code(0, 7).unwrap(), 7);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o644);
        }
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn destination_directory() {
        assert_eq!(
            destination_dir(Path::new("english-1001.wld")),
            Path::new(".")
        );
        assert_eq!(
            destination_dir(Path::new("t/english-1001.wld")),
            Path::new("t")
        );
        assert_eq!(destination_dir(Path::new("/a/b.wld")), Path::new("/a"));
    }

    #[test]
    fn rejects_invalid_input_without_writing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("english-1001.wld");
        let ok = vec![0u16; 10];
        let short = vec![0u16; 9];
        let mut three = vec![0u16; 10];
        three[4] = 3;
        let check = |data: TableData, needle: &str| {
            let e = write_table(&path, &data, &CompressionParams::level(3)).unwrap_err();
            assert!(matches!(e, WriteError::Invalid { .. }), "{e:?}");
            let msg = e.to_string();
            assert!(msg.starts_with(&path.display().to_string()), "{msg}");
            assert!(msg.contains(needle), "{msg} lacks {needle}");
            assert_eq!(e.path(), path.as_path());
            assert!(!path.exists());
            assert!(leftovers(dir.path()).is_empty());
        };
        let h = header(ValueKind::Wld, 2, 3, 10, 4);
        check(
            TableData {
                header: h.clone(),
                sides: vec![&ok],
            },
            "1 slice(s)",
        );
        check(
            TableData {
                header: h.clone(),
                sides: vec![&ok, &short],
            },
            "stored side 1 has 9 values",
        );
        check(
            TableData {
                header: h.clone(),
                sides: vec![&ok, &three],
            },
            "stored side 1, index 4: code 3",
        );
        let mut wide = vec![0u16; 10];
        wide[9] = 256;
        check(
            TableData {
                header: header(ValueKind::Dtw, 8, 1, 10, 4),
                sides: vec![&wide],
            },
            "code 256 does not fit in 8 bits",
        );
        let mut bad = h.clone();
        bad.variant = "no spaces please".into();
        check(
            TableData {
                header: bad,
                sides: vec![&ok, &ok],
            },
            "variant",
        );
        let mut bad = h.clone();
        bad.value_width = 8;
        check(
            TableData {
                header: bad,
                sides: vec![&ok, &ok],
            },
            "value_width",
        );
        let mut bad = h.clone();
        bad.block_len = 0;
        check(
            TableData {
                header: bad,
                sides: vec![&ok, &ok],
            },
            "block_len",
        );
    }

    #[test]
    fn missing_directory_is_an_io_error_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no-such-dir").join("english-1001.wld");
        let w = vec![1u16; 4];
        let data = TableData {
            header: header(ValueKind::Wld, 2, 1, 4, 4),
            sides: vec![&w],
        };
        let e = write_table(&path, &data, &CompressionParams::level(3)).unwrap_err();
        assert!(
            matches!(&e, WriteError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound),
            "{e:?}"
        );
        assert!(
            e.to_string().contains("no-such-dir/english-1001.wld"),
            "{e}"
        );
    }

    #[test]
    fn written_file_detects_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("english-1011.dtw");
        let mut rng = Rng(99);
        let w = codes(&mut rng, 900, 60);
        let b = codes(&mut rng, 900, 60);
        let data = TableData {
            header: header(ValueKind::Dtw, 16, 3, 900, 128),
            sides: vec![&w, &b],
        };
        write_table(&path, &data, &CompressionParams::level(3)).unwrap();
        let good = std::fs::read(&path).unwrap();
        let bad_path = dir.path().join("bad.dtw");
        for at in (0..good.len()).step_by(good.len() / 97 + 1) {
            let mut bytes = good.clone();
            bytes[at] ^= 0x04;
            std::fs::write(&bad_path, &bytes).unwrap();
            let failed = match TableFile::open(&bad_path, Arc::new(BlockCache::new(1 << 16))) {
                Err(e) => {
                    assert_eq!(e.path(), bad_path.as_path());
                    true
                }
                Ok(t) => {
                    let mut failed = t.verify_payload().is_err();
                    for side in 0..2 {
                        for i in 0..900 {
                            failed |= t.stored_code(side, i).is_err();
                        }
                    }
                    failed
                }
            };
            assert!(failed, "flip at byte {at} went unnoticed");
        }
    }
}
