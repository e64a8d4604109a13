//! Real time, closures and futures for the [`tripword`] circuit breaker.
//!
//! The core is `no_std` and counts time in abstract ticks; this crate adds
//! what a service on `std` expects:
//!
//! - [`clock`]: [`MonotonicClock`] (1 µs ticks on [`std::time::Instant`]) and
//!   [`MillisClock`] (1 ms ticks), zero-sized, usable in `static`s;
//! - [`settings`]: [`Settings`], a configuration in
//!   [`Duration`](std::time::Duration)s that converts to the core's
//!   [`ValidConfig`] in a clock's ticks (each
//!   duration lasting at least as long as set) and says in durations which
//!   field is out of range, and [`StdBreaker`] and [`StdRateBreaker`],
//!   breakers on the real clock (consecutive failures, failure rate);
//! - [`call`]: [`BreakerExt::call`] runs a closure through any breaker
//!   (every clock, width, observer and config source): `Ok`
//!   counts as a success, `Err` as a failure, a panic as a failure (and keeps
//!   unwinding), and [`CallError`] keeps "circuit open, not called" apart
//!   from the function's own error;
//! - [`classify`]: classifiers for a [`CallPolicy`]
//!   ([`BreakerExt::call_with`]), so that a 404 can be
//!   [`Ignored`](tripword::Outcome::Ignored), and
//!   [`Verdict::FailureFor`](classify::Verdict::FailureFor), a failure that
//!   keeps the breaker open as long as the dependency asked (`Retry-After`);
//! - [`future`]: [`BreakerExt::call_async`] runs a future through any
//!   breaker: admitted before its first poll, its outcome recorded once when
//!   it completes, a panic a failure, a cancelled (dropped) call
//!   [`Ignored`](tripword::Outcome::Ignored) by default;
//! - [`policy`]: [`CallPolicy`], the classifier, a slow-call threshold,
//!   the cancel outcome and the fallback, kept next to a breaker and given
//!   to [`call_with`](BreakerExt::call_with) and
//!   [`call_async_with`](BreakerExt::call_async_with);
//! - a fallback ([`CallPolicy::fallback`]) gets the
//!   [`Rejection`], whose wait is a `Duration` on a [`RealClock`];
//!   [`ManualTime`] is a hand-moved clock for tests;
//! - [`registry`]: [`Registry`], one breaker per key (host, endpoint),
//!   made on first use by a factory (any breaker) or from
//!   [`RegistrySettings`] (a default and overrides by key), found without
//!   a lock, bounded, idle keys evicted, each named in its events;
//! - [`observe`]: observers that name their breaker, `TracingObserver`
//!   (feature `tracing`) and `MetricsObserver` (feature `metrics`);
//! - features: `http` (`tripword_std::http`: 5xx fail, 4xx ignored,
//!   `Retry-After`), `tower` (`tower::BreakerLayer`), `tokio`
//!   (`tokio::timeout`, a deadline counted as a failure), `tracing`,
//!   `metrics`, `serde` (`Settings` from config files).
//!
//! The guides are `docs/services.md` and `docs/registry.md` in the repository.
//!
//! Import with [`use tripword_std::prelude::*;`](prelude): the traits and
//! the common types, without the modules (a glob of the crate root would
//! shadow the `http`, `tokio` and `tower` crates with this crate's modules
//! of those names). The core's common types are re-exported here
//! ([`Status`], [`Cause`], [`Outcome`], [`W64`], [`Config`], ...) and the
//! core itself as [`tripword_std::tripword`](tripword), so a service needs
//! no `tripword` dependency of its own.
//!
//! ```
//! use tripword_std::prelude::*;
//!
//! let breaker = Settings::new()
//!     .failure_threshold(3)
//!     .open_for(Duration::from_millis(200))
//!     .build()?;
//!
//! fn fetch(up: bool) -> Result<&'static str, &'static str> {
//!     if up { Ok("data") } else { Err("service down") }
//! }
//!
//! # let tripped = std::time::Instant::now();
//! for _ in 0..3 {
//!     assert_eq!(breaker.call(|| fetch(false)), Err(CallError::Inner("service down")));
//! }
//! let status = breaker.status();
//! let answer = breaker.call(|| fetch(true));
//! # // Checked only if this thread was not descheduled past the open time.
//! # if tripped.elapsed() < Duration::from_millis(200) {
//! assert_eq!(status, Status::Open);
//! // Open: answered at once, `fetch` is not called.
//! assert!(answer.unwrap_err().is_open());
//! # }
//!
//! std::thread::sleep(Duration::from_millis(250));
//! assert_eq!(breaker.call(|| fetch(true)), Ok("data")); // the probe
//! assert_eq!(breaker.status(), Status::Closed);
//! # Ok::<(), tripword_std::SettingsError>(())
//! ```
//!
//! Closures, futures and the tower service share one settling guard, which
//! records exactly one outcome per admitted call.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod call;
pub mod classify;
pub mod clock;
#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub mod declare;
pub mod future;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
pub mod jitter;
pub mod observe;
pub mod policy;
pub mod registry;
pub mod settings;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub mod tokio;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub mod tower;

