//! Running a closure through a breaker.
//!
//! [`BreakerExt::call`] asks the breaker first: when the circuit is open the
//! closure is **not run** and the result is [`CallError::Open`]. Admitted, it
//! runs the closure and records how it went: `Ok` a success, `Err` a failure
//! (returned as [`CallError::Inner`]), a panic a failure, after which the
//! panic keeps unwinding. [`BreakerExt::call_classified`] lets a classifier
//! decide instead (see [`classify`](crate::classify)).
//!
//! ```
//! use tripword::{Breaker, Cause, Config, Status};
//! use tripword::clock::ManualClock;
//! use tripword_std::{BreakerExt, CallError};
//!
//! let clock = ManualClock::new(0);
//! let b = Breaker::new(Config::new().failure_threshold(2).open_for(100), &clock);
//!
//! assert_eq!(b.call(|| Ok::<_, &str>(7)), Ok(7));
//! assert_eq!(b.call(|| Err::<u32, _>("timeout")), Err(CallError::Inner("timeout")));
//! assert_eq!(b.call(|| Err::<u32, _>("timeout")), Err(CallError::Inner("timeout")));
//! assert_eq!(b.status(), Status::Open);
//!
//! let mut ran = false;
//! clock.advance(30);
//! let r = b.call(|| { ran = true; Ok::<_, &str>(7) });
//! assert!(!ran); // not called while open
//! let Err(CallError::Open(rejected)) = r else { panic!("{r:?}") };
//! assert_eq!(rejected.cause(), Cause::Open);
//! assert_eq!(rejected.retry_after_ticks(), Some(70));
//! // A `ManualClock` states no tick length: the wait is shown in ticks.
//! assert_eq!(rejected.to_string(), "circuit open: call not admitted (retry after 70 ticks)");
//! ```

use core::fmt;
use core::future::Future;
use std::sync::Arc;
use std::time::Duration;

#[cfg(doc)]
use tripword::Breaker;
use tripword::kit::CircuitBreaker;
use tripword::{Cause, Clock, Outcome, Rejected};

use crate::classify::{Classify, IntoVerdict};
#[cfg(doc)]
use crate::clock::RealClock;
use crate::clock::ticks_to_duration;
use crate::future::{CallAsync, CallOrElse};
use crate::guard::Pending;
use crate::policy::{AsPolicy, CallPolicy, Timing};

/// Why a call through the breaker did not return `Ok`: the breaker did not
/// admit it (the function was not called), or the function returned an
/// error.
///
/// The [`Rejection`] of `Open` says why ([`Cause`]), how long until a call
/// could be admitted (a [`Duration`] when the breaker's clock states its
/// tick length, as every [`RealClock`] here does; in ticks always), and the
/// breaker's name when it has one (`circuit open for "payments": ...`, from
/// a named observer); it reads that way too:
///
/// ```
/// use std::time::Duration;
/// use tripword_std::{Breaker, BreakerExt, CallError, ManualTime, RealClock, Settings};
///
/// let clock = ManualTime::new();
/// let b: Breaker<&ManualTime> = Settings::new()
///     .failure_threshold(1)
///     .open_for(Duration::from_secs(60))
///     .build_on(&clock, ())?;
/// let _ = b.call(|| Err::<(), _>("timeout")); // trips
/// clock.advance(Duration::from_millis(250));
/// let err = b.call(|| Ok::<_, &str>(())).unwrap_err();
/// // The open time and its tick for the clock's rounding, less 250 ms.
/// assert_eq!(err.retry_after(), Some(Duration::from_micros(59_750_001)));
/// assert_eq!(err.to_string(), "circuit open: call not admitted (retry after 59.8s)");
///
/// let inner = CallError::Inner("timeout");
/// assert_eq!(inner.to_string(), "timeout");
/// assert_eq!(inner.into_inner(), Some("timeout"));
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CallError<E> {
    /// The circuit is open (or a probe is running): the function was not
    /// called.
    Open(Rejection),
    /// The function was called and returned this error.
    Inner(E),
}

