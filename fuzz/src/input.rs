//! `Arbitrary` building blocks shared by the targets: outcomes, config
//! values picked inside (or at the edges of) a word width's ranges.

use arbitrary::Arbitrary;
use tripword::word::Word;
use tripword::{Config, Jitter, Outcome, ValidConfig};

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
        config.check::<W>().unwrap_or_else(|e| {
            panic!(
                "W{}: {config:?} in range, yet refused: {e}",
                layout.word_bits
            )
        })
    }
}
