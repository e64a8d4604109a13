//! A fixed-seed random run: thousands of operations applied to a static
//! breaker and to the reference model; after each one the verdict (a
//! rejection's cause and wait included), the transitions reported and the
//! decoded word must agree. `W32` runs once at its default horizon (time in
//! 128-tick units, `s = 7`) and once in whole ticks (`horizon(0)`); `W64`
//! keeps whole ticks at its default horizon.
//!
//! The hinted operations are among them: a quarter of the releases of held
//! tickets, and a quarter of the permits, are failures that carry their open
//! time (`release_failure_for`, `Permit::failure_for`), and `force_open_for`
//! runs now and then, with hints of 0, 1, the open time, four times it,
//! `longest_hint`, `u64::MAX` or any.
//!
//! The clock moves forwards in small and huge steps and sometimes backwards,
//! and starts either at 0 or just below `u64::MAX`, so wraps are covered.
//! Held tickets are released within `MAX_HOLD` operations: at a handful of
//! state changes per operation at most, that keeps a ticket far from a full
//! wrap of the word's counter (1024 changes for `W32`), the one place the
//! model, whose counter never wraps, and the word are documented to differ.

use crate::check::Checks;
use crate::fixture::{Fixture, fresh};
use crate::model::{Answer, Model, Phase, State};
use crate::prng::XorShift;
use tripword::word::{self, Snapshot, W32, W64};
use tripword::{Clock, Config, ConfigSource, Outcome, Release, Ticket, Word};

/// Operations per run.
pub const OPS: u32 = 5_000;
const MAX_HOLD: u32 = 100;
const SLOTS: usize = 4;

const FIXED: Config = Config::new()
    .failure_threshold(3)
    .open_for(60)
    .probe_timeout(40);
const BACKOFF: Config = Config::new()
    .failure_threshold(2)
    .open_for(25)
    .exponential_backoff(700)
    .probe_timeout(30)
    .abandon_as(Outcome::Ignored);

pub fn run(c: &mut Checks) {
    c.suite("random run vs model, W32");
    // The default horizon: 128-tick units.
    compare(c, fresh!(W32, FIXED), 0x0000_2E67, 0);
    // Whole ticks.
    compare(
        c,
        fresh!(W32, static BACKOFF.horizon(0)),
        0x3BAF_E28C,
        u64::MAX - 2_000,
    );
    c.suite("random run vs model, W64");
    compare(c, fresh!(W64, FIXED), 0xAED8_18A8, 0);
    compare(
        c,
        fresh!(W64, static BACKOFF),
        0x0000_5EED,
        u64::MAX - 2_000,
    );
}

struct Held {
    ticket: Ticket,
    model_counter: u64,
    since_op: u32,
}

/// A hint for a hinted failure or `force_open_for`.
fn hint(rng: &mut XorShift, open_for: u64, longest: u64) -> u64 {
    match rng.below(8) {
        0 => 0,
        1 => 1,
        2 | 3 => open_for,
        4 => 4 * open_for,
        5 => longest,
        6 => u64::MAX,
        _ => u64::from(rng.next()) << rng.below(33),
    }
}

fn outcome(rng: &mut XorShift) -> Outcome {
    match rng.below(20) {
        0..=8 => Outcome::Failure,
        9..=16 => Outcome::Success,
        _ => Outcome::Ignored,
    }
}

