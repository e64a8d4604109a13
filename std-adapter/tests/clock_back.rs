//! A clock that steps back during a call (spec I6: a clock fault fails
//! towards probing, never towards rejecting): a success whose end reads
//! earlier than its start is not slow, where the wrapping difference of
//! the two readings would read it as 2^64 - 1 ticks. A clock that wraps at
//! 2^64 forward is still timed across its wrap. Every clock here is moved
//! by hand; the real clocks' readings are checked the same way by the unit
//! tests of `clock.rs`.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tripword::clock::ManualClock;
use tripword::{Breaker, Clock, Config, Status};
use tripword_std::clock::{ManualTime, RealClock};
use tripword_std::{BreakerExt, CallPolicy, Settings};

/// Polls to completion a future that is ready at once.
fn now<F: Future>(f: F) -> F::Output {
    match pin!(f).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("not ready on its first poll"),
    }
}

fn breaker(clock: &ManualClock) -> Breaker<&ManualClock> {
    // One failure trips: a success read as slow would open it.
    Breaker::new(Config::new().failure_threshold(1), clock)
}

#[test]
fn a_success_during_which_the_clock_steps_back_is_not_slow() {
    let policy = CallPolicy::new().slow_after_ticks(10);
    for back in [1, 2, 1_000, 1 << 40] {
        let clock = ManualClock::new(1 << 50);
        let b = breaker(&clock);
        let step_back = || {
            clock.set(clock.now() - back);
            Ok::<_, ()>(())
        };
        assert_eq!(b.call_with(&policy, step_back), Ok(()));
        assert_eq!(b.status(), Status::Closed, "sync, {back} ticks back");
        assert_eq!(
            now(b.call_async_with(&policy, async { step_back() })),
            Ok(())
        );
        assert_eq!(b.status(), Status::Closed, "async, {back} ticks back");
        // The breaker still times calls: a slow one after the step fails.
        let slow = || {
            clock.advance(11);
            Ok::<_, ()>(())
        };
        assert_eq!(b.call_with(&policy, slow), Ok(()));
        assert_eq!(b.status(), Status::Open, "{back} ticks back, then slow");
    }
}

/// A clock that wraps at 2^64 forward is timed across the wrap: 5 ticks
/// are 5 ticks, 11 are slow.
#[test]
fn a_call_across_the_clocks_wrap_at_2_64_is_timed_exactly() {
    let policy = CallPolicy::new().slow_after_ticks(10);
    let clock = ManualClock::new(u64::MAX - 2);
    let b = breaker(&clock);
    let took = |ticks| {
        let clock = &clock;
        move || {
            clock.advance(ticks);
            Ok::<_, ()>(())
        }
    };
    assert_eq!(b.call_with(&policy, took(5)), Ok(()));
    assert_eq!(clock.now(), 2, "wrapped");
    assert_eq!(b.status(), Status::Closed, "5 ticks across the wrap");
    clock.set(u64::MAX - 2);
    let slow = took(11);
    assert_eq!(now(b.call_async_with(&policy, async { slow() })), Ok(()));
    assert_eq!(b.status(), Status::Open, "11 ticks across the wrap: slow");
}

/// On a clock in real ticks (`ManualTime`, 1 µs) with a threshold in
/// real time: one microsecond back during a fast call is not slow.
#[test]
fn a_threshold_in_real_time_survives_a_step_back() {
    let clock = ManualTime::new();
    clock.set_ticks(10_000_000);
    let b: Breaker<&ManualTime> = Settings::new()
        .failure_threshold(1)
        .build_on(&clock, ())
        .unwrap();
    let policy = CallPolicy::new().slow_after(Duration::from_millis(100));
    let back = |ticks| {
        let clock = &clock;
        move || {
            clock.set_ticks(clock.now() - ticks);
            Ok::<_, ()>(())
        }
    };
    assert_eq!(b.call_with(&policy, back(1)), Ok(()));
    assert_eq!(b.status(), Status::Closed, "1 µs back");
    let back_a_second = back(ManualTime::ticks(Duration::from_secs(1)));
    assert_eq!(
        now(b.call_async_with(&policy, async { back_a_second() })),
        Ok(())
    );
    assert_eq!(b.status(), Status::Closed, "1 s back, async");
}
