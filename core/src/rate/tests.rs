//! The failure-rate policy through `RateBreaker`, on a hand-moved clock, for
//! both word widths.

use super::*;
use crate::clock::ManualClock;
use crate::transition::Transition;
use crate::word::W32;
use core::cell::RefCell;
use std::vec::Vec;

#[derive(Default)]
struct Log(RefCell<Vec<Transition>>);
impl Observer for Log {
    fn on_transition(&self, t: Transition) {
        self.0.borrow_mut().push(t);
    }
}
impl Log {
    fn trips(&self) -> usize {
        let t = self.0.borrow();
        t.iter()
            .filter(|t| t.to == Status::Open && t.from == Status::Closed)
            .count()
    }
}

/// 50 % over 8 slices of 1 024 ticks (window 8 000, rounded up to 8 192),
/// at least 20 calls; open for 500 ticks.
fn rate() -> Rate {
    Rate::new().failure_rate(50).minimum_calls(20).window(8_000)
}
fn config() -> Config {
    Config::new().open_for(500).probe_timeout(100).horizon(0)
}

fn breaker<'a, W: Word>(
    clock: &'a ManualClock,
    log: &'a Log,
) -> RateBreaker<&'a ManualClock, W, &'a Log, 8> {
    RateBreaker::from_parts(
        config().check::<W>().unwrap(),
        rate().check::<W, 8>().unwrap(),
        clock,
        log,
    )
}

fn calls<W: Word>(
    b: &RateBreaker<&ManualClock, W, &Log, 8>,
    outcome: Outcome,
    n: usize,
) -> Vec<Release> {
    (0..n)
        .map(|_| {
            let t = b.acquire().expect("closed");
            b.release(t, outcome)
        })
        .collect()
}

fn derived<W: Word>() {
    let r = rate().check::<W, 8>().unwrap();
    assert_eq!(r.slice_shift(), 10);
    assert_eq!(r.effective_window(), 8_192);
    assert_eq!(
        (r.failure_rate(), r.minimum_calls(), r.window()),
        (50, 20, 8_000)
    );
    assert!(r.trips(20, 10) && !r.trips(20, 9) && !r.trips(19, 19));
    assert!(!r.trips(3, 2)); // below the minimum
    let exact = Rate::new().window(16).check::<W, 16>().unwrap();
    assert_eq!((exact.slice_shift(), exact.effective_window()), (0, 16));
}

#[test]
fn derived_fields() {
    derived::<W64>();
    derived::<W32>();
}

/// Nothing trips below the minimum of calls, even at 100 % failures; the
/// failure that reaches it trips.
fn minimum_calls<W: Word>() {
    let clock = ManualClock::new(0);
    let log = Log::default();
    let b = breaker::<W>(&clock, &log);
    assert!(
        calls(&b, Outcome::Failure, 19)
            .iter()
            .all(|r| *r == Release::Recorded)
    );
    assert_eq!(b.status(), Status::Closed);
    assert_eq!(b.window_counts(0, 0), (19, 19));
    assert_eq!(calls(&b, Outcome::Failure, 1), [Release::Recorded]);
    assert_eq!(b.status(), Status::Open);
    assert_eq!(log.trips(), 1);
}

/// Below the rate nothing trips, however many calls; at it, the failure
/// that reaches it trips.
fn rate_threshold<W: Word>() {
    let clock = ManualClock::new(0);
    let log = Log::default();
    let b = breaker::<W>(&clock, &log);
    // 11 successes, 10 failures: 10/21 < 50 %.
    calls(&b, Outcome::Success, 11);
    calls(&b, Outcome::Failure, 10);
    assert_eq!(b.status(), Status::Closed);
    // The 11th failure: 11/22 = 50 %.
    calls(&b, Outcome::Failure, 1);
    assert_eq!(b.status(), Status::Open);
    assert_eq!(log.trips(), 1);
}

