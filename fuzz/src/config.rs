//! Config validation with any field values, and accepted configs at work.
//!
//! For any values: `Config::check::<W>()` never panics and accepts exactly
//! the configs inside the ranges of `docs/spec.md` ("Time"): a threshold the
//! failure field holds; an open time and probe timeout of 1 to 2^60 ticks; a
//! backoff cap from `open_for` to `open_for` doubled once per trip the word
//! counts after the first; a longest duration whose units fit half the time
//! field at the largest shift; and a time shift the spec's rule finds for
//! the horizon plus the longest duration. A rejection names the first field
//! out of range (in the order threshold, open time, probe timeout, backoff
//! cap, the longest of the three, horizon) with its value and exact range
//! (its bounds accepted, one past them refused), and its message says so;
//! an accepted
//! config keeps every value given, the width's default horizon when none
//! was, and the spec's time shift (the reference model checks that). A
//! breaker built from it starts in the initial state. For every config a
//! width accepts: the open duration after any number of trips equals the
//! reference model's and stays within `open_for..=cap`; and the operation
//! list runs on that width's breaker against the model (the `differential`
//! checks: the stored word is valid and agrees with the model after every
//! operation), with clock moves measured in the config's own durations so
//! the edges (1 tick, the maximum, ±1 around each) are hit.

use arbitrary::Arbitrary;
use tripword::clock::ManualClock;
use tripword::word::{Snapshot, W32, W64, Word};
use tripword::{Breaker, Config, ConfigError, Field, Outcome, ValidConfig};
use tripword_verification::model::ModelConfig;

use crate::differential::{self, Op};
use crate::input::{DURATION_LIMIT, Out, largest_horizon, longest_duration, reachable_cap};

/// One fuzz input.
#[derive(Arbitrary, Clone, Debug, PartialEq, Eq)]
pub struct ConfigCase {
    /// `failure_threshold`.
    pub threshold: Edge32,
    /// `open_for`.
    pub open_for: Edge64,
    /// The backoff cap; `None`: fixed open time.
    pub backoff: Option<Edge64>,
    /// `probe_timeout`.
    pub probe_timeout: Edge64,
    /// The horizon; `None`: the width's default.
    pub horizon: Option<Edge64>,
    /// What a dropped permit records.
    pub abandon: Out,
    /// The clock's first reading.
    pub start: u64,
    /// Run on each width that accepts the config.
    pub ops: Vec<Op>,
}

/// A `u32` near an edge of the threshold ranges, or anywhere.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge32 {
    /// The edge.
    pub base: Base32,
    /// Added to it, wrapping.
    pub delta: i8,
}

/// Edges of the threshold ranges.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base32 {
    /// 0 (so 1 with delta 1).
    Zero,
    /// The 32-bit word's largest threshold.
    MaxW32,
    /// The 64-bit word's largest threshold.
    MaxW64,
    /// `u32::MAX`.
    Top,
    /// Anywhere.
    Any(u32),
}

/// A `u64` near an edge of the duration ranges, or anywhere.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge64 {
    /// The edge.
    pub base: Base64,
    /// Added to it, wrapping.
    pub delta: i8,
}

/// Edges of the duration and horizon ranges.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base64 {
    /// 0 (so 1 with delta 1).
    Zero,
    /// The 32-bit word's longest duration in whole ticks (half its time
    /// field: 2^14).
    MaxW32,
    /// The 64-bit word's longest duration in whole ticks (2^33).
    MaxW64,
    /// The 32-bit word's time field range in ticks (2^15).
    FieldW32,
    /// The 64-bit word's time field range in ticks (2^34).
    FieldW64,
    /// `u64::MAX`.
    Top,
    /// Anywhere.
    Any(u64),
    /// The 32-bit word's widest ring (2^32 ticks, at its largest shift).
    RingW32,
    /// Half of it (2^31), about the longest duration that word keeps.
    HalfRingW32,
    /// The longest duration a config may set (2^60).
    Limit,
    /// The 32-bit word's default horizon (3 600 000).
    HorizonW32,
    /// The 64-bit word's default horizon (3 600 000 000).
    HorizonW64,
}

