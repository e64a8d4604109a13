//! [`BreakerExt`], the call forms on any breaker, and [`CallResult`], what
//! a closure given to [`BreakerExt::call`] returns.

use core::future::Future;

#[cfg(doc)]
use tripword::Breaker;
use tripword::Outcome;
use tripword::kit::CircuitBreaker;

use super::error::CallError;
use super::future::CallAsync;
use super::guard::Pending;
use super::rejection::Rejection;
use super::sealed::Sealed;
use crate::classify::{Classify, IntoVerdict};
use crate::policy::{AsPolicy, CallPolicy, OrElseCall, OrElseFuture, Timing};

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
/// Two forms, a closure ([`call`](Self::call)) and a future
/// ([`call_async`](Self::call_async)), each also with a [`CallPolicy`]
/// ([`call_with`](Self::call_with), [`call_async_with`](Self::call_async_with)):
/// the policy holds everything else a call can be told (its classifier,
/// slow-call threshold, cancel outcome and fallback). A call future that
/// owns its handle on the breaker, to be spawned, is
/// [`CallAsync::new`] on an `Arc`.
///
/// Every form asks the breaker first: not admitted, the function is not
/// run (the future is dropped unpolled) and the result is
/// [`CallError::Open`], or the policy's fallback's. Admitted, exactly one
/// outcome is recorded: the classified result, a failure if the function,
/// the future or the classifier panics (the panic goes on), or, for a
/// future dropped before it completes, the policy's cancel outcome
/// ([`Ignored`](Outcome::Ignored) by default; see `docs/services.md`,
/// "Cancellation").
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
        self.call_with(CallPolicy::new(), f)
    }

    /// Like [`call`](BreakerExt::call), by `policy` (a [`CallPolicy`] by
    /// value, by reference or in an `Arc`): its classifier decides what the
    /// result counts as (an [`Outcome`], or a
    /// [`Verdict`](crate::classify::Verdict) that may carry an open time of
    /// its own; a panic in it is a failure), a success slower than its
    /// threshold is a failure, and its
    /// [`fallback`](CallPolicy::fallback), if it has one, answers a call
    /// not admitted: the result is then `Result<T, E>`, the fallback's
    /// `Result` in place of [`CallError::Open`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::{Outcome, Status};
    /// use tripword_std::clock::ManualTime;
    /// use tripword_std::{BreakerExt, CallError, CallPolicy, Settings};
    ///
    /// let clock = ManualTime::new();
    /// let b: tripword::Breaker<&ManualTime> = Settings::new().failure_threshold(1).build_on(&clock, ())?;
    ///
    /// // A classifier: a 404 is no evidence that the service is down.
    /// let not_found_is_fine = CallPolicy::new().classify(|r: &Result<(), u16>| match r {
    ///     Ok(()) => Outcome::Success,
    ///     Err(404) => Outcome::Ignored,
    ///     Err(_) => Outcome::Failure,
    /// });
    /// assert_eq!(b.call_with(&not_found_is_fine, || Err(404)), Err(CallError::Inner(404)));
    /// assert_eq!(b.status(), Status::Closed); // ignored: no count
    ///
    /// // A slow-call threshold: a success that took 150 ms is a failure.
    /// let policy = CallPolicy::new().slow_after(Duration::from_millis(100));
    /// let r = b.call_with(&policy, || {
    ///     clock.advance(Duration::from_millis(150));
    ///     Ok::<_, ()>("late")
    /// });
    /// assert_eq!(r, Ok("late"));
    /// assert_eq!(b.status(), Status::Open); // counted as a failure
    ///
    /// // A fallback: open, the call is answered from a cache.
    /// let cached = CallPolicy::new().fallback(|_rejection| Ok::<_, ()>("cached"));
    /// assert_eq!(b.call_with(&cached, || Ok("fresh")), Ok("cached"));
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    #[inline]
    fn call_with<T, E, J, R, F>(&self, policy: J, f: F) -> <J::Fallback as OrElseCall<T, E>>::Output
    where
        J: AsPolicy,
        J::Classify: Classify<T, E>,
        <J::Classify as Classify<T, E>>::Verdict: IntoVerdict<Self::Clock>,
        J::Timing: Timing<Self::Clock>,
        J::Fallback: OrElseCall<T, E>,
        F: FnOnce() -> R,
        R: CallResult<Value = T, Error = E>,
    {
        let policy = policy.policy();
        let ticket = match self.acquire() {
            Ok(ticket) => ticket,
            Err(rejected) => return policy.or_else().rejected(Rejection::of(self, rejected)),
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
        J::Fallback::admitted(result)
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
    /// The call future borrows the breaker; for one that owns an `Arc` of
    /// it (a registry's [`get`](crate::Registry::get)), to return or spawn,
    /// make it with [`CallAsync::new`].
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
        CallAsync::new(self, CallPolicy::new(), future)
    }

    /// Like [`call_async`](BreakerExt::call_async), by `policy` (a
    /// [`CallPolicy`] by value, by reference or in an `Arc`): its
    /// classifier, its slow-call threshold, its cancel outcome, and its
    /// [`fallback`](CallPolicy::fallback), which for a future makes a
    /// future, awaited in the place of a call not admitted (the output is
    /// then `Result<T, E>`).
    ///
    /// ```
    /// use std::future::ready;
    /// use tripword::{Outcome, Status};
    /// use tripword_std::{BreakerExt, CallPolicy, Settings};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let b = Settings::new().failure_threshold(1).build()?;
    /// let policy = CallPolicy::new()
    ///     .on_cancel(Outcome::Failure)
    ///     .fallback(|_rejection| async { Ok::<_, ()>("cached") });
    /// // Admitted: the future's own output.
    /// assert_eq!(b.call_async_with(&policy, ready(Ok("fresh"))).await, Ok("fresh"));
    /// // Cancelled: a failure, by this policy; the circuit opens.
    /// drop(b.call_async_with(&policy, std::future::pending()));
    /// assert_eq!(b.status(), Status::Open);
    /// // Not admitted: the fallback's future answers.
    /// assert_eq!(b.call_async_with(&policy, ready(Ok("fresh"))).await, Ok("cached"));
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    fn call_async_with<T, E, J, F>(&self, policy: J, future: F) -> CallAsync<&Self, F, J>
    where
        J: AsPolicy,
        J::Classify: Classify<T, E>,
        <J::Classify as Classify<T, E>>::Verdict: IntoVerdict<Self::Clock>,
        J::Timing: Timing<Self::Clock>,
        J::Fallback: OrElseFuture<T, E>,
        F: Future<Output = Result<T, E>>,
    {
        CallAsync::new(self, policy, future)
    }
}

impl<B: CircuitBreaker + ?Sized> BreakerExt for B {}
