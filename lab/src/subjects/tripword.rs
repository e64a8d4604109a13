//! `tripword` (feature `tripword`): the core's ticket API in both word
//! widths, the per-worker scaling control, and `tripword-std`'s services
//! adapter through `BreakerExt::call` and `call_async` (and, with the
//! `tower` feature, its tower layer).

use std::hint::black_box;
use std::sync::Arc;

use tripword::{Breaker, Config, Outcome, W32, W64, Word};
use tripword_std::{BreakerExt, CallError, MonotonicClock};

use super::baselines::{OPEN_FOR_US, planned};
use crate::exec::now;
use crate::subject::{Kind, Subject, Worker};
use crate::workload::{Call, Setup, Workload};

/// A word width with a name for the tables.
pub trait Width: Word {
    /// `tripword_w64` or `tripword_w32`.
    const NAME: &'static str;
}
impl Width for W64 {
    const NAME: &'static str = "tripword_w64";
}
impl Width for W32 {
    const NAME: &'static str = "tripword_w32";
}

/// `tripword` on the real clock, in word width `W`. Both widths time the
/// setups in whole microseconds (`horizon(0)`: the `W32` default horizon,
/// an hour of 1 kHz ticks, would keep 128 µs units and stretch the tripped
/// setup's 1 µs open time).
pub struct Tripword<W: Width> {
    breaker: Breaker<MonotonicClock, W>,
    never_trips: bool,
}

impl<W: Width> core::fmt::Debug for Tripword<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("Tripword").field(&self.breaker).finish()
    }
}

impl<W: Width> Tripword<W> {
    /// The breaker.
    pub fn breaker(&self) -> &Breaker<MonotonicClock, W> {
        &self.breaker
    }

    /// The breaker, unwrapped.
    pub fn into_breaker(self) -> Breaker<MonotonicClock, W> {
        self.breaker
    }
}

/// A worker of [`Tripword`].
#[derive(Debug)]
pub struct TripwordWorker<W: Width>(Arc<Tripword<W>>);

impl<W: Width> Subject for Tripword<W> {
    type Worker = TripwordWorker<W>;
    const NAME: &'static str = <W as Width>::NAME;
    const KIND: Kind = Kind::Tripword;
    fn build(workload: &Workload) -> Option<Self> {
        let config = match workload.setup {
            Setup::Trips => Config::new()
                .failure_threshold(5)
                .open_for(OPEN_FOR_US)
                .probe_timeout(OPEN_FOR_US),
            Setup::NeverTrips => Config::new()
                .failure_threshold(W::LAYOUT.max_failures())
                .open_for(OPEN_FOR_US)
                .probe_timeout(OPEN_FOR_US),
            Setup::Tripped => Config::new()
                .failure_threshold(1)
                .open_for(1)
                .probe_timeout(OPEN_FOR_US),
        };
        let valid = config.horizon(0).check::<W>().ok()?;
        let breaker = Breaker::<MonotonicClock, W>::from_parts(valid, MonotonicClock, ());
        if workload.setup == Setup::Tripped
            && let Ok(t) = breaker.acquire()
        {
            breaker.release(t, Outcome::Failure);
        }
        Some(Tripword {
            breaker,
            never_trips: workload.setup == Setup::NeverTrips,
        })
    }
    fn worker(self: &Arc<Self>) -> TripwordWorker<W> {
        TripwordWorker(Arc::clone(self))
    }
}

impl<W: Width> Worker for TripwordWorker<W> {
    #[inline]
    fn call(&mut self, call: Call) -> bool {
        planned(&self.0.breaker, call, self.0.never_trips)
    }
}

/// A control for scaling, not a breaker anyone would share: every worker
/// gets a `W64` breaker of its own (on its own cache lines), set up as
/// [`Tripword`] is for the workload, and makes exactly the calls
/// [`Tripword`] makes. Nothing is shared, so how its throughput grows from
/// 1 to N workers is how far this machine lets this code scale.
#[derive(Debug)]
pub struct PrivateTripword(Workload);

