//! Sparse and periodic callers, deterministically, on the real
//! atomic [`Breaker`] (`W32` at its default horizon, 1 kHz ticks, `s = 7`;
//! and in exact ticks), each call compared with the reference
//! [model](tripword_verification::model) (verdict, a rejection's cause and
//! wait, transitions, the decoded word) and with the documented time bounds
//! directly: nothing is admitted before `d` ticks have passed since the
//! timestamp, and a caller `d + 3 * 2^s - 1` ticks after it or later (below
//! the ring less one unit) is admitted.
//!
//! - the sparse-caller reproduction: `open_for(10_000)`, tripped at `t = 100`,
//!   callers at `100 + k * 32_768` (the old horizon, `2^15`), probes lost and
//!   failed among them, over several rings;
//! - callers every 30 s and every 65 s, tripped and re-tripped;
//! - gaps around the ring minus the open time and around multiples of the
//!   ring;
//! - probe timeouts of one tick;
//! - the counter driven around its period with a ticket held across;
//! - `backoff_rounding_doubles`: what the doubled open time costs in units.

use tripword::word::Snapshot;
use tripword::{Breaker, Config, Outcome, Release, Status, Ticket, ValidConfig, W32, Word};
use tripword_verification::harness::{
    CountingClock, Recorder, check_time_bounds, counter_matches, rejection_matches, state_mismatch,
    transitions_match,
};
use tripword_verification::model::{Model, ModelConfig, ModelTicket};

/// A breaker and the model side by side on one clock.
struct Run<'a> {
    b: Breaker<&'a CountingClock, W32, &'a Recorder>,
    m: Model,
    clock: &'a CountingClock,
    log: &'a Recorder,
    cfg: ModelConfig,
    calls: u64,
    probes: u64,
}

impl<'a> Run<'a> {
    fn new(config: Config, clock: &'a CountingClock, log: &'a Recorder) -> Self {
        let valid: ValidConfig<W32> = config.check().expect("in range");
        let cfg = ModelConfig::for_width(&valid);
        Run {
            b: Breaker::from_parts(valid, clock, log),
            m: Model::new(cfg),
            clock,
            log,
            cfg,
            calls: 0,
            probes: 0,
        }
    }

    fn now(&self) -> u64 {
        self.clock.peek()
    }

    /// Compares what the last operation reported and left with the model.
    fn compare(&mut self, what: &str) {
        let seen = self.log.take();
        assert!(
            transitions_match(&self.cfg, seen.iter().copied(), self.m.transitions()),
            "{what} at {}: reported {seen:?}, model {:?}",
            self.now(),
            self.m.transitions()
        );
        let snap: Snapshot = self.b.snapshot().expect("valid");
        if let Some(diff) = state_mismatch(&snap, &self.m) {
            panic!("{what} at {}: {diff}", self.now());
        }
        self.m.clear_last();
    }

    /// A caller at the current time: the core and the model agree, and the
    /// documented bounds hold. Returns the ticket if admitted.
    fn call(&mut self) -> Option<(Ticket, ModelTicket)> {
        let now = self.now();
        let before = self.m.state();
        let got = self.b.acquire();
        let want = self.m.acquire(now);
        match (&got, &want) {
            (Ok(t), Ok(m)) => {
                assert!(
                    counter_matches(&self.cfg, m.counter, t.counter()) && t.is_probe() == m.probe,
                    "ticket at {now}: {t:?} vs {m:?}"
                );
            }
            (Err(r), Err(m)) => assert!(
                rejection_matches(r, m),
                "rejection at {now}: {r:?} vs {m:?}"
            ),
            _ => panic!("caller at {now} from {before:?}: core {got:?}, model {want:?}"),
        }
        check_time_bounds(&self.cfg, &before, now, got.is_ok(), "caller");
        self.compare("caller");
        self.calls += 1;
        let admitted = got.ok().zip(want.ok());
        if admitted.as_ref().is_some_and(|(t, _)| t.is_probe()) {
            self.probes += 1;
        }
        admitted
    }

    fn release(&mut self, (t, m): (Ticket, ModelTicket), outcome: Outcome) -> bool {
        let now = self.now();
        let got = self.b.release(t, outcome) == Release::Recorded;
        let want = self.m.release(m.counter, outcome, now);
        assert_eq!(got, want, "release at {now}");
        self.compare("release");
        got
    }

