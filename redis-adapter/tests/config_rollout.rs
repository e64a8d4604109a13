//! Config changes across a fleet: an instance whose config is not the
//! fleet's follows the shared word (it rejects while the word is not
//! `Closed` and never writes it), and a published config
//! (`RedisBreaker::publish_config`) takes over from the old one with no
//! call passing an open fleet meanwhile.
//!
//! The rollout test runs four processes (this test binary, started again
//! as children), each rebuilding its breaker with the new config in turn,
//! as a rolling deploy restarts instances, while the dependency fails. The
//! dependency, called only on an admission, reads the shared word as
//! stored: it counts a call made while the fleet holds the dependency open
//! (`Open`, `ForcedOpen`, `Probing` with another's probe). Nothing depends
//! on speed: the steps are sequenced by messages, each waited for up to
//! 60 s, and each call first reads the word into its instance's mirror
//! (`sync`), so what is checked is the admission rule itself, not how fast
//! a change is published.

mod common;

use common::*;
use std::io::BufRead;
use std::time::Duration;
use tripword::kit::{CircuitBreaker, Reply};
use tripword::word::{Snapshot, State};
use tripword::{Cause, Outcome, Status, W64};
use tripword_redis::{Error, Mode, RedisBreaker, Scope};

const CHILD: &str = "TRIPWORD_REDIS_ROLLOUT_CHILD";
const KEY: &str = "rollout";

/// The word under `key` as stored, decoded (a missing key reads as the
/// initial word).
fn state(con: &mut redis::Connection, key: &str) -> State {
    let word: Option<String> = redis::cmd("GET").arg(key).query(con).unwrap();
    let word = word.map_or(0, |w| w.parse().unwrap());
    Snapshot::decode::<W64>(word).unwrap().state
}

/// Whether a call admitted with a ticket that `probe` says is the fleet's
/// probe (or not) passes what the stored word `now` holds open.
fn passes_open_fleet(now: State, probe: bool) -> bool {
    match now {
        State::Closed { .. } => false,
        State::Probing { .. } => !probe,
        _ => true,
    }
}

/// An instance of another config, against a fleet held open in each way:
/// it rejects with the fleet's cause (its own breaker is closed, its open
/// time long over), never writes the word, and admits once the word is
/// `Closed` again.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_follower_never_admits_what_the_fleet_word_rejects() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let server = server();
    let mut con = raw(&server);
    // The fleet: 2 failures, open 60 s, probe timeout 60 s.
    let fleet = builder(&server, "held", config(2, 60_000_000, 60_000_000))
        .build()
        .unwrap();
    // Another config: 5 failures, open 1 µs (its own reading of an open
    // word lapses at once).
    let other = builder(&server, "held", config(5, 1, 60_000_000))
        .build()
        .unwrap();
    assert_eq!(other.mode(), Mode::Local);
    assert_eq!(
        other.config_mismatch().as_deref(),
        Some(fleet.config_fingerprint())
    );
    // Closed: the follower's local breaker admits.
    let t = other.acquire().expect("closed fleet: admitted");
    assert_eq!(t.scope(), Scope::Local);
    other.release(t, Outcome::Success);
    // Open.
    for _ in 0..2 {
        let t = fleet.acquire().unwrap();
        fleet.release(t, Outcome::Failure);
    }
    assert_eq!(fleet.status(), Status::Open);
    let open = stored(&server, "held");
    other.sync().unwrap();
    assert_eq!(other.status(), Status::Open);
    for _ in 0..3 {
        let why = other.acquire().expect_err("the fleet is open");
        assert_eq!(why.cause(), Cause::Open);
    }
    // The async path answers the same, at once.
    match CircuitBreaker::acquire_async(&other) {
        Reply::Ready(Err(why)) => assert_eq!(why.cause(), Cause::Open),
        Reply::Ready(Ok(_)) => panic!("admitted past an open fleet"),
        Reply::Wait(_) => panic!("a follower's rejection needs no round trip"),
    }
    assert_eq!(stored(&server, "held"), open, "the follower wrote nothing");
    // Probing, by an instance of the fleet's config: a fleet open for 1 µs
    // on another key, the probe held.
    let quick = builder(&server, "probed", config(1, 1, 60_000_000))
        .build()
        .unwrap();
    let slow = builder(&server, "probed", config(4, 60_000_000, 60_000_000))
        .build()
        .unwrap();
    let t = quick.acquire().unwrap();
    quick.release(t, Outcome::Failure);
    let probe = quick.acquire().expect("the open time is over: the probe");
    assert!(probe.is_probe());
    assert!(matches!(state(&mut con, "probed"), State::Probing { .. }));
    slow.sync().unwrap();
    assert_eq!(slow.status(), Status::Probing);
    for _ in 0..3 {
        let why = slow.acquire().expect_err("another's probe runs");
        assert_eq!(why.cause(), Cause::Probing);
    }
    assert!(matches!(state(&mut con, "probed"), State::Probing { .. }));
    quick.release(probe, Outcome::Success);
    slow.sync().unwrap();
    let t = slow.acquire().expect("closed again: admitted");
    slow.release(t, Outcome::Success);
    // ForcedOpen: the follower cannot force the fleet, and follows its hold.
    fleet.force_open().unwrap();
    other.sync().unwrap();
    let why = other.acquire().expect_err("held open");
    assert_eq!(why.cause(), Cause::ForcedOpen);
    assert!(matches!(
        other.force_close(),
        Err(Error::ConfigMismatch { .. })
    ));
    assert_eq!(state(&mut con, "held"), State::ForcedOpen);
    // Closed again: the follower's own breaker decides, and its failures
    // stay its own.
    fleet.force_close().unwrap();
    other.sync().unwrap();
    let closed = stored(&server, "held");
    for _ in 0..5 {
        let t = other.acquire().expect("closed fleet, closed local breaker");
        other.release(t, Outcome::Failure);
    }
    // (Open for 1 µs: half-open by now.)
    assert_ne!(other.status(), Status::Closed, "its local breaker tripped");
    assert_eq!(
        stored(&server, "held"),
        closed,
        "the follower wrote nothing"
    );
    assert_eq!(fleet.status(), Status::Closed);
    // A corrupt word: repaired by the fleet's config, not by the follower.
    let _: () = redis::cmd("SET")
        .arg("held")
        .arg("garbage")
        .query(&mut con)
        .unwrap();
    other.sync().unwrap();
    assert_eq!(stored(&server, "held").as_deref(), Some("garbage"));
    fleet.sync().unwrap();
    assert_ne!(stored(&server, "held").as_deref(), Some("garbage"));
}

