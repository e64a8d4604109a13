//! The `W64` word by its fields: every combination of each field's
//! boundary values, for the same check as the 32-bit words.
//!
//! Why those values suffice is argued in `docs/verification.md` ("Every
//! 32-bit word", "W64 by its fields"): the decision depends on each field
//! only through comparisons with these boundaries and through modular
//! differences, which the clock readings of [`Checker::readings`] cover
//! relative to the word's own timestamp.

use tripword::word::{Layout, TAG_BITS};
use tripword::{Config, Jitter, W64, Word};

use super::Checker;

/// The configs for `W64`: those of [`configs`](super::configs), one with a
/// large time shift (a horizon of `2^60` ticks), and one in exact ticks
/// with the longest open time and cap the time field holds.
pub fn configs() -> Vec<(&'static str, Config)> {
    let mut v = super::configs();
    v.push((
        "long-w64",
        Config::new()
            .failure_threshold(65_535)
            .open_for(1 << 40)
            .exponential_backoff(1 << 50)
            .probe_timeout(1 << 36)
            .horizon(1 << 60)
            .jitter(Jitter::Equal { seed: 3 }),
    ));
    // Exact ticks and the longest open time the field holds: the backoff's
    // doubling at its widest (`2^32` units shifted by up to 30 trips).
    v.push((
        "huge-w64",
        Config::new()
            .failure_threshold(2)
            .open_for(1 << 32)
            .exponential_backoff(1 << 33)
            .probe_timeout(1 << 33)
            .horizon(0),
    ));
    v
}

/// A value's neighbours within `0..=max`: `v - 1`, `v`, `v + 1`.
fn around(v: u64, max: u64, out: &mut Vec<u64>) {
    for x in [v.wrapping_sub(1), v, v + 1] {
        if x <= max {
            out.push(x);
        }
    }
}

/// 0, 1, the middle, the maximum and its neighbour, of a field of `bits`.
fn edges(bits: u32) -> Vec<u64> {
    let max = (1u64 << bits) - 1;
    let mut v = vec![0, 1, 1 << (bits - 1), max - 1, max];
    v.sort_unstable();
    v.dedup();
    v
}

/// The boundary words of `checker`'s config: for each tag, every
/// combination of its fields' boundary values (counter; trips, with the
/// trip count where the backoff reaches its cap and its neighbours; time;
/// failures, with the threshold and its neighbours; the bits a state must
/// leave zero: none, the lowest, the highest, all).
pub fn words(checker: &Checker<W64>) -> Vec<u64> {
    let l: Layout = W64::LAYOUT;
    let c = checker.model_config();
    let counter_at = TAG_BITS;
    let payload_at = TAG_BITS + l.counter_bits;
    let time_at = payload_at + l.trips_bits;
    let counters = edges(l.counter_bits);
    let max_trips = u64::from(l.max_trips());
    let mut trips = edges(l.trips_bits);
    trips.push(2);
    if c.backoff_cap.is_some() {
        // The first trip count whose open time is the cap's.
        let capped = (1..=max_trips)
            .find(|&k| c.open_need(k, 0) >= c.need(c.backoff_cap.unwrap_or(0)))
            .unwrap_or(max_trips);
        around(capped, max_trips, &mut trips);
    }
    trips.sort_unstable();
    trips.dedup();
    let times = edges(l.time_bits);
    let max_f = u64::from(l.max_failures());
    let mut failures = edges(l.failure_bits);
    around(u64::from(c.failure_threshold), max_f, &mut failures);
    failures.sort_unstable();
    failures.dedup();
    // Bits above a field, which must be zero: none, the lowest, the
    // highest, all of them.
    let strays = |from: u32| {
        let all = u64::MAX << from;
        vec![0, 1 << from, 1 << 63, all]
    };
    let mut out = Vec::new();
    for &ctr in &counters {
        let base = ctr << counter_at;
        for &f in &failures {
            for s in strays(payload_at + l.failure_bits) {
                out.push(base | (f << payload_at) | s);
            }
        }
        for tag in [1u64, 3, 5] {
            for &k in &trips {
                for &t in &times {
                    out.push(tag | base | (k << payload_at) | (t << time_at));
                }
            }
        }
        for &k in &trips {
            for s in strays(time_at) {
                out.push(2 | base | (k << payload_at) | s);
            }
        }
        for s in strays(payload_at) {
            out.push(4 | base | s);
        }
        for tag in [6u64, 7] {
            for s in strays(payload_at) {
                out.push(tag | base | s);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}
