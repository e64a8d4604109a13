//! The settling guard shared by every way of running a call (closures,
//! futures, the tower service): it holds an admitted call's ticket while the
//! protected code runs and makes sure exactly one outcome is recorded.

use tripword::kit::{CircuitBreaker, Reply};
use tripword::{Clock, Outcome, Release};

use crate::classify::TickVerdict;

/// The ticket of breaker (or handle) `H`.
type TicketOf<H> = <H as CircuitBreaker>::Ticket;
/// The future of a release that needs a round trip, for breaker (or
/// handle) `H`.
pub(crate) type ReleasingOf<H> = <H as CircuitBreaker>::Releasing;

/// Holds an admitted call's ticket, through its breaker or a handle on it
/// (a reference, an `Arc`: a handle is a breaker too). [`settle`](Pending::settle)d with the classified
/// verdict; dropped without one, it records a failure while the thread
/// panics (and the panic keeps unwinding), and `on_drop` otherwise (the
/// breaker's abandon outcome for a closure, which cannot end any other way;
/// the policy's cancel outcome for a future). A drop releases with
/// [`CircuitBreaker::release_detached`], which never blocks.
pub(crate) struct Pending<H>
where
    H: CircuitBreaker,
{
    breaker: H,
    ticket: Option<TicketOf<H>>,
    /// The clock at admission, read only when the call is timed.
    started: Option<u64>,
    on_drop: Outcome,
}

impl<H> Pending<H>
where
    H: CircuitBreaker,
{
    /// Takes over `ticket`; reads the clock now if `timed`.
    #[inline(always)]
    pub(crate) fn new(breaker: H, ticket: TicketOf<H>, timed: bool, on_drop: Outcome) -> Self {
        let started = if timed {
            Some(breaker.clock().now())
        } else {
            None
        };
        Pending {
            breaker,
            ticket: Some(ticket),
            started,
            on_drop,
        }
    }

    /// Ticks since admission, if the call is timed.
    #[inline(always)]
    pub(crate) fn elapsed(&self) -> Option<u64> {
        self.started
            .map(|started| self.breaker.clock().now().wrapping_sub(started))
    }

    /// Records `verdict` with the sync release (once: later calls, and the
    /// drop, do nothing).
    #[inline(always)]
    pub(crate) fn settle(&mut self, verdict: TickVerdict) -> Release {
        match self.ticket.take() {
            Some(ticket) => self.breaker.release_verdict(ticket, verdict),
            None => Release::Stale,
        }
    }

    /// Records `verdict` with the async release: ready at once for a local
    /// breaker, a round trip's future for a remote one (once, as
    /// [`settle`](Self::settle)).
    #[inline(always)]
    pub(crate) fn settle_async(&mut self, verdict: TickVerdict) -> Reply<Release, ReleasingOf<H>> {
        match self.ticket.take() {
            Some(ticket) => self.breaker.release_async(ticket, verdict),
            None => Reply::Ready(Release::Stale),
        }
    }

    /// Records `verdict` from a place that cannot wait (a drop, an unwind).
    #[inline]
    fn settle_detached(&mut self, verdict: TickVerdict) {
        if let Some(ticket) = self.ticket.take() {
            self.breaker.release_detached(ticket, verdict);
        }
    }
}

impl<H> Drop for Pending<H>
where
    H: CircuitBreaker,
{
    fn drop(&mut self) {
        if self.ticket.is_some() {
            let outcome = if std::thread::panicking() {
                // A panic is a failure, whatever the abandon or cancel
                // policy says.
                Outcome::Failure
            } else {
                self.on_drop
            };
            self.settle_detached(TickVerdict::from(outcome));
        }
    }
}

/// Armed around a poll of the protected future and its classification: if
/// either panics, the unwinding drops this guard (the future itself, and its
/// [`Pending`], stay where they are, to be dropped later by whoever caught
/// the panic, when the thread no longer panics), and it records a failure.
pub(crate) struct Unwinding<'a, H>(pub(crate) &'a mut Pending<H>)
where
    H: CircuitBreaker;

impl<H> Drop for Unwinding<'_, H>
where
    H: CircuitBreaker,
{
    #[inline]
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.settle_detached(TickVerdict::Failure);
        }
    }
}
