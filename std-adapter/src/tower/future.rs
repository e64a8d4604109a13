//! [`ResponseFuture`], the response future of a [`BreakerService`](crate::tower::BreakerService):
//! a [`CallAsync`] that calls the inner service once admitted.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use pin_project_lite::pin_project;
use tower_service::Service;
use tripword::kit::{CircuitBreaker, Reply};

use crate::call::error::CallError;
use crate::call::future::CallAsync;
use crate::policy::{CallPolicy, Timing};

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
    /// The response future of a [`BreakerService`](crate::tower::BreakerService): a [`CallAsync`] whose
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
    /// place. What [`BreakerService`](crate::tower::BreakerService) and the registry's service both do in
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
pub(super) type ClockOf<H> = <H as CircuitBreaker>::Clock;
