//! One observer for a fleet breaker: the core's, with the fleet's own
//! reports (`FleetObserver`). `tripword-std`'s `TracingObserver` and
//! `MetricsObserver` are taken as they are and report mode changes and
//! config mismatches too; a fleet makes one per key with
//! `observer_per_key`. The subscriber and the recorder are the process's
//! (the watcher thread reports too), so each test names its breakers
//! apart and waits for what it expects.

mod common;

use common::*;
use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use metrics_util::registry::{AtomicStorage, Registry};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tripword::Transition;
use tripword_redis::{Fleet, FleetObserver, Mode, Scope};
use tripword_std::observe::{MetricsObserver, TracingObserver};

/// An event as caught: level and fields (the message among them).
#[derive(Debug, Clone)]
struct Seen {
    level: Level,
    fields: BTreeMap<String, String>,
}

impl Seen {
    fn field(&self, name: &str) -> &str {
        self.fields.get(name).map_or("<absent>", String::as_str)
    }
}

#[derive(Clone, Default)]
struct Catch(Arc<Mutex<Vec<Seen>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().to_string(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

impl<S: Subscriber> Layer<S> for Catch {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != "tripword" {
            return;
        }
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(Seen {
            level: *event.metadata().level(),
            fields,
        });
    }
}

/// The process's subscriber: every `tripword` event, from every thread.
fn events() -> &'static Catch {
    static CATCH: OnceLock<Catch> = OnceLock::new();
    CATCH.get_or_init(|| {
        let catch = Catch::default();
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(catch.clone()))
            .expect("the only subscriber");
        catch
    })
}

/// The events about breaker `name` with message `message`.
fn caught(name: &str, message: &str) -> Vec<Seen> {
    events()
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.field("breaker") == name && s.field("message") == message)
        .cloned()
        .collect()
}

/// A recorder keeping every counter and gauge as an atomic.
#[derive(Clone)]
struct Recording(Arc<Registry<Key, AtomicStorage>>);

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
        Histogram::noop()
    }
}

/// The process's recorder.
fn recording() -> &'static Recording {
    static RECORDING: OnceLock<Recording> = OnceLock::new();
    RECORDING.get_or_init(|| {
        let r = Recording(Arc::new(Registry::atomic()));
        metrics::set_global_recorder(r.clone()).expect("the only recorder");
        r
    })
}

/// The value of series `name` for breaker `breaker` with the extra label
/// `label` (if any): counters as counts, gauges as their value.
fn value(name: &str, breaker: &str, label: Option<(&str, &str)>) -> Option<f64> {
    let matches = |key: &Key| {
        key.name() == name
            && key
                .labels()
                .any(|l| l.key() == tripword_std::observe::names::BREAKER && l.value() == breaker)
            && label.is_none_or(|(k, v)| key.labels().any(|l| l.key() == k && l.value() == v))
    };
    let r = &recording().0;
    let mut found = None;
    r.visit_counters(|key, c| {
        if matches(key) {
            found = Some(c.load(Ordering::Relaxed) as f64);
        }
    });
    r.visit_gauges(|key, g| {
        if matches(key) {
            found = Some(f64::from_bits(g.load(Ordering::Relaxed)));
        }
    });
    found
}

/// A breaker alone on a tracing observer: its transitions are the
/// observer's own events, and its mode changes and a config mismatch come
/// as events of the fleet, all named.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn tracing_reports_the_fleets_events() {
    let _ = events();
    let mut server = server();
    let b = builder(&server, "traced", config(1, 60_000_000, 1_000_000))
        .observer(TracingObserver::new("traced"))
        .build()
        .unwrap();
    b.force_open().unwrap();
    let opened = caught("traced", "circuit breaker opened");
    assert_eq!(opened.len(), 1, "{opened:?}");
    assert_eq!(opened[0].level, Level::WARN);
    assert!(eventually(LONG, || !caught(
        "traced",
        "fleet breaker on the shared word"
    )
    .is_empty()));

    // Another config on the same key: the mismatch, named.
    let _other = builder(&server, "traced", config(3, 60_000_000, 1_000_000))
        .observer(TracingObserver::new("traced-other"))
        .build()
        .unwrap();
    assert!(eventually(LONG, || !caught(
        "traced-other",
        "fleet config is not this instance's"
    )
    .is_empty()));
    let seen = caught("traced-other", "fleet config is not this instance's");
    assert_eq!(seen[0].level, Level::ERROR);
    assert!(seen[0].field("ours").contains("failure_threshold=3"));
    assert!(seen[0].field("fleet").contains("failure_threshold=1"));

    // Redis gone: the switch to the local breaker.
    server.stop();
    let _ = b.sync();
    assert!(eventually(LONG, || !caught(
        "traced",
        "fleet breaker on its local breaker"
    )
    .is_empty()));
    let local = caught("traced", "fleet breaker on its local breaker");
    assert_eq!(local[0].level, Level::WARN);
    assert_eq!(local[0].field("mode"), "local");
}

