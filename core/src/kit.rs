//! The kit: the open breaker trait, [`CircuitBreaker`], that every breaker
//! form implements and that a breaker of another crate can implement, so
//! that the calls, futures, tower layer and registry of `tripword-std` work
//! on it (`docs/spec.md`, "Kit").
//!
//! A breaker answers two questions: may this call run ([`acquire`]), and
//! how did it go ([`release`]). A local breaker answers at once. A remote
//! one (a word in Redis, a row in a database) may need a round trip for
//! some answers, a probe election or a failure report; it says so through
//! the async path, [`acquire_async`] and [`release_async`], whose answer is
//! a [`Reply`]: [`Ready`](Reply::Ready) when it is known at once (a local
//! breaker, a remote one whose mirror decides), or [`Wait`](Reply::Wait)
//! with a future to await. So no executor thread waits on the network, and
//! a local breaker's async path costs what its sync path costs.
//!
//! ```
//! use tripword::clock::ManualClock;
//! use tripword::kit::{CircuitBreaker, Reply};
//! use tripword::{Breaker, Config, Outcome, Status};
//!
//! /// Runs `f` through any breaker: what a crate of call helpers writes once.
//! fn guarded<B: CircuitBreaker>(b: &B, f: impl FnOnce() -> bool) -> Option<bool> {
//!     let ticket = b.acquire().ok()?;
//!     let ok = f();
//!     b.release(ticket, if ok { Outcome::Success } else { Outcome::Failure });
//!     Some(ok)
//! }
//!
//! let clock = ManualClock::new(0);
//! let b = Breaker::new(Config::new().failure_threshold(1), &clock);
//! assert_eq!(guarded(&b, || false), Some(false));
//! assert_eq!(CircuitBreaker::status(&b), Status::Open);
//! assert_eq!(guarded(&b, || true), None); // rejected: not run
//! // A local breaker's async path is ready at once.
//! assert!(matches!(b.acquire_async(), Reply::Ready(Err(_))));
//! ```
//!
//! [`acquire`]: CircuitBreaker::acquire
//! [`release`]: CircuitBreaker::release
//! [`acquire_async`]: CircuitBreaker::acquire_async
//! [`release_async`]: CircuitBreaker::release_async

use core::convert::Infallible;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};

use crate::breaker::{Breaker, Release, Ticket};
use crate::clock::Clock;
use crate::config::ConfigSource;
use crate::observer::Observer;
use crate::outcome::Outcome;
use crate::rate::RateBreaker;
use crate::rejected::Rejected;
use crate::status::Status;
use crate::word::Word;

/// How an admitted call counts, in the breaker's clock ticks: an
/// [`Outcome`], or a failure that says how long to stay open (a
/// `Retry-After`). What every classifier's answer becomes before it is
/// recorded.
///
/// ```
/// use tripword::Outcome;
/// use tripword::kit::TickVerdict;
/// assert_eq!(TickVerdict::from(Outcome::Failure), TickVerdict::Failure);
/// assert_eq!(TickVerdict::FailureFor(3_000).outcome(), Outcome::Failure);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TickVerdict {
    /// The call succeeded.
    Success,
    /// The call failed in a way that says the dependency is unhealthy.
    Failure,
    /// The result says nothing about the dependency's health.
    Ignored,
    /// A failure that, if it trips the breaker or fails its probe, keeps it
    /// open this many ticks instead of the configured open time.
    FailureFor(u64),
}

impl TickVerdict {
    /// The [`Outcome`] it records (`FailureFor` is a failure).
    pub const fn outcome(self) -> Outcome {
        match self {
            TickVerdict::Success => Outcome::Success,
            TickVerdict::Failure | TickVerdict::FailureFor(_) => Outcome::Failure,
            TickVerdict::Ignored => Outcome::Ignored,
        }
    }
}

impl From<Outcome> for TickVerdict {
    #[inline(always)]
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Success => TickVerdict::Success,
            Outcome::Failure => TickVerdict::Failure,
            Outcome::Ignored => TickVerdict::Ignored,
        }
    }
}

