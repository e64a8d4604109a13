//! The pure layer on any stored word: `transition::apply` and
//! `transition::status_at` with any bit pattern, any event, any `now` and
//! any config the width accepts (they take only a `ValidConfig`).
//!
//! For every input: no panic; a state encodes to a word that decodes to it
//! (fields reduced to their widths), and a word that decodes is that state's
//! one encoding (no stray bits accepted); the word out always decodes;
//! `step.repaired` is `Some(raw)` exactly when the word in was corrupt (an
//! unknown tag, stray bits, or a `Closed` count at or over the threshold:
//! SPEC I8), and such a word is handled as `Closed` with the next counter,
//! exactly as if that word had been stored, an admission admitted (fail
//! open); the transitions form a chain from the state met to the state out,
//! with consecutive counters, and the counter out is the counter in plus the
//! number of transitions, plus one for a repair (I10); the word out holds no
//! count at or over the threshold; a step that changes nothing returns the
//! very word it was given (I9: nothing to store); the clock is read at most
//! once; and the step matches the transition table (`docs/design.md`) from
//! whatever valid state the word holds, reachable or not: the verdict (a
//! rejection's cause and wait included), the state out, the transitions
//! (with their `forced` flag) and whether the clock was read, with time in
//! units of the config's time shift. A status read (`status_at`) stores
//! nothing and reports the state, an elapsed `Open`, timed-out `Probing` or
//! reached `OpenUntil` as `HalfOpen` and a corrupt word as `Closed`, reading
//! the clock only for a valid `Open`, `Probing` or `OpenUntil`.
//!
//! Tag 5 is `OpenUntil` (the layout of `Open`, its time field the
//! deadline), valid with any payload; tags 6 and 7 are `Ramp` and `Trial`
//! (the recovery feature), valid with any payload too, their rows (and every
//! row under a config with several probes or a ramp) the reference model's
//! (`by_model`). The events
//! include a failure that carries its open time (`Event::FailureFor`, with
//! any of the tickets a release takes) and `Event::ForceOpenFor`, with any
//! hint.

use std::cell::Cell;

use arbitrary::Arbitrary;
use tripword::transition::{Event, Verdict, apply, status_at};
use tripword::word::{Layout, Snapshot, State, W32, W64, Word};
use tripword::{Cause, Config, Outcome, Status, Transition, ValidConfig};
use tripword_verification::harness::{status_both, through_breaker, through_pure};
use tripword_verification::model::{MAX_RETRY_AFTER, Model, ModelConfig};

use crate::input::{ConfigSpec, Out};

/// One fuzz input.
#[derive(Arbitrary, Clone, Debug, PartialEq, Eq)]
pub struct WordCase {
    /// The 64-bit word (else the 32-bit one).
    pub wide: bool,
    /// The stored word.
    pub word: WordSpec,
    /// The config.
    pub config: ConfigChoice,
    /// The event.
    pub event: EventSpec,
    /// What the clock reads, if asked.
    pub now: u64,
}

/// How the stored word is made.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordSpec {
    /// Any bits (truncated to 32 for the 32-bit word).
    Raw(u64),
    /// A valid state, encoded.
    Encoded(StateSpec, u32),
    /// A valid state, encoded, with one bit flipped.
    Flipped(StateSpec, u32, u8),
}

/// A state with its payload (encoding reduces each field to its width).
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateSpec {
    /// `Closed`.
    Closed(u32),
    /// `Open { since, trips }`.
    Open(u64, u32),
    /// `HalfOpen { trips }`.
    HalfOpen(u32),
    /// `Probing { since, trips }`.
    Probing(u64, u32),
    /// `ForcedOpen`.
    ForcedOpen,
    /// `OpenUntil { until, trips }`.
    OpenUntil(u64, u32),
}

impl StateSpec {
    fn state(self) -> State {
        match self {
            StateSpec::OpenUntil(until, trips) => State::OpenUntil { until, trips },
            StateSpec::Closed(failures) => State::Closed { failures },
            StateSpec::Open(since, trips) => State::Open { since, trips },
            StateSpec::HalfOpen(trips) => State::HalfOpen { trips },
            StateSpec::Probing(since, trips) => State::Probing { since, trips },
            StateSpec::ForcedOpen => State::ForcedOpen,
        }
    }
}

