//! The reference model: SPEC.md and the transition table of `docs/design.md`,
//! written as plainly as possible, to be the oracle of every other test.
//!
//! # What it is
//!
//! A sequential state machine over an enum of states with an **unbounded**
//! counter (`u64`), **`u64` time**, and no bit packing. It shares no code with
//! the core's pure layer (`tripword::transition`, `tripword::word`'s
//! encode/decode): it only borrows the core's plain vocabulary types
//! ([`Outcome`], [`Status`], [`Phase`], [`Config`]'s getters, [`Layout`]'s field
//! widths) so its answers can be compared with the core's directly.
//!
//! # What it keeps of the word width
//!
//! A word width has three consequences a user can observe, and the model
//! keeps exactly those (see [`ModelConfig`]):
//!
//! - **time is compared modulo `2^T`** (`T` = `time_bits`: 34 on `W64`, 15 on
//!   `W32`): `elapsed(since, now) = (now - since) mod 2^T`, so a clock that
//!   went backwards reads as a long elapsed time, and one that stood still for
//!   a multiple of `2^T` reads as no time at all (design.md, "Time faults");
//! - **tickets are compared modulo the counter period** (`2^counter_bits`): a
//!   ticket held across exactly a multiple of the period of state changes is
//!   taken as current if the state then accepts releases (design.md, "Counter
//!   wrap"). The model's own counter never wraps; [`Model::counter`] is the
//!   true number of state changes;
//! - **trips saturate** at `2^trips_bits - 1`, which bounds the backoff
//!   doubling.
//!
//! # The rules (design.md's transition table, row by row)
//!
//! `c` is the counter; each transition moves it to `c+1` and is recorded as
//! `(from, to, c+1)`. The clock is read only where marked *(clock)*; the
//! model records whether an operation read it ([`Model::read_clock`]) so
//! tests can check SPEC I9.
//!
//! | state | event | next |
//! |---|---|---|
//! | Closed{f} | admit | unchanged, ticket `c` |
//! | Closed{f} | release(c, success) | Closed{0} (no transition) |
//! | Closed{f} | release(c, ignored) | unchanged |
//! | Closed{f} | release(c, failure), f+1 < N | Closed{f+1} (no transition) |
//! | Closed{f} | release(c, failure), f+1 = N *(clock)* | Open{now, 1} |
//! | any | release(c' ≠ c) | unchanged, stale |
//! | Open{s,k} | admit *(clock)* | elapsed < open(k): rejected; else HalfOpen{k} then Probing{now,k}, ticket `c+2` |
//! | HalfOpen{k} | admit *(clock)* | Probing{now,k}, ticket `c+1` |
//! | Probing{s,k} | admit *(clock)* | elapsed < timeout: rejected; else HalfOpen{k} then Probing{now,k}, ticket `c+2` |
//! | Probing{s,k} | release(c, _) *(clock)*, elapsed ≥ timeout | HalfOpen{k}, **stale** |
//! | Probing{s,k} | release(c, success) in time | Closed{0} |
//! | Probing{s,k} | release(c, failure) in time | Open{now, min(k+1, max trips)} |
//! | Probing{s,k} | release(c, ignored) in time | HalfOpen{k} |
//! | Open, HalfOpen, ForcedOpen | release(c, _) | unchanged, stale |
//! | ForcedOpen | admit | rejected |
//! | any but ForcedOpen | force_open | ForcedOpen |
//! | ForcedOpen | force_open | unchanged |
//! | any | force_close | Closed{0} (a transition even from Closed) |
//! | Open / Probing | status *(clock)* | elapsed: HalfOpen{k} |
//! | any | status | reports the state (ForcedOpen reads as Open) |
//!
//! `open(k)` is `open_for`, or with backoff `min(open_for · 2^(k-1), cap)`.
//!
//! # Use
//!
//! ```
//! use tripword::{Config, Outcome, Status, W64};
//! use tripword_verification::model::{Model, ModelConfig};
//!
//! let cfg = ModelConfig::for_width::<W64>(&Config::new().failure_threshold(1).open_for(10));
//! let mut m = Model::new(cfg);
//! let t = m.acquire(0).unwrap();
//! assert!(m.release(t.counter, Outcome::Failure, 5));
//! assert_eq!(m.transitions().len(), 1); // Closed -> Open
//! assert_eq!(m.acquire(14), None);
//! assert!(m.acquire(15).unwrap().probe);
//! assert_eq!(m.status(15), Status::Probing);
//! ```

use tripword::word::{Layout, Phase, Word};
use tripword::{Config, Outcome, Status};

