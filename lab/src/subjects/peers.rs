//! The peers (feature `peers`): `failsafe`, `recloser`, `seatbelt` and
//! `tower-resilience-circuitbreaker`, each set up per [`Setup`] as the
//! module above says.

use std::future::Future;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use failsafe::CircuitBreaker as _;
use tower::{Service, ServiceExt};

use super::baselines::OPEN_FOR_US;
use super::service::{Dependency, Driver, Request};
use crate::exec::{block_on, now, runtime};
use crate::subject::{Kind, Subject, Worker};
use crate::workload::{Call, Setup, Workload};

/// The `failsafe` breaker type used here: consecutive failures, constant
/// backoff, no instrumentation.
pub type FailsafeBreaker = failsafe::StateMachine<
    failsafe::failure_policy::ConsecutiveFailures<failsafe::backoff::Constant>,
    (),
>;

/// A `failsafe` breaker tripping after `threshold` consecutive failures and
/// staying open `open`.
pub fn failsafe_breaker(threshold: u32, open: Duration) -> FailsafeBreaker {
    let policy = failsafe::failure_policy::consecutive_failures(
        threshold,
        failsafe::backoff::constant(open),
    );
    failsafe::Config::new().failure_policy(policy).build()
}

/// `failsafe` 1.x (a `parking_lot` mutex around its state; real clock).
#[derive(Debug)]
pub struct Failsafe(FailsafeBreaker);

/// A worker of [`Failsafe`] (its breaker is an `Arc` handle; each worker
/// holds a clone).
#[derive(Debug)]
pub struct FailsafeWorker(FailsafeBreaker);

/// One `failsafe` call of a dependency that succeeds or fails; whether it
/// was admitted.
#[inline]
pub fn failsafe_call(b: &FailsafeBreaker, call: impl Into<Call>) -> bool {
    let call = call.into();
    !matches!(
        b.call(|| if black_box(call.perform()) {
            Ok(())
        } else {
            Err(())
        }),
        Err(failsafe::Error::Rejected)
    )
}

impl Subject for Failsafe {
    type Worker = FailsafeWorker;
    const NAME: &'static str = "failsafe";
    const KIND: Kind = Kind::Peer;
    fn build(workload: &Workload) -> Option<Self> {
        let open = Duration::from_micros(OPEN_FOR_US);
        let b = match workload.setup {
            Setup::Trips => failsafe_breaker(5, open),
            Setup::NeverTrips => failsafe_breaker(u32::MAX, open),
            Setup::Tripped => {
                let b = failsafe_breaker(1, Duration::from_micros(1));
                failsafe_call(&b, false);
                b
            }
        };
        Some(Failsafe(b))
    }
    fn worker(self: &Arc<Self>) -> FailsafeWorker {
        FailsafeWorker(self.0.clone())
    }
}

impl Worker for FailsafeWorker {
    #[inline]
    fn call(&mut self, call: Call) -> bool {
        failsafe_call(&self.0, call)
    }
}

// ---------------------------------------------------------------- recloser

/// A `recloser` breaker with a ring buffer of `closed_len` calls in `Closed`
/// and `half_open_len` in `HalfOpen`, tripping at `error_rate`.
pub fn recloser_breaker(
    error_rate: f32,
    closed_len: usize,
    half_open_len: usize,
    open: Duration,
) -> recloser::Recloser {
    recloser::Recloser::custom()
        .error_rate(error_rate)
        .closed_len(closed_len)
        .half_open_len(half_open_len)
        .open_wait(open)
        .build()
}

/// Fails calls until `r` opens (its ring buffer must fill first: `closed_len
/// + 1` calls). Gives up after 1000.
pub fn recloser_trip(r: &recloser::Recloser) {
    for _ in 0..1000 {
        if !recloser_call(r, false) {
            return;
        }
    }
}

/// One `recloser` call; whether it was admitted.
#[inline]
pub fn recloser_call(r: &recloser::Recloser, call: impl Into<Call>) -> bool {
    let call = call.into();
    !matches!(
        r.call(|| if black_box(call.perform()) {
            Ok(())
        } else {
            Err(())
        }),
        Err(recloser::Error::Rejected)
    )
}

/// `recloser` 1.x (an epoch-managed state pointer, ring buffers of
/// outcomes behind a spin lock; real clock).
#[derive(Debug)]
pub struct Recloser(recloser::Recloser);

/// A worker of [`Recloser`].
#[derive(Debug)]
pub struct RecloserWorker(Arc<Recloser>);

impl Subject for Recloser {
    type Worker = RecloserWorker;
    const NAME: &'static str = "recloser";
    const KIND: Kind = Kind::Peer;
    fn build(workload: &Workload) -> Option<Self> {
        let open = Duration::from_micros(OPEN_FOR_US);
        let r = match workload.setup {
            Setup::Trips => recloser_breaker(0.5, 100, 10, open),
            Setup::NeverTrips => recloser_breaker(2.0, 100, 10, open),
            Setup::Tripped => {
                let r = recloser_breaker(0.5, 1, 1, Duration::from_micros(1));
                recloser_trip(&r);
                r
            }
        };
        Some(Recloser(r))
    }
    fn worker(self: &Arc<Self>) -> RecloserWorker {
        RecloserWorker(Arc::clone(self))
    }
}

