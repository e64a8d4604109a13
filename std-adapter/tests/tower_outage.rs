//! The tower layers under an outage (features `tower`, `tokio`): a stack
//! fails fast. An open breaker's readiness does not wait on the inner
//! service (`Ready` at once, and the call rejects without polling or
//! calling it), readiness never elects a probe, a call admitted to an
//! inner service that was not polled ready polls it ready first, a panic
//! in the inner service's `call` is one failure on every admission path,
//! and a response future is `Send` for a request type that borrows.
//!
//! Every breaker runs on a `ManualClock` that only the tests move, and
//! every future is polled by hand with a waker that does nothing where a
//! single poll is the point: nothing here depends on how fast the machine
//! runs.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use tower::{Layer, Service, ServiceBuilder, ServiceExt, service_fn};
use tripword::clock::ManualClock;
use tripword::kit::{CircuitBreaker, Reply, TickVerdict};
use tripword::{Breaker, Cause, Config, Outcome, Rejected, Release, Status, Ticket};
use tripword_std::tower::{BreakerLayer, RegistryLayer};
use tripword_std::{CallError, Registry};

type Local = Breaker<&'static ManualClock>;

/// Trips on one failure, open 100 ticks; a probe times out after 1 000.
fn config() -> Config {
    Config::new()
        .failure_threshold(1)
        .open_for(100)
        .probe_timeout(1_000)
}

fn breaker(clock: &'static ManualClock) -> Arc<Local> {
    Arc::new(Breaker::new(config(), clock))
}

/// Opens `b` with one failure.
fn trip<B: CircuitBreaker>(b: &B) {
    let ticket = b.acquire().expect("closed");
    b.release(ticket, Outcome::Failure);
    assert_eq!(b.status(), Status::Open);
}

/// How often the inner service was polled for readiness and called, over
/// all its clones.
#[derive(Clone, Default)]
struct Counts {
    polls: Arc<AtomicUsize>,
    calls: Arc<AtomicUsize>,
}

impl Counts {
    fn get(&self) -> (usize, usize) {
        (
            self.polls.load(Ordering::SeqCst),
            self.calls.load(Ordering::SeqCst),
        )
    }
}

/// When the inner service is ready.
#[derive(Clone)]
enum Readiness {
    Always,
    /// Never: a pool that keeps reconnecting, a balancer with no endpoint.
    Never,
    /// Each poll takes the next answer; ready once none is left.
    Script(VecDeque<Poll<Result<(), &'static str>>>),
}

/// An inner service that counts its polls and calls, ready as its
/// `Readiness` says; `call` echoes the request, or panics if `panics`.
#[derive(Clone)]
struct Inner {
    counts: Counts,
    readiness: Readiness,
    panics: bool,
}

impl Inner {
    fn new(readiness: Readiness) -> (Inner, Counts) {
        let counts = Counts::default();
        let inner = Inner {
            counts: counts.clone(),
            readiness,
            panics: false,
        };
        (inner, counts)
    }

    fn panicking(readiness: Readiness) -> (Inner, Counts) {
        let (mut inner, counts) = Inner::new(readiness);
        inner.panics = true;
        (inner, counts)
    }
}

impl Service<u32> for Inner {
    type Response = u32;
    type Error = &'static str;
    type Future = std::future::Ready<Result<u32, &'static str>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), &'static str>> {
        self.counts.polls.fetch_add(1, Ordering::SeqCst);
        match &mut self.readiness {
            Readiness::Always => Poll::Ready(Ok(())),
            Readiness::Never => Poll::Pending,
            Readiness::Script(answers) => answers.pop_front().unwrap_or(Poll::Ready(Ok(()))),
        }
    }

    fn call(&mut self, n: u32) -> Self::Future {
        self.counts.calls.fetch_add(1, Ordering::SeqCst);
        assert!(!self.panics, "the inner service panicked in call");
        std::future::ready(Ok(n))
    }
}

fn cx() -> Context<'static> {
    Context::from_waker(Waker::noop())
}

/// One `poll_ready`, with a waker that does nothing.
fn poll_ready_once<S: Service<R>, R>(svc: &mut S) -> Poll<Result<(), S::Error>> {
    svc.poll_ready(&mut cx())
}

/// One poll of `future`, with a waker that does nothing.
fn poll_once<F: Future>(future: Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut cx())
}

/// `future`'s output at its first poll (it must be ready).
fn ready_now<F: Future>(future: F) -> F::Output {
    match poll_once(pin!(future)) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("not ready at the first poll"),
    }
}

