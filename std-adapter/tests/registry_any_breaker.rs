//! `Registry::new`: the registry of any breaker, made per key by a factory
//! (here `tripword`'s failure-rate breaker, and breakers from per-key
//! settings), with the same lookups, bound and eviction whatever the
//! breaker; and `Registry::from_settings` from per-key settings.
//! Hand-moved clocks; no timing assertions.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tripword::clock::ManualClock;
use tripword::rate::{Rate, RateBreaker};
use tripword::{Breaker, Config, Status, W64};
use tripword_std::clock::ManualTime;
use tripword_std::registry::{Entry, Lookup};
use tripword_std::{BreakerExt, CircuitBreaker, Registry, RegistrySettings, Settings};

static CLOCK: ManualClock = ManualClock::new(0);
static TIME: ManualTime = ManualTime::new();

type Rates = Registry<String, RateBreaker<&'static ManualClock>>;

/// Trips at half the calls failed, once 4 were made in a window.
fn rates() -> Rates {
    Registry::new(|_: &String| {
        RateBreaker::new(
            Config::new().open_for(100),
            Rate::new().failure_rate(50).minimum_calls(4).window(1_000),
            &CLOCK,
        )
        .unwrap()
    })
}

#[test]
fn a_registry_of_rate_breakers() {
    let r = rates();
    for ok in [true, false, true, false] {
        let _ = r.with("flaky", |b| {
            b.call(|| if ok { Ok(()) } else { Err("down") })
        });
        let _ = r.with("steady", |b| b.call(|| Ok::<_, ()>(())));
    }
    assert_eq!(r.with("flaky", |b| b.status()), Status::Open);
    assert_eq!(r.with("steady", |b| b.status()), Status::Closed);
    // An entry is a breaker: through `call` on the handle from `get`.
    let flaky: Arc<Entry<String, RateBreaker<&ManualClock>>> = r.get("flaky");
    assert_eq!(flaky.key(), "flaky");
    assert!(flaky.call(|| Ok::<_, ()>(())).unwrap_err().is_open());
    assert_eq!(r.get("steady").call(|| Ok::<_, ()>(7)), Ok(7));
    assert_eq!(flaky.breaker().rate().minimum_calls(), 4);
    assert_eq!(r.len(), 2);
    assert!(!r.is_empty());
    assert!(r.peek("other").is_none());
}

#[test]
fn the_factory_runs_once_per_key_and_eviction_keeps_what_is_not_closed() {
    let made = Arc::new(AtomicUsize::new(0));
    let counter = made.clone();
    let r = Registry::new(move |_: &u32| {
        counter.fetch_add(1, Ordering::Relaxed);
        Breaker::new(Config::new().failure_threshold(1).open_for(100), &CLOCK)
    })
    .with_capacity(4);
    assert_eq!(r.capacity(), 4);
    for k in 0..4 {
        r.with(&k, |_| ());
        r.with(&k, |_| ());
    }
    assert_eq!(made.load(Ordering::Relaxed), 4);
    r.with(&0, |b| b.force_open());
    assert_eq!(r.evict_idle(), 0); // all used in this period
    r.with(&1, |_| ());
    assert_eq!(r.evict_idle(), 2); // 2 and 3; not 0, which is open
    assert!(r.peek(&0).is_some() && r.peek(&1).is_some());
    // The bound holds; the open breaker is kept.
    for k in 10..20 {
        r.with(&k, |_| ());
        assert!(r.len() <= 4);
    }
    assert!(r.peek(&0).is_some(), "the open breaker is kept");
    let mut open = 0;
    r.for_each(|e| open += usize::from(e.status() == Status::Open));
    assert_eq!(open, 1);
    let shown = format!("{r:?}");
    assert_eq!(
        shown,
        format!("Registry {{ len: {}, capacity: 4, .. }}", r.len())
    );
}

#[test]
fn a_local_handle_on_a_registry_of_rate_breakers() {
    let r = rates();
    let mut local = r.local();
    local.with("a", |b| b.breaker().breaker().force_open());
    assert_eq!(r.with("a", |b| b.status()), Status::Open);
    r.with("b", |_| ()); // made elsewhere
    assert!(std::ptr::eq(
        local.with("b", |e| std::ptr::from_ref(e.breaker())),
        std::ptr::from_ref(r.get("b").breaker())
    ));
    assert_eq!(format!("{local:?}"), "Local { generation: 2, .. }");
}

