//! [`RegistryService`], a service behind a breaker per key.

use core::fmt;
use core::marker::PhantomData;
use core::ops::Deref;
use core::task::{Context, Poll};
use std::sync::Arc;

use tower_service::Service;
use tripword::kit::CircuitBreaker;

use super::future::KeyedResponseFuture;
use crate::call::error::CallError;
use crate::classify::{Classify, IntoVerdict, OkOrFailure};
use crate::policy::{CallPolicy, Timing, Untimed};
use crate::registry::Lookup;
use crate::tower::deferral::{Defer, LocalDeferral, SendDeferral};
use crate::tower::future::ResponseFuture;

/// The breaker a registry `R` finds for key `Q`.
type EntryFor<R, Q> = <R as Lookup<Q>>::Breaker;
/// The handle a [`RegistryService`] holds on a request's breaker.
type HandleFor<R, Q> = Arc<EntryFor<R, Q>>;
/// The clock of the breaker a registry `R` finds for key `Q`.
type ClockFor<R, Q> = <EntryFor<R, Q> as CircuitBreaker>::Clock;

/// A service behind a breaker per key: see [`RegistryLayer`](crate::tower::RegistryLayer).
/// `D` is how its response future holds a call it cannot make at once
/// ([`SendDeferral`], the default; [`local`](Self::local) for a service
/// that is not `Send`), as for
/// [`BreakerService`](crate::tower::BreakerService).
///
/// **Readiness** is the inner service's: the key, and so the breaker, is
/// known only at `call`, so `poll_ready` cannot tell whether the request
/// will be rejected. A request whose key is open is still rejected in
/// `call` without calling the inner service, but while the inner service
/// is not ready, `ready()` waits, whatever the keys' breakers say: under
/// an outage that leaves the inner service not ready (a pool that
/// reconnects), this layer cannot fail fast by key (`docs/services.md`,
/// "The tower layer").
pub struct RegistryService<Svc, R, X, K = OkOrFailure, S = Untimed, D = SendDeferral> {
    inner: Svc,
    registry: R,
    key: X,
    policy: CallPolicy<K, S>,
    deferral: PhantomData<fn() -> D>,
}

impl<Svc, R, X> RegistryService<Svc, R, X> {
    /// `inner` behind the breakers of `registry`, picked by `key`, with the
    /// defaults of [`RegistryLayer::new`](crate::tower::RegistryLayer::new).
    pub fn new(inner: Svc, registry: R, key: X) -> Self {
        RegistryService::with_policy(inner, registry, key, CallPolicy::new())
    }
}

impl<Svc, R, X, K, S> RegistryService<Svc, R, X, K, S> {
    /// `inner` behind the breakers of `registry`, picked by `key`, counted
    /// by `policy` (what the layer makes).
    pub(super) fn with_policy(inner: Svc, registry: R, key: X, policy: CallPolicy<K, S>) -> Self {
        RegistryService {
            inner,
            registry,
            key,
            policy,
            deferral: PhantomData,
        }
    }

    /// The same service for an inner service or requests that are not
    /// `Send`, as [`BreakerService::local`](crate::tower::BreakerService::local).
    pub fn local(self) -> RegistryService<Svc, R, X, K, S, LocalDeferral> {
        RegistryService {
            inner: self.inner,
            registry: self.registry,
            key: self.key,
            policy: self.policy,
            deferral: PhantomData,
        }
    }
}

impl<Svc, R, X, K, S, D> RegistryService<Svc, R, X, K, S, D> {
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

    /// The registry's handle.
    pub fn registry(&self) -> &R {
        &self.registry
    }
}

impl<Svc: Clone, R: Clone, X: Clone, K: Clone, S: Clone, D> Clone
    for RegistryService<Svc, R, X, K, S, D>
{
    fn clone(&self) -> Self {
        RegistryService {
            inner: self.inner.clone(),
            registry: self.registry.clone(),
            key: self.key.clone(),
            policy: self.policy.clone(),
            deferral: PhantomData,
        }
    }
}

impl<Svc: fmt::Debug, R: fmt::Debug, X: fmt::Debug, K: fmt::Debug, S: fmt::Debug, D> fmt::Debug
    for RegistryService<Svc, R, X, K, S, D>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryService")
            .field("inner", &self.inner)
            .field("registry", &self.registry)
            .field("key", &self.key)
            .field("policy", &self.policy)
            .finish()
    }
}

impl<Svc, R, X, Q, K, S, D, Req> Service<Req> for RegistryService<Svc, R, X, K, S, D>
where
    Svc: Service<Req> + Clone,
    R: Deref,
    R::Target: Lookup<Q>,
    X: Fn(&Req) -> Q,
    Q: fmt::Debug,
    K: Classify<Svc::Response, Svc::Error> + Clone,
    K::Verdict: IntoVerdict<ClockFor<R::Target, Q>>,
    S: Timing<ClockFor<R::Target, Q>> + Clone,
    D: Defer<Svc, Req>,
{
    type Response = Svc::Response;
    type Error = CallError<Svc::Error>;
    type Future = KeyedResponseFuture<Q, HandleFor<R::Target, Q>, Svc::Future, K, S, D>;

    /// The inner service's readiness; no breaker is asked (the key is not
    /// known before the request, so an open key cannot fail fast here: see
    /// the [type](RegistryService) docs). An error here is the inner
    /// service's and is not counted.
    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(CallError::Inner)
    }

    /// Takes the request's key, looks up its breaker (made now if the key
    /// is new), and calls through it as
    /// [`BreakerService::call`](crate::tower::BreakerService) does: a
    /// request whose key's breaker rejects is rejected with
    /// [`CallError::Open`] and the inner service is not called.
    #[inline]
    fn call(&mut self, request: Req) -> Self::Future {
        let key = (self.key)(&request);
        let breaker = self.registry.lookup(&key);
        KeyedResponseFuture::new(
            // `poll_ready` always polls the inner service: it is ready.
            ResponseFuture::respond(breaker, self.policy.clone(), &mut self.inner, request, true),
            key,
        )
    }
}