/// A breaker on cache lines of its own (128 B: two lines, against the
/// adjacent-line prefetcher).
#[repr(align(128))]
#[derive(Debug)]
pub struct Isolated<T>(pub T);

/// A worker of [`PrivateTripword`], with its own breaker.
#[derive(Debug)]
pub struct PrivateTripwordWorker(Box<Isolated<Tripword<W64>>>);

impl Subject for PrivateTripword {
    type Worker = PrivateTripwordWorker;
    const NAME: &'static str = "tripword_w64_private";
    const KIND: Kind = Kind::Tripword;
    /// Only for `trips` setups (a breaker per worker has nothing to race
    /// for in the others).
    fn build(workload: &Workload) -> Option<Self> {
        (workload.setup == Setup::Trips).then(|| PrivateTripword(workload.clone()))
    }
    fn worker(self: &Arc<Self>) -> PrivateTripwordWorker {
        let breaker = Tripword::<W64>::build(&self.0).expect("the trips config is in range");
        PrivateTripwordWorker(Box::new(Isolated(breaker)))
    }
}

impl Worker for PrivateTripwordWorker {
    #[inline]
    fn call(&mut self, call: Call) -> bool {
        let t = &self.0.0;
        planned(&t.breaker, call, t.never_trips)
    }
}

/// The error of a protected function that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Down;

/// What the protected function returns: `Ok` if `ok`, else `Err` (behind
/// `black_box`, so the branch is not folded away).
#[inline]
pub fn result(ok: bool) -> Result<(), Down> {
    if black_box(ok) { Ok(()) } else { Err(Down) }
}

/// Whether a call through `tripword-std` was admitted.
#[inline]
pub fn admitted<T, E>(r: &Result<T, CallError<E>>) -> bool {
    !matches!(r, Err(CallError::Open(_)))
}

/// One `BreakerExt::call` of a function returning [`result`]`(ok)`;
/// whether it was admitted.
#[inline]
pub fn std_call<B: BreakerExt>(b: &B, ok: bool) -> bool {
    admitted(&b.call(|| result(ok)))
}

/// One `BreakerExt::call_async` of `std::future::ready(`[`result`]`(ok))`,
/// polled once ([`now`]); whether it was admitted.
#[inline]
pub fn std_call_async<B: BreakerExt>(b: &B, ok: bool) -> bool {
    admitted(&now(b.call_async(std::future::ready(result(ok)))))
}

/// The breaker of [`Tripword`]`<W64>` for `workload`, unwrapped.
pub fn w64_breaker(workload: &Workload) -> Option<Breaker<MonotonicClock, W64>> {
    Tripword::<W64>::build(workload).map(Tripword::into_breaker)
}

/// After a call: with `never_trips`, a call that was rejected closes the
/// breaker again.
#[inline]
pub(crate) fn after<C: tripword::Clock>(
    b: &Breaker<C, W64>,
    never_trips: bool,
    admitted: bool,
) -> bool {
    if !admitted && never_trips {
        b.force_close();
    }
    admitted
}

/// `tripword-std`'s closure call, `BreakerExt::call`, on the `tripword_w64`
/// breaker of the workload (same configuration, same clock). In async tasks
/// the synchronous call is made in the task, as for [`Tripword`].
#[derive(Debug)]
pub struct TripwordCall(Tripword<W64>);

/// A worker of [`TripwordCall`].
#[derive(Debug)]
pub struct TripwordCallWorker(Arc<TripwordCall>);

impl Subject for TripwordCall {
    type Worker = TripwordCallWorker;
    const NAME: &'static str = "tripword_w64_call";
    const KIND: Kind = Kind::Tripword;
    fn build(workload: &Workload) -> Option<Self> {
        Tripword::build(workload).map(TripwordCall)
    }
    fn worker(self: &Arc<Self>) -> TripwordCallWorker {
        TripwordCallWorker(Arc::clone(self))
    }
}

impl Worker for TripwordCallWorker {
    #[inline]
    fn call(&mut self, call: Call) -> bool {
        let t = &self.0.0;
        let a = admitted(&t.breaker.call(|| result(call.perform())));
        after(&t.breaker, t.never_trips, a)
    }
}

