//! [`RegistryLayer`], a breaker per key in front of a service.

use tower_layer::Layer;
#[cfg(doc)]
use tripword::Outcome;

use super::service::RegistryService;
#[cfg(doc)]
use crate::call::error::CallError;
use crate::classify::OkOrFailure;
use crate::policy::{CallPolicy, Untimed};

/// A [`Layer`] that puts a breaker per key in front of a service: for each
/// request, the key function (`Fn(&Request) -> Q`: the host, the route)
/// names the key, the registry (`R`, a handle on a
/// [`Registry`](crate::Registry) of any breaker:
/// `Arc<Registry<String>>`, `&'static Registry<K, B>`) gives that key's
/// breaker, made on first use, and the call goes through it exactly as
/// through a [`BreakerLayer`](crate::tower::BreakerLayer): the same classification
/// (by default [`OkOrFailure`]; `.classify(StatusClassifier)` for HTTP
/// status codes), slow-call threshold, cancel outcome
/// ([`Ignored`](Outcome::Ignored) by default), a panic a failure. Its
/// readiness is the inner service's, as the key is known only at `call`:
/// it cannot fail fast by key while the inner service is not ready (see
/// [`RegistryService`](crate::tower::RegistryService)). A rejection is [`CallError::Open`], whose
/// [`Rejection`](crate::Rejection) holds the request's key
/// ([`CallError::key`]) and names it.
///
/// ```
/// use std::convert::Infallible;
/// use std::sync::Arc;
/// use std::time::Duration;
/// use http::{Request, Response, StatusCode};
/// use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
/// use tripword::Status;
/// use tripword_std::http::StatusClassifier;
/// use tripword_std::tower::RegistryLayer;
/// use tripword_std::CallError;
/// use tripword_std::{Registry, RegistrySettings, Settings};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let default = Settings::new().failure_threshold(3).open_for(Duration::from_secs(30));
/// let settings = RegistrySettings::new(default)
///     .override_for("api.example.com", default.failure_threshold(1));
/// let hosts: Arc<Registry<String>> = Arc::new(Registry::from_settings(&settings)?);
///
/// // The backend: "api.example.com" is down, the rest answer.
/// let backend = service_fn(|req: Request<()>| async move {
///     let down = req.uri().host() == Some("api.example.com");
///     let status = if down { StatusCode::BAD_GATEWAY } else { StatusCode::OK };
///     Ok::<_, Infallible>(Response::builder().status(status).body(()).unwrap())
/// });
/// let host = |req: &Request<()>| req.uri().host().unwrap_or_default().to_owned();
/// let mut client = ServiceBuilder::new()
///     .layer(RegistryLayer::new(hosts.clone(), host).classify(StatusClassifier))
///     .service(backend);
///
/// let get = |url: &str| Request::get(url).body(()).unwrap();
/// let response = client.ready().await?.call(get("http://api.example.com/v1")).await?;
/// assert_eq!(response.status(), 502); // and its breaker trips (threshold 1)
/// match client.ready().await?.call(get("http://api.example.com/v1")).await {
///     Err(err @ CallError::Open(_)) => {
///         assert_eq!(err.key(), Some("api.example.com"));
///         assert!(err.to_string().starts_with(r#"circuit open for "api.example.com": "#));
///     }
///     other => panic!("{other:?}"),
/// }
/// // Another host keeps flowing.
/// let response = client.ready().await?.call(get("http://db.example.com/")).await?;
/// assert_eq!(response.status(), 200);
/// assert_eq!(hosts.get("db.example.com").status(), Status::Closed);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct RegistryLayer<R, X, K = OkOrFailure, S = Untimed> {
    registry: R,
    key: X,
    policy: CallPolicy<K, S>,
}

impl<R, X> RegistryLayer<R, X> {
    /// A layer on the breakers of `registry`, each request's picked by the
    /// key `key` gives it, with the defaults of
    /// [`BreakerLayer::new`](crate::tower::BreakerLayer::new): any `Err` a
    /// failure ([`OkOrFailure`]), no slow-call threshold, a dropped response
    /// future [`Ignored`](Outcome::Ignored). `key` is cloned into each
    /// service: keep it cheap to clone (a closure capturing nothing).
    pub fn new(registry: R, key: X) -> Self {
        RegistryLayer {
            registry,
            key,
            policy: CallPolicy::new(),
        }
    }
}

crate::policy::policy_setters!(RegistryLayer<R, X>, [registry, key]);

impl<R, X, K, S> RegistryLayer<R, X, K, S> {
    /// The registry's handle.
    pub fn registry(&self) -> &R {
        &self.registry
    }
}

impl<Svc, R: Clone, X: Clone, K: Clone, S: Clone> Layer<Svc> for RegistryLayer<R, X, K, S> {
    type Service = RegistryService<Svc, R, X, K, S>;

    fn layer(&self, inner: Svc) -> Self::Service {
        RegistryService::with_policy(
            inner,
            self.registry.clone(),
            self.key.clone(),
            self.policy.clone(),
        )
    }
}
