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
//!
//! Hinted open times (`docs/spec.md`, "Policies"): a failure that carries
//! its open time and `force_open_for` open the breaker until a deadline:
//! the start of unit `units(now) + min(need(d), 2^(time_bits - 1))` (a hint
//! is clamped to half the ring), kept here as that clock reading. A reading reaches it
//! when it is less than half the time field of units past it; any other
//! reading is before it.

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
    OpenUntil,
}

impl Phase {
    pub fn status(self) -> Status {
        match self {
            Phase::Closed => Status::Closed,
            Phase::Open | Phase::ForcedOpen | Phase::OpenUntil => Status::Open,
            Phase::HalfOpen => Status::HalfOpen,
            Phase::Probing => Status::Probing,
        }
    }
}

/// A state with what it needs to decide, in full precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed {
        failures: u32,
    },
    Open {
        since: u64,
        trips: u32,
    },
    HalfOpen {
        trips: u32,
    },
    Probing {
        since: u64,
        trips: u32,
    },
    ForcedOpen,
    /// Open until the clock reading `until` (the start of its unit).
    OpenUntil {
        until: u64,
        trips: u32,
    },
}

impl State {
    pub fn phase(&self) -> Phase {
        match self {
            State::Closed { .. } => Phase::Closed,
            State::Open { .. } => Phase::Open,
            State::HalfOpen { .. } => Phase::HalfOpen,
            State::Probing { .. } => Phase::Probing,
            State::ForcedOpen => Phase::ForcedOpen,
            State::OpenUntil { .. } => Phase::OpenUntil,
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

    /// Half the time field, in units: the longest a deadline lies ahead.
    fn half_field(&self) -> u64 {
        1u64 << (self.time_bits - 1)
    }

    /// The deadline a hint of `ticks` given at `now` sets: the start of
    /// unit `units(now) + min(need(ticks), half the field)`. `need` in
    /// `u128` here: a hint may be any `u64`.
    pub fn deadline_for(&self, now: u64, ticks: u64) -> u64 {
        let unit = 1u128 << self.shift;
        let need = (u128::from(ticks) + 2 * (unit - 1)) >> self.shift;
        let units = need.min(u128::from(self.half_field())) as u64;
        ((now >> self.shift).wrapping_add(units)).wrapping_shl(self.shift)
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
        if let State::OpenUntil { until, .. } = self.state {
            // Units from `now` to the deadline, modulo the field.
            let left = self.elapsed(now, until);
            return (!self.lapsed(now))
                .then(|| ((now >> self.shift).wrapping_add(left)).wrapping_shl(self.shift));
        }
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

    /// Whether the Open or Probing state's time is up at `now`, or the
    /// OpenUntil state's deadline reached.
    fn lapsed(&self, now: u64) -> bool {
        if let State::OpenUntil { until, .. } = self.state {
            return self.elapsed(until, now) < self.half_field();
        }
        self.timed()
            .is_some_and(|(since, need)| self.elapsed(since, now) >= need)
    }

    /// Open whose time is up, Probing whose probe timed out, or OpenUntil
    /// whose deadline is reached: HalfOpen.
    fn lapse(&mut self, now: u64) {
        if self.lapsed(now)
            && let State::Open { trips, .. }
            | State::Probing { trips, .. }
            | State::OpenUntil { trips, .. } = self.state
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
            State::Open { .. } | State::Probing { .. } | State::OpenUntil { .. } => {
                Answer::Rejected {
                    cause: if !matches!(self.state, State::Probing { .. }) {
                        Cause::Open
                    } else {
                        Cause::Probing
                    },
                    // `Rejected` saturates its wait at `usize::MAX >> 2` ticks
                    // (2^30 - 1 here): a hint can be that long.
                    retry_after: self
                        .deadline(now)
                        .map(|at| at.wrapping_sub(now).min((usize::MAX >> 2) as u64)),
                }
            }
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
            State::Open { .. } | State::ForcedOpen | State::OpenUntil { .. } => Status::Open,
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

    /// A failure that carries its open time: as a failure, except that a
    /// trip (the N-th failure, or the probe's in time) opens until the
    /// deadline of `ticks` from `now`.
    pub fn release_failure_for(&mut self, counter: u64, ticks: u64, now: u64) -> Answer {
        if counter != self.counter {
            return Answer::Stale;
        }
        let trips = match self.state {
            State::Closed { failures } if failures + 1 >= self.threshold => 1,
            State::Probing { trips, .. } if !self.lapsed(now) => (trips + 1).min(self.max_trips),
            _ => return self.release(counter, Outcome::Failure, now),
        };
        self.go(State::OpenUntil {
            until: self.deadline_for(now, ticks),
            trips,
        });
        Answer::Recorded
    }

    /// Opens until the deadline of `ticks` from `now`, from any state (an
    /// elapsed timed state lapses first), keeping the trips of a timed or
    /// half-open state (at least 1), else 1.
    pub fn force_open_for(&mut self, ticks: u64, now: u64) -> Answer {
        self.lapse(now);
        let trips = match self.state {
            State::Closed { .. } | State::ForcedOpen => 1,
            State::Open { trips, .. }
            | State::HalfOpen { trips }
            | State::Probing { trips, .. }
            | State::OpenUntil { trips, .. } => trips.max(1),
        };
        self.go(State::OpenUntil {
            until: self.deadline_for(now, ticks),
            trips,
        });
        Answer::Done
    }

    pub fn force_close(&mut self) -> Answer {
        self.go(State::Closed { failures: 0 });
        Answer::Done
    }
}
