//! The atomic layer: a [`Breaker`] keeps the word in one atomic cell and
//! applies the pure layer to it with one compare-and-swap loop.
//!
//! Every operation is: load the word, compute the step with
//! [`transition::apply`], and if the word changes, `compare_exchange_weak` it,
//! retrying with the value observed. When nothing changes nothing is written
//! (spec I9): a closed admission is one atomic load. Transitions are reported
//! to the [`Observer`] after the successful swap (spec I7).
//!
//! Lock-free wherever the word's atomic is ([`Word::IS_ALWAYS_LOCK_FREE`]);
//! never blocks, never allocates, so it can be called from an interrupt
//! handler on targets with native compare-and-swap.

use crate::cell::{self, Cell};
use crate::clock::Clock;
use crate::config::{Config, ConfigSource, Const, ValidConfig};
use crate::observer::{Observer, admitted, released};
use crate::outcome::Outcome;
use crate::rejected::Rejected;
#[cfg(target_pointer_width = "64")]
use crate::rejected::units_left;
use crate::status::{Health, Status};
use crate::ticket::{Release, Ticket};
use crate::transition::{self, Decision, Event};
use crate::word::{
    Corruption, RECOVERY, Snapshot, TAG_BITS, TAG_PROBING, TAG_TRIAL, W32, W64, Word, tag_of,
};
#[cfg(target_pointer_width = "64")]
use crate::word::{TAG_CLOSED, TAG_FORCED_OPEN, closed_failures, is_timed};
use core::num::NonZeroUsize;

mod folded;
use folded::{Common, Folded};

/// How many `spin_loop` hints a failure waits after losing its count's
/// exchange to another writer, before it reads the word again: about 0.4 µs
/// on the machine it was measured on (`docs/design.md`, "Backoff in the
/// failure count").
// Not under loom, whose models keep the reread and leave out the wait.
#[cfg(all(target_pointer_width = "64", not(tripword_loom)))]
pub(crate) const BACKOFF_SPINS: u32 = 16;

/// The word a failure's count retries from after
/// `compare_exchange_weak(current, ..)` failed and saw `seen`.
///
/// A spurious failure (`seen == current`: an LL/SC reservation lost to an
/// interrupt) retries at once from `seen`. A real one means another writer
/// won: the loser waits [`BACKOFF_SPINS`] hints and then reads the word
/// again (`reload`), so that the winner, whose core holds the cache line,
/// makes its next calls without the line moving, instead of two cores taking
/// it from each other on every failure. The word read again is one the
/// breaker held after `seen`: retrying from it is retrying from `seen`, only
/// later. Under loom the wait is left out and the read kept, so the models
/// explore the reread.
#[cfg(target_pointer_width = "64")]
#[cold]
#[inline(never)]
pub(crate) fn backoff<R: Copy + PartialEq>(current: R, seen: R, reload: impl FnOnce() -> R) -> R {
    if seen == current {
        return seen;
    }
    #[cfg(not(tripword_loom))]
    for _ in 0..BACKOFF_SPINS {
        core::hint::spin_loop();
    }
    reload()
}

/// A circuit breaker in one atomic word.
///
/// `C` is the [`Clock`], `W` the word width ([`W64`] by default, [`W32`] for
/// MCUs with 32-bit atomics), `O` the [`Observer`] (none by default), `P`
/// where the [`ValidConfig`] lives ([`ConfigSource`]): inline by default, in a
/// `static` ([`StaticBreaker`]) so a `static` breaker keeps its config in
/// flash, or compiled into the code ([`ConstBreaker`]).
///
/// Two constructors: [`Breaker::new`], the direct form (64-bit word, no
/// observer, config checked where it is built), and [`Breaker::from_parts`]
/// for every other form. Both are `const`.
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
/// assert_eq!(B.status(), Status::HalfOpen); // a read: stores nothing
/// let probe = B.permit().unwrap();     // exactly one caller becomes the probe
/// assert!(B.permit().is_err());
/// probe.success();
/// assert_eq!(B.status(), Status::Closed);
/// ```
pub struct Breaker<C, W: Word = W64, O = (), P = ValidConfig<W>> {
    pub(crate) word: W::Atomic,
    config: P,
    clock: C,
    observer: O,
}

