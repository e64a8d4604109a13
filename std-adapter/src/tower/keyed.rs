//! [`RegistryLayer`]: a breaker per key (a host, a route), picked from a
//! registry for each request.

use core::fmt;
use core::future::Future;
use core::ops::Deref;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use std::sync::Arc;
use std::time::Duration;

use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;
use tripword::kit::CircuitBreaker;
use tripword::{Cause, Outcome};

use super::{BreakerError, ResponseFuture};
use crate::call::{CallError, Rejection};
use crate::classify::{Classify, IntoVerdict};
use crate::http::StatusClassifier;
use crate::policy::{CallPolicy, SlowAfter, SlowAfterTicks, Timing, Untimed};
use crate::registry::Lookup;

/// The error of a [`RegistryService`]: the breaker of the request's key did
/// not admit the call (the inner service was not called), or the inner
/// service failed. A [`BreakerError`] whose rejection says which key's
/// circuit is open.
///
/// Its `Display` names the key: `circuit open for "api.example.com": call
/// not admitted (retry after 30.0s)`. It is an
/// [`Error`](std::error::Error) whenever `Q` is `Debug` and `E` is
/// `Debug + Display` (tower's `BoxError` included), so it converts into a
/// `BoxError`; it converts into a [`BreakerError`] (dropping the key) and a
/// [`CallError`] with `From`.
///
/// ```
/// use tripword::Cause;
/// use tripword_std::tower::{BreakerError, KeyedError};
///
/// type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// let inner: KeyedError<String, BoxError> = KeyedError::Inner("connection reset".into());
/// assert_eq!(inner.to_string(), "connection reset");
/// assert_eq!(inner.key(), None);
/// let boxed: BoxError = inner.into(); // composes with tower's error type
/// assert!(boxed.downcast_ref::<KeyedError<String, BoxError>>().is_some());
/// let plain: BreakerError<()> = KeyedError::<&str, ()>::Inner(()).into();
/// assert_eq!(plain.cause(), None::<Cause>);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyedError<Q, E> {
    /// The circuit of `key` is open (or a probe is running): the inner
    /// service was not called.
    Open {
        /// The request's key, as the layer's key function gave it.
        key: Q,
        /// Why, and for how long, in the ticks of the key's breaker.
        rejected: Rejection,
    },
    /// The inner service's error (from `call`'s future, or `poll_ready`).
    Inner(E),
}

impl<Q, E> KeyedError<Q, E> {
    /// Whether the call was rejected without reaching the inner service.
    pub fn is_open(&self) -> bool {
        matches!(self, KeyedError::Open { .. })
    }

    /// The key whose circuit rejected the call, if it was rejected.
    pub fn key(&self) -> Option<&Q> {
        match self {
            KeyedError::Open { key, .. } => Some(key),
            KeyedError::Inner(_) => None,
        }
    }

    /// The rejection, if the call was not admitted.
    pub fn rejected(&self) -> Option<&Rejection> {
        match self {
            KeyedError::Open { rejected, .. } => Some(rejected),
            KeyedError::Inner(_) => None,
        }
    }

    /// Why the call was not admitted, if it was not.
    pub fn cause(&self) -> Option<Cause> {
        self.rejected().map(Rejection::cause)
    }

    /// How long until a call for the key could be admitted (see
    /// [`Rejection::retry_after`]).
    pub fn retry_after(&self) -> Option<Duration> {
        self.rejected().and_then(Rejection::retry_after)
    }

    /// The inner service's error, if it failed.
    pub fn inner(&self) -> Option<&E> {
        match self {
            KeyedError::Open { .. } => None,
            KeyedError::Inner(e) => Some(e),
        }
    }

    /// The inner service's error, unwrapped, if it failed.
    pub fn into_inner(self) -> Option<E> {
        match self {
            KeyedError::Open { .. } => None,
            KeyedError::Inner(e) => Some(e),
        }
    }
}

impl<Q, E> From<KeyedError<Q, E>> for BreakerError<E> {
    /// The key is dropped.
    fn from(error: KeyedError<Q, E>) -> Self {
        match error {
            KeyedError::Open { rejected, .. } => BreakerError::Open(rejected),
            KeyedError::Inner(e) => BreakerError::Inner(e),
        }
    }
}

impl<Q, E> From<KeyedError<Q, E>> for CallError<E> {
    /// The key is dropped.
    fn from(error: KeyedError<Q, E>) -> Self {
        BreakerError::from(error).into()
    }
}

