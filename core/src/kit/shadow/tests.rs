//! Shadow mode on the host: an open breaker admits and its word is
//! unchanged, the outcomes of shadow admissions change nothing, the
//! transitions are those of the same breaker without the wrapper, one real
//! probe is elected (spec I1), the switch flips with the state kept, and
//! every method (the async path of a remote breaker included) forwards.

use super::*;
use crate::Breaker;
use crate::clock::ManualClock;
use crate::config::Config;
use crate::kit::Never;
use crate::observer::Observer;
use crate::rejected::Cause;
use crate::ticket::Ticket;
use crate::transition::Transition;
use core::cell::{Cell, RefCell};
use core::task::Waker;
use std::vec::Vec;

/// Records the transitions and the rejections a breaker reports.
#[derive(Default)]
struct Log {
    transitions: RefCell<Vec<Transition>>,
    rejected: RefCell<Vec<Cause>>,
}

impl Observer for Log {
    fn on_transition(&self, t: Transition) {
        self.transitions.borrow_mut().push(t);
    }
    fn on_rejected(&self, rejected: Rejected) {
        self.rejected.borrow_mut().push(rejected.cause());
    }
}

type Logged<'c> = Breaker<&'c ManualClock, crate::W64, Log>;

/// Trips on the second failure in a row, open 100, probe timeout 50.
fn breaker(clock: &ManualClock) -> Logged<'_> {
    Breaker::from_parts(
        Config::new()
            .failure_threshold(2)
            .open_for(100)
            .probe_timeout(50)
            .abandon_as(Outcome::Ignored)
            .check()
            .unwrap(),
        clock,
        Log::default(),
    )
}

fn trip<B: CircuitBreaker>(b: &B) {
    for _ in 0..2 {
        let Ok(t) = b.acquire() else {
            panic!("closed admits")
        };
        assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
    }
    assert_eq!(b.status(), Status::Open);
}

fn poll_once<F: Future>(f: F) -> Poll<F::Output> {
    let mut f = core::pin::pin!(f);
    f.as_mut().poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn an_open_breaker_admits_in_shadow_mode_and_its_word_is_unchanged() {
    let clock = ManualClock::new(0);
    let heard = Cell::new(0);
    let s = Shadow::with_observer(
        breaker(&clock),
        OnShadow(|_| heard.set(heard.get() + 1)),
        true,
    );
    assert!(s.is_shadow());
    trip(&s);
    let word = s.inner().load();
    clock.advance(30);
    for outcome in [Outcome::Success, Outcome::Failure, Outcome::Ignored] {
        let t = s.acquire().expect("shadow mode admits");
        assert!(t.is_shadow());
        assert!(t.real().is_none());
        let why = t.rejected().expect("what would have happened");
        assert_eq!((why.cause(), why.retry_after()), (Cause::Open, Some(70)));
        assert_eq!(s.release(t, outcome), Release::Stale);
        assert_eq!(s.inner().load(), word, "a shadow call stores nothing");
    }
    // The breaker's observer saw each rejection; the hook, each admission.
    assert_eq!(*s.inner().observer().rejected.borrow(), [Cause::Open; 3]);
    assert_eq!(heard.get(), 3);
    // Every release form of a shadow ticket changes nothing.
    let t = s.acquire().unwrap();
    assert_eq!(s.release_failure_for(t, 5_000), Release::Stale);
    let t = s.acquire().unwrap();
    assert_eq!(s.release_verdict(t, TickVerdict::Failure), Release::Stale);
    let t = s.acquire().unwrap();
    assert!(matches!(
        s.release_async(t, TickVerdict::Failure),
        Reply::Ready(Release::Stale)
    ));
    let t = s.acquire().unwrap();
    s.release_detached(t, TickVerdict::Failure);
    assert_eq!(s.inner().load(), word);
    assert_eq!(heard.get(), 7);
    assert_eq!(s.status(), Status::Open, "it reports what it would do");
}

/// One step of a script run on a plain breaker and on a shadowed one.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// A call that ends with this outcome (if it runs).
    Call(Outcome),
    /// A call admitted now and released later, by `Release`.
    Hold,
    /// Releases the oldest held call, if one is held.
    Release(Outcome),
    /// The clock moves on.
    Advance(u64),
    /// An operator's force.
    ForceOpen,
    ForceClose,
}

