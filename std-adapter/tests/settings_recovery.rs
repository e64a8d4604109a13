//! The recovery options of `Settings` (several probes, the ramp): their
//! conversion to the core's config, their errors in durations and counts,
//! their config-file form, and the failure-rate breaker, which carries
//! them too.

use std::time::Duration;

use tripword::rate::RateBreaker;
use tripword::{Breaker, Field, Outcome, Ramp, Release, Status, W32, W64};
use tripword_std::clock::ManualTime;
use tripword_std::{
    FailureRate, MillisClock, MonotonicClock, RampSettings, RealClock, Settings, SettingsError,
};

const SECOND: Duration = Duration::from_secs(1);

/// The options reach the core's config in the clock's ticks: a stage lasts
/// `ceil(step / tick) + 1` ticks, as an open time does.
#[test]
fn the_options_convert_to_the_cores() -> Result<(), SettingsError> {
    let s = Settings::new()
        .probes(5)
        .probes_to_close(3)
        .ramp(RampSettings::linear(4 * SECOND, 4));
    let valid = s.config::<MillisClock, W64>()?;
    assert_eq!((valid.probes(), valid.probes_to_close()), (5, 3));
    let ramp = valid.ramp();
    assert_eq!((ramp.step(), ramp.stages_count()), (1_001, 4));
    assert_eq!(ramp, Ramp::stages(1_001, &[2_000, 4_000, 6_000, 8_000]));
    let micros = s.config::<MonotonicClock, W64>()?;
    assert_eq!(micros.ramp().step(), 1_000_001);
    // Unset: the single probe, no ramp.
    let plain = Settings::new().config::<MillisClock, W32>()?;
    assert_eq!((plain.probes(), plain.probes_to_close()), (1, 1));
    assert_eq!(plain.ramp(), Ramp::NONE);
    // `probes` unsets `probes_to_close` (all of them), as the core's does.
    let all = Settings::new().probes_to_close(1).probes(3);
    assert_eq!(all.config::<MillisClock, W32>()?.probes_to_close(), 3);
    Ok(())
}

/// The core's constructors and these give the same ramp, in ticks.
#[test]
fn the_constructors_are_the_cores_in_durations() {
    let ms = Duration::from_millis(1);
    for ticks in [1u64, 7, 1_000] {
        let d = ms * (ticks as u32);
        // `duration_to_ticks` adds one tick.
        assert_eq!(
            RampSettings::progressive(d).to_ramp::<MillisClock>(),
            Ramp::progressive(ticks + 1)
        );
        assert_eq!(
            RampSettings::stages(d, &[100, 9_999]).to_ramp::<MillisClock>(),
            Ramp::stages(ticks + 1, &[100, 9_999])
        );
    }
    for stages in 0..=10u8 {
        let ours = RampSettings::linear(Duration::from_millis(8 * 9 * 5 * 7), stages);
        let theirs = Ramp::linear(8 * 9 * 5 * 7, stages);
        assert_eq!(ours.stages_count(), theirs.stages_count(), "{stages}");
        for i in 0..=Ramp::MAX_STAGES {
            assert_eq!(ours.share(i), theirs.share(i), "{stages}, {i}");
        }
        if stages > 0 {
            assert_eq!(ours.to_ramp::<MillisClock>().step(), theirs.step() + 1);
        }
    }
    assert!(RampSettings::stages(SECOND, &[]).is_none());
    assert_eq!(RampSettings::NONE.to_ramp::<MillisClock>(), Ramp::NONE);
}

