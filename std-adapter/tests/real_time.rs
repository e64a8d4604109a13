//! The breaker on the real clock: short sleeps (tens of milliseconds).
//!
//! Assertions that a breaker is still open are made only when the elapsed
//! real time proves it must be (`Instant` taken before the trip), so a thread
//! descheduled for a long time cannot make them flaky; assertions that it has
//! reopened come after sleeps, which never end early.

use std::cell::Cell;
use std::thread::sleep;
use std::time::{Duration, Instant};

use tripword::{Clock, Outcome, Release, Status};
use tripword_std::{BreakerExt, CallError, MillisClock, MonotonicClock, Settings, StdBreaker};

const OPEN: Duration = Duration::from_millis(30);
const MARGIN: Duration = Duration::from_millis(5);

fn breaker(settings: Settings) -> StdBreaker {
    settings.build().expect("settings in range")
}

/// Trips `b` with `threshold` failures; returns an instant no later than the
/// trip.
fn trip(b: &StdBreaker, threshold: u32) -> Instant {
    let t0 = Instant::now();
    for _ in 0..threshold {
        let _ = b.call(|| Err::<(), _>("down"));
    }
    t0
}

/// Asserts `b` rejects without calling, if less than `open` has passed since
/// `t0` (which rules out a false alarm from a long deschedule).
fn assert_rejects_while_open(b: &StdBreaker, t0: Instant, open: Duration) {
    let called = Cell::new(false);
    let r = b.call(|| {
        called.set(true);
        Ok::<_, &str>(())
    });
    if t0.elapsed() < open {
        assert!(matches!(r, Err(CallError::Open(_))), "{r:?}");
        assert!(!called.get());
    }
}

#[test]
fn clocks_count_real_microseconds_and_milliseconds() {
    // `t0` is taken before the first reads and `real` after the last ones,
    // so the real interval encloses the clocks' interval however long this
    // thread is descheduled between any two lines.
    let t0 = Instant::now();
    let (us0, ms0) = (MonotonicClock.now(), MillisClock.now());
    sleep(Duration::from_millis(20));
    let (us1, ms1) = (MonotonicClock.now(), MillisClock.now());
    let real = t0.elapsed();
    assert!(us1 - us0 >= 20_000, "{}", us1 - us0);
    assert!(ms1 - ms0 >= 19, "{}", ms1 - ms0); // whole ms, rounded down
    // Never more than the real time that enclosed the reads (+1 tick for
    // the rounding down of both readings).
    assert!(
        us1 - us0 <= real.as_micros() as u64 + 1,
        "{} > {real:?}",
        us1 - us0
    );
    assert!(
        ms1 - ms0 <= real.as_millis() as u64 + 1,
        "{} > {real:?}",
        ms1 - ms0
    );
}

#[test]
fn reopens_after_the_open_time_and_closes_on_a_good_probe() {
    let b = breaker(Settings::new().failure_threshold(3).open_for(OPEN));
    let t0 = trip(&b, 3);
    assert_rejects_while_open(&b, t0, OPEN);

    // Cooldown over: one trial, which fails and reopens the breaker.
    sleep(OPEN + MARGIN);
    let t1 = Instant::now();
    assert_eq!(b.status(), Status::HalfOpen);
    assert_eq!(
        b.call(|| Err::<(), _>("still down")),
        Err(CallError::Inner("still down"))
    );
    assert_rejects_while_open(&b, t1, OPEN);

    // Cooldown over again: the trial succeeds and closes.
    sleep(OPEN + MARGIN);
    assert_eq!(b.call(|| Ok::<_, &str>("data")), Ok("data"));
    assert_eq!(b.status(), Status::Closed);
    assert_eq!(b.call(|| Ok::<_, &str>("data")), Ok("data"));
}