impl WordSpec {
    fn raw<W: Word>(self) -> W::Raw {
        let encode = |state: StateSpec, counter| {
            Snapshot {
                state: state.state(),
                counter,
            }
            .encode::<W>()
            .into()
        };
        W::from_u64(match self {
            WordSpec::Raw(bits) => bits,
            WordSpec::Encoded(state, counter) => encode(state, counter),
            WordSpec::Flipped(state, counter, bit) => {
                encode(state, counter) ^ (1 << (u32::from(bit) % W::LAYOUT.word_bits))
            }
        })
    }
}

/// The config: picked inside the width's ranges, or any values at all.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigChoice {
    /// Validates for the width.
    Valid(ConfigSpec),
    /// Any values; a config the width refuses ends the case (the pure
    /// layer takes only a `ValidConfig`; `config` checks the refusals).
    Any {
        /// `failure_threshold`.
        threshold: u32,
        /// `open_for`.
        open_for: u64,
        /// The backoff cap.
        backoff: Option<u64>,
        /// `probe_timeout`.
        probe_timeout: u64,
        /// The horizon; `None`: the width's default.
        horizon: Option<u64>,
    },
}

impl ConfigChoice {
    fn config<W: Word>(self) -> Option<ValidConfig<W>> {
        match self {
            ConfigChoice::Valid(spec) => Some(spec.config::<W>()),
            ConfigChoice::Any {
                threshold,
                open_for,
                backoff,
                probe_timeout,
                horizon,
            } => {
                let mut config = Config::new()
                    .failure_threshold(threshold)
                    .open_for(open_for)
                    .probe_timeout(probe_timeout);
                if let Some(cap) = backoff {
                    config = config.exponential_backoff(cap);
                }
                if let Some(h) = horizon {
                    config = config.horizon(h);
                }
                config.check::<W>().ok()
            }
        }
    }
}

/// The event.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventSpec {
    /// `Event::Admit`.
    Admit,
    /// `Event::Release`.
    Release(TicketSpec, Out),
    /// `Event::ForceOpen`.
    ForceOpen,
    /// `Event::ForceClose`.
    ForceClose,
    /// A status read: `transition::status_at`.
    Status,
    /// `Event::FailureFor`, with a hint in ticks.
    FailureFor(TicketSpec, u64),
    /// `Event::ForceOpenFor`, with a hint in ticks.
    ForceOpenFor(u64),
}

/// The counter a release carries.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TicketSpec {
    /// The counter of the state the event meets (after any repair).
    Current,
    /// The counter bits of the stored word, even if it was corrupt.
    Stored,
    /// One before the current counter.
    Previous,
    /// Any value.
    Any(u32),
}

impl WordCase {
    /// Runs the checks; panics on a violation.
    pub fn run(&self) {
        if self.wide {
            self.run_width::<W64>();
        } else {
            self.run_width::<W32>();
        }
    }

    fn run_width<W: Word>(&self) {
        let raw = self.word.raw::<W>();
        if let WordSpec::Encoded(state, counter) = self.word {
            // Encoding reduces each field to its width, and always decodes.
            let expect = reduced(&W::LAYOUT, state.state(), counter);
            assert_eq!(
                Snapshot::decode::<W>(raw),
                Ok(expect),
                "W{}: encode of {:?}",
                W::LAYOUT.word_bits,
                self.word
            );
        }
        let Some(config) = self.config.config::<W>() else {
            return;
        };
        let layout = W::LAYOUT;
        let stored = Snapshot::counter_bits::<W>(raw);
        let event = match self.event {
            EventSpec::Admit => Event::Admit,
            EventSpec::ForceOpen => Event::ForceOpen,
            EventSpec::ForceClose => Event::ForceClose,
            EventSpec::Status => return check_status::<W>(&config, raw, self.now),
            EventSpec::ForceOpenFor(open_for) => Event::ForceOpenFor { open_for },
            EventSpec::Release(ticket, _) | EventSpec::FailureFor(ticket, _) => {
                let current = match effective::<W>(&config, raw) {
                    Ok(snap) | Err(snap) => snap.counter,
                };
                let counter = match ticket {
                    TicketSpec::Current => current,
                    TicketSpec::Stored => stored,
                    TicketSpec::Previous => current.wrapping_sub(1) & layout.max_counter(),
                    TicketSpec::Any(c) => c,
                };
                match self.event {
                    EventSpec::FailureFor(_, open_for) => Event::FailureFor { counter, open_for },
                    EventSpec::Release(_, outcome) => Event::Release {
                        counter,
                        outcome: outcome.into(),
                    },
                    _ => unreachable!("matched above"),
                }
            }
        };
        check::<W>(&config, raw, event, self.now);
    }
}

