//! proptest model checking (issue 3, item 2): random operation sequences run
//! on the real atomic [`Breaker`] (both word widths, a shared manual clock)
//! and on the reference [model](tripword_verification::model), compared after
//! every operation: verdicts, status, the transitions the observer saw (each
//! exactly once, SPEC I7), the decoded word and its counter (I10), and whether
//! the clock was read (I9).
//!
//! Operations: acquire (tickets kept, at most 8, the oldest forgotten = a lost
//! ticket), release of any held ticket (stale ones included) with any
//! outcome, a permit finished or dropped (the config's abandon outcome), a
//! ticket of another breaker released here, status, force open and close,
//! and clock moves: small, exactly to the current deadline (and one before,
//! one after), huge (the maximum duration, the time field's period, 2^63),
//! backwards (small and by the maximum duration), and set next to the `u64`
//! wrap.
//!
//! `PROPTEST_CASES` sets the number of sequences per word width (default
//! 5,000 each, 10,000 in all). Failures are saved under
//! `verification/proptest-regressions/` (committed) and replayed first.

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config as PtConfig, FileFailurePersistence};
use proptest_state_machine::{ReferenceStateMachine, StateMachineTest, prop_state_machine};

use tripword::{Breaker, Config, Outcome, Release, Status, Ticket, W32, W64, Word};
use tripword_verification::harness::{
    CountingClock, Recorder, SharedClock, SharedRecorder, counter_matches, state_mismatch,
    transitions_match,
};
use tripword_verification::model::{Model, ModelConfig, ModelState, ModelTicket, ModelTransition};

/// Tickets held at once; acquiring past this forgets the oldest (a lost
/// ticket, never released).
const MAX_HELD: usize = 8;

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
    /// Move the clock forward (wrapping: a huge value moves it backwards).
    Advance(u64),
    /// Set the clock.
    Set(u64),
}

/// What the last operation answered, in the model.
#[derive(Clone, Debug, PartialEq)]
enum Answer {
    None,
    Acquired(Option<ModelTicket>),
    Released(bool),
    Permit(Option<(ModelTicket, bool)>),
    Status(Status),
}

#[derive(Clone, Debug)]
struct RefState {
    config: Config,
    model: Model,
    now: u64,
    held: Vec<ModelTicket>,
    answer: Answer,
    transitions: Vec<ModelTransition>,
    read_clock: bool,
}

impl RefState {
    /// Ticks until the current deadline (open time or probe timeout), if the
    /// state has one that has not passed.
    fn to_deadline(&self) -> Option<u64> {
        let cfg = self.model.config();
        let (since, limit) = match self.model.state() {
            ModelState::Open { since, trips } => (since, cfg.open_duration(trips)),
            ModelState::Probing { since, .. } => (since, cfg.probe_timeout),
            _ => return None,
        };
        let elapsed = cfg.elapsed(since, self.now);
        (elapsed < limit).then(|| limit - elapsed)
    }

    fn absorb(&mut self) {
        self.transitions.extend_from_slice(self.model.transitions());
        self.read_clock |= self.model.read_clock();
    }
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

fn config_strategy<W: Word>() -> BoxedStrategy<Config> {
    let l = W::LAYOUT;
    let max = l.max_duration();
    let threshold = prop_oneof![
        8 => 1u32..=4,
        1 => 5u32..=20,
        1 => Just(l.max_failures()),
    ];
    (
        threshold,
        duration(max),
        duration(max),
        outcome(),
        any::<bool>(),
    )
        .prop_flat_map(move |(n, open_for, probe, abandon, backoff)| {
            let cap = if backoff {
                prop_oneof![
                    Just(Some(open_for)),
                    Just(Some((open_for.saturating_mul(4)).min(max))),
                    Just(Some(max)),
                    (open_for..=max).prop_map(Some),
                ]
                .boxed()
            } else {
                Just(None).boxed()
            };
            cap.prop_map(move |cap| {
                let c = Config::new()
                    .failure_threshold(n)
                    .open_for(open_for)
                    .probe_timeout(probe)
                    .abandon_as(abandon);
                match cap {
                    Some(cap) => c.exponential_backoff(cap),
                    None => c,
                }
            })
        })
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
            .prop_map(|(config, now)| RefState {
                config,
                model: Model::new(ModelConfig::for_width::<W>(&config)),
                now,
                held: Vec::new(),
                answer: Answer::None,
                transitions: Vec::new(),
                read_clock: false,
            })
            .boxed()
    }

