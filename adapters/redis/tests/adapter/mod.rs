//! Checks specific to the Redis adapter, beyond the shared conformance suites.

mod cache;
mod connection;
mod rate_limiter;

/// A small deterministic pseudo-random sequence (xorshift64*), for differential tests.
pub struct Rng(u64);

impl Rng {
    /// A sequence from a fixed seed.
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    /// The next number below `bound` (which must be positive).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % bound
    }
}
