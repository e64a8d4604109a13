//! Proof by exhaustion of the 32-bit word: every one of the `2^32` `W32`
//! words, every event, at every clock reading where the decision can
//! change, through the core's pure layer (`transition::apply`,
//! `status_at`) and through a `Breaker` loaded with the word (its fast
//! paths), each compared with the [reference model](crate::model); and the
//! `W64` word by its fields (every combination of each field's boundary
//! values, [`fields`]).
//!
//! The model is the oracle for every word: the core only decodes the word
//! to set the model's state up ([`Checker::start`]); the model says whether
//! it can be in that state (else the word is corrupt, and the model starts
//! from its repair), and every answer (verdict, wait, clock read,
//! transitions, the word left, the corrupt-word report) is the model's.
//! A state the core and the model learn later is covered as soon as both
//! know it and [`configs`] names a config that uses it.
//!
//! `src/bin/every_word.rs` runs it, sharded, on every core;
//! `tests/every_word.rs` runs a sample by default and the full run ignored.
//! `docs/verification.md` ("Every 32-bit word") has the figures.

mod check;
pub mod fields;
pub mod lean;

pub use check::{Checker, Disagreement, Ev, KEEP, Tally};

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use tripword::{Config, Jitter, Ramp, Word};

/// The configs of the check, by name: the default; equal and full jitter;
/// a long horizon, which makes the time shift the largest `W32` allows
/// (units of `2^17` ticks); one in exact ticks (`s = 0`) with backoff; and
/// the recovery states: three probes, two to close (`Trial`), and two
/// probes then a linear ramp of four stages (`Ramp`).
pub fn configs() -> Vec<(&'static str, Config)> {
    let seed = Config::new()
        .failure_threshold(3)
        .open_for(1_000)
        .probe_timeout(500);
    vec![
        ("default", Config::new()),
        (
            "jitter-equal",
            seed.exponential_backoff(8_000)
                .jitter(Jitter::Equal { seed: 0x5eed }),
        ),
        ("jitter-full", seed.jitter(Jitter::Full { seed: 7 })),
        (
            "long",
            Config::new()
                .failure_threshold(5)
                .open_for(1 << 28)
                .exponential_backoff(1 << 30)
                .probe_timeout(1 << 20)
                .horizon(1 << 31),
        ),
        (
            "ticks",
            seed.failure_threshold(1)
                .exponential_backoff(4_000)
                .horizon(0),
        ),
        // The recovery states: several probes (`Trial`, tag 7), and a ramp
        // after them (`Ramp`, tag 6).
        ("trial", seed.probes(3).probes_to_close(2)),
        ("ramp", seed.probes(2).ramp(Ramp::linear(4_000, 4))),
    ]
}

/// The config named `name` among [`configs`].
pub fn config(name: &str) -> Option<(&'static str, Config)> {
    configs().into_iter().find(|(n, _)| *n == name)
}

/// Words `first..last` (a half-open range of `u64`, each reduced to `W`),
/// checked by `threads` threads over chunks of `chunk` words handed out in
/// order; `progress` is called after each chunk with the words done so
/// far. The tally of them all.
pub fn run<W: Word>(
    checker: &Checker<W>,
    first: u64,
    last: u64,
    threads: usize,
    chunk: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Tally {
    let next = AtomicU64::new(first);
    let done = AtomicU64::new(0);
    let total = Mutex::new(Tally::default());
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let mut tally = Tally::default();
                loop {
                    let start = next.fetch_add(chunk, Ordering::Relaxed);
                    if start >= last {
                        break;
                    }
                    let end = start.saturating_add(chunk).min(last);
                    for raw in start..end {
                        checker.word(raw, &mut tally);
                    }
                    progress(done.fetch_add(end - start, Ordering::Relaxed) + end - start);
                }
                total
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .merge(tally);
            });
        }
    });
    total
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The words of shard `k` of `n` of the `2^bits` words: a contiguous
/// range, the shards covering every word once.
///
/// # Panics
/// When `k >= n` or `n` is 0.
pub fn shard(k: u64, n: u64, bits: u32) -> (u64, u64) {
    assert!(n > 0 && k < n, "shard {k}/{n}");
    let all = 1u128 << bits;
    let at = |i: u64| (all * u128::from(i) / u128::from(n)) as u64;
    (at(k), at(k + 1))
}