#[test]
fn exponential_backoff_doubles_the_open_time_in_real_time() {
    let b = breaker(
        Settings::new()
            .failure_threshold(1)
            .open_for(Duration::from_millis(20))
            .exponential_backoff(Duration::from_millis(80)),
    );
    trip(&b, 1);
    sleep(Duration::from_millis(20) + MARGIN);
    // Failed probe: second trip, open for 40 ms.
    let t1 = Instant::now();
    let _ = b.call(|| Err::<(), _>("down"));
    sleep(Duration::from_millis(25));
    assert_rejects_while_open(&b, t1, Duration::from_millis(40));
    sleep(Duration::from_millis(15) + MARGIN);
    assert_eq!(b.call(|| Ok::<_, ()>(1)), Ok(1));
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn a_lost_probe_times_out_and_its_late_result_is_stale() {
    let b = breaker(
        Settings::new()
            .failure_threshold(1)
            .open_for(Duration::from_millis(20))
            .probe_timeout(Duration::from_millis(20)),
    );
    trip(&b, 1);
    sleep(Duration::from_millis(20) + MARGIN);
    let slow_probe = b.acquire().expect("the probe");
    assert!(slow_probe.is_probe());
    sleep(Duration::from_millis(20) + MARGIN);
    // The probe timed out: the next caller probes, and succeeds.
    assert_eq!(b.call(|| Ok::<_, ()>(())), Ok(()));
    assert_eq!(b.status(), Status::Closed);
    // The slow probe's failure arrives late and changes nothing.
    assert_eq!(b.release(slow_probe, Outcome::Failure), Release::Stale);
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn millis_clock_on_the_32_bit_word() {
    // `horizon(ZERO)`: whole milliseconds in the narrow word (the default
    // horizon would keep 128 ms units).
    let b: tripword_std::MillisBreaker<tripword::W32> = Settings::new()
        .failure_threshold(1)
        .open_for(Duration::from_millis(20))
        .horizon(Duration::ZERO)
        .build_on(MillisClock, ())
        .unwrap();
    assert_eq!(b.config().time_shift(), 0);
    let t0 = Instant::now();
    let _ = b.call(|| Err::<(), _>(()));
    let status = b.status();
    // The open time lasts at least 20 ms of real time, whatever
    // the phase of the millisecond it started in.
    if t0.elapsed() < Duration::from_millis(20) {
        assert_eq!(status, Status::Open);
    }
    // 20 ms converts to 21 ticks; any two readings 21 ms of real time
    // apart are at least 21 ticks apart.
    sleep(Duration::from_millis(21) + MARGIN);
    assert_eq!(b.call(|| Ok::<_, ()>(())), Ok(()));
    assert_eq!(b.status(), Status::Closed);
}

/// Milliseconds of the `coarsetime` clock read directly, without touching
/// its cache: the source `CoarseClock` documents.
#[cfg(feature = "coarsetime")]
fn coarse_millis() -> u64 {
    let t = coarsetime::Instant::now_without_cache_update().as_ticks();
    coarsetime::Duration::from_ticks(t).as_millis()
}

/// A reading taken by `read` lies between two direct readings of the coarse
/// clock taken before and after it (true however long the thread is
/// descheduled between them), and is neither 0 nor 1 (the clock counts from
/// boot).
#[cfg(feature = "coarsetime")]
fn assert_bracketed(read: impl FnOnce() -> u64) {
    let before = coarse_millis();
    let reading = read();
    let after = coarse_millis();
    assert!(reading > 1, "{reading}");
    assert!(
        before <= reading && reading <= after,
        "{before} {reading} {after}"
    );
}

/// `CoarseClock` reads the coarse monotonic clock in milliseconds.
/// Mutation testing found the reading unpinned (a `now` returning 0 or 1
/// survived).
#[cfg(feature = "coarsetime")]
#[test]
fn coarse_clock_reads_the_coarse_monotonic_milliseconds() {
    use tripword_std::clock::CoarseClock;
    assert_bracketed(|| CoarseClock.now());
}

/// `RecentClock` reads the `coarsetime` cache in milliseconds: just after
/// an update its reading is bracketed as a direct one is (nothing else in
/// this test binary updates the cache, so no stale value can be stored in
/// between). Mutation testing found the reading unpinned (a `now`
/// returning 0 or 1 survived).
#[cfg(feature = "coarsetime")]
#[test]
fn recent_clock_reads_the_updated_coarse_milliseconds() {
    use tripword_std::clock::RecentClock;
    assert_bracketed(|| {
        coarsetime::Instant::update();
        RecentClock.now()
    });
}
