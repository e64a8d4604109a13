//! Real time for the breaker: clocks on [`std::time::Instant`] with a stated
//! tick unit.
//!
//! The core counts time in abstract ticks; a [`RealClock`] says how long one
//! tick is, so [`Settings`](crate::Settings) can turn [`Duration`]s into
//! ticks. Two clocks are provided, both zero-sized, `const`-constructible and
//! usable in a `static`, both measuring from one process-wide epoch (the first
//! time any of them is read).
//!
//! **At least as long as set.** Both clocks read whole ticks, rounded down,
//! so two readings `n` ticks apart may be as little as `n - 1` ticks of real
//! time apart (each end loses up to one tick). A duration therefore converts
//! to `ceil(duration / tick) + 1` ticks ([`RealClock::ticks`]): an open time
//! or a probe timeout lasts at least its setting in real time, and at most
//! about two ticks longer, plus the word's own resolution below.
//!
//! **Horizon and resolution.** `Open` and `Probing` keep their start time in
//! a narrow field of the word (34 bits in [`W64`], 15 in [`W32`]), in units
//! of `2^s` ticks; the core picks the smallest `s` for which the field covers
//! the [horizon](method@crate::Settings::horizon) plus the longest duration (see
//! [`tripword::Config::horizon`]). A duration then lasts less than
//! `3 * 2^s` ticks longer than converted. With the default horizon (the
//! core's, in ticks: 3 600 000 000 for [`W64`], 3 600 000 for [`W32`]):
//!
//! | clock | tick | [`W64`] | [`W32`] |
//! |---|---|---|---|
//! | [`MonotonicClock`] | 1 µs | horizon 1 h; whole µs for durations up to 2^33 µs ≈ 2.4 h | horizon 3.6 s; 128 µs units for durations up to ≈ 0.59 s, 256 µs up to ≈ 4.2 s |
//! | [`MillisClock`]    | 1 ms | horizon ≈ 41.7 days; whole ms for durations up to 2^33 ms ≈ 99 days | horizon 1 h; 128 ms units for durations up to ≈ 9.9 min, 256 ms up to ≈ 70 min |
//!
//! Longer durations get coarser units, up to the longest the word holds at
//! all: about 2^31 ticks for [`W32`] (≈ 24.8 days of milliseconds, ≈ 35.8
//! minutes of microseconds), 2^60 ticks for [`W64`]; past that,
//! [`Settings::config`](crate::Settings::config) names the duration and the
//! range it may take.
//!
//! So [`W64`] with [`MonotonicClock`] measures every open time and probe
//! timeout a service needs to the microsecond; pair [`W32`] with
//! [`MillisClock`], or set a [horizon](method@crate::Settings::horizon) that suits
//! your callers.
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
//! // Two seconds last at least two seconds on a clock that rounds down.
//! assert_eq!(MillisClock::ticks(Duration::from_secs(2)), 2_001);
//! ```
//!
//! [`W64`]: tripword::W64
//! [`W32`]: tripword::W32

use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tripword::Clock;

/// A [`Clock`] whose tick is a fixed span of real time, read rounded down
/// (as [`MonotonicClock`] and [`MillisClock`] are).
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
///     // The same tick, so that rejections show their waits as durations.
///     const TICK_PERIOD: Option<Duration> = Some(Duration::from_micros(10));
///     fn now(&self) -> u64 { 0 /* read the time source here */ }
/// }
/// impl RealClock for TenMicros {
///     const TICK: Duration = Duration::from_micros(10);
/// }
/// // 25 µs: 3 ticks cover it, one more for the readings' rounding down.
/// assert_eq!(TenMicros::ticks(Duration::from_micros(25)), 4);
/// assert_eq!(TenMicros::duration(3), Duration::from_micros(30));
/// ```
pub trait RealClock: Clock {
    /// How long one tick is. Must not be zero (a zero tick is read as 1 ns).
    /// Give [`Clock::TICK_PERIOD`] the same value (`Some(TICK)`): it is what
    /// a rejection reads to show its wait as a duration.
    const TICK: Duration;

