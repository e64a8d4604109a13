//! [`ResponseFuture`], the response future of a [`BreakerService`](crate::tower::BreakerService):
//! a [`CallAsync`] that calls the inner service once admitted, or a call
//! it makes later (a remote admission, an inner service to poll ready
//! first), held in a box of its [`Deferral`].

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use pin_project_lite::pin_project;
use tower_service::Service;
use tripword::kit::{CircuitBreaker, Reply, TickVerdict};

use super::deferral::{Defer, Deferral, SendDeferral};
use crate::call::error::CallError;
use crate::call::future::CallAsync;
use crate::call::guard::Pending;
use crate::policy::{CallPolicy, Timing};

/// The call future of a tower service's call: the inner future `F` through
/// breaker `H`, counted by the layer's policy.
type PolicyCall<H, F, K, S> = CallAsync<H, F, CallPolicy<K, S>>;

pin_project! {
    /// A call the response future makes later; `B` is the [`Deferral`]'s
    /// box, the inner service and the request.
    #[project = LaterProj]
    enum Later<H, K, S, B>
    where
        H: CircuitBreaker,
    {
        // A remote admission in flight; the breaker, the policy and the
        // call wait (taken once admitted or rejected).
        Admitting {
            #[pin]
            acquiring: H::Acquiring,
            waiting: Option<(H, CallPolicy<K, S>, B)>,
        },
        // Admitted, the ticket held; the call polls the inner service ready
        // (if it must), then calls it.
        Calling {
            admitted: Option<Pending<H>>,
            policy: Option<CallPolicy<K, S>>,
            #[pin]
            call: B,
        },
        // The inner service's readiness failed: its error handed out.
        Done,
    }
}

/// What a [`Later`] call ends in: the call future, the inner service
/// called (or the admission rejected), or the output of the call for the
/// inner service's readiness error.
enum Step<H, F, K, S>
where
    H: CircuitBreaker,
    F: Future,
{
    Call(PolicyCall<H, F, K, S>),
    NotReady(F::Output),
}

