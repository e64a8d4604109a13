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

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;
#[cfg(doc)]
use tripword::Outcome;

use crate::call::CallError;
use crate::classify::OkOrFailure;
use crate::classify::{Classify, IntoVerdict};
#[cfg(doc)]
use crate::clock::RealClock;
use crate::future::CallAsync;
use crate::policy::{CallPolicy, Timing, Untimed};
use tripword::kit::{CircuitBreaker, Reply};

mod keyed;

pub use keyed::{KeyedResponseFuture, RegistryLayer, RegistryService};

/// A request waiting for its breaker's admission (a breaker whose admission
/// needs a round trip): the ready inner service and the request, boxed so
/// that a response future of a local breaker, which never waits, does not
/// carry their room. Admitted, the service is called
/// ([`IntoFuture`] turns it into the call).
pub struct DeferredCall<Svc, Req>(Box<(Svc, Req)>);

impl<Svc: Service<Req>, Req> core::future::IntoFuture for DeferredCall<Svc, Req> {
    type Output = <Svc::Future as Future>::Output;
    type IntoFuture = Svc::Future;

    fn into_future(self) -> Svc::Future {
        let (mut service, request) = *self.0;
        service.call(request)
    }
}

impl<Svc, Req> fmt::Debug for DeferredCall<Svc, Req> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DeferredCall")
    }
}

pin_project! {
    /// The response future of a [`BreakerService`]: a [`CallAsync`] whose
    /// error is a [`CallError`]. On a breaker whose admission needs a
    /// round trip, it awaits the admission first and calls the inner
    /// service once admitted ([`DeferredCall`]).
    #[must_use = "futures do nothing unless polled; dropped, an admitted call records its cancel outcome"]
    pub struct ResponseFuture<H, Svc, Req, K, S>
    where
        H: CircuitBreaker,
        Svc: Service<Req>,
    {
        #[pin]
        call: CallAsync<H, Svc::Future, CallPolicy<K, S>, DeferredCall<Svc, Req>>,
    }
}

impl<H, Svc, Req, K, S> ResponseFuture<H, Svc, Req, K, S>
where
    H: CircuitBreaker,
    Svc: Service<Req> + Clone,
    S: Timing<ClockOf<H>>,
{
    /// Asks `breaker` for `request` to `inner`: admitted, calls `inner` now
    /// (a panic there is a failure); rejected, leaves it alone; an admission
    /// in flight takes the ready `inner` along and leaves a clone in its
    /// place. What [`BreakerService`] and the registry's service both do in
    /// `call`.
    #[inline]
    pub(crate) fn respond(
        breaker: H,
        policy: CallPolicy<K, S>,
        inner: &mut Svc,
        request: Req,
    ) -> Self {
        let call = match breaker.acquire_async() {
            Reply::Ready(Ok(ticket)) => {
                CallAsync::admitted(breaker, ticket, policy, move || inner.call(request))
            }
            Reply::Ready(Err(rejected)) => CallAsync::rejected_with(breaker, rejected, policy),
            Reply::Wait(acquiring) => {
                let fresh = inner.clone();
                let ready = core::mem::replace(inner, fresh);
                let deferred = DeferredCall(Box::new((ready, request)));
                CallAsync::admitting(breaker, acquiring, policy, deferred)
            }
        };
        ResponseFuture { call }
    }
}

impl<H, Svc, Req, K, S, T, E> Future for ResponseFuture<H, Svc, Req, K, S>
where
    H: CircuitBreaker,
    Svc: Service<Req>,
    CallAsync<H, Svc::Future, CallPolicy<K, S>, DeferredCall<Svc, Req>>:
        Future<Output = Result<T, CallError<E>>>,
{
    type Output = Result<T, CallError<E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().call.poll(cx)
    }
}

impl<H, Svc, Req, K, S> fmt::Debug for ResponseFuture<H, Svc, Req, K, S>
where
    H: CircuitBreaker,
    Svc: Service<Req>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.call, f)
    }
}

/// The clock of breaker (or handle) `H`.
type ClockOf<H> = <H as CircuitBreaker>::Clock;

