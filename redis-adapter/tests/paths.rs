//! Which operations reach Redis, and how often: the round-trip table of
//! `docs/distributed-proofs.md` checked operation by operation; the local paths
//! (closed admission, quiet release, rejection before the deadline, stale
//! ticket) checked to make none; a void time estimate sending the decision
//! to Redis; a failed clock read storing nothing; the connection pool; the
//! watcher's pace, its pub/sub, its reaction to a dead connection and its end
//! with the instance; and the accessors a service reads.
//!
//! No assertion depends on the machine's speed: counts are exact where only
//! the test acts, bounds are upper bounds that a descheduled thread can only
//! make smaller, and waits are generous limits on something that must happen.

mod common;

use common::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tripword::word::{Snapshot, State};
use tripword::{Cause, Outcome, Status, Transition, W64, Word};
use tripword_redis::{FleetObserver, Mode, RedisBreaker, Release, Scope};
use tripword_std::{BreakerExt, CallError};

const HOUR: Duration = Duration::from_secs(3600);

/// Waits for the watcher's first read of the word (the build made one
/// before): from then on, with a refresh period of an hour and no pub/sub,
/// the watcher neither samples the server's time nor switches the mode
/// again within the test.
fn settled(b: &RedisBreaker) {
    assert!(
        eventually(LONG, || b.stats().refreshes >= 2),
        "the watcher's first read"
    );
    assert_eq!(b.mode(), Mode::Shared);
}

/// An instance whose clock the test moves, without pub/sub, its watcher
/// settled (see [`settled`]).
fn quiet(
    server: &tripword_redis::server::RedisServer,
    key: &str,
    config: tripword::ValidConfig<W64>,
    clock: &ManualLocal,
) -> RedisBreaker {
    let b = builder(server, key, config)
        .refresh(HOUR)
        .pubsub(false)
        .local_clock(clock.clone())
        .build()
        .unwrap();
    settled(&b);
    b
}

/// Round trips made by calls so far.
fn trips(b: &RedisBreaker) -> u64 {
    b.stats().call_round_trips
}

/// Runs `op` and returns its result with the round trips it made. An
/// operation that makes none must not have gone to Redis at all (taken a
/// connection, run the kit's loop there): in these sequences only a local
/// path makes no round trip.
fn counted<T>(b: &RedisBreaker, op: impl FnOnce() -> T) -> (T, u64) {
    let (before, remote) = (trips(b), b.stats().remote_calls);
    let out = op();
    let (n, went) = (trips(b) - before, b.stats().remote_calls - remote);
    assert_eq!(
        n == 0,
        went == 0,
        "{n} round trips in {went} remote operations"
    );
    (out, n)
}

