//! The range a [`SettingsError`](super::SettingsError) names, in
//! durations: exactly what the conversion to ticks accepts on the clock
//! and the word.

use std::time::Duration;

use tripword::{Config, ConfigError, Field, Word};

use crate::clock::{RealClock, duration_to_ticks, ticks_to_duration};

/// The durations of a [`Settings`](super::Settings), as its error speaks
/// of them.
#[derive(Clone, Copy, Debug)]
pub(super) struct Durations {
    pub(super) open_for: Duration,
    pub(super) probe_timeout: Duration,
    pub(super) backoff_cap: Option<Duration>,
    pub(super) horizon: Option<Duration>,
    /// The length of a ramp's stage.
    pub(super) ramp_step: Duration,
}

/// The core's error in durations.
#[derive(Clone, Copy, Debug)]
pub(super) struct InDurations {
    /// The core's error, its value the one converted and its range the
    /// one the word accepts.
    pub(super) error: ConfigError,
    /// The duration given, `None` for a count.
    pub(super) given: Option<Duration>,
    /// The range accepted (zero to zero for a count).
    pub(super) start: Duration,
    pub(super) end: Duration,
    /// The longest of the open time, backoff cap and probe timeout.
    pub(super) longest: Duration,
}

/// The core's `error` for settings of these `durations`, on clock `C` and
/// word `W`, in durations. The range is what the conversion accepts: where
/// the core names the 2^60 ticks it checks a duration against first, the
/// word's own bound when that is less ([`longest_ticks`]).
pub(super) fn in_durations<C: RealClock, W: Word>(
    mut error: ConfigError,
    durations: Durations,
) -> InDurations {
    let tick = C::TICK;
    let Durations {
        open_for,
        probe_timeout,
        backoff_cap,
        horizon,
        ramp_step,
    } = durations;
    if matches!(
        error.field,
        Field::OpenFor | Field::ProbeTimeout | Field::BackoffCap
    ) {
        error.max = error.max.min(longest_ticks::<W>());
    }
    let (given, start, end) = match error.field {
        // Counts. A config's check never names the failure-rate fields:
        // those are the policy's (`rate.rs`, with the window in durations).
        Field::FailureThreshold
        | Field::FailureRate
        | Field::MinimumCalls
        | Field::Window
        | Field::Probes
        | Field::ProbesToClose
        | Field::RampShare => (None, Duration::ZERO, Duration::ZERO),
        // A stage's length converts as an open time does: at least as long
        // as set, at most the core's longest stage for this many stages.
        Field::Ramp => (
            Some(ramp_step),
            shortest_at_least(error.min, tick),
            longest_at_most(error.max, tick),
        ),
        Field::OpenFor => (
            Some(open_for),
            shortest_at_least(error.min, tick),
            longest_at_most(error.max, tick),
        ),
        Field::ProbeTimeout => (
            Some(probe_timeout),
            shortest_at_least(error.min, tick),
            longest_at_most(error.max, tick),
        ),
        Field::BackoffCap => {
            let cap = backoff_cap.unwrap_or(Duration::ZERO);
            // The value converted, not the one `to_config` lowered below
            // `open_for`.
            error.value = duration_to_ticks(cap, tick);
            (Some(cap), open_for, longest_at_most(error.max, tick))
        }
        Field::Horizon => (
            Some(horizon.unwrap_or(ticks_to_duration(W::LAYOUT.default_horizon(), tick))),
            ticks_to_duration(error.min, tick),
            ticks_to_duration(error.max, tick),
        ),
    };
    let longest = match backoff_cap {
        Some(cap) if cap > open_for => cap,
        _ => open_for,
    };
    InDurations {
        error,
        given,
        start,
        end,
        longest: longest.max(probe_timeout),
    }
}

/// The most ticks an open time, a probe timeout or a backoff cap may take
/// on word `W`, as the core's check finds it: the core checks each against
/// 2^60 ticks first (and names that bound for a duration past it), then
/// the longest of them against what the word's time field holds in its
/// coarsest units, which on the 32-bit word is less, about 2^31 ticks.
/// Asked of the core, so that the two cannot drift apart.
fn longest_ticks<W: Word>() -> u64 {
    let first = match Config::new().open_for(u64::MAX).check::<W>() {
        Err(e) if e.field == Field::OpenFor => e.max,
        _ => u64::MAX,
    };
    match Config::new().open_for(first).probe_timeout(1).check::<W>() {
        Err(e) if e.field == Field::OpenFor => e.max.min(first),
        _ => first,
    }
}

/// The shortest duration that converts to at least `ticks` ticks with
/// [`duration_to_ticks`] (`ceil(d / tick) + 1`, zero for zero).
pub(super) fn shortest_at_least(ticks: u64, tick: Duration) -> Duration {
    match ticks {
        0 => Duration::ZERO,
        1 | 2 => Duration::from_nanos(1),
        n => ticks_to_duration(n - 2, tick).saturating_add(Duration::from_nanos(1)),
    }
}

/// The longest duration that converts to at most `ticks` ticks with
/// [`duration_to_ticks`].
pub(super) fn longest_at_most(ticks: u64, tick: Duration) -> Duration {
    ticks_to_duration(ticks.saturating_sub(1), tick)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `shortest_at_least(n, tick)` is the shortest duration that
    /// [`duration_to_ticks`] takes to `n` ticks or more: it reaches `n`, and
    /// one nanosecond less does not. The core's ranges start at 1 tick today,
    /// so only this test reaches the `n - 2` arm; mutation testing found it
    /// unpinned (`-` as `+` and as `/`).
    #[test]
    fn shortest_at_least_is_the_shortest_duration_reaching_that_many_ticks() {
        let ms = Duration::from_millis(1);
        assert_eq!(shortest_at_least(5, ms), Duration::from_nanos(3_000_001));
        for tick in [Duration::from_nanos(1), Duration::from_micros(1), ms] {
            assert_eq!(shortest_at_least(0, tick), Duration::ZERO);
            for n in 1..=20 {
                let d = shortest_at_least(n, tick);
                assert!(
                    duration_to_ticks(d, tick) >= n,
                    "{n} ticks of {tick:?}: {d:?}"
                );
                let less = d - Duration::from_nanos(1);
                assert!(
                    duration_to_ticks(less, tick) < n,
                    "{n} ticks of {tick:?}: {d:?}"
                );
            }
        }
    }

    /// The word's bound on a duration, in ticks: 2^60 on the 64-bit word
    /// (the core's first check), `((2^14 - 1) << 17) + 1` on the 32-bit
    /// word (its 15-bit time field, half of it, in units of 2^17 ticks).
    #[test]
    fn the_longest_duration_is_the_words() {
        assert_eq!(longest_ticks::<tripword::W64>(), 1 << 60);
        assert_eq!(
            longest_ticks::<tripword::W32>(),
            (((1 << 14) - 1) << 17) + 1
        );
    }
}
