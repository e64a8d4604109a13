//! Host tests of the guarded future: completion, rejection, cancellation at
//! every point, timing, a remote breaker's round trips, and unwinding. Run
//! under Miri too (`.ci/stages/60-miri.sh`).

extern crate std;

use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::{Pin, pin};
use core::task::{Context, Poll, Waker};
use std::boxed::Box;
use std::format;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::vec::Vec;

use super::*;
use crate::clock::ManualClock;
use crate::{Breaker, Cause, Config, Status};

fn breaker(clock: &ManualClock, threshold: u32) -> Breaker<&ManualClock> {
    Breaker::new(
        Config::new().failure_threshold(threshold).open_for(100),
        clock,
    )
}

fn poll<F: Future>(f: Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

fn failures(b: &Breaker<&ManualClock>) -> u32 {
    match b.snapshot().unwrap().state {
        crate::word::State::Closed { failures } => failures,
        other => panic!("not closed: {other:?}"),
    }
}

/// A future that is pending `pending` times, then ready with `output`;
/// counts its polls.
struct Script<'a, T> {
    pending: u32,
    output: Option<T>,
    polls: &'a Cell<u32>,
}

impl<T> Unpin for Script<'_, T> {}

impl<T> Future for Script<'_, T> {
    type Output = T;
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<T> {
        self.polls.set(self.polls.get() + 1);
        if self.pending > 0 {
            self.pending -= 1;
            Poll::Pending
        } else {
            Poll::Ready(self.output.take().expect("polled after completion"))
        }
    }
}

fn script<T>(pending: u32, output: T, polls: &Cell<u32>) -> Script<'_, T> {
    Script {
        pending,
        output: Some(output),
        polls,
    }
}

/// Trips a threshold-1 breaker and lets its open time pass: the next
/// admission is the probe.
fn half_open(b: &Breaker<&ManualClock>, clock: &ManualClock) {
    let t = b.acquire().unwrap();
    b.release(t, Outcome::Failure);
    assert_eq!(b.status(), Status::Open);
    clock.advance(100);
    assert_eq!(b.status(), Status::HalfOpen);
}

