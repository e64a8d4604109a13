//! Example firmware: an embassy task guards a flaky peripheral with a
//! `static` tripword breaker on embassy's clock (`tripword::future::guard`
//! around each read), and `with_timeout` cancels reads that hang. Then a
//! second breaker, with a ramp (the core's feature `recovery`), is shared
//! by the task and an interrupt handler (`ramp.rs`). Runs on QEMU's
//! mps2-an386 (Cortex-M4F); the checks go out through semihosting and the
//! exit code says whether all passed.
//!
//! `cargo run --release` from this directory builds it and runs it (the
//! runner is in `.cargo/config.toml`).

#![no_std]
#![no_main]

mod check;
mod peripheral;
mod ramp;
mod time_driver;

use core::sync::atomic::{AtomicU32, Ordering};

use check::check;
use cortex_m_rt::{ExceptionFrame, exception};
use cortex_m_semihosting::hprintln;
use embassy_executor::Spawner;
use embassy_futures::join::join;
use embassy_time::{Duration, Instant, TimeoutError, Timer, with_timeout};
use peripheral::{Flaky, Nak, Step};
use tripword::clock::EmbassyClock;
use tripword::future::{Classifier, guard, guard_with};
use tripword::{
    Breaker, Cause, Config, Observer, Outcome, Rejected, Status, Transition, ValidConfig, W64,
};

/// Three failures in a row trip; open 100 ms; a probe that has not
/// reported after 2 s is given up (far longer than the read timeout, so a
/// probe left held by a cancelled read would show as a rejection).
const CONFIG: Config = Config::new()
    .failure_threshold(3)
    .open_for(OPEN_FOR.as_ticks())
    .probe_timeout(Duration::from_millis(2_000).as_ticks());

/// How long the breaker stays open after a trip.
const OPEN_FOR: Duration = Duration::from_millis(100);

/// How long a read may take before `with_timeout` cancels it.
const READ_TIMEOUT: Duration = Duration::from_millis(50);

/// The breaker: a `static`, on embassy's clock (1 kHz ticks here, so
/// whole milliseconds in a `W64` word), with an observer that counts.
static SENSOR: Breaker<EmbassyClock, W64, Counts> =
    Breaker::from_parts(ValidConfig::new(CONFIG), EmbassyClock::new(), Counts::new());

/// The peripheral's script: two answers, three NAKs (the trip), a hang
/// (the first probe, cancelled), two answers (the next probe, then
/// closed), three hangs (judged failures: the second trip), then answers.
static FLAKY: Flaky = Flaky::new(&[
    Step::Answer,
    Step::Answer,
    Step::Nak,
    Step::Nak,
    Step::Nak,
    Step::Hang,
    Step::Answer,
    Step::Answer,
    Step::Hang,
    Step::Hang,
    Step::Hang,
]);

/// What one guarded read came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    Sample(u16),
    Nak,
    Rejected(Rejected),
    TimedOut,
}

impl Read {
    /// Flattens `with_timeout(guard(..))`'s nested result.
    fn from(result: Result<Result<Result<u16, Nak>, Rejected>, TimeoutError>) -> Read {
        match result {
            Ok(Ok(Ok(sample))) => Read::Sample(sample),
            Ok(Ok(Err(Nak))) => Read::Nak,
            Ok(Err(rejected)) => Read::Rejected(rejected),
            Err(TimeoutError) => Read::TimedOut,
        }
    }
}

/// One read through the breaker: `guard` asks the breaker now (a
/// rejection is ready at once, the read never polled) and records the
/// read's `Result` when it completes. A timeout drops the guarded future
/// before that: it records `Ignored`, so a cancelled probe is given back.
async fn guarded_read() -> Read {
    Read::from(with_timeout(READ_TIMEOUT, guard(&SENSOR, FLAKY.read())).await)
}

