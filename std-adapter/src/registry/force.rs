//! [`Force`], the operator's three actions on a breaker, for generic code
//! and for a registry's group control; and the group state a registry
//! applies to each breaker it makes.

use core::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tripword::kit::Shadow;
use tripword::rate::RateBreaker;
use tripword::{Breaker, ConfigSource, Observer, Word};

use super::entry::Entry;
use crate::clock::RealClock;

/// A breaker an operator can force: hold it open, open it for a while, or
/// close it. What [`Registry::force_open_all`](crate::Registry::force_open_all),
/// [`force_open_all_for`](crate::Registry::force_open_all_for) and
/// [`force_close_all`](crate::Registry::force_close_all) need of its
/// breakers.
///
/// Implemented for `tripword`'s [`Breaker`] and [`RateBreaker`] on a
/// [`RealClock`] (a duration becomes the clock's ticks with
/// [`RealClock::ticks`], at least as long as asked), for a registry's
/// [`Entry`], for a breaker in shadow mode ([`Shadow`]), for `&B` and
/// `Arc<B>`, and in `tripword-redis` for its breaker (whose forces are
/// round trips, so each returns a `Result`). A
/// breaker on a clock with no tick length
/// ([`ManualClock`](tripword::clock::ManualClock)) has none: durations mean
/// nothing to it; in tests use [`ManualTime`](crate::ManualTime), the
/// hand-moved clock that is a `RealClock`.
///
/// The methods have the names of the breakers' own, which take ticks and
/// return nothing: on a concrete breaker, call its own. Where this trait is
/// imported, `entry.force_open()` on a registry's entry is this trait's (an
/// entry has no method of its own of that name), a `Result`.
///
/// ```
/// use std::time::Duration;
/// use tripword::Status;
/// use tripword_std::registry::Force;
/// use tripword_std::{Breaker, ManualTime, Settings};
///
/// fn isolate<B: Force>(breakers: &[B], for_how_long: Duration) -> Result<(), B::Error> {
///     breakers.iter().try_for_each(|b| b.force_open_for(for_how_long))
/// }
///
/// static CLOCK: ManualTime = ManualTime::new();
/// let a: Breaker<&ManualTime> = Settings::new().build_on(&CLOCK, ())?;
/// let b: Breaker<&ManualTime> = Settings::new().build_on(&CLOCK, ())?;
/// let Ok(()) = isolate(&[&a, &b], Duration::from_secs(60));
/// assert_eq!((a.status(), b.status()), (Status::Open, Status::Open));
/// CLOCK.advance(Duration::from_secs(61));
/// assert_eq!(a.status(), Status::HalfOpen);
/// # Ok::<(), tripword_std::SettingsError>(())
/// ```
pub trait Force {
    /// Why a force did not happen: [`Infallible`] for a breaker in this
    /// process.
    type Error;

    /// Holds the breaker open until [`force_close`](Self::force_close): no
    /// timer ends it, no probe goes through.
    ///
    /// # Errors
    /// The breaker's, when the force could not be made.
    fn force_open(&self) -> Result<(), Self::Error>;

    /// Opens the breaker now for at least `open_for`, from any state; then
    /// it becomes half-open as after a trip.
    ///
    /// # Errors
    /// The breaker's, when the force could not be made (or it cannot
    /// open for a while).
    fn force_open_for(&self, open_for: Duration) -> Result<(), Self::Error>;

    /// Closes the breaker from any state, with no failure counted.
    ///
    /// # Errors
    /// The breaker's, when the force could not be made.
    fn force_close(&self) -> Result<(), Self::Error>;
}

impl<C, W, O, P> Force for Breaker<C, W, O, P>
where
    C: RealClock,
    W: Word,
    O: Observer,
    P: ConfigSource<W>,
{
    type Error = Infallible;

    fn force_open(&self) -> Result<(), Infallible> {
        Breaker::force_open(self);
        Ok(())
    }
    /// [`Breaker::force_open_for`] with `C::ticks(open_for)` ticks.
    fn force_open_for(&self, open_for: Duration) -> Result<(), Infallible> {
        Breaker::force_open_for(self, C::ticks(open_for));
        Ok(())
    }
    fn force_close(&self) -> Result<(), Infallible> {
        Breaker::force_close(self);
        Ok(())
    }
}

