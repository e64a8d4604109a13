//! Pre-spawned workers released by a [`Barrier`], for criterion's
//! `iter_custom` (a fixed number of calls per worker) and for timed runs.
//!
//! The threads are spawned once per (implementation, scenario, thread
//! count); each measurement releases them all at once through a barrier, so
//! what is timed is the calls, not thread creation. The thread that drives
//! the pool only waits on the barriers: never more busy threads than
//! workers. A pool's threads are left where the OS puts them
//! ([`Placement::Unpinned`]) or each pinned to a core of its own
//! ([`Placement::Pinned`], through `core_affinity`).
//! The lab's own schedulers are in [`crate::sched`].

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::subject::{Subject, run_calls};
use crate::workload::Workload;

/// How many calls a timed worker makes between two looks at the stop flag.
const CHUNK: u64 = crate::workload::CHUNK as u64;

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
/// list); empty where the platform cannot list them (or without the
/// `pinned` feature).
pub fn cores() -> Vec<usize> {
    #[cfg(feature = "pinned")]
    {
        core_affinity::get_core_ids()
            .unwrap_or_default()
            .into_iter()
            .map(|c| c.id)
            .collect()
    }
    #[cfg(not(feature = "pinned"))]
    {
        Vec::new()
    }
}

/// Pins this thread to core `id` (of [`cores`]); nothing without the
/// `pinned` feature.
pub fn pin_to(id: usize) {
    #[cfg(feature = "pinned")]
    core_affinity::set_for_current(core_affinity::CoreId { id });
    #[cfg(not(feature = "pinned"))]
    let _ = id;
}

impl Pool {
    /// Spawns `threads` unpinned workers of `subject` making the calls of
    /// `workload` (worker `i` its [`plan`](Workload::plan)`(i)`).
    pub fn new<S: Subject>(subject: &Arc<S>, workload: &Workload, threads: usize) -> Pool {
        Pool::placed(subject, workload, threads, Placement::Unpinned)
    }

    /// [`new`](Self::new), placed as `placement` says.
    pub fn placed<S: Subject>(
        subject: &Arc<S>,
        workload: &Workload,
        threads: usize,
        placement: Placement,
    ) -> Pool {
        let subject = Arc::clone(subject);
        let next = Arc::new(AtomicU64::new(0));
        let workload = workload.clone();
        Pool::from_batch_placed(threads, placement, move || {
            let mut worker = subject.worker();
            let plan = workload.plan(next.fetch_add(1, Ordering::Relaxed) as usize);
            let mut from = 0usize;
            move |n| {
                let admitted = run_calls(&mut worker, &plan, from, n);
                from = from.wrapping_add(n as usize);
                admitted
            }
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
    /// use tripword_lab::pool::Pool;
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
                        pin_to(core);
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