/// A breaker whose config is a `static` (in flash on an MCU): RAM per breaker
/// is the word, a pointer, and the clock and observer (often zero-sized).
///
/// ```
/// use tripword::{Config, StaticBreaker, ValidConfig, W32};
/// use tripword::clock::ManualClock;
///
/// static CONFIG: ValidConfig<W32> = ValidConfig::new(Config::new().failure_threshold(2));
/// static CLOCK: ManualClock = ManualClock::new(0);
/// static B: StaticBreaker<&ManualClock, W32> = StaticBreaker::from_parts(&CONFIG, &CLOCK, ());
/// assert!(B.acquire().is_ok());
/// ```
pub type StaticBreaker<C, W = W64, O = ()> = Breaker<C, W, O, &'static ValidConfig<W>>;

/// A breaker whose config is the compile-time constant of a [`ConstConfig`]
/// type `T`: RAM per breaker is the word alone (plus the clock and observer,
/// often zero-sized), and the config's values are compiled into the code.
/// Out of range for `W`, it does not build.
///
/// [`ConstConfig`]: crate::ConstConfig
pub type ConstBreaker<T, C, W = W64, O = ()> = Breaker<C, W, O, Const<T>>;

/// A breaker on the 32-bit word, for MCUs whose native atomics are 32-bit.
pub type Breaker32<C, O = ()> = Breaker<C, W32, O>;

impl<C> Breaker<C> {
    constructor! {
        /// A 64-bit breaker with no observer, its config inline: the direct
        /// form. `const`: a breaker can be a `static`.
        ///
        /// # Panics
        /// If `config` is out of range for the 64-bit word; in a `const` or
        /// `static` that is a compile error. For a config read at run time,
        /// check it first ([`Config::check`]) and use
        /// [`from_parts`](Breaker::from_parts).
        pub fn new(config: Config, clock: C) -> Self {
            Breaker {
                word: initial_cell!(W64),
                config: ValidConfig::new(config),
                clock,
                observer: (),
            }
        }
    }
}

impl<C, W: Word, O, P: ConfigSource<W>> Breaker<C, W, O, P> {
    constructor! {
        /// A breaker of any form: word width, observer and where the config
        /// lives ([`ValidConfig<W>`] inline, `&'static ValidConfig<W>`, or
        /// [`Const<T>`]). The config is already valid, so this cannot fail; a
        /// [`Const`] config is checked at compile time, here.
        ///
        /// ```
        /// use tripword::{Breaker, Config, OnTransition, W32};
        /// use tripword::clock::ManualClock;
        ///
        /// static CLOCK: ManualClock = ManualClock::new(0);
        /// static B: Breaker<&ManualClock, W32> =
        ///     Breaker::from_parts(tripword::ValidConfig::new(Config::new().open_for(500)), &CLOCK, ());
        /// assert!(B.acquire().is_ok());
        ///
        /// // A config read at run time: check it, then build.
        /// let config = Config::new().failure_threshold(2).check()?;
        /// let clock = ManualClock::new(0);
        /// let b = Breaker::<_, W32, _>::from_parts(config, &clock, OnTransition(|t| println!("{t}")));
        /// assert!(b.acquire().is_ok());
        /// # Ok::<(), tripword::ConfigError>(())
        /// ```
        pub fn from_parts(config: P, clock: C, observer: O) -> Self {
            // Evaluates the compile-time check of a `Const` config.
            #[allow(clippy::let_unit_value)]
            let () = P::CHECK;
            Breaker {
                word: initial_cell!(W),
                config,
                clock,
                observer,
            }
        }
    }