impl<E> CallError<E> {
    /// Whether the call was rejected without running.
    ///
    /// ```
    /// use tripword_std::CallError;
    /// assert!(!CallError::Inner(()).is_open());
    /// ```
    pub fn is_open(&self) -> bool {
        matches!(self, CallError::Open(_))
    }

    /// The core's rejection, if the call was not admitted: its
    /// [`cause`](Rejected::cause) and [`retry_after`](Rejected::retry_after)
    /// in ticks. [`rejection`](Self::rejection) has the wait as a
    /// [`Duration`] and the breaker's name too.
    ///
    /// ```
    /// use tripword::{Breaker, Cause, Config};
    /// use tripword::clock::ManualClock;
    /// use tripword_std::{BreakerExt, CallError};
    ///
    /// let clock = ManualClock::new(0);
    /// let b = Breaker::new(Config::new(), &clock);
    /// b.force_open();
    /// let err = b.call(|| Ok::<_, ()>(())).unwrap_err();
    /// assert_eq!(err.rejected().map(|r| r.cause()), Some(Cause::ForcedOpen));
    /// assert_eq!(err.rejected().and_then(|r| r.retry_after()), None); // no timer ends it
    /// assert_eq!(CallError::Inner(()).rejected(), None);
    /// ```
    pub fn rejected(&self) -> Option<&Rejected> {
        self.rejection().map(Rejection::as_rejected)
    }

    /// The rejection, if the call was not admitted: its cause, its wait
    /// (as a [`Duration`] when the breaker's clock states its tick length)
    /// and the breaker's name.
    ///
    /// ```
    /// use tripword::Cause;
    /// use tripword_std::{BreakerExt, CallError, Settings};
    ///
    /// let b = Settings::new().build()?;
    /// b.force_open();
    /// let err = b.call(|| Ok::<_, ()>(())).unwrap_err();
    /// let rejection = err.rejection().unwrap();
    /// assert_eq!((rejection.cause(), rejection.retry_after()), (Cause::ForcedOpen, None));
    /// assert_eq!(CallError::Inner(()).rejection(), None);
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    pub fn rejection(&self) -> Option<&Rejection> {
        match self {
            CallError::Open(r) => Some(r),
            CallError::Inner(_) => None,
        }
    }

    /// The function's own error, if it ran.
    ///
    /// ```
    /// use tripword_std::CallError;
    /// assert_eq!(CallError::Inner(3).into_inner(), Some(3));
    /// ```
    pub fn into_inner(self) -> Option<E> {
        match self {
            CallError::Open(_) => None,
            CallError::Inner(e) => Some(e),
        }
    }

    /// A reference to the function's own error, if it ran.
    ///
    /// ```
    /// use tripword_std::CallError;
    /// assert_eq!(CallError::Inner(3).inner(), Some(&3));
    /// ```
    pub fn inner(&self) -> Option<&E> {
        match self {
            CallError::Open(_) => None,
            CallError::Inner(e) => Some(e),
        }
    }

    /// Why the call was not admitted, if it was not.
    ///
    /// ```
    /// use tripword::{Breaker, Cause, Config};
    /// use tripword::clock::ManualClock;
    /// use tripword_std::{BreakerExt, CallError};
    ///
    /// let clock = ManualClock::new(0);
    /// let b = Breaker::new(Config::new(), &clock);
    /// b.force_open();
    /// assert_eq!(b.call(|| Ok::<_, ()>(())).unwrap_err().cause(), Some(Cause::ForcedOpen));
    /// assert_eq!(CallError::Inner(()).cause(), None);
    /// ```
    pub fn cause(&self) -> Option<Cause> {
        self.rejection().map(Rejection::cause)
    }

