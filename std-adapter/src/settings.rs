//! A breaker configuration in [`Duration`]s, converted to a core
//! [`Config`] in a [`RealClock`]'s ticks and checked against the word width.
//!
//! ```
//! use std::time::Duration;
//! use tripword::{Outcome, Status, W32};
//! use tripword_std::{MillisClock, Settings, StdBreaker};
//!
//! let settings = Settings::new()
//!     .failure_threshold(3)
//!     .open_for(Duration::from_millis(100))
//!     .exponential_backoff(Duration::from_secs(10))
//!     .probe_timeout(Duration::from_secs(2))
//!     .abandon_as(Outcome::Ignored);
//!
//! // On the microsecond clock and the 64-bit word:
//! let breaker: StdBreaker = settings.build()?;
//! assert_eq!(breaker.config().get_open_for(), 100_000); // µs
//! assert_eq!(breaker.status(), Status::Closed);
//!
//! // 100 ms does not fit the 32-bit word in microseconds...
//! let err = settings.config::<tripword_std::MonotonicClock, W32>().unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "open_for = 100ms is out of range 1µs..=16.384ms (1µs ticks, 32-bit word)",
//! );
//! // ...but fits it in milliseconds.
//! assert!(settings.config::<MillisClock, W32>().is_ok());
//! # Ok::<(), tripword_std::SettingsError>(())
//! ```

use core::fmt;
use core::ops::RangeInclusive;
use std::time::Duration;

use tripword::{Breaker, Config, ConfigError, Field, Observer, Outcome, W64, Word};

use crate::clock::{MonotonicClock, RealClock, duration_to_ticks, ticks_to_duration};

/// A breaker on the real microsecond clock: [`W64`] and no observer unless
/// named. Build one with [`Settings::build`], or as a `static`:
///
/// ```
/// use std::time::Duration;
/// use tripword::Breaker;
/// use tripword_std::{MonotonicClock, Settings, StdBreaker};
///
/// static B: StdBreaker = Breaker::new(
///     Settings::new()
///         .failure_threshold(3)
///         .open_for(Duration::from_millis(100))
///         .to_config::<MonotonicClock>(), // out of range: a compile error
///     MonotonicClock,
/// );
/// assert!(B.acquire().is_ok());
/// ```
pub type StdBreaker<W = W64, O = ()> = Breaker<MonotonicClock, W, O>;

/// A breaker on the real millisecond clock, the usual choice with
/// [`W32`](tripword::W32):
///
/// ```
/// use std::time::Duration;
/// use tripword::W32;
/// use tripword_std::{MillisBreaker, MillisClock, Settings};
///
/// let b: MillisBreaker<W32> = Settings::new()
///     .open_for(Duration::from_secs(5))
///     .build_on(MillisClock, ())?;
/// assert_eq!(b.config().get_open_for(), 5_000);
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
pub type MillisBreaker<W = W64, O = ()> = Breaker<crate::clock::MillisClock, W, O>;

/// A breaker configuration in real time. Build it with the `const` setters
/// from [`Settings::new`], then [`build`](Settings::build) a breaker, or
/// convert it with [`config`](Settings::config) (checked) or
/// [`to_config`](Settings::to_config) (`const`, checked by the breaker).
///
/// Durations are rounded **up** to whole ticks of the clock.
///
/// ```
/// use std::time::Duration;
/// use tripword_std::{MonotonicClock, Settings};
///
/// let s = Settings::new().open_for(Duration::from_nanos(1_500));
/// let config = s.config::<MonotonicClock, tripword::W64>()?;
/// assert_eq!(config.get_open_for(), 2); // 1.5 µs rounds up to 2 µs
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Settings {
    failure_threshold: u32,
    open_for: Duration,
    backoff_cap: Option<Duration>,
    probe_timeout: Duration,
    abandon: Outcome,
}

