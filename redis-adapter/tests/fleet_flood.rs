//! `Fleet` under a flood of made-up keys, and its group control by key
//! prefix: a key counting failures, a tripped key and a forced key survive
//! thousands of new keys (the fifth failure still trips), a fleet full of
//! breakers holding state gives new keys breakers it does not keep
//! (counted), memory stays bounded; `force_open_prefix` and
//! `force_close_prefix` reach every key this instance holds under the
//! prefix, and the keys it makes afterwards, never leaving out one made
//! meanwhile. Each test starts its own redis-server.

mod common;

use common::*;
use std::time::Duration;
use tripword::{CircuitBreaker, Outcome, Status};
use tripword_redis::{Error, Fleet, RedisBreaker};
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

/// `Force` on a fleet breaker: its force ops; no open with an end.
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
    assert!(matches!(
        Force::force_open_for(&b, Duration::from_secs(1)),
        Err(Error::Unsupported(_))
    ));
    Force::force_close(&b).unwrap();
    assert!(CircuitBreaker::health(&b).is_blank());
}