    /// The ticks a breaker must count for at least `duration` of real time
    /// to have passed between two readings of this clock:
    /// `ceil(duration / TICK) + 1`, since each reading is rounded down and
    /// may lose up to one tick. Zero stays zero (and is refused as an open
    /// time or probe timeout); saturates at `u64::MAX`. See
    /// [`duration_to_ticks`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::clock::{MillisClock, MonotonicClock, RealClock};
    ///
    /// assert_eq!(MillisClock::ticks(Duration::from_millis(1)), 2);
    /// assert_eq!(MonotonicClock::ticks(Duration::from_nanos(1_001)), 3);
    /// assert_eq!(MonotonicClock::ticks(Duration::ZERO), 0);
    /// assert_eq!(MonotonicClock::ticks(Duration::MAX), u64::MAX);
    /// ```
    fn ticks(duration: Duration) -> u64 {
        duration_to_ticks(duration, Self::TICK)
    }

    /// `ticks` of this clock as a [`Duration`], saturating at
    /// [`Duration::MAX`]. For a wait in ticks (a rejection's
    /// [`retry_after`](tripword::Rejected::retry_after)) this is an upper
    /// bound on the real time left: the reading it counts from was rounded
    /// down.
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
/// The clock to use with [`W64`](tripword::W64): whole microseconds for
/// open times and probe timeouts up to 2^33 µs (about 2.4 hours), with the default
/// one-hour horizon. With [`W32`](tripword::W32) the default horizon is
/// 3.6 s of microseconds; use [`MillisClock`] there (see the
/// [module](self) docs).
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
    /// [`RealClock::TICK`]: rejections show their waits as durations.
    const TICK_PERIOD: Option<Duration> = Some(<Self as RealClock>::TICK);

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
/// The clock for [`W32`](tripword::W32) breakers: with the default one-hour
/// horizon the word keeps time in 128 ms units (256 ms once the longest
/// duration passes about 9.9 minutes); with [`W64`](tripword::W64), whole
/// milliseconds.
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
    /// [`RealClock::TICK`]: rejections show their waits as durations.
    const TICK_PERIOD: Option<Duration> = Some(<Self as RealClock>::TICK);

    /// Milliseconds since the epoch.
    #[inline]
    fn now(&self) -> u64 {
        since_epoch().as_millis() as u64
    }
}

impl RealClock for MillisClock {
    const TICK: Duration = Duration::from_millis(1);
}

/// Time moved by hand, in [`MonotonicClock`]'s ticks (1 µs): a
/// [`ManualClock`](tripword::clock::ManualClock) that is a [`RealClock`],
/// so everything given in [`Duration`]s (a [`Settings`](crate::Settings),
/// a slow-call threshold, a `Retry-After`) works on it. For tests and
/// simulations: nothing in them depends on how fast the machine is.
///
/// ```
/// use std::time::Duration;
/// use tripword::Status;
/// use tripword_std::clock::{ManualTime, RealClock};
/// use tripword_std::{BreakerExt, Settings};
///
/// let clock = ManualTime::new();
/// let b: tripword::Breaker<&ManualTime> = Settings::new()
///     .failure_threshold(1)
///     .open_for(Duration::from_secs(30))
///     .build_on(&clock, ())?;
/// let _ = b.call(|| Err::<(), _>("down"));
/// clock.advance(Duration::from_secs(30));
/// assert_eq!(b.status(), Status::Open); // 30 s and one tick (see `RealClock::ticks`)
/// clock.advance(ManualTime::TICK);
/// assert_eq!(b.status(), Status::HalfOpen);
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
#[derive(Debug)]
pub struct ManualTime {
    ticks: tripword::clock::ManualClock,
}

impl ManualTime {
    /// A clock at tick 0.
    pub const fn new() -> Self {
        ManualTime {
            ticks: tripword::clock::ManualClock::new(0),
        }
    }

    /// Moves the clock forward by `duration`, rounded up to whole ticks.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::Clock;
    /// use tripword_std::clock::ManualTime;
    ///
    /// let clock = ManualTime::new();
    /// clock.advance(Duration::from_millis(5));
    /// assert_eq!(clock.now(), 5_000);
    /// ```
    pub fn advance(&self, duration: Duration) {
        self.ticks.advance(span_to_ticks(duration, Self::TICK));
    }

    /// Moves the clock forward by `ticks` microseconds.
    pub fn advance_ticks(&self, ticks: u64) {
        self.ticks.advance(ticks);
    }

    /// Sets the clock to `ticks`.
    pub fn set_ticks(&self, ticks: u64) {
        self.ticks.set(ticks);
    }
}

