//! The atomic layer: a [`Breaker`] keeps the word in one atomic cell and
//! applies the pure layer to it with one compare-and-swap loop.
//!
//! Every operation is: load the word, compute the step with
//! [`transition::apply`], and if the word changes, `compare_exchange_weak` it,
//! retrying with the value observed. When nothing changes nothing is written
//! (SPEC I9): a closed admission is one atomic load. Transitions are reported
//! to the [`Observer`] after the successful swap (SPEC I7).
//!
//! Lock-free wherever the word's atomic is ([`Word::IS_ALWAYS_LOCK_FREE`]);
//! never blocks, never allocates, so it can be called from an interrupt
//! handler on targets with native compare-and-swap.

use crate::clock::Clock;
use crate::config::{Config, ConfigError, Const, ConstConfig};
use crate::observer::Observer;
use crate::outcome::Outcome;
use crate::status::Status;
use crate::transition::{self, Event, Kind, Verdict};
use crate::word::{Layout, Snapshot, TAG_BITS, TAG_PROBING, W64, Word, counter_of, tag_of};
#[cfg(target_pointer_width = "64")]
use crate::word::{TAG_FORCED_OPEN, TAG_OPEN, closed_failures};
use core::borrow::Borrow;
use core::num::NonZeroUsize;

/// A circuit breaker in one atomic word.
///
/// `C` is the [`Clock`], `W` the word width ([`W64`] by default,
/// [`W32`](crate::W32) for MCUs with 32-bit atomics), `O` the [`Observer`]
/// (none by default), `P` where the [`Config`] lives: inline by default, or
/// `&'static Config` ([`Breaker::from_static`]) so a `static` breaker keeps
/// its config in flash and costs only its word and a pointer in RAM.
///
/// ```
/// use tripword::{Breaker, Config, Outcome, Status};
/// use tripword::clock::ManualClock;
///
/// static CLOCK: ManualClock = ManualClock::new(0);
/// static B: Breaker<&ManualClock> = Breaker::new(
///     Config::new().failure_threshold(3).open_for(100).probe_timeout(50),
///     &CLOCK,
/// );
///
/// for _ in 0..3 {
///     let t = B.acquire().unwrap();
///     B.release(t, Outcome::Failure);
/// }
/// assert_eq!(B.status(), Status::Open);
/// assert!(B.acquire().is_err());       // rejected, the call is not made
/// CLOCK.advance(100);
/// let probe = B.permit().unwrap();     // exactly one caller becomes the probe
/// assert!(B.permit().is_err());
/// probe.success();
/// assert_eq!(B.status(), Status::Closed);
/// ```
pub struct Breaker<C, W: Word = W64, O = (), P = Config> {
    pub(crate) word: W::Atomic,
    config: P,
    clock: C,
    observer: O,
}

/// The call was not admitted: the breaker is open, forced open, or probing.
/// The protected function must not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rejected;

impl core::fmt::Display for Rejected {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("circuit open: call not admitted")
    }
}

impl core::error::Error for Rejected {}

/// Proof of admission, to hand back to [`Breaker::release`] exactly once
/// (it is not `Clone`, so it cannot be released twice).
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
/// checker prevents that for [`Permit`]s, which borrow their breaker.
#[derive(PartialEq, Eq, Hash)]
#[must_use = "a ticket must be released; a lost probe ticket blocks the breaker until the probe timeout"]
pub struct Ticket {
    // Two scalars, so that `Result<Ticket, Rejected>` is returned in two
    // registers (the niche of `NonZeroUsize` encodes `Err`):
    // - `origin`: the word's address, with the probe flag in bit 0 (a word
    //   is at least 4-byte aligned, so that bit is free). A non-probe ticket
    //   of this breaker carries exactly the address, so one compare checks
    //   both "this breaker" and "not a probe" on the success fast path;
    // - `stamp`: the word's counter field where the word holds it (bits
    //   `TAG_BITS..TAG_BITS + counter_bits`). In place, the field is the word
    //   `Closed` holds with no failures under that counter (tag and failure
    //   count are zero bits), so that fast path compares the word with the
    //   stamp, and neither `acquire` nor `release` shifts or masks it.
    origin: NonZeroUsize,
    stamp: u32,
}

