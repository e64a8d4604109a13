//! `Arbitrary` building blocks shared by the targets: outcomes, config
//! values picked inside (or at the edges of) a word width's ranges.

use arbitrary::Arbitrary;
use tripword::word::Word;
use tripword::{Config, Jitter, Outcome, Ramp, ValidConfig};

/// [`Outcome`], decodable from fuzz input.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    /// [`Outcome::Success`].
    Success,
    /// [`Outcome::Failure`].
    Failure,
    /// [`Outcome::Ignored`].
    Ignored,
}

impl From<Out> for Outcome {
    fn from(out: Out) -> Outcome {
        match out {
            Out::Success => Outcome::Success,
            Out::Failure => Outcome::Failure,
            Out::Ignored => Outcome::Ignored,
        }
    }
}

/// A value inside a range `lo..=hi`, biased towards the range's edges.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// `lo`.
    Min,
    /// `hi`.
    Max,
    /// `lo + d` (at most `hi`).
    Low(u8),
    /// `hi - d` (at least `lo`).
    High(u8),
    /// Anywhere in the range.
    Any(u64),
}

impl Pick {
    /// The value this pick names in `lo..=hi` (`lo <= hi < u64::MAX`).
    pub fn in_range(self, lo: u64, hi: u64) -> u64 {
        match self {
            Pick::Min => lo,
            Pick::Max => hi,
            Pick::Low(d) => lo.saturating_add(d.into()).min(hi),
            Pick::High(d) => hi.saturating_sub(d.into()).max(lo),
            Pick::Any(x) => lo + x % (hi - lo + 1),
        }
    }
}

/// The longest open time, backoff cap or probe timeout a config may set, in
/// ticks, on either width (`docs/spec.md`, "Time").
pub const DURATION_LIMIT: u64 = 1 << 60;

/// The longest duration `W` keeps at any time shift: the largest `d` whose
/// units at the largest shift, `(d + 2 (2^s - 1)) >> s`, fit half the time
/// field, with room for the four units of quantisation in the largest ring
/// (for `W64`, every duration up to [`DURATION_LIMIT`]).
pub fn longest_duration<W: Word>() -> u64 {
    let l = W::LAYOUT;
    let s = l.max_shift();
    let by_units = (l.max_units() << s) - (1 << s) + 1;
    let ring = 1u128 << (l.time_bits + s);
    let by_ring = (ring - 4 * (1u128 << s)).min(u128::from(u64::MAX)) as u64;
    by_units.min(by_ring).min(DURATION_LIMIT)
}

/// The largest backoff cap `W` accepts for `open_for`: `open_for` doubled
/// once per trip the word counts after the first, at most
/// [`DURATION_LIMIT`].
pub fn reachable_cap<W: Word>(open_for: u64) -> u64 {
    let doublings = W::LAYOUT.max_trips() - 1;
    if open_for > (DURATION_LIMIT >> doublings) {
        DURATION_LIMIT
    } else {
        open_for << doublings
    }
}

/// The largest horizon `W` accepts with `longest` as the longest duration
/// (at the largest time shift, where the ring is widest), if `longest` fits
/// at all: `2^(time_bits + s) - longest - 4 * 2^s`.
pub fn largest_horizon<W: Word>(longest: u64) -> Option<u64> {
    let l = W::LAYOUT;
    let s = l.max_shift();
    let unit = 1u128 << s;
    let need = (u128::from(longest) + 2 * (unit - 1)) >> s;
    let ring = 1u128 << (l.time_bits + s);
    let room = ring.checked_sub(u128::from(longest) + 4 * unit)?;
    (need <= u128::from(l.max_units())).then(|| room.min(u128::from(u64::MAX)) as u64)
}

/// A config that validates for the width it is built for: each field picked
/// inside that width's range (see `docs/spec.md`, "Time", and
/// [`Config::check`]).
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigSpec {
    /// `failure_threshold`, in `1..=max_failures`.
    pub threshold: Pick,
    /// `open_for`, in `1..=`[`longest_duration`].
    pub open_for: Pick,
    /// The backoff cap, in `open_for..=`[`reachable_cap`] (and the longest
    /// duration); `None`: fixed open time.
    pub backoff: Option<Pick>,
    /// `probe_timeout`, in `1..=`[`longest_duration`].
    pub probe_timeout: Pick,
    /// The horizon, in `0..=`[`largest_horizon`]; `None`: the width's
    /// default where it fits (else the largest horizon).
    pub horizon: Option<Pick>,
    /// What a dropped permit records.
    pub abandon: Out,
    /// Jitter on the open time: 0 none, 1 equal, 2 full (the rest: none),
    /// with the seed.
    pub jitter: (u8, u32),
    /// Several probes and the ramp (`docs/spec.md`, "Recovery").
    pub recovery: RecoverySpec,
}

