//! The closed call the way a user's hot loop makes it: `acquire` and a
//! success `release` inlined into the body of the caller's own loop, next to
//! the same loop around a bare pair of atomic loads.
//!
//! Each function here is one whole loop, non-generic and never inlined, so
//! that criterion (`benches/fast_path.rs`, group `hot_loop`), valgrind
//! (`benches/per-call.sh`, the `loop_*` rows) and `objdump` all see the same
//! machine code. Inside each loop nothing is hidden from the optimizer: the
//! breaker is a plain reference, the calls are inlined (or not) as the
//! compiler decides for any user's crate, and the only thing that leaves the
//! loop is the count of admitted calls.
//!
//! The baseline, [`load_pair`], is what a call that only reads the word cannot
//! beat: load the word, load it again, compare the two (the two loads of a
//! closed `tripword` call, and the least a caller does with them).
//! [`load_pair_black_box`] is the older baseline of the sweep and the
//! single-call criterion groups (`black_box` on each loaded value, which
//! spills both to the stack): it costs more than [`load_pair`], which is why
//! ratios taken against it read lower.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use tripword::clock::ManualClock;
use tripword::{Breaker, Outcome, W32, W64};

/// The 64-bit breaker of the hot loops.
pub type Hot64 = Breaker<ManualClock, W64>;
/// The 32-bit breaker of the hot loops.
pub type Hot32 = Breaker<ManualClock, W32>;

/// `n` iterations of two `Acquire` loads of `word` compared with each other;
/// returns how many compared equal (all of them, unless another thread
/// writes the word).
#[inline(never)]
pub fn load_pair(word: &AtomicU64, n: u64) -> u64 {
    let mut same = 0u64;
    for _ in 0..n {
        let a = word.load(Ordering::Acquire);
        let b = word.load(Ordering::Acquire);
        same += u64::from(a == b);
    }
    same
}

/// `n` iterations of two `Acquire` loads of `word`, each value passed
/// through `black_box` (the sweep's `atomic_load_pair`); returns `n`.
#[inline(never)]
pub fn load_pair_black_box(word: &AtomicU64, n: u64) -> u64 {
    for _ in 0..n {
        black_box(word.load(Ordering::Acquire));
        black_box(word.load(Ordering::Acquire));
    }
    n
}

/// `n` closed calls on `b`: `acquire`, then `release(ticket, Success)`;
/// returns how many were admitted.
#[inline(never)]
pub fn tripword_w64(b: &Hot64, n: u64) -> u64 {
    let mut admitted = 0u64;
    for _ in 0..n {
        if let Ok(ticket) = b.acquire() {
            b.release(ticket, Outcome::Success);
            admitted += 1;
        }
    }
    admitted
}

/// [`tripword_w64`] on the 32-bit word.
#[inline(never)]
pub fn tripword_w32(b: &Hot32, n: u64) -> u64 {
    let mut admitted = 0u64;
    for _ in 0..n {
        if let Ok(ticket) = b.acquire() {
            b.release(ticket, Outcome::Success);
            admitted += 1;
        }
    }
    admitted
}

/// [`tripword_w64`] through the guard API: `permit()`, then `success()`.
#[inline(never)]
pub fn tripword_w64_permit(b: &Hot64, n: u64) -> u64 {
    let mut admitted = 0u64;
    for _ in 0..n {
        if let Ok(permit) = b.permit() {
            permit.success();
            admitted += 1;
        }
    }
    admitted
}

/// [`tripword_w64`] on a breaker the loop reaches through `black_box` on
/// every iteration: the compiler may not keep the threshold in a register
/// across calls, as when the breaker sits behind a pointer the loop's other
/// work could change.
#[inline(never)]
pub fn tripword_w64_opaque(b: &Hot64, n: u64) -> u64 {
    let mut admitted = 0u64;
    for _ in 0..n {
        let b = black_box(b);
        if let Ok(ticket) = b.acquire() {
            b.release(ticket, Outcome::Success);
            admitted += 1;
        }
    }
    admitted
}

/// The breaker a user writes by hand with two atomics
/// (`tripword_lab::subjects::HandBreaker`), closed, on a manual clock.
pub type HotByHand = tripword_lab::subjects::HandBreaker<ManualClock>;

/// The same loop around [`HotByHand`]: admission, then a success.
#[inline(never)]
pub fn by_hand(b: &HotByHand, n: u64) -> u64 {
    let mut admitted = 0u64;
    for _ in 0..n {
        if b.acquire() {
            b.release(Outcome::Success);
            admitted += 1;
        }
    }
    admitted
}

/// A closed [`HotByHand`] (5 failures trip it, open 1 000 ticks).
pub fn hot_by_hand() -> HotByHand {
    tripword_lab::subjects::HandBreaker::new(5, 1_000, ManualClock::new(0))
}

/// A closed 64-bit breaker with the default config, for the hot loops.
pub fn hot64() -> Hot64 {
    Breaker::new(tripword::Config::new(), ManualClock::new(0))
}

/// A closed 32-bit breaker with the default config (in whole ticks), for
/// the hot loops.
pub fn hot32() -> Hot32 {
    let valid = tripword::Config::new()
        .horizon(0)
        .check::<W32>()
        .expect("the default config is in range for W32");
    Breaker::from_parts(valid, ManualClock::new(0), ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_closed_call_is_admitted() {
        let word = AtomicU64::new(7);
        assert_eq!(load_pair(&word, 100), 100);
        assert_eq!(load_pair_black_box(&word, 100), 100);
        let b = hot64();
        assert_eq!(tripword_w64(&b, 100), 100);
        assert_eq!(tripword_w64_permit(&b, 100), 100);
        assert_eq!(tripword_w64_opaque(&b, 100), 100);
        assert_eq!(tripword_w32(&hot32(), 100), 100);
    }
}