/// The model's config: the breaker's config plus the observable parts of the
/// word width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModelConfig {
    /// Consecutive failures that trip a closed breaker (`N`).
    pub failure_threshold: u32,
    /// Open time after the first trip, in ticks.
    pub open_for: u64,
    /// The backoff cap, when the open time doubles per consecutive trip.
    pub backoff_cap: Option<u64>,
    /// Ticks after which a running probe is given up.
    pub probe_timeout: u64,
    /// What a dropped permit records.
    pub abandon: Outcome,
    /// Width of the stored timestamps: time is compared modulo `2^time_bits`.
    pub time_bits: u32,
    /// Width of the counter: tickets are compared modulo `2^counter_bits`.
    pub counter_bits: u32,
    /// Width of the trip count: trips saturate at `2^trips_bits - 1`.
    pub trips_bits: u32,
}

impl ModelConfig {
    /// The model of `config` on a breaker of word width `W`.
    pub fn for_width<W: Word>(config: &Config) -> Self {
        Self::new(config, &W::LAYOUT)
    }

    /// The model of `config` on a word with field widths `layout` (only the
    /// widths are read).
    pub fn new(config: &Config, layout: &Layout) -> Self {
        ModelConfig {
            failure_threshold: config.get_failure_threshold(),
            open_for: config.get_open_for(),
            backoff_cap: config.get_backoff_cap(),
            probe_timeout: config.get_probe_timeout(),
            abandon: config.get_abandon(),
            time_bits: layout.time_bits,
            counter_bits: layout.counter_bits,
            trips_bits: layout.trips_bits,
        }
    }

    /// How many distinct counters a ticket can carry (`2^counter_bits`).
    pub fn counter_period(&self) -> u64 {
        1u64 << self.counter_bits
    }

    /// The most trips the breaker remembers.
    pub fn max_trips(&self) -> u64 {
        (1u64 << self.trips_bits) - 1
    }

    /// Ticks from `since` to `now`, modulo `2^time_bits`.
    pub fn elapsed(&self, since: u64, now: u64) -> u64 {
        let period = 1u128 << self.time_bits;
        ((now as u128 + period - since as u128 % period) % period) as u64
    }

    /// How long the breaker stays open after its `trips`-th consecutive trip.
    pub fn open_duration(&self, trips: u64) -> u64 {
        match self.backoff_cap {
            None => self.open_for,
            Some(cap) => {
                let doublings = trips.max(1) - 1;
                let long = if doublings >= 64 {
                    u128::MAX
                } else {
                    (self.open_for as u128) << doublings
                };
                long.min(cap as u128) as u64
            }
        }
    }

    /// Whether a ticket counter and the breaker's counter are the same
    /// modulo the counter period.
    pub fn same_counter(&self, a: u64, b: u64) -> bool {
        a % self.counter_period() == b % self.counter_period()
    }
}

/// A state of the model, with its payload. Times are full `u64` clock
/// readings; trips are counted as the word keeps them (saturating).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModelState {
    /// Admitting calls; `failures` consecutive current failures counted.
    Closed {
        /// Consecutive failures since the last success or close.
        failures: u32,
    },
    /// Rejecting calls since `since`, after the `trips`-th consecutive trip.
    Open {
        /// The clock reading at the trip.
        since: u64,
        /// Consecutive trips since the last close.
        trips: u64,
    },
    /// The next caller becomes the probe.
    HalfOpen {
        /// Consecutive trips since the last close.
        trips: u64,
    },
    /// A probe admitted at `since` is running.
    Probing {
        /// The clock reading at the probe's admission.
        since: u64,
        /// Consecutive trips since the last close.
        trips: u64,
    },
    /// Held open by `force_open`.
    ForcedOpen,
}

impl ModelState {
    /// The state's name, as the core reports it in transitions.
    pub fn phase(&self) -> Phase {
        match self {
            ModelState::Closed { .. } => Phase::Closed,
            ModelState::Open { .. } => Phase::Open,
            ModelState::HalfOpen { .. } => Phase::HalfOpen,
            ModelState::Probing { .. } => Phase::Probing,
            ModelState::ForcedOpen => Phase::ForcedOpen,
        }
    }

    /// What `status()` reports in this state (without acting on time).
    pub fn status(&self) -> Status {
        match self {
            ModelState::Closed { .. } => Status::Closed,
            ModelState::Open { .. } | ModelState::ForcedOpen => Status::Open,
            ModelState::HalfOpen { .. } => Status::HalfOpen,
            ModelState::Probing { .. } => Status::Probing,
        }
    }
}

