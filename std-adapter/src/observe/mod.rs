//! Observers for services: [`TracingObserver`] (feature `tracing`) emits
//! `tracing` events, [`MetricsObserver`] (feature `metrics`) keeps counters
//! and a state gauge through the `metrics` facade, and [`WouldReject`]
//! (feature `metrics`) counts the calls shadow mode admitted
//! ([`Shadow`](tripword::kit::Shadow)). Each carries the
//! breaker's name, so a service with one breaker per dependency (see
//! [`Registry`](crate::Registry)) can tell them apart; put both on one
//! breaker as a pair, `(tracing, metrics)`.
//!
//! Names, levels and labels are in `docs/services.md`, "Observability".
//!
//! The names of states, outcomes and causes, as both observers write them
//! (lower snake case, as OpenTelemetry writes attribute values), are the
//! functions of this module.

// `label` (the names of states, outcomes and causes) <- `metrics`,
// `tracing`; `metrics` <- `would_reject`; nothing here imports this file.

mod label;
#[cfg(feature = "metrics")]
mod metrics;
#[cfg(feature = "tracing")]
mod tracing;
#[cfg(feature = "metrics")]
mod would_reject;

#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use self::metrics::{MetricsObserver, names};
#[cfg(feature = "tracing")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
pub use self::tracing::TracingObserver;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use self::would_reject::WouldReject;

pub use label::*;
