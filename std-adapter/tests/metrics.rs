//! `MetricsObserver` against a recording exporter: every counter and the
//! gauge asserted by value, on a hand-moved clock.
//!
//! The recorder keeps cumulative values in `metrics-util`'s atomic
//! registry (its `DebuggingRecorder` resets counters and gauges at every
//! snapshot, so a gauge not set since the last one would read 0).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use metrics_util::registry::{AtomicStorage, Registry};
use tripword::clock::ManualClock;
use tripword::{Breaker, Config, Observer, Outcome, Status, Transition, W32, W64, Word};
use tripword_std::observe::{MetricsObserver, names};

/// (metric name, sorted labels) -> value.
type Series = BTreeMap<(String, Vec<(String, String)>), f64>;

/// Metric name -> (unit, description).
type Descriptions = HashMap<String, (Option<Unit>, String)>;

/// A recorder that keeps every value (counters and gauges as atomics) and
/// every description.
#[derive(Clone)]
struct Recording {
    registry: Arc<Registry<Key, AtomicStorage>>,
    described: Arc<Mutex<Descriptions>>,
}

impl Recording {
    fn new() -> Self {
        Recording {
            registry: Arc::new(Registry::atomic()),
            described: Arc::default(),
        }
    }

    fn describe(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.described
            .lock()
            .unwrap()
            .insert(key.as_str().to_string(), (unit, description.to_string()));
    }
}

impl Recorder for Recording {
    fn describe_counter(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.describe(key, unit, description);
    }
    fn describe_gauge(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.describe(key, unit, description);
    }
    fn describe_histogram(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.describe(key, unit, description);
    }
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        self.registry
            .get_or_create_counter(key, |c| Counter::from_arc(c.clone()))
    }
    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        self.registry
            .get_or_create_gauge(key, |g| Gauge::from_arc(g.clone()))
    }
    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        panic!("no histograms expected")
    }
}

fn series_key(key: &Key) -> (String, Vec<(String, String)>) {
    let mut labels: Vec<(String, String)> = key
        .labels()
        .map(|l| (l.key().to_string(), l.value().to_string()))
        .collect();
    labels.sort();
    (key.name().to_string(), labels)
}

fn read(recording: &Recording) -> Series {
    let mut series = Series::new();
    for (key, c) in recording.registry.get_counter_handles() {
        series.insert(
            series_key(&key),
            c.load(std::sync::atomic::Ordering::Relaxed) as f64,
        );
    }
    for (key, g) in recording.registry.get_gauge_handles() {
        let bits = g.load(std::sync::atomic::Ordering::Relaxed);
        series.insert(series_key(&key), f64::from_bits(bits));
    }
    series
}

fn get(series: &Series, name: &str, breaker: &str, label: Option<(&str, &str)>) -> f64 {
    let mut labels = vec![(names::BREAKER.to_string(), breaker.to_string())];
    if let Some((k, v)) = label {
        labels.push((k.to_string(), v.to_string()));
    }
    labels.sort();
    *series
        .get(&(name.to_string(), labels.clone()))
        .unwrap_or_else(|| panic!("no series {name} {labels:?} in {series:#?}"))
}

fn state(series: &Series, breaker: &str) -> Vec<f64> {
    ["closed", "open", "half_open", "probing", "recovering"]
        .map(|s| get(series, names::STATUS, breaker, Some((names::STATE, s))))
        .to_vec()
}

