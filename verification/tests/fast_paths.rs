//! The breaker's fast paths checked on every word (issue 16).
//!
//! The exhaustive search and the fuzz `word` target explore the pure layer
//! (`transition::apply`); the fast paths live in `Breaker` (the closed
//! admission, the closed success and non-tripping failure, the rejection of
//! a timed word before its deadline, the forced-open rejection) and saw only
//! the words proptest happened to reach. Two mutants of their gate survived
//! every suite that way. Here every word of a large set (each tag, counters
//! at the edges, failure counts around the threshold and the field's
//! maximum, timestamps at the edges of the time field, trips at the edges,
//! stray bits, and pseudo-random words), at clock readings around its
//! deadlines, is loaded into a `Breaker` (a hidden constructor) and every
//! operation is compared with the pure layer's answer from the same word:
//! the verdict (ticket counter and probe flag, or rejection cause and wait),
//! the word left, how often the clock was read, the transitions reported,
//! and the corrupt-word report. Both words, on the host.

use tripword::__verification::{breaker_with_word, load_word, ticket};
use tripword::transition::{Event, Verdict, apply, status_at};
use tripword::word::{Layout, Snapshot, TAG_BITS};
use tripword::{Config, Outcome, Release, ValidConfig, W32, W64, Word};
use tripword_verification::harness::{CountingClock, Recorder, XorShift};

/// What one operation did, comparable between the breaker and the pure
/// layer.
#[derive(Debug, PartialEq)]
struct Seen {
    verdict: Verdict,
    word: u64,
    reads: u64,
    transitions: Vec<tripword::Transition>,
    corrupt: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Acquire,
    Release(u32, bool, Outcome),
    FailureFor(u32, bool, u64),
    ForceOpen,
    ForceOpenFor(u64),
    ForceClose,
}

fn pure<W: Word>(valid: &ValidConfig<W>, raw: W::Raw, op: Op, now: u64) -> Seen {
    let layout = W::LAYOUT;
    let current = Snapshot::counter_bits::<W>(raw);
    let event = match op {
        Op::Acquire => Event::Admit,
        Op::Release(c, _, outcome) => Event::Release {
            counter: c,
            outcome,
        },
        Op::FailureFor(c, _, open_for) => Event::FailureFor {
            counter: c,
            open_for,
        },
        Op::ForceOpen => Event::ForceOpen,
        Op::ForceOpenFor(open_for) => Event::ForceOpenFor { open_for },
        Op::ForceClose => Event::ForceClose,
    };
    let _ = (layout, current);
    let mut reads = 0;
    let step = apply(valid, raw, event, || {
        reads += 1;
        now
    });
    // The breaker tells a release only Recorded or Stale, and a force
    // nothing: compare what it can tell.
    let verdict = match (op, step.verdict) {
        (Op::Acquire, v) => v,
        (Op::Release(..) | Op::FailureFor(..), Verdict::Recorded) => Verdict::Recorded,
        (Op::Release(..) | Op::FailureFor(..), _) => Verdict::Stale,
        (_, _) => Verdict::Done,
    };
    Seen {
        verdict,
        word: step.word.into(),
        reads,
        transitions: step.transitions.iter().collect(),
        corrupt: step.repaired.map(Into::into),
    }
}

