//! Named breakers declared in one place, and functions guarded by them
//! (feature `macros`).
//!
//! [`breakers!`] declares each breaker of a service once, by name, with its
//! settings: a `static` [`NamedBreaker`] whose config is checked at compile
//! time (a value out of range does not build). [`#[breaker(NAME)]`](breaker)
//! on a `fn` or an `async fn` returning `Result<T, E>` runs its body
//! through one, as [`BreakerExt::call`](crate::BreakerExt::call) and
//! [`call_async`](crate::BreakerExt::call_async) run a closure or a future:
//! rejected, the body does not run and the function returns
//! `Err(E::from(rejected))`; admitted, `Ok` counts as a success, `Err` as
//! a failure (or as a classifier says), a panic as a failure.
//!
//! ```
//! use tripword::Cause;
//! use tripword_std::prelude::*;
//! use tripword_std::{RealClock, breaker, breakers};
//!
//! breakers! {
//!     /// The payment provider.
//!     pub PAYMENTS: failure_threshold = 3, open_for = 30s, probe_timeout = 10s;
//!     /// The search cluster, backing off to five minutes.
//!     pub SEARCH: failure_threshold = 5, open_for = 1s, exponential_backoff = 5m;
//! }
//!
//! /// What a payment can end in. A rejected call is an error of its own,
//! /// so that callers can fall back.
//! #[derive(Debug, PartialEq)]
//! pub enum PaymentError {
//!     Declined,
//!     Timeout,
//!     Unavailable(Rejection),
//! }
//!
//! impl From<Rejection> for PaymentError {
//!     fn from(rejected: Rejection) -> Self {
//!         PaymentError::Unavailable(rejected)
//!     }
//! }
//!
//! #[breaker(PAYMENTS)]
//! pub fn charge(cents: u64) -> Result<u64, PaymentError> {
//!     if cents == 0 { return Err(PaymentError::Declined); }
//!     if cents > 1_000_000 { return Err(PaymentError::Timeout); } // the provider is struggling
//!     Ok(cents)
//! }
//!
//! assert_eq!(charge(250), Ok(250));
//! for _ in 0..3 {
//!     assert_eq!(charge(5_000_000), Err(PaymentError::Timeout));
//! }
//! // Tripped: the body does not run, the rejection says why and for how long.
//! let Err(PaymentError::Unavailable(rejected)) = charge(250) else { panic!() };
//! assert_eq!(rejected.cause(), Cause::Open);
//! assert!(rejected.retry_after() <= Some(Duration::from_secs(31)));
//! assert!(rejected.to_string().starts_with("circuit 'payments' open: call not admitted (retry after 3"));
//! assert_eq!(PAYMENTS.name(), "payments");
//! assert_eq!(PAYMENTS.status(), Status::Open);
//! ```
//!
//! # The contract of `#[breaker]`
//! - The function keeps its signature, as written, in the docs too; the
//!   body is wrapped.
//! - **`E` must implement `From<`[`Rejection`](crate::call::Rejection)`>`**: a
//!   rejected call returns `Err(E::from(rejected))` without running the
//!   body; the rejection names the breaker and its wait (`circuit
//!   'payments' open: call not admitted (retry after 30.0s)`). An error enum with
//!   a variant for it (above), [`CallError<E>`](crate::CallError) (whose
//!   `Open` is that variant), `Box<dyn Error + Send + Sync>` and
//!   `anyhow::Error` all do.
//! - The body's result is returned as it is; `return` and `?` return from
//!   the guarded body, as they would from the function. It counts as the
//!   policy says: by default `Ok` a success and `Err` a failure; with
//!   `classify = ..`, as that classifier says (any classifier of
//!   [`classify`](crate::classify)); with `policy = ..`, as that
//!   [`CallPolicy`](crate::CallPolicy) says (a slow-call threshold, a
//!   cancel outcome).
//! - A panic in the body (or the classifier) is a failure, and keeps
//!   unwinding.
//! - An `async fn` is admitted when its future is first polled; dropped
//!   before it completes, it records the policy's cancel outcome,
//!   [`Ignored`](tripword::Outcome::Ignored) by default.
//! - The breaker is any expression for a
//!   [`CircuitBreaker`], borrowed for the
//!   call: a declared `static`, `self.breaker`, a
//!   [`Registry`](crate::Registry) entry.
//!
//! # Names
//! Each declared breaker has a name, `PAYMENTS.name()`: the `static`'s name
//! in lower case (`"payments"`), or the declaration's `name = "..."`. An
//! `observer = ..` setting makes its observer from that name, on the
//! breaker's first event (see [`LazyObserver`]), so that its `tracing`
//! events and metrics are labelled with it:
//!
//! ```
//! # #[cfg(all(feature = "tracing", feature = "metrics"))] {
//! use tripword_std::breakers;
//! use tripword_std::observe::{MetricsObserver, TracingObserver};
//!
//! breakers! {
//!     pub PAYMENTS: open_for = 30s, observer = TracingObserver::new;
//!     pub SEARCH: open_for = 1s,
//!         observer = |name| (TracingObserver::new(name), MetricsObserver::new(name));
//! }
//! PAYMENTS.force_open(); // WARN tripword: circuit breaker opened breaker="payments" ...
//! assert_eq!(SEARCH.observer().name(), "search");
//! # }
//! ```
//!
//! # Tests
//! A declaration may name its clock, a unit struct implementing
//! [`RealClock`]: tests move a hand-set clock instead of waiting.
//!
//! ```
//! use std::time::Duration;
//! use tripword::{Clock, Status};
//! use tripword_std::clock::{ManualTime, RealClock};
//! use tripword_std::{BreakerExt, breakers};
//!
//! static TIME: ManualTime = ManualTime::new();
//!
//! /// The test's clock: the microseconds `TIME` was moved to.
//! struct TestClock;
//! impl Clock for TestClock {
//!     const TICK_PERIOD: Option<Duration> = Some(ManualTime::TICK);
//!     fn now(&self) -> u64 { TIME.now() }
//! }
//! impl RealClock for TestClock {
//!     const TICK: Duration = ManualTime::TICK;
//! }
//!
//! breakers! {
//!     FLAKY: failure_threshold = 1, open_for = 10s, clock = TestClock;
//! }
//!
//! let _ = FLAKY.call(|| Err::<(), _>("down"));
//! assert_eq!(FLAKY.status(), Status::Open);
//! TIME.advance(Duration::from_secs(11));
//! assert_eq!(FLAKY.status(), Status::HalfOpen);
//! ```

