//! The pure layer: `(config, word, event, now) -> (new word, verdict,
//! transitions)`.
//!
//! [`apply`] is the whole state machine as a function. It touches no memory
//! but its arguments, calls `now` only when the state needs the time (never for
//! an admission in `Closed`), and never panics. [`status_at`] is the read a
//! status makes. A [`Breaker`](crate::Breaker) applies the state machine to an
//! atomic word through [`cell::update`](crate::cell::update), the public
//! compare-and-swap loop; another crate can apply it to any cell that offers
//! compare-and-swap (a shared-memory slot, a database row, a Redis key) the
//! same way:
//!
//! ```
//! use tripword::transition::{apply, Event, Verdict};
//! use tripword::{Config, Outcome, W64};
//!
//! let config = Config::new().failure_threshold(1).open_for(10).check::<W64>()?;
//! let mut word: u64 = 0; // the initial word: Closed, counter 0
//! let step = apply(&config, word, Event::Admit, || 0);
//! let Verdict::Admitted { counter, .. } = step.verdict else { unreachable!() };
//! assert_eq!(step.word, word); // admission in Closed writes nothing
//!
//! let step = apply(&config, word, Event::Release { counter, outcome: Outcome::Failure }, || 5);
//! assert_eq!(step.transitions.len(), 1); // Closed -> Open, reported once
//! word = step.word; // a real cell would compare-and-swap here
//! let Verdict::Rejected(r) = apply(&config, word, Event::Admit, || 14).verdict else { unreachable!() };
//! assert_eq!(r.retry_after(), Some(1));
//! assert!(matches!(apply(&config, word, Event::Admit, || 15).verdict,
//!                  Verdict::Admitted { probe: true, .. }));
//! # Ok::<(), tripword::ConfigError>(())
//! ```
//!
//! The transition table is in `docs/design.md`; each row has a unit test
//! below.

use crate::config::ValidConfig;
use crate::outcome::Outcome;
use crate::recovery;
use crate::rejected::{Rejected, units_left};
use crate::status::{Health, Status};
use crate::word::{
    Layout, Phase, RECOVERY, Snapshot, State, Word, counter_of, has_deadline, tag, tag_of,
};

/// Something that happens to a breaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// A caller asks to be admitted.
    Admit,
    /// An admitted call reports, with the counter its admission returned.
    Release {
        /// The counter from [`Verdict::Admitted`].
        counter: u32,
        /// How the call went.
        outcome: Outcome,
    },
    /// An admitted call failed and says how long the breaker should stay
    /// open if this failure opens it (a `Retry-After`): as a failure, except
    /// that a trip or a probe's failure opens the breaker until `open_for`
    /// ticks from now instead of for the configured open time.
    FailureFor {
        /// The counter from [`Verdict::Admitted`].
        counter: u32,
        /// How long to stay open, in ticks; clamped to half the word's ring
        /// ([`ValidConfig::longest_hint`]).
        open_for: u64,
    },
    /// An operator holds the breaker open.
    ForceOpen,
    /// An operator opens the breaker now for `open_for` ticks (clamped as
    /// for [`Event::FailureFor`]); then it becomes half-open as after a
    /// trip.
    ForceOpenFor {
        /// How long to stay open, in ticks.
        open_for: u64,
    },
    /// An operator closes the breaker and resets its policy.
    ForceClose,
}

/// What the event's caller is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Admitted; release later with this counter. `probe` when this caller is
    /// the single probe of a half-open breaker.
    Admitted {
        /// The state counter to release with.
        counter: u32,
        /// Whether this admission is the breaker's probe.
        probe: bool,
    },
    /// Not admitted: the protected call must not run. Says why and for how
    /// long.
    Rejected(Rejected),
    /// The release counted.
    Recorded,
    /// The release was stale (its state has passed) and changed nothing.
    Stale,
    /// A force event was applied.
    Done,
}

/// A state change, with the counter of the state it entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Transition {
    /// The state left.
    pub from: Status,
    /// The state entered.
    pub to: Status,
    /// The state counter of the state entered.
    pub counter: u32,
    /// Whether the state entered or left is the operator-held open of
    /// [`force_open`](crate::Breaker::force_open) (which reads as
    /// [`Status::Open`]).
    pub forced: bool,
}

impl Transition {
    pub(crate) const fn between(from: Phase, to: Phase, counter: u32) -> Transition {
        Transition {
            from: from.status(),
            to: to.status(),
            counter,
            forced: matches!(from, Phase::ForcedOpen) || matches!(to, Phase::ForcedOpen),
        }
    }
}

