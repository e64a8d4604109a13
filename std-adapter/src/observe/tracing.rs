//! `tracing` events for a breaker's transitions and calls.

use std::sync::Arc;

use tracing::{debug, info, trace, warn};
use tripword::{Observer, Outcome, Rejected, Status, Ticket, Transition};

use super::{cause_name, outcome_name, status_name};

/// Emits a `tracing` event (target `tripword`) for each transition, each
/// rejection and each stale release of one breaker, named in every event
/// (field `breaker`).
///
/// | what | level | message | fields |
/// |---|---|---|---|
/// | a transition into `open` (a trip, a failed probe, a forced open) | `WARN` | `circuit breaker opened` | `breaker`, `from`, `to`, `counter`, `forced` |
/// | a transition into `closed` (a recovery, a forced close) | `INFO` | `circuit breaker closed` | same |
/// | a transition into `half_open` or `probing` | `DEBUG` | `circuit breaker half-open` / `circuit breaker probing` | same |
/// | a rejection | `DEBUG` | `call rejected` | `breaker`, `cause`, `retry_after_ticks` (absent when forced open) |
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
}

impl TracingObserver {
    /// An observer for the breaker called `name`.
    pub fn new(name: impl Into<Arc<str>>) -> Self {
        TracingObserver { name: name.into() }
    }

    /// The breaker's name, as the events give it.
    pub fn name(&self) -> &str {
        &self.name
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
        debug!(
            target: "tripword",
            breaker = &*self.name,
            cause = cause_name(rejected.cause()),
            retry_after_ticks = rejected.retry_after(),
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
