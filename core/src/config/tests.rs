//! The config's unit tests.

use super::*;
use crate::word::{W32, W64};

#[test]
fn backoff_doubles_and_caps() {
    let c = Config::new()
        .open_for(100)
        .exponential_backoff(1000)
        .check::<W64>()
        .unwrap();
    let d: [u64; 6] = [0, 1, 2, 3, 4, 5].map(|t| c.open_duration(t));
    assert_eq!(d, [100, 100, 200, 400, 800, 1000]);
    assert_eq!(c.open_duration(u32::MAX), 1000);
    let fixed = Config::new().open_for(100).check::<W64>().unwrap();
    assert_eq!(fixed.open_duration(9), 100);
}

/// `open_duration` agrees with what the word can hold, and a
/// cap the saturated trip count can never reach is refused.
#[test]
fn open_duration_saturates_with_the_trip_count() {
    let c = Config::new()
        .open_for(1)
        .exponential_backoff(1 << 30)
        .check::<W64>()
        .unwrap();
    assert_eq!(c.open_duration(31), 1 << 30);
    assert_eq!(c.open_duration(40), 1 << 30); // trips saturate at 31
    let e = Config::new()
        .open_for(1)
        .exponential_backoff((1 << 30) + 1)
        .check::<W64>()
        .unwrap_err();
    assert_eq!((e.field, e.min, e.max), (Field::BackoffCap, 1, 1 << 30));
    let e = Config::new()
        .open_for(3)
        .exponential_backoff(3 << 14 | 1)
        .check::<W32>()
        .unwrap_err();
    assert_eq!((e.field, e.max), (Field::BackoffCap, 3 << 14));
    let c32 = Config::new()
        .open_for(3)
        .exponential_backoff(3 << 14)
        .check::<W32>()
        .unwrap();
    assert_eq!(c32.open_duration(15), 3 << 14);
    assert_eq!(c32.open_duration(16), 3 << 14);
}

#[test]
fn ranges_per_width() {
    let e = Config::new()
        .failure_threshold(0)
        .check::<W64>()
        .unwrap_err();
    assert_eq!(e.field, Field::FailureThreshold);
    assert!(
        Config::new()
            .failure_threshold(65535)
            .check::<W64>()
            .is_ok()
    );
    assert!(
        Config::new()
            .failure_threshold(4096)
            .check::<W32>()
            .is_err()
    );
    assert!(Config::new().failure_threshold(4095).check::<W32>().is_ok());
    let cap = Config::new()
        .open_for(100)
        .exponential_backoff(99)
        .check::<W64>();
    assert_eq!(cap.unwrap_err().field, Field::BackoffCap);
    let probe = Config::new().probe_timeout(0).check::<W32>().unwrap_err();
    assert_eq!(probe.field, Field::ProbeTimeout);
    let open = Config::new().open_for(0).check::<W32>().unwrap_err();
    assert_eq!(open.field, Field::OpenFor);
    let horizon = Config::new().horizon(u64::MAX).check::<W32>().unwrap_err();
    assert_eq!(horizon.field, Field::Horizon);
    // The range it reports is the true one: its max is accepted, one
    // more is not.
    let ok = Config::new().horizon(horizon.max).check::<W32>().unwrap();
    assert_eq!(ok.time_shift(), 17);
    let over = Config::new().horizon(horizon.max + 1).check::<W32>();
    assert_eq!(over.unwrap_err().field, Field::Horizon);
    // A duration no shift can hold names the duration, not the horizon.
    let long = Config::new().open_for(1 << 40).check::<W32>().unwrap_err();
    assert_eq!(long.field, Field::OpenFor);
    assert!(
        Config::new()
            .open_for(long.max)
            .horizon(0)
            .check::<W32>()
            .is_ok()
    );
    let too_long = Config::new().open_for(long.max + 1).horizon(0);
    assert_eq!(too_long.check::<W32>().unwrap_err().field, Field::OpenFor);
    let probe = Config::new()
        .probe_timeout(1 << 40)
        .check::<W32>()
        .unwrap_err();
    assert_eq!(probe.field, Field::ProbeTimeout);
    assert_eq!(Config::default(), Config::new());
}

/// The W32 word keeps an hour of 1 kHz ticks by default, and
/// open times of ten minutes and more.
#[test]
fn w32_default_horizon_is_an_hour_of_millis() {
    let c = Config::new().open_for(1_000).check::<W32>().unwrap();
    assert_eq!(c.time_shift(), 7);
    assert!(c.ring() >= 3_600_000 + 1_000);
    let ten_min = Config::new().open_for(600_000).check::<W32>().unwrap();
    assert_eq!(ten_min.time_shift(), 8);
    assert!(ten_min.ring() >= 3_600_000 + 600_000);
    let day = Config::new().open_for(86_400_000).check::<W32>().unwrap();
    assert!(day.ring() >= 3_600_000 + 86_400_000);
    // The finest resolution, for tests that count single ticks.
    let exact = Config::new().open_for(100).probe_timeout(50).horizon(0);
    assert_eq!(exact.check::<W32>().unwrap().time_shift(), 0);
    // W64 keeps whole microseconds for every duration up to hours.
    let w64 = Config::new().open_for(1 << 33).check::<W64>().unwrap();
    assert_eq!(w64.time_shift(), 0);
    // The largest shift: the ring is the whole clock.
    let whole = Config::new().horizon(1 << 63).check::<W64>().unwrap();
    assert_eq!((whole.time_shift(), whole.ring()), (30, u64::MAX));
}

#[test]
fn units_round_up_to_cover_both_truncations() {
    assert_eq!(units(1, 0), 1);
    assert_eq!(units(100, 0), 100);
    // 1000 ticks in 128-tick units: 9 units of difference guarantee
    // 9 * 128 - 127 = 1025 >= 1000 ticks; 8 would allow 897.
    assert_eq!(units(1000, 7), 9);
    assert_eq!(units(1025, 7), 9);
    assert_eq!(units(1026, 7), 10);
    for shift in 0..8 {
        for ticks in 1..600u64 {
            let n = units(ticks, shift);
            let unit = 1u64 << shift;
            // The least real elapsed time that reads as n units.
            assert!(n * unit - (unit - 1) >= ticks);
            // And n is the least such count.
            assert!(n == 1 || (n - 1) * unit - (unit - 1) < ticks);
        }
    }
}