/// What encoding `state` with `counter` keeps: counters and times modulo their
/// fields' ranges, trips and failures saturated at the largest the fields hold.
fn reduced(layout: &Layout, state: State, counter: u32) -> Snapshot {
    let time = |t: u64| t & layout.time_mask();
    let trips = |k: u32| k.min(layout.max_trips());
    Snapshot {
        state: match state {
            State::Closed { failures } => State::Closed {
                failures: failures.min(layout.max_failures()),
            },
            State::Open { since, trips: k } => State::Open {
                since: time(since),
                trips: trips(k),
            },
            State::HalfOpen { trips: k } => State::HalfOpen { trips: trips(k) },
            State::Probing { since, trips: k } => State::Probing {
                since: time(since),
                trips: trips(k),
            },
            State::ForcedOpen => State::ForcedOpen,
            State::OpenUntil { until, trips: k } => State::OpenUntil {
                until: time(until),
                trips: trips(k),
            },
            state @ (State::Trial { .. } | State::Ramp { .. }) => recovery::reduced(layout, state),
        },
        counter: counter & layout.max_counter(),
    }
}

/// The state `apply` should start from: `Ok(decoded)` for a valid word,
/// `Err(Closed with the next counter)` for a corrupt one (SPEC I8; a `Closed`
/// count at or over the threshold is corrupt, design.md).
fn effective<W: Word>(config: &ValidConfig<W>, raw: W::Raw) -> Result<Snapshot, Snapshot> {
    match Snapshot::decode::<W>(raw) {
        Ok(Snapshot {
            state: State::Closed { failures },
            ..
        }) if failures >= config.failure_threshold() => Err(repaired::<W>(raw)),
        Ok(snap) => Ok(snap),
        Err(_) => Err(repaired::<W>(raw)),
    }
}

fn repaired<W: Word>(raw: W::Raw) -> Snapshot {
    Snapshot {
        state: State::Closed { failures: 0 },
        counter: W::LAYOUT.next_counter(Snapshot::counter_bits::<W>(raw)),
    }
}

/// A [`Verdict`] with the rejection's cause and wait spelled out
/// (`Rejected` is built by the core only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Told {
    Admitted {
        counter: u32,
        probe: bool,
    },
    Rejected {
        cause: Cause,
        retry_after: Option<u64>,
    },
    Recorded,
    Stale,
    Done,
}

impl From<Verdict> for Told {
    fn from(v: Verdict) -> Told {
        match v {
            Verdict::Admitted { counter, probe } => Told::Admitted { counter, probe },
            Verdict::Rejected(r) => Told::Rejected {
                cause: r.cause(),
                retry_after: r.retry_after(),
            },
            Verdict::Recorded => Told::Recorded,
            Verdict::Stale => Told::Stale,
            Verdict::Done => Told::Done,
        }
    }
}

