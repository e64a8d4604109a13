//! [`BreakerLayer`], a breaker in front of a service.

use tower_layer::Layer;
#[cfg(doc)]
use tripword::Outcome;
#[cfg(doc)]
use tripword::kit::CircuitBreaker;

use super::service::BreakerService;
use crate::classify::OkOrFailure;
use crate::policy::{CallPolicy, Untimed};

/// A [`Layer`] that puts a breaker in front of a service: see the
/// [module](crate::tower) docs. `H` is the breaker or its handle (`Arc<Breaker>`,
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
        BreakerService::with_policy(inner, self.breaker.clone(), self.policy.clone())
    }
}
