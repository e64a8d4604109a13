//! Several probes and the ramp under real threads (`docs/spec.md`, I11 and
//! I12): many threads released together by a barrier race on one breaker,
//! round after round, the clock a `ManualClock` that only the main thread
//! moves between rounds, so nothing here depends on how the threads are
//! scheduled.
//!
//! - **I11**: 16 threads race on a half-open breaker with `n` probes (every
//!   `n` of the width, round after round): exactly `n` are admitted, all as
//!   probes of one trial; the others are rejected with cause `Probing`.
//! - **I12**: 16 threads race through each stage of a ramp, each asking a
//!   fixed number of admissions: of the `c` asked at one stage, the number
//!   admitted is `⌊c·p⌋` or `⌊c·p⌋ + 1`, `p` the stage's share in the
//!   word's resolution; every rejection has cause `Ramp` and waits until
//!   the next stage; past the last stage everyone is admitted in `Closed`.

use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};

use tripword::clock::{Clock, ManualClock};
use tripword::word::State;
use tripword::{
    Breaker, Cause, Config, Outcome, Ramp, Status, Ticket, ValidConfig, W32, W64, Word,
};

const THREADS: usize = 16;

type B<'c, W> = Breaker<&'c ManualClock, W, (), ValidConfig<W>>;

fn rounds() -> usize {
    std::env::var("RECOVERY_THREADS_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000)
}

/// Trips `b` and moves the clock to the end of its open time: half-open.
fn half_open<W: Word>(b: &B<'_, W>, clock: &ManualClock) {
    let t = b.acquire().expect("closed");
    b.release(t, Outcome::Failure);
    clock.advance(b.acquire().unwrap_err().retry_after().expect("open"));
    assert_eq!(b.status(), Status::HalfOpen);
}

fn exactly_n_probes<W: Word>() {
    let max = (1u8 << W::LAYOUT.probe_bits) - 1;
    let clock = ManualClock::new(0);
    let breakers: Vec<B<'_, W>> = (2..=max)
        .map(|n| {
            let c = Config::new()
                .failure_threshold(1)
                .open_for(100)
                .probe_timeout(1 << 30)
                .probes(n);
            Breaker::from_parts(c.check::<W>().unwrap(), &clock, ())
        })
        .collect();
    let start = Barrier::new(THREADS + 1);
    let done = Barrier::new(THREADS + 1);
    let round = AtomicU64::new(0);
    let admitted = AtomicU64::new(0);
    let wrong = AtomicU64::new(0);
    let rounds = rounds();
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                loop {
                    start.wait();
                    let r = round.load(Ordering::Acquire);
                    if r == u64::MAX {
                        return;
                    }
                    let b = &breakers[r as usize % breakers.len()];
                    let got: Option<Ticket> = match b.acquire() {
                        Ok(t) => {
                            admitted.fetch_add(1, Ordering::AcqRel);
                            if !t.is_probe() {
                                wrong.fetch_add(1, Ordering::AcqRel);
                            }
                            Some(t)
                        }
                        Err(e) => {
                            if e.cause() != Cause::Probing {
                                wrong.fetch_add(1, Ordering::AcqRel);
                            }
                            None
                        }
                    };
                    done.wait();
                    // The main thread reads the word, then lets them go on.
                    done.wait();
                    // Every probe succeeds: the trial closes on the n-th.
                    if let Some(t) = got {
                        b.release(t, Outcome::Success);
                    }
                    done.wait();
                }
            });
        }
        for r in 0..rounds {
            let b = &breakers[r % breakers.len()];
            let n = b.config().probes();
            half_open(b, &clock);
            admitted.store(0, Ordering::Release);
            round.store(r as u64, Ordering::Release);
            start.wait();
            done.wait();
            assert_eq!(
                admitted.load(Ordering::Acquire),
                u64::from(n),
                "I11: round {r}, {THREADS} racers, {n} probes"
            );
            let s = b.snapshot().expect("the word stays valid").state;
            assert!(
                matches!(s, State::Trial { running, passed: 0, failed: 0, .. } if running == u32::from(n)),
                "I11: round {r}: {s:?}"
            );
            done.wait();
            done.wait();
            assert_eq!(b.status(), Status::Closed, "round {r}: n successes close");
        }
        round.store(u64::MAX, Ordering::Release);
        start.wait();
    });
    assert_eq!(
        wrong.load(Ordering::Acquire),
        0,
        "a non-probe or a wrong cause"
    );
}

