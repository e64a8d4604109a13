//! Everything measured, behind one trait.
//!
//! A [`Subject`] is one implementation (a baseline, `tripword`, or a peer
//! crate) built for one [`Scenario`]; each thread or task that calls it owns
//! a [`Worker`]. The scenarios are defined once, here, so every
//! implementation is asked to do the same thing:
//!
//! | scenario | the dependency | configuration | one call is |
//! |---|---|---|---|
//! | [`Scenario::Closed`] | healthy | trips after 5 consecutive failures, open 10 ms | admit, report success |
//! | [`Scenario::FailureStorm`] | always fails | a threshold the run does not reach (see below) | admit, report failure: every call writes the failure count |
//! | [`Scenario::HalfOpenStorm`] | always fails | tripped at start; open for the shortest time the crate allows (1 µs) | admit (the probe) and report failure, or be rejected |
//!
//! In the failure storm `tripword` and the `Mutex` baseline trip after
//! 65 535 failures (`W64`'s largest threshold; 4 095 for `W32`), and the
//! caller that is rejected closes the breaker again (`force_close`): the trip
//! and the reset are a few calls in tens of thousands. `failsafe` gets
//! `consecutive_failures(u32::MAX)`, `recloser` a failure-rate threshold of
//! 2.0 (never reached), `tower-resilience` `consecutive_failures(usize::MAX)`.
//!
//! The peers differ from `tripword` in what half-open means: `failsafe` and
//! `recloser` admit every caller while half-open (no single probe), and
//! `tower-resilience` admits `permitted_calls_in_half_open` (set to 1). The
//! half-open storm therefore measures each crate doing what it does when a
//! dependency stays down and callers keep arriving.
//!
//! `tripword-std`'s services adapter is measured on the same `tripword_w64`
//! breaker, through its three entry points: [`TripwordCall`]
//! (`BreakerExt::call`, a closure), [`TripwordCallAsync`]
//! (`BreakerExt::call_async` on a future that is ready at once) and
//! [`TripwordTower`] (`tripword_std::tower::BreakerLayer` around
//! [`Dependency`], the inner service `tower-resilience` wraps too). In tokio
//! tasks their futures are `.await`ed; on plain threads `call_async` is
//! polled once with a no-op waker ([`now`]) and the tower layer is driven by
//! [`block_on`], like `tower-resilience`.

use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use failsafe::CircuitBreaker as _;
use tower::{Layer, Service, ServiceExt};
use tripword::{Breaker, Config, Outcome, W32, W64, Word};

use crate::exec::{block_on, finish, now, runtime};
use crate::mutex_breaker::MutexBreaker;
use tripword_std::classify::OkOrFailure;
use tripword_std::tower::{BreakerLayer, BreakerService};
use tripword_std::{BreakerExt, CallError, MonotonicClock};

/// What every caller does to the shared breaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scenario {
    /// Healthy dependency: admit, report success.
    Closed,
    /// The dependency always fails and the breaker stays closed: every
    /// release writes.
    FailureStorm,
    /// The dependency stays down; the breaker is half-open every microsecond
    /// and every caller races to be the probe.
    HalfOpenStorm,
}

impl Scenario {
    /// All scenarios, in report order.
    pub const ALL: [Scenario; 3] = [
        Scenario::Closed,
        Scenario::FailureStorm,
        Scenario::HalfOpenStorm,
    ];

    /// The name used in tables, CSV and benchmark ids.
    pub const fn name(self) -> &'static str {
        match self {
            Scenario::Closed => "closed",
            Scenario::FailureStorm => "failure_storm",
            Scenario::HalfOpenStorm => "half_open_storm",
        }
    }
}

/// What an implementation is in the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A floor or a naive reference, not a breaker people would ship.
    Baseline,
    /// The crate under test.
    Tripword,
    /// A circuit breaker from crates.io.
    Peer,
}

/// One implementation, built for one scenario, shared by all workers.
pub trait Subject: Send + Sync + Sized + 'static {
    /// The per-thread (or per-task) handle.
    type Worker: Worker;
    /// The name in tables and benchmark ids.
    const NAME: &'static str;
    /// Baseline, tripword or peer.
    const KIND: Kind;
    /// The implementation set up for `scenario`, or `None` where the
    /// scenario means nothing for it (the bare atomic load pair is not a
    /// breaker).
    fn build(scenario: Scenario) -> Option<Self>;
    /// A handle for one thread or task.
    fn worker(self: &Arc<Self>) -> Self::Worker;
}

