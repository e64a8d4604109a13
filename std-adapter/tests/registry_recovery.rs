//! A registry of breakers with the recovery options (feature `metrics`):
//! built from `Settings` with probes and a ramp (an override's own), a
//! breaker in a trial or a ramp is never forgotten (neither to make room
//! for a new key nor as idle), and its `MetricsObserver` shows the
//! `recovering` gauge and the `ramp` rejections.
//!
//! Every breaker runs on a `ManualTime` that only the tests move.

use std::sync::Arc;
use std::time::Duration;

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use metrics_util::registry::{AtomicStorage, Registry as Storage};
use tripword::{Breaker, Outcome, Status, W64};
use tripword_std::clock::ManualTime;
use tripword_std::observe::{MetricsObserver, names};
use tripword_std::{RampSettings, Registry, RegistrySettings, Settings};

const SECOND: Duration = Duration::from_secs(1);

/// Trips on one failure, open 10 s, three probes, then half the calls
/// for a second.
fn settings() -> Settings {
    Settings::new()
        .failure_threshold(1)
        .open_for(10 * SECOND)
        .probe_timeout(60 * SECOND)
        .probes(3)
        .ramp(RampSettings::stages(SECOND, &[5_000]))
}

type Local = Breaker<&'static ManualTime, W64, MetricsObserver>;

fn registry(clock: &'static ManualTime) -> Registry<String, Local> {
    let settings = RegistrySettings::new(settings()).override_for("single", settings().probes(1));
    Registry::from_settings_on(&settings, clock, |key: &String| {
        MetricsObserver::new(key.as_str())
    })
    .unwrap()
}

/// Opens `key`'s breaker with one failure and lets its open time pass.
fn outage(r: &Registry<String, Local>, key: &str, clock: &ManualTime) {
    r.with(key, |b| b.release(b.acquire().unwrap(), Outcome::Failure));
    clock.advance(11 * SECOND);
}

/// A recorder that keeps every counter and gauge.
#[derive(Clone)]
struct Recording(Arc<Storage<Key, AtomicStorage>>);

impl Recorder for Recording {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        self.0
            .get_or_create_counter(key, |c| Counter::from_arc(c.clone()))
    }
    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        self.0
            .get_or_create_gauge(key, |g| Gauge::from_arc(g.clone()))
    }
    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        panic!("no histograms expected")
    }
}

impl Recording {
    /// The value of series `name` for breaker `breaker` with `label`.
    fn get(&self, name: &str, breaker: &str, label: (&str, &str)) -> f64 {
        let wanted = |key: &Key| {
            key.name() == name
                && key
                    .labels()
                    .any(|l| l.key() == names::BREAKER && l.value() == breaker)
                && key
                    .labels()
                    .any(|l| l.key() == label.0 && l.value() == label.1)
        };
        let relaxed = std::sync::atomic::Ordering::Relaxed;
        if let Some((_, c)) = self
            .0
            .get_counter_handles()
            .into_iter()
            .find(|(k, _)| wanted(k))
        {
            return c.load(relaxed) as f64;
        }
        let (_, g) = self
            .0
            .get_gauge_handles()
            .into_iter()
            .find(|(k, _)| wanted(k))
            .unwrap_or_else(|| panic!("no series {name} {breaker} {label:?}"));
        f64::from_bits(g.load(relaxed))
    }

    /// The status gauge of `breaker`, one value per state.
    fn state(&self, breaker: &str) -> [f64; 5] {
        ["closed", "open", "half_open", "probing", "recovering"]
            .map(|s| self.get(names::STATUS, breaker, (names::STATE, s)))
    }
}

#[test]
fn breakers_from_settings_carry_the_options() {
    let clock: &'static ManualTime = Box::leak(Box::new(ManualTime::new()));
    let r = registry(clock);
    assert_eq!(r.get("db").config().probes(), 3);
    assert_eq!(r.get("db").config().ramp().stages_count(), 1);
    assert_eq!(r.get("single").config().probes(), 1);
    outage(&r, "db", clock);
    r.with("db", |b| {
        let probes: Vec<_> = (0..3).map(|_| b.acquire().unwrap()).collect();
        assert!(b.acquire().is_err());
        for p in probes {
            b.release(p, Outcome::Success);
        }
    });
    assert_eq!(r.get("db").status(), Status::Recovering);
}