/// The table of `docs/distributed-proofs.md`, "Round trips per operation",
/// one row at a time, plus the local paths that must make none. The
/// instance's clock is frozen, so its estimate of the server's time stays
/// valid (and behind the deadline) for the whole test; the watcher neither refreshes nor
/// writes; nothing else writes the key: every count is exact.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn round_trips_per_operation() {
    let server = server();
    let clock = ManualLocal::new(1 << 40);
    let b = quiet(&server, "k", config(2, 60_000_000, 60_000_000), &clock);

    let t = b.acquire().unwrap();
    assert_eq!(
        counted(&b, || b.release(t, Outcome::Success)),
        (Release::Recorded, 0)
    );
    let t = b.acquire().unwrap();
    assert_eq!(
        counted(&b, || b.release(t, Outcome::Ignored)),
        (Release::Recorded, 0)
    );
    let (t, n) = counted(&b, || b.acquire().unwrap());
    assert_eq!(n, 0, "a closed admission");
    assert_eq!(
        counted(&b, || b.release(t, Outcome::Failure)),
        (Release::Recorded, 1),
        "a failure below the threshold: the compare-and-set"
    );
    let t = b.acquire().unwrap();
    assert_eq!(
        counted(&b, || b.release(t, Outcome::Success)),
        (Release::Recorded, 1),
        "a success after failures"
    );

    // Stale tickets: the mirror shows a later counter, settled locally.
    let old = b.acquire().unwrap();
    let old_failure = b.acquire().unwrap();
    assert_eq!(counted(&b, || b.force_close()).1, 2, "force_close");
    assert_eq!(
        counted(&b, || b.release(old, Outcome::Success)),
        (Release::Stale, 0),
        "a stale success"
    );
    assert_eq!(
        counted(&b, || b.release(old_failure, Outcome::Failure)),
        (Release::Stale, 0),
        "a stale failure"
    );

    // The trip: TIME, then the compare-and-set.
    let (t1, t2) = (b.acquire().unwrap(), b.acquire().unwrap());
    assert_eq!(
        counted(&b, || b.release(t1, Outcome::Failure)),
        (Release::Recorded, 1)
    );
    assert_eq!(
        counted(&b, || b.release(t2, Outcome::Failure)),
        (Release::Recorded, 2),
        "a failure that trips"
    );
    assert_eq!(b.status(), Status::Open);
    let (why, n) = counted(&b, || b.acquire().unwrap_err());
    assert_eq!(
        (why.cause(), n),
        (Cause::Open, 0),
        "rejected before the deadline"
    );
    assert!(why.retry_after().unwrap() <= 60_000_000);

    assert_eq!(counted(&b, || b.force_open()).1, 2, "force_open");
    let (why, n) = counted(&b, || b.acquire().unwrap_err());
    assert_eq!((why.cause(), n), (Cause::ForcedOpen, 0));
    assert_eq!(counted(&b, || b.force_close()).1, 2);
    assert_eq!(
        counted(&b, || b.sync().unwrap()),
        (Status::Closed, 1),
        "sync"
    );

    // The probe: a second key, open for 1 ms.
    let p = quiet(&server, "p", config(1, 1_000, 60_000_000), &clock);
    let t = p.acquire().unwrap();
    assert_eq!(
        counted(&p, || p.release(t, Outcome::Failure)),
        (Release::Recorded, 2)
    );
    // The open time passes on the server's clock, and on the estimate.
    std::thread::sleep(Duration::from_millis(20));
    clock.advance(1_000_000);
    assert_eq!(p.status(), Status::HalfOpen, "at the estimated server time");
    let (probe, n) = counted(&p, || p.permit().expect("the open time is over"));
    assert!(probe.is_probe());
    assert_eq!(n, 2, "a probe election: load, compare-and-set");
    assert_eq!(
        counted(&p, || probe.success()),
        (Release::Recorded, 2),
        "a probe result"
    );
    assert_eq!(p.status(), Status::Closed);
    let permit = p.permit().unwrap();
    assert!(!permit.is_probe(), "a closed admission is no probe");
    assert_eq!(permit.ignore(), Release::Recorded);
}

/// Stores `Open { since, trips: 1 }` with `counter` under the key, has the
/// mirror read it, then moves the instance's clock past the sample's age
/// limit (refresh + operation timeout): no estimate of the server's time.
fn void_estimate_on_open(
    server: &tripword_redis::server::RedisServer,
    b: &RedisBreaker,
    clock: &ManualLocal,
    since: u64,
    counter: u32,
) {
    let open = Snapshot {
        state: State::Open { since, trips: 1 },
        counter,
    }
    .encode::<W64>();
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg(open)
        .query(&mut raw(server))
        .unwrap();
    b.sync().unwrap();
    assert_eq!(b.word(), open);
    clock.advance(2 * 3600 * 1_000_000);
    assert_eq!(b.fleet_now(), None);
}

/// With no valid estimate of the server's time (the instance's clock ran
/// past the sample's age limit, or went back), a mirror that says `Open` is
/// not trusted to reject: Redis decides, on its own clock.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_void_estimate_sends_the_decision_to_redis() {
    let server = server();
    let cfg = config(1, 1_000, 60_000_000);
    let clock = ManualLocal::new(1 << 40);
    let b = quiet(&server, "k", cfg, &clock);
    // An `Open` word whose time field is 10 units before the field wraps: at
    // time 0 (what a decision without an estimate would read) it is still
    // open; at the server's time its open time (1 ms) has long passed.
    let l = W64::LAYOUT;
    let field = |t: u64| (t >> cfg.time_shift()) & l.time_mask();
    let since = l.time_mask() + 1 - 10;
    while field(server_now(&server)).wrapping_sub(since) & l.time_mask() < 2_000_000 {
        std::thread::sleep(Duration::from_millis(100));
    }
    void_estimate_on_open(&server, &b, &clock, since, 1);
    let (probe, n) = counted(&b, || {
        b.acquire()
            .expect("Redis's clock says the open time is over")
    });
    assert!(probe.is_probe());
    assert_eq!(n, 2);
    assert_eq!(b.release(probe, Outcome::Success), Release::Recorded);

    // Nor is it trusted for the status: an `Open` word 2 000 units after the
    // field's origin, which time 0 would read as a clock gone back (so as
    // elapsed, spec I6), is reported as the mirror holds it.
    void_estimate_on_open(&server, &b, &clock, 2_000, 5);
    assert_eq!(b.status(), Status::Open, "the state the mirror holds");
}

