//! The pure layer on any stored word: `transition::apply` with any bit
//! pattern, any event, any `now` and any config.
//!
//! For every input, whatever the config: no panic; a state encodes to a word
//! that decodes to it (fields reduced to their widths), and a word that
//! decodes is that state's one encoding (no stray bits accepted); the word out
//! always decodes; `step.repaired` is `Some(raw)` exactly when the word in was
//! corrupt (SPEC I8); the transitions form a chain from the state in (or the
//! repaired `Closed`) to the state out, with consecutive counters, and the
//! counter out is the counter in plus the number of transitions, plus one for
//! a repair (I10); the clock is read at most once.
//!
//! With a config that validates, also: a corrupt word (an unknown tag, stray
//! bits, or a `Closed` count at or over the threshold) is handled as `Closed`
//! with the next counter, exactly as if that word had been stored, and an
//! admission is admitted (fail open, I8); the word out holds no count at or
//! over the threshold; a step that changes nothing returns the very word it
//! was given (I9: nothing to store); and the step matches the transition
//! table (`docs/design.md`) from whatever valid state the word holds,
//! reachable or not, including whether the clock was read.

use std::cell::Cell;

use arbitrary::Arbitrary;
use tripword::transition::{Event, Verdict, apply};
use tripword::word::{Layout, Phase, Snapshot, State, W32, W64, Word};
use tripword::{Config, Outcome};
use tripword_verification::model::ModelConfig;

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
}

