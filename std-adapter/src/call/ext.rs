//! [`BreakerExt`], the call forms on any breaker, and [`CallResult`], what
//! a closure given to [`BreakerExt::call`] returns.

use core::future::Future;
use std::sync::Arc;

#[cfg(doc)]
use tripword::Breaker;
use tripword::Outcome;
use tripword::kit::CircuitBreaker;

use super::error::CallError;
use super::future::{CallAsync, CallOrElse};
use super::guard::Pending;
use super::rejection::Rejection;
use super::sealed::Sealed;
use crate::classify::{Classify, IntoVerdict};
use crate::policy::{AsPolicy, CallPolicy, Timing};

/// What a closure given to [`BreakerExt::call`] returns: a `Result`. Sealed,
/// so that a closure returning anything else, a future above all, is a
/// compile error that points at
/// [`call_async`](BreakerExt::call_async), instead of rustc's suggestion to
/// wrap the future in `Ok(..)`, which would record a success before the
/// future has even run:
///
/// ```compile_fail,E0277
/// use tripword::{Breaker, Config};
/// use tripword::clock::ManualClock;
/// use tripword_std::BreakerExt;
///
/// let clock = ManualClock::new(0);
/// let b = Breaker::new(Config::new(), &clock);
/// // error[E0277]: `call` runs a closure that returns a `Result`, and `{async block}` is not one
/// let _ = b.call(|| async { Ok::<u32, ()>(1) });
/// ```
///
/// The right form admits the call, awaits the future inside the breaker, and
/// records how it went:
///
/// ```
/// # use tripword::{Breaker, Config};
/// # use tripword::clock::ManualClock;
/// # use tripword_std::BreakerExt;
/// # let clock = ManualClock::new(0);
/// # let b = Breaker::new(Config::new(), &clock);
/// let call = b.call_async(async { Ok::<u32, ()>(1) });
/// # let _ = call;
/// ```
#[diagnostic::on_unimplemented(
    message = "`call` runs a closure that returns a `Result`, and `{Self}` is not one",
    label = "the closure given to `call` must return a `Result<T, E>`",
    note = "to run a future through the breaker, use `call_async(future)`: `call(|| Ok(future))` would record a success before the future runs"
)]
pub trait CallResult: Sealed {
    /// The `Ok` type.
    type Value;
    /// The `Err` type.
    type Error;
    /// The result.
    fn into_result(self) -> Result<Self::Value, Self::Error>;
}

impl<T, E> CallResult for Result<T, E> {
    type Value = T;
    type Error = E;
    #[inline(always)]
    fn into_result(self) -> Result<T, E> {
        self
    }
}

/// Runs closures and futures through any [`CircuitBreaker`]: a [`Breaker`]
/// of any form (any clock, word width, observer and config source: inline,
/// a [`StaticBreaker`](tripword::StaticBreaker)'s `static`, a
/// [`ConstBreaker`](tripword::ConstBreaker)'s constant), a
/// [`RateBreaker`](tripword::rate::RateBreaker), a registry's
/// [`Entry`](crate::Entry), the fleet's breakers, or a breaker of your own
/// crate (`docs/spec.md`, "Kit").
///
/// ```
/// use tripword::clock::ManualClock;
/// use tripword::{Breaker, Config};
/// use tripword_std::BreakerExt; // brings `call` into scope
///
/// let clock = ManualClock::new(0);
/// let b = Breaker::new(Config::new(), &clock);
/// assert_eq!(b.call(|| "42".parse::<u32>()), Ok(42));
/// ```
///
/// Every method asks the breaker first: not admitted, the function is not
/// run (the future is dropped unpolled) and the result is
/// [`CallError::Open`]. Admitted, exactly one outcome is recorded: the
/// classified result, a failure if the function, the future or the
/// classifier panics (the panic goes on), or, for a future dropped before it
/// completes, the policy's cancel outcome ([`Ignored`](Outcome::Ignored) by
/// default; see `docs/services.md`, "Cancellation").
pub trait BreakerExt: CircuitBreaker {
    /// Runs `f` if the breaker admits the call: `Ok` is recorded as a
    /// success, `Err` as a failure, a panic as a failure (and the panic keeps
    /// unwinding). Not admitted, `f` is not called and the result is
    /// [`CallError::Open`]. `f` must return a `Result`; for a future, use
    /// [`call_async`](BreakerExt::call_async) (see [`CallResult`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::Status;
    /// use tripword_std::{BreakerExt, CallError, Settings};
    ///
    /// let b = Settings::new().failure_threshold(1).open_for(Duration::from_secs(60)).build()?;
    /// let r = b.call(|| std::fs::read("/no/such/file"));
    /// assert!(matches!(r, Err(CallError::Inner(_))));
    /// assert_eq!(b.status(), Status::Open);
    /// assert!(b.call(|| std::fs::read("/no/such/file")).unwrap_err().is_open());
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    #[inline]
    fn call<T, E, R, F>(&self, f: F) -> Result<T, CallError<E>>
    where
        F: FnOnce() -> R,
        R: CallResult<Value = T, Error = E>,
    {
        self.call_with(&CallPolicy::new(), f)
    }