/// A clock read that fails stores nothing: the decision that needed the time
/// is not made on a made-up time, the outcome is unreported and the instance
/// falls back to its local breaker.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_failed_clock_read_stores_nothing() {
    let server = server();
    let proxy = FaultProxy::start(&server);
    let b = RedisBreaker::builder(proxy.url(), "k")
        .config(config(1, 60_000_000, 60_000_000))
        .op_timeout(Duration::from_millis(500))
        .refresh(HOUR)
        .pubsub(false)
        .build()
        .unwrap();
    settled(&b);
    let t = b.acquire().unwrap();
    proxy.fail_time.store(true, Ordering::SeqCst);
    // The failure trips, so it needs the time; TIME is refused.
    assert_eq!(b.release(t, Outcome::Failure), Release::Unreported);
    assert_eq!(b.mode(), Mode::Local);
    assert_eq!(stored(&server, "k"), None, "nothing stored");
    assert_eq!(b.status(), Status::Open, "the local breaker counted it");
    proxy.fail_time.store(false, Ordering::SeqCst);
    assert_eq!(
        b.sync().unwrap(),
        Status::Closed,
        "the shared word is untouched"
    );
    assert_eq!(b.mode(), Mode::Shared);
}

/// Outcomes that cannot reach Redis count in the local breaker (while it is
/// closed), so an instance cut off mid-call still trips on its own.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn unreported_outcomes_count_locally() {
    let mut server = server();
    let b = builder(&server, "k", config(2, 60_000_000, 60_000_000))
        .refresh(HOUR)
        .retry(HOUR)
        .pubsub(false)
        .build()
        .unwrap();
    settled(&b);
    let (t1, t2) = (b.acquire().unwrap(), b.acquire().unwrap());
    server.stop();
    assert_eq!(b.release(t1, Outcome::Failure), Release::Unreported);
    assert_eq!(b.mode(), Mode::Local);
    assert_eq!(b.status(), Status::Closed, "one failure of two");
    assert_eq!(b.release(t2, Outcome::Failure), Release::Unreported);
    assert_eq!(b.status(), Status::Open, "the local breaker tripped");
    assert_eq!(b.acquire().unwrap_err().cause(), Cause::Open);
}

/// Calls reuse pooled connections: a run of failure reports opens none.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn calls_reuse_pooled_connections() {
    let server = server();
    let b = builder(&server, "k", config(1000, 60_000_000, 60_000_000))
        .refresh(HOUR)
        .pubsub(false)
        .build()
        .unwrap();
    let before = connections_received(&server);
    for _ in 0..20 {
        let t = b.acquire().unwrap();
        assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
    }
    // One for the count below itself; at most one more if the watcher's one
    // refresh held the pooled connection when a call wanted it.
    let opened = connections_received(&server) - before - 1;
    assert!(opened <= 1, "{opened} connections opened for 20 calls");
}

/// The pool keeps at most 16 idle connections: calls that needed more at
/// once (Redis paused while 24 of them wait) close theirs after.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn the_pool_keeps_at_most_16_connections() {
    let server = server();
    let b = Arc::new(
        builder(&server, "k", config(1000, 60_000_000, 60_000_000))
            .op_timeout(Duration::from_secs(20))
            .refresh(HOUR)
            .pubsub(false)
            .build()
            .unwrap(),
    );
    let callers = 24;
    let started = Arc::new(AtomicUsize::new(0));
    server.pause().unwrap();
    let threads: Vec<_> = (0..callers)
        .map(|_| {
            let (b, started) = (b.clone(), started.clone());
            std::thread::spawn(move || {
                let t = b.acquire().unwrap();
                started.fetch_add(1, Ordering::SeqCst);
                b.release(t, Outcome::Failure)
            })
        })
        .collect();
    // Every caller is waiting on its own connection to the paused server.
    // (If some were late the test checks less, never fails wrongly.)
    assert!(eventually(LONG, || started.load(Ordering::SeqCst) == callers));
    std::thread::sleep(Duration::from_millis(300));
    server.resume().unwrap();
    for t in threads {
        assert_eq!(t.join().unwrap(), Release::Recorded);
    }
    assert!(
        eventually(LONG, || clients(&server) <= 16),
        "{} connections kept",
        clients(&server)
    );
}

