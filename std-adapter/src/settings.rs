//! A breaker configuration in [`Duration`]s, converted to a core
//! [`Config`] in a [`RealClock`]'s ticks and checked against the word width.
//!
//! ```
//! use std::time::Duration;
//! use tripword::{Field, Outcome, Status, W32};
//! use tripword_std::{MillisClock, MonotonicClock, Settings, StdBreaker};
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
//! // 100 ms, plus one tick for the clock's rounding down (see `clock`).
//! assert_eq!(breaker.config().open_for(), 100_001);
//! assert_eq!(breaker.status(), Status::Closed);
//!
//! // Callers two hours apart do not fit the 32-bit word in microseconds...
//! let err = settings
//!     .horizon(Duration::from_secs(2 * 3600))
//!     .config::<MonotonicClock, W32>()
//!     .unwrap_err();
//! assert_eq!(err.field(), Field::Horizon);
//! // ...but fit it in milliseconds, in 256 ms units.
//! let valid = settings.horizon(Duration::from_secs(2 * 3600)).config::<MillisClock, W32>()?;
//! assert_eq!(valid.time_shift(), 8);
//! # Ok::<(), tripword_std::SettingsError>(())
//! ```

use std::time::Duration;

use tripword::{Breaker, Config, ConfigError, Observer, Outcome, ValidConfig, W64, Word};

use self::range::{Durations, in_durations};
use crate::clock::{MonotonicClock, RealClock, duration_to_ticks, span_to_ticks};

mod error;
mod range;
mod rate;
mod recovery;

pub use self::error::SettingsError;
pub use self::rate::{FailureRate, StdRateBreaker};
pub use self::recovery::RampSettings;

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
/// assert_eq!(b.config().open_for(), 5_001);
/// assert_eq!(b.config().time_shift(), 7); // 128 ms units: an hour of callers fits
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
pub type MillisBreaker<W = W64, O = ()> = Breaker<crate::clock::MillisClock, W, O>;