/// The protected future of [`TripwordCallAsync`]: ready on its first poll
/// (made only once the call is admitted), after the call's slow part.
#[inline]
pub fn dependency(call: Call) -> impl Future<Output = Result<(), Down>> + Send {
    std::future::poll_fn(move |_| std::task::Poll::Ready(result(call.perform())))
}

/// `tripword-std`'s `BreakerExt::call_async` on a future that is ready at
/// once ([`dependency`]), on the
/// `tripword_w64` breaker of the workload: `.await`ed in async tasks,
/// polled once with a no-op waker on plain threads. Its distance to
/// [`TripwordCall`] is what the future costs.
#[derive(Debug)]
pub struct TripwordCallAsync(Tripword<W64>);

/// A worker of [`TripwordCallAsync`].
#[derive(Debug)]
pub struct TripwordCallAsyncWorker(Arc<TripwordCallAsync>);

impl Subject for TripwordCallAsync {
    type Worker = TripwordCallAsyncWorker;
    const NAME: &'static str = "tripword_w64_call_async";
    const KIND: Kind = Kind::Tripword;
    fn build(workload: &Workload) -> Option<Self> {
        Tripword::build(workload).map(TripwordCallAsync)
    }
    fn worker(self: &Arc<Self>) -> TripwordCallAsyncWorker {
        TripwordCallAsyncWorker(Arc::clone(self))
    }
}

impl Worker for TripwordCallAsyncWorker {
    #[inline]
    fn call(&mut self, call: Call) -> bool {
        let t = &self.0.0;
        let r = now(t.breaker.call_async(dependency(call)));
        after(&t.breaker, t.never_trips, admitted(&r))
    }
    fn call_async(&mut self, call: Call) -> impl Future<Output = bool> + Send {
        let t = &self.0.0;
        async move {
            let r = t.breaker.call_async(dependency(call)).await;
            after(&t.breaker, t.never_trips, admitted(&r))
        }
    }
}

/// The breaker of one key of [`TripwordRegistry`].
type KeyBreaker = Breaker<MonotonicClock, W64>;

/// `tripword-std`'s `Registry`: a `tripword_w64` breaker per key, made on
/// first use, set up as [`Tripword`] is for the workload; each call goes to
/// its [`Call::key`]'s breaker (`Registry::with`). Built only for workloads
/// with more than one key (`keys=N`): what the lookup costs, and how
/// contention spreads over N breakers.
pub struct TripwordRegistry {
    registry: tripword_std::Registry<u32, KeyBreaker>,
    never_trips: bool,
}

impl core::fmt::Debug for TripwordRegistry {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TripwordRegistry")
            .field("keys", &self.registry.len())
            .finish_non_exhaustive()
    }
}

/// A worker of [`TripwordRegistry`].
#[derive(Debug)]
pub struct TripwordRegistryWorker(Arc<TripwordRegistry>);

impl Subject for TripwordRegistry {
    type Worker = TripwordRegistryWorker;
    const NAME: &'static str = "tripword_registry";
    const KIND: Kind = Kind::Tripword;
    fn build(workload: &Workload) -> Option<Self> {
        if workload.keys < 2 {
            return None;
        }
        w64_breaker(workload)?;
        let setup = workload.clone();
        let registry = tripword_std::Registry::new(move |_: &u32| {
            w64_breaker(&setup).expect("checked when the registry was built")
        })
        .with_capacity(workload.keys as usize);
        Some(TripwordRegistry {
            registry,
            never_trips: workload.setup == Setup::NeverTrips,
        })
    }
    fn worker(self: &Arc<Self>) -> TripwordRegistryWorker {
        TripwordRegistryWorker(Arc::clone(self))
    }
}

impl Worker for TripwordRegistryWorker {
    #[inline]
    fn call(&mut self, call: Call) -> bool {
        let r = &self.0;
        r.registry
            .with(&call.key, |e| planned(e.breaker(), call, r.never_trips))
    }
}
