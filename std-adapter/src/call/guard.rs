//! The settling guard shared by every way of running a call (closures,
//! futures, the tower service): the core's [`Admitted`], which holds an
//! admitted call's ticket while the protected code runs and records exactly
//! one outcome, told by [`StdUnwind`] when a panic unwinds.

use tripword::future::{Admitted, Unwind};

/// Whether a panic unwinds, as `std::thread::panicking` tells: a call
/// dropped during an unwind records a failure, whatever its cancel or
/// abandon outcome says. The [`Unwind`] of every call `tripword-std` runs;
/// name it to run the core's [`Guarded`](tripword::future::Guarded) with
/// the same panic handling.
#[derive(Clone, Copy, Debug)]
pub enum StdUnwind {}

impl Unwind for StdUnwind {
    #[inline(always)]
    fn unwinding() -> bool {
        std::thread::panicking()
    }
}

/// An admitted call's ticket, through its breaker or a handle on it (a
/// reference, an `Arc`: a handle is a breaker too), settled once; dropped
/// unsettled it records a failure while the thread panics and its drop
/// outcome otherwise (the breaker's abandon outcome for a closure, which
/// cannot end any other way; the policy's cancel outcome for a future).
pub(crate) type Pending<H> = Admitted<H, StdUnwind>;
