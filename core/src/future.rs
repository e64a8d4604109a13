//! Futures through any breaker, on `no_std`, with no allocation: an async
//! call guarded by a [`CircuitBreaker`] (`docs/spec.md`, "Futures").
//!
//! [`guard`] (or [`guard_with`], with a [`Judge`] of the output) asks the
//! breaker when it is called, before the protected future is first polled,
//! and returns a [`Guarded`] future:
//!
//! - rejected, it is ready at once with `Err(`[`Rejected`]`)`, and the
//!   protected future is dropped unpolled;
//! - admitted, it polls the protected future and, when it completes,
//!   records the judge's verdict of its output, exactly once, and hands the
//!   output out as `Ok(output)`;
//! - dropped before it completes (a timeout, a `select!` that took another
//!   branch), it records the judge's cancel outcome,
//!   [`Ignored`](Outcome::Ignored) by default: a cancelled probe is given
//!   back, so the breaker is never left with a probe nobody runs (I7).
//!
//! On a breaker whose admission or release needs a round trip (a remote
//! breaker's [`Reply::Wait`]), admission is awaited at the first poll and
//! the release before the output is handed out; neither blocks.
//!
//! ```
//! use core::pin::pin;
//! use core::task::{Context, Poll, Waker};
//! use tripword::clock::ManualClock;
//! use tripword::future::guard;
//! use tripword::{Breaker, Config, Status};
//!
//! let clock = ManualClock::new(0);
//! let b = Breaker::new(Config::new().failure_threshold(1), &clock);
//! let mut cx = Context::from_waker(Waker::noop());
//!
//! // An async read from a peripheral that fails.
//! let read = async { Err::<u8, &str>("bus error") };
//! let call = pin!(guard(&b, read));
//! assert_eq!(call.poll(&mut cx), Poll::Ready(Ok(Err("bus error"))));
//! assert_eq!(b.status(), Status::Open); // the failure tripped it
//!
//! // Open: rejected without polling the read.
//! let call = pin!(guard(&b, async { Ok::<u8, &str>(7) }));
//! assert!(matches!(call.poll(&mut cx), Poll::Ready(Err(_))));
//! ```
//!
//! A firmware's panics abort, so nothing runs while one unwinds. With
//! unwinding (a host, `std`), a panic in a poll of the protected future or
//! in its judge records a failure, as any failure of the call: name an
//! [`Unwind`] that can tell (`tripword-std` does, with
//! `std::thread::panicking`, and builds its `call_async` on [`Guarded`]).

use core::future::{Future, IntoFuture};
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll, ready};

use pin_project_lite::pin_project;

use crate::clock::Clock;
use crate::kit::{CircuitBreaker, Reply, TickVerdict};
use crate::outcome::Outcome;
use crate::rejected::Rejected;
use crate::ticket::Release;

/// Whether the thread is unwinding from a panic, for the code that records
/// an outcome from a `Drop`: a drop during an unwind records a failure,
/// whatever the cancel outcome says.
pub trait Unwind {
    /// Whether a panic is unwinding now.
    fn unwinding() -> bool;
}

/// Panics abort (a firmware's `panic-halt`, `panic-probe`,
/// `panic = "abort"`): no drop ever runs while one unwinds, so a drop always
/// records the cancel outcome. The default [`Unwind`]; it costs nothing.
#[derive(Clone, Copy, Debug)]
pub enum Abort {}

impl Unwind for Abort {
    #[inline(always)]
    fn unwinding() -> bool {
        false
    }
}

/// How a guarded call's output counts: its verdict, whether the call is
/// timed, and what a cancelled call records.
///
/// ```
/// use tripword::future::Judge;
/// use tripword::kit::TickVerdict;
///
/// /// A read that returns `None` timed out on the bus: a failure; a slow
/// /// read (over 1 000 ticks) counts as one too.
/// struct Bus;
/// impl Judge<Option<u8>> for Bus {
///     fn timed(&self) -> bool {
///         true
///     }
///     fn judge(&self, output: &Option<u8>, elapsed: Option<u64>) -> TickVerdict {
///         match (output, elapsed) {
///             (Some(_), Some(t)) if t <= 1_000 => TickVerdict::Success,
///             _ => TickVerdict::Failure,
///         }
///     }
/// }
/// assert_eq!(Bus.judge(&Some(1), Some(10)), TickVerdict::Success);
/// assert_eq!(Bus.judge(&Some(1), Some(5_000)), TickVerdict::Failure);
/// ```
pub trait Judge<O> {
    /// Whether the call is timed: the clock is read at admission and at
    /// completion, and [`judge`](Judge::judge) gets the ticks between.
    /// `false` by default: the clock is not read.
    #[inline(always)]
    fn timed(&self) -> bool {
        false
    }