/// A breaker configuration in real time. Build it with the `const` setters
/// from [`Settings::new`], then [`build`](Settings::build) a breaker, or
/// convert it with [`config`](Settings::config) (checked) or
/// [`to_config`](Settings::to_config) (`const`, checked by the breaker).
///
/// Two kinds of breaker are built from it, by type: the consecutive
/// breaker ([`build`](Settings::build), a [`StdBreaker`]), tripped by
/// [`failure_threshold`](method@Settings::failure_threshold) failures in a
/// row, and the failure-rate breaker ([`build_rate`](Settings::build_rate),
/// a [`StdRateBreaker`]), tripped by the
/// [`failure_rate`](method@Settings::failure_rate) policy over a window.
/// Each reads every other setting and not the other's trip rule.
///
/// Open times, backoff caps and probe timeouts last **at least** as long as
/// set: each converts to `ceil(duration / tick) + 1` ticks of the clock, one
/// tick more than it spans, because a clock that reads whole ticks rounded
/// down can lose up to one tick at each end ([`RealClock::ticks`]).
///
/// ```
/// use std::time::Duration;
/// use tripword_std::{MillisClock, MonotonicClock, Settings};
///
/// let s = Settings::new().open_for(Duration::from_nanos(1_500));
/// let config = s.config::<MonotonicClock, tripword::W64>()?;
/// assert_eq!(config.open_for(), 3); // 1.5 µs spans 2 µs ticks, plus one
/// let s = Settings::new().open_for(Duration::from_millis(1));
/// assert_eq!(s.config::<MillisClock, tripword::W64>()?.open_for(), 2);
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
///
/// # Reading a setting back
/// Each setting is a public field named as its setter and its key in a
/// config file: `settings.open_for`, `settings.exponential_backoff` (the
/// cap, `None` for a fixed open time), `settings.abandon_as`. A getter
/// method cannot share its setter's name, so the field is the getter. The
/// struct is `#[non_exhaustive]`: make one with [`Settings::new`] (or
/// [`Default`]) and the setters.
///
/// ```
/// use std::time::Duration;
/// use tripword_std::Settings;
///
/// let s = Settings::new().exponential_backoff(Duration::from_secs(60));
/// assert_eq!(s.exponential_backoff, Some(Duration::from_secs(60)));
/// assert_eq!(s.open_for, Duration::from_secs(1)); // the default
/// ```
///
/// # From a config file (feature `serde`)
/// `Settings` deserializes from any serde format, each key named after its
/// setter, durations in human form (`"30s"`, `"250ms"`, `"1m 30s"`, as
/// `humantime` reads them), every key optional (the defaults of
/// [`Settings::new`]), unknown keys refused; the failure-rate policy is a
/// table, `failure_rate = { percent = 50, window = "10s", minimum_calls =
/// 20 }` ([`FailureRate`]). A malformed value (`"30
/// parsecs"`, a negative threshold) is the format's error, naming the key;
/// a value out of range is found where the builder's is, by
/// [`config`](Settings::config) or [`build`](Settings::build), with the
/// same [`SettingsError`]. It serializes the same way.
///
/// ```
/// # #[cfg(feature = "serde")] {
/// use std::time::Duration;
/// use tripword::{Field, Outcome, W32};
/// use tripword_std::{MillisClock, Settings};
///
/// let s: Settings = toml::from_str(r#"
///     failure_threshold = 3
///     open_for = "250ms"
///     exponential_backoff = "30s"
///     probe_timeout = "2s"
///     abandon_as = "ignored"
/// "#).unwrap();
/// assert_eq!(s, Settings::new()
///     .failure_threshold(3)
///     .open_for(Duration::from_millis(250))
///     .exponential_backoff(Duration::from_secs(30))
///     .probe_timeout(Duration::from_secs(2))
///     .abandon_as(Outcome::Ignored));
///
/// let s: Settings = toml::from_str(r#"failure_threshold = 5000"#).unwrap();
/// let err = s.config::<MillisClock, W32>().unwrap_err();
/// assert_eq!(err.to_string(), "failure_threshold = 5000 is out of range 1..=4095 (32-bit word)");
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
#[non_exhaustive]
pub struct Settings {
    /// Trip after this many consecutive failures (set with
    /// [`failure_threshold`](method@Settings::failure_threshold)).
    pub failure_threshold: u32,
    /// The (base) open time (set with [`open_for`](method@Settings::open_for)).
    #[cfg_attr(feature = "serde", serde(with = "humantime_serde"))]
    pub open_for: Duration,
    /// The cap of the exponential backoff, `None` for a fixed open time
    /// (set with [`exponential_backoff`](method@Settings::exponential_backoff) and
    /// [`fixed_open_time`](Settings::fixed_open_time)).
    #[cfg_attr(
        feature = "serde",
        serde(with = "humantime_serde", skip_serializing_if = "Option::is_none")
    )]
    pub exponential_backoff: Option<Duration>,
    /// How long a probe may take (set with
    /// [`probe_timeout`](method@Settings::probe_timeout)).
    #[cfg_attr(feature = "serde", serde(with = "humantime_serde"))]
    pub probe_timeout: Duration,
    /// The horizon, `None` for the core's default for the word width (set
    /// with [`horizon`](method@Settings::horizon)).
    #[cfg_attr(
        feature = "serde",
        serde(with = "humantime_serde", skip_serializing_if = "Option::is_none")
    )]
    pub horizon: Option<Duration>,
    /// The outcome of a permit dropped without one (set with
    /// [`abandon_as`](method@Settings::abandon_as)).
    #[cfg_attr(feature = "serde", serde(with = "outcome_serde"))]
    pub abandon_as: Outcome,
    /// The failure-rate policy of a rate breaker, read by
    /// [`build_rate`](Settings::build_rate) only; `None` for
    /// [`FailureRate::default`] (set with
    /// [`failure_rate`](method@Settings::failure_rate) and
    /// [`without_failure_rate`](Settings::without_failure_rate)).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub failure_rate: Option<FailureRate>,
    /// The probes a half-open breaker admits, 1 for the single probe (set
    /// with [`probes`](method@Settings::probes)).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "recovery::is_one"))]
    pub probes: u8,
    /// How many of the probes must succeed to close, `None` for all of
    /// them (set with [`probes_to_close`](method@Settings::probes_to_close)).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub probes_to_close: Option<u8>,
    /// The ramp after the probes succeed, [`RampSettings::NONE`] for none
    /// (set with [`ramp`](method@Settings::ramp)).
    #[cfg_attr(
        feature = "serde",
        serde(skip_serializing_if = "RampSettings::is_none")
    )]
    pub ramp: RampSettings,
}

