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

/// A breaker with a state machine of its own (no core word): opens after
/// `threshold` failures in a row for `cooldown` ticks, then admits one
/// probe at a time. Its tickets carry the generation they were issued in,
/// so a release from before a trip is stale.
struct Streak {
    clock: ManualClock,
    threshold: u32,
    cooldown: u64,
    failures: StdCell<u32>,
    open_until: StdCell<Option<u64>>,
    probing: StdCell<bool>,
    generation: StdCell<u32>,
    failed_for: StdCell<Option<u64>>,
}

impl Streak {
    fn new(threshold: u32, cooldown: u64) -> Streak {
        Streak {
            clock: ManualClock::new(0),
            threshold,
            cooldown,
            failures: StdCell::new(0),
            open_until: StdCell::new(None),
            probing: StdCell::new(false),
            generation: StdCell::new(0),
            failed_for: StdCell::new(None),
        }
    }

    fn trip(&self, open_for: u64) {
        self.failures.set(0);
        self.probing.set(false);
        self.open_until.set(Some(self.clock.now() + open_for));
        self.generation.set(self.generation.get() + 1);
    }
}

impl LocalBreaker for Streak {
    type Ticket = (u32, bool);
    type Clock = ManualClock;

    fn acquire(&self) -> Result<(u32, bool), Rejected> {
        let now = self.clock.now();
        match self.open_until.get() {
            None => Ok((self.generation.get(), false)),
            Some(until) if now < until => Err(Rejected::new(Cause::Open, Some(until - now))),
            Some(_) if self.probing.get() => Err(Rejected::new(Cause::Probing, None)),
            Some(_) => {
                self.probing.set(true);
                Ok((self.generation.get(), true))
            }
        }
    }

    fn release(&self, (generation, probe): (u32, bool), outcome: Outcome) -> Release {
        if generation != self.generation.get() {
            return Release::Stale;
        }
        match (outcome, probe) {
            (Outcome::Ignored, _) => self.probing.set(!probe && self.probing.get()),
            (Outcome::Success, false) => self.failures.set(0),
            (Outcome::Success, true) => {
                self.open_until.set(None);
                self.probing.set(false);
                self.generation.set(generation + 1);
            }
            (Outcome::Failure, true) => self.trip(self.cooldown),
            (Outcome::Failure, false) => {
                self.failures.set(self.failures.get() + 1);
                if self.failures.get() >= self.threshold {
                    self.trip(self.cooldown);
                }
            }
        }
        Release::Recorded
    }

    fn release_failure_for(&self, ticket: (u32, bool), open_for: u64) -> Release {
        self.failed_for.set(Some(open_for));
        let release = self.release(ticket, Outcome::Failure);
        if self.open_until.get() == Some(self.clock.now() + self.cooldown) {
            self.open_until.set(Some(self.clock.now() + open_for));
        }
        release
    }

    fn status(&self) -> Status {
        match self.open_until.get() {
            None => Status::Closed,
            Some(until) if self.clock.now() < until => Status::Open,
            Some(_) if self.probing.get() => Status::Probing,
            Some(_) => Status::HalfOpen,
        }
    }

    fn clock(&self) -> &ManualClock {
        &self.clock
    }

    fn abandon_outcome(&self) -> Outcome {
        Outcome::Ignored
    }

    fn name(&self) -> Option<&'static str> {
        Some("streak")
    }
}

