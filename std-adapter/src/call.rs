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
//! assert_eq!(rejected.retry_after_ticks(), Some(70)); // a `ManualClock`: ticks
//! assert_eq!(rejected.to_string(), "circuit open: call not admitted (retry after 70 ticks)");
//! ```

use core::fmt;
use core::future::Future;
use std::sync::Arc;
use std::time::Duration;

#[cfg(doc)]
use tripword::Breaker;
use tripword::kit::CircuitBreaker;
use tripword::{Cause, Outcome, Rejected};

use crate::classify::{Classify, IntoVerdict};
#[cfg(doc)]
use crate::clock::RealClock;
use crate::future::{CallAsync, CallOrElse};
use crate::guard::Pending;
use crate::policy::{AsPolicy, CallPolicy, Timing};

/// Why a guarded call did not return `Ok`: the breaker did not admit it
/// (the function, future or inner service was not called), or it ran and
/// returned an error. The one error of every call form: [`BreakerExt::call`]
/// and its siblings, [`call_async`](BreakerExt::call_async), the tower
/// `BreakerLayer` and, with the request's key in its rejection, the per-key
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

/// Why a call was not admitted, as [`CallError::Open`] carries it and a
/// fallback receives it: the core's [`Rejected`] (its [`Cause`] and its
/// wait in ticks), with the length of the breaker's clock tick and the
/// breaker's [name](CircuitBreaker::name), so that it reads as a person
/// wants it: `circuit 'payments' open: call not admitted (retry after
/// 30.0s)`. Three words and `Copy`: made only when a call is rejected.
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
///         assert_eq!(open.to_string(), "circuit open: call not admitted (retry after 5.0s)");
///         Ok(7) // the cached price
///     },
/// );
/// assert_eq!(price, Ok(7));
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rejection {
    rejected: Rejected,
    /// One tick of the breaker's clock in nanoseconds; 0 when unknown.
    tick_nanos: u64,
    /// The breaker's name, or the interned `Debug` text of the request's
    /// key after a [`KEY_MARK`] (see [`Rejection::for_key`]): one slot for
    /// both, so that a rejection stays four words and a call's `Result`
    /// does not grow.
    label: Option<&'static str>,
}

/// The first character of a label that is a key's text, not a name.
const KEY_MARK: char = '\0';

impl Rejection {
    /// A rejection with no tick length and no name: its wait reads in
    /// ticks. [`of`](Rejection::of) a breaker knows both.
    pub const fn new(rejected: Rejected) -> Self {
        Rejection {
            rejected,
            tick_nanos: 0,
            label: None,
        }
    }

    /// `breaker`'s rejection: the tick of its clock
    /// ([`Clock::TICK_PERIOD`](tripword::Clock::TICK_PERIOD)) and its
    /// [name](CircuitBreaker::name).
    #[inline]
    pub fn of<B: CircuitBreaker + ?Sized>(breaker: &B, rejected: Rejected) -> Self {
        Self::on_clock::<B::Clock>(rejected).named(breaker.name())
    }

    /// A rejection by a breaker on clock `C`, unnamed.
    #[inline]
    pub const fn on_clock<C: tripword::Clock + ?Sized>(rejected: Rejected) -> Self {
        Rejection::new(rejected).with_tick(C::TICK_PERIOD)
    }

