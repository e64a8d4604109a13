//! A flaky service behind a breaker, in real time: seed 000's scenario
//! (threshold 3, open for 100 ms), then 8 threads racing to be the probe.
//!
//! Run it with `cargo run --release -p tripword-std --example flaky_service`.
//! It exits non-zero if the race admits anything but exactly one probe.

use std::fmt;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use tripword_std::{BreakerExt, CallError, Settings, StdBreaker};
use tripword_std::{Observer, OnTransition, Status, Transition, W64};

const THRESHOLD: u32 = 3;
const OPEN_FOR: Duration = Duration::from_millis(100);

/// A pretend service that can be switched up and down, and counts how often
/// it was really called.
struct Service {
    up: AtomicBool,
    calls: AtomicUsize,
}

/// What the service answers when it is down.
#[derive(Debug)]
struct ServiceDown;

impl fmt::Display for ServiceDown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("service down")
    }
}

impl std::error::Error for ServiceDown {}

impl Service {
    fn new() -> Self {
        Service {
            up: AtomicBool::new(true),
            calls: AtomicUsize::new(0),
        }
    }
    fn set(&self, up: bool) {
        self.up.store(up, Ordering::SeqCst);
    }
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
    fn request(&self) -> Result<&'static str, ServiceDown> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.up.load(Ordering::SeqCst) {
            Ok("data")
        } else {
            Err(ServiceDown)
        }
    }
}

/// How many times a probe was elected (a transition into `Probing`).
static PROBES_ELECTED: AtomicUsize = AtomicUsize::new(0);

/// The observer: prints each transition as the breaker makes it.
fn print_transition(t: Transition) {
    if t.to == Status::Probing {
        PROBES_ELECTED.fetch_add(1, Ordering::SeqCst);
    }
    println!("    transition: {t}");
}

fn show(result: &Result<&str, CallError<ServiceDown>>) -> String {
    match result {
        Ok(v) => format!("Ok({v:?})"),
        Err(CallError::Open(r)) => format!("Err(circuit {}) - not called", r.cause()),
        Err(CallError::Inner(e)) => format!("Err({e})"),
    }
}

fn main() {
    let settings = Settings::new()
        .failure_threshold(THRESHOLD)
        .open_for(OPEN_FOR);
    let observer = OnTransition(print_transition);
    let service = Service::new();
    let breaker = settings.build_with(observer).expect("settings in range");
    let call = || breaker.call(|| service.request());
    let log = |label: &str, r: Result<&str, CallError<ServiceDown>>| {
        println!("{label:<16} {}", show(&r));
    };

    println!(
        "tripword flaky_service: threshold {THRESHOLD}, open for {} ms, real time (1 µs ticks)",
        OPEN_FOR.as_millis()
    );
    println!("(transitions print as they happen, inside the call that makes them)\n");

    println!("# The service is up: the breaker stays out of the way.");
    log("closed:", call());

    println!("# The service goes down. Three failures in a row open the breaker.");
    service.set(false);
    for _ in 0..THRESHOLD {
        log("closed:", call());
    }
    let opened = Instant::now();
    println!("{:<16} {}", "state:", breaker.status());

    println!("# Open: callers get an answer at once; the service isn't called.");
    for _ in 0..3 {
        log("open:", call());
    }
    println!("{:<16} {}", "service calls:", service.calls());

    println!("# After the cooldown, one trial call. Still down: open again.");
    wait_for_half_open(&breaker, opened);
    log("half-open trial:", call());
    let reopened = Instant::now();
    println!("{:<16} {}", "state:", breaker.status());

    println!("# The service recovers. The next trial succeeds and closes.");
    service.set(true);
    wait_for_half_open(&breaker, reopened);
    log("half-open trial:", call());
    println!("{:<16} {}", "state:", breaker.status());
    log("closed:", call());
    println!("{:<16} {}", "service calls:", service.calls());

    race_for_the_probe(&settings);
}

/// Polls the status every millisecond, as the seed's `Wait.until` does. The
/// status is a pure read: an elapsed `Open` reads as half-open, and the next
/// call makes (and reports) the move, `open -> half-open -> probing`.
fn wait_for_half_open<O: Observer>(b: &StdBreaker<W64, O>, since: Instant) {
    while b.status() != Status::HalfOpen {
        assert!(
            since.elapsed() < 50 * OPEN_FOR,
            "the breaker never became half-open"
        );
        thread::sleep(Duration::from_millis(1));
    }
    println!(
        "{:<16} {:.1} ms after opening",
        "half-open:",
        since.elapsed().as_secs_f64() * 1e3
    );
}

/// Eight threads hit a breaker whose open time has just elapsed: exactly one
/// becomes the probe (SPEC I1). The probe holds its call until every other
/// thread has had its answer, so nobody can be admitted after it closes the
/// breaker: the count is exact, not a matter of timing.
fn race_for_the_probe(settings: &Settings) {
    const THREADS: usize = 8;
    println!("\n# {THREADS} threads hit a breaker whose open time has just elapsed.");
    let service = Service::new();
    let breaker = settings
        .build_with(OnTransition(print_transition))
        .expect("settings in range");
    service.set(false);
    for _ in 0..THRESHOLD {
        let _ = breaker.call(|| service.request());
    }
    service.set(true);
    // Let the open time elapse without touching the breaker: the word still
    // says Open, and the racers make the lazy move themselves.
    let wait = OPEN_FOR + Duration::from_millis(2);
    thread::sleep(wait);
    println!(
        "tripped it with {THRESHOLD} failures, then left it alone for {} ms; service up again",
        wait.as_millis()
    );
    let calls_before = service.calls();
    PROBES_ELECTED.store(0, Ordering::SeqCst);

    let start = Barrier::new(THREADS);
    let answered = Barrier::new(THREADS);
    let admitted = AtomicUsize::new(0);
    let results: Vec<(usize, String, bool)> = thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|i| {
                let (breaker, service) = (&breaker, &service);
                let (start, answered, admitted) = (&start, &answered, &admitted);
                s.spawn(move || {
                    start.wait();
                    let r = breaker.call(|| {
                        admitted.fetch_add(1, Ordering::SeqCst);
                        answered.wait(); // hold until everyone has an answer
                        service.request()
                    });
                    let rejected = matches!(r, Err(CallError::Open(_)));
                    if rejected {
                        answered.wait();
                    }
                    let verdict = if rejected { "rejected:" } else { "probe:" };
                    (i, format!("{verdict:<10}{}", show(&r)), rejected)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });

    for (i, r, _) in &results {
        println!("thread {i}: {r}");
    }
    let admitted = admitted.load(Ordering::SeqCst);
    let rejected = results.iter().filter(|(_, _, rejected)| *rejected).count();
    println!(
        "admitted as probe: {admitted}, rejected: {rejected}, service calls: {}, state: {}",
        service.calls() - calls_before,
        breaker.status()
    );
    assert_eq!(admitted, 1, "exactly one probe must be admitted");
    assert_eq!(
        PROBES_ELECTED.load(Ordering::SeqCst),
        1,
        "one probe election"
    );
    assert_eq!(rejected, THREADS - 1);
    assert_eq!(breaker.status(), Status::Closed);
}
