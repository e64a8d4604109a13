//! proptest model checking: random operation sequences run
//! on the real atomic [`Breaker`] (both word widths, a shared manual clock)
//! and on the reference [model](tripword_verification::model), compared after
//! every operation: verdicts (a rejection's cause and wait included), status,
//! the transitions the observer saw (each exactly once, SPEC I7), the decoded
//! word and its counter (I10), and whether the clock was read (I9).
//!
//! Configs: both widths; `W64` at its default horizon (`s = 0`) and at a
//! horizon of `2^40` ticks (`s = 7`); `W32` at its default horizon (`s = 7`
//! or 8), at `horizon(0)` (`s = 0`, exact ticks) and at horizons that give
//! `s = 2` and `s = 3` with small durations.
//!
//! Operations: acquire (tickets kept, at most 8, the oldest forgotten = a lost
//! ticket), release of any held ticket (stale ones included) with any
//! outcome, a permit finished or dropped (the config's abandon outcome), a
//! ticket of another breaker released here, status, force open and close,
//! hinted failures (`release_failure_for` on any held ticket,
//! `Permit::failure_for` on a fresh permit) and `force_open_for`, with hints
//! drawn around 0, small, the configured open time, the largest hint whose
//! units fit (`(2^(T-1) - 1) * 2^s + 1`), `longest_hint` (`2^(T-1) << s`)
//! and beyond, the ring and `u64::MAX`,
//! clock moves (small, exactly to the current deadline and one before and
//! after, huge: half the ring, the ring, `2^15`, `2^33`, `2^34`, `2^63`,
//! backwards small and by half the ring, set next to the `u64` wrap), and the
//! adversaries of time in units:
//!
//! - **sparse and periodic callers** (`Callers`): 1–6 callers, each `gap`
//!   ticks after the last, with `gap` around the ring minus the open time,
//!   around multiples of the ring and of the old `2^15`-tick horizon, or small;
//!   each admitted caller releases at once with an outcome, or loses its
//!   ticket (lost probes);
//! - **the counter driven around its period** (`Churn`): `force_open` and
//!   `force_close` pairs, on `W32` by up to 1 026 changes, past a full turn of
//!   its 10-bit counter, with tickets held across.
//!
//! Besides the model, every admission and status read from `OpenUntil` is
//! checked against its deadline directly (never admitted before it, admitted
//! at or after it up to half the ring past it), every deadline a hint sets
//! against the hint (`harness::hint_bounds`), and every admission and status
//! read from `Open` or `Probing` against the documented time bounds: nothing
//! is admitted (nor reads as half-open) before `d` ticks have passed since the
//! timestamp; and a caller between `d + 3 * 2^s - 1` ticks after it and the
//! ring less one unit is admitted (the deadline is at most that late).
//! With backoff, the doubled open time `open_for * 2^(k-1)` below the cap
//! is held to `(open_for + 3 * 2^s) * 2^(k-1)`: the unit count of
//! `open_for` is doubled, so its rounding is too (`harness::time_bounds`;
//! `backoff_rounding_doubles` in `tests/sparse_callers.rs`).
//!
//! Recovery options (`model_check/recovery.rs`): half the sequences draw
//! several probes (`probes_to_close` too) or a ramp whose stages last a few
//! of its units, and the clock moves to the trial's timeout and the ramp's
//! next stage as it does to any deadline.
//!
//! `PROPTEST_CASES` sets the number of sequences per word width (default
//! 5,000 each, 10,000 in all). Failures are saved under
//! `verification/proptest-regressions/` (committed) and replayed first.

#[path = "model_check/recovery.rs"]
mod recovery;

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config as PtConfig, FileFailurePersistence};
use proptest_state_machine::{ReferenceStateMachine, StateMachineTest, prop_state_machine};

use tripword::Jitter;
use tripword::{Breaker, Config, Outcome, Release, Status, Ticket, W32, W64, Word};
use tripword_verification::harness::{
    CountingClock, Recorder, SharedClock, SharedRecorder, check_hint_deadline, check_time_bounds,
    counter_matches, rejection_matches, state_mismatch, transitions_match,
};
use tripword_verification::model::{
    Model, ModelConfig, ModelRejected, ModelState, ModelTicket, ModelTransition,
};

/// Tickets held at once; acquiring past this forgets the oldest (a lost
/// ticket, never released).
const MAX_HELD: usize = 8;