// Shown as re-exports, not inlined: the items' pages are their modules'
// (`tripword_std::call::CallError`), as when those modules defined them.
#[doc(no_inline)]
pub use call::{BreakerExt, CallError, CallResult, Rejection};
#[cfg(feature = "coarsetime")]
#[cfg_attr(docsrs, doc(cfg(feature = "coarsetime")))]
pub use clock::{CoarseClock, RecentClock};
pub use clock::{ManualTime, MillisClock, MonotonicClock, RealClock};
#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use declare::{LazyObserver, NamedBreaker, breaker, breakers};
#[doc(no_inline)]
pub use future::CallAsync;
pub use jitter::jitter_seed;
pub use policy::CallPolicy;
#[doc(no_inline)]
pub use registry::{Entry, Registry};
pub use registry::{RegistrySettings, RegistrySettingsError};
pub use settings::{
    FailureRate, MillisBreaker, RampSettings, Settings, SettingsError, StdBreaker, StdRateBreaker,
};
/// The core crate, for what is not re-exported here (`tripword::rate`,
/// `tripword::cell`, ...): a service needs no `tripword` dependency of its
/// own.
#[doc(no_inline)]
pub use tripword;
pub use tripword::kit::CircuitBreaker;
#[doc(no_inline)]
pub use tripword::{
    Breaker, Cause, Clock, Config, ConfigError, Observer, OnTransition, Outcome, Ramp, Rejected,
    Status, Transition, ValidConfig, W32, W64, Word,
};

/// The names most code needs: `use tripword_std::prelude::*;`.
///
/// The traits ([`BreakerExt`], [`CircuitBreaker`], [`RealClock`],
/// [`Clock`]) and the common types, without the modules.
/// Prefer it to `use tripword_std::*`: that glob also imports the modules
/// `tripword_std::http`, `tokio` and `tower` (with their features), which
/// then shadow the `http`, `tokio` and `tower` crates in the importing
/// module, so `tower::ServiceBuilder` stops resolving.
///
/// ```
/// use tripword_std::prelude::*;
///
/// let b: StdBreaker = Settings::new().open_for(Duration::from_millis(10)).build()?;
/// assert_eq!(b.call(|| Ok::<_, ()>(1)), Ok(1));
/// assert_eq!(b.status(), Status::Closed);
///
/// // A registry, every key's breaker from the same settings.
/// let hosts: Registry<String> = Registry::from_settings(&Settings::new().failure_threshold(1).into())?;
/// let _ = hosts.with("db", |b| b.call(|| Err::<(), _>("down")));
/// assert_eq!(hosts.get("db").status(), Status::Open);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub mod prelude {
    #[doc(no_inline)]
    pub use crate::{
        BreakerExt, CallAsync, CallError, CallPolicy, CircuitBreaker, ManualTime, MillisClock,
        MonotonicClock, RealClock, Registry, RegistrySettings, Rejection, Settings, SettingsError,
        StdBreaker,
    };
    #[doc(no_inline)]
    pub use std::time::Duration;
    #[doc(no_inline)]
    pub use tripword::{Breaker, Cause, Clock, Outcome, Rejected, Status, W32, W64};
}

/// The README's examples, compiled and run as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// `docs/services.md`'s examples, as doctests (they need the `tower`,
/// `tokio`, `tracing`, `metrics` and `serde` features: `--all-features`).
#[cfg(all(
    doctest,
    feature = "tower",
    feature = "tokio",
    feature = "tracing",
    feature = "metrics",
    feature = "serde",
    feature = "macros"
))]
#[doc = include_str!("../../docs/services.md")]
pub struct ServicesDoctests;

/// `docs/registry.md`'s examples, as doctests (the same features).
#[cfg(all(
    doctest,
    feature = "tower",
    feature = "tokio",
    feature = "tracing",
    feature = "metrics",
    feature = "serde"
))]
#[doc = include_str!("../../docs/registry.md")]
pub struct RegistryDoctests;
