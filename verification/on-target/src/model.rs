//! A reference model of the breaker, written from `docs/spec.md` and the
//! core's documented time semantics, not from its code: no word, no packing,
//! no wrapping counter. Time is a full `u64`, the counter is a `u64` that
//! never wraps, and a state keeps the exact instant it began.
//!
//! What it borrows from the word is the documented reading of time
//! (`docs/spec.md`, "Time"): a timestamp is kept in units of `2^s` ticks
//! (`s` = `ValidConfig::time_shift()`), `units(t) = (t >> s) mod
//! 2^time_bits`; elapsed time is the difference of two such readings modulo
//! `2^time_bits` units; a duration of `d` ticks is `need(d) = (d + 2 (2^s -
//! 1)) >> s` units, and with backoff the open time after `k` trips is
//! `min(need(cap), need(open_for) * 2^(k-1))` units. So a clock that jumps or
//! runs backwards reads here as it does on the breaker.

use tripword::{Cause, Outcome, Status, ValidConfig, Word};

/// A state's name, for transitions: what `Transition::from`/`to` report
/// (a status) and whether it is the operator-held open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Closed,
    Open,
    HalfOpen,
    Probing,
    ForcedOpen,
}

impl Phase {
    pub fn status(self) -> Status {
        match self {
            Phase::Closed => Status::Closed,
            Phase::Open | Phase::ForcedOpen => Status::Open,
            Phase::HalfOpen => Status::HalfOpen,
            Phase::Probing => Status::Probing,
        }
    }
}

/// A state with what it needs to decide, in full precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed { failures: u32 },
    Open { since: u64, trips: u32 },
    HalfOpen { trips: u32 },
    Probing { since: u64, trips: u32 },
    ForcedOpen,
}

impl State {
    pub fn phase(&self) -> Phase {
        match self {
            State::Closed { .. } => Phase::Closed,
            State::Open { .. } => Phase::Open,
            State::HalfOpen { .. } => Phase::HalfOpen,
            State::Probing { .. } => Phase::Probing,
            State::ForcedOpen => Phase::ForcedOpen,
        }
    }
}

/// What the model says an event did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Admitted {
        counter: u64,
        probe: bool,
    },
    /// Why, and the ticks until an admission could succeed (`None` when
    /// forced open).
    Rejected {
        cause: Cause,
        retry_after: Option<u64>,
    },
    Recorded,
    Stale,
    Status(Status),
    Done,
}

/// A state change: from, to, and the counter of the state entered.
pub type Change = (Phase, Phase, u64);

pub struct Model {
    pub state: State,
    pub counter: u64,
    threshold: u32,
    open_for: u64,
    backoff_cap: Option<u64>,
    probe_timeout: u64,
    max_trips: u32,
    time_bits: u32,
    shift: u32,
    /// The changes made since the last `take_changes`.
    changes: [Option<Change>; 8],
    n_changes: usize,
}

impl Model {
    /// A closed breaker with counter 0, for `config` on word width `W`
    /// (the time field's width and the largest trip count are the word's
    /// documented `Layout`).
    pub fn new<W: Word>(config: &ValidConfig<W>) -> Self {
        Model {
            state: State::Closed { failures: 0 },
            counter: 0,
            threshold: config.failure_threshold(),
            open_for: config.open_for(),
            backoff_cap: config.backoff_cap(),
            probe_timeout: config.probe_timeout(),
            max_trips: W::LAYOUT.max_trips(),
            time_bits: W::LAYOUT.time_bits,
            shift: config.time_shift(),
            changes: [None; 8],
            n_changes: 0,
        }
    }

    /// Ticks per unit, `2^s`.
    pub fn unit(&self) -> u64 {
        1 << self.shift
    }

    /// The changes made since the last call, in order (the first eight), and
    /// how many there were.
    pub fn take_changes(&mut self) -> ([Option<Change>; 8], usize) {
        let out = (self.changes, self.n_changes);
        self.changes = [None; 8];
        self.n_changes = 0;
        out
    }

    /// A clock reading as the word keeps it: `(t >> s) mod 2^time_bits`.
    pub fn units(&self, t: u64) -> u64 {
        (t >> self.shift) % (1u64 << self.time_bits)
    }

    /// Units elapsed from `since` to `now`, modulo the time field.
    fn elapsed(&self, since: u64, now: u64) -> u64 {
        self.units(now).wrapping_sub(self.units(since)) % (1u64 << self.time_bits)
    }

    /// The units a duration of `ticks` must see elapse.
    fn need(&self, ticks: u64) -> u64 {
        (ticks + 2 * (self.unit() - 1)) >> self.shift
    }

    /// Open time after the `trips`-th consecutive trip, in units: the base,
    /// doubled per earlier trip, never above the cap.
    fn open_units(&self, trips: u32) -> u64 {
        let base = self.need(self.open_for);
        match self.backoff_cap {
            None => base,
            Some(cap) => {
                let cap = self.need(cap);
                let mut d = base;
                for _ in 1..trips {
                    d = d.saturating_mul(2);
                    if d >= cap {
                        return cap;
                    }
                }
                d.min(cap)
            }
        }
    }

