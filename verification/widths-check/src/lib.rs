//! Non-generic functions over both word widths, so that building this crate
//! for an embedded target compiles the whole breaker (pure layer and atomic
//! layer) to machine code at both widths, not just type-checks it.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use tripword::{Breaker, Clock, Config, Outcome, Status, ValidConfig, W32, W64};

/// A stand-in hardware clock.
pub struct Ticks;

impl Clock for Ticks {
    fn now(&self) -> u64 {
        0
    }
}

const CONFIG: Config = Config::new()
    .failure_threshold(3)
    .open_for(100)
    .exponential_backoff(1_600)
    .probe_timeout(50);

/// A 64-bit breaker in a `static`.
pub static WIDE: Breaker<Ticks, W64> = Breaker::from_parts(ValidConfig::new(CONFIG), Ticks, ());
/// A 32-bit breaker in a `static` (the default horizon: 128-tick units).
pub static NARROW: Breaker<Ticks, W32> = Breaker::from_parts(ValidConfig::new(CONFIG), Ticks, ());

/// Acquire, release, status, force open and close on the 64-bit breaker.
pub fn exercise_w64(outcome: Outcome) -> Status {
    if let Ok(t) = WIDE.acquire() {
        WIDE.release(t, outcome);
    }
    WIDE.force_open();
    WIDE.force_close();
    WIDE.status()
}

/// Acquire, release, status, force open and close on the 32-bit breaker.
pub fn exercise_w32(outcome: Outcome) -> Status {
    if let Ok(p) = NARROW.permit() {
        p.finish(outcome);
    }
    NARROW.force_open();
    NARROW.force_close();
    NARROW.status()
}