impl Default for Settings {
    /// Same as [`Settings::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl Settings {
    /// Defaults: 5 consecutive failures trip; open for 1 s, no backoff; a
    /// probe times out after 5 s; an abandoned permit is a failure. All fit
    /// [`W64`] with either clock, and [`W32`](tripword::W32) with
    /// [`MillisClock`](crate::MillisClock).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::Outcome;
    /// use tripword_std::Settings;
    ///
    /// let s = Settings::new();
    /// assert_eq!(s.get_failure_threshold(), 5);
    /// assert_eq!(s.get_open_for(), Duration::from_secs(1));
    /// assert_eq!(s.get_backoff_cap(), None);
    /// assert_eq!(s.get_probe_timeout(), Duration::from_secs(5));
    /// assert_eq!(s.get_abandon(), Outcome::Failure);
    /// ```
    pub const fn new() -> Self {
        Settings {
            failure_threshold: 5,
            open_for: Duration::from_secs(1),
            backoff_cap: None,
            probe_timeout: Duration::from_secs(5),
            abandon: Outcome::Failure,
        }
    }

    /// Trip after this many consecutive failures (a success resets the run).
    /// 1..=65535 with [`W64`], 1..=4095 with [`W32`](tripword::W32).
    ///
    /// ```
    /// use tripword_std::Settings;
    /// assert_eq!(Settings::new().failure_threshold(3).get_failure_threshold(), 3);
    /// ```
    pub const fn failure_threshold(mut self, failures: u32) -> Self {
        self.failure_threshold = failures;
        self
    }

    /// Stay open this long after a trip (the base of the backoff, if any).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::Settings;
    /// let s = Settings::new().open_for(Duration::from_millis(100));
    /// assert_eq!(s.get_open_for(), Duration::from_millis(100));
    /// ```
    pub const fn open_for(mut self, duration: Duration) -> Self {
        self.open_for = duration;
        self
    }

    /// Double the open time on each consecutive trip (a failed probe), up to
    /// `cap`; the trip count resets when the breaker closes. `cap` must be at
    /// least [`open_for`](Settings::open_for).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::Settings;
    /// let s = Settings::new().exponential_backoff(Duration::from_secs(30));
    /// assert_eq!(s.get_backoff_cap(), Some(Duration::from_secs(30)));
    /// ```
    pub const fn exponential_backoff(mut self, cap: Duration) -> Self {
        self.backoff_cap = Some(cap);
        self
    }

    /// Keep the open time fixed (the default).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::Settings;
    /// let s = Settings::new().exponential_backoff(Duration::from_secs(30)).fixed_open_time();
    /// assert_eq!(s.get_backoff_cap(), None);
    /// ```
    pub const fn fixed_open_time(mut self) -> Self {
        self.backoff_cap = None;
        self
    }

    /// A probe that has not reported after this long is given up: the
    /// breaker becomes half-open and the late result is stale.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::Settings;
    /// let s = Settings::new().probe_timeout(Duration::from_millis(250));
    /// assert_eq!(s.get_probe_timeout(), Duration::from_millis(250));
    /// ```
    pub const fn probe_timeout(mut self, duration: Duration) -> Self {
        self.probe_timeout = duration;
        self
    }

    /// The outcome recorded for a permit dropped without one (an early
    /// return, a cancelled future). Failure by default. A panic inside
    /// [`BreakerExt::call`](crate::BreakerExt::call) is always a failure,
    /// whatever this says.
    ///
    /// ```
    /// use tripword::Outcome;
    /// use tripword_std::Settings;
    /// let s = Settings::new().abandon_as(Outcome::Ignored);
    /// assert_eq!(s.get_abandon(), Outcome::Ignored);
    /// ```
    pub const fn abandon_as(mut self, outcome: Outcome) -> Self {
        self.abandon = outcome;
        self
    }

    /// The configured failure threshold.
    ///
    /// ```
    /// assert_eq!(tripword_std::Settings::new().get_failure_threshold(), 5);
    /// ```
    pub const fn get_failure_threshold(&self) -> u32 {
        self.failure_threshold
    }

    /// The configured (base) open time.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(tripword_std::Settings::new().get_open_for(), Duration::from_secs(1));
    /// ```
    pub const fn get_open_for(&self) -> Duration {
        self.open_for
    }

    /// The backoff cap, if backoff is on.
    ///
    /// ```
    /// assert_eq!(tripword_std::Settings::new().get_backoff_cap(), None);
    /// ```
    pub const fn get_backoff_cap(&self) -> Option<Duration> {
        self.backoff_cap
    }

    /// The probe timeout.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(tripword_std::Settings::new().get_probe_timeout(), Duration::from_secs(5));
    /// ```
    pub const fn get_probe_timeout(&self) -> Duration {
        self.probe_timeout
    }