fn through_breaker<W: Word>(valid: &ValidConfig<W>, raw: W::Raw, op: Op, now: u64) -> Seen {
    let clock = CountingClock::new(now);
    let recorder = Recorder::default();
    let b = breaker_with_word(*valid, &clock, &recorder, raw);
    let released = |r: Release| match r {
        Release::Recorded => Verdict::Recorded,
        Release::Stale => Verdict::Stale,
    };
    let verdict = match op {
        Op::Acquire => match b.acquire() {
            Ok(t) => Verdict::Admitted {
                counter: t.counter(),
                probe: t.is_probe(),
            },
            Err(r) => Verdict::Rejected(r),
        },
        Op::Release(c, probe, outcome) => released(b.release(ticket(&b, c, probe), outcome)),
        Op::FailureFor(c, probe, open_for) => {
            released(b.release_failure_for(ticket(&b, c, probe), open_for))
        }
        Op::ForceOpen => {
            b.force_open();
            Verdict::Done
        }
        Op::ForceOpenFor(open_for) => {
            b.force_open_for(open_for);
            Verdict::Done
        }
        Op::ForceClose => {
            b.force_close();
            Verdict::Done
        }
    };
    let corrupt = recorder.take_corrupt();
    assert!(corrupt.len() <= 1, "a corrupt word is reported once");
    Seen {
        verdict,
        word: load_word(&b).into(),
        reads: clock.reads(),
        transitions: recorder.take(),
        corrupt: corrupt.first().map(|&(raw, _)| raw),
    }
}

/// Words: every tag, counters at the edges, each state's fields at their
/// edges and around `config`'s threshold, stray bits, and `random` more.
fn words<W: Word>(valid: &ValidConfig<W>, random: usize) -> Vec<u64> {
    let l: Layout = W::LAYOUT;
    let c_max = u64::from(l.max_counter());
    let counters = [0, 1, 2, c_max / 2, c_max - 1, c_max];
    let n = u64::from(valid.failure_threshold());
    let f_max = u64::from(l.max_failures());
    let payload = TAG_BITS + l.counter_bits;
    let time_shift = payload + l.trips_bits;
    let t_max = l.time_mask();
    let mut out = Vec::new();
    for &c in &counters {
        let base = c << TAG_BITS;
        for f in [
            0,
            1,
            2,
            n.saturating_sub(2),
            n - 1,
            n,
            n + 1,
            f_max - 1,
            f_max,
            1 << 14,
            3 << 14,
        ] {
            if f <= f_max {
                out.push(base | (f << payload));
            }
        }
        // Closed with a bit set above the failure field.
        if payload + l.failure_bits < l.word_bits {
            out.push(base | (1 << (payload + l.failure_bits)));
        }
        for tag in [1u64, 3, 5] {
            for trips in [0, 1, 2, u64::from(l.max_trips())] {
                for since in [0, 1, 2, t_max / 2, t_max / 2 + 1, t_max - 1, t_max] {
                    out.push(tag | base | (trips << payload) | (since << time_shift));
                }
            }
        }
        for trips in [0, 1, u64::from(l.max_trips())] {
            out.push(2 | base | (trips << payload));
        }
        out.push(2 | base | (1 << time_shift)); // HalfOpen with a timestamp
        out.push(4 | base);
        out.push(4 | base | (1 << payload)); // ForcedOpen with trips
        out.push(6 | base);
        out.push(7 | base | (5 << payload));
    }
    let mask = if l.word_bits >= 64 {
        u64::MAX
    } else {
        (1 << l.word_bits) - 1
    };
    let mut rng = XorShift::new(0x1605_2026);
    for _ in 0..random {
        out.push(rng.next_u64() & mask);
    }
    out
}

