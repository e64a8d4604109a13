//! The engine's unit tests.

use super::*;
use crate::RedisBreaker;
use crate::engine::config::{fingerprint, follower_status};
use crate::engine::quorum::{MAX_WINDOW, trip, voter_id, votes_key};
use crate::engine::words::{
    RESUME, Stored, before_stamp, noted, resumed, shared_health, shared_status,
};
use crate::error::Error;
use std::time::Duration;
use tripword::word::State;
use tripword::{Cause, Config};
#[test]
fn a_ticket_is_two_words() {
    assert_eq!(size_of::<Ticket>(), 2 * size_of::<usize>());
}

#[test]
fn a_ticket_carries_its_issuer_and_flags() {
    for (probe, local) in [(false, false), (true, false), (false, true), (true, true)] {
        let t = Ticket::new(0x1000, 7, probe, local);
        assert_eq!(t.issuer(), 0x1000);
        assert_eq!((t.counter(), t.is_probe()), (7, probe));
        assert_eq!(t.scope(), if local { Scope::Local } else { Scope::Shared });
    }
}

fn closed(counter: u32) -> u64 {
    Snapshot {
        state: State::Closed { failures: 0 },
        counter,
    }
    .encode::<W64>()
}

fn word(state: State) -> u64 {
    Snapshot { state, counter: 9 }.encode::<W64>()
}

/// A word that does not decode: `ForcedOpen` with a bit it does not use
/// (every pattern of tags 6 and 7 is a recovery state).
fn unreadable() -> u64 {
    let w = word(State::ForcedOpen) | 1 << 63;
    assert!(Snapshot::decode::<W64>(w).is_err());
    w
}

/// A follower's admission rule: every state of the fleet's word but
/// `Closed` rejects, whatever this instance's config reads of its time.
#[test]
fn a_follower_admits_only_on_a_closed_fleet_word() {
    let ours = Config::new()
        .failure_threshold(3)
        .open_for(1_000)
        .probe_timeout(5_000)
        .check::<W64>()
        .unwrap();
    // Closed, with failures the follower's threshold reads as a corrupt
    // run, or unreadable: the local breaker decides.
    for w in [
        closed(4),
        word(State::Closed { failures: 2 }),
        word(State::Closed { failures: 7 }),
        unreadable(),
    ] {
        for now in [None, Some(0), Some(u64::MAX / 4)] {
            assert_eq!(fleet_holds(&ours, w, now), None, "{w:#x} at {now:?}");
        }
    }
    // A trip from a closed word at 10 000 µs: the kit's own open word.
    let step = transition::apply(
        &Config::new()
            .failure_threshold(1)
            .open_for(1_000)
            .probe_timeout(5_000)
            .check::<W64>()
            .unwrap(),
        closed(3),
        Event::Release {
            counter: 3,
            outcome: Outcome::Failure,
        },
        || 10_000,
    );
    let open = step.word;
    assert!(matches!(
        Snapshot::decode::<W64>(open).unwrap().state,
        State::Open { .. }
    ));
    // Before its open time: the wait this config reads.
    let why = fleet_holds(&ours, open, Some(10_100)).unwrap();
    assert_eq!(why.cause(), Cause::Open);
    let kit = match transition::apply(&ours, open, Event::Admit, || 10_100).verdict {
        Verdict::Rejected(why) => why,
        v => panic!("{v:?}"),
    };
    assert_eq!(why, kit);
    // Past it, and with no estimate of the server's time: still
    // rejected (the fleet's probe is for an instance of its config).
    for now in [Some(10_000_000), None] {
        let why = fleet_holds(&ours, open, now).unwrap();
        assert_eq!((why.cause(), why.retry_after()), (Cause::Open, Some(0)));
    }
    let cases = [
        (State::Probing { since: 3, trips: 1 }, Cause::Probing),
        (State::HalfOpen { trips: 2 }, Cause::Open),
        (State::ForcedOpen, Cause::ForcedOpen),
    ];
    for (state, cause) in cases {
        for now in [None, Some(0), Some(10_000_000)] {
            let why = fleet_holds(&ours, word(state), now).unwrap();
            assert_eq!(why.cause(), cause, "{state:?} at {now:?}");
        }
    }
    assert_eq!(
        fleet_holds(&ours, word(State::ForcedOpen), None)
            .unwrap()
            .retry_after(),
        None,
        "an operator's hold has no wait"
    );
}

