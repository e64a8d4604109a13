//! Exactly one probe across a fleet of processes: 8 processes (this test
//! binary, started again as children) race on an elapsed breaker in each of
//! 200 rounds, through a real redis-server.
//!
//! Each round: every child takes a closed-state ticket; the parent trips
//! the fleet (open for 1 µs: elapsed at once); every child asks to be
//! admitted and then releases its old ticket as a failure; the parent tells
//! the one probe to report a success. Checked:
//!
//! - per round exactly one probe; every other child rejected with cause
//!   `Probing`; every old ticket's failure stale;
//! - the history of the shared word (read at each step) is what the core's
//!   reference function `transition::apply` makes of the operations the
//!   processes reported, in that order: the trip from the closed word, the
//!   probe election from the open word at the probe's own time, each
//!   rejection and each stale release from the probing word, the success;
//!   no stale release counted (each round ends on `Closed` with no failures);
//! - every transition of the whole run was reported by exactly one process,
//!   with the counters contiguous (1, 2, 3, ...) and each transition's
//!   `from` the previous one's `to` (spec I7, I10 across processes).
//!
//! Nothing here depends on speed: the rounds are sequenced by messages, and
//! each message is waited for up to 60 s.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::time::Duration;
use tripword::transition::{self, Event, Verdict};
use tripword::word::{Snapshot, State};
use tripword::{Cause, Outcome, Status, Transition, ValidConfig, W64};
use tripword_redis::{FleetObserver, RedisBreaker, Release, Scope};

const CHILD: &str = "TRIPWORD_REDIS_CHILD";
const KEY: &str = "fleet";

