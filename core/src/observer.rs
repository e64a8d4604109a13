//! Transition reports (spec I7) and call notifications.
//!
//! The breaker reports every state change exactly once, from the thread whose
//! compare-and-swap made it, *after* the swap: no lock is held and no CAS is
//! pending, so an observer may log, count, or call back into the breaker.
//! Tell-don't-ask: the breaker calls the observer; the pure layer returns the
//! same reports as values ([`Step::transitions`](crate::transition::Step)).
//!
//! Besides transitions, an observer may see each call: its admission
//! ([`Observer::on_admitted`]), its rejection with the cause
//! ([`Observer::on_rejected`]), and its release, recorded
//! ([`Observer::on_recorded`]) or stale ([`Observer::on_stale`]). Each of
//! these hooks does nothing by default and is called from the breaker's
//! inlined fast paths, so an observer that does not override them, `()`
//! first of all, compiles to the same code as without them
//! (`benches/per-call.sh` counts the instructions; `docs/design-kit.md`,
//! "Notifications").

use crate::outcome::Outcome;
use crate::rejected::Rejected;
use crate::ticket::{Release, Ticket};
use crate::transition::Transition;

/// Receives a breaker's transitions, and (optionally) its calls.
///
/// Only [`on_transition`](Observer::on_transition) must be written; every
/// other hook does nothing by default. The call hooks run on the caller's
/// thread, on the fast path, after the decision: keep them cheap (a relaxed
/// counter, not a log line per call).
///
/// ```
/// use core::sync::atomic::{AtomicU32, Ordering};
/// use tripword::{Breaker, Config, Observer, Outcome, Status, Transition, W64};
/// use tripword::clock::ManualClock;
///
/// struct CountTrips(AtomicU32);
/// impl Observer for CountTrips {
///     fn on_transition(&self, t: Transition) {
///         if t.to == Status::Open && t.from != Status::Open {
///             self.0.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
///
/// let clock = ManualClock::new(0);
/// let b = Breaker::from_parts(
///     Config::new().failure_threshold(1).check::<W64>()?,
///     &clock,
///     CountTrips(AtomicU32::new(0)),
/// );
/// b.release(b.acquire().unwrap(), Outcome::Failure);
/// assert_eq!(b.observer().0.load(Ordering::Relaxed), 1);
/// # Ok::<(), tripword::ConfigError>(())
/// ```
pub trait Observer {
    /// A state change, reported once, after the compare-and-swap that made it.
    fn on_transition(&self, transition: Transition);

    /// The stored word `raw` was not a valid state (spec I8): it was replaced
    /// by `Closed` with counter `counter` (fail open) before the operation went
    /// on. Does nothing by default.
    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        let _ = (raw, counter);
    }

    /// A call was admitted with `ticket` (its [`counter`](Ticket::counter),
    /// whether it [`is_probe`](Ticket::is_probe)). Called after the
    /// admission, and after the transition it made if it elected a probe.
    /// Does nothing by default.
    #[inline(always)]
    fn on_admitted(&self, ticket: &Ticket) {
        let _ = ticket;
    }

    /// A call was not admitted: `rejected` says why
    /// ([`cause`](Rejected::cause)) and for how long
    /// ([`retry_after`](Rejected::retry_after)). Does nothing by default.
    #[inline(always)]
    fn on_rejected(&self, rejected: Rejected) {
        let _ = rejected;
    }

    /// A release counted: `outcome` (a
    /// [`release_failure_for`](crate::Breaker::release_failure_for) is a
    /// [`Outcome::Failure`]) was recorded, after the transition it made, if
    /// any. Does nothing by default.
    #[inline(always)]
    fn on_recorded(&self, outcome: Outcome) {
        let _ = outcome;
    }

    /// A release was stale ([`Release::Stale`]: its state had passed, a
    /// probe had timed out, or the ticket came from another breaker):
    /// `outcome` changed nothing. Does nothing by default.
    #[inline(always)]
    fn on_stale(&self, outcome: Outcome) {
        let _ = outcome;
    }
}

/// Calls [`Observer::on_recorded`] or [`Observer::on_stale`] for a release
/// that ended in `release`, and returns it.
#[inline(always)]
pub(crate) fn released<O: Observer + ?Sized>(o: &O, outcome: Outcome, release: Release) -> Release {
    match release {
        Release::Recorded => o.on_recorded(outcome),
        Release::Stale => o.on_stale(outcome),
    }
    release
}

/// Calls [`Observer::on_admitted`] or [`Observer::on_rejected`] for an
/// admission that ended in `result`, and returns it.
#[inline(always)]
pub(crate) fn admitted<O: Observer + ?Sized>(
    o: &O,
    result: Result<Ticket, Rejected>,
) -> Result<Ticket, Rejected> {
    match &result {
        Ok(ticket) => o.on_admitted(ticket),
        Err(rejected) => o.on_rejected(*rejected),
    }
    result
}

/// No observer: reports compile away.
impl Observer for () {
    #[inline]
    fn on_transition(&self, _: Transition) {}
}

impl<O: Observer + ?Sized> Observer for &O {
    fn on_transition(&self, transition: Transition) {
        (**self).on_transition(transition)
    }
    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        (**self).on_corrupt_word(raw, counter)
    }
    #[inline]
    fn on_admitted(&self, ticket: &Ticket) {
        (**self).on_admitted(ticket)
    }
    #[inline]
    fn on_rejected(&self, rejected: Rejected) {
        (**self).on_rejected(rejected)
    }
    #[inline]
    fn on_recorded(&self, outcome: Outcome) {
        (**self).on_recorded(outcome)
    }
    #[inline]
    fn on_stale(&self, outcome: Outcome) {
        (**self).on_stale(outcome)
    }
}

