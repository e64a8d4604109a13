//! A fixed-seed random run of the three-probe breaker of `recovery.rs`
//! (`W32`, 3 probes, 2 to close, one failure trips): acquires, releases of
//! held tickets with random outcomes, and clock steps. The reference model
//! of `model.rs` does not know the trial, so each step is checked against
//! the rules of `docs/spec.md` ("Several probes", I11, I2) applied to the
//! word it started from: a recorded release moves the trial as its row
//! says (the second success closes, the second failure reopens with the
//! trips moved on, an ignored probe frees its place), a release with
//! another counter is stale, a rejection with cause `Probing` comes only
//! from a full trial and writes nothing, and a trial never holds more than
//! three probes. Tickets are released within `MAX_HOLD` operations, far
//! from a wrap of the 10-bit counter.

use crate::check::Checks;
use crate::prng::XorShift;
use crate::recovery::{Fx, PROBES, on_stack};
use tripword::__verification::load_word;
use tripword::word::{Snapshot, State, W32};
use tripword::{Cause, ConfigSource, Outcome, Release, Ticket, ValidConfig};

const OPS: u32 = 4_000;
const MAX_HOLD: u32 = 60;
const SLOTS: usize = 4;

/// Out of line, as `recovery::run`.
#[inline(never)]
pub fn run(c: &mut Checks) {
    c.suite("recovery: random, 3 probes");
    on_stack(c, ValidConfig::new(PROBES), random_trials);
}

fn decode(raw: u32) -> Option<Snapshot> {
    Snapshot::decode::<W32>(raw).ok()
}

/// The trial's counts, if `s` is a trial: (running, passed, failed, trips).
fn trial(s: &Snapshot) -> Option<(u32, u32, u32, u32)> {
    match s.state {
        State::Trial {
            running,
            passed,
            failed,
            trips,
            ..
        } => Some((running, passed, failed, trips)),
        _ => None,
    }
}

/// What the spec says a recorded release does to a trial `(running,
/// passed, failed, trips)` with 3 probes and 2 to close.
fn after_release(t: (u32, u32, u32, u32), outcome: Outcome, got: &Snapshot) -> bool {
    let (running, passed, failed, trips) = t;
    match outcome {
        Outcome::Success if passed + 1 == 2 => got.state == State::Closed { failures: 0 },
        Outcome::Failure if failed + 1 == 2 => {
            matches!(got.state, State::Open { trips: k, .. } if k == trips + 1)
        }
        Outcome::Success => trial(got) == Some((running - 1, passed + 1, failed, trips)),
        Outcome::Failure => trial(got) == Some((running - 1, passed, failed + 1, trips)),
        Outcome::Ignored => trial(got) == Some((running - 1, passed, failed, trips)),
    }
}

fn random_trials<P: ConfigSource<W32>>(c: &mut Checks, f: Fx<'_, P>) {
    let mut rng = XorShift::new(0x7121_A15E);
    let mut held: [Option<(Ticket, u32)>; SLOTS] = [None, None, None, None];
    let (mut full_rejections, mut recorded_in_trial, mut stale, mut closes, mut reopens) =
        (0u32, 0u32, 0u32, 0u32, 0u32);
    let mut most_in_trial = 0;
    let (mut rules_ok, mut bound_ok, mut reject_ok, mut stale_ok) = (true, true, true, true);
    for op in 0..OPS {
        let before_raw = load_word(f.b);
        let before = decode(before_raw);
        let choice = rng.below(10);
        // A ticket held too long is released now.
        let due = held
            .iter()
            .position(|h| h.as_ref().is_some_and(|(_, at)| op - at >= MAX_HOLD));
        if choice < 4 && due.is_none() {
            match f.b.acquire() {
                Ok(t) => match held.iter_mut().find(|h| h.is_none()) {
                    Some(slot) => *slot = Some((t, op)),
                    None => {
                        f.b.release(t, Outcome::Success);
                    }
                },
                Err(r) => {
                    if r.cause() == Cause::Probing {
                        full_rejections += 1;
                        let full = before
                            .as_ref()
                            .and_then(trial)
                            .is_some_and(|(r, p, fl, _)| r + p + fl == 3);
                        reject_ok &= full && load_word(f.b) == before_raw;
                    } else {
                        reject_ok &= r.cause() == Cause::Open;
                    }
                }
            }
        } else if choice < 8 || due.is_some() {
            let i = due.unwrap_or(rng.below(SLOTS as u32) as usize);
            if let Some((t, _)) = held[i].take() {
                let outcome = match rng.below(20) {
                    0..=8 => Outcome::Success,
                    9..=15 => Outcome::Failure,
                    _ => Outcome::Ignored,
                };
                let same = before.as_ref().is_some_and(|s| s.counter == t.counter());
                let got = f.b.release(t, outcome);
                let after = decode(load_word(f.b));
                if !same {
                    stale_ok &= got == Release::Stale;
                }
                if got == Release::Stale {
                    stale += 1;
                }
                if let (Some(b), Some(a), Release::Recorded) = (&before, &after, got)
                    && let Some(t) = trial(b)
                {
                    recorded_in_trial += 1;
                    rules_ok &= after_release(t, outcome, a);
                    match a.state {
                        State::Closed { .. } => closes += 1,
                        State::Open { .. } => reopens += 1,
                        _ => {}
                    }
                }
            }
        } else {
            f.clock.advance(u64::from(rng.below(400)));
        }
        if let Some((running, passed, failed, _)) = decode(load_word(f.b)).as_ref().and_then(trial)
        {
            bound_ok &= running + passed + failed <= 3 && passed < 2 && failed < 2;
            let mine = held
                .iter()
                .flatten()
                .filter(|(t, _)| decode(load_word(f.b)).is_some_and(|s| s.counter == t.counter()))
                .count() as u32;
            bound_ok &= mine <= running;
            most_in_trial = most_in_trial.max(running + passed + failed);
        }
    }
    for slot in held.iter_mut() {
        if let Some((t, _)) = slot.take() {
            f.b.release(t, Outcome::Ignored);
        }
    }
    crate::out!(
        "  W32 3 probes, {} ops: {} releases recorded in a trial ({} closed it, {} reopened it), {} full-trial rejections, {} stale releases, {} probes in a trial at most",
        OPS,
        recorded_in_trial,
        closes,
        reopens,
        full_rejections,
        stale,
        most_in_trial
    );
    c.check(
        rules_ok,
        "every recorded release moved the trial as its row says",
    );
    c.check(bound_ok, "a trial never holds more than 3 probes (I11)");
    c.check(
        reject_ok,
        "a Probing rejection only from a full trial, writing nothing",
    );
    c.check(stale_ok, "a release with another counter is stale (I2)");
    c.check(
        closes > 0 && reopens > 0 && full_rejections > 0 && most_in_trial == 3,
        "the run closed and reopened trials and filled them",
    );
}
