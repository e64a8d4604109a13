//! The reference model: `docs/spec.md` and the transition table of
//! `docs/design.md`, written as plainly as possible, to be the oracle of every
//! other test.
//!
//! # What it is
//!
//! A sequential state machine over an enum of states with an **unbounded**
//! counter (`u64`), **full `u64` clock readings** as timestamps, and no bit
//! packing. It shares no code with the core's pure layer
//! (`tripword::transition`, `tripword::word`'s encode/decode, the unit
//! conversion of `tripword::config`): it only borrows the core's plain
//! vocabulary types ([`Outcome`], [`Status`], [`Cause`], [`ValidConfig`]'s
//! getters of what the user set, [`Layout`]'s field widths) so its answers can
//! be compared with the core's directly. It derives the time shift itself,
//! from the rule the spec states, and [`ModelConfig::for_width`] checks that
//! the core derived the same.
//!
//! # What it keeps of the word width
//!
//! A word width has four consequences a user can observe, and the model
//! keeps exactly those (see [`ModelConfig`]):
//!
//! - **time is kept in units of `2^s` ticks, modulo `2^T`** (`T` =
//!   `time_bits`: 34 on `W64`, 15 on `W32`; `s` the time shift): a timestamp
//!   is `units(t) = (t >> s) mod 2^T`, and the time elapsed from `since` to
//!   `now` is `(units(now) - units(since)) mod 2^T` units. A clock that went
//!   backwards (by at least a unit) reads as a long elapsed time; one that
//!   stood still for a multiple of the ring `2^(T+s)` reads as no time at all
//!   (spec, "Time");
//! - **durations are whole units**: a duration of `d` ticks is
//!   `need(d) = (d + 2 (2^s - 1)) >> s` units, and with backoff the open time
//!   after `k` trips is `min(need(cap), need(open_for) * 2^(k-1))` units;
//! - **tickets are compared modulo the counter period** (`2^counter_bits`): a
//!   ticket held across exactly a multiple of the period of state changes is
//!   taken as current if the state then accepts releases (design-word.md, "Counter
//!   wrap"). The model's own counter never wraps; [`Model::counter`] is the
//!   true number of state changes;
//! - **trips saturate** at `2^trips_bits - 1`, which bounds the backoff
//!   doubling;
//! - **a deadline is a unit, modulo `2^T`** (`OpenUntil`): a
//!   hint of `d` ticks at clock reading `now` opens until the start of unit
//!   `units(now) + hint(d)`, with `hint(d) = min(need(d), 2^(T-1))` (clamped
//!   to half the time field: [`ModelConfig::longest_hint`] ticks); the model
//!   keeps that deadline as the clock reading where the unit starts. A
//!   reading lapses it when it is at most half the field past it:
//!   `(units(now) - units(until)) mod 2^T < 2^(T-1)`; any other reading is
//!   before it (so a clock stepping back reads as "not yet").
//!
//! # The rules (design.md's transition table, row by row)
//!
//! `c` is the counter; each transition moves it to `c+1` and is recorded as
//! `(from, to, c+1)`. The clock is read only where marked *(clock)*; the
//! model records whether an operation read it ([`Model::read_clock`]) so
//! tests can check SPEC I9. "Lapsed" is the unit rule above.
//!
//! | state | event | next |
//! |---|---|---|
//! | Closed{f} | admit | unchanged, ticket `c` |
//! | Closed{f} | release(c, success) | Closed{0} (no transition) |
//! | Closed{f} | release(c, ignored) | unchanged |
//! | Closed{f} | release(c, failure), f+1 < N | Closed{f+1} (no transition) |
//! | Closed{f} | release(c, failure), f+1 = N *(clock)* | Open{now, 1} |
//! | any | release(c' ≠ c) | unchanged, stale |
//! | Open{s,k} | admit *(clock)* | not lapsed: rejected (`Open`, wait); else HalfOpen{k} then Probing{now,k}, ticket `c+2` |
//! | HalfOpen{k} | admit *(clock)* | Probing{now,k}, ticket `c+1` |
//! | Probing{s,k} | admit *(clock)* | not timed out: rejected (`Probing`, wait); else HalfOpen{k} then Probing{now,k}, ticket `c+2` |
//! | Probing{s,k} | release(c, _) *(clock)*, timed out | HalfOpen{k}, **stale** |
//! | Probing{s,k} | release(c, success) in time | Closed{0} |
//! | Probing{s,k} | release(c, failure) in time | Open{now, min(k+1, max trips)} |
//! | Probing{s,k} | release(c, ignored) in time | HalfOpen{k} |
//! | Open, HalfOpen, ForcedOpen, OpenUntil | release(c, _) | unchanged, stale |
//! | Closed{f} | failure_for(c, d), f+1 < N | as release(c, failure) |
//! | Closed{f} | failure_for(c, d), f+1 = N *(clock)* | OpenUntil{deadline(now, d), 1} |
//! | Probing{s,k} | failure_for(c, d) *(clock)*, timed out | HalfOpen{k}, **stale** |
//! | Probing{s,k} | failure_for(c, d) in time | OpenUntil{deadline(now, d), min(k+1, max trips)} |
//! | any other | failure_for(c, d) | as release(c, failure): stale |
//! | any | failure_for(c' ≠ c, d) | unchanged, stale, no clock |
//! | OpenUntil{u,k} | admit *(clock)* | before `u`: rejected (`Open`, wait to `u`); else HalfOpen{k} then Probing{now,k}, ticket `c+2` |
//! | any | force_open_for(d) *(clock)* | a lapsed Open/Probing/OpenUntil first becomes HalfOpen{k}; then OpenUntil{deadline(now, d), k'} with `k' = max(k, 1)` from a timed state or HalfOpen, else 1 |
//! | ForcedOpen | admit | rejected (`ForcedOpen`, no wait) |
//! | any but ForcedOpen | force_open | ForcedOpen |
//! | ForcedOpen | force_open | unchanged |
//! | any | force_close | Closed{0} (a transition even from Closed) |
//! | Open / Probing / OpenUntil | status *(clock)* | a read: lapsed reads `HalfOpen`, nothing changes |
//! | any | status | a read: the state (ForcedOpen and OpenUntil read as Open) |
//!
//! `deadline(now, d)` is the clock reading that starts unit `units(now) +
//! hint(d)` (see above). Transitions name `OpenUntil` as `Open`, not
//! forced.
//!
//! A rejection's wait is the ticks from `now` to the first tick whose unit
//! count reaches the duration: the start of unit `units(now) + (need -
//! elapsed)`, saturated at the most a `Rejected` holds. For `OpenUntil` it is
//! the start of unit `units(now) + ((units(until) - units(now)) mod 2^T)`.
//!
//! # Use
//!
//! ```
//! use tripword::{Cause, Config, Outcome, Status, W64};
//! use tripword_verification::model::{Model, ModelConfig};
//!
//! let valid = Config::new().failure_threshold(1).open_for(10).check::<W64>().unwrap();
//! let mut m = Model::new(ModelConfig::for_width(&valid));
//! let t = m.acquire(0).unwrap();
//! assert!(m.release(t.counter, Outcome::Failure, 5));
//! assert_eq!(m.transitions().len(), 1); // Closed -> Open
//! let r = m.acquire(14).unwrap_err();
//! assert_eq!((r.cause, r.retry_after), (Cause::Open, Some(1)));
//! assert_eq!(m.status(15), Status::HalfOpen); // a read: nothing changes
//! assert!(m.transitions().is_empty());
//! assert!(m.acquire(15).unwrap().probe);
//! assert_eq!(m.status(15), Status::Probing);
//! ```