/// A follower that loses Redis falls back as an attached instance does: the
/// fleet's word it last saw was open, so its local breaker is tripped, and
/// it keeps rejecting.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_follower_that_loses_redis_falls_back_tripped() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let mut server = server();
    let fleet = builder(&server, "lost", config(2, 60_000_000, 60_000_000))
        .build()
        .unwrap();
    let other = builder(&server, "lost", config(5, 60_000_000, 60_000_000))
        .build()
        .unwrap();
    for _ in 0..2 {
        let t = fleet.acquire().unwrap();
        fleet.release(t, Outcome::Failure);
    }
    other.sync().unwrap();
    assert_eq!(other.acquire().unwrap_err().cause(), Cause::Open);
    server.stop();
    assert!(other.sync().is_err(), "Redis is gone");
    assert_eq!(other.mode(), Mode::Local);
    assert_eq!(other.status(), Status::Open, "its own breaker, tripped");
    for _ in 0..3 {
        assert_eq!(other.acquire().unwrap_err().cause(), Cause::Open);
    }
}

/// A published config takes over: its generation counts up, the instance
/// that published joins, the instances of the old config follow from their
/// next read of the fingerprint, the fleet's open word is kept.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_published_config_rules_and_the_old_one_follows() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let server = server();
    let old = builder(&server, "k", config(3, 60_000_000, 60_000_000))
        .build()
        .unwrap();
    let new = builder(&server, "k", config(5, 90_000_000, 60_000_000))
        .build()
        .unwrap();
    assert_eq!(new.mode(), Mode::Local);
    for _ in 0..3 {
        let t = old.acquire().unwrap();
        old.release(t, Outcome::Failure);
    }
    let open = stored(&server, "k");
    assert_eq!(new.publish_config().unwrap(), 1);
    assert_eq!(
        stored(&server, "k:config"),
        Some(format!("{} generation=1", new.config_fingerprint()))
    );
    assert_eq!(new.mode(), Mode::Shared);
    assert!(new.config_mismatch().is_none());
    assert_eq!(stored(&server, "k"), open, "the word is kept");
    assert_eq!(new.acquire().unwrap_err().cause(), Cause::Open);
    // Publishing the config stored changes nothing.
    assert_eq!(new.publish_config().unwrap(), 1);
    // The old config's instance follows from its next read.
    old.sync().unwrap();
    assert_eq!(old.mode(), Mode::Local);
    assert_eq!(
        old.config_mismatch().as_deref(),
        Some(new.config_fingerprint())
    );
    assert_eq!(old.acquire().unwrap_err().cause(), Cause::Open);
    assert!(matches!(
        old.force_close(),
        Err(Error::ConfigMismatch { .. })
    ));
    assert_eq!(stored(&server, "k"), open);
    // And from its watcher's reads too, with no sync: published back.
    assert_eq!(old.publish_config().unwrap(), 2);
    assert_eq!(old.mode(), Mode::Shared);
    assert!(
        eventually(LONG, || new.mode() == Mode::Local),
        "the watcher reads the fingerprint of an attached instance"
    );
    assert_eq!(
        new.config_mismatch().as_deref(),
        Some(old.config_fingerprint())
    );
}

