//! Deterministic scenarios on a hand-moved clock, each run for both word
//! widths and both places a config can live (inline, or a `static`): the
//! seed's demo, single-probe election, stale rejection, force open/close,
//! backoff, time faults and corrupt words.

use crate::check::Checks;
use crate::fixture::{Fixture, fresh};
use tripword::__verification::load_word;
use tripword::transition::{Event, Verdict, apply, status_at};
use tripword::word::{Snapshot, W32, W64};
use tripword::{Config, ConfigSource, Jitter, Outcome, Release, Status, ValidConfig, Word};

/// The seed's demo: threshold 3, cooldown 100. The scenarios count single
/// ticks, so the horizon is 0: time in whole ticks (`time_shift() == 0`) on
/// both widths (`W32` would otherwise keep 128-tick units).
const SEED: Config = Config::new()
    .failure_threshold(3)
    .open_for(100)
    .probe_timeout(50)
    .horizon(0);
const BACKOFF: Config = Config::new()
    .failure_threshold(1)
    .open_for(100)
    .exponential_backoff(350)
    .probe_timeout(50)
    .horizon(0);

/// [`BACKOFF`] with equal and with full jitter, seed 0x5eed.
const EQUAL: Config = BACKOFF.jitter(Jitter::Equal { seed: 0x5eed });
const FULL: Config = BACKOFF.jitter(Jitter::Full { seed: 0x5eed });

/// Runs a scenario on four fresh breakers: `W32` and `W64`, each with its
/// config inline (`Breaker::from_parts`) and in a `static`
/// (`StaticBreaker::from_parts`).
macro_rules! on_each {
    ($scenario:ident, $c:expr, $config:expr) => {
        $scenario($c, fresh!(W32, $config));
        $scenario($c, fresh!(W32, static $config));
        $scenario($c, fresh!(W64, $config));
        $scenario($c, fresh!(W64, static $config));
    };
    ($scenario:ident, $c:expr, $config:expr, two breakers) => {
        $scenario($c, fresh!(W32, $config), fresh!(W32, $config));
        $scenario($c, fresh!(W32, static $config), fresh!(W32, static $config));
        $scenario($c, fresh!(W64, $config), fresh!(W64, $config));
        $scenario($c, fresh!(W64, static $config), fresh!(W64, static $config));
    };
}

pub fn run(c: &mut Checks) {
    c.suite("seed 000 demo");
    on_each!(seed_000, c, SEED);
    c.suite("single probe (I1, I5)");
    on_each!(single_probe, c, SEED);
    c.suite("stale rejection (I2, I3)");
    on_each!(stale, c, SEED, two breakers);
    c.suite("force open/close");
    on_each!(force, c, SEED);
    c.suite("backoff");
    on_each!(backoff, c, BACKOFF);
    c.suite("jitter");
    on_each!(equal_jitter, c, EQUAL);
    on_each!(full_jitter, c, FULL);
    c.suite("failure rate");
    rate_w32(c);
    rate_w64(c);
    c.suite("time faults (I6)");
    on_each!(time_faults, c, SEED, two breakers);
    c.suite("corrupt words (I8)");
    corrupt::<W32>(c);
    corrupt::<W64>(c);
}

/// A pretend dependency that can be switched up and down and counts calls.
struct Service {
    up: bool,
    calls: u32,
}

/// Runs one call through the breaker: `None` if rejected (the service is not
/// called), else whether it worked.
fn call<W: Word, P: ConfigSource<W>>(f: Fixture<W, P>, service: &mut Service) -> Option<bool> {
    let permit = f.b.permit().ok()?;
    service.calls += 1;
    if service.up {
        permit.success();
    } else {
        permit.failure();
    }
    Some(service.up)
}

/// Trips a closed breaker with `failure_threshold` failures.
fn trip<W: Word, P: ConfigSource<W>>(f: Fixture<W, P>) {
    for _ in 0..f.b.config().failure_threshold() {
        if let Ok(t) = f.b.acquire() {
            let _ = f.b.release(t, Outcome::Failure);
        }
    }
}

