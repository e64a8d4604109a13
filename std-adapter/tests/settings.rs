//! Duration → tick conversion, its edges, and out-of-range errors.
//! Deterministic: no test here reads a real clock.

use std::error::Error;
use std::time::Duration;

use tripword::clock::ManualClock;
use tripword::{Breaker, Clock, Config, Field, Outcome, Status, W32, W64, Word};
use tripword_std::clock::{
    ManualTime, RealClock, duration_to_ticks, span_to_ticks, ticks_to_duration,
};
use tripword_std::{MillisBreaker, MillisClock, MonotonicClock, Settings, StdBreaker};

const US: Duration = Duration::from_micros(1);
const MS: Duration = Duration::from_millis(1);
const NS: Duration = Duration::from_nanos(1);

/// A duration converts to `ceil(d / tick) + 1` ticks, because a
/// clock that reads whole ticks rounded down loses up to one tick at each
/// end; zero stays zero (and is refused as an open time).
#[test]
fn durations_convert_to_one_tick_more_than_they_span() {
    assert_eq!(MillisClock::ticks(MS), 2);
    assert_eq!(MonotonicClock::ticks(US), 2);
    assert_eq!(duration_to_ticks(Duration::ZERO, US), 0);
    assert_eq!(duration_to_ticks(NS, US), 2);
    assert_eq!(duration_to_ticks(US + NS, US), 3);
    assert_eq!(MillisClock::ticks(Duration::from_micros(1_001)), 3);
    assert_eq!(MillisClock::ticks(Duration::from_micros(999)), 2);
    assert_eq!(MonotonicClock::ticks(Duration::from_secs(1)), 1_000_001);
    // Saturates instead of overflowing.
    assert_eq!(MonotonicClock::ticks(Duration::MAX), u64::MAX);
    assert_eq!(duration_to_ticks(Duration::MAX, NS), u64::MAX);
    // A zero tick reads as 1 ns rather than dividing by zero.
    assert_eq!(duration_to_ticks(US, Duration::ZERO), 1_001);
    // A span (the horizon) converts to the ticks it can cover: rounded up.
    assert_eq!(span_to_ticks(Duration::ZERO, MS), 0);
    assert_eq!(span_to_ticks(NS, MS), 1);
    assert_eq!(span_to_ticks(MS, MS), 1);
    assert_eq!(span_to_ticks(Duration::MAX, NS), u64::MAX);
    // And back.
    assert_eq!(
        MonotonicClock::duration(1_500),
        Duration::from_micros(1_500)
    );
    assert_eq!(
        ticks_to_duration(u64::MAX, Duration::from_secs(u64::MAX)),
        Duration::MAX
    );
    // The settings use that conversion; zero is still refused.
    let one_ms = Settings::new().open_for(MS).probe_timeout(MS);
    let valid = one_ms.config::<MillisClock, W64>().unwrap();
    assert_eq!((valid.open_for(), valid.probe_timeout()), (2, 2));
    let valid = one_ms.config::<MonotonicClock, W64>().unwrap();
    assert_eq!(valid.open_for(), 1_001);
    let one_us = Settings::new().open_for(US);
    assert_eq!(
        one_us.config::<MonotonicClock, W64>().unwrap().open_for(),
        2
    );
    let zero = Settings::new().open_for(Duration::ZERO);
    assert_eq!(
        zero.config::<MillisClock, W64>().unwrap_err().field(),
        Field::OpenFor
    );
}

/// A clock on simulated real time: `real` holds nanoseconds, `now` reads
/// whole milliseconds rounded down, as `MillisClock` does.
struct SimMillis {
    real: ManualClock,
}

impl Clock for SimMillis {
    fn now(&self) -> u64 {
        self.real.now() / 1_000_000
    }
}

impl RealClock for SimMillis {
    const TICK: Duration = MS;
}

