//! Example firmware: one `static` tripword breaker shared, without a lock,
//! by an RTIC 2 async software task and a hardware task (the bus
//! interrupt). The async task reads a flaky peripheral through the breaker
//! (`tripword::future::guard`), with `Mono::timeout_after` cancelling reads
//! that hang; the interrupt, pended while those reads are in flight,
//! reports its own transfers to the same breaker. Then a second breaker,
//! with two probes (the core's feature `recovery`), is shared by the task
//! and another hardware task (`trial.rs`). Runs on QEMU's lm3s6965evb
//! (Cortex-M3); the checks go out through semihosting and the exit code
//! says whether all passed.
//!
//! `cargo run --release` from this directory builds it and runs it (the
//! runner is in `.cargo/config.toml`).

#![no_std]
#![no_main]

mod bus;
mod check;
mod trace;
mod trial;

use core::sync::atomic::{AtomicU32, Ordering};

use bus::{Ends, Flaky, HandlerScript, Nak, Step};
use cortex_m_rt::{ExceptionFrame, exception};
use cortex_m_semihosting::hprintln;
use rtic_monotonics::fugit::{ExtU32, TimerDurationU64};
use rtic_monotonics::systick::prelude::*;
use trace::Trace;
use tripword::clock::FugitClock;
use tripword::future::guard;
use tripword::{Breaker32, Cause, Config, Outcome, Rejected, Release, ValidConfig};

// SysTick as RTIC's monotonic: 1 kHz, 32-bit fugit instants.
systick_monotonic!(Mono, 1_000);

/// QEMU's lm3s6965evb runs its core, and so SysTick, at 12 MHz.
const CORE_HZ: u32 = 12_000_000;

type MonoInstant = <Mono as Timebase>::Instant;

/// Three failures in a row trip; open 200 ms; a probe that has not reported
/// after 2 s is given up (far longer than the read timeout, so a probe left
/// held by a cancelled read would show as a rejection). Durations in the
/// monotonic's ticks (1 ms).
const CONFIG: Config = Config::new()
    .failure_threshold(3)
    .open_for(TimerDurationU64::<1_000>::from_ticks(200).as_ticks())
    .probe_timeout(TimerDurationU64::<1_000>::from_ticks(2_000).as_ticks());

/// The breaker, shared by the task and the interrupt: a `W32` word, so
/// lock-free on Cortex-M3 (no RTIC resource, no lock), on RTIC's monotonic.
static BUS: Breaker32<FugitClock<fn() -> MonoInstant>, Trace> = Breaker32::from_parts(
    ValidConfig::new(CONFIG),
    FugitClock(Mono::now),
    Trace::new(),
);

/// What the async task's reads do, in order (a rejected read takes none).
static FLAKY: Flaky = Flaky::new(&[
    step(Ends::Answer, false), // closed
    step(Ends::Nak, false),    // failure 1
    step(Ends::Nak, false),    // failure 2
    step(Ends::Nak, true),     // in flight when the handler's failure trips
    step(Ends::Hang, true),    // the first probe: cancelled by the timeout
    step(Ends::Answer, false), // the probe after the second trip: closes
]);

const fn step(ends: Ends, irq_midway: bool) -> Step {
    Step { ends, irq_midway }
}

/// What the interrupt's admitted transfers come to, in order.
static HANDLER: HandlerScript = HandlerScript::new(&[
    Outcome::Success, // closed
    Outcome::Failure, // the third failure: trips, while a task read is in flight
    Outcome::Success, // elected probe after the cancelled one: closes
    Outcome::Failure, // three more: the second trip
    Outcome::Failure,
    Outcome::Failure,
    Outcome::Success, // closed again
]);

/// How long a read may take before the timeout cancels it.
const READ_TIMEOUT_MS: u32 = 50;

/// What the handler's last run came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    None,
    Recorded { probe: bool },
    Stale,
    Rejected(Cause),
}

static HANDLER_RUNS: AtomicU32 = AtomicU32::new(0);
static HANDLER_LAST: AtomicU32 = AtomicU32::new(0);

impl Run {
    fn encode(self) -> u32 {
        match self {
            Run::None => 0,
            Run::Recorded { probe: false } => 1,
            Run::Recorded { probe: true } => 2,
            Run::Stale => 3,
            Run::Rejected(Cause::Open) => 4,
            Run::Rejected(Cause::Probing) => 5,
            Run::Rejected(_) => 6,
        }
    }
    fn last() -> Run {
        match HANDLER_LAST.load(Ordering::Acquire) {
            1 => Run::Recorded { probe: false },
            2 => Run::Recorded { probe: true },
            3 => Run::Stale,
            4 => Run::Rejected(Cause::Open),
            5 => Run::Rejected(Cause::Probing),
            6 => Run::Rejected(Cause::ForcedOpen),
            _ => Run::None,
        }
    }
}

