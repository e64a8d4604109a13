//! Pre-spawned workers released by a [`Barrier`], for criterion's
//! `iter_custom` and for the sweep's OS-thread runs.
//!
//! The threads are spawned once per (implementation, scenario, thread
//! count); each measurement releases them all at once through a barrier, so
//! what is timed is the calls, not thread creation. The thread that drives
//! the pool only waits on the barriers: never more busy threads than
//! workers. A pool's threads are left where the OS puts them
//! ([`Placement::Unpinned`]) or each pinned to a core of its own
//! ([`Placement::Pinned`], through `core_affinity`).
//!
//! [`run_tokio`] and [`run_smol`] run the same calls as tasks on an async
//! executor.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::subjects::{Scenario, Subject, Worker, run_calls};

/// How many calls a timed worker makes between two looks at the stop flag.
pub const CHUNK: u64 = 1024;

#[derive(Debug)]
enum Job {
    /// Each worker makes exactly this many calls.
    Calls(u64),
    /// Each worker calls until the stop flag is set.
    UntilStopped,
}

#[derive(Debug)]
struct Shared {
    start: Barrier,
    end: Barrier,
    calls: AtomicU64,
    timed: AtomicBool,
    stop: AtomicBool,
    quit: AtomicBool,
    done_calls: AtomicU64,
    admitted: AtomicU64,
}

/// `threads` workers of one subject in one scenario, parked on a barrier.
#[derive(Debug)]
pub struct Pool {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
}

/// What a timed run did.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    /// Calls made by all workers.
    pub calls: u64,
    /// Calls admitted.
    pub admitted: u64,
    /// Wall time from release to the last worker finishing.
    pub elapsed: Duration,
}

impl Run {
    /// Calls per second, all workers together.
    pub fn throughput(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64()
    }
}

/// Where a pool's threads run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Wherever the OS scheduler puts them (and moves them).
    Unpinned,
    /// Worker `i` pinned to the `i`-th core `core_affinity` lists (modulo
    /// their number), for the pool's whole life. Where the platform cannot
    /// list or pin cores, the threads stay unpinned.
    Pinned,
}

/// The cores worker threads are pinned to, in order (`core_affinity`'s
/// list); empty where the platform cannot list them.
pub fn cores() -> Vec<core_affinity::CoreId> {
    core_affinity::get_core_ids().unwrap_or_default()
}

impl Pool {
    /// Spawns `threads` unpinned workers of `subject` for `scenario`.
    pub fn new<S: Subject>(subject: &Arc<S>, scenario: Scenario, threads: usize) -> Pool {
        Pool::placed(subject, scenario, threads, Placement::Unpinned)
    }

    /// Spawns `threads` workers of `subject` for `scenario`, placed as
    /// `placement` says.
    pub fn placed<S: Subject>(
        subject: &Arc<S>,
        scenario: Scenario,
        threads: usize,
        placement: Placement,
    ) -> Pool {
        let subject = Arc::clone(subject);
        Pool::from_batch_placed(threads, placement, move || {
            let mut worker = subject.worker();
            move |n| run_calls(&mut worker, scenario, n)
        })
    }

    /// Spawns `threads` workers; each runs `make` once, on its own thread,
    /// and then calls what it returned with a number of calls to make, to
    /// get how many were admitted. For subjects whose types cannot be named
    /// (a `tower::service_fn` around a closure), or that set something up
    /// around a batch (a tokio context).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use tripword_benches::pool::Pool;
    ///
    /// let count = Arc::new(AtomicU64::new(0));
    /// let c = Arc::clone(&count);
    /// let pool = Pool::from_batch(2, move || {
    ///     let c = Arc::clone(&c);
    ///     move |n| {
    ///         c.fetch_add(n, Ordering::Relaxed);
    ///         n
    ///     }
    /// });
    /// pool.run_calls(10);
    /// assert_eq!(count.load(Ordering::Relaxed), 20);
    /// ```
    pub fn from_batch<M, R>(threads: usize, make: M) -> Pool
    where
        M: Fn() -> R + Send + Sync + 'static,
        R: FnMut(u64) -> u64,
    {
        Pool::from_batch_placed(threads, Placement::Unpinned, make)
    }

