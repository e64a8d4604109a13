//! `Settings` from config files (feature `serde`): human durations, every
//! key optional, unknown keys and malformed values refused by the format
//! with the key named, and values out of range refused by `config`/`build`
//! with exactly the builder's `SettingsError`.

use std::time::Duration;

use tripword::{Field, Outcome, W32, W64};
use tripword_std::{MillisClock, MonotonicClock, Settings};

fn from_toml(text: &str) -> Result<Settings, toml::de::Error> {
    toml::from_str(text)
}

#[test]
fn every_key_in_human_form() {
    let s = from_toml(
        r#"
        failure_threshold = 3
        open_for = "250ms"
        exponential_backoff = "1m 30s"
        probe_timeout = "2s"
        horizon = "2h"
        abandon_as = "ignored"
        "#,
    )
    .unwrap();
    let built = Settings::new()
        .failure_threshold(3)
        .open_for(Duration::from_millis(250))
        .exponential_backoff(Duration::from_secs(90))
        .probe_timeout(Duration::from_secs(2))
        .horizon(Duration::from_secs(7200))
        .abandon_as(Outcome::Ignored);
    assert_eq!(s, built);
    assert_eq!(
        s.config::<MillisClock, W32>(),
        built.config::<MillisClock, W32>()
    );
}

#[test]
fn missing_keys_are_the_defaults() {
    assert_eq!(from_toml("").unwrap(), Settings::new());
    let s: Settings = serde_json::from_str(r#"{"open_for": "30s"}"#).unwrap();
    assert_eq!(s, Settings::new().open_for(Duration::from_secs(30)));
}

#[test]
fn round_trips_through_serialization() {
    let s = Settings::new()
        .failure_threshold(7)
        .open_for(Duration::from_millis(1500))
        .exponential_backoff(Duration::from_secs(60))
        .abandon_as(Outcome::Success);
    let text = toml::to_string(&s).unwrap();
    assert!(text.contains(r#"open_for = "1s 500ms""#), "{text}");
    assert!(text.contains(r#"exponential_backoff = "1m""#), "{text}");
    assert!(!text.contains("horizon"), "{text}");
    assert_eq!(from_toml(&text).unwrap(), s);
    let json = serde_json::to_string(&s).unwrap();
    assert_eq!(serde_json::from_str::<Settings>(&json).unwrap(), s);
}

#[test]
fn malformed_values_name_their_key() {
    for (text, key) in [
        (r#"open_for = "30 parsecs""#, "open_for"),
        (r#"probe_timeout = 5"#, "probe_timeout"),
        (r#"failure_threshold = -1"#, "failure_threshold"),
        (r#"abandon_as = "maybe""#, "abandon_as"),
        (r#"exponential_backoff = "soon""#, "exponential_backoff"),
    ] {
        let err = from_toml(text).unwrap_err().to_string();
        assert!(err.contains(key), "{text}: {err}");
    }
    let err = from_toml(r#"open_four = "1s""#).unwrap_err().to_string();
    assert!(err.contains("unknown field `open_four`"), "{err}");
}

/// Out of range: the same error as the builder's, field, value, range and
/// message, for each field, on each width.
#[test]
fn out_of_range_gives_the_builders_error() {
    let cases = [
        (
            "failure_threshold = 0",
            Settings::new().failure_threshold(0),
            Field::FailureThreshold,
        ),
        (
            r#"open_for = "0s""#,
            Settings::new().open_for(Duration::ZERO),
            Field::OpenFor,
        ),
        (
            r#"probe_timeout = "0ms""#,
            Settings::new().probe_timeout(Duration::ZERO),
            Field::ProbeTimeout,
        ),
        (
            "open_for = \"1ms\"\nexponential_backoff = \"1h\"",
            Settings::new()
                .open_for(Duration::from_millis(1))
                .exponential_backoff(Duration::from_secs(3600)),
            Field::BackoffCap,
        ),
        (
            r#"horizon = "400days""#,
            Settings::new().horizon(Duration::from_secs(400 * 86_400)),
            Field::Horizon,
        ),
    ];
    for (text, built, field) in cases {
        let read = from_toml(text).unwrap();
        assert_eq!(read, built, "{text}");
        let from_file = read.config::<MillisClock, W32>().unwrap_err();
        assert_eq!(from_file, built.config::<MillisClock, W32>().unwrap_err());
        assert_eq!(from_file.field(), field, "{text}");
        assert_eq!(
            read.build_on::<MonotonicClock, W64, ()>(MonotonicClock, ())
                .err(),
            built
                .build_on::<MonotonicClock, W64, ()>(MonotonicClock, ())
                .err(),
        );
    }
    let err = from_toml("failure_threshold = 5000")
        .unwrap()
        .config::<MillisClock, W32>()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "failure_threshold = 5000 is out of range 1..=4095 (32-bit word)"
    );
}
