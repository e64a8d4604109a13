//! The recovery options (feature `recovery`): several probes in half-open
//! and a progressive ramp after them (`docs/spec.md`, "Several probes" and
//! "The ramp"; the word's fields in `docs/design-word.md`, "Recovery
//! states").

use super::ValidConfig;
#[cfg(feature = "recovery")]
use super::{Config, ConfigError, Field, min_u64, range, units};
use crate::word::Layout;
#[cfg(feature = "recovery")]
use crate::word::Word;

/// The most stages a ramp has.
const STAGES: usize = 8;

/// A progressive ramp after a recovery (`Config::ramp`): once the probes
/// close the breaker, it admits a growing share of calls, stage by stage,
/// before it admits them all; a trip during the ramp opens it again, with
/// backoff.
///
/// A stage lasts `step` ticks and admits a share of calls given in basis
/// points (1/10 000). The share is admitted by a deterministic rule, no
/// random number: each call adds the share to a credit kept in the word,
/// and a call that brings the credit to one whole call is admitted (and
/// spends it). Of any `c` consecutive calls at one stage, the number
/// admitted is `⌊c·p⌋` or `⌊c·p⌋ + 1`, whichever threads make them
/// (`docs/spec.md`, "The ramp"). Shares are rounded to the word's
/// resolution (`2^-10` on `W64`, `2^-5` on `W32`), never to zero.
///
/// ```
/// use tripword::{Config, Ramp, W64};
///
/// // seatbelt's stages: 0.1 %, 1 %, 5 %, 10 %, 25 %, 50 %, a second each.
/// let config = Config::new().ramp(Ramp::progressive(1_000_000)).check::<W64>()?;
/// assert_eq!(config.ramp().stages_count(), 6);
/// // Four equal steps over 2 s: 20 %, 40 %, 60 %, 80 %, then everything.
/// let linear = Ramp::linear(2_000_000, 4);
/// assert_eq!(linear.share(0), Some(2_000));
/// assert_eq!(linear.share(3), Some(8_000));
/// # Ok::<(), tripword::ConfigError>(())
/// ```
#[cfg(feature = "recovery")]
#[cfg_attr(docsrs, doc(cfg(feature = "recovery")))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ramp {
    step: u64,
    stages: u8,
    shares: [u16; STAGES],
}

#[cfg(feature = "recovery")]
impl Ramp {
    /// The most stages a ramp has.
    pub const MAX_STAGES: usize = STAGES;

    /// No ramp: the breaker closes fully on its probes' success (the
    /// default).
    pub const NONE: Ramp = Ramp {
        step: 0,
        stages: 0,
        shares: [0; STAGES],
    };

    /// The stages seatbelt uses by default: 0.1 %, 1 %, 5 %, 10 %, 25 %,
    /// 50 % of calls, `step` ticks each, then all of them.
    pub const fn progressive(step: u64) -> Ramp {
        Ramp::stages(step, &[10, 100, 500, 1_000, 2_500, 5_000])
    }

    /// `stages` equal steps over `over` ticks, admitting `1/(stages+1)`,
    /// `2/(stages+1)`, … of calls, then all of them: a linear ramp.
    pub const fn linear(over: u64, stages: u8) -> Ramp {
        let n = if stages as usize > STAGES {
            STAGES as u8
        } else {
            stages
        };
        let mut shares = [0u16; STAGES];
        let mut i = 0;
        while i < n as usize {
            shares[i] = ((i as u32 + 1) * 10_000 / (n as u32 + 1)) as u16;
            i += 1;
        }
        Ramp {
            step: if n == 0 { 0 } else { over / n as u64 },
            stages: n,
            shares,
        }
    }

    /// Stages of `step` ticks each, admitting the given shares of calls in
    /// basis points (rising, each in `1..=9_999`), at most
    /// [`MAX_STAGES`](Self::MAX_STAGES) of them (more are dropped; the
    /// config check refuses shares out of range or not rising).
    pub const fn stages(step: u64, basis_points: &[u16]) -> Ramp {
        let mut shares = [0u16; STAGES];
        let mut i = 0;
        while i < basis_points.len() && i < STAGES {
            shares[i] = basis_points[i];
            i += 1;
        }
        Ramp {
            step,
            stages: i as u8,
            shares,
        }
    }

