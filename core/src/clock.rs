//! Time, injected: the core never reads a real clock.
//!
//! A [`Clock`] returns monotonic ticks as a `u64` that may wrap. Durations in
//! a [`Config`](crate::Config) are in the same ticks. The breaker stores
//! timestamps in units of `2^s` ticks modulo its word's time field (34 bits
//! for `W64`, 15 for `W32`; `s` is the config's
//! [`time_shift`](crate::ValidConfig::time_shift)) and measures elapsed time
//! with wrapping subtraction, so:
//!
//! - a clock that **wraps** (at `2^64`, or at any power of two at least as
//!   large as the field's ring of `2^(T+s)` ticks) is handled exactly;
//! - a clock that **jumps forward** makes the open time elapse early, never
//!   late (the breaker probes sooner);
//! - a clock that **goes backwards** by up to the ring minus the duration
//!   makes the breaker see its open time as elapsed: it fails towards
//!   probing;
//! - a caller that comes back after more than the ring minus the open time
//!   may see the elapsed time aliased below the deadline and be rejected once
//!   more: the horizon ([`Config::horizon`](crate::Config::horizon), an hour
//!   by default) sets how long a gap is measured exactly (`docs/spec.md`,
//!   "Time", spec I5 and I6).
//!
//! [`ManualClock`] is a clock you move by hand, for tests, examples and
//! simulations; `tripword-std` has a real one.

use crate::sync::{AtomicU64, Ordering};

/// A source of monotonic ticks. Implement it on a hardware timer, a
/// `std::time::Instant` wrapper, or anything else.
///
/// ```
/// use tripword::Clock;
///
/// /// A clock reading a free-running hardware counter.
/// struct Ticks;
/// impl Clock for Ticks {
///     fn now(&self) -> u64 {
///         42 // read the timer register here
///     }
/// }
/// assert_eq!((&Ticks).now(), 42);
/// // Ticks of unknown length: waits are shown in ticks.
/// assert_eq!(<&Ticks>::TICK_PERIOD, None);
/// ```
pub trait Clock {
    /// How long one tick is, when the clock knows (rounded to a whole
    /// nanosecond); `None`, the default, when ticks are just ticks (a
    /// [`ManualClock`], a counter of unknown rate). The core never reads
    /// it: it keeps every time in ticks. A caller that shows a wait to a
    /// person (`tripword-std`'s rejections: "retry after 29.9s") converts
    /// with it.
    const TICK_PERIOD: Option<core::time::Duration> = None;

    /// The current time in ticks. May wrap around `u64::MAX`.
    fn now(&self) -> u64;
}

impl<C: Clock + ?Sized> Clock for &C {
    const TICK_PERIOD: Option<core::time::Duration> = C::TICK_PERIOD;

    #[inline]
    fn now(&self) -> u64 {
        (**self).now()
    }
}

/// A plain function is a clock: handy for a hardware counter in a `static`
/// breaker.
///
/// ```
/// use tripword::{Breaker, Config};
///
/// fn ticks() -> u64 {
///     7 // read a timer register here
/// }
/// static B: Breaker<fn() -> u64> = Breaker::new(Config::new(), ticks);
/// assert!(B.acquire().is_ok());
/// ```
impl Clock for fn() -> u64 {
    #[inline]
    fn now(&self) -> u64 {
        self()
    }
}

/// `nom / denom` seconds, rounded to the nearest nanosecond (saturating):
/// the tick period of a clock of `denom / nom` Hz, for
/// [`Clock::TICK_PERIOD`]. `denom` is not zero.
#[cfg_attr(
    not(any(feature = "embassy-time", feature = "fugit")),
    allow(dead_code)
)]
pub(crate) const fn tick_period(nom: u64, denom: u64) -> core::time::Duration {
    let nanos = (nom as u128 * 1_000_000_000 + denom as u128 / 2) / denom as u128;
    if nanos > u64::MAX as u128 {
        core::time::Duration::from_nanos(u64::MAX)
    } else {
        core::time::Duration::from_nanos(nanos as u64)
    }
}

/// A clock that moves only when told to; `const`-constructible so it can be a
/// `static` next to a `static` breaker.
///
/// ```
/// use tripword::Clock;
/// use tripword::clock::ManualClock;
///
/// static CLOCK: ManualClock = ManualClock::new(0);
/// CLOCK.advance(10);
/// assert_eq!(CLOCK.now(), 10);
/// CLOCK.set(u64::MAX);
/// CLOCK.advance(2); // wraps
/// assert_eq!(CLOCK.now(), 1);
/// ```
#[derive(Debug)]
pub struct ManualClock {
    ticks: AtomicU64,
}

impl ManualClock {
    constructor! {
        /// A clock reading `ticks`.
        pub fn new(ticks: u64) -> Self {
            ManualClock {
                ticks: AtomicU64::new(ticks),
            }
        }
    }

    /// Moves the clock forward by `ticks`, wrapping at `u64::MAX`.
    pub fn advance(&self, ticks: u64) {
        self.ticks.fetch_add(ticks, Ordering::AcqRel);
    }

    /// Sets the clock to `ticks`: forwards, backwards, anywhere.
    pub fn set(&self, ticks: u64) {
        self.ticks.store(ticks, Ordering::Release);
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now(&self) -> u64 {
        self.ticks.load(Ordering::Acquire)
    }
}

#[cfg(feature = "embassy-time")]
mod embassy;
#[cfg(feature = "embassy-time")]
#[cfg_attr(docsrs, doc(cfg(feature = "embassy-time")))]
pub use embassy::EmbassyClock;

#[cfg(feature = "fugit")]
mod fugit;
#[cfg(feature = "fugit")]
#[cfg_attr(docsrs, doc(cfg(feature = "fugit")))]
pub use self::fugit::{FugitClock, FugitInstant};