    /// How long until a call could be admitted, as a [`Duration`]: `None`
    /// if the call ran, if the breaker is forced open (no timer ends that),
    /// or if its clock states no tick length (see
    /// [`Rejection::retry_after`]). An upper bound on the real time left
    /// (see [`RealClock::duration`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::clock::ManualTime;
    /// use tripword_std::{BreakerExt, Settings};
    ///
    /// let clock = ManualTime::new();
    /// let b: tripword::Breaker<&ManualTime> = Settings::new()
    ///     .failure_threshold(1)
    ///     .open_for(Duration::from_secs(10))
    ///     .build_on(&clock, ())?;
    /// let _ = b.call(|| Err::<(), _>("down"));
    /// clock.advance(Duration::from_secs(4));
    /// let err = b.call(|| Ok::<_, &str>(())).unwrap_err();
    /// // 10 s and the tick the conversion adds, less the 4 s that passed.
    /// assert_eq!(err.retry_after(), Some(Duration::from_micros(6_000_001)));
    /// assert_eq!(err.retry_after_ticks(), Some(6_000_001));
    /// assert_eq!(err.to_string(), "circuit open: call not admitted (retry after 6s)");
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    pub fn retry_after(&self) -> Option<Duration> {
        self.rejection().and_then(Rejection::retry_after)
    }

    /// How long until a call could be admitted, in the breaker's clock
    /// ticks: `None` if the call ran, or if the breaker is forced open.
    pub fn retry_after_ticks(&self) -> Option<u64> {
        self.rejection().and_then(Rejection::retry_after_ticks)
    }

    /// Maps the function's error, keeping `Open` as is.
    ///
    /// ```
    /// use tripword_std::CallError;
    /// let e = CallError::Inner(404).map_inner(|code| format!("HTTP {code}"));
    /// assert_eq!(e, CallError::Inner("HTTP 404".to_string()));
    /// ```
    pub fn map_inner<F>(self, f: impl FnOnce(E) -> F) -> CallError<F> {
        match self {
            CallError::Open(r) => CallError::Open(r),
            CallError::Inner(e) => CallError::Inner(f(e)),
        }
    }
}

impl<E> From<Rejected> for CallError<E> {
    /// A rejection as [`CallError::Open`].
    ///
    /// ```
    /// use tripword::{Breaker, Config};
    /// use tripword::clock::ManualClock;
    /// use tripword_std::CallError;
    ///
    /// let clock = ManualClock::new(0);
    /// let b = Breaker::new(Config::new(), &clock);
    /// b.force_open();
    /// let rejected = b.acquire().unwrap_err();
    /// assert_eq!(CallError::<()>::from(rejected).rejected(), Some(&rejected));
    /// ```
    fn from(rejected: Rejected) -> Self {
        CallError::Open(Rejection::new(rejected))
    }
}

impl<E> From<Rejection> for CallError<E> {
    /// A rejection as [`CallError::Open`].
    fn from(rejection: Rejection) -> Self {
        CallError::Open(rejection)
    }
}

impl<E: fmt::Display> fmt::Display for CallError<E> {
    /// `Open` reads as the rejection; `Inner` as the function's error itself.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Open(r) => fmt::Display::fmt(r, f),
            CallError::Inner(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for CallError<E> {
    /// `Inner` is transparent: its source is the function error's source.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CallError::Open(_) => None,
            CallError::Inner(e) => e.source(),
        }
    }
}

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
pub trait CallResult: sealed::Sealed {
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

mod sealed {
    pub trait Sealed {}
    impl<T, E> Sealed for Result<T, E> {}
}

/// A call the breaker did not admit, as this crate reports it: the core's
/// [`Rejected`] (why, and the wait in the breaker's ticks), the length of
/// the breaker's tick when its clock states one
/// ([`Clock::tick_length`]: every
/// [`RealClock`] here does), and the breaker's name when it has one
/// ([`CircuitBreaker::name`]: an observer's, such as
/// [`TracingObserver`](crate::observe)'s). What [`CallError::Open`] and the
/// `tower` errors carry, and what a fallback is handed.
///
/// It reads as `circuit open: call not admitted (retry after 29.9s)`, with
/// `for "payments"` after the cause when the breaker has a name, and the
/// wait in ticks (`retry after 70 ticks`) on a clock with no stated tick
/// length (a [`ManualClock`](tripword::clock::ManualClock)). The wait is
/// rounded to three significant digits below a minute (`29.9s`, `500ms`,
/// `1.5s`, `250µs`) and to whole seconds from a minute on (`2m 30s`,
/// `1h 5s`); [`retry_after`](Self::retry_after) has it exactly.
///
/// ```
/// use std::time::Duration;
/// use tripword::Cause;
/// use tripword_std::clock::ManualTime;
/// use tripword_std::{BreakerExt, Settings};
///
/// let clock = ManualTime::new();
/// let b: tripword::Breaker<&ManualTime> = Settings::new().failure_threshold(1).open_for(Duration::from_secs(5)).build_on(&clock, ())?;
/// let _ = b.call(|| Err::<u32, _>("down"));
/// let price = b.call_or_else(
///     || Ok::<u32, &str>(42),
///     |open| {
///         assert_eq!(open.cause(), Cause::Open);
///         assert!(open.retry_after() > Some(Duration::from_secs(4)));
///         assert_eq!(open.to_string(), "circuit open: call not admitted (retry after 5s)");
///         Ok(7) // the cached price
///     },
/// );
/// assert_eq!(price, Ok(7));
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Rejection {
    rejected: Rejected,
    // The tick's length in nanoseconds; 0 when the clock states none.
    tick_nanos: u64,
    name: Option<Arc<str>>,
}

impl Rejection {
    /// `rejected`, with no tick length (its wait in ticks only) and no
    /// name.
    pub const fn new(rejected: Rejected) -> Self {
        Rejection {
            rejected,
            tick_nanos: 0,
            name: None,
        }
    }

