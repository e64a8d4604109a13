//! The tower layer in a real stack (features `tower`, `tokio`): a hyper
//! server on 127.0.0.1 (port 0) started by each test and stopped when the
//! test ends, pass or fail (`Server` aborts it on drop, and the test's
//! runtime goes with it), and hyper's client behind `BreakerLayer` in a
//! `tower::ServiceBuilder`.
//!
//! The breakers run on a `ManualTime` clock that only the tests (and the
//! server's `/slow` route) move, so open times, `Retry-After` and slow calls
//! are checked in ticks, never by sleeping.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use http::{Request, Response};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Bytes, Incoming};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
use tripword::clock::ManualClock;
use tripword::{Breaker, Cause, Config, Outcome, Status};
use tripword_std::classify::OkOrFailure;
use tripword_std::clock::{ManualTime, RealClock};
use tripword_std::http::RetryAfterClassifier;
use tripword_std::http::StatusClassifier;
use tripword_std::tower::BreakerLayer;
use tripword_std::{CallError, Settings};

/// A local HTTP server; aborted when dropped.
struct Server {
    addr: SocketAddr,
    hits: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// Serves:
    /// - `/ok` 200, `/missing` 404, `/down` 500;
    /// - `/busy` 503 with `Retry-After: 5`, `/busy-date` 503 with a
    ///   `Retry-After` HTTP-date a minute from now;
    /// - `/slow` 200 after moving `clock` 300 ms forward (the time the
    ///   request "took");
    /// - `/hang` never answers.
    async fn start(clock: &'static ManualTime) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let hits = counted.clone();
                let handler = hyper::service::service_fn(move |req: Request<Incoming>| {
                    hits.fetch_add(1, Ordering::SeqCst);
                    respond(req, clock)
                });
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), handler)
                        .await;
                });
            }
        });
        Server { addr, hits, task }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

async fn respond(
    req: Request<Incoming>,
    clock: &'static ManualTime,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let status = |code: u16| Response::builder().status(code);
    let response = match req.uri().path() {
        "/ok" => status(200),
        "/missing" => status(404),
        "/down" => status(500),
        "/busy" => status(503).header("retry-after", "5"),
        "/busy-date" => {
            let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(60));
            status(503).header("retry-after", date)
        }
        "/slow" => {
            clock.advance(Duration::from_millis(300));
            status(200)
        }
        "/hang" => return std::future::pending().await,
        _ => status(400),
    };
    Ok(response.body(Full::new(Bytes::from_static(b"."))).unwrap())
}

type HttpClient = Client<HttpConnector, Empty<Bytes>>;

/// The error of the client behind the layer.
type HttpError = CallError<hyper_util::client::legacy::Error>;

fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

fn get(url: &str) -> Request<Empty<Bytes>> {
    Request::get(url).body(Empty::new()).unwrap()
}

type TestBreaker = Breaker<&'static ManualTime>;

/// A breaker shared by `Arc`, on its own manual clock.
fn breaker(threshold: u32) -> (Arc<TestBreaker>, &'static ManualTime) {
    let clock: &'static ManualTime = Box::leak(Box::new(ManualTime::new()));
    let b = Settings::new()
        .failure_threshold(threshold)
        .open_for(Duration::from_secs(1))
        .probe_timeout(Duration::from_secs(30))
        .build_on(clock, ())
        .expect("in range");
    (Arc::new(b), clock)
}

/// One request through `svc`, waiting for readiness first; the response's
/// status, or the error.
async fn status_of<S>(svc: &mut S, url: &str) -> Result<u16, HttpError>
where
    S: Service<Request<Empty<Bytes>>, Response = Response<Incoming>, Error = HttpError>,
{
    let svc = svc.ready().await?;
    let response = svc.call(get(url)).await?;
    let code = response.status().as_u16();
    // Read the body, so the connection goes back to the pool.
    let _ = response.into_body().collect().await;
    Ok(code)
}

