//! The baselines: the floor (a bare atomic load pair) and the naive
//! reference (the same state machine as `tripword`'s behind a `Mutex`), and
//! the ticket-API calls `tripword`'s subjects share with the latter.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tripword::{Breaker, Outcome, W64, Word};

use crate::mutex_breaker::MutexBreaker;
use crate::subject::{Kind, Subject, Worker};
use crate::workload::{Call, Setup, Workload};

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
    /// Only where the breaker would trip as in production (`trips`): the
    /// floor of a breaker's fast path.
    fn build(workload: &Workload) -> Option<Self> {
        (workload.setup == Setup::Trips).then(AtomicPair::default)
    }
    fn worker(self: &Arc<Self>) -> AtomicPairWorker {
        AtomicPairWorker(Arc::clone(self))
    }
}

impl Worker for AtomicPairWorker {
    #[inline]
    fn call(&mut self, call: Call) -> bool {
        let admitted = self.0.load_pair();
        if call.slow_us > 0 {
            call.perform();
        }
        admitted
    }
}

/// Open time and probe timeout of the `trips` and `never_trips` setups, in
/// microseconds: 10 ms, which `W32` keeps in whole 1 µs ticks with a
/// horizon of 0.
pub const OPEN_FOR_US: u64 = 10_000;

/// A clock of whole microseconds since its first reading in this process
/// (`Instant`), for the `Mutex` baseline without `tripword-std`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Micros;

impl tripword::Clock for Micros {
    const TICK_PERIOD: Option<core::time::Duration> = Some(core::time::Duration::from_micros(1));
    #[inline]
    fn now(&self) -> u64 {
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_micros() as u64
    }
}

/// The same state machine behind a `std::sync::Mutex`.
#[derive(Debug)]
pub struct MutexBaseline {
    breaker: MutexBreaker<Micros>,
    never_trips: bool,
}

/// A worker of [`MutexBaseline`].
#[derive(Debug)]
pub struct MutexWorker(Arc<MutexBaseline>);

impl Subject for MutexBaseline {
    type Worker = MutexWorker;
    const NAME: &'static str = "mutex_breaker";
    const KIND: Kind = Kind::Baseline;
    fn build(workload: &Workload) -> Option<Self> {
        let breaker = match workload.setup {
            Setup::Trips => MutexBreaker::new(5, OPEN_FOR_US, OPEN_FOR_US, Micros),
            Setup::NeverTrips => {
                MutexBreaker::new(W64::LAYOUT.max_failures(), OPEN_FOR_US, OPEN_FOR_US, Micros)
            }
            Setup::Tripped => {
                let b = MutexBreaker::new(1, 1, OPEN_FOR_US, Micros);
                if let Ok(t) = b.acquire() {
                    b.release(t, Outcome::Failure);
                }
                b
            }
        };
        Some(MutexBaseline {
            breaker,
            never_trips: workload.setup == Setup::NeverTrips,
        })
    }
    fn worker(self: &Arc<Self>) -> MutexWorker {
        MutexWorker(Arc::clone(self))
    }
}

impl Worker for MutexWorker {
    #[inline]
    fn call(&mut self, call: Call) -> bool {
        let s = &self.0;
        planned(&s.breaker, call, s.never_trips)
    }
}

/// The ticket API `tripword`'s [`Breaker`] and the [`MutexBreaker`] baseline
/// share, so their calls are written once for both.
pub trait TicketApi {
    /// What an admission hands back.
    type Ticket;
    /// Asks to make a call.
    fn admit(&self) -> Option<Self::Ticket>;
    /// Reports how the call went.
    fn report(&self, ticket: Self::Ticket, outcome: Outcome);
    /// Closes the breaker (the `never_trips` reset).
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

/// One planned call: admitted, it runs the dependency ([`Call::perform`])
/// and reports what it did; with `never_trips`, a rejected call closes the
/// breaker again. `true` if it was admitted.
#[inline]
pub fn planned<B: TicketApi>(b: &B, call: Call, never_trips: bool) -> bool {
    match b.admit() {
        Some(t) => {
            let outcome = if call.perform() {
                Outcome::Success
            } else {
                Outcome::Failure
            };
            b.report(t, outcome);
            true
        }
        None => {
            if never_trips {
                b.reset();
            }
            false
        }
    }
}
