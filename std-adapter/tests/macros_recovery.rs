//! `breakers!` with the recovery options (feature `macros`): every form of
//! `ramp` (a constructor with a duration literal, a `const`
//! `RampSettings`) reaches the config, and a `#[breaker]` function goes
//! through an outage, three probes and the ramp, whose refusals are the
//! function's error with cause `Ramp`. The clock is moved by hand.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tripword::{Cause, Clock, Status};
use tripword_std::clock::{ManualTime, RealClock};
use tripword_std::{MonotonicClock, RampSettings, Rejection, breaker, breakers};

/// The hand-set time of this file's breakers.
static TIME: ManualTime = ManualTime::new();

/// A unit-struct clock reading [`TIME`].
struct TestClock;

impl Clock for TestClock {
    const TICK_PERIOD: Option<Duration> = Some(ManualTime::TICK);
    fn now(&self) -> u64 {
        TIME.now()
    }
}

impl RealClock for TestClock {
    const TICK: Duration = ManualTime::TICK;
}

const RAMP: RampSettings = RampSettings::stages(Duration::from_millis(300), &[100, 1_000]);

breakers! {
    /// Three probes, two to close, then half the calls for two seconds.
    INVENTORY: failure_threshold = 1, open_for = 10s, probe_timeout = 1m, probes = 3,
        probes_to_close = 2, ramp = linear(2s, 1), clock = TestClock;
    CONST_RAMP: probes = 2, ramp = RAMP;
    PROGRESSIVE: ramp = progressive(1s);
}

#[derive(Debug, PartialEq)]
enum FetchError {
    Down,
    Unavailable(Rejection),
}

impl From<Rejection> for FetchError {
    fn from(rejected: Rejection) -> Self {
        FetchError::Unavailable(rejected)
    }
}

static RAN: AtomicU32 = AtomicU32::new(0);

#[breaker(INVENTORY)]
fn fetch(up: bool) -> Result<u32, FetchError> {
    RAN.fetch_add(1, Ordering::SeqCst);
    if up { Ok(7) } else { Err(FetchError::Down) }
}

#[test]
fn every_ramp_form_reaches_the_config() {
    let inventory = INVENTORY.config();
    assert_eq!((inventory.probes(), inventory.probes_to_close()), (3, 2));
    assert_eq!(
        inventory.ramp(),
        RampSettings::linear(Duration::from_secs(2), 1).to_ramp::<TestClock>()
    );
    assert_eq!(CONST_RAMP.config().probes(), 2);
    assert_eq!(CONST_RAMP.config().ramp(), RAMP.to_ramp::<MonotonicClock>());
    assert_eq!(
        PROGRESSIVE.config().ramp(),
        RampSettings::progressive(Duration::from_secs(1)).to_ramp::<MonotonicClock>()
    );
}

#[test]
fn a_declared_breaker_recovers_through_its_probes_and_ramp() {
    assert_eq!(fetch(false), Err(FetchError::Down));
    assert_eq!(INVENTORY.status(), Status::Open);
    TIME.advance(Duration::from_secs(11));
    // One failed probe of three does not reopen (two to close).
    assert_eq!(fetch(false), Err(FetchError::Down));
    assert_eq!(fetch(true), Ok(7));
    assert_eq!(INVENTORY.status(), Status::HalfOpen);
    assert_eq!(fetch(true), Ok(7));
    assert_eq!(INVENTORY.status(), Status::Recovering);
    let before = RAN.load(Ordering::SeqCst);
    let refused = (0..10)
        .filter_map(|_| match fetch(true) {
            Ok(7) => None,
            Err(FetchError::Unavailable(r)) => Some(r.cause()),
            other => panic!("{other:?}"),
        })
        .collect::<Vec<_>>();
    assert_eq!(refused, [Cause::Ramp; 5]);
    assert_eq!(RAN.load(Ordering::SeqCst) - before, 5);
    TIME.advance(Duration::from_secs(3));
    assert_eq!(fetch(true), Ok(7));
    assert_eq!(INVENTORY.status(), Status::Closed);
}
