//! The tower layer through an outage with several probes and a ramp
//! (feature `tower`): in half-open exactly `n` probe requests reach the
//! inner service (a full trial fails fast in `poll_ready`, as `Probing`
//! does), then the ramp's share of requests per stage (a ramping breaker
//! is not failed fast in `poll_ready`; a request the ramp refuses is the
//! layer's rejection, cause `Ramp`, with the wait until the next stage),
//! then every request.
//!
//! The breaker runs on a `ManualClock` that only the test moves, and every
//! future is polled by hand: nothing here depends on how fast the machine
//! runs.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use tower::{Layer, Service};
use tripword::clock::ManualClock;
use tripword::{Breaker, Cause, Config, Ramp, Status};
use tripword_std::tower::BreakerLayer;
use tripword_std::{CallError, Registry, tower::RegistryLayer};

/// A ramp's time unit on the 64-bit word at time shift 0 (`share_bits +
/// ramp_failure_bits` = 14 bits): stages and instants are multiples of it,
/// so that the test's stage boundaries are the word's.
const UNIT: u64 = 1 << 14;
const STEP: u64 = 4 * UNIT;
/// How long a stage of `STEP` ticks lasts in the word: whole units, one
/// more than `STEP` spans, so that a stage lasts at least `STEP` between
/// two readings rounded down to units (`docs/spec.md`, "The ramp").
const STAGE: u64 = 5 * UNIT;
/// When the probes succeed and the ramp starts.
const T0: u64 = 64 * UNIT;

/// Trips on one failure, open 100 ticks, three probes, then 25 % and
/// 50 % of calls for `STEP` ticks each.
fn config() -> Config {
    Config::new()
        .failure_threshold(1)
        .open_for(100)
        .probe_timeout(T0)
        .horizon(0)
        .probes(3)
        .ramp(Ramp::stages(STEP, &[2_500, 5_000]))
}

/// The inner service: counts its polls and calls; its responses fail
/// while `down`, and stay pending while the gate is shut.
#[derive(Clone, Default)]
struct Inner {
    polls: Arc<AtomicUsize>,
    calls: Arc<AtomicUsize>,
    down: Arc<AtomicBool>,
    shut: Arc<AtomicBool>,
}

impl Inner {
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
    fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }
}

struct Response {
    fail: bool,
    shut: Arc<AtomicBool>,
}

impl Future for Response {
    type Output = Result<u32, &'static str>;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        if self.shut.load(Ordering::SeqCst) {
            Poll::Pending
        } else if self.fail {
            Poll::Ready(Err("down"))
        } else {
            Poll::Ready(Ok(200))
        }
    }
}

impl Service<u32> for Inner {
    type Response = u32;
    type Error = &'static str;
    type Future = Response;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), &'static str>> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: u32) -> Response {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Response {
            fail: self.down.load(Ordering::SeqCst),
            shut: self.shut.clone(),
        }
    }
}

fn cx() -> Context<'static> {
    Context::from_waker(Waker::noop())
}

/// Polls `svc` ready (it must be ready at once) and calls it.
fn send<S: Service<u32>>(svc: &mut S) -> S::Future
where
    S::Error: std::fmt::Debug,
{
    match svc.poll_ready(&mut cx()) {
        Poll::Ready(Ok(())) => svc.call(7),
        other => panic!("not ready at once: {other:?}"),
    }
}

/// The output of a future that is ready at its first poll.
fn now<F: Future>(f: F) -> F::Output {
    match std::pin::pin!(f).poll(&mut cx()) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("pending"),
    }
}

/// `count` requests at one instant: how many reached the inner service;
/// each refused one must be the ramp's, with a wait of at most `wait`.
fn stage<S>(svc: &mut S, inner: &Inner, count: usize, wait: u64) -> usize
where
    S: Service<u32, Response = u32, Error = CallError<&'static str>>,
{
    let before = inner.calls();
    for _ in 0..count {
        match now(send(svc)) {
            Ok(200) => {}
            Err(CallError::Open(rejection)) => {
                assert_eq!(rejection.cause(), Cause::Ramp);
                let ticks = rejection.retry_after_ticks().unwrap();
                assert!((1..=wait).contains(&ticks), "{ticks} > {wait}");
            }
            other => panic!("{other:?}"),
        }
    }
    inner.calls() - before
}