impl Ticket {
    const PROBE: usize = 1;

    /// The ticket for an admission into `raw` (the word after it) of the
    /// breaker whose word is at `origin`.
    #[inline(always)]
    fn of_word(origin: NonZeroUsize, l: &Layout, raw: u64, probe: bool) -> Ticket {
        Ticket {
            origin: origin | if probe { Self::PROBE } else { 0 },
            stamp: (raw & l.counter_field_mask()) as u32,
        }
    }

    /// The address of the word of the breaker that issued this ticket.
    #[inline(always)]
    fn issuer(&self) -> usize {
        self.origin.get() & !Self::PROBE
    }

    /// A copy, for tests that release one ticket into two breakers (the
    /// core's unit tests, which are not built under `--cfg loom`).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn clone_for_test(&self) -> Ticket {
        Ticket {
            origin: self.origin,
            stamp: self.stamp,
        }
    }

    /// The state counter this ticket was issued under.
    pub fn counter(&self) -> u32 {
        self.stamp >> TAG_BITS
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

impl<C> Breaker<C, W64, ()> {
    /// A 64-bit breaker with no observer. `const`: a breaker can be a
    /// `static`.
    ///
    /// # Panics
    /// If `config` is out of range for the 64-bit word; in a `const` or
    /// `static` that is a compile error. Use [`Breaker::try_new`] for configs
    /// read at run time.
    #[cfg(not(loom))]
    pub const fn new(config: Config, clock: C) -> Self {
        Self::from_parts(config, clock, ())
    }

    /// A 64-bit breaker with no observer (loom build: not `const`).
    #[cfg(loom)]
    pub fn new(config: Config, clock: C) -> Self {
        Self::from_parts(config, clock, ())
    }

    /// A 64-bit breaker, or the error naming the field out of range.
    pub fn try_new(config: Config, clock: C) -> Result<Self, ConfigError> {
        Self::try_from_parts(config, clock, ())
    }
}

impl<C, O> Breaker<C, W64, O> {
    /// A 64-bit breaker reporting transitions to `observer`.
    ///
    /// # Panics
    /// As [`Breaker::new`].
    #[cfg(not(loom))]
    pub const fn with_observer(config: Config, clock: C, observer: O) -> Self {
        Self::from_parts(config, clock, observer)
    }

    /// A 64-bit breaker reporting transitions to `observer` (loom build).
    #[cfg(loom)]
    pub fn with_observer(config: Config, clock: C, observer: O) -> Self {
        Self::from_parts(config, clock, observer)
    }
}

impl<C, W: Word, O> Breaker<C, W, O, &'static Config> {
    /// A breaker whose config is a `static` (in flash on MCUs): RAM per
    /// breaker is the word, a pointer, and the clock and observer (often
    /// zero-sized).
    ///
    /// ```
    /// use tripword::{Breaker, Config, W32};
    /// use tripword::clock::ManualClock;
    ///
    /// static CONFIG: Config = Config::new().failure_threshold(2).open_for(100);
    /// static CLOCK: ManualClock = ManualClock::new(0);
    /// static B: Breaker<&ManualClock, W32, (), &Config> =
    ///     Breaker::from_static(&CONFIG, &CLOCK, ());
    /// assert!(B.acquire().is_ok());
    /// ```
    ///
    /// # Panics
    /// If the config is out of range for `W`; a compile error in a `const`.
    #[cfg(not(loom))]
    pub const fn from_static(config: &'static Config, clock: C, observer: O) -> Self {
        if let Err(e) = config.validate::<W>() {
            panic!("{}", e.message());
        }
        Breaker {
            word: W::NEW_CELL,
            config,
            clock,
            observer,
        }
    }

    /// A breaker over a `static` config (loom build: not `const`).
    #[cfg(loom)]
    pub fn from_static(config: &'static Config, clock: C, observer: O) -> Self {
        match Self::try_from_static(config, clock, observer) {
            Ok(b) => b,
            Err(e) => panic!("{}", e.message()),
        }
    }

    /// A breaker over a `static` config, or the error naming the field out of
    /// range.
    pub fn try_from_static(
        config: &'static Config,
        clock: C,
        observer: O,
    ) -> Result<Self, ConfigError> {
        config.validate::<W>()?;
        Ok(Breaker {
            word: W::new_cell(W::from_u64(0)),
            config,
            clock,
            observer,
        })
    }
}

