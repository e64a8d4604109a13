//! The recovery states of the reference model (`docs/spec.md`, "Recovery:
//! several probes and the ramp"): `Trial` (several probes) and `Ramp` (the
//! progressive ramp), written from the spec's two tables, not from the
//! core's kernel (`core/src/recovery.rs`).
//!
//! # Time in coarser units
//!
//! Both states keep their start in the same ring as the other timed
//! states, in units `extra` bits coarser than the config's `2^s` ticks:
//! `extra = 3 * probe_bits` for `Trial`, `share_bits + ramp_failure_bits`
//! for `Ramp`. So with `u = s + extra` a reading `t` is the coarse unit
//! `(t >> u) mod 2^(T - extra)`, a duration of `d` ticks needs
//! `(d + 2 (2^u - 1)) >> u` coarse units (the rounding of every duration),
//! and the time elapsed is the difference of coarse units modulo
//! `2^(T - extra)`. The probe timeout is clamped to half that ring
//! (`2^(T - extra - 1)` units); the whole ramp must fit half of it (the
//! config check refuses it otherwise).
//!
//! # The rules
//!
//! | state | event | next |
//! |---|---|---|
//! | HalfOpen{k} (or a lapsed timed state) | admit, `n > 1` *(clock)* | Trial{now, k, running 1}, probe ticket `c+1` |
//! | Trial | admit *(clock)*, timed out | HalfOpen{k}, then a new Trial, probe ticket `c+2` |
//! | Trial | admit *(clock)*, `running + passed + failed < n` | `running + 1`, probe ticket `c` |
//! | Trial | admit *(clock)*, no room | rejected (`Probing`, wait to the timeout) |
//! | Trial | release(c, _) *(clock)*, timed out | HalfOpen{k}, **stale** |
//! | Trial | release(c, _) *(clock)*, `running = 0` | unchanged, **stale** |
//! | Trial | success in time, `passed + 1 ≥ k` | recovered |
//! | Trial | failure in time, `failed + 1 > n − k` | Open{now, k + 1} (`OpenUntil` for a hinted failure) |
//! | Trial | success / failure otherwise | `running − 1`, `passed + 1` / `failed + 1` |
//! | Trial | ignored in time | `running − 1` |
//! | Probing / Trial | the probes' success *(clock)* | recovered: Ramp{now, k, credit 0, failures 0} with a ramp, else Closed{0} |
//! | Ramp | admit *(clock)*, stage `i` | credit + p_i: ≥ one call: admitted (ticket `c`), one call spent; else rejected (`Ramp`, wait to stage `i + 1`), the credit kept |
//! | Ramp | admit *(clock)*, past the last stage | Closed{0}, ticket `c+1` |
//! | Ramp | release(c, success) | `failures: 0` |
//! | Ramp | release(c, ignored) | unchanged |
//! | Ramp | release(c, failure), `failures + 1 ≥ m` *(clock)* | Open{now, k + 1} (`OpenUntil` for a hinted failure) |
//! | Ramp | release(c, failure) otherwise | `failures + 1` |
//! | Trial | status *(clock)* | `HalfOpen` with room or timed out, else `Probing` |
//! | Ramp | status *(clock)* | `Recovering` before the last stage ends, else `Closed` |
//!
//! `m = min(failure_threshold, 2^ramp_failure_bits − 1)`. A stage's share
//! `p_i` is its basis points in credit units of `2^-share_bits` calls,
//! rounded to the nearest, at least 1 and at most `2^share_bits − 1`.

use super::{MAX_RETRY_AFTER, Model, ModelConfig, ModelRejected, ModelState, ModelTicket};
use tripword::word::Layout;
use tripword::{Cause, Outcome, Ramp, Status};

/// The recovery options of a model config, with the field widths that
/// shape them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModelRecovery {
    /// Probes a half-open breaker admits (`n`; 1: the single probe).
    pub probes: u32,
    /// Probes that must succeed to close (`k`).
    pub to_close: u32,
    /// Stage length in ticks (0: no ramp).
    pub step: u64,
    /// Number of stages.
    pub stages: usize,
    /// Each stage's share in basis points.
    pub basis_points: [u16; 8],
    /// Width of each of a trial's counts.
    pub probe_bits: u32,
    /// Width of the ramp's credit.
    pub share_bits: u32,
    /// Width of the ramp's failure count.
    pub ramp_failure_bits: u32,
}