#[test]
fn a_published_fingerprint_carries_its_generation() {
    let print =
        "v1 failure_threshold=3 open_for=1000 backoff_cap=none probe_timeout=5000 horizon=9";
    assert_eq!(published_fingerprint(print), (print, 0));
    assert_eq!(
        published_fingerprint(&format!("{print} generation=12")),
        (print, 12)
    );
    let odd = format!("{print} generation=x");
    assert_eq!(published_fingerprint(&odd), (odd.as_str(), 0));
}

#[test]
fn the_mirror_is_ahead_within_half_the_counter_period() {
    let max = W64::LAYOUT.max_counter();
    let cases = [
        (5, 5, false, "the same counter"),
        (6, 5, true, "one ahead"),
        (5, 6, false, "one behind"),
        (0, max, true, "one ahead across the wrap"),
        (max, 0, false, "one behind across the wrap"),
        (max / 2 + 5, 5, true, "half the period ahead"),
        (max / 2 + 6, 5, false, "past half the period: behind"),
        (max, 1, false, "far ahead reads as behind"),
    ];
    for (mirror, ticket, ahead, why) in cases {
        assert_eq!(
            mirror_ahead(closed(mirror), ticket),
            ahead,
            "{why}: {mirror} vs {ticket}"
        );
    }
    // Only the counter bits count: the rest of the word is ignored.
    let open = Snapshot {
        state: State::Open {
            since: 1 << 30,
            trips: 3,
        },
        counter: 9,
    }
    .encode::<W64>();
    assert!(mirror_ahead(open, 8));
    assert!(!mirror_ahead(open, 9));
}

#[test]
fn a_lost_key_resumes_the_counter_past_every_ticket_of_its_word() {
    assert_eq!(resumed(None), 0, "a new fleet starts at the initial word");
    let max = W64::LAYOUT.max_counter();
    // The initial word found stored (a success reset a failure) is a
    // word seen: a key lost after it resumes past it.
    let initial = Snapshot::decode::<W64>(resumed(Some(0))).unwrap();
    assert_eq!(initial.counter, RESUME);
    for counter in [1, 7, max / 2, max - 1, max] {
        let seen = Snapshot {
            state: State::Open {
                since: 1 << 20,
                trips: 2,
            },
            counter,
        }
        .encode::<W64>();
        let word = resumed(Some(seen));
        let snap = Snapshot::decode::<W64>(word).unwrap();
        assert_eq!(snap.state, State::Closed { failures: 0 });
        assert_eq!(snap.counter, counter.wrapping_add(RESUME) & max);
        // Every ticket of the counters up to the one seen is stale
        // against it, and the mirrors take it as newer.
        for back in [0, 1, RESUME - 1] {
            assert!(mirror_ahead(word, counter.wrapping_sub(back) & max));
        }
    }
}

#[test]
fn the_word_noted_as_stored_only_moves_forward() {
    let max = W64::LAYOUT.max_counter();
    let at = |counter: u32| {
        Snapshot {
            state: State::Closed { failures: 0 },
            counter,
        }
        .encode::<W64>()
    };
    assert_eq!(noted(None, at(0)), Some(at(0)));
    assert_eq!(noted(Some(at(5)), at(6)), Some(at(6)));
    // The same counter: the newer word (failures counted) is taken.
    let failed = Snapshot {
        state: State::Closed { failures: 1 },
        counter: 5,
    }
    .encode::<W64>();
    assert_eq!(noted(Some(at(5)), failed), Some(failed));
    // Behind: a late message, a read after lost writes.
    assert_eq!(noted(Some(at(6)), at(5)), Some(at(6)));
    assert_eq!(noted(Some(at(RESUME + 3)), at(3)), Some(at(RESUME + 3)));
    // Across the counter's wrap.
    assert_eq!(noted(Some(at(max)), at(1)), Some(at(1)));
    assert_eq!(noted(Some(at(1)), at(max)), Some(at(1)));
}

