//! A registry under a flood of made-up keys: thousands of new keys never
//! evict a breaker that knows something (failures counted, open, forced
//! open, calls in a rate window), the fifth failure still finds the four
//! before it, a registry full of such breakers gives new keys breakers it
//! does not keep (counted), and memory stays bounded. One thread and
//! several; hand-moved clocks that never move, so no timing assertions.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tripword::clock::ManualClock;
use tripword::rate::{Rate, RateBreaker};
use tripword::{Breaker, Config, Outcome, Status, W64};
use tripword_std::registry::Entry;
use tripword_std::{CircuitBreaker, Registry};

static CLOCK: ManualClock = ManualClock::new(0);

const CAPACITY: usize = 16;

type Plain = Registry<String, Breaker<&'static ManualClock>>;

/// Breakers that trip on the fifth failure in a row, open for 1000 ticks
/// (the clock never moves), at most 16 of them.
fn registry() -> Plain {
    let config = Config::new()
        .failure_threshold(5)
        .open_for(1_000)
        .check::<W64>()
        .unwrap();
    Registry::new(move |_: &String| Breaker::from_parts(config, &CLOCK, ())).with_capacity(CAPACITY)
}

/// `n` failures through `key`'s breaker.
fn fail(r: &Plain, key: &str, n: u32) {
    for _ in 0..n {
        r.with(key, |b| {
            if let Ok(t) = b.acquire() {
                b.release(t, Outcome::Failure);
            }
        });
    }
}

/// The keys that know something: 4 failures of 5, tripped open, forced
/// open. Returns their entries, to check they are the same ones after.
fn knowing(r: &Plain) -> Vec<Arc<Entry<String, Breaker<&'static ManualClock>>>> {
    fail(r, "four-of-five", 4);
    fail(r, "tripped", 5);
    r.with("forced", |b| b.force_open());
    assert_eq!(r.get("four-of-five").health().failures, 4);
    assert_eq!(r.with("tripped", |b| b.status()), Status::Open);
    assert!(r.get("forced").health().forced);
    ["four-of-five", "tripped", "forced"]
        .map(|k| r.peek(k).unwrap())
        .to_vec()
}

/// After the flood: the same entries, in the same state, and the fifth
/// failure opens the key that counted four.
fn survived(r: &Plain, before: &[Arc<Entry<String, Breaker<&'static ManualClock>>>]) {
    for entry in before {
        let now = r.peek(entry.key()).expect("kept");
        assert!(Arc::ptr_eq(entry, &now), "{} was made again", entry.key());
    }
    assert_eq!(r.get("four-of-five").health().failures, 4);
    assert_eq!(r.with("tripped", |b| b.status()), Status::Open);
    assert!(r.get("forced").health().forced);
    fail(r, "four-of-five", 1);
    assert_eq!(r.with("four-of-five", |b| b.status()), Status::Open);
}

/// The user's case: capacity 16, 2 000 new keys. Against the old
/// eviction (the least recently used `Closed` first, open ones when no
/// closed one remained), the key counting 4 failures was evicted and its
/// fifth failure found a fresh breaker.
#[test]
fn made_up_keys_do_not_evict_what_a_breaker_knows() {
    let r = registry();
    let before = knowing(&r);
    for i in 0..2_000 {
        let status = r.with(&format!("made-up-{i}"), |b| b.status());
        assert_eq!(status, Status::Closed);
        assert!(r.len() <= CAPACITY);
    }
    survived(&r, &before);
    // There was room every time: blank breakers made room for new keys.
    assert_eq!(r.overflowed(), 0);
}

/// Every breaker kept knows something: a new key gets a breaker made for
/// its lookup and not kept, counted; none is evicted. Against the old
/// eviction the open breakers went, and the next callers of their keys
/// went straight to the failing dependencies.
#[test]
fn a_registry_full_of_knowledge_keeps_it_and_counts_the_overflow() {
    let r = registry();
    let before = knowing(&r);
    for k in 0..(CAPACITY - before.len()) {
        fail(&r, &format!("down-{k}"), 5);
    }
    assert_eq!(r.len(), CAPACITY);
    for i in 0..2_000 {
        let key = format!("made-up-{i}");
        let entry = r.get(&key);
        assert_eq!(entry.status(), Status::Closed);
        assert!(r.peek(&key).is_none(), "a transient breaker is not kept");
        // Not cached either: each lookup of the key makes another.
        assert!(!Arc::ptr_eq(&entry, &r.get(&key)));
        r.with(&key, |b| assert!(!std::ptr::eq(b, &*entry)));
        assert_eq!(r.len(), CAPACITY);
    }
    // Each made-up key looked up three times, each time full.
    assert_eq!(r.overflowed(), 6_000);
    survived(&r, &before);
    for k in 0..(CAPACITY - before.len()) {
        assert_eq!(r.with(&format!("down-{k}"), |b| b.status()), Status::Open);
    }
    // Room again (a forced breaker closed, then forgotten as idle): new
    // keys are kept again, and the count stays.
    r.with("forced", |b| b.force_close());
    r.evict_idle();
    assert_eq!(r.evict_idle(), 1, "the closed, idle, blank one");
    r.with("kept", |_| ());
    assert!(r.peek("kept").is_some());
    assert_eq!(r.overflowed(), 6_000);
}

/// The same flood on four threads at once, 2 500 new keys each, while the
/// keys that know something are used: nothing they know is lost, the map
/// never holds more than its capacity.
#[test]
fn made_up_keys_from_four_threads_do_not_evict_what_a_breaker_knows() {
    let r = registry();
    let before = knowing(&r);
    let largest = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for t in 0..4 {
            let (r, largest) = (&r, &largest);
            s.spawn(move || {
                for i in 0..2_500 {
                    r.with(&format!("made-up-{t}-{i}"), |_| ());
                    largest.fetch_max(r.len(), Ordering::Relaxed);
                    if i % 100 == 0 {
                        // A read of the keys that know something.
                        assert_eq!(r.with("tripped", |b| b.status()), Status::Open);
                    }
                }
            });
        }
    });
    assert!(largest.load(Ordering::Relaxed) <= CAPACITY);
    survived(&r, &before);
    assert_eq!(r.overflowed(), 0);
}