#[test]
fn counters_and_gauge_follow_the_breaker() {
    let recorder = Recording::new();
    let snapshotter = recorder.clone();
    let clock = ManualClock::new(0);
    let config = Config::new()
        .failure_threshold(2)
        .open_for(100)
        .probe_timeout(50)
        .horizon(0)
        .check::<W64>()
        .unwrap();
    let (b, other) = metrics::with_local_recorder(&recorder, || {
        (
            Breaker::from_parts(config, &clock, MetricsObserver::new("payments")),
            Breaker::from_parts(config, &clock, MetricsObserver::new("search")),
        )
    });

    // Every series exists from the start, at zero; the gauge says closed.
    let s = read(&snapshotter);
    for o in ["success", "failure", "ignored"] {
        assert_eq!(
            get(&s, names::CALLS, "payments", Some((names::OUTCOME, o))),
            0.0
        );
    }
    for c in ["open", "probing", "forced_open"] {
        assert_eq!(
            get(&s, names::REJECTIONS, "payments", Some((names::CAUSE, c))),
            0.0
        );
    }
    assert_eq!(get(&s, names::STALE_RELEASES, "payments", None), 0.0);
    assert_eq!(state(&s, "payments"), [1.0, 0.0, 0.0, 0.0, 0.0]);

    for _ in 0..3 {
        b.release(b.acquire().unwrap(), Outcome::Success);
    }
    b.release(b.acquire().unwrap(), Outcome::Ignored);
    b.release(b.acquire().unwrap(), Outcome::Failure);
    let late = b.acquire().unwrap();
    b.release(b.acquire().unwrap(), Outcome::Failure); // trips
    b.release(late, Outcome::Success); // stale
    assert!(b.acquire().is_err());
    clock.advance(10);
    assert!(b.acquire().is_err());
    other.release(other.acquire().unwrap(), Outcome::Success);

    let s = read(&snapshotter);
    let outcome = |o| get(&s, names::CALLS, "payments", Some((names::OUTCOME, o)));
    assert_eq!(
        (outcome("success"), outcome("failure"), outcome("ignored")),
        (3.0, 2.0, 1.0)
    );
    assert_eq!(get(&s, names::STALE_RELEASES, "payments", None), 1.0);
    assert_eq!(
        get(
            &s,
            names::REJECTIONS,
            "payments",
            Some((names::CAUSE, "open"))
        ),
        2.0
    );
    assert_eq!(
        get(
            &s,
            names::TRANSITIONS,
            "payments",
            Some((names::STATE, "open"))
        ),
        1.0
    );
    assert_eq!(state(&s, "payments"), [0.0, 1.0, 0.0, 0.0, 0.0]);
    // The other breaker's series are its own.
    assert_eq!(
        get(
            &s,
            names::CALLS,
            "search",
            Some((names::OUTCOME, "success"))
        ),
        1.0
    );
    assert_eq!(state(&s, "search"), [1.0, 0.0, 0.0, 0.0, 0.0]);

    // The probe: half-open then probing; a rejection while it runs; it
    // succeeds and closes the breaker.
    clock.advance(90);
    let probe = b.acquire().unwrap();
    let s = read(&snapshotter);
    assert_eq!(state(&s, "payments"), [0.0, 0.0, 0.0, 1.0, 0.0]);
    assert!(b.acquire().is_err());
    b.release(probe, Outcome::Success);
    b.force_open();
    assert!(b.acquire().is_err());

    let s = read(&snapshotter);
    let entered = |st| get(&s, names::TRANSITIONS, "payments", Some((names::STATE, st)));
    assert_eq!(
        (
            entered("closed"),
            entered("open"),
            entered("half_open"),
            entered("probing")
        ),
        (1.0, 2.0, 1.0, 1.0)
    );
    let cause = |c| get(&s, names::REJECTIONS, "payments", Some((names::CAUSE, c)));
    assert_eq!(
        (cause("open"), cause("probing"), cause("forced_open")),
        (2.0, 1.0, 1.0)
    );
    assert_eq!(
        get(
            &s,
            names::CALLS,
            "payments",
            Some((names::OUTCOME, "success"))
        ),
        4.0
    );
    assert_eq!(state(&s, "payments"), [0.0, 1.0, 0.0, 0.0, 0.0]);
}

#[test]
fn the_gauge_keeps_the_latest_transition_when_reports_cross() {
    let recorder = Recording::new();
    let snapshotter = recorder.clone();
    let o = metrics::with_local_recorder(&recorder, || MetricsObserver::new("b"));
    let t = |counter, from, to| Transition {
        from,
        to,
        counter,
        forced: false,
    };
    // Two threads' reports, the later (counter 2) written first.
    o.on_transition(t(2, Status::Open, Status::HalfOpen));
    o.on_transition(t(1, Status::Closed, Status::Open));
    let s = read(&snapshotter);
    assert_eq!(state(&s, "b"), [0.0, 0.0, 1.0, 0.0, 0.0]);
    // Both counted as transitions all the same.
    assert_eq!(
        get(&s, names::TRANSITIONS, "b", Some((names::STATE, "open"))),
        1.0
    );

    // Across the counter's wrap, in the order of the counter field (22
    // bits on W64, 10 on W32): 0 after the largest counter is newer, and
    // the largest counter reported after 0 is late.
    for (name, max) in [("w64", (1 << 22) - 1), ("w32", (1 << 10) - 1)] {
        let o = metrics::with_local_recorder(&recorder, || MetricsObserver::new(name));
        o.on_transition(t(max - 1, Status::Open, Status::HalfOpen));
        o.on_transition(t(0, Status::Probing, Status::Closed));
        o.on_transition(t(max, Status::HalfOpen, Status::Probing));
        assert_eq!(state(&read(&snapshotter), name), [1.0, 0.0, 0.0, 0.0, 0.0]);
        o.on_transition(t(1, Status::Closed, Status::Open));
        assert_eq!(state(&read(&snapshotter), name), [0.0, 1.0, 0.0, 0.0, 0.0]);
    }
}

