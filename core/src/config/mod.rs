//! Breaker configuration: the failure policy, the open duration (fixed or
//! exponential backoff), the probe timeout, the time horizon and the abandon
//! policy.
//!
//! [`Config`] is a width-agnostic builder with `const` setters. A breaker and
//! the pure layer take only a [`ValidConfig<W>`]: a config checked once
//! against the ranges of word width `W`, with the word's time resolution
//! derived from it (`docs/spec.md`, "Time"). [`Config::check`] returns the
//! error that names the field and its range; [`ValidConfig::new`] panics with
//! it, which in a `const` or `static` is a compile error.
//!
//! Every duration is in the clock's ticks.
//!
//! ```
//! use tripword::{Config, Field, ValidConfig, W32, W64};
//!
//! let config = Config::new()
//!     .failure_threshold(3)
//!     .open_for(100)
//!     .exponential_backoff(1_600)
//!     .probe_timeout(50);
//! let valid = config.check::<W64>().expect("in range");
//! assert_eq!(valid.open_duration(3), 400);
//!
//! // A backoff cap the trip count can never reach is refused.
//! let err = Config::new().open_for(1).exponential_backoff(1 << 20).check::<W32>().unwrap_err();
//! assert_eq!(err.field, Field::BackoffCap);
//! assert_eq!(err.to_string(), "exponential_backoff cap = 1048576 is out of range 1..=16384 ticks");
//!
//! // The const form: an out-of-range config does not build.
//! static CONFIG: ValidConfig<W32> = ValidConfig::new(Config::new().open_for(500));
//! assert_eq!(CONFIG.time_shift(), 7); // 128-tick units: an hour of 1 kHz ticks fits
//! ```

use crate::outcome::Outcome;
use crate::word::{Layout, W64, Word};
use core::marker::PhantomData;

/// How a breaker decides and times its transitions: a builder with `const`
/// setters, checked for a word width by [`Config::check`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    failure_threshold: u32,
    open_for: u64,
    backoff_cap: Option<u64>,
    probe_timeout: u64,
    horizon: Option<u64>,
    abandon: Outcome,
    #[cfg(feature = "jitter")]
    jitter: Jitter,
    #[cfg(feature = "recovery")]
    probes: u8,
    // 0: all the probes.
    #[cfg(feature = "recovery")]
    to_close: u8,
    #[cfg(feature = "recovery")]
    ramp: Ramp,
}

/// Jitter on the open time after a trip (`docs/spec.md`, "Jitter"), so that
/// replicas that trip together do not probe together. The core has no random
/// number generator: the jitter of each open time is a fixed function of the
/// breaker's `seed` and of the word the trip stored (its counter and trip
/// count), so it is deterministic in tests, the same for every thread of one
/// breaker, and different across replicas given different seeds (for
/// example, `tripword-std`'s `jitter_seed()`).
///
/// With the open time `d` units (after backoff), and `f` in `[0, 1)` the
/// fraction `mix(seed, counter, trips) / 2^16` (see [`Jitter::fraction`]):
///
/// - [`Equal`](Jitter::Equal): `d - floor(floor(d / 2) * f)`, in `(d/2, d]`;
/// - [`Full`](Jitter::Full): `d - floor(d * f)`, in `(0, d]` (at least one
///   unit when `d` is).
///
/// Jitter only shortens an open time, never lengthens it: the configured
/// open time stays the longest a trip rejects for (plus the rounding of
/// units). An `OpenUntil` time (`failure_for`, `force_open_for`) is never
/// jittered: it is what the caller asked for.
///
/// ```
/// use tripword::{Config, Jitter, W64};
///
/// let a = Config::new().open_for(1_000).jitter(Jitter::Equal { seed: 1 }).check::<W64>()?;
/// let b = Config::new().open_for(1_000).jitter(Jitter::Equal { seed: 2 }).check::<W64>()?;
/// // The first trip stores counter 1 and trip count 1.
/// let (da, db) = (a.jittered_open_duration(1, 1), b.jittered_open_duration(1, 1));
/// assert!((501..=1_000).contains(&da) && (501..=1_000).contains(&db));
/// assert_ne!(da, db); // replicas with different seeds reopen apart
/// # Ok::<(), tripword::ConfigError>(())
/// ```
///
/// Behind the feature `jitter`, so that a firmware that does not jitter does
/// not link the draw (68 B on `thumbv7em` with a config in a `static`, 60 B
/// with a const one;
/// `docs/embedded.md`, "Footprint").
#[cfg(feature = "jitter")]
#[cfg_attr(docsrs, doc(cfg(feature = "jitter")))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Jitter {
    /// The open time as configured (the default).
    #[default]
    None,
    /// Equal jitter: between half the open time and all of it.
    Equal {
        /// This breaker's seed: give each replica its own.
        seed: u32,
    },
    /// Full jitter: between one unit and the whole open time.
    Full {
        /// This breaker's seed: give each replica its own.
        seed: u32,
    },
}

