//! A flaky HTTP service on 127.0.0.1, and a client behind the tower layer,
//! in real time: the breaker opens on 5xx, ignores 4xx, rejects at once
//! while open (the server is not called), probes once after the open time,
//! and honours a `503` with `Retry-After`.
//!
//! Run it with
//! `cargo run --release -p tripword-std --example http_service --features tower,tokio`.
//! It prints each state change as the breaker makes it, and exits non-zero
//! if anything happens that should not.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use http::{Request, Response};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Bytes, Incoming};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tower::{BoxError, Service, ServiceBuilder, ServiceExt};
use tripword_std::http::RetryAfterClassifier;
use tripword_std::tower::BreakerLayer;
use tripword_std::{CallError, MonotonicClock, RealClock, Settings};
use tripword_std::{OnTransition, Status, Transition};

const THRESHOLD: u32 = 3;
const OPEN_FOR: Duration = Duration::from_millis(200);
/// What the server asks for when it is busy.
const RETRY_AFTER_S: u64 = 1;

/// What the server answers.
const UP: u8 = 0;
const DOWN: u8 = 1; // 500
const BUSY: u8 = 2; // 503, Retry-After: 1

/// The flaky server: its mode can be switched, and it counts the requests
/// that reach it.
struct Flaky {
    addr: SocketAddr,
    mode: Arc<AtomicU8>,
    hits: Arc<AtomicUsize>,
}