    /// `rejected`, made by `breaker`: with its clock's tick length and its
    /// name. Out of line: a rejection is the cold path, and copying the
    /// name is its one allocation.
    #[cold]
    #[inline(never)]
    pub fn of<B: CircuitBreaker + ?Sized>(breaker: &B, rejected: Rejected) -> Self {
        let tick = breaker.clock().tick_length();
        let named = Rejection::new(rejected);
        let named = match breaker.name() {
            Some(name) => named.with_name(name),
            None => named,
        };
        match tick {
            Some(tick) => named.with_tick(tick),
            None => named,
        }
    }

    /// The same rejection, its wait in ticks of length `tick` (a zero
    /// `tick` is read as 1 ns).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::{Breaker, BreakerExt, Config, Rejection};
    /// use tripword::clock::ManualClock;
    ///
    /// let clock = ManualClock::new(0);
    /// let b = Breaker::new(Config::new().failure_threshold(1).open_for(1_500), &clock);
    /// let _ = b.call(|| Err::<(), _>(()));
    /// let rejection = Rejection::new(b.acquire().unwrap_err()).with_tick(Duration::from_millis(1));
    /// assert_eq!(rejection.retry_after(), Some(Duration::from_millis(1_500)));
    /// assert_eq!(rejection.to_string(), "circuit open: call not admitted (retry after 1.5s)");
    /// ```
    pub fn with_tick(mut self, tick: Duration) -> Self {
        self.tick_nanos = u64::try_from(tick.as_nanos()).unwrap_or(u64::MAX).max(1);
        self
    }

    /// The same rejection, of the breaker called `name`.
    pub fn with_name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The core's rejection (its wait in ticks).
    pub const fn rejected(&self) -> Rejected {
        self.rejected
    }

    /// The core's rejection, by reference.
    pub(crate) const fn as_rejected(&self) -> &Rejected {
        &self.rejected
    }

    /// Why the call was not admitted.
    pub const fn cause(&self) -> Cause {
        self.rejected.cause()
    }

    /// Ticks until a call could be admitted; `None` when forced open.
    pub const fn retry_after_ticks(&self) -> Option<u64> {
        self.rejected.retry_after()
    }

    /// How long until a call could be admitted (an upper bound, see
    /// [`RealClock::duration`]); `None` when forced open, or when the
    /// breaker's clock states no tick length (use
    /// [`retry_after_ticks`](Self::retry_after_ticks) there).
    pub fn retry_after(&self) -> Option<Duration> {
        let tick = self.tick()?;
        self.retry_after_ticks()
            .map(|ticks| ticks_to_duration(ticks, tick))
    }

    /// The length of the breaker's tick, if its clock states one.
    pub fn tick(&self) -> Option<Duration> {
        match self.tick_nanos {
            0 => None,
            nanos => Some(Duration::from_nanos(nanos)),
        }
    }