    /// The verdict of a completed call: its `output`, and the ticks since
    /// admission if the call is [`timed`](Judge::timed) (`None` otherwise).
    fn judge(&self, output: &O, elapsed: Option<u64>) -> TickVerdict;

    /// What a call dropped before it completed records.
    /// [`Ignored`](Outcome::Ignored) by default: a cancellation says nothing
    /// about the callee's health.
    #[inline(always)]
    fn cancel_outcome(&self) -> Outcome {
        Outcome::Ignored
    }
}

impl<O, J: Judge<O> + ?Sized> Judge<O> for &J {
    #[inline(always)]
    fn timed(&self) -> bool {
        (**self).timed()
    }
    #[inline(always)]
    fn judge(&self, output: &O, elapsed: Option<u64>) -> TickVerdict {
        (**self).judge(output, elapsed)
    }
    #[inline(always)]
    fn cancel_outcome(&self) -> Outcome {
        (**self).cancel_outcome()
    }
}

/// The default judge of a `Result`: `Ok` is a success, `Err` a failure, a
/// cancelled call is ignored; not timed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByResult;

impl<T, E> Judge<Result<T, E>> for ByResult {
    #[inline(always)]
    fn judge(&self, output: &Result<T, E>, _: Option<u64>) -> TickVerdict {
        match output {
            Ok(_) => TickVerdict::Success,
            Err(_) => TickVerdict::Failure,
        }
    }
}

/// A judge from a function of the output to an [`Outcome`], with a cancel
/// outcome ([`Ignored`](Outcome::Ignored) unless
/// [`on_cancel`](Classifier::on_cancel) says otherwise); not timed.
///
/// ```
/// use tripword::future::{Classifier, Judge};
/// use tripword::Outcome;
///
/// // A sensor read: `None` is a failure; a cancelled read is one too.
/// let judge = Classifier::new(|read: &Option<u16>| match read {
///     Some(_) => Outcome::Success,
///     None => Outcome::Failure,
/// })
/// .on_cancel(Outcome::Failure);
/// assert_eq!(judge.judge(&None, None).outcome(), Outcome::Failure);
/// assert_eq!(judge.cancel_outcome(), Outcome::Failure);
/// ```
#[derive(Clone, Copy)]
pub struct Classifier<F> {
    classify: F,
    cancel: Outcome,
}

impl<F> Classifier<F> {
    /// Judges an output by `classify`; a cancelled call is ignored.
    pub const fn new(classify: F) -> Self {
        Classifier {
            classify,
            cancel: Outcome::Ignored,
        }
    }

    /// A cancelled call records `outcome` instead.
    pub const fn on_cancel(mut self, outcome: Outcome) -> Self {
        self.cancel = outcome;
        self
    }
}

impl<O, F: Fn(&O) -> Outcome> Judge<O> for Classifier<F> {
    #[inline(always)]
    fn judge(&self, output: &O, _: Option<u64>) -> TickVerdict {
        TickVerdict::from((self.classify)(output))
    }
    #[inline(always)]
    fn cancel_outcome(&self) -> Outcome {
        self.cancel
    }
}

impl<F> core::fmt::Debug for Classifier<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Classifier")
            .field("cancel", &self.cancel)
            .finish_non_exhaustive()
    }
}

