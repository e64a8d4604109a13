//! The recovery states on raw bits: `Trial` (several probes, tag 7) and
//! `Ramp` (the progressive ramp, tag 6), feature `recovery`
//! (`docs/spec.md`, "Several probes" and "The ramp"; the fields in
//! `docs/design-word.md`, "Recovery states").
//!
//! Both keep their time in the same ring as the other timed states, in
//! coarser units: their counts take the time field's low bits, so the
//! time is kept `3 * probe_bits` (`Trial`) or `share_bits +
//! ramp_failure_bits` (`Ramp`) bits coarser. Deadlines are computed in
//! those units and the units left returned in the config's own, so a
//! rejection's wait is exact to the tick as every other.
//!
//! Without the feature nothing here is called (`word::RECOVERY` is false
//! and every call site tests it first), so none of it is linked.

use crate::config::{ValidConfig, ramp_extra, trial_extra};
use crate::word::{Layout, State, TAG_RAMP, TAG_TRIAL, Word, counter_of, mask};

/// Field access and construction for the two recovery states.
impl Layout {
    const fn trial_time_bits(&self) -> u32 {
        self.time_bits - 3 * self.probe_bits
    }
    const fn ramp_time_bits(&self) -> u32 {
        self.time_bits - self.share_bits - self.ramp_failure_bits
    }
    /// `Trial` since `since` (in its units) after `trips` trips, with
    /// `[running, passed, failed]` probes.
    #[inline(always)]
    pub(crate) const fn trial(
        &self,
        counter: u32,
        since: u64,
        trips: u32,
        counts: [u32; 3],
    ) -> u64 {
        let pb = self.probe_bits;
        let most = mask(pb) as u32;
        let counts = Self::clamp(counts[0], most)
            | (Self::clamp(counts[1], most) << pb)
            | (Self::clamp(counts[2], most) << (2 * pb));
        let time = (since & mask(self.trial_time_bits())) << (3 * pb);
        let payload = Self::clamp(trips, self.max_trips()) | ((counts | time) << self.trips_bits);
        self.pack(TAG_TRIAL, counter, payload)
    }
    /// The `[running, passed, failed]` counts of a `Trial` word.
    #[inline(always)]
    pub(crate) const fn trial_counts(&self, raw: u64) -> [u32; 3] {
        let pb = self.probe_bits;
        let counts = raw >> self.time_shift();
        [
            (counts & mask(pb)) as u32,
            ((counts >> pb) & mask(pb)) as u32,
            ((counts >> (2 * pb)) & mask(pb)) as u32,
        ]
    }
    /// When a `Trial` started, in its units.
    #[inline(always)]
    pub(crate) const fn trial_since(&self, raw: u64) -> u64 {
        (raw >> (self.time_shift() + 3 * self.probe_bits)) & mask(self.trial_time_bits())
    }
    /// `Ramp` since `since` (in its units) after `trips` trips, with its
    /// credit and consecutive failures.
    #[inline(always)]
    pub(crate) const fn ramp(
        &self,
        counter: u32,
        since: u64,
        trips: u32,
        credit: u32,
        failures: u32,
    ) -> u64 {
        let rf = self.ramp_failure_bits;
        let fields = Self::clamp(failures, mask(rf) as u32)
            | (Self::clamp(credit, mask(self.share_bits) as u32) << rf)
            | ((since & mask(self.ramp_time_bits())) << (rf + self.share_bits));
        let payload = Self::clamp(trips, self.max_trips()) | (fields << self.trips_bits);
        self.pack(TAG_RAMP, counter, payload)
    }
    /// The consecutive failures of a `Ramp` word.
    #[inline(always)]
    pub(crate) const fn ramp_failures(&self, raw: u64) -> u32 {
        ((raw >> self.time_shift()) & mask(self.ramp_failure_bits)) as u32
    }
    /// The admission credit of a `Ramp` word.
    #[inline(always)]
    pub(crate) const fn ramp_credit(&self, raw: u64) -> u32 {
        ((raw >> (self.time_shift() + self.ramp_failure_bits)) & mask(self.share_bits)) as u32
    }
    /// When a `Ramp` started, in its units.
    #[inline(always)]
    pub(crate) const fn ramp_since(&self, raw: u64) -> u64 {
        (raw >> (self.time_shift() + self.ramp_failure_bits + self.share_bits))
            & mask(self.ramp_time_bits())
    }
    /// A `Ramp` word as a [`State`].
    pub(crate) const fn ramp_state(&self, raw: u64) -> State {
        State::Ramp {
            since: self.ramp_since(raw),
            trips: self.trips_of(raw),
            credit: self.ramp_credit(raw),
            failures: self.ramp_failures(raw),
        }
    }
    /// A `Trial` word as a [`State`].
    pub(crate) const fn trial_state(&self, raw: u64) -> State {
        let [running, passed, failed] = self.trial_counts(raw);
        State::Trial {
            since: self.trial_since(raw),
            trips: self.trips_of(raw),
            running,
            passed,
            failed,
        }
    }
}

