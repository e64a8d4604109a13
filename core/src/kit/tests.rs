//! The kit's trait, its defaults and the built-in implementors, on the
//! host: each method of `CircuitBreaker` answers as the breaker's own
//! method does, the defaults release the way their docs say, and the
//! async path of a local breaker is ready at once.

use super::*;
use crate::clock::ManualClock;
use crate::config::Config;
use crate::rate::Rate;
use crate::rejected::Cause;
use core::cell::Cell as StdCell;
use core::task::Waker;

fn breaker(clock: &ManualClock, threshold: u32) -> Breaker<&ManualClock> {
    Breaker::new(
        Config::new()
            .failure_threshold(threshold)
            .open_for(100)
            .probe_timeout(50)
            .abandon_as(Outcome::Ignored),
        clock,
    )
}

/// Polls a future once with a no-op waker.
fn poll_once<F: Future>(f: F) -> Poll<F::Output> {
    let mut f = core::pin::pin!(f);
    f.as_mut().poll(&mut Context::from_waker(Waker::noop()))
}

/// A breaker of another crate: a counter of releases, the trait's defaults
/// for everything it does not implement.
struct Counting {
    clock: ManualClock,
    released: StdCell<Option<Outcome>>,
}

impl CircuitBreaker for Counting {
    type Ticket = u8;
    type Clock = ManualClock;
    type Acquiring = Never<Result<u8, Rejected>>;
    type Releasing = Never<Release>;
    fn acquire(&self) -> Result<u8, Rejected> {
        Ok(7)
    }
    fn release(&self, ticket: u8, outcome: Outcome) -> Release {
        assert_eq!(ticket, 7);
        self.released.set(Some(outcome));
        Release::Recorded
    }
    fn status(&self) -> Status {
        Status::Closed
    }
    fn clock(&self) -> &ManualClock {
        &self.clock
    }
}

fn counting() -> Counting {
    Counting {
        clock: ManualClock::new(3),
        released: StdCell::new(None),
    }
}

#[test]
fn tick_verdicts_map_to_outcomes() {
    for outcome in [Outcome::Success, Outcome::Failure, Outcome::Ignored] {
        assert_eq!(TickVerdict::from(outcome).outcome(), outcome);
    }
    assert_eq!(TickVerdict::from(Outcome::Success), TickVerdict::Success);
    assert_eq!(TickVerdict::from(Outcome::Ignored), TickVerdict::Ignored);
    assert_eq!(TickVerdict::FailureFor(9).outcome(), Outcome::Failure);
}

#[test]
fn the_defaults_release_through_release() {
    let b = counting();
    // release_failure_for: an ordinary failure.
    assert_eq!(b.release_failure_for(7, 500), Release::Recorded);
    assert_eq!(b.released.take(), Some(Outcome::Failure));
    // release_verdict: the verdict's outcome.
    for (verdict, outcome) in [
        (TickVerdict::Success, Outcome::Success),
        (TickVerdict::Ignored, Outcome::Ignored),
        (TickVerdict::Failure, Outcome::Failure),
        (TickVerdict::FailureFor(5), Outcome::Failure),
    ] {
        assert_eq!(b.release_verdict(7, verdict), Release::Recorded);
        assert_eq!(b.released.take(), Some(outcome));
    }
    // release_detached: the sync release.
    b.release_detached(7, TickVerdict::Success);
    assert_eq!(b.released.take(), Some(Outcome::Success));
    // The async path: ready at once, the same answers.
    assert!(matches!(b.acquire_async(), Reply::Ready(Ok(7))));
    assert!(matches!(
        b.release_async(7, TickVerdict::Ignored),
        Reply::Ready(Release::Recorded)
    ));
    assert_eq!(b.released.take(), Some(Outcome::Ignored));
    assert_eq!(b.abandon_outcome(), Outcome::Failure);
    assert_eq!(b.clock().now(), 3);
}

#[test]
fn a_breaker_answers_the_trait_as_its_own_methods() {
    let clock = ManualClock::new(0);
    let b = breaker(&clock, 1);
    let t = CircuitBreaker::acquire(&b).unwrap();
    assert_eq!(
        CircuitBreaker::release(&b, t, Outcome::Success),
        Release::Recorded
    );
    assert_eq!(CircuitBreaker::abandon_outcome(&b), Outcome::Ignored);
    assert_eq!(CircuitBreaker::clock(&b).now(), 0);
    // A failure with its own open time, through the verdict.
    let t = CircuitBreaker::acquire(&b).unwrap();
    assert_eq!(
        b.release_verdict(t, TickVerdict::FailureFor(500)),
        Release::Recorded
    );
    assert_eq!(CircuitBreaker::status(&b), Status::Open);
    let Reply::Ready(Err(why)) = b.acquire_async() else {
        panic!("a local breaker answers at once")
    };
    assert_eq!((why.cause(), why.retry_after()), (Cause::Open, Some(500)));
    clock.advance(500);
    let Reply::Ready(Ok(probe)) = b.acquire_async() else {
        panic!("the probe, at once")
    };
    assert!(probe.is_probe());
    // A detached release records like any other.
    b.release_detached(probe, TickVerdict::Failure);
    assert_eq!(CircuitBreaker::status(&b), Status::Open);
    clock.advance(100);
    let probe = CircuitBreaker::acquire(&b).unwrap();
    // Irrefutable: a local breaker's `Wait` type (`Never`) is uninhabited.
    let Reply::Ready(release) = b.release_async(probe, TickVerdict::Success);
    assert_eq!(release, Release::Recorded);
    assert_eq!(CircuitBreaker::status(&b), Status::Closed);
    // release_failure_for goes to the breaker's own.
    let t = CircuitBreaker::acquire(&b).unwrap();
    assert_eq!(
        CircuitBreaker::release_failure_for(&b, t, 700),
        Release::Recorded
    );
    assert_eq!(b.acquire().unwrap_err().retry_after(), Some(700));
}

