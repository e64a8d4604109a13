//! Contention: 1..=`available_parallelism()` pre-spawned workers released by
//! a `Barrier` inside `iter_custom`, calling one shared breaker; one group
//! per scenario (closed happy path, failure storm, half-open storm, defined
//! in `tripword_benches::subjects`), with both word widths, the baselines and
//! the peers in each.
//!
//! One iteration is one call on every worker (throughput is reported in
//! calls), and the time is the wall time until the last worker finishes.
//! Never more workers than `available_parallelism()`: on a 2-core machine a
//! third busy thread would measure the OS scheduler.
//!
//! `cargo bench -p tripword-benches --bench contended -- --warm-up-time 1 --measurement-time 2`

use std::sync::Arc;

use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main,
    measurement::WallTime,
};
use tripword::{W32, W64};
use tripword_benches::pool::Pool;
use tripword_benches::subjects::{
    AtomicPair, Failsafe, MutexBaseline, PrivateTripword, Recloser, Seatbelt, Subject,
    TowerResilience, Tripword,
};
use tripword_lab::Workload;

fn bench<S: Subject>(g: &mut BenchmarkGroup<'_, WallTime>, scenario: &Workload, threads: usize) {
    let Some(subject) = S::build(scenario) else {
        return;
    };
    let pool = Pool::new(&Arc::new(subject), scenario, threads);
    g.bench_with_input(BenchmarkId::new(S::NAME, threads), &threads, |b, _| {
        b.iter_custom(|iters| pool.run_calls(iters))
    });
}

fn contended(c: &mut Criterion) {
    let max = std::thread::available_parallelism().map_or(1, |n| n.get());
    for scenario in &Workload::builtin() {
        let mut g = c.benchmark_group(format!("contended_{}", scenario.name));
        for threads in 1..=max {
            g.throughput(Throughput::Elements(threads as u64));
            bench::<AtomicPair>(&mut g, scenario, threads);
            bench::<PrivateTripword>(&mut g, scenario, threads);
            bench::<MutexBaseline>(&mut g, scenario, threads);
            bench::<Tripword<W64>>(&mut g, scenario, threads);
            bench::<Tripword<W32>>(&mut g, scenario, threads);
            bench::<Failsafe>(&mut g, scenario, threads);
            bench::<Recloser>(&mut g, scenario, threads);
            bench::<Seatbelt>(&mut g, scenario, threads);
            bench::<TowerResilience>(&mut g, scenario, threads);
        }
        g.finish();
    }
}

criterion_group!(benches, contended);
criterion_main!(benches);
