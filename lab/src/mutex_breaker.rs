//! The `Mutex` baseline: the same state machine as `tripword` (consecutive
//! failures, fixed open time, a single probe with a timeout, a state counter
//! that makes late results stale), written the obvious way: a
//! [`std::sync::Mutex`] around an enum.
//!
//! It reads the clock only where `tripword` does (never in `Closed`), so the
//! difference measured is the lock against the one-word compare-and-swap.

use std::sync::{Mutex, MutexGuard, PoisonError};
use tripword::{Clock, Outcome};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Closed { failures: u32 },
    Open { since: u64 },
    HalfOpen,
    Probing { since: u64 },
}

#[derive(Debug)]
struct Inner {
    phase: Phase,
    counter: u32,
}

impl Inner {
    fn go(&mut self, phase: Phase) {
        self.phase = phase;
        self.counter = self.counter.wrapping_add(1);
    }
}

/// A circuit breaker behind a lock.
///
/// ```
/// use tripword::{clock::ManualClock, Outcome};
/// use tripword_lab::mutex_breaker::MutexBreaker;
///
/// let b = MutexBreaker::new(2, 10, 5, ManualClock::new(0));
/// for _ in 0..2 {
///     let t = b.acquire().unwrap();
///     b.release(t, Outcome::Failure);
/// }
/// assert!(b.acquire().is_err());
/// b.clock().advance(10);
/// let probe = b.acquire().unwrap();
/// assert!(b.acquire().is_err());
/// b.release(probe, Outcome::Success);
/// assert!(b.acquire().is_ok());
/// ```
#[derive(Debug)]
pub struct MutexBreaker<C> {
    inner: Mutex<Inner>,
    threshold: u32,
    open_for: u64,
    probe_timeout: u64,
    clock: C,
}

/// A call a [`MutexBreaker`] did not admit. (`tripword::Rejected` carries a
/// cause and a wait that only the core computes.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MutexRejected;

/// Proof of admission to a [`MutexBreaker`].
#[derive(Debug)]
#[must_use]
pub struct MutexTicket {
    counter: u32,
}

impl<C: Clock> MutexBreaker<C> {
    /// A closed breaker that trips after `threshold` consecutive failures,
    /// stays open `open_for` ticks and gives a probe `probe_timeout` ticks.
    pub fn new(threshold: u32, open_for: u64, probe_timeout: u64, clock: C) -> Self {
        MutexBreaker {
            inner: Mutex::new(Inner {
                phase: Phase::Closed { failures: 0 },
                counter: 0,
            }),
            threshold: threshold.max(1),
            open_for,
            probe_timeout,
            clock,
        }
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks to make a call: a ticket when closed or elected probe.
    pub fn acquire(&self) -> Result<MutexTicket, MutexRejected> {
        let mut inner = self.lock();
        match inner.phase {
            Phase::Closed { .. } => Ok(MutexTicket {
                counter: inner.counter,
            }),
            Phase::HalfOpen => {
                let since = self.clock.now();
                inner.go(Phase::Probing { since });
                Ok(MutexTicket {
                    counter: inner.counter,
                })
            }
            Phase::Open { since } | Phase::Probing { since } => {
                let limit = if matches!(inner.phase, Phase::Open { .. }) {
                    self.open_for
                } else {
                    self.probe_timeout
                };
                let now = self.clock.now();
                if now.wrapping_sub(since) >= limit {
                    inner.go(Phase::HalfOpen);
                    inner.go(Phase::Probing { since: now });
                    Ok(MutexTicket {
                        counter: inner.counter,
                    })
                } else {
                    Err(MutexRejected)
                }
            }
        }
    }

    /// Reports how an admitted call went; a stale ticket changes nothing.
    pub fn release(&self, ticket: MutexTicket, outcome: Outcome) {
        let mut inner = self.lock();
        if ticket.counter != inner.counter {
            return;
        }
        match (inner.phase, outcome) {
            (Phase::Closed { .. }, Outcome::Success) => {
                inner.phase = Phase::Closed { failures: 0 };
            }
            (Phase::Closed { failures }, Outcome::Failure) => {
                let failures = failures.saturating_add(1);
                if failures >= self.threshold {
                    let since = self.clock.now();
                    inner.go(Phase::Open { since });
                } else {
                    inner.phase = Phase::Closed { failures };
                }
            }
            (Phase::Probing { since }, outcome) => {
                let now = self.clock.now();
                if now.wrapping_sub(since) >= self.probe_timeout {
                    inner.go(Phase::HalfOpen);
                    return;
                }
                inner.go(match outcome {
                    Outcome::Success => Phase::Closed { failures: 0 },
                    Outcome::Failure => Phase::Open { since: now },
                    Outcome::Ignored => Phase::HalfOpen,
                });
            }
            _ => {}
        }
    }

    /// Closes the breaker and makes every earlier ticket stale.
    pub fn force_close(&self) {
        self.lock().go(Phase::Closed { failures: 0 });
    }
}