#[test]
fn an_estimate_before_the_words_stamp_is_before_it_across_the_wrap() {
    let config = Config::new()
        .failure_threshold(1)
        .open_for(1)
        .probe_timeout(3_600_000_000)
        .horizon(1 << 60)
        .check::<W64>()
        .unwrap();
    let s = config.time_shift();
    assert!(s > 0, "the server's microseconds are read in coarser units");
    let probing = |since| {
        Ok(Snapshot {
            state: State::Probing { since, trips: 1 },
            counter: 3,
        })
    };
    assert!(!before_stamp(&config, probing(1000), 1000 << s));
    assert!(!before_stamp(&config, probing(1000), 1005 << s));
    assert!(before_stamp(&config, probing(1000), 999 << s));
    // Across the wrap of the time field: one unit after the top is 2
    // units after it, not before it.
    let top = W64::LAYOUT.time_mask();
    assert!(!before_stamp(&config, probing(top), 1 << s));
    assert!(before_stamp(&config, probing(1), top << s));
    // Only `Open` and `Probing` keep a stamp.
    let closed = Ok(Snapshot {
        state: State::Closed { failures: 0 },
        counter: 0,
    });
    assert!(!before_stamp(&config, closed, 0));
}

#[test]
fn the_quorum_window_defaults_to_twice_the_longest_open_time() {
    let fixed = Config::new().open_for(1_000_000).check().unwrap();
    let backoff = Config::new()
        .open_for(1_000_000)
        .exponential_backoff(8_000_000)
        .check()
        .unwrap();
    let two = Quorum::ONE.with_instances(2);
    assert!(two.on() && !Quorum::ONE.on());
    assert!(!Quorum::ONE.with_instances(0).on(), "0 reads as 1");
    assert_eq!(two.window(&fixed), 2_000_000);
    assert_eq!(two.window(&backoff), 16_000_000);
    let set = two.clone().with_window(Duration::from_millis(1500));
    assert_eq!(set.window(&backoff), 1_500_000);
    assert_eq!(
        two.clone().with_window(Duration::MAX).window(&fixed),
        MAX_WINDOW
    );
    assert_eq!(two.with_window(Duration::ZERO).window(&fixed), 1);
    // The fingerprint is the same without a quorum, and names it with.
    assert_eq!(
        fingerprint(&fixed, &Quorum::ONE),
        fingerprint(&fixed, &Quorum::ONE.with_instances(1))
    );
    assert!(!fingerprint(&fixed, &Quorum::ONE).contains("quorum"));
    assert!(fingerprint(&fixed, &set).ends_with(" quorum=2 window=1500000"));
}

#[test]
fn a_quorums_trip_is_the_kits_trip_at_the_time_read() {
    let config = Config::new()
        .failure_threshold(3)
        .open_for(1_000)
        .check()
        .unwrap();
    let step = trip(&config, closed(7), 5_000).unwrap();
    let open = Snapshot::decode::<W64>(step.word).unwrap();
    assert!(matches!(open.state, State::Open { .. }), "{open:?}");
    assert_eq!(open.counter, 8);
    let t: Vec<_> = step.transitions.iter().collect();
    assert_eq!(t.len(), 1);
    assert_eq!(
        (t[0].from, t[0].to, t[0].counter),
        (Status::Closed, Status::Open, 8)
    );
    // The same word a run of three failures stores through the kit.
    let mut w = closed(7);
    for _ in 0..3 {
        let outcome = Outcome::Failure;
        let event = Event::Release {
            counter: 7,
            outcome,
        };
        w = transition::apply(&config, w, event, || 5_000).word;
    }
    assert_eq!(w, step.word);
    assert!(!super::closed(step.word) && super::closed(closed(7)));
}

