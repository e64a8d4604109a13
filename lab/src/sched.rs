//! Schedulers: what runs the workers of a cell.
//!
//! A [`Scheduler`] gets a [`Cell`] (a subject built for a workload, as a
//! factory of workers), a worker count and a [`Timing`]; it makes one
//! worker per thread or task, runs them for the warm-up, then for the
//! measured time, and returns a [`Run`]. Workers call in chunks of
//! [`CHUNK`] calls (one dynamic dispatch per chunk; the calls inside are
//! monomorphized) and look at a stop flag between chunks. With sampling on,
//! the last call of each chunk is timed (one call in [`CHUNK`]).
//!
//! Built in: [`OsThreads`] (unpinned or pinned), and with their features
//! [`TokioMultiThread`], [`TokioCurrentThread`] and [`Smol`]. Your own is a
//! type implementing [`Scheduler`], added with
//! [`Lab::scheduler`](crate::Lab::scheduler).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use crate::subject::{Subject, Worker, run_plain};
use crate::workload::{CHUNK, Plan, Workload};

/// What one worker did in the measured time.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Calls made.
    pub calls: u64,
    /// Calls admitted.
    pub admitted: u64,
    /// The sampled calls' latencies, in nanoseconds.
    pub latencies_ns: Vec<u32>,
}

/// What a measured run of one cell did.
#[derive(Clone, Debug, Default)]
pub struct Run {
    /// Calls made by all workers.
    pub calls: u64,
    /// Calls admitted.
    pub admitted: u64,
    /// Wall time from release to the last worker finishing.
    pub elapsed: Duration,
    /// Calls made by each worker, in worker order.
    pub per_worker: Vec<u64>,
    /// Every sampled latency, in nanoseconds.
    pub latencies_ns: Vec<u32>,
}

impl Run {
    /// Calls per second, all workers together.
    pub fn throughput(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Adds the workers' tallies (in worker order).
    pub fn from_tallies(mut tallies: Vec<(usize, Tally)>, elapsed: Duration) -> Run {
        tallies.sort_by_key(|(i, _)| *i);
        let mut run = Run {
            elapsed,
            ..Run::default()
        };
        for (_, t) in tallies {
            run.calls += t.calls;
            run.admitted += t.admitted;
            run.per_worker.push(t.calls);
            run.latencies_ns.extend(t.latencies_ns);
        }
        run
    }
}

/// How long a cell runs and whether calls are sampled for latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Calls before the measured time, not counted.
    pub warm_up: Duration,
    /// The measured time.
    pub duration: Duration,
    /// Time one call in [`CHUNK`].
    pub sample: bool,
}

/// A subject built for a workload: makes the workers of one cell.
pub trait Cell: Send + Sync {
    /// The worker with index `index`, made on the thread (or in the task)
    /// that will run it.
    fn worker(&self, index: usize) -> Box<dyn CellWorker>;
}

/// A worker of a [`Cell`], behind one dynamic call per chunk.
pub trait CellWorker: Send {
    /// [`CHUNK`] calls, added to `tally`.
    fn chunk(&mut self, tally: &mut Tally, sample: bool);
    /// [`CHUNK`] calls from async code (each call's future `.await`ed).
    fn chunk_async<'a>(
        &'a mut self,
        tally: &'a mut Tally,
        sample: bool,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;
}

/// The [`Cell`] of subject `S` built for a workload.
pub struct SubjectCell<S> {
    subject: Arc<S>,
    workload: Workload,
}

impl<S: Subject> SubjectCell<S> {
    /// `S` built for `workload`, or `None` where it cannot be.
    pub fn build(workload: &Workload) -> Option<SubjectCell<S>> {
        Some(SubjectCell {
            subject: Arc::new(S::build(workload)?),
            workload: workload.clone(),
        })
    }
}

impl<S: Subject> Cell for SubjectCell<S> {
    fn worker(&self, index: usize) -> Box<dyn CellWorker> {
        Box::new(Erased {
            worker: self.subject.worker(),
            plan: self.workload.plan(index),
            from: 0,
        })
    }
}

