//! Transition reports (spec I7).
//!
//! The breaker reports every state change exactly once, from the thread whose
//! compare-and-swap made it, *after* the swap: no lock is held and no CAS is
//! pending, so an observer may log, count, or call back into the breaker.
//! Tell-don't-ask: the breaker calls the observer; the pure layer returns the
//! same reports as values ([`Step::transitions`](crate::transition::Step)).

use crate::transition::Transition;

/// Receives a breaker's transitions.
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
