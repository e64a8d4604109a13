//! `Fleet`: many breakers of one process on one Redis, on one watcher
//! thread, one subscription and a bounded pool; the async form on tokio
//! (no executor thread waits on Redis, a cancelled admission hands its
//! probe back); tripword-std's settings, observers and per-key tower
//! layer; an operator's force during an outage. Each test starts its own
//! redis-server.

mod common;

use common::*;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Waker};
use std::time::Duration;
use tripword::kit::Reply;
use tripword::word::Snapshot;
use tripword::{CircuitBreaker, Outcome, Status, Transition, W64, Word};
use tripword_redis::{Error, Fleet, Mode, Transitions};

fn fleet(server: &tripword_redis::server::RedisServer) -> tripword_redis::FleetBuilder {
    Fleet::builder(server.url()).op_timeout(Duration::from_secs(5))
}

/// Idle keys are evicted as tripword-std's Registry evicts them: not asked
/// for in a whole period, and only when closed.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn idle_closed_keys_are_evicted() {
    let server = server();
    let f = fleet(&server)
        .config(config(1, 60_000_000, 1_000_000))
        .build()
        .unwrap();
    assert!(f.is_empty());
    assert!(f.get("a").is_none(), "get makes nothing");
    let (a, b, c) = (f.breaker("a"), f.breaker("b"), f.breaker("c"));
    assert_eq!((f.len(), f.is_empty()), (3, false));
    assert!(tripword_redis::RedisBreaker::ptr_eq(
        &f.get("a").unwrap(),
        &a
    ));
    let debug = format!("{f:?}");
    assert!(
        debug.starts_with("Fleet {") && debug.contains("breakers: 3"),
        "{debug}"
    );
    let debug = format!(
        "{:?}",
        Fleet::builder("redis://127.0.0.1:7/").op_timeout(Duration::from_millis(9))
    );
    for part in [
        "FleetBuilder {",
        "url: \"redis://127.0.0.1:7/\"",
        "op_timeout: 9ms",
        "..",
    ] {
        assert!(debug.contains(part), "{part} in {debug}");
    }
    let t = c.acquire().unwrap();
    c.release(t, Outcome::Failure); // open: kept
    assert_eq!(f.evict_idle(), 0, "all asked for in this period");
    assert!(f.get("a").is_some(), "a lookup by get marks too");
    assert_eq!(f.evict_idle(), 1, "b was idle for a whole period");
    let mut keys = f.keys();
    keys.sort();
    assert_eq!(keys, ["a", "c"]);
    // A held handle goes on working; the key's next lookup makes another.
    assert!(b.acquire().is_ok());
    assert!(!tripword_redis::RedisBreaker::ptr_eq(&f.breaker("b"), &b));
    drop(a);
}

/// Dropping the fleet and its breakers ends the watcher: the subscription
/// goes.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn dropping_the_fleet_ends_its_watcher() {
    let server = server();
    let f = fleet(&server).build().unwrap();
    let b = f.breaker("k");
    assert!(eventually(LONG, || numpat(&server) == 1));
    drop(f);
    assert!(b.acquire().is_ok(), "a held breaker still works");
    drop(b);
    assert!(
        eventually(LONG, || numpat(&server) == 0),
        "the watcher ended"
    );
}

