//! The model's rules on hand-computed cases.

use super::*;
use tripword::{Config, W32, W64};

fn cfg<W: Word>(c: Config) -> ModelConfig {
    ModelConfig::for_width(&c.check::<W>().expect("valid"))
}

#[test]
fn trip_probe_close() {
    let mut m = Model::new(cfg::<W64>(
        Config::new()
            .failure_threshold(2)
            .open_for(10)
            .probe_timeout(5),
    ));
    let a = m.acquire(0).unwrap();
    let b = m.acquire(0).unwrap();
    assert!(m.release(a.counter, Outcome::Failure, 1));
    assert!(m.transitions().is_empty());
    assert!(m.release(b.counter, Outcome::Failure, 2));
    assert_eq!(
        m.transitions(),
        &[ModelTransition {
            from: ModelPhase::Closed,
            to: ModelPhase::Open,
            counter: 1
        }]
    );
    assert_eq!(
        m.acquire(11),
        Err(ModelRejected {
            cause: Cause::Open,
            retry_after: Some(1)
        })
    );
    let p = m.acquire(12).unwrap();
    assert_eq!((p.counter, p.probe), (3, true));
    assert_eq!(m.transitions().len(), 2);
    assert_eq!(
        m.acquire(12),
        Err(ModelRejected {
            cause: Cause::Probing,
            retry_after: Some(5)
        })
    );
    assert!(m.release(p.counter, Outcome::Success, 16));
    assert_eq!(m.state(), ModelState::Closed { failures: 0 });
    m.force_open();
    assert_eq!(
        m.acquire(99),
        Err(ModelRejected {
            cause: Cause::ForcedOpen,
            retry_after: None
        })
    );
}

#[test]
fn status_is_a_read() {
    let mut m = Model::new(cfg::<W64>(Config::new().failure_threshold(1).open_for(10)));
    let t = m.acquire(0).unwrap();
    m.release(t.counter, Outcome::Failure, 0);
    let before = m.clone();
    assert_eq!(m.status(10), Status::HalfOpen);
    assert!(m.read_clock() && m.transitions().is_empty());
    assert_eq!(m.state(), before.state());
    assert_eq!(m.counter(), before.counter());
    let p = m.acquire(10).unwrap();
    assert_eq!(p.counter, 3);
    assert_eq!(m.transitions().len(), 2);
}

#[test]
fn late_probe_is_stale_and_half_opens() {
    let mut m = Model::new(cfg::<W64>(
        Config::new()
            .failure_threshold(1)
            .open_for(10)
            .probe_timeout(5),
    ));
    let t = m.acquire(0).unwrap();
    m.release(t.counter, Outcome::Failure, 0);
    let p = m.acquire(10).unwrap();
    assert!(!m.release(p.counter, Outcome::Success, 15));
    assert_eq!(m.state(), ModelState::HalfOpen { trips: 1 });
}

#[test]
fn time_is_in_units_modulo_the_field() {
    let c = cfg::<W32>(Config::new().horizon(0).open_for(10));
    assert_eq!(c.time_shift, 0);
    assert_eq!(c.elapsed(10, 15), 5);
    assert_eq!(c.elapsed(10, 9), (1 << 15) - 1);
    assert_eq!(c.elapsed(u64::MAX, 1), 2);
    assert_eq!(c.elapsed(1 << 15, 3), 3);
    // The default W32 horizon: 128-tick units.
    let c = cfg::<W32>(Config::new().open_for(1_000));
    assert_eq!(c.time_shift, 7);
    assert_eq!(c.need(1_000), 9);
    assert_eq!(c.elapsed(127, 128), 1);
    assert_eq!(c.elapsed(0, 127), 0);
    assert_eq!(c.ring(), 1 << 22);
    assert_eq!(c.elapsed(5, 5 + (1 << 22)), 0);
}

#[test]
fn the_wait_reaches_the_first_lapsing_tick() {
    let c = cfg::<W32>(Config::new().failure_threshold(1).open_for(1_000));
    for trip in [0u64, 1, 127, 128, 1000, u64::MAX - 300] {
        let mut m = Model::new(c);
        let t = m.acquire(trip).unwrap();
        m.release(t.counter, Outcome::Failure, trip);
        for now in [trip, trip.wrapping_add(1), trip.wrapping_add(999)] {
            let mut probe = m.clone();
            let wait = probe.acquire(now).unwrap_err().retry_after.unwrap();
            let at = now.wrapping_add(wait);
            assert!(m.clone().acquire(at.wrapping_sub(1)).is_err());
            assert!(m.clone().acquire(at).unwrap().probe);
            // Never early, and within the documented bound.
            let gap = at.wrapping_sub(trip);
            assert!(
                (1_000..1_000 + 3 * 128).contains(&gap),
                "{trip} {now} {gap}"
            );
        }
    }
}

#[test]
fn backoff_doubles_caps_and_saturates() {
    let c = cfg::<W64>(Config::new().open_for(100).exponential_backoff(1000));
    let d: Vec<u64> = (0..7).map(|k| c.open_duration(k)).collect();
    assert_eq!(d, [100, 100, 200, 400, 800, 1000, 1000]);
    let n: Vec<u64> = (0..7).map(|k| c.open_need(k, 1)).collect();
    assert_eq!(n, [100, 100, 200, 400, 800, 1000, 1000]);
    let c = cfg::<W64>(Config::new().open_for(1).exponential_backoff(1 << 30));
    assert_eq!(c.max_trips(), 31);
    assert_eq!(c.open_duration(c.max_trips()), 1 << 30);
    assert_eq!(c.open_duration(40), 1 << 30);
    // In units: need(open_for) doubles, need(cap) caps.
    let c = cfg::<W32>(Config::new().open_for(1_000).exponential_backoff(8_000));
    assert_eq!((c.need(1_000), c.need(8_000)), (9, 64));
    let n: Vec<u64> = (1..6).map(|k| c.open_need(k, 1)).collect();
    assert_eq!(n, [9, 18, 36, 64, 64]);
}

