//! Outcomes packed two bits a position, 32 a word: the one layout of WLD outcomes in the
//! generator (the solver's words, the store, scratch files, the don't-care fill, the writer).
//! Position `i` is in bits `2 * (i % 32)` of word `i / 32` as a [`WldCode`] (0 draw, 1 win,
//! 2 loss; 3 never occurs), so little-endian words are, byte for byte, a WLD block of the file
//! (docs/FORMAT.md, "Values"). The bottom of the generator: it imports nothing of the crate.

use dtb_probe::internal::format::{packed_len, WldCode};
use dtb_probe::internal::value::Code;

/// The low bit of every 2-bit field of a word.
pub const EVEN: u64 = 0x5555_5555_5555_5555;

/// Words holding `n` packed outcomes.
#[inline]
pub fn words_for(n: u64) -> u64 {
    n.div_ceil(32)
}

/// The WLD code in the low 2 bits of `bits`, a word of 2-bit codes that this process packed
/// from [`WldCode`]s (in memory, or in a scratch file that passed its checksum): never the
/// invalid 3, which would read as a draw (checked in debug builds).
#[inline]
pub fn code_of_bits(bits: u64) -> WldCode {
    let b = (bits & 3) as u16;
    debug_assert!(b != 3, "a 2-bit WLD code 3 in the generator's own words");
    WldCode::from_bits(b).unwrap_or(WldCode::Draw)
}

/// Bit `j` of `x` moved to bit `2 * j` (the low bit of field `j`), for `j < 32`.
#[inline]
pub fn spread(x: u32) -> u64 {
    let mut v = u64::from(x);
    v = (v | v << 16) & 0x0000_FFFF_0000_FFFF;
    v = (v | v << 8) & 0x00FF_00FF_00FF_00FF;
    v = (v | v << 4) & 0x0F0F_0F0F_0F0F_0F0F;
    v = (v | v << 2) & 0x3333_3333_3333_3333;
    (v | v << 1) & EVEN
}

/// The low bit of each field `j` of `v` (bit `2 * j`) moved to bit `j`: the inverse of
/// [`spread`].
#[inline]
pub fn unspread(v: u64) -> u32 {
    let mut v = v & EVEN;
    v = (v | v >> 1) & 0x3333_3333_3333_3333;
    v = (v | v >> 2) & 0x0F0F_0F0F_0F0F_0F0F;
    v = (v | v >> 4) & 0x00FF_00FF_00FF_00FF;
    v = (v | v >> 8) & 0x0000_FFFF_0000_FFFF;
    ((v | v >> 16) & 0xFFFF_FFFF) as u32
}

/// Outcomes packed two bits a position over a slice of words (`Vec<u64>`, a block, a
/// mapped file's words): get, set, count, iterate and pack, written once.
pub trait PackedWld {
    /// The code of position `i` (`i` below 32 times the words held).
    fn wld(&self, i: usize) -> WldCode;

    /// Set position `i` to `code`.
    fn set_wld(&mut self, i: usize, code: WldCode);

    /// The codes of positions `0..n`, in order.
    fn wlds(&self, n: usize) -> impl Iterator<Item = WldCode> + '_;

    /// How many of positions `0..n` are draws, wins and losses, indexed by [`WldCode::bits`],
    /// counting only positions whose bit in `mask` (one bit a position, 64 a word) is set.
    fn count_where(&self, n: usize, mask: impl Fn(usize) -> u64) -> [u64; 3];

    /// The bytes of positions `0..n`, as a WLD block stores them before compression.
    fn block_bytes(&self, n: usize) -> Vec<u8>;
}

impl PackedWld for [u64] {
    #[inline]
    fn wld(&self, i: usize) -> WldCode {
        code_of_bits(self[i / 32] >> (2 * (i % 32)))
    }

    #[inline]
    fn set_wld(&mut self, i: usize, code: WldCode) {
        let shift = 2 * (i % 32);
        self[i / 32] = self[i / 32] & !(3 << shift) | u64::from(code.bits()) << shift;
    }