/// [`Outcome`] as `"success"`, `"failure"`, `"ignored"` (the core has no
/// serde).
#[cfg(feature = "serde")]
pub(crate) mod outcome_serde {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use tripword::Outcome;

    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Name {
        Success,
        Failure,
        Ignored,
    }

    pub(super) fn serialize<S: Serializer>(outcome: &Outcome, s: S) -> Result<S::Ok, S::Error> {
        match outcome {
            Outcome::Success => Name::Success,
            Outcome::Failure => Name::Failure,
            Outcome::Ignored => Name::Ignored,
        }
        .serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Outcome, D::Error> {
        Ok(match Name::deserialize(d)? {
            Name::Success => Outcome::Success,
            Name::Failure => Outcome::Failure,
            Name::Ignored => Outcome::Ignored,
        })
    }

    /// An optional [`Outcome`] (a key an override may leave out).
    pub(crate) mod option {
        use serde::Deserializer;
        use tripword::Outcome;

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<Outcome>, D::Error> {
            super::deserialize(d).map(Some)
        }
    }
}

impl Default for Settings {
    /// Same as [`Settings::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl Settings {
    /// Defaults: 5 consecutive failures trip; open for 1 s, no backoff; a
    /// probe times out after 5 s; the core's default horizon for the word
    /// width; an abandoned permit is a failure; no failure-rate policy
    /// (a rate breaker's is then [`FailureRate::default`]); one probe, no
    /// ramp. All fit either word width with either clock.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::Outcome;
    /// use tripword_std::Settings;
    ///
    /// let s = Settings::new();
    /// assert_eq!(s.failure_threshold, 5);
    /// assert_eq!(s.open_for, Duration::from_secs(1));
    /// assert_eq!(s.exponential_backoff, None);
    /// assert_eq!(s.probe_timeout, Duration::from_secs(5));
    /// assert_eq!(s.horizon, None);
    /// assert_eq!(s.abandon_as, Outcome::Failure);
    /// assert_eq!(s.failure_rate, None);
    /// assert_eq!((s.probes, s.probes_to_close), (1, None));
    /// assert!(s.ramp.is_none());
    /// ```
    pub const fn new() -> Self {
        Settings {
            failure_threshold: 5,
            open_for: Duration::from_secs(1),
            exponential_backoff: None,
            probe_timeout: Duration::from_secs(5),
            horizon: None,
            abandon_as: Outcome::Failure,
            failure_rate: None,
            probes: 1,
            probes_to_close: None,
            ramp: RampSettings::NONE,
        }
    }

    /// Trip after this many consecutive failures (a success resets the run).
    /// 1..=65535 with [`W64`], 1..=4095 with [`W32`](tripword::W32).
    ///
    /// ```
    /// use tripword_std::Settings;
    /// assert_eq!(Settings::new().failure_threshold(3).failure_threshold, 3);
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
    /// assert_eq!(s.open_for, Duration::from_millis(100));
    /// ```
    pub const fn open_for(mut self, duration: Duration) -> Self {
        self.open_for = duration;
        self
    }