/// A call that needs Redis is a `Reply::Wait` on the async path, awaited
/// on a current-thread runtime (an executor thread that would deadlock if
/// anything blocked it on the round trip's reply... it does not, since the
/// reply is read by the runtime's own connection task).
#[tokio::test(flavor = "current_thread")]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
async fn the_async_path_awaits_redis_and_trips_the_fleet() {
    let server = server();
    let f = fleet(&server)
        .config(config(2, 60_000_000, 1_000_000))
        .pubsub(false)
        .refresh(Duration::from_secs(3600))
        .build()
        .unwrap();
    let b = f.breaker("async");
    // Closed: answered at once from the mirror.
    let t = match b.acquire_async() {
        Reply::Ready(t) => t.unwrap(),
        Reply::Wait(_) => panic!("a closed admission is one load"),
    };
    // A failure must reach Redis: awaited.
    let reply = b.release_async(t, Outcome::Failure.into());
    assert!(
        matches!(reply, Reply::Wait(_)),
        "a failure report goes to Redis"
    );
    assert_eq!(reply.get().await, tripword::Release::Recorded);
    let before = b.stats().remote_calls;
    let trips_before = b.stats().call_round_trips;
    let t = b.acquire_async().get().await.unwrap();
    assert_eq!(
        b.release_async(t, Outcome::Failure.into()).get().await,
        tripword::Release::Recorded
    );
    assert_eq!(b.status(), Status::Open);
    assert_eq!(
        b.stats().call_round_trips,
        trips_before + 2,
        "a load for the time, then the compare-and-set, as the sync form"
    );
    assert_eq!(
        b.stats().remote_calls,
        before + 1,
        "one operation: the tripping failure"
    );
    assert!(stored(&server, "async").is_some(), "the trip is in Redis");
    // tripword-std's call_async on it.
    use tripword_std::BreakerExt;
    let rejected = b.call_async(async { Ok::<_, ()>(1) }).await.unwrap_err();
    assert_eq!(rejected.cause(), Some(tripword::Cause::Open));
}

/// An admission cancelled while Redis elects it the probe hands the probe
/// back: the next caller is elected at once, not after the probe timeout.
#[tokio::test(flavor = "current_thread")]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
async fn a_cancelled_probe_election_hands_the_probe_back() {
    let server = server();
    // Open for 50 ms, probe timeout an hour: a leaked probe would block.
    let f = fleet(&server)
        .config(config(1, 50_000, 3_600_000_000))
        .pubsub(false)
        .refresh(Duration::from_secs(3600))
        .build()
        .unwrap();
    let b = f.breaker("cancel");
    let t = b.acquire().unwrap();
    b.release(t, Outcome::Failure);
    tokio::time::sleep(Duration::from_millis(120)).await;
    // The election goes to Redis; the caller polls once and goes away.
    let Reply::Wait(future) = b.acquire_async() else {
        panic!("the election needs Redis")
    };
    {
        let mut future = pin!(future);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(future.as_mut().poll(&mut cx).is_pending());
    }
    // The spawned round trip elects the probe for nobody and hands it back.
    let mut elected = None;
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(10)).await;
        b.sync().unwrap();
        if let Ok(t) = b.acquire() {
            elected = Some(t);
            break;
        }
    }
    let t = elected.expect("a new probe is elected once the cancelled one is handed back");
    assert!(t.is_probe());
    b.release(t, Outcome::Success);
    assert_eq!(b.status(), Status::Closed);
}

/// Settings in durations, and a tripword-std observer through
/// `Transitions`.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn settings_and_std_observers() {
    let server = server();
    #[derive(Clone, Default)]
    struct Count(Arc<AtomicUsize>, Arc<AtomicUsize>);
    impl tripword::Observer for Count {
        fn on_transition(&self, _: Transition) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        fn on_corrupt_word(&self, _: u64, _: u32) {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
    }
    let count = Count::default();
    let f = fleet(&server)
        .observer(Transitions(count.clone()))
        .build()
        .unwrap();
    let settings = tripword_std::Settings::new()
        .failure_threshold(1)
        .open_for(Duration::from_secs(30));
    let b = f.breaker_with_settings("settings", &settings).unwrap();
    // 30 s in the server's microseconds (plus the tick the rounding adds).
    assert_eq!(b.config().open_for(), 30_000_001);
    let t = b.acquire().unwrap();
    b.release(t, Outcome::Failure);
    assert_eq!(count.0.load(Ordering::SeqCst), 1, "closed -> open reported");
    // A corrupt word, repaired by this instance: reported too.
    let _: () = redis::cmd("SET")
        .arg("settings")
        .arg("garbage")
        .query(&mut raw(&server))
        .unwrap();
    b.sync().unwrap();
    assert_eq!(count.1.load(Ordering::SeqCst), 1, "the repair reported");
    let err = tripword_std::Settings::new()
        .open_for(Duration::ZERO)
        .failure_threshold(1);
    assert!(f.breaker_with_settings("bad", &err).is_err());
}

