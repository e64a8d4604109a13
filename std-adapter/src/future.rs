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

use core::future::{Future, IntoFuture};
use core::pin::Pin;
use core::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use tripword::Rejected;
use tripword::kit::{CircuitBreaker, Reply};

use crate::call::{CallError, Rejection};
use crate::classify::{Classify, IntoVerdict};
use crate::guard::{Pending, ReleasingOf, Unwinding};
use crate::policy::{AsPolicy, Timing};

/// The clock of breaker (or handle) `H`.
type ClockOf<H> = <H as CircuitBreaker>::Clock;
/// The future of an admission that needs a round trip, for breaker (or
/// handle) `H`.
type AcquiringOf<H> = <H as CircuitBreaker>::Acquiring;

pin_project! {
    /// Where a [`CallAsync`] is. For a local breaker only `Running`,
    /// `Rejected` and `Done` occur: its admission and release are ready at
    /// once (`Never` futures), so the other arms are dead code.
    #[project = StateProj]
    enum State<H, F, M, O, A, R>
    where
        H: CircuitBreaker,
    {
        // A remote admission in flight; `make` (the protected future,
        // unpolled, or what makes it) waits.
        Admitting {
            #[pin]
            acquiring: A,
            breaker: Option<H>,
            make: Option<M>,
        },
        // Admitted: the protected future runs (`None` once it completed:
        // dropped in place, the state left as it is, so a local call's
        // completion drops nothing else).
        Running {
            #[pin]
            future: Option<F>,
            pending: Pending<H>,
        },
        // A remote release in flight; `output` is handed out when it ends.
        Releasing {
            #[pin]
            releasing: R,
            output: Option<O>,
        },
        Rejected {
            rejected: Option<Rejected>,
        },
        Done,
    }
}

pin_project! {
    /// A future run through a breaker: see the [module](self) docs. Its
    /// output is `Ok` with the future's value, [`CallError::Inner`] with
    /// its error, or [`CallError::Open`] if the call was not admitted.
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
        state: State<H, F, M, F::Output, AcquiringOf<H>, ReleasingOf<H>>,
        policy: J,
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
            Reply::Ready(Err(rejected)) => Self::rejected_with(rejected, policy),
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
        let timed = p.slow_threshold().threshold().is_some();
        let pending = Pending::new(breaker, ticket, timed, p.cancel_outcome());
        let future = make();
        CallAsync {
            state: State::Running {
                future: Some(future),
                pending,
            },
            policy,
        }
    }

    /// A call that was not admitted: ready at once with
    /// [`CallError::Open`].
    #[inline(always)]
    pub(crate) fn rejected_with(rejected: Rejected, policy: J) -> Self {
        CallAsync {
            state: State::Rejected {
                rejected: Some(rejected),
            },
            policy,
        }
    }

    /// A call whose admission is in flight; once admitted, `make` becomes
    /// the protected future.
    pub(crate) fn admitting(breaker: H, acquiring: AcquiringOf<H>, policy: J, make: M) -> Self {
        CallAsync {
            state: State::Admitting {
                acquiring,
                breaker: Some(breaker),
                make: Some(make),
            },
            policy,
        }
    }

    /// Whether the call was admitted (a rejected call's future is ready at
    /// once with [`CallError::Open`]; one whose admission is still in
    /// flight is not admitted yet).
    pub fn is_admitted(&self) -> bool {
        matches!(self.state, State::Running { .. } | State::Releasing { .. })
    }

    /// The rejection, if the call was not admitted (until the future is
    /// polled and hands it out).
    pub fn rejected(&self) -> Option<Rejected> {
        match self.state {
            State::Rejected { rejected } => rejected,
            _ => None,
        }
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
        loop {
            match this.state.as_mut().project() {
                StateProj::Running {
                    mut future,
                    pending,
                } => {
                    let running = future
                        .as_mut()
                        .as_pin_mut()
                        .expect("`CallAsync` polled after completion");
                    // Armed while the protected future is polled and its
                    // result classified: a panic in either records a
                    // failure. Disarmed with `forget` on the paths that did
                    // not unwind, so a completed or pending poll pays no
                    // `thread::panicking()` check.
                    let guard = Unwinding(pending);
                    let result = match running.poll(cx) {
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
                    let settled = guard.0.settle_async(verdict);
                    core::mem::forget(guard);
                    match settled {
                        Reply::Ready(_) => {
                            future.set(None);
                            return Poll::Ready(result.map_err(CallError::Inner));
                        }
                        Reply::Wait(releasing) => this.state.set(State::Releasing {
                            releasing,
                            output: Some(result),
                        }),
                    }
                }
                StateProj::Rejected { rejected } => {
                    let rejected = rejected
                        .take()
                        .expect("`CallAsync` polled after completion");
                    return Poll::Ready(Err(CallError::Open(rejected)));
                }
                StateProj::Admitting {
                    acquiring,
                    breaker,
                    make,
                } => match ready!(acquiring.poll(cx)) {
                    Ok(ticket) => {
                        let breaker = breaker.take().expect("admitted once");
                        let future = make.take().expect("admitted once").into_future();
                        let p = this.policy.policy();
                        let timed = Timing::<ClockOf<H>>::threshold(p.slow_threshold()).is_some();
                        let pending = Pending::new(breaker, ticket, timed, p.cancel_outcome());
                        this.state.set(State::Running {
                            future: Some(future),
                            pending,
                        });
                    }
                    Err(rejected) => {
                        // The protected future is dropped unpolled.
                        this.state.set(State::Done);
                        return Poll::Ready(Err(CallError::Open(rejected)));
                    }
                },
                StateProj::Releasing { releasing, output } => {
                    ready!(releasing.poll(cx));
                    let output = output.take().expect("released once");
                    this.state.set(State::Done);
                    return Poll::Ready(output.map_err(CallError::Inner));
                }
                StateProj::Done => panic!("`CallAsync` polled after completion"),
            }
        }
    }
}

impl<H, F, J, M> core::fmt::Debug for CallAsync<H, F, J, M>
where
    H: CircuitBreaker,
    F: Future,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let state = match &self.state {
            State::Admitting { .. } => "admitting",
            State::Running {
                future: Some(_), ..
            } => "running",
            State::Releasing { .. } => "releasing",
            State::Rejected { rejected: Some(_) } => "rejected",
            State::Running { future: None, .. }
            | State::Rejected { rejected: None }
            | State::Done => "done",
        };
        let mut out = f.debug_struct("CallAsync");
        out.field("state", &format_args!("{state}"));
        if let State::Rejected {
            rejected: Some(rejected),
        } = &self.state
        {
            out.field("rejected", rejected);
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