    fn transitions(state: &RefState) -> BoxedStrategy<Op> {
        let l = W::LAYOUT;
        let max = l.max_duration();
        let period = 1u64 << l.time_bits;
        let deadline = state.to_deadline();
        let clock_jump = prop_oneof![
            Just(max),
            Just(max - 1),
            Just(period),
            Just(period - 1),
            Just(period + 1),
            Just(1u64 << 33),
            Just(1u64 << 34),
            Just(1u64 << 63),
        ];
        let to_deadline = match deadline {
            Some(d) => prop_oneof![Just(d), Just(d - 1), Just(d + 1)].boxed(),
            None => (0u64..=3).boxed(),
        };
        let base = prop_oneof![
            6 => Just(Op::Acquire),
            3 => proptest::option::of(outcome()).prop_map(Op::Permit),
            1 => outcome().prop_map(Op::ForeignRelease),
            3 => Just(Op::Status),
            1 => Just(Op::ForceOpen),
            1 => Just(Op::ForceClose),
            3 => (0u64..=20).prop_map(Op::Advance),
            4 => to_deadline.prop_map(Op::Advance),
            1 => clock_jump.prop_map(Op::Advance),
            1 => (1u64..=20).prop_map(|b| Op::Advance(b.wrapping_neg())),
            1 => Just(Op::Advance(max.wrapping_neg())),
            1 => (0u64..=40).prop_map(|d| Op::Set(u64::MAX - d)),
        ];
        if state.held.is_empty() {
            base.boxed()
        } else {
            prop_oneof![
                3 => base,
                2 => (any::<Index>(), outcome()).prop_map(|(i, o)| Op::Release(i, o)),
            ]
            .boxed()
        }
    }

    fn preconditions(state: &RefState, op: &Op) -> bool {
        !matches!(op, Op::Release(..)) || !state.held.is_empty()
    }

    fn apply(mut s: RefState, op: &Op) -> RefState {
        s.answer = Answer::None;
        s.transitions.clear();
        s.read_clock = false;
        s.model.clear_last();
        let now = s.now;
        match *op {
            Op::Acquire => {
                let t = s.model.acquire(now);
                s.absorb();
                if let Some(t) = t {
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
        }
        s
    }
}

/// Sequences and operations run, per width (W64, W32), for the CI summary.
static SEQUENCES: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static OPERATIONS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

fn width_index<W: Word>() -> usize {
    usize::from(W::LAYOUT.word_bits == 32)
}

/// Leaves the counts where the CI stage reads them.
fn record_counts<W: Word>() {
    let i = width_index::<W>();
    let n = SEQUENCES[i].fetch_add(1, Ordering::Relaxed) + 1;
    if n.is_multiple_of(250) || n >= u64::from(cases()) {
        let line = format!(
            "proptest W{}: {n} sequences, {} operations, each checked against the model",
            W::LAYOUT.word_bits,
            OPERATIONS[i].load(Ordering::Relaxed)
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

impl<W: Word> StateMachineTest for Sut<W> {
    type SystemUnderTest = Self;
    type Reference = Machine<W>;

    fn init_test(r: &RefState) -> Self {
        let clock = SharedClock(Arc::new(CountingClock::new(r.now)));
        let recorder = Arc::new(Recorder::default());
        Sut {
            breaker: Box::new(
                Breaker::try_from_parts(r.config, clock.clone(), SharedRecorder(recorder.clone()))
                    .expect("drawn configs are in range"),
            ),
            other: Box::new(
                Breaker::try_from_parts(r.config, clock.clone(), ()).expect("in range"),
            ),
            clock,
            recorder,
            held: Vec::new(),
            config: *r.model.config(),
        }
    }

    fn apply(mut sut: Self, r: &RefState, op: Op) -> Self {
        OPERATIONS[width_index::<W>()].fetch_add(1, Ordering::Relaxed);
        let reads = sut.clock.reads();
        let word_before = sut.breaker.load_word();
        let before = sut
            .breaker
            .snapshot()
            .expect("the word is never corrupt here");
        let cfg = sut.config;
        match op {
            Op::Acquire => {
                let got = sut.breaker.acquire();
                let Answer::Acquired(want) = &r.answer else {
                    unreachable!()
                };
                match (&got, want) {
                    (Ok(t), Some(m)) => {
                        assert!(ticket_matches(&cfg, t, m), "ticket {t:?} vs model {m:?}")
                    }
                    (Err(_), None) => {}
                    _ => panic!("acquire: core {got:?}, model {want:?}"),
                }
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
                        sut.breaker.load_word(),
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
                match (got, want) {
                    (Ok(p), Some((m, recorded))) => {
                        assert_eq!(p.is_probe(), m.probe, "permit probe flag");
                        match finish {
                            Some(o) => {
                                let rel = p.finish(o);
                                assert_eq!(rel == Release::Recorded, *recorded, "permit verdict");
                            }
                            None => drop(p),
                        }
                    }
                    (Err(_), None) => {}
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
                    sut.breaker.load_word(),
                    word_before,
                    "I2: foreign ticket changed the word"
                );
            }
            Op::Status => {
                let got = sut.breaker.status();
                assert_eq!(r.answer, Answer::Status(got), "status");
            }
            Op::ForceOpen => sut.breaker.force_open(),
            Op::ForceClose => sut.breaker.force_close(),
            Op::Advance(d) => sut.clock.advance(d),
            Op::Set(t) => sut.clock.set(t),
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

    fn teardown(_sut: Self, _r: RefState) {
        record_counts::<W>();
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
