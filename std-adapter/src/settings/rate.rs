//! The failure-rate policy in durations and percent: [`FailureRate`], the
//! [`Settings`] field that describes it, and the [`RateBreaker`]s built
//! from it ([`Settings::build_rate`]).
//!
//! ```
//! use std::time::Duration;
//! use tripword::{Outcome, Status, W32};
//! use tripword_std::clock::ManualTime;
//! use tripword_std::{FailureRate, StdRateBreaker};
//! use tripword_std::{MillisClock, Settings};
//!
//! let settings = Settings::new()
//!     .open_for(Duration::from_secs(30))
//!     // Trip at 50 % failures over the last 10 s, once 20 calls were made.
//!     .failure_rate(FailureRate::new(50, Duration::from_secs(10)).minimum_calls(20));
//!
//! // On the microsecond clock and the 64-bit word, 8 buckets:
//! let breaker: StdRateBreaker = settings.build_rate()?;
//! assert_eq!(breaker.rate().window(), 10_000_001); // 10 s in µs, at least
//! assert_eq!(breaker.status(), Status::Closed);
//!
//! // In milliseconds, on the 32-bit word, 16 buckets:
//! let valid = settings.rate::<MillisClock, W32, 16>()?;
//! assert_eq!((valid.window(), valid.effective_window()), (10_001, 16 << 10));
//! # Ok::<(), tripword_std::SettingsError>(())
//! ```

use std::time::Duration;

use tripword::rate::{Rate, RateBreaker, ValidRate};
use tripword::{ConfigError, Field, Observer, ValidConfig, W64, Word};

use super::range::{longest_at_most, shortest_at_least};
use super::{Settings, SettingsError};
use crate::clock::{MonotonicClock, RealClock, duration_to_ticks};

/// A failure-rate breaker on the real microsecond clock: [`W64`], no
/// observer and 8 buckets unless named. Build one with
/// [`Settings::build_rate`], or as a `static`:
///
/// ```
/// use std::time::Duration;
/// use tripword::rate::{RateBreaker, ValidRate};
/// use tripword::ValidConfig;
/// use tripword_std::{FailureRate, StdRateBreaker};
/// use tripword_std::{MonotonicClock, Settings};
///
/// const SETTINGS: Settings = Settings::new()
///     .open_for(Duration::from_secs(5))
///     .failure_rate(FailureRate::new(25, Duration::from_secs(60)));
/// // Out of range: a compile error.
/// static B: StdRateBreaker = RateBreaker::from_parts(
///     ValidConfig::new(SETTINGS.to_config::<MonotonicClock>()),
///     ValidRate::new(SETTINGS.to_rate::<MonotonicClock>()),
///     MonotonicClock,
///     (),
/// );
/// assert_eq!(B.rate().failure_rate(), 25);
/// assert!(B.acquire().is_ok());
/// ```
pub type StdRateBreaker<W = W64, O = (), const N: usize = 8> = RateBreaker<MonotonicClock, W, O, N>;

