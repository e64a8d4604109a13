//! [`FugitClock`]: a function returning a `fugit::Instant` as a [`Clock`].

use super::Clock;
use ::fugit::Instant;
use ::fugit::kind::Kind;

mod sealed {
    pub trait Sealed {}
}

/// A `fugit::Instant` with `u32` or `u64` ticks, of either kind
/// (`Wrapping` or `Monotonic`), at any tick base: what [`FugitClock`]'s
/// function may return. Feature `fugit`. Sealed.
pub trait FugitInstant: Copy + sealed::Sealed {
    /// Width of the instant's tick counter in bits (32 or 64): it wraps at
    /// `2^BITS` ticks.
    const BITS: u32;

    /// How long one tick is (`NOM / DENOM` seconds), rounded to a whole
    /// nanosecond.
    const TICK_PERIOD: core::time::Duration;

    /// The instant's ticks (`Instant::as_ticks`), widened to `u64` without
    /// changing the value: a `u32` counter reads `0 ..= 2^32 - 1` and wraps at
    /// `2^32` (see [`FugitClock`], "Wrapping").
    fn ticks_u64(&self) -> u64;
}

impl<const NOM: u64, const DENOM: u64, K: Kind> sealed::Sealed for Instant<u32, NOM, DENOM, K> {}
impl<const NOM: u64, const DENOM: u64, K: Kind> FugitInstant for Instant<u32, NOM, DENOM, K> {
    const BITS: u32 = 32;
    const TICK_PERIOD: core::time::Duration = super::tick_period(NOM, DENOM);

    #[inline]
    fn ticks_u64(&self) -> u64 {
        u64::from(self.as_ticks())
    }
}

impl<const NOM: u64, const DENOM: u64, K: Kind> sealed::Sealed for Instant<u64, NOM, DENOM, K> {}
impl<const NOM: u64, const DENOM: u64, K: Kind> FugitInstant for Instant<u64, NOM, DENOM, K> {
    const BITS: u32 = 64;
    const TICK_PERIOD: core::time::Duration = super::tick_period(NOM, DENOM);

    #[inline]
    fn ticks_u64(&self) -> u64 {
        self.as_ticks()
    }
}

