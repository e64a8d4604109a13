//! Group control of a registry: every breaker forced open, open for a
//! while, or closed by one call; the breakers made afterwards get the
//! group state until it ends; a key made while the group call runs is
//! never left out; the `Force` trait on every breaker form. Hand-moved
//! clocks (one per test); the only real time read is the registry's, for
//! what is left of a timed hold, and the assertions hold however long
//! the test takes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tripword::rate::{Rate, RateBreaker};
use tripword::{Breaker, Config, Status, W64};
use tripword_std::registry::{Entry, Force};
use tripword_std::{CircuitBreaker, ManualTime, Registry};

type Timed = Breaker<&'static ManualTime>;

/// A registry of breakers on a clock of its own (5 failures trip, open
/// for 10 s).
fn registry() -> (Registry<String, Timed>, &'static ManualTime) {
    let clock: &'static ManualTime = Box::leak(Box::new(ManualTime::new()));
    let config = Config::new()
        .failure_threshold(5)
        .open_for(10_000_000)
        .check::<W64>()
        .unwrap();
    let r = Registry::new(move |_: &String| Breaker::from_parts(config, clock, ()));
    (r, clock)
}

fn held(b: &impl CircuitBreaker) -> bool {
    b.health().forced
}

#[test]
fn force_open_all_holds_every_breaker_and_the_ones_made_after() {
    let (r, clock) = registry();
    for k in ["a", "b", "c"] {
        r.with(k, |_| ());
    }
    assert_eq!(r.force_open_all(), 3);
    r.for_each(|e| assert!(held(e), "{}", e.key()));
    // A key first looked up during the hold is held too.
    assert!(held(&*r.get("new")));
    assert!(r.get("new").acquire().is_err());
    // No timer ends it.
    clock.advance(Duration::from_secs(3_600));
    assert_eq!(r.with("a", |b| b.status()), Status::Open);
    // Forced breakers are not forgotten as idle.
    r.evict_idle();
    assert_eq!(r.evict_idle(), 0);
    assert_eq!(r.force_close_all(), 4);
    r.for_each(|e| assert!(e.health().is_blank(), "{}", e.key()));
    assert_eq!(r.get("after").status(), Status::Closed);
    assert_eq!(r.force_close_all(), 5);
}

#[test]
fn force_open_all_for_opens_for_a_while_and_new_keys_for_what_is_left() {
    let (r, clock) = registry();
    r.with("a", |_| ());
    assert_eq!(r.force_open_all_for(Duration::from_secs(600)), 1);
    let a = r.get("a");
    assert_eq!(a.status(), Status::Open);
    assert!(!held(&*a), "a timer ends it: not held");
    // Made during the hold: open, for at most what was asked.
    let b = r.get("b");
    assert_eq!(b.status(), Status::Open);
    clock.advance(Duration::from_secs(601));
    assert_eq!(a.status(), Status::HalfOpen);
    assert_eq!(b.status(), Status::HalfOpen);
    // Ended early by hand: new keys are made closed.
    assert_eq!(r.force_close_all(), 2);
    assert_eq!(r.get("c").status(), Status::Closed);
}

/// A timed hold that is over (here one of no length) applies to no
/// breaker made after it.
#[test]
fn a_timed_hold_that_is_over_applies_to_no_new_breaker() {
    let (r, _) = registry();
    r.force_open_all_for(Duration::ZERO);
    assert_eq!(r.get("new").status(), Status::Closed);
    assert!(r.get("new").health().is_blank());
}

/// A group call concurrent with lookups of new keys: every breaker kept
/// after it is forced, and every breaker a lookup got after it returned
/// too. No key made meanwhile is left out.
#[test]
fn a_key_made_during_the_group_call_is_not_left_out() {
    for round in 0..20 {
        let (r, _) = registry();
        let r = r.with_capacity(100_000);
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            for t in 0..3 {
                let (r, done) = (&r, &done);
                s.spawn(move || {
                    let mut i = 0;
                    while !done.load(Ordering::Acquire) || i < 50 {
                        r.with(&format!("{round}-{t}-{i}"), |_| ());
                        i += 1;
                    }
                    // Made after the group call returned: held.
                    assert!(held(&*r.get(&format!("{round}-{t}-after"))));
                });
            }
            std::thread::yield_now();
            r.force_open_all();
            done.store(true, Ordering::Release);
        });
        let mut seen = 0;
        r.for_each(|e| {
            assert!(held(e), "{} left out", e.key());
            seen += 1;
        });
        assert_eq!(seen, r.len());
        assert_eq!(r.force_close_all(), r.len());
        r.for_each(|e| assert!(!held(e)));
    }
}