/// A state change: from, to, and the (unbounded) counter of the state
/// entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModelTransition {
    /// The state left.
    pub from: Phase,
    /// The state entered.
    pub to: Phase,
    /// The counter of the state entered (never wraps in the model).
    pub counter: u64,
}

/// An admission: the counter to release with and whether it is the probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModelTicket {
    /// The (unbounded) counter of the state the ticket was issued in.
    pub counter: u64,
    /// Whether this is the probe of a half-open breaker.
    pub probe: bool,
}

/// The reference model of one breaker.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Model {
    config: ModelConfig,
    state: ModelState,
    counter: u64,
    last: Vec<ModelTransition>,
    read_clock: bool,
}

impl Model {
    /// A breaker in its initial state: `Closed`, no failures, counter 0.
    pub fn new(config: ModelConfig) -> Self {
        Model {
            config,
            state: ModelState::Closed { failures: 0 },
            counter: 0,
            last: Vec::new(),
            read_clock: false,
        }
    }

    /// A breaker in `Closed`, no failures, that has already made `counter`
    /// state changes (to explore the counter's wrap without making them).
    pub fn with_counter(config: ModelConfig, counter: u64) -> Self {
        Model {
            counter,
            ..Model::new(config)
        }
    }

    /// The config.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The current state.
    pub fn state(&self) -> ModelState {
        self.state
    }

    /// The number of state changes so far (the unbounded counter).
    pub fn counter(&self) -> u64 {
        self.counter
    }

    /// The transitions the last operation made, in order.
    pub fn transitions(&self) -> &[ModelTransition] {
        &self.last
    }

    /// Whether the last operation needed the clock.
    pub fn read_clock(&self) -> bool {
        self.read_clock
    }

    /// Forgets the last operation's transitions and clock flag (each
    /// operation starts with this), so that states reached by different
    /// paths compare equal.
    pub fn clear_last(&mut self) {
        self.last.clear();
        self.read_clock = false;
    }

    fn begin(&mut self) {
        self.clear_last();
    }

    fn go(&mut self, to: ModelState) {
        self.counter += 1;
        self.last.push(ModelTransition {
            from: self.state.phase(),
            to: to.phase(),
            counter: self.counter,
        });
        self.state = to;
    }

    fn clock(&mut self, now: u64) -> u64 {
        self.read_clock = true;
        now
    }

    /// If `Open`'s time or `Probing`'s timeout has run out at `now`, moves to
    /// `HalfOpen` and says so.
    fn lapse(&mut self, now: u64) -> bool {
        let (since, limit, trips) = match self.state {
            ModelState::Open { since, trips } => (since, self.config.open_duration(trips), trips),
            ModelState::Probing { since, trips } => (since, self.config.probe_timeout, trips),
            _ => return false,
        };
        let now = self.clock(now);
        if self.config.elapsed(since, now) >= limit {
            self.go(ModelState::HalfOpen { trips });
            true
        } else {
            false
        }
    }

    fn elect(&mut self, trips: u64, now: u64) -> ModelTicket {
        self.go(ModelState::Probing { since: now, trips });
        ModelTicket {
            counter: self.counter,
            probe: true,
        }
    }

    /// A caller asks to be admitted at time `now`. `None` when rejected.
    pub fn acquire(&mut self, now: u64) -> Option<ModelTicket> {
        self.begin();
        match self.state {
            ModelState::Closed { .. } => Some(ModelTicket {
                counter: self.counter,
                probe: false,
            }),
            ModelState::ForcedOpen => None,
            ModelState::HalfOpen { trips } => {
                let now = self.clock(now);
                Some(self.elect(trips, now))
            }
            ModelState::Open { trips, .. } | ModelState::Probing { trips, .. } => {
                if self.lapse(now) {
                    Some(self.elect(trips, now))
                } else {
                    None
                }
            }
        }
    }

