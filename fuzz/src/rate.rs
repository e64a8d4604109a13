//! The failure-rate policy (`tripword::rate`) against its reference model
//! (`tripword_verification::rate_model`): any operation list, any rate and
//! minimum, on both word widths; the breaker and the model must agree on
//! every release's verdict, every status, every transition and the window's
//! counts.

use arbitrary::Arbitrary;
use tripword::{Outcome, W32, W64};
use tripword_verification::rate_model::{RateOp, check};

/// One fuzz input.
#[derive(Arbitrary, Clone, Debug)]
pub struct RateCase {
    /// The rate that trips, mapped to 1..=100 percent.
    pub percent: u8,
    /// The fewest calls that trip, mapped to 1..=32.
    pub minimum: u8,
    /// The operations: a kind and an argument each.
    pub ops: Vec<(u8, u16)>,
}

impl RateCase {
    /// The operation list this input stands for (at most 300).
    pub fn ops(&self) -> Vec<RateOp> {
        self.ops
            .iter()
            .take(300)
            .map(|&(kind, arg)| match kind % 4 {
                0 => RateOp::Acquire,
                1 => RateOp::Release(usize::from(arg), Outcome::Failure),
                2 => RateOp::Release(
                    usize::from(arg),
                    if arg % 5 == 0 {
                        Outcome::Ignored
                    } else {
                        Outcome::Success
                    },
                ),
                _ => RateOp::Advance(u64::from(arg % 4_000)),
            })
            .collect()
    }

    /// Runs the case on both widths; panics on a disagreement.
    pub fn run(&self) {
        let percent = u32::from(self.percent % 100) + 1;
        let minimum = u32::from(self.minimum % 32) + 1;
        let ops = self.ops();
        if let Err(e) = check::<W64>(percent, minimum, &ops) {
            panic!("W64, {percent} %, at least {minimum}: {e}");
        }
        if let Err(e) = check::<W32>(percent, minimum, &ops) {
            panic!("W32, {percent} %, at least {minimum}: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run at 50 % that trips: the target's checks hold on it.
    #[test]
    fn a_tripping_run_agrees() {
        let mut ops = Vec::new();
        for _ in 0..30 {
            ops.push((0, 0));
            ops.push((1, 0));
        }
        RateCase {
            percent: 49,
            minimum: 9,
            ops,
        }
        .run();
    }
}