/// Full of open breakers, four threads of new keys: every lookup of a new
/// key finds the registry full and is counted, exactly.
#[test]
fn the_overflow_count_is_exact_across_threads() {
    let r = registry();
    for k in 0..CAPACITY {
        fail(&r, &format!("down-{k}"), 5);
    }
    let kept: Vec<_> = (0..CAPACITY)
        .map(|k| r.peek(&format!("down-{k}")).unwrap())
        .collect();
    std::thread::scope(|s| {
        for t in 0..4 {
            let r = &r;
            s.spawn(move || {
                for i in 0..1_000 {
                    let key = format!("made-up-{t}-{i}");
                    assert_eq!(r.with(&key, |b| b.status()), Status::Closed);
                    assert_eq!(r.len(), CAPACITY);
                }
            });
        }
    });
    assert_eq!(r.overflowed(), 4_000);
    for entry in &kept {
        assert!(Arc::ptr_eq(entry, &r.peek(entry.key()).unwrap()));
        assert_eq!(entry.status(), Status::Open);
    }
}

/// A flood starts no sweep period: a key counting failures, used in this
/// period, is kept by the sweep that ends it. The sweep that follows a
/// whole idle period forgets it (its failures with it: the operator's
/// memory horizon), but never one that is not `Closed`.
#[test]
fn a_flood_does_not_age_keys_for_the_sweep() {
    let r = registry();
    r.evict_idle(); // a period starts
    fail(&r, "four-of-five", 4);
    fail(&r, "tripped", 5);
    for i in 0..5_000 {
        r.with(&format!("made-up-{i}"), |_| ());
    }
    let kept = r.peek("four-of-five").unwrap();
    r.evict_idle();
    assert!(Arc::ptr_eq(&kept, &r.peek("four-of-five").unwrap()));
    assert_eq!(kept.health().failures, 4);
    // A whole period with no lookup of it: forgotten by the sweep.
    r.evict_idle();
    assert!(r.peek("four-of-five").is_none());
    assert_eq!(r.peek("tripped").unwrap().status(), Status::Open);
}

type Rates = Registry<String, RateBreaker<&'static ManualClock>>;

/// Rate breakers: one with calls in its window (below the minimum, so
/// `Closed` with nothing in a row) is kept through the flood, and the call
/// that reaches the minimum trips it.
#[test]
fn a_rate_window_survives_made_up_keys() {
    let r: Rates = Registry::new(|_: &String| {
        RateBreaker::new(
            Config::new().open_for(1_000),
            Rate::new().failure_rate(50).minimum_calls(4).window(1_000),
            &CLOCK,
        )
        .unwrap()
    })
    .with_capacity(CAPACITY);
    for outcome in [Outcome::Success, Outcome::Failure, Outcome::Success] {
        r.with("windowed", |b| b.release(b.acquire().unwrap(), outcome));
    }
    let health = r.get("windowed").health();
    assert_eq!((health.status, health.window_calls), (Status::Closed, 3));
    let kept = r.peek("windowed").unwrap();
    std::thread::scope(|s| {
        for t in 0..2 {
            let r = &r;
            s.spawn(move || {
                for i in 0..5_000 {
                    r.with(&format!("made-up-{t}-{i}"), |_| ());
                    assert!(r.len() <= CAPACITY);
                }
            });
        }
    });
    assert!(Arc::ptr_eq(&kept, &r.peek("windowed").unwrap()));
    r.with("windowed", |b| {
        b.release(b.acquire().unwrap(), Outcome::Failure)
    });
    assert_eq!(r.with("windowed", |b| b.status()), Status::Open);
    assert_eq!(r.overflowed(), 0);
}