/// One caller. Each method makes one call of its scenario and says whether
/// it was admitted; only the method of the scenario the subject was built
/// for is called.
pub trait Worker: Send + 'static {
    /// One [`Scenario::Closed`] call.
    fn closed(&mut self) -> bool;
    /// One [`Scenario::FailureStorm`] call.
    fn failure_storm(&mut self) -> bool;
    /// One [`Scenario::HalfOpenStorm`] call.
    fn half_open_storm(&mut self) -> bool;

    /// One call of `scenario`.
    #[inline]
    fn call(&mut self, scenario: Scenario) -> bool {
        match scenario {
            Scenario::Closed => self.closed(),
            Scenario::FailureStorm => self.failure_storm(),
            Scenario::HalfOpenStorm => self.half_open_storm(),
        }
    }

    /// One call of `scenario` from async code. Synchronous implementations
    /// complete at once; async peers `.await` their own future.
    fn call_async(&mut self, scenario: Scenario) -> impl Future<Output = bool> + Send {
        std::future::ready(self.call(scenario))
    }

    /// Runs `calls`, a batch of calls of this worker on this thread, in the
    /// context those calls need. By default nothing; the tower services,
    /// driven by [`block_on`] on plain threads, enter their runtime's
    /// context once per batch instead of once per call.
    #[inline]
    fn batch<R>(&mut self, calls: impl FnOnce(&mut Self) -> R) -> R
    where
        Self: Sized,
    {
        calls(self)
    }
}

/// Runs `n` calls of `scenario` and returns how many were admitted. The
/// scenario is matched once, outside the loop, so the loop is the same for
/// every implementation.
#[inline]
pub fn run_calls<W: Worker>(worker: &mut W, scenario: Scenario, n: u64) -> u64 {
    worker.batch(|worker| run_batch(worker, scenario, n))
}

#[inline]
fn run_batch<W: Worker>(worker: &mut W, scenario: Scenario, n: u64) -> u64 {
    let mut admitted = 0u64;
    match scenario {
        Scenario::Closed => {
            for _ in 0..n {
                admitted += u64::from(worker.closed());
            }
        }
        Scenario::FailureStorm => {
            for _ in 0..n {
                admitted += u64::from(worker.failure_storm());
            }
        }
        Scenario::HalfOpenStorm => {
            for _ in 0..n {
                admitted += u64::from(worker.half_open_storm());
            }
        }
    }
    admitted
}

// ---------------------------------------------------------------- baselines

/// The floor: two `Acquire` loads of a shared word, each `black_box`ed. A
/// closed `tripword` call (admission and release) loads its word twice.
#[derive(Debug, Default)]
pub struct AtomicPair {
    word: AtomicU64,
}

impl AtomicPair {
    /// Two loads of the word.
    #[inline]
    pub fn load_pair(&self) -> bool {
        black_box(self.word.load(Ordering::Acquire));
        black_box(self.word.load(Ordering::Acquire));
        true
    }
}

/// A worker of [`AtomicPair`].
#[derive(Debug)]
pub struct AtomicPairWorker(Arc<AtomicPair>);

impl Subject for AtomicPair {
    type Worker = AtomicPairWorker;
    const NAME: &'static str = "atomic_load_pair";
    const KIND: Kind = Kind::Baseline;
    fn build(scenario: Scenario) -> Option<Self> {
        (scenario == Scenario::Closed).then(AtomicPair::default)
    }
    fn worker(self: &Arc<Self>) -> AtomicPairWorker {
        AtomicPairWorker(Arc::clone(self))
    }
}

impl Worker for AtomicPairWorker {
    #[inline]
    fn closed(&mut self) -> bool {
        self.0.load_pair()
    }
    fn failure_storm(&mut self) -> bool {
        false
    }
    fn half_open_storm(&mut self) -> bool {
        false
    }
}

/// Open time and probe timeout of the closed and failure-storm scenarios,
/// in microseconds: 10 ms, which `W32` keeps in whole 1 µs ticks with a
/// horizon of 0 (see [`Tripword`]).
pub const OPEN_FOR_US: u64 = 10_000;

