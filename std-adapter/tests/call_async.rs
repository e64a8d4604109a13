//! Futures, fallbacks, slow calls and policies without a runtime: every
//! future here is polled by hand (a no-op waker), every clock is moved by
//! hand, so nothing depends on the machine's speed. The real-runtime tests
//! (aborted tasks, timeouts) are in `futures.rs` (feature `tokio`).

use std::cell::Cell;
use std::future::{Future, pending, ready};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::{Pin, pin};
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tripword::clock::ManualClock;
use tripword::{
    Breaker, Cause, Config, ConstBreaker, ConstConfig, Observer, Outcome, StaticBreaker, Status,
    Transition, ValidConfig, W32, W64,
};
use tripword_std::classify::{TickVerdict, Verdict};
use tripword_std::clock::{ManualTime, RealClock};
use tripword_std::future::CallAsync;
use tripword_std::{BreakerExt, CallError, CallPolicy, Settings};

/// Records every transition.
#[derive(Default)]
struct Log(Mutex<Vec<(Status, Status)>>);

impl Observer for Log {
    fn on_transition(&self, t: Transition) {
        self.0.lock().unwrap().push((t.from, t.to));
    }
}

impl Log {
    fn take(&self) -> Vec<(Status, Status)> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn config(threshold: u32) -> Config {
    Config::new()
        .failure_threshold(threshold)
        .open_for(100)
        .probe_timeout(50)
}

fn poll_once<F: Future>(f: Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

/// Polls to completion a future that is ready at once.
fn now<F: Future>(f: F) -> F::Output {
    match poll_once(pin!(f)) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("not ready on its first poll"),
    }
}

/// A future that is pending on its first poll and ready with `value` on the
/// second, counting its polls.
struct Twice<T> {
    value: Option<T>,
    polls: u32,
}

impl<T: Unpin> Future for Twice<T> {
    type Output = T;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        self.polls += 1;
        if self.polls == 1 {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(self.value.take().expect("polled after completion"))
    }
}

fn twice<T>(value: T) -> Twice<T> {
    Twice {
        value: Some(value),
        polls: 0,
    }
}

/// Trips `b` (threshold 1) and lets its open time pass: the next admission
/// is the probe.
fn half_open(b: &Breaker<&ManualClock, W64, Log>, clock: &ManualClock) {
    let _ = b.call(|| Err::<(), _>("down"));
    clock.advance(100);
    assert_eq!(b.status(), Status::HalfOpen);
    b.observer().take();
}

fn logged(threshold: u32, clock: &ManualClock) -> Breaker<&ManualClock, W64, Log> {
    Breaker::from_parts(config(threshold).check().unwrap(), clock, Log::default())
}

#[test]
fn admission_is_decided_before_the_first_poll() {
    let clock = ManualClock::new(0);
    let b = logged(1, &clock);
    half_open(&b, &clock);
    // Made, not yet polled: already the probe.
    let call = b.call_async(twice(Ok::<_, ()>(1)));
    assert!(call.is_admitted());
    assert_eq!(b.status(), Status::Probing);
    // A second call is rejected at once; its future is dropped unpolled.
    let polled = Cell::new(false);
    let other = b.call_async(async {
        polled.set(true);
        Ok::<_, ()>(2)
    });
    assert!(!other.is_admitted());
    assert_eq!(other.rejected().map(|r| r.cause()), Some(Cause::Probing));
    let Err(CallError::Open(rejected)) = now(other) else {
        panic!("admitted")
    };
    assert_eq!(rejected.cause(), Cause::Probing);
    assert!(!polled.get());
    // The probe completes: closed.
    let mut call = pin!(call);
    assert!(poll_once(call.as_mut()).is_pending());
    assert_eq!(
        b.status(),
        Status::Probing,
        "nothing recorded while pending"
    );
    assert_eq!(poll_once(call.as_mut()), Poll::Ready(Ok(1)));
    assert_eq!(b.status(), Status::Closed);
    assert_eq!(
        b.observer().take(),
        [
            (Status::Open, Status::HalfOpen),
            (Status::HalfOpen, Status::Probing),
            (Status::Probing, Status::Closed)
        ]
    );
}

#[test]
fn err_is_a_failure_and_the_outcome_is_recorded_once() {
    let clock = ManualClock::new(0);
    let b = logged(2, &clock);
    assert_eq!(
        now(b.call_async(ready(Err::<(), _>("down")))),
        Err(CallError::Inner("down"))
    );
    assert_eq!(b.status(), Status::Closed);
    let mut call = Box::pin(b.call_async(twice(Err::<(), _>("down"))));
    assert!(poll_once(call.as_mut()).is_pending());
    assert_eq!(
        poll_once(call.as_mut()),
        Poll::Ready(Err(CallError::Inner("down")))
    );
    assert_eq!(b.status(), Status::Open);
    assert_eq!(b.observer().take(), [(Status::Closed, Status::Open)]);
    // Dropping the completed future records nothing more.
    drop(call);
    assert!(b.observer().take().is_empty());
}

#[test]
#[should_panic(expected = "polled after completion")]
fn polling_after_completion_panics() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1), &clock);
    let mut call = pin!(b.call_async(ready(Ok::<_, ()>(()))));
    let _ = poll_once(call.as_mut());
    let _ = poll_once(call.as_mut());
}