/// Neither making room nor idle eviction forgets a breaker in a trial (with
/// room: it reads half-open; full: probing) or in its ramp; past the ramp's
/// end it reads closed with nothing counted, and goes like any other.
#[test]
fn a_trial_or_a_ramp_is_never_forgotten() {
    let clock: &'static ManualTime = Box::leak(Box::new(ManualTime::new()));
    let r = registry(clock).with_capacity(3);
    outage(&r, "trial", clock);
    outage(&r, "full", clock);
    outage(&r, "ramp", clock);
    let trial = r.with("trial", |b| b.acquire().unwrap());
    let full: Vec<_> = r.with("full", |b| (0..3).map(|_| b.acquire().unwrap()).collect());
    r.with("ramp", |b| {
        for _ in 0..3 {
            b.release(b.acquire().unwrap(), Outcome::Success);
        }
    });
    let statuses = || ["trial", "full", "ramp"].map(|k| r.with(k, |b| b.status()));
    assert_eq!(
        statuses(),
        [Status::HalfOpen, Status::Probing, Status::Recovering]
    );
    for key in ["trial", "full", "ramp"] {
        assert!(!r.get(key).health().is_blank(), "{key}");
    }

    // No room: the new key's breaker is not kept, every old one is.
    r.with("new", |_| ());
    assert!(r.peek("new").is_none());
    assert_eq!((r.len(), r.overflowed()), (3, 1));
    // Idle for a whole period: kept.
    r.evict_idle();
    assert_eq!(r.evict_idle(), 0);
    assert_eq!(r.len(), 3);

    // The ramp ends: closed, blank, and the next new key takes its place.
    clock.advance(3 * SECOND);
    assert_eq!(r.peek("ramp").unwrap().status(), Status::Closed);
    assert!(r.peek("ramp").unwrap().health().is_blank());
    r.with("new", |_| ());
    assert!(r.peek("new").is_some());
    assert!(r.peek("ramp").is_none());
    assert!(r.peek("trial").is_some() && r.peek("full").is_some());
    drop((trial, full));
}

#[test]
fn the_metrics_show_the_ramp() {
    let recording = Recording(Arc::new(Storage::atomic()));
    let clock: &'static ManualTime = Box::leak(Box::new(ManualTime::new()));
    metrics::with_local_recorder(&recording, || {
        let r = registry(clock);
        r.with("single", |_| ());
        outage(&r, "db", clock);
        r.with("db", |b| {
            let probes: Vec<_> = (0..3).map(|_| b.acquire().unwrap()).collect();
            assert_eq!(recording.state("db"), [0.0, 0.0, 0.0, 1.0, 0.0]);
            for p in probes {
                b.release(p, Outcome::Success);
            }
        });
        assert_eq!(recording.state("db"), [0.0, 0.0, 0.0, 0.0, 1.0]);
        let recovering = recording.get(names::TRANSITIONS, "db", (names::STATE, "recovering"));
        assert_eq!(recovering, 1.0);
        // Half of ten calls are refused by the ramp.
        r.with("db", |b| {
            for _ in 0..10 {
                if let Ok(t) = b.acquire() {
                    b.release(t, Outcome::Success);
                }
            }
        });
        let ramp = recording.get(names::REJECTIONS, "db", (names::CAUSE, "ramp"));
        assert_eq!(ramp, 5.0);
        // The ramp's end: closed.
        clock.advance(3 * SECOND);
        r.with("db", |b| b.release(b.acquire().unwrap(), Outcome::Success));
        assert_eq!(recording.state("db"), [1.0, 0.0, 0.0, 0.0, 0.0]);
        // The other breaker saw none of it.
        assert_eq!(
            recording.get(names::REJECTIONS, "single", (names::CAUSE, "ramp")),
            0.0
        );
    });
}