/// `closed -> open (counter 1)`; a forced change says so.
///
/// ```
/// use tripword::{Status, Transition};
/// let t = Transition { from: Status::Closed, to: Status::Open, counter: 1, forced: false };
/// assert_eq!(t.to_string(), "closed -> open (counter 1)");
/// let t = Transition { forced: true, ..t };
/// assert_eq!(t.to_string(), "closed -> open (forced, counter 1)");
/// ```
impl core::fmt::Display for Transition {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let forced = if self.forced { "forced, " } else { "" };
        write!(
            f,
            "{} -> {} ({forced}counter {})",
            self.from, self.to, self.counter
        )
    }
}

/// The transitions one event made: zero, one, or two (an elapsed `Open` or
/// timed-out `Probing` passes through `HalfOpen` on the way to electing the
/// new probe, and both changes are reported).
///
/// An [`Iterator`] over them in the order they happened (exact-size, fused,
/// double-ended), so `for t in swap.transitions()`, `.count()`, `.collect()`
/// and the other adapters work on it directly. It is `Copy`: iterating a
/// copy (a `for` loop over [`Step::transitions`], or [`iter`](Self::iter))
/// leaves the original as it was.
///
/// ```
/// use tripword::transition::{apply, Event, Verdict};
/// use tripword::{Config, Outcome, Status, W64};
///
/// let config = Config::new().failure_threshold(1).open_for(10).check::<W64>()?;
/// let Verdict::Admitted { counter, .. } = apply(&config, 0u64, Event::Admit, || 0).verdict else { unreachable!() };
/// let tripped = apply(&config, 0u64, Event::Release { counter, outcome: Outcome::Failure }, || 0);
/// // Elapsed: one admission passes through half-open and elects the probe.
/// let mut ts = apply(&config, tripped.word, Event::Admit, || 10).transitions;
/// assert_eq!(ts.len(), 2);
/// assert_eq!(ts.next().map(|t| (t.from, t.to)), Some((Status::Open, Status::HalfOpen)));
/// assert_eq!(ts.len(), 1);
/// assert_eq!(ts.next().map(|t| t.to), Some(Status::Probing));
/// assert_eq!(ts.next(), None);
/// assert!(ts.is_empty());
/// # Ok::<(), tripword::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Transitions {
    // The transitions left, in order: `items[1]` is `None` whenever
    // `items[0]` is (so two values with the same transitions left are equal).
    items: [Option<Transition>; 2],
}

impl Transitions {
    const NONE: Transitions = Transitions {
        items: [None, None],
    };

    fn push(&mut self, t: Transition) {
        if self.items[0].is_none() {
            self.items[0] = Some(t);
        } else {
            self.items[1] = Some(t);
        }
    }

    /// Whether no transition is left (for a fresh value: whether the event
    /// changed no state).
    pub const fn is_empty(&self) -> bool {
        self.items[0].is_none()
    }

    /// Calls `f` on each transition left, in order. Straight-line (no loop),
    /// so that with a no-op `f` the optimiser deletes the derivation too.
    #[inline(always)]
    pub fn each(self, mut f: impl FnMut(Transition)) {
        if let Some(t) = self.items[0] {
            f(t);
        }
        if let Some(t) = self.items[1] {
            f(t);
        }
    }

    /// The transitions left, in the order they happened, as an iterator of
    /// their own: a copy, so `self` is not advanced.
    ///
    /// ```
    /// # use tripword::transition::{apply, Event};
    /// # use tripword::{Config, W64};
    /// # let config = Config::new().check::<W64>()?;
    /// let ts = apply(&config, 0u64, Event::ForceOpen, || 0).transitions;
    /// assert_eq!(ts.iter().count(), 1);
    /// assert_eq!(ts.len(), 1); // not advanced
    /// # Ok::<(), tripword::ConfigError>(())
    /// ```
    #[inline]
    pub const fn iter(&self) -> Transitions {
        *self
    }
}

impl Iterator for Transitions {
    type Item = Transition;

    #[inline]
    fn next(&mut self) -> Option<Transition> {
        let first = self.items[0].take();
        self.items[0] = self.items[1].take();
        first
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.items[0].is_some() as usize + self.items[1].is_some() as usize;
        (n, Some(n))
    }
}