/// The breaker underneath's forces ([`RateBreaker::breaker`]); a new
/// `Closed` state starts a new window.
impl<C, W, O, const N: usize> Force for RateBreaker<C, W, O, N>
where
    C: RealClock,
    W: Word,
    O: Observer,
{
    type Error = Infallible;

    fn force_open(&self) -> Result<(), Infallible> {
        self.breaker().force_open();
        Ok(())
    }
    fn force_open_for(&self, open_for: Duration) -> Result<(), Infallible> {
        self.breaker().force_open_for(C::ticks(open_for));
        Ok(())
    }
    fn force_close(&self) -> Result<(), Infallible> {
        self.breaker().force_close();
        Ok(())
    }
}

/// The entry's breaker's.
impl<K, B: Force> Force for Entry<K, B> {
    type Error = B::Error;

    fn force_open(&self) -> Result<(), B::Error> {
        self.breaker().force_open()
    }
    fn force_open_for(&self, open_for: Duration) -> Result<(), B::Error> {
        self.breaker().force_open_for(open_for)
    }
    fn force_close(&self) -> Result<(), B::Error> {
        self.breaker().force_close()
    }
}

/// The breaker underneath's ([`Shadow::inner`]): a group call on a
/// registry of shadowed breakers forces them as it forces any other. While
/// shadowing, a forced breaker reports as it would (a hold, a rejection
/// the hook hears) and calls still run.
impl<B: Force, H> Force for Shadow<B, H> {
    type Error = B::Error;

    fn force_open(&self) -> Result<(), B::Error> {
        self.inner().force_open()
    }
    fn force_open_for(&self, open_for: Duration) -> Result<(), B::Error> {
        self.inner().force_open_for(open_for)
    }
    fn force_close(&self) -> Result<(), B::Error> {
        self.inner().force_close()
    }
}

macro_rules! handle_impl {
    ($($handle:ty),*) => {$(
        /// The breaker's it points to.
        impl<B: Force + ?Sized> Force for $handle {
            type Error = B::Error;

            fn force_open(&self) -> Result<(), B::Error> {
                (**self).force_open()
            }
            fn force_open_for(&self, open_for: Duration) -> Result<(), B::Error> {
                (**self).force_open_for(open_for)
            }
            fn force_close(&self) -> Result<(), B::Error> {
                (**self).force_close()
            }
        }
    )*};
}

handle_impl!(&B, Arc<B>);

/// What a registry applies to each breaker it makes, set by a group call
/// until [`force_close_all`](crate::Registry::force_close_all).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Hold {
    /// Held open ([`Force::force_open`]).
    Open,
    /// Open for `open_for` from `from` ([`Force::force_open_for`] with
    /// what is left of it).
    OpenFor {
        /// When the group call was made.
        from: Instant,
        /// For how long.
        open_for: Duration,
    },
}

impl Hold {
    /// What is left of a timed hold: `None` once it is over (and for a
    /// breaker made then, nothing to apply).
    pub(super) fn left(self) -> Option<Duration> {
        match self {
            Hold::Open => Some(Duration::MAX),
            Hold::OpenFor { from, open_for } => {
                Some(open_for.saturating_sub(from.elapsed())).filter(|d| !d.is_zero())
            }
        }
    }
}

/// Applies a hold to a breaker: a function pointer, set by the group call
/// (which knows `B: Force`), so the registry's insert needs no bound.
/// Whether the force was made.
pub(super) type Apply<B> = fn(&B, Hold) -> bool;

/// The [`Apply`] of a `B: Force`.
pub(super) fn apply<B: Force>(breaker: &B, hold: Hold) -> bool {
    match hold {
        Hold::Open => breaker.force_open().is_ok(),
        Hold::OpenFor { .. } => match hold.left() {
            Some(left) => breaker.force_open_for(left).is_ok(),
            None => false,
        },
    }
}