    /// Like [`call`](BreakerExt::call), but `classify` decides what the
    /// result counts as: an [`Outcome`], or a
    /// [`Verdict`](crate::classify::Verdict) that may carry an open time of
    /// its own. A panic, in `f` or in `classify`, is still a failure.
    ///
    /// ```
    /// use tripword::{Outcome, Status};
    /// use tripword_std::{BreakerExt, CallError, Settings};
    ///
    /// let b = Settings::new().failure_threshold(1).build()?;
    /// let not_found_is_fine = |r: &Result<(), u16>| match r {
    ///     Ok(()) => Outcome::Success,
    ///     Err(404) => Outcome::Ignored,
    ///     Err(_) => Outcome::Failure,
    /// };
    /// let r = b.call_classified(not_found_is_fine, || Err(404));
    /// assert_eq!(r, Err(CallError::Inner(404)));
    /// assert_eq!(b.status(), Status::Closed); // ignored: no count
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    #[inline]
    fn call_classified<T, E, V, K, R, F>(&self, classify: K, f: F) -> Result<T, CallError<E>>
    where
        K: Fn(&Result<T, E>) -> V,
        V: IntoVerdict<Self::Clock>,
        F: FnOnce() -> R,
        R: CallResult<Value = T, Error = E>,
    {
        self.call_with(&CallPolicy::new().classify(classify), f)
    }

    /// Like [`call`](BreakerExt::call), counted by `policy`: its classifier
    /// and its slow-call threshold (see [`CallPolicy`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::Status;
    /// use tripword_std::clock::ManualTime;
    /// use tripword_std::{BreakerExt, CallPolicy, Settings};
    ///
    /// let clock = ManualTime::new();
    /// let b: tripword::Breaker<&ManualTime> = Settings::new().failure_threshold(1).build_on(&clock, ())?;
    /// let policy = CallPolicy::new().slow_after(Duration::from_millis(100));
    /// let r = b.call_with(&policy, || {
    ///     clock.advance(Duration::from_millis(150)); // a slow success
    ///     Ok::<_, ()>("late")
    /// });
    /// assert_eq!(r, Ok("late"));
    /// assert_eq!(b.status(), Status::Open); // counted as a failure
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    #[inline]
    fn call_with<T, E, K, S, R, F>(
        &self,
        policy: &CallPolicy<K, S>,
        f: F,
    ) -> Result<T, CallError<E>>
    where
        K: Classify<T, E>,
        K::Verdict: IntoVerdict<Self::Clock>,
        S: Timing<Self::Clock>,
        F: FnOnce() -> R,
        R: CallResult<Value = T, Error = E>,
    {
        let ticket = match self.acquire() {
            Ok(ticket) => ticket,
            Err(rejected) => return Err(CallError::Open(Rejection::of(self, rejected))),
        };
        let timed = Timing::<Self::Clock>::threshold(policy.slow_threshold()).is_some();
        // A call that ends by returning is settled below; one that panics,
        // in `f` or in the classifier, drops `pending` while unwinding: a
        // failure. It cannot end any other way, so the outcome for a drop
        // without a panic (the breaker's abandon outcome for a permit) is
        // never used here, and not read.
        let mut pending = Pending::new(self, ticket, timed, Outcome::Failure);
        let result = f().into_result();
        let verdict = policy.judge::<T, E, Self::Clock>(&result, pending.elapsed());
        pending.settle(verdict);
        result.map_err(CallError::Inner)
    }

