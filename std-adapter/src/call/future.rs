//! The call future, [`CallAsync`] (shown in
//! [`tripword_std::future`](crate::future)): the core's guarded future,
//! judged by a [`CallPolicy`](crate::CallPolicy), its output a
//! [`CallError`], or, with the policy's fallback, the fallback's in the
//! rejection's place.

use core::future::{Future, IntoFuture};
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use tripword::Rejected;
use tripword::future::{Guarded, Judge, Phase};
use tripword::kit::{CircuitBreaker, Reply, TickVerdict};

#[cfg(doc)]
use super::error::CallError;
use super::guard::{Pending, StdUnwind};
use super::rejection::Rejection;
use crate::classify::{Classify, IntoVerdict};
use crate::policy::{AsPolicy, OrElse, OrElseFuture, Timing};

/// The clock of breaker (or handle) `H`.
type ClockOf<H> = <H as CircuitBreaker>::Clock;
/// The future of an admission that needs a round trip, for breaker (or
/// handle) `H`.
type AcquiringOf<H> = <H as CircuitBreaker>::Acquiring;

/// A [`CallPolicy`](crate::CallPolicy) (by value, by reference or in an
/// `Arc`) as the core's [`Judge`] of a `Result`, its durations in the
/// ticks of clock `C`.
pub(crate) struct ByPolicy<J, C> {
    policy: J,
    clock: PhantomData<fn() -> C>,
}

impl<J, C> ByPolicy<J, C> {
    #[inline(always)]
    fn new(policy: J) -> Self {
        ByPolicy {
            policy,
            clock: PhantomData,
        }
    }
}

impl<J, C, T, E> Judge<Result<T, E>> for ByPolicy<J, C>
where
    J: AsPolicy,
    J::Classify: Classify<T, E>,
    <J::Classify as Classify<T, E>>::Verdict: IntoVerdict<C>,
    J::Timing: Timing<C>,
{
    #[inline(always)]
    fn timed(&self) -> bool {
        Timing::<C>::threshold(self.policy.policy().slow_threshold()).is_some()
    }
    #[inline(always)]
    fn judge(&self, result: &Result<T, E>, elapsed: Option<u64>) -> TickVerdict {
        self.policy.policy().judge::<T, E, C>(result, elapsed)
    }
    #[inline(always)]
    fn cancel_outcome(&self) -> tripword::Outcome {
        self.policy.policy().cancel_outcome()
    }
}

pin_project! {
    /// A future run through a breaker: see the [module](crate::future) docs. Its
    /// output is `Ok` with the future's value, [`CallError::Inner`] with
    /// its error, or [`CallError::Open`] if the call was not admitted;
    /// with a policy that has a [`fallback`](crate::CallPolicy::fallback),
    /// `Ok` with the value or `Err` with the error, of the future or, for a
    /// call not admitted, of the future the fallback makes.
    ///
    /// The core's [`Guarded`] future, judged by the policy, with
    /// [`StdUnwind`]'s panic handling; its output flattened into
    /// [`CallError`], or into the fallback's output.
    ///
    /// `H` is the breaker, or a handle on it (`&B` from
    /// [`call_async`](crate::BreakerExt::call_async), an `Arc` from
    /// [`new`](Self::new) or a `tower` service): any
    /// [`CircuitBreaker`]. `F` is the protected future, `J` the
    /// [`CallPolicy`](crate::CallPolicy) (by value, by reference or in an
    /// `Arc`).
    ///
    /// A call future whose handle is an `Arc` (a registry's
    /// [`get`](crate::Registry::get)) borrows nothing the protected future
    /// and the policy do not: it can be returned, kept or spawned.
    ///
    /// ```
    /// use std::future::Future;
    /// use tripword_std::future::CallAsync;
    /// use tripword_std::{CallError, CallPolicy, Registry, Settings};
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
    ///     CallAsync::new(hosts.get(host), CallPolicy::new(), fetch(host))
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
    ///
    /// On a breaker whose admission needs a round trip (a remote breaker's
    /// [`Reply::Wait`]), admission is awaited at the first poll, before the
    /// protected future is polled; a release that needs one is awaited
    /// before the output is handed out. Neither blocks the thread.
    #[must_use = "futures do nothing unless polled; dropped, an admitted call records its cancel outcome"]
    pub struct CallAsync<H, F, J, M = F>
    where
        H: CircuitBreaker,
        F: Future,
        J: AsPolicy,
        J::Fallback: OrElse,
    {
        #[pin]
        inner: Guarded<H, F, ByPolicy<J, ClockOf<H>>, StdUnwind, M>,
        // The future the policy's fallback made for a call not admitted,
        // awaited in its place; without a fallback, an `Option` of an
        // uninhabited type: no room, and never `Some`.
        #[pin]
        or_else: Option<<J::Fallback as OrElse>::Made>,
    }
}