    /// Open time after the `trips`-th consecutive trip, in ticks as set:
    /// the base, doubled per earlier trip, never above the cap.
    pub fn open_time(&self, trips: u32) -> u64 {
        match self.backoff_cap {
            None => self.open_for,
            Some(cap) => (self.open_for << (trips.max(1) - 1).min(40)).min(cap),
        }
    }

    /// The current timed state's start and the units it lasts.
    fn timed(&self) -> Option<(u64, u64)> {
        match self.state {
            State::Open { since, trips } => Some((since, self.open_units(trips))),
            State::Probing { since, .. } => Some((since, self.need(self.probe_timeout))),
            _ => None,
        }
    }

    /// The first clock reading at or after `now` that lapses the current
    /// state's time (Open: its open time; Probing: the probe timeout), if it
    /// has one that has not run out at `now`: the start of unit `units(now)
    /// + need - elapsed`. Lets a test land on the boundary.
    pub fn deadline(&self, now: u64) -> Option<u64> {
        let (since, need) = self.timed()?;
        let elapsed = self.elapsed(since, now);
        (elapsed < need)
            .then(|| ((now >> self.shift).wrapping_add(need - elapsed)).wrapping_shl(self.shift))
    }

    fn go(&mut self, to: State) {
        self.counter += 1;
        let change = (self.state.phase(), to.phase(), self.counter);
        if let Some(slot) = self.changes.get_mut(self.n_changes) {
            *slot = Some(change);
        }
        self.n_changes += 1;
        self.state = to;
    }

    /// Whether the Open or Probing state's time is up at `now`.
    fn lapsed(&self, now: u64) -> bool {
        self.timed()
            .is_some_and(|(since, need)| self.elapsed(since, now) >= need)
    }

    /// Open whose time is up, or Probing whose probe timed out: HalfOpen.
    fn lapse(&mut self, now: u64) {
        if self.lapsed(now)
            && let State::Open { trips, .. } | State::Probing { trips, .. } = self.state
        {
            self.go(State::HalfOpen { trips })
        }
    }

    pub fn admit(&mut self, now: u64) -> Answer {
        self.lapse(now);
        match self.state {
            State::Closed { .. } => Answer::Admitted {
                counter: self.counter,
                probe: false,
            },
            State::HalfOpen { trips } => {
                self.go(State::Probing { since: now, trips });
                Answer::Admitted {
                    counter: self.counter,
                    probe: true,
                }
            }
            State::ForcedOpen => Answer::Rejected {
                cause: Cause::ForcedOpen,
                retry_after: None,
            },
            State::Open { .. } | State::Probing { .. } => Answer::Rejected {
                cause: if matches!(self.state, State::Open { .. }) {
                    Cause::Open
                } else {
                    Cause::Probing
                },
                retry_after: self.deadline(now).map(|at| at.wrapping_sub(now)),
            },
        }
    }

    pub fn release(&mut self, counter: u64, outcome: Outcome, now: u64) -> Answer {
        if counter != self.counter {
            return Answer::Stale;
        }
        match self.state {
            State::Closed { failures } => {
                match outcome {
                    Outcome::Success => self.state = State::Closed { failures: 0 },
                    Outcome::Ignored => {}
                    Outcome::Failure if failures + 1 >= self.threshold => self.go(State::Open {
                        since: now,
                        trips: 1,
                    }),
                    Outcome::Failure => {
                        self.state = State::Closed {
                            failures: failures + 1,
                        }
                    }
                }
                Answer::Recorded
            }
            State::Probing { trips, .. } => {
                if self.lapsed(now) {
                    self.go(State::HalfOpen { trips });
                    return Answer::Stale;
                }
                self.go(match outcome {
                    Outcome::Success => State::Closed { failures: 0 },
                    Outcome::Failure => State::Open {
                        since: now,
                        trips: (trips + 1).min(self.max_trips),
                    },
                    Outcome::Ignored => State::HalfOpen { trips },
                });
                Answer::Recorded
            }
            // Tickets are only issued in Closed and Probing; with a counter
            // that never wraps no ticket matches another state.
            _ => Answer::Stale,
        }
    }

    /// A read: changes nothing. An Open whose time is up, or a Probing
    /// whose probe timed out, reads as half-open.
    pub fn status(&self, now: u64) -> Answer {
        if self.lapsed(now) {
            return Answer::Status(Status::HalfOpen);
        }
        Answer::Status(match self.state {
            State::Closed { .. } => Status::Closed,
            State::Open { .. } | State::ForcedOpen => Status::Open,
            State::HalfOpen { .. } => Status::HalfOpen,
            State::Probing { .. } => Status::Probing,
        })
    }

    pub fn force_open(&mut self) -> Answer {
        if self.state != State::ForcedOpen {
            self.go(State::ForcedOpen);
        }
        Answer::Done
    }

    pub fn force_close(&mut self) -> Answer {
        self.go(State::Closed { failures: 0 });
        Answer::Done
    }
}