#[test]
fn a_completed_call_records_its_verdict_once_and_hands_out_the_output() {
    let clock = ManualClock::new(0);
    let b = breaker(&clock, 2);
    let polls = Cell::new(0);
    {
        let mut call = pin!(guard(&b, script(2, Err::<u8, u8>(5), &polls)));
        assert!(call.is_admitted());
        assert_eq!(poll(call.as_mut()), Poll::Pending);
        assert_eq!(poll(call.as_mut()), Poll::Pending);
        assert_eq!(failures(&b), 0); // nothing recorded while running
        assert_eq!(poll(call.as_mut()), Poll::Ready(Ok(Err(5))));
        assert_eq!(polls.get(), 3);
        assert_eq!(failures(&b), 1);
        assert!(format!("{call:?}").contains("done"));
    }
    // Dropping the completed call recorded nothing more.
    assert_eq!(failures(&b), 1);

    // A success ends the run of failures.
    let call = pin!(guard(&b, script(0, Ok::<u8, u8>(1), &polls)));
    assert_eq!(poll(call), Poll::Ready(Ok(Ok(1))));
    assert_eq!(failures(&b), 0);
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn a_rejected_call_is_ready_at_once_and_never_polls_the_future() {
    let clock = ManualClock::new(0);
    let b = breaker(&clock, 1);
    b.force_open();
    let polls = Cell::new(0);
    let call = guard(&b, script(0, Ok::<u8, u8>(1), &polls));
    assert!(!call.is_admitted());
    assert_eq!(call.rejection().map(|r| r.cause()), Some(Cause::ForcedOpen));
    assert!(format!("{call:?}").contains("rejected"));
    let mut call = pin!(call);
    let Poll::Ready(Err(rejected)) = poll(call.as_mut()) else {
        panic!("rejected calls are ready with the rejection");
    };
    assert_eq!(rejected.cause(), Cause::ForcedOpen);
    assert_eq!(polls.get(), 0);
    assert_eq!(call.rejection(), None); // handed out
    assert!(call.breaker().is_some_and(|h| core::ptr::eq(*h, &b)));
    assert_eq!((call.phase(), call.phase().as_str()), (Phase::Done, "done"));
    let again = catch_unwind(AssertUnwindSafe(|| poll(call.as_mut())));
    assert!(again.is_err(), "a second poll panics");
}

#[test]
fn a_cancelled_probe_is_given_back_and_a_later_probe_is_elected() {
    let clock = ManualClock::new(0);
    let b = breaker(&clock, 1);
    half_open(&b, &clock);
    let polls = Cell::new(0);
    // Cancelled after a poll (a timeout): ignored, the probe given back.
    {
        let mut call = pin!(guard(&b, script(5, Ok::<u8, u8>(1), &polls)));
        assert_eq!(b.status(), Status::Probing);
        assert_eq!(poll(call.as_mut()), Poll::Pending);
        // While it runs, no second probe.
        assert!(
            guard(&b, script(0, Ok::<u8, u8>(1), &polls))
                .rejection()
                .is_some()
        );
    }
    assert_eq!(b.status(), Status::HalfOpen);
    // Cancelled before its first poll: the same.
    drop(guard(&b, script(0, Ok::<u8, u8>(1), &polls)));
    assert_eq!(b.status(), Status::HalfOpen);
    assert_eq!(polls.get(), 1);
    // A later probe runs and closes the breaker.
    let call = pin!(guard(&b, script(1, Ok::<u8, u8>(2), &polls)));
    let mut call = call;
    assert_eq!(poll(call.as_mut()), Poll::Pending);
    assert_eq!(poll(call.as_mut()), Poll::Ready(Ok(Ok(2))));
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn the_cancel_outcome_is_the_judges() {
    let clock = ManualClock::new(0);
    let b = breaker(&clock, 1);
    half_open(&b, &clock);
    let polls = Cell::new(0);
    let judge = Classifier::new(|r: &Result<u8, u8>| match r {
        Ok(_) => Outcome::Success,
        Err(_) => Outcome::Failure,
    })
    .on_cancel(Outcome::Failure);
    {
        let mut call = pin!(guard_with(&b, &judge, script(5, Ok::<u8, u8>(1), &polls)));
        assert_eq!(poll(call.as_mut()), Poll::Pending);
    }
    // The cancelled probe failed: open again.
    assert_eq!(b.status(), Status::Open);
    assert!(format!("{judge:?}").contains("Failure"));
}

#[test]
fn a_timed_judge_gets_the_ticks_since_admission() {
    struct Slow<'a>(&'a RefCell<Vec<Option<u64>>>);
    impl Judge<u8> for Slow<'_> {
        fn timed(&self) -> bool {
            true
        }
        fn judge(&self, _: &u8, elapsed: Option<u64>) -> TickVerdict {
            self.0.borrow_mut().push(elapsed);
            match elapsed {
                Some(t) if t > 10 => TickVerdict::Failure,
                _ => TickVerdict::Success,
            }
        }
    }
    let clock = ManualClock::new(1_000);
    let b = breaker(&clock, 1);
    let seen = RefCell::new(Vec::new());
    let polls = Cell::new(0);
    let mut call = pin!(guard_with(&b, Slow(&seen), script(1, 3u8, &polls)));
    clock.advance(4);
    assert_eq!(poll(call.as_mut()), Poll::Pending);
    clock.advance(7);
    assert_eq!(poll(call.as_mut()), Poll::Ready(Ok(3)));
    assert_eq!(*seen.borrow(), [Some(11)]);
    assert_eq!(b.status(), Status::Open); // 11 > 10: slow, a failure

    // Untimed judges get `None`, and the clock is not consulted.
    struct Untimed<'a>(&'a RefCell<Vec<Option<u64>>>);
    impl Judge<u8> for Untimed<'_> {
        fn judge(&self, _: &u8, elapsed: Option<u64>) -> TickVerdict {
            self.0.borrow_mut().push(elapsed);
            TickVerdict::Ignored
        }
    }
    let b = breaker(&clock, 1);
    let call = pin!(guard_with(&b, Untimed(&seen), script(0, 3u8, &polls)));
    assert_eq!(poll(call), Poll::Ready(Ok(3)));
    assert_eq!(*seen.borrow(), [Some(11), None]);
    // A judge by reference is timed as the judge is.
    let untimed = Untimed(&seen);
    let call = pin!(guard_with(&b, &untimed, script(0, 3u8, &polls)));
    assert_eq!(poll(call), Poll::Ready(Ok(3)));
    let slow = Slow(&seen);
    let call = pin!(guard_with(&b, &slow, script(0, 3u8, &polls)));
    assert_eq!(poll(call), Poll::Ready(Ok(3)));
    assert_eq!(*seen.borrow(), [Some(11), None, None, Some(0)]);
}