/// The whole fleet's config in durations: `FleetBuilder::settings`, the
/// config of every breaker `breaker` makes; the raw form beside it.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_fleet_takes_settings() {
    let server = server();
    let settings = tripword_std::Settings::new()
        .failure_threshold(2)
        .open_for(Duration::from_secs(30))
        .probe_timeout(Duration::from_secs(2));
    let f = fleet(&server).settings(&settings).build().unwrap();
    let b = f.breaker("by-settings");
    assert_eq!(b.config().failure_threshold(), 2);
    assert_eq!(b.config().open_for(), 30_000_001);
    assert_eq!(b.config().probe_timeout(), 2_000_001);
    // The same settings on a breaker alone: the same config, so the same
    // fingerprint: the two share the word.
    let alone = tripword_redis::RedisBreaker::builder(server.url(), "by-settings")
        .settings(&settings)
        .build()
        .unwrap();
    assert_eq!(alone.config(), b.config());
    assert_eq!(alone.mode(), Mode::Shared);
    assert!(alone.config_mismatch().is_none());
    let debug = format!("{f:?}");
    assert!(
        debug.contains("failure_threshold: 2, open_for: 30.000001s"),
        "{debug}"
    );
    // The default, stated in the docs: 5 failures, open 1 s, probe 5 s.
    let d = fleet(&server).build().unwrap().breaker("by-default");
    assert_eq!(
        (
            d.config().failure_threshold(),
            d.config().open_for(),
            d.config().probe_timeout()
        ),
        (5, 1_000_000, 5_000_000)
    );
}

/// The per-key tower layer takes a fleet: each request's key picks its
/// breaker, shared through Redis.
#[tokio::test(flavor = "current_thread")]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
async fn the_per_key_tower_layer_takes_a_fleet() {
    use tower::{Layer, Service, ServiceExt, service_fn};
    use tripword_std::classify::OkOrFailure;
    use tripword_std::tower::RegistryLayer;
    let server = server();
    let f = Arc::new(
        fleet(&server)
            .config(config(1, 60_000_000, 1_000_000))
            .build()
            .unwrap(),
    );
    let mut svc = RegistryLayer::new(f.clone(), |host: &&'static str| host.to_string())
        .classify(OkOrFailure)
        .layer(service_fn(|host: &'static str| async move {
            if host == "down" {
                Err("refused")
            } else {
                Ok(host)
            }
        }));
    assert_eq!(svc.ready().await.unwrap().call("up").await.unwrap(), "up");
    assert!(svc.ready().await.unwrap().call("down").await.is_err());
    let rejected = svc.ready().await.unwrap().call("down").await.unwrap_err();
    assert!(rejected.to_string().contains("open"), "{rejected}");
    assert_eq!(f.breaker("down").status(), Status::Open);
    assert_eq!(f.breaker("up").status(), Status::Closed);
}

/// An operator's force during an outage is not silently local: it returns
/// the error, and the instance obeys it while local. A fleet held open
/// stays open on an instance that loses Redis, past the open time.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn forces_during_an_outage_and_a_hold_that_outlives_the_fallback() {
    let mut server = server();
    let f = fleet(&server)
        .config(config(5, 50_000, 1_000_000))
        .op_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let held = f.breaker("held");
    held.force_open().unwrap();
    let other = f.breaker("other");
    server.stop();
    // Lost Redis while held open: the local breaker holds too.
    assert!(matches!(held.sync(), Err(Error::Redis(_))));
    assert_eq!(held.mode(), Mode::Local);
    std::thread::sleep(Duration::from_millis(120));
    assert!(
        held.acquire().is_err(),
        "no open time ends an operator's hold"
    );
    // A force issued during the outage: an error, and obeyed locally.
    assert!(matches!(other.force_open(), Err(Error::Redis(_))));
    assert_eq!(other.mode(), Mode::Local);
    assert!(other.acquire().is_err(), "forced open here while local");
    assert!(matches!(other.force_close(), Err(Error::Redis(_))));
    assert!(other.acquire().is_ok());
}

