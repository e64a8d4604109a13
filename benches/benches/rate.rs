//! The failure-rate policy against the peers' rate
//! policies, side by side in one run: `tripword::rate::RateBreaker` (8
//! buckets over 10 s, 50 %, at least 20 calls, real monotonic clock),
//! `failsafe`'s `success_rate_over_time_window` (50 % success over 10 s, at
//! least 20 calls) and `recloser`'s ring buffer (50 % over the last 100
//! calls). Mixed traffic: one call in ten fails, so no breaker trips and
//! every call is a closed call that must be counted.
//!
//! At 1 and 2 threads: each thread makes `iters` calls, and the time per
//! call is the wall time over `iters` (so at 2 threads it is the time for
//! each thread to make one call while the other does too).
//!
//! ```text
//! cargo bench -p tripword-benches --bench rate
//! ```

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use tripword::rate::{Rate, RateBreaker};
use tripword::{Config, Outcome, W64};
use tripword_std::MonotonicClock;

type Tripword = RateBreaker<MonotonicClock, W64, (), 8>;

/// A clock that costs one relaxed load: a coarse time source a service
/// keeps ticking elsewhere (here it never moves, which costs the same).
struct Coarse(std::sync::atomic::AtomicU64);
impl tripword::Clock for Coarse {
    #[inline]
    fn now(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}
type TripwordCoarse = RateBreaker<Coarse, W64, (), 8>;

/// The rate breaker on `clock`, counting `per_second` ticks a second: a
/// 10 s window, open 5 s.
fn tripword_on<C: tripword::Clock>(clock: C, per_second: u64) -> RateBreaker<C, W64, (), 8> {
    RateBreaker::new(
        Config::new().open_for(5 * per_second),
        Rate::new()
            .failure_rate(50)
            .minimum_calls(20)
            .window(10 * per_second),
        clock,
    )
    .expect("in range")
}

fn tripword_coarse() -> TripwordCoarse {
    tripword_on(
        Coarse(std::sync::atomic::AtomicU64::new(1 << 30)),
        1_000_000,
    )
}

fn tripword() -> Tripword {
    tripword_on(MonotonicClock, 1_000_000)
}

type Failsafe = failsafe::StateMachine<
    failsafe::failure_policy::SuccessRateOverTimeWindow<failsafe::backoff::Constant>,
    (),
>;

fn failsafe() -> Failsafe {
    let policy = failsafe::failure_policy::success_rate_over_time_window(
        0.5,
        20,
        Duration::from_secs(10),
        failsafe::backoff::constant(Duration::from_secs(5)),
    );
    failsafe::Config::new().failure_policy(policy).build()
}

fn recloser() -> recloser::Recloser {
    recloser::Recloser::custom()
        .error_rate(0.5)
        .closed_len(100)
        .half_open_len(10)
        .open_wait(Duration::from_secs(5))
        .build()
}

/// One call of each, `ok` deciding the outcome; whether it was admitted.
trait Call: Send + Sync + 'static {
    fn call(&self, ok: bool) -> bool;
}

impl<C: tripword::Clock + Send + Sync + 'static> Call for RateBreaker<C, W64, (), 8> {
    #[inline]
    fn call(&self, ok: bool) -> bool {
        match self.acquire() {
            Ok(t) => {
                let outcome = if black_box(ok) {
                    Outcome::Success
                } else {
                    Outcome::Failure
                };
                let _ = self.release(t, outcome);
                true
            }
            Err(_) => false,
        }
    }
}

impl Call for Failsafe {
    #[inline]
    fn call(&self, ok: bool) -> bool {
        !matches!(
            failsafe::CircuitBreaker::call(self, || if black_box(ok) { Ok(()) } else { Err(()) }),
            Err(failsafe::Error::Rejected)
        )
    }
}

impl Call for recloser::Recloser {
    #[inline]
    fn call(&self, ok: bool) -> bool {
        !matches!(
            recloser::Recloser::call(self, || if black_box(ok) { Ok(()) } else { Err(()) }),
            Err(recloser::Error::Rejected)
        )
    }
}

/// `iters` calls on each of `threads` threads, one in ten failing.
fn run<B: Call>(b: &Arc<B>, threads: usize, iters: u64) -> Duration {
    let barrier = Arc::new(Barrier::new(threads + 1));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (b, barrier) = (b.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let mut admitted = 0u64;
                for i in 0..iters {
                    admitted += u64::from(b.call(i % 10 != 9));
                }
                assert_eq!(admitted, iters, "mixed traffic below the rate never trips");
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    for h in handles {
        h.join().expect("worker");
    }
    start.elapsed()
}

fn rate(c: &mut Criterion) {
    // RecentClock reads a timestamp kept fresh by this thread (1 ms).
    let _updater = coarsetime::Updater::new(1).start().expect("updater thread");
    let mut g = c.benchmark_group("rate_closed");
    for threads in [1usize, 2] {
        let t = Arc::new(tripword());
        g.bench_function(format!("tripword/{threads}"), |bench| {
            bench.iter_custom(|iters| run(&t, threads, iters))
        });
        let tc = Arc::new(tripword_coarse());
        g.bench_function(format!("tripword_coarse_clock/{threads}"), |bench| {
            bench.iter_custom(|iters| run(&tc, threads, iters))
        });
        let cc = Arc::new(tripword_on(tripword_std::CoarseClock, 1_000));
        g.bench_function(format!("tripword_coarseclock/{threads}"), |bench| {
            bench.iter_custom(|iters| run(&cc, threads, iters))
        });
        let rc = Arc::new(tripword_on(tripword_std::RecentClock, 1_000));
        g.bench_function(format!("tripword_recentclock/{threads}"), |bench| {
            bench.iter_custom(|iters| run(&rc, threads, iters))
        });
        if threads == 1 {
            // The floor of any exact count: one uncontended atomic
            // read-modify-write per call (here a load and a
            // compare-exchange, as a bucket's count).
            let cell = std::sync::atomic::AtomicU64::new(0);
            g.bench_function("floor_load_cas/1", |bench| {
                bench.iter(|| {
                    let v = cell.load(std::sync::atomic::Ordering::Relaxed);
                    black_box(cell.compare_exchange(
                        v,
                        v + 1,
                        std::sync::atomic::Ordering::AcqRel,
                        std::sync::atomic::Ordering::Relaxed,
                    ))
                })
            });
        }
        g.bench_function(format!("instant_now/{threads}"), |bench| {
            bench.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(Instant::now());
                }
                start.elapsed()
            })
        });
        let f = Arc::new(failsafe());
        g.bench_function(format!("failsafe/{threads}"), |bench| {
            bench.iter_custom(|iters| run(&f, threads, iters))
        });
        let r = Arc::new(recloser());
        g.bench_function(format!("recloser/{threads}"), |bench| {
            bench.iter_custom(|iters| run(&r, threads, iters))
        });
    }
    g.finish();
}

criterion_group!(benches, rate);
criterion_main!(benches);