/// The old `W32` horizon: `2^15` ticks, the time field's range at `s = 0`.
const OLD_HORIZON: u64 = 1 << 15;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5_000)
}

fn pt_config(file: &'static str) -> PtConfig {
    PtConfig {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(file))),
        max_shrink_iters: 20_000,
        ..PtConfig::default()
    }
}

/// One operation of a sequence.
#[derive(Clone, Debug)]
enum Op {
    Acquire,
    /// Release the held ticket at this index.
    Release(Index, Outcome),
    /// Take a permit; finish it with the outcome, or drop it (`None`).
    Permit(Option<Outcome>),
    /// Release a ticket of another breaker here: must be stale.
    ForeignRelease(Outcome),
    Status,
    ForceOpen,
    ForceClose,
    /// `release_failure_for` on the held ticket at this index, with a hint.
    FailureFor(Index, u64),
    /// Take a permit; finish it with `failure_for(hint)`.
    PermitFailureFor(u64),
    /// `force_open_for(hint)`.
    ForceOpenFor(u64),
    /// Move the clock forward (wrapping: a huge value moves it backwards).
    Advance(u64),
    /// Set the clock.
    Set(u64),
    /// `calls` callers, each `gap` ticks after the one before; an admitted
    /// caller releases at once with the outcome, or (`None`) loses its
    /// ticket.
    Callers {
        gap: u64,
        calls: u8,
        then: Option<Outcome>,
    },
    /// `pairs` times `force_open` then `force_close`: drives the counter.
    Churn(u32),
}

/// One caller of a `Callers` operation, in the model.
#[derive(Clone, Debug, PartialEq)]
struct Call {
    now: u64,
    /// The model's state before the call (for the bound checks).
    before: ModelState,
    got: Result<ModelTicket, ModelRejected>,
    /// Whether the release at once counted, if the caller released.
    released: Option<bool>,
}

/// What the last operation answered, in the model.
#[derive(Clone, Debug, PartialEq)]
enum Answer {
    None,
    Acquired(Result<ModelTicket, ModelRejected>),
    Released(bool),
    Permit(Result<(ModelTicket, bool), ModelRejected>),
    Status(Status),
    Calls(Vec<Call>),
}

#[derive(Clone, Debug)]
struct RefState {
    config: Config,
    model: Model,
    now: u64,
    /// The model's state before the last operation.
    before: ModelState,
    held: Vec<ModelTicket>,
    answer: Answer,
    transitions: Vec<ModelTransition>,
    read_clock: bool,
}

impl RefState {
    /// Ticks until the current deadline (the first clock reading that lapses
    /// the open time or probe timeout), if the state has one that has not
    /// passed.
    fn to_deadline(&self) -> Option<u64> {
        self.model
            .next_lapse(self.now)
            .or_else(|| recovery::edge(&self.model, self.now))
            .map(|at| at.wrapping_sub(self.now))
    }

    /// The current timed state's duration in ticks (for `OpenUntil`, the
    /// ticks left to its deadline, when it lies ahead), or the base open
    /// time.
    fn duration(&self) -> u64 {
        let cfg = self.model.config();
        match self.model.state() {
            ModelState::Open { trips, .. } => cfg.open_duration(trips),
            ModelState::Probing { .. } => cfg.probe_timeout,
            ModelState::OpenUntil { until, .. } => {
                let ring = ring(cfg);
                let ahead = until.wrapping_sub(self.now) % ring;
                if (1..=ring / 2).contains(&ahead) {
                    ahead
                } else {
                    cfg.open_for
                }
            }
            _ => cfg.open_for,
        }
    }

    fn absorb(&mut self) {
        self.transitions.extend_from_slice(self.model.transitions());
        self.read_clock |= self.model.read_clock();
    }
}

/// The ring in ticks, as a `u64` (it is at most `2^63` for the configs drawn
/// here).
fn ring(cfg: &ModelConfig) -> u64 {
    u64::try_from(cfg.ring()).expect("rings drawn here fit a u64")
}

struct Machine<W>(PhantomData<W>);

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Success),
        Just(Outcome::Failure),
        Just(Outcome::Ignored)
    ]
}

/// A duration in `1..=max`, with the range edges drawn often.
fn duration(max: u64) -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 1u64..=30,
        1 => Just(1u64),
        1 => Just(max),
        1 => Just(max - 1),
        1 => 31u64..=max,
    ]
}