impl Edge32 {
    /// The value.
    pub fn value(self) -> u32 {
        let base = match self.base {
            Base32::Zero => 0,
            Base32::MaxW32 => W32::LAYOUT.max_failures(),
            Base32::MaxW64 => W64::LAYOUT.max_failures(),
            Base32::Top => u32::MAX,
            Base32::Any(v) => v,
        };
        base.wrapping_add_signed(self.delta.into())
    }
}

impl Edge64 {
    /// The value.
    pub fn value(self) -> u64 {
        let base = match self.base {
            Base64::Zero => 0,
            Base64::MaxW32 => W32::LAYOUT.max_units(),
            Base64::MaxW64 => W64::LAYOUT.max_units(),
            Base64::FieldW32 => 1 << W32::LAYOUT.time_bits,
            Base64::FieldW64 => 1 << W64::LAYOUT.time_bits,
            Base64::Top => u64::MAX,
            Base64::Any(v) => v,
            Base64::RingW32 => 1 << W32::LAYOUT.word_bits,
            Base64::HalfRingW32 => 1 << (W32::LAYOUT.word_bits - 1),
            Base64::Limit => DURATION_LIMIT,
            Base64::HorizonW32 => W32::LAYOUT.default_horizon(),
            Base64::HorizonW64 => W64::LAYOUT.default_horizon(),
        };
        base.wrapping_add_signed(self.delta.into())
    }
}

/// The values of a config, as given (a [`Config`] has no getters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Values {
    /// `failure_threshold`.
    pub threshold: u32,
    /// `open_for`.
    pub open_for: u64,
    /// The backoff cap.
    pub cap: Option<u64>,
    /// `probe_timeout`.
    pub probe_timeout: u64,
    /// The horizon, if set.
    pub horizon: Option<u64>,
    /// The abandon outcome.
    pub abandon: Outcome,
}

impl Values {
    /// The config these values make.
    pub fn config(&self) -> Config {
        let mut config = Config::new()
            .failure_threshold(self.threshold)
            .open_for(self.open_for)
            .probe_timeout(self.probe_timeout)
            .abandon_as(self.abandon);
        config = match self.cap {
            Some(cap) => config.exponential_backoff(cap),
            None => config.fixed_open_time(),
        };
        match self.horizon {
            Some(h) => config.horizon(h),
            None => config,
        }
    }

    /// The longest duration set.
    fn longest(&self) -> u64 {
        self.open_for
            .max(self.probe_timeout)
            .max(self.cap.unwrap_or(0))
    }

    /// The horizon the width uses.
    fn horizon_for<W: Word>(&self) -> u64 {
        self.horizon.unwrap_or(W::LAYOUT.default_horizon())
    }
}

impl ConfigCase {
    /// The values the case describes (not validated).
    pub fn values(&self) -> Values {
        Values {
            threshold: self.threshold.value(),
            open_for: self.open_for.value(),
            cap: self.backoff.map(Edge64::value),
            probe_timeout: self.probe_timeout.value(),
            horizon: self.horizon.map(Edge64::value),
            abandon: self.abandon.into(),
        }
    }

    /// Runs the checks; panics on a violation.
    pub fn run(&self) {
        let values = self.values();
        let wide = check_validation::<W64>(&values).ok();
        let narrow = check_validation::<W32>(&values).ok();
        if wide.is_some() || narrow.is_some() {
            differential::run(self.start, wide, narrow, &self.ops);
        }
    }
}

