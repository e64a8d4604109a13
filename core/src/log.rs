//! An interrupt-safe log of transitions (feature `heapless`): an
//! [`Observer`] that pushes each transition, with its breaker's key, into a
//! fixed-size lock-free queue (`heapless::mpmc`), so that a breaker tripped
//! in an interrupt handler is logged by the main loop, which drains the
//! queue. No heap, no lock, no critical section of its own.
//!
//! ```
//! use tripword::clock::ManualClock;
//! use tripword::log::{Logged, LogTo, TransitionLog};
//! use tripword::table::{BreakerTable, TableBreaker};
//! use tripword::{Breaker, Config, Status, ValidConfig, W32};
//!
//! static CLOCK: ManualClock = ManualClock::new(0);
//! static CONFIG: ValidConfig<W32> = ValidConfig::new(Config::new().failure_threshold(1));
//! static LOG: TransitionLog<&str, 8> = TransitionLog::new();
//! static TABLE: BreakerTable<&str, TableBreaker<&ManualClock, W32, LogTo<&str, 8>>, 2> =
//!     tripword::breaker_table!(["uart", "radio"], |name| {
//!         Breaker::from_parts(&CONFIG, &CLOCK, LOG.observer(name))
//!     });
//!
//! // In an interrupt handler: the radio times out, its breaker trips.
//! let radio = TABLE.at(1);
//! if let Ok(t) = radio.acquire() { radio.release(t, tripword::Outcome::Failure); }
//!
//! // In the main loop: log what happened.
//! let Logged { key, transition } = LOG.pop().unwrap();
//! assert_eq!((key, transition.from, transition.to), ("radio", Status::Closed, Status::Open));
//! assert!(LOG.pop().is_none());
//! assert_eq!(LOG.dropped(), 0);
//! ```
//!
//! On targets without compare-and-swap (Cortex-M0, `riscv32imc`) the queue
//! uses `portable-atomic`, like the breaker: the firmware binary chooses its
//! backend (`critical-section` or `unsafe-assume-single-core`); this library
//! does not.

use crate::observer::Observer;
use crate::transition::Transition;
use portable_atomic::{AtomicU32, Ordering};

/// A transition and the key of the breaker that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Logged<K> {
    /// The breaker's key.
    pub key: K,
    /// What changed.
    pub transition: Transition,
}

/// A fixed-size queue of up to `N` transitions (`N` a power of two, from 2
/// to 128), filled by [`LogTo`] observers from any context, drained by
/// [`pop`](Self::pop). When it is full, or the slot a push reaches is still
/// being filled by a push it preempted, the transition is counted in
/// [`dropped`](Self::dropped) instead: a push never waits, never blocks the
/// breaker's caller.
pub struct TransitionLog<K, const N: usize> {
    queue: heapless::mpmc::Queue<Logged<K>, N>,
    dropped: AtomicU32,
}

impl<K, const N: usize> TransitionLog<K, N> {
    /// An empty log. `const`: a log can be a `static`.
    // heapless deprecates `mpmc::Queue::new` because the queue is not
    // strictly lock-free: an enqueue preempted between claiming its slot and
    // filling it holds up that slot, and an operation that reaches it
    // meanwhile fails instead of waiting. Such a failure is a transition
    // counted in `dropped`, which is what heapless says makes the queue
    // usable (`docs/design-kit.md`, "Firmware: the table and the log").
    #[expect(
        deprecated,
        reason = "a failed enqueue is counted as dropped, never waited on"
    )]
    pub const fn new() -> Self {
        TransitionLog {
            queue: heapless::mpmc::Queue::new(),
            dropped: AtomicU32::new(0),
        }
    }

    /// An observer for the breaker under `key`, writing to this log.
    pub const fn observer(&self, key: K) -> LogTo<'_, K, N> {
        LogTo { key, log: self }
    }

    /// The oldest transition not yet taken.
    pub fn pop(&self) -> Option<Logged<K>> {
        self.queue.dequeue()
    }

    /// How many transitions found the queue full and were lost (wraps at
    /// `u32::MAX`).
    pub fn dropped(&self) -> u32 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn push(&self, logged: Logged<K>) {
        if self.queue.enqueue(logged).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl<K, const N: usize> Default for TransitionLog<K, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K, const N: usize> core::fmt::Debug for TransitionLog<K, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TransitionLog")
            .field("capacity", &N)
            .field("dropped", &self.dropped())
            .finish_non_exhaustive()
    }
}

/// The [`Observer`] of one breaker in a [`TransitionLog`]: pushes each of
/// its transitions with its key. Only transitions: calls are not logged.
#[derive(Debug)]
pub struct LogTo<'a, K, const N: usize> {
    key: K,
    log: &'a TransitionLog<K, N>,
}

impl<K, const N: usize> LogTo<'_, K, N> {
    /// The breaker's key.
    pub fn key(&self) -> &K {
        &self.key
    }
}

impl<K: Copy, const N: usize> Observer for LogTo<'_, K, N> {
    fn on_transition(&self, transition: Transition) {
        self.log.push(Logged {
            key: self.key,
            transition,
        });
    }
}