#[test]
fn every_metric_is_described_with_its_unit() {
    let recorder = Recording::new();
    metrics::with_local_recorder(&recorder, || MetricsObserver::new("b"));
    let described = recorder.described.lock().unwrap();
    for name in [
        names::CALLS,
        names::REJECTIONS,
        names::STALE_RELEASES,
        names::TRANSITIONS,
    ] {
        let (unit, text) = &described[name];
        assert_eq!(*unit, Some(Unit::Count), "{name}");
        assert!(!text.is_empty());
    }
    assert!(described.contains_key(names::STATUS));
    assert_eq!(described.len(), 5);
}

/// `name` gives the breaker's name, the one its series are labelled with.
/// Mutation testing found it unpinned (`""` and `"xyzzy"` survived).
#[test]
fn the_name_is_the_label() {
    let recorder = Recording::new();
    let o = metrics::with_local_recorder(&recorder, || MetricsObserver::new("payments"));
    assert_eq!(o.name(), "payments");
    assert_eq!(state(&read(&recorder), o.name()), [1.0, 0.0, 0.0, 0.0, 0.0]);
}

/// The gauge as the breaker's status reads it.
fn shows(status: Status) -> Vec<f64> {
    let at = match status {
        Status::Closed => 0,
        Status::Open => 1,
        Status::HalfOpen => 2,
        Status::Probing => 3,
        Status::Recovering => 4,
    };
    (0..5).map(|i| if i == at { 1.0 } else { 0.0 }).collect()
}

/// Drives a breaker on word `W` through trip, probe and close (four
/// transitions a cycle, all four states) until its state counter has
/// wrapped `wraps` times, the gauge asserted after every step near each wrap; then
/// a report made before the last wrap and written after it (a thread
/// descheduled between its compare-and-swap and its report) leaves the
/// gauge alone, and the gauge still follows.
fn the_gauge_follows_the_breaker_across_the_counter_wrap<W: Word>(wraps: u64) {
    let recorder = Recording::new();
    let clock = ManualClock::new(0);
    let config = Config::new()
        .failure_threshold(1)
        .open_for(10)
        .probe_timeout(10)
        .horizon(0)
        .check::<W>()
        .unwrap();
    let b = metrics::with_local_recorder(&recorder, || {
        Breaker::from_parts(config, &clock, MetricsObserver::new("wraps"))
    });
    let max = W::LAYOUT.max_counter();
    let counter = || b.snapshot().unwrap().counter;
    // Near a wrap: the last and first cycles of the ring.
    let near = |c: u32| c < 64 || c > max - 64;
    let check = |step: &str| {
        assert_eq!(
            state(&read(&recorder), "wraps"),
            shows(b.status()),
            "after {step} at counter {}",
            counter()
        );
    };
    let cycle = |checked: bool| {
        b.release(b.acquire().unwrap(), Outcome::Failure); // trips
        if checked {
            check("a trip");
        }
        clock.advance(10);
        let probe = b.acquire().unwrap(); // half-open, then probing
        if checked {
            check("a probe");
        }
        b.release(probe, Outcome::Success); // closes
        if checked {
            check("a close");
        }
    };
    let ring = u64::from(max) + 1;
    let mut transitions = 0u64;
    while transitions < wraps * ring + 8 {
        cycle(near(counter()));
        transitions += 4;
    }
    assert!(counter() < 64, "just past a wrap: {}", counter());

    // The breaker is closed at a counter just past the wrap; a report of
    // the last state before the wrap comes in late.
    assert_eq!(b.status(), Status::Closed);
    b.observer().on_transition(Transition {
        from: Status::HalfOpen,
        to: Status::Probing,
        counter: max,
        forced: false,
    });
    check("a late report of the counter before the wrap");
    for _ in 0..4 {
        cycle(true);
    }
}

#[test]
fn the_gauge_follows_a_w32_breaker_across_its_counter_wrap() {
    // 10 bits: 1 024 transitions a ring.
    the_gauge_follows_the_breaker_across_the_counter_wrap::<W32>(3);
}

#[test]
fn the_gauge_follows_a_w64_breaker_across_its_counter_wrap() {
    // 22 bits: 4 194 304 transitions a ring, once round.
    the_gauge_follows_the_breaker_across_the_counter_wrap::<W64>(1);
}