/// A breaker written here: a `tripword` breaker whose async admission
/// answers `Reply::Wait` when `wait` (as a breaker in a remote store
/// does), counting what it is asked to release.
struct Remote {
    breaker: Local,
    wait: bool,
    released: AtomicUsize,
}

impl Remote {
    fn new(clock: &'static ManualClock, wait: bool) -> Remote {
        Remote {
            breaker: Breaker::new(config(), clock),
            wait,
            released: AtomicUsize::new(0),
        }
    }

    fn released(&self) -> usize {
        self.released.load(Ordering::SeqCst)
    }
}

impl CircuitBreaker for Remote {
    type Ticket = Ticket;
    type Clock = &'static ManualClock;
    type Acquiring = std::future::Ready<Result<Ticket, Rejected>>;
    type Releasing = std::future::Ready<Release>;

    fn acquire(&self) -> Result<Ticket, Rejected> {
        self.breaker.acquire()
    }
    fn release(&self, ticket: Ticket, outcome: Outcome) -> Release {
        self.released.fetch_add(1, Ordering::SeqCst);
        self.breaker.release(ticket, outcome)
    }
    fn status(&self) -> Status {
        self.breaker.status()
    }
    fn clock(&self) -> &&'static ManualClock {
        self.breaker.clock()
    }
    fn acquire_async(&self) -> Reply<Result<Ticket, Rejected>, Self::Acquiring> {
        match self.wait {
            true => Reply::Wait(std::future::ready(self.acquire())),
            false => Reply::Ready(self.acquire()),
        }
    }
    fn release_async(
        &self,
        ticket: Ticket,
        verdict: TickVerdict,
    ) -> Reply<Release, Self::Releasing> {
        let released = self.release_verdict(ticket, verdict);
        match self.wait {
            true => Reply::Wait(std::future::ready(released)),
            false => Reply::Ready(released),
        }
    }
}

/// An open breaker's readiness is `Ready` at once, without polling an
/// inner service that would never be ready, and the call rejects without
/// touching it.
#[test]
fn an_open_breaker_is_ready_at_once_and_rejects_without_the_inner_service() {
    static CLOCK: ManualClock = ManualClock::new(0);
    let b = breaker(&CLOCK);
    trip(&b);
    let (inner, counts) = Inner::new(Readiness::Never);
    let mut svc = BreakerLayer::new(b.clone()).layer(inner);
    assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
    let err = ready_now(svc.call(7)).unwrap_err();
    assert_eq!(err.cause(), Some(Cause::Open));
    assert_eq!(counts.get(), (0, 0), "neither polled nor called");
    // `ready()` completes at once, too.
    assert!(ready_now(svc.ready()).is_ok());
    assert!(ready_now(svc.call(7)).unwrap_err().is_open());
    assert_eq!(counts.get(), (0, 0));
}

#[test]
fn a_forced_open_breaker_is_ready_at_once_and_rejects_without_the_inner_service() {
    static CLOCK: ManualClock = ManualClock::new(0);
    let b = breaker(&CLOCK);
    b.force_open();
    let (inner, counts) = Inner::new(Readiness::Never);
    let mut svc = BreakerLayer::new(b.clone()).layer(inner);
    assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
    let err = ready_now(svc.call(7)).unwrap_err();
    assert_eq!(err.cause(), Some(Cause::ForcedOpen));
    assert_eq!(counts.get(), (0, 0));
}

/// A probe held by another call: `Probing` rejects, so readiness does not
/// wait either.
#[test]
fn a_probing_breaker_is_ready_at_once_and_rejects_without_the_inner_service() {
    static CLOCK: ManualClock = ManualClock::new(0);
    let b = breaker(&CLOCK);
    trip(&b);
    CLOCK.advance(100);
    let probe = b.acquire().expect("the probe");
    assert_eq!(b.status(), Status::Probing);
    let (inner, counts) = Inner::new(Readiness::Never);
    let mut svc = BreakerLayer::new(b.clone()).layer(inner);
    assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
    let err = ready_now(svc.call(7)).unwrap_err();
    assert_eq!(err.cause(), Some(Cause::Probing));
    assert_eq!(counts.get(), (0, 0));
    b.release(probe, Outcome::Success);
    assert_eq!(b.status(), Status::Closed);
}