impl Flaky {
    async fn start() -> std::io::Result<Flaky> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (mode, hits) = (Arc::new(AtomicU8::new(UP)), Arc::new(AtomicUsize::new(0)));
        let (m, h) = (mode.clone(), hits.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (mode, hits) = (m.clone(), h.clone());
                let handler = hyper::service::service_fn(move |req: Request<Incoming>| {
                    hits.fetch_add(1, Ordering::SeqCst);
                    let builder = Response::builder();
                    let builder = match (req.uri().path(), mode.load(Ordering::SeqCst)) {
                        ("/missing", _) => builder.status(404),
                        (_, DOWN) => builder.status(500),
                        (_, BUSY) => builder.status(503).header("retry-after", RETRY_AFTER_S),
                        _ => builder.status(200),
                    };
                    let response = builder.body(Full::new(Bytes::from_static(b"price: 42")));
                    async move { Ok::<_, Infallible>(response.expect("a valid response")) }
                });
                tokio::spawn(async move {
                    let io = TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, handler)
                        .await;
                });
            }
        });
        Ok(Flaky { addr, mode, hits })
    }

    fn set(&self, mode: u8) {
        self.mode.store(mode, Ordering::SeqCst);
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Counts what the client saw, and what went wrong.
#[derive(Default)]
struct Tally {
    requests: usize,
    rejected: usize,
    problems: Vec<String>,
}

impl Tally {
    fn expect(&mut self, what: &str, ok: bool) {
        if !ok {
            println!("    UNEXPECTED: {what}");
            self.problems.push(what.to_string());
        }
    }
}

static TRANSITIONS: AtomicUsize = AtomicUsize::new(0);

fn print_transition(t: Transition) {
    TRANSITIONS.fetch_add(1, Ordering::SeqCst);
    println!("    transition: {t}");
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<ExitCode, BoxError> {
    let server = Flaky::start().await?;
    let breaker = Arc::new(
        Settings::new()
            .failure_threshold(THRESHOLD)
            .open_for(OPEN_FOR)
            .probe_timeout(Duration::from_secs(2))
            .build_with(OnTransition(print_transition))?,
    );
    // The breaker outside, a deadline inside it: a timeout counts as a
    // failure; a 503 with Retry-After keeps the breaker open that long.
    let mut client = ServiceBuilder::new()
        .layer(BreakerLayer::new(breaker.clone()).classify(RetryAfterClassifier))
        .timeout(Duration::from_secs(2))
        .service(Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>());
    let url = |path: &str| format!("http://{}{path}", server.addr);
    let mut tally = Tally::default();

    println!(
        "tripword http_service: server on {}, threshold {THRESHOLD}, open for {} ms, real time",
        server.addr,
        OPEN_FOR.as_millis()
    );
    println!("(transitions print as they happen, inside the call that makes them)\n");

    println!("# The service is up.");
    let r = request(&mut client, &url("/price"), &mut tally).await;
    tally.expect("200 while up", r == "200");

    println!("# A client sends bad requests: 404s say nothing about the service.");
    for _ in 0..THRESHOLD + 1 {
        request(&mut client, &url("/missing"), &mut tally).await;
    }
    tally.expect(
        "still closed after 404s",
        breaker.status() == Status::Closed,
    );

    println!("# The service goes down: {THRESHOLD} 500s in a row open the breaker.");
    server.set(DOWN);
    for _ in 0..THRESHOLD {
        request(&mut client, &url("/price"), &mut tally).await;
    }
    let opened = Instant::now();
    tally.expect("open after the 500s", breaker.status() == Status::Open);
    println!("# Open: answered at once, the server is not called.");
    let hits = server.hits();
    for _ in 0..3 {
        let r = request(&mut client, &url("/price"), &mut tally).await;
        tally.expect("rejected while open", r.starts_with("rejected"));
    }
    tally.expect("no request reached the server", server.hits() == hits);

    println!("# After the open time, one probe. Still down: open again.");
    wait_for_half_open(&breaker, opened, &mut tally).await;
    request(&mut client, &url("/price"), &mut tally).await;
    let reopened = Instant::now();
    tally.expect(
        "open again after a failed probe",
        breaker.status() == Status::Open,
    );

    println!("# The service recovers: the next probe closes the breaker.");
    server.set(UP);
    wait_for_half_open(&breaker, reopened, &mut tally).await;
    let r = request(&mut client, &url("/price"), &mut tally).await;
    tally.expect("the probe succeeds", r == "200");
    tally.expect("closed after the probe", breaker.status() == Status::Closed);

    println!(
        "# Overloaded: 503 with Retry-After: {RETRY_AFTER_S}. The breaker stays open that long."
    );
    server.set(BUSY);
    for _ in 0..THRESHOLD {
        request(&mut client, &url("/price"), &mut tally).await;
    }
    let busy_since = Instant::now();
    let r = ready_call(&mut client, &url("/price")).await;
    let wait = match &r {
        Err(err) => err.retry_after(),
        Ok(_) => None,
    };
    tally.requests += 1;
    tally.rejected += usize::from(r.is_err());
    let asked = Duration::from_secs(RETRY_AFTER_S);
    println!(
        "{:<18} retry after {:.0} ms (configured open time {} ms, asked for {} ms)",
        "rejected:",
        wait.map_or(f64::NAN, |w| w.as_secs_f64() * 1e3),
        OPEN_FOR.as_millis(),
        asked.as_millis()
    );
    // At most the wait asked for (and the tick every duration gets), and
    // well past the configured open time unless this thread slept ~1 s.
    let honoured = wait.is_some_and(|w| w <= asked + MonotonicClock::TICK)
        && (wait.is_some_and(|w| w > OPEN_FOR) || busy_since.elapsed() > asked - OPEN_FOR);
    tally.expect("Retry-After honoured", honoured);
    server.set(UP);
    wait_for_half_open(&breaker, busy_since, &mut tally).await;
    let held = busy_since.elapsed();
    tally.expect(
        "open at least the Retry-After",
        held >= asked - Duration::from_millis(50),
    );
    let r = request(&mut client, &url("/price"), &mut tally).await;
    tally.expect(
        "closed again",
        r == "200" && breaker.status() == Status::Closed,
    );

    println!(
        "\nhttp_service: {} requests, {} reached the server, {} rejected at once, {} transitions, \
         Retry-After held it open {} ms (configured {} ms), final state {}",
        tally.requests,
        server.hits(),
        tally.rejected,
        TRANSITIONS.load(Ordering::SeqCst),
        held.as_millis(),
        OPEN_FOR.as_millis(),
        breaker.status()
    );
    if tally.problems.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        println!("problems: {:?}", tally.problems);
        Ok(ExitCode::FAILURE)
    }
}

type ClientError = CallError<BoxError>;

/// One request when the client is ready.
async fn ready_call<S>(client: &mut S, url: &str) -> Result<u16, ClientError>
where
    S: Service<Request<Empty<Bytes>>, Response = Response<Incoming>, Error = ClientError>,
{
    let request = Request::get(url)
        .body(Empty::new())
        .expect("a valid request");
    let response = client.ready().await?.call(request).await?;
    let status = response.status().as_u16();
    let _ = response.into_body().collect().await; // the connection goes back to the pool
    Ok(status)
}

/// One request, printed: its status, or why it was not made.
async fn request<S>(client: &mut S, url: &str, tally: &mut Tally) -> String
where
    S: Service<Request<Empty<Bytes>>, Response = Response<Incoming>, Error = ClientError>,
{
    tally.requests += 1;
    let path = url.rsplit_once('/').map_or(url, |(_, p)| p);
    let shown = match ready_call(client, url).await {
        Ok(status) => status.to_string(),
        Err(CallError::Open(r)) => {
            tally.rejected += 1;
            let wait = r.retry_after();
            format!(
                "rejected ({}, retry in {:.0} ms) - not sent",
                r.cause(),
                wait.map_or(f64::NAN, |w| w.as_secs_f64() * 1e3)
            )
        }
        Err(CallError::Inner(e)) => format!("error: {e}"),
    };
    println!("GET /{path:<10} {shown}");
    shown
}

/// Polls the status (a read: it moves nothing) until the open time is
/// over; the next request makes the move and is the probe.
async fn wait_for_half_open<O: tripword::Observer>(
    breaker: &tripword::Breaker<MonotonicClock, tripword::W64, O>,
    since: Instant,
    tally: &mut Tally,
) {
    while breaker.status() != Status::HalfOpen {
        if since.elapsed() > Duration::from_secs(30) {
            tally.expect("half-open within 30 s", false);
            return;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    println!(
        "{:<18} {:.1} ms after opening",
        "half-open:",
        since.elapsed().as_secs_f64() * 1e3
    );
}
