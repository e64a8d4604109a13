//! The compare-and-swap loop, public: the one way the state machine is applied
//! to a word, whoever keeps the word.
//!
//! A [`Cell`] is anything that holds a word and can load it and
//! compare-and-exchange it: an atomic ([`W::Atomic`](crate::Word::Atomic), no
//! error), a slot in shared memory, a row or a key in a remote store, whose
//! exchange can fail for reasons other than contention (its
//! [`Error`](Cell::Error)). [`update`] applies one [`Event`] to a cell the way
//! [`Breaker`](crate::Breaker) does, because `Breaker` calls it:
//!
//! 1. compute the next word from the word last seen and the config (the
//!    clock is read, if the state needs the time, *after* that word was
//!    loaded: see `docs/design.md`, "Memory orderings");
//! 2. if nothing changes, write nothing (spec I9) and return;
//! 3. otherwise compare-and-exchange; on contention retry from the word the
//!    cell holds now; on a cell error stop and return it (the caller decides
//!    whether to reload and try again: the exchange may or may not have
//!    happened);
//! 4. after the exchange that succeeded, and only then, hand the change to
//!    `on_swap`, once (spec I7).
//!
//! What the loop keeps by construction (the rules a hand-written loop had to
//! keep): a plain store never replaces the exchange, so two callers cannot
//! both elect a probe or both trip the breaker; transitions computed by an
//! attempt that lost are never reported; the config is a [`ValidConfig`], so
//! every count and duration fits the word.
//!
//! ```
//! use std::sync::Mutex;
//! use tripword::cell::{self, Cell, CasError};
//! use tripword::transition::{Decision, Event, Verdict};
//! use tripword::{Config, Outcome, W64};
//!
//! /// A word behind a lock: a cell whose exchange never fails spuriously.
//! struct Locked(Mutex<u64>);
//! impl Cell<W64> for Locked {
//!     type Error = core::convert::Infallible;
//!     fn load(&self) -> Result<u64, Self::Error> {
//!         Ok(*self.0.lock().unwrap())
//!     }
//!     fn compare_exchange(&self, current: u64, new: u64) -> Result<(), CasError<u64, Self::Error>> {
//!         let mut word = self.0.lock().unwrap();
//!         if *word != current {
//!             return Err(CasError::Changed(*word));
//!         }
//!         *word = new;
//!         Ok(())
//!     }
//! }
//!
//! let config = Config::new().failure_threshold(1).open_for(10).check::<W64>()?;
//! let cell = Locked(Mutex::new(0)); // the zero word is Closed
//! let run = |event| {
//!     let seen = cell.load().unwrap();
//!     cell::update(&cell, &config, seen, event, None, || 0, |swap| {
//!         for t in swap.transitions() { println!("{t}"); }
//!     })
//! };
//! let admitted = run(Event::Admit).unwrap();
//! assert_eq!(admitted.decision, Decision::Admitted);
//! let Verdict::Admitted { counter, .. } = admitted.verdict() else { unreachable!() };
//! let failed = run(Event::Release { counter, outcome: Outcome::Failure }).unwrap();
//! assert_eq!(failed.decision, Decision::Recorded); // and "closed -> open (counter 1)" printed
//! let Verdict::Rejected(why) = run(Event::Admit).unwrap().verdict() else { unreachable!() };
//! assert_eq!(why.retry_after(), Some(10)); // read at 0, open until 10
//! # Ok::<(), tripword::ConfigError>(())
//! ```

use crate::config::ValidConfig;
use crate::rejected::Rejected;
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crate::transition::{self, Decision, Event, RawStep, Transitions, Verdict};
use crate::word::{W32, W64, Word};
use core::convert::Infallible;

/// A place that holds a word of width `W`: load it, compare-and-exchange it.
///
/// Implemented for the atomics a [`Breaker`](crate::Breaker) uses
/// (`Acquire` loads, `AcqRel` exchanges, `Error = Infallible`). Implement it
/// for a cell of your own to run the same state machine there with
/// [`update`].
pub trait Cell<W: Word> {
    /// Why the cell could not answer: a lost connection, a timeout. Use
    /// [`Infallible`] for memory.
    type Error;

    /// The word the cell holds now.
    ///
    /// # Errors
    /// When the cell cannot be read.
    fn load(&self) -> Result<W::Raw, Self::Error>;

    /// Replaces the word with `new` if it is still `current`. May fail
    /// spuriously (report the word unchanged), as `compare_exchange_weak`
    /// does: [`update`] retries.
    ///
    /// # Errors
    /// [`CasError::Changed`] with the word the cell holds when it is not
    /// `current` (contention: [`update`] retries from it);
    /// [`CasError::Cell`] when the cell failed (the exchange may or may not
    /// have happened: [`update`] returns the error).
    fn compare_exchange(
        &self,
        current: W::Raw,
        new: W::Raw,
    ) -> Result<(), CasError<W::Raw, Self::Error>>;
}

/// Why a [`Cell::compare_exchange`] did not exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CasError<R, E> {
    /// The cell held another word (given): someone else changed it first.
    Changed(R),
    /// The cell failed; whether the exchange happened is unknown.
    Cell(E),
}

impl Cell<W64> for AtomicU64 {
    type Error = Infallible;
    #[inline(always)]
    fn load(&self) -> Result<u64, Infallible> {
        Ok(AtomicU64::load(self, Ordering::Acquire))
    }
    #[inline(always)]
    fn compare_exchange(&self, current: u64, new: u64) -> Result<(), CasError<u64, Infallible>> {
        match self.compare_exchange_weak(current, new, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => Ok(()),
            Err(seen) => Err(CasError::Changed(seen)),
        }
    }
}