#[test]
fn exactly_n_probes_among_16_threads_w64() {
    exactly_n_probes::<W64>();
}

#[test]
fn exactly_n_probes_among_16_threads_w32() {
    exactly_n_probes::<W32>();
}

fn ramp_share<W: Word>(shares: &[u16], per_thread: u64, rounds: usize) {
    let l = W::LAYOUT;
    let one = 1u64 << l.share_bits;
    let clock = ManualClock::new(0);
    let step = 2u64 << (l.share_bits + l.ramp_failure_bits);
    let c = Config::new()
        .failure_threshold(1)
        .open_for(100)
        .horizon(0)
        .ramp(Ramp::stages(step, shares));
    let b: B<'_, W> = Breaker::from_parts(c.check::<W>().unwrap(), &clock, ());
    let start = Barrier::new(THREADS + 1);
    let done = Barrier::new(THREADS + 1);
    let stop = AtomicU64::new(0);
    let admitted = AtomicU64::new(0);
    let wrong = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                loop {
                    start.wait();
                    if stop.load(Ordering::Acquire) == 1 {
                        return;
                    }
                    for _ in 0..per_thread {
                        match b.acquire() {
                            Ok(t) => {
                                admitted.fetch_add(1, Ordering::AcqRel);
                                b.release(t, Outcome::Success);
                            }
                            Err(e) => {
                                if e.cause() != Cause::Ramp || e.retry_after().is_none() {
                                    wrong.fetch_add(1, Ordering::AcqRel);
                                }
                            }
                        }
                    }
                    done.wait();
                }
            });
        }
        let asked = per_thread * THREADS as u64;
        for r in 0..rounds {
            half_open(&b, &clock);
            let p = b.acquire().expect("the probe");
            b.release(p, Outcome::Success);
            // The ramp's units (shift 0 at horizon(0)) and its stages in them.
            let u = l.share_bits + l.ramp_failure_bits;
            let step_units = (step + 2 * ((1 << u) - 1)) >> u;
            let t0 = clock.now() >> u;
            assert_eq!(b.status(), Status::Recovering, "round {r}");
            for (i, &bp) in shares.iter().enumerate() {
                let share = ((u64::from(bp) * one + 5_000) / 10_000).clamp(1, one - 1);
                admitted.store(0, Ordering::Release);
                start.wait();
                done.wait();
                let got = admitted.load(Ordering::Acquire);
                let floor = asked * share / one;
                assert!(
                    got == floor || got == floor + 1,
                    "I12: round {r}, stage {i} ({bp} bp = {share}/{one}): {got} of {asked} admitted"
                );
                clock.set((t0 + (i as u64 + 1) * step_units) << u);
            }
            // Past the last stage: Closed, everyone admitted.
            admitted.store(0, Ordering::Release);
            start.wait();
            done.wait();
            assert_eq!(
                admitted.load(Ordering::Acquire),
                asked,
                "round {r}: after the ramp"
            );
            assert_eq!(b.status(), Status::Closed);
        }
        stop.store(1, Ordering::Release);
        start.wait();
    });
    assert_eq!(
        wrong.load(Ordering::Acquire),
        0,
        "a rejection without cause Ramp or a wait"
    );
}

#[test]
fn the_ramp_admits_its_share_among_16_threads_w64() {
    ramp_share::<W64>(
        &[10, 100, 500, 1_000, 2_500, 5_000, 7_500, 9_999],
        40,
        rounds() / 20,
    );
}

#[test]
fn the_ramp_admits_its_share_among_16_threads_w32() {
    ramp_share::<W32>(&[300, 2_500, 5_000, 9_000], 20, rounds() / 20);
}