/// What each call of a script met: `None` admitted for real, `Some(cause)`
/// rejected (plain) or admitted by shadow mode (shadowed).
fn run<B: CircuitBreaker>(
    b: &B,
    inner: &Logged<'_>,
    clock: &ManualClock,
    script: &[Step],
    overridden: impl Fn(&B::Ticket) -> Option<Rejected>,
) -> Vec<Option<Cause>> {
    let mut met = Vec::new();
    let mut held = std::collections::VecDeque::new();
    for step in script {
        match *step {
            Step::Call(outcome) => match b.acquire() {
                Ok(t) => {
                    let shadow = overridden(&t);
                    let release = b.release(t, outcome);
                    if shadow.is_some() {
                        assert_eq!(release, Release::Stale);
                    }
                    met.push(shadow.map(|r| r.cause()));
                }
                Err(r) => met.push(Some(r.cause())),
            },
            Step::Hold => match b.acquire() {
                Ok(t) => {
                    met.push(overridden(&t).map(|r| r.cause()));
                    held.push_back(t);
                }
                Err(r) => met.push(Some(r.cause())),
            },
            Step::Release(outcome) => {
                if let Some(t) = held.pop_front() {
                    let _ = b.release(t, outcome);
                }
            }
            Step::Advance(ticks) => clock.advance(ticks),
            Step::ForceOpen => inner.force_open(),
            Step::ForceClose => inner.force_close(),
        }
    }
    met
}

#[test]
fn transitions_happen_exactly_as_without_shadow() {
    use Outcome::{Failure as F, Ignored as I, Success as S};
    use Step::*;
    let script = [
        Call(S),
        Call(F),
        Hold, // a slow call admitted while closed
        Call(F),
        // Open: calls rejected (plain) or shadowed, their outcomes ignored.
        Call(S),
        Call(F),
        Release(S), // the slow call ends after the trip: stale
        Advance(60),
        Call(S),
        Advance(40),
        // Half-open: one probe elected, the others would be rejected.
        Hold,
        Call(S),
        Call(F),
        Release(F), // the probe fails: open again
        Call(S),
        Advance(100),
        Hold,
        Call(F),
        Advance(50), // the probe times out
        Call(F),     // elected: a new probe
        Release(S),  // the old probe's success is stale
        Advance(100),
        Hold,
        Call(F),
        Release(I), // ignored: half-open again
        Hold,
        Release(S), // closes
        Call(F),
        ForceOpen,
        Call(S),
        Advance(1_000),
        Call(S),
        ForceClose,
        Call(F),
        Call(F),
        Call(S),
    ];
    let clock_a = ManualClock::new(0);
    let plain = breaker(&clock_a);
    let a = run(&plain, &plain, &clock_a, &script, |_| None);

    let clock_b = ManualClock::new(0);
    let shadowed = Shadow::new(breaker(&clock_b));
    let b = run(&shadowed, shadowed.inner(), &clock_b, &script, |t| {
        t.rejected()
    });

    assert_eq!(a, b, "each call meets the same decision");
    assert!(a.iter().filter(|m| m.is_some()).count() >= 8, "{a:?}");
    assert!(a.contains(&Some(Cause::Probing)) && a.contains(&Some(Cause::ForcedOpen)));
    let plain_log = plain.observer();
    let shadow_log = shadowed.inner().observer();
    assert_eq!(
        *plain_log.transitions.borrow(),
        *shadow_log.transitions.borrow(),
        "the same transitions, with the same counters"
    );
    assert!(plain_log.transitions.borrow().len() >= 10);
    assert_eq!(*plain_log.rejected.borrow(), *shadow_log.rejected.borrow());
    assert_eq!(plain.load(), shadowed.inner().load());
}

