//! The pure layer: `(word, event, now, config) -> (new word, verdict,
//! transitions)`.
//!
//! [`apply`] is the whole state machine as a function. It touches no memory
//! but its arguments, calls `now` only when the state needs the time (never for
//! an admission or a status read in `Closed`), and never panics. A
//! [`Breaker`](crate::Breaker) applies it to an atomic word with one
//! compare-and-swap loop; another crate can apply it to any cell that offers
//! compare-and-swap (a shared-memory slot, a database row, an actor's state):
//!
//! ```
//! use tripword::transition::{apply, Event, Verdict};
//! use tripword::word::W64;
//! use tripword::{Config, Outcome};
//!
//! let config = Config::new().failure_threshold(1).open_for(10);
//! let mut word: u64 = 0; // the initial word: Closed, counter 0
//! let step = apply::<W64>(&config, word, Event::Admit, || 0);
//! let Verdict::Admitted { counter, .. } = step.verdict else { unreachable!() };
//! assert_eq!(step.word, word); // admission in Closed writes nothing
//!
//! let step = apply::<W64>(&config, word, Event::Release { counter, outcome: Outcome::Failure }, || 5);
//! assert_eq!(step.transitions.len(), 1); // Closed -> Open, reported once
//! word = step.word; // a real cell would compare-and-swap here
//! assert_eq!(apply::<W64>(&config, word, Event::Admit, || 14).verdict, Verdict::Rejected);
//! assert!(matches!(apply::<W64>(&config, word, Event::Admit, || 15).verdict,
//!                  Verdict::Admitted { probe: true, .. }));
//! ```
//!
//! The transition table is in `docs/design.md`; each row has a unit test
//! below.

use crate::config::Config;
use crate::outcome::Outcome;
use crate::status::Status;
use crate::word::{Layout, Phase, Word, counter_of, tag, tag_of};

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
    /// An operator holds the breaker open.
    ForceOpen,
    /// An operator closes the breaker and resets its policy.
    ForceClose,
    /// Someone reads the status (which may make an elapsed `Open` or `Probing`
    /// half-open).
    Status,
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
    /// Not admitted: the protected call must not run.
    Rejected,
    /// The release counted.
    Recorded,
    /// The release was stale (its state has passed) and changed nothing.
    Stale,
    /// The status after the event.
    Status(Status),
    /// A force event was applied.
    Done,
}

/// A state change, with the counter of the state it entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Transition {
    /// The state left.
    pub from: Phase,
    /// The state entered.
    pub to: Phase,
    /// The state counter of the state entered.
    pub counter: u32,
}

/// `closed -> open (counter 1)`.
///
/// ```
/// use tripword::{Phase, Transition};
/// let t = Transition { from: Phase::Closed, to: Phase::Open, counter: 1 };
/// assert_eq!(t.to_string(), "closed -> open (counter 1)");
/// ```
impl core::fmt::Display for Transition {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} -> {} (counter {})", self.from, self.to, self.counter)
    }
}

/// The transitions one event made: zero, one, or two (an elapsed `Open` or
/// timed-out `Probing` passes through `HalfOpen` on the way to electing the
/// new probe, and both changes are reported).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Transitions {
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

    /// How many transitions there are.
    pub fn len(&self) -> usize {
        self.items.iter().flatten().count()
    }

    /// Whether the event changed no state.
    pub fn is_empty(&self) -> bool {
        self.items[0].is_none()
    }

    /// Calls `f` on each transition in order. Straight-line (no loop), so
    /// that with a no-op `f` the optimiser deletes the derivation too.
    #[inline(always)]
    pub(crate) fn each(self, mut f: impl FnMut(Transition)) {
        if let Some(t) = self.items[0] {
            f(t);
        }
        if let Some(t) = self.items[1] {
            f(t);
        }
    }

    /// The transitions, in the order they happened.
    pub fn iter(&self) -> impl Iterator<Item = Transition> + '_ {
        self.items.iter().flatten().copied()
    }
}

impl IntoIterator for Transitions {
    type Item = Transition;
    type IntoIter = core::iter::Flatten<core::array::IntoIter<Option<Transition>, 2>>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter().flatten()
    }
}

/// The result of applying an event to a word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Step<R> {
    /// The word after the event. Equal to the input when nothing changed:
    /// then there is nothing to store (SPEC I9).
    pub word: R,
    /// What the caller is told.
    pub verdict: Verdict,
    /// The state changes made, each to be reported once.
    pub transitions: Transitions,
    /// `Some(raw)` when the input word was corrupt (SPEC I8): it was replaced
    /// by `Closed` before the event applied; report it once.
    pub repaired: Option<R>,
}

