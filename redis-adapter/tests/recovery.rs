//! The recovery states on the shared word, with three instances of one
//! breaker on a real redis-server: exactly `n` probes elected fleet-wide
//! (`Config::probes`), the ramp's share admitted by each instance of its
//! own calls with nothing written to Redis, a failure storm in the ramp
//! reopening the whole fleet, and the ramp's end stored once. Each test
//! starts its own redis-server.

mod common;

use common::*;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tripword::kit::Reply;
use tripword::word::{Snapshot, State};
use tripword::{
    Cause, CircuitBreaker, Config, Outcome, Ramp, Rejected, Status, Transition, ValidConfig, W64,
    Word,
};
use tripword_redis::server::RedisServer;
use tripword_redis::{FleetObserver, RedisBreaker, Release, Scope};

/// What an instance reported: its transitions with their scope, and the
/// causes of its rejections.
#[derive(Default)]
struct Reports {
    transitions: Vec<(Transition, Scope)>,
    rejections: Vec<Cause>,
}

#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Reports>>);

impl tripword::Observer for Seen {
    fn on_transition(&self, _: Transition) {}
    fn on_rejected(&self, why: Rejected) {
        self.0.lock().unwrap().rejections.push(why.cause());
    }
}

impl FleetObserver for Seen {
    fn on_scoped_transition(&self, t: Transition, scope: Scope) {
        self.0.lock().unwrap().transitions.push((t, scope));
    }
}

impl Seen {
    /// The shared transitions from `from` to `to` this instance made.
    fn made(&self, from: Status, to: Status) -> usize {
        let seen = self.0.lock().unwrap();
        seen.transitions
            .iter()
            .filter(|(t, s)| *s == Scope::Shared && t.from == from && t.to == to)
            .count()
    }
    fn rejected(&self, cause: Cause) -> usize {
        self.0
            .lock()
            .unwrap()
            .rejections
            .iter()
            .filter(|c| **c == cause)
            .count()
    }
}

/// `n` instances of the breaker under `key`, each with its observer. Their
/// own clocks stand still, so an estimate of the server's time is the last
/// sample's (every refresh takes one) and never grows too old to use,
/// however long the machine leaves a thread waiting: the ramp's share is
/// then always decided with no round trip.
fn instances(
    server: &RedisServer,
    key: &str,
    config: ValidConfig<W64>,
    n: usize,
) -> Vec<(RedisBreaker, Seen)> {
    (0..n)
        .map(|_| {
            let seen = Seen::default();
            let b = builder(server, key, config)
                .op_timeout(Duration::from_secs(5))
                .local_clock(ManualLocal::new(0))
                .observer(seen.clone())
                .build()
                .unwrap();
            (b, seen)
        })
        .collect()
}

/// The writes Redis made (`rdb_changes_since_last_save`: every command
/// that changed a key, a script's `SET` included); publishing and reading
/// change nothing.
fn writes(server: &RedisServer) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("persistence")
        .query(&mut raw(server))
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("rdb_changes_since_last_save:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn decoded(server: &RedisServer, key: &str) -> Snapshot {
    let word: u64 = stored(server, key).unwrap().parse().unwrap();
    Snapshot::decode::<W64>(word).unwrap()
}

/// Trips the shared word by `threshold` failures from the first instance,
/// then waits until every instance reads its open time over.
fn trip_and_wait(fleet: &[(RedisBreaker, Seen)], threshold: u32) {
    for _ in 0..threshold {
        let t = fleet[0].0.acquire().expect("closed");
        assert_eq!(fleet[0].0.release(t, Outcome::Failure), Release::Recorded);
    }
    for (b, _) in fleet {
        assert!(eventually(LONG, || b.status() == Status::HalfOpen));
    }
}