    /// A caller releases the ticket issued with `ticket_counter`, at time
    /// `now`. True when the outcome counted, false when the ticket was stale.
    pub fn release(&mut self, ticket_counter: u64, outcome: Outcome, now: u64) -> bool {
        self.begin();
        if !self.config.same_counter(ticket_counter, self.counter) {
            return false;
        }
        match self.state {
            ModelState::Closed { failures } => {
                match outcome {
                    Outcome::Success => self.state = ModelState::Closed { failures: 0 },
                    Outcome::Ignored => {}
                    Outcome::Failure => {
                        if failures + 1 >= self.config.failure_threshold {
                            let now = self.clock(now);
                            self.go(ModelState::Open {
                                since: now,
                                trips: 1,
                            });
                        } else {
                            self.state = ModelState::Closed {
                                failures: failures + 1,
                            };
                        }
                    }
                }
                true
            }
            ModelState::Probing { since, trips } => {
                let now = self.clock(now);
                if self.config.elapsed(since, now) >= self.config.probe_timeout {
                    self.go(ModelState::HalfOpen { trips });
                    return false;
                }
                match outcome {
                    Outcome::Success => self.go(ModelState::Closed { failures: 0 }),
                    Outcome::Failure => self.go(ModelState::Open {
                        since: now,
                        trips: (trips + 1).min(self.config.max_trips()),
                    }),
                    Outcome::Ignored => self.go(ModelState::HalfOpen { trips }),
                }
                true
            }
            ModelState::Open { .. } | ModelState::HalfOpen { .. } | ModelState::ForcedOpen => false,
        }
    }

    /// The status at `now`; an elapsed `Open` or timed-out `Probing` becomes
    /// `HalfOpen` first.
    pub fn status(&mut self, now: u64) -> Status {
        self.begin();
        self.lapse(now);
        self.state.status()
    }

    /// Holds the breaker open until [`force_close`](Self::force_close).
    pub fn force_open(&mut self) {
        self.begin();
        if self.state != ModelState::ForcedOpen {
            self.go(ModelState::ForcedOpen);
        }
    }

    /// Closes the breaker from any state; every earlier ticket becomes stale.
    pub fn force_close(&mut self) {
        self.begin();
        self.go(ModelState::Closed { failures: 0 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tripword::{W32, W64};

    fn cfg(c: Config) -> ModelConfig {
        ModelConfig::for_width::<W64>(&c)
    }

    #[test]
    fn trip_probe_close() {
        let mut m = Model::new(cfg(Config::new()
            .failure_threshold(2)
            .open_for(10)
            .probe_timeout(5)));
        let a = m.acquire(0).unwrap();
        let b = m.acquire(0).unwrap();
        assert!(m.release(a.counter, Outcome::Failure, 1));
        assert!(m.transitions().is_empty());
        assert!(m.release(b.counter, Outcome::Failure, 2));
        assert_eq!(
            m.transitions(),
            &[ModelTransition {
                from: Phase::Closed,
                to: Phase::Open,
                counter: 1
            }]
        );
        assert_eq!(m.acquire(11), None);
        let p = m.acquire(12).unwrap();
        assert_eq!((p.counter, p.probe), (3, true));
        assert_eq!(m.transitions().len(), 2);
        assert_eq!(m.acquire(12), None);
        assert!(m.release(p.counter, Outcome::Success, 16));
        assert_eq!(m.state(), ModelState::Closed { failures: 0 });
    }

    #[test]
    fn late_probe_is_stale_and_half_opens() {
        let mut m = Model::new(cfg(Config::new()
            .failure_threshold(1)
            .open_for(10)
            .probe_timeout(5)));
        let t = m.acquire(0).unwrap();
        m.release(t.counter, Outcome::Failure, 0);
        let p = m.acquire(10).unwrap();
        assert!(!m.release(p.counter, Outcome::Success, 15));
        assert_eq!(m.state(), ModelState::HalfOpen { trips: 1 });
    }

    #[test]
    fn elapsed_is_modular() {
        let c = ModelConfig::for_width::<W32>(&Config::new());
        assert_eq!(c.elapsed(10, 15), 5);
        assert_eq!(c.elapsed(10, 9), (1 << 15) - 1);
        assert_eq!(c.elapsed(u64::MAX, 1), 2);
        assert_eq!(c.elapsed(1 << 15, 3), 3);
    }

    #[test]
    fn backoff_doubles_caps_and_saturates() {
        let c = cfg(Config::new().open_for(100).exponential_backoff(1000));
        let d: Vec<u64> = (0..7).map(|k| c.open_duration(k)).collect();
        assert_eq!(d, [100, 100, 200, 400, 800, 1000, 1000]);
        let c =
            ModelConfig::for_width::<W64>(&Config::new().open_for(1).exponential_backoff(1 << 33));
        assert_eq!(c.max_trips(), 31);
        assert_eq!(c.open_duration(c.max_trips()), 1 << 30);
    }

    #[test]
    fn tickets_compare_modulo_the_period() {
        let c = ModelConfig::for_width::<W32>(&Config::new());
        assert!(c.same_counter(3, 3 + 1024));
        assert!(!c.same_counter(3, 4));
    }
}