#[cfg(feature = "jitter")]
impl Jitter {
    /// The jitter fraction, in 1/65 536ths, of the open time that begins
    /// with the word whose counter is `counter` and trip count `trips`, on a
    /// word whose trip field is `trips_bits` wide: the high 16 bits of
    /// `mix(seed ^ (counter << trips_bits | trips))`, where `mix` is the
    /// 32-bit finaliser `x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *=
    /// 0x846ca68b; x ^= x >> 16` (a bijection, so for one seed no two
    /// (counter, trips) pairs share an input, and no two seeds do for one
    /// pair).
    #[inline]
    pub const fn fraction(seed: u32, counter: u32, trips: u32, trips_bits: u32) -> u32 {
        let mut x = seed ^ (counter << trips_bits | trips);
        x ^= x >> 16;
        x = x.wrapping_mul(0x7feb_352d);
        x ^= x >> 15;
        x = x.wrapping_mul(0x846c_a68b);
        // The finaliser's last step, `x ^= x >> 16`, changes only the low
        // half, which is dropped here.
        x >> 16
    }
}

impl Default for Config {
    fn default() -> Self {
        Self::new()
    }
}

impl Config {
    /// Defaults: 5 consecutive failures trip; open for 1000 ticks, no backoff;
    /// a probe times out after 1000 ticks; the word width's default horizon;
    /// an abandoned permit is a failure.
    pub const fn new() -> Self {
        Config {
            failure_threshold: 5,
            open_for: 1000,
            backoff_cap: None,
            probe_timeout: 1000,
            horizon: None,
            abandon: Outcome::Failure,
            #[cfg(feature = "jitter")]
            jitter: Jitter::None,
            #[cfg(feature = "recovery")]
            probes: 1,
            #[cfg(feature = "recovery")]
            to_close: 0,
            #[cfg(feature = "recovery")]
            ramp: Ramp::NONE,
        }
    }

    /// Jitter the open time after each trip ([`Jitter`]): replicas that trip
    /// together then probe apart. None by default. Feature `jitter`.
    #[cfg(feature = "jitter")]
    #[cfg_attr(docsrs, doc(cfg(feature = "jitter")))]
    pub const fn jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
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
    /// `cap` ticks; the trip count resets when the breaker closes. The cap
    /// must be reachable: at most `open_for * 2^(max_trips - 1)`, where the
    /// trip count saturates (31 trips for `W64`, 15 for `W32`).
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

    /// The longest gap, in ticks, between the end of an open time (or probe
    /// timeout) and the next call that the breaker still measures exactly.
    ///
    /// The word keeps timestamps in a narrow field, in units of `2^s` ticks;
    /// validation picks the smallest `s` for which the field's ring covers
    /// the horizon plus the longest duration ([`ValidConfig::time_shift`]).
    /// A larger horizon costs resolution: durations then last up to
    /// `3 * 2^s` ticks longer than set. Callers further apart than the
    /// horizon may be rejected once more per multiple of the ring
    /// (`docs/spec.md`, "Time"). Defaults: 3 600 000 ticks for `W32` (an
    /// hour of 1 kHz ticks) and 3 600 000 000 for `W64` (an hour of 1 µs
    /// ticks). `horizon(0)` asks for the finest resolution the durations
    /// allow.
    pub const fn horizon(mut self, ticks: u64) -> Self {
        self.horizon = Some(ticks);
        self
    }

    /// The outcome recorded for a [`Permit`](crate::Permit) dropped without
    /// one (an early return, a panic, a cancelled future). Failure by default;
    /// async cancellation usually wants [`Outcome::Ignored`].
    pub const fn abandon_as(mut self, outcome: Outcome) -> Self {
        self.abandon = outcome;
        self
    }

