//! What a fleet breaker hands out and answers: its [`Ticket`], what a
//! [`Release`] did, and the counters of its work ([`Stats`]).

use crate::observer::Scope;
use core::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a release did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Release {
    /// The outcome counted (in the shared word, or in the local breaker for
    /// a ticket the local breaker issued).
    Recorded,
    /// The ticket was stale (its state had passed, the probe timed out, or
    /// it came from another breaker): nothing changed.
    Stale,
    /// Redis did not answer: the outcome could not reach the shared word. It
    /// was recorded in the local breaker instead (when that is closed), and
    /// the instance switched to [`Mode::Local`](crate::Mode::Local).
    Unreported,
}

/// Proof of admission: release it exactly once with
/// [`RedisBreaker::release`](crate::RedisBreaker::release) (or use a
/// [`Permit`](crate::Permit)).
#[must_use = "a ticket must be released; a lost probe ticket blocks the fleet until the probe timeout"]
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Ticket {
    // Two machine words, as the core's `Ticket`, so that
    // `Result<Ticket, Rejected>` comes back in two registers (the non-zero
    // origin is the niche): the address of the word it was issued from (the
    // mirror of the shared word, or the local breaker's; 8-aligned), with
    // the probe flag in bit 0 and the local flag in bit 1; and the counter.
    pub(crate) origin: NonZeroUsize,
    pub(crate) counter: u32,
}

impl Ticket {
    const PROBE: usize = 1;
    const LOCAL: usize = 2;

    #[inline(always)]
    pub(crate) fn new(address: usize, counter: u32, probe: bool, local: bool) -> Ticket {
        let flags = if probe { Self::PROBE } else { 0 } | if local { Self::LOCAL } else { 0 };
        Ticket {
            // An address is never 0.
            origin: NonZeroUsize::new(address | flags).unwrap_or(NonZeroUsize::MIN),
            counter,
        }
    }

    /// The state counter the ticket was issued under (of the shared word, or
    /// of the local breaker).
    pub fn counter(&self) -> u32 {
        self.counter
    }

    /// Whether this ticket is the probe: with [`Scope::Shared`], the single
    /// probe of the whole fleet.
    pub fn is_probe(&self) -> bool {
        self.origin.get() & Self::PROBE != 0
    }

    /// Which breaker issued it: the shared word or the local one.
    pub fn scope(&self) -> Scope {
        if self.origin.get() & Self::LOCAL != 0 {
            Scope::Local
        } else {
            Scope::Shared
        }
    }

    pub(crate) fn issuer(&self) -> usize {
        self.origin.get() & !(Self::PROBE | Self::LOCAL)
    }
}

/// Counters of an instance's work, for measurements and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Round trips to Redis made by calls (`acquire`, `release`, `force_*`,
    /// `sync`), not by the watcher.
    pub call_round_trips: u64,
    /// Operations of calls that went to Redis.
    pub remote_calls: u64,
    /// Refreshes of the mirror by the watcher (loads, not published
    /// changes).
    pub refreshes: u64,
    /// Published changes the watcher applied to the mirror.
    pub published: u64,
}

/// A release as the trait reports it.
pub(crate) fn to_core(release: Release) -> tripword::Release {
    match release {
        Release::Recorded | Release::Unreported => tripword::Release::Recorded,
        Release::Stale => tripword::Release::Stale,
    }
}

/// [`Stats`] as the engine counts them.
#[derive(Default)]
pub(crate) struct AtomicStats {
    pub(crate) call_round_trips: AtomicU64,
    pub(crate) remote_calls: AtomicU64,
    pub(crate) refreshes: AtomicU64,
    pub(crate) published: AtomicU64,
}

impl AtomicStats {
    /// The counters now.
    pub(crate) fn load(&self) -> Stats {
        Stats {
            call_round_trips: self.call_round_trips.load(Ordering::Relaxed),
            remote_calls: self.remote_calls.load(Ordering::Relaxed),
            refreshes: self.refreshes.load(Ordering::Relaxed),
            published: self.published.load(Ordering::Relaxed),
        }
    }
}