#[test]
fn a_cluster_refuses_sentinel_and_replicas() {
    let on_cluster =
        || RedisBreaker::builder("redis://127.0.0.1:1/", "k").cluster(["redis://127.0.0.1:2/"]);
    let cases = [
        (
            on_cluster().sentinel(["redis://127.0.0.1:3/"], "s"),
            "sentinel",
        ),
        (on_cluster().replicas(1), "replicas"),
    ];
    for (builder, what) in cases {
        match builder.build() {
            Err(e @ Error::Unsupported(_)) => assert!(e.to_string().contains(what), "{e}"),
            other => panic!("{what}: {other:?}"),
        }
    }
    let fleet = crate::Fleet::builder("redis://127.0.0.1:1/")
        .cluster(["redis://127.0.0.1:2/"])
        .replicas(2)
        .build();
    assert!(matches!(fleet, Err(Error::Unsupported(_))));
}

#[test]
fn a_key_is_interned_once() {
    let a = intern("intern-test-key");
    let b = intern(&String::from("intern-test-key"));
    assert!(core::ptr::eq(a, b));
    assert_eq!(a, "intern-test-key");
    assert!(!core::ptr::eq(a, intern("intern-test-other")));
}

/// Records the config mismatches reported to it.
#[derive(Default)]
struct Mismatches(std::sync::Mutex<Vec<(String, String)>>);

impl tripword::Observer for Mismatches {
    fn on_transition(&self, _: tripword::Transition) {}
}

impl FleetObserver for Mismatches {
    fn on_config_mismatch(&self, ours: &str, fleet: &str) {
        self.0
            .lock()
            .unwrap()
            .push((ours.to_owned(), fleet.to_owned()));
    }
}

#[test]
fn the_config_check_follows_another_fingerprint_and_reports_it_once() {
    let config = ValidConfig::new(crate::DEFAULT_CONFIG);
    let check = ConfigCheck::new("payments", &config, &Quorum::ONE);
    assert_eq!(check.key(), "payments:config");
    assert_eq!(check.fingerprint(), fingerprint(&config, &Quorum::ONE));
    assert!(!check.following());
    assert_eq!(check.mismatch(), None);
    let seen = Mismatches::default();
    let reported = || seen.0.lock().unwrap().len();
    // Ours, plain (a first claim) or with a generation: it joins.
    assert_eq!(
        check.judge(check.fingerprint(), "payments", &seen),
        Judged::Agrees
    );
    let ours = format!("{} generation=2", check.fingerprint());
    assert_eq!(check.judge(&ours, "payments", &seen), Judged::Agrees);
    assert!(!check.following());
    assert_eq!(reported(), 0);
    // Another: it follows, and reports the fleet's fingerprint once.
    let theirs = "v1 failure_threshold=9 open_for=1 backoff_cap=none probe_timeout=1 horizon=1";
    let stored = format!("{theirs} generation=3");
    for _ in 0..3 {
        assert_eq!(check.judge(&stored, "payments", &seen), Judged::Follows);
    }
    assert!(check.following());
    assert_eq!(check.mismatch().as_deref(), Some(theirs));
    assert_eq!(
        *seen.0.lock().unwrap(),
        [(check.fingerprint().to_owned(), theirs.to_owned())]
    );
    // A third fingerprint is reported too.
    assert_eq!(check.judge("v2 other", "payments", &seen), Judged::Follows);
    assert_eq!(reported(), 2);
    assert_eq!(check.mismatch().as_deref(), Some("v2 other"));
    // Ours again: the mismatch ends; the engine stops following once it
    // joined.
    let ours = format!("{} generation=4", check.fingerprint());
    assert_eq!(check.judge(&ours, "payments", &seen), Judged::Agrees);
    assert_eq!(check.mismatch(), None);
    assert!(check.following(), "until the engine joins the word");
    assert!(check.stop_following());
    assert!(!check.following());
    assert!(!check.stop_following(), "it was not following any more");
}