use tripword::word::{Layout, Snapshot, State, Word};
use tripword::{Cause, Jitter, Outcome, Status, ValidConfig};

mod recovery;
pub use recovery::ModelRecovery;

/// The model's config: what the user set, the time shift the spec's rule
/// derives from it, and the observable parts of the word width.
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
    /// The horizon the shift was derived for, in ticks.
    pub horizon: u64,
    /// Timestamps are kept in units of `2^time_shift` ticks.
    pub time_shift: u32,
    /// Width of the stored timestamps: units are compared modulo
    /// `2^time_bits`.
    pub time_bits: u32,
    /// Width of the counter: tickets are compared modulo `2^counter_bits`.
    pub counter_bits: u32,
    /// Width of the trip count: trips saturate at `2^trips_bits - 1`.
    pub trips_bits: u32,
    /// Jitter on the open time (`docs/spec.md`, "Jitter"): `None` unless
    /// set with [`with_jitter`](Self::with_jitter) or taken from a core
    /// config.
    pub jitter: Jitter,
    /// Several probes and the ramp (`docs/spec.md`, "Recovery"): one probe
    /// and no ramp unless set with
    /// [`with_recovery`](Self::with_recovery) or taken from a core config.
    pub recovery: ModelRecovery,
}

/// `(d + 2 (2^s - 1)) >> s`, in `u128` so that no duration overflows.
fn need_units(ticks: u64, shift: u32) -> u64 {
    let unit = 1u128 << shift;
    ((u128::from(ticks) + 2 * (unit - 1)) >> shift) as u64
}