impl DoubleEndedIterator for Transitions {
    #[inline]
    fn next_back(&mut self) -> Option<Transition> {
        match self.items[1].take() {
            Some(last) => Some(last),
            None => self.items[0].take(),
        }
    }
}

impl ExactSizeIterator for Transitions {}

impl core::iter::FusedIterator for Transitions {}

/// `for t in &transitions` iterates a copy, leaving `transitions` as it was.
impl IntoIterator for &Transitions {
    type Item = Transition;
    type IntoIter = Transitions;

    #[inline]
    fn into_iter(self) -> Transitions {
        *self
    }
}

/// The result of applying an event to a word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Step<R> {
    /// The word after the event. Equal to the input when nothing changed:
    /// then there is nothing to store (spec I9).
    pub word: R,
    /// What the caller is told.
    pub verdict: Verdict,
    /// The state changes made, each to be reported once.
    pub transitions: Transitions,
    /// `Some(raw)` when the input word was corrupt (spec I8): it was replaced
    /// by `Closed` before the event applied; report it once.
    pub repaired: Option<R>,
}

/// Applies `event` to `word` under `config`, with every report derived: the
/// reference form of the state machine. [`cell::update`](crate::cell::update)
/// runs the same decision inside a compare-and-swap loop.
///
/// `now` is called at most once, and only when the state needs the time:
/// an admission in `Open`, `Probing` or `HalfOpen` (to test the deadline or
/// stamp the probe), a current release in `Probing`, and a failure that
/// trips; never an admission or success in `Closed`, never a stale release
/// or a force.
#[inline]
pub fn apply<W: Word>(
    config: &ValidConfig<W>,
    word: W::Raw,
    event: Event,
    now: impl FnOnce() -> u64,
) -> Step<W::Raw> {
    let old: u64 = word.into();
    let mut read = 0;
    let out = next_word(&W::LAYOUT, config, old, event, || {
        read = now();
        read
    });
    let verdict = match out.decision {
        Decision::Rejected => Verdict::Rejected(Rejected::waiting(
            out.word,
            Rejected::wait::<W>(out.left, config.time_shift(), read),
        )),
        d => d.verdict::<W>(W::from_u64(out.word)),
    };
    Step {
        word: W::from_u64(out.word),
        verdict,
        transitions: transitions(&W::LAYOUT, old, out.word, out.repaired),
        repaired: out.repaired.then_some(word),
    }
}

/// What a status read reports for `word` at `now`, storing nothing: an
/// elapsed `Open` or a timed-out `Probing` reads as `HalfOpen` (the move is
/// made, and reported, by the next admission); a corrupt word reads as
/// `Closed`, as the next operation will repair it (spec I8). `now` is called
/// only for `Open` and `Probing`.
#[inline]
pub fn status_at<W: Word>(
    config: &ValidConfig<W>,
    word: W::Raw,
    now: impl FnOnce() -> u64,
) -> Status {
    let l = &W::LAYOUT;
    let w: u64 = word.into();
    let tag = tag_of(w);
    match tag {
        // Every bit pattern of the timed tags is a valid word.
        tag::OPEN | tag::OPEN_UNTIL | tag::PROBING => {
            if lapsed(l, config, w, now()) {
                Status::HalfOpen
            } else if tag == tag::PROBING {
                Status::Probing
            } else {
                Status::Open
            }
        }
        // Valid or corrupt, a `Closed` word reads as `Closed`: so the
        // failure count needs no test against the threshold here.
        tag::HALF_OPEN if l.is_valid(w, 0) => Status::HalfOpen,
        tag::FORCED_OPEN if l.is_valid(w, 0) => Status::Open,
        // A trial with room (or timed out) admits the next caller as a
        // probe; a full one rejects as `Probing` does.
        tag::TRIAL if RECOVERY => {
            let now = now();
            if recovery::trial_left(l, config, w, now) == 0
                || recovery::trial_has_room(l, config, w)
            {
                Status::HalfOpen
            } else {
                Status::Probing
            }
        }
        tag::RAMP if RECOVERY => match recovery::ramp_stage(l, config, w, now()) {
            Some(_) => Status::Recovering,
            None => Status::Closed,
        },
        _ => Status::Closed,
    }
}