    /// Double the open time on each consecutive trip (a failed probe), up to
    /// `cap`; the trip count resets when the breaker closes. `cap` must be at
    /// least [`open_for`](method@Settings::open_for), and reachable: at most
    /// `open_for` doubled once per trip the word counts (30 times for
    /// [`W64`], 14 for [`W32`](tripword::W32)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::Settings;
    /// let s = Settings::new().exponential_backoff(Duration::from_secs(30));
    /// assert_eq!(s.exponential_backoff, Some(Duration::from_secs(30)));
    /// ```
    pub const fn exponential_backoff(mut self, cap: Duration) -> Self {
        self.exponential_backoff = Some(cap);
        self
    }

    /// Keep the open time fixed (the default).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::Settings;
    /// let s = Settings::new().exponential_backoff(Duration::from_secs(30)).fixed_open_time();
    /// assert_eq!(s.exponential_backoff, None);
    /// ```
    pub const fn fixed_open_time(mut self) -> Self {
        self.exponential_backoff = None;
        self
    }

    /// A probe that has not reported after this long is given up: the
    /// breaker becomes half-open and the late result is stale.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::Settings;
    /// let s = Settings::new().probe_timeout(Duration::from_millis(250));
    /// assert_eq!(s.probe_timeout, Duration::from_millis(250));
    /// ```
    pub const fn probe_timeout(mut self, duration: Duration) -> Self {
        self.probe_timeout = duration;
        self
    }

    /// The longest gap between the end of an open time (or probe timeout)
    /// and the next call that the breaker still measures exactly; unset,
    /// the core's default for the word width, in ticks (an hour of 1 µs
    /// ticks for [`W64`], of 1 ms ticks for [`W32`](tripword::W32): see
    /// [`clock`](crate::clock) for what that is on each clock). A longer
    /// horizon costs resolution on a narrow word: durations may last up to
    /// `3 * 2^s` ticks longer, `s` being the
    /// [`time_shift`](tripword::ValidConfig::time_shift) the core derives.
    /// `Duration::ZERO` asks for the finest resolution the durations allow.
    /// See [`Config::horizon`](tripword::Config::horizon).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::W32;
    /// use tripword_std::{MillisClock, Settings};
    ///
    /// let s = Settings::new().open_for(Duration::from_millis(100));
    /// assert_eq!(s.config::<MillisClock, W32>()?.time_shift(), 7); // 128 ms units
    /// let exact = s.probe_timeout(Duration::from_millis(100)).horizon(Duration::ZERO);
    /// assert_eq!(exact.horizon, Some(Duration::ZERO));
    /// assert_eq!(exact.config::<MillisClock, W32>()?.time_shift(), 0); // whole ms
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    pub const fn horizon(mut self, horizon: Duration) -> Self {
        self.horizon = Some(horizon);
        self
    }

    /// The outcome recorded for a permit dropped without one (an early
    /// return between `permit()` and `success()`). Failure by default. A
    /// panic inside [`BreakerExt::call`](crate::BreakerExt::call) is always
    /// a failure, whatever this says; a cancelled
    /// [`call_async`](crate::BreakerExt::call_async) records its
    /// [`CallPolicy`](crate::CallPolicy)'s cancel outcome instead
    /// ([`Ignored`](Outcome::Ignored) by default).
    ///
    /// ```
    /// use tripword::Outcome;
    /// use tripword_std::Settings;
    /// let s = Settings::new().abandon_as(Outcome::Ignored);
    /// assert_eq!(s.abandon_as, Outcome::Ignored);
    /// ```
    pub const fn abandon_as(mut self, outcome: Outcome) -> Self {
        self.abandon_as = outcome;
        self
    }