impl ModelConfig {
    /// The model of the validated config `valid` on word width `W`.
    ///
    /// # Panics
    /// If the time shift the spec's rule derives is not the one the core
    /// derived (`valid.time_shift()`), or the ring is not the core's
    /// `valid.ring()`: that is a disagreement to report.
    pub fn for_width<W: Word>(valid: &ValidConfig<W>) -> Self {
        let m = Self::new(
            &W::LAYOUT,
            valid.failure_threshold(),
            valid.open_for(),
            valid.backoff_cap(),
            valid.probe_timeout(),
            valid.abandon(),
            valid.horizon(),
        )
        .expect("the core accepted this config: the spec's rule must find a shift")
        .with_jitter(valid.jitter())
        .with_recovery(
            u32::from(valid.probes()),
            Some(u32::from(valid.probes_to_close())),
            valid.ramp(),
        );
        assert!(
            m.recovery_in_range(),
            "the core accepted recovery options the spec's rules refuse, for {valid:?}"
        );
        assert_eq!(
            m.time_shift,
            valid.time_shift(),
            "the core derived another time shift than the spec's rule, for {valid:?}"
        );
        if m.ring() < 1 << 64 {
            assert_eq!(
                u128::from(valid.ring()),
                m.ring(),
                "the ring, for {valid:?}"
            );
        }
        assert_eq!(
            m.longest_hint(),
            valid.longest_hint(),
            "the longest hint (half the ring), for {valid:?}"
        );
        m
    }

    /// The model of a config on a word with field widths `layout` (only the
    /// widths are read), with the time shift derived by the spec's rule:
    /// the smallest `s` (at most `word_bits - time_bits`) for which
    /// `horizon + longest + 4 * 2^s <= 2^(time_bits + s)` and
    /// `need(longest) <= 2^(time_bits - 1)`. `None` when there is none.
    pub fn new(
        layout: &Layout,
        failure_threshold: u32,
        open_for: u64,
        backoff_cap: Option<u64>,
        probe_timeout: u64,
        abandon: Outcome,
        horizon: u64,
    ) -> Option<Self> {
        let longest = open_for.max(probe_timeout).max(backoff_cap.unwrap_or(0));
        let time_shift = Self::derive_shift(layout, horizon, longest)?;
        Some(ModelConfig {
            failure_threshold,
            open_for,
            backoff_cap,
            probe_timeout,
            abandon,
            horizon,
            time_shift,
            time_bits: layout.time_bits,
            counter_bits: layout.counter_bits,
            trips_bits: layout.trips_bits,
            jitter: Jitter::None,
            recovery: ModelRecovery::none(layout),
        })
    }

