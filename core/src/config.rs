//! Breaker configuration: the failure policy, the open duration (fixed or
//! exponential backoff), the probe timeout and the abandon policy.
//!
//! Every duration is in the clock's ticks. The ranges depend on the word width
//! (the fields must fit the word, see [`Layout`]); [`Config::validate`] checks
//! them and names the field and range that failed. In a `const` or `static`,
//! [`Breaker::new`](crate::Breaker::new) turns a failed check into a compile
//! error.
//!
//! ```
//! use tripword::{Config, W32, W64};
//!
//! let config = Config::new()
//!     .failure_threshold(3)
//!     .open_for(100)
//!     .exponential_backoff(1_600)
//!     .probe_timeout(50);
//! assert!(config.validate::<W64>().is_ok());
//!
//! // 2^15 ticks is too long an open time for the 32-bit word.
//! let err = Config::new().open_for(1 << 15).validate::<W32>().unwrap_err();
//! assert_eq!(err.to_string(), "open_for = 32768 is out of range 1..=16384 ticks");
//! ```

use crate::outcome::Outcome;
use crate::word::{Layout, Word};

/// How a breaker decides and times its transitions. Build with the `const`
/// setters from [`Config::new`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    failure_threshold: u32,
    open_for: u64,
    backoff_cap: Option<u64>,
    probe_timeout: u64,
    abandon: Outcome,
}

/// A config fixed at compile time, named by a type: the form that costs a
/// firmware least. The breaker holds a zero-sized [`Const<T>`] instead of a
/// config or a pointer, so RAM per breaker is the word alone, and the
/// compiler folds every threshold and duration into the code as an immediate
/// (`docs/embedded.md`, "Footprint").
///
/// ```
/// use tripword::{Breaker, Config, ConstConfig, W32};
/// use tripword::config::Const;
/// use tripword::clock::ManualClock;
///
/// struct Uplink;
/// impl ConstConfig for Uplink {
///     const CONFIG: Config = Config::new().failure_threshold(3).open_for(1_000);
/// }
///
/// static CLOCK: ManualClock = ManualClock::new(0);
/// static B: Breaker<&ManualClock, W32, (), Const<Uplink>> = Breaker::from_const(&CLOCK, ());
/// assert!(B.acquire().is_ok());
/// assert_eq!(B.config().get_failure_threshold(), 3);
/// ```
///
/// An out-of-range `CONFIG` is a compile error where the breaker is built:
///
/// ```compile_fail
/// use tripword::{Breaker, Config, ConstConfig, W32};
/// use tripword::config::Const;
///
/// struct TooLong;
/// impl ConstConfig for TooLong {
///     // 2^15 ticks does not fit the 32-bit word's time field.
///     const CONFIG: Config = Config::new().open_for(1 << 15);
/// }
/// static B: Breaker<fn() -> u64, W32, (), Const<TooLong>> = Breaker::from_const(|| 0, ());
/// ```
pub trait ConstConfig {
    /// The config.
    const CONFIG: Config;
}

/// Where a breaker finds a [`ConstConfig`]: zero-sized, it borrows as
/// `T::CONFIG`. Built by [`Breaker::from_const`](crate::Breaker::from_const).
pub struct Const<T>(core::marker::PhantomData<fn() -> T>);

impl<T> Const<T> {
    /// The marker.
    pub const fn new() -> Self {
        Const(core::marker::PhantomData)
    }
}

impl<T> Default for Const<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Clone for Const<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Const<T> {}

impl<T> core::fmt::Debug for Const<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Const")
    }
}

impl<T: ConstConfig> core::borrow::Borrow<Config> for Const<T> {
    #[inline(always)]
    fn borrow(&self) -> &Config {
        &T::CONFIG
    }
}

impl Default for Config {
    fn default() -> Self {
        Self::new()
    }
}