/// The window slides: a slice counts while its epoch is among the last 8,
/// the current one included, and not after.
fn window_slides<W: Word>() {
    let clock = ManualClock::new(0);
    let log = Log::default();
    let b = breaker::<W>(&clock, &log);
    calls(&b, Outcome::Failure, 15); // epoch 0
    clock.set(7 * 1024); // epoch 7: epoch 0 still in the window
    assert_eq!(b.window_counts(7, 0), (15, 15));
    clock.set(8 * 1024); // epoch 8: epoch 0 has left it
    assert_eq!(b.window_counts(8, 0), (0, 0));
    calls(&b, Outcome::Failure, 5);
    assert_eq!(b.status(), Status::Closed, "the old slice no longer counts");
    assert_eq!(b.window_counts(8, 0), (5, 5));
    // Back to a window that holds 15 + 5 failures: 20 of 20 trips at once.
    clock.set(9 * 1024 + 3);
    calls(&b, Outcome::Failure, 14);
    assert_eq!(b.status(), Status::Closed);
    calls(&b, Outcome::Failure, 1);
    assert_eq!(b.status(), Status::Open);
}

/// The same slice's bucket, seen again a whole window later, is started
/// afresh (the rollover), not added to.
fn rollover_restarts_the_bucket<W: Word>() {
    let clock = ManualClock::new(0);
    let log = Log::default();
    let b = breaker::<W>(&clock, &log);
    calls(&b, Outcome::Failure, 15);
    clock.set(8 * 1024 + 5); // epoch 8: bucket 0 again
    calls(&b, Outcome::Success, 1);
    assert_eq!(b.window_counts(8, 0), (1, 0));
}

/// A closed call's result from a state that has passed is stale and
/// counts nothing (I2); after a probe closes the breaker, the window is
/// empty (a new counter).
fn stale_and_fresh<W: Word>() {
    let clock = ManualClock::new(0);
    let log = Log::default();
    let b = breaker::<W>(&clock, &log);
    let old = b.acquire().unwrap();
    let old2 = b.acquire().unwrap();
    calls(&b, Outcome::Failure, 20);
    assert_eq!(b.status(), Status::Open);
    assert_eq!(b.release(old, Outcome::Failure), Release::Stale);
    clock.set(500);
    let probe = b.acquire().unwrap();
    assert!(probe.is_probe());
    assert_eq!(b.release(probe, Outcome::Success), Release::Recorded);
    assert_eq!(b.status(), Status::Closed);
    // The old ticket is still stale; nothing of the 20 failures counts.
    assert_eq!(b.release(old2, Outcome::Success), Release::Stale);
    let counter = b.breaker().snapshot().unwrap().counter;
    assert_eq!(b.window_counts(0, counter), (0, 0));
    calls(&b, Outcome::Failure, 19);
    assert_eq!(b.status(), Status::Closed);
    assert_eq!(log.trips(), 1);
}

/// Many failures of one closed state, released after the rate is reached:
/// exactly one trips (I3), the others find the counter moved.
fn trips_once<W: Word>() {
    let clock = ManualClock::new(0);
    let log = Log::default();
    let b = breaker::<W>(&clock, &log);
    let tickets: Vec<Ticket> = (0..40).map(|_| b.acquire().unwrap()).collect();
    let released: Vec<Release> = tickets
        .into_iter()
        .map(|t| b.release(t, Outcome::Failure))
        .collect();
    assert_eq!(log.trips(), 1);
    assert!(released[..20].iter().all(|r| *r == Release::Recorded));
    assert!(released[20..].iter().all(|r| *r == Release::Stale));
}

/// A probe's failure reopens, as in the consecutive breaker; `Ignored`
/// counts nothing; another breaker's ticket is stale.
fn probe_ignored_foreign<W: Word>() {
    let clock = ManualClock::new(0);
    let log = Log::default();
    let b = breaker::<W>(&clock, &log);
    let other = breaker::<W>(&clock, &log);
    calls(&b, Outcome::Ignored, 30);
    assert_eq!(b.window_counts(0, 0), (0, 0));
    let foreign = other.acquire().unwrap();
    assert_eq!(b.release(foreign, Outcome::Failure), Release::Stale);
    calls(&b, Outcome::Failure, 20);
    clock.set(500);
    let probe = b.acquire().unwrap();
    assert_eq!(b.release(probe, Outcome::Failure), Release::Recorded);
    assert_eq!(b.status(), Status::Open);
    assert_eq!(
        log.trips(),
        1,
        "a probe's failure reopens; it is not a trip from Closed"
    );
}