    /// The same config with `jitter` on the open time.
    pub fn with_jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }

    /// The spec's jitter draw for the `Open` state entered with counter
    /// `counter` after `trips` trips, in 1/65 536ths: the top 16 bits of
    /// the finaliser `lowbias32` applied to `seed XOR (c << trips_bits |
    /// k)`, with `c` the counter modulo its period and `k` the saturated
    /// trip count. Written from the spec's text, not from the core's code.
    pub fn jitter_fraction(&self, seed: u32, counter: u64, trips: u64) -> u64 {
        let c = counter % self.counter_period();
        let k = self.trips(trips);
        let mut x = u64::from(seed) ^ ((c << self.trips_bits) | k);
        let m = |a: u64, b: u64| (a * b) % (1u64 << 32);
        x ^= x >> 16;
        x = m(x, 0x7feb_352d);
        x ^= x >> 15;
        x = m(x, 0x846c_a68b);
        x ^= x >> 16;
        x >> 16
    }

    /// The spec's rule for the time shift (see [`new`](Self::new)).
    pub fn derive_shift(layout: &Layout, horizon: u64, longest: u64) -> Option<u32> {
        let t = layout.time_bits;
        (0..=layout.word_bits - t).find(|&s| {
            let ring = 1u128 << (t + s);
            u128::from(horizon) + u128::from(longest) + 4 * (1u128 << s) <= ring
                && u128::from(need_units(longest, s)) <= 1u128 << (t - 1)
        })
    }

    /// Ticks per unit: `2^s`.
    pub fn unit(&self) -> u64 {
        1u64 << self.time_shift
    }

    /// The ring of the time field in ticks, `2^(T+s)` (in `u128`: it is
    /// `2^64` at the largest `W64` shift).
    pub fn ring(&self) -> u128 {
        1u128 << (self.time_bits + self.time_shift)
    }

    /// How many distinct counters a ticket can carry (`2^counter_bits`).
    pub fn counter_period(&self) -> u64 {
        1u64 << self.counter_bits
    }

    /// The most trips the breaker remembers.
    pub fn max_trips(&self) -> u64 {
        (1u64 << self.trips_bits) - 1
    }

    /// The timestamp the word keeps for clock reading `t`: `(t >> s) mod
    /// 2^T` units.
    pub fn units(&self, t: u64) -> u64 {
        (t >> self.time_shift) & ((1u64 << self.time_bits) - 1)
    }

    /// Units elapsed from the clock reading `since` to the clock reading
    /// `now`, modulo `2^T`.
    pub fn elapsed(&self, since: u64, now: u64) -> u64 {
        self.units(now).wrapping_sub(self.units(since)) & ((1u64 << self.time_bits) - 1)
    }

    /// The units a duration of `ticks` must see elapse.
    pub fn need(&self, ticks: u64) -> u64 {
        need_units(ticks, self.time_shift)
    }

    /// Half the time field, in units: `2^(T-1)`, the longest a deadline may
    /// lie ahead.
    pub fn max_hint_units(&self) -> u64 {
        1u64 << (self.time_bits - 1)
    }

    /// The longest hint kept, in ticks: half the ring, `2^(T-1+s)` (what
    /// `ValidConfig::longest_hint` documents). Longer ones are clamped.
    pub fn longest_hint(&self) -> u64 {
        self.max_hint_units() << self.time_shift
    }

    /// The units a hint of `ticks` (`failure_for`, `force_open_for`) keeps
    /// the breaker open: `need(ticks)`, clamped to half the time field.
    pub fn hint_units(&self, ticks: u64) -> u64 {
        self.need(ticks).min(self.max_hint_units())
    }

    /// The deadline a hint of `ticks` given at clock reading `now` sets, as
    /// a clock reading: the start of unit `units(now) + hint(ticks)`
    /// (wrapping, like the clock).
    pub fn deadline(&self, now: u64, ticks: u64) -> u64 {
        (now >> self.time_shift)
            .wrapping_add(self.hint_units(ticks))
            .wrapping_shl(self.time_shift)
    }

    /// Whether the clock reading `now` is at or past the deadline `until`
    /// (a clock reading), as the word tells: at most half the time field
    /// past it, `(units(now) - units(until)) mod 2^T < 2^(T-1)`.
    pub fn reached(&self, until: u64, now: u64) -> bool {
        self.elapsed(until, now) < self.max_hint_units()
    }

    /// The first clock reading at or after `now` that reaches the deadline
    /// `until`, given that `now` does not: the start of unit `units(now) +
    /// ((units(until) - units(now)) mod 2^T)`. Wrapping, like the clock.
    pub fn first_reach_at(&self, until: u64, now: u64) -> u64 {
        let left = self.elapsed(now, until);
        ((now >> self.time_shift).wrapping_add(left)).wrapping_shl(self.time_shift)
    }

    /// `trips` as the word keeps it: at least 1 (0 reads as 1 here), at most
    /// the largest count.
    fn trips(&self, trips: u64) -> u64 {
        trips.clamp(1, self.max_trips())
    }

    /// The units an `Open` state after `trips` trips must see elapse:
    /// `need(open_for)`, or with backoff `min(need(cap), need(open_for) *
    /// 2^(k-1))` with `k` the saturated trip count.
    ///
    /// With jitter, of the `Open` state entered with counter `counter`,
    /// `d` shortened by the draw `f` ([`jitter_fraction`](Self::jitter_fraction)):
    /// equal `d - floor(floor(d/2) f / 2^16)`, full `d - floor(d f / 2^16)`.
    pub fn open_need(&self, trips: u64, counter: u64) -> u64 {
        let base = self.need(self.open_for);
        let d = match self.backoff_cap {
            None => base,
            Some(cap) => {
                let doubled = u128::from(base) << (self.trips(trips) - 1);
                doubled.min(u128::from(self.need(cap))) as u64
            }
        };
        match self.jitter {
            Jitter::None => d,
            Jitter::Equal { seed } => {
                let f = u128::from(self.jitter_fraction(seed, counter, trips));
                d - ((u128::from(d / 2) * f) >> 16) as u64
            }
            Jitter::Full { seed } => {
                let f = u128::from(self.jitter_fraction(seed, counter, trips));
                d - ((u128::from(d) * f) >> 16) as u64
            }
        }
    }

    /// The units a probe may run.
    pub fn probe_need(&self) -> u64 {
        self.need(self.probe_timeout)
    }

    /// How long the breaker stays open after its `trips`-th consecutive
    /// trip, in ticks, as set: `open_for`, or `min(open_for * 2^(k-1), cap)`
    /// (what `ValidConfig::open_duration` documents).
    pub fn open_duration(&self, trips: u64) -> u64 {
        match self.backoff_cap {
            None => self.open_for,
            Some(cap) => {
                let doubled = u128::from(self.open_for) << (self.trips(trips) - 1);
                doubled.min(u128::from(cap)) as u64
            }
        }
    }

    /// The first clock reading at or after `now` at which `need` units have
    /// elapsed since `since`, given that fewer have at `now`: the start of
    /// unit `units(now) + need - elapsed`. Wrapping, like the clock.
    pub fn first_lapse_at(&self, since: u64, need: u64, now: u64) -> u64 {
        let left = need - self.elapsed(since, now);
        ((now >> self.time_shift).wrapping_add(left)).wrapping_shl(self.time_shift)
    }

    /// Whether a ticket counter and the breaker's counter are the same
    /// modulo the counter period.
    pub fn same_counter(&self, a: u64, b: u64) -> bool {
        a % self.counter_period() == b % self.counter_period()
    }
}

