//! `RegistryLayer` (feature `tower`; the config-file test also `serde`): a
//! breaker per key picked from a registry for each request, behaving as
//! `BreakerLayer` for that breaker, its rejections naming the key.
//!
//! The backends are `service_fn`s that answer by host and path, and the
//! breakers run on `ManualTime` clocks that only the tests (and the
//! backend's `/slow` path) move: nothing here depends on wall-clock speed.

use std::convert::Infallible;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use http::{Request, Response, StatusCode};
use tower::{Layer, Service, ServiceBuilder, ServiceExt, service_fn};
use tripword::kit::{CircuitBreaker, Reply, TickVerdict};
use tripword::{Breaker, Cause, Outcome, Rejected, Release, Status, Ticket};
use tripword_std::clock::ManualTime;
use tripword_std::http::StatusClassifier;
use tripword_std::tower::RegistryLayer;
use tripword_std::{BreakerExt, CallError, Registry, RegistrySettings, Settings};

type Hosts = Registry<String, Breaker<&'static ManualTime>>;
type Error = CallError<Infallible>;

/// A clock of the test's own.
fn clock() -> &'static ManualTime {
    Box::leak(Box::new(ManualTime::new()))
}

/// Open for 10 s once tripped; a probe times out after 30 s.
fn settings(threshold: u32) -> Settings {
    Settings::new()
        .failure_threshold(threshold)
        .open_for(Duration::from_secs(10))
        .probe_timeout(Duration::from_secs(30))
}

fn registry(settings: &RegistrySettings, clock: &'static ManualTime) -> Arc<Hosts> {
    Arc::new(Registry::from_settings_on(settings, clock, |_| ()).expect("in range"))
}

/// The request's host: the layer's key.
fn host(req: &Request<()>) -> String {
    req.uri().host().unwrap_or_default().to_owned()
}

fn get(url: &str) -> Request<()> {
    Request::get(url).body(()).unwrap()
}

/// Requests the backend answered, by host.
#[derive(Clone, Default)]
struct Hits(Arc<Mutex<Vec<String>>>);

impl Hits {
    fn to(&self, host: &str) -> usize {
        self.0.lock().unwrap().iter().filter(|h| *h == host).count()
    }
}

/// A backend: a host starting with `down.` answers 500, `/missing` 404,
/// `/slow` 200 after moving `clock` 300 ms, `/hang` never, `/panic`
/// panics; anything else 200. It borrows nothing (`use<>`): the layers
/// need a `'static` inner service.
fn backend(
    hits: &Hits,
    clock: &'static ManualTime,
) -> impl Service<Request<()>, Response = Response<()>, Error = Infallible> + Clone + use<> {
    let hits = hits.clone();
    service_fn(move |req: Request<()>| {
        let hits = hits.clone();
        async move {
            let host = host(&req);
            hits.0.lock().unwrap().push(host.clone());
            let status = match req.uri().path() {
                "/hang" => return std::future::pending().await,
                "/panic" => panic!("the backend panicked"),
                "/missing" => StatusCode::NOT_FOUND,
                "/slow" => {
                    clock.advance(Duration::from_millis(300));
                    StatusCode::OK
                }
                _ if host.starts_with("down.") => StatusCode::INTERNAL_SERVER_ERROR,
                _ => StatusCode::OK,
            };
            Ok::<_, Infallible>(Response::builder().status(status).body(()).unwrap())
        }
    })
}

/// One request through `svc`, ready first: the status, or the error.
async fn send<S>(svc: &mut S, url: &str) -> Result<u16, S::Error>
where
    S: Service<Request<()>, Response = Response<()>>,
{
    let response = svc.ready().await?.call(get(url)).await?;
    Ok(response.status().as_u16())
}

/// Polls `future` once, with a waker that does nothing.
fn poll_once<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