#[tokio::test]
async fn five_hundreds_fail_four_hundreds_are_ignored() {
    let (b, clock) = breaker(2);
    let server = Server::start(clock).await;
    let mut svc = ServiceBuilder::new()
        .layer(BreakerLayer::new(b.clone()).classify(StatusClassifier))
        .service(client());

    for _ in 0..5 {
        assert_eq!(
            status_of(&mut svc, &server.url("/missing")).await.unwrap(),
            404
        );
    }
    assert_eq!(b.status(), Status::Closed, "4xx: ignored");
    assert_eq!(
        status_of(&mut svc, &server.url("/down")).await.unwrap(),
        500
    );
    assert_eq!(status_of(&mut svc, &server.url("/ok")).await.unwrap(), 200);
    assert_eq!(
        status_of(&mut svc, &server.url("/down")).await.unwrap(),
        500
    );
    assert_eq!(b.status(), Status::Closed, "consecutive failures only");
    // The failing response still reaches the caller.
    assert_eq!(
        status_of(&mut svc, &server.url("/down")).await.unwrap(),
        500
    );
    assert_eq!(b.status(), Status::Open);

    // Open: a matchable error, and the server is not called.
    let hits = server.hits();
    match status_of(&mut svc, &server.url("/ok")).await {
        Err(CallError::Open(rejected)) => {
            assert_eq!(rejected.cause(), Cause::Open);
            assert_eq!(
                rejected.retry_after_ticks(),
                Some(ManualTime::ticks(Duration::from_secs(1)))
            );
            assert_eq!(
                rejected.to_string(),
                "circuit open: call not admitted (retry after 1.0s)"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.hits(), hits);

    // After the open time, one probe; it succeeds and closes.
    clock.advance(Duration::from_secs(2));
    assert_eq!(status_of(&mut svc, &server.url("/ok")).await.unwrap(), 200);
    assert_eq!(b.status(), Status::Closed);
}

#[tokio::test]
async fn connection_errors_fail() {
    let (b, clock) = breaker(2);
    // A port nobody listens on: bound, then closed.
    let closed = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let _server = Server::start(clock).await;
    let mut svc = ServiceBuilder::new()
        .layer(BreakerLayer::new(b.clone()).classify(StatusClassifier))
        .service(client());
    let url = format!("http://{closed}/ok");
    for _ in 0..2 {
        let err = status_of(&mut svc, &url).await.unwrap_err();
        assert!(
            matches!(err, CallError::Inner(ref e) if e.is_connect()),
            "{err:?}"
        );
    }
    assert_eq!(b.status(), Status::Open);
    assert!(status_of(&mut svc, &url).await.unwrap_err().is_open());
}

/// A 503 with `Retry-After: 5` keeps the breaker open 5 s (not the
/// configured 1 s): checked in ticks on the manual clock.
#[tokio::test]
async fn retry_after_keeps_the_breaker_open_that_long() {
    let (b, clock) = breaker(1);
    let server = Server::start(clock).await;
    let mut svc = ServiceBuilder::new()
        .layer(BreakerLayer::new(b.clone()).classify(RetryAfterClassifier))
        .service(client());

    assert_eq!(
        status_of(&mut svc, &server.url("/busy")).await.unwrap(),
        503
    );
    assert_eq!(b.status(), Status::Open);
    let five_s = ManualTime::ticks(Duration::from_secs(5)); // 5 s and one tick
    let wait = |err: HttpError| err.rejected().and_then(|r| r.retry_after_ticks());
    let err = status_of(&mut svc, &server.url("/ok")).await.unwrap_err();
    assert_eq!(wait(err), Some(five_s));

    // At the configured open time (1 s) it is still open...
    clock.advance(Duration::from_secs(1) + ManualTime::TICK);
    let err = status_of(&mut svc, &server.url("/ok")).await.unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(4)));
    // ...up to one tick before 5 s...
    clock.advance_ticks(five_s - ManualTime::ticks(Duration::from_secs(1)) - 1);
    assert!(
        status_of(&mut svc, &server.url("/ok"))
            .await
            .unwrap_err()
            .is_open()
    );
    // ...and at 5 s the next caller is the probe.
    clock.advance_ticks(1);
    assert_eq!(status_of(&mut svc, &server.url("/ok")).await.unwrap(), 200);
    assert_eq!(b.status(), Status::Closed);
}

