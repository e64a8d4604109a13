//! The failure-rate policy in `Settings`: durations and percent converted
//! to the core's `ValidRate` in a clock's ticks, rate breakers built from
//! them and tripped through calls, each field's error in durations or
//! counts with the exact range, the config-file form (feature `serde`),
//! and registries of rate breakers from settings. Hand-moved clocks: no
//! test here reads a real clock.

use std::time::Duration;

use tripword::rate::{Rate, RateBreaker, ValidRate};
use tripword::{Clock, Field, Status, W32, W64, Word};
use tripword_std::clock::{ManualTime, RealClock};
use tripword_std::{
    BreakerExt, FailureRate, MillisClock, MonotonicClock, Registry, RegistrySettings, Settings,
    StdRateBreaker,
};

const NS: Duration = Duration::from_nanos(1);

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

fn rate(percent: u32, window: Duration) -> Settings {
    Settings::new().failure_rate(FailureRate::new(percent, window))
}

/// The window converts as an open time does, `ceil(window / tick) + 1`
/// ticks, on either clock and word; percent and minimum calls pass as
/// given; the core then rounds the window up to its buckets.
#[test]
fn a_valid_rate_from_durations_on_both_clocks_and_words() {
    let s = Settings::new()
        .failure_rate(FailureRate::new(25, Duration::from_secs(10)).minimum_calls(100));
    fn check<C: RealClock, W: Word>(s: Settings, window: u64, shift: u32) {
        let valid: ValidRate<W, 8> = s.rate::<C, W, 8>().unwrap();
        assert_eq!(valid.failure_rate(), 25);
        assert_eq!(valid.minimum_calls(), 100);
        assert_eq!(valid.window(), window);
        assert_eq!(valid.slice_shift(), shift);
        assert_eq!(valid.effective_window(), 8 << shift);
        // The same as the core's own check of the same ticks.
        let core = Rate::new()
            .failure_rate(25)
            .minimum_calls(100)
            .window(C::ticks(Duration::from_secs(10)))
            .check::<W, 8>()
            .unwrap();
        assert_eq!((core.window(), core.slice_shift()), (window, shift));
    }
    // 10 s is 10_000_001 µs: 8 buckets of 2^21 µs (about 16.8 s).
    check::<MonotonicClock, W64>(s, 10_000_001, 21);
    check::<MonotonicClock, W32>(s, 10_000_001, 21);
    // 10_001 ms: 8 buckets of 2^11 ms (about 16.4 s).
    check::<MillisClock, W64>(s, 10_001, 11);
    check::<MillisClock, W32>(s, 10_001, 11);
    check::<ManualTime, W64>(s, 10_000_001, 21);

    // The `const` form converts alike, for `static` breakers.
    assert_eq!(
        s.to_rate::<MillisClock>(),
        Rate::new()
            .failure_rate(25)
            .minimum_calls(100)
            .window(10_001)
    );
    // Other bucket counts, from the same settings.
    let valid = s.rate::<MillisClock, W32, 64>().unwrap();
    assert_eq!(valid.effective_window(), 64 << 8);
    let valid = s.rate::<MillisClock, W32, 2>().unwrap();
    assert_eq!(valid.effective_window(), 2 << 13);
}

/// No `failure_rate` set: a rate breaker takes `FailureRate::default()`,
/// the core's `Rate::new()` in durations (50 %, 10 s, 20 calls).
#[test]
fn without_a_failure_rate_the_defaults_apply() {
    let s = Settings::new();
    assert_eq!(s.failure_rate, None);
    let default = FailureRate::default();
    assert_eq!(
        (default.percent, default.window, default.minimum_calls),
        (50, Duration::from_secs(10), 20)
    );
    let valid = s.rate::<MillisClock, W64, 8>().unwrap();
    let set = s
        .failure_rate(default)
        .rate::<MillisClock, W64, 8>()
        .unwrap();
    assert_eq!(format!("{valid:?}"), format!("{set:?}"));
    assert_eq!(
        (valid.failure_rate(), valid.minimum_calls(), valid.window()),
        (50, 20, 10_001)
    );
    // The core's default, whose window is 10 000 ticks: 10 s in ms, plus
    // the tick for the readings' rounding.
    assert_eq!(s.to_rate::<MillisClock>(), Rate::new().window(10_001));
    let b = s.build_rate().unwrap();
    assert_eq!(b.rate().window(), 10_000_001);
    // Cleared, it is unset again.
    let cleared = s
        .failure_rate(FailureRate::new(10, NS))
        .without_failure_rate();
    assert_eq!(cleared, s);
}