    fn trip(&mut self) {
        for _ in 0..self.cfg.failure_threshold {
            let t = self.call().expect("closed admits");
            self.release(t, Outcome::Failure);
        }
        assert_eq!(self.b.status(), Status::Open, "tripped");
        self.m.clear_last();
    }
}

/// The sparse callers' config: 1 kHz ticks, ten seconds open, the
/// default horizon (an hour): `s = 7`.
fn sparse_config() -> Config {
    Config::new().failure_threshold(1).open_for(10_000)
}

/// The sparse-caller reproduction: tripped at 100, callers every 2^15 ticks
/// (the old horizon). Before, every caller was rejected for ever; now the first
/// one probes. Probes are lost (never released) or fail, and the next
/// caller, 32.8 s later, past the probe timeout or the open time, probes
/// again; over three rings (384 calls).
#[test]
fn callers_every_2_pow_15_ticks_probe() {
    let clock = CountingClock::new(100);
    let log = Recorder::default();
    let mut r = Run::new(sparse_config(), &clock, &log);
    assert_eq!(r.cfg.time_shift, 7);
    r.trip();
    let rings = 3 * (r.cfg.ring() as u64) / (1 << 15);
    for k in 1..=rings {
        clock.set(100 + k * (1 << 15));
        let probe = r
            .call()
            .unwrap_or_else(|| panic!("caller {k} was rejected"));
        assert!(probe.0.is_probe(), "caller {k} is the probe");
        match k % 3 {
            0 => {
                r.release(probe, Outcome::Failure);
            }
            1 => drop(probe), // lost
            _ => {
                // Succeeds: closed; trip again at once.
                r.release(probe, Outcome::Success);
                r.trip();
            }
        }
    }
    assert_eq!(r.probes, rings);
}

/// Callers every 30 s and every 65 s of 1 kHz ticks, over two rings each:
/// tripped, the first caller at or after the deadline probes; a failed
/// probe reopens, a success closes and the next failure trips again.
#[test]
fn callers_every_30_and_65_seconds() {
    for gap in [30_000u64, 65_000] {
        for open_for in [10_000u64, 29_999, 30_000, 64_999, 100_000] {
            let clock = CountingClock::new(100);
            let log = Recorder::default();
            let mut r = Run::new(sparse_config().open_for(open_for), &clock, &log);
            r.trip();
            let calls = 2 * (r.cfg.ring() as u64) / gap;
            let mut rejected_in_a_row = 0u64;
            for k in 1..=calls {
                clock.set(100 + k * gap);
                match r.call() {
                    None => {
                        rejected_in_a_row += 1;
                        // Never two gaps past the open time or probe timeout.
                        assert!(
                            rejected_in_a_row * gap < open_for + gap + 3 * r.cfg.unit(),
                            "gap {gap} open_for {open_for}: {rejected_in_a_row} rejections in a row"
                        );
                    }
                    Some(t) => {
                        rejected_in_a_row = 0;
                        let outcome = if k % 4 == 0 {
                            Outcome::Success
                        } else {
                            Outcome::Failure
                        };
                        r.release(t, outcome);
                    }
                }
            }
            assert!(r.probes > 0);
        }
    }
}

/// Gaps around the ring minus the open time, and around multiples of the
/// ring, from a trip at every phase of a unit: below the ring less one unit
/// the caller probes; past it, what the model says (the information limit).
#[test]
fn gaps_around_the_ring() {
    let unit = 128u64;
    let open_for = 10_000u64;
    let ring = ValidConfig::<W32>::new(sparse_config()).ring();
    let mut past_the_limit_rejected = 0;
    for phase in [0u64, 1, 64, 127] {
        let start = 1_000 * unit + phase;
        let mut gaps = Vec::new();
        for base in [ring - open_for, ring, 2 * ring, ring / 2] {
            let u = unit as i64;
            for delta in [-3 * u, -u, -1, 0, 1, u, 3 * u] {
                gaps.push(base.wrapping_add_signed(delta));
            }
        }
        for gap in gaps {
            let clock = CountingClock::new(start);
            let log = Recorder::default();
            let mut r = Run::new(sparse_config(), &clock, &log);
            r.trip();
            clock.set(start + gap);
            let admitted = r.call().is_some();
            if gap + unit < ring {
                assert!(admitted, "gap {gap} below the ring less a unit: rejected");
            } else if !admitted {
                past_the_limit_rejected += 1;
            }
        }
    }
    // The information limit shows: some callers just past a multiple of the
    // ring are rejected (and the model said so).
    assert!(past_the_limit_rejected > 0);
}