/// End to end on simulated time: whatever the phase of the
/// millisecond at which the breaker trips, it rejects until at least the
/// open time has passed in real time, and admits once the open time, the
/// two ticks of rounding and the word's resolution (`3 * 2^s` ticks) have.
fn open_time_lasts_at_least_its_setting<W: Word>(settings: Settings) {
    let open = settings.open_for;
    for start_ns in [0, 1, 499_999, 999_999, 1_000_000, 123_456_789] {
        let clock = SimMillis {
            real: ManualClock::new(start_ns),
        };
        let b: Breaker<&SimMillis, W> = settings.build_on(&clock, ()).unwrap();
        let shift = b.config().time_shift();
        let late = open + 2 * MS + (3 << shift) * MS;
        let _ = b.acquire().map(|t| b.release(t, Outcome::Failure));
        assert_eq!(b.status(), Status::Open);
        // Sweep real time in 0.25 ms steps, reading only the status (a
        // pure read): rejected strictly before `open`, half-open from `late`.
        let mut elapsed = Duration::ZERO;
        while elapsed <= late {
            clock.real.set(start_ns + elapsed.as_nanos() as u64);
            let status = b.status();
            if elapsed < open {
                assert_eq!(
                    status,
                    Status::Open,
                    "{open:?} at {elapsed:?} from {start_ns} ns"
                );
            }
            elapsed += Duration::from_micros(250);
        }
        assert_eq!(b.status(), Status::HalfOpen, "{open:?} by {late:?}");
    }
}

#[test]
fn an_open_time_lasts_at_least_its_setting_in_real_time() {
    for open in [
        NS,
        MS,
        Duration::from_micros(1_500),
        Duration::from_micros(2_999),
        Duration::from_millis(7),
    ] {
        let s = Settings::new().failure_threshold(1).open_for(open);
        open_time_lasts_at_least_its_setting::<W64>(s);
        open_time_lasts_at_least_its_setting::<W32>(s.horizon(Duration::ZERO));
        // The default horizon: 128 ms units on the narrow word.
        open_time_lasts_at_least_its_setting::<W32>(s);
    }
}

#[test]
fn defaults_fit_both_widths_on_both_clocks() {
    let s = Settings::new();
    let us64 = s.config::<MonotonicClock, W64>().unwrap();
    assert_eq!(
        (us64.open_for(), us64.probe_timeout()),
        (1_000_001, 5_000_001)
    );
    assert_eq!(us64.time_shift(), 0);
    assert_eq!(s.config::<MillisClock, W64>().unwrap().time_shift(), 0);
    // The core's W32 horizon is an hour of milliseconds: 128 ms units.
    let ms32 = s.config::<MillisClock, W32>().unwrap();
    assert_eq!((ms32.horizon(), ms32.time_shift()), (3_600_000, 7));
    // On microseconds that horizon is 3.6 s; 5 s of probe timeout need
    // 512 µs units.
    let us32 = s.config::<MonotonicClock, W32>().unwrap();
    assert_eq!((us32.horizon(), us32.time_shift()), (3_600_000, 9));
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
        .open_for(100_001)
        .exponential_backoff(2_000_001)
        .probe_timeout(50_001)
        .abandon_as(Outcome::Ignored);
    assert_eq!(s.config::<MonotonicClock, W64>().unwrap().config(), &want);
    assert_eq!(s.to_config::<MonotonicClock>(), want);
    assert_eq!(
        s.config::<MillisClock, W32>().unwrap().backoff_cap(),
        Some(2_001)
    );
    assert_eq!(s.fixed_open_time().to_config::<MillisClock>(), {
        Config::new()
            .failure_threshold(3)
            .open_for(101)
            .probe_timeout(51)
            .abandon_as(Outcome::Ignored)
    });
    // The horizon is a span: rounded up, no extra tick.
    let h = s.horizon(Duration::from_secs(3600));
    assert_eq!(h.horizon, Some(Duration::from_secs(3600)));
    assert_eq!(h.to_config::<MillisClock>(), want_ms(s).horizon(3_600_000));
    assert_eq!(h.config::<MillisClock, W32>().unwrap().horizon(), 3_600_000);
    assert_eq!(
        s.horizon(Duration::from_micros(1_500))
            .config::<MillisClock, W64>()
            .unwrap()
            .horizon(),
        2
    );
    // Unset, the core's default for the width.
    assert_eq!(s.horizon, None);
    assert_eq!(
        s.config::<MillisClock, W64>().unwrap().horizon(),
        W64::LAYOUT.default_horizon()
    );
}

fn want_ms(s: Settings) -> Config {
    Config::new()
        .failure_threshold(s.failure_threshold)
        .open_for(duration_to_ticks(s.open_for, MS))
        .exponential_backoff(duration_to_ticks(s.exponential_backoff.unwrap(), MS))
        .probe_timeout(duration_to_ticks(s.probe_timeout, MS))
        .abandon_as(s.abandon_as)
}

