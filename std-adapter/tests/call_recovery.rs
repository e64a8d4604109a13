//! `call` and `call_async` on a breaker with several probes and a ramp: a
//! probe's result is classified as any call's (a failure, an ignored
//! result that frees its place, a success), a full trial's rejection and a
//! ramp's reach the fallback with their cause (`Probing`, `Ramp`) and
//! wait, and the ramp admits its share.
//!
//! Every breaker runs on a `ManualTime` that only the tests move; futures
//! are polled by hand: nothing here depends on how fast the machine runs.

use std::cell::{Cell, RefCell};
use std::future::{Future, ready};
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tripword::{Breaker, Cause, Outcome, Status};
use tripword_std::clock::ManualTime;
use tripword_std::{BreakerExt, CallError, CallPolicy, RampSettings, Settings};

const SECOND: Duration = Duration::from_secs(1);

/// Trips on one failure, open 10 s; three probes, two to close; then half
/// the calls for a second.
fn breaker(clock: &ManualTime) -> Breaker<&ManualTime> {
    Settings::new()
        .failure_threshold(1)
        .open_for(10 * SECOND)
        .probe_timeout(60 * SECOND)
        .probes(3)
        .probes_to_close(2)
        .ramp(RampSettings::stages(SECOND, &[5_000]))
        .build_on(clock, ())
        .unwrap()
}

fn now<F: Future>(f: F) -> F::Output {
    match pin!(f).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("pending"),
    }
}

/// A 404 is ignored, a 5xx a failure, the rest a success.
fn by_status(r: &Result<u16, ()>) -> Outcome {
    match r {
        Ok(404) => Outcome::Ignored,
        Ok(s) if *s >= 500 => Outcome::Failure,
        Ok(_) => Outcome::Success,
        Err(()) => Outcome::Failure,
    }
}

#[test]
fn probes_are_classified_and_the_ramp_reaches_the_fallback() {
    let clock = ManualTime::new();
    let b = breaker(&clock);
    let seen = RefCell::new(Vec::new());
    let policy = CallPolicy::new().classify(by_status).fallback(|open| {
        seen.borrow_mut().push((open.cause(), open.retry_after()));
        Ok(0)
    });
    assert_eq!(b.call_with(&policy, || Ok(503)), Ok(503));
    assert_eq!(b.status(), Status::Open);
    clock.advance(11 * SECOND);

    // The trial, one probe at a time: an ignored probe frees its place, one
    // failure of three (two to close) does not reopen, two successes close.
    assert_eq!(b.call_with(&policy, || Ok(404)), Ok(404));
    assert_eq!(b.call_with(&policy, || Ok(503)), Ok(503));
    assert_eq!(b.status(), Status::HalfOpen);
    assert_eq!(b.health().trips, 1);
    assert_eq!(b.call_with(&policy, || Ok(200)), Ok(200));
    assert_eq!(b.status(), Status::HalfOpen);
    assert_eq!(b.call_with(&policy, || Ok(200)), Ok(200));
    assert_eq!(b.status(), Status::Recovering);
    assert!(seen.borrow().is_empty());

    // The ramp: every other call reaches the fallback, cause `Ramp`, its
    // wait until the ramp's end (at least the second it lasts, less the
    // time passed).
    let ran = Cell::new(0);
    for _ in 0..10 {
        let _ = b.call_with(&policy, || {
            ran.set(ran.get() + 1);
            Ok(200)
        });
    }
    assert_eq!(ran.get(), 5);
    let seen = seen.take();
    assert_eq!(seen.len(), 5);
    for (cause, wait) in seen {
        assert_eq!(cause, Cause::Ramp);
        let wait = wait.unwrap();
        assert!(wait >= SECOND && wait < 2 * SECOND, "{wait:?}");
    }
    // Without a fallback, the rejection is the call's error.
    let err = (0..2)
        .filter_map(|_| b.call(|| Ok::<_, ()>(1)).err())
        .next()
        .unwrap();
    assert!(matches!(err, CallError::Open(r) if r.cause() == Cause::Ramp));
    clock.advance(2 * SECOND);
    assert_eq!(b.call_with(&policy, || Ok(200)), Ok(200));
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn a_trials_second_failure_reopens_with_backoffs_trip_count() {
    let clock = ManualTime::new();
    let b = breaker(&clock);
    let policy = CallPolicy::new().classify(by_status);
    let _ = b.call_with(&policy, || Ok(500));
    clock.advance(11 * SECOND);
    let _ = b.call_with(&policy, || Err(()));
    assert_eq!(b.status(), Status::HalfOpen);
    let _ = b.call_with(&policy, || Ok(502));
    assert_eq!(b.status(), Status::Open);
    assert_eq!(b.health().trips, 2);
}

#[test]
fn call_async_probes_at_once_then_the_ramp() {
    let clock = ManualTime::new();
    let b = breaker(&clock);
    let seen = RefCell::new(Vec::new());
    let policy = CallPolicy::new().fallback(|open| {
        seen.borrow_mut().push(open.cause());
        ready(Ok::<u32, &str>(0))
    });
    assert_eq!(
        now(b.call_async_with(&policy, ready(Err("down")))),
        Err("down")
    );
    clock.advance(11 * SECOND);

    // Three probes admitted at once; a fourth finds the trial full.
    let probes: Vec<_> = [Ok(1), Err("down"), Ok(2)]
        .into_iter()
        .map(|r| b.call_async_with(&policy, ready(r)))
        .collect();
    assert!(probes.iter().all(|p| p.is_admitted()));
    assert_eq!(b.status(), Status::Probing);
    assert_eq!(now(b.call_async_with(&policy, ready(Ok(9)))), Ok(0));
    assert_eq!(seen.take(), [Cause::Probing]);
    let results: Vec<_> = probes.into_iter().map(now).collect();
    assert_eq!(results, [Ok(1), Err("down"), Ok(2)]);
    assert_eq!(b.status(), Status::Recovering);

    let admitted = (0..10)
        .filter(|_| now(b.call_async_with(&policy, ready(Ok(5)))) == Ok(5))
        .count();
    assert_eq!(admitted, 5);
    assert_eq!(seen.take(), [Cause::Ramp; 5]);
}