fn seed_000<W: Word, P: ConfigSource<W>>(c: &mut Checks, f: Fixture<W, P>) {
    let mut service = Service { up: true, calls: 0 };
    c.eq(
        call(f, &mut service),
        Some(true),
        "closed: the call goes through",
    );

    service.up = false;
    c.eq(call(f, &mut service), Some(false), "1st failure");
    c.eq(call(f, &mut service), Some(false), "2nd failure");
    c.eq(f.b.status(), Status::Closed, "two failures: still closed");
    c.eq(call(f, &mut service), Some(false), "3rd failure");
    c.eq(f.b.status(), Status::Open, "three failures in a row: open");

    for _ in 0..3 {
        c.eq(call(f, &mut service), None, "open: rejected at once");
    }
    c.eq(service.calls, 4, "open: the service is not called");

    f.clock.advance(99);
    c.eq(f.b.status(), Status::Open, "cooldown not over at 99 (I4)");
    f.clock.advance(1);
    c.eq(
        f.b.status(),
        Status::HalfOpen,
        "cooldown over at 100: half-open (I5)",
    );
    c.eq(
        call(f, &mut service),
        Some(false),
        "half-open: the trial runs and fails",
    );
    c.eq(f.b.status(), Status::Open, "failed trial: open again");

    service.up = true;
    f.clock.advance(100);
    c.eq(f.b.status(), Status::HalfOpen, "second cooldown over");
    c.eq(call(f, &mut service), Some(true), "the trial succeeds");
    c.eq(f.b.status(), Status::Closed, "successful trial: closed");
    c.eq(
        call(f, &mut service),
        Some(true),
        "closed again: calls go through",
    );
    c.eq(service.calls, 7, "service calls: 4 + 1 trial + 1 trial + 1");

    use Status::*;
    let want = [
        (Closed, Open),
        (Open, HalfOpen),
        (HalfOpen, Probing),
        (Probing, Open),
        (Open, HalfOpen),
        (HalfOpen, Probing),
        (Probing, Closed),
    ];
    let log = f.log.take();
    c.eq(
        log.len(),
        want.len(),
        "seven transitions, each reported once (I7)",
    );
    for (i, (t, (from, to))) in log.transitions().zip(want).enumerate() {
        c.eq(
            (t.from, t.to, t.counter),
            (from, to, i as u32 + 1),
            "transition and its counter (I10)",
        );
    }
}

fn single_probe<W: Word, P: ConfigSource<W>>(c: &mut Checks, f: Fixture<W, P>) {
    let open_for = f.b.config().open_for();
    let probe_timeout = f.b.config().probe_timeout();

    // Many callers after the open time: exactly one is admitted.
    trip(f);
    f.clock.advance(open_for);
    let probe = f.b.acquire();
    c.check(
        probe.as_ref().is_ok_and(|t| t.is_probe()),
        "first caller is the probe",
    );
    let mut admitted = 0;
    for _ in 0..16 {
        if f.b.acquire().is_ok() {
            admitted += 1;
        }
    }
    c.eq(admitted, 0, "everyone else is rejected while probing (I1)");
    c.eq(f.b.status(), Status::Probing, "status: probing");
    let log = f.log.take();
    let phases: [Option<(Status, Status)>; 3] = {
        let mut it = log.transitions().map(|t| (t.from, t.to));
        [it.next(), it.next(), it.next()]
    };
    c.eq(
        phases,
        [
            Some((Status::Closed, Status::Open)),
            Some((Status::Open, Status::HalfOpen)),
            Some((Status::HalfOpen, Status::Probing)),
        ],
        "the election passes through half-open, both reported",
    );
    if let Ok(t) = probe {
        c.eq(
            f.b.release(t, Outcome::Success),
            Release::Recorded,
            "probe success counts",
        );
    }
    c.eq(f.b.status(), Status::Closed, "probe success: closed");

    // A lost probe blocks for the probe timeout, no longer (I5).
    trip(f);
    f.clock.advance(open_for);
    let lost = f.b.acquire();
    c.check(
        lost.as_ref().is_ok_and(|t| t.is_probe()),
        "probe elected (then lost)",
    );
    f.clock.advance(probe_timeout - 1);
    c.check(
        f.b.acquire().is_err(),
        "probe still running just before its timeout",
    );
    f.clock.advance(1);
    let next = f.b.acquire();
    c.check(
        next.as_ref().is_ok_and(|t| t.is_probe()),
        "probe timeout elapsed: a new probe",
    );
    if let Ok(t) = lost {
        c.eq(
            f.b.release(t, Outcome::Success),
            Release::Stale,
            "the lost probe's late success is stale",
        );
    }
    c.eq(
        f.b.status(),
        Status::Probing,
        "the late result closed nothing",
    );
    if let Ok(t) = next {
        c.eq(
            f.b.release(t, Outcome::Failure),
            Release::Recorded,
            "the new probe's failure counts",
        );
    }
    c.eq(f.b.status(), Status::Open, "failed probe: open");

    // status() reads an elapsed breaker as half-open, storing nothing; the
    // next caller probes.
    f.clock.advance(open_for);
    let word = load_word(f.b);
    let _ = f.log.take();
    c.eq(
        f.b.status(),
        Status::HalfOpen,
        "elapsed: status() reads half-open",
    );
    c.eq(
        load_word(f.b),
        word,
        "status() is a read: it stored nothing",
    );
    c.eq(f.log.take().len(), 0, "and reported nothing");
    let probe = f.b.permit();
    c.check(
        probe.as_ref().is_ok_and(|p| p.is_probe()),
        "half-open: first caller probes",
    );
    c.check(f.b.permit().is_err(), "second caller rejected");
    // An ignored probe says nothing: half-open again, the next caller probes.
    if let Ok(p) = probe {
        c.eq(p.ignore(), Release::Recorded, "ignored probe recorded");
    }
    c.eq(f.b.status(), Status::HalfOpen, "ignored probe: half-open");
    // A probe permit dropped without an outcome counts as a failure.
    let dropped = f.b.permit();
    c.check(dropped.is_ok(), "next caller probes");
    drop(dropped);
    c.eq(
        f.b.status(),
        Status::Open,
        "abandoned probe permit: failure, open",
    );
}

