//! `Arbitrary` building blocks shared by the targets: outcomes, config
//! values picked inside (or at the edges of) a word width's ranges.

use arbitrary::Arbitrary;
use tripword::word::Word;
use tripword::{Config, Outcome};

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

/// A config that validates for the width it is built for: each field picked
/// inside that width's range (see `docs/design.md`, "Ranges that follow").
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigSpec {
    /// `failure_threshold`, in `1..=max_failures`.
    pub threshold: Pick,
    /// `open_for`, in `1..=max_duration`.
    pub open_for: Pick,
    /// The backoff cap, in `open_for..=max_duration`; `None`: fixed open time.
    pub backoff: Option<Pick>,
    /// `probe_timeout`, in `1..=max_duration`.
    pub probe_timeout: Pick,
    /// What a dropped permit records.
    pub abandon: Out,
}

impl ConfigSpec {
    /// The config for word width `W`; always passes `validate::<W>()`.
    pub fn config<W: Word>(&self) -> Config {
        let layout = W::LAYOUT;
        let max = layout.max_duration();
        let open_for = self.open_for.in_range(1, max);
        let config = Config::new()
            .failure_threshold(self.threshold.in_range(1, layout.max_failures().into()) as u32)
            .open_for(open_for)
            .probe_timeout(self.probe_timeout.in_range(1, max))
            .abandon_as(self.abandon.into());
        match self.backoff {
            Some(cap) => config.exponential_backoff(cap.in_range(open_for, max)),
            None => config,
        }
    }
}
