//! One test per row of the transition table in `docs/design.md`, each run on
//! both word widths.

use super::*;
use crate::word::{Corruption, Snapshot, State, W32, W64};
use core::cell::Cell;

const N: u32 = 3;
const OPEN_FOR: u64 = 100;
const PROBE_TIMEOUT: u64 = 50;

fn config() -> Config {
    Config::new()
        .failure_threshold(N)
        .open_for(OPEN_FOR)
        .probe_timeout(PROBE_TIMEOUT)
}

fn word<W: Word>(state: State, counter: u32) -> W::Raw {
    Snapshot { state, counter }.encode::<W>()
}

fn snap<W: Word>(raw: W::Raw) -> Snapshot {
    Snapshot::decode::<W>(raw).expect("valid word")
}

/// Applies `event` at time `now`, returning the step and how often the clock
/// was read.
fn step<W: Word>(config: &Config, raw: W::Raw, event: Event, now: u64) -> (Step<W::Raw>, u32) {
    let reads = Cell::new(0);
    let step = apply::<W>(config, raw, event, || {
        reads.set(reads.get() + 1);
        now
    });
    (step, reads.get())
}

fn t(from: Phase, to: Phase, counter: u32) -> Transition {
    Transition { from, to, counter }
}

fn transitions<R>(s: &Step<R>) -> [Option<Transition>; 2] {
    let mut out = [None, None];
    for (slot, tr) in out.iter_mut().zip(s.transitions) {
        *slot = Some(tr);
    }
    out
}

