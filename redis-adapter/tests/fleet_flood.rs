//! `Fleet` under a flood of made-up keys, and its group control by key
//! prefix: a key counting failures, a tripped key and a forced key survive
//! thousands of new keys (the fifth failure still trips), a fleet full of
//! breakers holding state gives new keys breakers it does not keep
//! (counted), memory stays bounded; `force_open_prefix` and
//! `force_close_prefix` reach every key this instance holds under the
//! prefix, and the keys it makes afterwards, never leaving out one made
//! meanwhile; `force_open_for` and `force_open_prefix_for` open for a
//! while; a breaker's health is the shared word as mirrored. Each test
//! starts its own redis-server.

mod common;

use common::*;
use std::time::Duration;
use tripword::{Cause, CircuitBreaker, Outcome, Status};
use tripword_redis::{Error, Fleet, Mode, RedisBreaker};
use tripword_std::registry::Force;

const CAPACITY: usize = 16;

/// 5 failures in a row trip, open for a minute; at most 16 keys.
fn fleet(server: &tripword_redis::server::RedisServer) -> Fleet {
    Fleet::builder(server.url())
        .op_timeout(Duration::from_secs(5))
        .config(config(5, 60_000_000, 1_000_000))
        .capacity(CAPACITY)
        .build()
        .unwrap()
}

fn fail(b: &RedisBreaker, n: u32) {
    for _ in 0..n {
        let t = b.acquire().unwrap();
        b.release(t, Outcome::Failure);
    }
}

/// The keys that know something: 4 failures of 5, tripped, forced open.
fn knowing(f: &Fleet) -> Vec<RedisBreaker> {
    fail(&f.breaker("four-of-five"), 4);
    fail(&f.breaker("tripped"), 5);
    f.breaker("forced").force_open().unwrap();
    assert_eq!(f.breaker("tripped").status(), Status::Open);
    ["four-of-five", "tripped", "forced"]
        .map(|k| f.get(k).unwrap())
        .to_vec()
}

fn survived(f: &Fleet, before: &[RedisBreaker]) {
    for b in before {
        let now = f.get(b.key()).expect("kept");
        assert!(RedisBreaker::ptr_eq(b, &now), "{} was made again", b.key());
    }
    assert_eq!(f.breaker("tripped").status(), Status::Open);
    assert_eq!(f.breaker("forced").status(), Status::Open);
    let four = f.breaker("four-of-five");
    assert_eq!(four.status(), Status::Closed);
    fail(&four, 1);
    assert_eq!(four.status(), Status::Open, "the fifth failure trips");
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn made_up_keys_do_not_evict_what_a_breaker_knows() {
    let server = server();
    let f = fleet(&server);
    assert_eq!(f.capacity(), CAPACITY);
    let before = knowing(&f);
    std::thread::scope(|s| {
        for t in 0..4 {
            let f = &f;
            s.spawn(move || {
                for i in 0..500 {
                    assert_eq!(
                        f.breaker(&format!("made-up-{t}-{i}")).status(),
                        Status::Closed
                    );
                    assert!(f.len() <= CAPACITY);
                }
            });
        }
    });
    survived(&f, &before);
    assert_eq!(f.overflowed(), 0, "blank made-up keys made room");
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_fleet_full_of_knowledge_keeps_it_and_counts_the_overflow() {
    let server = server();
    let f = fleet(&server);
    let before = knowing(&f);
    for k in 0..(CAPACITY - before.len()) {
        fail(&f.breaker(&format!("down-{k}")), 5);
    }
    assert_eq!(f.len(), CAPACITY);
    for i in 0..500 {
        let key = format!("made-up-{i}");
        let b = f.breaker(&key);
        assert_eq!(b.status(), Status::Closed);
        assert!(f.get(&key).is_none(), "not kept");
        assert_eq!(f.len(), CAPACITY);
    }
    assert_eq!(f.overflowed(), 500);
    survived(&f, &before);
    // The sweep forgets an idle `Closed` breaker, failures counted or not,
    // never one that is not `Closed`.
    f.breaker("forced").force_close().unwrap();
    f.evict_idle();
    assert_eq!(f.evict_idle(), 1, "forced, closed now and idle");
    assert!(f.get("forced").is_none());
    f.breaker("kept");
    assert!(f.get("kept").is_some(), "room again");
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn force_by_prefix_reaches_the_keys_held_and_the_keys_made_after() {
    let server = server();
    let f = fleet(&server);
    for k in ["eu/a", "eu/b", "us/a"] {
        f.breaker(k);
    }
    let done = f.force_open_prefix("eu/");
    let keys: Vec<&str> = done.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["eu/a", "eu/b"]);
    assert!(done.iter().all(|(_, r)| r.is_ok()));
    assert_eq!(f.breaker("eu/a").status(), Status::Open);
    assert_eq!(f.breaker("us/a").status(), Status::Closed);
    // Made after: held too; other prefixes are not.
    assert_eq!(f.breaker("eu/c").status(), Status::Open);
    assert!(f.breaker("eu/c").acquire().is_err());
    assert_eq!(f.breaker("us/b").status(), Status::Closed);
    // Held open, they stay through the sweeps.
    f.evict_idle();
    f.evict_idle();
    assert!(f.get("eu/c").is_some());
    let done = f.force_close_prefix("eu/");
    assert_eq!(done.len(), 3);
    assert!(done.iter().all(|(_, r)| r.is_ok()));
    assert_eq!(f.breaker("eu/a").status(), Status::Closed);
    assert_eq!(f.breaker("eu/d").status(), Status::Closed);
    // A close of a longer prefix leaves a shorter hold in place.
    f.force_open_prefix("");
    f.force_close_prefix("eu/");
    assert_eq!(f.breaker("eu/e").status(), Status::Open);
    f.force_close_prefix("");
    assert_eq!(f.breaker("eu/f").status(), Status::Closed);
}

/// A prefix force concurrent with lookups of new keys under the prefix:
/// every key held after it is forced, and every key made after it
/// returned too.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_key_made_during_the_prefix_force_is_not_left_out() {
    let server = server();
    let f = Fleet::builder(server.url())
        .op_timeout(Duration::from_secs(5))
        .config(config(5, 60_000_000, 1_000_000))
        .capacity(100_000)
        .build()
        .unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for t in 0..3 {
            let (f, done) = (&f, &done);
            s.spawn(move || {
                let mut i = 0;
                while !done.load(std::sync::atomic::Ordering::Acquire) || i < 20 {
                    f.breaker(&format!("eu/{t}-{i}"));
                    i += 1;
                }
                assert_eq!(f.breaker(&format!("eu/{t}-after")).status(), Status::Open);
            });
        }
        std::thread::sleep(Duration::from_millis(5));
        f.force_open_prefix("eu/");
        done.store(true, std::sync::atomic::Ordering::Release);
    });
    for key in f.keys() {
        assert_eq!(
            f.get(&key).unwrap().status(),
            Status::Open,
            "{key} left out"
        );
    }
}

