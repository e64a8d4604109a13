//! Counters and a state gauge through the `metrics` facade.

use std::sync::{Arc, Mutex, PoisonError};

use metrics::{Counter, Gauge, Unit, counter, describe_counter, describe_gauge, gauge};
use tripword::{Cause, Observer, Outcome, Rejected, Status, Transition};

use super::label::{cause_name, outcome_name, status_name};

/// The metric and label names [`MetricsObserver`] writes, following
/// OpenTelemetry's semantic conventions for naming (dot-separated
/// namespaces, lower snake case, no unit or `_total` in the name, the unit in
/// the description; an exporter to Prometheus adds `_total` and turns dots
/// into underscores). OpenTelemetry has no convention for circuit breakers,
/// so every name is in the `tripword.` namespace.
pub mod names {
    /// Counter (unit `{call}`): releases recorded, by [`OUTCOME`].
    pub const CALLS: &str = "tripword.breaker.calls";
    /// Counter (unit `{call}`): calls not admitted, by [`CAUSE`].
    pub const REJECTIONS: &str = "tripword.breaker.rejections";
    /// Counter (unit `{call}`): releases that were stale and changed
    /// nothing.
    pub const STALE_RELEASES: &str = "tripword.breaker.stale_releases";
    /// Counter (unit `{transition}`): state changes, by the [`STATE`]
    /// entered.
    pub const TRANSITIONS: &str = "tripword.breaker.transitions";
    /// Gauge (unit `1`): 1 for the breaker's [`STATE`] as last reported, 0
    /// for the other three (OpenTelemetry's pattern for states, as
    /// `hw.status` with `hw.state`).
    pub const STATUS: &str = "tripword.breaker.status";
    /// Counter (unit `{call}`), written by a
    /// [`WouldReject`](crate::observe::WouldReject) hook, not by the
    /// observer: calls a breaker in shadow mode
    /// ([`Shadow`](tripword::kit::Shadow)) rejected, and shadow mode
    /// admitted, by [`CAUSE`]. They are counted in [`REJECTIONS`] too: the
    /// breaker reports as it would.
    pub const WOULD_REJECT: &str = "tripword.breaker.would_reject";

    /// Label on every metric: the breaker's name.
    pub const BREAKER: &str = "tripword.breaker.name";
    /// Label of [`CALLS`]: `success`, `failure`, `ignored`.
    pub const OUTCOME: &str = "tripword.call.outcome";
    /// Label of [`REJECTIONS`]: `open`, `probing`, `forced_open`.
    pub const CAUSE: &str = "tripword.rejection.cause";
    /// Label of [`TRANSITIONS`] and [`STATUS`]: `closed`, `open`,
    /// `half_open`, `probing`.
    pub const STATE: &str = "tripword.breaker.state";

    /// Counter (unit `{lookup}`), written by a
    /// [`Registry`](crate::Registry), not by the observer: lookups of a
    /// new key that found every breaker kept holding state, and got a
    /// breaker that is not kept
    /// ([`Registry::overflowed`](crate::Registry::overflowed)), by
    /// [`REGISTRY`].
    pub const REGISTRY_OVERFLOWS: &str = "tripword.registry.overflows";
    /// Label of [`REGISTRY_OVERFLOWS`]: the registry's name
    /// ([`Registry::with_name`](crate::Registry::with_name)), empty if none.
    pub const REGISTRY: &str = "tripword.registry.name";
}

const OUTCOMES: [Outcome; 3] = [Outcome::Success, Outcome::Failure, Outcome::Ignored];
const CAUSES: [Cause; 3] = [Cause::Open, Cause::Probing, Cause::ForcedOpen];
const STATES: [Status; 4] = [
    Status::Closed,
    Status::Open,
    Status::HalfOpen,
    Status::Probing,
];

/// How far behind the last transition written to the gauge a report may be
/// and still be taken as late (reported after a later one). Reports race
/// only with reports made at about the same time, a few counts apart.
const LATE_WINDOW: u32 = 1 << 10;

/// Keeps one breaker's counters and state gauge (names in [`names`], each
/// labelled with the breaker's name).
///
/// The handles are registered when the observer is built, with the
/// recorder installed then (install the exporter first): every series
/// exists from the start, at zero, and a call costs one counter increment
/// (an atomic add in most recorders), not a lookup. Admissions are not
/// counted (they are the recorded and stale releases, plus calls in
/// flight). The gauge shows the state of the last transition reported: an
/// open breaker whose open time is up reads `open` until the next caller
/// moves it, lazily, to `half_open` (as
/// [`Breaker::status`](tripword::Breaker::status) would say at once).
/// Transitions reported out of order by two threads are written in counter
/// order.
///
/// ```
/// use metrics_util::debugging::DebuggingRecorder;
/// use tripword_std::Settings;
/// use tripword_std::observe::MetricsObserver;
///
/// let recorder = DebuggingRecorder::new();
/// let snapshotter = recorder.snapshotter();
/// metrics::with_local_recorder(&recorder, || {
///     let b = Settings::new().failure_threshold(1).build_with(MetricsObserver::new("payments"))?;
///     b.release(b.acquire().unwrap(), tripword::Outcome::Failure); // trips
///     assert!(b.acquire().is_err());
///     Ok::<_, tripword_std::SettingsError>(())
/// })?;
/// let series = snapshotter.snapshot().into_vec();
/// assert!(!series.is_empty());
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
#[derive(Debug)]
pub struct MetricsObserver {
    name: Arc<str>,
    calls: [Counter; 3],
    rejections: [Counter; 3],
    stale: Counter,
    transitions: [Counter; 4],
    status: [Gauge; 4],
    // The counter of the last transition written to the gauge.
    last: Mutex<Option<u32>>,
}