    /// A breaker whose word starts as `raw` (for the verification crate).
    pub(crate) fn with_word(config: P, clock: C, observer: O, raw: W::Raw) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = P::CHECK;
        Breaker {
            word: W::new_cell(raw),
            config,
            clock,
            observer,
        }
    }

    /// A ticket of this breaker with `counter` (for the verification crate).
    pub(crate) fn forge_ticket(&self, counter: u32, probe: bool) -> Ticket {
        let stamp = (u64::from(counter) << TAG_BITS) & W::LAYOUT.counter_field_mask();
        let origin = self.origin();
        Ticket {
            origin: if probe {
                origin | Ticket::PROBE
            } else {
                origin
            },
            stamp: stamp as usize,
        }
    }

    /// The validated config.
    #[inline(always)]
    pub fn config(&self) -> &ValidConfig<W> {
        self.config.valid()
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The observer.
    pub fn observer(&self) -> &O {
        &self.observer
    }

    /// The decoded word (or why it is corrupt), without acting on time.
    pub fn snapshot(&self) -> Result<Snapshot, Corruption> {
        Snapshot::decode::<W>(self.load())
    }

    #[inline(always)]
    pub(crate) fn load(&self) -> W::Raw {
        match Cell::<W>::load(&self.word) {
            Ok(raw) => raw,
            Err(never) => match never {},
        }
    }

    /// Whether `ticket` is an ordinary (non-probe) ticket of this breaker
    /// whose `Closed` state, with no failures counted, is still the word:
    /// the failure-rate policy's test that a result counts (spec I2).
    #[inline(always)]
    pub(crate) fn closed_current(&self, ticket: &Ticket) -> bool {
        let raw: u64 = self.load().into();
        ticket.origin == self.origin() && raw == ticket.stamp as u64
    }

    /// Whether the word is a `Ramp` (recovery feature) whose counter is the
    /// ticket's: a release the word itself judges, not the failure-rate
    /// window (the ramp counts its own failures, `docs/spec.md`, "The
    /// ramp").
    #[inline(always)]
    pub(crate) fn ramp_current(&self, ticket: &Ticket) -> bool {
        // The feature first: without it, not even the load.
        RECOVERY && {
            let raw: u64 = self.load().into();
            tag_of(raw) == crate::word::TAG_RAMP
                && (raw & W::LAYOUT.counter_field_mask()) as usize == ticket.stamp
        }
    }

    #[inline(always)]
    fn origin(&self) -> NonZeroUsize {
        // Words are at least 4-byte aligned: bit 0 is free for the probe
        // flag of `Ticket::origin`.
        const { assert!(core::mem::align_of::<W::Atomic>() >= 2) };
        // And the counter field fits the ticket's stamp in place.
        const { assert!(TAG_BITS + W::LAYOUT.counter_bits <= 32) };
        core::ptr::NonNull::from(&self.word).addr()
    }
}

impl<C: Clock, W: Word, O: Observer, P: ConfigSource<W>> Breaker<C, W, O, P> {
    /// Runs one event through the CAS loop ([`cell::update`]) from a word
    /// already loaded (by a fast path that could not decide), so the slow
    /// path does not load it again. `now`: the clock as that fast path read
    /// it, after loading `current`, used for the first attempt only, so the
    /// clock is read once. Returns the word the decision left (stored, or
    /// found unchanged), the decision, and the clock reading it rested on
    /// (for a rejection's wait). Inlined into one out-of-line entry per
    /// kind of event (`acquire_from`, `release_from`, the force methods),
    /// where the event is a constant: each keeps only its own arms of the
    /// state machine, and an event a program never raises costs it no code
    /// (`docs/design.md`, "The kernel works on raw bits").
    #[inline(always)]
    fn run_from(&self, current: W::Raw, event: Event, now: Option<u64>) -> cell::Applied<W> {
        cell::update_local(
            &self.word,
            self.config(),
            current,
            event,
            now,
            || self.clock.now(),
            |swap| {
                if let Some(raw) = swap.repaired() {
                    let l = &W::LAYOUT;
                    let counter = l.next_counter(Snapshot::counter_bits::<W>(raw));
                    self.observer.on_corrupt_word(raw.into(), counter);
                }
                swap.transitions().each(|t| self.observer.on_transition(t));
            },
        )
    }

