//! Non-generic, never-inlined entry points: one closed call each, so the
//! machine code of `tripword`'s hot path can be read on its own
//! (`docs/performance/no-store.md`, "No store on the happy path") and traced by
//! `tests/no_store.rs` through the `no-store-probe` binary.

use tripword::clock::ManualClock;
use tripword::{Breaker, Outcome, W32};

/// A 64-bit breaker on a manual clock, as in the README.
pub type Breaker64 = Breaker<&'static ManualClock>;
/// A 32-bit breaker on a manual clock.
pub type Breaker32 = Breaker<&'static ManualClock, W32>;

/// Admit and report success: the closed happy path. `true` if admitted.
#[inline(never)]
pub fn closed_call_w64(b: &Breaker64) -> bool {
    crate::subjects::call(b, Outcome::Success)
}

/// [`closed_call_w64`] on the 32-bit word.
#[inline(never)]
pub fn closed_call_w32(b: &Breaker32) -> bool {
    crate::subjects::call(b, Outcome::Success)
}

/// Admit only: the closed admission is one atomic load.
#[inline(never)]
pub fn admit_w64(b: &Breaker64) -> bool {
    match b.acquire() {
        // The ticket is dropped unreleased: only the admission is compiled.
        Ok(t) => !t.is_probe(),
        Err(_) => false,
    }
}

/// Admit and report failure: the control, which must write.
#[inline(never)]
pub fn failure_call_w64(b: &Breaker64) -> bool {
    crate::subjects::call(b, Outcome::Failure)
}

/// [`failure_call_w64`] on the 32-bit word.
#[inline(never)]
pub fn failure_call_w32(b: &Breaker32) -> bool {
    crate::subjects::call(b, Outcome::Failure)
}

/// `tripword-std`'s `BreakerExt::call` of a closure returning `Ok`, on the
/// sweep's closed `W64` breaker (real clock, never read when closed).
#[inline(never)]
pub fn std_call_w64(b: &Breaker<tripword_std::MonotonicClock>) -> bool {
    crate::subjects::std_call(b, true)
}

/// `tripword-std`'s `BreakerExt::call_async` on a ready future, polled once,
/// on the same breaker as [`std_call_w64`].
#[inline(never)]
pub fn std_call_async_w64(b: &Breaker<tripword_std::MonotonicClock>) -> bool {
    crate::subjects::std_call_async(b, true)
}

/// One request through `tripword-std`'s tower layer around the sweep's
/// `Dependency` (`ready`, `call`, one poll), on a closed `W64` breaker.
#[inline(never)]
pub fn std_tower_w64(svc: &mut crate::subjects::TripwordService) -> bool {
    crate::exec::now(crate::subjects::layer_call(
        svc,
        crate::subjects::Request::Succeed,
    ))
}