/// The HTTP-date form, measured from the system clock: a minute ahead,
/// less whatever real time passed between the server's answer and the
/// classification (checked loosely: more than 30 s).
#[tokio::test]
async fn retry_after_as_an_http_date() {
    let (b, clock) = breaker(1);
    let server = Server::start(clock).await;
    let mut svc = ServiceBuilder::new()
        .layer(BreakerLayer::new(b.clone()).classify(RetryAfterClassifier))
        .service(client());
    assert_eq!(
        status_of(&mut svc, &server.url("/busy-date"))
            .await
            .unwrap(),
        503
    );
    let err = status_of(&mut svc, &server.url("/ok")).await.unwrap_err();
    let wait = err.retry_after().unwrap();
    assert!(wait > Duration::from_secs(30), "{wait:?}");
    assert!(
        wait <= Duration::from_secs(60) + 2 * ManualTime::TICK,
        "{wait:?}"
    );
}

#[tokio::test]
async fn readiness_holds_no_probe() {
    let (b, clock) = breaker(1);
    let server = Server::start(clock).await;
    let layer = BreakerLayer::new(b.clone()).classify(StatusClassifier);
    let mut first = ServiceBuilder::new().layer(layer.clone()).service(client());
    let mut second = ServiceBuilder::new().layer(layer).service(client());
    let _ = status_of(&mut first, &server.url("/down")).await;
    clock.advance(Duration::from_secs(2));
    assert_eq!(b.status(), Status::HalfOpen);
    // Made ready, then never called (and dropped): no probe taken.
    first.ready().await.unwrap();
    assert_eq!(b.status(), Status::HalfOpen);
    drop(first);
    assert_eq!(
        status_of(&mut second, &server.url("/ok")).await.unwrap(),
        200
    );
    assert_eq!(b.status(), Status::Closed);
}

#[tokio::test]
async fn a_dropped_response_future_is_cancelled_not_failed() {
    let (b, clock) = breaker(1);
    let server = Server::start(clock).await;
    let mut svc = ServiceBuilder::new()
        .layer(BreakerLayer::new(b.clone()).classify(StatusClassifier))
        .service(client());
    let _ = status_of(&mut svc, &server.url("/down")).await;
    clock.advance(Duration::from_secs(2));
    // The probe's request hangs; the caller gives up on it.
    let probe = svc.ready().await.unwrap().call(get(&server.url("/hang")));
    assert_eq!(b.status(), Status::Probing);
    tokio::select! {
        biased;
        _ = tokio::task::yield_now() => {}
        _ = probe => unreachable!("/hang never answers"),
    }
    assert_eq!(
        b.status(),
        Status::HalfOpen,
        "ignored: the next caller probes"
    );
    assert_eq!(status_of(&mut svc, &server.url("/ok")).await.unwrap(), 200);
    assert_eq!(b.status(), Status::Closed);

    // With the cancel outcome set to a failure, the same reopens it.
    let (b, clock) = breaker(1);
    let mut svc = ServiceBuilder::new()
        .layer(
            BreakerLayer::new(b.clone())
                .classify(StatusClassifier)
                .on_cancel(Outcome::Failure),
        )
        .service(client());
    let _ = status_of(&mut svc, &server.url("/down")).await;
    clock.advance(Duration::from_secs(2));
    drop(svc.ready().await.unwrap().call(get(&server.url("/hang"))));
    assert_eq!(b.status(), Status::Open);
}

#[tokio::test]
async fn slow_responses_count_as_failures() {
    let (b, clock) = breaker(1);
    let server = Server::start(clock).await;
    let mut svc = ServiceBuilder::new()
        .layer(
            BreakerLayer::new(b.clone())
                .classify(StatusClassifier)
                .slow_after(Duration::from_millis(250)),
        )
        .service(client());
    assert_eq!(status_of(&mut svc, &server.url("/ok")).await.unwrap(), 200);
    assert_eq!(b.status(), Status::Closed);
    // 300 ms on the breaker's clock (the server moves it): a slow success.
    assert_eq!(
        status_of(&mut svc, &server.url("/slow")).await.unwrap(),
        200
    );
    assert_eq!(b.status(), Status::Open);
}

