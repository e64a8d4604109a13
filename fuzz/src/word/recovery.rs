//! The word target's rows under the recovery options (`docs/spec.md`,
//! "Recovery: several probes and the ramp"), by the reference model.

use tripword::Transition;
use tripword::transition::Event;
use tripword::word::{Layout, Snapshot, State};
use tripword_verification::model::{Model, ModelConfig};

use super::{Expected, Told};
use crate::differential::model_state;

/// One event from any valid state by the reference model's rules (loaded
/// with `Model::from_snapshot`): the recovery states (`Trial`, `Ramp`),
/// and every state under a config with several probes or a ramp, where
/// the single-probe table above does not apply (`docs/spec.md`,
/// "Recovery").
pub(super) fn by_model(model: ModelConfig, s0: Snapshot, event: Event, now: u64) -> Expected {
    let period = model.counter_period();
    let mut m = Model::from_snapshot(model, &s0).expect("a valid state loads");
    let base = u64::from(s0.counter);
    // A ticket wider than the counter field is no ticket of this word.
    let ticket = |c: u32| (u64::from(c) < period).then_some(u64::from(c));
    let told = match event {
        Event::Admit => match m.acquire(now) {
            Ok(t) => Told::Admitted {
                counter: (t.counter % period) as u32,
                probe: t.probe,
            },
            Err(r) => Told::Rejected {
                cause: r.cause,
                retry_after: r.retry_after,
            },
        },
        Event::Release { counter, outcome } => match ticket(counter) {
            Some(c) if m.release(c, outcome, now) => Told::Recorded,
            Some(_) => Told::Stale,
            None => {
                m.clear_last();
                Told::Stale
            }
        },
        Event::FailureFor { counter, open_for } => match ticket(counter) {
            Some(c) if m.release_failure_for(c, open_for, now) => Told::Recorded,
            Some(_) => Told::Stale,
            None => {
                m.clear_last();
                Told::Stale
            }
        },
        Event::ForceOpen => {
            m.force_open();
            Told::Done
        }
        Event::ForceOpenFor { open_for } => {
            m.force_open_for(open_for, now);
            Told::Done
        }
        Event::ForceClose => {
            m.force_close();
            Told::Done
        }
    };
    let transitions = m
        .transitions()
        .iter()
        .map(|t| Transition {
            from: t.from.status(),
            to: t.to.status(),
            counter: (t.counter % period) as u32,
            forced: t.forced(),
        })
        .collect();
    Expected {
        told,
        state: model_state(&model, m.state()),
        transitions,
        reads_clock: m.read_clock(),
        base: (base % period) as u32,
        period,
    }
}

/// A `Trial` or `Ramp` as its encoding keeps it: times modulo their
/// (narrower) fields, counts and trips saturated at their fields' largest.
pub(super) fn reduced(layout: &Layout, state: State) -> State {
    let mask = |bits: u32| (1u64 << bits) - 1;
    let trips = |k: u32| k.min(layout.max_trips());
    match state {
        State::Trial {
            since,
            trips: k,
            running,
            passed,
            failed,
        } => {
            let most = mask(layout.probe_bits) as u32;
            State::Trial {
                since: since & mask(layout.time_bits - 3 * layout.probe_bits),
                trips: trips(k),
                running: running.min(most),
                passed: passed.min(most),
                failed: failed.min(most),
            }
        }
        State::Ramp {
            since,
            trips: k,
            credit,
            failures,
        } => State::Ramp {
            since: since & mask(layout.time_bits - layout.share_bits - layout.ramp_failure_bits),
            trips: trips(k),
            credit: credit.min(mask(layout.share_bits) as u32),
            failures: failures.min(mask(layout.ramp_failure_bits) as u32),
        },
        other => other,
    }
}