/// A rate breaker built from durations on a hand-moved clock: it trips at
/// the rate once the minimum of calls is reached, not before; calls older
/// than the window no longer count; the open time is the settings'.
#[test]
fn a_rate_breaker_from_settings_trips_through_calls() {
    let clock = ManualTime::new();
    let settings = Settings::new()
        .open_for(Duration::from_secs(30))
        .failure_rate(FailureRate::new(50, Duration::from_secs(10)).minimum_calls(6));
    let b: RateBreaker<&ManualTime, W64> = settings.build_rate_on(&clock, ()).unwrap();
    let fail = |b: &RateBreaker<&ManualTime, W64>| {
        let _ = b.call(|| Err::<(), _>("down"));
    };
    let succeed = |b: &RateBreaker<&ManualTime, W64>| {
        assert_eq!(b.call(|| Ok::<_, ()>(1)), Ok(1));
    };

    // Three failures of five calls: over the rate, under the minimum.
    for _ in 0..2 {
        succeed(&b);
    }
    for _ in 0..3 {
        fail(&b);
    }
    assert_eq!(b.status(), Status::Closed);
    // Past the kept window, those calls are gone: five more calls, two
    // failures, are ten calls in no window.
    clock.advance_ticks(b.rate().effective_window());
    for _ in 0..3 {
        succeed(&b);
    }
    fail(&b);
    fail(&b);
    assert_eq!(b.health().window_calls, 5);
    assert_eq!(b.status(), Status::Closed);
    // The sixth call, a failure: 3 of 6, the rate reached.
    fail(&b);
    assert_eq!(b.status(), Status::Open);
    assert!(b.call(|| Ok::<_, ()>(())).unwrap_err().is_open());

    // Open for 30 s and one tick (the readings' rounding), then a probe.
    clock.advance(Duration::from_secs(30));
    assert_eq!(b.status(), Status::Open);
    clock.advance(ManualTime::TICK);
    assert_eq!(b.status(), Status::HalfOpen);
    succeed(&b);
    assert_eq!(b.status(), Status::Closed);
}

/// The same on the millisecond clock and the 32-bit word, 16 buckets.
#[test]
fn a_millisecond_rate_breaker_on_the_32_bit_word() {
    static NOW: ManualTime = ManualTime::new();
    struct Millis;
    impl Clock for Millis {
        fn now(&self) -> u64 {
            NOW.now() / 1_000
        }
    }
    impl RealClock for Millis {
        const TICK: Duration = Duration::from_millis(1);
    }
    let b: RateBreaker<Millis, W32, (), 16> = Settings::new()
        .failure_rate(FailureRate::new(20, Duration::from_secs(1)).minimum_calls(5))
        .open_for(Duration::from_millis(100))
        .build_rate_on(Millis, ())
        .unwrap();
    assert_eq!(b.rate().window(), 1_001);
    assert_eq!(b.breaker().config().open_for(), 101);
    for _ in 0..4 {
        let _ = b.call(|| Ok::<_, ()>(()));
    }
    let _ = b.call(|| Err::<(), _>("down")); // 1 of 5: 20 %
    assert_eq!(b.status(), Status::Open);
    // The 32-bit word keeps time in 128 ms units here: well past them.
    NOW.advance(Duration::from_secs(1));
    assert_eq!(b.status(), Status::HalfOpen);
}