/// Both observers, `.0` first: a tracing observer and a metrics observer on
/// one breaker, say.
///
/// ```
/// use core::sync::atomic::{AtomicU32, Ordering};
/// use tripword::{Breaker, Config, OnTransition, W64};
/// use tripword::clock::ManualClock;
///
/// let (a, b) = (AtomicU32::new(0), AtomicU32::new(0));
/// let clock = ManualClock::new(0);
/// let breaker = Breaker::from_parts(
///     Config::new().check::<W64>()?,
///     &clock,
///     (
///         OnTransition(|_| { a.fetch_add(1, Ordering::Relaxed); }),
///         OnTransition(|_| { b.fetch_add(1, Ordering::Relaxed); }),
///     ),
/// );
/// breaker.force_open();
/// assert_eq!((a.load(Ordering::Relaxed), b.load(Ordering::Relaxed)), (1, 1));
/// # Ok::<(), tripword::ConfigError>(())
/// ```
impl<A: Observer, B: Observer> Observer for (A, B) {
    fn on_transition(&self, transition: Transition) {
        self.0.on_transition(transition);
        self.1.on_transition(transition);
    }
    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        self.0.on_corrupt_word(raw, counter);
        self.1.on_corrupt_word(raw, counter);
    }
    #[inline]
    fn on_admitted(&self, ticket: &Ticket) {
        self.0.on_admitted(ticket);
        self.1.on_admitted(ticket);
    }
    #[inline]
    fn on_rejected(&self, rejected: Rejected) {
        self.0.on_rejected(rejected);
        self.1.on_rejected(rejected);
    }
    #[inline]
    fn on_recorded(&self, outcome: Outcome) {
        self.0.on_recorded(outcome);
        self.1.on_recorded(outcome);
    }
    #[inline]
    fn on_stale(&self, outcome: Outcome) {
        self.0.on_stale(outcome);
        self.1.on_stale(outcome);
    }
}

/// Adapts a closure into an [`Observer`] of transitions.
///
/// ```
/// use tripword::{Breaker, Config, OnTransition, W64};
/// use tripword::clock::ManualClock;
///
/// let clock = ManualClock::new(0);
/// let b = Breaker::from_parts(Config::new().check::<W64>()?, &clock, OnTransition(|t| {
///     println!("{t}"); // "closed -> open (forced, counter 1)"
/// }));
/// b.force_open();
/// # Ok::<(), tripword::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct OnTransition<F>(pub F);

impl<F: Fn(Transition)> Observer for OnTransition<F> {
    fn on_transition(&self, transition: Transition) {
        (self.0)(transition)
    }
}

/// One call as an [`OnCall`] observer sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallEvent {
    /// Admitted with this ticket's counter; `probe` when it is the probe.
    Admitted {
        /// The state counter the call releases with.
        counter: u32,
        /// Whether the call is the breaker's probe.
        probe: bool,
    },
    /// Not admitted: why and for how long.
    Rejected(Rejected),
    /// A release counted this outcome.
    Recorded(Outcome),
    /// A release was stale: this outcome changed nothing.
    Stale(Outcome),
}

/// Adapts a closure into an [`Observer`] of calls (admissions, rejections,
/// releases), as [`OnTransition`] does for transitions; pair the two in a
/// tuple for both. The closure runs on the caller's thread, on the fast
/// path: keep it cheap (a counter, not a log line).
///
/// ```
/// use core::sync::atomic::{AtomicU32, Ordering};
/// use tripword::{Breaker, CallEvent, Config, OnCall, OnTransition, Outcome, W64};
/// use tripword::clock::ManualClock;
///
/// let (rejected, failed) = (AtomicU32::new(0), AtomicU32::new(0));
/// let clock = ManualClock::new(0);
/// let calls = OnCall(|e: CallEvent| match e {
///     CallEvent::Rejected(_) => { rejected.fetch_add(1, Ordering::Relaxed); }
///     CallEvent::Recorded(Outcome::Failure) => { failed.fetch_add(1, Ordering::Relaxed); }
///     _ => {}
/// });
/// let b = Breaker::from_parts(
///     Config::new().failure_threshold(1).check::<W64>()?,
///     &clock,
///     (calls, OnTransition(|t| println!("{t}"))),
/// );
/// b.release(b.acquire().unwrap(), Outcome::Failure);
/// assert!(b.acquire().is_err());
/// assert_eq!((rejected.load(Ordering::Relaxed), failed.load(Ordering::Relaxed)), (1, 1));
/// # Ok::<(), tripword::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct OnCall<F>(pub F);

impl<F: Fn(CallEvent)> Observer for OnCall<F> {
    #[inline]
    fn on_transition(&self, _: Transition) {}
    #[inline]
    fn on_admitted(&self, ticket: &Ticket) {
        (self.0)(CallEvent::Admitted {
            counter: ticket.counter(),
            probe: ticket.is_probe(),
        })
    }
    #[inline]
    fn on_rejected(&self, rejected: Rejected) {
        (self.0)(CallEvent::Rejected(rejected))
    }
    #[inline]
    fn on_recorded(&self, outcome: Outcome) {
        (self.0)(CallEvent::Recorded(outcome))
    }
    #[inline]
    fn on_stale(&self, outcome: Outcome) {
        (self.0)(CallEvent::Stale(outcome))
    }
}