/// Hints for `failure_for` and `force_open_for`: around 0, small, the
/// configured open time, the largest hint whose units fit half the field,
/// `longest_hint` (half the ring) and beyond, the ring and `u64::MAX`.
fn hint_strategy(cfg: &ModelConfig) -> BoxedStrategy<u64> {
    let u = cfg.unit();
    let open = cfg.open_for;
    let longest = cfg.longest_hint();
    let fits = (cfg.max_hint_units() - 1) * u + 1;
    let ring = ring(cfg);
    let edges = vec![
        0,
        1,
        2,
        u - 1,
        u,
        u + 1,
        open - 1,
        open,
        open + 1,
        open + u,
        2 * open,
        fits - 1,
        fits,
        fits + 1,
        longest - u,
        longest - 1,
        longest,
        longest + 1,
        longest + u,
        2 * longest - 1,
        ring,
        ring + 1,
        u64::MAX - 1,
        u64::MAX,
    ];
    prop_oneof![
        3 => 0u64..=30,
        5 => proptest::sample::select(edges),
        1 => 0..=longest,
        1 => any::<u64>(),
    ]
    .boxed()
}

/// The horizons drawn per width, each with the largest duration drawn
/// with it (small enough that the shift stays the one named).
fn horizons<W: Word>() -> Vec<(Option<u64>, u64)> {
    if W::LAYOUT.word_bits == 64 {
        // s = 0 (default horizon), s = 7.
        vec![(None, 1 << 33), (Some(1 << 40), 1 << 39)]
    } else {
        // s = 7 or 8 (default horizon), s = 0, s = 2, s = 3.
        vec![
            (None, 2_000_000),
            (Some(0), 1 << 14),
            (Some(100_000), 30_000),
            (Some(200_000), 60_000),
        ]
    }
}

/// No jitter half the time; equal or full jitter with any seed otherwise
/// (`Config::jitter`).
fn jitter_strategy() -> BoxedStrategy<Jitter> {
    prop_oneof![
        2 => Just(Jitter::None),
        1 => any::<u32>().prop_map(|seed| Jitter::Equal { seed }),
        1 => any::<u32>().prop_map(|seed| Jitter::Full { seed }),
    ]
    .boxed()
}

fn config_strategy<W: Word>() -> BoxedStrategy<Config> {
    let l = W::LAYOUT;
    let threshold = prop_oneof![
        8 => 1u32..=4,
        1 => 5u32..=20,
        1 => Just(l.max_failures()),
    ];
    let horizon = proptest::sample::select(horizons::<W>());
    (
        horizon,
        threshold,
        outcome(),
        any::<bool>(),
        recovery::strategy::<W>(),
    )
        .prop_flat_map(move |((horizon, max), n, abandon, backoff, drawn)| {
            let drawn = drawn.clone();
            (duration(max), duration(max)).prop_flat_map(move |(open_for, probe)| {
                let drawn = drawn.clone();
                let reachable = open_for.saturating_mul(1 << (l.max_trips() - 1)).min(max);
                let cap = if backoff {
                    prop_oneof![
                        Just(Some(open_for)),
                        Just(Some(open_for.saturating_mul(4).min(reachable))),
                        Just(Some(reachable)),
                        (open_for..=reachable).prop_map(Some),
                    ]
                    .boxed()
                } else {
                    Just(None).boxed()
                };
                (cap, jitter_strategy()).prop_map(move |(cap, jitter)| {
                    let drawn = drawn.clone();
                    let mut c = Config::new()
                        .failure_threshold(n)
                        .open_for(open_for)
                        .probe_timeout(probe)
                        .abandon_as(abandon)
                        .jitter(jitter);
                    if let Some(h) = horizon {
                        c = c.horizon(h);
                    }
                    let c = match cap {
                        Some(cap) => c.exponential_backoff(cap),
                        None => c,
                    };
                    recovery::apply::<W>(c, &drawn)
                })
            })
        })
        .prop_filter("in range for the width", |c| c.check::<W>().is_ok())
        .boxed()
}

