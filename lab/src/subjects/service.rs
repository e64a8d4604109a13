//! What the tower-shaped subjects share: the dependency as a tower
//! `Service` ([`Dependency`]), the runtime a worker drives its calls with
//! on a plain thread ([`Driver`]), and (feature `tower`) `tripword-std`'s
//! tower layer as a subject.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower::Service;

use crate::exec::{block_on, finish, runtime};
use crate::workload::Call;

/// What the protected dependency is asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    /// Succeed at once.
    Succeed,
    /// Fail at once.
    Fail,
    /// Never complete (a probe that hangs).
    Hang,
    /// A planned call with a slow part: spin, then succeed or fail
    /// ([`Call::perform`]).
    Planned(Call),
}

impl Request {
    /// The request of a planned call (`Succeed` or `Fail` when it is fast).
    #[inline]
    pub fn of(call: Call) -> Request {
        match (call.slow_us, call.ok) {
            (0, true) => Request::Succeed,
            (0, false) => Request::Fail,
            _ => Request::Planned(call),
        }
    }
}

/// A tower `Service` that is always ready and answers at once (or never, for
/// [`Request::Hang`]), without allocating: the inner service of the tower
/// subjects.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dependency;

/// The future of [`Dependency`].
#[derive(Debug)]
pub struct DependencyFuture(Request);

impl Future for DependencyFuture {
    type Output = Result<(), ()>;
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.0 {
            Request::Succeed => Poll::Ready(Ok(())),
            Request::Fail => Poll::Ready(Err(())),
            Request::Hang => Poll::Pending,
            Request::Planned(c) => Poll::Ready(if c.perform() { Ok(()) } else { Err(()) }),
        }
    }
}

impl Service<Request> for Dependency {
    type Response = ();
    type Error = ();
    type Future = DependencyFuture;
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), ()>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, request: Request) -> DependencyFuture {
        DependencyFuture(request)
    }
}

/// The runtime a worker of a tower service drives its calls with on a plain
/// thread (made on first use), and whether the thread is in its context.
#[derive(Debug, Default)]
pub struct Driver {
    rt: Option<Arc<tokio::runtime::Runtime>>,
    entered: bool,
}

impl Driver {
    /// Runs `future` to completion: [`finish`] inside a
    /// [`batch`](Self::batch), [`block_on`] outside one.
    #[inline]
    pub fn drive<F: Future>(&mut self, future: F) -> F::Output {
        let rt = self.rt.get_or_insert_with(|| Arc::new(runtime()));
        if self.entered {
            finish(rt, future)
        } else {
            block_on(rt, future)
        }
    }

    /// Runs `calls` on `worker` with this thread in the context of the
    /// runtime of `driver(worker)`.
    pub fn batch<W, R>(
        worker: &mut W,
        driver: impl Fn(&mut W) -> &mut Driver,
        calls: impl FnOnce(&mut W) -> R,
    ) -> R {
        let cx = driver(worker);
        let rt = Arc::clone(cx.rt.get_or_insert_with(|| Arc::new(runtime())));
        let outer = std::mem::replace(&mut cx.entered, true);
        let guard = rt.enter();
        let out = calls(worker);
        drop(guard);
        driver(worker).entered = outer;
        out
    }
}

#[cfg(feature = "tower")]
pub use layer::*;

#[cfg(feature = "tower")]
mod layer {
    use std::sync::Arc;

    use tower::{Layer, Service, ServiceExt};
    use tripword::{Breaker, W64};
    use tripword_std::classify::OkOrFailure;
    use tripword_std::tower::{BreakerLayer, BreakerService};
    use tripword_std::{CallError, MonotonicClock};

    use super::{Dependency, Driver, Request};
    use crate::subject::{Kind, Subject, Worker};
    use crate::subjects::{after, w64_breaker};
    use crate::workload::{Call, Setup, Workload};

    /// One request through a service behind `tripword_std::tower`'s layer:
    /// `ready().await`, `call(..).await`; whether it was admitted.
    pub async fn layer_call<S, Req, E>(svc: &mut S, request: Req) -> bool
    where
        S: Service<Req, Error = CallError<E>>,
    {
        match svc.ready().await {
            Ok(svc) => !matches!(svc.call(request).await, Err(CallError::Open(_))),
            Err(_) => false,
        }
    }

    /// The tower service of [`TripwordTower`]: `S` behind the
    /// `tripword_w64` breaker, shared through an `Arc`, `Ok` a success and
    /// `Err` a failure.
    pub type TripwordService<S = Dependency> =
        BreakerService<S, Arc<Breaker<MonotonicClock, W64>>, OkOrFailure>;

    /// `tripword_std::tower`'s layer on `breaker` (an `Arc` handle: every
    /// clone of the service shares the one word), classifying `Ok` as a
    /// success and `Err` as a failure.
    pub fn tripword_layer(
        breaker: Breaker<MonotonicClock, W64>,
    ) -> BreakerLayer<Arc<Breaker<MonotonicClock, W64>>, OkOrFailure> {
        BreakerLayer::new(Arc::new(breaker)).classify(OkOrFailure)
    }

    /// `tripword_std::tower::BreakerLayer` around [`Dependency`] (the inner
    /// service `tower-resilience` is measured around too), on the
    /// `tripword_w64` breaker of the workload; one call is `ready().await` +
    /// `call(..).await`, `.await`ed in async tasks and driven by a
    /// [`Driver`] on plain threads.
    #[derive(Debug)]
    pub struct TripwordTower(TripwordService, bool);

    /// A worker of [`TripwordTower`]: a clone of the service, sharing the
    /// breaker, and on plain threads the runtime that drives its calls.
    #[derive(Debug)]
    pub struct TripwordTowerWorker {
        svc: TripwordService,
        never_trips: bool,
        rt: Driver,
    }

    impl Subject for TripwordTower {
        type Worker = TripwordTowerWorker;
        const NAME: &'static str = "tripword_w64_tower";
        const KIND: Kind = Kind::Tripword;
        fn build(workload: &Workload) -> Option<Self> {
            let layer = tripword_layer(w64_breaker(workload)?);
            Some(TripwordTower(
                layer.layer(Dependency),
                workload.setup == Setup::NeverTrips,
            ))
        }
        fn worker(self: &Arc<Self>) -> TripwordTowerWorker {
            TripwordTowerWorker {
                svc: self.0.clone(),
                never_trips: self.1,
                rt: Driver::default(),
            }
        }
    }

    impl Worker for TripwordTowerWorker {
        #[inline]
        fn call(&mut self, call: Call) -> bool {
            let admitted = self.rt.drive(layer_call(&mut self.svc, Request::of(call)));
            after(self.svc.breaker(), self.never_trips, admitted)
        }
        async fn call_async(&mut self, call: Call) -> bool {
            let admitted = layer_call(&mut self.svc, Request::of(call)).await;
            after(self.svc.breaker(), self.never_trips, admitted)
        }
        fn batch<R>(&mut self, calls: impl FnOnce(&mut Self) -> R) -> R {
            Driver::batch(self, |w| &mut w.rt, calls)
        }
    }
}
