//! The settling guard shared by every way of running a call (closures,
//! futures, the tower service): it holds an admitted call's ticket while the
//! protected code runs and makes sure exactly one outcome is recorded.

use core::ops::Deref;

use tripword::{Outcome, Release, Ticket};

use crate::call::AnyBreaker;
use crate::classify::TickVerdict;

/// Holds an admitted call's ticket, through a handle on its breaker (a
/// reference, an `Arc`). [`settle`](Pending::settle)d with the classified
/// verdict; dropped without one, it records a failure while the thread
/// panics (and the panic keeps unwinding), and `on_drop` otherwise (the
/// breaker's abandon outcome for a closure, which cannot end any other way;
/// the policy's cancel outcome for a future).
pub(crate) struct Pending<H>
where
    H: Deref,
    H::Target: AnyBreaker,
{
    breaker: H,
    ticket: Option<Ticket>,
    /// The clock at admission, read only when the call is timed.
    started: Option<u64>,
    on_drop: Outcome,
}

impl<H> Pending<H>
where
    H: Deref,
    H::Target: AnyBreaker,
{
    /// Takes over `ticket`; reads the clock now if `timed`.
    #[inline(always)]
    pub(crate) fn new(breaker: H, ticket: Ticket, timed: bool, on_drop: Outcome) -> Self {
        let started = if timed {
            Some(breaker.clock_now())
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
            .map(|started| self.breaker.clock_now().wrapping_sub(started))
    }

    /// Records `verdict` (once: later calls, and the drop, do nothing).
    #[inline(always)]
    pub(crate) fn settle(&mut self, verdict: TickVerdict) -> Release {
        match self.ticket.take() {
            Some(ticket) => self.breaker.record_verdict(ticket, verdict),
            None => Release::Stale,
        }
    }
}

impl<H> Drop for Pending<H>
where
    H: Deref,
    H::Target: AnyBreaker,
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
            self.settle(TickVerdict::from(outcome));
        }
    }
}

/// Armed around a poll of the protected future and its classification: if
/// either panics, the unwinding drops this guard (the future itself, and its
/// [`Pending`], stay where they are, to be dropped later by whoever caught
/// the panic, when the thread no longer panics), and it records a failure.
pub(crate) struct Unwinding<'a, H>(pub(crate) &'a mut Pending<H>)
where
    H: Deref,
    H::Target: AnyBreaker;

impl<H> Drop for Unwinding<'_, H>
where
    H: Deref,
    H::Target: AnyBreaker,
{
    #[inline]
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.settle(TickVerdict::Failure);
        }
    }
}