/// All the checks for one step (see the module docs). Panics on a violation.
pub fn check<W: Word>(config: &ValidConfig<W>, raw: W::Raw, event: Event, now: u64) {
    let layout = W::LAYOUT;
    let start = effective::<W>(config, raw);
    let corrupt = start.is_err();
    let (Ok(s0) | Err(s0)) = start;
    let reads = Cell::new(0u32);
    let step = apply::<W>(config, raw, event, || {
        reads.set(reads.get() + 1);
        now
    });
    let ctx = format!(
        "W{} word {:#x} {event:?} now {now} {config:?}",
        layout.word_bits,
        raw.into()
    );
    // A word that decodes is the one encoding of its state: every bit a state
    // does not use is zero (so decoding does not accept stray bits, I8).
    if let Ok(snap) = Snapshot::decode::<W>(raw) {
        assert_eq!(
            snap.encode::<W>(),
            raw,
            "{ctx}: decodes as {snap:?}, which encodes otherwise"
        );
    }
    let reads = reads.get();
    assert!(reads <= 1, "{ctx}: clock read {reads} times");

    // I8: the word out decodes; a corrupt word in is reported once.
    let out = Snapshot::decode::<W>(step.word)
        .unwrap_or_else(|e| panic!("{ctx}: word out {:#x} is corrupt: {e:?}", step.word.into()));
    assert_eq!(
        step.repaired,
        corrupt.then_some(raw),
        "{ctx}: repaired (the word in decodes as {:?})",
        Snapshot::decode::<W>(raw)
    );

    // I10: transitions chain from the state met to the state out, one counter
    // step each; a repair is one more step, reported apart.
    let mut status = s0.state.status();
    let mut counter = s0.counter;
    let transitions: Vec<Transition> = step.transitions.iter().collect();
    assert_eq!(transitions.len(), step.transitions.len(), "{ctx}: len()");
    assert_eq!(transitions.is_empty(), step.transitions.is_empty(), "{ctx}");
    assert!(transitions.len() <= 2, "{ctx}: {transitions:?}");
    for t in &transitions {
        counter = layout.next_counter(counter);
        assert_eq!(
            (t.from, t.counter),
            (status, counter),
            "{ctx}: transitions {transitions:?} do not chain from {s0:?}"
        );
        status = t.to;
    }
    assert_eq!(
        (out.state.status(), out.counter),
        (status, counter),
        "{ctx}: word out {out:?} after transitions {transitions:?} from {s0:?}"
    );

    if let State::Closed { failures } = out.state {
        assert!(
            failures < config.failure_threshold(),
            "{ctx}: word out {out:?} counts the threshold"
        );
    }
    if corrupt {
        // Exactly as if the repaired word had been stored.
        let again = apply::<W>(config, s0.encode::<W>(), event, || now);
        assert_eq!(
            (again.word, again.verdict, again.transitions, again.repaired),
            (step.word, step.verdict, step.transitions, None),
            "{ctx}: a corrupt word is not handled as {s0:?}"
        );
        if event == Event::Admit {
            assert_eq!(
                step.verdict,
                Verdict::Admitted {
                    counter: s0.counter,
                    probe: false
                },
                "{ctx}: a corrupt word must fail open"
            );
        }
    } else if transitions.is_empty() && out == s0 {
        assert_eq!(
            step.word, raw,
            "{ctx}: nothing changed but the word differs"
        );
    }

    // The same word and event through `Breaker`, fast paths
    // included (a hidden constructor seeds the word, tickets are forged with
    // the event's counter, as a probe's and as not), must agree with the pure
    // layer on what it tells, the word left, the clock reads and the reports.
    // A ticket carries a counter of the word's width; a wider one (the
    // pure layer takes any `u32`) has no ticket to stand for it.
    let expressible = match event {
        Event::Release { counter, .. } | Event::FailureFor { counter, .. } => {
            counter <= layout.max_counter()
        }
        _ => true,
    };
    if expressible {
        let pure = through_pure(config, raw, event, now);
        for probe in [false, true] {
            assert_eq!(
                through_breaker(config, raw, event, now, probe),
                pure,
                "{ctx}: the breaker (a probe's ticket: {probe}) differs from the pure layer"
            );
        }
    }

    let expect = table(config, s0, event, now);
    assert_eq!(
        (Told::from(step.verdict), out.state, transitions, reads == 1),
        (
            expect.told,
            expect.state,
            expect.transitions,
            expect.reads_clock
        ),
        "{ctx}: (verdict, state out, transitions, clock read) differ from the table from {s0:?}"
    );
}

/// A status read of any word: stores nothing (it cannot: it returns only a
/// status), reports what the module docs say, reads the clock only for a
/// valid `Open`, `Probing` or `OpenUntil`.
pub fn check_status<W: Word>(config: &ValidConfig<W>, raw: W::Raw, now: u64) {
    let reads = Cell::new(0u32);
    let got = status_at::<W>(config, raw, || {
        reads.set(reads.get() + 1);
        now
    });
    let model = ModelConfig::for_width(config);
    let want = match effective::<W>(config, raw) {
        Err(_) => (Status::Closed, false),
        // The recovery states by the reference model's rules.
        Ok(snap) if matches!(snap.state, State::Trial { .. } | State::Ramp { .. }) => {
            let mut m = Model::from_snapshot(model, &snap).expect("a recovery state loads");
            (m.status(now), m.read_clock())
        }
        Ok(snap) => match timed(&model, snap.state, snap.counter, now) {
            Some(t) if t.lapsed => (Status::HalfOpen, true),
            Some(_) => (snap.state.status(), true),
            None => (snap.state.status(), false),
        },
    };
    assert_eq!(
        (got, reads.get() == 1),
        want,
        "W{} status of {:#x} at {now} {config:?}: (status, clock read)",
        W::LAYOUT.word_bits,
        raw.into()
    );
    // The breaker's own status read: the same answer and reads,
    // and it stores and reports nothing.
    let (core, pure, quiet) = status_both(config, raw, now);
    assert_eq!(
        core,
        pure,
        "W{} breaker status of {:#x} at {now}",
        W::LAYOUT.word_bits,
        raw.into()
    );
    assert!(quiet, "a status read stored or reported something");
}