/// A fleet on a metrics observer: its series, and the fleet's mode
/// counter, gauge and mismatch counter, labelled with the name.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn metrics_count_the_fleets_events() {
    let _ = recording();
    let mut server = server();
    use tripword_redis::metric_names as fleet;
    use tripword_std::observe::names;
    let b = builder(&server, "metered", config(1, 60_000_000, 1_000_000))
        .observer(MetricsObserver::new("metered"))
        .build()
        .unwrap();
    b.force_open().unwrap();
    assert_eq!(
        value(names::TRANSITIONS, "metered", Some((names::STATE, "open"))),
        Some(1.0)
    );
    assert!(eventually(LONG, || value(
        fleet::MODE_CHANGES,
        "metered",
        Some((fleet::MODE, "shared"))
    ) == Some(1.0)));
    assert_eq!(value(fleet::LOCAL, "metered", None), Some(0.0));

    let _other = builder(&server, "metered", config(3, 60_000_000, 1_000_000))
        .observer(MetricsObserver::new("metered-other"))
        .build()
        .unwrap();
    assert!(eventually(LONG, || value(
        fleet::CONFIG_MISMATCHES,
        "metered-other",
        None
    ) == Some(1.0)));

    server.stop();
    let _ = b.sync();
    assert!(eventually(LONG, || value(
        fleet::MODE_CHANGES,
        "metered",
        Some((fleet::MODE, "local"))
    ) == Some(1.0)));
    assert!(eventually(LONG, || value(fleet::LOCAL, "metered", None) == Some(1.0)));
}

/// One observer per key, made by the fleet: each breaker's events carry
/// its key; a pair reaches both observers.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_fleet_makes_an_observer_per_key() {
    let _ = (events(), recording());
    let server = server();
    let f = Fleet::builder(server.url())
        .config(config(1, 60_000_000, 1_000_000))
        .op_timeout(Duration::from_secs(5))
        .observer_per_key(|key| {
            (
                TracingObserver::new(format!("per-key-{key}")),
                MetricsObserver::new(format!("per-key-{key}")),
            )
        })
        .build()
        .unwrap();
    f.breaker("a").force_open().unwrap();
    f.breaker("b").force_open().unwrap();
    for key in ["per-key-a", "per-key-b"] {
        assert_eq!(caught(key, "circuit breaker opened").len(), 1, "{key}");
        assert_eq!(
            value(
                tripword_std::observe::names::TRANSITIONS,
                key,
                Some((tripword_std::observe::names::STATE, "open"))
            ),
            Some(1.0),
            "{key}"
        );
    }
}

/// A core observer of the fleet's own: the scope of each transition and
/// the mode changes through `FleetObserver`'s methods; the core's
/// `on_transition` is their default.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_core_observer_gets_the_fleets_reports() {
    #[derive(Clone, Default)]
    struct Plain(Arc<Mutex<Vec<Transition>>>);
    impl tripword::Observer for Plain {
        fn on_transition(&self, t: Transition) {
            self.0.lock().unwrap().push(t);
        }
    }
    impl FleetObserver for Plain {}
    #[derive(Clone, Default)]
    struct Scoped(Arc<Mutex<Vec<(Transition, Scope)>>>, Arc<Mutex<Vec<Mode>>>);
    impl tripword::Observer for Scoped {
        fn on_transition(&self, _: Transition) {}
    }
    impl FleetObserver for Scoped {
        fn on_scoped_transition(&self, t: Transition, scope: Scope) {
            self.0.lock().unwrap().push((t, scope));
        }
        fn on_mode(&self, mode: Mode) {
            self.1.lock().unwrap().push(mode);
        }
    }
    let mut server = server();
    let (plain, scoped) = (Plain::default(), Scoped::default());
    let b = builder(&server, "core", config(1, 60_000_000, 1_000_000))
        .observer((plain.clone(), scoped.clone()))
        .build()
        .unwrap();
    b.force_open().unwrap();
    assert_eq!(plain.0.lock().unwrap().len(), 1);
    assert_eq!(scoped.0.lock().unwrap()[0].1, Scope::Shared);
    server.stop();
    let _ = b.force_close();
    assert_eq!(b.mode(), Mode::Local);
    // The operator's close, obeyed by the local breaker: a local
    // transition (the hold was carried over when Redis was lost).
    assert!(eventually(LONG, || scoped
        .0
        .lock()
        .unwrap()
        .iter()
        .any(|(_, s)| *s == Scope::Local)));
    assert!(
        eventually(LONG, || scoped.1.lock().unwrap().contains(&Mode::Local)),
        "{:?}",
        scoped.1
    );
}