fn stale<W: Word, P: ConfigSource<W>>(c: &mut Checks, f: Fixture<W, P>, other: Fixture<W, P>) {
    let open_for = f.b.config().open_for();
    let probe_timeout = f.b.config().probe_timeout();

    // I3: a success resets the run; the N-th consecutive failure trips once.
    for outcome in [
        Outcome::Failure,
        Outcome::Failure,
        Outcome::Success,
        Outcome::Failure,
        Outcome::Failure,
    ] {
        if let Ok(t) = f.b.acquire() {
            let _ = f.b.release(t, outcome);
        }
    }
    c.eq(
        f.b.status(),
        Status::Closed,
        "F F S F F: the success reset the run (I3)",
    );
    c.eq(f.log.take().len(), 0, "no transition yet");
    trip(f); // first failure trips: two were already counted
    c.eq(
        f.log.take().len(),
        1,
        "third consecutive failure trips, once (I3)",
    );
    f.b.force_close();
    let _ = f.log.take();

    // A slow call admitted while closed fails after the breaker opened.
    let slow = f.b.acquire();
    f.clock.advance(10);
    trip(f);
    let word = load_word(f.b);
    f.clock.advance(open_for / 2);
    if let Ok(t) = slow {
        c.eq(
            f.b.release(t, Outcome::Failure),
            Release::Stale,
            "slow closed-state failure is stale (I2)",
        );
    }
    c.eq(load_word(f.b), word, "the stale failure wrote nothing");
    f.clock.advance(open_for - open_for / 2);
    c.eq(
        f.b.status(),
        Status::HalfOpen,
        "open time not extended by the stale failure",
    );

    // A slow probe whose timeout elapsed can close nothing.
    let probe = f.b.acquire();
    f.clock.advance(probe_timeout);
    if let Ok(t) = probe {
        c.eq(
            f.b.release(t, Outcome::Success),
            Release::Stale,
            "timed-out probe's success is stale",
        );
    }
    c.eq(
        f.b.status(),
        Status::HalfOpen,
        "the breaker is half-open, not closed",
    );
    if let Ok(t) = f.b.acquire() {
        let _ = f.b.release(t, Outcome::Success);
    }
    c.eq(f.b.status(), Status::Closed, "the next probe closes it");

    // Tickets issued before force_open / force_close are ignored.
    let before_open = f.b.acquire();
    f.b.force_open();
    if let Ok(t) = before_open {
        c.eq(
            f.b.release(t, Outcome::Success),
            Release::Stale,
            "pre-force_open ticket is stale",
        );
    }
    f.b.force_close();
    let before_close = f.b.acquire();
    f.b.force_close();
    if let Ok(t) = before_close {
        c.eq(
            f.b.release(t, Outcome::Failure),
            Release::Stale,
            "pre-force_close ticket is stale",
        );
    }

    // A ticket from another breaker changes nothing, even with a matching counter.
    let foreign = other.b.acquire();
    let word = load_word(f.b);
    if let Ok(t) = foreign {
        c.eq(
            f.b.release(t, Outcome::Failure),
            Release::Stale,
            "another breaker's ticket is stale",
        );
    }
    c.eq(load_word(f.b), word, "and wrote nothing");
}