#[test]
fn a_cancelled_probe_is_ignored_by_default_and_frees_the_probe() {
    let clock = ManualClock::new(0);
    let b = logged(1, &clock);
    half_open(&b, &clock);
    {
        let mut call = pin!(b.call_async(pending::<Result<(), ()>>()));
        assert!(poll_once(call.as_mut()).is_pending());
        assert_eq!(b.status(), Status::Probing);
    } // dropped mid-probe: the caller went away
    assert_eq!(b.status(), Status::HalfOpen, "not a failure, not lost");
    assert_eq!(
        b.observer().take(),
        [
            (Status::Open, Status::HalfOpen),
            (Status::HalfOpen, Status::Probing),
            (Status::Probing, Status::HalfOpen)
        ]
    );
    // The next caller is the probe at once, not after the probe timeout.
    assert_eq!(now(b.call_async(ready(Ok::<_, ()>(7)))), Ok(7));
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn a_cancelled_call_before_its_first_poll_is_cancelled_too() {
    let clock = ManualClock::new(0);
    let b = logged(1, &clock);
    half_open(&b, &clock);
    drop(b.call_async(ready(Ok::<_, ()>(()))));
    assert_eq!(b.status(), Status::HalfOpen);
}

#[test]
fn the_cancel_outcome_is_set_per_policy() {
    let clock = ManualClock::new(0);
    let b = logged(1, &clock);
    let policy = CallPolicy::new().on_cancel(Outcome::Failure);
    drop(b.call_async_with(&policy, pending::<Result<(), ()>>()));
    assert_eq!(
        b.status(),
        Status::Open,
        "a cancellation counted as a failure"
    );
    // And the breaker's own abandon outcome, if that is the wish.
    let b = Breaker::new(config(1).abandon_as(Outcome::Failure), &clock);
    let follow_config = CallPolicy::new().on_cancel(b.config().abandon());
    drop(b.call_async_with(&follow_config, pending::<Result<(), ()>>()));
    assert_eq!(b.status(), Status::Open);
}

#[test]
fn the_breakers_abandon_outcome_does_not_change_the_async_default() {
    // `Config::abandon_as` is for permits dropped by hand; a cancelled
    // future records the policy's cancel outcome (Ignored by default).
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1).abandon_as(Outcome::Failure), &clock);
    drop(b.call_async(pending::<Result<(), ()>>()));
    assert_eq!(b.status(), Status::Closed);
    let permit = b.permit().unwrap();
    drop(permit); // a permit dropped by hand: the config's Failure
    assert_eq!(b.status(), Status::Open);
}

