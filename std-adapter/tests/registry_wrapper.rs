//! `Registry` (the registry of `tripword`'s own breakers) is a thin wrapper
//! over the generic `RegistryOf`: every method answers as the map it wraps,
//! and both registries look keys up for the tower layer (`Lookup`).

use std::sync::Arc;
use tripword::clock::ManualClock;
use tripword::{Config, Outcome, Status, W64};
use tripword_std::registry::Lookup;
use tripword_std::{CircuitBreaker, Registry, RegistryOf, RegistrySettings, Settings};

static CLOCK: ManualClock = ManualClock::new(0);

fn registry(threshold: u32) -> Registry<String, (), &'static ManualClock, W64> {
    let config = Config::new()
        .failure_threshold(threshold)
        .open_for(100)
        .check::<W64>()
        .unwrap();
    Registry::from_parts(config, &CLOCK, |_: &String| ())
}

#[test]
fn the_wrapper_answers_as_its_map() {
    let r = registry(2).with_capacity(3);
    assert_eq!(r.capacity(), 3);
    assert_eq!(r.as_registry_of().capacity(), 3);
    assert!(r.is_empty());
    assert_eq!(r.len(), 0);
    r.with("a", |_| ());
    let b = r.get("b");
    assert_eq!(b.key(), "b");
    assert_eq!(r.len(), 2);
    assert!(!r.is_empty());
    assert_eq!(r.as_registry_of().len(), 2);
    assert!(r.peek("a").is_some());
    assert!(r.peek("c").is_none());
    let mut seen = Vec::new();
    r.for_each(|e| seen.push(e.key().clone()));
    seen.sort();
    assert_eq!(seen, ["a", "b"]);
    let mut local = r.local();
    local.with("c", |e| assert_eq!(e.key(), "c"));
    assert_eq!(r.len(), 3);
    assert_eq!(r.config().failure_threshold(), 2);
    assert_eq!(r.config_for("a").failure_threshold(), 2);
    // The bound: a fourth key evicts one.
    r.with("d", |_| ());
    assert!(r.len() <= 3);
    let shown = format!("{r:?}");
    assert!(shown.starts_with("Registry { len: "), "{shown}");
    assert!(shown.contains("capacity: 3"), "{shown}");
    assert!(shown.contains("overrides: 0"), "{shown}");
}

#[test]
fn idle_entries_are_evicted_through_the_wrapper() {
    let r = registry(1);
    r.with("a", |_| ());
    r.with("b", |_| ());
    assert_eq!(r.evict_idle(), 0);
    r.with("a", |_| ());
    assert_eq!(r.evict_idle(), 1);
    assert!(r.peek("b").is_none());
    assert_eq!(r.len(), 1);
}

#[test]
fn both_registries_look_keys_up() {
    let r = registry(1);
    let entry = Lookup::<str>::lookup(&r, "x");
    let t = entry.acquire().unwrap();
    entry.release(t, Outcome::Failure);
    assert_eq!(r.get("x").status(), Status::Open);
    let of: RegistryOf<String, Arc<tripword::Breaker<&'static ManualClock>>> =
        RegistryOf::with_factory(|_: &String| {
            Arc::new(tripword::Breaker::new(
                Config::new().failure_threshold(1),
                &CLOCK,
            ))
        });
    let e = Lookup::<str>::lookup(&of, "y");
    assert_eq!(CircuitBreaker::status(&e), Status::Closed);
    assert_eq!(of.len(), 1);
}

#[test]
fn overrides_are_counted_and_applied() {
    let default = Settings::new().failure_threshold(4);
    let settings = RegistrySettings::new(default)
        .override_for("one", default.failure_threshold(1))
        .override_for("two", default.failure_threshold(2));
    let r: Registry<String> = Registry::from_settings(&settings).unwrap();
    assert_eq!(r.config_for("one").failure_threshold(), 1);
    assert_eq!(r.config_for("two").failure_threshold(), 2);
    assert_eq!(r.config_for("other").failure_threshold(), 4);
    assert_eq!(r.get("two").config().failure_threshold(), 2);
    assert!(format!("{r:?}").contains("overrides: 2"));
}
