//! The shapes `Breaker::run_common` passes in registers: its event
//! ([`Common`]) and its decision ([`Folded`]).

use crate::cell;
use crate::outcome::Outcome;
use crate::rejected::Rejected;
use crate::transition::Decision;
use crate::word::{RECOVERY, Word};

/// The events of `Breaker::run_common`. One byte (the three outcomes,
/// and the other events in the values `Outcome` leaves free), and the
/// release's counter a separate argument, so the event travels in registers
/// rather than through memory.
#[derive(Clone, Copy)]
pub(super) enum Common {
    Admit,
    Release(Outcome),
    ForceOpen,
    ForceClose,
}

/// What `Breaker::run_common` decided, folded into one machine word so
/// that it comes back in a register beside the word: a rejection is its own
/// bits (a [`Rejected`]); any other decision is a value no rejection takes.
/// Without the recovery states a rejection's cause (its two low bits) is
/// never 2, and the others are `2 | decision << 2`; with them (the ramp's
/// cause is 2) they are `(decision + 1) << 2`, cause 0 with a wait, which
/// no rejection is (cause 0 is the operator's hold, which has none).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Folded(usize);

impl Folded {
    pub(super) const RECORDED: Folded = Folded::other(Decision::Recorded);

    #[inline(always)]
    const fn other(d: Decision) -> Folded {
        if RECOVERY {
            Folded((d as usize + 1) << 2)
        } else {
            Folded(2 | (d as usize) << 2)
        }
    }

    #[inline(always)]
    pub(super) fn of<W: Word>(applied: &cell::Applied<W>) -> Folded {
        match applied.decision {
            Decision::Rejected => Folded(applied.rejected().bits()),
            d => Folded::other(d),
        }
    }

    /// The rejection, if it is one.
    #[inline(always)]
    pub(super) fn rejected(self) -> Option<Rejected> {
        let rejected = if RECOVERY {
            self.0 & 3 != 0 || self.0 == 0
        } else {
            self.0 & 3 != 2
        };
        rejected.then_some(Rejected::from_bits(self.0))
    }
}