/// Rejections and stale releases reach the observer (they never take the
/// closed path), in the sync and the async form; admissions and quiet
/// releases do not (the closed path makes no observer call).
#[tokio::test(flavor = "current_thread")]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
async fn rejections_and_stale_releases_are_reported() {
    use tripword::{CircuitBreaker, Outcome};
    use tripword_std::observe::names;
    let _ = (events(), recording());
    let server = server();
    let b = builder(&server, "rejecting", config(1, 60_000_000, 1_000_000))
        .observer((
            TracingObserver::new("rejecting"),
            MetricsObserver::new("rejecting"),
        ))
        .build()
        .unwrap();
    let t = b.acquire().unwrap();
    b.release(t, Outcome::Success);
    assert_eq!(
        value(names::CALLS, "rejecting", Some((names::OUTCOME, "success"))),
        Some(0.0),
        "a quiet release is not reported"
    );
    // A ticket made stale by a forced close, released in each form.
    for async_form in [false, true] {
        let t = b.acquire().unwrap();
        b.force_close().unwrap();
        if async_form {
            let verdict = tripword::kit::TickVerdict::from(Outcome::Failure);
            if let tripword::kit::Reply::Wait(f) = CircuitBreaker::release_async(&b, t, verdict) {
                f.await;
            }
        } else {
            b.release(t, Outcome::Failure);
        }
    }
    assert_eq!(value(names::STALE_RELEASES, "rejecting", None), Some(2.0));
    assert_eq!(caught("rejecting", "stale release ignored").len(), 2);
    // Tripped: each form's rejection.
    let t = b.acquire().unwrap();
    b.release(t, Outcome::Failure);
    assert!(b.acquire().is_err());
    assert!(
        tripword_std::BreakerExt::call_async(&b, async { Ok::<_, ()>(()) })
            .await
            .is_err()
    );
    assert_eq!(
        value(names::REJECTIONS, "rejecting", Some((names::CAUSE, "open"))),
        Some(2.0)
    );
    let rejected = caught("rejecting", "call rejected");
    assert_eq!(rejected.len(), 2, "{rejected:?}");
    let ms: u64 = rejected[0].field("retry_after_ms").parse().unwrap();
    assert!(ms > 0 && ms <= 60_000, "{ms}");
}

/// With no observer set, a config mismatch is still said: a `tracing`
/// warning naming both configs and the following gauge at 1, once per key
/// however many refreshes see it; the gauge is 0 once the configs agree.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_config_mismatch_warns_and_meters_with_no_observer() {
    events();
    recording();
    let server = server();
    let key = "mismatch-warns";
    let warnings = || -> Vec<Seen> {
        events()
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|s| {
                s.field("breaker") == key
                    && s.field("message")
                        .starts_with("fleet config is not this instance's: it follows")
            })
            .cloned()
            .collect()
    };
    let fleet = builder(&server, key, config(5, 60_000_000, 1_000_000))
        .build()
        .unwrap();
    let other = builder(&server, key, config(3, 60_000_000, 1_000_000))
        .refresh(Duration::from_millis(20))
        .build()
        .unwrap();
    let following = tripword_redis::metric_names::FOLLOWING;
    let seen = warnings();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].level, Level::WARN);
    assert_eq!(seen[0].field("ours"), other.config_fingerprint());
    assert_eq!(seen[0].field("fleet"), fleet.config_fingerprint());
    assert_eq!(value(following, key, None), Some(1.0));
    // Its watcher's refreshes read the fingerprint again: no more warnings.
    let refreshes = other.stats().refreshes;
    assert!(eventually(LONG, || other.stats().refreshes >= refreshes + 5));
    assert_eq!(warnings().len(), 1, "once per key");
    // The other config published: it rules, the gauge drops; the first
    // instance now follows, and says so once.
    assert_eq!(other.publish_config().unwrap(), 1);
    assert_eq!(value(following, key, None), Some(0.0));
    assert_eq!(other.mode(), Mode::Shared);
    fleet.sync().unwrap();
    assert_eq!(fleet.mode(), Mode::Local);
    let seen = warnings();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[1].field("ours"), fleet.config_fingerprint());
    assert_eq!(seen[1].field("fleet"), other.config_fingerprint());
}