    /// Checks every field against the ranges of word width `W` and derives
    /// the word's time resolution: the only way to a [`ValidConfig`].
    ///
    /// # Errors
    /// The first field out of range, with the value given and the range
    /// allowed.
    pub const fn check<W: Word>(self) -> Result<ValidConfig<W>, ConfigError> {
        match self.check_layout(&W::LAYOUT) {
            Ok(d) => {
                #[cfg(feature = "recovery")]
                let recovery = match self.check_recovery(&W::LAYOUT, d.shift) {
                    Ok(r) => r,
                    Err(e) => return Err(e),
                };
                Ok(ValidConfig {
                    config: self,
                    #[cfg(target_pointer_width = "64")]
                    closed_limit: closed_limit(&W::LAYOUT, self.failure_threshold),
                    shift: d.shift,
                    open_units: d.open_units,
                    cap_units: d.cap_units,
                    probe_units: d.probe_units,
                    #[cfg(feature = "recovery")]
                    recovery,
                    width: PhantomData,
                })
            }
            Err(e) => Err(e),
        }
    }

    /// The checks of [`check`](Self::check) for a layout.
    const fn check_layout(&self, l: &Layout) -> Result<Derived, ConfigError> {
        if self.failure_threshold < 1 || self.failure_threshold > l.max_failures() {
            return Err(ConfigError {
                field: Field::FailureThreshold,
                value: self.failure_threshold as u64,
                min: 1,
                max: l.max_failures() as u64,
            });
        }
        // Durations must leave room for the unit arithmetic (a ring of at
        // most 2^63 ticks, see `Layout::max_shift`).
        let max = 1u64 << 60;
        if self.open_for < 1 || self.open_for > max {
            return Err(range(Field::OpenFor, self.open_for, 1, max));
        }
        if self.probe_timeout < 1 || self.probe_timeout > max {
            return Err(range(Field::ProbeTimeout, self.probe_timeout, 1, max));
        }
        // The longest duration any shift can hold in half the ring:
        // need(d) <= max_units at the largest shift.
        let top = l.max_shift();
        let longest_allowed = ((l.max_units() - 1) << top) + 1;
        let mut longest = self.open_for;
        let mut longest_field = Field::OpenFor;
        if self.probe_timeout > longest {
            longest = self.probe_timeout;
            longest_field = Field::ProbeTimeout;
        }
        if let Some(cap) = self.backoff_cap {
            // The trip count saturates at max_trips: the longest open time
            // the breaker can reach is open_for * 2^(max_trips - 1).
            let doublings = l.max_trips() - 1;
            let reachable = min_u64(self.open_for.saturating_mul(1 << doublings), max);
            if cap < self.open_for || cap > reachable {
                return Err(range(Field::BackoffCap, cap, self.open_for, reachable));
            }
            if cap > longest {
                longest = cap;
                longest_field = Field::BackoffCap;
            }
        }
        if longest > longest_allowed {
            let min = match longest_field {
                Field::BackoffCap => self.open_for,
                _ => 1,
            };
            return Err(range(longest_field, longest, min, longest_allowed));
        }
        let horizon = match self.horizon {
            Some(h) => h,
            None => l.default_horizon(),
        };
        // The smallest shift whose ring covers horizon + longest duration
        // with four units to spare (the quantisation of both ends and of
        // the deadline), and holds the longest duration in half the ring
        // (so a clock that went backwards reads as elapsed).
        let mut shift = 0;
        while shift <= top {
            let unit = 1u64 << shift;
            let ring = 1u128 << (l.time_bits + shift);
            let needed = horizon as u128 + longest as u128 + 4 * unit as u128;
            if needed <= ring && units(longest, shift) <= l.max_units() {
                return Ok(Derived {
                    shift,
                    open_units: units(self.open_for, shift),
                    cap_units: match self.backoff_cap {
                        Some(cap) => units(cap, shift),
                        None => 0,
                    },
                    probe_units: units(self.probe_timeout, shift),
                });
            }
            shift += 1;
        }
        // The largest horizon: the largest ring, less the longest duration
        // and the four units of rounding.
        let ring = 1u128 << (l.time_bits + top);
        let most = ring - longest as u128 - 4 * (1u128 << top);
        // Exact: the largest ring is at most 2^64 (W64: 34 time bits at
        // shift 30), less at least 1 + 2^32, so `most < u64::MAX`.
        let most = most as u64;
        Err(range(Field::Horizon, horizon, 0, most))
    }
}