impl<C, W: Word, O, T: ConstConfig> Breaker<C, W, O, Const<T>> {
    /// A breaker whose config is the compile-time constant `T::CONFIG`
    /// ([`ConstConfig`]): RAM per breaker is the word (plus the clock and
    /// observer, often zero-sized), and the config's values are compiled
    /// into the code. The config is checked at compile time: out of range
    /// for `W`, this does not build.
    #[cfg(not(loom))]
    pub const fn from_const(clock: C, observer: O) -> Self {
        const {
            if let Err(e) = T::CONFIG.validate::<W>() {
                panic!("{}", e.message());
            }
        }
        Breaker {
            word: W::NEW_CELL,
            config: Const::new(),
            clock,
            observer,
        }
    }

    /// A breaker over a compile-time config (loom build: not `const`).
    #[cfg(loom)]
    pub fn from_const(clock: C, observer: O) -> Self {
        const {
            if let Err(e) = T::CONFIG.validate::<W>() {
                panic!("{}", e.message());
            }
        }
        Breaker {
            word: W::new_cell(W::from_u64(0)),
            config: Const::new(),
            clock,
            observer,
        }
    }
}

impl<C, W: Word, O> Breaker<C, W, O> {
    /// A breaker of any word width, named by the type:
    ///
    /// ```
    /// use tripword::{Breaker, Config, W32};
    /// use tripword::clock::ManualClock;
    ///
    /// static CLOCK: ManualClock = ManualClock::new(0);
    /// static B: Breaker<&ManualClock, W32> =
    ///     Breaker::from_parts(Config::new().open_for(500), &CLOCK, ());
    /// assert!(B.acquire().is_ok());
    /// ```
    ///
    /// # Panics
    /// If `config` is out of range for `W`; a compile error in a `const`.
    #[cfg(not(loom))]
    pub const fn from_parts(config: Config, clock: C, observer: O) -> Self {
        match config.validate::<W>() {
            Ok(config) => Breaker {
                word: W::NEW_CELL,
                config,
                clock,
                observer,
            },
            Err(e) => panic!("{}", e.message()),
        }
    }

    /// A breaker of any word width (loom build: not `const`).
    #[cfg(loom)]
    pub fn from_parts(config: Config, clock: C, observer: O) -> Self {
        match Self::try_from_parts(config, clock, observer) {
            Ok(b) => b,
            Err(e) => panic!("{}", e.message()),
        }
    }

    /// A breaker of any word width, or the error naming the field out of
    /// range.
    pub fn try_from_parts(config: Config, clock: C, observer: O) -> Result<Self, ConfigError> {
        Ok(Breaker {
            word: W::new_cell(W::from_u64(0)),
            config: config.validate::<W>()?,
            clock,
            observer,
        })
    }
}

impl<C, W: Word, O, P: Borrow<Config>> Breaker<C, W, O, P> {
    /// The validated config.
    pub fn config(&self) -> &Config {
        self.config.borrow()
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The observer.
    pub fn observer(&self) -> &O {
        &self.observer
    }

    /// The raw word, for diagnostics and for tests of the pure layer.
    pub fn load_word(&self) -> W::Raw {
        W::load(&self.word)
    }

    /// The decoded word (or why it is corrupt), without acting on time.
    pub fn snapshot(&self) -> Result<Snapshot, crate::word::Corruption> {
        Snapshot::decode::<W>(self.load_word())
    }

    #[inline(always)]
    fn origin(&self) -> NonZeroUsize {
        // Words are at least 4-byte aligned: bit 0 is free for the probe
        // flag of `Ticket::origin`.
        const { assert!(core::mem::align_of::<W::Atomic>() >= 2) };
        // And the counter field fits the ticket's `u32` stamp in place.
        const { assert!(TAG_BITS + W::LAYOUT.counter_bits <= 32) };
        core::ptr::NonNull::from(&self.word).addr()
    }
}

impl<C: Clock, W: Word, O: Observer, P: Borrow<Config>> Breaker<C, W, O, P> {
    /// Runs one event through the CAS loop: load, compute, swap if changed,
    /// retry with the observed word. Reports after the swap.
    #[inline]
    fn run(&self, event: Event) -> Verdict {
        let (word, kind) = self.run_from(W::load(&self.word), event, None);
        kind.verdict(&W::LAYOUT, word.into())
    }

