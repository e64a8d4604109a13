//! `RegistrySettings` from config files (feature `serde`): a `default`
//! table and `overrides` by key, each override taking the default's values
//! for the keys it leaves out; malformed values and unknown keys refused by
//! the format; values out of range refused when the registry is built, the
//! error naming the key.

use std::time::Duration;

use serde::Deserialize;
use tripword::{Breaker, Field, Outcome, W32, W64};
use tripword_std::clock::ManualTime;
use tripword_std::{MillisClock, MonotonicClock, Registry, RegistrySettings, Settings};

static CLOCK: ManualTime = ManualTime::new();

const TOML: &str = r#"
    [default]
    failure_threshold = 5
    open_for = "30s"
    exponential_backoff = "5m"

    [overrides."api.example.com"]
    failure_threshold = 1

    [overrides."search.example.com"]
    open_for = "2s"
    probe_timeout = "500ms"
    abandon_as = "ignored"
"#;

const JSON: &str = r#"{
    "default": { "failure_threshold": 5, "open_for": "30s", "exponential_backoff": "5m" },
    "overrides": {
        "api.example.com": { "failure_threshold": 1 },
        "search.example.com": { "open_for": "2s", "probe_timeout": "500ms", "abandon_as": "ignored" }
    }
}"#;

fn default() -> Settings {
    Settings::new()
        .failure_threshold(5)
        .open_for(Duration::from_secs(30))
        .exponential_backoff(Duration::from_secs(300))
}

#[test]
fn overrides_take_the_defaults_for_the_keys_they_leave_out() {
    let from_toml: RegistrySettings = toml::from_str(TOML).unwrap();
    let from_json: RegistrySettings = serde_json::from_str(JSON).unwrap();
    let built = RegistrySettings::new(default())
        .override_for("api.example.com", default().failure_threshold(1))
        .override_for(
            "search.example.com",
            default()
                .open_for(Duration::from_secs(2))
                .probe_timeout(Duration::from_millis(500))
                .abandon_as(Outcome::Ignored),
        );
    assert_eq!(from_toml, built);
    assert_eq!(from_json, built);
    // In the file's order.
    let keys: Vec<&str> = from_toml
        .overrides()
        .iter()
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(keys, ["api.example.com", "search.example.com"]);
    assert_eq!(from_toml.settings_for("db.internal"), &default());
    assert_eq!(
        from_toml
            .settings_for("search.example.com")
            .exponential_backoff,
        Some(Duration::from_secs(300))
    );
}

#[test]
fn a_registry_from_a_file_gives_each_key_its_config() {
    let settings: RegistrySettings = toml::from_str(TOML).unwrap();
    let r: Registry<String, Breaker<&ManualTime, W32>> =
        Registry::from_settings_on(&settings, &CLOCK, |_| ()).unwrap();
    // Each key's config, before its breaker is made: its settings'.
    let config_for = |key: &str| {
        settings
            .settings_for(key)
            .config::<ManualTime, W32>()
            .unwrap()
    };
    assert_eq!(config_for("api.example.com").failure_threshold(), 1);
    assert_eq!(config_for("search.example.com").open_for(), 2_000_001);
    assert_eq!(config_for("search.example.com").abandon(), Outcome::Ignored);
    let template = settings
        .default_settings()
        .config::<ManualTime, W32>()
        .unwrap();
    assert_eq!(config_for("db.internal"), template);
    assert_eq!(template.failure_threshold(), 5);
    // The breakers made follow them.
    assert_eq!(
        r.get("search.example.com").config().abandon(),
        Outcome::Ignored
    );
    assert_eq!(r.get("db.internal").config(), &template);
    assert_eq!(r.get("api.example.com").config().failure_threshold(), 1);
    assert_eq!(r.get("db.internal").config().failure_threshold(), 5);
    assert_eq!(r.get("search.example.com").config().open_for(), 2_000_001);
}

#[test]
fn missing_tables_are_the_defaults() {
    assert_eq!(
        toml::from_str::<RegistrySettings>("").unwrap(),
        RegistrySettings::new(Settings::new())
    );
    let only: RegistrySettings = toml::from_str(
        r#"
        [overrides.a]
        failure_threshold = 2
        "#,
    )
    .unwrap();
    assert_eq!(only.default_settings(), &Settings::new());
    assert_eq!(
        only.settings_for("a"),
        &Settings::new().failure_threshold(2)
    );
}