impl Worker for RecloserWorker {
    #[inline]
    fn call(&mut self, call: Call) -> bool {
        recloser_call(&self.0.0, call)
    }
}

// ---------------------------------------------------------------- seatbelt

/// Why a `seatbelt` call did not succeed: the dependency failed, or the
/// breaker rejected the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeatbeltError {
    /// The dependency failed.
    Down,
    /// The circuit was open.
    Open,
}

/// The dependency behind `seatbelt`'s breaker: [`Dependency`]'s calls, as a
/// `layered::Service` (`seatbelt`'s own service trait), answering at once.
#[derive(Clone, Copy, Debug, Default)]
pub struct SeatbeltDependency;

impl layered::Service<Request> for SeatbeltDependency {
    type Out = Result<(), SeatbeltError>;
    async fn execute(&self, request: Request) -> Self::Out {
        match request {
            Request::Succeed => Ok(()),
            Request::Fail => Err(SeatbeltError::Down),
            Request::Hang => std::future::pending().await,
            Request::Planned(c) => {
                if c.perform() {
                    Ok(())
                } else {
                    Err(SeatbeltError::Down)
                }
            }
        }
    }
}

/// The `seatbelt` service type used here.
pub type SeatbeltBreaker =
    seatbelt::breaker::Breaker<Request, Result<(), SeatbeltError>, SeatbeltDependency>;

/// A `seatbelt` breaker around [`SeatbeltDependency`]: it opens when the
/// failure rate over the sampling window (1 s, the shortest it allows)
/// reaches `failure_rate` after at least `min_throughput` calls, and stays
/// open `open`. Its clock is a `tick::Clock` on the system time with no
/// timer driver (the breaker only reads it); the driver is returned so the
/// caller keeps it alive.
pub fn seatbelt_breaker(
    failure_rate: f32,
    min_throughput: u32,
    open: Duration,
) -> (SeatbeltBreaker, tick::runtime::ClockDriver) {
    use layered::Layer as _;
    let (clock, driver) = tick::runtime::InactiveClock::<tick::runtime::Isolated>::default()
        .activate(std::task::Waker::noop().clone());
    let context = seatbelt::ResilienceContext::new(&clock);
    let layer = seatbelt::breaker::Breaker::layer("bench", &context)
        .recovery_with(|out: &Result<(), SeatbeltError>, _| match out {
            Ok(()) => seatbelt::RecoveryInfo::never(),
            Err(_) => seatbelt::RecoveryInfo::retry(),
        })
        .rejected_input_error(|_, _| SeatbeltError::Open)
        .failure_threshold(failure_rate)
        .min_throughput(min_throughput)
        .sampling_duration(Duration::from_secs(1))
        .break_duration(open);
    (layer.layer(SeatbeltDependency), driver)
}

/// One `seatbelt` call (`execute(..).await`); whether it was admitted.
pub async fn seatbelt_call(b: &SeatbeltBreaker, request: Request) -> bool {
    use layered::Service as _;
    !matches!(b.execute(request).await, Err(SeatbeltError::Open))
}

/// `seatbelt` 0.11 (Microsoft's oxidizer resilience stack): a `std` mutex
/// around its state, a failure-rate health window, the clock read on every
/// admission and every release. Its calls are futures that complete on
/// their first poll: polled once with a no-op waker ([`now`]) on plain
/// threads, `.await`ed in tasks.
pub struct Seatbelt {
    breaker: SeatbeltBreaker,
    _driver: tick::runtime::ClockDriver,
}

impl core::fmt::Debug for Seatbelt {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Seatbelt").finish_non_exhaustive()
    }
}

/// A worker of [`Seatbelt`] (`seatbelt` services are called through `&`:
/// workers share one).
#[derive(Debug)]
pub struct SeatbeltWorker(Arc<Seatbelt>);

impl Subject for Seatbelt {
    type Worker = SeatbeltWorker;
    const NAME: &'static str = "seatbelt";
    const KIND: Kind = Kind::Peer;
    fn build(workload: &Workload) -> Option<Self> {
        let open = Duration::from_micros(OPEN_FOR_US);
        let (breaker, driver) = match workload.setup {
            // Half the calls failing over at least 100, as for `recloser`.
            Setup::Trips => seatbelt_breaker(0.5, 100, open),
            // A minimum throughput the window never reaches: never opens.
            Setup::NeverTrips => seatbelt_breaker(0.99, u32::MAX, open),
            Setup::Tripped => {
                let (b, d) = seatbelt_breaker(0.5, 1, Duration::from_micros(1));
                now(seatbelt_call(&b, Request::Fail));
                (b, d)
            }
        };
        Some(Seatbelt {
            breaker,
            _driver: driver,
        })
    }
    fn worker(self: &Arc<Self>) -> SeatbeltWorker {
        SeatbeltWorker(Arc::clone(self))
    }
}

