//! The failure-rate policy (`tripword::rate`) against its
//! reference model ([`tripword_verification::rate_model`]).
//!
//! Proptest: random sequences of acquisitions, releases (success, failure,
//! ignored; the oldest, newest or a random held ticket, so stale tickets
//! are released too) and clock moves, on both widths; every release's
//! verdict, every status and every transition must agree, and the window's
//! counts as read by the breaker must equal the model's.

use proptest::prelude::*;
use tripword::{Outcome, Status, W32, W64};
use tripword_verification::rate_model::{N, RateOp, SLICE, check, run};

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

/// The counter stamp's limit (spec, "Failure rate", "Limits of the
/// representation"), reached with no time passing: a trip, then probes
/// released `Ignored` (each `HalfOpen` → `Probing` → `HalfOpen` is two
/// state changes) until the probe that closes lands on counter 16, which a
/// `W32` bucket's 4-bit stamp reads as counter 0. The first `Closed`
/// state's bucket (2 calls, 1 failure, 3 slices back) is then read as the
/// new state's: one failure trips a `W32` breaker where the spec's window
/// (1 call, under the minimum of 2) does not, and a `W64` breaker (12-bit
/// stamp) follows the spec. The model holds the limit: `run` (as `check`)
/// finds the breaker agreeing with it on both widths.
#[test]
fn the_counter_stamp_limit_is_reached_by_ignored_probes_and_modelled() {
    let mut ops = vec![RateOp::Acquire; 2];
    ops.push(RateOp::Release(0, Outcome::Success));
    ops.push(RateOp::Release(0, Outcome::Failure));
    ops.push(RateOp::Advance(3 * SLICE + 1));
    // Probing at counter 3; six more probes released Ignored reach 15.
    ops.push(RateOp::Acquire);
    for _ in 0..6 {
        ops.push(RateOp::Release(0, Outcome::Ignored));
        ops.push(RateOp::Acquire);
    }
    ops.push(RateOp::Release(0, Outcome::Success));
    let closed_at_16 = ops.len();
    ops.push(RateOp::Acquire);
    ops.push(RateOp::Release(0, Outcome::Failure));
    let n = N as u64;
    let slice = 3;
    let (m64, status) = run::<W64>(50, 2, &ops).unwrap();
    assert_eq!((m64.model.counter(), status), (16, Status::Closed));
    assert_eq!(m64.spec_window(slice, 16, n), (1, 1));
    assert!(!m64.aliased(slice, 16, n));
    let (m32, status) = run::<W32>(50, 2, &ops).unwrap();
    assert_eq!((m32.model.counter(), status), (17, Status::Open), "tripped");
    assert_eq!(m32.spec_window(slice, 16, n), (1, 1));
    assert_eq!(
        m32.stored_window(slice, 16, n),
        (3, 2),
        "counter 0's bucket read as 16's"
    );
    assert_eq!(check::<W32>(50, 2, &ops[..closed_at_16]), Ok(()));
}