impl Default for ManualTime {
    /// Same as [`ManualTime::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualTime {
    /// [`RealClock::TICK`]: rejections show their waits as durations.
    const TICK_PERIOD: Option<Duration> = Some(<Self as RealClock>::TICK);

    /// The ticks set by hand.
    #[inline]
    fn now(&self) -> u64 {
        self.ticks.now()
    }
}

impl RealClock for ManualTime {
    const TICK: Duration = Duration::from_micros(1);
}

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// The ticks of length `tick` that must pass between two readings of a clock
/// that rounds down for at least `duration` of real time to have passed:
/// `ceil(duration / tick) + 1`, because each reading may lose up to one
/// tick. Zero stays zero. Saturates at `u64::MAX`. A zero `tick` is read as
/// 1 ns. `const`, so configs built from durations can be `static`s.
///
/// ```
/// use std::time::Duration;
/// use tripword_std::clock::duration_to_ticks;
///
/// let us = Duration::from_micros(1);
/// assert_eq!(duration_to_ticks(Duration::ZERO, us), 0);
/// assert_eq!(duration_to_ticks(Duration::from_nanos(1), us), 2);
/// assert_eq!(duration_to_ticks(us, us), 2);
/// assert_eq!(duration_to_ticks(Duration::from_millis(100), us), 100_001);
/// ```
pub const fn duration_to_ticks(duration: Duration, tick: Duration) -> u64 {
    if duration.is_zero() {
        return 0;
    }
    let ticks = span_to_ticks(duration, tick);
    ticks.saturating_add(1)
}