/// A [`Layer`] that puts a breaker in front of a service: see the
/// [module](self) docs. `H` is the breaker or its handle (`Arc<Breaker>`,
/// `&'static Breaker`: any cloneable
/// [`CircuitBreaker`]), `K` the classifier, `S`
/// the slow-call threshold.
#[derive(Clone, Debug)]
pub struct BreakerLayer<H, K = OkOrFailure, S = Untimed> {
    breaker: H,
    policy: CallPolicy<K, S>,
}

impl<H> BreakerLayer<H> {
    /// A layer on `breaker` with the default [`CallPolicy`]: any `Err` a
    /// failure ([`OkOrFailure`]), no slow-call threshold, a dropped response
    /// future [`Ignored`](Outcome::Ignored). For HTTP status classification
    /// (5xx a failure, 4xx ignored), add
    /// [`.classify(StatusClassifier)`](crate::http::StatusClassifier).
    pub fn new(breaker: H) -> Self {
        BreakerLayer {
            breaker,
            policy: CallPolicy::new(),
        }
    }
}

crate::policy::policy_setters!(BreakerLayer<H>, [breaker]);

impl<H, K, S> BreakerLayer<H, K, S> {
    /// The breaker's handle.
    pub fn breaker(&self) -> &H {
        &self.breaker
    }
}

impl<Svc, H: Clone, K: Clone, S: Clone> Layer<Svc> for BreakerLayer<H, K, S> {
    type Service = BreakerService<Svc, H, K, S>;

    fn layer(&self, inner: Svc) -> Self::Service {
        BreakerService {
            inner,
            breaker: self.breaker.clone(),
            policy: self.policy.clone(),
        }
    }
}

/// A service behind a breaker: see the [module](self) docs.
#[derive(Clone, Debug)]
pub struct BreakerService<Svc, H, K = OkOrFailure, S = Untimed> {
    inner: Svc,
    breaker: H,
    policy: CallPolicy<K, S>,
}

impl<Svc, H> BreakerService<Svc, H> {
    /// `inner` behind `breaker`, with the defaults of
    /// [`BreakerLayer::new`].
    pub fn new(inner: Svc, breaker: H) -> Self {
        BreakerService {
            inner,
            breaker,
            policy: CallPolicy::new(),
        }
    }
}

impl<Svc, H, K, S> BreakerService<Svc, H, K, S> {
    /// The inner service.
    pub fn get_ref(&self) -> &Svc {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut Svc {
        &mut self.inner
    }

    /// The inner service, unwrapped.
    pub fn into_inner(self) -> Svc {
        self.inner
    }

    /// The breaker's handle.
    pub fn breaker(&self) -> &H {
        &self.breaker
    }
}

impl<Svc, H, K, S, Req> Service<Req> for BreakerService<Svc, H, K, S>
where
    Svc: Service<Req> + Clone,
    H: CircuitBreaker + Clone,
    K: Classify<Svc::Response, Svc::Error> + Clone,
    K::Verdict: IntoVerdict<ClockOf<H>>,
    S: Timing<ClockOf<H>> + Clone,
{
    type Response = Svc::Response;
    type Error = CallError<Svc::Error>;
    type Future = ResponseFuture<H, Svc, Req, K, S>;

    /// The inner service's readiness; the breaker is not asked (a ready
    /// service that is never called holds no probe). An error here is the
    /// inner service's and is not counted.
    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(CallError::Inner)
    }

    /// Asks the breaker: admitted, calls the inner service (a panic there is
    /// a failure); not, returns a future ready with
    /// [`CallError::Open`] and leaves the inner service alone. An
    /// admission that needs a round trip (a remote breaker) is awaited by
    /// the response future, which takes the ready inner service with it and
    /// leaves a clone in its place (the usual tower idiom: `Clone` is
    /// required for that, and the clone is made only on that path).
    #[inline]
    fn call(&mut self, request: Req) -> Self::Future {
        ResponseFuture::respond(
            self.breaker.clone(),
            self.policy.clone(),
            &mut self.inner,
            request,
        )
    }
}