#[test]
fn an_attached_breaker_reads_the_fingerprint_every_fourth_refresh() {
    let config = ValidConfig::new(crate::DEFAULT_CONFIG);
    for key in ["k", "payments", "search", ""] {
        let check = ConfigCheck::new(key, &config, &Quorum::ONE);
        let due: Vec<usize> = (0..16).filter(|_| check.due()).collect();
        assert_eq!(due.len(), 4, "{key}: {due:?}");
        assert!(due.windows(2).all(|w| w[1] - w[0] == 4), "{key}: {due:?}");
    }
    // Keys start at other turns: a fleet of many keys reads a share of
    // their fingerprints at each refresh.
    let first = |key: &str| {
        let check = ConfigCheck::new(key, &config, &Quorum::ONE);
        (0..4).find(|_| check.due())
    };
    let firsts: std::collections::HashSet<_> =
        ["a", "b", "c", "d"].into_iter().map(first).collect();
    assert_eq!(firsts.len(), 4, "{firsts:?}");
}

#[test]
fn votes_are_kept_beside_the_word_and_cast_under_an_id_of_their_own() {
    assert_eq!(
        votes_key(false, "tripword:payments", "payments"),
        "payments:votes"
    );
    // On a cluster, in the key's slot: the channel's name is.
    assert_eq!(
        votes_key(true, "tripword:{payments}", "payments"),
        "tripword:{payments}:votes"
    );
    let (a, b) = (voter_id(), voter_id());
    assert_ne!(a, b, "drawn for each breaker");
    let (pid, random) = a.split_once('-').unwrap();
    assert_eq!(pid, std::process::id().to_string());
    assert_eq!(random.len(), 16);
    assert!(random.chars().all(|c| c.is_ascii_hexdigit()));
    let named = Quorum::ONE.with_instances(2).with_voter("pod-7".into());
    let votes = Votes::new(named, false, "tripword:k", "k");
    assert!(!votes.take_voted(), "no vote cast yet");
}

#[test]
fn a_lost_key_resumes_from_the_newest_word_found_stored() {
    let stored = Stored::default();
    assert_eq!(stored.missing_word(), 0, "none found: a new fleet");
    let at = |counter| {
        Snapshot {
            state: State::Closed { failures: 0 },
            counter,
        }
        .encode::<W64>()
    };
    stored.note(at(5));
    assert_eq!(stored.missing_word(), resumed(Some(at(5))));
    assert_eq!(
        Snapshot::counter_bits::<W64>(stored.missing_word()),
        5 + RESUME
    );
    stored.note(at(3));
    assert_eq!(stored.missing_word(), resumed(Some(at(5))), "never back");
    stored.note(at(9));
    assert_eq!(stored.missing_word(), resumed(Some(at(9))));
}

#[test]
fn the_shared_status_is_read_at_an_estimate_not_before_the_stamp() {
    let config = Config::new()
        .failure_threshold(1)
        .open_for(1_000)
        .check::<W64>()
        .unwrap();
    let s = config.time_shift();
    let open = Snapshot {
        state: State::Open {
            since: 5_000 >> s,
            trips: 1,
        },
        counter: 1,
    }
    .encode::<W64>();
    assert_eq!(shared_status(&config, open, Some(5_500)), Status::Open);
    assert_eq!(
        shared_status(&config, open, Some(6_500)),
        Status::HalfOpen,
        "its open time over at the estimate"
    );
    // No estimate, or one before the stamp (the server's clock read the
    // stamp later): the state the word holds.
    assert_eq!(shared_status(&config, open, None), Status::Open);
    assert!(before_stamp(
        &config,
        Ok(Snapshot::decode::<W64>(open).unwrap()),
        4_000
    ));
    assert_eq!(shared_status(&config, open, Some(4_000)), Status::Open);
    let closed = Snapshot {
        state: State::Closed { failures: 0 },
        counter: 1,
    }
    .encode::<W64>();
    assert_eq!(shared_status(&config, closed, None), Status::Closed);
}