/// The child's side of the rollout: runs only when started by the parent.
///
/// Commands, one a line, each answered by one line:
/// - `build <threshold> <open ms>`: (re)builds the instance with that
///   config (the breaker before it is dropped, as a restart drops it);
/// - `call <fail|ok>`: reads the word (`sync`), asks to be admitted, and
///   if admitted calls the dependency, which checks the stored word, and
///   releases with the outcome;
/// - `publish`: publishes the instance's config;
/// - `state`: the instance's mode and fingerprint, and the fleet's if
///   another.
#[test]
#[ignore = "a role: the children of a_rolling_config_change_never_calls_past_an_open_fleet run it"]
fn rollout_child_role() {
    let Ok(id) = std::env::var(CHILD) else {
        return; // an ordinary run: this test is the children's entry point
    };
    let url = std::env::var(URL).expect("the parent passes the URL");
    let mut con = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let mut breaker: Option<RedisBreaker> = None;
    println!("@@ ready {id}");
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["build", threshold, open_ms] => {
                drop(breaker.take());
                let open_us = open_ms.parse::<u64>().unwrap() * 1_000;
                let b = RedisBreaker::builder(url.as_str(), KEY)
                    .config(config(threshold.parse().unwrap(), open_us, 60_000_000))
                    .op_timeout(Duration::from_secs(5))
                    .refresh(Duration::from_millis(200))
                    .build()
                    .expect("build");
                println!("@@ built {:?}", b.mode());
                breaker = Some(b);
            }
            ["call", how] => {
                let b = breaker.as_ref().expect("built");
                b.sync().expect("sync");
                let following = b.config_mismatch().is_some();
                match b.acquire() {
                    Ok(t) => {
                        // The dependency.
                        let now = state(&mut con, KEY);
                        let bad =
                            passes_open_fleet(now, t.is_probe() && t.scope() == Scope::Shared);
                        let outcome = if *how == "ok" {
                            Outcome::Success
                        } else {
                            Outcome::Failure
                        };
                        b.release(t, outcome);
                        println!("@@ admitted {} {following} {now:?}", u8::from(bad));
                    }
                    Err(why) => println!("@@ rejected {:?} {following}", why.cause()),
                }
            }
            ["publish"] => {
                let b = breaker.as_ref().expect("built");
                println!("@@ published {}", b.publish_config().expect("publish"));
            }
            ["state"] => {
                let b = breaker.as_ref().expect("built");
                b.sync().expect("sync");
                println!(
                    "@@ state {:?} {} fleet={:?}",
                    b.mode(),
                    b.config_fingerprint(),
                    b.config_mismatch()
                );
            }
            _ => break,
        }
    }
}

/// What the children reported.
#[derive(Default, Debug)]
struct Tally {
    admitted: usize,
    /// Calls admitted while the stored word held the dependency open.
    violations: usize,
    rejected: usize,
    /// Rejections of instances whose config was not the fleet's.
    followers_rejected: usize,
    followers_admitted: usize,
}

