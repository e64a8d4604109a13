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
//! assert_eq!(rejected.retry_after(), Some(70)); // ticks
//! ```

use core::fmt;

use tripword::{Breaker, Clock, ConfigSource, Observer, Outcome, Rejected, Word};

use crate::classify::ok_or_failure;
use crate::guard::Settle;

/// Why a call through the breaker did not return `Ok`: the breaker did not
/// admit it (the function was not called), or the function returned an
/// error.
///
/// The [`Rejected`] of `Open` says why ([`Cause`](tripword::Cause)) and, in
/// the clock's ticks, how long until a call could be admitted; a
/// [`RealClock`](crate::RealClock) turns that into a [`Duration`](std::time::Duration):
///
/// ```
/// use std::time::Duration;
/// use tripword_std::{BreakerExt, CallError, MonotonicClock, RealClock, Settings};
///
/// let b = Settings::new().failure_threshold(1).open_for(Duration::from_secs(60)).build()?;
/// let _ = b.call(|| Err::<(), _>("timeout")); // trips
/// let err = b.call(|| Ok::<_, &str>(())).unwrap_err();
/// let wait = err.rejected().and_then(|r| r.retry_after()).map(MonotonicClock::duration);
/// // At most the open time (and its tick for the clock's rounding), never early.
/// assert!(wait.is_some_and(|w| w <= Duration::from_secs(60) + MonotonicClock::TICK));
///
/// let inner = CallError::Inner("timeout");
/// assert_eq!(inner.to_string(), "timeout");
/// assert_eq!(inner.into_inner(), Some("timeout"));
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallError<E> {
    /// The circuit is open (or a probe is running): the function was not
    /// called.
    Open(Rejected),
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

    /// The rejection, if the call was not admitted: its
    /// [`cause`](Rejected::cause) and [`retry_after`](Rejected::retry_after)
    /// (in ticks; [`RealClock::duration`](crate::RealClock::duration)
    /// converts them).
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
    /// assert_eq!(CallError::<()>::from(rejected), CallError::Open(rejected));
    /// ```
    fn from(rejected: Rejected) -> Self {
        CallError::Open(rejected)
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

/// Runs closures through a [`Breaker`] of any form: any clock, word width,
/// observer and config source (inline, a
/// [`StaticBreaker`](tripword::StaticBreaker)'s `static`, a
/// [`ConstBreaker`](tripword::ConstBreaker)'s constant).
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
pub trait BreakerExt {
    /// Runs `f` if the breaker admits the call: `Ok` is recorded as a
    /// success, `Err` as a failure, a panic as a failure (and the panic keeps
    /// unwinding). Not admitted, `f` is not called and the result is
    /// [`CallError::Open`].
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
    fn call<T, E, F>(&self, f: F) -> Result<T, CallError<E>>
    where
        F: FnOnce() -> Result<T, E>;

    /// Like [`call`](BreakerExt::call), but `classify` decides what the
    /// result counts as; a panic is still a failure.
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
    fn call_classified<T, E, K, F>(&self, classify: K, f: F) -> Result<T, CallError<E>>
    where
        K: Fn(&Result<T, E>) -> Outcome,
        F: FnOnce() -> Result<T, E>;
}

impl<C: Clock, W: Word, O: Observer, P: ConfigSource<W>> BreakerExt for Breaker<C, W, O, P> {
    #[inline]
    fn call<T, E, F>(&self, f: F) -> Result<T, CallError<E>>
    where
        F: FnOnce() -> Result<T, E>,
    {
        self.call_classified(ok_or_failure, f)
    }

    fn call_classified<T, E, K, F>(&self, classify: K, f: F) -> Result<T, CallError<E>>
    where
        K: Fn(&Result<T, E>) -> Outcome,
        F: FnOnce() -> Result<T, E>,
    {
        let guard = Settle::new(self.permit()?);
        let result = f();
        guard.finish(classify(&result));
        result.map_err(CallError::Inner)
    }
}