/// What `word` says as a [`Health`]: its counts and counter decoded, with
/// `status` as the caller reads it (usually [`status_at`] of the same word
/// and reading) and, when `now` is given, the wait of the rejection an
/// admission at `now` would get ([`apply`]'s). A read: nothing is stored or
/// reported. A corrupt word says only its status (spec I8). What
/// `Breaker::health` returns, for a crate that keeps the word elsewhere.
pub fn health_at<W: Word>(
    config: &ValidConfig<W>,
    word: W::Raw,
    status: Status,
    now: Option<u64>,
) -> Health {
    let Ok(snap) = Snapshot::decode::<W>(word) else {
        return Health::of_status(status);
    };
    let (failures, trips, forced) = match snap.state {
        State::Closed { failures } => (failures, 0, false),
        State::Open { trips, .. }
        | State::HalfOpen { trips }
        | State::Probing { trips, .. }
        | State::OpenUntil { trips, .. }
        | State::Trial { trips, .. }
        | State::Ramp { trips, .. } => (0, trips, false),
        State::ForcedOpen => (0, 0, true),
    };
    let retry_after = now.and_then(
        |now| match apply(config, word, Event::Admit, || now).verdict {
            Verdict::Rejected(rejected) => rejected.retry_after(),
            _ => None,
        },
    );
    Health {
        status,
        counter: Some(snap.counter),
        failures,
        trips,
        window_calls: 0,
        window_failures: 0,
        forced,
        retry_after,
    }
}

/// What [`next_word`] decided: the word after the event, the decision, and
/// whether the input word was corrupt.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawStep {
    pub(crate) word: u64,
    pub(crate) decision: Decision,
    pub(crate) repaired: bool,
    /// For a rejected admission of a timed word: the units left before it
    /// lapses (what the rejection's wait is made of); 0 otherwise.
    pub(crate) left: u64,
}

/// A [`Verdict`] without its payload, which the word after the event
/// determines: an admission's counter is the new word's (unchanged in
/// `Closed`, the next one for an elected probe), it is the probe exactly when
/// the new word is `Probing`. One byte, so that the CAS loop's result fits
/// in two registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Admitted.
    Admitted,
    /// Not admitted.
    Rejected,
    /// The release counted.
    Recorded,
    /// The release was stale.
    Stale,
    /// A force event was applied.
    Done,
}

impl Decision {
    /// The full verdict, given the word after the event; a rejection's wait
    /// needs the clock reading too ([`cell::Applied::verdict`] has it), so
    /// here it is not known and reads as 0.
    ///
    /// [`cell::Applied::verdict`]: crate::cell::Applied::verdict
    #[inline(always)]
    pub(crate) fn verdict<W: Word>(self, word: W::Raw) -> Verdict {
        let l = &W::LAYOUT;
        let word: u64 = word.into();
        match self {
            Decision::Admitted => Verdict::Admitted {
                counter: counter_of(l, word),
                probe: tag_of(word) == tag::PROBING || (RECOVERY && tag_of(word) == tag::TRIAL),
            },
            Decision::Rejected => Verdict::Rejected(Rejected::waiting(word, 0)),
            Decision::Recorded => Verdict::Recorded,
            Decision::Stale => Verdict::Stale,
            Decision::Done => Verdict::Done,
        }
    }
}

/// The state machine on raw bits: the hot path of [`cell::update`] and the
/// heart of [`apply`]. It builds no [`Snapshot`](crate::word::Snapshot) and
/// no [`Transitions`]; those are derived from the input and output words by
/// [`transitions`], only when someone wants them. `#[inline(always)]` so the
/// layout's shifts and masks become constants and each caller keeps only the
/// arms of its own event.
///
/// [`cell::update`]: crate::cell::update
#[inline(always)]
pub(crate) fn next_word<W: Word>(
    l: &Layout,
    config: &ValidConfig<W>,
    word: u64,
    event: Event,
    now: impl FnOnce() -> u64,
) -> RawStep {
    // A corrupt word becomes `Closed` with the next counter, so no ticket
    // issued before the corruption can count (fail open, spec I8).
    let repaired = !l.is_valid(word, config.failure_threshold());
    let w = if repaired {
        l.closed(l.next_counter(counter_of(l, word)), 0)
    } else {
        word
    };
    let (word, decision, left) = decide_valid(l, config, w, event, now);
    RawStep {
        word,
        decision,
        repaired,
        left,
    }
}

/// Whether a timed word has lapsed at `now`: an `Open` word's time is up, a
/// `Probing` word's probe has timed out, an `OpenUntil` word's deadline has
/// come.
#[inline(always)]
pub(crate) fn lapsed<W: Word>(l: &Layout, config: &ValidConfig<W>, w: u64, now: u64) -> bool {
    units_left(l, config, w, now) == 0
}

