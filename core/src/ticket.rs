//! Proof of admission and what handing it back did: the [`Ticket`] a
//! breaker issues on admission, and the [`Release`] its release reports.
//!
//! Below the observer (which is told about both) and the breakers (which
//! issue and take them): a ticket is the word's counter field and the
//! identity of its breaker, so it needs only the word's layout.

use crate::word::{Layout, TAG_BITS};
use core::num::NonZeroUsize;

/// Proof of admission, to hand back to
/// [`Breaker::release`](crate::Breaker::release) exactly once (it is not
/// `Clone`, so it cannot be released twice).
///
/// It carries the state counter it was issued under and the identity of its
/// breaker (the address of its atomic word): released to another breaker, or
/// after the breaker's state has moved on, it changes nothing.
///
/// Because identity is an address, a breaker *moved* (say into an `Arc`)
/// while tickets are outstanding treats them as foreign: they become stale,
/// and a lost probe falls back on the probe timeout. Acquire tickets from a
/// breaker that stays put (a `static`, an `Arc`, a field of a pinned
/// service). Conversely, a new breaker built at the address of a dropped one
/// would accept the old one's tickets if the counters matched; the borrow
/// checker prevents that for [`Permit`](crate::Permit)s, which borrow their breaker.
#[derive(PartialEq, Eq, Hash)]
#[must_use = "a ticket must be released; a lost probe ticket blocks the breaker until the probe timeout"]
pub struct Ticket {
    // Two machine words, so that `Result<Ticket, Rejected>` is two words
    // too (the niche of `NonZeroUsize` encodes `Err`, and `Rejected`, one
    // word, sits where `stamp` does). Inlined, as `acquire`'s fast path is,
    // it lives in registers; returned from an out-of-line call (the slow
    // paths) rustc 1.95 on x86_64 passes it through memory (`sret`), see
    // docs/performance/single-thread.md, "The closed call in a user's hot loop".
    // - `origin`: the word's address, with the probe flag in bit 0 (a word
    //   is at least 4-byte aligned, so that bit is free). A non-probe ticket
    //   of this breaker carries exactly the address, so one compare checks
    //   both "this breaker" and "not a probe" on the success fast path;
    // - `stamp`: the word's counter field where the word holds it (bits
    //   `TAG_BITS..TAG_BITS + counter_bits`). In place, the field is the word
    //   `Closed` holds with no failures under that counter (tag and failure
    //   count are zero bits), so that fast path compares the word with the
    //   stamp, and neither `acquire` nor `release` shifts or masks it.
    pub(crate) origin: NonZeroUsize,
    pub(crate) stamp: usize,
}

impl Ticket {
    pub(crate) const PROBE: usize = 1;

    /// The ticket of an ordinary admission into `raw` (the word after it)
    /// of the breaker whose word is at `origin`.
    #[inline(always)]
    pub(crate) fn admitted(origin: NonZeroUsize, l: &Layout, raw: u64) -> Ticket {
        Ticket {
            origin,
            stamp: (raw & l.counter_field_mask()) as usize,
        }
    }

    /// The ticket of the probe elected into `raw`.
    #[inline(always)]
    pub(crate) fn probe(origin: NonZeroUsize, l: &Layout, raw: u64) -> Ticket {
        Ticket {
            origin: origin | Self::PROBE,
            stamp: (raw & l.counter_field_mask()) as usize,
        }
    }

    /// The ticket whose [`into_parts`](Self::into_parts) are these.
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    pub(crate) fn from_parts(origin: NonZeroUsize, stamp: usize) -> Ticket {
        Ticket { origin, stamp }
    }

    /// The two words of the ticket: its origin and its stamp.
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    pub(crate) fn into_parts(self) -> (usize, usize) {
        (self.origin.get(), self.stamp)
    }

    /// The address of the word of the breaker that issued this ticket.
    #[inline(always)]
    pub(crate) fn issuer(&self) -> usize {
        self.origin.get() & !Self::PROBE
    }

    /// A copy, for tests that release one ticket into two breakers (the
    /// core's unit tests, which are not built under `--cfg tripword_loom`).
    #[cfg(all(test, not(tripword_loom)))]
    pub(crate) fn clone_for_test(&self) -> Ticket {
        Ticket {
            origin: self.origin,
            stamp: self.stamp,
        }
    }

    /// The state counter this ticket was issued under.
    pub fn counter(&self) -> u32 {
        (self.stamp >> TAG_BITS) as u32
    }
    /// Whether this ticket is the probe of a half-open breaker.
    pub fn is_probe(&self) -> bool {
        self.origin.get() & Self::PROBE != 0
    }
}

impl core::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ticket")
            .field("counter", &self.counter())
            .field("probe", &self.is_probe())
            .field("origin", &self.issuer())
            .finish()
    }
}

/// What a release did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Release {
    /// The outcome counted.
    Recorded,
    /// The ticket was stale (its state had passed, a probe timed out, or it
    /// came from another breaker): nothing changed.
    Stale,
}