    /// [`run`](Self::run) from a word already loaded (by a fast path that
    /// could not decide), so the slow path does not load it again. Returns
    /// the word the decision left (stored, or found unchanged) and the
    /// verdict's kind: a pair that fits in two registers. One shared
    /// function for every event, not inlined: on a 32-bit MCU that is the
    /// smaller code (`docs/design.md`, "The kernel works on raw bits").
    #[inline(never)]
    fn run_from(&self, mut current: W::Raw, event: Event, now: Option<u64>) -> (W::Raw, Kind) {
        // `now`: the clock as a fast path read it, after loading `current`;
        // used for the first attempt only, so the clock is read once.
        let mut read = now;
        loop {
            // The clock is read (if at all) after the load that the decision
            // is based on, so a timestamp stored by another thread is never
            // newer than our `now` (see docs/design.md, "Memory orderings").
            let old: u64 = current.into();
            let first = read.take();
            let out = transition::kernel(&W::LAYOUT, self.config.borrow(), old, event, || {
                first.unwrap_or_else(|| self.clock.now())
            });
            let new = W::from_u64(out.word);
            if new == current {
                return (new, out.verdict);
            }
            match W::compare_exchange_weak(&self.word, current, new) {
                Ok(_) => {
                    self.report(old, &out);
                    return (new, out.verdict);
                }
                Err(observed) => current = observed,
            }
        }
    }

    /// Tells the observer what the swap from `old` to `out.word` did. The
    /// transitions are derived from the two words here, so with no observer
    /// (`()`) all of this compiles away.
    #[inline]
    fn report(&self, old: u64, out: &transition::Out) {
        if out.repaired {
            let counter = W::LAYOUT.next_counter(counter_of(&W::LAYOUT, old));
            self.observer.on_corrupt_word(old, counter);
        }
        transition::transitions(&W::LAYOUT, old, out).each(|t| self.observer.on_transition(t));
    }

    /// Asks to make a call. `Ok(ticket)` when admitted (in `Closed`, or as the
    /// single probe of a half-open breaker); `Err(Rejected)` otherwise, and
    /// the protected call must not run. Release the ticket exactly once.
    ///
    /// In `Closed` this is one atomic load: no store, no clock read. In
    /// `Open` or `Probing` before the deadline it is one load and one clock
    /// read; in `ForcedOpen`, one load.
    #[inline]
    pub fn acquire(&self) -> Result<Ticket, Rejected> {
        // Fast paths (SPEC I9): they decide what `transition::apply` would,
        // from the raw word, and store nothing.
        let word = W::load(&self.word);
        let raw: u64 = word.into();
        let l = &W::LAYOUT;
        if l.closed_below(raw, self.config.borrow().get_failure_threshold()) {
            return Ok(Ticket::of_word(self.origin(), l, raw, false));
        }
        self.acquire_slow(word)
    }