/// Two instances with different configs on one key: the second finds the
/// fleet's fingerprint beside the word, reports the mismatch once, stays
/// local and never writes the word, so the fleet's failure run is not
/// reset; once the fingerprints agree it joins.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_config_mismatch_is_reported_and_never_writes_the_shared_word() {
    use std::sync::Mutex;
    #[derive(Clone, Default)]
    struct Mismatches(Arc<Mutex<Vec<(String, String)>>>);
    impl tripword::Observer for Mismatches {
        fn on_transition(&self, _: Transition) {}
    }
    impl tripword_redis::FleetObserver for Mismatches {
        fn on_config_mismatch(&self, ours: &str, fleet: &str) {
            self.0
                .lock()
                .unwrap()
                .push((ours.to_owned(), fleet.to_owned()));
        }
    }
    let server = server();
    let five = builder(&server, "k", config(5, 60_000_000, 1_000_000))
        .build()
        .unwrap();
    let seen = Mismatches::default();
    let three = builder(&server, "k", config(3, 60_000_000, 1_000_000))
        .observer(seen.clone())
        .refresh(Duration::from_millis(20))
        .build()
        .unwrap();
    assert_eq!(
        stored(&server, "k:config").as_deref(),
        Some(five.config_fingerprint())
    );
    assert_eq!(three.mode(), Mode::Local);
    assert_eq!(
        three.config_mismatch().as_deref(),
        Some(five.config_fingerprint())
    );
    assert!(five.config_mismatch().is_none());
    for _ in 0..4 {
        let t = five.acquire().unwrap();
        five.release(t, Outcome::Failure);
    }
    let run = stored(&server, "k");
    // The other config's instance: calls, failures, a force, a sync.
    for _ in 0..2 {
        if let Ok(t) = three.acquire() {
            three.release(t, Outcome::Failure);
        }
    }
    assert!(matches!(
        three.force_close(),
        Err(Error::ConfigMismatch { .. })
    ));
    assert!(three.sync().is_ok());
    std::thread::sleep(Duration::from_millis(100)); // its watcher's refreshes
    assert_eq!(three.mode(), Mode::Local);
    assert_eq!(stored(&server, "k"), run, "the word is untouched");
    let t = five.acquire().unwrap();
    five.release(t, Outcome::Failure);
    assert_eq!(
        five.status(),
        Status::Open,
        "the fifth failure trips: the run was not reset"
    );
    assert_eq!(seen.0.lock().unwrap().len(), 1, "reported once");
    // The fleet moves to the other config: the fingerprint claimed anew.
    let _: () = redis::cmd("DEL")
        .arg("k:config")
        .query(&mut raw(&server))
        .unwrap();
    assert!(eventually(LONG, || three.mode() == Mode::Shared));
    assert!(three.config_mismatch().is_none());
}

