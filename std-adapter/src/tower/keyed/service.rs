//! [`RegistryService`], a service behind a breaker per key.

use core::fmt;
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
use crate::tower::future::ResponseFuture;

/// The breaker a registry `R` finds for key `Q`.
type EntryFor<R, Q> = <R as Lookup<Q>>::Breaker;
/// The handle a [`RegistryService`] holds on a request's breaker.
type HandleFor<R, Q> = Arc<EntryFor<R, Q>>;
/// The clock of the breaker a registry `R` finds for key `Q`.
type ClockFor<R, Q> = <EntryFor<R, Q> as CircuitBreaker>::Clock;

/// A service behind a breaker per key: see [`RegistryLayer`](crate::tower::RegistryLayer).
#[derive(Clone, Debug)]
pub struct RegistryService<Svc, R, X, K = OkOrFailure, S = Untimed> {
    inner: Svc,
    registry: R,
    key: X,
    policy: CallPolicy<K, S>,
}

impl<Svc, R, X> RegistryService<Svc, R, X> {
    /// `inner` behind the breakers of `registry`, picked by `key`, with the
    /// defaults of [`RegistryLayer::new`](crate::tower::RegistryLayer::new).
    pub fn new(inner: Svc, registry: R, key: X) -> Self {
        RegistryService {
            inner,
            registry,
            key,
            policy: CallPolicy::new(),
        }
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

    /// The registry's handle.
    pub fn registry(&self) -> &R {
        &self.registry
    }
}

impl<Svc, R, X, Q, K, S, Req> Service<Req> for RegistryService<Svc, R, X, K, S>
where
    Svc: Service<Req> + Clone,
    R: Deref,
    R::Target: Lookup<Q>,
    X: Fn(&Req) -> Q,
    Q: fmt::Debug,
    K: Classify<Svc::Response, Svc::Error> + Clone,
    K::Verdict: IntoVerdict<ClockFor<R::Target, Q>>,
    S: Timing<ClockFor<R::Target, Q>> + Clone,
{
    type Response = Svc::Response;
    type Error = CallError<Svc::Error>;
    type Future = KeyedResponseFuture<Q, HandleFor<R::Target, Q>, Svc, Req, K, S>;

    /// The inner service's readiness; no breaker is asked (the key is not
    /// known before the request). An error here is the inner service's and
    /// is not counted.
    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(CallError::Inner)
    }

    /// Takes the request's key, looks up its breaker (made now if the key
    /// is new), and calls through it as
    /// [`BreakerService::call`](crate::tower::BreakerService) does.
    #[inline]
    fn call(&mut self, request: Req) -> Self::Future {
        let key = (self.key)(&request);
        let breaker = self.registry.lookup(&key);
        KeyedResponseFuture::new(
            ResponseFuture::respond(breaker, self.policy.clone(), &mut self.inner, request),
            key,
        )
    }
}