    /// The one out-of-line CAS loop for the common events (admission,
    /// release, force open and close): the event arrives as a [`Common`], so
    /// the state machine's arms for the rare events (`failure_for`,
    /// `force_open_for`) are not in it, and a program that never raises
    /// those carries no code for them. One loop shared by the common events
    /// is the smaller code on an MCU (`docs/design.md`, "The kernel works on
    /// raw bits").
    #[inline(never)]
    fn run_common(
        &self,
        current: W::Raw,
        event: Common,
        counter: u32,
        now: Option<u64>,
    ) -> (W::Raw, Folded) {
        let event = match event {
            Common::Admit => Event::Admit,
            Common::Release(outcome) => Event::Release { counter, outcome },
            Common::ForceOpen => Event::ForceOpen,
            Common::ForceClose => Event::ForceClose,
        };
        let applied = self.run_from(current, event, now);
        (applied.word, Folded::of(&applied))
    }

    /// Asks to make a call. `Ok(ticket)` when admitted (in `Closed`, or as the
    /// single probe of a half-open breaker); `Err(Rejected)` otherwise, with
    /// the cause and the wait, and the protected call must not run. Release
    /// the ticket exactly once.
    ///
    /// In `Closed` this is one atomic load: no store, no clock read. In
    /// `Open` or `Probing` before the deadline it is one load and one clock
    /// read; in `ForcedOpen`, one load.
    #[inline]
    pub fn acquire(&self) -> Result<Ticket, Rejected> {
        // Fast paths (spec I9): they decide what `transition::apply` would,
        // from the raw word, and store nothing.
        let word = self.load();
        let raw: u64 = word.into();
        let l = &W::LAYOUT;
        // On 64-bit targets the bound on the whole word is kept in the
        // config, compared straight from memory; an MCU derives it.
        #[cfg(target_pointer_width = "64")]
        let closed = tag_of(raw) == TAG_CLOSED && raw < self.config().closed_limit();
        #[cfg(not(target_pointer_width = "64"))]
        let closed = l.closed_below(raw, self.config().failure_threshold());
        if closed {
            let ticket = Ticket::admitted(self.origin(), l, raw);
            self.observer.on_admitted(&ticket);
            return Ok(ticket);
        }
        #[cfg(target_pointer_width = "64")]
        {
            // The slow path's answer comes back as two words in registers
            // (a `Result<Ticket, Rejected>` returned out of line goes
            // through memory, and the fast path above would then store its
            // ticket there too, to merge).
            let (origin, bits) = self.acquire_slow_split(word);
            match NonZeroUsize::new(origin) {
                Some(origin) => Ok(Ticket::from_parts(origin, bits)),
                None => Err(Rejected::from_bits(bits)),
            }
        }
        #[cfg(not(target_pointer_width = "64"))]
        self.acquire_slow(word)
    }

    /// [`acquire_slow`](Self::acquire_slow) as two words: the ticket's
    /// origin and stamp, or 0 and the rejection's bits.
    #[cfg(target_pointer_width = "64")]
    #[inline(never)]
    fn acquire_slow_split(&self, word: W::Raw) -> (usize, usize) {
        match self.acquire_slow(word) {
            Ok(ticket) => ticket.into_parts(),
            Err(rejected) => (0, rejected.bits()),
        }
    }

    /// Every admission the inlined closed path cannot decide. Out of line so
    /// that `acquire` stays small enough to inline into callers.
    // Out of line where the fast paths above live (64-bit targets); on
    // 32-bit MCUs, where only the shared loop remains, inline for size.
    #[inline]
    fn acquire_slow(&self, word: W::Raw) -> Result<Ticket, Rejected> {
        #[cfg(target_pointer_width = "64")]
        {
            let raw: u64 = word.into();
            let l = &W::LAYOUT;
            let tag = tag_of(raw);
            if is_timed(tag) {
                // Every bit pattern of these tags is a valid word. The clock
                // is read after the load, as the general loop would.
                let now = self.clock.now();
                let left = units_left(l, self.config(), raw, now);
                if left != 0 {
                    let wait = Rejected::wait::<W>(left, self.config().time_shift(), now);
                    return admitted(&self.observer, Err(Rejected::waiting(raw, wait)));
                }
                // Time is up: the general loop elects the probe with this
                // `now`, so the clock is read once.
                return self.acquire_from(word, Some(now));
            }
            if tag == TAG_FORCED_OPEN && l.payload_of(raw) == 0 {
                return admitted(&self.observer, Err(Rejected::waiting(raw, 0)));
            }
        }
        self.acquire_from(word, None)
    }