/// The same read judged by a `Classifier`: a NAK is a failure, and so is a
/// read the timeout cancelled (a hang is the peripheral's fault too).
async fn read_hang_is_failure() -> Read {
    let judge = Classifier::new(|read: &Result<u16, Nak>| match read {
        Ok(_) => Outcome::Success,
        Err(Nak) => Outcome::Failure,
    })
    .on_cancel(Outcome::Failure);
    Read::from(with_timeout(READ_TIMEOUT, guard_with(&SENSOR, judge, FLAKY.read())).await)
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    let Some(mut core) = cortex_m::Peripherals::take() else {
        hprintln!("core peripherals already taken");
        check::exit(false)
    };
    time_driver::start(&mut core.SYST);
    hprintln!("tripword embassy example: thumbv7em-none-eabihf on QEMU mps2-an386");
    spawner.spawn(sensor_task().expect("one sensor task"));
}

/// The task that reads the peripheral through the breaker, and checks what
/// the breaker did at each step.
#[embassy_executor::task]
async fn sensor_task() {
    let counts = SENSOR.observer();

    // Closed: reads go through.
    check(
        matches!(guarded_read().await, Read::Sample(_)),
        "closed: first read answers",
    );
    check(
        matches!(guarded_read().await, Read::Sample(_)),
        "closed: second read answers",
    );

    // Three NAKs in a row trip the breaker, on the third.
    check(guarded_read().await == Read::Nak, "first NAK recorded");
    check(guarded_read().await == Read::Nak, "second NAK recorded");
    check(
        SENSOR.status() == Status::Closed,
        "two failures: still closed",
    );
    check(guarded_read().await == Read::Nak, "third NAK recorded");
    check(
        SENSOR.status() == Status::Open,
        "three failures in a row: open",
    );
    let tripped = Instant::now();

    // Open: rejected at once, the peripheral not touched.
    let reads = FLAKY.reads();
    match guarded_read().await {
        Read::Rejected(r) => {
            check(r.cause() == Cause::Open, "open: rejected with cause Open");
            let wait = r.retry_after().unwrap_or(0);
            check(
                wait > 0 && wait <= OPEN_FOR.as_ticks(),
                "open: retry_after within the open time",
            );
        }
        other => check(
            false,
            match other {
                Read::Sample(_) => "open: read went through",
                _ => "open: not rejected",
            },
        ),
    }
    check(FLAKY.reads() == reads, "open: the peripheral was not read");

    // The open time passes: half-open.
    Timer::at(tripped + OPEN_FOR).await;
    check(
        SENSOR.status() == Status::HalfOpen,
        "after the open time: half-open",
    );

    // The next read is elected probe; the peripheral hangs and the timeout
    // cancels it. Meanwhile a second caller is rejected: one probe only.
    let started = Instant::now();
    let (probe, bystander) = join(guarded_read(), async {
        Timer::after_millis(10).await;
        (SENSOR.status(), guarded_read().await)
    })
    .await;
    let took = started.elapsed();
    check(probe == Read::TimedOut, "probe: the hanging read timed out");
    check(
        took >= READ_TIMEOUT && took < Duration::from_millis(500),
        "probe: cancelled after the read timeout, not after the hang",
    );
    check(bystander.0 == Status::Probing, "during the probe: probing");
    check(
        matches!(bystander.1, Read::Rejected(r) if r.cause() == Cause::Probing),
        "during the probe: a second caller is rejected with cause Probing",
    );

    // The cancelled probe holds nothing: half-open again, at once, and the
    // next caller is elected (well before the 2 s probe timeout).
    check(
        SENSOR.status() == Status::HalfOpen,
        "cancelled probe: back to half-open, no probe held",
    );
    check(
        counts.ignored() == 1,
        "cancelled probe: recorded as ignored",
    );
    let probes = counts.probes();
    let sample = guarded_read().await;
    check(counts.probes() == probes + 1, "next caller elected probe");
    check(
        matches!(sample, Read::Sample(_)),
        "second probe: the peripheral answers",
    );
    check(SENSOR.status() == Status::Closed, "probe success: closed");
    check(
        started.elapsed() < Duration::from_millis(2_000),
        "recovered before the probe timeout could have freed a held probe",
    );

    // Closed again: reads go through.
    check(
        matches!(guarded_read().await, Read::Sample(_)),
        "closed again: reads answer",
    );

    // Judged by a classifier that counts a cancelled read as a failure,
    // three hangs trip the breaker: each read is cut off by the timeout.
    for n in 1..=3 {
        check(
            read_hang_is_failure().await == Read::TimedOut,
            match n {
                1 => "hang 1 timed out (judged a failure)",
                2 => "hang 2 timed out (judged a failure)",
                _ => "hang 3 timed out (judged a failure)",
            },
        );
    }
    check(
        SENSOR.status() == Status::Open,
        "three cancelled reads judged failures: open",
    );
    check(
        counts.ignored() == 1,
        "those cancellations were not recorded as ignored",
    );

    // What the observer saw: the trip, two probe elections (each
    // Open/HalfOpen -> Probing), the cancelled probe back to half-open, the
    // close, the second trip; no stale release.
    check(counts.transitions() == 7, "seven transitions in all");
    check(counts.closes() == 1, "closed once by the probe");
    check(counts.stale() == 0, "no stale release");
    hprintln!(
        "  ({} reads started, {} transitions, {} probes, {} rejected)",
        FLAKY.reads(),
        counts.transitions(),
        counts.probes(),
        counts.rejected()
    );
    // A second breaker, with a ramp, shared with an interrupt handler.
    ramp::scenario().await;
    check::finish()
}

