//! [`CallError`], the one error of every call form: the call was not
//! admitted ([`Rejection`]) or it ran and failed.

use core::fmt;
use std::time::Duration;

#[cfg(doc)]
use tripword::kit::CircuitBreaker;
use tripword::{Cause, Rejected};

use super::rejection::Rejection;
#[cfg(doc)]
use crate::clock::RealClock;

/// Why a guarded call did not return `Ok`: the breaker did not admit it
/// (the function, future or inner service was not called), or it ran and
/// returned an error. The one error of every call form:
/// [`BreakerExt::call`](crate::BreakerExt::call) and its siblings,
/// [`call_async`](crate::BreakerExt::call_async), the tower `BreakerLayer`
/// and, with the request's key in its rejection, the per-key
/// `RegistryLayer`.
///
/// The [`Rejection`] of `Open` says why ([`Cause`]), how long until a call
/// could be admitted (a [`Duration`] on a clock that knows its tick), which
/// breaker said no, if it has a name, and for which key, if the layer
/// picked the breaker by one:
///
/// ```
/// use std::time::Duration;
/// use tripword_std::{BreakerExt, CallError, MonotonicClock, RealClock, Settings};
///
/// let b = Settings::new().failure_threshold(1).open_for(Duration::from_secs(60)).build()?;
/// let _ = b.call(|| Err::<(), _>("timeout")); // trips
/// let err = b.call(|| Ok::<_, &str>(())).unwrap_err();
/// let wait = err.retry_after();
/// // At most the open time (and its tick for the clock's rounding), never early.
/// assert!(wait.is_some_and(|w| w <= Duration::from_secs(60) + MonotonicClock::TICK));
/// assert!(err.to_string().starts_with("circuit open: call not admitted (retry after "));
///
/// let inner = CallError::Inner("timeout");
/// assert_eq!(inner.to_string(), "timeout");
/// assert_eq!(inner.into_inner(), Some("timeout"));
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
///
/// It is an [`Error`](std::error::Error) whenever `E` is `Debug + Display`,
/// tower's `BoxError` included (a `Box<dyn Error + Send + Sync>` does not
/// implement `Error` itself), so it converts into a `BoxError` with `?` and
/// composes with layers outside it. The price: it cannot forward the inner
/// error's [`source`](std::error::Error::source); [`inner`](Self::inner)
/// gives the error itself, whose chain is then the caller's to walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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

    /// The rejection, if the call was not admitted: its
    /// [`cause`](Rejection::cause), its wait
    /// ([`retry_after`](Rejection::retry_after), or in ticks
    /// [`retry_after_ticks`](Rejection::retry_after_ticks)), the
    /// breaker's [`name`](Rejection::name) and the request's
    /// [`key`](Rejection::key).
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
    /// assert_eq!(err.rejected().and_then(|r| r.retry_after_ticks()), None); // no timer ends it
    /// assert_eq!(CallError::Inner(()).rejected(), None);
    /// ```
    pub fn rejected(&self) -> Option<&Rejection> {
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

    /// The key whose breaker rejected the call, as text, if the call was
    /// rejected by a breaker picked by key (the per-key tower layer): see
    /// [`Rejection::key`].
    ///
    /// ```
    /// use tripword_std::CallError;
    /// assert_eq!(CallError::Inner(()).key(), None);
    /// ```
    pub fn key(&self) -> Option<&'static str> {
        self.rejected().and_then(Rejection::key)
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
        self.rejected().map(Rejection::cause)
    }

    /// How long until a call could be admitted: `None` if the call ran,
    /// if the breaker is forced open (no timer ends that), or if its clock
    /// does not know its tick ([`Rejection::retry_after`]). An upper bound
    /// on the real time left (see [`RealClock::duration`]).
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
    /// assert_eq!(err.to_string(), "circuit open: call not admitted (retry after 6.0s)");
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    pub fn retry_after(&self) -> Option<Duration> {
        self.rejected().and_then(Rejection::retry_after)
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
    /// A rejection as [`CallError::Open`], with no tick length and no name
    /// ([`Rejection::new`]).
    ///
    /// ```
    /// use tripword::{Breaker, Config};
    /// use tripword::clock::ManualClock;
    /// use tripword_std::{CallError, Rejection};
    ///
    /// let clock = ManualClock::new(0);
    /// let b = Breaker::new(Config::new(), &clock);
    /// b.force_open();
    /// let rejected = b.acquire().unwrap_err();
    /// assert_eq!(CallError::<()>::from(rejected), CallError::Open(Rejection::new(rejected)));
    /// ```
    fn from(rejected: Rejected) -> Self {
        CallError::Open(Rejection::new(rejected))
    }
}

impl<E> From<Rejection> for CallError<E> {
    /// A rejection as [`CallError::Open`] (what a `#[breaker]` fn returning
    /// `Result<T, CallError<E>>` does with one).
    fn from(rejected: Rejection) -> Self {
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

impl<E: fmt::Debug + fmt::Display> std::error::Error for CallError<E> {}
