//! Classification: how a call's result counts towards the breaker.
//!
//! A classifier is any `Fn(&Result<T, E>) -> Outcome` (or `-> Verdict`, to
//! say how long to stay open, or `-> TickVerdict`; or any [`Classify`]).
//! Only failures that say
//! the dependency is unhealthy (timeouts, connection errors, 5xx) should be
//! [`Outcome::Failure`]; the caller's own mistakes (a 404, a validation
//! error) are [`Outcome::Ignored`] and change no count.
//! [`BreakerExt::call`](crate::BreakerExt::call) uses [`ok_or_failure`]; a
//! [`CallPolicy`](crate::CallPolicy) takes any classifier
//! ([`CallPolicy::classify`](crate::CallPolicy::classify)), for
//! [`call_with`](crate::BreakerExt::call_with),
//! [`call_async_with`](crate::BreakerExt::call_async_with) and the `tower`
//! layers:
//!
//! ```
//! use tripword::{Breaker, Config, Outcome, Status};
//! use tripword::clock::ManualClock;
//! use tripword_std::{BreakerExt, CallPolicy, classify};
//!
//! #[derive(Debug)]
//! enum HttpError { NotFound, Unavailable }
//!
//! let clock = ManualClock::new(0);
//! let b = Breaker::new(Config::new().failure_threshold(1), &clock);
//! let by_status = CallPolicy::new().classify(classify::by_error(|e: &HttpError| match e {
//!     HttpError::NotFound => Outcome::Ignored,
//!     HttpError::Unavailable => Outcome::Failure,
//! }));
//! let _ = b.call_with(&by_status, || Err::<(), _>(HttpError::NotFound));
//! assert_eq!(b.status(), Status::Closed); // a 404 says nothing about health
//! let _ = b.call_with(&by_status, || Err::<(), _>(HttpError::Unavailable));
//! assert_eq!(b.status(), Status::Open);
//! ```

use std::sync::Arc;
use std::time::Duration;

use tripword::Outcome;

use crate::clock::RealClock;

/// The default classifier: `Ok` is a success, `Err` a failure.
///
/// ```
/// use tripword::Outcome;
/// use tripword_std::classify::ok_or_failure;
///
/// assert_eq!(ok_or_failure(&Ok::<u8, ()>(1)), Outcome::Success);
/// assert_eq!(ok_or_failure(&Err::<u8, ()>(())), Outcome::Failure);
/// ```
pub fn ok_or_failure<T, E>(result: &Result<T, E>) -> Outcome {
    match result {
        Ok(_) => Outcome::Success,
        Err(_) => Outcome::Failure,
    }
}

/// A classifier from one on errors: `Ok` is a success, `Err(e)` is
/// `classify(e)`.
///
/// ```
/// use tripword::Outcome;
/// use tripword_std::classify::by_error;
///
/// let c = by_error(|code: &u16| if *code >= 500 { Outcome::Failure } else { Outcome::Ignored });
/// assert_eq!(c(&Ok::<(), u16>(())), Outcome::Success);
/// assert_eq!(c(&Err(404)), Outcome::Ignored);
/// assert_eq!(c(&Err(503)), Outcome::Failure);
/// ```
pub fn by_error<T, E, F>(classify: F) -> impl Fn(&Result<T, E>) -> Outcome
where
    F: Fn(&E) -> Outcome,
{
    move |result| match result {
        Ok(_) => Outcome::Success,
        Err(e) => classify(e),
    }
}

/// The classifier [`OkOrFailure`] as a value: `Ok` is a success, `Err` a
/// failure, for any `T` and `E`. The default of a
/// [`CallPolicy`](crate::CallPolicy); a unit type, so a policy or a
/// `tower` layer can name it without naming `T` and `E`.
///
/// ```
/// use tripword::Outcome;
/// use tripword_std::classify::{Classify, OkOrFailure};
///
/// assert_eq!(OkOrFailure.classify(&Ok::<u8, ()>(1)), Outcome::Success);
/// assert_eq!(OkOrFailure.classify(&Err::<u8, &str>("down")), Outcome::Failure);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OkOrFailure;