/// An answer that is either known now or must be awaited: what the async
/// path of a [`CircuitBreaker`] returns. A local breaker always answers
/// [`Ready`](Reply::Ready), so a caller that matches on it pays nothing for
/// the async path it does not take.
#[derive(Debug)]
#[must_use = "a reply holds an admission or a release: take its value or await its future"]
pub enum Reply<T, F> {
    /// The answer, known at once.
    Ready(T),
    /// A future that gives the answer (a round trip in flight).
    Wait(F),
}

impl<T, F: Future<Output = T>> Reply<T, F> {
    /// The answer, awaited if it must be.
    ///
    /// ```
    /// use tripword::kit::{Never, Reply};
    /// let reply: Reply<u32, Never<u32>> = Reply::Ready(7);
    /// let answer = reply.get(); // a future, ready at its first poll
    /// # let _ = answer;
    /// ```
    pub async fn get(self) -> T {
        match self {
            Reply::Ready(value) => value,
            Reply::Wait(future) => future.await,
        }
    }
}

/// A future that cannot exist: the [`Reply::Wait`] type of a breaker that
/// always answers at once (a local one), so that arm of every match on its
/// replies is dead code.
pub struct Never<T> {
    never: Infallible,
    output: PhantomData<fn() -> T>,
}

impl<T> Never<T> {
    /// The value that cannot be built.
    pub const fn from_infallible(never: Infallible) -> Self {
        Never {
            never,
            output: PhantomData,
        }
    }
}

impl<T> Future for Never<T> {
    type Output = T;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<T> {
        match self.get_mut().never {}
    }
}

impl<T> core::fmt::Debug for Never<T> {
    fn fmt(&self, _: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.never {}
    }
}

/// A circuit breaker of any form: what `tripword-std`'s `call`,
/// `call_async`, tower layer and registry accept, and what another crate
/// implements to get them (`docs/spec.md`, "Kit").
///
/// Implemented by every [`Breaker`] form, [`RateBreaker`], references to
/// them, and the fleet's breakers in `tripword-redis`.
///
/// **What an implementor must keep** (each of `tripword`'s own breakers
/// does, and `tripword-std` relies on it):
/// - a rejected [`acquire`](Self::acquire) means the protected call must not
///   run; an admission hands out a ticket to release exactly once (the
///   callers here release each ticket once: on completion, a panic or a
///   drop);
/// - [`release`](Self::release) of a stale or foreign ticket changes
///   nothing and says [`Release::Stale`] (spec I2);
/// - at most one caller is admitted as the probe of a half-open breaker
///   (spec I1), however the word is kept;
/// - the async path gives the same answers as the sync path: a breaker
///   whose answer may need a round trip returns [`Reply::Wait`] from
///   [`acquire_async`](Self::acquire_async) and
///   [`release_async`](Self::release_async) instead of blocking the thread,
///   and keeps [`release_detached`](Self::release_detached) from blocking
///   (it runs in `Drop`). A breaker that always answers at once implements
///   the sync methods only and names [`Never`] as its futures;
/// - an [`Acquiring`](Self::Acquiring) future dropped after its admission
///   went through (a caller cancelled while the round trip was in flight)
///   releases the ticket it would have handed out, with the
///   [`abandon_outcome`](Self::abandon_outcome) or `Ignored`, so that a
///   probe elected for nobody does not hold the breaker until the probe
///   timeout.
///
/// A breaker whose word is in a remote store applies events with
/// [`cell::update_async`](crate::cell::update_async) on an
/// [`AsyncCell`](crate::cell::AsyncCell): the same loop as the local
/// breakers, with the same rules.
pub trait CircuitBreaker {
    /// Proof of admission, released exactly once.
    type Ticket;
    /// The breaker's clock (for a call's duration, and for a rejection's
    /// wait: [`Rejected::retry_after`] is in its ticks).
    type Clock: Clock;
    /// The future of an admission that needs a round trip ([`Never`] for a
    /// breaker that always answers at once).
    type Acquiring: Future<Output = Result<Self::Ticket, Rejected>>;
    /// The future of a release that needs a round trip ([`Never`] for a
    /// breaker that always answers at once).
    type Releasing: Future<Output = Release>;

