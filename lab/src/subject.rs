//! What the lab measures: a [`Subject`] (one implementation, built for one
//! [`Workload`]) and its [`Worker`]s (one per thread or task), or the short
//! way, a [`SimpleSubject`] every worker shares by reference.

use std::future::Future;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::workload::{Call, Plan, Workload};

/// What an implementation is in the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Yours: the breaker a program built on the lab brings (the default for
    /// a [`SimpleSubject`]).
    Yours,
    /// A floor or a naive reference, not a breaker people would ship.
    Baseline,
    /// `tripword`, the crate this lab was written for.
    Tripword,
    /// A circuit breaker from crates.io.
    Peer,
}

impl Kind {
    /// The name in outputs.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Yours => "yours",
            Kind::Baseline => "baseline",
            Kind::Tripword => "tripword",
            Kind::Peer => "peer",
        }
    }
}

/// One implementation, built for one workload, shared by all workers.
pub trait Subject: Send + Sync + Sized + 'static {
    /// The per-thread (or per-task) handle.
    type Worker: Worker;
    /// The name in tables, files and `--only`.
    const NAME: &'static str;
    /// What it is in the comparison.
    const KIND: Kind;
    /// The implementation set up for `workload` (read its
    /// [`setup`](Workload::setup)), or `None` where it cannot be (its cells
    /// are left out).
    fn build(workload: &Workload) -> Option<Self>;
    /// A handle for one thread or task, made on that thread.
    fn worker(self: &Arc<Self>) -> Self::Worker;
}

/// One caller: makes the calls it is handed, each with its planned outcome.
pub trait Worker: Send + 'static {
    /// One call: ask to be admitted; if admitted, run the dependency
    /// ([`Call::perform`]) and report its outcome. Returns whether the call
    /// was admitted.
    fn call(&mut self, call: Call) -> bool;

    /// One call from async code. Synchronous implementations complete at
    /// once; async ones return their own future, which the async schedulers
    /// `.await`.
    fn call_async(&mut self, call: Call) -> impl Future<Output = bool> + Send {
        std::future::ready(self.call(call))
    }

    /// Runs `calls`, a batch of calls of this worker on this thread, in the
    /// context those calls need (a runtime's, say). By default nothing.
    #[inline]
    fn batch<R>(&mut self, calls: impl FnOnce(&mut Self) -> R) -> R
    where
        Self: Sized,
    {
        calls(self)
    }
}

/// Makes `n` calls of `plan` from its `from`-th call on, in one
/// [`batch`](Worker::batch); returns how many were admitted. A uniform
/// success or failure is a loop around a constant call, as a hand-written
/// loop would be.
#[inline]
pub fn run_calls<W: Worker>(worker: &mut W, plan: &Plan, from: usize, n: u64) -> u64 {
    worker.batch(|worker| run_plain(worker, plan, from, n))
}

/// [`run_calls`] outside a batch (for a caller already in one).
#[inline]
pub(crate) fn run_plain<W: Worker>(worker: &mut W, plan: &Plan, from: usize, n: u64) -> u64 {
    let mut admitted = 0u64;
    match plan {
        Plan::Uniform(c) if *c == Call::SUCCESS => {
            for _ in 0..n {
                admitted += u64::from(worker.call(Call::SUCCESS));
            }
        }
        Plan::Uniform(c) if *c == Call::FAILURE => {
            for _ in 0..n {
                admitted += u64::from(worker.call(Call::FAILURE));
            }
        }
        Plan::Uniform(c) => {
            let c = *c;
            for _ in 0..n {
                admitted += u64::from(worker.call(c));
            }
        }
        Plan::Pattern(p) => {
            let mut i = from % p.len();
            for _ in 0..n {
                admitted += u64::from(worker.call(p[i]));
                i += 1;
                if i == p.len() {
                    i = 0;
                }
            }
        }
    }
    admitted
}

/// The short way into the lab: a breaker every worker shares by reference,
/// and one call.
///
/// The lab builds it once per cell ([`build`](Self::build)), shares it
/// through an `Arc` with every worker thread or task, and calls
/// [`call`](Self::call) in a loop with each call's planned outcome. What the
/// workload's [`Setup`](crate::Setup) asks of the configuration:
///
/// - `Trips`: trip as it would in production (the built-in ones: after 5
///   consecutive failures, or a 50% failure rate over 100 calls);
/// - `NeverTrips`: a threshold the run never reaches, so every call is
///   admitted and every failure recorded;
/// - `Tripped`: tripped before the run (fail calls in `build` until it
///   rejects) and open for the shortest time it allows, so callers race to
///   be the probe.
///
/// Return `None` from `build` for a workload the breaker cannot be set up
/// for: its cells are left out.
pub trait SimpleSubject: Send + Sync + Sized + 'static {
    /// The name in tables, files and `--only`.
    const NAME: &'static str;
    /// What it is in the comparison: [`Kind::Yours`] unless said otherwise.
    const KIND: Kind = Kind::Yours;
    /// The breaker set up for `workload`, or `None` to skip the workload.
    fn build(workload: &Workload) -> Option<Self>;
    /// One call: ask to be admitted; if admitted, run `call.perform()` and
    /// report what it returned (`true`: a success). Returns whether the call
    /// was admitted.
    fn call(&self, call: Call) -> bool;
}

/// A [`SimpleSubject`] as a [`Subject`]: every worker holds an `Arc` of the
/// one breaker and makes its [`call`](SimpleSubject::call).
#[derive(Debug)]
pub struct Simple<B>(pub B);

/// A worker of [`Simple`].
#[derive(Debug)]
pub struct SimpleWorker<B>(Arc<Simple<B>>);

impl<B: SimpleSubject> Subject for Simple<B> {
    type Worker = SimpleWorker<B>;
    const NAME: &'static str = B::NAME;
    const KIND: Kind = B::KIND;
    fn build(workload: &Workload) -> Option<Self> {
        B::build(workload).map(Simple)
    }
    fn worker(self: &Arc<Self>) -> SimpleWorker<B> {
        SimpleWorker(Arc::clone(self))
    }
}

impl<B: SimpleSubject> Worker for SimpleWorker<B> {
    #[inline]
    fn call(&mut self, call: Call) -> bool {
        self.0.0.call(call)
    }
}