impl ModelRecovery {
    /// One probe, no ramp, on a word with field widths `layout`.
    pub fn none(layout: &Layout) -> Self {
        ModelRecovery {
            probes: 1,
            to_close: 1,
            step: 0,
            stages: 0,
            basis_points: [0; 8],
            probe_bits: layout.probe_bits,
            share_bits: layout.share_bits,
            ramp_failure_bits: layout.ramp_failure_bits,
        }
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `(d + 2 (2^u - 1)) >> u`, in `u128`.
fn need_at(ticks: u64, shift: u32) -> u64 {
    let unit = 1u128 << shift;
    ((u128::from(ticks) + 2 * (unit - 1)) >> shift) as u64
}

impl ModelConfig {
    /// The same config with `probes` probes, `to_close` of them to close
    /// (`None`: all) and `ramp`.
    pub fn with_recovery(mut self, probes: u32, to_close: Option<u32>, ramp: Ramp) -> Self {
        let r = &mut self.recovery;
        r.probes = probes;
        r.to_close = to_close.unwrap_or(probes);
        r.step = ramp.step();
        r.stages = ramp.stages_count();
        for i in 0..8 {
            r.basis_points[i] = ramp.share(i).unwrap_or(0);
        }
        self
    }

    /// Whether the recovery options are in range by the spec's rules: `n`
    /// in `1..=2^probe_bits - 1`, `k` in `1..=n`, shares rising in
    /// `1..=9 999`, a stage at least one tick and the whole ramp within
    /// half its ring.
    pub fn recovery_in_range(&self) -> bool {
        let r = &self.recovery;
        let shares_rise = r.basis_points[..r.stages]
            .iter()
            .try_fold(0u16, |last, &bp| (bp > last && bp < 10_000).then_some(bp))
            .is_some();
        (1..=mask(r.probe_bits) as u32).contains(&r.probes)
            && (1..=r.probes).contains(&r.to_close)
            && r.stages <= 8
            && (r.stages == 0
                || (r.step >= 1
                    && u128::from(self.step_need()) * r.stages as u128
                        <= 1u128 << (self.ramp_bits() - 1)
                    && shares_rise))
    }

    /// The trial's time is `3 * probe_bits` bits coarser.
    pub fn trial_extra(&self) -> u32 {
        3 * self.recovery.probe_bits
    }

    /// The ramp's time is `share_bits + ramp_failure_bits` bits coarser.
    pub fn ramp_extra(&self) -> u32 {
        self.recovery.share_bits + self.recovery.ramp_failure_bits
    }

    fn ramp_bits(&self) -> u32 {
        self.time_bits - self.ramp_extra()
    }

    /// The coarse unit of the reading `t`, `extra` bits coarser than the
    /// config's: `(t >> (s + extra)) mod 2^(T - extra)`.
    pub fn coarse(&self, t: u64, extra: u32) -> u64 {
        (t >> (self.time_shift + extra)) & mask(self.time_bits - extra)
    }

    /// Coarse units from `since` to `now`, modulo `2^(T - extra)`.
    pub fn coarse_elapsed(&self, since: u64, now: u64, extra: u32) -> u64 {
        self.coarse(now, extra)
            .wrapping_sub(self.coarse(since, extra))
            & mask(self.time_bits - extra)
    }

    /// The first reading of the coarse unit `left` units after `now`'s.
    fn coarse_at(&self, now: u64, left: u64, extra: u32) -> u64 {
        let u = self.time_shift + extra;
        (now >> u).wrapping_add(left).wrapping_shl(u)
    }

    /// The trial's probe timeout in its units, clamped to half its ring.
    pub fn trial_need(&self) -> u64 {
        let x = self.trial_extra();
        need_at(self.probe_timeout, self.time_shift + x).min(1 << (self.time_bits - x - 1))
    }

    /// A stage's length in the ramp's units.
    pub fn step_need(&self) -> u64 {
        need_at(self.recovery.step, self.time_shift + self.ramp_extra())
    }

    /// Stage `i`'s share in credit units (`2^-share_bits` calls): the
    /// nearest, at least 1, at most `2^share_bits - 1`.
    pub fn share_units(&self, i: usize) -> u64 {
        let one = 1u64 << self.recovery.share_bits;
        let bp = u64::from(self.recovery.basis_points[i]);
        ((bp * one + 5_000) / 10_000).clamp(1, one - 1)
    }

    /// Consecutive failures of admitted calls that reopen a ramp.
    pub fn ramp_failure_threshold(&self) -> u64 {
        u64::from(self.failure_threshold).min(mask(self.recovery.ramp_failure_bits))
    }

    /// The probes and those to close.
    pub fn probes(&self) -> (u32, u32) {
        (self.recovery.probes, self.recovery.to_close)
    }

    /// Whether a ramp follows the probes' success.
    pub fn has_ramp(&self) -> bool {
        self.recovery.stages > 0
    }

    /// Whether the trial started at `since` has timed out at `now`.
    pub fn trial_timed_out(&self, since: u64, now: u64) -> bool {
        self.coarse_elapsed(since, now, self.trial_extra()) >= self.trial_need()
    }

    /// The first reading at or after `now` at which the trial started at
    /// `since` times out, given it has not at `now`.
    pub fn trial_timeout_at(&self, since: u64, now: u64) -> u64 {
        let x = self.trial_extra();
        let left = self.trial_need() - self.coarse_elapsed(since, now, x);
        self.coarse_at(now, left, x)
    }

    /// The ramp started at `since`, at `now`: the stage, its share in
    /// credit units and the first reading of the next stage; `None` past
    /// the last stage.
    pub fn ramp_stage(&self, since: u64, now: u64) -> Option<(usize, u64, u64)> {
        let x = self.ramp_extra();
        let elapsed = self.coarse_elapsed(since, now, x);
        let step = self.step_need();
        let i = usize::try_from(elapsed / step).ok()?;
        (i < self.recovery.stages).then(|| {
            let end = (i as u64 + 1) * step;
            (
                i,
                self.share_units(i),
                self.coarse_at(now, end - elapsed, x),
            )
        })
    }
}

fn wait(at: u64, now: u64) -> Option<u64> {
    Some(at.wrapping_sub(now).min(MAX_RETRY_AFTER))
}

impl Model {
    /// Elects the probe of a half-open breaker at `now`: a `Trial` with
    /// several probes, else `Probing`.
    pub(super) fn elect(&mut self, trips: u64, now: u64) -> ModelTicket {
        if self.config.recovery.probes > 1 {
            self.go(ModelState::Trial {
                since: now,
                trips,
                running: 1,
                passed: 0,
                failed: 0,
            });
        } else {
            self.go(ModelState::Probing { since: now, trips });
        }
        ModelTicket {
            counter: self.counter,
            probe: true,
        }
    }

    /// The probes' success at `now`: a ramp when configured, else closed.
    pub(super) fn recovered(&mut self, trips: u64, now: u64) {
        if self.config.has_ramp() {
            self.go(ModelState::Ramp {
                since: now,
                trips,
                credit: 0,
                failures: 0,
            });
        } else {
            self.go(ModelState::Closed { failures: 0 });
        }
    }

    /// An admission in `Trial` or `Ramp` (`None` in any other state).
    pub(super) fn recovery_acquire(
        &mut self,
        now: u64,
    ) -> Option<Result<ModelTicket, ModelRejected>> {
        let cfg = self.config;
        Some(match self.state {
            ModelState::Trial {
                since,
                trips,
                running,
                passed,
                failed,
            } => {
                let now = self.clock(now);
                if cfg.trial_timed_out(since, now) {
                    self.go(ModelState::HalfOpen { trips });
                    Ok(self.elect(trips, now))
                } else if running + passed + failed < cfg.recovery.probes {
                    self.state = ModelState::Trial {
                        since,
                        trips,
                        running: running + 1,
                        passed,
                        failed,
                    };
                    Ok(ModelTicket {
                        counter: self.counter,
                        probe: true,
                    })
                } else {
                    Err(ModelRejected {
                        cause: Cause::Probing,
                        retry_after: wait(cfg.trial_timeout_at(since, now), now),
                    })
                }
            }
            ModelState::Ramp {
                since,
                trips,
                credit,
                failures,
            } => {
                let now = self.clock(now);
                let Some((_, share, next)) = cfg.ramp_stage(since, now) else {
                    self.go(ModelState::Closed { failures: 0 });
                    return Some(Ok(ModelTicket {
                        counter: self.counter,
                        probe: false,
                    }));
                };
                let one = 1u64 << cfg.recovery.share_bits;
                let credit = credit + share;
                let admitted = credit >= one;
                self.state = ModelState::Ramp {
                    since,
                    trips,
                    credit: if admitted { credit - one } else { credit },
                    failures,
                };
                if admitted {
                    Ok(ModelTicket {
                        counter: self.counter,
                        probe: false,
                    })
                } else {
                    Err(ModelRejected {
                        cause: Cause::Ramp,
                        retry_after: wait(next, now),
                    })
                }
            }
            _ => return None,
        })
    }

    /// A current release in `Trial` or `Ramp`, `hint` the open time of a
    /// hinted failure: true when it counted; `None` in any other state.
    pub(super) fn recovery_release(
        &mut self,
        outcome: Outcome,
        hint: Option<u64>,
        now: u64,
    ) -> Option<bool> {
        let cfg = self.config;
        let max = cfg.max_trips();
        Some(match self.state {
            ModelState::Trial {
                since,
                trips,
                running,
                passed,
                failed,
            } => {
                let now = self.clock(now);
                if cfg.trial_timed_out(since, now) {
                    self.go(ModelState::HalfOpen { trips });
                    return Some(false);
                }
                if running == 0 {
                    return Some(false);
                }
                let (n, k) = cfg.probes();
                let (passed, failed) = match outcome {
                    Outcome::Success => (passed + 1, failed),
                    Outcome::Failure => (passed, failed + 1),
                    Outcome::Ignored => (passed, failed),
                };
                if passed >= k {
                    self.recovered(trips, now);
                } else if failed > n - k {
                    self.trip((trips + 1).min(max), hint, now);
                } else {
                    self.state = ModelState::Trial {
                        since,
                        trips,
                        running: running - 1,
                        passed,
                        failed,
                    };
                }
                true
            }
            ModelState::Ramp {
                since,
                trips,
                credit,
                failures,
            } => {
                let failures = match outcome {
                    Outcome::Ignored => return Some(true),
                    Outcome::Success => 0,
                    Outcome::Failure => failures + 1,
                };
                if u64::from(failures) >= cfg.ramp_failure_threshold() {
                    let now = self.clock(now);
                    self.trip((trips + 1).min(max), hint, now);
                } else {
                    self.state = ModelState::Ramp {
                        since,
                        trips,
                        credit,
                        failures,
                    };
                }
                true
            }
            _ => return None,
        })
    }

    /// A trip at `now` after `trips` trips: `Open`, or `OpenUntil` for a
    /// hinted failure.
    fn trip(&mut self, trips: u64, hint: Option<u64>, now: u64) {
        match hint {
            None => self.go(ModelState::Open { since: now, trips }),
            Some(d) => self.go(ModelState::OpenUntil {
                until: self.config.deadline(now, d),
                trips,
            }),
        }
    }

    /// The status of a `Trial` or `Ramp` at `now` (`None` in any other
    /// state).
    pub(super) fn recovery_status(&mut self, now: u64) -> Option<Status> {
        let cfg = self.config;
        match self.state {
            ModelState::Trial {
                since,
                running,
                passed,
                failed,
                ..
            } => {
                let now = self.clock(now);
                let room = running + passed + failed < cfg.recovery.probes;
                Some(if room || cfg.trial_timed_out(since, now) {
                    Status::HalfOpen
                } else {
                    Status::Probing
                })
            }
            ModelState::Ramp { since, .. } => {
                let now = self.clock(now);
                Some(if cfg.ramp_stage(since, now).is_some() {
                    Status::Recovering
                } else {
                    Status::Closed
                })
            }
            _ => None,
        }
    }

    /// Whether the state is a `Trial` that has timed out at `now` (the
    /// lazy move to `HalfOpen` applies, as to a lapsed timed state).
    pub(super) fn trial_lapsed(&self, now: u64) -> bool {
        matches!(self.state, ModelState::Trial { since, .. } if self.config.trial_timed_out(since, now))
    }

    /// The first reading at or after `now` at which the `Trial` times out,
    /// if it is one and has not at `now`.
    pub fn trial_timeout(&self, now: u64) -> Option<u64> {
        match self.state {
            ModelState::Trial { since, .. } if !self.config.trial_timed_out(since, now) => {
                Some(self.config.trial_timeout_at(since, now))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