fn rounds() -> usize {
    std::env::var("TRIPWORD_REDIS_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}

fn fleet_config() -> ValidConfig<W64> {
    // Open for 1 µs: every round's racers find the open time over. The probe
    // timeout is far beyond the test: no probe lapses.
    config(1, 1, 600_000_000)
}

/// Prints every transition this process makes: `@@ t from to counter`.
struct Printer;

impl tripword::Observer for Printer {
    fn on_transition(&self, _: Transition) {}
}

impl FleetObserver for Printer {
    fn on_scoped_transition(&self, t: Transition, scope: Scope) {
        if scope == Scope::Shared {
            println!("@@ t {} {} {}", t.from, t.to, t.counter);
        }
    }
}

/// The child's side: runs only when started by the parent test.
#[test]
#[ignore = "a role: the children of eight_processes_elect_one_probe_per_round run it"]
fn child_role() {
    let Ok(id) = std::env::var(CHILD) else {
        return; // an ordinary run: this test is the children's entry point
    };
    let url = std::env::var(URL).expect("the parent passes the URL");
    let b = RedisBreaker::builder(url, KEY)
        .config(fleet_config())
        .op_timeout(Duration::from_secs(5))
        .refresh(Duration::from_millis(200))
        .observer(Printer)
        .build()
        .expect("build");
    println!("@@ ready {id}");
    let mut held = None;
    let mut probe = None;
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let mut words = line.split_whitespace();
        let (Some(cmd), Some(round)) = (words.next(), words.next()) else {
            break;
        };
        match cmd {
            "prep" => {
                b.sync().expect("sync");
                let t = b.acquire().expect("closed");
                println!("@@ prepped {round} {} {}", t.counter(), t.is_probe());
                held = Some(t);
            }
            "go" => {
                b.sync().expect("sync");
                let result = match b.acquire() {
                    Ok(t) if t.is_probe() => {
                        let s = format!("probe {}", t.counter());
                        probe = Some(t);
                        s
                    }
                    Ok(t) => format!("admitted {}", t.counter()),
                    Err(why) => format!("rejected {:?}", why.cause()),
                };
                let stale = b.release(held.take().expect("prepped"), Outcome::Failure);
                println!("@@ result {round} {result} {stale:?}");
            }
            "finish" => {
                let released = b.release(probe.take().expect("the probe"), Outcome::Success);
                println!("@@ finished {round} {released:?}");
            }
            _ => break,
        }
    }
}

/// The next protocol line of the children, recording transition lines
/// into `log` on the way.
fn next(kids: &Processes, log: &mut Vec<(usize, String)>) -> (usize, String) {
    loop {
        let (i, line) = kids.next(Duration::from_secs(60));
        if line.starts_with("t ") {
            log.push((i, line));
        } else {
            return (i, line);
        }
    }
}

fn word_of(server: &tripword_redis::server::RedisServer) -> u64 {
    stored(server, KEY).map_or(0, |w| w.parse().unwrap())
}

fn since(word: u64) -> u64 {
    match Snapshot::decode::<W64>(word).unwrap().state {
        State::Open { since, .. } | State::Probing { since, .. } => since,
        s => panic!("no timestamp in {s:?}"),
    }
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn eight_processes_elect_one_probe_per_round() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let server = server();
    let n = 8;
    let rounds = rounds();
    let cfg = fleet_config();
    let log = Recorder::default();
    let parent = RedisBreaker::builder(server.url(), KEY)
        .config(cfg)
        .op_timeout(Duration::from_secs(5))
        .observer(log.clone())
        .build()
        .unwrap();
    let mut kids = Processes::spawn(n, "child_role", CHILD, &server.url());
    let mut transitions = Vec::new();
    for _ in 0..n {
        let (_, line) = next(&kids, &mut transitions);
        assert!(line.starts_with("ready"), "{line}");
    }
    let mut word = word_of(&server);
    for r in 0..rounds {
        // Every child holds a closed-state ticket of the current word.
        for i in 0..n {
            kids.send(i, &format!("prep {r}"));
        }
        let counter = Snapshot::counter_bits::<W64>(word);
        for _ in 0..n {
            let (i, line) = next(&kids, &mut transitions);
            assert_eq!(line, format!("prepped {r} {counter} false"), "child {i}");
        }
        // The parent trips the fleet.
        parent.sync().unwrap();
        let t = parent.acquire().unwrap();
        assert_eq!(t.counter(), counter);
        assert_eq!(parent.release(t, Outcome::Failure), Release::Recorded);
        let open = word_of(&server);
        let trip = transition::apply(
            &cfg,
            word,
            Event::Release {
                counter,
                outcome: Outcome::Failure,
            },
            || since(open),
        );
        assert_eq!(trip.word, open, "round {r}: the trip is the model's");
        // The race.
        for i in 0..n {
            kids.send(i, &format!("go {r}"));
        }
        let mut winner = None;
        let mut rejected = 0;
        for _ in 0..n {
            let (i, line) = next(&kids, &mut transitions);
            let fields: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(fields[1], r.to_string());
            match fields[2] {
                "probe" => {
                    assert!(winner.is_none(), "round {r}: a second probe, child {i}");
                    winner = Some((i, fields[3].parse::<u32>().unwrap()));
                }
                "rejected" => {
                    assert_eq!(fields[3], format!("{:?}", Cause::Probing), "round {r}");
                    rejected += 1;
                }
                other => panic!("round {r}: child {i} {other}"),
            }
            assert_eq!(
                fields.last(),
                Some(&"Stale"),
                "round {r}: the old ticket is stale"
            );
        }
        let (winner, probe_counter) = winner.unwrap_or_else(|| panic!("round {r}: no probe"));
        assert_eq!(rejected, n - 1);
        let probing = word_of(&server);
        // The model, from the open word at the probe's time: the same word,
        // the same probe counter.
        let elect = transition::apply(&cfg, open, Event::Admit, || since(probing));
        assert_eq!(elect.word, probing, "round {r}");
        assert_eq!(
            elect.verdict,
            Verdict::Admitted {
                counter: probe_counter,
                probe: true
            }
        );
        // Every other racer, and every stale release, from the probing word.
        let racer = transition::apply(&cfg, probing, Event::Admit, || since(probing) + 1);
        assert!(matches!(racer.verdict, Verdict::Rejected(w) if w.cause() == Cause::Probing));
        let old = transition::apply(
            &cfg,
            probing,
            Event::Release {
                counter,
                outcome: Outcome::Failure,
            },
            || since(probing),
        );
        assert_eq!((old.word, old.verdict), (probing, Verdict::Stale));
        // The probe reports.
        kids.send(winner, &format!("finish {r}"));
        let (i, line) = next(&kids, &mut transitions);
        assert_eq!((i, line), (winner, format!("finished {r} Recorded")));
        let closed = word_of(&server);
        let success = transition::apply(
            &cfg,
            probing,
            Event::Release {
                counter: probe_counter,
                outcome: Outcome::Success,
            },
            || since(probing),
        );
        assert_eq!(success.word, closed, "round {r}");
        assert!(matches!(
            Snapshot::decode::<W64>(closed),
            Ok(Snapshot {
                state: State::Closed { failures: 0 },
                ..
            })
        ));
        word = closed;
    }
    for i in 0..n {
        kids.send(i, "quit 0");
    }
    for (i, ok) in kids.wait_all().into_iter().enumerate() {
        assert!(ok, "child {i} exited cleanly");
    }
    // The stdout readers have seen every line: collect the rest.
    while let Some((i, line)) = kids.try_next(Duration::from_millis(200)) {
        if line.starts_with("t ") {
            transitions.push((i, line));
        }
    }
    // Every transition of the run, reported once, by one process.
    let mut by_counter: BTreeMap<u32, (String, String)> = BTreeMap::new();
    for (_, line) in &transitions {
        let f: Vec<&str> = line.split_whitespace().collect();
        let c: u32 = f[3].parse().unwrap();
        assert!(
            by_counter.insert(c, (f[1].into(), f[2].into())).is_none(),
            "counter {c} reported twice"
        );
    }
    for t in log.0.shared() {
        assert!(
            by_counter
                .insert(t.counter, (t.from.to_string(), t.to.to_string()))
                .is_none(),
            "counter {} reported twice",
            t.counter
        );
    }
    assert_eq!(by_counter.len(), 4 * rounds, "4 transitions a round");
    let mut state = Status::Closed.to_string();
    for (expected, (c, (from, to))) in (1u32..).zip(&by_counter) {
        assert_eq!(*c, expected, "counters contiguous");
        assert_eq!(*from, state, "counter {c}: from the previous state");
        state.clone_from(to);
    }
    assert_eq!(state, Status::Closed.to_string());
}