/// Gaps between sparse callers: around the ring minus the open time, around
/// multiples of the ring and of the old `2^15` horizon, around the duration,
/// and small.
fn gap_strategy(state: &RefState) -> BoxedStrategy<u64> {
    let cfg = state.model.config();
    let u = cfg.unit();
    let ring = ring(cfg);
    let d = state.duration();
    let near = move |base: u64| {
        let deltas = [
            0i64,
            1,
            -1,
            u as i64,
            -(u as i64),
            3 * u as i64,
            -3 * (u as i64),
        ];
        proptest::sample::select(deltas.to_vec())
            .prop_map(move |delta| base.wrapping_add_signed(delta).max(1))
    };
    prop_oneof![
        3 => near(ring.saturating_sub(d)),
        2 => (1u64..=2).prop_flat_map(move |k| near(ring.saturating_mul(k))),
        2 => (1u64..=3).prop_flat_map(move |k| near(OLD_HORIZON * k)),
        1 => near(ring / 2),
        1 => near(d),
        1 => 1u64..=3 * u + 3,
    ]
    .boxed()
}

impl<W: Word> ReferenceStateMachine for Machine<W> {
    type State = RefState;
    type Transition = Op;

    fn init_state() -> BoxedStrategy<RefState> {
        let start = prop_oneof![
            Just(0u64),
            any::<u64>(),
            (0u64..64).prop_map(|d| u64::MAX - d),
        ];
        (config_strategy::<W>(), start)
            .prop_map(|(config, now)| {
                let valid = config.check::<W>().expect("filtered");
                RefState {
                    config,
                    model: Model::new(ModelConfig::for_width(&valid)),
                    now,
                    before: ModelState::Closed { failures: 0 },
                    held: Vec::new(),
                    answer: Answer::None,
                    transitions: Vec::new(),
                    read_clock: false,
                }
            })
            .boxed()
    }

    fn transitions(state: &RefState) -> BoxedStrategy<Op> {
        let cfg = *state.model.config();
        let ring = ring(&cfg);
        let half = ring / 2;
        let deadline = state.to_deadline();
        let clock_jump = prop_oneof![
            Just(half),
            Just(half - 1),
            Just(ring),
            Just(ring - 1),
            Just(ring + 1),
            Just(OLD_HORIZON),
            Just(OLD_HORIZON + 1),
            Just(1u64 << 33),
            Just(1u64 << 34),
            Just(1u64 << 63),
        ];
        let to_deadline = match deadline {
            Some(d) => prop_oneof![Just(d), Just(d - 1), Just(d + 1)].boxed(),
            None => (0u64..=3).boxed(),
        };
        let churn = if cfg.counter_bits <= 10 {
            let half_period = (cfg.counter_period() / 2) as u32;
            prop_oneof![
                1u32..=3,
                Just(half_period - 2),
                Just(half_period - 1),
                Just(half_period),
                Just(half_period + 1),
            ]
            .boxed()
        } else {
            (1u32..=3).boxed()
        };
        let callers = (
            gap_strategy(state),
            1u8..=6,
            proptest::option::weighted(0.75, outcome()),
        )
            .prop_map(|(gap, calls, then)| Op::Callers { gap, calls, then });
        let base = prop_oneof![
            6 => Just(Op::Acquire),
            3 => proptest::option::of(outcome()).prop_map(Op::Permit),
            1 => outcome().prop_map(Op::ForeignRelease),
            3 => Just(Op::Status),
            1 => Just(Op::ForceOpen),
            1 => Just(Op::ForceClose),
            2 => hint_strategy(&cfg).prop_map(Op::PermitFailureFor),
            1 => hint_strategy(&cfg).prop_map(Op::ForceOpenFor),
            3 => (0u64..=20).prop_map(Op::Advance),
            4 => to_deadline.prop_map(Op::Advance),
            1 => clock_jump.prop_map(Op::Advance),
            1 => (1u64..=20).prop_map(|b| Op::Advance(b.wrapping_neg())),
            1 => Just(Op::Advance(half.wrapping_neg())),
            1 => (0u64..=40).prop_map(|d| Op::Set(u64::MAX - d)),
            3 => callers,
            1 => churn.prop_map(Op::Churn),
        ];
        // With recovery options, a path to them: open until now (the next
        // caller probes) and permits that succeed.
        let base = if cfg.probes().0 > 1 || cfg.has_ramp() {
            prop_oneof![
                8 => base,
                1 => Just(Op::ForceOpenFor(0)),
                2 => Just(Op::Permit(Some(Outcome::Success))),
            ]
            .boxed()
        } else {
            base.boxed()
        };
        if state.held.is_empty() {
            base
        } else {
            prop_oneof![
                6 => base,
                3 => (any::<Index>(), outcome()).prop_map(|(i, o)| Op::Release(i, o)),
                1 => (any::<Index>(), hint_strategy(&cfg)).prop_map(|(i, d)| Op::FailureFor(i, d)),
            ]
            .boxed()
        }
    }