/// A failure-rate policy in real time: trip when at least `percent` of the
/// calls of the last `window` failed, once the window holds at least
/// `minimum_calls` calls. The [`Settings`] field
/// [`failure_rate`](Settings::failure_rate) holds one; a
/// [`RateBreaker`] is built from it by [`Settings::build_rate`] (the
/// consecutive breaker of [`Settings::build`] does not read it).
///
/// The window converts to the clock's ticks as the open time does,
/// `ceil(window / tick) + 1` ([`RealClock::ticks`]), so that it spans at
/// least `window` of real time; the breaker then rounds it up to its `N`
/// buckets of `2^k` ticks ([`ValidRate::effective_window`]).
///
/// Each setting is a public field named as its setter and its key in a
/// config file; the struct is `#[non_exhaustive]`: make one with
/// [`FailureRate::new`] (or [`Default`]) and the setters. Every key of a
/// config file's `failure_rate` table is optional (those of
/// [`Default`]), an unknown key is refused:
///
/// ```
/// # #[cfg(feature = "serde")] {
/// use std::time::Duration;
/// use tripword_std::Settings;
/// use tripword_std::FailureRate;
///
/// let s: Settings = toml::from_str(r#"
///     open_for = "30s"
///     failure_rate = { percent = 50, window = "10s", minimum_calls = 20 }
/// "#).unwrap();
/// assert_eq!(s.failure_rate, Some(FailureRate::new(50, Duration::from_secs(10))));
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
#[non_exhaustive]
pub struct FailureRate {
    /// Trip when at least this percentage of the window's calls failed,
    /// 1 to 100 (set with [`percent`](method@FailureRate::percent)).
    pub percent: u32,
    /// The sliding window the rate is taken over (set with
    /// [`window`](method@FailureRate::window)).
    #[cfg_attr(feature = "serde", serde(with = "humantime_serde"))]
    pub window: Duration,
    /// Trip only once the window holds at least this many calls: 1 to
    /// 65 535 with [`W64`], 1 to 1 023 with [`W32`](tripword::W32) (set with
    /// [`minimum_calls`](method@FailureRate::minimum_calls)).
    pub minimum_calls: u32,
}

impl Default for FailureRate {
    /// The core's [`Rate::new`] in durations: 50 % over 10 s, once 20
    /// calls were made.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::FailureRate;
    /// assert_eq!(FailureRate::default(), FailureRate::new(50, Duration::from_secs(10)));
    /// assert_eq!(FailureRate::default().minimum_calls, 20);
    /// ```
    fn default() -> Self {
        FailureRate::new(50, Duration::from_secs(10))
    }
}

impl FailureRate {
    /// Trip at `percent` failures over `window`, once 20 calls were made in
    /// it (the core's [`Rate::new`] default; set with
    /// [`minimum_calls`](method@FailureRate::minimum_calls)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::FailureRate;
    ///
    /// let rate = FailureRate::new(25, Duration::from_secs(60)).minimum_calls(100);
    /// assert_eq!((rate.percent, rate.window, rate.minimum_calls), (25, Duration::from_secs(60), 100));
    /// ```
    pub const fn new(percent: u32, window: Duration) -> Self {
        FailureRate {
            percent,
            window,
            minimum_calls: 20,
        }
    }

    /// The failure percentage that trips, 1 to 100.
    pub const fn percent(mut self, percent: u32) -> Self {
        self.percent = percent;
        self
    }

    /// The sliding window: at least one tick per bucket (see
    /// [`SettingsError::range`] for the exact bounds).
    pub const fn window(mut self, window: Duration) -> Self {
        self.window = window;
        self
    }

    /// The fewest calls in the window that can trip.
    pub const fn minimum_calls(mut self, calls: u32) -> Self {
        self.minimum_calls = calls;
        self
    }

    /// The core's [`Rate`] in `C`'s ticks, unchecked.
    const fn to_rate<C: RealClock>(self) -> Rate {
        Rate::new()
            .failure_rate(self.percent)
            .minimum_calls(self.minimum_calls)
            .window(duration_to_ticks(self.window, C::TICK))
    }

    /// The core's `error` for this policy on clock `C` and word `W`, in
    /// durations: the window's range is exactly the durations that convert
    /// into the core's range of ticks (at least `N`, at most 2^60).
    fn error<C: RealClock, W: Word>(self, error: ConfigError) -> SettingsError {
        let tick = C::TICK;
        let (given, start, end) = match error.field {
            Field::Window => (
                Some(self.window),
                shortest_at_least(error.min, tick),
                longest_at_most(error.max, tick),
            ),
            _ => (None, Duration::ZERO, Duration::ZERO),
        };
        SettingsError {
            error,
            tick,
            given,
            start,
            end,
            default_horizon: false,
            longest: Duration::ZERO,
            word_bits: W::LAYOUT.word_bits,
        }
    }
}

