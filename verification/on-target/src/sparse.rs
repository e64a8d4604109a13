//! Sparse and periodic callers on target, on a `W32` breaker at its
//! default horizon (1 kHz ticks on a hand-moved clock: 128-tick units,
//! `s = 7`, a ring of 2^22 ticks, 69.9 minutes). Every call is compared with
//! the reference model (verdict, a rejection's cause and wait, transitions,
//! the decoded word), and with the documented bounds directly: nothing is
//! admitted before `d` ticks have passed since the trip (or the probe's
//! admission), and a caller `d + 3 * 2^s - 1` ticks after it or later (below
//! the ring less one unit) is admitted.
//!
//! - the sparse-caller reproduction: `open_for(10_000)`, tripped at `t = 100`,
//!   callers at `100 + k * 32_768` (the old 2^15-tick horizon), over three
//!   rings: each caller probes; probes fail, are lost, or succeed (and the
//!   breaker trips again);
//! - a caller every 30 s and every 65 s, over two rings, open times of 10 s
//!   to 100 s: the first caller at or after the deadline probes.

use crate::check::Checks;
use crate::fixture::{Fixture, fresh};
use crate::model::{Answer, Model, Phase, State};
use tripword::word::W32;
use tripword::{Clock, Config, ConfigSource, Outcome, Release, Ticket};

/// The sparse callers' config: ten seconds open, the default horizon.
const SPARSE: Config = Config::new().failure_threshold(1).open_for(10_000);
/// The old horizon: the `W32` time field's range in whole ticks.
const OLD_HORIZON: u64 = 1 << 15;

pub fn run(c: &mut Checks) {
    c.suite("sparse callers");
    reproduction(c, fresh!(W32, SPARSE));
    reproduction(c, fresh!(W32, static SPARSE));
    c.suite("periodic callers, 30 s / 65 s");
    periodic(c, fresh!(W32, SPARSE), 30_000);
    periodic(c, fresh!(W32, static SPARSE), 65_000);
    periodic(c, fresh!(W32, SPARSE.open_for(29_999)), 30_000);
    periodic(c, fresh!(W32, static SPARSE.open_for(30_000)), 30_000);
    periodic(c, fresh!(W32, SPARSE.open_for(64_999)), 65_000);
    periodic(c, fresh!(W32, static SPARSE.open_for(100_000)), 65_000);
}

/// A breaker and the model, called at chosen times.
struct Run<'c, P: 'static> {
    c: &'c mut Checks,
    f: Fixture<W32, P>,
    m: Model,
    probes: u32,
    rejected: u32,
}

impl<P: ConfigSource<W32>> Run<'_, P> {
    fn unit(&self) -> u64 {
        1 << self.f.b.config().time_shift()
    }

    /// A caller at `t`: the breaker and the model agree, the bounds hold.
    fn call(&mut self, t: u64) -> Option<(Ticket, u64)> {
        self.f.clock.set(t);
        let before = self.m.state;
        let want = self.m.admit(t);
        let got = self.f.b.acquire();
        let answer = match &got {
            Ok(ticket) => Answer::Admitted {
                counter: u64::from(ticket.counter()),
                probe: ticket.is_probe(),
            },
            Err(r) => Answer::Rejected {
                cause: r.cause(),
                retry_after: r.retry_after(),
            },
        };
        let want = match want {
            Answer::Admitted { counter, probe } => Answer::Admitted {
                counter: counter & 0x3FF,
                probe,
            },
            other => other,
        };
        self.c.eq(answer, want, "the caller agrees with the model");
        self.bounds(&before, t, got.is_ok());
        self.transitions();
        match got {
            Ok(ticket) => {
                self.probes += u32::from(ticket.is_probe());
                Some((ticket, self.m.counter))
            }
            Err(_) => {
                self.rejected += 1;
                None
            }
        }
    }

    fn release(&mut self, (ticket, counter): (Ticket, u64), outcome: Outcome) {
        let now = self.f.clock.now();
        let want = self.m.release(counter, outcome, now);
        let got = match self.f.b.release(ticket, outcome) {
            Release::Recorded => Answer::Recorded,
            Release::Stale => Answer::Stale,
        };
        self.c.eq(got, want, "the release agrees with the model");
        self.transitions();
    }

    fn trip(&mut self, t: u64) {
        if let Some(ticket) = self.call(t) {
            self.release(ticket, Outcome::Failure);
        }
        self.c.check(
            matches!(self.m.state, State::Open { .. }),
            "tripped (model)",
        );
    }

    /// The transitions reported are the model's.
    fn transitions(&mut self) {
        let log = self.f.log.take();
        let (changes, n) = self.m.take_changes();
        self.c
            .eq(log.len(), n, "as many transitions as the model made");
        for (got, want) in log.transitions().zip(changes.iter().flatten()) {
            let forced = want.0 == Phase::ForcedOpen || want.1 == Phase::ForcedOpen;
            self.c.eq(
                (got.from, got.to, got.forced, u64::from(got.counter)),
                (want.0.status(), want.1.status(), forced, want.2 & 0x3FF),
                "the transition is the model's",
            );
        }
    }

    /// The documented bounds, from the model state before the call.
    fn bounds(&mut self, before: &State, t: u64, admitted: bool) {
        let (since, d) = match *before {
            State::Open { since, trips } => (since, self.m.open_time(trips)),
            State::Probing { since, .. } => (since, self.f.b.config().probe_timeout()),
            _ => return,
        };
        let gap = t.wrapping_sub(since);
        let latest = d + 3 * self.unit() - 1;
        let ring = self.f.b.config().ring();
        self.c
            .check(gap >= d || !admitted, "never admitted before d ticks");
        if gap >= latest && gap + self.unit() < ring {
            self.c
                .check(admitted, "admitted by d + 3 * 2^s ticks (below the ring)");
        }
    }
}