#[test]
fn a_failure_for_verdict_reaches_the_breaker() {
    struct Hint;
    impl Judge<u8> for Hint {
        fn judge(&self, _: &u8, _: Option<u64>) -> TickVerdict {
            TickVerdict::FailureFor(250)
        }
    }
    let clock = ManualClock::new(0);
    let b = breaker(&clock, 1);
    let polls = Cell::new(0);
    let call = pin!(guard_with(&b, Hint, script(0, 0u8, &polls)));
    assert_eq!(poll(call), Poll::Ready(Ok(0)));
    let wait = b.acquire().unwrap_err().retry_after().unwrap();
    assert!(
        wait > 100,
        "the hinted open time, not the configured one: {wait}"
    );
}

#[test]
fn by_result_and_references_judge_as_documented() {
    assert_eq!(ByResult.judge(&Ok::<u8, u8>(1), None), TickVerdict::Success);
    assert_eq!(
        ByResult.judge(&Err::<u8, u8>(1), Some(9)),
        TickVerdict::Failure
    );
    assert_eq!(
        Judge::<Result<u8, u8>>::cancel_outcome(&ByResult),
        Outcome::Ignored
    );
    assert!(!Judge::<Result<u8, u8>>::timed(&ByResult));
    struct Timed;
    impl Judge<u8> for Timed {
        fn timed(&self) -> bool {
            true
        }
        fn judge(&self, _: &u8, _: Option<u64>) -> TickVerdict {
            TickVerdict::Ignored
        }
        fn cancel_outcome(&self) -> Outcome {
            Outcome::Success
        }
    }
    let by_ref: &dyn Judge<u8> = &Timed;
    assert!(Judge::timed(&by_ref));
    assert_eq!(Judge::judge(&by_ref, &0, None), TickVerdict::Ignored);
    assert_eq!(Judge::cancel_outcome(&by_ref), Outcome::Success);
    let c = Classifier::new(|_: &u8| Outcome::Success);
    assert_eq!(c.cancel_outcome(), Outcome::Ignored);
    assert!(!c.timed());
}

// A remote breaker: admission and release answer `Wait` with a future that
// is pending once, and every step is logged.

struct Remote {
    clock: ManualClock,
    admit: Cell<bool>,
    log: RefCell<Vec<&'static str>>,
    released: RefCell<Vec<(u8, TickVerdict)>>,
}

impl Remote {
    fn new() -> Self {
        Remote {
            clock: ManualClock::new(0),
            admit: Cell::new(false),
            log: RefCell::new(Vec::new()),
            released: RefCell::new(Vec::new()),
        }
    }
}

struct Later<T>(Option<T>, bool);
impl<T> Unpin for Later<T> {}
impl<T> Future for Later<T> {
    type Output = T;
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<T> {
        if !self.1 {
            self.1 = true;
            return Poll::Pending;
        }
        Poll::Ready(self.0.take().unwrap())
    }
}

impl CircuitBreaker for &Remote {
    type Ticket = u8;
    type Clock = ManualClock;
    type Acquiring = Later<Result<u8, Rejected>>;
    type Releasing = Later<Release>;

    fn acquire(&self) -> Result<u8, Rejected> {
        unreachable!("the guarded future takes the async path")
    }
    fn release(&self, _: u8, _: Outcome) -> Release {
        unreachable!("the guarded future takes the async path")
    }
    fn status(&self) -> Status {
        Status::Closed
    }
    fn clock(&self) -> &ManualClock {
        &self.clock
    }
    fn acquire_async(&self) -> Reply<Result<u8, Rejected>, Self::Acquiring> {
        self.log.borrow_mut().push("acquire");
        let answer = if self.admit.get() {
            Ok(7)
        } else {
            let clock = ManualClock::new(0);
            let b = Breaker::new(Config::new(), &clock);
            b.force_open();
            Err(b.acquire().unwrap_err())
        };
        Reply::Wait(Later(Some(answer), false))
    }
    fn release_async(&self, ticket: u8, verdict: TickVerdict) -> Reply<Release, Self::Releasing> {
        self.log.borrow_mut().push("release");
        self.released.borrow_mut().push((ticket, verdict));
        Reply::Wait(Later(Some(Release::Recorded), false))
    }
    fn release_detached(&self, ticket: u8, verdict: TickVerdict) {
        self.log.borrow_mut().push("detached");
        self.released.borrow_mut().push((ticket, verdict));
    }
}

