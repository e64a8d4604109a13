//! Observers for services: [`TracingObserver`] (feature `tracing`) emits
//! `tracing` events, [`MetricsObserver`] (feature `metrics`) keeps counters
//! and a state gauge through the `metrics` facade. Each carries the
//! breaker's name, so a service with one breaker per dependency (see
//! [`Registry`](crate::Registry)) can tell them apart; put both on one
//! breaker as a pair, `(tracing, metrics)`.
//!
//! Names, levels and labels are in `docs/services.md`, "Observability".
//!
//! The names of states, outcomes and causes, as both observers write them
//! (lower snake case, as OpenTelemetry writes attribute values), are the
//! functions of this module.

use tripword::{Cause, Outcome, Status};

#[cfg(feature = "metrics")]
mod metrics;
#[cfg(feature = "tracing")]
mod tracing;

#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use self::metrics::{MetricsObserver, names};
#[cfg(feature = "tracing")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
pub use self::tracing::TracingObserver;

/// `closed`, `open`, `half_open`, `probing`.
///
/// ```
/// assert_eq!(tripword_std::observe::status_name(tripword::Status::HalfOpen), "half_open");
/// ```
pub const fn status_name(status: Status) -> &'static str {
    match status {
        Status::Closed => "closed",
        Status::Open => "open",
        Status::HalfOpen => "half_open",
        Status::Probing => "probing",
    }
}

/// `success`, `failure`, `ignored`.
///
/// ```
/// assert_eq!(tripword_std::observe::outcome_name(tripword::Outcome::Ignored), "ignored");
/// ```
pub const fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Success => "success",
        Outcome::Failure => "failure",
        Outcome::Ignored => "ignored",
    }
}

/// `open`, `probing`, `forced_open`.
///
/// ```
/// assert_eq!(tripword_std::observe::cause_name(tripword::Cause::ForcedOpen), "forced_open");
/// ```
pub const fn cause_name(cause: Cause) -> &'static str {
    match cause {
        Cause::Open => "open",
        Cause::Probing => "probing",
        Cause::ForcedOpen => "forced_open",
    }
}