#[test]
fn rate_policy_w64() {
    minimum_calls::<W64>();
    rate_threshold::<W64>();
    window_slides::<W64>();
    rollover_restarts_the_bucket::<W64>();
    stale_and_fresh::<W64>();
    trips_once::<W64>();
    probe_ignored_foreign::<W64>();
}

#[test]
fn rate_policy_w32() {
    minimum_calls::<W32>();
    rate_threshold::<W32>();
    window_slides::<W32>();
    rollover_restarts_the_bucket::<W32>();
    stale_and_fresh::<W32>();
    trips_once::<W32>();
    probe_ignored_foreign::<W32>();
}

/// A full slice halves both counts instead of spilling into the next field
/// or letting failures outgrow calls: its rate is kept. One failure in four
/// over 5 000 calls in one slice of a W32 bucket (1 023 at most) stays at
/// 25 %, and never trips a 30 % breaker.
#[test]
fn full_slices_keep_their_rate() {
    let clock = ManualClock::new(0);
    let log = Log::default();
    let b: RateBreaker<&ManualClock, W32, &Log, 8> = RateBreaker::from_parts(
        config().check::<W32>().unwrap(),
        rate().failure_rate(30).check::<W32, 8>().unwrap(),
        &clock,
        &log,
    );
    calls(&b, Outcome::Success, 1_023);
    assert_eq!(b.window_counts(0, 0), (1_023, 0));
    calls(&b, Outcome::Success, 1);
    assert_eq!(b.window_counts(0, 0), (512, 0), "halved, then counted");
    // Under Miri (minutes per thousand calls) only past the start's decay.
    let rounds = if cfg!(miri) { 2_200 } else { 5_000 };
    for i in 0..rounds {
        let outcome = if i % 4 == 3 {
            Outcome::Failure
        } else {
            Outcome::Success
        };
        calls(&b, outcome, 1);
        let (n, f) = b.window_counts(0, 0);
        assert!(n <= 1_023 && f <= n);
        // The all-success start decays by half per halving (every ~512
        // calls); halving rounds failures down by at most one each time.
        if i > 2_000 {
            assert!(f * 100 >= n * 20 && f * 100 <= n * 26, "{f} of {n}");
        }
    }
    assert_eq!(b.status(), Status::Closed);
    assert_eq!(BucketLayout::for_bits(64).max_count(), 65_535);
}

/// Out-of-range fields are refused, naming the field and its range.
#[test]
fn bad_rates_are_refused() {
    let e = Rate::new().failure_rate(0).check::<W64, 8>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "failure_rate (percent) = 0 is out of range 1..=100 percent"
    );
    let e = Rate::new().failure_rate(101).check::<W64, 8>().unwrap_err();
    assert_eq!((e.field, e.value), (Field::FailureRate, 101));
    assert!(Rate::new().failure_rate(100).check::<W64, 8>().is_ok());
    assert!(Rate::new().failure_rate(1).check::<W64, 8>().is_ok());
    assert!(Rate::new().minimum_calls(1).check::<W32, 8>().is_ok());
    let r = Rate::new().window(5).check::<W32, 2>().unwrap();
    assert_eq!(
        std::format!("{r:?}"),
        "ValidRate { rate: Rate { percent: 50, minimum_calls: 20, window: 5 }, buckets: 2, slice_shift: 2 }"
    );
    let e = Rate::new()
        .minimum_calls(1_024)
        .check::<W32, 8>()
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "minimum_calls = 1024 is out of range 1..=1023"
    );
    assert!(Rate::new().minimum_calls(1_023).check::<W32, 8>().is_ok());
    assert!(Rate::new().minimum_calls(0).check::<W64, 8>().is_err());
    let e = Rate::new().window(7).check::<W64, 8>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "window = 7 is out of range 8..=1152921504606846976 ticks"
    );
    assert!(Rate::new().window(1 << 60).check::<W64, 2>().is_ok());
    assert!(Rate::new().window((1 << 60) + 1).check::<W64, 2>().is_err());
}