/// `event` on the valid word `w`. Each arm is a row of the transition table
/// in `docs/design.md`.
///
/// Shaped for size as much as for speed: each event is decided in one arm,
/// which reads the clock only where its rows need the time, and tests the
/// deadline (in the shared [`units_left`]) only for a timed word. An `Open`
/// whose time is up or a `Probing` whose probe timed out is moved to
/// `HalfOpen` (the lazy move of the spec) by [`lapse`] before the event
/// applies to it; a release from the timed-out probe is then stale, as it
/// must be.
#[inline(always)]
fn decide_valid<W: Word>(
    l: &Layout,
    config: &ValidConfig<W>,
    w: u64,
    event: Event,
    now: impl FnOnce() -> u64,
) -> (u64, Decision, u64) {
    let tag = tag_of(w);
    let counter = counter_of(l, w);
    let next = l.next_counter(counter);
    let trips = l.trips_of(w);
    let units = |now: u64| l.units_of(now, config.time_shift());
    match event {
        Event::Admit => {
            if tag == tag::CLOSED {
                return (w, Decision::Admitted, 0);
            }
            if tag == tag::FORCED_OPEN {
                return (w, Decision::Rejected, 0);
            }
            if RECOVERY && tag == tag::RAMP {
                return admission(recovery::ramp_admit(l, config, w, now()));
            }
            // Half-open, or timed: the single probe is elected (Probing
            // since now) unless the deadline is still ahead; a trial with
            // room admits another probe.
            let now = now();
            let w = match lapse(l, config, w, now) {
                Ok(w) => w,
                Err(left) if RECOVERY && tag == tag::TRIAL => {
                    return admission(recovery::trial_admit(l, config, w, left));
                }
                Err(left) => return (w, Decision::Rejected, left),
            };
            let next = l.next_counter(counter_of(l, w));
            if RECOVERY && config.recovery().probes > 1 {
                let trial = recovery::trial_start(l, config, next, now, trips);
                return (trial, Decision::Admitted, 0);
            }
            (l.probing(next, units(now), trips), Decision::Admitted, 0)
        }
        Event::Release {
            counter: ticket,
            outcome,
        } => release(l, config, w, ticket, outcome, None, now),
        Event::FailureFor {
            counter: ticket,
            open_for,
        } => {
            let hint = Some(open_for);
            release(l, config, w, ticket, Outcome::Failure, hint, now)
        }
        Event::ForceOpen => {
            let word = if tag == tag::FORCED_OPEN {
                w
            } else {
                l.forced_open(next)
            };
            (word, Decision::Done, 0)
        }
        Event::ForceOpenFor { open_for } => {
            let now = now();
            // As after a trip: the trips so far (at least one) are kept for
            // the backoff of the next open time.
            let trips = if tag != tag::CLOSED && tag != tag::FORCED_OPEN {
                trips.max(1)
            } else {
                1
            };
            // An elapsed `Open` or timed-out `Probing` is `HalfOpen` first.
            let w = lapse(l, config, w, now).unwrap_or(w);
            let until = units(now).wrapping_add(config.hint_units(open_for));
            let next = l.next_counter(counter_of(l, w));
            (l.open_until(next, until, trips), Decision::Done, 0)
        }
        Event::ForceClose => (l.closed(next, 0), Decision::Done, 0),
    }
}

/// A recovery state's admission as the kernel's answer.
#[inline(always)]
fn admission(a: recovery::Admission) -> (u64, Decision, u64) {
    match a {
        recovery::Admission::Admitted(word) => (word, Decision::Admitted, 0),
        recovery::Admission::Rejected(word, left) => (word, Decision::Rejected, left),
    }
}

/// The lazy move of a timed word at `now`: `Ok` with the word to apply the
/// event to (`HalfOpen` with the next counter, if `w` is an `Open` whose
/// time is up or a `Probing` whose probe timed out; `w` itself if it is not
/// timed), or `Err` with the units left before it lapses.
#[inline(always)]
fn lapse<W: Word>(l: &Layout, config: &ValidConfig<W>, w: u64, now: u64) -> Result<u64, u64> {
    if !has_deadline(tag_of(w)) {
        return Ok(w);
    }
    match units_left(l, config, w, now) {
        0 => Ok(l.half_open(l.next_counter(counter_of(l, w)), l.trips_of(w))),
        left => Err(left),
    }
}

