//! loom models of the atomic [`Breaker`]: every interleaving (and every
//! value a load may legally read under the C11 memory model) of 2–4 threads
//! racing on one breaker, checked against SPEC.md's invariants.
//!
//! Built only with `--cfg tripword_loom` (the core's own cfg, which swaps
//! its atomics for loom's), in release, in its own target dir:
//!
//! ```text
//! RUSTFLAGS="--cfg tripword_loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p tripword-verification --test loom --release -- --nocapture
//! ```
//!
//! Two-thread models run unbounded; models with three or more threads set the
//! preemption bound named in their doc. The models include a hinted failure
//! racing a plain one on the last failure before the trip, and
//! `force_open_for` racing a probe election (one caller, and two), and the
//! probe election of a breaker in shadow mode (`kit::Shadow`), its switch
//! flipped meanwhile. `LOOM_MAX_PREEMPTIONS`, when set,
//! bounds every model (the two-thread ones too); `TRIPWORD_LOOM_UNBOUNDED=1`
//! lifts every bound (minutes, not seconds: see docs/verification-concurrency.md, "loom").
//! Each model prints how many executions loom explored and how long it took.
//! Several probes and the ramp (I11, I12) have models of their own in
//! `loom/recovery.rs`: `n` probes raced by 3 and 4 callers, ramp
//! admissions raced at one stage, a ramp ticket's release racing the
//! ramp's end.
//!
//! Every model ends with [`history`], which checks SPEC I7 and I10 on the
//! whole run: each state change reported exactly once, counters consecutive,
//! each report's `from` the previous report's `to`, and the last report
//! matching the word. The per-model assertions come on top of that.
//!
//! The `async_driver_*` models run `cell::update_async` instead of a
//! `Breaker`: each model thread drives it to completion with
//! `loom::future::block_on` on an async cell over a loom atomic (futures
//! ready at once), and the models check single probe election (I1), exact
//! trips (I3) and that each change is reported once, by the caller whose
//! exchange made it (I7), from the transitions each caller's `on_swap` got.
#![cfg(tripword_loom)]

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering as StdOrdering};
use std::time::Instant;

use loom::sync::Arc;
use loom::sync::atomic::{AtomicU64, Ordering};
use loom::thread::{self, JoinHandle};

use tripword::cell::{AsyncCell, CasError, update_async};
use tripword::clock::ManualClock;
use tripword::kit::{CircuitBreaker, Shadow, ShadowTicket};
use tripword::rate::{Rate, RateBreaker};
use tripword::transition::{self, Event, Verdict};
use tripword::word::{Snapshot, State};
use tripword::{
    Breaker, Cause, Config, Observer, Outcome, Release, Status, Ticket, Transition, ValidConfig,
    W32, W64, Word,
};

#[path = "loom/recovery.rs"]
mod recovery;

loom::thread_local! {
    /// Which model thread is running: 0 for the model's main thread, 1.. for
    /// the threads it spawns. Reports are stamped with it (SPEC I7: reported
    /// by the caller whose compare-and-swap made the change).
    static WHO: Cell<u64> = Cell::new(0);
}

/// Transition counters a model may reach (the models make far fewer changes).
const SLOTS: usize = 16;

/// An [`Observer`] made of loom atomics: one slot per state counter. A report
/// adds `1 | from << 8 | to << 16 | who << 24` to the slot of its counter, so
/// the low byte counts how often that counter was reported and, when it was
/// reported once, the rest says what and by whom.
struct Recorder {
    slots: Vec<AtomicU64>,
    corrupt: AtomicU64,
}

impl Recorder {
    fn new() -> Self {
        Recorder {
            slots: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
            corrupt: AtomicU64::new(0),
        }
    }
}

/// A state's name: a status, with the operator-held open told apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Closed,
    Open,
    HalfOpen,
    Probing,
    ForcedOpen,
    Recovering,
}

const PHASES: [Phase; 6] = [
    Phase::Closed,
    Phase::Open,
    Phase::HalfOpen,
    Phase::Probing,
    Phase::ForcedOpen,
    Phase::Recovering,
];

fn code(phase: Phase) -> u64 {
    PHASES
        .iter()
        .position(|p| *p == phase)
        .map_or(0xff, |i| i as u64)
}

fn phase(code: u64) -> Phase {
    PHASES[code as usize]
}

fn of_status(status: Status) -> Phase {
    match status {
        Status::Closed => Phase::Closed,
        Status::Open => Phase::Open,
        Status::HalfOpen => Phase::HalfOpen,
        Status::Probing => Phase::Probing,
        Status::Recovering => Phase::Recovering,
    }
}

/// The states a transition left and entered. `forced` says one of them is
/// the operator-held open: the state left when the breaker closes (only
/// `force_close` leaves it), else the state entered.
fn phases(t: &Transition) -> (Phase, Phase) {
    let (from, to) = (of_status(t.from), of_status(t.to));
    match (t.forced, to) {
        (true, Phase::Closed) => (Phase::ForcedOpen, to),
        (true, _) => (from, Phase::ForcedOpen),
        (false, _) => (from, to),
    }
}

/// The name of a decoded state.
fn phase_of(state: &State) -> Phase {
    if state.is_forced_open() {
        Phase::ForcedOpen
    } else {
        of_status(state.status())
    }
}

impl Observer for Recorder {
    fn on_transition(&self, t: Transition) {
        let who = WHO.with(Cell::get);
        let slot = self
            .slots
            .get(t.counter as usize)
            .expect("a model makes fewer than 16 state changes");
        let (from, to) = phases(&t);
        slot.fetch_add(
            1 | code(from) << 8 | code(to) << 16 | who << 24,
            Ordering::Relaxed,
        );
    }

    fn on_corrupt_word(&self, _raw: u64, _counter: u32) {
        self.corrupt.fetch_add(1, Ordering::Relaxed);
    }
}

/// One reported state change, and the model thread that reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Report {
    from: Phase,
    to: Phase,
    counter: u32,
    by: u64,
}

type Shared<W> = Arc<Breaker<ManualClock, W, Recorder>>;

fn breaker<W: Word>(config: Config) -> Shared<W> {
    Arc::new(Breaker::from_parts(
        config
            .check::<W>()
            .expect("the models' configs are in range"),
        ManualClock::new(0),
        Recorder::new(),
    ))
}

/// The models count single ticks: `horizon(0)` keeps `W32` in whole ticks
/// (time shift 0), as `W64` is at its default horizon.
fn config(failure_threshold: u32, open_for: u64, probe_timeout: u64) -> Config {
    Config::new()
        .failure_threshold(failure_threshold)
        .open_for(open_for)
        .probe_timeout(probe_timeout)
        .horizon(0)
}

fn state<W: Word>(b: &Breaker<ManualClock, W, Recorder>) -> State {
    b.snapshot().expect("the word stays valid").state
}