/// With an inner service that is ready, an open breaker polls it 0 times.
#[test]
fn an_open_breaker_does_not_poll_a_ready_inner_service() {
    static CLOCK: ManualClock = ManualClock::new(0);
    let b = breaker(&CLOCK);
    let (inner, counts) = Inner::new(Readiness::Always);
    let mut svc = BreakerLayer::new(b.clone()).layer(inner);
    assert!(ready_now(svc.ready()).is_ok());
    assert_eq!(
        counts.get(),
        (1, 0),
        "closed: the inner service's readiness"
    );
    trip(&b);
    for _ in 0..3 {
        assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
        assert!(ready_now(svc.call(7)).unwrap_err().is_open());
    }
    assert_eq!(counts.get(), (1, 0));
}

/// A closed breaker's readiness is the inner service's: pending while it
/// is (one poll by hand, no timer).
#[test]
fn a_closed_breaker_waits_on_an_inner_service_that_is_not_ready() {
    static CLOCK: ManualClock = ManualClock::new(0);
    let b = breaker(&CLOCK);
    let (inner, counts) = Inner::new(Readiness::Never);
    let mut svc = BreakerLayer::new(b.clone()).layer(inner);
    assert_eq!(poll_ready_once(&mut svc), Poll::Pending);
    assert_eq!(counts.get(), (1, 0));
    assert_eq!(b.status(), Status::Closed);
}

/// `poll_ready` on a half-open breaker reads its status and polls the inner
/// service: it elects no probe, so a service made ready (or left pending)
/// and then dropped leaves the breaker half-open, and the next caller is
/// the probe.
#[test]
fn readiness_never_elects_a_probe() {
    static CLOCK: ManualClock = ManualClock::new(0);
    let b = breaker(&CLOCK);
    trip(&b);
    CLOCK.advance(100);
    assert_eq!(b.status(), Status::HalfOpen);
    for readiness in [Readiness::Always, Readiness::Never] {
        let (inner, counts) = Inner::new(readiness);
        let mut svc = BreakerLayer::new(b.clone()).layer(inner);
        let _ = poll_ready_once(&mut svc);
        assert_eq!(
            counts.get(),
            (1, 0),
            "half-open: the inner service is polled"
        );
        drop(svc);
        assert_eq!(b.status(), Status::HalfOpen);
    }
    let probe = b.acquire().expect("the next caller is the probe");
    assert_eq!(b.status(), Status::Probing);
    b.release(probe, Outcome::Success);
}

/// Ready because the breaker was open (the inner service not polled), then
/// admitted at `call` (the open time ran out: this call is the probe): the
/// response future polls the inner service ready, then calls it.
#[test]
fn a_call_admitted_after_an_open_readiness_polls_the_inner_service_ready_first() {
    static CLOCK: ManualClock = ManualClock::new(0);
    let b = breaker(&CLOCK);
    trip(&b);
    let (inner, counts) = Inner::new(Readiness::Script([Poll::Pending].into()));
    let mut svc = BreakerLayer::new(b.clone()).layer(inner);
    assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
    assert_eq!(counts.get(), (0, 0));
    CLOCK.advance(100);
    let mut call = pin!(svc.call(7));
    assert_eq!(b.status(), Status::Probing, "admitted as the probe");
    assert_eq!(counts.get(), (0, 0), "not called before it is ready");
    assert!(poll_once(call.as_mut()).is_pending());
    assert_eq!(counts.get(), (1, 0), "polled, not ready: not called");
    assert_eq!(poll_once(call.as_mut()), Poll::Ready(Ok(7)));
    assert_eq!(counts.get(), (2, 1), "polled ready, then called");
    assert_eq!(b.status(), Status::Closed, "the probe succeeded");

    // The service is not ready after a call: the next `poll_ready` polls
    // the inner service (the clone left in its place) again.
    let _ = poll_ready_once(&mut svc);
    assert_eq!(counts.get(), (3, 1));
}

/// A `poll_ready` that did not poll the inner service is remembered until
/// the next `call`: a `poll_ready` that polls it in between (the open time
/// ran out) does not forget it, and the call, admitted, polls the inner
/// service ready once more before calling it. The `call` forgets it: the
/// next request, polled ready, is called at once.
#[test]
fn an_open_readiness_is_remembered_until_the_next_call() {
    static CLOCK: ManualClock = ManualClock::new(0);
    let b = breaker(&CLOCK);
    trip(&b);
    let (inner, counts) = Inner::new(Readiness::Always);
    let mut svc = BreakerLayer::new(b.clone()).layer(inner);
    assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
    assert_eq!(counts.get(), (0, 0), "open: not polled");
    CLOCK.advance(100);
    assert_eq!(b.status(), Status::HalfOpen);
    assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
    assert_eq!(counts.get(), (1, 0), "half-open: polled");
    let mut call = pin!(svc.call(7));
    assert_eq!(counts.get(), (1, 0), "not called at `call`");
    assert_eq!(poll_once(call.as_mut()), Poll::Ready(Ok(7)));
    assert_eq!(counts.get(), (2, 1), "polled ready once more, then called");
    assert_eq!(b.status(), Status::Closed, "the probe succeeded");

    assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
    let call = svc.call(8);
    assert_eq!(counts.get(), (3, 2), "forgotten: called at `call`");
    assert_eq!(ready_now(call), Ok(8));
}