#[test]
fn an_outage_through_three_probes_and_a_ramp() {
    let clock: &'static ManualClock = Box::leak(Box::new(ManualClock::new(0)));
    let breaker = Arc::new(Breaker::new(config(), clock));
    let inner = Inner::default();
    let mut svc = BreakerLayer::new(breaker.clone()).layer(inner.clone());

    // The outage: one failure opens; then requests fail fast, the inner
    // service neither polled nor called.
    inner.down.store(true, Ordering::SeqCst);
    assert!(matches!(now(send(&mut svc)), Err(CallError::Inner("down"))));
    assert_eq!(breaker.status(), Status::Open);
    let (polls, calls) = (inner.polls(), inner.calls());
    for _ in 0..5 {
        match now(send(&mut svc)) {
            Err(CallError::Open(r)) => assert_eq!(r.cause(), Cause::Open),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((inner.polls(), inner.calls()), (polls, calls));

    // Half-open: exactly three probes reach the inner service; a full
    // trial reads `Probing` and fails fast without polling it.
    clock.set(T0);
    inner.down.store(false, Ordering::SeqCst);
    inner.shut.store(true, Ordering::SeqCst);
    let mut probes = Vec::new();
    let mut refused = 0;
    for _ in 0..6 {
        let polls = inner.polls();
        let probing = breaker.status() == Status::Probing;
        let mut f = Box::pin(send(&mut svc));
        assert_eq!(inner.polls(), polls + usize::from(!probing));
        match f.as_mut().poll(&mut cx()) {
            Poll::Pending => probes.push(f),
            Poll::Ready(Err(CallError::Open(r))) => {
                assert_eq!(r.cause(), Cause::Probing);
                refused += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((probes.len(), refused, inner.calls() - calls), (3, 3, 3));
    assert_eq!(breaker.status(), Status::Probing);
    inner.shut.store(false, Ordering::SeqCst);
    for probe in probes {
        assert_eq!(now(probe), Ok(200));
    }
    assert_eq!(breaker.status(), Status::Recovering);

    // The ramp: `poll_ready` polls the inner service (no fail-fast), and
    // exactly the stage's share gets through.
    let polls = inner.polls();
    assert_eq!(stage(&mut svc, &inner, 100, STAGE), 25);
    assert_eq!(inner.polls(), polls + 100);
    clock.set(T0 + STAGE + UNIT);
    assert_eq!(breaker.status(), Status::Recovering);
    assert_eq!(stage(&mut svc, &inner, 100, STAGE - UNIT), 50);
    // Past the last stage: every request.
    clock.set(T0 + 2 * STAGE - 1);
    assert_eq!(breaker.status(), Status::Recovering);
    clock.set(T0 + 2 * STAGE);
    assert_eq!(stage(&mut svc, &inner, 100, 0), 100);
    assert_eq!(breaker.status(), Status::Closed);
}

/// The keyed layer refuses a ramping key's requests the same way, naming
/// the key.
#[test]
fn the_registry_layer_names_the_key_of_a_ramp_rejection() {
    let clock: &'static ManualClock = Box::leak(Box::new(ManualClock::new(0)));
    let registry: Arc<Registry<String, Breaker<&'static ManualClock>>> =
        Arc::new(Registry::new(move |_: &String| {
            Breaker::new(config(), clock)
        }));
    let inner = Inner::default();
    let mut svc =
        RegistryLayer::new(registry.clone(), |_: &u32| "db".to_string()).layer(inner.clone());
    inner.down.store(true, Ordering::SeqCst);
    assert!(now(send(&mut svc)).is_err());
    inner.down.store(false, Ordering::SeqCst);
    clock.set(T0);
    for _ in 0..3 {
        assert_eq!(now(send(&mut svc)), Ok(200));
    }
    assert_eq!(registry.get("db").status(), Status::Recovering);
    let refused = (0..4)
        .filter_map(|_| now(send(&mut svc)).err())
        .map(|e| match e {
            CallError::Open(r) => {
                assert_eq!(r.cause(), Cause::Ramp);
                assert!(r.to_string().contains("\"db\""), "{r}");
            }
            other => panic!("{other:?}"),
        })
        .count();
    assert_eq!(refused, 3);
}
