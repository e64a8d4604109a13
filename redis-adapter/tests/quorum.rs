//! A quorum of instances trips the fleet: one instance whose own path to
//! the dependency is broken is held off by its own local breaker and does
//! not trip the shared word; failures seen by `q` distinct instances within
//! the window do; votes out of the window do not count; a success of the
//! instance's own withdraws its vote; `quorum(1)` is the fleet's single run.

mod common;

use common::*;
use std::time::Duration;
use tripword::word::{Snapshot, State};
use tripword::{Outcome, Status, Transition, W64};
use tripword_redis::{Builder, Mode, RedisBreaker, Release, Scope};
use tripword_std::{BreakerExt, CallError};

fn failing() -> Result<(), std::io::Error> {
    Err(std::io::Error::other("this instance's path is broken"))
}

fn working() -> Result<(), std::io::Error> {
    Ok(())
}

/// The shared word as stored under `key` (`None`: missing).
fn shared(server: &tripword_redis::server::RedisServer, key: &str) -> Option<State> {
    stored(server, key).map(|w| {
        Snapshot::decode::<W64>(w.parse().expect("a decimal word"))
            .expect("a valid word")
            .state
    })
}

/// The instance ids that hold a vote under `key`.
fn voters(server: &tripword_redis::server::RedisServer, key: &str) -> Vec<String> {
    redis::cmd("ZRANGE")
        .arg(format!("{key}:votes"))
        .arg(0)
        .arg(-1)
        .query(&mut raw(server))
        .unwrap()
}

fn quorum(
    server: &tripword_redis::server::RedisServer,
    key: &str,
    threshold: u32,
    open_for_us: u64,
    q: u32,
) -> Builder {
    builder(server, key, config(threshold, open_for_us, 5_000_000)).quorum(q)
}

/// Runs `f` through `b`'s `call` `n` times; the outcomes: `Ok(true)` the call
/// ran and succeeded, `Ok(false)` it ran and failed, `Err(())` rejected.
fn calls(
    b: &RedisBreaker,
    n: usize,
    f: fn() -> Result<(), std::io::Error>,
) -> Vec<Result<bool, ()>> {
    (0..n)
        .map(|_| match b.call(f) {
            Ok(()) => Ok(true),
            Err(CallError::Inner(_)) => Ok(false),
            Err(CallError::Open(_)) => Err(()),
        })
        .collect()
}