const fn range(field: Field, value: u64, min: u64, max: u64) -> ConfigError {
    ConfigError {
        field,
        value,
        min,
        max,
    }
}

/// What validation derives: the time shift and the durations in units.
struct Derived {
    shift: u32,
    open_units: u64,
    cap_units: u64,
    probe_units: u64,
}

/// The closed fast path's bound for `threshold` (see
/// [`ValidConfig::closed_limit`]).
#[cfg(target_pointer_width = "64")]
const fn closed_limit(l: &Layout, threshold: u32) -> u64 {
    (threshold as u64) << (crate::word::TAG_BITS + l.counter_bits)
}

/// The smaller of two values, in a `const fn` (`Ord::min` is not `const`).
/// Its one comparison is where every clamp of this module is decided, so
/// the clamps' boundary (`a == b`, where both arms agree) is one equivalent
/// mutant, excluded once by name, instead of one per clamp.
pub(crate) const fn min_u64(a: u64, b: u64) -> u64 {
    if a < b { a } else { b }
}

/// The units of `2^shift` ticks a duration of `ticks` must see elapse
/// between two clock readings, stored as `now >> shift`, for at least
/// `ticks` ticks to have passed: `ceil((ticks + 2^shift - 1) / 2^shift)`.
/// With `shift` 0 that is `ticks` itself.
pub(crate) const fn units(ticks: u64, shift: u32) -> u64 {
    let unit = 1u64 << shift;
    (ticks + 2 * (unit - 1)) >> shift
}

/// A [`Config`] checked for word width `W`, with the word's time resolution
/// derived from it: what [`Breaker`](crate::Breaker), the pure layer
/// ([`transition::apply`](crate::transition::apply)) and the CAS helper
/// ([`cell::update`](crate::cell::update)) take. Only [`Config::check`] and
/// [`ValidConfig::new`] make one.
///
/// ```
/// use tripword::{Config, ValidConfig, W64};
///
/// let valid: ValidConfig<W64> = Config::new().failure_threshold(3).check()?;
/// assert_eq!(valid.failure_threshold(), 3);
/// assert_eq!(valid.time_shift(), 0); // W64 keeps whole ticks by default
/// # Ok::<(), tripword::ConfigError>(())
/// ```
pub struct ValidConfig<W: Word = W64> {
    config: Config,
    // The closed fast path's bound on the whole word (`Layout::closed_below`),
    // kept so that `acquire` compares the word with it straight from memory;
    // 64-bit targets only (an MCU computes it: 8 bytes of config less).
    #[cfg(target_pointer_width = "64")]
    closed_limit: u64,
    shift: u32,
    open_units: u64,
    // 0 when there is no backoff.
    cap_units: u64,
    probe_units: u64,
    #[cfg(feature = "recovery")]
    recovery: recovery::Recovery,
    width: PhantomData<fn() -> W>,
}

impl<W: Word> Clone for ValidConfig<W> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<W: Word> Copy for ValidConfig<W> {}
impl<W: Word> PartialEq for ValidConfig<W> {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config
    }
}
impl<W: Word> Eq for ValidConfig<W> {}
impl<W: Word> core::fmt::Debug for ValidConfig<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ValidConfig")
            .field("config", &self.config)
            .field("time_shift", &self.shift)
            .finish()
    }
}

impl<W: Word> ValidConfig<W> {
    /// `config` checked for `W`.
    ///
    /// # Panics
    /// If a field is out of range (see [`Config::check`]); in a `const` or
    /// `static` that is a compile error:
    ///
    /// ```compile_fail
    /// use tripword::{Config, ValidConfig, W32};
    /// // 4096 failures do not fit the 32-bit word's 12-bit count.
    /// static C: ValidConfig<W32> = ValidConfig::new(Config::new().failure_threshold(4096));
    /// ```
    pub const fn new(config: Config) -> Self {
        match config.check::<W>() {
            Ok(valid) => valid,
            Err(e) => panic!("{}", e.message()),
        }
    }

