//! [`SettingsError`], a [`Settings`](super::Settings) value out of range,
//! in durations.

use core::fmt;
use core::ops::RangeInclusive;
use std::time::Duration;

use tripword::{ConfigError, Field};

/// A [`Settings`](crate::Settings) value out of range for its clock and word width: which
/// field, the value given, and the allowed range, in durations (in counts
/// for the failure threshold, the failure rate's percent and minimum
/// calls, the probes and the ramp's shares). The message names the field
/// as its key in a config file (`failure_rate.window` for the window of
/// [`FailureRate`](crate::FailureRate), `ramp.step` for the length of a
/// ramp's stage).
///
/// ```
/// use std::time::Duration;
/// use tripword::{Field, W32};
/// use tripword_std::{MillisClock, Settings};
///
/// let err = Settings::new()
///     .open_for(Duration::from_millis(1))
///     .exponential_backoff(Duration::from_secs(3600))
///     .config::<MillisClock, W32>()
///     .unwrap_err();
/// assert_eq!(err.field(), Field::BackoffCap);
/// assert_eq!(
///     err.to_string(),
///     "exponential_backoff cap = 3600s is out of range 1ms..=32.767s (1ms ticks, 32-bit word)",
/// );
/// // The core's error, in ticks, is the source: 1 ms is 2 ticks, doubled
/// // 14 times.
/// assert_eq!(err.in_ticks().max, 2 << 14);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SettingsError {
    pub(super) error: ConfigError,
    pub(super) tick: Duration,
    pub(super) given: Option<Duration>,
    // The range in durations (unused for a count).
    pub(super) start: Duration,
    pub(super) end: Duration,
    // For a horizon error: whether the horizon was the default, and the
    // longest duration it was added to.
    pub(super) default_horizon: bool,
    pub(super) longest: Duration,
    pub(super) word_bits: u32,
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

    /// The core's error, with the value and range in ticks (or counts).
    /// Its range is [`range`](Self::range)'s, in ticks: for a duration
    /// past 2^60 ticks, the core names the 2^60 it checks first; this names
    /// the word's own bound where that is less (the 32-bit word's, about
    /// 2^31 ticks).
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

    /// The duration given (for the horizon, the default when none was
    /// set), or `None` for a count (the failure threshold, the failure
    /// rate's percent and minimum calls, the probes, a ramp's share: see
    /// [`in_ticks`](Self::in_ticks)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::W64;
    /// use tripword_std::{MonotonicClock, Settings};
    /// let err = Settings::new().probe_timeout(Duration::ZERO)
    ///     .config::<MonotonicClock, W64>().unwrap_err();
    /// assert_eq!(err.given(), Some(Duration::ZERO));
    /// ```
    pub fn given(&self) -> Option<Duration> {
        self.given
    }

    /// The allowed range in durations, or `None` for a count: exactly the
    /// durations the conversion to ticks accepts, given the other fields.
    /// An open time's, a probe timeout's and a backoff cap's end at the
    /// longest duration the word holds (2^60 ticks on [`W64`](tripword::W64), about 2^31
    /// on [`W32`](tripword::W32)), a backoff cap's earlier where doubling
    /// `open_for` cannot reach, and start at `open_for`; a horizon's ends
    /// where the word's time field, added to the longest duration, runs
    /// out; a failure-rate window's spans one tick per bucket to 2^60
    /// ticks, whatever the word; a ramp stage's (`ramp.step`) ends where
    /// its stages, rounded up to the ramp's coarser units, no longer fit
    /// half the word's time ring (asked of the core's check, by
    /// bisection).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::W32;
    /// use tripword_std::{MillisClock, Settings};
    /// let err = Settings::new()
    ///     .open_for(Duration::MAX)
    ///     .config::<MillisClock, W32>().unwrap_err();
    /// let longest = *err.range().unwrap().end(); // about 24.9 days
    /// assert_eq!(longest, Duration::from_millis(2_147_352_576));
    /// assert!(Settings::new().open_for(longest).config::<MillisClock, W32>().is_ok());
    /// ```
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::W32;
    /// use tripword_std::{MillisClock, Settings};
    /// let err = Settings::new()
    ///     .open_for(Duration::from_millis(100))
    ///     .exponential_backoff(Duration::from_millis(99))
    ///     .config::<MillisClock, W32>().unwrap_err();
    /// assert_eq!(err.range(),
    ///            Some(Duration::from_millis(100)..=Duration::from_millis(101 * (1 << 14) - 1)));
    /// ```
    pub fn range(&self) -> Option<RangeInclusive<Duration>> {
        match self.error.field {
            Field::FailureThreshold
            | Field::FailureRate
            | Field::MinimumCalls
            | Field::Probes
            | Field::ProbesToClose
            | Field::RampShare => None,
            _ => Some(self.start..=self.end),
        }
    }

    /// The clock's tick the conversion used.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::W32;
    /// use tripword_std::{MillisClock, Settings};
    /// let err = Settings::new().open_for(Duration::ZERO)
    ///     .config::<MillisClock, W32>().unwrap_err();
    /// assert_eq!(err.tick(), Duration::from_millis(1));
    /// ```
    pub fn tick(&self) -> Duration {
        self.tick
    }
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The key in a config file; the core's name for the others.
        let name = match self.error.field {
            Field::FailureRate => "failure_rate.percent",
            Field::MinimumCalls => "failure_rate.minimum_calls",
            Field::Window => "failure_rate.window",
            Field::Ramp => "ramp.step",
            Field::RampShare => "ramp.shares",
            field => field.name(),
        };
        let (tick, bits) = (self.tick, self.word_bits);
        match (self.error.field, self.given) {
            (Field::Horizon, Some(given)) => {
                let default = if self.default_horizon {
                    " (default)"
                } else {
                    ""
                };
                write!(
                    f,
                    "{name}{default} = {given:?} is out of range {:?}..={:?} with the longest \
                     duration {:?} ({tick:?} ticks, {bits}-bit word)",
                    self.start, self.end, self.longest
                )
            }
            // The core's shortest window is one tick per bucket.
            (Field::Window, Some(given)) => write!(
                f,
                "{name} = {given:?} is out of range {:?}..={:?} ({tick:?} ticks, {} buckets)",
                self.start, self.end, self.error.min
            ),
            (_, Some(given)) => write!(
                f,
                "{name} = {given:?} is out of range {:?}..={:?} ({tick:?} ticks, {bits}-bit word)",
                self.start, self.end
            ),
            // Bounds that do not depend on the word.
            (Field::FailureRate | Field::ProbesToClose, None) => write!(
                f,
                "{name} = {} is out of range {}..={}",
                self.error.value, self.error.min, self.error.max
            ),
            (Field::RampShare, None) => write!(
                f,
                "{name} = {} basis points is out of range {}..={} (each share above the one \
                 before)",
                self.error.value, self.error.min, self.error.max
            ),
            (_, None) => write!(
                f,
                "{name} = {} is out of range {}..={} ({bits}-bit word)",
                self.error.value, self.error.min, self.error.max
            ),
        }
    }
}

impl std::error::Error for SettingsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}