impl<H, K, S, B> Later<H, K, S, B>
where
    H: CircuitBreaker,
    S: Timing<ClockOf<H>>,
{
    /// A call whose admission is in flight.
    #[inline(never)]
    fn admitting(
        acquiring: H::Acquiring,
        breaker: H,
        policy: CallPolicy<K, S>,
        call: B,
    ) -> Pin<Box<Self>> {
        Box::pin(Later::Admitting {
            acquiring,
            waiting: Some((breaker, policy, call)),
        })
    }

    /// An admitted call (with `ticket`) to an inner service not polled
    /// ready.
    #[inline(never)]
    fn calling(breaker: H, ticket: H::Ticket, policy: CallPolicy<K, S>, call: B) -> Pin<Box<Self>> {
        Box::pin(Later::Calling {
            admitted: Some(hold(breaker, ticket, &policy)),
            policy: Some(policy),
            call,
        })
    }

    /// Drives the call to its admission and its inner future, out of line:
    /// the call future once the inner service is called (or the admission
    /// rejected), or the output of a readiness error.
    #[inline(never)]
    fn poll_step<F>(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Step<H, F, K, S>>
    where
        F: Future,
        B: Future<Output = Result<F, F::Output>>,
    {
        loop {
            match self.as_mut().project() {
                LaterProj::Admitting { acquiring, waiting } => {
                    let admission = core::task::ready!(acquiring.poll(cx));
                    let (breaker, policy, call) = waiting.take().expect("admitted once");
                    match admission {
                        Ok(ticket) => self.set(Later::Calling {
                            admitted: Some(hold(breaker, ticket, &policy)),
                            policy: Some(policy),
                            call,
                        }),
                        // The call is dropped, the inner service not
                        // called; the call future hands out the
                        // rejection, named.
                        Err(rejected) => {
                            let call = CallAsync::rejected_with(breaker, rejected, policy);
                            return Poll::Ready(Step::Call(call));
                        }
                    }
                }
                LaterProj::Calling {
                    admitted,
                    policy,
                    call,
                } => {
                    // Out of the state while the inner service is polled
                    // ready and called: if either panics, the unwind drops
                    // it here, which records a failure (once: the state
                    // holds no ticket any more).
                    let mut held = admitted
                        .take()
                        .expect("`ResponseFuture` polled after completion or a panic");
                    return match call.poll(cx) {
                        Poll::Pending => {
                            *admitted = Some(held);
                            Poll::Pending
                        }
                        Poll::Ready(Ok(future)) => {
                            let policy = policy.take().expect("called once");
                            Poll::Ready(Step::Call(CallAsync::running(held, policy, future)))
                        }
                        Poll::Ready(Err(not_ready)) => {
                            // The inner service was not called: the
                            // readiness error says nothing of its health.
                            held.settle_detached(TickVerdict::Ignored);
                            self.set(Later::Done);
                            Poll::Ready(Step::NotReady(not_ready))
                        }
                    };
                }
                LaterProj::Done => panic!("`ResponseFuture` polled after completion"),
            }
        }
    }
}

pin_project! {
    /// The response future of a [`BreakerService`](crate::tower::BreakerService):
    /// a [`CallAsync`] on the inner future `F`, whose error is a
    /// [`CallError`]. A call it could not make at once (an admission that
    /// needs a round trip, or an inner service that was not polled ready
    /// because the breaker rejected at `poll_ready`) is held in a box of
    /// its [`Deferral`] `D`: once admitted, the response future polls the
    /// inner service ready if it must, then calls it.
    ///
    /// Its type names the breaker's handle `H`, the inner future `F`, the
    /// classifier `K`, the slow-call threshold `S` and the deferral `D`,
    /// never the inner service or the request: it is `Send` whenever they
    /// are, for a request that borrows (`&'static str`) as for one that
    /// does not.
    #[must_use = "futures do nothing unless polled; dropped, an admitted call records its cancel outcome"]
    pub struct ResponseFuture<H, F, K, S, D = SendDeferral>
    where
        H: CircuitBreaker,
        F: Future,
        D: Deferral,
    {
        #[pin]
        state: State<H, F, K, S, D::Deferred<F>>,
    }
}

pin_project! {
    /// Where a [`ResponseFuture`] is. A call made at once, or rejected, is
    /// a `Call` from the start; a call made later is boxed (on paths that
    /// allocate anyway), so that the enum is the call future's size, its
    /// tag a spare value of the call future's, and a call made at once
    /// pays one comparison more than a [`CallAsync`].
    #[project = StateProj]
    enum State<H, F, K, S, B>
    where
        H: CircuitBreaker,
        F: Future,
    {
        // Admitted (the inner service called) or rejected: the call future
        // does the rest.
        Call {
            #[pin]
            call: PolicyCall<H, F, K, S>,
        },
        // Not called yet: an admission in flight, an inner service to poll
        // ready (or done: its readiness failed).
        Later {
            later: Pin<Box<Later<H, K, S, B>>>,
        },
    }
}

impl<H, F, K, S, D> ResponseFuture<H, F, K, S, D>
where
    H: CircuitBreaker,
    F: Future,
    S: Timing<ClockOf<H>>,
    D: Deferral,
{
    /// Asks `breaker` for `request` to `inner`: rejected, leaves `inner`
    /// alone; admitted, calls `inner` now if it was polled `ready` (a panic
    /// there is a failure). Otherwise (an admission in flight, or an
    /// admission to an inner service that was not polled ready) takes
    /// `inner` along, leaving a clone in its place, and makes the call once
    /// admitted and `inner` ready. What
    /// [`BreakerService`](crate::tower::BreakerService) and the registry's
    /// service both do in `call`.
    #[inline]
    pub(crate) fn respond<Svc, Req>(
        breaker: H,
        policy: CallPolicy<K, S>,
        inner: &mut Svc,
        request: Req,
        ready: bool,
    ) -> Self
    where
        Svc: Service<Req, Future = F> + Clone,
        D: Defer<Svc, Req>,
    {
        let state = match breaker.acquire_async() {
            Reply::Ready(Ok(ticket)) if ready => State::Call {
                call: CallAsync::admitted(breaker, ticket, policy, move || inner.call(request)),
            },
            Reply::Ready(Ok(ticket)) => {
                let call = D::defer(take(inner), request, false);
                State::Later {
                    later: Later::calling(breaker, ticket, policy, call),
                }
            }
            Reply::Ready(Err(rejected)) => State::Call {
                call: CallAsync::rejected_with(breaker, rejected, policy),
            },
            Reply::Wait(acquiring) => {
                let call = D::defer(take(inner), request, ready);
                State::Later {
                    later: Later::admitting(acquiring, breaker, policy, call),
                }
            }
        };
        ResponseFuture { state }
    }
}

/// The service `inner` was, leaving a clone in its place (tower's idiom
/// for a middleware whose future calls the service later: the service is
/// the one polled ready, if it was).
fn take<Svc: Clone>(inner: &mut Svc) -> Svc {
    let fresh = inner.clone();
    core::mem::replace(inner, fresh)
}

/// `ticket` held as [`CallAsync::admitted`] holds it: timed if the policy
/// has a slow-call threshold (from now: the inner service's readiness
/// counts in the call's time), dropped unsettled it records the policy's
/// cancel outcome, or a failure during a panic.
fn hold<H, K, S>(breaker: H, ticket: H::Ticket, policy: &CallPolicy<K, S>) -> Pending<H>
where
    H: CircuitBreaker,
    S: Timing<ClockOf<H>>,
{
    let timed = Timing::<ClockOf<H>>::threshold(policy.slow_threshold()).is_some();
    Pending::new(breaker, ticket, timed, policy.cancel_outcome())
}

impl<H, F, K, S, D, T, E> Future for ResponseFuture<H, F, K, S, D>
where
    H: CircuitBreaker,
    F: Future<Output = Result<T, E>>,
    S: Timing<ClockOf<H>>,
    D: Deferral,
    PolicyCall<H, F, K, S>: Future<Output = Result<T, CallError<E>>>,
{
    type Output = Result<T, CallError<E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            match state.as_mut().project() {
                StateProj::Call { call } => return call.poll(cx),
                StateProj::Later { later } => {
                    match core::task::ready!(later.as_mut().poll_step(cx)) {
                        Step::Call(call) => state.set(State::Call { call }),
                        Step::NotReady(output) => {
                            return Poll::Ready(output.map_err(CallError::Inner));
                        }
                    }
                }
            }
        }
    }
}

impl<H, F, K, S, D> fmt::Debug for ResponseFuture<H, F, K, S, D>
where
    H: CircuitBreaker,
    F: Future,
    D: Deferral,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let later = match &self.state {
            State::Call { call } => return fmt::Debug::fmt(call, f),
            State::Later { later } => later,
        };
        let phase = match **later {
            Later::Admitting { .. } => "admitting",
            Later::Calling { .. } => "calling",
            Later::Done => "done",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &format_args!("{phase}"))
            .finish_non_exhaustive()
    }
}

/// The clock of breaker (or handle) `H`.
pub(super) type ClockOf<H> = <H as CircuitBreaker>::Clock;