    /// Converts to a core [`Config`] in `C`'s ticks **without** checking
    /// ranges; `const`, for `static` breakers, where
    /// [`Breaker::new`](tripword::Breaker::new) (or
    /// [`ValidConfig::new`](tripword::ValidConfig::new)) does the check and
    /// an out-of-range value is a compile error. Durations convert with
    /// [`duration_to_ticks`] (at least as long as set), the horizon with
    /// [`span_to_ticks`]; too long for a `u64` of ticks they saturate (and
    /// so fail that check). A backoff cap below `open_for` converts below
    /// `open_for`'s ticks, so it is refused even where the two would round
    /// to the same tick. At run time prefer [`config`](Settings::config),
    /// whose error is in durations.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::{Config, ValidConfig, W32};
    /// use tripword_std::{MillisClock, Settings};
    ///
    /// const CONFIG: Config = Settings::new()
    ///     .open_for(Duration::from_millis(250))
    ///     .to_config::<MillisClock>();
    /// static VALID: ValidConfig<W32> = ValidConfig::new(CONFIG);
    /// assert_eq!(VALID.open_for(), 251);
    /// ```
    pub const fn to_config<C: RealClock>(&self) -> Config {
        let open_for = duration_to_ticks(self.open_for, C::TICK);
        let mut config = Config::new()
            .failure_threshold(self.failure_threshold)
            .open_for(open_for)
            .probe_timeout(duration_to_ticks(self.probe_timeout, C::TICK))
            .abandon_as(self.abandon_as);
        if let Some(cap) = self.exponential_backoff {
            let mut ticks = duration_to_ticks(cap, C::TICK);
            // The rule is `cap >= open_for` in durations; keep it in ticks
            // where both round to the same tick count.
            if cap.as_nanos() < self.open_for.as_nanos() && ticks >= open_for {
                ticks = open_for - 1; // open_for > cap >= 0, so open_for >= 2 ticks
            }
            config = config.exponential_backoff(ticks);
        }
        if let Some(horizon) = self.horizon {
            config = config.horizon(span_to_ticks(horizon, C::TICK));
        }
        self.recovery_config::<C>(config)
    }

    /// Converts to a core [`ValidConfig`] in `C`'s ticks, checked against
    /// word width `W`; the error names the field and its range in durations.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::{Field, W64};
    /// use tripword_std::{MonotonicClock, Settings};
    ///
    /// let valid = Settings::new().config::<MonotonicClock, W64>()?;
    /// assert_eq!(valid.open_for(), 1_000_001); // 1 s in µs, at least
    /// assert_eq!(valid.time_shift(), 0);       // kept in whole µs
    ///
    /// let err = Settings::new()
    ///     .open_for(Duration::ZERO)
    ///     .config::<MonotonicClock, W64>()
    ///     .unwrap_err();
    /// assert_eq!(err.field(), Field::OpenFor);
    /// assert_eq!(err.given(), Some(Duration::ZERO));
    /// assert_eq!(err.range().unwrap().start(), &Duration::from_nanos(1));
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    ///
    /// # Errors
    /// The first field out of range, in the core's order (failure
    /// threshold, open time, probe timeout, backoff cap, horizon, then
    /// the probes, the probes to close, the ramp's step and its shares).
    pub fn config<C: RealClock, W: Word>(&self) -> Result<ValidConfig<W>, SettingsError> {
        self.to_config::<C>()
            .check::<W>()
            .map_err(|error| self.error::<C, W>(self.recovery_error::<C>(error)))
    }

    /// The core's `error` for this configuration, in durations, with the
    /// range the conversion accepts ([`in_durations`]).
    fn error<C: RealClock, W: Word>(&self, error: ConfigError) -> SettingsError {
        let range = in_durations::<C, W>(
            error,
            Durations {
                open_for: self.open_for,
                probe_timeout: self.probe_timeout,
                backoff_cap: self.exponential_backoff,
                horizon: self.horizon,
                ramp_step: self.ramp.step(),
            },
        );
        SettingsError {
            error: range.error,
            tick: C::TICK,
            given: range.given,
            start: range.start,
            end: range.end,
            default_horizon: self.horizon.is_none(),
            longest: range.longest,
            word_bits: W::LAYOUT.word_bits,
        }
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
    /// assert_eq!(b.config().open_for(), 501);
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    ///
    /// # Errors
    /// As [`config`](Settings::config).
    pub fn build_on<C: RealClock, W: Word, O>(
        &self,
        clock: C,
        observer: O,
    ) -> Result<Breaker<C, W, O>, SettingsError> {
        Ok(Breaker::from_parts(self.config::<C, W>()?, clock, observer))
    }
}