/// An `Open`, `Probing` or `OpenUntil` state's time at `now`, by the
/// model's arithmetic on the stored units.
struct Timed {
    lapsed: bool,
    trips: u32,
    /// Ticks from `now` until it lapses (0 once it has).
    wait: u64,
}

fn timed(model: &ModelConfig, state: State, counter: u32, now: u64) -> Option<Timed> {
    if let State::OpenUntil { until, trips } = state {
        // The deadline's units as a clock reading (time_bits + shift <= 64).
        let until = until << model.time_shift;
        let lapsed = model.reached(until, now);
        let wait = if lapsed {
            0
        } else {
            model
                .first_reach_at(until, now)
                .wrapping_sub(now)
                .min(MAX_RETRY_AFTER)
        };
        return Some(Timed {
            lapsed,
            trips,
            wait,
        });
    }
    let (since, need, trips) = match state {
        State::Open { since, trips } => {
            (since, model.open_need(trips.into(), counter.into()), trips)
        }
        State::Probing { since, trips } => (since, model.probe_need(), trips),
        _ => return None,
    };
    // The stored units as a clock reading (time_bits + shift <= 64).
    let since = since << model.time_shift;
    let lapsed = model.elapsed(since, now) >= need;
    let wait = if lapsed {
        0
    } else {
        model
            .first_lapse_at(since, need, now)
            .wrapping_sub(now)
            .min(MAX_RETRY_AFTER)
    };
    Some(Timed {
        lapsed,
        trips,
        wait,
    })
}

/// What the transition table says one event does.
struct Expected {
    told: Told,
    state: State,
    transitions: Vec<Transition>,
    reads_clock: bool,
    base: u32,
    period: u64,
}

impl Expected {
    fn go(&mut self, to: State) {
        let counter = (u64::from(self.base) + self.transitions.len() as u64 + 1) % self.period;
        self.transitions.push(Transition {
            from: self.state.status(),
            to: to.status(),
            counter: counter as u32,
            forced: self.state.is_forced_open() || to.is_forced_open(),
        });
        self.state = to;
    }

    fn counter(&self) -> u32 {
        ((u64::from(self.base) + self.transitions.len() as u64) % self.period) as u32
    }
}

