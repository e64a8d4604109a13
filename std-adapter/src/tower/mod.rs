//! A tower [`Layer`] and [`Service`] (feature `tower`).
//!
//! [`BreakerLayer`] wraps a service in any
//! [`CircuitBreaker`], held through a handle
//! (`Arc<Breaker>`, `&'static Breaker`, `Arc<Entry>` from a registry, or a
//! breaker that is itself a cheap handle): every clone of the service, on
//! every worker, shares the one word. The inner service must be `Clone`:
//! a breaker whose admission needs a round trip (a remote one) hands the
//! ready service to the response future and keeps a clone, as tower's
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
//! - **Readiness** is the inner service's: `poll_ready` never asks the
//!   breaker, so a service made ready and then dropped, or never called,
//!   holds no probe. The breaker is asked in `call`, and the response future
//!   records the outcome when it completes, or the cancel outcome
//!   ([`Ignored`](tripword::Outcome::Ignored) by default) when it is dropped
//!   before.
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

// A file each: `future` (the response future, on `crate::call`'s
// `CallAsync`) <- `service` <- `layer`; `keyed/` the same for a breaker per
// key, on top of this folder's `future`. Nothing here imports this file.

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

mod future;
mod keyed;
mod layer;
mod service;

pub use future::{DeferredCall, ResponseFuture};
pub use keyed::{KeyedResponseFuture, RegistryLayer, RegistryService};
pub use layer::BreakerLayer;
pub use service::BreakerService;
