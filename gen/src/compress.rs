//! Compression of WLD tables: how "don't care" positions (capture positions, and in format
//! version 3 threat positions) are found and filled before the blocks are compressed. What
//! `dtb gen` writes for every build ([`crate::build`]) and `dtb repack` re-encodes
//! ([`crate::repack`]); the blocks themselves are written by [`crate::write`].

use dtb_probe::internal::format::WldCode;
use dtb_probe::internal::index::{MenCache, SliceIndex};
use dtb_probe::internal::rules::{Color, Rules};
use dtb_probe::movegen::{has_capture, quiet_successors_keep_threats};
use rayon::prelude::*;

use crate::packed::{spread, PackedWld, EVEN};
use crate::write::CompressionParams;

/// How "don't care" positions (capture and threat positions) are filled before compression.
/// Readers never look at these values, so every fill gives the same answers; they differ in
/// bytes only (docs/performance-history.md, session 15: `--fill best`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// The most common value among the block's other positions (ties: draw, win, loss): what
    /// `dtb gen` writes unless told otherwise.
    Major,
    /// The value before it in index order (a block's first positions: its first value that
    /// is not "don't care"), extending runs.
    Prev,
    /// The value after it in index order (a block's last positions: its last value that is
    /// not "don't care").
    Next,
    /// Per block, whichever of [`BEST_OF`] compresses smallest with the file's zstd settings
    /// (ties: the earlier). Compresses each block four times instead of once.
    Best,
}

impl Fill {
    /// The fill's name on the command line (`dtb gen --fill NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Fill::Major => "major",
            Fill::Prev => "prev",
            Fill::Next => "next",
            Fill::Best => "best",
        }
    }
}

/// The fills that [`Fill::Best`] tries, in order of preference on ties.
pub const BEST_OF: [Fill; 3] = [Fill::Major, Fill::Prev, Fill::Next];

/// Fills one block's "don't care" positions by a [`Fill`]; [`Fill::Best`] keeps a zstd
/// compressor to compare its candidates with.
pub(crate) struct Filler {
    how: Fill,
    zstd: Option<zstd::bulk::Compressor<'static>>,
}

impl Filler {
    /// A filler by `how`, comparing sizes (for [`Fill::Best`]) under the settings `zstd`.
    ///
    /// # Errors
    /// zstd's, for settings it refuses.
    pub(crate) fn new(how: Fill, zstd: &CompressionParams) -> std::io::Result<Filler> {
        let zstd = match how {
            Fill::Best => Some(zstd.compressor()?),
            _ => None,
        };
        Ok(Filler { how, zstd })
    }

    /// [`fill`] one block by this filler's rule.
    ///
    /// # Errors
    /// zstd's, should compressing a candidate fail.
    pub(crate) fn fill(&mut self, w: &mut [u64], dc: &[u64], len: usize) -> std::io::Result<()> {
        let Some(z) = self.zstd.as_mut() else {
            fill(w, dc, len, self.how);
            return Ok(());
        };
        let words = len.div_ceil(32);
        let mut best: Option<(usize, Vec<u64>)> = None;
        for how in BEST_OF {
            let mut x = w[..words].to_vec();
            fill(&mut x, dc, len, how);
            let size = z.compress(&x.block_bytes(len))?.len();
            if best.as_ref().is_none_or(|(b, _)| size < *b) {
                best = Some((size, x));
            }
        }
        if let Some((_, x)) = best {
            w[..words].copy_from_slice(&x);
        }
        Ok(())
    }
}