    /// The same config with a failure threshold of 1: what the failure-rate
    /// policy's breaker runs on (its window decides; every failure it passes
    /// on trips).
    pub(crate) const fn with_threshold_one(mut self) -> Self {
        self.config.failure_threshold = 1;
        #[cfg(target_pointer_width = "64")]
        {
            self.closed_limit = closed_limit(&W::LAYOUT, 1);
        }
        // The ramp's failures reopen at the threshold too.
        #[cfg(feature = "recovery")]
        {
            self.recovery.ramp_failures = 1;
        }
        self
    }

    /// A `Closed` word counting fewer failures than the threshold is below
    /// this, and no other word is, once its tag is known to be `Closed`:
    /// `threshold << (tag and counter bits)` (`Layout::closed_below`).
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    pub(crate) const fn closed_limit(&self) -> u64 {
        self.closed_limit
    }

    /// The config as given.
    pub const fn config(&self) -> &Config {
        &self.config
    }
    /// Consecutive failures that trip the breaker.
    #[inline(always)]
    pub const fn failure_threshold(&self) -> u32 {
        self.config.failure_threshold
    }
    /// The (base) open time in ticks.
    pub const fn open_for(&self) -> u64 {
        self.config.open_for
    }
    /// The backoff cap in ticks, if backoff is on.
    pub const fn backoff_cap(&self) -> Option<u64> {
        self.config.backoff_cap
    }
    /// The probe timeout in ticks.
    pub const fn probe_timeout(&self) -> u64 {
        self.config.probe_timeout
    }
    /// The horizon in ticks (the width's default if none was set).
    pub const fn horizon(&self) -> u64 {
        match self.config.horizon {
            Some(h) => h,
            None => W::LAYOUT.default_horizon(),
        }
    }
    /// The outcome recorded for abandoned permits.
    #[inline(always)]
    pub const fn abandon(&self) -> Outcome {
        self.config.abandon
    }
    /// The word keeps time in units of `2^time_shift()` ticks.
    #[inline(always)]
    pub const fn time_shift(&self) -> u32 {
        self.shift
    }
    /// The ring of the word's time field, in ticks: `2^(time_bits + shift)`.
    /// Callers spaced by less than the ring minus the open time see the
    /// deadline exactly. `u64::MAX` when the ring is the whole clock
    /// (`2^64`: `W64` at the largest shift), where nothing aliases.
    pub const fn ring(&self) -> u64 {
        let bits = W::LAYOUT.time_bits + self.shift;
        if bits >= 64 { u64::MAX } else { 1u64 << bits }
    }

    /// How long the breaker stays open after its `trips`-th consecutive trip
    /// (`trips >= 1`; 0 reads as 1), in ticks: `open_for`, or with backoff
    /// `min(open_for * 2^(k-1), cap)` where `k` is `trips` saturated at the
    /// word's largest trip count, as the word stores it. The breaker rejects
    /// for at least this long and, where [`time_shift`](Self::time_shift) is
    /// `s > 0`, less than `3 * 2^s` ticks longer without backoff; with
    /// backoff the open time is doubled in units, rounding included, so
    /// after `k` trips it is less than `3 * 2^(s + k - 1)` ticks longer (and
    /// never more than the cap's own rounding once the cap is reached).
    pub const fn open_duration(&self, trips: u32) -> u64 {
        let max = W::LAYOUT.max_trips();
        let trips = min_u64(trips as u64, max as u64) as u32;
        match self.config.backoff_cap {
            None => self.config.open_for,
            Some(cap) => {
                let doublings = trips.saturating_sub(1);
                if self.config.open_for > (cap >> doublings) {
                    cap
                } else {
                    self.config.open_for << doublings
                }
            }
        }
    }

    /// The jitter on the open time.
    #[cfg(feature = "jitter")]
    #[cfg_attr(docsrs, doc(cfg(feature = "jitter")))]
    #[inline(always)]
    pub const fn jitter(&self) -> Jitter {
        self.config.jitter
    }