/// One call by child `i`, tallied; whether it was admitted.
fn call(kids: &mut Processes, tally: &mut Tally, i: usize, how: &str) -> bool {
    kids.send(i, &format!("call {how}"));
    let (from, line) = kids.next(Duration::from_secs(60));
    assert_eq!(from, i, "{line}");
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["admitted", bad, following, ..] => {
            tally.admitted += 1;
            if *bad == "1" {
                tally.violations += 1;
                eprintln!("child {i}: {line}");
            }
            if *following == "true" {
                tally.followers_admitted += 1;
            }
            true
        }
        ["rejected", _, following] => {
            tally.rejected += 1;
            if *following == "true" {
                tally.followers_rejected += 1;
            }
            false
        }
        _ => panic!("child {i}: {line}"),
    }
}

/// Rounds of one failing call per child, a little time between rounds for
/// open times to lapse (probes then run and fail; nothing is asserted of
/// how many).
fn failing(kids: &mut Processes, tally: &mut Tally, rounds: usize) {
    for _ in 0..rounds {
        for i in 0..4 {
            call(kids, tally, i, "fail");
        }
        std::thread::sleep(Duration::from_millis(40));
    }
}

fn ask(kids: &mut Processes, i: usize, msg: &str, answer: &str) -> String {
    kids.send(i, msg);
    let (from, line) = kids.next(Duration::from_secs(60));
    assert_eq!(from, i, "{line}");
    assert!(line.starts_with(answer), "child {i}: {line}");
    line
}

/// Four processes on one key move from 3 failures / open 100 ms to
/// 5 failures / open 150 ms one at a time while the dependency fails; the
/// second to move publishes the new config. No call passes the open fleet
/// at any step, the instances of the config that is not the fleet's are
/// rejected while it is open, and at the end every instance is on the
/// shared word with the new config, which closes once the dependency is
/// back.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_rolling_config_change_never_calls_past_an_open_fleet() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let server = server();
    let mut kids = Processes::spawn(4, "rollout_child_role", CHILD, &server.url());
    for _ in 0..4 {
        let (_, line) = kids.next(Duration::from_secs(60));
        assert!(line.starts_with("ready"), "{line}");
    }
    let old = ("3", "100");
    let new = ("5", "150");
    for i in 0..4 {
        ask(
            &mut kids,
            i,
            &format!("build {} {}", old.0, old.1),
            "built Shared",
        );
    }
    let mut tally = Tally::default();
    // The dependency fails: the fleet trips in the first rounds.
    failing(&mut kids, &mut tally, 3);
    let mut con = raw(&server);
    assert!(!matches!(state(&mut con, KEY), State::Closed { .. }));
    for i in 0..4 {
        // A restart with the new config: it follows the old one's word.
        let built = if i <= 1 {
            "built Local"
        } else {
            "built Shared"
        };
        ask(&mut kids, i, &format!("build {} {}", new.0, new.1), built);
        if i == 1 {
            // The second instance of the new version publishes it: the
            // instances of the old version follow from their next read.
            ask(&mut kids, i, "publish", "published 1");
        }
        failing(&mut kids, &mut tally, 4);
    }
    assert_eq!(tally.violations, 0, "{tally:?}");
    assert!(
        tally.followers_rejected > 0,
        "the rule was exercised: {tally:?}"
    );
    assert_eq!(
        tally.followers_admitted, 0,
        "the fleet never closed: {tally:?}"
    );
    // The dependency is back: the new config's probe closes the fleet.
    let mut closed = false;
    for _ in 0..1_000 {
        let mut all = true;
        for i in 0..4 {
            all &= call(&mut kids, &mut tally, i, "ok");
        }
        if all && matches!(state(&mut con, KEY), State::Closed { .. }) {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        closed,
        "the fleet closes once the dependency is back: {tally:?}"
    );
    assert_eq!(tally.violations, 0, "{tally:?}");
    // One config rules.
    let mut prints = Vec::new();
    for i in 0..4 {
        let line = ask(&mut kids, i, "state", "state Shared ");
        assert!(line.ends_with(" fleet=None"), "child {i}: {line}");
        prints.push(line);
    }
    assert!(prints.iter().all(|p| *p == prints[0]), "{prints:?}");
    let fleet = stored(&server, &format!("{KEY}:config")).unwrap();
    assert!(
        prints[0].contains(fleet.trim_end_matches(" generation=1")),
        "{fleet} / {}",
        prints[0]
    );
    assert!(fleet.contains(&format!(
        "failure_threshold={} open_for={}000 ",
        new.0, new.1
    )));
    assert!(kids.wait_all().iter().all(|ok| *ok));
}