use core::fmt;
use core::ops::Deref;
use std::sync::OnceLock;

use tripword::kit::{CircuitBreaker, Reply, TickVerdict};
use tripword::{
    Breaker, Health, Observer, Outcome, Rejected, Release, Status, Ticket, Transition, ValidConfig,
    W64, Word,
};

use crate::clock::{MonotonicClock, RealClock};
use crate::settings::Settings;

pub use tripword_macros::{breaker, breakers};

/// A breaker with a name: what [`breakers!`] declares, a `static` on the
/// real clock ([`MonotonicClock`] unless the declaration names another).
///
/// It is its breaker (it dereferences to the [`Breaker`], for
/// [`status`](Breaker::status), [`force_open`](Breaker::force_open),
/// [`config`](Breaker::config)...), and a
/// [`CircuitBreaker`] of its own, so [`BreakerExt`](crate::BreakerExt)'s
/// calls, the `tower` layer and `#[breaker]` take it as they take any
/// breaker. Its [`name`](NamedBreaker::name) is for logs, metrics and
/// health pages.
///
/// Without the macro, a `static` of this type is built by
/// [`NamedBreaker::new`]:
///
/// ```
/// use std::time::Duration;
/// use tripword_std::{BreakerExt, MonotonicClock, NamedBreaker, Settings};
///
/// static PAYMENTS: NamedBreaker = NamedBreaker::new(
///     "payments",
///     Settings::new().failure_threshold(5).open_for(Duration::from_secs(30)),
///     MonotonicClock,
///     (),
/// );
/// assert_eq!(PAYMENTS.name(), "payments");
/// assert_eq!(PAYMENTS.call(|| Ok::<_, ()>(7)), Ok(7));
/// ```
pub struct NamedBreaker<O = (), C = MonotonicClock, W: Word = W64> {
    name: &'static str,
    breaker: Breaker<C, W, O>,
}