/// The transition table of `docs/design.md` for one event from any valid
/// state, written from the table (the reference model's rules, which cannot
/// start from an arbitrary state) with the model's time arithmetic.
fn table<W: Word>(config: &ValidConfig<W>, s0: Snapshot, event: Event, now: u64) -> Expected {
    let model = ModelConfig::for_width(config);
    if model.probes().0 > 1
        || model.has_ramp()
        || matches!(s0.state, State::Trial { .. } | State::Ramp { .. })
    {
        return by_model(model, s0, event, now);
    }
    let stamp = model.units(now);
    let mut e = Expected {
        told: Told::Done,
        state: s0.state,
        transitions: Vec::new(),
        reads_clock: false,
        base: s0.counter,
        period: model.counter_period(),
    };
    let rejected = |state: State, wait| Told::Rejected {
        cause: match state {
            State::Open { .. } | State::OpenUntil { .. } => Cause::Open,
            State::Probing { .. } => Cause::Probing,
            _ => Cause::ForcedOpen,
        },
        retry_after: wait,
    };
    e.told = match event {
        Event::Admit => match e.state {
            State::Closed { .. } => Told::Admitted {
                counter: s0.counter,
                probe: false,
            },
            State::ForcedOpen => rejected(State::ForcedOpen, None),
            State::Trial { .. } | State::Ramp { .. } => unreachable!("by_model"),
            State::HalfOpen { trips } => {
                e.reads_clock = true;
                e.go(State::Probing {
                    since: stamp,
                    trips,
                });
                Told::Admitted {
                    counter: e.counter(),
                    probe: true,
                }
            }
            state @ (State::Open { .. } | State::Probing { .. } | State::OpenUntil { .. }) => {
                e.reads_clock = true;
                let t = timed(&model, state, e.counter(), now).expect("a timed state");
                if t.lapsed {
                    e.go(State::HalfOpen { trips: t.trips });
                    e.go(State::Probing {
                        since: stamp,
                        trips: t.trips,
                    });
                    Told::Admitted {
                        counter: e.counter(),
                        probe: true,
                    }
                } else {
                    rejected(state, Some(t.wait))
                }
            }
        },
        Event::Release { counter, .. } if counter != s0.counter => Told::Stale,
        Event::Release { outcome, .. } => match e.state {
            State::Closed { failures } => {
                match outcome {
                    Outcome::Success => e.state = State::Closed { failures: 0 },
                    Outcome::Ignored => {}
                    Outcome::Failure if failures + 1 >= model.failure_threshold => {
                        e.reads_clock = true;
                        e.go(State::Open {
                            since: stamp,
                            trips: 1,
                        });
                    }
                    Outcome::Failure => {
                        e.state = State::Closed {
                            failures: failures + 1,
                        }
                    }
                }
                Told::Recorded
            }
            state @ State::Probing { trips, .. } => {
                e.reads_clock = true;
                if timed(&model, state, e.counter(), now)
                    .expect("a timed state")
                    .lapsed
                {
                    e.go(State::HalfOpen { trips });
                    Told::Stale
                } else {
                    let max_trips = model.max_trips() as u32;
                    e.go(match outcome {
                        Outcome::Success => State::Closed { failures: 0 },
                        Outcome::Failure => State::Open {
                            since: stamp,
                            trips: (trips + 1).min(max_trips),
                        },
                        Outcome::Ignored => State::HalfOpen { trips },
                    });
                    Told::Recorded
                }
            }
            State::Open { .. }
            | State::HalfOpen { .. }
            | State::ForcedOpen
            | State::OpenUntil { .. } => Told::Stale,
            State::Trial { .. } | State::Ramp { .. } => unreachable!("by_model"),
        },
        // A failure that carries its open time.
        Event::FailureFor { counter, .. } if counter != s0.counter => Told::Stale,
        Event::FailureFor { open_for, .. } => {
            // The deadline: unit units(now) + min(need(d), half the field).
            let until = model.units(model.deadline(now, open_for));
            let max_trips = model.max_trips() as u32;
            match e.state {
                State::Closed { failures } if failures + 1 >= model.failure_threshold => {
                    e.reads_clock = true;
                    e.go(State::OpenUntil { until, trips: 1 });
                    Told::Recorded
                }
                State::Closed { failures } => {
                    e.state = State::Closed {
                        failures: failures + 1,
                    };
                    Told::Recorded
                }
                state @ State::Probing { trips, .. } => {
                    e.reads_clock = true;
                    if timed(&model, state, e.counter(), now)
                        .expect("a timed state")
                        .lapsed
                    {
                        e.go(State::HalfOpen { trips });
                        Told::Stale
                    } else {
                        e.go(State::OpenUntil {
                            until,
                            trips: (trips + 1).min(max_trips),
                        });
                        Told::Recorded
                    }
                }
                _ => Told::Stale,
            }
        }
        Event::ForceOpenFor { open_for } => {
            e.reads_clock = true;
            let until = model.units(model.deadline(now, open_for));
            if let Some(t) = timed(&model, e.state, e.counter(), now)
                && t.lapsed
            {
                e.go(State::HalfOpen { trips: t.trips });
            }
            let trips = match e.state {
                State::Closed { .. } | State::ForcedOpen => 1,
                State::Open { trips, .. }
                | State::HalfOpen { trips }
                | State::Probing { trips, .. }
                | State::OpenUntil { trips, .. } => trips.max(1),
                State::Trial { .. } | State::Ramp { .. } => unreachable!("by_model"),
            };
            e.go(State::OpenUntil { until, trips });
            Told::Done
        }
        Event::ForceOpen => {
            if e.state != State::ForcedOpen {
                e.go(State::ForcedOpen);
            }
            Told::Done
        }
        Event::ForceClose => {
            e.go(State::Closed { failures: 0 });
            Told::Done
        }
    };
    e
}

mod recovery;
use recovery::by_model;
