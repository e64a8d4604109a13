//! [`BreakerService`], a service behind a breaker.

use core::fmt;
use core::marker::PhantomData;
use core::task::{Context, Poll};

use tower_service::Service;
#[cfg(doc)]
use tripword::Outcome;
use tripword::Status;
use tripword::kit::CircuitBreaker;

use super::deferral::{Defer, LocalDeferral, SendDeferral};
use super::future::{ClockOf, ResponseFuture};
use crate::call::error::CallError;
use crate::classify::{Classify, IntoVerdict, OkOrFailure};
use crate::policy::{CallPolicy, Timing, Untimed};

/// A service behind a breaker: see the [module](crate::tower) docs. `D`
/// is how its response future holds a call it cannot make at once
/// ([`SendDeferral`], the default: a `Send` box; [`local`](Self::local)
/// for a service that is not `Send`).
pub struct BreakerService<Svc, H, K = OkOrFailure, S = Untimed, D = SendDeferral> {
    inner: Svc,
    breaker: H,
    policy: CallPolicy<K, S>,
    /// Set by a `poll_ready` that did not poll the inner service (the
    /// breaker would have rejected), cleared by the `call` after it, which
    /// then takes the slow path: admitted, the response future polls the
    /// inner service ready before calling it. A `poll_ready` that polls the
    /// inner service leaves it as it is (a store there would cost every
    /// request): after a rejecting `poll_ready` and one that polled, with
    /// no `call` between, the `call` still takes the slow path, which polls
    /// the inner service ready once more.
    skipped: bool,
    deferral: PhantomData<fn() -> D>,
}

impl<Svc, H> BreakerService<Svc, H> {
    /// `inner` behind `breaker`, with the defaults of
    /// [`BreakerLayer::new`](crate::tower::BreakerLayer::new).
    pub fn new(inner: Svc, breaker: H) -> Self {
        BreakerService::with_policy(inner, breaker, CallPolicy::new())
    }
}

impl<Svc, H, K, S> BreakerService<Svc, H, K, S> {
    /// `inner` behind `breaker`, counted by `policy` (what the layer makes).
    pub(super) fn with_policy(inner: Svc, breaker: H, policy: CallPolicy<K, S>) -> Self {
        BreakerService {
            inner,
            breaker,
            policy,
            skipped: false,
            deferral: PhantomData,
        }
    }

    /// The same service for an inner service or requests that are not
    /// `Send` (a service on a `LocalSet`): its response future holds a
    /// call it cannot make at once in a box that is not `Send`
    /// ([`LocalDeferral`]). The default needs the inner service and the
    /// requests to be `Send + 'static`; both need `'static`.
    pub fn local(self) -> BreakerService<Svc, H, K, S, LocalDeferral> {
        BreakerService {
            inner: self.inner,
            breaker: self.breaker,
            policy: self.policy,
            skipped: self.skipped,
            deferral: PhantomData,
        }
    }
}

impl<Svc, H, K, S, D> BreakerService<Svc, H, K, S, D> {
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

/// A clone, as the service was made: as for any tower service, its `call`
/// needs a `poll_ready` of its own first.
impl<Svc: Clone, H: Clone, K: Clone, S: Clone, D> Clone for BreakerService<Svc, H, K, S, D> {
    fn clone(&self) -> Self {
        BreakerService {
            inner: self.inner.clone(),
            breaker: self.breaker.clone(),
            policy: self.policy.clone(),
            skipped: false,
            deferral: PhantomData,
        }
    }
}

impl<Svc: fmt::Debug, H: fmt::Debug, K: fmt::Debug, S: fmt::Debug, D> fmt::Debug
    for BreakerService<Svc, H, K, S, D>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BreakerService")
            .field("inner", &self.inner)
            .field("breaker", &self.breaker)
            .field("policy", &self.policy)
            .field("skipped", &self.skipped)
            .finish()
    }
}

impl<Svc, H, K, S, D, Req> Service<Req> for BreakerService<Svc, H, K, S, D>
where
    Svc: Service<Req> + Clone,
    H: CircuitBreaker + Clone,
    K: Classify<Svc::Response, Svc::Error> + Clone,
    K::Verdict: IntoVerdict<ClockOf<H>>,
    S: Timing<ClockOf<H>> + Clone,
    D: Defer<Svc, Req>,
{
    type Response = Svc::Response;
    type Error = CallError<Svc::Error>;
    type Future = ResponseFuture<H, Svc::Future, K, S, D>;

    /// Fails fast: reads the breaker's [`status`](CircuitBreaker::status)
    /// (a read: it elects no probe and stores nothing). A breaker that
    /// would reject (`Open`, forced open included, or `Probing`, its
    /// probes held by other calls) makes the service ready at once, without
    /// polling the inner service: `call` will reject. Otherwise (`Closed`,
    /// `HalfOpen`, a trial with room, which reads `HalfOpen`, and
    /// `Recovering`, whose ramp admits a share of calls and refuses the
    /// rest in `call`) the inner service's readiness; an error there is the
    /// inner service's ([`CallError::Inner`]) and is not counted.
    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if rejects(&self.breaker) {
            self.skipped = true;
            return Poll::Ready(Ok(()));
        }
        self.inner.poll_ready(cx).map_err(CallError::Inner)
    }

    /// Asks the breaker: not admitted, returns a future ready with
    /// [`CallError::Open`] and leaves the inner service alone; admitted,
    /// calls the inner service (a panic there is a failure, and unwinds on).
    /// An admission that needs a round trip (a remote breaker), or one to
    /// an inner service that `poll_ready` did not poll (the breaker
    /// rejected then and admits now: its open time ran out, say), is made
    /// by the response future, which takes the inner service with it and
    /// leaves a clone in its place (the usual tower idiom: `Clone` is
    /// required for that, and the clone is made only on those paths); it
    /// polls the inner service ready first if it was not, and a readiness
    /// error there is the call's [`CallError::Inner`], recorded as
    /// [`Ignored`](Outcome::Ignored) (the dependency was not called).
    #[inline]
    fn call(&mut self, request: Req) -> Self::Future {
        ResponseFuture::respond_unless(
            self.breaker.clone(),
            self.policy.clone(),
            &mut self.inner,
            request,
            &mut self.skipped,
        )
    }
}

/// Whether `breaker` would reject a call now: its
/// [`status`](CircuitBreaker::status) is `Open` (forced open included) or
/// `Probing`. Not `Recovering`: a ramp admits a share of calls, and which
/// ones only its admission decides. Inline: `tripword`'s own breakers decide a `Closed` word
/// inline and keep the status's rare arms (an open time's arithmetic, a
/// clock read) out of line, so `poll_ready` and tower's wrappers around it
/// (`ServiceExt::ready`) stay small enough to inline into the caller
/// (`docs/performance/services.md`).
#[inline]
fn rejects<H: CircuitBreaker>(breaker: &H) -> bool {
    matches!(breaker.status(), Status::Open | Status::Probing)
}
