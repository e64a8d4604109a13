//! Host tests of the clock adapters behind features `embassy-time` and
//! `fugit`: `cargo test -p tripword --features embassy-time,fugit`.
//! Without those features this file compiles to nothing.

#[cfg(feature = "fugit")]
mod fugit_clock {
    use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

    use fugit::{TimerDurationU64, WrappingTimerInstantU32, WrappingTimerInstantU64};
    use tripword::clock::{FugitClock, FugitInstant};
    use tripword::{Breaker, Breaker32, Clock, Config, Status};

    type Instant32 = WrappingTimerInstantU32<1_000>;

    fn config(open_for: u64) -> Config {
        Config::new()
            .failure_threshold(1)
            .open_for(open_for)
            .probe_timeout(open_for)
    }

    #[test]
    fn u32_instants_widen_without_changing_the_value() {
        assert_eq!(<Instant32 as FugitInstant>::BITS, 32);
        assert_eq!(<WrappingTimerInstantU64<1_000> as FugitInstant>::BITS, 64);
        for ticks in [0, 1, 0x7fff_ffff, 0x8000_0000, u32::MAX] {
            let clock = FugitClock(move || Instant32::from_ticks(ticks));
            assert_eq!(clock.now(), u64::from(ticks));
        }
        let clock = FugitClock::new(|| WrappingTimerInstantU64::<1_000>::from_ticks(u64::MAX));
        assert_eq!(clock.now(), u64::MAX);
    }

    #[test]
    fn duration_helpers_round_up() {
        // 1 ms at 32 768 Hz is 32.768 ticks: 33, so the time lasts at least 1 ms.
        assert_eq!(
            TimerDurationU64::<32_768>::from_millis_at_least(1).as_ticks(),
            33
        );
        assert_eq!(
            TimerDurationU64::<1_000>::from_secs_at_least(16).as_ticks(),
            16_000
        );
    }

    /// A `u32` timer on `W32` is exact across the timer's wrap, wherever the
    /// breaker trips relative to it.
    #[test]
    fn u32_timer_on_w32_is_exact_across_the_wrap() {
        static TIMER: AtomicU32 = AtomicU32::new(0);
        fn now() -> Instant32 {
            Instant32::from_ticks(TIMER.load(Ordering::Relaxed))
        }
        let open_for = 1_000u32;
        for before_wrap in [1u32, 10, 500, 999, 1_000, 1_001, 16_384] {
            let tripped_at = 0u32.wrapping_sub(before_wrap);
            TIMER.store(tripped_at, Ordering::Relaxed);
            let b: Breaker32<FugitClock<fn() -> Instant32>> = Breaker32::from_parts(
                // Whole ticks (time shift 0), so the deadline is exact.
                config(u64::from(open_for)).horizon(0).check().unwrap(),
                FugitClock(now),
                (),
            );
            b.permit().expect("closed").failure();
            assert_eq!(b.status(), Status::Open);
            TIMER.store(tripped_at.wrapping_add(open_for - 1), Ordering::Relaxed);
            assert_eq!(
                b.status(),
                Status::Open,
                "tripped {before_wrap} before the wrap"
            );
            TIMER.store(tripped_at.wrapping_add(open_for), Ordering::Relaxed);
            assert_eq!(
                b.status(),
                Status::HalfOpen,
                "tripped {before_wrap} before the wrap"
            );
            // The probe's timeout is read across the wrap too.
            let probe = b.acquire().expect("the probe");
            TIMER.store(tripped_at.wrapping_add(2 * open_for - 1), Ordering::Relaxed);
            assert!(b.acquire().is_err(), "one probe at a time");
            b.release(probe, tripword::Outcome::Success);
            assert_eq!(b.status(), Status::Closed);
        }
    }

    /// A `u32` timer on `W64` is not exact at the wrap (the 34-bit time field
    /// is wider than the timer): an open time running across the wrap ends
    /// early, as the docs of `FugitClock` say. Never later.
    #[test]
    fn u32_timer_on_w64_probes_early_at_the_wrap() {
        static TIMER: AtomicU32 = AtomicU32::new(0);
        fn now() -> Instant32 {
            Instant32::from_ticks(TIMER.load(Ordering::Relaxed))
        }
        TIMER.store(u32::MAX - 9, Ordering::Relaxed);
        let b: Breaker<FugitClock<fn() -> Instant32>> =
            Breaker::new(config(1_000), FugitClock(now));
        b.permit().expect("closed").failure();
        TIMER.store(u32::MAX, Ordering::Relaxed);
        assert_eq!(b.status(), Status::Open); // 9 ticks: still open
        TIMER.store(5, Ordering::Relaxed); // 15 ticks later, across the wrap
        assert_eq!(b.status(), Status::HalfOpen); // early: read as elapsed
    }

    /// A `u64` timer on `W64` is exact across its (2^64) wrap.
    #[test]
    fn u64_timer_on_w64_is_exact_across_the_wrap() {
        static TIMER: AtomicU64 = AtomicU64::new(u64::MAX - 9);
        fn now() -> WrappingTimerInstantU64<1_000_000> {
            WrappingTimerInstantU64::from_ticks(TIMER.load(Ordering::Relaxed))
        }
        let b: Breaker<FugitClock<fn() -> WrappingTimerInstantU64<1_000_000>>> =
            Breaker::new(config(1_000), FugitClock(now));
        b.permit().expect("closed").failure();
        TIMER.store(989, Ordering::Relaxed); // 999 ticks
        assert_eq!(b.status(), Status::Open);
        TIMER.store(990, Ordering::Relaxed); // 1 000 ticks
        assert_eq!(b.status(), Status::HalfOpen);
    }
}

#[cfg(feature = "embassy-time")]
mod embassy_clock {
    use embassy_time::{Duration, Instant, MockDriver};
    use tripword::clock::EmbassyClock;
    use tripword::{Breaker, Clock, Config, Status};

    /// The only test here that moves the (process-wide) mock driver.
    #[test]
    fn reads_the_driver_and_times_a_breaker() {
        assert_eq!(EmbassyClock::TICK_HZ, embassy_time::TICK_HZ);
        assert_eq!(EmbassyClock::new(), EmbassyClock);
        assert_eq!(core::mem::size_of::<EmbassyClock>(), 0);

        let start = EmbassyClock.now();
        assert_eq!(start, Instant::now().as_ticks());

        let open_for = Duration::from_millis(250);
        let b: Breaker<EmbassyClock> = Breaker::new(
            Config::new()
                .failure_threshold(2)
                .open_for(open_for.as_ticks()),
            EmbassyClock,
        );
        b.permit().expect("closed").failure();
        b.permit().expect("closed").failure();
        assert_eq!(b.status(), Status::Open);

        let driver = MockDriver::get();
        driver.advance(Duration::from_ticks(open_for.as_ticks() - 1));
        assert_eq!(EmbassyClock.now() - start, open_for.as_ticks() - 1);
        assert_eq!(b.status(), Status::Open);
        driver.advance(Duration::from_ticks(1));
        assert_eq!(b.status(), Status::HalfOpen);
        let probe = b.permit().expect("the probe");
        probe.success();
        assert_eq!(b.status(), Status::Closed);
    }
}