impl<O, C: RealClock, W: Word> NamedBreaker<O, C, W> {
    /// A breaker called `name`, configured by `settings` in `C`'s ticks.
    /// `const`: in a `static`, a setting out of range for the word is a
    /// compile error naming the field.
    ///
    /// ```compile_fail,E0080
    /// use tripword_std::{MonotonicClock, NamedBreaker, Settings};
    ///
    /// // The 64-bit word counts at most 65 535 failures.
    /// static TOO_PATIENT: NamedBreaker =
    ///     NamedBreaker::new("too_patient", Settings::new().failure_threshold(70_000), MonotonicClock, ());
    /// ```
    ///
    /// # Panics
    /// If a setting is out of range for word width `W` (at run time; check
    /// with [`Settings::config`] first to get the error as a value).
    pub const fn new(name: &'static str, settings: Settings, clock: C, observer: O) -> Self {
        let config = ValidConfig::new(settings.to_config::<C>());
        NamedBreaker {
            name,
            breaker: Breaker::from_parts(config, clock, observer),
        }
    }
}

impl<O, C, W: Word> NamedBreaker<O, C, W> {
    /// A name for a breaker built otherwise (a core [`Config`](tripword::Config)
    /// with jitter, say).
    ///
    /// ```
    /// use tripword::{Breaker, Config, Jitter};
    /// use tripword_std::{MonotonicClock, NamedBreaker};
    ///
    /// static SEARCH: NamedBreaker = NamedBreaker::from_breaker(
    ///     "search",
    ///     Breaker::from_parts(
    ///         tripword::ValidConfig::new(Config::new().open_for(500_000).jitter(Jitter::Equal { seed: 7 })),
    ///         MonotonicClock,
    ///         (),
    ///     ),
    /// );
    /// assert_eq!(SEARCH.name(), "search");
    /// ```
    pub const fn from_breaker(name: &'static str, breaker: Breaker<C, W, O>) -> Self {
        NamedBreaker { name, breaker }
    }

    /// The breaker's name.
    ///
    /// ```
    /// tripword_std::breakers! { CACHE; }
    /// assert_eq!(CACHE.name(), "cache");
    /// ```
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The breaker (also reached through `Deref`).
    ///
    /// ```
    /// tripword_std::breakers! { CACHE: failure_threshold = 2; }
    /// assert_eq!(CACHE.breaker().config().failure_threshold(), 2);
    /// ```
    pub const fn breaker(&self) -> &Breaker<C, W, O> {
        &self.breaker
    }
}

impl<O, C, W: Word> Deref for NamedBreaker<O, C, W> {
    type Target = Breaker<C, W, O>;

    fn deref(&self) -> &Breaker<C, W, O> {
        &self.breaker
    }
}

impl<O, C, W: Word> fmt::Debug for NamedBreaker<O, C, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamedBreaker")
            .field("name", &self.name)
            .field("breaker", &self.breaker)
            .finish()
    }
}

impl<O: Observer, C: tripword::Clock, W: Word> CircuitBreaker for NamedBreaker<O, C, W> {
    type Ticket = Ticket;
    type Clock = C;
    type Acquiring = <Breaker<C, W, O> as CircuitBreaker>::Acquiring;
    type Releasing = <Breaker<C, W, O> as CircuitBreaker>::Releasing;

    #[inline(always)]
    fn acquire(&self) -> Result<Ticket, Rejected> {
        self.breaker.acquire()
    }
    #[inline(always)]
    fn release(&self, ticket: Ticket, outcome: Outcome) -> Release {
        self.breaker.release(ticket, outcome)
    }
    #[inline(always)]
    fn release_failure_for(&self, ticket: Ticket, open_for: u64) -> Release {
        self.breaker.release_failure_for(ticket, open_for)
    }
    #[inline(always)]
    fn status(&self) -> Status {
        self.breaker.status()
    }
    /// The breaker's: failures counted, trips, a hold (a registry keeps a
    /// breaker that knows something).
    #[inline(always)]
    fn health(&self) -> Health {
        self.breaker.health()
    }
    #[inline(always)]
    fn is_open(&self) -> bool {
        CircuitBreaker::is_open(&self.breaker)
    }
    #[inline(always)]
    fn clock(&self) -> &C {
        self.breaker.clock()
    }
    #[inline(always)]
    fn abandon_outcome(&self) -> Outcome {
        CircuitBreaker::abandon_outcome(&self.breaker)
    }
    /// The declared name: a rejection reads `circuit 'payments' open: ...`.
    #[inline(always)]
    fn name(&self) -> Option<&'static str> {
        Some(self.name)
    }
    #[inline(always)]
    fn release_verdict(&self, ticket: Ticket, verdict: TickVerdict) -> Release {
        self.breaker.release_verdict(ticket, verdict)
    }
    #[inline(always)]
    fn acquire_async(&self) -> Reply<Result<Ticket, Rejected>, Self::Acquiring> {
        self.breaker.acquire_async()
    }
    #[inline(always)]
    fn release_async(
        &self,
        ticket: Ticket,
        verdict: TickVerdict,
    ) -> Reply<Release, Self::Releasing> {
        self.breaker.release_async(ticket, verdict)
    }
    #[inline(always)]
    fn release_detached(&self, ticket: Ticket, verdict: TickVerdict) {
        self.breaker.release_detached(ticket, verdict);
    }
}

