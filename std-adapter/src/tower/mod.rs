//! A tower [`Layer`] and [`Service`] (feature `tower`).
//!
//! [`BreakerLayer`] wraps a service in any
//! [`CircuitBreaker`], held through a handle
//! (`Arc<Breaker>`, `&'static Breaker`, `Arc<Entry>` from a registry, or a
//! breaker that is itself a cheap handle): every clone of the service, on
//! every worker, shares the one word. The inner service must be `Clone`:
//! a call the response future makes later (a breaker whose admission needs
//! a round trip, or an inner service that must be polled ready first)
//! hands the service to the response future and keeps a clone, as tower's
//! async middleware does (`docs/services.md`, "The tower layer").
//! [`RegistryLayer`] wraps it in a breaker per key (a host, a route),
//! picked for each request from a [`Registry`](crate::Registry) of any
//! breaker, and otherwise behaves the same; its rejection's
//! [`Rejection`](crate::Rejection) names the key.
//!
//! - **Classification**: by default [`OkOrFailure`], as for
//!   [`call`](crate::BreakerExt::call): an `Err` (the inner service's
//!   error: a connection error, a timeout) is a failure, any response a
//!   success, so the layers work on any service. For HTTP, classify by
//!   status with one call, `.classify(StatusClassifier)`
//!   ([`StatusClassifier`](crate::http::StatusClassifier), feature `http`:
//!   a 5xx is a failure, a 4xx ignored), or a
//!   [`RetryAfterClassifier`](crate::http::RetryAfterClassifier) to honour
//!   `Retry-After`, or a closure over `&Result<Response, Error>`; a
//!   slow-call threshold with [`slow_after`](BreakerLayer::slow_after). The
//!   setters are [`CallPolicy`]'s, and [`policy`](BreakerLayer::policy)
//!   takes a whole one.
//! - **Rejection** is the [`CallError`] of every call form:
//!   [`CallError::Open`] (with the [`Rejection`](crate::Rejection): its
//!   cause, wait, name, and for the [`RegistryLayer`] the request's key)
//!   apart from [`CallError::Inner`], the service's own error. The inner
//!   service is not called. It converts into tower's `BoxError`.
//! - **Readiness fails fast**: [`BreakerService`]'s `poll_ready` reads the
//!   breaker's [`status`](CircuitBreaker::status) (a read: it elects no
//!   probe, so a service made ready and then dropped, or never called,
//!   holds none). A breaker that would reject (open, forced open, or
//!   probing: its probes all held by other calls) makes the service ready
//!   at once without polling the inner service, which an outage often
//!   leaves not ready (a pool that reconnects); `call` then rejects.
//!   Otherwise (closed, half-open, a trial of several probes with room,
//!   or recovering through a ramp, which admits a share of calls) the
//!   readiness is the inner service's; a call the ramp refuses is
//!   [`CallError::Open`] with cause [`Ramp`](tripword::Cause::Ramp) and
//!   the wait until the ramp's next stage (`docs/services.md`, "Recovery
//!   options"). The breaker is asked in `call`, and the response
//!   future records the outcome when it completes, or the cancel outcome
//!   ([`Ignored`](tripword::Outcome::Ignored) by default) when it is dropped
//!   before. Admitted at `call` while the inner service was not polled
//!   ready (the breaker's open time ran out in between), the response
//!   future polls it ready before calling it. [`RegistryLayer`] learns the
//!   key only at `call`: its readiness is the inner service's, so it cannot
//!   fail fast by key while that is not ready ([`RegistryService`]).
//! - **`Send`**: the response futures name the inner service's future, not
//!   the service or the request, so a layered call is `Send` whenever that
//!   future is, for a request type that borrows too. A call made later (a
//!   remote breaker's admission, the readiness above) holds the service and
//!   the request in a box of the service's [`Deferral`]: `Send` by default,
//!   or not, for a service that is not, with
//!   [`BreakerService::local`].
//!
//! ```
//! use std::convert::Infallible;
//! use std::sync::Arc;
//! use std::time::Duration;
//! use http::{Request, Response, StatusCode};
//! use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
//! use tripword::Status;
//! use tripword_std::http::StatusClassifier;
//! use tripword_std::tower::BreakerLayer;
//! use tripword_std::{CallError, Settings};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let breaker = Arc::new(Settings::new().failure_threshold(2).open_for(Duration::from_secs(30)).build()?);
//! let flaky = service_fn(|_req: Request<()>| async {
//!     Ok::<_, Infallible>(Response::builder().status(StatusCode::SERVICE_UNAVAILABLE).body(()).unwrap())
//! });
//! let mut client = ServiceBuilder::new()
//!     .layer(BreakerLayer::new(breaker.clone()).classify(StatusClassifier))
//!     .service(flaky);
//!
//! for _ in 0..2 {
//!     let response = client.ready().await?.call(Request::new(())).await?;
//!     assert_eq!(response.status(), 503); // the response still reaches the caller
//! }
//! assert_eq!(breaker.status(), Status::Open);
//! match client.ready().await?.call(Request::new(())).await {
//!     Err(CallError::Open(rejected)) => println!("not called: {rejected}"),
//!     other => panic!("{other:?}"),
//! }
//! # Ok(())
//! # }
//! ```

// A file each: `deferral` (the boxes of a call made later) <- `future`
// (the response future, on `crate::call`'s `CallAsync`) <- `service` <-
// `layer`; `keyed/` the same for a breaker per key, on top of this
// folder's `deferral` and `future`. Nothing here imports this file.

#[cfg(doc)]
use tower_layer::Layer;
#[cfg(doc)]
use tower_service::Service;
#[cfg(doc)]
use tripword::kit::CircuitBreaker;

#[cfg(doc)]
use crate::call::CallError;
#[cfg(doc)]
use crate::classify::OkOrFailure;
#[cfg(doc)]
use crate::policy::CallPolicy;

mod deferral;
mod future;
mod keyed;
mod layer;
mod service;

pub use deferral::{Defer, Deferral, LocalDeferral, SendDeferral};
pub use future::ResponseFuture;
pub use keyed::{KeyedResponseFuture, RegistryLayer, RegistryService};
pub use layer::BreakerLayer;
pub use service::BreakerService;