/// `build_rate` does not read the failure threshold, nor check it;
/// `build` does not read the failure-rate policy, nor check it.
#[test]
fn each_builder_ignores_the_other_trip_rule() {
    let s = Settings::new()
        .failure_threshold(0)
        .failure_rate(FailureRate::new(50, Duration::from_secs(1)));
    assert_eq!(s.build().unwrap_err().field(), Field::FailureThreshold);
    let b = s.build_rate().unwrap();
    assert_eq!(b.rate().failure_rate(), 50);
    let wide: StdRateBreaker<W32> = s
        .failure_threshold(5000)
        .build_rate_on(MonotonicClock, ())
        .unwrap();
    assert_eq!(wide.rate().failure_rate(), 50);

    let s = Settings::new()
        .failure_threshold(2)
        .failure_rate(FailureRate::new(0, Duration::ZERO));
    let b = s.build().unwrap();
    assert_eq!(b.config().failure_threshold(), 2);
    assert_eq!(s.build_rate().err().unwrap().field(), Field::FailureRate);
}

/// The config's fields are checked first, then the policy's (the core's
/// order: percent, minimum calls, window).
#[test]
fn a_rate_breaker_checks_the_config_first_then_the_policy() {
    let bad = FailureRate::new(0, Duration::ZERO).minimum_calls(0);
    let s = Settings::new().open_for(Duration::ZERO).failure_rate(bad);
    assert_eq!(s.build_rate().err().unwrap().field(), Field::OpenFor);
    let s = s.open_for(Duration::from_secs(1));
    assert_eq!(s.build_rate().err().unwrap().field(), Field::FailureRate);
    let s = s.failure_rate(bad.percent(50));
    assert_eq!(s.build_rate().err().unwrap().field(), Field::MinimumCalls);
    let s = s.failure_rate(bad.percent(50).minimum_calls(1));
    assert_eq!(s.build_rate().err().unwrap().field(), Field::Window);
    let s = s.failure_rate(
        bad.percent(50)
            .minimum_calls(1)
            .window(Duration::from_secs(1)),
    );
    assert!(s.build_rate().is_ok());
    assert!(s.build_rate_with(()).is_ok());
}

/// The percent: a count, 1..=100 whatever the word; no duration.
#[test]
fn percent_out_of_range() {
    for (percent, word) in [(0, 64), (101, 64), (0, 32), (1000, 32)] {
        let s = rate(percent, Duration::from_secs(1));
        let err = if word == 64 {
            s.rate::<MonotonicClock, W64, 8>().unwrap_err()
        } else {
            s.rate::<MillisClock, W32, 8>().unwrap_err()
        };
        assert_eq!(err.field(), Field::FailureRate);
        assert_eq!((err.given(), err.range()), (None, None));
        let t = err.in_ticks();
        assert_eq!((t.value, t.min, t.max), (u64::from(percent), 1, 100));
        assert_eq!(
            err.to_string(),
            format!("failure_rate.percent = {percent} is out of range 1..=100")
        );
    }
    for percent in [1, 100] {
        assert!(
            rate(percent, Duration::from_secs(1))
                .rate::<MillisClock, W32, 8>()
                .is_ok()
        );
    }
}

/// The minimum of calls: a count, 1 to the bucket's largest count (65 535
/// for the 64-bit word, 1 023 for the 32-bit one).
#[test]
fn minimum_calls_out_of_range_per_word() {
    fn check<W: Word>(max: u32) {
        let bits = W::LAYOUT.word_bits;
        let s = |calls| {
            Settings::new()
                .failure_rate(FailureRate::new(50, Duration::from_secs(1)).minimum_calls(calls))
        };
        for calls in [0, max + 1] {
            let err = s(calls).rate::<MillisClock, W, 8>().unwrap_err();
            assert_eq!(err.field(), Field::MinimumCalls);
            assert_eq!((err.given(), err.range()), (None, None));
            let t = err.in_ticks();
            assert_eq!(
                (t.value, t.min, t.max),
                (u64::from(calls), 1, u64::from(max))
            );
            assert_eq!(
                err.to_string(),
                format!(
                    "failure_rate.minimum_calls = {calls} is out of range 1..={max} ({bits}-bit word)"
                )
            );
        }
        for calls in [1, max] {
            assert!(s(calls).rate::<MillisClock, W, 8>().is_ok());
        }
    }
    check::<W64>(65_535);
    check::<W32>(1_023);
}

