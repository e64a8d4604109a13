//! A reference model of the breaker, written from `SPEC.md` and the core's
//! documented time semantics, not from its code: no word, no packing, no
//! wrapping counter. Time is a full `u64`, the counter is a `u64` that never
//! wraps, and a state keeps the exact instant it began.
//!
//! The one thing it borrows from the word is the documented reading of time:
//! elapsed time is measured modulo the width of the word's time field
//! (`2^time_bits`), so a clock that jumps or runs backwards reads here as it
//! does on the breaker (`core/src/clock.rs`).

use tripword::word::Phase;
use tripword::{Config, Outcome, Status};

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
    Admitted { counter: u64, probe: bool },
    Rejected,
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
    time_range: u64,
    /// The changes made since the last `take_changes`.
    changes: [Option<Change>; 8],
    n_changes: usize,
}

impl Model {
    /// A closed breaker with counter 0. `time_bits` and `max_trips` are the
    /// word's documented field widths (`Layout`).
    pub fn new(config: &Config, time_bits: u32, max_trips: u32) -> Self {
        Model {
            state: State::Closed { failures: 0 },
            counter: 0,
            threshold: config.get_failure_threshold(),
            open_for: config.get_open_for(),
            backoff_cap: config.get_backoff_cap(),
            probe_timeout: config.get_probe_timeout(),
            max_trips,
            time_range: 1u64 << time_bits,
            changes: [None; 8],
            n_changes: 0,
        }
    }

    /// The changes made since the last call, in order (the first eight), and
    /// how many there were.
    pub fn take_changes(&mut self) -> ([Option<Change>; 8], usize) {
        let out = (self.changes, self.n_changes);
        self.changes = [None; 8];
        self.n_changes = 0;
        out
    }

    fn elapsed(&self, since: u64, now: u64) -> u64 {
        now.wrapping_sub(since) % self.time_range
    }

    /// Open time after the `trips`-th consecutive trip: the base, doubled per
    /// earlier trip, never above the cap.
    fn open_time(&self, trips: u32) -> u64 {
        match self.backoff_cap {
            None => self.open_for,
            Some(cap) => {
                let mut d = self.open_for;
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

    /// When the current state's time runs out (Open: its open time; Probing:
    /// the probe timeout), if it has one. Lets a test land on the boundary.
    pub fn deadline(&self) -> Option<u64> {
        match self.state {
            State::Open { since, trips } => Some(since.wrapping_add(self.open_time(trips))),
            State::Probing { since, .. } => Some(since.wrapping_add(self.probe_timeout)),
            _ => None,
        }
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

    /// Open whose time is up, or Probing whose probe timed out: HalfOpen.
    fn lapse(&mut self, now: u64) {
        match self.state {
            State::Open { since, trips } if self.elapsed(since, now) >= self.open_time(trips) => {
                self.go(State::HalfOpen { trips })
            }
            State::Probing { since, trips } if self.elapsed(since, now) >= self.probe_timeout => {
                self.go(State::HalfOpen { trips })
            }
            _ => {}
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
            _ => Answer::Rejected,
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
            State::Probing { since, trips } => {
                if self.elapsed(since, now) >= self.probe_timeout {
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

    pub fn status(&mut self, now: u64) -> Answer {
        self.lapse(now);
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