/// With `probes(3)`, however many threads of three instances ask, the
/// fleet admits exactly three probes, each by a compare-and-set of the
/// trial's counts in Redis; the rest are refused as `Probing`. The third
/// success closes the fleet: one transition into the trial and one out of
/// it, each made by one instance.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn three_instances_elect_exactly_three_probes() {
    let server = server();
    let config = Config::new()
        .failure_threshold(2)
        .open_for(50_000)
        .probe_timeout(600_000_000)
        .probes(3)
        .check()
        .unwrap();
    let fleet = instances(&server, "k", config, 3);
    trip_and_wait(&fleet, 2);
    let probes: Vec<_> = std::thread::scope(|s| {
        let asks: Vec<_> = (0..12)
            .map(|i| {
                let b = &fleet[i % 3].0;
                s.spawn(move || {
                    let mut got = Vec::new();
                    for _ in 0..10 {
                        match b.acquire() {
                            Ok(t) => got.push((i % 3, t)),
                            Err(why) => assert_eq!(why.cause(), Cause::Probing),
                        }
                    }
                    got
                })
            })
            .collect();
        asks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(probes.len(), 3, "exactly three probes fleet-wide");
    assert!(probes.iter().all(|(_, t)| t.is_probe()));
    let trial = decoded(&server, "k");
    assert!(
        matches!(
            trial.state,
            State::Trial {
                running: 3,
                passed: 0,
                failed: 0,
                ..
            }
        ),
        "{trial:?}"
    );
    let into: usize = fleet
        .iter()
        .map(|(_, s)| s.made(Status::HalfOpen, Status::Probing))
        .sum();
    assert_eq!(into, 1, "one instance started the trial");
    for (b, _) in &fleet {
        assert!(eventually(LONG, || b.status() == Status::Probing));
        assert_eq!(b.acquire().unwrap_err().cause(), Cause::Probing, "full");
    }
    for (i, t) in probes {
        assert_eq!(fleet[i].0.release(t, Outcome::Success), Release::Recorded);
    }
    assert!(matches!(
        decoded(&server, "k").state,
        State::Closed { failures: 0 }
    ));
    let out: usize = fleet
        .iter()
        .map(|(_, s)| s.made(Status::Probing, Status::Closed))
        .sum();
    assert_eq!(out, 1, "the third success closed it");
    for (b, _) in &fleet {
        assert!(eventually(LONG, || b.status() == Status::Closed));
    }
}

/// A trial with room is asked of Redis, whichever instance's mirror holds
/// it: each of three instances gets a probe, one after the other, each
/// after its mirror holds the trial as the others left it. A full trial is
/// refused by the mirror with no round trip; a probe ignored frees its
/// place, published to every mirror, and the next caller takes it.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_trial_with_room_is_asked_of_redis() {
    let server = server();
    let config = Config::new()
        .failure_threshold(1)
        .open_for(50_000)
        .probe_timeout(600_000_000)
        .probes(3)
        .check()
        .unwrap();
    // Changes reach the mirrors by pub/sub alone (no refresh for an hour;
    // the instances' own clocks run, for the open time to end).
    let fleet: Vec<_> = (0..3)
        .map(|_| {
            let seen = Seen::default();
            let b = builder(&server, "k", config)
                .op_timeout(Duration::from_secs(5))
                .refresh(Duration::from_secs(3600))
                .observer(seen.clone())
                .build()
                .unwrap();
            (b, seen)
        })
        .collect();
    trip_and_wait(&fleet, 1);
    let mut probes = Vec::new();
    for (i, (b, _)) in fleet.iter().enumerate() {
        // The mirror holds the trial (with room: a word with fewer places
        // of one trial, published after, is not taken over it).
        let counter = Snapshot::counter_bits::<W64>(stored(&server, "k").unwrap().parse().unwrap());
        assert!(eventually(LONG, || Snapshot::counter_bits::<W64>(b.word()) == counter));
        let t = b.acquire().expect("a place in the trial");
        assert!(t.is_probe());
        probes.push((i, t));
    }
    let full: u64 = stored(&server, "k").unwrap().parse().unwrap();
    for (b, _) in &fleet {
        // Refused (by Redis, or by a mirror that holds the trial full),
        // and then the mirror holds it full.
        assert_eq!(b.acquire().unwrap_err().cause(), Cause::Probing);
        assert_eq!(b.word(), full);
        let before = b.stats().remote_calls;
        assert_eq!(b.acquire().unwrap_err().cause(), Cause::Probing);
        assert_eq!(b.stats().remote_calls, before, "refused by the mirror");
    }
    let (_, ignored) = probes.pop().unwrap();
    assert_eq!(
        fleet[2].0.release(ignored, Outcome::Ignored),
        Release::Recorded
    );
    let freed: u64 = stored(&server, "k").unwrap().parse().unwrap();
    assert!(matches!(
        Snapshot::decode::<W64>(freed).unwrap().state,
        State::Trial { running: 2, .. }
    ));
    // The first instance learns of the freed place by pub/sub alone (the
    // same counter: taken as the word with more room).
    assert!(eventually(LONG, || fleet[0].0.word() == freed));
    let t = fleet[0].0.acquire().expect("the freed place");
    assert!(t.is_probe());
    probes.push((0, t));
    for (i, t) in probes {
        assert_eq!(fleet[i].0.release(t, Outcome::Success), Release::Recorded);
    }
    assert!(matches!(
        decoded(&server, "k").state,
        State::Closed { failures: 0 }
    ));
}

