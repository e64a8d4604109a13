//! The failure-rate policy (`tripword::rate`) against its
//! reference model ([`tripword_verification::rate_model`]).
//!
//! Proptest: random sequences of acquisitions, releases (success, failure,
//! ignored; the oldest, newest or a random held ticket, so stale tickets
//! are released too) and clock moves, on both widths; every release's
//! verdict, every status and every transition must agree, and the window's
//! counts as read by the breaker must equal the model's.

use proptest::prelude::*;
use tripword::{Outcome, W32, W64};
use tripword_verification::rate_model::{RateOp, SLICE, check};

fn op() -> impl Strategy<Value = RateOp> {
    prop_oneof![
        4 => Just(RateOp::Acquire),
        5 => (any::<usize>(), prop_oneof![
            3 => Just(Outcome::Failure),
            2 => Just(Outcome::Success),
            1 => Just(Outcome::Ignored),
        ])
            .prop_map(|(i, o)| RateOp::Release(i, o)),
        2 => prop_oneof![Just(1u64), Just(300), Just(SLICE - 1), Just(SLICE), Just(2_500), Just(3 * SLICE + 7)]
            .prop_map(RateOp::Advance),
    ]
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn rate_breaker_follows_the_model_w64(
        percent in prop_oneof![Just(1u32), Just(50), Just(100), 1u32..=100],
        minimum in prop_oneof![Just(1u32), 1u32..=12],
        ops in prop::collection::vec(op(), 1..120),
    ) {
        prop_assert_eq!(check::<W64>(percent, minimum, &ops), Ok(()));
    }

    #[test]
    fn rate_breaker_follows_the_model_w32(
        percent in prop_oneof![Just(1u32), Just(50), Just(100), 1u32..=100],
        minimum in prop_oneof![Just(1u32), 1u32..=12],
        ops in prop::collection::vec(op(), 1..60),
    ) {
        prop_assert_eq!(check::<W32>(percent, minimum, &ops), Ok(()));
    }
}