    /// The outcome recorded for abandoned permits.
    ///
    /// ```
    /// use tripword::Outcome;
    /// assert_eq!(tripword_std::Settings::new().get_abandon(), Outcome::Failure);
    /// ```
    pub const fn get_abandon(&self) -> Outcome {
        self.abandon
    }

    /// Converts to a core [`Config`] in `C`'s ticks **without** checking
    /// ranges; `const`, for `static` breakers, where
    /// [`Breaker::new`](tripword::Breaker::new) does the check and an
    /// out-of-range value is a compile error. Durations too long for a `u64`
    /// of ticks saturate (and so fail that check). At run time prefer
    /// [`config`](Settings::config), whose error is in durations.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::Config;
    /// use tripword_std::{MillisClock, Settings};
    ///
    /// const CONFIG: Config = Settings::new()
    ///     .open_for(Duration::from_millis(250))
    ///     .to_config::<MillisClock>();
    /// assert_eq!(CONFIG.get_open_for(), 250);
    /// ```
    pub const fn to_config<C: RealClock>(&self) -> Config {
        let config = Config::new()
            .failure_threshold(self.failure_threshold)
            .open_for(duration_to_ticks(self.open_for, C::TICK))
            .probe_timeout(duration_to_ticks(self.probe_timeout, C::TICK))
            .abandon_as(self.abandon);
        match self.backoff_cap {
            Some(cap) => config.exponential_backoff(duration_to_ticks(cap, C::TICK)),
            None => config.fixed_open_time(),
        }
    }

    /// Converts to a core [`Config`] in `C`'s ticks, checked against word
    /// width `W`; the error names the field and its range in durations.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::{Field, W64};
    /// use tripword_std::{MonotonicClock, Settings};
    ///
    /// let err = Settings::new()
    ///     .open_for(Duration::ZERO)
    ///     .config::<MonotonicClock, W64>()
    ///     .unwrap_err();
    /// assert_eq!(err.field(), Field::OpenFor);
    /// assert_eq!(err.given(), Some(Duration::ZERO));
    /// assert_eq!(err.range().unwrap(),
    ///            Duration::from_micros(1)..=Duration::from_micros(1 << 33));
    /// ```
    pub fn config<C: RealClock, W: Word>(&self) -> Result<Config, SettingsError> {
        self.to_config::<C>()
            .validate::<W>()
            .map_err(|error| SettingsError {
                error,
                tick: C::TICK,
                given: match error.field {
                    Field::FailureThreshold => None,
                    Field::OpenFor => Some(self.open_for),
                    Field::BackoffCap => self.backoff_cap,
                    Field::ProbeTimeout => Some(self.probe_timeout),
                },
                word_bits: W::LAYOUT.word_bits,
            })
    }

    /// A [`StdBreaker`]: the microsecond [`MonotonicClock`], the 64-bit word,
    /// no observer.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::Settings;
    ///
    /// let b = Settings::new().open_for(Duration::from_millis(50)).build()?;
    /// assert!(b.acquire().is_ok());
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    pub fn build(&self) -> Result<StdBreaker, SettingsError> {
        self.build_on(MonotonicClock, ())
    }

    /// A [`StdBreaker`] reporting transitions to `observer`.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use tripword::OnTransition;
    /// use tripword_std::Settings;
    ///
    /// let seen = AtomicUsize::new(0);
    /// let b = Settings::new().build_with(OnTransition(|_| {
    ///     seen.fetch_add(1, Ordering::Relaxed);
    /// }))?;
    /// b.force_open();
    /// assert_eq!(seen.load(Ordering::Relaxed), 1);
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    pub fn build_with<O: Observer>(
        &self,
        observer: O,
    ) -> Result<StdBreaker<W64, O>, SettingsError> {
        self.build_on(MonotonicClock, observer)
    }

    /// A breaker on any [`RealClock`], word width and observer; the word
    /// width is usually inferred from the annotated type.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::{Breaker, W32};
    /// use tripword_std::{MillisClock, Settings};
    ///
    /// let b: Breaker<MillisClock, W32> = Settings::new()
    ///     .open_for(Duration::from_millis(500))
    ///     .build_on(MillisClock, ())?;
    /// assert_eq!(b.config().get_open_for(), 500);
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    pub fn build_on<C: RealClock, W: Word, O>(
        &self,
        clock: C,
        observer: O,
    ) -> Result<Breaker<C, W, O>, SettingsError> {
        let config = self.config::<C, W>()?;
        // `config` passed the same check `try_from_parts` makes.
        Breaker::try_from_parts(config, clock, observer).map_err(|error| SettingsError {
            error,
            tick: C::TICK,
            given: None,
            word_bits: W::LAYOUT.word_bits,
        })
    }
}