/// Something that classifies a call's result: every
/// `Fn(&Result<T, E>) -> V` (`V` an [`Outcome`], a [`Verdict`] or a
/// [`TickVerdict`]), [`OkOrFailure`], and the HTTP classifiers of
/// `http` (which are generic over the response body, so they
/// cannot be closures).
///
/// ```
/// use tripword::Outcome;
/// use tripword_std::classify::Classify;
///
/// let by_code = |r: &Result<u16, ()>| match r {
///     Ok(code) if *code >= 500 => Outcome::Failure,
///     Ok(_) => Outcome::Success,
///     Err(()) => Outcome::Failure,
/// };
/// assert_eq!(by_code.classify(&Ok(503)), Outcome::Failure);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot classify a `Result<{T}, {E}>`",
    label = "not a classifier of `Result<{T}, {E}>`",
    note = "a classifier is a `Fn(&Result<T, E>) -> Outcome` (or `-> Verdict`), `OkOrFailure` (the default of `call` and of the tower layers: any `Err` a failure, for any `Result`), or, for `http::Response`s only, `tripword_std::http::StatusClassifier` / `RetryAfterClassifier`",
    note = "to classify by HTTP status, the service must answer `http::Response`s; otherwise drop `.classify(..)` to use `OkOrFailure`, or pass a closure over `&Result<{T}, {E}>`"
)]
pub trait Classify<T, E> {
    /// What it returns: an [`Outcome`], a [`Verdict`] or a [`TickVerdict`].
    type Verdict;
    /// How `result` counts.
    fn classify(&self, result: &Result<T, E>) -> Self::Verdict;
}

impl<T, E, V, F> Classify<T, E> for F
where
    F: Fn(&Result<T, E>) -> V,
{
    type Verdict = V;
    #[inline]
    fn classify(&self, result: &Result<T, E>) -> V {
        self(result)
    }
}

impl<T, E> Classify<T, E> for OkOrFailure {
    type Verdict = Outcome;
    #[inline]
    fn classify(&self, result: &Result<T, E>) -> Outcome {
        ok_or_failure(result)
    }
}

/// Any classifier closure, captures included, behind an [`Arc`]: one type
/// to name where a closure's own type cannot be named (a struct field, a
/// service type). What
/// [`CallPolicy::classify_dyn`](crate::CallPolicy::classify_dyn) keeps;
/// [`DynPolicy`](crate::policy::DynPolicy) names the policy. Cloning it
/// clones the `Arc`.
///
/// ```
/// use tripword::Outcome;
/// use tripword_std::classify::{Classify, DynClassifier};
///
/// let limit = 500;
/// let by_code = DynClassifier::new(move |r: &Result<u16, ()>| match r {
///     Ok(code) if *code >= limit => Outcome::Failure,
///     Ok(_) => Outcome::Success,
///     Err(()) => Outcome::Failure,
/// });
/// assert_eq!(by_code.classify(&Ok(503)), Outcome::Failure);
/// assert_eq!(by_code.clone().classify(&Ok(200)), Outcome::Success);
/// ```
pub struct DynClassifier<T, E, V = Outcome>(Arc<DynFn<T, E, V>>);

/// The closure a [`DynClassifier`] holds.
type DynFn<T, E, V> = dyn Fn(&Result<T, E>) -> V + Send + Sync;

impl<T, E, V> DynClassifier<T, E, V> {
    /// `classify`, behind an [`Arc`].
    pub fn new(classify: impl Fn(&Result<T, E>) -> V + Send + Sync + 'static) -> Self {
        DynClassifier(Arc::new(classify))
    }
}

impl<T, E, V> Clone for DynClassifier<T, E, V> {
    fn clone(&self) -> Self {
        DynClassifier(Arc::clone(&self.0))
    }
}

impl<T, E, V> core::fmt::Debug for DynClassifier<T, E, V> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("DynClassifier(..)")
    }
}

impl<T, E, V> Classify<T, E> for DynClassifier<T, E, V> {
    type Verdict = V;
    #[inline]
    fn classify(&self, result: &Result<T, E>) -> V {
        (self.0)(result)
    }
}