/// A readiness error on that path is the call's `CallError::Inner`; the
/// inner service is not called and the probe is given back (`Ignored`):
/// the breaker is half-open again and the next caller probes. Dropped
/// while it waits for readiness, the call records its cancel outcome.
#[test]
fn a_readiness_error_after_admission_is_ignored() {
    static CLOCK: ManualClock = ManualClock::new(0);
    let b = breaker(&CLOCK);
    trip(&b);
    let script = Readiness::Script([Poll::Ready(Err("no connection"))].into());
    let (inner, counts) = Inner::new(script);
    let mut svc = BreakerLayer::new(b.clone()).layer(inner);
    assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
    CLOCK.advance(100);
    let output = ready_now(svc.call(7));
    assert_eq!(output, Err(CallError::Inner("no connection")));
    assert_eq!(counts.get(), (1, 0));
    assert_eq!(b.status(), Status::HalfOpen, "the probe given back");

    // Cancelled while the inner service is not ready: `Ignored` too (the
    // default cancel outcome); a failure when the layer says so.
    for (on_cancel, after) in [
        (Outcome::Ignored, Status::HalfOpen),
        (Outcome::Failure, Status::Open),
    ] {
        let (inner, _) = Inner::new(Readiness::Never);
        let mut svc = BreakerLayer::new(b.clone())
            .on_cancel(on_cancel)
            .layer(inner);
        b.force_open_for(100);
        assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
        CLOCK.advance(100);
        let mut call = Box::pin(svc.call(7));
        assert!(poll_once(call.as_mut()).is_pending());
        assert_eq!(b.status(), Status::Probing);
        drop(call);
        assert_eq!(b.status(), after, "{on_cancel:?}");
    }
}

/// A panic in the inner service's `call` is recorded once, as a failure,
/// and unwinds on, whether the call was admitted at once (the local path)
/// or after a round trip (`Reply::Wait`, a remote breaker).
#[test]
fn a_panic_in_the_inner_call_is_one_failure_at_once_or_after_a_round_trip() {
    static CLOCK: ManualClock = ManualClock::new(0);
    for wait in [false, true] {
        let b = Arc::new(Remote::new(&CLOCK, wait));
        let (inner, counts) = Inner::panicking(Readiness::Always);
        let mut svc = BreakerLayer::new(b.clone()).layer(inner);
        assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            let call = pin!(svc.call(7));
            let _ = poll_once(call);
        }));
        assert!(unwound.is_err(), "the panic reaches the caller");
        assert_eq!(counts.get(), (1, 1));
        assert_eq!(b.status(), Status::Open, "wait: {wait}");
        assert_eq!(b.released(), 1, "wait: {wait}");
    }
}

/// The same when the call is admitted (as the probe) to an inner service
/// that was not polled ready (the breaker was open at `poll_ready`): the
/// response future polls it ready, calls it, and the panic fails the
/// probe, once, at once or after a round trip.
#[test]
fn a_panic_in_the_inner_call_is_one_failure_after_an_open_readiness() {
    static CLOCK: ManualClock = ManualClock::new(0);
    for wait in [false, true] {
        let b = Arc::new(Remote::new(&CLOCK, wait));
        trip(&*b);
        let (inner, counts) = Inner::panicking(Readiness::Always);
        let mut svc = BreakerLayer::new(b.clone()).layer(inner);
        assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
        CLOCK.advance(100);
        let mut call = None;
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            let admitted = call.insert(Box::pin(svc.call(7)));
            assert_eq!(b.status(), Status::Probing);
            poll_once(admitted.as_mut())
        }));
        assert!(unwound.is_err(), "the panic reaches the caller");
        assert_eq!(counts.get(), (1, 1), "polled ready, then called");
        assert_eq!(b.status(), Status::Open, "the probe failed; wait: {wait}");
        assert_eq!(b.released(), 2, "the trip and the probe; wait: {wait}");
        drop(call); // after the unwind: records nothing more
        assert_eq!(b.released(), 2);
        CLOCK.advance(1_000);
    }
}

