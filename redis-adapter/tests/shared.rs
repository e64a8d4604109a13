//! One breaker shared by several instances through a real redis-server:
//! the closed path stays local, a trip reaches every instance, failures and
//! probe results go to Redis, stale results change nothing, corrupt values
//! are repaired (spec I8).

mod common;

use common::*;
use std::time::Duration;
use tripword::word::{Snapshot, State};
use tripword::{Cause, Outcome, Status, W64};
use tripword_redis::{Mode, Release};

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn closed_calls_never_touch_the_network() {
    let server = server();
    let b = builder(&server, "k", config(5, 1_000_000, 1_000_000))
        .build()
        .unwrap();
    assert_eq!(b.mode(), Mode::Shared);
    let before = b.stats();
    for _ in 0..10_000 {
        let t = b.acquire().expect("closed");
        assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
        let t = b.acquire().expect("closed");
        assert_eq!(b.release(t, Outcome::Ignored), Release::Recorded);
    }
    let after = b.stats();
    assert_eq!(
        (after.call_round_trips, after.remote_calls),
        (before.call_round_trips, before.remote_calls),
        "no round trip, no remote operation in Closed"
    );
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn one_trip_reaches_every_instance_by_pubsub() {
    let server = server();
    let cfg = config(3, 60_000_000, 1_000_000);
    let logs: Vec<Recorder> = (0..3).map(|_| Recorder::default()).collect();
    let fleet: Vec<_> = logs
        .iter()
        .map(|log| {
            builder(&server, "k", cfg)
                .refresh(Duration::from_secs(3600)) // pub/sub alone
                .observer(log.clone())
                .build()
                .unwrap()
        })
        .collect();
    // Every watcher has subscribed and read the word once (the build read
    // it before): from here on, changes reach them by pub/sub alone.
    for b in &fleet {
        assert!(eventually(LONG, || b.stats().refreshes >= 2));
    }
    // Failures from two instances add up in the shared run.
    for b in [&fleet[0], &fleet[1], &fleet[0]] {
        let t = b.acquire().expect("closed");
        assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
    }
    for b in &fleet {
        assert!(
            eventually(LONG, || b.status() == Status::Open),
            "every mirror learns of the trip"
        );
        assert!(
            eventually(LONG, || b.stats().published >= 1),
            "the change is published to every instance"
        );
        let why = b.acquire().expect_err("open fleet-wide");
        assert_eq!(why.cause(), Cause::Open);
        assert!(why.retry_after().unwrap() <= 60_000_000);
    }
    let trips: usize = logs
        .iter()
        .map(|l| l.0.shared().iter().filter(|t| t.to == Status::Open).count())
        .sum();
    assert_eq!(trips, 1, "one shared trip, reported by one instance");
    assert_eq!(
        logs[0].0.shared().len(),
        1,
        "instance 0 made the third failure"
    );
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn without_pubsub_the_refresh_period_bounds_staleness() {
    let server = server();
    let cfg = config(1, 60_000_000, 1_000_000);
    let a = builder(&server, "k", cfg).pubsub(false).build().unwrap();
    let b = builder(&server, "k", cfg)
        .pubsub(false)
        .refresh(Duration::from_millis(100))
        .build()
        .unwrap();
    let t = a.acquire().unwrap();
    a.release(t, Outcome::Failure);
    let refreshes = b.stats().refreshes;
    assert!(
        eventually(LONG, || b.status() == Status::Open),
        "the next refresh brings the trip"
    );
    // The refresh that brought it is counted after its word is offered:
    // wait for the count (the next refresh, 100 ms on, at the latest).
    assert!(eventually(LONG, || b.stats().refreshes > refreshes));
    assert_eq!(b.stats().published, 0);
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_stale_mirror_learns_the_word_from_its_failure_report() {
    let server = server();
    let cfg = config(1, 60_000_000, 1_000_000);
    let a = builder(&server, "k", cfg).build().unwrap();
    // No pub/sub, no refresh within the test: b's mirror stays as it was.
    let b = builder(&server, "k", cfg)
        .pubsub(false)
        .refresh(Duration::from_secs(3600))
        .build()
        .unwrap();
    // The build's read, then the watcher's first: none after, within the
    // test.
    assert!(eventually(LONG, || b.stats().refreshes >= 2));
    let t = a.acquire().unwrap();
    assert_eq!(a.release(t, Outcome::Failure), Release::Recorded);
    // b still admits from its mirror (the staleness the refresh bounds)...
    let late = b.acquire().expect("b's mirror is still closed");
    // ...but its failure goes to Redis, finds the word moved on: stale.
    assert_eq!(b.release(late, Outcome::Failure), Release::Stale);
    assert_eq!(b.status(), Status::Open, "and the mirror learnt the word");
    assert_eq!(b.acquire().unwrap_err().cause(), Cause::Open);
    let word: u64 = stored(&server, "k").unwrap().parse().unwrap();
    assert!(matches!(
        Snapshot::decode::<W64>(word),
        Ok(Snapshot {
            state: State::Open { trips: 1, .. },
            counter: 1
        })
    ));
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn stale_results_from_any_instance_change_nothing() {
    let server = server();
    // Open for 1 µs: the next admission probes. Probe timeout 300 ms.
    let cfg = config(1, 1, 300_000);
    let a = builder(&server, "k", cfg).build().unwrap();
    let b = builder(&server, "k", cfg).build().unwrap();
    let old = a.acquire().unwrap();
    let trip = b.acquire().unwrap();
    assert_eq!(b.release(trip, Outcome::Failure), Release::Recorded);
    let after_trip = stored(&server, "k");
    // A closed-state ticket released after the trip: stale, word unchanged.
    assert_eq!(a.release(old, Outcome::Failure), Release::Stale);
    assert_eq!(stored(&server, "k"), after_trip);

    // a becomes the probe; b is rejected while it runs.
    a.sync().unwrap();
    let probe = a.acquire().expect("the open time (1 µs) is over");
    assert!(probe.is_probe());
    b.sync().unwrap();
    assert_eq!(b.acquire().unwrap_err().cause(), Cause::Probing);
    // The probe times out (on the server's clock); b is elected next.
    let mut second = None;
    assert!(eventually(LONG, || {
        second = b.acquire().ok();
        second.is_some()
    }));
    let second = second.unwrap();
    assert!(second.is_probe());
    let during = stored(&server, "k");
    // The timed-out probe's success is stale and changes nothing.
    assert_eq!(a.release(probe, Outcome::Success), Release::Stale);
    assert_eq!(stored(&server, "k"), during);
    assert_eq!(b.release(second, Outcome::Success), Release::Recorded);
    assert!(eventually(LONG, || a.status() == Status::Closed));
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn forcing_holds_the_whole_fleet() {
    let server = server();
    let cfg = config(5, 1_000_000, 1_000_000);
    let a = builder(&server, "k", cfg).build().unwrap();
    let b = builder(&server, "k", cfg).build().unwrap();
    let held = b.acquire().unwrap();
    a.force_open().unwrap();
    assert!(eventually(LONG, || b.acquire().is_err()));
    assert_eq!(b.acquire().unwrap_err().cause(), Cause::ForcedOpen);
    assert_eq!(b.acquire().unwrap_err().retry_after(), None);
    a.force_close().unwrap();
    assert!(eventually(LONG, || b.status() == Status::Closed));
    assert_eq!(b.release(held, Outcome::Failure), Release::Stale);
}

/// Spec I8: whatever is under the key (garbage, an invalid word, a value of
/// another type) is replaced by `Closed` with the next counter, once.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn corrupt_values_are_repaired() {
    let server = server();
    let cfg = config(2, 1_000_000, 1_000_000);
    let log = Recorder::default();
    let b = builder(&server, "k", cfg)
        .observer(log.clone())
        .build()
        .unwrap();
    let mut con = raw(&server);
    // Closed, counter 5, with a stray bit above the failure count: invalid.
    let invalid = Snapshot {
        state: State::Closed { failures: 1 },
        counter: 5,
    }
    .encode::<W64>()
        | (1 << 63);
    // `HalfOpen` (tag 2) with a time bit, written with leading zeros
    // (every pattern of tags 6 and 7 is a recovery state).
    let zeros = format!("00{}", 2u64 | (1 << 63));
    let bad: [(&str, &[&str]); 4] = [
        ("SET", &["k", "garbage"]),
        ("SET", &["k", &zeros]),
        ("SET", &["k", "99999999999999999999999"]),
        ("SET", &["k", &invalid.to_string()]),
    ];
    for (i, (cmd, args)) in bad.iter().enumerate() {
        let _: () = redis::cmd(cmd).arg(*args).query(&mut con).unwrap();
        assert_eq!(b.sync().unwrap(), Status::Closed, "case {i}");
        let word: u64 = stored(&server, "k").unwrap().parse().unwrap();
        assert!(
            matches!(
                Snapshot::decode::<W64>(word),
                Ok(Snapshot {
                    state: State::Closed { failures: 0 },
                    ..
                })
            ),
            "case {i}: repaired to Closed, got {word:#x}"
        );
        assert_eq!(log.0.corrupt.lock().unwrap().len(), i + 1, "reported once");
    }
    // The counter after the stray-bit word's 5.
    assert_eq!(log.0.corrupt.lock().unwrap()[3], (invalid, 6));
    // A key of another type.
    let _: () = redis::cmd("DEL").arg("k").query(&mut con).unwrap();
    let _: () = redis::cmd("RPUSH")
        .arg("k")
        .arg("x")
        .query(&mut con)
        .unwrap();
    assert_eq!(b.sync().unwrap(), Status::Closed);
    assert!(stored(&server, "k").unwrap().parse::<u64>().is_ok());
    // The watcher repairs without any call, and its mirror takes the
    // repaired word (after the word is stored: a ticket of the mirror's
    // word before would be stale).
    let _: () = redis::cmd("SET").arg("k").arg("x").query(&mut con).unwrap();
    assert!(eventually(LONG, || stored(&server, "k")
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|w| b.word() == w)));
    // And the breaker still works: two failures trip it.
    for _ in 0..2 {
        let t = b.acquire().unwrap();
        b.release(t, Outcome::Failure);
    }
    assert_eq!(b.status(), Status::Open);
}

/// A word older than the mirror (as a failover to a replica that missed the
/// last writes leaves) is taken by the watcher's refresh when the mirror
/// did not change during it: the mirror follows Redis, not its own past.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn the_watcher_takes_an_older_word_when_nothing_changed_meanwhile() {
    let server = server();
    let b = builder(&server, "k", config(1, 60_000_000, 1_000_000))
        .pubsub(false)
        .refresh(Duration::from_millis(50))
        .build()
        .unwrap();
    let t = b.acquire().unwrap();
    b.release(t, Outcome::Failure);
    b.force_close().unwrap();
    assert_eq!(Snapshot::counter_bits::<W64>(b.word()), 2);
    let older = Snapshot {
        state: State::Closed { failures: 0 },
        counter: 1,
    }
    .encode::<W64>();
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg(older)
        .query(&mut raw(&server))
        .unwrap();
    assert!(
        eventually(LONG, || b.word() == older),
        "the refresh took the older word"
    );
}
