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
//! A breaker that always answers at once, with a state machine of its own
//! or the core's, implements only the sync half, [`LocalBreaker`], makes
//! its rejections with [`Rejected::new`], and is a [`CircuitBreaker`] as
//! [`Local`]`(breaker)`.
//!
//! [`Shadow`]`::new(breaker)` runs any breaker in shadow mode: it decides
//! and reports as it would, and every call is admitted; a switch turns
//! that on and off at run time, the breaker's state kept.
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

use crate::breaker::Breaker;
use crate::clock::Clock;
use crate::config::ConfigSource;
use crate::observer::Observer;
use crate::outcome::Outcome;
use crate::rate::RateBreaker;
use crate::rejected::Rejected;
use crate::status::{Health, Status};
use crate::ticket::{Release, Ticket};
use crate::word::Word;

mod shadow;

pub use shadow::{OnShadow, Shadow, ShadowAcquiring, ShadowObserver, ShadowTicket};

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
/// Implemented by every [`Breaker`] form, [`RateBreaker`], [`Local`] (a
/// [`LocalBreaker`]), [`Shadow`] (any of them in shadow mode), references
/// to them, and the fleet's breakers in `tripword-redis`.
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
///   [`LocalBreaker`] instead, the sync methods only, and is a
///   `CircuitBreaker` as [`Local`]`(breaker)`, whose futures are [`Never`];
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

    /// The state as one value (status, counter, failures, window counts,
    /// wait): a read, for dashboards, health endpoints, and the registries
    /// that forget only [blank](Health::is_blank) breakers. By default
    /// [`Health::of_status`]: a breaker that counts failures overrides it,
    /// or a registry may evict it while `Closed` with failures counted.
    #[inline]
    fn health(&self) -> Health {
        Health::of_status(self.status())
    }

    /// Whether the breaker is [`Status::Open`] now (forced or timed):
    /// calls are rejected without a probe. A read.
    #[inline]
    fn is_open(&self) -> bool {
        self.status() == Status::Open
    }

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
            fn health(&self) -> Health {
                (**self).health()
            }
            #[inline(always)]
            fn is_open(&self) -> bool {
                (**self).is_open()
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

/// A breaker that always answers at once: the sync half of
/// [`CircuitBreaker`], with no futures to name. A breaker with a state
/// machine of its own (a counter behind a lock, a table of its own, a
/// word the core does not know) implements this, builds its rejections with
/// [`Rejected::new`], and is a [`CircuitBreaker`] wrapped in [`Local`]: its
/// async path is [`Reply::Ready`] with the sync answer, its futures
/// [`Never`], so `call_async`, the tower layers and the registries of
/// `tripword-std` take it and it costs what its sync methods cost.
///
/// Its methods are [`CircuitBreaker`]'s of the same names, with the same
/// contract (each admission's ticket is released once, a stale ticket
/// changes nothing, at most one probe per half-open period) and one more
/// rule: no method blocks on a round trip. A breaker whose answers may
/// need one implements [`CircuitBreaker`] itself, with a
/// [`Reply::Wait`] where it must wait.
///
/// Why a wrapper and not a blanket `impl<B: LocalBreaker> CircuitBreaker
/// for B`: `&B`, `Box<B>` and the other handles are breakers for every
/// `B: CircuitBreaker`, and a blanket impl over `LocalBreaker` would
/// overlap that impl wherever a crate implements `LocalBreaker` for a
/// reference or a `Box` of its own type (Rust's coherence rules forbid the
/// two together). `docs/design-kit.md` has the comparison.
///
/// ```
/// use core::cell::Cell;
/// use tripword::clock::ManualClock;
/// use tripword::kit::{CircuitBreaker, Local, LocalBreaker, Reply};
/// use tripword::{Cause, Clock, Outcome, Rejected, Release, Status};
///
/// /// Opens after 2 failures in a row, for 100 ticks; no half-open state.
/// struct Streak { clock: ManualClock, failures: Cell<u32>, open_until: Cell<u64> }
///
/// impl LocalBreaker for Streak {
///     type Ticket = ();
///     type Clock = ManualClock;
///     fn acquire(&self) -> Result<(), Rejected> {
///         let (now, until) = (self.clock.now(), self.open_until.get());
///         if now < until {
///             return Err(Rejected::new(Cause::Open, Some(until - now)));
///         }
///         Ok(())
///     }
///     fn release(&self, _: (), outcome: Outcome) -> Release {
///         match outcome {
///             Outcome::Success => self.failures.set(0),
///             Outcome::Failure => {
///                 self.failures.set(self.failures.get() + 1);
///                 if self.failures.get() >= 2 {
///                     self.failures.set(0);
///                     self.open_until.set(self.clock.now() + 100);
///                 }
///             }
///             Outcome::Ignored => {}
///         }
///         Release::Recorded
///     }
///     fn status(&self) -> Status {
///         if self.clock.now() < self.open_until.get() { Status::Open } else { Status::Closed }
///     }
///     fn clock(&self) -> &ManualClock {
///         &self.clock
///     }
/// }
///
/// let b = Local(Streak { clock: ManualClock::new(0), failures: Cell::new(0), open_until: Cell::new(0) });
/// for _ in 0..2 {
///     let ticket = b.acquire().unwrap();
///     b.release(ticket, Outcome::Failure);
/// }
/// b.clock().advance(40);
/// // A `CircuitBreaker`: its async path answers at once.
/// let Reply::Ready(Err(why)) = b.acquire_async() else { panic!("open") };
/// assert_eq!((why.cause(), why.retry_after()), (Cause::Open, Some(60)));
/// assert_eq!(CircuitBreaker::status(&b), Status::Open);
/// ```
pub trait LocalBreaker {
    /// Proof of admission, released exactly once.
    type Ticket;
    /// The breaker's clock (a rejection's wait is in its ticks).
    type Clock: Clock;

    /// Asks to make a call: `Ok(ticket)` when admitted, `Err(Rejected)`
    /// (made with [`Rejected::new`]) when the call must not run. Never
    /// blocks on a round trip.
    ///
    /// # Errors
    /// The rejection, when the call is not admitted.
    fn acquire(&self) -> Result<Self::Ticket, Rejected>;

    /// Reports how an admitted call went. A stale or foreign ticket
    /// changes nothing and returns [`Release::Stale`].
    fn release(&self, ticket: Self::Ticket, outcome: Outcome) -> Release;

    /// Reports a failure that says how long to stay open if it trips the
    /// breaker or fails its probe. By default an ordinary failure.
    fn release_failure_for(&self, ticket: Self::Ticket, open_for: u64) -> Release {
        let _ = open_for;
        self.release(ticket, Outcome::Failure)
    }

    /// The current status: a read that stores nothing and reports nothing.
    fn status(&self) -> Status;

    /// The state as one value, as [`CircuitBreaker::health`] (by default
    /// [`Health::of_status`]).
    #[inline]
    fn health(&self) -> Health {
        Health::of_status(self.status())
    }

    /// The breaker's clock.
    fn clock(&self) -> &Self::Clock;

    /// What a permit dropped without an outcome records (a failure by
    /// default).
    fn abandon_outcome(&self) -> Outcome {
        Outcome::Failure
    }

    /// The breaker's name, for messages and logs (`None` by default).
    #[inline(always)]
    fn name(&self) -> Option<&'static str> {
        None
    }
}