#[test]
fn switching_keeps_the_state() {
    let clock = ManualClock::new(0);
    let s = Shadow::new(breaker(&clock));
    trip(&s);
    clock.advance(30);
    let word = s.inner().load();
    assert!(s.acquire().unwrap().is_shadow());
    s.set_shadow(false);
    assert!(!s.is_shadow());
    assert_eq!(s.inner().load(), word, "the switch is not the word");
    let r = s.acquire().unwrap_err();
    assert_eq!((r.cause(), r.retry_after()), (Cause::Open, Some(70)));
    assert!(s.is_open());
    s.set_shadow(true);
    assert!(!s.is_open(), "no call is rejected while shadowing");
    assert_eq!(s.status(), Status::Open);
    assert_eq!(s.inner().load(), word);
    // A shadow ticket taken before the switch goes off stays harmless.
    let t = s.acquire().unwrap();
    s.set_shadow(false);
    assert_eq!(s.release(t, Outcome::Success), Release::Stale);
    // The time runs on whatever the switch: the probe is elected on time.
    clock.advance(70);
    let probe = s.acquire().unwrap();
    assert!(probe.real().unwrap().is_probe());
    assert_eq!(s.release(probe, Outcome::Success), Release::Recorded);
    assert_eq!(s.status(), Status::Closed);
    // Enforcing from the start, until switched on.
    let e = Shadow::enforcing(breaker(&clock));
    trip(&e);
    assert!(e.acquire().is_err());
    e.set_shadow(true);
    assert!(e.acquire().unwrap().is_shadow());
}

#[test]
fn i1_one_real_probe_in_shadow_mode() {
    let clock = ManualClock::new(0);
    let s = Shadow::new(breaker(&clock));
    trip(&s);
    clock.advance(100);
    let tickets: Vec<_> = (0..5).map(|_| s.acquire().unwrap()).collect();
    let real: Vec<&Ticket> = tickets.iter().filter_map(ShadowTicket::real).collect();
    assert_eq!(real.len(), 1, "I1: one probe");
    assert!(real[0].is_probe());
    assert!(tickets[0].real().is_some(), "the first caller is elected");
    for t in &tickets[1..] {
        assert_eq!(t.rejected().map(|r| r.cause()), Some(Cause::Probing));
    }
    // The shadow calls' failures change nothing; the probe's success closes.
    let mut tickets = tickets.into_iter();
    let probe = tickets.next().unwrap();
    for t in tickets {
        assert_eq!(s.release(t, Outcome::Failure), Release::Stale);
    }
    assert_eq!(s.status(), Status::Probing);
    assert_eq!(s.release(probe, Outcome::Success), Release::Recorded);
    assert_eq!(s.status(), Status::Closed);
}

#[test]
fn i1_one_real_probe_among_racing_threads() {
    static CLOCK: ManualClock = ManualClock::new(0);
    static S: Shadow<Breaker<&ManualClock>> = Shadow::new(Breaker::new(
        Config::new().failure_threshold(1).open_for(10),
        &CLOCK,
    ));
    let t = S.acquire().unwrap();
    assert_eq!(S.release(t, Outcome::Failure), Release::Recorded);
    CLOCK.advance(10);
    let barrier = std::sync::Barrier::new(8);
    let tickets: Vec<ShadowTicket<Ticket>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    S.acquire().unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let real = tickets.iter().filter(|t| !t.is_shadow()).count();
    assert_eq!(real, 1, "I1: exactly one probe, the others shadowed");
    for t in tickets {
        let probe = !t.is_shadow();
        let release = S.release(t, Outcome::Success);
        assert_eq!(release == Release::Recorded, probe);
    }
    assert_eq!(S.status(), Status::Closed);
}