impl Cell<W32> for AtomicU32 {
    type Error = Infallible;
    #[inline(always)]
    fn load(&self) -> Result<u32, Infallible> {
        Ok(AtomicU32::load(self, Ordering::Acquire))
    }
    #[inline(always)]
    fn compare_exchange(&self, current: u32, new: u32) -> Result<(), CasError<u32, Infallible>> {
        match self.compare_exchange_weak(current, new, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => Ok(()),
            Err(seen) => Err(CasError::Changed(seen)),
        }
    }
}

/// A change [`update`] made: the word before and after the exchange that
/// succeeded. Its [`transitions`](Swap::transitions) are derived from the two
/// words only when asked for, so a caller that ignores them pays nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Swap<W: Word> {
    old: W::Raw,
    new: W::Raw,
    repaired: bool,
}

impl<W: Word> Swap<W> {
    /// The word replaced.
    pub fn replaced(&self) -> W::Raw {
        self.old
    }
    /// The word stored.
    pub fn stored(&self) -> W::Raw {
        self.new
    }
    /// The state changes the exchange made, each to be reported once.
    #[inline]
    pub fn transitions(&self) -> Transitions {
        transition::transitions(&W::LAYOUT, self.old.into(), self.new.into(), self.repaired)
    }
    /// `Some(old)` when the word replaced was corrupt (spec I8): it was
    /// treated as `Closed` with the next counter before the event applied.
    pub fn repaired(&self) -> Option<W::Raw> {
        self.repaired.then_some(self.old)
    }
}

/// What [`update`] did: the word the event left (stored, or found unchanged),
/// the decision, and for a rejection the wait, computed from the clock
/// reading the decision made. Three small fields, so an MCU moves little.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Applied<W: Word> {
    /// The word after the event.
    pub word: W::Raw,
    /// What was decided.
    pub decision: Decision,
    /// A rejection's wait in ticks (see [`Rejected::retry_after`]), in the
    /// word's integer: at most half the ring, which fits it.
    wait: W::Raw,
}

impl<W: Word> Applied<W> {
    /// The full verdict: an admission's counter and probe flag from the
    /// word, a rejection's cause and wait from the word and the clock
    /// reading the decision made.
    #[inline]
    pub fn verdict(&self) -> Verdict {
        match self.decision {
            Decision::Rejected => Verdict::Rejected(self.rejected()),
            d => d.verdict::<W>(self.word),
        }
    }

    /// The rejection, when the decision is [`Decision::Rejected`]: its cause
    /// from the word, its wait from the units the decision found left and
    /// the clock reading it made.
    #[inline(always)]
    pub fn rejected(&self) -> Rejected {
        Rejected::waiting(self.word.into(), self.wait.into())
    }
}

/// Applies `event` to the word in `cell`, starting from `seen` (a word the
/// caller loaded from it), with one compare-and-exchange per attempt.
/// `seen_at`: a clock reading the caller took *after* loading `seen`, if it
/// has one, used by the first attempt only (a retry starts from a word
/// loaded later, so it reads the clock again).
/// Returns what it did ([`Applied`]); [`Applied::verdict`] turns that into a
/// [`Verdict`].
///
/// `now` is called only when the state needs the time, after the word the
/// decision rests on was loaded, at most once per attempt; `on_swap` is
/// called once, after the exchange that succeeded, never for a decision
/// that stores nothing.
///
/// # Errors
/// The cell's error, from the first exchange that failed for a reason other
/// than contention. Nothing is reported then.
#[inline(always)]
pub fn update<W: Word, K: Cell<W> + ?Sized>(
    cell: &K,
    config: &ValidConfig<W>,
    seen: W::Raw,
    event: Event,
    seen_at: Option<u64>,
    mut now: impl FnMut() -> u64,
    on_swap: impl FnOnce(Swap<W>),
) -> Result<Applied<W>, K::Error> {
    let mut current = seen;
    let mut reading = seen_at;
    loop {
        let first = reading.take();
        let mut read = 0;
        let RawStep {
            word,
            decision,
            repaired,
            left,
        } = transition::next_word(&W::LAYOUT, config, current.into(), event, || {
            let t = first.unwrap_or_else(&mut now);
            read = t;
            t
        });
        let new = W::from_u64(word);
        let applied = Applied {
            word: new,
            decision,
            wait: W::from_u64(Rejected::wait::<W>(left, config.time_shift(), read)),
        };
        if new == current {
            return Ok(applied);
        }
        match cell.compare_exchange(current, new) {
            Ok(()) => {
                on_swap(Swap {
                    old: current,
                    new,
                    repaired,
                });
                return Ok(applied);
            }
            Err(CasError::Changed(observed)) => current = observed,
            Err(CasError::Cell(e)) => return Err(e),
        }
    }
}

/// [`update`] on an infallible cell.
#[inline(always)]
pub(crate) fn update_local<W: Word, K: Cell<W, Error = Infallible> + ?Sized>(
    cell: &K,
    config: &ValidConfig<W>,
    seen: W::Raw,
    event: Event,
    seen_at: Option<u64>,
    now: impl FnMut() -> u64,
    on_swap: impl FnOnce(Swap<W>),
) -> Applied<W> {
    match update(cell, config, seen, event, seen_at, now, on_swap) {
        Ok(done) => done,
        Err(never) => match never {},
    }
}