/// The recovery options: several probes, and a ramp, each within the
/// width's ranges.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoverySpec {
    /// `probes` in `1..=2^probe_bits - 1`, and `probes_to_close` in
    /// `1..=n` (`None`: all); `None`: one probe.
    pub probes: Option<(Pick, Option<Pick>)>,
    /// A ramp; `None`: no ramp.
    pub ramp: Option<RampSpec>,
}

impl RecoverySpec {
    /// One probe, no ramp.
    pub const NONE: RecoverySpec = RecoverySpec {
        probes: None,
        ramp: None,
    };
}

/// A ramp within the width's ranges: seatbelt's stages (`kind` 0, and the
/// rest of 3), a linear ramp (1) or rising shares (2), its stages as long
/// as the whole ramp fits half its ring.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub struct RampSpec {
    /// 0 progressive, 1 linear, 2 given shares (modulo 3).
    pub kind: u8,
    /// The stage length, in `1..=` the longest that fits.
    pub step: Pick,
    /// The number of stages of a linear or given ramp (`1..=8`).
    pub stages: u8,
    /// The shares of a given ramp (each taken into `1..=9 999`, sorted,
    /// repeats dropped).
    pub shares: [u16; 8],
}

impl RecoverySpec {
    /// `config` (valid for `W` at time shift `shift`) with these options.
    pub fn apply<W: Word>(&self, config: Config, shift: u32) -> Config {
        let l = W::LAYOUT;
        let mut config = config;
        if let Some((n, k)) = self.probes {
            let n = n.in_range(1, (1 << l.probe_bits) - 1);
            config = config.probes(n as u8);
            if let Some(k) = k {
                config = config.probes_to_close(k.in_range(1, n) as u8);
            }
        }
        let Some(r) = self.ramp else { return config };
        let mut shares: Vec<u16> = r.shares.iter().map(|s| s % 9_999 + 1).collect();
        let count = usize::from(r.stages % 8) + 1;
        shares.truncate(count);
        shares.sort_unstable();
        shares.dedup();
        let stages = match r.kind % 3 {
            1 => count,
            2 => shares.len(),
            _ => 6,
        } as u64;
        // The longest stage whose units, `(d + 2 (2^u - 1)) >> u`, times
        // the stages fit half the ramp's time field.
        let u = shift + l.share_bits + l.ramp_failure_bits;
        let most_units = (1u64 << (l.time_bits - l.share_bits - l.ramp_failure_bits - 1)) / stages;
        let longest = ((most_units - 1) << u) + 1;
        let step = r.step.in_range(1, longest);
        config.ramp(match r.kind % 3 {
            1 => Ramp::linear(step * stages, stages as u8),
            2 => Ramp::stages(step, &shares),
            _ => Ramp::progressive(step),
        })
    }
}

impl ConfigSpec {
    /// The config for word width `W`, checked.
    ///
    /// # Panics
    /// If the core refuses it: the ranges above are the spec's, so that is
    /// a disagreement to report.
    pub fn config<W: Word>(&self) -> ValidConfig<W> {
        let layout = W::LAYOUT;
        let max = longest_duration::<W>();
        let open_for = self.open_for.in_range(1, max);
        let probe_timeout = self.probe_timeout.in_range(1, max);
        let mut config = Config::new()
            .failure_threshold(self.threshold.in_range(1, layout.max_failures().into()) as u32)
            .open_for(open_for)
            .probe_timeout(probe_timeout)
            .abandon_as(self.abandon.into())
            .jitter(match self.jitter {
                (1, seed) => Jitter::Equal { seed },
                (2, seed) => Jitter::Full { seed },
                _ => Jitter::None,
            });
        let mut longest = open_for.max(probe_timeout);
        if let Some(cap) = self.backoff {
            let cap = cap.in_range(open_for, reachable_cap::<W>(open_for).min(max));
            config = config.exponential_backoff(cap);
            longest = longest.max(cap);
        }
        let most = largest_horizon::<W>(longest).expect("every duration up to the longest fits");
        config = match self.horizon {
            Some(pick) => config.horizon(pick.in_range(0, most.min(u64::MAX - 1))),
            None if layout.default_horizon() <= most => config,
            None => config.horizon(most),
        };
        let shift = config
            .check::<W>()
            .unwrap_or_else(|e| {
                panic!(
                    "W{}: {config:?} in range, yet refused: {e}",
                    layout.word_bits
                )
            })
            .time_shift();
        config = self.recovery.apply::<W>(config, shift);
        config.check::<W>().unwrap_or_else(|e| {
            panic!(
                "W{}: {config:?} in range, yet refused: {e}",
                layout.word_bits
            )
        })
    }
}
