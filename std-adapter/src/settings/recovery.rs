//! The recovery options of [`Settings`] in durations: several probes in
//! half-open ([`Settings::probes`], [`Settings::probes_to_close`]) and a
//! progressive ramp after them ([`RampSettings`], [`Settings::ramp`]),
//! converted to the core's [`Config::probes`], [`Config::probes_to_close`]
//! and [`Ramp`] (`docs/spec.md`, "Recovery: several probes and the ramp").
//!
//! ```
//! use std::time::Duration;
//! use tripword::{Outcome, Status, W64};
//! use tripword_std::clock::ManualTime;
//! use tripword_std::{RampSettings, Settings};
//!
//! let clock = ManualTime::new();
//! let b: tripword::Breaker<&ManualTime, W64> = Settings::new()
//!     .failure_threshold(1)
//!     .open_for(Duration::from_secs(10))
//!     .probes(3)          // three probes in half-open...
//!     .probes_to_close(2) // ...two of which must succeed
//!     .ramp(RampSettings::linear(Duration::from_secs(4), 3)) // 25 %, 50 %, 75 %, a second and a third each
//!     .build_on(&clock, ())?;
//! b.release(b.acquire().unwrap(), Outcome::Failure);
//! clock.advance(Duration::from_secs(11));
//! let probes: Vec<_> = (0..3).map(|_| b.acquire().unwrap()).collect();
//! assert!(b.acquire().is_err()); // the trial is full
//! assert_eq!(b.status(), Status::Probing);
//! for probe in probes {
//!     b.release(probe, Outcome::Success);
//! }
//! assert_eq!(b.status(), Status::Recovering); // the ramp admits a share
//! # Ok::<(), tripword_std::SettingsError>(())
//! ```

use std::time::Duration;

use tripword::{Config, ConfigError, Field, Ramp};

use super::Settings;
use crate::clock::{RealClock, duration_to_ticks};

/// A progressive ramp in real time: up to [`MAX_STAGES`](Self::MAX_STAGES)
/// stages of `step` each, each admitting a share of calls (in basis
/// points, 1/10 000, rising, each in `1..=9_999`), then every call. The
/// [`Settings`] field [`ramp`](Settings::ramp) holds one; it converts to
/// the core's [`Ramp`] in a clock's ticks, the step as an open time does
/// (`ceil(step / tick) + 1` ticks, at least as long as set). The
/// constructors are the core's, in durations.
///
/// In a config file (feature `serde`) a ramp is a table of the stage's
/// length and the shares in basis points; no table, or no shares, is no
/// ramp:
///
/// ```
/// # #[cfg(feature = "serde")] {
/// use std::time::Duration;
/// use tripword_std::{RampSettings, Settings};
///
/// let s: Settings = toml::from_str(r#"
///     probes = 3
///     ramp = { step = "1s", shares = [10, 100, 500, 1000, 2500, 5000] }
/// "#).unwrap();
/// assert_eq!(s.ramp, RampSettings::progressive(Duration::from_secs(1)));
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "serde_repr::Repr", into = "serde_repr::Repr")
)]
pub struct RampSettings {
    step: Duration,
    stages: u8,
    shares: [u16; Ramp::MAX_STAGES],
}

impl Default for RampSettings {
    /// [`RampSettings::NONE`].
    fn default() -> Self {
        RampSettings::NONE
    }
}

impl RampSettings {
    /// The most stages a ramp has (the core's [`Ramp::MAX_STAGES`]).
    pub const MAX_STAGES: usize = Ramp::MAX_STAGES;

    /// No ramp (the default): the breaker closes fully when its probes
    /// succeed.
    pub const NONE: RampSettings = RampSettings {
        step: Duration::ZERO,
        stages: 0,
        shares: [0; Ramp::MAX_STAGES],
    };

    /// seatbelt's stages: 0.1 %, 1 %, 5 %, 10 %, 25 %, 50 % of calls,
    /// `step` each, then all of them ([`Ramp::progressive`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::RampSettings;
    /// let r = RampSettings::progressive(Duration::from_secs(2));
    /// assert_eq!((r.stages_count(), r.step()), (6, Duration::from_secs(2)));
    /// assert_eq!(r.shares(), &[10, 100, 500, 1_000, 2_500, 5_000]);
    /// ```
    pub const fn progressive(step: Duration) -> RampSettings {
        RampSettings::stages(step, &[10, 100, 500, 1_000, 2_500, 5_000])
    }