/// The counts' errors name the key and the range, without a duration.
#[test]
fn the_counts_errors_name_their_ranges() {
    let err = Settings::new()
        .probes(16)
        .config::<MonotonicClock, W64>()
        .unwrap_err();
    assert_eq!(
        (err.field(), err.given(), err.range()),
        (Field::Probes, None, None)
    );
    assert_eq!(
        err.to_string(),
        "probes = 16 is out of range 1..=15 (64-bit word)"
    );
    let err = Settings::new()
        .probes(4)
        .config::<MillisClock, W32>()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "probes = 4 is out of range 1..=3 (32-bit word)"
    );
    let err = Settings::new()
        .probes(0)
        .config::<MillisClock, W32>()
        .unwrap_err();
    assert_eq!(err.field(), Field::Probes);

    let err = Settings::new()
        .probes(3)
        .probes_to_close(4)
        .config::<MillisClock, W32>()
        .unwrap_err();
    assert_eq!(err.field(), Field::ProbesToClose);
    assert_eq!(err.to_string(), "probes_to_close = 4 is out of range 1..=3");
    // 0 is refused, not read as "all of them" (the core's unset value).
    let err = Settings::new()
        .probes(3)
        .probes_to_close(0)
        .config::<MillisClock, W32>()
        .unwrap_err();
    assert_eq!(
        (err.field(), err.in_ticks().value),
        (Field::ProbesToClose, 0)
    );

    let err = Settings::new()
        .ramp(RampSettings::stages(SECOND, &[100, 100]))
        .config::<MillisClock, W64>()
        .unwrap_err();
    assert_eq!((err.field(), err.range()), (Field::RampShare, None));
    assert_eq!(
        err.to_string(),
        "ramp.shares = 100 basis points is out of range 101..=9999 (each share above the one before)"
    );
    let err = Settings::new()
        .ramp(RampSettings::stages(SECOND, &[10_000]))
        .config::<MillisClock, W64>()
        .unwrap_err();
    assert_eq!(
        (err.field(), err.in_ticks().value),
        (Field::RampShare, 10_000)
    );
}

/// A stage's length: its range is exactly the durations the conversion
/// accepts, on each clock and word (the longest passes, a nanosecond more
/// does not; zero does not).
#[test]
fn the_ramp_step_range_is_exact_in_durations() {
    fn exact<C: RealClock, W: tripword::Word>(stages: u8) {
        let long = Settings::new().ramp(RampSettings::linear(Duration::MAX / 2, stages));
        let err = long.config::<C, W>().unwrap_err();
        assert_eq!(err.field(), Field::Ramp);
        let range = err.range().unwrap();
        assert_eq!(*range.start(), Duration::from_nanos(1));
        let longest = *range.end();
        let at = |step: Duration| {
            Settings::new()
                .ramp(RampSettings::stages(
                    step,
                    &[10, 20, 30, 40, 50, 60, 70, 80][..stages as usize],
                ))
                .config::<C, W>()
        };
        assert!(at(longest).is_ok(), "{longest:?}");
        let over = at(longest + Duration::from_nanos(1)).unwrap_err();
        assert_eq!(
            (over.field(), over.range()),
            (Field::Ramp, Some(range.clone()))
        );
        assert!(at(*range.start()).is_ok());
        let zero = at(Duration::ZERO).unwrap_err();
        assert_eq!(
            (zero.field(), zero.given()),
            (Field::Ramp, Some(Duration::ZERO))
        );
    }
    for stages in [1, 6, 8] {
        exact::<MillisClock, W32>(stages);
        exact::<MillisClock, W64>(stages);
        exact::<MonotonicClock, W32>(stages);
        exact::<MonotonicClock, W64>(stages);
    }
}

/// A breaker built from the settings runs the trial and the ramp on the
/// real-time clocks' manual stand-in.
#[test]
fn a_breaker_from_settings_recovers_through_the_ramp() -> Result<(), SettingsError> {
    let clock = ManualTime::new();
    let b: Breaker<&ManualTime, W64> = Settings::new()
        .failure_threshold(1)
        .open_for(10 * SECOND)
        .probes(2)
        .ramp(RampSettings::stages(SECOND, &[5_000]))
        .build_on(&clock, ())?;
    b.release(b.acquire().unwrap(), Outcome::Failure);
    clock.advance(11 * SECOND);
    let (p, q) = (b.acquire().unwrap(), b.acquire().unwrap());
    assert_eq!(b.status(), Status::Probing);
    b.release(p, Outcome::Success);
    b.release(q, Outcome::Success);
    assert_eq!(b.status(), Status::Recovering);
    let admitted = (0..100).filter(|_| b.acquire().is_ok()).count();
    assert_eq!(admitted, 50);
    clock.advance(2 * SECOND);
    assert_eq!(b.status(), Status::Closed);
    Ok(())
}

