//! On target: a `static` table of named breakers (`BreakerTable`)
//! tripped and closed by the timer interrupt, and a `TransitionLog` (a
//! `heapless::mpmc` queue) that the main loop drains meanwhile.
//!
//! Each time the interrupt fires it makes exactly one transition on one of
//! the table's breakers, in turn: a failure that trips it (`closed ->
//! open`, threshold 1) or a forced close (`open -> closed`). The main loop
//! pops the log until the handler has fired [`FIRES`] times, then stops it
//! and takes what is left. The books must balance: every transition the
//! handler made was drained exactly once or counted as dropped (none is
//! expected: the main loop drains far faster than the timer fires), each
//! under its breaker's key, each breaker's in counter order, alternating
//! trip and close.

use crate::HwClock;
use crate::check::Checks;
use portable_atomic::{AtomicBool, AtomicU32, Ordering};
use tripword::log::{LogTo, Logged, TransitionLog};
use tripword::table::{BreakerTable, TableBreaker};
use tripword::word::W32;
use tripword::{Breaker, Config, Outcome, Status, ValidConfig};

/// How many times the handler makes a transition before it is stopped.
const FIRES: u32 = 400;
const KEYS: [&str; 3] = ["uart", "i2c", "radio"];

static CONFIG: ValidConfig<W32> = ValidConfig::new(Config::new().failure_threshold(1));
static LOG: TransitionLog<&'static str, 16> = TransitionLog::new();
static TABLE: BreakerTable<
    &'static str,
    TableBreaker<HwClock, W32, LogTo<'static, &'static str, 16>>,
    3,
> = tripword::breaker_table!(["uart", "i2c", "radio"], |name| {
    Breaker::from_parts(&CONFIG, HwClock, LOG.observer(name))
});

static ACTIVE: AtomicBool = AtomicBool::new(false);
static FIRED: AtomicU32 = AtomicU32::new(0);

/// Called from the timer interrupt, before the shared-breaker suite's work.
pub fn on_timer_interrupt() {
    if !ACTIVE.load(Ordering::Relaxed) {
        return;
    }
    let n = FIRED.load(Ordering::Relaxed);
    if n >= FIRES {
        return;
    }
    let b = TABLE.at(n as usize % KEYS.len());
    if b.status() == Status::Closed {
        if let Ok(t) = b.acquire() {
            b.release(t, Outcome::Failure);
        }
    } else {
        b.force_close();
    }
    FIRED.store(n + 1, Ordering::Relaxed);
}

pub fn run(c: &mut Checks) {
    c.suite("table + log from the timer");
    let mut drained = [0u32; 3];
    // Per breaker: the last counter seen and whether it was a trip.
    let mut last: [Option<(u32, bool)>; 3] = [None; 3];
    let mut in_order = true;
    let mut alternating = true;
    let mut keyed = true;
    let mut take = |l: Logged<&'static str>| {
        let Some(i) = KEYS.iter().position(|k| *k == l.key) else {
            keyed = false;
            return;
        };
        let trip = l.transition.to == Status::Open;
        let expected_from = if trip { Status::Closed } else { Status::Open };
        if l.transition.from != expected_from {
            alternating = false;
        }
        if let Some((counter, was_trip)) = last[i] {
            in_order &= l.transition.counter == counter.wrapping_add(1);
            alternating &= was_trip != trip;
        }
        last[i] = Some((l.transition.counter, trip));
        drained[i] += 1;
    };
    ACTIVE.store(true, Ordering::Relaxed);
    while FIRED.load(Ordering::Relaxed) < FIRES {
        if let Some(l) = LOG.pop() {
            take(l);
        }
    }
    ACTIVE.store(false, Ordering::Relaxed);
    while let Some(l) = LOG.pop() {
        take(l);
    }
    let total: u32 = drained.iter().sum();
    crate::out!(
        "  {} transitions made by the timer interrupt, {} drained by main ({:?} per key), {} dropped",
        FIRES,
        total,
        drained,
        LOG.dropped()
    );
    c.check(
        total + LOG.dropped() == FIRES,
        "every transition drained once or counted as dropped",
    );
    c.check(LOG.dropped() == 0, "none dropped: the main loop keeps up");
    c.check(keyed, "every transition under one of the table's keys");
    c.check(
        in_order,
        "each breaker's transitions in counter order, none lost",
    );
    c.check(alternating, "each breaker alternates trip and close");
    let per_key = FIRES / KEYS.len() as u32;
    c.check(
        drained.iter().all(|&d| d == per_key || d == per_key + 1),
        "the handler's transitions spread over the three breakers",
    );
    c.check(
        TABLE.get(&"radio").is_some() && TABLE.get(&"spi").is_none(),
        "lookup by key",
    );
}