    /// Runs `f` if the breaker admits the call; otherwise runs `fallback`
    /// with the [`Rejection`] (its cause and wait), and returns what it
    /// returns. Counted as [`call`](BreakerExt::call) counts.
    ///
    /// ```
    /// use tripword::{Breaker, Config};
    /// use tripword::clock::ManualClock;
    /// use tripword_std::BreakerExt;
    ///
    /// let clock = ManualClock::new(0);
    /// let b = Breaker::new(Config::new().failure_threshold(1).open_for(100), &clock);
    /// let fetch = || Err::<&str, _>("down");
    /// assert_eq!(b.call_or_else(fetch, |_| Ok("cached")), Err("down")); // trips
    /// let stale = b.call_or_else(fetch, |open| {
    ///     assert_eq!(open.retry_after_ticks(), Some(100));
    ///     Ok("cached")
    /// });
    /// assert_eq!(stale, Ok("cached"));
    /// ```
    #[inline]
    fn call_or_else<T, E, R, F, G>(&self, f: F, fallback: G) -> Result<T, E>
    where
        F: FnOnce() -> R,
        R: CallResult<Value = T, Error = E>,
        G: FnOnce(Rejection) -> Result<T, E>,
    {
        match self.call(f) {
            Ok(value) => Ok(value),
            Err(CallError::Inner(e)) => Err(e),
            Err(CallError::Open(rejected)) => fallback(rejected),
        }
    }

    /// Runs `future` through the breaker. Admission is decided **now**,
    /// before `future` is first polled: rejected, `future` is dropped
    /// unpolled and the returned future is ready with [`CallError::Open`].
    /// Admitted, the outcome is recorded exactly once, when `future`
    /// completes: `Ok` a success, `Err` a failure, a panic while it is
    /// polled a failure (the panic goes on). Dropped before it completes,
    /// the call is *cancelled* and records [`Outcome::Ignored`] (a caller
    /// that went away is no evidence that the dependency is down; set
    /// another outcome with [`CallPolicy::on_cancel`] and
    /// [`call_async_with`](BreakerExt::call_async_with)). A deadline is a
    /// failure: put it inside, with
    /// `tokio::timeout` (feature `tokio`).
    ///
    /// ```
    /// use std::future::{Future, ready};
    /// use std::pin::pin;
    /// use std::task::{Context, Poll, Waker};
    /// use tripword::{Breaker, Config, Status};
    /// use tripword::clock::ManualClock;
    /// use tripword_std::BreakerExt;
    ///
    /// let clock = ManualClock::new(0);
    /// let b = Breaker::new(Config::new().failure_threshold(1), &clock);
    /// let call = pin!(b.call_async(ready(Err::<(), _>("down"))));
    /// let mut cx = Context::from_waker(Waker::noop());
    /// assert!(matches!(call.poll(&mut cx), Poll::Ready(Err(_))));
    /// assert_eq!(b.status(), Status::Open);
    ///
    /// // Rejected at once: the future is never polled.
    /// let call = b.call_async(async { unreachable!("not polled") as Result<(), ()> });
    /// assert!(matches!(pin!(call).poll(&mut cx), Poll::Ready(Err(e)) if e.is_open()));
    /// ```
    #[inline]
    fn call_async<T, E, F>(&self, future: F) -> CallAsync<&Self, F, CallPolicy>
    where
        F: Future<Output = Result<T, E>>,
    {
        CallAsync::start(self, CallPolicy::new(), move || future)
    }

    /// Like [`call_async`](BreakerExt::call_async), but `classify` decides
    /// what the result counts as (see
    /// [`call_classified`](BreakerExt::call_classified)).
    #[inline]
    fn call_async_classified<T, E, V, K, F>(
        &self,
        classify: K,
        future: F,
    ) -> CallAsync<&Self, F, CallPolicy<K>>
    where
        K: Fn(&Result<T, E>) -> V,
        V: IntoVerdict<Self::Clock>,
        F: Future<Output = Result<T, E>>,
    {
        CallAsync::start(self, CallPolicy::new().classify(classify), move || future)
    }