/// The name of a state, without its payload (the model's own: the core's
/// is private).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ModelPhase {
    /// Admitting.
    Closed,
    /// Rejecting until the open time is up.
    Open,
    /// The next caller probes.
    HalfOpen,
    /// One probe is running.
    Probing,
    /// Held open by an operator.
    ForcedOpen,
    /// Open until a deadline (a hinted failure or `force_open_for`).
    OpenUntil,
    /// Several probes running (reported as `Probing`).
    Trial,
    /// The progressive ramp (reported as `Recovering`).
    Ramp,
}

impl ModelPhase {
    /// What a status read reports for this phase, before time is looked at:
    /// `ForcedOpen` and `OpenUntil` read as `Open`.
    pub fn status(self) -> Status {
        match self {
            ModelPhase::Closed => Status::Closed,
            ModelPhase::Open | ModelPhase::ForcedOpen | ModelPhase::OpenUntil => Status::Open,
            ModelPhase::HalfOpen => Status::HalfOpen,
            ModelPhase::Probing | ModelPhase::Trial => Status::Probing,
            ModelPhase::Ramp => Status::Recovering,
        }
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
    /// Rejecting calls until the clock reaches `until` (a hinted
    /// failure that tripped, or `force_open_for`), after `trips` trips.
    OpenUntil {
        /// The deadline: the clock reading that starts the deadline's unit.
        until: u64,
        /// Consecutive trips since the last close (at least 1).
        trips: u64,
    },
    /// Several probes (`recovery.rs`): a trial started at `since`.
    Trial {
        /// The clock reading at the trial's first probe.
        since: u64,
        /// Consecutive trips since the last close.
        trips: u64,
        /// Probes admitted that have not reported.
        running: u32,
        /// Probes that succeeded.
        passed: u32,
        /// Probes that failed.
        failed: u32,
    },
    /// The progressive ramp (`recovery.rs`), started at `since`.
    Ramp {
        /// The clock reading at the probes' success.
        since: u64,
        /// Consecutive trips since the last close.
        trips: u64,
        /// The admission credit, in units of `2^-share_bits` calls.
        credit: u64,
        /// Consecutive failures of admitted calls.
        failures: u32,
    },
}

impl ModelState {
    /// The state's name.
    pub fn phase(&self) -> ModelPhase {
        match self {
            ModelState::Closed { .. } => ModelPhase::Closed,
            ModelState::Open { .. } => ModelPhase::Open,
            ModelState::HalfOpen { .. } => ModelPhase::HalfOpen,
            ModelState::Probing { .. } => ModelPhase::Probing,
            ModelState::ForcedOpen => ModelPhase::ForcedOpen,
            ModelState::OpenUntil { .. } => ModelPhase::OpenUntil,
            ModelState::Trial { .. } => ModelPhase::Trial,
            ModelState::Ramp { .. } => ModelPhase::Ramp,
        }
    }