/// An inner service that panics, in `call` or in its future: a failure, no
/// probe leaked, and the panic reaches the caller.
#[tokio::test]
async fn a_panicking_inner_service_is_a_failure() {
    let (b, clock) = breaker(1);
    let panics_in_call = service_fn(|_: ()| -> std::future::Ready<Result<(), Infallible>> {
        panic!("the service panicked in call")
    });
    let mut svc = ServiceBuilder::new()
        .layer(BreakerLayer::new(b.clone()).classify(OkOrFailure))
        .service(panics_in_call);
    svc.ready().await.unwrap();
    let unwound = catch_unwind(AssertUnwindSafe(|| drop(svc.call(()))));
    assert!(unwound.is_err());
    assert_eq!(b.status(), Status::Open);

    clock.advance(Duration::from_secs(2));
    let panics_later = service_fn(|_: ()| async {
        tokio::task::yield_now().await;
        if true {
            panic!("the response future panicked");
        }
        Ok::<(), Infallible>(())
    });
    let mut svc = ServiceBuilder::new()
        .layer(BreakerLayer::new(b.clone()).classify(OkOrFailure))
        .service(panics_later);
    let future = svc.ready().await.unwrap().call(());
    assert_eq!(b.status(), Status::Probing);
    let joined = tokio::spawn(future).await;
    assert!(joined.unwrap_err().is_panic());
    assert_eq!(b.status(), Status::Open, "the probe failed; not lost");
}

/// The layer works on every breaker form: here a `static` breaker on a
/// `ManualClock` (no `RealClock`), through a `&'static` handle, around a
/// service that does not speak HTTP.
#[tokio::test]
async fn a_static_breaker_on_any_clock() {
    static CLOCK: ManualClock = ManualClock::new(0);
    static B: Breaker<&ManualClock> = Breaker::new(Config::new().failure_threshold(1), &CLOCK);
    let echo = service_fn(|n: u32| async move { if n == 0 { Err("zero") } else { Ok(n) } });
    let mut svc = ServiceBuilder::new()
        .layer(
            BreakerLayer::new(&B)
                .classify(OkOrFailure)
                .slow_after_ticks(1_000),
        )
        .service(echo);
    assert_eq!(svc.ready().await.unwrap().call(7).await, Ok(7));
    assert_eq!(
        svc.ready().await.unwrap().call(0).await,
        Err(CallError::Inner("zero"))
    );
    let err = svc.ready().await.unwrap().call(7).await.unwrap_err();
    assert_eq!(err.cause(), Some(Cause::Open));
    assert_eq!(
        err.to_string(),
        "circuit open: call not admitted (retry after 1000 ticks)"
    );
}

/// `RetryAfterClassifier` honours `Retry-After` on a 5xx and on a 429 only:
/// a 429 with one is a failure for that long (without one, ignored as a
/// 4xx), a 2xx or another 4xx with one is what its status says. Mutation
/// testing found the 429 test unpinned (`==` as `!=`).
#[test]
fn retry_after_counts_on_a_429_and_a_5xx_only() {
    use tripword_std::classify::{Classify, Verdict};
    let classify = |status: u16, retry_after: Option<&str>| {
        let mut response = Response::builder().status(status);
        if let Some(value) = retry_after {
            response = response.header("retry-after", value);
        }
        let result = Ok::<_, Infallible>(response.body(()).unwrap());
        RetryAfterClassifier.classify(&result)
    };
    let seven = Verdict::FailureFor(Duration::from_secs(7));
    assert_eq!(classify(429, Some("7")), seven);
    assert_eq!(classify(429, None), Verdict::Ignored);
    assert_eq!(classify(429, Some("0")), Verdict::Ignored, "zero: no wait");
    assert_eq!(classify(503, Some("7")), seven);
    assert_eq!(classify(503, None), Verdict::Failure);
    assert_eq!(classify(200, Some("7")), Verdict::Success);
    assert_eq!(classify(404, Some("7")), Verdict::Ignored);
    assert_eq!(classify(428, Some("7")), Verdict::Ignored);
    assert_eq!(classify(430, Some("7")), Verdict::Ignored);
}