/// Applies `event` to `word` under `config` (which should have passed
/// [`Config::validate::<W>`](Config::validate); if not, the result is still a
/// valid word and nothing panics, but counts may saturate).
///
/// `now` is called at most once, and only when the state needs the time:
/// an admission in `Open`, `Probing` or `HalfOpen` (to test the deadline or
/// stamp the probe), a status read in `Open` or `Probing`, a current release
/// in `Probing`, and a failure that trips; never an admission, success or
/// status in `Closed`, never a stale release or a force.
#[inline]
pub fn apply<W: Word>(
    config: &Config,
    word: W::Raw,
    event: Event,
    now: impl FnOnce() -> u64,
) -> Step<W::Raw> {
    let old: u64 = word.into();
    let out = kernel(&W::LAYOUT, config, old, event, now);
    Step {
        word: W::from_u64(out.word),
        verdict: out.verdict.verdict(&W::LAYOUT, out.word),
        transitions: transitions(&W::LAYOUT, old, &out),
        repaired: out.repaired.then_some(word),
    }
}

/// What [`kernel`] decided: the word after the event, the verdict's kind,
/// and whether the input word was corrupt.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Out {
    pub(crate) word: u64,
    pub(crate) verdict: Kind,
    pub(crate) repaired: bool,
}

/// A [`Verdict`] without its payload, which the word after the event
/// determines: an admission's counter is the new word's (unchanged in
/// `Closed`, the next one for an elected probe), it is the probe exactly when
/// the new word is `Probing`, and a status is the new word's phase. The
/// kernel returns this one byte, so its result fits in registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Admitted,
    Rejected,
    Recorded,
    Stale,
    Status,
    Done,
}

impl Kind {
    /// The full verdict, given the word after the event.
    #[inline(always)]
    pub(crate) const fn verdict(self, l: &Layout, word: u64) -> Verdict {
        match self {
            Kind::Admitted => Verdict::Admitted {
                counter: counter_of(l, word),
                probe: tag_of(word) == tag::PROBING,
            },
            Kind::Rejected => Verdict::Rejected,
            Kind::Recorded => Verdict::Recorded,
            Kind::Stale => Verdict::Stale,
            Kind::Status => Verdict::Status(Layout::phase_of(word).status()),
            Kind::Done => Verdict::Done,
        }
    }
}

/// The state machine on raw bits: the breaker's hot path and the heart of
/// [`apply`]. It builds no [`Snapshot`](crate::word::Snapshot) and no
/// [`Transitions`]; those are derived from the input and output words by
/// [`transitions`], only when someone wants them. `#[inline(always)]` so the
/// layout's shifts and masks become constants and each caller keeps only the
/// arms of its own event.
#[inline(always)]
pub(crate) fn kernel(
    l: &Layout,
    config: &Config,
    word: u64,
    event: Event,
    now: impl FnOnce() -> u64,
) -> Out {
    // A corrupt word becomes `Closed` with the next counter, so no ticket
    // issued before the corruption can count (fail open, SPEC I8).
    let repaired = !l.is_valid(word, config.get_failure_threshold());
    let w = if repaired {
        l.closed(l.next_counter(counter_of(l, word)), 0)
    } else {
        word
    };
    let (word, verdict) = decide(l, config, w, event, now);
    Out {
        word,
        verdict,
        repaired,
    }
}

/// Whether an `Open` word's time is up or a `Probing` word's probe has timed
/// out at `now`.
///
/// With backoff the open time is `min(cap, open_for << (trips - 1))`
/// ([`Config::open_duration`]); rather than build that limit in `u64`, this
/// tests `elapsed >= cap || elapsed >> (trips - 1) >= open_for`, which is
/// the same condition (`x >= a * 2^d` iff `x >> d >= a` for integers) and
/// shifts only the narrow elapsed time: on a 32-bit MCU it saves a 64-bit
/// variable shift.
#[inline(always)]
pub(crate) fn lapsed(l: &Layout, config: &Config, w: u64, now: u64) -> bool {
    let elapsed = l.elapsed(l.since_of(w), now);
    if tag_of(w) != tag::OPEN {
        return elapsed >= config.get_probe_timeout();
    }
    match config.get_backoff_cap() {
        None => elapsed >= config.get_open_for(),
        Some(cap) => {
            // trips <= 31 (the widest trips field), so the shift is in range.
            let doublings = l.trips_of(w).saturating_sub(1);
            let scaled = if l.time_bits <= 32 {
                u64::from((elapsed as u32).checked_shr(doublings).unwrap_or(0))
            } else {
                elapsed.checked_shr(doublings).unwrap_or(0)
            };
            elapsed >= cap || scaled >= config.get_open_for()
        }
    }
}

