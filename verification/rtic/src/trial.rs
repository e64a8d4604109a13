//! A second breaker, with two probes (the core's feature `recovery`,
//! `Config::probes(2)`: both must pass to close), shared by the async task
//! and a second hardware task (GPIOB): the task holds one probe while the
//! interrupt takes the other, a third caller is rejected, and one failing
//! probe reopens the breaker and leaves the other stale.

use core::sync::atomic::{AtomicU32, Ordering};

use lm3s6965::Interrupt;
use rtic_monotonics::fugit::{ExtU32, TimerDurationU64};
use rtic_monotonics::systick::prelude::*;
use tripword::clock::FugitClock;
use tripword::{Breaker32, Cause, Config, Outcome, Release, Status, ValidConfig};

use crate::check::check;
use crate::{Mono, MonoInstant};

/// The interrupt the second hardware task is bound to.
pub const PAIR_IRQ: Interrupt = Interrupt::GPIOB;

/// One failure trips; open 200 ms; two probes, both needed to close.
const PROBES: Config = Config::new()
    .failure_threshold(1)
    .open_for(TimerDurationU64::<1_000>::from_ticks(200).as_ticks())
    .probe_timeout(TimerDurationU64::<1_000>::from_ticks(2_000).as_ticks())
    .probes(2);

/// The breaker the task and the GPIOB handler share (`W32`, lock-free).
static PAIR: Breaker32<FugitClock<fn() -> MonoInstant>> =
    Breaker32::from_parts(ValidConfig::new(PROBES), FugitClock(Mono::now), ());

/// What the handler's admitted calls come to, in order.
const OUTCOMES: [Outcome; 2] = [Outcome::Success, Outcome::Failure];
static NEXT: AtomicU32 = AtomicU32::new(0);
static RUNS: AtomicU32 = AtomicU32::new(0);
static LAST: AtomicU32 = AtomicU32::new(0);

/// What the handler's last run came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    None,
    Recorded { probe: bool },
    Stale,
    Rejected(Cause),
}

impl Run {
    fn encode(self) -> u32 {
        match self {
            Run::None => 0,
            Run::Recorded { probe: false } => 1,
            Run::Recorded { probe: true } => 2,
            Run::Stale => 3,
            Run::Rejected(Cause::Probing) => 4,
            Run::Rejected(Cause::Open) => 5,
            Run::Rejected(_) => 6,
        }
    }

    fn last() -> Run {
        match LAST.load(Ordering::Acquire) {
            1 => Run::Recorded { probe: false },
            2 => Run::Recorded { probe: true },
            3 => Run::Stale,
            4 => Run::Rejected(Cause::Probing),
            5 => Run::Rejected(Cause::Open),
            6 => Run::Rejected(Cause::Ramp),
            _ => Run::None,
        }
    }
}

/// The GPIOB handler's body: one call through the shared breaker, released
/// at once with the next scripted outcome.
pub fn on_interrupt() {
    let run = match PAIR.acquire() {
        Ok(ticket) => {
            let probe = ticket.is_probe();
            let i = NEXT.fetch_add(1, Ordering::Relaxed) as usize;
            let outcome = OUTCOMES.get(i).copied().unwrap_or(Outcome::Ignored);
            match PAIR.release(ticket, outcome) {
                Release::Recorded => Run::Recorded { probe },
                Release::Stale => Run::Stale,
            }
        }
        Err(rejected) => Run::Rejected(rejected.cause()),
    };
    LAST.store(run.encode(), Ordering::Release);
    RUNS.fetch_add(1, Ordering::AcqRel);
}

/// Pends GPIOB (it preempts the task at once) and returns its run.
fn interrupt_now() -> Run {
    let runs = RUNS.load(Ordering::Acquire);
    rtic::pend(PAIR_IRQ);
    cortex_m::asm::dsb();
    cortex_m::asm::isb();
    if RUNS.load(Ordering::Acquire) != runs + 1 {
        return Run::None;
    }
    Run::last()
}

/// Trips the breaker from the task and waits out the open time.
async fn trip_and_wait() {
    if let Ok(t) = PAIR.acquire() {
        PAIR.release(t, Outcome::Failure);
    }
    check(PAIR.status() == Status::Open, "two probes: a failure trips");
    let wait = PAIR.acquire().err().and_then(|r| r.retry_after());
    check(wait.is_some_and(|w| w > 0), "open: rejected with a wait");
    Mono::delay((wait.unwrap_or(0) as u32).millis()).await;
    check(
        PAIR.status() == Status::HalfOpen,
        "open time over: half-open",
    );
}

/// The scenario: run by the async task after the bus checks.
pub async fn scenario() {
    trip_and_wait().await;
    let held = PAIR.acquire();
    check(
        held.as_ref().is_ok_and(|t| t.is_probe()),
        "two probes: the task's probe admitted",
    );
    check(
        PAIR.status() == Status::HalfOpen,
        "one probe of two running: room for another",
    );
    check(
        interrupt_now() == Run::Recorded { probe: true },
        "the handler is the second probe; its success recorded",
    );
    check(
        PAIR.status() == Status::Probing,
        "one passed, one running: no room",
    );
    check(
        interrupt_now() == Run::Rejected(Cause::Probing),
        "a third caller (the handler) rejected, cause Probing",
    );
    if let Ok(t) = held {
        check(
            PAIR.release(t, Outcome::Success) == Release::Recorded,
            "the task's probe success recorded",
        );
    }
    check(
        PAIR.status() == Status::Closed,
        "both probes passed: closed",
    );

    // With both needed to close, one failing probe reopens the breaker;
    // the other probe's result is then stale.
    trip_and_wait().await;
    let held = PAIR.acquire();
    check(
        held.as_ref().is_ok_and(|t| t.is_probe()),
        "again: the task's probe admitted",
    );
    check(
        interrupt_now() == Run::Recorded { probe: true },
        "the handler's probe fails",
    );
    check(
        PAIR.status() == Status::Open,
        "one failed probe of two: open",
    );
    if let Ok(t) = held {
        check(
            PAIR.release(t, Outcome::Success) == Release::Stale,
            "the task's probe, released after the reopen, is stale",
        );
    }
}