/// An admitted call's ticket, through its breaker or a handle on it (a
/// reference, an `Arc`), recorded exactly once:
/// [`settle`](Admitted::settle)d with a verdict, or, dropped without one,
/// with a failure while a panic unwinds (as `U` tells) and the drop
/// outcome otherwise. A drop records with
/// [`CircuitBreaker::release_detached`], which never blocks.
///
/// What [`Guarded`] holds while the protected future runs, and what
/// `tripword-std`'s closures and tower service hold around a call.
///
/// ```
/// use tripword::clock::ManualClock;
/// use tripword::future::Admitted;
/// use tripword::kit::{CircuitBreaker, TickVerdict};
/// use tripword::{Breaker, Config, Outcome, Release, Status};
///
/// let clock = ManualClock::new(0);
/// let b = Breaker::new(Config::new().failure_threshold(1), &clock);
/// let ticket = CircuitBreaker::acquire(&b).unwrap();
/// let mut call: Admitted<_> = Admitted::new(&b, ticket, false, Outcome::Failure);
/// assert_eq!(call.settle(TickVerdict::Success), Release::Recorded);
/// assert_eq!(call.settle(TickVerdict::Failure), Release::Stale); // once only
/// drop(call); // settled: the drop records nothing
/// assert_eq!(b.status(), Status::Closed);
///
/// // Dropped unsettled: the drop outcome, a failure here.
/// drop(Admitted::<_>::new(&b, CircuitBreaker::acquire(&b).unwrap(), false, Outcome::Failure));
/// assert_eq!(b.status(), Status::Open);
/// ```
pub struct Admitted<H, U = Abort>
where
    H: CircuitBreaker,
    U: Unwind,
{
    breaker: H,
    ticket: Option<H::Ticket>,
    /// The clock at admission, read only when the call is timed.
    started: Option<u64>,
    on_drop: Outcome,
    unwind: PhantomData<fn() -> U>,
}

impl<H, U> Admitted<H, U>
where
    H: CircuitBreaker,
    U: Unwind,
{
    /// Takes over `ticket`, issued by `breaker`; reads the clock now if
    /// `timed`. Dropped unsettled, records `on_drop`.
    #[inline(always)]
    pub fn new(breaker: H, ticket: H::Ticket, timed: bool, on_drop: Outcome) -> Self {
        let started = if timed {
            Some(breaker.clock().now())
        } else {
            None
        };
        Admitted {
            breaker,
            ticket: Some(ticket),
            started,
            on_drop,
            unwind: PhantomData,
        }
    }

    /// The breaker (or handle) the ticket came from.
    #[inline(always)]
    pub fn breaker(&self) -> &H {
        &self.breaker
    }

    /// Whether the outcome is recorded (by a settle; a drop records it
    /// otherwise).
    #[inline(always)]
    pub fn is_settled(&self) -> bool {
        self.ticket.is_none()
    }

    /// Ticks since admission, if the call is timed. A clock read earlier
    /// than the admission (a step back: a difference of 2^63 ticks or
    /// more) reads as 0 ticks, so that it never makes a fast call slow
    /// (spec I6: a clock going backwards fails towards admitting); a clock
    /// that wraps at 2^64 is timed across the wrap.
    #[inline(always)]
    pub fn elapsed(&self) -> Option<u64> {
        self.started.map(|started| {
            let ticks = self.breaker.clock().now().wrapping_sub(started);
            if ticks >> 63 == 0 { ticks } else { 0 }
        })
    }

    /// Records `verdict` with the sync release (once: later settles, and
    /// the drop, record nothing and a later settle returns
    /// [`Release::Stale`]).
    #[inline(always)]
    pub fn settle(&mut self, verdict: TickVerdict) -> Release {
        match self.ticket.take() {
            Some(ticket) => self.breaker.release_verdict(ticket, verdict),
            None => Release::Stale,
        }
    }

    /// Records `verdict` with the async release: ready at once for a local
    /// breaker, a round trip's future for a remote one (once, as
    /// [`settle`](Self::settle)).
    #[inline(always)]
    pub fn settle_async(&mut self, verdict: TickVerdict) -> Reply<Release, H::Releasing> {
        match self.ticket.take() {
            Some(ticket) => self.breaker.release_async(ticket, verdict),
            None => Reply::Ready(Release::Stale),
        }
    }

    /// Records `verdict` from a place that cannot wait (a drop, an unwind),
    /// with [`CircuitBreaker::release_detached`] (once, as
    /// [`settle`](Self::settle)).
    #[inline]
    pub fn settle_detached(&mut self, verdict: TickVerdict) {
        if let Some(ticket) = self.ticket.take() {
            self.breaker.release_detached(ticket, verdict);
        }
    }
}