/// The field of a [`Config`] that failed validation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// [`Config::failure_threshold`].
    FailureThreshold,
    /// [`Config::open_for`].
    OpenFor,
    /// The cap given to [`Config::exponential_backoff`].
    BackoffCap,
    /// [`Config::probe_timeout`].
    ProbeTimeout,
}

impl Field {
    /// The setter's name.
    pub const fn name(self) -> &'static str {
        match self {
            Field::FailureThreshold => "failure_threshold",
            Field::OpenFor => "open_for",
            Field::BackoffCap => "exponential_backoff cap",
            Field::ProbeTimeout => "probe_timeout",
        }
    }
}

/// A config value outside the range its word width allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConfigError {
    /// The offending field.
    pub field: Field,
    /// The value given.
    pub value: u64,
    /// Smallest allowed value.
    pub min: u64,
    /// Largest allowed value.
    pub max: u64,
}

impl ConfigError {
    /// The message `Breaker::new` panics with (a compile error in a `const`).
    pub const fn message(&self) -> &'static str {
        match self.field {
            Field::FailureThreshold => {
                "tripword: failure_threshold is out of range for this word width"
            }
            Field::OpenFor => "tripword: open_for is out of range for this word width",
            Field::BackoffCap => {
                "tripword: exponential_backoff cap is out of range (open_for..=max duration)"
            }
            Field::ProbeTimeout => "tripword: probe_timeout is out of range for this word width",
        }
    }
}

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let unit = match self.field {
            Field::FailureThreshold => "",
            _ => " ticks",
        };
        write!(
            f,
            "{} = {} is out of range {}..={}{}",
            self.field.name(),
            self.value,
            self.min,
            self.max,
            unit
        )
    }
}

impl core::error::Error for ConfigError {}

impl Config {
    /// Defaults: 5 consecutive failures trip; open for 1000 ticks, no backoff;
    /// a probe times out after 1000 ticks; an abandoned permit is a failure.
    pub const fn new() -> Self {
        Config {
            failure_threshold: 5,
            open_for: 1000,
            backoff_cap: None,
            probe_timeout: 1000,
            abandon: Outcome::Failure,
        }
    }

    /// Trip after this many consecutive failures (a success resets the run).
    pub const fn failure_threshold(mut self, failures: u32) -> Self {
        self.failure_threshold = failures;
        self
    }

    /// Stay open this many ticks after a trip (the base of the backoff, if
    /// any).
    pub const fn open_for(mut self, ticks: u64) -> Self {
        self.open_for = ticks;
        self
    }

    /// Double the open time on each consecutive trip (a failed probe) up to
    /// `cap` ticks; the trip count resets when the breaker closes.
    pub const fn exponential_backoff(mut self, cap: u64) -> Self {
        self.backoff_cap = Some(cap);
        self
    }

    /// Keep the open time fixed (the default).
    pub const fn fixed_open_time(mut self) -> Self {
        self.backoff_cap = None;
        self
    }

    /// A probe that has not reported after this many ticks is given up: the
    /// breaker becomes half-open and the late result is stale.
    pub const fn probe_timeout(mut self, ticks: u64) -> Self {
        self.probe_timeout = ticks;
        self
    }

    /// The outcome recorded for a [`Permit`](crate::Permit) dropped without
    /// one (an early return, a panic, a cancelled future). Failure by default;
    /// async cancellation usually wants [`Outcome::Ignored`].
    pub const fn abandon_as(mut self, outcome: Outcome) -> Self {
        self.abandon = outcome;
        self
    }

    /// The configured failure threshold.
    pub const fn get_failure_threshold(&self) -> u32 {
        self.failure_threshold
    }
    /// The configured (base) open time in ticks.
    pub const fn get_open_for(&self) -> u64 {
        self.open_for
    }
    /// The backoff cap in ticks, if backoff is on.
    pub const fn get_backoff_cap(&self) -> Option<u64> {
        self.backoff_cap
    }
    /// The probe timeout in ticks.
    pub const fn get_probe_timeout(&self) -> u64 {
        self.probe_timeout
    }
    /// The outcome recorded for abandoned permits.
    pub const fn get_abandon(&self) -> Outcome {
        self.abandon
    }

