//! Static breakers on a hand-moved clock, one fresh set per scenario.

use crate::recorder::Recorder;
use tripword::clock::ManualClock;
use tripword::{Breaker, Word};

/// A breaker on a `ManualClock` that records its transitions.
pub type TestBreaker<W> = Breaker<&'static ManualClock, W, &'static Recorder>;

/// A `static` breaker, its clock and its transition log.
pub struct Fixture<W: Word> {
    pub b: &'static TestBreaker<W>,
    pub clock: &'static ManualClock,
    pub log: &'static Recorder,
}

// By hand: a derive would ask `W: Copy`.
impl<W: Word> Clone for Fixture<W> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<W: Word> Copy for Fixture<W> {}

/// `fresh!(W32, config)`: new `static`s for one scenario (each expansion is
/// its own set of statics).
macro_rules! fresh {
    ($w:ty, $config:expr) => {{
        static CLOCK: tripword::clock::ManualClock = tripword::clock::ManualClock::new(0);
        static LOG: $crate::recorder::Recorder = $crate::recorder::Recorder::new();
        static B: $crate::fixture::TestBreaker<$w> =
            tripword::Breaker::from_parts($config, &CLOCK, &LOG);
        $crate::fixture::Fixture::<$w> {
            b: &B,
            clock: &CLOCK,
            log: &LOG,
        }
    }};
}
pub(crate) use fresh;