    /// [`from_batch`](Self::from_batch) with the threads placed as
    /// `placement` says (pinned before `make` runs, so a worker's state is
    /// allocated on its core).
    pub fn from_batch_placed<M, R>(threads: usize, placement: Placement, make: M) -> Pool
    where
        M: Fn() -> R + Send + Sync + 'static,
        R: FnMut(u64) -> u64,
    {
        let cores = match placement {
            Placement::Unpinned => Vec::new(),
            Placement::Pinned => cores(),
        };
        let shared = Arc::new(Shared {
            start: Barrier::new(threads + 1),
            end: Barrier::new(threads + 1),
            calls: AtomicU64::new(0),
            timed: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            quit: AtomicBool::new(false),
            done_calls: AtomicU64::new(0),
            admitted: AtomicU64::new(0),
        });
        let make = Arc::new(make);
        let handles = (0..threads)
            .map(|i| {
                let shared = Arc::clone(&shared);
                let make = Arc::clone(&make);
                let core = (!cores.is_empty()).then(|| cores[i % cores.len()]);
                std::thread::spawn(move || {
                    if let Some(core) = core {
                        core_affinity::set_for_current(core);
                    }
                    worker_loop(&shared, make())
                })
            })
            .collect();
        Pool { shared, handles }
    }

    /// Releases the workers to make `calls` calls each; returns the wall time
    /// until the last one finished (what criterion's `iter_custom` wants).
    pub fn run_calls(&self, calls: u64) -> Duration {
        self.dispatch(Job::Calls(calls), Duration::ZERO).elapsed
    }

    /// Releases the workers to call for about `duration`; returns what they
    /// did.
    pub fn run_for(&self, duration: Duration) -> Run {
        self.dispatch(Job::UntilStopped, duration)
    }

    fn dispatch(&self, job: Job, duration: Duration) -> Run {
        let s = &self.shared;
        s.done_calls.store(0, Ordering::Relaxed);
        s.admitted.store(0, Ordering::Relaxed);
        s.stop.store(false, Ordering::Relaxed);
        match job {
            Job::Calls(n) => {
                s.calls.store(n, Ordering::Relaxed);
                s.timed.store(false, Ordering::Relaxed);
            }
            Job::UntilStopped => s.timed.store(true, Ordering::Relaxed),
        }
        // The barrier orders the stores above before the workers' loads.
        let t0 = Instant::now();
        s.start.wait();
        if matches!(job, Job::UntilStopped) {
            std::thread::sleep(duration);
            s.stop.store(true, Ordering::Relaxed);
        }
        s.end.wait();
        let elapsed = t0.elapsed();
        Run {
            calls: s.done_calls.load(Ordering::Relaxed),
            admitted: s.admitted.load(Ordering::Relaxed),
            elapsed,
        }
    }
}