/// The sparse-caller reproduction: tripped at 100, callers every 2^15 ticks.
fn reproduction<P: ConfigSource<W32>>(c: &mut Checks, f: Fixture<W32, P>) {
    let mut r = Run {
        m: Model::new(f.b.config()),
        c,
        f,
        probes: 0,
        rejected: 0,
    };
    r.c.eq(r.f.b.config().time_shift(), 7, "128-tick units");
    r.trip(100);
    let calls = 3 * r.f.b.config().ring() / OLD_HORIZON;
    for k in 1..=calls {
        let Some(probe) = r.call(100 + k * OLD_HORIZON) else {
            continue;
        };
        match k % 3 {
            0 => r.release(probe, Outcome::Failure),
            // Lost: never released; the next caller is past its timeout.
            1 => drop(probe),
            _ => {
                r.release(probe, Outcome::Success);
                r.trip(100 + k * OLD_HORIZON);
            }
        }
    }
    r.c.eq(r.rejected, 0, "every caller 2^15 ticks apart is admitted");
    r.c.eq(u64::from(r.probes), calls, "each as the probe");
    crate::out!(
        "  {} callers 2^15 ticks apart over three rings: {} probes",
        calls,
        r.probes
    );
}

/// A caller every `gap` ticks over two rings, tripped at 100: the first
/// caller at or after each deadline probes; a failed probe reopens, a
/// success closes (and the next failure trips again).
fn periodic<P: ConfigSource<W32>>(c: &mut Checks, f: Fixture<W32, P>, gap: u64) {
    let mut r = Run {
        m: Model::new(f.b.config()),
        c,
        f,
        probes: 0,
        rejected: 0,
    };
    let open_for = r.f.b.config().open_for();
    r.trip(100);
    let calls = 2 * r.f.b.config().ring() / gap;
    let mut in_a_row = 0u64;
    let mut most_in_a_row = 0u64;
    for k in 1..=calls {
        match r.call(100 + k * gap) {
            None => {
                in_a_row += 1;
                most_in_a_row = most_in_a_row.max(in_a_row);
            }
            Some(ticket) => {
                in_a_row = 0;
                let outcome = if k % 4 == 0 {
                    Outcome::Success
                } else {
                    Outcome::Failure
                };
                r.release(ticket, outcome);
            }
        }
    }
    // Never rejected once a whole open time and its rounding have passed.
    let most = (open_for + 3 * r.unit()).div_ceil(gap);
    r.c.check(
        most_in_a_row <= most,
        "never more rejections in a row than the open time allows",
    );
    r.c.check(r.probes > 0, "probes were elected");
    crate::out!(
        "  open_for {} ms, a caller every {} ms, {} calls: {} probes, {} rejected (at most {} in a row)",
        open_for,
        gap,
        calls,
        r.probes,
        r.rejected,
        most_in_a_row
    );
}