/// The same state machine behind a `std::sync::Mutex`.
#[derive(Debug)]
pub struct MutexBaseline(MutexBreaker<MonotonicClock>);

/// A worker of [`MutexBaseline`].
#[derive(Debug)]
pub struct MutexWorker(Arc<MutexBaseline>);

impl Subject for MutexBaseline {
    type Worker = MutexWorker;
    const NAME: &'static str = "mutex_breaker";
    const KIND: Kind = Kind::Baseline;
    fn build(scenario: Scenario) -> Option<Self> {
        let b = match scenario {
            Scenario::Closed => MutexBreaker::new(5, OPEN_FOR_US, OPEN_FOR_US, MonotonicClock),
            Scenario::FailureStorm => MutexBreaker::new(
                W64::LAYOUT.max_failures(),
                OPEN_FOR_US,
                OPEN_FOR_US,
                MonotonicClock,
            ),
            Scenario::HalfOpenStorm => {
                let b = MutexBreaker::new(1, 1, OPEN_FOR_US, MonotonicClock);
                if let Ok(t) = b.acquire() {
                    b.release(t, Outcome::Failure);
                }
                b
            }
        };
        Some(MutexBaseline(b))
    }
    fn worker(self: &Arc<Self>) -> MutexWorker {
        MutexWorker(Arc::clone(self))
    }
}

/// The ticket API `tripword`'s [`Breaker`] and the [`MutexBreaker`] baseline
/// share, so the scenarios' calls are written once for both.
pub trait TicketApi {
    /// What an admission hands back.
    type Ticket;
    /// Asks to make a call.
    fn admit(&self) -> Option<Self::Ticket>;
    /// Reports how the call went.
    fn report(&self, ticket: Self::Ticket, outcome: Outcome);
    /// Closes the breaker (the failure storm's reset).
    fn reset(&self);
}

impl<C: tripword::Clock, W: Word, O: tripword::Observer, P: tripword::ConfigSource<W>> TicketApi
    for Breaker<C, W, O, P>
{
    type Ticket = tripword::Ticket;
    #[inline]
    fn admit(&self) -> Option<tripword::Ticket> {
        self.acquire().ok()
    }
    #[inline]
    fn report(&self, ticket: tripword::Ticket, outcome: Outcome) {
        self.release(ticket, outcome);
    }
    #[inline]
    fn reset(&self) {
        self.force_close();
    }
}

impl<C: tripword::Clock> TicketApi for MutexBreaker<C> {
    type Ticket = crate::mutex_breaker::MutexTicket;
    #[inline]
    fn admit(&self) -> Option<Self::Ticket> {
        self.acquire().ok()
    }
    #[inline]
    fn report(&self, ticket: Self::Ticket, outcome: Outcome) {
        self.release(ticket, outcome);
    }
    #[inline]
    fn reset(&self) {
        self.force_close();
    }
}

/// One call: admitted, it reports `outcome`; `true` if it was admitted.
#[inline]
pub fn call<B: TicketApi>(b: &B, outcome: Outcome) -> bool {
    match b.admit() {
        Some(t) => {
            b.report(t, outcome);
            true
        }
        None => false,
    }
}

/// One failure-storm call: a failure, or, when rejected (the storm tripped
/// the breaker), a reset.
#[inline]
pub fn storm_call<B: TicketApi>(b: &B) -> bool {
    let admitted = call(b, Outcome::Failure);
    if !admitted {
        b.reset();
    }
    admitted
}

impl Worker for MutexWorker {
    #[inline]
    fn closed(&mut self) -> bool {
        call(&self.0.0, Outcome::Success)
    }
    #[inline]
    fn failure_storm(&mut self) -> bool {
        storm_call(&self.0.0)
    }
    #[inline]
    fn half_open_storm(&mut self) -> bool {
        call(&self.0.0, Outcome::Failure)
    }
}

