//! The service-side costs of `tripword-std`, each next to its reference in
//! the same run (read the ratios, not the absolute times):
//!
//! - `call_async`: `call_async` on a future that is ready at once, polled
//!   once, beside the synchronous `call` and the bare `acquire`/`release`
//!   it is built on (closed breaker);
//! - `tower_layer`: one request (`ready`, `call`, one poll) through
//!   `BreakerLayer` (an `Arc` handle, and a `&'static` one) beside the same
//!   bare service and `tower-resilience-circuitbreaker` 0.14's layer, on one
//!   thread;
//! - `tower_layer_2_workers`: the same with two threads sharing the breaker,
//!   each with its own clone of the service.
//!
//! `cargo bench -p tripword-std --features tower --bench services`.
//!
//! A small harness instead of criterion: a dev-dependency of this crate is
//! built for every one of its examples, the README's release demo included,
//! and criterion (with clap, regex, serde) would add about a minute to that
//! build on two cores. Each group runs its subjects interleaved, in rounds
//! of a fixed batch, and reports the median round per subject and its ratio
//! to the group's reference. Run without `--bench` (as `cargo test
//! --benches` does) or with `--test`, each subject runs once.

use std::future::{Future, Ready, ready};
use std::hint::black_box;
use std::pin::pin;
use std::sync::{Arc, Barrier};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use tower::{Layer, Service, ServiceExt};
use tripword::{Breaker, Config, Outcome};
use tripword_std::classify::OkOrFailure;
use tripword_std::tower::BreakerLayer;
use tripword_std::{BreakerExt, MonotonicClock};

/// Runs `future` to completion on this thread: one poll with a no-op waker
/// inside `rt`'s context; if that is not enough, `rt.block_on` finishes it
/// (tower-resilience's state lock, if it had to wait).
fn block_on<F: Future>(rt: &tokio::runtime::Runtime, future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(out) => out,
        Poll::Pending => rt.block_on(future),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("tokio runtime")
}

/// A dependency that answers at once.
#[derive(Clone, Copy)]
struct Dependency;

impl Service<bool> for Dependency {
    type Response = ();
    type Error = ();
    type Future = Ready<Result<(), ()>>;
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), ()>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, ok: bool) -> Self::Future {
        ready(if ok { Ok(()) } else { Err(()) })
    }
}

/// One request: ready, call, await; whether it was answered `Ok`.
async fn request<S: Service<bool>>(svc: &mut S) -> bool {
    match svc.ready().await {
        Ok(svc) => svc.call(black_box(true)).await.is_ok(),
        Err(_) => false,
    }
}

fn breaker() -> Breaker<MonotonicClock> {
    Breaker::new(
        Config::new().failure_threshold(5).open_for(10_000_000),
        MonotonicClock,
    )
}

type Resilience = tower_resilience_circuitbreaker::CircuitBreaker<
    Dependency,
    tower_resilience_circuitbreaker::DefaultClassifier,
>;

/// tower-resilience's breaker with the same policy: 5 consecutive
/// failures, open 10 s, one call in half-open.
fn resilience() -> Resilience {
    tower_resilience_circuitbreaker::CircuitBreakerLayer::builder()
        .consecutive_failures(5)
        .wait_duration_in_open(Duration::from_secs(10))
        .permitted_calls_in_half_open(1)
        .build()
        .expect("valid tower-resilience config")
        .layer_fn(Dependency)
}

/// A subject: `run(iters)` makes `iters` calls and returns their time.
type Run = Box<dyn FnMut(u64) -> Duration>;

/// One group: subjects measured side by side.
struct Group {
    name: &'static str,
    quick: bool,
    subjects: Vec<(&'static str, Run)>,
}

impl Group {
    fn new(name: &'static str, quick: bool) -> Self {
        Group {
            name,
            quick,
            subjects: Vec::new(),
        }
    }

    /// `run(iters)` makes `iters` calls and returns the time they took.
    fn add(&mut self, name: &'static str, run: impl FnMut(u64) -> Duration + 'static) {
        self.subjects.push((name, Box::new(run)));
    }