#[test]
fn a_panicking_future_is_a_failure_and_the_panic_goes_on() {
    let clock = ManualClock::new(0);
    let b = logged(1, &clock);
    half_open(&b, &clock);
    let mut call = Box::pin(b.call_async(async {
        if true {
            panic!("the future panicked");
        }
        Ok::<(), ()>(())
    }));
    let unwound = catch_unwind(AssertUnwindSafe(|| poll_once(call.as_mut())));
    let message = unwound.unwrap_err();
    assert_eq!(message.downcast_ref::<&str>(), Some(&"the future panicked"));
    assert_eq!(b.status(), Status::Open, "a failed probe reopens");
    // Dropped later, outside the panic (as a runtime drops a task that
    // panicked): nothing more is recorded.
    drop(call);
    assert_eq!(
        b.observer().take(),
        [
            (Status::Open, Status::HalfOpen),
            (Status::HalfOpen, Status::Probing),
            (Status::Probing, Status::Open)
        ]
    );
}

#[test]
fn a_panicking_classifier_is_a_failure_and_the_panic_goes_on() {
    let clock = ManualClock::new(0);
    let b = logged(1, &clock);
    half_open(&b, &clock);
    let bad =
        CallPolicy::new().classify(|_: &Result<(), ()>| -> Outcome { panic!("bad classifier") });
    let mut call = Box::pin(b.call_async_with(&bad, ready(Ok(()))));
    assert!(catch_unwind(AssertUnwindSafe(|| poll_once(call.as_mut()))).is_err());
    drop(call);
    assert_eq!(b.status(), Status::Open);
    // Synchronously too.
    clock.advance(100);
    let unwound = catch_unwind(AssertUnwindSafe(|| b.call_with(&bad, || Ok(()))));
    assert!(unwound.is_err());
    assert_eq!(b.status(), Status::Open);
}

#[test]
fn a_future_dropped_while_its_thread_panics_is_a_failure() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1), &clock);
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        let _call = b.call_async(pending::<Result<(), ()>>());
        panic!("the caller panicked while the call was in flight");
    }));
    assert!(unwound.is_err());
    assert_eq!(b.status(), Status::Open);
}

#[test]
fn classified_futures_can_ignore() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1), &clock);
    let not_found = CallPolicy::new().classify(|r: &Result<(), u16>| match r {
        Err(404) => Outcome::Ignored,
        Err(_) => Outcome::Failure,
        Ok(()) => Outcome::Success,
    });
    assert_eq!(
        now(b.call_async_with(&not_found, ready(Err(404)))),
        Err(CallError::Inner(404))
    );
    assert_eq!(b.status(), Status::Closed);
    let _ = now(b.call_async_with(not_found, ready(Err(503))));
    assert_eq!(b.status(), Status::Open);
}

#[test]
fn a_slow_success_is_a_failure_on_the_breakers_clock() {
    let clock = ManualTime::new();
    let b: Breaker<&ManualTime> = Settings::new()
        .failure_threshold(1)
        .build_on(&clock, ())
        .unwrap();
    let policy = CallPolicy::new().slow_after(Duration::from_millis(100));
    // Exactly the threshold: not slower than it.
    let r = b.call_with(&policy, || {
        clock.advance(Duration::from_millis(100));
        Ok::<_, ()>(1)
    });
    assert_eq!((r, b.status()), (Ok(1), Status::Closed));
    // One tick more: slow.
    let r = b.call_with(&policy, || {
        clock.advance(Duration::from_millis(100) + ManualTime::TICK);
        Ok::<_, ()>(2)
    });
    assert_eq!((r, b.status()), (Ok(2), Status::Open));
}