impl<H, F, J> CallAsync<H, F, J>
where
    H: CircuitBreaker,
    F: Future,
    J: AsPolicy,
    J::Fallback: OrElse,
{
    /// `future` through the breaker behind `handle`, counted by `policy`:
    /// the call that [`call_async_with`](crate::BreakerExt::call_async_with)
    /// makes on `&self`, on a handle of your choosing. Given an `Arc` (a
    /// registry's [`get`](crate::Registry::get)), the call future owns it,
    /// so that it can be returned from a function, kept in a struct or
    /// spawned (see [`CallAsync`]); the policy as for `call_async_with`: by
    /// value, by reference, or in an `Arc`.
    ///
    /// Admission is decided now, as by
    /// [`call_async`](crate::BreakerExt::call_async).
    #[inline]
    pub fn new(handle: H, policy: J, future: F) -> Self
    where
        J::Timing: Timing<ClockOf<H>>,
    {
        Self::start(handle, policy, move || future)
    }
}

impl<H, F, J, M> CallAsync<H, F, J, M>
where
    H: CircuitBreaker,
    F: Future,
    J: AsPolicy,
    J::Fallback: OrElse,
{
    /// Asks `breaker` now; admitted, makes the protected future with
    /// `make` (if `make` panics, the call is a failure). An admission that
    /// needs a round trip makes the future at once and polls it once
    /// admitted.
    #[inline]
    pub(crate) fn start(breaker: H, policy: J, make: impl FnOnce() -> M) -> Self
    where
        J::Timing: Timing<ClockOf<H>>,
        M: IntoFuture<IntoFuture = F>,
    {
        match breaker.acquire_async() {
            Reply::Ready(Ok(ticket)) => {
                Self::admitted(breaker, ticket, policy, || make().into_future())
            }
            Reply::Ready(Err(rejected)) => Self::rejected_with(breaker, rejected, policy),
            Reply::Wait(acquiring) => Self::admitting(breaker, acquiring, policy, make()),
        }
    }

    /// An admitted call: `ticket` is the admission's; makes the protected
    /// future with `make`.
    #[inline(always)]
    pub(crate) fn admitted(
        breaker: H,
        ticket: <H as CircuitBreaker>::Ticket,
        policy: J,
        make: impl FnOnce() -> F,
    ) -> Self
    where
        J::Timing: Timing<ClockOf<H>>,
    {
        let p = policy.policy();
        let timed = Timing::<ClockOf<H>>::threshold(p.slow_threshold()).is_some();
        // Made before the future: if `make` panics, the drop of `pending`
        // during the unwind records a failure.
        let pending = Pending::new(breaker, ticket, timed, p.cancel_outcome());
        let future = make();
        Self::running(pending, policy, future)
    }

    /// An admitted call whose ticket `pending` already holds (made before
    /// the protected future: by [`admitted`](Self::admitted), or by a
    /// caller that had to wait between the two: the tower layer's, for the
    /// inner service's readiness).
    #[inline(always)]
    pub(crate) fn running(pending: Pending<H>, policy: J, future: F) -> Self {
        CallAsync {
            inner: Guarded::running(pending, ByPolicy::new(policy), future),
            or_else: None,
        }
    }

    /// A call that `breaker` did not admit: ready at once with
    /// [`CallError::Open`].
    #[inline(always)]
    pub(crate) fn rejected_with(breaker: H, rejected: Rejected, policy: J) -> Self {
        CallAsync {
            inner: Guarded::rejected(breaker, rejected, ByPolicy::new(policy)),
            or_else: None,
        }
    }

    /// A call whose admission is in flight; once admitted, `make` becomes
    /// the protected future.
    pub(crate) fn admitting(breaker: H, acquiring: AcquiringOf<H>, policy: J, make: M) -> Self {
        CallAsync {
            inner: Guarded::admitting(breaker, acquiring, ByPolicy::new(policy), make),
            or_else: None,
        }
    }
}

