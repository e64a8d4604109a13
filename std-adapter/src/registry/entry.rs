//! [`Entry`], one key's breaker in a [`Registry`](crate::Registry).

use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};

use tripword::kit::{CircuitBreaker, Reply, TickVerdict};
use tripword::{Health, Outcome, Rejected, Release, Status};

use crate::settings::StdBreaker;

/// One key's breaker in a [`Registry`](crate::Registry): the key and the breaker `B`
/// ([`StdBreaker`] unless the registry holds another kind). It dereferences
/// to the breaker, so `entry.call(..)`, `entry.acquire()` and the breaker's
/// own methods (`entry.config()`, the config a `Breaker` was made from)
/// work on it, and it is a [`CircuitBreaker`] itself (each method the
/// breaker's), so the calls, futures and tower layer of this crate take an
/// `Arc<Entry<K, B>>` from [`get`](crate::Registry::get) as their handle.
pub struct Entry<K, B = StdBreaker> {
    key: K,
    breaker: B,
    // The sweep epoch of the last lookup.
    seen: AtomicU64,
}

impl<K, B> Entry<K, B> {
    /// `key`'s entry for `breaker`, last seen in sweep epoch `epoch`.
    pub(super) fn new(key: K, breaker: B, epoch: u64) -> Self {
        Entry {
            key,
            breaker,
            seen: AtomicU64::new(epoch),
        }
    }

    /// The key.
    pub fn key(&self) -> &K {
        &self.key
    }

    /// The breaker.
    pub fn breaker(&self) -> &B {
        &self.breaker
    }

    /// The sweep epoch of the last lookup.
    pub(super) fn seen(&self) -> u64 {
        self.seen.load(Ordering::Relaxed)
    }

    /// Marks the entry as looked up in sweep epoch `epoch`.
    #[inline(always)]
    pub(super) fn touch(&self, epoch: u64) {
        // A store only the first time in an epoch: hits on a hot key by
        // many threads read this line, they do not keep writing it.
        if self.seen.load(Ordering::Relaxed) != epoch {
            self.seen.store(epoch, Ordering::Relaxed);
        }
    }
}

impl<K, B> Deref for Entry<K, B> {
    type Target = B;
    fn deref(&self) -> &B {
        &self.breaker
    }
}

/// An entry is its key's breaker: `call`, `call_async`, the tower layers
/// (through an `Arc<Entry>` from [`Registry::get`](crate::Registry::get)) work on it
/// directly. Every method is the breaker's, the async path included.
impl<K, B: CircuitBreaker> CircuitBreaker for Entry<K, B> {
    type Ticket = B::Ticket;
    type Clock = B::Clock;
    type Acquiring = B::Acquiring;
    type Releasing = B::Releasing;

    #[inline(always)]
    fn acquire(&self) -> Result<B::Ticket, Rejected> {
        self.breaker.acquire()
    }
    #[inline(always)]
    fn release(&self, ticket: B::Ticket, outcome: Outcome) -> Release {
        self.breaker.release(ticket, outcome)
    }
    #[inline(always)]
    fn release_failure_for(&self, ticket: B::Ticket, open_for: u64) -> Release {
        self.breaker.release_failure_for(ticket, open_for)
    }
    #[inline(always)]
    fn status(&self) -> Status {
        CircuitBreaker::status(&self.breaker)
    }
    #[inline(always)]
    fn health(&self) -> Health {
        self.breaker.health()
    }
    #[inline(always)]
    fn is_open(&self) -> bool {
        self.breaker.is_open()
    }
    #[inline(always)]
    fn clock(&self) -> &B::Clock {
        CircuitBreaker::clock(&self.breaker)
    }
    #[inline(always)]
    fn abandon_outcome(&self) -> Outcome {
        self.breaker.abandon_outcome()
    }
    #[inline(always)]
    fn name(&self) -> Option<&'static str> {
        self.breaker.name()
    }
    #[inline(always)]
    fn release_verdict(&self, ticket: B::Ticket, verdict: TickVerdict) -> Release {
        self.breaker.release_verdict(ticket, verdict)
    }
    #[inline(always)]
    fn acquire_async(&self) -> Reply<Result<B::Ticket, Rejected>, B::Acquiring> {
        self.breaker.acquire_async()
    }
    #[inline(always)]
    fn release_async(
        &self,
        ticket: B::Ticket,
        verdict: TickVerdict,
    ) -> Reply<Release, B::Releasing> {
        self.breaker.release_async(ticket, verdict)
    }
    #[inline(always)]
    fn release_detached(&self, ticket: B::Ticket, verdict: TickVerdict) {
        self.breaker.release_detached(ticket, verdict)
    }
}

impl<K: core::fmt::Debug, B: core::fmt::Debug> core::fmt::Debug for Entry<K, B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Entry")
            .field("key", &self.key)
            .field("breaker", &self.breaker)
            .finish()
    }
}