    fn wlds(&self, n: usize) -> impl Iterator<Item = WldCode> + '_ {
        (0..n).map(move |i| self.wld(i))
    }

    fn count_where(&self, n: usize, mask: impl Fn(usize) -> u64) -> [u64; 3] {
        let mut count = [0u64; 3];
        for (k, &x) in self[..n.div_ceil(32)].iter().enumerate() {
            // Field j of word k is position 32k + j: its bit in mask word k / 2.
            let left = n - 32 * k;
            let valid = if left >= 32 {
                u32::MAX
            } else {
                (1u32 << left) - 1
            };
            let q = spread((mask(k / 2) >> (32 * (k % 2))) as u32 & valid);
            let (lo, hi) = (x & EVEN, (x >> 1) & EVEN);
            count[usize::from(WldCode::Draw.bits())] += u64::from((!lo & !hi & q).count_ones());
            count[usize::from(WldCode::Win.bits())] += u64::from((lo & q).count_ones());
            count[usize::from(WldCode::Loss.bits())] += u64::from((hi & q).count_ones());
        }
        count
    }

    fn block_bytes(&self, n: usize) -> Vec<u8> {
        self.iter()
            .flat_map(|w| w.to_le_bytes())
            .take(packed_len(2, n))
            .collect()
    }
}

/// The outcomes of value codes (DTW codes, or WLD codes with nominal distances), packed.
pub fn pack_codes(values: &[Code]) -> Vec<u64> {
    use rayon::prelude::*;
    values
        .par_chunks(32)
        .map(|chunk| {
            chunk.iter().enumerate().fold(0u64, |w, (j, &v)| {
                w | u64::from(WldCode::of(v).bits()) << (2 * j)
            })
        })
        .collect()
}

/// One word of packed outcomes from up to 32 codes, `code(j)` for field `j` in `0..len`.
#[inline]
pub fn pack_word(len: usize, code: impl Fn(usize) -> WldCode) -> u64 {
    (0..len).fold(0u64, |w, j| w | u64::from(code(j).bits()) << (2 * j))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_set_count_and_bytes_agree_position_by_position() {
        let n = 101;
        let codes: Vec<WldCode> = (0..n)
            .map(|i| [WldCode::Draw, WldCode::Win, WldCode::Loss][(i * 7 + i / 5) % 3])
            .collect();
        let mut w = vec![0u64; words_for(n as u64) as usize];
        for (i, &c) in codes.iter().enumerate() {
            w.set_wld(i, c);
        }
        assert!(w.wlds(n).eq(codes.iter().copied()));
        // Setting again overwrites.
        w.set_wld(3, WldCode::Loss);
        assert_eq!(w.wld(3), WldCode::Loss);
        w.set_wld(3, codes[3]);
        let all = w.count_where(n, |_| u64::MAX);
        for k in [WldCode::Draw, WldCode::Win, WldCode::Loss] {
            let want = codes.iter().filter(|&&c| c == k).count() as u64;
            assert_eq!(all[usize::from(k.bits())], want, "{k:?}");
        }
        // Only even positions.
        let even = w.count_where(n, |_| EVEN);
        assert_eq!(even.iter().sum::<u64>(), n.div_ceil(2) as u64);
        let bytes = w.block_bytes(n);
        assert_eq!(bytes.len(), n.div_ceil(4));
        for (i, &c) in codes.iter().enumerate() {
            assert_eq!(
                u16::from(bytes[i / 4] >> (2 * (i % 4)) & 3),
                u16::from(c.bits())
            );
        }
        let word = pack_word(32, |j| codes[32 + j]);
        assert_eq!(word, w[1]);
        assert_eq!(
            pack_codes(&codes.iter().map(|c| c.code()).collect::<Vec<_>>()),
            w
        );
    }

    #[test]
    fn spread_moves_bit_j_to_bit_2j() {
        for j in 0..32 {
            assert_eq!(spread(1 << j), 1 << (2 * j));
        }
        assert_eq!(spread(u32::MAX), EVEN);
        // `unspread` undoes it, whatever the odd bits hold.
        for x in [0, 1, 0x8000_0001, 0xDEAD_BEEF, u32::MAX] {
            assert_eq!(unspread(spread(x) | !EVEN), x);
        }
    }
}