    /// Asks to make a call: `Ok(ticket)` when admitted, `Err(Rejected)`
    /// (why, and for how long) when the call must not run. May block on a
    /// round trip for a remote breaker; async callers use
    /// [`acquire_async`](Self::acquire_async).
    ///
    /// # Errors
    /// The rejection, when the call is not admitted.
    fn acquire(&self) -> Result<Self::Ticket, Rejected>;

    /// Reports how an admitted call went. A stale or foreign ticket
    /// changes nothing and returns [`Release::Stale`].
    fn release(&self, ticket: Self::Ticket, outcome: Outcome) -> Release;

    /// Reports a failure that says how long to stay open if it trips the
    /// breaker or fails its probe (see
    /// [`Breaker::release_failure_for`]). By default an ordinary failure,
    /// for a breaker with no such open time.
    fn release_failure_for(&self, ticket: Self::Ticket, open_for: u64) -> Release {
        let _ = open_for;
        self.release(ticket, Outcome::Failure)
    }

    /// The current status: a read that stores nothing and reports nothing.
    fn status(&self) -> Status;

    /// The breaker's clock.
    fn clock(&self) -> &Self::Clock;

    /// What a permit dropped without an outcome records (the config's
    /// [`abandon_as`](crate::Config::abandon_as); a failure by default).
    fn abandon_outcome(&self) -> Outcome {
        Outcome::Failure
    }

    /// The breaker's name, for messages and logs: `tripword-std` shows it
    /// in a rejection (`circuit 'payments' open: ...`). `None` (the
    /// default) for a breaker without one. A `'static` string, so that a
    /// rejection that carries it stays `Copy` and costs nothing to make.
    #[inline(always)]
    fn name(&self) -> Option<&'static str> {
        None
    }

    /// Releases with a [`TickVerdict`]: [`release`](Self::release), or
    /// [`release_failure_for`](Self::release_failure_for) for
    /// [`TickVerdict::FailureFor`].
    #[inline(always)]
    fn release_verdict(&self, ticket: Self::Ticket, verdict: TickVerdict) -> Release {
        match verdict {
            TickVerdict::FailureFor(ticks) => self.release_failure_for(ticket, ticks),
            other => self.release(ticket, other.outcome()),
        }
    }

    /// [`acquire`](Self::acquire) without blocking: [`Reply::Ready`] when
    /// the answer is known at once (always, for a local breaker: this
    /// default), [`Reply::Wait`] with the round trip's future otherwise.
    #[inline(always)]
    fn acquire_async(&self) -> Reply<Result<Self::Ticket, Rejected>, Self::Acquiring> {
        Reply::Ready(self.acquire())
    }

    /// [`release_verdict`](Self::release_verdict) without blocking, as
    /// [`acquire_async`](Self::acquire_async).
    #[inline(always)]
    fn release_async(
        &self,
        ticket: Self::Ticket,
        verdict: TickVerdict,
    ) -> Reply<Release, Self::Releasing> {
        Reply::Ready(self.release_verdict(ticket, verdict))
    }

    /// Releases from a place that cannot await and must not block: the
    /// `Drop` of a cancelled call. A remote breaker hands the release to a
    /// task or thread of its own (or counts it locally); by default, the
    /// sync release, which for a local breaker never blocks.
    #[inline(always)]
    fn release_detached(&self, ticket: Self::Ticket, verdict: TickVerdict) {
        let _ = self.release_verdict(ticket, verdict);
    }
}