/// The longest open time and probe timeout (2^60 ticks, after the extra
/// tick) are exactly accepted on the 64-bit word, and one nanosecond more is
/// refused with the range in durations.
fn duration_edge<C: RealClock>() {
    let max = C::duration((1 << 60) - 1);
    for (field, at) in [
        (Field::OpenFor, Settings::new().open_for(max)),
        (Field::ProbeTimeout, Settings::new().probe_timeout(max)),
    ] {
        assert!(at.config::<C, W64>().is_ok(), "{field:?} {max:?}");
        let over = match field {
            Field::OpenFor => at.open_for(max + NS),
            _ => at.probe_timeout(max + NS),
        };
        let err = over.config::<C, W64>().unwrap_err();
        assert_eq!(err.field(), field);
        assert_eq!(err.given(), Some(max + NS));
        assert_eq!(err.range(), Some(NS..=max));
        assert_eq!(err.tick(), C::TICK);
        assert_eq!(err.in_ticks().max, 1 << 60);
        assert_eq!(err.in_ticks().value, (1 << 60) + 1);
    }
}

#[test]
fn longest_durations_per_clock() {
    duration_edge::<MonotonicClock>();
    duration_edge::<MillisClock>();
}

/// The backoff cap reaches at most `open_for` doubled once per trip the
/// word counts, in ticks: 2 ticks (1 ms) doubled 30 times on W64, 14 on W32.
#[test]
fn longest_backoff_cap_per_width() {
    for (word, max_ticks) in [(64, 2u64 << 30), (32, 2 << 14)] {
        let max = MillisClock::duration(max_ticks - 1);
        let at = Settings::new().open_for(MS).exponential_backoff(max);
        let over = at.exponential_backoff(max + NS);
        let (ok, err) = if word == 64 {
            (
                at.config::<MillisClock, W64>().is_ok(),
                over.config::<MillisClock, W64>().unwrap_err(),
            )
        } else {
            (
                at.config::<MillisClock, W32>().is_ok(),
                over.config::<MillisClock, W32>().unwrap_err(),
            )
        };
        assert!(ok, "{word}-bit: {max:?}");
        assert_eq!(err.field(), Field::BackoffCap);
        assert_eq!(err.range(), Some(MS..=max));
        assert_eq!(err.in_ticks().max, max_ticks);
    }
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
        (Settings::new().horizon(Duration::MAX), Field::Horizon),
    ] {
        let err = s.config::<MonotonicClock, W64>().unwrap_err();
        assert_eq!(err.field(), field, "{s:?}");
        assert!(s.build().is_err());
        let err = s.config::<MillisClock, W32>().unwrap_err();
        assert_eq!(err.field(), field, "{s:?}");
    }
    // The smallest non-zero duration is two ticks, and accepted.
    let tiny = Settings::new().open_for(NS).probe_timeout(NS);
    assert_eq!(tiny.config::<MillisClock, W32>().unwrap().open_for(), 2);
}

#[test]
fn backoff_cap_below_open_time_names_the_range_from_open_for() {
    let err = Settings::new()
        .open_for(Duration::from_millis(100))
        .exponential_backoff(Duration::from_millis(99))
        .config::<MonotonicClock, W64>()
        .unwrap_err();
    assert_eq!(err.field(), Field::BackoffCap);
    let end = MonotonicClock::duration((100_001 << 30) - 1);
    assert_eq!(err.range(), Some(Duration::from_millis(100)..=end));
    assert_eq!(err.in_ticks().value, 99_001);
    assert_eq!(
        err.to_string(),
        "exponential_backoff cap = 99ms is out of range 100ms..=107375256.141823s (1µs ticks, 64-bit word)"
    );
    // A cap a hair below open_for converts to the same ticks, and is still
    // refused: the rule is in durations. Equal is fine.
    let s = Settings::new().open_for(Duration::from_millis(100));
    let hair = s.exponential_backoff(Duration::from_millis(100) - NS);
    assert_eq!(MillisClock::ticks(Duration::from_millis(100) - NS), 101);
    let err = hair.config::<MillisClock, W64>().unwrap_err();
    assert_eq!(
        (err.field(), err.in_ticks().value),
        (Field::BackoffCap, 101)
    );
    assert!(
        s.exponential_backoff(Duration::from_millis(100))
            .config::<MillisClock, W64>()
            .is_ok()
    );
}