    /// The number of stages (0: no ramp).
    pub const fn stages_count(&self) -> usize {
        self.stages as usize
    }

    /// The length of a stage, in ticks.
    pub const fn step(&self) -> u64 {
        self.step
    }

    /// The share stage `i` admits, in basis points, or `None` past the
    /// last stage.
    pub const fn share(&self, i: usize) -> Option<u16> {
        if i < self.stages as usize {
            Some(self.shares[i])
        } else {
            None
        }
    }
}

#[cfg(feature = "recovery")]
impl Default for Ramp {
    fn default() -> Self {
        Ramp::NONE
    }
}

/// What validation derives for the recovery options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Recovery {
    /// The probes of a trial (1: the single probe, no `Trial`).
    pub(crate) probes: u8,
    /// The probes that must pass to close.
    pub(crate) to_close: u8,
    /// The probe timeout in the trial's coarse units.
    pub(crate) trial_units: u32,
    /// The ramp's stage length in its coarse units (0: no ramp).
    pub(crate) step_units: u32,
    /// The number of stages.
    pub(crate) stages: u8,
    /// Consecutive failures that reopen during the ramp.
    pub(crate) ramp_failures: u8,
    /// Each stage's share in credit units (`1..=2^share_bits - 1`).
    pub(crate) shares: [u16; STAGES],
}

impl Recovery {
    #[cfg(not(feature = "recovery"))]
    pub(crate) const NONE: Recovery = Recovery {
        probes: 1,
        to_close: 1,
        trial_units: 0,
        step_units: 0,
        stages: 0,
        ramp_failures: 1,
        shares: [0; STAGES],
    };
}

/// The trial's time unit above the config's: its time field is `3 *
/// probe_bits` narrower, so the same ring is kept in units that many bits
/// coarser.
pub(crate) const fn trial_extra(l: &Layout) -> u32 {
    3 * l.probe_bits
}

/// The ramp's time unit above the config's (as [`trial_extra`]).
pub(crate) const fn ramp_extra(l: &Layout) -> u32 {
    l.share_bits + l.ramp_failure_bits
}

#[cfg(feature = "recovery")]
impl Config {
    /// Admit exactly `n` probes in half-open instead of one (1 by default,
    /// at most 15 on `W64`, 3 on `W32`); the breaker closes once
    /// [`probes_to_close`](Self::probes_to_close) of them succeed (all `n`
    /// unless set) and opens again, with backoff, once more fail than that
    /// allows. A probe that ends `Ignored` frees its place; probes that
    /// have not all reported by the probe timeout are given up, and the
    /// next caller starts a new trial. Feature `recovery`.
    #[cfg_attr(docsrs, doc(cfg(feature = "recovery")))]
    pub const fn probes(mut self, n: u8) -> Self {
        self.probes = n;
        self.to_close = 0;
        self
    }

    /// How many of the probes must succeed to close (`1..=n`): with `n`
    /// probes and `k` to close, the breaker opens again at the `n - k + 1`-th
    /// failure. resilience4j's "open at a failure rate of at least `r` over
    /// the permitted calls" is `k = n - ⌈n · r⌉ + 1` (10 probes at 50 %: 6).
    /// Feature `recovery`.
    #[cfg_attr(docsrs, doc(cfg(feature = "recovery")))]
    pub const fn probes_to_close(mut self, k: u8) -> Self {
        self.to_close = k;
        self
    }

    /// A progressive ramp after the probes close the breaker ([`Ramp`]);
    /// none by default. Feature `recovery`.
    #[cfg_attr(docsrs, doc(cfg(feature = "recovery")))]
    pub const fn ramp(mut self, ramp: Ramp) -> Self {
        self.ramp = ramp;
        self
    }