/// A probe timeout of one tick, exact (`horizon(0)`) and in 4-tick units:
/// the probe is lost, and the next caller one tick (or the unit's rounding)
/// later is the new probe; the lost probe's late release is stale.
#[test]
fn probe_timeouts_of_one_tick() {
    for horizon in [0u64, 100_000] {
        let clock = CountingClock::new(7);
        let log = Recorder::default();
        let config = Config::new()
            .failure_threshold(1)
            .open_for(3)
            .probe_timeout(1)
            .horizon(horizon);
        let mut r = Run::new(config, &clock, &log);
        r.trip();
        let mut lost = Vec::new();
        let mut t = 7;
        while lost.len() < 20 {
            t += 1;
            clock.set(t);
            if let Some(p) = r.call() {
                assert!(p.0.is_probe());
                lost.push(p);
            }
        }
        // Past the last one's timeout too: every lost probe is stale.
        clock.set(t + 8);
        for p in lost {
            assert!(!r.release(p, Outcome::Success), "a lost probe is stale");
        }
        assert!(
            r.calls < 20 * 12,
            "a new probe within a few ticks each time"
        );
    }
}

/// The counter driven around its period (1 024 changes on `W32`): a ticket
/// from `Closed` held across exactly a multiple of the period is taken as
/// current (the documented limit); one change more or less, it is stale. The
/// model, whose counter never wraps, says the same.
#[test]
fn counter_around_its_period() {
    for pairs in [511u64, 512, 513, 1_024] {
        let clock = CountingClock::new(0);
        let log = Recorder::default();
        let mut r = Run::new(Config::new().failure_threshold(2).horizon(0), &clock, &log);
        let held = r.call().expect("closed admits");
        // force_open then force_close: two changes per pair.
        for _ in 0..pairs {
            r.b.force_open();
            r.m.force_open();
            r.compare("force_open");
            r.b.force_close();
            r.m.force_close();
            r.compare("force_close");
        }
        let recorded = r.release(held, Outcome::Failure);
        assert_eq!(
            recorded,
            (2 * pairs).is_multiple_of(1 << W32::LAYOUT.counter_bits)
        );
    }
}

/// With backoff the word doubles the open time's unit count,
/// `need(open_for) * 2^(k-1)`, so the rounding of `open_for` to units
/// doubles with it (`docs/spec.md`, "Time"): after 4 trips of
/// `open_for(1_000)` at `s = 7`, the open time set is 8 000 ticks, and a
/// trip at the start of a unit rejects until 9 216 ticks (72 units), past
/// `d + 3 * 2^s` = 8 384 but below `d + 3 * 2^(s+k-1)` = 11 072. The cap
/// itself is converted once and keeps `d + 3 * 2^s`.
#[test]
fn backoff_rounding_doubles() {
    let clock = CountingClock::new(0);
    let log = Recorder::default();
    let config = Config::new()
        .failure_threshold(1)
        .open_for(1_000)
        .exponential_backoff(64_000)
        .probe_timeout(100);
    let mut r = Run::new(config, &clock, &log);
    r.trip();
    for k in 1..=4u64 {
        // Trip k: at a unit boundary.
        let t0 = clock.peek();
        assert_eq!(t0 % 128, 0);
        let d = r.cfg.open_duration(k);
        clock.set(t0 + d - 1);
        assert!(r.call().is_none(), "never early");
        let lapse = r.m.next_lapse(clock.peek()).expect("open");
        assert_eq!(
            lapse - t0,
            (9 * 128) << (k - 1),
            "need(1000) = 9 units, doubled"
        );
        clock.set(lapse - 1);
        assert!(r.call().is_none());
        clock.set(lapse);
        let probe = r.call().expect("probes at the lapse");
        assert!(
            lapse - t0 < d + ((3 * 128) << (k - 1)),
            "the documented bound"
        );
        if k == 4 {
            assert!(
                lapse - t0 > d + 3 * 128,
                "the doubled rounding: {} > {}",
                lapse - t0,
                d + 384
            );
        }
        // Fail the probe at the next unit boundary: trips k + 1.
        clock.set(lapse.next_multiple_of(128) + 128);
        r.release(probe, Outcome::Failure);
    }
}
