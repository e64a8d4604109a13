//! The call futures, [`CallAsync`] and [`CallOrElse`] (shown in
//! [`tripword_std::future`](crate::future)): the core's guarded future,
//! judged by a [`CallPolicy`](crate::CallPolicy), its output a
//! [`CallError`].

use core::future::{Future, IntoFuture};
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use tripword::Rejected;
use tripword::future::{Guarded, Judge, Phase};
use tripword::kit::{CircuitBreaker, Reply, TickVerdict};

use super::error::CallError;
use super::guard::{Pending, StdUnwind};
use super::rejection::Rejection;
use crate::classify::{Classify, IntoVerdict};
use crate::policy::{AsPolicy, Timing};

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
    /// its error, or [`CallError::Open`] if the call was not admitted.
    ///
    /// The core's [`Guarded`] future, judged by the policy, with
    /// [`StdUnwind`]'s panic handling; its output flattened into
    /// [`CallError`].
    ///
    /// `H` is the breaker, or a handle on it (`&B` from
    /// [`call_async`](crate::BreakerExt::call_async), an `Arc` or a
    /// `&'static` reference in a `tower` service): any
    /// [`CircuitBreaker`]. `F` is the protected future, `J` the
    /// [`CallPolicy`](crate::CallPolicy) (by value, by reference or in an
    /// `Arc`).
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
    {
        #[pin]
        inner: Guarded<H, F, ByPolicy<J, ClockOf<H>>, StdUnwind, M>,
    }
}

impl<H, F, J, M> CallAsync<H, F, J, M>
where
    H: CircuitBreaker,
    F: Future,
    J: AsPolicy,
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
        CallAsync {
            inner: Guarded::running(pending, ByPolicy::new(policy), future),
        }
    }

    /// A call that `breaker` did not admit: ready at once with
    /// [`CallError::Open`].
    #[inline(always)]
    pub(crate) fn rejected_with(breaker: H, rejected: Rejected, policy: J) -> Self {
        CallAsync {
            inner: Guarded::rejected(breaker, rejected, ByPolicy::new(policy)),
        }
    }

    /// A call whose admission is in flight; once admitted, `make` becomes
    /// the protected future.
    pub(crate) fn admitting(breaker: H, acquiring: AcquiringOf<H>, policy: J, make: M) -> Self {
        CallAsync {
            inner: Guarded::admitting(breaker, acquiring, ByPolicy::new(policy), make),
        }
    }
}

impl<H, F, J, M> CallAsync<H, F, J, M>
where
    H: CircuitBreaker,
    F: Future,
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

    /// Where the call is.
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
{
    type Output = Result<T, CallError<E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        Poll::Ready(match ready!(this.inner.as_mut().poll(cx)) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(CallError::Inner(e)),
            Err(rejected) => {
                let name = this.inner.as_ref().breaker().and_then(CircuitBreaker::name);
                Err(CallError::Open(
                    Rejection::on_clock::<ClockOf<H>>(rejected).named(name),
                ))
            }
        })
    }
}

impl<H, F, J, M> core::fmt::Debug for CallAsync<H, F, J, M>
where
    H: CircuitBreaker,
    F: Future,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut out = f.debug_struct("CallAsync");
        out.field("state", &format_args!("{}", self.inner.phase().as_str()));
        if let Some(rejected) = self.rejected() {
            out.field("rejected", &rejected);
        }
        out.finish_non_exhaustive()
    }
}

pin_project! {
    /// A [`CallAsync`] with an async fallback: what
    /// [`call_async_or_else`](crate::BreakerExt::call_async_or_else)
    /// returns. Not admitted, it calls the fallback with the [`Rejection`]
    /// and awaits the future it makes; admitted, it is the call, its error
    /// unwrapped from [`CallError::Inner`].
    #[must_use = "futures do nothing unless polled"]
    pub struct CallOrElse<H, F, J, Fb, G>
    where
        H: CircuitBreaker,
        F: Future,
    {
        #[pin]
        call: CallAsync<H, F, J>,
        fallback: Option<Fb>,
        #[pin]
        running: Option<G>,
    }
}

impl<H, F, J, Fb, G> CallOrElse<H, F, J, Fb, G>
where
    H: CircuitBreaker,
    F: Future,
{
    pub(crate) fn new(call: CallAsync<H, F, J>, fallback: Fb) -> Self {
        CallOrElse {
            call,
            fallback: Some(fallback),
            running: None,
        }
    }
}

impl<H, F, J, Fb, G, T, E> Future for CallOrElse<H, F, J, Fb, G>
where
    H: CircuitBreaker,
    F: Future,
    CallAsync<H, F, J>: Future<Output = Result<T, CallError<E>>>,
    Fb: FnOnce(Rejection) -> G,
    G: Future<Output = Result<T, E>>,
{
    type Output = Result<T, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            if let Some(fallback) = this.running.as_mut().as_pin_mut() {
                return fallback.poll(cx);
            }
            match ready!(this.call.as_mut().poll(cx)) {
                Ok(value) => return Poll::Ready(Ok(value)),
                Err(CallError::Inner(e)) => return Poll::Ready(Err(e)),
                Err(CallError::Open(rejected)) => {
                    let fallback = this
                        .fallback
                        .take()
                        .expect("`CallOrElse` polled after completion");
                    this.running.set(Some(fallback(rejected)));
                }
            }
        }
    }
}