/// The shared word's health: what it counts, at the estimate, with the
/// wait of the rejection an admission would get then; no wait without a
/// usable estimate.
#[test]
fn the_shared_health_reads_the_word_at_the_estimate() {
    let config = Config::new()
        .failure_threshold(3)
        .open_for(1_000)
        .check::<W64>()
        .unwrap();
    let s = config.time_shift();
    let failing = word(State::Closed { failures: 2 });
    let h = shared_health(&config, failing, Some(1_000));
    assert_eq!(
        (h.status, h.counter, h.failures),
        (Status::Closed, Some(9), 2)
    );
    assert!(!h.is_blank(), "it counts failures");
    assert!(shared_health(&config, closed(4), None).is_blank());
    let open = Snapshot {
        state: State::Open {
            since: 5_000 >> s,
            trips: 2,
        },
        counter: 1,
    }
    .encode::<W64>();
    let h = shared_health(&config, open, Some(5_500));
    assert_eq!((h.status, h.trips, h.forced), (Status::Open, 2, false));
    let wait = h.retry_after.expect("a rejection's wait");
    assert!(wait > 0 && wait <= 2_000, "{wait}");
    // No estimate, or one before the stamp: the state as held, no wait.
    for now in [None, Some(4_000)] {
        let h = shared_health(&config, open, now);
        assert_eq!((h.status, h.retry_after), (Status::Open, None), "{now:?}");
    }
    let until = word(State::OpenUntil {
        until: 9_000 >> s,
        trips: 1,
    });
    let h = shared_health(&config, until, Some(8_000));
    assert_eq!((h.status, h.forced), (Status::Open, false));
    assert!(
        h.retry_after
            .is_some_and(|w| w > 0 && w <= 1_000 + (1 << s))
    );
    let h = shared_health(&config, word(State::ForcedOpen), Some(8_000));
    assert_eq!(
        (h.status, h.forced, h.retry_after),
        (Status::Open, true, None)
    );
    // Corrupt: its status, nothing counted (spec I8).
    assert!(shared_health(&config, unreadable(), Some(1)).is_blank());
}

/// A follower's rejection takes its wait from the kit's own rejection of
/// the word: the kit rejects each state with the cause the follower gives
/// it, whatever the time.
#[test]
fn the_kit_rejects_each_held_state_with_the_followers_cause() {
    let config = Config::new()
        .failure_threshold(2)
        .open_for(1_000)
        .exponential_backoff(8_000)
        .probe_timeout(500)
        .check::<W64>()
        .unwrap();
    let s = config.time_shift();
    let states = [
        (
            State::Open {
                since: 100 >> s,
                trips: 2,
            },
            Cause::Open,
        ),
        (
            State::OpenUntil {
                until: 3_000 >> s,
                trips: 1,
            },
            Cause::Open,
        ),
        (State::HalfOpen { trips: 1 }, Cause::Open),
        (
            State::Probing {
                since: 100 >> s,
                trips: 1,
            },
            Cause::Probing,
        ),
        (State::ForcedOpen, Cause::ForcedOpen),
    ];
    let mut rejected = 0;
    for (state, cause) in states {
        let word = Snapshot { state, counter: 4 }.encode::<W64>();
        for now in (0..20_000).step_by(50) {
            let step = transition::apply(&config, word, Event::Admit, || now);
            if let Verdict::Rejected(why) = step.verdict {
                assert_eq!(why.cause(), cause, "{state:?} at {now}");
                rejected += 1;
            }
            let held = fleet_holds(&config, word, Some(now)).unwrap();
            assert_eq!(held.cause(), cause, "{state:?} at {now}");
        }
    }
    assert!(
        rejected > 400,
        "the held states reject for most of the range"
    );
}

#[test]
fn a_follower_reports_the_fleets_hold_as_its_status() {
    let config = ValidConfig::new(crate::DEFAULT_CONFIG);
    let word = |state| Snapshot { state, counter: 2 }.encode::<W64>();
    assert_eq!(
        follower_status(&config, word(State::Closed { failures: 1 })),
        None
    );
    assert_eq!(
        follower_status(&config, word(State::Probing { since: 1, trips: 1 })),
        Some(Status::Probing)
    );
    for held in [
        State::Open { since: 1, trips: 1 },
        State::HalfOpen { trips: 1 },
        State::ForcedOpen,
    ] {
        assert_eq!(
            follower_status(&config, word(held)),
            Some(Status::Open),
            "{held:?}"
        );
    }
    assert_eq!(
        follower_status(&config, unreadable()),
        None,
        "an unreadable word"
    );
}