/// Without pub/sub the watcher reads the word once per refresh period: a
/// period of an hour means one read in the test's lifetime.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn the_watcher_polls_once_per_period() {
    let server = server();
    let b = builder(&server, "k", config(5, 1_000_000, 1_000_000))
        .refresh(HOUR)
        .pubsub(false)
        .build()
        .unwrap();
    // The build's read, then the watcher's first.
    assert!(eventually(LONG, || b.stats().refreshes >= 2));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(b.stats().refreshes, 2);
}

/// With pub/sub the watcher reads the word when it subscribes and then once
/// per refresh period, however long it waits for messages.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn the_subscribed_watcher_refreshes_once_per_period() {
    let server = server();
    let b = builder(&server, "k", config(5, 1_000_000, 1_000_000))
        .refresh(HOUR)
        .build()
        .unwrap();
    assert!(eventually(LONG, || b.stats().refreshes >= 2));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        b.stats().refreshes,
        2,
        "the build's read and the subscription's"
    );

    let period = Duration::from_millis(100);
    let start = Instant::now();
    let b = builder(&server, "k2", config(5, 1_000_000, 1_000_000))
        .refresh(period)
        .build()
        .unwrap();
    assert!(
        eventually(LONG, || b.stats().refreshes >= 4),
        "periodic reads"
    );
    std::thread::sleep(Duration::from_millis(300));
    // A read is due only a period after the last one ended: at most one per
    // period of the elapsed time, plus the two at the start.
    let bound = 3 + start.elapsed().as_millis() / period.as_millis();
    let n = u128::from(b.stats().refreshes);
    assert!(n <= bound, "{n} refreshes, at most {bound}");
}

/// A watcher whose connection dies switches the instance to its local
/// breaker by itself, with no call made.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn the_watcher_detaches_when_its_connection_dies() {
    let mut server = server();
    let log = Recorder::default();
    let b = builder(&server, "k", config(5, 1_000_000, 1_000_000))
        .refresh(HOUR)
        .retry(HOUR)
        .observer(log.clone())
        .build()
        .unwrap();
    assert!(eventually(LONG, || b.stats().refreshes >= 2), "subscribed");
    server.stop();
    assert!(eventually(LONG, || log.0.modes.lock().unwrap().len() == 2));
    assert_eq!(b.mode(), Mode::Local);
    let modes = log.0.modes.lock().unwrap().clone();
    assert_eq!(modes, [Mode::Shared, Mode::Local]);
}

