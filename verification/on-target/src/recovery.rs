//! The recovery states on a `W32` breaker (the core's feature `recovery`;
//! `docs/spec.md`, "Recovery: several probes and the ramp", I11 and I12),
//! directed scenarios on a hand-moved clock, each with the config inline and
//! in a `static`: three probes with two to close (exactly three admitted,
//! the close and reopen rules, an ignored probe freeing its place, the
//! trial's timeout), and a three-stage ramp (the share each stage admits
//! over every run of consecutive calls, cause `Ramp`, a reopen after
//! failures, the end in a plain `Closed`). The reference model of the
//! random run (`model.rs`) does not know these states; these scenarios state
//! the expected values from the spec instead.

use crate::check::Checks;
use crate::recorder::Recorder;
use tripword::__verification::load_word;
use tripword::clock::ManualClock;
use tripword::word::{Snapshot, State, W32};
use tripword::{
    Breaker, Cause, Clock, Config, ConfigSource, Outcome, Ramp, Release, Status, Ticket,
    ValidConfig,
};

/// The probe timeout of the trial scenarios, in ticks.
const TIMEOUT: u64 = 1_000;
/// A `W32` trial keeps its time `3 * probe_bits` = 6 bits coarser than the
/// config's units (shift 0 here): 64 ticks.
const TRIAL_UNIT: u64 = 64;

/// Trips on one failure, open 100 ticks, whole ticks (`horizon(0)`).
const BASE: Config = Config::new()
    .failure_threshold(1)
    .open_for(100)
    .probe_timeout(TIMEOUT)
    .horizon(0);
/// Three probes, two of which close the breaker; the second failure
/// reopens it.
pub const PROBES: Config = BASE.probes(3).probes_to_close(2);

/// The ramp's stage length in ticks (33 of the ramp's 128-tick units: the
/// three stages fit half its ring, 128 units).
const STEP: u64 = 4_096;
/// 10 %, 40 %, 70 %: in the `W32` word's 1/32 of a call, rounded to the
/// nearest, 3.2 -> 3, 12.8 -> 13, 22.4 -> 22.
const SHARES_BP: [u16; 3] = [1_000, 4_000, 7_000];
const SHARES_32: [u32; 3] = [3, 13, 22];
/// A ramp that reopens on the third failure in a row of its admitted calls
/// (`min(failure_threshold, 3)`).
const RAMP: Config = BASE
    .failure_threshold(3)
    .ramp(Ramp::stages(STEP, &SHARES_BP));
/// Calls asked of each stage, all at one clock reading.
const CALLS: usize = 160;

/// The configs of the `static`-config breakers: in flash.
static PROBES_CONFIG: ValidConfig<W32> = ValidConfig::new(PROBES);
static RAMP_CONFIG: ValidConfig<W32> = ValidConfig::new(RAMP);

/// Out of line, so that its breakers on the stack do not stay in `main`'s
/// frame while the other suites run (the Cortex-M0 has little stack).
#[inline(never)]
pub fn run(c: &mut Checks) {
    c.suite("recovery: 3 probes (I11)");
    on_stack(c, ValidConfig::new(PROBES), probes);
    on_stack(c, &PROBES_CONFIG, probes);
    c.suite("recovery: ramp (I12)");
    on_stack(c, ValidConfig::new(RAMP), ramp);
    on_stack(c, &RAMP_CONFIG, ramp);
}

/// A breaker on a hand-moved clock with a transition log, as in
/// `fixture.rs` but on the stack: the Cortex-M0's 16 KiB of RAM holds the
/// other suites' `static` fixtures and leaves too little stack for four
/// more.
pub struct Fx<'a, P> {
    pub b: &'a Breaker<&'a ManualClock, W32, &'a Recorder, P>,
    pub clock: &'a ManualClock,
    pub log: &'a Recorder,
}

// By hand: a derive would ask `P: Copy`.
impl<P> Clone for Fx<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for Fx<'_, P> {}