    #[inline]
    fn acquire_from(&self, word: W::Raw, now: Option<u64>) -> Result<Ticket, Rejected> {
        let (word, folded) = self.run_common(word, Common::Admit, 0, now);
        let raw: u64 = word.into();
        let result = match folded.rejected() {
            Some(rejected) => Err(rejected),
            None if tag_of(raw) == TAG_PROBING || (RECOVERY && tag_of(raw) == TAG_TRIAL) => {
                Ok(Ticket::probe(self.origin(), &W::LAYOUT, raw))
            }
            None => Ok(Ticket::admitted(self.origin(), &W::LAYOUT, raw)),
        };
        admitted(&self.observer, result)
    }

    /// Reports how an admitted call went. A stale ticket (its state passed, a
    /// probe that timed out, another breaker's ticket) changes nothing and
    /// returns [`Release::Stale`].
    #[inline]
    pub fn release(&self, ticket: Ticket, outcome: Outcome) -> Release {
        // Fast path (spec I9): a success of a (non-probe) ticket of this
        // breaker on a current `Closed` word with no failures counted changes
        // nothing, so stores nothing. That word is exactly the ticket's
        // stamp. One load serves both the fast path and, if it cannot decide,
        // the slow path.
        let word = self.load();
        let raw: u64 = word.into();
        if outcome == Outcome::Success
            && ticket.origin == self.origin()
            && raw == ticket.stamp as u64
        {
            self.observer.on_recorded(Outcome::Success);
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
            return released(&self.observer, outcome, Release::Stale);
        }
        #[cfg(target_pointer_width = "64")]
        if outcome == Outcome::Failure
            && let Some(counted) = self.failure_counted(word, &ticket)
        {
            return match self.word.compare_exchange(word, counted) {
                Ok(()) => released(&self.observer, outcome, Release::Recorded),
                Err(cell::CasError::Changed(seen)) => self.failure_lost(word, seen, ticket),
                Err(cell::CasError::Cell(never)) => match never {},
            };
        }
        self.release_from(word, ticket, outcome)
    }

    /// The word a failure of `ticket` makes from `word` when it does not
    /// trip: `word` with one more failure, if `word` is `ticket`'s own
    /// `Closed` word and the count stays below the threshold; `None` when the
    /// general loop must decide. No clock read, no transition to report; the
    /// same word `apply` computes: `word` is exactly `closed(ticket's
    /// counter, failures)` (tag and counter were just compared, and a count
    /// below the threshold leaves no stray bits above it), so one more
    /// failure is one unit of the count added, with no unpacking.
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    fn failure_counted(&self, word: W::Raw, ticket: &Ticket) -> Option<W::Raw> {
        let raw: u64 = word.into();
        let l = &W::LAYOUT;
        let failures = closed_failures(l, raw)?;
        (failures + 1 < u64::from(self.config().failure_threshold())
            && raw & l.counter_field_mask() == ticket.stamp as u64)
            .then(|| W::from_u64(raw + l.one_failure()))
    }

    /// A failure's count that lost its exchange from `tried` (the breaker
    /// held `seen`): wait if another writer won, read again, and count from
    /// that word, or leave it to the general loop when the word is no longer
    /// one the count can take (docs/design.md, "Backoff in the failure
    /// count"). Out of line, so the uncontended count stays as short as it
    /// was.
    #[cfg(target_pointer_width = "64")]
    #[cold]
    #[inline(never)]
    fn failure_lost(&self, mut tried: W::Raw, mut seen: W::Raw, ticket: Ticket) -> Release {
        let failure = Outcome::Failure;
        loop {
            let word = backoff(tried, seen, || self.load());
            let Some(counted) = self.failure_counted(word, &ticket) else {
                return self.release_from(word, ticket, failure);
            };
            match self.word.compare_exchange(word, counted) {
                Ok(()) => return released(&self.observer, failure, Release::Recorded),
                Err(cell::CasError::Changed(now)) => (tried, seen) = (word, now),
                Err(cell::CasError::Cell(never)) => match never {},
            }
        }
    }

