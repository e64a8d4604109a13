//! Counters and a state gauge through the `metrics` facade.

use std::sync::{Arc, Mutex, PoisonError};

use metrics::{Counter, Gauge, Unit, counter, describe_counter, describe_gauge, gauge};
use tripword::{Cause, Observer, Outcome, Rejected, Status, Transition, W32, W64, Word};

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
const CAUSES: [Cause; 4] = [Cause::Open, Cause::Probing, Cause::ForcedOpen, Cause::Ramp];
const STATES: [Status; 5] = [
    Status::Closed,
    Status::Open,
    Status::HalfOpen,
    Status::Probing,
    Status::Recovering,
];

/// The order of a breaker's state counters, learnt from the counters it
/// reports: the counter field's width decides which of two counters is the
/// later (serial-number arithmetic: `a` is later than `b` when `a - b`,
/// modulo `2^width`, is below half the ring), and an observer is not told
/// its breaker's word. The width is [`W64`]'s 22 bits (32 once a counter
/// needs more, for a breaker of another crate) until the counters show
/// [`W32`]'s 10-bit wrap: while no counter has passed `W32`'s largest, one
/// more than half of `W32`'s ring behind the counter shown is the counter
/// after the wrap, since reports race only with reports made at about the
/// same time, fewer than half a ring apart (a `W64` report that late
/// cannot happen). A later counter past `W32`'s largest widens it back.
#[derive(Debug)]
struct CounterOrder {
    /// The counter of the last transition written to the gauge.
    shown: Option<u32>,
    /// The counter field's width, as learnt.
    bits: u32,
    /// Whether a counter past `W32`'s largest has been seen.
    wide: bool,
}

impl CounterOrder {
    const NARROW: u32 = W32::LAYOUT.counter_bits;
    const WIDE: u32 = W64::LAYOUT.counter_bits;

    const fn new() -> Self {
        CounterOrder {
            shown: None,
            bits: Self::WIDE,
            wide: false,
        }
    }

    /// Learns from `counter` and tells whether it is later than the
    /// counter shown; if so, it is the counter shown from now on.
    fn show(&mut self, counter: u32) -> bool {
        if counter > W64::LAYOUT.max_counter() {
            (self.bits, self.wide) = (u32::BITS, true);
        } else if counter > W32::LAYOUT.max_counter() {
            (self.bits, self.wide) = (self.bits.max(Self::WIDE), true);
        }
        let Some(shown) = self.shown else {
            self.shown = Some(counter);
            return true;
        };
        let half_narrow = 1 << (Self::NARROW - 1);
        if !self.wide && shown.saturating_sub(counter) > half_narrow {
            self.bits = Self::NARROW; // W32's counter wrapped
        }
        let later = is_later(counter, shown, self.bits);
        if later {
            self.shown = Some(counter);
        }
        later
    }
}

/// Whether counter `a` is later than counter `b` in a counter field of
/// `bits` bits (1 to 32): `a - b` modulo `2^bits` is neither zero nor half
/// the ring or more.
const fn is_later(a: u32, b: u32, bits: u32) -> bool {
    let mask = u32::MAX >> (u32::BITS - bits);
    let ahead = a.wrapping_sub(b) & mask;
    ahead != 0 && ahead < 1 << (bits - 1)
}

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
/// order, the order of the breaker's counter field across its wrap (every
/// 1 024 transitions of a [`W32`] breaker, 4 194 304 of a [`W64`]): the
/// observer learns the field's width from the counters reported.
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
    rejections: [Counter; 4],
    stale: Counter,
    transitions: [Counter; 5],
    status: [Gauge; 5],
    // The counter of the last transition written to the gauge, in the
    // order of the breaker's counter field.
    order: Mutex<CounterOrder>,
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
            order: Mutex::new(CounterOrder::new()),
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
        Status::Recovering => 4,
    }
}

impl Observer for MetricsObserver {
    fn on_transition(&self, t: Transition) {
        self.transitions[status_index(t.to)].increment(1);
        // Transitions are rare: a lock here keeps the four gauges coherent
        // (exactly one at 1) and in counter order. It is the observer's, not
        // the breaker's: the breaker has swapped its word already.
        let mut order = self.order.lock().unwrap_or_else(PoisonError::into_inner);
        if !order.show(t.counter) {
            return; // a later transition is already shown
        }
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
            Cause::Ramp => 3,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(order: &mut CounterOrder, counters: &[u32]) -> Vec<bool> {
        counters.iter().map(|&c| order.show(c)).collect()
    }

    #[test]
    fn counters_compare_modulo_the_field_below_half_the_ring() {
        assert!(is_later(1, 0, 10) && !is_later(0, 1, 10));
        assert!(is_later(0, 1023, 10) && !is_later(1023, 0, 10));
        assert!(is_later(511, 0, 10) && !is_later(512, 0, 10));
        assert!(!is_later(7, 7, 10));
        assert!(is_later(0, (1 << 22) - 1, 22) && !is_later((1 << 22) - 1, 0, 22));
        assert!(is_later(0, u32::MAX, 32) && !is_later(u32::MAX, 0, 32));
    }

    /// A `W64` breaker's counters pass 1 023 into 1 024: no narrowing, and
    /// a report crossing another there is late.
    #[test]
    fn w64_counters_through_1024_keep_the_wide_order() {
        let mut order = CounterOrder::new();
        assert_eq!(
            shown(&mut order, &[1022, 1024, 1023, 1025]),
            [true, true, false, true]
        );
        assert_eq!(order.bits, 22);
        // Past the 22-bit wrap, the last counter before it is late.
        let mut order = CounterOrder::new();
        let max = W64::LAYOUT.max_counter();
        assert_eq!(
            shown(&mut order, &[max, 0, max, 1]),
            [true, true, false, true]
        );
    }

    /// A `W32` breaker's wrap narrows the order to 10 bits, a report
    /// crossing the wrap included; a counter past 1 023 widens it back.
    #[test]
    fn a_w32_wrap_narrows_the_order_and_a_wide_counter_widens_it() {
        let mut order = CounterOrder::new();
        assert_eq!(
            shown(&mut order, &[1021, 1023, 0, 1022, 1]),
            [true, true, true, false, true]
        );
        assert_eq!(order.bits, 10);
        // 513 behind (less than half the ring ahead, modulo 1 024) is the
        // least that reads as the wrap; 512 is late.
        let mut order = CounterOrder::new();
        assert_eq!(shown(&mut order, &[600, 87, 86]), [true, true, false]);
        assert_eq!(order.bits, 10);
        let mut order = CounterOrder::new();
        assert_eq!(shown(&mut order, &[600, 88]), [true, false]);
        assert_eq!(order.bits, 22);
        // A counter only a wider field holds widens it back.
        let mut order = CounterOrder::new();
        assert_eq!(shown(&mut order, &[1000, 1, 1024]), [true, true, true]);
        assert_eq!(order.bits, 22);
        assert!(order.show(1 << 22) && order.bits == 32);
    }
}
