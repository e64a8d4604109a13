//! The breaker a user writes by hand in a few lines: a failure count in one
//! atomic, an "open until" stamp in another. No single probe (every caller
//! after the open time is admitted), no stale results (a late failure
//! counts against whatever state the breaker is in), and a racy trip (two
//! threads may both stamp the open time). It is the cheapest a breaker can
//! be with two atomics, which is why the closed path of `tripword` is
//! measured against it: what the one-word state machine costs on top.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tripword::{Clock, Outcome, W64, Word};

use super::baselines::{Micros, OPEN_FOR_US, TicketApi, planned};
use crate::subject::{Kind, Subject, Worker};
use crate::workload::{Call, Setup, Workload};

/// Two atomics and a threshold.
///
/// ```
/// use tripword::{clock::ManualClock, Outcome};
/// use tripword_lab::subjects::HandBreaker;
///
/// let b = HandBreaker::new(2, 10, ManualClock::new(0));
/// for _ in 0..2 {
///     assert!(b.acquire());
///     b.release(Outcome::Failure);
/// }
/// assert!(!b.acquire());
/// b.clock().advance(10);
/// assert!(b.acquire() && b.acquire()); // no single probe
/// b.release(Outcome::Success);
/// assert!(b.acquire());
/// ```
#[derive(Debug)]
pub struct HandBreaker<C> {
    failures: AtomicU64,
    open_until: AtomicU64,
    threshold: u64,
    open_for: u64,
    clock: C,
}

impl<C: Clock> HandBreaker<C> {
    /// Trips after `threshold` consecutive failures, for `open_for` ticks.
    pub fn new(threshold: u64, open_for: u64, clock: C) -> Self {
        HandBreaker {
            failures: AtomicU64::new(0),
            open_until: AtomicU64::new(0),
            threshold,
            open_for,
            clock,
        }
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Whether a call may go: closed (no stamp), or the open time is over.
    #[inline]
    pub fn acquire(&self) -> bool {
        let until = self.open_until.load(Ordering::Acquire);
        until == 0 || self.over(until)
    }

    // The clock read, out of line: the closed path is the two loads alone,
    // as in `tripword` (the comparison is with this breaker at its best).
    #[cold]
    #[inline(never)]
    fn over(&self, until: u64) -> bool {
        self.clock.now() >= until
    }

    #[cold]
    #[inline(never)]
    fn trip(&self) {
        let until = self.clock.now() + self.open_for;
        self.open_until.store(until, Ordering::Release);
        self.failures.store(0, Ordering::Relaxed);
    }

    /// Reports a call: a success resets the count (and ends an open time
    /// that is over); a failure counts, and the threshold's stamps the open
    /// time.
    #[inline]
    pub fn release(&self, outcome: Outcome) {
        match outcome {
            Outcome::Success => {
                self.failures.store(0, Ordering::Relaxed);
                if self.open_until.load(Ordering::Relaxed) != 0 {
                    self.open_until.store(0, Ordering::Release);
                }
            }
            Outcome::Failure => {
                if self.failures.fetch_add(1, Ordering::AcqRel) + 1 >= self.threshold {
                    self.trip();
                }
            }
            Outcome::Ignored => {}
        }
    }

    /// Closes it.
    pub fn reset(&self) {
        self.failures.store(0, Ordering::Relaxed);
        self.open_until.store(0, Ordering::Release);
    }
}

impl<C: Clock> TicketApi for HandBreaker<C> {
    type Ticket = ();
    #[inline]
    fn admit(&self) -> Option<()> {
        self.acquire().then_some(())
    }
    #[inline]
    fn report(&self, (): (), outcome: Outcome) {
        self.release(outcome);
    }
    #[inline]
    fn reset(&self) {
        HandBreaker::reset(self);
    }
}

/// [`HandBreaker`] in the lab, on the same microsecond clock as the
/// `Mutex` baseline.
#[derive(Debug)]
pub struct ByHand {
    breaker: HandBreaker<Micros>,
    never_trips: bool,
}

/// A worker of [`ByHand`].
#[derive(Debug)]
pub struct ByHandWorker(Arc<ByHand>);

impl Subject for ByHand {
    type Worker = ByHandWorker;
    const NAME: &'static str = "by_hand_two_atomics";
    const KIND: Kind = Kind::Baseline;
    fn build(workload: &Workload) -> Option<Self> {
        let breaker = match workload.setup {
            Setup::Trips => HandBreaker::new(5, OPEN_FOR_US, Micros),
            Setup::NeverTrips => {
                HandBreaker::new(u64::from(W64::LAYOUT.max_failures()), OPEN_FOR_US, Micros)
            }
            Setup::Tripped => {
                let b = HandBreaker::new(1, 1, Micros);
                b.release(Outcome::Failure);
                b
            }
        };
        Some(ByHand {
            breaker,
            never_trips: workload.setup == Setup::NeverTrips,
        })
    }
    fn worker(self: &Arc<Self>) -> ByHandWorker {
        ByHandWorker(Arc::clone(self))
    }
}

impl Worker for ByHandWorker {
    #[inline]
    fn call(&mut self, call: Call) -> bool {
        let s = &self.0;
        planned(&s.breaker, call, s.never_trips)
    }
}