/// What an admission in a recovery state decided: admitted into the word,
/// or rejected with the word (a ramp's credit moves either way) and the
/// config's units left before the next chance.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Admission {
    Admitted(u64),
    Rejected(u64, u64),
}

/// `now` in units `extra` bits coarser than the config's.
#[inline(always)]
fn coarse<W: Word>(l: &Layout, config: &ValidConfig<W>, now: u64, extra: u32) -> u64 {
    l.units_of(now, config.time_shift() + extra)
}

/// `left` units `extra` bits coarser, at `now`, in the config's units: the
/// first of the config's units where the coarse deadline is reached.
#[inline(always)]
fn fine<W: Word>(l: &Layout, config: &ValidConfig<W>, left: u64, now: u64, extra: u32) -> u64 {
    if left == 0 {
        0
    } else {
        (left << extra) - (l.units_of(now, config.time_shift()) & mask(extra))
    }
}

/// Units (the config's) left at `now` before a `Trial` times out; 0 once
/// it has.
#[inline]
pub(crate) fn trial_left<W: Word>(l: &Layout, config: &ValidConfig<W>, w: u64, now: u64) -> u64 {
    let extra = trial_extra(l);
    let ring = mask(l.trial_time_bits());
    let elapsed = coarse(l, config, now, extra).wrapping_sub(l.trial_since(w)) & ring;
    let need = config.recovery().trial_units as u64;
    fine(l, config, need.saturating_sub(elapsed), now, extra)
}

/// Whether a `Trial` that has not timed out can admit another probe.
#[inline]
pub(crate) fn trial_has_room<W: Word>(l: &Layout, config: &ValidConfig<W>, w: u64) -> bool {
    let [running, passed, failed] = l.trial_counts(w);
    running + passed + failed < config.recovery().probes as u32
        && running < mask(l.probe_bits) as u32
}

/// An admission in a `Trial` that has not timed out (`left` units before
/// it does): another probe if there is room, else a rejection.
#[inline]
pub(crate) fn trial_admit<W: Word>(
    l: &Layout,
    config: &ValidConfig<W>,
    w: u64,
    left: u64,
) -> Admission {
    if !trial_has_room(l, config, w) {
        return Admission::Rejected(w, left);
    }
    let [running, passed, failed] = l.trial_counts(w);
    let word = l.trial(
        counter_of(l, w),
        l.trial_since(w),
        l.trips_of(w),
        [running + 1, passed, failed],
    );
    Admission::Admitted(word)
}

/// The first probe of a trial, elected at `now` with counter `counter`.
#[inline]
pub(crate) fn trial_start<W: Word>(
    l: &Layout,
    config: &ValidConfig<W>,
    counter: u32,
    now: u64,
    trips: u32,
) -> u64 {
    l.trial(
        counter,
        coarse(l, config, now, trial_extra(l)),
        trips,
        [1, 0, 0],
    )
}