    /// Like [`call_async`](BreakerExt::call_async), counted by `policy`:
    /// its classifier, its slow-call threshold and its cancel outcome.
    #[inline]
    fn call_async_with<'p, T, E, K, S, F>(
        &self,
        policy: &'p CallPolicy<K, S>,
        future: F,
    ) -> CallAsync<&Self, F, &'p CallPolicy<K, S>>
    where
        K: Classify<T, E>,
        K::Verdict: IntoVerdict<Self::Clock>,
        S: Timing<Self::Clock>,
        F: Future<Output = Result<T, E>>,
    {
        CallAsync::start(self, policy, move || future)
    }

    /// Runs `future` through the breaker (as
    /// [`call_async`](BreakerExt::call_async)); not admitted, awaits the
    /// future `fallback` makes from the [`Rejection`] instead.
    #[inline]
    fn call_async_or_else<T, E, F, G, Fb>(
        &self,
        future: F,
        fallback: Fb,
    ) -> CallOrElse<&Self, F, CallPolicy, Fb, G>
    where
        F: Future<Output = Result<T, E>>,
        Fb: FnOnce(Rejection) -> G,
        G: Future<Output = Result<T, E>>,
    {
        CallOrElse::new(self.call_async(future), fallback)
    }

    /// Like [`call_async`](BreakerExt::call_async), but the call future
    /// owns its handle on the breaker, an [`Arc`], instead of borrowing
    /// it: it borrows nothing the protected future does not, so it can be
    /// returned from a function, kept in a struct, or spawned. The handle
    /// from a registry, [`Registry::get`](crate::Registry::get), is such an
    /// `Arc` (a closure given to [`Registry::with`](crate::Registry::with)
    /// cannot return a call future, which would borrow the entry).
    ///
    /// ```
    /// use std::future::Future;
    /// use tripword_std::{BreakerExt, CallError, Registry, Settings};
    ///
    /// async fn fetch(host: &str) -> Result<usize, std::io::Error> {
    ///     Ok(host.len()) // a request to `host` here
    /// }
    ///
    /// /// The call through `host`'s breaker, as a future that owns its handle.
    /// fn fetch_through(
    ///     hosts: &Registry<String>,
    ///     host: &'static str,
    /// ) -> impl Future<Output = Result<usize, CallError<std::io::Error>>> + Send + 'static {
    ///     hosts.get(host).call_async_owned(fetch(host))
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let hosts: Registry<String> = Registry::from_settings(&Settings::new().into())?;
    /// let task = tokio::spawn(fetch_through(&hosts, "db-1.internal"));
    /// assert_eq!(task.await??, 13);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    fn call_async_owned<T, E, F>(self: Arc<Self>, future: F) -> CallAsync<Arc<Self>, F, CallPolicy>
    where
        F: Future<Output = Result<T, E>>,
    {
        CallAsync::start(self, CallPolicy::new(), move || future)
    }

    /// Like [`call_async_owned`](BreakerExt::call_async_owned), counted by
    /// `policy`, which the call future owns too: a [`CallPolicy`] by value,
    /// in an [`Arc`], or a `&'static` one.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tripword_std::{BreakerExt, CallPolicy, Outcome, Settings, Status};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let breaker = Arc::new(Settings::new().failure_threshold(1).build()?);
    /// let policy = Arc::new(CallPolicy::new().on_cancel(Outcome::Failure));
    /// let call = breaker.clone().call_async_with_owned(policy, std::future::pending::<Result<(), ()>>());
    /// drop(call); // cancelled: a failure, by this policy
    /// assert_eq!(breaker.status(), Status::Open);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    fn call_async_with_owned<T, E, J, F>(
        self: Arc<Self>,
        policy: J,
        future: F,
    ) -> CallAsync<Arc<Self>, F, J>
    where
        J: AsPolicy,
        J::Classify: Classify<T, E>,
        <J::Classify as Classify<T, E>>::Verdict: IntoVerdict<Self::Clock>,
        J::Timing: Timing<Self::Clock>,
        F: Future<Output = Result<T, E>>,
    {
        CallAsync::start(self, policy, move || future)
    }
}

impl<B: CircuitBreaker + ?Sized> BreakerExt for B {}