impl<Q: fmt::Debug, E: fmt::Display> fmt::Display for KeyedError<Q, E> {
    /// `Open` reads as the rejection with the key (`circuit open for
    /// "api.example.com": call not admitted (retry after 5.0s)`);
    /// `Inner` as the inner error itself.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyedError::Open { key, rejected } => rejected.write_for(f, Some(key)),
            KeyedError::Inner(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl<Q: fmt::Debug, E: fmt::Debug + fmt::Display> std::error::Error for KeyedError<Q, E> {}

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
    ResponseFuture<H, Svc, Req, K, S>: Future<Output = Result<T, BreakerError<E>>>,
{
    type Output = Result<T, KeyedError<Q, E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        Poll::Ready(match ready!(this.response.poll(cx)) {
            Ok(value) => Ok(value),
            Err(BreakerError::Inner(e)) => Err(KeyedError::Inner(e)),
            Err(BreakerError::Open(rejected)) => Err(KeyedError::Open {
                key: this.key.take().expect("a rejection is handed out once"),
                rejected,
            }),
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
/// (by default [`StatusClassifier`]), slow-call threshold, cancel outcome
/// ([`Ignored`](Outcome::Ignored) by default), a panic a failure, readiness
/// the inner service's. A rejection is [`KeyedError::Open`], which names
/// the key.
///
/// ```
/// use std::convert::Infallible;
/// use std::sync::Arc;
/// use std::time::Duration;
/// use http::{Request, Response, StatusCode};
/// use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
/// use tripword::Status;
/// use tripword_std::tower::{KeyedError, RegistryLayer};
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
///     .layer(RegistryLayer::new(hosts.clone(), host))
///     .service(backend);
///
/// let get = |url: &str| Request::get(url).body(()).unwrap();
/// let response = client.ready().await?.call(get("http://api.example.com/v1")).await?;
/// assert_eq!(response.status(), 502); // and its breaker trips (threshold 1)
/// match client.ready().await?.call(get("http://api.example.com/v1")).await {
///     Err(err @ KeyedError::Open { .. }) => {
///         assert_eq!(err.key().map(String::as_str), Some("api.example.com"));
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
pub struct RegistryLayer<R, X, K = StatusClassifier, S = Untimed> {
    registry: R,
    key: X,
    policy: CallPolicy<K, S>,
}

impl<R, X> RegistryLayer<R, X> {
    /// A layer on the breakers of `registry`, each request's picked by the
    /// key `key` gives it, with the HTTP defaults of
    /// [`BreakerLayer::new`](super::BreakerLayer::new):
    /// [`StatusClassifier`], no slow-call threshold, a dropped response
    /// future [`Ignored`](Outcome::Ignored). `key` is cloned into each
    /// service: keep it cheap to clone (a closure capturing nothing).
    pub fn new(registry: R, key: X) -> Self {
        RegistryLayer {
            registry,
            key,
            policy: CallPolicy::new().classify(StatusClassifier),
        }
    }
}

impl<R, X, K, S> RegistryLayer<R, X, K, S> {
    /// Classifies results with `classify` (see
    /// [`BreakerLayer::classify`](super::BreakerLayer::classify)).
    pub fn classify<K2>(self, classify: K2) -> RegistryLayer<R, X, K2, S> {
        RegistryLayer {
            registry: self.registry,
            key: self.key,
            policy: self.policy.classify(classify),
        }
    }

    /// A success slower than `threshold` counts as a failure (see
    /// [`CallPolicy::slow_after`]).
    pub fn slow_after(self, threshold: Duration) -> RegistryLayer<R, X, K, SlowAfter> {
        RegistryLayer {
            registry: self.registry,
            key: self.key,
            policy: self.policy.slow_after(threshold),
        }
    }

    /// [`slow_after`](Self::slow_after) in the clock's ticks.
    pub fn slow_after_ticks(self, ticks: u64) -> RegistryLayer<R, X, K, SlowAfterTicks> {
        RegistryLayer {
            registry: self.registry,
            key: self.key,
            policy: self.policy.slow_after_ticks(ticks),
        }
    }

    /// What a response future dropped before it completes records (see
    /// [`CallPolicy::on_cancel`]).
    pub fn on_cancel(self, outcome: Outcome) -> Self {
        RegistryLayer {
            policy: self.policy.on_cancel(outcome),
            ..self
        }
    }

    /// Replaces the whole [`CallPolicy`].
    pub fn policy<K2, S2>(self, policy: CallPolicy<K2, S2>) -> RegistryLayer<R, X, K2, S2> {
        RegistryLayer {
            registry: self.registry,
            key: self.key,
            policy,
        }
    }

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
pub struct RegistryService<Svc, R, X, K = StatusClassifier, S = Untimed> {
    inner: Svc,
    registry: R,
    key: X,
    policy: CallPolicy<K, S>,
}

impl<Svc, R, X> RegistryService<Svc, R, X> {
    /// `inner` behind the breakers of `registry`, picked by `key`, with the
    /// HTTP defaults of [`RegistryLayer::new`].
    pub fn new(inner: Svc, registry: R, key: X) -> Self {
        RegistryService {
            inner,
            registry,
            key,
            policy: CallPolicy::new().classify(StatusClassifier),
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
    K: Classify<Svc::Response, Svc::Error> + Clone,
    K::Verdict: IntoVerdict<ClockFor<R::Target, Q>>,
    S: Timing<ClockFor<R::Target, Q>> + Clone,
{
    type Response = Svc::Response;
    type Error = KeyedError<Q, Svc::Error>;
    type Future = KeyedResponseFuture<Q, HandleFor<R::Target, Q>, Svc, Req, K, S>;

    /// The inner service's readiness; no breaker is asked (the key is not
    /// known before the request). An error here is the inner service's and
    /// is not counted.
    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(KeyedError::Inner)
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