    /// The breaker's name, if it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Writes `circuit <cause>[ for <subject>]: call not admitted[ (retry
    /// after <wait>)]`, the subject being `for_` (a registry key) or else
    /// the breaker's name.
    pub(crate) fn describe(
        &self,
        f: &mut fmt::Formatter<'_>,
        for_: Option<&dyn fmt::Debug>,
    ) -> fmt::Result {
        write!(f, "circuit {}", self.cause())?;
        match (for_, self.name()) {
            (Some(subject), _) => write!(f, " for {subject:?}")?,
            (None, Some(name)) => write!(f, " for {name:?}")?,
            (None, None) => {}
        }
        f.write_str(": call not admitted")?;
        match (self.retry_after(), self.retry_after_ticks()) {
            (Some(wait), _) => write!(f, " (retry after {})", Wait(wait)),
            (None, Some(ticks)) => write!(f, " (retry after {ticks} ticks)"),
            (None, None) => Ok(()),
        }
    }
}

impl From<Rejected> for Rejection {
    /// [`Rejection::new`].
    fn from(rejected: Rejected) -> Self {
        Rejection::new(rejected)
    }
}

impl From<Rejection> for Rejected {
    /// The core's rejection, its wait in ticks.
    fn from(rejection: Rejection) -> Self {
        rejection.rejected
    }
}

impl fmt::Debug for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rejection")
            .field("cause", &self.cause())
            .field("retry_after_ticks", &self.retry_after_ticks())
            .field("tick", &self.tick())
            .field("name", &self.name())
            .finish()
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.describe(f, None)
    }
}

impl std::error::Error for Rejection {}

/// A wait as people read it: rounded to the nearest three significant
/// digits below a minute (`29.9s`, `500ms`, `1.5s`, `250µs`, `999ns`), to
/// the nearest whole second from a minute on (`1m`, `2m 30s`, `1h 5s`,
/// `2d 3h`).
pub(crate) struct Wait(pub(crate) Duration);