/// The observer made from a breaker's name, for a `static` breaker:
/// `TracingObserver` and `MetricsObserver` hold their name on the heap, so
/// they cannot be built in a `static`'s initializer. This one is `const`,
/// and makes the observer with `make(name)` on the breaker's first event
/// (or the first call of [`get`](LazyObserver::get)), once, then passes
/// every event on to it. What [`breakers!`]'s `observer = ..` setting
/// builds.
///
/// Each event costs the observer's own work plus one load and an indirect
/// call. `make` must not use the breaker it observes (its first event
/// would wait on itself).
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use tripword::{Observer, Status, Transition};
/// use tripword_std::{LazyObserver, MonotonicClock, NamedBreaker, Settings};
///
/// static TRIPS: AtomicU32 = AtomicU32::new(0);
///
/// struct CountTrips(&'static str);
/// impl Observer for CountTrips {
///     fn on_transition(&self, t: Transition) {
///         if t.to == Status::Open {
///             TRIPS.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
///
/// static CACHE: NamedBreaker<LazyObserver> = NamedBreaker::new(
///     "cache",
///     Settings::new(),
///     MonotonicClock,
///     LazyObserver::new("cache", |name| Box::new(CountTrips(name))),
/// );
/// CACHE.force_open();
/// assert_eq!(TRIPS.load(Ordering::Relaxed), 1);
/// ```
pub struct LazyObserver {
    name: &'static str,
    make: fn(&'static str) -> Box<dyn Observer + Send + Sync>,
    observer: OnceLock<Box<dyn Observer + Send + Sync>>,
}

impl LazyObserver {
    /// An observer that `make(name)` will make on the first event.
    pub const fn new(
        name: &'static str,
        make: fn(&'static str) -> Box<dyn Observer + Send + Sync>,
    ) -> Self {
        LazyObserver {
            name,
            make,
            observer: OnceLock::new(),
        }
    }

    /// The name the observer is made from.
    ///
    /// ```
    /// use tripword_std::LazyObserver;
    /// static O: LazyObserver = LazyObserver::new("search", |_| Box::new(()));
    /// assert_eq!(O.name(), "search");
    /// ```
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The observer, made now if no event has made it yet.
    pub fn get(&self) -> &(dyn Observer + Send + Sync) {
        &**self.observer.get_or_init(|| (self.make)(self.name))
    }
}

impl fmt::Debug for LazyObserver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LazyObserver")
            .field("name", &self.name)
            .field("made", &self.observer.get().is_some())
            .finish()
    }
}

impl Observer for LazyObserver {
    fn on_transition(&self, transition: Transition) {
        self.get().on_transition(transition);
    }

    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        self.get().on_corrupt_word(raw, counter);
    }

    #[inline]
    fn on_admitted(&self, ticket: &Ticket) {
        self.get().on_admitted(ticket);
    }

    #[inline]
    fn on_rejected(&self, rejected: Rejected) {
        self.get().on_rejected(rejected);
    }

    #[inline]
    fn on_recorded(&self, outcome: Outcome) {
        self.get().on_recorded(outcome);
    }

    #[inline]
    fn on_stale(&self, outcome: Outcome) {
        self.get().on_stale(outcome);
    }
}

/// What the macros' generated code calls: not part of the API, may change
/// in any release.
#[doc(hidden)]
pub mod __private {
    use core::future::Future;

    use tripword::Observer;
    use tripword::kit::CircuitBreaker;

    use crate::call::{BreakerExt, CallError, Rejection};
    use crate::classify::{Classify, IntoVerdict};
    use crate::policy::{CallPolicy, Timing};

    pub use tripword::W64;