impl MetricsObserver {
    /// An observer for the breaker called `name`: registers its series with
    /// the current recorder, the state gauge at `closed` (a new breaker's
    /// state), and describes the metrics ([`describe`](Self::describe)).
    pub fn new(name: impl Into<Arc<str>>) -> Self {
        Self::describe();
        let name: Arc<str> = name.into();
        let label = name.to_string();
        let calls = OUTCOMES.map(|o| {
            counter!(names::CALLS, names::BREAKER => label.clone(), names::OUTCOME => outcome_name(o))
        });
        let rejections = CAUSES.map(|c| {
            counter!(names::REJECTIONS, names::BREAKER => label.clone(), names::CAUSE => cause_name(c))
        });
        let stale = counter!(names::STALE_RELEASES, names::BREAKER => label.clone());
        let transitions = STATES.map(|s| {
            counter!(names::TRANSITIONS, names::BREAKER => label.clone(), names::STATE => status_name(s))
        });
        let status = STATES.map(|s| {
            gauge!(names::STATUS, names::BREAKER => label.clone(), names::STATE => status_name(s))
        });
        status[0].set(1.0);
        for g in &status[1..] {
            g.set(0.0);
        }
        MetricsObserver {
            name,
            calls,
            rejections,
            stale,
            transitions,
            status,
            last: Mutex::new(None),
        }
    }

    /// Describes the metrics (unit and help text) to the current recorder.
    /// [`new`](Self::new) does it; a recorder that keeps descriptions keeps
    /// the first.
    pub fn describe() {
        describe_counter!(
            names::CALLS,
            Unit::Count,
            "Calls admitted by a circuit breaker whose outcome was recorded, by outcome ({call})."
        );
        describe_counter!(
            names::REJECTIONS,
            Unit::Count,
            "Calls a circuit breaker did not admit, by cause ({call})."
        );
        describe_counter!(
            names::STALE_RELEASES,
            Unit::Count,
            "Releases of tickets from an earlier state, which changed nothing ({call})."
        );
        describe_counter!(
            names::TRANSITIONS,
            Unit::Count,
            "State changes of a circuit breaker, by the state entered ({transition})."
        );
        describe_gauge!(
            names::STATUS,
            "1 for a circuit breaker's current state, 0 for the others."
        );
    }

    /// The breaker's name, as the label gives it.
    pub fn name(&self) -> &str {
        &self.name
    }
}

const fn outcome_index(o: Outcome) -> usize {
    match o {
        Outcome::Success => 0,
        Outcome::Failure => 1,
        Outcome::Ignored => 2,
    }
}

const fn status_index(s: Status) -> usize {
    match s {
        Status::Closed => 0,
        Status::Open => 1,
        Status::HalfOpen => 2,
        Status::Probing => 3,
    }
}

impl Observer for MetricsObserver {
    fn on_transition(&self, t: Transition) {
        self.transitions[status_index(t.to)].increment(1);
        // Transitions are rare: a lock here keeps the four gauges coherent
        // (exactly one at 1) and in counter order. It is the observer's, not
        // the breaker's: the breaker has swapped its word already.
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(seen) = *last {
            let behind = seen.wrapping_sub(t.counter);
            if behind != 0 && behind <= LATE_WINDOW {
                return; // a later transition is already shown
            }
        }
        *last = Some(t.counter);
        for (i, g) in self.status.iter().enumerate() {
            g.set(if i == status_index(t.to) { 1.0 } else { 0.0 });
        }
    }

    #[inline]
    fn on_rejected(&self, rejected: Rejected) {
        let i = match rejected.cause() {
            Cause::Open => 0,
            Cause::Probing => 1,
            Cause::ForcedOpen => 2,
        };
        self.rejections[i].increment(1);
    }

    #[inline]
    fn on_recorded(&self, outcome: Outcome) {
        self.calls[outcome_index(outcome)].increment(1);
    }

    #[inline]
    fn on_stale(&self, _outcome: Outcome) {
        self.stale.increment(1);
    }
}