/// A function that returns a `fugit::Instant`, as a clock: [`now`](Clock::now)
/// calls it and returns the instant's ticks. Feature `fugit` (fugit 0.6).
///
/// fugit has types, not a clock: the "now" comes from the firmware, typically
/// an RTIC monotonic's `Mono::now` or a HAL timer's `now()`. Wrap that
/// function: `FugitClock(Mono::now)`. In a `static` breaker name it as a
/// function pointer, `FugitClock<fn() -> Mono::Instant>`; a closure works
/// anywhere the type need not be written. Both `u32` and `u64` instants work
/// (see [`FugitInstant`]).
///
/// # Ticks
///
/// One tick is one tick of the instant's base, `NOM / DENOM` seconds
/// (`1 / HZ` for the `*TimerInstant*<HZ>` aliases), and every duration in the
/// breaker's [`Config`](crate::Config) is in the same ticks. fugit's
/// `Duration` converts them at compile time;
/// `TimerDurationU64::<HZ>::from_millis_at_least(ms).as_ticks()` (also
/// `from_secs_at_least`, `from_micros_at_least`) rounds up, so an open time
/// lasts at least what you wrote, and it is `const`, so it can build a
/// `static` config. The word keeps time in units of `2^s` ticks chosen from
/// the config and its horizon (`docs/design-word.md`, "Time in units"): on
/// [`W32`](crate::W32) at 1 kHz, 128 ms units and an hour's horizon by
/// default; on [`W64`](crate::W64) at 1 MHz, whole ticks and a ring of 4.77 h.
///
/// # Wrapping
///
/// The breaker keeps timestamps modulo its word's ring (`2^(15+s)` ticks on
/// `W32`, at most 2^32; `2^(34+s)` on `W64`; see the [module docs](crate::clock)). A `u32`
/// instant is widened to `u64` as it is, so this clock wraps from
/// `2^32 - 1` to 0 whenever the timer does:
///
/// - **`u32` instant, `W32` breaker: exact.** 2^32 is a multiple of the
///   `W32` ring, so elapsed times are read correctly across the
///   timer's wrap (the example below crosses it).
/// - **`u32` instant, `W64` breaker: not exact at the wrap.** The 34-bit time
///   field is larger than the 32-bit timer, so the wrap looks like the clock
///   jumping back by 2^32 ticks. The breaker then reads any open time (or
///   probe timeout) running across the wrap as elapsed: at worst one early
///   probe per wrap of the timer, never a longer rejection. For exact timing
///   on `W64`, use a `u64` instant (a 64-bit or software-extended monotonic).
/// - **`u64` instant: exact on both words** (it wraps at 2^64, if ever).
///
/// # Example
///
/// A 1 kHz 32-bit timer, just before its wrap, on a `W32` breaker:
///
/// ```
/// use core::sync::atomic::{AtomicU32, Ordering};
/// use fugit::{TimerDurationU64, WrappingTimerInstantU32};
/// use tripword::clock::FugitClock;
/// use tripword::{Breaker32, Clock, Config, Status, ValidConfig, W32};
///
/// /// The timer's counter (a hardware register in firmware).
/// static TIMER: AtomicU32 = AtomicU32::new(u32::MAX - 50);
///
/// /// What the firmware's monotonic returns.
/// fn now() -> WrappingTimerInstantU32<1_000> {
///     WrappingTimerInstantU32::from_ticks(TIMER.load(Ordering::Relaxed))
/// }
///
/// const UPLINK: ValidConfig<W32> = ValidConfig::new(Config::new()
///     .failure_threshold(1)
///     .open_for(TimerDurationU64::<1_000>::from_millis_at_least(100).as_ticks())
///     .horizon(0)); // whole ticks, so the deadline below is exact
/// static MODEM: Breaker32<FugitClock<fn() -> WrappingTimerInstantU32<1_000>>> =
///     Breaker32::from_parts(UPLINK, FugitClock(now), ());
///
/// assert_eq!(UPLINK.open_for(), 100);
/// assert_eq!(
///     <FugitClock<fn() -> WrappingTimerInstantU32<1_000>>>::TICK_PERIOD,
///     Some(core::time::Duration::from_millis(1)),
/// );
/// // A 32 768 Hz RTC: 30 517.578 125 ns, to the nearest nanosecond.
/// assert_eq!(
///     <FugitClock<fn() -> WrappingTimerInstantU32<32_768>>>::TICK_PERIOD,
///     Some(core::time::Duration::from_nanos(30_518)),
/// );
/// assert_eq!(MODEM.clock().now(), u64::from(u32::MAX - 50));
///
/// MODEM.permit().expect("closed").failure(); // trips 50 ticks before the wrap
/// TIMER.store(48, Ordering::Relaxed); // 99 ticks later, past the wrap
/// assert_eq!(MODEM.clock().now(), 48);
/// assert_eq!(MODEM.status(), Status::Open);
/// TIMER.store(49, Ordering::Relaxed); // 100 ticks: the open time is up
/// assert_eq!(MODEM.status(), Status::HalfOpen);
/// ```
///
/// A closure returning a `u64` instant (1 MHz) on a `W64` breaker:
///
/// ```
/// use fugit::{MonotonicTimerInstantU64, TimerDurationU64};
/// use tripword::clock::FugitClock;
/// use tripword::{Breaker, Clock, Config};
///
/// let clock = FugitClock(|| MonotonicTimerInstantU64::<1_000_000>::from_ticks(7));
/// assert_eq!(clock.now(), 7);
/// let config = Config::new()
///     .open_for(TimerDurationU64::<1_000_000>::from_secs_at_least(30).as_ticks());
/// let breaker = Breaker::new(config, clock);
/// assert!(breaker.acquire().is_ok());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FugitClock<F>(pub F);

impl<F> FugitClock<F> {
    /// The clock that calls `now` (the same as `FugitClock(now)`).
    pub const fn new(now: F) -> Self {
        FugitClock(now)
    }
}

impl<F, I> Clock for FugitClock<F>
where
    F: Fn() -> I,
    I: FugitInstant,
{
    const TICK_PERIOD: Option<core::time::Duration> = Some(I::TICK_PERIOD);

    #[inline]
    fn now(&self) -> u64 {
        (self.0)().ticks_u64()
    }
}