#[test]
fn a_reference_is_the_breaker() {
    let clock = ManualClock::new(0);
    let b = breaker(&clock, 2);
    let r = &b;
    let t = CircuitBreaker::acquire(&r).unwrap();
    assert_eq!(
        CircuitBreaker::release(&r, t, Outcome::Failure),
        Release::Recorded
    );
    let t = CircuitBreaker::acquire(&r).unwrap();
    r.release_detached(t, TickVerdict::Failure);
    assert_eq!(CircuitBreaker::status(&r), Status::Open);
    assert_eq!(CircuitBreaker::abandon_outcome(&r), Outcome::Ignored);
    assert!(core::ptr::eq(*CircuitBreaker::clock(&r), &clock));
    clock.advance(100);
    let Reply::Ready(Ok(probe)) = CircuitBreaker::acquire_async(&r) else {
        panic!("ready")
    };
    let Reply::Ready(done) = CircuitBreaker::release_async(&r, probe, TickVerdict::FailureFor(300));
    assert_eq!(done, Release::Recorded);
    assert_eq!(b.acquire().unwrap_err().retry_after(), Some(300));
    let counted = counting();
    let c = &counted;
    assert_eq!(
        CircuitBreaker::release_failure_for(&c, 7, 1),
        Release::Recorded
    );
    assert_eq!(counted.released.take(), Some(Outcome::Failure));
    assert_eq!(
        c.release_verdict(7, TickVerdict::Ignored),
        Release::Recorded
    );
    assert_eq!(counted.released.take(), Some(Outcome::Ignored));
}

#[test]
fn a_rate_breaker_answers_the_trait_as_its_own_methods() {
    let clock = ManualClock::new(0);
    let config = Config::new().open_for(100).abandon_as(Outcome::Success);
    let rate = Rate::new().failure_rate(50).minimum_calls(2).window(1_000);
    let b: RateBreaker<&ManualClock> = RateBreaker::new(config, rate, &clock).unwrap();
    assert_eq!(CircuitBreaker::abandon_outcome(&b), Outcome::Success);
    assert_eq!(CircuitBreaker::clock(&b).now(), 0);
    for _ in 0..2 {
        let t = CircuitBreaker::acquire(&b).unwrap();
        assert_eq!(
            CircuitBreaker::release(&b, t, Outcome::Failure),
            Release::Recorded
        );
    }
    assert_eq!(CircuitBreaker::status(&b), Status::Open);
    assert!(CircuitBreaker::acquire(&b).is_err());
}

#[test]
fn reply_get_awaits_only_a_wait() {
    let ready: Reply<u8, core::future::Ready<u8>> = Reply::Ready(1);
    assert_eq!(poll_once(ready.get()), Poll::Ready(1));
    let wait: Reply<u8, core::future::Ready<u8>> = Reply::Wait(core::future::ready(2));
    assert_eq!(poll_once(wait.get()), Poll::Ready(2));
    let pending: Reply<u8, core::future::Pending<u8>> = Reply::Wait(core::future::pending());
    assert_eq!(poll_once(pending.get()), Poll::Pending);
}

/// A breaker has no name unless it says so; a handle answers with its
/// breaker's.
#[test]
fn names_are_none_by_default_and_forwarded_by_handles() {
    let clock = ManualClock::new(0);
    let b = breaker(&clock, 1);
    assert_eq!(CircuitBreaker::name(&b), None);
    assert_eq!(CircuitBreaker::name(&&b), None);
    let c = counting();
    assert_eq!(c.name(), None);

    struct Named(Counting);
    impl CircuitBreaker for Named {
        type Ticket = u8;
        type Clock = ManualClock;
        type Acquiring = Never<Result<u8, Rejected>>;
        type Releasing = Never<Release>;
        fn acquire(&self) -> Result<u8, Rejected> {
            self.0.acquire()
        }
        fn release(&self, ticket: u8, outcome: Outcome) -> Release {
            self.0.release(ticket, outcome)
        }
        fn status(&self) -> Status {
            self.0.status()
        }
        fn clock(&self) -> &ManualClock {
            self.0.clock()
        }
        fn name(&self) -> Option<&'static str> {
            Some("modem")
        }
    }
    let named = Named(counting());
    assert_eq!(named.name(), Some("modem"));
    assert_eq!(<&Named as CircuitBreaker>::name(&&named), Some("modem"));
    assert_eq!(<&&Named as CircuitBreaker>::name(&&&named), Some("modem"));
}