/// A clock that plays a script: each reading is the next value (the last
/// one repeats), and a reading may first run a hook, to change the
/// breaker's state between a release's check of its ticket and its count,
/// as another thread could.
struct Script {
    readings: RefCell<std::collections::VecDeque<u64>>,
    hook: RefCell<Option<std::boxed::Box<dyn FnOnce()>>>,
    reads: core::cell::Cell<u32>,
}

impl Clock for Script {
    fn now(&self) -> u64 {
        self.reads.set(self.reads.get() + 1);
        let hook = self.hook.borrow_mut().take();
        if let Some(hook) = hook {
            hook();
        }
        let mut r = self.readings.borrow_mut();
        if r.len() > 1 {
            r.pop_front().unwrap()
        } else {
            r[0]
        }
    }
}

fn leak<T>(t: T) -> &'static T {
    std::boxed::Box::leak(std::boxed::Box::new(t))
}

type Small<W> = RateBreaker<&'static Script, W, (), 2>;

/// 2 buckets of 1 tick, 50 %, at least 1 call, open 10; its clock plays
/// `readings`. Leaked, so a clock hook can use it.
fn small<W: Word>(readings: &[u64]) -> &'static Small<W> {
    let clock = leak(Script {
        readings: RefCell::new(readings.iter().copied().collect()),
        hook: RefCell::new(None),
        reads: core::cell::Cell::new(0),
    });
    leak(RateBreaker::from_parts(
        Config::new()
            .open_for(10)
            .probe_timeout(5)
            .horizon(0)
            .check::<W>()
            .unwrap(),
        Rate::new()
            .failure_rate(50)
            .minimum_calls(1)
            .window(2)
            .check::<W, 2>()
            .unwrap(),
        clock,
        (),
    ))
}

fn play<W: Word>(b: &Small<W>, readings: &[u64]) {
    *b.breaker().clock().readings.borrow_mut() = readings.iter().copied().collect();
}

/// A release whose state passes between its check and its count (a whole
/// trip, open time, probe and close, with a success counted under the new
/// state in the same slice) is stale and does not reset the new state's
/// bucket: loom's `rate_stale_release_vs_new_state`, replayed in one
/// thread.
fn stale_between_check_and_count<W: Word>() {
    let b = small::<W>(&[20]);
    let old = b.acquire().unwrap();
    let tripper = b.acquire().unwrap();
    let hook = move || {
        assert_eq!(b.release(tripper, Outcome::Failure), Release::Recorded);
        play(b, &[30]);
        let probe = b.acquire().unwrap();
        assert_eq!(b.release(probe, Outcome::Success), Release::Recorded);
        let fresh = b.acquire().unwrap();
        assert_eq!(b.release(fresh, Outcome::Success), Release::Recorded);
    };
    *b.breaker().clock().hook.borrow_mut() = Some(std::boxed::Box::new(hook));
    assert_eq!(b.release(old, Outcome::Success), Release::Stale);
    let counter = b.breaker().snapshot().unwrap().counter;
    assert_eq!(counter, 4);
    assert_eq!(b.window_counts(30, counter), (1, 0));
}

/// A release whose clock reading is older than its bucket's slice (it was
/// descheduled while others rolled the bucket over) reads the clock again
/// and counts in the current slice instead of wiping it; a plain rollover
/// reads the clock once.
fn old_reading_reads_again<W: Word>() {
    let b = small::<W>(&[20]);
    for _ in 0..3 {
        let t = b.acquire().unwrap();
        assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    }
    assert_eq!(b.window_counts(20, 0), (3, 0));
    let reads = b.breaker().clock().reads.get();
    // The next release first reads 18 (slice 18, bucket 0, two slices
    // behind bucket 0's slice 20), then 21.
    play(b, &[18, 21]);
    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    assert_eq!(b.breaker().clock().reads.get(), reads + 2);
    assert_eq!(
        b.window_counts(21, 0),
        (4, 0),
        "slice 20 kept, slice 21 counted"
    );
    // A plain rollover (slice 22 replaces slice 20 in bucket 0): one read.
    play(b, &[22]);
    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    assert_eq!(b.breaker().clock().reads.get(), reads + 3);
    assert_eq!(b.window_counts(22, 0), (2, 0), "slices 21 and 22");
}

