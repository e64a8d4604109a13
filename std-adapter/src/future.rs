//! Futures through a breaker: [`CallAsync`], what
//! [`BreakerExt::call_async`](crate::BreakerExt::call_async) returns and the
//! `tower` service's response future, and [`CallOrElse`],
//! a call with an async fallback.
//!
//! Admission is decided when the call is made, before the protected future
//! is first polled. The outcome is recorded exactly once: when the future
//! completes (classified by the [`CallPolicy`](crate::CallPolicy)), when a
//! poll of it or its classification panics (a failure, and the panic goes
//! on), or when the call future is dropped before it completes (the
//! policy's cancel outcome, [`Ignored`](tripword::Outcome::Ignored) by
//! default; a failure if the thread is panicking).

use core::future::Future;
use core::ops::Deref;
use core::pin::Pin;
use core::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use tripword::Rejected;

use crate::call::{AnyBreaker, CallError, Rejection};
use crate::classify::{Classify, IntoVerdict};
use crate::guard::{Pending, Unwinding};
use crate::policy::{AsPolicy, Timing};

/// The clock of the breaker behind handle `H`.
type ClockOf<H> = <<H as Deref>::Target as AnyBreaker>::Clock;

pin_project! {
    /// A future run through a breaker: see the [module](self) docs. Its
    /// output is `Ok` with the future's value, [`CallError::Inner`] with
    /// its error, or [`CallError::Open`] if the call was not admitted.
    ///
    /// `H` is the handle on the breaker (`&Breaker` from
    /// [`call_async`](crate::BreakerExt::call_async), an `Arc` or a
    /// `&'static` reference in a `tower` service), `F` the
    /// protected future, `J` the [`CallPolicy`](crate::CallPolicy) (by
    /// value, by reference or in an `Arc`).
    #[must_use = "futures do nothing unless polled; dropped, an admitted call records its cancel outcome"]
    pub struct CallAsync<H, F, J>
    where
        H: Deref,
        H::Target: AnyBreaker,
    {
        #[pin]
        future: Option<F>,
        // Both `Some` while an admitted call runs; `pending` is settled
        // (and `future` dropped) when it completes.
        pending: Option<Pending<H>>,
        rejected: Option<Rejected>,
        policy: J,
    }
}

impl<H, F, J> CallAsync<H, F, J>
where
    H: Deref,
    H::Target: AnyBreaker,
    J: AsPolicy,
{
    /// Asks `breaker` now; admitted, makes the protected future with
    /// `make` (if `make` panics, the call is a failure).
    #[inline]
    pub(crate) fn start(breaker: H, policy: J, make: impl FnOnce() -> F) -> Self
    where
        J::Timing: Timing<ClockOf<H>>,
    {
        match breaker.admit_ticket() {
            Ok(ticket) => {
                let p = policy.policy();
                let timed = p.slow_threshold().threshold().is_some();
                let pending = Pending::new(breaker, ticket, timed, p.cancel_outcome());
                let future = make();
                CallAsync {
                    future: Some(future),
                    pending: Some(pending),
                    rejected: None,
                    policy,
                }
            }
            Err(rejected) => CallAsync {
                future: None,
                pending: None,
                rejected: Some(rejected),
                policy,
            },
        }
    }

    /// Whether the call was admitted (a rejected call's future is ready at
    /// once with [`CallError::Open`]).
    pub fn is_admitted(&self) -> bool {
        self.pending.is_some()
    }

    /// The rejection, if the call was not admitted (until the future is
    /// polled and hands it out).
    pub fn rejected(&self) -> Option<Rejected> {
        self.rejected
    }
}

impl<H, F, J, T, E> Future for CallAsync<H, F, J>
where
    H: Deref,
    H::Target: AnyBreaker,
    F: Future<Output = Result<T, E>>,
    J: AsPolicy,
    J::Classify: Classify<T, E>,
    <J::Classify as Classify<T, E>>::Verdict: IntoVerdict<ClockOf<H>>,
    J::Timing: Timing<ClockOf<H>>,
{
    type Output = Result<T, CallError<E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let (Some(future), Some(pending)) = (this.future.as_mut().as_pin_mut(), this.pending)
        else {
            return match this.rejected.take() {
                Some(rejected) => Poll::Ready(Err(CallError::Open(rejected))),
                None => panic!("`CallAsync` polled after completion"),
            };
        };
        // Armed while the protected future is polled and its result
        // classified: a panic in either records a failure.
        // Disarmed with `forget` on the paths that did not unwind, so a
        // completed or pending poll pays no `thread::panicking()` check.
        let guard = Unwinding(pending);
        let result = match future.poll(cx) {
            Poll::Ready(result) => result,
            Poll::Pending => {
                core::mem::forget(guard);
                return Poll::Pending;
            }
        };
        let verdict = this
            .policy
            .policy()
            .judge::<T, E, ClockOf<H>>(&result, guard.0.elapsed());
        guard.0.settle(verdict);
        core::mem::forget(guard);
        this.future.set(None);
        Poll::Ready(result.map_err(CallError::Inner))
    }
}

impl<H, F, J> core::fmt::Debug for CallAsync<H, F, J>
where
    H: Deref,
    H::Target: AnyBreaker,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CallAsync")
            .field("admitted", &self.pending.is_some())
            .field("running", &self.future.is_some())
            .field("rejected", &self.rejected)
            .finish_non_exhaustive()
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
        H: Deref,
        H::Target: AnyBreaker,
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
    H: Deref,
    H::Target: AnyBreaker,
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
    H: Deref,
    H::Target: AnyBreaker,
    CallAsync<H, F, J>: Future<Output = Result<T, CallError<E>>>,
    Fb: FnOnce(Rejection<ClockOf<H>>) -> G,
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
                    this.running.set(Some(fallback(Rejection::new(rejected))));
                }
            }
        }
    }
}
