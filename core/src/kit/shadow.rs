//! Shadow mode (`docs/spec.md`, "Shadow mode"): a breaker that decides and
//! reports as it would, and admits every call.
//!
//! [`Shadow`] wraps any [`CircuitBreaker`] and a switch. With the switch
//! on, a call the breaker rejects runs anyway, on a [`ShadowTicket::Shadow`]
//! that records nothing; a call the breaker admits is the breaker's, and
//! its outcome counts exactly as without the wrapper. So the breaker trips,
//! opens, elects its probe and closes as it would in production, its
//! observer sees every transition and every rejection
//! ([`Observer::on_rejected`](crate::Observer::on_rejected)), and no caller
//! is turned away. A [`ShadowObserver`] hears each rejection that shadow
//! mode turned into an admission, so that metrics and logs can tell the
//! rejections that happened from the ones that would have.
//!
//! The switch flips at run time ([`Shadow::set_shadow`]) without touching
//! the breaker's state: switched off, the next call is decided by the state
//! the breaker reached while shadowing.
//!
//! ```
//! use tripword::clock::ManualClock;
//! use tripword::kit::{CircuitBreaker, Shadow};
//! use tripword::{Breaker, Cause, Config, Outcome, Release, Status};
//!
//! static CLOCK: ManualClock = ManualClock::new(0);
//! static B: Shadow<Breaker<&ManualClock>> =
//!     Shadow::new(Breaker::new(Config::new().failure_threshold(1).open_for(100), &CLOCK));
//!
//! let t = B.acquire().unwrap();
//! B.release(t, Outcome::Failure); // trips, as it would
//! assert_eq!(B.status(), Status::Open);
//! // Open, and the call runs: its ticket says what would have happened.
//! let t = B.acquire().unwrap();
//! assert_eq!(t.rejected().map(|r| r.cause()), Some(Cause::Open));
//! assert_eq!(B.release(t, Outcome::Success), Release::Stale); // changes nothing
//! assert_eq!(B.status(), Status::Open);
//! // Enforcing from now on, with the state reached while shadowing.
//! B.set_shadow(false);
//! assert_eq!(B.acquire().unwrap_err().cause(), Cause::Open);
//! ```

use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};

use pin_project_lite::pin_project;

use super::{CircuitBreaker, Reply, TickVerdict};
use crate::outcome::Outcome;
use crate::rejected::Rejected;
use crate::status::{Health, Status};
use crate::sync::{AtomicBool, Ordering};
use crate::ticket::Release;

/// Hears the rejections that shadow mode turned into admissions: what a
/// metrics or tracing hook counts as "would have rejected". The breaker's
/// own observer has already seen the rejection
/// ([`Observer::on_rejected`](crate::Observer::on_rejected)) when this is
/// called, on the caller's thread, after the decision.
pub trait ShadowObserver {
    /// The breaker rejected a call for `rejected` (why, and for how long),
    /// and shadow mode admitted it.
    fn on_shadow_admitted(&self, rejected: Rejected);
}

/// No hook: the shadow admissions are known only from their tickets.
impl ShadowObserver for () {
    #[inline(always)]
    fn on_shadow_admitted(&self, _: Rejected) {}
}

impl<H: ShadowObserver + ?Sized> ShadowObserver for &H {
    #[inline]
    fn on_shadow_admitted(&self, rejected: Rejected) {
        (**self).on_shadow_admitted(rejected)
    }
}

/// Both hooks, `.0` first.
impl<A: ShadowObserver, B: ShadowObserver> ShadowObserver for (A, B) {
    #[inline]
    fn on_shadow_admitted(&self, rejected: Rejected) {
        self.0.on_shadow_admitted(rejected);
        self.1.on_shadow_admitted(rejected);
    }
}