#[test]
fn a_remote_admission_and_release_are_awaited() {
    let remote = Remote::new();
    remote.admit.set(true);
    let polls = Cell::new(0);
    let made = Cell::new(0);
    let make = || {
        made.set(made.get() + 1);
        script(1, Ok::<u8, u8>(4), &polls)
    };
    let mut call = pin!(Guarded::<_, _, _, Abort, _>::start(&remote, ByResult, make));
    assert_eq!(made.get(), 1); // made at once, polled only once admitted
    assert!(!call.is_admitted());
    assert!(format!("{call:?}").contains("admitting"));
    assert_eq!(poll(call.as_mut()), Poll::Pending); // admission in flight
    assert_eq!(polls.get(), 0);
    assert_eq!(poll(call.as_mut()), Poll::Pending); // admitted; the future pends
    assert!(call.is_admitted());
    assert!(format!("{call:?}").contains("running"));
    assert_eq!(polls.get(), 1);
    assert!(call.breaker().is_some());
    assert_eq!(poll(call.as_mut()), Poll::Pending); // done; the release in flight
    assert!(format!("{call:?}").contains("releasing"));
    assert!(call.breaker().is_none()); // handed to the release
    assert_eq!(*remote.released.borrow(), [(7, TickVerdict::Success)]);
    assert_eq!(poll(call.as_mut()), Poll::Ready(Ok(Ok(4))));
    assert_eq!(*remote.log.borrow(), ["acquire", "release"]);
    assert!(format!("{call:?}").contains("done"));
    let again = catch_unwind(AssertUnwindSafe(|| poll(call.as_mut())));
    assert!(again.is_err(), "a poll after completion panics");
}

#[test]
fn a_remote_rejection_drops_the_future_unpolled() {
    let remote = Remote::new();
    let polls = Cell::new(0);
    let mut call = pin!(guard(&remote, script(0, Ok::<u8, u8>(4), &polls)));
    assert_eq!(poll(call.as_mut()), Poll::Pending);
    assert!(call.breaker().is_some());
    assert!(matches!(poll(call.as_mut()), Poll::Ready(Err(r)) if r.cause() == Cause::ForcedOpen));
    assert_eq!(polls.get(), 0);
    // The breaker stays, to describe the rejection; the call is done.
    assert!(call.breaker().is_some_and(|b| core::ptr::eq(*b, &remote)));
    assert_eq!(call.phase(), Phase::Done);
    assert_eq!(call.rejection(), None);
    assert!(remote.released.borrow().is_empty());
}

#[test]
fn a_remote_call_cancelled_at_each_step_records_at_most_once() {
    // During admission: nothing was admitted, nothing is recorded.
    let remote = Remote::new();
    remote.admit.set(true);
    let polls = Cell::new(0);
    {
        let mut call = pin!(guard(&remote, script(3, Ok::<u8, u8>(4), &polls)));
        assert_eq!(poll(call.as_mut()), Poll::Pending);
    }
    assert!(remote.released.borrow().is_empty());
    // While running: the cancel outcome, detached.
    {
        let mut call = pin!(guard(&remote, script(3, Ok::<u8, u8>(4), &polls)));
        assert_eq!(poll(call.as_mut()), Poll::Pending);
        assert_eq!(poll(call.as_mut()), Poll::Pending);
    }
    assert_eq!(*remote.released.borrow(), [(7, TickVerdict::Ignored)]);
    // While releasing: the verdict is already on its way; nothing more.
    {
        let mut call = pin!(guard(&remote, script(0, Err::<u8, u8>(4), &polls)));
        assert_eq!(poll(call.as_mut()), Poll::Pending);
        assert_eq!(poll(call.as_mut()), Poll::Pending);
    }
    assert_eq!(
        *remote.released.borrow(),
        [(7, TickVerdict::Ignored), (7, TickVerdict::Failure)]
    );
    assert_eq!(
        *remote.log.borrow(),
        ["acquire", "acquire", "detached", "acquire", "release"]
    );
}

// Unwinding: with an `Unwind` that tells, a panic in the protected future
// or in the judge records a failure, once, even where the cancel outcome
// says otherwise.

struct Std;
impl Unwind for Std {
    fn unwinding() -> bool {
        std::thread::panicking()
    }
}

struct Boom;
impl Future for Boom {
    type Output = Result<u8, u8>;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        panic!("the protected future panics")
    }
}