/// The window's range is in durations and exact: its start converts to
/// one tick per bucket and a nanosecond less does not; its end converts
/// to 2^60 ticks and a nanosecond (or a tick) more does not, on every
/// clock, word and bucket count.
fn window_range_is_exact<C: RealClock, W: Word, const N: usize>() {
    let what = format!(
        "{}, {}-bit, {N} buckets",
        std::any::type_name::<C>(),
        W::LAYOUT.word_bits
    );
    let err = rate(50, Duration::ZERO).rate::<C, W, N>().unwrap_err();
    assert_eq!(err.field(), Field::Window, "{what}");
    assert_eq!(err.given(), Some(Duration::ZERO));
    assert_eq!(err.tick(), C::TICK);
    let range = err.range().unwrap();
    let (start, end) = (*range.start(), *range.end());
    assert_eq!(
        (err.in_ticks().min, err.in_ticks().max),
        (N as u64, 1 << 60),
        "{what}"
    );
    assert_eq!(C::ticks(start), N as u64, "{what}");
    assert_eq!(C::ticks(end), 1 << 60, "{what}");
    for ok in [start, end] {
        let valid = rate(50, ok).rate::<C, W, N>();
        assert!(valid.is_ok(), "{ok:?}, {what}: {}", valid.unwrap_err());
    }
    for bad in [start - NS, end + NS, end + C::TICK, Duration::MAX] {
        let err = rate(50, bad).rate::<C, W, N>().unwrap_err();
        assert_eq!(err.field(), Field::Window, "{bad:?}, {what}");
        assert_eq!(err.given(), Some(bad));
        assert_eq!(err.range(), Some(range.clone()), "{bad:?}, {what}");
        assert_eq!(err.in_ticks().value, C::ticks(bad));
        assert_eq!(
            err.to_string(),
            format!(
                "failure_rate.window = {bad:?} is out of range {start:?}..={end:?} ({:?} ticks, {N} buckets)",
                C::TICK
            )
        );
    }
}

#[test]
fn window_range_is_exact_on_every_clock_word_and_bucket_count() {
    window_range_is_exact::<MonotonicClock, W64, 8>();
    window_range_is_exact::<MonotonicClock, W32, 8>();
    window_range_is_exact::<MillisClock, W64, 2>();
    window_range_is_exact::<MillisClock, W32, 64>();
    window_range_is_exact::<ManualTime, W64, 16>();
    window_range_is_exact::<TenMicros, W64, 8>();
    window_range_is_exact::<TenMicros, W32, 32>();
    window_range_is_exact::<Nanos, W64, 8>();
    window_range_is_exact::<Nanos, W32, 4>();
}

/// The window's range in words: 8 buckets of milliseconds start past
/// 6 ms, since 6 ms converts to 7 ticks.
#[test]
fn a_short_window_names_its_range() {
    let err = rate(50, Duration::from_millis(6))
        .rate::<MillisClock, W32, 8>()
        .unwrap_err();
    assert_eq!(
        err.range(),
        Some(Duration::from_nanos(6_000_001)..=Duration::from_millis((1 << 60) - 1))
    );
    assert_eq!(
        err.to_string(),
        "failure_rate.window = 6ms is out of range 6.000001ms..=1152921504606846.975s (1ms ticks, 8 buckets)"
    );
    // The error's source is the core's, in ticks.
    let source = std::error::Error::source(&err).unwrap();
    assert_eq!(
        source.to_string(),
        "window = 7 is out of range 8..=1152921504606846976 ticks"
    );
}

/// A `static` rate breaker from `const` settings.
#[test]
fn a_static_rate_breaker() {
    const SETTINGS: Settings = Settings::new()
        .open_for(Duration::from_secs(5))
        .failure_rate(FailureRate::new(30, Duration::from_secs(60)).minimum_calls(10));
    static B: StdRateBreaker = RateBreaker::from_parts(
        tripword::ValidConfig::new(SETTINGS.to_config::<MonotonicClock>()),
        ValidRate::new(SETTINGS.to_rate::<MonotonicClock>()),
        MonotonicClock,
        (),
    );
    assert_eq!(B.rate().window(), 60_000_001);
    assert_eq!(B.rate().minimum_calls(), 10);
    assert_eq!(
        format!("{:?}", B.rate()),
        format!("{:?}", SETTINGS.build_rate().unwrap().rate())
    );
}