impl<H, U> Drop for Admitted<H, U>
where
    H: CircuitBreaker,
    U: Unwind,
{
    fn drop(&mut self) {
        if self.ticket.is_some() {
            // A panic is a failure, whatever the drop outcome says.
            let outcome = if U::unwinding() {
                Outcome::Failure
            } else {
                self.on_drop
            };
            self.settle_detached(TickVerdict::from(outcome));
        }
    }
}

impl<H, U> core::fmt::Debug for Admitted<H, U>
where
    H: CircuitBreaker,
    U: Unwind,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Admitted")
            .field("settled", &self.is_settled())
            .field("started", &self.started)
            .field("on_drop", &self.on_drop)
            .finish_non_exhaustive()
    }
}

/// Armed around a poll of the protected future and its judgement: if
/// either panics, the unwind drops this guard (the future itself, and its
/// [`Admitted`], stay where they are, to be dropped later by whoever caught
/// the panic, when no panic unwinds any more), and it records a failure.
/// Disarmed with `mem::forget` on the paths that did not unwind; with
/// [`Abort`] its drop is empty.
struct Armed<'a, H, U>(&'a mut Admitted<H, U>)
where
    H: CircuitBreaker,
    U: Unwind;

impl<H, U> Drop for Armed<'_, H, U>
where
    H: CircuitBreaker,
    U: Unwind,
{
    #[inline]
    fn drop(&mut self) {
        if U::unwinding() {
            self.0.settle_detached(TickVerdict::Failure);
        }
    }
}

pin_project! {
    /// Where a [`Guarded`] is. For a local breaker only `Running`,
    /// `Rejected` and `Done` occur: its admission and release are ready at
    /// once ([`Never`](crate::kit::Never) futures), so the other arms are
    /// dead code.
    #[project = StateProj]
    enum State<H, F, M, O, U, A, R>
    where
        H: CircuitBreaker,
        U: Unwind,
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
            admitted: Admitted<H, U>,
        },
        // A remote release in flight; `output` is handed out when it ends.
        Releasing {
            #[pin]
            releasing: R,
            output: Option<O>,
        },
        // Not admitted (`None` once handed out); the breaker stays, for
        // whoever maps the rejection (its name, say: `Guarded::breaker`).
        Rejected {
            rejected: Option<Rejected>,
            breaker: H,
        },
        Done,
    }
}

pin_project! {
    /// A future run through a breaker: what [`guard`] and [`guard_with`]
    /// return (see the [module](self) docs). Its output is `Ok` with the
    /// protected future's output, or `Err` with the [`Rejected`] if the
    /// call was not admitted.
    ///
    /// `H` is the breaker, or a handle on it (`&B`, `&'static B`, an
    /// `Arc`): any [`CircuitBreaker`]. `F` is the protected future, `J` its
    /// [`Judge`], `U` how a drop tells an unwind ([`Abort`]: it cannot
    /// happen), and `M` what makes `F` (`F` itself, or, for an admission
    /// that needs a round trip, something turned into `F` once admitted).
    #[must_use = "futures do nothing unless polled; dropped, an admitted call records its cancel outcome"]
    pub struct Guarded<H, F, J = ByResult, U = Abort, M = F>
    where
        H: CircuitBreaker,
        F: Future,
        U: Unwind,
    {
        #[pin]
        state: State<H, F, M, F::Output, U, H::Acquiring, H::Releasing>,
        judge: J,
    }
}

/// Runs `future` through `breaker`, judged [`ByResult`]: `Ok` a success,
/// `Err` a failure, a drop before completion ignored. Admission is decided
/// now; see the [module](self) docs.
#[inline]
pub fn guard<H, F>(breaker: H, future: F) -> Guarded<H, F::IntoFuture>
where
    H: CircuitBreaker,
    F: IntoFuture,
    ByResult: Judge<<F::IntoFuture as Future>::Output>,
{
    Guarded::start(breaker, ByResult, move || future.into_future())
}

/// Runs `future` through `breaker`, judged by `judge`. Admission is decided
/// now; see the [module](self) docs.
#[inline]
pub fn guard_with<H, J, F>(breaker: H, judge: J, future: F) -> Guarded<H, F::IntoFuture, J>
where
    H: CircuitBreaker,
    J: Judge<<F::IntoFuture as Future>::Output>,
    F: IntoFuture,
{
    Guarded::start(breaker, judge, move || future.into_future())
}