#[test]
fn an_override_out_of_range_names_its_key() {
    let settings: RegistrySettings = toml::from_str(
        r#"
        [default]
        failure_threshold = 3

        [overrides."ok.example.com"]
        failure_threshold = 4000

        [overrides."bulk.example.com"]
        failure_threshold = 5000

        [overrides."late.example.com"]
        failure_threshold = 0
        "#,
    )
    .unwrap();
    // Fits 64 bits except "late"; 32 bits refuse "bulk" first (file order).
    let err = Registry::<String>::from_settings(&settings).unwrap_err();
    assert_eq!(err.key().map(String::as_str), Some("late.example.com"));
    assert_eq!(
        err.to_string(),
        r#"override for "late.example.com": failure_threshold = 0 is out of range 1..=65535 (64-bit word)"#
    );
    let err = settings.check::<MillisClock, W32>().unwrap_err();
    assert_eq!(err.key().map(String::as_str), Some("bulk.example.com"));
    assert_eq!(err.settings_error().field(), Field::FailureThreshold);
    assert_eq!(
        err.to_string(),
        r#"override for "bulk.example.com": failure_threshold = 5000 is out of range 1..=4095 (32-bit word)"#
    );
    // The source is the `SettingsError`.
    let source = std::error::Error::source(&err).unwrap();
    assert_eq!(
        source.to_string(),
        "failure_threshold = 5000 is out of range 1..=4095 (32-bit word)"
    );
}

#[test]
fn the_default_out_of_range_is_named_so() {
    let settings: RegistrySettings = toml::from_str(
        r#"
        [default]
        probe_timeout = "0s"
        "#,
    )
    .unwrap();
    let err = settings.check::<MonotonicClock, W64>().unwrap_err();
    assert_eq!(err.key(), None);
    assert_eq!(
        err.to_string(),
        "default: probe_timeout = 0ns is out of range 1ns..=1152921504606.846975s (1µs ticks, 64-bit word)"
    );
}

#[test]
fn malformed_values_and_unknown_keys_are_refused_by_the_format() {
    let malformed = toml::from_str::<RegistrySettings>(
        r#"
        [overrides."api.example.com"]
        open_for = "30 parsecs"
        "#,
    )
    .unwrap_err()
    .to_string();
    assert!(malformed.contains("open_for"), "{malformed}");
    let unknown = toml::from_str::<RegistrySettings>(
        r#"
        [overrides."api.example.com"]
        open_four = "30s"
        "#,
    )
    .unwrap_err()
    .to_string();
    assert!(unknown.contains("open_four"), "{unknown}");
    let unknown = toml::from_str::<RegistrySettings>("[defaults]\nfailure_threshold = 1")
        .unwrap_err()
        .to_string();
    assert!(unknown.contains("defaults"), "{unknown}");
    let unknown =
        serde_json::from_str::<RegistrySettings>(r#"{"default": {"threshold": 1}}"#).unwrap_err();
    assert!(unknown.to_string().contains("threshold"), "{unknown}");
    let twice = serde_json::from_str::<RegistrySettings>(
        r#"{"overrides": {"a": {"failure_threshold": 1}, "a": {"failure_threshold": 2}}}"#,
    )
    .unwrap_err();
    assert!(twice.to_string().contains("appears twice"), "{twice}");
}

/// Keys of the registry's own type: an enum of dependencies.
#[test]
fn keys_of_another_type() {
    #[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Dependency {
        Payments,
        Search,
    }
    let settings: RegistrySettings<Dependency> = toml::from_str(
        r#"
        [overrides.payments]
        failure_threshold = 1
        "#,
    )
    .unwrap();
    let r: Registry<Dependency> = Registry::from_settings(&settings).unwrap();
    assert_eq!(r.get(&Dependency::Payments).config().failure_threshold(), 1);
    assert_eq!(r.get(&Dependency::Search).config().failure_threshold(), 5);
    let bad: RegistrySettings<Dependency> =
        toml::from_str("[overrides.search]\nfailure_threshold = 0").unwrap();
    let err = Registry::from_settings(&bad)
        .map(|_: Registry<Dependency>| ())
        .unwrap_err();
    assert_eq!(err.key(), Some(&Dependency::Search));
    assert!(
        err.to_string().starts_with("override for Search: "),
        "{err}"
    );
    assert!(toml::from_str::<RegistrySettings<Dependency>>("[overrides.billing]").is_err());
}