/// A registry of rate breakers from a default and per-key overrides, each
/// key's policy its own, errors naming the key.
#[test]
fn a_registry_of_rate_breakers_from_settings() {
    static CLOCK: ManualTime = ManualTime::new();
    let default = Settings::new()
        .open_for(Duration::from_secs(10))
        .failure_rate(FailureRate::new(50, Duration::from_secs(10)).minimum_calls(4));
    let settings = RegistrySettings::new(default).override_for(
        "tolerant",
        default.failure_rate(FailureRate::new(90, Duration::from_secs(10)).minimum_calls(4)),
    );
    let r: Registry<String, RateBreaker<&ManualTime, W32>> =
        Registry::from_rate_settings_on(&settings, &CLOCK, |_| ()).unwrap();
    for ok in [true, false, true, false] {
        for key in ["flaky", "tolerant"] {
            let _ = r.with(key, |b| b.call(|| if ok { Ok(()) } else { Err("down") }));
        }
    }
    assert_eq!(r.with("flaky", |b| b.status()), Status::Open);
    assert_eq!(r.with("tolerant", |b| b.status()), Status::Closed);
    assert_eq!(r.get("tolerant").rate().failure_rate(), 90);
    assert_eq!(r.get("flaky").rate().window(), 10_000_001);
    // Past the open time and the 32-bit word's coarser units.
    CLOCK.advance(Duration::from_secs(11));
    assert_eq!(r.with("flaky", |b| b.status()), Status::HalfOpen);

    // On the real clock, the 64-bit word, 8 buckets.
    let std: Registry<String, StdRateBreaker> = Registry::from_rate_settings(&settings).unwrap();
    assert_eq!(std.get("tolerant").rate().failure_rate(), 90);
    assert_eq!(
        std.get("other").breaker().breaker().config().open_for(),
        10_000_001
    );

    // Out of range, for the word or the buckets: the key is named.
    let bad = settings.override_for(
        "bulk",
        default.failure_rate(FailureRate::new(50, Duration::from_secs(1)).minimum_calls(2000)),
    );
    assert!(bad.check_rate::<MillisClock, W64, 8>().is_ok());
    let err = bad.check_rate::<MillisClock, W32, 8>().unwrap_err();
    assert_eq!(err.key().map(String::as_str), Some("bulk"));
    assert_eq!(
        err.to_string(),
        r#"override for "bulk": failure_rate.minimum_calls = 2000 is out of range 1..=1023 (32-bit word)"#
    );
    let err = Registry::<String, RateBreaker<&ManualTime, W32>>::from_rate_settings_on(
        &bad,
        &CLOCK,
        |_| (),
    )
    .unwrap_err();
    assert_eq!(err.key().map(String::as_str), Some("bulk"));
    let short = RegistrySettings::<String>::new(
        default.failure_rate(FailureRate::new(50, Duration::from_micros(7))),
    );
    assert!(short.check_rate::<MonotonicClock, W64, 4>().is_ok());
    let err = short.check_rate::<MonotonicClock, W64, 16>().unwrap_err();
    assert_eq!(err.key(), None);
    assert_eq!(err.settings_error().field(), Field::Window);
    // The consecutive breakers' check does not read the policy.
    assert!(short.check::<MonotonicClock, W64>().is_ok());
}

#[cfg(feature = "serde")]
mod serde {
    use super::*;