// ---------------------------------------------------------------- tripword

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
/// scenarios in whole microseconds (`horizon(0)`: the `W32` default
/// horizon, an hour of 1 kHz ticks, would keep 128 µs units and stretch the
/// half-open storm's 1 µs open time), as they did before the word kept time
/// in units; only the half-open storm reads the time.
pub struct Tripword<W: Width> {
    breaker: Breaker<MonotonicClock, W>,
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
    fn build(scenario: Scenario) -> Option<Self> {
        let config = match scenario {
            Scenario::Closed => Config::new()
                .failure_threshold(5)
                .open_for(OPEN_FOR_US)
                .probe_timeout(OPEN_FOR_US),
            Scenario::FailureStorm => Config::new()
                .failure_threshold(W::LAYOUT.max_failures())
                .open_for(OPEN_FOR_US)
                .probe_timeout(OPEN_FOR_US),
            Scenario::HalfOpenStorm => Config::new()
                .failure_threshold(1)
                .open_for(1)
                .probe_timeout(OPEN_FOR_US),
        };
        let valid = config.horizon(0).check::<W>().ok()?;
        let breaker = Breaker::<MonotonicClock, W>::from_parts(valid, MonotonicClock, ());
        if scenario == Scenario::HalfOpenStorm
            && let Ok(t) = breaker.acquire()
        {
            breaker.release(t, Outcome::Failure);
        }
        Some(Tripword { breaker })
    }
    fn worker(self: &Arc<Self>) -> TripwordWorker<W> {
        TripwordWorker(Arc::clone(self))
    }
}

impl<W: Width> Worker for TripwordWorker<W> {
    #[inline]
    fn closed(&mut self) -> bool {
        call(&self.0.breaker, Outcome::Success)
    }
    #[inline]
    fn failure_storm(&mut self) -> bool {
        storm_call(&self.0.breaker)
    }
    #[inline]
    fn half_open_storm(&mut self) -> bool {
        call(&self.0.breaker, Outcome::Failure)
    }
}

/// A control for scaling, not a breaker anyone would share: every worker
/// gets a `W64` breaker of its own (on its own cache lines), configured as in
/// [`Scenario::Closed`], and makes exactly the calls [`Tripword`] makes.
/// Nothing is shared, so how its throughput grows from 1 to N threads is how
/// far this machine lets this code scale. Shared `tripword` (whose closed
/// path stores nothing) should scale as well as this control.
#[derive(Debug)]
pub struct PrivateTripword;

/// A breaker on cache lines of its own (128 B: two lines, against the
/// adjacent-line prefetcher).
#[repr(align(128))]
#[derive(Debug)]
pub struct Isolated<T>(pub T);

/// A worker of [`PrivateTripword`], with its own breaker.
#[derive(Debug)]
pub struct PrivateTripwordWorker(Box<Isolated<Breaker<MonotonicClock, W64>>>);

impl Subject for PrivateTripword {
    type Worker = PrivateTripwordWorker;
    const NAME: &'static str = "tripword_w64_private";
    const KIND: Kind = Kind::Baseline;
    fn build(scenario: Scenario) -> Option<Self> {
        (scenario == Scenario::Closed).then_some(PrivateTripword)
    }
    fn worker(self: &Arc<Self>) -> PrivateTripwordWorker {
        let breaker = Tripword::<W64>::build(Scenario::Closed)
            .expect("the closed scenario's config is in range")
            .breaker;
        PrivateTripwordWorker(Box::new(Isolated(breaker)))
    }
}

impl Worker for PrivateTripwordWorker {
    #[inline]
    fn closed(&mut self) -> bool {
        call(&self.0.0, Outcome::Success)
    }
    fn failure_storm(&mut self) -> bool {
        false
    }
    fn half_open_storm(&mut self) -> bool {
        false
    }
}

// ---------------------------------------------------------------- failsafe

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
pub fn failsafe_call(b: &FailsafeBreaker, ok: bool) -> bool {
    !matches!(
        b.call(|| if black_box(ok) { Ok(()) } else { Err(()) }),
        Err(failsafe::Error::Rejected)
    )
}