    /// How long the breaker stays open after its `trips`-th consecutive trip
    /// (`trips >= 1`; 0 reads as 1): `open_for`, or with backoff
    /// `min(open_for * 2^(trips-1), cap)`.
    pub const fn open_duration(&self, trips: u32) -> u64 {
        match self.backoff_cap {
            None => self.open_for,
            Some(cap) => {
                let doublings = trips.saturating_sub(1);
                if doublings >= 64 || self.open_for > (cap >> doublings) {
                    cap
                } else {
                    self.open_for << doublings
                }
            }
        }
    }

    /// Checks every field against the ranges of word width `W`.
    pub const fn validate<W: Word>(self) -> Result<Config, ConfigError> {
        self.validate_layout(&W::LAYOUT)
    }

    /// Checks every field against the ranges of `layout`.
    pub const fn validate_layout(self, layout: &Layout) -> Result<Config, ConfigError> {
        let max = layout.max_duration();
        if self.failure_threshold < 1 || self.failure_threshold > layout.max_failures() {
            return Err(ConfigError {
                field: Field::FailureThreshold,
                value: self.failure_threshold as u64,
                min: 1,
                max: layout.max_failures() as u64,
            });
        }
        if self.open_for < 1 || self.open_for > max {
            return Err(ConfigError {
                field: Field::OpenFor,
                value: self.open_for,
                min: 1,
                max,
            });
        }
        if let Some(cap) = self.backoff_cap
            && (cap < self.open_for || cap > max)
        {
            return Err(ConfigError {
                field: Field::BackoffCap,
                value: cap,
                min: self.open_for,
                max,
            });
        }
        if self.probe_timeout < 1 || self.probe_timeout > max {
            return Err(ConfigError {
                field: Field::ProbeTimeout,
                value: self.probe_timeout,
                min: 1,
                max,
            });
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::word::{W32, W64};

    #[test]
    fn backoff_doubles_and_caps() {
        let c = Config::new().open_for(100).exponential_backoff(1000);
        let d: [u64; 6] = [0, 1, 2, 3, 4, 5].map(|t| c.open_duration(t));
        assert_eq!(d, [100, 100, 200, 400, 800, 1000]);
        assert_eq!(c.open_duration(u32::MAX), 1000);
        assert_eq!(Config::new().open_for(100).open_duration(9), 100);
    }

    #[test]
    fn ranges_per_width() {
        let max64 = W64::LAYOUT.max_duration();
        assert!(Config::new().open_for(max64).validate::<W64>().is_ok());
        let e = Config::new()
            .open_for(max64 + 1)
            .validate::<W64>()
            .unwrap_err();
        assert_eq!((e.field, e.max), (Field::OpenFor, max64));
        assert_eq!(
            Config::new()
                .failure_threshold(0)
                .validate::<W64>()
                .unwrap_err()
                .field,
            Field::FailureThreshold
        );
        assert!(
            Config::new()
                .failure_threshold(65535)
                .validate::<W64>()
                .is_ok()
        );
        assert!(
            Config::new()
                .failure_threshold(4096)
                .validate::<W32>()
                .is_err()
        );
        assert!(
            Config::new()
                .failure_threshold(4095)
                .validate::<W32>()
                .is_ok()
        );
        let cap = Config::new()
            .open_for(100)
            .exponential_backoff(99)
            .validate::<W64>();
        assert_eq!(cap.unwrap_err().field, Field::BackoffCap);
        let probe = Config::new()
            .probe_timeout(0)
            .validate::<W32>()
            .unwrap_err();
        assert_eq!(probe.field, Field::ProbeTimeout);
        assert_eq!(Config::default(), Config::new());
    }
}