/// Spawns model thread number `who`.
fn spawn<T, F>(who: u64, f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    thread::spawn(move || {
        WHO.with(|w| w.set(who));
        f()
    })
}

fn join<T>(h: JoinHandle<T>) -> T {
    h.join().expect("model thread panicked")
}

/// Reads the observer once all threads are joined and checks SPEC I7/I10 on
/// the whole run: each counter reported exactly once, counters consecutive
/// from 1, each change starting where the previous one ended (from the
/// initial `Closed`), the last one matching the word, no corrupt word.
fn history<W: Word>(b: &Breaker<ManualClock, W, Recorder>) -> Vec<Report> {
    let rec = b.observer();
    assert_eq!(
        rec.corrupt.load(Ordering::Relaxed),
        0,
        "I8: no corrupt word"
    );
    let mut reports = Vec::new();
    for (counter, slot) in rec.slots.iter().enumerate() {
        let v = slot.load(Ordering::Relaxed);
        if v == 0 {
            continue;
        }
        assert_eq!(
            v & 0xff,
            1,
            "I7: counter {counter} reported {} times",
            v & 0xff
        );
        reports.push(Report {
            from: phase(v >> 8 & 0xff),
            to: phase(v >> 16 & 0xff),
            counter: counter as u32,
            by: v >> 24,
        });
    }
    let mut at = Phase::Closed;
    for (i, r) in reports.iter().enumerate() {
        assert_eq!(
            r.counter as usize,
            i + 1,
            "I10: counters consecutive: {reports:?}"
        );
        assert_eq!(
            r.from, at,
            "I7: every change reported, in order: {reports:?}"
        );
        at = r.to;
    }
    let snap = b.snapshot().expect("the word stays valid");
    assert_eq!(
        snap.counter as usize,
        reports.len(),
        "I7: one report per change"
    );
    assert_eq!(
        phase_of(&snap.state),
        at,
        "I7: the last report is the word's state"
    );
    reports
}

/// Runs one model, printing how many executions loom explored.
fn check<F>(name: &str, preemption_bound: Option<usize>, model: F)
where
    F: Fn() + Sync + Send + 'static,
{
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = if std::env::var("TRIPWORD_LOOM_UNBOUNDED").is_ok() {
            None
        } else {
            preemption_bound
        };
    }
    let bound = builder.preemption_bound;
    let runs = std::sync::Arc::new(StdAtomicUsize::new(0));
    let counted = runs.clone();
    let start = Instant::now();
    builder.check(move || {
        counted.fetch_add(1, StdOrdering::Relaxed);
        model()
    });
    println!(
        "loom {name}: {} executions, preemption bound {}, {:.2?}",
        runs.load(StdOrdering::Relaxed),
        bound.map_or("none".to_string(), |b| b.to_string()),
        start.elapsed()
    );
}

/// A breaker (threshold 1, open 10, probe timeout 100) tripped at time 0
/// whose open time has just elapsed.
fn elapsed_open<W: Word>() -> Shared<W> {
    let b = breaker::<W>(config(1, 10, 100));
    trip(&b);
    b.clock().advance(10);
    b
}

fn trip<W: Word>(b: &Shared<W>) {
    let t = b.acquire().expect("closed admits");
    assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
    assert!(matches!(state(b), State::Open { .. }));
}

// ---------------------------------------------------------------------------
// I1: single probe.