fn compare<W: Word, P: ConfigSource<W>>(c: &mut Checks, f: Fixture<W, P>, seed: u32, origin: u64) {
    let layout = W::LAYOUT;
    let mut rng = XorShift::new(seed);
    let mut model = Model::new(f.b.config());
    let mut held: [Option<Held>; SLOTS] = [const { None }; SLOTS];
    // Clock steps scale with the duration, at least a few units.
    let open_for = (f.b.config().open_for() as u32).max(8 * model.unit() as u32);
    let (base_open, longest) = (f.b.config().open_for(), f.b.config().longest_hint());
    f.clock.set(origin);
    let mut bad_ops = 0u32;
    let mut tally = Tally::default();

    for op in 0..OPS {
        let failed_before = c.failed();
        let now = f.clock.now();
        let roll = rng.below(200);
        match roll {
            // Admission; keep the ticket if a slot is free, else release now.
            // A permit dropped without an outcome: the config's abandon
            // outcome (Failure, or Ignored for BACKOFF) is recorded.
            0..=9 => {
                let want = mask_admitted(model.admit(now), &layout);
                let permit = f.b.permit();
                let answer = match &permit {
                    Ok(p) => Answer::Admitted {
                        counter: u64::from(p.counter()),
                        probe: p.is_probe(),
                    },
                    Err(r) => rejected(r),
                };
                c.eq(answer, want, "permit agrees with the model");
                if let Ok(p) = &permit {
                    tally.probes += u32::from(p.is_probe());
                }
                match permit {
                    // A quarter: finished with a failure that carries its
                    // open time.
                    Ok(p) if rng.below(4) == 0 => {
                        let d = hint(&mut rng, base_open, longest);
                        let want = model.release_failure_for(model.counter, d, now);
                        let got = match p.failure_for(d) {
                            Release::Recorded => Answer::Recorded,
                            Release::Stale => Answer::Stale,
                        };
                        tally.hinted += 1;
                        c.eq(got, want, "permit failure_for agrees with the model");
                    }
                    Ok(p) => {
                        let abandon = f.b.config().abandon();
                        let _ = model.release(model.counter, abandon, now);
                        drop(p);
                    }
                    Err(_) => {}
                }
            }
            10..=89 => {
                let want = mask_admitted(model.admit(now), &layout);
                let got = f.b.acquire();
                let answer = match &got {
                    Ok(t) => Answer::Admitted {
                        counter: u64::from(t.counter()),
                        probe: t.is_probe(),
                    },
                    Err(r) => rejected(r),
                };
                c.eq(answer, want, "admission agrees with the model");
                if let Ok(ticket) = got {
                    let h = Held {
                        ticket,
                        model_counter: model.counter,
                        since_op: op,
                    };
                    if h.ticket.is_probe() {
                        tally.probes += 1;
                    }
                    // Probes are mostly kept running (so they can time out),
                    // closed-state calls half the time.
                    let keep = rng.below(4) < if h.ticket.is_probe() { 3 } else { 2 };
                    match held.iter_mut().find(|h| h.is_none()) {
                        Some(slot) if keep => *slot = Some(h),
                        _ => release(c, f, &mut model, h, outcome(&mut rng), now, &mut tally),
                    }
                }
            }
            // Release a held ticket with a random outcome.
            90..=149 => {
                let first = rng.below(SLOTS as u32) as usize;
                let slot = (0..SLOTS)
                    .map(|i| (first + i) % SLOTS)
                    .find(|&i| held[i].is_some());
                match slot.and_then(|i| held[i].take()) {
                    Some(h) if rng.below(4) == 0 => {
                        let d = hint(&mut rng, base_open, longest);
                        release_for(c, f, &mut model, h, d, now, &mut tally)
                    }
                    Some(h) => release(c, f, &mut model, h, outcome(&mut rng), now, &mut tally),
                    None => {
                        let want = model.status(now);
                        c.eq(
                            Answer::Status(f.b.status()),
                            want,
                            "status agrees with the model",
                        );
                    }
                }
            }
            150..=169 => {
                let want = model.status(now);
                c.eq(
                    Answer::Status(f.b.status()),
                    want,
                    "status agrees with the model",
                );
            }
            // Time: small steps, steps onto the deadline (one tick before, at,
            // or one after), sometimes huge jumps or backwards.
            170..=195 => match (rng.below(32), model.deadline(now)) {
                (0, _) => f.clock.advance(u64::from(rng.next()) << rng.below(33)),
                (1, _) => f
                    .clock
                    .set(now.wrapping_sub(u64::from(rng.below(2 * open_for)))),
                (2..=12, Some(deadline)) => f.clock.set(
                    deadline
                        .wrapping_add(u64::from(rng.below(3)))
                        .wrapping_sub(1),
                ),
                _ => f.clock.advance(u64::from(rng.below(open_for / 2))),
            },
            // Forced open a quarter of the time force_close runs, so the
            // breaker is not held open for most of the run.
            196 if rng.below(4) == 0 => {
                f.b.force_open();
                model.force_open();
            }
            196 => {
                let want = model.status(now);
                c.eq(
                    Answer::Status(f.b.status()),
                    want,
                    "status agrees with the model",
                );
            }
            197 => {
                let d = hint(&mut rng, base_open, longest);
                f.b.force_open_for(d);
                model.force_open_for(d, now);
                tally.hinted += 1;
            }
            _ => {
                f.b.force_close();
                model.force_close();
            }
        }

        // Tickets held too long are released (see the module doc).
        for slot in held.iter_mut() {
            if slot.as_ref().is_some_and(|h| op - h.since_op >= MAX_HOLD)
                && let Some(h) = slot.take()
            {
                release(
                    c,
                    f,
                    &mut model,
                    h,
                    Outcome::Ignored,
                    f.clock.now(),
                    &mut tally,
                );
            }
        }

        tally.phase[model.state.phase() as usize] += 1;
        let log = f.log.take();
        let (changes, n) = model.take_changes();
        tally.transitions += n as u32;
        tally.probe_timeouts += changes
            .iter()
            .flatten()
            .filter(|(from, to, _)| (*from, *to) == (Phase::Probing, Phase::HalfOpen))
            .count() as u32;
        c.eq(
            log.len(),
            n,
            "as many transitions reported as the model made",
        );
        for (got, want) in log.transitions().zip(changes.iter().flatten()) {
            let forced = want.0 == Phase::ForcedOpen || want.1 == Phase::ForcedOpen;
            let want = (
                want.0.status(),
                want.1.status(),
                forced,
                want.2 & u64::from(layout.max_counter()),
            );
            c.eq(
                (got.from, got.to, got.forced, u64::from(got.counter)),
                want,
                "transition reported as the model made it",
            );
        }
        c.eq(
            f.b.snapshot().ok(),
            Some(expected::<W>(&model)),
            "decoded word agrees with the model",
        );
        if c.failed() != failed_before {
            bad_ops += 1;
            if bad_ops == 1 {
                crate::out!(
                    "  first mismatch at op {} (roll {}, clock {})",
                    op,
                    roll,
                    now
                );
            }
            if bad_ops >= 5 {
                crate::out!("  stopping this run after 5 mismatching operations");
                return;
            }
        }
    }
    crate::out!(
        "  W{} {} ops from clock {:#x}: {} transitions, {} probes, {} probe timeouts, {} stale releases",
        layout.word_bits,
        OPS,
        origin,
        tally.transitions,
        tally.probes,
        tally.probe_timeouts,
        tally.stale
    );
    let [closed, open, half_open, probing, forced, open_until] = tally.phase;
    crate::out!(
        "    ops ending in closed {}, open {}, half-open {}, probing {}, forced open {}, open until {}",
        closed,
        open,
        half_open,
        probing,
        forced,
        open_until
    );
    crate::out!("    {} hinted failures or force_open_for", tally.hinted);
}