#[tokio::test]
async fn a_failing_host_trips_only_its_own_breaker_and_its_rejections_name_it() {
    let clock = clock();
    let hosts = registry(&RegistrySettings::new(settings(2)), clock);
    let hits = Hits::default();
    let mut svc = ServiceBuilder::new()
        .layer(RegistryLayer::new(hosts.clone(), host).classify(StatusClassifier))
        .service(backend(&hits, clock));

    for _ in 0..2 {
        // The 500 still reaches the caller.
        assert_eq!(send(&mut svc, "http://down.example.com/").await, Ok(500));
    }
    assert_eq!(hosts.get("down.example.com").status(), Status::Open);
    let err = send(&mut svc, "http://down.example.com/")
        .await
        .unwrap_err();
    assert!(err.is_open());
    assert_eq!(err.key(), Some("down.example.com"));
    assert_eq!(err.cause(), Some(Cause::Open));
    assert_eq!(err.retry_after(), Some(Duration::from_micros(10_000_001)));
    assert_eq!(
        err.to_string(),
        r#"circuit open for "down.example.com": call not admitted (retry after 10.0s)"#
    );
    assert!(matches!(
        &err,
        CallError::Open(rejected) if rejected.key() == Some("down.example.com") && rejected.cause() == Cause::Open
    ));
    assert_eq!(hits.to("down.example.com"), 2, "not called once open");

    // The other host keeps flowing, on its own breaker.
    for _ in 0..5 {
        assert_eq!(send(&mut svc, "http://up.example.com/").await, Ok(200));
    }
    assert_eq!(hits.to("up.example.com"), 5);
    assert_eq!(hosts.get("up.example.com").status(), Status::Closed);
    assert_eq!(hosts.len(), 2);

    // The error composes: into tower's `BoxError`.
    let boxed: tower::BoxError = err.into();
    assert!(boxed.downcast_ref::<Error>().unwrap().is_open());

    // Once the open time is over, the probe goes through and closes it.
    clock.advance(Duration::from_secs(11));
    assert_eq!(
        send(&mut svc, "http://down.example.com/missing").await,
        Ok(404)
    );
    assert_eq!(hosts.get("down.example.com").status(), Status::HalfOpen); // 404: ignored
    assert_eq!(
        send(&mut svc, "http://down.example.com/slow").await,
        Ok(200)
    );
    assert_eq!(hosts.get("down.example.com").status(), Status::Closed);
}

#[tokio::test]
async fn per_key_overrides_apply() {
    let clock = clock();
    let settings =
        RegistrySettings::new(settings(3)).override_for("down.fragile.example.com", settings(1));
    let hosts = registry(&settings, clock);
    assert_eq!(
        hosts
            .get("down.fragile.example.com")
            .config()
            .failure_threshold(),
        1
    );
    assert_eq!(
        hosts
            .get("down.sturdy.example.com")
            .config()
            .failure_threshold(),
        3
    );
    let hits = Hits::default();
    let mut svc = RegistryLayer::new(hosts.clone(), host)
        .classify(StatusClassifier)
        .layer(backend(&hits, clock));

    assert_eq!(
        send(&mut svc, "http://down.fragile.example.com/").await,
        Ok(500)
    );
    let err = send(&mut svc, "http://down.fragile.example.com/")
        .await
        .unwrap_err();
    assert_eq!(err.key(), Some("down.fragile.example.com"));

    for _ in 0..3 {
        assert_eq!(
            send(&mut svc, "http://down.sturdy.example.com/").await,
            Ok(500)
        );
    }
    let err = send(&mut svc, "http://down.sturdy.example.com/")
        .await
        .unwrap_err();
    assert_eq!(err.key(), Some("down.sturdy.example.com"));
    assert_eq!(
        (
            hits.to("down.fragile.example.com"),
            hits.to("down.sturdy.example.com")
        ),
        (1, 3)
    );
}

/// A response future dropped before it completes records the cancel
/// outcome: `Ignored` by default (neither a failure, which would trip a
/// threshold of 2 here, nor a success, which would reset the run), a
/// failure with `on_cancel(Outcome::Failure)`.
#[tokio::test]
async fn a_cancelled_response_future_records_ignored() {
    let clock = clock();
    let hosts = registry(&RegistrySettings::new(settings(2)), clock);
    let hits = Hits::default();
    let mut svc = RegistryLayer::new(hosts.clone(), host)
        .classify(StatusClassifier)
        .layer(backend(&hits, clock));

    assert_eq!(send(&mut svc, "http://down.example.com/").await, Ok(500)); // one failure
    {
        let ready = svc.ready().await.unwrap();
        let mut call = pin!(ready.call(get("http://down.example.com/hang")));
        assert!(poll_once(call.as_mut()).is_pending());
    } // dropped: cancelled
    assert_eq!(hits.to("down.example.com"), 2);
    assert_eq!(hosts.get("down.example.com").status(), Status::Closed);
    assert_eq!(send(&mut svc, "http://down.example.com/").await, Ok(500));
    assert_eq!(hosts.get("down.example.com").status(), Status::Open);

    // Counted as a failure when the layer says so.
    let mut strict = RegistryLayer::new(hosts.clone(), host)
        .classify(StatusClassifier)
        .on_cancel(Outcome::Failure)
        .layer(backend(&hits, clock));
    assert_eq!(
        send(&mut strict, "http://down.other.example.com/").await,
        Ok(500)
    );
    let ready = strict.ready().await.unwrap();
    drop(ready.call(get("http://down.other.example.com/hang")));
    assert_eq!(hosts.get("down.other.example.com").status(), Status::Open);
}