    /// The recovery options checked for `l` at time shift `shift`.
    pub(crate) const fn check_recovery(
        &self,
        l: &Layout,
        shift: u32,
    ) -> Result<Recovery, ConfigError> {
        let max_probes = ((1u32 << l.probe_bits) - 1) as u64;
        let n = self.probes as u64;
        if n < 1 || n > max_probes {
            return Err(range(Field::Probes, n, 1, max_probes));
        }
        let k = if self.to_close == 0 {
            n
        } else {
            self.to_close as u64
        };
        if k > n {
            return Err(range(Field::ProbesToClose, k, 1, n));
        }
        let trial_shift = shift + trial_extra(l);
        let half = 1u64 << (l.time_bits - trial_extra(l) - 1);
        let trial_units = min_u64(units(self.probe_timeout, trial_shift), half);
        let ramp = &self.ramp;
        let mut rec = Recovery {
            probes: n as u8,
            to_close: k as u8,
            trial_units: trial_units as u32,
            step_units: 0,
            stages: 0,
            ramp_failures: 1,
            shares: [0; STAGES],
        };
        let max_fail = (1u32 << l.ramp_failure_bits) - 1;
        rec.ramp_failures = if self.failure_threshold < max_fail {
            self.failure_threshold as u8
        } else {
            max_fail as u8
        };
        if ramp.stages == 0 {
            return Ok(rec);
        }
        let ramp_shift = shift + ramp_extra(l);
        let half = 1u64 << (l.time_bits - ramp_extra(l) - 1);
        // The whole ramp within half its ring, so that its end is read
        // exactly, as every deadline is: each stage at most `half / stages`
        // units, which `units` rounds a step of at most this many ticks to
        // (`need(d) <= m` exactly when `d <= (m - 1) * 2^shift + 1`).
        let most = half / ramp.stages as u64;
        let longest = ((most - 1) << ramp_shift) + 1;
        if ramp.step < 1 || ramp.step > longest {
            return Err(range(Field::Ramp, ramp.step, 1, longest));
        }
        let step = units(ramp.step, ramp_shift);
        let one = 1u64 << l.share_bits;
        let mut i = 0;
        let mut last = 0u64;
        while i < ramp.stages as usize {
            let bp = ramp.shares[i] as u64;
            if bp <= last || bp >= 10_000 {
                return Err(range(Field::RampShare, bp, last + 1, 9_999));
            }
            last = bp;
            // Rounded to the nearest credit unit, never to none nor to all.
            let mut share = (bp * one + 5_000) / 10_000;
            if share < 1 {
                share = 1;
            }
            if share >= one {
                share = one - 1;
            }
            rec.shares[i] = share as u16;
            i += 1;
        }
        rec.step_units = step as u32;
        rec.stages = ramp.stages;
        Ok(rec)
    }
}

#[cfg(feature = "recovery")]
impl<W: Word> ValidConfig<W> {
    /// The number of probes a half-open breaker admits
    /// ([`Config::probes`]). Feature `recovery`.
    #[cfg_attr(docsrs, doc(cfg(feature = "recovery")))]
    pub const fn probes(&self) -> u8 {
        self.recovery.probes
    }

    /// How many probes must succeed to close
    /// ([`Config::probes_to_close`]). Feature `recovery`.
    #[cfg_attr(docsrs, doc(cfg(feature = "recovery")))]
    pub const fn probes_to_close(&self) -> u8 {
        self.recovery.to_close
    }

    /// The ramp as set ([`Config::ramp`]). Feature `recovery`.
    #[cfg_attr(docsrs, doc(cfg(feature = "recovery")))]
    pub const fn ramp(&self) -> Ramp {
        self.config.ramp
    }
}

impl<W: crate::word::Word> ValidConfig<W> {
    /// The recovery options as validated (none without the feature).
    #[inline(always)]
    pub(crate) const fn recovery(&self) -> &Recovery {
        #[cfg(feature = "recovery")]
        {
            &self.recovery
        }
        #[cfg(not(feature = "recovery"))]
        {
            &Recovery::NONE
        }
    }
}