    /// Every admission the inlined closed path cannot decide. Out of line so
    /// that `acquire` stays small enough to inline into callers.
    // Out of line where the fast paths above live (64-bit targets); on
    // 32-bit MCUs, where only the shared loop remains, inline for size.
    #[cfg_attr(target_pointer_width = "64", inline(never))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    fn acquire_slow(&self, word: W::Raw) -> Result<Ticket, Rejected> {
        #[cfg(target_pointer_width = "64")]
        {
            let raw: u64 = word.into();
            let l = &W::LAYOUT;
            let tag = tag_of(raw);
            if tag == TAG_OPEN || tag == TAG_PROBING {
                // Every bit pattern of these tags is a valid word. The clock
                // is read after the load, as the general loop would.
                let now = self.clock.now();
                if !transition::lapsed(l, self.config.borrow(), raw, now) {
                    return Err(Rejected);
                }
                // Time is up: the general loop elects the probe with this
                // `now`, so the clock is read once.
                return self.acquire_from(word, Some(now));
            }
            if tag == TAG_FORCED_OPEN && l.payload_of(raw) == 0 {
                return Err(Rejected);
            }
        }
        self.acquire_from(word, None)
    }

    #[inline]
    fn acquire_from(&self, word: W::Raw, now: Option<u64>) -> Result<Ticket, Rejected> {
        match self.run_from(word, Event::Admit, now) {
            (word, Kind::Admitted) => {
                let raw: u64 = word.into();
                Ok(Ticket::of_word(
                    self.origin(),
                    &W::LAYOUT,
                    raw,
                    tag_of(raw) == TAG_PROBING,
                ))
            }
            _ => Err(Rejected),
        }
    }

    /// Reports how an admitted call went. A stale ticket (its state passed, a
    /// probe that timed out, another breaker's ticket) changes nothing and
    /// returns [`Release::Stale`].
    #[inline]
    pub fn release(&self, ticket: Ticket, outcome: Outcome) -> Release {
        // Fast path (SPEC I9): a success of a (non-probe) ticket of this
        // breaker on a current `Closed` word with no failures counted changes
        // nothing, so stores nothing. That word is exactly the ticket's
        // stamp. One load serves both the fast path and, if it cannot decide,
        // the slow path.
        let word = W::load(&self.word);
        let raw: u64 = word.into();
        if outcome == Outcome::Success
            && ticket.origin == self.origin()
            && raw == u64::from(ticket.stamp)
        {
            return Release::Recorded;
        }
        self.release_slow(word, ticket, outcome)
    }

    /// Every release the inlined success path cannot decide. Out of line so
    /// that `release` stays small enough to inline into callers.
    // Out of line where the fast paths above live (64-bit targets); on
    // 32-bit MCUs, where only the shared loop remains, inline for size.
    #[cfg_attr(target_pointer_width = "64", inline(never))]
    #[cfg_attr(not(target_pointer_width = "64"), inline)]
    fn release_slow(&self, word: W::Raw, ticket: Ticket, outcome: Outcome) -> Release {
        if ticket.issuer() != self.origin().get() {
            return Release::Stale;
        }
        #[cfg(target_pointer_width = "64")]
        {
            let raw: u64 = word.into();
            let l = &W::LAYOUT;
            if outcome == Outcome::Failure
                && let Some(failures) = closed_failures(l, raw)
                && failures + 1 < u64::from(self.config.borrow().get_failure_threshold())
                && raw & l.counter_field_mask() == u64::from(ticket.stamp)
            {
                // A failure that does not trip: one more in the count, no
                // clock read, no transition to report; the same word `apply`
                // computes. If the swap loses a race, the general loop
                // retries from the word it saw.
                // `raw` is exactly `closed(ticket's counter, failures)`: tag
                // and counter were just compared, and a count below the
                // threshold leaves no stray bits above it. One more failure
                // is one unit of the count added, with no unpacking.
                let counted = W::from_u64(raw + l.one_failure());
                return match W::compare_exchange_weak(&self.word, word, counted) {
                    Ok(_) => Release::Recorded,
                    Err(seen) => self.release_from(seen, ticket, outcome),
                };
            }
        }
        self.release_from(word, ticket, outcome)
    }

    #[inline]
    fn release_from(&self, word: W::Raw, ticket: Ticket, outcome: Outcome) -> Release {
        let event = Event::Release {
            counter: ticket.counter(),
            outcome,
        };
        match self.run_from(word, event, None) {
            (_, Kind::Recorded) => Release::Recorded,
            _ => Release::Stale,
        }
    }