impl fmt::Display for Wait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SEC: u128 = 1_000_000_000;
        let nanos = self.0.as_nanos();
        if nanos == 0 {
            return f.write_str("0s");
        }
        if nanos < 60 * SEC {
            let (unit, name) = [(SEC, "s"), (1_000_000, "ms"), (1_000, "µs"), (1, "ns")]
                .into_iter()
                .find(|&(unit, _)| nanos >= unit)
                .unwrap_or((1, "ns"));
            let whole = nanos / unit;
            let decimals = match (unit, whole) {
                (1, _) => 0,
                (_, 100..) => 0,
                (_, 10..) => 1,
                _ => 2,
            };
            let step = unit / 10u128.pow(decimals);
            let steps = (nanos + step / 2) / step;
            let rounded = steps * step;
            // Rounded up into the next unit (999.6ms, 59.96s): say it there.
            if rounded / unit >= 1_000 || rounded >= 60 * SEC {
                let rounded = u64::try_from(rounded).unwrap_or(u64::MAX);
                return Wait(Duration::from_nanos(rounded)).fmt(f);
            }
            let scale = 10u128.pow(decimals);
            let (whole, mut fraction) = (steps / scale, steps % scale);
            write!(f, "{whole}")?;
            let mut digits = decimals;
            while digits > 0 && fraction % 10 == 0 {
                fraction /= 10;
                digits -= 1;
            }
            if digits > 0 {
                write!(f, ".{fraction:0width$}", width = digits as usize)?;
            }
            return f.write_str(name);
        }
        let mut secs = (nanos + SEC / 2) / SEC;
        let mut first = true;
        for (unit, name) in [(86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")] {
            let count = secs / unit;
            secs %= unit;
            if count > 0 {
                if !first {
                    f.write_str(" ")?;
                }
                write!(f, "{count}{name}")?;
                first = false;
            }
        }
        Ok(())
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
/// Every method asks the breaker first: not admitted, the function is not
/// run (the future is dropped unpolled) and the result is
/// [`CallError::Open`]. Admitted, exactly one outcome is recorded: the
/// classified result, a failure if the function, the future or the
/// classifier panics (the panic goes on), or, for a future dropped before it
/// completes, the policy's cancel outcome ([`Ignored`](Outcome::Ignored) by
/// default; see `docs/services.md`, "Cancellation").
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
        self.call_with(&CallPolicy::new(), f)
    }

    /// Like [`call`](BreakerExt::call), but `classify` decides what the
    /// result counts as: an [`Outcome`], or a
    /// [`Verdict`](crate::classify::Verdict) that may carry an open time of
    /// its own. A panic, in `f` or in `classify`, is still a failure.
    ///
    /// ```
    /// use tripword::{Outcome, Status};
    /// use tripword_std::{BreakerExt, CallError, Settings};
    ///
    /// let b = Settings::new().failure_threshold(1).build()?;
    /// let not_found_is_fine = |r: &Result<(), u16>| match r {
    ///     Ok(()) => Outcome::Success,
    ///     Err(404) => Outcome::Ignored,
    ///     Err(_) => Outcome::Failure,
    /// };
    /// let r = b.call_classified(not_found_is_fine, || Err(404));
    /// assert_eq!(r, Err(CallError::Inner(404)));
    /// assert_eq!(b.status(), Status::Closed); // ignored: no count
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    #[inline]
    fn call_classified<T, E, V, K, R, F>(&self, classify: K, f: F) -> Result<T, CallError<E>>
    where
        K: Fn(&Result<T, E>) -> V,
        V: IntoVerdict<Self::Clock>,
        F: FnOnce() -> R,
        R: CallResult<Value = T, Error = E>,
    {
        self.call_with(&CallPolicy::new().classify(classify), f)
    }

    /// Like [`call`](BreakerExt::call), counted by `policy`: its classifier
    /// and its slow-call threshold (see [`CallPolicy`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::Status;
    /// use tripword_std::clock::ManualTime;
    /// use tripword_std::{BreakerExt, CallPolicy, Settings};
    ///
    /// let clock = ManualTime::new();
    /// let b: tripword::Breaker<&ManualTime> = Settings::new().failure_threshold(1).build_on(&clock, ())?;
    /// let policy = CallPolicy::new().slow_after(Duration::from_millis(100));
    /// let r = b.call_with(&policy, || {
    ///     clock.advance(Duration::from_millis(150)); // a slow success
    ///     Ok::<_, ()>("late")
    /// });
    /// assert_eq!(r, Ok("late"));
    /// assert_eq!(b.status(), Status::Open); // counted as a failure
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    #[inline]
    fn call_with<T, E, K, S, R, F>(
        &self,
        policy: &CallPolicy<K, S>,
        f: F,
    ) -> Result<T, CallError<E>>
    where
        K: Classify<T, E>,
        K::Verdict: IntoVerdict<Self::Clock>,
        S: Timing<Self::Clock>,
        F: FnOnce() -> R,
        R: CallResult<Value = T, Error = E>,
    {
        let ticket = self.acquire().map_err(|r| Rejection::of(self, r))?;
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
        result.map_err(CallError::Inner)
    }

    /// Runs `f` if the breaker admits the call; otherwise runs `fallback`
    /// with the [`Rejection`] (its cause and wait), and returns what it
    /// returns. Counted as [`call`](BreakerExt::call) counts.
    ///
    /// ```
    /// use tripword::{Breaker, Config};
    /// use tripword::clock::ManualClock;
    /// use tripword_std::BreakerExt;
    ///
    /// let clock = ManualClock::new(0);
    /// let b = Breaker::new(Config::new().failure_threshold(1).open_for(100), &clock);
    /// let fetch = || Err::<&str, _>("down");
    /// assert_eq!(b.call_or_else(fetch, |_| Ok("cached")), Err("down")); // trips
    /// let stale = b.call_or_else(fetch, |open| {
    ///     assert_eq!(open.retry_after_ticks(), Some(100));
    ///     Ok("cached")
    /// });
    /// assert_eq!(stale, Ok("cached"));
    /// ```
    #[inline]
    fn call_or_else<T, E, R, F, G>(&self, f: F, fallback: G) -> Result<T, E>
    where
        F: FnOnce() -> R,
        R: CallResult<Value = T, Error = E>,
        G: FnOnce(Rejection) -> Result<T, E>,
    {
        match self.call(f) {
            Ok(value) => Ok(value),
            Err(CallError::Inner(e)) => Err(e),
            Err(CallError::Open(rejection)) => fallback(rejection),
        }
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
        CallAsync::start(self, CallPolicy::new(), move || future)
    }

    /// Like [`call_async`](BreakerExt::call_async), but `classify` decides
    /// what the result counts as (see
    /// [`call_classified`](BreakerExt::call_classified)).
    #[inline]
    fn call_async_classified<T, E, V, K, F>(
        &self,
        classify: K,
        future: F,
    ) -> CallAsync<&Self, F, CallPolicy<K>>
    where
        K: Fn(&Result<T, E>) -> V,
        V: IntoVerdict<Self::Clock>,
        F: Future<Output = Result<T, E>>,
    {
        CallAsync::start(self, CallPolicy::new().classify(classify), move || future)
    }

    /// Like [`call_async`](BreakerExt::call_async), counted by `policy`:
    /// its classifier, its slow-call threshold and its cancel outcome.
    #[inline]
    fn call_async_with<'p, T, E, K, S, F>(
        &self,
        policy: &'p CallPolicy<K, S>,
        future: F,
    ) -> CallAsync<&Self, F, &'p CallPolicy<K, S>>
    where
        K: Classify<T, E>,
        K::Verdict: IntoVerdict<Self::Clock>,
        S: Timing<Self::Clock>,
        F: Future<Output = Result<T, E>>,
    {
        CallAsync::start(self, policy, move || future)
    }

    /// Runs `future` through the breaker (as
    /// [`call_async`](BreakerExt::call_async)); not admitted, awaits the
    /// future `fallback` makes from the [`Rejection`] instead.
    #[inline]
    fn call_async_or_else<T, E, F, G, Fb>(
        &self,
        future: F,
        fallback: Fb,
    ) -> CallOrElse<&Self, F, CallPolicy, Fb, G>
    where
        F: Future<Output = Result<T, E>>,
        Fb: FnOnce(Rejection) -> G,
        G: Future<Output = Result<T, E>>,
    {
        CallOrElse::new(self.call_async(future), fallback)
    }

    /// Like [`call_async`](BreakerExt::call_async), but the call future
    /// owns its handle on the breaker, an [`Arc`], instead of borrowing
    /// it: it borrows nothing the protected future does not, so it can be
    /// returned from a function, kept in a struct, or spawned. The handle
    /// from a registry, [`Registry::get`](crate::Registry::get), is such an
    /// `Arc` (a closure given to [`Registry::with`](crate::Registry::with)
    /// cannot return a call future, which would borrow the entry).
    ///
    /// ```
    /// use std::future::Future;
    /// use tripword_std::{BreakerExt, CallError, Registry, Settings};
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
    ///     hosts.get(host).call_async_owned(fetch(host))
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let hosts: Registry<String> = Settings::new().build_registry()?;
    /// let task = tokio::spawn(fetch_through(&hosts, "db-1.internal"));
    /// assert_eq!(task.await??, 13);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    fn call_async_owned<T, E, F>(self: Arc<Self>, future: F) -> CallAsync<Arc<Self>, F, CallPolicy>
    where
        F: Future<Output = Result<T, E>>,
    {
        CallAsync::start(self, CallPolicy::new(), move || future)
    }

    /// Like [`call_async_owned`](BreakerExt::call_async_owned), counted by
    /// `policy`, which the call future owns too: a [`CallPolicy`] by value,
    /// in an [`Arc`], or a `&'static` one.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tripword_std::{BreakerExt, CallPolicy, Outcome, Settings, Status};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let breaker = Arc::new(Settings::new().failure_threshold(1).build()?);
    /// let policy = Arc::new(CallPolicy::new().on_cancel(Outcome::Failure));
    /// let call = breaker.clone().call_async_with_owned(policy, std::future::pending::<Result<(), ()>>());
    /// drop(call); // cancelled: a failure, by this policy
    /// assert_eq!(breaker.status(), Status::Open);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    fn call_async_with_owned<T, E, J, F>(
        self: Arc<Self>,
        policy: J,
        future: F,
    ) -> CallAsync<Arc<Self>, F, J>
    where
        J: AsPolicy,
        J::Classify: Classify<T, E>,
        <J::Classify as Classify<T, E>>::Verdict: IntoVerdict<Self::Clock>,
        J::Timing: Timing<Self::Clock>,
        F: Future<Output = Result<T, E>>,
    {
        CallAsync::start(self, policy, move || future)
    }
}

