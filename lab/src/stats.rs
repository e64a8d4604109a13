//! The statistics of a run: medians with their range over repeats, ratios
//! with theirs, latency percentiles, fairness, and the verdict of a change
//! between two runs.

use serde::{Deserialize, Serialize};

/// A median with the smallest and largest value it was taken from.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// The median.
    pub median: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (all zero when empty).
    pub fn of(values: &[f64]) -> Spread {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let median = match v.len() {
            0 => 0.0,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        };
        Spread {
            median,
            min: v.first().copied().unwrap_or(0.0),
            max: v.last().copied().unwrap_or(0.0),
        }
    }

    /// (max − min) / median: 0 for one value.
    pub fn relative(&self) -> f64 {
        if self.median > 0.0 {
            (self.max - self.min) / self.median
        } else {
            0.0
        }
    }

    /// Each value divided by `by` (a scale, as calls/s to M calls/s).
    pub fn scaled(&self, by: f64) -> Spread {
        Spread {
            median: self.median / by,
            min: self.min / by,
            max: self.max / by,
        }
    }
}

/// How far a spread may reach, relative to its median, before a ratio read
/// from it is flagged as unreadable.
pub const NOISY: f64 = 0.25;

/// A ratio of two cells over the repeats: the per-repeat ratios (repeats
/// are interleaved, so repeat `r` of both cells ran at about the same time),
/// and whether they are too spread to read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratio {
    /// The per-repeat ratios' spread.
    pub spread: Spread,
    /// The range straddles 1 (which side is faster is not known) or spans
    /// more than [`NOISY`] of the median.
    pub noisy: bool,
}

/// `a[r] / b[r]` for every repeat both have.
pub fn ratio(a: &[f64], b: &[f64]) -> Option<Ratio> {
    let r: Vec<f64> = a
        .iter()
        .zip(b)
        .filter(|(_, y)| **y > 0.0)
        .map(|(x, y)| x / y)
        .collect();
    if r.is_empty() {
        return None;
    }
    let spread = Spread::of(&r);
    let noisy = (spread.min < 1.0 && spread.max > 1.0) || spread.relative() > NOISY;
    Some(Ratio { spread, noisy })
}

/// Latency percentiles of the sampled calls, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// How many calls were timed.
    pub samples: usize,
    /// Median.
    pub p50_ns: f64,
    /// 99th percentile.
    pub p99_ns: f64,
    /// 99.9th percentile.
    pub p999_ns: f64,
    /// The slowest.
    pub max_ns: f64,
}

impl Latency {
    /// The percentiles of `samples` (nearest rank); `None` when empty.
    pub fn of(samples: &mut [u32]) -> Option<Latency> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        let at = |q: f64| {
            let rank = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
            f64::from(samples[rank - 1])
        };
        Some(Latency {
            samples: samples.len(),
            p50_ns: at(0.5),
            p99_ns: at(0.99),
            p999_ns: at(0.999),
            max_ns: at(1.0),
        })
    }
}

/// How evenly the workers shared the calls: the smallest and largest
/// worker's calls relative to an even share (1.0 each when even).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    /// The smallest worker's calls ÷ (all calls ÷ workers).
    pub min_share: f64,
    /// The largest worker's calls ÷ (all calls ÷ workers).
    pub max_share: f64,
}

impl Fairness {
    /// Of the workers' call counts; `None` when nothing was called.
    pub fn of(per_worker: &[u64]) -> Option<Fairness> {
        let total: u64 = per_worker.iter().sum();
        if total == 0 {
            return None;
        }
        let even = total as f64 / per_worker.len() as f64;
        let min = *per_worker.iter().min()? as f64;
        let max = *per_worker.iter().max()? as f64;
        Some(Fairness {
            min_share: min / even,
            max_share: max / even,
        })
    }

    /// The least fair of several (smallest min, largest max).
    pub fn worst(all: &[Fairness]) -> Option<Fairness> {
        all.iter().copied().reduce(|a, b| Fairness {
            min_share: a.min_share.min(b.min_share),
            max_share: a.max_share.max(b.max_share),
        })
    }
}

/// What a change between two runs of one cell is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Slower beyond both runs' spread and the threshold.
    Regression,
    /// Faster beyond both runs' spread and the threshold.
    Improvement,
    /// Within the spread or the threshold.
    Noise,
}

/// Judges throughput `after` against `before` (samples of repeats): a
/// regression or an improvement only when the two ranges do not overlap
/// and the medians differ by more than `threshold` (a share: 0.05 is 5%).
pub fn judge(before: &[f64], after: &[f64], threshold: f64) -> (f64, Verdict) {
    let (a, b) = (Spread::of(before), Spread::of(after));
    if a.median <= 0.0 {
        return (0.0, Verdict::Noise);
    }
    let change = b.median / a.median - 1.0;
    let verdict = if b.max < a.min && change < -threshold {
        Verdict::Regression
    } else if b.min > a.max && change > threshold {
        Verdict::Improvement
    } else {
        Verdict::Noise
    };
    (change, verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_median_min_max() {
        let s = Spread::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        assert_eq!(s.relative(), 1.0);
        assert_eq!(Spread::of(&[1.0, 3.0]).median, 2.0);
        assert_eq!(Spread::of(&[]).median, 0.0);
    }

    #[test]
    fn ratios_pair_repeats_and_flag_noise() {
        let r = ratio(&[10.0, 11.0, 9.0], &[5.0, 5.5, 4.5]).unwrap();
        assert_eq!(r.spread.median, 2.0);
        assert!(!r.noisy);
        // One repeat says faster, another slower: unreadable.
        let r = ratio(&[10.0, 8.0], &[9.0, 9.0]).unwrap();
        assert!(r.noisy, "{r:?}");
        // A wide range: unreadable too.
        assert!(ratio(&[10.0, 20.0], &[5.0, 5.0]).unwrap().noisy);
        assert!(ratio(&[1.0], &[0.0]).is_none());
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let mut v: Vec<u32> = (1..=1000).rev().collect();
        let l = Latency::of(&mut v).unwrap();
        assert_eq!(
            (l.p50_ns, l.p99_ns, l.p999_ns, l.max_ns),
            (500.0, 990.0, 999.0, 1000.0)
        );
        assert_eq!(Latency::of(&mut []), None);
    }

    #[test]
    fn fairness_relative_to_an_even_share() {
        let f = Fairness::of(&[50, 100, 150]).unwrap();
        assert_eq!((f.min_share, f.max_share), (0.5, 1.5));
        assert_eq!(Fairness::of(&[0, 0]), None);
        let w = Fairness::worst(&[
            f,
            Fairness {
                min_share: 0.9,
                max_share: 1.6,
            },
        ])
        .unwrap();
        assert_eq!((w.min_share, w.max_share), (0.5, 1.6));
    }

    #[test]
    fn judging_a_planted_slowdown_and_equal_data() {
        let before = [100.0, 102.0, 98.0];
        let slower: Vec<f64> = before.iter().map(|x| x * 0.8).collect();
        assert_eq!(judge(&before, &slower, 0.05).1, Verdict::Regression);
        let faster: Vec<f64> = before.iter().map(|x| x * 1.2).collect();
        assert_eq!(judge(&before, &faster, 0.05).1, Verdict::Improvement);
        assert_eq!(judge(&before, &before, 0.05), (0.0, Verdict::Noise));
        // Within the spread: noise, even though the medians differ by 3%.
        assert_eq!(judge(&before, &[97.0, 103.0, 99.0], 0.05).1, Verdict::Noise);
    }
}