/// tripword-std's defaults on a fleet breaker: a `call_async` dropped
/// before it completes records `Ignored` (it says nothing about the
/// dependency), so a cancelled call never trips the fleet; a `Permit`
/// dropped without a report records the config's abandon outcome, a
/// failure, as tripword-std's `Permit` does.
#[tokio::test(flavor = "current_thread")]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
async fn a_cancelled_call_is_ignored_and_a_dropped_permit_is_a_failure() {
    use tripword_std::BreakerExt;
    let server = server();
    let f = fleet(&server)
        .config(config(1, 60_000_000, 1_000_000))
        .build()
        .unwrap();
    let b = f.breaker("cancel-defaults");
    {
        let call = b.call_async(std::future::pending::<Result<(), ()>>());
        let mut call = pin!(call);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(
            call.as_mut().poll(&mut cx).is_pending(),
            "admitted, running"
        );
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    b.sync().unwrap();
    assert_eq!(
        b.status(),
        Status::Closed,
        "a cancelled call is not a failure"
    );
    drop(b.permit().unwrap());
    assert_eq!(b.status(), Status::Open, "a dropped permit is");
}

/// The async form after Redis restarts empty: the multiplexed connection
/// died with the server, so it is made again (an operation on the dead one
/// fails and drops it), and the lost key resumes its counter as in the
/// sync form: the report that trips the new fleet is stored with the
/// counter moved on by 4 096.
#[tokio::test(flavor = "current_thread")]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
async fn the_async_form_reconnects_after_a_restart_and_resumes_the_counter() {
    let mut server = server();
    let f = fleet(&server)
        .config(config(1, 60_000_000, 60_000_000))
        .op_timeout(Duration::from_millis(500))
        .refresh(Duration::from_millis(50))
        .retry(Duration::from_millis(50))
        .build()
        .unwrap();
    let b = f.breaker("restart");
    let t = b.acquire_async().get().await.unwrap();
    let reply = b.release_async(t, Outcome::Failure.into());
    assert!(matches!(reply, Reply::Wait(_)));
    assert_eq!(reply.get().await, tripword::Release::Recorded);
    let held = Snapshot::counter_bits::<W64>(b.word());
    assert!(stored(&server, "restart").is_some());
    server.restart().unwrap();
    let resumed = (held + 4_096) & W64::LAYOUT.max_counter();
    assert!(
        eventually(LONG, || b.mode() == Mode::Shared
            && Snapshot::counter_bits::<W64>(b.word()) == resumed),
        "the watcher read the lost key as the counter moved on"
    );
    // Until a report reaches the new server: the first operation on the
    // dead connection may fail (and send the instance local for a retry
    // period).
    let deadline = std::time::Instant::now() + LONG;
    while stored(&server, "restart").is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "no async report reached the restarted Redis"
        );
        if b.mode() == Mode::Shared
            && let Ok(t) = b.acquire_async().get().await
        {
            let _ = b.release_async(t, Outcome::Failure.into()).get().await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let word: u64 = stored(&server, "restart").unwrap().parse().unwrap();
    let snap = Snapshot::decode::<W64>(word).unwrap();
    assert_eq!(snap.state.status(), Status::Open);
    assert_eq!(snap.counter, (resumed + 1) & W64::LAYOUT.max_counter());
}

/// A `call_async` cancelled while it runs as the fleet's probe hands the
/// probe back from its drop, whether its election's answer had reached it
/// (`release_detached`, a spawned release) or still waited in the
/// admission's channel (the admission's own drop): the next caller is
/// elected at once, not after the probe timeout.
#[tokio::test(flavor = "current_thread")]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
async fn a_cancelled_probe_call_gives_the_probe_back() {
    use tripword_std::BreakerExt;
    let server = server();
    let f = fleet(&server)
        .config(config(1, 50_000, 3_600_000_000))
        .pubsub(false)
        .refresh(Duration::from_secs(3600))
        .build()
        .unwrap();
    let b = f.breaker("probe-call");
    let mut cx = Context::from_waker(Waker::noop());
    // Polled again after the election (the answer taken: the call runs),
    // or not (the answer left in the admission's channel).
    for poll_after_election in [true, false] {
        let t = b.acquire().unwrap();
        b.release(t, Outcome::Failure);
        tokio::time::sleep(Duration::from_millis(120)).await;
        let mut call = Box::pin(b.call_async(std::future::pending::<Result<(), ()>>()));
        // The election's round trip runs as a task: poll until it has made
        // this call the probe.
        for _ in 0..500 {
            assert!(call.as_mut().poll(&mut cx).is_pending());
            tokio::time::sleep(Duration::from_millis(10)).await;
            b.sync().unwrap();
            if b.status() == Status::Probing {
                break;
            }
        }
        assert_eq!(b.status(), Status::Probing, "the call is the probe");
        if poll_after_election {
            assert!(call.as_mut().poll(&mut cx).is_pending(), "running");
        }
        drop(call);
        let mut elected = None;
        for _ in 0..500 {
            tokio::time::sleep(Duration::from_millis(10)).await;
            b.sync().unwrap();
            if let Ok(t) = b.acquire() {
                elected = Some(t);
                break;
            }
        }
        let t = elected.unwrap_or_else(|| {
            panic!(
                "polled after the election: {poll_after_election}: the probe was not handed back"
            )
        });
        assert!(t.is_probe());
        assert_eq!(
            b.release(t, Outcome::Success),
            tripword_redis::Release::Recorded
        );
        assert_eq!(b.status(), Status::Closed);
    }
}
