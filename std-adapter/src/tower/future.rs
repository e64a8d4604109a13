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
    #[inline]
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
    #[inline]
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
            later: Held<Later<H, K, S, B>>,
        },
    }
}

/// A [`Later`] call in its box, dropped out of line: the drop of a
/// [`State`] (inlined where the response future dies) keeps only the call
/// future's drop and a call here.
struct Held<L>(Option<Pin<Box<L>>>);

impl<L> Held<L> {
    /// The boxed call.
    #[inline(always)]
    fn get(&self) -> &L {
        self.0.as_deref().expect("held until dropped")
    }

    /// The boxed call, pinned.
    #[inline(always)]
    fn as_mut(&mut self) -> Pin<&mut L> {
        self.0.as_mut().expect("held until dropped").as_mut()
    }
}

impl<L> Drop for Held<L> {
    #[cold]
    #[inline(never)]
    fn drop(&mut self) {
        drop(self.0.take());
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
    /// admitted and `inner` ready. What the registry's service does in
    /// `call`.
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
        Self::respond_unless(breaker, policy, inner, request, &mut !ready)
    }

    /// [`respond`](Self::respond) with `skipped` in `ready`'s place:
    /// whether the last `poll_ready` left `inner` unpolled (what
    /// [`BreakerService`](crate::tower::BreakerService) keeps). Read on the
    /// common path (admitted at once) and cleared on the others, so that
    /// the common path stores nothing.
    #[inline]
    pub(crate) fn respond_unless<Svc, Req>(
        breaker: H,
        policy: CallPolicy<K, S>,
        inner: &mut Svc,
        request: Req,
        skipped: &mut bool,
    ) -> Self
    where
        Svc: Service<Req, Future = F> + Clone,
        D: Defer<Svc, Req>,
    {
        let state = match breaker.acquire_async() {
            Reply::Ready(Ok(ticket)) if !*skipped => State::Call {
                call: CallAsync::admitted(breaker, ticket, policy, move || inner.call(request)),
            },
            Reply::Ready(Ok(ticket)) => State::Later {
                later: defer_calling::<_, _, _, _, D, _, _>(
                    breaker, ticket, policy, inner, request, skipped,
                ),
            },
            Reply::Ready(Err(rejected)) => {
                *skipped = false;
                State::Call {
                    call: CallAsync::rejected_with(breaker, rejected, policy),
                }
            }
            Reply::Wait(acquiring) => State::Later {
                later: defer_admitting::<_, _, _, _, D, _, _>(
                    acquiring, breaker, policy, inner, request, skipped,
                ),
            },
        };
        ResponseFuture { state }
    }
}

/// A call admitted (with `ticket`) to an inner service that the last
/// `poll_ready` left unpolled, out of line: `inner` taken along, to be
/// polled ready and called by the response future; `skipped` cleared.
#[cold]
#[inline(never)]
fn defer_calling<H, F, K, S, D, Svc, Req>(
    breaker: H,
    ticket: H::Ticket,
    policy: CallPolicy<K, S>,
    inner: &mut Svc,
    request: Req,
    skipped: &mut bool,
) -> Held<Later<H, K, S, D::Deferred<F>>>
where
    H: CircuitBreaker,
    F: Future,
    S: Timing<ClockOf<H>>,
    Svc: Service<Req, Future = F> + Clone,
    D: Defer<Svc, Req>,
{
    *skipped = false;
    let call = D::defer(take(inner), request, false);
    Held(Some(Later::calling(breaker, ticket, policy, call)))
}

/// A call whose admission is in flight (`acquiring`), out of line: `inner`
/// taken along, to be polled ready (if `skipped`) and called by the
/// response future once admitted; `skipped` cleared.
#[cold]
#[inline(never)]
fn defer_admitting<H, F, K, S, D, Svc, Req>(
    acquiring: H::Acquiring,
    breaker: H,
    policy: CallPolicy<K, S>,
    inner: &mut Svc,
    request: Req,
    skipped: &mut bool,
) -> Held<Later<H, K, S, D::Deferred<F>>>
where
    H: CircuitBreaker,
    F: Future,
    S: Timing<ClockOf<H>>,
    Svc: Service<Req, Future = F> + Clone,
    D: Defer<Svc, Req>,
{
    let ready = !core::mem::take(skipped);
    let call = D::defer(take(inner), request, ready);
    Held(Some(Later::admitting(acquiring, breaker, policy, call)))
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
        if let StateProj::Call { call } = state.as_mut().project() {
            return call.poll(cx);
        }
        poll_later(state, cx)
    }
}

/// [`ResponseFuture::poll`] for a call made later, out of line: drives it
/// to the inner service's call (or the rejection), then polls the call
/// future, or hands out the inner service's readiness error.
#[cold]
#[inline(never)]
fn poll_later<H, F, K, S, B, T, E>(
    mut state: Pin<&mut State<H, F, K, S, B>>,
    cx: &mut Context<'_>,
) -> Poll<Result<T, CallError<E>>>
where
    H: CircuitBreaker,
    F: Future<Output = Result<T, E>>,
    S: Timing<ClockOf<H>>,
    B: Future<Output = Result<F, F::Output>>,
    PolicyCall<H, F, K, S>: Future<Output = Result<T, CallError<E>>>,
{
    loop {
        match state.as_mut().project() {
            StateProj::Call { call } => return call.poll(cx),
            StateProj::Later { later } => match core::task::ready!(later.as_mut().poll_step(cx)) {
                Step::Call(call) => state.set(State::Call { call }),
                Step::NotReady(output) => return Poll::Ready(output.map_err(CallError::Inner)),
            },
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
        let phase = match later.get() {
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