/// Stamps are kept modulo their fields: slices far beyond the epoch field
/// (a clock near 2^40) and counters beyond the counter field (W32: 4 bits)
/// still count in the right bucket, and an idle bucket of a slice half the
/// epoch field back is reset, not taken for a newer one.
fn stamps_wrap<W: Word>() {
    let base = (1u64 << 40) + 7;
    let b = small::<W>(&[base]);
    // 12 cycles of trip, open, probe, close: the counter passes 16 and 32.
    let mut now = base;
    for _ in 0..12 {
        let t = b.acquire().unwrap();
        assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
        assert_eq!(b.status(), Status::Open);
        now += 10;
        play(b, &[now]);
        let p = b.acquire().unwrap();
        assert_eq!(b.release(p, Outcome::Success), Release::Recorded);
        assert_eq!(b.status(), Status::Closed);
    }
    let counter = b.breaker().snapshot().unwrap().counter;
    assert_eq!(counter, 48);
    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    assert_eq!(b.window_counts(now, counter), (1, 0));
    // Idle for exactly half the epoch field: the bucket is that far behind,
    // which is not "ahead": a plain rollover, one clock read.
    let half = 1u64 << (BucketLayout::for_bits(W::LAYOUT.word_bits).epoch_bits - 1);
    now += half;
    play(b, &[now]);
    let reads = b.breaker().clock().reads.get();
    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    assert_eq!(b.breaker().clock().reads.get(), reads + 1);
    assert_eq!(b.window_counts(now, counter), (1, 0));
    // Idle for half the field and 2 slices more: the bucket reads as
    // "ahead" modulo the field; the fresh reading resets it.
    now += half + 2;
    play(b, &[now]);
    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    assert_eq!(b.window_counts(now, counter), (1, 0));
    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
    assert_eq!(
        b.status(),
        Status::Open,
        "1 of 2 is 50 %: the window counted both"
    );
}

/// As [`old_reading_reads_again`], with slices of 4 ticks (the second
/// reading is shifted like the first).
fn old_reading_in_wide_slices<W: Word>() {
    let clock = leak(Script {
        readings: RefCell::new([80u64].into_iter().collect()),
        hook: RefCell::new(None),
        reads: core::cell::Cell::new(0),
    });
    let b: &'static RateBreaker<&'static Script, W, (), 2> = leak(RateBreaker::from_parts(
        Config::new().open_for(40).horizon(0).check::<W>().unwrap(),
        Rate::new()
            .failure_rate(50)
            .minimum_calls(1)
            .window(8)
            .check::<W, 2>()
            .unwrap(),
        clock,
        (),
    ));
    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    // Slice 20 holds one call. A reading of 72 (slice 18, same bucket,
    // behind), then 87 (slice 21).
    *clock.readings.borrow_mut() = [72u64, 87].into_iter().collect();
    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    assert_eq!(b.window_counts(21, 0), (2, 0));
}

// The scripted clock's fixtures are leaked on purpose (its hook needs the
// breaker for `'static`): Miri would report the leaks.
#[test]
#[cfg_attr(miri, ignore = "leaks its fixtures on purpose")]
fn races_replayed_w64() {
    old_reading_in_wide_slices::<W64>();
    stale_between_check_and_count::<W64>();
    old_reading_reads_again::<W64>();
    stamps_wrap::<W64>();
}

#[test]
#[cfg_attr(miri, ignore = "leaks its fixtures on purpose")]
fn races_replayed_w32() {
    old_reading_in_wide_slices::<W32>();
    stale_between_check_and_count::<W32>();
    old_reading_reads_again::<W32>();
    stamps_wrap::<W32>();
}
