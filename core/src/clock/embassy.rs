//! [`EmbassyClock`]: `embassy_time::Instant::now()` as a [`Clock`].

use super::Clock;

/// Embassy's time driver as a clock: [`now`](Clock::now) is
/// `embassy_time::Instant::now().as_ticks()`. Feature `embassy-time`.
///
/// Zero-sized and `const`-constructible, so it can sit in a `static`
/// breaker and costs it no RAM.
///
/// # Tick rate
///
/// One tick is one tick of embassy's time driver: [`EmbassyClock::TICK_HZ`]
/// (`embassy_time::TICK_HZ`) ticks per second. That rate is chosen by the
/// firmware, not here: by the HAL's time driver, or by a `tick-hz-*` feature
/// of `embassy-time` in the binary; with none it is 1 MHz (1 µs ticks).
/// Every duration in the breaker's [`Config`](crate::Config) is in the same
/// ticks, so write them with `embassy_time::Duration` (its `from_*`
/// constructors are `const` and round up, so an open time lasts at least what
/// you wrote):
///
/// ```
/// use embassy_time::Duration;
/// use tripword::Config;
///
/// static CONFIG: Config = Config::new()
///     .failure_threshold(5)
///     .open_for(Duration::from_secs(2).as_ticks())
///     .probe_timeout(Duration::from_millis(500).as_ticks());
/// ```
///
/// # Which word
///
/// Embassy's instants are 64-bit and do not wrap in practice (2^64 µs is
/// 584 000 years), so nothing here wraps. What matters is how the word keeps
/// time: in units of `2^s` ticks, `s` chosen from the config so that the
/// field's ring covers the horizon (an hour by default, **in ticks**:
/// 3 600 000 for `W32`, 3 600 000 000 for `W64`) plus the longest duration
/// (`docs/design-word.md`, "Time in units"):
///
/// | `TICK_HZ` | [`W64`](crate::W64) | [`W32`](crate::W32), default horizon |
/// |---|---|---|
/// | 1 MHz (the default) | whole µs, ring 4.77 h | horizon 3.6 s: too short for most services |
/// | 32 768 Hz | whole ticks, ring 6 days | horizon 110 s |
/// | 1 kHz | whole ms, ring 199 days | 128 ms units, horizon 1 h |
///
/// - With embassy's default 1 MHz tick, use a **`W64`** breaker
///   ([`Breaker`](crate::Breaker)'s default). On a core without 64-bit
///   compare-and-swap (Cortex-M3/M4/M7, RV32) a `W64` word goes through
///   `portable-atomic`'s fallback: see `docs/embedded.md` before sharing it
///   with an interrupt handler or an `InterruptExecutor`.
/// - For a **`W32`** breaker (lock-free on those cores) at 1 MHz, count in
///   milliseconds instead: a plain `fn() -> u64` is a clock.
///
/// ```
/// use embassy_time::Instant;
/// use tripword::{Breaker32, Config};
///
/// fn millis() -> u64 {
///     Instant::now().as_millis()
/// }
/// // Durations in milliseconds now: 128 ms units, an hour's horizon on W32.
/// static UPLINK: Breaker32<fn() -> u64> =
///     Breaker32::from_parts(tripword::ValidConfig::new(Config::new().open_for(2_000).probe_timeout(500)), millis, ());
/// assert!(UPLINK.acquire().is_ok());
/// ```
///
/// # Example
///
/// A breaker on embassy's clock, here with `embassy-time`'s mock driver so
/// that the example runs on the host (firmware has its HAL's driver instead):
///
/// ```
/// use embassy_time::{Duration, MockDriver};
/// use tripword::clock::EmbassyClock;
/// use tripword::{Breaker, Clock, Config, Status};
///
/// const CONFIG: Config = Config::new()
///     .failure_threshold(1)
///     .open_for(Duration::from_millis(100).as_ticks());
/// static MODEM: Breaker<EmbassyClock> = Breaker::new(CONFIG, EmbassyClock::new());
///
/// assert_eq!(EmbassyClock::TICK_HZ, 1_000_000); // the mock driver's rate
/// assert_eq!(EmbassyClock::TICK_PERIOD, Some(core::time::Duration::from_micros(1)));
/// let before = EmbassyClock.now();
///
/// MODEM.permit().expect("closed").failure(); // trips
/// assert_eq!(MODEM.status(), Status::Open);
///
/// MockDriver::get().advance(Duration::from_millis(100));
/// assert_eq!(EmbassyClock.now() - before, 100_000);
/// assert_eq!(MODEM.status(), Status::HalfOpen); // the open time is up
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EmbassyClock;

impl EmbassyClock {
    /// Ticks per second: `embassy_time::TICK_HZ`, as the firmware's
    /// time driver (or `tick-hz-*` feature) sets it.
    pub const TICK_HZ: u64 = embassy_time::TICK_HZ;

    /// The clock (the same as the unit value `EmbassyClock`).
    pub const fn new() -> Self {
        EmbassyClock
    }
}

impl Clock for EmbassyClock {
    /// `1 s / TICK_HZ`, rounded to a whole nanosecond.
    const TICK_PERIOD: Option<core::time::Duration> = Some(super::tick_period(1, Self::TICK_HZ));

    #[inline]
    fn now(&self) -> u64 {
        embassy_time::Instant::now().as_ticks()
    }
}