#[test]
fn a_slow_future_is_timed_from_admission_to_completion() {
    let clock = ManualTime::new();
    let b: Breaker<&ManualTime> = Settings::new()
        .failure_threshold(1)
        .build_on(&clock, ())
        .unwrap();
    let policy = CallPolicy::new().slow_after(Duration::from_secs(1));
    let mut call = pin!(b.call_async_with(&policy, twice(Ok::<_, ()>("late"))));
    assert!(poll_once(call.as_mut()).is_pending());
    clock.advance(Duration::from_millis(1_500));
    assert_eq!(poll_once(call.as_mut()), Poll::Ready(Ok("late")));
    assert_eq!(b.status(), Status::Open);
}

#[test]
fn slow_calls_in_ticks_on_a_manual_clock_and_failures_stay_failures() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(2), &clock);
    let policy = CallPolicy::new().slow_after_ticks(10);
    // An ignored result stays ignored however slow; a fast success resets.
    let ignore = CallPolicy::new()
        .classify(|_: &Result<(), ()>| Outcome::Ignored)
        .slow_after_ticks(10);
    let _ = b.call_with(&ignore, || {
        clock.advance(50);
        Err::<(), ()>(())
    });
    let _ = b.call_with(&policy, || {
        clock.advance(11);
        Ok::<_, ()>(())
    });
    assert_eq!(b.status(), Status::Closed, "one failure");
    let _ = b.call_with(&policy, || Err::<(), ()>(()));
    assert_eq!(b.status(), Status::Open, "two");
}

#[test]
fn untimed_calls_never_read_the_clock() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static READS: AtomicUsize = AtomicUsize::new(0);
    fn counting() -> u64 {
        READS.fetch_add(1, Ordering::Relaxed);
        0
    }
    let b = Breaker::new(config(5), counting as fn() -> u64);
    for _ in 0..3 {
        assert_eq!(b.call(|| Ok::<_, ()>(1)), Ok(1));
        assert_eq!(now(b.call_async(ready(Ok::<_, ()>(1)))), Ok(1));
    }
    assert_eq!(
        READS.load(Ordering::Relaxed),
        0,
        "closed path: no clock read"
    );
    let policy = CallPolicy::new().slow_after_ticks(1_000);
    let _ = b.call_with(&policy, || Ok::<_, ()>(1));
    assert_eq!(
        READS.load(Ordering::Relaxed),
        2,
        "timed: admission and completion"
    );
}

#[test]
fn sync_fallback_gets_the_rejection_and_its_wait() {
    let clock = ManualTime::new();
    let b: Breaker<&ManualTime> = Settings::new()
        .failure_threshold(1)
        .open_for(Duration::from_secs(10))
        .build_on(&clock, ())
        .unwrap();
    let ran = Cell::new(0);
    let fetch = || {
        ran.set(ran.get() + 1);
        Err::<u32, _>("down")
    };
    let policy = CallPolicy::new().fallback(|open| {
        assert_eq!(open.cause(), Cause::Open);
        assert_eq!(open.retry_after_ticks(), Some(7_000_001));
        assert_eq!(open.retry_after(), Some(Duration::from_micros(7_000_001)));
        Ok(42)
    });
    assert_eq!(
        b.call_with(&policy, fetch),
        Err("down"),
        "admitted: no fallback"
    );
    clock.advance(Duration::from_secs(3));
    let cached = b.call_with(&policy, fetch);
    assert_eq!(cached, Ok(42));
    assert_eq!(ran.get(), 1, "not called while open");
}