/// A stage long enough that every call of a test falls in the one it
/// starts in, however slowly the machine runs it.
const LONG_STEP: u64 = 600_000_000;

fn ramp_config(threshold: u32, ramp: Ramp) -> ValidConfig<W64> {
    Config::new()
        .failure_threshold(threshold)
        .open_for(50_000)
        .probe_timeout(600_000_000)
        .ramp(ramp)
        .check()
        .unwrap()
}

/// Trips the fleet, lets the first instance's probe succeed, and waits
/// until every instance holds the ramp it stored (with an estimate of the
/// server's time). Returns the ramp's word.
fn into_ramp(server: &RedisServer, fleet: &[(RedisBreaker, Seen)], threshold: u32) -> u64 {
    trip_and_wait(fleet, threshold);
    let probe = fleet[0].0.acquire().expect("the probe");
    assert!(probe.is_probe());
    assert_eq!(
        fleet[0].0.release(probe, Outcome::Success),
        Release::Recorded
    );
    let word: u64 = stored(server, "k").unwrap().parse().unwrap();
    assert!(
        matches!(
            Snapshot::decode::<W64>(word).unwrap().state,
            State::Ramp { .. }
        ),
        "the probe's success stores the ramp"
    );
    assert_eq!(fleet[0].1.made(Status::Probing, Status::Recovering), 1);
    for (b, _) in fleet {
        assert!(eventually(LONG, || b.word() == word
            && b.fleet_now().is_some()
            && b.status() == Status::Recovering));
    }
    word
}

/// `c` calls of `b`, each admitted one released as a success: how many it
/// admitted. Each refusal is the ramp's, with a wait of at most a stage
/// (in the ramp's units).
fn calls(b: &RedisBreaker, c: u64, counter: u32) -> u64 {
    let mut admitted = 0;
    for _ in 0..c {
        match b.acquire() {
            Ok(t) => {
                assert!(!t.is_probe());
                assert_eq!(t.counter(), counter, "the ramp's counter");
                assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
                admitted += 1;
            }
            Err(why) => {
                assert_eq!(why.cause(), Cause::Ramp);
                // A stage in the ramp's units (2^14 µs), rounded up.
                assert!(why.retry_after().unwrap() <= LONG_STEP + (2 << 14));
            }
        }
    }
    admitted
}

/// During a ramp each instance admits its share of its own calls: of its
/// `c` calls at a stage of share `p`, `⌊c·p⌋` or `⌊c·p⌋ + 1`; with no
/// round trip and no write to Redis for admissions, refusals or quiet
/// successes (Redis's own count of changes stays put, and so does the
/// word). At the next stage (a ramp stored as it would be a stage and a
/// half ago, read by each instance) the same with the next share.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn each_instance_admits_its_share_with_no_write() {
    let server = server();
    let config = ramp_config(3, Ramp::stages(LONG_STEP, &[2_500, 5_000]));
    let fleet = instances(&server, "k", config, 3);
    let ramp = into_ramp(&server, &fleet, 3);
    let counter = Snapshot::counter_bits::<W64>(ramp);
    let sizes = [400u64, 123, 77];
    // 25 %: 256 of 1 024 credit units a call.
    let before = (writes(&server), stored(&server, "k"));
    let calls_before: Vec<u64> = fleet.iter().map(|(b, _)| b.stats().remote_calls).collect();
    for ((b, seen), c) in fleet.iter().zip(sizes) {
        let admitted = calls(b, c, counter);
        let least = c * 256 / 1024;
        assert!(
            (least..=least + 1).contains(&admitted),
            "{admitted} of {c} at 25 %"
        );
        assert_eq!(seen.rejected(Cause::Ramp) as u64, c - admitted, "reported");
    }
    assert_eq!(
        (writes(&server), stored(&server, "k")),
        before,
        "nothing written"
    );
    let calls_after: Vec<u64> = fleet.iter().map(|(b, _)| b.stats().remote_calls).collect();
    assert_eq!(calls_after, calls_before, "no round trip");
    // The async form answers at once too.
    match fleet[0].0.acquire_async() {
        Reply::Ready(Ok(t)) => {
            fleet[0].0.release(t, Outcome::Success);
        }
        Reply::Ready(Err(why)) => assert_eq!(why.cause(), Cause::Ramp),
        Reply::Wait(_) => panic!("a ramp's admission needs no round trip"),
    }

    // The second stage: a ramp (of the next counter) that started a stage
    // and a half ago, stored directly and read by each instance.
    let l = W64::LAYOUT;
    let extra = l.share_bits + l.ramp_failure_bits + config.time_shift();
    let since = (server_now(&server) - LONG_STEP - LONG_STEP / 2) >> extra;
    let State::Ramp { trips, .. } = Snapshot::decode::<W64>(ramp).unwrap().state else {
        unreachable!()
    };
    let state = State::Ramp {
        since,
        trips,
        credit: 0,
        failures: 0,
    };
    let counter = l.next_counter(counter);
    let second = Snapshot { state, counter }.encode::<W64>();
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg(second.to_string())
        .query(&mut raw(&server))
        .unwrap();
    for (b, _) in &fleet {
        b.sync().unwrap();
        assert_eq!(b.word(), second);
    }
    let before = (writes(&server), stored(&server, "k"));
    for ((b, _), c) in fleet.iter().zip(sizes) {
        let admitted = calls(b, c, counter);
        let least = c * 512 / 1024;
        assert!(
            (least..=least + 1).contains(&admitted),
            "{admitted} of {c} at 50 %"
        );
    }
    assert_eq!(
        (writes(&server), stored(&server, "k")),
        before,
        "nothing written"
    );
}

