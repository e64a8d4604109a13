//! The fleet's one time base: the Redis server's clock.
//!
//! Every word a fleet breaker stores in Redis is computed from the server's
//! own `TIME`, read **after** the word the decision rests on (in the same Lua
//! script as the `GET` when the word comes from Redis, or by a `TIME` round
//! trip when it comes from the local mirror). Ticks are microseconds of that
//! clock, so the `Open` and `Probing` timestamps in the shared word mean the
//! same on every instance, whatever the instances' own clocks say.
//!
//! Between round trips an instance *estimates* the server's time from its
//! last sample and its own monotonic clock ([`LocalClock`]): the estimate is
//! only used to **reject** locally while the mirror says `Open` or `Probing`
//! and the deadline has not passed. Any admission outside `Closed` is decided
//! in Redis, on the server's time. So an instance's clock being skewed (by any
//! amount: only differences of its readings are used) or stepping changes no
//! stored decision:
//!
//! - a step **forward** makes the estimate run ahead: the instance thinks the
//!   open time is over, goes to Redis, is rejected there on the server's
//!   time, and resamples;
//! - a step **backward** is seen (the reading is below the sample's): the
//!   estimate is void until the next sample, and the instance asks Redis;
//! - the estimate lags the server by at most the one-way delay of the reply
//!   it was sampled from, plus the local clock's drift since (resampled at
//!   least every refresh period), so a local rejection lasts at most that
//!   much longer than the server's clock says.
//!
//! In a ramp (`Config::ramp`) the estimate also picks the stage whose share
//! an instance admits of its own calls (`docs/distributed.md`, "The ramp in
//! a fleet"): an estimate off by `e` moves the instance's stage boundaries
//! by `e`, nothing more, and stores nothing; the ramp's end is stored only
//! on the server's time (an estimate that finds the last stage over asks
//! Redis, which ends the ramp or, still in a stage, leaves the word as it
//! is).
//!
//! See `docs/distributed-proofs.md`, "Time".

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// An instance's own monotonic clock, in microseconds. Only differences of
/// its readings are used (to estimate the server's time between samples),
/// so its origin is free; it should not go backwards (if it does, the
/// estimate is dropped until the next sample).
pub trait LocalClock: Send + Sync + 'static {
    /// Microseconds since an origin of the clock's choosing.
    fn micros(&self) -> u64;
}

/// [`LocalClock`] on [`std::time::Instant`], from a process-wide epoch.
#[derive(Clone, Copy, Debug, Default)]
pub struct Monotonic;

impl LocalClock for Monotonic {
    fn micros(&self) -> u64 {
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        let epoch = *EPOCH.get_or_init(Instant::now);
        // Saturates after 584 000 years.
        u64::try_from(epoch.elapsed().as_micros()).unwrap_or(u64::MAX)
    }
}

/// An instance's [`LocalClock`] as a [`tripword::Clock`] (microseconds):
/// the clock a [`RedisBreaker`](crate::RedisBreaker) names as a
/// [`CircuitBreaker`](tripword::CircuitBreaker), with which callers time
/// their calls.
#[derive(Clone)]
pub struct LocalTicks(pub(crate) Arc<dyn LocalClock>);

impl tripword::Clock for LocalTicks {
    const TICK_PERIOD: Option<core::time::Duration> = Some(core::time::Duration::from_micros(1));

    #[inline]
    fn now(&self) -> u64 {
        self.0.micros()
    }
}

/// Microseconds: `tripword-std`'s `Settings` convert their durations to
/// the fleet's config with it, and a rejection's wait reads as a duration.
impl tripword_std::clock::RealClock for LocalTicks {
    const TICK: core::time::Duration = core::time::Duration::from_micros(1);
}

impl core::fmt::Debug for LocalTicks {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("LocalTicks")
    }
}

/// The server time of a Redis `TIME` reply (seconds and microseconds) in
/// microseconds.
pub(crate) fn server_micros(seconds: u64, micros: u64) -> u64 {
    seconds.wrapping_mul(1_000_000).wrapping_add(micros)
}

/// The estimate of the server's clock: the last sample's offset from the
/// local clock, and the local reading it was taken at.
#[derive(Debug)]
pub(crate) struct Estimate {
    /// `server - local`, wrapping.
    offset: AtomicU64,
    /// The local reading of the sample, plus one (0: never sampled).
    sampled_at: AtomicU64,
}

impl Estimate {
    pub(crate) const fn new() -> Self {
        Estimate {
            offset: AtomicU64::new(0),
            sampled_at: AtomicU64::new(0),
        }
    }

    /// Records that the server's clock read `server` when the local clock
    /// read `local` (the reply's arrival: the server read it earlier, so the
    /// estimate errs late, never early, apart from drift).
    pub(crate) fn sample(&self, server: u64, local: u64) {
        self.offset
            .store(server.wrapping_sub(local), Ordering::Relaxed);
        self.sampled_at
            .store(local.saturating_add(1), Ordering::Release);
    }

    /// The server's time now, estimated from the local clock `local`, read
    /// here after the sample was loaded; `None` when there is no sample, the
    /// sample is older than `max_age` microseconds, or the local clock went
    /// back behind it.
    ///
    /// The order matters: a sample stored by another thread (a reply, a
    /// published change) between a reading of the clock and the load of the
    /// sample would be newer than the reading, and a sound estimate would
    /// read as a clock that went back.
    pub(crate) fn at(&self, local: impl FnOnce() -> u64, max_age: u64) -> Option<u64> {
        let at = self.sampled_at.load(Ordering::Acquire);
        if at == 0 {
            return None;
        }
        let local = local();
        let at = at - 1;
        if local < at || local - at > max_age {
            return None;
        }
        Some(local.wrapping_add(self.offset.load(Ordering::Relaxed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_follows_the_local_clock_from_the_sample() {
        let e = Estimate::new();
        assert_eq!(e.at(|| 5, 100), None, "never sampled");
        e.sample(1_000_000, 10);
        assert_eq!(e.at(|| 10, 100), Some(1_000_000));
        assert_eq!(e.at(|| 60, 100), Some(1_000_050));
        assert_eq!(e.at(|| 110, 100), Some(1_000_100), "exactly max_age old");
        assert_eq!(e.at(|| 111, 100), None, "older than max_age");
        assert_eq!(e.at(|| 9, 100), None, "the local clock went back");
        // A local clock skewed by any amount gives the same estimate.
        e.sample(1_000_000, 10 + 3_000_000);
        assert_eq!(e.at(|| 60 + 3_000_000, 100), Some(1_000_050));
    }

    #[test]
    fn the_monotonic_clock_advances() {
        let a = Monotonic.micros();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = Monotonic.micros();
        assert!(b >= a + 2_000, "{a} then {b}");
    }

    #[test]
    fn server_time_in_microseconds() {
        assert_eq!(server_micros(2, 345), 2_000_345);
    }
}