    #[cfg(feature = "jitter")]
    #[cfg_attr(docsrs, doc(cfg(feature = "jitter")))]
    /// How long the breaker stays open after the trip that stored counter
    /// `counter` (the counter of the `Open` state, what
    /// [`Transition::counter`](crate::Transition) reports for the trip) and
    /// trip count `trips`, with the [`jitter`](Self::jitter) applied, in
    /// ticks: the units the word waits, times `2^s`. Without jitter this is
    /// [`open_duration`](Self::open_duration) in whole units.
    pub const fn jittered_open_duration(&self, counter: u32, trips: u32) -> u64 {
        let l = &W::LAYOUT;
        let max = l.max_trips();
        let trips = if trips > max {
            max
        } else if trips == 0 {
            1
        } else {
            trips
        };
        let open = self.open_units;
        let need = if self.cap_units == 0 {
            open
        } else {
            let doubled = open << (trips - 1);
            if self.cap_units < doubled {
                self.cap_units
            } else {
                doubled
            }
        };
        self.jitter_units(need, counter & l.max_counter(), trips) << self.shift
    }

    /// `need` units of an `Open` word with counter `counter` and trip count
    /// `trips`, jittered (`docs/spec.md`, "Jitter"). `need` is the 32-bit
    /// word's (below `2^15`) or the 64-bit word's (below `2^34`): the
    /// product with the 16-bit draw fits `u64` either way, and the 32-bit
    /// caller's result fits `u32`.
    #[inline(always)]
    pub(crate) const fn jitter_units(&self, need: u64, counter: u32, trips: u32) -> u64 {
        #[cfg(feature = "jitter")]
        {
            let (seed, span) = match self.config.jitter {
                Jitter::None => return need,
                Jitter::Equal { seed } => (seed, need >> 1),
                Jitter::Full { seed } => (seed, need),
            };
            let f = Jitter::fraction(seed, counter, trips, W::LAYOUT.trips_bits);
            need - ((span * f as u64) >> 16)
        }
        #[cfg(not(feature = "jitter"))]
        {
            let _ = (counter, trips);
            need
        }
    }

    /// [`jitter_units`](Self::jitter_units) in 32 bits, for the 32-bit
    /// word's time arithmetic (`need < 2^15`, so `need * f < 2^31`).
    #[inline(always)]
    pub(crate) const fn jitter_units32(&self, need: u32, counter: u32, trips: u32) -> u32 {
        #[cfg(feature = "jitter")]
        {
            let (seed, span) = match self.config.jitter {
                Jitter::None => return need,
                Jitter::Equal { seed } => (seed, need >> 1),
                Jitter::Full { seed } => (seed, need),
            };
            let f = Jitter::fraction(seed, counter, trips, W::LAYOUT.trips_bits);
            need - ((span * f) >> 16)
        }
        #[cfg(not(feature = "jitter"))]
        {
            let _ = (counter, trips);
            need
        }
    }

    /// A time given at run time (`failure_for`, `force_open_for`) in units,
    /// clamped to half the ring: the longest wait the word can hold with a
    /// backwards clock still bounded (`docs/design-word.md`, "Open until").
    #[inline]
    pub(crate) const fn hint_units(&self, ticks: u64) -> u64 {
        let max = W::LAYOUT.max_units();
        if ticks >= max << self.shift {
            max
        } else {
            min_u64(units(ticks, self.shift), max)
        }
    }

    /// The longest open time `failure_for` and `force_open_for` can set, in
    /// ticks: half the ring (longer ones are clamped to it). `W32` at 1 kHz
    /// with the default horizon: 2^21 ticks, 35 minutes; `W64` at 1 µs:
    /// 2^33 ticks, 2.4 hours.
    pub const fn longest_hint(&self) -> u64 {
        W::LAYOUT.max_units() << self.shift
    }

    /// The open time in units, without backoff.
    #[inline(always)]
    pub(crate) const fn open_units(&self) -> u64 {
        self.open_units
    }
    /// The backoff cap in units; 0 when there is no backoff.
    #[inline(always)]
    pub(crate) const fn cap_units(&self) -> u64 {
        self.cap_units
    }
    /// The probe timeout in units.
    #[inline(always)]
    pub(crate) const fn probe_units(&self) -> u64 {
        self.probe_units
    }
}

mod sealed {
    pub trait Sealed {}
}

mod error;
mod recovery;
mod source;
#[cfg(test)]
mod tests;

pub use error::{ConfigError, Field};
#[cfg(feature = "recovery")]
pub use recovery::Ramp;
pub(crate) use recovery::{ramp_extra, trial_extra};
pub use source::*;