impl Settings {
    /// The failure-rate policy that [`build_rate`](Settings::build_rate)
    /// builds a [`RateBreaker`] from. [`build`](Settings::build) (the
    /// consecutive breaker) does not read it, as `build_rate` does not read
    /// [`failure_threshold`](method@Settings::failure_threshold): the
    /// kind of breaker is its type, chosen by the code that builds it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::Settings;
    /// use tripword_std::FailureRate;
    ///
    /// let rate = FailureRate::new(50, Duration::from_secs(10));
    /// let s = Settings::new().failure_rate(rate);
    /// assert_eq!(s.failure_rate, Some(rate));
    /// ```
    pub const fn failure_rate(mut self, rate: FailureRate) -> Self {
        self.failure_rate = Some(rate);
        self
    }

    /// Unsets the failure-rate policy (the default): a rate breaker built
    /// from these settings takes [`FailureRate::default`], and a config
    /// file written from them has no `failure_rate` table.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::Settings;
    /// use tripword_std::FailureRate;
    ///
    /// let s = Settings::new()
    ///     .failure_rate(FailureRate::new(50, Duration::from_secs(10)))
    ///     .without_failure_rate();
    /// assert_eq!(s.failure_rate, None);
    /// ```
    pub const fn without_failure_rate(mut self) -> Self {
        self.failure_rate = None;
        self
    }

    /// The failure-rate policy a rate breaker is built from: the one set,
    /// or [`FailureRate::default`].
    const fn rate_policy(&self) -> FailureRate {
        match self.failure_rate {
            Some(rate) => rate,
            None => FailureRate::new(50, Duration::from_secs(10)),
        }
    }

    /// Converts the failure-rate policy (or [`FailureRate::default`] when
    /// none is set) to a core [`Rate`] in `C`'s ticks **without** checking
    /// ranges; `const`, for `static` rate breakers, where
    /// [`ValidRate::new`] does the check and an out-of-range value is a
    /// compile error (see [`StdRateBreaker`]). The window converts with
    /// [`duration_to_ticks`] (at least as long as set), saturating. At run
    /// time prefer [`rate`](Settings::rate), whose error is in durations.
    pub const fn to_rate<C: RealClock>(&self) -> Rate {
        self.rate_policy().to_rate::<C>()
    }

    /// Converts the failure-rate policy (or [`FailureRate::default`] when
    /// none is set) to a core [`ValidRate`] in `C`'s ticks, checked
    /// against word width `W` and `N` buckets (a power of two from 2 to 64,
    /// a compile error otherwise); the error names the field and its range,
    /// the window's in durations.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::{Field, W32, W64};
    /// use tripword_std::FailureRate;
    /// use tripword_std::{MillisClock, MonotonicClock, Settings};
    ///
    /// let s = Settings::new().failure_rate(FailureRate::new(20, Duration::from_secs(1)));
    /// let valid = s.rate::<MonotonicClock, W64, 8>()?;
    /// assert_eq!(valid.window(), 1_000_001);
    /// assert_eq!(valid.effective_window(), 8 << 17); // 8 buckets of 2^17 µs
    ///
    /// let err = s.failure_rate(FailureRate::new(20, Duration::from_millis(5)))
    ///     .rate::<MillisClock, W32, 8>()
    ///     .unwrap_err();
    /// assert_eq!(err.field(), Field::Window);
    /// assert_eq!(
    ///     err.to_string(),
    ///     "failure_rate.window = 5ms is out of range 6.000001ms..=1152921504606846.975s \
    ///      (1ms ticks, 8 buckets)",
    /// );
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    ///
    /// # Errors
    /// The first field out of range, in the core's order (percent, minimum
    /// calls, window).
    pub fn rate<C: RealClock, W: Word, const N: usize>(
        &self,
    ) -> Result<ValidRate<W, N>, SettingsError> {
        let policy = self.rate_policy();
        policy
            .to_rate::<C>()
            .check::<W, N>()
            .map_err(|error| policy.error::<C, W>(error))
    }

