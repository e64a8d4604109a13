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
use crate::word::{Layout, Phase, Snapshot, State, Word, counter_of, decode_u64, encode_u64};

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
/// a trip (to timestamp `Open`), any event on `Open` or `Probing` but a force,
/// never an admission, success or status in `Closed`.
#[inline]
pub fn apply<W: Word>(
    config: &Config,
    word: W::Raw,
    event: Event,
    now: impl FnOnce() -> u64,
) -> Step<W::Raw> {
    let step = apply_u64(&W::LAYOUT, config, word.into(), event, now);
    Step {
        word: W::from_u64(step.word),
        verdict: step.verdict,
        transitions: step.transitions,
        repaired: step.repaired.map(W::from_u64),
    }
}

/// Tracks the state as the event moves it, collecting the transitions.
struct Machine<'a> {
    layout: &'a Layout,
    snap: Snapshot,
    transitions: Transitions,
}

impl Machine<'_> {
    fn go(&mut self, state: State) {
        let counter = self.layout.next_counter(self.snap.counter);
        self.transitions.push(Transition {
            from: self.snap.state.phase(),
            to: state.phase(),
            counter,
        });
        self.snap = Snapshot { state, counter };
    }
}

#[inline]
fn apply_u64(
    layout: &Layout,
    config: &Config,
    word: u64,
    event: Event,
    now: impl FnOnce() -> u64,
) -> Step<u64> {
    let (snap, repaired) = match decode_u64(layout, word) {
        Ok(Snapshot {
            state: State::Closed { failures },
            ..
        }) if failures >= config.get_failure_threshold() => {
            (corrupt_reset(layout, word), Some(word))
        }
        Ok(snap) => (snap, None),
        Err(_) => (corrupt_reset(layout, word), Some(word)),
    };
    let mut m = Machine {
        layout,
        snap,
        transitions: Transitions::NONE,
    };
    let verdict = match event {
        Event::Admit => admit(&mut m, config, now),
        Event::Release { counter, outcome } => release(&mut m, config, counter, outcome, now),
        Event::ForceOpen => {
            if m.snap.state != State::ForcedOpen {
                m.go(State::ForcedOpen);
            }
            Verdict::Done
        }
        Event::ForceClose => {
            m.go(State::Closed { failures: 0 });
            Verdict::Done
        }
        Event::Status => Verdict::Status(status(&mut m, config, now)),
    };
    Step {
        word: if repaired.is_none() && m.transitions.is_empty() && m.snap == snap {
            word
        } else {
            encode_u64(layout, &m.snap)
        },
        verdict,
        transitions: m.transitions,
        repaired,
    }
}

/// A corrupt word becomes `Closed` with the next counter, so no ticket issued
/// before the corruption can count (fail open, SPEC I8).
fn corrupt_reset(layout: &Layout, word: u64) -> Snapshot {
    Snapshot {
        state: State::Closed { failures: 0 },
        counter: layout.next_counter(counter_of(layout, word)),
    }
}

/// If an `Open` breaker's time is up or a probe's has run out, moves to
/// `HalfOpen` and returns true. Reads the clock only in those two states.
fn lapse(m: &mut Machine<'_>, config: &Config, now: &mut Now<impl FnOnce() -> u64>) -> bool {
    let (since, limit, trips) = match m.snap.state {
        State::Open { since, trips } => (since, config.open_duration(trips), trips),
        State::Probing { since, trips } => (since, config.get_probe_timeout(), trips),
        _ => return false,
    };
    if m.layout.elapsed(since, now.read()) >= limit {
        m.go(State::HalfOpen { trips });
        true
    } else {
        false
    }
}

/// The clock, read at most once per event, and only if asked.
struct Now<F> {
    clock: Option<F>,
    ticks: u64,
}

impl<F: FnOnce() -> u64> Now<F> {
    fn new(clock: F) -> Self {
        Now {
            clock: Some(clock),
            ticks: 0,
        }
    }
    fn read(&mut self) -> u64 {
        if let Some(clock) = self.clock.take() {
            self.ticks = clock();
        }
        self.ticks
    }
}

fn admit(m: &mut Machine<'_>, config: &Config, now: impl FnOnce() -> u64) -> Verdict {
    match m.snap.state {
        State::Closed { .. } => Verdict::Admitted {
            counter: m.snap.counter,
            probe: false,
        },
        State::ForcedOpen => Verdict::Rejected,
        State::HalfOpen { trips } => {
            // Electing the probe needs its start time; read only here.
            elect(m, trips, now())
        }
        State::Open { trips, .. } | State::Probing { trips, .. } => {
            let mut now = Now::new(now);
            if lapse(m, config, &mut now) {
                elect(m, trips, now.read())
            } else {
                Verdict::Rejected
            }
        }
    }
}

fn elect(m: &mut Machine<'_>, trips: u32, now: u64) -> Verdict {
    m.go(State::Probing {
        since: now & m.layout.time_mask(),
        trips,
    });
    Verdict::Admitted {
        counter: m.snap.counter,
        probe: true,
    }
}

fn release(
    m: &mut Machine<'_>,
    config: &Config,
    counter: u32,
    outcome: Outcome,
    now: impl FnOnce() -> u64,
) -> Verdict {
    if counter != m.snap.counter {
        return Verdict::Stale;
    }
    match (m.snap.state, outcome) {
        (State::Closed { failures }, Outcome::Success) => {
            if failures != 0 {
                m.snap.state = State::Closed { failures: 0 };
            }
            Verdict::Recorded
        }
        (State::Closed { .. }, Outcome::Ignored) => Verdict::Recorded,
        (State::Closed { failures }, Outcome::Failure) => {
            let failures = failures.saturating_add(1);
            if failures >= config.get_failure_threshold() {
                let since = now() & m.layout.time_mask();
                m.go(State::Open { since, trips: 1 });
            } else {
                m.snap.state = State::Closed { failures };
            }
            Verdict::Recorded
        }
        (State::Probing { since, trips }, outcome) => {
            let now = now();
            if m.layout.elapsed(since, now) >= config.get_probe_timeout() {
                // The probe's time ran out before it reported: it is stale and
                // the breaker goes half-open, exactly as if someone had looked.
                m.go(State::HalfOpen { trips });
                return Verdict::Stale;
            }
            m.go(match outcome {
                Outcome::Success => State::Closed { failures: 0 },
                Outcome::Failure => State::Open {
                    since: now & m.layout.time_mask(),
                    trips: trips.saturating_add(1).min(m.layout.max_trips()),
                },
                Outcome::Ignored => State::HalfOpen { trips },
            });
            Verdict::Recorded
        }
        // No ticket is ever issued with the counter of Open, HalfOpen or
        // ForcedOpen: a release that matches one is a ticket that survived a
        // full counter wrap, and must not act.
        (State::Open { .. } | State::HalfOpen { .. } | State::ForcedOpen, _) => Verdict::Stale,
    }
}

fn status(m: &mut Machine<'_>, config: &Config, now: impl FnOnce() -> u64) -> Status {
    lapse(m, config, &mut Now::new(now));
    m.snap.state.phase().status()
}

#[cfg(test)]
mod tests;
