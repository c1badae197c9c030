//! splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
//! OOPSLA 2014): the one pseudo-random stream of the project, for `dtb verify --sample`'s
//! positions and for tests and benchmarks that must repeat exactly.

/// The next number of the splitmix64 stream whose state is `state`, advancing it.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    #[test]
    fn first_outputs_of_seed_0_match_the_reference_stream() {
        // The reference implementation's first outputs for seed 0 (Vigna's splitmix64.c).
        let mut s = 0u64;
        assert_eq!(super::splitmix64(&mut s), 0xe220_a839_7b1d_cdaf);
        assert_eq!(super::splitmix64(&mut s), 0x6e78_9e6a_a1b9_65f4);
    }
}
