//! `Registry`'s accessors on a registry of `tripword`'s own breakers: every
//! method answers for the map, each entry's breaker keeps the config it was
//! made from, and a registry of any breaker looks keys up for the tower
//! layer (`Lookup`).

use std::sync::Arc;
use tripword::clock::ManualClock;
use tripword::{Breaker, Config, Outcome, Status, W64};
use tripword_std::registry::Lookup;
use tripword_std::{CircuitBreaker, Registry, RegistrySettings, Settings};

static CLOCK: ManualClock = ManualClock::new(0);

fn registry(threshold: u32) -> Registry<String, Breaker<&'static ManualClock, W64>> {
    let config = Config::new()
        .failure_threshold(threshold)
        .open_for(100)
        .check::<W64>()
        .unwrap();
    Registry::new(move |_: &String| Breaker::from_parts(config, &CLOCK, ()))
}

#[test]
fn the_accessors_answer_for_the_map() {
    let r = registry(2).with_capacity(3);
    assert_eq!(r.capacity(), 3);
    assert!(r.is_empty());
    assert_eq!(r.len(), 0);
    r.with("a", |_| ());
    let b = r.get("b");
    assert_eq!(b.key(), "b");
    assert_eq!(r.len(), 2);
    assert!(!r.is_empty());
    assert!(r.peek("a").is_some());
    assert!(r.peek("c").is_none());
    let mut seen = Vec::new();
    r.for_each(|e| seen.push(e.key().clone()));
    seen.sort();
    assert_eq!(seen, ["a", "b"]);
    let mut local = r.local();
    local.with("c", |e| assert_eq!(e.key(), "c"));
    assert_eq!(r.len(), 3);
    assert_eq!(r.get("c").config().failure_threshold(), 2);
    assert_eq!(r.get("a").config().failure_threshold(), 2);
    // The bound: a fourth key evicts one.
    r.with("d", |_| ());
    assert!(r.len() <= 3);
    let shown = format!("{r:?}");
    assert!(shown.starts_with("Registry { len: "), "{shown}");
    assert!(shown.contains("capacity: 3"), "{shown}");
}

#[test]
fn idle_entries_are_evicted() {
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
fn registries_of_any_breaker_look_keys_up() {
    let r = registry(1);
    let entry = Lookup::<str>::lookup(&r, "x");
    let t = entry.acquire().unwrap();
    entry.release(t, Outcome::Failure);
    assert_eq!(r.get("x").status(), Status::Open);
    let of: Registry<String, Arc<tripword::Breaker<&'static ManualClock>>> =
        Registry::new(|_: &String| {
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
fn overrides_are_applied() {
    let default = Settings::new().failure_threshold(4);
    let settings = RegistrySettings::new(default)
        .override_for("one", default.failure_threshold(1))
        .override_for("two", default.failure_threshold(2));
    let r: Registry<String> = Registry::from_settings(&settings).unwrap();
    assert_eq!(r.get("one").config().failure_threshold(), 1);
    assert_eq!(r.get("two").config().failure_threshold(), 2);
    assert_eq!(r.get("other").config().failure_threshold(), 4);
    assert_eq!(r.peek("two").unwrap().config().failure_threshold(), 2);
    assert_eq!(
        settings.settings_for("two").failure_threshold,
        2,
        "a key's settings before its breaker is made"
    );
}