#[test]
fn async_fallback_gets_the_rejection_and_runs_only_when_rejected() {
    let clock = ManualTime::new();
    let b: Breaker<&ManualTime> = Settings::new()
        .failure_threshold(1)
        .open_for(Duration::from_secs(10))
        .build_on(&clock, ())
        .unwrap();
    let unreachable =
        CallPolicy::new().fallback(|_| async { unreachable!("admitted: no fallback") });
    let admitted = b.call_async_with(&unreachable, ready(Err::<u32, _>("down")));
    assert_eq!(now(admitted), Err("down"));
    b.force_open();
    let waited = Cell::new(None);
    let policy = CallPolicy::new().fallback(|open| {
        waited.set(Some((open.cause(), open.retry_after())));
        twice(Ok(42))
    });
    let fallback = b.call_async_with(&policy, ready(Ok::<u32, &str>(1)));
    assert!(!fallback.is_admitted());
    assert_eq!(waited.get(), None, "made when polled");
    let mut fallback = pin!(fallback);
    assert!(poll_once(fallback.as_mut()).is_pending());
    assert_eq!(waited.get(), Some((Cause::ForcedOpen, None)));
    assert!(format!("{fallback:?}").contains("fallback"), "{fallback:?}");
    assert_eq!(poll_once(fallback.as_mut()), Poll::Ready(Ok(42)));
}

#[test]
fn call_error_gives_the_cause_and_the_wait_as_a_duration() {
    let clock = ManualTime::new();
    let b: Breaker<&ManualTime> = Settings::new()
        .failure_threshold(1)
        .open_for(Duration::from_millis(500))
        .probe_timeout(Duration::from_secs(2))
        .build_on(&clock, ())
        .unwrap();
    let _ = b.call(|| Err::<(), _>(()));
    let err = now(b.call_async(ready(Ok::<(), ()>(())))).unwrap_err();
    assert_eq!(err.cause(), Some(Cause::Open));
    assert_eq!(err.retry_after(), Some(Duration::from_micros(500_001)));
    clock.advance(Duration::from_millis(600));
    let _probe = b.call_async(pending::<Result<(), ()>>());
    let err = b.call(|| Ok::<(), ()>(())).unwrap_err();
    assert_eq!(err.cause(), Some(Cause::Probing));
    assert_eq!(err.retry_after(), Some(Duration::from_micros(2_000_001)));
    assert_eq!(CallError::Inner(()).retry_after(), None);
}

#[test]
fn tick_verdicts_work_on_any_clock() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1), &clock);
    let busy = CallPolicy::new().classify(|_: &Result<(), ()>| TickVerdict::FailureFor(5_000));
    let _ = b.call_with(busy, || Err(()));
    assert_eq!(b.status(), Status::Open);
    // Open for the failure's 5 000 ticks, not the configured 100.
    clock.advance(100);
    let r = b.call(|| Ok::<_, ()>(())).unwrap_err();
    assert_eq!(
        r.rejected().and_then(|r| r.retry_after_ticks()),
        Some(4_900)
    );
    clock.advance(4_899);
    assert!(b.call(|| Ok::<_, ()>(())).unwrap_err().is_open());
    clock.advance(1);
    assert_eq!(
        b.call(|| Ok::<_, ()>(())),
        Ok(()),
        "the probe, at exactly 5 000"
    );
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn a_retry_after_verdict_counts_as_a_failure() {
    let clock = ManualTime::new();
    let b: Breaker<&ManualTime> = Settings::new()
        .failure_threshold(2)
        .build_on(&clock, ())
        .unwrap();
    let busy = CallPolicy::new()
        .classify(|_: &Result<(), ()>| Verdict::FailureFor(Duration::from_secs(5)));
    let _ = b.call_with(&busy, || Err(()));
    assert_eq!(b.status(), Status::Closed, "one failure of two");
    let _ = now(b.call_async_with(&busy, ready(Err(()))));
    assert_eq!(b.status(), Status::Open);
    // Open for 5 s (and the tick every duration gets), not the configured 1 s.
    let five = ManualTime::ticks(Duration::from_secs(5));
    assert_eq!(five, 5_000_001);
    let err = b.call(|| Ok::<_, ()>(())).unwrap_err();
    assert_eq!(
        err.rejected().and_then(|r| r.retry_after_ticks()),
        Some(five)
    );
    clock.advance(Duration::from_secs(2));
    let err = b.call(|| Ok::<_, ()>(())).unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_micros(3_000_001)));
    clock.advance_ticks(3_000_000);
    assert!(
        b.call(|| Ok::<_, ()>(())).unwrap_err().is_open(),
        "one tick early"
    );
    clock.advance_ticks(1);
    // The probe fails with another Retry-After: open that long again.
    let _ = b.call_with(&busy, || Err(()));
    let err = b.call(|| Ok::<_, ()>(())).unwrap_err();
    assert_eq!(
        err.rejected().and_then(|r| r.retry_after_ticks()),
        Some(five)
    );
    // A plain failure of the next probe: the configured open time.
    clock.advance_ticks(five);
    let _ = b.call(|| Err::<(), _>(()));
    let err = b.call(|| Ok::<_, ()>(())).unwrap_err();
    assert_eq!(
        err.rejected().and_then(|r| r.retry_after_ticks()),
        Some(1_000_001)
    );
}