/// The first field of `values` out of `W`'s ranges, as the error should name
/// it, written from `docs/spec.md`: `Err` with the error, or `Ok` with the
/// time shift the spec's rule derives.
fn expected<W: Word>(v: &Values) -> Result<u32, ConfigError> {
    let layout = W::LAYOUT;
    let error = |field, value, min, max| {
        Err(ConfigError {
            field,
            value,
            min,
            max,
        })
    };
    let threshold = u64::from(v.threshold);
    let max_threshold = u64::from(layout.max_failures());
    if !(1..=max_threshold).contains(&threshold) {
        return error(Field::FailureThreshold, threshold, 1, max_threshold);
    }
    if !(1..=DURATION_LIMIT).contains(&v.open_for) {
        return error(Field::OpenFor, v.open_for, 1, DURATION_LIMIT);
    }
    if !(1..=DURATION_LIMIT).contains(&v.probe_timeout) {
        return error(Field::ProbeTimeout, v.probe_timeout, 1, DURATION_LIMIT);
    }
    if let Some(cap) = v.cap {
        let reachable = reachable_cap::<W>(v.open_for);
        if !(v.open_for..=reachable).contains(&cap) {
            return error(Field::BackoffCap, cap, v.open_for, reachable);
        }
    }
    // The longest duration (the first field to hold it) must fit at some
    // shift whatever the horizon.
    let longest = longest_duration::<W>();
    let (field, min) = match v.cap {
        Some(cap) if cap > v.open_for.max(v.probe_timeout) => (Field::BackoffCap, v.open_for),
        _ if v.probe_timeout > v.open_for => (Field::ProbeTimeout, 1),
        _ => (Field::OpenFor, 1),
    };
    if v.longest() > longest {
        return error(field, v.longest(), min, longest);
    }
    let horizon = v.horizon_for::<W>();
    match ModelConfig::derive_shift(&layout, horizon, v.longest()) {
        Some(shift) => Ok(shift),
        None => {
            let most = largest_horizon::<W>(v.longest()).expect("the longest duration fits");
            error(Field::Horizon, horizon, 0, most)
        }
    }
}

/// Checks `values` for `W` and the answer; returns the validated config or
/// the error.
pub fn check_validation<W: Word>(v: &Values) -> Result<ValidConfig<W>, ConfigError> {
    let config = v.config();
    let layout = W::LAYOUT;
    let ctx = format!("W{} {v:?}", layout.word_bits);
    let got = config.check::<W>();
    match (&got, expected::<W>(v)) {
        (Ok(valid), Ok(shift)) => {
            assert_eq!(valid.config(), &config, "{ctx}: keeps another config");
            assert_eq!(
                (
                    valid.failure_threshold(),
                    valid.open_for(),
                    valid.backoff_cap(),
                    valid.probe_timeout(),
                    valid.horizon(),
                    valid.abandon(),
                    valid.time_shift(),
                ),
                (
                    v.threshold,
                    v.open_for,
                    v.cap,
                    v.probe_timeout,
                    v.horizon_for::<W>(),
                    v.abandon,
                    shift,
                ),
                "{ctx}: getters"
            );
        }
        (Err(e), Err(want)) => {
            assert_eq!(*e, want, "{ctx}: out of range");
            if e.field == Field::Horizon {
                // The range is exact: its end accepted, one more refused.
                let at = Values {
                    horizon: Some(e.max),
                    ..*v
                };
                assert!(
                    at.config().check::<W>().is_ok(),
                    "{ctx}: {e:?}: its max is refused"
                );
                let over = Values {
                    horizon: Some(e.max + 1),
                    ..*v
                };
                assert!(
                    over.config().check::<W>().is_err(),
                    "{ctx}: {e:?}: max + 1 is accepted"
                );
            }
        }
        (got, want) => panic!("{ctx}: check {got:?}, expected {want:?}"),
    }
    if let Err(e) = got {
        let text = e.to_string();
        assert!(
            text.starts_with(e.field.name()) && text.contains(&e.value.to_string()),
            "{ctx}: message {text:?}"
        );
        assert!(!e.message().is_empty(), "{ctx}");
        return Err(e);
    }
    let valid = got.expect("checked above");

    let clock = ManualClock::new(0);
    let b = Breaker::<_, W, ()>::from_parts(valid, &clock, ());
    assert_eq!(
        b.config(),
        &valid,
        "{ctx}: the breaker keeps another config"
    );
    assert_eq!(b.snapshot(), Ok(Snapshot::INITIAL), "{ctx}: initial word");

    // The reference model derives the same shift (it asserts so).
    let model = ModelConfig::for_width::<W>(&valid);
    let cap = v.cap.unwrap_or(v.open_for);
    let max_trips = layout.max_trips();
    for trips in (0..=max_trips + 1).chain([u32::MAX]) {
        let open = valid.open_duration(trips);
        assert_eq!(
            open,
            model.open_duration(trips.into()),
            "{ctx}: open duration after {trips} trips"
        );
        assert!(
            (v.open_for..=cap).contains(&open),
            "{ctx}: open duration {open} after {trips} trips is outside open_for..=cap"
        );
    }
    Ok(valid)
}
