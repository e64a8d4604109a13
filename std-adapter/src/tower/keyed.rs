//! [`RegistryLayer`]: a breaker per key (a host, a route), picked from a
//! registry for each request.

use core::fmt;
use core::future::Future;
use core::ops::Deref;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use std::sync::Arc;

use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;
#[cfg(doc)]
use tripword::Outcome;
use tripword::kit::CircuitBreaker;

use super::ResponseFuture;
use crate::call::CallError;
use crate::classify::{Classify, IntoVerdict, OkOrFailure};
use crate::policy::{CallPolicy, Timing, Untimed};
use crate::registry::Lookup;

/// The breaker a registry `R` finds for key `Q`.
type EntryFor<R, Q> = <R as Lookup<Q>>::Breaker;
/// The handle a [`RegistryService`] holds on a request's breaker.
type HandleFor<R, Q> = Arc<EntryFor<R, Q>>;
/// The clock of the breaker a registry `R` finds for key `Q`.
type ClockFor<R, Q> = <EntryFor<R, Q> as CircuitBreaker>::Clock;

pin_project! {
    /// The response future of a [`RegistryService`]: the
    /// [`ResponseFuture`] of the request's breaker (`H` is its handle, an
    /// `Arc` of the registry's entry), with the request's key `Q` for the
    /// error of a rejected call.
    #[must_use = "futures do nothing unless polled; dropped, an admitted call records its cancel outcome"]
    pub struct KeyedResponseFuture<Q, H, Svc, Req, K, S>
    where
        H: CircuitBreaker,
        Svc: Service<Req>,
    {
        #[pin]
        response: ResponseFuture<H, Svc, Req, K, S>,
        key: Option<Q>,
    }
}

impl<Q, H, Svc, Req, K, S, T, E> Future for KeyedResponseFuture<Q, H, Svc, Req, K, S>
where
    H: CircuitBreaker,
    Svc: Service<Req>,
    Q: fmt::Debug,
    ResponseFuture<H, Svc, Req, K, S>: Future<Output = Result<T, CallError<E>>>,
{
    type Output = Result<T, CallError<E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        Poll::Ready(match ready!(this.response.poll(cx)) {
            Ok(value) => Ok(value),
            Err(CallError::Inner(e)) => Err(CallError::Inner(e)),
            Err(CallError::Open(rejected)) => Err(CallError::Open(
                rejected.for_key(this.key.as_ref().expect("a key until the future completes")),
            )),
        })
    }
}

impl<Q, H, Svc, Req, K, S> fmt::Debug for KeyedResponseFuture<Q, H, Svc, Req, K, S>
where
    Q: fmt::Debug,
    H: CircuitBreaker,
    Svc: Service<Req>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedResponseFuture")
            .field("key", &self.key)
            .field("response", &self.response)
            .finish()
    }
}

/// A [`Layer`] that puts a breaker per key in front of a service: for each
/// request, the key function (`Fn(&Request) -> Q`: the host, the route)
/// names the key, the registry (`R`, a handle on a
/// [`Registry`](crate::Registry) of any breaker:
/// `Arc<Registry<String>>`, `&'static Registry<K, B>`) gives that key's
/// breaker, made on first use, and the call goes through it exactly as
/// through a [`BreakerLayer`](super::BreakerLayer): the same classification
/// (by default [`OkOrFailure`]; `.classify(StatusClassifier)` for HTTP
/// status codes), slow-call threshold, cancel outcome
/// ([`Ignored`](Outcome::Ignored) by default), a panic a failure, readiness
/// the inner service's. A rejection is [`CallError::Open`], whose
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
    /// [`BreakerLayer::new`](super::BreakerLayer::new): any `Err` a
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
        RegistryService {
            inner,
            registry: self.registry.clone(),
            key: self.key.clone(),
            policy: self.policy.clone(),
        }
    }
}

/// A service behind a breaker per key: see [`RegistryLayer`].
#[derive(Clone, Debug)]
pub struct RegistryService<Svc, R, X, K = OkOrFailure, S = Untimed> {
    inner: Svc,
    registry: R,
    key: X,
    policy: CallPolicy<K, S>,
}

impl<Svc, R, X> RegistryService<Svc, R, X> {
    /// `inner` behind the breakers of `registry`, picked by `key`, with the
    /// defaults of [`RegistryLayer::new`].
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
    /// [`BreakerService::call`](super::BreakerService) does.
    #[inline]
    fn call(&mut self, request: Req) -> Self::Future {
        let key = (self.key)(&request);
        let breaker = self.registry.lookup(&key);
        KeyedResponseFuture {
            response: ResponseFuture::respond(
                breaker,
                self.policy.clone(),
                &mut self.inner,
                request,
            ),
            key: Some(key),
        }
    }
}