macro_rules! both_widths {
    ($($name:ident),* $(,)?) => {
        mod w64 { $( #[test] fn $name() { super::$name::<crate::word::W64>(); } )* }
        mod w32 { $( #[test] fn $name() { super::$name::<crate::word::W32>(); } )* }
    };
}

both_widths!(
    closed_admit_writes_nothing_reads_no_clock,
    closed_success_without_failures_writes_nothing,
    closed_success_resets_failures_without_transition,
    closed_ignored_changes_nothing,
    closed_failure_below_threshold_counts,
    closed_nth_failure_trips,
    stale_release_changes_nothing_in_every_state,
    open_admit_before_elapsed_rejects,
    open_admit_at_elapsed_elects_probe_in_one_step,
    half_open_admit_elects_probe,
    probing_admit_rejects_until_timeout,
    probing_admit_after_timeout_elects_new_probe,
    probe_release_after_timeout_is_stale,
    probe_success_closes_and_resets_trips,
    probe_failure_reopens_with_more_trips,
    probe_ignored_returns_to_half_open,
    releases_matching_non_ticket_states_are_stale,
    forced_open_rejects_forever,
    force_open_from_every_state,
    force_open_twice_writes_nothing,
    force_close_from_every_state,
    status_lapses_open_and_probing,
    status_elsewhere_writes_nothing,
    corrupt_words_fail_open_and_are_reported,
    closed_over_threshold_is_corrupt,
    backoff_doubles_per_consecutive_trip,
    trips_saturate,
    counter_wraps_to_zero,
    clock_wrap_and_backward_jump,
    every_output_word_decodes,
);

fn closed_admit_writes_nothing_reads_no_clock<W: Word>() {
    let raw = word::<W>(State::Closed { failures: 2 }, 7);
    let (s, reads) = step::<W>(&config(), raw, Event::Admit, 0);
    assert_eq!(s.word, raw);
    assert_eq!(reads, 0, "I9: no clock read on a closed admission");
    assert_eq!(
        s.verdict,
        Verdict::Admitted {
            counter: 7,
            probe: false
        }
    );
    assert!(s.transitions.is_empty());
    assert_eq!(s.repaired, None);
}

fn closed_success_without_failures_writes_nothing<W: Word>() {
    let raw = word::<W>(State::Closed { failures: 0 }, 7);
    let release = Event::Release {
        counter: 7,
        outcome: Outcome::Success,
    };
    let (s, reads) = step::<W>(&config(), raw, release, 0);
    assert_eq!((s.word, reads, s.verdict), (raw, 0, Verdict::Recorded));
}

fn closed_success_resets_failures_without_transition<W: Word>() {
    let raw = word::<W>(State::Closed { failures: 2 }, 7);
    let release = Event::Release {
        counter: 7,
        outcome: Outcome::Success,
    };
    let (s, reads) = step::<W>(&config(), raw, release, 0);
    assert_eq!(reads, 0);
    assert_eq!(s.verdict, Verdict::Recorded);
    assert!(s.transitions.is_empty());
    assert_eq!(
        snap::<W>(s.word),
        Snapshot {
            state: State::Closed { failures: 0 },
            counter: 7
        }
    );
}

fn closed_ignored_changes_nothing<W: Word>() {
    let raw = word::<W>(State::Closed { failures: 2 }, 7);
    let release = Event::Release {
        counter: 7,
        outcome: Outcome::Ignored,
    };
    let (s, reads) = step::<W>(&config(), raw, release, 0);
    assert_eq!((s.word, reads, s.verdict), (raw, 0, Verdict::Recorded));
}

fn closed_failure_below_threshold_counts<W: Word>() {
    let raw = word::<W>(State::Closed { failures: 1 }, 7);
    let release = Event::Release {
        counter: 7,
        outcome: Outcome::Failure,
    };
    let (s, reads) = step::<W>(&config(), raw, release, 0);
    assert_eq!(reads, 0);
    assert!(s.transitions.is_empty());
    assert_eq!(snap::<W>(s.word).state, State::Closed { failures: 2 });
    assert_eq!(snap::<W>(s.word).counter, 7);
}

fn closed_nth_failure_trips<W: Word>() {
    let raw = word::<W>(State::Closed { failures: N - 1 }, 7);
    let release = Event::Release {
        counter: 7,
        outcome: Outcome::Failure,
    };
    let (s, reads) = step::<W>(&config(), raw, release, 1234);
    assert_eq!(reads, 1);
    assert_eq!(s.verdict, Verdict::Recorded);
    assert_eq!(
        snap::<W>(s.word),
        Snapshot {
            state: State::Open {
                since: 1234,
                trips: 1
            },
            counter: 8
        }
    );
    assert_eq!(
        transitions(&s),
        [Some(t(Phase::Closed, Phase::Open, 8)), None]
    );
}

fn stale_release_changes_nothing_in_every_state<W: Word>() {
    let states = [
        State::Closed { failures: N - 1 },
        State::Open { since: 0, trips: 1 },
        State::HalfOpen { trips: 1 },
        State::Probing { since: 0, trips: 1 },
        State::ForcedOpen,
    ];
    for state in states {
        let raw = word::<W>(state, 7);
        for counter in [6, 8, 0, W::LAYOUT.max_counter()] {
            for outcome in [Outcome::Success, Outcome::Failure, Outcome::Ignored] {
                let (s, _) = step::<W>(&config(), raw, Event::Release { counter, outcome }, 10);
                assert_eq!(s.word, raw, "I2: {state:?} {counter} {outcome:?}");
                assert_eq!(s.verdict, Verdict::Stale);
                assert!(s.transitions.is_empty());
            }
        }
    }
}

fn open_admit_before_elapsed_rejects<W: Word>() {
    let raw = word::<W>(
        State::Open {
            since: 1000,
            trips: 1,
        },
        4,
    );
    for now in [1000, 1001, 1000 + OPEN_FOR - 1] {
        let (s, reads) = step::<W>(&config(), raw, Event::Admit, now);
        assert_eq!(
            (s.word, s.verdict, reads),
            (raw, Verdict::Rejected, 1),
            "I4 at {now}"
        );
    }
}

fn open_admit_at_elapsed_elects_probe_in_one_step<W: Word>() {
    let raw = word::<W>(
        State::Open {
            since: 1000,
            trips: 2,
        },
        4,
    );
    let now = 1000 + OPEN_FOR;
    let (s, reads) = step::<W>(&config(), raw, Event::Admit, now);
    assert_eq!(reads, 1, "one clock read serves both transitions");
    assert_eq!(
        s.verdict,
        Verdict::Admitted {
            counter: 6,
            probe: true
        }
    );
    assert_eq!(
        snap::<W>(s.word),
        Snapshot {
            state: State::Probing {
                since: now,
                trips: 2
            },
            counter: 6
        }
    );
    assert_eq!(
        transitions(&s),
        [
            Some(t(Phase::Open, Phase::HalfOpen, 5)),
            Some(t(Phase::HalfOpen, Phase::Probing, 6))
        ]
    );
    // I1: from the new word, nobody else is admitted.
    let (again, _) = step::<W>(&config(), s.word, Event::Admit, now);
    assert_eq!(again.verdict, Verdict::Rejected);
}

fn half_open_admit_elects_probe<W: Word>() {
    let raw = word::<W>(State::HalfOpen { trips: 1 }, 9);
    let (s, reads) = step::<W>(&config(), raw, Event::Admit, 77);
    assert_eq!(reads, 1);
    assert_eq!(
        s.verdict,
        Verdict::Admitted {
            counter: 10,
            probe: true
        }
    );
    assert_eq!(
        snap::<W>(s.word).state,
        State::Probing {
            since: 77,
            trips: 1
        }
    );
    assert_eq!(
        transitions(&s),
        [Some(t(Phase::HalfOpen, Phase::Probing, 10)), None]
    );
}

fn probing_admit_rejects_until_timeout<W: Word>() {
    let raw = word::<W>(
        State::Probing {
            since: 500,
            trips: 1,
        },
        9,
    );
    for now in [500, 500 + PROBE_TIMEOUT - 1] {
        let (s, _) = step::<W>(&config(), raw, Event::Admit, now);
        assert_eq!((s.word, s.verdict), (raw, Verdict::Rejected));
    }
}

fn probing_admit_after_timeout_elects_new_probe<W: Word>() {
    let raw = word::<W>(
        State::Probing {
            since: 500,
            trips: 1,
        },
        9,
    );
    let now = 500 + PROBE_TIMEOUT;
    let (s, _) = step::<W>(&config(), raw, Event::Admit, now);
    assert_eq!(
        s.verdict,
        Verdict::Admitted {
            counter: 11,
            probe: true
        }
    );
    assert_eq!(
        transitions(&s),
        [
            Some(t(Phase::Probing, Phase::HalfOpen, 10)),
            Some(t(Phase::HalfOpen, Phase::Probing, 11))
        ]
    );
    // The slow probe (counter 9) is now stale.
    let late = Event::Release {
        counter: 9,
        outcome: Outcome::Success,
    };
    let (s2, _) = step::<W>(&config(), s.word, late, now + 1);
    assert_eq!((s2.word, s2.verdict), (s.word, Verdict::Stale));
}

fn probe_release_after_timeout_is_stale<W: Word>() {
    let raw = word::<W>(
        State::Probing {
            since: 500,
            trips: 3,
        },
        9,
    );
    for outcome in [Outcome::Success, Outcome::Failure, Outcome::Ignored] {
        let release = Event::Release {
            counter: 9,
            outcome,
        };
        let (s, _) = step::<W>(&config(), raw, release, 500 + PROBE_TIMEOUT);
        assert_eq!(s.verdict, Verdict::Stale);
        assert_eq!(
            snap::<W>(s.word),
            Snapshot {
                state: State::HalfOpen { trips: 3 },
                counter: 10
            }
        );
        assert_eq!(
            transitions(&s),
            [Some(t(Phase::Probing, Phase::HalfOpen, 10)), None]
        );
    }
}

fn probe_success_closes_and_resets_trips<W: Word>() {
    let raw = word::<W>(
        State::Probing {
            since: 500,
            trips: 3,
        },
        9,
    );
    let release = Event::Release {
        counter: 9,
        outcome: Outcome::Success,
    };
    let (s, _) = step::<W>(&config(), raw, release, 500 + PROBE_TIMEOUT - 1);
    assert_eq!(s.verdict, Verdict::Recorded);
    assert_eq!(
        snap::<W>(s.word),
        Snapshot {
            state: State::Closed { failures: 0 },
            counter: 10
        }
    );
    assert_eq!(
        transitions(&s),
        [Some(t(Phase::Probing, Phase::Closed, 10)), None]
    );
}

fn probe_failure_reopens_with_more_trips<W: Word>() {
    let raw = word::<W>(
        State::Probing {
            since: 500,
            trips: 3,
        },
        9,
    );
    let release = Event::Release {
        counter: 9,
        outcome: Outcome::Failure,
    };
    let (s, _) = step::<W>(&config(), raw, release, 520);
    assert_eq!(s.verdict, Verdict::Recorded);
    assert_eq!(
        snap::<W>(s.word),
        Snapshot {
            state: State::Open {
                since: 520,
                trips: 4
            },
            counter: 10
        }
    );
    assert_eq!(
        transitions(&s),
        [Some(t(Phase::Probing, Phase::Open, 10)), None]
    );
}

fn probe_ignored_returns_to_half_open<W: Word>() {
    let raw = word::<W>(
        State::Probing {
            since: 500,
            trips: 3,
        },
        9,
    );
    let release = Event::Release {
        counter: 9,
        outcome: Outcome::Ignored,
    };
    let (s, _) = step::<W>(&config(), raw, release, 520);
    assert_eq!(s.verdict, Verdict::Recorded);
    assert_eq!(
        snap::<W>(s.word),
        Snapshot {
            state: State::HalfOpen { trips: 3 },
            counter: 10
        }
    );
}

fn releases_matching_non_ticket_states_are_stale<W: Word>() {
    for state in [
        State::Open { since: 0, trips: 1 },
        State::HalfOpen { trips: 1 },
        State::ForcedOpen,
    ] {
        let raw = word::<W>(state, 9);
        for outcome in [Outcome::Success, Outcome::Failure, Outcome::Ignored] {
            let (s, _) = step::<W>(
                &config(),
                raw,
                Event::Release {
                    counter: 9,
                    outcome,
                },
                1,
            );
            assert_eq!((s.word, s.verdict), (raw, Verdict::Stale), "{state:?}");
        }
    }
}

fn forced_open_rejects_forever<W: Word>() {
    let raw = word::<W>(State::ForcedOpen, 3);
    for now in [0, OPEN_FOR, u64::MAX / 2, u64::MAX] {
        let (s, reads) = step::<W>(&config(), raw, Event::Admit, now);
        assert_eq!((s.word, s.verdict, reads), (raw, Verdict::Rejected, 0));
        let (s, _) = step::<W>(&config(), raw, Event::Status, now);
        assert_eq!((s.word, s.verdict), (raw, Verdict::Status(Status::Open)));
    }
}

fn all_states() -> [State; 5] {
    [
        State::Closed { failures: 1 },
        State::Open { since: 5, trips: 2 },
        State::HalfOpen { trips: 2 },
        State::Probing { since: 5, trips: 2 },
        State::ForcedOpen,
    ]
}

fn force_open_from_every_state<W: Word>() {
    for state in all_states().into_iter().filter(|s| *s != State::ForcedOpen) {
        let raw = word::<W>(state, 20);
        let (s, reads) = step::<W>(&config(), raw, Event::ForceOpen, 0);
        assert_eq!(reads, 0);
        assert_eq!(s.verdict, Verdict::Done);
        assert_eq!(
            snap::<W>(s.word),
            Snapshot {
                state: State::ForcedOpen,
                counter: 21
            }
        );
        assert_eq!(
            transitions(&s),
            [Some(t(state.phase(), Phase::ForcedOpen, 21)), None]
        );
    }
}

fn force_open_twice_writes_nothing<W: Word>() {
    let raw = word::<W>(State::ForcedOpen, 20);
    let (s, _) = step::<W>(&config(), raw, Event::ForceOpen, 0);
    assert_eq!((s.word, s.verdict), (raw, Verdict::Done));
    assert!(s.transitions.is_empty());
}

fn force_close_from_every_state<W: Word>() {
    for state in all_states() {
        let raw = word::<W>(state, 20);
        let (s, reads) = step::<W>(&config(), raw, Event::ForceClose, 0);
        assert_eq!(reads, 0);
        assert_eq!(
            snap::<W>(s.word),
            Snapshot {
                state: State::Closed { failures: 0 },
                counter: 21
            },
            "from {state:?}"
        );
        assert_eq!(
            transitions(&s),
            [Some(t(state.phase(), Phase::Closed, 21)), None]
        );
        // Every ticket from before is stale now.
        let old = Event::Release {
            counter: 20,
            outcome: Outcome::Failure,
        };
        assert_eq!(
            step::<W>(&config(), s.word, old, 0).0.verdict,
            Verdict::Stale
        );
    }
}

fn status_lapses_open_and_probing<W: Word>() {
    let open = word::<W>(State::Open { since: 0, trips: 1 }, 2);
    let (s, _) = step::<W>(&config(), open, Event::Status, OPEN_FOR - 1);
    assert_eq!((s.word, s.verdict), (open, Verdict::Status(Status::Open)));
    let (s, _) = step::<W>(&config(), open, Event::Status, OPEN_FOR);
    assert_eq!(s.verdict, Verdict::Status(Status::HalfOpen));
    assert_eq!(snap::<W>(s.word).state, State::HalfOpen { trips: 1 });
    assert_eq!(
        transitions(&s),
        [Some(t(Phase::Open, Phase::HalfOpen, 3)), None]
    );

    let probing = word::<W>(State::Probing { since: 0, trips: 1 }, 2);
    let (s, _) = step::<W>(&config(), probing, Event::Status, PROBE_TIMEOUT - 1);
    assert_eq!(
        (s.word, s.verdict),
        (probing, Verdict::Status(Status::Probing))
    );
    let (s, _) = step::<W>(&config(), probing, Event::Status, PROBE_TIMEOUT);
    assert_eq!(s.verdict, Verdict::Status(Status::HalfOpen));
    assert_eq!(snap::<W>(s.word).counter, 3);
}

fn status_elsewhere_writes_nothing<W: Word>() {
    for (state, status) in [
        (State::Closed { failures: 2 }, Status::Closed),
        (State::HalfOpen { trips: 1 }, Status::HalfOpen),
        (State::ForcedOpen, Status::Open),
    ] {
        let raw = word::<W>(state, 2);
        let (s, reads) = step::<W>(&config(), raw, Event::Status, 9_999);
        assert_eq!(
            (s.word, s.verdict, reads),
            (raw, Verdict::Status(status), 0)
        );
    }
}

fn corrupt_words_fail_open_and_are_reported<W: Word>() {
    // Tag 5, 6 and 7 with counter 30 are corrupt.
    for tag in 5u64..=7 {
        let raw = W::from_u64(tag | (30 << 3));
        assert_eq!(
            Snapshot::decode::<W>(raw),
            Err(Corruption::UnknownTag(tag as u8))
        );
        let (s, reads) = step::<W>(&config(), raw, Event::Admit, 0);
        assert_eq!(reads, 0);
        assert_eq!(s.repaired, Some(raw), "I8: reported");
        assert_eq!(
            s.verdict,
            Verdict::Admitted {
                counter: 31,
                probe: false
            },
            "I8: fail open"
        );
        assert_eq!(
            snap::<W>(s.word),
            Snapshot {
                state: State::Closed { failures: 0 },
                counter: 31
            }
        );
        // A ticket issued before the corruption cannot count.
        let old = Event::Release {
            counter: 30,
            outcome: Outcome::Failure,
        };
        assert_eq!(step::<W>(&config(), raw, old, 0).0.verdict, Verdict::Stale);
    }
    // All-ones is corrupt in both widths and never panics, for every event.
    let ones = W::from_u64(u64::MAX);
    for event in [
        Event::Admit,
        Event::Status,
        Event::ForceOpen,
        Event::ForceClose,
        Event::Release {
            counter: 0,
            outcome: Outcome::Failure,
        },
    ] {
        let (s, _) = step::<W>(&config(), ones, event, 0);
        assert_eq!(s.repaired, Some(ones));
        assert!(Snapshot::decode::<W>(s.word).is_ok());
    }
}

fn closed_over_threshold_is_corrupt<W: Word>() {
    let raw = word::<W>(State::Closed { failures: N }, 4);
    let (s, _) = step::<W>(&config(), raw, Event::Status, 0);
    assert_eq!(s.repaired, Some(raw));
    assert_eq!(
        snap::<W>(s.word),
        Snapshot {
            state: State::Closed { failures: 0 },
            counter: 5
        }
    );
    assert_eq!(s.verdict, Verdict::Status(Status::Closed));
}

fn backoff_doubles_per_consecutive_trip<W: Word>() {
    let config = config().exponential_backoff(350);
    let mut raw = word::<W>(State::Closed { failures: N - 1 }, 0);
    let mut now = 0;
    let fail = |counter| Event::Release {
        counter,
        outcome: Outcome::Failure,
    };
    raw = step::<W>(&config, raw, fail(0), now).0.word;
    for expected in [100, 200, 350, 350] {
        let State::Open { trips, .. } = snap::<W>(raw).state else {
            panic!("open expected")
        };
        assert_eq!(config.open_duration(trips), expected);
        // Rejected one tick before the backoff elapses, probe at it.
        let (s, _) = step::<W>(&config, raw, Event::Admit, now + expected - 1);
        assert_eq!(s.verdict, Verdict::Rejected);
        now += expected;
        let (s, _) = step::<W>(&config, raw, Event::Admit, now);
        let Verdict::Admitted {
            counter,
            probe: true,
        } = s.verdict
        else {
            panic!("probe expected")
        };
        raw = step::<W>(&config, s.word, fail(counter), now).0.word;
    }
    // A successful probe resets the trip count: the next trip is short again.
    let (s, _) = step::<W>(&config, raw, Event::Admit, now + 350);
    let Verdict::Admitted { counter, .. } = s.verdict else {
        panic!()
    };
    let success = Event::Release {
        counter,
        outcome: Outcome::Success,
    };
    let closed = step::<W>(&config, s.word, success, now + 350).0.word;
    assert_eq!(snap::<W>(closed).state, State::Closed { failures: 0 });
    let c = snap::<W>(closed).counter;
    let mut raw = closed;
    for _ in 0..N {
        raw = step::<W>(&config, raw, fail(c), now + 400).0.word;
    }
    assert_eq!(
        snap::<W>(raw).state,
        State::Open {
            since: (now + 400) & W::LAYOUT.time_mask(),
            trips: 1
        }
    );
}

fn trips_saturate<W: Word>() {
    let max = W::LAYOUT.max_trips();
    let raw = word::<W>(
        State::Probing {
            since: 0,
            trips: max,
        },
        1,
    );
    let release = Event::Release {
        counter: 1,
        outcome: Outcome::Failure,
    };
    let (s, _) = step::<W>(&config(), raw, release, 1);
    assert_eq!(
        snap::<W>(s.word).state,
        State::Open {
            since: 1,
            trips: max
        }
    );
}

fn counter_wraps_to_zero<W: Word>() {
    let max = W::LAYOUT.max_counter();
    let raw = word::<W>(State::Closed { failures: 0 }, max);
    let (s, _) = step::<W>(&config(), raw, Event::ForceOpen, 0);
    assert_eq!(
        snap::<W>(s.word).counter,
        0,
        "I10: forward modulo the width"
    );
    assert_eq!(
        transitions(&s),
        [Some(t(Phase::Closed, Phase::ForcedOpen, 0)), None]
    );
}

fn clock_wrap_and_backward_jump<W: Word>() {
    let mask = W::LAYOUT.time_mask();
    // Tripped just before the u64 clock wraps.
    let trip_at = u64::MAX - 10;
    let raw = word::<W>(State::Closed { failures: N - 1 }, 0);
    let release = Event::Release {
        counter: 0,
        outcome: Outcome::Failure,
    };
    let open = step::<W>(&config(), raw, release, trip_at).0.word;
    // Across the wrap: still rejecting until exactly OPEN_FOR ticks passed.
    let before = trip_at.wrapping_add(OPEN_FOR - 1);
    let at = trip_at.wrapping_add(OPEN_FOR);
    assert!(before < trip_at, "the test straddles the wrap");
    assert_eq!(
        step::<W>(&config(), open, Event::Admit, before).0.verdict,
        Verdict::Rejected
    );
    assert!(matches!(
        step::<W>(&config(), open, Event::Admit, at).0.verdict,
        Verdict::Admitted { probe: true, .. }
    ));
    // Backwards by one tick: fails towards probing (I6).
    assert!(matches!(
        step::<W>(&config(), open, Event::Admit, trip_at - 1)
            .0
            .verdict,
        Verdict::Admitted { probe: true, .. }
    ));
    // Backwards by the whole time range less the open time: still probes.
    let far_back = trip_at.wrapping_sub(mask + 1 - OPEN_FOR);
    assert!(matches!(
        step::<W>(&config(), open, Event::Admit, far_back).0.verdict,
        Verdict::Admitted { probe: true, .. }
    ));
    // Nobody looked for exactly one time range: rejected for at most one
    // more open duration, the documented I6 bound.
    let lap = trip_at.wrapping_add(mask + 1);
    assert_eq!(
        step::<W>(&config(), open, Event::Admit, lap).0.verdict,
        Verdict::Rejected
    );
    assert!(matches!(
        step::<W>(&config(), open, Event::Admit, lap.wrapping_add(OPEN_FOR))
            .0
            .verdict,
        Verdict::Admitted { probe: true, .. }
    ));
}

fn every_output_word_decodes<W: Word>() {
    let events = [
        Event::Admit,
        Event::Status,
        Event::ForceOpen,
        Event::ForceClose,
        Event::Release {
            counter: 20,
            outcome: Outcome::Failure,
        },
        Event::Release {
            counter: 20,
            outcome: Outcome::Success,
        },
    ];
    for state in all_states() {
        for event in events {
            for now in [0, 5, 105, u64::MAX] {
                let (s, _) = step::<W>(&config(), word::<W>(state, 20), event, now);
                assert!(Snapshot::decode::<W>(s.word).is_ok());
                let after = snap::<W>(s.word).counter;
                let moved = (after.wrapping_sub(20)) & W::LAYOUT.max_counter();
                assert_eq!(
                    moved as usize,
                    s.transitions.len(),
                    "I10: one step per change"
                );
            }
        }
    }
}

#[test]
fn transitions_iterate_in_order() {
    let mut ts = Transitions::NONE;
    assert!(ts.is_empty());
    assert_eq!(ts.len(), 0);
    ts.push(t(Phase::Open, Phase::HalfOpen, 1));
    ts.push(t(Phase::HalfOpen, Phase::Probing, 2));
    assert_eq!(ts.len(), 2);
    assert!(!ts.is_empty());
    let v: [Transition; 2] = [ts.iter().next().unwrap(), ts.iter().nth(1).unwrap()];
    assert_eq!(v[0].to, Phase::HalfOpen);
    assert_eq!(v[1].counter, 2);
}

#[test]
fn pure_layer_on_u32_and_u64_agrees_for_small_values() {
    // The same history on both widths yields the same decoded states.
    let c = config();
    let (mut a, mut b) = (0u64, 0u32);
    let events = [
        Event::Release {
            counter: 0,
            outcome: Outcome::Failure,
        },
        Event::Release {
            counter: 0,
            outcome: Outcome::Failure,
        },
        Event::Release {
            counter: 0,
            outcome: Outcome::Failure,
        },
        Event::Admit,
        Event::Status,
    ];
    for (i, e) in events.into_iter().enumerate() {
        let now = 60 * i as u64;
        let sa = apply::<W64>(&c, a, e, || now);
        let sb = apply::<W32>(&c, b, e, || now);
        assert_eq!(sa.verdict, sb.verdict);
        assert_eq!(snap::<W64>(sa.word), snap::<W32>(sb.word));
        (a, b) = (sa.word, sb.word);
    }
}

#[test]
fn backoff_deadline_beyond_32_bits_of_elapsed_time() {
    // W64 keeps 34 bits of time: a second trip with open_for 2^31 doubles to
    // 2^32 ticks, so the deadline test must shift the full elapsed time,
    // not its low 32 bits (the narrow path is for W32 only).
    let config = Config::new()
        .failure_threshold(1)
        .open_for(1 << 31)
        .exponential_backoff(1 << 33)
        .probe_timeout(10);
    let open = word::<W64>(State::Open { since: 0, trips: 2 }, 5);
    let (s, _) = step::<W64>(&config, open, Event::Admit, (1 << 32) - 1);
    assert_eq!(s.verdict, Verdict::Rejected);
    let (s, _) = step::<W64>(&config, open, Event::Admit, 1 << 32);
    assert!(matches!(s.verdict, Verdict::Admitted { probe: true, .. }));
    // The third trip's deadline is the cap, 2^33.
    let open = word::<W64>(State::Open { since: 0, trips: 3 }, 5);
    let (s, _) = step::<W64>(&config, open, Event::Status, (1 << 33) - 1);
    assert_eq!(s.verdict, Verdict::Status(Status::Open));
    let (s, _) = step::<W64>(&config, open, Event::Status, 1 << 33);
    assert_eq!(s.verdict, Verdict::Status(Status::HalfOpen));
}