    /// The trip count of a state that keeps one.
    pub fn trips(&self) -> Option<u64> {
        match *self {
            ModelState::Open { trips, .. }
            | ModelState::HalfOpen { trips }
            | ModelState::Probing { trips, .. }
            | ModelState::OpenUntil { trips, .. }
            | ModelState::Trial { trips, .. }
            | ModelState::Ramp { trips, .. } => Some(trips),
            ModelState::Closed { .. } | ModelState::ForcedOpen => None,
        }
    }

    /// What `status()` reports in this state, before time is looked at.
    pub fn status(&self) -> Status {
        self.phase().status()
    }
}

/// A state change: from, to, and the (unbounded) counter of the state
/// entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModelTransition {
    /// The state left.
    pub from: ModelPhase,
    /// The state entered.
    pub to: ModelPhase,
    /// The counter of the state entered (never wraps in the model).
    pub counter: u64,
}

impl ModelTransition {
    /// Whether the state entered or left is the operator-held open.
    pub fn forced(&self) -> bool {
        self.from == ModelPhase::ForcedOpen || self.to == ModelPhase::ForcedOpen
    }
}

/// An admission: the counter to release with and whether it is the probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModelTicket {
    /// The (unbounded) counter of the state the ticket was issued in.
    pub counter: u64,
    /// Whether this is the probe of a half-open breaker.
    pub probe: bool,
}

/// A rejection: why, and the ticks until an admission could succeed
/// (`None` when forced open).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModelRejected {
    /// Why.
    pub cause: Cause,
    /// Ticks from the rejection's clock reading to the first reading that
    /// lapses the state; `None` for `ForcedOpen`.
    pub retry_after: Option<u64>,
}