#[test]
fn the_shift_follows_the_spec_rule() {
    for (config, s) in [
        (Config::new().open_for(1_000), 7),
        (Config::new().open_for(600_000), 8),
        (Config::new().open_for(100).probe_timeout(50).horizon(0), 0),
        (
            Config::new().open_for(4).probe_timeout(2).horizon(100_000),
            2,
        ),
        (
            Config::new().open_for(4).probe_timeout(2).horizon(200_000),
            3,
        ),
    ] {
        assert_eq!(cfg::<W32>(config).time_shift, s, "{config:?}");
    }
    assert_eq!(cfg::<W64>(Config::new().open_for(1 << 33)).time_shift, 0);
}

#[test]
fn a_hinted_trip_opens_until_the_deadline() {
    let c = cfg::<W64>(Config::new().failure_threshold(2).open_for(100));
    let mut m = Model::new(c);
    let a = m.acquire(0).unwrap();
    let b = m.acquire(0).unwrap();
    // Not the trip: a plain failure, no clock.
    assert!(m.release_failure_for(a.counter, 5_000, 1));
    assert_eq!(m.state(), ModelState::Closed { failures: 1 });
    assert!(!m.read_clock());
    assert!(m.release_failure_for(b.counter, 700, 1_000));
    assert!(m.read_clock());
    assert_eq!(
        m.state(),
        ModelState::OpenUntil {
            until: 1_700,
            trips: 1
        }
    );
    assert_eq!(m.transitions()[0].to.status(), Status::Open);
    assert!(!m.transitions()[0].forced());
    assert_eq!(
        m.acquire(1_100),
        Err(ModelRejected {
            cause: Cause::Open,
            retry_after: Some(600)
        })
    );
    assert_eq!(m.status(1_699), Status::Open);
    assert_eq!(m.status(1_700), Status::HalfOpen);
    let p = m.acquire(1_700).unwrap();
    assert!(p.probe);
    // A probe's hinted failure: trips counted on.
    assert!(m.release_failure_for(p.counter, 10, 1_800));
    assert_eq!(
        m.state(),
        ModelState::OpenUntil {
            until: 1_810,
            trips: 2
        }
    );
    // A stale hinted failure changes nothing and reads no clock.
    assert!(!m.release_failure_for(p.counter, 10, 1_800));
    assert!(!m.read_clock());
}

#[test]
fn hints_are_units_clamped_to_half_the_field() {
    let c = cfg::<W32>(Config::new().open_for(1_000));
    assert_eq!(c.time_shift, 7);
    assert_eq!(c.longest_hint(), 1 << 21);
    assert_eq!(c.hint_units(0), 1);
    assert_eq!(c.hint_units(1_000), 9);
    assert_eq!(c.hint_units(u64::MAX), 1 << 14);
    assert_eq!(c.hint_units(1 << 21), 1 << 14);
    assert_eq!(c.deadline(130, 1_000), (1 + 9) << 7);
    // Reached up to half the field past the deadline; before it, a
    // reading from a clock that went back.
    let until = c.deadline(0, 1 << 21);
    assert!(!c.reached(until, 0));
    assert!(c.reached(until, until));
    assert!(c.reached(until, until + (1 << 21) - 1));
    assert!(!c.reached(until, until + (1 << 21)));
    let c = cfg::<W64>(Config::new());
    assert_eq!((c.hint_units(0), c.hint_units(7)), (0, 7));
    assert_eq!(c.hint_units(u64::MAX), 1 << 33);
}

#[test]
fn force_open_for_keeps_the_trips_of_a_timed_state() {
    let c = cfg::<W64>(
        Config::new()
            .failure_threshold(1)
            .open_for(10)
            .probe_timeout(5),
    );
    let mut m = Model::new(c);
    m.force_open_for(50, 3);
    assert_eq!(
        m.state(),
        ModelState::OpenUntil {
            until: 53,
            trips: 1
        }
    );
    assert_eq!(m.counter(), 1);
    // Elapsed: lapses first (two transitions), trips kept.
    m.force_open_for(0, 60);
    assert_eq!(m.transitions().len(), 2);
    assert_eq!(
        m.state(),
        ModelState::OpenUntil {
            until: 60,
            trips: 1
        }
    );
    let p = m.acquire(60).unwrap();
    assert!(m.release(p.counter, Outcome::Failure, 61));
    assert_eq!(
        m.state(),
        ModelState::Open {
            since: 61,
            trips: 2
        }
    );
    m.force_open_for(7, 62);
    assert_eq!(
        m.state(),
        ModelState::OpenUntil {
            until: 69,
            trips: 2
        }
    );
    m.force_open();
    m.force_open_for(7, 62);
    assert_eq!(
        m.state(),
        ModelState::OpenUntil {
            until: 69,
            trips: 1
        }
    );
}

#[test]
fn tickets_compare_modulo_the_period() {
    let c = cfg::<W32>(Config::new());
    assert!(c.same_counter(3, 3 + 1024));
    assert!(!c.same_counter(3, 4));
}