/// What a current release does to a `Trial` that has not timed out: the
/// word after it, or `Err(trips)` when the probes have failed (the caller
/// trips with that trip count). `None` when no probe is running (a ticket
/// from a full counter wrap earlier: stale).
#[inline]
pub(crate) fn trial_release<W: Word>(
    l: &Layout,
    config: &ValidConfig<W>,
    w: u64,
    outcome: crate::Outcome,
    now: u64,
) -> Option<Result<u64, u32>> {
    let [running, mut passed, mut failed] = l.trial_counts(w);
    if running == 0 {
        return None;
    }
    let r = config.recovery();
    let counter = counter_of(l, w);
    let trips = l.trips_of(w);
    match outcome {
        crate::Outcome::Success => passed += 1,
        crate::Outcome::Failure => failed += 1,
        crate::Outcome::Ignored => {}
    }
    if passed >= r.to_close as u32 {
        return Some(Ok(recovered(
            l,
            config,
            l.next_counter(counter),
            now,
            trips,
        )));
    }
    if failed > (r.probes - r.to_close) as u32 {
        return Some(Err(trips.saturating_add(1)));
    }
    let since = l.trial_since(w);
    Some(Ok(l.trial(
        counter,
        since,
        trips,
        [running - 1, passed, failed],
    )))
}

/// The word the probes' success stores at `now`: `Ramp` when the config
/// has one, else `Closed`.
#[inline]
pub(crate) fn recovered<W: Word>(
    l: &Layout,
    config: &ValidConfig<W>,
    counter: u32,
    now: u64,
    trips: u32,
) -> u64 {
    if config.recovery().stages == 0 {
        l.closed(counter, 0)
    } else {
        l.ramp(counter, coarse(l, config, now, ramp_extra(l)), trips, 0, 0)
    }
}

/// The ramp's stage at `now`: its share (credit units) and the config's
/// units left until the next stage (or the end), or `None` once it has
/// ended.
#[inline]
pub(crate) fn ramp_stage<W: Word>(
    l: &Layout,
    config: &ValidConfig<W>,
    w: u64,
    now: u64,
) -> Option<(u32, u64)> {
    let extra = ramp_extra(l);
    let ring = mask(l.ramp_time_bits());
    let elapsed = coarse(l, config, now, extra).wrapping_sub(l.ramp_since(w)) & ring;
    let r = config.recovery();
    let step = r.step_units as u64;
    let mut end = step;
    let mut i = 0;
    while i < r.stages as usize {
        if elapsed < end {
            return Some((
                r.shares[i] as u32,
                fine(l, config, end - elapsed, now, extra),
            ));
        }
        end += step;
        i += 1;
    }
    None
}

/// An admission in `Ramp` at `now`: the call adds the stage's share to the
/// credit and is admitted if that makes a whole call (which it spends);
/// past the last stage the ramp ends in `Closed` (with the next counter)
/// and the call is admitted there.
#[inline]
pub(crate) fn ramp_admit<W: Word>(
    l: &Layout,
    config: &ValidConfig<W>,
    w: u64,
    now: u64,
) -> Admission {
    let counter = counter_of(l, w);
    let Some((share, left)) = ramp_stage(l, config, w, now) else {
        return Admission::Admitted(l.closed(l.next_counter(counter), 0));
    };
    let one = 1u32 << l.share_bits;
    let credit = l.ramp_credit(w) + share;
    let admitted = credit >= one;
    let credit = if admitted { credit - one } else { credit };
    let word = l.ramp(
        counter,
        l.ramp_since(w),
        l.trips_of(w),
        credit,
        l.ramp_failures(w),
    );
    if admitted {
        Admission::Admitted(word)
    } else {
        Admission::Rejected(word, left)
    }
}

/// What a current release does to a `Ramp`: the word after it, or
/// `Err(trips)` when its failures reopen the breaker.
#[inline]
pub(crate) fn ramp_release<W: Word>(
    l: &Layout,
    config: &ValidConfig<W>,
    w: u64,
    outcome: crate::Outcome,
) -> Result<u64, u32> {
    let failures = l.ramp_failures(w);
    let failures = match outcome {
        crate::Outcome::Ignored => return Ok(w),
        crate::Outcome::Success => 0,
        crate::Outcome::Failure => failures + 1,
    };
    if failures >= config.recovery().ramp_failures as u32 {
        return Err(l.trips_of(w).saturating_add(1));
    }
    let word = l.ramp(
        counter_of(l, w),
        l.ramp_since(w),
        l.trips_of(w),
        l.ramp_credit(w),
        failures,
    );
    Ok(word)
}

#[cfg(all(test, feature = "recovery"))]
mod tests;