/// `Local` makes a `LocalBreaker` a `CircuitBreaker`: every method the
/// breaker's, the async path ready at once with the sync answer.
#[test]
fn a_local_breaker_is_a_circuit_breaker_through_local() {
    let b = Local(Streak::new(2, 100));
    assert_eq!(CircuitBreaker::name(&b), Some("streak"));
    assert_eq!(CircuitBreaker::abandon_outcome(&b), Outcome::Ignored);
    assert!(core::ptr::eq(CircuitBreaker::clock(&b), &b.clock));

    // Two failures in a row trip it, through the sync and the async path.
    let t = CircuitBreaker::acquire(&b).unwrap();
    assert_eq!(
        CircuitBreaker::release(&b, t, Outcome::Failure),
        Release::Recorded
    );
    let Reply::Ready(Ok(t)) = b.acquire_async() else {
        panic!("ready and admitted")
    };
    let Reply::Ready(done) = b.release_async(t, TickVerdict::Failure);
    assert_eq!(done, Release::Recorded);
    assert_eq!(CircuitBreaker::status(&b), Status::Open);

    // Its rejection is the one it built, whichever path asks.
    b.clock.advance(30);
    let why = CircuitBreaker::acquire(&b).unwrap_err();
    assert_eq!((why.cause(), why.retry_after()), (Cause::Open, Some(70)));
    assert!(matches!(b.acquire_async(), Reply::Ready(Err(r)) if r == why));

    // Half-open: one probe; a second caller is told `Probing`.
    b.clock.advance(70);
    assert_eq!(CircuitBreaker::status(&b), Status::HalfOpen);
    let probe = CircuitBreaker::acquire(&b).unwrap();
    assert_eq!(CircuitBreaker::status(&b), Status::Probing);
    let busy = CircuitBreaker::acquire(&b).unwrap_err();
    assert_eq!(
        (busy.cause(), busy.retry_after()),
        (Cause::Probing, Some(0))
    );
    // `FailureFor` goes to the breaker's `release_failure_for`.
    let Reply::Ready(done) = b.release_async(probe, TickVerdict::FailureFor(500));
    assert_eq!(done, Release::Recorded);
    assert_eq!(b.failed_for.take(), Some(500));
    assert_eq!(
        CircuitBreaker::acquire(&b).unwrap_err().retry_after(),
        Some(500)
    );

    // A ticket from before the trip is stale, on every path.
    b.clock.advance(500);
    let probe = CircuitBreaker::acquire(&b).unwrap();
    assert_eq!(
        b.release_verdict((probe.0.wrapping_sub(1), false), TickVerdict::Success),
        Release::Stale
    );
    assert_eq!(CircuitBreaker::status(&b), Status::Probing);
    // A detached release is the sync one: the probe's success closes it.
    b.release_detached(probe, TickVerdict::Success);
    assert_eq!(CircuitBreaker::status(&b), Status::Closed);
    assert_eq!(
        CircuitBreaker::release_failure_for(&b, (0, false), 9),
        Release::Stale
    );
}

/// The guarded future runs a local breaker as any other: admitted before
/// the first poll, ready at once, the outcome recorded once.
#[test]
fn a_local_breaker_guards_a_future() {
    let b = Local(Streak::new(1, 100));
    let out = poll_once(crate::future::guard(&b, async { Err::<u8, u8>(3) }));
    assert_eq!(out, Poll::Ready(Ok(Err(3))));
    assert_eq!(CircuitBreaker::status(&b), Status::Open);
    let out = poll_once(crate::future::guard(&b, async { Ok::<u8, u8>(1) }));
    let Poll::Ready(Err(why)) = out else {
        panic!("rejected")
    };
    assert_eq!(why, Rejected::new(Cause::Open, Some(100)));
}

/// A handle on a local breaker is one (`Local(&b)`, and with `alloc`
/// `Local(Rc<B>)` and the rest), and a handle on a `Local` is a
/// `CircuitBreaker` as every breaker's handle is.
#[test]
fn handles_on_a_local_breaker_are_breakers() {
    let streak = Streak::new(1, 100);
    let by_ref = Local(&streak);
    assert_eq!(CircuitBreaker::name(&by_ref), Some("streak"));
    let t = CircuitBreaker::acquire(&by_ref).unwrap();
    assert_eq!(
        CircuitBreaker::release_failure_for(&by_ref, t, 40),
        Release::Recorded
    );
    assert_eq!(streak.failed_for.take(), Some(40));
    assert_eq!(CircuitBreaker::status(&by_ref), Status::Open);
    assert_eq!(CircuitBreaker::abandon_outcome(&by_ref), Outcome::Ignored);
    assert!(core::ptr::eq(CircuitBreaker::clock(&by_ref), &streak.clock));
    let local = Local(Streak::new(1, 100));
    let handle = &local;
    assert_eq!(CircuitBreaker::name(&handle), Some("streak"));
    assert_eq!(CircuitBreaker::acquire(&&handle).map(|(g, _)| g), Ok(0));
    // `Local` dereferences to its breaker.
    assert_eq!(local.threshold, 1);
    #[cfg(feature = "alloc")]
    {
        let shared = Local(alloc::rc::Rc::new(Streak::new(1, 100)));
        let other = shared.clone();
        let t = CircuitBreaker::acquire(&shared).unwrap();
        assert_eq!(
            CircuitBreaker::release(&shared, t, Outcome::Failure),
            Release::Recorded
        );
        assert_eq!(CircuitBreaker::status(&other), Status::Open);
        assert_eq!(CircuitBreaker::name(&other), Some("streak"));
        let boxed = Local(alloc::boxed::Box::new(Streak::new(1, 100)));
        assert_eq!(CircuitBreaker::abandon_outcome(&boxed), Outcome::Ignored);
    }
}