/// A handle on a breaker is a breaker: `&B` always, and with the `alloc`
/// feature `Arc<B>`, `Rc<B>` and `Box<B>`, so that a tower service or a
/// call future holds whichever handle suits it.
macro_rules! handle_impl {
    ($($handle:ty),*) => {$(
        impl<B: CircuitBreaker + ?Sized> CircuitBreaker for $handle {
            type Ticket = B::Ticket;
            type Clock = B::Clock;
            type Acquiring = B::Acquiring;
            type Releasing = B::Releasing;

            #[inline(always)]
            fn acquire(&self) -> Result<B::Ticket, Rejected> {
                (**self).acquire()
            }
            #[inline(always)]
            fn release(&self, ticket: B::Ticket, outcome: Outcome) -> Release {
                (**self).release(ticket, outcome)
            }
            #[inline(always)]
            fn release_failure_for(&self, ticket: B::Ticket, open_for: u64) -> Release {
                (**self).release_failure_for(ticket, open_for)
            }
            #[inline(always)]
            fn status(&self) -> Status {
                (**self).status()
            }
            #[inline(always)]
            fn clock(&self) -> &B::Clock {
                (**self).clock()
            }
            #[inline(always)]
            fn abandon_outcome(&self) -> Outcome {
                (**self).abandon_outcome()
            }
            #[inline(always)]
            fn name(&self) -> Option<&'static str> {
                (**self).name()
            }
            #[inline(always)]
            fn release_verdict(&self, ticket: B::Ticket, verdict: TickVerdict) -> Release {
                (**self).release_verdict(ticket, verdict)
            }
            #[inline(always)]
            fn acquire_async(&self) -> Reply<Result<B::Ticket, Rejected>, B::Acquiring> {
                (**self).acquire_async()
            }
            #[inline(always)]
            fn release_async(
                &self,
                ticket: B::Ticket,
                verdict: TickVerdict,
            ) -> Reply<Release, B::Releasing> {
                (**self).release_async(ticket, verdict)
            }
            #[inline(always)]
            fn release_detached(&self, ticket: B::Ticket, verdict: TickVerdict) {
                (**self).release_detached(ticket, verdict)
            }
        }
    )*};
}

handle_impl!(&B);
#[cfg(feature = "alloc")]
handle_impl!(alloc::sync::Arc<B>, alloc::rc::Rc<B>, alloc::boxed::Box<B>);

impl<C: Clock, W: Word, O: Observer, P: ConfigSource<W>> CircuitBreaker for Breaker<C, W, O, P> {
    type Ticket = Ticket;
    type Clock = C;
    type Acquiring = Never<Result<Ticket, Rejected>>;
    type Releasing = Never<Release>;

    #[inline(always)]
    fn acquire(&self) -> Result<Ticket, Rejected> {
        Breaker::acquire(self)
    }
    #[inline(always)]
    fn release(&self, ticket: Ticket, outcome: Outcome) -> Release {
        Breaker::release(self, ticket, outcome)
    }
    #[inline(always)]
    fn release_failure_for(&self, ticket: Ticket, open_for: u64) -> Release {
        Breaker::release_failure_for(self, ticket, open_for)
    }
    #[inline(always)]
    fn status(&self) -> Status {
        Breaker::status(self)
    }
    #[inline(always)]
    fn clock(&self) -> &C {
        Breaker::clock(self)
    }
    #[inline(always)]
    fn abandon_outcome(&self) -> Outcome {
        self.config().abandon()
    }
}

impl<C: Clock, W: Word, O: Observer, const N: usize> CircuitBreaker for RateBreaker<C, W, O, N> {
    type Ticket = Ticket;
    type Clock = C;
    type Acquiring = Never<Result<Ticket, Rejected>>;
    type Releasing = Never<Release>;

    #[inline(always)]
    fn acquire(&self) -> Result<Ticket, Rejected> {
        RateBreaker::acquire(self)
    }
    #[inline(always)]
    fn release(&self, ticket: Ticket, outcome: Outcome) -> Release {
        RateBreaker::release(self, ticket, outcome)
    }
    #[inline(always)]
    fn status(&self) -> Status {
        RateBreaker::status(self)
    }
    #[inline(always)]
    fn clock(&self) -> &C {
        self.breaker().clock()
    }
    #[inline(always)]
    fn abandon_outcome(&self) -> Outcome {
        self.breaker().config().abandon()
    }
}

#[cfg(all(test, not(tripword_loom)))]
mod tests;