    /// Asks to make a call and returns a guard that releases on drop.
    /// Drop it without an outcome and it records the configured abandon
    /// outcome ([`Config::abandon_as`], failure by default).
    #[inline]
    pub fn permit(&self) -> Result<Permit<'_, C, W, O, P>, Rejected> {
        self.acquire().map(|ticket| Permit {
            breaker: self,
            ticket: Some(ticket),
        })
    }

    /// The current status. An `Open` breaker whose time is up, or a `Probing`
    /// one whose probe timed out, becomes `HalfOpen` here (the lazy move the
    /// spec describes); otherwise nothing is written.
    #[inline]
    pub fn status(&self) -> Status {
        match self.run(Event::Status) {
            Verdict::Status(s) => s,
            // `apply` answers a status event with a status; stay safe anyway.
            _ => Status::Closed,
        }
    }

    /// Holds the breaker open until [`force_close`](Self::force_close): no
    /// timer makes it half-open, no probe goes through, and results of calls
    /// admitted before are ignored.
    pub fn force_open(&self) {
        self.run(Event::ForceOpen);
    }

    /// Closes the breaker from any state, resets the failure count and the
    /// backoff, and makes every ticket issued before it stale.
    pub fn force_close(&self) {
        self.run(Event::ForceClose);
    }
}

impl<C, W: Word, O, P: Borrow<Config>> core::fmt::Debug for Breaker<C, W, O, P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Breaker")
            .field("word", &self.snapshot())
            .field("config", self.config())
            .finish_non_exhaustive()
    }
}

/// A guard over an admitted call: report with [`success`](Permit::success),
/// [`failure`](Permit::failure) or [`ignore`](Permit::ignore); dropped
/// without one it records the breaker's abandon outcome.
#[must_use = "dropping a permit at once records the abandon outcome (a failure by default)"]
pub struct Permit<'b, C: Clock, W: Word = W64, O: Observer = (), P: Borrow<Config> = Config> {
    breaker: &'b Breaker<C, W, O, P>,
    ticket: Option<Ticket>,
}

impl<C: Clock, W: Word, O: Observer, P: Borrow<Config>> Permit<'_, C, W, O, P> {
    /// The state counter this permit was issued under.
    pub fn counter(&self) -> u32 {
        self.ticket.as_ref().map_or(0, Ticket::counter)
    }

    /// Whether this permit is the probe of a half-open breaker.
    pub fn is_probe(&self) -> bool {
        self.ticket.as_ref().is_some_and(Ticket::is_probe)
    }

    /// Records a success.
    pub fn success(self) -> Release {
        self.finish(Outcome::Success)
    }

    /// Records a failure.
    pub fn failure(self) -> Release {
        self.finish(Outcome::Failure)
    }

    /// Records an outcome that says nothing about the dependency.
    pub fn ignore(self) -> Release {
        self.finish(Outcome::Ignored)
    }

    /// Records `outcome`.
    pub fn finish(mut self, outcome: Outcome) -> Release {
        self.settle(outcome)
    }

    /// Gives up the guard and returns the raw ticket, to release by hand.
    pub fn into_ticket(mut self) -> Ticket {
        // Always Some until the guard is consumed; the fallback is unreachable.
        // (Its issuer, address 0, holds no breaker's word.)
        self.ticket.take().unwrap_or(Ticket {
            origin: NonZeroUsize::MIN,
            stamp: 0,
        })
    }

    fn settle(&mut self, outcome: Outcome) -> Release {
        match self.ticket.take() {
            Some(ticket) => self.breaker.release(ticket, outcome),
            None => Release::Stale,
        }
    }
}

impl<C: Clock, W: Word, O: Observer, P: Borrow<Config>> Drop for Permit<'_, C, W, O, P> {
    fn drop(&mut self) {
        self.settle(self.breaker.config().get_abandon());
    }
}

impl<C: Clock, W: Word, O: Observer, P: Borrow<Config>> core::fmt::Debug
    for Permit<'_, C, W, O, P>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Permit")
            .field("ticket", &self.ticket)
            .finish()
    }
}