impl<H, F, J, M> CallAsync<H, F, J, M>
where
    H: CircuitBreaker,
    F: Future,
    J: AsPolicy,
    J::Fallback: OrElse,
{
    /// Whether the call was admitted (a rejected call's future is ready at
    /// once with [`CallError::Open`]; one whose admission is still in
    /// flight is not admitted yet).
    pub fn is_admitted(&self) -> bool {
        self.inner.is_admitted()
    }

    /// The rejection, if the call was not admitted (until the future is
    /// polled and hands it out).
    pub fn rejected(&self) -> Option<Rejection> {
        self.inner.rejection().map(|r| self.describe(r))
    }

    /// `rejected` with the clock's tick and the breaker's name.
    #[inline]
    fn describe(&self, rejected: Rejected) -> Rejection {
        let name = self.inner.breaker().and_then(CircuitBreaker::name);
        Rejection::on_clock::<ClockOf<H>>(rejected).named(name)
    }

    /// Where the call through the breaker is (a fallback awaited for a
    /// call not admitted runs past [`Done`](Phase::Done)).
    pub fn phase(&self) -> Phase {
        self.inner.phase()
    }
}

impl<H, F, J, M, T, E> Future for CallAsync<H, F, J, M>
where
    H: CircuitBreaker,
    F: Future<Output = Result<T, E>>,
    M: IntoFuture<IntoFuture = F>,
    J: AsPolicy,
    J::Classify: Classify<T, E>,
    <J::Classify as Classify<T, E>>::Verdict: IntoVerdict<ClockOf<H>>,
    J::Timing: Timing<ClockOf<H>>,
    J::Fallback: OrElseFuture<T, E>,
{
    type Output = <J::Fallback as OrElseFuture<T, E>>::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        // Without a fallback `or_else` is never `Some`: this branch is
        // compiled out.
        if let Some(made) = this.or_else.as_mut().as_pin_mut() {
            return J::Fallback::poll_made(made, cx);
        }
        let rejected = match ready!(this.inner.as_mut().poll(cx)) {
            Ok(result) => return Poll::Ready(J::Fallback::admitted(result)),
            Err(rejected) => rejected,
        };
        let inner = this.inner.as_ref().get_ref();
        let name = inner.breaker().and_then(CircuitBreaker::name);
        let rejection = Rejection::on_clock::<ClockOf<H>>(rejected).named(name);
        match inner.judge().policy.policy().or_else().rejected(rejection) {
            Ok(output) => Poll::Ready(output),
            Err(made) => {
                this.or_else.set(Some(made));
                let made = this.or_else.as_pin_mut().expect("just set");
                J::Fallback::poll_made(made, cx)
            }
        }
    }
}

impl<H, F, J, M> core::fmt::Debug for CallAsync<H, F, J, M>
where
    H: CircuitBreaker,
    F: Future,
    J: AsPolicy,
    J::Fallback: OrElse,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut out = f.debug_struct("CallAsync");
        out.field("state", &format_args!("{}", self.inner.phase().as_str()));
        if let Some(rejected) = self.rejected() {
            out.field("rejected", &rejected);
        }
        if self.or_else.is_some() {
            out.field("fallback", &"running");
        }
        out.finish_non_exhaustive()
    }
}