/// `event` on the valid word `w`. Each arm is a row of the transition table
/// in `docs/design.md`.
///
/// Shaped for size as much as for speed: whether the event needs the time is
/// decided first, so the clock is read at one place; an `Open` whose time is
/// up or a `Probing` whose probe timed out is then moved to `HalfOpen` at one
/// place (the lazy move of SPEC.md), and the event applies to the result. A
/// release from the timed-out probe then carries the old counter and is
/// stale, as it must be.
#[inline(always)]
fn decide(
    l: &Layout,
    config: &Config,
    mut w: u64,
    event: Event,
    now: impl FnOnce() -> u64,
) -> (u64, Kind) {
    let tag = tag_of(w);
    let timed = tag == tag::OPEN || tag == tag::PROBING;
    let current = |ticket: u32| ticket == counter_of(l, w);
    let needs_time = match event {
        Event::Admit => timed || tag == tag::HALF_OPEN,
        Event::Status => timed,
        Event::Release { counter, outcome } => {
            current(counter)
                && (tag == tag::PROBING
                    || (tag == tag::CLOSED
                        && outcome == Outcome::Failure
                        && (l.payload_of(w) as u32).saturating_add(1)
                            >= config.get_failure_threshold()))
        }
        Event::ForceOpen | Event::ForceClose => false,
    };
    let now = if needs_time { now() } else { 0 };
    if timed && needs_time && lapsed(l, config, w, now) {
        w = l.half_open(l.next_counter(counter_of(l, w)), l.trips_of(w));
    }

    let tag = tag_of(w);
    let counter = counter_of(l, w);
    let next = l.next_counter(counter);
    let trips = l.trips_of(w);
    match event {
        Event::Admit => match tag {
            tag::CLOSED => (w, Kind::Admitted),
            // The single probe is elected: Probing since now.
            tag::HALF_OPEN => (l.timed(true, next, now, trips), Kind::Admitted),
            _ => (w, Kind::Rejected),
        },
        Event::Release {
            counter: ticket,
            outcome,
        } => {
            if ticket != counter {
                return (w, Kind::Stale);
            }
            let word = match (tag, outcome) {
                (tag::CLOSED, Outcome::Success) => l.closed(counter, 0),
                (tag::CLOSED, Outcome::Ignored) => w,
                (tag::CLOSED, Outcome::Failure) => {
                    let failures = (l.payload_of(w) as u32).saturating_add(1);
                    if failures >= config.get_failure_threshold() {
                        l.timed(false, next, now, 1)
                    } else {
                        l.closed(counter, failures)
                    }
                }
                (tag::PROBING, Outcome::Success) => l.closed(next, 0),
                (tag::PROBING, Outcome::Failure) => {
                    l.timed(false, next, now, trips.saturating_add(1))
                }
                (tag::PROBING, Outcome::Ignored) => l.half_open(next, trips),
                // No ticket is ever issued with the counter of Open, HalfOpen
                // or ForcedOpen: a release that matches one is a ticket that
                // survived a full counter wrap, and must not act.
                _ => return (w, Kind::Stale),
            };
            (word, Kind::Recorded)
        }
        Event::ForceOpen => {
            let word = if tag == tag::FORCED_OPEN {
                w
            } else {
                l.forced_open(next)
            };
            (word, Kind::Done)
        }
        Event::ForceClose => (l.closed(next, 0), Kind::Done),
        Event::Status => (w, Kind::Status),
    }
}

/// The transitions from `old` to the kernel's output, derived from the two
/// words: every change moves the counter by one (SPEC I10), and the only
/// event that makes two (an elapsed `Open` or timed-out `Probing` electing a
/// probe) passes through `HalfOpen`. A repaired word starts from `Closed`
/// with the counter after the corrupt one.
#[inline]
pub(crate) fn transitions(l: &Layout, old: u64, out: &Out) -> Transitions {
    let (from, base) = if out.repaired {
        (Phase::Closed, l.next_counter(counter_of(l, old)))
    } else {
        (Layout::phase_of(old), counter_of(l, old))
    };
    let to = Layout::phase_of(out.word);
    let counter = counter_of(l, out.word);
    let mut ts = Transitions::NONE;
    match counter.wrapping_sub(base) & l.max_counter() {
        0 => {}
        1 => ts.push(Transition { from, to, counter }),
        _ => {
            let middle = l.next_counter(base);
            ts.push(Transition {
                from,
                to: Phase::HalfOpen,
                counter: middle,
            });
            ts.push(Transition {
                from: Phase::HalfOpen,
                to,
                counter,
            });
        }
    }
    ts
}

#[cfg(test)]
mod tests;