fn shared_transitions(log: &Recorder) -> Vec<Transition> {
    log.0.shared()
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn one_bad_instance_is_held_off_and_the_fleet_stays_closed() {
    let server = server();
    let key = "quorum:one-bad";
    let log = Recorder::default();
    let bad = quorum(&server, key, 3, 60_000_000, 2)
        .observer(log.clone())
        .build()
        .unwrap();
    let good: Vec<RedisBreaker> = (0..2)
        .map(|_| quorum(&server, key, 3, 60_000_000, 2).build().unwrap())
        .collect();
    let before: Vec<u64> = good.iter().map(|g| g.stats().call_round_trips).collect();
    let mut seen = Vec::new();
    for _ in 0..20 {
        seen.extend(calls(&bad, 1, failing));
        for g in &good {
            assert_eq!(calls(g, 1, working), [Ok(true)], "the others keep calling");
        }
    }
    // Its own run trips its own breaker: three calls ran, the rest were
    // held off by the instance itself.
    assert_eq!(&seen[..3], [Ok(false); 3]);
    assert!(seen[3..].iter().all(|r| r.is_err()), "{seen:?}");
    assert_eq!(bad.status(), Status::Open, "its own view");
    assert_eq!(bad.mode(), Mode::Shared);
    // The fleet did not trip: the word was never written.
    assert_eq!(stored(&server, key), None, "no change to the shared word");
    assert_eq!(
        voters(&server, key).len(),
        1,
        "one vote, the bad instance's"
    );
    let stats = bad.stats();
    assert_eq!(
        (stats.remote_calls, stats.call_round_trips),
        (1, 1),
        "its failures were counted locally; its vote is one round trip"
    );
    assert!(shared_transitions(&log).is_empty());
    let local: Vec<_> = log
        .0
        .transitions
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, s)| *s == Scope::Local)
        .map(|(t, _)| (t.from, t.to))
        .collect();
    assert_eq!(local, [(Status::Closed, Status::Open)]);
    for (g, before) in good.iter().zip(before) {
        assert_eq!(g.status(), Status::Closed);
        assert_eq!(
            g.stats().call_round_trips,
            before,
            "the others' calls stayed local"
        );
        let t = g.acquire().expect("still admitting");
        assert_eq!(t.scope(), Scope::Shared);
        assert_eq!(g.release(t, Outcome::Success), Release::Recorded);
    }
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_quorum_of_instances_trips_the_fleet_and_one_probe_closes_it() {
    let server = server();
    let key = "quorum:two-bad";
    let logs: Vec<Recorder> = (0..3).map(|_| Recorder::default()).collect();
    let b: Vec<RedisBreaker> = logs
        .iter()
        .map(|log| {
            quorum(&server, key, 3, 300_000, 2)
                .observer(log.clone())
                .build()
                .unwrap()
        })
        .collect();
    let runs_of_calls = |i: usize| {
        assert_eq!(calls(&b[i], 3, failing), [Ok(false); 3]);
        assert!(b[i].acquire().is_err(), "instance {i} holds itself off");
    };
    runs_of_calls(0);
    assert_eq!(stored(&server, key), None, "one instance's failures");
    assert!(
        b[2].acquire()
            .is_ok_and(|t| b[2].release(t, Outcome::Success) == Release::Recorded)
    );
    runs_of_calls(1);
    // The second vote tripped the fleet, in the second voter's script.
    assert!(
        matches!(shared(&server, key), Some(State::Open { .. })),
        "{:?}",
        stored(&server, key)
    );
    assert!(
        voters(&server, key).is_empty(),
        "the trip consumes the votes"
    );
    let trips = shared_transitions(&logs[1]);
    assert_eq!(trips.len(), 1, "{trips:?}");
    assert_eq!((trips[0].from, trips[0].to), (Status::Closed, Status::Open));
    assert!(shared_transitions(&logs[0]).is_empty());
    assert!(shared_transitions(&logs[2]).is_empty());
    let (first, second) = (b[0].stats(), b[1].stats());
    assert_eq!(
        (first.remote_calls, first.call_round_trips),
        (1, 1),
        "a vote"
    );
    assert_eq!(
        (second.remote_calls, second.call_round_trips),
        (1, 2),
        "a vote that reaches the quorum, then the trip"
    );
    // Every instance follows the fleet: each mirror learns of the trip.
    assert!(eventually(LONG, || b.iter().all(|x| {
        !matches!(
            Snapshot::decode::<W64>(x.word()),
            Ok(Snapshot {
                state: State::Closed { .. },
                ..
            })
        )
    })));
    assert!(b[2].acquire().is_err());
    // One probe for the whole fleet, whoever asks: the first admission
    // after the open time is the probe; no other instance is admitted
    // meanwhile.
    let mut probe = None;
    assert!(eventually(LONG, || {
        for (i, x) in b.iter().enumerate() {
            if let Ok(t) = x.acquire() {
                probe = Some((i, t));
                return true;
            }
        }
        false
    }));
    let (i, ticket) = probe.unwrap();
    assert!(ticket.is_probe(), "the fleet's probe");
    assert_eq!(ticket.scope(), Scope::Shared);
    for (j, x) in b.iter().enumerate() {
        if j != i {
            assert!(x.acquire().is_err(), "instance {j}: one probe at a time");
        }
    }
    assert_eq!(b[i].release(ticket, Outcome::Success), Release::Recorded);
    assert!(matches!(
        shared(&server, key),
        Some(State::Closed { failures: 0 })
    ));
    let closes: usize = logs
        .iter()
        .map(|l| {
            shared_transitions(l)
                .iter()
                .filter(|t| t.to == Status::Closed)
                .count()
        })
        .sum();
    assert_eq!(closes, 1, "the close is reported once, fleet-wide");
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn votes_out_of_the_window_do_not_count() {
    let server = server();
    let key = "quorum:window";
    let window = Duration::from_secs(60);
    let b: Vec<RedisBreaker> = (0..3)
        .map(|_| {
            quorum(&server, key, 2, 60_000_000, 2)
                .quorum_window(window)
                .build()
                .unwrap()
        })
        .collect();
    assert_eq!(calls(&b[0], 2, failing), [Ok(false); 2]);
    let first = voters(&server, key);
    assert_eq!(first.len(), 1);
    // Its vote is moved an hour back: out of the window.
    let hour_ago = server_now(&server) - 3_600_000_000;
    let _: i64 = redis::cmd("ZADD")
        .arg(format!("{key}:votes"))
        .arg("XX")
        .arg(hour_ago)
        .arg(&first[0])
        .query(&mut raw(&server))
        .unwrap();
    assert_eq!(calls(&b[1], 2, failing), [Ok(false); 2]);
    assert_eq!(stored(&server, key), None, "the old vote did not count");
    let second = voters(&server, key);
    assert_eq!(second.len(), 1, "the old vote was dropped");
    assert_ne!(second, first);
    // A vote within the window counts: the third instance's trips.
    assert_eq!(calls(&b[2], 2, failing), [Ok(false); 2]);
    assert!(
        matches!(shared(&server, key), Some(State::Open { .. })),
        "{:?}",
        stored(&server, key)
    );
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_success_of_its_own_withdraws_the_instances_vote() {
    let server = server();
    let key = "quorum:withdraw";
    let clock = ManualLocal::new(1_000_000);
    let a = quorum(&server, key, 2, 1_000_000, 2)
        .local_clock(clock.clone())
        .build()
        .unwrap();
    let b = quorum(&server, key, 2, 1_000_000, 2).build().unwrap();
    assert_eq!(calls(&a, 2, failing), [Ok(false); 2]);
    assert_eq!(voters(&server, key).len(), 1);
    assert!(a.acquire().is_err(), "held off by its own breaker");
    // Its own open time passes (its clock): its own probe.
    clock.advance(2_000_000);
    let before = a.stats().call_round_trips;
    let t = a.acquire().expect("its own probe");
    assert_eq!((t.scope(), t.is_probe()), (Scope::Local, true));
    assert_eq!(a.release(t, Outcome::Success), Release::Recorded);
    assert!(voters(&server, key).is_empty(), "the vote was withdrawn");
    assert_eq!(a.stats().call_round_trips - before, 1, "one round trip");
    assert_eq!(a.status(), Status::Closed);
    let t = a.acquire().expect("back on the fleet's word");
    assert_eq!(t.scope(), Scope::Shared);
    assert_eq!(a.release(t, Outcome::Success), Release::Recorded);
    // Another instance's run alone does not trip the fleet now.
    assert_eq!(calls(&b, 2, failing), [Ok(false); 2]);
    assert_eq!(stored(&server, key), None);
    assert_eq!(voters(&server, key).len(), 1);
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_success_ends_the_instances_own_run() {
    let server = server();
    let key = "quorum:run";
    let a = quorum(&server, key, 3, 60_000_000, 2).build().unwrap();
    for _ in 0..5 {
        assert_eq!(calls(&a, 2, failing), [Ok(false); 2]);
        assert_eq!(calls(&a, 1, working), [Ok(true)]);
    }
    assert_eq!(a.status(), Status::Closed);
    assert!(
        voters(&server, key).is_empty(),
        "no run reached the threshold"
    );
    assert_eq!(
        a.stats().call_round_trips,
        0,
        "failures below the threshold are counted locally"
    );
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn quorum_one_is_the_fleets_single_run() {
    let server = server();
    let key = "quorum:one";
    let cfg = config(3, 60_000_000, 5_000_000);
    let plain = builder(&server, key, cfg).build().unwrap();
    let one = builder(&server, key, cfg).quorum(1).build().unwrap();
    assert_eq!(plain.config_fingerprint(), one.config_fingerprint());
    assert!(!one.config_fingerprint().contains("quorum"));
    // Every instance's failure counts in the shared word: one run.
    assert_eq!(calls(&plain, 1, failing), [Ok(false)]);
    assert_eq!(calls(&one, 1, failing), [Ok(false)]);
    assert_eq!(shared(&server, key), Some(State::Closed { failures: 2 }));
    assert_eq!(calls(&plain, 1, failing), [Ok(false)]);
    assert!(matches!(shared(&server, key), Some(State::Open { .. })));
    // A quorum is part of the config: an instance with one is kept off a
    // fleet without.
    let two = builder(&server, key, cfg).quorum(2).build().unwrap();
    assert!(
        two.config_fingerprint()
            .contains(" quorum=2 window=120000000")
    );
    assert!(eventually(LONG, || two.config_mismatch().is_some()));
    assert_eq!(two.mode(), Mode::Local);
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_fleet_of_quorum_breakers_shares_one_word_per_key() {
    let server = server();
    let fleets: Vec<tripword_redis::Fleet> = (0..3)
        .map(|_| {
            tripword_redis::Fleet::builder(server.url())
                .config(config(2, 60_000_000, 5_000_000))
                .op_timeout(Duration::from_millis(500))
                .quorum(2)
                .build()
                .unwrap()
        })
        .collect();
    let key = "quorum:fleet";
    let b: Vec<RedisBreaker> = fleets.iter().map(|f| f.breaker(key)).collect();
    assert_eq!(calls(&b[0], 2, failing), [Ok(false); 2]);
    assert_eq!(stored(&server, key), None);
    assert!(
        b[1].acquire()
            .is_ok_and(|t| b[1].release(t, Outcome::Success) == Release::Recorded)
    );
    assert_eq!(calls(&b[1], 2, failing), [Ok(false); 2]);
    assert!(matches!(shared(&server, key), Some(State::Open { .. })));
    assert!(eventually(LONG, || b[2].acquire().is_err()));
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn an_operators_close_drops_the_votes() {
    let server = server();
    let key = "quorum:force";
    let a = quorum(&server, key, 2, 60_000_000, 2).build().unwrap();
    assert_eq!(calls(&a, 2, failing), [Ok(false); 2]);
    assert_eq!(voters(&server, key).len(), 1);
    let before = a.stats().call_round_trips;
    a.force_close().unwrap();
    assert!(voters(&server, key).is_empty());
    assert_eq!(
        a.stats().call_round_trips - before,
        3,
        "a load, the compare-and-set, the votes dropped"
    );
    assert!(matches!(
        shared(&server, key),
        Some(State::Closed { failures: 0 })
    ));
}

#[tokio::test(flavor = "current_thread")]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
async fn the_async_path_counts_its_own_failures_and_votes_off_the_polling_thread() {
    use tripword_std::BreakerExt;
    let server = server();
    let key = "quorum:async";
    let bad = quorum(&server, key, 2, 60_000_000, 2).build().unwrap();
    let other = quorum(&server, key, 2, 60_000_000, 2).build().unwrap();
    for _ in 0..2 {
        let r = bad.call_async(async { Err::<(), _>("broken") }).await;
        assert!(r.is_err());
    }
    // The vote is a blocking task of the runtime's pool.
    assert!(eventually(LONG, || voters(&server, key).len() == 1));
    assert!(bad.acquire().is_err(), "held off by its own breaker");
    assert_eq!(other.call_async(async { Ok::<_, ()>(7) }).await, Ok(7));
    assert_eq!(stored(&server, key), None, "the fleet did not trip");
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn concurrent_runs_on_many_instances_trip_the_fleet_once() {
    let server = server();
    let key = "quorum:concurrent";
    let logs: Vec<Recorder> = (0..4).map(|_| Recorder::default()).collect();
    let b: Vec<RedisBreaker> = logs
        .iter()
        .map(|log| {
            quorum(&server, key, 3, 60_000_000, 2)
                .observer(log.clone())
                .build()
                .unwrap()
        })
        .collect();
    std::thread::scope(|s| {
        for x in &b {
            for _ in 0..3 {
                s.spawn(move || {
                    for _ in 0..20 {
                        let _ = x.call(failing);
                    }
                });
            }
        }
    });
    assert!(
        matches!(shared(&server, key), Some(State::Open { .. })),
        "{:?}",
        stored(&server, key)
    );
    let trips: usize = logs
        .iter()
        .map(|l| {
            shared_transitions(l)
                .iter()
                .filter(|t| t.to == Status::Open)
                .count()
        })
        .sum();
    assert_eq!(trips, 1, "one trip, reported once fleet-wide");
    for x in &b {
        assert!(eventually(LONG, || x.acquire().is_err()));
    }
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_stable_id_makes_a_restarted_instances_vote_replace_its_earlier_one() {
    let server = server();
    let key = "quorum:restart";
    let first = quorum(&server, key, 2, 60_000_000, 2)
        .quorum_id("host-a")
        .build()
        .unwrap();
    assert_eq!(calls(&first, 2, failing), [Ok(false); 2]);
    drop(first);
    // The same host, restarted: its new vote replaces the earlier one.
    let again = quorum(&server, key, 2, 60_000_000, 2)
        .quorum_id("host-a")
        .build()
        .unwrap();
    assert_eq!(calls(&again, 2, failing), [Ok(false); 2]);
    assert_eq!(voters(&server, key), ["host-a"]);
    assert_eq!(stored(&server, key), None, "one host, one vote");
    let other = quorum(&server, key, 2, 60_000_000, 2)
        .quorum_id("host-b")
        .build()
        .unwrap();
    assert_eq!(calls(&other, 2, failing), [Ok(false); 2]);
    assert!(matches!(shared(&server, key), Some(State::Open { .. })));
}

/// An instance gone local does not vote: a trip of its local breaker while
/// it is local stays its own, even with Redis answering again before the
/// instance's next refresh.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn an_instance_gone_local_does_not_vote() {
    let mut server = server();
    let key = "quorum:gone-local";
    let b = quorum(&server, key, 1, 60_000_000, 2)
        .pubsub(false)
        .refresh(Duration::from_secs(3_600))
        .retry(Duration::from_secs(3_600))
        .build()
        .unwrap();
    server.stop();
    assert!(b.sync().is_err(), "Redis is gone");
    assert_eq!(b.mode(), Mode::Local);
    let t = b.acquire().expect("the local breaker is closed");
    assert_eq!(t.scope(), Scope::Local);
    server.restart().unwrap();
    assert!(server.ping(), "Redis answers again");
    b.release(t, Outcome::Failure);
    assert_eq!(b.status(), Status::Open, "held off by itself");
    assert!(voters(&server, key).is_empty(), "no vote while local");
    assert_eq!(b.mode(), Mode::Local);
}

/// The voter whose vote trips the fleet takes the trip into its mirror
/// from its own script's reply, not from the watcher: with no pub/sub and
/// an hour between refreshes, its mirror holds the `Open` word as soon as
/// its call returns.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn the_vote_that_trips_the_fleet_is_in_the_voters_mirror_at_once() {
    let server = server();
    let key = "quorum:voters-mirror";
    let b: Vec<RedisBreaker> = (0..2)
        .map(|_| {
            quorum(&server, key, 3, 60_000_000, 2)
                .pubsub(false)
                .refresh(Duration::from_secs(3_600))
                .build()
                .unwrap()
        })
        .collect();
    assert_eq!(calls(&b[0], 3, failing), [Ok(false); 3]);
    let closed = |b: &RedisBreaker| {
        matches!(
            Snapshot::decode::<W64>(b.word()),
            Ok(Snapshot {
                state: State::Closed { .. },
                ..
            })
        )
    };
    assert!(closed(&b[0]) && closed(&b[1]), "one vote trips nothing");
    assert_eq!(calls(&b[1], 3, failing), [Ok(false); 3]);
    assert!(matches!(shared(&server, key), Some(State::Open { .. })));
    assert!(
        matches!(
            Snapshot::decode::<W64>(b[1].word()),
            Ok(Snapshot {
                state: State::Open { .. },
                ..
            })
        ),
        "{:#x}",
        b[1].word()
    );
    assert!(closed(&b[0]), "the other learns it at its next read");
}