    /// `stages` equal stages over `over` (at most
    /// [`MAX_STAGES`](Self::MAX_STAGES): more are cut to that), admitting
    /// `1/(stages+1)`, `2/(stages+1)`, … of calls, then all of them
    /// ([`Ramp::linear`]); a stage lasts `over / stages`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::RampSettings;
    /// let r = RampSettings::linear(Duration::from_secs(20), 4);
    /// assert_eq!(r.step(), Duration::from_secs(5));
    /// assert_eq!(r.shares(), &[2_000, 4_000, 6_000, 8_000]);
    /// assert!(RampSettings::linear(Duration::from_secs(20), 0).is_none());
    /// ```
    pub const fn linear(over: Duration, stages: u8) -> RampSettings {
        let n = if stages as usize > Ramp::MAX_STAGES {
            Ramp::MAX_STAGES as u8
        } else {
            stages
        };
        if n == 0 {
            return RampSettings::NONE;
        }
        let mut shares = [0u16; Ramp::MAX_STAGES];
        let mut i = 0;
        while i < n as usize {
            // As the core's `Ramp::linear`.
            shares[i] = ((i as u32 + 1) * 10_000 / (n as u32 + 1)) as u16;
            i += 1;
        }
        RampSettings {
            step: over.checked_div(n as u32).expect("n > 0"),
            stages: n,
            shares,
        }
    }

    /// Stages of `step` each, admitting the given shares of calls in basis
    /// points (rising, each in `1..=9_999`: checked with the other fields),
    /// at most [`MAX_STAGES`](Self::MAX_STAGES) of them (more are dropped).
    /// No shares is no ramp.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::RampSettings;
    /// let r = RampSettings::stages(Duration::from_millis(500), &[1_000, 5_000]);
    /// assert_eq!((r.share(0), r.share(1), r.share(2)), (Some(1_000), Some(5_000), None));
    /// ```
    pub const fn stages(step: Duration, basis_points: &[u16]) -> RampSettings {
        let mut shares = [0u16; Ramp::MAX_STAGES];
        let mut i = 0;
        while i < basis_points.len() && i < Ramp::MAX_STAGES {
            shares[i] = basis_points[i];
            i += 1;
        }
        if i == 0 {
            return RampSettings::NONE;
        }
        RampSettings {
            step,
            stages: i as u8,
            shares,
        }
    }

    /// Whether this is no ramp ([`NONE`](Self::NONE)).
    pub const fn is_none(&self) -> bool {
        self.stages == 0
    }

    /// The length of a stage (zero for no ramp).
    pub const fn step(&self) -> Duration {
        self.step
    }

    /// The number of stages (0: no ramp).
    pub const fn stages_count(&self) -> usize {
        self.stages as usize
    }

    /// The share stage `i` admits, in basis points, or `None` past the
    /// last stage.
    pub const fn share(&self, i: usize) -> Option<u16> {
        if i < self.stages as usize {
            Some(self.shares[i])
        } else {
            None
        }
    }

    /// The shares of the stages, in basis points.
    pub const fn shares(&self) -> &[u16] {
        self.shares.split_at(self.stages as usize).0
    }

    /// The core's [`Ramp`] in `C`'s ticks, unchecked: each stage lasts
    /// `ceil(step / tick) + 1` ticks ([`duration_to_ticks`]), at most
    /// 2^60 (far past any ramp a word holds, so still refused).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::{MillisClock, RampSettings};
    /// let ramp = RampSettings::progressive(Duration::from_secs(1)).to_ramp::<MillisClock>();
    /// assert_eq!((ramp.step(), ramp.stages_count()), (1_001, 6));
    /// ```
    pub const fn to_ramp<C: RealClock>(&self) -> Ramp {
        if self.is_none() {
            return Ramp::NONE;
        }
        let ticks = duration_to_ticks(self.step, C::TICK);
        Ramp::stages(
            if ticks > LONGEST_STEP {
                LONGEST_STEP
            } else {
                ticks
            },
            self.shares(),
        )
    }
}

/// The most ticks [`RampSettings::to_ramp`] gives a stage: the core's
/// bound on every other duration, and small enough that its check's
/// arithmetic on a stage cannot overflow.
const LONGEST_STEP: u64 = 1 << 60;

impl Settings {
    /// Admit `n` probes in half-open instead of one (1 by default; 1..=15
    /// with [`W64`](tripword::W64), 1..=3 with [`W32`](tripword::W32)):
    /// the breaker closes once [`probes_to_close`](method@Settings::probes_to_close)
    /// of them succeed (all `n` unless set; as the core's
    /// [`Config::probes`], this unsets it) and opens again, with backoff,
    /// once more fail than that allows. A probe that ends `Ignored` frees
    /// its place; probes that have not all reported within the
    /// [`probe_timeout`](method@Settings::probe_timeout) of the first are
    /// given up.
    ///
    /// ```
    /// use tripword_std::Settings;
    /// let s = Settings::new().probes_to_close(2).probes(5);
    /// assert_eq!((s.probes, s.probes_to_close), (5, None));
    /// ```
    pub const fn probes(mut self, n: u8) -> Self {
        self.probes = n;
        self.probes_to_close = None;
        self
    }

