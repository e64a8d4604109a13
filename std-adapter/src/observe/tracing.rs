//! `tracing` events for a breaker's transitions and calls.

use std::sync::Arc;

use tracing::{debug, info, trace, warn};
use tripword::{Observer, Outcome, Rejected, Status, Ticket, Transition};

use super::label::{cause_name, outcome_name, status_name};

/// Emits a `tracing` event (target `tripword`) for each transition, each
/// rejection and each stale release of one breaker, named in every event
/// (field `breaker`).
///
/// | what | level | message | fields |
/// |---|---|---|---|
/// | a transition into `open` (a trip, a failed probe, a forced open) | `WARN` | `circuit breaker opened` | `breaker`, `from`, `to`, `counter`, `forced` |
/// | a transition into `closed` (a recovery, a forced close) | `INFO` | `circuit breaker closed` | same |
/// | a transition into `half_open` or `probing` | `DEBUG` | `circuit breaker half-open` / `circuit breaker probing` | same |
/// | a rejection | `DEBUG` | `call rejected` | `breaker`, `cause`, `retry_after_ms` (absent when forced open) |
/// | a stale release | `DEBUG` | `stale release ignored` | `breaker`, `outcome` |
/// | an admission | `TRACE` | `call admitted` | `breaker`, `counter`, `probe` |
/// | a recorded release | `TRACE` | `call recorded` | `breaker`, `outcome` |
/// | a corrupt word (spec I8) | `ERROR` | `corrupt breaker word replaced by closed` | `breaker`, `raw`, `counter` |
///
/// States, outcomes and causes are written as [`status_name`],
/// [`outcome_name`] and [`cause_name`] write them. Per-call events are at
/// `DEBUG` and `TRACE`: with those levels off (the usual production filter)
/// each costs the level check `tracing` makes, a load and a compare.
///
/// **Waits in milliseconds.** `retry_after_ms` is the rejection's wait in
/// whole milliseconds, rounded up (a caller that waits that long is not
/// early). An observer sees the wait in its breaker's ticks, and is built
/// apart from the breaker, so it is told the tick length: `new` assumes
/// 1 µs, the tick of [`MonotonicClock`](crate::MonotonicClock) and
/// [`ManualTime`](crate::ManualTime) (what [`Settings::build`](crate::Settings::build),
/// [`build_with`](crate::Settings::build_with) and
/// [`Registry::from_settings_on`](crate::Registry::from_settings_on) with
/// `MonotonicClock` use); on
/// another clock, say so with [`tick`](Self::tick)
/// (`.tick(MillisClock::TICK)`), or, on a clock with no stated tick length
/// (a [`ManualClock`](tripword::clock::ManualClock)), with
/// [`in_ticks`](Self::in_ticks): the field is then `retry_after_ticks`.
///
/// ```
/// use tripword_std::Settings;
/// use tripword_std::observe::TracingObserver;
///
/// let b = Settings::new().build_with(TracingObserver::new("payments"))?;
/// b.force_open(); // WARN tripword: circuit breaker opened breaker="payments" from="closed" to="open" counter=1 forced=true
/// assert_eq!(b.observer().name(), "payments");
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
#[derive(Clone, Debug)]
pub struct TracingObserver {
    name: Arc<str>,
    // The breaker's tick length in nanoseconds; 0 when the clock states
    // none (waits in ticks).
    tick_nanos: u64,
}

impl TracingObserver {
    /// An observer for the breaker called `name`, on a clock of 1 µs ticks
    /// ([`MonotonicClock`](crate::MonotonicClock),
    /// [`ManualTime`](crate::ManualTime)); see [`tick`](Self::tick) for
    /// another.
    pub fn new(name: impl Into<Arc<str>>) -> Self {
        TracingObserver {
            name: name.into(),
            tick_nanos: 1_000,
        }
    }

    /// The breaker's clock ticks `tick` long (`MillisClock::TICK`, or any
    /// [`RealClock::TICK`](crate::RealClock::TICK)): waits are converted
    /// with it (a zero `tick` is read as 1 ns).
    ///
    /// ```
    /// use tripword_std::observe::TracingObserver;
    /// use tripword_std::{MillisClock, RealClock, Settings, W32};
    ///
    /// let b: tripword_std::MillisBreaker<W32, _> = Settings::new()
    ///     .build_on(MillisClock, TracingObserver::new("search").tick(MillisClock::TICK))?;
    /// # let _ = b;
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    pub fn tick(mut self, tick: std::time::Duration) -> Self {
        self.tick_nanos = u64::try_from(tick.as_nanos()).unwrap_or(u64::MAX).max(1);
        self
    }

    /// The breaker's clock states no tick length (a
    /// [`ManualClock`](tripword::clock::ManualClock)): a rejection's wait is
    /// given in ticks, as the field `retry_after_ticks`.
    pub fn in_ticks(mut self) -> Self {
        self.tick_nanos = 0;
        self
    }

    /// The breaker's name, as the events give it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ticks` in whole milliseconds, rounded up; saturates.
    fn millis(&self, ticks: u64) -> u64 {
        let nanos = u128::from(ticks) * u128::from(self.tick_nanos);
        u64::try_from(nanos.div_ceil(1_000_000)).unwrap_or(u64::MAX)
    }
}

macro_rules! transition_event {
    ($level:ident, $self:ident, $t:ident, $message:literal) => {
        $level!(
            target: "tripword",
            breaker = &*$self.name,
            from = status_name($t.from),
            to = status_name($t.to),
            counter = $t.counter,
            forced = $t.forced,
            $message
        )
    };
}

impl Observer for TracingObserver {
    fn on_transition(&self, t: Transition) {
        match t.to {
            Status::Open => transition_event!(warn, self, t, "circuit breaker opened"),
            Status::Closed => transition_event!(info, self, t, "circuit breaker closed"),
            Status::HalfOpen => transition_event!(debug, self, t, "circuit breaker half-open"),
            Status::Probing => transition_event!(debug, self, t, "circuit breaker probing"),
            Status::Recovering => {
                transition_event!(info, self, t, "circuit breaker recovering (ramping up)")
            }
        }
    }

    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        tracing::error!(
            target: "tripword",
            breaker = &*self.name,
            raw,
            counter,
            "corrupt breaker word replaced by closed"
        );
    }

    #[inline]
    fn on_admitted(&self, ticket: &Ticket) {
        trace!(
            target: "tripword",
            breaker = &*self.name,
            counter = ticket.counter(),
            probe = ticket.is_probe(),
            "call admitted"
        );
    }

    #[inline]
    fn on_rejected(&self, rejected: Rejected) {
        // One of the two waits, the other absent (as both are when forced
        // open); computed only when the event is enabled.
        debug!(
            target: "tripword",
            breaker = &*self.name,
            cause = cause_name(rejected.cause()),
            retry_after_ms = rejected
                .retry_after()
                .filter(|_| self.tick_nanos != 0)
                .map(|ticks| self.millis(ticks)),
            retry_after_ticks = rejected.retry_after().filter(|_| self.tick_nanos == 0),
            "call rejected"
        );
    }

    #[inline]
    fn on_recorded(&self, outcome: Outcome) {
        trace!(
            target: "tripword",
            breaker = &*self.name,
            outcome = outcome_name(outcome),
            "call recorded"
        );
    }

    fn on_stale(&self, outcome: Outcome) {
        debug!(
            target: "tripword",
            breaker = &*self.name,
            outcome = outcome_name(outcome),
            "stale release ignored"
        );
    }
}
