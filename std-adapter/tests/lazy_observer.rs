//! `LazyObserver` (the observer of a declared breaker, made from its name on
//! the first event) forwards every hook to the observer it made, makes it
//! once, and shows its name and whether it was made.

#![cfg(feature = "macros")]

use std::sync::atomic::{AtomicUsize, Ordering};
use tripword::clock::ManualClock;
use tripword::transition::Transition;
use tripword::{Breaker, Config, Observer, Outcome, Rejected, Status, Ticket};
use tripword_std::LazyObserver;

/// Counts each hook: transitions, corrupt words, admissions, rejections,
/// recorded and stale releases.
static HOOKS: [AtomicUsize; 6] = [const { AtomicUsize::new(0) }; 6];
static MADE: AtomicUsize = AtomicUsize::new(0);

struct Counting;

impl Observer for Counting {
    fn on_transition(&self, _: Transition) {
        HOOKS[0].fetch_add(1, Ordering::Relaxed);
    }
    fn on_corrupt_word(&self, _: u64, _: u32) {
        HOOKS[1].fetch_add(1, Ordering::Relaxed);
    }
    fn on_admitted(&self, _: &Ticket) {
        HOOKS[2].fetch_add(1, Ordering::Relaxed);
    }
    fn on_rejected(&self, _: Rejected) {
        HOOKS[3].fetch_add(1, Ordering::Relaxed);
    }
    fn on_recorded(&self, _: Outcome) {
        HOOKS[4].fetch_add(1, Ordering::Relaxed);
    }
    fn on_stale(&self, _: Outcome) {
        HOOKS[5].fetch_add(1, Ordering::Relaxed);
    }
}

fn counts() -> [usize; 6] {
    core::array::from_fn(|i| HOOKS[i].load(Ordering::Relaxed))
}

static OBSERVER: LazyObserver = LazyObserver::new("lazy", |name| {
    assert_eq!(name, "lazy");
    MADE.fetch_add(1, Ordering::Relaxed);
    Box::new(Counting)
});

#[test]
fn every_hook_reaches_the_observer_it_made_once() {
    assert_eq!(OBSERVER.name(), "lazy");
    assert_eq!(
        format!("{OBSERVER:?}"),
        r#"LazyObserver { name: "lazy", made: false }"#
    );
    let clock = ManualClock::new(0);
    let b = Breaker::from_parts(
        Config::new()
            .failure_threshold(1)
            .open_for(10)
            .check::<tripword::W64>()
            .unwrap(),
        &clock,
        &OBSERVER,
    );
    let t = b.acquire().unwrap(); // admitted
    let stale = b.acquire().unwrap();
    b.release(t, Outcome::Failure); // recorded, and closed -> open
    assert_eq!(b.status(), Status::Open);
    assert!(b.acquire().is_err()); // rejected
    b.release(stale, Outcome::Success); // stale
    assert_eq!(counts(), [1, 0, 2, 1, 1, 1]);
    // A corrupt word reported goes through too.
    OBSERVER.on_corrupt_word(u64::MAX, 3);
    assert_eq!(counts()[1], 1);
    // get() is the observer made: its hooks count.
    OBSERVER.get().on_stale(Outcome::Ignored);
    assert_eq!(counts()[5], 2);
    assert_eq!(MADE.load(Ordering::Relaxed), 1, "made once");
    assert_eq!(
        format!("{OBSERVER:?}"),
        r#"LazyObserver { name: "lazy", made: true }"#
    );
}

/// A declared breaker answers the kit's trait as its breaker does: the
/// detached release of a cancelled call, the async path, the verdicts.
#[test]
fn a_named_breaker_is_its_breaker_through_the_trait() {
    use tripword::kit::{Reply, TickVerdict};
    use tripword_std::{CircuitBreaker, MonotonicClock, NamedBreaker, Settings};
    static B: NamedBreaker = NamedBreaker::new(
        "named",
        Settings::new().failure_threshold(1),
        MonotonicClock,
        (),
    );
    let t = CircuitBreaker::acquire(&B).unwrap();
    B.release_detached(t, TickVerdict::Failure);
    assert_eq!(CircuitBreaker::status(&B), Status::Open);
    assert!(matches!(B.acquire_async(), Reply::Ready(Err(_))));
    assert_eq!(B.name(), "named");
}