/// A [`Settings`] value out of range for its clock and word width: which
/// field, the value given, and the allowed range, in durations.
///
/// ```
/// use std::time::Duration;
/// use tripword::{Field, W64};
/// use tripword_std::{MonotonicClock, Settings};
///
/// let err = Settings::new()
///     .probe_timeout(Duration::from_secs(3 * 3600))
///     .config::<MonotonicClock, W64>()
///     .unwrap_err();
/// assert_eq!(err.field(), Field::ProbeTimeout);
/// assert_eq!(
///     err.to_string(),
///     "probe_timeout = 10800s is out of range 1µs..=8589.934592s (1µs ticks, 64-bit word)",
/// );
/// // The core's error, in ticks, is the source.
/// assert_eq!(err.in_ticks().max, 1 << 33);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SettingsError {
    error: ConfigError,
    tick: Duration,
    given: Option<Duration>,
    word_bits: u32,
}

impl SettingsError {
    /// The field out of range.
    ///
    /// ```
    /// use tripword::{Field, W64};
    /// use tripword_std::{MonotonicClock, Settings};
    /// let err = Settings::new().failure_threshold(0)
    ///     .config::<MonotonicClock, W64>().unwrap_err();
    /// assert_eq!(err.field(), Field::FailureThreshold);
    /// ```
    pub fn field(&self) -> Field {
        self.error.field
    }

    /// The core's error, with the value and range in ticks (or failures).
    ///
    /// ```
    /// use tripword::{Field, W32};
    /// use tripword_std::{MonotonicClock, Settings};
    /// let err = Settings::new().failure_threshold(5000)
    ///     .config::<MonotonicClock, W32>().unwrap_err();
    /// assert_eq!((err.in_ticks().min, err.in_ticks().max), (1, 4095));
    /// ```
    pub fn in_ticks(&self) -> &ConfigError {
        &self.error
    }

    /// The duration given, or `None` for the failure threshold.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::W32;
    /// use tripword_std::{MonotonicClock, Settings};
    /// let err = Settings::new().config::<MonotonicClock, W32>().unwrap_err();
    /// assert_eq!(err.given(), Some(Duration::from_secs(1))); // the default open time
    /// ```
    pub fn given(&self) -> Option<Duration> {
        self.given
    }

    /// The allowed range in durations, or `None` for the failure threshold.
    /// Durations round up to whole ticks, so anything above zero and up to
    /// the range's end is accepted where the range starts at one tick.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::W32;
    /// use tripword_std::{MonotonicClock, Settings};
    /// let err = Settings::new().config::<MonotonicClock, W32>().unwrap_err();
    /// assert_eq!(err.range(),
    ///            Some(Duration::from_micros(1)..=Duration::from_micros(16_384)));
    /// ```
    pub fn range(&self) -> Option<RangeInclusive<Duration>> {
        match self.error.field {
            Field::FailureThreshold => None,
            _ => Some(
                ticks_to_duration(self.error.min, self.tick)
                    ..=ticks_to_duration(self.error.max, self.tick),
            ),
        }
    }

    /// The clock's tick the conversion used.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::W32;
    /// use tripword_std::{MillisClock, Settings};
    /// let err = Settings::new().open_for(Duration::from_secs(20))
    ///     .config::<MillisClock, W32>().unwrap_err();
    /// assert_eq!(err.tick(), Duration::from_millis(1));
    /// ```
    pub fn tick(&self) -> Duration {
        self.tick
    }
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.error.field.name();
        match (self.given, self.range()) {
            (Some(given), Some(range)) => write!(
                f,
                "{name} = {given:?} is out of range {:?}..={:?} ({:?} ticks, {}-bit word)",
                range.start(),
                range.end(),
                self.tick,
                self.word_bits
            ),
            _ => write!(
                f,
                "{name} = {} is out of range {}..={} ({}-bit word)",
                self.error.value, self.error.min, self.error.max, self.word_bits
            ),
        }
    }
}

impl std::error::Error for SettingsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}
