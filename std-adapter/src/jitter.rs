//! Seeds for the core's jitter on the open time ([`tripword::Jitter`]).
//!
//! The core has no random number generator: the jitter of each open time is
//! a fixed function of a `u32` seed and the breaker's word, so replicas must
//! be given different seeds. [`jitter_seed`] draws one per call from the
//! standard library's per-process random hash keys (`RandomState`, seeded
//! by the OS) and a process-wide counter, so two processes, and two
//! breakers of one process, get different seeds.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// A seed for [`tripword::Jitter`], different on each call and in each
/// process.
///
/// ```
/// use tripword::{Config, Jitter, W64};
/// use tripword_std::jitter_seed;
///
/// let config = Config::new()
///     .open_for(30_000)
///     .jitter(Jitter::Equal { seed: jitter_seed() })
///     .check::<W64>()?;
/// // The first trip's open time: between 15 and 30 s.
/// let d = config.jittered_open_duration(1, 1);
/// assert!((15_001..=30_000).contains(&d));
/// # Ok::<(), tripword::ConfigError>(())
/// ```
pub fn jitter_seed() -> u32 {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(CALLS.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    let x = h.finish();
    (x ^ (x >> 32)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Successive seeds differ (a collision among 64 draws from 2^32 values
    /// has probability below 10^-6).
    #[test]
    fn seeds_differ() {
        let mut s: Vec<u32> = (0..64).map(|_| jitter_seed()).collect();
        s.sort_unstable();
        s.dedup();
        assert_eq!(s.len(), 64);
    }

    /// A seed folds the hash's two halves with XOR, so each of its bits is
    /// set with probability 1/2: over 1024 seeds (32 768 bits) the set bits
    /// number 16 384 give or take 2 048, a bound missed with probability
    /// below 10^-100 (Hoeffding: 2 exp(-2 * 2048^2 / 32768) = 2 e^-256).
    /// Folding with OR would set 3/4 of the bits (24 576 expected), with
    /// AND 1/4 (8 192). Mutation testing found the fold unpinned (`^` as `|`
    /// or `&`).
    #[test]
    fn half_the_bits_are_set() {
        let ones: u32 = (0..1024).map(|_| jitter_seed().count_ones()).sum();
        assert!((16_384 - 2_048..=16_384 + 2_048).contains(&ones), "{ones}");
    }
}