    fn preconditions(state: &RefState, op: &Op) -> bool {
        !matches!(op, Op::Release(..) | Op::FailureFor(..)) || !state.held.is_empty()
    }

    fn apply(mut s: RefState, op: &Op) -> RefState {
        s.answer = Answer::None;
        s.transitions.clear();
        s.read_clock = false;
        s.model.clear_last();
        s.before = s.model.state();
        let now = s.now;
        match *op {
            Op::Acquire => {
                let t = s.model.acquire(now);
                s.absorb();
                if let Ok(t) = t {
                    s.held.push(t);
                    if s.held.len() > MAX_HELD {
                        s.held.remove(0);
                    }
                }
                s.answer = Answer::Acquired(t);
            }
            Op::Release(i, outcome) => {
                let t = s.held.remove(i.index(s.held.len()));
                let r = s.model.release(t.counter, outcome, now);
                s.absorb();
                s.answer = Answer::Released(r);
            }
            Op::Permit(finish) => {
                let t = s.model.acquire(now);
                s.absorb();
                let done = t.map(|t| {
                    let outcome = finish.unwrap_or(s.model.config().abandon);
                    let r = s.model.release(t.counter, outcome, now);
                    s.absorb();
                    (t, r)
                });
                s.answer = Answer::Permit(done);
            }
            Op::FailureFor(i, d) => {
                let t = s.held.remove(i.index(s.held.len()));
                let r = s.model.release_failure_for(t.counter, d, now);
                s.absorb();
                s.answer = Answer::Released(r);
            }
            Op::PermitFailureFor(d) => {
                let t = s.model.acquire(now);
                s.absorb();
                let done = t.map(|t| {
                    let r = s.model.release_failure_for(t.counter, d, now);
                    s.absorb();
                    (t, r)
                });
                s.answer = Answer::Permit(done);
            }
            Op::ForceOpenFor(d) => {
                s.model.force_open_for(d, now);
                s.absorb();
            }
            Op::ForeignRelease(_) => s.answer = Answer::Released(false),
            Op::Status => {
                let st = s.model.status(now);
                s.absorb();
                s.answer = Answer::Status(st);
            }
            Op::ForceOpen => {
                s.model.force_open();
                s.absorb();
            }
            Op::ForceClose => {
                s.model.force_close();
                s.absorb();
            }
            Op::Advance(d) => s.now = now.wrapping_add(d),
            Op::Set(t) => s.now = t,
            Op::Callers { gap, calls, then } => {
                let mut out = Vec::new();
                for _ in 0..calls {
                    s.now = s.now.wrapping_add(gap);
                    let before = s.model.state();
                    let got = s.model.acquire(s.now);
                    s.absorb();
                    let released = match (got, then) {
                        (Ok(t), Some(o)) => {
                            let r = s.model.release(t.counter, o, s.now);
                            s.absorb();
                            Some(r)
                        }
                        _ => None,
                    };
                    out.push(Call {
                        now: s.now,
                        before,
                        got,
                        released,
                    });
                }
                s.answer = Answer::Calls(out);
            }
            Op::Churn(pairs) => {
                for _ in 0..pairs {
                    s.model.force_open();
                    s.absorb();
                    s.model.force_close();
                    s.absorb();
                }
            }
        }
        s
    }
}

/// Sequences and operations run, per width (W64, W32), for the CI summary;
/// and of the sequences, those whose config has a time shift above 0.
static SEQUENCES: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static SHIFTED: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static OPERATIONS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
/// Of the operations: those with a hint, and the operations
/// that left the breaker open until a deadline (`OpenUntil`).
static HINTED: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static IN_OPEN_UNTIL: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
/// Sequences with several probes, and with a ramp; operations made in
/// `Trial` and in `Ramp`.
static WITH_PROBES: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static WITH_RAMP: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static IN_TRIAL: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static IN_RAMP: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

fn width_index<W: Word>() -> usize {
    usize::from(W::LAYOUT.word_bits == 32)
}

