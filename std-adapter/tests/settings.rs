//! Duration → tick conversion, its edges, and out-of-range errors.

use std::error::Error;
use std::time::Duration;

use tripword::{Breaker, Config, Field, Outcome, W32, W64, Word};
use tripword_std::clock::{RealClock, duration_to_ticks, ticks_to_duration};
use tripword_std::{MillisBreaker, MillisClock, MonotonicClock, Settings, StdBreaker};

const US: Duration = Duration::from_micros(1);
const NS: Duration = Duration::from_nanos(1);

#[test]
fn durations_round_up_to_whole_ticks() {
    assert_eq!(duration_to_ticks(Duration::ZERO, US), 0);
    assert_eq!(duration_to_ticks(NS, US), 1);
    assert_eq!(duration_to_ticks(US, US), 1);
    assert_eq!(duration_to_ticks(US + NS, US), 2);
    assert_eq!(MillisClock::ticks(Duration::from_micros(1_001)), 2);
    assert_eq!(MonotonicClock::ticks(Duration::from_secs(1)), 1_000_000);
    // Saturates instead of overflowing.
    assert_eq!(MonotonicClock::ticks(Duration::MAX), u64::MAX);
    assert_eq!(duration_to_ticks(Duration::MAX, NS), u64::MAX);
    // A zero tick reads as 1 ns rather than dividing by zero.
    assert_eq!(duration_to_ticks(US, Duration::ZERO), 1_000);
    // And back.
    assert_eq!(
        MonotonicClock::duration(1_500),
        Duration::from_micros(1_500)
    );
    assert_eq!(
        ticks_to_duration(u64::MAX, Duration::from_secs(u64::MAX)),
        Duration::MAX
    );
}

#[test]
fn defaults_fit_w64_on_both_clocks_and_w32_in_millis() {
    let s = Settings::new();
    assert!(s.config::<MonotonicClock, W64>().is_ok());
    assert!(s.config::<MillisClock, W64>().is_ok());
    assert!(s.config::<MillisClock, W32>().is_ok());
    assert_eq!(
        s.config::<MonotonicClock, W32>().unwrap_err().field(),
        Field::OpenFor
    );
    assert_eq!(Settings::default(), s);
}

#[test]
fn conversion_matches_the_core_config() {
    let s = Settings::new()
        .failure_threshold(3)
        .open_for(Duration::from_millis(100))
        .exponential_backoff(Duration::from_secs(2))
        .probe_timeout(Duration::from_millis(50))
        .abandon_as(Outcome::Ignored);
    let want = Config::new()
        .failure_threshold(3)
        .open_for(100_000)
        .exponential_backoff(2_000_000)
        .probe_timeout(50_000)
        .abandon_as(Outcome::Ignored);
    assert_eq!(s.config::<MonotonicClock, W64>(), Ok(want));
    assert_eq!(s.to_config::<MonotonicClock>(), want);
    assert_eq!(
        s.config::<MillisClock, W32>().unwrap().get_backoff_cap(),
        Some(2_000)
    );
    assert_eq!(
        s.fixed_open_time()
            .to_config::<MillisClock>()
            .get_backoff_cap(),
        None
    );
}

/// The largest duration each clock/width pair allows is exactly accepted,
/// and one nanosecond more is rejected with the range in durations.
fn edge<C: RealClock, W: Word>(max: Duration) {
    assert_eq!(max, C::duration(W::LAYOUT.max_duration()));
    let at = |d| {
        Settings::new()
            .open_for(d)
            .probe_timeout(d)
            .exponential_backoff(d)
    };
    assert!(at(max).config::<C, W>().is_ok(), "{max:?}");
    let over = max + NS;
    let base = Settings::new().open_for(max).probe_timeout(max);
    for (s, field) in [
        (base.open_for(over), Field::OpenFor),
        (base.exponential_backoff(over), Field::BackoffCap),
        (base.probe_timeout(over), Field::ProbeTimeout),
    ] {
        let err = s.config::<C, W>().unwrap_err();
        assert_eq!(err.field(), field);
        assert_eq!(err.given(), Some(over));
        assert_eq!(*err.range().unwrap().end(), max);
        assert_eq!(err.tick(), C::TICK);
        assert_eq!(err.in_ticks().max, W::LAYOUT.max_duration());
    }
}

