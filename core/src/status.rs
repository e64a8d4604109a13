//! The states a user sees.

/// What [`Breaker::status`](crate::Breaker::status) reports.
///
/// The operator-held open of `force_open` reads as [`Status::Open`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Calls are admitted.
    Closed,
    /// Calls are rejected at once.
    Open,
    /// The next caller becomes the probe.
    HalfOpen,
    /// A probe is running (or, with several probes, all of them are);
    /// other calls are rejected.
    Probing,
    /// Recovered, on a progressive ramp (`Config::ramp`): a growing share
    /// of calls is admitted, the rest rejected, until the ramp ends in
    /// `Closed`.
    Recovering,
}

impl core::fmt::Display for Status {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Status::Closed => "closed",
            Status::Open => "open",
            Status::HalfOpen => "half-open",
            Status::Probing => "probing",
            Status::Recovering => "recovering",
        })
    }
}

/// A breaker's state as one value, for a dashboard, a health endpoint, or
/// a registry deciding what it may forget: what
/// [`CircuitBreaker::health`](crate::CircuitBreaker::health) returns. A
/// read: it stores nothing and reports nothing.
///
/// A breaker that keeps less than this (one of another crate with no
/// counter, no window) leaves those fields at their zero values, which is
/// what [`Health::of_status`] builds.
///
/// ```
/// use tripword::clock::ManualClock;
/// use tripword::{Breaker, CircuitBreaker, Config, Health, Outcome, Status};
///
/// static CLOCK: ManualClock = ManualClock::new(0);
/// let b = Breaker::new(Config::new().failure_threshold(3).open_for(100), &CLOCK);
/// assert!(b.health().is_blank());
/// b.release(b.acquire()?, Outcome::Failure);
/// let h = b.health();
/// assert_eq!((h.status, h.failures), (Status::Closed, 1));
/// assert!(!h.is_blank()); // a registry keeps it: it remembers a failure
/// b.force_open_for(100);
/// CLOCK.advance(40);
/// assert_eq!(b.health().retry_after, Some(60));
/// # Ok::<(), tripword::Rejected>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Health {
    /// The status, as [`CircuitBreaker::status`](crate::CircuitBreaker::status) reads it.
    pub status: Status,
    /// The state counter (spec I10), `None` for a breaker without one.
    pub counter: Option<u32>,
    /// Consecutive failures counted in `Closed` (0 in the other states).
    pub failures: u32,
    /// Trips since the breaker was last closed (the backoff's exponent).
    pub trips: u32,
    /// Calls in a failure-rate breaker's window under the current `Closed`
    /// state (0 for the consecutive policy).
    pub window_calls: u64,
    /// Failures among [`window_calls`](Self::window_calls).
    pub window_failures: u64,
    /// Held open by an operator (`force_open`): no timer ends it.
    pub forced: bool,
    /// For a breaker that rejects now: how long, in the clock's ticks,
    /// until an admission could succeed (what a rejection would say);
    /// `None` when it admits now, or when it is forced open.
    pub retry_after: Option<u64>,
}

impl Health {
    /// What a breaker that knows only its status says: every count zero,
    /// no counter, no wait.
    pub const fn of_status(status: Status) -> Health {
        Health {
            status,
            counter: None,
            failures: 0,
            trips: 0,
            window_calls: 0,
            window_failures: 0,
            forced: false,
            retry_after: None,
        }
    }

    /// `Closed` with nothing counted: what a breaker made now would say.
    /// A registry forgets only such breakers (`docs/spec.md`, "Registries
    /// under a flood of keys").
    pub const fn is_blank(&self) -> bool {
        matches!(self.status, Status::Closed)
            && self.failures == 0
            && self.window_calls == 0
            && !self.forced
    }
}