/// Held open, a full registry is full of breakers that know something: a
/// new key gets a breaker made for its lookup, and held like the others.
#[test]
fn a_transient_breaker_gets_the_group_state() {
    let (r, _) = registry();
    let r = r.with_capacity(4);
    for k in 0..4 {
        r.with(&k.to_string(), |_| ());
    }
    r.force_open_all();
    let made_up = r.get("made-up");
    assert!(r.peek("made-up").is_none());
    assert_eq!(r.overflowed(), 1);
    assert!(held(&*made_up));
    r.force_close_all();
    // Room again: the blank breakers make way.
    r.with("kept", |_| ());
    assert!(r.peek("kept").is_some());
}

/// `Force` on every form: a breaker, a rate breaker, an entry, `&B` and
/// `Arc<B>`; durations converted with the clock's tick.
#[test]
fn force_on_every_breaker_form() {
    fn close_and_hold<B: Force<Error = core::convert::Infallible> + CircuitBreaker>(b: B) {
        let Ok(()) = b.force_open();
        assert!(b.health().forced);
        let Ok(()) = b.force_close();
        assert!(b.health().is_blank());
        let Ok(()) = b.force_open_for(Duration::from_millis(5));
        assert_eq!(b.status(), Status::Open);
        // 5 ms and the tick for the readings' rounding: `RealClock::ticks`.
        assert_eq!(b.health().retry_after, Some(5_001));
    }
    let (r, _) = registry();
    let entry: Arc<Entry<String, Timed>> = r.get("a");
    close_and_hold(entry.clone());
    close_and_hold(&*entry);
    close_and_hold(&**r.get("b"));
    let clock: &'static ManualTime = Box::leak(Box::new(ManualTime::new()));
    let rates: Registry<u8, RateBreaker<&ManualTime>> = Registry::new(move |_: &u8| {
        RateBreaker::new(Config::new(), Rate::new().window(1_000_000), clock).unwrap()
    });
    close_and_hold(rates.get(&1));
    assert_eq!(rates.force_open_all(), 1);
    assert!(rates.get(&2).acquire().is_err());
    assert_eq!(rates.force_close_all(), 2);
}

/// A registry of breakers in shadow mode (`kit::Shadow`) joins group
/// control: each group call forces the breaker underneath, so a shadowed
/// breaker reports the hold (calls still run) and rejects once shadow mode
/// is off.
#[test]
fn a_registry_of_shadowed_breakers_is_forced_by_group_calls() {
    use tripword::kit::Shadow;
    let clock: &'static ManualTime = Box::leak(Box::new(ManualTime::new()));
    let config = Config::new()
        .failure_threshold(5)
        .open_for(10_000_000)
        .check::<W64>()
        .unwrap();
    let r: Registry<String, Shadow<Timed>> =
        Registry::new(move |_: &String| Shadow::new(Breaker::from_parts(config, clock, ())));
    r.with("a", |_| ());
    r.with("b", |_| ());
    assert_eq!(r.force_open_all(), 2);
    r.for_each(|e| assert!(held(e), "{}", e.key()));
    // Made during the hold: held too.
    let c = r.get("c");
    assert!(held(&*c));
    // Shadowing: the hold is reported, the call runs.
    assert!(c.acquire().is_ok_and(|t| t.is_shadow()));
    assert!(!c.is_open());
    c.set_shadow(false);
    assert_eq!(
        c.acquire().map(drop).map_err(|why| why.cause()),
        Err(tripword::Cause::ForcedOpen)
    );
    assert_eq!(r.force_close_all(), 3);
    r.for_each(|e| assert!(e.health().is_blank(), "{}", e.key()));
    assert_eq!(r.force_open_all_for(Duration::from_secs(60)), 3);
    assert_eq!(r.get("a").inner().status(), Status::Open);
    clock.advance(Duration::from_secs(61));
    assert_eq!(r.get("a").status(), Status::HalfOpen);
}
