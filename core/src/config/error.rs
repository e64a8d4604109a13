//! Why a config is refused: the field and the range its word width
//! allows ([`Field`], [`ConfigError`]).

/// The field of a [`Config`](crate::Config) that failed validation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// [`Config::failure_threshold`](crate::Config::failure_threshold).
    FailureThreshold,
    /// [`Config::open_for`](crate::Config::open_for).
    OpenFor,
    /// The cap given to [`Config::exponential_backoff`](crate::Config::exponential_backoff).
    BackoffCap,
    /// [`Config::probe_timeout`](crate::Config::probe_timeout).
    ProbeTimeout,
    /// [`Config::horizon`](crate::Config::horizon).
    Horizon,
    /// [`Rate::failure_rate`](crate::rate::Rate::failure_rate), in percent.
    FailureRate,
    /// [`Rate::minimum_calls`](crate::rate::Rate::minimum_calls).
    MinimumCalls,
    /// [`Rate::window`](crate::rate::Rate::window).
    Window,
    /// `Config::probes` (feature `recovery`).
    Probes,
    /// `Config::probes_to_close` (feature `recovery`).
    ProbesToClose,
    /// The stage length of `Config::ramp` (feature `recovery`).
    Ramp,
    /// A stage's share of `Config::ramp`, in basis points (feature
    /// `recovery`).
    RampShare,
}

impl Field {
    /// The setter's name.
    pub const fn name(self) -> &'static str {
        match self {
            Field::FailureThreshold => "failure_threshold",
            Field::OpenFor => "open_for",
            Field::BackoffCap => "exponential_backoff cap",
            Field::ProbeTimeout => "probe_timeout",
            Field::Horizon => "horizon",
            Field::FailureRate => "failure_rate (percent)",
            Field::MinimumCalls => "minimum_calls",
            Field::Window => "window",
            Field::Probes => "probes",
            Field::ProbesToClose => "probes_to_close",
            Field::Ramp => "ramp step",
            Field::RampShare => "ramp share (basis points)",
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
    /// The message [`ValidConfig::new`](crate::ValidConfig::new) panics with (a compile error in a
    /// `const`): `const` panics cannot format, so it names the field only.
    pub const fn message(&self) -> &'static str {
        match self.field {
            Field::FailureThreshold => {
                "tripword: failure_threshold is out of range for this word width"
            }
            Field::OpenFor => "tripword: open_for is out of range for this word width",
            Field::BackoffCap => {
                "tripword: exponential_backoff cap is out of range (open_for..=open_for * 2^(max trips - 1))"
            }
            Field::ProbeTimeout => "tripword: probe_timeout is out of range for this word width",
            Field::Horizon => "tripword: horizon plus the longest duration does not fit the word",
            Field::FailureRate => "tripword: failure_rate is out of range 1..=100 percent",
            Field::MinimumCalls => {
                "tripword: minimum_calls is out of range for this word width's bucket counts"
            }
            Field::Window => "tripword: window is out of range (at least one tick per bucket)",
            Field::Probes => "tripword: probes is out of range for this word width",
            Field::ProbesToClose => "tripword: probes_to_close is out of range 1..=probes",
            Field::Ramp => "tripword: the ramp's stages do not fit half the word's ring",
            Field::RampShare => "tripword: ramp shares must rise, each in 1..=9999 basis points",
        }
    }
}

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let unit = match self.field {
            Field::FailureThreshold
            | Field::MinimumCalls
            | Field::Probes
            | Field::ProbesToClose
            | Field::RampShare => "",
            Field::FailureRate => " percent",
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