/// `span` in ticks of length `tick`, rounded up: the most ticks two readings
/// of a clock that rounds down can differ by when `span` of real time lies
/// between them. What a [horizon](method@crate::Settings::horizon) converts with.
/// Saturates at `u64::MAX`; a zero `tick` is read as 1 ns.
///
/// ```
/// use std::time::Duration;
/// use tripword_std::clock::span_to_ticks;
///
/// let ms = Duration::from_millis(1);
/// assert_eq!(span_to_ticks(Duration::ZERO, ms), 0);
/// assert_eq!(span_to_ticks(Duration::from_micros(1), ms), 1);
/// assert_eq!(span_to_ticks(Duration::from_secs(3600), ms), 3_600_000);
/// ```
pub const fn span_to_ticks(span: Duration, tick: Duration) -> u64 {
    let tick = if tick.is_zero() { 1 } else { tick.as_nanos() };
    let ticks = span.as_nanos().div_ceil(tick);
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
/// assert_eq!(ticks_to_duration(3, Duration::from_millis(2)), Duration::from_millis(6));
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

/// The ticks a call took, from the difference of two readings of its
/// breaker's clock, `end.wrapping_sub(start)` (what
/// [`Admitted::elapsed`](tripword::future::Admitted::elapsed) gives): the
/// difference itself, or **0** when it is half the 2^64 ring or more,
/// which is the end reading *earlier* than the start, a clock that stepped
/// back (a [`RecentClock`] updated by two threads out of order, a clock
/// of your own). A call timed across a step back is therefore not slow
/// (spec I6: a clock fault fails towards probing, never towards
/// rejecting), where the plain difference would read a step back of one
/// tick as 2^64 - 1 ticks. A clock that wraps at 2^64 forward is still
/// timed exactly across its wrap (the [`Clock`] contract); one that wraps
/// at a smaller power of two reads its wrap as a step back: not slow.
/// Every slow-call threshold goes through it
/// ([`CallPolicy`](crate::CallPolicy)'s verdict, for `call`, `call_async`
/// and the tower layers alike).
#[inline]
pub(crate) const fn elapsed_forward(difference: u64) -> u64 {
    if difference > u64::MAX / 2 {
        0
    } else {
        difference
    }
}

/// Coarse monotonic time in **milliseconds**, on the `coarsetime` crate's
/// `CLOCK_MONOTONIC_COARSE` reading (Linux; the platform's fastest monotonic
/// clock elsewhere). Feature `coarsetime`. Zero-sized.
///
/// A reading costs a few nanoseconds instead of [`Instant::now`]'s tens,
/// and moves in steps of the kernel's tick (1 to 4 ms on Linux): the clock
/// for the failure-rate policy ([`tripword::rate`]), which reads the clock
/// on every call, with windows of seconds. Not for open times shorter than a
/// few ticks of the kernel.
///
/// ```
/// use tripword::Clock;
/// use tripword_std::clock::CoarseClock;
///
/// let a = CoarseClock.now();
/// let b = CoarseClock.now();
/// assert!(b >= a);
/// ```
#[cfg(feature = "coarsetime")]
#[cfg_attr(docsrs, doc(cfg(feature = "coarsetime")))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CoarseClock;

#[cfg(feature = "coarsetime")]
impl Clock for CoarseClock {
    /// [`RealClock::TICK`]: rejections show their waits as durations.
    const TICK_PERIOD: Option<Duration> = Some(<Self as RealClock>::TICK);

    /// Milliseconds since an unspecified start (boot, on Linux).
    #[inline]
    fn now(&self) -> u64 {
        // Not `Instant::now`, which also stores the reading in a
        // process-wide cache: one shared cache line written by every call.
        let t = coarsetime::Instant::now_without_cache_update().as_ticks();
        coarsetime::Duration::from_ticks(t).as_millis()
    }
}

#[cfg(feature = "coarsetime")]
impl RealClock for CoarseClock {
    const TICK: Duration = Duration::from_millis(1);
}

/// The `coarsetime` crate's *recent* time in **milliseconds**: one relaxed
/// load of a timestamp that something else keeps fresh (a
/// `coarsetime::Updater` thread started with the period you choose, or your
/// event loop calling `coarsetime::Instant::update()`). Feature
/// `coarsetime`. Zero-sized.
///
/// The cheapest clock a breaker can have; it moves only when updated, so
/// every duration it measures is late by up to the update period.
/// Before the first update it reads the time directly.
///
/// ```
/// use tripword::Clock;
/// use tripword_std::clock::RecentClock;
///
/// coarsetime::Instant::update();
/// let a = RecentClock.now();
/// coarsetime::Instant::update();
/// assert!(RecentClock.now() >= a);
/// ```
#[cfg(feature = "coarsetime")]
#[cfg_attr(docsrs, doc(cfg(feature = "coarsetime")))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RecentClock;

#[cfg(feature = "coarsetime")]
impl Clock for RecentClock {
    /// [`RealClock::TICK`]: rejections show their waits as durations.
    const TICK_PERIOD: Option<Duration> = Some(<Self as RealClock>::TICK);

    /// Milliseconds since an unspecified start, as of the last update.
    #[inline]
    fn now(&self) -> u64 {
        let t = coarsetime::Instant::recent().as_ticks();
        coarsetime::Duration::from_ticks(t).as_millis()
    }
}

#[cfg(feature = "coarsetime")]
impl RealClock for RecentClock {
    const TICK: Duration = Duration::from_millis(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Readings of each real clock of the crate, as a call would take them
    /// at its start, and ends that go back: 0 ticks; ends that go forward,
    /// across 2^64 included: the ticks between. A real clock cannot be
    /// made to step back on demand, so its readings are stepped here.
    #[test]
    fn a_reading_earlier_than_the_start_is_no_time_on_every_real_clock() {
        let manual = ManualTime::new();
        manual.set_ticks(5_000);
        let starts = vec![
            ("MonotonicClock", MonotonicClock.now()),
            ("MillisClock", MillisClock.now()),
            ("ManualTime", manual.now()),
        ];
        #[cfg(feature = "coarsetime")]
        let starts = {
            coarsetime::Instant::update();
            let coarse = [
                ("CoarseClock", CoarseClock.now()),
                ("RecentClock", RecentClock.now()),
            ];
            [starts, coarse.to_vec()].concat()
        };
        for (clock, start) in starts {
            for back in [1, 2, 1_000, u64::MAX / 2, 1 << 63] {
                let end = start.wrapping_sub(back);
                assert_eq!(
                    elapsed_forward(end.wrapping_sub(start)),
                    0,
                    "{clock} {back} back"
                );
            }
            for ahead in [0, 1, 1_000, u64::MAX / 2] {
                let end = start.wrapping_add(ahead);
                assert_eq!(
                    elapsed_forward(end.wrapping_sub(start)),
                    ahead,
                    "{clock} {ahead} on"
                );
            }
        }
        // Half the ring is the first difference read as a step back.
        assert_eq!(elapsed_forward(1 << 63), 0);
        assert_eq!(elapsed_forward((1 << 63) - 1), (1 << 63) - 1);
        // Across the clock's wrap at 2^64, forward.
        assert_eq!(elapsed_forward(3u64.wrapping_sub(u64::MAX - 1)), 5);
    }
}