    #[inline]
    /// The failure-rate policy's trip: `ticket`'s failure through the state
    /// machine (on its threshold-1 breaker: a trip if the counter is still
    /// the ticket's, reported to the observer), without the release's own
    /// notification, which the rate policy makes itself. Whether it tripped.
    pub(crate) fn trip_quiet(&self, ticket: &Ticket) -> bool {
        let event = Common::Release(Outcome::Failure);
        self.run_common(self.load(), event, ticket.counter(), None)
            .1
            == Folded::RECORDED
    }

    fn release_from(&self, word: W::Raw, ticket: Ticket, outcome: Outcome) -> Release {
        let event = Common::Release(outcome);
        let release = if self.run_common(word, event, ticket.counter(), None).1 == Folded::RECORDED
        {
            Release::Recorded
        } else {
            Release::Stale
        };
        released(&self.observer, outcome, release)
    }

    /// Reports a failure that says how long to stay open (a `Retry-After`,
    /// a rate limit's reset time): if it trips the breaker, or is the
    /// probe's failure, the breaker stays open until `open_for` ticks from
    /// now instead of for the configured open time, then half-opens as
    /// after a trip. `open_for` is clamped to
    /// [`ValidConfig::longest_hint`] (half the word's ring). A failure that
    /// does not trip counts as any failure; a stale ticket changes nothing.
    ///
    /// ```
    /// use tripword::{Breaker, Cause, Config, Status};
    /// use tripword::clock::ManualClock;
    ///
    /// let clock = ManualClock::new(0);
    /// let b = Breaker::new(Config::new().failure_threshold(1).open_for(100), &clock);
    /// let t = b.acquire().unwrap();
    /// b.release_failure_for(t, 5_000); // "503, Retry-After: 5 s" on a 1 ms tick
    /// clock.advance(100); // the configured open time: still open
    /// assert_eq!(b.acquire().unwrap_err().retry_after(), Some(4_900));
    /// clock.advance(4_900);
    /// assert!(b.acquire().unwrap().is_probe());
    /// ```
    pub fn release_failure_for(&self, ticket: Ticket, open_for: u64) -> Release {
        let failure = Outcome::Failure;
        if ticket.issuer() != self.origin().get() {
            return released(&self.observer, failure, Release::Stale);
        }
        let event = Event::FailureFor {
            counter: ticket.counter(),
            open_for,
        };
        let release = match self.run_from(self.load(), event, None).decision {
            Decision::Recorded => Release::Recorded,
            _ => Release::Stale,
        };
        released(&self.observer, failure, release)
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

    /// The current status: a read that stores nothing and reports nothing.
    /// An `Open` breaker whose time is up, or a `Probing` one whose probe
    /// timed out, reads as `HalfOpen`; the move itself is made, and
    /// reported, by the next admission. The operator-held open reads as
    /// `Open`. One load, and a clock read in `Open` or `Probing`.
    #[inline]
    pub fn status(&self) -> Status {
        let raw = self.load();
        // On 64-bit targets (services: a tower layer reads the status on
        // every request), any `Closed` word, valid or corrupt, reads as
        // `Closed` here, inline, and the other states, their deadlines and
        // the clock, out of line. Firmware keeps the one inline decision,
        // which is smaller (docs/embedded.md, "Footprint").
        #[cfg(target_pointer_width = "64")]
        if tag_of(raw.into()) == TAG_CLOSED {
            return Status::Closed;
        }
        self.status_not_closed(raw)
    }

    /// [`status`](Self::status) past the closed test of 64-bit targets.
    #[cfg_attr(target_pointer_width = "64", cold, inline(never))]
    #[cfg_attr(not(target_pointer_width = "64"), inline(always))]
    fn status_not_closed(&self, raw: W::Raw) -> Status {
        transition::status_at(self.config(), raw, || self.clock.now())
    }

    /// The state as one value (see [`Health`]): a read of the word and the
    /// clock, storing nothing. A corrupt word reads as a blank `Closed`, as
    /// [`status`](Self::status) does (spec I8).
    pub fn health(&self) -> Health {
        let raw = self.load();
        let now = self.clock.now();
        let status = transition::status_at(self.config(), raw, || now);
        transition::health_at(self.config(), raw, status, Some(now))
    }

    /// Holds the breaker open until [`force_close`](Self::force_close): no
    /// timer makes it half-open, no probe goes through, and results of calls
    /// admitted before are ignored.
    pub fn force_open(&self) {
        self.run_common(self.load(), Common::ForceOpen, 0, None);
    }

    /// Opens the breaker now for `open_for` ticks (clamped to
    /// [`ValidConfig::longest_hint`]), from any state; then it becomes
    /// half-open as after a trip. Every ticket issued before is stale. For a
    /// `429` that arrives outside any admitted call, or maintenance with an
    /// end. Transitions report it as `Open` (not `forced`: a timer ends it).
    pub fn force_open_for(&self, open_for: u64) {
        self.run_from(self.load(), Event::ForceOpenFor { open_for }, None);
    }

    /// Closes the breaker from any state, resets the failure count and the
    /// backoff, and makes every ticket issued before it stale.
    pub fn force_close(&self) {
        self.run_common(self.load(), Common::ForceClose, 0, None);
    }
}

impl<C, W: Word, O, P: ConfigSource<W>> core::fmt::Debug for Breaker<C, W, O, P> {
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
pub struct Permit<
    'b,
    C: Clock,
    W: Word = W64,
    O: Observer = (),
    P: ConfigSource<W> = ValidConfig<W>,
> {
    breaker: &'b Breaker<C, W, O, P>,
    ticket: Option<Ticket>,
}

impl<C: Clock, W: Word, O: Observer, P: ConfigSource<W>> Permit<'_, C, W, O, P> {
    /// The state counter this permit was issued under.
    pub fn counter(&self) -> u32 {
        self.ticket.as_ref().map_or(0, Ticket::counter)
    }

