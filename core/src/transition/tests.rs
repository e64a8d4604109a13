//! One test per row of the transition table in `docs/design.md`, each run on
//! both word widths, and the arithmetic of time in units at the pure layer.

use super::*;
use crate::config::Config;
use crate::rejected::Cause;
use crate::word::{Corruption, Snapshot, State, W32, W64};
use core::cell::Cell;

const N: u32 = 3;
const OPEN_FOR: u64 = 100;
const PROBE_TIMEOUT: u64 = 50;

/// The table's config. `horizon(0)`: the finest resolution, so that `s = 0`
/// on both widths and every deadline below is an exact tick.
fn config<W: Word>() -> ValidConfig<W> {
    valid(base())
}

fn base() -> Config {
    Config::new()
        .failure_threshold(N)
        .open_for(OPEN_FOR)
        .probe_timeout(PROBE_TIMEOUT)
        .horizon(0)
}

fn valid<W: Word>(c: Config) -> ValidConfig<W> {
    c.check::<W>().expect("valid config")
}

fn word<W: Word>(state: State, counter: u32) -> W::Raw {
    Snapshot { state, counter }.encode::<W>()
}

fn snap<W: Word>(raw: W::Raw) -> Snapshot {
    Snapshot::decode::<W>(raw).expect("valid word")
}

/// Applies `event` at time `now`, returning the step and how often the clock
/// was read.
fn step<W: Word>(
    config: &ValidConfig<W>,
    raw: W::Raw,
    event: Event,
    now: u64,
) -> (Step<W::Raw>, u32) {
    let reads = Cell::new(0);
    let step = apply::<W>(config, raw, event, || {
        reads.set(reads.get() + 1);
        now
    });
    (step, reads.get())
}

/// `status_at` at `now`, with how often it read the clock.
fn status<W: Word>(config: &ValidConfig<W>, raw: W::Raw, now: u64) -> (Status, u32) {
    let reads = Cell::new(0);
    let status = status_at::<W>(config, raw, || {
        reads.set(reads.get() + 1);
        now
    });
    (status, reads.get())
}

/// The report of a change between two phases, written out field by field
/// (the operator-held open reads as `Open` and is flagged `forced`).
fn t(from: Phase, to: Phase, counter: u32) -> Transition {
    let seen = |p: Phase| match p {
        Phase::Closed => Status::Closed,
        Phase::Open | Phase::ForcedOpen => Status::Open,
        Phase::HalfOpen => Status::HalfOpen,
        Phase::Probing => Status::Probing,
        Phase::Recovering => Status::Recovering,
    };
    Transition {
        from: seen(from),
        to: seen(to),
        counter,
        forced: from == Phase::ForcedOpen || to == Phase::ForcedOpen,
    }
}

fn transitions<R>(s: &Step<R>) -> [Option<Transition>; 2] {
    let mut out = [None, None];
    for (slot, tr) in out.iter_mut().zip(s.transitions) {
        *slot = Some(tr);
    }
    out
}

/// The cause and wait of a rejection; panics on any other verdict.
fn rejection(v: Verdict) -> (Cause, Option<u64>) {
    match v {
        Verdict::Rejected(r) => (r.cause(), r.retry_after()),
        other => panic!("a rejection expected, got {other:?}"),
    }
}

/// A wait as `Rejected` holds it: saturated at `2^62 - 1` ticks (`2^30 - 1`
/// on 32-bit targets).
fn held(ticks: u64) -> u64 {
    ticks.min((usize::MAX >> 2) as u64)
}

fn is_probe(v: Verdict) -> bool {
    matches!(v, Verdict::Admitted { probe: true, .. })
}

/// The conversion to units, written independently of the core: the units of
/// `2^s` ticks a duration of `ticks` needs, `(d + 2 (2^s - 1)) >> s`.
fn need(ticks: u64, s: u32) -> u64 {
    (ticks + 2 * ((1u64 << s) - 1)) >> s
}