/// `Force` on a fleet breaker: its force ops, the timed one included,
/// each the breaker's own.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn force_on_a_fleet_breaker() {
    let server = server();
    let f = fleet(&server);
    let b = f.breaker("k");
    Force::force_open(&b).unwrap();
    assert!(b.is_open());
    assert!(b.health().forced);
    Force::force_open_for(&b, Duration::from_secs(600)).unwrap();
    let h = b.health();
    assert_eq!((h.status, h.forced), (Status::Open, false), "{h:?}");
    assert_eq!(b.acquire().unwrap_err().cause(), Cause::Open);
    Force::force_close(&b).unwrap();
    assert!(CircuitBreaker::health(&b).is_blank());
}

/// A fleet breaker's health is the shared word as its mirror saw it:
/// failures counted (by any instance), trips, the wait, an operator's
/// hold; in `Mode::Local`, its local breaker's.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn health_reads_the_shared_word_as_mirrored() {
    let mut server = server();
    let f = fleet(&server);
    let b = f.breaker("k");
    assert!(b.health().is_blank());
    fail(&b, 2);
    let h = b.health();
    assert_eq!((h.status, h.failures), (Status::Closed, 2), "{h:?}");
    assert!(!h.is_blank(), "it remembers two failures");
    assert!(h.counter.is_some());
    // Another instance reads the same failures from the word.
    let other = fleet(&server);
    let seen = other.breaker("k");
    seen.sync().unwrap();
    assert_eq!(seen.health().failures, 2);
    fail(&b, 3);
    let h = b.health();
    assert_eq!(
        (h.status, h.trips, h.forced),
        (Status::Open, 1, false),
        "{h:?}"
    );
    // The open time is a minute: the wait is within it.
    if let Some(wait) = h.retry_after {
        assert!(wait > 0 && wait <= 60_000_001, "{wait}");
    }
    b.force_open().unwrap();
    let h = b.health();
    assert_eq!(
        (h.status, h.forced, h.retry_after),
        (Status::Open, true, None)
    );
    b.force_close().unwrap();
    assert!(b.health().is_blank());
    // Local: the local breaker's health.
    let fresh = f.breaker("fresh");
    server.stop();
    assert!(matches!(fresh.sync(), Err(Error::Redis(_))));
    assert_eq!(fresh.mode(), Mode::Local);
    assert!(fresh.health().is_blank());
    fail(&fresh, 1);
    let h = fresh.health();
    assert_eq!((h.status, h.failures), (Status::Closed, 1), "{h:?}");
}