impl StateSpec {
    fn state(self) -> State {
        match self {
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
    /// Unchecked (`apply` documents that it still never panics and returns a
    /// valid word).
    Unchecked {
        /// `failure_threshold`.
        threshold: u32,
        /// `open_for`.
        open_for: u64,
        /// The backoff cap.
        backoff: Option<u64>,
        /// `probe_timeout`.
        probe_timeout: u64,
    },
}

impl ConfigChoice {
    fn config<W: Word>(self) -> Config {
        match self {
            ConfigChoice::Valid(spec) => spec.config::<W>(),
            ConfigChoice::Unchecked {
                threshold,
                open_for,
                backoff,
                probe_timeout,
            } => {
                let config = Config::new()
                    .failure_threshold(threshold)
                    .open_for(open_for)
                    .probe_timeout(probe_timeout);
                match backoff {
                    Some(cap) => config.exponential_backoff(cap),
                    None => config,
                }
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
    /// `Event::Status`.
    Status,
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
        let config = self.config.config::<W>();
        let layout = W::LAYOUT;
        let stored = Snapshot::counter_bits::<W>(raw);
        let event = match self.event {
            EventSpec::Admit => Event::Admit,
            EventSpec::ForceOpen => Event::ForceOpen,
            EventSpec::ForceClose => Event::ForceClose,
            EventSpec::Status => Event::Status,
            EventSpec::Release(ticket, outcome) => {
                let current = match effective::<W>(&config, raw) {
                    Ok(snap) | Err(snap) => snap.counter,
                };
                Event::Release {
                    counter: match ticket {
                        TicketSpec::Current => current,
                        TicketSpec::Stored => stored,
                        TicketSpec::Previous => current.wrapping_sub(1) & layout.max_counter(),
                        TicketSpec::Any(c) => c,
                    },
                    outcome: outcome.into(),
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
        },
        counter: counter & layout.max_counter(),
    }
}

/// The state `apply` should start from: `Ok(decoded)` for a valid word,
/// `Err(Closed with the next counter)` for a corrupt one (SPEC I8; a `Closed`
/// count at or over the threshold is corrupt, design.md).
fn effective<W: Word>(config: &Config, raw: W::Raw) -> Result<Snapshot, Snapshot> {
    match Snapshot::decode::<W>(raw) {
        Ok(Snapshot {
            state: State::Closed { failures },
            ..
        }) if failures >= config.get_failure_threshold() => Err(repaired::<W>(raw)),
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

/// All the checks for one step (see the module docs). Panics on a violation.
pub fn check<W: Word>(config: &Config, raw: W::Raw, event: Event, now: u64) {
    let layout = W::LAYOUT;
    let valid_config = config.validate::<W>().is_ok();
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
    if valid_config {
        assert_eq!(
            step.repaired,
            corrupt.then_some(raw),
            "{ctx}: repaired (the word in decodes as {:?})",
            Snapshot::decode::<W>(raw)
        );
    } else if step.repaired.is_some() {
        assert_eq!(
            step.repaired,
            Some(raw),
            "{ctx}: repaired reports another word"
        );
    }

    // I10: transitions chain from the state met to the state out, one counter
    // step each; a repair is one more step, reported apart.
    let met = match step.repaired {
        Some(_) => repaired::<W>(raw),
        None => Snapshot::decode::<W>(raw)
            .unwrap_or_else(|e| panic!("{ctx}: corrupt word ({e:?}) not reported as repaired")),
    };
    let mut phase = met.state.phase();
    let mut counter = met.counter;
    let transitions: Vec<_> = step.transitions.iter().collect();
    assert_eq!(transitions.len(), step.transitions.len(), "{ctx}: len()");
    assert_eq!(transitions.is_empty(), step.transitions.is_empty(), "{ctx}");
    assert!(transitions.len() <= 2, "{ctx}: {transitions:?}");
    for t in &transitions {
        counter = layout.next_counter(counter);
        assert_eq!(
            (t.from, t.counter),
            (phase, counter),
            "{ctx}: transitions {transitions:?} do not chain from {met:?}"
        );
        phase = t.to;
    }
    assert_eq!(
        (out.state.phase(), out.counter),
        (phase, counter),
        "{ctx}: word out {out:?} after transitions {transitions:?} from {met:?}"
    );

    if !valid_config {
        return;
    }
    if let State::Closed { failures } = out.state {
        assert!(
            failures < config.get_failure_threshold(),
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

    let expect = table(&layout, config, s0, event, now);
    assert_eq!(
        (step.verdict, out.state, phases(&transitions), reads == 1),
        (
            expect.verdict,
            expect.state,
            expect.phases,
            expect.reads_clock
        ),
        "{ctx}: (verdict, state out, transitions, clock read) differ from the table from {s0:?}"
    );
}

fn phases(transitions: &[tripword::Transition]) -> Vec<(Phase, Phase)> {
    transitions.iter().map(|t| (t.from, t.to)).collect()
}

/// What the transition table says one event does.
struct Expected {
    verdict: Verdict,
    state: State,
    phases: Vec<(Phase, Phase)>,
    reads_clock: bool,
}

/// The transition table of `docs/design.md` for one event from any valid
/// state, written from the table (the reference model's rules, which cannot
/// start from an arbitrary state) with the model's time arithmetic.
fn table(layout: &Layout, config: &Config, s0: Snapshot, event: Event, now: u64) -> Expected {
    let model = ModelConfig::new(config, layout);
    let stamp = now & layout.time_mask();
    let mut e = Expected {
        verdict: Verdict::Done,
        state: s0.state,
        phases: Vec::new(),
        reads_clock: false,
    };
    let counter_after = |e: &Expected| {
        ((u64::from(s0.counter) + e.phases.len() as u64) % model.counter_period()) as u32
    };
    fn go(e: &mut Expected, to: State) {
        e.phases.push((e.state.phase(), to.phase()));
        e.state = to;
    }
    // Open's time or Probing's timeout has run out: HalfOpen.
    let lapse = |e: &mut Expected| {
        let (since, limit, trips) = match e.state {
            State::Open { since, trips } => (since, model.open_duration(trips.into()), trips),
            State::Probing { since, trips } => (since, model.probe_timeout, trips),
            _ => return None,
        };
        e.reads_clock = true;
        if model.elapsed(since, now) >= limit {
            go(e, State::HalfOpen { trips });
            Some(trips)
        } else {
            None
        }
    };
    e.verdict = match event {
        Event::Admit => match e.state {
            State::Closed { .. } => Verdict::Admitted {
                counter: s0.counter,
                probe: false,
            },
            State::ForcedOpen => Verdict::Rejected,
            State::HalfOpen { trips } => {
                e.reads_clock = true;
                go(
                    &mut e,
                    State::Probing {
                        since: stamp,
                        trips,
                    },
                );
                Verdict::Admitted {
                    counter: counter_after(&e),
                    probe: true,
                }
            }
            State::Open { .. } | State::Probing { .. } => match lapse(&mut e) {
                Some(trips) => {
                    go(
                        &mut e,
                        State::Probing {
                            since: stamp,
                            trips,
                        },
                    );
                    Verdict::Admitted {
                        counter: counter_after(&e),
                        probe: true,
                    }
                }
                None => Verdict::Rejected,
            },
        },
        Event::Release { counter, .. } if counter != s0.counter => Verdict::Stale,
        Event::Release { outcome, .. } => match e.state {
            State::Closed { failures } => {
                match outcome {
                    Outcome::Success => e.state = State::Closed { failures: 0 },
                    Outcome::Ignored => {}
                    Outcome::Failure if failures + 1 >= model.failure_threshold => {
                        e.reads_clock = true;
                        go(
                            &mut e,
                            State::Open {
                                since: stamp,
                                trips: 1,
                            },
                        );
                    }
                    Outcome::Failure => {
                        e.state = State::Closed {
                            failures: failures + 1,
                        }
                    }
                }
                Verdict::Recorded
            }
            State::Probing { since, trips } => {
                e.reads_clock = true;
                if model.elapsed(since, now) >= model.probe_timeout {
                    go(&mut e, State::HalfOpen { trips });
                    Verdict::Stale
                } else {
                    let max_trips = model.max_trips() as u32;
                    go(
                        &mut e,
                        match outcome {
                            Outcome::Success => State::Closed { failures: 0 },
                            Outcome::Failure => State::Open {
                                since: stamp,
                                trips: (trips + 1).min(max_trips),
                            },
                            Outcome::Ignored => State::HalfOpen { trips },
                        },
                    );
                    Verdict::Recorded
                }
            }
            State::Open { .. } | State::HalfOpen { .. } | State::ForcedOpen => Verdict::Stale,
        },
        Event::ForceOpen => {
            if e.state != State::ForcedOpen {
                go(&mut e, State::ForcedOpen);
            }
            Verdict::Done
        }
        Event::ForceClose => {
            go(&mut e, State::Closed { failures: 0 });
            Verdict::Done
        }
        Event::Status => {
            lapse(&mut e);
            Verdict::Status(e.state.phase().status())
        }
    };
    e
}