/// Leaves the counts where the CI stage reads them.
fn record_counts<W: Word>(cfg: &ModelConfig) {
    let shift = cfg.time_shift;
    let i = width_index::<W>();
    if cfg.probes().0 > 1 {
        WITH_PROBES[i].fetch_add(1, Ordering::Relaxed);
    }
    if cfg.has_ramp() {
        WITH_RAMP[i].fetch_add(1, Ordering::Relaxed);
    }
    if shift > 0 {
        SHIFTED[i].fetch_add(1, Ordering::Relaxed);
    }
    let n = SEQUENCES[i].fetch_add(1, Ordering::Relaxed) + 1;
    if n.is_multiple_of(250) || n >= u64::from(cases()) {
        let shifted = SHIFTED[i].load(Ordering::Relaxed);
        let line = format!(
            "proptest W{}: {n} sequences ({} at s = 0, {shifted} at s > 0; {} with several probes, {} with a ramp), {} operations ({} with a hint, {} ending open until a deadline, {} from a trial, {} from a ramp), each checked against the model",
            W::LAYOUT.word_bits,
            n - shifted,
            WITH_PROBES[i].load(Ordering::Relaxed),
            WITH_RAMP[i].load(Ordering::Relaxed),
            OPERATIONS[i].load(Ordering::Relaxed),
            HINTED[i].load(Ordering::Relaxed),
            IN_OPEN_UNTIL[i].load(Ordering::Relaxed),
            IN_TRIAL[i].load(Ordering::Relaxed),
            IN_RAMP[i].load(Ordering::Relaxed),
        );
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("verification-counts");
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(
            dir.join(format!("proptest-w{}.txt", W::LAYOUT.word_bits)),
            line + "\n",
        );
    }
}

/// The breakers are boxed: proptest-state-machine moves the system under
/// test on every step, and a `Ticket` identifies its breaker by address, so a
/// breaker that moved would (rightly) treat its outstanding tickets as
/// foreign. Native builds happen to reuse the same stack slot; Miri on i686
/// does not.
struct Sut<W: Word> {
    breaker: Box<Breaker<SharedClock, W, SharedRecorder>>,
    other: Box<Breaker<SharedClock, W, ()>>,
    clock: SharedClock,
    recorder: Arc<Recorder>,
    held: Vec<Ticket>,
    config: ModelConfig,
}

fn ticket_matches(cfg: &ModelConfig, core: &Ticket, model: &ModelTicket) -> bool {
    counter_matches(cfg, model.counter, core.counter()) && core.is_probe() == model.probe
}

/// The core's admission against the model's: the same ticket, or the same
/// rejection (cause and wait).
fn admission_matches(
    cfg: &ModelConfig,
    got: &Result<Ticket, tripword::Rejected>,
    want: &Result<ModelTicket, ModelRejected>,
) -> bool {
    match (got, want) {
        (Ok(t), Ok(m)) => ticket_matches(cfg, t, m),
        (Err(r), Err(m)) => rejection_matches(r, m),
        _ => false,
    }
}

/// After an operation with a hint of `d` ticks at clock reading `now`: if
/// it opened the breaker until a deadline (the model made a transition into
/// `OpenUntil`), the deadline the core stored is within the hint's
/// documented bounds (`harness::hint_bounds`), read from the word.
fn check_hinted_open<W: Word>(sut: &Sut<W>, r: &RefState, now: u64, d: u64, what: &str) {
    if r.transitions.is_empty() || !matches!(r.model.state(), ModelState::OpenUntil { .. }) {
        return;
    }
    let snap = sut
        .breaker
        .snapshot()
        .expect("the word is never corrupt here");
    let tripword::word::State::OpenUntil { until, .. } = snap.state else {
        panic!("{what}({d}) at {now}: the core stored {snap:?}, the model opened until a deadline");
    };
    check_hint_deadline(&sut.config, until, now, d, what);
}

impl<W: Word> StateMachineTest for Sut<W> {
    type SystemUnderTest = Self;
    type Reference = Machine<W>;

    fn init_test(r: &RefState) -> Self {
        let clock = SharedClock(Arc::new(CountingClock::new(r.now)));
        let recorder = Arc::new(Recorder::default());
        let valid = r.config.check::<W>().expect("drawn configs are in range");
        Sut {
            breaker: Box::new(Breaker::from_parts(
                valid,
                clock.clone(),
                SharedRecorder(recorder.clone()),
            )),
            other: Box::new(Breaker::from_parts(valid, clock.clone(), ())),
            clock,
            recorder,
            held: Vec::new(),
            config: *r.model.config(),
        }
    }