struct Erased<W> {
    worker: W,
    plan: Plan,
    from: usize,
}

impl<W: Worker> CellWorker for Erased<W> {
    fn chunk(&mut self, tally: &mut Tally, sample: bool) {
        let n = if sample { CHUNK - 1 } else { CHUNK };
        let (plan, from) = (&self.plan, self.from);
        let (admitted, latency) = self.worker.batch(|w| {
            let mut admitted = run_plain(w, plan, from, n as u64);
            let mut latency = None;
            if sample {
                let call = plan.at(from + n);
                let t0 = Instant::now();
                admitted += u64::from(w.call(call));
                latency = Some(t0.elapsed());
            }
            (admitted, latency)
        });
        // The sampled call walks through the plan, chunk by chunk.
        self.from = (from + 1) % CHUNK;
        tally.calls += CHUNK as u64;
        tally.admitted += admitted;
        if let Some(l) = latency {
            tally.latencies_ns.push(nanos(l));
        }
    }

    fn chunk_async<'a>(
        &'a mut self,
        tally: &'a mut Tally,
        sample: bool,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            let n = if sample { CHUNK - 1 } else { CHUNK };
            let mut admitted = 0u64;
            for i in 0..n {
                let call = self.plan.at(self.from + i);
                admitted += u64::from(self.worker.call_async(call).await);
            }
            if sample {
                let call = self.plan.at(self.from + n);
                let t0 = Instant::now();
                admitted += u64::from(self.worker.call_async(call).await);
                tally.latencies_ns.push(nanos(t0.elapsed()));
            }
            self.from = (self.from + 1) % CHUNK;
            tally.calls += CHUNK as u64;
            tally.admitted += admitted;
        })
    }
}

fn nanos(d: Duration) -> u32 {
    d.as_nanos().min(u128::from(u32::MAX)) as u32
}

/// What runs the workers of a cell.
pub trait Scheduler: Send + Sync {
    /// The name in tables, files and `--only`.
    fn name(&self) -> String;
    /// How many threads are busy when `workers` workers run (for the time a
    /// call costs one thread).
    fn busy_threads(&self, workers: usize) -> usize {
        workers
    }
    /// Runs `workers` workers of `cell`: the warm-up, then the measured
    /// time, whose [`Run`] it returns.
    fn run(&self, cell: Arc<dyn Cell>, workers: usize, timing: Timing) -> Run;
}

/// N OS threads, pre-spawned and released together by a `Barrier`; where
/// the OS puts them, or thread `i` pinned to core `i` (feature `pinned`;
/// unpinned where the cores cannot be listed, or without the feature, when
/// it is not among the built-in schedulers).
#[derive(Clone, Copy, Debug, Default)]
pub struct OsThreads {
    /// Pin thread `i` to the `i`-th core (modulo their number).
    pub pinned: bool,
}

impl Scheduler for OsThreads {
    fn name(&self) -> String {
        if self.pinned {
            "os_threads_pinned".into()
        } else {
            "os_threads".into()
        }
    }

    fn run(&self, cell: Arc<dyn Cell>, workers: usize, timing: Timing) -> Run {
        let cores = if self.pinned {
            crate::pool::cores()
        } else {
            Vec::new()
        };
        let start = Arc::new(Barrier::new(workers + 1));
        let end = Arc::new(Barrier::new(workers + 1));
        let stop = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let tallies = Arc::new(Mutex::new(Vec::new()));
        let handles: Vec<_> = (0..workers)
            .map(|i| {
                let (cell, start, end) = (Arc::clone(&cell), Arc::clone(&start), Arc::clone(&end));
                let (stop, tallies) = (Arc::clone(&stop), Arc::clone(&tallies));
                let core = (!cores.is_empty()).then(|| cores[i % cores.len()]);
                std::thread::spawn(move || {
                    if let Some(core) = core {
                        crate::pool::pin_to(core);
                    }
                    let mut w = cell.worker(i);
                    for round in 0..2 {
                        let sample = round == 1 && timing.sample;
                        let mut tally = Tally::default();
                        start.wait();
                        loop {
                            w.chunk(&mut tally, sample);
                            if stop[round].load(Ordering::Relaxed) {
                                break;
                            }
                        }
                        if round == 1 {
                            lock(&tallies).push((i, tally));
                        }
                        end.wait();
                    }
                })
            })
            .collect();
        let mut elapsed = Duration::ZERO;
        for (round, time) in [timing.warm_up, timing.duration].into_iter().enumerate() {
            start.wait();
            let t0 = Instant::now();
            std::thread::sleep(time);
            stop[round].store(true, Ordering::Relaxed);
            end.wait();
            elapsed = t0.elapsed();
        }
        for h in handles {
            let _ = h.join();
        }
        let tallies = std::mem::take(&mut *lock(&tallies));
        Run::from_tallies(tallies, elapsed)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(feature = "tokio")]
pub use self::tokio_schedulers::{TokioCurrentThread, TokioMultiThread};

#[cfg(feature = "tokio")]
mod tokio_schedulers {
    use super::*;