/// `callers` threads `acquire` on an elapsed open breaker while `readers`
/// threads call `status` (a read: it stores nothing). Asserts: exactly one
/// caller admitted, as the probe; the lazy `Open -> HalfOpen` and the
/// election (`HalfOpen -> Probing`) both reported once, by that caller, the
/// election with the ticket's counter; status readers never see `Open` or
/// `Closed`; the elected ticket is current (its success closes the
/// breaker).
fn single_probe<W: Word>(callers: u64, readers: u64) {
    let b = elapsed_open::<W>();
    let acquirers: Vec<_> = (1..=callers)
        .map(|who| {
            let b = b.clone();
            spawn(who, move || b.acquire().ok())
        })
        .collect();
    let statuses: Vec<_> = (1..=readers)
        .map(|i| {
            let b = b.clone();
            spawn(callers + i, move || b.status())
        })
        .collect();
    let mut admitted: Vec<(u64, Ticket)> = Vec::new();
    for (who, h) in (1..).zip(acquirers) {
        if let Some(t) = join(h) {
            admitted.push((who, t));
        }
    }
    for h in statuses {
        let s = join(h);
        assert!(
            matches!(s, Status::HalfOpen | Status::Probing),
            "status read {s:?}"
        );
    }
    assert_eq!(admitted.len(), 1, "I1: exactly one caller admitted");
    let (winner, ticket) = admitted.pop().expect("one admitted");
    assert!(ticket.is_probe(), "I1: the admitted caller is the probe");
    let h = history(&b);
    assert_eq!(
        h.len(),
        3,
        "Closed->Open, Open->HalfOpen, HalfOpen->Probing: {h:?}"
    );
    assert_eq!(
        (h[1].from, h[1].to, h[1].by),
        (Phase::Open, Phase::HalfOpen, winner),
        "the lapse is made by the winner's CAS, never by a status read"
    );
    let election = h[2];
    assert_eq!(election.to, Phase::Probing);
    assert_eq!(
        election.by, winner,
        "I7: reported by the caller whose CAS made it"
    );
    assert_eq!(election.counter, ticket.counter());
    assert!(matches!(state(&b), State::Probing { .. }));
    assert_eq!(b.release(ticket, Outcome::Success), Release::Recorded);
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn i1_single_probe_2_callers_w64() {
    check("i1_single_probe_2_callers_w64", None, || {
        single_probe::<W64>(2, 0)
    });
}

#[test]
fn i1_single_probe_2_callers_w32() {
    check("i1_single_probe_2_callers_w32", None, || {
        single_probe::<W32>(2, 0)
    });
}

/// Three callers; preemption bound 3.
#[test]
fn i1_single_probe_3_callers() {
    check("i1_single_probe_3_callers", Some(3), || {
        single_probe::<W64>(3, 0)
    });
}

/// Three callers and a status reader (four threads); preemption bound 2.
#[test]
fn i1_single_probe_3_callers_and_status() {
    check("i1_single_probe_3_callers_and_status", Some(2), || {
        single_probe::<W64>(3, 1)
    });
}

/// I1 in shadow mode: `callers` threads `acquire` on an elapsed open
/// breaker wrapped in [`Shadow`] (shadow mode on), and with `toggle` one
/// more thread turns shadow mode off meanwhile. Asserts: exactly one real
/// admission, the probe; every other caller shadow-admitted on a
/// `Probing` rejection (or, once the switch is off, rejected for it); the
/// same three reported changes as without the wrapper (the lapse and the
/// election, by the winner); a shadow ticket's release changes nothing;
/// the probe's success closes the breaker.
fn shadow_single_probe(callers: u64, toggle: bool) {
    let inner = Breaker::from_parts(
        config(1, 10, 100).check::<W64>().expect("in range"),
        ManualClock::new(0),
        Recorder::new(),
    );
    let b = Arc::new(Shadow::new(inner));
    let t = b.inner().acquire().expect("closed admits");
    assert_eq!(b.inner().release(t, Outcome::Failure), Release::Recorded);
    b.inner().clock().advance(10);
    let acquirers: Vec<_> = (1..=callers)
        .map(|who| {
            let b = b.clone();
            spawn(who, move || b.acquire())
        })
        .collect();
    let switch = toggle.then(|| {
        let b = b.clone();
        spawn(callers + 1, move || b.set_shadow(false))
    });
    let mut real: Vec<(u64, Ticket)> = Vec::new();
    let mut shadowed = Vec::new();
    for (who, h) in (1..).zip(acquirers) {
        match join(h) {
            Ok(ShadowTicket::Real(t)) => real.push((who, t)),
            Ok(ShadowTicket::Shadow(r)) => {
                assert_eq!(r.cause(), Cause::Probing);
                shadowed.push(ShadowTicket::<Ticket>::Shadow(r));
            }
            Err(r) => {
                assert!(toggle, "rejected while shadowing");
                assert_eq!(r.cause(), Cause::Probing);
            }
        }
    }
    if let Some(h) = switch {
        join(h);
    }
    assert_eq!(real.len(), 1, "I1: exactly one real admission");
    let (winner, ticket) = real.pop().expect("one admitted");
    assert!(ticket.is_probe(), "I1: the real admission is the probe");
    let h = history(b.inner());
    assert_eq!(
        h.len(),
        3,
        "Closed->Open, Open->HalfOpen, HalfOpen->Probing: {h:?}"
    );
    assert_eq!((h[1].by, h[2].by), (winner, winner));
    assert_eq!(h[2].counter, ticket.counter());
    for t in shadowed {
        assert_eq!(b.release(t, Outcome::Failure), Release::Stale);
    }
    assert!(matches!(state(b.inner()), State::Probing { .. }));
    assert_eq!(
        b.release(ShadowTicket::Real(ticket), Outcome::Success),
        Release::Recorded
    );
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn i1_shadow_single_probe_2_callers() {
    check("i1_shadow_single_probe_2_callers", None, || {
        shadow_single_probe(2, false)
    });
}

/// Two callers and a thread turning shadow mode off; preemption bound 3.
#[test]
fn i1_shadow_single_probe_2_callers_and_switch() {
    check(
        "i1_shadow_single_probe_2_callers_and_switch",
        Some(3),
        || shadow_single_probe(2, true),
    );
}

// ---------------------------------------------------------------------------
// I3 + I7: exact trip.

/// `threads` threads each acquire and, if admitted, release a failure, on a
/// breaker with `failure_threshold(threshold)`, `threshold <= threads`.
/// Asserts: exactly one `Closed -> Open`, reported by a thread whose own
/// failure was recorded; exactly `threshold` failures recorded (any failure
/// past the trip is rejected at admission or stale); the word ends `Open`
/// with one trip.
fn exact_trip<W: Word>(threads: u64, threshold: u32) {
    let b = breaker::<W>(config(threshold, 10, 100));
    let handles: Vec<_> = (1..=threads)
        .map(|who| {
            let b = b.clone();
            spawn(who, move || {
                b.acquire().ok().map(|t| b.release(t, Outcome::Failure))
            })
        })
        .collect();
    let results: Vec<Option<Release>> = handles.into_iter().map(join).collect();
    let recorded = results
        .iter()
        .filter(|r| **r == Some(Release::Recorded))
        .count();
    assert_eq!(
        recorded, threshold as usize,
        "I3: failures counted: {results:?}"
    );
    let h = history(&b);
    assert_eq!(h.len(), 1, "I3: exactly one trip: {h:?}");
    assert_eq!((h[0].from, h[0].to), (Phase::Closed, Phase::Open));
    let by = h[0].by as usize;
    assert!(
        by >= 1 && results[by - 1] == Some(Release::Recorded),
        "I7: the trip is reported by the thread whose failure made it"
    );
    assert!(matches!(state(&b), State::Open { trips: 1, .. }));
}

#[test]
fn i3_i7_exact_trip_2_threads_w64() {
    check("i3_i7_exact_trip_2_threads_w64", None, || {
        exact_trip::<W64>(2, 2)
    });
}

#[test]
fn i3_i7_exact_trip_2_threads_w32() {
    check("i3_i7_exact_trip_2_threads_w32", None, || {
        exact_trip::<W32>(2, 2)
    });
}

/// Three failing threads, threshold 2: the third failure is rejected or
/// stale. Preemption bound 3.
#[test]
fn i3_i7_exact_trip_3_threads_threshold_2() {
    check("i3_i7_exact_trip_3_threads_threshold_2", Some(3), || {
        exact_trip::<W64>(3, 2)
    });
}

/// Two failures and a success race, threshold 2. Asserts: the word ends
/// either `Closed{failures: 1}` (the success fell between the failures and
/// reset the run) or `Open` with one trip (the failures were consecutive);
/// never a lost update (`Closed{0}`, or `Closed{1}` with the success outside
/// the failures). Preemption bound 3.
#[test]
fn i3_success_resets_run_3_threads() {
    check("i3_success_resets_run_3_threads", Some(3), || {
        let b = breaker::<W64>(config(2, 10, 100));
        let outcomes = [Outcome::Failure, Outcome::Failure, Outcome::Success];
        let handles: Vec<_> = (1..)
            .zip(outcomes)
            .map(|(who, outcome)| {
                let b = b.clone();
                spawn(who, move || b.acquire().ok().map(|t| b.release(t, outcome)))
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(join).collect();
        let h = history(&b);
        match state(&b) {
            State::Closed { failures: 1 } => {
                assert!(h.is_empty());
                assert_eq!(results, vec![Some(Release::Recorded); 3]);
            }
            State::Open { trips: 1, .. } => {
                assert_eq!(h.len(), 1, "I3: exactly one trip");
                assert_eq!(results[..2], [Some(Release::Recorded); 2]);
            }
            other => panic!("I3: lost update, ended {other:?} after {results:?}"),
        }
    });
}

// ---------------------------------------------------------------------------
// I2: stale rejection, racing the transition that makes the ticket stale.

/// A failure admitted in `Closed` (threshold 1) races `force_close`.
/// Asserts: the word always ends `Closed{0}` (a failure that lost the race
/// is stale and must not trip a freshly closed breaker); the failure is
/// `Recorded` exactly when a `Closed -> Open` was reported, by its thread.
#[test]
fn i2_failure_vs_force_close_2_threads() {
    check("i2_failure_vs_force_close_2_threads", None, || {
        let b = breaker::<W64>(config(1, 10, 100));
        let t = b.acquire().expect("closed admits");
        let b1 = b.clone();
        let caller = spawn(1, move || b1.release(t, Outcome::Failure));
        let b2 = b.clone();
        let operator = spawn(2, move || b2.force_close());
        let released = join(caller);
        join(operator);
        assert_eq!(state(&b), State::Closed { failures: 0 }, "I2");
        let h = history(&b);
        let tripped = h.iter().find(|r| r.to == Phase::Open);
        assert_eq!(released == Release::Recorded, tripped.is_some(), "{h:?}");
        assert!(tripped.is_none_or(|r| r.by == 1));
    });
}

/// A success admitted in `Closed` long ago races the thread that trips the
/// breaker, waits out the open time, is elected probe and fails the probe
/// (threshold 1). Asserts: the probe is always admitted and its failure
/// recorded, and the word ends `Open` with two trips: the old success, once
/// stale, must never close the breaker while it is probing.
#[test]
fn i2_old_success_vs_trip_and_probe_2_threads() {
    check("i2_old_success_vs_trip_and_probe_2_threads", None, || {
        let b = breaker::<W64>(config(1, 10, 100));
        let old = b.acquire().expect("closed admits");
        let tripper = b.acquire().expect("closed admits");
        let b1 = b.clone();
        let prober = spawn(1, move || {
            let tripped = b1.release(tripper, Outcome::Failure);
            b1.clock().advance(10);
            let probe = b1.acquire().expect("I5: first caller after the open time");
            assert!(probe.is_probe());
            (tripped, b1.release(probe, Outcome::Failure))
        });
        let b2 = b.clone();
        let late = spawn(2, move || b2.release(old, Outcome::Success));
        let (tripped, probed) = join(prober);
        let late = join(late);
        assert_eq!((tripped, probed), (Release::Recorded, Release::Recorded));
        assert!(
            matches!(state(&b), State::Open { trips: 2, .. }),
            "I2 ({late:?})"
        );
        assert_eq!(history(&b).len(), 4);
    });
}

// ---------------------------------------------------------------------------
// Forcing racing releases.

/// A failure admitted in `Closed` (threshold 1) races `force_open`.
/// Asserts: the word always ends `ForcedOpen`; the failure is `Recorded`
/// exactly when it tripped first; and afterwards no amount of time lets a
/// caller through (I5: only `force_open` keeps a breaker rejecting).
#[test]
fn force_open_vs_failure_2_threads() {
    check("force_open_vs_failure_2_threads", None, || {
        let b = breaker::<W64>(config(1, 10, 100));
        let t = b.acquire().expect("closed admits");
        let b1 = b.clone();
        let operator = spawn(1, move || b1.force_open());
        let b2 = b.clone();
        let caller = spawn(2, move || b2.release(t, Outcome::Failure));
        join(operator);
        let released = join(caller);
        assert_eq!(state(&b), State::ForcedOpen);
        let h = history(&b);
        assert_eq!(released == Release::Recorded, h.len() == 2, "{h:?}");
        b.clock().advance(1_000_000);
        assert!(b.acquire().is_err(), "forced open admits nobody");
        assert_eq!(b.status(), Status::Open);
    });
}

/// A probe's failure races `force_close`. Asserts: the word always ends
/// `Closed{0}` (a probe failure after the close is stale and must not reopen
/// it), the probe's failure is `Recorded` exactly when `Probing -> Open` was
/// reported, and the next caller is admitted as a plain call.
#[test]
fn force_close_vs_probe_failure_2_threads() {
    check("force_close_vs_probe_failure_2_threads", None, || {
        let b = elapsed_open::<W64>();
        let probe = b.acquire().expect("elected");
        let b1 = b.clone();
        let operator = spawn(1, move || b1.force_close());
        let b2 = b.clone();
        let prober = spawn(2, move || b2.release(probe, Outcome::Failure));
        join(operator);
        let released = join(prober);
        assert_eq!(state(&b), State::Closed { failures: 0 }, "I2");
        let h = history(&b);
        let reopened = h
            .iter()
            .any(|r| r.from == Phase::Probing && r.to == Phase::Open);
        assert_eq!(released == Release::Recorded, reopened, "{h:?}");
        let next = b.acquire().expect("closed admits");
        assert!(!next.is_probe());
        assert_eq!(b.release(next, Outcome::Success), Release::Recorded);
    });
}

/// `force_open`, `force_close` and a call that fails (threshold 1) race.
/// Asserts, beyond the history check: the word ends `Closed{0}`,
/// `ForcedOpen`, or `Open` (only when the trip came last); the call's failure
/// is `Recorded` exactly when a `Closed -> Open` was reported, by its thread.
/// Preemption bound 3.
#[test]
fn force_open_close_vs_call_3_threads() {
    check("force_open_close_vs_call_3_threads", Some(3), || {
        let b = breaker::<W64>(config(1, 10, 100));
        let b1 = b.clone();
        let opener = spawn(1, move || b1.force_open());
        let b2 = b.clone();
        let closer = spawn(2, move || b2.force_close());
        let b3 = b.clone();
        let caller = spawn(3, move || {
            b3.acquire().ok().map(|t| b3.release(t, Outcome::Failure))
        });
        join(opener);
        join(closer);
        let called = join(caller);
        let h = history(&b);
        let trip = h
            .iter()
            .find(|r| r.from == Phase::Closed && r.to == Phase::Open);
        assert_eq!(called == Some(Release::Recorded), trip.is_some(), "{h:?}");
        assert!(trip.is_none_or(|r| r.by == 3));
        match state(&b) {
            State::Closed { failures: 0 } | State::ForcedOpen => {}
            State::Open { .. } => assert_eq!(h.last().map(|r| r.by), Some(3)),
            other => panic!("ended {other:?}: {h:?}"),
        }
    });
}

// ---------------------------------------------------------------------------
// Probe timeout reclaimed while the slow probe releases.

/// A probe (admitted at 10, timeout 5) reports success at 15 while another
/// caller arrives. Asserts: the slow probe is always `Stale` (SPEC: its
/// timeout elapsed, it cannot close the breaker), the newcomer is always
/// admitted as the new probe, and that probe's ticket is current (its
/// success closes the breaker).
fn probe_timeout_reclaimed<W: Word>() {
    let b = breaker::<W>(config(1, 10, 5));
    trip(&b);
    b.clock().advance(10);
    let slow = b.acquire().expect("elected");
    b.clock().advance(5);
    let b1 = b.clone();
    let slow_probe = spawn(1, move || b1.release(slow, Outcome::Success));
    let b2 = b.clone();
    let newcomer = spawn(2, move || b2.acquire().ok());
    let slow_result = join(slow_probe);
    let new_probe = join(newcomer);
    assert_eq!(
        slow_result,
        Release::Stale,
        "I2: a timed-out probe is stale"
    );
    let new_probe = new_probe.expect("I5: a lost probe blocks at most the probe timeout");
    assert!(new_probe.is_probe());
    let h = history(&b);
    assert_eq!(h.last().map(|r| (r.to, r.by)), Some((Phase::Probing, 2)));
    assert_eq!(b.release(new_probe, Outcome::Success), Release::Recorded);
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn probe_timeout_reclaimed_2_threads_w64() {
    check(
        "probe_timeout_reclaimed_2_threads_w64",
        None,
        probe_timeout_reclaimed::<W64>,
    );
}

#[test]
fn probe_timeout_reclaimed_2_threads_w32() {
    check(
        "probe_timeout_reclaimed_2_threads_w32",
        None,
        probe_timeout_reclaimed::<W32>,
    );
}

/// As above, but a third thread moves the clock past the timeout while the
/// slow probe releases and a newcomer arrives. Asserts: never two live
/// probes (a newcomer elected probe means the slow probe was stale); a slow
/// probe that made it in time closes the breaker; a newcomer's ticket is
/// always current. Preemption bound 3.
#[test]
fn probe_timeout_racing_clock_3_threads() {
    check("probe_timeout_racing_clock_3_threads", Some(3), || {
        let b = breaker::<W64>(config(1, 10, 5));
        trip(&b);
        b.clock().advance(10);
        let slow = b.acquire().expect("elected");
        let b1 = b.clone();
        let slow_probe = spawn(1, move || b1.release(slow, Outcome::Success));
        let b2 = b.clone();
        let newcomer = spawn(2, move || b2.acquire().ok());
        let b3 = b.clone();
        let timer = spawn(3, move || b3.clock().advance(5));
        let slow_result = join(slow_probe);
        let admitted = join(newcomer);
        join(timer);
        let h = history(&b);
        if admitted.as_ref().is_some_and(Ticket::is_probe) {
            assert_eq!(slow_result, Release::Stale, "I1: two live probes");
        }
        if slow_result == Release::Recorded {
            assert!(
                h.iter()
                    .any(|r| r.from == Phase::Probing && r.to == Phase::Closed && r.by == 1)
            );
            assert_eq!(phase_of(&state(&b)), Phase::Closed);
        }
        if let Some(t) = admitted {
            assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
            assert_eq!(b.status(), Status::Closed);
        }
    });
}

// ---------------------------------------------------------------------------
// A failure that carries its open time, and `force_open_for`.

/// The last failure before the trip, twice: two tickets admitted in
/// `Closed` (threshold 2), one released with `release_failure_for(ticket,
/// 50)`, the other with a plain failure, racing. Asserts: both are
/// recorded; exactly one trip (`Closed -> Open`, reported once), made by
/// the thread whose failure landed second; the word is that winner's: open
/// until `now + 50` (the hint) with one trip if the hinted failure tripped,
/// else `Open` since `now` with one trip; the hint of a failure that did not
/// trip changed nothing.
fn hinted_vs_plain_failure<W: Word>() {
    let b = breaker::<W>(config(2, 10, 100));
    b.clock().set(7);
    let hinted = b.acquire().expect("closed admits");
    let plain = b.acquire().expect("closed admits");
    let b1 = b.clone();
    let h1 = spawn(1, move || b1.release_failure_for(hinted, 50));
    let b2 = b.clone();
    let h2 = spawn(2, move || b2.release(plain, Outcome::Failure));
    let (r1, r2) = (join(h1), join(h2));
    assert_eq!(
        (r1, r2),
        (Release::Recorded, Release::Recorded),
        "I3: both failures count"
    );
    let h = history(&b);
    assert_eq!(h.len(), 1, "I3: exactly one trip: {h:?}");
    assert_eq!((h[0].from, h[0].to), (Phase::Closed, Phase::Open));
    match (h[0].by, state(&b)) {
        (
            1,
            State::OpenUntil {
                until: 57,
                trips: 1,
            },
        ) => {}
        (2, State::Open { since: 7, trips: 1 }) => {}
        (by, other) => panic!("the trip by thread {by} left {other:?}: not the winner's word"),
    }
}

#[test]
fn hinted_vs_plain_failure_2_threads_w64() {
    check(
        "hinted_vs_plain_failure_2_threads_w64",
        None,
        hinted_vs_plain_failure::<W64>,
    );
}

#[test]
fn hinted_vs_plain_failure_2_threads_w32() {
    check(
        "hinted_vs_plain_failure_2_threads_w32",
        None,
        hinted_vs_plain_failure::<W32>,
    );
}

/// `force_open_for(100)` races a caller on an elapsed `Open` (tripped at 0,
/// open 10, now 10). Every interleaving ends open until 110 with one trip,
/// and either:
/// - the caller was elected probe first (`Open -> HalfOpen -> Probing`, by
///   the caller), then `force_open_for` (`Probing -> Open`, by the
///   operator) made its ticket stale: its success is `Stale` and changes
///   nothing; or
/// - the force came first (the lapse `Open -> HalfOpen` and `HalfOpen ->
///   Open`, both by the operator), and nobody is admitted: the caller is
///   rejected with cause `Open` and a wait of 100 ticks.
///
/// Afterwards the deadline holds: rejected at 109, the probe at 110.
fn force_open_for_vs_probe<W: Word>() {
    let b = elapsed_open::<W>();
    let b1 = b.clone();
    let caller = spawn(1, move || b1.acquire());
    let b2 = b.clone();
    let operator = spawn(2, move || b2.force_open_for(100));
    let got = join(caller);
    join(operator);
    let h = history(&b);
    assert!(
        matches!(
            state(&b),
            State::OpenUntil {
                until: 110,
                trips: 1
            }
        ),
        "ended {:?}: {h:?}",
        state(&b)
    );
    let steps: Vec<_> = h.iter().map(|r| (r.from, r.to, r.by)).collect();
    match got {
        Ok(probe) => {
            assert!(probe.is_probe(), "I1: admitted outside Closed as probe");
            assert_eq!(
                steps[1..],
                [
                    (Phase::Open, Phase::HalfOpen, 1),
                    (Phase::HalfOpen, Phase::Probing, 1),
                    (Phase::Probing, Phase::Open, 2),
                ],
                "elected, then forced open: {h:?}"
            );
            let before = tripword::__verification::load_word(&*b);
            assert_eq!(
                b.release(probe, Outcome::Success),
                Release::Stale,
                "I2: the probe's ticket is stale after force_open_for"
            );
            assert_eq!(tripword::__verification::load_word(&*b), before);
        }
        Err(r) => {
            assert_eq!(
                steps[1..],
                [
                    (Phase::Open, Phase::HalfOpen, 2),
                    (Phase::HalfOpen, Phase::Open, 2),
                ],
                "forced open first: {h:?}"
            );
            assert_eq!(
                (r.cause(), r.retry_after()),
                (tripword::Cause::Open, Some(100)),
                "nobody admitted before the deadline"
            );
        }
    }
    b.clock().set(109);
    assert!(b.acquire().is_err(), "I4: admitted before the deadline");
    b.clock().set(110);
    assert!(
        b.acquire().is_ok_and(|t| t.is_probe()),
        "I5: no probe at the deadline"
    );
}

#[test]
fn force_open_for_vs_probe_2_threads_w64() {
    check(
        "force_open_for_vs_probe_2_threads_w64",
        None,
        force_open_for_vs_probe::<W64>,
    );
}

#[test]
fn force_open_for_vs_probe_2_threads_w32() {
    check(
        "force_open_for_vs_probe_2_threads_w32",
        None,
        force_open_for_vs_probe::<W32>,
    );
}

/// `force_open_for(100)` races two callers on an elapsed `Open`.
/// Asserts: at most one caller admitted, as the probe, and then its ticket
/// is stale; a rejection says `Open` or `Probing`; the word ends open until
/// 110 with one trip. Preemption bound 3.
#[test]
fn force_open_for_vs_two_callers_3_threads() {
    check("force_open_for_vs_two_callers_3_threads", Some(3), || {
        let b = elapsed_open::<W64>();
        let callers: Vec<_> = (1..=2)
            .map(|who| {
                let b = b.clone();
                spawn(who, move || b.acquire())
            })
            .collect();
        let b3 = b.clone();
        let operator = spawn(3, move || b3.force_open_for(100));
        let got: Vec<_> = callers.into_iter().map(join).collect();
        join(operator);
        let h = history(&b);
        assert!(
            matches!(
                state(&b),
                State::OpenUntil {
                    until: 110,
                    trips: 1
                }
            ),
            "{h:?}"
        );
        let mut admitted = 0;
        for r in got {
            match r {
                Ok(t) => {
                    admitted += 1;
                    assert!(t.is_probe(), "I1");
                    assert_eq!(b.release(t, Outcome::Success), Release::Stale, "I2");
                }
                Err(r) => assert!(
                    matches!(r.cause(), tripword::Cause::Open | tripword::Cause::Probing),
                    "{r:?}"
                ),
            }
        }
        assert!(admitted <= 1, "I1: {admitted} admitted: {h:?}");
        assert_eq!(h.last().map(|r| (r.to, r.by)), Some((Phase::Open, 3)));
    });
}

// ---------------------------------------------------------------------------
// I4 and the memory orderings.

/// A thread moves the clock to 100 and then trips the breaker (threshold 1,
/// open 1000), stamping `Open{since: 100}`; another thread acquires. Asserts:
/// the second thread is admitted only as a plain call in `Closed`, never as a
/// probe: having seen `Open{since: 100}` it must read a clock of at least
/// 100 (release/acquire on the word orders the two clock reads; with relaxed
/// orderings it could read 0, see `(0 - 100) mod 2^34` as elapsed, and probe
/// at once).
#[test]
fn i4_trip_timestamp_ordering_2_threads() {
    check("i4_trip_timestamp_ordering_2_threads", None, || {
        let b = breaker::<W64>(config(1, 1000, 100));
        let b1 = b.clone();
        let tripper = spawn(1, move || {
            b1.clock().set(100);
            let t = b1.acquire().expect("closed admits");
            b1.release(t, Outcome::Failure)
        });
        let b2 = b.clone();
        let caller = spawn(2, move || b2.acquire().ok());
        assert_eq!(join(tripper), Release::Recorded);
        if let Some(t) = join(caller) {
            assert!(!t.is_probe(), "I4: an open breaker admitted a probe early");
        }
        assert!(matches!(
            state(&b),
            State::Open {
                since: 100,
                trips: 1
            }
        ));
        assert_eq!(history(&b).len(), 1);
    });
}

// ---------------------------------------------------------------------------
// The failure-rate window's bucket rollover racing calls.

type RateShared<W> = Arc<RateBreaker<ManualClock, W, Recorder, 2>>;

/// Two buckets of one tick (window 2), 50 %, at least 2 calls. One failure
/// at tick 0 fills bucket 0; at tick 2 that bucket is slice 2's, so the
/// first release there must start it afresh (the rollover).
fn rate_breaker<W: Word>() -> RateShared<W> {
    let b: RateShared<W> = Arc::new(RateBreaker::from_parts(
        config(1, 10, 100).check::<W>().unwrap(),
        Rate::new()
            .failure_rate(50)
            .minimum_calls(2)
            .window(2)
            .check::<W, 2>()
            .unwrap(),
        ManualClock::new(0),
        Recorder::new(),
    ));
    let t = b.acquire().expect("closed admits");
    assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
    b.breaker().clock().set(2);
    b
}

/// Two failures race into the rolled-over bucket: both are counted (the
/// tick-0 failure is not), and exactly one trip is made (I3, I7).
fn rate_rollover_failures<W: Word>() {
    let b = rate_breaker::<W>();
    let (t1, t2) = (b.acquire().unwrap(), b.acquire().unwrap());
    let b1 = b.clone();
    let h1 = spawn(1, move || b1.release(t1, Outcome::Failure));
    let b2 = b.clone();
    let h2 = spawn(2, move || b2.release(t2, Outcome::Failure));
    // Each failure is counted; if both read the full window, both try the
    // trip, one makes it and the other is stale (it takes effect after the
    // trip).
    let (r1, r2) = (join(h1), join(h2));
    assert!(
        matches!(
            (r1, r2),
            (Release::Recorded, Release::Recorded)
                | (Release::Recorded, Release::Stale)
                | (Release::Stale, Release::Recorded)
        ),
        "{r1:?} {r2:?}"
    );
    assert_eq!(
        b.window_counts(2, 0),
        (2, 2),
        "rollover: slice 2 holds both, not slice 0's"
    );
    let h = history(b.breaker());
    assert_eq!(h.len(), 1, "I3: exactly one trip: {h:?}");
    assert_eq!((h[0].from, h[0].to), (Phase::Closed, Phase::Open));
}

/// A success and a failure race into the rolled-over bucket: both are
/// counted; the failure trips (1 of 2 is 50 %) exactly when it read the
/// window after the success was counted, and at most once.
fn rate_rollover_success_failure<W: Word>() {
    let b = rate_breaker::<W>();
    let (t1, t2) = (b.acquire().unwrap(), b.acquire().unwrap());
    let b1 = b.clone();
    let h1 = spawn(1, move || b1.release(t1, Outcome::Success));
    let b2 = b.clone();
    let h2 = spawn(2, move || b2.release(t2, Outcome::Failure));
    let (r1, r2) = (join(h1), join(h2));
    assert_eq!(r2, Release::Recorded);
    let h = history(b.breaker());
    assert!(h.len() <= 1, "I3: at most one trip: {h:?}");
    if h.is_empty() {
        assert_eq!(r1, Release::Recorded);
        assert_eq!(
            b.window_counts(2, 0),
            (2, 1),
            "rollover: both counted in slice 2"
        );
    } else {
        // The success may have found the breaker already open (stale).
        assert!(matches!(state(b.breaker()), State::Open { .. }));
    }
}

#[test]
fn rate_rollover_failures_2_threads_w64() {
    check(
        "rate_rollover_failures_2_threads_w64",
        None,
        rate_rollover_failures::<W64>,
    );
}

#[test]
fn rate_rollover_failures_2_threads_w32() {
    check(
        "rate_rollover_failures_2_threads_w32",
        None,
        rate_rollover_failures::<W32>,
    );
}

#[test]
fn rate_rollover_success_failure_2_threads_w64() {
    check(
        "rate_rollover_success_failure_2_threads_w64",
        None,
        rate_rollover_success_failure::<W64>,
    );
}

/// A stale release racing a whole cycle: thread 1 releases a success of the
/// first `Closed` state while thread 2 trips the breaker, lets the open time
/// pass, closes it through the probe and counts a success in the same
/// slice under the new state. Whatever the interleaving, the stale release
/// never resets the new state's bucket: the new window holds thread 2's
/// success.
fn rate_stale_release_vs_new_state<W: Word>() {
    let b: RateShared<W> = Arc::new(RateBreaker::from_parts(
        config(1, 10, 100).check::<W>().unwrap(),
        Rate::new()
            .failure_rate(50)
            .minimum_calls(1)
            .window(2)
            .check::<W, 2>()
            .unwrap(),
        ManualClock::new(0),
        Recorder::new(),
    ));
    // Slice 10 is where both releases land (bucket 0).
    b.breaker().clock().set(10);
    let old = b.acquire().expect("closed admits");
    let tripper = b.acquire().expect("closed admits");
    let b1 = b.clone();
    let h1 = spawn(1, move || b1.release(old, Outcome::Success));
    let b2 = b.clone();
    let h2 = spawn(2, move || {
        assert_eq!(b2.release(tripper, Outcome::Failure), Release::Recorded);
        // The trip was at 10: open until 20; the probe closes at 20, and
        // its successor counts at 20 (slice 20, bucket 0 again).
        b2.breaker().clock().set(20);
        let probe = b2.acquire().expect("probe");
        assert_eq!(b2.release(probe, Outcome::Success), Release::Recorded);
        let fresh = b2.acquire().expect("closed again");
        assert_eq!(b2.release(fresh, Outcome::Success), Release::Recorded);
    });
    let r1 = join(h1);
    join(h2);
    let counter = b.breaker().snapshot().unwrap().counter;
    assert_eq!(
        counter, 4,
        "closed again after trip, half-open, probe, close"
    );
    assert_eq!(
        b.window_counts(20, counter),
        (1, 0),
        "the new state's count survives the stale release ({r1:?})"
    );
}

#[test]
fn rate_stale_release_vs_new_state_2_threads_w64() {
    check(
        "rate_stale_release_vs_new_state_2_threads_w64",
        Some(3),
        rate_stale_release_vs_new_state::<W64>,
    );
}

// ---------------------------------------------------------------------------
// The failure count's backoff (docs/design.md, "Backoff in the failure
// count"): a failure whose count loses its exchange to another writer reads
// the word again and counts from it, or leaves it to the general loop.

/// Two threads each count two failures below the threshold (5). In the
/// interleavings where both load the same word before either exchanges, the
/// second exchange loses to a real change and takes the lost-count path:
/// read again, count again (and lose again, while the other thread is
/// counting its second). Asserts: no failure is lost or counted twice (the
/// word ends `Closed{4}`), all four are `Recorded`, nothing is reported.
fn lost_count_retries<W: Word>() {
    let b = breaker::<W>(config(5, 10, 100));
    let handles: Vec<_> = (1..=2)
        .map(|who| {
            let b = b.clone();
            spawn(who, move || {
                [(); 2].map(|()| {
                    let t = b.acquire().expect("closed admits");
                    b.release(t, Outcome::Failure)
                })
            })
        })
        .collect();
    for h in handles {
        assert_eq!(join(h), [Release::Recorded; 2]);
    }
    assert_eq!(state(&b), State::Closed { failures: 4 }, "lost update");
    assert!(history(&b).is_empty());
}

#[test]
fn lost_count_retries_2_threads_w64() {
    check(
        "lost_count_retries_2_threads_w64",
        None,
        lost_count_retries::<W64>,
    );
}

#[test]
fn lost_count_retries_2_threads_w32() {
    check(
        "lost_count_retries_2_threads_w32",
        None,
        lost_count_retries::<W32>,
    );
}

/// A failure below the threshold (3, one failure already counted) races
/// another caller's failure followed by `force_close`. When the first
/// failure's count loses to either, it reads the word again: after the
/// `force_close` that word is a new `Closed` state, whose counter is not the
/// ticket's, so the failure must be stale there and count nothing. Asserts:
/// the word ends `Closed{0}` after one `force_close` (counter 1) and no trip;
/// the first failure is `Recorded` exactly when it landed before the close.
#[test]
fn lost_count_vs_force_close_2_threads() {
    check("lost_count_vs_force_close_2_threads", None, || {
        let b = breaker::<W64>(config(3, 10, 100));
        let first = b.acquire().expect("closed admits");
        assert_eq!(b.release(first, Outcome::Failure), Release::Recorded);
        let late = b.acquire().expect("closed admits");
        let other = b.acquire().expect("closed admits");
        let b1 = b.clone();
        let caller = spawn(1, move || b1.release(late, Outcome::Failure));
        let b2 = b.clone();
        let operator = spawn(2, move || {
            let counted = b2.release(other, Outcome::Failure);
            b2.force_close();
            counted
        });
        let released = join(caller);
        let counted = join(operator);
        // Two failures on top of one would trip (threshold 3) only if both
        // counted before the close; then the close ends it anyway.
        let snap = b.snapshot().expect("valid");
        assert_eq!(snap.state, State::Closed { failures: 0 }, "I2");
        let h = history(&b);
        let tripped = h.iter().any(|r| r.to == Phase::Open);
        assert_eq!(
            tripped,
            released == Release::Recorded && counted == Release::Recorded,
            "one trip exactly when both failures landed before the close: {h:?}"
        );
        if !tripped {
            assert_eq!(snap.counter, 1, "only the close changed the counter");
        }
    });
}

// ---------------------------------------------------------------------------
// The async driver: `cell::update_async` on an async cell over a loom
// atomic, each model thread driving it with `loom::future::block_on`.

/// An async cell over a loom atomic (the word of either width, widened):
/// its futures are ready at their first poll, so every interleaving loom
/// explores is one of the atomic's, with `update_async`'s loop in between.
struct LoomAsyncCell<W: Word> {
    word: AtomicU64,
    width: std::marker::PhantomData<fn() -> W>,
}

impl<W: Word> AsyncCell<W> for LoomAsyncCell<W> {
    type Error = std::convert::Infallible;
    async fn load(&self) -> Result<W::Raw, Self::Error> {
        Ok(W::from_u64(self.word.load(Ordering::Acquire)))
    }
    async fn compare_exchange(
        &self,
        current: W::Raw,
        new: W::Raw,
    ) -> Result<(), CasError<W::Raw, Self::Error>> {
        self.word
            .compare_exchange_weak(
                current.into(),
                new.into(),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .map(|_| ())
            .map_err(|seen| CasError::Changed(W::from_u64(seen)))
    }
}

/// A word and config for the async models.
struct AsyncShared<W: Word> {
    cell: LoomAsyncCell<W>,
    config: ValidConfig<W>,
}

impl<W: Word> AsyncShared<W> {
    /// A cell holding the word `events` leave, applied in order at time 0
    /// through the pure layer, from the zero word.
    fn new(config: Config, events: &[Event]) -> Arc<Self> {
        let config = config
            .check::<W>()
            .expect("the models' configs are in range");
        let word = events.iter().fold(W::from_u64(0), |w, &e| {
            transition::apply(&config, w, e, || 0).word
        });
        Arc::new(AsyncShared {
            cell: LoomAsyncCell {
                word: AtomicU64::new(word.into()),
                width: std::marker::PhantomData,
            },
            config,
        })
    }

    /// `event` at time `now` through `update_async`, from a fresh load,
    /// driven to completion with `loom::future::block_on`: the verdict and
    /// the transitions this caller's `on_swap` reported.
    fn run(&self, event: Event, now: u64) -> (Verdict, Vec<Transition>) {
        loom::future::block_on(async {
            let Ok(seen) = self.cell.load().await;
            let mut reported = Vec::new();
            let Ok(applied) = update_async(
                &self.cell,
                &self.config,
                seen,
                event,
                None,
                || now,
                |swap| reported.extend(swap.transitions()),
            )
            .await;
            (applied.verdict(), reported)
        })
    }

    fn snapshot(&self) -> Snapshot {
        let word = W::from_u64(self.word());
        Snapshot::decode::<W>(word).expect("the word stays valid")
    }

    fn word(&self) -> u64 {
        self.cell.word.load(Ordering::Acquire)
    }
}

/// `callers` threads admit through `update_async` on an elapsed open word
/// (threshold 1, open 10, tripped at 0, admitted at 10). Asserts: exactly
/// one caller is admitted, as the probe, with the election's counter;
/// every other caller is rejected because a probe runs (I1); the lapse and
/// the election are each reported exactly once, both by the winner, and
/// nobody else reports anything (I7); the word ends `Probing`.
fn async_single_probe<W: Word>(callers: u64) {
    let shared = AsyncShared::<W>::new(
        config(1, 10, 100),
        &[Event::Release {
            counter: 0,
            outcome: Outcome::Failure,
        }],
    );
    assert!(matches!(shared.snapshot().state, State::Open { .. }));
    let handles: Vec<_> = (1..=callers)
        .map(|who| {
            let shared = shared.clone();
            spawn(who, move || shared.run(Event::Admit, 10))
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(join).collect();
    let mut probes = Vec::new();
    for (who, (verdict, reported)) in (1..).zip(&results) {
        match verdict {
            Verdict::Admitted {
                counter,
                probe: true,
            } => probes.push((who, *counter, reported.clone())),
            Verdict::Rejected(why) => {
                assert_eq!(why.cause(), tripword::Cause::Probing, "I1: {results:?}");
                assert!(
                    reported.is_empty(),
                    "I7: a rejected caller reported {reported:?}"
                );
            }
            v => panic!("I1: {v:?} beside the probe: {results:?}"),
        }
    }
    assert_eq!(probes.len(), 1, "I1: exactly one probe: {results:?}");
    let (_, counter, reported) = &probes[0];
    let t = |from, to, counter| Transition {
        from,
        to,
        counter,
        forced: false,
    };
    assert_eq!(
        reported,
        &[
            t(Status::Open, Status::HalfOpen, 2),
            t(Status::HalfOpen, Status::Probing, 3)
        ],
        "I7: the winner reports the lapse and the election, once"
    );
    assert_eq!(*counter, 3, "the probe's ticket is the election's counter");
    let snap = shared.snapshot();
    assert!(matches!(
        snap.state,
        State::Probing {
            since: 10,
            trips: 1
        }
    ));
    assert_eq!(snap.counter, 3);
}

#[test]
fn async_driver_single_probe_2_callers_w64() {
    check("async_driver_single_probe_2_callers_w64", None, || {
        async_single_probe::<W64>(2)
    });
}

#[test]
fn async_driver_single_probe_2_callers_w32() {
    check("async_driver_single_probe_2_callers_w32", None, || {
        async_single_probe::<W32>(2)
    });
}

/// Three callers; preemption bound 3.
#[test]
fn async_driver_single_probe_3_callers() {
    check("async_driver_single_probe_3_callers", Some(3), || {
        async_single_probe::<W64>(3)
    });
}

/// Two threads each release a current failure through `update_async` on a
/// closed word (threshold 2). Asserts: both failures are recorded (no lost
/// count: the second exchange, lost, retries from the word the first
/// stored), exactly one `Closed -> Open` is reported, by one of them, and
/// the word ends `Open` with one trip (I3, I7).
#[test]
fn async_driver_exact_trip_2_threads() {
    check("async_driver_exact_trip_2_threads", None, || {
        let shared = AsyncShared::<W64>::new(config(2, 10, 100), &[]);
        let failure = Event::Release {
            counter: 0,
            outcome: Outcome::Failure,
        };
        let handles: Vec<_> = (1..=2)
            .map(|who| {
                let shared = shared.clone();
                spawn(who, move || shared.run(failure, 0))
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(join).collect();
        assert!(
            results.iter().all(|(v, _)| *v == Verdict::Recorded),
            "I3: a failure lost: {results:?}"
        );
        let reports: Vec<Transition> = results.iter().flat_map(|(_, r)| r.clone()).collect();
        assert_eq!(
            reports,
            [Transition {
                from: Status::Closed,
                to: Status::Open,
                counter: 1,
                forced: false
            }],
            "I3, I7: one trip, reported once: {results:?}"
        );
        let snap = shared.snapshot();
        assert!(
            matches!(snap.state, State::Open { since: 0, trips: 1 }),
            "{snap:?}"
        );
        assert_eq!(snap.counter, 1);
    });
}