#[test]
fn longest_durations_per_clock_and_width() {
    edge::<MonotonicClock, W64>(Duration::from_micros(1 << 33)); // ≈ 2.4 h
    edge::<MonotonicClock, W32>(Duration::from_micros(1 << 14)); // 16.384 ms
    edge::<MillisClock, W64>(Duration::from_millis(1 << 33)); // ≈ 99 days
    edge::<MillisClock, W32>(Duration::from_millis(1 << 14)); // 16.384 s
}

#[test]
fn zero_and_huge_durations_are_errors_not_panics() {
    for (s, field) in [
        (Settings::new().open_for(Duration::ZERO), Field::OpenFor),
        (
            Settings::new().probe_timeout(Duration::ZERO),
            Field::ProbeTimeout,
        ),
        (Settings::new().open_for(Duration::MAX), Field::OpenFor),
        (
            Settings::new().probe_timeout(Duration::MAX),
            Field::ProbeTimeout,
        ),
        (
            Settings::new().exponential_backoff(Duration::MAX),
            Field::BackoffCap,
        ),
    ] {
        let err = s.config::<MonotonicClock, W64>().unwrap_err();
        assert_eq!(err.field(), field, "{s:?}");
        assert!(s.build().is_err());
    }
    // The smallest non-zero duration rounds up to one tick and is accepted.
    let tiny = Settings::new().open_for(NS).probe_timeout(NS);
    assert_eq!(tiny.config::<MillisClock, W32>().unwrap().get_open_for(), 1);
}

#[test]
fn backoff_cap_below_open_time_names_the_range_from_open_for() {
    let err = Settings::new()
        .open_for(Duration::from_millis(100))
        .exponential_backoff(Duration::from_millis(99))
        .config::<MonotonicClock, W64>()
        .unwrap_err();
    assert_eq!(err.field(), Field::BackoffCap);
    assert_eq!(
        err.range(),
        Some(Duration::from_millis(100)..=Duration::from_micros(1 << 33))
    );
    assert_eq!(
        err.to_string(),
        "exponential_backoff cap = 99ms is out of range 100ms..=8589.934592s (1µs ticks, 64-bit word)"
    );
}

#[test]
fn failure_threshold_range_per_width() {
    let err = |n, w32: bool| {
        let s = Settings::new().failure_threshold(n);
        if w32 {
            s.config::<MillisClock, W32>().err()
        } else {
            s.config::<MillisClock, W64>().err()
        }
    };
    assert!(err(1, false).is_none() && err(65_535, false).is_none());
    assert!(err(4_095, true).is_none());
    let e = err(0, false).unwrap();
    assert_eq!(
        (e.field(), e.given(), e.range()),
        (Field::FailureThreshold, None, None)
    );
    assert_eq!(
        e.to_string(),
        "failure_threshold = 0 is out of range 1..=65535 (64-bit word)"
    );
    assert_eq!(
        err(4_096, true).unwrap().to_string(),
        "failure_threshold = 4096 is out of range 1..=4095 (32-bit word)"
    );
}

#[test]
fn error_source_is_the_core_error_in_ticks() {
    let err = Settings::new()
        .open_for(Duration::from_millis(20))
        .config::<MonotonicClock, W32>()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "open_for = 20ms is out of range 1µs..=16.384ms (1µs ticks, 32-bit word)"
    );
    assert_eq!(
        err.source().unwrap().to_string(),
        "open_for = 20000 is out of range 1..=16384 ticks"
    );
}

#[test]
fn builders_pick_clock_width_and_observer() {
    let s = Settings::new().open_for(Duration::from_millis(500));
    let b: StdBreaker = s.build().unwrap();
    assert_eq!(b.config().get_open_for(), 500_000);
    let b = s.build_with(tripword::OnTransition(|_| {})).unwrap();
    assert_eq!(b.config().get_open_for(), 500_000);
    let b: MillisBreaker<W32> = s.build_on(MillisClock, ()).unwrap();
    assert_eq!(b.config().get_open_for(), 500);
    let b: Result<StdBreaker<W32>, _> = s.build_on(MonotonicClock, ());
    assert_eq!(b.unwrap_err().field(), Field::OpenFor);
}

static STATIC_BREAKER: StdBreaker = Breaker::new(
    Settings::new()
        .failure_threshold(3)
        .open_for(Duration::from_millis(100))
        .to_config::<MonotonicClock>(),
    MonotonicClock,
);

#[test]
fn a_static_breaker_on_the_real_clock() {
    assert_eq!(STATIC_BREAKER.config().get_open_for(), 100_000);
    assert!(
        STATIC_BREAKER.acquire().is_ok_and(
            |t| STATIC_BREAKER.release(t, Outcome::Success) == tripword::Release::Recorded
        )
    );
}