/// The same through the per-key layer, on a registry of breakers whose
/// admission waits.
#[test]
fn a_panic_in_the_inner_call_is_one_failure_through_the_registry_layer() {
    static CLOCK: ManualClock = ManualClock::new(0);
    for wait in [false, true] {
        let remotes: Arc<Registry<u32, Remote>> =
            Arc::new(Registry::new(move |_: &u32| Remote::new(&CLOCK, wait)));
        let (inner, counts) = Inner::panicking(Readiness::Always);
        let mut svc = RegistryLayer::new(remotes.clone(), |n: &u32| *n).layer(inner);
        assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            let call = pin!(svc.call(7));
            let _ = poll_once(call);
        }));
        assert!(unwound.is_err());
        assert_eq!(counts.get(), (1, 1));
        let entry = remotes.get(&7);
        assert_eq!(entry.status(), Status::Open, "wait: {wait}");
        assert_eq!(entry.released(), 1, "wait: {wait}");
    }
}

/// The per-key layer learns the key only at `call`: its readiness is the
/// inner service's (pending while that is not ready, whatever the keys'
/// breakers say: it cannot fail fast by key), and `call` still rejects an
/// open key's request without calling the inner service.
#[test]
fn the_registry_layer_is_ready_when_the_inner_service_is_and_rejects_by_key() {
    static CLOCK: ManualClock = ManualClock::new(0);
    let hosts: Arc<Registry<u32, Local>> =
        Arc::new(Registry::new(|_: &u32| Breaker::new(config(), &CLOCK)));
    trip(&*hosts.get(&1));

    let (inner, counts) = Inner::new(Readiness::Never);
    let mut svc = RegistryLayer::new(hosts.clone(), |n: &u32| *n).layer(inner);
    assert_eq!(poll_ready_once(&mut svc), Poll::Pending, "the limit");
    assert_eq!(counts.get(), (1, 0));

    let (inner, counts) = Inner::new(Readiness::Always);
    let mut svc = RegistryLayer::new(hosts.clone(), |n: &u32| *n).layer(inner);
    assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
    let err = ready_now(svc.call(1)).unwrap_err();
    assert_eq!(err.cause(), Some(Cause::Open));
    assert_eq!(counts.get(), (1, 0), "the open key's request: not called");
    assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
    assert_eq!(ready_now(svc.call(2)), Ok(2));
    assert_eq!(counts.get(), (2, 1), "another key flows");
}

/// A layered call with a request type that borrows (`&'static str`) can be
/// spawned: the response futures name the inner future, not the request.
#[tokio::test]
async fn a_call_with_a_borrowed_request_spawns() {
    static CLOCK: ManualClock = ManualClock::new(0);
    let b = breaker(&CLOCK);
    let echo = service_fn(|s: &'static str| async move { Ok::<_, Infallible>(s.len()) });
    let mut svc = ServiceBuilder::new()
        .layer(BreakerLayer::new(b.clone()))
        .service(echo);
    let spawned = tokio::spawn(async move { svc.ready().await?.call("x").await });
    assert_eq!(spawned.await.unwrap(), Ok(1));

    let hosts: Arc<Registry<String, Local>> =
        Arc::new(Registry::new(|_: &String| Breaker::new(config(), &CLOCK)));
    let mut svc = ServiceBuilder::new()
        .layer(RegistryLayer::new(hosts, |s: &&'static str| s.to_string()))
        .service(echo);
    let spawned = tokio::spawn(async move { svc.ready().await?.call("xy").await });
    assert_eq!(spawned.await.unwrap(), Ok(2));
}

/// An inner service that is not `Send` (an `Rc`) works behind `.local()`,
/// on every path: at once, after a round trip, and after an open
/// readiness.
#[test]
fn a_service_that_is_not_send_works_behind_local() {
    static CLOCK: ManualClock = ManualClock::new(0);
    let calls = Rc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let inner = service_fn(move |n: u32| {
        counted.fetch_add(1, Ordering::SeqCst);
        std::future::ready(Ok::<_, Infallible>(n))
    });
    for wait in [false, true] {
        let b = Arc::new(Remote::new(&CLOCK, wait));
        let mut svc = BreakerLayer::new(b.clone()).layer(inner.clone()).local();
        assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
        assert_eq!(ready_now(svc.call(7)), Ok(7));
        trip(&b);
        assert_eq!(poll_ready_once(&mut svc), Poll::Ready(Ok(())));
        CLOCK.advance(100);
        assert_eq!(ready_now(svc.call(8)), Ok(8));
        assert_eq!(b.status(), Status::Closed);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}