impl Subject for Failsafe {
    type Worker = FailsafeWorker;
    const NAME: &'static str = "failsafe";
    const KIND: Kind = Kind::Peer;
    fn build(scenario: Scenario) -> Option<Self> {
        let open = Duration::from_micros(OPEN_FOR_US);
        let b = match scenario {
            Scenario::Closed => failsafe_breaker(5, open),
            Scenario::FailureStorm => failsafe_breaker(u32::MAX, open),
            Scenario::HalfOpenStorm => {
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
    fn closed(&mut self) -> bool {
        failsafe_call(&self.0, true)
    }
    #[inline]
    fn failure_storm(&mut self) -> bool {
        failsafe_call(&self.0, false)
    }
    #[inline]
    fn half_open_storm(&mut self) -> bool {
        failsafe_call(&self.0, false)
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
pub fn recloser_call(r: &recloser::Recloser, ok: bool) -> bool {
    !matches!(
        r.call(|| if black_box(ok) { Ok(()) } else { Err(()) }),
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
    fn build(scenario: Scenario) -> Option<Self> {
        let open = Duration::from_micros(OPEN_FOR_US);
        let r = match scenario {
            Scenario::Closed => recloser_breaker(0.5, 100, 10, open),
            Scenario::FailureStorm => recloser_breaker(2.0, 100, 10, open),
            Scenario::HalfOpenStorm => {
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
    fn closed(&mut self) -> bool {
        recloser_call(&self.0.0, true)
    }
    #[inline]
    fn failure_storm(&mut self) -> bool {
        recloser_call(&self.0.0, false)
    }
    #[inline]
    fn half_open_storm(&mut self) -> bool {
        recloser_call(&self.0.0, false)
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

impl layered::Service<Call> for SeatbeltDependency {
    type Out = Result<(), SeatbeltError>;
    async fn execute(&self, call: Call) -> Self::Out {
        match call {
            Call::Succeed => Ok(()),
            Call::Fail => Err(SeatbeltError::Down),
            Call::Hang => std::future::pending().await,
        }
    }
}

/// The `seatbelt` service type used here.
pub type SeatbeltBreaker =
    seatbelt::breaker::Breaker<Call, Result<(), SeatbeltError>, SeatbeltDependency>;

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
pub async fn seatbelt_call(b: &SeatbeltBreaker, call: Call) -> bool {
    use layered::Service as _;
    !matches!(b.execute(call).await, Err(SeatbeltError::Open))
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
    fn build(scenario: Scenario) -> Option<Self> {
        let open = Duration::from_micros(OPEN_FOR_US);
        let (breaker, driver) = match scenario {
            // Half the calls failing over at least 100, as for `recloser`.
            Scenario::Closed => seatbelt_breaker(0.5, 100, open),
            // A minimum throughput the window never reaches: never opens.
            Scenario::FailureStorm => seatbelt_breaker(0.99, u32::MAX, open),
            Scenario::HalfOpenStorm => {
                let (b, d) = seatbelt_breaker(0.5, 1, Duration::from_micros(1));
                now(seatbelt_call(&b, Call::Fail));
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
    fn closed(&mut self) -> bool {
        now(seatbelt_call(&self.0.breaker, Call::Succeed))
    }
    #[inline]
    fn failure_storm(&mut self) -> bool {
        now(seatbelt_call(&self.0.breaker, Call::Fail))
    }
    #[inline]
    fn half_open_storm(&mut self) -> bool {
        now(seatbelt_call(&self.0.breaker, Call::Fail))
    }
    fn call_async(&mut self, scenario: Scenario) -> impl Future<Output = bool> + Send {
        seatbelt_call(&self.0.breaker, call_of(scenario))
    }
}

// ---------------------------------------------------------------- tower-resilience

/// What the protected dependency is asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// Succeed at once.
    Succeed,
    /// Fail at once.
    Fail,
    /// Never complete (a probe that hangs).
    Hang,
}

/// A tower `Service` that is always ready and answers at once (or never, for
/// [`Call::Hang`]), without allocating: the inner service of the
/// `tower-resilience` measurements.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dependency;

/// The future of [`Dependency`].
#[derive(Debug)]
pub struct DependencyFuture(Call);

impl Future for DependencyFuture {
    type Output = Result<(), ()>;
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.0 {
            Call::Succeed => Poll::Ready(Ok(())),
            Call::Fail => Poll::Ready(Err(())),
            Call::Hang => Poll::Pending,
        }
    }
}

impl Service<Call> for Dependency {
    type Response = ();
    type Error = ();
    type Future = DependencyFuture;
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), ()>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, call: Call) -> DependencyFuture {
        DependencyFuture(call)
    }
}

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
pub async fn tower_call(svc: &mut TowerBreaker, call: Call) -> bool {
    resilience_call(svc, call).await
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
/// and drives each call with [`finish`]) and by `.await` in tokio tasks.
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

impl TowerWorker {
    fn drive(&mut self, call: Call) -> bool {
        self.rt.drive(tower_call(&mut self.svc, call))
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
    fn build(scenario: Scenario) -> Option<Self> {
        let open = Duration::from_micros(OPEN_FOR_US);
        let svc = match scenario {
            Scenario::Closed => tower_breaker(5, open),
            Scenario::FailureStorm => tower_breaker(usize::MAX, open),
            Scenario::HalfOpenStorm => {
                let mut svc = tower_breaker(1, Duration::from_micros(1));
                block_on(&runtime(), tower_call(&mut svc, Call::Fail));
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
    fn closed(&mut self) -> bool {
        self.drive(Call::Succeed)
    }
    #[inline]
    fn failure_storm(&mut self) -> bool {
        self.drive(Call::Fail)
    }
    #[inline]
    fn half_open_storm(&mut self) -> bool {
        self.drive(Call::Fail)
    }
    fn call_async(&mut self, scenario: Scenario) -> impl Future<Output = bool> + Send {
        let call = match scenario {
            Scenario::Closed => Call::Succeed,
            Scenario::FailureStorm | Scenario::HalfOpenStorm => Call::Fail,
        };
        tower_call(&mut self.svc, call)
    }
    fn batch<R>(&mut self, calls: impl FnOnce(&mut Self) -> R) -> R {
        Driver::batch(self, |w| &mut w.rt, calls)
    }
}

// ---------------------------------------------------------------- tripword-std services

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

/// The breaker of [`Tripword`]`<W64>` for `scenario`, unwrapped.
pub fn w64_breaker(scenario: Scenario) -> Option<Breaker<MonotonicClock, W64>> {
    Tripword::<W64>::build(scenario).map(Tripword::into_breaker)
}

/// The scenario's outcome: success when closed, failure in both storms.
fn ok(scenario: Scenario) -> bool {
    scenario == Scenario::Closed
}

/// The scenario's request to [`Dependency`].
fn call_of(scenario: Scenario) -> Call {
    if ok(scenario) {
        Call::Succeed
    } else {
        Call::Fail
    }
}

/// After a call of `scenario`: a failure-storm call that was rejected closes
/// the breaker again (see [`storm_call`]).
#[inline]
fn after<C: tripword::Clock>(b: &Breaker<C, W64>, scenario: Scenario, admitted: bool) -> bool {
    if !admitted && scenario == Scenario::FailureStorm {
        b.force_close();
    }
    admitted
}

/// `tripword-std`'s closure call, `BreakerExt::call`, on the
/// `tripword_w64` breaker of the scenario (same configuration, same clock).
/// In tokio tasks the synchronous call is made in the task, as for
/// [`Tripword`].
#[derive(Debug)]
pub struct TripwordCall(Breaker<MonotonicClock, W64>);

/// A worker of [`TripwordCall`].
#[derive(Debug)]
pub struct TripwordCallWorker(Arc<TripwordCall>);

impl Subject for TripwordCall {
    type Worker = TripwordCallWorker;
    const NAME: &'static str = "tripword_w64_call";
    const KIND: Kind = Kind::Tripword;
    fn build(scenario: Scenario) -> Option<Self> {
        w64_breaker(scenario).map(TripwordCall)
    }
    fn worker(self: &Arc<Self>) -> TripwordCallWorker {
        TripwordCallWorker(Arc::clone(self))
    }
}

impl Worker for TripwordCallWorker {
    #[inline]
    fn closed(&mut self) -> bool {
        std_call(&self.0.0, true)
    }
    #[inline]
    fn failure_storm(&mut self) -> bool {
        let b = &self.0.0;
        after(b, Scenario::FailureStorm, std_call(b, false))
    }
    #[inline]
    fn half_open_storm(&mut self) -> bool {
        std_call(&self.0.0, false)
    }
}

/// `tripword-std`'s `BreakerExt::call_async` on a future that is ready at
/// once (`std::future::ready`), on the `tripword_w64` breaker of the
/// scenario: `.await`ed in tokio tasks, polled once with a no-op waker on
/// plain threads. Its distance to [`TripwordCall`] is what the future costs.
#[derive(Debug)]
pub struct TripwordCallAsync(Breaker<MonotonicClock, W64>);

/// A worker of [`TripwordCallAsync`].
#[derive(Debug)]
pub struct TripwordCallAsyncWorker(Arc<TripwordCallAsync>);

impl Subject for TripwordCallAsync {
    type Worker = TripwordCallAsyncWorker;
    const NAME: &'static str = "tripword_w64_call_async";
    const KIND: Kind = Kind::Tripword;
    fn build(scenario: Scenario) -> Option<Self> {
        w64_breaker(scenario).map(TripwordCallAsync)
    }
    fn worker(self: &Arc<Self>) -> TripwordCallAsyncWorker {
        TripwordCallAsyncWorker(Arc::clone(self))
    }
}

impl Worker for TripwordCallAsyncWorker {
    #[inline]
    fn closed(&mut self) -> bool {
        std_call_async(&self.0.0, true)
    }
    #[inline]
    fn failure_storm(&mut self) -> bool {
        let b = &self.0.0;
        after(b, Scenario::FailureStorm, std_call_async(b, false))
    }
    #[inline]
    fn half_open_storm(&mut self) -> bool {
        std_call_async(&self.0.0, false)
    }
    fn call_async(&mut self, scenario: Scenario) -> impl Future<Output = bool> + Send {
        let b = &self.0.0;
        async move {
            let r = b.call_async(std::future::ready(result(ok(scenario)))).await;
            after(b, scenario, admitted(&r))
        }
    }
}

/// The tower service of [`TripwordTower`]: `S` behind the `tripword_w64`
/// breaker, shared through an `Arc`, `Ok` a success and `Err` a failure.
pub type TripwordService<S = Dependency> =
    BreakerService<S, Arc<Breaker<MonotonicClock, W64>>, OkOrFailure>;

/// `tripword_std::tower`'s layer on `breaker` (an `Arc` handle: every clone
/// of the service shares the one word), classifying `Ok` as a success and
/// `Err` as a failure.
pub fn tripword_layer(
    breaker: Breaker<MonotonicClock, W64>,
) -> BreakerLayer<Arc<Breaker<MonotonicClock, W64>>, OkOrFailure> {
    BreakerLayer::new(Arc::new(breaker)).classify(OkOrFailure)
}

/// `tripword_std::tower::BreakerLayer` around [`Dependency`] (the inner
/// service of [`TowerResilience`]), on the `tripword_w64` breaker of the
/// scenario; one call is `ready().await` + `call(..).await`, as for
/// `tower-resilience`, and is driven the same way (`.await` in tokio tasks,
/// [`block_on`] on plain threads).
#[derive(Debug)]
pub struct TripwordTower(TripwordService);

/// A worker of [`TripwordTower`]: a clone of the service, sharing the
/// breaker, and on plain threads the runtime that drives its calls (as for
/// [`TowerWorker`]).
#[derive(Debug)]
pub struct TripwordTowerWorker {
    svc: TripwordService,
    rt: Driver,
}

impl TripwordTowerWorker {
    fn drive(&mut self, scenario: Scenario) -> bool {
        let admitted = self.rt.drive(layer_call(&mut self.svc, call_of(scenario)));
        after(self.svc.breaker(), scenario, admitted)
    }
}

impl Subject for TripwordTower {
    type Worker = TripwordTowerWorker;
    const NAME: &'static str = "tripword_w64_tower";
    const KIND: Kind = Kind::Tripword;
    fn build(scenario: Scenario) -> Option<Self> {
        let layer = tripword_layer(w64_breaker(scenario)?);
        Some(TripwordTower(layer.layer(Dependency)))
    }
    fn worker(self: &Arc<Self>) -> TripwordTowerWorker {
        TripwordTowerWorker {
            svc: self.0.clone(),
            rt: Driver::default(),
        }
    }
}

impl Worker for TripwordTowerWorker {
    #[inline]
    fn closed(&mut self) -> bool {
        self.drive(Scenario::Closed)
    }
    #[inline]
    fn failure_storm(&mut self) -> bool {
        self.drive(Scenario::FailureStorm)
    }
    #[inline]
    fn half_open_storm(&mut self) -> bool {
        self.drive(Scenario::HalfOpenStorm)
    }
    async fn call_async(&mut self, scenario: Scenario) -> bool {
        let admitted = layer_call(&mut self.svc, call_of(scenario)).await;
        after(self.svc.breaker(), scenario, admitted)
    }
    fn batch<R>(&mut self, calls: impl FnOnce(&mut Self) -> R) -> R {
        Driver::batch(self, |w| &mut w.rt, calls)
    }
}