/// How a finished call counts, in real time: an [`Outcome`], or a failure
/// that carries its own open time ([`FailureFor`](Verdict::FailureFor), an
/// HTTP `Retry-After`). A classifier returning `Verdict` needs a breaker on
/// a [`RealClock`] (to turn the `Duration` into ticks); on any other clock,
/// return a [`TickVerdict`].
///
/// ```
/// use std::time::Duration;
/// use tripword::{Cause, Outcome};
/// use tripword_std::classify::Verdict;
/// use tripword_std::clock::{ManualTime, RealClock};
/// use tripword_std::{BreakerExt, CallError, CallPolicy, Settings};
///
/// let clock = ManualTime::new();
/// let b: tripword::Breaker<&ManualTime> = Settings::new().failure_threshold(1).build_on(&clock, ())?;
/// // The dependency said "come back in 30 s".
/// let busy = CallPolicy::new().classify(|r: &Result<(), u16>| match r {
///     Err(503) => Verdict::FailureFor(Duration::from_secs(30)),
///     Err(_) => Verdict::Failure,
///     Ok(()) => Verdict::Success,
/// });
/// let _ = b.call_with(&busy, || Err(503));
/// let Err(CallError::Open(r)) = b.call(|| Ok::<_, u16>(())) else { panic!() };
/// assert_eq!(r.cause(), Cause::Open);
/// // Open for 30 s (in ticks, at least 30 s), not the configured 1 s.
/// assert_eq!(r.retry_after_ticks(), Some(ManualTime::ticks(Duration::from_secs(30))));
/// assert_eq!(r.to_string(), "circuit open: call not admitted (retry after 30.0s)");
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The call succeeded.
    Success,
    /// The call failed in a way that says the dependency is unhealthy.
    Failure,
    /// The result says nothing about the dependency's health.
    Ignored,
    /// A failure that, if it trips the breaker or fails its probe, keeps it
    /// open this long instead of the configured open time (at least this
    /// long: converted like every duration, [`RealClock::ticks`]). A
    /// failure like any other if it does neither.
    FailureFor(Duration),
}

impl From<Outcome> for Verdict {
    /// The same outcome, with no open time of its own.
    ///
    /// ```
    /// use tripword::Outcome;
    /// use tripword_std::classify::Verdict;
    /// assert_eq!(Verdict::from(Outcome::Ignored), Verdict::Ignored);
    /// ```
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Success => Verdict::Success,
            Outcome::Failure => Verdict::Failure,
            Outcome::Ignored => Verdict::Ignored,
        }
    }
}

/// A [`Verdict`] in a clock's ticks: what every classifier's answer becomes
/// before it is recorded (the core's, which every
/// [`CircuitBreaker`](tripword::CircuitBreaker) releases with), and what a
/// classifier may return on a clock with no stated tick length (a
/// [`ManualClock`](tripword::clock::ManualClock)).
///
/// ```
/// use tripword::Outcome;
/// use tripword_std::classify::TickVerdict;
/// assert_eq!(TickVerdict::from(Outcome::Failure), TickVerdict::Failure);
/// assert_eq!(TickVerdict::FailureFor(3_000).outcome(), Outcome::Failure);
/// ```
pub use tripword::kit::TickVerdict;

mod sealed {
    pub trait Sealed {}
    impl Sealed for tripword::Outcome {}
    impl Sealed for super::Verdict {}
    impl Sealed for super::TickVerdict {}
}

/// What a classifier may return on a breaker whose clock is `C`: an
/// [`Outcome`] or a [`TickVerdict`] on any clock, a [`Verdict`] (whose open
/// time is a `Duration`) on a [`RealClock`]. Sealed.
#[diagnostic::on_unimplemented(
    message = "a classifier returning `{Self}` cannot be used with a breaker on the clock `{C}`",
    note = "return an `Outcome` or a `TickVerdict` (ticks) on any clock; a `Verdict` (a `Duration`) needs a clock that implements `tripword_std::clock::RealClock` (`MonotonicClock`, `MillisClock`, `ManualTime`)"
)]
pub trait IntoVerdict<C>: sealed::Sealed {
    /// The verdict in `C`'s ticks.
    fn into_ticks(self) -> TickVerdict;
}

impl<C> IntoVerdict<C> for Outcome {
    #[inline(always)]
    fn into_ticks(self) -> TickVerdict {
        TickVerdict::from(self)
    }
}

impl<C> IntoVerdict<C> for TickVerdict {
    #[inline(always)]
    fn into_ticks(self) -> TickVerdict {
        self
    }
}

impl<C: RealClock> IntoVerdict<C> for Verdict {
    /// `FailureFor(d)` becomes `FailureFor(C::ticks(d))`: at least `d`.
    #[inline]
    fn into_ticks(self) -> TickVerdict {
        match self {
            Verdict::Success => TickVerdict::Success,
            Verdict::Failure => TickVerdict::Failure,
            Verdict::Ignored => TickVerdict::Ignored,
            Verdict::FailureFor(d) => TickVerdict::FailureFor(C::ticks(d)),
        }
    }
}
