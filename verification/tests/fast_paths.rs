//! The breaker's fast paths checked on every word.
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

use tripword::Jitter;
use tripword::transition::Event;
use tripword::word::{Layout, Snapshot, TAG_BITS};
use tripword::{Config, Outcome, ValidConfig, W32, W64, Word};
use tripword_verification::harness::{XorShift, status_both, through_breaker, through_pure};

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

/// The events to apply, each with whether its ticket is a probe's.
fn ops(raw: u64, layout: &Layout) -> Vec<(Event, bool)> {
    let current = ((raw >> TAG_BITS) as u32) & layout.max_counter();
    let max = layout.max_counter();
    let mut out = vec![
        (Event::Admit, false),
        (Event::ForceOpen, false),
        (Event::ForceClose, false),
        (Event::ForceOpenFor { open_for: 0 }, false),
        (Event::ForceOpenFor { open_for: 77 }, false),
    ];
    for counter in [current, current.wrapping_sub(1) & max, (current + 1) & max] {
        for probe in [false, true] {
            for outcome in [Outcome::Success, Outcome::Failure, Outcome::Ignored] {
                out.push((Event::Release { counter, outcome }, probe));
            }
            let open_for = 150;
            out.push((Event::FailureFor { counter, open_for }, probe));
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
            for (event, probe) in ops(raw, &W::LAYOUT) {
                let core = through_breaker(&valid, word, event, now, probe);
                let pure = through_pure(&valid, word, event, now);
                assert_eq!(
                    core,
                    pure,
                    "{:?}: word {raw:#x} ({:?}), {event:?} (probe ticket {probe}) at {now}",
                    valid,
                    Snapshot::decode::<W>(word)
                );
                cases += 1;
            }
            // The status read: no store, no report, the pure read's answer.
            let (core, pure, quiet) = status_both(&valid, word, now);
            assert_eq!(core, pure, "status of {raw:#x} at {now}: (status, reads)");
            assert!(
                quiet,
                "a status read of {raw:#x} stored or reported something"
            );
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
        seed.failure_threshold(1)
            .exponential_backoff(800)
            .horizon(0)
            .jitter(Jitter::Equal { seed: 11 }),
        seed.jitter(Jitter::Full { seed: 12 }),
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