#[tokio::test]
async fn a_panic_in_the_inner_service_is_a_failure() {
    let clock = clock();
    let hosts = registry(&RegistrySettings::new(settings(1)), clock);
    let hits = Hits::default();
    let mut svc = RegistryLayer::new(hosts.clone(), host)
        .classify(StatusClassifier)
        .layer(backend(&hits, clock));
    let ready = svc.ready().await.unwrap();
    let call = ready.call(get("http://up.example.com/panic"));
    let panicked = catch_unwind(AssertUnwindSafe(move || {
        let mut call = pin!(call);
        let _ = poll_once(call.as_mut());
    }));
    assert!(panicked.is_err());
    assert_eq!(hosts.get("up.example.com").status(), Status::Open);
}

/// `classify`, `slow_after` and the defaults of `BreakerLayer`: a 4xx is
/// ignored, a 5xx fails, a slow success fails.
#[tokio::test]
async fn classification_and_slow_calls_as_in_the_breaker_layer() {
    let clock = clock();
    let hosts = registry(&RegistrySettings::new(settings(1)), clock);
    let hits = Hits::default();
    let mut svc = RegistryLayer::new(hosts.clone(), host)
        .classify(StatusClassifier)
        .slow_after(Duration::from_millis(250))
        .layer(backend(&hits, clock));
    for _ in 0..3 {
        assert_eq!(
            send(&mut svc, "http://a.example.com/missing").await,
            Ok(404)
        );
    }
    assert_eq!(hosts.get("a.example.com").status(), Status::Closed);
    assert_eq!(send(&mut svc, "http://a.example.com/slow").await, Ok(200));
    assert_eq!(hosts.get("a.example.com").status(), Status::Open);

    // A classifier of our own: a 404 is a failure.
    let mut strict = RegistryLayer::new(hosts.clone(), host)
        .classify(|r: &Result<Response<()>, Infallible>| match r {
            Ok(response) if response.status() == StatusCode::NOT_FOUND => Outcome::Failure,
            _ => Outcome::Success,
        })
        .layer(backend(&hits, clock));
    assert_eq!(
        send(&mut strict, "http://b.example.com/missing").await,
        Ok(404)
    );
    assert!(
        send(&mut strict, "http://b.example.com/")
            .await
            .unwrap_err()
            .is_open()
    );
}

/// A breaker written here, outside the library: a `tripword` breaker behind
/// a mutex whose async path always answers `Reply::Wait` (as a breaker in a
/// remote store would), counting what it is asked.
struct Guarded {
    breaker: Mutex<Breaker<&'static ManualTime>>,
    clock: &'static ManualTime,
    acquired: AtomicUsize,
    released: AtomicUsize,
}

impl Guarded {
    fn new(threshold: u32, clock: &'static ManualTime) -> Self {
        Guarded {
            breaker: Mutex::new(settings(threshold).build_on(clock, ()).unwrap()),
            clock,
            acquired: AtomicUsize::new(0),
            released: AtomicUsize::new(0),
        }
    }
}

impl CircuitBreaker for Guarded {
    type Ticket = Ticket;
    type Clock = &'static ManualTime;
    type Acquiring = std::future::Ready<Result<Ticket, Rejected>>;
    type Releasing = std::future::Ready<Release>;

    fn acquire(&self) -> Result<Ticket, Rejected> {
        self.acquired.fetch_add(1, Ordering::Relaxed);
        self.breaker.lock().unwrap().acquire()
    }
    fn release(&self, ticket: Ticket, outcome: Outcome) -> Release {
        self.released.fetch_add(1, Ordering::Relaxed);
        self.breaker.lock().unwrap().release(ticket, outcome)
    }
    fn status(&self) -> Status {
        self.breaker.lock().unwrap().status()
    }
    fn clock(&self) -> &&'static ManualTime {
        &self.clock
    }
    fn acquire_async(&self) -> Reply<Result<Ticket, Rejected>, Self::Acquiring> {
        Reply::Wait(std::future::ready(self.acquire()))
    }
    fn release_async(
        &self,
        ticket: Ticket,
        verdict: TickVerdict,
    ) -> Reply<Release, Self::Releasing> {
        Reply::Wait(std::future::ready(self.release_verdict(ticket, verdict)))
    }
}

