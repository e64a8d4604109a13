//! A second breaker, with a ramp (the core's feature `recovery`,
//! `Config::ramp`), shared by the embassy task and an interrupt handler
//! (PendSV, pended by the task): after a probe's success the two together
//! ask for calls in bursts, and at each stage the number admitted, over
//! both contexts, is `⌊c·p⌋` or `⌊c·p⌋ + 1`; the others are rejected with
//! cause `Ramp`; past the last stage the breaker is plain closed.

use core::sync::atomic::{AtomicU32, Ordering};

use cortex_m::peripheral::SCB;
use cortex_m_rt::exception;
use cortex_m_semihosting::hprintln;
use embassy_time::{Duration, Timer};
use tripword::clock::EmbassyClock;
use tripword::{Breaker32, Cause, Config, Outcome, Status, ValidConfig};

use crate::check::check;

/// 100 ms stages (rounded up to the ramp's 128-tick units at shift 0)
/// admitting 25 % and then 50 % of calls: 8 and 16 in the `W32` word's
/// 1/32 of a call.
const STEP_MS: u64 = 100;
const SHARES_32: [u32; 2] = [8, 16];

/// One failure trips; open 100 ms; whole ticks (`horizon(0)`), so the
/// ramp's units are 2^7 ticks.
const RAMPED: Config = Config::new()
    .failure_threshold(1)
    .open_for(Duration::from_millis(100).as_ticks())
    .probe_timeout(Duration::from_millis(2_000).as_ticks())
    .horizon(0)
    .ramp(tripword::Ramp::stages(
        Duration::from_millis(STEP_MS).as_ticks(),
        &[2_500, 5_000],
    ));

/// The breaker the task and PendSV share (`W32`, lock-free on Cortex-M4F).
static RAMP: Breaker32<EmbassyClock> =
    Breaker32::from_parts(ValidConfig::new(RAMPED), EmbassyClock::new(), ());

/// Calls each context asks for per burst, and bursts per stage.
const BURST: u32 = 8;
const BURSTS: u32 = 4;

/// What the handler's bursts came to: admitted, rejected with cause
/// `Ramp`, rejected otherwise; and how many times it ran.
static HANDLER_ADMITTED: AtomicU32 = AtomicU32::new(0);
static HANDLER_RAMP: AtomicU32 = AtomicU32::new(0);
static HANDLER_OTHER: AtomicU32 = AtomicU32::new(0);
static HANDLER_RUNS: AtomicU32 = AtomicU32::new(0);

/// Asks the ramp for `BURST` calls, each released at once as a success;
/// returns (admitted, rejected with cause `Ramp`, other rejections, the
/// last rejection's wait).
fn burst() -> (u32, u32, u32, u64) {
    let (mut admitted, mut ramp, mut other, mut wait) = (0, 0, 0, 0);
    for _ in 0..BURST {
        match RAMP.acquire() {
            Ok(t) => {
                admitted += 1;
                RAMP.release(t, Outcome::Success);
            }
            Err(r) if r.cause() == Cause::Ramp => {
                ramp += 1;
                wait = r.retry_after().unwrap_or(0);
            }
            Err(_) => other += 1,
        }
    }
    (admitted, ramp, other, wait)
}

#[exception]
fn PendSV() {
    let (admitted, ramp, other, _) = burst();
    HANDLER_ADMITTED.fetch_add(admitted, Ordering::Relaxed);
    HANDLER_RAMP.fetch_add(ramp, Ordering::Relaxed);
    HANDLER_OTHER.fetch_add(other, Ordering::Relaxed);
    HANDLER_RUNS.fetch_add(1, Ordering::Release);
}

/// Pends PendSV, which preempts the task at once and runs a burst.
fn interrupt_now() {
    SCB::set_pendsv();
    cortex_m::asm::dsb();
    cortex_m::asm::isb();
}

/// The scenario: run by the task after the sensor checks.
pub async fn scenario() {
    if let Ok(t) = RAMP.acquire() {
        RAMP.release(t, Outcome::Failure);
    }
    check(RAMP.status() == Status::Open, "ramp: one failure trips");
    let wait = RAMP
        .acquire()
        .err()
        .and_then(|r| r.retry_after())
        .unwrap_or(0);
    Timer::after(Duration::from_ticks(wait)).await;
    match RAMP.acquire() {
        Ok(t) => {
            check(t.is_probe(), "ramp: the task's probe admitted");
            RAMP.release(t, Outcome::Success);
        }
        Err(_) => check(false, "ramp: the task's probe admitted"),
    }
    check(
        RAMP.status() == Status::Recovering,
        "the probe's success starts the ramp: recovering",
    );

    for (stage, &p) in SHARES_32.iter().enumerate() {
        let runs = HANDLER_RUNS.load(Ordering::Acquire);
        let handler_before = HANDLER_ADMITTED.load(Ordering::Relaxed);
        let (mut task_admitted, mut task_other, mut next_stage) = (0, 0, 0);
        for _ in 0..BURSTS {
            let (a, _, o, w) = burst();
            task_admitted += a;
            task_other += o;
            next_stage = next_stage.max(w);
            interrupt_now();
        }
        let handler_admitted = HANDLER_ADMITTED.load(Ordering::Relaxed) - handler_before;
        let calls = 2 * BURST * BURSTS;
        let admitted = task_admitted + handler_admitted;
        let floor = calls * p / 32;
        check(
            HANDLER_RUNS.load(Ordering::Acquire) == runs + BURSTS,
            "the handler ran between the task's bursts",
        );
        check(
            (floor..=floor + 1).contains(&admitted),
            if stage == 0 {
                "stage 1 (25 %): floor(c p) or one more admitted, task and handler together"
            } else {
                "stage 2 (50 %): floor(c p) or one more admitted, task and handler together"
            },
        );
        check(
            task_admitted > 0 && handler_admitted > 0,
            "both contexts admitted some calls",
        );
        check(
            task_other == 0 && HANDLER_OTHER.load(Ordering::Relaxed) == 0,
            "every rejection has cause Ramp",
        );
        check(
            RAMP.status() == Status::Recovering,
            "recovering during a stage",
        );
        hprintln!(
            "  ramp stage {}: {} of {} calls admitted ({} by the task, {} by PendSV)",
            stage + 1,
            admitted,
            calls,
            task_admitted,
            handler_admitted
        );
        check(next_stage > 0, "a rejection waits until the next stage");
        Timer::after(Duration::from_ticks(next_stage)).await;
    }
    check(
        RAMP.status() == Status::Closed,
        "past the last stage: closed",
    );
    let runs = HANDLER_RUNS.load(Ordering::Acquire);
    let handler_before = HANDLER_ADMITTED.load(Ordering::Relaxed);
    interrupt_now();
    check(
        HANDLER_RUNS.load(Ordering::Acquire) == runs + 1
            && HANDLER_ADMITTED.load(Ordering::Relaxed) == handler_before + BURST,
        "closed: the handler's calls all admitted",
    );
    let (a, _, _, _) = burst();
    check(a == BURST, "closed: the task's calls all admitted");
    check(RAMP.status() == Status::Closed, "still closed");
}