/// `force_open_for`: the whole fleet opens for a while (another instance
/// sees it), then half-opens and elects one probe.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn force_open_for_opens_the_fleet_for_a_while() {
    let server = server();
    let f = fleet(&server);
    let b = f.breaker("k");
    b.force_open_for(Duration::from_secs(600)).unwrap();
    let why = b.acquire().unwrap_err();
    assert_eq!(why.cause(), Cause::Open, "an open with an end, not a hold");
    assert!(
        why.retry_after().is_some_and(|w| w <= 600_000_001),
        "{why:?}"
    );
    let other = fleet(&server);
    let seen = other.breaker("k");
    assert_eq!(seen.acquire().unwrap_err().cause(), Cause::Open);
    // A short one ends: the first caller after it is the fleet's probe.
    b.force_open_for(Duration::from_millis(100)).unwrap();
    let mut probe = None;
    assert!(eventually(LONG, || {
        probe = b.acquire().ok();
        probe.is_some()
    }));
    let probe = probe.unwrap();
    assert!(probe.is_probe());
    // The other instance, once its mirror shows the probe: one probe for
    // the fleet.
    assert!(eventually(LONG, || {
        seen.acquire().map_err(|why| why.cause()) == Err(Cause::Probing)
    }));
    b.release(probe, Outcome::Success);
    assert_eq!(b.status(), Status::Closed);
}

/// As `force_open`: during an outage `force_open_for` is an error, and
/// the instance, local, opens for the time asked; an open with an end
/// outlives a fallback for what is left of it, past the config's open
/// time. The instance's clock is moved by hand (frozen, its estimate of
/// the server's time stays valid however long the machine takes).
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn force_open_for_during_an_outage_and_across_a_fallback() {
    let mut server = server();
    let clock = ManualLocal::new(1_000_000);
    let f = Fleet::builder(server.url())
        .op_timeout(Duration::from_millis(200))
        .config(config(5, 50_000, 1_000_000))
        .local_clock(clock.clone())
        .build()
        .unwrap();
    let held = f.breaker("held");
    held.force_open_for(Duration::from_secs(3_600)).unwrap();
    let other = f.breaker("other");
    server.stop();
    assert!(matches!(held.sync(), Err(Error::Redis(_))));
    assert_eq!(held.mode(), Mode::Local);
    // A second on the instance's clock: twenty open times of its config.
    clock.advance(1_000_000);
    let why = held.acquire().expect_err("the hour is not over");
    assert_eq!(why.cause(), Cause::Open);
    assert!(why.retry_after().is_some_and(|w| w > 1_000_000), "{why:?}");
    // A timed force issued during the outage: an error, obeyed locally.
    assert!(matches!(
        other.force_open_for(Duration::from_secs(3_600)),
        Err(Error::Redis(_))
    ));
    assert_eq!(other.mode(), Mode::Local);
    clock.advance(1_000_000);
    let why = other.acquire().expect_err("opened here for an hour");
    assert_eq!(why.cause(), Cause::Open);
    assert!(!other.health().forced);
    assert!(matches!(other.force_close(), Err(Error::Redis(_))));
    assert!(other.acquire().is_ok());
}

/// `force_open_prefix_for`: the keys held under the prefix open for a
/// while, and the keys made under it during the hold too; a hold with no
/// end covering the same key wins; a hold that is over applies to no key.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_timed_prefix_force_reaches_the_keys_made_during_it() {
    let server = server();
    let f = fleet(&server);
    for k in ["eu/a", "eu/b", "us/a"] {
        f.breaker(k);
    }
    let done = f.force_open_prefix_for("eu/", Duration::from_secs(600));
    let keys: Vec<&str> = done.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["eu/a", "eu/b"]);
    assert!(done.iter().all(|(_, r)| r.is_ok()));
    for k in ["eu/a", "eu/c"] {
        let h = f.breaker(k).health();
        assert_eq!((h.status, h.forced), (Status::Open, false), "{k}: {h:?}");
        let why = f.breaker(k).acquire().unwrap_err();
        assert!(
            why.retry_after().is_some_and(|w| w <= 600_000_001),
            "{why:?}"
        );
    }
    assert_eq!(f.breaker("us/b").status(), Status::Closed);
    // Ended early by hand: new keys are made closed.
    assert_eq!(f.force_close_prefix("eu/").len(), 3);
    assert_eq!(f.breaker("eu/d").status(), Status::Closed);
    // Over: nothing for the keys made after.
    f.force_open_prefix_for("x/", Duration::from_millis(1));
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(f.breaker("x/a").status(), Status::Closed);
    // A hold with no end over a timed one on the same key.
    f.force_open_prefix("");
    f.force_open_prefix_for("eu/", Duration::from_millis(1));
    std::thread::sleep(Duration::from_millis(5));
    assert!(f.breaker("eu/e").health().forced);
    f.force_close_prefix("");
    assert_eq!(f.breaker("eu/f").status(), Status::Closed);
}
