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
use core::future::Future;

pub use crate::word::store::{CasError, Cell};

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

/// One application of an [`Event`] to a cell, as a value the caller drives:
/// the compare-and-swap loop with its input and output left to the caller
/// (sans-IO). [`update`] and [`update_async`] are its two drivers; a driver
/// for another kind of cell (a callback API, a poll loop, a batch of
/// exchanges) drives it the same way:
///
/// 1. [`step`](Update::step) computes the next word from the word last seen,
///    reading the clock (once, after that word was loaded) only if the state
///    needs the time. Nothing to change: [`Next::Done`], and nothing is
///    written (spec I9). Otherwise [`Next::Exchange`]: compare-and-exchange
///    [`current`](Exchange::current) for [`desired`](Exchange::desired) in the cell;
/// 2. [`Exchange::resolve`] takes the exchange's result: won, the event is
///    [`Resolved::Won`] with the [`Swap`] to report (the only way to obtain
///    one: a transition computed by an attempt that lost cannot be
///    reported, spec I7); lost to contention, [`Resolved::Retry`] with the
///    word the cell holds, to step again; a cell error is returned as is,
///    not retried (the exchange may or may not have happened).
///
/// No step stores a word: the only write the value ever asks for is the
/// exchange, so two callers cannot both elect a probe or both trip the
/// breaker (spec I1, I3). Each value is consumed by the next, so a driver
/// cannot step twice from one word, resolve twice, or report a swap twice.
///
/// ```
/// use tripword::cell::{CasError, Next, Resolved, Update};
/// use tripword::transition::{Decision, Event};
/// use tripword::{Config, W64};
///
/// let config = Config::new().failure_threshold(1).open_for(10).check::<W64>()?;
/// let mut word = 0u64; // the zero word is Closed; a plain variable as the "cell"
/// let mut update = Update::new(&config, word, Event::Admit, None);
/// let admitted = loop {
///     match update.step(|| 0) {
///         Next::Done(applied) => break applied,
///         Next::Exchange(x) => {
///             let result = if word == x.current() { word = x.desired(); Ok(()) } else { Err(CasError::Changed(word)) };
///             match x.resolve::<()>(result).unwrap() {
///                 Resolved::Won { applied, .. } => break applied,
///                 Resolved::Retry(again) => update = again,
///             }
///         }
///     }
/// };
/// assert_eq!(admitted.decision, Decision::Admitted); // closed: nothing to exchange
/// # Ok::<(), tripword::ConfigError>(())
/// ```
#[must_use = "an update does nothing until it is stepped"]
#[derive(Debug)]
pub struct Update<'c, W: Word> {
    config: &'c ValidConfig<W>,
    current: W::Raw,
    event: Event,
    /// A clock reading taken after `current` was loaded, for the first step
    /// only (a retry starts from a word loaded later).
    reading: Option<u64>,
}

/// What an [`Update`] asks for next.
#[must_use = "an exchange must be made and resolved, or the event is not applied"]
#[derive(Debug)]
pub enum Next<'c, W: Word> {
    /// Compare-and-exchange in the cell, then [`Exchange::resolve`].
    Exchange(Exchange<'c, W>),
    /// The event changes nothing: no write, nothing to report.
    Done(Applied<W>),
}

/// An exchange an [`Update`] asks for: replace [`current`](Exchange::current)
/// with [`desired`](Exchange::desired) if the cell still holds it.
#[must_use = "resolve the exchange with the cell's answer"]
#[derive(Debug)]
pub struct Exchange<'c, W: Word> {
    update: Update<'c, W>,
    new: W::Raw,
    applied: Applied<W>,
    repaired: bool,
}

/// How an [`Exchange`] ended.
#[derive(Debug)]
pub enum Resolved<'c, W: Word> {
    /// The exchange won: the event is applied. Report `swap`'s transitions,
    /// once.
    Won {
        /// What the event did.
        applied: Applied<W>,
        /// The change the exchange made.
        swap: Swap<W>,
    },
    /// Another writer changed the word first: step again from the word the
    /// cell holds now (the clock is read again if needed).
    Retry(Update<'c, W>),
}