/// Adapts a closure into a [`ShadowObserver`], as
/// [`OnTransition`](crate::OnTransition) does for transitions.
///
/// ```
/// use core::sync::atomic::{AtomicU32, Ordering};
/// use tripword::clock::ManualClock;
/// use tripword::kit::{CircuitBreaker, OnShadow, Shadow};
/// use tripword::{Breaker, Config};
///
/// let clock = ManualClock::new(0);
/// let would_reject = AtomicU32::new(0);
/// let b = Shadow::with_observer(
///     Breaker::new(Config::new(), &clock),
///     OnShadow(|_| { would_reject.fetch_add(1, Ordering::Relaxed); }),
///     true,
/// );
/// b.inner().force_open();
/// let t = b.acquire().unwrap(); // would have been rejected: counted
/// # let _ = b.release(t, tripword::Outcome::Success);
/// assert_eq!(would_reject.load(Ordering::Relaxed), 1);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct OnShadow<F>(pub F);

impl<F: Fn(Rejected)> ShadowObserver for OnShadow<F> {
    #[inline]
    fn on_shadow_admitted(&self, rejected: Rejected) {
        (self.0)(rejected)
    }
}

/// The ticket of a [`Shadow`] breaker: the breaker's own ticket, or the
/// proof that shadow mode admitted a call the breaker rejected.
#[derive(Debug, PartialEq, Eq, Hash)]
#[must_use = "a ticket must be released; a lost probe ticket blocks the breaker until the probe timeout"]
pub enum ShadowTicket<T> {
    /// The breaker admitted the call: its outcome counts as without the
    /// wrapper.
    Real(T),
    /// The breaker rejected the call for this reason, and shadow mode
    /// admitted it: its release records nothing and says
    /// [`Release::Stale`].
    Shadow(Rejected),
}

impl<T> ShadowTicket<T> {
    /// Whether the call runs only because of shadow mode.
    #[inline]
    pub const fn is_shadow(&self) -> bool {
        matches!(self, ShadowTicket::Shadow(_))
    }

    /// The rejection shadow mode overrode, `None` for a real admission.
    #[inline]
    pub const fn rejected(&self) -> Option<Rejected> {
        match self {
            ShadowTicket::Shadow(r) => Some(*r),
            ShadowTicket::Real(_) => None,
        }
    }

    /// The breaker's own ticket, `None` for a shadow admission.
    #[inline]
    pub const fn real(&self) -> Option<&T> {
        match self {
            ShadowTicket::Real(t) => Some(t),
            ShadowTicket::Shadow(_) => None,
        }
    }
}

/// A breaker in shadow mode, or ready to be: any [`CircuitBreaker`], and a
/// switch. See the [module](self) docs.
///
/// - **Switch on** ([`new`](Self::new)): a rejection of the breaker becomes
///   an admission on a [`ShadowTicket::Shadow`] (its release changes
///   nothing and says [`Release::Stale`]), after the breaker's observer saw
///   the rejection and the [`ShadowObserver`] `H` heard of the admission.
///   An admission of the breaker is a [`ShadowTicket::Real`], released into
///   the breaker as without the wrapper. So the breaker makes the same
///   transitions, and elects the same single probe (spec I1), as it would
///   in production.
/// - **Switch off** ([`enforcing`](Self::enforcing)): the breaker's answers,
///   unchanged.
///
/// [`status`](CircuitBreaker::status) and [`health`](CircuitBreaker::health)
/// are the breaker's: a dashboard sees what the breaker would do.
/// [`is_open`](CircuitBreaker::is_open) is false while shadowing: no call
/// is rejected, so a tower service's readiness waits on the inner service
/// as for a closed breaker.
///
/// The switch is a relaxed atomic flag beside the breaker, read only when
/// the breaker rejects (a closed breaker's admission costs what the
/// breaker's costs, plus a match), flipped without touching the breaker's
/// word. No heap; `new` is `const`, so a `Shadow` can be a `static`.
///
/// The wrapper does not dereference to the breaker: the breaker's own
/// `acquire` or `permit` through a `Deref` would bypass shadow mode where
/// the [`CircuitBreaker`] trait is not in scope. Its other methods
/// (`force_open`, ...) are on [`inner`](Self::inner).
///
/// A remote breaker's admission that needs a round trip
/// ([`Reply::Wait`]) is shadowed if the switch was on when it began; the
/// hook is cloned into its future then, which is why `H: Clone` (`()`, a
/// reference, or a handle of counters).
#[derive(Debug)]
pub struct Shadow<B, H = ()> {
    inner: B,
    shadow: AtomicBool,
    observer: H,
}

