//! The services adapter (`tripword-std`: `call`, `call_async`, the tower
//! layer), each group with its references in the same run:
//!
//! - `call_async`: one thread, a closed breaker (`tripword_w64`'s closed
//!   scenario: `W64`, the real clock, which a closed call never reads).
//!   `atomic_load_pair` is the floor; `tripword_w64/acquire_release` the
//!   ticket API that `call` is built on; `tripword_w64/call` the synchronous
//!   `BreakerExt::call` of a closure returning `Ok`; `tripword_w64/call_async`
//!   `BreakerExt::call_async` on `std::future::ready(Ok(..))`, polled once with
//!   a no-op waker (`exec::now`: the future's own cost, no executor);
//!   `tripword_w64/call_async_block_on` the same driven by `exec::block_on`
//!   (a tokio context entered for every call, and a thread-local waker: why
//!   the tower rows enter it once per batch instead).
//! - `tower_layer`: 1 and 2 workers (never more than
//!   `available_parallelism()`), pre-spawned and released by a `Barrier`
//!   inside `iter_custom`, each with its own clone of the service and its
//!   own current-thread runtime, whose context it enters once per batch; one
//!   iteration is one request on every worker: `ready()`, `call(..)`, polled
//!   once (`exec::finish`: a runtime finishes it if it is pending, as
//!   `tower-resilience`'s may be when its lock is contended).
//!   `bare_service_fn` is a trivial `tower::service_fn` alone (the floor);
//!   `tripword_w64_tower` is `tripword_std::tower::BreakerLayer` (an `Arc`
//!   handle, `OkOrFailure`) around it, `tripword_w64_tower_static` the same
//!   with a `&'static` handle (no reference count to bump per call);
//!   `tower_resilience` is
//!   `tower-resilience-circuitbreaker` 0.14's `CircuitBreakerLayer` around
//!   the same `service_fn`, configured as in the closed scenario (5
//!   consecutive failures, open 10 ms). All workers share one breaker.
//!
//! `cargo bench -p tripword-benches --bench services -- --warm-up-time 1 --measurement-time 2`
//!
//! Tables: `criterion-table --head tripword_w64/call call_async` (ratios and
//! differences to `call`) and `criterion-table tower_layer`.

use std::future::ready;
use std::hint::black_box;
use std::time::Duration;

use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main,
    measurement::WallTime,
};
use tokio::runtime::Runtime;
use tower::{Layer, Service, ServiceExt, service_fn};
use tripword::{Breaker, Outcome, W64};
use tripword_benches::exec::{block_on, finish, runtime};
use tripword_benches::pool::Pool;
use tripword_benches::subjects::{
    AtomicPair, OPEN_FOR_US, admitted, call, layer_call, resilience_call, result, std_call,
    std_call_async, tower_layer, tripword_layer, w64_breaker,
};
use tripword_std::classify::OkOrFailure;
use tripword_std::tower::BreakerLayer;
use tripword_std::{BreakerExt, MonotonicClock};

/// The closed scenario's `tripword_w64` breaker.
fn closed_breaker() -> Breaker<MonotonicClock, W64> {
    w64_breaker(&tripword_lab::Workload::closed())
        .expect("the closed scenario's config is in range")
}

fn call_async(c: &mut Criterion) {
    let mut g = c.benchmark_group("call_async");
    let pair = AtomicPair::default();
    g.bench_function("atomic_load_pair", |b| {
        b.iter(|| black_box(&pair).load_pair())
    });
    let breaker = closed_breaker();
    g.bench_function("tripword_w64/acquire_release", |b| {
        b.iter(|| call(black_box(&breaker), Outcome::Success))
    });
    g.bench_function("tripword_w64/call", |b| {
        b.iter(|| std_call(black_box(&breaker), true))
    });
    g.bench_function("tripword_w64/call_async", |b| {
        b.iter(|| std_call_async(black_box(&breaker), true))
    });
    let rt = runtime();
    g.bench_function("tripword_w64/call_async_block_on", |b| {
        b.iter(|| {
            admitted(&block_on(
                &rt,
                black_box(&breaker).call_async(ready(result(true))),
            ))
        })
    });
    g.finish();
}

/// `threads` workers, each with the service `make` returns on its own
/// thread and a current-thread runtime of its own, whose context it enters
/// once per batch; each call is `request`, driven by `exec::finish`. One
/// iteration is one call on every worker.
fn bench<M, S, Q>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    threads: usize,
    make: M,
    request: Q,
) where
    M: Fn() -> S + Send + Sync + 'static,
    Q: Fn(&Runtime, &mut S) -> bool + Copy + Send + Sync + 'static,
{
    let pool = Pool::from_batch(threads, move || {
        let (mut svc, rt) = (make(), runtime());
        move |n| {
            let _context = rt.enter();
            let mut admitted = 0u64;
            for _ in 0..n {
                admitted += u64::from(request(&rt, &mut svc));
            }
            admitted
        }
    });
    g.bench_with_input(BenchmarkId::new(name, threads), &threads, |b, _| {
        b.iter_custom(|iters| pool.run_calls(iters))
    });
}

fn tower_layer_group(c: &mut Criterion) {
    let max = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(2);
    let inner = service_fn(|ok: bool| ready(result(ok)));
    let mut g = c.benchmark_group("tower_layer");
    for threads in 1..=max {
        g.throughput(Throughput::Elements(threads as u64));
        bench(
            &mut g,
            "bare_service_fn",
            threads,
            move || inner,
            |rt, svc| {
                finish(rt, async {
                    match svc.ready().await {
                        Ok(svc) => svc.call(true).await.is_ok(),
                        Err(_) => false,
                    }
                })
            },
        );
        let ours = tripword_layer(closed_breaker()).layer(inner);
        bench(
            &mut g,
            "tripword_w64_tower",
            threads,
            move || ours.clone(),
            |rt, svc| finish(rt, layer_call(svc, true)),
        );
        let leaked: &'static Breaker<MonotonicClock, W64> = Box::leak(Box::new(closed_breaker()));
        let fixed = BreakerLayer::new(leaked).classify(OkOrFailure).layer(inner);
        bench(
            &mut g,
            "tripword_w64_tower_static",
            threads,
            move || fixed.clone(),
            |rt, svc| finish(rt, layer_call(svc, true)),
        );
        let peer = tower_layer(5, Duration::from_micros(OPEN_FOR_US)).layer(inner);
        bench(
            &mut g,
            "tower_resilience",
            threads,
            move || peer.clone(),
            |rt, svc| finish(rt, resilience_call(svc, true)),
        );
    }
    g.finish();
}

criterion_group!(benches, call_async, tower_layer_group);
criterion_main!(benches);