/// Runs `scenarios` on a fresh breaker whose config is `config` (inline,
/// or a reference to a `static`).
pub fn on_stack<P: ConfigSource<W32>>(
    c: &mut Checks,
    config: P,
    scenarios: fn(&mut Checks, Fx<'_, P>),
) {
    let clock = ManualClock::new(0);
    let log = Recorder::new();
    let b = Breaker::from_parts(config, &clock, &log);
    scenarios(
        c,
        Fx {
            b: &b,
            clock: &clock,
            log: &log,
        },
    );
}

/// The trial scenarios, one after another on one breaker (a `force_close`
/// between them).
fn probes<P: ConfigSource<W32>>(c: &mut Checks, f: Fx<'_, P>) {
    exactly_three(c, f);
    reset(f);
    close_and_reopen(c, f);
    reset(f);
    ignored_frees_a_place(c, f);
    reset(f);
    trial_timeout(c, f);
}

fn ramp<P: ConfigSource<W32>>(c: &mut Checks, f: Fx<'_, P>) {
    ramp_shares(c, f);
    reset(f);
    ramp_reopens(c, f);
}

/// Back to `Closed` with the trips reset, the log emptied.
fn reset<P: ConfigSource<W32>>(f: Fx<'_, P>) {
    f.b.force_close();
    let _ = f.log.take();
}

/// Trips the breaker with `failure_threshold` failures and waits out the
/// open time.
fn half_open<P: ConfigSource<W32>>(c: &mut Checks, f: Fx<'_, P>) {
    for _ in 0..f.b.config().failure_threshold() {
        if let Ok(t) = f.b.acquire() {
            f.b.release(t, Outcome::Failure);
        }
    }
    c.eq(
        f.b.status(),
        Status::Open,
        "failure_threshold failures trip",
    );
    f.clock.advance(100);
    c.eq(f.b.status(), Status::HalfOpen, "open time over: half-open");
}

/// Three probe tickets of one trial, if all three were admitted.
fn three_probes<P: ConfigSource<W32>>(c: &mut Checks, f: Fx<'_, P>) -> Option<[Ticket; 3]> {
    let a = f.b.acquire().ok()?;
    let b = f.b.acquire().ok()?;
    let d = f.b.acquire().ok()?;
    c.check(
        a.is_probe() && b.is_probe() && d.is_probe(),
        "all three are probes",
    );
    c.check(
        a.counter() == b.counter() && b.counter() == d.counter(),
        "the probes share the trial's counter",
    );
    Some([a, b, d])
}

fn trial<P: ConfigSource<W32>>(f: Fx<'_, P>) -> Option<(u32, u32, u32)> {
    match Snapshot::decode::<W32>(load_word(f.b)).ok()?.state {
        State::Trial {
            running,
            passed,
            failed,
            ..
        } => Some((running, passed, failed)),
        _ => None,
    }
}

fn exactly_three<P: ConfigSource<W32>>(c: &mut Checks, f: Fx<'_, P>) {
    half_open(c, f);
    let probes = three_probes(c, f);
    c.check(probes.is_some(), "three callers: three probes admitted");
    let mut rejected = 0;
    for _ in 0..8 {
        match f.b.acquire() {
            Ok(t) => {
                f.b.release(t, Outcome::Ignored);
            }
            Err(r) => {
                rejected += 1;
                c.eq(r.cause(), Cause::Probing, "a full trial rejects as probing");
                let wait = r.retry_after().unwrap_or(0);
                c.check(
                    (TIMEOUT..TIMEOUT + 3 * TRIAL_UNIT).contains(&wait),
                    "the wait: the timeout, less than 3 trial units late",
                );
            }
        }
    }
    c.eq(
        rejected,
        8,
        "exactly three: the fourth to eleventh are rejected",
    );
    c.eq(f.b.status(), Status::Probing, "full trial: probing");
    c.eq(trial(f), Some((3, 0, 0)), "the word: three running");
    let log = f.log.take();
    let mut it = log.transitions().map(|t| (t.from, t.to));
    c.eq(
        [it.next(), it.next(), it.next(), it.next()],
        [
            Some((Status::Closed, Status::Open)),
            Some((Status::Open, Status::HalfOpen)),
            Some((Status::HalfOpen, Status::Probing)),
            None,
        ],
        "one transition starts the trial; the other probes make none",
    );
}

fn close_and_reopen<P: ConfigSource<W32>>(c: &mut Checks, f: Fx<'_, P>) {
    // One failure is allowed (3 probes, 2 to close); the 2nd success closes.
    half_open(c, f);
    if let Some([a, b, d]) = three_probes(c, f) {
        c.eq(
            f.b.release(a, Outcome::Failure),
            Release::Recorded,
            "a failure",
        );
        c.eq(trial(f), Some((2, 0, 1)), "one failed, the trial goes on");
        c.eq(
            f.b.release(b, Outcome::Success),
            Release::Recorded,
            "a success",
        );
        c.eq(trial(f), Some((1, 1, 1)), "one passed");
        c.eq(f.b.status(), Status::Probing, "no room: still probing");
        c.eq(
            f.b.release(d, Outcome::Success),
            Release::Recorded,
            "2nd success",
        );
        c.eq(f.b.status(), Status::Closed, "the 2nd success closes");
    } else {
        c.check(false, "three probes admitted");
    }
    let log = f.log.take();
    c.eq(
        log.transitions().last().map(|t| (t.from, t.to)),
        Some((Status::Probing, Status::Closed)),
        "reported as probing -> closed",
    );

    // The 2nd failure (n - k + 1) reopens; the last probe is then stale.
    half_open(c, f);
    if let Some([a, b, d]) = three_probes(c, f) {
        f.b.release(a, Outcome::Success);
        f.b.release(b, Outcome::Failure);
        c.eq(f.b.status(), Status::Probing, "one failure: still a trial");
        c.eq(
            f.b.release(d, Outcome::Failure),
            Release::Recorded,
            "2nd failure",
        );
        c.eq(f.b.status(), Status::Open, "the 2nd failure reopens");
        c.check(
            matches!(
                Snapshot::decode::<W32>(load_word(f.b)).map(|s| s.state),
                Ok(State::Open { trips: 2, .. })
            ),
            "reopened with the trips moved on",
        );
        let wait = f.b.acquire().err().and_then(|r| r.retry_after());
        c.eq(wait, Some(100), "open again for the open time");
    } else {
        c.check(false, "three probes admitted");
    }
    let _ = f.log.take();
}

fn ignored_frees_a_place<P: ConfigSource<W32>>(c: &mut Checks, f: Fx<'_, P>) {
    half_open(c, f);
    let Some([a, b, d]) = three_probes(c, f) else {
        c.check(false, "three probes admitted");
        return;
    };
    c.check(f.b.acquire().is_err(), "full: the fourth is rejected");
    c.eq(
        f.b.release(a, Outcome::Ignored),
        Release::Recorded,
        "ignored",
    );
    c.eq(trial(f), Some((2, 0, 0)), "an ignored probe counts nothing");
    c.eq(f.b.status(), Status::HalfOpen, "a place is free: half-open");
    let e = f.b.acquire();
    c.check(
        e.as_ref().is_ok_and(Ticket::is_probe),
        "the free place goes to the next caller, as a probe",
    );
    c.check(f.b.acquire().is_err(), "full again");
    f.b.release(b, Outcome::Success);
    if let Ok(e) = e {
        f.b.release(e, Outcome::Success);
    }
    c.eq(f.b.status(), Status::Closed, "two successes close");
    c.eq(
        f.b.release(d, Outcome::Success),
        Release::Stale,
        "the third probe, after the close, is stale",
    );
    let _ = f.log.take();
}

fn trial_timeout<P: ConfigSource<W32>>(c: &mut Checks, f: Fx<'_, P>) {
    half_open(c, f);
    let start = f.clock.now();
    let Some([a, b, _lost]) = three_probes(c, f) else {
        c.check(false, "three probes admitted");
        return;
    };
    f.b.release(a, Outcome::Success);
    let _ = f.log.take();
    let wait =
        f.b.acquire()
            .err()
            .and_then(|r| r.retry_after())
            .unwrap_or(0);
    c.check(wait >= TIMEOUT, "never before the probe timeout");
    f.clock.advance(wait - 1);
    c.check(f.b.acquire().is_err(), "rejected a tick before its wait");
    c.eq(f.b.status(), Status::Probing, "still probing then");
    f.clock.advance(1);
    let took = f.clock.now() - start;
    c.check(
        (TIMEOUT..TIMEOUT + 3 * TRIAL_UNIT).contains(&took),
        "the trial lasts its timeout, less than 3 trial units more",
    );
    c.eq(f.b.status(), Status::HalfOpen, "timed out: half-open");
    let fresh = f.b.acquire();
    c.check(
        fresh.as_ref().is_ok_and(Ticket::is_probe),
        "the next caller starts a new trial",
    );
    let log = f.log.take();
    let mut it = log.transitions().map(|t| (t.from, t.to));
    c.eq(
        [it.next(), it.next(), it.next()],
        [
            Some((Status::Probing, Status::HalfOpen)),
            Some((Status::HalfOpen, Status::Probing)),
            None,
        ],
        "given up, then a new trial: two transitions",
    );
    c.eq(trial(f), Some((1, 0, 0)), "the new trial: one running");
    c.eq(
        f.b.release(b, Outcome::Success),
        Release::Stale,
        "a probe of the given-up trial is stale",
    );
    c.eq(
        trial(f),
        Some((1, 0, 0)),
        "the stale release changed nothing",
    );
    let _ = f.log.take();
}

/// A successful probe: the ramp starts.
fn to_ramp<P: ConfigSource<W32>>(c: &mut Checks, f: Fx<'_, P>) {
    half_open(c, f);
    if let Ok(t) = f.b.acquire() {
        c.eq(f.b.release(t, Outcome::Success), Release::Recorded, "probe");
    }
    c.eq(
        f.b.status(),
        Status::Recovering,
        "the probe's success: recovering",
    );
}

fn ramp_shares<P: ConfigSource<W32>>(c: &mut Checks, f: Fx<'_, P>) {
    to_ramp(c, f);
    let mut held: Option<Ticket> = None;
    for (stage, &p) in SHARES_32.iter().enumerate() {
        let mut admitted = [false; CALLS];
        let mut next_stage = 0;
        let mut causes_ok = true;
        for slot in admitted.iter_mut() {
            match f.b.acquire() {
                Ok(t) => {
                    *slot = true;
                    if let Some(old) = held.replace(t) {
                        f.b.release(old, Outcome::Success);
                    }
                }
                Err(r) => {
                    causes_ok &= r.cause() == Cause::Ramp;
                    next_stage = r.retry_after().unwrap_or(0);
                }
            }
        }
        c.check(causes_ok, "the ramp rejects with cause Ramp");
        let total = admitted.iter().filter(|&&a| a).count() as u32;
        let floor = CALLS as u32 * p / 32;
        c.check(
            (floor..=floor + 1).contains(&total),
            "the stage admits floor(c p) or one more",
        );
        // Every run of consecutive calls, of every length.
        let mut windows_ok = true;
        for len in 1..=CALLS {
            let mut sum: u32 = admitted[..len].iter().map(|&a| a as u32).sum();
            for start in 0..=CALLS - len {
                if start > 0 {
                    sum = sum + admitted[start + len - 1] as u32 - admitted[start - 1] as u32;
                }
                let floor = len as u32 * p / 32;
                windows_ok &= (floor..=floor + 1).contains(&sum);
            }
        }
        c.check(windows_ok, "every run of c calls: floor(c p) or one more");
        c.eq(
            f.b.status(),
            Status::Recovering,
            "recovering during a stage",
        );
        c.check(
            next_stage > 0 && next_stage <= STEP + 3 * 128,
            "a rejection waits until the next stage",
        );
        if stage + 1 == SHARES_32.len() {
            // A tick before the end: still recovering.
            f.clock.advance(next_stage - 1);
            c.eq(f.b.status(), Status::Recovering, "a tick before the end");
            f.clock.advance(1);
        } else {
            f.clock.advance(next_stage);
        }
    }
    // Past the last stage: the next caller closes it and is admitted.
    let _ = f.log.take();
    c.eq(f.b.status(), Status::Closed, "after the last stage: closed");
    let t = f.b.acquire();
    c.check(
        t.as_ref().is_ok_and(|t| !t.is_probe()),
        "the ramp's end admits",
    );
    c.eq(
        Snapshot::decode::<W32>(load_word(f.b)).map(|s| s.state),
        Ok(State::Closed { failures: 0 }),
        "the word is a plain Closed",
    );
    let log = f.log.take();
    c.eq(
        log.transitions().map(|t| (t.from, t.to)).last(),
        Some((Status::Recovering, Status::Closed)),
        "reported as recovering -> closed",
    );
    if let Some(old) = held {
        c.eq(
            f.b.release(old, Outcome::Failure),
            Release::Stale,
            "a call admitted in the ramp, released after its end, is stale",
        );
    }
    if let Ok(t) = t {
        c.eq(
            f.b.release(t, Outcome::Success),
            Release::Recorded,
            "closed",
        );
    }
}

fn ramp_reopens<P: ConfigSource<W32>>(c: &mut Checks, f: Fx<'_, P>) {
    to_ramp(c, f);
    let _ = f.log.take();
    // Two failures, a success (the run starts again), three failures.
    let outcomes = [
        Outcome::Failure,
        Outcome::Failure,
        Outcome::Success,
        Outcome::Failure,
        Outcome::Failure,
    ];
    for outcome in outcomes {
        let mut tries = 0;
        loop {
            tries += 1;
            if let Ok(t) = f.b.acquire() {
                f.b.release(t, outcome);
                break;
            }
            if tries > 32 {
                c.check(false, "the ramp admits within 32 calls at 10 %");
                return;
            }
        }
    }
    c.eq(
        f.b.status(),
        Status::Recovering,
        "two failures in a row: still",
    );
    for _ in 0..32 {
        if let Ok(t) = f.b.acquire() {
            f.b.release(t, Outcome::Failure);
            break;
        }
    }
    c.eq(
        f.b.status(),
        Status::Open,
        "the third failure in a row reopens",
    );
    c.check(
        matches!(
            Snapshot::decode::<W32>(load_word(f.b)).map(|s| s.state),
            Ok(State::Open { trips: 2, .. })
        ),
        "reopened with the trips moved on",
    );
    let log = f.log.take();
    c.eq(
        log.transitions().map(|t| (t.from, t.to)).last(),
        Some((Status::Recovering, Status::Open)),
        "reported as recovering -> open",
    );
}