/// The longest wait a `Rejected` holds: `usize::MAX >> 2` ticks.
pub const MAX_RETRY_AFTER: u64 = (usize::MAX >> 2) as u64;

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

    /// The timed state's start, the units it lasts and its trips, if it is
    /// `Open` or `Probing`.
    pub fn timed(&self) -> Option<(u64, u64, u64)> {
        match self.state {
            ModelState::Open { since, trips } => {
                Some((since, self.config.open_need(trips, self.counter), trips))
            }
            ModelState::Probing { since, trips } => Some((since, self.config.probe_need(), trips)),
            _ => None,
        }
    }

    /// The deadline of an `OpenUntil` state (a clock reading).
    pub fn until(&self) -> Option<u64> {
        match self.state {
            ModelState::OpenUntil { until, .. } => Some(until),
            _ => None,
        }
    }

    /// Whether the state keeps a time (`Open`, `Probing`, `OpenUntil`).
    pub fn is_timed(&self) -> bool {
        self.timed().is_some() || self.until().is_some()
    }

    /// Whether the `Open` or `Probing` state's time is up at `now`, or the
    /// `OpenUntil` state's deadline is reached.
    fn lapsed(&self, now: u64) -> bool {
        if let Some(until) = self.until() {
            return self.config.reached(until, now);
        }
        self.timed()
            .is_some_and(|(since, need, _)| self.config.elapsed(since, now) >= need)
    }

    /// The first clock reading at or after `now` at which an admission
    /// would elect a probe, if the state is `Open`, `Probing` or `OpenUntil`
    /// and not yet lapsed at `now` (wrapping, like the clock).
    pub fn next_lapse(&self, now: u64) -> Option<u64> {
        if let Some(until) = self.until() {
            return (!self.config.reached(until, now))
                .then(|| self.config.first_reach_at(until, now));
        }
        let (since, need, _) = self.timed()?;
        (self.config.elapsed(since, now) < need)
            .then(|| self.config.first_lapse_at(since, need, now))
    }

    /// The rejection the current (not lapsed, or forced) state gives at
    /// `now`.
    fn rejection(&self, now: u64) -> ModelRejected {
        let cause = match self.state {
            ModelState::Open { .. } | ModelState::OpenUntil { .. } => Cause::Open,
            ModelState::Probing { .. } => Cause::Probing,
            _ => Cause::ForcedOpen,
        };
        let retry_after = self
            .next_lapse(now)
            .map(|at| at.wrapping_sub(now).min(MAX_RETRY_AFTER));
        ModelRejected { cause, retry_after }
    }

    /// A caller asks to be admitted at time `now`.
    ///
    /// # Errors
    /// The rejection, with its cause and wait.
    pub fn acquire(&mut self, now: u64) -> Result<ModelTicket, ModelRejected> {
        self.clear_last();
        if let Some(answer) = self.recovery_acquire(now) {
            return answer;
        }
        match self.state {
            ModelState::Closed { .. } => Ok(ModelTicket {
                counter: self.counter,
                probe: false,
            }),
            ModelState::ForcedOpen => Err(self.rejection(now)),
            ModelState::HalfOpen { trips } => {
                let now = self.clock(now);
                Ok(self.elect(trips, now))
            }
            ModelState::Open { trips, .. }
            | ModelState::Probing { trips, .. }
            | ModelState::OpenUntil { trips, .. } => {
                let now = self.clock(now);
                if self.lapsed(now) {
                    self.go(ModelState::HalfOpen { trips });
                    Ok(self.elect(trips, now))
                } else {
                    Err(self.rejection(now))
                }
            }
            ModelState::Trial { .. } | ModelState::Ramp { .. } => unreachable!("recovery.rs"),
        }
    }

    /// A caller releases the ticket issued with `ticket_counter`, at time
    /// `now`. True when the outcome counted, false when the ticket was stale.
    pub fn release(&mut self, ticket_counter: u64, outcome: Outcome, now: u64) -> bool {
        self.clear_last();
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
            ModelState::Probing { trips, .. } => {
                let now = self.clock(now);
                if self.lapsed(now) {
                    self.go(ModelState::HalfOpen { trips });
                    return false;
                }
                match outcome {
                    Outcome::Success => self.recovered(trips, now),
                    Outcome::Failure => self.go(ModelState::Open {
                        since: now,
                        trips: (trips + 1).min(self.config.max_trips()),
                    }),
                    Outcome::Ignored => self.go(ModelState::HalfOpen { trips }),
                }
                true
            }
            ModelState::Trial { .. } | ModelState::Ramp { .. } => self
                .recovery_release(outcome, None, now)
                .expect("a recovery state"),
            ModelState::Open { .. }
            | ModelState::HalfOpen { .. }
            | ModelState::ForcedOpen
            | ModelState::OpenUntil { .. } => false,
        }
    }

    /// A failure that says how long to stay open (`release_failure_for`,
    /// `Permit::failure_for`): `open_for` ticks, clamped to half the ring.
    /// When it trips the breaker (the N-th consecutive failure, or the
    /// probe's failure in time) the breaker is `OpenUntil` the deadline
    /// instead of `Open`; otherwise it is exactly
    /// [`release`](Self::release) with a failure. True when it counted.
    pub fn release_failure_for(&mut self, ticket_counter: u64, open_for: u64, now: u64) -> bool {
        self.clear_last();
        if !self.config.same_counter(ticket_counter, self.counter) {
            return false;
        }
        let trips = match self.state {
            ModelState::Closed { failures } if failures + 1 >= self.config.failure_threshold => 1,
            ModelState::Probing { trips, .. } => {
                let now = self.clock(now);
                if self.lapsed(now) {
                    self.go(ModelState::HalfOpen { trips });
                    return false;
                }
                (trips + 1).min(self.config.max_trips())
            }
            ModelState::Trial { .. } | ModelState::Ramp { .. } => {
                return self
                    .recovery_release(Outcome::Failure, Some(open_for), now)
                    .expect("a recovery state");
            }
            _ => return self.release(ticket_counter, Outcome::Failure, now),
        };
        let now = self.clock(now);
        self.go(ModelState::OpenUntil {
            until: self.config.deadline(now, open_for),
            trips,
        });
        true
    }

    /// The status at `now`: a read, which changes nothing. An `Open` whose
    /// time is up, a `Probing` whose probe timed out, or an `OpenUntil`
    /// whose deadline is reached reads as `HalfOpen`.
    pub fn status(&mut self, now: u64) -> Status {
        self.clear_last();
        if let Some(status) = self.recovery_status(now) {
            return status;
        }
        if self.is_timed() {
            let now = self.clock(now);
            if self.lapsed(now) {
                return Status::HalfOpen;
            }
        }
        self.state.status()
    }

    /// Holds the breaker open until [`force_close`](Self::force_close).
    pub fn force_open(&mut self) {
        self.clear_last();
        if self.state != ModelState::ForcedOpen {
            self.go(ModelState::ForcedOpen);
        }
    }

    /// Opens the breaker now for `open_for` ticks (clamped to half the
    /// ring), from any state: `OpenUntil` the deadline, keeping the trips of
    /// a timed or half-open state (at least 1), else 1. An `Open`, `Probing`
    /// or `OpenUntil` whose time is up first becomes `HalfOpen` (the lazy
    /// move, reported); every earlier ticket becomes stale. Reads the clock.
    pub fn force_open_for(&mut self, open_for: u64, now: u64) {
        self.clear_last();
        let now = self.clock(now);
        if ((self.is_timed() && self.lapsed(now)) || self.trial_lapsed(now))
            && let Some(trips) = self.state.trips()
        {
            self.go(ModelState::HalfOpen { trips });
        }
        let trips = match self.state {
            ModelState::Closed { .. } | ModelState::ForcedOpen => 1,
            state => state.trips().unwrap_or(1).max(1),
        };
        self.go(ModelState::OpenUntil {
            until: self.config.deadline(now, open_for),
            trips,
        });
    }

    /// Closes the breaker from any state; every earlier ticket becomes stale.
    pub fn force_close(&mut self) {
        self.clear_last();
        self.go(ModelState::Closed { failures: 0 });
    }
}