    /// A tokio multi-thread runtime with N worker threads running N tasks
    /// (a fresh runtime per cell); tasks `yield_now()` every chunk.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct TokioMultiThread;

    /// A tokio current-thread runtime running N tasks on one thread: the
    /// cost of a call plus the scheduler's, with no contention on the
    /// breaker at all.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct TokioCurrentThread;

    impl Scheduler for TokioMultiThread {
        fn name(&self) -> String {
            "tokio_multi_thread".into()
        }
        fn run(&self, cell: Arc<dyn Cell>, workers: usize, timing: Timing) -> Run {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .enable_time()
                .build()
                .expect("tokio runtime");
            run_tokio(&rt, cell, workers, timing)
        }
    }

    impl Scheduler for TokioCurrentThread {
        fn name(&self) -> String {
            "tokio_current_thread".into()
        }
        fn busy_threads(&self, _workers: usize) -> usize {
            1
        }
        fn run(&self, cell: Arc<dyn Cell>, workers: usize, timing: Timing) -> Run {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .expect("tokio runtime");
            run_tokio(&rt, cell, workers, timing)
        }
    }

    fn run_tokio(
        rt: &tokio::runtime::Runtime,
        cell: Arc<dyn Cell>,
        workers: usize,
        timing: Timing,
    ) -> Run {
        let stop = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let go = Arc::new(tokio::sync::Barrier::new(workers + 1));
        let done = Arc::new(tokio::sync::Barrier::new(workers + 1));
        rt.block_on(async {
            let tasks: Vec<_> = (0..workers)
                .map(|i| {
                    let (cell, stop) = (Arc::clone(&cell), Arc::clone(&stop));
                    let (go, done) = (Arc::clone(&go), Arc::clone(&done));
                    tokio::spawn(async move {
                        let mut w = cell.worker(i);
                        let mut last = Tally::default();
                        for round in 0..2 {
                            let sample = round == 1 && timing.sample;
                            let mut tally = Tally::default();
                            go.wait().await;
                            loop {
                                w.chunk_async(&mut tally, sample).await;
                                if stop[round].load(Ordering::Relaxed) {
                                    break;
                                }
                                tokio::task::yield_now().await;
                            }
                            done.wait().await;
                            last = tally;
                        }
                        (i, last)
                    })
                })
                .collect();
            let mut elapsed = Duration::ZERO;
            for (round, time) in [timing.warm_up, timing.duration].into_iter().enumerate() {
                go.wait().await;
                let t0 = Instant::now();
                // A plain thread (asleep, not busy) rings the stop bell, so
                // the current-thread scheduler needs no timer for it.
                let stop = Arc::clone(&stop);
                let bell = std::thread::spawn(move || {
                    std::thread::sleep(time);
                    stop[round].store(true, Ordering::Relaxed);
                });
                done.wait().await;
                elapsed = t0.elapsed();
                let _ = bell.join();
            }
            let mut tallies = Vec::new();
            for t in tasks {
                tallies.push(t.await.expect("worker task"));
            }
            Run::from_tallies(tallies, elapsed)
        })
    }
}

#[cfg(feature = "smol")]
pub use self::smol_scheduler::Smol;

#[cfg(feature = "smol")]
mod smol_scheduler {
    use super::*;