/// A registry of any breaker is a `Lookup`, by the key or a borrowed form
/// of it.
#[test]
fn every_registry_is_a_lookup() {
    fn trip<R: Lookup<str>>(registry: &R, key: &str) -> Status {
        let b = registry.lookup(key);
        while b.status() == Status::Closed {
            let _ = b.call(|| Err::<(), _>("down"));
        }
        b.status()
    }
    let config = Config::new().failure_threshold(2).check::<W64>().unwrap();
    let plain: Registry<String, Breaker<&ManualClock>> =
        Registry::new(move |_: &String| Breaker::from_parts(config, &CLOCK, ()));
    assert_eq!(trip(&plain, "x"), Status::Open);
    assert_eq!(trip(&rates(), "x"), Status::Open);
    assert_eq!(trip(&plain, "y"), Status::Open);
    assert_eq!(plain.len(), 2);
}

/// A factory of any breaker reads each key's settings from a
/// `RegistrySettings` it keeps.
#[test]
fn a_factory_reads_each_keys_settings() {
    let default = Settings::new()
        .failure_threshold(3)
        .open_for(Duration::from_secs(10));
    let settings: RegistrySettings = RegistrySettings::new(default)
        .override_for("fragile", default.failure_threshold(1))
        .override_for("slow", default.open_for(Duration::from_secs(60)));
    settings.check::<ManualTime, W64>().unwrap();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let r = Registry::new(move |key: &String| {
        log.lock().unwrap().push(key.clone());
        let s: &Settings = settings.settings_for(key);
        s.build_on::<_, W64, _>(&TIME, ()).unwrap()
    });
    assert_eq!(r.get("fragile").config().failure_threshold(), 1);
    assert_eq!(r.get("slow").config().open_for(), 60_000_001);
    assert_eq!(r.get("other").config().failure_threshold(), 3);
    let _ = r.with("fragile", |b| b.call(|| Err::<(), _>("down")));
    assert_eq!(CircuitBreaker::status(&*r.get("fragile")), Status::Open);
    assert_eq!(*seen.lock().unwrap(), ["fragile", "slow", "other"]);
}

#[test]
fn a_registry_from_settings_and_its_errors() {
    let default = Settings::new().failure_threshold(3);
    let settings = RegistrySettings::new(default).override_for("one", default.failure_threshold(1));
    let r: Registry<String, Breaker<&ManualTime>> =
        Registry::from_settings_on(&settings, &TIME, |_| ()).unwrap();
    assert!(r.is_empty(), "nothing made before a lookup");
    let shown = format!("{:?}", r.with_capacity(9));
    assert_eq!(shown, "Registry { len: 0, capacity: 9, .. }");
    let r: Registry<String, Breaker<&ManualTime>> =
        Registry::from_settings_on(&settings, &TIME, |_| ()).unwrap();
    assert_eq!(r.get("one").config().failure_threshold(), 1);
    assert_eq!(
        r.get("two").config(),
        &default.config::<ManualTime, W64>().unwrap()
    );

    // The default first, then the overrides in order.
    let bad = RegistrySettings::new(default)
        .override_for("a", default.open_for(Duration::ZERO))
        .override_for("b", default.failure_threshold(0));
    let err = Registry::<String>::from_settings(&bad).unwrap_err();
    assert_eq!(err.key().map(String::as_str), Some("a"));
    assert!(
        err.to_string()
            .starts_with(r#"override for "a": open_for = 0ns"#),
        "{err}"
    );
    let bad = bad.override_for("a", default); // replaced: now in range
    let err = Registry::<String>::from_settings(&bad).unwrap_err();
    assert_eq!(err.key().map(String::as_str), Some("b"));
    let worse = RegistrySettings::new(default.failure_threshold(0))
        .override_for("b", default.failure_threshold(0));
    let err = Registry::<String>::from_settings(&worse).unwrap_err();
    assert_eq!(err.key(), None);
    assert_eq!(
        err.to_string(),
        "default: failure_threshold = 0 is out of range 1..=65535 (64-bit word)"
    );
}

/// An entry answers with its breaker's name, so a registry of named
/// breakers rejects with the name (`NamedBreaker`: feature `macros`).
#[cfg(feature = "macros")]
#[test]
fn an_entry_names_its_breaker() {
    use tripword_std::NamedBreaker;
    let r = Registry::new(|_: &String| {
        NamedBreaker::<(), _, W64>::new("search", Settings::new().failure_threshold(1), &TIME, ())
    });
    let entry = r.get("eu");
    assert_eq!(CircuitBreaker::name(&entry), Some("search"));
    let _ = entry.call(|| Err::<(), _>("down"));
    let err = entry.call(|| Ok::<_, &str>(())).unwrap_err();
    assert_eq!(err.rejected().and_then(|r| r.name()), Some("search"));
    assert!(
        err.to_string()
            .starts_with("circuit 'search' open: call not admitted (retry after ")
    );
    // A registry of unnamed breakers: no name.
    let plain = Registry::new(|_: &String| Breaker::new(Config::new(), &CLOCK));
    assert_eq!(CircuitBreaker::name(&plain.get("eu")), None);
}