impl<'c, W: Word> Update<'c, W> {
    /// Applies `event` under `config`, starting from `seen` (a word the
    /// caller loaded from the cell). `seen_at`: a clock reading the caller
    /// took *after* loading `seen`, if it has one, used by the first step
    /// only.
    #[inline(always)]
    pub fn new(
        config: &'c ValidConfig<W>,
        seen: W::Raw,
        event: Event,
        seen_at: Option<u64>,
    ) -> Self {
        Update {
            config,
            current: seen,
            event,
            reading: seen_at,
        }
    }

    /// The word the next step starts from.
    #[inline(always)]
    pub fn current(&self) -> W::Raw {
        self.current
    }

    /// Computes the next word. `now` is called only when the state needs
    /// the time, at most once, and only if no reading was given for this
    /// step.
    #[inline(always)]
    pub fn step(mut self, now: impl FnOnce() -> u64) -> Next<'c, W> {
        let first = self.reading.take();
        let mut read = 0;
        let RawStep {
            word,
            decision,
            repaired,
            left,
        } = transition::next_word(
            &W::LAYOUT,
            self.config,
            self.current.into(),
            self.event,
            || {
                let t = match first {
                    Some(t) => t,
                    None => now(),
                };
                read = t;
                t
            },
        );
        let new = W::from_u64(word);
        let applied = Applied {
            word: new,
            decision,
            wait: W::from_u64(Rejected::wait::<W>(left, self.config.time_shift(), read)),
        };
        if new == self.current {
            return Next::Done(applied);
        }
        Next::Exchange(Exchange {
            update: self,
            new,
            applied,
            repaired,
        })
    }
}

impl<'c, W: Word> Exchange<'c, W> {
    /// The word the exchange expects the cell to hold.
    #[inline(always)]
    pub fn current(&self) -> W::Raw {
        self.update.current
    }

    /// The word the exchange stores.
    #[inline(always)]
    pub fn desired(&self) -> W::Raw {
        self.new
    }

    /// Takes the cell's answer to the exchange (see [`Cell::compare_exchange`]).
    ///
    /// # Errors
    /// The cell's error ([`CasError::Cell`]): the exchange may or may not
    /// have happened; nothing is reported, and the update ends.
    #[inline(always)]
    pub fn resolve<E>(self, result: Result<(), CasError<W::Raw, E>>) -> Result<Resolved<'c, W>, E> {
        match result {
            Ok(()) => Ok(Resolved::Won {
                applied: self.applied,
                swap: Swap {
                    old: self.update.current,
                    new: self.new,
                    repaired: self.repaired,
                },
            }),
            Err(CasError::Changed(observed)) => {
                let mut update = self.update;
                update.current = observed;
                Ok(Resolved::Retry(update))
            }
            Err(CasError::Cell(e)) => Err(e),
        }
    }
}

/// Applies `event` to the word in `cell`, starting from `seen` (a word the
/// caller loaded from it), with one compare-and-exchange per attempt: the
/// synchronous driver of [`Update`].
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
    let mut update = Update::new(config, seen, event, seen_at);
    loop {
        let exchange = match update.step(&mut now) {
            Next::Done(applied) => return Ok(applied),
            Next::Exchange(exchange) => exchange,
        };
        let result = cell.compare_exchange(exchange.current(), exchange.desired());
        match exchange.resolve(result)? {
            Resolved::Won { applied, swap } => {
                on_swap(swap);
                return Ok(applied);
            }
            Resolved::Retry(again) => update = again,
        }
    }
}

/// A place that holds a word of width `W` and answers asynchronously: a key
/// in a remote store, a row in a database, a word behind an async lock.
/// The same contracts as [`Cell`], with each operation a future:
/// [`update_async`] drives the loop on it.
///
/// Implement it with `async fn`s:
///
/// ```
/// use std::sync::Mutex;
/// use tripword::cell::{AsyncCell, CasError};
/// use tripword::W64;
///
/// /// A word another task serves; here, a lock that never waits.
/// struct Remote(Mutex<u64>);
/// impl AsyncCell<W64> for Remote {
///     type Error = std::io::Error;
///     async fn load(&self) -> Result<u64, Self::Error> {
///         Ok(*self.0.lock().unwrap())
///     }
///     async fn compare_exchange(&self, current: u64, new: u64) -> Result<(), CasError<u64, Self::Error>> {
///         let mut word = self.0.lock().unwrap();
///         if *word != current {
///             return Err(CasError::Changed(*word));
///         }
///         *word = new;
///         Ok(())
///     }
/// }
/// ```
pub trait AsyncCell<W: Word> {
    /// Why the cell could not answer: a lost connection, a timeout.
    type Error;