/// The first tick at which a word stamped at tick `t0` with a duration of
/// `units` units admits: the start of unit `(t0 >> s) + units`.
fn first_admitted(t0: u64, units: u64, s: u32) -> u64 {
    ((t0 >> s) + units) << s
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
    probe_timeout_of_one_tick,
    retry_after_is_exact_with_whole_ticks,
    retry_after_is_the_first_admitted_tick_in_units,
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
        assert_eq!((s.word, reads), (raw, 1), "I4 at {now}");
        assert_eq!(
            rejection(s.verdict),
            (Cause::Open, Some(1000 + OPEN_FOR - now)),
            "I4 at {now}: the wait is the rest of the open time"
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
    // I1: from the new word, nobody else is admitted until the probe times
    // out.
    let (again, _) = step::<W>(&config(), s.word, Event::Admit, now);
    assert_eq!(
        rejection(again.verdict),
        (Cause::Probing, Some(PROBE_TIMEOUT))
    );
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
        let (s, reads) = step::<W>(&config(), raw, Event::Admit, now);
        assert_eq!((s.word, reads), (raw, 1));
        assert_eq!(
            rejection(s.verdict),
            (Cause::Probing, Some(500 + PROBE_TIMEOUT - now))
        );
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
    assert_eq!(
        transitions(&s),
        [Some(t(Phase::Probing, Phase::HalfOpen, 10)), None]
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
        assert_eq!((s.word, reads), (raw, 0));
        assert_eq!(
            rejection(s.verdict),
            (Cause::ForcedOpen, None),
            "no timer ends a forced open"
        );
        assert_eq!(status::<W>(&config(), raw, now), (Status::Open, 0));
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
        // The public shape: the forced open reads as `Open`, flagged.
        assert_eq!(
            transitions(&s)[0],
            Some(Transition {
                from: state.status(),
                to: Status::Open,
                counter: 21,
                forced: true
            })
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
        assert_eq!(
            transitions(&s)[0].map(|t| t.forced),
            Some(state.is_forced_open()),
            "only leaving the forced open is flagged"
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

/// `status_at` is a read: an elapsed `Open` or a timed-out `Probing` reads
/// as `HalfOpen` (one clock read), the word is not an output at all, and the
/// next admission makes the move and reports both changes.
fn status_lapses_open_and_probing<W: Word>() {
    let open = word::<W>(State::Open { since: 0, trips: 1 }, 2);
    assert_eq!(
        status::<W>(&config(), open, OPEN_FOR - 1),
        (Status::Open, 1)
    );
    assert_eq!(
        status::<W>(&config(), open, OPEN_FOR),
        (Status::HalfOpen, 1)
    );
    let (s, _) = step::<W>(&config(), open, Event::Admit, OPEN_FOR);
    assert!(is_probe(s.verdict));
    assert_eq!(
        transitions(&s),
        [
            Some(t(Phase::Open, Phase::HalfOpen, 3)),
            Some(t(Phase::HalfOpen, Phase::Probing, 4))
        ]
    );

    let probing = word::<W>(State::Probing { since: 0, trips: 1 }, 2);
    assert_eq!(
        status::<W>(&config(), probing, PROBE_TIMEOUT - 1),
        (Status::Probing, 1)
    );
    assert_eq!(
        status::<W>(&config(), probing, PROBE_TIMEOUT),
        (Status::HalfOpen, 1)
    );
    let (s, _) = step::<W>(&config(), probing, Event::Admit, PROBE_TIMEOUT);
    assert_eq!(
        s.verdict,
        Verdict::Admitted {
            counter: 4,
            probe: true
        }
    );
    assert_eq!(
        transitions(&s),
        [
            Some(t(Phase::Probing, Phase::HalfOpen, 3)),
            Some(t(Phase::HalfOpen, Phase::Probing, 4))
        ]
    );
}

/// In the untimed states the read needs no clock.
fn status_elsewhere_writes_nothing<W: Word>() {
    for (state, expected) in [
        (State::Closed { failures: 2 }, Status::Closed),
        (State::HalfOpen { trips: 1 }, Status::HalfOpen),
        (State::ForcedOpen, Status::Open),
    ] {
        let raw = word::<W>(state, 2);
        assert_eq!(status::<W>(&config(), raw, 9_999), (expected, 0));
    }
}

fn corrupt_words_fail_open_and_are_reported<W: Word>() {
    // Tags 6 and 7 with counter 30 are corrupt (5 is `OpenUntil`) where
    // the recovery states do not exist; where they do, `HalfOpen` and
    // `ForcedOpen` with a stray top bit.
    let top = 1u64 << (W::LAYOUT.word_bits - 1);
    let words = if crate::word::RECOVERY {
        [
            (2 | top, Corruption::StrayBits),
            (4 | top, Corruption::StrayBits),
        ]
    } else {
        [
            (6, Corruption::UnknownTag(6)),
            (7, Corruption::UnknownTag(7)),
        ]
    };
    for (bits, corruption) in words {
        let raw = W::from_u64(bits | (30 << 3));
        assert_eq!(Snapshot::decode::<W>(raw), Err(corruption));
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
        // A status read of it says what the next operation makes of it.
        assert_eq!(status::<W>(&config(), raw, 0), (Status::Closed, 0));
    }
    // All-ones is corrupt in both widths (a `Trial` where the recovery
    // states exist, with every field at its maximum) and never panics, for
    // every event.
    if crate::word::RECOVERY {
        return;
    }
    let ones = W::from_u64(u64::MAX);
    for event in [
        Event::Admit,
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
    assert_eq!(status::<W>(&config(), ones, 0).0, Status::Closed);
}

fn closed_over_threshold_is_corrupt<W: Word>() {
    let raw = word::<W>(State::Closed { failures: N }, 4);
    assert_eq!(status::<W>(&config(), raw, 0), (Status::Closed, 0));
    let (s, _) = step::<W>(&config(), raw, Event::Admit, 0);
    assert_eq!(s.repaired, Some(raw));
    assert_eq!(
        snap::<W>(s.word),
        Snapshot {
            state: State::Closed { failures: 0 },
            counter: 5
        }
    );
    assert_eq!(
        s.verdict,
        Verdict::Admitted {
            counter: 5,
            probe: false
        }
    );
}

fn backoff_doubles_per_consecutive_trip<W: Word>() {
    let config = valid::<W>(base().exponential_backoff(350));
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
        assert_eq!(rejection(s.verdict), (Cause::Open, Some(1)));
        let (s, _) = step::<W>(&config, raw, Event::Admit, now + 1);
        assert_eq!(rejection(s.verdict), (Cause::Open, Some(expected - 1)));
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
    let (s, _) = step::<W>(&config, raw, Event::Admit, now + 400);
    assert_eq!(rejection(s.verdict), (Cause::Open, Some(100)));
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
    let config = config::<W>();
    assert_eq!(config.time_shift(), 0);
    let ring = config.ring();
    assert_eq!(
        ring,
        W::LAYOUT.time_mask() + 1,
        "s = 0: the ring is the field"
    );
    // Tripped just before the u64 clock wraps.
    let trip_at = u64::MAX - 10;
    let raw = word::<W>(State::Closed { failures: N - 1 }, 0);
    let release = Event::Release {
        counter: 0,
        outcome: Outcome::Failure,
    };
    let open = step::<W>(&config, raw, release, trip_at).0.word;
    // Across the wrap: still rejecting until exactly OPEN_FOR ticks passed.
    let before = trip_at.wrapping_add(OPEN_FOR - 1);
    let at = trip_at.wrapping_add(OPEN_FOR);
    assert!(before < trip_at, "the test straddles the wrap");
    assert_eq!(
        rejection(step::<W>(&config, open, Event::Admit, before).0.verdict),
        (Cause::Open, Some(1))
    );
    assert!(is_probe(
        step::<W>(&config, open, Event::Admit, at).0.verdict
    ));
    // Backwards by one tick: fails towards probing (I6).
    assert!(is_probe(
        step::<W>(&config, open, Event::Admit, trip_at - 1)
            .0
            .verdict
    ));
    // Backwards by the whole ring less the open time: still probes.
    let far_back = trip_at.wrapping_sub(ring - OPEN_FOR);
    assert!(is_probe(
        step::<W>(&config, open, Event::Admit, far_back).0.verdict
    ));
    // Nobody looked for exactly one ring: rejected for at most one more
    // open duration, the documented I6 bound.
    let lap = trip_at.wrapping_add(ring);
    assert_eq!(
        rejection(step::<W>(&config, open, Event::Admit, lap).0.verdict),
        (Cause::Open, Some(OPEN_FOR))
    );
    assert!(is_probe(
        step::<W>(&config, open, Event::Admit, lap.wrapping_add(OPEN_FOR))
            .0
            .verdict
    ));
}

fn every_output_word_decodes<W: Word>() {
    let events = [
        Event::Admit,
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
        Event::Release {
            counter: 20,
            outcome: Outcome::Ignored,
        },
    ];
    for c in [config::<W>(), coarse::<W>(base())] {
        for state in all_states() {
            for event in events {
                for now in [0, 5, 105, u64::MAX] {
                    let (s, _) = step::<W>(&c, word::<W>(state, 20), event, now);
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
}

/// The table's durations on a coarse clock: `s > 0` on both widths (`W32`
/// at its default horizon, `W64` asked for a horizon of 2^40 ticks).
fn coarse<W: Word>(c: Config) -> ValidConfig<W> {
    let c = if W::LAYOUT.word_bits == 32 {
        c.horizon(W32::LAYOUT.default_horizon())
    } else {
        c.horizon(1 << 40)
    };
    let v = valid::<W>(c);
    assert!(v.time_shift() > 0, "{v:?}");
    v
}

/// Under Miri, sweeps visit every `stride`-th tick (and both ends).
const STRIDE: u64 = if cfg!(miri) { 97 } else { 1 };

/// A probe timeout of a single tick. With `s = 0` the probe is
/// current at the tick it was elected and timed out at the next; with
/// `s > 0` it lasts at least 1 tick and less than `1 + 3 * 2^s` ticks, its
/// end exactly where the units say.
fn probe_timeout_of_one_tick<W: Word>() {
    for c in [
        valid::<W>(base().probe_timeout(1)),
        coarse::<W>(base().probe_timeout(1)),
    ] {
        let s = c.time_shift();
        let unit = 1u64 << s;
        assert_eq!(c.probe_timeout(), 1);
        let start = 700 << s;
        for t0 in [start, start + 1, start + unit / 2, start + unit - 1] {
            let probing = word::<W>(
                State::Probing {
                    since: (t0 >> s) & W::LAYOUT.time_mask(),
                    trips: 1,
                },
                9,
            );
            let end = first_admitted(t0, need(1, s), s);
            assert!(
                end > t0 && end < t0 + 1 + 3 * unit,
                "s {s} t0 {t0} end {end}"
            );
            if s == 0 {
                assert_eq!(end, t0 + 1);
            }
            // Nobody else at the tick of the election; the wait is exact.
            let (s0, _) = step::<W>(&c, probing, Event::Admit, t0);
            assert_eq!(rejection(s0.verdict), (Cause::Probing, Some(end - t0)));
            let (s1, _) = step::<W>(&c, probing, Event::Admit, end - 1);
            assert_eq!(rejection(s1.verdict), (Cause::Probing, Some(1)));
            // The probe reporting before its end counts.
            let report = Event::Release {
                counter: 9,
                outcome: Outcome::Success,
            };
            let (r, _) = step::<W>(&c, probing, report, end - 1);
            assert_eq!(r.verdict, Verdict::Recorded);
            assert_eq!(snap::<W>(r.word).state, State::Closed { failures: 0 });
            // At its end a new probe is elected, and the old report is stale.
            let (e, _) = step::<W>(&c, probing, Event::Admit, end);
            assert_eq!(
                e.verdict,
                Verdict::Admitted {
                    counter: 11,
                    probe: true
                }
            );
            let (late, _) = step::<W>(&c, probing, report, end);
            assert_eq!(late.verdict, Verdict::Stale);
            assert_eq!(
                snap::<W>(late.word),
                Snapshot {
                    state: State::HalfOpen { trips: 1 },
                    counter: 10
                }
            );
        }
    }
}

/// The durations a word in `state` waits for under `c`, in ticks as
/// configured and in units as the word counts them
/// (`min(need(cap), need(open_for) << (trips - 1))`, from the config's ticks).
fn durations<W: Word>(c: &ValidConfig<W>, state: State) -> (u64, u64) {
    let s = c.time_shift();
    match state {
        State::Open { trips, .. } => {
            let base = need(c.open_for(), s);
            let k = trips.clamp(1, W::LAYOUT.max_trips()) - 1;
            let units = match c.backoff_cap() {
                None => base,
                Some(cap) => need(cap, s).min(base << k),
            };
            (c.open_duration(trips), units)
        }
        State::Probing { .. } => (c.probe_timeout(), need(c.probe_timeout(), s)),
        other => unreachable!("{other:?} has no timer"),
    }
}

fn timed_states<W: Word>(since: u64) -> [State; 6] {
    let max = W::LAYOUT.max_trips();
    [
        State::Open { since, trips: 1 },
        State::Open { since, trips: 2 },
        State::Open { since, trips: 3 },
        State::Open { since, trips: 5 },
        State::Open { since, trips: max },
        State::Probing { since, trips: 2 },
    ]
}

fn cause_of(state: State) -> Cause {
    match state {
        State::Open { .. } => Cause::Open,
        State::Probing { .. } => Cause::Probing,
        _ => Cause::ForcedOpen,
    }
}

/// `Rejected::retry_after`, whole ticks (`s = 0`): the wait is
/// exactly `deadline - now`, the deadline `since + open_duration(trips)` (or
/// `since + probe_timeout`), with and without backoff; `None` when forced.
fn retry_after_is_exact_with_whole_ticks<W: Word>() {
    let since = 1_000;
    for c in [
        config::<W>(),
        valid::<W>(base().exponential_backoff(1_600)),
        valid::<W>(
            base()
                .open_for(1)
                .probe_timeout(1)
                .exponential_backoff(1 << 14),
        ),
    ] {
        assert_eq!(c.time_shift(), 0);
        for state in timed_states::<W>(since) {
            let raw = word::<W>(state, 9);
            let (d, units) = durations(&c, state);
            assert_eq!(units, d, "s = 0: units are ticks");
            let deadline = since + d;
            let mut now = since;
            while now < deadline {
                let (s, reads) = step::<W>(&c, raw, Event::Admit, now);
                assert_eq!((s.word, reads), (raw, 1));
                assert_eq!(
                    rejection(s.verdict),
                    (cause_of(state), Some(held(deadline - now))),
                    "{state:?} at {now}"
                );
                now = if now + STRIDE < deadline || now + 1 == deadline {
                    now + STRIDE
                } else {
                    deadline - 1
                };
            }
            assert!(is_probe(
                step::<W>(&c, raw, Event::Admit, deadline).0.verdict
            ));
        }
        let forced = word::<W>(State::ForcedOpen, 9);
        for now in [0, since, u64::MAX] {
            let (s, _) = step::<W>(&c, forced, Event::Admit, now);
            assert_eq!(rejection(s.verdict), (Cause::ForcedOpen, None));
        }
    }
}

/// `Rejected::retry_after`, in units (`s > 0`): `now +
/// retry_after` is exactly the first tick the word admits at (a retry then
/// succeeds, one tick earlier it is rejected with a wait of 1), and that tick
/// is never early: at least the configured duration after any tick of the
/// unit the word was stamped in. It is less than `3 * 2^s` ticks late for
/// a configured duration (open time, probe timeout, cap); a doubled open
/// time doubles the rounding of `open_for` with it (`3 * 2^s * 2^(trips-1)`).
fn retry_after_is_the_first_admitted_tick_in_units<W: Word>() {
    for c in [
        coarse::<W>(base()),
        coarse::<W>(base().exponential_backoff(1_600)),
        coarse::<W>(
            base()
                .open_for(1)
                .probe_timeout(1)
                .exponential_backoff(1 << 14),
        ),
    ] {
        let s = c.time_shift();
        let unit = 1u64 << s;
        let start = 1_000 << s;
        for off in [0, 1, unit / 2, unit - 1] {
            let t0 = start + off;
            let since = (t0 >> s) & W::LAYOUT.time_mask();
            for state in timed_states::<W>(since) {
                let raw = word::<W>(state, 9);
                let (d, units) = durations(&c, state);
                let at = first_admitted(t0, units, s);
                // Never early, whichever tick of its unit the stamp was
                // taken at.
                assert!(at - (start + unit - 1) >= d, "{state:?}: {at} early");
                let doublings = match state {
                    State::Open { trips, .. } if units < need(c.backoff_cap().unwrap_or(0), s) => {
                        trips.clamp(1, W::LAYOUT.max_trips()) - 1
                    }
                    _ => 0,
                };
                assert!(
                    at - start < d + ((3 * unit) << doublings),
                    "{state:?}: {at} late by more than the rounding"
                );
                let mut now = t0;
                while now < at {
                    let (st, reads) = step::<W>(&c, raw, Event::Admit, now);
                    assert_eq!((st.word, reads), (raw, 1));
                    let (cause, wait) = rejection(st.verdict);
                    assert_eq!(cause, cause_of(state));
                    assert_eq!(now + wait.unwrap(), at, "{state:?} t0 {t0} at {now}");
                    now = if now + STRIDE < at || now + 1 == at {
                        now + STRIDE
                    } else {
                        at - 1
                    };
                }
                let (st, _) = step::<W>(&c, raw, Event::Admit, at - 1);
                assert_eq!(rejection(st.verdict), (cause_of(state), Some(1)));
                assert!(is_probe(step::<W>(&c, raw, Event::Admit, at).0.verdict));
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
    assert_eq!(v[0].to, Status::HalfOpen);
    assert_eq!(v[1].counter, 2);
    let mut seen = std::vec::Vec::new();
    ts.each(|t| seen.push(t));
    assert_eq!(seen, v);
}

/// `Transitions` is an exact-size, fused, double-ended iterator, and
/// iterating a copy (`iter`, `&ts`) leaves it as it was.
#[test]
fn transitions_are_an_exact_size_fused_iterator() {
    let (a, b) = (
        t(Phase::Open, Phase::HalfOpen, 1),
        t(Phase::HalfOpen, Phase::Probing, 2),
    );
    let mut two = Transitions::NONE;
    two.push(a);
    two.push(b);

    let mut ts = two;
    assert_eq!(ts.size_hint(), (2, Some(2)));
    assert_eq!(ts.next(), Some(a));
    assert_eq!((ts.len(), ts.is_empty()), (1, false));
    assert_eq!(ts.size_hint(), (1, Some(1)));
    assert_eq!(ts.next(), Some(b));
    assert_eq!((ts.len(), ts.is_empty()), (0, true));
    for _ in 0..3 {
        assert_eq!(ts.next(), None, "fused");
        assert_eq!(ts.next_back(), None, "fused");
    }
    // Exhausted, it is the empty value: equality sees only what is left.
    assert_eq!(ts, Transitions::NONE);

    let mut one = Transitions::NONE;
    one.push(b);
    let mut ts = two;
    ts.next();
    assert_eq!(ts, one, "advanced past `a`, only `b` is left");

    let mut ts = two;
    assert_eq!(ts.next_back(), Some(b));
    assert_eq!(ts.len(), 1);
    assert_eq!(ts.next_back(), Some(a));
    assert_eq!(ts.next_back(), None);
    let mut ts = two;
    assert_eq!(
        (ts.next(), ts.next_back(), ts.next()),
        (Some(a), Some(b), None)
    );

    assert_eq!(two.rev().collect::<std::vec::Vec<_>>(), [b, a]);
    assert_eq!(two.count(), 2);
    assert_eq!(two.max_by_key(|t| t.counter), Some(b));
    let mut seen = std::vec::Vec::new();
    for t in &two {
        seen.push(t);
    }
    for t in two.iter() {
        seen.push(t);
    }
    seen.extend(two);
    assert_eq!(seen, [a, b, a, b, a, b]);
    assert_eq!(two.len(), 2, "iterating copies does not advance it");
    assert_eq!(Transitions::NONE.len(), 0);
    assert_eq!(Transitions::NONE.into_iter().next(), None);
}

#[test]
fn pure_layer_on_u32_and_u64_agrees_for_small_values() {
    // The same history on both widths yields the same decoded states (both
    // at s = 0, so the stored time is the same number).
    let (c64, c32) = (config::<W64>(), config::<W32>());
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
        Event::Admit,
        Event::Admit,
    ];
    for (i, e) in events.into_iter().enumerate() {
        let now = 60 * i as u64;
        let sa = apply::<W64>(&c64, a, e, || now);
        let sb = apply::<W32>(&c32, b, e, || now);
        assert_eq!(sa.verdict, sb.verdict, "event {i}");
        assert_eq!(snap::<W64>(sa.word), snap::<W32>(sb.word));
        assert_eq!(
            status_at::<W64>(&c64, sa.word, || now),
            status_at::<W32>(&c32, sb.word, || now)
        );
        (a, b) = (sa.word, sb.word);
    }
}

#[test]
fn backoff_deadline_beyond_32_bits_of_elapsed_time() {
    // W64 keeps 34 bits of time: a second trip with open_for 2^31 doubles to
    // 2^32 ticks, so the deadline test must shift the full elapsed time,
    // not its low 32 bits (the narrow path is for W32 only).
    let config = valid::<W64>(
        Config::new()
            .failure_threshold(1)
            .open_for(1 << 31)
            .exponential_backoff(1 << 33)
            .probe_timeout(10),
    );
    assert_eq!(config.time_shift(), 0);
    let open = word::<W64>(State::Open { since: 0, trips: 2 }, 5);
    let (s, _) = step::<W64>(&config, open, Event::Admit, (1 << 32) - 1);
    assert_eq!(rejection(s.verdict), (Cause::Open, Some(1)));
    let (s, _) = step::<W64>(&config, open, Event::Admit, 0);
    assert_eq!(rejection(s.verdict), (Cause::Open, Some(held(1 << 32))));
    let (s, _) = step::<W64>(&config, open, Event::Admit, 1 << 32);
    assert!(is_probe(s.verdict));
    // The third trip's deadline is the cap, 2^33.
    let open = word::<W64>(State::Open { since: 0, trips: 3 }, 5);
    assert_eq!(
        status::<W64>(&config, open, (1 << 33) - 1),
        (Status::Open, 1)
    );
    assert_eq!(status::<W64>(&config, open, 1 << 33), (Status::HalfOpen, 1));
}

// The rows of `Event::FailureFor`, `Event::ForceOpenFor` and the
// `OpenUntil` state.

mod open_until_rows {
    use super::*;
    both_widths!(
        failure_for_at_threshold_opens_until_now_plus_hint,
        failure_for_below_threshold_counts_as_a_failure,
        failure_for_stale_reads_no_clock,
        failure_for_on_a_probe_keeps_counting_trips,
        open_until_rejects_until_its_deadline,
        open_until_elapsed_elects_the_probe,
        open_until_release_is_stale,
        force_open_for_from_closed,
    );
}

fn failure_for_at_threshold_opens_until_now_plus_hint<W: Word>() {
    let raw = word::<W>(State::Closed { failures: N - 1 }, 4);
    let (s, reads) = step::<W>(
        &config(),
        raw,
        Event::FailureFor {
            counter: 4,
            open_for: 250,
        },
        1_000,
    );
    assert_eq!(reads, 1);
    assert_eq!(s.verdict, Verdict::Recorded);
    assert_eq!(
        snap::<W>(s.word),
        Snapshot {
            state: State::OpenUntil {
                until: 1_250,
                trips: 1
            },
            counter: 5
        }
    );
    assert_eq!(
        transitions(&s),
        [Some(t(Phase::Closed, Phase::Open, 5)), None]
    );
}

fn failure_for_below_threshold_counts_as_a_failure<W: Word>() {
    let raw = word::<W>(State::Closed { failures: 0 }, 4);
    let event = Event::FailureFor {
        counter: 4,
        open_for: 250,
    };
    let (s, reads) = step::<W>(&config(), raw, event, 1_000);
    let plain = Event::Release {
        counter: 4,
        outcome: Outcome::Failure,
    };
    let (p, _) = step::<W>(&config(), raw, plain, 1_000);
    assert_eq!((s.word, s.verdict, reads), (p.word, p.verdict, 0));
}

fn failure_for_stale_reads_no_clock<W: Word>() {
    let raw = word::<W>(State::Closed { failures: N - 1 }, 4);
    let event = Event::FailureFor {
        counter: 3,
        open_for: 250,
    };
    let (s, reads) = step::<W>(&config(), raw, event, 1_000);
    assert_eq!((s.word, s.verdict, reads), (raw, Verdict::Stale, 0));
}

fn failure_for_on_a_probe_keeps_counting_trips<W: Word>() {
    let raw = word::<W>(
        State::Probing {
            since: 990,
            trips: 2,
        },
        8,
    );
    let event = Event::FailureFor {
        counter: 8,
        open_for: 40,
    };
    let (s, _) = step::<W>(&config(), raw, event, 1_000);
    assert_eq!(
        snap::<W>(s.word).state,
        State::OpenUntil {
            until: 1_040,
            trips: 3
        }
    );
}

fn open_until_rejects_until_its_deadline<W: Word>() {
    let raw = word::<W>(
        State::OpenUntil {
            until: 1_250,
            trips: 1,
        },
        5,
    );
    for now in [1_000, 1_100, 1_249] {
        let (s, reads) = step::<W>(&config(), raw, Event::Admit, now);
        assert_eq!((s.word, reads), (raw, 1));
        assert_eq!(rejection(s.verdict), (Cause::Open, Some(1_250 - now)));
        assert_eq!(status::<W>(&config(), raw, now), (Status::Open, 1));
    }
    assert_eq!(status::<W>(&config(), raw, 1_250), (Status::HalfOpen, 1));
}

fn open_until_elapsed_elects_the_probe<W: Word>() {
    let raw = word::<W>(
        State::OpenUntil {
            until: 1_250,
            trips: 2,
        },
        5,
    );
    let (s, reads) = step::<W>(&config(), raw, Event::Admit, 1_260);
    assert_eq!(reads, 1);
    assert!(is_probe(s.verdict));
    assert_eq!(
        snap::<W>(s.word),
        Snapshot {
            state: State::Probing {
                since: 1_260,
                trips: 2
            },
            counter: 7
        }
    );
    assert_eq!(
        transitions(&s),
        [
            Some(t(Phase::Open, Phase::HalfOpen, 6)),
            Some(t(Phase::HalfOpen, Phase::Probing, 7))
        ]
    );
}

fn open_until_release_is_stale<W: Word>() {
    let raw = word::<W>(
        State::OpenUntil {
            until: 1_250,
            trips: 1,
        },
        5,
    );
    for outcome in [Outcome::Success, Outcome::Failure, Outcome::Ignored] {
        let (s, _) = step::<W>(
            &config(),
            raw,
            Event::Release {
                counter: 5,
                outcome,
            },
            1_000,
        );
        assert_eq!((s.word, s.verdict), (raw, Verdict::Stale));
    }
}

fn force_open_for_from_closed<W: Word>() {
    let raw = word::<W>(State::Closed { failures: 2 }, 9);
    let (s, reads) = step::<W>(&config(), raw, Event::ForceOpenFor { open_for: 70 }, 500);
    assert_eq!((reads, s.verdict), (1, Verdict::Done));
    assert_eq!(
        snap::<W>(s.word),
        Snapshot {
            state: State::OpenUntil {
                until: 570,
                trips: 1
            },
            counter: 10
        }
    );
}
