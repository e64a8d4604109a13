//! Real time for the breaker: clocks on [`std::time::Instant`] with a stated
//! tick unit.
//!
//! The core counts time in abstract ticks; a [`RealClock`] says how long one
//! tick is, so [`Settings`](crate::Settings) can turn [`Duration`]s into
//! ticks. Two clocks are provided, both zero-sized, `const`-constructible and
//! usable in a `static`, both measuring from one process-wide epoch (the first
//! time any of them is read):
//!
//! | clock | tick | longest duration, [`W64`] | longest duration, [`W32`] |
//! |---|---|---|---|
//! | [`MonotonicClock`] | 1 µs | 2^33 µs ≈ 2 h 23 min | 2^14 µs = 16.384 ms |
//! | [`MillisClock`]    | 1 ms | 2^33 ms ≈ 99 days    | 2^14 ms = 16.384 s |
//!
//! The limits come from the word: `Open` and `Probing` store their start time
//! in a 34-bit field in [`W64`] (15 bits in [`W32`]), and a duration may use
//! at most half of that range so that a clock read that went backwards still
//! reads as "elapsed" (see [`tripword::clock`]). So [`W64`] with
//! [`MonotonicClock`] covers every open time and probe timeout a service
//! needs; [`W32`] with [`MonotonicClock`] stops at 16 ms, which is rarely what
//! you want: pair [`W32`] with [`MillisClock`] instead.
//!
//! Resolution: the clock reads whole ticks (rounded down) and durations are
//! rounded up to whole ticks, so an open time or probe timeout lasts its
//! configured length to within one tick.
//!
//! ```
//! use tripword::Clock;
//! use tripword_std::clock::{MillisClock, MonotonicClock, RealClock};
//! use std::time::Duration;
//!
//! static CLOCK: MonotonicClock = MonotonicClock;
//! let before = CLOCK.now();
//! std::thread::sleep(Duration::from_millis(2));
//! assert!(CLOCK.now() - before >= 2_000); // microseconds
//! assert_eq!(MonotonicClock::TICK, Duration::from_micros(1));
//! assert_eq!(MillisClock::ticks(Duration::from_secs(2)), 2_000);
//! ```
//!
//! [`W64`]: tripword::W64
//! [`W32`]: tripword::W32

use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tripword::Clock;

/// A [`Clock`] whose tick is a fixed span of real time.
///
/// Implement it for your own clock (a runtime's mockable clock, say) to use
/// [`Settings`](crate::Settings) with it:
///
/// ```
/// use std::time::Duration;
/// use tripword::Clock;
/// use tripword_std::clock::RealClock;
///
/// /// A clock ticking every 10 µs, on some other time source.
/// struct TenMicros;
/// impl Clock for TenMicros {
///     fn now(&self) -> u64 { 0 /* read the time source here */ }
/// }
/// impl RealClock for TenMicros {
///     const TICK: Duration = Duration::from_micros(10);
/// }
/// assert_eq!(TenMicros::ticks(Duration::from_micros(25)), 3); // rounded up
/// assert_eq!(TenMicros::duration(3), Duration::from_micros(30));
/// ```
pub trait RealClock: Clock {
    /// How long one tick is. Must not be zero (a zero tick is read as 1 ns).
    const TICK: Duration;

    /// `duration` in this clock's ticks, rounded up, saturating at
    /// `u64::MAX`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::clock::{MonotonicClock, RealClock};
    ///
    /// assert_eq!(MonotonicClock::ticks(Duration::from_nanos(1_001)), 2);
    /// assert_eq!(MonotonicClock::ticks(Duration::MAX), u64::MAX);
    /// ```
    fn ticks(duration: Duration) -> u64 {
        duration_to_ticks(duration, Self::TICK)
    }

    /// `ticks` of this clock as a [`Duration`], saturating at
    /// [`Duration::MAX`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::clock::{MillisClock, RealClock};
    ///
    /// assert_eq!(MillisClock::duration(1 << 14), Duration::from_millis(16_384));
    /// ```
    fn duration(ticks: u64) -> Duration {
        ticks_to_duration(ticks, Self::TICK)
    }
}

impl<C: RealClock + ?Sized> RealClock for &C {
    const TICK: Duration = C::TICK;
}