/// Counts what the breaker reports, for the checks.
struct Counts {
    transitions: AtomicU32,
    closes: AtomicU32,
    probes: AtomicU32,
    rejected: AtomicU32,
    ignored: AtomicU32,
    stale: AtomicU32,
}

impl Counts {
    const fn new() -> Self {
        Counts {
            transitions: AtomicU32::new(0),
            closes: AtomicU32::new(0),
            probes: AtomicU32::new(0),
            rejected: AtomicU32::new(0),
            ignored: AtomicU32::new(0),
            stale: AtomicU32::new(0),
        }
    }
    fn transitions(&self) -> u32 {
        self.transitions.load(Ordering::Relaxed)
    }
    fn closes(&self) -> u32 {
        self.closes.load(Ordering::Relaxed)
    }
    fn probes(&self) -> u32 {
        self.probes.load(Ordering::Relaxed)
    }
    fn rejected(&self) -> u32 {
        self.rejected.load(Ordering::Relaxed)
    }
    fn ignored(&self) -> u32 {
        self.ignored.load(Ordering::Relaxed)
    }
    fn stale(&self) -> u32 {
        self.stale.load(Ordering::Relaxed)
    }
}

impl Observer for Counts {
    fn on_transition(&self, t: Transition) {
        self.transitions.fetch_add(1, Ordering::Relaxed);
        if t.to == Status::Closed {
            self.closes.fetch_add(1, Ordering::Relaxed);
        }
    }
    fn on_admitted(&self, ticket: &tripword::Ticket) {
        if ticket.is_probe() {
            self.probes.fetch_add(1, Ordering::Relaxed);
        }
    }
    fn on_rejected(&self, _: Rejected) {
        self.rejected.fetch_add(1, Ordering::Relaxed);
    }
    fn on_recorded(&self, outcome: Outcome) {
        if outcome == Outcome::Ignored {
            self.ignored.fetch_add(1, Ordering::Relaxed);
        }
    }
    fn on_stale(&self, _: Outcome) {
        self.stale.fetch_add(1, Ordering::Relaxed);
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

#[exception]
unsafe fn DefaultHandler(irq: i16) {
    hprintln!("unexpected exception {}", irq);
    check::exit(false)
}