/// A handle on a local breaker is a local breaker, as for
/// [`CircuitBreaker`]: so `Local(&b)` and, with the `alloc` feature,
/// `Local(Arc::new(b))` (a cheap clone, for a tower layer) are breakers.
macro_rules! local_handle_impl {
    ($($handle:ty),*) => {$(
        impl<B: LocalBreaker + ?Sized> LocalBreaker for $handle {
            type Ticket = B::Ticket;
            type Clock = B::Clock;

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
            fn health(&self) -> Health {
                (**self).health()
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
        }
    )*};
}

local_handle_impl!(&B);
#[cfg(feature = "alloc")]
local_handle_impl!(alloc::sync::Arc<B>, alloc::rc::Rc<B>, alloc::boxed::Box<B>);

/// A [`LocalBreaker`] as a [`CircuitBreaker`]: every sync method the
/// breaker's, the async path [`Reply::Ready`] with the sync answer, the
/// futures [`Never`]. It dereferences to the breaker, so the breaker's own
/// methods work through it; `Local(b)` is `const`, so it can be a `static`.
///
/// ```
/// # use tripword::clock::ManualClock;
/// # use tripword::kit::{CircuitBreaker, Local, LocalBreaker};
/// # use tripword::{Outcome, Rejected, Release, Status};
/// /// Admits every call: the smallest local breaker.
/// struct Always(ManualClock);
/// impl LocalBreaker for Always {
///     type Ticket = ();
///     type Clock = ManualClock;
///     fn acquire(&self) -> Result<(), Rejected> { Ok(()) }
///     fn release(&self, _: (), _: Outcome) -> Release { Release::Recorded }
///     fn status(&self) -> Status { Status::Closed }
///     fn clock(&self) -> &ManualClock { &self.0 }
/// }
///
/// static B: Local<Always> = Local(Always(ManualClock::new(0)));
/// fn any_breaker<B: CircuitBreaker>(b: &B) -> bool { b.acquire().is_ok() }
/// assert!(any_breaker(&B));
/// assert!(any_breaker(&Local(&B.0))); // a handle on it, too
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Local<B>(pub B);

impl<B> core::ops::Deref for Local<B> {
    type Target = B;
    #[inline(always)]
    fn deref(&self) -> &B {
        &self.0
    }
}

impl<B> core::ops::DerefMut for Local<B> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut B {
        &mut self.0
    }
}

impl<B: LocalBreaker> CircuitBreaker for Local<B> {
    type Ticket = B::Ticket;
    type Clock = B::Clock;
    type Acquiring = Never<Result<B::Ticket, Rejected>>;
    type Releasing = Never<Release>;

    #[inline(always)]
    fn acquire(&self) -> Result<B::Ticket, Rejected> {
        self.0.acquire()
    }
    #[inline(always)]
    fn release(&self, ticket: B::Ticket, outcome: Outcome) -> Release {
        self.0.release(ticket, outcome)
    }
    #[inline(always)]
    fn release_failure_for(&self, ticket: B::Ticket, open_for: u64) -> Release {
        self.0.release_failure_for(ticket, open_for)
    }
    #[inline(always)]
    fn status(&self) -> Status {
        self.0.status()
    }
    #[inline(always)]
    fn health(&self) -> Health {
        self.0.health()
    }
    #[inline(always)]
    fn clock(&self) -> &B::Clock {
        self.0.clock()
    }
    #[inline(always)]
    fn abandon_outcome(&self) -> Outcome {
        self.0.abandon_outcome()
    }
    #[inline(always)]
    fn name(&self) -> Option<&'static str> {
        self.0.name()
    }
}

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
    fn health(&self) -> Health {
        Breaker::health(self)
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
    fn health(&self) -> Health {
        RateBreaker::health(self)
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