impl<H, F, J, U, M> Guarded<H, F, J, U, M>
where
    H: CircuitBreaker,
    F: Future,
    J: Judge<F::Output>,
    U: Unwind,
{
    /// Asks `breaker` now; admitted, makes the protected future with
    /// `make`. An admission that needs a round trip makes `M` at once and
    /// turns it into the protected future once admitted.
    #[inline]
    pub fn start(breaker: H, judge: J, make: impl FnOnce() -> M) -> Self
    where
        M: IntoFuture<IntoFuture = F>,
    {
        match breaker.acquire_async() {
            Reply::Ready(Ok(ticket)) => {
                Self::admitted(breaker, ticket, judge, || make().into_future())
            }
            Reply::Ready(Err(rejected)) => Self::rejected(breaker, rejected, judge),
            Reply::Wait(acquiring) => Self::admitting(breaker, acquiring, judge, make()),
        }
    }

    /// A call already admitted with `ticket` (by `breaker`): makes the
    /// protected future with `make`. For a middleware that asks the breaker
    /// itself (a service's `poll_ready`, say).
    #[inline(always)]
    pub fn admitted(breaker: H, ticket: H::Ticket, judge: J, make: impl FnOnce() -> F) -> Self {
        let admitted = Admitted::new(breaker, ticket, judge.timed(), judge.cancel_outcome());
        Self::running(admitted, judge, make())
    }
}

impl<H, F, J, U, M> Guarded<H, F, J, U, M>
where
    H: CircuitBreaker,
    F: Future,
    U: Unwind,
{
    /// An admitted call, its ticket held by `admitted`, running `future`:
    /// for a caller that made the [`Admitted`] itself (with the timing and
    /// cancel outcome of a judge it knows better than the output type).
    #[inline(always)]
    pub fn running(admitted: Admitted<H, U>, judge: J, future: F) -> Self {
        Guarded {
            state: State::Running {
                future: Some(future),
                admitted,
            },
            judge,
        }
    }

    /// A call that `breaker` did not admit: ready at once with
    /// `Err(rejected)`.
    #[inline(always)]
    pub fn rejected(breaker: H, rejected: Rejected, judge: J) -> Self {
        Guarded {
            state: State::Rejected {
                rejected: Some(rejected),
                breaker,
            },
            judge,
        }
    }

    /// A call whose admission is in flight (`acquiring`, from `breaker`'s
    /// [`acquire_async`](CircuitBreaker::acquire_async)); once admitted,
    /// `make` becomes the protected future; rejected, it is dropped
    /// unpolled.
    pub fn admitting(breaker: H, acquiring: H::Acquiring, judge: J, make: M) -> Self {
        Guarded {
            state: State::Admitting {
                acquiring,
                breaker: Some(breaker),
                make: Some(make),
            },
            judge,
        }
    }

    /// Whether the call was admitted (a rejected call's future is ready at
    /// once with `Err`; one whose admission is still in flight is not
    /// admitted yet).
    pub fn is_admitted(&self) -> bool {
        matches!(self.state, State::Running { .. } | State::Releasing { .. })
    }

    /// The breaker (or handle) the call went to, while the future holds
    /// it: until a completed call's release, and after a rejection (to
    /// describe it: its [`name`](CircuitBreaker::name), say).
    pub fn breaker(&self) -> Option<&H> {
        match &self.state {
            State::Admitting { breaker, .. } => breaker.as_ref(),
            State::Running { admitted, .. } => Some(admitted.breaker()),
            State::Rejected { breaker, .. } => Some(breaker),
            State::Releasing { .. } | State::Done => None,
        }
    }

    /// Where the call is.
    pub fn phase(&self) -> Phase {
        match &self.state {
            State::Admitting { .. } => Phase::Admitting,
            State::Running {
                future: Some(_), ..
            } => Phase::Running,
            State::Releasing { .. } => Phase::Releasing,
            State::Rejected {
                rejected: Some(_), ..
            } => Phase::Rejected,
            State::Running { future: None, .. }
            | State::Rejected { rejected: None, .. }
            | State::Done => Phase::Done,
        }
    }

    /// The rejection, if the call was not admitted (until the future is
    /// polled and hands it out).
    pub fn rejection(&self) -> Option<Rejected> {
        match &self.state {
            State::Rejected { rejected, .. } => *rejected,
            _ => None,
        }
    }

    /// The judge, for the whole life of the future: for a wrapper whose
    /// judge carries more than the verdict (what to do with a rejection,
    /// say, once the future hands it out).
    pub fn judge(&self) -> &J {
        &self.judge
    }
}