fn force<W: Word, P: ConfigSource<W>>(c: &mut Checks, f: Fixture<W, P>) {
    let open_for = f.b.config().open_for();
    let _ = f.log.take();
    f.b.force_open();
    f.b.force_open();
    c.eq(f.b.status(), Status::Open, "forced open reads as open");
    c.check(f.b.acquire().is_err(), "forced open rejects");
    f.clock.advance(f.b.config().ring() * 3 + open_for);
    c.eq(
        f.b.status(),
        Status::Open,
        "no timer makes a forced-open breaker half-open",
    );
    c.check(f.b.acquire().is_err(), "no probe goes through");
    let log = f.log.take();
    c.eq(log.len(), 1, "a second force_open changes nothing");
    c.check(
        log.transitions().all(|t| t.to == Status::Open && t.forced),
        "the change is to the operator-held open",
    );

    f.b.force_close();
    c.eq(f.b.status(), Status::Closed, "force_close: closed");
    c.check(
        f.b.acquire()
            .is_ok_and(|t| f.b.release(t, Outcome::Ignored) == Release::Recorded),
        "admits again",
    );

    // force_close resets the failure policy.
    for _ in 0..2 {
        if let Ok(t) = f.b.acquire() {
            let _ = f.b.release(t, Outcome::Failure);
        }
    }
    f.b.force_close();
    for _ in 0..2 {
        if let Ok(t) = f.b.acquire() {
            let _ = f.b.release(t, Outcome::Failure);
        }
    }
    c.eq(
        f.b.status(),
        Status::Closed,
        "failures before force_close no longer count",
    );

    // From Probing and from Open.
    trip(f);
    f.clock.advance(open_for);
    let probe = f.b.acquire();
    f.b.force_close();
    c.eq(f.b.status(), Status::Closed, "force_close from probing");
    if let Ok(t) = probe {
        c.eq(
            f.b.release(t, Outcome::Failure),
            Release::Stale,
            "the probe's result is stale after force_close",
        );
    }
    trip(f);
    f.b.force_open();
    f.clock.advance(open_for * 2);
    c.eq(
        f.b.status(),
        Status::Open,
        "force_open from open holds past the open time",
    );
    f.b.force_close();
    c.eq(f.b.status(), Status::Closed, "force_close from forced open");
}

fn backoff<W: Word, P: ConfigSource<W>>(c: &mut Checks, f: Fixture<W, P>) {
    trip(f);
    // Open times after trips 1, 2, 3, 4: 100, doubled, then capped at 350.
    for open_time in [100u64, 200, 350, 350] {
        f.clock.advance(open_time - 1);
        c.eq(f.b.status(), Status::Open, "open until its backoff time");
        f.clock.advance(1);
        c.eq(
            f.b.status(),
            Status::HalfOpen,
            "half-open at its backoff time",
        );
        if let Ok(t) = f.b.acquire() {
            let _ = f.b.release(t, Outcome::Failure);
        }
    }
    f.clock.advance(350);
    if let Ok(t) = f.b.acquire() {
        let _ = f.b.release(t, Outcome::Success);
    }
    c.eq(f.b.status(), Status::Closed, "probe success closes");
    trip(f);
    f.clock.advance(100);
    c.eq(f.b.status(), Status::HalfOpen, "closing reset the backoff");
}

