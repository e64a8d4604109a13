//! The failure-rate policy's reference model (`docs/spec.md`, "Failure
//! rate"): the reference [`Model`] of the state machine with a threshold of
//! 1, plus a log of every counted result, `(slice, closed counter, failed)`.
//! A closed failure trips when the log's results of the current `Closed`
//! state whose slice is among the last `N` (the current one included) reach
//! the rate and the minimum. The log keeps every result and filters at read
//! time; the breaker keeps `N` buckets and drops a slice when its bucket is
//! reused, so the two agree exactly where the spec says they do: stamps
//! compared modulo their fields, and counts below a bucket's largest
//! ([`check`] keeps runs below 2^8 slices and 300 operations, so neither
//! the slice stamp nor a count wraps).
//!
//! The one limit a run can reach is the `Closed` counter's stamp (2^4 on
//! `W32`): a probe released `Ignored` goes back to `HalfOpen` and the next
//! admission probes again, two state changes with no time passing, so any
//! number of changes fit one window. A bucket written under an earlier
//! `Closed` state whose counter is the current one modulo the stamp is then
//! read as current (spec, "Failure rate", "Limits of the representation").
//! The model holds that limit exactly: with [`RateModel::stamp_bits`] below
//! 64, [`RateModel::window_of`] reads the window as the buckets hold it
//! ([`RateModel::stored_window`]), and [`RateModel::aliased`] says when that
//! differs from the spec's window ([`RateModel::spec_window`]).
//!
//! [`check`] runs one operation list on a real `RateBreaker` and on the
//! model: the proptest suite (`tests/rate_model.rs`) and the fuzz target
//! `rate` both call it.

use std::cell::RefCell;
use tripword::clock::ManualClock;
use tripword::rate::{BucketLayout, Rate, RateBreaker};
use tripword::{Config, Observer, Outcome, Release, Status, Ticket, Transition, Word};

use crate::model::{Model, ModelConfig, ModelState};

/// Buckets of the breaker under test.
pub const N: usize = 8;
/// Ticks per slice (the window is `N` slices).
pub const SLICE: u64 = 1024;
/// Runs stop moving the clock past this many slices (the 32-bit bucket's
/// epoch field holds 2^8).
pub const MAX_SLICES: u64 = 200;

/// One operation of a run.
#[derive(Clone, Copy, Debug)]
pub enum RateOp {
    /// Ask for admission (a ticket is held if admitted).
    Acquire,
    /// Release a held ticket: which (index modulo the number held), how.
    Release(usize, Outcome),
    /// Move the clock forward by this many ticks.
    Advance(u64),
}

macro_rules! ensure_eq {
    ($a:expr, $b:expr) => { ensure_eq!($a, $b, "") };
    ($a:expr, $b:expr, $($fmt:tt)+) => {{
        let (a, b) = (&$a, &$b);
        if a != b {
            return Err(format!("{:?} != {:?}: {}", a, b, format!($($fmt)+)));
        }
    }};
}

#[derive(Default)]
/// Records the transitions.
pub struct Log(RefCell<Vec<Transition>>);
impl Observer for Log {
    fn on_transition(&self, t: Transition) {
        self.0.borrow_mut().push(t);
    }
}

/// What the spec's window holds: every counted result.
#[derive(Clone, Debug)]
pub struct RateModel {
    /// The state machine (threshold 1).
    pub model: Model,
    /// Every counted result: slice, closed counter, whether it failed.
    pub log: Vec<(u64, u64, bool)>,
    /// The rate that trips, in percent.
    pub percent: u64,
    /// The fewest calls that can trip.
    pub minimum: u64,
    /// Bits of the `Closed` counter a bucket's stamp keeps
    /// ([`BucketLayout::counter_bits`]; 64: the spec's window, no limit).
    pub stamp_bits: u32,
}

impl RateModel {
    /// The window's calls and failures of the `Closed` state `counter`,
    /// at `slice`.
    pub fn window(&self, slice: u64, counter: u64) -> (u64, u64) {
        self.window_of(slice, counter, N as u64)
    }

    /// A model of width `W`'s rate breaker: `model` (threshold 1) with an
    /// empty log, the bucket stamp of `W`.
    pub fn new<W: Word>(model: Model, percent: u64, minimum: u64) -> RateModel {
        RateModel {
            model,
            log: Vec::new(),
            percent,
            minimum,
            stamp_bits: BucketLayout::for_bits(W::LAYOUT.word_bits).counter_bits,
        }
    }

    /// The window the breaker reads: [`stored_window`](Self::stored_window)
    /// (the spec's window, unless a counter stamp is [`aliased`](Self::aliased)).
    pub fn window_of(&self, slice: u64, counter: u64, n: u64) -> (u64, u64) {
        self.stored_window(slice, counter, n)
    }

    /// The spec's window: the results of the `Closed` state `counter` in
    /// the `n` slices up to `slice`.
    pub fn spec_window(&self, slice: u64, counter: u64, n: u64) -> (u64, u64) {
        let live = self
            .log
            .iter()
            .filter(|&&(s, c, _)| c == counter && s <= slice && slice - s < n);
        live.fold((0, 0), |(n, f), &(_, _, failed)| {
            (n + 1, f + u64::from(failed))
        })
    }