/// What one guarded read came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    Sample(u16),
    Nak,
    Rejected(Rejected),
    TimedOut,
}

/// One read through the breaker under the timeout: `guard` asks the
/// breaker now (a rejection is ready at once, the read never polled) and
/// records the read's `Result` when it completes. A timeout drops the
/// guarded future before that: it records `Ignored`, so a cancelled probe
/// is given back.
async fn guarded_read() -> Read {
    match Mono::timeout_after(READ_TIMEOUT_MS.millis(), guard(&BUS, FLAKY.read())).await {
        Ok(Ok(Ok(sample))) => Read::Sample(sample),
        Ok(Ok(Err(Nak))) => Read::Nak,
        Ok(Err(rejected)) => Read::Rejected(rejected),
        Err(_) => Read::TimedOut,
    }
}

/// Pends the bus interrupt from the task and returns what its run came to.
/// It has the higher priority, so it preempts the task as soon as the pend
/// takes effect (the barriers make sure it has before the count is read).
fn interrupt_now() -> Run {
    let runs = HANDLER_RUNS.load(Ordering::Acquire);
    rtic::pend(bus::BUS_IRQ);
    cortex_m::asm::dsb();
    cortex_m::asm::isb();
    if HANDLER_RUNS.load(Ordering::Acquire) != runs + 1 {
        return Run::None;
    }
    Run::last()
}

#[rtic::app(device = lm3s6965, dispatchers = [SSI0])]
mod app {
    use super::*;
    use crate::check::check;
    use trace::{By, Entry};
    use tripword::Status;

    #[shared]
    struct Shared {}

    #[local]
    struct Local {}

    #[init]
    fn init(cx: init::Context) -> (Shared, Local) {
        Mono::start(cx.core.SYST, CORE_HZ);
        hprintln!("tripword RTIC example: thumbv7m-none-eabi on QEMU lm3s6965evb");
        if reader::spawn().is_err() {
            check::exit(false);
        }
        (Shared {}, Local {})
    }

    /// The bus interrupt: completes one transfer through the breaker (or is
    /// rejected and leaves the bus alone).
    #[task(binds = GPIOA, priority = 2)]
    fn bus_interrupt(_: bus_interrupt::Context) {
        trace::IN_HANDLER.store(true, Ordering::Relaxed);
        let run = match BUS.acquire() {
            Ok(ticket) => {
                let probe = ticket.is_probe();
                match BUS.release(ticket, HANDLER.next()) {
                    Release::Recorded => Run::Recorded { probe },
                    Release::Stale => Run::Stale,
                }
            }
            Err(rejected) => Run::Rejected(rejected.cause()),
        };
        HANDLER_LAST.store(run.encode(), Ordering::Release);
        HANDLER_RUNS.fetch_add(1, Ordering::AcqRel);
        trace::IN_HANDLER.store(false, Ordering::Relaxed);
    }

    /// The second hardware task: one call through the two-probe breaker
    /// of `trial.rs`.
    #[task(binds = GPIOB, priority = 2)]
    fn pair_interrupt(_: pair_interrupt::Context) {
        crate::trial::on_interrupt();
    }

