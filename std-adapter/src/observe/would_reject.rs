//! The counter of shadow mode: [`WouldReject`], the hook that counts the
//! calls a breaker in shadow mode rejected and admitted anyway.

use metrics::{Counter, Unit, counter, describe_counter};
use tripword::kit::ShadowObserver;
use tripword::{Cause, Rejected};

use super::label::cause_name;
use super::metrics::{MetricsObserver, names};

const CAUSES: [Cause; 4] = [Cause::Open, Cause::Probing, Cause::ForcedOpen, Cause::Ramp];

/// Counts the calls a breaker in shadow mode
/// ([`Shadow`](tripword::kit::Shadow)) would have rejected: a
/// [`ShadowObserver`] that adds one to [`names::WOULD_REJECT`], labelled
/// with the breaker's name and the [`names::CAUSE`], for each rejection
/// shadow mode turned into an admission.
///
/// The breaker's [`MetricsObserver`] counts those calls in
/// [`names::REJECTIONS`] as well (the breaker reports as it would), so on
/// a dashboard the calls actually turned away are `rejections -
/// would_reject`, and all of them are while shadow mode is on. Cheap to
/// clone (counter handles): a remote breaker's admission that needs a
/// round trip takes a clone.
///
/// ```
/// use metrics_util::debugging::DebuggingRecorder;
/// use tripword::kit::{CircuitBreaker, Shadow};
/// use tripword_std::Settings;
/// use tripword_std::observe::MetricsObserver;
///
/// let recorder = DebuggingRecorder::new();
/// metrics::with_local_recorder(&recorder, || {
///     let b = Settings::new().build_with(MetricsObserver::new("payments"))?;
///     let would_reject = b.observer().would_reject();
///     let b = Shadow::with_observer(b, would_reject, true);
///     b.inner().force_open();
///     let t = b.acquire().unwrap(); // runs; counted as would-be rejected
///     # let _ = b.release(t, tripword::Outcome::Success);
///     Ok::<_, tripword_std::SettingsError>(())
/// })?;
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
#[derive(Clone, Debug)]
pub struct WouldReject {
    rejections: [Counter; 4],
}

impl WouldReject {
    /// The hook for the breaker called `name`: registers its series with
    /// the current recorder (at zero) and describes the metric.
    pub fn new(name: &str) -> Self {
        describe_counter!(
            names::WOULD_REJECT,
            Unit::Count,
            "Calls a circuit breaker in shadow mode rejected and admitted anyway, by cause ({call})."
        );
        let rejections = CAUSES.map(|c| {
            counter!(
                names::WOULD_REJECT,
                names::BREAKER => name.to_string(),
                names::CAUSE => cause_name(c)
            )
        });
        WouldReject { rejections }
    }
}

impl MetricsObserver {
    /// The [`WouldReject`] hook for this observer's breaker (the same
    /// breaker name), to wrap the breaker in shadow mode with.
    pub fn would_reject(&self) -> WouldReject {
        WouldReject::new(self.name())
    }
}

impl ShadowObserver for WouldReject {
    #[inline]
    fn on_shadow_admitted(&self, rejected: Rejected) {
        let i = match rejected.cause() {
            Cause::Open => 0,
            Cause::Probing => 1,
            Cause::ForcedOpen => 2,
            Cause::Ramp => 3,
        };
        self.rejections[i].increment(1);
    }
}