#[test]
fn horizon_errors_name_the_longest_duration_and_an_exact_range() {
    // Two hours of microseconds do not fit the 15-bit field even at its
    // coarsest units.
    let s = Settings::new().horizon(Duration::from_secs(7200));
    let err = s.config::<MonotonicClock, W32>().unwrap_err();
    assert_eq!(err.field(), Field::Horizon);
    assert_eq!(err.given(), Some(Duration::from_secs(7200)));
    let range = err.range().unwrap();
    assert_eq!(*range.start(), Duration::ZERO);
    assert_eq!(*range.end(), MonotonicClock::duration(err.in_ticks().max));
    assert!(
        err.to_string()
            .starts_with("horizon = 7200s is out of range 0ns..=")
    );
    assert!(
        err.to_string()
            .ends_with("with the longest duration 5s (1µs ticks, 32-bit word)"),
        "{err}"
    );
    // The range is exact: its end is accepted, a nanosecond more is not.
    let end = *range.end();
    assert_eq!(
        s.horizon(end)
            .config::<MonotonicClock, W32>()
            .unwrap()
            .time_shift(),
        17
    );
    assert_eq!(
        s.horizon(end + NS)
            .config::<MonotonicClock, W32>()
            .unwrap_err()
            .field(),
        Field::Horizon
    );
}

#[test]
fn a_duration_no_shift_holds_is_named_with_an_exact_range() {
    // A month-long open time does not fit the 32-bit word at any shift.
    let month = Duration::from_secs(30 * 86_400);
    let err = Settings::new()
        .open_for(month)
        .config::<MillisClock, W32>()
        .unwrap_err();
    assert_eq!(err.field(), Field::OpenFor);
    let end = *err.range().unwrap().end();
    assert!(end < month);
    let at = Settings::new().open_for(end);
    assert_eq!(at.config::<MillisClock, W32>().unwrap().time_shift(), 17);
    assert_eq!(
        at.open_for(end + NS)
            .config::<MillisClock, W32>()
            .unwrap_err()
            .field(),
        Field::OpenFor
    );
    // About 24.9 days of milliseconds: the core's longest duration,
    // ((2^14 - 1) << 17) + 1 ticks, less the tick for the clock's rounding.
    assert_eq!(end, MillisClock::duration(((1 << 14) - 1) << 17));
    // As a backoff cap, the range starts at open_for.
    let err = Settings::new()
        .open_for(Duration::from_secs(1))
        .exponential_backoff(month)
        .config::<MillisClock, W32>()
        .unwrap_err();
    assert_eq!(err.field(), Field::BackoffCap);
    assert_eq!(
        err.range(),
        Some(Duration::from_secs(1)..=MillisClock::duration(1_001 << 14) - MS)
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
        .open_for(Duration::from_millis(1))
        .exponential_backoff(Duration::from_secs(60))
        .config::<MillisClock, W32>()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "exponential_backoff cap = 60s is out of range 1ms..=32.767s (1ms ticks, 32-bit word)"
    );
    assert_eq!(
        err.source().unwrap().to_string(),
        "exponential_backoff cap = 60001 is out of range 2..=32768 ticks"
    );
}

#[test]
fn builders_pick_clock_width_and_observer() {
    let s = Settings::new().open_for(Duration::from_millis(500));
    let b: StdBreaker = s.build().unwrap();
    assert_eq!(b.config().open_for(), 500_001);
    let b = s.build_with(tripword::OnTransition(|_| {})).unwrap();
    assert_eq!(b.config().open_for(), 500_001);
    let b: MillisBreaker<W32> = s.build_on(MillisClock, ()).unwrap();
    assert_eq!(b.config().open_for(), 501);
    let b: StdBreaker<W32> = s.build_on(MonotonicClock, ()).unwrap();
    assert_eq!(b.config().time_shift(), 9);
    let b: Result<StdBreaker<W32>, _> = s
        .horizon(Duration::from_secs(7200))
        .build_on(MonotonicClock, ());
    assert_eq!(b.unwrap_err().field(), Field::Horizon);
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
    assert_eq!(STATIC_BREAKER.config().open_for(), 100_001);
    assert!(
        STATIC_BREAKER.acquire().is_ok_and(
            |t| STATIC_BREAKER.release(t, Outcome::Success) == tripword::Release::Recorded
        )
    );
}