    /// The same rejection, for the request whose key is `key` (what the
    /// per-key tower layer does with its breaker's rejection): the key's
    /// `Debug` text, read back by [`key`](Self::key) and shown by
    /// `Display`. The text is interned, so that a rejection stays `Copy`
    /// and three words: each distinct key text is allocated once for the
    /// life of the process, and past 65 536 distinct texts a rejection
    /// carries no key (its name and wait still say which breaker and how
    /// long). Only a rejection pays for it, never an admitted call. A
    /// breaker with a [name](Self::name) is shown by its name and the key
    /// is not kept (a fleet breaker's name is its key; a registry's
    /// breakers are unnamed unless their factory names them).
    ///
    /// ```
    /// use tripword::{Breaker, Config};
    /// use tripword::clock::ManualClock;
    /// use tripword_std::Rejection;
    ///
    /// let clock = ManualClock::new(0);
    /// let b = Breaker::new(Config::new(), &clock);
    /// b.force_open();
    /// let r = Rejection::new(b.acquire().unwrap_err()).for_key(&"api.example.com");
    /// assert_eq!(r.key(), Some("api.example.com"));
    /// assert_eq!(Rejection::new(r.rejected()).for_key(&7).key(), Some("7"));
    /// assert_eq!(r.to_string(), r#"circuit forced open for "api.example.com": call not admitted"#);
    /// ```
    pub fn for_key<K: fmt::Debug + ?Sized>(mut self, key: &K) -> Self {
        if self.label.is_none() {
            self.label = crate::intern::intern_key(key);
        }
        self
    }

    /// The key of the request it rejected, as text, when its breaker was
    /// picked by key (the per-key tower layer); `None` otherwise. The text
    /// is the key's `Debug`, without the quotes of a plain string's
    /// (`api.example.com` for a `String` key; `Display` keeps them:
    /// `circuit open for "api.example.com": ...`).
    pub fn key(&self) -> Option<&'static str> {
        self.key_text().map(
            |text| match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                Some(plain) if !plain.contains(['\\', '"']) => plain,
                _ => text,
            },
        )
    }

    /// The same rejection, its ticks `tick` long (`None`: unknown).
    pub const fn with_tick(mut self, tick: Option<Duration>) -> Self {
        self.tick_nanos = match tick {
            // At least 1 ns, saturating: a tick is never zero.
            Some(tick) => {
                let nanos = tick.as_nanos();
                if nanos == 0 {
                    1
                } else if nanos > u64::MAX as u128 {
                    u64::MAX
                } else {
                    nanos as u64
                }
            }
            None => 0,
        };
        self
    }

    /// The same rejection, by the breaker called `name` (a rejection
    /// [`for_key`](Self::for_key) keeps its key while it has no name, and
    /// is shown by its name once it has one).
    pub const fn named(mut self, name: Option<&'static str>) -> Self {
        if name.is_some() || !self.is_keyed() {
            self.label = name;
        }
        self
    }

    /// Whether the label is a key's text.
    const fn is_keyed(&self) -> bool {
        match self.label {
            Some(label) => !label.is_empty() && label.as_bytes()[0] == KEY_MARK as u8,
            None => false,
        }
    }

    /// The interned `Debug` text of the key, if the label is one.
    fn key_text(&self) -> Option<&'static str> {
        self.label.and_then(|label| label.strip_prefix(KEY_MARK))
    }

    /// The core's rejection (its wait in ticks).
    pub const fn rejected(&self) -> Rejected {
        self.rejected
    }

    /// Why the call was not admitted.
    pub const fn cause(&self) -> Cause {
        self.rejected.cause()
    }

    /// Ticks until a call could be admitted; `None` when forced open.
    pub const fn retry_after_ticks(&self) -> Option<u64> {
        self.rejected.retry_after()
    }

    /// How long until a call could be admitted: an upper bound on the real
    /// time left (the clock reading it counts from was rounded down, see
    /// [`RealClock::duration`]). `None` when forced open (no timer ends
    /// that), or when the breaker's clock does not know its tick (a
    /// [`ManualClock`](tripword::clock::ManualClock): see
    /// [`retry_after_ticks`](Self::retry_after_ticks)).
    pub const fn retry_after(&self) -> Option<Duration> {
        match (self.rejected.retry_after(), self.tick_period()) {
            (Some(ticks), Some(tick)) => Some(crate::clock::ticks_to_duration(ticks, tick)),
            _ => None,
        }
    }

    /// The length of one tick of the breaker's clock, if it is known.
    pub const fn tick_period(&self) -> Option<Duration> {
        match self.tick_nanos {
            0 => None,
            nanos => Some(Duration::from_nanos(nanos)),
        }
    }

    /// The name of the breaker that rejected the call, if it has one.
    pub const fn name(&self) -> Option<&'static str> {
        if self.is_keyed() { None } else { self.label }
    }
}