    /// The config and policy of a rate breaker, checked: the config as
    /// [`config`](Settings::config) checks it, but for the failure
    /// threshold, which a rate breaker does not read; then the policy.
    ///
    /// The recovery options are carried: the probes' and the ramp's
    /// results go to the breaker's word, as the single probe's do; with
    /// the threshold of one, one failure during the ramp reopens it.
    pub(crate) fn rate_parts<C: RealClock, W: Word, const N: usize>(
        &self,
    ) -> Result<(ValidConfig<W>, ValidRate<W, N>), SettingsError> {
        let config = self.failure_threshold(1).config::<C, W>()?;
        Ok((config, self.rate::<C, W, N>()?))
    }

    /// A [`StdRateBreaker`]: the microsecond [`MonotonicClock`], the 64-bit
    /// word, 8 buckets, no observer. The policy is
    /// [`failure_rate`](method@Settings::failure_rate), or
    /// [`FailureRate::default`] (50 % over 10 s, 20 calls) when none is
    /// set; the open time, backoff, probe timeout, horizon, abandon
    /// outcome, [probes](method@Settings::probes) and
    /// [ramp](method@Settings::ramp) are the consecutive breaker's (the
    /// ramp reopens on its first failure: a rate breaker's word counts
    /// failures to one);
    /// [`failure_threshold`](method@Settings::failure_threshold) is not
    /// read (nor checked).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::Settings;
    ///
    /// let b = Settings::new().open_for(Duration::from_millis(50)).build_rate()?;
    /// assert_eq!(b.rate().failure_rate(), 50); // the default policy
    /// assert_eq!(b.breaker().config().open_for(), 50_001);
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    ///
    /// # Errors
    /// As [`build_rate_on`](Settings::build_rate_on).
    pub fn build_rate(&self) -> Result<StdRateBreaker, SettingsError> {
        self.build_rate_on(MonotonicClock, ())
    }

    /// A [`StdRateBreaker`] reporting transitions to `observer`.
    ///
    /// # Errors
    /// As [`build_rate_on`](Settings::build_rate_on).
    pub fn build_rate_with<O: Observer>(
        &self,
        observer: O,
    ) -> Result<StdRateBreaker<W64, O>, SettingsError> {
        self.build_rate_on(MonotonicClock, observer)
    }

    /// A rate breaker on any [`RealClock`], word width, observer and
    /// bucket count, usually inferred from the annotated type.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::rate::RateBreaker;
    /// use tripword::{Status, W32};
    /// use tripword_std::clock::ManualTime;
    /// use tripword_std::FailureRate;
    /// use tripword_std::{BreakerExt, Settings};
    ///
    /// let clock = ManualTime::new();
    /// let b: RateBreaker<&ManualTime, W32> = Settings::new()
    ///     .failure_rate(FailureRate::new(50, Duration::from_secs(10)).minimum_calls(4))
    ///     .build_rate_on(&clock, ())?;
    /// for ok in [true, false, true, false] {
    ///     let _ = b.call(|| if ok { Ok(()) } else { Err("down") });
    /// }
    /// assert_eq!(b.status(), Status::Open); // 2 of 4 failed
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    ///
    /// # Errors
    /// The first field out of range: the config's as
    /// [`config`](Settings::config) says (the failure threshold aside),
    /// then the policy's as [`rate`](Settings::rate) says.
    pub fn build_rate_on<C: RealClock, W: Word, O, const N: usize>(
        &self,
        clock: C,
        observer: O,
    ) -> Result<RateBreaker<C, W, O, N>, SettingsError> {
        let (config, rate) = self.rate_parts::<C, W, N>()?;
        Ok(RateBreaker::from_parts(config, rate, clock, observer))
    }
}