/// Fills the "don't care" positions (bits of `dc`, one a position) of one block of `len`
/// values packed two bits a position (`w`, 32 a word; `dc` starts at the block's first
/// position, a multiple of 64). The one filling of "don't care" positions in WLD files:
/// `dtb gen` fills capture positions (version 1) or capture and threat positions (version 3)
/// of each block by [`Fill::Major`] unless told otherwise, and `dtb repack` as asked.
/// [`Fill::Best`] needs a compressor to compare with ([`Filler`]); here it fills as
/// [`Fill::Major`], the first of [`BEST_OF`].
pub(crate) fn fill(w: &mut [u64], dc: &[u64], len: usize, how: Fill) {
    let is_dc = |j: usize| dc[j / 64] >> (j % 64) & 1 != 0;
    match how {
        Fill::Major | Fill::Best => {
            let count = w.count_where(len, |k| !dc[k]);
            // Ties go to draw, then win, then loss.
            let mut common = WldCode::Draw;
            for k in [WldCode::Win, WldCode::Loss] {
                if count[usize::from(k.bits())] > count[usize::from(common.bits())] {
                    common = k;
                }
            }
            let pattern = u64::from(common.bits()) * EVEN;
            for (k, x) in w[..len.div_ceil(32)].iter_mut().enumerate() {
                // Field j of word k is position 32k + j; positions past len are never dc.
                let m = spread((dc[k / 2] >> (32 * (k % 2))) as u32) * 3;
                *x = (*x & !m) | (pattern & m);
            }
        }
        Fill::Prev => {
            let mut prev = (0..len)
                .find(|&j| !is_dc(j))
                .map_or(WldCode::Draw, |j| w.wld(j));
            for j in 0..len {
                if is_dc(j) {
                    w.set_wld(j, prev);
                } else {
                    prev = w.wld(j);
                }
            }
        }
        Fill::Next => {
            let mut next = (0..len)
                .rev()
                .find(|&j| !is_dc(j))
                .map_or(WldCode::Draw, |j| w.wld(j));
            for j in (0..len).rev() {
                if is_dc(j) {
                    w.set_wld(j, next);
                } else {
                    next = w.wld(j);
                }
            }
        }
    }
}

/// Whether a table file may be written in blocks of `positions` (the WLD writer fills whole
/// 64-position words of "don't care" bits; distance files take the same lengths): a multiple
/// of 64, from 64 to [`MAX_BLOCK_LEN`](dtb_probe::internal::format::MAX_BLOCK_LEN). What
/// `dtb gen --block-len` and `--distance-block-len` and `dtb repack --block-len` accept.
pub fn block_len_ok(positions: u32) -> bool {
    positions != 0
        && positions.is_multiple_of(64)
        && positions <= dtb_probe::internal::format::MAX_BLOCK_LEN
}

/// [`Filler::fill`] over a whole side of `n` positions (`words`, packed two bits a position;
/// `dc`, one bit a position), block by block (`block_len` positions, a multiple of 64) on
/// all worker threads.
///
/// # Errors
/// zstd's ([`Fill::Best`] only), with the number of the block (within the side).
pub(crate) fn fill_blocks(
    words: &mut [u64],
    dc: &[u64],
    n: u64,
    block_len: u32,
    how: Fill,
    zstd: &CompressionParams,
) -> Result<(), (u32, std::io::Error)> {
    let bl = block_len as usize;
    debug_assert!(bl.is_multiple_of(64));
    words
        .par_chunks_mut(bl / 32)
        .zip(dc.par_chunks(bl / 64))
        .enumerate()
        .try_for_each_init(
            || Filler::new(how, zstd),
            |filler, (b, (w, d))| {
                let len = (n - (b * bl) as u64).min(bl as u64) as usize;
                match filler {
                    Ok(f) => f.fill(w, d, len),
                    Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
                }
                .map_err(|e| (b as u32, e))
            },
        )
}