/// The failure-rate breaker carries both options: a trial of three on its
/// word, then the ramp, which its first failure reopens (a rate breaker's
/// word counts failures to one).
#[test]
fn the_rate_breaker_carries_probes_and_the_ramp() -> Result<(), SettingsError> {
    let clock = ManualTime::new();
    let b: RateBreaker<&ManualTime, W64> = Settings::new()
        .failure_threshold(5) // not read by a rate breaker, nor by its ramp
        .open_for(10 * SECOND)
        .probes(3)
        .ramp(RampSettings::stages(SECOND, &[5_000]))
        .failure_rate(FailureRate::new(50, 10 * SECOND).minimum_calls(1))
        .build_rate_on(&clock, ())?;
    assert_eq!(b.breaker().config().probes(), 3);
    b.release(b.acquire().unwrap(), Outcome::Failure);
    assert_eq!(b.status(), Status::Open);
    clock.advance(11 * SECOND);
    let probes: Vec<_> = (0..3).map(|_| b.acquire().unwrap()).collect();
    assert!(probes.iter().all(|p| p.is_probe()));
    assert!(b.acquire().is_err());
    for p in probes {
        assert_eq!(b.release(p, Outcome::Success), Release::Recorded);
    }
    assert_eq!(b.status(), Status::Recovering);
    let admitted = (0..10).filter_map(|_| b.acquire().ok()).collect::<Vec<_>>();
    assert_eq!(admitted.len(), 5);
    let mut admitted = admitted.into_iter();
    assert_eq!(
        b.release(admitted.next().unwrap(), Outcome::Failure),
        Release::Recorded
    );
    assert_eq!(b.status(), Status::Open);
    // The rest were admitted by the ramp: stale now.
    assert!(admitted.all(|t| b.release(t, Outcome::Success) == Release::Stale));
    Ok(())
}

/// In a config file: `probes`, `probes_to_close`, a `ramp` table; the
/// defaults are not written, a set value round-trips.
#[cfg(feature = "serde")]
#[test]
fn the_options_in_a_config_file() {
    let s: Settings = toml::from_str(
        r#"
        probes = 5
        probes_to_close = 4
        ramp = { step = "500ms", shares = [1000, 5000] }
        "#,
    )
    .unwrap();
    assert_eq!(
        s,
        Settings::new()
            .probes(5)
            .probes_to_close(4)
            .ramp(RampSettings::stages(
                Duration::from_millis(500),
                &[1_000, 5_000]
            ))
    );
    let written = toml::to_string(&s).unwrap();
    assert!(written.contains("probes = 5"), "{written}");
    assert!(written.contains("step = \"500ms\""), "{written}");
    assert_eq!(toml::from_str::<Settings>(&written).unwrap(), s);

    let plain = toml::to_string(&Settings::new()).unwrap();
    assert!(!plain.contains("probes"), "{plain}");
    assert!(!plain.contains("ramp"), "{plain}");

    let err = toml::from_str::<Settings>(r#"ramp = { step = "1s", shares = [1,2,3,4,5,6,7,8,9] }"#)
        .unwrap_err();
    assert!(err.to_string().contains("at most 8 stages"), "{err}");
    let err = toml::from_str::<Settings>(r#"ramp = { step = "1s", shares = [1], share = 2 }"#)
        .unwrap_err();
    assert!(err.to_string().contains("unknown field"), "{err}");
    // No shares: no ramp.
    let none: Settings = toml::from_str(r#"ramp = { step = "1s", shares = [] }"#).unwrap();
    assert!(none.ramp.is_none());
}

/// A registry's override changes only the keys it names: `probes` alone
/// means all of its probes; a ramp replaces the default's.
#[cfg(feature = "serde")]
#[test]
fn registry_overrides_patch_the_options() {
    use tripword_std::RegistrySettings;

    let r: RegistrySettings = toml::from_str(
        r#"
        [default]
        probes = 4
        probes_to_close = 2
        ramp = { step = "1s", shares = [5000] }

        [overrides."a"]
        probes = 3

        [overrides."b"]
        probes_to_close = 1
        ramp = { step = "2s", shares = [100, 200] }
        "#,
    )
    .unwrap();
    let a = r.settings_for("a");
    assert_eq!((a.probes, a.probes_to_close), (3, None));
    assert_eq!(a.ramp, RampSettings::stages(SECOND, &[5_000]));
    let b = r.settings_for("b");
    assert_eq!((b.probes, b.probes_to_close), (4, Some(1)));
    assert_eq!(b.ramp, RampSettings::stages(2 * SECOND, &[100, 200]));
    let c = r.settings_for("c");
    assert_eq!((c.probes, c.probes_to_close), (4, Some(2)));
}
