//! Deterministic pseudo-random numbers for this crate's tests (splitmix64).

/// A splitmix64 generator: seeded, so a failing test repeats.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        crate::rng::splitmix64(&mut self.0)
    }
}