    /// A `smol` executor (`async-executor`) run by N threads, N tasks; tasks
    /// yield every chunk. With the `tokio` feature each executor thread is
    /// in the context of an idle one-thread tokio runtime, so that
    /// tokio-based subjects can arm timers.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Smol;

    impl Scheduler for Smol {
        fn name(&self) -> String {
            "smol".into()
        }
        fn run(&self, cell: Arc<dyn Cell>, workers: usize, timing: Timing) -> Run {
            #[cfg(feature = "tokio")]
            let timers = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_time()
                .build()
                .expect("tokio runtime for timers");
            let ex = Arc::new(smol::Executor::new());
            let (shutdown, closed) = smol::channel::bounded::<()>(1);
            let executors: Vec<_> = (0..workers)
                .map(|_| {
                    let ex = Arc::clone(&ex);
                    let closed = closed.clone();
                    #[cfg(feature = "tokio")]
                    let handle = timers.handle().clone();
                    std::thread::spawn(move || {
                        #[cfg(feature = "tokio")]
                        let _context = handle.enter();
                        smol::future::block_on(ex.run(closed.recv()))
                    })
                })
                .collect();
            let stop = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
            let go = Arc::new(smol::lock::Barrier::new(workers + 1));
            let done = Arc::new(smol::lock::Barrier::new(workers + 1));
            let tasks: Vec<_> = (0..workers)
                .map(|i| {
                    let (cell, stop) = (Arc::clone(&cell), Arc::clone(&stop));
                    let (go, done) = (Arc::clone(&go), Arc::clone(&done));
                    ex.spawn(async move {
                        let mut w = cell.worker(i);
                        let mut last = Tally::default();
                        for round in 0..2 {
                            let sample = round == 1 && timing.sample;
                            let mut tally = Tally::default();
                            go.wait().await;
                            loop {
                                w.chunk_async(&mut tally, sample).await;
                                if stop[round].load(Ordering::Relaxed) {
                                    break;
                                }
                                smol::future::yield_now().await;
                            }
                            done.wait().await;
                            last = tally;
                        }
                        (i, last)
                    })
                })
                .collect();
            // This thread only waits: never more busy threads than
            // executor threads.
            let mut elapsed = Duration::ZERO;
            for (round, time) in [timing.warm_up, timing.duration].into_iter().enumerate() {
                smol::future::block_on(go.wait());
                let t0 = Instant::now();
                std::thread::sleep(time);
                stop[round].store(true, Ordering::Relaxed);
                smol::future::block_on(done.wait());
                elapsed = t0.elapsed();
            }
            let tallies: Vec<_> = tasks.into_iter().map(smol::future::block_on).collect();
            drop(shutdown);
            for e in executors {
                let _ = e.join();
            }
            Run::from_tallies(tallies, elapsed)
        }
    }
}

/// Every built-in scheduler this build has, in report order.
pub fn builtin() -> Vec<Arc<dyn Scheduler>> {
    #[cfg_attr(
        not(any(feature = "pinned", feature = "tokio", feature = "smol")),
        allow(unused_mut)
    )]
    let mut all: Vec<Arc<dyn Scheduler>> = vec![Arc::new(OsThreads { pinned: false })];
    #[cfg(feature = "pinned")]
    all.push(Arc::new(OsThreads { pinned: true }));
    #[cfg(feature = "tokio")]
    {
        all.push(Arc::new(TokioMultiThread));
        all.push(Arc::new(TokioCurrentThread));
    }
    #[cfg(feature = "smol")]
    all.push(Arc::new(Smol));
    all
}

/// The cost of one latency sample: the median of 1001 back-to-back pairs
/// of `Instant::now()`, in nanoseconds.
pub fn timer_cost_ns() -> f64 {
    let mut v: Vec<u32> = (0..1001)
        .map(|_| {
            let t0 = Instant::now();
            nanos(t0.elapsed())
        })
        .collect();
    v.sort_unstable();
    f64::from(v[v.len() / 2])
}
