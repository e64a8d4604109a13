//! One time base for the fleet: the Redis server's clock. Instances whose
//! own clocks are skewed by ±1 s, or step by a minute either way, make the
//! same decisions: every stored decision rests on the server's `TIME`, and
//! an instance's clock only estimates it between round trips (to reject
//! locally; any admission outside `Closed` is decided in Redis).

mod common;

use common::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use tripword::word::{Snapshot, State};
use tripword::{Cause, Outcome, W64};
use tripword_redis::{LocalClock, Monotonic, RedisBreaker};

/// The instance's clock: the monotonic clock shifted by an offset the test
/// moves (a skew, or a step).
#[derive(Clone, Default)]
struct Shifted(Arc<AtomicI64>);

impl LocalClock for Shifted {
    fn micros(&self) -> u64 {
        (1u64 << 40)
            .wrapping_add(Monotonic.micros())
            .wrapping_add_signed(self.0.load(Ordering::SeqCst))
    }
}

const SECOND: i64 = 1_000_000;

fn server_now(server: &tripword_redis::server::RedisServer) -> u64 {
    let (s, us): (u64, u64) = redis::cmd("TIME").query(&mut raw(server)).unwrap();
    s * 1_000_000 + us
}

fn stored_state(server: &tripword_redis::server::RedisServer) -> Snapshot {
    let word: u64 = stored(server, "k").unwrap().parse().unwrap();
    Snapshot::decode::<W64>(word).unwrap()
}

/// Elapsed microseconds between two stamps of the 34-bit time field (s = 0).
fn field_elapsed(from: u64, to: u64) -> u64 {
    to.wrapping_sub(from) & ((1 << 34) - 1)
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn skewed_and_stepping_clocks_change_no_decision() {
    let server = server();
    let open_for = 30 * SECOND as u64;
    let cfg = config(1, open_for, 60 * SECOND as u64);
    let skews = [0, SECOND, -SECOND, 0];
    let clocks: Vec<Shifted> = skews
        .iter()
        .map(|s| {
            let c = Shifted::default();
            c.0.store(*s, Ordering::SeqCst);
            c
        })
        .collect();
    let fleet: Vec<RedisBreaker> = clocks
        .iter()
        .map(|c| {
            // Samples of the server's time come only from the instance's
            // own round trips: no watcher read within the test, no pub/sub.
            builder(&server, "k", cfg)
                .local_clock(c.clone())
                .refresh(std::time::Duration::from_secs(3600))
                .pubsub(false)
                .build()
                .unwrap()
        })
        .collect();
    for b in &fleet {
        assert!(
            eventually(LONG, || b.stats().refreshes >= 2),
            "the watcher's first read"
        );
    }
    let t = fleet[0].acquire().unwrap();
    fleet[0].release(t, Outcome::Failure);
    let State::Open { since, .. } = stored_state(&server).state else {
        panic!("tripped")
    };
    for b in &fleet {
        b.sync().unwrap();
    }
    let stepper = &fleet[3];
    for (i, step) in [0, 60 * SECOND, -60 * SECOND, -60 * SECOND, 120 * SECOND]
        .into_iter()
        .enumerate()
    {
        clocks[3].0.fetch_add(step, Ordering::SeqCst);
        let remote_before = stepper.stats().remote_calls;
        for (n, b) in fleet.iter().enumerate() {
            let result = b.acquire();
            // Only while the server's clock is inside the open time is a
            // rejection owed (a machine stalled for 30 s would see it end).
            if field_elapsed(since, server_now(&server)) < open_for {
                let why = result.expect_err("the open time is not over on the server's clock");
                assert_eq!(why.cause(), Cause::Open, "round {i}, instance {n}");
                let wait = why.retry_after().unwrap();
                assert!(wait <= open_for, "round {i}, instance {n}: wait {wait} µs");
            }
        }
        if step != 0 {
            // A stepped clock's estimate is wrong (ahead) or void (behind):
            // the instance asked Redis rather than decide on it.
            assert!(stepper.stats().remote_calls > remote_before, "round {i}");
        }
        // Nobody was elected: the word is the same Open.
        if field_elapsed(since, server_now(&server)) < open_for {
            assert!(
                matches!(stored_state(&server).state, State::Open { since: s, .. } if s == since)
            );
        }
    }
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn the_open_time_ends_on_the_servers_clock() {
    let server = server();
    let open_for = 300_000; // 300 ms
    let cfg = config(1, open_for, 60 * SECOND as u64);
    let clocks: Vec<Shifted> = [0, SECOND, -SECOND, 3 * SECOND]
        .iter()
        .map(|s| {
            let c = Shifted::default();
            c.0.store(*s, Ordering::SeqCst);
            c
        })
        .collect();
    let fleet: Vec<RedisBreaker> = clocks
        .iter()
        .map(|c| {
            builder(&server, "k", cfg)
                .local_clock(c.clone())
                .build()
                .unwrap()
        })
        .collect();
    let t = fleet[1].acquire().unwrap();
    fleet[1].release(t, Outcome::Failure);
    let State::Open { since, .. } = stored_state(&server).state else {
        panic!("tripped")
    };
    // Every mirror shows the trip (a mirror a pub/sub message behind would
    // still admit closed calls: the staleness `docs/distributed-proofs.md` bounds).
    for b in &fleet {
        b.sync().unwrap();
    }
    // The instance 3 s ahead steps back by 5 s midway.
    let mut probes = Vec::new();
    let mut rounds = 0u32;
    assert!(eventually(LONG, || {
        rounds += 1;
        if rounds == 50 {
            clocks[3].0.fetch_add(-5 * SECOND, Ordering::SeqCst);
        }
        for (n, b) in fleet.iter().enumerate() {
            if let Ok(t) = b.acquire() {
                assert!(
                    t.is_probe(),
                    "instance {n}: the only admission is the probe"
                );
                probes.push((n, t));
            }
        }
        !probes.is_empty()
    }));
    assert_eq!(probes.len(), 1, "one probe for the fleet");
    let State::Probing { since: probed, .. } = stored_state(&server).state else {
        panic!("probing")
    };
    let waited = field_elapsed(since, probed);
    assert!(
        waited >= open_for,
        "the probe was elected {waited} µs after the trip on the server's clock, before the open time"
    );
    let (n, t) = probes.pop().unwrap();
    fleet[n].release(t, Outcome::Success);
}