/// An entry's health is its breaker's (not the status alone): what the
/// registry reads to tell a blank breaker.
#[test]
fn an_entry_reports_its_breakers_health() {
    let r = registry();
    fail(&r, "a", 2);
    let entry = r.get("a");
    assert_eq!(entry.health(), entry.breaker().health());
    assert_eq!(CircuitBreaker::health(&*entry).failures, 2);
    assert!(!entry.is_open());
    r.with("a", |b| b.force_open());
    assert!(entry.is_open());
}

/// A declared breaker (`NamedBreaker`) reports its breaker's health, not
/// its status alone: a registry of them keeps one that counts a failure
/// through a flood of made-up keys.
#[test]
#[cfg(feature = "macros")]
fn a_registry_of_named_breakers_keeps_one_counting_failures() {
    use tripword_std::NamedBreaker;
    let config = Config::new()
        .failure_threshold(5)
        .open_for(1_000)
        .check::<W64>()
        .unwrap();
    let r: Registry<String, NamedBreaker<(), &'static ManualClock>> =
        Registry::new(move |_: &String| {
            NamedBreaker::from_breaker("host", Breaker::from_parts(config, &CLOCK, ()))
        })
        .with_capacity(CAPACITY);
    r.with("a", |b| {
        let t = b.acquire().unwrap();
        b.release(t, Outcome::Failure);
    });
    let a = r.peek("a").unwrap();
    let h = CircuitBreaker::health(&**a);
    assert_eq!((h.status, h.failures), (Status::Closed, 1));
    assert!(!h.is_blank());
    for i in 0..1_000 {
        r.with(&format!("made-up-{i}"), |_| ());
    }
    assert!(Arc::ptr_eq(&a, &r.peek("a").expect("kept")), "made again");
    assert!(!CircuitBreaker::is_open(&**a));
    a.force_open();
    assert!(CircuitBreaker::is_open(&**a));
}

/// The overflows as a counter (feature `metrics`), labelled with the
/// registry's name, and a warning once each time the registry becomes full
/// of breakers holding state (feature `tracing`).
#[cfg(all(feature = "metrics", feature = "tracing"))]
#[test]
fn overflows_are_counted_and_warned_of_once_per_crossing() {
    use std::sync::Mutex;

    use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
    use tripword_std::observe::names;

    /// The messages of the `WARN` events of target `tripword`.
    #[derive(Clone, Default)]
    struct Warnings(Arc<Mutex<Vec<String>>>);
    impl<S: tracing::Subscriber> Layer<S> for Warnings {
        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            let meta = event.metadata();
            if *meta.level() == tracing::Level::WARN && meta.target() == "tripword" {
                self.0.lock().unwrap().push(format!("{:?}", meta.fields()));
            }
        }
    }

    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let warnings = Warnings::default();
    let subscriber = tracing_subscriber::registry().with(warnings.clone());
    let config = Config::new().failure_threshold(1).check::<W64>().unwrap();
    let r = Registry::new(move |_: &String| Breaker::from_parts(config, &CLOCK, ()))
        .with_capacity(2)
        .with_name("hosts");
    assert_eq!(r.name(), Some("hosts"));
    tracing::subscriber::with_default(subscriber, || {
        metrics::with_local_recorder(&recorder, || {
            r.with("a", |b| b.force_open());
            r.with("b", |b| b.force_open());
            for i in 0..5 {
                r.with(&format!("made-up-{i}"), |_| ());
            }
            assert_eq!(warnings.0.lock().unwrap().len(), 1);
            // Room again: "b" is blank, and goes for "c".
            r.with("b", |b| b.force_close());
            r.with("c", |b| b.force_open());
            assert!(r.peek("b").is_none());
            for i in 0..3 {
                r.with(&format!("made-up-{i}"), |_| ());
            }
        })
    });
    assert_eq!(r.overflowed(), 8);
    let warned = warnings.0.lock().unwrap().clone();
    assert_eq!(warned.len(), 2, "{warned:?}");
    assert!(
        warned[0].contains("registry") && warned[0].contains("capacity"),
        "{warned:?}"
    );
    let counted: Vec<_> = snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .filter(|(key, ..)| key.key().name() == names::REGISTRY_OVERFLOWS)
        .map(|(key, unit, _, value)| {
            let labels: Vec<_> = key
                .key()
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            (labels, unit, value)
        })
        .collect();
    assert_eq!(
        counted,
        [(
            vec![(names::REGISTRY.to_owned(), "hosts".to_owned())],
            Some(metrics::Unit::Count),
            DebugValue::Counter(8)
        )]
    );
}