    /// Whether this permit is the probe of a half-open breaker.
    pub fn is_probe(&self) -> bool {
        self.ticket.as_ref().is_some_and(Ticket::is_probe)
    }

    /// Records a success.
    #[inline]
    pub fn success(self) -> Release {
        self.finish(Outcome::Success)
    }

    /// Records a failure.
    #[inline]
    pub fn failure(self) -> Release {
        self.finish(Outcome::Failure)
    }

    /// Records a failure that says how long to stay open if it opens the
    /// breaker: see [`Breaker::release_failure_for`].
    pub fn failure_for(mut self, open_for: u64) -> Release {
        match self.ticket.take() {
            Some(ticket) => self.breaker.release_failure_for(ticket, open_for),
            None => Release::Stale,
        }
    }

    /// Records an outcome that says nothing about the dependency.
    #[inline]
    pub fn ignore(self) -> Release {
        self.finish(Outcome::Ignored)
    }

    /// Records `outcome`.
    #[inline]
    pub fn finish(self, outcome: Outcome) -> Release {
        // The guard is consumed here: no drop to run, so no unwinding path
        // keeps it in memory, and it stays in registers.
        let mut this = core::mem::ManuallyDrop::new(self);
        this.settle(outcome)
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

    #[inline]
    fn settle(&mut self, outcome: Outcome) -> Release {
        match self.ticket.take() {
            Some(ticket) => self.breaker.release(ticket, outcome),
            None => Release::Stale,
        }
    }
}

impl<C: Clock, W: Word, O: Observer, P: ConfigSource<W>> Drop for Permit<'_, C, W, O, P> {
    fn drop(&mut self) {
        self.settle(self.breaker.config().abandon());
    }
}

impl<C: Clock, W: Word, O: Observer, P: ConfigSource<W>> core::fmt::Debug
    for Permit<'_, C, W, O, P>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Permit")
            .field("ticket", &self.ticket)
            .finish()
    }
}