impl<B> Shadow<B> {
    constructor! {
        /// `inner` in shadow mode: it decides, every call is admitted.
        pub fn new(inner: B) -> Shadow<B> {
            Shadow {
                inner,
                shadow: AtomicBool::new(true),
                observer: (),
            }
        }
    }

    constructor! {
        /// `inner` behind a switch that is off: its answers, until
        /// [`set_shadow(true)`](Self::set_shadow).
        pub fn enforcing(inner: B) -> Shadow<B> {
            Shadow {
                inner,
                shadow: AtomicBool::new(false),
                observer: (),
            }
        }
    }
}

impl<B, H> Shadow<B, H> {
    constructor! {
        /// `inner` with a hook that hears each shadow admission, in shadow
        /// mode if `shadow`.
        pub fn with_observer(inner: B, observer: H, shadow: bool) -> Shadow<B, H> {
            Shadow {
                inner,
                shadow: AtomicBool::new(shadow),
                observer,
            }
        }
    }

    /// Turns shadow mode on (every call admitted) or off (the breaker's
    /// answers). The breaker's state is not touched; a call already
    /// admitted keeps its ticket, real or shadow.
    #[inline]
    pub fn set_shadow(&self, shadow: bool) {
        self.shadow.store(shadow, Ordering::Relaxed);
    }

    /// Whether shadow mode is on.
    #[inline]
    pub fn is_shadow(&self) -> bool {
        self.shadow.load(Ordering::Relaxed)
    }

    /// The breaker, for its own methods (`force_open`, `snapshot`, ...).
    /// Calls made through it directly are not shadowed.
    #[inline(always)]
    pub const fn inner(&self) -> &B {
        &self.inner
    }

    /// The hook that hears shadow admissions.
    #[inline(always)]
    pub const fn observer(&self) -> &H {
        &self.observer
    }

    /// The breaker, unwrapped.
    #[inline]
    pub fn into_inner(self) -> B {
        self.inner
    }

    /// The breaker's answer, with a rejection turned into a shadow
    /// admission when the switch is on.
    #[inline(always)]
    fn admit<T>(&self, answer: Result<T, Rejected>) -> Result<ShadowTicket<T>, Rejected>
    where
        H: ShadowObserver,
    {
        match answer {
            Ok(ticket) => Ok(ShadowTicket::Real(ticket)),
            Err(rejected) if self.is_shadow() => {
                self.observer.on_shadow_admitted(rejected);
                Ok(ShadowTicket::Shadow(rejected))
            }
            Err(rejected) => Err(rejected),
        }
    }
}

pin_project! {
    /// The [`Acquiring`](CircuitBreaker::Acquiring) future of a [`Shadow`]
    /// breaker: the breaker's round trip, its rejection turned into a shadow
    /// admission if the switch was on when the admission began. Dropped, it
    /// drops the breaker's future, which releases an admission it got (the
    /// kit's contract).
    #[derive(Debug)]
    #[must_use = "futures do nothing unless polled"]
    pub struct ShadowAcquiring<F, T, H> {
        #[pin]
        inner: F,
        // The hook, when the switch was on.
        shadow: Option<H>,
        ticket: PhantomData<fn() -> T>,
    }
}