/// The failure-rate policy on a `static` `RateBreaker` (8 buckets of the
/// word's width, 1 024-tick slices, 50 %, at least 20 calls, open 500):
/// nothing trips below the minimum, the window slides, the failure that
/// reaches the rate trips exactly once and later ones are stale, and the
/// probe's success starts an empty window.
macro_rules! rate_scenario {
    ($name:ident, $w:ty) => {
        fn $name(c: &mut Checks) {
            use tripword::Clock;
            use tripword::clock::ManualClock;
            use tripword::rate::{Rate, RateBreaker, ValidRate};
            static CLOCK: ManualClock = ManualClock::new(0);
            static B: RateBreaker<&ManualClock, $w, (), 8> = RateBreaker::from_parts(
                ValidConfig::new(Config::new().open_for(500).probe_timeout(100).horizon(0)),
                ValidRate::new(Rate::new().failure_rate(50).minimum_calls(20).window(8_000)),
                &CLOCK,
                (),
            );
            let call = |outcome| match B.acquire() {
                Ok(t) => Some(B.release(t, outcome)),
                Err(_) => None,
            };
            for _ in 0..15 {
                call(Outcome::Failure);
            }
            c.eq(B.status(), Status::Closed, "rate: below the minimum");
            CLOCK.set(8 * 1024);
            for _ in 0..5 {
                call(Outcome::Failure);
            }
            c.eq(B.status(), Status::Closed, "rate: slice 0 left the window");
            c.eq(B.window_counts(8, 0), (5, 5), "rate: the window's counts");
            for _ in 0..20 {
                call(Outcome::Success);
            }
            let held = B.acquire().ok();
            for _ in 0..14 {
                call(Outcome::Failure);
            }
            c.eq(B.status(), Status::Closed, "rate: 19 of 39, below 50 %");
            c.eq(
                call(Outcome::Failure),
                Some(Release::Recorded),
                "rate: 20 of 40 trips",
            );
            c.eq(B.status(), Status::Open, "rate: open");
            if let Some(t) = held {
                c.eq(
                    B.release(t, Outcome::Failure),
                    Release::Stale,
                    "rate: stale after the trip",
                );
            }
            CLOCK.advance(500);
            c.eq(
                call(Outcome::Success),
                Some(Release::Recorded),
                "rate: the probe closes",
            );
            c.eq(B.status(), Status::Closed, "rate: closed");
            let counter = B.breaker().snapshot().map(|s| s.counter).unwrap_or(0);
            c.eq(
                B.window_counts(CLOCK.now() >> 10, counter),
                (0, 0),
                "rate: a new Closed state's window is empty",
            );
        }
    };
}
rate_scenario!(rate_w32, W32);
rate_scenario!(rate_w64, W64);

/// The open times of [`EQUAL`] after trips 1 to 4 (counters 1, 4, 7, 10):
/// pinned, computed off target from the spec's formula (the 32-bit word's
/// trip field is 4 bits wide, the 64-bit word's 5, so the draws differ).
fn equal_jitter<W: Word, P: ConfigSource<W>>(c: &mut Checks, f: Fixture<W, P>) {
    let times = if W::LAYOUT.word_bits == 32 {
        [55, 169, 206, 313]
    } else {
        [98, 147, 311, 342]
    };
    jittered(c, f, times);
}

/// The open times of [`FULL`] after trips 1 to 4, pinned likewise.
fn full_jitter<W: Word, P: ConfigSource<W>>(c: &mut Checks, f: Fixture<W, P>) {
    let times = if W::LAYOUT.word_bits == 32 {
        [10, 137, 61, 276]
    } else {
        [96, 93, 272, 334]
    };
    jittered(c, f, times);
}

/// Trips, then fails a probe after each open time in `times`: open one
/// tick before it (with a wait of one tick), half-open at it.
fn jittered<W: Word, P: ConfigSource<W>>(c: &mut Checks, f: Fixture<W, P>, times: [u64; 4]) {
    trip(f);
    for open_time in times {
        f.clock.advance(open_time - 1);
        c.eq(f.b.status(), Status::Open, "open until its jittered time");
        c.eq(
            f.b.acquire().err().and_then(|r| r.retry_after()),
            Some(1),
            "the wait lands on the jittered time",
        );
        f.clock.advance(1);
        c.eq(
            f.b.status(),
            Status::HalfOpen,
            "half-open at its jittered time",
        );
        if let Ok(t) = f.b.acquire() {
            let _ = f.b.release(t, Outcome::Failure);
        }
    }
}