    /// A declaration's observer, made from its name and boxed.
    pub fn boxed<O, F>(name: &'static str, make: F) -> Box<dyn Observer + Send + Sync>
    where
        F: FnOnce(&'static str) -> O,
        O: Observer + Send + Sync + 'static,
    {
        Box::new(make(name))
    }

    /// The error type of a function under `#[breaker]`: it must take a
    /// rejection.
    #[diagnostic::on_unimplemented(
        message = "`#[breaker]` returns a rejected call as `Err(E::from(rejected))`, and `{Self}` does not implement `From<tripword_std::Rejection>`",
        label = "this error type cannot hold a rejection",
        note = "give the error a variant for it (`impl From<tripword_std::Rejection> for {Self}`), or return `Result<T, tripword_std::CallError<{Self}>>`"
    )]
    pub trait FromRejected {
        /// The rejection as this error.
        fn from_rejected(rejected: Rejection) -> Self;
    }

    impl<E: From<Rejection>> FromRejected for E {
        #[inline(always)]
        fn from_rejected(rejected: Rejection) -> Self {
            E::from(rejected)
        }
    }

    /// A `#[breaker]` fn's body.
    #[inline]
    pub fn call<B, T, E, K, S, F>(breaker: &B, policy: &CallPolicy<K, S>, body: F) -> Result<T, E>
    where
        B: CircuitBreaker + ?Sized,
        K: Classify<T, E>,
        K::Verdict: IntoVerdict<B::Clock>,
        S: Timing<B::Clock>,
        F: FnOnce() -> Result<T, E>,
        E: FromRejected,
    {
        flatten(breaker.call_with(policy, body))
    }

    /// A `#[breaker]` async fn's body.
    #[inline]
    pub async fn call_async<B, T, E, K, S, F>(
        breaker: &B,
        policy: &CallPolicy<K, S>,
        body: F,
    ) -> Result<T, E>
    where
        B: CircuitBreaker + ?Sized,
        K: Classify<T, E>,
        K::Verdict: IntoVerdict<B::Clock>,
        S: Timing<B::Clock>,
        F: Future<Output = Result<T, E>>,
        E: FromRejected,
    {
        flatten(breaker.call_async_with(policy, body).await)
    }