    /// `failure_rate = { percent, window, minimum_calls }`, the window in
    /// human form, and back.
    #[test]
    fn the_failure_rate_table_round_trips() {
        let s: Settings = toml::from_str(
            r#"
            open_for = "30s"
            failure_rate = { percent = 50, window = "10s", minimum_calls = 20 }
            "#,
        )
        .unwrap();
        let built = Settings::new()
            .open_for(Duration::from_secs(30))
            .failure_rate(FailureRate::new(50, Duration::from_secs(10)).minimum_calls(20));
        assert_eq!(s, built);

        let s =
            built.failure_rate(FailureRate::new(25, Duration::from_millis(1500)).minimum_calls(7));
        let text = toml::to_string(&s).unwrap();
        assert!(text.contains("[failure_rate]"), "{text}");
        assert!(text.contains(r#"window = "1s 500ms""#), "{text}");
        assert!(text.contains("percent = 25"), "{text}");
        assert_eq!(toml::from_str::<Settings>(&text).unwrap(), s);
        let json = serde_json::to_string(&s).unwrap();
        assert!(
            json.contains(r#""failure_rate":{"percent":25,"window":"1s 500ms","minimum_calls":7}"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Settings>(&json).unwrap(), s);

        // Unset, it is not written.
        let text = toml::to_string(&Settings::new()).unwrap();
        assert!(!text.contains("failure_rate"), "{text}");
        assert_eq!(toml::from_str::<Settings>(&text).unwrap(), Settings::new());
    }

    /// Every key of the table is optional (the defaults'); an unknown key,
    /// or a malformed window, is the format's error naming it; a value out
    /// of range is the builder's error.
    #[test]
    fn the_failure_rate_table_keys() {
        let s: Settings = toml::from_str("failure_rate = { percent = 30 }").unwrap();
        assert_eq!(s.failure_rate, Some(FailureRate::default().percent(30)));
        let s: Settings = toml::from_str("[failure_rate]").unwrap();
        assert_eq!(s.failure_rate, Some(FailureRate::default()));

        let err = toml::from_str::<Settings>("failure_rate = { precent = 30 }").unwrap_err();
        assert!(err.to_string().contains("unknown field `precent`"), "{err}");
        let err = toml::from_str::<Settings>(r#"failure_rate = { window = "soon" }"#).unwrap_err();
        assert!(err.to_string().contains("window"), "{err}");
        let err = toml::from_str::<Settings>(r#"failure_rate = { percent = -1 }"#).unwrap_err();
        assert!(err.to_string().contains("percent"), "{err}");

        let s: Settings =
            toml::from_str(r#"failure_rate = { percent = 0, window = "1s" }"#).unwrap();
        let err = s.build_rate().err().unwrap();
        assert_eq!(
            err.to_string(),
            "failure_rate.percent = 0 is out of range 1..=100"
        );
    }

    /// An override's `failure_rate` table names only the keys it changes:
    /// the others are the default's policy, or `FailureRate::default()`'s.
    #[test]
    fn overrides_patch_the_failure_rate() {
        let settings: RegistrySettings = toml::from_str(
            r#"
            [default]
            open_for = "30s"
            failure_rate = { percent = 50, window = "1m", minimum_calls = 100 }

            [overrides."batch.internal"]
            failure_rate = { percent = 90 }

            [overrides."api.internal"]
            failure_threshold = 1
            "#,
        )
        .unwrap();
        let default = FailureRate::new(50, Duration::from_secs(60)).minimum_calls(100);
        assert_eq!(settings.default_settings().failure_rate, Some(default));
        assert_eq!(
            settings.settings_for("batch.internal").failure_rate,
            Some(default.percent(90))
        );
        assert_eq!(
            settings.settings_for("batch.internal").open_for,
            Duration::from_secs(30)
        );
        assert_eq!(
            settings.settings_for("api.internal").failure_rate,
            Some(default)
        );
        let hosts: Registry<String, StdRateBreaker> =
            Registry::from_rate_settings(&settings).unwrap();
        assert_eq!(hosts.get("batch.internal").rate().failure_rate(), 90);
        assert_eq!(hosts.get("batch.internal").rate().minimum_calls(), 100);

        // No default policy: the override's keys on `FailureRate::default()`.
        let settings: RegistrySettings = toml::from_str(
            r#"
            [overrides.a]
            failure_rate = { window = "5s" }
            "#,
        )
        .unwrap();
        assert_eq!(settings.default_settings().failure_rate, None);
        assert_eq!(
            settings.settings_for("a").failure_rate,
            Some(FailureRate::default().window(Duration::from_secs(5)))
        );
        let err = toml::from_str::<RegistrySettings>(
            r#"
            [overrides.a]
            failure_rate = { windows = "5s" }
            "#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown field `windows`"), "{err}");
    }
}