    /// The async task: reads the peripheral through the breaker, pends the
    /// interrupt between and during reads, and checks what the breaker did.
    #[task(priority = 1)]
    async fn reader(_: reader::Context) {
        // Closed: both contexts' calls go through.
        check(
            matches!(guarded_read().await, Read::Sample(_)),
            "closed: the task's read answers",
        );
        check(
            interrupt_now() == Run::Recorded { probe: false },
            "closed: the handler's transfer is recorded",
        );

        // Failures from both contexts count towards one threshold: two from
        // the task, then the third from the handler, which fires while the
        // task's next read is in flight and trips the breaker.
        check(guarded_read().await == Read::Nak, "failure 1 (task)");
        check(guarded_read().await == Read::Nak, "failure 2 (task)");
        check(BUS.status() == Status::Closed, "two failures: still closed");
        let read = guarded_read().await; // its interrupt records failure 3
        check(
            Run::last() == Run::Recorded { probe: false },
            "failure 3 (handler, mid-read) recorded",
        );
        check(read == Read::Nak, "the in-flight read still ends (a NAK)");
        check(BUS.status() == Status::Open, "three failures: open");
        check(
            BUS.observer().stale() == (1, 0),
            "the in-flight read's release was stale: it changed nothing",
        );

        // Open: both contexts rejected, the peripheral not touched.
        let reads = FLAKY.reads();
        let wait = match guarded_read().await {
            Read::Rejected(r) => {
                check(
                    r.cause() == Cause::Open,
                    "open: the task is rejected, cause Open",
                );
                r.retry_after().unwrap_or(0)
            }
            _ => {
                check(false, "open: the task is rejected");
                0
            }
        };
        check(FLAKY.reads() == reads, "open: the peripheral was not read");
        check(
            interrupt_now() == Run::Rejected(Cause::Open),
            "open: the handler is rejected, cause Open",
        );
        // W32 at 1 kHz with the default horizon keeps time in 128 ms units
        // (`time_shift` 7): an open time lasts at least its setting and
        // less than three units longer, and retry_after covers it.
        let unit = 1u64 << BUS.config().time_shift();
        check(
            wait > 0 && wait < BUS.config().open_for() + 3 * unit,
            "open: retry_after is the rest of the open time",
        );

        // The open time passes; the task's next read is elected probe and
        // hangs; the handler, firing mid-read, is rejected (one probe); the
        // timeout cancels the read.
        Mono::delay((wait as u32).millis()).await;
        check(
            BUS.status() == Status::HalfOpen,
            "after retry_after: half-open",
        );
        let started = Mono::now();
        let probe = guarded_read().await;
        let took = (Mono::now() - started).as_millis();
        check(
            Run::last() == Run::Rejected(Cause::Probing),
            "during the probe: the handler is rejected, cause Probing",
        );
        check(probe == Read::TimedOut, "the hanging probe timed out");
        check(
            (READ_TIMEOUT_MS..500).contains(&took),
            "cancelled after the read timeout, not after the hang",
        );

        // The cancelled probe holds nothing: the handler is elected at once
        // (well before the 2 s probe timeout) and its success closes.
        check(
            BUS.status() == Status::HalfOpen,
            "cancelled probe: half-open, no probe held",
        );
        check(
            interrupt_now() == Run::Recorded { probe: true },
            "the handler is elected probe next",
        );
        check(
            BUS.status() == Status::Closed,
            "the handler's probe success: closed",
        );
        check(
            matches!(guarded_read().await, Read::Sample(_)),
            "closed again: the task's read answers",
        );

        // A second trip, all from the handler; the task waits it out and
        // its probe closes.
        for n in 1..=3 {
            check(
                interrupt_now() == Run::Recorded { probe: false },
                match n {
                    1 => "handler failure 1",
                    2 => "handler failure 2",
                    _ => "handler failure 3",
                },
            );
        }
        check(BUS.status() == Status::Open, "three handler failures: open");
        let wait = match guarded_read().await {
            Read::Rejected(r) if r.cause() == Cause::Open => r.retry_after().unwrap_or(0),
            _ => 0,
        };
        check(wait > 0, "open: the task is rejected with a wait");
        Mono::delay((wait as u32).millis()).await;
        check(
            matches!(guarded_read().await, Read::Sample(_)),
            "the task's probe answers",
        );
        check(
            BUS.status() == Status::Closed,
            "the task's probe success: closed",
        );
        check(
            interrupt_now() == Run::Recorded { probe: false },
            "closed: the handler's transfer is recorded",
        );

        // The whole history, with who made each transition, and counters
        // that move one at a time.
        use By::{Handler as H, Task as T};
        use Status::{Closed, HalfOpen, Open, Probing};
        let expected = [
            (Closed, Open, H),   // failure 3, mid-read
            (Open, HalfOpen, T), // the task's admission after the open time
            (HalfOpen, Probing, T),
            (Probing, HalfOpen, T), // the cancelled probe: Ignored
            (HalfOpen, Probing, H), // the handler elected
            (Probing, Closed, H),
            (Closed, Open, H), // the second trip
            (Open, HalfOpen, T),
            (HalfOpen, Probing, T),
            (Probing, Closed, T),
        ];
        let trace = BUS.observer();
        check(trace.len() == expected.len(), "ten transitions");
        let mut matches = trace.len() == expected.len();
        let mut counter = None;
        for (
            Entry {
                from,
                to,
                counter: c,
                by,
            },
            (f, t, b),
        ) in trace.entries().zip(expected)
        {
            matches &= (from, to, by) == (f, t, b);
            matches &= counter.is_none_or(|prev: u32| c == prev + 1);
            counter = Some(c);
        }
        check(
            matches,
            "each transition as expected, by the expected context, counters consecutive",
        );
        check(trace.stale() == (1, 0), "one stale release in all");
        hprintln!(
            "  ({} task reads, {} handler runs, {} transitions)",
            FLAKY.reads(),
            HANDLER_RUNS.load(Ordering::Relaxed),
            trace.len()
        );
        // A second breaker, two probes, shared with the GPIOB handler.
        crate::trial::scenario().await;
        check::finish()
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("panic: {}", info);
    check::exit(false)
}

#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    hprintln!("hard fault: {:?}", frame);
    check::exit(false)
}