impl<B: CircuitBreaker + ?Sized> BreakerExt for B {}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(nanos: u64) -> String {
        Wait(Duration::from_nanos(nanos)).to_string()
    }

    /// A wait reads rounded to the nearest three significant digits below a
    /// minute, in the largest unit that keeps a whole part, trailing zeros
    /// dropped; from a minute on, in whole seconds and larger units. A value
    /// that rounds up into the next unit (or to a minute) is said there.
    #[test]
    fn a_wait_reads_in_three_significant_digits_or_whole_seconds() {
        const MS: u64 = 1_000_000;
        const S: u64 = 1_000 * MS;
        for (nanos, text) in [
            (0, "0s"),
            (1, "1ns"),
            (999, "999ns"),
            (1_000, "1µs"),
            (1_500, "1.5µs"),
            (12_345, "12.3µs"),
            (250_000, "250µs"),
            (999_499, "999µs"),
            (999_500, "1ms"),
            (499_912_000, "500ms"),
            (12_340_000, "12.3ms"),
            (12_350_000, "12.4ms"),
            (999_600_000, "1s"),
            (S + MS, "1s"),
            (1_005 * MS, "1.01s"),
            (1_500_001_000, "1.5s"),
            (6_000_001_000, "6s"),
            (29_912 * MS, "29.9s"),
            (29_999_999_000, "30s"),
            (59_940 * MS, "59.9s"),
            (59_960 * MS, "1m"),
            (60 * S, "1m"),
            (90 * S + 400 * MS, "1m 30s"),
            (90 * S + 500 * MS, "1m 31s"),
            (3_601 * S, "1h 1s"),
            ((2 * 86_400 + 3 * 3_600) * S, "2d 3h"),
            (u64::MAX, "213503d 23h 34m 34s"),
        ] {
            assert_eq!(shown(nanos), text, "{nanos} ns");
        }
        assert_eq!(Wait(Duration::MAX).to_string(), "213503982334601d 7h 16s");
    }

    /// `Rejection::of` takes the breaker's tick length and name, and the
    /// wait reads in a duration then; with neither, in ticks, as the core's
    /// `Rejected` reads.
    #[test]
    fn a_rejection_reads_with_the_breakers_tick_and_name() {
        use tripword::clock::ManualClock;
        use tripword::{Breaker, Config, Observer, Transition};

        struct Named;
        impl Observer for Named {
            fn on_transition(&self, _: Transition) {}
            fn name(&self) -> Option<&str> {
                Some("payments")
            }
        }
        let ticks = ManualClock::new(0);
        let config = Config::new()
            .open_for(1_500)
            .check::<tripword::W64>()
            .unwrap();
        let b = Breaker::from_parts(config, &ticks, Named);
        b.force_open();
        let forced = Rejection::of(&b, b.acquire().unwrap_err());
        assert_eq!(
            forced.to_string(),
            r#"circuit forced open for "payments": call not admitted"#
        );
        b.force_close();
        b.release(b.acquire().unwrap(), Outcome::Failure);
        for _ in 0..4 {
            b.release(b.acquire().unwrap(), Outcome::Failure);
        }
        let rejected = b.acquire().unwrap_err();
        let named = Rejection::of(&b, rejected);
        assert_eq!((named.name(), named.tick()), (Some("payments"), None));
        assert_eq!(
            named.to_string(),
            r#"circuit open for "payments": call not admitted (retry after 1500 ticks)"#
        );
        assert_eq!(Rejection::new(rejected).to_string(), rejected.to_string());
        let timed = named.with_tick(Duration::from_millis(1));
        assert_eq!(timed.retry_after(), Some(Duration::from_millis(1_500)));
        assert_eq!(
            timed.to_string(),
            r#"circuit open for "payments": call not admitted (retry after 1.5s)"#
        );
        assert_eq!(Rejected::from(timed.clone()), rejected);
        assert_ne!(timed, Rejection::new(rejected));
    }
}