    /// How many of the [`probes`](method@Settings::probes) must succeed to
    /// close, `1..=probes`: the breaker opens again at the `probes - k +
    /// 1`-th failure. resilience4j, which opens when the failures reach
    /// `failureRateThreshold` of its permitted calls in half-open, is
    /// `k = n - ⌈n · rate⌉ + 1` (10 probes at 50 %: 6).
    ///
    /// ```
    /// use tripword::{Field, W64};
    /// use tripword_std::{MonotonicClock, Settings};
    /// let s = Settings::new().probes(5).probes_to_close(3);
    /// assert_eq!(s.config::<MonotonicClock, W64>()?.probes_to_close(), 3);
    /// let err = s.probes_to_close(0).config::<MonotonicClock, W64>().unwrap_err();
    /// assert_eq!(err.field(), Field::ProbesToClose);
    /// assert_eq!(err.to_string(), "probes_to_close = 0 is out of range 1..=5");
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    pub const fn probes_to_close(mut self, k: u8) -> Self {
        self.probes_to_close = Some(k);
        self
    }

    /// A progressive ramp after the probes succeed ([`RampSettings`]);
    /// [`RampSettings::NONE`] (the default) for none. A failure-rate
    /// breaker ([`build_rate`](Settings::build_rate)) carries it too, and
    /// reopens on the ramp's first failure.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::{Field, W32};
    /// use tripword_std::{MillisClock, RampSettings, Settings};
    /// let s = Settings::new().ramp(RampSettings::progressive(Duration::from_secs(1)));
    /// assert_eq!(s.config::<MillisClock, W32>()?.ramp().stages_count(), 6);
    ///
    /// // The whole ramp must fit half the word's time ring.
    /// let err = s.ramp(RampSettings::progressive(Duration::from_secs(3600)))
    ///     .config::<MillisClock, W32>().unwrap_err();
    /// assert_eq!(err.field(), Field::Ramp);
    /// assert_eq!(err.given(), Some(Duration::from_secs(3600)));
    /// assert!(err.to_string().starts_with("ramp.step = 3600s is out of range 1ns..="));
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    pub const fn ramp(mut self, ramp: RampSettings) -> Self {
        self.ramp = ramp;
        self
    }

    /// `config` with the recovery options in `C`'s ticks.
    pub(super) const fn recovery_config<C: RealClock>(&self, config: Config) -> Config {
        let mut config = config.probes(self.probes);
        if let Some(k) = self.probes_to_close {
            // The core reads 0 as "all of them"; here 0 is refused, so it
            // converts to a count past any number of probes the word holds
            // (15 at most, checked first).
            config = config.probes_to_close(if k == 0 { u8::MAX } else { k });
        }
        config.ramp(self.ramp.to_ramp::<C>())
    }

    /// The core's `error` on clock `C` and word `W` with the value given
    /// where the conversion changed it (a `probes_to_close` of 0, a stage
    /// past [`LONGEST_STEP`]); for a stage's length the core's error already
    /// names the longest step its check accepts.
    pub(super) fn recovery_error<C: RealClock>(&self, mut error: ConfigError) -> ConfigError {
        match error.field {
            Field::ProbesToClose if self.probes_to_close == Some(0) => error.value = 0,
            Field::Ramp => {
                error.value = duration_to_ticks(self.ramp.step, C::TICK);
            }
            _ => {}
        }
        error
    }
}

/// Whether `n` is 1 (the default number of probes, not written).
#[cfg(feature = "serde")]
pub(super) fn is_one(n: &u8) -> bool {
    *n == 1
}

/// A ramp as a config file writes it: the stage's length, the shares.
#[cfg(feature = "serde")]
mod serde_repr {
    use std::time::Duration;

    use serde::{Deserialize, Serialize};

    use super::RampSettings;

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub(super) struct Repr {
        #[serde(with = "humantime_serde")]
        step: Duration,
        shares: Vec<u16>,
    }

    impl TryFrom<Repr> for RampSettings {
        type Error = String;

        fn try_from(repr: Repr) -> Result<Self, String> {
            if repr.shares.len() > RampSettings::MAX_STAGES {
                return Err(format!(
                    "a ramp has at most {} stages, not {}",
                    RampSettings::MAX_STAGES,
                    repr.shares.len()
                ));
            }
            Ok(RampSettings::stages(repr.step, &repr.shares))
        }
    }

    impl From<RampSettings> for Repr {
        fn from(ramp: RampSettings) -> Repr {
            Repr {
                step: ramp.step,
                shares: ramp.shares().to_vec(),
            }
        }
    }
}
