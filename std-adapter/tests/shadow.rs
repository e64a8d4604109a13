//! Shadow mode (`tripword::kit::Shadow`) through `tripword-std`: the
//! calls, a registry of shadowed breakers switched entry by entry, the
//! `WouldReject` counter beside the `MetricsObserver`'s (feature
//! `metrics`), and the tower layer over `Arc<Shadow<_>>` (features
//! `tower`, `tokio`): an open breaker in shadow mode lets the call reach
//! the inner service, polled ready first; switched off, the next call is
//! rejected. Hand-moved clocks; no timing assertions.

use tripword::clock::ManualClock;
use tripword::kit::{CircuitBreaker, Shadow};
use tripword::{Breaker, Cause, Config, Observer, Status};
use tripword_std::{BreakerExt, Registry};

/// A clock of its own for each test.
fn clock() -> &'static ManualClock {
    Box::leak(Box::new(ManualClock::new(0)))
}

/// Trips on the first failure, open 100 ticks.
fn breaker<O: Observer>(
    clock: &'static ManualClock,
    observer: O,
) -> Breaker<&'static ManualClock, tripword::W64, O> {
    Breaker::from_parts(
        Config::new()
            .failure_threshold(1)
            .open_for(100)
            .check()
            .unwrap(),
        clock,
        observer,
    )
}

#[test]
fn calls_run_through_an_open_breaker_in_shadow_mode() {
    let clock = clock();
    let b = Shadow::new(breaker(clock, ()));
    assert!(
        b.call(|| Err::<(), _>("down"))
            .unwrap_err()
            .inner()
            .is_some()
    );
    assert_eq!(b.status(), Status::Open);
    // Open, and the closure runs; its outcome changes nothing.
    assert_eq!(b.call(|| Ok::<_, ()>(7)), Ok(7));
    assert!(b.call(|| Err::<(), _>("down")).is_err());
    clock.advance(50);
    assert_eq!(b.health().retry_after, Some(50), "still open from the trip");
    // Switched off: rejected, with the wait the breaker would have given.
    b.set_shadow(false);
    let e = b.call(|| Ok::<_, ()>(7)).unwrap_err();
    assert_eq!(e.rejected().map(|r| r.cause()), Some(Cause::Open));
}

#[test]
fn a_registry_of_shadowed_breakers_switched_entry_by_entry() {
    let clock = clock();
    let r: Registry<String, Shadow<Breaker<&'static ManualClock>>> =
        Registry::new(move |_: &String| Shadow::new(breaker(clock, ())));
    let _ = r.with("db", |b| b.call(|| Err::<(), _>("down")));
    assert_eq!(r.with("db", |b| b.status()), Status::Open);
    // In shadow mode every key's calls run.
    assert_eq!(r.with("db", |b| b.call(|| Ok::<_, ()>(1))), Ok(1));
    assert_eq!(r.with("cache", |b| b.call(|| Ok::<_, ()>(2))), Ok(2));
    // Enforce on every entry: the state each reached is kept.
    let mut switched = 0;
    r.for_each(|entry| {
        entry.breaker().set_shadow(false);
        switched += 1;
    });
    assert_eq!(switched, 2);
    let e = r.with("db", |b| b.call(|| Ok::<_, ()>(1))).unwrap_err();
    assert_eq!(e.rejected().map(|r| r.cause()), Some(Cause::Open));
    assert_eq!(r.with("cache", |b| b.call(|| Ok::<_, ()>(2))), Ok(2));
    // An entry from `get` is the shadowed breaker too.
    let db = r.get("db");
    db.set_shadow(true);
    assert_eq!(db.call(|| Ok::<_, ()>(3)), Ok(3));
    assert_eq!(CircuitBreaker::status(&*db), Status::Open);
    assert!(!CircuitBreaker::is_open(&*db), "nothing is rejected");
}

#[cfg(feature = "metrics")]
mod metrics_counts {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use metrics::{
        Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit,
    };
    use metrics_util::registry::{AtomicStorage, Registry};
    use tripword_std::observe::{MetricsObserver, WouldReject, names};

    use super::*;