    fn apply(mut sut: Self, r: &RefState, op: Op) -> Self {
        OPERATIONS[width_index::<W>()].fetch_add(1, Ordering::Relaxed);
        if matches!(
            op,
            Op::FailureFor(..) | Op::PermitFailureFor(_) | Op::ForceOpenFor(_)
        ) {
            HINTED[width_index::<W>()].fetch_add(1, Ordering::Relaxed);
        }
        if matches!(r.model.state(), ModelState::OpenUntil { .. }) {
            IN_OPEN_UNTIL[width_index::<W>()].fetch_add(1, Ordering::Relaxed);
        }
        match r.before {
            ModelState::Trial { .. } => {
                IN_TRIAL[width_index::<W>()].fetch_add(1, Ordering::Relaxed)
            }
            ModelState::Ramp { .. } => IN_RAMP[width_index::<W>()].fetch_add(1, Ordering::Relaxed),
            _ => 0,
        };
        let reads = sut.clock.reads();
        let word_before = tripword::__verification::load_word(&*sut.breaker);
        let before = sut
            .breaker
            .snapshot()
            .expect("the word is never corrupt here");
        let cfg = sut.config;
        let now = sut.clock.peek();
        match op {
            Op::Acquire => {
                let got = sut.breaker.acquire();
                let Answer::Acquired(want) = &r.answer else {
                    unreachable!()
                };
                assert!(
                    admission_matches(&cfg, &got, want),
                    "acquire: core {got:?}, model {want:?}"
                );
                check_time_bounds(&cfg, &r.before, now, got.is_ok(), "acquire");
                if let Ok(t) = got {
                    sut.held.push(t);
                    if sut.held.len() > MAX_HELD {
                        let _lost = sut.held.remove(0);
                    }
                }
                // SPEC I9: admission in Closed reads no clock and stores nothing.
                if matches!(before.state, tripword::word::State::Closed { .. }) {
                    assert_eq!(
                        sut.clock.reads(),
                        reads,
                        "I9: admission in Closed read the clock"
                    );
                    assert_eq!(
                        tripword::__verification::load_word(&*sut.breaker),
                        word_before,
                        "I9: admission in Closed wrote"
                    );
                }
            }
            Op::Release(i, outcome) => {
                let t = sut.held.remove(i.index(sut.held.len()));
                let got = sut.breaker.release(t, outcome);
                assert_eq!(
                    r.answer,
                    Answer::Released(got == Release::Recorded),
                    "release verdict"
                );
            }
            Op::Permit(finish) => {
                let got = sut.breaker.permit();
                let Answer::Permit(want) = &r.answer else {
                    unreachable!()
                };
                check_time_bounds(&cfg, &r.before, now, got.is_ok(), "permit");
                match (got, want) {
                    (Ok(p), Ok((m, recorded))) => {
                        assert_eq!(p.is_probe(), m.probe, "permit probe flag");
                        match finish {
                            Some(o) => {
                                let rel = p.finish(o);
                                assert_eq!(rel == Release::Recorded, *recorded, "permit verdict");
                            }
                            None => drop(p),
                        }
                    }
                    (Err(got), Err(m)) => {
                        assert!(
                            rejection_matches(&got, m),
                            "permit rejected: core {got:?}, model {m:?}"
                        );
                    }
                    (got, want) => panic!("permit: core ok={}, model {want:?}", got.is_ok()),
                }
            }
            Op::ForeignRelease(outcome) => {
                let t = sut.other.acquire().expect("the other breaker stays closed");
                assert_eq!(
                    sut.breaker.release(t, outcome),
                    Release::Stale,
                    "I2: foreign ticket"
                );
                assert_eq!(
                    tripword::__verification::load_word(&*sut.breaker),
                    word_before,
                    "I2: foreign ticket changed the word"
                );
            }
            Op::Status => {
                let got = sut.breaker.status();
                assert_eq!(r.answer, Answer::Status(got), "status");
                // A status is a read: it stores nothing.
                assert_eq!(
                    tripword::__verification::load_word(&*sut.breaker),
                    word_before,
                    "status wrote"
                );
                check_time_bounds(&cfg, &r.before, now, got == Status::HalfOpen, "status");
            }
            Op::FailureFor(i, d) => {
                let t = sut.held.remove(i.index(sut.held.len()));
                let got = sut.breaker.release_failure_for(t, d);
                assert_eq!(
                    r.answer,
                    Answer::Released(got == Release::Recorded),
                    "release_failure_for({d}) verdict"
                );
                check_hinted_open(&sut, r, now, d, "release_failure_for");
            }
            Op::PermitFailureFor(d) => {
                let got = sut.breaker.permit();
                let Answer::Permit(want) = &r.answer else {
                    unreachable!()
                };
                check_time_bounds(&cfg, &r.before, now, got.is_ok(), "permit");
                match (got, want) {
                    (Ok(p), Ok((m, recorded))) => {
                        assert_eq!(p.is_probe(), m.probe, "permit probe flag");
                        let rel = p.failure_for(d);
                        assert_eq!(
                            rel == Release::Recorded,
                            *recorded,
                            "permit failure_for({d}) verdict"
                        );
                    }
                    (Err(got), Err(m)) => {
                        assert!(
                            rejection_matches(&got, m),
                            "permit rejected: core {got:?}, model {m:?}"
                        );
                    }
                    (got, want) => panic!("permit: core ok={}, model {want:?}", got.is_ok()),
                }
                check_hinted_open(&sut, r, now, d, "Permit::failure_for");
            }
            Op::ForceOpenFor(d) => {
                sut.breaker.force_open_for(d);
                assert!(
                    matches!(r.model.state(), ModelState::OpenUntil { .. }),
                    "force_open_for always opens until a deadline"
                );
                check_hinted_open(&sut, r, now, d, "force_open_for");
            }
            Op::ForceOpen => sut.breaker.force_open(),
            Op::ForceClose => sut.breaker.force_close(),
            Op::Advance(d) => sut.clock.advance(d),
            Op::Set(t) => sut.clock.set(t),
            Op::Callers { gap, calls, then } => {
                let Answer::Calls(want) = &r.answer else {
                    unreachable!()
                };
                assert_eq!(want.len(), usize::from(calls));
                for (i, call) in want.iter().enumerate() {
                    sut.clock.advance(gap);
                    assert_eq!(sut.clock.peek(), call.now, "the clocks agree");
                    let got = sut.breaker.acquire();
                    assert!(
                        admission_matches(&cfg, &got, &call.got),
                        "caller {i} of {calls}, {gap} ticks apart: core {got:?}, model {:?} (before {:?})",
                        call.got,
                        call.before
                    );
                    check_time_bounds(&cfg, &call.before, call.now, got.is_ok(), "sparse caller");
                    if let (Ok(t), Some(o)) = (got, then) {
                        let rel = sut.breaker.release(t, o);
                        assert_eq!(
                            Some(rel == Release::Recorded),
                            call.released,
                            "sparse caller's release"
                        );
                    }
                    // Tickets not released are lost.
                }
            }
            Op::Churn(pairs) => {
                for _ in 0..pairs {
                    sut.breaker.force_open();
                    sut.breaker.force_close();
                }
            }
        }
        // SPEC I7: every transition reported exactly once, in order.
        let seen = sut.recorder.take();
        assert!(
            transitions_match(&cfg, seen.iter().copied(), &r.transitions),
            "I7: observer saw {seen:?}, model made {:?}",
            r.transitions
        );
        assert!(
            sut.recorder.take_corrupt().is_empty(),
            "no corrupt word may appear"
        );
        // The word is the model's state; SPEC I10: the counter moved by
        // exactly the number of transitions.
        let after = sut
            .breaker
            .snapshot()
            .expect("the word is never corrupt here");
        if let Some(diff) = state_mismatch(&after, &r.model) {
            panic!("state after {op:?}: {diff}");
        }
        let moved =
            u64::from(after.counter).wrapping_sub(u64::from(before.counter)) % cfg.counter_period();
        assert_eq!(
            moved,
            seen.len() as u64 % cfg.counter_period(),
            "I10: counter moved {moved}"
        );
        // SPEC I9 in general: the clock is read exactly when the model needs it.
        assert_eq!(
            sut.clock.reads() > reads,
            r.read_clock,
            "clock read by the core: {}, needed by the model: {}",
            sut.clock.reads() > reads,
            r.read_clock
        );
        assert_eq!(sut.clock.peek(), r.now, "the clocks agree");
        sut
    }

    fn teardown(_sut: Self, r: RefState) {
        record_counts::<W>(r.model.config());
    }
}

prop_state_machine! {
    #![proptest_config(pt_config("proptest-regressions/model_check_w64.txt"))]
    /// The 64-bit breaker against the model.
    #[test]
    fn breaker_w64_matches_model(sequential 1..48 => Sut<W64>);
}

prop_state_machine! {
    #![proptest_config(pt_config("proptest-regressions/model_check_w32.txt"))]
    /// The 32-bit breaker against the model.
    #[test]
    fn breaker_w32_matches_model(sequential 1..48 => Sut<W32>);
}