struct Fixed;
impl ConstConfig for Fixed {
    const CONFIG: Config = Config::new().failure_threshold(1).open_for(100);
}
static CLOCK: ManualClock = ManualClock::new(0);
static STATIC_CONFIG: ValidConfig<W32> = ValidConfig::new(Config::new().failure_threshold(1));
static STATIC: StaticBreaker<&ManualClock, W32> =
    StaticBreaker::from_parts(&STATIC_CONFIG, &CLOCK, ());

/// Every breaker form runs futures: a `static` config, a compiled-in one,
/// the 32-bit word.
#[test]
fn futures_run_on_every_breaker_form() {
    assert_eq!(now(STATIC.call_async(ready(Ok::<_, ()>(1)))), Ok(1));
    drop(STATIC.call_async(pending::<Result<(), ()>>()));
    assert_eq!(STATIC.status(), Status::Closed);
    let clock = ManualClock::new(0);
    let b: ConstBreaker<Fixed, &ManualClock, W32> =
        ConstBreaker::from_parts(tripword::Const::new(), &clock, ());
    let _ = now(b.call_async(ready(Err::<(), _>(()))));
    assert_eq!(b.status(), Status::Open);
    let fallback = CallPolicy::new().fallback(|r| {
        assert_eq!(r.retry_after_ticks().map(|t| t > 0), Some(true));
        Ok(2)
    });
    assert!(b.call_with(fallback, || Ok::<_, ()>(1)) == Ok(2));
}

/// The trap `call(|| Ok(future))` compiles (it cannot be told from a
/// closure returning a value) but is documented; `call(|| future)` does
/// not compile (see the `CallResult` doctest). This checks the right form
/// records the future's own outcome, not the wrapper's.
#[test]
fn call_async_records_the_futures_outcome_not_its_creation() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1), &clock);
    let call = b.call_async(async { Err::<(), _>("the request failed") });
    assert_eq!(
        b.status(),
        Status::Closed,
        "nothing recorded before it runs"
    );
    assert_eq!(now(call), Err(CallError::Inner("the request failed")));
    assert_eq!(b.status(), Status::Open);
}

/// `slow_after_ticks(n)` is a threshold of exactly `n` ticks: a success
/// that took `n` ticks is a success, one that took `n + 1` a failure.
/// Mutation testing found the threshold's value unpinned (a threshold of 0
/// or 1 tick survived).
#[test]
fn slow_after_ticks_is_exactly_that_many_ticks() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1), &clock);
    let policy = CallPolicy::new().slow_after_ticks(10);
    let took = |ticks| {
        let clock = &clock;
        move || {
            clock.advance(ticks);
            Ok::<_, ()>(())
        }
    };
    assert_eq!(b.call_with(&policy, took(10)), Ok(()));
    assert_eq!(b.status(), Status::Closed, "10 ticks: not slow");
    let slow_10 = took(10);
    assert_eq!(
        now(b.call_async_with(&policy, async move { slow_10() })),
        Ok(())
    );
    assert_eq!(b.status(), Status::Closed, "10 ticks, async: not slow");
    assert_eq!(b.call_with(&policy, took(11)), Ok(()));
    assert_eq!(b.status(), Status::Open, "11 ticks: slow, a failure");
}