#[tokio::test]
async fn a_custom_breaker_in_a_registry_works_through_the_layer_and_call() {
    let clock = clock();
    let guarded: Arc<Registry<String, Guarded>> = Arc::new(Registry::new(move |host: &String| {
        Guarded::new(if host.contains("fragile") { 1 } else { 2 }, clock)
    }));
    let hits = Hits::default();
    let mut svc = ServiceBuilder::new()
        .layer(RegistryLayer::new(guarded.clone(), host).classify(StatusClassifier))
        .service(backend(&hits, clock));

    // Through the layer: admissions and releases awaited (`Reply::Wait`).
    assert_eq!(
        send(&mut svc, "http://down.fragile.example.com/").await,
        Ok(500)
    );
    let err = send(&mut svc, "http://down.fragile.example.com/")
        .await
        .unwrap_err();
    assert_eq!(err.key(), Some("down.fragile.example.com"));
    assert!(
        err.to_string()
            .starts_with(r#"circuit open for "down.fragile.example.com": "#)
    );
    let fragile = guarded.get("down.fragile.example.com");
    assert_eq!(fragile.status(), Status::Open);
    assert_eq!(
        (
            fragile.acquired.load(Ordering::Relaxed),
            fragile.released.load(Ordering::Relaxed)
        ),
        (2, 1)
    );
    assert_eq!(hits.to("down.fragile.example.com"), 1);
    for _ in 0..3 {
        assert_eq!(send(&mut svc, "http://up.example.com/").await, Ok(200));
    }
    assert_eq!(guarded.get("up.example.com").status(), Status::Closed);

    // A cancelled call whose admission was awaited records `Ignored`.
    {
        let ready = svc.ready().await.unwrap();
        let mut call = pin!(ready.call(get("http://up.example.com/hang")));
        assert!(poll_once(call.as_mut()).is_pending());
    }
    let up = guarded.get("up.example.com");
    assert_eq!(
        (
            up.acquired.load(Ordering::Relaxed),
            up.released.load(Ordering::Relaxed)
        ),
        (4, 4)
    );
    assert_eq!(up.status(), Status::Closed);

    // Through `call` and `call_async` on the entry (an `Entry<_, Guarded>`
    // is a breaker itself).
    let db = guarded.get("db.internal");
    assert_eq!(db.call(|| Ok::<_, &str>(1)), Ok(1));
    assert_eq!(
        db.call(|| Err::<(), _>("down")),
        Err(CallError::Inner("down"))
    );
    assert_eq!(
        db.call_async(async { Err::<(), _>("down") }).await,
        Err(CallError::Inner("down"))
    );
    assert_eq!(db.status(), Status::Open);
    assert!(
        db.call_async(async { Ok::<_, ()>(()) })
            .await
            .unwrap_err()
            .is_open()
    );
    assert!(
        guarded
            .with("db.internal", |b| b.call(|| Ok::<_, ()>(())))
            .unwrap_err()
            .is_open()
    );
    assert_eq!(
        (
            db.acquired.load(Ordering::Relaxed),
            db.released.load(Ordering::Relaxed)
        ),
        (5, 3)
    );
}

/// A stack built from a config file: per-key overrides through the layer.
#[cfg(feature = "serde")]
#[tokio::test]
async fn a_stack_from_a_config_file() {
    let toml = r#"
        [default]
        failure_threshold = 3
        open_for = "10s"

        [overrides."down.fragile.example.com"]
        failure_threshold = 1
    "#;
    let json = r#"{
        "default": { "failure_threshold": 3, "open_for": "10s" },
        "overrides": { "down.fragile.example.com": { "failure_threshold": 1 } }
    }"#;
    let from_toml: RegistrySettings = toml::from_str(toml).unwrap();
    let from_json: RegistrySettings = serde_json::from_str(json).unwrap();
    assert_eq!(from_toml, from_json);
    for settings in [from_toml, from_json] {
        let clock = clock();
        let hosts = registry(&settings, clock);
        let hits = Hits::default();
        let mut svc = RegistryLayer::new(hosts.clone(), host)
            .classify(StatusClassifier)
            .layer(backend(&hits, clock));
        assert_eq!(
            send(&mut svc, "http://down.fragile.example.com/").await,
            Ok(500)
        );
        let err = send(&mut svc, "http://down.fragile.example.com/")
            .await
            .unwrap_err();
        assert_eq!(err.key(), Some("down.fragile.example.com"));
        assert_eq!(err.retry_after(), Some(Duration::from_micros(10_000_001)));
        for _ in 0..2 {
            assert_eq!(
                send(&mut svc, "http://down.sturdy.example.com/").await,
                Ok(500)
            );
        }
        assert_eq!(
            hosts.get("down.sturdy.example.com").status(),
            Status::Closed
        );
    }

    // An override out of range: the error names the key.
    let bad: RegistrySettings = toml::from_str(
        r#"
        [overrides."api.example.com"]
        open_for = "0s"
        "#,
    )
    .unwrap();
    let err = Registry::from_settings_on(&bad, clock(), |_| ())
        .map(|_: Hosts| ())
        .unwrap_err();
    assert_eq!(err.key().map(String::as_str), Some("api.example.com"));
    assert!(
        err.to_string()
            .starts_with(r#"override for "api.example.com": open_for = 0ns is out of range"#),
        "{err}"
    );
}