    /// The body's own result, or the rejection as its error.
    #[inline(always)]
    fn flatten<T, E: FromRejected>(result: Result<T, CallError<E>>) -> Result<T, E> {
        match result {
            Ok(value) => Ok(value),
            Err(CallError::Inner(e)) => Err(e),
            Err(CallError::Open(rejected)) => Err(E::from_rejected(rejected)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use tripword::clock::ManualClock;
    use tripword::{Cause, Config};

    use super::*;
    use crate::call::BreakerExt;

    /// An observer that writes down every event.
    struct Log(&'static str, &'static Mutex<Vec<String>>);
    impl Observer for Log {
        fn on_transition(&self, t: Transition) {
            self.1
                .lock()
                .unwrap()
                .push(format!("{} {:?}", self.0, t.to));
        }
        fn on_corrupt_word(&self, raw: u64, counter: u32) {
            self.1
                .lock()
                .unwrap()
                .push(format!("corrupt {raw} {counter}"));
        }
        fn on_admitted(&self, ticket: &Ticket) {
            self.1
                .lock()
                .unwrap()
                .push(format!("admitted {}", ticket.is_probe()));
        }
        fn on_rejected(&self, rejected: Rejected) {
            self.1
                .lock()
                .unwrap()
                .push(format!("rejected {:?}", rejected.cause()));
        }
        fn on_recorded(&self, outcome: Outcome) {
            self.1.lock().unwrap().push(format!("recorded {outcome:?}"));
        }
        fn on_stale(&self, outcome: Outcome) {
            self.1.lock().unwrap().push(format!("stale {outcome:?}"));
        }
    }

    static EVENTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

    #[test]
    fn lazy_observer_is_made_once_from_the_name_and_passes_every_event_on() {
        static MADE: Mutex<u32> = Mutex::new(0);
        let observer = LazyObserver::new("db", |name| {
            *MADE.lock().unwrap() += 1;
            Box::new(Log(name, &EVENTS))
        });
        assert_eq!(observer.name(), "db");
        assert_eq!(
            format!("{observer:?}"),
            r#"LazyObserver { name: "db", made: false }"#
        );
        let clock = ManualClock::new(0);
        let b = Breaker::from_parts(
            Config::new().failure_threshold(1).check::<W64>().unwrap(),
            &clock,
            &observer,
        );
        let stale = b.acquire().unwrap();
        b.force_open(); // "db Open"; the ticket is now stale
        b.release(stale, Outcome::Success); // "stale Success"
        let _ = b.acquire(); // "rejected ForcedOpen"
        b.force_close(); // "db Closed"
        let t = b.acquire().unwrap(); // "admitted false"
        b.release(t, Outcome::Ignored); // "recorded Ignored"
        observer.on_corrupt_word(7, 3);
        assert_eq!(
            *EVENTS.lock().unwrap(),
            [
                "admitted false",
                "db Open",
                "stale Success",
                "rejected ForcedOpen",
                "db Closed",
                "admitted false",
                "recorded Ignored",
                "corrupt 7 3"
            ]
        );
        assert_eq!(*MADE.lock().unwrap(), 1);
        assert_eq!(
            format!("{observer:?}"),
            r#"LazyObserver { name: "db", made: true }"#
        );
    }

    #[test]
    fn named_breaker_is_its_breaker() {
        static B: NamedBreaker = NamedBreaker::new(
            "inventory",
            Settings::new()
                .failure_threshold(2)
                .open_for(Duration::from_secs(3600))
                .abandon_as(Outcome::Ignored),
            MonotonicClock,
            (),
        );
        assert_eq!(B.name(), "inventory");
        assert_eq!(B.config().failure_threshold(), 2);
        assert_eq!(B.breaker().config().open_for(), 3_600_000_001);
        assert_eq!(CircuitBreaker::abandon_outcome(&B), Outcome::Ignored);
        assert!(
            format!("{B:?}").starts_with(r#"NamedBreaker { name: "inventory", breaker: Breaker {"#)
        );
        // The trait's methods reach the same word as the breaker's own.
        let t = CircuitBreaker::acquire(&B).unwrap();
        assert_eq!(
            CircuitBreaker::release(&B, t, Outcome::Failure),
            Release::Recorded
        );
        let t = CircuitBreaker::acquire(&B).unwrap();
        assert_eq!(
            CircuitBreaker::release_failure_for(&B, t, 5_000_000),
            Release::Recorded
        );
        assert_eq!(CircuitBreaker::status(&B), Status::Open);
        let rejected = CircuitBreaker::acquire(&B).unwrap_err();
        assert_eq!(rejected.cause(), Cause::Open);
        assert!(rejected.retry_after() > Some(4_000_000)); // the failure's own open time
        assert!(matches!(B.acquire_async(), Reply::Ready(Err(_))));
        assert!(std::ptr::eq(CircuitBreaker::clock(&B), B.breaker().clock()));
        B.force_close();
        let t = B.breaker().acquire().unwrap();
        assert!(matches!(
            B.release_async(t, TickVerdict::Failure),
            Reply::Ready(Release::Recorded)
        ));
        let t = B.breaker().acquire().unwrap();
        assert_eq!(
            B.release_verdict(t, TickVerdict::Ignored),
            Release::Recorded
        );
        let t = B.breaker().acquire().unwrap();
        B.release_detached(t, TickVerdict::Failure);
        assert_eq!(B.status(), Status::Open); // two failures in a row
    }

    #[test]
    fn the_helpers_return_the_rejection_as_the_error() {
        #[derive(Debug, PartialEq)]
        enum E {
            Down,
            Open(Cause),
        }
        impl From<crate::call::Rejection> for E {
            fn from(r: crate::call::Rejection) -> Self {
                E::Open(r.cause())
            }
        }
        let clock = ManualClock::new(0);
        let b = Breaker::new(Config::new().failure_threshold(1), &clock);
        let policy = crate::policy::CallPolicy::new();
        assert_eq!(__private::call(&b, &policy, || Ok::<_, E>(1)), Ok(1));
        assert_eq!(
            __private::call(&b, &policy, || Err::<u8, _>(E::Down)),
            Err(E::Down)
        );
        let mut ran = false;
        let r = __private::call(&b, &policy, || {
            ran = true;
            Ok::<_, E>(1)
        });
        assert_eq!((r, ran), (Err(E::Open(Cause::Open)), false));
        let r = b.call(|| Ok::<_, E>(1));
        assert!(r.unwrap_err().is_open());
    }
}