/// A full fleet's overflow: counted as `tripword-std`'s registry counts
/// its own (`tripword.registry.overflows`, labelled with the name
/// `fleet`), and warned of once per crossing into full. The only test of
/// this binary whose fleet fills up.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_full_fleets_overflow_is_counted_and_warned_of_once_per_crossing() {
    use tripword_std::observe::names;
    let _ = (events(), recording());
    let overflows = || {
        let mut found = None;
        recording().0.visit_counters(|key, c| {
            if key.name() == names::REGISTRY_OVERFLOWS
                && key
                    .labels()
                    .any(|l| l.key() == names::REGISTRY && l.value() == "fleet")
            {
                found = Some(c.load(Ordering::Relaxed));
            }
        });
        found
    };
    let warnings = || {
        events()
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.field("message").starts_with("fleet full"))
            .cloned()
            .collect::<Vec<_>>()
    };
    let server = server();
    let f = Fleet::builder(server.url())
        .op_timeout(Duration::from_secs(5))
        .config(config(1, 60_000_000, 1_000_000))
        .capacity(2)
        .build()
        .unwrap();
    f.breaker("a").force_open().unwrap();
    f.breaker("b").force_open().unwrap();
    for i in 0..3 {
        f.breaker(&format!("made-up-{i}"));
    }
    assert_eq!(f.overflowed(), 3);
    assert_eq!(overflows(), Some(3));
    let warned = warnings();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert_eq!(warned[0].level, Level::WARN);
    assert_eq!(warned[0].field("registry"), "fleet");
    assert_eq!(warned[0].field("capacity"), "2");
    // Room again ("b" is blank and goes for "c"), then full again: a
    // second crossing, a second warning.
    f.breaker("b").force_close().unwrap();
    f.breaker("c").force_open().unwrap();
    assert!(f.get("b").is_none());
    for i in 0..2 {
        f.breaker(&format!("made-up-{i}"));
    }
    assert_eq!(f.overflowed(), 5);
    assert_eq!(overflows(), Some(5));
    assert_eq!(warnings().len(), 2);
}

/// The recovery states as a metrics observer names them: the probe's
/// success moves the fleet to `recovering` (the transition counted, the
/// state gauge at 1), and the ramp's refusals are counted with cause
/// `ramp`.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn metrics_name_the_ramp_and_its_refusals() {
    use tripword_std::observe::names;
    let _ = recording();
    let server = server();
    let config = tripword::Config::new()
        .failure_threshold(1)
        .open_for(1)
        .probe_timeout(60_000_000)
        // A quarter of the calls for ten minutes: the whole test.
        .ramp(tripword::Ramp::stages(600_000_000, &[2_500]))
        .check()
        .unwrap();
    let b = builder(&server, "ramping", config)
        .observer(MetricsObserver::new("ramping"))
        .build()
        .unwrap();
    let t = b.acquire().expect("closed");
    b.release(t, tripword::Outcome::Failure);
    assert!(eventually(LONG, || b.status() == tripword::Status::HalfOpen));
    let probe = b.acquire().expect("the probe");
    assert!(probe.is_probe());
    b.release(probe, tripword::Outcome::Success);
    assert_eq!(b.status(), tripword::Status::Recovering);
    assert_eq!(
        value(
            names::TRANSITIONS,
            "ramping",
            Some((names::STATE, "recovering"))
        ),
        Some(1.0)
    );
    assert_eq!(
        value(names::STATUS, "ramping", Some((names::STATE, "recovering"))),
        Some(1.0)
    );
    // From no credit, at a quarter: three refused, the fourth admitted.
    for _ in 0..3 {
        let why = b.acquire().expect_err("the ramp's share");
        assert_eq!(why.cause(), tripword::Cause::Ramp);
    }
    let t = b.acquire().expect("the fourth");
    b.release(t, tripword::Outcome::Success);
    assert_eq!(
        value(names::REJECTIONS, "ramping", Some((names::CAUSE, "ramp"))),
        Some(3.0)
    );
}