/// A `CallAsync`'s `Debug` shows where it is (admitting, running,
/// releasing, rejected, done) and its rejection. Mutation testing found it
/// untested (an empty `fmt` survived).
#[test]
fn call_async_debug_shows_admission_and_rejection() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1), &clock);
    let mut call = pin!(b.call_async(twice(Err::<(), _>("down"))));
    assert_eq!(format!("{call:?}"), "CallAsync { state: running, .. }");
    assert!(poll_once(call.as_mut()).is_pending());
    assert_eq!(
        poll_once(call.as_mut()),
        Poll::Ready(Err(CallError::Inner("down")))
    );
    assert_eq!(format!("{call:?}"), "CallAsync { state: done, .. }");
    assert_eq!(b.status(), Status::Open);
    let rejected = b.call_async(ready(Ok::<_, ()>(1)));
    let shown = format!("{rejected:?}");
    assert!(
        shown.starts_with("CallAsync { state: rejected, rejected: Rejection { cause: Open"),
        "{shown}"
    );
    assert!(shown.ends_with(".. }"), "{shown}");
}

/// Asserts, at compile time, that `f` borrows nothing and may be sent.
fn owned<F: Future + Send + 'static>(f: F) -> F {
    f
}

/// `CallAsync::new` on an `Arc` is `call_async` with the handle owned:
/// admitted at once, its outcome recorded when it completes, its
/// cancellation `Ignored`, and the future borrows nothing (a registry's
/// `get` handle, a breaker in an `Arc`), so it outlives the scope that
/// made it.
#[test]
fn a_call_future_on_an_arc_owns_its_handle_and_counts_as_call_async() {
    let hosts: tripword_std::Registry<String> =
        tripword_std::Registry::from_settings(&Settings::new().failure_threshold(2).into())
            .unwrap();
    let call = {
        let entry = hosts.get("db-1.internal");
        owned(CallAsync::new(
            entry,
            CallPolicy::new(),
            ready(Err::<(), _>("down")),
        ))
    }; // the `Arc` from `get` lives on in `call`
    assert!(call.is_admitted());
    assert_eq!(
        poll_once(pin!(call)),
        Poll::Ready(Err(CallError::Inner("down")))
    );
    // Cancelled: ignored, the failure count stays at one.
    drop(owned(CallAsync::new(
        hosts.get("db-1.internal"),
        CallPolicy::new(),
        pending::<Result<(), ()>>(),
    )));
    assert_eq!(hosts.get("db-1.internal").status(), Status::Closed);
    let call = owned(CallAsync::new(
        hosts.get("db-1.internal"),
        CallPolicy::new(),
        ready(Err::<(), _>("down")),
    ));
    assert!(poll_once(pin!(call)).is_ready());
    assert_eq!(hosts.get("db-1.internal").status(), Status::Open);
    // Rejected: ready at once, the future never polled.
    let call = CallAsync::new(hosts.get("db-1.internal"), CallPolicy::new(), async {
        unreachable!("not polled") as Result<(), ()>
    });
    assert!(!call.is_admitted());
    assert!(matches!(poll_once(pin!(call)), Poll::Ready(Err(e)) if e.is_open()));
}