    /// Keeps every counter's value (gauges too, unread here).
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
            panic!("no histograms expected")
        }
    }

    /// (name, breaker label, cause or outcome label) -> count.
    fn counts(r: &Recording) -> BTreeMap<(String, String, String), u64> {
        let mut out = BTreeMap::new();
        for (key, c) in r.0.get_counter_handles() {
            let label = |k: &str| {
                key.labels()
                    .find(|l| l.key() == k)
                    .map_or(String::new(), |l| l.value().to_string())
            };
            out.insert(
                (
                    key.name().to_string(),
                    label(names::BREAKER),
                    label(names::CAUSE) + &label(names::OUTCOME),
                ),
                c.load(std::sync::atomic::Ordering::Relaxed),
            );
        }
        out
    }

    fn count(r: &Recording, name: &str, cause: &str) -> u64 {
        counts(r)[&(name.to_string(), "payments".to_string(), cause.to_string())]
    }

    #[test]
    fn would_be_rejections_are_counted_apart() {
        let recording = Recording(Arc::new(Registry::atomic()));
        let clock = clock();
        let b = metrics::with_local_recorder(&recording, || {
            let b = breaker(clock, MetricsObserver::new("payments"));
            let hook: WouldReject = b.observer().would_reject();
            Shadow::with_observer(b, hook, true)
        });
        // Every series exists from the start, at zero.
        for cause in ["open", "probing", "forced_open"] {
            assert_eq!(count(&recording, names::WOULD_REJECT, cause), 0);
        }
        let _ = b.call(|| Err::<(), _>("down")); // trips
        for _ in 0..3 {
            assert_eq!(b.call(|| Ok::<_, ()>(1)), Ok(1));
        }
        b.inner().force_open();
        assert_eq!(b.call(|| Ok::<_, ()>(1)), Ok(1));
        // The breaker reports its rejections as it would; the hook says
        // which of them ran.
        assert_eq!(count(&recording, names::REJECTIONS, "open"), 3);
        assert_eq!(count(&recording, names::WOULD_REJECT, "open"), 3);
        assert_eq!(count(&recording, names::REJECTIONS, "forced_open"), 1);
        assert_eq!(count(&recording, names::WOULD_REJECT, "forced_open"), 1);
        // Only the real call's outcome was recorded.
        let calls = counts(&recording)
            .iter()
            .filter(|((name, _, _), _)| name == names::CALLS)
            .map(|(_, n)| n)
            .sum::<u64>();
        assert_eq!(calls, 1);
        // Enforcing: a rejection that happened, not counted by the hook.
        b.set_shadow(false);
        assert!(b.call(|| Ok::<_, ()>(1)).is_err());
        assert_eq!(count(&recording, names::REJECTIONS, "forced_open"), 2);
        assert_eq!(count(&recording, names::WOULD_REJECT, "forced_open"), 1);
    }
}

#[cfg(all(feature = "tower", feature = "tokio"))]
mod tower_layer {
    use std::future::{Ready, ready};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll};

    use tower::{Layer, Service, ServiceExt};
    use tripword_std::CallError;
    use tripword_std::tower::{BreakerLayer, BreakerService};

    use super::*;

    /// A service that must be polled ready before each call (tower's
    /// contract, asserted), and counts the calls that reach it.
    struct Gate {
        ready: bool,
        hits: Arc<AtomicUsize>,
    }

    /// A clone is not ready, as tower's services.
    impl Clone for Gate {
        fn clone(&self) -> Self {
            Gate {
                ready: false,
                hits: self.hits.clone(),
            }
        }
    }

    impl Service<bool> for Gate {
        type Response = &'static str;
        type Error = &'static str;
        type Future = Ready<Result<&'static str, &'static str>>;
        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), &'static str>> {
            self.ready = true;
            Poll::Ready(Ok(()))
        }
        fn call(&mut self, ok: bool) -> Self::Future {
            assert!(self.ready, "called before it was polled ready");
            self.ready = false;
            self.hits.fetch_add(1, Ordering::SeqCst);
            ready(if ok { Ok("ok") } else { Err("down") })
        }
    }

    type Svc = BreakerService<Gate, Arc<Shadow<Breaker<&'static ManualClock>>>>;

    /// One request, as a tower client makes it: ready, then call.
    async fn call(svc: &mut Svc, ok: bool) -> Result<&'static str, CallError<&'static str>> {
        svc.ready().await?.call(ok).await
    }

    #[tokio::test]
    async fn an_open_breaker_in_shadow_mode_lets_the_call_through() {
        let clock = clock();
        let b = Arc::new(Shadow::new(breaker(clock, ())));
        let hits = Arc::new(AtomicUsize::new(0));
        let mut svc = BreakerLayer::new(b.clone()).layer(Gate {
            ready: false,
            hits: hits.clone(),
        });
        assert_eq!(call(&mut svc, false).await, Err(CallError::Inner("down")));
        assert_eq!(b.status(), Status::Open);
        // Open, in shadow mode: the call reaches the inner service, which
        // was polled ready first, and its outcome changes nothing.
        assert_eq!(call(&mut svc, true).await, Ok("ok"));
        assert_eq!(call(&mut svc, false).await, Err(CallError::Inner("down")));
        assert_eq!(hits.load(Ordering::SeqCst), 3);
        assert_eq!(b.status(), Status::Open);
        // Switched off: the next call is rejected, the service untouched.
        b.set_shadow(false);
        let e = call(&mut svc, true).await.unwrap_err();
        assert_eq!(e.rejected().map(|r| r.cause()), Some(Cause::Open));
        assert_eq!(hits.load(Ordering::SeqCst), 3);
        // Its open time over, the probe goes through and closes it.
        clock.advance(100);
        assert_eq!(call(&mut svc, true).await, Ok("ok"));
        assert_eq!(b.status(), Status::Closed);
    }
}