/// Failures of calls the ramp admitted go to the shared word, whichever
/// instance admitted them: `min(failure_threshold, 15)` in a row reopen
/// the whole fleet, with the trips moved on, by one transition.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_failure_storm_in_the_ramp_reopens_the_fleet() {
    let server = server();
    let config = ramp_config(3, Ramp::stages(LONG_STEP, &[5_000]));
    let fleet = instances(&server, "k", config, 3);
    into_ramp(&server, &fleet, 3);
    for (b, _) in &fleet {
        // At half, one of two calls is admitted.
        let t = b.acquire().or_else(|_| b.acquire()).expect("admitted");
        assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
    }
    assert!(matches!(
        decoded(&server, "k").state,
        State::Open { trips: 2, .. }
    ));
    let reopened: usize = fleet
        .iter()
        .map(|(_, s)| s.made(Status::Recovering, Status::Open))
        .sum();
    assert_eq!(reopened, 1, "one transition, by the third failure");
    for (b, _) in &fleet {
        assert!(eventually(LONG, || b.status() == Status::Open));
        assert_eq!(b.acquire().unwrap_err().cause(), Cause::Open);
    }
}

/// Past the last stage the first instance to find it over (at the
/// server's time) stores `Closed` with the next counter: one transition
/// fleet-wide however many threads of three instances ask; then every
/// instance admits on the closed path, with no round trip.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn the_ramps_end_is_stored_once() {
    let server = server();
    let config = ramp_config(3, Ramp::stages(100_000, &[2_500, 5_000]));
    let fleet = instances(&server, "k", config, 3);
    let ramp = into_ramp(&server, &fleet, 3);
    for (b, _) in &fleet {
        assert!(eventually(LONG, || b.status() == Status::Closed));
    }
    std::thread::scope(|s| {
        for i in 0..6 {
            let b = &fleet[i % 3].0;
            s.spawn(move || {
                for _ in 0..50 {
                    if let Ok(t) = b.acquire() {
                        b.release(t, Outcome::Success);
                    }
                }
            });
        }
    });
    let ended: usize = fleet
        .iter()
        .map(|(_, s)| s.made(Status::Recovering, Status::Closed))
        .sum();
    assert_eq!(ended, 1, "the end stored once");
    let closed = Snapshot {
        state: State::Closed { failures: 0 },
        counter: W64::LAYOUT.next_counter(Snapshot::counter_bits::<W64>(ramp)),
    }
    .encode::<W64>();
    assert_eq!(stored(&server, "k"), Some(closed.to_string()));
    for (b, _) in &fleet {
        assert!(eventually(LONG, || b.word() == closed));
        let before = b.stats().remote_calls;
        for _ in 0..100 {
            let t = b.acquire().expect("closed");
            assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
        }
        assert_eq!(b.stats().remote_calls, before, "the closed path");
    }
}
