//! The failure-rate policy (`tripword::rate`, issue 11 item 4) against a
//! reference model written from the spec ("Failure rate"): the reference
//! [`Model`] of the state machine with a threshold of 1, plus a log of every
//! counted result, `(slice, closed counter, failed)`. A closed failure trips
//! when the log's results of the current `Closed` state whose slice is among
//! the last `N` (the current one included) reach the rate and the minimum.
//! The log keeps every result and filters at read time; the breaker keeps
//! `N` buckets and drops a slice when its bucket is reused, so the two agree
//! exactly where the spec says they do: stamps compared modulo their fields
//! (the generator keeps runs below 2^8 slices and open times of three
//! slices, so that fewer than 2^4 state changes fit one window) and counts
//! below saturation.
//!
//! Proptest: random sequences of acquisitions, releases (success, failure,
//! ignored; the oldest, newest or a random held ticket, so stale tickets
//! are released too) and clock moves, on both widths; every release's
//! verdict, every status and every transition must agree, and the window's
//! counts as read by the breaker must equal the model's.

use proptest::prelude::*;
use std::cell::RefCell;
use tripword::clock::ManualClock;
use tripword::rate::{Rate, RateBreaker};
use tripword::{Config, Observer, Outcome, Release, Status, Ticket, Transition, W32, W64, Word};
use tripword_verification::model::{Model, ModelConfig};

const N: usize = 8;
const SLICE: u64 = 1024;

#[derive(Clone, Debug)]
enum Op {
    Acquire,
    /// Release a held ticket: which (index modulo the held count), how.
    Release(usize, Outcome),
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Acquire),
        5 => (any::<usize>(), prop_oneof![
            3 => Just(Outcome::Failure),
            2 => Just(Outcome::Success),
            1 => Just(Outcome::Ignored),
        ])
            .prop_map(|(i, o)| Op::Release(i, o)),
        2 => prop_oneof![Just(1u64), Just(300), Just(SLICE - 1), Just(SLICE), Just(2_500), Just(3 * SLICE + 7)]
            .prop_map(Op::Advance),
    ]
}

#[derive(Default)]
struct Log(RefCell<Vec<Transition>>);
impl Observer for Log {
    fn on_transition(&self, t: Transition) {
        self.0.borrow_mut().push(t);
    }
}

/// What the spec's window holds: every counted result.
struct RateModel {
    model: Model,
    log: Vec<(u64, u64, bool)>,
    percent: u64,
    minimum: u64,
}

impl RateModel {
    fn window(&self, slice: u64, counter: u64) -> (u64, u64) {
        let live = self
            .log
            .iter()
            .filter(|&&(s, c, _)| c == counter && s <= slice && slice - s < N as u64);
        live.fold((0, 0), |(n, f), &(_, _, failed)| {
            (n + 1, f + u64::from(failed))
        })
    }

    /// A release; `Some(recorded)` as the breaker's verdict.
    fn release(&mut self, counter: u64, probe: bool, outcome: Outcome, now: u64) -> bool {
        if probe || outcome == Outcome::Ignored {
            return self.model.release(counter, outcome, now);
        }
        let closed = matches!(
            self.model.state(),
            tripword_verification::model::ModelState::Closed { .. }
        );
        if !closed || counter != self.model.counter() {
            return false;
        }
        let slice = now / SLICE;
        let failed = outcome == Outcome::Failure;
        self.log.push((slice, counter, failed));
        if failed {
            let (n, f) = self.window(slice, counter);
            if n >= self.minimum && f * 100 >= self.percent * n {
                return self.model.release(counter, Outcome::Failure, now);
            }
        }
        true
    }
}

fn run<W: Word>(percent: u32, minimum: u32, ops: &[Op]) -> Result<(), TestCaseError> {
    let config = Config::new()
        .open_for(3 * SLICE)
        .probe_timeout(SLICE)
        .horizon(0);
    let rate = Rate::new()
        .failure_rate(percent)
        .minimum_calls(minimum)
        .window(N as u64 * SLICE);
    let valid = config.check::<W>().unwrap();
    let clock = ManualClock::new(0);
    let log = Log::default();
    let b: RateBreaker<&ManualClock, W, &Log, N> =
        RateBreaker::from_parts(valid, rate.check::<W, N>().unwrap(), &clock, &log);
    let mcfg = ModelConfig::for_width(&config.failure_threshold(1).check::<W>().unwrap());
    let mut m = RateModel {
        model: Model::new(mcfg),
        log: Vec::new(),
        percent: percent.into(),
        minimum: minimum.into(),
    };
    let mut held: Vec<(Ticket, u64, bool)> = Vec::new();
    let mut now = 0u64;
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Acquire => {
                let got = b.acquire();
                let want = m.model.acquire(now);
                prop_assert_eq!(got.is_ok(), want.is_ok(), "step {} acquire", i);
                if let (Ok(t), Ok(w)) = (got, want) {
                    prop_assert_eq!(t.is_probe(), w.probe);
                    held.push((t, w.counter, w.probe));
                }
            }
            Op::Release(k, outcome) => {
                if held.is_empty() {
                    continue;
                }
                let (t, counter, probe) = held.remove(k % held.len());
                let got = b.release(t, outcome);
                let want = m.release(counter, probe, outcome, now);
                prop_assert_eq!(
                    got == Release::Recorded,
                    want,
                    "step {}: release {:?} (probe {}) at {}",
                    i,
                    outcome,
                    probe,
                    now
                );
            }
            Op::Advance(d) => {
                now += d;
                clock.set(now);
            }
        }
        prop_assert_eq!(b.status(), m.model.status(now), "step {} status", i);
        let (bt, mt) = (log.0.borrow().len(), m.model.counter());
        prop_assert_eq!(bt as u64, mt, "step {}: transitions", i);
        if matches!(b.status(), Status::Closed) {
            let c = b.breaker().snapshot().unwrap().counter;
            prop_assert_eq!(
                b.window_counts(now / SLICE, c),
                m.window(now / SLICE, m.model.counter()),
                "step {}: window",
                i
            );
        }
    }
    Ok(())
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
        run::<W64>(percent, minimum, &ops)?;
    }

    #[test]
    fn rate_breaker_follows_the_model_w32(
        percent in prop_oneof![Just(1u32), Just(50), Just(100), 1u32..=100],
        minimum in prop_oneof![Just(1u32), 1u32..=12],
        ops in prop::collection::vec(op(), 1..60),
    ) {
        run::<W32>(percent, minimum, &ops)?;
    }
}
