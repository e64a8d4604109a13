//! [`Rejection`], why a call was not admitted, as a person reads it: the
//! core's rejection with the clock's tick, the breaker's name and the
//! request's key.

use core::fmt;
use std::time::Duration;

use tripword::kit::CircuitBreaker;
use tripword::{Cause, Rejected};

use super::intern::intern_key;
#[cfg(doc)]
use crate::clock::RealClock;
use crate::clock::ticks_to_duration;

/// Why a call was not admitted, as
/// [`CallError::Open`](crate::CallError::Open) carries it and a fallback
/// receives it: the core's [`Rejected`] (its [`Cause`] and its
/// wait in ticks), with the length of the breaker's clock tick and the
/// breaker's [name](CircuitBreaker::name), so that it reads as a person
/// wants it: `circuit 'payments' open: call not admitted (retry after
/// 30.0s)`. Three words and `Copy`: made only when a call is rejected.
///
/// ```
/// use std::time::Duration;
/// use tripword::Cause;
/// use tripword_std::clock::ManualTime;
/// use tripword_std::{BreakerExt, CallPolicy, Settings};
///
/// let clock = ManualTime::new();
/// let b: tripword::Breaker<&ManualTime> = Settings::new().failure_threshold(1).open_for(Duration::from_secs(5)).build_on(&clock, ())?;
/// let _ = b.call(|| Err::<u32, _>("down"));
/// let cached = CallPolicy::new().fallback(|open| {
///     assert_eq!(open.cause(), Cause::Open);
///     assert!(open.retry_after() > Some(Duration::from_secs(4)));
///     assert_eq!(open.to_string(), "circuit open: call not admitted (retry after 5.0s)");
///     Ok(7) // the cached price
/// });
/// let price = b.call_with(&cached, || Ok::<u32, &str>(42));
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
    /// `Display`. The text is interned, whole, so that a rejection stays
    /// `Copy` and three words: each distinct key text is allocated once
    /// for the life of the process. A text is never cut, so two keys never
    /// read back alike: a key whose text passes 8 KiB is not kept, nor is
    /// a new one once 65 536 distinct texts or 16 MiB of them are, and the
    /// rejection then carries no key (its name and wait still say which
    /// breaker and how long). Only a rejection pays for it, never an
    /// admitted call. A breaker with a
    /// [name](Self::name) is shown by its name and the key
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
            self.label = intern_key(key);
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
            (Some(ticks), Some(tick)) => Some(ticks_to_duration(ticks, tick)),
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