/// A service whose readiness the test sets: each `poll_ready` takes the next
/// answer (ready when none is left); `call` echoes its request.
#[derive(Clone)]
struct Readiness(std::collections::VecDeque<std::task::Poll<Result<(), &'static str>>>);

impl Service<u32> for Readiness {
    type Response = u32;
    type Error = &'static str;
    type Future = std::future::Ready<Result<u32, &'static str>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), &'static str>> {
        self.0.pop_front().unwrap_or(std::task::Poll::Ready(Ok(())))
    }

    fn call(&mut self, n: u32) -> Self::Future {
        std::future::ready(Ok(n))
    }
}

/// One `poll_ready`, whatever it answers.
async fn poll_ready_once<S: Service<u32>>(svc: &mut S) -> std::task::Poll<Result<(), S::Error>> {
    std::future::poll_fn(|cx| std::task::Poll::Ready(svc.poll_ready(cx))).await
}

/// On a closed breaker, `BreakerService::poll_ready` is the inner
/// service's readiness: pending while it is, its error as
/// `CallError::Inner` (not counted: the breaker stays closed), ready when
/// it is. Mutation testing found it unpinned (an always-ready `poll_ready`
/// survived). An open breaker's readiness: `tests/tower_outage.rs`.
#[tokio::test]
async fn readiness_is_the_inner_services() {
    use std::task::Poll;
    let (b, _clock) = breaker(1);
    let answers = [Poll::Pending, Poll::Ready(Err("overloaded"))];
    let mut svc = ServiceBuilder::new()
        .layer(BreakerLayer::new(b.clone()).classify(OkOrFailure))
        .service(Readiness(answers.into()));
    assert_eq!(poll_ready_once(&mut svc).await, Poll::Pending);
    assert_eq!(
        poll_ready_once(&mut svc).await,
        Poll::Ready(Err(CallError::Inner("overloaded")))
    );
    assert_eq!(
        b.status(),
        Status::Closed,
        "a readiness error is not counted"
    );
    assert_eq!(poll_ready_once(&mut svc).await, Poll::Ready(Ok(())));
    assert_eq!(svc.call(7).await, Ok(7));
}

/// `CallError`'s accessors tell a rejection from the inner service's
/// error, and a `ResponseFuture` shows the call it wraps. Mutation testing
/// found them unpinned (`is_open` as `true`, `inner` and `into_inner` as
/// `None`, an empty `Debug`).
#[tokio::test]
async fn breaker_errors_tell_a_rejection_from_the_inner_error() {
    let (b, _clock) = breaker(1);
    let echo = service_fn(|n: u32| async move { if n == 0 { Err("zero") } else { Ok(n) } });
    let mut svc = ServiceBuilder::new()
        .layer(BreakerLayer::new(b.clone()).classify(OkOrFailure))
        .service(echo);

    let future = svc.ready().await.unwrap().call(0);
    assert_eq!(format!("{future:?}"), "CallAsync { state: running, .. }");
    let inner = future.await.unwrap_err();
    assert!(!inner.is_open());
    assert_eq!(inner.rejected(), None);
    assert_eq!(inner.inner(), Some(&"zero"));
    assert_eq!(inner.into_inner(), Some("zero"));

    assert_eq!(b.status(), Status::Open);
    let open = svc.ready().await.unwrap().call(7).await.unwrap_err();
    assert!(open.is_open());
    assert_eq!(open.cause(), Some(Cause::Open));
    assert_eq!(open.inner(), None);
    assert_eq!(open.into_inner(), None);
}

/// `use tripword_std::prelude::*` leaves the `http`, `tokio` and `tower`
/// crates reachable by their names (a glob of the crate root would bring
/// this crate's modules of those names, which shadow them): this module
/// compiles only if so.
mod the_prelude_shadows_no_crate {
    use tripword_std::prelude::*;

    #[tokio::test(flavor = "current_thread")]
    async fn tower_http_and_tokio_stay_the_crates() {
        let breaker = std::sync::Arc::new(Settings::new().failure_threshold(1).build().unwrap());
        let backend = tower::service_fn(|_req: http::Request<()>| async {
            Ok::<_, std::convert::Infallible>(http::Response::new(()))
        });
        let mut client = tower::ServiceBuilder::new()
            .layer(tripword_std::tower::BreakerLayer::new(breaker.clone()))
            .service(backend);
        let response = tower::ServiceExt::oneshot(&mut client, http::Request::new(())).await;
        assert!(response.is_ok());
        tokio::task::yield_now().await;
        assert_eq!(breaker.status(), Status::Closed);
    }
}