    /// Measures every subject and prints one line each: the median time per
    /// call over the rounds, and its ratio to the first subject.
    fn finish(mut self) {
        if self.quick {
            for (name, run) in &mut self.subjects {
                run(1);
                println!("Testing {}/{name}\nSuccess", self.name);
            }
            return;
        }
        const ROUNDS: usize = 31;
        const BATCH: u64 = 200_000;
        for (_, run) in &mut self.subjects {
            run(BATCH); // warm-up
        }
        let mut times = vec![Vec::with_capacity(ROUNDS); self.subjects.len()];
        for _ in 0..ROUNDS {
            for (i, (_, run)) in self.subjects.iter_mut().enumerate() {
                times[i].push(run(BATCH).as_secs_f64() * 1e9 / BATCH as f64);
            }
        }
        let medians: Vec<f64> = times
            .iter_mut()
            .map(|t| {
                t.sort_by(f64::total_cmp);
                t[ROUNDS / 2]
            })
            .collect();
        println!("{}:", self.name);
        for (i, (name, _)) in self.subjects.iter().enumerate() {
            let ns = medians[i];
            println!(
                "  {name:<18} {ns:>8.2} ns/call  {:>6.2}x the first  (rounds {:.2}..{:.2})",
                ns / medians[0],
                times[i][0],
                times[i][ROUNDS - 1],
            );
        }
    }
}

/// Times `iters` runs of `f`.
fn timed(iters: u64, mut f: impl FnMut()) -> Duration {
    let t0 = Instant::now();
    for _ in 0..iters {
        f();
    }
    t0.elapsed()
}

fn call_async(quick: bool) {
    let mut g = Group::new("call_async (closed breaker, one thread)", quick);
    let b: &'static Breaker<MonotonicClock> = Box::leak(Box::new(breaker()));
    g.add("call", move |iters| {
        timed(iters, || {
            let _ = black_box(black_box(b).call(|| Ok::<_, ()>(black_box(1u32))));
        })
    });
    g.add("call_async_ready", move |iters| {
        let mut cx = Context::from_waker(Waker::noop());
        timed(iters, || {
            let call = pin!(black_box(b).call_async(ready(Ok::<_, ()>(black_box(1u32)))));
            match call.poll(&mut cx) {
                Poll::Ready(out) => {
                    let _ = black_box(out);
                }
                Poll::Pending => unreachable!("ready at once"),
            }
        })
    });
    g.add("acquire_release", move |iters| {
        timed(iters, || {
            let ticket = black_box(b).acquire().expect("closed");
            black_box(b.release(ticket, Outcome::Success));
        })
    });
    g.finish();
}

fn tower_layer(quick: bool) {
    let mut g = Group::new(
        "tower_layer (one request: ready, call, poll; one thread)",
        quick,
    );
    let rt: &'static tokio::runtime::Runtime = Box::leak(Box::new(runtime()));
    let leaked: &'static Breaker<MonotonicClock> = Box::leak(Box::new(breaker()));
    let mut fixed = BreakerLayer::new(leaked)
        .classify(OkOrFailure)
        .layer(Dependency);
    g.add("tripword_static", move |iters| {
        let _context = rt.enter();
        timed(iters, || {
            black_box(block_on(rt, request(&mut fixed)));
        })
    });
    let mut arc = BreakerLayer::new(Arc::new(breaker()))
        .classify(OkOrFailure)
        .layer(Dependency);
    g.add("tripword_arc", move |iters| {
        let _context = rt.enter();
        timed(iters, || {
            black_box(block_on(rt, request(&mut arc)));
        })
    });
    let mut peer = resilience();
    g.add("tower_resilience", move |iters| {
        let _context = rt.enter();
        timed(iters, || {
            black_box(block_on(rt, request(&mut peer)));
        })
    });
    let mut bare = Dependency;
    g.add("bare_service", move |iters| {
        let _context = rt.enter();
        timed(iters, || {
            black_box(block_on(rt, request(&mut bare)));
        })
    });
    g.finish();
}

/// `iters` requests split over two threads, each with its own clone of
/// `svc` and its own runtime, released together; from the first worker's
/// start to the last one's end (each worker reads the clock itself: on two
/// cores the releasing thread may not run until they are done).
fn two_workers<S>(svc: &S, iters: u64) -> Duration
where
    S: Service<bool> + Clone + Send,
{
    let start = Barrier::new(2);
    let spans: Vec<(Instant, Instant)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (mut svc, start) = (svc.clone(), &start);
                s.spawn(move || {
                    let rt = runtime();
                    let _context = rt.enter();
                    start.wait();
                    let t0 = Instant::now();
                    for _ in 0..iters.div_ceil(2) {
                        black_box(block_on(&rt, request(&mut svc)));
                    }
                    (t0, Instant::now())
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker"))
            .collect()
    });
    let first = spans.iter().map(|s| s.0).min().expect("two workers");
    let last = spans.iter().map(|s| s.1).max().expect("two workers");
    last - first
}

fn tower_layer_2_workers(quick: bool) {
    let mut g = Group::new(
        "tower_layer, 2 workers (time per request, both together)",
        quick,
    );
    let leaked: &'static Breaker<MonotonicClock> = Box::leak(Box::new(breaker()));
    let fixed = BreakerLayer::new(leaked)
        .classify(OkOrFailure)
        .layer(Dependency);
    g.add("tripword_static", move |iters| two_workers(&fixed, iters));
    let arc = BreakerLayer::new(Arc::new(breaker()))
        .classify(OkOrFailure)
        .layer(Dependency);
    g.add("tripword_arc", move |iters| two_workers(&arc, iters));
    let peer = resilience();
    g.add("tower_resilience", move |iters| two_workers(&peer, iters));
    g.finish();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--test");
    call_async(quick);
    tower_layer(quick);
    tower_layer_2_workers(quick);
}