fn time_faults<W: Word, P: ConfigSource<W>>(c: &mut Checks, f: Fixture<W, P>, g: Fixture<W, P>) {
    // Backwards: fails towards probing.
    f.clock.set(1_000);
    trip(f);
    f.clock.set(900);
    c.eq(
        f.b.status(),
        Status::HalfOpen,
        "clock went backwards: half-open, not stuck open",
    );
    // Wrapping at 2^64 is exact.
    g.clock.set(u64::MAX - 49);
    trip(g);
    g.clock.advance(99);
    c.eq(
        g.b.status(),
        Status::Open,
        "across the u64 wrap: open at 99",
    );
    g.clock.advance(1);
    c.eq(
        g.b.status(),
        Status::HalfOpen,
        "across the u64 wrap: half-open at 100",
    );
    // A forward jump reads modulo the time field: usually as "elapsed"; a
    // jump that lands just past a whole multiple of the field's range reads
    // as a short time, and costs at most one more open duration (I6 bound).
    trip_from_probe(g);
    g.clock.advance((1 << 40) + 12_345);
    c.eq(g.b.status(), Status::HalfOpen, "jump forward: half-open");
    trip_from_probe(g);
    g.clock.advance((1 << 40) + 50);
    c.eq(
        g.b.status(),
        Status::Open,
        "jump of 2^40 + 50 reads as 50 ticks: still open",
    );
    g.clock.advance(50);
    c.eq(
        g.b.status(),
        Status::HalfOpen,
        "at most one more open duration",
    );
}

/// From half-open or probing, makes the breaker open again.
fn trip_from_probe<W: Word, P: ConfigSource<W>>(f: Fixture<W, P>) {
    if let Ok(t) = f.b.acquire() {
        let _ = f.b.release(t, Outcome::Failure);
    }
}

fn corrupt<W: Word>(c: &mut Checks) {
    let config = ValidConfig::<W>::new(SEED);
    // Tag 5 is OpenUntil: valid with any payload. Tags 6 and 7 are the
    // recovery states (this firmware builds the core with its `recovery`
    // feature): Ramp and Trial, every bit pattern valid. A `ForcedOpen`
    // with bits in its payload is no state: fail open, reported as repaired.
    c.check(
        matches!(
            Snapshot::decode::<W>(W::from_u64(5 | 0x50)),
            Ok(Snapshot {
                state: tripword::word::State::OpenUntil { .. },
                ..
            })
        ),
        "tag 5: OpenUntil",
    );
    c.check(
        matches!(
            Snapshot::decode::<W>(W::from_u64(6 | 0x50)).map(|s| s.state),
            Ok(tripword::word::State::Ramp { .. })
        ),
        "tag 6: Ramp",
    );
    c.check(
        matches!(
            Snapshot::decode::<W>(W::from_u64(7 | 0x50)).map(|s| s.state),
            Ok(tripword::word::State::Trial { .. })
        ),
        "tag 7: Trial",
    );
    for raw in [0x8000_0004u64, 0xC000_0004] {
        c.check(
            Snapshot::decode::<W>(W::from_u64(raw)).is_err(),
            "forced open with a payload: corrupt",
        );
        let step = apply::<W>(&config, W::from_u64(raw), Event::Admit, || 0);
        c.check(
            matches!(step.verdict, Verdict::Admitted { probe: false, .. }),
            "corrupt word: admitted (fail open)",
        );
        c.check(step.repaired.is_some(), "corrupt word: reported");
        c.check(
            matches!(
                Snapshot::decode::<W>(step.word),
                Ok(Snapshot {
                    state: tripword::word::State::Closed { .. },
                    ..
                })
            ),
            "corrupt word: replaced by Closed",
        );
    }
    // Any bit pattern decodes and steps without panicking (a panic fails the run).
    let mut rng = crate::prng::XorShift::new(0xBAD_5EED);
    for _ in 0..2_000 {
        let raw = (u64::from(rng.next()) << 32) | u64::from(rng.next());
        let _ = Snapshot::decode::<W>(W::from_u64(raw));
        let status = status_at::<W>(&config, W::from_u64(raw), || u64::from(rng.next()));
        if Snapshot::decode::<W>(W::from_u64(raw)).is_err() && status != Status::Closed {
            c.check(false, "a corrupt word reads as closed");
        }
        for event in [
            Event::Admit,
            Event::ForceOpen,
            Event::Release {
                counter: rng.next() & 0x3FF,
                outcome: Outcome::Failure,
            },
        ] {
            let step = apply::<W>(&config, W::from_u64(raw), event, || u64::from(rng.next()));
            if Snapshot::decode::<W>(step.word).is_err() {
                c.check(false, "a step always leaves a valid word");
            }
        }
    }
    c.check(
        true,
        "2000 random words x (status + 3 events): no panic, valid results",
    );
}