/// `ticks_to_duration` saturates only past `u64::MAX` whole seconds: a
/// product of exactly `u64::MAX` s keeps its zero nanoseconds rather than
/// becoming `Duration::MAX` (`u64::MAX` s and 999 999 999 ns). Mutation
/// testing found the boundary unpinned (`>` as `>=`).
#[test]
fn ticks_to_duration_saturates_only_past_the_last_whole_second() {
    let s = Duration::from_secs(1);
    assert_eq!(
        ticks_to_duration(u64::MAX, s),
        Duration::from_secs(u64::MAX)
    );
    assert_ne!(ticks_to_duration(u64::MAX, s), Duration::MAX);
    assert_eq!(
        ticks_to_duration(u64::MAX, s + NS),
        Duration::MAX,
        "one nanosecond a tick more: past the last second"
    );
}

/// `ManualTime::set_ticks` sets the reading, forwards and backwards, and
/// `advance` goes on from there. Mutation testing found it untested (a
/// `set_ticks` that does nothing survived).
#[test]
fn manual_time_set_ticks_sets_the_reading() {
    let clock = ManualTime::new();
    clock.set_ticks(7_000);
    assert_eq!(clock.now(), 7_000);
    clock.advance(MS);
    assert_eq!(clock.now(), 8_000);
    clock.set_ticks(5);
    assert_eq!(clock.now(), 5, "backwards too");
    clock.advance_ticks(1);
    assert_eq!(clock.now(), 6);
}

/// An error's longest duration (what a horizon error names) is the longest
/// of open time, probe timeout and backoff cap: a cap below `open_for`
/// does not shorten it, so the error is the one without the cap. Mutation
/// testing found it untested (the guard `cap > open_for` as `true`
/// survived).
#[test]
fn a_backoff_cap_below_open_for_leaves_the_longest_duration() {
    let s = Settings::new()
        .failure_threshold(0)
        .open_for(Duration::from_millis(100))
        .probe_timeout(Duration::from_millis(10));
    let without = s.config::<MonotonicClock, W64>().unwrap_err();
    let below = s
        .exponential_backoff(Duration::from_millis(50))
        .config::<MonotonicClock, W64>()
        .unwrap_err();
    assert_eq!(below.field(), Field::FailureThreshold);
    assert!(format!("{below:?}").contains("longest: 100ms"), "{below:?}");
    assert_eq!(below, without);
    let above = s
        .exponential_backoff(Duration::from_millis(300))
        .config::<MonotonicClock, W64>()
        .unwrap_err();
    assert!(format!("{above:?}").contains("longest: 300ms"), "{above:?}");
}

/// Each setting reads back from the public field named as its setter and
/// its config-file key.
#[test]
fn settings_read_back_from_fields_named_as_their_setters() {
    let s = Settings::new()
        .failure_threshold(7)
        .open_for(Duration::from_secs(3))
        .exponential_backoff(Duration::from_secs(60))
        .probe_timeout(Duration::from_secs(2))
        .horizon(Duration::from_secs(600))
        .abandon_as(Outcome::Ignored);
    assert_eq!(
        (
            s.failure_threshold,
            s.open_for,
            s.exponential_backoff,
            s.probe_timeout,
            s.horizon,
            s.abandon_as
        ),
        (
            7,
            Duration::from_secs(3),
            Some(Duration::from_secs(60)),
            Duration::from_secs(2),
            Some(Duration::from_secs(600)),
            Outcome::Ignored
        )
    );
    // A field set directly is what `config` converts.
    let mut t = s;
    t.failure_threshold = 2;
    t.exponential_backoff = None;
    let config = t.config::<MillisClock, tripword::W64>().unwrap();
    assert_eq!(
        (config.failure_threshold(), config.backoff_cap()),
        (2, None)
    );
}

/// A clock of 10 µs ticks and one of 1 ns ticks, beside the crate's.
struct TenMicros;
impl Clock for TenMicros {
    fn now(&self) -> u64 {
        0
    }
}
impl RealClock for TenMicros {
    const TICK: Duration = Duration::from_micros(10);
}
struct Nanos;
impl Clock for Nanos {
    fn now(&self) -> u64 {
        0
    }
}
impl RealClock for Nanos {
    const TICK: Duration = NS;
}

