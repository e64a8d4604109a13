//! [`BreakerService`], a service behind a breaker.

use core::task::{Context, Poll};

use tower_service::Service;
#[cfg(doc)]
use tripword::Outcome;
use tripword::kit::CircuitBreaker;

use super::future::{ClockOf, ResponseFuture};
use crate::call::error::CallError;
use crate::classify::{Classify, IntoVerdict, OkOrFailure};
use crate::policy::{CallPolicy, Timing, Untimed};

/// A service behind a breaker: see the [module](crate::tower) docs.
#[derive(Clone, Debug)]
pub struct BreakerService<Svc, H, K = OkOrFailure, S = Untimed> {
    inner: Svc,
    breaker: H,
    policy: CallPolicy<K, S>,
}

impl<Svc, H> BreakerService<Svc, H> {
    /// `inner` behind `breaker`, with the defaults of
    /// [`BreakerLayer::new`](crate::tower::BreakerLayer::new).
    pub fn new(inner: Svc, breaker: H) -> Self {
        BreakerService {
            inner,
            breaker,
            policy: CallPolicy::new(),
        }
    }
}

impl<Svc, H, K, S> BreakerService<Svc, H, K, S> {
    /// `inner` behind `breaker`, counted by `policy` (what the layer makes).
    pub(super) fn with_policy(inner: Svc, breaker: H, policy: CallPolicy<K, S>) -> Self {
        BreakerService {
            inner,
            breaker,
            policy,
        }
    }

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
