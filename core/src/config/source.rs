//! Where a breaker keeps its config: inline, in a `static`, or compiled
//! into the code ([`ConfigSource`], [`Const`], [`ConstConfig`]).

use super::{Config, ValidConfig, sealed};
use crate::word::Word;
use core::marker::PhantomData;

/// A config fixed at compile time, named by a type: the form that costs a
/// firmware least. The breaker holds a zero-sized [`Const<T>`] instead of a
/// config or a pointer, so RAM per breaker is the word alone, and the
/// compiler folds every threshold and duration into the code as an immediate
/// (`docs/embedded.md`, "Footprint").
///
/// ```
/// use tripword::{ConstBreaker, Config, Const, ConstConfig, W32};
/// use tripword::clock::ManualClock;
///
/// struct Uplink;
/// impl ConstConfig for Uplink {
///     const CONFIG: Config = Config::new().failure_threshold(3).open_for(1_000);
/// }
///
/// static CLOCK: ManualClock = ManualClock::new(0);
/// static B: ConstBreaker<Uplink, &ManualClock, W32> = ConstBreaker::from_parts(Const::new(), &CLOCK, ());
/// assert!(B.acquire().is_ok());
/// assert_eq!(B.config().failure_threshold(), 3);
/// ```
///
/// An out-of-range `CONFIG` is a compile error where the breaker is built:
///
/// ```compile_fail
/// use tripword::{ConstBreaker, Config, Const, ConstConfig, W32};
///
/// struct TooMany;
/// impl ConstConfig for TooMany {
///     // 4096 failures do not fit the 32-bit word's 12-bit count.
///     const CONFIG: Config = Config::new().failure_threshold(4096);
/// }
/// static B: ConstBreaker<TooMany, fn() -> u64, W32> =
///     ConstBreaker::from_parts(Const::new(), || 0, ());
/// ```
pub trait ConstConfig {
    /// The config.
    const CONFIG: Config;
}

/// Where a breaker finds a [`ConstConfig`]: zero-sized, it yields
/// `T::CONFIG` checked at compile time.
pub struct Const<T>(PhantomData<fn() -> T>);

impl<T> Const<T> {
    /// The marker.
    pub const fn new() -> Self {
        Const(PhantomData)
    }
}

impl<T> Default for Const<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Clone for Const<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Const<T> {}

impl<T> core::fmt::Debug for Const<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Const")
    }
}

/// Where a breaker keeps its [`ValidConfig`]: inline ([`ValidConfig<W>`], the
/// default), in a `static` (`&'static ValidConfig<W>`, in flash on an MCU), or
/// compiled into the code ([`Const<T>`]). Sealed: these three are the forms.
pub trait ConfigSource<W: Word>: sealed::Sealed {
    /// Forces the compile-time check of a [`Const`] source where a breaker
    /// is built; `()` for the others.
    #[doc(hidden)]
    const CHECK: ();
    /// The config.
    fn valid(&self) -> &ValidConfig<W>;
}

impl<W: Word> sealed::Sealed for ValidConfig<W> {}
impl<W: Word> ConfigSource<W> for ValidConfig<W> {
    const CHECK: () = ();
    #[inline(always)]
    fn valid(&self) -> &ValidConfig<W> {
        self
    }
}

impl<W: Word> sealed::Sealed for &'static ValidConfig<W> {}
impl<W: Word> ConfigSource<W> for &'static ValidConfig<W> {
    const CHECK: () = ();
    #[inline(always)]
    fn valid(&self) -> &ValidConfig<W> {
        self
    }
}

/// The checked form of a [`ConstConfig`], per width.
struct Checked<T, W>(PhantomData<(T, W)>);
impl<T: ConstConfig, W: Word> Checked<T, W> {
    const VALID: ValidConfig<W> = ValidConfig::new(T::CONFIG);
}

impl<T> sealed::Sealed for Const<T> {}
impl<T: ConstConfig, W: Word> ConfigSource<W> for Const<T> {
    const CHECK: () = {
        let _ = Checked::<T, W>::VALID;
    };
    #[inline(always)]
    fn valid(&self) -> &ValidConfig<W> {
        &Checked::<T, W>::VALID
    }
}