/// A `LocalBreaker`'s defaults: a failure with an open time is a failure,
/// the abandon outcome a failure, no name.
#[test]
fn local_breaker_defaults() {
    struct Plain(Counting);
    impl LocalBreaker for Plain {
        type Ticket = u8;
        type Clock = ManualClock;
        fn acquire(&self) -> Result<u8, Rejected> {
            CircuitBreaker::acquire(&self.0)
        }
        fn release(&self, ticket: u8, outcome: Outcome) -> Release {
            CircuitBreaker::release(&self.0, ticket, outcome)
        }
        fn status(&self) -> Status {
            Status::Closed
        }
        fn clock(&self) -> &ManualClock {
            &self.0.clock
        }
    }
    let b = Local(Plain(counting()));
    assert_eq!(CircuitBreaker::name(&b), None);
    assert_eq!(CircuitBreaker::abandon_outcome(&b), Outcome::Failure);
    assert_eq!(
        CircuitBreaker::release_failure_for(&b, 7, 500),
        Release::Recorded
    );
    assert_eq!(b.0.0.released.take(), Some(Outcome::Failure));
    let Reply::Ready(done) = b.release_async(7, TickVerdict::FailureFor(5));
    assert_eq!(done, Release::Recorded);
    assert_eq!(b.0.0.released.take(), Some(Outcome::Failure));
}

/// `health` through the trait, state by state: the counts the word keeps,
/// the wait a rejection would give, and blank only for a `Closed` breaker
/// with nothing counted.
#[test]
fn health_reads_each_state() {
    let clock = ManualClock::new(1_000);
    let b = breaker(&clock, 2);
    let h = CircuitBreaker::health(&b);
    assert_eq!(
        (h.status, h.counter, h.failures, h.retry_after),
        (Status::Closed, Some(0), 0, None)
    );
    assert!(h.is_blank() && !CircuitBreaker::is_open(&b));
    b.release(b.acquire().unwrap(), Outcome::Failure);
    let h = CircuitBreaker::health(&b);
    assert_eq!((h.failures, h.is_blank()), (1, false));
    b.release(b.acquire().unwrap(), Outcome::Failure);
    clock.advance(30);
    let h = CircuitBreaker::health(&b);
    assert_eq!(
        (h.status, h.trips, h.retry_after, h.forced),
        (Status::Open, 1, Some(70), false)
    );
    assert!(!h.is_blank() && CircuitBreaker::is_open(&b));
    clock.advance(70);
    let h = CircuitBreaker::health(&b);
    assert_eq!((h.status, h.retry_after), (Status::HalfOpen, None));
    let probe = b.acquire().unwrap();
    clock.advance(10);
    let h = CircuitBreaker::health(&b);
    assert_eq!((h.status, h.retry_after), (Status::Probing, Some(40)));
    assert!(!CircuitBreaker::is_open(&b));
    b.release(probe, Outcome::Success);
    assert!(CircuitBreaker::health(&b).is_blank());
    b.force_open();
    let h = CircuitBreaker::health(&b);
    assert_eq!(
        (h.status, h.forced, h.retry_after),
        (Status::Open, true, None)
    );
    assert!(!h.is_blank());
    // Stores nothing: the word is as it was.
    assert_eq!(b.snapshot(), b.snapshot());
    assert_eq!(CircuitBreaker::health(&&b), CircuitBreaker::health(&b));
}

/// A rate breaker's health carries its window's counts, so a registry keeps
/// a closed rate breaker that has seen calls; a breaker of another crate
/// gets the default from its status.
#[test]
fn health_of_a_rate_breaker_and_the_default() {
    let clock = ManualClock::new(0);
    let rate = Rate::new().window(80).minimum_calls(10).failure_rate(50);
    let b: RateBreaker<&ManualClock> = RateBreaker::new(Config::new(), rate, &clock).unwrap();
    assert!(CircuitBreaker::health(&b).is_blank());
    b.release(b.acquire().unwrap(), Outcome::Success);
    b.release(b.acquire().unwrap(), Outcome::Failure);
    let h = CircuitBreaker::health(&b);
    assert_eq!(
        (h.status, h.window_calls, h.window_failures),
        (Status::Closed, 2, 1)
    );
    assert!(!h.is_blank());
    clock.advance(1_000); // the window has passed: nothing counted now
    assert!(CircuitBreaker::health(&b).is_blank());

    let other = Counting {
        clock: ManualClock::new(0),
        released: StdCell::new(None),
    };
    assert_eq!(other.health(), Health::of_status(other.status()));
}