impl From<Rejected> for Rejection {
    /// [`Rejection::new`]: no tick length, no name.
    fn from(rejected: Rejected) -> Self {
        Rejection::new(rejected)
    }
}

impl fmt::Debug for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("Rejection");
        if let Some(name) = self.name() {
            out.field("name", &name);
        }
        if let Some(key) = self.key_text() {
            out.field("key", &format_args!("{key}"));
        }
        out.field("cause", &self.cause());
        match (self.retry_after(), self.retry_after_ticks()) {
            (Some(wait), _) => out.field("retry_after", &wait),
            (None, Some(ticks)) => out.field("retry_after_ticks", &ticks),
            (None, None) => out.field("retry_after", &None::<Duration>),
        };
        out.finish()
    }
}

impl fmt::Display for Rejection {
    /// `circuit 'payments' open: call not admitted (retry after 30.0s)`:
    /// the name if the breaker has one, the key if the breaker was picked
    /// by one (`circuit open for "api.example.com": ...`), the wait to the
    /// nearest tenth of a second from 1 s (whole milliseconds, microseconds
    /// or nanoseconds below), in ticks if the tick's length is unknown,
    /// absent when forced open.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("circuit ")?;
        if let Some(name) = self.name() {
            write!(f, "'{name}' ")?;
        }
        write!(f, "{}", self.cause())?;
        if let Some(key) = self.key_text() {
            write!(f, " for {key}")?;
        }
        f.write_str(": call not admitted")?;
        match (self.retry_after(), self.retry_after_ticks()) {
            (Some(wait), _) => write!(f, " (retry after {})", Wait(wait)),
            (None, Some(ticks)) => write!(f, " (retry after {ticks} ticks)"),
            (None, None) => Ok(()),
        }
    }
}

impl std::error::Error for Rejection {}

/// A wait as a person reads it, to the nearest tenth of a second from 1 s,
/// the nearest millisecond or microsecond below: `30.0s`, `250ms`, `12µs`,
/// `40ns`. (The exact bound is [`Rejection::retry_after`]; a reader does
/// not want the tick of rounding it adds shown as `30.1s`.)
struct Wait(Duration);

impl fmt::Display for Wait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nanos = self.0.as_nanos();
        let up = |unit: u128| (nanos + unit / 2) / unit;
        // The unit is chosen by the rounded figure, so that 999.6 ms reads
        // `1.0s`, not `1000ms` (and 999.6 µs `1ms`).
        if up(1_000_000) >= 1_000 {
            let tenths = up(100_000_000);
            write!(f, "{}.{}s", tenths / 10, tenths % 10)
        } else if up(1_000) >= 1_000 {
            write!(f, "{}ms", up(1_000_000))
        } else if nanos >= 1_000 {
            write!(f, "{}µs", up(1_000))
        } else {
            write!(f, "{nanos}ns")
        }
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
        let ticket = match self.acquire() {
            Ok(ticket) => ticket,
            Err(rejected) => return Err(CallError::Open(Rejection::of(self, rejected))),
        };
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
            Err(CallError::Open(rejected)) => fallback(rejected),
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
    /// let hosts: Registry<String> = Registry::from_settings(&Settings::new().into())?;
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
    use super::Wait;
    use std::time::Duration;

    fn reads(d: Duration) -> String {
        Wait(d).to_string()
    }

    #[test]
    fn a_wait_reads_in_the_unit_of_its_rounded_figure() {
        assert_eq!(reads(Duration::from_nanos(999_600_000)), "1.0s");
        assert_eq!(reads(Duration::from_nanos(999_400_000)), "999ms");
        assert_eq!(reads(Duration::from_nanos(999_600)), "1ms");
        assert_eq!(reads(Duration::from_nanos(999_400)), "999µs");
        assert_eq!(reads(Duration::from_nanos(999)), "999ns");
        assert_eq!(reads(Duration::from_millis(29_940)), "29.9s");
        assert_eq!(reads(Duration::from_millis(29_960)), "30.0s");
    }
}