impl<F, T, H> Future for ShadowAcquiring<F, T, H>
where
    F: Future<Output = Result<T, Rejected>>,
    H: ShadowObserver,
{
    type Output = Result<ShadowTicket<T>, Rejected>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let answer = match this.inner.poll(cx) {
            Poll::Ready(answer) => answer,
            Poll::Pending => return Poll::Pending,
        };
        Poll::Ready(match (answer, this.shadow.as_ref()) {
            (Ok(ticket), _) => Ok(ShadowTicket::Real(ticket)),
            (Err(rejected), Some(observer)) => {
                observer.on_shadow_admitted(rejected);
                Ok(ShadowTicket::Shadow(rejected))
            }
            (Err(rejected), None) => Err(rejected),
        })
    }
}

impl<B: CircuitBreaker, H: ShadowObserver + Clone> CircuitBreaker for Shadow<B, H> {
    type Ticket = ShadowTicket<B::Ticket>;
    type Clock = B::Clock;
    type Acquiring = ShadowAcquiring<B::Acquiring, B::Ticket, H>;
    type Releasing = B::Releasing;

    #[inline(always)]
    fn acquire(&self) -> Result<Self::Ticket, Rejected> {
        self.admit(self.inner.acquire())
    }

    #[inline(always)]
    fn release(&self, ticket: Self::Ticket, outcome: Outcome) -> Release {
        match ticket {
            ShadowTicket::Real(ticket) => self.inner.release(ticket, outcome),
            ShadowTicket::Shadow(_) => Release::Stale,
        }
    }

    #[inline(always)]
    fn release_failure_for(&self, ticket: Self::Ticket, open_for: u64) -> Release {
        match ticket {
            ShadowTicket::Real(ticket) => self.inner.release_failure_for(ticket, open_for),
            ShadowTicket::Shadow(_) => Release::Stale,
        }
    }

    #[inline(always)]
    fn status(&self) -> Status {
        self.inner.status()
    }

    #[inline(always)]
    fn health(&self) -> Health {
        self.inner.health()
    }

    /// The breaker's, except while shadowing: then no call is rejected, so
    /// `false`.
    #[inline]
    fn is_open(&self) -> bool {
        !self.is_shadow() && self.inner.is_open()
    }

    #[inline(always)]
    fn clock(&self) -> &B::Clock {
        self.inner.clock()
    }

    #[inline(always)]
    fn abandon_outcome(&self) -> Outcome {
        self.inner.abandon_outcome()
    }

    #[inline(always)]
    fn name(&self) -> Option<&'static str> {
        self.inner.name()
    }

    #[inline(always)]
    fn release_verdict(&self, ticket: Self::Ticket, verdict: TickVerdict) -> Release {
        match ticket {
            ShadowTicket::Real(ticket) => self.inner.release_verdict(ticket, verdict),
            ShadowTicket::Shadow(_) => Release::Stale,
        }
    }

    #[inline(always)]
    fn acquire_async(&self) -> Reply<Result<Self::Ticket, Rejected>, Self::Acquiring> {
        match self.inner.acquire_async() {
            Reply::Ready(answer) => Reply::Ready(self.admit(answer)),
            Reply::Wait(inner) => Reply::Wait(ShadowAcquiring {
                inner,
                shadow: self.is_shadow().then(|| self.observer.clone()),
                ticket: PhantomData,
            }),
        }
    }

    #[inline(always)]
    fn release_async(
        &self,
        ticket: Self::Ticket,
        verdict: TickVerdict,
    ) -> Reply<Release, Self::Releasing> {
        match ticket {
            ShadowTicket::Real(ticket) => self.inner.release_async(ticket, verdict),
            ShadowTicket::Shadow(_) => Reply::Ready(Release::Stale),
        }
    }

    #[inline(always)]
    fn release_detached(&self, ticket: Self::Ticket, verdict: TickVerdict) {
        if let ShadowTicket::Real(ticket) = ticket {
            self.inner.release_detached(ticket, verdict);
        }
    }
}

#[cfg(all(test, not(tripword_loom)))]
mod tests;
