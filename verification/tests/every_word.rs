//! Every word against the reference model (`tripword_verification::every_word`):
//! by default a sample of `W32` words under every config and every `W64`
//! boundary word; ignored, all `2^32` `W32` words of one config
//! (`EVERY_WORD_CONFIG`, default `default`), on every core. The release
//! binary `every_word` runs the same check sharded (`docs/verification.md`,
//! "Every 32-bit word").

use tripword::transition::Event;
use tripword::word::Snapshot;
use tripword::{Outcome, W32, W64, Word};
use tripword_verification::every_word::{self, Checker, Tally, fields, lean};
use tripword_verification::harness::{self, XorShift};

fn assert_agrees(what: &str, tally: &Tally) {
    let first: Vec<String> = tally.first.iter().map(ToString::to_string).collect();
    assert_eq!(
        tally.disagreements,
        0,
        "{what}: {} disagreements, the first:\n{}",
        tally.disagreements,
        first.join("\n")
    );
}

/// The lock-free, allocation-free runners of `every_word::lean` observe
/// what the harness's do, on words of every tag at their readings.
fn lean_is_the_harness<W: Word>(name: &'static str, config: tripword::Config, words: &[u64]) {
    let checker = Checker::<W>::new(name, config).expect("valid");
    let valid = checker.valid();
    for &raw in words {
        let w = W::from_u64(raw);
        let own = Snapshot::counter_bits::<W>(w);
        let (model, _) = checker.start(raw);
        for now in checker.readings(&model) {
            let (a, b, q) = harness::status_both(valid, w, now);
            assert_eq!(
                (a, b, q),
                lean::status_both(valid, w, now),
                "{raw:#x} at {now}"
            );
            for event in [
                Event::Admit,
                Event::Release {
                    counter: own,
                    outcome: Outcome::Failure,
                },
                Event::Release {
                    counter: own,
                    outcome: Outcome::Success,
                },
                Event::FailureFor {
                    counter: own,
                    open_for: 5,
                },
                Event::ForceOpen,
                Event::ForceOpenFor { open_for: 9 },
                Event::ForceClose,
            ] {
                let seen = |l: lean::Seen| harness::Seen {
                    verdict: l.verdict,
                    word: l.word,
                    reads: u64::from(l.reads),
                    transitions: l.transitions().collect(),
                    corrupt: l.corrupt,
                };
                let what = format!("{raw:#x}, {event:?} at {now}");
                assert_eq!(
                    harness::through_pure(valid, w, event, now),
                    seen(lean::through_pure(valid, w, event, now)),
                    "pure: {what}"
                );
                for probe in [false, true] {
                    let l = lean::through_breaker(valid, w, event, now, probe);
                    assert!(l.corrupt_reports <= 1, "{what}");
                    assert_eq!(
                        harness::through_breaker(valid, w, event, now, probe),
                        seen(l),
                        "breaker: {what}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_lean_runners_observe_what_the_harness_does() {
    let mut rng = XorShift::new(0x1ea2);
    let mut words: Vec<u64> = (0..8).collect();
    words.extend((0..64).map(|_| rng.next_u64() & u64::from(u32::MAX)));
    for (name, config) in every_word::configs() {
        lean_is_the_harness::<W32>(name, config, &words);
    }
    let (name, config) = every_word::configs()[0];
    let checker = Checker::<W64>::new(name, config).expect("valid");
    let w64: Vec<u64> = fields::words(&checker).into_iter().step_by(7).collect();
    lean_is_the_harness::<W64>(name, config, &w64);
}

/// Pseudo-random `W32` words (every field spread), and the first and last
/// words of each tag, under every config.
#[test]
fn a_sample_of_w32_words_agrees_with_the_model() {
    for (name, config) in every_word::configs() {
        let checker = Checker::<W32>::new(name, config).expect("valid");
        let mut tally = Tally::default();
        let mut rng = XorShift::new(0xe7e2_3a11);
        for raw in (0..8).chain((0..8).map(|t| (u64::from(u32::MAX) & !7) | t)) {
            checker.word(raw, &mut tally);
        }
        for _ in 0..600 {
            checker.word(rng.next_u64() & u64::from(u32::MAX), &mut tally);
        }
        assert_agrees(name, &tally);
        println!(
            "every_word sample {name}: {} words, {} checks",
            tally.words, tally.checks
        );
    }
}

/// Every combination of each `W64` field's boundary values, every config.
#[test]
fn every_w64_boundary_word_agrees_with_the_model() {
    for (name, config) in fields::configs() {
        let checker = Checker::<W64>::new(name, config).expect("valid");
        let mut tally = Tally::default();
        for raw in fields::words(&checker) {
            checker.word(raw, &mut tally);
        }
        assert_agrees(name, &tally);
        assert!(tally.words > 500, "{name}: {} words", tally.words);
        println!(
            "every_word W64 {name}: {} words, {} checks",
            tally.words, tally.checks
        );
    }
}

/// All `2^32` words of one config (`EVERY_WORD_CONFIG`, default `default`),
/// or shard `K/N` of them (`EVERY_WORD_SHARD`): all of them take hours on
/// two cores (see `docs/verification.md`); CI runs a rotating shard.
#[test]
#[ignore = "all 2^32 words: hours; CI runs a shard (EVERY_WORD_SHARD=K/N)"]
fn every_w32_word_agrees_with_the_model() {
    let name = std::env::var("EVERY_WORD_CONFIG").unwrap_or_else(|_| "default".into());
    let (name, config) = every_word::config(&name).expect("a config of every_word::configs");
    let shard = std::env::var("EVERY_WORD_SHARD").unwrap_or_else(|_| "0/1".into());
    let (k, n) = shard
        .split_once('/')
        .and_then(|(k, n)| Some((k.parse().ok()?, n.parse().ok()?)))
        .expect("EVERY_WORD_SHARD=K/N");
    let (first, last) = every_word::shard(k, n, 32);
    let checker = Checker::<W32>::new(name, config).expect("valid");
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let started = std::time::Instant::now();
    let tally = every_word::run(&checker, first, last, threads, 1 << 10, &|_| {});
    let secs = started.elapsed().as_secs_f64();
    println!(
        "every_word {name}: W32 shard {k}/{n} (words {first:#x}..{last:#x}): {} words, {} checks, {} disagreements, {secs:.1} s, {:.0} words/s",
        tally.words,
        tally.checks,
        tally.disagreements,
        tally.words as f64 / secs.max(1e-9)
    );
    assert_eq!(tally.words, last - first);
    assert_agrees(name, &tally);
}