#[test]
fn a_panicking_poll_records_a_failure_with_an_unwind_that_tells() {
    let clock = ManualClock::new(0);
    let b = breaker(&clock, 1);
    half_open(&b, &clock);
    let mut call = Box::pin(Guarded::<_, _, _, Std, _>::start(&b, ByResult, || Boom));
    let caught = catch_unwind(AssertUnwindSafe(|| poll(call.as_mut())));
    assert!(caught.is_err());
    assert_eq!(b.status(), Status::Open, "the probe failed");
    // The call, dropped later, records nothing more.
    clock.advance(100);
    drop(call);
    assert_eq!(b.status(), Status::HalfOpen);
}

#[test]
fn a_panicking_judge_records_a_failure_with_an_unwind_that_tells() {
    let clock = ManualClock::new(0);
    let b = breaker(&clock, 1);
    half_open(&b, &clock);
    let judge = Classifier::new(|_: &u8| -> Outcome { panic!("the judge panics") });
    let polls = Cell::new(0);
    let mut call = Box::pin(Guarded::<_, _, _, Std, _>::start(&b, judge, || {
        script(0, 1u8, &polls)
    }));
    assert!(catch_unwind(AssertUnwindSafe(|| poll(call.as_mut()))).is_err());
    assert_eq!(b.status(), Status::Open);
}

#[test]
fn a_drop_during_an_unwind_records_a_failure_with_an_unwind_that_tells() {
    let clock = ManualClock::new(0);
    let b = breaker(&clock, 1);
    half_open(&b, &clock);
    let polls = Cell::new(0);
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let mut call = pin!(Guarded::<_, _, _, Std, _>::start(&b, ByResult, || {
            script(3, Ok::<u8, u8>(1), &polls)
        }));
        assert_eq!(poll(call.as_mut()), Poll::Pending);
        panic!("the task panics while the call runs");
    }));
    assert!(caught.is_err());
    assert_eq!(
        b.status(),
        Status::Open,
        "a failure, not the ignored cancel"
    );
}

#[test]
fn abort_never_unwinds() {
    assert!(!Abort::unwinding());
}

#[test]
fn an_admitted_ticket_records_once() {
    let clock = ManualClock::new(5);
    let b = breaker(&clock, 1);
    let ticket = CircuitBreaker::acquire(&b).unwrap();
    let mut a: Admitted<_> = Admitted::new(&b, ticket, true, Outcome::Failure);
    assert!(!a.is_settled());
    clock.advance(3);
    assert_eq!(a.elapsed(), Some(3));
    assert!(format!("{a:?}").contains("settled: false"));
    assert_eq!(CircuitBreaker::status(a.breaker()), Status::Closed);
    a.settle_detached(TickVerdict::Ignored);
    assert!(a.is_settled());
    assert_eq!(a.settle(TickVerdict::Failure), Release::Stale);
    assert!(matches!(
        a.settle_async(TickVerdict::Failure),
        Reply::Ready(Release::Stale)
    ));
    a.settle_detached(TickVerdict::Failure);
    drop(a);
    assert_eq!(b.status(), Status::Closed);
    let untimed: Admitted<_> = Admitted::new(
        &b,
        CircuitBreaker::acquire(&b).unwrap(),
        false,
        Outcome::Ignored,
    );
    assert_eq!(untimed.elapsed(), None);
    drop(untimed);
    assert_eq!(b.status(), Status::Closed); // ignored
    let mut async_settled: Admitted<_> = Admitted::new(
        &b,
        CircuitBreaker::acquire(&b).unwrap(),
        false,
        Outcome::Ignored,
    );
    assert!(matches!(
        async_settled.settle_async(TickVerdict::Failure),
        Reply::Ready(Release::Recorded)
    ));
    assert_eq!(b.status(), Status::Open);
}

/// A clock that steps back after an admission reads as no time elapsed,
/// never as the 2^64 − 1 ticks of a wrapping difference (spec I6); one that
/// wraps forward at 2^64 is timed across the wrap.
#[test]
fn elapsed_never_reads_a_step_back_as_a_long_call() {
    let clock = ManualClock::new(1_000);
    let b = breaker(&clock, 1);
    let a: Admitted<_> = Admitted::new(
        &b,
        CircuitBreaker::acquire(&b).unwrap(),
        true,
        Outcome::Ignored,
    );
    clock.set(999);
    assert_eq!(a.elapsed(), Some(0));
    clock.set(0);
    assert_eq!(a.elapsed(), Some(0));
    drop(a);
    clock.set(u64::MAX - 2);
    let a: Admitted<_> = Admitted::new(
        &b,
        CircuitBreaker::acquire(&b).unwrap(),
        true,
        Outcome::Ignored,
    );
    clock.set(4); // 7 ticks later, across the wrap
    assert_eq!(a.elapsed(), Some(7));
}