fn worker_loop(shared: &Shared, mut batch: impl FnMut(u64) -> u64) {
    loop {
        shared.start.wait();
        if shared.quit.load(Ordering::Relaxed) {
            return;
        }
        let (mut calls, mut admitted) = (0u64, 0u64);
        if shared.timed.load(Ordering::Relaxed) {
            // At least one chunk: a worker released late still measures.
            loop {
                admitted += batch(CHUNK);
                calls += CHUNK;
                if shared.stop.load(Ordering::Relaxed) {
                    break;
                }
            }
        } else {
            calls = shared.calls.load(Ordering::Relaxed);
            admitted = batch(calls);
        }
        shared.done_calls.fetch_add(calls, Ordering::Relaxed);
        shared.admitted.fetch_add(admitted, Ordering::Relaxed);
        shared.end.wait();
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.quit.store(true, Ordering::Relaxed);
        self.shared.start.wait();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// Spawns `workers` on a fresh tokio runtime of `scheduler` and lets them
/// call for about `duration`.
///
/// `MultiThread` uses `threads` worker threads and `threads` tasks;
/// `CurrentThread` runs `threads` tasks on one thread. Each task yields to
/// the scheduler every [`CHUNK`] calls, as a well-behaved task in a busy
/// service would.
pub fn run_tokio<S: Subject>(
    subject: &Arc<S>,
    scenario: Scenario,
    threads: usize,
    multi_thread: bool,
    duration: Duration,
) -> Run {
    let rt = if multi_thread {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_time()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
    }
    .expect("tokio runtime");
    let stop = Arc::new(AtomicBool::new(false));
    let go = Arc::new(tokio::sync::Barrier::new(threads + 1));
    let (calls, admitted, elapsed) = rt.block_on(async {
        let tasks: Vec<_> = (0..threads)
            .map(|_| {
                let mut worker = subject.worker();
                let stop = Arc::clone(&stop);
                let go = Arc::clone(&go);
                tokio::spawn(async move {
                    go.wait().await;
                    let (mut calls, mut admitted) = (0u64, 0u64);
                    loop {
                        for _ in 0..CHUNK {
                            admitted += u64::from(worker.call_async(scenario).await);
                        }
                        calls += CHUNK;
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        tokio::task::yield_now().await;
                    }
                    (calls, admitted)
                })
            })
            .collect();
        // A plain thread (asleep, not busy) rings the stop bell, so the
        // current-thread scheduler does not need to run a timer for it.
        let stopper = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                std::thread::sleep(duration);
                stop.store(true, Ordering::Relaxed);
            })
        };
        go.wait().await;
        let t0 = Instant::now();
        let (mut calls, mut admitted) = (0, 0);
        for t in tasks {
            let (c, a) = t.await.expect("worker task");
            calls += c;
            admitted += a;
        }
        let elapsed = t0.elapsed();
        let _ = stopper.join();
        (calls, admitted, elapsed)
    });
    Run {
        calls,
        admitted,
        elapsed,
    }
}

/// Spawns `threads` tasks of `subject` on a `smol` executor
/// (`async-executor`) run by `threads` threads, and lets them call for about
/// `duration`.
///
/// Each task yields every [`CHUNK`] calls, as in [`run_tokio`]. The executor
/// threads are in the context of a one-thread tokio runtime with a time
/// driver (idle unless a call arms a timer: `tower-resilience` does when its
/// state lock is contended), so the tokio-based peers run here too.
pub fn run_smol<S: Subject>(
    subject: &Arc<S>,
    scenario: Scenario,
    threads: usize,
    duration: Duration,
) -> Run {
    let timers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_time()
        .build()
        .expect("tokio runtime for timers");
    let ex = Arc::new(smol::Executor::new());
    let (shutdown, closed) = smol::channel::bounded::<()>(1);
    let executors: Vec<_> = (0..threads)
        .map(|_| {
            let ex = Arc::clone(&ex);
            let closed = closed.clone();
            let handle = timers.handle().clone();
            std::thread::spawn(move || {
                let _context = handle.enter();
                smol::future::block_on(ex.run(closed.recv()))
            })
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let go = Arc::new(smol::lock::Barrier::new(threads + 1));
    let tasks: Vec<_> = (0..threads)
        .map(|_| {
            let mut worker = subject.worker();
            let stop = Arc::clone(&stop);
            let go = Arc::clone(&go);
            ex.spawn(async move {
                go.wait().await;
                let (mut calls, mut admitted) = (0u64, 0u64);
                loop {
                    for _ in 0..CHUNK {
                        admitted += u64::from(worker.call_async(scenario).await);
                    }
                    calls += CHUNK;
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    smol::future::yield_now().await;
                }
                (calls, admitted)
            })
        })
        .collect();
    // This thread only waits: never more busy threads than executor threads.
    smol::future::block_on(go.wait());
    let t0 = Instant::now();
    std::thread::sleep(duration);
    stop.store(true, Ordering::Relaxed);
    let (mut calls, mut admitted) = (0, 0);
    for t in tasks {
        let (c, a) = smol::future::block_on(t);
        calls += c;
        admitted += a;
    }
    let elapsed = t0.elapsed();
    drop(shutdown);
    for e in executors {
        let _ = e.join();
    }
    Run {
        calls,
        admitted,
        elapsed,
    }
}
