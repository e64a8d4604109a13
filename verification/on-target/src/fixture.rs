//! Static breakers on a hand-moved clock, one fresh set per scenario.

use crate::recorder::Recorder;
use tripword::clock::ManualClock;
use tripword::{Breaker, ValidConfig, Word};

/// A breaker on a `ManualClock` that records its transitions. `P` is where
/// its config lives: inline (`ValidConfig<W>`) or in a `static`
/// (`&'static ValidConfig<W>`).
pub type TestBreaker<W, P = ValidConfig<W>> =
    Breaker<&'static ManualClock, W, &'static Recorder, P>;

/// A `static` breaker, its clock and its transition log.
pub struct Fixture<W: Word, P: 'static = ValidConfig<W>> {
    pub b: &'static TestBreaker<W, P>,
    pub clock: &'static ManualClock,
    pub log: &'static Recorder,
}

// By hand: a derive would ask `W: Copy` and `P: Copy`.
impl<W: Word, P> Clone for Fixture<W, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<W: Word, P> Copy for Fixture<W, P> {}

/// New `static`s for one scenario (each expansion is its own set):
/// `fresh!(W32, config)` keeps the validated config inline
/// (`Breaker::from_parts(ValidConfig::new(config), ..)`), `fresh!(W32,
/// static config)` keeps it in a `static` of its own
/// (`StaticBreaker::from_parts(&CONFIG, ..)`, the config in flash).
macro_rules! fresh {
    ($w:ty, static $config:expr) => {{
        static CONFIG: tripword::ValidConfig<$w> = tripword::ValidConfig::new($config);
        static CLOCK: tripword::clock::ManualClock = tripword::clock::ManualClock::new(0);
        static LOG: $crate::recorder::Recorder = $crate::recorder::Recorder::new();
        static B: $crate::fixture::TestBreaker<$w, &'static tripword::ValidConfig<$w>> =
            tripword::Breaker::from_parts(&CONFIG, &CLOCK, &LOG);
        $crate::fixture::Fixture::<$w, &'static tripword::ValidConfig<$w>> {
            b: &B,
            clock: &CLOCK,
            log: &LOG,
        }
    }};
    ($w:ty, $config:expr) => {{
        static CLOCK: tripword::clock::ManualClock = tripword::clock::ManualClock::new(0);
        static LOG: $crate::recorder::Recorder = $crate::recorder::Recorder::new();
        static B: $crate::fixture::TestBreaker<$w> =
            tripword::Breaker::from_parts(tripword::ValidConfig::new($config), &CLOCK, &LOG);
        $crate::fixture::Fixture::<$w> {
            b: &B,
            clock: &CLOCK,
            log: &LOG,
        }
    }};
}
pub(crate) use fresh;