/// An owned call future counts by a policy it owns too (by value, in an
/// `Arc`, or `&'static`): here its classifier, its cancel outcome and its
/// fallback.
#[test]
fn an_owned_call_future_counts_by_the_owned_policy() {
    static CLOCK: ManualClock = ManualClock::new(0);
    let b = std::sync::Arc::new(Breaker::new(config(1), &CLOCK));
    let ignore_404 = |r: &Result<(), u16>| match r {
        Err(404) => Outcome::Ignored,
        Err(_) => Outcome::Failure,
        Ok(()) => Outcome::Success,
    };
    let policy = std::sync::Arc::new(CallPolicy::new().classify(ignore_404));
    let call = owned(CallAsync::new(b.clone(), policy.clone(), ready(Err(404))));
    assert_eq!(
        poll_once(pin!(call)),
        Poll::Ready(Err(CallError::Inner(404)))
    );
    assert_eq!(b.status(), Status::Closed, "a 404 is ignored");
    static CANCEL_FAILS: CallPolicy = CallPolicy::new().on_cancel(Outcome::Failure);
    drop(owned(CallAsync::new(
        b.clone(),
        &CANCEL_FAILS,
        pending::<Result<(), ()>>(),
    )));
    assert_eq!(
        b.status(),
        Status::Open,
        "cancelled: a failure by this policy"
    );
    // Open: the owned policy's fallback answers, in an owned future.
    let cached = std::sync::Arc::new(CallPolicy::new().fallback(|_| ready(Ok::<u32, ()>(7))));
    let call = owned(CallAsync::new(b.clone(), cached, ready(Ok(1))));
    assert_eq!(poll_once(pin!(call)), Poll::Ready(Ok(7)));
}

/// A breaker whose admission and release need a round trip (as a remote
/// one's do): `acquire_async` always answers `Reply::Wait`, so a call
/// future learns of its rejection at its first poll, not when it is made.
struct RoundTrip<'c>(Breaker<&'c ManualClock>);

impl<'c> tripword::kit::CircuitBreaker for RoundTrip<'c> {
    type Ticket = tripword::Ticket;
    type Clock = &'c ManualClock;
    type Acquiring = std::future::Ready<Result<tripword::Ticket, tripword::Rejected>>;
    type Releasing = std::future::Ready<tripword::Release>;

    fn acquire(&self) -> Result<tripword::Ticket, tripword::Rejected> {
        self.0.acquire()
    }
    fn release(&self, ticket: tripword::Ticket, outcome: Outcome) -> tripword::Release {
        self.0.release(ticket, outcome)
    }
    fn status(&self) -> Status {
        self.0.status()
    }
    fn clock(&self) -> &&'c ManualClock {
        tripword::kit::CircuitBreaker::clock(&self.0)
    }
    fn acquire_async(
        &self,
    ) -> tripword::kit::Reply<Result<tripword::Ticket, tripword::Rejected>, Self::Acquiring> {
        tripword::kit::Reply::Wait(ready(self.acquire()))
    }
}

/// The fallback of a call whose rejection comes at the first poll (an
/// admission that needed a round trip) answers as for one rejected at once;
/// admitted the same way, the call's own output comes out.
#[test]
fn the_fallback_answers_a_rejection_learned_at_the_first_poll() {
    let clock = ManualClock::new(0);
    let b = RoundTrip(Breaker::new(config(1), &clock));
    let seen = Cell::new(None);
    let policy = CallPolicy::new().fallback(|open| {
        seen.set(Some(open.cause()));
        ready(Ok::<u32, &str>(0))
    });
    let call = b.call_async_with(&policy, ready(Err("down")));
    assert!(!call.is_admitted(), "admission is in flight");
    assert_eq!(now(call), Err("down"));
    assert_eq!(b.0.status(), Status::Open);
    let call = b.call_async_with(&policy, async { unreachable!("not polled") });
    assert!(call.rejected().is_none(), "not known before the first poll");
    assert_eq!(now(call), Ok(0));
    assert_eq!(seen.get(), Some(Cause::Open));
    // Without a fallback, the same rejection is the call's error.
    let err = now(b.call_async(ready(Ok::<(), ()>(())))).unwrap_err();
    assert_eq!(err.cause(), Some(Cause::Open));
}
