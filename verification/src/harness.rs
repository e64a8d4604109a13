//! Test plumbing shared by the techniques: a clock
//! that counts its reads, an observer that records every report, and the
//! comparisons between the core's answers and the [model](crate::model)'s.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tripword::clock::ManualClock;
use tripword::word::{Snapshot, State};
use tripword::{Clock, Observer, Transition};

use crate::model::{Model, ModelConfig, ModelState, ModelTransition};

/// A [`ManualClock`] that counts how often it is read (SPEC I9: admission in
/// `Closed` never reads the clock).
#[derive(Debug)]
pub struct CountingClock {
    clock: ManualClock,
    reads: AtomicU64,
}

impl Default for CountingClock {
    fn default() -> Self {
        Self::new(0)
    }
}

impl CountingClock {
    /// A clock reading `ticks`.
    pub fn new(ticks: u64) -> Self {
        CountingClock {
            clock: ManualClock::new(ticks),
            reads: AtomicU64::new(0),
        }
    }
    /// Sets the time (forwards, backwards, anywhere).
    pub fn set(&self, ticks: u64) {
        self.clock.set(ticks);
    }
    /// Moves the time forward by `ticks`, wrapping at `u64::MAX`.
    pub fn advance(&self, ticks: u64) {
        self.clock.advance(ticks);
    }
    /// The time, without counting a read.
    pub fn peek(&self) -> u64 {
        self.clock.now()
    }
    /// How many times the breaker read the clock so far.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::SeqCst)
    }
}

impl Clock for CountingClock {
    fn now(&self) -> u64 {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.clock.now()
    }
}

/// A shared handle on a [`CountingClock`], so a breaker can own its clock
/// while the test moves it.
#[derive(Clone, Debug)]
pub struct SharedClock(pub Arc<CountingClock>);

impl Clock for SharedClock {
    fn now(&self) -> u64 {
        self.0.now()
    }
}

impl std::ops::Deref for SharedClock {
    type Target = CountingClock;
    fn deref(&self) -> &CountingClock {
        &self.0
    }
}

/// An observer that records every transition and corrupt-word report.
#[derive(Debug, Default)]
pub struct Recorder {
    transitions: Mutex<Vec<Transition>>,
    corrupt: Mutex<Vec<(u64, u32)>>,
}

impl Recorder {
    /// Takes the transitions reported so far.
    pub fn take(&self) -> Vec<Transition> {
        std::mem::take(
            &mut *self
                .transitions
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
    /// Takes the corrupt-word reports so far (raw word, counter of the repair).
    pub fn take_corrupt(&self) -> Vec<(u64, u32)> {
        std::mem::take(&mut *self.corrupt.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Observer for Recorder {
    fn on_transition(&self, transition: Transition) {
        self.transitions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(transition);
    }
    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        self.corrupt
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((raw, counter));
    }
}

/// An `Arc`'d [`Recorder`], so a breaker can own its observer while the test
/// reads it.
#[derive(Clone, Debug, Default)]
pub struct SharedRecorder(pub Arc<Recorder>);

impl Observer for SharedRecorder {
    fn on_transition(&self, transition: Transition) {
        self.0.on_transition(transition)
    }
    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        self.0.on_corrupt_word(raw, counter)
    }
}

/// Whether the model's (unbounded) counter and the core's agree modulo the
/// counter period.
pub fn counter_matches(config: &ModelConfig, model: u64, core: u32) -> bool {
    model % config.counter_period() == u64::from(core)
}

/// Whether the core's transitions are the model's, in order (counters modulo
/// the period).
pub fn transitions_match(
    config: &ModelConfig,
    core: impl IntoIterator<Item = Transition>,
    model: &[ModelTransition],
) -> bool {
    let core: Vec<Transition> = core.into_iter().collect();
    core.len() == model.len()
        && core.iter().zip(model).all(|(c, m)| {
            c.from == m.from && c.to == m.to && counter_matches(config, m.counter, c.counter)
        })
}

/// Whether a decoded word holds the model's state: the same state, failure
/// count and trips, timestamps equal modulo the time field, the counter equal
/// modulo its period. `None` when they agree, else a description of the
/// difference.
pub fn state_mismatch(snapshot: &Snapshot, model: &Model) -> Option<String> {
    let cfg = model.config();
    let time = |t: u64| t & ((1u64 << cfg.time_bits) - 1);
    let same = match (snapshot.state, model.state()) {
        (State::Closed { failures }, ModelState::Closed { failures: f }) => failures == f,
        (State::Open { since, trips }, ModelState::Open { since: s, trips: k })
        | (State::Probing { since, trips }, ModelState::Probing { since: s, trips: k }) => {
            since == time(s) && u64::from(trips) == k
        }
        (State::HalfOpen { trips }, ModelState::HalfOpen { trips: k }) => u64::from(trips) == k,
        (State::ForcedOpen, ModelState::ForcedOpen) => true,
        _ => false,
    };
    if same && counter_matches(cfg, model.counter(), snapshot.counter) {
        None
    } else {
        Some(format!(
            "core word {:?} but model {:?} counter {}",
            snapshot,
            model.state(),
            model.counter()
        ))
    }
}

/// A small deterministic pseudo-random generator (xorshift64*), for tests
/// that must not depend on a crate.
#[derive(Clone, Debug)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator from `seed` (0 is replaced by a fixed odd constant).
    pub fn new(seed: u64) -> Self {
        XorShift(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}
