//! Config validation with any field values, and accepted configs at work.
//!
//! For any values: `Config::validate::<W>()`, `validate_layout` and
//! `Breaker::try_from_parts` never panic, agree with each other, and accept
//! exactly the configs inside the ranges of `docs/design.md`; a rejection
//! names the first field out of range (in the order threshold, open time,
//! backoff cap, probe timeout) with its value and range, and its message
//! says so. For every config a width accepts: the open duration after any
//! number of trips equals the reference model's, stays within
//! `open_for..=cap`; and the operation list runs on that width's breaker
//! against the model (the `differential` checks: the stored word is valid and
//! agrees with the model after every operation), with clock moves measured
//! in the config's own durations so the edges (1 tick, the maximum, ±1
//! around each) are hit.

use arbitrary::Arbitrary;
use tripword::clock::ManualClock;
use tripword::word::{Snapshot, W32, W64, Word};
use tripword::{Breaker, Config, ConfigError, Field};
use tripword_verification::model::ModelConfig;

use crate::differential::{self, Op};
use crate::input::Out;

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

/// Edges of the duration ranges.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base64 {
    /// 0 (so 1 with delta 1).
    Zero,
    /// The 32-bit word's longest duration.
    MaxW32,
    /// The 64-bit word's longest duration.
    MaxW64,
    /// The 32-bit word's time field range.
    FieldW32,
    /// The 64-bit word's time field range.
    FieldW64,
    /// `u64::MAX`.
    Top,
    /// Anywhere.
    Any(u64),
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
            Base64::MaxW32 => W32::LAYOUT.max_duration(),
            Base64::MaxW64 => W64::LAYOUT.max_duration(),
            Base64::FieldW32 => 1 << W32::LAYOUT.time_bits,
            Base64::FieldW64 => 1 << W64::LAYOUT.time_bits,
            Base64::Top => u64::MAX,
            Base64::Any(v) => v,
        };
        base.wrapping_add_signed(self.delta.into())
    }
}

impl ConfigCase {
    /// The config the case describes (not validated).
    pub fn config(&self) -> Config {
        let config = Config::new()
            .failure_threshold(self.threshold.value())
            .open_for(self.open_for.value())
            .probe_timeout(self.probe_timeout.value())
            .abandon_as(self.abandon.into());
        match self.backoff {
            Some(cap) => config.exponential_backoff(cap.value()),
            None => config.fixed_open_time(),
        }
    }

    /// Runs the checks; panics on a violation.
    pub fn run(&self) {
        let config = self.config();
        let wide = check_validation::<W64>(&config).ok();
        let narrow = check_validation::<W32>(&config).ok();
        if wide.is_some() || narrow.is_some() {
            differential::run(self.start, wide, narrow, &self.ops);
        }
    }
}

/// The first field of `config` out of `W`'s ranges, as the error should name
/// it, written from `docs/design.md`'s range table.
fn expected_error<W: Word>(config: &Config) -> Option<ConfigError> {
    let layout = W::LAYOUT;
    let max = layout.max_duration();
    let error = |field, value, min, max| {
        Some(ConfigError {
            field,
            value,
            min,
            max,
        })
    };
    let threshold = u64::from(config.get_failure_threshold());
    let max_threshold = u64::from(layout.max_failures());
    let open_for = config.get_open_for();
    let probe = config.get_probe_timeout();
    if !(1..=max_threshold).contains(&threshold) {
        return error(Field::FailureThreshold, threshold, 1, max_threshold);
    }
    if !(1..=max).contains(&open_for) {
        return error(Field::OpenFor, open_for, 1, max);
    }
    if let Some(cap) = config.get_backoff_cap()
        && !(open_for..=max).contains(&cap)
    {
        return error(Field::BackoffCap, cap, open_for, max);
    }
    if !(1..=max).contains(&probe) {
        return error(Field::ProbeTimeout, probe, 1, max);
    }
    None
}

/// Validates `config` for `W` every way there is and checks the answers;
/// returns the validated config or the error.
pub fn check_validation<W: Word>(config: &Config) -> Result<Config, ConfigError> {
    let ctx = format!("W{} {config:?}", W::LAYOUT.word_bits);
    let got = config.validate::<W>();
    assert_eq!(
        got,
        config.validate_layout(&W::LAYOUT),
        "{ctx}: validate_layout"
    );
    match expected_error::<W>(config) {
        None => assert_eq!(got, Ok(*config), "{ctx}: in range, yet rejected"),
        Some(want) => assert_eq!(got, Err(want), "{ctx}: out of range"),
    }
    if let Err(e) = got {
        let text = e.to_string();
        assert!(
            text.starts_with(e.field.name()) && text.contains(&e.value.to_string()),
            "{ctx}: message {text:?}"
        );
        assert!(!e.message().is_empty(), "{ctx}");
    }

    let clock = ManualClock::new(0);
    let built = Breaker::<_, W, ()>::try_from_parts(*config, &clock, ());
    match (&built, &got) {
        (Ok(b), Ok(c)) => {
            assert_eq!(b.config(), c, "{ctx}: the breaker keeps another config");
            assert_eq!(b.snapshot(), Ok(Snapshot::INITIAL), "{ctx}: initial word");
        }
        (Err(e), Err(want)) => assert_eq!(e, want, "{ctx}: try_from_parts error"),
        _ => panic!(
            "{ctx}: try_from_parts {:?} but validate {got:?}",
            built.as_ref().map(|_| ()).map_err(|e| *e)
        ),
    }

    if got.is_ok() {
        let model = ModelConfig::for_width::<W>(config);
        let cap = config.get_backoff_cap().unwrap_or(config.get_open_for());
        let max_trips = W::LAYOUT.max_trips();
        for trips in (0..=max_trips + 1).chain([u32::MAX]) {
            let open = config.open_duration(trips);
            assert_eq!(
                open,
                model.open_duration(trips.into()),
                "{ctx}: open duration after {trips} trips"
            );
            assert!(
                (config.get_open_for()..=cap).contains(&open),
                "{ctx}: open duration {open} after {trips} trips is outside open_for..=cap"
            );
        }
    }
    got
}