    /// The word the cell holds now.
    ///
    /// # Errors
    /// When the cell cannot be read.
    fn load(&self) -> impl Future<Output = Result<W::Raw, Self::Error>>;

    /// Replaces the word with `new` if it is still `current`; may fail
    /// spuriously (report the word unchanged).
    ///
    /// # Errors
    /// [`CasError::Changed`] with the word the cell holds when it is not
    /// `current` ([`update_async`] retries from it); [`CasError::Cell`] when
    /// the cell failed (the exchange may or may not have happened:
    /// [`update_async`] returns the error).
    fn compare_exchange(
        &self,
        current: W::Raw,
        new: W::Raw,
    ) -> impl Future<Output = Result<(), CasError<W::Raw, Self::Error>>>;
}

/// [`update`] on an [`AsyncCell`]: the asynchronous driver of [`Update`],
/// with the same arguments, rules and result. Each attempt awaits one
/// exchange; the clock is read (if the state needs it) after the word the
/// attempt rests on was loaded, and never while an exchange is in flight;
/// `on_swap` is called once, after the exchange that won.
///
/// Dropped while an exchange is in flight, it reports nothing: whether the
/// exchange happened is the cell's to say (a later load shows it).
///
/// ```
/// # use std::sync::Mutex;
/// # use tripword::cell::{AsyncCell, CasError};
/// # struct Remote(Mutex<u64>);
/// # impl AsyncCell<W64> for Remote {
/// #     type Error = std::convert::Infallible;
/// #     async fn load(&self) -> Result<u64, Self::Error> { Ok(*self.0.lock().unwrap()) }
/// #     async fn compare_exchange(&self, current: u64, new: u64) -> Result<(), CasError<u64, Self::Error>> {
/// #         let mut word = self.0.lock().unwrap();
/// #         if *word != current { return Err(CasError::Changed(*word)); }
/// #         *word = new;
/// #         Ok(())
/// #     }
/// # }
/// use std::pin::pin;
/// use std::task::{Context, Poll, Waker};
/// use tripword::cell::update_async;
/// use tripword::transition::{Decision, Event};
/// use tripword::{Config, Outcome, W64};
///
/// let config = Config::new().failure_threshold(1).open_for(10).check::<W64>()?;
/// let cell = Remote(Mutex::new(0));
/// let mut trips = 0;
/// let release = async {
///     let seen = cell.load().await?;
///     let event = Event::Release { counter: 0, outcome: Outcome::Failure };
///     update_async(&cell, &config, seen, event, None, || 0, |swap| trips += swap.transitions().len()).await
/// };
/// let Poll::Ready(applied) = pin!(release).poll(&mut Context::from_waker(Waker::noop())) else { unreachable!() };
/// assert_eq!(applied.unwrap().decision, Decision::Recorded);
/// assert_eq!(trips, 1); // closed -> open
/// # use std::future::Future;
/// # Ok::<(), tripword::ConfigError>(())
/// ```
///
/// # Errors
/// The cell's error, from the first exchange that failed for a reason other
/// than contention. Nothing is reported then.
pub async fn update_async<W: Word, K: AsyncCell<W> + ?Sized>(
    cell: &K,
    config: &ValidConfig<W>,
    seen: W::Raw,
    event: Event,
    seen_at: Option<u64>,
    mut now: impl FnMut() -> u64,
    on_swap: impl FnOnce(Swap<W>),
) -> Result<Applied<W>, K::Error> {
    let mut update = Update::new(config, seen, event, seen_at);
    loop {
        let exchange = match update.step(&mut now) {
            Next::Done(applied) => return Ok(applied),
            Next::Exchange(exchange) => exchange,
        };
        let result = cell
            .compare_exchange(exchange.current(), exchange.desired())
            .await;
        match exchange.resolve(result)? {
            Resolved::Won { applied, swap } => {
                on_swap(swap);
                return Ok(applied);
            }
            Resolved::Retry(again) => update = again,
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