/// Loading a state, for the checks that start from an arbitrary word
/// (`every_word`): constructors only, the rules above are untouched.
impl Model {
    /// A model in `state` that has made `counter` state changes; `None`
    /// when the model cannot be in `state` under its config (a `Closed`
    /// failure count at or above the threshold: the N-th failure trips).
    pub fn with_state(config: ModelConfig, state: ModelState, counter: u64) -> Option<Self> {
        if let ModelState::Closed { failures } = state
            && failures >= config.failure_threshold
        {
            return None;
        }
        Some(Model {
            state,
            counter,
            ..Model::new(config)
        })
    }

    /// The model of a decoded word: its state and counter, a timestamp or
    /// deadline of `u` units taken as the clock reading `u << s` that
    /// starts that unit. `None` where [`with_state`](Self::with_state)
    /// says the model cannot be in that state (the word is then corrupt
    /// under this config, SPEC I8).
    pub fn from_snapshot(config: ModelConfig, snapshot: &Snapshot) -> Option<Self> {
        let at = |units: u64| units << config.time_shift;
        let state = match snapshot.state {
            State::Closed { failures } => ModelState::Closed { failures },
            State::Open { since, trips } => ModelState::Open {
                since: at(since),
                trips: u64::from(trips),
            },
            State::HalfOpen { trips } => ModelState::HalfOpen {
                trips: u64::from(trips),
            },
            State::Probing { since, trips } => ModelState::Probing {
                since: at(since),
                trips: u64::from(trips),
            },
            State::ForcedOpen => ModelState::ForcedOpen,
            State::OpenUntil { until, trips } => ModelState::OpenUntil {
                until: at(until),
                trips: u64::from(trips),
            },
            State::Trial {
                since,
                trips,
                running,
                passed,
                failed,
            } => ModelState::Trial {
                since: since << (config.time_shift + config.trial_extra()),
                trips: u64::from(trips),
                running,
                passed,
                failed,
            },
            State::Ramp {
                since,
                trips,
                credit,
                failures,
            } => ModelState::Ramp {
                since: since << (config.time_shift + config.ramp_extra()),
                trips: u64::from(trips),
                credit: u64::from(credit),
                failures,
            },
            // A state the core decodes and the model does not know yet: the
            // model cannot be in it, so a check that loads the word reads it
            // as corrupt, and disagrees with the core's answers from it until
            // the model learns the state (an arm above).
            #[allow(unreachable_patterns)]
            _ => return None,
        };
        Self::with_state(config, state, u64::from(snapshot.counter))
    }

    /// What a corrupt word whose counter field holds `counter` becomes
    /// before any event applies to it (SPEC I8, fail open): `Closed` with
    /// no failures and the next counter, so no earlier ticket counts.
    pub fn repaired(config: ModelConfig, counter: u64) -> Self {
        Model::with_counter(config, counter + 1)
    }
}

#[cfg(test)]
mod tests;