/// A release (`hint`: `None`) or a `failure_for` (`hint`: the open time it
/// asks for, in ticks) of the ticket with counter `ticket` on the valid word
/// `w`. Only `Closed` and `Probing` words accept one: no ticket is ever
/// issued with the counter of `Open`, `HalfOpen` or `ForcedOpen`, so a
/// release that matches one is a ticket that survived a full counter wrap,
/// and must not act. The clock is read for a trip and in `Probing` only.
#[inline(always)]
fn release<W: Word>(
    l: &Layout,
    config: &ValidConfig<W>,
    w: u64,
    ticket: u32,
    outcome: Outcome,
    hint: Option<u64>,
    now: impl FnOnce() -> u64,
) -> (u64, Decision, u64) {
    let tag = tag_of(w);
    let counter = counter_of(l, w);
    // The counter first, as without the recovery states (the same code
    // when the feature is off).
    if ticket != counter
        || (tag != tag::CLOSED
            && tag != tag::PROBING
            && !(RECOVERY && (tag == tag::TRIAL || tag == tag::RAMP)))
    {
        return (w, Decision::Stale, 0);
    }
    let next = l.next_counter(counter);
    let trips = l.trips_of(w);
    let word = if tag == tag::CLOSED {
        match outcome {
            Outcome::Success => l.closed(counter, 0),
            Outcome::Ignored => w,
            Outcome::Failure => {
                let failures = (l.payload_of(w) as u32).saturating_add(1);
                if failures >= config.failure_threshold() {
                    trip(l, config, next, now(), 1, hint)
                } else {
                    l.closed(counter, failures)
                }
            }
        }
    } else if RECOVERY && tag == tag::RAMP {
        // The ramp counts its admitted calls' failures, reading the clock
        // only for a trip.
        match recovery::ramp_release(l, config, w, outcome) {
            Ok(word) => word,
            Err(trips) => trip(l, config, next, now(), trips, hint),
        }
    } else {
        // The probe's result counts only before its timeout.
        let now = now();
        if let Ok(lapsed) = lapse(l, config, w, now) {
            return (lapsed, Decision::Stale, 0);
        }
        if RECOVERY && tag == tag::TRIAL {
            match recovery::trial_release(l, config, w, outcome, now) {
                None => return (w, Decision::Stale, 0),
                Some(Ok(word)) => word,
                Some(Err(trips)) => trip(l, config, next, now, trips, hint),
            }
        } else {
            match outcome {
                Outcome::Success => recovery::recovered(l, config, next, now, trips),
                Outcome::Failure => trip(l, config, next, now, trips.saturating_add(1), hint),
                Outcome::Ignored => l.half_open(next, trips),
            }
        }
    };
    (word, Decision::Recorded, 0)
}

/// The word a trip at `now` stores: `Open` since now, or, with a hint (a
/// `failure_for`), open until now + hint.
#[inline(always)]
fn trip<W: Word>(
    l: &Layout,
    config: &ValidConfig<W>,
    next: u32,
    now: u64,
    trips: u32,
    hint: Option<u64>,
) -> u64 {
    let stamp = l.units_of(now, config.time_shift());
    match hint {
        None => l.open(next, stamp, trips),
        Some(ticks) => l.open_until(next, stamp.wrapping_add(config.hint_units(ticks)), trips),
    }
}

/// The transitions from `old` to `new`, derived from the two words: every
/// change moves the counter by one (spec I10), and the only event that makes
/// two (an elapsed `Open` or timed-out `Probing` electing a probe) passes
/// through `HalfOpen`. A repaired word starts from `Closed` with the counter
/// after the corrupt one.
#[inline]
pub(crate) fn transitions(l: &Layout, old: u64, new: u64, repaired: bool) -> Transitions {
    let (from, base) = if repaired {
        (Phase::Closed, l.next_counter(counter_of(l, old)))
    } else {
        (Layout::phase_of(old), counter_of(l, old))
    };
    let to = Layout::phase_of(new);
    let counter = counter_of(l, new);
    let mut ts = Transitions::NONE;
    match counter.wrapping_sub(base) & l.max_counter() {
        0 => {}
        1 => ts.push(Transition::between(from, to, counter)),
        _ => {
            let middle = l.next_counter(base);
            ts.push(Transition::between(from, Phase::HalfOpen, middle));
            ts.push(Transition::between(Phase::HalfOpen, to, counter));
        }
    }
    ts
}

#[cfg(test)]
mod tests;