#[test]
fn methods_forward_to_the_breaker() {
    let clock = ManualClock::new(5);
    let s = Shadow::new(breaker(&clock));
    assert!(core::ptr::eq(*s.clock(), &clock));
    assert_eq!(s.abandon_outcome(), Outcome::Ignored);
    assert_eq!(s.name(), None);
    assert_eq!(s.health(), s.inner().health());
    assert!(s.health().is_blank());
    // A failure that says how long to stay open, through a real ticket.
    let t = s.acquire().unwrap();
    assert_eq!(s.release(t, Outcome::Failure), Release::Recorded);
    assert_eq!(s.health().failures, 1);
    let t = s.acquire().unwrap();
    assert_eq!(s.release_failure_for(t, 500), Release::Recorded);
    assert_eq!(s.health().retry_after, Some(500));
    // Real tickets through the other release forms.
    s.inner().force_close();
    let t = s.acquire().unwrap();
    assert!(matches!(
        s.release_async(t, TickVerdict::Failure),
        Reply::Ready(Release::Recorded)
    ));
    let t = s.acquire().unwrap();
    s.release_detached(t, TickVerdict::FailureFor(300));
    assert_eq!(s.health().retry_after, Some(300));
    // A handle on the wrapper answers as the wrapper, `is_open` included.
    type S<'c> = Shadow<Logged<'c>>;
    let (by_ref, by_ref_ref) = (&s, &&s);
    assert!(!s.is_open());
    assert!(!<&S<'_> as CircuitBreaker>::is_open(&by_ref));
    assert!(!<&&S<'_> as CircuitBreaker>::is_open(&by_ref_ref));
    assert_eq!(s.status(), Status::Open);
    s.set_shadow(false);
    assert!(<&S<'_> as CircuitBreaker>::is_open(&by_ref));
    assert!(<&&S<'_> as CircuitBreaker>::is_open(&by_ref_ref));
    assert_eq!(s.into_inner().status(), Status::Open);
    // A name comes through.
    struct Named(Breaker<&'static ManualClock>);
    static NAMED_CLOCK: ManualClock = ManualClock::new(0);
    impl CircuitBreaker for Named {
        type Ticket = Ticket;
        type Clock = &'static ManualClock;
        type Acquiring = Never<Result<Ticket, Rejected>>;
        type Releasing = Never<Release>;
        fn acquire(&self) -> Result<Ticket, Rejected> {
            self.0.acquire()
        }
        fn release(&self, t: Ticket, o: Outcome) -> Release {
            self.0.release(t, o)
        }
        fn status(&self) -> Status {
            self.0.status()
        }
        fn clock(&self) -> &&'static ManualClock {
            self.0.clock()
        }
        fn name(&self) -> Option<&'static str> {
            Some("payments")
        }
    }
    let named = Shadow::new(Named(Breaker::new(Config::new(), &NAMED_CLOCK)));
    assert_eq!(named.name(), Some("payments"));
}

/// A breaker whose answers come through a round trip: the core's breaker
/// behind a ready future, to drive the wrapper's `Reply::Wait` arm.
struct Remote<'c>(Logged<'c>);

impl<'c> CircuitBreaker for Remote<'c> {
    type Ticket = Ticket;
    type Clock = &'c ManualClock;
    type Acquiring = core::future::Ready<Result<Ticket, Rejected>>;
    type Releasing = core::future::Ready<Release>;
    fn acquire(&self) -> Result<Ticket, Rejected> {
        self.0.acquire()
    }
    fn release(&self, t: Ticket, o: Outcome) -> Release {
        self.0.release(t, o)
    }
    fn status(&self) -> Status {
        self.0.status()
    }
    fn clock(&self) -> &&'c ManualClock {
        self.0.clock()
    }
    fn acquire_async(&self) -> Reply<Result<Ticket, Rejected>, Self::Acquiring> {
        Reply::Wait(core::future::ready(self.0.acquire()))
    }
    fn release_async(&self, t: Ticket, v: TickVerdict) -> Reply<Release, Self::Releasing> {
        Reply::Wait(core::future::ready(self.0.release_verdict(t, v)))
    }
}

#[test]
fn a_remote_admission_is_shadowed_after_its_round_trip() {
    let clock = ManualClock::new(0);
    let heard = Cell::new(0);
    let hook = OnShadow(|_: Rejected| heard.set(heard.get() + 1));
    let s = Shadow::with_observer(Remote(breaker(&clock)), &hook, true);
    // Closed: a real admission, its release through the breaker's round trip.
    let Reply::Wait(acquiring) = s.acquire_async() else {
        panic!("a round trip")
    };
    let Poll::Ready(Ok(t)) = poll_once(acquiring) else {
        panic!("admitted")
    };
    assert!(!t.is_shadow());
    let Reply::Wait(releasing) = s.release_async(t, TickVerdict::Success) else {
        panic!("a round trip")
    };
    assert_eq!(poll_once(releasing), Poll::Ready(Release::Recorded));
    trip(&s.inner().0);
    // Open: the round trip's rejection becomes a shadow admission...
    let Reply::Wait(acquiring) = s.acquire_async() else {
        panic!("a round trip")
    };
    // ...decided by the switch as it was when the admission began.
    s.set_shadow(false);
    let Poll::Ready(Ok(t)) = poll_once(acquiring) else {
        panic!("shadow-admitted")
    };
    assert_eq!(t.rejected().map(|r| r.cause()), Some(Cause::Open));
    assert_eq!(heard.get(), 1);
    assert!(matches!(
        s.release_async(t, TickVerdict::Success),
        Reply::Ready(Release::Stale)
    ));
    // Begun with the switch off: the rejection stands.
    let Reply::Wait(acquiring) = s.acquire_async() else {
        panic!("a round trip")
    };
    s.set_shadow(true);
    let Poll::Ready(Err(r)) = poll_once(acquiring) else {
        panic!("rejected")
    };
    assert_eq!(r.cause(), Cause::Open);
    assert_eq!(heard.get(), 1);
    assert_eq!(
        *s.inner().0.observer().rejected.borrow(),
        [Cause::Open; 2],
        "the breaker reported both rejections"
    );
}

#[test]
fn a_local_breaker_answers_at_once_through_the_async_path() {
    let clock = ManualClock::new(0);
    let s = Shadow::new(breaker(&clock));
    trip(&s);
    let Reply::Ready(Ok(t)) = s.acquire_async() else {
        panic!("a local breaker answers at once, shadow-admitted")
    };
    assert!(t.is_shadow());
    s.set_shadow(false);
    assert!(matches!(s.acquire_async(), Reply::Ready(Err(_))));
}

#[test]
fn hooks_compose() {
    let (a, b) = (Cell::new(0), Cell::new(0));
    let pair = (
        OnShadow(|_: Rejected| a.set(a.get() + 1)),
        OnShadow(|_: Rejected| b.set(b.get() + 1)),
    );
    let clock = ManualClock::new(0);
    let s = Shadow::with_observer(breaker(&clock), &pair, true);
    s.inner().force_open();
    let t = s.acquire().unwrap();
    assert_eq!(t.rejected().map(|r| r.cause()), Some(Cause::ForcedOpen));
    let _ = s.release(t, Outcome::Success);
    assert_eq!((a.get(), b.get()), (1, 1));
    assert!(core::ptr::eq(*s.observer(), &pair));
}

#[test]
fn the_wrapper_adds_a_flag_and_its_padding() {
    use core::mem::{align_of, size_of};
    fn at_most_one_alignment_more<B>() {
        assert!(size_of::<Shadow<B>>() <= size_of::<B>() + align_of::<B>().max(1));
    }
    at_most_one_alignment_more::<Breaker<&'static ManualClock>>();
    at_most_one_alignment_more::<crate::Breaker32<&'static ManualClock>>();
    at_most_one_alignment_more::<crate::StaticBreaker<&'static ManualClock>>();
}