impl Worker for SeatbeltWorker {
    #[inline]
    fn call(&mut self, call: Call) -> bool {
        now(seatbelt_call(&self.0.breaker, Request::of(call)))
    }
    fn call_async(&mut self, call: Call) -> impl Future<Output = bool> + Send {
        seatbelt_call(&self.0.breaker, Request::of(call))
    }
}

// ---------------------------------------------------------------- tower-resilience

/// The `tower-resilience` service type used here.
pub type TowerBreaker = tower_resilience_circuitbreaker::CircuitBreaker<
    Dependency,
    tower_resilience_circuitbreaker::DefaultClassifier,
>;

/// The `tower-resilience` layer: consecutive-failures model with threshold
/// `threshold`, open for `open`, one call admitted in half-open.
pub fn tower_layer(
    threshold: usize,
    open: Duration,
) -> tower_resilience_circuitbreaker::CircuitBreakerLayer<
    tower_resilience_circuitbreaker::DefaultClassifier,
> {
    tower_resilience_circuitbreaker::CircuitBreakerLayer::builder()
        .consecutive_failures(threshold)
        .wait_duration_in_open(open)
        .permitted_calls_in_half_open(1)
        .build()
        .expect("valid tower-resilience config")
}

/// A `tower-resilience` breaker around [`Dependency`] (see
/// [`tower_layer`]).
pub fn tower_breaker(threshold: usize, open: Duration) -> TowerBreaker {
    tower_layer(threshold, open).layer_fn(Dependency)
}

/// One `tower-resilience` call: `ready().await`, `call(..).await`; whether
/// it was admitted.
pub async fn tower_call(svc: &mut TowerBreaker, request: Request) -> bool {
    resilience_call(svc, request).await
}

/// One request through any service behind `tower-resilience`'s layer:
/// `ready().await`, `call(..).await`; whether it was admitted.
pub async fn resilience_call<S, Req, E>(svc: &mut S, request: Req) -> bool
where
    S: Service<Req, Error = tower_resilience_circuitbreaker::CircuitBreakerError<E>>,
{
    match svc.ready().await {
        Ok(svc) => !matches!(
            svc.call(request).await,
            Err(tower_resilience_circuitbreaker::CircuitBreakerError::OpenCircuit)
        ),
        Err(_) => false,
    }
}

/// `tower-resilience-circuitbreaker` 0.14 (a tokio `Mutex` around its state,
/// an atomic state byte for the closed fast path, a boxed future per call;
/// real clock). Driven by [`block_on`] on plain threads (every call here
/// completes on its first poll unless the state lock is contended; then a
/// current-thread runtime owned by the worker finishes it; in a batch of
/// calls, [`Worker::batch`], the worker enters that runtime's context once
/// and drives each call with [`finish`](crate::exec::finish)) and by `.await` in tokio tasks.
pub struct TowerResilience(TowerBreaker);

impl core::fmt::Debug for TowerResilience {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("TowerResilience")
            .field(&self.0.state_sync())
            .finish()
    }
}

/// A worker of [`TowerResilience`]: a clone of the service (tower services
/// are called through `&mut`), sharing the circuit, and on plain threads the
/// runtime that finishes a call that had to wait.
pub struct TowerWorker {
    svc: TowerBreaker,
    rt: Driver,
}

impl TowerWorker {
    fn drive(&mut self, request: Request) -> bool {
        self.rt.drive(tower_call(&mut self.svc, request))
    }
}

impl core::fmt::Debug for TowerWorker {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("TowerWorker")
            .field(&self.svc.state_sync())
            .finish()
    }
}

impl Subject for TowerResilience {
    type Worker = TowerWorker;
    const NAME: &'static str = "tower_resilience";
    const KIND: Kind = Kind::Peer;
    fn build(workload: &Workload) -> Option<Self> {
        let open = Duration::from_micros(OPEN_FOR_US);
        let svc = match workload.setup {
            Setup::Trips => tower_breaker(5, open),
            Setup::NeverTrips => tower_breaker(usize::MAX, open),
            Setup::Tripped => {
                let mut svc = tower_breaker(1, Duration::from_micros(1));
                block_on(&runtime(), tower_call(&mut svc, Request::Fail));
                svc
            }
        };
        Some(TowerResilience(svc))
    }
    fn worker(self: &Arc<Self>) -> TowerWorker {
        TowerWorker {
            svc: self.0.clone(),
            rt: Driver::default(),
        }
    }
}

impl Worker for TowerWorker {
    #[inline]
    fn call(&mut self, call: Call) -> bool {
        self.drive(Request::of(call))
    }
    fn call_async(&mut self, call: Call) -> impl Future<Output = bool> + Send {
        tower_call(&mut self.svc, Request::of(call))
    }
    fn batch<R>(&mut self, calls: impl FnOnce(&mut Self) -> R) -> R {
        Driver::batch(self, |w| &mut w.rt, calls)
    }
}