/// Dropping the instance stops its watcher, which releases everything the
/// instance held (its observer included).
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn dropping_the_breaker_stops_its_watcher() {
    struct Held(#[allow(dead_code)] Arc<()>);
    impl tripword::Observer for Held {
        fn on_transition(&self, _: Transition) {}
    }
    impl FleetObserver for Held {}
    let server = server();
    for pubsub in [true, false] {
        let token = Arc::new(());
        let b = builder(&server, "k", config(5, 1_000_000, 1_000_000))
            .refresh(HOUR)
            .retry(HOUR)
            .pubsub(pubsub)
            .observer(Held(token.clone()))
            .build()
            .unwrap();
        let held = Arc::downgrade(&token);
        drop(token);
        assert!(eventually(LONG, || b.stats().refreshes >= 2));
        drop(b);
        assert!(
            eventually(LONG, || held.upgrade().is_none()),
            "pubsub {pubsub}: the watcher still holds the instance"
        );
    }
}

/// A permit dropped without a report records the config's abandon outcome
/// (a failure by default).
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_dropped_permit_is_a_failure() {
    let server = server();
    let b = builder(&server, "k", config(2, 60_000_000, 60_000_000))
        .build()
        .unwrap();
    for _ in 0..2 {
        let permit = b.permit().unwrap();
        drop(permit);
    }
    assert_eq!(b.status(), Status::Open);
}

/// A ticket is released to the instance that issued it: another instance
/// finds it stale, whether it came from the shared word or from a local
/// breaker (both local breakers start at the same counter).
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn tickets_of_another_instance_are_stale() {
    let mut server = server();
    let cfg = config(1, 60_000_000, 60_000_000);
    let quiet = |key| {
        builder(&server, key, cfg)
            .refresh(HOUR)
            .retry(HOUR)
            .pubsub(false)
            .build()
            .unwrap()
    };
    let (a, b) = (quiet("k"), quiet("k"));
    settled(&a);
    settled(&b);
    let shared = a.acquire().unwrap();
    assert_eq!(shared.scope(), Scope::Shared);
    assert_eq!(b.release(shared, Outcome::Failure), Release::Stale);
    server.stop();
    assert!(a.sync().is_err() && b.sync().is_err());
    assert_eq!((a.mode(), b.mode()), (Mode::Local, Mode::Local));
    let local = a.acquire().unwrap();
    assert_eq!(local.scope(), Scope::Local);
    assert_eq!(b.release(local, Outcome::Failure), Release::Stale);
    assert_eq!(
        b.status(),
        Status::Closed,
        "b's local breaker counted nothing"
    );
}

/// `call` records `Ok` as a success, `Err` as a failure, and a panic as a
/// failure (whatever the config's abandon outcome: here `Ignored`), and does
/// not run the closure when not admitted.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn call_records_errors_and_panics_as_failures() {
    let server = server();
    let cfg = tripword::Config::new()
        .failure_threshold(2)
        .open_for(60_000_000)
        .probe_timeout(60_000_000)
        .abandon_as(Outcome::Ignored)
        .check()
        .unwrap();
    let b = builder(&server, "k", cfg).build().unwrap();
    drop(b.permit().unwrap());
    assert_eq!(b.word(), 0, "an abandoned permit: ignored, as configured");
    assert_eq!(b.call(|| Ok::<_, ()>(7)).unwrap(), 7);
    let err = b.call(|| Err::<(), _>("refused")).unwrap_err();
    assert_eq!(err.to_string(), "refused");
    assert_eq!(b.status(), Status::Closed, "one failure of two");
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        b.call(|| -> Result<(), ()> { panic!("the call panicked") })
    }));
    assert!(panicked.is_err());
    assert_eq!(b.status(), Status::Open, "the panic was the second failure");
    let mut ran = false;
    let rejected = b.call(|| {
        ran = true;
        Ok::<_, ()>(())
    });
    let Err(CallError::Open(r)) = rejected else {
        panic!("not admitted: {rejected:?}")
    };
    assert_eq!(r.cause(), Cause::Open);
    assert!(!ran);
    // Named by its key, the wait as a duration (at most the open time).
    assert_eq!(r.name(), Some("k"));
    assert!(
        r.retry_after()
            .is_some_and(|w| w <= Duration::from_secs(60)),
        "{r:?}"
    );
    let text = r.to_string();
    assert!(
        text.starts_with("circuit 'k' open: call not admitted (retry after ")
            && text.ends_with("s)"),
        "{text}"
    );
}

/// What a service reads off an instance, and the closure observer.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn accessors_and_the_closure_observer() {
    let server = server();
    let cfg = config(1, 60_000_000, 60_000_000);
    struct Sink(Arc<Mutex<Vec<(Transition, Scope)>>>);
    impl tripword::Observer for Sink {
        fn on_transition(&self, _: Transition) {}
    }
    impl FleetObserver for Sink {
        fn on_scoped_transition(&self, t: Transition, scope: Scope) {
            self.0.lock().unwrap().push((t, scope));
        }
    }
    let seen: Arc<Mutex<Vec<(Transition, Scope)>>> = Arc::default();
    let b = builder(&server, "payments", cfg)
        .observer(Sink(seen.clone()))
        .build()
        .unwrap();
    assert_eq!(*b.config(), cfg);
    assert_eq!(b.key(), "payments");
    assert_eq!(b.channel(), "tripword:payments");
    let now = b.fleet_now().expect("sampled by the build's read");
    let server_time = server_now(&server);
    assert!(
        now.abs_diff(server_time) < 60_000_000,
        "{now} vs {server_time}"
    );
    let debug = format!("{b:?}");
    assert!(
        debug.starts_with("RedisBreaker {")
            && debug.contains("key: \"payments\"")
            && debug.contains("mode: Shared"),
        "{debug}"
    );

    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
    let word: u64 = stored(&server, "payments").unwrap().parse().unwrap();
    assert_eq!(b.word(), word, "the mirror is the stored word");
    assert!(matches!(
        Snapshot::decode::<W64>(word),
        Ok(Snapshot {
            state: State::Open { trips: 1, .. },
            counter: 1
        })
    ));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].0.to, seen[0].1), (Status::Open, Scope::Shared));
}