impl<H, F, J, U, M> Future for Guarded<H, F, J, U, M>
where
    H: CircuitBreaker,
    F: Future,
    J: Judge<F::Output>,
    U: Unwind,
    M: IntoFuture<IntoFuture = F>,
{
    type Output = Result<F::Output, Rejected>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            match this.state.as_mut().project() {
                StateProj::Running {
                    mut future,
                    admitted,
                } => {
                    let running = future
                        .as_mut()
                        .as_pin_mut()
                        .expect("`Guarded` polled after completion");
                    // Armed while the protected future is polled and its
                    // output judged: a panic in either records a failure.
                    // Disarmed with `forget` on the paths that did not
                    // unwind, so a completed or pending poll pays no
                    // unwind check.
                    let armed = Armed(admitted);
                    let output = match running.poll(cx) {
                        Poll::Ready(output) => output,
                        Poll::Pending => {
                            core::mem::forget(armed);
                            return Poll::Pending;
                        }
                    };
                    let verdict = this.judge.judge(&output, armed.0.elapsed());
                    let settled = armed.0.settle_async(verdict);
                    core::mem::forget(armed);
                    match settled {
                        Reply::Ready(_) => {
                            future.set(None);
                            return Poll::Ready(Ok(output));
                        }
                        Reply::Wait(releasing) => this.state.set(State::Releasing {
                            releasing,
                            output: Some(output),
                        }),
                    }
                }
                StateProj::Rejected { rejected, .. } => {
                    let rejected = rejected.take().expect("`Guarded` polled after completion");
                    return Poll::Ready(Err(rejected));
                }
                StateProj::Admitting {
                    acquiring,
                    breaker,
                    make,
                } => match ready!(acquiring.poll(cx)) {
                    Ok(ticket) => {
                        let breaker = breaker.take().expect("admitted once");
                        let future = make.take().expect("admitted once").into_future();
                        let admitted = Admitted::new(
                            breaker,
                            ticket,
                            this.judge.timed(),
                            this.judge.cancel_outcome(),
                        );
                        this.state.set(State::Running {
                            future: Some(future),
                            admitted,
                        });
                    }
                    Err(rejected) => {
                        // The protected future is dropped unpolled; the
                        // breaker stays, as for a call rejected at once.
                        let breaker = breaker.take().expect("rejected once");
                        this.state.set(State::Rejected {
                            rejected: None,
                            breaker,
                        });
                        return Poll::Ready(Err(rejected));
                    }
                },
                StateProj::Releasing { releasing, output } => {
                    ready!(releasing.poll(cx));
                    let output = output.take().expect("released once");
                    this.state.set(State::Done);
                    return Poll::Ready(Ok(output));
                }
                StateProj::Done => panic!("`Guarded` polled after completion"),
            }
        }
    }
}

/// Where a [`Guarded`] call is, for diagnostics ([`Guarded::phase`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// A remote admission is in flight.
    Admitting,
    /// Admitted: the protected future runs.
    Running,
    /// Completed: a remote release is in flight before the output is
    /// handed out.
    Releasing,
    /// Not admitted: the next poll hands out the rejection.
    Rejected,
    /// The output or the rejection was handed out.
    Done,
}

impl Phase {
    /// The phase in lower case, as `Debug` of the call futures shows it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Phase::Admitting => "admitting",
            Phase::Running => "running",
            Phase::Releasing => "releasing",
            Phase::Rejected => "rejected",
            Phase::Done => "done",
        }
    }
}

impl<H, F, J, U, M> core::fmt::Debug for Guarded<H, F, J, U, M>
where
    H: CircuitBreaker,
    F: Future,
    U: Unwind,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut out = f.debug_struct("Guarded");
        out.field("state", &format_args!("{}", self.phase().as_str()));
        if let Some(rejected) = self.rejection() {
            out.field("rejected", &rejected);
        }
        out.finish_non_exhaustive()
    }
}

#[cfg(all(test, not(tripword_loom)))]
mod tests;