    /// The window as `n` buckets stamped with [`stamp_bits`](Self::stamp_bits)
    /// of the counter hold it: each slice's bucket keeps the last run of
    /// that slice's results under one stamp (a result under another stamp
    /// starts it afresh), and is read when its stamp is `counter`'s.
    pub fn stored_window(&self, slice: u64, counter: u64, n: u64) -> (u64, u64) {
        let stamp = |c: u64| {
            if self.stamp_bits >= 64 {
                c
            } else {
                c & ((1 << self.stamp_bits) - 1)
            }
        };
        let (mut calls, mut failures) = (0, 0);
        for s in slice.saturating_sub(n - 1)..=slice {
            let mut run = self.log.iter().filter(|&&(ls, _, _)| ls == s).rev();
            let Some(&(_, last, _)) = run.clone().next() else {
                continue;
            };
            if stamp(last) != stamp(counter) {
                continue;
            }
            for &(_, _, failed) in run
                .by_ref()
                .take_while(|&&(_, c, _)| stamp(c) == stamp(last))
            {
                calls += 1;
                failures += u64::from(failed);
            }
        }
        (calls, failures)
    }

    /// Whether the stored window differs from the spec's: a bucket of an
    /// earlier `Closed` state read as `counter`'s.
    pub fn aliased(&self, slice: u64, counter: u64, n: u64) -> bool {
        self.stored_window(slice, counter, n) != self.spec_window(slice, counter, n)
    }

    /// A release in a run of slices of `slice` ticks and a window of `n`
    /// slices; whether it is recorded.
    pub fn release_at(
        &mut self,
        counter: u64,
        probe: bool,
        outcome: Outcome,
        now: u64,
        slice: u64,
        n: u64,
    ) -> bool {
        if probe || outcome == Outcome::Ignored {
            return self.model.release(counter, outcome, now);
        }
        let closed = matches!(self.model.state(), ModelState::Closed { .. });
        if !closed || counter != self.model.counter() {
            return false;
        }
        let s = now / slice;
        let failed = outcome == Outcome::Failure;
        self.log.push((s, counter, failed));
        if failed {
            let (calls, failures) = self.window_of(s, counter, n);
            if calls >= self.minimum && failures * 100 >= self.percent * calls {
                self.model.release(counter, Outcome::Failure, now);
            }
        }
        true
    }

    /// A release with the breaker under test's slices ([`SLICE`] ticks,
    /// [`N`] of them); whether it is recorded.
    pub fn release(&mut self, counter: u64, probe: bool, outcome: Outcome, now: u64) -> bool {
        self.release_at(counter, probe, outcome, now, SLICE, N as u64)
    }
}

/// Runs `ops` on a `RateBreaker` of width `W` (rate `percent`, at least
/// `minimum` calls) and on the model; the first disagreement, if any.
///
/// # Errors
/// What disagreed, and at which step.
pub fn check<W: Word>(percent: u32, minimum: u32, ops: &[RateOp]) -> Result<(), String> {
    run::<W>(percent, minimum, ops).map(|_| ())
}

/// [`check`], returning the model and the breaker's status at the end.
///
/// # Errors
/// What disagreed, and at which step.
pub fn run<W: Word>(
    percent: u32,
    minimum: u32,
    ops: &[RateOp],
) -> Result<(RateModel, Status), String> {
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
    let mut m = RateModel::new::<W>(Model::new(mcfg), percent.into(), minimum.into());
    let mut held: Vec<(Ticket, u64, bool)> = Vec::new();
    let mut now = 0u64;
    for (i, op) in ops.iter().enumerate() {
        match *op {
            RateOp::Acquire => {
                let got = b.acquire();
                let want = m.model.acquire(now);
                ensure_eq!(got.is_ok(), want.is_ok(), "step {} acquire", i);
                if let (Ok(t), Ok(w)) = (got, want) {
                    ensure_eq!(t.is_probe(), w.probe);
                    held.push((t, w.counter, w.probe));
                }
            }
            RateOp::Release(k, outcome) => {
                if held.is_empty() {
                    continue;
                }
                let (t, counter, probe) = held.remove(k % held.len());
                let got = b.release(t, outcome);
                let want = m.release(counter, probe, outcome, now);
                ensure_eq!(
                    got == Release::Recorded,
                    want,
                    "step {}: release {:?} (probe {}) at {}",
                    i,
                    outcome,
                    probe,
                    now
                );
            }
            RateOp::Advance(d) => {
                if (now + d) / SLICE < MAX_SLICES {
                    now += d;
                    clock.set(now);
                }
            }
        }
        ensure_eq!(b.status(), m.model.status(now), "step {} status", i);
        let (bt, mt) = (log.0.borrow().len(), m.model.counter());
        ensure_eq!(bt as u64, mt, "step {}: transitions", i);
        if matches!(b.status(), Status::Closed) {
            let c = b.breaker().snapshot().unwrap().counter;
            ensure_eq!(
                b.window_counts(now / SLICE, c),
                m.window(now / SLICE, m.model.counter()),
                "step {}: window",
                i
            );
        }
    }
    Ok((m, b.status()))
}