/// A rejection as the model says it: cause and wait.
fn rejected(r: &tripword::Rejected) -> Answer {
    Answer::Rejected {
        cause: r.cause(),
        retry_after: r.retry_after(),
    }
}

/// Releases `h` on both and compares the answers.
fn release<W: Word, P: ConfigSource<W>>(
    c: &mut Checks,
    f: Fixture<W, P>,
    model: &mut Model,
    h: Held,
    o: Outcome,
    now: u64,
    tally: &mut Tally,
) {
    let want = model.release(h.model_counter, o, now);
    let got = match f.b.release(h.ticket, o) {
        Release::Recorded => Answer::Recorded,
        Release::Stale => {
            tally.stale += 1;
            Answer::Stale
        }
    };
    c.eq(got, want, "release agrees with the model");
}

/// Releases `h` on both as a failure that carries the open time `d`.
fn release_for<W: Word, P: ConfigSource<W>>(
    c: &mut Checks,
    f: Fixture<W, P>,
    model: &mut Model,
    h: Held,
    d: u64,
    now: u64,
    tally: &mut Tally,
) {
    tally.hinted += 1;
    let want = model.release_failure_for(h.model_counter, d, now);
    let got = match f.b.release_failure_for(h.ticket, d) {
        Release::Recorded => Answer::Recorded,
        Release::Stale => {
            tally.stale += 1;
            Answer::Stale
        }
    };
    c.eq(got, want, "release_failure_for agrees with the model");
}

/// What a run covered, printed so a reader can see it exercised each path.
#[derive(Default)]
struct Tally {
    probes: u32,
    stale: u32,
    transitions: u32,
    probe_timeouts: u32,
    /// Hinted failures and `force_open_for`.
    hinted: u32,
    phase: [u32; 6],
}

/// The model's admission, with its counter reduced to the word's width.
fn mask_admitted(answer: Answer, layout: &word::Layout) -> Answer {
    match answer {
        Answer::Admitted { counter, probe } => Answer::Admitted {
            counter: counter & u64::from(layout.max_counter()),
            probe,
        },
        other => other,
    }
}

/// The word the model's state should decode to.
fn expected<W: Word>(m: &Model) -> Snapshot {
    let l = W::LAYOUT;
    let time = |t: u64| m.units(t);
    let state = match m.state {
        State::Closed { failures } => word::State::Closed { failures },
        State::Open { since, trips } => word::State::Open {
            since: time(since),
            trips,
        },
        State::HalfOpen { trips } => word::State::HalfOpen { trips },
        State::Probing { since, trips } => word::State::Probing {
            since: time(since),
            trips,
        },
        State::ForcedOpen => word::State::ForcedOpen,
        State::OpenUntil { until, trips } => word::State::OpenUntil {
            until: time(until),
            trips,
        },
    };
    Snapshot {
        state,
        counter: (m.counter & u64::from(l.max_counter())) as u32,
    }
}