/// Clock readings for `raw`: fixed points (0, the wraps of the time field
/// and of the clock), and, for a timed word, around its timestamp and its
/// deadlines (the open time for each trip count, the probe timeout, a hint's
/// deadline), in ticks.
fn nows<W: Word>(valid: &ValidConfig<W>, raw: u64) -> Vec<u64> {
    let l = W::LAYOUT;
    let s = valid.time_shift();
    let ring = valid.ring();
    let mut out = vec![
        0,
        1,
        u64::MAX,
        u64::MAX - 1,
        ring.wrapping_sub(1),
        ring,
        ring.wrapping_add(1),
    ];
    if raw & 1 == 1 && raw & 7 != 7 {
        let since = (raw >> (TAG_BITS + l.counter_bits + l.trips_bits)) & l.time_mask();
        let base = since << s;
        let mut offsets = vec![0, 1, valid.probe_timeout(), valid.open_for()];
        for k in 1..4 {
            offsets.push(valid.open_duration(k));
        }
        for d in offsets {
            for extra in [0u64, 1, 2, 3 << s] {
                for t in [d.wrapping_add(extra), d.wrapping_sub(1).wrapping_add(extra)] {
                    out.push(base.wrapping_add(t));
                    out.push(base.wrapping_add(t).wrapping_add(ring));
                    out.push(base.wrapping_sub(t));
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn ops(raw: u64, layout: &Layout) -> Vec<Op> {
    let current = ((raw >> TAG_BITS) as u32) & layout.max_counter();
    let max = layout.max_counter();
    let mut out = vec![
        Op::Acquire,
        Op::ForceOpen,
        Op::ForceClose,
        Op::ForceOpenFor(0),
        Op::ForceOpenFor(77),
    ];
    for counter in [current, current.wrapping_sub(1) & max, (current + 1) & max] {
        for probe in [false, true] {
            for outcome in [Outcome::Success, Outcome::Failure, Outcome::Ignored] {
                out.push(Op::Release(counter, probe, outcome));
            }
            out.push(Op::FailureFor(counter, probe, 150));
        }
    }
    out
}

/// Every word, reading, and operation: the breaker agrees with the pure
/// layer. Returns how many cases ran.
fn agree<W: Word>(config: Config, random: usize) -> u64 {
    let valid = config.check::<W>().expect("valid");
    let mut cases = 0;
    for raw in words(&valid, random) {
        let word = W::from_u64(raw);
        for now in nows(&valid, raw) {
            for op in ops(raw, &W::LAYOUT) {
                let core = through_breaker(&valid, word, op, now);
                let pure = pure(&valid, word, op, now);
                assert_eq!(
                    core,
                    pure,
                    "{:?}: word {raw:#x} ({:?}), {op:?} at {now}",
                    valid,
                    Snapshot::decode::<W>(word)
                );
                cases += 1;
            }
            // The status read: no store, no report, the pure read's answer.
            let clock = CountingClock::new(now);
            let recorder = Recorder::default();
            let b = breaker_with_word(valid, &clock, &recorder, word);
            let mut reads = 0;
            let expected = status_at(&valid, word, || {
                reads += 1;
                now
            });
            assert_eq!(b.status(), expected, "status of {raw:#x} at {now}");
            assert_eq!(clock.reads(), reads, "status reads of {raw:#x} at {now}");
            assert_eq!(load_word(&b), word, "a status read stores nothing");
            assert!(recorder.take().is_empty() && recorder.take_corrupt().is_empty());
            cases += 1;
        }
    }
    cases
}

fn configs() -> Vec<Config> {
    let seed = Config::new()
        .failure_threshold(3)
        .open_for(100)
        .probe_timeout(50);
    vec![
        seed.horizon(0),
        seed,
        seed.failure_threshold(1)
            .exponential_backoff(800)
            .horizon(0),
        seed.failure_threshold(1).exponential_backoff(800),
    ]
}

#[test]
fn breaker_agrees_with_the_pure_layer_on_every_word_w64() {
    let mut cases = 0;
    for config in configs() {
        cases += agree::<W64>(config, 300);
    }
    // The thresholds where a failure count meets the edges of its field.
    cases += agree::<W64>(Config::new().failure_threshold(16_385).horizon(0), 100);
    cases += agree::<W64>(Config::new().failure_threshold(65_535), 100);
    println!("fast paths W64: {cases} cases agree with the pure layer");
}

#[test]
fn breaker_agrees_with_the_pure_layer_on_every_word_w32() {
    let mut cases = 0;
    for config in configs() {
        cases += agree::<W32>(config, 300);
    }
    cases += agree::<W32>(Config::new().failure_threshold(4_095), 100);
    println!("fast paths W32: {cases} cases agree with the pure layer");
}
