//! Every word against the reference model (`tripword_verification::every_word`):
//! by default a sample of `W32` words under every config and every `W64`
//! boundary word; ignored, all `2^32` `W32` words of one config
//! (`EVERY_WORD_CONFIG`, default `default`), on every core. The release
//! binary `every_word` runs the same check sharded (`docs/verification.md`,
//! "Every 32-bit word").

use tripword::{W32, W64};
use tripword_verification::every_word::{self, Checker, Tally, fields};
use tripword_verification::harness::XorShift;

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

/// All `2^32` words of one config: hours on two cores (see
/// `docs/verification.md`); the binary runs it sharded.
#[test]
#[ignore = "all 2^32 words: hours; run the every_word binary sharded instead"]
fn every_w32_word_agrees_with_the_model() {
    let name = std::env::var("EVERY_WORD_CONFIG").unwrap_or_else(|_| "default".into());
    let (name, config) = every_word::config(&name).expect("a config of every_word::configs");
    let checker = Checker::<W32>::new(name, config).expect("valid");
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let tally = every_word::run(&checker, 0, 1 << 32, threads, 1 << 12, &|_| {});
    assert_eq!(tally.words, 1 << 32);
    assert_agrees(name, &tally);
}