/// The process-wide epoch both clocks measure from.
static EPOCH: OnceLock<Instant> = OnceLock::new();

fn since_epoch() -> Duration {
    EPOCH.get_or_init(Instant::now).elapsed()
}

/// Monotonic real time in **microseconds** since a process-wide epoch, on
/// [`Instant`]. Zero-sized: use it by value, in a `static`, anywhere.
///
/// The clock to use with [`W64`](tripword::W64) (open times and probe
/// timeouts up to 2^33 µs ≈ 2.4 h). With [`W32`](tripword::W32) it allows at
/// most 16.384 ms; use [`MillisClock`] there.
///
/// ```
/// use tripword::Clock;
/// use tripword_std::clock::MonotonicClock;
///
/// let a = MonotonicClock.now();
/// let b = MonotonicClock.now();
/// assert!(b >= a); // monotonic
/// assert_eq!(std::mem::size_of::<MonotonicClock>(), 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MonotonicClock;

impl Clock for MonotonicClock {
    /// Microseconds since the epoch (wraps after 2^64 µs, some 584 000
    /// years).
    #[inline]
    fn now(&self) -> u64 {
        since_epoch().as_micros() as u64
    }
}

impl RealClock for MonotonicClock {
    const TICK: Duration = Duration::from_micros(1);
}

/// Monotonic real time in **milliseconds** since a process-wide epoch, on
/// [`Instant`]. Zero-sized, like [`MonotonicClock`].
///
/// The clock for [`W32`](tripword::W32) breakers: durations up to 2^14 ms =
/// 16.384 s (up to 2^33 ms ≈ 99 days with [`W64`](tripword::W64)), at a
/// resolution of 1 ms.
///
/// ```
/// use std::time::Duration;
/// use tripword::Clock;
/// use tripword_std::clock::{MillisClock, MonotonicClock};
///
/// let ms = MillisClock.now();
/// let us = MonotonicClock.now();
/// // Same epoch, different units.
/// assert!(us / 1_000 >= ms);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MillisClock;

impl Clock for MillisClock {
    /// Milliseconds since the epoch.
    #[inline]
    fn now(&self) -> u64 {
        since_epoch().as_millis() as u64
    }
}

impl RealClock for MillisClock {
    const TICK: Duration = Duration::from_millis(1);
}

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// `duration` in ticks of length `tick`, rounded up, saturating at
/// `u64::MAX`. A zero `tick` is read as 1 ns. `const`, so configs built from
/// durations can be `static`s.
///
/// ```
/// use std::time::Duration;
/// use tripword_std::clock::duration_to_ticks;
///
/// let us = Duration::from_micros(1);
/// assert_eq!(duration_to_ticks(Duration::ZERO, us), 0);
/// assert_eq!(duration_to_ticks(Duration::from_nanos(1), us), 1);
/// assert_eq!(duration_to_ticks(Duration::from_millis(100), us), 100_000);
/// ```
pub const fn duration_to_ticks(duration: Duration, tick: Duration) -> u64 {
    let tick = if tick.is_zero() { 1 } else { tick.as_nanos() };
    let ticks = duration.as_nanos().div_ceil(tick);
    if ticks > u64::MAX as u128 {
        u64::MAX
    } else {
        ticks as u64
    }
}

/// `ticks` of length `tick` as a [`Duration`], saturating at
/// [`Duration::MAX`].
///
/// ```
/// use std::time::Duration;
/// use tripword_std::clock::ticks_to_duration;
///
/// let us = Duration::from_micros(1);
/// assert_eq!(ticks_to_duration(1 << 33, us), Duration::from_micros(1 << 33));
/// assert_eq!(ticks_to_duration(u64::MAX, Duration::MAX), Duration::MAX);
/// ```
pub const fn ticks_to_duration(ticks: u64, tick: Duration) -> Duration {
    let nanos = (ticks as u128).saturating_mul(tick.as_nanos());
    let secs = nanos / NANOS_PER_SEC;
    if secs > u64::MAX as u128 {
        Duration::MAX
    } else {
        Duration::new(secs as u64, (nanos % NANOS_PER_SEC) as u32)
    }
}
