//! The settling guard shared by every way of running a call (closures now,
//! futures later): it owns the permit while the protected code runs and makes
//! sure exactly one outcome is recorded.

use tripword::{Clock, ConfigSource, Observer, Outcome, Permit, Release, Word};

/// Holds an admitted call's permit. Finished explicitly with the classified
/// outcome; dropped while the thread panics, it records a failure (and the
/// panic keeps unwinding); dropped otherwise (a cancelled future), the
/// permit's own drop records the breaker's abandon outcome.
pub(crate) struct Settle<'b, C: Clock, W: Word, O: Observer, P: ConfigSource<W>> {
    permit: Option<Permit<'b, C, W, O, P>>,
}

impl<'b, C: Clock, W: Word, O: Observer, P: ConfigSource<W>> Settle<'b, C, W, O, P> {
    pub(crate) fn new(permit: Permit<'b, C, W, O, P>) -> Self {
        Settle {
            permit: Some(permit),
        }
    }

    /// Records `outcome` and disarms the guard.
    pub(crate) fn finish(mut self, outcome: Outcome) -> Release {
        match self.permit.take() {
            Some(permit) => permit.finish(outcome),
            None => Release::Stale,
        }
    }
}

impl<C: Clock, W: Word, O: Observer, P: ConfigSource<W>> Drop for Settle<'_, C, W, O, P> {
    fn drop(&mut self) {
        if let Some(permit) = self.permit.take() {
            if std::thread::panicking() {
                // A panic is a failure, whatever the abandon policy says.
                permit.failure();
            } else {
                drop(permit); // records the configured abandon outcome
            }
        }
    }
}