/// Adds the threat positions ([`is_threat_dont_care`]) of one side of slice `ix` (`color`
/// to move) to that side's capture bits `own` (one bit a position: the side to move must
/// capture), so that `own` marks every "don't care" position of a version 3 file; `other`
/// holds the other side's capture bits at the same indices (the same placement, the other
/// side to move). Returns how many threat positions were added.
///
/// Only positions whose own bit is clear and whose other bit is set can be threat positions
/// (rules 1 and 2: the side to move has no capture, the side not to move has one): only
/// those are decoded, and their quiet successors tested without a move list
/// ([`quiet_successors_keep_threats`]; `dtb verify` and the probe use the move list). A bit
/// added here is one whose `other` bit is set, so the other side's candidates (`other`
/// clear) do not change: the two sides may be marked one after the other, in place.
pub(crate) fn add_threats(
    rules: &Rules,
    ix: &SliceIndex,
    color: Color,
    own: &mut [u64],
    other: &[u64],
) -> u64 {
    if !rules.capture_compulsory {
        return 0;
    }
    const WORDS: usize = 1024;
    let n = ix.size();
    own.par_chunks_mut(WORDS)
        .zip(other.par_chunks(WORDS))
        .enumerate()
        .map(|(c, (own, other))| {
            let mut men = MenCache::default();
            let mut found = 0;
            for (k, (o, &t)) in own.iter_mut().zip(other).enumerate() {
                let mut cand = !*o & t;
                while cand != 0 {
                    let b = u64::from(cand.trailing_zeros());
                    cand &= cand - 1;
                    let i = ((c * WORDS + k) as u64) * 64 + b;
                    if i >= n {
                        break;
                    }
                    let pos = ix.unindex_cached(i, color, &mut men);
                    // A candidate by its bits: no capture of its own, one of the other side.
                    debug_assert!(
                        !has_capture(rules, &pos)
                            && has_capture(rules, &pos.with_side_to_move(color.opponent()))
                    );
                    if quiet_successors_keep_threats(rules, &pos) {
                        *o |= 1 << b;
                        found += 1;
                    }
                }
            }
            found
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values 0..n packed two bits each; `dc` marks positions.
    fn block(values: &[u64], dc: &[usize]) -> (Vec<u64>, Vec<u64>) {
        let mut w = vec![0u64; values.len().div_ceil(32)];
        for (j, &v) in values.iter().enumerate() {
            w[j / 32] |= v << (2 * (j % 32));
        }
        let mut d = vec![0u64; values.len().div_ceil(64)];
        for &j in dc {
            d[j / 64] |= 1 << (j % 64);
        }
        (w, d)
    }

    fn values(w: &[u64], n: usize) -> Vec<u64> {
        (0..n).map(|j| w[j / 32] >> (2 * (j % 32)) & 3).collect()
    }

    #[test]
    fn each_fill_changes_only_dont_care_positions_by_its_rule() {
        // win draw [dc] loss [dc] [dc] loss loss; codes: draw 0, win 1, loss 2.
        let v = [1, 0, 3, 2, 3, 3, 2, 2];
        let dc = [2, 4, 5];
        for (how, want) in [
            (Fill::Major, [1, 0, 2, 2, 2, 2, 2, 2]),
            (Fill::Prev, [1, 0, 0, 2, 2, 2, 2, 2]),
            (Fill::Next, [1, 0, 2, 2, 2, 2, 2, 2]),
        ] {
            let (mut w, d) = block(&v, &dc);
            fill(&mut w, &d, v.len(), how);
            assert_eq!(values(&w, v.len()), want, "{how:?}");
        }
        // Don't care at both ends: prev takes the first known value, next the last.
        let v = [3, 1, 0, 3];
        let (mut w, d) = block(&v, &[0, 3]);
        fill(&mut w, &d, 4, Fill::Prev);
        assert_eq!(values(&w, 4), [1, 1, 0, 0]);
        let (mut w, d) = block(&v, &[0, 3]);
        fill(&mut w, &d, 4, Fill::Next);
        assert_eq!(values(&w, 4), [1, 1, 0, 0]);
        // A block of "don't care" only: draws.
        let (mut w, d) = block(&[2, 1], &[0, 1]);
        fill(&mut w, &d, 2, Fill::Next);
        assert_eq!(values(&w, 2), [0, 0]);
    }

    #[test]
    fn best_keeps_the_fill_that_compresses_smallest() {
        // Runs of random values and lengths (an LCG), the second half of each run "don't
        // care": prev restores every run, while major breaks each into two.
        let n = 8192;
        let (mut v, mut dc, mut x) = (Vec::new(), Vec::new(), 12345u64);
        while v.len() < n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (len, val) = (8 + (x >> 33) % 120, (x >> 20) % 3);
            for k in 0..len {
                if v.len() < n {
                    if k >= len / 2 {
                        dc.push(v.len());
                    }
                    v.push(val);
                }
            }
        }
        let zstd = crate::build::ZSTD;
        let mut z = zstd.compressor().unwrap();
        let mut len_of = |how: Fill| {
            let (mut w, d) = block(&v, &dc);
            let mut f = Filler::new(how, &zstd).unwrap();
            f.fill(&mut w, &d, n).unwrap();
            let raw: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
            (z.compress(&raw).unwrap().len(), values(&w, n))
        };
        let (best, major, prev, next) = (
            len_of(Fill::Best),
            len_of(Fill::Major),
            len_of(Fill::Prev),
            len_of(Fill::Next),
        );
        assert!(prev.0 < major.0, "prev {} major {}", prev.0, major.0);
        assert_eq!(best.0, major.0.min(prev.0).min(next.0));
        let winner = [&major, &prev, &next]
            .into_iter()
            .find(|c| c.0 == best.0)
            .unwrap();
        assert_eq!(
            best.1, winner.1,
            "best keeps the first smallest candidate's values"
        );
        for j in (0..n).filter(|j| !dc.contains(j)) {
            assert_eq!(best.1[j], v[j], "position {j} is not don't care");
        }
    }
}