/// Sets `field` of `s` to `d`.
fn with(s: Settings, field: Field, d: Duration) -> Settings {
    match field {
        Field::OpenFor => s.open_for(d),
        Field::ProbeTimeout => s.probe_timeout(d),
        Field::BackoffCap => s.exponential_backoff(d),
        _ => s.horizon(d),
    }
}

/// The range an error reports ends where the conversion stops accepting,
/// on word `W` and clock `C`: its upper bound converts, one tick (and one
/// nanosecond) more is refused for the same field, and the message names
/// that bound. (The 32-bit word holds less than the 2^60 ticks the core
/// checks a duration against first.)
fn reported_upper_bounds_convert<C: RealClock, W: Word>() {
    let clock = std::any::type_name::<C>();
    let bits = W::LAYOUT.word_bits;
    let open_for_end = *Settings::new()
        .open_for(Duration::MAX)
        .config::<C, W>()
        .unwrap_err()
        .range()
        .unwrap()
        .end();
    // The other durations as short as the clock allows (5 s is past the
    // 32-bit word in nanoseconds).
    let short = Settings::new().open_for(C::TICK).probe_timeout(C::TICK);
    let cases = [
        (Field::OpenFor, short),
        (Field::ProbeTimeout, short),
        // A cap reached by doubling `open_for`, and one past the word.
        (Field::BackoffCap, short.open_for(Duration::from_secs(1))),
        (Field::BackoffCap, short.open_for(open_for_end / 1024)),
        (Field::Horizon, short),
    ];
    for (field, s) in cases {
        let err = with(s, field, Duration::MAX).config::<C, W>().unwrap_err();
        assert_eq!(err.field(), field, "{clock}, {bits}-bit");
        let end = *err.range().unwrap().end();
        let at = with(s, field, end);
        assert!(
            at.config::<C, W>().is_ok(),
            "{field:?} {end:?}, {clock}, {bits}-bit: {:?}",
            at.config::<C, W>().unwrap_err().to_string()
        );
        for more in [C::TICK, NS] {
            let over = with(s, field, end + more).config::<C, W>().unwrap_err();
            assert_eq!(
                over.field(),
                field,
                "{end:?} + {more:?}, {clock}, {bits}-bit"
            );
            assert_eq!(over.range(), err.range());
            assert!(
                over.to_string().contains(&format!("..={end:?} ")),
                "{over} names {end:?}"
            );
        }
        // In ticks, the same bound.
        let ticks = match field {
            Field::Horizon => span_to_ticks(end, C::TICK),
            _ => C::ticks(end),
        };
        assert_eq!(err.in_ticks().max, ticks, "{field:?}, {clock}, {bits}-bit");
    }
}

#[test]
fn reported_upper_bounds_convert_on_every_word_and_clock() {
    reported_upper_bounds_convert::<MonotonicClock, W64>();
    reported_upper_bounds_convert::<MonotonicClock, W32>();
    reported_upper_bounds_convert::<MillisClock, W64>();
    reported_upper_bounds_convert::<MillisClock, W32>();
    reported_upper_bounds_convert::<ManualTime, W64>();
    reported_upper_bounds_convert::<ManualTime, W32>();
    reported_upper_bounds_convert::<TenMicros, W64>();
    reported_upper_bounds_convert::<TenMicros, W32>();
    reported_upper_bounds_convert::<Nanos, W64>();
    reported_upper_bounds_convert::<Nanos, W32>();
    #[cfg(feature = "coarsetime")]
    {
        use tripword_std::clock::{CoarseClock, RecentClock};
        reported_upper_bounds_convert::<CoarseClock, W64>();
        reported_upper_bounds_convert::<CoarseClock, W32>();
        reported_upper_bounds_convert::<RecentClock, W64>();
        reported_upper_bounds_convert::<RecentClock, W32>();
    }
}

/// An open time past 2^60 milliseconds on the 32-bit word names the
/// word's bound, about 24.9 days, not the 2^60 ticks the core checks a
/// duration against first.
#[test]
fn a_huge_open_time_on_the_32_bit_word_names_the_words_bound() {
    let err = Settings::new()
        .open_for(Duration::from_secs(1 << 52))
        .config::<MillisClock, W32>()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "open_for = 4503599627370496s is out of range 1ns..=2147352.576s (1ms ticks, 32-bit word)"
    );
}
